// SPDX-License-Identifier: GPL-2.0
/*
 * Dynamically Connected QPs through libmlx5.so.1 (Documentation/mlx5dv.rst,
 * "DC"), as an mlx5 program makes and uses them: mlx5dv_create_qp() with
 * MLX5DV_QP_INIT_ATTR_MASK_DC, the DCI's work built with ibv_wr_*() and
 * mlx5dv_wr_set_dc_addr*().
 *
 *   - creation and modify errors, with mlx5's errnos;
 *   - one DCI to two DCTs (different SRQs, PDs and keys): SEND with data
 *     and immediate, RDMA WRITE and READ, both atomics, data verified and
 *     the DCT's completions (its QPN, the DCI as source);
 *   - a wrong access key: dropped at the DCT (dc_key_violations), the DCI
 *     ends in IBV_WC_RETRY_EXC_ERR, the DCT's SRQ untouched and working;
 *   - a bad rkey: IBV_WC_REM_ACCESS_ERR, the DCI in ERR, the DCT still
 *     serving a new DCI; RNR with an empty SRQ;
 *   - DCI streams: an error flushes only its stream until
 *     mlx5dv_dci_stream_id_reset(), too many streams in error fail the
 *     DCI;
 *   - a DCT in another process, reached by its number and key, and one
 *     on another softverbs device.
 */
#include <errno.h>
#include <sys/mman.h>
#include <limits.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include "sv_harness.h"
#include "sv_dp_test.h"

#define KEY_A	0x1122334455667788ULL
#define KEY_B	0xfedcba9876543210ULL
#define BUFSZ	4096

struct dct {
	struct ibv_pd *pd;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
};

FIXTURE(dc) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *dci;
	struct ibv_qp_ex *qx;
	struct mlx5dv_qp_ex *dx;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	char *buf;
	struct dct t[2];
	union ibv_gid gid;
	char svctl[PATH_MAX];
};

static struct ibv_qp *dci_create(struct ibv_context *ctx, struct ibv_pd *pd,
				 struct ibv_cq *cq, int log_streams,
				 int log_errored)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_DRIVER, .send_cq = cq, .recv_cq = cq,
		.pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
		.cap = { .max_send_wr = 32, .max_send_sge = 1,
			 .max_inline_data = 64 },
	};
	struct mlx5dv_qp_init_attr da = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI,
	};

	if (log_streams) {
		da.comp_mask |= MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
		da.dc_init_attr.dci_streams.log_num_concurent = log_streams;
		da.dc_init_attr.dci_streams.log_num_errored = log_errored;
	}
	return mlx5dv_create_qp(ctx, &ia, &da);
}

/* perftest's DCI transitions: INIT, RTR (path_mtu, AV), RTS. */
static int dci_connect(struct ibv_qp *qp, int retry_cnt, int rnr_retry)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU))
		return -2;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 10;		/* 4 ms */
	a.retry_cnt = retry_cnt;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_SQ_PSN) ? -3 : 0;
}

static int dct_make(struct ibv_context *ctx, struct dct *t, uint64_t key,
		    int nrecv)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_DRIVER, .comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct mlx5dv_qp_init_attr da = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCT,
		.dc_init_attr.dct_access_key = key,
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16,
						  .max_sge = 1 } };
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int i;

	t->pd = ibv_alloc_pd(ctx);
	t->cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	t->buf = aligned_alloc(4096, BUFSZ);
	if (!t->pd || !t->cq || !t->buf)
		return -1;
	memset(t->buf, 0, BUFSZ);
	t->mr = ibv_reg_mr(t->pd, t->buf, BUFSZ, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	t->srq = ibv_create_srq(t->pd, &sa);
	if (!t->mr || !t->srq)
		return -2;
	ia.pd = t->pd;
	ia.send_cq = ia.recv_cq = t->cq;
	ia.srq = t->srq;
	t->qp = mlx5dv_create_qp(ctx, &ia, &da);
	if (!t->qp)
		return -3;
	if (ibv_modify_qp(t->qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS |
			  IBV_QP_PKEY_INDEX | IBV_QP_PORT))
		return -4;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(t->qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER |
			  IBV_QP_AV | IBV_QP_PATH_MTU))
		return -5;
	/* Receive buffers: 256 bytes each from offset 2048 */
	for (i = 0; i < nrecv; i++) {
		struct ibv_sge sg = { (uintptr_t)t->buf + 2048 + i * 256, 256,
				      t->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sg,
					  .num_sge = 1 };
		struct ibv_recv_wr *bad;

		if (ibv_post_srq_recv(t->srq, &wr, &bad))
			return -6;
	}
	return 0;
}

static void dct_free(struct dct *t)
{
	if (t->qp)
		ibv_destroy_qp(t->qp);
	if (t->srq)
		ibv_destroy_srq(t->srq);
	if (t->mr)
		ibv_dereg_mr(t->mr);
	if (t->cq)
		ibv_destroy_cq(t->cq);
	if (t->pd)
		ibv_dealloc_pd(t->pd);
	free(t->buf);
}

FIXTURE_SETUP(dc)
{
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1 };

	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &self->gid));
	self->pd = ibv_alloc_pd(self->ctx);
	self->cq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	self->buf = aligned_alloc(4096, BUFSZ);
	ASSERT_NE(NULL, self->pd);
	ASSERT_NE(NULL, self->cq);
	ASSERT_NE(NULL, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, BUFSZ,
			      IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->mr);
	ah.grh.dgid = self->gid;
	ah.grh.sgid_index = 1;
	self->ah = ibv_create_ah(self->pd, &ah);
	ASSERT_NE(NULL, self->ah);
	ASSERT_EQ(0, sv_svctl_path(self->svctl, sizeof(self->svctl)));
}

FIXTURE_TEARDOWN(dc)
{
	int i;

	if (self->dci)
		ibv_destroy_qp(self->dci);
	for (i = 0; i < 2; i++)
		dct_free(&self->t[i]);
	if (self->ah)
		ibv_destroy_ah(self->ah);
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	free(self->buf);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
}

static int dci_open(struct __test_metadata *_metadata,
		    FIXTURE_DATA(dc) *self, int log_streams, int log_errored,
		    int retry_cnt, int rnr_retry)
{
	self->dci = dci_create(self->ctx, self->pd, self->cq, log_streams,
			       log_errored);
	if (!self->dci)
		return -1;
	EXPECT_EQ(IBV_QPT_DRIVER, self->dci->qp_type);
	self->qx = ibv_qp_to_qp_ex(self->dci);
	self->dx = self->qx ? mlx5dv_qp_ex_from_ibv_qp_ex(self->qx) : NULL;
	if (!self->dx)
		return -2;
	return dci_connect(self->dci, retry_cnt, rnr_retry);
}

enum op { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_READ, OP_CAS, OP_FAA };

/* One signaled WR to DCT t (its number and key given) on stream s. */
static int dc_post(FIXTURE_DATA(dc) *self, enum op op, uint32_t dctn,
		   uint64_t key, uint16_t s, uint64_t id, uint32_t off,
		   uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_qp_ex *q = self->qx;

	ibv_wr_start(q);
	q->wr_id = id;
	q->wr_flags = IBV_SEND_SIGNALED;
	switch (op) {
	case OP_SEND:
		ibv_wr_send(q);
		break;
	case OP_SEND_IMM:
		ibv_wr_send_imm(q, htobe32(0x5a5a));
		break;
	case OP_WRITE:
		ibv_wr_rdma_write(q, rkey, raddr);
		break;
	case OP_READ:
		ibv_wr_rdma_read(q, rkey, raddr);
		break;
	case OP_CAS:
		ibv_wr_atomic_cmp_swp(q, rkey, raddr, 0, 0xc0ffee);
		break;
	case OP_FAA:
		ibv_wr_atomic_fetch_add(q, rkey, raddr, 5);
		break;
	}
	mlx5dv_wr_set_dc_addr_stream(self->dx, self->ah, dctn, key, s);
	ibv_wr_set_sge(q, self->mr->lkey, (uintptr_t)self->buf + off, len);
	return ibv_wr_complete(q);
}

static int dct_of(FIXTURE_DATA(dc) *self, int i, uint64_t key, int nrecv)
{
	return dct_make(self->ctx, &self->t[i], key, nrecv);
}

/* mlx5dv_create_qp()'s errno, 0 if it made the QP (destroyed again). */
static int dv_errno(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *ia,
		    struct mlx5dv_qp_init_attr *da)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = mlx5dv_create_qp(ctx, ia, da);
	if (!qp)
		return errno ? errno : -1;
	return ibv_destroy_qp(qp) ? -2 : 0;
}

TEST_F(dc, create_and_modify_errors)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_DRIVER, .send_cq = self->cq,
		.recv_cq = self->cq, .pd = self->pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct mlx5dv_qp_init_attr da = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCT,
	};
	struct mlx5dv_context caps = {
		.comp_mask = MLX5DV_CONTEXT_MASK_DCI_STREAMS,
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4,
						  .max_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND }, *bad;
	struct ibv_qp_init_attr qia;
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	/* A DCT needs an SRQ */
	EXPECT_EQ(EINVAL, dv_errno(self->ctx, &ia, &da));
	ia.srq = srq;
	/* ... sends nothing, takes no other comp_mask bit or create flag */
	ia.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND;
	EXPECT_EQ(EINVAL, dv_errno(self->ctx, &ia, &da));
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	EXPECT_EQ(EINVAL, dv_errno(self->ctx, &ia, &da));
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	da.comp_mask |= MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS;
	da.create_flags = MLX5DV_QP_CREATE_TUNNEL_OFFLOADS;
	EXPECT_EQ(EINVAL, dv_errno(self->ctx, &ia, &da));
	da.create_flags = MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE;
	qp = mlx5dv_create_qp(self->ctx, &ia, &da);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(IBV_QPT_DRIVER, qp->qp_type);
	EXPECT_EQ(0, ibv_query_qp(qp, &a, IBV_QP_STATE, &qia));
	EXPECT_EQ(IBV_QPT_DRIVER, qia.qp_type);
	EXPECT_EQ(0, qia.cap.max_send_wr);
	/* DCT: RESET -> INIT needs exactly access, pkey, port */
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE |
					IBV_QP_PKEY_INDEX | IBV_QP_PORT));
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE |
					IBV_QP_ACCESS_FLAGS |
					IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					IBV_QP_QKEY));
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE |
				   IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT));
	/* ... INIT -> RTR exactly min_rnr_timer, AV, path_mtu; no more */
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.port_num = 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
					IBV_QP_PATH_MTU));
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				   IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER));
	a.qp_state = IBV_QPS_RTS;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	a.qp_state = IBV_QPS_ERR;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_srq(srq));

	/* A DCI has no receive queue; streams within the caps */
	ASSERT_EQ(0, mlx5dv_query_device(self->ctx, &caps));
	EXPECT_EQ(4, caps.dci_streams_caps.max_log_num_concurent);
	EXPECT_EQ(4, caps.dci_streams_caps.max_log_num_errored);
	ia.srq = NULL;
	ia.cap.max_recv_wr = 1;
	da.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
	da.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI;
	EXPECT_EQ(EINVAL, dv_errno(self->ctx, &ia, &da));
	ia.cap.max_recv_wr = 0;
	da.comp_mask |= MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
	da.dc_init_attr.dci_streams.log_num_concurent = 5;
	EXPECT_EQ(EINVAL, dv_errno(self->ctx, &ia, &da));
	da.dc_init_attr.dci_streams.log_num_concurent = 4;
	da.dc_init_attr.dci_streams.log_num_errored = 5;
	EXPECT_EQ(EINVAL, dv_errno(self->ctx, &ia, &da));
	/* An unknown dc_type; DC on a type that is not DRIVER */
	da.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
	da.dc_init_attr.dc_type = 7;
	EXPECT_EQ(EINVAL, dv_errno(self->ctx, &ia, &da));
	da.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI;
	ia.qp_type = IBV_QPT_RC;
	EXPECT_EQ(EINVAL, dv_errno(self->ctx, &ia, &da));
	/* ibv_create_qp_ex() of a DRIVER QP: not without mlx5dv */
	ia.qp_type = IBV_QPT_DRIVER;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ia));
	EXPECT_EQ(EOPNOTSUPP, errno);

	/* DCI: mlx5's transitions, no SQD, no ibv_post_send() */
	qp = mlx5dv_create_qp(self->ctx, &ia, &da);
	ASSERT_NE(NULL, qp);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE |
					IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					IBV_QP_ACCESS_FLAGS));
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE |
				   IBV_QP_PKEY_INDEX | IBV_QP_PORT));
	a.qp_state = IBV_QPS_RTR;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	a.path_mtu = IBV_MTU_1024;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE |
					IBV_QP_PATH_MTU | IBV_QP_DEST_QPN));
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU));
	a.qp_state = IBV_QPS_RTS;
	a.retry_cnt = 7;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE |
					IBV_QP_SQ_PSN));
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				   IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_SQ_PSN));
	a.qp_state = IBV_QPS_SQD;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	EXPECT_EQ(EINVAL, ibv_post_send(qp, &wr, &bad));
	/* No streams: nothing to reset */
	EXPECT_EQ(EINVAL, mlx5dv_dci_stream_id_reset(qp, 0));
	a.qp_state = IBV_QPS_ERR;
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

static void expect_wc(struct __test_metadata *_metadata, struct ibv_cq *cq,
		      uint64_t id, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	ASSERT_EQ(1, poll1(cq, &wc));
	EXPECT_EQ(id, wc.wr_id);
	EXPECT_EQ(st, wc.status);
}

TEST_F(dc, one_dci_two_dcts)
{
	struct dct *a = &self->t[0], *b = &self->t[1];
	uint64_t *word;
	struct ibv_wc wc;

	ASSERT_EQ(0, dct_of(self, 0, KEY_A, 4));
	ASSERT_EQ(0, dct_of(self, 1, KEY_B, 4));
	ASSERT_EQ(0, dci_open(_metadata, self, 0, 0, 7, 7));
	sv_fill(self->buf, 1024, 3);

	/* SEND to A, SEND with immediate to B */
	ASSERT_EQ(0, dc_post(self, OP_SEND, a->qp->qp_num, KEY_A, 0, 1, 0,
			     200, 0, 0));
	expect_wc(_metadata, self->cq, 1, IBV_WC_SUCCESS);
	ASSERT_EQ(1, poll1(a->cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(100, wc.wr_id);
	EXPECT_EQ(200, wc.byte_len);
	EXPECT_EQ(a->qp->qp_num, wc.qp_num);
	EXPECT_EQ(self->dci->qp_num, wc.src_qp);
	EXPECT_EQ(0, memcmp(a->buf + 2048, self->buf, 200));
	ASSERT_EQ(0, dc_post(self, OP_SEND_IMM, b->qp->qp_num, KEY_B, 0, 2,
			     100, 50, 0, 0));
	expect_wc(_metadata, self->cq, 2, IBV_WC_SUCCESS);
	ASSERT_EQ(1, poll1(b->cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_WITH_IMM, wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(0x5a5a, be32toh(wc.imm_data));
	EXPECT_EQ(50, wc.byte_len);
	EXPECT_EQ(0, memcmp(b->buf + 2048, self->buf + 100, 50));
	EXPECT_EQ(0, ibv_poll_cq(a->cq, 1, &wc));

	/* WRITE into B, READ it back from A's region to check both */
	ASSERT_EQ(0, dc_post(self, OP_WRITE, b->qp->qp_num, KEY_B, 0, 3, 0,
			     512, (uintptr_t)b->buf, b->mr->rkey));
	expect_wc(_metadata, self->cq, 3, IBV_WC_SUCCESS);
	EXPECT_EQ(0, memcmp(b->buf, self->buf, 512));
	sv_fill(a->buf, 512, 9);
	ASSERT_EQ(0, dc_post(self, OP_READ, a->qp->qp_num, KEY_A, 0, 4, 1024,
			     512, (uintptr_t)a->buf, a->mr->rkey));
	expect_wc(_metadata, self->cq, 4, IBV_WC_SUCCESS);
	EXPECT_EQ(0, memcmp(self->buf + 1024, a->buf, 512));
	/* No receive was used by RDMA */
	EXPECT_EQ(0, ibv_poll_cq(a->cq, 1, &wc));
	EXPECT_EQ(0, ibv_poll_cq(b->cq, 1, &wc));

	/* The resource dump names them */
	{
		char cmd[PATH_MAX + 32], out[8192];
		size_t n;
		FILE *f;

		snprintf(cmd, sizeof(cmd), "%s res show qp", self->svctl);
		f = popen(cmd, "r");
		ASSERT_NE(NULL, f);
		n = fread(out, 1, sizeof(out) - 1, f);
		out[n] = 0;
		EXPECT_EQ(0, pclose(f));
		EXPECT_NE(NULL, strstr(out, "qp_type DCI"));
		EXPECT_NE(NULL, strstr(out, "qp_type DCT"));
	}

	/* Atomics on B's word at 1024: FAA, then CAS that hits */
	word = (uint64_t *)(b->buf + 1024);
	*word = 37;
	ASSERT_EQ(0, dc_post(self, OP_FAA, b->qp->qp_num, KEY_B, 0, 5, 2048,
			     8, (uintptr_t)word, b->mr->rkey));
	expect_wc(_metadata, self->cq, 5, IBV_WC_SUCCESS);
	EXPECT_EQ(37, *(uint64_t *)(self->buf + 2048));
	EXPECT_EQ(42, *word);
	*word = 0;
	ASSERT_EQ(0, dc_post(self, OP_CAS, b->qp->qp_num, KEY_B, 0, 6, 2048,
			     8, (uintptr_t)word, b->mr->rkey));
	expect_wc(_metadata, self->cq, 6, IBV_WC_SUCCESS);
	EXPECT_EQ(0, *(uint64_t *)(self->buf + 2048));
	EXPECT_EQ(0xc0ffee, *word);
}

/*
 * A DCT's memory paged on demand (dc_odp_caps): RDMA WRITE, READ and an
 * atomic into pages nobody touched, and a receive into them.
 */
TEST_F(dc, odp_at_the_dct)
{
	struct dct *a = &self->t[0];
	size_t len = 64 << 10;
	struct mlx5dv_context dv = { .comp_mask = MLX5DV_CONTEXT_MASK_DC_ODP_CAPS };
	struct ibv_recv_wr rwr = { .wr_id = 200, .num_sge = 1 }, *rbad;
	struct ibv_sge rsg;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	char *mem;

	ASSERT_EQ(0, mlx5dv_query_device(self->ctx, &dv));
	EXPECT_EQ(IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		  IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		  IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV,
		  dv.dc_odp_caps);
	/* No receives of the fixture's: the one below is the only one. */
	ASSERT_EQ(0, dct_of(self, 0, KEY_A, 0));
	ASSERT_EQ(0, dci_open(_metadata, self, 0, 0, 7, 7));
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	mr = ibv_reg_mr(a->pd, mem, len, IBV_ACCESS_ON_DEMAND |
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	ASSERT_NE(NULL, mr);
	sv_fill(self->buf, 1024, 4);
	ASSERT_EQ(0, dc_post(self, OP_WRITE, a->qp->qp_num, KEY_A, 0, 11, 0,
			     1000, (uintptr_t)mem + 5000, mr->rkey));
	expect_wc(_metadata, self->cq, 11, IBV_WC_SUCCESS);
	EXPECT_EQ(0, memcmp(mem + 5000, self->buf, 1000));
	ASSERT_EQ(0, dc_post(self, OP_READ, a->qp->qp_num, KEY_A, 0, 12,
			     2048, 100, (uintptr_t)mem + 5000, mr->rkey));
	expect_wc(_metadata, self->cq, 12, IBV_WC_SUCCESS);
	EXPECT_EQ(0, memcmp(self->buf + 2048, self->buf, 100));
	ASSERT_EQ(0, dc_post(self, OP_FAA, a->qp->qp_num, KEY_A, 0, 13, 3072,
			     8, (uintptr_t)mem + 32768, mr->rkey));
	expect_wc(_metadata, self->cq, 13, IBV_WC_SUCCESS);
	EXPECT_EQ(0, *(uint64_t *)(self->buf + 3072));
	EXPECT_EQ(5, *(uint64_t *)(mem + 32768));
	/* A receive into an untouched page of the DCT's SRQ. */
	rsg = (struct ibv_sge){ (uintptr_t)mem + 40960, 300, mr->lkey };
	rwr.sg_list = &rsg;
	ASSERT_EQ(0, ibv_post_srq_recv(a->srq, &rwr, &rbad));
	ASSERT_EQ(0, dc_post(self, OP_SEND, a->qp->qp_num, KEY_A, 0, 14, 0,
			     300, 0, 0));
	expect_wc(_metadata, self->cq, 14, IBV_WC_SUCCESS);
	ASSERT_EQ(1, poll1(a->cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(200, wc.wr_id);
	EXPECT_EQ(300, wc.byte_len);
	EXPECT_EQ(0, memcmp(mem + 40960, self->buf, 300));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	munmap(mem, len);
}

TEST_F(dc, wrong_key_and_errors)
{
	struct dct *a = &self->t[0];
	long long v0, v1;
	struct ibv_wc wc;

	ASSERT_EQ(0, dct_of(self, 0, KEY_A, 1));
	ASSERT_EQ(0, dci_open(_metadata, self, 0, 0, 2, 0));
	v0 = sv_stat_of(self->svctl, "softverbs0", "dc_key_violations");
	ASSERT_LE(0, v0);
	/* A wrong key reaches nobody: the DCI retries, then gives up */
	ASSERT_EQ(0, dc_post(self, OP_SEND, a->qp->qp_num, KEY_A ^ 1, 0, 1,
			     0, 16, 0, 0));
	expect_wc(_metadata, self->cq, 1, IBV_WC_RETRY_EXC_ERR);
	v1 = sv_stat_of(self->svctl, "softverbs0", "dc_key_violations");
	EXPECT_EQ(3, v1 - v0);		/* the try and 2 retries */
	EXPECT_EQ(0, ibv_poll_cq(a->cq, 1, &wc));
	ibv_destroy_qp(self->dci);
	self->dci = NULL;

	/* The DCT's receive is still there for the right key */
	ASSERT_EQ(0, dci_open(_metadata, self, 0, 0, 2, 0));
	sv_fill(self->buf, 64, 1);
	ASSERT_EQ(0, dc_post(self, OP_SEND, a->qp->qp_num, KEY_A, 0, 2, 0,
			     64, 0, 0));
	expect_wc(_metadata, self->cq, 2, IBV_WC_SUCCESS);
	ASSERT_EQ(1, poll1(a->cq, &wc));
	EXPECT_EQ(100, wc.wr_id);
	EXPECT_EQ(0, memcmp(a->buf + 2048, self->buf, 64));
	/* The SRQ is empty now: RNR, and rnr_retry 0 gives up at once */
	ASSERT_EQ(0, dc_post(self, OP_SEND, a->qp->qp_num, KEY_A, 0, 3, 0,
			     64, 0, 0));
	expect_wc(_metadata, self->cq, 3, IBV_WC_RNR_RETRY_EXC_ERR);
	ibv_destroy_qp(self->dci);
	self->dci = NULL;

	/* A bad rkey: REM_ACCESS_ERR, the DCI in ERR, the DCT serving on */
	ASSERT_EQ(0, dci_open(_metadata, self, 0, 0, 2, 0));
	ASSERT_EQ(0, dc_post(self, OP_WRITE, a->qp->qp_num, KEY_A, 0, 4, 0,
			     64, (uintptr_t)a->buf, a->mr->rkey + 1));
	expect_wc(_metadata, self->cq, 4, IBV_WC_REM_ACCESS_ERR);
	ASSERT_EQ(0, dc_post(self, OP_WRITE, a->qp->qp_num, KEY_A, 0, 5, 0,
			     64, (uintptr_t)a->buf, a->mr->rkey));
	expect_wc(_metadata, self->cq, 5, IBV_WC_WR_FLUSH_ERR);
	ibv_destroy_qp(self->dci);
	self->dci = NULL;
	ASSERT_EQ(0, dci_open(_metadata, self, 0, 0, 2, 0));
	ASSERT_EQ(0, dc_post(self, OP_WRITE, a->qp->qp_num, KEY_A, 0, 6, 0,
			     64, (uintptr_t)a->buf, a->mr->rkey));
	expect_wc(_metadata, self->cq, 6, IBV_WC_SUCCESS);
	EXPECT_EQ(0, memcmp(a->buf, self->buf, 64));
}

TEST_F(dc, streams)
{
	struct dct *a = &self->t[0];
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	uint32_t n;
	uint64_t rk;

	ASSERT_EQ(0, dct_of(self, 0, KEY_A, 0));
	/* 4 streams; 2 in error fail the DCI */
	ASSERT_EQ(0, dci_open(_metadata, self, 2, 1, 2, 0));
	n = a->qp->qp_num;
	rk = a->mr->rkey;
	sv_fill(self->buf, 256, 4);
	/* Stream 1 fails; its next WR flushes, stream 0's runs */
	ASSERT_EQ(0, dc_post(self, OP_WRITE, n, KEY_A, 1, 1, 0, 64,
			     (uintptr_t)a->buf, rk + 1));
	ASSERT_EQ(0, dc_post(self, OP_WRITE, n, KEY_A, 1, 2, 0, 64,
			     (uintptr_t)a->buf, rk));
	ASSERT_EQ(0, dc_post(self, OP_WRITE, n, KEY_A, 0, 3, 0, 64,
			     (uintptr_t)a->buf + 64, rk));
	/* stream 5 is stream 1 on 4 channels */
	ASSERT_EQ(0, dc_post(self, OP_WRITE, n, KEY_A, 5, 4, 0, 64,
			     (uintptr_t)a->buf, rk));
	expect_wc(_metadata, self->cq, 1, IBV_WC_REM_ACCESS_ERR);
	expect_wc(_metadata, self->cq, 2, IBV_WC_WR_FLUSH_ERR);
	expect_wc(_metadata, self->cq, 3, IBV_WC_SUCCESS);
	expect_wc(_metadata, self->cq, 4, IBV_WC_WR_FLUSH_ERR);
	EXPECT_EQ(0, memcmp(a->buf + 64, self->buf, 64));
	EXPECT_EQ(0, ibv_query_qp(self->dci, &qa, IBV_QP_STATE, &qia));
	EXPECT_EQ(IBV_QPS_RTS, qa.qp_state);
	/*
	 * Reset stream 5, which is 1: it runs again. 4 is stream 0, not in
	 * error: EINVAL, as on mlx5.
	 */
	EXPECT_EQ(EINVAL, mlx5dv_dci_stream_id_reset(self->dci, 4));
	ASSERT_EQ(0, dc_post(self, OP_WRITE, n, KEY_A, 1, 40, 0, 64,
			     (uintptr_t)a->buf, rk));
	expect_wc(_metadata, self->cq, 40, IBV_WC_WR_FLUSH_ERR);
	EXPECT_EQ(0, mlx5dv_dci_stream_id_reset(self->dci, 5));
	ASSERT_EQ(0, dc_post(self, OP_WRITE, n, KEY_A, 1, 5, 0, 64,
			     (uintptr_t)a->buf, rk));
	expect_wc(_metadata, self->cq, 5, IBV_WC_SUCCESS);
	EXPECT_EQ(0, memcmp(a->buf, self->buf, 64));
	/* Streams 2 and 3 fail: two in error, the DCI goes to ERR */
	ASSERT_EQ(0, dc_post(self, OP_WRITE, n, KEY_A, 2, 6, 0, 64,
			     (uintptr_t)a->buf, rk + 1));
	expect_wc(_metadata, self->cq, 6, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(0, ibv_query_qp(self->dci, &qa, IBV_QP_STATE, &qia));
	EXPECT_EQ(IBV_QPS_RTS, qa.qp_state);
	ASSERT_EQ(0, dc_post(self, OP_WRITE, n, KEY_A, 3, 7, 0, 64,
			     (uintptr_t)a->buf, rk + 1));
	expect_wc(_metadata, self->cq, 7, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(0, ibv_query_qp(self->dci, &qa, IBV_QP_STATE, &qia));
	EXPECT_EQ(IBV_QPS_ERR, qa.qp_state);
}

/*
 * The DCT on another softverbs device of the host (bound to a dummy
 * netdev): the DCI's AH names that device's GID; a wrong key is counted
 * on the DCT's device.
 */
TEST_F(dc, dct_on_another_device)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_device **l2 = NULL;
	struct ibv_context *ctx2 = NULL;
	struct dct t = {};
	char cmd[PATH_MAX + 64];
	long long v0, v1;
	struct ibv_ah *ah0;
	struct ibv_wc wc;

	ASSERT_EQ(0, system("ip link add svdc0 type dummy && "
			    "ip link set svdc0 up"));
	snprintf(cmd, sizeof(cmd), "%s link add svdc1 netdev svdc0",
		 self->svctl);
	ASSERT_EQ(0, system(cmd));
	l2 = ibv_get_device_list(NULL);
	ctx2 = l2 ? sv_open_named(l2, "svdc1") : NULL;
	ASSERT_NE(NULL, ctx2);
	ASSERT_EQ(0, dct_make(ctx2, &t, KEY_B, 2));
	ASSERT_EQ(0, ibv_query_gid(ctx2, 1, 1, &aa.grh.dgid));
	aa.grh.sgid_index = 1;
	ah0 = self->ah;
	self->ah = ibv_create_ah(self->pd, &aa);
	ASSERT_NE(NULL, self->ah);
	ASSERT_EQ(0, dci_open(_metadata, self, 0, 0, 1, 7));
	sv_fill(self->buf, 256, 8);
	ASSERT_EQ(0, dc_post(self, OP_SEND, t.qp->qp_num, KEY_B, 0, 1, 0, 256,
			     0, 0));
	expect_wc(_metadata, self->cq, 1, IBV_WC_SUCCESS);
	ASSERT_EQ(1, poll1(t.cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(256, wc.byte_len);
	EXPECT_EQ(self->dci->qp_num, wc.src_qp);
	EXPECT_EQ(0, memcmp(t.buf + 2048, self->buf, 256));
	ASSERT_EQ(0, dc_post(self, OP_READ, t.qp->qp_num, KEY_B, 0, 2, 512,
			     256, (uintptr_t)t.buf + 2048, t.mr->rkey));
	expect_wc(_metadata, self->cq, 2, IBV_WC_SUCCESS);
	EXPECT_EQ(0, memcmp(self->buf + 512, self->buf, 256));
	/* The wrong key: counted where the DCT is */
	v0 = sv_stat_of(self->svctl, "svdc1", "dc_key_violations");
	ASSERT_EQ(0, dc_post(self, OP_SEND, t.qp->qp_num, KEY_A, 0, 3, 0, 16,
			     0, 0));
	expect_wc(_metadata, self->cq, 3, IBV_WC_RETRY_EXC_ERR);
	v1 = sv_stat_of(self->svctl, "svdc1", "dc_key_violations");
	EXPECT_EQ(2, v1 - v0);
	ibv_destroy_ah(self->ah);
	self->ah = ah0;
	ibv_destroy_qp(self->dci);
	self->dci = NULL;
	dct_free(&t);
	ibv_close_device(ctx2);
	ibv_free_device_list(l2);
	snprintf(cmd, sizeof(cmd), "%s link del svdc1", self->svctl);
	EXPECT_EQ(0, system(cmd));
	EXPECT_EQ(0, system("ip link del svdc0"));
}

/* The DCT in a child process: only its number and key cross over. */
TEST_F(dc, dct_in_another_process)
{
	int up[2], down[2], st;
	uint32_t msg[3];
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_device **l = ibv_get_device_list(NULL);
		struct ibv_context *ctx = sv_open_named(l, "softverbs0");
		struct dct t = {};
		struct ibv_wc wc;
		int ok;

		if (!ctx || dct_make(ctx, &t, KEY_B, 2))
			_exit(1);
		msg[0] = t.qp->qp_num;
		msg[1] = t.mr->rkey;
		msg[2] = 0;
		if (write(up[1], msg, sizeof(msg)) != sizeof(msg) ||
		    write(up[1], &t.buf, sizeof(t.buf)) != sizeof(t.buf))
			_exit(2);
		ok = poll1(t.cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
		     wc.byte_len == 128 && !memcmp(t.buf + 2048, t.buf, 128);
		if (read(down[0], &c, 1) != 1)
			_exit(3);
		dct_free(&t);
		ibv_close_device(ctx);
		ibv_free_device_list(l);
		_exit(ok ? 0 : 4);
	}
	{
		char *rbuf;

		ASSERT_EQ(sizeof(msg), read(up[0], msg, sizeof(msg)));
		ASSERT_EQ(sizeof(rbuf), read(up[0], &rbuf, sizeof(rbuf)));
		ASSERT_EQ(0, dci_open(_metadata, self, 0, 0, 7, 7));
		sv_fill(self->buf, 128, 6);
		/* WRITE the pattern to the child's buffer, then SEND it */
		ASSERT_EQ(0, dc_post(self, OP_WRITE, msg[0], KEY_B, 0, 1, 0,
				     128, (uintptr_t)rbuf, msg[1]));
		expect_wc(_metadata, self->cq, 1, IBV_WC_SUCCESS);
		ASSERT_EQ(0, dc_post(self, OP_SEND, msg[0], KEY_B, 0, 2, 0,
				     128, 0, 0));
		expect_wc(_metadata, self->cq, 2, IBV_WC_SUCCESS);
		ASSERT_EQ(1, write(down[1], &c, 1));
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		EXPECT_EQ(0, WEXITSTATUS(st));
	}
}

TEST_HARNESS_MAIN
