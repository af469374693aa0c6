// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs user objects: the per-file handle table.
 *
 * Every object userspace creates (PD, MR, CQ, QP, ...) embeds a struct
 * sv_uobj and lives in its file's xarray under a handle. The table holds
 * one reference; lookups take another (sv_uobj_get / sv_uobj_put).
 *
 * Control ioctls of one file run under sv_file::lock, so "is anybody still
 * using this object" (usecnt, EBUSY) and removal cannot race with a create
 * that names the object. Destroying runs ops->destroy (tear down, release
 * the parents' usecnt) once, when the handle leaves the table; the memory
 * goes with the last reference (ops->free).
 */
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "sv.h"

static const char * const sv_obj_names[SV_OBJ_MAX] = {
	[SV_OBJ_PD] = "pd",
	[SV_OBJ_MR] = "mr",
	[SV_OBJ_CQ] = "cq",
	[SV_OBJ_QP] = "qp",
	[SV_OBJ_SRQ] = "srq",
	[SV_OBJ_AH] = "ah",
	[SV_OBJ_COMP_CHANNEL] = "comp_channel",
	[SV_OBJ_WQ] = "wq",
	[SV_OBJ_RWQ_IND_TBL] = "rwq_ind_tbl",
	[SV_OBJ_FLOW] = "flow",
	[SV_OBJ_COUNTERS] = "counters",
	[SV_OBJ_FLOW_MATCHER] = "flow_matcher",
	[SV_OBJ_STEER_TABLE] = "steer_table",
	[SV_OBJ_STEER_ANCHOR] = "steer_anchor",
	[SV_OBJ_STEER_ACTION] = "steer_action",
	[SV_OBJ_MKEY] = "mkey",
	[SV_OBJ_MW] = "mw",
	[SV_OBJ_DM] = "dm",
	[SV_OBJ_XRCD] = "xrcd",
	[SV_OBJ_XRC_QP] = "xrc_qp",
};

const char *sv_obj_name(enum sv_obj_type type)
{
	if (type <= SV_OBJ_NONE || type >= SV_OBJ_MAX || !sv_obj_names[type])
		return "?";
	return sv_obj_names[type];
}

/*
 * When the file closes, objects go in this order, so that no object is
 * destroyed while another still names it (QPs before the CQs, SRQs and PD
 * they use; windows before the MRs they are bound to; MRs before their
 * PD and the device memory they are made of; XRC SRQs and handles on TGT
 * QPs before the XRC domain handles they came through).
 */
static const enum sv_obj_type sv_destroy_order[] = {
	SV_OBJ_FLOW, SV_OBJ_STEER_ACTION, SV_OBJ_FLOW_MATCHER,
	SV_OBJ_STEER_TABLE,
	SV_OBJ_STEER_ANCHOR, SV_OBJ_COUNTERS, SV_OBJ_QP, SV_OBJ_XRC_QP,
	SV_OBJ_RWQ_IND_TBL, SV_OBJ_WQ,
	SV_OBJ_SRQ, SV_OBJ_AH, SV_OBJ_MW, SV_OBJ_MKEY, SV_OBJ_MR, SV_OBJ_DM,
	SV_OBJ_XRCD, SV_OBJ_CQ,
	SV_OBJ_COMP_CHANNEL, SV_OBJ_PD,
};

/* Every type is in it: a file's teardown leaves nothing behind. */
static_assert(ARRAY_SIZE(sv_destroy_order) == SV_OBJ_MAX - 1);

/*
 * Give a new object its handle. It was charged with sv_charge() when its
 * create began (the caller uncharges if this fails), or is charged here.
 */
int sv_uobj_add(struct sv_file *f, struct sv_uobj *u, enum sv_obj_type type,
		const struct sv_uobj_ops *ops)
{
	bool charged = false;
	int ret;

	lockdep_assert_held(&f->lock);
	if (!u->charge.sdev) {
		ret = sv_charge(f, type, &u->charge);
		if (ret)
			return ret;
		charged = true;
	}
	kref_init(&u->ref);
	atomic_set(&u->usecnt, 0);
	u->file = f;
	u->type = type;
	u->ops = ops;
	/* Who made it, for the management plane's resource dumps. */
	u->owner = get_task_pid(current, PIDTYPE_TGID);
	get_task_comm(u->comm, current);
	ret = xa_alloc(&f->objs, &u->handle, u, xa_limit_31b,
		       GFP_KERNEL_ACCOUNT);
	if (ret) {
		put_pid(u->owner);
		u->owner = NULL;
		if (charged)
			sv_uncharge(&u->charge);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	return 0;
}

static void sv_uobj_release(struct kref *ref)
{
	struct sv_uobj *u = container_of(ref, struct sv_uobj, ref);

	put_pid(u->owner);
	u->ops->free(u);
}

void sv_uobj_put(struct sv_uobj *u)
{
	kref_put(&u->ref, sv_uobj_release);
}

struct sv_uobj *sv_uobj_get(struct sv_file *f, u32 handle,
			    enum sv_obj_type type)
{
	struct sv_uobj *u;

	xa_lock(&f->objs);
	u = xa_load(&f->objs, handle);
	if (!u)
		u = ERR_PTR(-ENOENT);
	else if (u->type != type)
		u = ERR_PTR(-EINVAL);
	else if (!kref_get_unless_zero(&u->ref))
		u = ERR_PTR(-ENOENT);
	xa_unlock(&f->objs);
	return u;
}

/* Unlink from the table and tear down; the caller's reference remains. */
static void sv_uobj_unlink(struct sv_uobj *u)
{
	struct sv_file *f = u->file;

	xa_erase(&f->objs, u->handle);
	u->ops->destroy(u);
	sv_uncharge(&u->charge);
	sv_uobj_put(u);		/* the table's reference */
}

int sv_uobj_destroy(struct sv_file *f, u32 handle, enum sv_obj_type type)
{
	struct sv_uobj *u;

	lockdep_assert_held(&f->lock);
	u = sv_uobj_get(f, handle, type);
	if (IS_ERR(u))
		return PTR_ERR(u);
	if (atomic_read(&u->usecnt)) {
		sv_uobj_put(u);
		return -EBUSY;
	}
	sv_uobj_unlink(u);
	sv_uobj_put(u);
	return 0;
}

/* Destroy the object handle names if its type is one of types (BIT()s). */
int sv_uobj_destroy_of(struct sv_file *f, u32 handle, u32 types)
{
	enum sv_obj_type type = SV_OBJ_NONE;
	struct sv_uobj *u;

	lockdep_assert_held(&f->lock);
	xa_lock(&f->objs);
	u = xa_load(&f->objs, handle);
	if (u)
		type = u->type;
	xa_unlock(&f->objs);
	if (!u)
		return -ENOENT;
	if (!(types & BIT(type)))
		return -EINVAL;
	return sv_uobj_destroy(f, handle, type);
}

void sv_uobj_destroy_all(struct sv_file *f)
{
	struct sv_uobj *u;
	unsigned long index;
	unsigned int i;

	mutex_lock(&f->lock);
	for (i = 0; i < ARRAY_SIZE(sv_destroy_order); i++) {
		xa_for_each(&f->objs, index, u) {
			if (u->type != sv_destroy_order[i])
				continue;
			kref_get(&u->ref);
			sv_uobj_unlink(u);
			sv_uobj_put(u);
		}
	}
	mutex_unlock(&f->lock);
	WARN_ON_ONCE(!xa_empty(&f->objs));
}
