// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs on the wire: joining multicast groups on the bound netdev.
 *
 * A UD QP attached to a group whose GID is an IPv4-mapped multicast
 * address (::ffff:224.0.0.0/4) or an IPv6 one (ff00::/8) makes the device
 * a member of that IP group on its netdev, as a socket's membership would:
 * the netdev's filter takes the group's MAC and IGMP or MLD reports go out,
 * so that snooping switches and multicast routers forward the group's
 * RoCE v2 frames to it. mcast.c says when (mcast_work, unbinding).
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>

#include "wire.h"

/**
 * sv_wire_mc_join - join (or leave) the IP group of a multicast GID
 * @ndev: the bound netdev
 * @gid: the group's GID
 * @join: join, or leave a group joined before
 *
 * 0 if joined; an errno if the netdev has no IPv4 or IPv6 configuration
 * for it. rtnl held.
 */
int sv_wire_mc_join(struct net_device *ndev, const u8 *gid, bool join)
{
	const struct in6_addr *a = (const struct in6_addr *)gid;
	struct in_device *in_dev;

	ASSERT_RTNL();
	if (ipv6_addr_v4mapped(a)) {
		in_dev = __in_dev_get_rtnl(ndev);
		if (!in_dev)
			return -ENODEV;
		if (join)
			ip_mc_inc_group(in_dev, a->s6_addr32[3]);
		else
			ip_mc_dec_group(in_dev, a->s6_addr32[3]);
		return 0;
	}
	if (join)
		return ipv6_dev_mc_inc(ndev, a);
	return ipv6_dev_mc_dec(ndev, a);
}
