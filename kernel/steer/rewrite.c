// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs steering: the rewrites of action.c's actions on a frame.
 *
 * sv_rw_run() never writes to the frame it is given (a receive frame may
 * be shared with taps and the stack, cloned, or carry its VLAN tag in the
 * skb): it makes a private, linear copy with the tag back in the frame
 * and any checksum the sender left to the hardware filled in, applies
 * the actions in their order to that copy, and returns it in the layout
 * of its direction:
 *
 *  - receive (@rx): as a netdev's rx_handler sees a frame: data at the
 *    network header, the MAC header before it, the first VLAN tag in the
 *    skb, skb->protocol and pkt_type from eth_type_trans();
 *  - transmit: data at the MAC header, the tag in the frame.
 *
 * What each action does, as a ConnectX does it:
 *
 *  - pop VLAN: the first tag (802.1Q or 802.1ad) goes, if there is one;
 *  - push VLAN: a tag (TPID, TCI) goes in after the MAC addresses;
 *  - modify header: each set or add changes its field if the frame has
 *    the field's header (else nothing happens); the IPv4 header checksum
 *    and the TCP or UDP checksum that covers a changed field are updated
 *    for the change (RFC 1624: a wrong checksum stays as wrong), a UDP
 *    checksum of 0 over IPv4 (none) stays 0;
 *  - encap: the action's header goes before the frame, with its IPv4
 *    total length and header checksum, IPv6 payload length and UDP length
 *    filled in for the new frame (the UDP checksum as given: 0 is none);
 *  - decap: a VXLAN (UDP port 4789) or Ethernet-over-GRE (0x6558)
 *    frame becomes its inner Ethernet frame; another frame is unchanged.
 *
 * A GSO frame (never on a wire) is not rewritten: NULL, as for a copy
 * that cannot be made.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <net/ip.h>

#include "steer.h"

#define SV_VXLAN_PORT	4789
#define SV_VXLAN_HLEN	8

/* Room before a copy's MAC header for pushed tags and an encap header */
#define SV_RW_HEADROOM	(SV_STEER_MAX_ENCAP + 2 * VLAN_HLEN)

/* Where a frame's headers are (data at the MAC header, tags in band). */
struct sv_rw_hdrs {
	u32 etype;			/* the ethertype after a VLAN tag */
	int vlan;			/* the first tag, or -1 */
	int l3;				/* the IP header, or -1 */
	u8 ipv;				/* ... 4 or 6 */
	int l4;				/* the TCP or UDP header, or -1 */
	u8 proto;			/* ... IPPROTO_TCP or _UDP */
};

static void sv_rw_layout(const u8 *d, u32 len, struct sv_rw_hdrs *h)
{
	u32 off = ETH_HLEN, ihl;
	__be16 proto;

	h->vlan = -1;
	h->l3 = -1;
	h->l4 = -1;
	h->ipv = 0;
	h->proto = 0;
	h->etype = 12;
	proto = get_unaligned((const __be16 *)(d + 12));
	if (eth_type_vlan(proto) && len >= VLAN_ETH_HLEN) {
		h->vlan = 12;
		h->etype = 16;
		off = VLAN_ETH_HLEN;
		proto = get_unaligned((const __be16 *)(d + 16));
	}
	if (proto == htons(ETH_P_IP) && len >= off + sizeof(struct iphdr)) {
		const struct iphdr *ip = (const void *)(d + off);

		ihl = ip->ihl * 4;
		if (ip->version != 4 || ihl < sizeof(*ip) || len < off + ihl)
			return;
		h->l3 = off;
		h->ipv = 4;
		if (ip->frag_off & htons(IP_OFFSET))
			return;
		h->proto = ip->protocol;
		off += ihl;
	} else if (proto == htons(ETH_P_IPV6) &&
		   len >= off + sizeof(struct ipv6hdr)) {
		const struct ipv6hdr *ip6 = (const void *)(d + off);

		if (ip6->version != 6)
			return;
		h->l3 = off;
		h->ipv = 6;
		h->proto = ip6->nexthdr;
		off += sizeof(*ip6);
	} else {
		return;
	}
	if ((h->proto == IPPROTO_TCP && len >= off + sizeof(struct tcphdr)) ||
	    (h->proto == IPPROTO_UDP && len >= off + sizeof(struct udphdr)))
		h->l4 = off;
	else
		h->proto = 0;
}

/* The checksum at @at (2 bytes) for @old becoming @new (@n even). */
static void sv_rw_csum(u8 *at, const u8 *old, const u8 *new, u32 n, bool udp)
{
	__sum16 sum = (__force __sum16)get_unaligned((__be16 *)at);

	if (udp && !sum)
		return;			/* UDP without a checksum */
	csum_replace_by_diff(&sum, csum_sub(csum_partial(new, n, 0),
					    csum_partial(old, n, 0)));
	if (udp && !sum)
		sum = CSUM_MANGLED_0;
	put_unaligned((__force __be16)sum, (__be16 *)at);
}

static u32 sv_rw_get(const u8 *p, u32 bytes)
{
	return bytes == 4 ? get_unaligned_be32(p) :
	       bytes == 2 ? get_unaligned_be16(p) : *p;
}

static void sv_rw_put(u8 *p, u32 bytes, u32 v)
{
	if (bytes == 4)
		put_unaligned_be32(v, p);
	else if (bytes == 2)
		put_unaligned_be16(v, p);
	else
		*p = v;
}

/* One set or add on the frame @d of @len bytes. */
static void sv_rw_mod(u8 *d, const struct sv_rw_hdrs *h,
		      const struct sv_rw_mod *m)
{
	const struct sv_mod_field *f = m->field;
	u32 fmask = f->width == 32 ? ~0U : (1U << f->width) - 1;
	u32 base, pos, cont, val, bits, start, n;
	u8 old[6];
	bool ip4hdr = false;

	switch (f->where) {
	case SV_MW_ETH:
		base = 0;
		break;
	case SV_MW_ETYPE:
		base = h->etype;
		break;
	case SV_MW_VLAN:
		if (h->vlan < 0)
			return;
		base = h->vlan;
		break;
	case SV_MW_IP:
		if (h->l3 < 0)
			return;
		base = h->l3;
		ip4hdr = h->ipv == 4;
		break;
	case SV_MW_IP4:
	case SV_MW_IP6:
		if (h->l3 < 0 || h->ipv != (f->where == SV_MW_IP4 ? 4 : 6))
			return;
		base = h->l3;
		ip4hdr = h->ipv == 4;
		break;
	case SV_MW_TCP:
	case SV_MW_UDP:
		if (h->l4 < 0 ||
		    h->proto != (f->where == SV_MW_TCP ? IPPROTO_TCP :
						      IPPROTO_UDP))
			return;
		base = h->l4;
		break;
	default:
		return;
	}
	pos = base + f->off;
	/* IPv6 keeps DSCP and ECN in its first word, not in a TOS byte */
	if (f->where == SV_MW_IP && h->ipv == 6) {
		pos = base;
		cont = get_unaligned_be32(d + pos);
		n = 4;
		bits = (f->width == 6 ? 22 : 20);
	} else {
		n = f->bytes;
		cont = sv_rw_get(d + pos, n);
		bits = f->shift;
	}
	/* The aligned 16-bit words around it, for the checksums */
	start = pos & ~1U;
	memcpy(old, d + start, ALIGN(pos + n, 2) - start);
	val = (cont >> bits) & fmask;
	if (m->type == 1) {
		u32 sm = (m->len == 32 ? ~0U : (1U << m->len) - 1) << m->off;

		val = (val & ~sm) | ((m->data << m->off) & sm);
	} else {
		val = (val + m->data) & fmask;
	}
	cont = (cont & ~(fmask << bits)) | (val << bits);
	sv_rw_put(d + pos, n, cont);
	n = ALIGN(pos + n, 2) - start;
	if (ip4hdr)
		sv_rw_csum(d + h->l3 + 10, old, d + start, n, false);
	if (h->l4 >= 0 && (f->where == SV_MW_TCP || f->where == SV_MW_UDP ||
			   (f->flags & SV_MF_PSEUDO)))
		sv_rw_csum(d + h->l4 + (h->proto == IPPROTO_TCP ? 16 : 6),
			   old, d + start, n, h->proto == IPPROTO_UDP);
}

static void sv_rw_modify(struct sk_buff *c, const struct sv_steer_action *a)
{
	struct sv_rw_hdrs h;
	u32 i;

	sv_rw_layout(c->data, c->len, &h);
	for (i = 0; i < a->n; i++)
		sv_rw_mod(c->data, &h, &a->mods[i]);
}

static int sv_rw_push_vlan(struct sk_buff *c, __be32 vlan_hdr)
{
	if (skb_cow_head(c, VLAN_HLEN))
		return -ENOMEM;
	skb_push(c, VLAN_HLEN);
	memmove(c->data, c->data + VLAN_HLEN, 2 * ETH_ALEN);
	put_unaligned(vlan_hdr, (__be32 *)(c->data + 2 * ETH_ALEN));
	return 0;
}

static void sv_rw_pop_vlan(struct sk_buff *c)
{
	if (c->len < VLAN_ETH_HLEN ||
	    !eth_type_vlan(get_unaligned((__be16 *)(c->data + 12))))
		return;
	memmove(c->data + VLAN_HLEN, c->data, 2 * ETH_ALEN);
	skb_pull(c, VLAN_HLEN);
}

static int sv_rw_encap(struct sk_buff *c, const struct sv_steer_action *a)
{
	u32 len = c->len + a->n;
	u8 *d;

	if (len > U16_MAX + a->l3off)
		return -EMSGSIZE;
	if (skb_cow_head(c, a->n))
		return -ENOMEM;
	d = skb_push(c, a->n);
	memcpy(d, a->hdr, a->n);
	if (a->l3 == 4) {
		struct iphdr *ip = (struct iphdr *)(d + a->l3off);

		ip->tot_len = htons(len - a->l3off);
		ip->check = 0;
		ip->check = ip_fast_csum(ip, ip->ihl);
	} else if (a->l3 == 6) {
		put_unaligned_be16(len - a->l3off - sizeof(struct ipv6hdr),
				   d + a->l3off + 4);
	}
	if (a->udp)
		put_unaligned_be16(len - a->l4off, d + a->l4off + 4);
	return 0;
}

static void sv_rw_decap(struct sk_buff *c)
{
	const u8 *d = c->data;
	struct sv_rw_hdrs h;
	u32 off, flags;

	sv_rw_layout(d, c->len, &h);
	if (h.l3 < 0)
		return;
	/* Not a fragment: the tunnel's payload must all be here */
	if (h.ipv == 4 && (get_unaligned((__be16 *)(d + h.l3 + 6)) &
			   htons(IP_MF | IP_OFFSET)))
		return;
	off = h.l3 + (h.ipv == 4 ? (d[h.l3] & 0xf) * 4 :
				   sizeof(struct ipv6hdr));
	if (h.proto == IPPROTO_UDP &&
	    get_unaligned_be16(d + off + 2) == SV_VXLAN_PORT) {
		off += sizeof(struct udphdr) + SV_VXLAN_HLEN;
	} else if ((h.ipv == 4 ? d[h.l3 + 9] : d[h.l3 + 6]) == IPPROTO_GRE &&
		   c->len >= off + 4) {
		flags = get_unaligned_be16(d + off);
		if ((flags & 0x4007) ||
		    get_unaligned_be16(d + off + 2) != ETH_P_TEB)
			return;	/* routing, a version: not Ethernet over GRE */
		off += 4 + 4 * (!!(flags & 0x8000) + !!(flags & 0x2000) +
				!!(flags & 0x1000));
	} else {
		return;
	}
	if (c->len < off + ETH_HLEN)
		return;
	skb_pull(c, off);
}

/*
 * The frame @skb rewritten by @acts (NULL entries: pop VLAN), a new skb
 * in its direction's layout (above); NULL if it could not be made.
 * Softirq or BH off, under RCU (the actions are a live flow's).
 */
struct sk_buff *sv_rw_run(const struct sk_buff *skb,
			  struct sv_steer_action *const *acts, u32 n, bool rx)
{
	const struct sv_steer_action *a;
	struct sk_buff *c;
	int moff = 0;
	u32 i;

	if (skb_is_gso(skb))
		return NULL;
	if (rx) {
		if (!skb_mac_header_was_set(skb))
			return NULL;
		moff = skb->data - skb_mac_header(skb);
		if (moff < ETH_HLEN || moff > skb_headroom(skb))
			return NULL;
	}
	c = skb_copy_expand(skb, moff + SV_RW_HEADROOM, 0, GFP_ATOMIC);
	if (!c)
		return NULL;
	skb_push(c, moff);
	if (c->len < ETH_HLEN)
		goto err;
	if (c->ip_summed == CHECKSUM_PARTIAL && skb_checksum_help(c))
		goto err;
	c->ip_summed = CHECKSUM_NONE;
	if (skb_vlan_tag_present(c)) {
		if (sv_rw_push_vlan(c, htonl((u32)ntohs(c->vlan_proto) << 16 |
					     skb_vlan_tag_get(c))))
			goto err;
		__vlan_hwaccel_clear_tag(c);
	}
	for (i = 0; i < n; i++) {
		a = acts[i];
		if (!a) {
			sv_rw_pop_vlan(c);
			continue;
		}
		switch (a->type) {
		case SV_STEER_ACT_PUSH_VLAN:
			if (sv_rw_push_vlan(c, a->vlan_hdr))
				goto err;
			break;
		case SV_STEER_ACT_MODIFY:
			sv_rw_modify(c, a);
			break;
		case SV_STEER_ACT_ENCAP:
			if (sv_rw_encap(c, a))
				goto err;
			break;
		case SV_STEER_ACT_DECAP:
			sv_rw_decap(c);
			break;
		}
	}
	skb_reset_mac_header(c);
	if (!rx) {
		skb_set_network_header(c, ETH_HLEN);
		c->protocol = eth_hdr(c)->h_proto;
		return c;
	}
	if (!c->dev)
		goto err;
	c->protocol = eth_type_trans(c, c->dev);
	skb_reset_network_header(c);
	skb_reset_transport_header(c);
	skb_reset_mac_len(c);
	if (eth_type_vlan(c->protocol))
		c = skb_vlan_untag(c);
	return c;
err:
	kfree_skb(c);
	return NULL;
}
