// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs receive work queues, receive WQ indirection tables and
 * RSS QPs: ibv_create_wq, ibv_modify_wq, ibv_destroy_wq, ibv_post_wq_recv
 * (the WQ's post_recv op), ibv_create_rwq_ind_table,
 * ibv_destroy_rwq_ind_table, and ibv_create_qp_ex with an indirection
 * table and rx_hash_conf (qp.c hands those here). The kernel side is
 * kernel/steer/wq.c and kernel/steer/rss.c.
 *
 * A WQ's ring is a QP receive ring (uapi/softverbs-abi.h), mapped at
 * create; posting writes it and never makes a syscall, except on a WQ in
 * ERR, whose new WQEs the kernel flushes when told (a modify to ERR).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sv_verbs.h"

struct sv_wq {
	struct ibv_wq wq;		/* first: handed out */
	struct sv_uwq rq;
	void *app_ring;			/* its parent domain's buffer, or NULL */
};

static struct sv_wq *to_svwq(struct ibv_wq *wq)
{
	return container_of(wq, struct sv_wq, wq);
}

static int sv_post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad)
{
	struct sv_uwq *rq = &to_svwq(ibwq)->rq;
	struct sv_recv_wqe *w;
	struct sv_sge *sge;
	uint32_t cons;
	int i, ret = 0;

	sv_uwq_lock(rq);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge) {
			ret = EINVAL;
			break;
		}
		cons = __atomic_load_n(&rq->ring->cons, __ATOMIC_ACQUIRE);
		if (rq->prod - cons >= rq->entries) {
			ret = ENOMEM;
			break;
		}
		w = (struct sv_recv_wqe *)(rq->wqes +
			(size_t)(rq->prod & (rq->entries - 1)) * rq->wqe_size);
		w->wr_id = wr->wr_id;
		w->num_sge = wr->num_sge;
		w->reserved = 0;
		sge = (struct sv_sge *)(w + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		rq->prod++;
	}
	__atomic_store_n(&rq->ring->prod, rq->prod, __ATOMIC_RELEASE);
	sv_uwq_unlock(rq);
	if (ret)
		*bad = wr;
	/* A WQ in ERR: the kernel flushes what was just posted. */
	if (__atomic_load_n(&rq->ring->flags, __ATOMIC_RELAXED) &
	    SV_WQ_RING_ERR) {
		struct sv_modify_wq m = { .size = sizeof(m),
					  .handle = ibwq->handle,
					  .attr_mask = SV_WQ_ATTR_STATE,
					  .state = SV_WQS_ERR };

		sv_cmd(ibwq->context, SV_IOC_MODIFY_WQ, &m);
	}
	return ret;
}

static struct ibv_wq *sv_create_wq(struct ibv_context *ctx,
				   struct ibv_wq_init_attr *attr)
{
	struct sv_create_wq c = { .size = sizeof(c) };
	struct sv_destroy_wq d = { .size = sizeof(d) };
	struct sv_wq *wq;
	int ret;

	if (attr->comp_mask & ~(uint32_t)IBV_WQ_INIT_ATTR_FLAGS ||
	    !attr->pd || !attr->cq || attr->pd->context != ctx ||
	    attr->cq->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	wq = calloc(1, sizeof(*wq));
	if (!wq) {
		errno = ENOMEM;
		return NULL;
	}
	c.wq_type = attr->wq_type;
	c.pd_handle = attr->pd->handle;
	c.cq_handle = attr->cq->handle;
	c.max_wr = attr->max_wr;
	c.max_sge = attr->max_sge;
	if (attr->comp_mask & IBV_WQ_INIT_ATTR_FLAGS)
		c.flags = attr->create_flags;
	c.user_handle = (uintptr_t)&wq->wq;
	ret = sv_cmd(ctx, SV_IOC_CREATE_WQ, &c);
	if (ret) {
		free(wq);
		errno = ret;
		return NULL;
	}
	/* A parent domain's allocator may give the ring's memory (td.c). */
	ret = sv_uwq_attach(ctx, &wq->rq, attr->pd, SV_RES_TYPE_RWQ,
			    SV_RING_WQ, c.handle, c.ring_offset, c.ring_len,
			    c.max_sge, &wq->app_ring);
	if (ret) {
		d.handle = c.handle;
		sv_cmd(ctx, SV_IOC_DESTROY_WQ, &d);
		free(wq);
		errno = ret;
		return NULL;
	}

	wq->wq.context = ctx;
	wq->wq.wq_context = attr->wq_context;
	wq->wq.pd = attr->pd;
	wq->wq.cq = attr->cq;
	wq->wq.wq_num = c.wqn;
	wq->wq.handle = c.handle;
	wq->wq.state = IBV_WQS_RESET;
	wq->wq.wq_type = attr->wq_type;
	wq->wq.post_recv = sv_post_wq_recv;
	pthread_mutex_init(&wq->wq.mutex, NULL);
	pthread_cond_init(&wq->wq.cond, NULL);
	attr->max_wr = c.max_wr;
	attr->max_sge = c.max_sge;
	return &wq->wq;
}

static int sv_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr)
{
	struct sv_modify_wq m = { .size = sizeof(m), .handle = wq->handle };
	int ret;

	if (attr->attr_mask & ~(uint32_t)(IBV_WQ_ATTR_STATE |
					  IBV_WQ_ATTR_CURR_STATE |
					  IBV_WQ_ATTR_FLAGS))
		return EINVAL;
	m.attr_mask = attr->attr_mask;
	m.state = attr->wq_state;
	m.curr_state = attr->curr_wq_state;
	m.flags = attr->flags;
	m.flags_mask = attr->flags_mask;
	ret = sv_cmd(wq->context, SV_IOC_MODIFY_WQ, &m);
	if (!ret && (attr->attr_mask & IBV_WQ_ATTR_STATE))
		wq->state = attr->wq_state;
	return ret;
}

static int sv_destroy_wq(struct ibv_wq *ibwq)
{
	struct sv_wq *wq = to_svwq(ibwq);
	struct sv_destroy_wq d = { .size = sizeof(d), .handle = ibwq->handle };
	int ret;

	ret = sv_cmd(ibwq->context, SV_IOC_DESTROY_WQ, &d);
	if (ret)
		return ret;
	sv_uwq_unmap(ibwq->context, &wq->rq);
	/* Its ring was a parent domain's buffer: back to its allocator. */
	if (wq->app_ring)
		sv_pd_buffer_put(ibwq->pd, wq->app_ring, SV_RES_TYPE_RWQ);
	pthread_cond_destroy(&ibwq->cond);
	pthread_mutex_destroy(&ibwq->mutex);
	free(wq);
	return 0;
}

static struct ibv_rwq_ind_table *
sv_create_rwq_ind_table(struct ibv_context *ctx,
			struct ibv_rwq_ind_table_init_attr *attr)
{
	struct sv_create_rwq_ind_tbl c = { .size = sizeof(c) };
	struct ibv_rwq_ind_table *t;
	uint32_t *handles, n, i;
	int ret;

	if (attr->comp_mask || attr->log_ind_tbl_size > SV_MAX_LOG_IND_TBL_SIZE ||
	    !attr->ind_tbl) {
		errno = EINVAL;
		return NULL;
	}
	n = 1U << attr->log_ind_tbl_size;
	for (i = 0; i < n; i++) {
		if (!attr->ind_tbl[i] || attr->ind_tbl[i]->context != ctx) {
			errno = EINVAL;
			return NULL;
		}
	}
	t = calloc(1, sizeof(*t));
	handles = calloc(n, sizeof(*handles));
	if (!t || !handles) {
		free(t);
		free(handles);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++)
		handles[i] = attr->ind_tbl[i]->handle;
	c.log_size = attr->log_ind_tbl_size;
	c.wq_handles = (uintptr_t)handles;
	ret = sv_cmd(ctx, SV_IOC_CREATE_RWQ_IND_TBL, &c);
	free(handles);
	if (ret) {
		free(t);
		errno = ret;
		return NULL;
	}
	t->context = ctx;
	t->ind_tbl_handle = c.handle;
	t->ind_tbl_num = c.ind_tbl_num;
	return t;
}

static int sv_destroy_rwq_ind_table(struct ibv_rwq_ind_table *t)
{
	struct sv_destroy_rwq_ind_tbl d = { .size = sizeof(d),
					    .handle = t->ind_tbl_handle };
	int ret;

	ret = sv_cmd(t->context, SV_IOC_DESTROY_RWQ_IND_TBL, &d);
	if (ret)
		return ret;
	free(t);
	return 0;
}

/*
 * ibv_create_qp_ex with IBV_QP_INIT_ATTR_IND_TABLE: an RSS QP, as the
 * RDMA core and mlx5 make one: RAW_PACKET only (EOPNOTSUPP), with
 * IBV_QP_INIT_ATTR_RX_HASH, no send queue (max_send_wr 0), no receive
 * queue or SRQ and no create flags (EINVAL); send_cq and recv_cq are
 * ignored.
 */
struct ibv_qp *sv_create_rss_qp(struct ibv_context *ctx,
				struct ibv_qp_init_attr_ex *attr,
				uint32_t dv_flags)
{
	struct sv_create_rss_qp c = { .size = sizeof(c) };
	const struct ibv_rx_hash_conf *h = &attr->rx_hash_conf;
	struct sv_qp *qp;
	int ret;

	if (attr->qp_type != IBV_QPT_RAW_PACKET) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != ctx || !attr->rwq_ind_tbl ||
	    attr->rwq_ind_tbl->context != ctx || attr->srq ||
	    attr->cap.max_send_wr || attr->cap.max_recv_wr ||
	    attr->cap.max_recv_sge ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags) ||
	    (attr->comp_mask & (IBV_QP_INIT_ATTR_XRCD |
				IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
				IBV_QP_INIT_ATTR_MAX_TSO_HEADER)) ||
	    h->rx_hash_key_len > sizeof(c.key) ||
	    (h->rx_hash_key_len && !h->rx_hash_key)) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	c.pd_handle = attr->pd->handle;
	c.ind_tbl_handle = attr->rwq_ind_tbl->ind_tbl_handle;
	c.hash_function = h->rx_hash_function;
	c.fields_mask = h->rx_hash_fields_mask;
	c.key_len = h->rx_hash_key_len;
	c.flags = dv_flags;
	if (h->rx_hash_key_len)
		memcpy(c.key, h->rx_hash_key, h->rx_hash_key_len);
	c.user_handle = (uintptr_t)&qp->qpx.qp_base;
	ret = sv_cmd(ctx, SV_IOC_CREATE_RSS_QP, &c);
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	qp->qpx.qp_base.context = ctx;
	qp->qpx.qp_base.qp_context = attr->qp_context;
	qp->qpx.qp_base.pd = attr->pd;
	qp->qpx.qp_base.handle = c.handle;
	qp->qpx.qp_base.qp_num = c.qpn;
	qp->qpx.qp_base.state = IBV_QPS_RTR;
	qp->qpx.qp_base.qp_type = IBV_QPT_RAW_PACKET;
	pthread_mutex_init(&qp->qpx.qp_base.mutex, NULL);
	pthread_cond_init(&qp->qpx.qp_base.cond, NULL);
	memset(&attr->cap, 0, sizeof(attr->cap));
	return &qp->qpx.qp_base;
}

/*
 * ibv_query_device_ex: what WQs and RSS QPs can do. WQs can be made on
 * every device; RSS QPs, and the raw packet features they deliver with,
 * only on a device bound to a netdev (SV_RAW_CAP_NETDEV). Those features,
 * as mlx5 reports them: CVLAN stripping and FCS scattering (WQ flags and
 * RAW_PACKET QP create flags), and receive checksum verification
 * (IBV_WC_IP_CSUM_OK), whose legacy bit IBV_DEVICE_RAW_IP_CSUM is in
 * device_cap_flags too.
 */
void sv_wq_fill_caps(struct ibv_device_attr_ex *ex, uint32_t raw_caps)
{
	ex->max_wq_type_rq = SV_MAX_WQ;
	if (!(raw_caps & SV_RAW_CAP_NETDEV))
		return;
	ex->rss_caps.supported_qpts = 1U << IBV_QPT_RAW_PACKET;
	ex->rss_caps.max_rwq_indirection_tables = SV_MAX_RWQ_IND_TBL;
	ex->rss_caps.max_rwq_indirection_table_size =
		1U << SV_MAX_LOG_IND_TBL_SIZE;
	ex->rss_caps.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	ex->rss_caps.rx_hash_fields_mask =
		IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
		IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 |
		IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP |
		IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP |
		IBV_RX_HASH_IPSEC_SPI | IBV_RX_HASH_INNER;
	ex->raw_packet_caps |= IBV_RAW_PACKET_CAP_CVLAN_STRIPPING |
			       IBV_RAW_PACKET_CAP_SCATTER_FCS;
	ex->device_cap_flags_ex |= IBV_DEVICE_RAW_SCATTER_FCS;
	/*
	 * ... and checksums, both ways (IBV_RAW_PACKET_CAP_IP_CSUM: receive
	 * verification, IBV_SEND_IP_CSUM), and TSO (post.c)
	 */
	sv_tx_fill_caps(ex, raw_caps);
}

static int sv_wq_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.create_wq = sv_create_wq;
	ctx->vctx.modify_wq = sv_modify_wq;
	ctx->vctx.destroy_wq = sv_destroy_wq;
	ctx->vctx.create_rwq_ind_table = sv_create_rwq_ind_table;
	ctx->vctx.destroy_rwq_ind_table = sv_destroy_rwq_ind_table;
	return 0;
}
SV_CTX_PROVIDER(wq, sv_wq_ctx_init, NULL);
