// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs on the wire: the RC transport.
 *
 * Requester. The send queue's head WQE goes on the wire alone: its
 * packets (a SEND or RDMA WRITE in path-MTU packets, the last asking
 * for an ACK; an RDMA READ request; an atomic) take PSNs from the QP's
 * next one, at most SV_RC_WINDOW of them unacknowledged (a long READ
 * asks for its responses in pieces of that many), and the WQE stays at
 * the head (the engine's SV_EXEC_RETRY) until its answer came: the ACK
 * of its last packet, all its READ responses placed in its local
 * buffers, or its atomic response. The
 * answers wait in the QP's wire state (resps) until the engine comes
 * back to the WQE; an answer wakes it. Go-back-N: a PSN sequence NAK
 * or the local ACK timeout (the QP's timeout) sends again from the
 * first packet not acknowledged (a READ asks again for the rest), at
 * most retry_cnt times, then IBV_WC_RETRY_EXC_ERR; an RNR NAK waits the
 * responder's RNR timer, at most rnr_retry times (7: for ever), then
 * IBV_WC_RNR_RETRY_EXC_ERR; a NAK for an invalid request, a remote
 * access or operational error ends the WQE with IBV_WC_REM_INV_REQ_ERR,
 * _REM_ACCESS_ERR or _REM_OP_ERR. One WQE at a time keeps max_rd_atomic
 * (at least one) and ordering; it also bounds the rate by the round
 * trip, which a window will lift.
 *
 * Responder. Packets from the peer (qp.c) are taken in PSN order. One
 * ahead of the expected PSN is answered by a single PSN sequence NAK
 * until the expected one comes; one behind it is a duplicate: a SEND or
 * WRITE is acknowledged again, a READ is carried out again from its
 * own RETH (rights checked again), an atomic's response is sent again
 * from the last max_dest_rd_atomic results kept, never carried out
 * twice. SENDs go into receive WQEs as on UC; no WQE is an RNR NAK with
 * the QP's min_rnr_timer (the PSN not taken). An RDMA WRITE, READ or
 * atomic is checked against the QP's access flags and its rkey's MR
 * (the QP's PD, the rights, the range; an atomic's alignment); a
 * failure is a remote access NAK and the QP goes to ERR, as does a SEND
 * that does not fit (invalid request NAK), as on the direct path. ACKs
 * go out for the packets that ask (coalesced: the last of a message).
 */
#include "../compat.h"
#include "wire.h"

/*
 * A long message asks for an ACK every this many packets too, so that
 * the requester sees progress (and restarts its timer) on the way.
 */
#define SV_RC_ACK_EVERY		32

/*
 * At most this many packets of a WQE unacknowledged on the wire (a READ
 * asks for its responses in pieces of this many): a burst the peer's
 * receive path and the veth or NIC queues between can take. More go out
 * as ACKs come back.
 */
#define SV_RC_WINDOW		128

/* a - b in PSN space (24 bits, wrapping) */
static s32 sv_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

static u32 sv_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SV_BTH_PSN_MASK;
}

static void sv_bth_fill(struct sv_bth *bth, u8 op, u32 dqpn, u32 psn,
			u32 paylen, bool se, bool ackreq)
{
	bth->opcode = SV_OP_RC | op;
	bth->flags = ((-paylen & 3) << SV_BTH_PAD_SHIFT) | (se ? SV_BTH_SE : 0);
	bth->pkey = htons(SV_DEFAULT_PKEY);
	bth->qpn = htonl(dqpn & SV_QPN_MASK);
	bth->apsn = htonl((ackreq ? SV_BTH_ACKREQ : 0) | psn);
}

/* qp's route to its peer; false (counted) if there is none now. */
static bool sv_rc_route(struct sv_qp *qp, struct sv_wire_tx *t)
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

/* An ACK, RNR NAK or NAK (syndrome) for psn. */
static void sv_rc_ack(struct sv_qp *qp, u32 psn, u8 syndrome)
{
	struct sv_wire_tx t = {};
	u8 *p;

	if (!sv_rc_route(qp, &t))
		return;
	p = sv_wire_frame(&t, sizeof(struct sv_bth) + 4, 0);
	if (p) {
		sv_bth_fill((struct sv_bth *)p, SV_OP_ACK, qp->dest_qpn, psn, 0,
			    false, false);
		put_unaligned_be32((u32)syndrome << 24 | qp->wire->msn,
				   p + sizeof(struct sv_bth));
		sv_wire_xmit(qp->sdev, &t);
		if (syndrome & SV_AETH_TYPE_MASK)
			sv_stat_add(qp->sdev, SV_STAT_WIRE_NAKS_SENT, 1);
	}
	sv_wire_tx_release(&t);
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

	if (!(READ_ONCE(qp->attr.qp_access_flags) & SV_ACCESS_REMOTE_READ))
		return false;
	if (len && sv_sg_remote(sg, qp, sv_qp_pd(qp), SV_ACCESS_REMOTE_READ,
				rkey, va, len))
		return false;
	if (!sv_rc_route(qp, &t))
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
		sv_bth_fill((struct sv_bth *)p, op, qp->dest_qpn,
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

static void sv_rc_atomic_resp(struct sv_qp *qp, u32 psn, u64 orig)
{
	struct sv_wire_tx t = {};
	u8 *p;

	if (!sv_rc_route(qp, &t))
		return;
	p = sv_wire_frame(&t, sizeof(struct sv_bth) + 12, 0);
	if (p) {
		sv_bth_fill((struct sv_bth *)p, SV_OP_ATOMIC_ACK, qp->dest_qpn,
			    psn, 0, false, false);
		put_unaligned_be32((u32)SV_AETH_NO_CREDITS << 24 |
				   qp->wire->msn, p + sizeof(struct sv_bth));
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

	if ((va & 7) || !(READ_ONCE(qp->attr.qp_access_flags) &
			  SV_ACCESS_REMOTE_ATOMIC) ||
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
	sv_rc_atomic_resp(qp, psn, orig);
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
				sv_rc_atomic_resp(qp, psn, wq->res[i].orig);
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
	 * The ACK first: once the completion is seen its QP may be gone,
	 * and a requester whose last ACK never came retries for ever
	 * (rxe with retry_cnt 7).
	 */
	if (!cqe->status && (ntohl(p->bth->apsn) & SV_BTH_ACKREQ)) {
		sv_rc_ack(qp, psn, SV_AETH_NO_CREDITS);
		qp->wire->acked = true;
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
	if (op <= SV_OP_SEND_ONLY_IMM)
		taken = sv_rc_send_pkt(qp, p, psn, m, buf);
	else if (op <= SV_OP_WRITE_ONLY_IMM)
		taken = sv_rc_write_pkt(qp, p, psn, m, buf);
	else
		taken = false;		/* a response: not a request */
	if (!taken)
		return;
	wq->epsn = sv_psn_add(psn, 1);
	if ((ntohl(p->bth->apsn) & SV_BTH_ACKREQ) && !wq->acked)
		sv_rc_ack(qp, psn, SV_AETH_NO_CREDITS);
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
		 * The requester's: its WQE takes it when the engine is back.
		 * Only while one is on the wire, and at most as many as it
		 * has packets (and some): a flood is dropped, not kept.
		 */
		if (!wq->req_busy ||
		    skb_queue_len(&wq->resps) > wq->req_npkts + 16) {
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

/* ---- requester ---- */

/*
 * The packets of the head WQE from packet k on, as far as the window
 * reaches past the acknowledged ones (k == req_acked: a retry).
 */
static void sv_rc_transmit(struct sv_req *r, u32 k)
{
	struct sv_qp *qp = r->qp;
	struct sv_wire_qp *wq = qp->wire;
	struct sv_send_wqe *w = r->w;
	u32 op = w->opcode, n = wq->req_npkts, mtu = wq->req_mtu, i, seg;
	u32 end = min(n, wq->req_acked + SV_RC_WINDOW);
	bool write = op == SV_WR_RDMA_WRITE || op == SV_WR_RDMA_WRITE_WITH_IMM;
	bool imm = op == SV_WR_SEND_WITH_IMM || op == SV_WR_RDMA_WRITE_WITH_IMM;
	struct sv_wire_tx t = {};
	u64 off = (u64)k * mtu;
	u8 *p;

	if (k >= end || !sv_rc_route(qp, &t))
		return;
	wq->req_sent = end;
	if (op == SV_WR_RDMA_READ) {
		struct sv_reth *reth;

		/* Responses k to end: a READ of that piece, at its PSN. */
		p = sv_wire_frame(&t, sizeof(struct sv_bth) + sizeof(*reth), 0);
		if (p) {
			sv_bth_fill((struct sv_bth *)p, SV_OP_READ_REQ,
				    qp->dest_qpn, sv_psn_add(wq->req_psn, k),
				    0, false, true);
			reth = (struct sv_reth *)(p + sizeof(struct sv_bth));
			reth->va = cpu_to_be64(w->remote_addr + off);
			reth->rkey = htonl(w->rkey);
			reth->len = htonl(min_t(u64, r->len - off,
						(u64)(end - k) * mtu));
			sv_wire_xmit(qp->sdev, &t);
		}
		goto out;
	}
	if (op == SV_WR_ATOMIC_CMP_AND_SWP || op == SV_WR_ATOMIC_FETCH_AND_ADD) {
		struct sv_atomic_eth *a;

		p = sv_wire_frame(&t, sizeof(struct sv_bth) + sizeof(*a), 0);
		if (p) {
			sv_bth_fill((struct sv_bth *)p,
				    op == SV_WR_ATOMIC_CMP_AND_SWP ?
				    SV_OP_CMP_SWAP : SV_OP_FETCH_ADD,
				    qp->dest_qpn, wq->req_psn, 0, false, true);
			a = (struct sv_atomic_eth *)(p + sizeof(struct sv_bth));
			a->va = cpu_to_be64(w->remote_addr);
			a->rkey = htonl(w->rkey);
			a->swap_add = cpu_to_be64(op == SV_WR_ATOMIC_CMP_AND_SWP ?
						  w->swap : w->compare_add);
			a->compare = cpu_to_be64(op == SV_WR_ATOMIC_CMP_AND_SWP ?
						 w->compare_add : 0);
			sv_wire_xmit(qp->sdev, &t);
		}
		goto out;
	}
	for (i = k; i < end; i++, off += seg) {
		bool last = i == n - 1, reth = write && !i;
		u32 hdrs;
		u8 o;

		o = sv_wire_msg_op(write, imm, i, n);
		seg = min_t(u64, mtu, r->len - off);
		hdrs = sizeof(struct sv_bth) +
		       (reth ? sizeof(struct sv_reth) : 0) + (imm && last ? 4 : 0);
		p = sv_wire_frame(&t, hdrs, seg);
		/* On a failure a timeout goes back to the first unacked. */
		if (!p)
			break;
		if (seg && sv_req_read(r, off, p + hdrs, seg))
			break;	/* its own page gone (ODP) */
		sv_bth_fill((struct sv_bth *)p, o, qp->dest_qpn,
			    sv_psn_add(wq->req_psn, i), seg,
			    last && (w->send_flags & SV_SEND_SOLICITED),
			    i == end - 1 || !((i + 1) % SV_RC_ACK_EVERY));
		p += sizeof(struct sv_bth);
		if (reth) {
			struct sv_reth *h = (struct sv_reth *)p;

			h->va = cpu_to_be64(w->remote_addr);
			h->rkey = htonl(w->rkey);
			h->len = htonl(r->len);
			p += sizeof(*h);
		}
		if (imm && last)
			memcpy(p, &w->imm_data, 4);
		sv_wire_xmit(qp->sdev, &t);
	}
out:
	sv_wire_tx_release(&t);
}

/* Start the head WQE on the wire: its PSNs, its packets, its timer. */
static enum sv_exec_result sv_rc_start(struct sv_req *r, u32 *status)
{
	struct sv_qp *qp = r->qp;
	struct sv_wire_qp *wq = qp->wire;
	u32 op = r->w->opcode, mtu;

	switch (op) {
	case SV_WR_SEND:
	case SV_WR_SEND_WITH_IMM:
	case SV_WR_RDMA_WRITE:
	case SV_WR_RDMA_WRITE_WITH_IMM:
	case SV_WR_RDMA_READ:
	case SV_WR_ATOMIC_CMP_AND_SWP:
	case SV_WR_ATOMIC_FETCH_AND_ADD:
		break;
	default:
		/* SEND with invalidate, atomic write, FLUSH: not yet */
		*status = SV_WC_LOC_QP_OP_ERR;
		return SV_EXEC_FATAL;
	}
	mtu = min(sv_mtu_bytes(READ_ONCE(qp->sdev->active_mtu)),
		  sv_mtu_bytes(READ_ONCE(qp->attr.path_mtu)) ?: 4096);
	wq->req_mtu = mtu;
	wq->req_npkts = op == SV_WR_ATOMIC_CMP_AND_SWP ||
			op == SV_WR_ATOMIC_FETCH_AND_ADD ? 1 :
			max_t(u32, 1, DIV_ROUND_UP_ULL(r->len, mtu));
	wq->req_psn = qp->tx_psn;
	wq->req_acked = 0;
	wq->req_sent = 0;
	wq->req_resend = false;
	wq->req_busy = true;
	/* A READ's responses take its PSNs: its request one packet. */
	qp->tx_psn = sv_psn_add(qp->tx_psn, wq->req_npkts);
	sv_rc_transmit(r, 0);
	wq->req_deadline = ktime_get_ns() + sv_timeout_ns(qp->attr.timeout);
	qp->wait_until = wq->req_deadline;
	return SV_EXEC_RETRY;
}

enum sv_rc_verdict { SV_RC_WAIT, SV_RC_DONE, SV_RC_FAIL };

/* The NAK codes as the requester's completion status */
static u32 sv_rc_nak_status(u8 code)
{
	switch (code) {
	case SV_NAK_INV_REQ:
		return SV_WC_REM_INV_REQ_ERR;
	case SV_NAK_REM_ACCESS:
		return SV_WC_REM_ACCESS_ERR;
	default:
		return SV_WC_REM_OP_ERR;
	}
}

/* One answer to the head WQE (the skb's data at its BTH). */
static enum sv_rc_verdict sv_rc_answer(struct sv_req *r, struct sk_buff *skb,
				       u32 *status)
{
	struct sv_qp *qp = r->qp;
	struct sv_wire_qp *wq = qp->wire;
	u32 op = r->w->opcode, psn, syn;
	struct sv_wire_pkt p;
	u64 orig;
	s32 idx;

	sv_wire_parse(skb, &p);
	psn = ntohl(p.bth->apsn) & SV_BTH_PSN_MASK;
	idx = sv_psn_diff(psn, wq->req_psn);
	if (idx < 0 || idx >= (s32)wq->req_npkts)
		return SV_RC_WAIT;	/* not this WQE's: a late duplicate */
	switch (p.opcode & 0x1f) {
	case SV_OP_ACK:
		syn = get_unaligned_be32(p.ext) >> 24;
		if ((syn & SV_AETH_TYPE_MASK) == SV_AETH_ACK) {
			if (op == SV_WR_RDMA_READ ||
			    op == SV_WR_ATOMIC_CMP_AND_SWP ||
			    op == SV_WR_ATOMIC_FETCH_AND_ADD)
				return SV_RC_WAIT;
			wq->req_acked = max_t(u32, wq->req_acked, idx + 1);
			return wq->req_acked == wq->req_npkts ? SV_RC_DONE :
							       SV_RC_WAIT;
		}
		sv_stat_add(qp->sdev, SV_STAT_WIRE_NAKS_RECEIVED, 1);
		if ((syn & SV_AETH_TYPE_MASK) == SV_AETH_RNR) {
			if (!qp->rnr_left) {
				*status = SV_WC_RNR_RETRY_EXC_ERR;
				return SV_RC_FAIL;
			}
			if (qp->attr.rnr_retry != 7)
				qp->rnr_left--;
			qp->retried = true;
			wq->req_acked = max_t(u32, wq->req_acked, idx);
			wq->req_resend = true;
			wq->req_deadline = ktime_get_ns() + sv_rnr_ns(syn);
			return SV_RC_WAIT;
		}
		if ((syn & 0x1f) == SV_NAK_PSN_SEQ) {
			/* All before psn arrived: again from there, now. */
			wq->req_acked = max_t(u32, wq->req_acked, idx);
			wq->req_resend = true;
			wq->req_deadline = 0;
			return SV_RC_WAIT;
		}
		*status = sv_rc_nak_status(syn & 0x1f);
		return SV_RC_FAIL;
	case SV_OP_ATOMIC_ACK:
		if (op != SV_WR_ATOMIC_CMP_AND_SWP &&
		    op != SV_WR_ATOMIC_FETCH_AND_ADD)
			return SV_RC_WAIT;
		orig = get_unaligned_be64(p.ext + 4);
		if (sv_sg_write(r->lsg, 0, &orig, 8)) {
			*status = SV_WC_LOC_PROT_ERR;
			return SV_RC_FAIL;
		}
		return SV_RC_DONE;
	default:		/* READ responses, in order only */
		if (op != SV_WR_RDMA_READ || idx != (s32)wq->req_acked)
			return SV_RC_WAIT;
		if (p.paylen != min_t(u64, wq->req_mtu,
				      r->len - (u64)idx * wq->req_mtu))
			return SV_RC_WAIT;
		if (p.paylen && sv_sg_write(r->lsg, (u64)idx * wq->req_mtu,
					    p.payload, p.paylen)) {
			*status = SV_WC_LOC_PROT_ERR;
			return SV_RC_FAIL;
		}
		wq->req_acked++;
		return wq->req_acked == wq->req_npkts ? SV_RC_DONE :
						       SV_RC_WAIT;
	}
}

/**
 * sv_wire_rc_send - the head RC WQE on the wire: start it or go on
 * @r: the request (qp, w, the payload or READ/atomic buffers resolved)
 * @status: the requester's status on SV_EXEC_FATAL
 *
 * SV_EXEC_RETRY while it waits for its answers (qp->wait_until: its
 * timer), SV_EXEC_DONE once answered, SV_EXEC_FATAL on an error. The
 * engine, under qp->sq.lock.
 */
enum sv_exec_result sv_wire_rc_send(struct sv_req *r, u32 *status)
{
	struct sv_qp *qp = r->qp;
	struct sv_wire_qp *wq = qp->wire;
	enum sv_rc_verdict v = SV_RC_WAIT;
	struct sk_buff *skb;
	u32 acked;
	u64 now;

	if (!wq->req_busy) {
		/* Answers to a WQE done before are stale. */
		skb_queue_purge(&wq->resps);
		return sv_rc_start(r, status);
	}
	acked = wq->req_acked;
	while (v == SV_RC_WAIT && (skb = __skb_dequeue(&wq->resps))) {
		v = sv_rc_answer(r, skb, status);
		consume_skb(skb);
	}
	if (v != SV_RC_WAIT) {
		wq->req_busy = false;
		skb_queue_purge(&wq->resps);
		return v == SV_RC_DONE ? SV_EXEC_DONE : SV_EXEC_FATAL;
	}
	now = ktime_get_ns();
	/*
	 * Progress (packets acknowledged, responses placed) restarts the
	 * timer and the retry count, which counts timeouts without any.
	 */
	if (wq->req_acked > acked && !wq->req_resend) {
		wq->req_deadline = now + sv_timeout_ns(qp->attr.timeout);
		spin_lock_bh(&qp->lock);
		qp->retry_left = qp->attr.retry_cnt;
		spin_unlock_bh(&qp->lock);
		/* The window moved on: its next packets */
		sv_rc_transmit(r, wq->req_sent);
	}
	if (now < wq->req_deadline) {
		qp->wait_until = wq->req_deadline;
		return SV_EXEC_RETRY;
	}
	if (!wq->req_resend) {
		/* The local ACK timeout: go back to the first unacked. */
		if (!qp->retry_left) {
			wq->req_busy = false;
			*status = SV_WC_RETRY_EXC_ERR;
			return SV_EXEC_FATAL;
		}
		qp->retry_left--;
		qp->retried = true;
		sv_stat_add(qp->sdev, SV_STAT_RETRIES, 1);
	}
	wq->req_resend = false;
	sv_stat_add(qp->sdev, SV_STAT_WIRE_RETRANSMITS, 1);
	sv_rc_transmit(r, wq->req_acked);
	wq->req_deadline = now + sv_timeout_ns(qp->attr.timeout);
	qp->wait_until = wq->req_deadline;
	return SV_EXEC_RETRY;
}
