// SPDX-License-Identifier: GPL-2.0
/*
 * ibv_import_device(3), ibv_import_pd(3), ibv_import_mr(3) and their
 * unimports: a second context on a dup'd or passed cmd_fd shares the
 * first one's kernel objects.
 *
 *   - in one process: the imported PD and MR carry the same handle, keys,
 *     address and length; QPs of the imported context move data through
 *     the imported MR; unimport frees nothing in the kernel; closing the
 *     imported context closes its fd and leaves the first one working;
 *   - across processes, over SCM_RIGHTS: the owner registers its memory
 *     and exits; the importer RDMA READs that memory through the imported
 *     MR (its pages stay pinned with the file), then deregisters it;
 *   - ibv_import_dm(): both contexts map the same device memory, an MR
 *     over it through the imported handle, unimport leaves it allocated;
 *   - the bad cases: unknown handles (ENOENT), handles of another type
 *     and an MR imported into another PD (EINVAL), a file descriptor that
 *     is no device (NULL).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "sv_harness.h"
#include "sv_dp_test.h"

#define LEN	8192

FIXTURE(imp) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	union ibv_gid gid;
};

FIXTURE_SETUP(imp)
{
	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &self->gid));
}

FIXTURE_TEARDOWN(imp)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	ibv_free_device_list(self->list);
}

/* Two connected RC QPs of pd on one CQ. */
static int rc_pair(struct ibv_pd *pd, struct ibv_cq *cq, const union ibv_gid *gid,
		   struct ibv_qp **a, struct ibv_qp **b)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_WRITE;

	*a = ibv_create_qp(pd, &ia);
	*b = ibv_create_qp(pd, &ia);
	if (!*a || !*b)
		return -1;
	if (qp_init(*a, access) || qp_init(*b, access) ||
	    qp_rtr_rts(*a, (*b)->qp_num, gid, 7, 1, 0) ||
	    qp_rtr_rts(*b, (*a)->qp_num, gid, 7, 1, 0))
		return -1;
	return 0;
}

TEST_F(imp, same_process)
{
	char *src = aligned_alloc(4096, LEN), *dst = aligned_alloc(4096, LEN);
	struct ibv_pd *pd, *ipd;
	struct ibv_mr *mr, *imr, *dmr;
	struct ibv_context *ictx;
	struct ibv_qp *a, *b;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	int fd;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	sv_fill(src, LEN, 3);
	memset(dst, 0, LEN);
	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	mr = ibv_reg_mr(pd, src, LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);

	fd = dup(self->ctx->cmd_fd);
	ASSERT_LE(0, fd);
	ictx = ibv_import_device(fd);
	ASSERT_NE(NULL, ictx) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(fd, ictx->cmd_fd);
	EXPECT_STREQ("softverbs0", ibv_get_device_name(ictx->device));
	ipd = ibv_import_pd(ictx, pd->handle);
	ASSERT_NE(NULL, ipd);
	EXPECT_EQ(pd->handle, ipd->handle);
	EXPECT_EQ(ictx, ipd->context);
	imr = ibv_import_mr(ipd, mr->handle);
	ASSERT_NE(NULL, imr);
	EXPECT_EQ(mr->lkey, imr->lkey);
	EXPECT_EQ(mr->rkey, imr->rkey);
	EXPECT_EQ(mr->addr, imr->addr);
	EXPECT_EQ(LEN, imr->length);
	EXPECT_EQ(ipd, imr->pd);

	/* The imported context's QPs read through the imported MR. */
	cq = ibv_create_cq(ictx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	ASSERT_EQ(0, rc_pair(ipd, cq, &self->gid, &a, &b));
	dmr = ibv_reg_mr(ipd, dst, LEN, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, dmr);
	ASSERT_EQ(0, post_send(a, IBV_WR_RDMA_READ, dmr->lkey, dst, LEN, 5,
			       IBV_SEND_SIGNALED, (uintptr_t)imr->addr,
			       imr->rkey));
	ASSERT_EQ(1, poll1(cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(src, dst, LEN));

	EXPECT_EQ(0, ibv_destroy_qp(a));
	EXPECT_EQ(0, ibv_destroy_qp(b));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dereg_mr(dmr));
	/* Unimporting frees nothing in the kernel: the owner's calls work. */
	ibv_unimport_mr(imr);
	ibv_unimport_pd(ipd);
	EXPECT_EQ(0, ibv_close_device(ictx));
	EXPECT_EQ(-1, fcntl(fd, F_GETFD));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
	free(src);
	free(dst);
}

TEST_F(imp, bad_handles)
{
	struct ibv_pd *pd = ibv_alloc_pd(self->ctx), *pd2, *ipd;
	struct ibv_context *ictx;
	char buf[64];
	struct ibv_mr *mr;
	int fd, p[2];

	ASSERT_NE(NULL, pd);
	pd2 = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd2);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	fd = dup(self->ctx->cmd_fd);
	ASSERT_LE(0, fd);
	ictx = ibv_import_device(fd);
	ASSERT_NE(NULL, ictx);

	errno = 0;
	EXPECT_EQ(NULL, ibv_import_pd(ictx, 0x7ffffff0));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(NULL, ibv_import_pd(ictx, mr->handle));
	EXPECT_EQ(EINVAL, errno);
	ipd = ibv_import_pd(ictx, pd2->handle);
	ASSERT_NE(NULL, ipd);
	/* The MR is pd's, not pd2's; a PD's handle is no MR's. */
	EXPECT_EQ(NULL, ibv_import_mr(ipd, mr->handle));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_import_mr(ipd, pd->handle));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_import_mr(ipd, 0x7ffffff0));
	EXPECT_EQ(ENOENT, errno);
	ibv_unimport_pd(ipd);
	EXPECT_EQ(0, ibv_close_device(ictx));

	/* No device behind it: no context, and the fd stays the caller's. */
	ASSERT_EQ(0, pipe(p));
	EXPECT_EQ(NULL, ibv_import_device(p[0]));
	EXPECT_EQ(0, fcntl(p[0], F_GETFD) < 0);
	close(p[0]);
	close(p[1]);
	EXPECT_EQ(NULL, ibv_import_device(-1));

	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

/* ibv_import_dm(): the same device memory, mapped by both contexts. */
TEST_F(imp, device_memory)
{
	struct ibv_alloc_dm_attr da = { .length = 8192 };
	struct ibv_pd *pd = ibv_alloc_pd(self->ctx), *ipd;
	char out[8192], in[8192];
	struct ibv_dm *dm, *idm;
	struct ibv_context *ictx;
	struct ibv_mr *mr;
	uint32_t handle;
	int fd;

	ASSERT_NE(NULL, pd);
	dm = ibv_alloc_dm(self->ctx, &da);
	ASSERT_NE(NULL, dm);
	ASSERT_TRUE(dm->comp_mask & IBV_DM_MASK_HANDLE);
	fd = dup(self->ctx->cmd_fd);
	ASSERT_LE(0, fd);
	ictx = ibv_import_device(fd);
	ASSERT_NE(NULL, ictx);
	idm = ibv_import_dm(ictx, dm->handle);
	ASSERT_NE(NULL, idm);
	EXPECT_EQ(dm->handle, idm->handle);
	EXPECT_EQ(ictx, idm->context);

	/* What one writes the other reads, both ways. */
	sv_fill(out, sizeof(out), 4);
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 0, out, sizeof(out)));
	ASSERT_EQ(0, ibv_memcpy_from_dm(in, idm, 0, sizeof(in)));
	EXPECT_EQ(0, memcmp(in, out, sizeof(in)));
	sv_fill(out, 100, 8);
	ASSERT_EQ(0, ibv_memcpy_to_dm(idm, 4000, out, 100));
	ASSERT_EQ(0, ibv_memcpy_from_dm(in, dm, 4000, 100));
	EXPECT_EQ(0, memcmp(in, out, 100));
	/* Its bounds are the DM's: out of range is EFAULT. */
	EXPECT_EQ(EFAULT, ibv_memcpy_from_dm(in, idm, 8000, 200));
	/* An MR over it through the imported one, in the imported PD */
	ipd = ibv_import_pd(ictx, pd->handle);
	ASSERT_NE(NULL, ipd);
	mr = ibv_reg_dm_mr(ipd, idm, 0, 4096, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_ZERO_BASED);
	ASSERT_NE(NULL, mr) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(EBUSY, ibv_free_dm(dm));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	ibv_unimport_pd(ipd);

	/* Not a DM's handle; a freed DM's */
	EXPECT_EQ(NULL, ibv_import_dm(ictx, pd->handle));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_import_dm(ictx, 0x7ffffff0));
	EXPECT_EQ(ENOENT, errno);
	ibv_unimport_dm(idm);
	/* Unimported: the DM is still there for its owner. */
	ASSERT_EQ(0, ibv_memcpy_from_dm(in, dm, 4000, 100));
	EXPECT_EQ(0, memcmp(in, out, 100));
	handle = dm->handle;
	EXPECT_EQ(0, ibv_free_dm(dm));
	EXPECT_EQ(NULL, ibv_import_dm(ictx, handle));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(0, ibv_close_device(ictx));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

/* Pass fd and three words over a UNIX socket. */
static int send_fd(int sock, int fd, const uint32_t *words)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { (void *)words, 3 * sizeof(uint32_t) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == (ssize_t)iov.iov_len ? 0 : -1;
}

static int recv_fd(int sock, uint32_t *words)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { words, 3 * sizeof(uint32_t) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &m, 0) != (ssize_t)iov.iov_len)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The owner: register a pattern, pass the file on, exit. */
static int owner(struct ibv_device **list, int sock)
{
	struct ibv_context *ctx = sv_open_named(list, "softverbs0");
	char *buf = aligned_alloc(4096, LEN);
	uint32_t words[3];
	struct ibv_pd *pd;
	struct ibv_mr *mr;

	if (!ctx || !buf)
		return 1;
	sv_fill(buf, LEN, 9);
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_READ) : NULL;
	if (!mr)
		return 2;
	words[0] = pd->handle;
	words[1] = mr->handle;
	words[2] = 0;
	return send_fd(sock, ctx->cmd_fd, words) ? 3 : 0;
}

TEST_F(imp, owner_exits)
{
	char *dst = aligned_alloc(4096, LEN), *want = malloc(LEN);
	struct ibv_context *ictx;
	struct ibv_qp *a, *b;
	struct ibv_mr *imr, *dmr;
	struct ibv_pd *ipd;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	uint32_t words[3];
	int sv[2], fd, status;
	pid_t pid;

	ASSERT_NE(NULL, dst);
	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(owner(self->list, sv[1]));
	fd = recv_fd(sv[0], words);
	ASSERT_LE(0, fd);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	close(sv[0]);
	close(sv[1]);

	/* Its owner is gone; the file lives on in our fd. */
	ictx = ibv_import_device(fd);
	ASSERT_NE(NULL, ictx);
	ipd = ibv_import_pd(ictx, words[0]);
	ASSERT_NE(NULL, ipd);
	imr = ibv_import_mr(ipd, words[1]);
	ASSERT_NE(NULL, imr);
	EXPECT_EQ(LEN, imr->length);
	cq = ibv_create_cq(ictx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	ASSERT_EQ(0, rc_pair(ipd, cq, &self->gid, &a, &b));
	dmr = ibv_reg_mr(ipd, dst, LEN, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, dmr);
	memset(dst, 0, LEN);
	ASSERT_EQ(0, post_send(a, IBV_WR_RDMA_READ, dmr->lkey, dst, LEN, 6,
			       IBV_SEND_SIGNALED, (uintptr_t)imr->addr,
			       imr->rkey));
	ASSERT_EQ(1, poll1(cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	sv_fill(want, LEN, 9);
	EXPECT_EQ(0, memcmp(want, dst, LEN));

	EXPECT_EQ(0, ibv_destroy_qp(a));
	EXPECT_EQ(0, ibv_destroy_qp(b));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dereg_mr(dmr));
	/* Deregistering the imported MR unpins the dead owner's pages. */
	EXPECT_EQ(0, ibv_dereg_mr(imr));
	EXPECT_EQ(0, ibv_dealloc_pd(ipd));
	EXPECT_EQ(0, ibv_close_device(ictx));
	free(dst);
	free(want);
}

TEST_HARNESS_MAIN
