// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs shared receive queues: ibv_create_srq, ibv_create_srq_ex
 * (the verbs_context op; basic, XRC and tag-matching SRQs), ibv_modify_srq
 * (the limit, and resizing: the ring moves), ibv_query_srq,
 * ibv_destroy_srq, ibv_post_srq_ops (tag lists). The kernel side is
 * kernel/srq.c and kernel/tm.c; ibv_post_srq_recv is post.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "sv_verbs.h"
#include "sv_system.h"

/* An SRQ of pd; c says which kind (its XRC or TM fields filled in). */
static struct ibv_srq *sv_srq_create(struct ibv_pd *pd, void *srq_context,
				     struct ibv_srq_attr *attr,
				     struct sv_create_srq *cp)
{
	struct sv_create_srq c = *cp;
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
	srq->tm_max_ops = c.max_ops;
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
	struct sv_create_srq c = { .size = sizeof(c) };

	return sv_srq_create(pd, attr->srq_context, &attr->attr, &c);
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
	struct sv_create_srq c = { .size = sizeof(c) };
	bool xrc = type == IBV_SRQT_XRC, tm = type == IBV_SRQT_TM;

	if (attr->comp_mask & ~(uint32_t)SV_SRQ_INIT_ATTR_KNOWN) {
		errno = EINVAL;
		return NULL;
	}
	/*
	 * An XRC SRQ needs its domain and CQ (as uverbs), a TM SRQ its CQ
	 * and its tm_cap; others take none.
	 */
	if (type > IBV_SRQT_TM ||
	    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != ctx ||
	    (xrc && (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) ||
		     !attr->xrcd || attr->xrcd->context != ctx)) ||
	    ((xrc || tm) && (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) ||
			     !attr->cq || attr->cq->context != ctx)) ||
	    (tm != !!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TM))) {
		errno = EINVAL;
		return NULL;
	}
	if (xrc) {
		c.srq_type = SV_SRQT_XRC;
		c.xrcd_handle = to_svxrcd(attr->xrcd)->handle;
		c.cq_handle = attr->cq->handle;
	} else if (tm) {
		c.srq_type = SV_SRQT_TM;
		c.cq_handle = attr->cq->handle;
		c.max_num_tags = attr->tm_cap.max_num_tags;
		c.max_ops = attr->tm_cap.max_ops;
	}
	return sv_srq_create(attr->pd, attr->srq_context, &attr->attr, &c);
}

/* One ibv_ops_wr as the kernel takes it; EINVAL for a bad SGE list. */
static int sv_srq_op_fill(struct sv_srq_op *o, const struct ibv_ops_wr *wr)
{
	memset(o, 0, sizeof(*o));
	o->wr_id = wr->wr_id;
	o->opcode = wr->opcode;
	o->flags = wr->flags;
	o->unexpected_cnt = wr->tm.unexpected_cnt;
	o->handle = wr->tm.handle;
	if (wr->opcode != IBV_WR_TAG_ADD)
		return 0;
	if (wr->tm.add.num_sge < 0 || wr->tm.add.num_sge > SV_TM_MAX_SGE ||
	    (wr->tm.add.num_sge && !wr->tm.add.sg_list))
		return EINVAL;
	o->recv_wr_id = wr->tm.add.recv_wr_id;
	o->tag = wr->tm.add.tag;
	o->mask = wr->tm.add.mask;
	o->num_sge = wr->tm.add.num_sge;
	for (int i = 0; i < wr->tm.add.num_sge; i++) {
		o->sge[i].addr = wr->tm.add.sg_list[i].addr;
		o->sge[i].length = wr->tm.add.sg_list[i].length;
		o->sge[i].lkey = wr->tm.add.sg_list[i].lkey;
	}
	return 0;
}

#define SV_SRQ_OPS_BATCH	32

/*
 * ibv_post_srq_ops(3): the list in batches, each op carried out by the
 * kernel at once (so none stays outstanding); ADD's handle comes back in
 * tm.handle. On an error, *bad_op is the op that failed and the ops
 * before it were carried out.
 */
static int sv_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *wr,
			   struct ibv_ops_wr **bad_op)
{
	struct sv_srq *srq = container_of(ibsrq, struct sv_srq, srq);
	struct sv_srq_op ops[SV_SRQ_OPS_BATCH];
	struct ibv_ops_wr *batch[SV_SRQ_OPS_BATCH];
	uint32_t n, max, i;
	int ret = 0;

	if (!srq->tm_max_ops) {
		*bad_op = wr;
		return EINVAL;
	}
	max = srq->tm_max_ops < SV_SRQ_OPS_BATCH ? srq->tm_max_ops :
						  SV_SRQ_OPS_BATCH;
	while (wr) {
		struct sv_post_srq_ops p = { .size = sizeof(p) };

		for (n = 0; wr && n < max; wr = wr->next, n++) {
			ret = sv_srq_op_fill(&ops[n], wr);
			if (ret)
				break;
			batch[n] = wr;
		}
		if (n) {
			p.handle = ibsrq->handle;
			p.ops = (uintptr_t)ops;
			p.count = n;
			int err = sv_cmd(ibsrq->context, SV_IOC_POST_SRQ_OPS,
					 &p);

			if (err) {
				*bad_op = batch[0];
				return err;
			}
			for (i = 0; i < p.done; i++)
				if (batch[i]->opcode == IBV_WR_TAG_ADD)
					batch[i]->tm.handle = ops[i].handle;
			if (p.error) {
				*bad_op = batch[p.done];
				return p.error;
			}
		}
		if (ret) {
			*bad_op = wr;
			return ret;
		}
	}
	return 0;
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
	struct sv_srq *s = container_of(srq, struct sv_srq, srq);
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
	sv_dp_srq_unmap(s);
	/* Its ring was a parent domain's buffer: back to its allocator. */
	if (s->app_ring)
		sv_pd_buffer_put(srq->pd, s->app_ring, SV_RES_TYPE_SRQ);
	free(s);
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
	ctx->vctx.post_srq_ops = sv_post_srq_ops;
	return 0;
}
SV_CTX_PROVIDER(srq, sv_srq_ctx_init, NULL);
