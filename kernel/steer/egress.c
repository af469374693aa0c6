// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs egress rules: IBV_FLOW_ATTR_FLAGS_EGRESS, as mlx5 treats it.
 *
 * An egress rule sits in the device's transmit table (sdev->steer_tx, the
 * same priority groups and per-mask hash tables as the receive side's)
 * and sees every frame a RAW_PACKET QP of the device sends, before the
 * e-switch and the wire. The first priority with a matching rule decides,
 * DONT_TRAP rules before it only count: a DROP rule drops the frame (the
 * send still completes successfully, as on a NIC), any other rule lets it
 * go on. Its QP names the owner; a sent frame is not delivered to it.
 * ACTION_COUNT counts packets and bytes as on receive. Only NORMAL rules
 * and no tags (flow.c).
 */
#include "steer.h"

/*
 * True if an egress rule drops @skb (data at the MAC header, a VLAN tag
 * in band). Process context.
 */
bool sv_steer_egress(struct sv_device *sdev, const struct sk_buff *skb)
{
	struct sv_steer *st = sdev->steer_tx;
	struct sv_steer_verdict v;
	struct sv_flow_key key;

	if (!atomic_read(&st->nrules))
		return false;
	sv_steer_parse_tx(skb, &key);
	v.len = skb->len;
	local_bh_disable();
	rcu_read_lock();
	sv_steer_lookup(st, &key, false, NULL, &v);
	rcu_read_unlock();
	local_bh_enable();
	sv_stat_add(sdev, SV_STAT_STEER_LOOP_DROPS, v.looped);
	if (v.dropped)
		sv_stat_add(sdev, SV_STAT_STEER_TX_DROPS, 1);
	return v.dropped;
}
