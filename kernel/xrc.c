// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs XRC: domains, TGT QPs and the handles files hold on them.
 *
 * An XRC domain (struct sv_xrcd) belongs to the device, not to a file.
 * ibv_open_xrcd() with a file descriptor finds the domain of that file's
 * inode on the device, or makes it (O_CREAT), so that processes share a
 * domain by opening the same file; without one (fd -1) the domain is new
 * and nobody else can name it. Each open is a handle (SV_OBJ_XRCD) in the
 * file; the domain lives while a handle, an XRC SRQ (srq.c) or a TGT QP
 * holds a reference, and leaves the device's list with its last one
 * (kref_put_mutex() under sdev->xrcd_lock, so a lookup never finds a
 * domain on its way out).
 *
 * An XRC TGT QP is the domain's too: its creator and every file that
 * ibv_open_qp()s it hold handles (SV_OBJ_XRC_QP) of equal standing, each
 * with its own user_handle for async events, and the QP goes with the
 * last handle, whoever held it. The QP itself is in no file's table
 * (qp->uobj.file is NULL): it has no queues and no engine, and receives
 * in the requester's engine (exec.c) into the XRC SRQ each request names.
 *
 * Locks: f->lock (the ioctl) -> sdev->xrcd_lock -> xrcd->lock ->
 * qp->lock. The handle list of a TGT QP is under both xrcd->lock (who
 * adds and removes) and qp->lock (who reads it to raise events).
 */
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>

#include "sv.h"

struct sv_xrcd {
	struct kref ref;
	struct sv_device *sdev;
	struct inode *inode;		/* NULL: made without a file */
	struct list_head node;		/* on sdev->xrcds, with an inode */
	struct mutex lock;		/* tgt_qps and their handle lists */
	struct xarray tgt_qps;		/* qpn -> TGT QP, for ibv_open_qp() */
};

/* A file's handle on a domain. */
struct sv_xrcd_handle {
	struct sv_uobj uobj;		/* first */
	struct sv_xrcd *xrcd;		/* referenced */
};

/* A file's handle on a TGT QP. */
struct sv_xrc_qp {
	struct sv_uobj uobj;		/* first */
	struct sv_qp *qp;		/* referenced */
	struct sv_uobj *xrcd;		/* the handle it came through (usecnt) */
	u64 user_handle;
	struct sv_event_obj events;
	struct list_head node;		/* on qp->xrc_handles */
};

void sv_xrc_device_init(struct sv_device *sdev)
{
	xa_init(&sdev->xsrqs);
	mutex_init(&sdev->xrcd_lock);
	INIT_LIST_HEAD(&sdev->xrcds);
}

void sv_xrc_device_fini(struct sv_device *sdev)
{
	WARN_ON_ONCE(!list_empty(&sdev->xrcds));
	xa_destroy(&sdev->xsrqs);
	mutex_destroy(&sdev->xrcd_lock);
}

/* ---- domains ---- */

/* kref_put_mutex() calls this with sdev->xrcd_lock held: it unlocks. */
static void sv_xrcd_release(struct kref *ref)
{
	struct sv_xrcd *x = container_of(ref, struct sv_xrcd, ref);

	if (x->inode)
		list_del(&x->node);
	mutex_unlock(&x->sdev->xrcd_lock);
	WARN_ON_ONCE(!xa_empty(&x->tgt_qps));
	xa_destroy(&x->tgt_qps);
	mutex_destroy(&x->lock);
	iput(x->inode);
	kfree(x);
}

/* Drop a reference on a domain; process context. */
void sv_xrcd_put(struct sv_xrcd *x)
{
	kref_put_mutex(&x->ref, sv_xrcd_release, &x->sdev->xrcd_lock);
}

static struct sv_xrcd *sv_xrcd_new(struct sv_device *sdev,
				   struct inode *inode)
{
	struct sv_xrcd *x = kzalloc(sizeof(*x), GFP_KERNEL_ACCOUNT);

	if (!x)
		return NULL;
	kref_init(&x->ref);
	x->sdev = sdev;
	mutex_init(&x->lock);
	xa_init(&x->tgt_qps);
	if (inode) {
		x->inode = igrab(inode);
		list_add(&x->node, &sdev->xrcds);
	}
	return x;
}

/* The domain of a file (fd), found or made as oflags say; referenced. */
static struct sv_xrcd *sv_xrcd_lookup(struct sv_device *sdev, int fd,
				      u32 oflags)
{
	struct sv_xrcd *x, *found = NULL;
	struct inode *inode;
	struct file *filp;

	if (fd == -1)
		return sv_xrcd_new(sdev, NULL) ?: ERR_PTR(-ENOMEM);
	filp = fget(fd);
	if (!filp)
		return ERR_PTR(-EBADF);
	inode = file_inode(filp);
	mutex_lock(&sdev->xrcd_lock);
	list_for_each_entry(x, &sdev->xrcds, node) {
		if (x->inode == inode) {
			found = x;
			break;
		}
	}
	if (found && (oflags & O_EXCL))
		found = ERR_PTR(-EINVAL);
	else if (found)
		kref_get(&found->ref);
	else if (!(oflags & O_CREAT))
		found = ERR_PTR(-EINVAL);
	else
		found = sv_xrcd_new(sdev, inode) ?: ERR_PTR(-ENOMEM);
	mutex_unlock(&sdev->xrcd_lock);
	fput(filp);
	return found;
}

static struct sv_xrcd_handle *to_xrcd_handle(struct sv_uobj *u)
{
	return container_of(u, struct sv_xrcd_handle, uobj);
}

static void sv_xrcd_handle_destroy(struct sv_uobj *u)
{
}

static void sv_xrcd_handle_free(struct sv_uobj *u)
{
	struct sv_xrcd_handle *h = to_xrcd_handle(u);

	sv_xrcd_put(h->xrcd);
	kfree(h);
}

static const struct sv_uobj_ops sv_xrcd_handle_ops = {
	.destroy = sv_xrcd_handle_destroy,
	.free = sv_xrcd_handle_free,
};

int sv_open_xrcd(struct sv_file *f, void *arg)
{
	struct sv_open_xrcd *o = arg;
	struct sv_xrcd_handle *h;
	struct sv_xrcd *x;
	int ret;

	if (o->oflags & ~(O_CREAT | O_EXCL))
		return -EINVAL;
	h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return -ENOMEM;
	x = sv_xrcd_lookup(f->sdev, o->fd, o->oflags);
	if (IS_ERR(x)) {
		kfree(h);
		return PTR_ERR(x);
	}
	h->xrcd = x;
	ret = sv_uobj_add(f, &h->uobj, SV_OBJ_XRCD, &sv_xrcd_handle_ops);
	if (ret) {
		sv_xrcd_put(x);
		kfree(h);
		return ret;
	}
	o->handle = h->uobj.handle;
	return 0;
}

int sv_close_xrcd(struct sv_file *f, void *arg)
{
	struct sv_close_xrcd *c = arg;

	return sv_uobj_destroy(f, c->handle, SV_OBJ_XRCD);
}

/*
 * A file's domain handle for a new XRC SRQ or TGT QP: the handle is
 * referenced and in use (sv_xrcd_unuse()), the domain referenced in *x.
 */
struct sv_uobj *sv_xrcd_use(struct sv_file *f, u32 handle,
			    struct sv_xrcd **x)
{
	struct sv_uobj *u = sv_uobj_get(f, handle, SV_OBJ_XRCD);

	if (IS_ERR(u))
		return u;
	atomic_inc(&u->usecnt);
	*x = to_xrcd_handle(u)->xrcd;
	kref_get(&(*x)->ref);
	return u;
}

void sv_xrcd_unuse(struct sv_uobj *u, struct sv_xrcd *x)
{
	sv_xrcd_put(x);
	atomic_dec(&u->usecnt);
	sv_uobj_put(u);
}

/* ---- TGT QPs ---- */

static struct sv_xrc_qp *to_xrc_qp(struct sv_uobj *u)
{
	return container_of(u, struct sv_xrc_qp, uobj);
}

/* The last handle went: nobody reaches the QP any more. */
static void sv_xrc_tgt_close(struct sv_qp *qp)
{
	sv_qp_unpublish(qp);
	sv_uncharge(&qp->uobj.charge);
	sv_qp_put(qp);		/* the domain's reference */
}

static void sv_xrc_qp_destroy(struct sv_uobj *u)
{
	struct sv_xrc_qp *h = to_xrc_qp(u);
	struct sv_qp *qp = h->qp;
	struct sv_xrcd *x = qp->xrcd;
	bool last;

	mutex_lock(&x->lock);
	spin_lock_bh(&qp->lock);
	list_del(&h->node);
	last = list_empty(&qp->xrc_handles);
	if (last)
		qp->dead = true;
	spin_unlock_bh(&qp->lock);
	if (last)
		xa_erase(&x->tgt_qps, qp->qpn);
	mutex_unlock(&x->lock);
	sv_async_event_detach(u->file, &h->events);
	atomic_dec(&h->xrcd->usecnt);
	if (last)
		sv_xrc_tgt_close(qp);
}

static void sv_xrc_qp_free(struct sv_uobj *u)
{
	struct sv_xrc_qp *h = to_xrc_qp(u);

	sv_qp_put(h->qp);
	sv_uobj_put(h->xrcd);
	kfree(h);
}

static const struct sv_uobj_ops sv_xrc_qp_ops = {
	.destroy = sv_xrc_qp_destroy,
	.free = sv_xrc_qp_free,
};

/*
 * A handle in f on qp, through the domain handle xu (referenced and in
 * use on success: the handle keeps both). Under x->lock.
 */
static int sv_xrc_qp_handle(struct sv_file *f, struct sv_qp *qp,
			    struct sv_uobj *xu, u64 user_handle, u32 *handle)
{
	struct sv_xrc_qp *h;
	int ret;

	lockdep_assert_held(&qp->xrcd->lock);
	h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return -ENOMEM;
	h->user_handle = user_handle;
	sv_event_obj_init(&h->events);
	h->qp = qp;
	h->xrcd = xu;
	ret = sv_uobj_add(f, &h->uobj, SV_OBJ_XRC_QP, &sv_xrc_qp_ops);
	if (ret) {
		kfree(h);
		return ret;
	}
	kref_get(&qp->uobj.ref);
	spin_lock_bh(&qp->lock);
	list_add_tail(&h->node, &qp->xrc_handles);
	spin_unlock_bh(&qp->lock);
	*handle = h->uobj.handle;
	return 0;
}

/*
 * Make qp (built by sv_create_qp(), charged, nowhere yet) an XRC TGT QP
 * of the domain c->xrcd_handle names, with the creator's handle in
 * c->handle. On failure the caller still owns qp and its charge.
 */
int sv_xrc_tgt_create(struct sv_file *f, struct sv_qp *qp,
		      struct sv_create_qp *c)
{
	struct sv_device *sdev = f->sdev;
	struct sv_xrcd *x;
	struct sv_uobj *xu;
	int ret;

	xu = sv_xrcd_use(f, c->xrcd_handle, &x);
	if (IS_ERR(xu))
		return PTR_ERR(xu);
	qp->xrcd = x;
	INIT_LIST_HEAD(&qp->xrc_handles);
	ret = xa_alloc_cyclic(&sdev->qps, &qp->qpn, NULL,
			      XA_LIMIT(2, SV_QPN_MASK - 1), &sdev->next_qpn,
			      GFP_KERNEL);
	if (ret < 0) {
		ret = ret == -EBUSY ? -ENOMEM : ret;
		goto err_xrcd;
	}
	/* The QP's own reference: the domain's, until the last handle. */
	kref_init(&qp->uobj.ref);
	qp->uobj.type = SV_OBJ_QP;
	qp->uobj.ops = &sv_qp_ops;
	mutex_lock(&x->lock);
	ret = xa_insert(&x->tgt_qps, qp->qpn, qp, GFP_KERNEL_ACCOUNT);
	if (!ret) {
		ret = sv_xrc_qp_handle(f, qp, xu, c->user_handle, &c->handle);
		if (ret)
			xa_erase(&x->tgt_qps, qp->qpn);
	}
	if (ret) {
		mutex_unlock(&x->lock);
		xa_erase(&sdev->qps, qp->qpn);
		goto err_xrcd;
	}
	/* Held until the QP's memory goes, as any QP's (qp.c). */
	get_device(&sdev->dev);
	xa_store(&sdev->qps, qp->qpn, qp, GFP_KERNEL);
	mutex_unlock(&x->lock);
	/* The handle keeps xu (its reference and use), the QP keeps x. */
	return 0;

err_xrcd:
	qp->xrcd = NULL;
	sv_xrcd_unuse(xu, x);
	return ret;
}

int sv_open_qp(struct sv_file *f, void *arg)
{
	struct sv_open_qp *o = arg;
	struct sv_xrcd *x;
	struct sv_uobj *xu;
	struct sv_qp *qp;
	int ret;

	if (o->reserved)
		return -EINVAL;
	if (o->qp_type != SV_QPT_XRC_RECV)
		return -EINVAL;
	xu = sv_xrcd_use(f, o->xrcd_handle, &x);
	if (IS_ERR(xu))
		return PTR_ERR(xu);
	mutex_lock(&x->lock);
	qp = xa_load(&x->tgt_qps, o->qpn);
	ret = qp ? sv_xrc_qp_handle(f, qp, xu, o->user_handle, &o->handle) :
		   -ENOENT;
	mutex_unlock(&x->lock);
	sv_xrcd_put(x);
	if (ret) {
		atomic_dec(&xu->usecnt);
		sv_uobj_put(xu);
	}
	return ret;
}

/*
 * What a QP handle of f names: a QP of the file (SV_OBJ_QP), or a handle
 * on an XRC TGT QP (SV_OBJ_XRC_QP); referenced (sv_uobj_put()).
 */
struct sv_uobj *sv_qp_uobj_get(struct sv_file *f, u32 handle)
{
	struct sv_uobj *u = sv_uobj_get(f, handle, SV_OBJ_QP);

	if (PTR_ERR_OR_ZERO(u) == -EINVAL)
		u = sv_uobj_get(f, handle, SV_OBJ_XRC_QP);
	return u;
}

/* The QP a QP handle of f names (sv_qp_uobj_get()), referenced. */
struct sv_qp *sv_qp_lookup(struct sv_file *f, u32 handle)
{
	struct sv_uobj *u = sv_qp_uobj_get(f, handle);
	struct sv_qp *qp;

	if (IS_ERR(u))
		return ERR_CAST(u);
	if (u->type == SV_OBJ_QP)
		return container_of(u, struct sv_qp, uobj);
	qp = to_xrc_qp(u)->qp;
	kref_get(&qp->uobj.ref);
	sv_uobj_put(u);
	return qp;
}

/* The events of a handle on a TGT QP (SV_OBJ_XRC_QP). */
struct sv_event_obj *sv_xrc_qp_events(struct sv_uobj *u)
{
	return &to_xrc_qp(u)->events;
}

/* Tell every handle on a TGT QP of an async event. Under qp->lock. */
void sv_xrc_qp_event(struct sv_qp *qp, u32 event)
{
	struct sv_xrc_qp *h;

	lockdep_assert_held(&qp->lock);
	list_for_each_entry(h, &qp->xrc_handles, node)
		sv_async_event(h->uobj.file, event, h->user_handle,
			       &h->events);
}

/*
 * The XRC SRQ number srqn names, for a request arriving at the TGT QP
 * tgt: referenced (sv_uobj_put(&srq->uobj)), or NULL if there is none
 * alive in tgt's domain.
 */
struct sv_srq *sv_xsrq_get(struct sv_qp *tgt, u32 srqn)
{
	struct sv_srq *srq;

	rcu_read_lock();
	srq = xa_load(&tgt->sdev->xsrqs, srqn);
	if (srq && (srq->xrcd != tgt->xrcd || READ_ONCE(srq->dead) ||
		    !kref_get_unless_zero(&srq->uobj.ref)))
		srq = NULL;
	rcu_read_unlock();
	return srq;
}
