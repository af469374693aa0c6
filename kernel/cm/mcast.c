// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs connection manager: multicast joins of UD ids, as rdma_cm
 * makes them on RoCE: no subnet administrator to ask, so a join is
 * granted at once (MULTICAST_JOIN) with the group's GID made from its IP
 * address, the group "QP" 0xffffff and the id's Q_Key. The membership on
 * the wire (IGMP or MLD reports) is the device's: it joins when a QP is
 * attached to the group, as the library does on MULTICAST_JOIN, and
 * leaves with the last detach (mcast.c, wire/mcast.c).
 *
 * A join lives until it is left, or its id destroyed; its unread events
 * go with it. An id holds at most SV_CM_MAX_MCS joins, charged to the
 * channel's memory cgroup.
 */
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <net/ipv6.h>

#include "cm.h"

struct sv_cm_mc *sv_cm_mc_find(struct sv_cm_id *id, u64 uid)
{
	struct sv_cm_mc *mc;

	list_for_each_entry(mc, &id->mcs, node)
		if (mc->uid == uid)
			return mc;
	return NULL;
}

static bool sv_cm_addr_mcast(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ipv4_is_multicast(((struct sockaddr_in *)a)->sin_addr.s_addr);
	return ipv6_addr_is_multicast(&((struct sockaddr_in6 *)a)->sin6_addr);
}

int sv_cm_join(struct sv_cm_id *id, struct sv_cm_join_mcast *c)
{
	const struct sockaddr_storage *addr = (void *)&c->addr;
	struct sv_cm_conn_param param = {};
	struct mem_cgroup *old;
	struct sv_cm_mc *mc;

	if (id->qp_type != SV_QPT_UD || !id->sdev ||
	    (id->state != SV_CM_BOUND && id->state != SV_CM_ADDR_RESOLVED))
		return -EINVAL;
	/* A group of the source's family: one frame holds both. */
	if (!sv_cm_addr_mcast(addr) || addr->ss_family != id->src.ss_family)
		return -EINVAL;
	if (sv_cm_mc_find(id, c->uid))
		return -EEXIST;
	if (id->nmcs >= SV_CM_MAX_MCS)
		return -ENOSPC;
	old = set_active_memcg(id->chan->memcg);
	mc = kzalloc(sizeof(*mc), GFP_KERNEL_ACCOUNT);
	set_active_memcg(old);
	if (!mc)
		return -ENOMEM;
	mc->uid = c->uid;
	sv_cm_addr_to_gid(addr, mc->mgid);
	list_add_tail(&mc->node, &id->mcs);
	id->nmcs++;
	sv_cm_set_qkey(id, 0);

	memcpy(c->mgid, mc->mgid, 16);
	c->sgid_index = id->sgid_index;
	c->hop_limit = 64;
	c->traffic_class = id->tos;
	param.qp_num = SV_CM_MC_QPN;
	param.qkey = id->qkey;
	sv_cm_mc_event(id, mc, SV_CM_EVENT_MULTICAST_JOIN, &param);
	return 0;
}

static void sv_cm_mc_free(struct sv_cm_id *id, struct sv_cm_mc *mc)
{
	sv_cm_drop_events(id, mc->uid);
	list_del(&mc->node);
	id->nmcs--;
	kfree(mc);
}

int sv_cm_leave(struct sv_cm_id *id, struct sv_cm_leave_mcast *c)
{
	struct sv_cm_mc *mc = sv_cm_mc_find(id, c->uid);

	if (!mc)
		return -ENOENT;
	c->events_reported = mc->events_reported;
	sv_cm_mc_free(id, mc);
	return 0;
}

/* The id is being destroyed. */
void sv_cm_leave_all(struct sv_cm_id *id)
{
	struct sv_cm_mc *mc, *tmp;

	list_for_each_entry_safe(mc, tmp, &id->mcs, node)
		sv_cm_mc_free(id, mc);
}
