// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * librdmacm.so.1 for softverbs devices: multicast joins of UD ids
 * (rdma_join_multicast, _ex, rdma_leave_multicast), as rdma-core's
 * library has them: the kernel grants a join with MULTICAST_JOIN, and
 * then the id's QP (if it has one, and the join is not send-only) is
 * attached to the group, which makes the device a member on the wire.
 * Leaving detaches it; the join is freed once its events handed out are
 * acked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm.h"

static int sv_join(struct rdma_cm_id *id, const struct sockaddr *addr,
		   bool sendonly, void *context)
{
	struct sv_cm_idp *p = sv_idp(id);
	struct sv_cm_join_mcast c = { .size = sizeof(c), .id = p->handle };
	struct sv_cm_mcp *mc;
	socklen_t len;

	len = addr->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
	      addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : 0;
	if (!len) {
		errno = EINVAL;
		return -1;
	}
	mc = calloc(1, sizeof(*mc));
	if (!mc) {
		errno = ENOMEM;
		return -1;
	}
	mc->idp = p;
	mc->context = context;
	mc->sendonly = sendonly;
	memcpy(&mc->addr, addr, len);
	memcpy(&c.addr, addr, len);
	c.uid = (uintptr_t)mc;
	c.flags = sendonly ? SV_CM_JOIN_SENDONLY : 0;
	pthread_mutex_lock(&p->lock);
	if (sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_JOIN_MCAST, &c)) {
		pthread_mutex_unlock(&p->lock);
		free(mc);
		return -1;
	}
	memcpy(mc->mgid.raw, c.mgid, 16);
	mc->sgid_index = c.sgid_index;
	mc->hop_limit = c.hop_limit;
	mc->traffic_class = c.traffic_class;
	mc->next = p->mcs;
	p->mcs = mc;
	pthread_mutex_unlock(&p->lock);
	return sv_complete(id);
}

SV_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
				  void *context)
{
	if (sv_idp(id)->fwd)
		return SV_CMS_FWD(sv_idp(id), rdma_join_multicast, addr,
				  context) ?: sv_complete(id);
	if (!addr) {
		errno = EINVAL;
		return -1;
	}
	return sv_join(id, addr, false, context);
}

SV_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
				     struct rdma_cm_join_mc_attr_ex *attr,
				     void *context)
{
	if (sv_idp(id)->fwd)
		return SV_CMS_FWD(sv_idp(id), rdma_join_multicast_ex, attr,
				  context) ?: sv_complete(id);
	if (attr->comp_mask >= RDMA_CM_JOIN_MC_ATTR_RESERVED) {
		errno = ENOTSUP;
		return -1;
	}
	if (!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) || !attr->addr ||
	    !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ||
	    attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED) {
		errno = EINVAL;
		return -1;
	}
	return sv_join(id, attr->addr,
		       attr->join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER,
		       context);
}

static bool sv_attached(const struct sv_cm_mcp *mc)
{
	return mc->idp->id.qp && !mc->sendonly;
}

/* Out of the kernel, the QP detached, freed once its events are acked. */
static int sv_leave(struct sv_cm_mcp *mc)
{
	struct sv_cm_idp *p = mc->idp;
	struct sv_cm_leave_mcast c = {
		.size = sizeof(c),
		.id = p->handle,
		.uid = (uintptr_t)mc,
	};
	int ret;

	if (sv_attached(mc))
		ibv_detach_mcast(p->id.qp, &mc->mgid, 0);
	ret = sv_cm_ioctl(sv_kfd(p->id.channel), SV_CM_IOC_LEAVE_MCAST, &c);
	pthread_mutex_lock(&p->lock);
	while (!ret && mc->events_completed < c.events_reported)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
	free(mc);
	return ret;
}

/* Take the join of addr out of the id's list. */
static struct sv_cm_mcp *sv_unlink(struct sv_cm_idp *p,
				   const struct sockaddr *addr, socklen_t len)
{
	struct sv_cm_mcp **pos, *mc = NULL;

	pthread_mutex_lock(&p->lock);
	for (pos = &p->mcs; *pos; pos = &(*pos)->next) {
		if (!addr || !memcmp(&(*pos)->addr, addr, len)) {
			mc = *pos;
			*pos = mc->next;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return mc;
}

SV_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id,
				   struct sockaddr *addr)
{
	socklen_t len;
	struct sv_cm_mcp *mc;

	if (sv_idp(id)->fwd)
		return SV_CMS_FWD(sv_idp(id), rdma_leave_multicast, addr);

	len = !addr ? 0 : addr->sa_family == AF_INET ?
	      sizeof(struct sockaddr_in) : addr->sa_family == AF_INET6 ?
	      sizeof(struct sockaddr_in6) : 0;
	if (!len) {
		errno = EINVAL;
		return -1;
	}
	mc = sv_unlink(sv_idp(id), addr, len);
	if (!mc) {
		errno = EADDRNOTAVAIL;
		return -1;
	}
	return sv_leave(mc);
}

/* Before the id is destroyed. */
void sv_mc_leave_all(struct sv_cm_idp *p)
{
	struct sv_cm_mcp *mc;

	while ((mc = sv_unlink(p, NULL, 0)))
		sv_leave(mc);
}

/*
 * A MULTICAST_JOIN: the group's address handle attributes, and the QP
 * attached (else it is a MULTICAST_ERROR with the attach's errno).
 */
void sv_mc_event(struct sv_cm_evp *e, const struct sv_cm_get_event *k)
{
	struct sv_cm_mcp *mc = (struct sv_cm_mcp *)(uintptr_t)k->uid;
	struct rdma_ud_param *u = &e->ev.param.ud;
	struct sv_cm_idp *p = mc->idp;
	int ret;

	e->mc = mc;
	e->owner = p;
	e->ev.id = &p->id;
	e->ev.event = k->event;
	e->ev.status = k->status;
	memset(u, 0, sizeof(*u));
	u->private_data = mc->context;
	if (k->event != SV_CM_EVENT_MULTICAST_JOIN)
		return;
	pthread_mutex_lock(&p->lock);	/* filled in by sv_join() */
	u->ah_attr.grh.dgid = mc->mgid;
	u->ah_attr.grh.sgid_index = mc->sgid_index;
	u->ah_attr.grh.hop_limit = mc->hop_limit;
	u->ah_attr.grh.traffic_class = mc->traffic_class;
	u->ah_attr.is_global = 1;
	u->ah_attr.port_num = p->id.port_num ?: 1;
	u->qp_num = k->param.qp_num;
	u->qkey = k->param.qkey;
	pthread_mutex_unlock(&p->lock);
	if (!sv_attached(mc))
		return;
	ret = ibv_attach_mcast(p->id.qp, &mc->mgid, 0);
	if (ret) {
		e->ev.event = RDMA_CM_EVENT_MULTICAST_ERROR;
		e->ev.status = -ret;
	}
}
