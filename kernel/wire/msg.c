// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs on the wire: what the UC and RC transports share about a
 * message's packets. Its opcodes in order (FIRST, MIDDLE... LAST, or
 * ONLY; with immediate data or an IETH on the last), their RETH,
 * immediate data and IETH, and a SEND packet's payload placed in the
 * receive WQE the message took.
 */
#include "../compat.h"
#include "wire.h"

/* An RDMA WRITE: a RETH on the first packet */
static bool sv_wire_wr_write(u32 wr_op)
{
	return wr_op == SV_WR_RDMA_WRITE || wr_op == SV_WR_RDMA_WRITE_WITH_IMM;
}

/* Immediate data (ImmDt) on the last packet */
static bool sv_wire_wr_imm(u32 wr_op)
{
	return wr_op == SV_WR_SEND_WITH_IMM ||
	       wr_op == SV_WR_RDMA_WRITE_WITH_IMM;
}

/* Immediate data or an invalidated rkey (IETH): 4 bytes on the last */
static bool sv_wire_wr_last4(u32 wr_op)
{
	return sv_wire_wr_imm(wr_op) || wr_op == SV_WR_SEND_WITH_INV;
}

/*
 * The operation (no transport bits) of packet i of n of a message of
 * SEND, SEND_WITH_IMM, SEND_WITH_INV (RC only), RDMA_WRITE or
 * RDMA_WRITE_WITH_IMM wr_op.
 */
u8 sv_wire_msg_op(u32 wr_op, u32 i, u32 n)
{
	bool write = sv_wire_wr_write(wr_op), imm = sv_wire_wr_imm(wr_op);

	if (wr_op == SV_WR_SEND_WITH_INV && i == n - 1)
		return n == 1 ? SV_OP_SEND_ONLY_INV : SV_OP_SEND_LAST_INV;
	if (n == 1)
		return write ? (imm ? SV_OP_WRITE_ONLY_IMM : SV_OP_WRITE_ONLY) :
			       (imm ? SV_OP_SEND_ONLY_IMM : SV_OP_SEND_ONLY);
	if (!i)
		return write ? SV_OP_WRITE_FIRST : SV_OP_SEND_FIRST;
	if (i < n - 1)
		return write ? SV_OP_WRITE_MIDDLE : SV_OP_SEND_MIDDLE;
	return write ? (imm ? SV_OP_WRITE_LAST_IMM : SV_OP_WRITE_LAST) :
		       (imm ? SV_OP_SEND_LAST_IMM : SV_OP_SEND_LAST);
}

/* The bytes of packet i's extension headers (sv_wire_msg_ext()) */
u32 sv_wire_msg_hdrs(u32 wr_op, u32 i, u32 n)
{
	return (sv_wire_wr_write(wr_op) && !i ? sizeof(struct sv_reth) : 0) +
	       (sv_wire_wr_last4(wr_op) && i == n - 1 ? 4 : 0);
}

/*
 * After packet i's BTH at p (of n of a message of len bytes from w): the
 * first packet's RETH for a WRITE, the last one's immediate data (as the
 * WQE holds it: big endian) or IETH (the rkey to invalidate).
 */
void sv_wire_msg_ext(u8 *p, const struct sv_send_wqe *w, u64 len, u32 i,
		     u32 n)
{
	if (sv_wire_wr_write(w->opcode) && !i) {
		struct sv_reth *reth = (struct sv_reth *)p;

		reth->va = cpu_to_be64(w->remote_addr);
		reth->rkey = htonl(w->rkey);
		reth->len = htonl(len);
		p += sizeof(*reth);
	}
	if (i != n - 1)
		return;
	if (w->opcode == SV_WR_SEND_WITH_INV)
		put_unaligned_be32(w->imm_data, p);
	else if (sv_wire_wr_imm(w->opcode))
		memcpy(p, &w->imm_data, 4);
}

/*
 * A receive WQE for a message: the one a dropped message left, or the
 * next of the QP's (sv_rq_take(): 1, 0 for none, -EINVAL if bogus).
 */
int sv_wire_take(struct sv_qp *qp)
{
	struct sv_wire_qp *wq = qp->wire;

	if (wq->have_wqe) {
		wq->have_wqe = false;
		return 1;
	}
	return sv_rq_take(qp, &wq->rw);
}

/*
 * Place a SEND packet's payload at the message's offset in the taken
 * WQE's buffers (resolved with the QP's PD each time): a WC status.
 */
u32 sv_wire_place(struct sv_qp *qp, const struct sv_wire_pkt *p, void *buf)
{
	struct sv_wire_qp *wq = qp->wire;
	struct sv_sg *sg = buf;	/* sv_exec_buf_size() starts with sg[3] */
	int ret;

	if (!p->paylen)
		return SV_WC_SUCCESS;
	ret = sv_sg_resolve(sg, qp->sdev, sv_qp_pd(qp), SV_ACCESS_LOCAL_WRITE,
			    wq->rw.sge, wq->rw.hdr.num_sge);
	if (ret)
		return SV_WC_LOC_PROT_ERR;
	if (wq->off + p->paylen > sg->len)
		ret = -ERANGE;
	else
		ret = sv_sg_write(sg, wq->off, p->payload, p->paylen);
	sv_sg_release(sg);
	if (ret)
		return ret == -EFAULT ? SV_WC_LOC_PROT_ERR : SV_WC_LOC_LEN_ERR;
	wq->off += p->paylen;
	return SV_WC_SUCCESS;
}
