// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs data path: posting work requests into the rings the kernel
 * maps for each QP and SRQ, and the doorbell.
 *
 * The ring layout and the memory-ordering contract are in
 * uapi/softverbs-abi.h. Posting writes WQEs into free slots, publishes
 * them with a release store of prod, then (full fence) looks at the
 * doorbell page: only a sleeping engine (SV_DB_NEED_WAKEUP) costs a
 * syscall. Posting receives makes none, unless the QP is in the error
 * state and its engine sleeps (the engine must flush what was posted).
 *
 * RAW_PACKET QPs: a send is one Ethernet frame; IBV_SEND_IP_CSUM asks the
 * kernel to fill in its checksums, and IBV_WR_TSO (a QP created with
 * max_tso_header) carries a header in the WQE (struct sv_send_tso) and a
 * payload in SGEs that the kernel cuts into segments (kernel/steer/tx.c).
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#include "sv_verbs.h"
#include "sv_private.h"

static void *sv_map(struct ibv_context *ctx, uint64_t off, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ctx->cmd_fd, off);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * The doorbell page, with hints (uapi: SV_MAP_DOORBELL_HINTS): each post
 * names its QP, so the engine runs only the QPs posted to. A kernel
 * without them refuses the flag: the page alone then.
 */
static int sv_db_map(struct ibv_context *ctx)
{
	struct sv_context *c = to_svctx(ctx);
	struct sv_map_doorbell m = {
		.size = sizeof(m), .flags = SV_MAP_DOORBELL_HINTS,
	};
	void *p;
	int ret;

	if (__atomic_load_n(&c->db, __ATOMIC_ACQUIRE))
		return 0;
	/* One mapping, its hint pointer set before it is seen. */
	pthread_mutex_lock(&c->maps_lock);
	ret = 0;
	if (c->db)
		goto out;
	ret = sv_cmd(ctx, SV_IOC_MAP_DOORBELL, &m);
	if (ret == EINVAL) {
		m.flags = 0;
		ret = sv_cmd(ctx, SV_IOC_MAP_DOORBELL, &m);
	}
	if (ret)
		goto out;
	p = sv_map(ctx, m.offset, m.len);
	if (!p) {
		ret = errno;
		goto out;
	}
	if ((m.flags & SV_MAP_DOORBELL_HINTS) &&
	    m.len >= SV_DB_HINT_OFFSET + SV_DB_SLOTS / 8)
		c->hint = (__u64 *)((char *)p + SV_DB_HINT_OFFSET);
	c->db_len = m.len;
	__atomic_store_n(&c->db, p, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&c->maps_lock);
	return ret;
}

/*
 * Name the QP in slot to the engine (uapi: SV_MAP_DOORBELL_HINTS): its
 * bit, then the summary's; each only if not set already. True if it set
 * one (a store the caller's next load must wait for).
 */
static bool sv_hint(struct sv_context *c, uint32_t slot)
{
	__u64 *word, bit, sbit;
	__u64 *sum;
	bool set = false;

	if (!c->hint || slot >= SV_DB_SLOTS)
		return false;
	word = &c->hint[slot / 64];
	bit = 1ULL << (slot % 64);
	if (!(__atomic_load_n(word, __ATOMIC_RELAXED) & bit)) {
		__atomic_fetch_or(word, bit, __ATOMIC_SEQ_CST);
		set = true;
	}
	sum = &c->db->hint_sum[slot / (64 * 64)];
	sbit = 1ULL << (slot / 64 % 64);
	if (!(__atomic_load_n(sum, __ATOMIC_RELAXED) & sbit)) {
		__atomic_fetch_or(sum, sbit, __ATOMIC_SEQ_CST);
		set = true;
	}
	return set;
}

/*
 * A ring that names the QP in slot (SV_RING_QP): the kernel runs it
 * alone, with no hint bit to take. False if this kernel has no such
 * ring (it said EINVAL once): the caller names the QP by its bits.
 */
static bool sv_ring_qp(struct ibv_context *ctx, uint32_t slot)
{
	struct sv_context *c = to_svctx(ctx);
	struct sv_ring_doorbell d = {
		.size = sizeof(d), .flags = SV_RING_QP, .qp_slot = slot,
	};

	if (!c->hint || slot >= SV_DB_SLOTS ||
	    __atomic_load_n(&c->no_ring_qp, __ATOMIC_RELAXED))
		return false;
	if (sv_cmd(ctx, SV_IOC_DOORBELL, &d) != EINVAL)
		return true;
	__atomic_store_n(&c->no_ring_qp, true, __ATOMIC_RELAXED);
	return false;
}

/*
 * Set a flag word that another side clears (the kernel, a flushing
 * thread), unless it is set: a post then leaves its cache line shared.
 */
static void sv_mark(uint32_t *w)
{
	if (!__atomic_load_n(w, __ATOMIC_RELAXED))
		__atomic_store_n(w, 1, __ATOMIC_RELEASE);
}

/*
 * Leave the ring of a post to the QP in slot to the next poll (uapi:
 * SV_DB_DEFER): its bits name it, then the flags are looked at again
 * (the engine clears SV_DB_DEFER, then looks at the bits). True if no
 * ring is needed: deferred, or the engine polls and sees the bits.
 */
static bool sv_defer(struct sv_context *c, uint32_t slot)
{
	uint32_t flags;

	if (sv_hint(c, slot))
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	flags = __atomic_load_n(&c->db->flags, __ATOMIC_RELAXED);
	if (!(flags & SV_DB_NEED_WAKEUP))
		return true;
	if (!(flags & SV_DB_DEFER))
		return false;
	sv_mark(&c->db->defer);
	sv_mark(&c->deferred);
	return true;
}

/*
 * nsig signaled WRs (or, sq_sig_all, every one) went to qp. True if one
 * posted before them is not polled yet: its poll is to come.
 */
static bool sv_sig_posted(struct sv_qp *qp, uint32_t nsig)
{
	struct ibv_cq *send_cq = qp->qpx.qp_base.send_cq;
	struct sv_cq *cq;
	int64_t out;

	if (!send_cq)
		return false;
	cq = to_svcq(send_cq);
	out = __atomic_load_n(&cq->sig_out, __ATOMIC_RELAXED);
	/* Errors of unsignaled WRs took it below: start again from none. */
	if (out < 0)
		__atomic_compare_exchange_n(&cq->sig_out, &out, 0, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	if (nsig)
		__atomic_fetch_add(&cq->sig_out, nsig, __ATOMIC_RELAXED);
	return out > 0;
}

/*
 * Posts left their rings to this call (sv_defer()): one ring, a pass over
 * the QPs their bits name.
 */
void sv_db_flush(struct ibv_context *ctx)
{
	struct sv_context *c = to_svctx(ctx);
	struct sv_ring_doorbell d = { .size = sizeof(d) };

	if (__atomic_load_n(&c->deferred, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&c->deferred, 0, __ATOMIC_ACQ_REL))
		sv_cmd(ctx, SV_IOC_DOORBELL, &d);
}

/*
 * After a post's prod: the QP in slot (or SV_DB_NO_SLOT) has work. With
 * defer, a poll is to come (its send CQ has a signaled completion
 * outstanding): the post may leave its ring to it.
 */
static void sv_kick(struct ibv_context *ctx, uint32_t slot, bool defer)
{
	struct sv_context *c = to_svctx(ctx);
	struct sv_ring_doorbell d = { .size = sizeof(d) };
	uint32_t flags;

	/*
	 * Pairs with the engine's smp_mb() after setting NEED_WAKEUP, and
	 * with a drive's after clearing posted: either it sees this prod or
	 * this sees posted clear and sets it, and the flag (uapi: struct
	 * sv_doorbell). A ring that names the QP needs no hint; without
	 * the flag the QP's bits name it, and the flag is looked at again
	 * after them (the engine sets it, then looks at the bits).
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	sv_mark(&c->db->posted);
	flags = __atomic_load_n(&c->db->flags, __ATOMIC_RELAXED);
	if (flags & SV_DB_NEED_WAKEUP) {
		defer = defer && c->hint && slot < SV_DB_SLOTS;
		if (defer && flags & SV_DB_DEFER && sv_defer(c, slot))
			return;
		/* Ask for SV_DB_DEFER: this ring tells the engine. */
		if (defer)
			sv_mark(&c->db->defer);
		if (sv_ring_qp(ctx, slot))
			return;
	}
	if (sv_hint(c, slot))
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->db->flags, __ATOMIC_RELAXED) &
	    SV_DB_NEED_WAKEUP)
		sv_cmd(ctx, SV_IOC_DOORBELL, &d);
}

/* A drive that found nothing: none for a while, up to a millisecond. */
#define SV_DRIVE_BACKOFF_MIN	16000ULL
#define SV_DRIVE_BACKOFF_MAX	1000000ULL

uint64_t sv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * An empty poll while the engine has no CPU of its own (the posts ring):
 * lend it this thread. The drive runs this user's queues in this thread
 * and the user's posts stop ringing meanwhile (uapi: SV_RING_DRIVE). One
 * that found nothing backs off, doubling, so an idle poller costs about
 * a syscall a millisecond. 1 if it rang, 0 if not, -1: no drive here.
 */
static int sv_db_drive(struct ibv_context *ctx, uint32_t cq_handle)
{
	struct sv_context *c = to_svctx(ctx);
	struct sv_ring_doorbell d = {
		.size = sizeof(d), .flags = SV_RING_DRIVE,
		.cq_handle = cq_handle,
	};
	uint64_t now = sv_now_ns(), backoff;
	int ret;

	if (now < __atomic_load_n(&c->drive_after, __ATOMIC_RELAXED))
		return 0;
	ret = ioctl(ctx->cmd_fd, SV_IOC_DOORBELL, &d);
	if (ret < 0) {
		/* A kernel without drives: never again. */
		if (errno == EINVAL)
			__atomic_store_n(&c->no_drive, true, __ATOMIC_RELAXED);
		return -1;
	}
	backoff = __atomic_load_n(&c->drive_backoff, __ATOMIC_RELAXED);
	if (ret > 0) {
		backoff = 0;
	} else {
		backoff = backoff ? backoff * 2 : SV_DRIVE_BACKOFF_MIN;
		if (backoff > SV_DRIVE_BACKOFF_MAX)
			backoff = SV_DRIVE_BACKOFF_MAX;
	}
	__atomic_store_n(&c->drive_backoff, backoff, __ATOMIC_RELAXED);
	__atomic_store_n(&c->drive_after, now + backoff, __ATOMIC_RELAXED);
	return 1;
}

/*
 * A poll found its CQ empty. If the engine has no CPU of its own, drive
 * it (above). Else, or while drives back off, if frames wait in a
 * receive queue (rx), ring: the doorbell's pass takes them in this
 * thread (uapi: struct sv_doorbell). True if it rang: the caller polls
 * once more.
 */
bool sv_db_rx_ring(struct ibv_context *ctx, uint32_t cq_handle)
{
	struct sv_context *c = to_svctx(ctx);
	struct sv_ring_doorbell d = { .size = sizeof(d) };
	struct sv_doorbell *db = __atomic_load_n(&c->db, __ATOMIC_ACQUIRE);

	if (!db)
		return false;
	if ((__atomic_load_n(&db->flags, __ATOMIC_RELAXED) &
	     SV_DB_NEED_WAKEUP) &&
	    !__atomic_load_n(&c->no_drive, __ATOMIC_RELAXED) &&
	    sv_db_drive(ctx, cq_handle) > 0)
		return true;
	if (!__atomic_load_n(&db->rx, __ATOMIC_RELAXED))
		return false;
	return !sv_cmd(ctx, SV_IOC_DOORBELL, &d);
}

/* wq's ring is at @ring bytes into a mapping at @base. */
static void sv_uwq_point(struct sv_uwq *wq, void *base, uint32_t ring)
{
	wq->ring = (struct sv_wq_ring *)((char *)base + ring);
	wq->entries = wq->ring->entries;
	wq->wqe_size = wq->ring->wqe_size;
	wq->wqes = (char *)wq->ring + wq->ring->wqe_offset;
	wq->prod = wq->ring->prod;
}

static void sv_uwq_place(struct sv_uwq *wq, void *base, uint32_t ring,
			 uint32_t max_sge)
{
	sv_uwq_point(wq, base, ring);
	wq->max_sge = max_sge;
	pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
}

/* Map @len bytes at @off for wq, whose ring is @ring bytes into them. */
int sv_uwq_map(struct ibv_context *ctx, struct sv_uwq *wq, uint64_t off,
	       size_t len, uint32_t ring, uint32_t max_sge)
{
	if (!sv_ring_map(ctx, &wq->map, off, len))
		return errno;
	sv_uwq_place(wq, wq->map.addr, ring, max_sge);
	return 0;
}

/*
 * The ring of an SRQ or WQ, alone in its mapping: the buffer @pd's
 * allocator gives (a parent domain's, td.c), which the kernel then uses
 * (SV_IOC_MOVE_RING of @move_type), else the mapping at @off. *app gets
 * the buffer, or NULL. 0 or an errno value.
 */
int sv_uwq_attach(struct ibv_context *ctx, struct sv_uwq *wq,
		  struct ibv_pd *pd, uint64_t res_type, uint32_t move_type,
		  uint32_t handle, uint64_t off, size_t len, uint32_t max_sge,
		  void **app)
{
	int ret;

	*app = sv_pd_ring_take(ctx, pd, res_type, move_type, handle, len,
			       &ret);
	if (ret)
		return ret;
	if (!*app)
		return sv_uwq_map(ctx, wq, off, len, 0, max_sge);
	sv_uwq_place(wq, *app, 0, max_sge);
	return 0;
}

/* Unmap wq's ring; one in another ring's mapping (map.addr NULL) too. */
void sv_uwq_unmap(struct ibv_context *ctx, struct sv_uwq *wq)
{
	if (!wq->ring)
		return;
	sv_ring_unmap(ctx, &wq->map);
	pthread_spin_destroy(&wq->lock);
	wq->ring = NULL;
}

int sv_dp_qp_map(struct sv_qp *qp, const struct ibv_qp_cap *cap)
{
	struct ibv_context *ctx = qp->qpx.qp_base.context;
	struct sv_map_wq m = { .size = sizeof(m), .type = SV_WQ_QP };
	int ret;

	qp->db_slot = SV_DB_NO_SLOT;
	ret = sv_db_map(ctx);
	if (ret)
		return ret;
	m.handle = qp->qpx.qp_base.handle;
	ret = sv_cmd(ctx, SV_IOC_MAP_WQ, &m);
	if (ret)
		return ret;
	/* An older kernel leaves it 0: it gave no hints either (c->hint). */
	qp->db_slot = m.db_slot;
	/* A parent domain's allocator may give the rings' memory (td.c). */
	qp->app_ring = sv_pd_ring_take(ctx, qp->qpx.qp_base.pd, SV_RES_TYPE_QP,
				       SV_WQ_QP, m.handle, m.sq_len, &ret);
	if (ret)
		return ret;
	if (qp->app_ring) {
		sv_uwq_place(&qp->sq, qp->app_ring, m.sq_ring,
			     cap->max_send_sge);
		if (m.rq_len)
			sv_uwq_place(&qp->rq, qp->app_ring, m.rq_ring,
				     cap->max_recv_sge);
		qp->max_inline = cap->max_inline_data;
		return 0;
	}
	ret = sv_uwq_map(ctx, &qp->sq, m.sq_offset, m.sq_len, m.sq_ring,
			 cap->max_send_sge);
	if (ret)
		return ret;
	if (m.rq_len && m.rq_offset == m.sq_offset) {
		/* One mapping for both (SV_CREATE_QP_SHARED_RINGS) */
		sv_uwq_place(&qp->rq, qp->sq.map.addr, m.rq_ring,
			     cap->max_recv_sge);
	} else if (m.rq_len) {
		ret = sv_uwq_map(ctx, &qp->rq, m.rq_offset, m.rq_len,
				 m.rq_ring, cap->max_recv_sge);
		if (ret) {
			sv_uwq_unmap(ctx, &qp->sq);
			return ret;
		}
	}
	qp->max_inline = cap->max_inline_data;
	return 0;
}

void sv_dp_qp_unmap(struct sv_qp *qp)
{
	struct ibv_context *ctx = qp->qpx.qp_base.context;

	sv_uwq_unmap(ctx, &qp->sq);
	sv_uwq_unmap(ctx, &qp->rq);
}

int sv_dp_srq_map(struct sv_srq *srq, uint32_t max_sge)
{
	struct ibv_context *ctx = srq->srq.context;
	struct sv_map_wq m = { .size = sizeof(m), .type = SV_WQ_SRQ };
	int ret;

	ret = sv_db_map(ctx);
	if (ret)
		return ret;
	m.handle = srq->srq.handle;
	ret = sv_cmd(ctx, SV_IOC_MAP_WQ, &m);
	if (ret)
		return ret;
	return sv_uwq_attach(ctx, &srq->rq, srq->srq.pd, SV_RES_TYPE_SRQ,
			     SV_WQ_SRQ, m.handle, m.rq_offset, m.rq_len,
			     max_sge, &srq->app_ring);
}

/*
 * The SRQ's ring moved (SV_SRQ_MAX_WR, kernel/srq.c): map the new one at
 * @off, drop the old mapping. Under srq->rq.lock; 0 or an errno value.
 */
int sv_dp_srq_remap(struct sv_srq *srq, uint64_t off, size_t len)
{
	struct ibv_context *ctx = srq->srq.context;
	void *p;

	if (srq->app_ring) {
		/* Module memory again: the allocator's buffer goes back. */
		p = sv_ring_map(ctx, &srq->rq.map, off, len);
		if (!p)
			return errno;
		sv_pd_buffer_put(srq->srq.pd, srq->app_ring, SV_RES_TYPE_SRQ);
		srq->app_ring = NULL;
		sv_uwq_point(&srq->rq, p, 0);
		return 0;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd,
		 off);
	if (p == MAP_FAILED)
		return errno;
	sv_ring_replace(ctx, &srq->rq.map, p, len);
	sv_uwq_point(&srq->rq, p, 0);
	return 0;
}

void sv_dp_srq_unmap(struct sv_srq *srq)
{
	sv_uwq_unmap(srq->srq.context, &srq->rq);
}

/* The slot for index i, or NULL if the ring is full. Under wq->lock. */
static void *sv_uwq_slot(struct sv_uwq *wq, uint32_t i)
{
	uint32_t cons = __atomic_load_n(&wq->ring->cons, __ATOMIC_ACQUIRE);

	if (i - cons >= wq->entries)
		return NULL;
	return wq->wqes + (size_t)(i & (wq->entries - 1)) * wq->wqe_size;
}

static void sv_uwq_publish(struct sv_uwq *wq)
{
	__atomic_store_n(&wq->ring->prod, wq->prod, __ATOMIC_RELEASE);
}

/* ---- receives ---- */

static int sv_post_recv_wq(struct ibv_context *ctx, struct sv_uwq *wq,
			   uint32_t slot, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad)
{
	struct sv_recv_wqe *w;
	struct sv_sge *sge;
	int i, ret = 0;

	sv_uwq_lock(wq);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge) {
			ret = EINVAL;
			break;
		}
		w = sv_uwq_slot(wq, wq->prod);
		if (!w) {
			ret = ENOMEM;
			break;
		}
		w->wr_id = wr->wr_id;
		w->num_sge = wr->num_sge;
		w->reserved = 0;
		sge = (struct sv_sge *)(w + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		wq->prod++;
	}
	sv_uwq_publish(wq);
	sv_uwq_unlock(wq);
	if (ret)
		*bad = wr;
	/* Only an errored QP's engine wants to hear about receives. */
	if (__atomic_load_n(&wq->ring->flags, __ATOMIC_RELAXED) &
	    SV_WQ_RING_ERR)
		sv_kick(ctx, slot, false);
	return ret;
}

static int sv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad)
{
	struct sv_qp *qp = to_svqp(ibqp);

	/*
	 * A QP in RESET has no receive queue to post to yet; XRC QPs have
	 * none at all (their receives are an XRC SRQ's).
	 */
	if (ibqp->srq || !qp->rq.ring || ibqp->state == IBV_QPS_RESET ||
	    ibqp->qp_type == IBV_QPT_XRC_SEND ||
	    ibqp->qp_type == IBV_QPT_XRC_RECV) {
		*bad = wr;
		return EINVAL;
	}
	return sv_post_recv_wq(ibqp->context, &qp->rq, qp->db_slot, wr, bad);
}

static int sv_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad)
{
	struct sv_srq *srq = container_of(ibsrq, struct sv_srq, srq);

	return sv_post_recv_wq(ibsrq->context, &srq->rq, SV_DB_NO_SLOT, wr,
			       bad);
}

/* ---- sends ---- */

static bool sv_op_valid(const struct sv_qp *qp, enum ibv_wr_opcode op)
{
	/* A DCI (IBV_QPT_DRIVER) and an XRC INI QP have RC's operations. */
	enum ibv_qp_type type = qp->kqp_type == SV_QPT_DCI ||
				qp->kqp_type == SV_QPT_XRC_SEND ? IBV_QPT_RC :
				qp->qpx.qp_base.qp_type;

	/* A raw QP's WR is one Ethernet frame, or a TSO's segments. */
	if (type == IBV_QPT_RAW_PACKET)
		return op == IBV_WR_SEND ||
		       (op == IBV_WR_TSO && qp->max_tso_header);
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	case IBV_WR_BIND_MW:
		/* Not on a DCI: RC and UC QPs, as mlx5 and rxe. */
		return qp->kqp_type != SV_QPT_DCI &&
		       (type == IBV_QPT_RC || type == IBV_QPT_UC);
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_ATOMIC_WRITE:
		return type == IBV_QPT_RC;
	default:
		return false;
	}
}

#define SV_SEND_FLAGS_KNOWN (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
			     IBV_SEND_SOLICITED | IBV_SEND_INLINE | \
			     IBV_SEND_IP_CSUM)

/* Send flags of a QP type: checksums only on raw QPs (no UD_IP_CSUM). */
static bool sv_flags_valid(enum ibv_qp_type type, unsigned int flags)
{
	if (flags & ~SV_SEND_FLAGS_KNOWN)
		return false;
	return type == IBV_QPT_RAW_PACKET || !(flags & IBV_SEND_IP_CSUM);
}

/* Where a WQE's SGEs go: after the header of a TSO one. */
static struct sv_sge *sv_wqe_sges(struct sv_send_wqe *w)
{
	struct sv_send_tso *tso = (struct sv_send_tso *)(w + 1);

	if (w->opcode != IBV_WR_TSO)
		return (struct sv_sge *)(w + 1);
	return (struct sv_sge *)((char *)tso + SV_TSO_SGE_OFFSET(tso->hdr_sz));
}

/*
 * The TSO part of a WQE: as mlx5, a header of 1..max_tso_header bytes
 * and mss > 0; the payload comes from SGEs, never inline. EINVAL if not.
 */
static int sv_fill_tso(struct sv_qp *qp, struct sv_send_wqe *w,
		       const void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	struct sv_send_tso *tso = (struct sv_send_tso *)(w + 1);

	if (!hdr || !hdr_sz || hdr_sz > qp->max_tso_header || !mss ||
	    (w->send_flags & IBV_SEND_INLINE))
		return EINVAL;
	tso->hdr_sz = hdr_sz;
	tso->mss = mss;
	tso->reserved = 0;
	memcpy(tso + 1, hdr, hdr_sz);
	return 0;
}

/*
 * The rights a bind may give a window (ibv_bind_mw(3)), and LOCAL_WRITE,
 * which mlx5 and rxe take too (kernel/mr/mw.c drops it).
 */
#define SV_MW_BIND_ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			   IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED | \
			   IBV_ACCESS_LOCAL_WRITE)

/*
 * A bind of a window of this QP's context: the kernel checks it against
 * the rules when it executes (kernel/mr/mw.c); EINVAL here for what no bind
 * can be.
 */
static int sv_fill_bind(struct sv_qp *qp, struct sv_send_wqe *w,
			const struct ibv_mw *mw, uint32_t rkey,
			const struct ibv_mw_bind_info *b)
{
	if (!mw || !b || mw->context != qp->qpx.qp_base.context ||
	    (b->mw_access_flags & ~(unsigned int)SV_MW_BIND_ACCESS) ||
	    (!b->mr && b->length))
		return EINVAL;
	w->rkey = mw->rkey;
	w->imm_data = rkey;
	w->remote_addr = b->addr;
	w->compare_add = b->length;
	w->swap = b->mr ? b->mr->lkey : 0;
	w->remote_qkey = b->mw_access_flags;
	w->send_flags &= ~IBV_SEND_INLINE;
	return 0;
}

/* Fill one send WQE from wr; an errno value if wr is invalid. */
static int sv_fill_send(struct sv_qp *qp, struct sv_send_wqe *w,
			const struct ibv_send_wr *wr)
{
	struct ibv_qp *ibqp = &qp->qpx.qp_base;
	char *dst = (char *)(w + 1);
	struct sv_sge *sge;
	size_t len = 0;
	int i, ret;

	/*
	 * A DCI's destination is set only through mlx5dv_wr_set_dc_addr*():
	 * an ibv_send_wr has no place for it.
	 */
	/* An atomic write's data has no place in an ibv_send_wr. */
	if (!sv_op_valid(qp, wr->opcode) || qp->kqp_type == SV_QPT_DCI ||
	    wr->opcode == IBV_WR_ATOMIC_WRITE ||
	    !sv_flags_valid(ibqp->qp_type, wr->send_flags) || wr->num_sge < 0)
		return EINVAL;
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	if (wr->opcode == IBV_WR_TSO) {
		ret = sv_fill_tso(qp, w, wr->tso.hdr, wr->tso.hdr_sz,
				  wr->tso.mss);
		if (ret)
			return ret;
	}
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		w->imm_data = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
		w->imm_data = wr->invalidate_rkey;
		break;
	case IBV_WR_LOCAL_INV:
		/* Only the key: no data, whatever the SGEs say (as mlx5). */
		w->imm_data = wr->invalidate_rkey;
		w->send_flags &= ~IBV_SEND_INLINE;
		return 0;
	case IBV_WR_BIND_MW:
		return sv_fill_bind(qp, w, wr->bind_mw.mw, wr->bind_mw.rkey,
				    &wr->bind_mw.bind_info);
	default:
		break;
	}
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
		break;
	default:
		break;
	}
	if (ibqp->qp_type == IBV_QPT_UD) {
		if (!wr->wr.ud.ah)
			return EINVAL;
		w->ah_handle = wr->wr.ud.ah->handle;
		w->remote_qpn = wr->wr.ud.remote_qpn;
		w->remote_qkey = wr->wr.ud.remote_qkey;
	}
	/* XRC: the SRQ at the other end that takes the message */
	if (ibqp->qp_type == IBV_QPT_XRC_SEND)
		w->remote_qpn = wr->qp_type.xrc.remote_srqn;
	if (wr->send_flags & IBV_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length > qp->max_inline - len)
				return EINVAL;
			memcpy(dst + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		w->inline_len = len;
		return 0;
	}
	if ((uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	w->num_sge = wr->num_sge;
	sge = sv_wqe_sges(w);
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

static int sv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad)
{
	struct sv_qp *qp = to_svqp(ibqp);
	struct sv_uwq *wq = &qp->sq;
	struct sv_send_wqe *w;
	uint32_t nsig = 0;
	int ret = 0;

	/* As rxe and mlx5: no posting to the send queue before INIT. */
	if (!wq->ring || ibqp->state == IBV_QPS_RESET) {
		*bad = wr;
		return EINVAL;
	}
	sv_uwq_lock(wq);
	for (; wr; wr = wr->next) {
		w = sv_uwq_slot(wq, wq->prod);
		if (!w) {
			ret = ENOMEM;
			break;
		}
		ret = sv_fill_send(qp, w, wr);
		if (ret)
			break;
		nsig += qp->sig_all || (w->send_flags & IBV_SEND_SIGNALED);
		wq->prod++;
	}
	sv_uwq_publish(wq);
	sv_uwq_unlock(wq);
	if (ret)
		*bad = wr;
	sv_kick(ibqp->context, qp->db_slot, sv_sig_posted(qp, nsig));
	return ret;
}

/* ---- ibv_qp_ex: work requests built piece by piece ---- */

static struct sv_qp *qpx_qp(struct ibv_qp_ex *q)
{
	return container_of(q, struct sv_qp, qpx);
}

static void sv_wr_begin(struct ibv_qp_ex *q, enum ibv_wr_opcode op)
{
	struct sv_qp *qp = qpx_qp(q);
	struct sv_send_wqe *w;

	if (qp->wr_err)
		return;
	/* Checksums: raw QPs only, as for ibv_post_send(). */
	if ((q->wr_flags & IBV_SEND_IP_CSUM) &&
	    q->qp_base.qp_type != IBV_QPT_RAW_PACKET) {
		qp->wr_err = EINVAL;
		qp->wr_cur = NULL;
		return;
	}
	w = sv_uwq_slot(&qp->sq, qp->sq.prod);
	if (!w) {
		qp->wr_err = ENOMEM;
		qp->wr_cur = NULL;
		return;
	}
	memset(w, 0, sizeof(*w));
	w->wr_id = q->wr_id;
	w->opcode = op;
	w->send_flags = q->wr_flags;
	qp->wr_cur = w;
	qp->sq.prod++;
	qp->wr_nsig += qp->sig_all || (q->wr_flags & IBV_SEND_SIGNALED);
	/* A new WR ends an mkey configure that lacked setters. */
	if (qp->umr)
		qp->wr_err = EINVAL;
}

static struct sv_send_wqe *sv_wr_cur(struct ibv_qp_ex *q)
{
	struct sv_qp *qp = qpx_qp(q);

	return qp->wr_err ? NULL : qp->wr_cur;
}

static void sv_x_send(struct ibv_qp_ex *q)
{
	sv_wr_begin(q, IBV_WR_SEND);
}

static void sv_x_send_tso(struct ibv_qp_ex *q, void *hdr, uint16_t hdr_sz,
			  uint16_t mss)
{
	struct sv_qp *qp = qpx_qp(q);
	struct sv_send_wqe *w;

	if (!qp->wr_err && !sv_op_valid(qp, IBV_WR_TSO))
		qp->wr_err = EINVAL;
	sv_wr_begin(q, IBV_WR_TSO);
	w = sv_wr_cur(q);
	if (w)
		qp->wr_err = sv_fill_tso(qp, w, hdr, hdr_sz, mss);
}

static void sv_x_send_imm(struct ibv_qp_ex *q, __be32 imm)
{
	struct sv_send_wqe *w;

	sv_wr_begin(q, IBV_WR_SEND_WITH_IMM);
	w = sv_wr_cur(q);
	if (w)
		w->imm_data = imm;
}

static void sv_x_send_inv(struct ibv_qp_ex *q, uint32_t rkey)
{
	struct sv_send_wqe *w;

	sv_wr_begin(q, IBV_WR_SEND_WITH_INV);
	w = sv_wr_cur(q);
	if (w)
		w->imm_data = rkey;
}

static void sv_x_local_inv(struct ibv_qp_ex *q, uint32_t key)
{
	struct sv_qp *qp = qpx_qp(q);
	struct sv_send_wqe *w;

	if (!qp->wr_err && !sv_op_valid(qp, IBV_WR_LOCAL_INV))
		qp->wr_err = EINVAL;
	sv_wr_begin(q, IBV_WR_LOCAL_INV);
	w = sv_wr_cur(q);
	if (w) {
		w->imm_data = key;
		w->send_flags &= ~IBV_SEND_INLINE;
	}
}

static void sv_x_bind_mw(struct ibv_qp_ex *q, struct ibv_mw *mw,
			 uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct sv_qp *qp = qpx_qp(q);
	struct sv_send_wqe *w;

	if (!qp->wr_err && !sv_op_valid(qp, IBV_WR_BIND_MW))
		qp->wr_err = EINVAL;
	sv_wr_begin(q, IBV_WR_BIND_MW);
	w = sv_wr_cur(q);
	if (w)
		qp->wr_err = sv_fill_bind(qp, w, mw, rkey, info);
}

static void sv_x_rdma(struct ibv_qp_ex *q, enum ibv_wr_opcode op,
		      uint32_t rkey, uint64_t addr)
{
	struct sv_send_wqe *w;

	sv_wr_begin(q, op);
	w = sv_wr_cur(q);
	if (w) {
		w->rkey = rkey;
		w->remote_addr = addr;
	}
}

static void sv_x_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr)
{
	sv_x_rdma(q, IBV_WR_RDMA_WRITE, rkey, addr);
}

static void sv_x_read(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr)
{
	sv_x_rdma(q, IBV_WR_RDMA_READ, rkey, addr);
}

static void sv_x_write_imm(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr,
			   __be32 imm)
{
	struct sv_send_wqe *w;

	sv_x_rdma(q, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr);
	w = sv_wr_cur(q);
	if (w)
		w->imm_data = imm;
}

static void sv_x_cas(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr,
		     uint64_t cmp, uint64_t swap)
{
	struct sv_send_wqe *w;

	sv_x_rdma(q, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr);
	w = sv_wr_cur(q);
	if (w) {
		w->compare_add = cmp;
		w->swap = swap;
	}
}

/*
 * ibv_wr_atomic_write(): the 8 bytes at atomic_wr travel in the WQE, no
 * SGE (kernel/exec.c writes them in one store); RC QPs only.
 */
static void sv_x_atomic_write(struct ibv_qp_ex *q, uint32_t rkey,
			      uint64_t addr, const void *atomic_wr)
{
	struct sv_qp *qp = qpx_qp(q);
	struct sv_send_wqe *w;

	if (!qp->wr_err && (!atomic_wr ||
			    !sv_op_valid(qp, IBV_WR_ATOMIC_WRITE)))
		qp->wr_err = EINVAL;
	sv_x_rdma(q, IBV_WR_ATOMIC_WRITE, rkey, addr);
	w = sv_wr_cur(q);
	if (w) {
		memcpy(&w->compare_add, atomic_wr, sizeof(w->compare_add));
		w->send_flags &= ~IBV_SEND_INLINE;
	}
}

/*
 * ibv_wr_flush(): no data; the range and the kind travel in the WQE
 * (kernel/exec.c). RC, XRC INI and DCI QPs.
 */
static void sv_x_flush(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr,
		       size_t len, uint8_t type, uint8_t level)
{
	struct sv_qp *qp = qpx_qp(q);
	struct sv_send_wqe *w;

	if (!qp->wr_err &&
	    !sv_op_valid(qp, (enum ibv_wr_opcode)IBV_WR_RDMA_READ))
		qp->wr_err = EINVAL;
	sv_x_rdma(q, (enum ibv_wr_opcode)SV_WR_OP_FLUSH, rkey, addr);
	w = sv_wr_cur(q);
	if (w) {
		w->compare_add = len;
		w->swap = type | (uint32_t)level << 8;
		w->send_flags &= ~IBV_SEND_INLINE;
	}
}

static void sv_x_faa(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr,
		     uint64_t add)
{
	struct sv_send_wqe *w;

	sv_x_rdma(q, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr);
	w = sv_wr_cur(q);
	if (w)
		w->compare_add = add;
}

static void sv_x_ud_addr(struct ibv_qp_ex *q, struct ibv_ah *ah,
			 uint32_t qpn, uint32_t qkey)
{
	struct sv_send_wqe *w = sv_wr_cur(q);

	if (!w)
		return;
	if (!ah) {
		qpx_qp(q)->wr_err = EINVAL;
		return;
	}
	w->ah_handle = ah->handle;
	w->remote_qpn = qpn;
	w->remote_qkey = qkey;
}

/* ibv_wr_set_xrc_srqn(): an XRC INI QP's WR names the remote SRQ. */
static void sv_x_xrc_srqn(struct ibv_qp_ex *q, uint32_t srqn)
{
	struct sv_send_wqe *w = sv_wr_cur(q);

	if (w)
		w->remote_qpn = srqn;
}

/* mlx5dv_wr_set_dc_addr_stream(): a DCI's destination. */
static void sv_dv_dc_addr_stream(struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah,
				 uint32_t dctn, uint64_t key, uint16_t stream)
{
	struct sv_qp *qp = container_of(mqp, struct sv_qp, dv);
	struct sv_send_wqe *w = sv_wr_cur(&qp->qpx);

	if (!w)
		return;
	if (!ah) {
		qp->wr_err = EINVAL;
		return;
	}
	w->ah_handle = ah->handle;
	w->remote_qpn = dctn;
	w->remote_qkey = (uint32_t)key;
	w->dc_key_hi = key >> 32;
	w->dc_stream = stream;
}

static void sv_dv_dc_addr(struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah,
			  uint32_t dctn, uint64_t key)
{
	sv_dv_dc_addr_stream(mqp, ah, dctn, key, 0);
}

/*
 * mlx5dv_wr_mr_interleaved(), mlx5dv_wr_mr_list() and
 * mlx5dv_wr_mkey_configure() with its setters: a UMR WQE that lays out
 * an indirect key (uapi struct sv_send_umr). As mlx5: the WR must be
 * inline (EOPNOTSUPP), the rights the four of an mkey (EINVAL), the
 * entries fit the key and the QP's slot (ENOMEM); a setter without a
 * configure, or twice, is EINVAL.
 */
#define SV_UMR_RIGHTS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct sv_qp *dv_qp(struct mlx5dv_qp_ex *mqp)
{
	return container_of(mqp, struct sv_qp, dv);
}

/* Start a UMR WQE for mkey that keeps its rights and its layout. */
static struct sv_send_umr *sv_umr_start(struct sv_qp *qp,
					struct mlx5dv_mkey *mkey)
{
	struct ibv_qp_ex *q = &qp->qpx;
	struct sv_send_umr *u;
	struct sv_send_wqe *w;

	if (!qp->wr_err && !(q->wr_flags & IBV_SEND_INLINE))
		qp->wr_err = EOPNOTSUPP;
	else if (!qp->wr_err && !mkey)
		qp->wr_err = EINVAL;
	sv_wr_begin(q, IBV_WR_DRIVER1);
	w = sv_wr_cur(q);
	if (!w)
		return NULL;
	w->send_flags &= ~IBV_SEND_INLINE;
	w->rkey = mkey->lkey;
	u = (struct sv_send_umr *)(w + 1);
	u->flags = SV_UMR_KEEP_ACCESS | SV_UMR_KEEP_LAYOUT;
	qp->umr = u;
	qp->umr_mkey = container_of(mkey, struct sv_mkey, dv);
	return u;
}

/* The UMR being built by a configure, or NULL (wr_err set: EINVAL). */
static struct sv_send_umr *sv_umr_cur(struct sv_qp *qp)
{
	if (qp->wr_err)
		return NULL;
	if (!qp->umr || !sv_wr_cur(&qp->qpx)) {
		qp->wr_err = EINVAL;
		return NULL;
	}
	return qp->umr;
}

static void sv_umr_access(struct sv_qp *qp, struct sv_send_umr *u,
			  uint32_t access)
{
	if (!(u->flags & SV_UMR_KEEP_ACCESS) ||
	    (access & ~(uint32_t)SV_UMR_RIGHTS)) {
		qp->wr_err = EINVAL;
		return;
	}
	u->access = access;
	u->flags &= ~SV_UMR_KEEP_ACCESS;
}

/* The layout's entries, n of them (ENOMEM: more than fit), or NULL. */
static struct sv_umr_ent *sv_umr_layout(struct sv_qp *qp,
					struct sv_send_umr *u,
					uint32_t repeat, uint16_t n)
{
	size_t room = qp->sq.max_sge * sizeof(struct sv_sge);

	if (room < qp->max_inline)
		room = qp->max_inline;
	room = room < sizeof(*u) ? 0 : (room - sizeof(*u)) /
				       sizeof(struct sv_umr_ent);
	if (n > room || n > qp->umr_mkey->max_entries) {
		qp->wr_err = ENOMEM;
		return NULL;
	}
	if (!(u->flags & SV_UMR_KEEP_LAYOUT)) {
		qp->wr_err = EINVAL;
		return NULL;
	}
	u->flags &= ~SV_UMR_KEEP_LAYOUT;
	u->repeat_count = repeat;
	u->num_ent = n;
	return (struct sv_umr_ent *)(u + 1);
}

static void sv_umr_interleaved(struct sv_qp *qp, struct sv_send_umr *u,
			       uint32_t repeat, uint16_t n,
			       const struct mlx5dv_mr_interleaved *data)
{
	struct sv_umr_ent *e = sv_umr_layout(qp, u, repeat, n);
	uint16_t i;

	for (i = 0; e && i < n; i++) {
		e[i].addr = data[i].addr;
		e[i].bytes_count = data[i].bytes_count;
		e[i].bytes_skip = data[i].bytes_skip;
		e[i].lkey = data[i].lkey;
		e[i].reserved = 0;
	}
}

static void sv_umr_list(struct sv_qp *qp, struct sv_send_umr *u, uint16_t n,
			const struct ibv_sge *sge)
{
	struct sv_umr_ent *e = sv_umr_layout(qp, u, 1, n);
	uint16_t i;

	for (i = 0; e && i < n; i++) {
		e[i].addr = sge[i].addr;
		e[i].bytes_count = sge[i].length;
		e[i].bytes_skip = 0;
		e[i].lkey = sge[i].lkey;
		e[i].reserved = 0;
	}
}

/*
 * The UMR of mlx5dv_wr_mr_interleaved() and _list(): whole in one call,
 * rights included; NULL (wr_err set) if it cannot be. The caller adds
 * the layout and ends the UMR (qp->umr = NULL).
 */
static struct sv_send_umr *sv_umr_start_rights(struct sv_qp *qp,
					       struct mlx5dv_mkey *mkey,
					       uint32_t access)
{
	struct sv_send_umr *u = sv_umr_start(qp, mkey);

	if (u)
		sv_umr_access(qp, u, access);
	return qp->wr_err ? NULL : u;
}

static void sv_dv_mr_interleaved(struct mlx5dv_qp_ex *mqp,
				 struct mlx5dv_mkey *mkey, uint32_t access,
				 uint32_t repeat, uint16_t n,
				 struct mlx5dv_mr_interleaved *data)
{
	struct sv_qp *qp = dv_qp(mqp);
	struct sv_send_umr *u = sv_umr_start_rights(qp, mkey, access);

	if (u)
		sv_umr_interleaved(qp, u, repeat, n, data);
	qp->umr = NULL;
}

static void sv_dv_mr_list(struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mkey,
			  uint32_t access, uint16_t n, struct ibv_sge *sge)
{
	struct sv_qp *qp = dv_qp(mqp);
	struct sv_send_umr *u = sv_umr_start_rights(qp, mkey, access);

	if (u)
		sv_umr_list(qp, u, n, sge);
	qp->umr = NULL;
}

/*
 * mlx5dv_wr_mkey_configure(): a UMR that keeps what no setter changes;
 * num_setters of them must follow before ibv_wr_complete() (EINVAL).
 * attr: comp_mask 0, conf_flags no more than RESET_SIG_ATTR (a key has
 * no signature attributes to reset), else EOPNOTSUPP, as mlx5.
 */
static void sv_dv_mkey_configure(struct mlx5dv_qp_ex *mqp,
				 struct mlx5dv_mkey *mkey, uint8_t num_setters,
				 struct mlx5dv_mkey_conf_attr *attr)
{
	struct sv_qp *qp = dv_qp(mqp);

	if (!qp->wr_err && qp->qpx.wr_flags & IBV_SEND_INLINE &&
	    (!attr || attr->comp_mask ||
	     (attr->conf_flags & ~(uint32_t)MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR)))
		qp->wr_err = EOPNOTSUPP;
	if (sv_umr_start(qp, mkey))
		qp->umr_setters = num_setters;
	if (!num_setters)
		qp->umr = NULL;
}

/* One setter done; the WR is whole after the last. */
static void sv_umr_setter_done(struct sv_qp *qp)
{
	if (!qp->wr_err && !--qp->umr_setters)
		qp->umr = NULL;
}

static void sv_dv_mkey_access(struct mlx5dv_qp_ex *mqp, uint32_t access)
{
	struct sv_qp *qp = dv_qp(mqp);
	struct sv_send_umr *u = sv_umr_cur(qp);

	if (u)
		sv_umr_access(qp, u, access);
	sv_umr_setter_done(qp);
}

static void sv_dv_mkey_list(struct mlx5dv_qp_ex *mqp, uint16_t n,
			    const struct ibv_sge *sge)
{
	struct sv_qp *qp = dv_qp(mqp);
	struct sv_send_umr *u = sv_umr_cur(qp);

	if (u)
		sv_umr_list(qp, u, n, sge);
	sv_umr_setter_done(qp);
}

static void sv_dv_mkey_interleaved(struct mlx5dv_qp_ex *mqp, uint32_t repeat,
				   uint16_t n,
				   const struct mlx5dv_mr_interleaved *data)
{
	struct sv_qp *qp = dv_qp(mqp);
	struct sv_send_umr *u = sv_umr_cur(qp);

	if (u)
		sv_umr_interleaved(qp, u, repeat, n, data);
	sv_umr_setter_done(qp);
}

/* Signature and crypto mkeys are not built. */
static void sv_dv_mkey_notsup(struct mlx5dv_qp_ex *mqp)
{
	struct sv_qp *qp = dv_qp(mqp);

	if (sv_umr_cur(qp))
		qp->wr_err = EOPNOTSUPP;
}

static void sv_dv_mkey_sig(struct mlx5dv_qp_ex *mqp,
			   const struct mlx5dv_sig_block_attr *attr)
{
	(void)attr;
	sv_dv_mkey_notsup(mqp);
}

static void sv_dv_mkey_crypto(struct mlx5dv_qp_ex *mqp,
			      const struct mlx5dv_crypto_attr *attr)
{
	(void)attr;
	sv_dv_mkey_notsup(mqp);
}

static void sv_x_sge_list(struct ibv_qp_ex *q, size_t n,
			  const struct ibv_sge *sg)
{
	struct sv_send_wqe *w = sv_wr_cur(q);
	struct sv_qp *qp = qpx_qp(q);
	struct sv_sge *d;
	size_t i;

	if (!w)
		return;
	if (n > qp->sq.max_sge) {
		qp->wr_err = EINVAL;
		return;
	}
	d = sv_wqe_sges(w);
	for (i = 0; i < n; i++) {
		d[i].addr = sg[i].addr;
		d[i].length = sg[i].length;
		d[i].lkey = sg[i].lkey;
	}
	w->num_sge = n;
	w->send_flags &= ~IBV_SEND_INLINE;
}

static void sv_x_sge(struct ibv_qp_ex *q, uint32_t lkey, uint64_t addr,
		     uint32_t len)
{
	struct ibv_sge sg = { .addr = addr, .length = len, .lkey = lkey };

	sv_x_sge_list(q, 1, &sg);
}

static void sv_x_inline_list(struct ibv_qp_ex *q, size_t n,
			     const struct ibv_data_buf *b)
{
	struct sv_send_wqe *w = sv_wr_cur(q);
	struct sv_qp *qp = qpx_qp(q);
	size_t i, len = 0;
	char *d;

	if (!w)
		return;
	/* A TSO payload comes from SGEs (as mlx5's TSO WQEs). */
	if (w->opcode == IBV_WR_TSO) {
		qp->wr_err = EINVAL;
		return;
	}
	d = (char *)(w + 1);
	for (i = 0; i < n; i++) {
		if (b[i].length > qp->max_inline - len) {
			qp->wr_err = EINVAL;
			return;
		}
		memcpy(d + len, b[i].addr, b[i].length);
		len += b[i].length;
	}
	w->inline_len = len;
	w->num_sge = 0;
	w->send_flags |= IBV_SEND_INLINE;
}

static void sv_x_inline(struct ibv_qp_ex *q, void *addr, size_t len)
{
	struct ibv_data_buf b = { .addr = addr, .length = len };

	sv_x_inline_list(q, 1, &b);
}

static void sv_x_start(struct ibv_qp_ex *q)
{
	struct sv_qp *qp = qpx_qp(q);

	sv_uwq_lock(&qp->sq);
	qp->wr_err = q->qp_base.state == IBV_QPS_RESET ? EINVAL : 0;
	qp->wr_cur = NULL;
	qp->wr_start_prod = qp->sq.prod;
	qp->wr_nsig = 0;
}

static int sv_x_complete(struct ibv_qp_ex *q)
{
	struct sv_qp *qp = qpx_qp(q);
	int ret = qp->wr_err;

	/* An mkey configure still waiting for setters is not whole. */
	if (!ret && qp->umr)
		ret = EINVAL;
	qp->umr = NULL;

	if (ret)
		qp->sq.prod = qp->wr_start_prod;	/* nothing is posted */
	else
		sv_uwq_publish(&qp->sq);
	qp->wr_err = 0;
	sv_uwq_unlock(&qp->sq);
	if (!ret)
		sv_kick(q->qp_base.context, qp->db_slot,
			sv_sig_posted(qp, qp->wr_nsig));
	return ret;
}

static void sv_x_abort(struct ibv_qp_ex *q)
{
	struct sv_qp *qp = qpx_qp(q);

	qp->umr = NULL;
	qp->sq.prod = qp->wr_start_prod;
	qp->wr_err = 0;
	sv_uwq_unlock(&qp->sq);
}

/* Replace qp.c's EOPNOTSUPP builders for the operations we execute. */
void sv_dp_fill_wr_ops(struct sv_qp *qp)
{
	struct ibv_qp_ex *x = &qp->qpx;

	x->wr_start = sv_x_start;
	x->wr_complete = sv_x_complete;
	x->wr_abort = sv_x_abort;
	x->wr_send = sv_x_send;
	x->wr_send_imm = sv_x_send_imm;
	x->wr_send_inv = sv_x_send_inv;
	x->wr_send_tso = sv_x_send_tso;
	x->wr_rdma_write = sv_x_write;
	x->wr_rdma_write_imm = sv_x_write_imm;
	x->wr_rdma_read = sv_x_read;
	x->wr_atomic_cmp_swp = sv_x_cas;
	x->wr_atomic_fetch_add = sv_x_faa;
	x->wr_set_ud_addr = sv_x_ud_addr;
	x->wr_set_xrc_srqn = sv_x_xrc_srqn;
	x->wr_set_sge = sv_x_sge;
	x->wr_set_sge_list = sv_x_sge_list;
	x->wr_set_inline_data = sv_x_inline;
	x->wr_set_inline_data_list = sv_x_inline_list;
	x->wr_local_inv = sv_x_local_inv;
	x->wr_bind_mw = sv_x_bind_mw;
	x->wr_atomic_write = sv_x_atomic_write;
	qp->wr_flush = sv_x_flush;
	/* libmlx5's builders (sv_private_qp_dv()), as mlx5 sets them */
	if (qp->dv_send_ops) {
		qp->dv.wr_mr_interleaved = sv_dv_mr_interleaved;
		qp->dv.wr_mr_list = sv_dv_mr_list;
		qp->dv.wr_mkey_configure = sv_dv_mkey_configure;
		qp->dv.wr_set_mkey_access_flags = sv_dv_mkey_access;
		qp->dv.wr_set_mkey_layout_list = sv_dv_mkey_list;
		qp->dv.wr_set_mkey_layout_interleaved = sv_dv_mkey_interleaved;
		qp->dv.wr_set_mkey_sig_block = sv_dv_mkey_sig;
		qp->dv.wr_set_mkey_crypto = sv_dv_mkey_crypto;
	}
	if (qp->kqp_type == SV_QPT_DCI) {
		qp->dv.wr_set_dc_addr = sv_dv_dc_addr;
		qp->dv.wr_set_dc_addr_stream = sv_dv_dc_addr_stream;
	}
}

SV_EXPORT struct mlx5dv_qp_ex *sv_private_qp_dv(struct ibv_qp_ex *qpx)
{
	struct sv_qp *qp = qpx_qp(qpx);

	if (!sv_private_context_is_ours(qpx->qp_base.context) ||
	    !qp->has_qpx)
		return NULL;
	return &qp->dv;
}

/* What ibv_query_device_ex says of them, on a device bound to a netdev. */
void sv_tx_fill_caps(struct ibv_device_attr_ex *ex, uint32_t raw_caps)
{
	if (raw_caps & SV_RAW_CAP_IP_CSUM) {
		ex->raw_packet_caps |= IBV_RAW_PACKET_CAP_IP_CSUM;
		ex->device_cap_flags_ex |= IBV_DEVICE_RAW_IP_CSUM;
		ex->orig_attr.device_cap_flags |= IBV_DEVICE_RAW_IP_CSUM;
	}
	if (raw_caps & SV_RAW_CAP_TSO) {
		ex->tso_caps.max_tso = SV_MAX_TSO;
		ex->tso_caps.supported_qpts = 1U << IBV_QPT_RAW_PACKET;
	}
}

static int sv_post_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.context.ops.post_send = sv_post_send;
	ctx->vctx.context.ops.post_recv = sv_post_recv;
	ctx->vctx.context.ops.post_srq_recv = sv_post_srq_recv;
	return 0;
}

static void sv_post_ctx_fini(struct sv_context *ctx)
{
	if (ctx->db)
		munmap(ctx->db, ctx->db_len);
	ctx->db = NULL;
}
SV_CTX_PROVIDER(post, sv_post_ctx_init, sv_post_ctx_fini);
