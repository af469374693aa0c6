// SPDX-License-Identifier: GPL-2.0
/*
 * dma-buf MRs (ibv_reg_dmabuf_mr(3)) over udmabuf buffers made from a
 * sealed memfd, between two connected RC QPs of softverbs0: b reaches a
 * range of a's dma-buf by iova, a sends from it and receives into it,
 * and the bytes are the memfd's (seen through its own mapping):
 *
 *   - RDMA WRITE, READ, both atomics, SEND and RECV, data verified at the
 *     right offset of the buffer, the bytes around the range untouched;
 *   - the MR stays usable after the dma-buf fd is closed (it holds the
 *     buffer); ZERO_BASED;
 *   - bounds: an iova outside the range is IBV_WC_REM_ACCESS_ERR;
 *   - errors: a bad fd (EBADF), a file that is no dma-buf, a range
 *     outside the buffer, length 0, ON_DEMAND (EINVAL); rereg
 *     (EOPNOTSUPP); nothing pinned to VmPin;
 *   - a process that exits with its dma-buf MR registered;
 *   - the exporter revoking the buffer (move_notify, driven through
 *     debugfs dmabuf_revoke) under traffic: every access from then on
 *     fails (IBV_WC_REM_ACCESS_ERR for b, IBV_WC_LOC_PROT_ERR for a), and
 *     nothing written after it lands in the buffer.
 *
 * Skipped where the kernel has no udmabuf (Debian's 6.1).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"
#include "sv_harness.h"
#include "sv_qp_test.h"
#include "sv_dp_test.h"

#define PG	4096UL
#define BUFSZ	(256UL << 10)	/* the dma-buf */
#define OFF	(8 * PG)	/* the MR's range in it */
#define LEN	(64UL << 10)
#define IOVA	0x7000000000ULL
#define ACC	SV_ALL_ACCESS

FIXTURE(dmabuf) {
	struct sv_rc_pair p;
	struct ibv_mr *mr, *bmr;
	int memfd, buf;		/* the memfd and its dma-buf */
	char *view;		/* the memfd, mapped */
	char *bbuf;
};

/* A dma-buf of size bytes over a sealed memfd (*memfd); -1 if none. */
static int udmabuf_new(size_t size, int *memfd)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC,
				    .size = size };
	int dev, fd;

	dev = open("/dev/udmabuf", O_RDWR);
	if (dev < 0)
		return -1;
	*memfd = memfd_create("sv_dmabuf", MFD_ALLOW_SEALING);
	if (*memfd < 0 || ftruncate(*memfd, size) ||
	    fcntl(*memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		close(dev);
		return -1;
	}
	c.memfd = *memfd;
	fd = ioctl(dev, UDMABUF_CREATE, &c);
	close(dev);
	return fd;
}

/* A SKIP in the setup still runs the test (the harness): skip it too. */
#define NEED_UDMABUF() do {						\
	if (self->buf < 0 && !self->mr)					\
		SKIP(return, "no udmabuf");				\
} while (0)

FIXTURE_SETUP(dmabuf)
{
	self->memfd = -1;
	self->buf = udmabuf_new(BUFSZ, &self->memfd);
	if (self->buf < 0)
		SKIP(return, "no udmabuf: %s", strerror(errno));
	self->view = mmap(NULL, BUFSZ, PROT_READ | PROT_WRITE, MAP_SHARED,
			  self->memfd, 0);
	ASSERT_NE(MAP_FAILED, self->view);
	memset(self->view, 0x11, BUFSZ);
	ASSERT_EQ(0, sv_rc_pair_open(&self->p, 16, 1));
	self->bbuf = aligned_alloc(PG, LEN);
	ASSERT_NE(NULL, self->bbuf);
	self->bmr = ibv_reg_mr(self->p.pd, self->bbuf, LEN, ACC);
	ASSERT_NE(NULL, self->bmr);
	self->mr = ibv_reg_dmabuf_mr(self->p.pd, OFF, LEN, IOVA, self->buf,
				     ACC);
	ASSERT_NE(NULL, self->mr) TH_LOG("%s", strerror(errno));
}

FIXTURE_TEARDOWN(dmabuf)
{
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->bmr)
		ibv_dereg_mr(self->bmr);
	sv_rc_pair_close(&self->p);
	free(self->bbuf);
	if (self->view && self->view != MAP_FAILED)
		munmap(self->view, BUFSZ);
	if (self->buf >= 0)
		close(self->buf);
	if (self->memfd >= 0)
		close(self->memfd);
}


/* b's RDMA op on the MR at iova offset aoff; the completion's status. */
static int b_rdma(FIXTURE_DATA(dmabuf) *self, enum ibv_wr_opcode op,
		  uint64_t aoff, uint32_t len, uint32_t rkey)
{
	static uint64_t id = 100;

	if (post_send(self->p.b, op, self->bmr->lkey, self->bbuf, len, ++id,
		      IBV_SEND_SIGNALED, IOVA + aoff, rkey))
		return -2;
	return sv_status_of(self->p.bcq, id, NULL);
}


TEST_F(dmabuf, fields)
{
	NEED_UDMABUF();
	EXPECT_EQ((void *)OFF, self->mr->addr);
	EXPECT_EQ(LEN, self->mr->length);
	EXPECT_EQ(self->mr->lkey, self->mr->rkey);
}

TEST_F(dmabuf, rdma_into_the_buffer)
{
	NEED_UDMABUF();
	sv_fill(self->bbuf, LEN, 3);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE, 0, LEN,
					 self->mr->rkey));
	EXPECT_EQ(0, memcmp(self->view + OFF, self->bbuf, LEN));
	EXPECT_TRUE(sv_all_bytes(self->view, OFF, 0x11));
	EXPECT_TRUE(sv_all_bytes(self->view + OFF + LEN, BUFSZ - OFF - LEN,
			      0x11));
	/* Written through the memfd, read through the MR. */
	sv_fill(self->view + OFF + PG, 100, 9);
	memset(self->bbuf, 0, LEN);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_READ, PG, 100,
					 self->mr->rkey));
	EXPECT_EQ(0, memcmp(self->bbuf, self->view + OFF + PG, 100));
	/* Past the range: nothing of the buffer beyond it is reached. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_WRITE, LEN - 8, 16,
			 self->mr->rkey));
	EXPECT_TRUE(sv_all_bytes(self->view + OFF + LEN, 8, 0x11));
}

TEST_F(dmabuf, atomics)
{
	NEED_UDMABUF();
	struct ibv_sge sg = { (uintptr_t)self->bbuf, 8, self->bmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint64_t *w = (uint64_t *)(self->view + OFF + 64);

	*w = 40;
	wr.wr.atomic.remote_addr = IOVA + 64;
	wr.wr.atomic.rkey = self->mr->rkey;
	wr.wr.atomic.compare_add = 2;
	ASSERT_EQ(0, ibv_post_send(self->p.b, &wr, &bad));
	ASSERT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.bcq, 7, NULL));
	EXPECT_EQ(40, *(uint64_t *)self->bbuf);
	EXPECT_EQ(42, *w);
}

TEST_F(dmabuf, send_and_recv)
{
	NEED_UDMABUF();
	struct ibv_wc wc;

	/* a receives into the buffer ... */
	ASSERT_EQ(0, post_recv(self->p.a, self->mr, (void *)(IOVA + 16), 1000,
			       1));
	sv_fill(self->bbuf, 1000, 5);
	ASSERT_EQ(0, post_send(self->p.b, IBV_WR_SEND, self->bmr->lkey,
			       self->bbuf, 1000, 2, IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.acq, 1, &wc));
	EXPECT_EQ(1000, wc.byte_len);
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.bcq, 2, NULL));
	EXPECT_EQ(0, memcmp(self->view + OFF + 16, self->bbuf, 1000));
	/* ... and sends from it. */
	sv_fill(self->view + OFF + 2 * PG, 3000, 6);
	memset(self->bbuf, 0, LEN);
	ASSERT_EQ(0, post_recv(self->p.b, self->bmr, self->bbuf, LEN, 3));
	ASSERT_EQ(0, post_send(self->p.a, IBV_WR_SEND, self->mr->lkey,
			       (void *)(IOVA + 2 * PG), 3000, 4,
			       IBV_SEND_SIGNALED, 0, 0));
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.acq, 4, NULL));
	ASSERT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.bcq, 3, &wc));
	EXPECT_EQ(0, memcmp(self->bbuf, self->view + OFF + 2 * PG, 3000));
}

/* The MR holds the buffer: closing the dma-buf fd changes nothing. */
TEST_F(dmabuf, outlives_fd_and_zero_based)
{
	NEED_UDMABUF();
	struct ibv_mr *zb;

	zb = ibv_reg_dmabuf_mr(self->p.pd, 0, PG, 0, self->buf,
			       ACC | IBV_ACCESS_ZERO_BASED);
	ASSERT_NE(NULL, zb);
	close(self->buf);
	self->buf = -1;
	memset(self->bbuf, 0x44, 32);
	ASSERT_EQ(0, post_send(self->p.b, IBV_WR_RDMA_WRITE, self->bmr->lkey,
			       self->bbuf, 32, 9, IBV_SEND_SIGNALED, 100,
			       zb->rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.bcq, 9, NULL));
	EXPECT_TRUE(sv_all_bytes(self->view + 100, 32, 0x44));
	EXPECT_EQ(0, ibv_dereg_mr(zb));
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE, 0, 8,
					 self->mr->rkey));
}

TEST_F(dmabuf, errors)
{
	NEED_UDMABUF();
	long pin0 = sv_vm_pin_kb();
	struct ibv_mr *mr;

	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->p.pd, 0, PG, 0, 1000, ACC));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->p.pd, 0, PG, 0, self->memfd,
					  ACC));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->p.pd, BUFSZ - PG, 2 * PG, 0,
					  self->buf, ACC));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->p.pd, 0, 0, 0, self->buf,
					  ACC));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->p.pd, 0, PG, 0, self->buf,
					  ACC | IBV_ACCESS_ON_DEMAND));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->p.pd, 0, PG, 0, self->buf,
					  IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(IBV_REREG_MR_ERR_CMD,
		  ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
			       NULL, 0, IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EOPNOTSUPP, errno);
	/* The whole buffer, and nothing pinned to VmPin for it. */
	mr = ibv_reg_dmabuf_mr(self->p.pd, 0, BUFSZ, 0, self->buf, ACC);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(pin0, sv_vm_pin_kb());
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/* A process that exits with a dma-buf MR: the file's close releases it. */
TEST_F(dmabuf, owner_exits)
{
	NEED_UDMABUF();
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_context *c = sv_open_named(self->p.list, "softverbs0");
		struct ibv_pd *pd = c ? ibv_alloc_pd(c) : NULL;

		if (!pd || !ibv_reg_dmabuf_mr(pd, 0, BUFSZ, 0, self->buf, ACC))
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	/* The buffer is still ours and still works. */
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE, 0, 8,
					 self->mr->rkey));
}

/* Have the buffer's exporter revoke it (debugfs, root); 0 or -1. */
static int dmabuf_revoke(uint32_t key)
{
	char k[16];
	int fd = open(SV_DEBUGFS0 "/dmabuf_revoke", O_WRONLY);
	int n;

	if (fd < 0)
		return -1;
	n = snprintf(k, sizeof(k), "%u", key);
	n = write(fd, k, n) == n ? 0 : -1;
	close(fd);
	return n;
}

struct writer {
	FIXTURE_DATA(dmabuf) *self;
	volatile int go;
	int ok;			/* writes that succeeded, in order */
	int status;		/* the first that did not */
};

/* b writes value i into the first page, until a write fails. */
static void *writer_fn(void *arg)
{
	struct writer *w = arg;

	for (;;) {
		memset(w->self->bbuf, (char)(w->ok + 1), PG);
		w->status = b_rdma(w->self, IBV_WR_RDMA_WRITE, 0, PG,
				   w->self->mr->rkey);
		if (w->status != IBV_WC_SUCCESS)
			return NULL;
		w->ok++;
		w->go = 1;
	}
}

TEST_F(dmabuf, revoked_under_traffic)
{
	NEED_UDMABUF();
	struct writer w = { .self = self };
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, writer_fn, &w));
	while (!w.go)
		usleep(1000);
	usleep(20000);
	ASSERT_EQ(0, dmabuf_revoke(self->mr->lkey));
	pthread_join(t, NULL);
	TH_LOG("%d writes before the revocation", w.ok);
	EXPECT_LT(0, w.ok);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, w.status);
	/* What is there is the last write that completed, not a later one. */
	EXPECT_TRUE(sv_all_bytes(self->view + OFF, PG, (char)w.ok));
	/* A key that is no dma-buf MR's: refused. */
	EXPECT_EQ(-1, dmabuf_revoke(self->bmr->lkey));
	EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = NULL;
}

/* The owner's own use of a revoked buffer: its error; b's WQE stays. */
TEST_F(dmabuf, revoked_local)
{
	NEED_UDMABUF();
	struct ibv_wc wc;

	ASSERT_EQ(0, dmabuf_revoke(self->mr->lkey));
	ASSERT_EQ(0, post_recv(self->p.b, self->bmr, self->bbuf, LEN, 5));
	ASSERT_EQ(0, post_send(self->p.a, IBV_WR_SEND, self->mr->lkey,
			       (void *)IOVA, 100, 6, IBV_SEND_SIGNALED, 0, 0));
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, sv_status_of(self->p.acq, 6, NULL));
	usleep(100000);
	EXPECT_EQ(0, ibv_poll_cq(self->p.bcq, 1, &wc));
}

TEST_HARNESS_MAIN
