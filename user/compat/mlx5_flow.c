// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmlx5.so.1 stand-in: flow matchers and their flows,
 * mlx5dv_create_flow_matcher() and mlx5dv_create_flow()
 * (Documentation/mlx5dv.rst).
 *
 * mlx5 takes match masks and values in its device layout,
 * fte_match_param (the PRM's, as the kernel's include/linux/mlx5/
 * mlx5_ifc.h has it): 512 bytes, in sections (outer headers, misc,
 * inner headers, misc2 .. misc5) that match_criteria_enable switches on.
 * softverbs' kernel matches frames on its own key (struct sv_flow_key,
 * uapi), so this file moves each supported field of a mask or a value to
 * its place in the key, clearing it in a scratch copy as it goes: a mask
 * with a bit left over asks for a field softverbs does not match on, and
 * the matcher is refused with EOPNOTSUPP rather than matching less than
 * asked. The kernel then keeps the key mask as a matcher object
 * (kernel/steer/matcher.c) and each flow's key value as a rule.
 *
 * Argument checks follow rdma-core's providers/mlx5/verbs.c and what
 * mlx5_ib checks in the kernel (drivers/infiniband/hw/mlx5/fs.c); where
 * the firmware decides on mlx5 (a value bit outside the mask), mlx5's
 * flow core's answer (EINVAL).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/mlx5dv.h>

#include "sv_compat.h"
#include "mlx5_system.h"
#include "mlx5_flow.h"
#include "../lib/sv_private.h"

/* fte_match_param: its sections, and match_criteria_enable's bits */
#define FTE_SIZE	512
#define FTE_SECT	64
enum {
	FTE_OUTER, FTE_MISC, FTE_INNER, FTE_MISC2, FTE_MISC3, FTE_MISC4,
	FTE_MISC5, FTE_NSECT
};

/* Byte offsets in a fte_match_set_lyr_2_4 (outer or inner headers) */
#define L24_SMAC	0x00	/* 6: smac_47_16, smac_15_0 */
#define L24_ETHERTYPE	0x06
#define L24_DMAC	0x08	/* 6 */
#define L24_TCI		0x0e	/* first_prio, first_cfi, first_vid */
#define L24_IP_PROTO	0x10
#define L24_TOS		0x11	/* ip_dscp, ip_ecn */
#define L24_BITS	0x12	/* cvlan_tag .. tcp_flags: a 16-bit word */
#define L24_TCP_SPORT	0x14
#define L24_TCP_DPORT	0x16
#define L24_TTL		0x1b	/* ttl_hoplimit */
#define L24_UDP_SPORT	0x1c
#define L24_UDP_DPORT	0x1e
#define L24_SRC_IP	0x20	/* 16; IPv4 in the last 4 */
#define L24_DST_IP	0x30

/* L24_BITS */
#define L24_CVLAN	0x8000
#define L24_SVLAN	0x4000
#define L24_FRAG	0x2000
#define L24_IPVER_SHIFT	9	/* 4 bits */
#define L24_TCP_FLAGS	0x01ff

/* Byte offsets in fte_match_set_misc */
#define MISC_GRE_BITS	0x00	/* gre_c/k/s_present: bits 31, 29, 28 */
#define MISC_GRE_PROTO	0x0e
#define MISC_GRE_KEY	0x10
#define MISC_VXLAN_VNI	0x14	/* 3 */
#define MISC_OUTER_FL	0x1c	/* outer_ipv6_flow_label: low 20 bits */
#define MISC_INNER_FL	0x20
#define MISC_ESP_SPI	0x30

struct mlx5dv_flow_matcher {
	struct ibv_context *context;
	uint32_t handle;
	uint32_t table;		/* a steering table's handle, 0: the device's */
	uint16_t priority;
	bool egress;
	uint8_t criteria;
	uint8_t mask[FTE_SIZE];	/* as given, disabled sections zeroed */
};

/* Move len bytes at fte offset @off to the key, masked by @m; clear them. */
static void fte_take(uint8_t *fte, unsigned int off, void *key,
		     unsigned int len)
{
	uint8_t *k = key;
	unsigned int i;

	for (i = 0; i < len; i++) {
		k[i] |= fte[off + i];
		fte[off + i] = 0;
	}
}

static uint16_t fte_get16(const uint8_t *fte, unsigned int off)
{
	return (uint16_t)(fte[off] << 8 | fte[off + 1]);
}

static uint32_t fte_get32(const uint8_t *fte, unsigned int off)
{
	return (uint32_t)fte[off] << 24 | (uint32_t)fte[off + 1] << 16 |
	       (uint32_t)fte[off + 2] << 8 | fte[off + 3];
}

static void fte_put16(uint8_t *fte, unsigned int off, uint16_t v)
{
	fte[off] = v >> 8;
	fte[off + 1] = v & 0xff;
}

static void fte_put32(uint8_t *fte, unsigned int off, uint32_t v)
{
	fte[off] = v >> 24;
	fte[off + 1] = (v >> 16) & 0xff;
	fte[off + 2] = (v >> 8) & 0xff;
	fte[off + 3] = v & 0xff;
}

/* One fte_match_set_lyr_2_4 (at @s) into one layer of the key. */
static void fte_lyr_2_4(uint8_t *s, struct sv_flow_hdrs *h)
{
	uint16_t w = fte_get16(s, L24_BITS);
	uint16_t flags;

	fte_take(s, L24_SMAC, h->src_mac, 6);
	fte_take(s, L24_ETHERTYPE, &h->ether_type, 2);
	fte_take(s, L24_DMAC, h->dst_mac, 6);
	fte_take(s, L24_TCI, &h->vlan_tag, 2);
	fte_take(s, L24_IP_PROTO, &h->ip_proto, 1);
	fte_take(s, L24_TOS, &h->tos, 1);
	fte_take(s, L24_TCP_SPORT, &h->tcp_sport, 2);
	fte_take(s, L24_TCP_DPORT, &h->tcp_dport, 2);
	fte_take(s, L24_TTL, &h->ttl, 1);
	fte_take(s, L24_UDP_SPORT, &h->udp_sport, 2);
	fte_take(s, L24_UDP_DPORT, &h->udp_dport, 2);
	fte_take(s, L24_SRC_IP, h->src_ip, 16);
	fte_take(s, L24_DST_IP, h->dst_ip, 16);
	/* cvlan_tag, svlan_tag, frag, ip_version, tcp_flags */
	h->vlan = (w & L24_CVLAN ? SV_FLOW_VLAN_C : 0) |
		  (w & L24_SVLAN ? SV_FLOW_VLAN_S : 0);
	h->frag = !!(w & L24_FRAG);
	h->l3 = (w >> L24_IPVER_SHIFT) & 0xf;
	flags = htons(w & L24_TCP_FLAGS);
	memcpy(&h->tcp_flags, &flags, 2);
	fte_put16(s, L24_BITS, 0);
}

static void fte_misc(uint8_t *s, struct sv_flow_key *k)
{
	uint32_t w = fte_get32(s, MISC_GRE_BITS);
	uint32_t fl;
	uint16_t g;

	/* gre_c_present, gre_k_present, gre_s_present: GRE's C, K, S bits */
	g = htons((w & (1U << 31) ? 0x8000 : 0) | (w & (1U << 29) ? 0x2000 : 0) |
		  (w & (1U << 28) ? 0x1000 : 0));
	memcpy(&k->gre_flags, &g, 2);
	fte_put32(s, MISC_GRE_BITS, w & ~(1U << 31 | 1U << 29 | 1U << 28));
	fte_take(s, MISC_GRE_PROTO, &k->gre_proto, 2);
	fte_take(s, MISC_GRE_KEY, &k->gre_key, 4);
	fte_take(s, MISC_VXLAN_VNI, (uint8_t *)&k->tunnel_id + 1, 3);
	fl = fte_get32(s, MISC_OUTER_FL);
	k->outer.flow_label = htonl(fl & 0xfffff);
	fte_put32(s, MISC_OUTER_FL, fl & ~0xfffffU);
	fl = fte_get32(s, MISC_INNER_FL);
	k->inner.flow_label = htonl(fl & 0xfffff);
	fte_put32(s, MISC_INNER_FL, fl & ~0xfffffU);
	fte_take(s, MISC_ESP_SPI, &k->esp_spi, 4);
}

/*
 * The key of a mask or a value in fte layout, of the sections @criteria
 * enables (the rest is not looked at). False if a bit asks for a field
 * softverbs does not match on.
 */
static bool fte_to_key(const uint8_t *fte, uint8_t criteria,
		       struct sv_flow_key *k)
{
	uint8_t s[FTE_SIZE];
	unsigned int i;

	memset(k, 0, sizeof(*k));
	memcpy(s, fte, sizeof(s));
	if (criteria & 1U << FTE_OUTER)
		fte_lyr_2_4(s + FTE_OUTER * FTE_SECT, &k->outer);
	if (criteria & 1U << FTE_MISC)
		fte_misc(s + FTE_MISC * FTE_SECT, k);
	if (criteria & 1U << FTE_INNER)
		fte_lyr_2_4(s + FTE_INNER * FTE_SECT, &k->inner);
	/* Whatever is left of an enabled section: not matched on. */
	for (i = 0; i < FTE_SIZE; i++)
		if (s[i] && (criteria & 1U << (i / FTE_SECT)))
			return false;
	return true;
}

/*
 * A match_mask or match_value: at least one byte (EINVAL), at most the
 * 512 of fte_match_param unless the rest is zero (EOPNOTSUPP, as the
 * kernel's uverbs treats a larger attribute); into @out, zero-filled.
 */
static int fte_copy(const struct mlx5dv_flow_match_parameters *p,
		    uint8_t out[FTE_SIZE])
{
	const uint8_t *b;
	size_t i;

	if (!p || !p->match_sz)
		return EINVAL;
	b = (const uint8_t *)p->match_buf;
	for (i = FTE_SIZE; i < p->match_sz; i++)
		if (b[i])
			return EOPNOTSUPP;
	memset(out, 0, FTE_SIZE);
	memcpy(out, b, p->match_sz < FTE_SIZE ? p->match_sz : FTE_SIZE);
	return 0;
}

/*
 * A matcher in the device's tables (@table 0) or a steering table's, of
 * direction @egress, its criteria checked; NULL with errno.
 */
struct mlx5dv_flow_matcher *
sv_dv_matcher_create(struct ibv_context *context, uint16_t priority,
		     uint8_t criteria, struct mlx5dv_flow_match_parameters *mask,
		     bool egress, uint32_t table)
{
	struct sv_create_flow_matcher c = { .size = sizeof(c) };
	struct mlx5dv_flow_matcher *m;
	struct sv_flow_key key;
	unsigned int i;
	int ret;

	if (criteria >> FTE_NSECT) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	ret = fte_copy(mask, m->mask);
	if (ret)
		goto err;
	for (i = 0; i < FTE_NSECT; i++)
		if (!(criteria & 1U << i))
			memset(m->mask + i * FTE_SECT, 0, FTE_SECT);
	ret = EOPNOTSUPP;
	if (!fte_to_key(m->mask, criteria, &key))
		goto err;
	c.mask = (uintptr_t)&key;
	c.mask_len = sizeof(key);
	c.flags = egress ? SV_FLOW_ATTR_FLAGS_EGRESS : 0;
	c.priority = priority;
	c.table_handle = table;
	ret = sv_private_cmd(context, SV_IOC_CREATE_FLOW_MATCHER, &c);
	if (ret)
		goto err;
	m->context = context;
	m->handle = c.handle;
	m->table = table;
	m->priority = priority;
	m->egress = egress;
	m->criteria = criteria;
	return m;
err:
	free(m);
	errno = ret;
	return NULL;
}

SV_EXPORT struct mlx5dv_flow_matcher *
mlx5dv_create_flow_matcher(struct ibv_context *context,
			   struct mlx5dv_flow_matcher_attr *attr)
{
	bool egress = false;

	SV_MLX5S_NEW(sv_mlx5s_context(context), mlx5dv_create_flow_matcher,
		     context, attr);

	if (!context || !sv_private_context_is_ours(context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & ~(uint64_t)MLX5DV_FLOW_MATCHER_MASK_FT_TYPE ||
	    attr->type != IBV_FLOW_ATTR_NORMAL) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & MLX5DV_FLOW_MATCHER_MASK_FT_TYPE) {
		/* mlx5_ib: a table type, or the older flags, not both */
		if (attr->flags) {
			errno = EINVAL;
			return NULL;
		}
		switch (attr->ft_type) {
		case MLX5DV_FLOW_TABLE_TYPE_NIC_RX:
			break;
		case MLX5DV_FLOW_TABLE_TYPE_NIC_TX:
			egress = true;
			break;
		case MLX5DV_FLOW_TABLE_TYPE_RDMA_RX:
		case MLX5DV_FLOW_TABLE_TYPE_RDMA_TX:
			/* No RDMA steering tables: the namespace is absent. */
			errno = EOPNOTSUPP;
			return NULL;
		default:
			/* FDB: no switchdev e-switch (EINVAL, as mlx5_ib). */
			errno = EINVAL;
			return NULL;
		}
	} else if (attr->flags & ~(uint32_t)IBV_FLOW_ATTR_FLAGS_EGRESS) {
		errno = EINVAL;
		return NULL;
	} else {
		egress = attr->flags & IBV_FLOW_ATTR_FLAGS_EGRESS;
	}
	return sv_dv_matcher_create(context, attr->priority,
				    attr->match_criteria_enable,
				    attr->match_mask, egress, 0);
}

SV_EXPORT int mlx5dv_destroy_flow_matcher(struct mlx5dv_flow_matcher *matcher)
{
	struct sv_destroy_flow_matcher d = { .size = sizeof(d) };
	int ret;

	SV_MLX5S_GONE(matcher, mlx5dv_destroy_flow_matcher, matcher);

	if (!matcher)
		return EINVAL;
	d.handle = matcher->handle;
	/* EBUSY while a flow uses it. */
	ret = sv_private_cmd(matcher->context, SV_IOC_DESTROY_FLOW_MATCHER, &d);
	if (ret)
		return ret;
	free(matcher);
	return 0;
}

/* The attr and specs of one flow, as SV_IOC_CREATE_FLOW takes them. */
union sv_dv_flow_attr {
	struct ibv_flow_attr attr;
	uint8_t buf[sizeof(struct ibv_flow_attr) +
		    sizeof(struct sv_flow_spec_matcher) +
		    sizeof(struct ibv_flow_spec_action_tag) +
		    sizeof(struct sv_flow_spec_action_drop) +
		    sizeof(struct sv_flow_spec_dest) +
		    sizeof(struct ibv_flow_spec_counter_action) +
		    (SV_FLOW_MAX_REWRITE + 1) * sizeof(struct sv_flow_spec_dest)];
};

/* ---- verbs-level flow actions: steering actions (../lib/flow.c) ---- */

/*
 * A flow action's context and table type: a context not ours EOPNOTSUPP
 * (not an mlx5); NIC receive and transmit; FDB and RDMA tables softverbs
 * lacks (EOPNOTSUPP); anything else EINVAL, as mlx5_ib.
 */
static int sv_dv_ft_type(struct ibv_context *ctx,
			 enum mlx5dv_flow_table_type ft_type, bool *egress)
{
	if (!ctx || !sv_private_context_is_ours(ctx))
		return EOPNOTSUPP;
	switch (ft_type) {
	case MLX5DV_FLOW_TABLE_TYPE_NIC_RX:
	case MLX5DV_FLOW_TABLE_TYPE_NIC_TX:
		*egress = ft_type == MLX5DV_FLOW_TABLE_TYPE_NIC_TX;
		return 0;
	case MLX5DV_FLOW_TABLE_TYPE_FDB:
	case MLX5DV_FLOW_TABLE_TYPE_RDMA_RX:
	case MLX5DV_FLOW_TABLE_TYPE_RDMA_TX:
		return EOPNOTSUPP;
	default:
		return EINVAL;
	}
}

/*
 * The modify-header actions of the PRM (set and add; kernel/steer/action.c
 * checks each), as mlx5_ib takes them: a whole number of 8-byte actions,
 * at least one (EINVAL).
 */
SV_EXPORT struct ibv_flow_action *
mlx5dv_create_flow_action_modify_header(struct ibv_context *ctx,
					size_t actions_sz, uint64_t actions[],
					enum mlx5dv_flow_table_type ft_type)
{
	bool egress;
	int ret;

	SV_MLX5S_CTX(ctx, mlx5dv_create_flow_action_modify_header, ctx,
		     actions_sz, actions, ft_type);

	ret = sv_dv_ft_type(ctx, ft_type, &egress);
	if (!ret && (!actions_sz || actions_sz % 8 || !actions))
		ret = EINVAL;
	if (ret) {
		errno = ret;
		return NULL;
	}
	return sv_private_create_flow_action(ctx, SV_STEER_ACT_MODIFY, egress,
					     actions, actions_sz);
}

/*
 * As mlx5_ib's: data and its size agree (EINVAL, rdma-core); an L2
 * tunnel decap on NIC_RX, an L2 tunnel encap on NIC_TX; the L3 tunnel
 * ones are not built, and any other pairing is EOPNOTSUPP.
 */
SV_EXPORT struct ibv_flow_action *
mlx5dv_create_flow_action_packet_reformat(struct ibv_context *ctx,
					  size_t data_sz, void *data,
					  enum mlx5dv_flow_action_packet_reformat_type reformat_type,
					  enum mlx5dv_flow_table_type ft_type)
{
	bool egress;
	int ret;

	SV_MLX5S_CTX(ctx, mlx5dv_create_flow_action_packet_reformat, ctx,
		     data_sz, data, reformat_type, ft_type);

	/* rdma-core looks at the data first, mlx5_ib at the table type */
	if (ctx && sv_private_context_is_ours(ctx) &&
	    ((!data && data_sz) || (data && !data_sz)))
		ret = EINVAL;
	else
		ret = sv_dv_ft_type(ctx, ft_type, &egress);
	if (ret) {
		errno = ret;
		return NULL;
	}
	if (reformat_type ==
	    MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2 && !egress)
		return sv_private_create_flow_action(ctx, SV_STEER_ACT_DECAP,
						     false, data, data_sz);
	if (reformat_type ==
	    MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL && egress)
		return sv_private_create_flow_action(ctx, SV_STEER_ACT_ENCAP,
						     true, data, data_sz);
	errno = EOPNOTSUPP;
	return NULL;
}

/*
 * A flow action of a flow: a rewrite in its place of mlx5's order
 * (decap, modify header, encap; one of each), in @slot.
 */
static int sv_dv_flow_action(struct ibv_flow_action *fa, uint32_t slot[3],
			     bool *egress)
{
	uint32_t handle, ktype, i;

	if (sv_private_flow_action_info(fa, &handle, &ktype, egress))
		return EINVAL;
	switch (ktype) {
	case SV_STEER_ACT_DECAP:
		i = 0;
		break;
	case SV_STEER_ACT_MODIFY:
		i = 1;
		break;
	case SV_STEER_ACT_ENCAP:
		i = 2;
		break;
	default:
		return EINVAL;
	}
	if (slot[i])
		return EOPNOTSUPP;
	slot[i] = handle;
	return 0;
}

/*
 * The actions, checked in rdma-core's order and with its errors (two
 * destinations: EOPNOTSUPP; two tags: EINVAL). softverbs has no DevX
 * objects (EOPNOTSUPP); an IBV_FLOW_ACTION is one of the flow actions
 * above, in the matcher's direction (EINVAL). IBV_COUNTER, which
 * rdma-core's libmlx5 refuses, counts into an ibv_counters object as
 * ibv_create_flow()'s ACTION_COUNT does.
 */
static int sv_dv_actions(size_t n, const struct mlx5dv_flow_action_attr *a,
			 bool egress, struct sv_dv_actions *out)
{
	uint32_t slot[3] = {};
	bool dir;
	size_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	if (n && !a)
		return EINVAL;
	for (i = 0; i < n; i++) {
		switch (a[i].type) {
		case MLX5DV_FLOW_ACTION_IBV_FLOW_ACTION:
			ret = sv_dv_flow_action(a[i].action, slot, &dir);
			if (!ret && dir != egress)
				ret = EINVAL;
			if (ret)
				return ret;
			break;
		case MLX5DV_FLOW_ACTION_DEST_IBV_QP:
			if (out->qp || out->miss || out->drop || !a[i].qp)
				return out->qp || out->miss || out->drop ?
				       EOPNOTSUPP : EINVAL;
			out->qp = a[i].qp;
			break;
		case MLX5DV_FLOW_ACTION_TAG:
			if (out->have_tag)
				return EINVAL;
			out->have_tag = true;
			out->tag = a[i].tag_value;
			break;
		case MLX5DV_FLOW_ACTION_DEFAULT_MISS:
		case MLX5DV_FLOW_ACTION_DROP:
			if (out->qp || out->miss || out->drop)
				return EOPNOTSUPP;
			if (a[i].type == MLX5DV_FLOW_ACTION_DROP)
				out->drop = true;
			else
				out->miss = true;
			break;
		case MLX5DV_FLOW_ACTION_IBV_COUNTER:
			if (out->counters || !a[i].counter)
				return out->counters ? EOPNOTSUPP : EINVAL;
			out->counters = a[i].counter;
			break;
		default:
			return EOPNOTSUPP;
		}
	}
	for (i = 0; i < 3; i++)
		if (slot[i])
			out->rw[out->nrw++] = slot[i];
	return 0;
}

/*
 * The flow of @matcher with @match_value and the actions @act (checked
 * against the matcher: sv_dv_actions() and DR's own checks have run).
 */
struct ibv_flow *sv_dv_flow_create(struct mlx5dv_flow_matcher *matcher,
				   struct mlx5dv_flow_match_parameters *match_value,
				   const struct sv_dv_actions *a)
{
	struct sv_flow_spec_matcher ms = {};
	union sv_dv_flow_attr fa;
	bool dest = a->qp || a->drop || a->miss || a->table || a->anchor ||
		    a->mirror;
	uint8_t val[FTE_SIZE];
	unsigned int i, n = 0;
	uint8_t *spec;
	int ret;

	ret = fte_copy(match_value, val);
	if (ret) {
		errno = ret;
		return NULL;
	}
	/*
	 * mlx5_ib: a QP destination is a RAW_PACKET QP on receive and none
	 * on transmit; a receive rule of the device's tables needs a
	 * destination, a drop or a default miss; a tag has 24 bits. mlx5's
	 * flow core: a value bit outside the mask.
	 */
	if ((a->qp && (matcher->egress || a->qp->context != matcher->context ||
		       a->qp->qp_type != IBV_QPT_RAW_PACKET)) ||
	    (!matcher->egress && !matcher->table && !dest) ||
	    (a->have_tag && a->tag >= 1U << 24)) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < FTE_SIZE; i++) {
		if (val[i] & ~matcher->mask[i] &&
		    (matcher->criteria & 1U << (i / FTE_SECT))) {
			errno = EINVAL;
			return NULL;
		}
	}
	/* mlx5_ib has 16 priorities for the rules of its tables. */
	if (!matcher->table && matcher->priority > 15) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&fa, 0, sizeof(fa));
	fa.attr.type = IBV_FLOW_ATTR_NORMAL;
	fa.attr.priority = matcher->priority;
	fa.attr.port = 1;
	fa.attr.flags = matcher->egress ? IBV_FLOW_ATTR_FLAGS_EGRESS : 0;
	spec = fa.buf + sizeof(fa.attr);
	ms.type = SV_FLOW_SPEC_MATCHER;
	ms.size = sizeof(ms);
	ms.matcher_handle = matcher->handle;
	fte_to_key(val, matcher->criteria, &ms.val);
	memcpy(spec, &ms, sizeof(ms));
	spec += sizeof(ms);
	n++;
	/* A dropped frame has no completion to carry a tag. */
	if (a->have_tag && !a->drop) {
		struct ibv_flow_spec_action_tag t = {
			.type = IBV_FLOW_SPEC_ACTION_TAG,
			.size = sizeof(t), .tag_id = a->tag,
		};

		memcpy(spec, &t, sizeof(t));
		spec += sizeof(t);
		n++;
	}
	/* A steering table's rule that rewrites goes to the miss after */
	if (a->drop || a->miss || (matcher->table && !dest && !a->nrw)) {
		/* A steering table's rule without one: the table's miss */
		struct sv_flow_spec_action_drop d = {
			.type = a->drop ? IBV_FLOW_SPEC_ACTION_DROP :
					  SV_FLOW_SPEC_DEFAULT_MISS,
			.size = sizeof(d),
		};

		memcpy(spec, &d, sizeof(d));
		spec += sizeof(d);
		n++;
	}
	if (a->table || a->anchor) {
		struct sv_flow_spec_dest d = {
			.type = a->table ? SV_FLOW_SPEC_DEST_TABLE :
					   SV_FLOW_SPEC_DEST_ANCHOR,
			.size = sizeof(d),
			.handle = a->table ? a->table : a->anchor,
		};

		memcpy(spec, &d, sizeof(d));
		spec += sizeof(d);
		n++;
	}
	for (i = 0; i < a->nrw; i++) {
		struct sv_flow_spec_dest d = {
			.type = a->rw[i] ? SV_FLOW_SPEC_REWRITE :
					   SV_FLOW_SPEC_POP_VLAN,
			.size = a->rw[i] ? sizeof(d) :
					   SV_FLOW_SPEC_POP_VLAN_SIZE,
			.handle = a->rw[i],
		};

		memcpy(spec, &d, d.size);
		spec += d.size;
		n++;
	}
	if (a->mirror) {
		struct sv_flow_spec_dest d = {
			.type = SV_FLOW_SPEC_DEST_MIRROR,
			.size = sizeof(d), .handle = a->mirror,
		};

		memcpy(spec, &d, sizeof(d));
		spec += sizeof(d);
		n++;
	}
	if (a->counters) {
		struct ibv_flow_spec_counter_action cs = {
			.type = IBV_FLOW_SPEC_ACTION_COUNT,
			.size = sizeof(cs), .counters = a->counters,
		};

		memcpy(spec, &cs, sizeof(cs));
		spec += sizeof(cs);
		n++;
	}
	fa.attr.num_of_specs = n;
	fa.attr.size = spec - fa.buf;
	return sv_private_create_flow(matcher->context, a->qp, &fa.attr);
}

SV_EXPORT struct ibv_flow *
mlx5dv_create_flow(struct mlx5dv_flow_matcher *matcher,
		   struct mlx5dv_flow_match_parameters *match_value,
		   size_t num_actions,
		   struct mlx5dv_flow_action_attr actions_attr[])
{
	struct sv_dv_actions act;
	int ret;

	SV_MLX5S_OBJ(matcher, mlx5dv_create_flow, matcher, match_value,
		     num_actions, actions_attr);

	if (!matcher) {
		errno = EINVAL;
		return NULL;
	}
	ret = sv_dv_actions(num_actions, actions_attr, matcher->egress, &act);
	if (ret) {
		errno = ret;
		return NULL;
	}
	return sv_dv_flow_create(matcher, match_value, &act);
}
