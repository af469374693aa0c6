// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs receive metadata: what a receive queue of a RAW_PACKET QP (its
 * RQ or SRQ) or a receive WQ reports of a steered frame besides its bytes,
 * as a NIC's receive offloads do (Documentation/steering.rst, "Receive
 * metadata"):
 *
 *   - the arrival time, on the device clock and the wall clock
 *     (sv_rx_stamp(), when the frame is queued for its QP);
 *   - the checksum verdict: IBV_WC_IP_CSUM_OK when the IPv4 header
 *     checksum and the TCP or UDP checksum are right (verbs defines the
 *     flag for IPv4; mlx5 reports it for nothing else); for a QP created
 *     with mlx5dv's TUNNEL_OFFLOADS (SV_RX_TUNNEL), the verdict on a
 *     VXLAN or GRE frame is about its inner headers, as the l3_ok/l4_ok
 *     of an mlx5 CQE are with the TIR's tunneled_offload_en: inner IPv4
 *     header and TCP/UDP checksums right, and the outer ones too (mlx5e
 *     turns such a CQE into CHECKSUM_UNNECESSARY at csum_level 1);
 *   - CVLAN stripping: the VLAN tag stays out of the frame written to the
 *     buffer, its TCI goes in the completion (ibv_wc_read_cvlan());
 *   - FCS scattering: the frame's 4-byte Ethernet FCS follows it.
 *
 * One function, sv_rx_frame_prep(), decides all of it for a frame, given
 * what the queue asks for (SV_RX_*: from a RAW_PACKET QP's create flags,
 * sv_rx_qp_flags(), or a WQ's flags); exec.c's sv_exec_recv_frame()
 * writes what it says, for QPs and WQs alike.
 */
#include <linux/crc32.h>
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/timekeeping.h>
#include <net/checksum.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>

#include "../compat.h"
#include "steer.h"

/* enum ibv_wc_flags */
#define SV_WC_F_IP_CSUM_OK	0x4

/* What sv_rx_csum() found */
#define SV_CSUM_IPV4		BIT(0)	/* an IPv4 packet ... */
#define SV_CSUM_L3_OK		BIT(1)	/* ... whose header checksum is right */
#define SV_CSUM_L4_OK		BIT(2)	/* a TCP or UDP checksum is right */

/**
 * sv_rx_stamp - a frame's arrival time, for the completion
 * @skb: the frame, as the rx_handler (or the e-switch) has it
 * @last: the stamp of the QP's last frame, updated
 * @ts: gets ns of the device clock (CLOCK_MONOTONIC_RAW) and of
 *	CLOCK_REALTIME
 *
 * When the stack stamped the frame on receive (net timestamping is on:
 * some socket asked for receive timestamps), that is its wall-clock
 * arrival time, and the device clock's is as long ago, both clocks read
 * in one snapshot; otherwise both are now, when the device queues the
 * frame. A QP's frames arrive in the order it takes them: the stack
 * stamps each on the CPU that received it, and one that stamped a frame
 * earlier may hand it over later, so a stamp before the last one is the
 * last one. Any context; the caller holds the lock that orders the QP's
 * frames (see sv_qp.rx_last).
 */
void sv_rx_stamp(const struct sk_buff *skb, struct sv_cq_stamp *last,
		 struct sv_cq_stamp *ts)
{
	u64 real = ktime_to_ns(skb_tstamp(skb));
	struct system_time_snapshot now;

	if (real) {
		ktime_get_snapshot(&now);
		ts->raw = ktime_to_ns(now.raw);
		ts->real = ktime_to_ns(now.real);
	} else {
		ts->raw = ktime_get_raw_ns();
		ts->real = ktime_get_real_ns();
	}
	/* A stamp from the future, or of another life (a second and more) */
	if (real && real <= ts->real && ts->real - real < NSEC_PER_SEC) {
		ts->raw -= ts->real - real;
		ts->real = real;
	}
	if (ts->raw < last->raw)
		*ts = *last;
	*last = *ts;
}

/* The SV_RX_* a RAW_PACKET QP's create flags ask for; 0 for a UD QP. */
u32 sv_rx_qp_flags(const struct sv_qp *qp)
{
	u32 f = SV_RX_CSUM;

	if (qp->qp_type != SV_QPT_RAW_PACKET)
		return 0;
	if (qp->flags & SV_CREATE_QP_TUNNEL_OFFLOADS)
		f |= SV_RX_TUNNEL;
	if (qp->create_flags & SV_QP_CREATE_CVLAN_STRIPPING)
		f |= SV_RX_STRIP_CVLAN;
	if (qp->create_flags & SV_QP_CREATE_SCATTER_FCS)
		f |= SV_RX_SCATTER_FCS;
	return f;
}

/* TCP or UDP at @l4 (@len bytes, the IP payload): can it be checked? */
static bool sv_rx_l4_ok_len(u8 proto, const u8 *l4, u32 len)
{
	if (proto == IPPROTO_TCP)
		return len >= sizeof(struct tcphdr);
	if (proto == IPPROTO_UDP)
		return len >= sizeof(struct udphdr) &&
		       ntohs(((const struct udphdr *)l4)->len) == len;
	return false;
}

/*
 * The checksums of the IP packet at @nh (@len bytes, linear; Ethernet
 * padding may follow the packet): SV_CSUM_*. @l4_trusted: the netdev (or
 * the stack that made the frame) vouches for the outer TCP/UDP checksum
 * (CHECKSUM_UNNECESSARY, CHECKSUM_PARTIAL); the IPv4 header checksum is
 * always checked here, as the stack does. Only the first fragment's
 * headers are looked at, and no fragment's L4 checksum (it covers the
 * whole datagram); IPv6 extension headers are not walked.
 */
static u32 sv_rx_csum(const u8 *nh, u32 len, __be16 proto, bool l4_trusted)
{
	const u8 *l4;
	u32 ret = 0, l4len;
	__wsum sum;
	u8 l4proto;

	if (proto == htons(ETH_P_IP)) {
		const struct iphdr *iph = (const struct iphdr *)nh;
		u32 ihl, tot;

		if (len < sizeof(*iph) || iph->version != 4)
			return 0;
		ihl = iph->ihl * 4;
		tot = ntohs(iph->tot_len);
		if (ihl < sizeof(*iph) || tot < ihl || tot > len)
			return 0;
		ret = SV_CSUM_IPV4;
		if (ip_fast_csum(nh, iph->ihl))
			return ret;
		ret |= SV_CSUM_L3_OK;
		if (ip_is_fragment(iph))
			return ret;
		l4 = nh + ihl;
		l4len = tot - ihl;
		l4proto = iph->protocol;
		if (!sv_rx_l4_ok_len(l4proto, l4, l4len))
			return ret;
		/* A UDP datagram without a checksum (IPv4 only) is fine. */
		if (l4_trusted || (l4proto == IPPROTO_UDP &&
				   !((const struct udphdr *)l4)->check))
			return ret | SV_CSUM_L4_OK;
		sum = csum_partial(l4, l4len, 0);
		if (!csum_tcpudp_magic(iph->saddr, iph->daddr, l4len, l4proto,
				       sum))
			ret |= SV_CSUM_L4_OK;
		return ret;
	}
	if (proto == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6 = (const struct ipv6hdr *)nh;

		if (len < sizeof(*ip6) || ip6->version != 6)
			return 0;
		l4 = nh + sizeof(*ip6);
		l4len = ntohs(ip6->payload_len);
		l4proto = ip6->nexthdr;
		if (l4len > len - sizeof(*ip6) ||
		    !sv_rx_l4_ok_len(l4proto, l4, l4len))
			return 0;
		if (l4_trusted)
			return SV_CSUM_L4_OK;
		sum = csum_partial(l4, l4len, 0);
		if (!csum_ipv6_magic(&ip6->saddr, &ip6->daddr, l4len, l4proto,
				     sum))
			ret |= SV_CSUM_L4_OK;
		return ret;
	}
	return 0;
}

/* The tunnels whose inner checksums a TUNNEL_OFFLOADS queue reports */
#define SV_VXLAN_PORT		4789
#define SV_VXLAN_HLEN		8
#define SV_GRE_CSUM		0x8000
#define SV_GRE_ROUTING		0x4000
#define SV_GRE_KEY		0x2000
#define SV_GRE_SEQ		0x1000
#define SV_GRE_VERSION		0x0007

/*
 * The inner IP packet of a VXLAN (UDP port 4789, an Ethernet frame with
 * at most one VLAN tag inside) or GRE (version 0, no routing; an Ethernet
 * frame for protocol 0x6558, else IPv4 or IPv6) tunnel in the outer IP
 * packet at @nh (@len bytes, linear). Returns its offset from @nh, with
 * its protocol in @inner and its bytes, up to the end of the outer
 * packet, in @ilen; 0 if the packet is no such tunnel. @outer_ok: the
 * outer IPv4 header checksum (IPv6 has none) and the tunnel's own
 * checksum (UDP: zero, or right, or vouched for by @l4_trusted; GRE: the
 * optional one) are right.
 */
static u32 sv_rx_tunnel(const u8 *nh, u32 len, __be16 proto, bool l4_trusted,
			__be16 *inner, u32 *ilen, bool *outer_ok)
{
	const struct udphdr *uh;
	u32 l4, end, off, gflags;
	const u8 *p;
	__be16 type;
	u8 l4proto;

	*outer_ok = true;
	if (proto == htons(ETH_P_IP)) {
		const struct iphdr *iph = (const struct iphdr *)nh;

		if (len < sizeof(*iph) || iph->version != 4 || iph->ihl < 5)
			return 0;
		l4 = iph->ihl * 4;
		end = ntohs(iph->tot_len);
		if (end < l4 || end > len || ip_is_fragment(iph))
			return 0;
		if (ip_fast_csum(nh, iph->ihl))
			*outer_ok = false;
		l4proto = iph->protocol;
	} else if (proto == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6 = (const struct ipv6hdr *)nh;

		if (len < sizeof(*ip6) || ip6->version != 6)
			return 0;
		l4 = sizeof(*ip6);
		end = l4 + ntohs(ip6->payload_len);
		if (end > len)
			return 0;
		l4proto = ip6->nexthdr;
	} else {
		return 0;
	}

	if (l4proto == IPPROTO_UDP) {
		uh = (const struct udphdr *)(nh + l4);
		if (end - l4 < sizeof(*uh) + SV_VXLAN_HLEN + ETH_HLEN ||
		    uh->dest != htons(SV_VXLAN_PORT) ||
		    ntohs(uh->len) != end - l4)
			return 0;
		/* Zero: no checksum (RFC 6935 lets tunnels do it on IPv6) */
		if (!l4_trusted && uh->check) {
			__wsum sum = csum_partial(uh, end - l4, 0);

			if (proto == htons(ETH_P_IP) ?
			    csum_tcpudp_magic(((const struct iphdr *)nh)->saddr,
					      ((const struct iphdr *)nh)->daddr,
					      end - l4, IPPROTO_UDP, sum) :
			    csum_ipv6_magic(&((const struct ipv6hdr *)nh)->saddr,
					    &((const struct ipv6hdr *)nh)->daddr,
					    end - l4, IPPROTO_UDP, sum))
				*outer_ok = false;
		}
		off = l4 + sizeof(*uh) + SV_VXLAN_HLEN;
		type = htons(ETH_P_TEB);
	} else if (l4proto == IPPROTO_GRE) {
		if (end - l4 < 4)
			return 0;
		p = nh + l4;
		gflags = get_unaligned_be16(p);
		if (gflags & (SV_GRE_ROUTING | SV_GRE_VERSION))
			return 0;
		type = get_unaligned((const __be16 *)(p + 2));
		off = l4 + 4 + (gflags & SV_GRE_CSUM ? 4 : 0) +
		      (gflags & SV_GRE_KEY ? 4 : 0) +
		      (gflags & SV_GRE_SEQ ? 4 : 0);
		if (off > end)
			return 0;
		if ((gflags & SV_GRE_CSUM) &&
		    csum_fold(csum_partial(p, end - l4, 0)))
			*outer_ok = false;
	} else {
		return 0;
	}

	if (type == htons(ETH_P_TEB)) {
		const struct ethhdr *eth = (const struct ethhdr *)(nh + off);

		if (end - off < ETH_HLEN)
			return 0;
		type = eth->h_proto;
		off += ETH_HLEN;
		if (eth_type_vlan(type)) {
			if (end - off < VLAN_HLEN)
				return 0;
			type = get_unaligned((const __be16 *)(nh + off + 2));
			off += VLAN_HLEN;
		}
	}
	if (type != htons(ETH_P_IP) && type != htons(ETH_P_IPV6))
		return 0;
	*inner = type;
	*ilen = end - off;
	return off;
}

/*
 * IBV_WC_IP_CSUM_OK of a TUNNEL_OFFLOADS queue: of the inner headers of
 * a VXLAN or GRE frame, the outer ones right too; of the frame itself
 * when it is none. @trusted: the netdev vouches for the outer L4
 * checksum; @inner_trusted: for the inner one too (csum_level 1).
 */
static u32 sv_rx_csum_tunneled(const u8 *nh, u32 len, __be16 proto,
			       bool trusted, bool inner_trusted)
{
	const u32 good = SV_CSUM_IPV4 | SV_CSUM_L3_OK | SV_CSUM_L4_OK;
	bool outer_ok;
	__be16 inner;
	u32 off, ilen;

	off = sv_rx_tunnel(nh, len, proto, trusted, &inner, &ilen, &outer_ok);
	if (!off)
		return sv_rx_csum(nh, len, proto, trusted) == good ?
		       SV_WC_F_IP_CSUM_OK : 0;
	if (!outer_ok ||
	    sv_rx_csum(nh + off, ilen, inner, inner_trusted) != good)
		return 0;
	return SV_WC_F_IP_CSUM_OK;
}

/* The frame's Ethernet FCS, over the frame as it was on the wire. */
static __le32 sv_rx_fcs(const struct sk_buff *skb, const u8 *vhdr)
{
	const u8 *mac = skb_mac_header(skb);
	u32 maclen = skb->data - mac;
	u32 crc;

	crc = crc32_le(~0, mac, 2 * ETH_ALEN);
	if (vhdr)
		crc = crc32_le(crc, vhdr, VLAN_HLEN);
	crc = crc32_le(crc, mac + 2 * ETH_ALEN,
		       maclen - 2 * ETH_ALEN + skb->len);
	return cpu_to_le32(~crc);
}

/**
 * sv_rx_frame_prep - how one steered frame lands in a receive buffer
 * @skb: the frame (data at the network header, the VLAN tag, if any, in
 *	the skb); it is linearized, and a checksum the stack left for the
 *	hardware to fill (CHECKSUM_PARTIAL) is filled in, as on the wire
 * @flags: SV_RX_*: what the receive queue asks for
 * @fr: gets the parts to write, in order: the MAC addresses (mac, 12
 *	bytes), the VLAN tag (vhdr, vlen bytes: 0 when there is none or it
 *	is stripped), the rest of the frame (mac + 12 on, up to the end of
 *	the skb), the FCS (fcs_len bytes); len is their sum; wire_len the
 *	frame's length with its tag and without FCS (for counters); the
 *	completion's cvlan and wc_flags
 *
 * Returns 0, or -ENOMEM (the frame is dropped).
 */
int sv_rx_frame_prep(struct sk_buff *skb, u32 flags, struct sv_rx_frame *fr)
{
	bool tagged, trusted;
	u32 csum;

	memset(fr, 0, sizeof(*fr));
	if (skb_linearize(skb))
		return -ENOMEM;
	if (skb->ip_summed == CHECKSUM_PARTIAL && !skb_is_gso(skb) &&
	    skb_checksum_help(skb))
		return -ENOMEM;
	fr->mac = skb_mac_header(skb);
	fr->maclen = skb->data - fr->mac;
	tagged = skb_vlan_tag_present(skb);
	if (tagged) {
		memcpy(fr->vhdr, &skb->vlan_proto, 2);
		put_unaligned_be16(skb_vlan_tag_get(skb), fr->vhdr + 2);
	}
	if (tagged && (flags & SV_RX_STRIP_CVLAN))
		fr->cvlan = skb_vlan_tag_get(skb);
	else if (tagged)
		fr->vlen = VLAN_HLEN;
	if (flags & SV_RX_SCATTER_FCS) {
		fr->fcs = sv_rx_fcs(skb, tagged ? fr->vhdr : NULL);
		fr->fcs_len = sizeof(fr->fcs);
	}
	fr->wire_len = fr->maclen + skb->len + (tagged ? VLAN_HLEN : 0);
	fr->len = fr->maclen + fr->vlen + skb->len + fr->fcs_len;
	if (flags & SV_RX_CSUM) {
		/* A GSO frame (never on a wire) is the stack's: trusted too */
		trusted = skb->ip_summed == CHECKSUM_UNNECESSARY ||
			  skb->ip_summed == CHECKSUM_PARTIAL;
		/*
		 * Without tunnel offloads a tunnel's outer headers are the
		 * frame's (an mlx5 TIR without tunneled_offload_en): a
		 * VXLAN frame is UDP, a GRE one neither TCP nor UDP.
		 */
		if (flags & SV_RX_TUNNEL) {
			fr->wc_flags |= sv_rx_csum_tunneled(skb->data, skb->len,
							    skb->protocol, trusted,
							    trusted && skb->csum_level);
		} else {
			csum = sv_rx_csum(skb->data, skb->len, skb->protocol,
					  trusted);
			if (csum == (SV_CSUM_IPV4 | SV_CSUM_L3_OK |
				     SV_CSUM_L4_OK))
				fr->wc_flags |= SV_WC_F_IP_CSUM_OK;
		}
	}
	return 0;
}
