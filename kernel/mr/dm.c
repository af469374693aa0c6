// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs device memory: ibv_alloc_dm(), ibv_free_dm(), and the memory
 * under ibv_reg_dm_mr() (mr.c).
 *
 * SV_IOC_QUERY_DM tells another context on the same file (ibv_import_dm())
 * where to map a DM.
 *
 * A NIC's device memory is on-chip SRAM the host maps and the NIC reads
 * without a trip over PCIe. Here it is a shared buffer of the module
 * (struct sv_mbuf, mmap.c): zeroed pages, charged to the allocating
 * process as ring memory is (its memory cgroup, RLIMIT_MEMLOCK), mapped by
 * the library for ibv_memcpy_to_dm()/_from_dm(), and made into zero-based
 * MRs whose pages are the buffer's. Each such MR raises the DM's use
 * count, so freeing a DM that MRs use is EBUSY; the MR also holds a
 * reference, so its pages stay while a copy through it runs.
 */
#include <linux/slab.h>

#include "../sv.h"

static struct sv_dm *to_sv_dm(struct sv_uobj *u)
{
	return container_of(u, struct sv_dm, uobj);
}

static void sv_dm_destroy(struct sv_uobj *u)
{
	/* Mappings made keep the pages; no new one can be made. */
	sv_mmap_entry_remove(u->file, to_sv_dm(u)->mmap_offset);
}

static void sv_dm_free(struct sv_uobj *u)
{
	struct sv_dm *dm = to_sv_dm(u);

	sv_mbuf_put(dm->buf);
	kfree(dm);
}

static const struct sv_uobj_ops sv_dm_ops = {
	.destroy = sv_dm_destroy,
	.free = sv_dm_free,
};

/* A referenced DM of f by handle (sv_uobj_put()), or an ERR_PTR. */
struct sv_dm *sv_dm_get(struct sv_file *f, u32 handle)
{
	struct sv_uobj *u = sv_uobj_get(f, handle, SV_OBJ_DM);

	return IS_ERR(u) ? ERR_CAST(u) : to_sv_dm(u);
}

int sv_alloc_dm(struct sv_file *f, void *arg)
{
	struct sv_alloc_dm *cmd = arg;
	struct sv_dm *dm;
	int ret;

	if (cmd->flags || !cmd->length || cmd->length > SV_MAX_DM_SIZE ||
	    cmd->log_align_req > PAGE_SHIFT)
		return -EINVAL;
	dm = kzalloc(sizeof(*dm), GFP_KERNEL_ACCOUNT);
	if (!dm)
		return -ENOMEM;
	/* SV_MAX_DM per device (ENOMEM), the user's share, the cgroup */
	ret = sv_charge(f, SV_OBJ_DM, &dm->uobj.charge);
	if (ret)
		goto err_free;
	dm->length = cmd->length;
	dm->buf = sv_mbuf_alloc_mapped(f, cmd->length, &dm->mmap_offset);
	if (IS_ERR(dm->buf)) {
		ret = PTR_ERR(dm->buf);
		goto err_uncharge;
	}
	ret = sv_uobj_add(f, &dm->uobj, SV_OBJ_DM, &sv_dm_ops);
	if (ret)
		goto err_mmap;
	cmd->dm_handle = dm->uobj.handle;
	cmd->mmap_offset = dm->mmap_offset;
	cmd->mmap_len = dm->buf->size;
	return 0;

err_mmap:
	sv_mmap_entry_remove(f, dm->mmap_offset);
	sv_mbuf_put(dm->buf);
err_uncharge:
	sv_uncharge(&dm->uobj.charge);
err_free:
	kfree(dm);
	return ret;
}

int sv_query_dm(struct sv_file *f, void *arg)
{
	struct sv_query_dm *cmd = arg;
	struct sv_dm *dm = sv_dm_get(f, cmd->dm_handle);

	if (IS_ERR(dm))
		return PTR_ERR(dm);
	cmd->length = dm->length;
	cmd->mmap_offset = dm->mmap_offset;
	cmd->mmap_len = dm->buf->size;
	sv_uobj_put(&dm->uobj);
	return 0;
}

int sv_free_dm(struct sv_file *f, void *arg)
{
	struct sv_free_dm *cmd = arg;

	return sv_uobj_destroy(f, cmd->dm_handle, SV_OBJ_DM);
}
