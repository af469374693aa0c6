// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Device memory: ibv_alloc_dm(), ibv_free_dm(), ibv_memcpy_to_dm() and
 * ibv_memcpy_from_dm() (the DM's function pointers), ibv_reg_dm_mr(), and
 * ibv_import_dm()/ibv_unimport_dm() for a context on the same file.
 * The memory is the kernel's (kernel/mr/dm.c), mapped here whole; the copies
 * are memcpy() through that mapping, bounds checked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sv_verbs.h"
#include "sv_system.h"

struct sv_dm {
	struct ibv_dm dm;		/* first: handed out */
	void *map;
	size_t map_len;
	uint64_t length;		/* as allocated */
};

static struct sv_dm *to_svdm(struct ibv_dm *dm)
{
	return (struct sv_dm *)dm;
}

/*
 * May a copy reach [off, off + len) of the DM? As mlx5's: EFAULT outside
 * it (checked without wrapping), EINVAL for an offset or length that is
 * not a multiple of 4 bytes (its device memory's access unit, which
 * programs written for it keep to); else 0.
 */
static int sv_dm_check(const struct sv_dm *d, uint64_t off, size_t len)
{
	if (off > d->length || len > d->length - off)
		return EFAULT;
	if ((off | len) & 3)
		return EINVAL;
	return 0;
}

static int sv_memcpy_to_dm(struct ibv_dm *dm, uint64_t dm_offset,
			   const void *host_addr, size_t length)
{
	struct sv_dm *d = to_svdm(dm);
	int ret = sv_dm_check(d, dm_offset, length);

	if (ret)
		return ret;
	memcpy((char *)d->map + dm_offset, host_addr, length);
	return 0;
}

static int sv_memcpy_from_dm(void *host_addr, struct ibv_dm *dm,
			     uint64_t dm_offset, size_t length)
{
	struct sv_dm *d = to_svdm(dm);
	int ret = sv_dm_check(d, dm_offset, length);

	if (ret)
		return ret;
	memcpy(host_addr, (char *)d->map + dm_offset, length);
	return 0;
}

/* Map a DM of the kernel's and fill d; 0 or an errno value. */
static int sv_dm_map(struct sv_dm *d, struct ibv_context *ctx,
		     uint32_t handle, uint64_t length, uint64_t off,
		     size_t len)
{
	d->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      ctx->cmd_fd, off);
	if (d->map == MAP_FAILED)
		return errno;
	d->map_len = len;
	d->length = length;
	d->dm.context = ctx;
	d->dm.memcpy_to_dm = sv_memcpy_to_dm;
	d->dm.memcpy_from_dm = sv_memcpy_from_dm;
	d->dm.handle = handle;
	d->dm.comp_mask = IBV_DM_MASK_HANDLE;
	return 0;
}

static struct ibv_dm *sv_alloc_dm(struct ibv_context *ctx,
				  struct ibv_alloc_dm_attr *attr)
{
	struct sv_alloc_dm cmd = { .size = sizeof(cmd) };
	struct sv_free_dm fr = { .size = sizeof(fr) };
	struct sv_dm *d;
	int ret;

	/* No comp_mask bit is known for allocation (as mlx5). */
	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	cmd.length = attr->length;
	cmd.log_align_req = attr->log_align_req;
	ret = sv_cmd(ctx, SV_IOC_ALLOC_DM, &cmd);
	if (ret)
		goto err_free;
	ret = sv_dm_map(d, ctx, cmd.dm_handle, attr->length,
			cmd.mmap_offset, cmd.mmap_len);
	if (ret) {
		fr.dm_handle = cmd.dm_handle;
		sv_cmd(ctx, SV_IOC_FREE_DM, &fr);
		goto err_free;
	}
	return &d->dm;

err_free:
	free(d);
	errno = ret;
	return NULL;
}

/*
 * ibv_import_dm(3): a DM another context on this file (ibv_import_device())
 * allocated, mapped here too. ENOENT for a handle that is none.
 */
SV_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *ctx,
				       uint32_t dm_handle)
{
	SV_SYSTEM_FORWARD(ctx, ibv_import_dm, ctx, dm_handle);
	struct sv_query_dm q = { .size = sizeof(q), .dm_handle = dm_handle };
	struct sv_dm *d;
	int ret;

	ret = sv_cmd(ctx, SV_IOC_QUERY_DM, &q);
	if (ret) {
		errno = ret;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	ret = sv_dm_map(d, ctx, dm_handle, q.length, q.mmap_offset,
			q.mmap_len);
	if (ret) {
		free(d);
		errno = ret;
		return NULL;
	}
	return &d->dm;
}

/* Forget an imported DM here; the kernel's DM stays allocated. */
SV_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
	struct sv_dm *d = to_svdm(dm);

	if (sv_system_context(dm->context)) {
		SV_SYSTEM_CALL_VOID(ibv_unimport_dm, dm);
		return;
	}
	munmap(d->map, d->map_len);
	free(d);
}

/* EBUSY while MRs are registered on it, as the kernel says. */
static int sv_free_dm(struct ibv_dm *dm)
{
	struct sv_free_dm cmd = { .size = sizeof(cmd), .dm_handle = dm->handle };
	struct sv_dm *d = to_svdm(dm);
	int ret;

	ret = sv_cmd(dm->context, SV_IOC_FREE_DM, &cmd);
	if (ret)
		return ret;
	munmap(d->map, d->map_len);
	free(d);
	return 0;
}

/* A zero-based MR over [dm_offset, dm_offset + length) of the DM. */
static struct ibv_mr *sv_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm,
				   uint64_t dm_offset, size_t length,
				   unsigned int access)
{
	struct sv_reg_dm_mr cmd = {
		.size = sizeof(cmd), .pd_handle = pd->handle,
		.dm_handle = dm->handle, .access = access,
		.dm_offset = dm_offset, .length = length,
	};

	if (dm->context != pd->context) {
		errno = EINVAL;
		return NULL;
	}
	/* Zero-based: no address, as rdma-core's. */
	return sv_mr_create(pd, SV_IOC_REG_DM_MR, &cmd, &cmd.mr_handle,
			    &cmd.lkey, &cmd.rkey, NULL, length);
}

static int sv_dm_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.alloc_dm = sv_alloc_dm;
	ctx->vctx.free_dm = sv_free_dm;
	ctx->vctx.reg_dm_mr = sv_reg_dm_mr;
	return 0;
}

SV_CTX_PROVIDER(dm, sv_dm_ctx_init, NULL);
