// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs steering: the transmit offloads of RAW_PACKET QPs, on frames
 * in linear memory (tx.c builds them).
 *
 * IP_CSUM (SV_SEND_IP_CSUM): the IPv4 header checksum, and the TCP or UDP
 * checksum over the IPv4 or IPv6 pseudo-header, of the frame as posted,
 * after up to two VLAN tags, as a ConnectX computes them with its L3 and
 * L4 checksum flags. A UDP checksum that computes to 0 is sent as 0xffff.
 * What the frame's headers do not describe consistently is left as it
 * is: a frame that is not IPv4 or IPv6 goes out unchanged, an IPv4
 * packet of another protocol gets its header checksum only, and so does
 * a fragment (its L4 header, if any, covers data of other fragments); an
 * IPv6 packet whose first next header is not TCP or UDP (extension
 * headers are not walked), or any packet whose length field claims more
 * than the frame holds, keeps its L4 checksum.
 *
 * The pass works from an L3 offset (sv_csum_l3()), so the inner pass of a
 * tunnel (VXLAN: mlx5dv's TUNNEL_OFFLOADS) is one more call of it on the
 * inner packet's offset, before the outer pass; nothing asks for that
 * yet.
 *
 * TSO (SV_WR_TSO): the header a WQE carries must be exactly Ethernet (up
 * to two VLAN tags), IPv4 (with options, not a fragment) or IPv6 (next
 * header TCP), and TCP (with options): sv_tso_parse(). Each segment gets
 * a copy of it fixed by sv_tso_fix(): IPv4 total length or IPv6 payload
 * length, IPv4 ID + the segment's index, TCP sequence number + the
 * segment's offset in the payload, FIN and PSH on the last segment only,
 * CWR on the first only, and the IPv4 header and TCP checksums.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <net/ip6_checksum.h>

#include "steer.h"

#define SV_TCP_FLAGS_OFF	13
#define SV_TCP_CSUM_OFF		16
#define SV_UDP_CSUM_OFF		6
#define SV_TCPF_FIN		0x01
#define SV_TCPF_PSH		0x08
#define SV_TCPF_CWR		0x80

/*
 * The L3 protocol and offset of a frame of len bytes, after the Ethernet
 * header and up to two VLAN tags; -EINVAL if shorter than those.
 */
static int sv_l2_parse(const u8 *d, u32 len, u32 *l3off, __be16 *proto)
{
	u32 off = ETH_HLEN;
	__be16 p;
	int i;

	if (len < ETH_HLEN)
		return -EINVAL;
	p = get_unaligned((const __be16 *)(d + 2 * ETH_ALEN));
	for (i = 0; i < 2 && eth_type_vlan(p); i++) {
		if (len < off + VLAN_HLEN)
			return -EINVAL;
		p = get_unaligned((const __be16 *)(d + off + 2));
		off += VLAN_HLEN;
	}
	*l3off = off;
	*proto = p;
	return 0;
}

/* The IPv4 header checksum of the header at l3 (ihl already checked). */
static void sv_ipv4_csum(u8 *l3)
{
	__sum16 sum;

	memset(l3 + offsetof(struct iphdr, check), 0, sizeof(sum));
	sum = ip_compute_csum(l3, (l3[0] & 0xf) * 4);
	memcpy(l3 + offsetof(struct iphdr, check), &sum, sizeof(sum));
}

/*
 * The TCP or UDP checksum of the l4len bytes at l4, a segment of the IPv4
 * (or, v6, IPv6) packet whose header is at l3.
 */
static void sv_l4_csum(const u8 *l3, bool v6, u8 *l4, u32 l4len, u8 proto)
{
	u32 off = proto == IPPROTO_TCP ? SV_TCP_CSUM_OFF : SV_UDP_CSUM_OFF;
	struct in6_addr s6, d6;
	__sum16 sum;
	__wsum c;

	memset(l4 + off, 0, sizeof(sum));
	c = csum_partial(l4, l4len, 0);
	if (v6) {
		memcpy(&s6, l3 + offsetof(struct ipv6hdr, saddr), sizeof(s6));
		memcpy(&d6, l3 + offsetof(struct ipv6hdr, daddr), sizeof(d6));
		sum = csum_ipv6_magic(&s6, &d6, l4len, proto, c);
	} else {
		sum = csum_tcpudp_magic(get_unaligned((const __be32 *)(l3 + 12)),
					get_unaligned((const __be32 *)(l3 + 16)),
					l4len, proto, c);
	}
	/* UDP: 0 means "no checksum"; a computed 0 is sent as its ones' complement. */
	if (proto == IPPROTO_UDP && !sum)
		sum = CSUM_MANGLED_0;
	memcpy(l4 + off, &sum, sizeof(sum));
}

/*
 * The checksums of the IPv4 or IPv6 packet (ethertype proto) at l3off in
 * the frame d of len bytes. An inner pass would call this on the inner
 * packet of a tunnel.
 */
static void sv_csum_l3(u8 *d, u32 len, u32 l3off, __be16 proto)
{
	u8 *l3 = d + l3off;
	u32 room = len - l3off, hlen, tot, l4len;
	u8 l4proto;
	bool v6;

	if (proto == htons(ETH_P_IP)) {
		if (room < sizeof(struct iphdr) || (l3[0] >> 4) != 4)
			return;
		hlen = (l3[0] & 0xf) * 4;
		if (hlen < sizeof(struct iphdr) || hlen > room)
			return;
		sv_ipv4_csum(l3);
		tot = get_unaligned_be16(l3 + 2);
		/* A fragment's L4 sum covers other fragments: not ours. */
		if (tot < hlen || tot > room ||
		    (get_unaligned_be16(l3 + 6) & (IP_MF | IP_OFFSET)))
			return;
		l4len = tot - hlen;
		l4proto = l3[9];
		v6 = false;
	} else if (proto == htons(ETH_P_IPV6)) {
		hlen = sizeof(struct ipv6hdr);
		if (room < hlen || (l3[0] >> 4) != 6)
			return;
		l4len = get_unaligned_be16(l3 + 4);
		if (l4len > room - hlen)
			return;
		l4proto = l3[6];
		v6 = true;
	} else {
		return;
	}
	if ((l4proto == IPPROTO_TCP && l4len >= sizeof(struct tcphdr)) ||
	    (l4proto == IPPROTO_UDP && l4len >= sizeof(struct udphdr)))
		sv_l4_csum(l3, v6, l3 + hlen, l4len, l4proto);
}

/**
 * sv_tx_csum - the IP_CSUM offload on a whole frame
 * @d: the frame, from the destination MAC on
 * @len: its length
 */
void sv_tx_csum(u8 *d, u32 len)
{
	__be16 proto;
	u32 l3off;

	if (!sv_l2_parse(d, len, &l3off, &proto))
		sv_csum_l3(d, len, l3off, proto);
}

/**
 * sv_tso_parse - check and describe a TSO header
 * @h: the header, as the WQE carries it
 * @hdr_sz: its length: Ethernet, VLAN tags, IPv4 or IPv6, TCP, no more
 * @t: filled with where its layers are
 *
 * Return: 0, or -EINVAL if the header is not exactly that.
 */
int sv_tso_parse(const u8 *h, u32 hdr_sz, struct sv_tso_hdr *t)
{
	__be16 proto;
	u32 doff;

	if (sv_l2_parse(h, hdr_sz, &t->l3off, &proto))
		return -EINVAL;
	if (proto == htons(ETH_P_IP)) {
		const u8 *l3 = h + t->l3off;

		if (hdr_sz < t->l3off + sizeof(struct iphdr) ||
		    (l3[0] >> 4) != 4 || (l3[0] & 0xf) < 5 ||
		    l3[9] != IPPROTO_TCP ||
		    (get_unaligned_be16(l3 + 6) & (IP_MF | IP_OFFSET)))
			return -EINVAL;
		t->l4off = t->l3off + (l3[0] & 0xf) * 4;
		t->v6 = false;
	} else if (proto == htons(ETH_P_IPV6)) {
		const u8 *l3 = h + t->l3off;

		if (hdr_sz < t->l3off + sizeof(struct ipv6hdr) ||
		    (l3[0] >> 4) != 6 || l3[6] != IPPROTO_TCP)
			return -EINVAL;
		t->l4off = t->l3off + sizeof(struct ipv6hdr);
		t->v6 = true;
	} else {
		return -EINVAL;
	}
	if (hdr_sz < t->l4off + sizeof(struct tcphdr))
		return -EINVAL;
	doff = (h[t->l4off + 12] >> 4) * 4;
	if (doff < sizeof(struct tcphdr) || t->l4off + doff != hdr_sz)
		return -EINVAL;
	t->hdr_sz = hdr_sz;
	return 0;
}

/**
 * sv_tso_fix - make a copy of the TSO header fit one segment
 * @t: the header's layers (sv_tso_parse())
 * @seg: the segment: the header's copy, then @len bytes of payload
 * @len: the segment's payload bytes
 * @off: the payload's offset in the WQE's whole payload
 * @i: the segment's index
 * @last: it is the last segment
 */
void sv_tso_fix(const struct sv_tso_hdr *t, u8 *seg, u32 len, u32 off,
		u32 i, bool last)
{
	u8 *l3 = seg + t->l3off, *th = seg + t->l4off;
	u32 l4len = t->hdr_sz - t->l4off + len;
	u8 flags = th[SV_TCP_FLAGS_OFF];

	if (t->v6) {
		put_unaligned_be16(l4len, l3 + 4);
	} else {
		put_unaligned_be16(t->l4off - t->l3off + l4len, l3 + 2);
		put_unaligned_be16(get_unaligned_be16(l3 + 4) + i, l3 + 4);
		sv_ipv4_csum(l3);
	}
	put_unaligned_be32(get_unaligned_be32(th + 4) + off, th + 4);
	if (!last)
		flags &= ~(SV_TCPF_FIN | SV_TCPF_PSH);
	if (i)
		flags &= ~SV_TCPF_CWR;
	th[SV_TCP_FLAGS_OFF] = flags;
	sv_l4_csum(l3, t->v6, th, l4len, IPPROTO_TCP);
}
