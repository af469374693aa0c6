// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs memory windows: ibv_alloc_mw(), ibv_bind_mw() and
 * IBV_WR_BIND_MW, IBV_WR_LOCAL_INV and IBV_WR_SEND_WITH_INV on them.
 *
 * A window is a key in the MR key space (mr.h) laid out, like an mlx5
 * indirect key (mkey.c), over one range of one MR: remote accesses
 * through it are checked against the window's rights and bounds, then
 * the bytes are taken from the MR by its lkey with the window's PD and a
 * local right, so an MR deregistered under a window fails the accesses
 * that reach it. A window is never an lkey: only a responder's remote
 * access goes through it (sv_mw_check()).
 *
 * The rules are the InfiniBand ones (IBA 10.6.7, as rxe and mlx5 apply
 * them):
 * - type 1 windows are valid from birth with no range; ibv_bind_mw()
 *   binds, rebinds or (length 0) unbinds them; they are never zero-based
 *   and never invalidated by LOCAL_INV or SEND_WITH_INV;
 * - type 2 windows (2B) are born free; a bind needs a free window, a
 *   non-empty range, and the window's PD on the QP (C10-72); accesses go
 *   only through the QP that bound it; LOCAL_INV or SEND_WITH_INV of its
 *   current key frees it;
 * - the MR: same PD, IBV_ACCESS_MW_BIND (C10-73), LOCAL_WRITE for a
 *   window with a remote write or atomic right (C10-74), the range inside
 *   it (C10-75); not zero-based itself, not an indirect key or window;
 * - each bind gives the window the key the WR names (same index: only
 *   the low 8 bits, ibv_inc_rkey(), change), so that a peer holding an
 *   old key loses access.
 * A bind that breaks a rule completes with IBV_WC_MW_BIND_ERR.
 *
 * While bound, a window holds a reference to its MR and raises the MR's
 * use count, so ibv_dereg_mr() of that MR fails with EBUSY (as
 * ibv_dereg_mr(3) says); a type 2 window holds a reference to its QP.
 * Bind, invalidation and destroy run under mw->lock with the window's
 * key closed (sv_mr_close(): accesses in flight finish first), so an
 * access sees one whole binding. They are executed by the QP's engine or
 * by the file's control path; nothing here waits for f->lock.
 */
#include <linux/slab.h>

#include "../sv.h"
#include "mr.h"

/*
 * The rights a window may have (ibv_bind_mw(3): mw_access_flags). A
 * bind may also name LOCAL_WRITE, as mlx5 and rxe take it (pyverbs'
 * tests ask for it); a window is no lkey, so it grants nothing and is
 * not kept.
 */
#define SV_MW_RIGHTS	(SV_ACCESS_REMOTE_WRITE | SV_ACCESS_REMOTE_READ | \
			 SV_ACCESS_REMOTE_ATOMIC)
#define SV_MW_ACCESS	(SV_MW_RIGHTS | SV_ACCESS_ZERO_BASED | \
			 SV_ACCESS_LOCAL_WRITE)
#define SV_MW_KEY_TAG	0xffU

struct sv_mw {
	struct mutex lock;		/* bind, invalidate, destroy */
	u32 type;			/* SV_MW_TYPE_* */
	/* Bound (under lock, the key closed): */
	struct sv_mr *target;		/* referenced, usecnt raised */
	struct sv_qp *qp;		/* type 2: the binder, referenced */
};

static struct sv_mr *to_sv_mr(struct sv_uobj *u)
{
	return container_of(u, struct sv_mr, uobj);
}

/*
 * May an access through the window mr reach it now? qp: the responder of
 * a remote access, NULL for a local one. Called by sv_mr_check(), the key
 * entered (its binding does not change under us).
 */
int sv_mw_check(const struct sv_mr *mr, const struct sv_qp *qp)
{
	if (!qp)
		return -ENOENT;		/* a window is no lkey */
	if (mr->mw->type == SV_MW_TYPE_2 && mr->mw->qp != qp)
		return -EACCES;
	return 0;
}

/*
 * Detach the window's binding (mw->lock held, the key closed) and lay it
 * out empty; the references it held are handed back to drop unlocked.
 */
static void sv_mw_unbind(struct sv_mr *mr, struct sv_mr **target,
			 struct sv_qp **qp)
{
	struct sv_mw *mw = mr->mw;

	*target = mw->target;
	*qp = mw->qp;
	mw->target = NULL;
	mw->qp = NULL;
	sv_mkey_set_range(mr->mkey, 0, 0, 0, 0, 0);
}

static void sv_mw_drop(struct sv_mr *target, struct sv_qp *qp)
{
	if (target) {
		atomic_dec(&target->uobj.usecnt);
		sv_mr_put(target);
	}
	if (qp)
		sv_qp_put(qp);
}

/*
 * The MR a bind names, checked against the window's rules and
 * referenced with its use count raised; NULL if a rule is broken.
 */
static struct sv_mr *sv_mw_target(struct sv_qp *qp, u32 lkey, u64 addr,
				  u64 len, u32 access)
{
	struct sv_mr_span sp;
	struct sv_mr *t;
	bool ok;

	/* Same PD as the QP (and the window), the range inside the MR. */
	if (sv_mr_span_get(qp->sdev, lkey, sv_qp_pd(qp), 0, addr, len, &sp,
			   NULL))
		return NULL;
	t = sp.mr;
	/* Entered: the MR's access does not change under us. */
	ok = !t->mkey && !(t->access & SV_ACCESS_ZERO_BASED) &&
	     (t->access & SV_ACCESS_MW_BIND) &&
	     (!(access & (SV_ACCESS_REMOTE_WRITE | SV_ACCESS_REMOTE_ATOMIC)) ||
	      (t->access & SV_ACCESS_LOCAL_WRITE));
	if (ok) {
		kref_get(&t->uobj.ref);
		atomic_inc(&t->uobj.usecnt);
	}
	sv_mr_span_put(&sp);
	return ok ? t : NULL;
}

/**
 * sv_mw_bind - execute an SV_WR_BIND_MW of qp
 * @qp: an RC or UC QP; its engine holds qp->sq.lock
 * @w: the WQE, copied out of the ring
 *
 * Returns the WC status: 0, LOC_QP_OP_ERR for a malformed WQE, MW_BIND_ERR
 * for a bind the rules refuse (the window is left as it was).
 */
u32 sv_mw_bind(struct sv_qp *qp, const struct sv_send_wqe *w)
{
	u32 access = w->remote_qkey, lkey = lower_32_bits(w->swap);
	u64 addr = w->remote_addr, len = w->compare_add;
	struct sv_mr *mr, *target = NULL, *old;
	u32 status = SV_WC_STATUS_MW_BIND_ERR;
	struct sv_qp *old_qp;
	struct sv_mw *mw;

	if (w->num_sge || w->inline_len)
		return SV_WC_STATUS_LOC_QP_OP_ERR;
	if ((w->imm_data ^ w->rkey) & ~SV_MW_KEY_TAG ||
	    (access & ~SV_MW_ACCESS) || len > SV_MAX_MR_SIZE)
		return status;
	access &= ~SV_ACCESS_LOCAL_WRITE;
	mr = sv_mr_lookup_key(qp->sdev, w->rkey);
	if (!mr)
		return status;
	mw = mr->mw;
	/* The window's PD is the QP's (C10-72; for type 1 the MR's too). */
	if (!mw || READ_ONCE(mr->pd) != sv_qp_pd(qp))
		goto out;
	mutex_lock(&mw->lock);
	if (READ_ONCE(mr->key) != w->rkey)	/* rebound or destroyed */
		goto unlock;
	/* Type 1: never zero-based. Type 2: free, and a range (o10-37.2.40). */
	if (mw->type == SV_MW_TYPE_1 && (access & SV_ACCESS_ZERO_BASED))
		goto unlock;
	if (mw->type == SV_MW_TYPE_2 && (mw->target || !len))
		goto unlock;
	if (len) {
		target = sv_mw_target(qp, lkey, addr, len, access);
		if (!target)
			goto unlock;
	}
	sv_mr_close(mr);
	sv_mw_unbind(mr, &old, &old_qp);
	if (target) {
		mw->target = target;
		sv_mkey_set_range(mr->mkey, lkey, addr, len,
				  access & SV_ACCESS_ZERO_BASED ? 0 : addr,
				  access);
		if (mw->type == SV_MW_TYPE_2) {
			kref_get(&qp->uobj.ref);
			mw->qp = qp;
		}
	}
	WRITE_ONCE(mr->key, w->imm_data);
	sv_mr_open(mr);
	status = 0;
unlock:
	mutex_unlock(&mw->lock);
	if (!status)
		sv_mw_drop(old, old_qp);
out:
	sv_mr_put(mr);
	return status;
}

/*
 * Free the type 2 window mr whose key is key, for a QP of pd: LOCAL_INV
 * on the requester (mkey.c), SEND_WITH_INV on the responder. -EINVAL if
 * it is not a bound type 2 window of pd with that key.
 */
int sv_mw_invalidate(struct sv_mr *mr, struct sv_pd *pd, u32 key)
{
	struct sv_mw *mw = mr->mw;
	struct sv_mr *old = NULL;
	struct sv_qp *old_qp = NULL;
	int ret = -EINVAL;

	if (mw->type != SV_MW_TYPE_2 || READ_ONCE(mr->pd) != pd)
		return ret;
	mutex_lock(&mw->lock);
	if (READ_ONCE(mr->key) == key && mw->target) {
		sv_mr_close(mr);
		sv_mw_unbind(mr, &old, &old_qp);
		sv_mr_open(mr);
		ret = 0;
	}
	mutex_unlock(&mw->lock);
	sv_mw_drop(old, old_qp);
	return ret;
}

/*
 * SEND_WITH_INV arriving at a responder of PD pd on sdev: free its
 * window rkey. 0 or -EINVAL.
 */
int sv_mw_remote_inv(struct sv_device *sdev, struct sv_pd *pd, u32 rkey)
{
	struct sv_mr *mr = sv_mr_lookup_key(sdev, rkey);
	int ret = -EINVAL;

	if (!mr)
		return ret;
	if (mr->mw)
		ret = sv_mw_invalidate(mr, pd, rkey);
	sv_mr_put(mr);
	return ret;
}

/* ---- the object ---- */

static void sv_mw_destroy(struct sv_uobj *u)
{
	struct sv_mr *mr = to_sv_mr(u);
	struct sv_mw *mw = mr->mw;
	struct sv_mr *old;
	struct sv_qp *old_qp;
	struct sv_pd *pd;

	lockdep_assert_held(&u->file->lock);
	sv_mr_key_release(mr);
	mutex_lock(&mw->lock);
	sv_mr_close(mr);
	WRITE_ONCE(mr->key, 0);
	sv_mw_unbind(mr, &old, &old_qp);
	pd = mr->pd;
	mr->pd = NULL;
	mutex_unlock(&mw->lock);
	sv_mw_drop(old, old_qp);
	sv_pd_unpin(pd);
}

static void sv_mw_free(struct sv_uobj *u)
{
	struct sv_mr *mr = to_sv_mr(u);

	mutex_destroy(&mr->mw->lock);
	kfree(mr->mw);
	sv_mkey_release(mr->mkey);
	sv_mr_free(u);
}

static const struct sv_uobj_ops sv_mw_ops = {
	.destroy = sv_mw_destroy,
	.free = sv_mw_free,
};

int sv_alloc_mw(struct sv_file *f, void *arg)
{
	struct sv_alloc_mw *cmd = arg;
	struct sv_mr *mr;
	int ret;

	if (cmd->reserved ||
	    (cmd->type != SV_MW_TYPE_1 && cmd->type != SV_MW_TYPE_2))
		return -EINVAL;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return -ENOMEM;
	mr->mw = kzalloc(sizeof(*mr->mw), GFP_KERNEL_ACCOUNT);
	if (!mr->mw) {
		kfree(mr);
		return -ENOMEM;
	}
	mutex_init(&mr->mw->lock);
	mr->mw->type = cmd->type;
	mr->mkey = sv_mkey_new(1);
	if (!mr->mkey) {
		sv_mw_free(&mr->uobj);
		return -ENOMEM;
	}
	/* A window is an MR to the device's limits, as on mlx5. */
	ret = sv_mr_obj_add(f, mr, cmd->pd_handle, SV_OBJ_MW, &sv_mw_ops);
	if (ret)
		return ret;
	cmd->mw_handle = mr->uobj.handle;
	cmd->rkey = mr->key;
	return 0;
}

int sv_dealloc_mw(struct sv_file *f, void *arg)
{
	struct sv_dealloc_mw *cmd = arg;

	return sv_uobj_destroy(f, cmd->mw_handle, SV_OBJ_MW);
}
