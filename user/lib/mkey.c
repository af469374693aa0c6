// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Indirect memory keys for libmlx5's mlx5dv_create_mkey() and
 * mlx5dv_destroy_mkey() (sv_private.h). The key is the kernel's
 * (kernel/mr/mkey.c): free until a UMR WQE built by mlx5dv_wr_mr_interleaved()
 * or mlx5dv_wr_mr_list() (post.c) lays it out over other MRs of its PD,
 * zero-based; IBV_WR_LOCAL_INV frees it again.
 */
#include <stdlib.h>

#include "sv_verbs.h"
#include "sv_private.h"

SV_EXPORT struct mlx5dv_mkey *sv_private_create_mkey(struct ibv_pd *pd,
						     uint16_t *max_entries)
{
	struct sv_create_mkey cmd = { .size = sizeof(cmd) };
	struct sv_mkey *mk;
	int ret;

	if (!pd || !max_entries || !sv_private_context_is_ours(pd->context)) {
		errno = EINVAL;
		return NULL;
	}
	/* The rounded-up count must fit the caller's 16 bits. */
	if (*max_entries > SV_MAX_MKEY_ENTRIES) {
		errno = EINVAL;
		return NULL;
	}
	mk = calloc(1, sizeof(*mk));
	if (!mk) {
		errno = ENOMEM;
		return NULL;
	}
	cmd.pd_handle = pd->handle;
	cmd.max_entries = *max_entries;
	ret = sv_cmd(pd->context, SV_IOC_CREATE_MKEY, &cmd);
	if (ret) {
		free(mk);
		errno = ret;
		return NULL;
	}
	mk->ctx = pd->context;
	mk->handle = cmd.mkey_handle;
	mk->max_entries = cmd.max_entries;
	mk->dv.lkey = cmd.key;
	mk->dv.rkey = cmd.key;
	*max_entries = cmd.max_entries;
	return &mk->dv;
}

SV_EXPORT int sv_private_destroy_mkey(struct mlx5dv_mkey *mkey)
{
	struct sv_mkey *mk = container_of(mkey, struct sv_mkey, dv);
	struct sv_destroy_mkey d = { .size = sizeof(d),
				     .mkey_handle = mk->handle };
	int ret;

	ret = sv_cmd(mk->ctx, SV_IOC_DESTROY_MKEY, &d);
	if (ret)
		return ret;
	free(mk);
	return 0;
}
