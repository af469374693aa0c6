// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs data path: executing one send WQE.
 *
 * The requester's engine (engine.c) does the whole operation: it resolves
 * the destination QP by number, consumes a receive WQE there if the
 * operation needs one, copies the data once from the source pages to the
 * destination pages (the MR helpers check keys, PDs, rights and bounds),
 * and pushes the responder's CQE. It returns the requester's status; the
 * engine pushes the requester's CQE.
 *
 * Errors follow the IB transport rules: a local error fails the WQE with
 * a LOC_* status and moves the requester to ERR; on RC a responder error
 * is reported to the requester as REM_* and both QPs go to ERR; UC and UD
 * silently drop what the responder cannot take. RC without a receive WQE
 * is an RNR NAK: back off for the responder's min_rnr_timer and retry,
 * rnr_retry times (7: forever). RC to a destination that does not exist
 * or is not ready: retry per timeout and retry_cnt, then RETRY_EXC_ERR.
 */
#include <linux/if_vlan.h>
#include <linux/ktime.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <net/ip.h>

#include "compat.h"
#include "exec.h"
#include "wire/wire.h"

/* Atomics are atomic against each other across QPs and devices. */
static DEFINE_SPINLOCK(sv_atomic_lock);

void sv_sg_release(struct sv_sg *sg)
{
	u32 i;

	for (i = 0; i < sg->n; i++)
		sv_mr_span_put(&sg->ent[i]);
	sg->n = 0;
}

/* Resolve n SGEs on sdev for pd with access; -errno on any bad one. */
int sv_sg_resolve(struct sv_sg *sg, struct sv_device *sdev, struct sv_pd *pd,
		  u32 access, const struct sv_sge *sges, u32 n)
{
	u32 i;
	int ret;

	sg->n = 0;
	sg->len = 0;
	for (i = 0; i < n; i++) {
		if (!sges[i].length)
			continue;
		ret = sv_mr_span_get(sdev, sges[i].lkey, pd, access,
				     sges[i].addr, sges[i].length,
				     &sg->ent[sg->n], &sg->cache);
		if (ret) {
			sv_sg_release(sg);
			return ret;
		}
		sg->n++;
		sg->len += sges[i].length;
	}
	return 0;
}

/*
 * One remote span at dqp as a one-entry list: rkey may be an MR's, an
 * indirect key's or a memory window's (mr/mw.c). len is not 0.
 */
int sv_sg_remote(struct sv_sg *sg, struct sv_qp *dqp, struct sv_pd *pd,
		 u32 access, u32 rkey, u64 addr, u64 len)
{
	int ret;

	sg->n = 0;
	sg->len = 0;
	if (len > SV_MAX_MSG_SZ)
		return -ERANGE;
	ret = sv_mr_span_get_remote(dqp, pd, rkey, access, addr, len,
				    &sg->ent[0], &sg->cache);
	if (ret)
		return ret;
	sg->n = 1;
	sg->len = len;
	return 0;
}

/* Find the entry and offset in it of byte off of the list. */
static void sv_sg_seek(const struct sv_sg *sg, u64 off, u32 *i, u64 *in)
{
	*i = 0;
	while (*i < sg->n && off >= sg->ent[*i].len) {
		off -= sg->ent[*i].len;
		(*i)++;
	}
	*in = off;
}

/*
 * A message may be 2 GiB: copies go in chunks with a chance to reschedule
 * between them, so that a non-preemptible kernel never soft-locks on one.
 */
#define SV_COPY_CHUNK	SZ_1M

/* Copy len bytes from src at soff to dst at doff: page to page. */
int sv_sg_copy_at(struct sv_sg *dst, u64 doff, struct sv_sg *src, u64 soff,
		  u64 len)
{
	u64 din, sin, n;
	u32 di, si;
	int ret;

	/* Within the first entry of each, as most messages are */
	if (dst->n && src->n && len <= SV_COPY_CHUNK &&
	    sv_span_fits(&dst->ent[0], doff, len) &&
	    sv_span_fits(&src->ent[0], soff, len))
		return sv_mr_span_copy(&dst->ent[0], doff, &src->ent[0], soff,
				       len);
	sv_sg_seek(dst, doff, &di, &din);
	sv_sg_seek(src, soff, &si, &sin);
	while (len) {
		if (di >= dst->n || si >= src->n)
			return -ERANGE;
		n = min3(len, dst->ent[di].len - din, src->ent[si].len - sin);
		n = min_t(u64, n, SV_COPY_CHUNK);
		ret = sv_mr_span_copy(&dst->ent[di], din, &src->ent[si], sin,
				      n);
		if (ret)
			return ret;
		cond_resched();
		len -= n;
		din += n;
		sin += n;
		if (din == dst->ent[di].len) {
			di++;
			din = 0;
		}
		if (sin == src->ent[si].len) {
			si++;
			sin = 0;
		}
	}
	return 0;
}

static int sv_sg_copy(struct sv_sg *dst, u64 doff, struct sv_sg *src,
		      u64 len)
{
	return sv_sg_copy_at(dst, doff, src, 0, len);
}

/* Copy len bytes of buf to dst at doff. */
int sv_sg_write(struct sv_sg *dst, u64 doff, const void *buf, u64 len)
{
	u64 din, n;
	u32 di;
	int ret;

	sv_sg_seek(dst, doff, &di, &din);
	while (len) {
		if (di >= dst->n)
			return -ERANGE;
		n = min(len, dst->ent[di].len - din);
		ret = sv_mr_span_write(&dst->ent[di], din, buf, n);
		if (ret)
			return ret;
		buf += n;
		len -= n;
		di++;
		din = 0;
	}
	return 0;
}

/*
 * Push one CQE on cq (a QP's send or recv CQ). An overrun is the CQ's
 * business (sv_cq_push raised IBV_EVENT_CQ_ERR).
 */
void sv_dp_push_cqe(struct sv_uobj *cq, struct sv_cqe *cqe, bool solicited)
{
	sv_cq_push(container_of(cq, struct sv_cq, uobj), cqe, solicited);
}

void sv_dp_push(struct sv_uobj *cq, u64 wr_id, u32 status, u32 opcode,
		u32 byte_len, u32 qpn, bool solicited)
{
	struct sv_cqe cqe = {
		.wr_id = wr_id, .status = status, .opcode = opcode,
		.byte_len = byte_len, .qp_num = qpn,
	};

	sv_dp_push_cqe(cq, &cqe, solicited);
}

/*
 * Move a QP to ERR (from any state but RESET, unless @fatal); its engine
 * flushes it. The QP may belong to another file: qp->dead, set under
 * qp->lock before the file tears down, says whether the file (and its
 * engine) are still there.
 */
static void sv_qp_err_event(struct sv_qp *qp, u32 event, bool fatal)
{
	spin_lock_bh(&qp->lock);
	/* A QP in RESET has nothing to fail: the error is not its own. */
	if (qp->dead || (qp->attr.qp_state == SV_QPS_RESET && !fatal)) {
		spin_unlock_bh(&qp->lock);
		return;
	}
	qp->attr.qp_state = SV_QPS_ERR;
	qp->attr.cur_qp_state = SV_QPS_ERR;
	/* An XRC TGT QP has no queues and no engine: its handles hear. */
	if (qp->qp_type == SV_QPT_XRC_RECV) {
		if (event)
			sv_xrc_qp_event(qp, event);
		spin_unlock_bh(&qp->lock);
		return;
	}
	WRITE_ONCE(qp->sq.ring->flags, SV_WQ_RING_ERR);
	if (qp->rq.ring)
		WRITE_ONCE(qp->rq.ring->flags, SV_WQ_RING_ERR);
	if (event)
		sv_async_event(qp->uobj.file, event, qp->user_handle,
			       &qp->events);
	sv_engine_kick_qp(qp);
	spin_unlock_bh(&qp->lock);
}

void sv_qp_to_err(struct sv_qp *qp)
{
	sv_qp_err_event(qp, 0, false);
}

/* The device is going away: every QP to ERR, its engine told at once. */
void sv_qp_fatal(struct sv_qp *qp)
{
	sv_qp_err_event(qp, 0, true);
}

/* The responder's side failed on RC: it goes to ERR and is told so. */
void sv_responder_err(struct sv_qp *dqp, bool access)
{
	if (dqp->qp_type != SV_QPT_RC && dqp->qp_type != SV_QPT_XRC_RECV)
		return;
	sv_qp_err_event(dqp, access ? SV_EVENT_QP_ACCESS_ERR : 0, false);
}

/* A snapshot, as good as one taken under qp->lock: it may change next. */
static u32 sv_qp_state(struct sv_qp *qp)
{
	return READ_ONCE(qp->attr.qp_state);
}

/* 4.096 us * 2^timeout; 0 means infinite (we still poll every second). */
u64 sv_timeout_ns(u8 timeout)
{
	if (!timeout || timeout > 31)
		return NSEC_PER_SEC;
	return 4096ULL << timeout;
}

/* IB spec table 45: the RNR NAK timer field, in microseconds. */
static const u32 sv_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* An RNR NAK timer field's wait, in ns. */
u64 sv_rnr_ns(u8 timer)
{
	return (u64)NSEC_PER_USEC * sv_rnr_us[timer & 31];
}

/*
 * Peek at the head receive WQE of wq (locked): 1 and a copy in out, 0 if
 * empty, -EIO if the ring's prod is bogus.
 */
static int sv_rq_peek(struct sv_wq *wq, struct sv_rwqe *out)
{
	/* Pairs with the library's release store of prod. */
	u32 prod = smp_load_acquire(&wq->ring->prod);
	void *slot;
	u32 n;

	if (prod == wq->cons)
		return 0;
	if (prod - wq->cons > wq->entries)
		return -EIO;
	slot = wq->wqes + (size_t)(wq->cons & (wq->entries - 1)) * wq->wqe_size;
	n = wq->wqe_size;
	if (n > sizeof(*out))
		n = sizeof(*out);
	memcpy(out, slot, n);
	return 1;
}

static void sv_rq_pop(struct sv_wq *wq)
{
	wq->cons++;
	/* The slot is the library's again (its acquire load of cons). */
	smp_store_release(&wq->ring->cons, wq->cons);
}

/*
 * The SRQ limit: raise SRQ_LIMIT_REACHED once when armed and under it.
 * An SRQ not dead under its lock has its file.
 */
static void sv_srq_check_limit(struct sv_srq *srq)
{
	u32 avail = READ_ONCE(srq->rq.ring->prod) - srq->rq.cons;

	spin_lock_bh(&srq->lock);
	if (srq->limit && avail < srq->limit && !srq->dead) {
		srq->limit = 0;
		sv_async_event(srq->uobj.file, SV_EVENT_SRQ_LIMIT_REACHED,
			       srq->user_handle, &srq->events);
	}
	spin_unlock_bh(&srq->lock);
}

/*
 * The 40 bytes a UD receive begins with, as the message's frame would
 * carry them on the wire (sv_wire_ip_hdr()): for IPv4 GIDs 20 zero
 * bytes and the IPv4 header, else the IPv6 header; each with the UDP,
 * BTH, DETH, immediate, padded payload and ICRC lengths after it.
 */
static void sv_make_grh(u8 *grh, u32 len, bool imm,
			const struct sv_ah_attr *av, const u8 sgid[16])
{
	u32 l4 = sizeof(struct udphdr) + sizeof(struct sv_bth) +
		 sizeof(struct sv_deth) + (imm ? 4 : 0) + ALIGN(len, 4) +
		 SV_ICRC_LEN;
	struct sv_wire_tx t = {
		.tclass = av->traffic_class,
		.hop_limit = av->hop_limit ?: 64,
		.flow_label = av->flow_label,
		.v6 = !ipv6_addr_v4mapped((const struct in6_addr *)sgid) ||
		      !ipv6_addr_v4mapped((const struct in6_addr *)av->dgid),
	};
	struct iphdr *ip = (struct iphdr *)(grh + SV_GRH_LEN - sizeof(*ip));

	memcpy(t.sgid, sgid, 16);
	memcpy(t.dgid, av->dgid, 16);
	memset(grh, 0, SV_GRH_LEN);
	if (t.v6) {
		sv_wire_ip_hdr(&t, grh, l4);
		return;
	}
	sv_wire_ip_hdr(&t, ip, l4);
	ip->check = ip_fast_csum(ip, ip->ihl);
}

/* Copy the request's payload into dst at doff. */
static int sv_req_payload(struct sv_req *r, struct sv_sg *dst, u64 doff)
{
	if (!r->len)
		return 0;
	if (r->lsg)
		return sv_sg_copy(dst, doff, r->lsg, r->len);
	return sv_sg_write(dst, doff, r->inl, r->len);
}

/* Copy len bytes of the payload from soff on into dst (at its start). */
int sv_req_payload_at(struct sv_req *r, u64 soff, struct sv_sg *dst,
		      u64 len)
{
	if (!len)
		return 0;
	if (r->lsg)
		return sv_sg_copy_at(dst, 0, r->lsg, soff, len);
	return sv_sg_write(dst, 0, r->inl + soff, len);
}

/* Read len bytes of the payload at off (inside it) into buf. */
int sv_req_read(struct sv_req *r, u64 off, void *buf, u64 len)
{
	u64 in, n;
	u32 i;
	int ret;

	if (!r->lsg) {
		memcpy(buf, r->inl + off, len);
		return 0;
	}
	sv_sg_seek(r->lsg, off, &i, &in);
	while (len) {
		if (i >= r->lsg->n)
			return -ERANGE;
		n = min(len, r->lsg->ent[i].len - in);
		ret = sv_mr_span_read(&r->lsg->ent[i], in, buf, n);
		if (ret)
			return ret;
		buf += n;
		len -= n;
		i++;
		in = 0;
	}
	return 0;
}

/*
 * An XRC request whose SRQ is none of the TGT QP dqp's domain (or is
 * gone): invalid, the TGT QP to ERR.
 */
static enum sv_exec_result sv_xrc_invalid(struct sv_qp *dqp, u32 *status)
{
	sv_responder_err(dqp, false);
	*status = SV_WC_REM_INV_REQ_ERR;
	return SV_EXEC_FATAL;
}

/* A receive's immediate data or invalidated key, from the request's WQE */
void sv_recv_cqe_imm(struct sv_cqe *cqe, const struct sv_send_wqe *w)
{
	if (w->opcode == SV_WR_SEND_WITH_IMM ||
	    w->opcode == SV_WR_RDMA_WRITE_WITH_IMM) {
		cqe->wc_flags |= SV_WC_F_WITH_IMM;
		cqe->imm_data = w->imm_data;
	} else if (w->opcode == SV_WR_SEND_WITH_INV) {
		cqe->wc_flags |= SV_WC_F_WITH_INV;
		cqe->imm_data = w->imm_data;
	}
}

/*
 * A SEND_WITH_INV placed: free the window it names before the completion
 * shows; false if that fails (IBA class J error). RC and UC receive
 * queues are mutex-locked (only raw ones take frames in softirq): this
 * sleeps.
 */
bool sv_req_inv(struct sv_req *r)
{
	return r->w->opcode != SV_WR_SEND_WITH_INV ||
	       !sv_mw_remote_inv(r->dqp->sdev, r->dpd, r->w->imm_data);
}

/* What a requester hears of its responder's failed receive (cqe_status). */
u32 sv_recv_fail_status(u32 cqe_status)
{
	return cqe_status == SV_WC_LOC_LEN_ERR ||
	       cqe_status == SV_WC_REM_INV_REQ_ERR ? SV_WC_REM_INV_REQ_ERR :
						     SV_WC_REM_OP_ERR;
}

/*
 * Deliver a SEND* or RDMA_WRITE_WITH_IMM to dqp: consume a receive WQE
 * (RNR if none), place the data, push the responder's CQE. A SEND to a
 * TM SRQ is tm.c's first: it may match a tagged buffer instead.
 */
enum sv_exec_result sv_deliver(struct sv_req *r, u32 *status)
{
	struct sv_qp *dqp = r->dqp, *qp = r->qp;
	struct sv_send_wqe *w = r->w;
	bool ud = qp->qp_type == SV_QPT_UD;
	bool write_imm = w->opcode == SV_WR_RDMA_WRITE_WITH_IMM;
	struct sv_uobj *cq = dqp->recv_cq;
	struct sv_srq *srq = r->xsrq;
	enum sv_tm_kind tm = SV_TM_PLAIN;
	enum sv_exec_result res;
	struct sv_cqe cqe = {};
	struct sv_rwqe *rw;
	struct sv_wq *wq;
	u64 need, off = 0;
	int ret;

	rw = r->rw;
	if (srq)		/* XRC: the request's SRQ, and its CQ */
		cq = srq->cq;
	else if (dqp->srq)
		srq = container_of(dqp->srq, struct sv_srq, uobj);
	if (srq && srq->tm)	/* a TM SRQ's CQ takes all its receives */
		cq = srq->cq;
	wq = srq ? &srq->rq : &dqp->rq;
	sv_wq_lock(wq);
	/* An XRC SRQ may have gone since it was looked up. */
	if (srq && srq->dead) {
		sv_wq_unlock(wq);
		return sv_xrc_invalid(dqp, status);
	}
	if (srq && srq->tm && !write_imm) {
		tm = sv_tm_recv(r, srq, &res, status);
		if (tm == SV_TM_DONE || tm == SV_TM_FIN) {
			sv_wq_unlock(wq);
			/* The rendezvous's data is in: the sender hears. */
			return tm == SV_TM_FIN ? sv_tm_fin(r, status) : res;
		}
	}
	ret = sv_rq_peek(wq, rw);
	if (ret < 0) {
		sv_wq_unlock(wq);
		if (!srq)
			sv_responder_err(dqp, false);
		goto remote_op_err;
	}
	if (!ret) {
		sv_wq_unlock(wq);
		if (!sv_qp_reliable(qp))
			return SV_EXEC_DONE;	/* dropped */
		if (!qp->rnr_left) {
			*status = SV_WC_RNR_RETRY_EXC_ERR;
			return SV_EXEC_FATAL;
		}
		sv_stat_add(qp->sdev, SV_STAT_RNR_NAKS, 1);
		if (qp->attr.rnr_retry != 7)
			qp->rnr_left--;
		qp->retried = true;
		qp->wait_until = ktime_get_ns() +
				 sv_rnr_ns(dqp->attr.min_rnr_timer);
		return SV_EXEC_RETRY;
	}
	/* Popped once placed or failed: a lost source page leaves it. */

	cqe.wr_id = rw->hdr.wr_id;
	cqe.qp_num = dqp->qpn;
	cqe.src_qp = r->src_qpn ?: sv_qp_wire_qpn(qp);
	cqe.opcode = write_imm ? SV_WC_RECV_RDMA_WITH_IMM :
		     tm == SV_TM_NO_TAG ? SV_WC_TM_NO_TAG :
		     tm == SV_TM_UNEXPECTED ? SV_WC_TM_RECV : SV_WC_RECV;
	sv_recv_cqe_imm(&cqe, w);
	cqe.byte_len = r->len;

	if (!write_imm) {
		need = r->len + (ud ? SV_GRH_LEN : 0);
		/* Only SGEs inside the slot were copied: bound by its size. */
		if (rw->hdr.num_sge > SV_MAX_SGE ||
		    rw->hdr.num_sge > (wq->wqe_size - sizeof(rw->hdr)) /
				      sizeof(struct sv_sge)) {
			cqe.status = SV_WC_LOC_QP_OP_ERR;
			goto resp_fail;
		}
		ret = sv_sg_resolve(r->rsg, dqp->sdev, r->dpd,
				    SV_ACCESS_LOCAL_WRITE, rw->sge,
				    rw->hdr.num_sge);
		if (ret) {
			cqe.status = SV_WC_LOC_PROT_ERR;
			goto resp_fail;
		}
		if (need > r->rsg->len) {
			sv_sg_release(r->rsg);
			cqe.status = SV_WC_LOC_LEN_ERR;
			goto resp_fail;
		}
		if (ud) {
			u8 grh[SV_GRH_LEN] __aligned(4), sgid[16];

			sv_gid_get(r->qp->sdev, r->av.sgid_index, sgid);
			sv_make_grh(grh, r->len,
				    w->opcode == SV_WR_SEND_WITH_IMM, &r->av,
				    sgid);
			ret = sv_sg_write(r->rsg, 0, grh, SV_GRH_LEN);
			off = SV_GRH_LEN;
			cqe.wc_flags |= SV_WC_F_GRH;
			cqe.byte_len += SV_GRH_LEN;
		}
		if (!ret)
			ret = sv_req_payload(r, r->rsg, off);
		sv_sg_release(r->rsg);
		if (ret == SV_ECOPY_SRC) {
			/* The sender's own page (ODP): its error only. */
			sv_wq_unlock(wq);
			*status = SV_WC_LOC_PROT_ERR;
			return SV_EXEC_FATAL;
		}
		if (ret) {
			/* The spans were checked: a length, or a lost page. */
			cqe.status = ret == -EFAULT ? SV_WC_LOC_PROT_ERR :
						      SV_WC_LOC_LEN_ERR;
			goto resp_fail;
		}
	}
	/* Placed: a SEND_WITH_INV frees its window now. */
	if (!sv_req_inv(r)) {
		cqe.status = SV_WC_REM_INV_REQ_ERR;
		goto resp_fail;
	}
	sv_rq_pop(wq);
	if (tm == SV_TM_UNEXPECTED)
		sv_tm_unexpected(srq, &cqe);
	sv_dp_push_cqe(cq, &cqe, !!(w->send_flags & SV_SEND_SOLICITED));
	if (srq)
		sv_srq_check_limit(srq);
	sv_wq_unlock(wq);
	return SV_EXEC_DONE;

resp_fail:
	sv_rq_pop(wq);
	/* As on the requester: in ERR before the error CQE shows. */
	sv_responder_err(dqp, false);
	sv_dp_push_cqe(cq, &cqe, true);
	sv_wq_unlock(wq);
	if (!sv_qp_reliable(qp))
		return SV_EXEC_DONE;
	*status = sv_recv_fail_status(cqe.status);
	return SV_EXEC_FATAL;
remote_op_err:
	if (!sv_qp_reliable(qp))
		return SV_EXEC_DONE;
	*status = SV_WC_REM_OP_ERR;
	return SV_EXEC_FATAL;
}

/* A remote access failed: RC reports it and fails both QPs; UC drops. */
static enum sv_exec_result sv_remote_access_err(struct sv_req *r, int err,
						u32 *status)
{
	if (!sv_qp_reliable(r->qp))
		return SV_EXEC_DONE;
	sv_responder_err(r->dqp, true);
	*status = err == -EINVAL ? SV_WC_REM_INV_REQ_ERR : SV_WC_REM_ACCESS_ERR;
	return SV_EXEC_FATAL;
}

static u32 sv_dqp_access(struct sv_qp *dqp)
{
	return READ_ONCE(dqp->attr.qp_access_flags);
}

static enum sv_exec_result sv_rdma(struct sv_req *r, u32 *status)
{
	struct sv_qp *dqp = r->dqp;
	struct sv_send_wqe *w = r->w;
	bool read = w->opcode == SV_WR_RDMA_READ;
	u32 need = read ? SV_ACCESS_REMOTE_READ : SV_ACCESS_REMOTE_WRITE;
	int ret;

	if (!(sv_dqp_access(dqp) & need))
		return sv_remote_access_err(r, -EACCES, status);
	if (r->len) {
		ret = sv_sg_remote(r->rsg, dqp, r->dpd, need, w->rkey,
				   w->remote_addr, r->len);
		if (ret)
			return sv_remote_access_err(r, ret, status);
		if (read)
			ret = sv_sg_copy(r->lsg, 0, r->rsg, r->len);
		else
			ret = sv_req_payload(r, r->rsg, 0);
		sv_sg_release(r->rsg);
		/* A lost page (ODP) of our own: a local error only. */
		if (ret == (read ? -EFAULT : SV_ECOPY_SRC)) {
			*status = SV_WC_LOC_PROT_ERR;
			return SV_EXEC_FATAL;
		}
		if (ret)
			return sv_remote_access_err(r, ret, status);
	}
	if (w->opcode == SV_WR_RDMA_WRITE_WITH_IMM)
		return sv_deliver(r, status);
	return SV_EXEC_DONE;
}

/**
 * sv_atomic_word - carry out an atomic on the word rsg (resolved, 8 bytes)
 * @rsg: the responder's word
 * @opcode: SV_WR_ATOMIC_CMP_AND_SWP, _FETCH_AND_ADD or _WRITE
 * @compare_add: the compare or add operand (an atomic write's value)
 * @swap: the swap operand
 * @old: the word's value before
 *
 * Atomic against every other atomic of the module. 0 or -errno (a page
 * gone).
 */
int sv_atomic_word(struct sv_sg *rsg, u32 opcode, u64 compare_add, u64 swap,
		   u64 *old)
{
	struct sv_mr_word word;
	u64 val;
	int ret;

	/* The word's page stays put (and its BHs off) until the put. */
	ret = sv_mr_word_get(&rsg->ent[0], 0, true, &word);
	if (ret) {
		__release(pages);	/* for sparse: nothing is held */
		return ret;
	}
	spin_lock(&sv_atomic_lock);
	*old = get_unaligned(word.p);
	if (opcode == SV_WR_ATOMIC_WRITE)
		val = compare_add;
	else if (opcode == SV_WR_ATOMIC_FETCH_AND_ADD)
		val = *old + compare_add;
	else
		val = *old == compare_add ? swap : *old;
	if (val != *old || opcode != SV_WR_ATOMIC_CMP_AND_SWP)
		put_unaligned(val, word.p);
	spin_unlock(&sv_atomic_lock);
	sv_mr_word_put(&word);
	return 0;
}

static enum sv_exec_result sv_atomic(struct sv_req *r, u32 *status)
{
	struct sv_qp *dqp = r->dqp;
	struct sv_send_wqe *w = r->w;
	struct sv_sg *rsg = r->rsg;
	bool awrite = w->opcode == SV_WR_ATOMIC_WRITE;
	/* An atomic write needs a write right (as rxe), the others atomic. */
	u32 need = awrite ? SV_ACCESS_REMOTE_WRITE : SV_ACCESS_REMOTE_ATOMIC;
	u64 old;
	int ret;

	if (w->remote_addr & 7)
		return sv_remote_access_err(r, -EINVAL, status);
	if (!(sv_dqp_access(dqp) & need))
		return sv_remote_access_err(r, -EACCES, status);
	ret = sv_sg_remote(rsg, dqp, r->dpd, need, w->rkey, w->remote_addr,
			   8);
	if (ret)
		return sv_remote_access_err(r, ret, status);
	ret = sv_atomic_word(rsg, w->opcode, w->compare_add, w->swap, &old);
	sv_sg_release(rsg);
	if (ret)
		return sv_remote_access_err(r, ret, status);
	if (awrite)
		return SV_EXEC_DONE;
	ret = sv_sg_write(r->lsg, 0, &old, 8);
	if (ret) {
		*status = SV_WC_LOC_PROT_ERR;
		return SV_EXEC_FATAL;
	}
	return SV_EXEC_DONE;
}

/*
 * An RDMA FLUSH (SV_WR_FLUSH, checked by sv_flush_wqe_ok()): the
 * responder's QP must grant its types' flush rights, its MR too (mr.c).
 */
static enum sv_exec_result sv_flush(struct sv_req *r, u32 *status)
{
	struct sv_send_wqe *w = r->w;
	u32 need = sv_flush_access(sv_flush_type(w));
	int ret;

	if ((sv_dqp_access(r->dqp) & need) != need)
		return sv_remote_access_err(r, -EACCES, status);
	ret = sv_mr_flush(r->dqp, r->dpd, w->rkey, need, w->remote_addr,
			  w->compare_add, sv_flush_level(w) == SV_FLUSH_MR);
	if (ret)
		return sv_remote_access_err(r, ret, status);
	return SV_EXEC_DONE;
}

/* A FLUSH WR's own fields: a placement type, a selectivity, no data. */
static bool sv_flush_wqe_ok(const struct sv_send_wqe *w)
{
	return sv_flush_kind_ok(sv_flush_type(w), sv_flush_level(w)) &&
	       !(w->swap >> 16) && !w->num_sge &&
	       !(w->send_flags & SV_SEND_INLINE);
}

static bool sv_qp_op_ok(u32 qp_type, u32 op)
{
	switch (op) {
	case SV_WR_SEND:
	case SV_WR_SEND_WITH_IMM:
		return true;
	case SV_WR_RDMA_WRITE:
	case SV_WR_RDMA_WRITE_WITH_IMM:
	case SV_WR_SEND_WITH_INV:
		return qp_type != SV_QPT_UD;
	case SV_WR_RDMA_READ:
	case SV_WR_ATOMIC_CMP_AND_SWP:
	case SV_WR_ATOMIC_FETCH_AND_ADD:
	case SV_WR_ATOMIC_WRITE:
	case SV_WR_FLUSH:
		return qp_type == SV_QPT_RC || qp_type == SV_QPT_DCI ||
		       qp_type == SV_QPT_XRC_SEND;
	case SV_WR_LOCAL_INV:
		return qp_type == SV_QPT_RC || qp_type == SV_QPT_UC ||
		       qp_type == SV_QPT_DCI || qp_type == SV_QPT_XRC_SEND;
	case SV_WR_BIND_MW:	/* as mlx5: RC, UC and XRC INI */
		return qp_type == SV_QPT_RC || qp_type == SV_QPT_UC ||
		       qp_type == SV_QPT_XRC_SEND;
	case SV_WR_UMR:		/* as mlx5: RC QPs only */
		return qp_type == SV_QPT_RC;
	default:
		return false;
	}
}

static bool sv_state_can_recv(u32 s)
{
	return s == SV_QPS_RTR || s == SV_QPS_RTS || s == SV_QPS_SQD ||
	       s == SV_QPS_SQE;
}

/*
 * Is qp the peer dqp is connected to? An RC or UC QP takes messages only
 * from the QP number and GID its own address vector names, as a real
 * connection does: anybody else's message is dropped, counted on dqp's
 * device, and never touches dqp's queues, memory or state.
 */
static bool sv_dest_is_peer(struct sv_qp *qp, struct sv_qp *dqp)
{
	u8 sgid[16];
	u32 sgid_index;
	bool ok;

	spin_lock_bh(&qp->lock);
	sgid_index = qp->attr.ah_attr.sgid_index;
	spin_unlock_bh(&qp->lock);
	sv_gid_get(qp->sdev, sgid_index, sgid);
	spin_lock_bh(&dqp->lock);
	ok = dqp->attr.dest_qp_num == qp->qpn &&
	     !memcmp(dqp->attr.ah_attr.dgid, sgid, sizeof(sgid));
	spin_unlock_bh(&dqp->lock);
	if (!ok)
		sv_stat_add(dqp->sdev, SV_STAT_RX_PEER_DROPS, 1);
	return ok;
}

/* The QP type that takes qp's messages */
static u32 sv_dest_type(const struct sv_qp *qp)
{
	return qp->qp_type == SV_QPT_DCI ? SV_QPT_DCT :
	       qp->qp_type == SV_QPT_XRC_SEND ? SV_QPT_XRC_RECV :
	       qp->qp_type;
}

/* Is dqp, of the right type for qp, alive and in a state to receive? */
static bool sv_dest_ready(const struct sv_qp *qp, struct sv_qp *dqp)
{
	return dqp->qp_type == sv_dest_type(qp) && !READ_ONCE(dqp->dead) &&
	       sv_state_can_recv(sv_qp_state(dqp));
}

/* May dqp take r's message? (type, state, the peer, Q_Key or DC key) */
static bool sv_dest_ok(struct sv_req *r, struct sv_qp *dqp)
{
	struct sv_qp *qp = r->qp;
	u32 want = sv_dest_type(qp);
	u32 qkey;
	bool ok;

	if (!sv_dest_ready(qp, dqp))
		return false;
	if (want == SV_QPT_DCT)
		return sv_dc_key_ok(r->w, dqp);
	/* A SOURCE_QPN QP receives through flow steering only. */
	if (dqp->create_flags & SV_QP_CREATE_SOURCE_QPN)
		return false;
	if (qp->qp_type != SV_QPT_UD)
		return sv_dest_is_peer(qp, dqp);
	qkey = r->w->remote_qkey;
	if (qkey & SV_QKEY_CONTROLLED) {
		spin_lock_bh(&qp->lock);
		qkey = qp->attr.qkey;
		spin_unlock_bh(&qp->lock);
	}
	spin_lock_bh(&dqp->lock);
	ok = dqp->attr.qkey == qkey;
	spin_unlock_bh(&dqp->lock);
	return ok;
}

/*
 * A connected QP's destination as the last message found it, if no route
 * has changed since (sv_route_gen()): referenced, or NULL. *gen is the
 * generation now, read before any lookup that would refill the cache.
 * Only a peer that passed sv_dest_ok() is cached, and what that checked
 * beyond sv_dest_ready() changes only with a modify or a GID, which bump
 * the generation. The pointer holds no reference: a QP leaving its table
 * bumps the generation before its memory goes after a grace period, so
 * an unchanged generation read under RCU means it is still there.
 * Under qp->sq.lock.
 */
static struct sv_qp *sv_dest_cached(struct sv_qp *qp, u64 *gen)
{
	struct sv_qp *dqp = NULL;

	rcu_read_lock();
	*gen = sv_route_gen();
	if (qp->dest_cache && qp->dest_gen == *gen &&
	    kref_get_unless_zero(&qp->dest_cache->uobj.ref))
		dqp = qp->dest_cache;
	rcu_read_unlock();
	return dqp;
}

/*
 * Find the destination QP: referenced and ready to receive, NULL if there
 * is none that may take the message, ERR_PTR(-EINVAL) for a bad AH. A UD
 * send to the multicast QPN leaves the AH's GID in r->mgid.
 */
static struct sv_qp *sv_dest_qp(struct sv_req *r)
{
	struct sv_qp *qp = r->qp, *dqp;
	struct sv_send_wqe *w = r->w;
	struct sv_uobj *ah;
	bool local;
	u64 gen = 0;
	u32 dqpn;

	if (qp->qp_type == SV_QPT_UD || qp->qp_type == SV_QPT_DCI) {
		ah = sv_uobj_get(qp->uobj.file, w->ah_handle, SV_OBJ_AH);
		if (IS_ERR(ah))
			return ERR_PTR(-EINVAL);
		r->av = container_of(ah, struct sv_ah, uobj)->attr;
		memcpy(r->mgid, r->av.dgid, sizeof(r->mgid));
		sv_uobj_put(ah);
		dqpn = w->remote_qpn & SV_QPN_MASK;
		if (dqpn == SV_QPN_MASK && qp->qp_type == SV_QPT_UD)
			return NULL;	/* multicast: sv_multicast() */
	} else {
		/* Connected over the wire at RTR (wire/qp.c) */
		if (qp->wire && qp->wire->on) {
			r->wire = true;
			return NULL;
		}
		/* The engine's copy, under qp->sq.lock like this. */
		dqpn = qp->dest_qpn;
		memcpy(r->mgid, qp->dest_gid, sizeof(r->mgid));
		dqp = sv_dest_cached(qp, &gen);
		if (dqp) {
			if (sv_dest_ready(qp, dqp))
				return dqp;
			sv_qp_put(dqp);
			return NULL;
		}
	}
	dqp = sv_qp_route(qp->sdev, r->mgid, dqpn, &local);
	r->wire = !local;
	if (!dqp)
		return NULL;
	if (!sv_dest_ok(r, dqp)) {
		sv_qp_put(dqp);
		return NULL;
	}
	if (gen) {
		qp->dest_cache = dqp;
		qp->dest_gen = gen;
	}
	return dqp;
}

/*
 * The responder's PD: its QP's, or for an XRC TGT QP that of the XRC SRQ
 * the request names (w->remote_qpn), which must be of the TGT QP's
 * domain: else the request is invalid and the TGT QP goes to ERR.
 */
static enum sv_exec_result sv_dest_pd(struct sv_req *r, u32 *status)
{
	struct sv_qp *dqp = r->dqp;

	if (dqp->qp_type != SV_QPT_XRC_RECV) {
		r->dpd = sv_qp_pd(dqp);
		return SV_EXEC_DONE;
	}
	r->xsrq = sv_xsrq_get(dqp, r->w->remote_qpn & SV_QPN_MASK);
	if (!r->xsrq)
		return sv_xrc_invalid(dqp, status);
	r->dpd = container_of(r->xsrq->pd, struct sv_pd, uobj);
	return SV_EXEC_DONE;
}

/*
 * A UD send to the multicast QPN: every QP of the device attached to the
 * AH's group, and the group on the wire if the device has a netdev.
 */
static enum sv_exec_result sv_multicast(struct sv_req *r, u32 *status)
{
	struct sv_qp *qps[SV_MAX_MCAST_QP_ATTACH];
	int i, n;

	n = sv_mcast_qps(r->qp->sdev, r->mgid, qps, ARRAY_SIZE(qps));
	for (i = 0; i < n; i++) {
		/* BLOCK_SELF_MCAST_LB: not back to the QP that sent it */
		if (qps[i] == r->qp &&
		    (r->qp->create_flags & SV_QP_CREATE_BLOCK_SELF_MC_LB)) {
			sv_qp_put(qps[i]);
			continue;
		}
		if (sv_dest_ok(r, qps[i])) {
			r->dqp = qps[i];
			r->dpd = sv_qp_pd(qps[i]);
			sv_deliver(r, status);	/* UD: never fatal */
		}
		sv_qp_put(qps[i]);
	}
	r->dqp = NULL;
	if (!READ_ONCE(r->qp->sdev->ndev))
		return SV_EXEC_DONE;
	return sv_wire_ud_send(r, status);
}

/* The scratch memory sv_exec_send() works in: one per engine. */
struct sv_exec_buf {
	/* the responder's, the local SGEs, a tagged buffer (tm.c) */
	struct sv_sg sg[3];
	struct sv_rwqe rw;
};

size_t sv_exec_buf_size(void)
{
	return sizeof(struct sv_exec_buf);
}

/*
 * An engine's scratch keeps the MRs it takes spans of entered between
 * WQEs (struct sv_mr_cache) until sv_exec_buf_drop(), which it calls at
 * the end of each pass.
 */
void sv_exec_buf_keep(void *buf)
{
	struct sv_exec_buf *b = buf;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(b->sg); i++)
		b->sg[i].cache.keep = true;
}

void sv_exec_buf_drop(void *buf)
{
	struct sv_exec_buf *b = buf;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(b->sg); i++)
		sv_mr_cache_drop(&b->sg[i].cache);
}

/* qp's pending FIN (tm.c), in buf (sv_exec_buf_size() bytes). */
enum sv_exec_result sv_exec_tm_fin(struct sv_qp *qp, void *buf, u32 *status)
{
	struct sv_exec_buf *b = buf;

	return sv_tm_fin_resume(qp, &b->sg[0], &b->rw, status);
}

/**
 * sv_req_local - the local side of a send WQE, in @buf's scratch
 * @r: the request: its qp and w (a private copy) set; the rest is filled
 * @buf: sv_exec_buf_size() bytes of scratch memory
 * @status: the requester's status when the result is SV_EXEC_FATAL
 *
 * Its inline data, or its local SGEs resolved (r->lsg, held until
 * sv_req_release()), and its length checked: SV_EXEC_DONE, or
 * SV_EXEC_FATAL with nothing held.
 */
enum sv_exec_result sv_req_local(struct sv_req *r, void *buf, u32 *status)
{
	struct sv_exec_buf *b = buf;
	struct sv_send_wqe *w = r->w;
	struct sv_qp *qp = r->qp;
	struct sv_sge *sges = (struct sv_sge *)(w + 1);
	u32 access = 0;

	*status = SV_WC_SUCCESS;
	r->rsg = &b->sg[0];
	r->tsg = &b->sg[2];
	r->rw = &b->rw;
	if (w->opcode == SV_WR_FLUSH) {
		/* No data: its range and kind travel in the WQE. */
		if (!sv_flush_wqe_ok(w))
			goto op_err;
	} else if (w->opcode == SV_WR_ATOMIC_WRITE) {
		/* Its 8 bytes travel in the WQE: no SGE, no inline data. */
		if (w->num_sge || (w->send_flags & SV_SEND_INLINE))
			goto op_err;
		r->len = 8;
	} else if (w->send_flags & SV_SEND_INLINE) {
		if (w->inline_len > qp->cap.max_inline_data ||
		    w->opcode == SV_WR_RDMA_READ ||
		    w->opcode == SV_WR_ATOMIC_CMP_AND_SWP ||
		    w->opcode == SV_WR_ATOMIC_FETCH_AND_ADD)
			goto op_err;
		r->inl = sges;
		r->len = w->inline_len;
	} else {
		if (w->num_sge > qp->cap.max_send_sge)
			goto op_err;
		if (w->opcode == SV_WR_RDMA_READ ||
		    w->opcode == SV_WR_ATOMIC_CMP_AND_SWP ||
		    w->opcode == SV_WR_ATOMIC_FETCH_AND_ADD)
			access = SV_ACCESS_LOCAL_WRITE;
		if (sv_sg_resolve(&b->sg[1], qp->sdev, sv_qp_pd(qp), access,
				  sges, w->num_sge)) {
			*status = SV_WC_LOC_PROT_ERR;
			return SV_EXEC_FATAL;
		}
		r->lsg = &b->sg[1];
		r->len = r->lsg->len;
	}
	if (r->len > SV_MAX_MSG_SZ ||
	    ((w->opcode == SV_WR_ATOMIC_CMP_AND_SWP ||
	      w->opcode == SV_WR_ATOMIC_FETCH_AND_ADD) && r->len != 8) ||
	    (qp->qp_type == SV_QPT_UD &&
	     r->len > sv_mtu_bytes(SV_PORT_MAX_MTU))) {
		sv_req_release(r);
		*status = SV_WC_LOC_LEN_ERR;
		return SV_EXEC_FATAL;
	}
	return SV_EXEC_DONE;
op_err:
	*status = SV_WC_LOC_QP_OP_ERR;
	return SV_EXEC_FATAL;
}

/* What sv_req_local() holds. */
void sv_req_release(struct sv_req *r)
{
	if (r->lsg)
		sv_sg_release(r->lsg);
	r->lsg = NULL;
}

/**
 * sv_exec_send - execute the send WQE w (a private copy) of qp
 * @qp: an RTS (or SQD finishing) QP; its engine holds qp->sq.lock
 * @w: the WQE, copied out of the ring; the SGEs or inline data follow it
 * @buf: sv_exec_buf_size() bytes of scratch memory
 * @status: the requester's status when the result is SV_EXEC_FATAL
 */
enum sv_exec_result sv_exec_send(struct sv_qp *qp, struct sv_send_wqe *w,
				 void *buf, u32 *status)
{
	struct sv_exec_buf *b = buf;
	enum sv_exec_result res;
	struct sv_req r = { .qp = qp, .w = w };

	/* A raw QP sends frames: steer/tx.c. */
	if (qp->qp_type == SV_QPT_RAW_PACKET)
		return sv_tx_send(qp, w, &b->sg[1], status);
	*status = SV_WC_SUCCESS;
	if (!sv_qp_op_ok(qp->qp_type, w->opcode)) {
		*status = SV_WC_LOC_QP_OP_ERR;
		return SV_EXEC_FATAL;
	}
	/* Local operations on windows (mr/mw.c) and indirect keys (mkey.c) */
	if (w->opcode == SV_WR_BIND_MW) {
		*status = sv_mw_bind(qp, w);
		return *status ? SV_EXEC_FATAL : SV_EXEC_DONE;
	}
	if (w->opcode == SV_WR_UMR || w->opcode == SV_WR_LOCAL_INV) {
		*status = sv_mkey_exec(qp, w);
		return *status ? SV_EXEC_FATAL : SV_EXEC_DONE;
	}
	res = sv_req_local(&r, buf, status);
	if (res != SV_EXEC_DONE)
		return res;

	r.dqp = sv_dest_qp(&r);
	if (IS_ERR(r.dqp)) {
		*status = SV_WC_LOC_QP_OP_ERR;
		res = SV_EXEC_FATAL;
		goto out_lsg;
	}
	/*
	 * A GID no device here holds: RoCE v2 out of the netdev, for UD,
	 * and for UC and RC QPs that were connected over the wire at RTR
	 * (wire/qp.c). DC has no wire transport: nobody is there.
	 */
	if (!r.dqp && r.wire &&
	    (qp->qp_type == SV_QPT_UD || (qp->wire && qp->wire->on))) {
		if (qp->qp_type == SV_QPT_UD) {
			res = sv_wire_ud_send(&r, status);
		} else if (qp->qp_type == SV_QPT_UC) {
			res = sv_wire_uc_send(&r, status);
		} else {
			/* RC: what rc_req.c does not put on the wire, yet */
			*status = SV_WC_LOC_QP_OP_ERR;
			res = SV_EXEC_FATAL;
		}
		goto out_lsg;
	}
	if (!r.dqp) {
		if (qp->qp_type == SV_QPT_UD &&
		    (w->remote_qpn & SV_QPN_MASK) == SV_QPN_MASK)
			res = sv_multicast(&r, status);
		if (!sv_qp_reliable(qp))
			goto out_lsg;		/* nobody there: dropped */
		if (!qp->retry_left) {
			*status = SV_WC_RETRY_EXC_ERR;
			res = SV_EXEC_FATAL;
			goto out_lsg;
		}
		qp->retry_left--;
		qp->retried = true;
		sv_stat_add(qp->sdev, SV_STAT_RETRIES, 1);
		qp->wait_until = ktime_get_ns() + sv_timeout_ns(qp->attr.timeout);
		res = SV_EXEC_RETRY;
		goto out_lsg;
	}

	res = sv_dest_pd(&r, status);
	if (res != SV_EXEC_DONE)
		goto out_dqp;
	switch (w->opcode) {
	case SV_WR_SEND:
	case SV_WR_SEND_WITH_IMM:
	case SV_WR_SEND_WITH_INV:
		res = sv_deliver(&r, status);
		break;
	case SV_WR_RDMA_WRITE:
	case SV_WR_RDMA_WRITE_WITH_IMM:
	case SV_WR_RDMA_READ:
		res = sv_rdma(&r, status);
		break;
	case SV_WR_FLUSH:
		res = sv_flush(&r, status);
		break;
	default:
		res = sv_atomic(&r, status);
		break;
	}
	if (res == SV_EXEC_DONE && !*status) {
		/* One message each way; counted on each end's device. */
		sv_stat_add(qp->sdev, SV_STAT_TX_PKTS, 1);
		sv_stat_add(qp->sdev, SV_STAT_TX_BYTES, r.len);
		sv_stat_add(r.dqp->sdev, SV_STAT_RX_PKTS, 1);
		sv_stat_add(r.dqp->sdev, SV_STAT_RX_BYTES, r.len);
	}
	if (r.xsrq)
		sv_uobj_put(&r.xsrq->uobj);
out_dqp:
	sv_qp_put(r.dqp);
out_lsg:
	sv_req_release(&r);
	return res;
}

/* The receive queue of qp's receives: its SRQ's (*srq set) or its own. */
static struct sv_wq *sv_qp_recv_wq(struct sv_qp *qp, struct sv_srq **srq)
{
	*srq = NULL;
	if (!qp->srq)
		return &qp->rq;
	*srq = container_of(qp->srq, struct sv_srq, uobj);
	return &(*srq)->rq;
}

/*
 * Take the head receive WQE of qp (its SRQ's) for a message whose
 * packets come one by one (wire/): a copy in rw, its slot the library's
 * again. 1 if taken, 0 if there is none, -EINVAL if its SGE count is
 * bogus (taken: the caller completes it with LOC_QP_OP_ERR).
 */
int sv_rq_take(struct sv_qp *qp, struct sv_rwqe *rw)
{
	struct sv_srq *srq;
	struct sv_wq *wq = sv_qp_recv_wq(qp, &srq);
	int ret;

	sv_wq_lock(wq);
	if (!wq->ring || sv_rq_peek(wq, rw) <= 0) {
		sv_wq_unlock(wq);
		return 0;
	}
	ret = rw->hdr.num_sge > SV_MAX_SGE ||
	      rw->hdr.num_sge > (wq->wqe_size - sizeof(rw->hdr)) /
				sizeof(struct sv_sge) ? -EINVAL : 1;
	sv_rq_pop(wq);
	if (srq)
		sv_srq_check_limit(srq);
	sv_wq_unlock(wq);
	return ret;
}

/**
 * sv_recv_chunks - write a frame's pieces into the next receive WQE of qp
 * @qp: a QP able to receive, not dead: its engine holds qp->sq.lock, or
 *	the receiving softirq qp->lock
 * @c: the pieces, in order
 * @n: how many
 * @cqe: the completion to push, but for wr_id, qp_num and status; its
 *	byte_len is the pieces' total (0, with wc_flags and cvlan, on error)
 * @solicited: the message asked for a solicited event
 * @ts: its arrival
 * @buf: sv_exec_buf_size() bytes of scratch memory
 *
 * Returns false if the frame was dropped: no receive WQE (counted by the
 * caller), or an ODP page not present (counted here; the WQE is kept for
 * the next one, as a NIC drops while it serves a receive buffer's page
 * fault). True if a completion was pushed: cqe->status says how it went.
 */
bool sv_recv_chunks(struct sv_qp *qp, const struct sv_chunk *c, u32 n,
		    struct sv_cqe *cqe, bool solicited,
		    const struct sv_cq_stamp *ts, void *buf)
{
	struct sv_exec_buf *b = buf;
	struct sv_rwqe *rw = &b->rw;
	struct sv_sg *sg = &b->sg[0];
	struct sv_srq *srq;
	struct sv_wq *wq = sv_qp_recv_wq(qp, &srq);
	u32 off = 0, i;
	int ret = 0;

	sv_wq_lock(wq);
	if (!wq->ring || sv_rq_peek(wq, rw) <= 0) {
		sv_wq_unlock(wq);
		return false;
	}
	cqe->wr_id = rw->hdr.wr_id;
	cqe->qp_num = qp->qpn;
	cqe->status = SV_WC_SUCCESS;
	if (rw->hdr.num_sge > SV_MAX_SGE ||
	    rw->hdr.num_sge > (wq->wqe_size - sizeof(rw->hdr)) /
			      sizeof(struct sv_sge)) {
		cqe->status = SV_WC_LOC_QP_OP_ERR;
		goto push;
	}
	ret = sv_sg_resolve(sg, qp->sdev, sv_qp_pd(qp), SV_ACCESS_LOCAL_WRITE,
			    rw->sge, rw->hdr.num_sge);
	if (ret) {
		cqe->status = SV_WC_LOC_PROT_ERR;
		goto push;
	}
	/* No faults here (softirq, qp->lock): an ODP page not present is -EAGAIN. */
	for (i = 0; i < sg->n; i++)
		sg->ent[i].nofault = true;
	if (cqe->byte_len > sg->len) {
		cqe->status = SV_WC_LOC_LEN_ERR;
		goto release;
	}
	for (i = 0; i < n && !ret; i++) {
		ret = sv_sg_write(sg, off, c[i].p, c[i].len);
		off += c[i].len;
	}
	if (ret == -EAGAIN) {
		sv_sg_release(sg);
		sv_wq_unlock(wq);
		sv_stat_add(qp->sdev, SV_STAT_RX_ODP_DROPS, 1);
		return false;
	}
	if (ret)
		cqe->status = ret == -EFAULT ? SV_WC_LOC_PROT_ERR :
					      SV_WC_LOC_LEN_ERR;
release:
	sv_sg_release(sg);
push:
	sv_rq_pop(wq);
	if (cqe->status) {
		cqe->byte_len = 0;
		cqe->wc_flags = 0;
		cqe->cvlan = 0;
	}
	sv_cq_push_stamped(container_of(qp->recv_cq, struct sv_cq, uobj), cqe,
			   solicited, ts);
	if (srq)
		sv_srq_check_limit(srq);
	sv_wq_unlock(wq);
	return true;
}

/**
 * sv_exec_recv_frame - place one steered frame in a receive WQE of qp
 * @qp: a RAW_PACKET or UD QP able to receive (or a WQ's shadow QP), not
 *	dead: its engine holds qp->sq.lock, or the receiving softirq
 *	qp->lock (steer/rx.c)
 * @skb: the frame (data at the network header; the VLAN tag, if any, in
 *	the skb): it lands from the MAC header on, its tag put back unless
 *	the queue strips it, its FCS after it if the queue asks
 *	(sv_rx_frame_prep())
 * @m: the flow's tag, what the queue asks for (SV_RX_*), the arrival time
 * @buf: sv_exec_buf_size() bytes of scratch memory
 *
 * A UD QP's buffer starts with the 40 bytes of a GRH, left zero. Returns
 * false if the frame was dropped: no receive WQE (counted by the caller),
 * or no memory to linearize it.
 */
bool sv_exec_recv_frame(struct sv_qp *qp, struct sk_buff *skb,
			const struct sv_rx_meta *m, void *buf)
{
	static const u8 grh[SV_GRH_LEN];
	bool ud = qp->qp_type == SV_QPT_UD;
	struct sv_cqe cqe = { .opcode = SV_WC_RECV };
	struct sv_rx_frame fr;
	struct sv_chunk c[5];
	u32 n = 0;

	if (sv_rx_frame_prep(skb, m->flags, &fr))
		return false;
	if (ud)
		c[n++] = (struct sv_chunk){ grh, SV_GRH_LEN };
	/* The MAC addresses, the tag the core took out, the rest, the FCS. */
	c[n++] = (struct sv_chunk){ fr.mac, 2 * ETH_ALEN };
	c[n++] = (struct sv_chunk){ fr.vhdr, fr.vlen };
	c[n++] = (struct sv_chunk){ fr.mac + 2 * ETH_ALEN,
				    fr.maclen - 2 * ETH_ALEN + skb->len };
	c[n++] = (struct sv_chunk){ &fr.fcs, fr.fcs_len };
	cqe.flow_tag = m->tag;
	cqe.byte_len = fr.len + (ud ? SV_GRH_LEN : 0);
	cqe.cvlan = fr.cvlan;
	cqe.wc_flags = fr.wc_flags;
	if (!sv_recv_chunks(qp, c, n, &cqe, false, &m->ts, buf))
		return false;
	if (!cqe.status) {
		sv_stat_add(qp->sdev, SV_STAT_RX_PKTS, 1);
		sv_stat_add(qp->sdev, SV_STAT_RX_BYTES, fr.wire_len);
	}
	return true;
}
