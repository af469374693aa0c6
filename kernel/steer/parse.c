// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs steering: the match key of a frame.
 *
 * The frame is an skb as a netdev's rx_handler sees it: data at the
 * network header, the MAC header before it, a VLAN tag (if any) already
 * taken out into the skb (the core's skb_vlan_untag()); or, for egress
 * rules, a frame being sent: data at the MAC header, its tag in band
 * (sv_steer_parse_tx()). Headers are read
 * with skb_header_pointer(), so a frame too short for a header simply
 * leaves that header's fields zero; nothing is ever written to the skb.
 * L4 ports (and TCP's flags) are parsed for TCP and UDP, only in a first
 * (or only) fragment; IPv6 extension headers are not walked (a packet
 * whose first one is a fragment header is a fragment). IPv4 addresses
 * sit in the last 4 bytes of the 16, as in mlx5's fte_match_param. Tunnels: VXLAN (UDP
 * port 4789, inner Ethernet), GRE (IP protocol 47: the inner frame for
 * protocol 0x6558, the inner IP packet for IPv4 and IPv6), MPLS (the
 * first label entry, after Ethernet, GRE or UDP port 6635) and ESP (IP
 * protocol 50: SPI and sequence number).
 */
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "steer.h"

#define SV_VXLAN_PORT	4789
#define SV_MPLS_UDP_PORT	6635

/* The frame's bytes at @off from skb->data (negative: the MAC header). */
static const void *sv_hdr(const struct sk_buff *skb, int off, int len,
			  void *buf)
{
	if (off < 0) {
		if (skb->data + off < skb->head)
			return NULL;
		return skb->data + off;
	}
	return skb_header_pointer(skb, off, len, buf);
}

static void sv_parse_mpls(const struct sk_buff *skb, int off,
			  struct sv_flow_key *k)
{
	__be32 buf;
	const __be32 *l = sv_hdr(skb, off, sizeof(buf), &buf);

	if (l)
		k->mpls_label = *l;
}

static void sv_parse_l3(const struct sk_buff *skb, int off, __be16 proto,
			struct sv_flow_hdrs *h, struct sv_flow_key *k,
			bool outer);

/*
 * An Ethernet frame at @off with its VLAN tag (if any) in band: a
 * tunnel's inner frame, or a frame being sent (sv_steer_parse_tx()).
 */
static void sv_parse_eth(const struct sk_buff *skb, int off,
			 struct sv_flow_hdrs *h, struct sv_flow_key *k,
			 bool outer)
{
	struct vlan_ethhdr buf;
	const struct vlan_ethhdr *e = sv_hdr(skb, off, ETH_HLEN, &buf);
	__be16 proto;

	if (!e)
		return;
	memcpy(h->dst_mac, e->h_dest, ETH_ALEN);
	memcpy(h->src_mac, e->h_source, ETH_ALEN);
	proto = e->h_vlan_proto;
	off += ETH_HLEN;
	if (eth_type_vlan(proto)) {
		e = sv_hdr(skb, off - ETH_HLEN, VLAN_ETH_HLEN, &buf);
		if (!e)
			return;
		h->vlan = proto == htons(ETH_P_8021AD) ? SV_FLOW_VLAN_S :
							 SV_FLOW_VLAN_C;
		h->vlan_tag = e->h_vlan_TCI;
		proto = e->h_vlan_encapsulated_proto;
		off += VLAN_HLEN;
	}
	h->ether_type = proto;
	sv_parse_l3(skb, off, proto, h, k, outer);
}

static void sv_parse_l4(const struct sk_buff *skb, int off,
			struct sv_flow_hdrs *h, struct sv_flow_key *k,
			bool outer)
{
	union {
		struct udphdr udp;
		struct tcphdr tcp;
		struct { __be32 spi, seq; } esp;
		struct { __be16 flags, proto; __be32 w[3]; } gre;
		u8 vxlan[8];
	} buf;
	const struct udphdr *u;
	const __be16 *g, *t;
	const __be32 *w;
	int n;

	switch (h->ip_proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
		/* The port words are the same in both headers. */
		u = sv_hdr(skb, off, 4, &buf);
		if (!u)
			return;
		h->l4 = h->ip_proto;
		if (h->ip_proto == IPPROTO_TCP) {
			h->tcp_sport = u->source;
			h->tcp_dport = u->dest;
			/* The data offset word: flags in its low 9 bits. */
			t = sv_hdr(skb, off + 12, 2, &buf);
			if (t)
				h->tcp_flags = *t & htons(0x1ff);
			return;
		}
		h->udp_sport = u->source;
		h->udp_dport = u->dest;
		if (!outer)
			return;
		if (u->dest == htons(SV_VXLAN_PORT)) {
			w = sv_hdr(skb, off + 8, 8, &buf);
			if (!w)
				return;
			k->tunnel = SV_TUN_VXLAN;
			k->tunnel_id = htonl(ntohl(w[1]) >> 8);
			sv_parse_eth(skb, off + 16, &k->inner, k, false);
		} else if (u->dest == htons(SV_MPLS_UDP_PORT)) {
			sv_parse_mpls(skb, off + 8, k);
		}
		return;
	case IPPROTO_ESP:
		w = sv_hdr(skb, off, 8, &buf);
		if (w && outer) {
			k->esp_spi = w[0];
			k->esp_seq = w[1];
		}
		return;
	case IPPROTO_GRE:
		if (!outer)
			return;
		g = sv_hdr(skb, off, 4, &buf);
		if (!g)
			return;
		k->tunnel = SV_TUN_GRE;
		k->gre_flags = g[0];
		k->gre_proto = g[1];
		n = 4;
		if (g[0] & htons(0x8000))	/* checksum present */
			n += 4;
		if (g[0] & htons(0x2000)) {	/* key present */
			w = sv_hdr(skb, off + n, 4, &buf);
			if (!w)
				return;
			k->gre_key = *w;
			n += 4;
		}
		if (g[0] & htons(0x1000))	/* sequence present */
			n += 4;
		switch (ntohs(k->gre_proto)) {
		case ETH_P_TEB:
			sv_parse_eth(skb, off + n, &k->inner, k, false);
			break;
		case ETH_P_IP:
		case ETH_P_IPV6:
			sv_parse_l3(skb, off + n, k->gre_proto, &k->inner, k,
				    false);
			break;
		case ETH_P_MPLS_UC:
		case ETH_P_MPLS_MC:
			sv_parse_mpls(skb, off + n, k);
			break;
		}
		return;
	}
}

static void sv_parse_l3(const struct sk_buff *skb, int off, __be16 proto,
			struct sv_flow_hdrs *h, struct sv_flow_key *k,
			bool outer)
{
	union {
		struct iphdr v4;
		struct ipv6hdr v6;
	} buf;
	const struct ipv6hdr *v6;
	const struct iphdr *v4;

	switch (ntohs(proto)) {
	case ETH_P_IP:
		v4 = sv_hdr(skb, off, sizeof(*v4), &buf);
		if (!v4 || v4->version != 4 || v4->ihl < 5)
			return;
		h->l3 = 4;
		memcpy(h->src_ip + 12, &v4->saddr, 4);
		memcpy(h->dst_ip + 12, &v4->daddr, 4);
		h->frag = !!(v4->frag_off & htons(IP_MF | IP_OFFSET));
		h->ip_proto = v4->protocol;
		h->tos = v4->tos;
		h->ttl = v4->ttl;
		h->ip_flags = ntohs(v4->frag_off) >> 13;
		if (!(v4->frag_off & htons(IP_OFFSET)))
			sv_parse_l4(skb, off + v4->ihl * 4, h, k, outer);
		return;
	case ETH_P_IPV6:
		v6 = sv_hdr(skb, off, sizeof(*v6), &buf);
		if (!v6 || v6->version != 6)
			return;
		h->l3 = 6;
		memcpy(h->src_ip, &v6->saddr, 16);
		memcpy(h->dst_ip, &v6->daddr, 16);
		h->flow_label = ip6_flowlabel(v6);
		h->tos = ip6_tclass(ip6_flowinfo(v6));
		h->ip_proto = v6->nexthdr;
		h->frag = v6->nexthdr == NEXTHDR_FRAGMENT;
		h->ttl = v6->hop_limit;
		sv_parse_l4(skb, off + sizeof(*v6), h, k, outer);
		return;
	case ETH_P_MPLS_UC:
	case ETH_P_MPLS_MC:
		if (outer)
			sv_parse_mpls(skb, off, k);
		return;
	}
}

void sv_steer_parse(const struct sk_buff *skb, struct sv_flow_key *k)
{
	const struct ethhdr *eth;
	int moff;

	memset(k, 0, sizeof(*k));
	if (!skb_mac_header_was_set(skb))
		return;
	moff = skb_mac_header(skb) - skb->data;
	if (moff > -ETH_HLEN)
		return;
	eth = (const struct ethhdr *)skb_mac_header(skb);
	memcpy(k->outer.dst_mac, eth->h_dest, ETH_ALEN);
	memcpy(k->outer.src_mac, eth->h_source, ETH_ALEN);
	/* The core moved a tag out of the frame: the inner type is here. */
	k->outer.ether_type = eth->h_proto;
	if (skb_vlan_tag_present(skb)) {
		k->outer.vlan_tag = htons(skb_vlan_tag_get(skb));
		k->outer.vlan = skb->vlan_proto == htons(ETH_P_8021AD) ?
				SV_FLOW_VLAN_S : SV_FLOW_VLAN_C;
	}
	sv_parse_l3(skb, moff + ETH_HLEN, eth->h_proto, &k->outer, k, true);
}

/*
 * The key of a frame being sent: data at the MAC header, a VLAN tag (if
 * any) still in the frame, as a RAW_PACKET QP posted it.
 */
void sv_steer_parse_tx(const struct sk_buff *skb, struct sv_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	sv_parse_eth(skb, 0, &k->outer, k, true);
}
