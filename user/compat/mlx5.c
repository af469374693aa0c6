// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmlx5.so.1 stand-in: every mlx5dv_* symbol of rdma-core's libmlx5
 * (version nodes MLX5_1.0 .. MLX5_1.24, see libmlx5.map).
 *
 * A softverbs device is served as the mlx5 provider serves its own
 * (Documentation/mlx5dv.rst): mlx5dv_is_supported() is true for it,
 * mlx5dv_open_device() opens it, mlx5dv_query_device() reports what
 * softverbs does, and mlx5dv_create_qp() (mlx5_qp.c) takes the create
 * flags it implements. The library that made a context says whether it
 * is a softverbs one (../lib/sv_private.h). Calls that hand out mlx5
 * hardware layouts (mlx5dv_init_obj, DevX, UARs, VARs, device memory,
 * the clock page) fail with EOPNOTSUPP in their documented convention
 * (sv_compat.h), as does everything not built yet. Every call on any
 * other device, or on an object rdma-core's libmlx5 made, is that
 * library's (the SV_MLX5S_* line at the top of each, mlx5_system.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "sv_compat.h"
#include "mlx5_system.h"
#include "../lib/sv_private.h"

SV_EXPORT bool mlx5dv_is_supported(struct ibv_device *device)
{
	SV_MLX5S_IF(sv_mlx5s_device(device), mlx5dv_is_supported, device);
	return sv_private_device_is_ours(device);
}

/*
 * What mlx5_alloc_context() checks of the attributes: no comp_mask bit
 * (rdma-core 44 knows none), no flag but DEVX (EINVAL). A DEVX context
 * opens: programs written for mlx5 ask for one before they use the DR
 * API or mlx5dv_create_mkey(), which need it there. softverbs has no
 * DevX objects, so every mlx5dv_devx_* call on it is EOPNOTSUPP.
 */
SV_EXPORT struct ibv_context *
mlx5dv_open_device(struct ibv_device *device, struct mlx5dv_context_attr *attr)
{
	SV_MLX5S_IF(sv_mlx5s_device(device), mlx5dv_open_device, device, attr);

	if (!sv_private_device_is_ours(device)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr && (attr->comp_mask ||
		     (attr->flags & ~(uint64_t)MLX5DV_CONTEXT_FLAGS_DEVX))) {
		errno = EINVAL;
		return NULL;
	}
	return ibv_open_device(device);
}

/* The comp_mask bits mlx5dv_query_device() answers whenever asked. */
#define SV_DV_CTX_ALWAYS (MLX5DV_CONTEXT_MASK_CQE_COMPRESION |		\
			  MLX5DV_CONTEXT_MASK_SWP |			\
			  MLX5DV_CONTEXT_MASK_STRIDING_RQ |		\
			  MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS |		\
			  MLX5DV_CONTEXT_MASK_DYN_BFREGS |		\
			  MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS |	\
			  MLX5DV_CONTEXT_MASK_DC_ODP_CAPS |		\
			  MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD |	\
			  MLX5DV_CONTEXT_MASK_DCI_STREAMS |		\
			  MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH |	\
			  MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD)

/*
 * As mlx5's: flags always; of the comp_mask bits the caller set, those
 * mlx5 always answers are answered (a capability softverbs lacks is 0),
 * the conditional ones (CLOCK_INFO_UPDATE, HCA_CORE_CLOCK: a mapped
 * clock page and register; NUM_LAG_PORTS: a LAG) are not, nor are bits
 * this header does not know; comp_mask says which were.
 *
 * softverbs' answers: PACKET_BASED_CREDIT_MODE (mlx5dv_create_qp()
 * takes the flag on RC QPs; it changes nothing, there being no credits)
 * and, on a device bound to a netdev, the inner checksums of VXLAN and
 * GRE as tunnel offloads. No CQE compression, software parsing, striding
 * RQs, dynamic blue flame registers, ESP flow actions, DC ODP, signature,
 * DMA memcpy or crypto offloads.
 */
SV_EXPORT int mlx5dv_query_device(struct ibv_context *ctx_in,
				  struct mlx5dv_context *attrs_out)
{
	struct ibv_device_attr_ex ex;
	uint64_t asked;
	int ret;

	SV_MLX5S_CTX(ctx_in, mlx5dv_query_device, ctx_in, attrs_out);

	if (!sv_private_context_is_ours(ctx_in))
		return EOPNOTSUPP;
	ret = ibv_query_device_ex(ctx_in, NULL, &ex);
	if (ret)
		return ret;
	asked = attrs_out->comp_mask;
	attrs_out->version = 0;
	attrs_out->flags = MLX5DV_CONTEXT_FLAGS_PACKET_BASED_CREDIT_MODE;
	attrs_out->comp_mask = asked & SV_DV_CTX_ALWAYS;
	if (asked & MLX5DV_CONTEXT_MASK_CQE_COMPRESION)
		memset(&attrs_out->cqe_comp_caps, 0,
		       sizeof(attrs_out->cqe_comp_caps));
	if (asked & MLX5DV_CONTEXT_MASK_SWP)
		memset(&attrs_out->sw_parsing_caps, 0,
		       sizeof(attrs_out->sw_parsing_caps));
	if (asked & MLX5DV_CONTEXT_MASK_STRIDING_RQ)
		memset(&attrs_out->striding_rq_caps, 0,
		       sizeof(attrs_out->striding_rq_caps));
	/* RAW_PACKET QPs are for devices bound to a netdev. */
	if (asked & MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS)
		attrs_out->tunnel_offloads_caps =
			ex.raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM ?
			MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_VXLAN |
			MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_GRE : 0;
	if (asked & MLX5DV_CONTEXT_MASK_DYN_BFREGS)
		attrs_out->max_dynamic_bfregs = 0;
	if (asked & MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS)
		attrs_out->flow_action_flags = 0;
	/* ODP MRs work with DC as with RC: the same data path (dc_test). */
	if (asked & MLX5DV_CONTEXT_MASK_DC_ODP_CAPS)
		attrs_out->dc_odp_caps = ex.odp_caps.general_caps &
			IBV_ODP_SUPPORT ?
			ex.odp_caps.per_transport_caps.rc_odp_caps : 0;
	if (asked & MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD)
		memset(&attrs_out->sig_caps, 0, sizeof(attrs_out->sig_caps));
	if (asked & MLX5DV_CONTEXT_MASK_DCI_STREAMS) {
		attrs_out->dci_streams_caps.max_log_num_concurent =
			SV_MAX_DCI_LOG_STREAMS;
		attrs_out->dci_streams_caps.max_log_num_errored =
			SV_MAX_DCI_LOG_ERRORED;
	}
	if (asked & MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH)
		attrs_out->max_wr_memcpy_length = 0;
	if (asked & MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD)
		memset(&attrs_out->crypto_caps, 0,
		       sizeof(attrs_out->crypto_caps));
	return 0;
}

/*
 * mlx5dv_init_obj has two versions: MLX5_1.0 (binaries built before the
 * object types of 1.2 existed) and the default MLX5_1.2. No softverbs
 * object has an mlx5 layout to describe, whatever the version.
 */
int sv_mlx5dv_init_obj_1_0(struct mlx5dv_obj *obj, uint64_t obj_type);
int sv_mlx5dv_init_obj_1_2(struct mlx5dv_obj *obj, uint64_t obj_type);
__asm__(".symver sv_mlx5dv_init_obj_1_0, mlx5dv_init_obj@MLX5_1.0");
__asm__(".symver sv_mlx5dv_init_obj_1_2, mlx5dv_init_obj@@MLX5_1.2");

/* The context of the first object @type names (as mlx5's), or NULL. */
static struct ibv_context *sv_init_obj_context(struct mlx5dv_obj *obj,
					       uint64_t type)
{
	if (!obj)
		return NULL;
	if (type & MLX5DV_OBJ_QP)
		return sv_ctx_of(obj->qp.in);
	if (type & MLX5DV_OBJ_CQ)
		return sv_ctx_of(obj->cq.in);
	if (type & MLX5DV_OBJ_SRQ)
		return sv_ctx_of(obj->srq.in);
	if (type & MLX5DV_OBJ_RWQ)
		return sv_ctx_of(obj->rwq.in);
	if (type & MLX5DV_OBJ_DM)
		return sv_ctx_of(obj->dm.in);
	if (type & MLX5DV_OBJ_AH)
		return sv_ctx_of(obj->ah.in);
	if (type & MLX5DV_OBJ_PD)
		return sv_ctx_of(obj->pd.in);
	return NULL;
}

/* The system's objects: its version of the call, for their layouts. */
static int sv_init_obj(struct mlx5dv_obj *obj, uint64_t obj_type,
		       const char *version)
{
	int (*fn)(struct mlx5dv_obj *obj, uint64_t obj_type);
	int ret;

	if (!sv_mlx5s_context(sv_init_obj_context(obj, obj_type)))
		return EOPNOTSUPP;
	fn = (__typeof__(fn))sv_mlx5s_sym("mlx5dv_init_obj", version);
	ret = fn(obj, obj_type);
	sv_mlx5s_errno();
	return ret;
}

SV_EXPORT int sv_mlx5dv_init_obj_1_0(struct mlx5dv_obj *obj, uint64_t obj_type)
{
	return sv_init_obj(obj, obj_type, "MLX5_1.0");
}

SV_EXPORT int sv_mlx5dv_init_obj_1_2(struct mlx5dv_obj *obj, uint64_t obj_type)
{
	return sv_init_obj(obj, obj_type, "MLX5_1.2");
}

/* ---- everything else, by name ---- */

SV_EXPORT int _mlx5dv_mkey_check(struct mlx5dv_mkey *mkey,
				 struct mlx5dv_mkey_err *err_info,
				 size_t err_info_size)
{
	SV_MLX5S_OBJ(mkey, _mlx5dv_mkey_check, mkey, err_info, err_info_size);
	return EOPNOTSUPP;
}

SV_EXPORT int _mlx5dv_query_port(struct ibv_context *context, uint32_t port_num,
				 struct mlx5dv_port *info, size_t info_len)
{
	SV_MLX5S_CTX(context, _mlx5dv_query_port, context, port_num, info,
		     info_len);
	return EOPNOTSUPP;
}

SV_EXPORT struct ibv_dm *mlx5dv_alloc_dm(struct ibv_context *context,
					 struct ibv_alloc_dm_attr *dm_attr,
					 struct mlx5dv_alloc_dm_attr *mlx5_dm_attr)
{
	SV_MLX5S_CTX(context, mlx5dv_alloc_dm, context, dm_attr, mlx5_dm_attr);
	SV_NOTSUP_NULL;
}

SV_EXPORT struct mlx5dv_var *mlx5dv_alloc_var(struct ibv_context *context,
					      uint32_t flags)
{
	SV_MLX5S_NEW(sv_mlx5s_context(context), mlx5dv_alloc_var, context,
		     flags);
	SV_NOTSUP_NULL;
}

SV_EXPORT struct ibv_cq_ex *mlx5dv_create_cq(struct ibv_context *context,
					     struct ibv_cq_init_attr_ex *cq_attr,
					     struct mlx5dv_cq_init_attr *mlx5_cq_attr)
{
	SV_MLX5S_CTX(context, mlx5dv_create_cq, context, cq_attr, mlx5_cq_attr);
	SV_NOTSUP_NULL;
}

SV_EXPORT struct ibv_flow_action *
mlx5dv_create_flow_action_esp(struct ibv_context *ctx,
			      struct ibv_flow_action_esp_attr *esp,
			      struct mlx5dv_flow_action_esp *mlx5_attr)
{
	SV_MLX5S_CTX(ctx, mlx5dv_create_flow_action_esp, ctx, esp, mlx5_attr);
	SV_NOTSUP_NULL;
}



SV_EXPORT struct ibv_wq *mlx5dv_create_wq(struct ibv_context *context,
					  struct ibv_wq_init_attr *wq_init_attr,
					  struct mlx5dv_wq_init_attr *mlx5_wq_attr)
{
	SV_MLX5S_CTX(context, mlx5dv_create_wq, context, wq_init_attr,
		     mlx5_wq_attr);
	SV_NOTSUP_NULL;
}

SV_EXPORT int mlx5dv_crypto_login(struct ibv_context *context,
				  struct mlx5dv_crypto_login_attr *login_attr)
{
	SV_MLX5S_CTX(context, mlx5dv_crypto_login, context, login_attr);
	return EOPNOTSUPP;
}

SV_EXPORT struct mlx5dv_crypto_login_obj *
mlx5dv_crypto_login_create(struct ibv_context *context,
			   struct mlx5dv_crypto_login_attr_ex *login_attr)
{
	SV_MLX5S_NEW(sv_mlx5s_context(context), mlx5dv_crypto_login_create,
		     context, login_attr);
	SV_NOTSUP_NULL;
}

SV_EXPORT int mlx5dv_crypto_login_destroy(struct mlx5dv_crypto_login_obj *crypto_login)
{
	SV_MLX5S_GONE(crypto_login, mlx5dv_crypto_login_destroy, crypto_login);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_crypto_login_query(struct mlx5dv_crypto_login_obj *crypto_login,
					struct mlx5dv_crypto_login_query_attr *query_attr)
{
	SV_MLX5S_OBJ(crypto_login, mlx5dv_crypto_login_query, crypto_login,
		     query_attr);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_crypto_login_query_state(struct ibv_context *context,
					      enum mlx5dv_crypto_login_state *state)
{
	SV_MLX5S_CTX(context, mlx5dv_crypto_login_query_state, context, state);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_crypto_logout(struct ibv_context *context)
{
	SV_MLX5S_CTX(context, mlx5dv_crypto_logout, context);
	return EOPNOTSUPP;
}

SV_EXPORT struct mlx5dv_dek *mlx5dv_dek_create(struct ibv_context *context,
					       struct mlx5dv_dek_init_attr *init_attr)
{
	SV_MLX5S_NEW(sv_mlx5s_context(context), mlx5dv_dek_create, context,
		     init_attr);
	SV_NOTSUP_NULL;
}

SV_EXPORT int mlx5dv_dek_destroy(struct mlx5dv_dek *dek)
{
	SV_MLX5S_GONE(dek, mlx5dv_dek_destroy, dek);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_dek_query(struct mlx5dv_dek *dek,
			       struct mlx5dv_dek_attr *attr)
{
	SV_MLX5S_OBJ(dek, mlx5dv_dek_query, dek, attr);
	return EOPNOTSUPP;
}


SV_EXPORT struct mlx5dv_devx_msi_vector *
mlx5dv_devx_alloc_msi_vector(struct ibv_context *ibctx)
{
	SV_MLX5S_NEW(sv_mlx5s_context(ibctx), mlx5dv_devx_alloc_msi_vector,
		     ibctx);
	SV_NOTSUP_NULL;
}

SV_EXPORT struct mlx5dv_devx_uar *
mlx5dv_devx_alloc_uar(struct ibv_context *context, uint32_t flags)
{
	SV_MLX5S_NEW(sv_mlx5s_context(context), mlx5dv_devx_alloc_uar, context,
		     flags);
	SV_NOTSUP_NULL;
}

SV_EXPORT int mlx5dv_devx_cq_modify(struct ibv_cq *cq, const void *in,
				    size_t inlen, void *out, size_t outlen)
{
	SV_MLX5S_CTX(sv_ctx_of(cq), mlx5dv_devx_cq_modify, cq, in, inlen, out,
		     outlen);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_cq_query(struct ibv_cq *cq, const void *in,
				   size_t inlen, void *out, size_t outlen)
{
	SV_MLX5S_CTX(sv_ctx_of(cq), mlx5dv_devx_cq_query, cq, in, inlen, out,
		     outlen);
	return EOPNOTSUPP;
}

SV_EXPORT struct mlx5dv_devx_cmd_comp *
mlx5dv_devx_create_cmd_comp(struct ibv_context *context)
{
	SV_MLX5S_NEW(sv_mlx5s_context(context), mlx5dv_devx_create_cmd_comp,
		     context);
	SV_NOTSUP_NULL;
}

SV_EXPORT struct mlx5dv_devx_eq *
mlx5dv_devx_create_eq(struct ibv_context *ibctx, const void *in, size_t inlen,
		      void *out, size_t outlen)
{
	SV_MLX5S_NEW(sv_mlx5s_context(ibctx), mlx5dv_devx_create_eq, ibctx, in,
		     inlen, out, outlen);
	SV_NOTSUP_NULL;
}

SV_EXPORT struct mlx5dv_devx_event_channel *
mlx5dv_devx_create_event_channel(struct ibv_context *context,
				 enum mlx5dv_devx_create_event_channel_flags flags)
{
	SV_MLX5S_NEW(sv_mlx5s_context(context),
		     mlx5dv_devx_create_event_channel, context, flags);
	SV_NOTSUP_NULL;
}

SV_EXPORT void mlx5dv_devx_destroy_cmd_comp(struct mlx5dv_devx_cmd_comp *cmd_comp)
{
	SV_MLX5S_GONE_VOID(cmd_comp, mlx5dv_devx_destroy_cmd_comp, cmd_comp);
}

SV_EXPORT int mlx5dv_devx_destroy_eq(struct mlx5dv_devx_eq *eq)
{
	SV_MLX5S_GONE(eq, mlx5dv_devx_destroy_eq, eq);
	return EOPNOTSUPP;
}

SV_EXPORT void
mlx5dv_devx_destroy_event_channel(struct mlx5dv_devx_event_channel *event_channel)
{
	SV_MLX5S_GONE_VOID(event_channel, mlx5dv_devx_destroy_event_channel,
			   event_channel);
}

SV_EXPORT int mlx5dv_devx_free_msi_vector(struct mlx5dv_devx_msi_vector *msi)
{
	SV_MLX5S_GONE(msi, mlx5dv_devx_free_msi_vector, msi);
	return EOPNOTSUPP;
}

SV_EXPORT void mlx5dv_devx_free_uar(struct mlx5dv_devx_uar *devx_uar)
{
	SV_MLX5S_GONE_VOID(devx_uar, mlx5dv_devx_free_uar, devx_uar);
}

SV_EXPORT int mlx5dv_devx_general_cmd(struct ibv_context *context,
				      const void *in, size_t inlen, void *out,
				      size_t outlen)
{
	SV_MLX5S_CTX(context, mlx5dv_devx_general_cmd, context, in, inlen, out,
		     outlen);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_get_async_cmd_comp(struct mlx5dv_devx_cmd_comp *cmd_comp,
					     struct mlx5dv_devx_async_cmd_hdr *cmd_resp,
					     size_t cmd_resp_len)
{
	SV_MLX5S_OBJ(cmd_comp, mlx5dv_devx_get_async_cmd_comp, cmd_comp,
		     cmd_resp, cmd_resp_len);
	return EOPNOTSUPP;
}

SV_EXPORT ssize_t mlx5dv_devx_get_event(struct mlx5dv_devx_event_channel *event_channel,
					struct mlx5dv_devx_async_event_hdr *event_data,
					size_t event_resp_len)
{
	SV_MLX5S_OBJ(event_channel, mlx5dv_devx_get_event, event_channel,
		     event_data, event_resp_len);
	SV_NOTSUP_NEG1;
}

SV_EXPORT int mlx5dv_devx_ind_tbl_modify(struct ibv_rwq_ind_table *ind_tbl,
					 const void *in, size_t inlen,
					 void *out, size_t outlen)
{
	SV_MLX5S_CTX(sv_ctx_of(ind_tbl), mlx5dv_devx_ind_tbl_modify, ind_tbl,
		     in, inlen, out, outlen);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_ind_tbl_query(struct ibv_rwq_ind_table *ind_tbl,
					const void *in, size_t inlen, void *out,
					size_t outlen)
{
	SV_MLX5S_CTX(sv_ctx_of(ind_tbl), mlx5dv_devx_ind_tbl_query, ind_tbl, in,
		     inlen, out, outlen);
	return EOPNOTSUPP;
}

SV_EXPORT struct mlx5dv_devx_obj *
mlx5dv_devx_obj_create(struct ibv_context *context, const void *in,
		       size_t inlen, void *out, size_t outlen)
{
	SV_MLX5S_NEW(sv_mlx5s_context(context), mlx5dv_devx_obj_create, context,
		     in, inlen, out, outlen);
	SV_NOTSUP_NULL;
}

SV_EXPORT int mlx5dv_devx_obj_destroy(struct mlx5dv_devx_obj *obj)
{
	SV_MLX5S_GONE(obj, mlx5dv_devx_obj_destroy, obj);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_obj_modify(struct mlx5dv_devx_obj *obj,
				     const void *in, size_t inlen, void *out,
				     size_t outlen)
{
	SV_MLX5S_OBJ(obj, mlx5dv_devx_obj_modify, obj, in, inlen, out, outlen);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_obj_query(struct mlx5dv_devx_obj *obj, const void *in,
				    size_t inlen, void *out, size_t outlen)
{
	SV_MLX5S_OBJ(obj, mlx5dv_devx_obj_query, obj, in, inlen, out, outlen);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_obj_query_async(struct mlx5dv_devx_obj *obj,
					  const void *in, size_t inlen,
					  size_t outlen, uint64_t wr_id,
					  struct mlx5dv_devx_cmd_comp *cmd_comp)
{
	SV_MLX5S_OBJ(obj, mlx5dv_devx_obj_query_async, obj, in, inlen, outlen,
		     wr_id, cmd_comp);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_qp_modify(struct ibv_qp *qp, const void *in,
				    size_t inlen, void *out, size_t outlen)
{
	SV_MLX5S_CTX(sv_ctx_of(qp), mlx5dv_devx_qp_modify, qp, in, inlen, out,
		     outlen);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_qp_query(struct ibv_qp *qp, const void *in,
				   size_t inlen, void *out, size_t outlen)
{
	SV_MLX5S_CTX(sv_ctx_of(qp), mlx5dv_devx_qp_query, qp, in, inlen, out,
		     outlen);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_query_eqn(struct ibv_context *context,
				    uint32_t vector, uint32_t *eqn)
{
	SV_MLX5S_CTX(context, mlx5dv_devx_query_eqn, context, vector, eqn);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_srq_modify(struct ibv_srq *srq, const void *in,
				     size_t inlen, void *out, size_t outlen)
{
	SV_MLX5S_CTX(sv_ctx_of(srq), mlx5dv_devx_srq_modify, srq, in, inlen,
		     out, outlen);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_srq_query(struct ibv_srq *srq, const void *in,
				    size_t inlen, void *out, size_t outlen)
{
	SV_MLX5S_CTX(sv_ctx_of(srq), mlx5dv_devx_srq_query, srq, in, inlen, out,
		     outlen);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_subscribe_devx_event(struct mlx5dv_devx_event_channel *event_channel,
					       struct mlx5dv_devx_obj *obj,
					       uint16_t events_sz,
					       uint16_t events_num[],
					       uint64_t cookie)
{
	SV_MLX5S_OBJ(event_channel, mlx5dv_devx_subscribe_devx_event,
		     event_channel, obj, events_sz, events_num, cookie);
	return EOPNOTSUPP;
}

SV_EXPORT int
mlx5dv_devx_subscribe_devx_event_fd(struct mlx5dv_devx_event_channel *event_channel,
				    int fd, struct mlx5dv_devx_obj *obj,
				    uint16_t event_num)
{
	SV_MLX5S_OBJ(event_channel, mlx5dv_devx_subscribe_devx_event_fd,
		     event_channel, fd, obj, event_num);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_umem_dereg(struct mlx5dv_devx_umem *umem)
{
	SV_MLX5S_GONE(umem, mlx5dv_devx_umem_dereg, umem);
	return EOPNOTSUPP;
}

SV_EXPORT struct mlx5dv_devx_umem *
mlx5dv_devx_umem_reg(struct ibv_context *ctx, void *addr, size_t size,
		     uint32_t access)
{
	SV_MLX5S_NEW(sv_mlx5s_context(ctx), mlx5dv_devx_umem_reg, ctx, addr,
		     size, access);
	SV_NOTSUP_NULL;
}

SV_EXPORT struct mlx5dv_devx_umem *
mlx5dv_devx_umem_reg_ex(struct ibv_context *ctx,
			struct mlx5dv_devx_umem_in *umem_in)
{
	SV_MLX5S_NEW(sv_mlx5s_context(ctx), mlx5dv_devx_umem_reg_ex, ctx,
		     umem_in);
	SV_NOTSUP_NULL;
}

SV_EXPORT int mlx5dv_devx_wq_modify(struct ibv_wq *wq, const void *in,
				    size_t inlen, void *out, size_t outlen)
{
	SV_MLX5S_CTX(sv_ctx_of(wq), mlx5dv_devx_wq_modify, wq, in, inlen, out,
		     outlen);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_devx_wq_query(struct ibv_wq *wq, const void *in,
				   size_t inlen, void *out, size_t outlen)
{
	SV_MLX5S_CTX(sv_ctx_of(wq), mlx5dv_devx_wq_query, wq, in, inlen, out,
		     outlen);
	return EOPNOTSUPP;
}

SV_EXPORT void *mlx5dv_dm_map_op_addr(struct ibv_dm *dm, uint8_t op)
{
	SV_MLX5S_CTX(sv_ctx_of(dm), mlx5dv_dm_map_op_addr, dm, op);
	SV_NOTSUP_NULL;
}

SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_aso(struct mlx5dv_dr_domain *domain,
			    struct mlx5dv_devx_obj *devx_obj, uint32_t offset,
			    uint32_t flags, uint8_t return_reg_c)
{
	SV_MLX5S_NEW(sv_mlx5s_object(domain), mlx5dv_dr_action_create_aso,
		     domain, devx_obj, offset, flags, return_reg_c);
	SV_NOTSUP_NULL;
}

SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_devx_tir(struct mlx5dv_devx_obj *devx_obj)
{
	SV_MLX5S_NEW(sv_mlx5s_object(devx_obj),
		     mlx5dv_dr_action_create_dest_devx_tir, devx_obj);
	SV_NOTSUP_NULL;
}

SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_ib_port(struct mlx5dv_dr_domain *domain,
				     uint32_t ib_port)
{
	SV_MLX5S_NEW(sv_mlx5s_object(domain),
		     mlx5dv_dr_action_create_dest_ib_port, domain, ib_port);
	SV_NOTSUP_NULL;
}

SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_vport(struct mlx5dv_dr_domain *domain,
				   uint32_t vport)
{
	SV_MLX5S_NEW(sv_mlx5s_object(domain),
		     mlx5dv_dr_action_create_dest_vport, domain, vport);
	SV_NOTSUP_NULL;
}

SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_flow_counter(struct mlx5dv_devx_obj *devx_obj,
				     uint32_t offset)
{
	SV_MLX5S_NEW(sv_mlx5s_object(devx_obj),
		     mlx5dv_dr_action_create_flow_counter, devx_obj, offset);
	SV_NOTSUP_NULL;
}

SV_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_flow_meter(struct mlx5dv_dr_flow_meter_attr *attr)
{
	SV_MLX5S_NEW(attr && sv_mlx5s_object(attr->next_table),
		     mlx5dv_dr_action_create_flow_meter, attr);
	SV_NOTSUP_NULL;
}

SV_EXPORT int mlx5dv_dr_action_modify_aso(struct mlx5dv_dr_action *action,
					  uint32_t offset, uint32_t flags,
					  uint8_t return_reg_c)
{
	SV_MLX5S_OBJ(action, mlx5dv_dr_action_modify_aso, action, offset, flags,
		     return_reg_c);
	return EOPNOTSUPP;
}

SV_EXPORT int
mlx5dv_dr_action_modify_flow_meter(struct mlx5dv_dr_action *action,
				   struct mlx5dv_dr_flow_meter_attr *attr,
				   __be64 modify_field_select)
{
	SV_MLX5S_OBJ(action, mlx5dv_dr_action_modify_flow_meter, action, attr,
		     modify_field_select);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_dr_aso_other_domain_link(struct mlx5dv_devx_obj *devx_obj,
					      struct mlx5dv_dr_domain *peer_dmn,
					      struct mlx5dv_dr_domain *dmn,
					      uint32_t flags,
					      uint8_t return_reg_c)
{
	SV_MLX5S_OBJ(dmn, mlx5dv_dr_aso_other_domain_link, devx_obj, peer_dmn,
		     dmn, flags, return_reg_c);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_dr_aso_other_domain_unlink(struct mlx5dv_devx_obj *devx_obj,
						struct mlx5dv_dr_domain *dmn)
{
	SV_MLX5S_OBJ(dmn, mlx5dv_dr_aso_other_domain_unlink, devx_obj, dmn);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_dr_matcher_set_layout(struct mlx5dv_dr_matcher *matcher,
					   struct mlx5dv_dr_matcher_layout *layout)
{
	SV_MLX5S_OBJ(matcher, mlx5dv_dr_matcher_set_layout, matcher, layout);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_dump_dr_domain(FILE *fout, struct mlx5dv_dr_domain *domain)
{
	SV_MLX5S_OBJ(domain, mlx5dv_dump_dr_domain, fout, domain);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_dump_dr_matcher(FILE *fout,
				     struct mlx5dv_dr_matcher *matcher)
{
	SV_MLX5S_OBJ(matcher, mlx5dv_dump_dr_matcher, fout, matcher);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_dump_dr_rule(FILE *fout, struct mlx5dv_dr_rule *rule)
{
	SV_MLX5S_OBJ(rule, mlx5dv_dump_dr_rule, fout, rule);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_dump_dr_table(FILE *fout, struct mlx5dv_dr_table *table)
{
	SV_MLX5S_OBJ(table, mlx5dv_dump_dr_table, fout, table);
	return EOPNOTSUPP;
}

SV_EXPORT void mlx5dv_free_var(struct mlx5dv_var *dv_var)
{
	SV_MLX5S_GONE_VOID(dv_var, mlx5dv_free_var, dv_var);
}

SV_EXPORT int mlx5dv_get_clock_info(struct ibv_context *context,
				    struct mlx5dv_clock_info *clock_info)
{
	SV_MLX5S_CTX(context, mlx5dv_get_clock_info, context, clock_info);
	return EOPNOTSUPP;
}

SV_EXPORT struct ibv_device * *
mlx5dv_get_vfio_device_list(struct mlx5dv_vfio_context_attr *attr)
{
	SV_MLX5S_IF(sv_mlx5s_loaded(), mlx5dv_get_vfio_device_list, attr);
	SV_NOTSUP_NULL;
}

SV_EXPORT int mlx5dv_map_ah_to_qp(struct ibv_ah *ah, uint32_t qp_num)
{
	SV_MLX5S_CTX(sv_ctx_of(ah), mlx5dv_map_ah_to_qp, ah, qp_num);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_modify_qp_lag_port(struct ibv_qp *qp, uint8_t port_num)
{
	SV_MLX5S_CTX(sv_ctx_of(qp), mlx5dv_modify_qp_lag_port, qp, port_num);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_modify_qp_sched_elem(struct ibv_qp *qp,
					  const struct mlx5dv_sched_leaf *requestor,
					  const struct mlx5dv_sched_leaf *responder)
{
	SV_MLX5S_CTX(sv_ctx_of(qp), mlx5dv_modify_qp_sched_elem, qp, requestor,
		     responder);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_modify_qp_udp_sport(struct ibv_qp *qp, uint16_t udp_sport)
{
	SV_MLX5S_CTX(sv_ctx_of(qp), mlx5dv_modify_qp_udp_sport, qp, udp_sport);
	return EOPNOTSUPP;
}

SV_EXPORT struct mlx5dv_pp *mlx5dv_pp_alloc(struct ibv_context *context,
					    size_t pp_context_sz,
					    const void *pp_context,
					    uint32_t flags)
{
	SV_MLX5S_NEW(sv_mlx5s_context(context), mlx5dv_pp_alloc, context,
		     pp_context_sz, pp_context, flags);
	SV_NOTSUP_NULL;
}

SV_EXPORT void mlx5dv_pp_free(struct mlx5dv_pp *pp)
{
	SV_MLX5S_GONE_VOID(pp, mlx5dv_pp_free, pp);
}

SV_EXPORT int mlx5dv_qp_cancel_posted_send_wrs(struct mlx5dv_qp_ex *mqp,
					       uint64_t wr_id)
{
	SV_MLX5S_OBJ(mqp, mlx5dv_qp_cancel_posted_send_wrs, mqp, wr_id);
	return -EOPNOTSUPP;	/* a count of WRs, or -errno */
}

SV_EXPORT int mlx5dv_query_qp_lag_port(struct ibv_qp *qp, uint8_t *port_num,
				       uint8_t *active_port_num)
{
	SV_MLX5S_CTX(sv_ctx_of(qp), mlx5dv_query_qp_lag_port, qp, port_num,
		     active_port_num);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_reserved_qpn_alloc(struct ibv_context *ctx, uint32_t *qpn)
{
	SV_MLX5S_CTX(ctx, mlx5dv_reserved_qpn_alloc, ctx, qpn);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_reserved_qpn_dealloc(struct ibv_context *ctx, uint32_t qpn)
{
	SV_MLX5S_CTX(ctx, mlx5dv_reserved_qpn_dealloc, ctx, qpn);
	return EOPNOTSUPP;
}

SV_EXPORT struct mlx5dv_sched_leaf *
mlx5dv_sched_leaf_create(struct ibv_context *context,
			 const struct mlx5dv_sched_attr *sched_attr)
{
	SV_MLX5S_NEW(sv_mlx5s_context(context), mlx5dv_sched_leaf_create,
		     context, sched_attr);
	SV_NOTSUP_NULL;
}

SV_EXPORT int mlx5dv_sched_leaf_destroy(struct mlx5dv_sched_leaf *leaf)
{
	SV_MLX5S_GONE(leaf, mlx5dv_sched_leaf_destroy, leaf);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_sched_leaf_modify(struct mlx5dv_sched_leaf *leaf,
				       const struct mlx5dv_sched_attr *sched_attr)
{
	SV_MLX5S_OBJ(leaf, mlx5dv_sched_leaf_modify, leaf, sched_attr);
	return EOPNOTSUPP;
}

SV_EXPORT struct mlx5dv_sched_node *
mlx5dv_sched_node_create(struct ibv_context *context,
			 const struct mlx5dv_sched_attr *sched_attr)
{
	SV_MLX5S_NEW(sv_mlx5s_context(context), mlx5dv_sched_node_create,
		     context, sched_attr);
	SV_NOTSUP_NULL;
}

SV_EXPORT int mlx5dv_sched_node_destroy(struct mlx5dv_sched_node *node)
{
	SV_MLX5S_GONE(node, mlx5dv_sched_node_destroy, node);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_sched_node_modify(struct mlx5dv_sched_node *node,
				       const struct mlx5dv_sched_attr *sched_attr)
{
	SV_MLX5S_OBJ(node, mlx5dv_sched_node_modify, node, sched_attr);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_set_context_attr(struct ibv_context *context,
				      enum mlx5dv_set_ctx_attr_type type,
				      void *attr)
{
	SV_MLX5S_CTX(context, mlx5dv_set_context_attr, context, type, attr);
	return EOPNOTSUPP;
}

SV_EXPORT int mlx5dv_vfio_get_events_fd(struct ibv_context *ibctx)
{
	SV_MLX5S_CTX(ibctx, mlx5dv_vfio_get_events_fd, ibctx);
	SV_NOTSUP_NEG1;		/* a file descriptor, or -1 + errno */
}

SV_EXPORT int mlx5dv_vfio_process_events(struct ibv_context *context)
{
	SV_MLX5S_CTX(context, mlx5dv_vfio_process_events, context);
	return EOPNOTSUPP;
}
