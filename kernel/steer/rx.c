// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs steering: frames in and out of a device bound to a netdev.
 *
 * Receive: the device's rx_handler on the netdev (registered at bind,
 * unregistered at unbind) sees every frame the netdev receives, in
 * softirq under RCU. The rules' verdict (table.c) names the QPs that get
 * a copy and whether the frame is trapped: a trapped frame is consumed,
 * any other goes on to the kernel's receive path unchanged
 * (RX_HANDLER_PASS). A copy is an skb clone on the QP's receive queue
 * (qp->rxq; a trapped frame goes itself, not cloned, to its last QP,
 * unless a tap holds it too): at most SV_RXQ_FRAMES frames and SV_RXQ_BYTES of truesize
 * per QP, beyond which frames are dropped and counted, as a NIC drops
 * what its ring cannot take. The QP's file's engine drains the queue
 * into posted receive WQEs (exec.c, sv_exec_recv_frame()): the receive
 * queue's lock is a mutex and softirq must not sleep. A frame that finds
 * no receive WQE then is dropped and counted (rx_raw_drops).
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
#include <linux/rtnetlink.h>

#include "steer.h"

#define SV_RXQ_FRAMES	1024
#define SV_RXQ_BYTES	(4 << 20)

/* What a queued frame carries besides the skb. */
struct sv_rx_cb {
	u32 tag;
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

/*
 * Queue fl's copy of a frame: a clone, or with @own the frame itself,
 * which the caller gives up (it is queued or freed). The engine is kicked
 * only when the queue was empty: while it is not, the engine has work it
 * will not sleep on (sv_file_pending()), and it takes the queue in order.
 * Softirq (or BH off), RCU.
 */
static void sv_steer_queue(struct sv_device *sdev, struct sv_flow *fl,
			   struct sk_buff *skb, bool own, u32 tag)
{
	struct sv_qp *qp = fl->qp;
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
	sv_rx_cb(c)->tag = tag;
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
		sv_rx_stamp(c, &sv_rx_cb(c)->ts);
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
		sv_engine_kick(qp->uobj.file);
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
	sv_steer_queue(sdev, fl, skb, false, fl->tag);
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
 * Steer one frame (data at the network header); true if it is trapped.
 * @src_qp: the sending QP for e-switch loopback, or NULL. @given: NULL,
 * or the frame may be given to the last QP that gets it when it is
 * trapped (no clone): then *given is true and the caller has lost it.
 * Under RCU.
 */
static bool sv_steer_frame_give(struct sv_device *sdev, struct sk_buff *skb,
				struct sv_qp *src_qp, bool *given)
{
	struct sv_steer *st = sdev->steer;
	struct sv_steer_verdict v;
	struct sv_flow_key key;
	bool mc, give;
	u32 i;

	if (!atomic_read(&st->nrules))
		return false;
	sv_steer_parse(skb, &key);
	mc = is_multicast_ether_addr(key.outer.dst_mac);
	v.len = sv_steer_frame_len(skb);
	sv_steer_lookup(st, &key, mc, src_qp, &v);
	/* A frame someone else holds too (a tap) is never ours to queue. */
	give = given && v.trapped && v.n && !skb_shared(skb);
	for (i = 0; i < v.n; i++)
		sv_steer_queue(sdev, v.deliver[i], skb,
			       give && i == v.n - 1, sv_verdict_tag(&v, i));
	if (given)
		*given = give;
	sv_stat_add(sdev, SV_STAT_STEER_LOOP_DROPS, v.looped);
	if (v.dropped)
		sv_stat_add(sdev, SV_STAT_STEER_DROPS, 1);
	else if (v.n)
		sv_stat_add(sdev, SV_STAT_STEER_HITS, 1);
	else
		sv_stat_add(sdev, SV_STAT_STEER_MISSES, 1);
	sv_stat_add(sdev, SV_STAT_STEER_MATCHED, v.matched);
	sv_stat_add(sdev, SV_STAT_STEER_TRAPPED, v.trapped);
	sv_stat_add(sdev, SV_STAT_STEER_PASSED, !v.trapped);
	sv_stat_add(sdev, SV_STAT_STEER_COPIES, v.copies);
	return v.trapped;
}

bool sv_steer_frame(struct sv_device *sdev, struct sk_buff *skb,
		    struct sv_qp *src_qp)
{
	return sv_steer_frame_give(sdev, skb, src_qp, NULL);
}

static rx_handler_result_t sv_steer_rx_handler(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;
	struct sv_device *sdev = rcu_dereference(skb->dev->rx_handler_data);
	bool given;

	if (skb->pkt_type == PACKET_LOOPBACK || !sdev)
		return RX_HANDLER_PASS;
	if (!sv_steer_frame_give(sdev, skb, NULL, &given))
		return RX_HANDLER_PASS;
	if (!given)
		consume_skb(skb);
	return RX_HANDLER_CONSUMED;
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

bool sv_steer_qp_drain(struct sv_qp *qp, void *buf, u32 budget)
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
			if (!(qp->rss ? sv_rss_recv_frame : sv_exec_recv_frame)
			    (qp, skb, &m, buf))
				sv_stat_add(qp->sdev, SV_STAT_RX_RAW_DROPS, 1);
			consume_skb(skb);
		}
	}
	return n;
}
