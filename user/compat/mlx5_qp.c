// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmlx5.so.1 stand-in: the direct-verbs QP and the steering anchors.
 * softverbs is to implement these for its own devices (ARCHITECTURE.md:
 * "the mlx5 direct-verbs extensions in the seeds"); until then they fail
 * with EOPNOTSUPP like the rest of mlx5.c.
 */
#include <stdint.h>
#include <infiniband/mlx5dv.h>

#include "sv_compat.h"

SV_EXPORT struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context,
					  struct ibv_qp_init_attr_ex *qp_attr,
					  struct mlx5dv_qp_init_attr *mlx5_qp_attr)
{
	SV_NOTSUP_NULL;
}

SV_EXPORT struct mlx5dv_steering_anchor *
mlx5dv_create_steering_anchor(struct ibv_context *context,
			      struct mlx5dv_steering_anchor_attr *attr)
{
	SV_NOTSUP_NULL;
}

SV_EXPORT int mlx5dv_destroy_steering_anchor(struct mlx5dv_steering_anchor *sa)
{
	return EOPNOTSUPP;
}
