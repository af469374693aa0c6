/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libsoftverbs' private interface to its compat provider libmlx5.so.1
 * (user/compat/mlx5*.c). Exported in the version node SOFTVERBS_PRIVATE_1
 * of both libsoftverbs.so.1 and build/compat/libibverbs.so.1, which
 * libmlx5.so.1 links (DT_NEEDED libibverbs.so.1, RUNPATH $ORIGIN): as
 * rdma-core's libmlx5 is the provider of the mlx5 contexts it serves, our
 * libmlx5 asks the library that made a context whether it is a softverbs
 * one, and creates QPs with the mlx5 create flags, flow matchers and
 * their flows through it. A process
 * that has libsoftverbs.so.1 too (linked -lsoftverbs) resolves these,
 * like every ibv_* call, in the copy it loaded first.
 *
 * Nothing here is an ABI for applications.
 */
#ifndef SV_PRIVATE_H
#define SV_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"

/* Is @dev a softverbs device of this library (one under /sys/class/softverbs)? */
bool sv_private_device_is_ours(struct ibv_device *dev);

/* Was @ctx opened by this library, on a softverbs device? */
bool sv_private_context_is_ours(struct ibv_context *ctx);

/*
 * rdma-core's other libraries beside ours (librdmacm.so.1's): load @path
 * in the link-map namespace of the system's libibverbs (sv_system.h), so
 * that it binds to that one; NULL if there is none or it fails.
 */
void *sv_private_system_dlopen(const char *path);

/*
 * Which of rdma-core's files to load there: $@env if set, else @path;
 * NULL for none ("" or "none"), for one that is not there, or for the
 * file that holds @self (ours, installed in its place). A setuid or
 * setgid program ignores @env, as it names code to load.
 */
const char *sv_private_system_path(const char *env, const char *path,
				   const void *self);

/* @name in a library of that namespace (@lib names it); aborts if none. */
void *sv_private_system_sym(void *handle, const char *lib, const char *name);

/* errno as that namespace's libc has it, for the calling thread. */
int sv_private_system_errno(void);

/* The SV_CREATE_QP_* flags sv_private_create_qp() passes to the kernel. */
#define SV_PRIVATE_QP_FLAGS	(SV_CREATE_QP_TUNNEL_OFFLOADS |		\
				 SV_CREATE_QP_MLX5_TIR |		\
				 SV_CREATE_QP_TIR_SELF_LB_UC |		\
				 SV_CREATE_QP_TIR_SELF_LB_MC)

/* What mlx5dv_create_qp() adds to ibv_create_qp_ex()'s attributes. */
struct sv_private_qp_opts {
	uint32_t sv_flags;	/* SV_PRIVATE_QP_FLAGS, for the kernel */
	uint32_t dc_type;	/* 0, or SV_QPT_DCI / SV_QPT_DCT for DRIVER */
	uint64_t dct_key;	/* DCT: its access key */
	uint8_t log_streams;	/* DCI: stream channels (log2), 0: none */
	uint8_t log_errored;	/* DCI: streams in error before ERR (log2) */
	/*
	 * RC: the mlx5dv_qp_ex builders to give it, MLX5DV_QP_EX_WITH_MR_*
	 * and _MKEY_CONFIGURE (mlx5dv_wr_mr_interleaved(),
	 * mlx5dv_wr_mr_list(), mlx5dv_wr_mkey_configure() and its setters).
	 */
	uint64_t dv_send_ops;
};

/*
 * ibv_create_qp_ex() with @o: the kernel checks the flags and the DC
 * attributes against the QP type (EINVAL, EOPNOTSUPP: uapi); a DC QP is
 * IBV_QPT_DRIVER to verbs. NULL with errno on failure; EINVAL for flags
 * outside SV_PRIVATE_QP_FLAGS or a context not ours.
 */
struct ibv_qp *sv_private_create_qp(struct ibv_context *ctx,
				    struct ibv_qp_init_attr_ex *attr,
				    const struct sv_private_qp_opts *o);

/*
 * mlx5dv_qp_ex_from_ibv_qp_ex(): the direct-verbs builders of a QP made
 * with send_ops_flags (wr_set_dc_addr*, on a DCI). NULL if not ours.
 */
struct mlx5dv_qp_ex;
struct mlx5dv_qp_ex *sv_private_qp_dv(struct ibv_qp_ex *qpx);

/*
 * mlx5dv_create_mkey(): an indirect key of @pd for up to @max_entries
 * pieces (rounded up to a multiple of 4, written back), free until an
 * mlx5dv_wr_mr_*() lays it out. NULL with errno. Destroy: 0 or errno.
 */
struct mlx5dv_mkey;
struct mlx5dv_mkey *sv_private_create_mkey(struct ibv_pd *pd,
					   uint16_t *max_entries);
int sv_private_destroy_mkey(struct mlx5dv_mkey *mkey);

/*
 * ibv_create_flow() of @attr, which may carry the private
 * SV_FLOW_SPEC_MATCHER and SV_FLOW_SPEC_DEFAULT_MISS specs (uapi), for
 * @qp, or for no QP (SV_FLOW_NO_QP) when @qp is NULL. NULL with errno.
 */
struct ibv_flow *sv_private_create_flow(struct ibv_context *ctx,
					struct ibv_qp *qp,
					struct ibv_flow_attr *attr);

/*
 * A verbs-level flow action (mlx5dv_create_flow_action_modify_header(),
 * _packet_reformat()): a kernel steering action of @ktype
 * (SV_STEER_ACT_*) for the receive or (@egress) transmit direction,
 * which ibv_destroy_flow_action() destroys. NULL with errno.
 */
struct ibv_flow_action *sv_private_create_flow_action(struct ibv_context *ctx,
						      uint32_t ktype,
						      bool egress,
						      const void *data,
						      size_t len);

/* What such an action is: 0, or EINVAL if it is not one of ours. */
int sv_private_flow_action_info(struct ibv_flow_action *fa, uint32_t *handle,
				uint32_t *ktype, bool *egress);

/* One softverbs ioctl on @ctx's file (uapi): 0 or an errno value. */
int sv_private_cmd(struct ibv_context *ctx, unsigned long req, void *arg);

#endif /* SV_PRIVATE_H */
