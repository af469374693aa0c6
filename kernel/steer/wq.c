// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs receive work queues (ibv_create_wq, IBV_WQT_RQ): a receive
 * ring in the RQ format of a QP, its CQ and PD, and the states RESET, RDY
 * and ERR. Frames reach a WQ only through an RSS QP's indirection table
 * (rss.c), which calls sv_rwq_recv_frame() in the receiving softirq.
 *
 * Life of a WQ: SV_IOC_CREATE_WQ takes a reference and a usecnt on its PD
 * and CQ, reserves a number in the device's QP number space (an empty
 * entry: no QP lookup ever finds it) and a handle. Indirection tables
 * hold a WQ's usecnt, so destroying a WQ in a table is EBUSY; an RSS QP
 * holds its table the same way, so no frame is delivered to a WQ that is
 * being destroyed.
 *
 * States (ibv_modify_wq(3)): RESET -> RDY, RDY -> RDY (flags), RDY -> ERR,
 * ERR -> ERR, any -> RESET. Receives may be posted in every state; only a
 * RDY WQ takes frames (a frame for another is dropped and counted in
 * rx_raw_drops). Entering ERR, and modifying to ERR again, completes
 * every posted WQE with IBV_WC_WR_FLUSH_ERR; RESET forgets them.
 */
#include <linux/slab.h>

#include "rss.h"

#define SV_WQ_FLAGS_KNOWN	(SV_WQ_FLAGS_CVLAN_STRIPPING |		\
				 SV_WQ_FLAGS_SCATTER_FCS |		\
				 SV_WQ_FLAGS_DELAY_DROP |		\
				 SV_WQ_FLAGS_PCI_WRITE_END_PADDING)
/* PCI_WRITE_END_PADDING: accepted, changes nothing (as for a QP) */
#define SV_WQ_FLAGS_SUPPORTED	(SV_WQ_FLAGS_CVLAN_STRIPPING |		\
				 SV_WQ_FLAGS_SCATTER_FCS |		\
				 SV_WQ_FLAGS_PCI_WRITE_END_PADDING)
#define SV_WQ_ATTR_KNOWN	(SV_WQ_ATTR_STATE | SV_WQ_ATTR_CURR_STATE | \
				 SV_WQ_ATTR_FLAGS)

static struct sv_rwq *to_sv_rwq(struct sv_uobj *u)
{
	return container_of(u, struct sv_rwq, uobj);
}

/* The WQ named by handle, referenced, or an ERR_PTR. */
struct sv_rwq *sv_rwq_get(struct sv_file *f, u32 handle)
{
	struct sv_uobj *u = sv_uobj_get(f, handle, SV_OBJ_WQ);

	return IS_ERR(u) ? ERR_CAST(u) : to_sv_rwq(u);
}

static void sv_rwq_destroy(struct sv_uobj *u)
{
	struct sv_rwq *wq = to_sv_rwq(u);

	sv_wq_fini(u->file, &wq->shadow.rq);
	xa_erase(&wq->sdev->qps, wq->shadow.qpn);
	atomic_dec(&wq->shadow.pd->usecnt);
	atomic_dec(&wq->shadow.recv_cq->usecnt);
}

static void sv_rwq_free(struct sv_uobj *u)
{
	struct sv_rwq *wq = to_sv_rwq(u);

	sv_wq_free(&wq->shadow.rq);
	sv_uobj_put(wq->shadow.pd);
	sv_uobj_put(wq->shadow.recv_cq);
	kfree(wq);
}

/* SV_IOC_MOVE_RING of a WQ (u): its ring's size */
size_t sv_rwq_ring_size(struct sv_uobj *u)
{
	return to_sv_rwq(u)->shadow.rq.buf->size;
}

/*
 * SV_IOC_MOVE_RING of a WQ in RESET: no RSS QP delivers into it (a WQ
 * takes frames in RDY only; a modify needs f->lock, which is held).
 */
int sv_rwq_move(struct sv_file *f, struct sv_uobj *u, struct sv_mbuf *nb)
{
	struct sv_rwq *wq = to_sv_rwq(u);
	u32 state;

	lockdep_assert_held(&f->lock);
	sv_wq_lock(&wq->shadow.rq);
	state = wq->state;
	sv_wq_unlock(&wq->shadow.rq);
	if (state != SV_WQS_RESET)
		return -EINVAL;
	return sv_wq_move_one(f, &wq->shadow.rq, nb);
}

static const struct sv_uobj_ops sv_rwq_ops = {
	.destroy = sv_rwq_destroy,
	.free = sv_rwq_free,
};

static int sv_rwq_check_flags(u32 flags)
{
	if (flags & ~SV_WQ_FLAGS_KNOWN)
		return -EINVAL;
	if (flags & ~SV_WQ_FLAGS_SUPPORTED)
		return -EOPNOTSUPP;
	return 0;
}

int sv_create_wq(struct sv_file *f, void *arg)
{
	struct sv_device *sdev = f->sdev;
	struct sv_create_wq *c = arg;
	struct sv_uobj *pd, *cq;
	struct sv_rwq *wq;
	int ret;

	if (c->reserved || c->wq_type != SV_WQT_RQ)
		return -EINVAL;
	if (!c->max_wr || c->max_wr > sv_depth(sdev, SV_DEPTH_QP_WR) ||
	    c->max_sge > SV_MAX_SGE)
		return -EINVAL;
	ret = sv_rwq_check_flags(c->flags);
	if (ret)
		return ret;

	pd = sv_uobj_get(f, c->pd_handle, SV_OBJ_PD);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	cq = sv_uobj_get(f, c->cq_handle, SV_OBJ_CQ);
	if (IS_ERR(cq)) {
		sv_uobj_put(pd);
		return PTR_ERR(cq);
	}
	wq = kzalloc(sizeof(*wq), GFP_KERNEL_ACCOUNT);
	if (!wq) {
		ret = -ENOMEM;
		goto err_put;
	}
	/* SV_MAX_WQ (ENOMEM), the user's share and the rdma cgroup (EAGAIN) */
	ret = sv_charge(f, SV_OBJ_WQ, &wq->uobj.charge);
	if (ret)
		goto err_free;
	wq->sdev = sdev;
	wq->state = SV_WQS_RESET;
	wq->flags = c->flags;
	wq->user_handle = c->user_handle;
	wq->shadow.sdev = sdev;
	wq->shadow.qp_type = SV_QPT_RAW_PACKET;
	wq->shadow.pd = pd;
	wq->shadow.recv_cq = cq;
	wq->shadow.cap.max_recv_wr = roundup_pow_of_two(c->max_wr);
	wq->shadow.cap.max_recv_sge = c->max_sge;
	spin_lock_init(&wq->shadow.lock);
	mutex_init(&wq->shadow.rq.lock);
	/* Frames reach a WQ in softirq (steer/rx.c): no sleeping consumer */
	spin_lock_init(&wq->shadow.rq.bh_lock);
	wq->shadow.rq.bh = true;
	ret = sv_wq_init(f, &wq->shadow.rq, wq->shadow.cap.max_recv_wr,
			 sizeof(struct sv_recv_wqe) +
			 c->max_sge * sizeof(struct sv_sge));
	if (ret)
		goto err_uncharge;
	/* A number of the QP space, never a QP: the entry stays empty. */
	ret = xa_alloc_cyclic(&sdev->qps, &wq->shadow.qpn, NULL,
			      XA_LIMIT(2, SV_QPN_MASK - 1), &sdev->next_qpn,
			      GFP_KERNEL);
	if (ret < 0) {
		ret = ret == -EBUSY ? -ENOMEM : ret;
		goto err_ring;
	}
	atomic_inc(&pd->usecnt);
	atomic_inc(&cq->usecnt);
	ret = sv_uobj_add(f, &wq->uobj, SV_OBJ_WQ, &sv_rwq_ops);
	if (ret) {
		atomic_dec(&pd->usecnt);
		atomic_dec(&cq->usecnt);
		xa_erase(&sdev->qps, wq->shadow.qpn);
		goto err_ring;
	}
	c->handle = wq->uobj.handle;
	c->wqn = wq->shadow.qpn;
	c->max_wr = wq->shadow.cap.max_recv_wr;
	c->ring_offset = wq->shadow.rq.mmap_offset;
	c->ring_len = wq->shadow.rq.buf->size;
	return 0;

err_ring:
	sv_wq_fini(f, &wq->shadow.rq);
	sv_wq_free(&wq->shadow.rq);
err_uncharge:
	sv_uncharge(&wq->uobj.charge);
err_free:
	kfree(wq);
err_put:
	sv_uobj_put(pd);
	sv_uobj_put(cq);
	return ret;
}

/* Complete every posted WQE with WR_FLUSH_ERR. Under the ring's lock. */
static void sv_rwq_flush(struct sv_rwq *wq)
{
	struct sv_wq *rq = &wq->shadow.rq;
	/* Pairs with the library's release store of prod (uapi contract). */
	u32 prod = smp_load_acquire(&rq->ring->prod);
	u64 wr_id;
	void *slot;

	sv_wq_assert_held(rq);
	WRITE_ONCE(rq->ring->flags, SV_WQ_RING_ERR);
	if (prod - rq->cons > rq->entries)
		rq->cons = prod - rq->entries;	/* bogus: flush what fits */
	while (rq->cons != prod) {
		slot = rq->wqes +
		       (size_t)(rq->cons & (rq->entries - 1)) * rq->wqe_size;
		wr_id = READ_ONCE(*(u64 *)slot);
		rq->cons++;
		/* The slot is the library's again before the CQE shows. */
		smp_store_release(&rq->ring->cons, rq->cons);
		sv_dp_push(wq->shadow.recv_cq, wr_id, 5 /* WR_FLUSH_ERR */,
			   128 /* IBV_WC_RECV */, 0, wq->shadow.qpn, true);
	}
	/* Hand back the slots (also those of a bogus prod we skipped). */
	smp_store_release(&rq->ring->cons, rq->cons);
}

static void sv_rwq_reset(struct sv_rwq *wq)
{
	struct sv_wq *rq = &wq->shadow.rq;

	sv_wq_assert_held(rq);
	rq->cons = READ_ONCE(rq->ring->prod);
	/* Every slot is the library's again (its acquire load of cons). */
	smp_store_release(&rq->ring->cons, rq->cons);
	WRITE_ONCE(rq->ring->flags, 0);
}

static bool sv_rwq_transition_ok(u32 cur, u32 next)
{
	switch (next) {
	case SV_WQS_RESET:
		return true;
	case SV_WQS_RDY:
		return cur == SV_WQS_RESET || cur == SV_WQS_RDY;
	case SV_WQS_ERR:
		return cur == SV_WQS_RDY || cur == SV_WQS_ERR;
	default:
		return false;
	}
}

int sv_modify_wq(struct sv_file *f, void *arg)
{
	struct sv_modify_wq *m = arg;
	struct sv_rwq *wq;
	u32 cur, next, flags;
	int ret = 0;

	if (m->reserved || (m->attr_mask & ~SV_WQ_ATTR_KNOWN))
		return -EINVAL;
	if (m->attr_mask & SV_WQ_ATTR_FLAGS) {
		ret = sv_rwq_check_flags(m->flags_mask);
		if (ret)
			return ret;
		if (m->flags & ~m->flags_mask)
			return -EINVAL;
	}
	wq = sv_rwq_get(f, m->handle);
	if (IS_ERR(wq))
		return PTR_ERR(wq);
	sv_wq_lock(&wq->shadow.rq);
	cur = wq->state;
	next = (m->attr_mask & SV_WQ_ATTR_STATE) ? m->state : cur;
	flags = wq->flags;
	if (m->attr_mask & SV_WQ_ATTR_FLAGS)
		flags = (flags & ~m->flags_mask) | m->flags;
	if ((m->attr_mask & SV_WQ_ATTR_CURR_STATE) && m->curr_state != cur)
		ret = -EINVAL;
	else if ((m->attr_mask & SV_WQ_ATTR_STATE) &&
		 !sv_rwq_transition_ok(cur, next))
		ret = -EINVAL;
	if (!ret) {
		WRITE_ONCE(wq->flags, flags);
		WRITE_ONCE(wq->state, next);
		if (next == SV_WQS_RESET)
			sv_rwq_reset(wq);
		else if (next == SV_WQS_ERR)
			sv_rwq_flush(wq);
	}
	sv_wq_unlock(&wq->shadow.rq);
	sv_uobj_put(&wq->uobj);
	return ret;
}

int sv_destroy_wq(struct sv_file *f, void *arg)
{
	struct sv_destroy_wq *d = arg;

	return sv_uobj_destroy(f, d->handle, SV_OBJ_WQ);
}

/* The SV_RX_* a WQ's flags ask for (its frames are RAW_PACKET ones). */
static u32 sv_rwq_rx_flags(u32 flags)
{
	u32 f = SV_RX_CSUM;

	if (flags & SV_WQ_FLAGS_CVLAN_STRIPPING)
		f |= SV_RX_STRIP_CVLAN;
	if (flags & SV_WQ_FLAGS_SCATTER_FCS)
		f |= SV_RX_SCATTER_FCS;
	return f;
}

/**
 * sv_rwq_recv_frame - place one frame an RSS QP steered into a WQE of wq
 * @wq: the WQ its indirection table picked
 * @skb: the frame (data at the network header), the caller's to free
 * @m: the flow's tag and the frame's arrival time (of m->flags only
 *	SV_RX_TUNNEL, the RSS QP's, counts: the WQ's flags decide the rest)
 * @buf: sv_exec_buf_size() bytes of scratch memory
 *
 * With CVLAN stripping the VLAN tag stays out of the frame and its TCI is
 * in the completion; with SCATTER_FCS the frame's 4-byte FCS follows it
 * (and counts in byte_len): sv_rx_frame_prep(), as for a RAW_PACKET QP's
 * create flags. False if the frame was dropped: the WQ is not RDY or has
 * no WQE.
 */
bool sv_rwq_recv_frame(struct sv_rwq *wq, struct sk_buff *skb,
		       const struct sv_rx_meta *m, void *buf)
{
	struct sv_rx_meta wm = *m;

	if (READ_ONCE(wq->state) != SV_WQS_RDY)
		return false;
	/* The RSS QP's TIR decides about tunnels, as mlx5's */
	wm.flags = sv_rwq_rx_flags(READ_ONCE(wq->flags)) |
		   (m->flags & SV_RX_TUNNEL);
	return sv_exec_recv_frame(&wq->shadow, skb, &wm, buf);
}
