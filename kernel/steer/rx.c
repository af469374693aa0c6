// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs steering: frames in and out of a device bound to a netdev.
 *
 * Receive: the device's rx_handler on the netdev (registered at bind,
 * unregistered at unbind) sees every frame the netdev receives, in
 * softirq under RCU. The rules' verdict (table.c) names the QPs that get
 * a copy and whether the frame is trapped: a trapped frame is consumed,
 * any other goes on to the kernel's receive path unchanged
 * (RX_HANDLER_PASS). A copy is an skb clone (a trapped frame goes itself,
 * not cloned, to its last QP, unless a tap holds it too).
 *
 * A RAW_PACKET QP with its own RQ, and an RSS QP's WQs, take the copy at
 * once, in softirq, as a NIC writes a frame into the next posted buffer
 * (sv_steer_deliver()): their RQs are locked with a BH spinlock (sv_wq
 * bh), as nothing but steering and the QP's own state changes consume
 * them, and a frame is at most a netdev's MTU or GRO size. Any other QP
 * (UD, or with an SRQ, whose receive queues local sends of any length
 * also fill, under a mutex) gets the copy on its queue (qp->rxq): at most
 * SV_RXQ_FRAMES frames and SV_RXQ_BYTES of truesize per QP, beyond which
 * frames are dropped and counted, as a NIC drops what its ring cannot
 * take; the QP's file's engine drains it into receive WQEs. Either way a
 * frame that finds no receive WQE is dropped and counted (rx_raw_drops).
 *
 * Transmit (a RAW_PACKET QP's frames, and what the e-switch loops back
 * into the device's own steering): tx.c.
 *
 * Lifetimes: a rule holds its QP (a reference and a usecnt: the QP cannot
 * be destroyed while it has flows); removing a rule waits for a grace
 * period, so a frame under RCU may enqueue to the QP of any rule it found.
 * Once the last rule of a QP is gone nothing enqueues to it; its queue is
 * purged when it is destroyed, reset or in error.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/rtnetlink.h>

#include "steer.h"
#include "../wire/wire.h"

#define SV_RXQ_FRAMES	1024
#define SV_RXQ_BYTES	(4 << 20)

/* What a queued frame carries besides the skb. */
struct sv_rx_cb {
	u32 tag;
	bool wire;			/* RoCE v2 (wire/), not steered */
	struct sv_cq_stamp ts;		/* when it was queued (rxmeta.c) */
};

static struct sv_rx_cb *sv_rx_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sv_rx_cb) > sizeof(skb->cb));
	return (struct sv_rx_cb *)skb->cb;
}

static bool sv_qp_state_recv(u32 s)
{
	return s == SV_QPS_RTR || s == SV_QPS_RTS || s == SV_QPS_SQD ||
	       s == SV_QPS_SQE;
}

/* Scratch for sv_exec_recv_frame() in softirq: one per CPU, BH off. */
static void __percpu *sv_rx_scratch;

int sv_steer_rx_init(void)
{
	sv_rx_scratch = __alloc_percpu(sv_exec_buf_size(), L1_CACHE_BYTES);
	return sv_rx_scratch ? 0 : -ENOMEM;
}

void sv_steer_rx_exit(void)
{
	free_percpu(sv_rx_scratch);
	sv_rx_scratch = NULL;
}

/* Does @qp take frames in softirq (sv_steer_deliver())? Fixed at create. */
static bool sv_steer_direct(const struct sv_qp *qp)
{
	return qp->rss || qp->rq.bh;
}

/*
 * Write @c, which is the caller's to free, into the next receive WQE of
 * qp (or of the WQ its RSS hash picks) now. Destroy sets dead under
 * qp->lock before it lets go of the QP's CQ, rings and table: held across
 * the write, it keeps them. The stamp is taken under it too, in the order
 * of the completions, and the state is read under it: a frame lands
 * before a modify to RESET or ERR, or is dropped. Softirq (or BH off), RCU.
 */
static void sv_steer_deliver(struct sv_device *sdev, struct sv_qp *qp,
			     struct sk_buff *c, u32 tag)
{
	struct sv_rx_meta m = { .flags = sv_rx_qp_flags(qp), .tag = tag };
	bool ok = false;

	spin_lock_bh(&qp->lock);
	/* A modify sets the state under qp->lock, then resets or flushes. */
	if (!qp->dead && sv_qp_state_recv(qp->attr.qp_state)) {
		sv_rx_stamp(c, &qp->rx_last, &m.ts);
		ok = (qp->rss ? sv_rss_recv_frame : sv_exec_recv_frame)
			(qp, c, &m, this_cpu_ptr(sv_rx_scratch));
	}
	spin_unlock_bh(&qp->lock);
	if (!ok)
		sv_stat_add(sdev, SV_STAT_RX_RAW_DROPS, 1);
}

/*
 * Give fl's copy of a frame to its QP: a clone, or with @own the frame
 * itself, which the caller gives up (it is delivered, queued or freed).
 * A QP that takes frames in softirq gets it at once; for any other, it
 * is queued and the engine is kicked
 * only when the queue was empty: while it is not, the engine has work it
 * will not sleep on (sv_file_pending()), and it takes the queue in order.
 * Softirq (or BH off), RCU.
 */
static void sv_steer_queue(struct sv_device *sdev, struct sv_qp *qp,
			   struct sk_buff *skb, bool own, u32 tag, bool wire)
{
	bool queued = false, first = false;
	struct sk_buff *c = skb;
	unsigned long flags;

	if (!sv_qp_state_recv(READ_ONCE(qp->attr.qp_state)))
		goto drop;
	if (!own) {
		c = skb_clone(skb, GFP_ATOMIC);
		if (!c) {
			sv_stat_add(sdev, SV_STAT_RX_RAW_DROPS, 1);
			return;
		}
	}
	if (sv_steer_direct(qp)) {
		sv_steer_deliver(sdev, qp, c, tag);
		consume_skb(c);
		return;
	}
	sv_rx_cb(c)->tag = tag;
	sv_rx_cb(c)->wire = wire;
	spin_lock_irqsave(&qp->rxq.lock, flags);
	/*
	 * A flow being destroyed may still deliver for a grace period: a QP
	 * destroyed meanwhile (dead, then its queue purged under this lock)
	 * takes nothing more.
	 */
	if (!READ_ONCE(qp->dead) &&
	    skb_queue_len(&qp->rxq) < SV_RXQ_FRAMES &&
	    qp->rxq_bytes + c->truesize <= SV_RXQ_BYTES) {
		/* Under the lock: stamps in the order of the queue. */
		sv_rx_stamp(c, &qp->rx_last, &sv_rx_cb(c)->ts);
		first = skb_queue_empty(&qp->rxq);
		__skb_queue_tail(&qp->rxq, c);
		qp->rxq_bytes += c->truesize;
		queued = true;
	}
	spin_unlock_irqrestore(&qp->rxq.lock, flags);
	if (!queued) {
		kfree_skb(c);
		sv_stat_add(sdev, SV_STAT_RX_RAW_DROPS, 1);
		sv_stat_add(sdev, SV_STAT_RX_RAW_QUEUE_DROPS, 1);
		return;
	}
	if (!first)
		return;
	/* The QP is alive while not dead under its lock: so is its file. */
	spin_lock_bh(&qp->lock);
	if (!qp->dead)
		sv_engine_kick_rx(qp);
	spin_unlock_bh(&qp->lock);
	return;
drop:
	if (own)
		kfree_skb(skb);
	sv_stat_add(sdev, SV_STAT_RX_RAW_DROPS, 1);
}

/* Queue a copy of the frame for fl's QP. Softirq (or BH off), RCU. */
void sv_steer_enqueue(struct sv_device *sdev, struct sv_flow *fl,
		      struct sk_buff *skb)
{
	sv_steer_queue(sdev, fl->qp, skb, false, fl->tag, false);
}

/*
 * Queue a RoCE v2 frame (wire/rx.c), which the caller gives up, for qp,
 * a UD QP found under RCU: its engine places it (sv_wire_ud_recv()).
 */
void sv_rx_queue_wire(struct sv_device *sdev, struct sv_qp *qp,
		      struct sk_buff *skb)
{
	sv_steer_queue(sdev, qp, skb, true, 0, true);
}

/*
 * A frame's length as its QP receives it (the CQE's byte_len without a
 * UD QP's GRH) and its rules' counters count it: from the MAC header on,
 * a VLAN tag the kernel took out included, no FCS (netdevs strip it).
 */
u32 sv_steer_frame_len(const struct sk_buff *skb)
{
	return skb->data - skb_mac_header(skb) + skb->len +
	       (skb_vlan_tag_present(skb) ? VLAN_HLEN : 0);
}

/*
 * A frame on its way through the device's steering, with the copies that
 * rules rewrote (and mirrors made) still to walk on: each waits on todo
 * with where its walk goes on in its cb. At most SV_STEER_MAX_FRAMES
 * copies per frame, so that mirrors of mirrors cannot multiply it
 * without bound.
 */
#define SV_STEER_MAX_FRAMES	32

struct sv_steer_run {
	struct sv_device *sdev;
	struct sv_qp *src_qp;
	struct sk_buff_head todo;
	struct sk_buff **pass;		/* a rewritten frame for the stack */
	u32 frames;
	bool first;			/* the original frame's stats counted */
};

/* Where a rewritten copy's walk goes on (its cb, while on todo) */
struct sv_walk_cb {
	struct sv_steer *cur;
	int from;
	int left;
	u32 hops;
	u32 path_tag;
	bool path_tagged;
};

static struct sv_walk_cb *sv_walk_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sv_walk_cb) > sizeof(skb->cb));
	return (struct sv_walk_cb *)skb->cb;
}

/* Park the rewritten copy @c to walk on as @v says. */
static void sv_steer_later(struct sv_steer_run *run, struct sk_buff *c,
			   const struct sv_steer_verdict *v)
{
	struct sv_walk_cb *w = sv_walk_cb(c);

	w->cur = v->cur;
	w->from = v->from;
	w->left = v->left;
	w->hops = v->hops;
	w->path_tag = v->path_tag;
	w->path_tagged = v->path_tagged;
	__skb_queue_tail(&run->todo, c);
}

/* A rewritten copy that goes to the kernel's stack. */
static void sv_steer_pass(struct sv_steer_run *run, struct sk_buff *c)
{
	if (run->pass && !*run->pass) {
		*run->pass = c;
		return;
	}
	/* A second one (a mirror's), or a looped-back frame: as tx.c does */
	c->pkt_type = PACKET_LOOPBACK;
	netif_rx(c);
}

/* The tag of a rewritten copy that rule @fl delivers. */
static u32 sv_act_tag(const struct sv_flow *fl,
		      const struct sv_steer_verdict *v)
{
	if (fl->tagged || !v->path_tagged)
		return fl->tag;
	return v->path_tag;
}

/*
 * Carry out v->act, the rule that took @skb to rewrite or mirror it:
 * rewrite a copy, deliver it or park it to walk on. @skb stays the
 * caller's.
 */
static void sv_steer_act(struct sv_steer_run *run, struct sk_buff *skb,
			 struct sv_steer_verdict *v)
{
	struct sv_device *sdev = run->sdev;
	const struct sv_flow *fl = v->act;
	const struct sv_flow_rw *rw = fl->rw;
	const struct sv_steer_action *m = rw->mirror;
	struct sv_steer_verdict w;
	struct sk_buff *c, *x;
	u32 i;

	c = sv_rw_run(skb, rw->act, rw->n, true);
	if (!c || ++run->frames > SV_STEER_MAX_FRAMES) {
		kfree_skb(c);
		sv_stat_add(sdev, SV_STAT_STEER_DROPS, 1);
		return;
	}
	if (!m) {
		if (fl->qp) {
			sv_steer_queue(sdev, fl->qp, c, true, sv_act_tag(fl, v),
				       false);
		} else if (fl->dest_st || fl->dest_anchor) {
			if (sv_verdict_next(v, sdev->steer, fl)) {
				sv_steer_later(run, c, v);
			} else {
				kfree_skb(c);
				sv_stat_add(sdev, SV_STAT_STEER_LOOP_DROPS, 1);
				sv_stat_add(sdev, SV_STAT_STEER_DROPS, 1);
			}
		} else {
			/* A steering table's rule without one: its miss */
			sv_steer_pass(run, c);
		}
		return;
	}
	/* Every destination of the mirror gets the frame. */
	for (i = 0; i < m->n; i++) {
		const struct sv_mirror_dest *d = &m->dests[i];

		if (d->encap) {
			x = sv_rw_run(c, &d->encap, 1, true);
		} else if (i == m->n - 1) {
			x = c;
			c = NULL;
		} else {
			x = skb_clone(c, GFP_ATOMIC);
		}
		if (!x || (i && ++run->frames > SV_STEER_MAX_FRAMES)) {
			kfree_skb(x);
			sv_stat_add(sdev, SV_STAT_STEER_DROPS, 1);
			continue;
		}
		if (d->qp) {
			sv_steer_queue(sdev, d->qp, x, true, sv_act_tag(fl, v),
				       false);
			continue;
		}
		w = *v;
		if (sv_verdict_table(&w, d->st)) {
			sv_steer_later(run, x, &w);
		} else {
			kfree_skb(x);
			sv_stat_add(sdev, SV_STAT_STEER_LOOP_DROPS, 1);
			sv_stat_add(sdev, SV_STAT_STEER_DROPS, 1);
		}
	}
	kfree_skb(c);
}

/*
 * One walk of @skb (the original frame, or with v->resume a rewritten
 * copy that @own says is ours) through the rules; true if it is trapped.
 * @given: see sv_steer_frame_give().
 */
static bool sv_steer_walk_frame(struct sv_steer_run *run, struct sk_buff *skb,
				struct sv_steer_verdict *v, bool own,
				bool *given)
{
	struct sv_device *sdev = run->sdev;
	struct sv_flow_key key;
	bool mc, give;
	u32 i;

	sv_steer_parse(skb, &key);
	mc = is_multicast_ether_addr(key.outer.dst_mac);
	v->len = sv_steer_frame_len(skb);
	sv_steer_lookup(sdev->steer, &key, mc, run->src_qp, v);
	/* A frame someone else holds too (a tap) is never ours to queue. */
	give = (own || given) && v->trapped && v->n && !v->act &&
	       !skb_shared(skb);
	for (i = 0; i < v->n; i++)
		sv_steer_queue(sdev, v->deliver[i]->qp, skb,
			       give && i == v->n - 1, sv_verdict_tag(v, i),
			       false);
	if (v->act)
		sv_steer_act(run, skb, v);
	if (given)
		*given = give;
	sv_stat_add(sdev, SV_STAT_STEER_LOOP_DROPS, v->looped);
	if (!run->first) {
		/* Counted once per frame: what its first walk did */
		run->first = true;
		if (v->dropped)
			sv_stat_add(sdev, SV_STAT_STEER_DROPS, 1);
		else if (v->n || v->act)
			sv_stat_add(sdev, SV_STAT_STEER_HITS, 1);
		else
			sv_stat_add(sdev, SV_STAT_STEER_MISSES, 1);
		sv_stat_add(sdev, SV_STAT_STEER_MATCHED, v->matched);
		sv_stat_add(sdev, SV_STAT_STEER_TRAPPED, v->trapped);
		sv_stat_add(sdev, SV_STAT_STEER_PASSED, !v->trapped);
	} else if (v->dropped) {
		sv_stat_add(sdev, SV_STAT_STEER_DROPS, 1);
	}
	sv_stat_add(sdev, SV_STAT_STEER_COPIES, v->copies);
	if (own && !give) {
		if (v->trapped)
			consume_skb(skb);
		else
			sv_steer_pass(run, skb);
	}
	return v->trapped;
}

/*
 * Steer one frame (data at the network header); true if it is trapped.
 * @src_qp: the sending QP for e-switch loopback, or NULL. @given: NULL,
 * or the frame may be given to the last QP that gets it when it is
 * trapped (no clone): then *given is true and the caller has lost it.
 * @pass: NULL, or where a rewritten copy for the kernel's stack goes
 * (the first one; others, and all without @pass, go up through
 * netif_rx() as looped-back frames). Under RCU, BH off.
 */
static bool sv_steer_frame_give(struct sv_device *sdev, struct sk_buff *skb,
				struct sv_qp *src_qp, bool *given,
				struct sk_buff **pass)
{
	struct sv_steer_run run = {
		.sdev = sdev, .src_qp = src_qp, .pass = pass,
	};
	struct sv_steer_verdict v;
	struct sv_walk_cb *w;
	struct sk_buff *c;
	bool trapped;

	if (given)
		*given = false;
	if (!atomic_read(&sdev->steer->nrules))
		return false;
	__skb_queue_head_init(&run.todo);
	v.resume = false;
	trapped = sv_steer_walk_frame(&run, skb, &v, false, given);
	while ((c = __skb_dequeue(&run.todo))) {
		w = sv_walk_cb(c);
		v.resume = true;
		v.cur = w->cur;
		v.from = w->from;
		v.left = w->left;
		v.hops = w->hops;
		v.path_tag = w->path_tag;
		v.path_tagged = w->path_tagged;
		sv_steer_walk_frame(&run, c, &v, true, NULL);
	}
	return trapped;
}

bool sv_steer_frame(struct sv_device *sdev, struct sk_buff *skb,
		    struct sv_qp *src_qp)
{
	return sv_steer_frame_give(sdev, skb, src_qp, NULL, NULL);
}

static rx_handler_result_t sv_steer_rx_handler(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;
	struct sv_device *sdev = rcu_dereference(skb->dev->rx_handler_data);
	struct sk_buff *pass = NULL;
	bool given;

	if (skb->pkt_type == PACKET_LOOPBACK || !sdev)
		return RX_HANDLER_PASS;
	/* RoCE v2 for the device's GIDs first, as a RoCE NIC takes it. */
	if (sv_wire_rx(sdev, skb))
		return RX_HANDLER_CONSUMED;
	if (!sv_steer_frame_give(sdev, skb, NULL, &given, &pass))
		return RX_HANDLER_PASS;
	if (!given)
		consume_skb(skb);
	if (!pass)
		return RX_HANDLER_CONSUMED;
	/* A rule rewrote it: the stack gets the rewritten frame. */
	*pskb = pass;
	return RX_HANDLER_PASS;
}

/* The device sees ndev's frames from now on. rtnl held. */
int sv_steer_bind(struct sv_device *sdev, struct net_device *ndev)
{
	ASSERT_RTNL();
	return netdev_rx_handler_register(ndev, sv_steer_rx_handler, sdev);
}

/* ... no more: returns after every running handler is done. rtnl held. */
void sv_steer_unbind(struct sv_device *sdev, struct net_device *ndev)
{
	ASSERT_RTNL();
	if (rtnl_dereference(ndev->rx_handler) == sv_steer_rx_handler &&
	    rtnl_dereference(ndev->rx_handler_data) == sdev)
		netdev_rx_handler_unregister(ndev);
}

int sv_steer_device_init(struct sv_device *sdev)
{
	sdev->steer = sv_steer_alloc();
	sdev->steer_tx = sv_steer_alloc();
	if (sdev->steer && sdev->steer_tx)
		return 0;
	sv_steer_device_fini(sdev);
	return -ENOMEM;
}

void sv_steer_device_fini(struct sv_device *sdev)
{
	sv_steer_free(sdev->steer);
	sv_steer_free(sdev->steer_tx);
	sdev->steer = NULL;
	sdev->steer_tx = NULL;
}

/* ---- QP receive queues (the engine's side) ---- */

void sv_steer_qp_init(struct sv_qp *qp)
{
	skb_queue_head_init(&qp->rxq);
	qp->rxq_bytes = 0;
}

bool sv_steer_qp_pending(struct sv_qp *qp)
{
	return !skb_queue_empty_lockless(&qp->rxq);
}

static struct sk_buff *sv_rxq_dequeue(struct sv_qp *qp)
{
	struct sk_buff *skb;
	unsigned long flags;

	spin_lock_irqsave(&qp->rxq.lock, flags);
	skb = __skb_dequeue(&qp->rxq);
	if (skb)
		qp->rxq_bytes -= skb->truesize;
	spin_unlock_irqrestore(&qp->rxq.lock, flags);
	return skb;
}

/* Drop whatever is queued (QP destroyed, reset, or in error). */
void sv_steer_qp_purge(struct sv_qp *qp)
{
	struct sk_buff *skb;

	while ((skb = sv_rxq_dequeue(qp)))
		kfree_skb(skb);
}

/*
 * Move up to @budget queued frames into receive WQEs; true if any was
 * taken. They leave the queue in batches (one lock for up to
 * SV_RXQ_BATCH). The engine, under qp->sq.lock; @buf is
 * sv_exec_buf_size().
 */
#define SV_RXQ_BATCH	32

u32 sv_steer_qp_drain(struct sv_qp *qp, void *buf, u32 budget)
{
	struct sv_rx_meta m = { .flags = sv_rx_qp_flags(qp) };
	struct sk_buff_head batch;
	struct sk_buff *skb;
	unsigned long flags;
	u32 n = 0, k;

	__skb_queue_head_init(&batch);
	while (n < budget) {
		k = min_t(u32, budget - n, SV_RXQ_BATCH);
		spin_lock_irqsave(&qp->rxq.lock, flags);
		while (k-- && (skb = __skb_dequeue(&qp->rxq))) {
			qp->rxq_bytes -= skb->truesize;
			__skb_queue_tail(&batch, skb);
		}
		spin_unlock_irqrestore(&qp->rxq.lock, flags);
		if (skb_queue_empty(&batch))
			break;
		while ((skb = __skb_dequeue(&batch))) {
			n++;
			m.tag = sv_rx_cb(skb)->tag;
			m.ts = sv_rx_cb(skb)->ts;
			/* RSS QPs take theirs in softirq: never queued */
			if (sv_rx_cb(skb)->wire) {
				if (!sv_wire_recv(qp, skb, &m, buf))
					sv_stat_add(qp->sdev,
						    SV_STAT_WIRE_RX_DROPS, 1);
			} else if (!sv_exec_recv_frame(qp, skb, &m, buf)) {
				sv_stat_add(qp->sdev, SV_STAT_RX_RAW_DROPS, 1);
			}
			consume_skb(skb);
		}
		/* One ACK for the batch's RC requests (wire/rc.c) */
		sv_wire_rc_ack_flush(qp);
	}
	return n;
}
