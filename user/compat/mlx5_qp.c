// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmlx5.so.1 stand-in: the direct-verbs QP.
 *
 * mlx5dv_create_qp() (Documentation/mlx5dv.rst) checks its arguments as
 * rdma-core's mlx5 provider does (providers/mlx5/verbs.c, create_qp()),
 * then what mlx5_ib checks of the vendor flags in the kernel
 * (drivers/infiniband/hw/mlx5/qp.c, process_vendor_flags()), and creates
 * the QP through the library that made the context
 * (../lib/sv_private.h), with the flags softverbs acts on for the
 * kernel:
 *
 *   TUNNEL_OFFLOADS             SV_CREATE_QP_TUNNEL_OFFLOADS: inner
 *                               checksums of VXLAN and GRE frames
 *   TIR_ALLOW_SELF_LOOPBACK_UC  SV_CREATE_QP_TIR_SELF_LB_UC
 *   TIR_ALLOW_SELF_LOOPBACK_MC  SV_CREATE_QP_TIR_SELF_LB_MC
 *
 * and SV_CREATE_QP_MLX5_TIR on every RAW_PACKET and RSS QP, which then
 * receive what their own context sends as an mlx5 TIR does. The kernel
 * refuses these on other QP types (EINVAL, as mlx5_ib). The others are
 * checked here and change nothing: DISABLE_SCATTER_TO_CQE and
 * ALLOW_SCATTER_TO_CQE (softverbs never scatters to a CQE),
 * PACKET_BASED_CREDIT_MODE (it has no end-to-end credits). DC QPs
 * (DCI and DCT) are built, and of the mlx5 send_ops_flags the mkey ones
 * (MLX5DV_QP_EX_WITH_MR_INTERLEAVED, _MR_LIST, _MKEY_CONFIGURE) on RC
 * QPs.
 */
#include <stdint.h>
#include <infiniband/mlx5dv.h>

#include "sv_compat.h"
#include "mlx5_system.h"
#include "../lib/sv_private.h"

/* What rdma-core 44's libmlx5 knows (MLX5_DV_CREATE_QP_SUP_COMP_MASK) */
#define SV_DV_QP_MASK_KNOWN	(MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS | \
				 MLX5DV_QP_INIT_ATTR_MASK_DC |		\
				 MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS | \
				 MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS)
/* The mlx5 send ops built (../lib/post.c) */
#define SV_DV_SEND_OPS		(MLX5DV_QP_EX_WITH_MR_INTERLEAVED |	\
				 MLX5DV_QP_EX_WITH_MR_LIST |		\
				 MLX5DV_QP_EX_WITH_MKEY_CONFIGURE)
/* (MLX5DV_QP_CREATE_SUP_FLAGS) */
#define SV_DV_QP_FLAGS_KNOWN	(MLX5DV_QP_CREATE_TUNNEL_OFFLOADS |	\
				 MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC | \
				 MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC | \
				 MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE | \
				 MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE |	\
				 MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE | \
				 MLX5DV_QP_CREATE_SIG_PIPELINING)

static struct ibv_qp *sv_dv_fail(int err)
{
	errno = err;
	return NULL;
}

/*
 * The DC part of mlx5's create_qp() and create_dct(): a DCT takes only
 * a PD (comp_mask), DC and create flags (mlx5 comp_mask) and no create
 * flag but the scatter-to-CQE ones' off switch; a DCI's streams within
 * dci_streams_caps. The QP, or NULL with errno; NULL with EAGAIN when
 * the ordinary checks that follow decide (a DCI).
 */
static struct ibv_qp *sv_dv_create_dc(struct ibv_context *context,
				      struct ibv_qp_init_attr_ex *qp_attr,
				      struct mlx5dv_qp_init_attr *dv,
				      uint32_t flags,
				      struct sv_private_qp_opts *o)
{
	const struct mlx5dv_dci_streams *st = &dv->dc_init_attr.dci_streams;

	switch (dv->dc_init_attr.dc_type) {
	case MLX5DV_DCTYPE_DCT:
		if ((qp_attr->comp_mask & ~(uint32_t)IBV_QP_INIT_ATTR_PD) ||
		    (dv->comp_mask & ~(uint64_t)(MLX5DV_QP_INIT_ATTR_MASK_DC |
				MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS)) ||
		    (flags & ~(uint32_t)MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE))
			return sv_dv_fail(EINVAL);
		o->dc_type = SV_QPT_DCT;
		o->dct_key = dv->dc_init_attr.dct_access_key;
		return sv_private_create_qp(context, qp_attr, o);
	case MLX5DV_DCTYPE_DCI:
		o->dc_type = SV_QPT_DCI;
		if (dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS) {
			if (st->log_num_concurent > SV_MAX_DCI_LOG_STREAMS ||
			    st->log_num_errored > SV_MAX_DCI_LOG_ERRORED)
				return sv_dv_fail(EINVAL);
			o->log_streams = st->log_num_concurent;
			o->log_errored = st->log_num_errored;
		}
		return sv_dv_fail(EAGAIN);
	default:
		return sv_dv_fail(EINVAL);
	}
}

SV_EXPORT struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context,
					  struct ibv_qp_init_attr_ex *qp_attr,
					  struct mlx5dv_qp_init_attr *mlx5_qp_attr)
{
	struct sv_private_qp_opts o = {};
	uint32_t flags = 0;
	bool rss, dc;

	SV_MLX5S_CTX(context, mlx5dv_create_qp, context, qp_attr, mlx5_qp_attr);

	if (!sv_private_context_is_ours(context))
		return sv_dv_fail(EOPNOTSUPP);
	if (!qp_attr)
		return sv_dv_fail(EINVAL);
	rss = qp_attr->comp_mask & IBV_QP_INIT_ATTR_IND_TABLE;
	dc = qp_attr->qp_type == IBV_QPT_DRIVER && mlx5_qp_attr &&
	     (mlx5_qp_attr->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DC);

	/* mlx5's create_qp(), in its order */
	if ((qp_attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    ((qp_attr->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) ||
	     (dc && mlx5_qp_attr->dc_init_attr.dc_type == MLX5DV_DCTYPE_DCT)))
		return sv_dv_fail(EINVAL);
	if ((qp_attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    (qp_attr->create_flags & IBV_QP_CREATE_SOURCE_QPN) &&
	    qp_attr->qp_type != IBV_QPT_UD)
		return sv_dv_fail(EINVAL);
	if (mlx5_qp_attr) {
		if (mlx5_qp_attr->comp_mask & ~(uint64_t)SV_DV_QP_MASK_KNOWN)
			return sv_dv_fail(EINVAL);
		if ((mlx5_qp_attr->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DC) &&
		    qp_attr->qp_type != IBV_QPT_DRIVER)
			return sv_dv_fail(EINVAL);
		if (mlx5_qp_attr->comp_mask &
		    MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS)
			flags = mlx5_qp_attr->create_flags;
		if (flags & ~(uint32_t)SV_DV_QP_FLAGS_KNOWN)
			return sv_dv_fail(EINVAL);
		if ((flags & MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE) &&
		    (flags & MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE))
			return sv_dv_fail(EINVAL);
		/* mlx5 needs SQD->RTS for it, which softverbs lacks */
		if (flags & MLX5DV_QP_CREATE_SIG_PIPELINING)
			return sv_dv_fail(EOPNOTSUPP);
		/* A DRIVER QP is DC, never anything else */
		if (qp_attr->qp_type == IBV_QPT_DRIVER && !dc)
			return sv_dv_fail(EINVAL);
		if (dc) {
			struct ibv_qp *qp = sv_dv_create_dc(context, qp_attr,
							    mlx5_qp_attr,
							    flags, &o);

			if (qp || errno != EAGAIN)
				return qp;
		}
		/*
		 * mlx5_qp_fill_wr_pfns(): unknown ops, and those softverbs
		 * lacks (RAW_WQE, MEMCPY), EOPNOTSUPP; the mkey ops on RC
		 * QPs only, as mlx5.
		 */
		if (mlx5_qp_attr->comp_mask &
		    MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS) {
			uint64_t ops = mlx5_qp_attr->send_ops_flags;

			if ((ops & ~(uint64_t)SV_DV_SEND_OPS) ||
			    (ops && qp_attr->qp_type != IBV_QPT_RC))
				return sv_dv_fail(EOPNOTSUPP);
			o.dv_send_ops = ops;
		}
	} else if (qp_attr->qp_type == IBV_QPT_DRIVER) {
		return sv_dv_fail(EINVAL);
	}

	/*
	 * mlx5_ib's process_vendor_flags(): the TIR flags on RAW_PACKET
	 * QPs (RSS ones included) only, packet-based credits on RC only,
	 * scatter to CQE on any QP (it has sctr_data_cqe) but an RSS one
	 * (whose TIR takes nothing else); all else EINVAL. The TIR flags
	 * the kernel checks itself.
	 */
	if ((flags & MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE) &&
	    qp_attr->qp_type != IBV_QPT_RC)
		return sv_dv_fail(EINVAL);
	if ((flags & MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE) && rss)
		return sv_dv_fail(EINVAL);
	if (flags & MLX5DV_QP_CREATE_TUNNEL_OFFLOADS)
		o.sv_flags |= SV_CREATE_QP_TUNNEL_OFFLOADS;
	if (flags & MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC)
		o.sv_flags |= SV_CREATE_QP_TIR_SELF_LB_UC;
	if (flags & MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC)
		o.sv_flags |= SV_CREATE_QP_TIR_SELF_LB_MC;
	/* Every RAW_PACKET QP mlx5 makes receives through a TIR */
	if (qp_attr->qp_type == IBV_QPT_RAW_PACKET || rss)
		o.sv_flags |= SV_CREATE_QP_MLX5_TIR;
	return sv_private_create_qp(context, qp_attr, &o);
}

/*
 * mlx5dv_qp_ex_from_ibv_qp_ex(): the builders of wr_set_dc_addr*() live
 * with the QP in the library that made it (../lib/post.c).
 */
SV_EXPORT struct mlx5dv_qp_ex *
mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{
	struct mlx5dv_qp_ex *dv;

	/* Kept: mlx5dv_qp_cancel_posted_send_wrs() takes it (mlx5.c). */
	SV_MLX5S_NEW(qp && sv_mlx5s_context(qp->qp_base.context),
		     mlx5dv_qp_ex_from_ibv_qp_ex, qp);
	dv = qp ? sv_private_qp_dv(qp) : NULL;
	if (!dv)
		errno = EOPNOTSUPP;
	return dv;
}

SV_EXPORT int mlx5dv_dci_stream_id_reset(struct ibv_qp *qp, uint16_t stream_id)
{
	struct sv_reset_dci_stream r = {
		.size = sizeof(r), .handle = qp->handle, .stream = stream_id,
	};

	SV_MLX5S_CTX(sv_ctx_of(qp), mlx5dv_dci_stream_id_reset, qp, stream_id);

	if (!sv_private_context_is_ours(qp->context))
		return EOPNOTSUPP;
	return sv_private_cmd(qp->context, SV_IOC_RESET_DCI_STREAM, &r);
}

