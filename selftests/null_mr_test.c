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

FIXTURE(null) {
	struct sv_rc_pair p;
	struct ibv_mr *nmr, *amr, *bmr;
	char *abuf, *bbuf;
};

FIXTURE_SETUP(null)
{
	ASSERT_EQ(0, sv_rc_pair_open(&self->p, 16, 4));
	self->abuf = aligned_alloc(4096, BSZ);
	self->bbuf = aligned_alloc(4096, BSZ);
	ASSERT_NE(NULL, self->abuf);
	ASSERT_NE(NULL, self->bbuf);
	self->amr = ibv_reg_mr(self->p.pd, self->abuf, BSZ, SV_ALL_ACCESS);
	self->bmr = ibv_reg_mr(self->p.pd, self->bbuf, BSZ, SV_ALL_ACCESS);
	ASSERT_NE(NULL, self->amr);
	ASSERT_NE(NULL, self->bmr);
	self->nmr = ibv_alloc_null_mr(self->p.pd);
	ASSERT_NE(NULL, self->nmr);
}

FIXTURE_TEARDOWN(null)
{
	if (self->nmr)
		ibv_dereg_mr(self->nmr);
	if (self->amr)
		ibv_dereg_mr(self->amr);
	if (self->bmr)
		ibv_dereg_mr(self->bmr);
	sv_rc_pair_close(&self->p);
	free(self->abuf);
	free(self->bbuf);
}

TEST_F(null, fields)
{
	EXPECT_EQ(NULL, self->nmr->addr);
	EXPECT_EQ(SIZE_MAX, self->nmr->length);
	EXPECT_EQ(0, self->nmr->rkey);
	EXPECT_NE(0, self->nmr->lkey);
	EXPECT_EQ(self->p.pd, self->nmr->pd);
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
	ASSERT_EQ(0, post_recv(self->p.b, self->bmr, self->bbuf, BSZ, 2));
	ASSERT_EQ(0, ibv_post_send(self->p.a, &wr, &bad));
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.acq, 1, NULL));
	ASSERT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.bcq, 2, &wc));
	EXPECT_EQ(350, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->bbuf, self->abuf, 100));
	EXPECT_TRUE(sv_all_bytes(self->bbuf + 100, 200, 0));
	EXPECT_EQ(0, memcmp(self->bbuf + 300, self->abuf + 100, 50));
	EXPECT_TRUE(sv_all_bytes(self->bbuf + 350, 100, 0x5a));
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
	ASSERT_EQ(0, ibv_post_recv(self->p.b, &rwr, &rbad));
	ASSERT_EQ(0, post_send(self->p.a, IBV_WR_SEND, self->amr->lkey,
			       self->abuf, 164, 4, IBV_SEND_SIGNALED, 0, 0));
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.acq, 4, NULL));
	ASSERT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.bcq, 3, &wc));
	EXPECT_EQ(164, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->bbuf, self->abuf + 64, 100));
	EXPECT_TRUE(sv_all_bytes(self->bbuf + 100, 100, 0x5a));
}

/* An RDMA READ into it completes; an RDMA WRITE from it writes zeros. */
TEST_F(null, rdma_local)
{
	memset(self->abuf, 0x77, BSZ);
	ASSERT_EQ(0, post_send(self->p.b, IBV_WR_RDMA_READ, self->nmr->lkey,
			       (void *)0x2000, 4096, 5, IBV_SEND_SIGNALED,
			       (uintptr_t)self->abuf, self->amr->rkey));
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.bcq, 5, NULL));
	ASSERT_EQ(0, post_send(self->p.b, IBV_WR_RDMA_WRITE, self->nmr->lkey,
			       NULL, 1000, 6, IBV_SEND_SIGNALED,
			       (uintptr_t)self->abuf + 8, self->amr->rkey));
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.bcq, 6, NULL));
	EXPECT_TRUE(sv_all_bytes(self->abuf, 8, 0x77));
	EXPECT_TRUE(sv_all_bytes(self->abuf + 8, 1000, 0));
	EXPECT_TRUE(sv_all_bytes(self->abuf + 1008, 100, 0x77));
}

/* Not an rkey: a peer's write with its key is a remote access error. */
TEST_F(null, no_rkey)
{
	ASSERT_EQ(0, post_send(self->p.b, IBV_WR_RDMA_WRITE, self->bmr->lkey,
			       self->bbuf, 8, 7, IBV_SEND_SIGNALED, 0x1000,
			       self->nmr->lkey));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, sv_status_of(self->p.bcq, 7, NULL));
}

TEST_F(null, rereg_and_bind_invalid)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->p.pd, IBV_MW_TYPE_1);
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
	if (!ibv_bind_mw(self->p.a, mw, &bind))
		EXPECT_EQ(IBV_WC_MW_BIND_ERR, sv_status_of(self->p.acq, 8, NULL));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(null, ioctl_errors)
{
	struct ibv_context *c = self->p.ctx;
	int fd = c->cmd_fd;
	struct sv_alloc_null_mr cmd = { .size = sizeof(cmd) };
	struct sv_dereg_mr d = { .size = sizeof(d) };

	cmd.pd_handle = 0x7777;
	EXPECT_EQ(ENOENT, sv_ioc(fd, SV_IOC_ALLOC_NULL_MR, &cmd));
	cmd.pd_handle = self->amr->handle;	/* an MR, not a PD */
	EXPECT_EQ(EINVAL, sv_ioc(fd, SV_IOC_ALLOC_NULL_MR, &cmd));
	cmd.pd_handle = self->p.pd->handle;
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
