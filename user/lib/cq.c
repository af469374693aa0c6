// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs: completion queues.
 *
 * The kernel allocates the ring and we map it; polling reads CQEs below
 * the kernel's producer index (acquire) and hands slots back by storing
 * our consumer index (release); ibv_req_notify_cq() sets a bit in the
 * ring's arm word. The contract is in uapi/softverbs-abi.h. Neither
 * polls nor arms enter the kernel, but to ring once for posts that left
 * their rings to them (post.c, SV_DB_DEFER), for an empty poll's frames
 * or drive, and to yield the CPU after a long run of empty polls (below).
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sv_verbs.h"
#include "sv_system.h"

/* What the CQE carries (IBV_WC_EX_WITH_*) */
#define SV_CQ_WC_FLAGS	(IBV_WC_STANDARD_FLAGS |			\
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |		\
			 IBV_WC_EX_WITH_CVLAN |				\
			 IBV_WC_EX_WITH_FLOW_TAG |			\
			 IBV_WC_EX_WITH_TM_INFO |			\
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

static inline void sv_cq_lock(struct sv_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
}

static inline void sv_cq_unlock(struct sv_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}

/* Slot i (a ring index, not yet masked) of cq's entries. */
static char *sv_cq_slot(const struct sv_cq *cq, uint32_t i)
{
	return cq->cqes + (size_t)(i & cq->mask) * cq->cqe_size;
}

/*
 * Copy the next CQE out (and, into *wall if not NULL, the wall clock stamp
 * of a 128-byte entry) and hand its slot back; false if none.
 */
static bool sv_cq_next(struct sv_cq *cq, struct sv_cqe *out, uint64_t *wall)
{
	uint32_t prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE);
	const char *slot;

	if (prod == cq->cons)
		return false;
	slot = sv_cq_slot(cq, cq->cons);
	memcpy(out, slot, sizeof(*out));
	if (wall)
		*wall = cq->cqe_size == SV_CQE_128_SIZE ?
			((const struct sv_cqe_ext *)(slot + SV_CQE_SIZE))->wallclock :
			0;
	cq->cons++;
	__atomic_store_n(&cq->ring->cons, cq->cons, __ATOMIC_RELEASE);
	/* A send's: one fewer to poll for (post.c) */
	if (out->opcode < IBV_WC_RECV)
		__atomic_fetch_sub(&cq->sig_out, 1, __ATOMIC_RELAXED);
	return true;
}

/*
 * Drop the CQEs of QP qpn that wait in cq, as mlx5's provider does when
 * a QP goes to RESET or is destroyed (so a QP restarted from RESET does
 * not poll the errors and flushes of its last life, which rdma-core's
 * tests rely on). The kernel, which produces only above the producer
 * index read here, and which makes no CQE of a QP in RESET or
 * destroyed, runs on: the entries kept move up over the dropped ones,
 * from the newest down, and the consumer index passes the room freed.
 */
void sv_cq_clean(struct ibv_cq *ibcq, uint32_t qpn)
{
	struct sv_cq *cq = to_svcq(ibcq);
	uint32_t prod, i, nfreed = 0;
	const struct sv_cqe *e;
	char *slot;

	sv_cq_lock(cq);
	prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE);
	for (i = prod; i != cq->cons;) {
		i--;
		slot = sv_cq_slot(cq, i);
		e = (const struct sv_cqe *)slot;
		if (e->qp_num == qpn) {
			if (e->opcode < IBV_WC_RECV)
				__atomic_fetch_sub(&cq->sig_out, 1,
						   __ATOMIC_RELAXED);
			nfreed++;
		} else if (nfreed) {
			memcpy(sv_cq_slot(cq, i + nfreed), slot, cq->cqe_size);
		}
	}
	if (nfreed) {
		cq->cons += nfreed;
		__atomic_store_n(&cq->ring->cons, cq->cons, __ATOMIC_RELEASE);
	}
	sv_cq_unlock(cq);
}

static void sv_cqe_to_wc(const struct sv_cqe *e, struct ibv_wc *wc)
{
	wc->wr_id = e->wr_id;
	wc->status = e->status;
	wc->opcode = e->opcode;
	wc->vendor_err = e->vendor_err;
	wc->byte_len = e->byte_len;
	wc->imm_data = e->imm_data;	/* or invalidated_rkey */
	wc->qp_num = e->qp_num;
	wc->src_qp = e->src_qp;
	wc->wc_flags = e->wc_flags;
	/* A tag match's app_ctx shares their bytes (RC: no P_Key, no LID) */
	wc->pkey_index = e->wc_flags & IBV_WC_TM_MATCH ? 0 : e->pkey_index;
	wc->slid = e->wc_flags & IBV_WC_TM_MATCH ? 0 : e->slid;
	wc->sl = e->sl;
	wc->dlid_path_bits = e->dlid_path_bits;
}

/* Up to num_entries completions into wc, under the CQ's lock. */
static int sv_cq_take(struct sv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct sv_cqe e;
	int n = 0;

	sv_cq_lock(cq);
	while (n < num_entries && sv_cq_next(cq, &e, NULL))
		sv_cqe_to_wc(&e, &wc[n++]);
	sv_cq_unlock(cq);
	return n;
}

/*
 * A poller that has found its CQ empty for SV_POLL_YIELD_NS yields its
 * CPU (sched_yield()) to whatever else is runnable there, and again each
 * such time after. Two processes that poll on one CPU (a sender waiting
 * for its completions, its receiver for their messages) otherwise take
 * turns only at the end of scheduler time slices, milliseconds, each
 * spinning on a CPU the other needs: ib_send_bw ran 3 to 4x slower so.
 * Alone on its CPU, the call returns at once: a syscall per
 * SV_POLL_YIELD_NS of spinning. The clock is read every
 * SV_POLL_CLOCK_EVERY empty polls. SOFTVERBS_POLL_YIELD_US sets the time
 * (0: never yield).
 */
#define SV_POLL_YIELD_NS	200000ULL
#define SV_POLL_CLOCK_EVERY	64

static pthread_once_t sv_poll_yield_once = PTHREAD_ONCE_INIT;
static uint64_t sv_poll_yield_ns = SV_POLL_YIELD_NS;

static void sv_poll_yield_init(void)
{
	const char *v = secure_getenv("SOFTVERBS_POLL_YIELD_US");
	unsigned long long us;
	char *end;

	if (!v || !*v)
		return;
	errno = 0;
	us = strtoull(v, &end, 10);
	if (!errno && !*end && us <= UINT64_MAX / 1000)
		sv_poll_yield_ns = us * 1000;
}

/* After each poll: empty or not. Counts are a heuristic: relaxed. */
static void sv_cq_idle(struct sv_cq *cq, bool empty)
{
	uint64_t now;
	uint32_t n;

	if (!empty) {
		if (__atomic_load_n(&cq->empty, __ATOMIC_RELAXED))
			__atomic_store_n(&cq->empty, 0, __ATOMIC_RELAXED);
		return;
	}
	n = __atomic_add_fetch(&cq->empty, 1, __ATOMIC_RELAXED);
	if (n % SV_POLL_CLOCK_EVERY)
		return;
	pthread_once(&sv_poll_yield_once, sv_poll_yield_init);
	if (!sv_poll_yield_ns)
		return;
	now = sv_now_ns();
	if (n == SV_POLL_CLOCK_EVERY) {
		__atomic_store_n(&cq->empty_since, now, __ATOMIC_RELAXED);
		return;
	}
	if (now - __atomic_load_n(&cq->empty_since, __ATOMIC_RELAXED) <
	    sv_poll_yield_ns)
		return;
	sched_yield();
	__atomic_store_n(&cq->empty_since, sv_now_ns(), __ATOMIC_RELAXED);
}

static int sv_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct sv_cq *cq = to_svcq(ibcq);
	int n;

	if (num_entries < 0)
		return -1;
	sv_db_flush(ibcq->context);
	n = sv_cq_take(cq, num_entries, wc);
	/* Empty: take the frames waiting for a busy engine, then once more */
	if (!n && sv_db_rx_ring(ibcq->context, ibcq->handle))
		n = sv_cq_take(cq, num_entries, wc);
	sv_cq_idle(cq, !n);
	return n;
}

static int sv_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct sv_cq *cq = to_svcq(ibcq);

	/* About to wait: posts that left their rings to a poll ring now. */
	sv_db_flush(ibcq->context);
	/* A full barrier: pairs with the kernel's smp_mb() (uapi). */
	__atomic_fetch_or(&cq->ring->arm, solicited_only ?
			  SV_CQ_ARM_SOLICITED : SV_CQ_ARM_NEXT,
			  __ATOMIC_SEQ_CST);
	return 0;
}

/* ---- ibv_cq_ex polling ---- */

static void sv_cq_ex_load(struct sv_cq *cq)
{
	cq->cq_ex.wr_id = cq->cur.wr_id;
	cq->cq_ex.status = cq->cur.status;
}

static int sv_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct sv_cq *cq = to_svcq_ex(ibcq);

	if (attr->comp_mask)
		return EINVAL;
	sv_db_flush(ibcq->context);
	sv_cq_lock(cq);
	if (!sv_cq_next(cq, &cq->cur, &cq->cur_wallclock)) {
		sv_cq_unlock(cq);
		if (!sv_db_rx_ring(ibcq->context, cq->cq.handle)) {
			sv_cq_idle(cq, true);
			return ENOENT;	/* the caller does not call end_poll */
		}
		sv_cq_lock(cq);
		if (!sv_cq_next(cq, &cq->cur, &cq->cur_wallclock)) {
			sv_cq_unlock(cq);
			sv_cq_idle(cq, true);
			return ENOENT;
		}
	}
	sv_cq_idle(cq, false);
	sv_cq_ex_load(cq);
	return 0;
}

static int sv_next_poll(struct ibv_cq_ex *ibcq)
{
	struct sv_cq *cq = to_svcq_ex(ibcq);

	if (!sv_cq_next(cq, &cq->cur, &cq->cur_wallclock))
		return ENOENT;
	sv_cq_ex_load(cq);
	return 0;
}

static void sv_end_poll(struct ibv_cq_ex *ibcq)
{
	sv_cq_unlock(to_svcq_ex(ibcq));
}

#define SV_CUR(ibcq)	(to_svcq_ex(ibcq)->cur)

static enum ibv_wc_opcode sv_read_opcode(struct ibv_cq_ex *c)
{
	return SV_CUR(c).opcode;
}

static uint32_t sv_read_vendor_err(struct ibv_cq_ex *c)
{
	return SV_CUR(c).vendor_err;
}

static uint32_t sv_read_byte_len(struct ibv_cq_ex *c)
{
	return SV_CUR(c).byte_len;
}

static __be32 sv_read_imm_data(struct ibv_cq_ex *c)
{
	return SV_CUR(c).imm_data;
}

static uint32_t sv_read_qp_num(struct ibv_cq_ex *c)
{
	return SV_CUR(c).qp_num;
}

static uint32_t sv_read_src_qp(struct ibv_cq_ex *c)
{
	return SV_CUR(c).src_qp;
}

static unsigned int sv_read_wc_flags(struct ibv_cq_ex *c)
{
	return SV_CUR(c).wc_flags;
}

static uint32_t sv_read_slid(struct ibv_cq_ex *c)
{
	return SV_CUR(c).wc_flags & IBV_WC_TM_MATCH ? 0 : SV_CUR(c).slid;
}

static uint8_t sv_read_sl(struct ibv_cq_ex *c)
{
	return SV_CUR(c).sl;
}

static uint8_t sv_read_dlid_path_bits(struct ibv_cq_ex *c)
{
	return SV_CUR(c).dlid_path_bits;
}

/*
 * The device clock's ticks (ns of CLOCK_MONOTONIC_RAW, the clock
 * ibv_query_rt_values_ex() reads), and ns of CLOCK_REALTIME; each only on
 * a CQ that asked for it (0 otherwise).
 */
static uint64_t sv_read_completion_ts(struct ibv_cq_ex *c)
{
	return SV_CUR(c).timestamp;
}

static uint64_t sv_read_completion_wallclock_ns(struct ibv_cq_ex *c)
{
	return to_svcq_ex(c)->cur_wallclock;
}

static uint16_t sv_read_cvlan(struct ibv_cq_ex *c)
{
	return SV_CUR(c).cvlan;
}

static uint32_t sv_read_flow_tag(struct ibv_cq_ex *c)
{
	/* A tag match's tag shares its bytes (RC: no flow tag) */
	return SV_CUR(c).wc_flags & IBV_WC_TM_MATCH ? 0 : SV_CUR(c).flow_tag;
}

/* The matched message's TMH: tag and app_ctx; 0 for any other CQE. */
static void sv_read_tm_info(struct ibv_cq_ex *c, struct ibv_wc_tm_info *tm)
{
	bool match = SV_CUR(c).wc_flags & IBV_WC_TM_MATCH;

	tm->tag = match ? SV_CUR(c).tm_tag : 0;
	tm->priv = match ? SV_CUR(c).tm_priv : 0;
}

static void sv_cq_ex_init_ops(struct ibv_cq_ex *c)
{
	c->start_poll = sv_start_poll;
	c->next_poll = sv_next_poll;
	c->end_poll = sv_end_poll;
	c->read_opcode = sv_read_opcode;
	c->read_vendor_err = sv_read_vendor_err;
	c->read_byte_len = sv_read_byte_len;
	c->read_imm_data = sv_read_imm_data;
	c->read_qp_num = sv_read_qp_num;
	c->read_src_qp = sv_read_src_qp;
	c->read_wc_flags = sv_read_wc_flags;
	c->read_slid = sv_read_slid;
	c->read_sl = sv_read_sl;
	c->read_dlid_path_bits = sv_read_dlid_path_bits;
	c->read_completion_ts = sv_read_completion_ts;
	c->read_cvlan = sv_read_cvlan;
	c->read_flow_tag = sv_read_flow_tag;
	c->read_completion_wallclock_ns = sv_read_completion_wallclock_ns;
	c->read_tm_info = sv_read_tm_info;
}

/* ---- create / destroy ---- */

static struct sv_cq *sv_cq_create(struct ibv_context *context,
				  struct ibv_cq_init_attr_ex *attr)
{
	struct sv_create_cq c = { .size = sizeof(c) };
	struct sv_destroy_cq d = { .size = sizeof(d) };
	struct ibv_comp_channel *channel = attr->channel;
	struct sv_cq *cq;
	int ret;

	if (attr->comp_mask & ~(IBV_CQ_INIT_ATTR_MASK_FLAGS |
				IBV_CQ_INIT_ATTR_MASK_PD)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t)SV_CQ_WC_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* A parent domain (td.c): its thread domain, its allocator. */
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		struct ibv_pd *pd = attr->parent_domain;

		if (!pd || pd->context != context ||
		    !to_svpd(pd)->protection) {
			errno = EINVAL;
			return NULL;
		}
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS &&
	    attr->flags & ~(uint32_t)(IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
				      IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (channel && channel->context != context) {
		errno = EINVAL;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	c.cqe = attr->cqe;
	c.comp_vector = attr->comp_vector;
	c.channel = channel ? to_svchan(channel)->handle : 0;
	c.wc_flags = attr->wc_flags;
	/* The wall clock stamp has its own half of a 128-byte entry. */
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		c.flags |= SV_CQ_FLAG_CQE_128;
	c.user_handle = (uintptr_t)&cq->cq;
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) {
		if (attr->flags & IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)
			c.flags |= SV_CQ_FLAG_IGNORE_OVERRUN;
		cq->single_threaded = attr->flags &
				      IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		cq->parent = attr->parent_domain;
		if (sv_pd_single_threaded(cq->parent))
			cq->single_threaded = true;
	}
	ret = sv_cmd(context, SV_IOC_CREATE_CQ, &c);
	if (ret)
		goto err_free;

	/* A parent domain's allocator may give the ring's memory (td.c). */
	cq->app_ring = sv_pd_ring_take(context, cq->parent, SV_RES_TYPE_CQ,
				       SV_RING_CQ, c.handle, c.mmap_len, &ret);
	if (ret)
		goto err_destroy;
	if (!cq->app_ring &&
	    !sv_ring_map(context, &cq->map, c.mmap_offset, c.mmap_len)) {
		ret = errno;
		goto err_destroy;
	}
	cq->ring = cq->app_ring ?: cq->map.addr;
	cq->cqe_size = cq->ring->cqe_size;
	if (cq->cqe_size != (c.flags & SV_CQ_FLAG_CQE_128 ? SV_CQE_128_SIZE :
			     SV_CQE_SIZE)) {
		sv_ring_unmap(context, &cq->map);
		ret = EPROTO;
		goto err_destroy;
	}
	cq->cqe_offset = c.cqe_offset;
	cq->cqes = (char *)cq->ring + c.cqe_offset;
	cq->mask = c.cqe - 1;
	cq->cons = 0;
	cq->wc_flags = attr->wc_flags;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);

	cq->cq.context = context;
	cq->cq.channel = channel;
	cq->cq.cq_context = attr->cq_context;
	cq->cq.handle = c.handle;
	cq->cq.cqe = c.cqe;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	cq->cq.comp_events_completed = 0;
	cq->cq.async_events_completed = 0;

	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&context->mutex);
	}
	sv_pd_use(cq->parent, 1);
	return cq;

err_destroy:
	d.handle = c.handle;
	sv_cmd(context, SV_IOC_DESTROY_CQ, &d);
	if (cq->app_ring)
		sv_pd_buffer_put(cq->parent, cq->app_ring, SV_RES_TYPE_CQ);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

SV_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
				       void *cq_context,
				       struct ibv_comp_channel *channel,
				       int comp_vector)
{
	SV_SYSTEM_FORWARD(context, ibv_create_cq, context, cqe, cq_context,
	                  channel, comp_vector);
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe,
		.cq_context = cq_context,
		.channel = channel,
		.comp_vector = comp_vector,
	};
	struct sv_cq *cq;

	if (cqe <= 0 || comp_vector < 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = sv_cq_create(context, &attr);
	return cq ? &cq->cq : NULL;
}

static struct ibv_cq_ex *sv_create_cq_ex(struct ibv_context *context,
					 struct ibv_cq_init_attr_ex *attr)
{
	struct sv_cq *cq;

	if (!attr->cqe || attr->cqe > INT_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cq = sv_cq_create(context, attr);
	if (!cq)
		return NULL;
	sv_cq_ex_init_ops(&cq->cq_ex);
	return &cq->cq_ex;
}

/*
 * The kernel moves the unconsumed CQEs to a new ring; we map it and drop
 * the old mapping. Returns 0 or an errno value. Polls wait on the CQ lock;
 * the application must not arm the CQ while it is resized (the arm state
 * is carried over).
 */
SV_EXPORT int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	SV_SYSTEM_FORWARD(ibcq->context, ibv_resize_cq, ibcq, cqe);
	struct sv_resize_cq r = { .size = sizeof(r) };
	struct sv_cq *cq = to_svcq(ibcq);
	void *map;
	int ret;

	if (cqe <= 0)
		return EINVAL;
	r.handle = ibcq->handle;
	r.cqe = cqe;
	pthread_spin_lock(&cq->lock);
	ret = sv_cmd(ibcq->context, SV_IOC_RESIZE_CQ, &r);
	if (ret)
		goto out;
	if (cq->app_ring) {
		/* Module memory again: the allocator's buffer goes back. */
		map = sv_ring_map(ibcq->context, &cq->map, r.mmap_offset,
				  r.mmap_len);
		if (!map) {
			ret = errno;	/* the kernel writes the new ring */
			goto out;
		}
		sv_pd_buffer_put(cq->parent, cq->app_ring, SV_RES_TYPE_CQ);
		cq->app_ring = NULL;
	} else {
		map = mmap(NULL, r.mmap_len, PROT_READ | PROT_WRITE,
			   MAP_SHARED, ibcq->context->cmd_fd, r.mmap_offset);
		if (map == MAP_FAILED) {
			/* The kernel already writes to the new ring. */
			ret = errno;
			goto out;
		}
		sv_ring_replace(ibcq->context, &cq->map, map, r.mmap_len);
	}
	cq->ring = map;
	cq->cqes = (char *)map + cq->cqe_offset;
	cq->mask = r.cqe - 1;
	cq->cons = 0;
	ibcq->cqe = r.cqe;
out:
	pthread_spin_unlock(&cq->lock);
	return ret;
}

/*
 * Returns 0 or an errno value (EBUSY while QPs, SRQs or WQs use the CQ).
 * Waits until the application acked every event the kernel delivered.
 */
SV_EXPORT int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	SV_SYSTEM_FORWARD(ibcq->context, ibv_destroy_cq, ibcq);
	struct sv_cq *cq = to_svcq(ibcq);
	struct sv_destroy_cq d = { .size = sizeof(d), .handle = ibcq->handle };
	struct ibv_comp_channel *channel = ibcq->channel;
	struct ibv_context *context = ibcq->context;
	int ret;

	ret = sv_cmd(context, SV_IOC_DESTROY_CQ, &d);
	if (ret)
		return ret;
	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt--;
		pthread_mutex_unlock(&context->mutex);
	}
	pthread_mutex_lock(&ibcq->mutex);
	while (ibcq->comp_events_completed != d.comp_events_reported ||
	       ibcq->async_events_completed != d.async_events_reported)
		pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
	pthread_mutex_unlock(&ibcq->mutex);

	sv_ring_unmap(context, &cq->map);
	/* Its ring was a parent domain's buffer: back to its allocator. */
	if (cq->app_ring)
		sv_pd_buffer_put(cq->parent, cq->app_ring, SV_RES_TYPE_CQ);
	pthread_spin_destroy(&cq->lock);
	pthread_mutex_destroy(&ibcq->mutex);
	pthread_cond_destroy(&ibcq->cond);
	sv_pd_use(cq->parent, -1);
	free(cq);
	return 0;
}

/*
 * ibv_modify_cq(): event moderation (IBV_CQ_MODERATE), kept by the kernel
 * (kernel/cq.c); EINVAL for other attributes or counts and periods beyond
 * cq_mod_caps, as the kernel says.
 */
static int sv_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr)
{
	struct sv_modify_cq m = { .size = sizeof(m) };

	if (!attr)
		return EINVAL;
	m.handle = ibcq->handle;
	m.attr_mask = attr->attr_mask;
	m.cq_count = attr->moderate.cq_count;
	m.cq_period = attr->moderate.cq_period;
	return sv_cmd(ibcq->context, SV_IOC_MODIFY_CQ, &m);
}

static int sv_cq_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.context.ops.poll_cq = sv_poll_cq;
	ctx->vctx.context.ops.req_notify_cq = sv_req_notify_cq;
	ctx->vctx.create_cq_ex = sv_create_cq_ex;
	ctx->vctx.modify_cq = sv_modify_cq;
	return 0;
}

SV_CTX_PROVIDER(cq, sv_cq_ctx_init, NULL);
