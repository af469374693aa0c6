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
 * go on, a rule that rewrites it (action.c) sends on a rewritten copy.
 * Its QP names the owner; a sent frame is not delivered to it.
 * ACTION_COUNT counts packets and bytes as on receive. Only NORMAL rules
 * and no tags (flow.c).
 */
#include "steer.h"

/*
 * @skb (data at the MAC header, a VLAN tag in band) through the egress
 * rules: the frame to send on, which rules that rewrite it (action.c)
 * made a new one of, or NULL if a rule dropped it. @skb is consumed
 * when it is not what is returned. Process context.
 */
struct sk_buff *sv_steer_egress(struct sv_device *sdev, struct sk_buff *skb)
{
	struct sv_steer *st = sdev->steer_tx;
	struct sv_steer_verdict v;
	const struct sv_flow *fl;
	struct sv_flow_key key;
	struct sk_buff *c;

	if (!atomic_read(&st->nrules))
		return skb;
	v.resume = false;
	local_bh_disable();
	rcu_read_lock();
	for (;;) {
		sv_steer_parse_tx(skb, &key);
		v.len = skb->len;
		sv_steer_lookup(st, &key, false, NULL, &v);
		sv_stat_add(sdev, SV_STAT_STEER_LOOP_DROPS, v.looped);
		if (v.dropped || !v.act)
			break;
		fl = v.act;
		c = sv_rw_run(skb, fl->rw->act, fl->rw->n, false);
		consume_skb(skb);
		skb = c;
		if (!skb)
			break;
		/* A rule without a table or an anchor lets it go on. */
		if (!fl->dest_st && !fl->dest_anchor)
			break;
		if (!sv_verdict_next(&v, st, fl)) {
			sv_stat_add(sdev, SV_STAT_STEER_LOOP_DROPS, 1);
			break;
		}
		v.resume = true;
	}
	rcu_read_unlock();
	local_bh_enable();
	if (skb && v.dropped) {
		consume_skb(skb);
		skb = NULL;
	}
	if (v.dropped || (!skb && v.act))
		sv_stat_add(sdev, SV_STAT_STEER_TX_DROPS, 1);
	return skb;
}
