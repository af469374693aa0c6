// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmlx5.so.1 stand-in: indirect memory keys, mlx5dv_create_mkey() and
 * mlx5dv_destroy_mkey() (Documentation/mlx5dv.rst). The key lives in the
 * library that made the PD's context (../lib/mkey.c) and in the kernel
 * (kernel/mr/mkey.c); mlx5dv_wr_mr_interleaved() and mlx5dv_wr_mr_list() on
 * an RC QP created with those send ops lay it out.
 */
#include <stdint.h>
#include <infiniband/mlx5dv.h>

#include "sv_compat.h"
#include "mlx5_system.h"
#include "../lib/sv_private.h"

/*
 * As mlx5's: no flag, or one softverbs lacks (BLOCK_SIGNATURE, CRYPTO,
 * UPDATE_TAG, REMOTE_INVALIDATE), EOPNOTSUPP; max_entries is rounded up
 * to a multiple of 4 and written back.
 */
SV_EXPORT struct mlx5dv_mkey *
mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *mkey_init_attr)
{
	struct ibv_pd *pd = mkey_init_attr ? mkey_init_attr->pd : NULL;

	SV_MLX5S_NEW(sv_mlx5s_context(sv_ctx_of(pd)), mlx5dv_create_mkey,
		     mkey_init_attr);

	if (!pd || !sv_private_context_is_ours(pd->context) ||
	    mkey_init_attr->create_flags != MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return sv_private_create_mkey(pd, &mkey_init_attr->max_entries);
}

SV_EXPORT int mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey)
{
	SV_MLX5S_GONE(mkey, mlx5dv_destroy_mkey, mkey);
	return sv_private_destroy_mkey(mkey);
}
