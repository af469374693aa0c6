// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs: an open file of /dev/infiniband/softverbsN and its ioctl
 * dispatch. Argument structs are read with copy_struct_from_user(); the
 * rules are written in uapi/softverbs-abi.h.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/nsproxy.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "sv.h"

struct sv_ioctl_desc {
	int (*handler)(struct sv_file *f, void *arg);
	u32 min_size;	/* the command's first ABI version */
	u32 size;	/* this kernel's struct */
	/*
	 * Runs without f->lock: the doorbell, and commands that sleep on
	 * user memory (pinning), which take f->lock themselves for the
	 * short part and check sdev->dead under it.
	 */
	bool unlocked;
	/*
	 * A create: BIT() of each type it may make (a QP create makes a
	 * handle on an XRC TGT QP) and the new handle's offset in the struct
	 */
	u32 creates;
	u32 handle_off;
};

static int sv_query_abi(struct sv_file *f, void *arg)
{
	struct sv_query_abi *q = arg;

	if (q->reserved)
		return -EINVAL;
	q->abi_version = SV_ABI_VERSION;
	q->max_arg_size = SV_MAX_ARG_SIZE;
	return 0;
}

#define SV_IOCTL(nr, fn, type, ver0)					\
	[nr] = { .handler = fn, .min_size = ver0, .size = sizeof(struct type) }
#define SV_IOCTL_UNLOCKED(nr, fn, type, ver0)				\
	[nr] = { .handler = fn, .min_size = ver0, .size = sizeof(struct type), \
		 .unlocked = true }

/* A create that returns the new object's handle in the field hfield. */
#define SV_IOCTL_CREATE_OF(nr, fn, type, ver0, otypes, hfield)		\
	[nr] = { .handler = fn, .min_size = ver0,			\
		 .size = sizeof(struct type), .creates = otypes,	\
		 .handle_off = offsetof(struct type, hfield) }
#define SV_IOCTL_CREATE(nr, fn, type, ver0, otype, hfield)		\
	SV_IOCTL_CREATE_OF(nr, fn, type, ver0, BIT(otype), hfield)

static const struct sv_ioctl_desc sv_ioctls[] = {
	SV_IOCTL(SV_NR_QUERY_ABI, sv_query_abi, sv_query_abi,
		 SV_QUERY_ABI_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_ALLOC_PD, sv_alloc_pd, sv_alloc_pd,
			SV_ALLOC_PD_SIZE_VER0, SV_OBJ_PD, pd_handle),
	SV_IOCTL(SV_NR_DEALLOC_PD, sv_dealloc_pd, sv_dealloc_pd,
		 SV_DEALLOC_PD_SIZE_VER0),
	SV_IOCTL(SV_NR_QUERY_PD, sv_query_pd, sv_query_pd,
		 SV_QUERY_PD_SIZE_VER0),
	SV_IOCTL(SV_NR_QUERY_MR, sv_query_mr, sv_query_mr,
		 SV_QUERY_MR_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_OPEN_XRCD, sv_open_xrcd, sv_open_xrcd,
			SV_OPEN_XRCD_SIZE_VER0, SV_OBJ_XRCD, handle),
	SV_IOCTL(SV_NR_CLOSE_XRCD, sv_close_xrcd, sv_close_xrcd,
		 SV_CLOSE_XRCD_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_ALLOC_DM, sv_alloc_dm, sv_alloc_dm,
			SV_ALLOC_DM_SIZE_VER0, SV_OBJ_DM, dm_handle),
	SV_IOCTL(SV_NR_FREE_DM, sv_free_dm, sv_free_dm, SV_FREE_DM_SIZE_VER0),
	SV_IOCTL(SV_NR_QUERY_DM, sv_query_dm, sv_query_dm,
		 SV_QUERY_DM_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_REG_DM_MR, sv_reg_dm_mr, sv_reg_dm_mr,
			SV_REG_DM_MR_SIZE_VER0, SV_OBJ_MR, mr_handle),
	SV_IOCTL_CREATE(SV_NR_REG_DMABUF_MR, sv_reg_dmabuf_mr,
			sv_reg_dmabuf_mr, SV_REG_DMABUF_MR_SIZE_VER0,
			SV_OBJ_MR, mr_handle),
	SV_IOCTL_CREATE(SV_NR_ALLOC_NULL_MR, sv_alloc_null_mr,
			sv_alloc_null_mr, SV_ALLOC_NULL_MR_SIZE_VER0, SV_OBJ_MR,
			mr_handle),
	/* They pin user pages: f->lock only around the commit (mr/mr.c). */
	[SV_NR_REG_MR] = { .handler = sv_reg_mr,
			   .min_size = SV_REG_MR_SIZE_VER0,
			   .size = sizeof(struct sv_reg_mr), .unlocked = true,
			   .creates = BIT(SV_OBJ_MR),
			   .handle_off = offsetof(struct sv_reg_mr, mr_handle) },
	SV_IOCTL_UNLOCKED(SV_NR_REREG_MR, sv_rereg_mr, sv_rereg_mr,
			  SV_REREG_MR_SIZE_VER0),
	/* Faults ODP pages in: without f->lock, as the two above. */
	SV_IOCTL_UNLOCKED(SV_NR_ADVISE_MR, sv_advise_mr, sv_advise_mr,
			  SV_ADVISE_MR_SIZE_VER0),
	SV_IOCTL(SV_NR_DEREG_MR, sv_dereg_mr, sv_dereg_mr,
		 SV_DEREG_MR_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_CREATE_MKEY, sv_create_mkey, sv_create_mkey,
			SV_CREATE_MKEY_SIZE_VER0, SV_OBJ_MKEY, mkey_handle),
	SV_IOCTL(SV_NR_DESTROY_MKEY, sv_destroy_mkey, sv_destroy_mkey,
		 SV_DESTROY_MKEY_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_ALLOC_MW, sv_alloc_mw, sv_alloc_mw,
			SV_ALLOC_MW_SIZE_VER0, SV_OBJ_MW, mw_handle),
	SV_IOCTL(SV_NR_DEALLOC_MW, sv_dealloc_mw, sv_dealloc_mw,
		 SV_DEALLOC_MW_SIZE_VER0),
	SV_IOCTL(SV_NR_QUERY_DEVICE, sv_query_device, sv_query_device,
		 SV_QUERY_DEVICE_SIZE_VER0),
	SV_IOCTL(SV_NR_QUERY_PORT, sv_query_port, sv_query_port,
		 SV_QUERY_PORT_SIZE_VER0),
	SV_IOCTL(SV_NR_QUERY_GID, sv_query_gid, sv_query_gid,
		 SV_QUERY_GID_SIZE_VER0),
	SV_IOCTL(SV_NR_QUERY_PKEY, sv_query_pkey, sv_query_pkey,
		 SV_QUERY_PKEY_SIZE_VER0),
	/* QP, SRQ, AH, multicast */
	SV_IOCTL_CREATE_OF(SV_NR_CREATE_QP, sv_create_qp, sv_create_qp,
			   SV_CREATE_QP_SIZE_VER0,
			   BIT(SV_OBJ_QP) | BIT(SV_OBJ_XRC_QP), handle),
	SV_IOCTL(SV_NR_MODIFY_QP, sv_modify_qp, sv_modify_qp,
		 SV_MODIFY_QP_SIZE_VER0),
	SV_IOCTL(SV_NR_QUERY_QP, sv_query_qp, sv_query_qp,
		 SV_QUERY_QP_SIZE_VER0),
	SV_IOCTL(SV_NR_DESTROY_QP, sv_destroy_qp, sv_destroy_qp,
		 SV_DESTROY_QP_SIZE_VER0),
	SV_IOCTL(SV_NR_RESET_DCI_STREAM, sv_reset_dci_stream,
		 sv_reset_dci_stream, SV_RESET_DCI_STREAM_SIZE_VER0),
	SV_IOCTL(SV_NR_QP_RATE_LIMIT, sv_qp_rate_limit, sv_qp_rate_limit,
		 SV_QP_RATE_LIMIT_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_OPEN_QP, sv_open_qp, sv_open_qp,
			SV_OPEN_QP_SIZE_VER0, SV_OBJ_XRC_QP, handle),
	SV_IOCTL_CREATE(SV_NR_CREATE_SRQ, sv_create_srq, sv_create_srq,
			SV_CREATE_SRQ_SIZE_VER0, SV_OBJ_SRQ, handle),
	SV_IOCTL(SV_NR_MODIFY_SRQ, sv_modify_srq, sv_modify_srq,
		 SV_MODIFY_SRQ_SIZE_VER0),
	SV_IOCTL(SV_NR_QUERY_SRQ, sv_query_srq, sv_query_srq,
		 SV_QUERY_SRQ_SIZE_VER0),
	SV_IOCTL(SV_NR_DESTROY_SRQ, sv_destroy_srq, sv_destroy_srq,
		 SV_DESTROY_SRQ_SIZE_VER0),
	SV_IOCTL(SV_NR_POST_SRQ_OPS, sv_post_srq_ops, sv_post_srq_ops,
		 SV_POST_SRQ_OPS_SIZE_VER0),
	SV_IOCTL(SV_NR_MOVE_RING, sv_move_ring, sv_move_ring,
		 SV_MOVE_RING_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_CREATE_AH, sv_create_ah, sv_create_ah,
			SV_CREATE_AH_SIZE_VER0, SV_OBJ_AH, handle),
	SV_IOCTL(SV_NR_DESTROY_AH, sv_destroy_ah, sv_destroy_ah,
		 SV_DESTROY_AH_SIZE_VER0),
	SV_IOCTL(SV_NR_ATTACH_MCAST, sv_attach_mcast, sv_mcast,
		 SV_MCAST_SIZE_VER0),
	SV_IOCTL(SV_NR_DETACH_MCAST, sv_detach_mcast, sv_mcast,
		 SV_MCAST_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_CREATE_COMP_CHANNEL, sv_create_comp_channel,
			sv_create_comp_channel,
			SV_CREATE_COMP_CHANNEL_SIZE_VER0, SV_OBJ_COMP_CHANNEL,
			handle),
	SV_IOCTL(SV_NR_DESTROY_COMP_CHANNEL, sv_destroy_comp_channel,
		 sv_destroy_comp_channel, SV_DESTROY_COMP_CHANNEL_SIZE_VER0),
	SV_IOCTL(SV_NR_GET_ASYNC_FD, sv_get_async_fd, sv_get_async_fd,
		 SV_GET_ASYNC_FD_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_CREATE_CQ, sv_create_cq, sv_create_cq,
			SV_CREATE_CQ_SIZE_VER0, SV_OBJ_CQ, handle),
	SV_IOCTL(SV_NR_RESIZE_CQ, sv_resize_cq, sv_resize_cq,
		 SV_RESIZE_CQ_SIZE_VER0),
	SV_IOCTL(SV_NR_MODIFY_CQ, sv_modify_cq, sv_modify_cq,
		 SV_MODIFY_CQ_SIZE_VER0),
	SV_IOCTL(SV_NR_DESTROY_CQ, sv_destroy_cq, sv_destroy_cq,
		 SV_DESTROY_CQ_SIZE_VER0),
	SV_IOCTL(SV_NR_TEST_CQ_PUSH, sv_test_cq_push, sv_test_cq_push,
		 SV_TEST_CQ_PUSH_SIZE_VER0),
	/* data path */
	SV_IOCTL_CREATE(SV_NR_CREATE_FLOW, sv_create_flow, sv_create_flow,
			SV_CREATE_FLOW_SIZE_VER0, SV_OBJ_FLOW, handle),
	SV_IOCTL(SV_NR_DESTROY_FLOW, sv_destroy_flow, sv_destroy_flow,
		 SV_DESTROY_FLOW_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_CREATE_FLOW_MATCHER, sv_create_flow_matcher,
			sv_create_flow_matcher,
			SV_CREATE_FLOW_MATCHER_SIZE_VER0, SV_OBJ_FLOW_MATCHER,
			handle),
	SV_IOCTL(SV_NR_DESTROY_FLOW_MATCHER, sv_destroy_flow_matcher,
		 sv_destroy_flow_matcher, SV_DESTROY_FLOW_MATCHER_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_CREATE_STEER_TABLE, sv_create_steer_table,
			sv_create_steer_table, SV_CREATE_STEER_TABLE_SIZE_VER0,
			SV_OBJ_STEER_TABLE, handle),
	SV_IOCTL(SV_NR_DESTROY_STEER_TABLE, sv_destroy_steer_table,
		 sv_destroy_steer_obj, SV_DESTROY_STEER_OBJ_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_CREATE_STEER_ANCHOR, sv_create_steer_anchor,
			sv_create_steer_anchor,
			SV_CREATE_STEER_ANCHOR_SIZE_VER0, SV_OBJ_STEER_ANCHOR,
			handle),
	SV_IOCTL(SV_NR_DESTROY_STEER_ANCHOR, sv_destroy_steer_anchor,
		 sv_destroy_steer_obj, SV_DESTROY_STEER_OBJ_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_CREATE_STEER_ACTION, sv_create_steer_action,
			sv_create_steer_action,
			SV_CREATE_STEER_ACTION_SIZE_VER0, SV_OBJ_STEER_ACTION,
			handle),
	SV_IOCTL(SV_NR_DESTROY_STEER_ACTION, sv_destroy_steer_action,
		 sv_destroy_steer_obj, SV_DESTROY_STEER_OBJ_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_CREATE_COUNTERS, sv_create_counters,
			sv_create_counters, SV_CREATE_COUNTERS_SIZE_VER0,
			SV_OBJ_COUNTERS, handle),
	SV_IOCTL(SV_NR_DESTROY_COUNTERS, sv_destroy_counters,
		 sv_destroy_counters, SV_DESTROY_COUNTERS_SIZE_VER0),
	SV_IOCTL(SV_NR_ATTACH_COUNTERS, sv_attach_counters, sv_attach_counters,
		 SV_ATTACH_COUNTERS_SIZE_VER0),
	/* It writes the values out without f->lock (counters.c). */
	SV_IOCTL_UNLOCKED(SV_NR_READ_COUNTERS, sv_read_counters,
			  sv_read_counters, SV_READ_COUNTERS_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_CREATE_WQ, sv_create_wq, sv_create_wq,
			SV_CREATE_WQ_SIZE_VER0, SV_OBJ_WQ, handle),
	SV_IOCTL(SV_NR_MODIFY_WQ, sv_modify_wq, sv_modify_wq,
		 SV_MODIFY_WQ_SIZE_VER0),
	SV_IOCTL(SV_NR_DESTROY_WQ, sv_destroy_wq, sv_destroy_wq,
		 SV_DESTROY_WQ_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_CREATE_RWQ_IND_TBL, sv_create_rwq_ind_tbl,
			sv_create_rwq_ind_tbl, SV_CREATE_RWQ_IND_TBL_SIZE_VER0,
			SV_OBJ_RWQ_IND_TBL, handle),
	SV_IOCTL(SV_NR_DESTROY_RWQ_IND_TBL, sv_destroy_rwq_ind_tbl,
		 sv_destroy_rwq_ind_tbl, SV_DESTROY_RWQ_IND_TBL_SIZE_VER0),
	SV_IOCTL_CREATE(SV_NR_CREATE_RSS_QP, sv_create_rss_qp, sv_create_rss_qp,
			SV_CREATE_RSS_QP_SIZE_VER0, SV_OBJ_QP, handle),
	SV_IOCTL(SV_NR_MAP_WQ, sv_map_wq, sv_map_wq, SV_MAP_WQ_SIZE_VER0),
	SV_IOCTL(SV_NR_MAP_DOORBELL, sv_map_doorbell, sv_map_doorbell,
		 SV_MAP_DOORBELL_SIZE_VER0),
	/* The data path's syscall: no lock against the control path. */
	[SV_NR_DOORBELL] = { .handler = sv_ring_doorbell,
			     .min_size = SV_RING_DOORBELL_SIZE_VER0,
			     .size = sizeof(struct sv_ring_doorbell),
			     .unlocked = true },
};

/*
 * Once its device is unregistered (link del, the netdev went away), a file
 * can still query and destroy what it has; everything else is EIO.
 */
static bool sv_ioctl_dead_ok(unsigned int nr)
{
	switch (nr) {
	case SV_NR_QUERY_ABI:
	case SV_NR_QUERY_DEVICE:
	case SV_NR_QUERY_PORT:
	case SV_NR_QUERY_GID:
	case SV_NR_QUERY_PKEY:
	case SV_NR_QUERY_QP:
	case SV_NR_QUERY_SRQ:
	case SV_NR_GET_ASYNC_FD:
	case SV_NR_DEALLOC_PD:
	case SV_NR_DEREG_MR:
	case SV_NR_DESTROY_CQ:
	case SV_NR_DESTROY_COMP_CHANNEL:
	case SV_NR_DESTROY_QP:
	case SV_NR_DESTROY_SRQ:
	case SV_NR_DESTROY_AH:
	case SV_NR_DETACH_MCAST:
	case SV_NR_DESTROY_FLOW:
	case SV_NR_DESTROY_COUNTERS:
	case SV_NR_READ_COUNTERS:
	case SV_NR_DESTROY_WQ:
	case SV_NR_DESTROY_RWQ_IND_TBL:
	case SV_NR_CLOSE_XRCD:
		return true;
	default:
		return false;
	}
}

/*
 * An fd a handler made (a completion channel's, the async events'): it is
 * installed only once the result has reached userspace, so that a failed
 * copy-out leaves no fd behind. Under f->lock, which sv_ioctl() holds
 * from the handler until it has taken the fd back.
 */
void sv_file_defer_fd(struct sv_file *f, int fd, struct file *filp)
{
	lockdep_assert_held(&f->lock);
	f->new_fd = fd;
	f->new_filp = filp;
}

/*
 * Copy a successful command's result out. If that fails, undo what the
 * command made, as the RDMA core's ioctl path does, so that no object or
 * fd is left that the caller has no handle for. Without f->lock: the
 * caller's memory may fault for as long as it likes (userfaultfd, FUSE),
 * and f->lock must never wait on that. Only another thread of the same
 * file that guessed the new handle could name the object before the undo;
 * it then stays, as that thread's.
 */
static long sv_ioctl_finish(struct sv_file *f, const struct sv_ioctl_desc *d,
			    void __user *uarg, void *karg, u32 usize,
			    struct file *nfilp, int nfd)
{
	if (!copy_to_user(uarg, karg, min_t(u32, usize, d->size))) {
		if (nfilp)
			fd_install(nfd, nfilp);
		return 0;
	}
	if (d->creates) {
		mutex_lock(&f->lock);
		sv_uobj_destroy_of(f, *(u32 *)(karg + d->handle_off),
				   d->creates);
		mutex_unlock(&f->lock);
	}
	if (nfilp) {
		fput(nfilp);
		put_unused_fd(nfd);
	}
	return -EFAULT;
}

/*
 * The data path's syscall, a post's ring, on its own path: this ABI's
 * struct copied in at a size known when compiling (no object size check
 * at run time), and nothing to copy out. Other sizes get what the
 * generic path gives them (a shorter struct zero-filled, a larger one's
 * tail zero).
 */
static long sv_ioctl_doorbell(struct sv_file *f, void __user *uarg)
{
	struct sv_ring_doorbell d;
	u32 usize;
	int ret;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize == sizeof(d)) {
		if (copy_from_user(&d, uarg, sizeof(d)))
			return -EFAULT;
	} else {
		if (usize < SV_RING_DOORBELL_SIZE_VER0 ||
		    usize > SV_MAX_ARG_SIZE)
			return -EINVAL;
		ret = copy_struct_from_user(&d, sizeof(d), uarg, usize);
		if (ret)
			return ret;
	}
	d.size = usize;
	return sv_ring_doorbell(f, &d);
}

static long sv_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct sv_file *f = filp->private_data;
	void __user *uarg = (void __user *)arg;
	const struct sv_ioctl_desc *d;
	struct file *nfilp = NULL;
	int nfd = -1;
	u64 small[16];		/* most commands: no allocation */
	u32 usize;
	void *karg;
	long ret;

	if (cmd == SV_IOC_DOORBELL)
		return sv_ioctl_doorbell(f, uarg);
	if (_IOC_TYPE(cmd) != SV_IOC_MAGIC ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE) ||
	    _IOC_NR(cmd) >= ARRAY_SIZE(sv_ioctls))
		return -ENOTTY;
	d = &sv_ioctls[_IOC_NR(cmd)];
	if (!d->handler)
		return -ENOTTY;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < d->min_size || usize > SV_MAX_ARG_SIZE)
		return -EINVAL;

	if (d->size <= sizeof(small)) {
		karg = small;
	} else {
		karg = kzalloc(d->size, GFP_KERNEL);
		if (!karg)
			return -ENOMEM;
	}
	ret = copy_struct_from_user(karg, d->size, uarg, usize);
	if (ret)
		goto out;
	/* The size field is the caller's; handlers never see another. */
	*(u32 *)karg = usize;

	if (d->unlocked) {
		/* Its own locking (the doorbell, MR registration). */
		ret = d->handler(f, karg);
	} else {
		mutex_lock(&f->lock);
		if (READ_ONCE(f->sdev->dead) &&
		    !sv_ioctl_dead_ok(_IOC_NR(cmd)))
			ret = -EIO;
		else
			ret = d->handler(f, karg);
		nfilp = f->new_filp;
		nfd = f->new_fd;
		f->new_filp = NULL;
		mutex_unlock(&f->lock);
	}
	if (!ret)
		ret = sv_ioctl_finish(f, d, uarg, karg, usize, nfilp, nfd);
out:
	if (karg != small)
		kfree(karg);
	return ret;
}

static int sv_release(struct inode *inode, struct file *filp);

static int sv_open(struct inode *inode, struct file *filp)
{
	struct sv_device *sdev = container_of(inode->i_cdev,
					      struct sv_device, cdev);
	struct sv_file *f;
	int ret;

	/*
	 * A device is for its network namespace only, as in the RDMA core's
	 * exclusive mode: its node may be visible elsewhere, not usable.
	 */
	if (!sv_device_in_net(sdev, current->nsproxy->net_ns))
		return -EPERM;
	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return -ENOMEM;
	/* The rdma cgroup's hca_handle: EAGAIN beyond rdma.max. */
	f->sdev = sdev;
	/* The file's owner: engine time is shared out per uid (engine.c). */
	f->uid = filp->f_cred->uid;
	ret = sv_limits_file_open(f);
	if (ret) {
		kfree(f);
		return ret;
	}
	if (sv_event_file_init(f)) {
		sv_limits_file_release(f);
		kfree(f);
		return -ENOMEM;
	}
	sv_mmap_file_init(f);
	get_device(&sdev->dev);
	mutex_init(&f->lock);
	xa_init_flags(&f->objs, XA_FLAGS_ALLOC1);
	filp->private_data = f;
	mutex_lock(&sdev->files_lock);
	if (sdev->dead) {
		/* Unregistered while this open was on its way. */
		mutex_unlock(&sdev->files_lock);
		INIT_LIST_HEAD(&f->dev_node);
		sv_release(inode, filp);
		return -ENODEV;
	}
	f->id = sdev->next_file_id++;
	list_add_tail(&f->dev_node, &sdev->files);
	mutex_unlock(&sdev->files_lock);
	return nonseekable_open(inode, filp);
}

static int sv_release(struct inode *inode, struct file *filp)
{
	struct sv_file *f = filp->private_data;
	struct sv_device *sdev = f->sdev;

	mutex_lock(&sdev->files_lock);
	list_del_init(&f->dev_node);
	mutex_unlock(&sdev->files_lock);
	sv_uobj_destroy_all(f);
	sv_engine_detach(f);	/* after the QPs: see engine.c */
	xa_destroy(&f->objs);
	sv_mmap_file_cleanup(f);
	sv_event_file_cleanup(f);
	sv_limits_file_release(f);
	mutex_destroy(&f->lock);
	put_device(&f->sdev->dev);
	kfree(f);
	return 0;
}

const struct file_operations sv_fops = {
	.owner = THIS_MODULE,
	.open = sv_open,
	.release = sv_release,
	.unlocked_ioctl = sv_ioctl,
	.mmap = sv_mmap,
	.compat_ioctl = compat_ptr_ioctl,
};
