// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * librdmacm.so.1 for softverbs devices: synchronous ids and moving ids
 * between channels, as rdma-core's library has them.
 *
 * An id made without a channel (rdma_create_id(NULL, ...),
 * rdma_create_ep()) gets one of its own, and each call that an event
 * answers (resolving, connecting, accepting, disconnecting, joining)
 * waits for it: its status is the call's error (a rejection is
 * ECONNREFUSED), the event stays in id->event until the next call or
 * the id's end. A synchronous listener's requests are taken with
 * rdma_get_request(), each moved to a channel of its own
 * (rdma_migrate_id(), SV_CM_IOC_MIGRATE_ID).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "rdmacm.h"

/* An event's failure as errno (a rejection: ECONNREFUSED); 0: none. */
static int sv_event_errno(const struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		return ECONNREFUSED;
	return ev->status < 0 ? -ev->status : ev->status;
}

int sv_complete(struct rdma_cm_id *id)
{
	struct sv_cm_idp *p = sv_idp(id);

	if (!p->sync)
		return 0;
	if (id->event) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	if (rdma_get_cm_event(id->channel, &id->event))
		return -1;
	if (!id->event->status)
		return 0;
	errno = sv_event_errno(id->event);
	return -1;
}

SV_EXPORT int rdma_migrate_id(struct rdma_cm_id *id,
			      struct rdma_event_channel *channel)
{
	struct sv_cm_idp *p = sv_idp(id);
	struct sv_cm_migrate_id c = {
		.size = sizeof(c),
		.id = p->handle,
		.fd = sv_kfd(id->channel),
	};
	bool sync = !channel;
	int save;

	if (p->sync && !channel) {
		errno = EINVAL;
		return -1;
	}
	if (sync) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
	}
	/* The system's id moves to the new channel's system channel. */
	if (p->sys && (!sv_chan(channel)->sys ||
		       SV_CMS(rdma_migrate_id, p->sys, sv_chan(channel)->sys))) {
		errno = sv_chan(channel)->sys ? errno : ENODEV;
		goto err;
	}
	if (!p->fwd && sv_cm_ioctl(sv_kfd(channel), SV_CM_IOC_MIGRATE_ID, &c))
		goto err;
	if (p->sync) {
		if (id->event) {
			rdma_ack_cm_event(id->event);
			id->event = NULL;
		}
		rdma_destroy_event_channel(id->channel);
	}
	/* Events it had read from the old channel are acked first. */
	pthread_mutex_lock(&p->lock);
	p->sync = sync;
	id->channel = channel;
	if (!p->fwd)
		p->handle = c.id;
	while (!p->fwd && p->events_completed < c.events_reported)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
	return 0;
err:
	save = errno;
	if (sync)
		rdma_destroy_event_channel(channel);
	errno = save;
	return -1;
}

SV_EXPORT int rdma_get_request(struct rdma_cm_id *listen,
			       struct rdma_cm_id **id)
{
	struct sv_cm_idp *lis = sv_idp(listen);
	struct rdma_cm_event *event;
	struct ibv_qp_init_attr attr;

	if (!lis->sync) {
		errno = EINVAL;
		return -1;
	}
	if (listen->event) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &event))
		return -1;
	if (event->event == RDMA_CM_EVENT_REJECTED || event->status) {
		errno = sv_event_errno(event);
		goto err;
	}
	if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		errno = EINVAL;
		goto err;
	}
	if (lis->qp_init_attr) {
		attr = *lis->qp_init_attr;
		if (rdma_create_qp(event->id, listen->pd, &attr))
			goto err;
	}
	*id = event->id;
	(*id)->event = event;
	return 0;
err:
	listen->event = event;
	return -1;
}

/* A passive endpoint: bound; its requests get a QP like qp_init_attr. */
static int sv_passive_ep(struct rdma_cm_id *id, struct rdma_addrinfo *res,
			 struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct sv_cm_idp *p = sv_idp(id);

	if (rdma_bind_addr(id, res->ai_src_addr))
		return -1;
	if (pd)
		id->pd = pd;
	if (attr) {
		p->qp_init_attr = malloc(sizeof(*attr));
		if (!p->qp_init_attr) {
			errno = ENOMEM;
			return -1;
		}
		*p->qp_init_attr = *attr;
		p->qp_init_attr->qp_type = res->ai_qp_type;
	}
	return 0;
}

SV_EXPORT int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
			     struct ibv_pd *pd,
			     struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm_id;
	int save;

	if (!id || !res) {
		errno = EINVAL;
		return -1;
	}
	if (sv_create_id(NULL, &cm_id, NULL, res->ai_port_space,
			 res->ai_qp_type))
		return -1;
	if (res->ai_flags & RAI_PASSIVE) {
		if (sv_passive_ep(cm_id, res, pd, qp_init_attr))
			goto err;
		*id = cm_id;
		return 0;
	}
	if (rdma_resolve_addr(cm_id, res->ai_src_addr, res->ai_dst_addr,
			      2000) ||
	    rdma_resolve_route(cm_id, 2000))
		goto err;
	if (qp_init_attr) {
		qp_init_attr->qp_type = res->ai_qp_type;
		if (rdma_create_qp(cm_id, pd, qp_init_attr))
			goto err;
	}
	*id = cm_id;
	return 0;
err:
	save = errno;
	rdma_destroy_ep(cm_id);
	errno = save;
	return -1;
}

SV_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
	rdma_destroy_qp(id);
	rdma_destroy_srq(id);
	rdma_destroy_id(id);
}
