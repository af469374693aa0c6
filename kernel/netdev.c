// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs netdev binding: a device made by "link add" follows one
 * netdev. Its port is ACTIVE while the netdev is up with carrier, DOWN
 * otherwise (IBV_EVENT_PORT_ACTIVE / IBV_EVENT_PORT_ERR on the change);
 * its active MTU follows the netdev's MTU; its RoCE GID table holds the
 * link-local GID of the netdev's MAC and one GID per IPv4 (::ffff:a.b.c.d)
 * and IPv6 address of the netdev (IBV_EVENT_GID_CHANGE on a change). When
 * the netdev unregisters (deleted, or moved to another namespace) the
 * device is removed (sv_device_remove()).
 *
 * The VLAN devices right above the netdev, in its namespace, are the
 * device's too, as on rxe and RoCE NICs (one device on the lower netdev):
 * their addresses are GIDs of the table (with the VLAN device's ifindex,
 * which routes a message sent from one out through that VLAN device,
 * tagged), and their RoCE v2 frames, untagged by the VLAN code, reach
 * the device through an rx_handler on each VLAN device (wire/rx.c).
 *
 * A device lives in its netdev's network namespace (sdev->net); it is
 * deleted, not moved, when the netdev leaves the namespace. In a namespace
 * a GID belongs to one device: a link add that would give a device a GID
 * another device of the namespace holds is refused (EADDRINUSE,
 * sv_netdev_gids_free()), and an address (or MAC) that would do the same
 * later is left out of the table (sv_gid_claim()). First come, first
 * served: the GID is not added when the other device lets it go.
 *
 * Every notifier runs for every netdev of the host, so for a netdev that
 * is not bound it must cost nothing and wait for nothing of ours: the
 * device of a netdev is found under RCU (sv_device_by_netdev()), and only
 * the unregistration of a bound netdev takes sv_devices_lock. The netdev
 * and IPv4 notifiers run under rtnl, which every unbinding holds, so the
 * device they found stays bound while they use it; the IPv6 one may run
 * in atomic context, so it changes the GID table under RCU and the GID
 * locks and leaves the event to a work item.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <net/ipv6.h>

#include "sv.h"

/* The IB MTU a RoCE v2 payload fits in, as the IB core computes it. */
static u8 sv_mtu_from_netdev(unsigned int mtu)
{
	/* GRH/IPv6 40, UDP 8, BTH 12, extension headers 32, ICRC 4 */
	int room = (int)mtu - 96;

	if (room >= 4096)
		return SV_MTU_4096;
	if (room >= 2048)
		return SV_MTU_2048;
	if (room >= 1024)
		return SV_MTU_1024;
	if (room >= 512)
		return SV_MTU_512;
	return SV_MTU_256;
}

/*
 * The device bound to @ndev, or NULL. Under RCU (the device stays readable
 * for a grace period after it left the registry), or with rtnl or
 * sv_devices_lock held (it stays registered and bound).
 */
struct sv_device *sv_device_by_netdev(const struct net_device *ndev)
{
	struct sv_device *sdev;
	unsigned long index;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held() && !rtnl_is_locked() &&
			 !lockdep_is_held(&sv_devices_lock),
			 "device lookup by netdev without RCU or a lock");
	xa_for_each(&sv_devices, index, sdev)
		if (READ_ONCE(sdev->ndev) == ndev)
			return sdev;
	return NULL;
}

/* @upper is a VLAN device right above @lower, in its namespace. */
static bool sv_vlan_of(const struct net_device *upper,
		       const struct net_device *lower)
{
	return lower && is_vlan_dev(upper) &&
	       vlan_dev_real_dev(upper) == lower &&
	       net_eq(dev_net(upper), dev_net(lower));
}

/*
 * The device bound to the netdev right below @ndev, if @ndev is a VLAN
 * device of it (sv_vlan_of()). Locking as sv_device_by_netdev().
 */
static struct sv_device *sv_device_below(const struct net_device *ndev)
{
	struct sv_device *sdev;

	if (!is_vlan_dev(ndev))
		return NULL;
	sdev = sv_device_by_netdev(vlan_dev_real_dev(ndev));
	if (sdev && !sv_vlan_of(ndev, READ_ONCE(sdev->ndev)))
		sdev = NULL;
	return sdev;
}

/**
 * sv_device_by_addr_netdev - the device whose GIDs @ndev's addresses are
 * @ndev: a netdev
 *
 * The device bound to @ndev, or to the netdev right below it if @ndev is
 * a VLAN device whose frames it takes (sv_vlan_add()); NULL if none.
 * Locking as sv_device_by_netdev().
 */
struct sv_device *sv_device_by_addr_netdev(const struct net_device *ndev)
{
	struct sv_device *sdev = sv_device_by_netdev(ndev);

	if (sdev)
		return sdev;
	sdev = sv_device_below(ndev);
	return sdev && sv_wire_upper_ours(sdev, ndev) ? sdev : NULL;
}

/* The device a notifier is about, if @ndev is bound. rtnl held. */
static struct sv_device *sv_device_by_netdev_rtnl(const struct net_device *ndev)
{
	struct sv_device *sdev;

	ASSERT_RTNL();
	rcu_read_lock();
	sdev = sv_device_by_netdev(ndev);
	rcu_read_unlock();
	/* Unbinding takes rtnl: sdev stays bound until we return. */
	return sdev;
}

/*
 * Serializes "does another device of the namespace hold this GID?" with
 * adding it, across devices. BH-safe (the IPv6 notifier); nests outside
 * sdev->gid_lock.
 */
static DEFINE_SPINLOCK(sv_gid_claim_lock);

/* The device of @net other than @self (may be NULL) holding @gid. RCU held. */
struct sv_device *sv_gid_holder(const struct net *net, struct sv_device *self,
				const u8 gid[16])
{
	struct sv_device *sdev;
	unsigned long index;

	xa_for_each(&sv_devices, index, sdev)
		if (sdev != self && sv_device_in_net(sdev, net) &&
		    sv_gid_present(sdev, gid))
			return sdev;
	return NULL;
}

/* Add @gid to the device's table unless another device of its net has it. */
static int sv_gid_claim(struct sv_device *sdev, const u8 gid[16], u32 ifindex)
{
	int ret;

	spin_lock_bh(&sv_gid_claim_lock);
	rcu_read_lock();
	if (sv_gid_holder(read_pnet(&sdev->net), sdev, gid))
		ret = -EADDRINUSE;
	else
		ret = sv_gid_add(sdev, gid, ifindex);
	rcu_read_unlock();
	spin_unlock_bh(&sv_gid_claim_lock);
	return ret;
}

/* fe80::<EUI-64 of mac> */
static void sv_gid_from_mac(u8 gid[16], const u8 *mac)
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	gid[8] = mac[0] ^ 2;
	gid[9] = mac[1];
	gid[10] = mac[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = mac[3];
	gid[14] = mac[4];
	gid[15] = mac[5];
}

static void sv_gid_from_ipv4(u8 gid[16], __be32 addr)
{
	ipv6_addr_set_v4mapped(addr, (struct in6_addr *)gid);
}

/* Add or remove the GIDs of one address; true if the table changed. */
static bool sv_gid_update(struct sv_device *sdev, const u8 gid[16],
			  u32 ifindex, bool add)
{
	u8 mac_gid[16];

	/* The netdev's own EUI-64 link-local address is the MAC's GID. */
	sv_gid_from_mac(mac_gid, sdev->mac);
	if (!memcmp(gid, mac_gid, 16))
		return false;
	if (add)
		return !sv_gid_claim(sdev, gid, ifindex);
	if (!sv_gid_present(sdev, gid))
		return false;
	sv_gid_del(sdev, gid, ifindex);
	return true;
}

/* The GIDs of @ndev's IPv4 and IPv6 addresses into the table. rtnl. */
static void sv_gid_fill_addrs(struct sv_device *sdev, struct net_device *ndev)
{
	struct inet6_dev *idev;
	struct in_device *in;
	struct in_ifaddr *ifa;
	u8 gid[16];

	in = __in_dev_get_rtnl(ndev);
	if (in) {
		in_dev_for_each_ifa_rtnl(ifa, in) {
			sv_gid_from_ipv4(gid, ifa->ifa_local);
			sv_gid_update(sdev, gid, ndev->ifindex, true);
		}
	}
	idev = __in6_dev_get(ndev);
	if (idev) {
		struct inet6_ifaddr *ifp;

		read_lock_bh(&idev->lock);
		list_for_each_entry(ifp, &idev->addr_list, if_list)
			sv_gid_update(sdev, ifp->addr.s6_addr, ndev->ifindex,
				      true);
		read_unlock_bh(&idev->lock);
	}
}

/*
 * Fill the GID table from the netdev: its MAC, its addresses and its VLAN
 * devices'. rtnl.
 */
static void sv_gid_fill(struct sv_device *sdev, struct net_device *ndev)
{
	struct net_device *upper;
	struct list_head *iter;
	u8 gid[16];

	spin_lock_bh(&sdev->gid_lock);
	memset(sdev->gids, 0, sizeof(sdev->gids));
	sv_route_changed();
	spin_unlock_bh(&sdev->gid_lock);
	sv_gid_from_mac(gid, sdev->mac);
	sv_gid_claim(sdev, gid, ndev->ifindex);
	sv_gid_fill_addrs(sdev, ndev);
	netdev_for_each_upper_dev_rcu(ndev, upper, iter)
		if (sv_vlan_of(upper, ndev) && sv_wire_upper_ours(sdev, upper))
			sv_gid_fill_addrs(sdev, upper);
}

/*
 * A VLAN device above the bound netdev comes (or is there at the bind):
 * its frames reach the device. Its addresses come by the notifiers (or
 * sv_gid_fill()). rtnl held.
 */
static void sv_vlan_add(struct sv_device *sdev, struct net_device *upper)
{
	/*
	 * Busy (a bridge port, a device bound to it): not the device's, nor
	 * are its addresses GIDs (sv_device_by_addr_netdev()).
	 */
	if (sv_wire_upper_bind(sdev, upper))
		netdev_info(upper, "softverbs: %s does not take its RoCE frames (its rx_handler is taken)\n",
			    dev_name(&sdev->dev));
	else
		sv_mcast_upper(sdev, upper, true);
}

/* ... goes (unregistered, or leaving the namespace). rtnl held. */
static void sv_vlan_del(struct sv_device *sdev, struct net_device *upper)
{
	if (sv_wire_upper_ours(sdev, upper))
		sv_mcast_upper(sdev, upper, false);
	sv_wire_upper_unbind(sdev, upper);
	if (sv_gid_del_netdev(sdev, upper->ifindex))
		sv_device_event(sdev, SV_EVENT_GID_CHANGE);
}

/*
 * 0 if no device of @net holds a GID that @ndev would give a new device
 * (its MAC's link-local GID, its IPv4 and IPv6 addresses), -EADDRINUSE if
 * one does. rtnl held.
 */
int sv_netdev_gids_free(struct net *net, struct net_device *ndev)
{
	struct inet6_dev *idev;
	struct in_device *in;
	struct in_ifaddr *ifa;
	int ret = 0;
	u8 gid[16];

	ASSERT_RTNL();
	rcu_read_lock();
	sv_gid_from_mac(gid, ndev->dev_addr);
	if (sv_gid_holder(net, NULL, gid))
		ret = -EADDRINUSE;
	in = __in_dev_get_rtnl(ndev);
	if (in && !ret) {
		in_dev_for_each_ifa_rtnl(ifa, in) {
			sv_gid_from_ipv4(gid, ifa->ifa_local);
			if (sv_gid_holder(net, NULL, gid))
				ret = -EADDRINUSE;
		}
	}
	idev = __in6_dev_get(ndev);
	if (idev && !ret) {
		struct inet6_ifaddr *ifp;

		read_lock_bh(&idev->lock);
		list_for_each_entry(ifp, &idev->addr_list, if_list)
			if (sv_gid_holder(net, NULL, ifp->addr.s6_addr))
				ret = -EADDRINUSE;
		read_unlock_bh(&idev->lock);
	}
	rcu_read_unlock();
	return ret;
}

/* Port state and MTU from the netdev; events on a state change. rtnl. */
static void sv_port_update(struct sv_device *sdev, struct net_device *ndev)
{
	u8 state = netif_running(ndev) && netif_carrier_ok(ndev) ?
		   SV_PORT_ACTIVE : SV_PORT_DOWN;
	u8 old = READ_ONCE(sdev->port_state);

	WRITE_ONCE(sdev->active_mtu, sv_mtu_from_netdev(READ_ONCE(ndev->mtu)));
	if (state == old)
		return;
	WRITE_ONCE(sdev->port_state, state);
	sv_device_event(sdev, state == SV_PORT_ACTIVE ? SV_EVENT_PORT_ACTIVE :
			SV_EVENT_PORT_ERR);
}

/*
 * Bind a new device to @ndev: it follows the netdev and sees every frame
 * it receives (its rx_handler: -EBUSY if the netdev has one already, a
 * bridge port or a macvlan lower device say). rtnl and sv_devices_lock
 * held.
 */
int sv_netdev_bind(struct sv_device *sdev, struct net_device *ndev)
{
	struct net_device *upper;
	struct list_head *iter;
	int ret;

	ASSERT_RTNL();
	ret = sv_steer_bind(sdev, ndev);
	if (ret)
		return ret;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	WRITE_ONCE(sdev->ndev, ndev);
	netdev_for_each_upper_dev_rcu(ndev, upper, iter)
		if (sv_vlan_of(upper, ndev))
			sv_vlan_add(sdev, upper);
	sv_gid_fill(sdev, ndev);
	sdev->port_state = netif_running(ndev) && netif_carrier_ok(ndev) ?
			   SV_PORT_ACTIVE : SV_PORT_DOWN;
	sdev->active_mtu = sv_mtu_from_netdev(ndev->mtu);
	return 0;
}

/*
 * Drop the binding, the netdev's multicast groups and its GIDs. rtnl and
 * sv_devices_lock held.
 */
void sv_netdev_unbind(struct sv_device *sdev)
{
	struct net_device *ndev = sdev->ndev;
	struct net_device *upper;
	struct list_head *iter;

	ASSERT_RTNL();
	if (!ndev)
		return;
	/* Its groups, on its VLAN devices too, while those are its */
	sv_mcast_unbind(sdev, ndev);
	netdev_for_each_upper_dev_rcu(ndev, upper, iter)
		sv_wire_upper_unbind(sdev, upper);
	WRITE_ONCE(sdev->ndev, NULL);
	/* Waits for the frames in flight and the senders that saw ndev. */
	sv_steer_unbind(sdev, ndev);
	spin_lock_bh(&sdev->gid_lock);
	memset(sdev->gids, 0, sizeof(sdev->gids));
	sv_route_changed();
	spin_unlock_bh(&sdev->gid_lock);
	netdev_put(ndev, &sdev->ndev_tracker);
}

static void sv_mac_changed(struct sv_device *sdev, struct net_device *ndev)
{
	if (ether_addr_equal(sdev->mac, ndev->dev_addr))
		return;
	ether_addr_copy(sdev->mac, ndev->dev_addr);
	sv_gid_fill(sdev, ndev);
	sv_device_event(sdev, SV_EVENT_GID_CHANGE);
}

static int sv_netdev_event(struct notifier_block *nb, unsigned long event,
			   void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sv_device *sdev;

	switch (event) {
	case NETDEV_REGISTER:
	case NETDEV_UNREGISTER:
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
	case NETDEV_CHANGEADDR:
		break;
	default:
		return NOTIFY_DONE;
	}
	sdev = sv_device_by_netdev_rtnl(ndev);
	if (!sdev) {
		/* A VLAN device above a bound netdev, coming or going */
		if (!is_vlan_dev(ndev) || (event != NETDEV_REGISTER &&
					   event != NETDEV_UNREGISTER))
			return NOTIFY_DONE;
		rcu_read_lock();
		sdev = sv_device_below(ndev);
		rcu_read_unlock();
		if (sdev && event == NETDEV_REGISTER)
			sv_vlan_add(sdev, ndev);
		else if (sdev)
			sv_vlan_del(sdev, ndev);
		return NOTIFY_DONE;
	}
	switch (event) {
	case NETDEV_UNREGISTER:
		/* Deleted, or leaving its namespace: the device goes. */
		mutex_lock(&sv_devices_lock);
		sv_device_remove(sdev);
		mutex_unlock(&sv_devices_lock);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		sv_port_update(sdev, ndev);
		break;
	case NETDEV_CHANGEADDR:
		sv_mac_changed(sdev, ndev);
		break;
	}
	return NOTIFY_DONE;
}

static int sv_inetaddr_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct in_ifaddr *ifa = ptr;
	struct net_device *ndev = ifa->ifa_dev->dev;
	struct sv_device *sdev;
	u8 gid[16];

	if (event != NETDEV_UP && event != NETDEV_DOWN)
		return NOTIFY_DONE;
	rcu_read_lock();
	sdev = sv_device_by_addr_netdev(ndev);
	rcu_read_unlock();
	/* Under rtnl, which every unbinding holds: sdev stays bound. */
	if (!sdev)
		return NOTIFY_DONE;
	sv_gid_from_ipv4(gid, ifa->ifa_local);
	if (sv_gid_update(sdev, gid, ndev->ifindex, event == NETDEV_UP))
		sv_device_event(sdev, SV_EVENT_GID_CHANGE);
	return NOTIFY_DONE;
}

void sv_gid_work(struct work_struct *work)
{
	struct sv_device *sdev = container_of(work, struct sv_device,
					      gid_work);

	sv_device_event(sdev, SV_EVENT_GID_CHANGE);
}

static int sv_inet6addr_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct inet6_ifaddr *ifa = ptr;
	struct net_device *ndev = ifa->idev->dev;
	struct sv_device *sdev;

	if (event != NETDEV_UP && event != NETDEV_DOWN)
		return NOTIFY_DONE;
	rcu_read_lock();
	sdev = sv_device_by_addr_netdev(ndev);
	if (sdev && sv_gid_update(sdev, ifa->addr.s6_addr, ndev->ifindex,
				  event == NETDEV_UP))
		schedule_work(&sdev->gid_work);
	rcu_read_unlock();
	return NOTIFY_DONE;
}

static struct notifier_block sv_netdev_nb = {
	.notifier_call = sv_netdev_event,
};

static struct notifier_block sv_inetaddr_nb = {
	.notifier_call = sv_inetaddr_event,
};

static struct notifier_block sv_inet6addr_nb = {
	.notifier_call = sv_inet6addr_event,
};

int sv_netdev_init(void)
{
	int ret;

	ret = register_netdevice_notifier(&sv_netdev_nb);
	if (ret)
		return ret;
	ret = register_inetaddr_notifier(&sv_inetaddr_nb);
	if (ret)
		goto err_netdev;
	ret = register_inet6addr_notifier(&sv_inet6addr_nb);
	if (ret)
		goto err_inet;
	return 0;

err_inet:
	unregister_inetaddr_notifier(&sv_inetaddr_nb);
err_netdev:
	unregister_netdevice_notifier(&sv_netdev_nb);
	return ret;
}

void sv_netdev_exit(void)
{
	unregister_inet6addr_notifier(&sv_inet6addr_nb);
	unregister_inetaddr_notifier(&sv_inetaddr_nb);
	unregister_netdevice_notifier(&sv_netdev_nb);
}
