// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs connection manager: addresses, ports and routes of the ids.
 *
 * As the kernel's rdma_cm: an id binds an IPv4 or IPv6 address (or the
 * wildcard) and a port of its port space, in its channel's network
 * namespace; port 0 takes a free one of the namespace's local port
 * range, a port below 1024 needs CAP_NET_BIND_SERVICE, and a port in use
 * by an overlapping address is EADDRINUSE unless both ids set
 * REUSEADDR (and neither listens). Resolving a destination asks the
 * namespace's routing table: the netdev the route leaves by picks the
 * softverbs device bound to it, and the route's source address (unless
 * one was bound) its GID; a destination that is a local address picks
 * the device holding it. The neighbour (MAC) is resolved when frames go
 * out (wire/tx.c).
 */
#include <linux/inet.h>
#include <linux/random.h>
#include <net/addrconf.h>
#include <net/inet_sock.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/sock.h>

#include "cm.h"

#define SV_CM_PORT_BITS	8

static DEFINE_HASHTABLE(sv_cm_ports, SV_CM_PORT_BITS);

static bool sv_cm_addr_zero(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return ipv6_addr_any(&((const struct sockaddr_in6 *)a)->sin6_addr);
}

/*
 * The wildcard or a loopback address (127/8, ::1). As the kernel's
 * rdma_cm, a loopback address is bound and listened on as the wildcard
 * is (it names no device), and resolving one (or the wildcard) as a
 * destination is the loopback resolution below.
 */
bool sv_cm_addr_any(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ipv4_is_loopback(((const struct sockaddr_in *)a)->sin_addr.s_addr) ||
		       sv_cm_addr_zero(a);
	return ipv6_addr_loopback(&((const struct sockaddr_in6 *)a)->sin6_addr) ||
	       sv_cm_addr_zero(a);
}

u16 sv_cm_addr_port(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)a)->sin_port);
	if (a->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return 0;
}

void sv_cm_addr_set_port(struct sockaddr_storage *a, u16 port)
{
	if (a->ss_family == AF_INET)
		((struct sockaddr_in *)a)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
}

/* An address as a RoCE v2 GID: IPv4 as ::ffff:a.b.c.d */
void sv_cm_addr_to_gid(const struct sockaddr_storage *a, u8 *gid)
{
	if (a->ss_family == AF_INET)
		ipv6_addr_set_v4mapped(((const struct sockaddr_in *)a)->sin_addr.s_addr,
				       (struct in6_addr *)gid);
	else
		memcpy(gid, &((const struct sockaddr_in6 *)a)->sin6_addr, 16);
}

void sv_cm_gid_to_addr(const u8 *gid, u16 port, struct sockaddr_storage *a)
{
	memset(a, 0, sizeof(*a));
	if (ipv6_addr_v4mapped((const struct in6_addr *)gid)) {
		struct sockaddr_in *s = (struct sockaddr_in *)a;

		s->sin_family = AF_INET;
		s->sin_addr.s_addr = ((const struct in6_addr *)gid)->s6_addr32[3];
		s->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)a;

		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, gid, 16);
		s->sin6_port = htons(port);
	}
}

void sv_cm_set_dev(struct sv_cm_id *id, struct sv_device *sdev)
{
	get_device(&sdev->dev);
	if (id->sdev)
		put_device(&id->sdev->dev);
	id->sdev = sdev;
}

static u32 sv_cm_port_key(const struct net *net, u16 ps, u16 port)
{
	return (u32)(unsigned long)net ^ ((u32)ps << 16) ^ port;
}

/* Do two bound addresses overlap (one is the wildcard, or they are equal)? */
static bool sv_cm_addr_overlap(const struct sv_cm_id *a,
			       const struct sv_cm_id *b)
{
	u8 ga[16], gb[16];

	if (sv_cm_addr_any(&a->src) || sv_cm_addr_any(&b->src)) {
		/* An IPv6 wildcard with AFONLY leaves IPv4 alone. */
		if (a->src.ss_family != b->src.ss_family &&
		    ((a->src.ss_family == AF_INET6 && a->afonly) ||
		     (b->src.ss_family == AF_INET6 && b->afonly)))
			return false;
		return true;
	}
	sv_cm_addr_to_gid(&a->src, ga);
	sv_cm_addr_to_gid(&b->src, gb);
	return !memcmp(ga, gb, 16);
}

static bool sv_cm_port_conflict(const struct sv_cm_id *id, u16 port)
{
	struct net *net = id->chan->net;
	struct sv_cm_id *o;

	hash_for_each_possible(sv_cm_ports, o, port_node,
			       sv_cm_port_key(net, id->ps, port)) {
		if (o->chan->net != net || o->ps != id->ps || o->port != port ||
		    !sv_cm_addr_overlap(id, o))
			continue;
		if (!(id->reuseaddr && o->reuseaddr &&
		      o->state != SV_CM_LISTEN))
			return true;
	}
	return false;
}

static void sv_cm_port_take(struct sv_cm_id *id, u16 port)
{
	id->port = port;
	sv_cm_addr_set_port(&id->src, port);
	hash_add(sv_cm_ports, &id->port_node,
		 sv_cm_port_key(id->chan->net, id->ps, port));
}

/* A free port of the local port range, as the kernel's rdma_cm takes one. */
static int sv_cm_port_any(struct sv_cm_id *id)
{
	int low, high;
	u32 n, i, p;

	inet_get_local_port_range(id->chan->net, &low, &high);
	n = high - low + 1;
	p = get_random_u32_below(n);
	for (i = 0; i < n; i++, p = (p + 1) % n) {
		if (inet_is_local_reserved_port(id->chan->net, low + p))
			continue;
		if (!sv_cm_port_conflict(id, low + p)) {
			sv_cm_port_take(id, low + p);
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}

void sv_cm_unbind(struct sv_cm_id *id)
{
	if (id->port)
		hash_del(&id->port_node);
	id->port = 0;
}

/* Is @a an address of the namespace (not necessarily a softverbs one)? */
static bool sv_cm_addr_local(struct net *net, const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return inet_addr_type(net, ((const struct sockaddr_in *)a)->
				      sin_addr.s_addr) == RTN_LOCAL;
	return ipv6_mod_enabled() &&
	       ipv6_chk_addr(net, &((const struct sockaddr_in6 *)a)->sin6_addr,
			     NULL, 0);
}

/**
 * sv_cm_bind - bind an id to an address and port
 * @id: an idle id
 * @a: AF_INET or AF_INET6; the wildcard (or a loopback address) binds no
 *     device
 *
 * EADDRNOTAVAIL for an address the namespace does not have, ENODEV for
 * one no softverbs device holds, EACCES, EADDRINUSE.
 */
int sv_cm_bind(struct sv_cm_id *id, const struct sockaddr_storage *a)
{
	u16 port = sv_cm_addr_port(a);
	struct sv_device *sdev = NULL;
	u8 gid[16];
	int ret;

	if (id->state != SV_CM_IDLE)
		return -EINVAL;
	if (a->ss_family != AF_INET && a->ss_family != AF_INET6)
		return -EAFNOSUPPORT;
	if (!sv_cm_addr_any(a)) {
		if (!sv_cm_addr_local(id->chan->net, a))
			return -EADDRNOTAVAIL;
		sv_cm_addr_to_gid(a, gid);
		sdev = sv_cm_local_dev(id->chan->net, gid);
		if (!sdev)
			return -ENODEV;
	}
	memcpy(&id->src, a, sizeof(id->src));
	if (port) {
		ret = -EACCES;
		if (port < PROT_SOCK &&
		    !ns_capable(id->chan->net->user_ns, CAP_NET_BIND_SERVICE))
			goto err;
		ret = -EADDRINUSE;
		if (sv_cm_port_conflict(id, port))
			goto err;
		sv_cm_port_take(id, port);
	} else {
		ret = sv_cm_port_any(id);
		if (ret)
			goto err;
	}
	if (sdev) {
		int index = sv_gid_index(sdev, gid, SV_GID_TYPE_ROCE_V2);

		sv_cm_set_dev(id, sdev);
		put_device(&sdev->dev);
		memcpy(id->sgid, gid, 16);
		id->sgid_index = max(index, 0);
	}
	id->state = SV_CM_BOUND;
	return 0;
err:
	memset(&id->src, 0, sizeof(id->src));
	if (sdev)
		put_device(&sdev->dev);
	return ret;
}

/*
 * The device bound to the route's netdev (or to the netdev below it, a
 * VLAN device), held; -ENODEV if none.
 */
static int sv_cm_route_dev(struct net_device *ndev, struct sv_device **sdev)
{
	rcu_read_lock();
	*sdev = sv_device_by_addr_netdev(ndev);
	if (*sdev)
		get_device(&(*sdev)->dev);
	rcu_read_unlock();
	return *sdev ? 0 : -ENODEV;
}

/* The route's netdev's device (held) and the source address. */
static int sv_cm_route4(struct sv_cm_id *id, struct sv_device **sdev)
{
	struct sockaddr_in *d = (struct sockaddr_in *)&id->dst;
	struct sockaddr_in *s = (struct sockaddr_in *)&id->src;
	struct flowi4 fl = {
		.daddr = d->sin_addr.s_addr,
		.saddr = s->sin_addr.s_addr,
		.flowi4_proto = IPPROTO_UDP,
	};
	struct rtable *rt;
	int ret = 0;

	rt = ip_route_output_key(id->chan->net, &fl);
	if (IS_ERR(rt))
		return -ENETUNREACH;
	if (rt->rt_type != RTN_LOCAL)
		ret = sv_cm_route_dev(rt->dst.dev, sdev);
	if (!ret && !s->sin_addr.s_addr)
		s->sin_addr.s_addr = rt->rt_type == RTN_LOCAL ? fl.daddr :
				     fl.saddr;
	ip_rt_put(rt);
	return ret;
}

static int sv_cm_route6(struct sv_cm_id *id, struct sv_device **sdev)
{
	struct sockaddr_in6 *d = (struct sockaddr_in6 *)&id->dst;
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)&id->src;
	struct flowi6 fl = {
		.daddr = d->sin6_addr,
		.saddr = s->sin6_addr,
		.flowi6_proto = IPPROTO_UDP,
		.flowi6_oif = d->sin6_scope_id,
	};
	struct dst_entry *dst;
	int ret = 0;

	if (!ipv6_mod_enabled())
		return -EAFNOSUPPORT;
	if (ipv6_chk_addr(id->chan->net, &d->sin6_addr, NULL, 0)) {
		if (ipv6_addr_any(&s->sin6_addr))
			s->sin6_addr = d->sin6_addr;
		return 0;
	}
	dst = ipv6_stub->ipv6_dst_lookup_flow(id->chan->net, NULL, &fl, NULL);
	if (IS_ERR(dst))
		return -ENETUNREACH;
	ret = sv_cm_route_dev(dst->dev, sdev);
	if (!ret && ipv6_addr_any(&s->sin6_addr))
		s->sin6_addr = fl.saddr;
	dst_release(dst);
	return ret;
}

/*
 * The first live device of the namespace whose port is active (the
 * first live one if none is), held; NULL if it has none.
 */
static struct sv_device *sv_cm_loopback_dev(const struct net *net)
{
	struct sv_device *sdev, *found = NULL;
	unsigned long index;

	rcu_read_lock();
	xa_for_each(&sv_devices, index, sdev) {
		if (!sv_device_in_net(sdev, net) || READ_ONCE(sdev->dead))
			continue;
		if (!found)
			found = sdev;
		if (READ_ONCE(sdev->port_state) == SV_PORT_ACTIVE) {
			found = sdev;
			break;
		}
	}
	if (found)
		get_device(&found->dev);
	rcu_read_unlock();
	return found;
}

/*
 * A destination that is the wildcard or a loopback address, as the
 * kernel's rdma_cm resolves it: the id's device (or the namespace's
 * first with an active port, the id's source then the loopback address)
 * is both ends, by its GID index 0. ENODEV at once if there is none.
 * Such a path has no netdev: resolving its route fails with ENODEV, as
 * the kernel's does on RoCE.
 */
static int sv_cm_resolve_loopback(struct sv_cm_id *id,
				  const struct sockaddr_storage *dst)
{
	struct sv_device *sdev = id->sdev;

	if (sdev) {
		get_device(&sdev->dev);
	} else {
		sdev = sv_cm_loopback_dev(id->chan->net);
		if (!sdev)
			return -ENODEV;
		if (id->src.ss_family == AF_INET)
			((struct sockaddr_in *)&id->src)->sin_addr.s_addr =
				htonl(INADDR_LOOPBACK);
		else
			((struct sockaddr_in6 *)&id->src)->sin6_addr =
				in6addr_loopback;
		sv_cm_set_dev(id, sdev);
		sv_gid_get(sdev, 0, id->sgid);
		id->sgid_index = 0;
	}
	put_device(&sdev->dev);
	memcpy(&id->dst, dst, sizeof(id->dst));
	memcpy(id->dgid, id->sgid, 16);
	id->loopback = true;
	id->state = SV_CM_ADDR_RESOLVED;
	sv_cm_event(id, SV_CM_EVENT_ADDR_RESOLVED, 0, NULL, NULL);
	return 0;
}

/**
 * sv_cm_resolve_addr - find the device and addresses to reach dst
 * @id: idle or bound
 * @src: a source to bind first (family 0: none)
 * @dst: the destination
 *
 * An error of the arguments is returned; one of the network (no route,
 * no softverbs device on the way) is the ADDR_ERROR event's status, as
 * rdma_cm reports it. ADDR_RESOLVED otherwise.
 */
int sv_cm_resolve_addr(struct sv_cm_id *id, const struct sockaddr_storage *src,
		       const struct sockaddr_storage *dst)
{
	struct sv_device *sdev = NULL;
	struct sockaddr_storage any;
	bool v4 = dst->ss_family == AF_INET;
	int ret, index;

	if (dst->ss_family != AF_INET && dst->ss_family != AF_INET6)
		return -EAFNOSUPPORT;
	if (id->state == SV_CM_IDLE && src->ss_family) {
		ret = sv_cm_bind(id, src);
		if (ret)
			return ret;
	}
	if (id->state == SV_CM_IDLE) {
		memset(&any, 0, sizeof(any));
		any.ss_family = dst->ss_family;
		ret = sv_cm_bind(id, &any);
		if (ret)
			return ret;
	}
	if (id->state != SV_CM_BOUND)
		return -EINVAL;
	if (id->src.ss_family != dst->ss_family) {
		/* An IPv6 wildcard may reach IPv4 (unless AFONLY). */
		if (!sv_cm_addr_zero(&id->src) || id->afonly)
			return -EINVAL;
		id->src.ss_family = dst->ss_family;
		sv_cm_addr_set_port(&id->src, id->port);
	}
	if (sv_cm_addr_any(dst))
		return sv_cm_resolve_loopback(id, dst);
	memcpy(&id->dst, dst, sizeof(id->dst));
	ret = v4 ? sv_cm_route4(id, &sdev) : sv_cm_route6(id, &sdev);
	if (ret)
		goto event;
	sv_cm_addr_to_gid(&id->src, id->sgid);
	sv_cm_addr_to_gid(&id->dst, id->dgid);
	if (!sdev) {
		/* A local destination: the device holding the source. */
		sdev = sv_cm_local_dev(id->chan->net, id->sgid);
		ret = -ENODEV;
		if (!sdev)
			goto event;
	}
	if (id->sdev && id->sdev != sdev) {
		ret = -ENODEV;		/* bound to another device */
		goto event;
	}
	index = sv_gid_index(sdev, id->sgid, SV_GID_TYPE_ROCE_V2);
	ret = -EADDRNOTAVAIL;
	if (index < 0)
		goto event;
	sv_cm_set_dev(id, sdev);
	id->sgid_index = index;
	id->state = SV_CM_ADDR_RESOLVED;
	ret = 0;
event:
	if (sdev)
		put_device(&sdev->dev);
	sv_cm_event(id, ret ? SV_CM_EVENT_ADDR_ERROR :
		    SV_CM_EVENT_ADDR_RESOLVED, ret, NULL, NULL);
	return 0;
}

/* The path: the device's MTU, hop limit 64, the id's TOS. */
int sv_cm_resolve_route(struct sv_cm_id *id)
{
	if (id->state != SV_CM_ADDR_RESOLVED)
		return -EINVAL;
	if (id->loopback)
		return -ENODEV;
	id->mtu = READ_ONCE(id->sdev->active_mtu);
	id->hop_limit = 64;
	id->route = true;
	id->state = SV_CM_ROUTE_RESOLVED;
	sv_cm_event(id, SV_CM_EVENT_ROUTE_RESOLVED, 0, NULL, NULL);
	return 0;
}

/**
 * sv_cm_port_listener - the id listening for a REQ
 * @net: the namespace of the device it came in on
 * @ps: the service ID's port space
 * @port: and port
 * @dst: the address it was sent to (the IP CM header's)
 * @sdev: the device it came in on
 */
struct sv_cm_id *sv_cm_port_listener(struct net *net, u16 ps, u16 port,
				     const struct sockaddr_storage *dst,
				     struct sv_device *sdev)
{
	struct sv_cm_id *id;
	u8 want[16], have[16];

	sv_cm_addr_to_gid(dst, want);
	hash_for_each_possible(sv_cm_ports, id, port_node,
			       sv_cm_port_key(net, ps, port)) {
		if (id->chan->net != net || id->ps != ps || id->port != port ||
		    id->state != SV_CM_LISTEN)
			continue;
		if (id->sdev && id->sdev != sdev)
			continue;
		if (sv_cm_addr_any(&id->src)) {
			if (id->src.ss_family == AF_INET &&
			    dst->ss_family != AF_INET)
				continue;
			if (id->src.ss_family == AF_INET6 && id->afonly &&
			    dst->ss_family != AF_INET6)
				continue;
			return id;
		}
		sv_cm_addr_to_gid(&id->src, have);
		if (!memcmp(want, have, 16))
			return id;
	}
	return NULL;
}
