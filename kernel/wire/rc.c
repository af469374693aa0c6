// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs on the wire: the RC transport, its responder (the requester
 * is rc_req.c).
 *
 * Responder. Packets from the peer (qp.c) are taken in PSN order. One
 * ahead of the expected PSN is answered by a single PSN sequence NAK
 * until the expected one comes; one behind it is a duplicate: a SEND or
 * WRITE is acknowledged again, a READ is carried out again from its
 * own RETH (rights checked again), an atomic's response is sent again
 * from the last max_dest_rd_atomic results kept, never carried out
 * twice. SENDs go into receive WQEs as on UC; no WQE is an RNR NAK with
 * the QP's min_rnr_timer (the PSN not taken). A SEND with invalidate
 * frees its IETH's rkey (a memory window of the QP's PD, mr/mw.c) once
 * placed, before its completion; one it cannot is an invalid request
 * (NAK, IBV_WC_REM_INV_REQ_ERR for the receive, the QP in ERR), as on
 * the direct path. ATOMIC WRITE and FLUSH (IBA 1.5's memory placement
 * extensions) are each answered by a READ response without data, as rxe
 * answers them, a duplicate by that again, never carried out twice. An
 * RDMA WRITE, READ, atomic, ATOMIC WRITE or FLUSH is checked against the
 * QP's access flags and its rkey's MR (the QP's PD, the rights, the
 * range); a failure is a remote access NAK and the QP goes to ERR, as
 * does a SEND that does not fit, a misaligned atomic or ATOMIC WRITE, or
 * a bad FETH (invalid request NAK), as on the direct path. ACKs
 * go out for the packets that ask (the last of a message), coalesced: an
 * ACK is held until the end of the receive batch (one ACK answers every
 * packet up to its PSN), and goes before any other frame of the
 * responder and before a completion.
 */
#include "../compat.h"
#include "wire.h"

/* An RC packet's BTH */
void sv_wire_rc_bth(struct sv_bth *bth, u8 op, u32 dqpn, u32 psn,
		    u32 paylen, bool se, bool ackreq)
{
	bth->opcode = SV_OP_RC | op;
	bth->flags = ((-paylen & 3) << SV_BTH_PAD_SHIFT) | (se ? SV_BTH_SE : 0);
	bth->pkey = htons(SV_DEFAULT_PKEY);
	bth->qpn = htonl(dqpn & SV_QPN_MASK);
	bth->apsn = htonl((ackreq ? SV_BTH_ACKREQ : 0) | psn);
}

/* qp's route to its peer; false (counted) if there is none now. */
bool sv_wire_rc_route(struct sv_qp *qp, struct sv_wire_tx *t)
{
	u32 sgid_index;

	sv_wire_tx_av(qp, t, &sgid_index);
	if (!sv_wire_route(qp->sdev, t, sgid_index))
		return true;
	sv_wire_tx_release(t);
	sv_stat_add(qp->sdev, SV_STAT_WIRE_TX_DROPS, 1);
	return false;
}

/* ---- responder ---- */

/* An ACK, RNR NAK or NAK (syndrome) for psn, now. */
static void sv_rc_aeth(struct sv_qp *qp, u32 psn, u8 syndrome)
{
	struct sv_wire_tx t = {};
	u8 *p;

	if (!sv_wire_rc_route(qp, &t))
		return;
	p = sv_wire_frame(&t, sizeof(struct sv_bth) + 4, 0);
	if (p) {
		sv_wire_rc_bth((struct sv_bth *)p, SV_OP_ACK, qp->dest_qpn, psn,
			       0, false, false);
		put_unaligned_be32((u32)syndrome << 24 | qp->wire->msn,
				   p + sizeof(struct sv_bth));
		sv_wire_xmit(qp->sdev, &t);
		if (syndrome & SV_AETH_TYPE_MASK)
			sv_stat_add(qp->sdev, SV_STAT_WIRE_NAKS_SENT, 1);
	}
	sv_wire_tx_release(&t);
}

/**
 * sv_wire_rc_ack_flush - the ACK held back goes now
 * @qp: a UC or RC QP on the wire, its engine holding qp->sq.lock
 *
 * The ACK a request asked for is held until the end of the receive
 * batch, or until the responder sends anything else (its frames keep
 * their order), or a completion shows: ACKs coalesce, one for a batch.
 */
void sv_wire_rc_ack_flush(struct sv_qp *qp)
{
	struct sv_wire_qp *wq = qp->wire;

	if (!wq || !wq->ack_pending)
		return;
	wq->ack_pending = false;
	sv_rc_aeth(qp, wq->ack_psn, SV_AETH_NO_CREDITS);
}

/* An ACK, RNR NAK or NAK for psn, after the ACK held back. */
static void sv_rc_ack(struct sv_qp *qp, u32 psn, u8 syndrome)
{
	sv_wire_rc_ack_flush(qp);
	sv_rc_aeth(qp, psn, syndrome);
}

static void sv_rc_nak(struct sv_qp *qp, u32 psn, u8 code)
{
	sv_rc_ack(qp, psn, SV_AETH_NAK | code);
}

/* A fatal responder error: NAK it, and the QP goes to ERR. */
static void sv_rc_fatal(struct sv_qp *qp, u32 psn, u8 code)
{
	sv_rc_nak(qp, psn, code);
	sv_responder_err(qp, code == SV_NAK_REM_ACCESS);
}

/*
 * The READ responses for [va, va + len) of rkey, PSNs from psn; false
 * if the rights or range fail (nothing sent).
 */
static bool sv_rc_read_resp(struct sv_qp *qp, u32 psn, u64 va, u32 rkey,
			    u32 len, void *buf)
{
	struct sv_sg *sg = buf;
	struct sv_wire_tx t = {};
	u32 mtu, n, i, seg, hdrs;
	u64 off = 0;
	u8 *p;

	sv_wire_rc_ack_flush(qp);

	if (!(READ_ONCE(qp->attr.qp_access_flags) & SV_ACCESS_REMOTE_READ))
		return false;
	if (len && sv_sg_remote(sg, qp, sv_qp_pd(qp), SV_ACCESS_REMOTE_READ,
				rkey, va, len))
		return false;
	if (!sv_wire_rc_route(qp, &t))
		goto out;
	mtu = min(t.mtu, sv_mtu_bytes(READ_ONCE(qp->attr.path_mtu)) ?: t.mtu);
	n = max_t(u32, 1, DIV_ROUND_UP(len, mtu));
	for (i = 0; i < n; i++, off += seg) {
		u8 op = n == 1 ? SV_OP_READ_ONLY : !i ? SV_OP_READ_FIRST :
			i == n - 1 ? SV_OP_READ_LAST : SV_OP_READ_MIDDLE;

		seg = min_t(u64, mtu, len - off);
		hdrs = sizeof(struct sv_bth) + (op == SV_OP_READ_MIDDLE ? 0 : 4);
		p = sv_wire_frame(&t, hdrs, seg);
		if (!p)
			break;
		/* A page gone meanwhile (ODP): the requester times out. */
		if (seg && sv_mr_span_read(&sg->ent[0], off, p + hdrs, seg))
			break;
		sv_wire_rc_bth((struct sv_bth *)p, op, qp->dest_qpn,
			       sv_psn_add(psn, i), seg, false, false);
		if (hdrs > sizeof(struct sv_bth))
			put_unaligned_be32((u32)SV_AETH_NO_CREDITS << 24 |
					   qp->wire->msn,
					   p + sizeof(struct sv_bth));
		sv_wire_xmit(qp->sdev, &t);
	}
	sv_wire_tx_release(&t);
out:
	if (len)
		sv_sg_release(sg);
	return true;
}

/*
 * The answer to the request at psn: an atomic's ACK (op SV_OP_ATOMIC_ACK,
 * with the original value), or an ATOMIC WRITE's or FLUSH's, a READ
 * response without data (SV_OP_READ_ONLY, as rxe answers them).
 */
static void sv_rc_resp(struct sv_qp *qp, u32 psn, u8 op, u64 orig)
{
	bool atomic = op == SV_OP_ATOMIC_ACK;
	struct sv_wire_tx t = {};
	u8 *p;

	sv_wire_rc_ack_flush(qp);
	if (!sv_wire_rc_route(qp, &t))
		return;
	p = sv_wire_frame(&t, sizeof(struct sv_bth) + 4 + (atomic ? 8 : 0),
			  0);
	if (p) {
		sv_wire_rc_bth((struct sv_bth *)p, op, qp->dest_qpn, psn, 0,
			       false, false);
		put_unaligned_be32((u32)SV_AETH_NO_CREDITS << 24 |
				   qp->wire->msn, p + sizeof(struct sv_bth));
		if (atomic)
			put_unaligned_be64(orig, p + sizeof(struct sv_bth) + 4);
		sv_wire_xmit(qp->sdev, &t);
	}
	sv_wire_tx_release(&t);
}

/* An atomic at psn: carried out once, its result kept for duplicates. */
static void sv_rc_atomic(struct sv_qp *qp, const struct sv_wire_pkt *p,
			 u32 psn, void *buf)
{
	const struct sv_atomic_eth *a = (const struct sv_atomic_eth *)p->ext;
	struct sv_wire_qp *wq = qp->wire;
	u64 va = be64_to_cpu(a->va);
	struct sv_sg *sg = buf;
	struct sv_wire_res *res;
	u64 orig;
	int ret;

	/* Misaligned: an invalid request (IBA, rxe, the direct path). */
	if (va & 7) {
		sv_rc_fatal(qp, psn, SV_NAK_INV_REQ);
		return;
	}
	if (!(READ_ONCE(qp->attr.qp_access_flags) & SV_ACCESS_REMOTE_ATOMIC) ||
	    sv_sg_remote(sg, qp, sv_qp_pd(qp), SV_ACCESS_REMOTE_ATOMIC,
			 ntohl(a->rkey), va, 8)) {
		sv_rc_fatal(qp, psn, SV_NAK_REM_ACCESS);
		return;
	}
	/* The add operand travels in swap_add; compare is CMP_SWAP's. */
	if ((p->opcode & 0x1f) == SV_OP_CMP_SWAP)
		ret = sv_atomic_word(sg, SV_WR_ATOMIC_CMP_AND_SWP,
				     be64_to_cpu(a->compare),
				     be64_to_cpu(a->swap_add), &orig);
	else
		ret = sv_atomic_word(sg, SV_WR_ATOMIC_FETCH_AND_ADD,
				     be64_to_cpu(a->swap_add), 0, &orig);
	sv_sg_release(sg);
	if (ret) {
		sv_rc_fatal(qp, psn, SV_NAK_REM_ACCESS);
		return;
	}
	res = &wq->res[wq->res_next];
	wq->res_next = (wq->res_next + 1) % wq->nres;
	res->psn = psn;
	res->orig = orig;
	res->valid = true;
	wq->epsn = sv_psn_add(psn, 1);
	wq->msn = (wq->msn + 1) & SV_BTH_PSN_MASK;
	sv_rc_resp(qp, psn, SV_OP_ATOMIC_ACK, orig);
}

/*
 * An ATOMIC WRITE at psn: its 8 bytes stored at an aligned va in one
 * access, as the direct path does (the QP's and the key's remote write
 * right, as rxe). False if it failed: NAKed, the QP in ERR.
 */
static bool sv_rc_atomic_write(struct sv_qp *qp, const struct sv_wire_pkt *p,
			       u32 psn, void *buf)
{
	const struct sv_reth *reth = (const struct sv_reth *)p->ext;
	u64 va = be64_to_cpu(reth->va), val, old;
	struct sv_sg *sg = buf;
	int ret;

	if (p->paylen != 8 || ntohl(reth->len) != 8 || (va & 7)) {
		sv_rc_fatal(qp, psn, SV_NAK_INV_REQ);
		return false;
	}
	if (!(READ_ONCE(qp->attr.qp_access_flags) & SV_ACCESS_REMOTE_WRITE) ||
	    sv_sg_remote(sg, qp, sv_qp_pd(qp), SV_ACCESS_REMOTE_WRITE,
			 ntohl(reth->rkey), va, 8)) {
		sv_rc_fatal(qp, psn, SV_NAK_REM_ACCESS);
		return false;
	}
	/* The bytes as they came: the requester's memory order. */
	memcpy(&val, p->payload, 8);
	ret = sv_atomic_word(sg, SV_WR_ATOMIC_WRITE, val, 0, &old);
	sv_sg_release(sg);
	if (ret) {
		sv_rc_fatal(qp, psn, SV_NAK_REM_ACCESS);
		return false;
	}
	return true;
}

/*
 * A FLUSH at psn: its FETH's placement types over its RETH's range, or
 * the whole MR, with the rights of those types on the QP and the MR
 * (sv_mr_flush(), as the direct path). False if it failed: a bad FETH
 * is an invalid request, the rights a remote access error.
 */
static bool sv_rc_flush(struct sv_qp *qp, const struct sv_wire_pkt *p,
			u32 psn)
{
	const struct sv_reth *reth =
		(const struct sv_reth *)(p->ext + SV_FETH_LEN);
	u32 feth = get_unaligned_be32(p->ext);
	u32 type = feth & SV_FETH_PLT_MASK;
	u32 level = (feth & SV_FETH_SEL_MASK) >> SV_FETH_SEL_SHIFT;
	u32 need = sv_flush_access(type);

	if (p->paylen || !sv_flush_kind_ok(type, level)) {
		sv_rc_fatal(qp, psn, SV_NAK_INV_REQ);
		return false;
	}
	if ((READ_ONCE(qp->attr.qp_access_flags) & need) != need ||
	    sv_mr_flush(qp, sv_qp_pd(qp), ntohl(reth->rkey), need,
			be64_to_cpu(reth->va), ntohl(reth->len),
			level == SV_FLUSH_MR)) {
		sv_rc_fatal(qp, psn, SV_NAK_REM_ACCESS);
		return false;
	}
	return true;
}

/* A duplicate request: answered again, never carried out twice. */
static void sv_rc_duplicate(struct sv_qp *qp, const struct sv_wire_pkt *p,
			    u32 psn, void *buf)
{
	struct sv_wire_qp *wq = qp->wire;
	u8 op = p->opcode & 0x1f;
	u32 i;

	sv_stat_add(qp->sdev, SV_STAT_WIRE_RX_DUPLICATES, 1);
	if (op == SV_OP_READ_REQ) {
		const struct sv_reth *reth = (const struct sv_reth *)p->ext;

		sv_rc_read_resp(qp, psn, be64_to_cpu(reth->va),
				ntohl(reth->rkey), ntohl(reth->len), buf);
		return;
	}
	if (op == SV_OP_CMP_SWAP || op == SV_OP_FETCH_ADD) {
		for (i = 0; i < wq->nres; i++)
			if (wq->res[i].valid && wq->res[i].psn == psn)
				sv_rc_resp(qp, psn, SV_OP_ATOMIC_ACK,
					   wq->res[i].orig);
		return;
	}
	if (op == SV_OP_ATOMIC_WRITE || op == SV_OP_FLUSH) {
		sv_rc_resp(qp, psn, SV_OP_READ_ONLY, 0);
		return;
	}
	sv_rc_ack(qp, sv_psn_add(wq->epsn, SV_BTH_PSN_MASK),
		  SV_AETH_NO_CREDITS);
}

/* Take the message's receive WQE (sv_wire_take()); none: RNR NAKed. */
static int sv_rc_take(struct sv_qp *qp, u32 psn)
{
	int ret = sv_wire_take(qp);
	u8 t;

	if (ret)
		return ret;
	spin_lock_bh(&qp->lock);
	t = qp->attr.min_rnr_timer & 31;
	spin_unlock_bh(&qp->lock);
	sv_rc_ack(qp, psn, SV_AETH_RNR | t);
	sv_stat_add(qp->sdev, SV_STAT_RNR_NAKS, 1);
	return 0;
}

/* Complete the taken WQE (status 0) or fail it, NAK and ERR. */
static void sv_rc_complete(struct sv_qp *qp, struct sv_cqe *cqe,
			   const struct sv_wire_pkt *p, u32 psn, bool solicited,
			   const struct sv_rx_meta *m)
{
	u32 rstatus;

	/*
	 * The ACKs first: once the completion is seen its QP may be gone,
	 * and a requester whose last ACK never came retries for ever
	 * (rxe with retry_cnt 7).
	 */
	if (!cqe->status && (ntohl(p->bth->apsn) & SV_BTH_ACKREQ)) {
		sv_rc_ack(qp, psn, SV_AETH_NO_CREDITS);
		qp->wire->acked = true;
	} else {
		sv_wire_rc_ack_flush(qp);
	}
	cqe->wr_id = qp->wire->rw.hdr.wr_id;
	cqe->qp_num = qp->qpn;
	cqe->src_qp = qp->dest_qpn;
	qp->wire->resp = SV_RESP_IDLE;
	if (cqe->status) {
		cqe->byte_len = 0;
		cqe->wc_flags = 0;
		rstatus = sv_recv_fail_status(cqe->status);
		sv_rc_fatal(qp, psn, rstatus == SV_WC_REM_INV_REQ_ERR ?
			    SV_NAK_INV_REQ : SV_NAK_REM_OP);
		solicited = true;
	}
	sv_cq_push_stamped(container_of(qp->recv_cq, struct sv_cq, uobj), cqe,
			   solicited, &m->ts);
}

/* A SEND packet in sequence; false if not taken (PSN stays). */
static bool sv_rc_send_pkt(struct sv_qp *qp, const struct sv_wire_pkt *p,
			   u32 psn, const struct sv_rx_meta *m, void *buf)
{
	struct sv_wire_qp *wq = qp->wire;
	struct sv_cqe cqe = { .opcode = SV_WC_RECV };
	u8 op = p->opcode & 0x1f;
	int ret;

	if (sv_wire_op_first(op)) {
		if (wq->resp != SV_RESP_IDLE) {
			sv_rc_fatal(qp, psn, SV_NAK_INV_REQ);
			return true;
		}
		ret = sv_rc_take(qp, psn);
		if (!ret)
			return false;
		wq->resp = SV_RESP_SEND;
		wq->off = 0;
		if (ret < 0) {
			cqe.status = SV_WC_LOC_QP_OP_ERR;
			sv_rc_complete(qp, &cqe, p, psn, false, m);
			return true;
		}
	} else if (wq->resp != SV_RESP_SEND) {
		sv_rc_fatal(qp, psn, SV_NAK_INV_REQ);	/* out of order op */
		return true;
	}
	cqe.status = sv_wire_place(qp, p, buf);
	if (!cqe.status && !sv_wire_op_last(op))
		return true;
	cqe.byte_len = wq->off;
	if (sv_wire_op_imm(op)) {
		cqe.wc_flags |= SV_WC_F_WITH_IMM;
		memcpy(&cqe.imm_data, p->payload - 4, 4);
	} else if (sv_wire_op_inv(op) && !cqe.status) {
		/* Placed: the IETH's rkey is freed before the completion. */
		cqe.wc_flags |= SV_WC_F_WITH_INV;
		cqe.imm_data = get_unaligned_be32(p->payload - 4);
		if (sv_mw_remote_inv(qp->sdev, sv_qp_pd(qp), cqe.imm_data))
			cqe.status = SV_WC_REM_INV_REQ_ERR;
	}
	if (!cqe.status)
		wq->msn = (wq->msn + 1) & SV_BTH_PSN_MASK;
	sv_rc_complete(qp, &cqe, p, psn, p->bth->flags & SV_BTH_SE, m);
	return true;
}

/* An RDMA WRITE packet in sequence; false if not taken (PSN stays). */
static bool sv_rc_write_pkt(struct sv_qp *qp, const struct sv_wire_pkt *p,
			    u32 psn, const struct sv_rx_meta *m, void *buf)
{
	struct sv_wire_qp *wq = qp->wire;
	struct sv_cqe cqe = { .opcode = SV_WC_RECV_RDMA_WITH_IMM };
	u8 op = p->opcode & 0x1f;
	struct sv_sg *sg = buf;
	int ret;

	if (sv_wire_op_first(op)) {
		const struct sv_reth *reth = (const struct sv_reth *)p->ext;

		if (wq->resp != SV_RESP_IDLE) {
			sv_rc_fatal(qp, psn, SV_NAK_INV_REQ);
			return true;
		}
		wq->va = be64_to_cpu(reth->va);
		wq->rkey = ntohl(reth->rkey);
		wq->dmalen = ntohl(reth->len);
		wq->off = 0;
		wq->resp = SV_RESP_WRITE;
	} else if (wq->resp != SV_RESP_WRITE) {
		sv_rc_fatal(qp, psn, SV_NAK_INV_REQ);
		return true;
	}
	if (wq->off + p->paylen > wq->dmalen ||
	    (sv_wire_op_last(op) && wq->off + p->paylen != wq->dmalen)) {
		wq->resp = SV_RESP_IDLE;
		sv_rc_fatal(qp, psn, SV_NAK_INV_REQ);
		return true;
	}
	if (p->paylen) {
		if (!(READ_ONCE(qp->attr.qp_access_flags) &
		      SV_ACCESS_REMOTE_WRITE) ||
		    sv_sg_remote(sg, qp, sv_qp_pd(qp), SV_ACCESS_REMOTE_WRITE,
				 wq->rkey, wq->va + wq->off, p->paylen)) {
			wq->resp = SV_RESP_IDLE;
			sv_rc_fatal(qp, psn, SV_NAK_REM_ACCESS);
			return true;
		}
		ret = sv_sg_write(sg, 0, p->payload, p->paylen);
		sv_sg_release(sg);
		if (ret) {
			wq->resp = SV_RESP_IDLE;
			sv_rc_fatal(qp, psn, SV_NAK_REM_ACCESS);
			return true;
		}
	}
	if (!sv_wire_op_last(op)) {
		wq->off += p->paylen;
		return true;
	}
	if (sv_wire_op_imm(op)) {
		/* No WQE: the last packet is NAKed and comes again. */
		ret = sv_rc_take(qp, psn);
		if (!ret)
			return false;
		if (ret < 0)
			cqe.status = SV_WC_LOC_QP_OP_ERR;
		cqe.byte_len = wq->dmalen;
		cqe.wc_flags = SV_WC_F_WITH_IMM;
		memcpy(&cqe.imm_data, p->payload - 4, 4);
		if (!cqe.status)
			wq->msn = (wq->msn + 1) & SV_BTH_PSN_MASK;
		sv_rc_complete(qp, &cqe, p, psn, p->bth->flags & SV_BTH_SE,
			       m);
		return true;
	}
	wq->msn = (wq->msn + 1) & SV_BTH_PSN_MASK;
	wq->resp = SV_RESP_IDLE;
	return true;
}

/* A request in sequence (the expected PSN). */
static void sv_rc_request(struct sv_qp *qp, const struct sv_wire_pkt *p,
			  u32 psn, const struct sv_rx_meta *m, void *buf)
{
	struct sv_wire_qp *wq = qp->wire;
	u8 op = p->opcode & 0x1f;
	bool taken;

	wq->nak_sent = false;
	if (op == SV_OP_READ_REQ) {
		const struct sv_reth *reth = (const struct sv_reth *)p->ext;
		u32 len = ntohl(reth->len), mtu;

		mtu = min(sv_mtu_bytes(READ_ONCE(qp->sdev->active_mtu)),
			  sv_mtu_bytes(READ_ONCE(qp->attr.path_mtu)) ?: 4096);
		if (len > SV_MAX_MSG_SZ ||
		    !sv_rc_read_resp(qp, psn, be64_to_cpu(reth->va),
				     ntohl(reth->rkey), len, buf)) {
			sv_rc_fatal(qp, psn, SV_NAK_REM_ACCESS);
			return;
		}
		wq->epsn = sv_psn_add(psn, max_t(u32, 1,
						 DIV_ROUND_UP(len, mtu)));
		wq->msn = (wq->msn + 1) & SV_BTH_PSN_MASK;
		return;
	}
	if (op == SV_OP_CMP_SWAP || op == SV_OP_FETCH_ADD) {
		sv_rc_atomic(qp, p, psn, buf);
		return;
	}
	if (op == SV_OP_ATOMIC_WRITE || op == SV_OP_FLUSH) {
		if (op == SV_OP_FLUSH ? !sv_rc_flush(qp, p, psn) :
		    !sv_rc_atomic_write(qp, p, psn, buf))
			return;
		wq->epsn = sv_psn_add(psn, 1);
		wq->msn = (wq->msn + 1) & SV_BTH_PSN_MASK;
		sv_rc_resp(qp, psn, SV_OP_READ_ONLY, 0);
		return;
	}
	if (op <= SV_OP_SEND_ONLY_IMM || sv_wire_op_inv(op))
		taken = sv_rc_send_pkt(qp, p, psn, m, buf);
	else if (op <= SV_OP_WRITE_ONLY_IMM)
		taken = sv_rc_write_pkt(qp, p, psn, m, buf);
	else
		taken = false;		/* a response: not a request */
	if (!taken)
		return;
	wq->epsn = sv_psn_add(psn, 1);
	if ((ntohl(p->bth->apsn) & SV_BTH_ACKREQ) && !wq->acked) {
		/* Held back: the batch's last one goes (coalesced). */
		wq->ack_pending = true;
		wq->ack_psn = psn;
	}
	wq->acked = false;
}

static bool sv_rc_is_response(u8 op)
{
	return op >= SV_OP_READ_FIRST && op <= SV_OP_ATOMIC_ACK;
}

/**
 * sv_wire_rc_recv - one queued RC packet into qp
 * @qp: the RC QP on the wire, its engine holding qp->sq.lock, the
 *	packet from its peer (sv_wire_recv())
 * @skb: the packet (the caller's to free)
 * @m: its arrival
 * @buf: sv_exec_buf_size() bytes of scratch memory
 *
 * Always true: what finds no receive WQE is RNR NAKed here.
 */
bool sv_wire_rc_recv(struct sv_qp *qp, struct sk_buff *skb,
		     const struct sv_rx_meta *m, void *buf)
{
	struct sv_wire_qp *wq = qp->wire;
	struct sv_wire_pkt p;
	u32 psn;
	s32 d;

	sv_wire_parse(skb, &p);
	if (sv_rc_is_response(p.opcode & 0x1f)) {
		/*
		 * The requester's (rc_req.c), for when the engine is back.
		 * Only while WQEs are in flight, and at most one for each
		 * packet that can be (and some): a flood is dropped.
		 */
		if (!wq->nfl ||
		    skb_queue_len(&wq->resps) > 2 * SV_RC_WINDOW + 16) {
			sv_stat_add(qp->sdev, SV_STAT_WIRE_RX_DROPS, 1);
			return true;
		}
		__skb_queue_tail(&wq->resps, skb_get(skb));
		qp->waiting = false;
		return true;
	}
	psn = ntohl(p.bth->apsn) & SV_BTH_PSN_MASK;
	d = sv_psn_diff(psn, wq->epsn);
	if (d < 0) {
		sv_rc_duplicate(qp, &p, psn, buf);
		return true;
	}
	if (d > 0) {
		sv_stat_add(qp->sdev, SV_STAT_WIRE_RX_OOS, 1);
		if (!wq->nak_sent) {
			wq->nak_sent = true;
			sv_rc_nak(qp, wq->epsn, SV_NAK_PSN_SEQ);
		}
		return true;
	}
	sv_rc_request(qp, &p, psn, m, buf);
	return true;
}
