// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory (ibv_alloc_dm(3), ibv_reg_dm_mr(3)): module memory the
 * library maps, copied with ibv_memcpy_to_dm()/_from_dm() and registered
 * as zero-based MRs that RDMA reaches like any other.
 *
 *   - max_dm_size; allocation, copies both ways with data verified, the
 *     copies' bounds (EFAULT) and 4-byte unit (EINVAL), nothing copied;
 *   - a DM MR: RDMA WRITE into it and READ out of it through its rkey, a
 *     SEND gathered from it through its lkey, an access beyond it
 *     (IBV_WC_REM_ACCESS_ERR), rereg (EINVAL), free while registered
 *     (EBUSY);
 *   - the errnos of bad allocation and registration arguments, the
 *     kernel's for bad handles, a process that exits with DM and MRs.
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"
#include "sv_harness.h"
#include "sv_qp_test.h"
#include "sv_dp_test.h"

#define DMLEN	65536
#define BUFSZ	65536

FIXTURE(dm) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_dm *dm;
	struct ibv_mr *hmr;		/* host memory */
	char *host;
	union ibv_gid gid;
};

FIXTURE_SETUP(dm)
{
	struct ibv_alloc_dm_attr da = { .length = DMLEN };
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;

	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &self->gid));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	ia.send_cq = ia.recv_cq = self->cq;
	self->a = ibv_create_qp(self->pd, &ia);
	self->b = ibv_create_qp(self->pd, &ia);
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, qp_init(self->a, access));
	ASSERT_EQ(0, qp_init(self->b, access));
	ASSERT_EQ(0, qp_rtr_rts(self->a, self->b->qp_num, &self->gid, 7, 1, 0));
	ASSERT_EQ(0, qp_rtr_rts(self->b, self->a->qp_num, &self->gid, 7, 1, 0));
	self->host = aligned_alloc(4096, BUFSZ);
	ASSERT_NE(NULL, self->host);
	self->hmr = ibv_reg_mr(self->pd, self->host, BUFSZ, access);
	ASSERT_NE(NULL, self->hmr);
	self->dm = ibv_alloc_dm(self->ctx, &da);
	ASSERT_NE(NULL, self->dm) TH_LOG("%s", strerror(errno));
}

FIXTURE_TEARDOWN(dm)
{
	if (self->a)
		ibv_destroy_qp(self->a);
	if (self->b)
		ibv_destroy_qp(self->b);
	if (self->hmr)
		ibv_dereg_mr(self->hmr);
	if (self->dm)
		ibv_free_dm(self->dm);
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	free(self->host);
	if (self->ctx)
		ibv_close_device(self->ctx);
	ibv_free_device_list(self->list);
}

static int wc_status(struct ibv_cq *cq, uint64_t id)
{
	struct ibv_wc wc = {};

	if (poll1(cq, &wc) != 1 || wc.wr_id != id)
		return -1;
	return wc.status;
}

TEST_F(dm, caps_and_copies)
{
	struct ibv_device_attr_ex ex;
	char *in = malloc(DMLEN), *out = malloc(DMLEN);

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_EQ(SV_MAX_DM_SIZE, ex.max_dm_size);
	EXPECT_EQ(self->ctx, self->dm->context);
	/* Born zeroed. */
	ASSERT_EQ(0, ibv_memcpy_from_dm(out, self->dm, 0, DMLEN));
	EXPECT_EQ(0, out[0]);
	EXPECT_EQ(0, out[DMLEN - 1]);
	sv_fill(in, DMLEN, 4);
	ASSERT_EQ(0, ibv_memcpy_to_dm(self->dm, 0, in, DMLEN));
	memset(out, 0, DMLEN);
	ASSERT_EQ(0, ibv_memcpy_from_dm(out, self->dm, 0, DMLEN));
	EXPECT_EQ(0, memcmp(in, out, DMLEN));
	ASSERT_EQ(0, ibv_memcpy_from_dm(out, self->dm, 1000, 12));
	EXPECT_EQ(0, memcmp(in + 1000, out, 12));
	/* As mlx5: out of range is EFAULT, nothing copied ... */
	EXPECT_EQ(EFAULT, ibv_memcpy_to_dm(self->dm, DMLEN - 4, in, 8));
	EXPECT_EQ(EFAULT, ibv_memcpy_to_dm(self->dm, DMLEN + 4, in, 0));
	EXPECT_EQ(EFAULT, ibv_memcpy_to_dm(self->dm, UINT64_MAX - 3, in, 8));
	EXPECT_EQ(EFAULT, ibv_memcpy_from_dm(out, self->dm, 8, DMLEN));
	/* ... and an offset or length off the 4-byte unit EINVAL. */
	EXPECT_EQ(EINVAL, ibv_memcpy_to_dm(self->dm, 2, in, 4));
	EXPECT_EQ(EINVAL, ibv_memcpy_to_dm(self->dm, 4, in, 6));
	EXPECT_EQ(EINVAL, ibv_memcpy_from_dm(out, self->dm, 1, 4));
	EXPECT_EQ(EINVAL, ibv_memcpy_from_dm(out, self->dm, 0, 3));
	ASSERT_EQ(0, ibv_memcpy_from_dm(out, self->dm, 0, DMLEN));
	EXPECT_EQ(0, memcmp(in, out, DMLEN));
	free(in);
	free(out);
}

TEST_F(dm, rdma_through_a_dm_mr)
{
	struct ibv_mr *mr;
	char *want = malloc(4096);

	ASSERT_NE(NULL, want);
	/* Zero-based: bytes 4096.. of the DM are the MR's 0.. */
	mr = ibv_reg_dm_mr(self->pd, self->dm, 4096, 16384,
			   IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(16384, mr->length);
	EXPECT_EQ(NULL, mr->addr);

	sv_fill(self->host, 4096, 7);
	ASSERT_EQ(0, post_send(self->a, IBV_WR_RDMA_WRITE, self->hmr->lkey,
			       self->host, 4096, 1, IBV_SEND_SIGNALED, 100,
			       mr->rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, wc_status(self->cq, 1));
	ASSERT_EQ(0, ibv_memcpy_from_dm(want, self->dm, 4096 + 100, 4096));
	EXPECT_EQ(0, memcmp(self->host, want, 4096));

	/* READ back, into another part of host memory. */
	memset(self->host + 8192, 0, 4096);
	ASSERT_EQ(0, post_send(self->a, IBV_WR_RDMA_READ, self->hmr->lkey,
			       self->host + 8192, 4096, 2, IBV_SEND_SIGNALED,
			       100, mr->rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, wc_status(self->cq, 2));
	EXPECT_EQ(0, memcmp(self->host, self->host + 8192, 4096));

	/* A SEND gathered from the DM through its lkey. */
	memset(self->host + 16384, 0, 512);
	ASSERT_EQ(0, post_recv(self->b, self->hmr, self->host + 16384, 512, 3));
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, mr->lkey, (void *)100,
			       512, 4, IBV_SEND_SIGNALED, 0, 0));
	/* The receive completes first: it is pushed before the send's. */
	ASSERT_EQ(IBV_WC_SUCCESS, wc_status(self->cq, 3));
	ASSERT_EQ(IBV_WC_SUCCESS, wc_status(self->cq, 4));
	EXPECT_EQ(0, memcmp(self->host, self->host + 16384, 512));

	/* Freeing a DM with an MR on it: EBUSY; rereg: the kernel's EINVAL. */
	EXPECT_EQ(EBUSY, ibv_free_dm(self->dm));
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_CMD,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			       IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);

	/* Beyond the MR (not the DM): REM_ACCESS_ERR. */
	ASSERT_EQ(0, post_send(self->a, IBV_WR_RDMA_WRITE, self->hmr->lkey,
			       self->host, 64, 5, IBV_SEND_SIGNALED,
			       16384 - 32, mr->rkey));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc_status(self->cq, 5));
	ASSERT_EQ(0, ibv_memcpy_from_dm(want, self->dm, 4096 + 16384, 64));
	EXPECT_EQ(0, want[0]);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_free_dm(self->dm));
	self->dm = NULL;
	free(want);
}

TEST_F(dm, bad_arguments)
{
	struct ibv_alloc_dm_attr da = { .length = 0 };
	int fd = self->ctx->cmd_fd;
	struct sv_reg_dm_mr r = { .size = sizeof(r),
				  .pd_handle = self->pd->handle,
				  .access = IBV_ACCESS_ZERO_BASED,
				  .length = 64 };
	struct sv_alloc_dm a = { .size = sizeof(a), .length = 64 };
	struct sv_free_dm f = { .size = sizeof(f) };
	struct ibv_mr *mr;

	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_dm(self->ctx, &da));
	EXPECT_EQ(EINVAL, errno);
	da.length = SV_MAX_DM_SIZE + 1;
	EXPECT_EQ(NULL, ibv_alloc_dm(self->ctx, &da));
	EXPECT_EQ(EINVAL, errno);
	da.length = 64;
	da.log_align_req = 13;
	EXPECT_EQ(NULL, ibv_alloc_dm(self->ctx, &da));
	EXPECT_EQ(EINVAL, errno);
	da.log_align_req = 0;
	da.comp_mask = 1;
	EXPECT_EQ(NULL, ibv_alloc_dm(self->ctx, &da));
	EXPECT_EQ(EINVAL, errno);

	/* Registration: ZERO_BASED required, inside the DM. */
	EXPECT_EQ(NULL, ibv_reg_dm_mr(self->pd, self->dm, 0, 64,
				      IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_reg_dm_mr(self->pd, self->dm, DMLEN - 32, 64,
				      IBV_ACCESS_ZERO_BASED));
	EXPECT_EQ(EINVAL, errno);
	/* A length of 0 is an MR, as on mlx5 (rdma-core's tests make one). */
	mr = ibv_reg_dm_mr(self->pd, self->dm, 0, 0, IBV_ACCESS_ZERO_BASED);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, mr->length);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(NULL, ibv_reg_dm_mr(self->pd, self->dm, 0, 64,
				      IBV_ACCESS_ZERO_BASED |
				      IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(EINVAL, errno);

	/* The kernel's: flags, handles of nothing and of another type. */
	a.flags = 1;
	EXPECT_EQ(EINVAL, sv_ioc(fd, SV_IOC_ALLOC_DM, &a));
	r.dm_handle = 0x7ffffff0;
	EXPECT_EQ(ENOENT, sv_ioc(fd, SV_IOC_REG_DM_MR, &r));
	r.dm_handle = self->pd->handle;
	EXPECT_EQ(EINVAL, sv_ioc(fd, SV_IOC_REG_DM_MR, &r));
	r.dm_handle = self->dm->handle;
	r.reserved = 1;
	EXPECT_EQ(EINVAL, sv_ioc(fd, SV_IOC_REG_DM_MR, &r));
	r.reserved = 0;
	r.pd_handle = 0x7ffffff0;
	EXPECT_EQ(ENOENT, sv_ioc(fd, SV_IOC_REG_DM_MR, &r));
	f.dm_handle = self->hmr->handle;
	EXPECT_EQ(EINVAL, sv_ioc(fd, SV_IOC_FREE_DM, &f));
	f.dm_handle = 0x7ffffff0;
	EXPECT_EQ(ENOENT, sv_ioc(fd, SV_IOC_FREE_DM, &f));
	/* A PD with a DM MR in it is busy; the DM itself names no PD. */
	r.pd_handle = self->pd->handle;
	ASSERT_EQ(0, sv_ioc(fd, SV_IOC_REG_DM_MR, &r));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(EBUSY, ibv_free_dm(self->dm));
}

/* Exit with DMs and DM MRs alive, writes in flight: the file cleans up. */
TEST_F(dm, exit_with_dm_mrs)
{
	int i, status;
	pid_t pid;

	for (i = 0; i < 3; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			struct ibv_context *c = sv_open_named(self->list,
							      "softverbs0");
			struct ibv_alloc_dm_attr da = { .length = 8192 };
			struct ibv_pd *pd = c ? ibv_alloc_pd(c) : NULL;
			struct ibv_dm *d = c ? ibv_alloc_dm(c, &da) : NULL;

			if (!pd || !d ||
			    !ibv_reg_dm_mr(pd, d, 0, 4096,
					   IBV_ACCESS_ZERO_BASED |
					   IBV_ACCESS_LOCAL_WRITE) ||
			    !ibv_reg_dm_mr(pd, d, 4096, 4096,
					   IBV_ACCESS_ZERO_BASED))
				_exit(1);
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}
}

TEST_HARNESS_MAIN
