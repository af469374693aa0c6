// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs: completion channels, completion events and async events.
 *
 * A completion channel is a kernel object with a handle and an fd; the
 * fd is readable while an event is queued (poll/epoll/O_NONBLOCK work as
 * on rdma-core's channel fd). ibv_get_cq_event() reads one struct
 * sv_comp_event; the CQ's pointer is its user_handle. Async events come
 * from context->async_fd the same way. Every event read must be acked;
 * destroying a CQ/QP/SRQ/WQ waits for the acks of the events the kernel
 * says were read (rdma-core's contract).
 */
#include <stdlib.h>
#include <unistd.h>

#include "sv_verbs.h"
#include "sv_system.h"

static int sv_event_ctx_init(struct sv_context *ctx)
{
	struct sv_get_async_fd a = { .size = sizeof(a) };
	int ret;

	ret = sv_cmd(&ctx->vctx.context, SV_IOC_GET_ASYNC_FD, &a);
	if (ret)
		return ret;
	ctx->vctx.context.async_fd = a.fd;
	return 0;
}

static void sv_event_ctx_fini(struct sv_context *ctx)
{
	if (ctx->vctx.context.async_fd >= 0)
		close(ctx->vctx.context.async_fd);
	ctx->vctx.context.async_fd = -1;
}

SV_CTX_PROVIDER(event, sv_event_ctx_init, sv_event_ctx_fini);

SV_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	SV_SYSTEM_FORWARD(context, ibv_create_comp_channel, context);
	struct sv_create_comp_channel c = { .size = sizeof(c) };
	struct sv_comp_channel *ch;
	int ret;

	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	ret = sv_cmd(context, SV_IOC_CREATE_COMP_CHANNEL, &c);
	if (ret) {
		free(ch);
		errno = ret;
		return NULL;
	}
	ch->ch.context = context;
	ch->ch.fd = c.fd;
	ch->ch.refcnt = 0;
	ch->handle = c.handle;
	return &ch->ch;
}

/* Returns 0 or an errno value: EBUSY while CQs use the channel. */
SV_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	SV_SYSTEM_FORWARD(channel->context, ibv_destroy_comp_channel, channel);
	struct sv_comp_channel *ch = to_svchan(channel);
	struct sv_destroy_comp_channel d = { .size = sizeof(d),
					     .handle = ch->handle };
	struct ibv_context *context = channel->context;
	int ret;

	pthread_mutex_lock(&context->mutex);
	if (channel->refcnt) {
		pthread_mutex_unlock(&context->mutex);
		errno = EBUSY;
		return EBUSY;
	}
	ret = sv_cmd(context, SV_IOC_DESTROY_COMP_CHANNEL, &d);
	pthread_mutex_unlock(&context->mutex);
	if (ret)
		return ret;
	close(channel->fd);
	free(ch);
	return 0;
}

/* Reads one record; -1 with errno (EAGAIN if non-blocking and none). */
static int sv_read_event(int fd, void *rec, size_t len)
{
	ssize_t n = read(fd, rec, len);

	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		errno = EIO;
	return -1;
}

SV_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel,
			       struct ibv_cq **cq, void **cq_context)
{
	SV_SYSTEM_FORWARD(channel->context, ibv_get_cq_event, channel, cq,
	                  cq_context);
	struct sv_comp_event ev;
	struct ibv_cq *ibcq;

	/* About to wait: posts that left their rings to a poll ring now. */
	sv_db_flush(channel->context);
	if (sv_read_event(channel->fd, &ev, sizeof(ev)))
		return -1;
	ibcq = (struct ibv_cq *)(uintptr_t)ev.user_handle;
	*cq = ibcq;
	*cq_context = ibcq->cq_context;
	return 0;
}

SV_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (sv_system_context(cq->context)) {
		SV_SYSTEM_CALL_VOID(ibv_ack_cq_events, cq, nevents);
		return;
	}
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* Which kind of object an async event names (verbs.h's element union). */
enum sv_event_kind { SV_EV_CQ, SV_EV_QP, SV_EV_SRQ, SV_EV_WQ, SV_EV_PORT,
		     SV_EV_DEVICE };

static enum sv_event_kind sv_event_kind(enum ibv_event_type type)
{
	switch (type) {
	case IBV_EVENT_CQ_ERR:
		return SV_EV_CQ;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return SV_EV_QP;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return SV_EV_SRQ;
	case IBV_EVENT_WQ_FATAL:
		return SV_EV_WQ;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		return SV_EV_PORT;
	default:	/* IBV_EVENT_DEVICE_FATAL */
		return SV_EV_DEVICE;
	}
}

SV_EXPORT int ibv_get_async_event(struct ibv_context *context,
				  struct ibv_async_event *event)
{
	SV_SYSTEM_FORWARD(context, ibv_get_async_event, context, event);
	struct sv_async_event ev;
	void *obj;

	if (sv_read_event(context->async_fd, &ev, sizeof(ev)))
		return -1;
	obj = (void *)(uintptr_t)ev.element;
	event->event_type = ev.event_type;
	switch (sv_event_kind(ev.event_type)) {
	case SV_EV_CQ:
		event->element.cq = obj;
		break;
	case SV_EV_QP:
		event->element.qp = obj;
		break;
	case SV_EV_SRQ:
		event->element.srq = obj;
		break;
	case SV_EV_WQ:
		event->element.wq = obj;
		break;
	case SV_EV_PORT:
		event->element.port_num = (int)ev.element;
		break;
	case SV_EV_DEVICE:
		event->element.port_num = 0;
		break;
	}
	return 0;
}

/* Count the ack on the object, for its destroy to wait on. */
static void sv_ack_one(pthread_mutex_t *mutex, pthread_cond_t *cond,
		       uint32_t *completed)
{
	pthread_mutex_lock(mutex);
	++*completed;
	pthread_cond_signal(cond);
	pthread_mutex_unlock(mutex);
}

/* The context an async event's object belongs to; NULL for a port's. */
static struct ibv_context *sv_event_context(struct ibv_async_event *event)
{
	switch (sv_event_kind(event->event_type)) {
	case SV_EV_CQ:
		return event->element.cq->context;
	case SV_EV_QP:
		return event->element.qp->context;
	case SV_EV_SRQ:
		return event->element.srq->context;
	case SV_EV_WQ:
		return event->element.wq->context;
	default:
		return NULL;
	}
}

SV_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	if (sv_system_context(sv_event_context(event))) {
		SV_SYSTEM_CALL_VOID(ibv_ack_async_event, event);
		return;
	}
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_wq *wq;

	switch (sv_event_kind(event->event_type)) {
	case SV_EV_CQ:
		cq = event->element.cq;
		sv_ack_one(&cq->mutex, &cq->cond, &cq->async_events_completed);
		break;
	case SV_EV_QP:
		qp = event->element.qp;
		sv_ack_one(&qp->mutex, &qp->cond, &qp->events_completed);
		break;
	case SV_EV_SRQ:
		srq = event->element.srq;
		sv_ack_one(&srq->mutex, &srq->cond, &srq->events_completed);
		break;
	case SV_EV_WQ:
		wq = event->element.wq;
		sv_ack_one(&wq->mutex, &wq->cond, &wq->events_completed);
		break;
	case SV_EV_PORT:
	case SV_EV_DEVICE:
		break;
	}
}
