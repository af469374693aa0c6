// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand paging MRs (IBV_ACCESS_ON_DEMAND, ibv_reg_mr(3)) and
 * ibv_advise_mr(3), between two connected RC QPs of softverbs0: a owns an
 * ODP MR over anonymous memory it has not touched, b reaches it with RDMA
 * and sends, and a uses it locally.
 *
 *   - odp_caps; nothing pinned (VmPin) for an ODP MR of 64 MiB;
 *   - RDMA WRITE, READ, SEND both ways and atomics on pages never touched,
 *     data verified;
 *   - the MR follows the mapping: a range remapped (MAP_FIXED) or replaced
 *     by mremap() reads and writes the new pages; an unmapped range is
 *     IBV_WC_REM_ACCESS_ERR for b and IBV_WC_LOC_PROT_ERR for a's own
 *     use (b's receive WQE stays); a read-only range refuses writes;
 *   - after fork() a write lands in the parent's memory, not in the page
 *     the child still shares; a THP collapse (MADV_COLLAPSE) moves the
 *     pages and the data follows;
 *   - under traffic: pages replaced by mremap() while b reads and writes
 *     them; no read returns an older page's bytes, no write lands in a
 *     page the process has given up;
 *   - implicit ODP (addr NULL, length SIZE_MAX): any address of a's;
 *   - ibv_advise_mr(): PREFETCH_WRITE makes pages resident (mincore),
 *     NO_FAULT does not; every errno of the man page;
 *   - rereg between pinned and on-demand.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"
#include "sv_harness.h"
#include "sv_qp_test.h"
#include "sv_dp_test.h"

#define PG	4096UL
#define MEMSZ	(1UL << 20)	/* a's ODP memory */
#define BSZ	(1UL << 20)	/* b's pinned buffer */
#define ALL_REMOTE (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		    IBV_ACCESS_REMOTE_ATOMIC)
#define ODP_ALL	(IBV_ACCESS_ON_DEMAND | SV_ALL_ACCESS)

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

FIXTURE(odp) {
	struct sv_rc_pair p;
	struct ibv_mr *mr, *bmr;	/* a's ODP memory; b's buffer */
	char *mem, *bbuf;
};

FIXTURE_SETUP(odp)
{
	ASSERT_EQ(0, sv_rc_pair_open(&self->p, 64, 1));
	/* Never touched before the MR is used: every page comes on demand. */
	self->mem = mmap(NULL, MEMSZ, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
	self->bbuf = aligned_alloc(PG, BSZ);
	ASSERT_NE(NULL, self->bbuf);
	memset(self->bbuf, 0x22, BSZ);
	self->mr = ibv_reg_mr(self->p.pd, self->mem, MEMSZ, ODP_ALL);
	ASSERT_NE(NULL, self->mr);
	self->bmr = ibv_reg_mr(self->p.pd, self->bbuf, BSZ, SV_ALL_ACCESS);
	ASSERT_NE(NULL, self->bmr);
}

FIXTURE_TEARDOWN(odp)
{
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->bmr)
		ibv_dereg_mr(self->bmr);
	sv_rc_pair_close(&self->p);
	munmap(self->mem, MEMSZ);
	free(self->bbuf);
}

/*
 * b's RDMA op between its buffer at boff and a's memory at aoff; the
 * completion's status.
 */
static int b_rdma(FIXTURE_DATA(odp) *self, enum ibv_wr_opcode op,
		  size_t boff, size_t aoff, uint32_t len)
{
	static uint64_t id = 1000;

	if (post_send(self->p.b, op, self->bmr->lkey, self->bbuf + boff, len,
		      ++id, IBV_SEND_SIGNALED,
		      (uintptr_t)self->mem + aoff, self->mr->rkey))
		return -2;
	return sv_status_of(self->p.bcq, id, NULL);
}

/* b's atomic on a's word at aoff; the old value lands in b's buffer. */
static int b_atomic(FIXTURE_DATA(odp) *self, enum ibv_wr_opcode op,
		    size_t aoff, uint64_t add_cmp, uint64_t swap)
{
	struct ibv_sge sg = { (uintptr_t)self->bbuf, 8, self->bmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 77, .sg_list = &sg, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.atomic.remote_addr = (uintptr_t)self->mem + aoff;
	wr.wr.atomic.rkey = self->mr->rkey;
	wr.wr.atomic.compare_add = add_cmp;
	wr.wr.atomic.swap = swap;
	if (ibv_post_send(self->p.b, &wr, &bad))
		return -2;
	return sv_status_of(self->p.bcq, 77, NULL);
}


/* How many of the n pages from p are resident (mincore). */
static int resident(void *p, size_t n)
{
	unsigned char v[256];
	int r = 0;
	size_t i;

	if (n > sizeof(v) || mincore(p, n * PG, v))
		return -1;
	for (i = 0; i < n; i++)
		r += v[i] & 1;
	return r;
}

TEST_F(odp, caps)
{
	struct ibv_device_attr_ex ex = {};
	uint32_t all = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		       IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		       IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;

	ASSERT_EQ(0, ibv_query_device_ex(self->p.ctx, NULL, &ex));
	EXPECT_EQ(IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT,
		  ex.odp_caps.general_caps);
	EXPECT_EQ(all, ex.odp_caps.per_transport_caps.rc_odp_caps);
	EXPECT_EQ(all, ex.odp_caps.per_transport_caps.uc_odp_caps);
	EXPECT_EQ(all, ex.odp_caps.per_transport_caps.ud_odp_caps);
	EXPECT_EQ(all, ex.xrc_odp_caps);
}

/* Nothing pinned, nothing resident: the pages come when touched. */
TEST_F(odp, not_pinned)
{
	size_t len = 64UL << 20;
	long pin0 = sv_vm_pin_kb();
	struct ibv_mr *mr;
	char *big;

	big = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, big);
	mr = ibv_reg_mr(self->p.pd, big, len, ODP_ALL);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(pin0, sv_vm_pin_kb());
	EXPECT_EQ(0, resident(big, 16));
	EXPECT_EQ(0, resident(self->mem, 16));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	munmap(big, len);
}

TEST_F(odp, write_read_untouched)
{
	size_t aoff = PG + 100, len = 256 << 10;

	sv_fill(self->bbuf, len, 3);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE, 0, aoff,
					 len));
	EXPECT_EQ(0, memcmp(self->mem + aoff, self->bbuf, len));
	EXPECT_TRUE(sv_all_bytes(self->mem, aoff, 0));
	EXPECT_TRUE(sv_all_bytes(self->mem + aoff + len, PG, 0));
	/* Never touched by anyone: zeros, read through the device. */
	memset(self->bbuf + len, 0x22, 64 << 10);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_READ, len,
					 MEMSZ / 2, 64 << 10));
	EXPECT_TRUE(sv_all_bytes(self->bbuf + len, 64 << 10, 0));
	/* And what a wrote itself comes back. */
	sv_fill(self->mem + MEMSZ - PG, PG, 9);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_READ, 0,
					 MEMSZ - PG, PG));
	EXPECT_EQ(0, memcmp(self->bbuf, self->mem + MEMSZ - PG, PG));
}

TEST_F(odp, send_both_ways)
{
	uint32_t len = 200 << 10;
	struct ibv_wc wc;

	/* a receives into pages it never touched. */
	ASSERT_EQ(0, post_recv(self->p.a, self->mr, self->mem + 8, len, 1));
	sv_fill(self->bbuf, len, 5);
	ASSERT_EQ(0, post_send(self->p.b, IBV_WR_SEND, self->bmr->lkey,
			       self->bbuf, len, 2, IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, poll1(self->p.acq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(len, wc.byte_len);
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.bcq, 2, NULL));
	EXPECT_EQ(0, memcmp(self->mem + 8, self->bbuf, len));
	/* a sends from ODP pages, some of them never touched (zeros). */
	memset(self->bbuf, 0x22, BSZ);
	ASSERT_EQ(0, post_recv(self->p.b, self->bmr, self->bbuf, BSZ, 3));
	ASSERT_EQ(0, post_send(self->p.a, IBV_WR_SEND, self->mr->lkey,
			       self->mem + 8, 2 * len, 4, IBV_SEND_SIGNALED,
			       0, 0));
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.acq, 4, NULL));
	ASSERT_EQ(1, poll1(self->p.bcq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(2 * len, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->bbuf, self->mem + 8, 2 * len));
	EXPECT_TRUE(sv_all_bytes(self->bbuf + len, len, 0));
}

TEST_F(odp, atomics)
{
	uint64_t *w = (uint64_t *)(self->mem + 3 * PG + 64);
	uint64_t old;

	ASSERT_EQ(IBV_WC_SUCCESS, b_atomic(self, IBV_WR_ATOMIC_FETCH_AND_ADD,
					   3 * PG + 64, 5, 0));
	memcpy(&old, self->bbuf, 8);
	EXPECT_EQ(0, old);
	EXPECT_EQ(5, *w);
	ASSERT_EQ(IBV_WC_SUCCESS, b_atomic(self, IBV_WR_ATOMIC_CMP_AND_SWP,
					   3 * PG + 64, 5, 0x1234));
	memcpy(&old, self->bbuf, 8);
	EXPECT_EQ(5, old);
	EXPECT_EQ(0x1234, *w);
	/* An untouched page's word, compared and not swapped. */
	ASSERT_EQ(IBV_WC_SUCCESS, b_atomic(self, IBV_WR_ATOMIC_CMP_AND_SWP,
					   7 * PG, 1, 2));
	memcpy(&old, self->bbuf, 8);
	EXPECT_EQ(0, old);
	EXPECT_EQ(0, *(uint64_t *)(self->mem + 7 * PG));
}

/* A remapped range: the new pages are read and written, not the old. */
TEST_F(odp, remap_follows)
{
	size_t len = 64 << 10;
	char *p;

	sv_fill(self->bbuf, len, 1);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE, 0, 0, len));
	ASSERT_EQ(0, memcmp(self->mem, self->bbuf, len));
	p = mmap(self->mem, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(self->mem, p);
	memset(p, 0x5a, len);
	memset(self->bbuf, 0, len);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_READ, 0, 0, len));
	EXPECT_TRUE(sv_all_bytes(self->bbuf, len, 0x5a));
	sv_fill(self->bbuf, len, 2);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE, 0, 0, len));
	EXPECT_EQ(0, memcmp(self->mem, self->bbuf, len));
}

/* Another mapping moved onto the MR's range with mremap(). */
TEST_F(odp, mremap_follows)
{
	size_t len = 64 << 10;
	char *x, *p;

	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_READ, 0, 0, len));
	x = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, x);
	memset(x, 0x77, len);
	p = mremap(x, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, self->mem);
	ASSERT_EQ(self->mem, p);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_READ, 0, 0, len));
	EXPECT_TRUE(sv_all_bytes(self->bbuf, len, 0x77));
}

TEST_F(odp, unmapped_remote)
{
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE, 0,
					 128 << 10, PG));
	ASSERT_EQ(0, munmap(self->mem + (128 << 10), 64 << 10));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_WRITE, 0, 128 << 10, PG));
	/* Nothing around it was written. */
	EXPECT_TRUE(sv_all_bytes(self->mem + (192 << 10), 64 << 10, 0));
}

TEST_F(odp, unmapped_remote_read)
{
	ASSERT_EQ(0, munmap(self->mem + PG, PG));
	/* The read crosses into the hole from a mapped page. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_READ, 0, 100, PG));
}

/* a's own source is unmapped: a's error; b's receive WQE stays. */
TEST_F(odp, unmapped_local_send)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, post_recv(self->p.b, self->bmr, self->bbuf, BSZ, 1));
	ASSERT_EQ(0, munmap(self->mem + 2 * PG, PG));
	ASSERT_EQ(0, post_send(self->p.a, IBV_WR_SEND, self->mr->lkey,
			       self->mem, 4 * PG, 2, IBV_SEND_SIGNALED, 0, 0));
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, sv_status_of(self->p.acq, 2, NULL));
	usleep(100000);
	EXPECT_EQ(0, ibv_poll_cq(self->p.bcq, 1, &wc));
}

TEST_F(odp, unmapped_local_write)
{
	ASSERT_EQ(0, munmap(self->mem, PG));
	ASSERT_EQ(0, post_send(self->p.a, IBV_WR_RDMA_WRITE, self->mr->lkey,
			       self->mem, PG, 3, IBV_SEND_SIGNALED,
			       (uintptr_t)self->bbuf, self->bmr->rkey));
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, sv_status_of(self->p.acq, 3, NULL));
	EXPECT_TRUE(sv_all_bytes(self->bbuf, PG, 0x22));
}

TEST_F(odp, readonly_range)
{
	memset(self->mem, 0x31, PG);
	ASSERT_EQ(0, mprotect(self->mem, PG, PROT_READ));
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_READ, 0, 0, PG));
	EXPECT_TRUE(sv_all_bytes(self->bbuf, PG, 0x31));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_WRITE, 0, 0, 8));
	EXPECT_TRUE(sv_all_bytes(self->mem, PG, 0x31));
}

/* After fork the parent's pages are COW: a write lands in the parent's. */
TEST_F(odp, fork_cow)
{
	int go[2], back[2], status;
	char seen = 0;
	pid_t pid;

	memset(self->mem, 0x41, PG);
	/* Page 0 in the cache, writable, before the fork. */
	memset(self->bbuf, 0x41, 8);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE, 0, 8, 8));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(back));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char c;

		if (read(go[0], &c, 1) != 1)
			_exit(1);
		c = self->mem[0];
		_exit(write(back[1], &c, 1) == 1 ? 0 : 2);
	}
	memset(self->bbuf, 0x42, PG);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE, 0, 0, PG));
	EXPECT_TRUE(sv_all_bytes(self->mem, PG, 0x42));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(1, read(back[0], &seen, 1));
	EXPECT_EQ(0x41, seen);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
}

static uint64_t pfn_of(void *p)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, 8, (uintptr_t)p / PG * 8) != 8)
		e = 0;
	close(fd);
	return e & ((1ULL << 55) - 1);
}

/* MADV_COLLAPSE copies the pages into a huge page: the data follows. */
TEST_F(odp, collapse_moves)
{
	size_t huge = 2UL << 20;
	struct ibv_mr *mr;
	char *raw, *p;
	uint64_t pfn;

	raw = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	p = (char *)(((uintptr_t)raw + huge - 1) & ~(huge - 1));
	/* Small pages first (without THP this fails, and so will COLLAPSE). */
	madvise(p, huge, MADV_NOHUGEPAGE);
	memset(p, 0x61, huge);
	mr = ibv_reg_mr(self->p.pd, p, huge, ODP_ALL);
	ASSERT_NE(NULL, mr);
	/* The first 16 pages are in the cache. */
	ASSERT_EQ(0, post_send(self->p.b, IBV_WR_RDMA_READ, self->bmr->lkey,
			       self->bbuf, 16 * PG, 5, IBV_SEND_SIGNALED,
			       (uintptr_t)p, mr->rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.bcq, 5, NULL));
	pfn = pfn_of(p);
	ASSERT_NE(0, pfn);
	madvise(p, huge, MADV_HUGEPAGE);
	if (madvise(p, huge, MADV_COLLAPSE)) {
		ibv_dereg_mr(mr);
		munmap(raw, 2 * huge);
		SKIP(return, "MADV_COLLAPSE: %s", strerror(errno));
	}
	EXPECT_NE(pfn, pfn_of(p));
	memset(self->bbuf, 0, PG);
	ASSERT_EQ(0, post_send(self->p.b, IBV_WR_RDMA_READ, self->bmr->lkey,
			       self->bbuf, PG, 6, IBV_SEND_SIGNALED,
			       (uintptr_t)p, mr->rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.bcq, 6, NULL));
	EXPECT_TRUE(sv_all_bytes(self->bbuf, PG, 0x61));
	memset(self->bbuf, 0x62, PG);
	ASSERT_EQ(0, post_send(self->p.b, IBV_WR_RDMA_WRITE, self->bmr->lkey,
			       self->bbuf, PG, 7, IBV_SEND_SIGNALED,
			       (uintptr_t)p + PG, mr->rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.bcq, 7, NULL));
	EXPECT_TRUE(sv_all_bytes(p + PG, PG, 0x62));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	munmap(raw, 2 * huge);
}

/*
 * Under traffic: a thread replaces pages 0 and 1 of a's memory with fresh
 * ones, page 0 holding generation g (mremap over them: never unmapped in
 * between), with a seqlock around the swap. A read of page 0 posted after
 * generation g was published must see g or newer; a write to page 1
 * must be in the page the process has if the sequence was the same and
 * even from before its post to after the process looked.
 */
struct churn {
	char *target;
	volatile uint32_t seq;		/* odd while a swap is under way */
	volatile uint32_t gen;
	volatile int stop;
	int swaps;
};

static void *churn_fn(void *arg)
{
	struct churn *c = arg;
	char *x, *p;

	while (!c->stop) {
		x = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (x == MAP_FAILED)
			break;
		memset(x, (char)(c->gen + 1), PG);
		memset(x + PG, 0, PG);
		__atomic_add_fetch(&c->seq, 1, __ATOMIC_SEQ_CST);
		p = mremap(x, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
			   c->target);
		c->gen++;
		__atomic_add_fetch(&c->seq, 1, __ATOMIC_SEQ_CST);
		if (p != c->target)
			break;
		c->swaps++;
		usleep(200);
	}
	return NULL;
}

TEST_F(odp, churn_under_traffic)
{
	struct churn c = { .target = self->mem };
	int i, stale = 0, lost = 0, checked = 0;
	struct timespec t0, now;
	uint32_t g0, s0, s1;
	pthread_t t;
	bool ok;

	memset(self->mem, 0, 2 * PG);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, pthread_create(&t, NULL, churn_fn, &c));
	/* At least 1000 ops and 40 swaps (a loaded guest swaps slowly). */
	for (i = 0; i < 1000 || c.swaps < 40; i++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > 60 * sv_slow())
			break;
		if (i % 2) {
			g0 = c.gen;
			ASSERT_EQ(IBV_WC_SUCCESS,
				  b_rdma(self, IBV_WR_RDMA_READ, 0, 0, PG));
			/* One page: one generation, and not an older one. */
			if (!sv_all_bytes(self->bbuf, PG, self->bbuf[0]) ||
			    (uint8_t)(self->bbuf[0] - (char)g0) > 128)
				stale++;
			continue;
		}
		s0 = __atomic_load_n(&c.seq, __ATOMIC_SEQ_CST);
		memset(self->bbuf, (char)(0x80 | i), PG);
		ASSERT_EQ(IBV_WC_SUCCESS,
			  b_rdma(self, IBV_WR_RDMA_WRITE, 0, PG, PG));
		ok = sv_all_bytes(self->mem + PG, PG, (char)(0x80 | i));
		/* No swap from the post to the look at the page. */
		s1 = __atomic_load_n(&c.seq, __ATOMIC_SEQ_CST);
		if (s0 == s1 && !(s0 & 1)) {
			checked++;
			lost += !ok;
		}
	}
	c.stop = 1;
	pthread_join(t, NULL);
	TH_LOG("%d swaps, %d writes checked", c.swaps, checked);
	EXPECT_LE(40, c.swaps);
	EXPECT_LT(20, checked);
	EXPECT_EQ(0, stale);
	EXPECT_EQ(0, lost);
}

/* Implicit ODP: all of a's address space through one key. */
TEST_F(odp, implicit)
{
	struct ibv_mr *imr;
	char *heap = malloc(3 * PG);
	char stackbuf[512];
	struct ibv_wc wc;

	ASSERT_NE(NULL, heap);
	imr = ibv_reg_mr(self->p.pd, NULL, SIZE_MAX, ODP_ALL);
	ASSERT_NE(NULL, imr);
	sv_fill(self->bbuf, 3 * PG, 8);
	ASSERT_EQ(0, post_send(self->p.b, IBV_WR_RDMA_WRITE, self->bmr->lkey,
			       self->bbuf, 3 * PG, 1, IBV_SEND_SIGNALED,
			       (uintptr_t)heap, imr->rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.bcq, 1, NULL));
	EXPECT_EQ(0, memcmp(heap, self->bbuf, 3 * PG));
	/* a sends from its stack through the same key. */
	sv_fill(stackbuf, sizeof(stackbuf), 4);
	ASSERT_EQ(0, post_recv(self->p.b, self->bmr, self->bbuf, BSZ, 2));
	ASSERT_EQ(0, post_send(self->p.a, IBV_WR_SEND, imr->lkey, stackbuf,
			       sizeof(stackbuf), 3, IBV_SEND_SIGNALED, 0, 0));
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(self->p.acq, 3, NULL));
	ASSERT_EQ(1, poll1(self->p.bcq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(self->bbuf, stackbuf, sizeof(stackbuf)));
	/* Rereg of an implicit MR: only its PD may change. */
	EXPECT_EQ(IBV_REREG_MR_ERR_CMD,
		  ibv_rereg_mr(imr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			       IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(0, ibv_rereg_mr(imr, IBV_REREG_MR_CHANGE_PD, self->p.pd,
				  NULL, 0, 0));
	/* Address 0 is not mapped: b's access fails. */
	ASSERT_EQ(0, post_send(self->p.b, IBV_WR_RDMA_WRITE, self->bmr->lkey,
			       self->bbuf, 8, 4, IBV_SEND_SIGNALED, 4096,
			       imr->rkey));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, sv_status_of(self->p.bcq, 4, NULL));
	EXPECT_EQ(0, ibv_dereg_mr(imr));
	free(heap);
	/* Implicit needs ON_DEMAND; and it is not zero-based. */
	EXPECT_EQ(NULL, ibv_reg_mr(self->p.pd, NULL, SIZE_MAX,
				   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_reg_mr_iova2(self->p.pd, NULL, SIZE_MAX, 0,
					 IBV_ACCESS_ON_DEMAND |
					 IBV_ACCESS_ZERO_BASED));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(odp, advise_prefetch)
{
	struct ibv_sge sg = { (uintptr_t)self->mem, 8 * PG, self->mr->lkey };

	EXPECT_EQ(0, resident(self->mem, 16));
	/* NO_FAULT: only what is mapped already; nothing here. */
	EXPECT_EQ(0, ibv_advise_mr(self->p.pd,
				   IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
				   IBV_ADVISE_MR_FLAG_FLUSH, &sg, 1));
	EXPECT_EQ(0, resident(self->mem, 16));
	EXPECT_EQ(0, ibv_advise_mr(self->p.pd,
				   IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				   IBV_ADVISE_MR_FLAG_FLUSH, &sg, 1));
	EXPECT_EQ(8, resident(self->mem, 16));
	/* Without FLUSH too (done before the call returns here). */
	sg.addr = (uintptr_t)self->mem + 8 * PG;
	sg.length = 4 * PG;
	EXPECT_EQ(0, ibv_advise_mr(self->p.pd,
				   IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0,
				   &sg, 1));
	EXPECT_EQ(12, resident(self->mem, 16));
	/* And the data path uses them. */
	memset(self->mem, 0x13, PG);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_READ, 0, 0, PG));
	EXPECT_TRUE(sv_all_bytes(self->bbuf, PG, 0x13));
}

TEST_F(odp, advise_errors)
{
	struct ibv_sge sg = { (uintptr_t)self->mem, PG, self->mr->lkey };
	struct ibv_pd *pd2 = ibv_alloc_pd(self->p.ctx);
	struct ibv_mr *ro, *other;
	enum ibv_advise_mr_advice pw = IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	uint32_t fl = IBV_ADVISE_MR_FLAG_FLUSH;

	ASSERT_NE(NULL, pd2);
	EXPECT_EQ(EOPNOTSUPP, ibv_advise_mr(self->p.pd, 3, fl, &sg, 1));
	EXPECT_EQ(EINVAL, ibv_advise_mr(self->p.pd, pw, 2, &sg, 1));
	EXPECT_EQ(EINVAL, ibv_advise_mr(self->p.pd, pw, fl, &sg, 0));
	/* An unknown key; a range outside the MR. */
	sg.lkey = self->mr->lkey ^ 0x80;
	EXPECT_EQ(EFAULT, ibv_advise_mr(self->p.pd, pw, fl, &sg, 1));
	sg.lkey = self->mr->lkey;
	sg.addr = (uintptr_t)self->mem + MEMSZ - 8;
	EXPECT_EQ(EFAULT, ibv_advise_mr(self->p.pd, pw, fl, &sg, 1));
	/* A pinned MR: not ODP. */
	sg.addr = (uintptr_t)self->bbuf;
	sg.lkey = self->bmr->lkey;
	EXPECT_EQ(ENOENT, ibv_advise_mr(self->p.pd, pw, fl, &sg, 1));
	/* Another PD's; a read-only one for writing. */
	other = ibv_reg_mr(pd2, self->mem, MEMSZ, ODP_ALL);
	ro = ibv_reg_mr(self->p.pd, self->mem, MEMSZ, IBV_ACCESS_ON_DEMAND);
	ASSERT_NE(NULL, other);
	ASSERT_NE(NULL, ro);
	sg.addr = (uintptr_t)self->mem;
	sg.lkey = other->lkey;
	EXPECT_EQ(EPERM, ibv_advise_mr(self->p.pd, pw, fl, &sg, 1));
	sg.lkey = ro->lkey;
	EXPECT_EQ(EPERM, ibv_advise_mr(self->p.pd, pw, fl, &sg, 1));
	EXPECT_EQ(0, ibv_advise_mr(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				   fl, &sg, 1));
	/* Unmapped pages: EFAULT with FLUSH, a hint without. */
	ASSERT_EQ(0, munmap(self->mem + PG, PG));
	sg.addr = (uintptr_t)self->mem + PG;
	sg.lkey = self->mr->lkey;
	EXPECT_EQ(EFAULT, ibv_advise_mr(self->p.pd, pw, fl, &sg, 1));
	EXPECT_EQ(0, ibv_advise_mr(self->p.pd, pw, 0, &sg, 1));
	EXPECT_EQ(0, ibv_dereg_mr(ro));
	EXPECT_EQ(0, ibv_dereg_mr(other));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
}

/* Rereg between pinned and on-demand: VmPin follows, the data path too. */
TEST_F(odp, rereg_pin_odp)
{
	long pin0 = sv_vm_pin_kb();

	ASSERT_EQ(0, ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
				  NULL, 0, IBV_ACCESS_LOCAL_WRITE |
				  ALL_REMOTE));
	EXPECT_EQ(pin0 + (long)(MEMSZ >> 10), sv_vm_pin_kb());
	sv_fill(self->bbuf, PG, 6);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE, 0, 0, PG));
	EXPECT_EQ(0, memcmp(self->mem, self->bbuf, PG));
	ASSERT_EQ(0, ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
				  NULL, 0, ODP_ALL));
	EXPECT_EQ(pin0, sv_vm_pin_kb());
	sv_fill(self->bbuf, PG, 7);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE, 0, PG, PG));
	EXPECT_EQ(0, memcmp(self->mem + PG, self->bbuf, PG));
}

TEST_HARNESS_MAIN
