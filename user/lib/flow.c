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
#include <stdlib.h>

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

static struct ibv_flow *sv_create_flow(struct ibv_qp *qp,
				       struct ibv_flow_attr *attr)
{
	struct sv_create_flow c = { .size = sizeof(c) };
	struct ibv_flow *flow;
	void *copy;
	int ret;

	if (!qp || !attr) {
		errno = EINVAL;
		return NULL;
	}
	flow = calloc(1, sizeof(*flow));
	if (!flow) {
		errno = ENOMEM;
		return NULL;
	}
	/* ACTION_COUNT specs carry a pointer: the kernel wants the handle. */
	ret = sv_flow_attr_counters(qp->context, attr, &copy);
	if (ret) {
		free(flow);
		errno = ret;
		return NULL;
	}
	c.qp_handle = qp->handle;
	c.attr = (uintptr_t)(copy ? copy : attr);
	c.attr_len = attr->size;
	ret = sv_cmd(qp->context, SV_IOC_CREATE_FLOW, &c);
	free(copy);
	if (ret) {
		free(flow);
		errno = ret;
		return NULL;
	}
	flow->context = qp->context;
	flow->handle = c.handle;
	return flow;
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

static int sv_flow_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.ibv_create_flow = sv_create_flow;
	ctx->vctx.ibv_destroy_flow = sv_destroy_flow;
	return 0;
}
SV_CTX_PROVIDER(flow, sv_flow_ctx_init, NULL);
