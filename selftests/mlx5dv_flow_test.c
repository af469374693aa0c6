// SPDX-License-Identifier: GPL-2.0
/*
 * mlx5dv flow matchers and flows on softverbs (Documentation/mlx5dv.rst),
 * as an mlx5 program uses them: masks and values in fte_match_param
 * layout, built here from the PRM's offsets; linked with build/compat's
 * libibverbs.so.1 and libmlx5.so.1 as rdma-core's users are.
 *
 *   - mlx5dv_create_flow_matcher(): every argument error, fields softverbs
 *     does not match on refused (EOPNOTSUPP), disabled sections ignored;
 *   - on a device bound to one end of a veth pair: for every supported
 *     field (outer, inner and misc), a matcher on that field alone and a
 *     flow to a RAW_PACKET QP; frames from the far side that differ only
 *     in that field: the one that matches arrives (bytes and tag), the
 *     other does not;
 *   - actions: tag, drop, default miss (the kernel stack gets the frame,
 *     lower priorities do not), IBV_COUNTER, priorities, EBUSY for a
 *     matcher in use, the errors of mlx5dv_create_flow(), egress (NIC_TX)
 *     drop and allow rules on what a RAW_PACKET QP sends, the resource
 *     dump, and EPERM for an unprivileged caller.
 */
#include <errno.h>
#include <grp.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#define SV_VETH_FIXTURE	fl
#define NS	"svfl_peer"
#define NEAR	"svfl0"
#define FAR	"svfl1"
#define DEV	"svfl"
#define NEAR_IP	"10.84.0.1"
#define FAR_IP	"10.84.0.2"
#define NOBODY	65534

#include "sv_steer_test.h"

#define FL_TIMEOUT	300

/* ---- fte_match_param ---- */

#define FTE_SIZE	512
enum { OUTER, MISC, INNER, MISC2, MISC3 };
#define CRIT(s)		(1U << (s))

struct fte {
	size_t match_sz;		/* struct mlx5dv_flow_match_parameters */
	uint64_t buf[FTE_SIZE / 8];
};

/* Set @len bytes (big-endian @v) at byte @off of section @sect. */
static void fte_set(struct fte *f, int sect, int off, int len, uint64_t v)
{
	uint8_t *b = (uint8_t *)f->buf + sect * 64 + off;
	int i;

	f->match_sz = FTE_SIZE;
	for (i = len - 1; i >= 0; i--, v >>= 8)
		b[i] |= v & 0xff;
}

static void fte_bytes(struct fte *f, int sect, int off, const void *p,
		      int len)
{
	f->match_sz = FTE_SIZE;
	memcpy((uint8_t *)f->buf + sect * 64 + off, p, len);
}

/* fte_match_set_lyr_2_4 */
#define SMAC	0x00
#define ETYPE_	0x06
#define DMAC	0x08
#define TCI	0x0e
#define PROTO	0x10
#define TOS	0x11
#define BITS	0x12	/* 16 bits: cvlan, svlan, frag, ip_version:4, flags:9 */
#define TSPORT	0x14
#define TDPORT	0x16
#define IHL	0x1a
#define TTL	0x1b
#define USPORT	0x1c
#define UDPORT	0x1e
#define SIP	0x20
#define DIP	0x30
/* misc */
#define GREBITS	0x00	/* c: bit 31, k: 29, s: 28; source_sqn: 23..0 */
#define SRCPORT	0x06
#define GREPROT	0x0e
#define GREKEY	0x10
#define VNI	0x14
#define GENEVE	0x18
#define OFLOW	0x1c
#define IFLOW	0x20
#define ESPSPI	0x30
/* misc2 */
#define REG_A	0x30

/* ---- frames ---- */

struct pkt {
	const uint8_t *dst, *src;
	uint16_t vlan;		/* TPID, 0: untagged */
	uint16_t tci;
	uint16_t etype;		/* without l3 */
	int l3;			/* 4, 6, 0 */
	uint8_t tos, ttl;
	bool frag;
	uint8_t sip[16], dip[16];	/* IPv4: the first 4 */
	uint32_t flow;
	uint8_t proto;
	uint16_t sport, dport, tcp_flags;
	uint32_t spi;
	uint16_t gre_flags, gre_proto;
	uint32_t gre_key;
	int vxlan;		/* 1: UDP to 4789 with vni */
	uint32_t vni;
	const struct pkt *inner;
};

static void put16(uint8_t *b, uint16_t v)
{
	b[0] = v >> 8;
	b[1] = v & 0xff;
}

static void put32(uint8_t *b, uint32_t v)
{
	put16(b, v >> 16);
	put16(b + 2, v & 0xffff);
}

static size_t build(uint8_t *b, const struct pkt *p);

/* L4 and what it carries, at @b; its length. */
static size_t build_l4(uint8_t *b, const struct pkt *p)
{
	size_t n = 0;

	switch (p->proto) {
	case IPPROTO_UDP:
		put16(b, p->sport);
		put16(b + 2, p->vxlan ? 4789 : p->dport);
		n = 8;
		if (p->vxlan) {
			memset(b + 8, 0, 8);
			b[8] = 0x08;
			put32(b + 12, p->vni << 8);
			n += 8 + build(b + 16, p->inner);
		} else {
			sv_fill((char *)b + 8, 16, 3);
			n += 16;
		}
		put16(b + 4, n);
		put16(b + 6, 0);
		return n;
	case IPPROTO_TCP:
		memset(b, 0, 20);
		put16(b, p->sport);
		put16(b + 2, p->dport);
		put16(b + 12, 5 << 12 | p->tcp_flags);
		put16(b + 14, 1024);
		sv_fill((char *)b + 20, 16, 4);
		return 36;
	case IPPROTO_GRE:
		put16(b, p->gre_flags);
		put16(b + 2, p->gre_proto);
		n = 4;
		if (p->gre_flags & 0x8000) {
			put32(b + n, 0);
			n += 4;
		}
		if (p->gre_flags & 0x2000) {
			put32(b + n, p->gre_key);
			n += 4;
		}
		if (p->gre_flags & 0x1000) {
			put32(b + n, 1);
			n += 4;
		}
		if (p->inner)
			return n + build(b + n, p->inner);
		sv_fill((char *)b + n, 16, 5);
		return n + 16;
	case IPPROTO_ESP:
		put32(b, p->spi);
		put32(b + 4, 1);
		sv_fill((char *)b + 8, 16, 6);
		return 24;
	}
	sv_fill((char *)b, 16, 7);
	return 16;
}

/* A whole Ethernet frame at @b; its length. */
static size_t build(uint8_t *b, const struct pkt *p)
{
	uint8_t *ip;
	size_t n = 12, l4;

	memcpy(b, p->dst, 6);
	memcpy(b + 6, p->src, 6);
	if (p->vlan) {
		put16(b + 12, p->vlan);
		put16(b + 14, p->tci);
		n += 4;
	}
	put16(b + n, p->l3 == 4 ? ETH_P_IP : p->l3 == 6 ? ETH_P_IPV6 :
		     p->etype);
	n += 2;
	ip = b + n;
	if (p->l3 == 4) {
		memset(ip, 0, 20);
		ip[0] = 0x45;
		ip[1] = p->tos;
		put16(ip + 6, p->frag ? 0x2000 : 0);
		ip[8] = p->ttl;
		ip[9] = p->proto;
		memcpy(ip + 12, p->sip, 4);
		memcpy(ip + 16, p->dip, 4);
		l4 = build_l4(ip + 20, p);
		put16(ip + 2, 20 + l4);
		put16(ip + 10, csum_fold(sum16(ip, 20, 0)));
		return n + 20 + l4;
	}
	if (p->l3 == 6) {
		put32(ip, 6U << 28 | (uint32_t)p->tos << 20 | p->flow);
		ip[6] = p->frag ? 44 : p->proto;
		ip[7] = p->ttl;
		memcpy(ip + 8, p->sip, 16);
		memcpy(ip + 24, p->dip, 16);
		l4 = build_l4(ip + 40, p);
		put16(ip + 4, l4);
		return n + 40 + l4;
	}
	sv_fill((char *)ip, 46, 8);
	return n + 46;
}

/* ---- one field: a matcher on it alone, a frame with, one without ---- */

struct field_case {
	const char *name;
	struct fte mask, val;
	uint8_t crit;
	struct pkt yes, no;
	struct pkt yes_in, no_in;	/* inner frames */
};

static const uint8_t other_mac[6] = { 0x02, 0, 0, 0, 0x77, 0x01 };
static const uint8_t inner_a[6] = { 0x02, 0, 0, 0, 0x66, 0x01 };
static const uint8_t inner_b[6] = { 0x02, 0, 0, 0, 0x66, 0x02 };

static void ip4(uint8_t *a, const char *s)
{
	inet_pton(AF_INET, s, a);
}

static void ip6(uint8_t *a, const char *s)
{
	inet_pton(AF_INET6, s, a);
}

/* The base: UDP over IPv4 from the far end to us. */
static void base_pkt(struct pkt *p, const uint8_t *dst, const uint8_t *src)
{
	memset(p, 0, sizeof(*p));
	p->dst = dst;
	p->src = src;
	p->l3 = 4;
	p->ttl = 64;
	ip4(p->sip, FAR_IP);
	ip4(p->dip, NEAR_IP);
	p->proto = IPPROTO_UDP;
	p->sport = 5000;
	p->dport = 4000;
}

static void v6(struct pkt *p)
{
	memset(p->sip, 0, 16);
	memset(p->dip, 0, 16);
	p->l3 = 6;
	ip6(p->sip, "fd00::2");
	ip6(p->dip, "fd00::1");
}

/*
 * A VXLAN (or, gre: GRE TEB) tunnel whose inner frames are c's *_in; the
 * frame without is the frame with, so far.
 */
static void tunnel(struct field_case *c, bool gre)
{
	c->no = c->yes;
	base_pkt(&c->yes_in, inner_a, inner_b);
	c->no_in = c->yes_in;
	if (gre) {
		c->yes.proto = c->no.proto = IPPROTO_GRE;
		c->yes.gre_proto = c->no.gre_proto = 0x6558;
	} else {
		c->yes.vxlan = c->no.vxlan = 1;
		c->yes.vni = c->no.vni = 42;
	}
	c->yes.inner = &c->yes_in;
	c->no.inner = &c->no_in;
}

#define NCASES 37

/* Case @i: false when there is none. */
static bool field_case(int i, struct field_case *c, const uint8_t *mac,
		       const uint8_t *far)
{
	struct pkt *y = &c->yes, *n = &c->no;

	memset(c, 0, sizeof(*c));
	base_pkt(y, mac, far);
	c->crit = CRIT(OUTER);
#define F(s, off, len, m, v)	do { fte_set(&c->mask, s, off, len, m); \
				     fte_set(&c->val, s, off, len, v); } while (0)
	switch (i) {
	case 0:
		c->name = "dmac";
		fte_set(&c->mask, OUTER, DMAC, 6, 0xffffffffffffULL);
		fte_bytes(&c->val, OUTER, DMAC, mac, 6);
		*n = *y;
		n->dst = other_mac;
		return true;
	case 1:
		c->name = "smac";
		fte_set(&c->mask, OUTER, SMAC, 6, 0xffffffffffffULL);
		fte_bytes(&c->val, OUTER, SMAC, far, 6);
		*n = *y;
		n->src = other_mac;
		return true;
	case 2:
		c->name = "ethertype";
		F(OUTER, ETYPE_, 2, 0xffff, ETYPE);
		y->l3 = 0;
		y->etype = ETYPE;
		*n = *y;
		n->etype = ETYPE + 1;
		return true;
	case 3:
		c->name = "first_vid";
		F(OUTER, TCI, 2, 0x0fff, 100);
		y->vlan = 0x8100;
		y->tci = 100;
		*n = *y;
		n->tci = 101;
		return true;
	case 4:
		c->name = "first_prio";
		F(OUTER, TCI, 2, 0xe000, 5 << 13);
		y->vlan = 0x8100;
		y->tci = 5 << 13 | 7;
		*n = *y;
		n->tci = 1 << 13 | 7;
		return true;
	case 5:
		c->name = "cvlan_tag";
		F(OUTER, BITS, 2, 0x8000, 0x8000);
		y->vlan = 0x8100;
		y->tci = 9;
		*n = *y;
		n->vlan = 0;
		return true;
	case 6:
		c->name = "svlan_tag";
		F(OUTER, BITS, 2, 0x4000, 0x4000);
		y->vlan = 0x88a8;
		y->tci = 9;
		*n = *y;
		n->vlan = 0x8100;
		return true;
	case 7:
		c->name = "ip_protocol";
		F(OUTER, PROTO, 1, 0xff, IPPROTO_TCP);
		y->proto = IPPROTO_TCP;
		*n = *y;
		n->proto = IPPROTO_UDP;
		return true;
	case 8:
		c->name = "ip_dscp";
		F(OUTER, TOS, 1, 0xfc, 40 << 2);
		y->tos = 40 << 2 | 1;
		*n = *y;
		n->tos = 41 << 2 | 1;
		return true;
	case 9:
		c->name = "ip_ecn";
		F(OUTER, TOS, 1, 0x03, 2);
		y->tos = 2;
		*n = *y;
		n->tos = 1;
		return true;
	case 10:
		c->name = "frag";
		F(OUTER, BITS, 2, 0x2000, 0x2000);
		y->frag = true;
		*n = *y;
		n->frag = false;
		return true;
	case 11:
		c->name = "ip_version 4";
		F(OUTER, BITS, 2, 0xf << 9, 4 << 9);
		*n = *y;
		v6(n);
		return true;
	case 12:
		c->name = "ip_version 6";
		F(OUTER, BITS, 2, 0xf << 9, 6 << 9);
		v6(y);
		*n = *y;
		n->l3 = 4;
		ip4(n->sip, FAR_IP);
		ip4(n->dip, NEAR_IP);
		return true;
	case 13:
		c->name = "tcp_flags";
		F(OUTER, BITS, 2, 0x1ff, 0x002);
		y->proto = IPPROTO_TCP;
		y->tcp_flags = 0x002;
		*n = *y;
		n->tcp_flags = 0x010;
		return true;
	case 14:
		c->name = "tcp_sport";
		F(OUTER, TSPORT, 2, 0xffff, 5000);
		y->proto = IPPROTO_TCP;
		*n = *y;
		n->sport = 5001;
		return true;
	case 15:
		c->name = "tcp_dport";
		F(OUTER, TDPORT, 2, 0xffff, 4000);
		y->proto = IPPROTO_TCP;
		*n = *y;
		n->dport = 4001;
		return true;
	case 16:
		/* A UDP packet has no TCP port. */
		c->name = "tcp_dport, not udp";
		F(OUTER, TDPORT, 2, 0xffff, 4000);
		y->proto = IPPROTO_TCP;
		*n = *y;
		n->proto = IPPROTO_UDP;
		return true;
	case 17:
		c->name = "ttl_hoplimit";
		F(OUTER, TTL, 1, 0xff, 64);
		*n = *y;
		n->ttl = 63;
		return true;
	case 18:
		c->name = "udp_sport";
		F(OUTER, USPORT, 2, 0xffff, 5000);
		*n = *y;
		n->sport = 5002;
		return true;
	case 19:
		c->name = "udp_dport";
		F(OUTER, UDPORT, 2, 0xffff, 4000);
		*n = *y;
		n->dport = 4002;
		return true;
	case 20:
		c->name = "src_ipv4";
		fte_set(&c->mask, OUTER, SIP + 12, 4, 0xffffffff);
		fte_bytes(&c->val, OUTER, SIP + 12, y->sip, 4);
		*n = *y;
		ip4(n->sip, "10.84.0.9");
		return true;
	case 21:
		c->name = "dst_ipv4";
		fte_set(&c->mask, OUTER, DIP + 12, 4, 0xffffffff);
		fte_bytes(&c->val, OUTER, DIP + 12, y->dip, 4);
		*n = *y;
		ip4(n->dip, "10.84.0.9");
		return true;
	case 22:
		c->name = "src_ipv6";
		v6(y);
		fte_set(&c->mask, OUTER, SIP, 8, ~0ULL);
		fte_set(&c->mask, OUTER, SIP + 8, 8, ~0ULL);
		fte_bytes(&c->val, OUTER, SIP, y->sip, 16);
		*n = *y;
		ip6(n->sip, "fd00::9");
		return true;
	case 23:
		c->name = "dst_ipv6";
		v6(y);
		fte_set(&c->mask, OUTER, DIP, 8, ~0ULL);
		fte_set(&c->mask, OUTER, DIP + 8, 8, ~0ULL);
		fte_bytes(&c->val, OUTER, DIP, y->dip, 16);
		*n = *y;
		ip6(n->dip, "fd00::9");
		return true;
	case 24:
		c->name = "outer_ipv6_flow_label";
		c->crit = CRIT(MISC);
		F(MISC, OFLOW, 4, 0xfffff, 0x12345);
		v6(y);
		y->flow = 0x12345;
		*n = *y;
		n->flow = 0x12346;
		return true;
	case 25:
		c->name = "gre_protocol";
		c->crit = CRIT(MISC);
		F(MISC, GREPROT, 2, 0xffff, 0x6558);
		tunnel(c, true);
		n->gre_proto = ETYPE;
		n->inner = NULL;
		return true;
	case 26:
		c->name = "gre_k_present";
		c->crit = CRIT(MISC);
		F(MISC, GREBITS, 4, 1U << 29, 1U << 29);
		tunnel(c, true);
		y->gre_flags = 0x2000;
		return true;
	case 27:
		c->name = "gre_c_present";
		c->crit = CRIT(MISC);
		F(MISC, GREBITS, 4, 1U << 31, 1U << 31);
		tunnel(c, true);
		y->gre_flags = 0x8000;
		return true;
	case 28:
		c->name = "gre_s_present";
		c->crit = CRIT(MISC);
		F(MISC, GREBITS, 4, 1U << 28, 1U << 28);
		tunnel(c, true);
		y->gre_flags = 0x1000;
		return true;
	case 29:
		c->name = "gre_key";
		c->crit = CRIT(MISC);
		F(MISC, GREKEY, 4, 0xffffffff, 0x1234);
		tunnel(c, true);
		y->gre_flags = n->gre_flags = 0x2000;
		y->gre_key = 0x1234;
		n->gre_key = 0x1235;
		return true;
	case 30:
		c->name = "vxlan_vni";
		c->crit = CRIT(MISC);
		F(MISC, VNI, 3, 0xffffff, 0x123456);
		tunnel(c, false);
		y->vni = 0x123456;
		n->vni = 0x123457;
		return true;
	case 31:
		c->name = "outer_esp_spi";
		c->crit = CRIT(MISC);
		F(MISC, ESPSPI, 4, 0xffffffff, 0xabcd);
		y->proto = IPPROTO_ESP;
		y->spi = 0xabcd;
		*n = *y;
		n->spi = 0xabce;
		return true;
	case 32:
		c->name = "inner dmac";
		c->crit = CRIT(INNER);
		fte_set(&c->mask, INNER, DMAC, 6, 0xffffffffffffULL);
		fte_bytes(&c->val, INNER, DMAC, inner_a, 6);
		tunnel(c, false);
		c->no_in.dst = other_mac;
		return true;
	case 33:
		c->name = "inner udp_dport";
		c->crit = CRIT(INNER);
		F(INNER, UDPORT, 2, 0xffff, 4000);
		tunnel(c, false);
		c->no_in.dport = 53;
		return true;
	case 34:
		c->name = "inner ip_version 6 (GRE)";
		c->crit = CRIT(INNER);
		F(INNER, BITS, 2, 0xf << 9, 6 << 9);
		tunnel(c, true);
		v6(&c->yes_in);
		return true;
	case 35:
		c->name = "inner_ipv6_flow_label";
		c->crit = CRIT(MISC);
		F(MISC, IFLOW, 4, 0xfffff, 0xabcde);
		tunnel(c, false);
		v6(&c->yes_in);
		c->yes_in.flow = 0xabcde;
		c->no_in = c->yes_in;
		c->no_in.flow = 0xabcdf;
		return true;
	case 36:
		/* Two sections and two layers at once. */
		c->name = "outer udp_dport + vni + inner src_ipv4";
		c->crit = CRIT(OUTER) | CRIT(MISC) | CRIT(INNER);
		F(OUTER, UDPORT, 2, 0xffff, 4789);
		F(MISC, VNI, 3, 0xffffff, 7);
		fte_set(&c->mask, INNER, SIP + 12, 4, 0xffffffff);
		tunnel(c, false);
		y->vni = n->vni = 7;
		fte_bytes(&c->val, INNER, SIP + 12, c->yes_in.sip, 4);
		ip4(c->no_in.sip, "10.84.0.9");
		return true;
	}
#undef F
	return false;
}

/* ---- helpers ---- */

static struct mlx5dv_flow_matcher *matcher(struct ibv_context *ctx,
					   struct fte *mask, uint8_t crit,
					   uint16_t prio, bool tx)
{
	struct mlx5dv_flow_matcher_attr a = {
		.type = IBV_FLOW_ATTR_NORMAL,
		.priority = prio,
		.match_criteria_enable = crit,
		.match_mask = (struct mlx5dv_flow_match_parameters *)mask,
		.comp_mask = MLX5DV_FLOW_MATCHER_MASK_FT_TYPE,
		.ft_type = tx ? MLX5DV_FLOW_TABLE_TYPE_NIC_TX :
				MLX5DV_FLOW_TABLE_TYPE_NIC_RX,
	};

	return mlx5dv_create_flow_matcher(ctx, &a);
}

/* A flow to @qp (NULL: none) with @tag (0: none). */
static struct ibv_flow *dv_flow(struct mlx5dv_flow_matcher *m,
				struct fte *val, struct ibv_qp *qp,
				uint32_t tag)
{
	struct mlx5dv_flow_action_attr a[2];
	size_t n = 0;

	if (qp) {
		a[n].type = MLX5DV_FLOW_ACTION_DEST_IBV_QP;
		a[n++].qp = qp;
	}
	if (tag) {
		a[n].type = MLX5DV_FLOW_ACTION_TAG;
		a[n++].tag_value = tag;
	}
	return mlx5dv_create_flow(m, (struct mlx5dv_flow_match_parameters *)val,
				  n, a);
}

static struct ibv_flow *dv_flow_act(struct mlx5dv_flow_matcher *m,
				    struct fte *val,
				    enum mlx5dv_flow_action_type t)
{
	struct mlx5dv_flow_action_attr a = { .type = t };

	return mlx5dv_create_flow(m, (struct mlx5dv_flow_match_parameters *)val,
				  1, &a);
}

/* errno of a matcher that fails; 0 if it was made (and destroyed). */
static int matcher_err(struct ibv_context *ctx,
		       struct mlx5dv_flow_matcher_attr *a)
{
	struct mlx5dv_flow_matcher *m;

	errno = 0;
	m = mlx5dv_create_flow_matcher(ctx, a);
	if (!m)
		return errno;
	return mlx5dv_destroy_flow_matcher(m) ? -1 : 0;
}

/* ---- on softverbs0: the matcher's argument checks ---- */

TEST(matcher_args)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	struct mlx5dv_flow_matcher_attr a;
	struct fte mask = {};
	struct {
		size_t match_sz;
		uint8_t buf[1024];
	} big = { .match_sz = 1024 };

	ASSERT_NE(NULL, list);
	ctx = sv_open_named(list, "softverbs0");
	ASSERT_NE(NULL, ctx);
	fte_set(&mask, OUTER, UDPORT, 2, 0xffff);
	memset(&a, 0, sizeof(a));
	a.type = IBV_FLOW_ATTR_NORMAL;
	a.match_criteria_enable = CRIT(OUTER);
	a.match_mask = (struct mlx5dv_flow_match_parameters *)&mask;
	EXPECT_EQ(0, matcher_err(ctx, &a));
	/* Egress by the older flag, or by the table type */
	a.flags = IBV_FLOW_ATTR_FLAGS_EGRESS;
	EXPECT_EQ(0, matcher_err(ctx, &a));
	a.flags = IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
	EXPECT_EQ(EINVAL, matcher_err(ctx, &a));
	a.flags = 0;
	a.comp_mask = MLX5DV_FLOW_MATCHER_MASK_FT_TYPE;
	a.ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_TX;
	EXPECT_EQ(0, matcher_err(ctx, &a));
	a.flags = IBV_FLOW_ATTR_FLAGS_EGRESS;	/* both: mlx5_ib's EINVAL */
	EXPECT_EQ(EINVAL, matcher_err(ctx, &a));
	a.flags = 0;
	a.ft_type = MLX5DV_FLOW_TABLE_TYPE_FDB;
	EXPECT_EQ(EINVAL, matcher_err(ctx, &a));
	a.ft_type = MLX5DV_FLOW_TABLE_TYPE_RDMA_RX;
	EXPECT_EQ(EOPNOTSUPP, matcher_err(ctx, &a));
	a.ft_type = 77;
	EXPECT_EQ(EINVAL, matcher_err(ctx, &a));
	a.ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_RX;
	a.comp_mask = 1ULL << 5;
	EXPECT_EQ(EOPNOTSUPP, matcher_err(ctx, &a));
	a.comp_mask = 0;
	a.type = IBV_FLOW_ATTR_SNIFFER;
	EXPECT_EQ(EOPNOTSUPP, matcher_err(ctx, &a));
	a.type = IBV_FLOW_ATTR_NORMAL;
	a.match_criteria_enable = 0x80;
	EXPECT_EQ(EINVAL, matcher_err(ctx, &a));
	a.match_criteria_enable = CRIT(OUTER);
	mask.match_sz = 0;
	EXPECT_EQ(EINVAL, matcher_err(ctx, &a));
	mask.match_sz = 8;	/* a shorter mask: the rest is zero */
	EXPECT_EQ(0, matcher_err(ctx, &a));
	a.match_mask = NULL;
	EXPECT_EQ(EINVAL, matcher_err(ctx, &a));
	/* Longer than fte_match_param: only with a zero tail */
	a.match_mask = (struct mlx5dv_flow_match_parameters *)&big;
	big.buf[12] = 0xff;
	EXPECT_EQ(0, matcher_err(ctx, &a));
	big.buf[700] = 1;
	EXPECT_EQ(EOPNOTSUPP, matcher_err(ctx, &a));
	a.match_mask = (struct mlx5dv_flow_match_parameters *)&mask;
	mask.match_sz = FTE_SIZE;

	/* Fields softverbs does not match on: refused, not ignored */
	memset(mask.buf, 0, sizeof(mask.buf));
	fte_set(&mask, OUTER, IHL, 1, 0xf0);
	EXPECT_EQ(EOPNOTSUPP, matcher_err(ctx, &a));
	a.match_criteria_enable = CRIT(INNER);	/* ... unless disabled */
	EXPECT_EQ(0, matcher_err(ctx, &a));
	a.match_criteria_enable = CRIT(MISC);
	memset(mask.buf, 0, sizeof(mask.buf));
	fte_set(&mask, MISC, SRCPORT, 2, 0xffff);
	EXPECT_EQ(EOPNOTSUPP, matcher_err(ctx, &a));
	memset(mask.buf, 0, sizeof(mask.buf));
	fte_set(&mask, MISC, GREBITS, 4, 0xffffff);	/* source_sqn */
	EXPECT_EQ(EOPNOTSUPP, matcher_err(ctx, &a));
	memset(mask.buf, 0, sizeof(mask.buf));
	fte_set(&mask, MISC, GENEVE, 3, 0xffffff);
	EXPECT_EQ(EOPNOTSUPP, matcher_err(ctx, &a));
	memset(mask.buf, 0, sizeof(mask.buf));
	fte_set(&mask, MISC, OFLOW, 4, 0xfff00000);	/* reserved bits */
	EXPECT_EQ(EOPNOTSUPP, matcher_err(ctx, &a));
	memset(mask.buf, 0, sizeof(mask.buf));
	a.match_criteria_enable = CRIT(MISC2);
	fte_set(&mask, MISC2, REG_A, 4, 0xffffffff);
	EXPECT_EQ(EOPNOTSUPP, matcher_err(ctx, &a));
	a.match_criteria_enable = CRIT(MISC3);
	fte_set(&mask, MISC3, 0, 4, 0xffffffff);
	EXPECT_EQ(EOPNOTSUPP, matcher_err(ctx, &a));
	/* An enabled section with an empty mask matches everything. */
	memset(mask.buf, 0, sizeof(mask.buf));
	a.match_criteria_enable = 0x7f;
	EXPECT_EQ(0, matcher_err(ctx, &a));

	/* Every supported field at once */
	for (int i = 0; i < NCASES; i++) {
		struct field_case c;
		static const uint8_t m[6];
		size_t j;

		ASSERT_TRUE(field_case(i, &c, m, m));
		for (j = 0; j < FTE_SIZE / 8; j++)
			mask.buf[j] |= c.mask.buf[j];
	}
	a.match_criteria_enable = CRIT(OUTER) | CRIT(MISC) | CRIT(INNER);
	EXPECT_EQ(0, matcher_err(ctx, &a));

	/* Flows need a device bound to a netdev. */
	{
		struct mlx5dv_flow_matcher *m = mlx5dv_create_flow_matcher(ctx,
									   &a);
		struct fte val = { .match_sz = FTE_SIZE };

		ASSERT_NE(NULL, m);
		errno = 0;
		EXPECT_EQ(NULL, dv_flow_act(m, &val,
					    MLX5DV_FLOW_ACTION_DROP));
		EXPECT_EQ(EOPNOTSUPP, errno);
		EXPECT_EQ(0, mlx5dv_destroy_flow_matcher(m));
	}
	EXPECT_EQ(0, ibv_close_device(ctx));
	ibv_free_device_list(list);
}

/* ---- on a device bound to a veth ---- */

/* Send @p from the far end. */
static int far_pkt(SV_VETH_DATA *self, const struct pkt *p, struct frame *f)
{
	f->len = build(f->b, p);
	return far_send(self->pkt, self->far_ifindex, f->b, f->len);
}

TEST_F_TIMEOUT(fl, every_field, FL_TIMEOUT)
{
	struct rawqp r;
	int i;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	for (i = 0; i < NCASES; i++) {
		struct mlx5dv_flow_matcher *m;
		struct field_case c;
		struct frame fy, fn;
		struct ibv_flow *flow;
		struct ibv_wc wc;
		uint32_t tag = 0;

		ASSERT_TRUE(field_case(i, &c, self->mac, self->far_mac));
		m = matcher(self->ctx, &c.mask, c.crit, 0, false);
		ASSERT_NE(NULL, m) TH_LOG("%s: matcher: %d", c.name, errno);
		flow = dv_flow(m, &c.val, r.qp, 0x100 + i);
		ASSERT_NE(NULL, flow) TH_LOG("%s: flow: %d", c.name, errno);
		ASSERT_EQ(0, far_pkt(self, &c.no, &fn));
		ASSERT_EQ(0, far_pkt(self, &c.yes, &fy));
		ASSERT_EQ(1, rx_poll(&r, &wc, &tag, 2000))
			TH_LOG("%s: nothing arrived", c.name);
		EXPECT_TRUE(rx_is(&r, &wc, &fy))
			TH_LOG("%s: not the matching frame (%u bytes)", c.name,
			       wc.byte_len);
		EXPECT_EQ(0x100 + i, tag) TH_LOG("%s", c.name);
		EXPECT_EQ(0, rx_poll(&r, &wc, NULL, 50))
			TH_LOG("%s: the other frame arrived too", c.name);
		if (wc.status == IBV_WC_SUCCESS && wc.byte_len)
			post_rq(&r, wc.wr_id);
		EXPECT_EQ(0, ibv_destroy_flow(flow));
		EXPECT_EQ(0, mlx5dv_destroy_flow_matcher(m));
	}
	rawqp_close(&r);
}

/* A UDP rule's fte: to NEAR_IP:@port. */
static void udp_fte(struct fte *mask, struct fte *val, int port)
{
	uint8_t ip[4];

	memset(mask, 0, sizeof(*mask));
	memset(val, 0, sizeof(*val));
	ip4(ip, NEAR_IP);
	fte_set(mask, OUTER, PROTO, 1, 0xff);
	fte_set(val, OUTER, PROTO, 1, IPPROTO_UDP);
	fte_set(mask, OUTER, DIP + 12, 4, 0xffffffff);
	fte_bytes(val, OUTER, DIP + 12, ip, 4);
	fte_set(mask, OUTER, UDPORT, 2, 0xffff);
	fte_set(val, OUTER, UDPORT, 2, port);
}

TEST_F_TIMEOUT(fl, actions, FL_TIMEOUT)
{
	struct mlx5dv_flow_matcher *m0, *m1;
	struct ibv_flow *f0, *f1;
	struct fte mask, val;
	struct rawqp r, ud;
	struct ibv_wc wc;
	uint32_t tag;
	char msg[32];
	int near, far;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	near = udp_socket(false, NEAR_IP, 4100);
	far = udp_socket(true, FAR_IP, 0);
	ASSERT_LE(0, near);
	ASSERT_LE(0, far);
	udp_fte(&mask, &val, 4100);
	m0 = matcher(self->ctx, &mask, CRIT(OUTER), 0, false);
	m1 = matcher(self->ctx, &mask, CRIT(OUTER), 1, false);
	ASSERT_NE(NULL, m0);
	ASSERT_NE(NULL, m1);

	/* Priority 1 to the QP: it gets the datagram, the stack does not. */
	f1 = dv_flow(m1, &val, r.qp, 7);
	ASSERT_NE(NULL, f1);
	strcpy(msg, "to the qp");
	ASSERT_EQ(0, udp_send(far, NEAR_IP, 4100, msg, sizeof(msg)));
	ASSERT_EQ(1, rx_poll(&r, &wc, &tag, 2000));
	EXPECT_EQ(7, tag);
	EXPECT_EQ(14 + 20 + 8 + sizeof(msg), wc.byte_len);
	EXPECT_EQ(0, memcmp(r.buf + wc.wr_id * 2048 + 42, msg, sizeof(msg)));
	post_rq(&r, wc.wr_id);
	EXPECT_EQ(0, udp_got(near, msg, sizeof(msg), 100));

	/* A default miss at priority 0: the stack gets it, the QP not. */
	f0 = dv_flow_act(m0, &val, MLX5DV_FLOW_ACTION_DEFAULT_MISS);
	ASSERT_NE(NULL, f0);
	strcpy(msg, "to the stack");
	ASSERT_EQ(0, udp_send(far, NEAR_IP, 4100, msg, sizeof(msg)));
	EXPECT_EQ(1, udp_got(near, msg, sizeof(msg), 2000));
	EXPECT_EQ(0, rx_poll(&r, &wc, NULL, 100));
	/* A matcher with flows is in use. */
	EXPECT_EQ(EBUSY, mlx5dv_destroy_flow_matcher(m0));
	EXPECT_EQ(0, ibv_destroy_flow(f0));

	/* A drop at priority 0: nobody gets it. */
	f0 = dv_flow_act(m0, &val, MLX5DV_FLOW_ACTION_DROP);
	ASSERT_NE(NULL, f0);
	strcpy(msg, "to nobody");
	ASSERT_EQ(0, udp_send(far, NEAR_IP, 4100, msg, sizeof(msg)));
	EXPECT_EQ(0, udp_got(near, msg, sizeof(msg), 300));
	EXPECT_EQ(0, rx_poll(&r, &wc, NULL, 100));
	EXPECT_EQ(0, ibv_destroy_flow(f0));
	EXPECT_EQ(0, mlx5dv_destroy_flow_matcher(m0));

	/* The resource dump names matchers and what flows use them. */
	{
		char cmd[2 * PATH_MAX + 128], out[4096] = "";
		FILE *p;
		size_t n;

		snprintf(cmd, sizeof(cmd), "%s -j res show flow_matcher dev "
			 DEV "; %s -j res show flow dev " DEV, self->svctl,
			 self->svctl);
		p = popen(cmd, "r");
		ASSERT_NE(NULL, p);
		n = fread(out, 1, sizeof(out) - 1, p);
		out[n] = 0;
		pclose(p);
		EXPECT_NE(NULL, strstr(out, "\"type\":\"flow_matcher\""))
			TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "\"matcher\":")) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "\"priority\":1")) TH_LOG("%s", out);
	}
	EXPECT_EQ(0, ibv_destroy_flow(f1));

	/* IBV_COUNTER: packets and bytes of what hit the flow */
	{
		struct ibv_counters_init_attr ca = {};
		struct ibv_counter_attach_attr at = {};
		struct mlx5dv_flow_action_attr a[2] = {
			{ .type = MLX5DV_FLOW_ACTION_DEST_IBV_QP, .qp = r.qp },
			{ .type = MLX5DV_FLOW_ACTION_IBV_COUNTER },
		};
		struct ibv_counters *cnt = ibv_create_counters(self->ctx, &ca);
		uint64_t v[2] = {};
		int k;

		ASSERT_NE(NULL, cnt);
		at.counter_desc = IBV_COUNTER_PACKETS;
		at.index = 0;
		ASSERT_EQ(0, ibv_attach_counters_point_flow(cnt, &at, NULL));
		at.counter_desc = IBV_COUNTER_BYTES;
		at.index = 1;
		ASSERT_EQ(0, ibv_attach_counters_point_flow(cnt, &at, NULL));
		a[1].counter = cnt;
		f1 = mlx5dv_create_flow(m1, (struct mlx5dv_flow_match_parameters *)
					&val, 2, a);
		ASSERT_NE(NULL, f1) TH_LOG("%d", errno);
		for (k = 0; k < 3; k++) {
			ASSERT_EQ(0, udp_send(far, NEAR_IP, 4100, msg,
					      sizeof(msg)));
			ASSERT_EQ(1, rx_poll(&r, &wc, NULL, 2000));
			post_rq(&r, wc.wr_id);
		}
		EXPECT_EQ(0, ibv_read_counters(cnt, v, 2, 0));
		EXPECT_EQ(3, v[0]);
		EXPECT_EQ(3 * (14 + 20 + 8 + sizeof(msg)), v[1]);
		EXPECT_EQ(0, ibv_destroy_flow(f1));
		EXPECT_EQ(0, ibv_destroy_counters(cnt));
	}

	/* mlx5dv_create_flow()'s errors */
	{
		struct mlx5dv_flow_action_attr a[3] = {};
		struct mlx5dv_flow_matcher *m15, *m16, *tx;
		struct fte bad = val;

#define DV_ERR(m, v, n, e) do {						\
		errno = 0;						\
		EXPECT_EQ(NULL, mlx5dv_create_flow(m,			\
			(struct mlx5dv_flow_match_parameters *)(v), n, a)); \
		EXPECT_EQ(e, errno);					\
	} while (0)
		/* Two destinations (rdma-core: EOPNOTSUPP) */
		a[0].type = MLX5DV_FLOW_ACTION_DEST_IBV_QP;
		a[0].qp = r.qp;
		a[1].type = MLX5DV_FLOW_ACTION_DROP;
		DV_ERR(m1, &val, 2, EOPNOTSUPP);
		a[1].type = MLX5DV_FLOW_ACTION_DEFAULT_MISS;
		DV_ERR(m1, &val, 2, EOPNOTSUPP);
		/* Two tags: EINVAL; a tag of 25 bits: EINVAL */
		a[1].type = MLX5DV_FLOW_ACTION_TAG;
		a[2].type = MLX5DV_FLOW_ACTION_TAG;
		DV_ERR(m1, &val, 3, EINVAL);
		a[1].tag_value = 1U << 24;
		DV_ERR(m1, &val, 2, EINVAL);
		/* DevX objects: none on softverbs; no flow action object */
		a[1].type = MLX5DV_FLOW_ACTION_DEST_DEVX;
		DV_ERR(m1, &val, 2, EOPNOTSUPP);
		a[1].type = MLX5DV_FLOW_ACTION_COUNTERS_DEVX;
		DV_ERR(m1, &val, 2, EOPNOTSUPP);
		a[1].type = MLX5DV_FLOW_ACTION_IBV_FLOW_ACTION;
		a[1].action = NULL;
		DV_ERR(m1, &val, 2, EINVAL);
		/* A receive rule needs somewhere to go. */
		a[0].type = MLX5DV_FLOW_ACTION_TAG;
		a[0].tag_value = 1;
		DV_ERR(m1, &val, 1, EINVAL);
		DV_ERR(m1, &val, 0, EINVAL);
		/* A value bit outside the mask */
		fte_set(&bad, OUTER, TTL, 1, 1);
		a[0].type = MLX5DV_FLOW_ACTION_DROP;
		DV_ERR(m1, &bad, 1, EINVAL);
		/* Only RAW_PACKET QPs */
		ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &ud, IBV_QPT_UD,
					0));
		a[0].type = MLX5DV_FLOW_ACTION_DEST_IBV_QP;
		a[0].qp = ud.qp;
		DV_ERR(m1, &val, 1, EINVAL);
		rawqp_close(&ud);
		/* 16 priorities, as mlx5_ib */
		m15 = matcher(self->ctx, &mask, CRIT(OUTER), 15, false);
		m16 = matcher(self->ctx, &mask, CRIT(OUTER), 16, false);
		ASSERT_NE(NULL, m15);
		ASSERT_NE(NULL, m16);
		a[0].type = MLX5DV_FLOW_ACTION_DROP;
		f0 = mlx5dv_create_flow(m15, (struct mlx5dv_flow_match_parameters *)
					&val, 1, a);
		EXPECT_NE(NULL, f0);
		EXPECT_EQ(0, ibv_destroy_flow(f0));
		DV_ERR(m16, &val, 1, ENOMEM);
		/* No QP destination on transmit */
		tx = matcher(self->ctx, &mask, CRIT(OUTER), 0, true);
		ASSERT_NE(NULL, tx);
		a[0].type = MLX5DV_FLOW_ACTION_DEST_IBV_QP;
		a[0].qp = r.qp;
		DV_ERR(tx, &val, 1, EINVAL);
#undef DV_ERR
		EXPECT_EQ(0, mlx5dv_destroy_flow_matcher(tx));
		EXPECT_EQ(0, mlx5dv_destroy_flow_matcher(m15));
		EXPECT_EQ(0, mlx5dv_destroy_flow_matcher(m16));
	}
	EXPECT_EQ(0, mlx5dv_destroy_flow_matcher(m1));
	close(near);
	close(far);
	rawqp_close(&r);
}

/* Send a UDP datagram to FAR_IP:@port from RAW_PACKET QP @r. */
static int raw_udp(SV_VETH_DATA *self, struct rawqp *r, int port,
		   const char *msg)
{
	struct pkt p;
	size_t n;
	char *b = r->buf + NRECV * 2048;

	base_pkt(&p, self->far_mac, self->mac);
	ip4(p.sip, NEAR_IP);
	ip4(p.dip, FAR_IP);
	p.dport = port;
	n = build((uint8_t *)b, &p);
	/* The payload: @msg in place of the filler */
	memset(b + 42, 0, 16);
	strncpy(b + 42, msg, 15);
	if (post_send(r->qp, IBV_WR_SEND, r->mr->lkey, b, n, 0,
		      IBV_SEND_SIGNALED, 0, 0))
		return -1;
	return 0;
}

static int send_done(struct rawqp *r)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 2000; i++) {
		if (ibv_poll_cq(r->cq, 1, &wc) == 1)
			return wc.status == IBV_WC_SUCCESS &&
			       wc.opcode == IBV_WC_SEND ? 0 : -1;
		usleep(1000);
	}
	return -1;
}

TEST_F_TIMEOUT(fl, egress, FL_TIMEOUT)
{
	struct mlx5dv_flow_matcher *m;
	struct ibv_flow *drop, *allow;
	struct fte mask = {}, val = {};
	struct rawqp r;
	char got[64];
	int far;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	far = udp_socket(true, FAR_IP, 4200);
	ASSERT_LE(0, far);
	fte_set(&mask, OUTER, UDPORT, 2, 0xffff);
	fte_set(&val, OUTER, UDPORT, 2, 4200);
	m = matcher(self->ctx, &mask, CRIT(OUTER), 0, true);
	ASSERT_NE(NULL, m);
	/* Without a rule the datagram leaves. */
	ASSERT_EQ(0, raw_udp(self, &r, 4200, "first"));
	ASSERT_EQ(0, send_done(&r));
	set_timeout(far, 2000);
	EXPECT_LT(0, recv(far, got, sizeof(got), 0));
	EXPECT_STREQ("first", got);
	/* A drop: the send completes, nothing leaves. */
	drop = dv_flow_act(m, &val, MLX5DV_FLOW_ACTION_DROP);
	ASSERT_NE(NULL, drop);
	ASSERT_EQ(0, raw_udp(self, &r, 4200, "second"));
	ASSERT_EQ(0, send_done(&r));
	set_timeout(far, 300);
	EXPECT_GT(0, recv(far, got, sizeof(got), 0));
	EXPECT_EQ(0, ibv_destroy_flow(drop));
	/* An allow rule (no destination): it leaves. */
	allow = dv_flow(m, &val, NULL, 0);
	ASSERT_NE(NULL, allow) TH_LOG("%d", errno);
	ASSERT_EQ(0, raw_udp(self, &r, 4200, "third"));
	ASSERT_EQ(0, send_done(&r));
	set_timeout(far, 2000);
	EXPECT_LT(0, recv(far, got, sizeof(got), 0));
	EXPECT_STREQ("third", got);
	EXPECT_EQ(0, ibv_destroy_flow(allow));
	EXPECT_EQ(0, mlx5dv_destroy_flow_matcher(m));
	close(far);
	rawqp_close(&r);
}

/* ---- the DR sandbox and steering anchors ---- */

/* A mask or value on the outer UDP source port (and protocol). */
static void sport_fte(struct fte *f, uint16_t port)
{
	memset(f, 0, sizeof(*f));
	fte_set(f, OUTER, PROTO, 1, port ? IPPROTO_UDP : 0xff);
	fte_set(f, OUTER, USPORT, 2, port ? port : 0xffff);
}

/* Datagram @msg from a far socket bound to port @sport, to NEAR:4400. */
static int far_udp_from(int sport, const char *msg)
{
	int s = udp_socket(true, FAR_IP, sport);
	int ret;

	if (s < 0)
		return -1;
	ret = udp_send(s, NEAR_IP, 4400, msg, strlen(msg) + 1);
	close(s);
	return ret;
}

/* The next receive on @r holds @msg as a UDP payload; its tag. */
static int got_udp(struct rawqp *r, const char *msg, uint32_t *tag)
{
	struct ibv_wc wc;
	int ok;

	if (rx_poll(r, &wc, tag, 2000) != 1)
		return 0;
	ok = wc.status == IBV_WC_SUCCESS &&
	     wc.byte_len == 42 + strlen(msg) + 1 &&
	     !strcmp(r->buf + wc.wr_id * 2048 + 42, msg);
	post_rq(r, wc.wr_id);
	return ok;
}

TEST_F_TIMEOUT(fl, dr_sandbox, FL_TIMEOUT)
{
	struct mlx5dv_dr_action *to_l1, *to_l2, *to_qp, *to_p2, *to_p0, *drop,
				*tag1, *tag3;
	struct mlx5dv_dr_matcher *m0, *m1, *m2;
	struct mlx5dv_dr_rule *r0, *r1[5], *r2, *r2b;
	struct mlx5dv_dr_table *root, *l1, *l2, *high;
	struct mlx5dv_dr_rule *dup;
	struct mlx5dv_dr_domain *dmn;
	struct ibv_flow *p1, *p2;
	struct rawqp qa, qb, qc;
	struct fte mask, val;
	long loops;
	uint32_t tag;
	int near, i;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &qa, IBV_QPT_RAW_PACKET,
				0));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &qb, IBV_QPT_RAW_PACKET,
				0));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &qc, IBV_QPT_RAW_PACKET,
				0));
	near = udp_socket(false, NEAR_IP, 4400);
	ASSERT_LE(0, near);

	dmn = mlx5dv_dr_domain_create(self->ctx, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	ASSERT_NE(NULL, dmn);
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_dr_domain_create(self->ctx,
						MLX5DV_DR_DOMAIN_TYPE_FDB));
	EXPECT_EQ(EOPNOTSUPP, errno);
	root = mlx5dv_dr_table_create(dmn, 0);
	l1 = mlx5dv_dr_table_create(dmn, 1);
	l2 = mlx5dv_dr_table_create(dmn, 2);
	ASSERT_NE(NULL, root);
	ASSERT_NE(NULL, l1);
	ASSERT_NE(NULL, l2);
	/* Any level, as mlx5's SW steering (rdma-core's tests use 0xff). */
	high = mlx5dv_dr_table_create(dmn, 0xffffffff);
	ASSERT_NE(NULL, high);
	EXPECT_EQ(0, mlx5dv_dr_table_destroy(high));
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_dr_action_create_dest_table(root));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_dr_action_create_dest_root_table(l1, 2));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_dr_action_create_tag(1U << 24));
	EXPECT_EQ(EINVAL, errno);

	to_l1 = mlx5dv_dr_action_create_dest_table(l1);
	to_l2 = mlx5dv_dr_action_create_dest_table(l2);
	to_qp = mlx5dv_dr_action_create_dest_ibv_qp(qa.qp);
	to_p2 = mlx5dv_dr_action_create_dest_root_table(root, 2);
	to_p0 = mlx5dv_dr_action_create_dest_root_table(root, 0);
	drop = mlx5dv_dr_action_create_drop();
	tag1 = mlx5dv_dr_action_create_tag(0x11);
	tag3 = mlx5dv_dr_action_create_tag(0x33);
	ASSERT_TRUE(to_l1 && to_l2 && to_qp && to_p2 && to_p0 && drop &&
		    tag1 && tag3);

	/* Root, priority 0: UDP to 4400 goes to the sandbox (level 1). */
	udp_fte(&mask, &val, 4400);
	m0 = mlx5dv_dr_matcher_create(root, 0, CRIT(OUTER),
				      (struct mlx5dv_flow_match_parameters *)&mask);
	ASSERT_NE(NULL, m0);
	r0 = mlx5dv_dr_rule_create(m0, (struct mlx5dv_flow_match_parameters *)
				   &val, 1, &to_l1);
	ASSERT_NE(NULL, r0) TH_LOG("%d", errno);
	/* Verbs rules at priorities 1 and 2 for the same datagrams */
	p1 = udp_rule(qc.qp, self->mac, 4400, 1, 0, 0x44);
	p2 = udp_rule(qb.qp, self->mac, 4400, 2, 0, 0x22);
	ASSERT_NE(NULL, p1);
	ASSERT_NE(NULL, p2);

	/* Level 1, by source port: on down, back at 2, drop, loop, miss */
	sport_fte(&mask, 0);
	m1 = mlx5dv_dr_matcher_create(l1, 0, CRIT(OUTER),
				      (struct mlx5dv_flow_match_parameters *)&mask);
	ASSERT_NE(NULL, m1);
	for (i = 0; i < 5; i++) {
		struct mlx5dv_dr_action *acts[2] = { tag1 };

		acts[1] = i == 0 || i == 4 ? to_l2 : i == 1 ? to_p2 :
			  i == 2 ? drop : to_p0;
		/* 5000, 5001, 5002, 5004, 5005 (5003 has none) */
		sport_fte(&val, 5000 + i + (i >= 3));
		r1[i] = mlx5dv_dr_rule_create(m1,
			(struct mlx5dv_flow_match_parameters *)&val, 2, acts);
		ASSERT_NE(NULL, r1[i]) TH_LOG("rule %d: %d", i, errno);
	}
	/* Level 2: to QP a, with a tag of its own */
	sport_fte(&mask, 0);
	m2 = mlx5dv_dr_matcher_create(l2, 7, CRIT(OUTER),
				      (struct mlx5dv_flow_match_parameters *)&mask);
	ASSERT_NE(NULL, m2);
	{
		struct mlx5dv_dr_action *acts[2] = { to_qp, tag3 };

		sport_fte(&val, 5000);
		r2 = mlx5dv_dr_rule_create(m2,
			(struct mlx5dv_flow_match_parameters *)&val, 2, acts);
		ASSERT_NE(NULL, r2) TH_LOG("%d", errno);
		/* 5005: no tag of its own */
		sport_fte(&val, 5005);
		r2b = mlx5dv_dr_rule_create(m2,
			(struct mlx5dv_flow_match_parameters *)&val, 1, acts);
		ASSERT_NE(NULL, r2b) TH_LOG("%d", errno);
		/*
		 * Duplicates (one value under the mask, any actions): allowed,
		 * as on mlx5, until the domain refuses them (EEXIST).
		 */
		dup = mlx5dv_dr_rule_create(m2,
			(struct mlx5dv_flow_match_parameters *)&val, 1, &drop);
		ASSERT_NE(NULL, dup) TH_LOG("%d", errno);
		EXPECT_EQ(0, mlx5dv_dr_rule_destroy(dup));
		mlx5dv_dr_domain_allow_duplicate_rules(dmn, false);
		errno = 0;
		EXPECT_EQ(NULL, mlx5dv_dr_rule_create(m2,
			(struct mlx5dv_flow_match_parameters *)&val, 1, &drop));
		EXPECT_EQ(EEXIST, errno);
		sport_fte(&val, 5007);
		dup = mlx5dv_dr_rule_create(m2,
			(struct mlx5dv_flow_match_parameters *)&val, 1, &drop);
		ASSERT_NE(NULL, dup) TH_LOG("%d", errno);
		EXPECT_EQ(0, mlx5dv_dr_rule_destroy(dup));
		mlx5dv_dr_domain_allow_duplicate_rules(dmn, true);
	}
	/* A rule may only send down the levels; two destinations: no */
	{
		struct mlx5dv_dr_action *up = mlx5dv_dr_action_create_dest_table(l1);
		struct mlx5dv_dr_action *two[2] = { to_qp, drop };

		ASSERT_NE(NULL, up);
		sport_fte(&val, 5009);
		errno = 0;
		EXPECT_EQ(NULL, mlx5dv_dr_rule_create(m2,
			(struct mlx5dv_flow_match_parameters *)&val, 1, &up));
		EXPECT_EQ(EINVAL, errno);
		errno = 0;
		EXPECT_EQ(NULL, mlx5dv_dr_rule_create(m2,
			(struct mlx5dv_flow_match_parameters *)&val, 2, two));
		EXPECT_EQ(EOPNOTSUPP, errno);
		EXPECT_EQ(0, mlx5dv_dr_action_destroy(up));
	}

	/* 5000: root -> level 1 -> level 2 -> QP a (level 2's tag) */
	ASSERT_EQ(0, far_udp_from(5000, "down the levels"));
	EXPECT_TRUE(got_udp(&qa, "down the levels", &tag));
	EXPECT_EQ(0x33, tag);
	/* 5005: the same way to a rule without a tag: level 1's, carried */
	ASSERT_EQ(0, far_udp_from(5005, "tag carried"));
	EXPECT_TRUE(got_udp(&qa, "tag carried", &tag));
	EXPECT_EQ(0x11, tag);
	/* 5001: back at priority 2: QP b, not QP c at priority 1 */
	ASSERT_EQ(0, far_udp_from(5001, "anchored at 2"));
	EXPECT_TRUE(got_udp(&qb, "anchored at 2", &tag));
	EXPECT_EQ(0x22, tag);
	/* 5002: dropped in the sandbox */
	ASSERT_EQ(0, far_udp_from(5002, "dropped"));
	EXPECT_EQ(0, udp_got(near, "dropped", 8, 300));
	/* 5003: no rule of level 1: the stack gets it */
	ASSERT_EQ(0, far_udp_from(5003, "missed"));
	EXPECT_EQ(1, udp_got(near, "missed", 7, 2000));
	/* 5004: back at priority 0, where it left: a loop, dropped */
	loops = sv_stat_of(self->svctl, DEV, "steering_loop_drops");
	ASSERT_EQ(0, far_udp_from(5004, "loop"));
	EXPECT_EQ(0, udp_got(near, "loop", 5, 300));
	EXPECT_EQ(loops + 1, sv_stat_of(self->svctl, DEV, "steering_loop_drops"));
	/* Nothing reached the wrong QPs. */
	{
		struct ibv_wc wc;

		EXPECT_EQ(0, rx_poll(&qa, &wc, NULL, 50));
		EXPECT_EQ(0, rx_poll(&qb, &wc, NULL, 50));
		EXPECT_EQ(0, rx_poll(&qc, &wc, NULL, 50));
	}

	/* The resource dump shows tables, anchors and where rules send. */
	{
		char cmd[3 * PATH_MAX + 160], out[8192] = "";
		FILE *p;
		size_t n;

		snprintf(cmd, sizeof(cmd), "%s -j res show steer_table dev "
			 DEV "; %s -j res show steer_anchor dev " DEV
			 "; %s -j res show flow dev " DEV, self->svctl,
			 self->svctl, self->svctl);
		p = popen(cmd, "r");
		ASSERT_NE(NULL, p);
		n = fread(out, 1, sizeof(out) - 1, p);
		out[n] = 0;
		pclose(p);
		EXPECT_NE(NULL, strstr(out, "\"level\":2")) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "\"type\":\"steer_anchor\""));
		EXPECT_NE(NULL, strstr(out, "\"dest_table\":"));
		EXPECT_NE(NULL, strstr(out, "\"dest_anchor\":"));
	}

	/* Whatever is used cannot go. */
	EXPECT_EQ(EBUSY, mlx5dv_dr_table_destroy(l2));
	EXPECT_EQ(EBUSY, mlx5dv_dr_matcher_destroy(m2));
	EXPECT_EQ(EBUSY, mlx5dv_dr_action_destroy(to_qp));
	EXPECT_EQ(EBUSY, mlx5dv_dr_domain_destroy(dmn));
	EXPECT_EQ(0, mlx5dv_dr_domain_sync(dmn, MLX5DV_DR_DOMAIN_SYNC_FLAGS_SW));

	/* Without the sandbox rule, priority 1 gets the datagram. */
	EXPECT_EQ(0, mlx5dv_dr_rule_destroy(r0));
	ASSERT_EQ(0, far_udp_from(5000, "no sandbox"));
	EXPECT_TRUE(got_udp(&qc, "no sandbox", &tag));
	EXPECT_EQ(0x44, tag);

	EXPECT_EQ(0, mlx5dv_dr_rule_destroy(r2));
	EXPECT_EQ(0, mlx5dv_dr_rule_destroy(r2b));
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0, mlx5dv_dr_rule_destroy(r1[i]));
	EXPECT_EQ(0, mlx5dv_dr_matcher_destroy(m0));
	EXPECT_EQ(0, mlx5dv_dr_matcher_destroy(m1));
	EXPECT_EQ(0, mlx5dv_dr_matcher_destroy(m2));
	EXPECT_EQ(EBUSY, mlx5dv_dr_table_destroy(l2));	/* to_l2 names it */
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(to_l1));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(to_l2));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(to_qp));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(to_p2));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(to_p0));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(drop));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(tag1));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(tag3));
	EXPECT_EQ(0, mlx5dv_dr_table_destroy(l2));
	EXPECT_EQ(0, mlx5dv_dr_table_destroy(l1));
	EXPECT_EQ(0, mlx5dv_dr_table_destroy(root));
	EXPECT_EQ(0, mlx5dv_dr_domain_destroy(dmn));
	EXPECT_EQ(0, ibv_destroy_flow(p1));
	EXPECT_EQ(0, ibv_destroy_flow(p2));
	close(near);
	rawqp_close(&qa);
	rawqp_close(&qb);
	rawqp_close(&qc);
}

/* mlx5dv_create_steering_anchor() as the seed says */
/* ---- DR actions that rewrite frames, and dest arrays ---- */

/* mlx5_ifc.h's field ids (MLX5_ACTION_IN_FIELD_OUT_*) */
#define F_SMAC_15_0	0x02
#define F_DMAC_47_16	0x04
#define F_DSCP		0x06
#define F_TCP_FLAGS	0x07
#define F_TCP_DPORT	0x09
#define F_TTL		0x0a
#define F_UDP_SPORT	0x0b
#define F_UDP_DPORT	0x0c
#define F_SIPV6_127_96	0x0d
#define F_DIPV6_31_0	0x14
#define F_SIPV4		0x15
#define F_FIRST_VID	0x17
#define F_HOPLIMIT	0x47
#define F_REGA		0x49
#define F_REGC_0	0x51
#define F_TCP_SEQ	0x59
#define F_ECN		0x73

/* set_action_in and add_action_in, as mlx5 programs write them */
static __be64 mod_set(int field, int off, int len, uint32_t data)
{
	return htobe64(1ULL << 60 | (uint64_t)field << 48 |
		       (uint64_t)off << 40 | (uint64_t)(len & 0x1f) << 32 |
		       data);
}

static __be64 mod_add(int field, uint32_t data)
{
	return htobe64(2ULL << 60 | (uint64_t)field << 48 | data);
}

static uint16_t get16(const uint8_t *b)
{
	return b[0] << 8 | b[1];
}

/*
 * The frame's IPv4 header checksum and its TCP or UDP checksum, computed
 * (a UDP checksum of 0 over IPv4 is left: none).
 */
static void fix_csums(uint8_t *b)
{
	uint16_t et = get16(b + 12);
	uint8_t *ip = b + 14, *l4, proto;
	uint32_t pseudo, l4len, ihl, c;
	bool v4 = false;

	if (et == 0x8100 || et == 0x88a8) {
		ip += 4;
		et = get16(b + 16);
	}
	if (et == ETH_P_IP) {
		v4 = true;
		ihl = (ip[0] & 0xf) * 4;
		put16(ip + 10, 0);
		put16(ip + 10, csum_fold(sum16(ip, ihl, 0)));
		proto = ip[9];
		l4 = ip + ihl;
		l4len = get16(ip + 2) - ihl;
		pseudo = sum16(ip + 12, 8, 0);
	} else if (et == ETH_P_IPV6) {
		proto = ip[6];
		l4 = ip + 40;
		l4len = get16(ip + 4);
		pseudo = sum16(ip + 8, 32, 0);
	} else {
		return;
	}
	pseudo += proto + l4len;
	if (proto == IPPROTO_UDP) {
		if (v4 && !get16(l4 + 6))
			return;
		put16(l4 + 6, 0);
		c = csum_fold(sum16(l4, l4len, pseudo));
		put16(l4 + 6, c ? c : 0xffff);
	} else if (proto == IPPROTO_TCP) {
		put16(l4 + 16, 0);
		put16(l4 + 16, csum_fold(sum16(l4, l4len, pseudo)));
	}
}

/* A ones' complement sum of two 16-bit values */
static uint16_t oadd(uint32_t a, uint32_t b)
{
	a += b;
	return (a & 0xffff) + (a >> 16);
}

/* @p as a frame, with a real UDP (or TCP) checksum if @csum */
static void mkframe(struct frame *f, const struct pkt *p, bool csum)
{
	uint8_t *ip;

	f->len = build(f->b, p);
	ip = f->b + 14 + (p->vlan ? 4 : 0);
	if (csum && p->proto == IPPROTO_UDP)
		put16(ip + (p->l3 == 4 ? 20 : 40) + 6, 1);
	fix_csums(f->b);
}

/* A frame arrives at @r within 2 s: byte for byte @want, tag @tag. */
static int got_frame(struct __test_metadata *_metadata, struct rawqp *r,
		     const struct frame *want, uint32_t tag, const char *what)
{
	const uint8_t *b;
	struct ibv_wc wc;
	uint32_t t = 0;
	size_t i;

	if (rx_poll(r, &wc, &t, 2000) != 1) {
		TH_LOG("%s: nothing arrived", what);
		return -1;
	}
	b = (const uint8_t *)r->buf + wc.wr_id * 2048;
	if (wc.status != IBV_WC_SUCCESS || wc.byte_len != want->len) {
		TH_LOG("%s: status %d, %u bytes, not %zu", what, wc.status,
		       wc.byte_len, want->len);
		post_rq(r, wc.wr_id);
		return -1;
	}
	for (i = 0; i < want->len; i++) {
		if (b[i] != want->b[i]) {
			TH_LOG("%s: byte %zu is %02x, not %02x", what, i, b[i],
			       want->b[i]);
			post_rq(r, wc.wr_id);
			return -1;
		}
	}
	post_rq(r, wc.wr_id);
	if (t != tag) {
		TH_LOG("%s: tag %x, not %x", what, t, tag);
		return -1;
	}
	return 0;
}

/* A VXLAN encap header (50 bytes) from @src to @dst, IPv4 @sip -> @dip */
static size_t vxlan_hdr(uint8_t *h, const uint8_t *dst, const uint8_t *src,
			const char *sip, const char *dip, uint32_t vni)
{
	memset(h, 0, 50);
	memcpy(h, dst, 6);
	memcpy(h + 6, src, 6);
	put16(h + 12, ETH_P_IP);
	h[14] = 0x45;
	h[22] = 64;
	h[23] = IPPROTO_UDP;
	ip4(h + 26, sip);
	ip4(h + 30, dip);
	put16(h + 34, 49152);
	put16(h + 36, 4789);
	h[42] = 0x08;
	put32(h + 46, vni << 8);
	return 50;
}

/* @hdr (from vxlan_hdr()) before @in, with the lengths mlx5 fills in */
static void encapped(struct frame *out, const uint8_t *hdr,
		     const struct frame *in)
{
	memcpy(out->b, hdr, 50);
	memcpy(out->b + 50, in->b, in->len);
	out->len = 50 + in->len;
	put16(out->b + 16, out->len - 14);
	put16(out->b + 38, out->len - 34);
	fix_csums(out->b);
}

/* A VXLAN frame (VNI 7) from the far side, and the inner one it holds */
static void vxlan_frames(SV_VETH_DATA *self, struct frame *outer,
			 struct frame *inner)
{
	struct pkt p, in;

	base_pkt(&in, inner_a, inner_b);
	in.dport = 4321;
	base_pkt(&p, self->mac, self->far_mac);
	p.vxlan = 1;
	p.vni = 7;
	p.inner = &in;
	mkframe(outer, &p, false);
	mkframe(inner, &in, false);
}

/* The first VXLAN frame the far end's packet socket @fd gets; its size */
static ssize_t far_recv_vxlan(int fd, struct frame *g)
{
	ssize_t n = -1;
	int i;

	for (i = 0; i < 20; i++) {
		n = recv(fd, g->b, sizeof(g->b), 0);
		if (n < 0 || (n >= 38 && get16(g->b + 36) == 4789))
			break;
	}
	return n;
}

static struct mlx5dv_dr_rule *dr_rule(struct mlx5dv_dr_matcher *m,
				      struct fte *val, size_t n,
				      struct mlx5dv_dr_action **acts)
{
	return mlx5dv_dr_rule_create(m, (struct mlx5dv_flow_match_parameters *)
				     val, n, acts);
}

/* A mask or value on the IP protocol and its destination port */
static void dport_fte(struct fte *f, uint8_t proto, uint16_t port)
{
	memset(f, 0, sizeof(*f));
	fte_set(f, OUTER, PROTO, 1, proto);
	fte_set(f, OUTER, proto == IPPROTO_TCP ? TDPORT : UDPORT, 2, port);
}

TEST_F_TIMEOUT(fl, dr_rewrite, FL_TIMEOUT)
{
	struct mlx5dv_dr_action *to_qa, *to_qb, *to_qc, *to_l1, *pop, *push,
				*push_s, *push_l1, *mset, *madd, *m6, *mtcp,
				*decap, *encap, *encap_far, *arr, *tag55, *tag77;
	struct mlx5dv_dr_domain *rx, *tx;
	struct mlx5dv_dr_table *root, *l1, *txroot;
	struct mlx5dv_dr_matcher *mu, *mt, *ml1, *mtx;
	struct mlx5dv_dr_rule *rules[16], *rtx;
	struct mlx5dv_dr_action_dest_attr da[3], *dap[3];
	struct mlx5dv_dr_action_dest_reformat dr;
	struct fte mask, val;
	struct frame f, w, w2;
	struct rawqp qa, qb, qc;
	uint8_t hdr[50], hdr_far[50];
	int nr = 0, farip, ifi, i;
	uint8_t mac[6];
	struct pkt p;
	__be64 mods[8];

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &qa, IBV_QPT_RAW_PACKET,
				0));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &qb, IBV_QPT_RAW_PACKET,
				0));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &qc, IBV_QPT_RAW_PACKET,
				0));
	rx = mlx5dv_dr_domain_create(self->ctx, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	tx = mlx5dv_dr_domain_create(self->ctx, MLX5DV_DR_DOMAIN_TYPE_NIC_TX);
	ASSERT_TRUE(rx && tx);
	root = mlx5dv_dr_table_create(rx, 0);
	l1 = mlx5dv_dr_table_create(rx, 1);
	txroot = mlx5dv_dr_table_create(tx, 0);
	ASSERT_TRUE(root && l1 && txroot);

	to_qa = mlx5dv_dr_action_create_dest_ibv_qp(qa.qp);
	to_qb = mlx5dv_dr_action_create_dest_ibv_qp(qb.qp);
	to_qc = mlx5dv_dr_action_create_dest_ibv_qp(qc.qp);
	to_l1 = mlx5dv_dr_action_create_dest_table(l1);
	tag55 = mlx5dv_dr_action_create_tag(0x55);
	tag77 = mlx5dv_dr_action_create_tag(0x77);
	pop = mlx5dv_dr_action_create_pop_vlan();
	push = mlx5dv_dr_action_create_push_vlan(rx, htobe32(0x81002005));
	push_s = mlx5dv_dr_action_create_push_vlan(rx, htobe32(0x88a80007));
	push_l1 = mlx5dv_dr_action_create_push_vlan(rx, htobe32(0x81000abc));
	ASSERT_TRUE(to_qa && to_qb && to_qc && to_l1 && tag55 && tag77 &&
		    pop && push && push_s && push_l1);
	/* set: MAC bits, an address, a port, DSCP, ECN, TTL */
	mods[0] = mod_set(F_SMAC_15_0, 8, 8, 0xab);
	mods[1] = mod_set(F_DMAC_47_16, 0, 0, 0x02aabbcc);
	mods[2] = mod_set(F_SIPV4, 0, 0, 0x0a540009);
	mods[3] = mod_set(F_UDP_DPORT, 0, 16, 7777);
	mods[4] = mod_set(F_DSCP, 0, 6, 0x2e);
	mods[5] = mod_set(F_ECN, 0, 2, 1);
	mods[6] = mod_set(F_TTL, 0, 8, 5);
	mset = mlx5dv_dr_action_create_modify_header(rx, 0, 7 * 8, mods);
	ASSERT_NE(NULL, mset) TH_LOG("%d", errno);
	/* add: TTL - 1; and a set of the source port */
	mods[0] = mod_add(F_TTL, 0xff);
	mods[1] = mod_set(F_UDP_SPORT, 0, 16, 6000);
	madd = mlx5dv_dr_action_create_modify_header(rx, 0, 2 * 8, mods);
	ASSERT_NE(NULL, madd) TH_LOG("%d", errno);
	/* IPv6: an address word, hop limit + 1, DSCP and ECN */
	mods[0] = mod_set(F_DIPV6_31_0, 0, 0, 0x0a0b0c0d);
	mods[1] = mod_add(F_HOPLIMIT, 1);
	mods[2] = mod_set(F_DSCP, 0, 6, 0x0a);
	mods[3] = mod_set(F_ECN, 0, 2, 3);
	m6 = mlx5dv_dr_action_create_modify_header(rx, 0, 4 * 8, mods);
	ASSERT_NE(NULL, m6) TH_LOG("%d", errno);
	/* TCP: address, port, flags, sequence + 1000 */
	mods[0] = mod_set(F_SIPV4, 0, 0, 0x0a540007);
	mods[1] = mod_set(F_TCP_DPORT, 0, 16, 80);
	mods[2] = mod_set(F_TCP_FLAGS, 0, 9, 0x12);
	mods[3] = mod_add(F_TCP_SEQ, 1000);
	mtcp = mlx5dv_dr_action_create_modify_header(rx, 0, 4 * 8, mods);
	ASSERT_NE(NULL, mtcp) TH_LOG("%d", errno);
	decap = mlx5dv_dr_action_create_packet_reformat(rx, 0,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2, 0,
		NULL);
	ASSERT_NE(NULL, decap) TH_LOG("%d", errno);
	vxlan_hdr(hdr, other_mac, inner_b, "10.1.1.1", "10.1.1.2", 42);
	encap = mlx5dv_dr_action_create_packet_reformat(tx, 0,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL,
		sizeof(hdr), hdr);
	ASSERT_NE(NULL, encap) TH_LOG("%d", errno);
	vxlan_hdr(hdr_far, self->far_mac, self->mac, NEAR_IP, FAR_IP, 99);
	encap_far = mlx5dv_dr_action_create_packet_reformat(tx, 0,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL,
		sizeof(hdr_far), hdr_far);
	ASSERT_NE(NULL, encap_far) TH_LOG("%d", errno);
	/* dest array: QP a, QP b with an encap, table 1 */
	da[0].type = MLX5DV_DR_ACTION_DEST;
	da[0].dest = to_qa;
	da[1].type = MLX5DV_DR_ACTION_DEST_REFORMAT;
	dr.reformat = encap;
	dr.dest = to_qb;
	da[1].dest_reformat = &dr;
	da[2].type = MLX5DV_DR_ACTION_DEST;
	da[2].dest = to_l1;
	for (i = 0; i < 3; i++)
		dap[i] = &da[i];
	arr = mlx5dv_dr_action_create_dest_array(rx, 3, dap);
	ASSERT_NE(NULL, arr) TH_LOG("%d", errno);

	/* Root matchers: UDP or TCP destination port */
	dport_fte(&mask, 0xff, 0xffff);
	mu = mlx5dv_dr_matcher_create(root, 0, CRIT(OUTER),
				      (struct mlx5dv_flow_match_parameters *)&mask);
	ml1 = mlx5dv_dr_matcher_create(l1, 0, CRIT(OUTER),
				       (struct mlx5dv_flow_match_parameters *)&mask);
	memset(&val, 0, sizeof(val));
	fte_set(&val, OUTER, PROTO, 1, 0xff);
	fte_set(&val, OUTER, TDPORT, 2, 0xffff);
	mt = mlx5dv_dr_matcher_create(root, 1, CRIT(OUTER),
				      (struct mlx5dv_flow_match_parameters *)&val);
	ASSERT_TRUE(mu && mt && ml1);
	{
		struct { int port; uint8_t proto; int n;
			 struct mlx5dv_dr_action *a[4]; } r[] = {
			{ 4501, IPPROTO_UDP, 2, { pop, to_qa } },
			{ 4502, IPPROTO_UDP, 2, { push, to_qa } },
			{ 4503, IPPROTO_UDP, 2, { mset, to_qa } },
			{ 4504, IPPROTO_UDP, 2, { madd, to_qa } },
			{ 4505, IPPROTO_UDP, 2, { m6, to_qa } },
			{ 4506, IPPROTO_TCP, 3, { mtcp, push_s, to_qa } },
			{ 4789, IPPROTO_UDP, 2, { decap, to_qa } },
			{ 4507, IPPROTO_UDP, 2, { tag55, arr } },
		};

		for (i = 0; i < (int)(sizeof(r) / sizeof(r[0])); i++) {
			dport_fte(&val, r[i].proto, r[i].port);
			rules[nr] = dr_rule(r[i].proto == IPPROTO_TCP ? mt : mu,
					    &val, r[i].n, r[i].a);
			ASSERT_NE(NULL, rules[nr])
				TH_LOG("rule %d: %d", i, errno);
			nr++;
		}
		/* Table 1: the mirror's copy, tagged, a VLAN pushed */
		{
			struct mlx5dv_dr_action *a[3] = { tag77, push_l1,
							  to_qc };

			dport_fte(&val, IPPROTO_UDP, 4507);
			rules[nr] = dr_rule(ml1, &val, 3, a);
			ASSERT_NE(NULL, rules[nr]) TH_LOG("%d", errno);
			nr++;
		}
	}

	/* pop: a tagged frame arrives untagged */
	base_pkt(&p, self->mac, self->far_mac);
	p.dport = 4501;
	p.vlan = 0x8100;
	p.tci = 0x0064;
	mkframe(&f, &p, true);
	p.vlan = 0;
	mkframe(&w, &p, true);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, got_frame(_metadata, &qa, &w, 0, "pop_vlan"));

	/* push: an untagged frame arrives with the tag */
	base_pkt(&p, self->mac, self->far_mac);
	p.dport = 4502;
	mkframe(&f, &p, true);
	p.vlan = 0x8100;
	p.tci = 0x2005;
	mkframe(&w, &p, true);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, got_frame(_metadata, &qa, &w, 0, "push_vlan"));

	/* modify header, set: the fields and both checksums */
	base_pkt(&p, self->mac, self->far_mac);
	p.dport = 4503;
	p.tos = 0x01;
	mkframe(&f, &p, true);
	w = f;
	w.b[10] = 0xab;
	put32(w.b, 0x02aabbcc);
	put32(w.b + 26, 0x0a540009);
	put16(w.b + 36, 7777);
	w.b[15] = 0x2e << 2 | 1;
	w.b[22] = 5;
	fix_csums(w.b);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, got_frame(_metadata, &qa, &w, 0, "modify set"));
	/*
	 * The same over a wrong UDP checksum: it stays as wrong (an
	 * incremental update, RFC 1624: what the sum is off by stays).
	 */
	{
		uint16_t good = get16(f.b + 40), bad = good ^ 0x40;
		uint16_t now = get16(w.b + 40);

		put16(f.b + 40, bad);
		put16(w.b + 40, ~oadd(~now & 0xffff,
				      oadd(~bad & 0xffff, good)) & 0xffff);
	}
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, got_frame(_metadata, &qa, &w, 0, "modify set, bad sum"));

	/* modify header, add (UDP without checksum: none after) */
	base_pkt(&p, self->mac, self->far_mac);
	p.dport = 4504;
	mkframe(&f, &p, false);
	w = f;
	w.b[22] = 63;
	put16(w.b + 34, 6000);
	fix_csums(w.b);
	EXPECT_EQ(0, get16(w.b + 40));
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, got_frame(_metadata, &qa, &w, 0, "modify add"));

	/* IPv6 */
	base_pkt(&p, self->mac, self->far_mac);
	v6(&p);
	p.dport = 4505;
	p.tos = 0x11;
	p.flow = 0x12345;
	p.ttl = 9;
	mkframe(&f, &p, true);
	w = f;
	put32(w.b + 14 + 36, 0x0a0b0c0d);
	w.b[14 + 7] = 10;
	put32(w.b + 14, 6U << 28 | (0x0aU << 2 | 3) << 20 | 0x12345);
	fix_csums(w.b);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, got_frame(_metadata, &qa, &w, 0, "modify ipv6"));

	/* TCP, then an S-VLAN tag pushed after the modify */
	base_pkt(&p, self->mac, self->far_mac);
	p.proto = IPPROTO_TCP;
	p.dport = 4506;
	p.tcp_flags = 0x18;
	mkframe(&f, &p, true);
	p.vlan = 0x88a8;
	p.tci = 0x0007;
	p.dport = 80;
	p.tcp_flags = 0x12;
	ip4(p.sip, "10.84.0.7");
	mkframe(&w, &p, false);
	put32(w.b + 18 + 20 + 4, 1000);
	fix_csums(w.b);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, got_frame(_metadata, &qa, &w, 0, "modify tcp + push"));

	/* VXLAN decap: the inner frame arrives */
	vxlan_frames(self, &f, &w);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, got_frame(_metadata, &qa, &w, 0, "vxlan decap"));

	/* dest array: a, b encapsulated, table 1's rule to c */
	base_pkt(&p, self->mac, self->far_mac);
	p.dport = 4507;
	mkframe(&f, &p, true);
	encapped(&w, hdr, &f);
	p.vlan = 0x8100;
	p.tci = 0x0abc;
	mkframe(&w2, &p, true);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, got_frame(_metadata, &qa, &f, 0x55, "dest array a"));
	EXPECT_EQ(0, got_frame(_metadata, &qb, &w, 0x55, "dest array b"));
	EXPECT_EQ(0, got_frame(_metadata, &qc, &w2, 0x77, "dest array c"));
	/* The QPs, actions and tables it names are in use */
	EXPECT_EQ(EBUSY, ibv_destroy_qp(qb.qp));
	EXPECT_EQ(EBUSY, mlx5dv_dr_action_destroy(encap));
	EXPECT_EQ(EBUSY, mlx5dv_dr_action_destroy(arr));
	EXPECT_EQ(EBUSY, mlx5dv_dr_action_destroy(mset));

	/* NIC_TX: what a QP sends leaves encapsulated */
	dport_fte(&mask, 0xff, 0xffff);
	mtx = mlx5dv_dr_matcher_create(txroot, 0, CRIT(OUTER),
				       (struct mlx5dv_flow_match_parameters *)&mask);
	ASSERT_NE(NULL, mtx);
	dport_fte(&val, IPPROTO_UDP, 4600);
	rtx = dr_rule(mtx, &val, 1, &encap_far);
	ASSERT_NE(NULL, rtx) TH_LOG("%d", errno);
	farip = far_packet(ETH_P_IP, &ifi, mac);
	ASSERT_LE(0, farip);
	ASSERT_EQ(0, raw_udp(self, &qa, 4600, "encapsulated"));
	ASSERT_EQ(0, send_done(&qa));
	{
		char *sent = qa.buf + NRECV * 2048;
		struct frame g;
		ssize_t n;

		base_pkt(&p, self->far_mac, self->mac);
		f.len = build(f.b, &p);
		memcpy(f.b, sent, f.len);
		encapped(&w, hdr_far, &f);
		n = far_recv_vxlan(farip, &g);
		ASSERT_EQ((ssize_t)w.len, n);
		EXPECT_EQ(0, memcmp(g.b, w.b, w.len));
		/* Its IPv4 header checksum is right */
		EXPECT_EQ(0, csum_fold(sum16(g.b + 14, 20, 0)));
		EXPECT_EQ(w.len - 34, get16(g.b + 38));
	}
	close(farip);

	EXPECT_EQ(0, mlx5dv_dr_rule_destroy(rtx));
	EXPECT_EQ(0, mlx5dv_dr_matcher_destroy(mtx));
	for (i = nr - 1; i >= 0; i--)
		EXPECT_EQ(0, mlx5dv_dr_rule_destroy(rules[i]));
	EXPECT_EQ(0, mlx5dv_dr_matcher_destroy(mu));
	EXPECT_EQ(0, mlx5dv_dr_matcher_destroy(mt));
	EXPECT_EQ(0, mlx5dv_dr_matcher_destroy(ml1));
	EXPECT_EQ(EBUSY, mlx5dv_dr_action_destroy(encap));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(arr));
	{
		struct mlx5dv_dr_action *all[] = {
			to_qa, to_qb, to_qc, to_l1, pop, push, push_s, push_l1,
			mset, madd, m6, mtcp, decap, encap, encap_far, tag55,
			tag77,
		};

		for (i = 0; i < (int)(sizeof(all) / sizeof(all[0])); i++)
			EXPECT_EQ(0, mlx5dv_dr_action_destroy(all[i]));
	}
	EXPECT_EQ(0, mlx5dv_dr_table_destroy(l1));
	EXPECT_EQ(0, mlx5dv_dr_table_destroy(root));
	EXPECT_EQ(0, mlx5dv_dr_table_destroy(txroot));
	EXPECT_EQ(0, mlx5dv_dr_domain_destroy(rx));
	EXPECT_EQ(0, mlx5dv_dr_domain_destroy(tx));
	rawqp_close(&qa);
	rawqp_close(&qb);
	rawqp_close(&qc);
}

/* A flow of @m on @val: @n flow actions, then QP @qp (NULL: none) */
static struct ibv_flow *dv_flow_fa(struct mlx5dv_flow_matcher *m,
				   struct fte *val, int n,
				   struct ibv_flow_action **fa, struct ibv_qp *qp)
{
	struct mlx5dv_flow_action_attr a[4];
	int i;

	for (i = 0; i < n; i++) {
		a[i].type = MLX5DV_FLOW_ACTION_IBV_FLOW_ACTION;
		a[i].action = fa[i];
	}
	if (qp) {
		a[n].type = MLX5DV_FLOW_ACTION_DEST_IBV_QP;
		a[n++].qp = qp;
	}
	return mlx5dv_create_flow(m, (struct mlx5dv_flow_match_parameters *)val,
				  n, a);
}

/*
 * The verbs-level flow actions: mlx5dv_create_flow_action_modify_header()
 * and _packet_reformat() in mlx5dv_create_flow()'s IBV_FLOW_ACTION, on
 * NIC_RX (modify, decap) and NIC_TX (encap), verified byte by byte; their
 * argument errors; EBUSY while a flow holds one.
 */
TEST_F_TIMEOUT(fl, verbs_flow_actions, FL_TIMEOUT)
{
	struct ibv_flow_action *mset, *madd, *decap, *encap, *mtx, *fa[3];
	struct mlx5dv_flow_matcher *mrx, *mt;
	struct ibv_flow *fl[4], *ftx;
	uint8_t hdr[50], mac[6];
	uint64_t mods[4];
	struct fte mask, val;
	struct frame f, w, g;
	struct rawqp qa;
	struct pkt p;
	int farip, ifi, i;
	ssize_t n;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &qa, IBV_QPT_RAW_PACKET,
				0));
	/* Arguments: table types, sizes, pairings */
	mods[0] = mod_set(F_TTL, 0, 8, 5);
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_flow_action_modify_header(self->ctx, 8,
			mods, MLX5DV_FLOW_TABLE_TYPE_FDB));
	EXPECT_EQ(EOPNOTSUPP, errno);
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_flow_action_modify_header(self->ctx, 8,
			mods, 77));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_flow_action_modify_header(self->ctx, 12,
			mods, MLX5DV_FLOW_TABLE_TYPE_NIC_RX));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_flow_action_packet_reformat(self->ctx,
			0, NULL,
			MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2,
			MLX5DV_FLOW_TABLE_TYPE_NIC_TX));
	EXPECT_EQ(EOPNOTSUPP, errno);
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_flow_action_packet_reformat(self->ctx,
			sizeof(hdr), NULL,
			MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL,
			MLX5DV_FLOW_TABLE_TYPE_NIC_TX));
	EXPECT_EQ(EINVAL, errno);

	/* RX: a set (TTL, UDP port), an add (TTL - 1), a VXLAN decap */
	mods[0] = mod_set(F_TTL, 0, 8, 5);
	mods[1] = mod_set(F_UDP_DPORT, 0, 16, 7777);
	mset = mlx5dv_create_flow_action_modify_header(self->ctx, 16, mods,
			MLX5DV_FLOW_TABLE_TYPE_NIC_RX);
	ASSERT_NE(NULL, mset) TH_LOG("%d", errno);
	mods[0] = mod_add(F_TTL, 0xff);
	madd = mlx5dv_create_flow_action_modify_header(self->ctx, 8, mods,
			MLX5DV_FLOW_TABLE_TYPE_NIC_RX);
	ASSERT_NE(NULL, madd) TH_LOG("%d", errno);
	decap = mlx5dv_create_flow_action_packet_reformat(self->ctx, 0, NULL,
			MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2,
			MLX5DV_FLOW_TABLE_TYPE_NIC_RX);
	ASSERT_NE(NULL, decap) TH_LOG("%d", errno);
	vxlan_hdr(hdr, self->far_mac, self->mac, NEAR_IP, FAR_IP, 99);
	encap = mlx5dv_create_flow_action_packet_reformat(self->ctx,
			sizeof(hdr), hdr,
			MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL,
			MLX5DV_FLOW_TABLE_TYPE_NIC_TX);
	ASSERT_NE(NULL, encap) TH_LOG("%d", errno);
	mods[0] = mod_set(F_TTL, 0, 8, 9);
	mtx = mlx5dv_create_flow_action_modify_header(self->ctx, 8, mods,
			MLX5DV_FLOW_TABLE_TYPE_NIC_TX);
	ASSERT_NE(NULL, mtx) TH_LOG("%d", errno);

	dport_fte(&mask, 0xff, 0xffff);
	mrx = matcher(self->ctx, &mask, CRIT(OUTER), 0, false);
	mt = matcher(self->ctx, &mask, CRIT(OUTER), 0, true);
	ASSERT_TRUE(mrx && mt);
	dport_fte(&val, IPPROTO_UDP, 4701);
	fl[0] = dv_flow_fa(mrx, &val, 1, &mset, qa.qp);
	dport_fte(&val, IPPROTO_UDP, 4702);
	fl[1] = dv_flow_fa(mrx, &val, 1, &madd, qa.qp);
	dport_fte(&val, IPPROTO_UDP, 4789);
	fl[2] = dv_flow_fa(mrx, &val, 1, &decap, qa.qp);
	ASSERT_TRUE(fl[0] && fl[1] && fl[2]) TH_LOG("%d", errno);
	/* A flow action of the other direction; two of a kind */
	dport_fte(&val, IPPROTO_UDP, 4703);
	errno = 0;
	EXPECT_EQ(NULL, dv_flow_fa(mrx, &val, 1, &encap, qa.qp));
	EXPECT_EQ(EINVAL, errno);
	fa[0] = mset;
	fa[1] = madd;
	errno = 0;
	EXPECT_EQ(NULL, dv_flow_fa(mrx, &val, 2, fa, qa.qp));
	EXPECT_EQ(EOPNOTSUPP, errno);
	/* In use */
	EXPECT_EQ(EBUSY, ibv_destroy_flow_action(mset));

	base_pkt(&p, self->mac, self->far_mac);
	p.dport = 4701;
	mkframe(&f, &p, true);
	w = f;
	w.b[22] = 5;
	put16(w.b + 36, 7777);
	fix_csums(w.b);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, got_frame(_metadata, &qa, &w, 0, "verbs modify set"));
	base_pkt(&p, self->mac, self->far_mac);
	p.dport = 4702;
	mkframe(&f, &p, true);
	w = f;
	w.b[22] = 63;
	fix_csums(w.b);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, got_frame(_metadata, &qa, &w, 0, "verbs modify add"));
	vxlan_frames(self, &f, &w);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, got_frame(_metadata, &qa, &w, 0, "verbs decap"));

	/* TX: a modify header then an encap, whatever the order given */
	dport_fte(&val, IPPROTO_UDP, 4600);
	fa[0] = encap;
	fa[1] = mtx;
	ftx = dv_flow_fa(mt, &val, 2, fa, NULL);
	ASSERT_NE(NULL, ftx) TH_LOG("%d", errno);
	farip = far_packet(ETH_P_IP, &ifi, mac);
	ASSERT_LE(0, farip);
	ASSERT_EQ(0, raw_udp(self, &qa, 4600, "verbs encap"));
	ASSERT_EQ(0, send_done(&qa));
	base_pkt(&p, self->far_mac, self->mac);
	f.len = build(f.b, &p);
	memcpy(f.b, qa.buf + NRECV * 2048, f.len);
	f.b[22] = 9;
	fix_csums(f.b);
	encapped(&w, hdr, &f);
	n = far_recv_vxlan(farip, &g);
	ASSERT_EQ((ssize_t)w.len, n);
	EXPECT_EQ(0, memcmp(g.b, w.b, w.len));
	close(farip);

	EXPECT_EQ(0, ibv_destroy_flow(ftx));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, ibv_destroy_flow(fl[i]));
	EXPECT_EQ(0, mlx5dv_destroy_flow_matcher(mrx));
	EXPECT_EQ(0, mlx5dv_destroy_flow_matcher(mt));
	EXPECT_EQ(0, ibv_destroy_flow_action(mset));
	EXPECT_EQ(0, ibv_destroy_flow_action(madd));
	EXPECT_EQ(0, ibv_destroy_flow_action(decap));
	EXPECT_EQ(0, ibv_destroy_flow_action(encap));
	EXPECT_EQ(0, ibv_destroy_flow_action(mtx));
	rawqp_close(&qa);
}

/*
 * One child of dr_churn: a DR pipeline (root -> level 1 -> the QP, with
 * a tag and a modify header) made and taken down @rounds times while
 * frames flow; with @leave, the last one is left for the close. Exit
 * status 0 if it worked and a frame arrived.
 */
static int dr_churn_child(SV_VETH_DATA *self, int rounds, bool leave)
{
	struct ibv_context *ctx = sv_open_named(self->list, DEV);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct mlx5dv_dr_action *a[3], *to_l1;
	struct mlx5dv_dr_matcher *m0, *m1;
	struct mlx5dv_dr_rule *r0, *r1;
	struct mlx5dv_dr_table *root, *l1;
	struct mlx5dv_dr_domain *dmn;
	struct fte mask, val;
	struct rawqp r;
	struct ibv_wc wc;
	__be64 mod;
	int n, k, got = 0;

	if (!pd || rawqp_open(ctx, pd, &r, IBV_QPT_RAW_PACKET, 0))
		return 2;
	dport_fte(&mask, 0xff, 0xffff);
	dport_fte(&val, IPPROTO_UDP, 4800);
	mod = mod_set(F_TTL, 0, 8, 7);
	for (n = 0; n < rounds; n++) {
		dmn = mlx5dv_dr_domain_create(ctx, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
		root = dmn ? mlx5dv_dr_table_create(dmn, 0) : NULL;
		l1 = dmn ? mlx5dv_dr_table_create(dmn, 1) : NULL;
		if (!root || !l1)
			return 3;
		m0 = mlx5dv_dr_matcher_create(root, n % 4, CRIT(OUTER),
				(struct mlx5dv_flow_match_parameters *)&mask);
		m1 = mlx5dv_dr_matcher_create(l1, 0, CRIT(OUTER),
				(struct mlx5dv_flow_match_parameters *)&mask);
		to_l1 = mlx5dv_dr_action_create_dest_table(l1);
		a[0] = mlx5dv_dr_action_create_tag(n + 1);
		a[1] = mlx5dv_dr_action_create_modify_header(dmn, 0, 8, &mod);
		a[2] = mlx5dv_dr_action_create_dest_ibv_qp(r.qp);
		if (!m0 || !m1 || !to_l1 || !a[0] || !a[1] || !a[2])
			return 4;
		r0 = dr_rule(m0, &val, 1, &to_l1);
		r1 = dr_rule(m1, &val, 3, a);
		if (!r0 || !r1)
			return 5;
		/* What came meanwhile (bounded: the sender floods) */
		for (k = 0; k < 64 && rx_poll(&r, &wc, NULL, n ? 0 : 100);
		     k++) {
			got++;
			post_rq(&r, wc.wr_id);
		}
		if (leave && n == rounds - 1)
			break;
		if (mlx5dv_dr_rule_destroy(r0) || mlx5dv_dr_rule_destroy(r1) ||
		    mlx5dv_dr_matcher_destroy(m0) ||
		    mlx5dv_dr_matcher_destroy(m1) ||
		    mlx5dv_dr_action_destroy(to_l1) ||
		    mlx5dv_dr_action_destroy(a[0]) ||
		    mlx5dv_dr_action_destroy(a[1]) ||
		    mlx5dv_dr_action_destroy(a[2]) ||
		    mlx5dv_dr_table_destroy(l1) ||
		    mlx5dv_dr_table_destroy(root) ||
		    mlx5dv_dr_domain_destroy(dmn))
			return 6;
	}
	/* A loaded host may not have run the sender: wait for one frame. */
	if (!got && leave && rx_poll(&r, &wc, NULL, 5000 * sv_slow()))
		got++;
	return got || !leave ? 0 : 7;
}

/*
 * Processes making and destroying DR pipelines while frames flow; half
 * of them exit with theirs in place: no splat, every object back.
 */
TEST_F_TIMEOUT(fl, dr_churn_under_traffic, FL_TIMEOUT)
{
	static const char *const types[] = { "flow", "flow_matcher",
					     "steer_table", "steer_action",
					     "qp" };
	long before[5];
	pid_t kids[4], sender;
	struct frame f;
	struct pkt p;
	int i, st, ok = 0;

	for (i = 0; i < 5; i++)
		before[i] = sv_dev_obj_count(DEV, types[i]);
	base_pkt(&p, self->mac, self->far_mac);
	p.dport = 4800;
	mkframe(&f, &p, true);
	sender = sv_far_flood(self->pkt, self->far_ifindex, f.b, f.len);
	ASSERT_LE(0, sender);
	for (i = 0; i < 4; i++) {
		kids[i] = fork();
		ASSERT_LE(0, kids[i]);
		if (!kids[i])
			_exit(dr_churn_child(self, 15, i & 1));
	}
	ok = sv_wait_kids(_metadata, kids, 4);
	kill(sender, SIGKILL);
	waitpid(sender, &st, 0);
	EXPECT_EQ(4, ok);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(before[i], sv_dev_obj_count(DEV, types[i]))
			TH_LOG("object type %d of flow, flow_matcher, steer_table, steer_action, qp",
			       i);
}

/* errno of a modify header action made of @n actions; 0 if it was made */
static int mod_err(struct mlx5dv_dr_domain *d, uint32_t flags, size_t sz,
		   __be64 *m)
{
	struct mlx5dv_dr_action *a;

	errno = 0;
	a = mlx5dv_dr_action_create_modify_header(d, flags, sz, m);
	if (!a)
		return errno;
	return mlx5dv_dr_action_destroy(a) ? -1 : 0;
}

static int reformat_err(struct mlx5dv_dr_domain *d, int type, size_t sz,
			void *data)
{
	struct mlx5dv_dr_action *a;

	errno = 0;
	a = mlx5dv_dr_action_create_packet_reformat(d, 0, type, sz, data);
	if (!a)
		return errno;
	return mlx5dv_dr_action_destroy(a) ? -1 : 0;
}

TEST_F_TIMEOUT(fl, dr_rewrite_args, FL_TIMEOUT)
{
	struct mlx5dv_dr_action *qa_act, *drop, *pop, *push, *mod, *decap,
				*encap, *a;
	struct mlx5dv_dr_action_dest_attr da[2], *dap[2] = { &da[0], &da[1] };
	struct mlx5dv_dr_action_dest_reformat dr;
	struct mlx5dv_dr_domain *rx, *tx;
	struct mlx5dv_dr_table *root, *l1;
	struct mlx5dv_dr_matcher *m, *m1;
	struct fte mask, val;
	uint8_t hdr[200];
	__be64 mods[70];
	struct rawqp qa;
	int i;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &qa, IBV_QPT_RAW_PACKET,
				0));
	rx = mlx5dv_dr_domain_create(self->ctx, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	tx = mlx5dv_dr_domain_create(self->ctx, MLX5DV_DR_DOMAIN_TYPE_NIC_TX);
	ASSERT_TRUE(rx && tx);

	/* push_vlan: a VLAN TPID only */
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_dr_action_create_push_vlan(rx,
							  htobe32(0x08000001)));
	EXPECT_EQ(EINVAL, errno);

	/* modify_header, as rdma-core's DR checks it */
	mods[0] = mod_set(F_TTL, 0, 8, 1);
	EXPECT_EQ(EINVAL, mod_err(rx, 0, 0, mods));
	EXPECT_EQ(EINVAL, mod_err(rx, 0, 12, mods));
	EXPECT_EQ(EINVAL, mod_err(rx, 2, 8, mods));
	EXPECT_EQ(0, mod_err(rx, MLX5DV_DR_ACTION_FLAGS_ROOT_LEVEL, 8, mods));
	/* copy (3) and unknown types */
	mods[0] = htobe64(3ULL << 60 | (uint64_t)F_TTL << 48);
	EXPECT_EQ(EOPNOTSUPP, mod_err(rx, 0, 8, mods));
	mods[0] = htobe64(7ULL << 60 | (uint64_t)F_TTL << 48);
	EXPECT_EQ(EOPNOTSUPP, mod_err(rx, 0, 8, mods));
	/* unknown fields, fields softverbs lacks */
	mods[0] = mod_set(0x30, 0, 8, 1);
	EXPECT_EQ(EINVAL, mod_err(rx, 0, 8, mods));
	mods[0] = mod_set(F_REGC_0, 0, 0, 1);
	EXPECT_EQ(EOPNOTSUPP, mod_err(rx, 0, 8, mods));
	mods[0] = mod_set(F_REGA, 0, 0, 1);
	EXPECT_EQ(EINVAL, mod_err(rx, 0, 8, mods));
	/* offset + length past the field; a length of 0 is 32 */
	mods[0] = mod_set(F_TTL, 4, 5, 1);
	EXPECT_EQ(EINVAL, mod_err(rx, 0, 8, mods));
	mods[0] = mod_set(F_FIRST_VID, 0, 0, 1);
	EXPECT_EQ(EINVAL, mod_err(rx, 0, 8, mods));
	mods[0] = mod_set(F_FIRST_VID, 4, 12, 1);
	EXPECT_EQ(0, mod_err(rx, 0, 8, mods));
	mods[0] = mod_set(F_SIPV4, 0, 0, 1);
	EXPECT_EQ(0, mod_err(rx, 0, 8, mods));
	/* add: TTL, hop limit, TCP sequence and ack only */
	mods[0] = mod_add(F_DMAC_47_16, 1);
	EXPECT_EQ(EINVAL, mod_err(rx, 0, 8, mods));
	mods[0] = mod_add(F_HOPLIMIT, 1);
	EXPECT_EQ(0, mod_err(rx, 0, 8, mods));
	/* IPv4 and IPv6 fields, TCP and UDP fields: not together */
	mods[0] = mod_set(F_SIPV4, 0, 0, 1);
	mods[1] = mod_set(F_SIPV6_127_96, 0, 0, 1);
	EXPECT_EQ(EOPNOTSUPP, mod_err(rx, 0, 16, mods));
	mods[0] = mod_set(F_TCP_DPORT, 0, 16, 1);
	mods[1] = mod_set(F_UDP_DPORT, 0, 16, 1);
	EXPECT_EQ(EINVAL, mod_err(rx, 0, 16, mods));
	/* 64 actions, not 65 */
	for (i = 0; i < 65; i++)
		mods[i] = mod_set(F_TTL, 0, 8, i);
	EXPECT_EQ(0, mod_err(rx, 0, 64 * 8, mods));
	EXPECT_EQ(EINVAL, mod_err(rx, 0, 65 * 8, mods));

	/* packet_reformat: decap on RX, encap on TX, L2 tunnels only */
	memset(hdr, 0, sizeof(hdr));
	vxlan_hdr(hdr, other_mac, inner_b, "10.1.1.1", "10.1.1.2", 1);
	EXPECT_EQ(EINVAL, reformat_err(rx,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, 50,
		hdr));
	EXPECT_EQ(EINVAL, reformat_err(tx,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2, 0,
		NULL));
	EXPECT_EQ(EOPNOTSUPP, reformat_err(rx,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L3_TUNNEL_TO_L2, 0,
		NULL));
	EXPECT_EQ(EOPNOTSUPP, reformat_err(tx,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L3_TUNNEL, 50,
		hdr));
	EXPECT_EQ(EINVAL, reformat_err(tx, 4, 50, hdr));
	EXPECT_EQ(EINVAL, reformat_err(tx,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, 50,
		NULL));
	EXPECT_EQ(EINVAL, reformat_err(tx,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, 0,
		hdr));
	EXPECT_EQ(EINVAL, reformat_err(tx,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, 129,
		hdr));
	/* A header softverbs cannot fill in: short, a cut IPv4 header */
	EXPECT_EQ(EINVAL, reformat_err(tx,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, 10,
		hdr));
	EXPECT_EQ(EINVAL, reformat_err(tx,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, 30,
		hdr));

	qa_act = mlx5dv_dr_action_create_dest_ibv_qp(qa.qp);
	drop = mlx5dv_dr_action_create_drop();
	pop = mlx5dv_dr_action_create_pop_vlan();
	push = mlx5dv_dr_action_create_push_vlan(rx, htobe32(0x81000001));
	mods[0] = mod_set(F_TTL, 0, 8, 1);
	mod = mlx5dv_dr_action_create_modify_header(rx, 0, 8, mods);
	decap = mlx5dv_dr_action_create_packet_reformat(rx, 0,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2, 0,
		NULL);
	encap = mlx5dv_dr_action_create_packet_reformat(tx, 0,
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, 50,
		hdr);
	ASSERT_TRUE(qa_act && drop && pop && push && mod && decap && encap);

	/* dest_array */
	da[0].type = MLX5DV_DR_ACTION_DEST;
	da[0].dest = qa_act;
	da[1].type = MLX5DV_DR_ACTION_DEST;
	da[1].dest = qa_act;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_dr_action_create_dest_array(rx, 1, dap));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_dr_action_create_dest_array(tx, 2, dap));
	EXPECT_EQ(EOPNOTSUPP, errno);
	da[1].dest = drop;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_dr_action_create_dest_array(rx, 2, dap));
	EXPECT_EQ(EOPNOTSUPP, errno);
	da[1].type = MLX5DV_DR_ACTION_DEST_REFORMAT;
	dr.dest = qa_act;
	dr.reformat = mod;
	da[1].dest_reformat = &dr;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_dr_action_create_dest_array(rx, 2, dap));
	EXPECT_EQ(EOPNOTSUPP, errno);
	da[1].type = 7;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_dr_action_create_dest_array(rx, 2, dap));
	EXPECT_EQ(EINVAL, errno);

	/* Rules: mlx5 DR's order of actions */
	root = mlx5dv_dr_table_create(rx, 0);
	l1 = mlx5dv_dr_table_create(rx, 1);
	ASSERT_TRUE(root && l1);
	dport_fte(&mask, 0xff, 0xffff);
	m = mlx5dv_dr_matcher_create(root, 0, CRIT(OUTER),
				     (struct mlx5dv_flow_match_parameters *)&mask);
	m1 = mlx5dv_dr_matcher_create(l1, 0, CRIT(OUTER),
				      (struct mlx5dv_flow_match_parameters *)&mask);
	ASSERT_TRUE(m && m1);
	dport_fte(&val, IPPROTO_UDP, 4700);
	{
		struct { int err; int n; struct mlx5dv_dr_action *a[3]; } c[] = {
			{ EOPNOTSUPP, 3, { push, pop, qa_act } },
			{ EOPNOTSUPP, 3, { mod, decap, qa_act } },
			{ EOPNOTSUPP, 3, { mod, mod, qa_act } },
			{ EOPNOTSUPP, 2, { qa_act, mod } },
			{ EOPNOTSUPP, 2, { mod, drop } },
			{ EINVAL, 1, { mod } },
			{ 0, 3, { pop, pop, qa_act } },
			{ 0, 3, { decap, mod, qa_act } },
			{ 0, 3, { push, push, qa_act } },
		};

		for (i = 0; i < (int)(sizeof(c) / sizeof(c[0])); i++) {
			struct mlx5dv_dr_rule *r;

			errno = 0;
			r = dr_rule(m, &val, c[i].n, c[i].a);
			EXPECT_EQ(c[i].err, r ? 0 : errno) TH_LOG("case %d", i);
			if (r)
				EXPECT_EQ(0, mlx5dv_dr_rule_destroy(r));
		}
	}
	/* A root-level action in table 1: EINVAL; a table rule may miss */
	a = mlx5dv_dr_action_create_modify_header(rx,
		MLX5DV_DR_ACTION_FLAGS_ROOT_LEVEL, 8, mods);
	ASSERT_NE(NULL, a);
	errno = 0;
	EXPECT_EQ(NULL, dr_rule(m1, &val, 1, &a));
	EXPECT_EQ(EINVAL, errno);
	{
		struct mlx5dv_dr_rule *r = dr_rule(m1, &val, 1, &mod);

		ASSERT_NE(NULL, r) TH_LOG("%d", errno);
		EXPECT_EQ(EBUSY, mlx5dv_dr_action_destroy(mod));
		EXPECT_EQ(0, mlx5dv_dr_rule_destroy(r));
	}
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(a));
	EXPECT_EQ(0, mlx5dv_dr_matcher_destroy(m));
	EXPECT_EQ(0, mlx5dv_dr_matcher_destroy(m1));
	EXPECT_EQ(0, mlx5dv_dr_table_destroy(root));
	EXPECT_EQ(0, mlx5dv_dr_table_destroy(l1));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(qa_act));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(drop));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(pop));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(push));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(mod));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(decap));
	EXPECT_EQ(0, mlx5dv_dr_action_destroy(encap));
	EXPECT_EQ(0, mlx5dv_dr_domain_destroy(rx));
	EXPECT_EQ(0, mlx5dv_dr_domain_destroy(tx));
	rawqp_close(&qa);
}

TEST_F_TIMEOUT(fl, anchor_args, FL_TIMEOUT)
{
	struct mlx5dv_steering_anchor_attr a = {
		.ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_RX, .priority = 3,
	};
	struct mlx5dv_steering_anchor *sa, *sb;

	sa = mlx5dv_create_steering_anchor(self->ctx, &a);
	ASSERT_NE(NULL, sa);
	a.ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_TX;
	sb = mlx5dv_create_steering_anchor(self->ctx, &a);
	ASSERT_NE(NULL, sb);
	EXPECT_NE(sa->id, sb->id);
	EXPECT_EQ(0, mlx5dv_destroy_steering_anchor(sb));
	a.comp_mask = 1;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_steering_anchor(self->ctx, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);
	a.comp_mask = 0;
	a.ft_type = MLX5DV_FLOW_TABLE_TYPE_RDMA_RX;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_steering_anchor(self->ctx, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);
	a.ft_type = 99;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_steering_anchor(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	a.ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_RX;
	a.priority = SV_STEER_MAX_PRIO + 1;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_steering_anchor(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, mlx5dv_destroy_steering_anchor(sa));
}

TEST_F_TIMEOUT(fl, unprivileged, FL_TIMEOUT)
{
	struct fte mask = {}, val = {};
	int st;
	pid_t pid;

	fte_set(&mask, OUTER, UDPORT, 2, 0xffff);
	fte_set(&val, OUTER, UDPORT, 2, 4300);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct mlx5dv_flow_matcher *m;
		int bad = 0;

		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(2);
		/* A matcher steers nothing: anybody's. A flow: CAP_NET_RAW */
		m = matcher(self->ctx, &mask, CRIT(OUTER), 0, false);
		if (!m)
			_exit(3);
		errno = 0;
		bad |= dv_flow_act(m, &val, MLX5DV_FLOW_ACTION_DROP) != NULL;
		bad |= errno != EPERM;
		bad |= mlx5dv_destroy_flow_matcher(m) != 0;
		/* An anchor: CAP_NET_RAW, as mlx5_ib */
		{
			struct mlx5dv_steering_anchor_attr aa = {
				.ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_RX,
			};

			errno = 0;
			bad |= mlx5dv_create_steering_anchor(self->ctx, &aa) !=
			       NULL;
			bad |= (errno != EPERM) << 1;
		}
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("child: %d", WEXITSTATUS(st));
}

TEST_HARNESS_MAIN
