// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs flow matchers: SV_IOC_CREATE_FLOW_MATCHER and
 * SV_IOC_DESTROY_FLOW_MATCHER, the kernel half of mlx5dv's
 * mlx5dv_create_flow_matcher() (user/compat/mlx5_flow.c translates mlx5's
 * fte_match_param into a struct sv_flow_key mask).
 *
 * A matcher is a mask, a priority, a direction and a table (a steering
 * table of sandbox.c, or the device's own), fixed at its creation.
 * It steers nothing by itself; a flow whose SV_FLOW_SPEC_MATCHER spec
 * names it (sv_flow_matcher_apply(), from flow.c) takes the matcher's
 * mask and priority and a value inside that mask, and holds a reference
 * and a usecnt on it until the flow goes: a matcher in use cannot be
 * destroyed (EBUSY), as mlx5_ib's flow_matcher_cleanup() refuses.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "steer.h"

struct sv_flow_matcher {
	struct sv_uobj uobj;		/* first */
	struct sv_flow_key mask;
	struct sv_uobj *table;		/* a steering table's, or NULL */
	u32 flags;			/* 0 or SV_FLOW_ATTR_FLAGS_EGRESS */
	u16 priority;
};

static struct sv_flow_matcher *to_sv_matcher(struct sv_uobj *u)
{
	return container_of(u, struct sv_flow_matcher, uobj);
}

/* What no frame's key ever has set: the padding and unknown tunnels. */
static bool sv_key_pads_clear(const struct sv_flow_key *k)
{
	return !memchr_inv(k->outer.pad, 0, sizeof(k->outer.pad)) &&
	       !memchr_inv(k->inner.pad, 0, sizeof(k->inner.pad)) &&
	       !memchr_inv(k->pad, 0, sizeof(k->pad)) &&
	       !memchr_inv(k->pad2, 0, sizeof(k->pad2));
}

static void sv_matcher_destroy(struct sv_uobj *u)
{
	struct sv_flow_matcher *m = to_sv_matcher(u);

	if (m->table)
		sv_steer_table_unuse(m->table);
}

static void sv_matcher_free(struct sv_uobj *u)
{
	struct sv_flow_matcher *m = to_sv_matcher(u);

	if (m->table)
		sv_uobj_put(m->table);
	kfree(m);
}

static const struct sv_uobj_ops sv_matcher_ops = {
	.destroy = sv_matcher_destroy,
	.free = sv_matcher_free,
};

int sv_create_flow_matcher(struct sv_file *f, void *arg)
{
	struct sv_create_flow_matcher *c = arg;
	struct sv_flow_matcher *m;
	int ret;

	BUILD_BUG_ON(sizeof(struct sv_flow_key) != SV_FLOW_KEY_SIZE);
	BUILD_BUG_ON(sizeof(struct sv_flow_spec_matcher) !=
		     SV_FLOW_SPEC_MATCHER_SIZE);
	if (c->mask_len != sizeof(m->mask) || c->reserved ||
	    (c->flags & ~SV_FLOW_ATTR_FLAGS_EGRESS))
		return -EINVAL;
	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return -ENOMEM;
	if (copy_from_user(&m->mask, u64_to_user_ptr(c->mask),
			   sizeof(m->mask))) {
		ret = -EFAULT;
		goto err;
	}
	ret = -EINVAL;
	if (!sv_key_pads_clear(&m->mask) ||
	    (m->mask.tunnel && m->mask.tunnel != 0xff) ||
	    (m->mask.outer.flow_label | m->mask.inner.flow_label) &
	    ~htonl(0xfffff))
		goto err;
	m->flags = c->flags;
	m->priority = c->priority;
	if (c->table_handle) {
		m->table = sv_steer_table_use(f, c->table_handle, c->flags);
		if (IS_ERR(m->table)) {
			ret = PTR_ERR(m->table);
			m->table = NULL;
			goto err;
		}
	}
	ret = sv_uobj_add(f, &m->uobj, SV_OBJ_FLOW_MATCHER, &sv_matcher_ops);
	if (ret)
		goto err;
	c->handle = m->uobj.handle;
	return 0;
err:
	if (m->table) {
		sv_steer_table_unuse(m->table);
		sv_uobj_put(m->table);
	}
	kfree(m);
	return ret;
}

int sv_destroy_flow_matcher(struct sv_file *f, void *arg)
{
	struct sv_destroy_flow_matcher *d = arg;

	/* EBUSY while a flow uses it (its usecnt). */
	return sv_uobj_destroy(f, d->handle, SV_OBJ_FLOW_MATCHER);
}

/*
 * A flow's SV_FLOW_SPEC_MATCHER spec @s: the flow takes the matcher's
 * mask (into @km, which no other spec may have touched) and priority, and
 * the spec's value. The flow keeps the reference and a usecnt (dropped by
 * sv_flow_matcher_unbind() and sv_flow_matcher_put()). Under f->lock.
 */
int sv_flow_matcher_apply(struct sv_file *f, struct sv_flow *fl,
			  struct sv_flow_key *km,
			  const struct sv_flow_spec_matcher *s)
{
	const u8 *v = (const u8 *)&s->val, *mk;
	struct sv_flow_matcher *m;
	struct sv_uobj *u;
	size_t i;

	lockdep_assert_held(&f->lock);
	if (s->reserved || memchr_inv(km, 0, sizeof(*km)) ||
	    fl->type != SV_FLOW_ATTR_NORMAL)
		return -EINVAL;
	u = sv_uobj_get(f, s->matcher_handle, SV_OBJ_FLOW_MATCHER);
	if (IS_ERR(u))
		return -EINVAL;
	m = to_sv_matcher(u);
	mk = (const u8 *)&m->mask;
	for (i = 0; i < sizeof(m->mask); i++)
		if (v[i] & ~mk[i])
			goto err;
	if (fl->priority != m->priority ||
	    (fl->flags & SV_FLOW_ATTR_FLAGS_EGRESS) != m->flags)
		goto err;
	*km = m->mask;
	fl->val = s->val;
	atomic_inc(&u->usecnt);
	fl->matcher = u;
	/* The matcher holds its table for as long as the flow holds it. */
	fl->table = m->table;
	return 0;
err:
	sv_uobj_put(u);
	return -EINVAL;
}

/* The flow's handle left the table. */
void sv_flow_matcher_unbind(struct sv_flow *fl)
{
	if (fl->matcher)
		atomic_dec(&fl->matcher->usecnt);
}

/* The flow's memory goes. */
void sv_flow_matcher_put(struct sv_flow *fl)
{
	if (fl->matcher)
		sv_uobj_put(fl->matcher);
	fl->matcher = NULL;
}

/* For dumps: the matcher's priority, flags and table (0: the device's). */
void sv_flow_matcher_info(struct sv_uobj *u, u16 *priority, u32 *flags,
			  u32 *table)
{
	struct sv_flow_matcher *m = to_sv_matcher(u);

	*priority = m->priority;
	*flags = m->flags;
	*table = m->table ? m->table->handle : 0;
}
