// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs on the wire: the invariant CRC of a RoCE v2 frame.
 *
 * The ICRC is a CRC-32 (the Ethernet polynomial, bit-reflected, inverted
 * at the end) over what no router may change: 8 bytes of ones where IB's
 * LRH would be, the IP header with its variable fields set to ones
 * (IPv4: TOS, TTL, header checksum; IPv6: traffic class, flow label, hop
 * limit), the UDP header with its checksum set to ones, the BTH with its
 * reserved byte (the FECN/BECN byte before DestQP) set to ones, then the
 * rest of the headers, the payload and the pad. It goes on the wire
 * after the pad, least significant byte first.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "wire.h"

/* crc32_le's state after 8 bytes of 0xff from the initial ~0 */
#define SV_ICRC_LRH_SEED	0xdebb20e3U

/**
 * sv_icrc - the ICRC of a frame, not yet inverted
 * @nh: the IP header (IPv4 without options), UDP and the BTH after it
 * @v6: IPv6 or IPv4
 * @len: the bytes from the BTH up to the ICRC (headers, payload, pad)
 */
u32 sv_icrc(const u8 *nh, bool v6, u32 len)
{
	u8 ph[sizeof(struct ipv6hdr) + sizeof(struct udphdr) +
	      sizeof(struct sv_bth)];
	u32 iplen = v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	u32 hlen = iplen + sizeof(struct udphdr) + sizeof(struct sv_bth);
	struct udphdr *uh;
	u32 crc;

	memcpy(ph, nh, hlen);
	if (v6) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)ph;

		ip6->priority = 0xf;
		memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
		ip6->hop_limit = 0xff;
	} else {
		struct iphdr *ip = (struct iphdr *)ph;

		ip->tos = 0xff;
		ip->ttl = 0xff;
		ip->check = (__force __sum16)0xffff;
	}
	uh = (struct udphdr *)(ph + iplen);
	uh->check = (__force __sum16)0xffff;
	ph[iplen + sizeof(*uh) + offsetof(struct sv_bth, qpn)] = 0xff;
	crc = crc32_le(SV_ICRC_LRH_SEED, ph, hlen);
	return crc32_le(crc, nh + hlen, len - sizeof(struct sv_bth));
}
