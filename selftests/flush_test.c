// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA FLUSH (IBA 1.5, ibv_wr_flush()) between two RC QPs of softverbs0,
 * called as a program built with rdma-core 45's headers calls it
 * (sv_verbs45.h). Global visibility over a range or a whole MR completes
 * with IBV_WC_FLUSH;
 * the responder's QP and MR must grant the type's flush right
 * (IBV_WC_REM_ACCESS_ERR otherwise); a bad type or selectivity is the
 * requester's IBV_WC_LOC_QP_OP_ERR; persistence is only for MRs of
 * persistent memory (EINVAL elsewhere); the device advertises both types.
 */
#include <errno.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "sv_harness.h"
#include "sv_dp_test.h"
#include "sv_verbs45.h"

#define BSZ	65536

FIXTURE(fl) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *ax;
	struct ibv_mr *amr, *bmr;
	char *abuf, *bbuf;
	union ibv_gid gid;
};

static struct ibv_qp *rc_qp(FIXTURE_DATA(fl) *self, uint64_t ops)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC, .send_cq = self->cq,
		.recv_cq = self->cq, .pd = self->pd,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = ops,
	};

	return ibv_create_qp_ex(self->ctx, &a);
}

FIXTURE_SETUP(fl)
{
	int all = SV_ALL_ACCESS | ACCESS_FLUSH_GLOBAL;

	self->list = ibv_get_device_list(NULL);
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &self->gid));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->abuf = aligned_alloc(4096, BSZ);
	self->bbuf = aligned_alloc(4096, BSZ);
	ASSERT_NE(NULL, self->abuf);
	ASSERT_NE(NULL, self->bbuf);
	memset(self->bbuf, 0, BSZ);
	self->amr = ibv_reg_mr(self->pd, self->abuf, BSZ, SV_ALL_ACCESS);
	self->bmr = ibv_reg_mr(self->pd, self->bbuf, BSZ, all);
	ASSERT_NE(NULL, self->amr);
	ASSERT_NE(NULL, self->bmr) TH_LOG("%s", strerror(errno));
	self->a = rc_qp(self, IBV_QP_EX_WITH_RDMA_WRITE | QP_EX_WITH_FLUSH);
	ASSERT_NE(NULL, self->a) TH_LOG("%s", strerror(errno));
	self->b = rc_qp(self, IBV_QP_EX_WITH_SEND);
	ASSERT_NE(NULL, self->b);
	self->ax = ibv_qp_to_qp_ex(self->a);
	ASSERT_EQ(0, qp_init(self->a, SV_ALL_ACCESS));
	ASSERT_EQ(0, qp_init(self->b, all));
	ASSERT_EQ(0, qp_rtr_rts(self->a, self->b->qp_num, &self->gid, 7, 1, 0));
	ASSERT_EQ(0, qp_rtr_rts(self->b, self->a->qp_num, &self->gid, 7, 1, 0));
}

FIXTURE_TEARDOWN(fl)
{
	if (self->a)
		ibv_destroy_qp(self->a);
	if (self->b)
		ibv_destroy_qp(self->b);
	if (self->amr)
		ibv_dereg_mr(self->amr);
	if (self->bmr)
		ibv_dereg_mr(self->bmr);
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
	free(self->abuf);
	free(self->bbuf);
}

/* Post one signaled FLUSH and return its completion's status (or -1). */
static int flush1(FIXTURE_DATA(fl) *self, uint32_t rkey, uint64_t addr,
		  size_t len, uint8_t type, uint8_t level, struct ibv_wc *wc)
{
	if (post_flush(self->ax, 77, rkey, addr, len, type, level))
		return -1;
	if (poll1(self->cq, wc) != 1 || wc->wr_id != 77)
		return -1;
	return wc->status;
}

TEST_F(fl, caps)
{
	struct ibv_device_attr_ex a;

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &a));
	EXPECT_TRUE(a.device_cap_flags_ex & DEVICE_FLUSH_GLOBAL);
	EXPECT_TRUE(a.device_cap_flags_ex & DEVICE_FLUSH_PERSISTENT);
}

/* Writes, then a flush of their range and one of the whole MR. */
TEST_F(fl, global)
{
	uintptr_t b = (uintptr_t)self->bbuf;
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 4; i++) {
		sv_fill(self->abuf + i * 4096, 4096, i + 1);
		ibv_wr_start(self->ax);
		self->ax->wr_id = i;
		self->ax->wr_flags = 0;
		ibv_wr_rdma_write(self->ax, self->bmr->rkey, b + i * 4096);
		ibv_wr_set_sge(self->ax, self->amr->lkey,
			       (uintptr_t)self->abuf + i * 4096, 4096);
		ASSERT_EQ(0, ibv_wr_complete(self->ax));
	}
	ASSERT_EQ(IBV_WC_SUCCESS, flush1(self, self->bmr->rkey, b, 4 * 4096,
					 FLUSH_GLOBAL, FLUSH_RANGE, &wc));
	EXPECT_EQ(WC_FLUSH, wc.opcode);
	EXPECT_EQ(0, memcmp(self->abuf, self->bbuf, 4 * 4096));
	/* The whole MR: address and length do not matter. */
	ASSERT_EQ(IBV_WC_SUCCESS, flush1(self, self->bmr->rkey, 12345, 1,
					 FLUSH_GLOBAL, FLUSH_MR, &wc));
	EXPECT_EQ(WC_FLUSH, wc.opcode);
	/* Nothing to flush: no key is looked at. */
	ASSERT_EQ(IBV_WC_SUCCESS, flush1(self, 0x1234, 0, 0, FLUSH_GLOBAL,
					 FLUSH_RANGE, &wc));
}

TEST_F(fl, mr_without_right)
{
	struct ibv_wc wc;

	/* amr grants no flush */
	ASSERT_EQ(0, ibv_modify_qp(self->b, &(struct ibv_qp_attr){
		.qp_access_flags = SV_ALL_ACCESS | ACCESS_FLUSH_GLOBAL },
		IBV_QP_ACCESS_FLAGS));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  flush1(self, self->amr->rkey, (uintptr_t)self->abuf, 64,
			 FLUSH_GLOBAL, FLUSH_RANGE, &wc));
}

TEST_F(fl, persistent_on_global_mr)
{
	struct ibv_wc wc;

	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  flush1(self, self->bmr->rkey, (uintptr_t)self->bbuf, 64,
			 FLUSH_PERSISTENT, FLUSH_RANGE, &wc));
}

TEST_F(fl, qp_without_right)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, ibv_modify_qp(self->b, &(struct ibv_qp_attr){
		.qp_access_flags = SV_ALL_ACCESS }, IBV_QP_ACCESS_FLAGS));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  flush1(self, self->bmr->rkey, (uintptr_t)self->bbuf, 64,
			 FLUSH_GLOBAL, FLUSH_RANGE, &wc));
}

TEST_F(fl, out_of_range)
{
	struct ibv_wc wc;

	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  flush1(self, self->bmr->rkey, (uintptr_t)self->bbuf + BSZ - 8,
			 16, FLUSH_GLOBAL, FLUSH_RANGE, &wc));
}

TEST_F(fl, bad_type)
{
	struct ibv_wc wc;

	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR,
		  flush1(self, self->bmr->rkey, (uintptr_t)self->bbuf, 8, 0,
			 FLUSH_RANGE, &wc));
}

TEST_F(fl, bad_level)
{
	struct ibv_wc wc;

	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR,
		  flush1(self, self->bmr->rkey, (uintptr_t)self->bbuf, 8,
			 FLUSH_GLOBAL, 2, &wc));
}

/* Persistence needs persistent memory; ODP, rereg: EINVAL. */
TEST_F(fl, persistent_registration)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;

	ASSERT_NE(MAP_FAILED, p);
	p[0] = 1;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, p, 8192, IBV_ACCESS_LOCAL_WRITE |
				   ACCESS_FLUSH_PERSISTENT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, p, 8192, IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_ON_DEMAND |
				   ACCESS_FLUSH_PERSISTENT));
	EXPECT_EQ(EINVAL, errno);
	mr = ibv_reg_mr(self->pd, p, 8192, IBV_ACCESS_LOCAL_WRITE |
			ACCESS_FLUSH_GLOBAL);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(IBV_REREG_MR_ERR_CMD,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			       IBV_ACCESS_LOCAL_WRITE |
			       ACCESS_FLUSH_PERSISTENT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	munmap(p, 8192);
}

/*
 * FLUSH is RC's: a UD QP that asks for it is EOPNOTSUPP, as any other
 * operation its transport lacks; one built anyway fails the list.
 */
TEST_F(fl, not_on_ud)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_UD, .send_cq = self->cq,
		.recv_cq = self->cq, .pd = self->pd,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | QP_EX_WITH_FLUSH,
	};
	struct ibv_qp_ex *x;
	struct ibv_qp *qp;

	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);
	a.send_ops_flags = IBV_QP_EX_WITH_SEND;
	qp = ibv_create_qp_ex(self->ctx, &a);
	ASSERT_NE(NULL, qp);
	x = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(x);
	wr_flush(x, self->bmr->rkey, 0, 8, FLUSH_GLOBAL, FLUSH_RANGE);
	EXPECT_EQ(EINVAL, ibv_wr_complete(x));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_HARNESS_MAIN
