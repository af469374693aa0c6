// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmlx5.so.1 stand-in: steering anchors and the DR ("direct rule")
 * sandbox, mlx5dv_create_steering_anchor() and mlx5dv_dr_*
 * (Documentation/mlx5dv.rst).
 *
 * As on mlx5, a DR table of level 0 is the device's own (root) steering
 * table: its matchers and rules are flow matchers and flows
 * (mlx5_flow.c) at their priorities, beside ibv_create_flow()'s. A table
 * of a higher level is a kernel steering table (kernel/steer/sandbox.c),
 * which frames reach only through a rule's dest_table action and which,
 * when none of its rules takes a frame, passes it to the kernel's stack
 * (receive) or the wire (transmit). dest_root_table makes an anchor (at
 * a priority of the device's tables) and sends frames back there.
 *
 * Objects count who uses them and refuse to go while used (EBUSY), as
 * rdma-core's DR does: a domain its tables, a table its matchers and the
 * actions naming it, a matcher its rules, an action the rules using it.
 * Frame rewrites (push/pop VLAN, modify header, L2 tunnel encap and
 * decap) and dest_array are kernel steering actions
 * (kernel/steer/action.c) made when the DR action is; a rule names them
 * in its flow, in the order mlx5 DR's action state machine allows
 * (decap, pop VLAN, modify header, push VLAN, encap, then the
 * destination: EOPNOTSUPP otherwise). Not built: L3 tunnel reformats,
 * flow counters and meters (DevX objects), ASO, vports, FDB and RDMA
 * domains: EOPNOTSUPP.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "sv_compat.h"
#include "mlx5_system.h"
#include "mlx5_flow.h"
#include "../lib/sv_private.h"

/* ---- steering anchors ---- */

struct sv_anchor {
	struct mlx5dv_steering_anchor sa;	/* first: the caller's */
	struct ibv_context *context;
};

SV_EXPORT struct mlx5dv_steering_anchor *
mlx5dv_create_steering_anchor(struct ibv_context *context,
			      struct mlx5dv_steering_anchor_attr *attr)
{
	struct sv_create_steer_anchor c = { .size = sizeof(c) };
	struct sv_anchor *a;
	int ret;

	SV_MLX5S_NEW(sv_mlx5s_context(context), mlx5dv_create_steering_anchor,
		     context, attr);

	if (!context || !sv_private_context_is_ours(context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	/* rdma-core: no comp_mask bit is known. */
	if (attr->comp_mask) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	switch (attr->ft_type) {
	case MLX5DV_FLOW_TABLE_TYPE_NIC_RX:
		break;
	case MLX5DV_FLOW_TABLE_TYPE_NIC_TX:
		c.flags = SV_FLOW_ATTR_FLAGS_EGRESS;
		break;
	case MLX5DV_FLOW_TABLE_TYPE_FDB:
	case MLX5DV_FLOW_TABLE_TYPE_RDMA_RX:
	case MLX5DV_FLOW_TABLE_TYPE_RDMA_TX:
		/* No such namespace on softverbs, as mlx5_ib without it */
		errno = EOPNOTSUPP;
		return NULL;
	default:
		errno = EINVAL;
		return NULL;
	}
	c.priority = attr->priority;
	a = calloc(1, sizeof(*a));
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	/* EPERM without CAP_NET_RAW; EINVAL above SV_STEER_MAX_PRIO */
	ret = sv_private_cmd(context, SV_IOC_CREATE_STEER_ANCHOR, &c);
	if (ret) {
		free(a);
		errno = ret;
		return NULL;
	}
	a->context = context;
	a->sa.id = c.handle;
	return &a->sa;
}

SV_EXPORT int mlx5dv_destroy_steering_anchor(struct mlx5dv_steering_anchor *sa)
{
	struct sv_destroy_steer_obj d = { .size = sizeof(d) };
	struct sv_anchor *a;
	int ret;

	SV_MLX5S_GONE(sa, mlx5dv_destroy_steering_anchor, sa);

	if (!sa)
		return EINVAL;
	a = (struct sv_anchor *)sa;
	d.handle = sa->id;
	/* EBUSY while a rule sends frames to it */
	ret = sv_private_cmd(a->context, SV_IOC_DESTROY_STEER_ANCHOR, &d);
	if (ret)
		return ret;
	free(a);
	return 0;
}

/* ---- domains, tables, matchers ---- */

struct mlx5dv_dr_domain {
	struct ibv_context *ctx;
	bool egress;
	bool no_dup_rules;		/* allow_duplicate_rules(false) */
	unsigned int users;		/* tables */
};

struct mlx5dv_dr_table {
	struct mlx5dv_dr_domain *dmn;
	uint32_t level;
	uint32_t handle;		/* the kernel table's; 0 at level 0 */
	unsigned int users;		/* matchers, dest_table actions */
};

struct mlx5dv_dr_matcher {
	struct mlx5dv_dr_table *tbl;
	struct mlx5dv_flow_matcher *fm;
	struct mlx5dv_dr_rule *rules;	/* its rules, newest first */
	size_t mask_sz;
	uint8_t mask[];			/* its mask, to compare rules by */
};

enum sv_dr_action_type {
	SV_DR_QP, SV_DR_TABLE, SV_DR_ROOT, SV_DR_DROP, SV_DR_MISS, SV_DR_TAG,
	/* frame rewrites, in the order a rule may have them */
	SV_DR_DECAP, SV_DR_POP, SV_DR_MODIFY, SV_DR_PUSH, SV_DR_ENCAP,
	SV_DR_ARRAY,
};

struct mlx5dv_dr_action {
	enum sv_dr_action_type type;
	union {
		struct ibv_qp *qp;
		struct mlx5dv_dr_table *tbl;
		struct mlx5dv_steering_anchor *sa;
		uint32_t tag;
	};
	struct mlx5dv_dr_table *root;	/* SV_DR_ROOT: the level-0 table */
	unsigned int users;		/* rules, dest arrays */
	/* A kernel steering action (rewrites but a pop; a dest array) */
	struct mlx5dv_dr_domain *dmn;
	uint32_t handle;
	bool root_level;		/* MLX5DV_DR_ACTION_FLAGS_ROOT_LEVEL */
	size_t nmembers;		/* SV_DR_ARRAY: the actions it names */
	struct mlx5dv_dr_action **members;
	/* A drop, miss, tag or pop: its twin in the system's rules, if any */
	struct mlx5dv_dr_action *sys;
};

struct mlx5dv_dr_rule {
	struct mlx5dv_dr_matcher *matcher;
	struct mlx5dv_dr_rule *next, **pprev;	/* the matcher's list */
	struct ibv_flow *flow;
	uint8_t *match;			/* its value under the mask */
	size_t nactions;
	struct mlx5dv_dr_action *actions[];
};

SV_EXPORT struct mlx5dv_dr_domain *
mlx5dv_dr_domain_create(struct ibv_context *ctx,
			enum mlx5dv_dr_domain_type type)
{
	struct mlx5dv_dr_domain *d;

	SV_MLX5S_NEW(sv_mlx5s_context(ctx), mlx5dv_dr_domain_create, ctx, type);

	if (!ctx || !sv_private_context_is_ours(ctx)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* No e-switch to manage: FDB domains are not for softverbs. */
	if (type != MLX5DV_DR_DOMAIN_TYPE_NIC_RX &&
	    type != MLX5DV_DR_DOMAIN_TYPE_NIC_TX) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	d->ctx = ctx;
	d->egress = type == MLX5DV_DR_DOMAIN_TYPE_NIC_TX;
	return d;
}

SV_EXPORT int mlx5dv_dr_domain_destroy(struct mlx5dv_dr_domain *domain)
{
	SV_MLX5S_GONE(domain, mlx5dv_dr_domain_destroy, domain);

	if (domain->users)
		return EBUSY;
	free(domain);
	return 0;
}

/* Rules take effect when they are created: nothing to wait for. */
SV_EXPORT int mlx5dv_dr_domain_sync(struct mlx5dv_dr_domain *domain,
				    uint32_t flags)
{
	SV_MLX5S_OBJ(domain, mlx5dv_dr_domain_sync, domain, flags);

	if (flags & ~(uint32_t)(MLX5DV_DR_DOMAIN_SYNC_FLAGS_SW |
				MLX5DV_DR_DOMAIN_SYNC_FLAGS_HW |
				MLX5DV_DR_DOMAIN_SYNC_FLAGS_MEM))
		return EINVAL;
	return 0;
}

SV_EXPORT void
mlx5dv_dr_domain_set_reclaim_device_memory(struct mlx5dv_dr_domain *dmn,
					   bool enable)
{
	SV_MLX5S_OBJ_VOID(dmn, mlx5dv_dr_domain_set_reclaim_device_memory,
			  dmn, enable);
}

/*
 * As mlx5's: duplicate rules (a matcher's rules with one value under its
 * mask, whatever their actions) are allowed until this turns them off;
 * then such a rule is EEXIST (mlx5dv_dr_rule_create()).
 */
SV_EXPORT void
mlx5dv_dr_domain_allow_duplicate_rules(struct mlx5dv_dr_domain *domain,
				       bool allow)
{
	SV_MLX5S_OBJ_VOID(domain, mlx5dv_dr_domain_allow_duplicate_rules,
			  domain, allow);
	if (domain)
		domain->no_dup_rules = !allow;
}

SV_EXPORT struct mlx5dv_dr_table *
mlx5dv_dr_table_create(struct mlx5dv_dr_domain *domain, uint32_t level)
{
	struct sv_create_steer_table c = { .size = sizeof(c) };
	struct mlx5dv_dr_table *t;
	int ret;

	SV_MLX5S_NEW(sv_mlx5s_object(domain), mlx5dv_dr_table_create, domain,
		     level);

	if (!domain) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	if (level) {
		c.flags = domain->egress ? SV_FLOW_ATTR_FLAGS_EGRESS : 0;
		c.level = level;
		/* Any level: ordering only, as mlx5's SW steering */
		ret = sv_private_cmd(domain->ctx, SV_IOC_CREATE_STEER_TABLE, &c);
		if (ret) {
			free(t);
			errno = ret;
			return NULL;
		}
	}
	t->dmn = domain;
	t->level = level;
	t->handle = c.handle;
	domain->users++;
	return t;
}

SV_EXPORT int mlx5dv_dr_table_destroy(struct mlx5dv_dr_table *table)
{
	struct sv_destroy_steer_obj d = { .size = sizeof(d) };
	int ret;

	SV_MLX5S_GONE(table, mlx5dv_dr_table_destroy, table);

	if (table->users)
		return EBUSY;
	if (table->handle) {
		d.handle = table->handle;
		ret = sv_private_cmd(table->dmn->ctx,
				     SV_IOC_DESTROY_STEER_TABLE, &d);
		if (ret)
			return ret;
	}
	table->dmn->users--;
	free(table);
	return 0;
}

SV_EXPORT struct mlx5dv_dr_matcher *
mlx5dv_dr_matcher_create(struct mlx5dv_dr_table *table, uint16_t priority,
			 uint8_t match_criteria_enable,
			 struct mlx5dv_flow_match_parameters *mask)
{
	struct mlx5dv_dr_matcher *m;

	SV_MLX5S_NEW(sv_mlx5s_object(table), mlx5dv_dr_matcher_create, table,
		     priority, match_criteria_enable, mask);

	if (!table) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m) + (mask ? mask->match_sz : 0));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	if (mask) {
		m->mask_sz = mask->match_sz;
		memcpy(m->mask, mask->match_buf, mask->match_sz);
	}
	m->fm = sv_dv_matcher_create(table->dmn->ctx, priority,
				     match_criteria_enable, mask,
				     table->dmn->egress, table->handle);
	if (!m->fm) {
		free(m);
		return NULL;
	}
	m->tbl = table;
	table->users++;
	return m;
}

SV_EXPORT int mlx5dv_dr_matcher_destroy(struct mlx5dv_dr_matcher *matcher)
{
	int ret;

	SV_MLX5S_GONE(matcher, mlx5dv_dr_matcher_destroy, matcher);

	if (matcher->rules)
		return EBUSY;
	ret = mlx5dv_destroy_flow_matcher(matcher->fm);
	if (ret)
		return ret;
	matcher->tbl->users--;
	free(matcher);
	return 0;
}

/* ---- actions ---- */

static struct mlx5dv_dr_action *sv_dr_action(enum sv_dr_action_type type)
{
	struct mlx5dv_dr_action *a = calloc(1, sizeof(*a));

	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	a->type = type;
	return a;
}

SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_ibv_qp(struct ibv_qp *ibqp)
{
	struct mlx5dv_dr_action *a;

	SV_MLX5S_NEW(sv_mlx5s_context(sv_ctx_of(ibqp)),
		     mlx5dv_dr_action_create_dest_ibv_qp, ibqp);

	if (!ibqp) {
		errno = EINVAL;
		return NULL;
	}
	a = sv_dr_action(SV_DR_QP);
	if (a)
		a->qp = ibqp;
	return a;
}

SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_table(struct mlx5dv_dr_table *table)
{
	struct mlx5dv_dr_action *a;

	SV_MLX5S_NEW(sv_mlx5s_object(table), mlx5dv_dr_action_create_dest_table,
		     table);

	/* The root table is the device's: dest_root_table goes there. */
	if (!table || !table->level) {
		errno = EINVAL;
		return NULL;
	}
	a = sv_dr_action(SV_DR_TABLE);
	if (!a)
		return NULL;
	a->tbl = table;
	table->users++;
	return a;
}

SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_root_table(struct mlx5dv_dr_table *table,
					uint16_t priority)
{
	struct mlx5dv_steering_anchor_attr attr = { .priority = priority };
	struct mlx5dv_dr_action *a;

	SV_MLX5S_NEW(sv_mlx5s_object(table),
		     mlx5dv_dr_action_create_dest_root_table, table, priority);

	if (!table || table->level) {
		errno = EINVAL;
		return NULL;
	}
	attr.ft_type = table->dmn->egress ? MLX5DV_FLOW_TABLE_TYPE_NIC_TX :
					    MLX5DV_FLOW_TABLE_TYPE_NIC_RX;
	a = sv_dr_action(SV_DR_ROOT);
	if (!a)
		return NULL;
	a->sa = mlx5dv_create_steering_anchor(table->dmn->ctx, &attr);
	if (!a->sa) {
		free(a);
		return NULL;
	}
	a->root = table;
	table->users++;
	return a;
}

/*
 * Drop, default miss, tag and pop VLAN name no domain: the program's one
 * action may go into our rules and the system's. The system's library
 * gets a twin of it when one of its rules, dest arrays or samplers first
 * takes it; mlx5dv_dr_action_destroy() destroys both (EBUSY while the
 * system's still has users). Any other action of ours is of our domains.
 */
struct mlx5dv_dr_action *sv_dr_action_system(struct mlx5dv_dr_action *a)
{
	struct mlx5dv_dr_action *t, *old = NULL;

	if (!a || sv_mlx5s_object(a))
		return a;
	t = __atomic_load_n(&a->sys, __ATOMIC_ACQUIRE);
	if (t)
		return t;
	switch (a->type) {
	case SV_DR_DROP:
		t = SV_MLX5S_CALL(mlx5dv_dr_action_create_drop);
		break;
	case SV_DR_MISS:
		t = SV_MLX5S_CALL(mlx5dv_dr_action_create_default_miss);
		break;
	case SV_DR_TAG:
		t = SV_MLX5S_CALL(mlx5dv_dr_action_create_tag, a->tag);
		break;
	case SV_DR_POP:
		t = SV_MLX5S_CALL(mlx5dv_dr_action_create_pop_vlan);
		break;
	default:
		errno = EINVAL;
		return NULL;
	}
	if (!t)
		return NULL;
	/* Two threads made one each: the first stays. */
	if (!__atomic_compare_exchange_n(&a->sys, &old, t, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		SV_MLX5S_CALL(mlx5dv_dr_action_destroy, t);
		return old;
	}
	return t;
}

/* The system's actions for @n of the program's; NULL + errno. */
static struct mlx5dv_dr_action **
sv_dr_actions_system(size_t n, struct mlx5dv_dr_action *in[])
{
	struct mlx5dv_dr_action **out = calloc(n ? n : 1, sizeof(*out));
	size_t i;

	if (!out) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		out[i] = sv_dr_action_system(in[i]);
		if (in[i] && !out[i]) {
			free(out);
			return NULL;
		}
	}
	return out;
}

SV_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_drop(void)
{
	return sv_dr_action(SV_DR_DROP);
}

SV_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_default_miss(void)
{
	return sv_dr_action(SV_DR_MISS);
}

SV_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_tag(uint32_t tag_value)
{
	struct mlx5dv_dr_action *a;

	/* A flow tag has 24 bits. */
	if (tag_value >= 1U << 24) {
		errno = EINVAL;
		return NULL;
	}
	a = sv_dr_action(SV_DR_TAG);
	if (a)
		a->tag = tag_value;
	return a;
}

/* A DR action that is a kernel steering action of @type; NULL + errno */
static struct mlx5dv_dr_action *
sv_dr_kaction(struct mlx5dv_dr_domain *dmn, enum sv_dr_action_type type,
	      uint32_t ktype, const void *data, size_t len, __be32 vlan_hdr)
{
	struct sv_create_steer_action c = {
		.size = sizeof(c), .type = ktype,
		.flags = dmn->egress ? SV_FLOW_ATTR_FLAGS_EGRESS : 0,
		.data = (uintptr_t)data, .data_len = len, .vlan_hdr = vlan_hdr,
	};
	struct mlx5dv_dr_action *a;
	int ret;

	if (len > UINT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	a = sv_dr_action(type);
	if (!a)
		return NULL;
	ret = sv_private_cmd(dmn->ctx, SV_IOC_CREATE_STEER_ACTION, &c);
	if (ret) {
		free(a);
		errno = ret;
		return NULL;
	}
	a->dmn = dmn;
	a->handle = c.handle;
	dmn->users++;
	return a;
}

SV_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_pop_vlan(void)
{
	return sv_dr_action(SV_DR_POP);
}

SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_push_vlan(struct mlx5dv_dr_domain *domain,
				  __be32 vlan_hdr)
{
	uint32_t tpid = be32toh(vlan_hdr) >> 16;

	SV_MLX5S_NEW(sv_mlx5s_object(domain), mlx5dv_dr_action_create_push_vlan,
		     domain, vlan_hdr);

	/* rdma-core: a C-VLAN or S-VLAN TPID */
	if (!domain || (tpid != 0x8100 && tpid != 0x88a8)) {
		errno = EINVAL;
		return NULL;
	}
	return sv_dr_kaction(domain, SV_DR_PUSH, SV_STEER_ACT_PUSH_VLAN,
			     NULL, 0, vlan_hdr);
}

/* mlx5's metadata registers A and B (a direction each: rdma-core) */
#define MLX5_FIELD_REGA		0x49
#define MLX5_FIELD_REGB		0x50

SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_modify_header(struct mlx5dv_dr_domain *domain,
				      uint32_t flags, size_t actions_sz,
				      __be64 actions[])
{
	struct mlx5dv_dr_action *a;
	size_t i;

	SV_MLX5S_NEW(sv_mlx5s_object(domain),
		     mlx5dv_dr_action_create_modify_header, domain, flags,
		     actions_sz, actions);

	/* rdma-core's checks, then the kernel's (kernel/steer/action.c) */
	if (!domain || (flags & ~(uint32_t)MLX5DV_DR_ACTION_FLAGS_ROOT_LEVEL) ||
	    actions_sz % 8 || !actions_sz || !actions) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < actions_sz / 8; i++) {
		uint64_t v = be64toh(actions[i]);
		unsigned int type = v >> 60, field = (v >> 48) & 0xfff;

		/* set/copy of register A only on TX, B only on RX */
		if ((type == 1 || type == 3) &&
		    ((field == MLX5_FIELD_REGA && !domain->egress) ||
		     (field == MLX5_FIELD_REGB && domain->egress))) {
			errno = EINVAL;
			return NULL;
		}
	}
	a = sv_dr_kaction(domain, SV_DR_MODIFY, SV_STEER_ACT_MODIFY, actions,
			  actions_sz, 0);
	if (a)
		a->root_level = flags & MLX5DV_DR_ACTION_FLAGS_ROOT_LEVEL;
	return a;
}

SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_packet_reformat(struct mlx5dv_dr_domain *domain,
					uint32_t flags,
					enum mlx5dv_flow_action_packet_reformat_type reformat_type,
					size_t data_sz, void *data)
{
	struct mlx5dv_dr_action *a;
	bool decap;

	SV_MLX5S_NEW(sv_mlx5s_object(domain),
		     mlx5dv_dr_action_create_packet_reformat, domain, flags,
		     reformat_type, data_sz, data);

	/*
	 * rdma-core: data and its size agree, at most the device's encap
	 * size, a known type; on NIC_RX a decap, on NIC_TX an encap.
	 */
	if (!domain || (flags & ~(uint32_t)MLX5DV_DR_ACTION_FLAGS_ROOT_LEVEL) ||
	    (!data && data_sz) || (data && !data_sz) ||
	    data_sz > SV_STEER_MAX_ENCAP ||
	    reformat_type > MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L3_TUNNEL) {
		errno = EINVAL;
		return NULL;
	}
	decap = reformat_type ==
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2 ||
		reformat_type ==
		MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L3_TUNNEL_TO_L2;
	if (decap == domain->egress) {
		errno = EINVAL;
		return NULL;
	}
	switch (reformat_type) {
	case MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2:
		a = sv_dr_kaction(domain, SV_DR_DECAP, SV_STEER_ACT_DECAP,
				  NULL, 0, 0);
		break;
	case MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL:
		/* EINVAL from the kernel for a header it cannot fill in */
		a = sv_dr_kaction(domain, SV_DR_ENCAP, SV_STEER_ACT_ENCAP,
				  data, data_sz, 0);
		break;
	default:
		/* The L3 tunnels: not built */
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (a)
		a->root_level = flags & MLX5DV_DR_ACTION_FLAGS_ROOT_LEVEL;
	return a;
}

/* One destination of a dest array: its kernel description */
static int sv_dr_array_dest(struct mlx5dv_dr_domain *dmn,
			    const struct mlx5dv_dr_action_dest_attr *attr,
			    struct sv_steer_dest *d,
			    struct mlx5dv_dr_action **dest,
			    struct mlx5dv_dr_action **reformat)
{
	if (!attr)
		return EINVAL;
	switch (attr->type) {
	case MLX5DV_DR_ACTION_DEST:
		*dest = attr->dest;
		*reformat = NULL;
		break;
	case MLX5DV_DR_ACTION_DEST_REFORMAT:
		if (!attr->dest_reformat)
			return EINVAL;
		*dest = attr->dest_reformat->dest;
		*reformat = attr->dest_reformat->reformat;
		if (!*reformat)
			return EINVAL;
		break;
	default:
		return EINVAL;
	}
	if (!*dest || sv_mlx5s_object(*dest) ||
	    (*reformat && sv_mlx5s_object(*reformat)))
		return EINVAL;
	/* rdma-core, on NIC_RX: a QP or a table; with an encap, if any */
	switch ((*dest)->type) {
	case SV_DR_QP:
		if ((*dest)->qp->context != dmn->ctx)
			return EINVAL;
		d->type = SV_STEER_DEST_QP;
		d->handle = (*dest)->qp->handle;
		break;
	case SV_DR_TABLE:
		if ((*dest)->tbl->dmn != dmn)
			return EINVAL;
		d->type = SV_STEER_DEST_TABLE;
		d->handle = (*dest)->tbl->handle;
		break;
	default:
		return EOPNOTSUPP;
	}
	if (*reformat) {
		if ((*reformat)->type != SV_DR_ENCAP || (*reformat)->root_level)
			return EOPNOTSUPP;
		if ((*reformat)->dmn->ctx != dmn->ctx)
			return EINVAL;
		d->encap_handle = (*reformat)->handle;
	}
	return 0;
}

/*
 * A dest array of the system's domain: its destinations, with the
 * system's actions. NULL + errno.
 */
static struct mlx5dv_dr_action *
sv_dr_array_system(struct mlx5dv_dr_domain *domain, size_t num_dest,
		   struct mlx5dv_dr_action_dest_attr *dests[])
{
	struct mlx5dv_dr_action_dest_reformat *ref = NULL;
	struct mlx5dv_dr_action_dest_attr *attr = NULL, **p = NULL;
	struct mlx5dv_dr_action *a = NULL;
	size_t i;
	int err;

	if (!dests)
		goto call;
	p = calloc(num_dest ? num_dest : 1, sizeof(*p));
	attr = calloc(num_dest ? num_dest : 1, sizeof(*attr));
	ref = calloc(num_dest ? num_dest : 1, sizeof(*ref));
	if (!p || !attr || !ref) {
		errno = ENOMEM;
		goto out;
	}
	for (i = 0; i < num_dest; i++) {
		if (!dests[i])
			continue;
		p[i] = &attr[i];
		attr[i] = *dests[i];
		if (attr[i].type == MLX5DV_DR_ACTION_DEST_REFORMAT &&
		    attr[i].dest_reformat) {
			ref[i].reformat = sv_dr_action_system(
				attr[i].dest_reformat->reformat);
			ref[i].dest = sv_dr_action_system(
				attr[i].dest_reformat->dest);
			if ((!ref[i].reformat &&
			     attr[i].dest_reformat->reformat) ||
			    (!ref[i].dest && attr[i].dest_reformat->dest))
				goto out;
			attr[i].dest_reformat = &ref[i];
		} else if (attr[i].type == MLX5DV_DR_ACTION_DEST) {
			attr[i].dest = sv_dr_action_system(dests[i]->dest);
			if (!attr[i].dest && dests[i]->dest)
				goto out;
		}
	}
call:
	a = SV_MLX5S_CALL(mlx5dv_dr_action_create_dest_array, domain,
			  num_dest, dests ? p : NULL);
	if (a)
		sv_mlx5s_keep(a);
out:
	err = errno;
	free(ref);
	free(attr);
	free(p);
	errno = err;
	return a;
}

/* A sampler of the system's tables, with the system's actions */
SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_flow_sampler(struct mlx5dv_dr_flow_sampler_attr *attr)
{
	struct mlx5dv_dr_flow_sampler_attr sys;
	struct mlx5dv_dr_action *a;
	int err;

	/* Not built for softverbs' tables (a DevX-made sampler on mlx5) */
	if (!attr || !sv_mlx5s_object(attr->default_next_table)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	sys = *attr;
	if (attr->sample_actions) {
		sys.sample_actions = sv_dr_actions_system(
			attr->num_sample_actions, attr->sample_actions);
		if (!sys.sample_actions)
			return NULL;
	}
	a = SV_MLX5S_CALL(mlx5dv_dr_action_create_flow_sampler, &sys);
	err = errno;
	if (attr->sample_actions)
		free(sys.sample_actions);
	if (a)
		sv_mlx5s_keep(a);
	errno = err;
	return a;
}

SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_array(struct mlx5dv_dr_domain *domain,
				   size_t num_dest,
				   struct mlx5dv_dr_action_dest_attr *dests[])
{
	struct sv_steer_dest d[SV_STEER_MAX_DEST];
	struct mlx5dv_dr_action **members;
	struct mlx5dv_dr_action *a;
	size_t i, n = 0;
	int ret;

	if (sv_mlx5s_object(domain))
		return sv_dr_array_system(domain, num_dest, dests);
	if (!domain || num_dest <= 1 || !dests) {
		errno = EINVAL;
		return NULL;
	}
	/* rdma-core builds it on NIC_RX and FDB tables only */
	if (domain->egress) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (num_dest > SV_STEER_MAX_DEST) {
		errno = EINVAL;
		return NULL;
	}
	memset(d, 0, sizeof(d));
	members = calloc(2 * num_dest, sizeof(*members));
	if (!members) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < num_dest; i++) {
		ret = sv_dr_array_dest(domain, dests[i], &d[i], &members[n],
				       &members[n + 1]);
		if (ret) {
			free(members);
			errno = ret;
			return NULL;
		}
		n += members[n + 1] ? 2 : 1;
	}
	a = sv_dr_kaction(domain, SV_DR_ARRAY, SV_STEER_ACT_MIRROR, d,
			  num_dest * sizeof(d[0]), 0);
	if (!a) {
		free(members);
		return NULL;
	}
	a->members = members;
	a->nmembers = n;
	for (i = 0; i < n; i++)
		members[i]->users++;
	return a;
}

SV_EXPORT int mlx5dv_dr_action_destroy(struct mlx5dv_dr_action *action)
{
	struct sv_destroy_steer_obj d = { .size = sizeof(d) };
	size_t i;
	int ret;

	SV_MLX5S_GONE(action, mlx5dv_dr_action_destroy, action);

	if (action->users)
		return EBUSY;
	if (action->sys) {
		ret = SV_MLX5S_CALL(mlx5dv_dr_action_destroy, action->sys);
		if (ret)
			return ret;
		action->sys = NULL;
	}
	if (action->dmn) {
		d.handle = action->handle;
		ret = sv_private_cmd(action->dmn->ctx,
				     SV_IOC_DESTROY_STEER_ACTION, &d);
		if (ret)
			return ret;
		action->dmn->users--;
	}
	for (i = 0; i < action->nmembers; i++)
		action->members[i]->users--;
	free(action->members);
	switch (action->type) {
	case SV_DR_TABLE:
		action->tbl->users--;
		break;
	case SV_DR_ROOT:
		ret = mlx5dv_destroy_steering_anchor(action->sa);
		if (ret)
			return ret;
		action->root->users--;
		break;
	default:
		break;
	}
	free(action);
	return 0;
}

/* ---- rules ---- */

/*
 * The actions of a rule: one destination at most (a QP, a table, the
 * root table, a drop or a default miss), one tag; each of the rule's
 * domain and direction. A rule of the root table without a destination
 * is EINVAL (as mlx5dv_create_flow()); in a higher table it leaves the
 * frame to the table's miss.
 */
static int sv_dr_rule_actions(struct mlx5dv_dr_matcher *m, size_t n,
			      struct mlx5dv_dr_action *actions[],
			      struct sv_dv_actions *out)
{
	struct mlx5dv_dr_table *tbl = m->tbl;
	enum sv_dr_action_type last_rw = SV_DR_DECAP;
	bool dest = false;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (n && !actions)
		return EINVAL;
	for (i = 0; i < n; i++) {
		struct mlx5dv_dr_action *a = actions[i];

		/* Not one the system's library made, for its devices */
		if (!a || sv_mlx5s_object(a))
			return EINVAL;
		if (a->type == SV_DR_TAG) {
			if (out->have_tag)
				return EINVAL;
			out->have_tag = true;
			out->tag = a->tag;
			continue;
		}
		if (a->type >= SV_DR_DECAP && a->type <= SV_DR_ENCAP) {
			/*
			 * mlx5 DR's state machine: decap, pops, a modify
			 * header, pushes, encap, before the destination
			 * (EOPNOTSUPP); a root-level action only in the
			 * root table (EINVAL).
			 */
			if (dest || a->type < last_rw ||
			    (a->type == last_rw && out->nrw &&
			     a->type != SV_DR_POP && a->type != SV_DR_PUSH))
				return EOPNOTSUPP;
			if ((a->root_level && tbl->level) ||
			    (a->dmn && a->dmn->ctx != tbl->dmn->ctx))
				return EINVAL;
			if (out->nrw == SV_FLOW_MAX_REWRITE)
				return EOPNOTSUPP;
			last_rw = a->type;
			out->rw[out->nrw++] = a->handle;
			continue;
		}
		if (dest)
			return EOPNOTSUPP;
		dest = true;
		/* After a rewrite: only somewhere to go, not a drop or miss */
		if (out->nrw && (a->type == SV_DR_DROP || a->type == SV_DR_MISS))
			return EOPNOTSUPP;
		switch (a->type) {
		case SV_DR_QP:
			out->qp = a->qp;
			break;
		case SV_DR_TABLE:
			/* Of the domain, further down (a higher level) */
			if (a->tbl->dmn != tbl->dmn || a->tbl->level <= tbl->level)
				return EINVAL;
			out->table = a->tbl->handle;
			break;
		case SV_DR_ROOT:
			if (a->root->dmn->ctx != tbl->dmn->ctx ||
			    a->root->dmn->egress != tbl->dmn->egress)
				return EINVAL;
			out->anchor = a->sa->id;
			break;
		case SV_DR_DROP:
			out->drop = true;
			break;
		case SV_DR_MISS:
			out->miss = true;
			break;
		case SV_DR_ARRAY:
			if (a->dmn != tbl->dmn)
				return EINVAL;
			out->mirror = a->handle;
			break;
		default:
			return EINVAL;
		}
	}
	return 0;
}

/* A rule of the system's matcher, with the system's actions */
static struct mlx5dv_dr_rule *
sv_dr_rule_system(struct mlx5dv_dr_matcher *matcher,
		  struct mlx5dv_flow_match_parameters *value,
		  size_t num_actions, struct mlx5dv_dr_action *actions[])
{
	struct mlx5dv_dr_action **sys = NULL;
	struct mlx5dv_dr_rule *r;
	int err;

	if (actions) {
		sys = sv_dr_actions_system(num_actions, actions);
		if (!sys)
			return NULL;
	}
	r = SV_MLX5S_CALL(mlx5dv_dr_rule_create, matcher, value, num_actions,
			  sys);
	err = errno;
	free(sys);
	if (r)
		sv_mlx5s_keep(r);
	errno = err;
	return r;
}

/*
 * The rule's value under its matcher's mask (bytes the value lacks are
 * 0): what two duplicate rules share. NULL with errno ENOMEM.
 */
static uint8_t *sv_dr_rule_match(const struct mlx5dv_dr_matcher *m,
				 const struct mlx5dv_flow_match_parameters *v)
{
	const uint8_t *val = v ? (const uint8_t *)v->match_buf : NULL;
	size_t i, n = v ? v->match_sz : 0;
	uint8_t *out = calloc(1, m->mask_sz + 1);

	if (!out) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < m->mask_sz && i < n; i++)
		out[i] = val[i] & m->mask[i];
	return out;
}

static bool sv_dr_rule_dup(const struct mlx5dv_dr_matcher *m,
			   const uint8_t *match)
{
	const struct mlx5dv_dr_rule *r;

	for (r = m->rules; r; r = r->next)
		if (!memcmp(r->match, match, m->mask_sz))
			return true;
	return false;
}

SV_EXPORT struct mlx5dv_dr_rule *
mlx5dv_dr_rule_create(struct mlx5dv_dr_matcher *matcher,
		      struct mlx5dv_flow_match_parameters *value,
		      size_t num_actions, struct mlx5dv_dr_action *actions[])
{
	struct sv_dv_actions act;
	struct mlx5dv_dr_rule *r;
	size_t i;
	int ret;

	if (sv_mlx5s_object(matcher))
		return sv_dr_rule_system(matcher, value, num_actions, actions);
	if (!matcher) {
		errno = EINVAL;
		return NULL;
	}
	ret = sv_dr_rule_actions(matcher, num_actions, actions, &act);
	if (ret) {
		errno = ret;
		return NULL;
	}
	r = calloc(1, sizeof(*r) + num_actions * sizeof(r->actions[0]));
	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	r->match = sv_dr_rule_match(matcher, value);
	if (!r->match) {
		free(r);
		return NULL;
	}
	if (matcher->tbl->dmn->no_dup_rules &&
	    sv_dr_rule_dup(matcher, r->match)) {
		free(r->match);
		free(r);
		errno = EEXIST;
		return NULL;
	}
	r->flow = sv_dv_flow_create(matcher->fm, value, &act);
	if (!r->flow) {
		free(r->match);
		free(r);
		return NULL;
	}
	r->next = matcher->rules;
	if (r->next)
		r->next->pprev = &r->next;
	r->pprev = &matcher->rules;
	matcher->rules = r;
	r->matcher = matcher;
	r->nactions = num_actions;
	for (i = 0; i < num_actions; i++) {
		r->actions[i] = actions[i];
		actions[i]->users++;
	}
	return r;
}

SV_EXPORT int mlx5dv_dr_rule_destroy(struct mlx5dv_dr_rule *rule)
{
	size_t i;
	int ret;

	SV_MLX5S_GONE(rule, mlx5dv_dr_rule_destroy, rule);

	ret = ibv_destroy_flow(rule->flow);
	if (ret)
		return ret;
	for (i = 0; i < rule->nactions; i++)
		rule->actions[i]->users--;
	*rule->pprev = rule->next;
	if (rule->next)
		rule->next->pprev = rule->pprev;
	free(rule->match);
	free(rule);
	return 0;
}
