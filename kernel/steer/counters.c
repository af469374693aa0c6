// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs flow counters: the objects of ibv_create_counters(), bound to
 * flows by IBV_FLOW_SPEC_ACTION_COUNT.
 *
 * A counters object holds a packet and a byte count per CPU, and the
 * descriptions ibv_attach_counters_point_flow() gave it (which count goes
 * at which index of ibv_read_counters()' array), as mlx5 does: static
 * mode only, descriptions only while no flow is bound to the object.
 *
 * Life of a counters object: SV_IOC_CREATE_COUNTERS makes it (zero
 * counts, no description); SV_IOC_ATTACH_COUNTERS adds descriptions while
 * its usecnt is zero; a flow whose specs name it (flow.c, via
 * sv_counters_spec() and sv_counters_bind()) takes a reference and a
 * usecnt, so that SV_IOC_DESTROY_COUNTERS is EBUSY while a flow counts
 * into it, and, once it has its handle (sv_counters_link()), sits on the
 * object's list of flows until its destroy, for the management plane's
 * resource dumps (netlink.c). The frame path (table.c, rx.c) counts
 * every frame that hits such a flow's rule with sv_counters_add(): per
 * CPU, under RCU with BH off, no lock. A flow's destroy waits for a grace
 * period (table.c) before it drops the usecnt; its memory, and its
 * reference, go later.
 *
 * Control operations run under the file's lock (file.c): descriptions and
 * the bound state do not change under them. SV_IOC_READ_COUNTERS takes
 * it itself, only to compute the values: it writes them to user memory
 * after, as the lock must never wait on a fault.
 */
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/u64_stats_sync.h>
#include <linux/uaccess.h>

#include "steer.h"

struct sv_counters_pcpu {
	u64_stats_t packets;
	u64_stats_t bytes;
	struct u64_stats_sync syncp;
};

struct sv_counter_desc {
	u32 desc;			/* SV_COUNTER_* */
	u32 index;
};

struct sv_counters {
	struct sv_uobj uobj;		/* first */
	struct sv_counters_pcpu __percpu *pcpu;
	struct sv_counter_desc *desc;	/* ndesc of them */
	u32 ndesc;
	u32 nvalid;			/* the highest index + 1 */
	spinlock_t flows_lock;		/* flows (dumps read it without f->lock) */
	struct list_head flows;		/* bound flows with a handle, by age */
};

static struct sv_counters *to_sv_counters(struct sv_uobj *u)
{
	return container_of(u, struct sv_counters, uobj);
}

/* ---- the frame path ---- */

void sv_counters_add(struct sv_counters *c, u32 len)
{
	struct sv_counters_pcpu *p = this_cpu_ptr(c->pcpu);

	u64_stats_update_begin(&p->syncp);
	u64_stats_inc(&p->packets);
	u64_stats_add(&p->bytes, len);
	u64_stats_update_end(&p->syncp);
}

/* The sums over every CPU: always the live values. */
static void sv_counters_sum(struct sv_counters *c, u64 *packets, u64 *bytes)
{
	unsigned int start;
	u64 p, b;
	int cpu;

	*packets = 0;
	*bytes = 0;
	for_each_possible_cpu(cpu) {
		struct sv_counters_pcpu *pc = per_cpu_ptr(c->pcpu, cpu);

		do {
			start = u64_stats_fetch_begin(&pc->syncp);
			p = u64_stats_read(&pc->packets);
			b = u64_stats_read(&pc->bytes);
		} while (u64_stats_fetch_retry(&pc->syncp, start));
		*packets += p;
		*bytes += b;
	}
}

/* ---- flows (flow.c) ---- */

/* An ACTION_COUNT spec (its size checked): remember which object it names. */
int sv_counters_spec(struct sv_flow *fl, const void *spec)
{
	const struct sv_flow_spec_action_count *s = spec;

	if (fl->count || s->pad || s->reserved)
		return -EINVAL;
	fl->count = true;
	fl->counters_handle = s->counters_handle;
	return 0;
}

/*
 * Bind the counters the flow's spec named, if any: a reference and a
 * usecnt. An unknown handle, another type's, or an object without a
 * description is EINVAL (mlx5: "counters not bound yet, must have udata").
 * Under f->lock.
 */
int sv_counters_bind(struct sv_file *f, struct sv_flow *fl)
{
	struct sv_counters *c;
	struct sv_uobj *u;

	lockdep_assert_held(&f->lock);
	if (!fl->count)
		return 0;
	u = sv_uobj_get(f, fl->counters_handle, SV_OBJ_COUNTERS);
	if (IS_ERR(u))
		return -EINVAL;
	c = to_sv_counters(u);
	if (!c->ndesc) {
		sv_uobj_put(u);
		return -EINVAL;
	}
	atomic_inc(&u->usecnt);
	fl->counters = c;
	INIT_LIST_HEAD(&fl->counters_node);
	return 0;
}

/* The flow has its handle: the counters' dumps name it from now on. */
void sv_counters_link(struct sv_flow *fl)
{
	struct sv_counters *c = fl->counters;

	if (!c)
		return;
	spin_lock(&c->flows_lock);
	list_add_tail(&fl->counters_node, &c->flows);
	spin_unlock(&c->flows_lock);
}

/* The flow counts no more (it is out of the tables, a grace period ago). */
void sv_counters_unbind(struct sv_flow *fl)
{
	struct sv_counters *c = fl->counters;

	if (c && fl->count) {
		spin_lock(&c->flows_lock);
		list_del_init(&fl->counters_node);
		spin_unlock(&c->flows_lock);
		atomic_dec(&c->uobj.usecnt);
		fl->count = false;
	}
}

/* ---- resource dumps (netlink.c): flows and objects referenced ---- */

/* The handle of the counters object the flow counts into. */
u32 sv_counters_handle(const struct sv_flow *fl)
{
	return fl->counters->uobj.handle;
}

/*
 * Fill @handles with the handles of up to @max flows bound to the
 * counters object @u, the oldest first, and return how many it filled
 * (its usecnt says how many there are). Any context but hard irq.
 */
u32 sv_counters_flows(struct sv_uobj *u, u32 *handles, u32 max)
{
	struct sv_counters *c = to_sv_counters(u);
	struct sv_flow *fl;
	u32 n = 0;

	spin_lock(&c->flows_lock);
	list_for_each_entry(fl, &c->flows, counters_node) {
		if (n == max)
			break;
		handles[n++] = fl->uobj.handle;
	}
	spin_unlock(&c->flows_lock);
	return n;
}

/* The flow's memory goes: its reference on the counters too. */
void sv_counters_put(struct sv_flow *fl)
{
	if (fl->counters) {
		sv_uobj_put(&fl->counters->uobj);
		fl->counters = NULL;
	}
}

/* ---- the object ---- */

static void sv_counters_destroy(struct sv_uobj *u)
{
	/* No flow names it (usecnt was zero): nothing counts into it. */
}

static void sv_counters_free(struct sv_uobj *u)
{
	struct sv_counters *c = to_sv_counters(u);

	free_percpu(c->pcpu);
	kfree(c->desc);
	kfree(c);
}

static const struct sv_uobj_ops sv_counters_ops = {
	.destroy = sv_counters_destroy,
	.free = sv_counters_free,
};

int sv_create_counters(struct sv_file *f, void *arg)
{
	struct sv_create_counters *cmd = arg;
	struct sv_counters *c;
	int cpu, ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return -ENOMEM;
	c->pcpu = alloc_percpu_gfp(struct sv_counters_pcpu, GFP_KERNEL_ACCOUNT);
	if (!c->pcpu) {
		kfree(c);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu)
		u64_stats_init(&per_cpu_ptr(c->pcpu, cpu)->syncp);
	spin_lock_init(&c->flows_lock);
	INIT_LIST_HEAD(&c->flows);
	ret = sv_uobj_add(f, &c->uobj, SV_OBJ_COUNTERS, &sv_counters_ops);
	if (ret) {
		free_percpu(c->pcpu);
		kfree(c);
		return ret;
	}
	cmd->handle = c->uobj.handle;
	return 0;
}

int sv_destroy_counters(struct sv_file *f, void *arg)
{
	struct sv_destroy_counters *cmd = arg;

	/* EBUSY while a flow is bound to it (its usecnt). */
	return sv_uobj_destroy(f, cmd->handle, SV_OBJ_COUNTERS);
}

int sv_attach_counters(struct sv_file *f, void *arg)
{
	struct sv_attach_counters *cmd = arg;
	struct sv_counter_desc *d;
	struct sv_counters *c;
	struct sv_uobj *u;
	int ret = 0;

	u = sv_uobj_get(f, cmd->handle, SV_OBJ_COUNTERS);
	if (IS_ERR(u))
		return PTR_ERR(u);
	c = to_sv_counters(u);
	if (cmd->desc != SV_COUNTER_PACKETS && cmd->desc != SV_COUNTER_BYTES) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	if (atomic_read(&u->usecnt)) {
		ret = -EBUSY;
		goto out;
	}
	if (cmd->index >= SV_COUNTERS_MAX_INDEX ||
	    c->ndesc >= SV_COUNTERS_MAX_DESC) {
		ret = -EINVAL;
		goto out;
	}
	d = krealloc_array(c->desc, c->ndesc + 1, sizeof(*d),
			   GFP_KERNEL_ACCOUNT);
	if (!d) {
		ret = -ENOMEM;
		goto out;
	}
	c->desc = d;
	d[c->ndesc].desc = cmd->desc;
	d[c->ndesc].index = cmd->index;
	c->ndesc++;
	c->nvalid = max(c->nvalid, cmd->index + 1);
out:
	sv_uobj_put(u);
	return ret;
}

int sv_read_counters(struct sv_file *f, void *arg)
{
	struct sv_read_counters *cmd = arg;
	u64 __user *out = u64_to_user_ptr(cmd->values);
	u64 vals[2], *buf = NULL;
	struct sv_counters *c;
	struct sv_uobj *u;
	u32 i, nvalid = 0;
	int ret = 0;

	if (cmd->reserved || (cmd->flags & ~SV_READ_COUNTERS_PREFER_CACHED))
		return -EINVAL;
	mutex_lock(&f->lock);
	u = sv_uobj_get(f, cmd->handle, SV_OBJ_COUNTERS);
	if (IS_ERR(u)) {
		mutex_unlock(&f->lock);
		return PTR_ERR(u);
	}
	c = to_sv_counters(u);
	/* As uverbs: only an object bound to a flow can be read. */
	if (!atomic_read(&u->usecnt) || cmd->ncounters < c->nvalid) {
		ret = -EINVAL;
		goto out_unlock;
	}
	nvalid = c->nvalid;
	buf = kcalloc(nvalid, sizeof(*buf), GFP_KERNEL);
	if (!buf) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	/* Exact software counts: cached or not, the live values. */
	sv_counters_sum(c, &vals[SV_COUNTER_PACKETS], &vals[SV_COUNTER_BYTES]);
	for (i = 0; i < c->ndesc; i++)
		buf[c->desc[i].index] += vals[c->desc[i].desc];
out_unlock:
	mutex_unlock(&f->lock);
	sv_uobj_put(u);
	if (ret)
		return ret;
	if (copy_to_user(out, buf, nvalid * sizeof(*buf)) ||
	    clear_user(out + nvalid,
		       (size_t)(cmd->ncounters - nvalid) * sizeof(*buf)))
		ret = -EFAULT;
	else
		cmd->nvalid = nvalid;
	kfree(buf);
	return ret;
}
