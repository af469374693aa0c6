// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs management plane: the "softverbs" generic netlink family
 * (uapi/softverbs-netlink.h). Link add/del/show binds devices to netdevs,
 * dev set changes tunables, resource and counter dumps show what the
 * devices hold.
 *
 * Dumps keep no pointers between calls: cb->args[] hold a cursor (device
 * index, file id, object handle) and every call looks things up again, so
 * devices, files and objects may come and go while a dump runs.
 *
 * Isolation, as the RDMA core's nldev in netns exclusive mode: a device
 * lives in one network namespace (sdev->net) and every command sees only
 * the devices of the caller's namespace (others are ENODEV, as if absent;
 * names are still global, so a name taken elsewhere is EEXIST). Resource
 * dumps show only objects made by processes of the caller's pid
 * namespace, with their pids as it sees them, and MR keys and addresses
 * only to CAP_NET_ADMIN (in the initial user namespace).
 *
 * A resource dump never sleeps on a file's lock (f->lock, held by the
 * file's control commands, which may wait for user memory) while it holds
 * a lock the host's network configuration needs (sv_devices_lock, which
 * the unregistration of a bound netdev takes under rtnl, and
 * sdev->files_lock, which port events take under rtnl): it holds no
 * sv_devices_lock at all, takes objects by reference out of the file's
 * table under its xarray lock, and only tries f->lock (for MR keys),
 * dropping every lock between tries. The steering objects need no file
 * lock: a flow's rule and actions are fixed at its creation, a WQ's state
 * and flags are read as they are, and a counters object keeps its list of
 * flows under a spinlock of its own (steer/counters.c).
 */
#include <linux/delay.h>
#include <linux/if_arp.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rtnetlink.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "compat.h"
#include "sv.h"
#include "steer/rss.h"

/* Not const: 6.1 policies point at a non-const range. */
static struct netlink_range_validation sv_limit_range = {
	.min = 1,
	.max = SV_NL_OBJ_LIMIT_MAX,
};

static struct netlink_range_validation sv_depth_range = {
	.min = 1,
	.max = SV_NL_DEPTH_MAX,
};

/*
 * The device limits dev set changes and dev show reports: object counts
 * (limits.c) and, with depth, queue depths (depth.c).
 */
static const struct sv_nl_limit {
	int attr;
	bool depth;
	int which;			/* enum sv_obj_type or sv_depth */
} sv_nl_limits[] = {
	{ SV_NL_ATTR_MAX_PD, false, SV_OBJ_PD },
	{ SV_NL_ATTR_MAX_MR, false, SV_OBJ_MR },
	{ SV_NL_ATTR_MAX_CQ, false, SV_OBJ_CQ },
	{ SV_NL_ATTR_MAX_QP, false, SV_OBJ_QP },
	{ SV_NL_ATTR_MAX_SRQ, false, SV_OBJ_SRQ },
	{ SV_NL_ATTR_MAX_AH, false, SV_OBJ_AH },
	{ SV_NL_ATTR_MAX_QP_WR, true, SV_DEPTH_QP_WR },
	{ SV_NL_ATTR_MAX_CQE, true, SV_DEPTH_CQE },
	{ SV_NL_ATTR_MAX_SRQ_WR, true, SV_DEPTH_SRQ_WR },
};

static u32 sv_nl_limit_get(struct sv_device *sdev,
			   const struct sv_nl_limit *l)
{
	return l->depth ? sv_depth(sdev, l->which) :
			  sv_obj_limit(sdev, l->which);
}

/* In range: the policy checked it. */
static void sv_nl_limit_set(struct sv_device *sdev,
			    const struct sv_nl_limit *l, u32 n)
{
	if (l->depth)
		sv_depth_set(sdev, l->which, n);
	else
		sv_obj_limit_set(sdev, l->which, n);
}

static struct netlink_range_validation sv_idle_range = {
	.min = 0,
	.max = SV_IDLE_US_MAX,
};

static const struct nla_policy sv_nl_policy[SV_NL_ATTR_MAX + 1] = {
	[SV_NL_ATTR_DEV_INDEX] = { .type = NLA_U32 },
	[SV_NL_ATTR_DEV_NAME] = { .type = NLA_NUL_STRING,
				  .len = SV_NL_DEV_NAME_MAX - 1 },
	[SV_NL_ATTR_NDEV_INDEX] = { .type = NLA_U32 },
	[SV_NL_ATTR_NDEV_NAME] = { .type = NLA_NUL_STRING,
				   .len = IFNAMSIZ - 1 },
	[SV_NL_ATTR_PORT] = NLA_POLICY_RANGE(NLA_U32, 1, SV_PHYS_PORT_CNT),
	[SV_NL_ATTR_PORT_STATE] = { .type = NLA_U8 },
	[SV_NL_ATTR_ACTIVE_MTU] = { .type = NLA_U32 },
	[SV_NL_ATTR_NDEV_MTU] = { .type = NLA_U32 },
	[SV_NL_ATTR_NODE_GUID] = { .type = NLA_U64 },
	[SV_NL_ATTR_MAC] = NLA_POLICY_EXACT_LEN(ETH_ALEN),
	[SV_NL_ATTR_IDLE_US] = NLA_POLICY_FULL_RANGE(NLA_U32, &sv_idle_range),
	[SV_NL_ATTR_PART_ID] = { .type = NLA_U32 },
	[SV_NL_ATTR_VENDOR_ID] = { .type = NLA_U32 },
	[SV_NL_ATTR_MAX_PD] = NLA_POLICY_FULL_RANGE(NLA_U32, &sv_limit_range),
	[SV_NL_ATTR_MAX_MR] = NLA_POLICY_FULL_RANGE(NLA_U32, &sv_limit_range),
	[SV_NL_ATTR_MAX_CQ] = NLA_POLICY_FULL_RANGE(NLA_U32, &sv_limit_range),
	[SV_NL_ATTR_MAX_QP] = NLA_POLICY_FULL_RANGE(NLA_U32, &sv_limit_range),
	[SV_NL_ATTR_MAX_SRQ] = NLA_POLICY_FULL_RANGE(NLA_U32, &sv_limit_range),
	[SV_NL_ATTR_MAX_AH] = NLA_POLICY_FULL_RANGE(NLA_U32, &sv_limit_range),
	[SV_NL_ATTR_MAX_QP_WR] = NLA_POLICY_FULL_RANGE(NLA_U32, &sv_depth_range),
	[SV_NL_ATTR_MAX_CQE] = NLA_POLICY_FULL_RANGE(NLA_U32, &sv_depth_range),
	[SV_NL_ATTR_MAX_SRQ_WR] = NLA_POLICY_FULL_RANGE(NLA_U32,
							&sv_depth_range),
	[SV_NL_ATTR_RES_TYPE] = NLA_POLICY_RANGE(NLA_U8, SV_NL_RES_PD,
						 SV_NL_RES_MAX),
	[SV_NL_ATTR_RES_HANDLE] = { .type = NLA_U32 },
	[SV_NL_ATTR_RES_PID] = { .type = NLA_U32 },
	[SV_NL_ATTR_RES_COMM] = { .type = NLA_NUL_STRING,
				  .len = TASK_COMM_LEN - 1 },
	[SV_NL_ATTR_RES_QPN] = { .type = NLA_U32 },
	[SV_NL_ATTR_RES_QP_TYPE] = { .type = NLA_U8 },
	[SV_NL_ATTR_RES_QP_STATE] = { .type = NLA_U8 },
	[SV_NL_ATTR_RES_LKEY] = { .type = NLA_U32 },
	[SV_NL_ATTR_RES_RKEY] = { .type = NLA_U32 },
	[SV_NL_ATTR_RES_IOVA] = { .type = NLA_U64 },
	[SV_NL_ATTR_RES_LENGTH] = { .type = NLA_U64 },
	[SV_NL_ATTR_RES_CQE] = { .type = NLA_U32 },
	[SV_NL_ATTR_RES_USECNT] = { .type = NLA_U32 },
	[SV_NL_ATTR_STATS] = { .type = NLA_NESTED },
	[SV_NL_ATTR_STAT_ENTRY] = { .type = NLA_NESTED },
	[SV_NL_ATTR_STAT_NAME] = { .type = NLA_NUL_STRING, .len = 31 },
	[SV_NL_ATTR_STAT_VALUE] = { .type = NLA_U64 },
	[SV_NL_ATTR_RES_FLOW_TYPE] = { .type = NLA_U8 },
	[SV_NL_ATTR_RES_FLOW_PRIORITY] = { .type = NLA_U16 },
	[SV_NL_ATTR_RES_FLOW_FLAGS] = { .type = NLA_U32 },
	[SV_NL_ATTR_RES_FLOW_NSPECS] = { .type = NLA_U8 },
	[SV_NL_ATTR_RES_FLOW_TAG] = { .type = NLA_U32 },
	[SV_NL_ATTR_RES_FLOW_DROP] = { .type = NLA_FLAG },
	[SV_NL_ATTR_RES_COUNTERS_HANDLE] = { .type = NLA_U32 },
	[SV_NL_ATTR_RES_WQN] = { .type = NLA_U32 },
	[SV_NL_ATTR_RES_WQ_STATE] = { .type = NLA_U8 },
	[SV_NL_ATTR_RES_WQ_FLAGS] = { .type = NLA_U32 },
	[SV_NL_ATTR_RES_CQ_HANDLE] = { .type = NLA_U32 },
	[SV_NL_ATTR_RES_LOG_SIZE] = { .type = NLA_U32 },
	[SV_NL_ATTR_RES_FLOWS] = { .type = NLA_NESTED },
	[SV_NL_ATTR_RES_FLOW_HANDLE] = { .type = NLA_U32 },
};

static struct genl_family sv_nl_family;

/* A required attribute: extack names it and says what is missing. */
#define SV_NL_REQUIRE(info, attr, msg) ({				\
	struct genl_info *__info = (info);				\
	int __attr = (attr);						\
	bool __missing = !__info->attrs[__attr];			\
									\
	if (__missing) {						\
		NL_SET_ERR_MSG(__info->extack, msg);			\
		NL_SET_ERR_ATTR_MISS(__info->extack, NULL, __attr);	\
	}								\
	__missing;							\
})

/*
 * Device names: up to 31 characters of [A-Za-z0-9_-] that start with "sv"
 * or "softverbs", so they are a file name in /dev/infiniband and in sysfs
 * and never one of the RDMA core's (uverbsN, rdma_cm, umadN, issmN) or of
 * another driver's devices.
 */
static bool sv_nl_name_ok(const char *name)
{
	const char *p;

	if (strncmp(name, "sv", 2) && strncmp(name, "softverbs", 9))
		return false;
	for (p = name; *p; p++)
		if (!isalnum(*p) && *p != '_' && *p != '-')
			return false;
	return true;
}

/*
 * Devices that the namespaces under one child of the initial user
 * namespace (a container, with every user namespace it nests) may have at
 * once; the initial user namespace has only the global SV_MAX_DEVICES.
 */
static unsigned int sv_max_userns_devices = 8;
module_param_named(max_userns_devices, sv_max_userns_devices, uint, 0644);
MODULE_PARM_DESC(max_userns_devices,
		 "Devices the network namespaces of one container (a user namespace below the initial one, nested ones included) may have (default 8)");

/* The user namespace a limit is counted in: a child of the initial one. */
static struct user_namespace *sv_nl_userns_top(struct user_namespace *ns)
{
	while (ns != &init_user_ns && ns->parent != &init_user_ns)
		ns = ns->parent;
	return ns;
}

/* Devices whose namespace is under @top. sv_devices_lock held. */
static unsigned int sv_nl_userns_devices(struct user_namespace *top)
{
	struct sv_device *sdev;
	unsigned long index;
	unsigned int n = 0;

	lockdep_assert_held(&sv_devices_lock);
	xa_for_each(&sv_devices, index, sdev)
		if (sv_nl_userns_top(read_pnet(&sdev->net)->user_ns) == top)
			n++;
	return n;
}

/*
 * Changing a device needs CAP_NET_ADMIN over the namespace it lives in
 * (its netdev's, or the initial one for a device without a netdev).
 */
static bool sv_nl_may_change(struct sk_buff *skb, struct sv_device *sdev)
{
	return netlink_ns_capable(skb, read_pnet(&sdev->net)->user_ns,
				  CAP_NET_ADMIN);
}

/*
 * What GENL_UNS_ADMIN_PERM checks, done here so the caller learns why:
 * CAP_NET_ADMIN in the user namespace owning the caller's network
 * namespace.
 */
static bool sv_nl_admin(struct sk_buff *skb, struct genl_info *info)
{
	if (netlink_ns_capable(skb, genl_info_net(info)->user_ns,
			       CAP_NET_ADMIN))
		return true;
	NL_SET_ERR_MSG(info->extack, "Operation needs CAP_NET_ADMIN");
	return false;
}

static void *sv_nl_put_hdr(struct sk_buff *msg, struct netlink_callback *cb,
			   struct genl_info *info, u8 cmd)
{
	if (cb)
		return genlmsg_put(msg, NETLINK_CB(cb->skb).portid,
				   cb->nlh->nlmsg_seq, &sv_nl_family,
				   NLM_F_MULTI, cmd);
	return genlmsg_put_reply(msg, info, &sv_nl_family, 0, cmd);
}

static int sv_nl_put_dev(struct sk_buff *msg, struct sv_device *sdev)
{
	if (nla_put_u32(msg, SV_NL_ATTR_DEV_INDEX, sdev->index) ||
	    nla_put_string(msg, SV_NL_ATTR_DEV_NAME, dev_name(&sdev->dev)))
		return -EMSGSIZE;
	return 0;
}

/* One device: rtnl (the netdev's name) and sv_devices_lock held. */
static int sv_nl_fill_link(struct sk_buff *msg, struct sv_device *sdev,
			   struct netlink_callback *cb, struct genl_info *info)
{
	struct net_device *ndev = sdev->ndev;
	void *hdr;
	size_t i;

	hdr = sv_nl_put_hdr(msg, cb, info, SV_NL_CMD_LINK_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (sv_nl_put_dev(msg, sdev) ||
	    nla_put_u32(msg, SV_NL_ATTR_PORT, SV_PHYS_PORT_CNT) ||
	    nla_put_u8(msg, SV_NL_ATTR_PORT_STATE,
		       READ_ONCE(sdev->port_state)) ||
	    nla_put_u32(msg, SV_NL_ATTR_ACTIVE_MTU,
			sv_mtu_bytes(READ_ONCE(sdev->active_mtu))) ||
	    nla_put_u64_64bit(msg, SV_NL_ATTR_NODE_GUID,
			      be64_to_cpu(sdev->node_guid), SV_NL_ATTR_PAD) ||
	    nla_put(msg, SV_NL_ATTR_MAC, ETH_ALEN, sdev->mac) ||
	    nla_put_u32(msg, SV_NL_ATTR_IDLE_US, READ_ONCE(sdev->idle_us)) ||
	    nla_put_u32(msg, SV_NL_ATTR_PART_ID, READ_ONCE(sdev->part_id)) ||
	    nla_put_u32(msg, SV_NL_ATTR_VENDOR_ID, READ_ONCE(sdev->vendor_id)))
		goto err;
	for (i = 0; i < ARRAY_SIZE(sv_nl_limits); i++)
		if (nla_put_u32(msg, sv_nl_limits[i].attr,
				sv_nl_limit_get(sdev, &sv_nl_limits[i])))
			goto err;
	if (ndev &&
	    (nla_put_u32(msg, SV_NL_ATTR_NDEV_INDEX, ndev->ifindex) ||
	     nla_put_string(msg, SV_NL_ATTR_NDEV_NAME, ndev->name) ||
	     nla_put_u32(msg, SV_NL_ATTR_NDEV_MTU, ndev->mtu)))
		goto err;
	genlmsg_end(msg, hdr);
	return 0;
err:
	genlmsg_cancel(msg, hdr);
	return -EMSGSIZE;
}

/* The device DEV_NAME names in the caller's namespace. sv_devices_lock. */
static struct sv_device *sv_nl_find(struct genl_info *info)
{
	struct sv_device *sdev;

	sdev = sv_device_find_net(genl_info_net(info),
				  nla_data(info->attrs[SV_NL_ATTR_DEV_NAME]));
	if (!sdev)
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[SV_NL_ATTR_DEV_NAME],
				    "No softverbs device of that name");
	return sdev;
}

/*
 * The device a change request names: ENODEV if there is none, EPERM if
 * the caller may not change it (both with an extack message).
 */
static struct sv_device *sv_nl_find_to_change(struct sk_buff *skb,
					      struct genl_info *info)
{
	struct sv_device *sdev;

	lockdep_assert_held(&sv_devices_lock);
	sdev = sv_nl_find(info);
	if (!sdev)
		return ERR_PTR(-ENODEV);
	if (!sv_nl_may_change(skb, sdev)) {
		NL_SET_ERR_MSG(info->extack,
			       "Operation needs CAP_NET_ADMIN over the device's netdev");
		return ERR_PTR(-EPERM);
	}
	return sdev;
}

static int sv_nl_link_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sv_device *sdev;
	struct sk_buff *msg;
	int ret;

	if (SV_NL_REQUIRE(info, SV_NL_ATTR_DEV_NAME, "Device name missing"))
		return -EINVAL;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	rtnl_lock();
	mutex_lock(&sv_devices_lock);
	sdev = sv_nl_find(info);
	ret = sdev ? sv_nl_fill_link(msg, sdev, NULL, info) : -ENODEV;
	mutex_unlock(&sv_devices_lock);
	rtnl_unlock();
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

static int sv_nl_link_get_dumpit(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	struct net *net = sock_net(skb->sk);
	struct sv_device *sdev;
	unsigned long index;

	rtnl_lock();
	mutex_lock(&sv_devices_lock);
	xa_for_each_start(&sv_devices, index, sdev, cb->args[0]) {
		if (sv_device_in_net(sdev, net) &&
		    sv_nl_fill_link(skb, sdev, cb, NULL))
			break;
		cb->args[0] = index + 1;
	}
	mutex_unlock(&sv_devices_lock);
	rtnl_unlock();
	return skb->len;
}

static int sv_nl_link_add(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **tb = info->attrs;
	struct net *net = genl_info_net(info);
	struct user_namespace *userns;
	struct net_device *ndev;
	struct sv_device *sdev;
	const char *name;
	int ret;

	if (!sv_nl_admin(skb, info))
		return -EPERM;
	if (SV_NL_REQUIRE(info, SV_NL_ATTR_DEV_NAME, "Device name missing"))
		return -EINVAL;
	name = nla_data(tb[SV_NL_ATTR_DEV_NAME]);
	if (!sv_nl_name_ok(name)) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[SV_NL_ATTR_DEV_NAME],
				    "Device name must start with \"sv\" or \"softverbs\" and have only letters, digits, '_' or '-'");
		return -EINVAL;
	}
	if (!tb[SV_NL_ATTR_NDEV_NAME] && !tb[SV_NL_ATTR_NDEV_INDEX]) {
		NL_SET_ERR_MSG(info->extack, "Netdev name or index missing");
		NL_SET_ERR_ATTR_MISS(info->extack, NULL, SV_NL_ATTR_NDEV_NAME);
		return -EINVAL;
	}

	rtnl_lock();
	mutex_lock(&sv_devices_lock);
	if (tb[SV_NL_ATTR_NDEV_INDEX])
		ndev = __dev_get_by_index(net,
					  nla_get_u32(tb[SV_NL_ATTR_NDEV_INDEX]));
	else
		ndev = __dev_get_by_name(net,
					 nla_data(tb[SV_NL_ATTR_NDEV_NAME]));
	if (!ndev) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    tb[SV_NL_ATTR_NDEV_INDEX] ?:
				    tb[SV_NL_ATTR_NDEV_NAME],
				    "No such netdev in this network namespace");
		ret = -ENODEV;
		goto out;
	}
	if (ndev->type != ARPHRD_ETHER) {
		NL_SET_ERR_MSG(info->extack, "Netdev is not an Ethernet device");
		ret = -EINVAL;
		goto out;
	}
	if (sv_device_find(name)) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[SV_NL_ATTR_DEV_NAME],
				    "A softverbs device of that name exists");
		ret = -EEXIST;
		goto out;
	}
	if (sv_device_by_netdev(ndev)) {
		NL_SET_ERR_MSG(info->extack,
			       "Netdev is bound to another softverbs device");
		ret = -EBUSY;
		goto out;
	}
	/* Routing by GID needs one device per GID in a namespace. */
	ret = sv_netdev_gids_free(net, ndev);
	if (ret) {
		NL_SET_ERR_MSG(info->extack,
			       "Another softverbs device in this network namespace has a GID of this netdev");
		goto out;
	}
	userns = sv_nl_userns_top(net->user_ns);
	if (userns != &init_user_ns &&
	    sv_nl_userns_devices(userns) >= READ_ONCE(sv_max_userns_devices)) {
		NL_SET_ERR_MSG(info->extack,
			       "Too many softverbs devices for this user namespace");
		ret = -ENOSPC;
		goto out;
	}
	sdev = sv_device_create(name, ndev->dev_addr, net);
	if (IS_ERR(sdev)) {
		ret = PTR_ERR(sdev);
		if (ret == -ENOSPC)
			NL_SET_ERR_MSG(info->extack,
				       "Too many softverbs devices");
		goto out;
	}
	sdev->removable = true;
	ret = sv_netdev_bind(sdev, ndev);
	if (ret) {
		if (ret == -EBUSY)
			NL_SET_ERR_MSG(info->extack,
				       "Netdev has a receive handler already (a bridge, bond, macvlan or team port?)");
		sv_device_remove(sdev);
	}
out:
	mutex_unlock(&sv_devices_lock);
	rtnl_unlock();
	return ret;
}

static int sv_nl_link_del(struct sk_buff *skb, struct genl_info *info)
{
	struct sv_device *sdev;
	int ret = 0;

	if (!sv_nl_admin(skb, info))
		return -EPERM;
	if (SV_NL_REQUIRE(info, SV_NL_ATTR_DEV_NAME, "Device name missing"))
		return -EINVAL;
	rtnl_lock();
	mutex_lock(&sv_devices_lock);
	sdev = sv_nl_find_to_change(skb, info);
	if (IS_ERR(sdev)) {
		ret = PTR_ERR(sdev);
	} else if (!sdev->removable) {
		NL_SET_ERR_MSG(info->extack,
			       "The module's own device cannot be deleted");
		ret = -EOPNOTSUPP;
	} else {
		sv_device_remove(sdev);
	}
	mutex_unlock(&sv_devices_lock);
	rtnl_unlock();
	return ret;
}

static int sv_nl_dev_set(struct sk_buff *skb, struct genl_info *info)
{
	struct sv_device *sdev;
	bool any = false;
	size_t i;
	int ret = 0;

	if (!sv_nl_admin(skb, info))
		return -EPERM;
	if (SV_NL_REQUIRE(info, SV_NL_ATTR_DEV_NAME, "Device name missing"))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(sv_nl_limits); i++)
		any |= !!info->attrs[sv_nl_limits[i].attr];
	if (!info->attrs[SV_NL_ATTR_IDLE_US] &&
	    !info->attrs[SV_NL_ATTR_PART_ID] &&
	    !info->attrs[SV_NL_ATTR_VENDOR_ID] && !any) {
		NL_SET_ERR_MSG(info->extack, "Nothing to set");
		return -EINVAL;
	}
	mutex_lock(&sv_devices_lock);
	sdev = sv_nl_find_to_change(skb, info);
	if (IS_ERR(sdev)) {
		ret = PTR_ERR(sdev);
	} else {
		if (info->attrs[SV_NL_ATTR_IDLE_US])
			WRITE_ONCE(sdev->idle_us,
				   nla_get_u32(info->attrs[SV_NL_ATTR_IDLE_US]));
		if (info->attrs[SV_NL_ATTR_PART_ID])
			WRITE_ONCE(sdev->part_id,
				   nla_get_u32(info->attrs[SV_NL_ATTR_PART_ID]));
		if (info->attrs[SV_NL_ATTR_VENDOR_ID])
			WRITE_ONCE(sdev->vendor_id,
				   nla_get_u32(info->attrs[SV_NL_ATTR_VENDOR_ID]));
		for (i = 0; i < ARRAY_SIZE(sv_nl_limits); i++)
			if (info->attrs[sv_nl_limits[i].attr])
				sv_nl_limit_set(sdev, &sv_nl_limits[i],
						nla_get_u32(info->attrs[sv_nl_limits[i].attr]));
	}
	mutex_unlock(&sv_devices_lock);
	return ret;
}

/* ---- resource dumps ---- */

static const enum sv_obj_type sv_nl_res_obj[] = {
	[SV_NL_RES_PD] = SV_OBJ_PD,
	[SV_NL_RES_MR] = SV_OBJ_MR,
	[SV_NL_RES_CQ] = SV_OBJ_CQ,
	[SV_NL_RES_QP] = SV_OBJ_QP,
	[SV_NL_RES_FLOW] = SV_OBJ_FLOW,
	[SV_NL_RES_WQ] = SV_OBJ_WQ,
	[SV_NL_RES_RWQ_IND_TBL] = SV_OBJ_RWQ_IND_TBL,
	[SV_NL_RES_COUNTERS] = SV_OBJ_COUNTERS,
	[SV_NL_RES_FLOW_MATCHER] = SV_OBJ_FLOW_MATCHER,
	[SV_NL_RES_STEER_TABLE] = SV_OBJ_STEER_TABLE,
	[SV_NL_RES_STEER_ANCHOR] = SV_OBJ_STEER_ANCHOR,
};

/* What a resource dump may show its caller. */
struct sv_nl_res_ctx {
	struct net *net;		/* devices of this namespace */
	struct pid_namespace *pid_ns;	/* objects of its processes */
	bool admin;			/* keys and addresses */
	u8 type;			/* SV_NL_RES_* */
	u64 busy_file;			/* shown without keys: f->lock busy */
	bool busy;
};

/*
 * A flow: its QP, rule and actions, all fixed at its creation (and its
 * counters object, referenced by the flow until its memory goes).
 */
static int sv_nl_fill_flow(struct sk_buff *msg, struct sv_uobj *u)
{
	struct sv_flow *fl = container_of(u, struct sv_flow, uobj);

	if (fl->qp && nla_put_u32(msg, SV_NL_ATTR_RES_QPN, fl->qp->qpn))
		return -EMSGSIZE;
	if (nla_put_u8(msg, SV_NL_ATTR_RES_FLOW_TYPE, fl->type) ||
	    nla_put_u16(msg, SV_NL_ATTR_RES_FLOW_PRIORITY, fl->priority) ||
	    nla_put_u32(msg, SV_NL_ATTR_RES_FLOW_FLAGS, fl->flags) ||
	    nla_put_u8(msg, SV_NL_ATTR_RES_FLOW_NSPECS, fl->nspecs))
		return -EMSGSIZE;
	if (fl->tagged && nla_put_u32(msg, SV_NL_ATTR_RES_FLOW_TAG, fl->tag))
		return -EMSGSIZE;
	if (fl->drop && nla_put_flag(msg, SV_NL_ATTR_RES_FLOW_DROP))
		return -EMSGSIZE;
	if (fl->miss && nla_put_flag(msg, SV_NL_ATTR_RES_FLOW_MISS))
		return -EMSGSIZE;
	if (fl->matcher &&
	    nla_put_u32(msg, SV_NL_ATTR_RES_MATCHER_HANDLE,
			fl->matcher->handle))
		return -EMSGSIZE;
	if (fl->dest_table &&
	    nla_put_u32(msg, SV_NL_ATTR_RES_DEST_TABLE, fl->dest_table->handle))
		return -EMSGSIZE;
	if (fl->dest_anchor &&
	    nla_put_u32(msg, SV_NL_ATTR_RES_DEST_ANCHOR,
			fl->dest_anchor->handle))
		return -EMSGSIZE;
	if (fl->counters &&
	    nla_put_u32(msg, SV_NL_ATTR_RES_COUNTERS_HANDLE,
			sv_counters_handle(fl)))
		return -EMSGSIZE;
	return 0;
}

/* A counters object: the flows bound to it, the oldest first. */
static int sv_nl_fill_counters(struct sk_buff *msg, struct sv_uobj *u)
{
	u32 handles[SV_NL_RES_FLOWS_MAX];
	struct nlattr *nest;
	u32 i, n;

	n = sv_counters_flows(u, handles, ARRAY_SIZE(handles));
	if (!n)
		return 0;
	nest = nla_nest_start(msg, SV_NL_ATTR_RES_FLOWS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n; i++)
		if (nla_put_u32(msg, SV_NL_ATTR_RES_FLOW_HANDLE, handles[i]))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

/*
 * One object, referenced. @locked: its file's lock is held (MR keys and
 * addresses need it; with CAP_NET_ADMIN only).
 */
static int sv_nl_fill_res(struct sk_buff *msg, struct netlink_callback *cb,
			  struct sv_device *sdev, struct sv_uobj *u,
			  const struct sv_nl_res_ctx *ctx, bool locked)
{
	u8 type = ctx->type;
	void *hdr;
	int ret;

	hdr = sv_nl_put_hdr(msg, cb, NULL, SV_NL_CMD_RES_GET);
	if (!hdr)
		return -EMSGSIZE;
	ret = sv_nl_put_dev(msg, sdev) ||
	      nla_put_u8(msg, SV_NL_ATTR_RES_TYPE, type) ||
	      nla_put_u32(msg, SV_NL_ATTR_RES_HANDLE, u->handle) ||
	      nla_put_u32(msg, SV_NL_ATTR_RES_PID,
			  pid_nr_ns(u->owner, ctx->pid_ns)) ||
	      nla_put_string(msg, SV_NL_ATTR_RES_COMM, u->comm) ||
	      nla_put_u32(msg, SV_NL_ATTR_RES_USECNT,
			  atomic_read(&u->usecnt));
	if (ret)
		goto err;
	switch (type) {
	case SV_NL_RES_MR: {
		u64 iova, length;
		u32 key;

		if (!locked)
			break;
		sv_mr_res_info(u, &key, &iova, &length);
		ret = nla_put_u32(msg, SV_NL_ATTR_RES_LKEY, key) ||
		      nla_put_u32(msg, SV_NL_ATTR_RES_RKEY, key) ||
		      nla_put_u64_64bit(msg, SV_NL_ATTR_RES_IOVA, iova,
					SV_NL_ATTR_PAD) ||
		      nla_put_u64_64bit(msg, SV_NL_ATTR_RES_LENGTH, length,
					SV_NL_ATTR_PAD);
		break;
	}
	case SV_NL_RES_CQ: {
		struct sv_cq *cq = container_of(u, struct sv_cq, uobj);

		ret = nla_put_u32(msg, SV_NL_ATTR_RES_CQE,
				  READ_ONCE(cq->entries));
		break;
	}
	case SV_NL_RES_QP: {
		struct sv_qp *qp = container_of(u, struct sv_qp, uobj);
		u8 state;

		spin_lock_bh(&qp->lock);
		state = qp->attr.qp_state;
		spin_unlock_bh(&qp->lock);
		ret = nla_put_u32(msg, SV_NL_ATTR_RES_QPN, qp->qpn) ||
		      nla_put_u8(msg, SV_NL_ATTR_RES_QP_TYPE, qp->qp_type) ||
		      nla_put_u8(msg, SV_NL_ATTR_RES_QP_STATE, state);
		break;
	}
	case SV_NL_RES_FLOW:
		ret = sv_nl_fill_flow(msg, u);
		break;
	case SV_NL_RES_WQ: {
		struct sv_rwq *wq = container_of(u, struct sv_rwq, uobj);

		/* State and flags change under the ring's lock: a snapshot. */
		ret = nla_put_u32(msg, SV_NL_ATTR_RES_WQN, wq->shadow.qpn) ||
		      nla_put_u8(msg, SV_NL_ATTR_RES_WQ_STATE,
				 READ_ONCE(wq->state)) ||
		      nla_put_u32(msg, SV_NL_ATTR_RES_WQ_FLAGS,
				  READ_ONCE(wq->flags)) ||
		      nla_put_u32(msg, SV_NL_ATTR_RES_CQ_HANDLE,
				  wq->shadow.recv_cq->handle);
		break;
	}
	case SV_NL_RES_RWQ_IND_TBL: {
		struct sv_rwq_ind_tbl *t = container_of(u, struct sv_rwq_ind_tbl,
							uobj);

		ret = nla_put_u32(msg, SV_NL_ATTR_RES_LOG_SIZE, t->log_size);
		break;
	}
	case SV_NL_RES_COUNTERS:
		ret = sv_nl_fill_counters(msg, u);
		break;
	case SV_NL_RES_FLOW_MATCHER: {
		u32 flags, table;
		u16 prio;

		sv_flow_matcher_info(u, &prio, &flags, &table);
		ret = nla_put_u16(msg, SV_NL_ATTR_RES_FLOW_PRIORITY, prio) ||
		      nla_put_u32(msg, SV_NL_ATTR_RES_FLOW_FLAGS, flags) ||
		      (table && nla_put_u32(msg, SV_NL_ATTR_RES_TABLE_HANDLE,
					    table));
		break;
	}
	case SV_NL_RES_STEER_TABLE:
	case SV_NL_RES_STEER_ANCHOR: {
		u32 level, flags;
		u16 prio;

		sv_sandbox_info(u, &level, &flags, &prio);
		ret = nla_put_u32(msg, SV_NL_ATTR_RES_FLOW_FLAGS, flags) ||
		      (type == SV_NL_RES_STEER_TABLE ?
		       nla_put_u32(msg, SV_NL_ATTR_RES_TABLE_LEVEL, level) :
		       nla_put_u16(msg, SV_NL_ATTR_RES_FLOW_PRIORITY, prio));
		break;
	}
	}
	if (ret)
		goto err;
	genlmsg_end(msg, hdr);
	return 0;
err:
	genlmsg_cancel(msg, hdr);
	return -EMSGSIZE;
}

/* Objects filled per trip into a file's table. */
#define SV_NL_RES_BATCH	16

/*
 * The objects of one file from the cursor cb->args[2] on. They are taken
 * by reference under the table's lock (an object in the table holds a
 * reference), filled without it. -EMSGSIZE when the message is full,
 * -EAGAIN when MR keys need f->lock and it is busy.
 * sdev->files_lock held: the file stays open.
 */
static int sv_nl_res_file(struct sk_buff *skb, struct netlink_callback *cb,
			  struct sv_device *sdev, struct sv_file *f,
			  struct sv_nl_res_ctx *ctx)
{
	enum sv_obj_type otype = sv_nl_res_obj[ctx->type];
	struct sv_uobj *batch[SV_NL_RES_BATCH];
	unsigned long handle;
	struct sv_uobj *u;
	bool locked = false;
	int i, n, ret = 0;

	lockdep_assert_held(&sdev->files_lock);
	do {
		n = 0;
		xa_lock(&f->objs);
		xa_for_each_start(&f->objs, handle, u, cb->args[2]) {
			if (u->type != otype)
				continue;
			/* As rdma_is_visible_in_pid_ns(): no pid, not shown. */
			if (!pid_nr_ns(u->owner, ctx->pid_ns))
				continue;
			kref_get(&u->ref);
			batch[n++] = u;
			if (n == SV_NL_RES_BATCH)
				break;
		}
		xa_unlock(&f->objs);
		if (!n)
			break;

		/* Never wait for f->lock here: see the top of the file. */
		if (otype == SV_OBJ_MR && ctx->admin &&
		    !(ctx->busy && ctx->busy_file == f->id)) {
			locked = mutex_trylock(&f->lock);
			if (!locked)
				ret = -EAGAIN;
		}
		for (i = 0; i < n; i++) {
			u = batch[i];
			/* Under f->lock: skip what was destroyed meanwhile. */
			if (!ret && (!locked || xa_load(&f->objs, u->handle) == u))
				ret = sv_nl_fill_res(skb, cb, sdev, u, ctx,
						     locked);
			if (!ret)
				cb->args[2] = u->handle + 1;
			sv_uobj_put(u);
		}
		if (locked)
			mutex_unlock(&f->lock);
		locked = false;
	} while (!ret && n == SV_NL_RES_BATCH);
	return ret;
}

/*
 * The objects of one device from the cursor on: cb->args[1] is a file id,
 * cb->args[2] a handle in that file. -EMSGSIZE when the message is full,
 * -EAGAIN as sv_nl_res_file(); the cursor is where to go on.
 */
static int sv_nl_res_dev(struct sk_buff *skb, struct netlink_callback *cb,
			 struct sv_device *sdev, struct sv_nl_res_ctx *ctx)
{
	struct sv_file *f;
	int ret = 0;

	mutex_lock(&sdev->files_lock);
	list_for_each_entry(f, &sdev->files, dev_node) {
		if (f->id < cb->args[1])
			continue;
		if (f->id != cb->args[1]) {
			cb->args[1] = f->id;
			cb->args[2] = 0;
		}
		ret = sv_nl_res_file(skb, cb, sdev, f, ctx);
		if (ret)
			break;
		cb->args[1] = f->id + 1;
		cb->args[2] = 0;
	}
	mutex_unlock(&sdev->files_lock);
	return ret;
}

/*
 * The next device of @net (named @name, if not NULL) from index *@index
 * on, referenced; NULL when there is none. No lock but RCU: the registry
 * holds its reference until a grace period after the device left it.
 */
static struct sv_device *sv_nl_next_dev(struct net *net, const char *name,
					unsigned long *index)
{
	struct sv_device *sdev;

	rcu_read_lock();
	xa_for_each_start(&sv_devices, *index, sdev, *index) {
		if (!sv_device_in_net(sdev, net) ||
		    (name && strcmp(dev_name(&sdev->dev), name)))
			continue;
		get_device(&sdev->dev);
		rcu_read_unlock();
		return sdev;
	}
	rcu_read_unlock();
	return NULL;
}

/* How long a dump waits for a busy file before it shows MRs keyless. */
#define SV_NL_BUSY_TRIES	50
#define SV_NL_BUSY_WAIT_MS	10

static int sv_nl_res_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr **tb = sv_genl_dump_attrs(cb);
	struct sv_nl_res_ctx ctx = {
		.net = sock_net(skb->sk),
		.pid_ns = task_active_pid_ns(current),
		.admin = netlink_capable(cb->skb, CAP_NET_ADMIN),
	};
	const char *filter = NULL;
	struct sv_device *sdev;
	unsigned long index;
	int tries = 0, ret;

	if (!tb[SV_NL_ATTR_RES_TYPE]) {
		NL_SET_ERR_MSG(cb->extack, "Resource type missing");
		NL_SET_ERR_ATTR_MISS(cb->extack, NULL, SV_NL_ATTR_RES_TYPE);
		return -EINVAL;
	}
	ctx.type = nla_get_u8(tb[SV_NL_ATTR_RES_TYPE]);
	if (tb[SV_NL_ATTR_DEV_NAME])
		filter = nla_data(tb[SV_NL_ATTR_DEV_NAME]);

	/* args[3]: not the first call. A missing device is an error once. */
	if (!cb->args[3] && filter) {
		mutex_lock(&sv_devices_lock);
		sdev = sv_device_find_net(ctx.net, filter);
		mutex_unlock(&sv_devices_lock);
		if (!sdev) {
			NL_SET_ERR_MSG_ATTR(cb->extack,
					    tb[SV_NL_ATTR_DEV_NAME],
					    "No softverbs device of that name");
			return -ENODEV;
		}
	}
	cb->args[3] = 1;
	for (;;) {
		index = cb->args[0];
		sdev = sv_nl_next_dev(ctx.net, filter, &index);
		if (!sdev)
			break;
		if (index != cb->args[0]) {
			cb->args[0] = index;
			cb->args[1] = 0;
			cb->args[2] = 0;
		}
		ret = sv_nl_res_dev(skb, cb, sdev, &ctx);
		put_device(&sdev->dev);
		if (ret == -EAGAIN) {
			/*
			 * A file's lock is busy: wait outside every lock and
			 * go on from the cursor; after a while, show that
			 * file's MRs without their keys.
			 */
			if (++tries >= SV_NL_BUSY_TRIES) {
				ctx.busy = true;
				ctx.busy_file = cb->args[1];
				tries = 0;
			} else if (msleep_interruptible(SV_NL_BUSY_WAIT_MS)) {
				return skb->len ?: -EINTR;
			}
			continue;
		}
		if (ret)
			break;
		cb->args[0] = index + 1;
		cb->args[1] = 0;
		cb->args[2] = 0;
	}
	return skb->len;
}

/* ---- counters ---- */

static int sv_nl_fill_stats(struct sk_buff *msg, struct sv_device *sdev,
			    struct netlink_callback *cb,
			    struct genl_info *info)
{
	struct nlattr *stats, *entry;
	enum sv_stat s;
	void *hdr;

	hdr = sv_nl_put_hdr(msg, cb, info, SV_NL_CMD_STAT_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (sv_nl_put_dev(msg, sdev) ||
	    nla_put_u32(msg, SV_NL_ATTR_PORT, SV_PHYS_PORT_CNT))
		goto err;
	stats = nla_nest_start(msg, SV_NL_ATTR_STATS);
	if (!stats)
		goto err;
	for (s = 0; s < SV_STAT_MAX; s++) {
		entry = nla_nest_start(msg, SV_NL_ATTR_STAT_ENTRY);
		if (!entry ||
		    nla_put_string(msg, SV_NL_ATTR_STAT_NAME, sv_stat_name(s)) ||
		    nla_put_u64_64bit(msg, SV_NL_ATTR_STAT_VALUE,
				      sv_stat_read(sdev, s), SV_NL_ATTR_PAD))
			goto err;
		nla_nest_end(msg, entry);
	}
	nla_nest_end(msg, stats);
	genlmsg_end(msg, hdr);
	return 0;
err:
	genlmsg_cancel(msg, hdr);
	return -EMSGSIZE;
}

static int sv_nl_stat_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sv_device *sdev;
	struct sk_buff *msg;
	int ret;

	if (SV_NL_REQUIRE(info, SV_NL_ATTR_DEV_NAME, "Device name missing"))
		return -EINVAL;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&sv_devices_lock);
	sdev = sv_nl_find(info);
	ret = sdev ? sv_nl_fill_stats(msg, sdev, NULL, info) : -ENODEV;
	mutex_unlock(&sv_devices_lock);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

static int sv_nl_stat_get_dumpit(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	struct net *net = sock_net(skb->sk);
	struct sv_device *sdev;
	unsigned long index;

	mutex_lock(&sv_devices_lock);
	xa_for_each_start(&sv_devices, index, sdev, cb->args[0]) {
		if (sv_device_in_net(sdev, net) &&
		    sv_nl_fill_stats(skb, sdev, cb, NULL))
			break;
		cb->args[0] = index + 1;
	}
	mutex_unlock(&sv_devices_lock);
	return skb->len;
}

static const struct genl_small_ops sv_nl_ops[] = {
	{
		.cmd = SV_NL_CMD_LINK_GET,
		.doit = sv_nl_link_get_doit,
		.dumpit = sv_nl_link_get_dumpit,
	},
	{
		.cmd = SV_NL_CMD_LINK_ADD,
		/* sv_nl_admin(): GENL_UNS_ADMIN_PERM with a message */
		.doit = sv_nl_link_add,
	},
	{
		.cmd = SV_NL_CMD_LINK_DEL,
		.doit = sv_nl_link_del,
	},
	{
		.cmd = SV_NL_CMD_DEV_SET,
		.doit = sv_nl_dev_set,
	},
	{
		.cmd = SV_NL_CMD_RES_GET,
		.dumpit = sv_nl_res_dumpit,
	},
	{
		.cmd = SV_NL_CMD_STAT_GET,
		.doit = sv_nl_stat_get_doit,
		.dumpit = sv_nl_stat_get_dumpit,
	},
};

static struct genl_family sv_nl_family __ro_after_init = {
	.name = SV_NL_FAMILY_NAME,
	.version = SV_NL_FAMILY_VERSION,
	.maxattr = SV_NL_ATTR_MAX,
	.policy = sv_nl_policy,
	.netnsok = true,
	.module = THIS_MODULE,
	.small_ops = sv_nl_ops,
	.n_small_ops = ARRAY_SIZE(sv_nl_ops),
	/* Strict validation of every command, header included. */
	.resv_start_op = SV_NL_CMD_MAX + 1,
};

int sv_netlink_init(void)
{
	return genl_register_family(&sv_nl_family);
}

void sv_netlink_exit(void)
{
	genl_unregister_family(&sv_nl_family);
}
