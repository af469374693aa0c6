/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Verbs objects of a wire test's end, opened by the test process from
 * that end's network namespace (wire_verbs_test, wire_frames_test).
 */
#ifndef SV_WIRE_VERBS_H
#define SV_WIRE_VERBS_H

#include <fcntl.h>
#include <sched.h>
#include <infiniband/verbs.h>

#include "sv_dp_test.h"

/* One end's verbs objects. */
struct vend {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;	/* vend_open_ops()'s, with its send ops */
	char *buf;
	union ibv_gid gid;
	int gidx;
};

/* dev, of this thread's network namespace's list. */
static inline struct ibv_context *open_here(const char *dev)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = sv_open_named(list, dev);

	if (list)
		ibv_free_device_list(list);
	return ctx;
}

/*
 * Open dev from namespace ns (this thread goes there and back, and lists
 * the devices there: a namespace lists only its own); "" is this
 * thread's own.
 */
static inline struct ibv_context *open_in(const char *ns, const char *dev)
{
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	struct ibv_context *ctx = NULL;
	char path[128];
	int fd;

	if (!*ns) {
		if (self >= 0)
			close(self);
		return open_here(dev);
	}
	snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (self >= 0 && fd >= 0 && !setns(fd, CLONE_NEWNET)) {
		ctx = open_here(dev);
		if (setns(self, CLONE_NEWNET))
			abort();
	}
	if (fd >= 0)
		close(fd);
	if (self >= 0)
		close(self);
	return ctx;
}

/*
 * v's objects on dev (from namespace ns): a len-byte buffer registered
 * with access, a QP of type; with send_ops (IBV_QP_EX_WITH_*), made by
 * ibv_create_qp_ex() and its builders in v->qpx.
 */
static inline int vend_open_ops(struct vend *v, const char *ns,
				const char *dev, int gidx,
				enum ibv_qp_type type, size_t len, int access,
				uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	memset(v, 0, sizeof(*v));
	v->ctx = open_in(ns, dev);
	if (!v->ctx)
		return -1;
	v->gidx = gidx;
	v->pd = ibv_alloc_pd(v->ctx);
	v->cq = ibv_create_cq(v->ctx, 64, NULL, NULL, 0);
	v->buf = calloc(1, len);
	if (!v->pd || !v->cq || !v->buf ||
	    ibv_query_gid(v->ctx, 1, gidx, &v->gid))
		return -1;
	v->mr = ibv_reg_mr(v->pd, v->buf, len, access);
	ia.send_cq = v->cq;
	ia.recv_cq = v->cq;
	ia.pd = v->pd;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (send_ops) {
		ia.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ia.send_ops_flags = send_ops;
	}
	v->qp = ibv_create_qp_ex(v->ctx, &ia);
	if (v->qp && send_ops)
		v->qpx = ibv_qp_to_qp_ex(v->qp);
	return v->mr && v->qp && (!send_ops || v->qpx) ? 0 : -1;
}

static inline int vend_open(struct vend *v, const char *ns,
			    const char *dev, int gidx, enum ibv_qp_type type,
			    size_t len, int access)
{
	return vend_open_ops(v, ns, dev, gidx, type, len, access, 0);
}

static inline void vend_close(struct vend *v)
{
	if (v->qp)
		ibv_destroy_qp(v->qp);
	if (v->mr)
		ibv_dereg_mr(v->mr);
	if (v->cq)
		ibv_destroy_cq(v->cq);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->ctx)
		ibv_close_device(v->ctx);
	free(v->buf);
}

#define PSN0	0xffffc0
#define ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/*
 * x's QP connected to y's over the wire (RC or UC): path MTU 1024, PSNs
 * from PSN0 both ways (they wrap past 2^24 - 1 after 64 packets), ACK
 * timeout 14; RC with the retries asked for, min_rnr_timer 1 (10 us).
 */
static inline int vend_connect(struct vend *x, struct vend *y, int rnr_retry,
			       int retry_cnt)
{
	bool rc = x->qp->qp_type == IBV_QPT_RC;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = rc ? ACCESS : IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE,
	};
	int ret;

	ret = ibv_modify_qp(x->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = y->qp->qp_num;
	a.rq_psn = PSN0;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = y->gid;
	a.ah_attr.grh.sgid_index = x->gidx;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(x->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (rc ? IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER : 0));
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = PSN0;
	a.timeout = 14;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(x->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				   IBV_QP_RNR_RETRY |
				   IBV_QP_MAX_QP_RD_ATOMIC : 0));
}

/* Wait up to 10 s for one completion of v; its status, or -1. */
static inline int wait1(struct vend *v, struct ibv_wc *wc)
{
	int i;

	for (i = 0; i < 2; i++)
		if (poll1(v->cq, wc))
			return wc->status;
	return -1;
}

/* A UD QP from RESET to RTS with Q_Key qkey. */
static inline int ud_rts(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

#endif
