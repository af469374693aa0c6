// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs steering sandbox: steering tables and anchors
 * (SV_IOC_CREATE/DESTROY_STEER_TABLE, _ANCHOR), the kernel half of
 * mlx5dv's DR API and mlx5dv_create_steering_anchor() (user/compat/
 * mlx5_dr.c).
 *
 * A steering table is a struct sv_steer of its own, of one direction, at
 * a level above the device's tables (level 0). Matchers created in it
 * (matcher.c) put their flows' rules there, and hold a usecnt on it; a
 * rule elsewhere that sends frames to it (SV_FLOW_SPEC_DEST_TABLE) holds
 * a reference and a usecnt too, and must sit at a lower level: a frame
 * only ever goes up the levels, so the walk ends (table.c).
 *
 * An anchor is a priority of the device's own tables of its direction,
 * named by an object: a rule that sends to it (SV_FLOW_SPEC_DEST_ANCHOR)
 * sends the frame back into the device's tables at that priority. It
 * needs CAP_NET_RAW, as mlx5_ib's: it is a way into what the device's
 * steering keeps from the stack.
 *
 * Both are fixed at their creation; their memory goes after the last
 * flow that names them, itself freed a grace period after its removal
 * (flow.c), so frames never see a freed table.
 */
#include <linux/capability.h>
#include <linux/slab.h>

#include "steer.h"

struct sv_steer_table {
	struct sv_uobj uobj;		/* first */
	struct sv_steer *st;
	u32 flags;			/* 0 or SV_FLOW_ATTR_FLAGS_EGRESS */
	u32 level;
};

struct sv_steer_anchor {
	struct sv_uobj uobj;		/* first */
	u32 flags;
	u16 priority;
};

static void sv_sandbox_destroy(struct sv_uobj *u)
{
}

static void sv_table_free(struct sv_uobj *u)
{
	struct sv_steer_table *t = container_of(u, struct sv_steer_table,
						uobj);

	sv_steer_free(t->st);
	kfree(t);
}

static void sv_anchor_free(struct sv_uobj *u)
{
	kfree(container_of(u, struct sv_steer_anchor, uobj));
}

static const struct sv_uobj_ops sv_table_ops = {
	.destroy = sv_sandbox_destroy,
	.free = sv_table_free,
};

static const struct sv_uobj_ops sv_anchor_ops = {
	.destroy = sv_sandbox_destroy,
	.free = sv_anchor_free,
};

int sv_create_steer_table(struct sv_file *f, void *arg)
{
	struct sv_create_steer_table *c = arg;
	struct sv_steer_table *t;
	int ret;

	/* Any level above the device's own 0, as mlx5's SW steering. */
	if ((c->flags & ~SV_FLOW_ATTR_FLAGS_EGRESS) || !c->level)
		return -EINVAL;
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t)
		return -ENOMEM;
	t->st = sv_steer_alloc();
	if (!t->st) {
		kfree(t);
		return -ENOMEM;
	}
	t->flags = c->flags;
	t->level = c->level;
	ret = sv_uobj_add(f, &t->uobj, SV_OBJ_STEER_TABLE, &sv_table_ops);
	if (ret) {
		sv_steer_free(t->st);
		kfree(t);
		return ret;
	}
	c->handle = t->uobj.handle;
	return 0;
}

int sv_create_steer_anchor(struct sv_file *f, void *arg)
{
	struct sv_create_steer_anchor *c = arg;
	struct sv_device *sdev = f->sdev;
	struct sv_steer_anchor *a;
	int ret;

	if (!ns_capable(read_pnet(&sdev->net)->user_ns, CAP_NET_RAW))
		return -EPERM;
	if ((c->flags & ~SV_FLOW_ATTR_FLAGS_EGRESS) || c->reserved ||
	    c->priority > SV_STEER_MAX_PRIO)
		return -EINVAL;
	a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	if (!a)
		return -ENOMEM;
	a->flags = c->flags;
	a->priority = c->priority;
	ret = sv_uobj_add(f, &a->uobj, SV_OBJ_STEER_ANCHOR, &sv_anchor_ops);
	if (ret) {
		kfree(a);
		return ret;
	}
	c->handle = a->uobj.handle;
	return 0;
}

/* Both: EBUSY while in use (the usecnt). */
int sv_destroy_steer_table(struct sv_file *f, void *arg)
{
	struct sv_destroy_steer_obj *d = arg;

	return sv_uobj_destroy(f, d->handle, SV_OBJ_STEER_TABLE);
}

int sv_destroy_steer_anchor(struct sv_file *f, void *arg)
{
	struct sv_destroy_steer_obj *d = arg;

	return sv_uobj_destroy(f, d->handle, SV_OBJ_STEER_ANCHOR);
}

/*
 * The table a matcher puts its rules in: @handle's (referenced, a
 * usecnt taken: sv_steer_table_unuse() and sv_uobj_put() undo them), of
 * direction @flags. -EINVAL for another type's or another direction's.
 * Under f->lock.
 */
struct sv_uobj *sv_steer_table_use(struct sv_file *f, u32 handle, u32 flags)
{
	struct sv_steer_table *t;
	struct sv_uobj *u;

	u = sv_uobj_get(f, handle, SV_OBJ_STEER_TABLE);
	if (IS_ERR(u))
		return ERR_PTR(-EINVAL);
	t = container_of(u, struct sv_steer_table, uobj);
	if (t->flags != flags) {
		sv_uobj_put(u);
		return ERR_PTR(-EINVAL);
	}
	atomic_inc(&u->usecnt);
	return u;
}

void sv_steer_table_unuse(struct sv_uobj *u)
{
	atomic_dec(&u->usecnt);
}

struct sv_steer *sv_steer_table_st(struct sv_uobj *u)
{
	return container_of(u, struct sv_steer_table, uobj)->st;
}

u32 sv_steer_table_level(struct sv_uobj *u)
{
	return u ? container_of(u, struct sv_steer_table, uobj)->level : 0;
}

/*
 * A flow's DEST_TABLE or DEST_ANCHOR spec @s: what it sends to, of the
 * flow's direction, a table above the flow's own level. The flow keeps
 * the reference and a usecnt. Under f->lock.
 */
int sv_flow_dest_apply(struct sv_file *f, struct sv_flow *fl,
		       const struct sv_flow_spec_dest *s)
{
	u32 dir = fl->flags & SV_FLOW_ATTR_FLAGS_EGRESS;
	struct sv_steer_anchor *a;
	struct sv_uobj *u;

	if (s->reserved || s->pad)
		return -EINVAL;
	if (s->type == SV_FLOW_SPEC_DEST_TABLE) {
		u = sv_steer_table_use(f, s->handle, dir);
		if (IS_ERR(u))
			return PTR_ERR(u);
		if (sv_steer_table_level(u) <= sv_steer_table_level(fl->table)) {
			sv_steer_table_unuse(u);
			sv_uobj_put(u);
			return -EINVAL;
		}
		fl->dest_table = u;
		fl->dest_st = sv_steer_table_st(u);
		return 0;
	}
	u = sv_uobj_get(f, s->handle, SV_OBJ_STEER_ANCHOR);
	if (IS_ERR(u))
		return -EINVAL;
	a = container_of(u, struct sv_steer_anchor, uobj);
	if (a->flags != dir) {
		sv_uobj_put(u);
		return -EINVAL;
	}
	atomic_inc(&u->usecnt);
	fl->dest_anchor = u;
	fl->anchor_prio = a->priority;
	return 0;
}

/* The flow's handle left the table / its memory goes. */
void sv_flow_dest_unbind(struct sv_flow *fl)
{
	if (fl->dest_table)
		atomic_dec(&fl->dest_table->usecnt);
	if (fl->dest_anchor)
		atomic_dec(&fl->dest_anchor->usecnt);
}

void sv_flow_dest_put(struct sv_flow *fl)
{
	if (fl->dest_table)
		sv_uobj_put(fl->dest_table);
	if (fl->dest_anchor)
		sv_uobj_put(fl->dest_anchor);
	fl->dest_table = NULL;
	fl->dest_anchor = NULL;
	fl->dest_st = NULL;
}

/* For dumps: a table's level and direction, an anchor's priority. */
void sv_sandbox_info(struct sv_uobj *u, u32 *level, u32 *flags, u16 *prio)
{
	if (u->type == SV_OBJ_STEER_TABLE) {
		struct sv_steer_table *t = container_of(u, struct sv_steer_table,
							uobj);

		*level = t->level;
		*flags = t->flags;
		*prio = 0;
	} else {
		struct sv_steer_anchor *a = container_of(u,
							 struct sv_steer_anchor,
							 uobj);

		*level = 0;
		*flags = a->flags;
		*prio = a->priority;
	}
}
