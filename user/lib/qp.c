// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs queue pairs: ibv_create_qp, ibv_create_qp_ex (the
 * verbs_context op), ibv_modify_qp, ibv_query_qp, ibv_destroy_qp,
 * ibv_qp_to_qp_ex, and multicast attach/detach. The kernel side, with the
 * state machine, is kernel/qp.c and kernel/qp_attr.c.
 *
 * Not here yet (the data path): ibv_post_send/ibv_post_recv keep the
 * context's EOPNOTSUPP defaults, and every ibv_wr_* builder of an
 * ibv_qp_ex only records EOPNOTSUPP, which ibv_wr_complete() returns.
 */
#include <stdlib.h>
#include <string.h>

#include "sv_verbs.h"
#include "sv_system.h"
#include "sv_private.h"

static struct sv_qp *qpx_to_svqp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct sv_qp, qpx);
}

/* ---- ibv_qp_ex work request builders: the data path is not here yet ---- */

static void sv_wr_fail(struct ibv_qp_ex *qpx)
{
	qpx_to_svqp(qpx)->wr_err = EOPNOTSUPP;
}

static void sv_wr_atomic_cmp_swp(struct ibv_qp_ex *q, uint32_t rkey,
				 uint64_t addr, uint64_t cmp, uint64_t swap)
{
	(void)rkey; (void)addr; (void)cmp; (void)swap;
	sv_wr_fail(q);
}

static void sv_wr_atomic_fetch_add(struct ibv_qp_ex *q, uint32_t rkey,
				   uint64_t addr, uint64_t add)
{
	(void)rkey; (void)addr; (void)add;
	sv_wr_fail(q);
}

static void sv_wr_bind_mw(struct ibv_qp_ex *q, struct ibv_mw *mw,
			  uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	(void)mw; (void)rkey; (void)info;
	sv_wr_fail(q);
}

static void sv_wr_key(struct ibv_qp_ex *q, uint32_t key)
{
	(void)key;
	sv_wr_fail(q);
}

static void sv_wr_rdma(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr)
{
	(void)rkey; (void)addr;
	sv_wr_fail(q);
}

static void sv_wr_rdma_write_imm(struct ibv_qp_ex *q, uint32_t rkey,
				 uint64_t addr, __be32 imm)
{
	(void)rkey; (void)addr; (void)imm;
	sv_wr_fail(q);
}

static void sv_wr_send_imm(struct ibv_qp_ex *q, __be32 imm)
{
	(void)imm;
	sv_wr_fail(q);
}

static void sv_wr_send_tso(struct ibv_qp_ex *q, void *hdr, uint16_t hdr_sz,
			   uint16_t mss)
{
	(void)hdr; (void)hdr_sz; (void)mss;
	sv_wr_fail(q);
}

static void sv_wr_atomic_write(struct ibv_qp_ex *q, uint32_t rkey,
			       uint64_t addr, const void *wr)
{
	(void)rkey; (void)addr; (void)wr;
	sv_wr_fail(q);
}

static void sv_wr_flush(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr,
			size_t len, uint8_t type, uint8_t level)
{
	(void)rkey; (void)addr; (void)len; (void)type; (void)level;
	sv_wr_fail(q);
}

/* Setters describe the current WR; without a WR there is nothing to do. */
static void sv_wr_set_ud_addr(struct ibv_qp_ex *q, struct ibv_ah *ah,
			      uint32_t qpn, uint32_t qkey)
{
	(void)q; (void)ah; (void)qpn; (void)qkey;
}

static void sv_wr_set_xrc_srqn(struct ibv_qp_ex *q, uint32_t srqn)
{
	(void)q; (void)srqn;
}

static void sv_wr_set_inline_data(struct ibv_qp_ex *q, void *addr,
				  size_t len)
{
	(void)q; (void)addr; (void)len;
}

static void sv_wr_set_inline_data_list(struct ibv_qp_ex *q, size_t n,
				       const struct ibv_data_buf *bufs)
{
	(void)q; (void)n; (void)bufs;
}

static void sv_wr_set_sge(struct ibv_qp_ex *q, uint32_t lkey, uint64_t addr,
			  uint32_t len)
{
	(void)q; (void)lkey; (void)addr; (void)len;
}

static void sv_wr_set_sge_list(struct ibv_qp_ex *q, size_t n,
			       const struct ibv_sge *sges)
{
	(void)q; (void)n; (void)sges;
}

static void sv_wr_start(struct ibv_qp_ex *q)
{
	qpx_to_svqp(q)->wr_err = 0;
}

static int sv_wr_complete(struct ibv_qp_ex *q)
{
	struct sv_qp *qp = qpx_to_svqp(q);
	int ret = qp->wr_err;

	qp->wr_err = 0;
	return ret;
}

static void sv_wr_abort(struct ibv_qp_ex *q)
{
	qpx_to_svqp(q)->wr_err = 0;
}

static void sv_qp_fill_wr_ops(struct ibv_qp_ex *x)
{
	x->wr_atomic_cmp_swp = sv_wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = sv_wr_atomic_fetch_add;
	x->wr_bind_mw = sv_wr_bind_mw;
	x->wr_local_inv = sv_wr_key;
	x->wr_rdma_read = sv_wr_rdma;
	x->wr_rdma_write = sv_wr_rdma;
	x->wr_rdma_write_imm = sv_wr_rdma_write_imm;
	x->wr_send = sv_wr_fail;
	x->wr_send_imm = sv_wr_send_imm;
	x->wr_send_inv = sv_wr_key;
	x->wr_send_tso = sv_wr_send_tso;
	x->wr_set_ud_addr = sv_wr_set_ud_addr;
	x->wr_set_xrc_srqn = sv_wr_set_xrc_srqn;
	x->wr_set_inline_data = sv_wr_set_inline_data;
	x->wr_set_inline_data_list = sv_wr_set_inline_data_list;
	x->wr_set_sge = sv_wr_set_sge;
	x->wr_set_sge_list = sv_wr_set_sge_list;
	x->wr_start = sv_wr_start;
	x->wr_complete = sv_wr_complete;
	x->wr_abort = sv_wr_abort;
	x->wr_atomic_write = sv_wr_atomic_write;
	container_of(x, struct sv_qp, qpx)->wr_flush = sv_wr_flush;
}

/* ---- create ---- */

#define SV_SEND_OPS_KNOWN						\
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |		\
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |	\
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV | \
	 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV |		\
	 IBV_QP_EX_WITH_TSO | IBV_QP_EX_WITH_ATOMIC_WRITE |		\
	 SV_QP_EX_WITH_FLUSH)

/* The send operations each transport has (IB spec, table 9-... per QP). */
#define SV_SEND_OPS_UD	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define SV_SEND_OPS_UC							\
	(SV_SEND_OPS_UD | IBV_QP_EX_WITH_RDMA_WRITE |			\
	 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_LOCAL_INV |	\
	 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV)
#define SV_SEND_OPS_RC							\
	(SV_SEND_OPS_UC | IBV_QP_EX_WITH_RDMA_READ |			\
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |				\
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_WRITE | \
	 SV_QP_EX_WITH_FLUSH)

static int sv_check_send_ops(enum ibv_qp_type type, uint64_t ops)
{
	uint64_t ok;

	if (ops & ~(uint64_t)SV_SEND_OPS_KNOWN)
		return EINVAL;
	switch (type) {
	case IBV_QPT_RC:
		ok = SV_SEND_OPS_RC;
		break;
	case IBV_QPT_UC:
		ok = SV_SEND_OPS_UC;
		break;
	case IBV_QPT_UD:
		ok = SV_SEND_OPS_UD;
		break;
	case IBV_QPT_RAW_PACKET:
		ok = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO;
		break;
	case IBV_QPT_DRIVER:	/* a DCI (mlx5dv_create_qp()): RC's */
	case IBV_QPT_XRC_SEND:	/* as mlx5: RC's */
		ok = SV_SEND_OPS_RC;
		break;
	default:
		return EOPNOTSUPP;
	}
	return ops & ~ok ? EOPNOTSUPP : 0;
}

#define SV_QP_INIT_ATTR_KNOWN						\
	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |			\
	 IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_MAX_TSO_HEADER | \
	 IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH |		\
	 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

void sv_qp_init_base(struct sv_qp *qp, struct ibv_context *ctx,
		     uint32_t handle, uint32_t qpn, enum ibv_qp_type type)
{
	qp->qpx.qp_base.context = ctx;
	qp->qpx.qp_base.handle = handle;
	qp->qpx.qp_base.qp_num = qpn;
	qp->qpx.qp_base.state = IBV_QPS_RESET;
	qp->qpx.qp_base.qp_type = type;
	pthread_mutex_init(&qp->qpx.qp_base.mutex, NULL);
	pthread_cond_init(&qp->qpx.qp_base.cond, NULL);
}

/*
 * An XRC TGT QP (kernel/xrc.c): its domain and nothing else, no rings;
 * other processes reach it with ibv_open_qp() (xrcd.c).
 */
static struct ibv_qp *sv_create_tgt_qp(struct ibv_context *ctx,
				       struct ibv_qp_init_attr_ex *attr)
{
	struct sv_create_qp c = { .size = sizeof(c) };
	struct sv_qp *qp;
	int ret;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd ||
	    attr->xrcd->context != ctx ||
	    (attr->comp_mask & (IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
				IBV_QP_INIT_ATTR_MAX_TSO_HEADER))) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	c.qp_type = SV_QPT_XRC_RECV;
	c.xrcd_handle = to_svxrcd(attr->xrcd)->handle;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS)
		c.create_flags = attr->create_flags;
	c.user_handle = (uintptr_t)&qp->qpx.qp_base;
	ret = sv_cmd(ctx, SV_IOC_CREATE_QP, &c);
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	sv_qp_init_base(qp, ctx, c.handle, c.qpn, IBV_QPT_XRC_RECV);
	qp->qpx.qp_base.qp_context = attr->qp_context;
	qp->kqp_type = SV_QPT_XRC_RECV;
	memset(&attr->cap, 0, sizeof(attr->cap));
	return &qp->qpx.qp_base;
}

/*
 * @o: from libmlx5's mlx5dv_create_qp() (sv_private_create_qp()), or
 * NULL: the mlx5 direct-verbs create flags the kernel takes
 * (SV_CREATE_QP_TUNNEL_OFFLOADS, _MLX5_TIR, _TIR_SELF_LB_*) and DC.
 */
static struct ibv_qp *sv_create_qp_common(struct ibv_context *ctx,
					  struct ibv_qp_init_attr_ex *attr,
					  const struct sv_private_qp_opts *o)
{
	struct sv_create_qp c = { .size = sizeof(c) };
	uint32_t dv_flags = o ? o->sv_flags : 0;
	uint32_t dc_type = o ? o->dc_type : 0;
	struct sv_qp *qp;
	int ret;

	if (attr->comp_mask & ~(uint32_t)SV_QP_INIT_ATTR_KNOWN) {
		errno = EINVAL;
		return NULL;
	}
	/* RSS QPs: wq.c */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_IND_TABLE)
		return sv_create_rss_qp(ctx, attr, dv_flags);
	/* A hash needs a table. */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->qp_type == IBV_QPT_XRC_RECV && !o)
		return sv_create_tgt_qp(ctx, attr);
	/* An XRC domain is a TGT QP's alone. */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) {
		errno = EINVAL;
		return NULL;
	}
	/* An XRC INI QP sends only: no receive CQ, no SRQ (as mlx5). */
	if (attr->qp_type == IBV_QPT_XRC_SEND) {
		attr->recv_cq = NULL;
		attr->srq = NULL;
	}
	/* TSO (post.c): RAW_PACKET QPs, headers up to SV_MAX_TSO_HEADER. */
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_MAX_TSO_HEADER) &&
	    attr->max_tso_header &&
	    (attr->qp_type != IBV_QPT_RAW_PACKET ||
	     attr->max_tso_header > SV_MAX_TSO_HEADER)) {
		errno = EINVAL;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    !attr->send_cq ||
	    (!attr->recv_cq && attr->qp_type != IBV_QPT_XRC_SEND) ||
	    attr->pd->context != ctx || attr->send_cq->context != ctx ||
	    (attr->recv_cq && attr->recv_cq->context != ctx) ||
	    (attr->srq && attr->srq->context != ctx)) {
		errno = EINVAL;
		return NULL;
	}
	/* IBV_QPT_DRIVER is a DC QP of mlx5dv_create_qp(), nothing else. */
	if ((attr->qp_type == IBV_QPT_DRIVER) != !!dc_type) {
		errno = attr->qp_type == IBV_QPT_DRIVER ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		/* A DCT sends nothing (mlx5_ib: EINVAL). */
		if (dc_type == SV_QPT_DCT) {
			errno = EINVAL;
			return NULL;
		}
		ret = sv_check_send_ops(attr->qp_type, attr->send_ops_flags);
		if (ret) {
			errno = ret;
			return NULL;
		}
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	c.pd_handle = attr->pd->handle;
	c.send_cq_handle = attr->send_cq->handle;
	c.recv_cq_handle = attr->recv_cq ? attr->recv_cq->handle : 0;
	c.srq_handle = attr->srq ? attr->srq->handle : 0;
	c.qp_type = dc_type ? dc_type : attr->qp_type;
	/* One mapping for both rings: a small QP takes one page. */
	qp->sig_all = attr->sq_sig_all;
	c.flags = (attr->sq_sig_all ? SV_CREATE_QP_SQ_SIG_ALL : 0) | dv_flags |
		  SV_CREATE_QP_SHARED_RINGS;
	if (dc_type == SV_QPT_DCT) {
		c.dc_access_key = o->dct_key;
	} else if (dc_type == SV_QPT_DCI) {
		c.dci_log_streams = o->log_streams;
		c.dci_log_errored = o->log_errored;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS)
		c.create_flags = attr->create_flags;
	if (c.create_flags & IBV_QP_CREATE_SOURCE_QPN)
		c.source_qpn = attr->source_qpn;
	c.cap.max_send_wr = attr->cap.max_send_wr;
	c.cap.max_recv_wr = attr->cap.max_recv_wr;
	c.cap.max_send_sge = attr->cap.max_send_sge;
	c.cap.max_recv_sge = attr->cap.max_recv_sge;
	c.cap.max_inline_data = attr->cap.max_inline_data;
	/*
	 * mlx5's mkey send ops size the send WQE for a UMR whatever the
	 * caps ask, and report the room as max_inline_data: here, room for
	 * a UMR of SV_UMR_MIN_ENTRIES entries (post.c), at least.
	 */
	if (o && o->dv_send_ops && c.cap.max_inline_data < SV_UMR_MIN_ROOM)
		c.cap.max_inline_data = SV_UMR_MIN_ROOM;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_MAX_TSO_HEADER)
		c.max_tso_header = attr->max_tso_header;
	c.user_handle = (uintptr_t)&qp->qpx.qp_base;
	ret = sv_cmd(ctx, SV_IOC_CREATE_QP, &c);
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}

	sv_qp_init_base(qp, ctx, c.handle, c.qpn, attr->qp_type);
	qp->qpx.qp_base.qp_context = attr->qp_context;
	qp->qpx.qp_base.pd = attr->pd;
	qp->qpx.qp_base.send_cq = attr->send_cq;
	qp->qpx.qp_base.recv_cq = attr->recv_cq;
	qp->qpx.qp_base.srq = attr->srq;
	qp->kqp_type = c.qp_type;
	qp->max_tso_header = c.max_tso_header;
	/* libmlx5's send ops alone make an ibv_qp_ex too, as on mlx5. */
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ||
	    (o && o->dv_send_ops)) {
		qp->has_qpx = true;
		if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
			qp->send_ops_flags = attr->send_ops_flags;
		qp->dv_send_ops = o ? o->dv_send_ops : 0;
		sv_qp_fill_wr_ops(&qp->qpx);
		sv_dp_fill_wr_ops(qp);
	}

	attr->cap.max_send_wr = c.cap.max_send_wr;
	attr->cap.max_recv_wr = c.cap.max_recv_wr;
	attr->cap.max_send_sge = c.cap.max_send_sge;
	attr->cap.max_recv_sge = c.cap.max_recv_sge;
	attr->cap.max_inline_data = c.cap.max_inline_data;
	ret = sv_dp_qp_map(qp, &attr->cap);
	if (ret) {
		struct sv_destroy_qp d = { .size = sizeof(d),
					   .handle = c.handle };

		sv_cmd(ctx, SV_IOC_DESTROY_QP, &d);
		free(qp);
		errno = ret;
		return NULL;
	}
	/* A thread domain: one thread at a time posts, no locks. */
	if (sv_pd_single_threaded(attr->pd)) {
		qp->sq.single = true;
		qp->rq.single = true;
	}
	sv_pd_use(attr->pd, 1);
	return &qp->qpx.qp_base;
}

SV_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
				       struct ibv_qp_init_attr *attr)
{
	SV_SYSTEM_FORWARD(pd->context, ibv_create_qp, pd, attr);
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp *qp;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = sv_create_qp_common(pd->context, &ex, NULL);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

static struct ibv_qp *sv_create_qp_ex(struct ibv_context *ctx,
				      struct ibv_qp_init_attr_ex *attr)
{
	return sv_create_qp_common(ctx, attr, NULL);
}

/*
 * libmlx5's mlx5dv_create_qp() (sv_private.h): ibv_create_qp_ex() with
 * the kernel's mlx5 TIR flags, which it checks against the QP type.
 */
SV_EXPORT struct ibv_qp *
sv_private_create_qp(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
		     const struct sv_private_qp_opts *o)
{
	if (!ctx || !attr || !o || !sv_private_context_is_ours(ctx) ||
	    (o->sv_flags & ~(uint32_t)SV_PRIVATE_QP_FLAGS) ||
	    (o->dc_type && o->dc_type != SV_QPT_DCI &&
	     o->dc_type != SV_QPT_DCT) ||
	    (o->dv_send_ops & ~(uint64_t)(MLX5DV_QP_EX_WITH_MR_INTERLEAVED |
					  MLX5DV_QP_EX_WITH_MR_LIST |
					  MLX5DV_QP_EX_WITH_MKEY_CONFIGURE)) ||
	    (o->dv_send_ops && (attr->qp_type != IBV_QPT_RC || o->dc_type))) {
		errno = EINVAL;
		return NULL;
	}
	return sv_create_qp_common(ctx, attr, o);
}

SV_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	SV_SYSTEM_FORWARD(qp->context, ibv_qp_to_qp_ex, qp);
	struct sv_qp *sqp = to_svqp(qp);

	return sqp->has_qpx ? &sqp->qpx : NULL;
}

/* ---- modify, query ---- */

static void sv_ah_attr_to_abi(struct sv_ah_attr *d,
			      const struct ibv_ah_attr *s)
{
	memset(d, 0, sizeof(*d));
	memcpy(d->dgid, s->grh.dgid.raw, sizeof(d->dgid));
	d->flow_label = s->grh.flow_label;
	d->sgid_index = s->grh.sgid_index;
	d->hop_limit = s->grh.hop_limit;
	d->traffic_class = s->grh.traffic_class;
	d->sl = s->sl;
	d->dlid = s->dlid;
	d->src_path_bits = s->src_path_bits;
	d->static_rate = s->static_rate;
	d->is_global = s->is_global;
	d->port_num = s->port_num;
}

static void sv_ah_attr_from_abi(struct ibv_ah_attr *d,
				const struct sv_ah_attr *s)
{
	memset(d, 0, sizeof(*d));
	memcpy(d->grh.dgid.raw, s->dgid, sizeof(s->dgid));
	d->grh.flow_label = s->flow_label;
	d->grh.sgid_index = s->sgid_index;
	d->grh.hop_limit = s->hop_limit;
	d->grh.traffic_class = s->traffic_class;
	d->sl = s->sl;
	d->dlid = s->dlid;
	d->src_path_bits = s->src_path_bits;
	d->static_rate = s->static_rate;
	d->is_global = s->is_global;
	d->port_num = s->port_num;
}

/*
 * A QP in RESET, or destroyed, leaves no CQE behind (cq.c): as mlx5's
 * provider cleans its CQs then.
 */
static void sv_qp_clean_cqs(struct ibv_qp *qp)
{
	if (qp->send_cq)
		sv_cq_clean(qp->send_cq, qp->qp_num);
	if (qp->recv_cq && qp->recv_cq != qp->send_cq)
		sv_cq_clean(qp->recv_cq, qp->qp_num);
}

SV_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			    int attr_mask)
{
	SV_SYSTEM_FORWARD(qp->context, ibv_modify_qp, qp, attr, attr_mask);
	struct sv_modify_qp m = { .size = sizeof(m) };
	struct sv_qp_attr *a = &m.attr;
	int ret;

	m.handle = qp->handle;
	m.attr_mask = attr_mask;
	a->qp_state = attr->qp_state;
	a->cur_qp_state = attr->cur_qp_state;
	a->path_mtu = attr->path_mtu;
	a->path_mig_state = attr->path_mig_state;
	a->qkey = attr->qkey;
	a->rq_psn = attr->rq_psn;
	a->sq_psn = attr->sq_psn;
	a->dest_qp_num = attr->dest_qp_num;
	a->qp_access_flags = attr->qp_access_flags;
	a->rate_limit = attr->rate_limit;
	a->pkey_index = attr->pkey_index;
	a->alt_pkey_index = attr->alt_pkey_index;
	a->en_sqd_async_notify = attr->en_sqd_async_notify;
	a->max_rd_atomic = attr->max_rd_atomic;
	a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	a->min_rnr_timer = attr->min_rnr_timer;
	a->port_num = attr->port_num;
	a->timeout = attr->timeout;
	a->retry_cnt = attr->retry_cnt;
	a->rnr_retry = attr->rnr_retry;
	a->alt_port_num = attr->alt_port_num;
	a->alt_timeout = attr->alt_timeout;
	sv_ah_attr_to_abi(&a->ah_attr, &attr->ah_attr);
	sv_ah_attr_to_abi(&a->alt_ah_attr, &attr->alt_ah_attr);
	ret = sv_cmd(qp->context, SV_IOC_MODIFY_QP, &m);
	if (!ret && (attr_mask & IBV_QP_STATE)) {
		qp->state = attr->qp_state;
		if (attr->qp_state == IBV_QPS_RESET)
			sv_qp_clean_cqs(qp);
	}
	return ret;
}

/*
 * ibv_modify_qp_rate_limit(): the engine paces the QP's sends
 * (kernel/pace.c); comp_mask must be 0, the rate 0 or within
 * packet_pacing_caps, the QP in RTS (EINVAL otherwise).
 */
static int sv_modify_qp_rate_limit(struct ibv_qp *qp,
				   struct ibv_qp_rate_limit_attr *attr)
{
	struct sv_qp_rate_limit r = { .size = sizeof(r),
				      .handle = qp->handle };

	if (!attr || attr->comp_mask)
		return EINVAL;
	r.rate_limit = attr->rate_limit;
	r.max_burst_sz = attr->max_burst_sz;
	r.typical_pkt_sz = attr->typical_pkt_sz;
	return sv_cmd(qp->context, SV_IOC_QP_RATE_LIMIT, &r);
}

/*
 * ibv_query_qp_data_in_order(): 1 would promise that a message's bytes
 * become visible in order, so that a peer polling its last byte may read
 * the rest. The kernel copies with memcpy(), whose fast-string stores
 * (ERMS/FSRM rep movsb) x86 does not order among themselves: 0 for every
 * operation, as rdma-core answers for a provider that does not know.
 */
SV_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp,
					 enum ibv_wr_opcode op, uint32_t flags)
{
	SV_SYSTEM_FORWARD(qp->context, ibv_query_qp_data_in_order, qp, op,
			  flags);
	(void)op;
	(void)flags;
	return 0;
}

SV_EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			   int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	SV_SYSTEM_FORWARD(qp->context, ibv_query_qp, qp, attr, attr_mask,
	                  init_attr);
	struct sv_query_qp q = { .size = sizeof(q) };
	const struct sv_qp_attr *a = &q.attr;
	int ret;

	q.handle = qp->handle;
	q.attr_mask = attr_mask;
	ret = sv_cmd(qp->context, SV_IOC_QUERY_QP, &q);
	if (ret)
		return ret;

	memset(attr, 0, sizeof(*attr));
	attr->qp_state = a->qp_state;
	attr->cur_qp_state = a->cur_qp_state;
	attr->path_mtu = a->path_mtu;
	attr->path_mig_state = a->path_mig_state;
	attr->qkey = a->qkey;
	attr->rq_psn = a->rq_psn;
	attr->sq_psn = a->sq_psn;
	attr->dest_qp_num = a->dest_qp_num;
	attr->qp_access_flags = a->qp_access_flags;
	attr->cap.max_send_wr = q.cap.max_send_wr;
	attr->cap.max_recv_wr = q.cap.max_recv_wr;
	attr->cap.max_send_sge = q.cap.max_send_sge;
	attr->cap.max_recv_sge = q.cap.max_recv_sge;
	attr->cap.max_inline_data = q.cap.max_inline_data;
	sv_ah_attr_from_abi(&attr->ah_attr, &a->ah_attr);
	sv_ah_attr_from_abi(&attr->alt_ah_attr, &a->alt_ah_attr);
	attr->pkey_index = a->pkey_index;
	attr->alt_pkey_index = a->alt_pkey_index;
	attr->en_sqd_async_notify = a->en_sqd_async_notify;
	attr->sq_draining = a->sq_draining;
	attr->max_rd_atomic = a->max_rd_atomic;
	attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr->min_rnr_timer = a->min_rnr_timer;
	attr->port_num = a->port_num;
	attr->timeout = a->timeout;
	attr->retry_cnt = a->retry_cnt;
	attr->rnr_retry = a->rnr_retry;
	attr->alt_port_num = a->alt_port_num;
	attr->alt_timeout = a->alt_timeout;
	attr->rate_limit = a->rate_limit;

	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	init_attr->cap = attr->cap;
	init_attr->qp_type = q.qp_type == SV_QPT_DCI || q.qp_type == SV_QPT_DCT ?
			     IBV_QPT_DRIVER : q.qp_type;
	init_attr->sq_sig_all = !!(q.flags & SV_CREATE_QP_SQ_SIG_ALL);
	qp->state = attr->qp_state;
	return 0;
}

/* ---- destroy ---- */

SV_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	SV_SYSTEM_FORWARD(qp->context, ibv_destroy_qp, qp);
	struct sv_destroy_qp d = { .size = sizeof(d), .handle = qp->handle };
	int ret;

	ret = sv_cmd(qp->context, SV_IOC_DESTROY_QP, &d);
	if (ret)
		return ret;
	sv_qp_clean_cqs(qp);
	/* Wait until every async event the QP reported has been acked. */
	pthread_mutex_lock(&qp->mutex);
	while (qp->events_completed != d.events_reported)
		pthread_cond_wait(&qp->cond, &qp->mutex);
	pthread_mutex_unlock(&qp->mutex);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->mutex);
	sv_dp_qp_unmap(to_svqp(qp));
	/* Its rings were a parent domain's buffer: back to its allocator. */
	if (to_svqp(qp)->app_ring)
		sv_pd_buffer_put(qp->pd, to_svqp(qp)->app_ring,
				 SV_RES_TYPE_QP);
	sv_pd_use(qp->pd, -1);
	free(to_svqp(qp));
	return 0;
}

/* ---- multicast ---- */

static int sv_mcast_cmd(struct ibv_qp *qp, unsigned long req,
			const union ibv_gid *gid, uint16_t lid)
{
	struct sv_mcast m = { .size = sizeof(m), .qp_handle = qp->handle,
			      .lid = lid };

	memcpy(m.gid, gid->raw, sizeof(m.gid));
	return sv_cmd(qp->context, req, &m);
}

SV_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			       uint16_t lid)
{
	SV_SYSTEM_FORWARD(qp->context, ibv_attach_mcast, qp, gid, lid);
	return sv_mcast_cmd(qp, SV_IOC_ATTACH_MCAST, gid, lid);
}

SV_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			       uint16_t lid)
{
	SV_SYSTEM_FORWARD(qp->context, ibv_detach_mcast, qp, gid, lid);
	return sv_mcast_cmd(qp, SV_IOC_DETACH_MCAST, gid, lid);
}

static int sv_qp_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.create_qp_ex = sv_create_qp_ex;
	ctx->vctx.modify_qp_rate_limit = sv_modify_qp_rate_limit;
	return 0;
}
SV_CTX_PROVIDER(qp, sv_qp_ctx_init, NULL);
