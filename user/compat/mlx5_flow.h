/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libmlx5.so.1 stand-in: what mlx5_flow.c (flow matchers and flows) gives
 * mlx5_dr.c (the DR API builds its matchers and rules from them).
 */
#ifndef SV_MLX5_FLOW_H
#define SV_MLX5_FLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/mlx5dv.h>

#include "softverbs-abi.h"

/* What a flow does with a frame it takes. */
struct sv_dv_actions {
	struct ibv_qp *qp;
	struct ibv_counters *counters;
	uint32_t tag;
	uint32_t table;		/* a steering table's handle: go on there */
	uint32_t anchor;	/* an anchor's handle: back at its priority */
	uint32_t mirror;	/* a MIRROR steering action's handle */
	/* Steering actions that rewrite the frame, in order; 0: pop VLAN */
	uint32_t rw[SV_FLOW_MAX_REWRITE];
	unsigned int nrw;
	bool have_tag, drop, miss;
};

struct mlx5dv_flow_matcher *
sv_dv_matcher_create(struct ibv_context *context, uint16_t priority,
		     uint8_t criteria, struct mlx5dv_flow_match_parameters *mask,
		     bool egress, uint32_t table);

struct ibv_flow *sv_dv_flow_create(struct mlx5dv_flow_matcher *matcher,
				   struct mlx5dv_flow_match_parameters *match_value,
				   const struct sv_dv_actions *a);

#endif /* SV_MLX5_FLOW_H */
