// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs flow steering: ibv_create_flow and ibv_destroy_flow (the
 * verbs_context ops verbs.h's inlines call). The application's struct
 * ibv_flow_attr and its specs go to the kernel as they are: the kernel
 * (kernel/steer/flow.c) parses verbs.h's layout, mirrored in
 * uapi/softverbs-abi.h; the asserts below keep the two in step. An
 * ACTION_COUNT spec's counters pointer becomes the object's handle first
 * (counters.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sv_private.h"
#include "sv_verbs.h"

_Static_assert(sizeof(struct ibv_flow_attr) == SV_FLOW_ATTR_SIZE, "attr");
_Static_assert(sizeof(struct ibv_flow_spec_eth) == SV_FLOW_SPEC_ETH_SIZE,
	       "eth");
_Static_assert(sizeof(struct ibv_flow_spec_ipv4) == SV_FLOW_SPEC_IPV4_SIZE,
	       "ipv4");
_Static_assert(sizeof(struct ibv_flow_spec_ipv4_ext) ==
	       SV_FLOW_SPEC_IPV4_EXT_SIZE, "ipv4_ext");
_Static_assert(sizeof(struct ibv_flow_spec_ipv6) == SV_FLOW_SPEC_IPV6_SIZE,
	       "ipv6");
_Static_assert(sizeof(struct ibv_flow_spec_tcp_udp) ==
	       SV_FLOW_SPEC_TCP_UDP_SIZE, "tcp_udp");
_Static_assert(sizeof(struct ibv_flow_spec_tunnel) ==
	       SV_FLOW_SPEC_TUNNEL_SIZE, "tunnel");
_Static_assert(sizeof(struct ibv_flow_spec_gre) == SV_FLOW_SPEC_GRE_SIZE,
	       "gre");
_Static_assert(sizeof(struct ibv_flow_spec_mpls) == SV_FLOW_SPEC_MPLS_SIZE,
	       "mpls");
_Static_assert(sizeof(struct ibv_flow_spec_esp) == SV_FLOW_SPEC_ESP_SIZE,
	       "esp");
_Static_assert(sizeof(struct ibv_flow_spec_action_tag) ==
	       SV_FLOW_SPEC_ACTION_TAG_SIZE, "tag");
_Static_assert(sizeof(struct ibv_flow_spec_action_drop) ==
	       SV_FLOW_SPEC_ACTION_DROP_SIZE, "drop");
_Static_assert(sizeof(struct sv_flow_spec_eth) == SV_FLOW_SPEC_ETH_SIZE &&
	       sizeof(struct sv_flow_spec_ipv4) == SV_FLOW_SPEC_IPV4_SIZE &&
	       sizeof(struct sv_flow_spec_ipv4_ext) ==
	       SV_FLOW_SPEC_IPV4_EXT_SIZE &&
	       sizeof(struct sv_flow_spec_ipv6) == SV_FLOW_SPEC_IPV6_SIZE &&
	       sizeof(struct sv_flow_spec_tcp_udp) ==
	       SV_FLOW_SPEC_TCP_UDP_SIZE &&
	       sizeof(struct sv_flow_spec_tunnel) == SV_FLOW_SPEC_TUNNEL_SIZE &&
	       sizeof(struct sv_flow_spec_gre) == SV_FLOW_SPEC_GRE_SIZE &&
	       sizeof(struct sv_flow_spec_mpls) == SV_FLOW_SPEC_MPLS_SIZE &&
	       sizeof(struct sv_flow_spec_esp) == SV_FLOW_SPEC_ESP_SIZE &&
	       sizeof(struct sv_flow_spec_action_tag) ==
	       SV_FLOW_SPEC_ACTION_TAG_SIZE &&
	       sizeof(struct sv_flow_attr) == SV_FLOW_ATTR_SIZE,
	       "uapi mirror");
_Static_assert(offsetof(struct ibv_flow_spec_eth, mask) ==
	       offsetof(struct sv_flow_spec_eth, mask) &&
	       offsetof(struct ibv_flow_spec_ipv6, mask) ==
	       offsetof(struct sv_flow_spec_ipv6, mask) &&
	       offsetof(struct ibv_flow_spec_tcp_udp, mask) ==
	       offsetof(struct sv_flow_spec_tcp_udp, mask) &&
	       offsetof(struct ibv_flow_spec_action_tag, tag_id) ==
	       offsetof(struct sv_flow_spec_action_tag, tag_id) &&
	       offsetof(struct ibv_flow_attr, flags) ==
	       offsetof(struct sv_flow_attr, flags),
	       "uapi mirror offsets");

/*
 * The bytes of @attr and its specs, walked as libibverbs walks them:
 * num_of_specs specs, each as long as its header's size says. The attr's
 * own size field is not read (libibverbs ignores it, and programs such
 * as pyverbs leave it at sizeof(struct ibv_flow_attr)). 0 for a spec
 * shorter than its header.
 */
static size_t sv_flow_attr_len(const struct ibv_flow_attr *attr)
{
	const uint8_t *p = (const uint8_t *)(attr + 1);
	size_t len = sizeof(*attr);
	unsigned int i;
	uint16_t size;

	for (i = 0; i < attr->num_of_specs; i++) {
		memcpy(&size, p + offsetof(struct ibv_flow_spec_eth, size),
		       sizeof(size));
		if (size < sizeof(struct ibv_flow_spec_action_drop))
			return 0;
		len += size;
		p += size;
	}
	return len;
}

/*
 * SV_IOC_CREATE_FLOW for @qp_handle (or SV_FLOW_NO_QP), on a copy of the
 * attr and its specs whose size field says their length, with any
 * ACTION_COUNT spec's pointer made the object's handle (counters.c).
 */
static struct ibv_flow *sv_flow_create(struct ibv_context *ctx,
				       uint32_t qp_handle,
				       struct ibv_flow_attr *attr)
{
	struct sv_create_flow c = { .size = sizeof(c) };
	struct ibv_flow_attr *copy;
	struct ibv_flow *flow;
	size_t len;
	int ret;

	len = sv_flow_attr_len(attr);
	/* The kernel's attr_len and the attr's size are 16 bits wide. */
	if (!len || len > UINT16_MAX) {
		errno = EINVAL;
		return NULL;
	}
	flow = calloc(1, sizeof(*flow));
	copy = malloc(len);
	if (!flow || !copy) {
		free(flow);
		free(copy);
		errno = ENOMEM;
		return NULL;
	}
	memcpy(copy, attr, len);
	copy->size = len;
	ret = sv_flow_attr_counters(ctx, copy, len);
	if (!ret) {
		c.qp_handle = qp_handle;
		c.attr = (uintptr_t)copy;
		c.attr_len = len;
		ret = sv_cmd(ctx, SV_IOC_CREATE_FLOW, &c);
	}
	free(copy);
	if (ret) {
		free(flow);
		errno = ret;
		return NULL;
	}
	flow->context = ctx;
	flow->handle = c.handle;
	return flow;
}

static struct ibv_flow *sv_create_flow(struct ibv_qp *qp,
				       struct ibv_flow_attr *attr)
{
	if (!qp || !attr) {
		errno = EINVAL;
		return NULL;
	}
	return sv_flow_create(qp->context, qp->handle, attr);
}

/*
 * For libmlx5's mlx5dv_create_flow() (sv_private.h): a flow whose attr
 * may carry the private SV_FLOW_SPEC_MATCHER and _DEFAULT_MISS specs,
 * with no QP when @qp is NULL. ibv_destroy_flow() destroys it.
 */
SV_EXPORT struct ibv_flow *sv_private_create_flow(struct ibv_context *ctx,
						  struct ibv_qp *qp,
						  struct ibv_flow_attr *attr)
{
	if (!ctx || !attr || !sv_private_context_is_ours(ctx) ||
	    (qp && qp->context != ctx)) {
		errno = EINVAL;
		return NULL;
	}
	return sv_flow_create(ctx, qp ? qp->handle : SV_FLOW_NO_QP, attr);
}

/* For libmlx5: one softverbs ioctl on the context's file; 0 or errno. */
SV_EXPORT int sv_private_cmd(struct ibv_context *ctx, unsigned long req,
			     void *arg)
{
	if (!ctx || !sv_private_context_is_ours(ctx))
		return EINVAL;
	return sv_cmd(ctx, req, arg);
}

static int sv_destroy_flow(struct ibv_flow *flow)
{
	struct sv_destroy_flow d = { .size = sizeof(d), .handle = flow->handle };
	int ret;

	ret = sv_cmd(flow->context, SV_IOC_DESTROY_FLOW, &d);
	if (ret)
		return ret;
	free(flow);
	return 0;
}

/* ---- flow actions that rewrite frames (libmlx5's verbs-level ones) ---- */

struct sv_flow_action {
	struct ibv_flow_action fa;	/* handed out */
	uint32_t handle;		/* the kernel's steering action */
	uint32_t ktype;			/* SV_STEER_ACT_* */
	bool egress;
};

SV_EXPORT struct ibv_flow_action *
sv_private_create_flow_action(struct ibv_context *ctx, uint32_t ktype,
			      bool egress, const void *data, size_t len)
{
	struct sv_create_steer_action c = {
		.size = sizeof(c), .type = ktype,
		.flags = egress ? SV_FLOW_ATTR_FLAGS_EGRESS : 0,
		.data = (uintptr_t)data, .data_len = len,
	};
	struct sv_flow_action *a;
	int ret;

	if (!ctx || !sv_private_context_is_ours(ctx) || len > UINT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	ret = sv_cmd(ctx, SV_IOC_CREATE_STEER_ACTION, &c);
	if (ret) {
		free(a);
		errno = ret;
		return NULL;
	}
	a->fa.context = ctx;
	a->handle = c.handle;
	a->ktype = ktype;
	a->egress = egress;
	return &a->fa;
}

/* Every flow action of a softverbs context is one of these. */
SV_EXPORT int sv_private_flow_action_info(struct ibv_flow_action *fa,
					  uint32_t *handle, uint32_t *ktype,
					  bool *egress)
{
	struct sv_flow_action *a;

	if (!fa || !sv_private_context_is_ours(fa->context))
		return EINVAL;
	a = container_of(fa, struct sv_flow_action, fa);
	*handle = a->handle;
	*ktype = a->ktype;
	*egress = a->egress;
	return 0;
}

/* ibv_destroy_flow_action(): EBUSY while a flow uses it (the kernel). */
static int sv_destroy_flow_action(struct ibv_flow_action *fa)
{
	struct sv_flow_action *a = container_of(fa, struct sv_flow_action, fa);
	struct sv_destroy_steer_obj d = { .size = sizeof(d),
					  .handle = a->handle };
	int ret;

	ret = sv_cmd(fa->context, SV_IOC_DESTROY_STEER_ACTION, &d);
	if (ret)
		return ret;
	free(a);
	return 0;
}

static int sv_flow_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.ibv_create_flow = sv_create_flow;
	ctx->vctx.ibv_destroy_flow = sv_destroy_flow;
	ctx->vctx.destroy_flow_action = sv_destroy_flow_action;
	return 0;
}
SV_CTX_PROVIDER(flow, sv_flow_ctx_init, NULL);
