// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs multicast: UD QPs attach to and detach from multicast groups.
 *
 * The device keeps its groups (struct sv_mcast_grp: a GID and the QPs
 * attached to it), each QP the groups it is in; one attachment (struct
 * sv_mcast_attach) is on both lists. Everything is under sdev->mcast_lock.
 * Each attachment holds a usecnt on its QP, so a QP in a group cannot be
 * destroyed (EBUSY, as ibv_destroy_qp(3) says); closing the file detaches
 * everything.
 *
 * Delivering multicast packets to the attached QPs is the data path's
 * (exec.c), which gets them from sv_mcast_qps(); the wire's receive path
 * (softirq) reads the groups and their QPs under RCU (sv_mcast_member(),
 * sv_mcast_rcu_qps()), so both lists change with the _rcu list calls and
 * what leaves them is freed after a grace period.
 *
 * A device bound to a netdev joins each group on it (IGMP or MLD, so
 * that switches that snoop forward the group's frames) while the group
 * has QPs: a work item (mcast_work) does the joins and leaves under rtnl,
 * which attach and detach, called with locks rtnl nests outside of, may
 * not take. A group that lost its last QP while joined waits on
 * mcast_leaving for its leave. Unbinding leaves every group at once.
 *
 * The VLAN devices above the netdev that the device takes (netdev.c's
 * sv_vlan_add()) are joined the same: a group is joined on the netdev
 * and on each of them (sv_mcast_join()), and a VLAN device the device
 * takes or gives up later joins or leaves the joined groups
 * (sv_mcast_upper()), under rtnl, which keeps the set of those devices.
 */
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "sv.h"
#include "wire/wire.h"

struct sv_mcast_grp {
	struct list_head node;		/* in sdev->mcast_groups */
	struct list_head qps;		/* struct sv_mcast_attach */
	struct list_head leave;		/* in sdev->mcast_leaving */
	struct rcu_head rcu;
	u32 nqps;
	bool joined;			/* on the netdev (mcast_work) */
	u8 gid[16];
};

struct sv_mcast_attach {
	struct list_head grp_node;	/* in grp->qps */
	struct list_head qp_node;	/* in qp->mcast */
	struct sv_mcast_grp *grp;
	struct sv_qp *qp;
	struct rcu_head rcu;
};

/* The netdev's joins and leaves to do: mcast_lock held. */
static void sv_mcast_kick(struct sv_device *sdev)
{
	lockdep_assert_held(&sdev->mcast_lock);
	if (!sdev->mcast_unbound && READ_ONCE(sdev->ndev))
		mod_delayed_work(system_wq, &sdev->mcast_work, 0);
}

/*
 * Join (leave) @gid on @ndev and the VLAN devices above it that the
 * device takes: 0 if it joined the netdev (its VLAN devices' errors are
 * theirs: one without IP leaves nothing to undo). rtnl held.
 */
static int sv_mcast_join(struct sv_device *sdev, struct net_device *ndev,
			 const u8 *gid, bool join)
{
	struct net_device *upper;
	struct list_head *iter;
	int ret;

	ret = sv_wire_mc_join(ndev, gid, join);
	if (join && ret)
		return ret;
	netdev_for_each_upper_dev_rcu(ndev, upper, iter)
		if (sv_wire_upper_ours(sdev, upper))
			sv_wire_mc_join(upper, gid, join);
	return ret;
}

/*
 * Join the groups not joined yet, leave those gone (all of them if
 * @unbind), on ndev (NULL: none). rtnl and mcast_lock held.
 */
static void sv_mcast_sync(struct sv_device *sdev, struct net_device *ndev,
			  bool unbind)
{
	struct sv_mcast_grp *grp, *tmp;

	ASSERT_RTNL();
	lockdep_assert_held(&sdev->mcast_lock);
	list_for_each_entry(grp, &sdev->mcast_groups, node) {
		if (ndev && !unbind && !grp->joined)
			grp->joined = !sv_mcast_join(sdev, ndev, grp->gid,
						     true);
		else if (ndev && unbind && grp->joined)
			sv_mcast_join(sdev, ndev, grp->gid, false);
		if (unbind)
			grp->joined = false;
	}
	list_for_each_entry_safe(grp, tmp, &sdev->mcast_leaving, leave) {
		if (ndev && grp->joined)
			sv_mcast_join(sdev, ndev, grp->gid, false);
		list_del(&grp->leave);
		kfree_rcu(grp, rcu);
	}
}

static void sv_mcast_work(struct work_struct *work)
{
	struct sv_device *sdev = container_of(to_delayed_work(work),
					      struct sv_device, mcast_work);

	/* Unbinding holds rtnl while it cancels this: never wait for it. */
	if (!rtnl_trylock()) {
		queue_delayed_work(system_wq, &sdev->mcast_work, 1);
		return;
	}
	mutex_lock(&sdev->mcast_lock);
	if (!sdev->mcast_unbound)
		sv_mcast_sync(sdev, sdev->ndev, false);
	mutex_unlock(&sdev->mcast_lock);
	rtnl_unlock();
}

void sv_mcast_device_init(struct sv_device *sdev)
{
	mutex_init(&sdev->mcast_lock);
	INIT_LIST_HEAD(&sdev->mcast_groups);
	INIT_LIST_HEAD(&sdev->mcast_leaving);
	INIT_DELAYED_WORK(&sdev->mcast_work, sv_mcast_work);
}

/* The device is freed: unbound before (no work), no QP left. */
void sv_mcast_device_fini(struct sv_device *sdev)
{
	WARN_ON_ONCE(!list_empty(&sdev->mcast_leaving));
	mutex_destroy(&sdev->mcast_lock);
}

/**
 * sv_mcast_unbind - leave every group on the netdev the device leaves
 * @sdev: the device
 * @ndev: its netdev, still bound
 *
 * Nothing joins again afterwards. rtnl held.
 */
void sv_mcast_unbind(struct sv_device *sdev, struct net_device *ndev)
{
	ASSERT_RTNL();
	mutex_lock(&sdev->mcast_lock);
	sdev->mcast_unbound = true;
	sv_mcast_sync(sdev, ndev, true);
	mutex_unlock(&sdev->mcast_lock);
	cancel_delayed_work_sync(&sdev->mcast_work);
}

/**
 * sv_mcast_upper - a VLAN device the device takes or gives up
 * @sdev: the device, bound
 * @upper: the VLAN device, the device's (taken, or not given up yet)
 * @join: taken (join the joined groups on it), or given up (leave them)
 *
 * Groups waiting for their leave are joined there too, so that the
 * leave finds them. rtnl held.
 */
void sv_mcast_upper(struct sv_device *sdev, struct net_device *upper,
		    bool join)
{
	struct sv_mcast_grp *grp;

	ASSERT_RTNL();
	mutex_lock(&sdev->mcast_lock);
	if (!sdev->mcast_unbound) {
		list_for_each_entry(grp, &sdev->mcast_groups, node)
			if (grp->joined)
				sv_wire_mc_join(upper, grp->gid, join);
		list_for_each_entry(grp, &sdev->mcast_leaving, leave)
			if (grp->joined)
				sv_wire_mc_join(upper, grp->gid, join);
	}
	mutex_unlock(&sdev->mcast_lock);
}

/* ff00::/8, or an IPv4-mapped multicast address (::ffff:224.0.0.0/4). */
bool sv_gid_is_multicast(const u8 *gid)
{
	static const u8 v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (gid[0] == 0xff)
		return true;
	return !memcmp(gid, v4mapped, sizeof(v4mapped)) &&
	       (gid[12] & 0xf0) == 0xe0;
}

/* The group gid of sdev: under mcast_lock, or RCU (the receive path). */
static struct sv_mcast_grp *sv_mcast_grp_find(struct sv_device *sdev,
					      const u8 *gid)
{
	struct sv_mcast_grp *grp;

	list_for_each_entry_rcu(grp, &sdev->mcast_groups, node,
				lockdep_is_held(&sdev->mcast_lock))
		if (!memcmp(grp->gid, gid, sizeof(grp->gid)))
			return grp;
	return NULL;
}

static struct sv_mcast_attach *sv_mcast_find(struct sv_qp *qp, const u8 *gid)
{
	struct sv_mcast_attach *a;

	list_for_each_entry(a, &qp->mcast, qp_node)
		if (!memcmp(a->grp->gid, gid, sizeof(a->grp->gid)))
			return a;
	return NULL;
}

static void sv_mcast_unlink(struct sv_device *sdev, struct sv_mcast_attach *a)
{
	struct sv_mcast_grp *grp = a->grp;

	lockdep_assert_held(&sdev->mcast_lock);
	list_del(&a->qp_node);
	list_del_rcu(&a->grp_node);
	atomic_dec(&a->qp->uobj.usecnt);
	sdev->mcast_nattach--;
	kfree_rcu(a, rcu);
	if (!--grp->nqps) {
		list_del_rcu(&grp->node);
		sdev->mcast_ngroups--;
		if (grp->joined) {
			list_add_tail(&grp->leave, &sdev->mcast_leaving);
			sv_mcast_kick(sdev);
		} else {
			kfree_rcu(grp, rcu);
		}
	}
}

static int sv_mcast_attach(struct sv_device *sdev, struct sv_qp *qp,
			   const u8 *gid)
{
	struct sv_mcast_attach *a;
	struct sv_mcast_grp *grp;

	lockdep_assert_held(&sdev->mcast_lock);
	if (sv_mcast_find(qp, gid))
		return 0;	/* already a member: nothing changes */
	if (sdev->mcast_nattach >= SV_MAX_TOTAL_MCAST_QP_ATTACH)
		return -ENOMEM;
	grp = sv_mcast_grp_find(sdev, gid);
	if (grp && grp->nqps >= SV_MAX_MCAST_QP_ATTACH)
		return -ENOMEM;
	if (!grp && sdev->mcast_ngroups >= SV_MAX_MCAST_GRP)
		return -ENOMEM;

	a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	if (!a)
		return -ENOMEM;
	if (!grp) {
		grp = kzalloc(sizeof(*grp), GFP_KERNEL_ACCOUNT);
		if (!grp) {
			kfree(a);
			return -ENOMEM;
		}
		memcpy(grp->gid, gid, sizeof(grp->gid));
		INIT_LIST_HEAD(&grp->qps);
		list_add_tail_rcu(&grp->node, &sdev->mcast_groups);
		sdev->mcast_ngroups++;
		sv_mcast_kick(sdev);
	}
	a->grp = grp;
	a->qp = qp;
	list_add_tail_rcu(&a->grp_node, &grp->qps);
	list_add_tail(&a->qp_node, &qp->mcast);
	grp->nqps++;
	sdev->mcast_nattach++;
	atomic_inc(&qp->uobj.usecnt);
	return 0;
}

static int sv_mcast_cmd(struct sv_file *f, struct sv_mcast *m, bool attach)
{
	struct sv_device *sdev = f->sdev;
	struct sv_mcast_attach *a;
	struct sv_uobj *u;
	struct sv_qp *qp;
	int ret = 0;

	if (m->reserved)
		return -EINVAL;
	u = sv_uobj_get(f, m->qp_handle, SV_OBJ_QP);
	if (IS_ERR(u))
		return PTR_ERR(u);
	qp = container_of(u, struct sv_qp, uobj);

	mutex_lock(&sdev->mcast_lock);
	if (attach) {
		if (qp->qp_type != SV_QPT_UD || !sv_gid_is_multicast(m->gid))
			ret = -EINVAL;
		else
			ret = sv_mcast_attach(sdev, qp, m->gid);
	} else {
		a = sv_mcast_find(qp, m->gid);
		if (a)
			sv_mcast_unlink(sdev, a);
		else
			ret = -EINVAL;
	}
	mutex_unlock(&sdev->mcast_lock);
	sv_uobj_put(u);
	return ret;
}

int sv_attach_mcast(struct sv_file *f, void *arg)
{
	return sv_mcast_cmd(f, arg, true);
}

int sv_detach_mcast(struct sv_file *f, void *arg)
{
	return sv_mcast_cmd(f, arg, false);
}

/* The QP is being destroyed: leave every group. */
void sv_mcast_detach_all(struct sv_qp *qp)
{
	struct sv_device *sdev = qp->sdev;
	struct sv_mcast_attach *a, *tmp;

	mutex_lock(&sdev->mcast_lock);
	list_for_each_entry_safe(a, tmp, &qp->mcast, qp_node)
		sv_mcast_unlink(sdev, a);
	mutex_unlock(&sdev->mcast_lock);
}

/*
 * The data path: up to max QPs attached to the group gid, referenced
 * (sv_qp_put() each); their number. Process context.
 */
int sv_mcast_qps(struct sv_device *sdev, const u8 *gid, struct sv_qp **qps,
		 int max)
{
	struct sv_mcast_attach *a;
	struct sv_mcast_grp *grp;
	int n = 0;

	mutex_lock(&sdev->mcast_lock);
	grp = sv_mcast_grp_find(sdev, gid);
	if (grp) {
		list_for_each_entry(a, &grp->qps, grp_node) {
			if (n == max)
				break;
			if (kref_get_unless_zero(&a->qp->uobj.ref))
				qps[n++] = a->qp;
		}
	}
	mutex_unlock(&sdev->mcast_lock);
	return n;
}

/* Has the device a group gid? Under RCU (the wire's receive path). */
bool sv_mcast_member(struct sv_device *sdev, const u8 *gid)
{
	return sv_mcast_grp_find(sdev, gid);
}

/*
 * Up to max QPs attached to the group gid, unreferenced: under RCU, which
 * keeps them readable (a QP is freed after a grace period); their number.
 */
u32 sv_mcast_rcu_qps(struct sv_device *sdev, const u8 *gid,
		     struct sv_qp **qps, u32 max)
{
	struct sv_mcast_attach *a;
	struct sv_mcast_grp *grp;
	u32 n = 0;

	grp = sv_mcast_grp_find(sdev, gid);
	if (!grp)
		return 0;
	list_for_each_entry_rcu(a, &grp->qps, grp_node) {
		if (n == max)
			break;
		qps[n++] = a->qp;
	}
	return n;
}
