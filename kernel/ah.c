// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs address handles: the destination of UD sends. An AH names its
 * PD (a reference and a usecnt, released when the AH is destroyed) and
 * keeps its address vector, which is also how a connected QP's AV is
 * checked (sv_ah_attr_check()).
 */
#include <linux/slab.h>

#include "sv.h"

/*
 * A RoCE address vector: a GRH is required (the GID is the address), the
 * source GID index must name a populated entry of the GID table, the port
 * is the device's only port. As rxe and mlx5 do, the flow label and the
 * service level keep only the bits they have on the wire (20 and 4: a
 * program may pass ~0 or a path index to spread the RoCE UDP source
 * port), and dlid and src_path_bits, which mean nothing on Ethernet, are
 * kept as given.
 */
int sv_ah_attr_check(struct sv_device *sdev, const struct sv_ah_attr *ah)
{
	bool valid;

	if (ah->reserved[0] || ah->reserved[1])
		return -EINVAL;
	if (!ah->is_global || ah->port_num != SV_PORT_NUM)
		return -EINVAL;
	if (ah->sgid_index >= SV_GID_TBL_LEN)
		return -EINVAL;
	spin_lock_bh(&sdev->gid_lock);
	valid = sdev->gids[ah->sgid_index].valid;
	spin_unlock_bh(&sdev->gid_lock);
	if (!valid)
		return -EINVAL;
	return 0;
}

/* Keep what the wire has of the fields verbs makes wider (see above). */
void sv_ah_attr_normalize(struct sv_ah_attr *ah)
{
	ah->flow_label &= 0xfffff;
	ah->sl &= 0xf;
}

static struct sv_ah *to_sv_ah(struct sv_uobj *u)
{
	return container_of(u, struct sv_ah, uobj);
}

static void sv_ah_destroy(struct sv_uobj *u)
{
	atomic_dec(&to_sv_ah(u)->pd->usecnt);
}

static void sv_ah_free(struct sv_uobj *u)
{
	struct sv_ah *ah = to_sv_ah(u);

	sv_uobj_put(ah->pd);
	kfree(ah);
}

static const struct sv_uobj_ops sv_ah_ops = {
	.destroy = sv_ah_destroy,
	.free = sv_ah_free,
};

int sv_create_ah(struct sv_file *f, void *arg)
{
	struct sv_create_ah *c = arg;
	struct sv_uobj *pd;
	struct sv_ah *ah;
	int ret;

	if (c->reserved)
		return -EINVAL;
	sv_ah_attr_normalize(&c->attr);
	ret = sv_ah_attr_check(f->sdev, &c->attr);
	if (ret)
		return ret;

	pd = sv_uobj_get(f, c->pd_handle, SV_OBJ_PD);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	ah = kzalloc(sizeof(*ah), GFP_KERNEL_ACCOUNT);
	if (!ah) {
		sv_uobj_put(pd);
		return -ENOMEM;
	}
	/* max_ah (ENOMEM), the user's share and the rdma cgroup (EAGAIN) */
	ret = sv_charge(f, SV_OBJ_AH, &ah->uobj.charge);
	if (ret) {
		sv_uobj_put(pd);
		kfree(ah);
		return ret;
	}
	ah->pd = pd;
	ah->attr = c->attr;
	atomic_inc(&pd->usecnt);
	ret = sv_uobj_add(f, &ah->uobj, SV_OBJ_AH, &sv_ah_ops);
	if (ret) {
		atomic_dec(&pd->usecnt);
		sv_uncharge(&ah->uobj.charge);
		sv_uobj_put(pd);
		kfree(ah);
		return ret;
	}
	c->handle = ah->uobj.handle;
	return 0;
}

int sv_destroy_ah(struct sv_file *f, void *arg)
{
	struct sv_destroy_ah *d = arg;

	return sv_uobj_destroy(f, d->handle, SV_OBJ_AH);
}
