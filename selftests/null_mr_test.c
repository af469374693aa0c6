// SPDX-License-Identifier: GPL-2.0
/*
 * Null MRs (ibv_alloc_null_mr(3)) between two connected RC QPs of
 * softverbs0: through its lkey, a send's bytes are zeros and a receive's
 * or a read's bytes are discarded, at any address, beside real SGEs in
 * the same list; it has no rkey (a peer's access with its key is
 * IBV_WC_REM_ACCESS_ERR); rereg is invalid, a window cannot be bound to
 * it; the kernel's errnos for a bad PD; it is charged and counted as an
 * MR.
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"
#include "sv_harness.h"
#include "sv_qp_test.h"
#include "sv_dp_test.h"

#define BSZ	8192
#define ALL_REMOTE (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		    IBV_ACCESS_REMOTE_ATOMIC)

FIXTURE(null) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *acq, *bcq;
	struct ibv_qp *a, *b;
	struct ibv_mr *nmr, *amr, *bmr;
	char *abuf, *bbuf;
	union ibv_gid gid;
};

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 4, .max_recv_sge = 4 },
	};

	return ibv_create_qp(pd, &ia);
}

FIXTURE_SETUP(null)
{
	int ret;

	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &self->gid));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->acq = ibv_create_cq(self->ctx, 32, NULL, NULL, 0);
	self->bcq = ibv_create_cq(self->ctx, 32, NULL, NULL, 0);
	ASSERT_NE(NULL, self->acq);
	ASSERT_NE(NULL, self->bcq);
	self->abuf = aligned_alloc(4096, BSZ);
	self->bbuf = aligned_alloc(4096, BSZ);
	ASSERT_NE(NULL, self->abuf);
	ASSERT_NE(NULL, self->bbuf);
	self->amr = ibv_reg_mr(self->pd, self->abuf, BSZ,
			       IBV_ACCESS_LOCAL_WRITE | ALL_REMOTE);
	self->bmr = ibv_reg_mr(self->pd, self->bbuf, BSZ,
			       IBV_ACCESS_LOCAL_WRITE | ALL_REMOTE);
	ASSERT_NE(NULL, self->amr);
	ASSERT_NE(NULL, self->bmr);
	self->nmr = ibv_alloc_null_mr(self->pd);
	ASSERT_NE(NULL, self->nmr);
	self->a = rc_qp(self->pd, self->acq);
	self->b = rc_qp(self->pd, self->bcq);
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	ret = qp_init(self->a, ALL_REMOTE | IBV_ACCESS_LOCAL_WRITE);
	ret = ret ?: qp_init(self->b, ALL_REMOTE | IBV_ACCESS_LOCAL_WRITE);
	ret = ret ?: qp_rtr_rts(self->a, self->b->qp_num, &self->gid, 7, 1, 0);
	ret = ret ?: qp_rtr_rts(self->b, self->a->qp_num, &self->gid, 7, 1, 0);
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(null)
{
	if (self->a)
		ibv_destroy_qp(self->a);
	if (self->b)
		ibv_destroy_qp(self->b);
	if (self->nmr)
		ibv_dereg_mr(self->nmr);
	if (self->amr)
		ibv_dereg_mr(self->amr);
	if (self->bmr)
		ibv_dereg_mr(self->bmr);
	if (self->acq)
		ibv_destroy_cq(self->acq);
	if (self->bcq)
		ibv_destroy_cq(self->bcq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	free(self->abuf);
	free(self->bbuf);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
}

static bool all_bytes(const char *p, size_t n, char v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

static int status_of(struct ibv_cq *cq, uint64_t id, struct ibv_wc *out)
{
	struct ibv_wc wc = {};

	if (poll1(cq, &wc) != 1 || wc.wr_id != id)
		return -1;
	if (out)
		*out = wc;
	return wc.status;
}

TEST_F(null, fields)
{
	EXPECT_EQ(NULL, self->nmr->addr);
	EXPECT_EQ(SIZE_MAX, self->nmr->length);
	EXPECT_EQ(0, self->nmr->rkey);
	EXPECT_NE(0, self->nmr->lkey);
	EXPECT_EQ(self->pd, self->nmr->pd);
	EXPECT_EQ(3, sv_obj_count("mr"));
}

/* A send gathers zeros from it, at any address, between real SGEs. */
TEST_F(null, send_sources_zeros)
{
	struct ibv_sge sg[3] = {
		{ (uintptr_t)self->abuf, 100, self->amr->lkey },
		{ 0xdead0000beef, 200, self->nmr->lkey },
		{ (uintptr_t)self->abuf + 100, 50, self->amr->lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = sg, .num_sge = 3,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	sv_fill(self->abuf, 150, 1);
	memset(self->bbuf, 0x5a, BSZ);
	ASSERT_EQ(0, post_recv(self->b, self->bmr, self->bbuf, BSZ, 2));
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	EXPECT_EQ(IBV_WC_SUCCESS, status_of(self->acq, 1, NULL));
	ASSERT_EQ(IBV_WC_SUCCESS, status_of(self->bcq, 2, &wc));
	EXPECT_EQ(350, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->bbuf, self->abuf, 100));
	EXPECT_TRUE(all_bytes(self->bbuf + 100, 200, 0));
	EXPECT_EQ(0, memcmp(self->bbuf + 300, self->abuf + 100, 50));
	EXPECT_TRUE(all_bytes(self->bbuf + 350, 100, 0x5a));
}

/* A receive scatters into it: those bytes are dropped, the rest land. */
TEST_F(null, recv_discards)
{
	struct ibv_sge sg[2] = {
		{ 0x1000, 64, self->nmr->lkey },
		{ (uintptr_t)self->bbuf, 100, self->bmr->lkey },
	};
	struct ibv_recv_wr rwr = {
		.wr_id = 3, .sg_list = sg, .num_sge = 2,
	}, *rbad;
	struct ibv_wc wc;

	sv_fill(self->abuf, 164, 2);
	memset(self->bbuf, 0x5a, BSZ);
	ASSERT_EQ(0, ibv_post_recv(self->b, &rwr, &rbad));
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->amr->lkey,
			       self->abuf, 164, 4, IBV_SEND_SIGNALED, 0, 0));
	EXPECT_EQ(IBV_WC_SUCCESS, status_of(self->acq, 4, NULL));
	ASSERT_EQ(IBV_WC_SUCCESS, status_of(self->bcq, 3, &wc));
	EXPECT_EQ(164, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->bbuf, self->abuf + 64, 100));
	EXPECT_TRUE(all_bytes(self->bbuf + 100, 100, 0x5a));
}

/* An RDMA READ into it completes; an RDMA WRITE from it writes zeros. */
TEST_F(null, rdma_local)
{
	memset(self->abuf, 0x77, BSZ);
	ASSERT_EQ(0, post_send(self->b, IBV_WR_RDMA_READ, self->nmr->lkey,
			       (void *)0x2000, 4096, 5, IBV_SEND_SIGNALED,
			       (uintptr_t)self->abuf, self->amr->rkey));
	EXPECT_EQ(IBV_WC_SUCCESS, status_of(self->bcq, 5, NULL));
	ASSERT_EQ(0, post_send(self->b, IBV_WR_RDMA_WRITE, self->nmr->lkey,
			       NULL, 1000, 6, IBV_SEND_SIGNALED,
			       (uintptr_t)self->abuf + 8, self->amr->rkey));
	EXPECT_EQ(IBV_WC_SUCCESS, status_of(self->bcq, 6, NULL));
	EXPECT_TRUE(all_bytes(self->abuf, 8, 0x77));
	EXPECT_TRUE(all_bytes(self->abuf + 8, 1000, 0));
	EXPECT_TRUE(all_bytes(self->abuf + 1008, 100, 0x77));
}

/* Not an rkey: a peer's write with its key is a remote access error. */
TEST_F(null, no_rkey)
{
	ASSERT_EQ(0, post_send(self->b, IBV_WR_RDMA_WRITE, self->bmr->lkey,
			       self->bbuf, 8, 7, IBV_SEND_SIGNALED, 0x1000,
			       self->nmr->lkey));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, status_of(self->bcq, 7, NULL));
}

TEST_F(null, rereg_and_bind_invalid)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = {
		.wr_id = 8, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = self->nmr, .addr = 0x1000,
			       .length = 64,
			       .mw_access_flags = IBV_ACCESS_REMOTE_READ },
	};

	EXPECT_EQ(IBV_REREG_MR_ERR_CMD,
		  ibv_rereg_mr(self->nmr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
			       NULL, 0, IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_NE(NULL, mw);
	/* Without MW_BIND: the bind's completion fails. */
	if (!ibv_bind_mw(self->a, mw, &bind))
		EXPECT_EQ(IBV_WC_MW_BIND_ERR, status_of(self->acq, 8, NULL));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(null, ioctl_errors)
{
	struct ibv_context *c = self->ctx;
	int fd = c->cmd_fd;
	struct sv_alloc_null_mr cmd = { .size = sizeof(cmd) };
	struct sv_dereg_mr d = { .size = sizeof(d) };

	cmd.pd_handle = 0x7777;
	EXPECT_EQ(ENOENT, sv_ioc(fd, SV_IOC_ALLOC_NULL_MR, &cmd));
	cmd.pd_handle = self->amr->handle;	/* an MR, not a PD */
	EXPECT_EQ(EINVAL, sv_ioc(fd, SV_IOC_ALLOC_NULL_MR, &cmd));
	cmd.pd_handle = self->pd->handle;
	cmd.size = 8;
	EXPECT_EQ(EINVAL, sv_ioc(fd, SV_IOC_ALLOC_NULL_MR, &cmd));
	EXPECT_EQ(3, sv_obj_count("mr"));
	/* A second one, and dereg of both. */
	cmd.size = sizeof(cmd);
	ASSERT_EQ(0, sv_ioc(fd, SV_IOC_ALLOC_NULL_MR, &cmd));
	EXPECT_NE(self->nmr->lkey, cmd.lkey);
	EXPECT_EQ(4, sv_obj_count("mr"));
	d.mr_handle = cmd.mr_handle;
	EXPECT_EQ(0, sv_ioc(fd, SV_IOC_DEREG_MR, &d));
	EXPECT_EQ(0, ibv_dereg_mr(self->nmr));
	self->nmr = NULL;
	EXPECT_EQ(2, sv_obj_count("mr"));
}

TEST_HARNESS_MAIN
