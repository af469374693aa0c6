// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs object limits: how many objects of each type a device holds,
 * how many of them one user may hold, and the rdma cgroup.
 *
 * Creating an object charges it three times, in this order, each undone
 * if a later one fails (sv_charge(), sv_uncharge()):
 *
 * 1. The device's count of the type, sdev->nobjs[type], against the
 *    device limit query_device reports (max_pd, max_mr, max_cq, max_qp,
 *    max_srq, max_ah; completion channels have max_cq's, which verbs has
 *    no attribute for). The count is raised with a compare-and-exchange
 *    that never passes the limit, so racing creates in any number of
 *    files end at exactly the limit. Beyond it: ENOMEM. Those six limits
 *    are the device's: a new device takes the module parameters max_pd
 *    ... max_ah, and svctl dev set changes them at run time (a limit set
 *    below what the device holds stops new creates until enough are
 *    gone; nothing is destroyed). Memory bounds them otherwise: every
 *    object is charged to its creator's memory cgroup.
 * 2. The creating user's share of that limit: a real uid may hold at most
 *    user_share percent (module parameter, default 50) of each type on a
 *    device, so that one user cannot take a device from everybody else.
 *    Callers with CAP_SYS_RESOURCE are exempt (as from other resource
 *    limits) and not counted. Beyond: EAGAIN.
 * 3. The caller's rdma cgroup: hca_object, as uverbs charges every object
 *    it makes by handle (not completion channels, which are file
 *    descriptors there too). Every open file is an hca_handle (uverbs
 *    charges its context). Beyond rdma.max: EAGAIN, as uverbs returns.
 *    The device is registered with the rdma cgroup under its own name
 *    ("softverbs0 hca_handle=2 hca_object=100" in rdma.max) from its
 *    creation to its release, when no file and no object is left.
 *
 * A charge is recorded in a struct sv_charge (each object's uobj has
 * one) and returned when the object is destroyed (uobj.c), so it follows
 * the object, not the process. Everything here runs in process context:
 * creates and destroys are ioctls or the release of the file.
 */
#include <linux/capability.h>
#include <linux/cgroup_rdma.h>
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "sv.h"

/* Per device: its limits, the users that hold objects on it. */
struct sv_dev_limits {
	u32 max[SV_OBJ_MAX];		/* 0: none; READ_ONCE (sv_limit_of()) */
	struct mutex lock;		/* users and their counts */
	struct xarray users;		/* uid -> struct sv_user_objs */
#if IS_ENABLED(CONFIG_CGROUP_RDMA)
	struct rdmacg_device cg_dev;
#endif
};

/* One uid's objects on one device; freed when it holds none. */
struct sv_user_objs {
	kuid_t uid;
	u32 n[SV_OBJ_MAX];
	u32 total;
};

static unsigned int user_share = 50;

static int sv_user_share_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(val, 0, &n);
	if (ret)
		return ret;
	if (n < 1 || n > 100)
		return -EINVAL;
	WRITE_ONCE(user_share, n);
	return 0;
}

static const struct kernel_param_ops sv_user_share_ops = {
	.set = sv_user_share_set,
	.get = param_get_uint,
};

module_param_cb(user_share, &sv_user_share_ops, &user_share, 0644);
MODULE_PARM_DESC(user_share,
		 "Percent of each per-device object limit one uid may hold, 1-100 (default 50; 100: no per-user limit; CAP_SYS_RESOURCE is exempt)");

/*
 * A new device's limits of the six verbs reports (module parameters, as
 * large as a ConnectX's or larger: memory bounds them first).
 */
static unsigned int sv_obj_default[SV_OBJ_MAX] = {
	[SV_OBJ_PD] = 262144,
	[SV_OBJ_MR] = 1048576,
	[SV_OBJ_CQ] = 262144,
	[SV_OBJ_QP] = 262144,
	[SV_OBJ_SRQ] = 262144,
	[SV_OBJ_AH] = 262144,
};

/*
 * Set a module parameter of limits (here and depth.c) to val if it is a
 * number in 1..max: ERANGE outside, EINVAL for anything not a number.
 */
int sv_limit_param_set(const char *val, const struct kernel_param *kp,
		       unsigned int max)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(val, 0, &n);
	if (ret)
		return ret;
	if (n < 1 || n > max)
		return -ERANGE;
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

static int sv_obj_default_set(const char *val, const struct kernel_param *kp)
{
	return sv_limit_param_set(val, kp, SV_NL_OBJ_LIMIT_MAX);
}

static const struct kernel_param_ops sv_obj_default_ops = {
	.set = sv_obj_default_set,
	.get = param_get_uint,
};

module_param_cb(max_pd, &sv_obj_default_ops, &sv_obj_default[SV_OBJ_PD],
		0644);
MODULE_PARM_DESC(max_pd, "A new device's max_pd (default 262144)");
module_param_cb(max_mr, &sv_obj_default_ops, &sv_obj_default[SV_OBJ_MR],
		0644);
MODULE_PARM_DESC(max_mr, "A new device's max_mr (default 1048576)");
module_param_cb(max_cq, &sv_obj_default_ops, &sv_obj_default[SV_OBJ_CQ],
		0644);
MODULE_PARM_DESC(max_cq, "A new device's max_cq (default 262144)");
module_param_cb(max_qp, &sv_obj_default_ops, &sv_obj_default[SV_OBJ_QP],
		0644);
MODULE_PARM_DESC(max_qp, "A new device's max_qp (default 262144)");
module_param_cb(max_srq, &sv_obj_default_ops, &sv_obj_default[SV_OBJ_SRQ],
		0644);
MODULE_PARM_DESC(max_srq, "A new device's max_srq (default 262144)");
module_param_cb(max_ah, &sv_obj_default_ops, &sv_obj_default[SV_OBJ_AH],
		0644);
MODULE_PARM_DESC(max_ah,
		 "A new device's max_ah (default 262144; each 1-16777213, svctl dev set changes a device's)");

/* The fixed limits of the other types; 0: none of its own. */
static const u32 sv_obj_fixed[SV_OBJ_MAX] = {
	[SV_OBJ_FLOW] = SV_MAX_FLOW,
	[SV_OBJ_COUNTERS] = SV_MAX_COUNTERS,
	[SV_OBJ_FLOW_MATCHER] = SV_MAX_FLOW_MATCHER,
	[SV_OBJ_STEER_TABLE] = SV_MAX_STEER_TABLE,
	[SV_OBJ_STEER_ANCHOR] = SV_MAX_STEER_ANCHOR,
	[SV_OBJ_STEER_ACTION] = SV_MAX_STEER_ACTION,
	[SV_OBJ_WQ] = SV_MAX_WQ,
	[SV_OBJ_RWQ_IND_TBL] = SV_MAX_RWQ_IND_TBL,
	[SV_OBJ_DM] = SV_MAX_DM,
	[SV_OBJ_XRCD] = SV_MAX_XRCD,
};

/* A type's limit on the device; completion channels have max_cq's. */
static u32 sv_limit_of(struct sv_dev_limits *l, enum sv_obj_type type)
{
	if (type == SV_OBJ_COMP_CHANNEL)
		type = SV_OBJ_CQ;
	return READ_ONCE(l->max[type]);
}

u32 sv_obj_limit(struct sv_device *sdev, enum sv_obj_type type)
{
	if (type <= SV_OBJ_NONE || type >= SV_OBJ_MAX)
		return 0;
	return sv_limit_of(sdev->limits, type);
}

/*
 * Change one of the device's six limits (svctl dev set: the netlink
 * policy has checked n is in 1..SV_NL_OBJ_LIMIT_MAX).
 */
void sv_obj_limit_set(struct sv_device *sdev, enum sv_obj_type type, u32 n)
{
	if (!WARN_ON_ONCE(type <= SV_OBJ_NONE || type >= SV_OBJ_MAX ||
			  !sv_obj_default[type]))
		WRITE_ONCE(sdev->limits->max[type], n);
}

/* Raise *v unless that would pass max. */
static bool sv_atomic_inc_below(atomic_t *v, int max)
{
	int c = atomic_read(v);

	do {
		if (c >= max)
			return false;
	} while (!atomic_try_cmpxchg(v, &c, c + 1));
	return true;
}

static u32 sv_user_max(struct sv_dev_limits *l, enum sv_obj_type type)
{
	u32 max = sv_limit_of(l, type);
	u32 share = READ_ONCE(user_share);

	if (!max || share >= 100)
		return 0;
	return max_t(u32, 1, (u64)max * share / 100);
}

/* Count one object of type for current's uid; the user, or an ERR_PTR. */
static struct sv_user_objs *sv_user_charge(struct sv_dev_limits *l,
					   enum sv_obj_type type)
{
	u32 max = sv_user_max(l, type);
	kuid_t uid = current_uid();
	struct sv_user_objs *u;
	int ret;

	if (!max || ns_capable_noaudit(&init_user_ns, CAP_SYS_RESOURCE))
		return NULL;
	mutex_lock(&l->lock);
	u = xa_load(&l->users, __kuid_val(uid));
	if (!u) {
		u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
		if (!u) {
			u = ERR_PTR(-ENOMEM);
			goto out;
		}
		u->uid = uid;
		ret = xa_err(xa_store(&l->users, __kuid_val(uid), u,
				      GFP_KERNEL_ACCOUNT));
		if (ret) {
			kfree(u);
			u = ERR_PTR(ret);
			goto out;
		}
	}
	if (u->n[type] >= max) {
		/* Not a new entry: it holds at least one object. */
		u = ERR_PTR(-EAGAIN);
		goto out;
	}
	u->n[type]++;
	u->total++;
out:
	mutex_unlock(&l->lock);
	return u;
}

static void sv_user_uncharge(struct sv_dev_limits *l, struct sv_user_objs *u,
			     enum sv_obj_type type)
{
	mutex_lock(&l->lock);
	u->n[type]--;
	if (!--u->total) {
		xa_erase(&l->users, __kuid_val(u->uid));
		kfree(u);
	}
	mutex_unlock(&l->lock);
}

#if IS_ENABLED(CONFIG_CGROUP_RDMA)
/* uverbs charges objects it names by handle; channels are fds there. */
static bool sv_obj_in_rdmacg(enum sv_obj_type type)
{
	return type != SV_OBJ_COMP_CHANNEL;
}
#endif

/**
 * sv_charge - count a new object of a device against its limits
 * @f: the file creating it, on behalf of current
 * @type: the object's type
 * @c: where the charge is recorded; zeroed (not charged) on entry
 *
 * Call before building the object and undo with sv_uncharge() if the
 * create fails; sv_uobj_add() takes a charged object as it is (and
 * charges one that is not), sv_uobj_destroy() returns the charge.
 * Returns 0, -ENOMEM (the device holds its limit of the type), -EAGAIN
 * (the user's share or the rdma cgroup is exhausted), or -ENOMEM.
 */
int sv_charge(struct sv_file *f, enum sv_obj_type type, struct sv_charge *c)
{
	struct sv_device *sdev = f->sdev;
	struct sv_dev_limits *l = sdev->limits;
	struct sv_user_objs *user;
	u32 max = sv_obj_limit(sdev, type);

	lockdep_assert_held(&f->lock);
	if (WARN_ON_ONCE(c->sdev || type <= SV_OBJ_NONE || type >= SV_OBJ_MAX))
		return -EINVAL;
	if (!max)
		atomic_inc(&sdev->nobjs[type]);
	else if (!sv_atomic_inc_below(&sdev->nobjs[type], max))
		return -ENOMEM;
	user = sv_user_charge(l, type);
	if (IS_ERR(user)) {
		atomic_dec(&sdev->nobjs[type]);
		return PTR_ERR(user);
	}
	c->rdmacg = NULL;
#if IS_ENABLED(CONFIG_CGROUP_RDMA)
	if (sv_obj_in_rdmacg(type)) {
		int ret = rdmacg_try_charge(&c->rdmacg, &l->cg_dev,
					    RDMACG_RESOURCE_HCA_OBJECT);

		if (ret) {
			if (user)
				sv_user_uncharge(l, user, type);
			atomic_dec(&sdev->nobjs[type]);
			return ret;
		}
	}
#endif
	c->sdev = sdev;
	c->user = user;
	c->type = type;
	return 0;
}

/* Return what sv_charge() took; nothing if @c is not charged. */
void sv_uncharge(struct sv_charge *c)
{
	struct sv_device *sdev = c->sdev;

	if (!sdev)
		return;
#if IS_ENABLED(CONFIG_CGROUP_RDMA)
	if (c->rdmacg)
		rdmacg_uncharge(c->rdmacg, &sdev->limits->cg_dev,
				RDMACG_RESOURCE_HCA_OBJECT);
#endif
	if (c->user)
		sv_user_uncharge(sdev->limits, c->user, c->type);
	atomic_dec(&sdev->nobjs[c->type]);
	c->sdev = NULL;
	c->user = NULL;
	c->rdmacg = NULL;
}

/* A file being opened on behalf of current: one hca_handle. */
int sv_limits_file_open(struct sv_file *f)
{
#if IS_ENABLED(CONFIG_CGROUP_RDMA)
	return rdmacg_try_charge(&f->rdmacg, &f->sdev->limits->cg_dev,
				 RDMACG_RESOURCE_HCA_HANDLE);
#else
	return 0;
#endif
}

/* The file is released: its objects are gone, and so is its handle. */
void sv_limits_file_release(struct sv_file *f)
{
#if IS_ENABLED(CONFIG_CGROUP_RDMA)
	if (f->rdmacg)
		rdmacg_uncharge(f->rdmacg, &f->sdev->limits->cg_dev,
				RDMACG_RESOURCE_HCA_HANDLE);
	f->rdmacg = NULL;
#endif
}

/* A new device, named already: its user table, and the rdma cgroup. */
int sv_limits_device_init(struct sv_device *sdev)
{
	struct sv_dev_limits *l;
	int t;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	for (t = 0; t < SV_OBJ_MAX; t++)
		l->max[t] = READ_ONCE(sv_obj_default[t]) ?: sv_obj_fixed[t];
	mutex_init(&l->lock);
	xa_init(&l->users);
#if IS_ENABLED(CONFIG_CGROUP_RDMA)
	l->cg_dev.name = kstrdup(dev_name(&sdev->dev), GFP_KERNEL);
	if (!l->cg_dev.name) {
		kfree(l);
		return -ENOMEM;
	}
	rdmacg_register_device(&l->cg_dev);
#endif
	sdev->limits = l;
	return 0;
}

/* The device is released: no file, so no object, is left to uncharge. */
void sv_limits_device_fini(struct sv_device *sdev)
{
	struct sv_dev_limits *l = sdev->limits;

	if (!l)
		return;
#if IS_ENABLED(CONFIG_CGROUP_RDMA)
	rdmacg_unregister_device(&l->cg_dev);
	kfree(l->cg_dev.name);
#endif
	WARN_ON_ONCE(!xa_empty(&l->users));
	xa_destroy(&l->users);
	mutex_destroy(&l->lock);
	kfree(l);
	sdev->limits = NULL;
}

/*
 * Pinned memory: MR pages (mr/mr.c) and ring pages (mmap.c) are charged to
 * the creating process's mm->pinned_vm against RLIMIT_MEMLOCK, as the
 * RDMA core's umem does; CAP_IPC_LOCK lifts the limit, not the count.
 */
int sv_pinned_charge(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 pinned = atomic64_add_return(npages, &mm->pinned_vm);

	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

void sv_pinned_uncharge(struct mm_struct *mm, unsigned long npages)
{
	atomic64_sub(npages, &mm->pinned_vm);
}
