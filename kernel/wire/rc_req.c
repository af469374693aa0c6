// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs on the wire: the RC requester.
 *
 * An RC QP on the wire runs its send queue here (sv_wire_rc_run(), the
 * engine's pass in place of its own loop). WQEs go on the wire one after
 * another without waiting for the answers to those before them: the
 * SQ's slots from its consumer index (the oldest WQE not completed) to
 * cons + nfl - 1 are in flight, each with its record in wq->fl (its
 * PSNs, its packets sent and answered). They complete in order, as their
 * answers come, and only then are their slots the library's again. A
 * WQE's data is read from its slot (its buffers resolved again) each
 * time it is needed: to send its packets, to send them again, to place
 * a READ response or an atomic's result; a WQE found changed in its slot
 * (its opcode or length) ends with IBV_WC_LOC_QP_OP_ERR.
 *
 * What may be in flight: SV_RC_MAX_FL WQEs, SV_RC_WINDOW packets past
 * the first unanswered one, max_rd_atomic READs, atomics, ATOMIC WRITEs
 * and FLUSHes (at least one; the last two are answered by a READ
 * response without data, as rxe answers them, or an ACK). A
 * WQE with IBV_SEND_FENCE waits for those before it; a WQE that is no
 * SEND, WRITE, READ, atomic, ATOMIC WRITE or FLUSH (a local operation)
 * waits until nothing is in flight, and then runs as on a local QP. A
 * WQE starts once the one before it has all its packets sent.
 *
 * Answers (ACKs, NAKs, READ responses, atomic ACKs; rc.c queues them)
 * name a PSN, and the PSN its WQE. An ACK answers every packet up to its
 * PSN (ACKs are coalesced); any answer for a later WQE completes the
 * SENDs and WRITEs before it (implicitly acknowledged), and a READ,
 * atomic, ATOMIC WRITE or FLUSH before it still without its answer is
 * sent again at once: the answer was lost. Go-back-N: a PSN sequence
 * NAK, or the local ACK timeout (the QP's timeout, restarted by
 * progress), sends again from
 * the first packet not answered, each WQE in flight from where its
 * answers reached (a READ asks again for the rest). Until an answer
 * comes from past that point, the answers to what went before do not
 * send anything again (nor a NAK for that point): a retry at a time, as
 * rxe's. At most retry_cnt timeouts without progress, then the oldest
 * WQE ends with
 * IBV_WC_RETRY_EXC_ERR; an RNR NAK waits the responder's RNR timer, at
 * most rnr_retry times (7: for ever), then IBV_WC_RNR_RETRY_EXC_ERR; a
 * NAK for an invalid request, a remote access or operational error ends
 * its WQE with IBV_WC_REM_INV_REQ_ERR, _REM_ACCESS_ERR or _REM_OP_ERR
 * once those before it completed. The QP goes to ERR with a failed WQE;
 * the WQEs after it are flushed. In SQD the WQEs in flight go on to
 * their completions and none starts; the SQ_DRAINED event the owner
 * asked for comes after the last of them.
 */
#include "../compat.h"
#include "wire.h"

/*
 * A long message asks for an ACK every this many packets too, so that
 * the requester sees progress (and restarts its timer) on the way.
 */
#define SV_RC_ACK_EVERY		32

/* One pass of the requester: what it works with. */
struct sv_rc_run {
	struct sv_qp *qp;
	struct sv_wire_qp *wq;
	struct sv_send_wqe *w;	/* scratch for a WQE, wsize bytes */
	u32 wsize;
	void *buf;		/* sv_exec_buf_size() bytes */
	struct sv_req r;	/* the request of in-flight WQE cur */
	s32 cur;		/* -1: r holds nothing */
	struct sv_wire_tx t;	/* the route, once one packet goes */
	bool routed;
	u32 before;		/* fl[0..before - 1]: all answered */
	bool progress;		/* packets answered in this pass */
	bool wait;		/* a WQE waits for qp->wait_until */
};

static bool sv_rc_op_atomic(u8 op)
{
	return op == SV_WR_ATOMIC_CMP_AND_SWP ||
	       op == SV_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * IBA 1.5's ATOMIC WRITE and FLUSH: one packet, answered by an RDMA READ
 * response without data (as rxe answers them; rxe's requester also takes
 * an ACK, and so does this one)
 */
static bool sv_rc_op_mpe(u8 op)
{
	return op == SV_WR_ATOMIC_WRITE || op == SV_WR_FLUSH;
}

/*
 * Answered by responses (READ responses, an atomic ACK), not implicitly
 * by the answer to a later request; each holds a responder resource of
 * the peer's (max_rd_atomic of them)
 */
static bool sv_rc_op_rd(u8 op)
{
	return op == SV_WR_RDMA_READ || sv_rc_op_atomic(op) ||
	       sv_rc_op_mpe(op);
}

/* The WQEs that go on the wire here (the others wait for none in flight) */
static bool sv_rc_op_wire(u32 op)
{
	switch (op) {
	case SV_WR_SEND:
	case SV_WR_SEND_WITH_IMM:
	case SV_WR_SEND_WITH_INV:
	case SV_WR_RDMA_WRITE:
	case SV_WR_RDMA_WRITE_WITH_IMM:
	case SV_WR_RDMA_READ:
	case SV_WR_ATOMIC_CMP_AND_SWP:
	case SV_WR_ATOMIC_FETCH_AND_ADD:
	case SV_WR_ATOMIC_WRITE:
	case SV_WR_FLUSH:
		return true;
	}
	return false;
}

/* In-flight WQE i (0: the oldest) */
static struct sv_rc_fl *sv_rc_fl(struct sv_wire_qp *wq, u32 i)
{
	return &wq->fl[(wq->fl_head + i) & (SV_RC_MAX_FL - 1)];
}

/* Copy the WQE in the SQ's slot cons + i into x->w; r holds nothing. */
static void sv_rc_copy(struct sv_rc_run *x, u32 i)
{
	struct sv_wq *sq = &x->qp->sq;

	if (x->cur >= 0)
		sv_req_release(&x->r);
	x->cur = -1;
	memcpy(x->w, sq->wqes +
	       (size_t)((sq->cons + i) & (sq->entries - 1)) * sq->wqe_size,
	       min(sq->wqe_size, x->wsize));
}

/*
 * The request of in-flight WQE i in x->r, its buffers resolved; false
 * with *status if that failed or the WQE changed in its slot.
 */
static bool sv_rc_resolve(struct sv_rc_run *x, u32 i, u32 *status)
{
	struct sv_rc_fl *e = sv_rc_fl(x->wq, i);

	if (x->cur == (s32)i)
		return true;
	sv_rc_copy(x, i);
	x->r = (struct sv_req){ .qp = x->qp, .w = x->w };
	if (sv_req_local(&x->r, x->buf, status) != SV_EXEC_DONE)
		return false;
	if (x->w->opcode != e->opcode || x->r.len != e->len) {
		sv_req_release(&x->r);
		*status = SV_WC_LOC_QP_OP_ERR;
		return false;
	}
	x->cur = i;
	return true;
}

/* In-flight WQE i fails with status (when it is the oldest). */
static void sv_rc_fail(struct sv_rc_run *x, u32 i, u32 status)
{
	struct sv_rc_fl *e = sv_rc_fl(x->wq, i);

	if (!e->status)
		e->status = status;
}

/* ---- sending ---- */

/*
 * In-flight WQE e's one packet, an ATOMIC WRITE (a RETH for its 8 bytes,
 * which go as the WQE holds them: in the requester's memory order, as
 * rxe sends them) or a FLUSH (a FETH, a RETH for its range).
 */
static void sv_rc_transmit_mpe(struct sv_rc_run *x, struct sv_rc_fl *e)
{
	struct sv_send_wqe *w = x->w;
	bool flush = e->opcode == SV_WR_FLUSH;
	u32 hdrs = sizeof(struct sv_bth) + (flush ? SV_FETH_LEN : 0) +
		   sizeof(struct sv_reth);
	u32 paylen = flush ? 0 : 8;
	struct sv_reth *reth;
	u8 *p;

	p = sv_wire_frame(&x->t, hdrs, paylen);
	if (!p)
		return;
	sv_wire_rc_bth((struct sv_bth *)p,
		       flush ? SV_OP_FLUSH : SV_OP_ATOMIC_WRITE,
		       x->qp->dest_qpn, e->psn, paylen, false, true);
	if (flush)
		put_unaligned_be32(sv_flush_level(w) << SV_FETH_SEL_SHIFT |
				   sv_flush_type(w), p + sizeof(struct sv_bth));
	reth = (struct sv_reth *)(p + hdrs - sizeof(*reth));
	reth->va = cpu_to_be64(w->remote_addr);
	reth->rkey = htonl(w->rkey);
	/* A range's length fits (sv_rc_start()); a whole MR's is unused. */
	reth->len = htonl(flush ? (u32)w->compare_add : 8);
	if (!flush)
		memcpy(p + hdrs, &w->compare_add, 8);
	sv_wire_xmit(x->qp->sdev, &x->t);
}

/*
 * Packets k to end - 1 of in-flight WQE i (resolved in x->r): a READ
 * asks for those responses in one request.
 */
static void sv_rc_transmit(struct sv_rc_run *x, u32 i, u32 k, u32 end)
{
	struct sv_qp *qp = x->qp;
	struct sv_rc_fl *e = sv_rc_fl(x->wq, i);
	struct sv_send_wqe *w = x->w;
	struct sv_req *r = &x->r;
	u32 op = e->opcode, n = e->npkts, mtu = e->mtu, seg, j;
	u64 off = (u64)k * mtu;
	u8 *p;

	if (!x->routed) {
		if (!sv_wire_rc_route(qp, &x->t))
			return;		/* the timer sends them again */
		x->routed = true;
	}
	if (op == SV_WR_RDMA_READ) {
		struct sv_reth *reth;

		p = sv_wire_frame(&x->t, sizeof(struct sv_bth) + sizeof(*reth),
				  0);
		if (!p)
			return;
		sv_wire_rc_bth((struct sv_bth *)p, SV_OP_READ_REQ, qp->dest_qpn,
			       sv_psn_add(e->psn, k), 0, false, true);
		reth = (struct sv_reth *)(p + sizeof(struct sv_bth));
		reth->va = cpu_to_be64(w->remote_addr + off);
		reth->rkey = htonl(w->rkey);
		reth->len = htonl(min_t(u64, e->len - off, (u64)(end - k) * mtu));
		sv_wire_xmit(qp->sdev, &x->t);
		return;
	}
	if (sv_rc_op_mpe(op)) {
		sv_rc_transmit_mpe(x, e);
		return;
	}
	if (sv_rc_op_atomic(op)) {
		struct sv_atomic_eth *a;
		bool cas = op == SV_WR_ATOMIC_CMP_AND_SWP;

		p = sv_wire_frame(&x->t, sizeof(struct sv_bth) + sizeof(*a), 0);
		if (!p)
			return;
		sv_wire_rc_bth((struct sv_bth *)p,
			       cas ? SV_OP_CMP_SWAP : SV_OP_FETCH_ADD,
			       qp->dest_qpn, e->psn, 0, false, true);
		a = (struct sv_atomic_eth *)(p + sizeof(struct sv_bth));
		a->va = cpu_to_be64(w->remote_addr);
		a->rkey = htonl(w->rkey);
		a->swap_add = cpu_to_be64(cas ? w->swap : w->compare_add);
		a->compare = cpu_to_be64(cas ? w->compare_add : 0);
		sv_wire_xmit(qp->sdev, &x->t);
		return;
	}
	for (j = k; j < end; j++, off += seg) {
		bool last = j == n - 1;
		u32 hdrs;

		seg = min_t(u64, mtu, e->len - off);
		hdrs = sizeof(struct sv_bth) + sv_wire_msg_hdrs(op, j, n);
		p = sv_wire_frame(&x->t, hdrs, seg);
		/* On a failure the timer goes back to the first unanswered. */
		if (!p)
			return;
		if (seg && sv_req_read(r, off, p + hdrs, seg))
			return;	/* its own page gone (ODP) */
		sv_wire_rc_bth((struct sv_bth *)p,
			       sv_wire_msg_op(op, j, n), qp->dest_qpn,
			       sv_psn_add(e->psn, j), seg,
			       last && (w->send_flags & SV_SEND_SOLICITED),
			       j == end - 1 || !((j + 1) % SV_RC_ACK_EVERY));
		sv_wire_msg_ext(p + sizeof(struct sv_bth), w, e->len, j, n);
		sv_wire_xmit(qp->sdev, &x->t);
	}
}

/* The PSN of the first packet in flight not answered */
static u32 sv_rc_una(struct sv_qp *qp, struct sv_wire_qp *wq)
{
	struct sv_rc_fl *e;
	u32 i;

	for (i = 0; i < wq->nfl; i++) {
		e = sv_rc_fl(wq, i);
		if (e->acked < e->npkts)
			return sv_psn_add(e->psn, e->acked);
	}
	return qp->tx_psn;	/* all answered */
}

/*
 * Send what the window lets go of the WQEs in flight, in PSN order: each
 * from its first packet not sent. A WQE whose resolution fails is
 * marked failed. True if anything went.
 */
static bool sv_rc_push(struct sv_rc_run *x)
{
	struct sv_wire_qp *wq = x->wq;
	struct sv_rc_fl *e;
	u32 i, una, end, status;
	bool did = false;
	s32 room;

	/*
	 * The WQEs before push_from went whole: a pass starts after them,
	 * not at the oldest of up to SV_RC_MAX_FL (a go-back moves it to 0).
	 */
	for (i = wq->push_from; i < wq->nfl; i++) {
		e = sv_rc_fl(wq, i);
		if (e->sent < e->npkts && !e->status)
			break;
	}
	wq->push_from = i;
	if (i == wq->nfl)
		return false;
	una = sv_rc_una(x->qp, wq);
	for (; i < wq->nfl; i++) {
		e = sv_rc_fl(wq, i);
		if (e->sent >= e->npkts || e->status)
			continue;
		room = SV_RC_WINDOW - sv_psn_diff(sv_psn_add(e->psn, e->sent),
						  una);
		if (room <= 0)
			break;
		end = min_t(u32, e->npkts, e->sent + room);
		/*
		 * A READ asks in pieces of SV_RC_WINDOW responses (the last
		 * may overshoot the window): asked again, a piece is asked
		 * for from where its answers reached to its end, never more
		 * than it was at first (a responder such as rxe answers a
		 * duplicate READ only within the request it had).
		 */
		if (e->opcode == SV_WR_RDMA_READ)
			end = min_t(u32, e->npkts,
				    rounddown(e->sent, SV_RC_WINDOW) +
				    SV_RC_WINDOW);
		if (!sv_rc_resolve(x, i, &status)) {
			sv_rc_fail(x, i, status);
			e->sent = e->npkts;
			break;
		}
		sv_rc_transmit(x, i, e->sent, end);
		e->sent = end;
		did = true;
		if (e->sent < e->npkts)
			break;
	}
	return did;
}

/* ---- answers ---- */

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

/* Send again from the first packet not answered, now or at when. */
static void sv_rc_go_back(struct sv_wire_qp *wq, u64 when)
{
	wq->resend = true;
	wq->deadline = when;
}

/* Mark packets answered; progress if any was not before. */
static void sv_rc_answered(struct sv_rc_run *x, struct sv_rc_fl *e, u32 n)
{
	if (n <= e->acked)
		return;
	e->acked = n;
	e->sent = max(e->sent, n);
	x->progress = true;
}

/*
 * An answer for in-flight WQE i: the SENDs and WRITEs before it are
 * done; a READ or atomic before it without its answer lost it.
 */
static void sv_rc_before(struct sv_rc_run *x, u32 i)
{
	struct sv_rc_fl *e;
	u32 j;

	for (j = x->before; j < i; j++) {
		e = sv_rc_fl(x->wq, j);
		if (e->acked != e->npkts) {
			/* (Not again for the answers to what went before a retry) */
			if (!sv_rc_op_rd(e->opcode))
				sv_rc_answered(x, e, e->npkts);
			else if (!x->wq->retrying)
				sv_rc_go_back(x->wq, 0);
		}
		/*
		 * The answered ones in front stay so (nothing takes an
		 * answer back): the next answer of the pass starts after
		 * them, not at the oldest WQE again.
		 */
		if (j == x->before && e->acked == e->npkts)
			x->before++;
	}
}

/* The in-flight WQE of psn, and the packet's index in it; false if none */
static bool sv_rc_find(struct sv_wire_qp *wq, u32 psn, u32 *i, u32 *idx)
{
	u32 lo = 0, hi = wq->nfl, mid;
	struct sv_rc_fl *e;
	s32 d;

	/*
	 * Their PSNs follow each other from the oldest on (one that failed
	 * at its start has none): the last one starting at or before psn.
	 */
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (sv_psn_diff(psn, sv_rc_fl(wq, mid)->psn) >= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	*i = lo - 1;
	e = sv_rc_fl(wq, *i);
	d = sv_psn_diff(psn, e->psn);
	if (d >= (s32)e->npkts)
		return false;
	*idx = d;
	return true;
}

/* An ACK, RNR NAK or NAK with syndrome syn for packet idx of WQE i */
static void sv_rc_aeth(struct sv_rc_run *x, u32 i, u32 idx, u32 syn)
{
	struct sv_qp *qp = x->qp;
	struct sv_rc_fl *e = sv_rc_fl(x->wq, i);
	bool rd = sv_rc_op_rd(e->opcode);

	sv_rc_before(x, i);
	if ((syn & SV_AETH_TYPE_MASK) == SV_AETH_ACK) {
		/*
		 * A READ's or atomic's answer is its responses; an ATOMIC
		 * WRITE's or FLUSH's may be an ACK for its own PSN.
		 */
		if (!rd || sv_rc_op_mpe(e->opcode))
			sv_rc_answered(x, e, idx + 1);
		return;
	}
	sv_stat_add(qp->sdev, SV_STAT_WIRE_NAKS_RECEIVED, 1);
	/* Everything before psn arrived. */
	if (!rd)
		sv_rc_answered(x, e, idx);
	if ((syn & SV_AETH_TYPE_MASK) == SV_AETH_RNR) {
		if (!qp->rnr_left) {
			sv_rc_fail(x, i, SV_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (qp->attr.rnr_retry != 7)
			qp->rnr_left--;
		qp->retried = true;
		sv_rc_go_back(x->wq, ktime_get_ns() + sv_rnr_ns(syn));
		return;
	}
	if ((syn & 0x1f) == SV_NAK_PSN_SEQ) {
		/* Not again for where a retry went back to already */
		if (!x->wq->retrying ||
		    sv_psn_add(e->psn, idx) != x->wq->retry_psn)
			sv_rc_go_back(x->wq, 0);
		return;
	}
	sv_rc_fail(x, i, sv_rc_nak_status(syn & 0x1f));
}

/*
 * A READ response (idx of WQE i) or an atomic's ACK, into its buffers; or
 * the answer to an ATOMIC WRITE or FLUSH
 */
static void sv_rc_place(struct sv_rc_run *x, u32 i, u32 idx,
			const struct sv_wire_pkt *p)
{
	struct sv_rc_fl *e = sv_rc_fl(x->wq, i);
	u32 status;
	u64 off, orig;

	if (e->status)
		return;
	if ((p->opcode & 0x1f) == SV_OP_ATOMIC_ACK) {
		if (!sv_rc_op_atomic(e->opcode) || e->acked)
			return;
		sv_rc_before(x, i);
		if (!sv_rc_resolve(x, i, &status)) {
			sv_rc_fail(x, i, status);
			return;
		}
		orig = get_unaligned_be64(p->ext + 4);
		if (sv_sg_write(x->r.lsg, 0, &orig, 8))
			sv_rc_fail(x, i, SV_WC_LOC_PROT_ERR);
		else
			sv_rc_answered(x, e, 1);
		return;
	}
	/* An ATOMIC WRITE's or FLUSH's: a READ response without data */
	if (sv_rc_op_mpe(e->opcode)) {
		if ((p->opcode & 0x1f) == SV_OP_READ_ONLY && !p->paylen &&
		    !e->acked) {
			sv_rc_before(x, i);
			sv_rc_answered(x, e, 1);
		}
		return;
	}
	/* READ responses, in order only */
	if (e->opcode != SV_WR_RDMA_READ || idx != e->acked)
		return;
	off = (u64)idx * e->mtu;
	if (p->paylen != min_t(u64, e->mtu, e->len - off))
		return;
	sv_rc_before(x, i);
	if (!sv_rc_resolve(x, i, &status)) {
		sv_rc_fail(x, i, status);
		return;
	}
	if (p->paylen && sv_sg_write(x->r.lsg, off, p->payload, p->paylen))
		sv_rc_fail(x, i, SV_WC_LOC_PROT_ERR);
	else
		sv_rc_answered(x, e, idx + 1);
}

/* The queued answers, each to its WQE. */
static bool sv_rc_answers(struct sv_rc_run *x)
{
	struct sv_wire_qp *wq = x->wq;
	struct sv_wire_pkt p;
	struct sk_buff *skb;
	bool did = false;
	u32 i, idx;

	while ((skb = __skb_dequeue(&wq->resps))) {
		did = true;
		sv_wire_parse(skb, &p);
		/* Not of a WQE in flight: a late duplicate. */
		if (sv_rc_find(wq, ntohl(p.bth->apsn) & SV_BTH_PSN_MASK, &i,
			       &idx)) {
			if ((p.opcode & 0x1f) == SV_OP_ACK)
				sv_rc_aeth(x, i, idx,
					   get_unaligned_be32(p.ext) >> 24);
			else
				sv_rc_place(x, i, idx, &p);
		}
		consume_skb(skb);
	}
	return did;
}

/* ---- the send queue ---- */

/*
 * Complete the oldest WQEs in flight that are done (answered, or
 * failed: then the QP goes to ERR). True if any was.
 */
static bool sv_rc_complete(struct sv_rc_run *x, u32 *nwqes)
{
	struct sv_wire_qp *wq = x->wq;
	struct sv_rc_fl *e;
	bool did = false;
	u32 status;

	while (wq->nfl) {
		e = sv_rc_fl(wq, 0);
		status = e->status;
		if (!status && e->acked < e->npkts)
			break;
		sv_rc_copy(x, 0);
		if (sv_rc_op_rd(e->opcode))
			wq->nrd--;
		wq->fl_head = (wq->fl_head + 1) & (SV_RC_MAX_FL - 1);
		wq->nfl--;
		x->before = 0;
		if (wq->push_from)
			wq->push_from--;
		if (status)
			sv_wire_rc_forget(x->qp);
		sv_sq_complete(x->qp, x->w, x->wsize, status, status != 0,
			       status != 0);
		(*nwqes)++;
		did = true;
		if (status)
			break;
	}
	return did;
}

/*
 * The local ACK timeout or a go-back's wait ended: the oldest WQE fails
 * if the retries are spent, else the ones in flight go again from
 * their first packets not answered.
 */
static void sv_rc_timer(struct sv_rc_run *x, u64 now)
{
	struct sv_qp *qp = x->qp;
	struct sv_wire_qp *wq = x->wq;
	struct sv_rc_fl *e;
	u32 i;

	if (!wq->nfl || now < wq->deadline)
		return;
	if (!wq->resend) {
		if (!qp->retry_left) {
			sv_rc_fail(x, 0, SV_WC_RETRY_EXC_ERR);
			return;
		}
		qp->retry_left--;
		qp->retried = true;
		sv_stat_add(qp->sdev, SV_STAT_RETRIES, 1);
	}
	wq->resend = false;
	wq->retrying = true;
	wq->retry_psn = sv_rc_una(qp, wq);
	sv_stat_add(qp->sdev, SV_STAT_WIRE_RETRANSMITS, 1);
	for (i = 0; i < wq->nfl; i++) {
		e = sv_rc_fl(wq, i);
		e->sent = e->acked;
	}
	wq->push_from = 0;
	wq->deadline = now + sv_timeout_ns(qp->attr.timeout);
}

/*
 * Start the WQE in x->w (slot cons + nfl) on the wire: its record, its
 * PSNs, what the window lets go of its packets. A WQE whose buffers do
 * not resolve is in flight failed (its completion in its turn).
 */
static void sv_rc_start(struct sv_rc_run *x, u64 now)
{
	struct sv_qp *qp = x->qp;
	struct sv_wire_qp *wq = x->wq;
	u32 i = wq->nfl, status, mtu;
	struct sv_rc_fl *e = sv_rc_fl(wq, i);

	memset(e, 0, sizeof(*e));
	e->opcode = x->w->opcode;
	e->psn = qp->tx_psn;
	if (!wq->nfl) {
		wq->deadline = now + sv_timeout_ns(qp->attr.timeout);
		wq->resend = false;
		wq->retrying = false;
	}
	wq->nfl++;
	if (sv_rc_op_rd(e->opcode))
		wq->nrd++;
	x->r = (struct sv_req){ .qp = qp, .w = x->w };
	if (sv_req_local(&x->r, x->buf, &status) != SV_EXEC_DONE) {
		e->status = status;
		return;
	}
	x->cur = i;
	/* A FLUSH's range: as long as a RETH can say. */
	if (e->opcode == SV_WR_FLUSH &&
	    sv_flush_level(x->w) == SV_FLUSH_RANGE &&
	    x->w->compare_add > U32_MAX) {
		e->status = SV_WC_LOC_LEN_ERR;
		return;
	}
	mtu = min(sv_mtu_bytes(READ_ONCE(qp->sdev->active_mtu)),
		  sv_mtu_bytes(READ_ONCE(qp->attr.path_mtu)) ?: 4096);
	e->mtu = mtu;
	e->len = x->r.len;
	e->npkts = sv_rc_op_atomic(e->opcode) || sv_rc_op_mpe(e->opcode) ?
		   1 : max_t(u32, 1, DIV_ROUND_UP_ULL(e->len, mtu));
	/* A READ's responses take its PSNs: its request one packet. */
	qp->tx_psn = sv_psn_add(qp->tx_psn, e->npkts);
	sv_pace_charge(qp, e->len);
}

/*
 * May the WQE in x->w start? A local WQE runs here when nothing is in
 * flight (*ran, with its completion); false if it must wait.
 */
static bool sv_rc_may_start(struct sv_rc_run *x, bool *ran)
{
	struct sv_qp *qp = x->qp;
	struct sv_wire_qp *wq = x->wq;
	struct sv_send_wqe *w = x->w;
	enum sv_exec_result res;
	struct sv_rc_fl *last;
	u32 status;

	*ran = false;
	if (!sv_rc_op_wire(w->opcode)) {
		if (wq->nfl)
			return false;
		res = sv_exec_send(qp, w, x->buf, &status);
		if (res == SV_EXEC_RETRY) {
			x->wait = true;
			return false;
		}
		sv_sq_complete(qp, w, x->wsize, status, res == SV_EXEC_FATAL,
			       res == SV_EXEC_FATAL);
		*ran = true;
		return true;
	}
	if (wq->nfl == SV_RC_MAX_FL)
		return false;
	if ((w->send_flags & SV_SEND_FENCE) && wq->nrd)
		return false;
	if (sv_rc_op_rd(w->opcode) &&
	    wq->nrd >= max_t(u32, 1, READ_ONCE(qp->attr.max_rd_atomic)))
		return false;
	if (wq->nfl) {
		last = sv_rc_fl(wq, wq->nfl - 1);
		if (last->status || last->sent < last->npkts ||
		    sv_psn_diff(qp->tx_psn, sv_rc_una(qp, wq)) >=
		    SV_RC_WINDOW)
			return false;
	}
	/* A paced QP in debt waits, its WR not started (pace.c). */
	x->wait = sv_pace_held(qp, &qp->wait_until);
	return !x->wait;
}

/**
 * sv_wire_rc_run - a pass over the send queue of an RC QP on the wire
 * @qp: in RTS, on the wire (sv_wire_rc_on()); its engine holds sq.lock
 * @w: scratch for a WQE
 * @wsize: its bytes
 * @buf: sv_exec_buf_size() bytes of scratch memory
 * @budget: at most this many WQEs started or completed
 * @wqes: charged the WQEs started and completed
 * @bytes: charged the bytes of the WQEs started
 * @wake: lowered to when the pass wants to run again (its timer)
 * @started: counts the WQEs started (sent, or run here)
 *
 * The answers queued, the completions they make, the timer, the packets
 * the window lets go, new WQEs. True if anything happened.
 */
bool sv_wire_rc_run(struct sv_qp *qp, struct sv_send_wqe *w, u32 wsize,
		    void *buf, u32 budget, u32 *wqes, u64 *bytes, u64 *wake,
		    u64 *started)
{
	struct sv_rc_run x = { .qp = qp, .wq = qp->wire, .w = w,
			       .wsize = wsize, .buf = buf, .cur = -1 };
	struct sv_wire_qp *wq = qp->wire;
	struct sv_wq *sq = &qp->sq;
	u32 n = 0, prod, state;
	u64 len = 0, now;
	bool did, ran;

	lockdep_assert_held(&sq->lock);
	did = sv_rc_answers(&x);
	now = ktime_get_ns();
	/*
	 * Progress (packets answered) restarts the retry count, which
	 * counts timeouts without any, and the timer (unless a go-back
	 * waits); past where a retry went back to, the retry is over.
	 */
	if (x.progress) {
		if (!wq->resend)
			wq->deadline = now + sv_timeout_ns(qp->attr.timeout);
		spin_lock_bh(&qp->lock);
		qp->retry_left = qp->attr.retry_cnt;
		spin_unlock_bh(&qp->lock);
		if (wq->retrying &&
		    (!wq->nfl ||
		     sv_psn_diff(sv_rc_una(qp, wq), wq->retry_psn) > 0))
			wq->retrying = false;
	}
	did |= sv_rc_complete(&x, &n);
	state = READ_ONCE(qp->attr.qp_state);
	if (state != SV_QPS_RTS && state != SV_QPS_SQD)
		goto out;
	sv_rc_timer(&x, now);
	did |= sv_rc_complete(&x, &n);
	did |= sv_rc_push(&x);
	/* SQD: the ones in flight finish, then the owner may hear so. */
	if (state == SV_QPS_SQD) {
		if (!wq->nfl && wq->drain_notify) {
			wq->drain_notify = false;
			sv_async_event(qp->uobj.file, SV_EVENT_SQ_DRAINED,
				       qp->user_handle, &qp->events);
		}
		goto out;
	}
	while (n < budget) {
		/* Pairs with the library's release store of prod. */
		prod = smp_load_acquire(&sq->ring->prod);
		if (prod - sq->cons == wq->nfl)
			break;
		if (prod - sq->cons > sq->entries) {
			sv_qp_to_err(qp);
			did = true;
			break;
		}
		sv_rc_copy(&x, wq->nfl);
		if (!sv_rc_may_start(&x, &ran)) {
			if (x.wait)
				*wake = min(*wake, qp->wait_until);
			break;
		}
		did = true;
		n++;
		(*started)++;
		if (ran) {
			if (READ_ONCE(qp->attr.qp_state) != SV_QPS_RTS)
				break;
			continue;
		}
		sv_rc_start(&x, now);
		len += sv_rc_fl(wq, wq->nfl - 1)->len;
		sv_rc_push(&x);
		if (sv_rc_fl(wq, wq->nfl - 1)->status || len >= *bytes)
			break;
	}
	/* One that failed at its start may be the oldest. */
	did |= sv_rc_complete(&x, &n);
out:
	if (x.cur >= 0)
		sv_req_release(&x.r);
	if (x.routed)
		sv_wire_tx_release(&x.t);
	if (wq->nfl)
		*wake = min(*wake, wq->deadline);
	*wqes -= min(n, *wqes);
	*bytes -= min(len, *bytes);
	return did;
}

/**
 * sv_wire_rc_drain_later - a modify to SQD: is the SQ drained later?
 * @qp: just moved from RTS to SQD, its owner asking for SQ_DRAINED
 *
 * True if WQEs are in flight on the wire: the event comes when the last
 * of them completed (sv_wire_rc_run()). False if it is drained now.
 */
bool sv_wire_rc_drain_later(struct sv_qp *qp)
{
	bool later = false;

	mutex_lock(&qp->sq.lock);
	if (sv_wire_rc_on(qp) && qp->wire->nfl) {
		qp->wire->drain_notify = true;
		later = true;
	}
	mutex_unlock(&qp->sq.lock);
	return later;
}

/*
 * The WQEs in flight are forgotten (the QP is reset, or in ERR: the SQ
 * is flushed from its consumer index), and their answers with them.
 * Under qp->sq.lock.
 */
void sv_wire_rc_forget(struct sv_qp *qp)
{
	struct sv_wire_qp *wq = qp->wire;

	if (!wq)
		return;
	wq->nfl = 0;
	wq->nrd = 0;
	wq->push_from = 0;
	wq->resend = false;
	wq->retrying = false;
	wq->drain_notify = false;
	skb_queue_purge(&wq->resps);
}
