// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs on the wire: what the UC and RC transports share about a
 * message's packets. Its opcodes in order (FIRST, MIDDLE... LAST, or
 * ONLY; with immediate data on the last), their RETH and immediate data,
 * and a SEND packet's payload placed in the receive WQE the message took.
 */
#include "wire.h"

/* The operation (no transport bits) of packet i of n of a message. */
u8 sv_wire_msg_op(bool write, bool imm, u32 i, u32 n)
{
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

/*
 * After packet i's BTH at p (of n of a message of len bytes from w): the
 * first packet's RETH for a WRITE, the last one's immediate data.
 */
void sv_wire_msg_ext(u8 *p, const struct sv_send_wqe *w, u64 len, bool write,
		     bool imm, u32 i, u32 n)
{
	if (write && !i) {
		struct sv_reth *reth = (struct sv_reth *)p;

		reth->va = cpu_to_be64(w->remote_addr);
		reth->rkey = htonl(w->rkey);
		reth->len = htonl(len);
		p += sizeof(*reth);
	}
	if (imm && i == n - 1)
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
