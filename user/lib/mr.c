// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Memory regions: ibv_reg_mr(3) and its iova variants, ibv_rereg_mr(3),
 * ibv_dereg_mr(3), ibv_import_mr(3) and ibv_unimport_mr(), and
 * ibv_advise_mr(3) for on-demand paging MRs (IBV_ACCESS_ON_DEMAND; the
 * implicit one is addr NULL, length SIZE_MAX), ibv_alloc_null_mr(3) and
 * ibv_reg_dmabuf_mr(3). The kernel pins and
 * charges the pages, or pages them on demand; fork safety needs nothing
 * here (the kernel copies pinned pages on fork, and ODP MRs follow the
 * parent's mapping), so unlike rdma-core with ibv_fork_init() there is no
 * MADV_DONTFORK.
 *
 * verbs.h turns ibv_reg_mr() and ibv_reg_mr_iova() into inline wrappers
 * that call these functions, or ibv_reg_mr_iova2() when optional access
 * flags may be set; all three are real exported functions.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sv_verbs.h"
#include "sv_system.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

_Static_assert(sizeof(struct ibv_sge) == sizeof(struct sv_sge) &&
	       offsetof(struct ibv_sge, lkey) == offsetof(struct sv_sge, lkey),
	       "ibv_advise_mr() hands the kernel the caller's ibv_sge array");

/* The library's view of a kernel MR of pd: mr filled, handed out. */
static struct ibv_mr *sv_mr_fill(struct sv_mr *mr, struct ibv_pd *pd,
				 void *addr, size_t length, uint32_t handle,
				 uint32_t lkey, uint32_t rkey)
{
	mr->ibmr.context = pd->context;
	mr->ibmr.pd = pd;
	mr->ibmr.addr = addr;
	mr->ibmr.length = length;
	mr->ibmr.handle = handle;
	mr->ibmr.lkey = lkey;
	mr->ibmr.rkey = rkey;
	return &mr->ibmr;
}

/*
 * Run req, a command that makes an MR of pd, and hand the MR out with
 * the handle and keys the kernel wrote into cmd (rkey NULL: none); NULL
 * with errno if it fails.
 */
struct ibv_mr *sv_mr_create(struct ibv_pd *pd, unsigned long req, void *cmd,
			    const uint32_t *handle, const uint32_t *lkey,
			    const uint32_t *rkey, void *addr, size_t length)
{
	struct sv_mr *mr = calloc(1, sizeof(*mr));
	int ret;

	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = sv_cmd(pd->context, req, cmd);
	if (ret) {
		free(mr);
		errno = ret;
		return NULL;
	}
	return sv_mr_fill(mr, pd, addr, length, *handle, *lkey,
			  rkey ? *rkey : 0);
}

SV_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
					  size_t length, uint64_t iova,
					  unsigned int access)
{
	SV_SYSTEM_FORWARD(pd->context, ibv_reg_mr_iova2, pd, addr, length, iova,
	                  access);
	struct sv_reg_mr cmd = {
		.size = sizeof(cmd),
		.pd_handle = pd->handle,
		.addr = (uintptr_t)addr,
		.length = length,
		.iova = iova,
		.access = access,
	};

	return sv_mr_create(pd, SV_IOC_REG_MR, &cmd, &cmd.mr_handle,
			    &cmd.lkey, &cmd.rkey, addr, length);
}

SV_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr,
				    size_t length, int access)
{
	SV_SYSTEM_FORWARD(pd->context, ibv_reg_mr, pd, addr, length, access);
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, access);
}

SV_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr,
					 size_t length, uint64_t iova,
					 int access)
{
	SV_SYSTEM_FORWARD(pd->context, ibv_reg_mr_iova, pd, addr, length, iova,
	                  access);
	return ibv_reg_mr_iova2(pd, addr, length, iova, access);
}

SV_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					   size_t length, uint64_t iova,
					   int fd, int access)
{
	SV_SYSTEM_FORWARD(pd->context, ibv_reg_dmabuf_mr, pd, offset, length,
	                  iova, fd, access);
	struct sv_reg_dmabuf_mr cmd = {
		.size = sizeof(cmd),
		.pd_handle = pd->handle,
		.offset = offset,
		.length = length,
		.iova = iova,
		.fd = fd,
		.access = access,
	};

	/* As rdma-core: addr is the offset in the dma-buf. */
	return sv_mr_create(pd, SV_IOC_REG_DMABUF_MR, &cmd, &cmd.mr_handle,
			    &cmd.lkey, &cmd.rkey, (void *)(uintptr_t)offset,
			    length);
}

/*
 * Returns 0, or an enum ibv_rereg_mr_err_code with errno set:
 * IBV_REREG_MR_ERR_INPUT (EINVAL) for arguments rejected before the
 * kernel sees them, IBV_REREG_MR_ERR_CMD when the kernel refused (the MR
 * is then unchanged: the kernel applies a rereg all or nothing). The
 * kernel keeps lkey and rkey across every rereg, as rxe and mlx5 do.
 */
SV_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			   void *addr, size_t length, int access)
{
	SV_SYSTEM_FORWARD(mr->context, ibv_rereg_mr, mr, flags, pd, addr,
	                  length, access);
	struct sv_rereg_mr cmd = {
		.size = sizeof(cmd),
		.mr_handle = mr->handle,
		.flags = flags,
	};
	int ret;

	if ((flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!length || !addr)) ||
	    (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS)) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) && !pd)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		cmd.addr = (uintptr_t)addr;
		cmd.length = length;
		cmd.iova = (uintptr_t)addr;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		cmd.pd_handle = pd->handle;
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		cmd.access = access;

	ret = sv_cmd(mr->context, SV_IOC_REREG_MR, &cmd);
	if (ret) {
		errno = ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
	}
	mr->lkey = cmd.lkey;
	mr->rkey = cmd.rkey;
	return 0;
}

/* 0, or an errno value. */
SV_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	SV_SYSTEM_FORWARD(mr->context, ibv_dereg_mr, mr);
	struct sv_dereg_mr cmd = {
		.size = sizeof(cmd),
		.mr_handle = mr->handle,
	};
	int ret;

	ret = sv_cmd(mr->context, SV_IOC_DEREG_MR, &cmd);
	if (ret)
		return ret;
	free(to_svmr(mr));
	return 0;
}

/*
 * The MR mr_handle of pd's file, as another context registered it: its
 * keys, address and length from the kernel. EINVAL if it is not in pd.
 */
SV_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	SV_SYSTEM_FORWARD(pd->context, ibv_import_mr, pd, mr_handle);
	struct sv_query_mr q = { .size = sizeof(q), .mr_handle = mr_handle };
	struct sv_mr *mr;
	int ret;

	ret = sv_cmd(pd->context, SV_IOC_QUERY_MR, &q);
	if (!ret && q.pd_handle != pd->handle)
		ret = EINVAL;
	if (ret) {
		errno = ret;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	return sv_mr_fill(mr, pd, (void *)(uintptr_t)q.addr, q.length,
			  mr_handle, q.lkey, q.rkey);
}

/* Forget an imported MR here; the kernel's MR stays registered. */
SV_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	if (sv_system_context(mr->context)) {
		SV_SYSTEM_CALL_VOID(ibv_unimport_mr, mr);
		return;
	}
	free(to_svmr(mr));
}

/* advise_mr op: the kernel checks every range (uapi: SV_IOC_ADVISE_MR). */
static int sv_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			uint32_t flags, struct ibv_sge *sg_list,
			uint32_t num_sge)
{
	struct sv_advise_mr cmd = {
		.size = sizeof(cmd),
		.pd_handle = pd->handle,
		.advice = advice,
		.flags = flags,
		.sg_list = (uintptr_t)sg_list,
		.num_sge = num_sge,
	};

	return sv_cmd(pd->context, SV_IOC_ADVISE_MR, &cmd);
}

/*
 * alloc_null_mr op: writes through its lkey are discarded, reads give
 * zeros; no rkey (0), no address, the maximum length.
 */
static struct ibv_mr *sv_alloc_null_mr(struct ibv_pd *pd)
{
	struct sv_alloc_null_mr cmd = {
		.size = sizeof(cmd),
		.pd_handle = pd->handle,
	};

	return sv_mr_create(pd, SV_IOC_ALLOC_NULL_MR, &cmd, &cmd.mr_handle,
			    &cmd.lkey, NULL, NULL, SIZE_MAX);
}

static int sv_mr_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.advise_mr = sv_advise_mr;
	ctx->vctx.alloc_null_mr = sv_alloc_null_mr;
	return 0;
}

SV_CTX_PROVIDER(mr, sv_mr_ctx_init, NULL);
