// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs on the wire: taking RoCE v2 frames off a bound netdev.
 *
 * The device's rx_handler (steer/rx.c) asks sv_wire_rx() first about
 * every frame, as a RoCE NIC looks at what it receives before its
 * Ethernet steering: an IPv4 (no options, not a fragment) or IPv6 UDP
 * datagram to port 4791 whose destination address is one of the
 * device's GIDs, or a multicast group it has QPs in, is the device's,
 * whatever becomes of it; any other frame
 * goes on to steering and the stack untouched. A frame of ours with a
 * bad length, BTH version, P_Key or ICRC is dropped and counted
 * (wire_rx_drops, wire_icrc_errors); a good one goes to its transport
 * by the opcode's top bits. A UD frame's ICRC is checked here; a UC or
 * RC frame's by the engine of the QP it is queued for (qp.c), or here
 * if it is dropped first. Softirq, RCU held.
 */
#include <linux/if_vlan.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "../compat.h"
#include "wire.h"

/* The bytes of an operation's extension headers (IBA table 38). */
static int sv_wire_op_ext(u8 op)
{
	switch (op) {
	case SV_OP_SEND_FIRST:
	case SV_OP_SEND_MIDDLE:
	case SV_OP_SEND_LAST:
	case SV_OP_SEND_ONLY:
	case SV_OP_WRITE_MIDDLE:
	case SV_OP_WRITE_LAST:
	case SV_OP_READ_MIDDLE:
		return 0;
	case SV_OP_SEND_LAST_IMM:
	case SV_OP_SEND_ONLY_IMM:
	case SV_OP_WRITE_LAST_IMM:
	case SV_OP_SEND_LAST_INV:
	case SV_OP_SEND_ONLY_INV:
	case SV_OP_READ_FIRST:
	case SV_OP_READ_LAST:
	case SV_OP_READ_ONLY:
	case SV_OP_ACK:
		return 4;
	case SV_OP_ATOMIC_ACK:
		return 4 + 8;
	case SV_OP_WRITE_FIRST:
	case SV_OP_WRITE_ONLY:
	case SV_OP_READ_REQ:
		return sizeof(struct sv_reth);
	case SV_OP_WRITE_ONLY_IMM:
		return sizeof(struct sv_reth) + 4;
	case SV_OP_CMP_SWAP:
	case SV_OP_FETCH_ADD:
		return sizeof(struct sv_atomic_eth);
	case SV_OP_ATOMIC_WRITE:	/* its 8 bytes are the payload */
		return sizeof(struct sv_reth);
	case SV_OP_FLUSH:
		return SV_FETH_LEN + sizeof(struct sv_reth);
	default:
		return -1;
	}
}

/*
 * The bytes of an opcode's extension headers, or -1 if the device does
 * not take it: UD sends, UC sends and writes, all of RC's.
 */
static int sv_wire_ext_len(u8 opcode)
{
	u8 op = opcode & 0x1f;

	switch (SV_OP_TRANSPORT(opcode)) {
	case SV_OP_UD:
		if (op == SV_OP_SEND_ONLY || op == SV_OP_SEND_ONLY_IMM)
			return sizeof(struct sv_deth) + sv_wire_op_ext(op);
		return -1;
	case SV_OP_UC:
		return op <= SV_OP_WRITE_ONLY_IMM ? sv_wire_op_ext(op) : -1;
	case SV_OP_RC:
		return sv_wire_op_ext(op);
	default:
		return -1;
	}
}

/* A frame sv_wire_rx() checked and took: its layout. */
void sv_wire_parse(const struct sk_buff *skb, struct sv_wire_pkt *p)
{
	const struct sv_bth *bth = (const struct sv_bth *)skb->data;
	u32 pad = (bth->flags & SV_BTH_PAD_MASK) >> SV_BTH_PAD_SHIFT;
	u32 ext = sv_wire_ext_len(bth->opcode);

	p->bth = bth;
	p->opcode = bth->opcode;
	p->dqpn = be32_to_cpu(bth->qpn) & SV_QPN_MASK;
	p->ext = skb->data + sizeof(*bth);
	p->payload = p->ext + ext;
	p->paylen = skb->len - sizeof(*bth) - ext - pad - SV_ICRC_LEN;
}

/*
 * Is this an IP/UDP datagram to port 4791 and one of sdev's GIDs? Then
 * *hlen is its IP and UDP headers' length, *len the UDP payload's.
 * skb->data at the IP header; only the headers are pulled in.
 */
static bool sv_wire_ours(struct sv_device *sdev, struct sk_buff *skb,
			 u32 *hlen, u32 *len)
{
	const struct udphdr *uh;
	u8 gid[16];

	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *ip;

		if (!pskb_may_pull(skb, sizeof(*ip) + sizeof(*uh)))
			return false;
		ip = (const struct iphdr *)skb->data;
		if (ip->version != 4 || ip->ihl != 5 ||
		    ip->protocol != IPPROTO_UDP || ip_is_fragment(ip))
			return false;
		uh = (const struct udphdr *)(ip + 1);
		if (uh->dest != htons(SV_ROCE_V2_PORT))
			return false;
		ipv6_addr_set_v4mapped(ip->daddr, (struct in6_addr *)gid);
		*hlen = sizeof(*ip) + sizeof(*uh);
		*len = ntohs(ip->tot_len) - *hlen;
		/* Too short, or a header checksum that fails: dropped. */
		if (ntohs(ip->tot_len) < *hlen || ip_fast_csum(ip, ip->ihl))
			*len = 0;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6;

		if (!pskb_may_pull(skb, sizeof(*ip6) + sizeof(*uh)))
			return false;
		ip6 = (const struct ipv6hdr *)skb->data;
		if (ip6->version != 6 || ip6->nexthdr != IPPROTO_UDP)
			return false;
		uh = (const struct udphdr *)(ip6 + 1);
		if (uh->dest != htons(SV_ROCE_V2_PORT))
			return false;
		memcpy(gid, &ip6->daddr, 16);
		*hlen = sizeof(*ip6) + sizeof(*uh);
		*len = ntohs(ip6->payload_len) - sizeof(*uh);
		if (ntohs(ip6->payload_len) < sizeof(*uh))
			*len = 0;
	} else {
		return false;
	}
	/* The UDP length must say what the IP header says. */
	if (ntohs(uh->len) != *len + sizeof(*uh))
		*len = 0;
	/* An address of the netdev it came in on (a VLAN device's on it) */
	return sv_gid_on(sdev, gid, skb->dev->ifindex) ||
	       sv_mcast_member(sdev, gid);
}

/* Is the frame's ICRC right? One that is not is counted. */
static bool sv_wire_icrc_ok(struct sv_device *sdev, const struct sk_buff *skb)
{
	const u8 *nh = skb_network_header(skb);

	if (get_unaligned_le32(skb_tail_pointer(skb) - SV_ICRC_LEN) ==
	    ~sv_icrc(nh, (nh[0] >> 4) == 6, skb->len - SV_ICRC_LEN))
		return true;
	sv_stat_add(sdev, SV_STAT_WIRE_ICRC_ERRORS, 1);
	return false;
}

/**
 * sv_wire_icrc_take - check a taken frame's ICRC, and count it
 * @sdev: the device it came in on
 * @skb: the frame (sv_wire_rx() took it: data at the BTH, the IP header
 *	its network header)
 *
 * True if it is right: the frame counts as received (wire_rx_frames and
 * _bytes). False: counted in wire_icrc_errors, for the caller to drop.
 * UD frames are checked as they arrive; a connected QP's by its engine
 * as it takes them (sv_wire_recv()), which spreads the cost of the CRC
 * over the CPUs that run the receivers, or here where one is dropped
 * unqueued: a frame's ICRC is checked once, before anything of it is
 * used beyond its headers' lengths and its QP number.
 */
bool sv_wire_icrc_take(struct sv_device *sdev, const struct sk_buff *skb)
{
	if (!sv_wire_icrc_ok(sdev, skb))
		return false;
	sv_stat_add(sdev, SV_STAT_WIRE_RX_FRAMES, 1);
	sv_stat_add(sdev, SV_STAT_WIRE_RX_BYTES, skb->len);
	return true;
}

/* A frame's headers and pad fit, its P_Key is the device's */
static bool sv_wire_fit(struct sk_buff *skb)
{
	const struct sv_bth *bth = (const struct sv_bth *)skb->data;
	u32 pad, pkey;
	int ext;

	ext = sv_wire_ext_len(bth->opcode);
	pad = (bth->flags & SV_BTH_PAD_MASK) >> SV_BTH_PAD_SHIFT;
	if (ext < 0 || skb->len < sizeof(*bth) + ext + pad + SV_ICRC_LEN)
		return false;
	/* The device's one partition is the default one, 0xffff. */
	pkey = be16_to_cpu(bth->pkey);
	return (pkey & 0x7fff) == (SV_DEFAULT_PKEY & 0x7fff);
}

/*
 * The frame's BTH, with skb->data at it: fit to take? One that has room
 * for its ICRC but is not fit is counted if its ICRC is wrong too.
 */
static bool sv_wire_check(struct sv_device *sdev, struct sk_buff *skb)
{
	const struct sv_bth *bth = (const struct sv_bth *)skb->data;

	if (skb->len < sizeof(*bth) + SV_ICRC_LEN ||
	    (bth->flags & SV_BTH_TVER_MASK))
		return false;
	if (!sv_wire_fit(skb)) {
		sv_wire_icrc_ok(sdev, skb);
		return false;
	}
	return true;
}

/**
 * sv_wire_rx - take the frame if it is RoCE v2 for one of sdev's GIDs
 * @sdev: the device bound to the netdev the frame came in on
 * @skb: the frame, its data at the network header (it may be shared)
 *
 * Returns true if the frame was the device's: it is consumed (queued for
 * a QP, or dropped and counted). False: not RoCE v2 for this device, the
 * caller keeps it untouched.
 */
bool sv_wire_rx(struct sv_device *sdev, struct sk_buff *skb)
{
	struct sv_wire_pkt p;
	u32 hlen, len;
	u8 gid[16];

	/*
	 * A multicast frame the device sent comes back looped by the IP
	 * layer (a member of the group): its own QPs had it (exec.c).
	 */
	if (skb_vlan_tag_present(skb) || skb->pkt_type == PACKET_LOOPBACK ||
	    !sv_wire_ours(sdev, skb, &hlen, &len))
		return false;
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		goto drop_counted;
	/* Ethernet pads short frames: the IP length says where it ends. */
	if (!len || skb_is_gso(skb) || pskb_trim(skb, hlen + len) ||
	    skb->len != hlen + len || skb_linearize(skb))
		goto drop;
	skb_reset_network_header(skb);
	__skb_pull(skb, hlen);
	if (!sv_wire_check(sdev, skb))
		goto drop;
	sv_wire_parse(skb, &p);
	sv_wire_dgid(skb, gid);
	switch (SV_OP_TRANSPORT(p.opcode)) {
	case SV_OP_UD:
		if (!sv_wire_icrc_take(sdev, skb))
			goto drop;
		sv_wire_ud_rx(sdev, &p, skb);
		return true;
	case SV_OP_UC:
	case SV_OP_RC:
		/* Connected transports have no groups. */
		if (sv_gid_is_multicast(gid))
			break;
		/* Its ICRC is checked where it is taken. */
		sv_wire_conn_rx(sdev, &p, skb);
		return true;
	default:
		break;
	}
	sv_wire_icrc_take(sdev, skb);
drop:
	kfree_skb(skb);
drop_counted:
	sv_stat_add(sdev, SV_STAT_WIRE_RX_DROPS, 1);
	return true;
}

/*
 * A VLAN device above the bound netdev (netdev.c): its frames come here
 * untagged by the VLAN code; the RoCE v2 ones for its addresses are the
 * device's, the rest go on to the stack. Steering stays the bound
 * netdev's. Softirq, RCU held.
 */
static rx_handler_result_t sv_wire_upper_rx_handler(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;
	struct sv_device *sdev = rcu_dereference(skb->dev->rx_handler_data);

	/* sv_wire_rx() leaves looped-back frames alone */
	return sdev && sv_wire_rx(sdev, skb) ? RX_HANDLER_CONSUMED :
					       RX_HANDLER_PASS;
}

/* sdev takes @upper's RoCE v2 frames: -EBUSY if another handler has it. */
int sv_wire_upper_bind(struct sv_device *sdev, struct net_device *upper)
{
	ASSERT_RTNL();
	return netdev_rx_handler_register(upper, sv_wire_upper_rx_handler,
					  sdev);
}

/* Does sdev take @upper's frames? RCU or rtnl held. */
bool sv_wire_upper_ours(const struct sv_device *sdev,
			const struct net_device *upper)
{
	return rcu_access_pointer(upper->rx_handler) ==
	       sv_wire_upper_rx_handler &&
	       rcu_access_pointer(upper->rx_handler_data) == sdev;
}

/* ... no more: returns after every running handler is done. rtnl held. */
void sv_wire_upper_unbind(struct sv_device *sdev, struct net_device *upper)
{
	ASSERT_RTNL();
	if (sv_wire_upper_ours(sdev, upper))
		netdev_rx_handler_unregister(upper);
}
