// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs protection domains.
 *
 * A PD is only a name: MRs, QPs, SRQs, AHs and MWs belong to one, and the
 * data path checks that a QP and the MRs it touches share it. While any
 * such child lives, the PD's usecnt is non-zero and dealloc is EBUSY.
 * Children take the PD with sv_pd_pin() (a reference and a usecnt) when
 * they are created and give it back with sv_pd_unpin() in their destroy.
 * A device has at most SV_MAX_PD (max_pd) PDs; beyond: ENOMEM (limits.c).
 */
#include <linux/slab.h>

#include "sv.h"

static struct sv_pd *to_sv_pd(struct sv_uobj *u)
{
	return container_of(u, struct sv_pd, uobj);
}

static void sv_pd_destroy(struct sv_uobj *u)
{
}

static void sv_pd_free(struct sv_uobj *u)
{
	kfree(to_sv_pd(u));
}

static const struct sv_uobj_ops sv_pd_ops = {
	.destroy = sv_pd_destroy,
	.free = sv_pd_free,
};

/* The PD named by handle, referenced; ERR_PTR(-ENOENT or -EINVAL). */
struct sv_pd *sv_pd_get(struct sv_file *f, u32 handle)
{
	struct sv_uobj *u = sv_uobj_get(f, handle, SV_OBJ_PD);

	if (IS_ERR(u))
		return ERR_CAST(u);
	return to_sv_pd(u);
}

void sv_pd_put(struct sv_pd *pd)
{
	sv_uobj_put(&pd->uobj);
}

/*
 * For a child being created: the PD named by handle, referenced and with
 * its usecnt raised, so it cannot be deallocated until sv_pd_unpin().
 * Called under f->lock, like every control command.
 */
struct sv_pd *sv_pd_pin(struct sv_file *f, u32 handle)
{
	struct sv_pd *pd;

	lockdep_assert_held(&f->lock);
	pd = sv_pd_get(f, handle);
	if (!IS_ERR(pd))
		atomic_inc(&pd->uobj.usecnt);
	return pd;
}

void sv_pd_unpin(struct sv_pd *pd)
{
	atomic_dec(&pd->uobj.usecnt);
	sv_pd_put(pd);
}

int sv_alloc_pd(struct sv_file *f, void *arg)
{
	struct sv_alloc_pd *cmd = arg;
	struct sv_pd *pd;
	int ret;

	if (cmd->reserved)
		return -EINVAL;
	pd = kzalloc(sizeof(*pd), GFP_KERNEL_ACCOUNT);
	if (!pd)
		return -ENOMEM;
	ret = sv_charge(f, SV_OBJ_PD, &pd->uobj.charge);
	if (ret)
		goto err_free;
	ret = sv_uobj_add(f, &pd->uobj, SV_OBJ_PD, &sv_pd_ops);
	if (ret)
		goto err_uncharge;
	cmd->pd_handle = pd->uobj.handle;
	return 0;

err_uncharge:
	sv_uncharge(&pd->uobj.charge);
err_free:
	kfree(pd);
	return ret;
}

int sv_dealloc_pd(struct sv_file *f, void *arg)
{
	struct sv_dealloc_pd *cmd = arg;

	return sv_uobj_destroy(f, cmd->pd_handle, SV_OBJ_PD);
}

/* SV_IOC_QUERY_PD: does the handle name a PD of this file? */
int sv_query_pd(struct sv_file *f, void *arg)
{
	struct sv_query_pd *cmd = arg;
	struct sv_pd *pd = sv_pd_get(f, cmd->pd_handle);

	if (IS_ERR(pd))
		return PTR_ERR(pd);
	sv_pd_put(pd);
	return 0;
}
