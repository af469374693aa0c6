// SPDX-License-Identifier: GPL-2.0
/*
 * Tag-matching SRQs (IBV_SRQT_TM, ibv_post_srq_ops(3), rdma-core's
 * Documentation/tag_matching.md) between two RC QPs of softverbs0: a
 * client that sends TM messages, a server whose QP uses a TM SRQ. Eager
 * messages land in the first matching tagged buffer without their TMH;
 * rendezvous requests are read from the client through their RVH and
 * answered with a FIN; unexpected ones land whole in the SRQ's own WQEs
 * and count, and a buffer added while software lags is never matched;
 * stale handles, short buffers, bad keys and bad ops get exact statuses
 * and errnos.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <infiniband/tm_types.h>

#include "sv_harness.h"
#include "sv_dp_test.h"

#define BSZ		(256 * 1024)
#define TAGS		64
#define TMH		((int)sizeof(struct ibv_tmh))
#define RVH		((int)sizeof(struct ibv_rvh))
/* Buffer layout: what the client sends, its data, the server's areas */
#define C_MSG		0
#define C_DATA		4096
#define C_FIN		(128 * 1024)
#define S_TAGGED	(132 * 1024)
#define S_UNEXP		(200 * 1024)
#define UNEXP_SLOT	1024

FIXTURE(tm) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *scq;		/* the TM SRQ's */
	struct ibv_cq *ccq;
	struct ibv_cq *qcq;		/* the server QP's own: stays empty */
	struct ibv_srq *srq;
	struct ibv_qp *sqp, *cqp;
	struct ibv_mr *mr;
	char *buf;
	uint32_t unexp;			/* unexpected messages handled */
};

static struct ibv_srq *tm_srq(struct ibv_pd *pd, struct ibv_cq *cq,
			      uint32_t tags, uint32_t ops)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 64, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM, .pd = pd, .cq = cq,
		.tm_cap = { .max_num_tags = tags, .max_ops = ops },
	};

	return ibv_create_srq_ex(pd->context, &a);
}

FIXTURE_SETUP(tm)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_qp_init_attr sa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 0, .max_recv_wr = 0 },
	};
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	union ibv_gid gid;

	self->list = ibv_get_device_list(NULL);
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &gid));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->buf = aligned_alloc(4096, BSZ);
	ASSERT_NE(NULL, self->buf);
	memset(self->buf, 0, BSZ);
	self->mr = ibv_reg_mr(self->pd, self->buf, BSZ, SV_ALL_ACCESS);
	ASSERT_NE(NULL, self->mr);
	self->scq = ibv_create_cq_ex(self->ctx, &ca);
	ASSERT_NE(NULL, self->scq) TH_LOG("%s", strerror(errno));
	self->ccq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, self->ccq);
	self->srq = tm_srq(self->pd, ibv_cq_ex_to_cq(self->scq), TAGS, 16);
	ASSERT_NE(NULL, self->srq) TH_LOG("%s", strerror(errno));
	self->qcq = ibv_create_cq(self->ctx, 8, NULL, NULL, 0);
	ASSERT_NE(NULL, self->qcq);
	sa.send_cq = sa.recv_cq = self->qcq;
	sa.srq = self->srq;
	self->sqp = ibv_create_qp(self->pd, &sa);
	ASSERT_NE(NULL, self->sqp) TH_LOG("%s", strerror(errno));
	qa.send_cq = qa.recv_cq = self->ccq;
	self->cqp = ibv_create_qp(self->pd, &qa);
	ASSERT_NE(NULL, self->cqp);
	ASSERT_EQ(0, qp_init(self->sqp, SV_ALL_ACCESS));
	ASSERT_EQ(0, qp_init(self->cqp, SV_ALL_ACCESS));
	ASSERT_EQ(0, qp_rtr_rts(self->sqp, self->cqp->qp_num, &gid, 7, 1, 0));
	ASSERT_EQ(0, qp_rtr_rts(self->cqp, self->sqp->qp_num, &gid, 7, 1, 0));
}

FIXTURE_TEARDOWN(tm)
{
	if (self->sqp)
		ibv_destroy_qp(self->sqp);
	if (self->cqp)
		ibv_destroy_qp(self->cqp);
	if (self->srq)
		ibv_destroy_srq(self->srq);
	if (self->scq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(self->scq));
	if (self->ccq)
		ibv_destroy_cq(self->ccq);
	if (self->qcq) {
		struct ibv_wc wc;

		/* Receives on a TM SRQ complete on the SRQ's CQ. */
		EXPECT_EQ(0, ibv_poll_cq(self->qcq, 1, &wc));
		ibv_destroy_cq(self->qcq);
	}
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
	free(self->buf);
}

/* One completion of the TM SRQ's CQ, as the extended API reads it. */
struct tmc {
	uint64_t wr_id;
	int status;
	int opcode;
	unsigned int flags;
	uint32_t len;
	uint32_t qpn;
	struct ibv_wc_tm_info tm;
};

static int tm_poll(struct ibv_cq_ex *cq, struct tmc *c, int ms)
{
	struct ibv_poll_cq_attr pa = {};
	int ret, waited = 0;

	while ((ret = ibv_start_poll(cq, &pa)) == ENOENT) {
		if (waited++ >= ms * sv_slow())
			return 0;
		usleep(1000);
	}
	if (ret)
		return -1;
	c->wr_id = cq->wr_id;
	c->status = cq->status;
	c->opcode = ibv_wc_read_opcode(cq);
	c->flags = ibv_wc_read_wc_flags(cq);
	c->len = ibv_wc_read_byte_len(cq);
	c->qpn = ibv_wc_read_qp_num(cq);
	ibv_wc_read_tm_info(cq, &c->tm);
	ibv_end_poll(cq);
	return 1;
}

static int tm_ops(struct ibv_srq *srq, struct ibv_ops_wr *op)
{
	struct ibv_ops_wr *bad = NULL;

	return ibv_post_srq_ops(srq, op, &bad);
}

/* Add a tagged buffer of len bytes at off; its handle, or -1. */
static int64_t tm_add(FIXTURE_DATA(tm) *self, uint64_t tag, uint64_t mask,
		      uint64_t id, uint32_t off, uint32_t len, int flags)
{
	struct ibv_sge sg = { (uintptr_t)self->buf + off, len, self->mr->lkey };
	struct ibv_ops_wr op = {
		.wr_id = id, .opcode = IBV_WR_TAG_ADD, .flags = flags,
		.tm = { .unexpected_cnt = self->unexp,
			.add = { .recv_wr_id = id, .sg_list = &sg,
				 .num_sge = 1, .tag = tag, .mask = mask } },
	};

	if (tm_ops(self->srq, &op))
		return -1;
	return op.tm.handle;
}

static int tm_simple(FIXTURE_DATA(tm) *self, enum ibv_ops_wr_opcode code,
		     uint32_t handle, uint64_t id, int flags)
{
	struct ibv_ops_wr op = {
		.wr_id = id, .opcode = code, .flags = flags,
		.tm = { .unexpected_cnt = self->unexp, .handle = handle },
	};

	return tm_ops(self->srq, &op);
}

/* An SRQ WQE of UNEXP_SLOT bytes for unexpected messages, slot i. */
static int srq_recv(FIXTURE_DATA(tm) *self, int i)
{
	struct ibv_sge sg = { (uintptr_t)self->buf + S_UNEXP + i * UNEXP_SLOT,
			      UNEXP_SLOT, self->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1000 + i, .sg_list = &sg,
				  .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(self->srq, &wr, &bad);
}

/* The client sends len bytes from C_MSG, a TMH first if op >= 0. */
static int tm_send(FIXTURE_DATA(tm) *self, int op, uint64_t tag,
		   uint32_t ctx, uint32_t len, uint64_t id)
{
	struct ibv_tmh *h = (struct ibv_tmh *)(self->buf + C_MSG);

	if (op >= 0) {
		memset(h, 0, sizeof(*h));
		h->opcode = op;
		h->app_ctx = htobe32(ctx);
		h->tag = htobe64(tag);
	}
	return post_send(self->cqp, IBV_WR_SEND, self->mr->lkey,
			 self->buf + C_MSG, len, id, IBV_SEND_SIGNALED, 0, 0);
}

/* The client's next completion: its status, or -1. */
static int client_status(FIXTURE_DATA(tm) *self, struct ibv_wc *wc)
{
	if (poll1(self->ccq, wc) != 1)
		return -1;
	return wc->status;
}

/* A rendezvous request for len bytes of C_DATA under rkey, and 16 more. */
static uint32_t rndv_req(FIXTURE_DATA(tm) *self, uint64_t tag, uint32_t ctx,
			 uint32_t len, uint32_t rkey)
{
	struct ibv_tmh *h = (struct ibv_tmh *)(self->buf + C_MSG);
	struct ibv_rvh *v = (struct ibv_rvh *)(h + 1);

	memset(h, 0, sizeof(*h));
	h->opcode = IBV_TMH_RNDV;
	h->app_ctx = htobe32(ctx);
	h->tag = htobe64(tag);
	v->va = htobe64((uintptr_t)self->buf + C_DATA);
	v->rkey = htobe32(rkey);
	v->len = htobe32(len);
	memset(v + 1, 0x5a, 16);
	return TMH + RVH + 16;
}

TEST_F(tm, caps)
{
	struct ibv_device_attr_ex a;

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &a));
	EXPECT_EQ(IBV_TM_CAP_RC, a.tm_caps.flags);
	EXPECT_EQ(1023, a.tm_caps.max_num_tags);
	EXPECT_EQ(1024, a.tm_caps.max_ops);
	EXPECT_EQ(4, a.tm_caps.max_sge);
	EXPECT_EQ(64, a.tm_caps.max_rndv_hdr_size);
}

TEST_F(tm, create_bad)
{
	struct ibv_cq *cq = ibv_cq_ex_to_cq(self->scq);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_UC, .send_cq = cq, .recv_cq = cq,
		.srq = self->srq, .cap = { .max_send_wr = 1 },
	};
	struct ibv_srq_init_attr_ex x = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_TM, .pd = self->pd, .cq = cq,
		.tm_cap = { .max_num_tags = 4, .max_ops = 4 },
	};
	struct ibv_ops_wr op = { .opcode = IBV_WR_TAG_SYNC }, *bad;
	struct ibv_srq *srq;

	/* No IBV_SRQ_INIT_ATTR_TM, no CQ, limits out of range */
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &x));
	EXPECT_EQ(EINVAL, errno);
	x.comp_mask |= IBV_SRQ_INIT_ATTR_TM;
	x.comp_mask &= ~IBV_SRQ_INIT_ATTR_CQ;
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &x));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, tm_srq(self->pd, cq, 0, 4));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, tm_srq(self->pd, cq, 1024, 4));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, tm_srq(self->pd, cq, 4, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, tm_srq(self->pd, cq, 4, 1025));
	EXPECT_EQ(EINVAL, errno);
	srq = tm_srq(self->pd, cq, 1023, 1024);
	ASSERT_NE(NULL, srq);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	/* Tag matching is for RC QPs */
	EXPECT_EQ(NULL, ibv_create_qp(self->pd, &qa));
	EXPECT_EQ(EINVAL, errno);
	/* The CQ is in use while the SRQ lives */
	EXPECT_EQ(EBUSY, ibv_destroy_cq(cq));
	/* Ops on an SRQ without a tag list */
	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_srq_ops(srq, &op, &bad));
	EXPECT_EQ(&op, bad);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_F(tm, bad_ops)
{
	struct ibv_sge sg[5] = {};
	struct ibv_ops_wr ops[3] = {}, *bad;
	struct tmc c;
	int i;

	for (i = 0; i < 5; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)self->buf + S_TAGGED, 8,
					  self->mr->lkey };
	/* Two good ADDs, then five SGEs: the first two are done. */
	for (i = 0; i < 3; i++) {
		ops[i].wr_id = i;
		ops[i].opcode = IBV_WR_TAG_ADD;
		ops[i].flags = IBV_OPS_SIGNALED;
		ops[i].tm.add.sg_list = sg;
		ops[i].tm.add.num_sge = i == 2 ? 5 : 1;
		ops[i].tm.add.tag = i;
		ops[i].tm.add.mask = ~0ULL;
		ops[i].tm.handle = 0xdead;
		ops[i].next = i < 2 ? &ops[i + 1] : NULL;
	}
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_srq_ops(self->srq, ops, &bad));
	EXPECT_EQ(&ops[2], bad);
	EXPECT_NE(0xdead, ops[0].tm.handle);
	EXPECT_NE(ops[0].tm.handle, ops[1].tm.handle);
	EXPECT_EQ(0xdead, ops[2].tm.handle);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
		EXPECT_EQ(i, c.wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, c.status);
		EXPECT_EQ(IBV_WC_TM_ADD, c.opcode);
		EXPECT_EQ(0, c.flags);
	}
	EXPECT_EQ(0, tm_poll(self->scq, &c, 0));
	/* An unknown opcode, flag; a handle no buffer ever had */
	ops[0].next = NULL;
	ops[0].opcode = 7;
	EXPECT_EQ(EINVAL, ibv_post_srq_ops(self->srq, ops, &bad));
	ops[0].opcode = IBV_WR_TAG_SYNC;
	ops[0].flags = 0x80;
	EXPECT_EQ(EINVAL, ibv_post_srq_ops(self->srq, ops, &bad));
	EXPECT_EQ(EINVAL, tm_simple(self, IBV_WR_TAG_DEL, 1023, 9, 0));
	EXPECT_EQ(0, tm_poll(self->scq, &c, 0));
}

TEST(full_list)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = sv_open_named(list, "softverbs0");
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_sge sg = {};
	struct ibv_ops_wr ops[3] = {}, *bad = NULL;
	int i;

	ASSERT_NE(NULL, ctx);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	srq = tm_srq(pd, cq, 2, 4);
	ASSERT_NE(NULL, srq);
	for (i = 0; i < 3; i++) {
		ops[i].opcode = IBV_WR_TAG_ADD;
		ops[i].tm.add.sg_list = &sg;
		ops[i].next = i < 2 ? &ops[i + 1] : NULL;
	}
	EXPECT_EQ(ENOMEM, ibv_post_srq_ops(srq, ops, &bad));
	EXPECT_EQ(&ops[2], bad);
	/* A deleted buffer's slot is free again; its handle is stale. */
	ops[0].opcode = IBV_WR_TAG_DEL;
	ops[0].next = NULL;
	EXPECT_EQ(0, ibv_post_srq_ops(srq, ops, &bad));
	ops[2].next = NULL;
	EXPECT_EQ(0, ibv_post_srq_ops(srq, &ops[2], &bad));
	EXPECT_NE(ops[0].tm.handle, ops[2].tm.handle);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
	ibv_close_device(ctx);
	ibv_free_device_list(list);
}

/*
 * Eager messages in reverse order of their buffers: each lands in its
 * own, without the TMH; the first listed of equal tags goes first; a
 * mask makes a wildcard.
 */
TEST_F(tm, eager)
{
	const uint32_t n = 9, len = 200;
	struct ibv_wc wc;
	struct tmc c;
	uint32_t i;

	for (i = 1; i <= n; i++) {
		ASSERT_LE(0, tm_add(self, i, 0xffff, i, S_TAGGED + i * 512,
				    512, IBV_OPS_SIGNALED));
		ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
		EXPECT_EQ(i, c.wr_id);
		EXPECT_EQ(IBV_WC_TM_ADD, c.opcode);
		EXPECT_EQ(0, c.flags);
		EXPECT_EQ(0, c.tm.tag);
	}
	for (i = n; i >= 1; i--) {
		sv_fill(self->buf + C_MSG + TMH, len - TMH, i);
		ASSERT_EQ(0, tm_send(self, IBV_TMH_EAGER, i | 0x30000,
				     0xc0de0000 + i, len, i));
		ASSERT_EQ(IBV_WC_SUCCESS, client_status(self, &wc));
		ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
		EXPECT_EQ(i, c.wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, c.status);
		EXPECT_EQ(IBV_WC_TM_RECV, c.opcode);
		EXPECT_EQ(IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, c.flags);
		EXPECT_EQ(len - TMH, c.len);
		EXPECT_EQ(self->sqp->qp_num, c.qpn);
		EXPECT_EQ(i | 0x30000, c.tm.tag);
		EXPECT_EQ(0xc0de0000 + i, c.tm.priv);
		EXPECT_EQ(0, memcmp(self->buf + S_TAGGED + i * 512,
				    self->buf + C_MSG + TMH, len - TMH));
	}
	/* Equal tags: in the order they were listed. Then a wildcard. */
	ASSERT_LE(0, tm_add(self, 77, ~0ULL, 1, S_TAGGED, 64, 0));
	ASSERT_LE(0, tm_add(self, 77, ~0ULL, 2, S_TAGGED + 64, 64, 0));
	ASSERT_LE(0, tm_add(self, 0x500, 0xff00, 3, S_TAGGED + 128, 64, 0));
	for (i = 1; i <= 3; i++) {
		ASSERT_EQ(0, tm_send(self, IBV_TMH_EAGER, i < 3 ? 77 : 0x5ab,
				     0, TMH + 8, i));
		ASSERT_EQ(IBV_WC_SUCCESS, client_status(self, &wc));
		ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
		EXPECT_EQ(i, c.wr_id);
		EXPECT_EQ(i < 3 ? 77 : 0x5ab, c.tm.tag);
		EXPECT_EQ(8, c.len);
	}
	EXPECT_EQ(0, tm_poll(self->scq, &c, 0));
}

/*
 * Unexpected messages land whole in the SRQ's WQEs and count; a buffer
 * added while software lags is never matched (SYNC_REQ says so), one
 * added in sync is.
 */
TEST_F(tm, unexpected_and_sync)
{
	struct ibv_wc wc;
	struct tmc c;
	int64_t stale, h;
	int i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, srq_recv(self, i));
	sv_fill(self->buf + C_MSG + TMH, 100, 3);
	ASSERT_EQ(0, tm_send(self, IBV_TMH_EAGER, 0x1234, 5, TMH + 100, 1));
	ASSERT_EQ(IBV_WC_SUCCESS, client_status(self, &wc));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(1000, c.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, c.status);
	EXPECT_EQ(IBV_WC_TM_RECV, c.opcode);
	EXPECT_EQ(0, c.flags);
	EXPECT_EQ(TMH + 100, c.len);
	EXPECT_EQ(0, c.tm.tag);
	EXPECT_EQ(0, memcmp(self->buf + S_UNEXP, self->buf + C_MSG,
			    TMH + 100));

	/* Listed before software saw that message: never matched. */
	stale = tm_add(self, 0x1234, ~0ULL, 50, S_TAGGED, 512,
		       IBV_OPS_SIGNALED);
	ASSERT_LE(0, stale);
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(IBV_WC_TM_ADD, c.opcode);
	EXPECT_EQ(IBV_WC_TM_SYNC_REQ, c.flags);
	ASSERT_EQ(0, tm_send(self, IBV_TMH_EAGER, 0x1234, 5, TMH + 100, 2));
	ASSERT_EQ(IBV_WC_SUCCESS, client_status(self, &wc));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(1001, c.wr_id);
	EXPECT_EQ(0, c.flags);

	/* Software catches up: a sync, without SYNC_REQ. */
	self->unexp = 2;
	ASSERT_EQ(0, tm_simple(self, IBV_WR_TAG_SYNC, 0, 60,
			       IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(60, c.wr_id);
	EXPECT_EQ(IBV_WC_TM_SYNC, c.opcode);
	EXPECT_EQ(0, c.flags);
	/* The stale buffer still takes nothing; a new one does. */
	h = tm_add(self, 0x1234, ~0ULL, 51, S_TAGGED + 512, 512,
		   IBV_OPS_TM_SYNC);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, tm_send(self, IBV_TMH_EAGER, 0x1234, 6, TMH + 100, 3));
	ASSERT_EQ(IBV_WC_SUCCESS, client_status(self, &wc));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(51, c.wr_id);
	EXPECT_EQ(IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, c.flags);
	EXPECT_EQ(6, c.tm.priv);
	/* Delete the stale one (signaled): it was never consumed. */
	ASSERT_EQ(0, tm_simple(self, IBV_WR_TAG_DEL, stale, 61,
			       IBV_OPS_SIGNALED));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(61, c.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, c.status);
	EXPECT_EQ(IBV_WC_TM_DEL, c.opcode);
	EXPECT_EQ(0, tm_poll(self->scq, &c, 0));
}

/* NO_TAG: whole, uncounted; short or FIN messages: ordinary receives. */
TEST_F(tm, no_tag_and_plain)
{
	struct ibv_wc wc;
	struct tmc c;

	ASSERT_EQ(0, srq_recv(self, 0));
	ASSERT_EQ(0, srq_recv(self, 1));
	ASSERT_EQ(0, srq_recv(self, 2));
	ASSERT_LE(0, tm_add(self, 9, ~0ULL, 9, S_TAGGED, 512, 0));
	ASSERT_EQ(0, tm_send(self, IBV_TMH_NO_TAG, 9, 0, TMH + 40, 1));
	ASSERT_EQ(IBV_WC_SUCCESS, client_status(self, &wc));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(1000, c.wr_id);
	EXPECT_EQ(IBV_WC_TM_NO_TAG, c.opcode);
	EXPECT_EQ(0, c.flags);
	EXPECT_EQ(TMH + 40, c.len);
	ASSERT_EQ(0, tm_send(self, -1, 0, 0, 8, 2));
	ASSERT_EQ(IBV_WC_SUCCESS, client_status(self, &wc));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(1001, c.wr_id);
	EXPECT_EQ(IBV_WC_RECV, c.opcode);
	EXPECT_EQ(8, c.len);
	ASSERT_EQ(0, tm_send(self, IBV_TMH_FIN, 9, 0, TMH + RVH, 3));
	ASSERT_EQ(IBV_WC_SUCCESS, client_status(self, &wc));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(1002, c.wr_id);
	EXPECT_EQ(IBV_WC_RECV, c.opcode);
	/* None of them counted: a buffer added at 0 is in sync. */
	ASSERT_LE(0, tm_add(self, 10, ~0ULL, 10, S_TAGGED, 512,
			    IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(0, c.flags);
	/* Buffer 9 is still there */
	ASSERT_EQ(0, tm_send(self, IBV_TMH_EAGER, 9, 0, TMH + 4, 4));
	ASSERT_EQ(IBV_WC_SUCCESS, client_status(self, &wc));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(9, c.wr_id);
}

/*
 * A rendezvous: matched at once, the data read from the client, the
 * client's send complete, then the FIN in the client's receive queue,
 * which had no WQE for it at first (RNR: it waits for one).
 */
TEST_F(tm, rendezvous)
{
	const uint32_t len = 100 * 1024 + 3;
	struct ibv_tmh *fin = (struct ibv_tmh *)(self->buf + C_FIN);
	struct ibv_wc wc;
	struct tmc c;
	uint32_t n;

	sv_fill(self->buf + C_DATA, len, 11);
	n = rndv_req(self, 0x77, 0xabc, len, self->mr->rkey);
	ASSERT_LE(0, tm_add(self, 0x77, ~0ULL, 71, S_TAGGED, len + 64, 0));
	ASSERT_EQ(0, post_send(self->cqp, IBV_WR_SEND, self->mr->lkey,
			       self->buf + C_MSG, n, 5, IBV_SEND_SIGNALED,
			       0, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(71, c.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, c.status);
	EXPECT_EQ(IBV_WC_TM_RECV, c.opcode);
	EXPECT_EQ(IBV_WC_TM_MATCH, c.flags);
	EXPECT_EQ(0x77, c.tm.tag);
	EXPECT_EQ(0xabc, c.tm.priv);
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(71, c.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, c.status);
	EXPECT_EQ(IBV_WC_TM_RECV, c.opcode);
	EXPECT_EQ(IBV_WC_TM_DATA_VALID, c.flags);
	EXPECT_EQ(len, c.len);
	EXPECT_EQ(0, c.tm.tag);
	EXPECT_EQ(0, memcmp(self->buf + S_TAGGED, self->buf + C_DATA, len));
	/* The send completes; no receive WQE for the FIN yet (RNR) */
	ASSERT_EQ(IBV_WC_SUCCESS, client_status(self, &wc));
	EXPECT_EQ(5, wc.wr_id);
	usleep(50000);
	EXPECT_EQ(0, ibv_poll_cq(self->ccq, 1, &wc));
	ASSERT_EQ(0, post_recv(self->cqp, self->mr, self->buf + C_FIN, 64, 9));
	ASSERT_EQ(1, poll1(self->ccq, &wc));
	EXPECT_EQ(9, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(TMH + RVH, wc.byte_len);
	EXPECT_EQ(self->sqp->qp_num, wc.src_qp);
	EXPECT_EQ(IBV_TMH_FIN, fin->opcode);
	EXPECT_EQ(0xabc, be32toh(fin->app_ctx));
	EXPECT_EQ(0x77, be64toh(fin->tag));
	EXPECT_EQ(0, memcmp(fin + 1, self->buf + C_MSG + TMH, RVH));
}

/* A buffer smaller than the data: the request itself, software goes on. */
TEST_F(tm, rendezvous_incomplete)
{
	struct ibv_wc wc;
	struct tmc c;
	uint32_t n;

	ASSERT_EQ(0, post_recv(self->cqp, self->mr, self->buf + C_FIN, 64, 9));
	ASSERT_LE(0, tm_add(self, 3, ~0ULL, 30, S_TAGGED, 40, 0));
	n = rndv_req(self, 3, 7, 4096, self->mr->rkey);
	ASSERT_EQ(0, post_send(self->cqp, IBV_WR_SEND, self->mr->lkey,
			       self->buf + C_MSG, n, 5, IBV_SEND_SIGNALED,
			       0, 0));
	ASSERT_EQ(IBV_WC_SUCCESS, client_status(self, &wc));
	EXPECT_EQ(5, wc.wr_id);
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(30, c.wr_id);
	EXPECT_EQ(IBV_WC_TM_RNDV_INCOMPLETE, c.status);
	EXPECT_EQ(IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, c.flags);
	EXPECT_EQ(40, c.len);
	EXPECT_EQ(3, c.tm.tag);
	EXPECT_EQ(0, memcmp(self->buf + S_TAGGED, self->buf + C_MSG, 40));
	/* No FIN */
	usleep(20000);
	EXPECT_EQ(0, ibv_poll_cq(self->ccq, 1, &wc));
	EXPECT_EQ(0, tm_poll(self->scq, &c, 0));
}

/* A rendezvous with a bad key: both QPs to ERR, the statuses say why. */
TEST_F(tm, rendezvous_bad_key)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;
	struct ibv_wc wc;
	struct tmc c;
	uint32_t n;

	ASSERT_EQ(0, post_recv(self->cqp, self->mr, self->buf + C_FIN, 64, 9));
	ASSERT_LE(0, tm_add(self, 3, ~0ULL, 30, S_TAGGED, 8192, 0));
	n = rndv_req(self, 3, 7, 4096, self->mr->rkey + 0x100);
	ASSERT_EQ(0, post_send(self->cqp, IBV_WR_SEND, self->mr->lkey,
			       self->buf + C_MSG, n, 5, IBV_SEND_SIGNALED,
			       0, 0));
	ASSERT_EQ(1, poll1(self->ccq, &wc));
	EXPECT_EQ(5, wc.wr_id);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, c.status);
	EXPECT_EQ(IBV_WC_TM_MATCH, c.flags);
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(30, c.wr_id);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, c.status);
	ASSERT_EQ(0, ibv_query_qp(self->sqp, &qa, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_ERR, qa.qp_state);
	ASSERT_EQ(0, ibv_query_qp(self->cqp, &qa, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_ERR, qa.qp_state);
}

/*
 * A consumed buffer's handle: DEL fails with TM_ERR even unsignaled; an
 * eager payload longer than its buffer: LOC_LEN_ERR, the sender hears.
 */
TEST_F(tm, consumed_and_short)
{
	struct ibv_wc wc;
	struct tmc c;
	int64_t h;

	h = tm_add(self, 1, ~0ULL, 10, S_TAGGED, 512, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, tm_send(self, IBV_TMH_EAGER, 1, 0, TMH + 10, 1));
	ASSERT_EQ(IBV_WC_SUCCESS, client_status(self, &wc));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(10, c.wr_id);
	ASSERT_EQ(0, tm_simple(self, IBV_WR_TAG_DEL, h, 11, 0));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(11, c.wr_id);
	EXPECT_EQ(IBV_WC_TM_ERR, c.status);
	EXPECT_EQ(IBV_WC_TM_DEL, c.opcode);

	ASSERT_LE(0, tm_add(self, 2, ~0ULL, 20, S_TAGGED, 8, 0));
	ASSERT_EQ(0, tm_send(self, IBV_TMH_EAGER, 2, 0, TMH + 100, 2));
	ASSERT_EQ(IBV_WC_REM_INV_REQ_ERR, client_status(self, &wc));
	ASSERT_EQ(1, tm_poll(self->scq, &c, 2000));
	EXPECT_EQ(20, c.wr_id);
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, c.status);
}

TEST_HARNESS_MAIN
