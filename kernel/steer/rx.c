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
 * (qp->rxq): at most SV_RXQ_FRAMES frames and SV_RXQ_BYTES of truesize
 * per QP, beyond which frames are dropped and counted, as a NIC drops
 * what its ring cannot take. The QP's file's engine drains the queue
 * into posted receive WQEs (exec.c, sv_exec_recv_frame()): the receive
 * queue's lock is a mutex and softirq must not sleep. A frame that finds
 * no receive WQE then is dropped and counted (rx_raw_drops).
 *
 * Transmit: a RAW_PACKET QP's send WQE is one Ethernet frame, sent with
 * dev_queue_xmit() on the bound netdev. The e-switch: a frame to the
 * device's own MAC, or to a multicast or broadcast address, also goes
 * through the device's own steering (to its own MAC, only there: what no
 * rule traps goes to the local kernel stack, not out). The
 * sending QP receives it only by a rule with ALLOW_LOOP_BACK, and a
 * multicast frame never if it was created with BLOCK_SELF_MCAST_LB.
 * SNIFFER rules see every frame the device's QPs send, too.
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

/* Queue a copy of the frame for fl's QP. Softirq (or BH off), RCU. */
static void sv_steer_enqueue(struct sv_device *sdev, struct sv_flow *fl,
			     struct sk_buff *skb)
{
	struct sv_qp *qp = fl->qp;
	struct sk_buff *c;
	unsigned long flags;
	bool queued = false;

	if (!sv_qp_state_recv(READ_ONCE(qp->attr.qp_state))) {
		sv_stat_add(sdev, SV_STAT_RX_RAW_DROPS, 1);
		return;
	}
	c = skb_clone(skb, GFP_ATOMIC);
	if (!c) {
		sv_stat_add(sdev, SV_STAT_RX_RAW_DROPS, 1);
		return;
	}
	sv_rx_cb(c)->tag = fl->tag;
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
		__skb_queue_tail(&qp->rxq, c);
		qp->rxq_bytes += c->truesize;
		queued = true;
	}
	spin_unlock_irqrestore(&qp->rxq.lock, flags);
	if (!queued) {
		kfree_skb(c);
		sv_stat_add(sdev, SV_STAT_RX_RAW_DROPS, 1);
		return;
	}
	/* The QP is alive while not dead under its lock: so is its file. */
	spin_lock_bh(&qp->lock);
	if (!qp->dead)
		sv_engine_kick(qp->uobj.file);
	spin_unlock_bh(&qp->lock);
}

/*
 * A frame's length as its QP receives it (the CQE's byte_len without a
 * UD QP's GRH) and its rules' counters count it: from the MAC header on,
 * a VLAN tag the kernel took out included, no FCS (netdevs strip it).
 */
static u32 sv_steer_frame_len(const struct sk_buff *skb)
{
	return skb->data - skb_mac_header(skb) + skb->len +
	       (skb_vlan_tag_present(skb) ? VLAN_HLEN : 0);
}

/*
 * Steer one frame (data at the network header); true if it is trapped.
 * @src_qp: the sending QP for e-switch loopback, or NULL. Under RCU.
 */
static bool sv_steer_frame(struct sv_device *sdev, struct sk_buff *skb,
			   struct sv_qp *src_qp)
{
	struct sv_steer *st = sdev->steer;
	struct sv_steer_verdict v;
	struct sv_flow_key key;
	bool mc;
	u32 i;

	if (!atomic_read(&st->nrules))
		return false;
	sv_steer_parse(skb, &key);
	mc = is_multicast_ether_addr(key.outer.dst_mac);
	v.len = sv_steer_frame_len(skb);
	sv_steer_lookup(st, &key, mc, src_qp, &v);
	for (i = 0; i < v.n; i++)
		sv_steer_enqueue(sdev, v.deliver[i], skb);
	if (v.dropped)
		sv_stat_add(sdev, SV_STAT_STEER_DROPS, 1);
	else if (v.n)
		sv_stat_add(sdev, SV_STAT_STEER_HITS, 1);
	else
		sv_stat_add(sdev, SV_STAT_STEER_MISSES, 1);
	return v.trapped;
}

static rx_handler_result_t sv_steer_rx_handler(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;
	struct sv_device *sdev = rcu_dereference(skb->dev->rx_handler_data);

	if (skb->pkt_type == PACKET_LOOPBACK || !sdev)
		return RX_HANDLER_PASS;
	if (!sv_steer_frame(sdev, skb, NULL))
		return RX_HANDLER_PASS;
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
	return sdev->steer ? 0 : -ENOMEM;
}

void sv_steer_device_fini(struct sv_device *sdev)
{
	sv_steer_free(sdev->steer);
	sdev->steer = NULL;
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
 * taken. The engine, under qp->sq.lock; @buf is sv_exec_buf_size().
 */
bool sv_steer_qp_drain(struct sv_qp *qp, void *buf, u32 budget)
{
	struct sv_rx_meta m = { .flags = sv_rx_qp_flags(qp) };
	struct sk_buff *skb;
	u32 n;

	for (n = 0; n < budget; n++) {
		skb = sv_rxq_dequeue(qp);
		if (!skb)
			break;
		m.tag = sv_rx_cb(skb)->tag;
		m.ts = sv_rx_cb(skb)->ts;
		if (!(qp->rss ? sv_rss_recv_frame : sv_exec_recv_frame)
		    (qp, skb, &m, buf))
			sv_stat_add(qp->sdev, SV_STAT_RX_RAW_DROPS, 1);
		consume_skb(skb);
	}
	return n;
}

/* ---- transmit ---- */

/*
 * The e-switch: what a frame the device sends to itself (its own MAC,
 * multicast, broadcast) does in its own steering, and the sniffers' copy
 * of every frame sent. @skb has data at the MAC header. True if the
 * frame is for the device alone (its own MAC): it does not go out.
 */
static bool sv_steer_loopback(struct sv_device *sdev, struct sv_qp *qp,
			      struct net_device *ndev, struct sk_buff *skb)
{
	const struct ethhdr *eth = (const struct ethhdr *)skb->data;
	bool own = ether_addr_equal(eth->h_dest, ndev->dev_addr);
	bool mc = is_multicast_ether_addr(eth->h_dest);
	struct sk_buff *c;

	if (!own && !atomic_read(&sdev->steer->nrules))
		return false;
	c = skb_copy(skb, GFP_KERNEL);
	if (!c)
		return own;
	c->protocol = eth_type_trans(c, ndev);
	if (eth_type_vlan(c->protocol))
		c = skb_vlan_untag(c);
	if (!c)
		return own;
	local_bh_disable();
	rcu_read_lock();
	if (own) {
		/*
		 * What no rule traps goes to the host, as a NIC's e-switch
		 * hands it to the PF: the kernel's stack, as a looped-back
		 * frame, which our own rx_handler lets pass.
		 */
		if (!sv_steer_frame(sdev, c, qp)) {
			c->pkt_type = PACKET_LOOPBACK;
			netif_rx(c);
			c = NULL;
		}
	} else if (mc) {
		sv_steer_frame(sdev, c, qp);
	} else {
		struct sv_steer_verdict v;
		struct sv_flow *fl;
		u32 i = 0;

		/* Not for the e-switch: only the sniffers see it. */
		v.n = 0;
		list_for_each_entry_rcu(fl, &sdev->steer->sniffers, list) {
			if (fl->qp == qp)
				continue;
			sv_flow_count(fl, sv_steer_frame_len(c));
			if (v.n < ARRAY_SIZE(v.deliver))
				v.deliver[v.n++] = fl;
		}
		for (i = 0; i < v.n; i++)
			sv_steer_enqueue(sdev, v.deliver[i], c);
	}
	rcu_read_unlock();
	local_bh_enable();
	if (c)
		consume_skb(c);
	return own;
}

/*
 * Send one frame of a RAW_PACKET QP: 0, -EMSGSIZE (longer than the
 * netdev's MTU plus its hard header, or shorter than an Ethernet
 * header), -ENETDOWN (no netdev any more). Consumes @skb. The engine.
 */
int sv_steer_xmit(struct sv_qp *qp, struct sk_buff *skb)
{
	struct sv_device *sdev = qp->sdev;
	struct net_device *ndev;
	int ret = 0;

	rcu_read_lock();
	ndev = READ_ONCE(sdev->ndev);
	if (ndev)
		dev_hold(ndev);
	rcu_read_unlock();
	if (!ndev) {
		kfree_skb(skb);
		return -ENETDOWN;
	}
	if (skb->len < ETH_HLEN ||
	    skb->len > READ_ONCE(ndev->mtu) + ndev->hard_header_len) {
		kfree_skb(skb);
		ret = -EMSGSIZE;
		goto out;
	}
	skb->dev = ndev;
	skb_reset_mac_header(skb);
	skb_set_network_header(skb, ETH_HLEN);
	skb->protocol = eth_hdr(skb)->h_proto;
	if (sv_steer_loopback(sdev, qp, ndev, skb)) {
		consume_skb(skb);
		goto out;
	}
	/* A full queue drops, as a NIC's wire would: not the sender's error. */
	dev_queue_xmit(skb);
out:
	dev_put(ndev);
	return ret;
}
