// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs connection manager: CM MADs on QP1.
 *
 * A CM MAD is a UD message of 256 bytes from QP1 to QP1 with the GSI
 * Q_Key 0x80010000 and the default P_Key, as rxe and RoCE NICs send them
 * (IBA vol. 1 ch. 13 and 16.7). One to a GID that a softverbs device of
 * the sender's namespace holds goes straight to that device's CM (the
 * local path); any other leaves through the device's netdev as RoCE v2
 * (wire/tx.c).
 *
 * Received ones (sv_cm_rx_frame(), from the UD receive path in softirq)
 * are copied, queued and handled by one work item under sv_cm_lock. The
 * queue is bounded: a flood of MADs is dropped and counted, as a NIC's
 * QP1 receive queue would drop it.
 */
#include <linux/random.h>
#include <net/dsfield.h>

#include "../wire/wire.h"
#include "cm.h"

#define SV_CM_RX_MAX	1024

static DEFINE_SPINLOCK(sv_cm_rx_lock);
static LIST_HEAD(sv_cm_rx_list);
static u32 sv_cm_rx_len;

static void sv_cm_rx_work_fn(struct work_struct *work)
{
	struct sv_cm_rx *rx;

	for (;;) {
		spin_lock_bh(&sv_cm_rx_lock);
		rx = list_first_entry_or_null(&sv_cm_rx_list, struct sv_cm_rx,
					      node);
		if (rx) {
			list_del(&rx->node);
			sv_cm_rx_len--;
		}
		spin_unlock_bh(&sv_cm_rx_lock);
		if (!rx)
			return;
		mutex_lock(&sv_cm_lock);
		sv_cm_handle(rx);
		mutex_unlock(&sv_cm_lock);
		put_device(&rx->sdev->dev);
		kfree(rx);
		cond_resched();
	}
}

static DECLARE_WORK(sv_cm_rx_work, sv_cm_rx_work_fn);

static void sv_cm_rx_queue(struct sv_cm_rx *rx)
{
	spin_lock_bh(&sv_cm_rx_lock);
	if (sv_cm_rx_len >= SV_CM_RX_MAX) {
		spin_unlock_bh(&sv_cm_rx_lock);
		sv_stat_add(rx->sdev, SV_STAT_WIRE_RX_DROPS, 1);
		kfree(rx);
		return;
	}
	get_device(&rx->sdev->dev);
	list_add_tail(&rx->node, &sv_cm_rx_list);
	sv_cm_rx_len++;
	spin_unlock_bh(&sv_cm_rx_lock);
	queue_work(sv_cm_wq, &sv_cm_rx_work);
}

/* Is this a CM MAD we speak? Its common header. */
static bool sv_cm_mad_ok(const u8 *mad)
{
	return mad[0] == 1 && mad[1] == SV_CM_CLASS &&
	       mad[2] == SV_CM_CLASS_VERSION && mad[3] == SV_MAD_METHOD_SEND;
}

/**
 * sv_cm_rx_frame - a UD frame to QP1 came in on sdev
 * @sdev: the device
 * @p: the frame, parsed (its DETH at p->ext)
 * @skb: the frame, consumed here
 *
 * Softirq, RCU held.
 */
void sv_cm_rx_frame(struct sv_device *sdev, const struct sv_wire_pkt *p,
		    struct sk_buff *skb)
{
	const struct sv_deth *deth = (const struct sv_deth *)p->ext;
	const u8 *nh = skb_network_header(skb);
	struct sv_cm_rx *rx;

	if (ntohl(deth->qkey) != SV_GSI_QKEY || p->paylen < SV_MAD_LEN ||
	    !sv_cm_mad_ok(p->payload))
		goto drop;
	rx = kzalloc(sizeof(*rx), GFP_ATOMIC);
	if (!rx)
		goto drop;
	rx->sdev = sdev;
	memcpy(rx->mad, p->payload, SV_MAD_LEN);
	sv_wire_dgid(skb, rx->dgid);
	if ((nh[0] >> 4) == 6) {
		memcpy(rx->sgid, &((const struct ipv6hdr *)nh)->saddr, 16);
		rx->tclass = ipv6_get_dsfield((const struct ipv6hdr *)nh);
	} else {
		ipv6_addr_set_v4mapped(((const struct iphdr *)nh)->saddr,
				       (struct in6_addr *)rx->sgid);
		rx->tclass = ((const struct iphdr *)nh)->tos;
	}
	consume_skb(skb);
	sv_cm_rx_queue(rx);
	return;
drop:
	kfree_skb(skb);
	sv_stat_add(sdev, SV_STAT_WIRE_RX_DROPS, 1);
}

/* Module exit, once no frame can come in: drop what is queued. */
void sv_cm_rx_flush(void)
{
	struct sv_cm_rx *rx, *tmp;
	LIST_HEAD(list);

	cancel_work_sync(&sv_cm_rx_work);
	spin_lock_bh(&sv_cm_rx_lock);
	list_splice_init(&sv_cm_rx_list, &list);
	sv_cm_rx_len = 0;
	spin_unlock_bh(&sv_cm_rx_lock);
	list_for_each_entry_safe(rx, tmp, &list, node) {
		put_device(&rx->sdev->dev);
		kfree(rx);
	}
}

/* A CM MAD's common header: a SEND of attribute @attr. */
void sv_cm_mad_init(u8 *mad, u16 attr, u64 tid)
{
	memset(mad, 0, SV_MAD_LEN);
	mad[0] = 1;			/* base version */
	mad[1] = SV_CM_CLASS;
	mad[2] = SV_CM_CLASS_VERSION;
	mad[3] = SV_MAD_METHOD_SEND;
	put_unaligned_be64(tid, mad + 8);
	put_unaligned_be16(attr, mad + 16);
}

/* The device of @net holding @gid, held; NULL if none. */
struct sv_device *sv_cm_local_dev(const struct net *net, const u8 *gid)
{
	struct sv_device *sdev;

	rcu_read_lock();
	sdev = sv_gid_holder(net, NULL, gid);
	if (sdev && !READ_ONCE(sdev->dead))
		get_device(&sdev->dev);
	else
		sdev = NULL;
	rcu_read_unlock();
	return sdev;
}

/**
 * sv_cm_mad_send - send a CM MAD from QP1 of sdev to QP1 at dgid
 * @sdev: the sending device
 * @sgid_index: its source GID
 * @dgid: where to
 * @tclass: the traffic class
 * @mad: SV_MAD_LEN bytes
 *
 * Process context. 0, or -errno when it could not leave (no route, no
 * source GID): a MAD lost on the way is not an error, the protocol's
 * retries are for that.
 */
int sv_cm_mad_send(struct sv_device *sdev, u32 sgid_index, const u8 *dgid,
		   u8 tclass, const u8 *mad)
{
	struct sv_wire_tx t = {
		.tclass = tclass,
		.hop_limit = 64,
		.sport = sv_wire_sport(0, 1),
	};
	struct sv_device *peer;
	struct sv_cm_rx *rx;
	struct sv_deth *deth;
	struct sv_bth *bth;
	int ret;
	u8 *p;

	if (READ_ONCE(sdev->dead))
		return -ENODEV;
	peer = sv_cm_local_dev(read_pnet(&sdev->net), dgid);
	if (peer) {
		rx = kzalloc(sizeof(*rx), GFP_KERNEL);
		if (!rx) {
			put_device(&peer->dev);
			return -ENOMEM;
		}
		rx->sdev = peer;
		sv_gid_get(sdev, sgid_index, rx->sgid);
		memcpy(rx->dgid, dgid, 16);
		rx->tclass = tclass;
		memcpy(rx->mad, mad, SV_MAD_LEN);
		sv_cm_rx_queue(rx);
		put_device(&peer->dev);
		return 0;
	}
	memcpy(t.dgid, dgid, 16);
	ret = sv_wire_route(sdev, &t, sgid_index);
	if (ret)
		goto out;
	p = sv_wire_frame(&t, sizeof(*bth) + sizeof(*deth), SV_MAD_LEN);
	if (!p) {
		ret = -ENOMEM;
		goto out;
	}
	bth = (struct sv_bth *)p;
	bth->opcode = SV_OP_UD | SV_OP_SEND_ONLY;
	bth->flags = 0;
	bth->pkey = htons(SV_DEFAULT_PKEY);
	bth->qpn = htonl(1);
	bth->apsn = htonl(get_random_u32() & SV_BTH_PSN_MASK);
	deth = (struct sv_deth *)(bth + 1);
	deth->qkey = htonl(SV_GSI_QKEY);
	deth->sqp = htonl(1);
	memcpy(deth + 1, mad, SV_MAD_LEN);
	ret = sv_wire_xmit(sdev, &t);
out:
	sv_wire_tx_release(&t);
	return ret;
}

/* Answer the sender of @rx (a REJ, a DREP, an RTU again) with @mad. */
void sv_cm_mad_reply(const struct sv_cm_rx *rx, const u8 *mad)
{
	int index = sv_gid_index(rx->sdev, rx->dgid, SV_GID_TYPE_ROCE_V2);

	if (index >= 0)
		sv_cm_mad_send(rx->sdev, index, rx->sgid, rx->tclass, mad);
}
