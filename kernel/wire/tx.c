// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs on the wire: routing a message and sending its frames.
 *
 * A message to a GID no device of this host (in the sender's namespace)
 * holds leaves through the sender's bound netdev as RoCE v2: the source
 * GID is an entry of the device's table, and the two GIDs say IPv4
 * (::ffff:a.b.c.d) or IPv6. The kernel's routing table picks the route
 * out of the netdev (sv_wire_route()), and the frame goes down the IP
 * output path (ip_local_out()), whose neighbour code resolves the
 * destination MAC (ARP or ND, with the frame queued meanwhile) and puts
 * on a VLAN tag where the route leaves through a VLAN device (the source
 * GID is an address of a VLAN device above the bound netdev: the route
 * is out of that VLAN device), its PCP from the traffic class (the
 * skb's priority, by the VLAN device's egress map). As rxe and
 * RoCE NICs do: IPv4 with DF and no options, the UDP checksum zero (RoCE
 * v2 has the ICRC), the traffic class as TOS or IPv6 traffic class
 * (DSCP and ECN), the hop limit as TTL, the source port from the flow
 * label or the QP (ECMP entropy), the destination port 4791.
 */
#include <linux/hash.h>
#include <linux/if_vlan.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp.h>

#include "../compat.h"
#include "wire.h"

/* The UDP source port: the flow label's bits folded, or the QPN's hash. */
u16 sv_wire_sport(u32 flow_label, u32 qpn)
{
	u32 fl = flow_label & 0xfffff;

	if (fl)
		return 0xc000 | ((fl & 0x3fff) ^ (fl >> 14));
	return 0xc000 | hash_32(qpn, 14);
}

static int sv_wire_route4(struct net *net, struct sv_wire_tx *t)
{
	struct flowi4 fl = {
		.flowi4_oif = t->ndev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.flowi4_tos = t->tclass & IPTOS_TOS_MASK,
		.saddr = *(__be32 *)(t->sgid + 12),
		.daddr = *(__be32 *)(t->dgid + 12),
	};
	struct rtable *rt;

	rt = ip_route_output_key(net, &fl);
	if (IS_ERR(rt))
		return -EHOSTUNREACH;
	t->dst = &rt->dst;
	return 0;
}

static int sv_wire_route6(struct net *net, struct sv_wire_tx *t)
{
	struct flowi6 fl = {
		.flowi6_oif = t->ndev->ifindex,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst;

	if (!ipv6_mod_enabled())
		return -EHOSTUNREACH;
	memcpy(&fl.saddr, t->sgid, 16);
	memcpy(&fl.daddr, t->dgid, 16);
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, NULL, &fl, NULL);
	if (IS_ERR(dst))
		return -EHOSTUNREACH;
	t->dst = dst;
	return 0;
}

/**
 * sv_wire_route - the route of a message from one of sdev's GIDs
 * @sdev: the sender's device
 * @t: dgid, tclass, hop_limit, flow_label and sport set; the rest is set
 *	here (release it with sv_wire_tx_release(), also on error)
 * @sgid_index: the source GID's entry in sdev's table
 *
 * -ENETDOWN if the device has no netdev, -EINVAL for an empty GID entry
 * or an IPv4 GID to an IPv6 one (or back), -EHOSTUNREACH without a
 * route out of the netdev.
 */
int sv_wire_route(struct sv_device *sdev, struct sv_wire_tx *t,
		  u32 sgid_index)
{
	static const u8 zero[16];
	struct net_device *upper;
	struct net *net;
	u32 ifindex;
	int ret;

	t->ndev = NULL;
	t->dst = NULL;
	t->skb = NULL;
	sv_gid_get(sdev, sgid_index, t->sgid);
	if (!memcmp(t->sgid, zero, 16))
		return -EINVAL;
	t->v6 = !ipv6_addr_v4mapped((struct in6_addr *)t->sgid);
	if (t->v6 == ipv6_addr_v4mapped((struct in6_addr *)t->dgid))
		return -EINVAL;
	ifindex = sv_gid_ifindex(sdev, sgid_index);
	rcu_read_lock();
	t->ndev = READ_ONCE(sdev->ndev);
	/* A VLAN device's address: out through that VLAN device, tagged. */
	if (t->ndev && ifindex && ifindex != t->ndev->ifindex) {
		upper = dev_get_by_index_rcu(dev_net(t->ndev), ifindex);
		t->ndev = upper && is_vlan_dev(upper) &&
			  vlan_dev_real_dev(upper) == t->ndev ? upper : NULL;
	}
	if (t->ndev)
		dev_hold(t->ndev);
	rcu_read_unlock();
	if (!t->ndev)
		return -ENETDOWN;
	/* The device lives in its netdev's namespace, held by the netdev. */
	net = dev_net(t->ndev);
	ret = t->v6 ? sv_wire_route6(net, t) : sv_wire_route4(net, t);
	if (ret)
		return ret;
	t->mtu = sv_mtu_bytes(READ_ONCE(sdev->active_mtu));
	return 0;
}

void sv_wire_tx_release(struct sv_wire_tx *t)
{
	kfree_skb(t->skb);
	t->skb = NULL;
	dst_release(t->dst);
	t->dst = NULL;
	if (t->ndev)
		dev_put(t->ndev);
	t->ndev = NULL;
}

static u32 sv_wire_iplen(const struct sv_wire_tx *t)
{
	return t->v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
}

/**
 * sv_wire_frame - a new frame on t's route
 * @t: routed (sv_wire_route())
 * @hdrs: the bytes of the BTH and its extension headers
 * @paylen: the payload's
 *
 * Returns where the BTH goes (the payload goes @hdrs after it, the pad
 * after that is zeroed), or NULL without memory. The frame stays t's
 * until sv_wire_xmit() sends it.
 */
void *sv_wire_frame(struct sv_wire_tx *t, u32 hdrs, u32 paylen)
{
	u32 pad = -paylen & 3;
	u32 room = LL_RESERVED_SPACE(t->ndev) + sv_wire_iplen(t) +
		   sizeof(struct udphdr);
	struct sk_buff *skb;
	u8 *p;

	kfree_skb(t->skb);
	t->skb = alloc_skb(room + hdrs + paylen + pad + SV_ICRC_LEN,
			   GFP_KERNEL);
	skb = t->skb;
	if (!skb)
		return NULL;
	skb_reserve(skb, room);
	p = skb_put(skb, hdrs + paylen + pad + SV_ICRC_LEN);
	memset(p + hdrs + paylen, 0, pad);
	return p;
}

/**
 * sv_wire_ip_hdr - the IPv4 or IPv6 header of a RoCE v2 frame
 * @t: its addresses (sgid, dgid), v6, tclass, hop_limit and flow_label
 * @nh: where the header goes
 * @l4len: the bytes after it, from the UDP header to the ICRC
 *
 * Also the 40 bytes a UD message delivered inside one device begins
 * with (exec.c). An IPv4 header's checksum is left 0.
 */
void sv_wire_ip_hdr(const struct sv_wire_tx *t, void *nh, u32 l4len)
{
	struct ipv6hdr *ip6 = nh;
	struct iphdr *ip = nh;

	if (t->v6) {
		ip6_flow_hdr(ip6, t->tclass, htonl(t->flow_label & 0xfffff));
		ip6->payload_len = htons(l4len);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = t->hop_limit;
		memcpy(&ip6->saddr, t->sgid, 16);
		memcpy(&ip6->daddr, t->dgid, 16);
		return;
	}
	ip->version = 4;
	ip->ihl = sizeof(*ip) / 4;
	ip->tos = t->tclass;
	ip->tot_len = htons(sizeof(*ip) + l4len);
	ip->frag_off = htons(IP_DF);
	ip->ttl = t->hop_limit;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = *(__be32 *)(t->sgid + 12);
	ip->daddr = *(__be32 *)(t->dgid + 12);
	ip->check = 0;
	/*
	 * DF: an atomic datagram, never fragmented, so its ID identifies
	 * nothing (RFC 6864 4.1); the stack gives 0 too to a DF datagram
	 * of no connected socket, and the hash of an ID generator is
	 * spared on every frame.
	 */
	ip->id = 0;
}

/* The IP header on t's frame; ip_local_out() sums an IPv4 one. */
static void sv_wire_ip(struct sv_wire_tx *t, struct sk_buff *skb)
{
	u32 hlen = sv_wire_iplen(t);

	skb_push(skb, hlen);
	skb_reset_network_header(skb);
	sv_wire_ip_hdr(t, skb_network_header(skb), skb->len - hlen);
	if (t->v6) {
		skb->protocol = htons(ETH_P_IPV6);
		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	} else {
		skb->protocol = htons(ETH_P_IP);
		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	}
}

/**
 * sv_wire_xmit - put t's frame (its BTH on, filled) on the wire
 * @sdev: the sending device, which counts it
 * @t: the route and the frame, which is gone after the call
 *
 * The IP and UDP headers and the ICRC go on here. 0 or -errno: a frame
 * the IP layer refused (no neighbour yet, a full queue) is lost as on a
 * wire, and the caller's transport recovers as it would then.
 */
int sv_wire_xmit(struct sv_device *sdev, struct sv_wire_tx *t)
{
	struct sk_buff *skb = t->skb;
	struct net *net = dev_net(t->ndev);
	u32 len = skb->len, crc;
	struct udphdr *uh;
	int ret;

	t->skb = NULL;
	skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(t->sport);
	uh->dest = htons(SV_ROCE_V2_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;
	sv_wire_ip(t, skb);
	crc = sv_icrc(skb_network_header(skb), t->v6, len - SV_ICRC_LEN);
	put_unaligned_le32(~crc, skb_tail_pointer(skb) - SV_ICRC_LEN);
	skb->dev = t->ndev;
	/*
	 * The priority a socket with this TOS has, which the kernel's
	 * rdma_cm also takes as a RoCE path's service level: a VLAN
	 * device's egress map makes it the tag's PCP.
	 */
	skb->priority = rt_tos2priority(t->tclass);
	skb_dst_set(skb, dst_clone(t->dst));
	ret = t->v6 ? ip6_local_out(net, NULL, skb) :
		      ip_local_out(net, NULL, skb);
	ret = net_xmit_eval(ret);
	if (ret) {
		sv_stat_add(sdev, SV_STAT_WIRE_TX_DROPS, 1);
		return ret;
	}
	sv_stat_add(sdev, SV_STAT_WIRE_TX_FRAMES, 1);
	sv_stat_add(sdev, SV_STAT_WIRE_TX_BYTES, len);
	return 0;
}
