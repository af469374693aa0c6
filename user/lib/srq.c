// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs shared receive queues: ibv_create_srq, ibv_create_srq_ex
 * (the verbs_context op; basic and XRC SRQs), ibv_modify_srq (the limit, and
 * resizing: the ring moves), ibv_query_srq, ibv_destroy_srq. The kernel
 * side is kernel/srq.c; ibv_post_srq_recv is post.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "sv_verbs.h"
#include "sv_system.h"

/* A basic SRQ, or an XRC one of xrcd whose completions go to cq. */
static struct ibv_srq *sv_srq_create(struct ibv_pd *pd, void *srq_context,
				     struct ibv_srq_attr *attr,
				     struct ibv_xrcd *xrcd, struct ibv_cq *cq)
{
	struct sv_create_srq c = { .size = sizeof(c) };
	struct sv_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	c.pd_handle = pd->handle;
	c.max_wr = attr->max_wr;
	c.max_sge = attr->max_sge;
	c.user_handle = (uintptr_t)&srq->srq;
	if (xrcd) {
		c.srq_type = SV_SRQT_XRC;
		c.xrcd_handle = to_svxrcd(xrcd)->handle;
		c.cq_handle = cq->handle;
	}
	ret = sv_cmd(pd->context, SV_IOC_CREATE_SRQ, &c);
	if (ret) {
		free(srq);
		errno = ret;
		return NULL;
	}
	srq->srq.context = pd->context;
	srq->srq.srq_context = srq_context;
	srq->srq.pd = pd;
	srq->srq.handle = c.handle;
	srq->srqn = c.srqn;
	pthread_mutex_init(&srq->srq.mutex, NULL);
	pthread_cond_init(&srq->srq.cond, NULL);
	/* srq_limit is not used by create: the SRQ starts unarmed. */
	attr->max_wr = c.max_wr;
	attr->max_sge = c.max_sge;
	ret = sv_dp_srq_map(srq, c.max_sge);
	if (ret) {
		struct sv_destroy_srq d = { .size = sizeof(d),
					    .handle = c.handle };

		sv_cmd(pd->context, SV_IOC_DESTROY_SRQ, &d);
		free(srq);
		errno = ret;
		return NULL;
	}
	return &srq->srq;
}

SV_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
					 struct ibv_srq_init_attr *attr)
{
	SV_SYSTEM_FORWARD(pd->context, ibv_create_srq, pd, attr);
	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	return sv_srq_create(pd, attr->srq_context, &attr->attr, NULL, NULL);
}

#define SV_SRQ_INIT_ATTR_KNOWN						\
	(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |		\
	 IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ |		\
	 IBV_SRQ_INIT_ATTR_TM)

static struct ibv_srq *sv_create_srq_ex(struct ibv_context *ctx,
					struct ibv_srq_init_attr_ex *attr)
{
	enum ibv_srq_type type = attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE ?
				 attr->srq_type : IBV_SRQT_BASIC;
	bool xrc = type == IBV_SRQT_XRC;

	if (attr->comp_mask & ~(uint32_t)SV_SRQ_INIT_ATTR_KNOWN) {
		errno = EINVAL;
		return NULL;
	}
	/* Tag matching SRQs are not supported. */
	if (type == IBV_SRQT_TM || (attr->comp_mask & IBV_SRQ_INIT_ATTR_TM)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* An XRC SRQ needs its domain and CQ (as uverbs); others take none. */
	if (type > IBV_SRQT_TM ||
	    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != ctx ||
	    (xrc && (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) ||
		     !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) ||
		     !attr->xrcd || !attr->cq ||
		     attr->xrcd->context != ctx ||
		     attr->cq->context != ctx))) {
		errno = EINVAL;
		return NULL;
	}
	return sv_srq_create(attr->pd, attr->srq_context, &attr->attr,
			     xrc ? attr->xrcd : NULL, xrc ? attr->cq : NULL);
}

SV_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			     int attr_mask)
{
	SV_SYSTEM_FORWARD(srq->context, ibv_modify_srq, srq, attr, attr_mask);
	struct sv_modify_srq m = { .size = sizeof(m) };

	struct sv_srq *s = container_of(srq, struct sv_srq, srq);
	int ret;

	m.handle = srq->handle;
	m.attr_mask = attr_mask;
	m.max_wr = attr->max_wr;
	m.srq_limit = attr->srq_limit;
	if (!(attr_mask & IBV_SRQ_MAX_WR))
		return sv_cmd(srq->context, SV_IOC_MODIFY_SRQ, &m);
	/* A resize moves the ring: no post meanwhile. */
	sv_uwq_lock(&s->rq);
	ret = sv_cmd(srq->context, SV_IOC_MODIFY_SRQ, &m);
	if (!ret)
		ret = sv_dp_srq_remap(s, m.mmap_offset, m.mmap_len);
	sv_uwq_unlock(&s->rq);
	return ret;
}

SV_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	SV_SYSTEM_FORWARD(srq->context, ibv_query_srq, srq, attr);
	struct sv_query_srq q = { .size = sizeof(q), .handle = srq->handle };
	int ret;

	ret = sv_cmd(srq->context, SV_IOC_QUERY_SRQ, &q);
	if (ret)
		return ret;
	attr->max_wr = q.max_wr;
	attr->max_sge = q.max_sge;
	attr->srq_limit = q.srq_limit;
	return 0;
}

SV_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	SV_SYSTEM_FORWARD(srq->context, ibv_destroy_srq, srq);
	struct sv_destroy_srq d = { .size = sizeof(d), .handle = srq->handle };
	int ret;

	ret = sv_cmd(srq->context, SV_IOC_DESTROY_SRQ, &d);
	if (ret)
		return ret;
	/* Wait until every async event the SRQ reported has been acked. */
	pthread_mutex_lock(&srq->mutex);
	while (srq->events_completed != d.events_reported)
		pthread_cond_wait(&srq->cond, &srq->mutex);
	pthread_mutex_unlock(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	pthread_mutex_destroy(&srq->mutex);
	sv_dp_srq_unmap(container_of(srq, struct sv_srq, srq));
	free(container_of(srq, struct sv_srq, srq));
	return 0;
}

/* As mlx5: every SRQ has its number (DC programs send it, XRC uses it). */
static int sv_get_srq_num(struct ibv_srq *srq, uint32_t *num)
{
	*num = container_of(srq, struct sv_srq, srq)->srqn;
	return 0;
}

static int sv_srq_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.create_srq_ex = sv_create_srq_ex;
	ctx->vctx.get_srq_num = sv_get_srq_num;
	return 0;
}
SV_CTX_PROVIDER(srq, sv_srq_ctx_init, NULL);
