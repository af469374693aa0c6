// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs steering tables, one set per device.
 *
 * NORMAL rules live in priority groups (ascending priority value: lower
 * values are tried first). A group holds one exact-match hash table
 * (rhltable) per distinct mask among its rules, keyed by the masked
 * value, as NIC flow tables are: a frame costs one hash lookup per mask
 * of a priority, however many rules share it. ALL_DEFAULT and MC_DEFAULT
 * rules (no match criteria) are on one list by priority, SNIFFER rules
 * on another.
 *
 * Writers (create, destroy) hold st->lock; the frame path reads under
 * RCU. A removed rule, mask or group is freed only after a grace period:
 * sv_steer_remove() unlinks the rule and hands what it emptied to the
 * flow, whose free runs as RCU work (flow.c, sv_steer_defer()): no
 * destroy waits for a grace period of its own, so closing a file with
 * 100,000 flows costs one, not 100,000.
 *
 * Verdict, per frame: the first priority group with a matching rule that
 * traps decides. At that priority every matching DONT_TRAP rule delivers
 * a copy, as does every DONT_TRAP rule met in earlier groups; of several
 * trapping rules of one priority the earliest created wins, so a frame
 * never reaches one QP twice. A frame no NORMAL rule trapped goes to the
 * default rules (MC_DEFAULT only for multicast frames) in the same way,
 * and every SNIFFER rule gets a copy of every frame. A DEFAULT_MISS rule
 * that decides passes the frame on untouched: no lower priority and no
 * default rule sees it, the kernel stack does (mlx5's FWD_NEXT_NS).
 */
#include <linux/etherdevice.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "steer.h"

struct sv_steer_mask {
	struct list_head node;		/* on its group's masks, RCU */
	struct sv_flow_key mask;
	struct rhltable ht;		/* struct sv_flow by val */
	struct sv_steer_prio *prio;	/* its group */
	u32 nrules;			/* under st->lock */
};

struct sv_steer_prio {
	struct list_head node;		/* on st->prios, RCU */
	struct list_head masks;		/* struct sv_steer_mask, RCU */
	u16 priority;
	u32 nrules;			/* under st->lock */
};

static const struct rhashtable_params sv_steer_params = {
	.key_len = sizeof(struct sv_flow_key),
	.key_offset = offsetof(struct sv_flow, val),
	.head_offset = offsetof(struct sv_flow, hnode),
	.automatic_shrinking = true,
};

struct sv_steer *sv_steer_alloc(void)
{
	struct sv_steer *st = kzalloc(sizeof(*st), GFP_KERNEL_ACCOUNT);

	if (!st)
		return NULL;
	mutex_init(&st->lock);
	INIT_LIST_HEAD(&st->prios);
	INIT_LIST_HEAD(&st->defaults);
	INIT_LIST_HEAD(&st->sniffers);
	return st;
}

/* Every flow is gone (they hold the device through their QPs). */
void sv_steer_free(struct sv_steer *st)
{
	if (!st)
		return;
	WARN_ON_ONCE(!list_empty(&st->prios) || !list_empty(&st->defaults) ||
		     !list_empty(&st->sniffers));
	mutex_destroy(&st->lock);
	kfree(st);
}

static void sv_key_and(struct sv_flow_key *out, const struct sv_flow_key *a,
		       const struct sv_flow_key *b)
{
	const u64 *x = (const u64 *)a, *y = (const u64 *)b;
	u64 *o = (u64 *)out;
	size_t i;

	BUILD_BUG_ON(sizeof(*out) % sizeof(u64));
	for (i = 0; i < sizeof(*out) / sizeof(u64); i++)
		o[i] = x[i] & y[i];
}

static struct sv_steer_prio *sv_prio_get(struct sv_steer *st, u16 priority)
{
	struct sv_steer_prio *p, *np;

	list_for_each_entry(p, &st->prios, node) {
		if (p->priority == priority)
			return p;
		if (p->priority > priority)
			break;
	}
	np = kzalloc(sizeof(*np), GFP_KERNEL_ACCOUNT);
	if (!np)
		return NULL;
	np->priority = priority;
	INIT_LIST_HEAD(&np->masks);
	/* Before p (the first higher one), or at the tail. */
	list_add_tail_rcu(&np->node, &p->node);
	return np;
}

static struct sv_steer_mask *sv_mask_find(struct sv_steer_prio *p,
					  const struct sv_flow_key *mask)
{
	struct sv_steer_mask *m;

	list_for_each_entry(m, &p->masks, node)
		if (!memcmp(&m->mask, mask, sizeof(*mask)))
			return m;
	return NULL;
}

/* Insert a flow whose type, priority, flags, val (masked) are set. */
int sv_steer_insert(struct sv_steer *st, struct sv_flow *fl,
		    const struct sv_flow_key *mask)
{
	struct sv_steer_prio *p;
	struct sv_steer_mask *m;
	struct sv_flow *pos;
	bool new_mask = false;
	int ret = 0;

	mutex_lock(&st->lock);
	fl->seq = st->next_seq++;
	switch (fl->type) {
	case SV_FLOW_ATTR_SNIFFER:
		list_add_tail_rcu(&fl->list, &st->sniffers);
		break;
	case SV_FLOW_ATTR_ALL_DEFAULT:
	case SV_FLOW_ATTR_MC_DEFAULT:
		/* By priority, after the equal ones: creation order. */
		list_for_each_entry(pos, &st->defaults, list)
			if (pos->priority > fl->priority)
				break;
		list_add_tail_rcu(&fl->list, &pos->list);
		break;
	default:
		p = sv_prio_get(st, fl->priority);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		m = sv_mask_find(p, mask);
		if (!m) {
			m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
			if (!m) {
				ret = -ENOMEM;
				goto err_prio;
			}
			m->mask = *mask;
			m->prio = p;
			ret = rhltable_init(&m->ht, &sv_steer_params);
			if (ret) {
				kfree(m);
				goto err_prio;
			}
			new_mask = true;
		}
		ret = rhltable_insert(&m->ht, &fl->hnode, sv_steer_params);
		if (ret) {
			if (new_mask) {
				rhltable_destroy(&m->ht);
				kfree(m);
			}
			goto err_prio;
		}
		/* Published complete: the table holds the rule already. */
		if (new_mask)
			list_add_tail_rcu(&m->node, &p->masks);
		fl->mask = m;
		m->nrules++;
		p->nrules++;
		break;
err_prio:
		if (!p->nrules) {
			/* Never seen by a reader that could find a rule. */
			list_del_rcu(&p->node);
			synchronize_rcu();
			kfree(p);
		}
		break;
	}
	if (!ret)
		atomic_inc(&st->nrules);
	mutex_unlock(&st->lock);
	return ret;
}

/*
 * Take a flow out of the tables. Frames may still be looking at it, and
 * at the mask and group it emptied, until a grace period has passed:
 * sv_steer_release() frees those then. Process context.
 */
void sv_steer_remove(struct sv_steer *st, struct sv_flow *fl)
{
	struct sv_steer_prio *p = NULL;
	struct sv_steer_mask *m = NULL;

	mutex_lock(&st->lock);
	atomic_dec(&st->nrules);
	if (fl->type != SV_FLOW_ATTR_NORMAL) {
		list_del_rcu(&fl->list);
	} else {
		m = fl->mask;
		rhltable_remove(&m->ht, &fl->hnode, sv_steer_params);
		p = m->prio;
		p->nrules--;
		if (--m->nrules)
			m = NULL;
		else
			list_del_rcu(&m->node);
		if (p->nrules)
			p = NULL;
		else
			list_del_rcu(&p->node);
	}
	mutex_unlock(&st->lock);
	fl->dead_mask = m;
	fl->dead_prio = p;
}

/* A grace period after sv_steer_remove(): free what it emptied. */
void sv_steer_release(struct sv_flow *fl)
{
	if (fl->dead_mask) {
		rhltable_destroy(&fl->dead_mask->ht);
		kfree(fl->dead_mask);
	}
	kfree(fl->dead_prio);
	fl->dead_mask = NULL;
	fl->dead_prio = NULL;
}

/*
 * Flows are freed as RCU work on a queue of the module's own, drained at
 * unload (the work may drop the last reference of a QP, and so of a
 * device).
 */
static struct workqueue_struct *sv_steer_wq;

void sv_steer_defer(struct rcu_work *rw, work_func_t fn)
{
	INIT_RCU_WORK(rw, fn);
	queue_rcu_work(sv_steer_wq, rw);
}

int sv_steer_init(void)
{
	int ret = sv_steer_rx_init();

	if (ret)
		return ret;
	sv_steer_wq = alloc_workqueue("softverbs_steer", WQ_UNBOUND, 0);
	if (!sv_steer_wq) {
		sv_steer_rx_exit();
		return -ENOMEM;
	}
	return 0;
}

/* Every file is closed: wait for the flows' frees, then the queue. */
void sv_steer_exit(void)
{
	rcu_barrier();
	destroy_workqueue(sv_steer_wq);
	sv_steer_rx_exit();
}

/*
 * May this rule take a frame @src_qp sent (e-switch loopback)? The
 * sending QP itself only by a rule with ALLOW_LOOP_BACK, and a multicast
 * frame never if it was created with BLOCK_SELF_MCAST_LB. A QP that
 * receives as an mlx5 TIR (mlx5dv_create_qp()) takes what QPs of its own
 * file sent (mlx5's transport domain is the ucontext) only if created
 * with the TIR's self-loopback bit of the frame's kind: ALLOW_SELF_LB_UC
 * or _MC, as mlx5_ib sets the TIR's self_lb_block bits from them.
 */
static bool sv_flow_applies(const struct sv_flow *fl,
			    const struct sv_qp *src_qp, bool multicast)
{
	const struct sv_qp *qp = fl->qp;

	/* A rule without a QP (a drop, a default miss) takes every frame. */
	if (!src_qp || !qp)
		return true;
	if (qp == src_qp && multicast &&
	    (src_qp->create_flags & SV_QP_CREATE_BLOCK_SELF_MC_LB))
		return false;
	if ((qp->flags & SV_CREATE_QP_MLX5_TIR) &&
	    qp->uobj.file == src_qp->uobj.file)
		return qp->flags & (multicast ? SV_CREATE_QP_TIR_SELF_LB_MC :
					      SV_CREATE_QP_TIR_SELF_LB_UC);
	if (qp != src_qp)
		return true;
	return fl->flags & SV_FLOW_ATTR_FLAGS_ALLOW_LOOP_BACK;
}

/* A copy for fl's QP, unless that QP has one already; true if added. */
static bool sv_verdict_add(struct sv_steer_verdict *v, struct sv_flow *fl)
{
	u32 i;

	for (i = 0; i < v->n; i++)
		if (v->deliver[i]->qp == fl->qp)
			return false;
	if (v->n == ARRAY_SIZE(v->deliver))
		return false;
	v->deliver[v->n++] = fl;
	return true;
}

/* A matching rule: DONT_TRAP delivers, else the earliest trapping wins. */
static void sv_verdict_take(struct sv_steer_verdict *v, struct sv_flow *fl,
			    struct sv_flow **trap)
{
	if (fl->flags & SV_FLOW_ATTR_FLAGS_DONT_TRAP) {
		sv_flow_count(fl, v->len);
		if (fl->qp)
			v->copies += sv_verdict_add(v, fl);
	} else if (!*trap || fl->seq < (*trap)->seq) {
		*trap = fl;
	}
}

static void sv_verdict_trap(struct sv_steer_verdict *v, struct sv_flow *trap)
{
	sv_flow_count(trap, v->len);
	if (trap->miss) {
		v->missed = true;
		return;
	}
	v->trapped = true;
	if (trap->drop)
		v->dropped = true;
	else if (trap->qp && sv_verdict_add(v, trap))
		v->trap_idx = v->n - 1;
}

/*
 * The NORMAL rules of @st from priority @from on, as the verdict above:
 * DONT_TRAP copies taken; the rule that decides, or NULL.
 */
static struct sv_flow *sv_steer_walk(struct sv_steer *st,
				     const struct sv_flow_key *key,
				     bool multicast, struct sv_qp *src_qp,
				     struct sv_steer_verdict *v, int from)
{
	struct sv_flow *fl, *trap = NULL;
	struct rhlist_head *list, *pos;
	struct sv_steer_prio *p;
	struct sv_steer_mask *m;
	struct sv_flow_key mk;

	list_for_each_entry_rcu(p, &st->prios, node) {
		if (p->priority < from)
			continue;
		list_for_each_entry_rcu(m, &p->masks, node) {
			sv_key_and(&mk, key, &m->mask);
			list = rhltable_lookup(&m->ht, &mk, sv_steer_params);
			rhl_for_each_entry_rcu(fl, pos, list, hnode) {
				if (!sv_flow_applies(fl, src_qp, multicast))
					continue;
				v->matched = true;
				sv_verdict_take(v, fl, &trap);
			}
		}
		if (trap)
			return trap;
	}
	return NULL;
}

/*
 * Send the frame on from rule @fl of @v's walk (a table or an anchor of
 * the device's table @st): false, the frame dropped as a loop, when it
 * goes back to a priority no lower than the one it left @st at, or past
 * SV_STEER_MAX_HOPS tables and anchors.
 */
bool sv_verdict_next(struct sv_steer_verdict *v, struct sv_steer *st,
		     const struct sv_flow *fl)
{
	if (++v->hops > SV_STEER_MAX_HOPS ||
	    (fl->dest_anchor && fl->anchor_prio <= v->left)) {
		v->trapped = true;
		v->dropped = true;
		v->looped = true;
		return false;
	}
	if (fl->dest_st) {
		v->cur = fl->dest_st;
		v->from = 0;
	} else {
		v->cur = st;
		v->from = fl->anchor_prio;
	}
	return true;
}

/* ... to the steering table @dest (a mirror's): the same limit. */
bool sv_verdict_table(struct sv_steer_verdict *v, struct sv_steer *dest)
{
	if (++v->hops > SV_STEER_MAX_HOPS) {
		v->trapped = true;
		v->dropped = true;
		v->looped = true;
		return false;
	}
	v->cur = dest;
	v->from = 0;
	return true;
}

/*
 * The rules' verdict on a frame with @key; the counters of the rules it
 * hits count v->len bytes (set by the caller). @st is the device's table
 * of the frame's direction; a rule may send the frame on to a steering
 * table (up the levels: a table no rule of which takes it passes it to
 * the stack) or to an anchor (back into @st at a priority below the one
 * it left @st at), at most SV_STEER_MAX_HOPS times (sandbox.c). A rule
 * that rewrites the frame or mirrors it (action.c) ends the walk in
 * v->act, with the frame trapped: the caller rewrites a copy and, with
 * v->resume, walks on with it from where v says. Sniffers see the frame
 * only on a walk that is not resumed. Under RCU, BH off.
 */
void sv_steer_lookup(struct sv_steer *st, const struct sv_flow_key *key,
		     bool multicast, struct sv_qp *src_qp,
		     struct sv_steer_verdict *v)
{
	struct sv_flow *fl, *trap = NULL;
	int prio = -1;

	if (!v->resume) {
		v->cur = st;
		v->from = 0;
		v->left = -1;
		v->hops = 0;
		v->path_tagged = false;
	}
	v->n = 0;
	v->trapped = false;
	v->dropped = false;
	v->missed = false;
	v->looped = false;
	v->trap_idx = U32_MAX;
	v->matched = false;
	v->copies = 0;
	v->act = NULL;
	for (;;) {
		trap = sv_steer_walk(v->cur, key, multicast, src_qp, v,
				     v->from);
		if (!trap) {
			/* A steering table's miss: the stack's, as mlx5 DR. */
			v->missed = v->cur != st;
			break;
		}
		if (!trap->dest_st && !trap->dest_anchor && !trap->rw) {
			sv_verdict_trap(v, trap);
			break;
		}
		sv_flow_count(trap, v->len);
		if (trap->tagged) {
			v->path_tagged = true;
			v->path_tag = trap->tag;
		}
		if (v->cur == st)
			v->left = trap->priority;
		if (trap->rw) {
			v->act = trap;
			v->trapped = true;
			goto sniff;
		}
		if (!sv_verdict_next(v, st, trap))
			break;
	}
	trap = NULL;
	if (!v->trapped && !v->missed) {
		list_for_each_entry_rcu(fl, &st->defaults, list) {
			if (trap && fl->priority != prio)
				break;
			if (fl->type == SV_FLOW_ATTR_MC_DEFAULT && !multicast)
				continue;
			if (!sv_flow_applies(fl, src_qp, multicast))
				continue;
			sv_verdict_take(v, fl, &trap);
			if (trap)
				prio = trap->priority;
		}
		if (trap)
			sv_verdict_trap(v, trap);
	}
sniff:
	if (v->resume)
		return;
	list_for_each_entry_rcu(fl, &st->sniffers, list) {
		if (sv_flow_applies(fl, src_qp, multicast)) {
			sv_flow_count(fl, v->len);
			v->copies += sv_verdict_add(v, fl);
		}
	}
}
