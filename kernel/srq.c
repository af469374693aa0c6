// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs shared receive queues: create, modify (resize, arm the
 * limit), query, destroy. QPs that use an SRQ hold its usecnt, so destroying it while a
 * QP uses it is EBUSY. The SRQ names its PD (a reference and a usecnt).
 *
 * Resizing moves the ring (engine.c, sv_wq_resize()); the data path and
 * the limit event are exec.c's.
 *
 * An XRC SRQ also names its XRC domain (a reference, and a usecnt on the
 * file's handle) and its CQ (a reference and a usecnt), and is found by
 * number (sdev->xsrqs) by the TGT QPs of its domain, which hold no
 * usecnt on it: destroying sets dead under its lock and its ring's, so a
 * TGT QP delivering into it (exec.c) sees either a live SRQ for the
 * whole delivery or a dead one; the memory goes after an RCU grace period.
 */
#include <linux/log2.h>
#include <linux/slab.h>

#include "sv.h"

static struct sv_srq *to_sv_srq(struct sv_uobj *u)
{
	return container_of(u, struct sv_srq, uobj);
}

static void sv_srq_destroy(struct sv_uobj *u)
{
	struct sv_srq *srq = to_sv_srq(u);
	struct sv_device *sdev = u->file->sdev;

	if (srq->xrcd)
		xa_erase(&sdev->xsrqs, srq->srqn);
	sv_wq_lock(&srq->rq);
	spin_lock_bh(&srq->lock);
	srq->dead = true;
	spin_unlock_bh(&srq->lock);
	sv_wq_unlock(&srq->rq);
	sv_async_event_detach(u->file, &srq->events);
	sv_wq_fini(u->file, &srq->rq);
	ida_free(&sdev->srqns, srq->srqn);
	atomic_dec(&srq->pd->usecnt);
	if (srq->cq)
		atomic_dec(&srq->cq->usecnt);
	if (srq->xrcd_handle)
		atomic_dec(&srq->xrcd_handle->usecnt);
}

static void sv_srq_free(struct sv_uobj *u)
{
	struct sv_srq *srq = to_sv_srq(u);

	sv_uobj_put(srq->pd);
	if (srq->cq)
		sv_uobj_put(srq->cq);
	if (srq->xrcd) {
		sv_uobj_put(srq->xrcd_handle);
		sv_xrcd_put(srq->xrcd);
	}
	sv_wq_free(&srq->rq);
	if (srq->tm)
		sv_tm_free(srq);
	kfree_rcu(srq, rcu);
}

static const struct sv_uobj_ops sv_srq_ops = {
	.destroy = sv_srq_destroy,
	.free = sv_srq_free,
};

/*
 * An XRC SRQ's domain and CQ, a TM SRQ's CQ and tag list: referenced and
 * in use.
 */
static int sv_srq_own_get(struct sv_file *f, struct sv_srq *srq,
			  struct sv_create_srq *c)
{
	struct sv_uobj *cq, *xu = NULL;
	int ret;

	cq = sv_uobj_get(f, c->cq_handle, SV_OBJ_CQ);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	if (c->srq_type == SV_SRQT_TM) {
		ret = sv_tm_create(srq, c->max_num_tags, c->max_ops);
		if (ret) {
			sv_uobj_put(cq);
			return ret;
		}
	} else {
		xu = sv_xrcd_use(f, c->xrcd_handle, &srq->xrcd);
		if (IS_ERR(xu)) {
			sv_uobj_put(cq);
			return PTR_ERR(xu);
		}
	}
	atomic_inc(&cq->usecnt);
	srq->cq = cq;
	srq->xrcd_handle = xu;
	return 0;
}

static void sv_srq_own_put(struct sv_srq *srq)
{
	if (!srq->cq)
		return;
	if (srq->xrcd)
		sv_xrcd_unuse(srq->xrcd_handle, srq->xrcd);
	if (srq->tm)
		sv_tm_free(srq);
	atomic_dec(&srq->cq->usecnt);
	sv_uobj_put(srq->cq);
}

/* The arguments of a TM SRQ (VER2), and nothing of one elsewhere. */
static int sv_srq_tm_args(const struct sv_create_srq *c)
{
	if (c->srq_type != SV_SRQT_TM)
		return c->max_num_tags || c->max_ops ? -EINVAL : 0;
	if (c->size < SV_CREATE_SRQ_SIZE_VER2 || c->xrcd_handle ||
	    !c->max_num_tags || c->max_num_tags > SV_TM_MAX_NUM_TAGS ||
	    !c->max_ops || c->max_ops > SV_TM_MAX_OPS)
		return -EINVAL;
	return 0;
}

int sv_create_srq(struct sv_file *f, void *arg)
{
	struct sv_create_srq *c = arg;
	struct sv_srq *srq;
	struct sv_uobj *pd;
	int ret;

	if (c->reserved || c->reserved2 || c->reserved3)
		return -EINVAL;
	if (c->max_wr > sv_depth(f->sdev, SV_DEPTH_SRQ_WR) ||
	    c->max_sge > SV_MAX_SRQ_SGE)
		return -EINVAL;
	/* 0 is the smallest SRQ, as mlx5 makes it (rxe refuses it). */
	c->max_wr = max(c->max_wr, 1U);
	if (c->srq_type > SV_SRQT_TM ||
	    (c->srq_type == SV_SRQT_BASIC && (c->xrcd_handle || c->cq_handle)))
		return -EINVAL;
	ret = sv_srq_tm_args(c);
	if (ret)
		return ret;

	pd = sv_uobj_get(f, c->pd_handle, SV_OBJ_PD);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	srq = kzalloc(sizeof(*srq), GFP_KERNEL_ACCOUNT);
	if (!srq) {
		sv_uobj_put(pd);
		return -ENOMEM;
	}
	/* max_srq (ENOMEM), the user's share and the rdma cgroup (EAGAIN) */
	ret = sv_charge(f, SV_OBJ_SRQ, &srq->uobj.charge);
	if (ret)
		goto err_free;
	srq->pd = pd;
	if (c->srq_type != SV_SRQT_BASIC) {
		ret = sv_srq_own_get(f, srq, c);
		if (ret)
			goto err_uncharge;
	}
	srq->user_handle = c->user_handle;
	spin_lock_init(&srq->lock);
	sv_event_obj_init(&srq->events);
	srq->max_wr = roundup_pow_of_two(c->max_wr);
	srq->max_sge = c->max_sge;
	mutex_init(&srq->rq.lock);
	ret = sv_wq_init(f, &srq->rq, srq->max_wr,
			 sizeof(struct sv_recv_wqe) +
			 srq->max_sge * sizeof(struct sv_sge));
	if (ret)
		goto err_xrc;
	srq->srqn = ida_alloc_range(&f->sdev->srqns, 1, SV_QPN_MASK,
				    GFP_KERNEL);
	if (srq->srqn < 0) {
		ret = srq->srqn;
		goto err_wq;
	}
	atomic_inc(&pd->usecnt);
	ret = sv_uobj_add(f, &srq->uobj, SV_OBJ_SRQ, &sv_srq_ops);
	if (ret)
		goto err_srqn;
	/* The TGT QPs of its domain find it from now on. */
	if (srq->xrcd)
		xa_store(&f->sdev->xsrqs, srq->srqn, srq, GFP_KERNEL);
	c->handle = srq->uobj.handle;
	c->srqn = srq->srqn;
	c->max_wr = srq->max_wr;
	c->max_sge = srq->max_sge;
	return 0;

err_srqn:
	atomic_dec(&pd->usecnt);
	ida_free(&f->sdev->srqns, srq->srqn);
err_wq:
	sv_wq_fini(f, &srq->rq);
	sv_wq_free(&srq->rq);
err_xrc:
	sv_srq_own_put(srq);
err_uncharge:
	sv_uncharge(&srq->uobj.charge);
err_free:
	sv_uobj_put(pd);
	kfree(srq);
	return ret;
}

/* SV_SRQ_MAX_WR: a new ring (engine.c), the caller told where. */
static int sv_srq_resize(struct sv_file *f, struct sv_srq *srq,
			 struct sv_modify_srq *m)
{
	u32 max, limit;
	int ret;

	if (m->size < SV_MODIFY_SRQ_SIZE_VER1 || !m->max_wr ||
	    m->max_wr > sv_depth(f->sdev, SV_DEPTH_SRQ_WR))
		return -EINVAL;
	max = roundup_pow_of_two(m->max_wr);
	spin_lock_bh(&srq->lock);
	limit = srq->limit;
	spin_unlock_bh(&srq->lock);
	if (limit > max ||
	    ((m->attr_mask & SV_SRQ_LIMIT) && m->srq_limit > max))
		return -EINVAL;
	ret = sv_wq_resize(f, &srq->rq, max);
	if (ret)
		return ret;
	spin_lock_bh(&srq->lock);
	srq->max_wr = max;
	spin_unlock_bh(&srq->lock);
	m->max_wr = max;
	m->mmap_offset = srq->rq.mmap_offset;
	m->mmap_len = srq->rq.buf->size;
	return 0;
}

int sv_modify_srq(struct sv_file *f, void *arg)
{
	struct sv_modify_srq *m = arg;
	struct sv_srq *srq;
	struct sv_uobj *u;
	int ret = 0;

	if (m->reserved || (m->attr_mask & ~(SV_SRQ_MAX_WR | SV_SRQ_LIMIT)))
		return -EINVAL;
	u = sv_uobj_get(f, m->handle, SV_OBJ_SRQ);
	if (IS_ERR(u))
		return PTR_ERR(u);
	srq = to_sv_srq(u);
	if (m->attr_mask & SV_SRQ_MAX_WR)
		ret = sv_srq_resize(f, srq, m);
	if (!ret && (m->attr_mask & SV_SRQ_LIMIT)) {
		spin_lock_bh(&srq->lock);
		if (m->srq_limit > srq->max_wr)
			ret = -EINVAL;
		else
			srq->limit = m->srq_limit;
		spin_unlock_bh(&srq->lock);
	}
	sv_uobj_put(u);
	return ret;
}

int sv_query_srq(struct sv_file *f, void *arg)
{
	struct sv_query_srq *q = arg;
	struct sv_srq *srq;
	struct sv_uobj *u;

	if (q->reserved)
		return -EINVAL;
	u = sv_uobj_get(f, q->handle, SV_OBJ_SRQ);
	if (IS_ERR(u))
		return PTR_ERR(u);
	srq = to_sv_srq(u);
	spin_lock_bh(&srq->lock);
	q->max_wr = srq->max_wr;
	q->max_sge = srq->max_sge;
	q->srq_limit = srq->limit;
	spin_unlock_bh(&srq->lock);
	sv_uobj_put(u);
	return 0;
}

int sv_destroy_srq(struct sv_file *f, void *arg)
{
	struct sv_destroy_srq *d = arg;
	struct sv_uobj *u;
	int ret;

	if (d->reserved)
		return -EINVAL;
	u = sv_uobj_get(f, d->handle, SV_OBJ_SRQ);
	if (IS_ERR(u))
		return PTR_ERR(u);
	ret = sv_uobj_destroy(f, d->handle, SV_OBJ_SRQ);
	if (!ret)
		d->events_reported = to_sv_srq(u)->events.async_reported;
	sv_uobj_put(u);
	return ret;
}
