// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs flow counters: ibv_create_counters, ibv_destroy_counters,
 * ibv_attach_counters_point_flow and ibv_read_counters (the verbs_context
 * ops verbs.h's inlines call), over kernel/steer/counters.c. As mlx5:
 * attach is static only (flow NULL, before a flow is bound), and a
 * counters object is bound by an IBV_FLOW_SPEC_ACTION_COUNT spec in
 * ibv_create_flow(); sv_flow_attr_counters() puts the object's kernel
 * handle where the application's spec has its pointer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sv_verbs.h"

_Static_assert(sizeof(struct ibv_flow_spec_counter_action) ==
	       SV_FLOW_SPEC_ACTION_COUNT_SIZE &&
	       sizeof(struct sv_flow_spec_action_count) ==
	       SV_FLOW_SPEC_ACTION_COUNT_SIZE, "count spec");
_Static_assert(offsetof(struct ibv_flow_spec_counter_action, counters) ==
	       offsetof(struct sv_flow_spec_action_count, counters_handle),
	       "count spec handle");
_Static_assert(IBV_COUNTER_PACKETS == SV_COUNTER_PACKETS &&
	       IBV_COUNTER_BYTES == SV_COUNTER_BYTES &&
	       IBV_READ_COUNTERS_ATTR_PREFER_CACHED ==
	       SV_READ_COUNTERS_PREFER_CACHED, "counter enums");

struct sv_counters {
	struct ibv_counters ibc;	/* first */
	uint32_t handle;
};

static struct sv_counters *to_svcounters(struct ibv_counters *c)
{
	return container_of(c, struct sv_counters, ibc);
}

static struct ibv_counters *
sv_create_counters(struct ibv_context *ctx, struct ibv_counters_init_attr *a)
{
	struct sv_create_counters c = { .size = sizeof(c) };
	struct sv_counters *cnt;
	int ret;

	if (!a) {
		errno = EINVAL;
		return NULL;
	}
	/* No comp_mask bit is defined: as mlx5, EOPNOTSUPP. */
	if (a->comp_mask) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cnt = calloc(1, sizeof(*cnt));
	if (!cnt) {
		errno = ENOMEM;
		return NULL;
	}
	ret = sv_cmd(ctx, SV_IOC_CREATE_COUNTERS, &c);
	if (ret) {
		free(cnt);
		errno = ret;
		return NULL;
	}
	cnt->ibc.context = ctx;
	cnt->handle = c.handle;
	return &cnt->ibc;
}

static int sv_destroy_counters(struct ibv_counters *counters)
{
	struct sv_counters *cnt = to_svcounters(counters);
	struct sv_destroy_counters d = {
		.size = sizeof(d), .handle = cnt->handle,
	};
	int ret;

	/* EBUSY while a flow is bound to it. */
	ret = sv_cmd(counters->context, SV_IOC_DESTROY_COUNTERS, &d);
	if (ret)
		return ret;
	free(cnt);
	return 0;
}

static int sv_attach_counters_point_flow(struct ibv_counters *counters,
					 struct ibv_counter_attach_attr *a,
					 struct ibv_flow *flow)
{
	struct sv_attach_counters c = { .size = sizeof(c) };

	if (!counters || !a)
		return EINVAL;
	/* Static mode only, as mlx5: the object binds at ibv_create_flow. */
	if (flow)
		return ENOTSUP;
	if (a->comp_mask)
		return EOPNOTSUPP;
	c.handle = to_svcounters(counters)->handle;
	c.desc = (uint32_t)a->counter_desc;	/* other values: ENOTSUP */
	c.index = a->index;
	return sv_cmd(counters->context, SV_IOC_ATTACH_COUNTERS, &c);
}

static int sv_read_counters(struct ibv_counters *counters, uint64_t *values,
			    uint32_t ncounters, uint32_t flags)
{
	struct sv_read_counters r = { .size = sizeof(r) };

	if (!counters)
		return EINVAL;
	r.handle = to_svcounters(counters)->handle;
	r.values = (uintptr_t)values;
	r.ncounters = ncounters;
	/*
	 * PREFER_CACHED is accepted: softverbs' counters are exact software
	 * counts, so a cached read and a fresh one return the live values.
	 */
	r.flags = flags;
	return sv_cmd(counters->context, SV_IOC_READ_COUNTERS, &r);
}

/*
 * In @buf, a copy of an ibv_flow_attr and its specs whose sizes flow.c
 * has walked (@len bytes in all), put each IBV_FLOW_SPEC_ACTION_COUNT
 * spec's object's kernel handle where the application's spec has its
 * pointer (the layout of struct sv_flow_spec_action_count). A malformed
 * spec is left to the kernel to refuse. EINVAL: a NULL counters pointer
 * or one of another context.
 */
int sv_flow_attr_counters(struct ibv_context *ctx, void *buf, size_t len)
{
	const size_t csz = sizeof(struct ibv_flow_spec_counter_action);
	const struct ibv_flow_attr *attr = buf;
	size_t off = sizeof(*attr);
	uint8_t *base = buf;
	unsigned int i;

	for (i = 0; i < attr->num_of_specs; i++) {
		struct ibv_flow_spec_counter_action s;
		struct sv_flow_spec_action_count k;
		uint32_t type;
		uint16_t size;

		if (off + 8 > len)
			break;
		memcpy(&type, base + off, sizeof(type));
		memcpy(&size, base + off + 4, sizeof(size));
		if (!size || off + size > len)
			break;
		if (type == IBV_FLOW_SPEC_ACTION_COUNT && size == csz) {
			memcpy(&s, base + off, csz);
			if (!s.counters || s.counters->context != ctx)
				return EINVAL;
			memcpy(&k, base + off, sizeof(k));
			k.counters_handle = to_svcounters(s.counters)->handle;
			k.reserved = 0;
			memcpy(base + off, &k, sizeof(k));
		}
		off += size;
	}
	return 0;
}

static int sv_counters_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.create_counters = sv_create_counters;
	ctx->vctx.destroy_counters = sv_destroy_counters;
	ctx->vctx.attach_counters_point_flow = sv_attach_counters_point_flow;
	ctx->vctx.read_counters = sv_read_counters;
	return 0;
}
SV_CTX_PROVIDER(counters, sv_counters_ctx_init, NULL);
