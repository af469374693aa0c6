// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions: access flags, ranges, pinning (VmPin), RLIMIT_MEMLOCK,
 * iova, rereg, keys, and cleanup when the file or the process goes.
 */
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/userfaultfd.h>

#include "sv_harness.h"
#include "sv_test.h"

#define PG		4096UL
#define LW		SV_ACCESS_LOCAL_WRITE
#define RW		SV_ACCESS_REMOTE_WRITE
#define RR		SV_ACCESS_REMOTE_READ
#define RA		SV_ACCESS_REMOTE_ATOMIC

/* The running kernel is at least major.minor. */
static int kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return 0;
	return ma > major || (ma == major && mi >= minor);
}

static int reg_iova(int fd, __u32 pd, const void *addr, __u64 len,
		    __u64 iova, __u32 access, __u32 *mr, __u32 *key)
{
	struct sv_reg_mr c = {
		.size = sizeof(c), .pd_handle = pd,
		.addr = (__u64)(uintptr_t)addr, .length = len,
		.iova = iova, .access = access,
	};

	*mr = 0;
	*key = 0;
	if (ioctl(fd, SV_IOC_REG_MR, &c))
		return -errno;
	*mr = c.mr_handle;
	*key = c.lkey;
	return c.lkey == c.rkey ? 0 : -EPROTO;
}

/* rereg; *key gets the new lkey (== rkey). */
static int rereg(int fd, __u32 mr, __u32 flags, __u32 pd, const void *addr,
		 __u64 len, __u32 access, __u32 *key)
{
	struct sv_rereg_mr c = {
		.size = sizeof(c), .mr_handle = mr, .flags = flags,
		.pd_handle = pd, .addr = (__u64)(uintptr_t)addr,
		.length = len, .iova = (__u64)(uintptr_t)addr,
		.access = access,
	};

	if (ioctl(fd, SV_IOC_REREG_MR, &c))
		return -errno;
	if (key)
		*key = c.lkey;
	return c.lkey == c.rkey ? 0 : -EPROTO;
}

FIXTURE(mr) {
	int fd;
	__u32 pd;
	char *buf;		/* 16 pages, read-write, populated */
	long pin;		/* VmPin at setup */
};

FIXTURE_SETUP(mr)
{
	self->fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", SV_DEV0, strerror(errno));
	ASSERT_EQ(0, svt_alloc_pd(self->fd, &self->pd));
	self->buf = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	self->pin = sv_vm_pin_kb();
	ASSERT_LE(0, self->pin);
}

FIXTURE_TEARDOWN(mr)
{
	close(self->fd);
	munmap(self->buf, 16 * PG);
	EXPECT_EQ(0, sv_obj_count("mr"));
	EXPECT_EQ(0, sv_obj_count("pd"));
}

static int access_valid(__u32 a)
{
	return !((a & (RW | RA)) && !(a & LW));
}

TEST_F(mr, every_access_combination)
{
	static const __u32 bits[] = {
		LW, RW, RR, RA, SV_ACCESS_MW_BIND, SV_ACCESS_ZERO_BASED,
		SV_ACCESS_HUGETLB, SV_ACCESS_RELAXED_ORDERING, 1U << 29,
	};
	unsigned int combo, i, n = sizeof(bits) / sizeof(bits[0]);

	for (combo = 0; combo < 1U << n; combo++) {
		__u32 access = 0, mr, key;
		int ret;

		for (i = 0; i < n; i++)
			if (combo & (1U << i))
				access |= bits[i];
		ret = svt_reg_mr(self->fd, self->pd, self->buf, PG, access,
				 &mr, &key);
		if (!access_valid(access)) {
			ASSERT_EQ(-EINVAL, ret) TH_LOG("access %#x", access);
			continue;
		}
		ASSERT_EQ(0, ret) TH_LOG("access %#x", access);
		EXPECT_NE(0, key);
		ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	}
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
}

/* On-demand paging pins nothing (odp_test has its data path). */
TEST_F(mr, on_demand_pins_nothing)
{
	__u32 mr, mr2, bad, key;

	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf, 16 * PG,
				SV_ACCESS_ON_DEMAND, &mr, &key));
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf, PG,
				SV_ACCESS_ON_DEMAND | LW | RW, &mr2, &key));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
	EXPECT_EQ(2, sv_obj_count("mr"));
	/* The access rules are the same. */
	EXPECT_EQ(-EINVAL, svt_reg_mr(self->fd, self->pd, self->buf, PG,
				      SV_ACCESS_ON_DEMAND | RW, &bad, &key));
	/* Only ON_DEMAND makes addr 0, length U64_MAX an MR (implicit). */
	EXPECT_EQ(-EINVAL, svt_reg_mr(self->fd, self->pd, NULL, ~0ULL, LW,
				      &bad, &key));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr2));
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, NULL, ~0ULL,
				SV_ACCESS_ON_DEMAND | LW, &mr2, &key));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr2));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	EXPECT_EQ(0, sv_obj_count("mr"));
}

TEST_F(mr, unknown_access_einval)
{
	__u32 mr, key;
	int bit;

	/* Bits 8 and 9 are the flush rights (flush_test) */
	for (bit = 10; bit < 32; bit++) {
		if (bit >= 20 && bit <= 29)	/* optional range: hints */
			continue;
		EXPECT_EQ(-EINVAL, svt_reg_mr(self->fd, self->pd, self->buf,
					      PG, LW | 1U << bit, &mr, &key))
			TH_LOG("bit %d", bit);
	}
	EXPECT_EQ(0, sv_obj_count("mr"));
}

TEST_F(mr, bad_ranges_einval)
{
	__u32 mr, key;

	EXPECT_EQ(-EINVAL, svt_reg_mr(self->fd, self->pd, self->buf, 0, LW,
				      &mr, &key));
	/* addr + length wraps, or its page end does. */
	EXPECT_EQ(-EINVAL, svt_reg_mr(self->fd, self->pd,
				      (void *)(uintptr_t)(UINT64_MAX - PG + 1),
				      2 * PG, 0, &mr, &key));
	EXPECT_EQ(-EINVAL, svt_reg_mr(self->fd, self->pd,
				      (void *)(uintptr_t)(UINT64_MAX - 10),
				      5, 0, &mr, &key));
	EXPECT_EQ(-EINVAL, svt_reg_mr(self->fd, self->pd, self->buf,
				      UINT64_MAX, 0, &mr, &key));
	/* Longer than max_mr_size (1 TiB). */
	EXPECT_EQ(-EINVAL, svt_reg_mr(self->fd, self->pd, self->buf,
				      (1ULL << 40) + 1, 0, &mr, &key));
	/* iova + length wraps (unless zero based). */
	EXPECT_EQ(-EINVAL, reg_iova(self->fd, self->pd, self->buf, 2 * PG,
				    UINT64_MAX - PG, 0, &mr, &key));
	ASSERT_EQ(0, reg_iova(self->fd, self->pd, self->buf, 2 * PG,
			      UINT64_MAX - PG, SV_ACCESS_ZERO_BASED, &mr, &key));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	EXPECT_EQ(0, sv_obj_count("mr"));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
}

TEST_F(mr, unmapped_efault)
{
	char *p = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	__u32 mr, key;

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, munmap(p + PG, PG));
	EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, p, 3 * PG, LW,
				      &mr, &key));
	EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, p, 3 * PG, 0,
				      &mr, &key));
	EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, p + PG, 1, 0,
				      &mr, &key));
	/* The mapped ends alone are fine. */
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, p, PG, LW, &mr, &key));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	ASSERT_EQ(0, mprotect(p, PG, PROT_NONE));
	EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, p, PG, LW,
				      &mr, &key));
	/*
	 * Read-only: before 6.2 the RDMA core pins with FOLL_WRITE |
	 * FOLL_FORCE, which takes a private PROT_NONE page (a COW copy);
	 * since 6.2 it pins read-only, which does not.
	 */
	if (kernel_at_least(6, 2)) {
		EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, p, PG, 0,
					      &mr, &key));
	} else {
		ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, p, PG, 0,
					&mr, &key));
		ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	}
	EXPECT_EQ(0, sv_obj_count("mr"));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
	munmap(p, PG);
	munmap(p + 2 * PG, PG);
}

TEST_F(mr, unaligned_start_odd_length)
{
	__u32 mr, key, mr2, key2;

	/* [buf+5, buf+2*PG+8): 3 pages pinned. */
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf + 5, 2 * PG + 3,
				LW | RW | RR, &mr, &key));
	EXPECT_NE(0, key);
	EXPECT_EQ(self->pin + 12, sv_vm_pin_kb());
	/* One byte at the end of a page. */
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf + PG - 1, 1, 0,
				&mr2, &key2));
	EXPECT_NE(key, key2);
	EXPECT_EQ(self->pin + 16, sv_vm_pin_kb());
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr2));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
}

TEST_F(mr, read_only_mapping)
{
	char *ro = mmap(NULL, 2 * PG, PROT_READ,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	__u32 mr, key;

	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, ro, 2 * PG, LW,
				      &mr, &key));
	EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, ro, 2 * PG,
				      LW | RW | RR, &mr, &key));
	/* MW_BIND counts as a write access, as in the RDMA core. */
	EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, ro, 2 * PG,
				      SV_ACCESS_MW_BIND, &mr, &key));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, ro, 2 * PG, RR,
				&mr, &key));
	EXPECT_EQ(self->pin + 8, sv_vm_pin_kb());
	/* Adding write access re-pins for writing: EFAULT, MR unchanged. */
	EXPECT_EQ(-EFAULT, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS, 0,
				 NULL, 0, LW | RR, NULL));
	EXPECT_EQ(self->pin + 8, sv_vm_pin_kb());
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
	munmap(ro, 2 * PG);
}

TEST_F(mr, iova)
{
	__u32 mr, key;

	ASSERT_EQ(0, reg_iova(self->fd, self->pd, self->buf + 100, PG,
			      0x123456789000ULL, LW | RR, &mr, &key));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	/* Any iova: the page offset need not match addr's. */
	ASSERT_EQ(0, reg_iova(self->fd, self->pd, self->buf + 100, PG,
			      0x7, LW, &mr, &key));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	ASSERT_EQ(0, reg_iova(self->fd, self->pd, self->buf, PG, 0, LW,
			      &mr, &key));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
}

TEST_F(mr, handles)
{
	struct sv_reg_mr c = { .size = SV_REG_MR_SIZE_VER0 - 1 };
	__u32 mr, mr2, key;

	EXPECT_EQ(-ENOENT, svt_dereg_mr(self->fd, 0));
	EXPECT_EQ(-ENOENT, svt_dereg_mr(self->fd, 999999));
	EXPECT_EQ(-ENOENT, svt_reg_mr(self->fd, 999999, self->buf, PG, 0,
				      &mr, &key));
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf, PG, 0,
				&mr, &key));
	/* An MR handle where a PD is expected. */
	EXPECT_EQ(-EINVAL, svt_reg_mr(self->fd, mr, self->buf, PG, 0,
				      &mr2, &key));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	EXPECT_EQ(-ENOENT, svt_dereg_mr(self->fd, mr));
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_REG_MR, &c));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(mr, keys_unique)
{
	enum { N = 300 };
	static __u32 mrs[2 * N], keys[2 * N];	/* [0, N): fd, [N, 2N): fd2 */
	int fd2 = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	__u32 pd2;
	int i, j;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, svt_alloc_pd(fd2, &pd2));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf, PG, LW,
					&mrs[i], &keys[i]));
		ASSERT_EQ(0, svt_reg_mr(fd2, pd2, self->buf, PG, LW,
					&mrs[N + i], &keys[N + i]));
	}
	for (i = 0; i < 2 * N; i++) {
		EXPECT_NE(0, keys[i]);
		for (j = 0; j < i; j++)
			ASSERT_NE(keys[j], keys[i]);
	}
	/* Free half, register again: still unique. */
	for (i = 0; i < N; i += 2)
		ASSERT_EQ(0, svt_dereg_mr(self->fd, mrs[i]));
	for (i = 0; i < N; i += 2)
		ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf, PG, LW,
					&mrs[i], &keys[i]));
	for (i = 0; i < 2 * N; i++)
		for (j = 0; j < i; j++)
			ASSERT_NE(keys[j], keys[i]);
	EXPECT_EQ(2 * N, sv_obj_count("mr"));
	EXPECT_EQ(self->pin + 2 * N * 4, sv_vm_pin_kb());
	ASSERT_EQ(0, close(fd2));
	EXPECT_EQ(N, sv_obj_count("mr"));
	EXPECT_EQ(self->pin + N * 4, sv_vm_pin_kb());
}

TEST_F(mr, large_in_chunks)
{
	size_t len = 32UL << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	__u32 mr, key;

	ASSERT_NE(MAP_FAILED, p);
	/* Not populated: pinning for write faults the pages in. */
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, p + 1, len - 2,
				LW | RW, &mr, &key));
	EXPECT_EQ(self->pin + (long)(len >> 10), sv_vm_pin_kb());
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
	munmap(p, len);
}

TEST_F(mr, rereg_access)
{
	__u32 mr, key, key2, key3;

	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf, 2 * PG, RR,
				&mr, &key));
	ASSERT_EQ(0, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS, 0, NULL,
			   0, LW | RW | RA, &key2));
	/* The keys stay: peers keep the rkey they were given. */
	EXPECT_EQ(key, key2);
	EXPECT_EQ(self->pin + 8, sv_vm_pin_kb());
	EXPECT_EQ(-EINVAL, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS, 0,
				 NULL, 0, RW, NULL));
	EXPECT_EQ(-EINVAL, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS, 0,
				 NULL, 0, LW | 1U << 12, NULL));
	/* To on-demand paging and back: unpinned, then pinned again. */
	ASSERT_EQ(0, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS, 0, NULL,
			   0, SV_ACCESS_ON_DEMAND, &key3));
	EXPECT_EQ(key2, key3);
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
	ASSERT_EQ(0, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS, 0, NULL,
			   0, 0, &key3));
	EXPECT_EQ(key2, key3);
	EXPECT_EQ(self->pin + 8, sv_vm_pin_kb());
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
}

TEST_F(mr, rereg_translation)
{
	char *p = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	__u32 mr, key, key2;

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf, PG, LW,
				&mr, &key));
	ASSERT_EQ(0, rereg(self->fd, mr, SV_REREG_MR_CHANGE_TRANSLATION, 0,
			   self->buf + 10, 4 * PG, 0, &key2));
	EXPECT_EQ(key, key2);
	EXPECT_EQ(self->pin + 20, sv_vm_pin_kb());
	/* Errors leave the MR as it was. */
	EXPECT_EQ(-EINVAL, rereg(self->fd, mr, SV_REREG_MR_CHANGE_TRANSLATION,
				 0, self->buf, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, rereg(self->fd, mr, SV_REREG_MR_CHANGE_TRANSLATION,
				 0, (void *)(uintptr_t)(UINT64_MAX - 10), 100,
				 0, NULL));
	ASSERT_EQ(0, munmap(p + PG, PG));
	EXPECT_EQ(-EFAULT, rereg(self->fd, mr, SV_REREG_MR_CHANGE_TRANSLATION,
				 0, p, 3 * PG, 0, NULL));
	EXPECT_EQ(self->pin + 20, sv_vm_pin_kb());
	/* Translation and access at once. */
	ASSERT_EQ(0, rereg(self->fd, mr, SV_REREG_MR_CHANGE_TRANSLATION |
			   SV_REREG_MR_CHANGE_ACCESS, 0, p, PG, RR, &key2));
	EXPECT_EQ(key, key2);
	EXPECT_EQ(self->pin + 4, sv_vm_pin_kb());
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
	munmap(p, PG);
	munmap(p + 2 * PG, PG);
}

TEST_F(mr, rereg_pd)
{
	__u32 pd2, mr, key, key2;

	ASSERT_EQ(0, svt_alloc_pd(self->fd, &pd2));
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf, PG, LW,
				&mr, &key));
	EXPECT_EQ(-EBUSY, svt_dealloc_pd(self->fd, self->pd));
	EXPECT_EQ(-ENOENT, rereg(self->fd, mr, SV_REREG_MR_CHANGE_PD, 77777,
				 NULL, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, rereg(self->fd, mr, SV_REREG_MR_CHANGE_PD, mr,
				 NULL, 0, 0, NULL));
	ASSERT_EQ(0, rereg(self->fd, mr, SV_REREG_MR_CHANGE_PD, pd2, NULL, 0,
			   0, &key2));
	EXPECT_EQ(key, key2);
	/* The MR moved: the old PD is free, the new one busy. */
	EXPECT_EQ(-EBUSY, svt_dealloc_pd(self->fd, pd2));
	ASSERT_EQ(0, svt_dealloc_pd(self->fd, self->pd));
	ASSERT_EQ(0, rereg(self->fd, mr, SV_REREG_MR_CHANGE_PD, pd2, NULL, 0,
			   0, NULL));
	EXPECT_EQ(-EBUSY, svt_dealloc_pd(self->fd, pd2));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	ASSERT_EQ(0, svt_dealloc_pd(self->fd, pd2));
}

TEST_F(mr, rereg_bad_input)
{
	struct sv_rereg_mr c = { .size = sizeof(c) };
	__u32 mr, key;

	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf, PG, LW,
				&mr, &key));
	EXPECT_EQ(-EINVAL, rereg(self->fd, mr, 0, 0, NULL, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, rereg(self->fd, mr, 1U << 3, 0, NULL, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, rereg(self->fd, mr, 1U << 31 |
				 SV_REREG_MR_CHANGE_ACCESS, 0, NULL, 0, 0,
				 NULL));
	/* Fields no flag selects must be zero. */
	EXPECT_EQ(-EINVAL, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS,
				 self->pd, NULL, 0, LW, NULL));
	EXPECT_EQ(-EINVAL, rereg(self->fd, mr, SV_REREG_MR_CHANGE_PD,
				 self->pd, NULL, 0, LW, NULL));
	EXPECT_EQ(-EINVAL, rereg(self->fd, mr, SV_REREG_MR_CHANGE_PD,
				 self->pd, self->buf, PG, 0, NULL));
	c.mr_handle = mr;
	c.flags = SV_REREG_MR_CHANGE_ACCESS;
	c.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_REREG_MR, &c));
	EXPECT_EQ(EINVAL, errno);
	c.reserved = 0;
	c.size = SV_REREG_MR_SIZE_VER0 - 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_REREG_MR, &c));
	EXPECT_EQ(EINVAL, errno);
	/* Unknown and wrong-type handles. */
	EXPECT_EQ(-ENOENT, rereg(self->fd, 31337, SV_REREG_MR_CHANGE_ACCESS,
				 0, NULL, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, rereg(self->fd, self->pd,
				 SV_REREG_MR_CHANGE_ACCESS, 0, NULL, 0, 0,
				 NULL));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	EXPECT_EQ(-ENOENT, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS, 0,
				 NULL, 0, 0, NULL));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
}

/*
 * RLIMIT_MEMLOCK, in a child that is no longer root (no CAP_IPC_LOCK):
 * 8 pages allowed. Exit code: 0, or the number of the failed step.
 */
static int memlock_child(void)
{
	struct rlimit rl = { 8 * PG, 8 * PG };
	__u32 pd, mr1, mr2, mr3, key;
	static char buf[32 * PG] __attribute__((aligned(4096)));
	long pin;
	int fd;

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 1;
	if (setgid(65534) || setuid(65534))
		return 2;
	fd = open(SV_DEV0, O_RDWR);
	if (fd < 0 || svt_alloc_pd(fd, &pd))
		return 3;
	pin = sv_vm_pin_kb();
	if (pin < 0)
		return 4;
	if (svt_reg_mr(fd, pd, buf, 9 * PG, LW, &mr1, &key) != -ENOMEM)
		return 5;
	if (svt_reg_mr(fd, pd, buf + 1, 8 * PG, LW, &mr1, &key) != -ENOMEM)
		return 6;
	if (sv_vm_pin_kb() != pin)
		return 7;
	if (svt_reg_mr(fd, pd, buf, 5 * PG, LW, &mr1, &key))
		return 8;
	if (svt_reg_mr(fd, pd, buf, 3 * PG, 0, &mr2, &key))
		return 9;
	if (svt_reg_mr(fd, pd, buf, 1, 0, &mr3, &key) != -ENOMEM)
		return 10;
	/* Registering the same pages twice counts twice, as in the core. */
	if (sv_vm_pin_kb() != pin + 32)
		return 11;
	if (rereg(fd, mr2, SV_REREG_MR_CHANGE_TRANSLATION, 0, buf, 4 * PG, 0,
		  NULL) != -ENOMEM)
		return 12;
	if (svt_dereg_mr(fd, mr2) || sv_vm_pin_kb() != pin + 20)
		return 13;
	if (svt_reg_mr(fd, pd, buf, 3 * PG, 0, &mr2, &key))
		return 14;
	if (svt_dereg_mr(fd, mr1) || svt_dereg_mr(fd, mr2))
		return 15;
	if (sv_vm_pin_kb() != pin)
		return 16;
	/* Leave one behind for close to clean up. */
	if (svt_reg_mr(fd, pd, buf, 8 * PG, 0, &mr1, &key))
		return 17;
	close(fd);
	if (sv_vm_pin_kb() != pin)
		return 18;
	return 0;
}

TEST(memlock_limit)
{
	int status;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to drop to an unprivileged user");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(memlock_child());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("failed step %d",
						 WEXITSTATUS(status));
	EXPECT_EQ(0, sv_obj_count("mr"));
	EXPECT_EQ(0, sv_obj_count("pd"));
}

/* CAP_IPC_LOCK lifts the limit. */
TEST(memlock_cap_ipc_lock)
{
	int status;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { PG, PG };
		static char buf[8 * PG];
		__u32 pd, mr, key;
		int fd = open(SV_DEV0, O_RDWR);

		if (fd < 0 || svt_alloc_pd(fd, &pd) ||
		    setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(1);
		if (svt_reg_mr(fd, pd, buf, sizeof(buf), 0, &mr, &key))
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, sv_obj_count("mr"));
}

/*
 * A process registers memory, hands its file to us and exits; closing
 * the file afterwards returns the charge to the dead process's mm.
 */
TEST(close_after_owner_exited)
{
	int sv[2], status, fd;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov;
	struct msghdr msg = { 0 };
	struct cmsghdr *cm;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		static char buf[4 * PG];
		__u32 pd, mr, key;

		fd = open(SV_DEV0, O_RDWR);
		if (fd < 0 || svt_alloc_pd(fd, &pd) ||
		    svt_reg_mr(fd, pd, buf, sizeof(buf), LW, &mr, &key))
			_exit(1);
		iov.iov_base = &c;
		iov.iov_len = 1;
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		_exit(sendmsg(sv[1], &msg, 0) == 1 ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	iov.iov_base = &c;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	ASSERT_EQ(1, recvmsg(sv[0], &msg, 0));
	cm = CMSG_FIRSTHDR(&msg);
	ASSERT_NE(NULL, cm);
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	EXPECT_EQ(1, sv_obj_count("mr"));
	EXPECT_EQ(1, sv_obj_count("pd"));
	ASSERT_EQ(0, close(fd));
	EXPECT_EQ(0, sv_obj_count("mr"));
	EXPECT_EQ(0, sv_obj_count("pd"));
	close(sv[0]);
	close(sv[1]);
}

/*
 * max_mr, as SV_IOC_QUERY_DEVICE reports it, holds for the device. 65,536
 * registrations take minutes on the debug kernel: a longer timeout.
 */
TEST_F_TIMEOUT(mr, max_mr_enforced, 90)
{
	struct sv_query_device q = { .size = sizeof(q) };
	int fd2 = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	__u32 pd2, mr, key, last = 0;
	unsigned int i;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, svt_alloc_pd(fd2, &pd2));
	/* 65,536 of them: a new device holds more (limits_test). */
	ASSERT_EQ(0, sv_dev_set("softverbs0", "max_mr 65536"));
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_QUERY_DEVICE, &q));
	ASSERT_EQ(65536, q.max_mr);
	for (i = 0; i < q.max_mr; i++) {
		if (i & 1) {
			ASSERT_EQ(0, svt_reg_mr(fd2, pd2, self->buf, 1, 0,
						&last, &key));
		} else {
			ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf,
						1, 0, &mr, &key));
		}
	}
	EXPECT_EQ(q.max_mr, sv_obj_count("mr"));
	EXPECT_EQ(-ENOMEM, svt_reg_mr(self->fd, self->pd, self->buf, 1, 0,
				      &mr, &key));
	EXPECT_EQ(-ENOMEM, svt_reg_mr(fd2, pd2, self->buf, 1, 0, &mr, &key));
	EXPECT_EQ(self->pin + (long)q.max_mr * 4, sv_vm_pin_kb());
	ASSERT_EQ(0, svt_dereg_mr(fd2, last));
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf, 1, 0,
				&mr, &key));
	ASSERT_EQ(0, close(fd2));
	EXPECT_EQ(q.max_mr / 2 + 1, sv_obj_count("mr"));
	EXPECT_EQ(0, sv_dev_limits_reset("softverbs0"));
}

/*
 * The data-path copy helpers, through debugfs mr_io (see kernel/mr/mr.c):
 * one command, one result ("0[ hex]" or "-errno").
 */
static int mr_io(const char *cmd, char *res, size_t size)
{
	int fd = open(SV_DEBUGFS0 "/mr_io", O_RDWR);
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd)) {
		close(fd);
		return -EIO;
	}
	n = read(fd, res, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	res[n] = 0;
	return 0;
}

/* Read len bytes through key; returns the result line. */
static const char *io_read(__u32 key, __u32 access, __u64 iova, size_t len)
{
	static char res[2 * 65536 + 16];
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "r %x %x %llx %zu", key, access,
		 (unsigned long long)iova, len);
	if (mr_io(cmd, res, sizeof(res)))
		return "mr_io failed";
	return res;
}

static const char *io_cmd(const char *fmt, ...)
{
	static char res[256];
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (mr_io(cmd, res, sizeof(res)))
		return "mr_io failed";
	return res;
}

static void hex(char *out, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	out += sprintf(out, "0 ");
	for (i = 0; i < n; i++)
		out += sprintf(out, "%02x", b[i]);
}

TEST_F(mr, copy_helpers)
{
	__u64 a = (uintptr_t)self->buf;
	__u32 mr, key, ro, rokey, zb, zbkey, io, iokey, key2;
	char want[256];
	int i;

	if (access(SV_DEBUGFS0 "/mr_io", W_OK))
		SKIP(return, "no debugfs mr_io (needs root)");
	for (i = 0; i < 16 * (int)PG; i++)
		self->buf[i] = (char)(i * 7 + 3);
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf + 1,
				8 * PG - 1, LW | RW | RR, &mr, &key));

	/* Reads: inside a page, across a page boundary, at both ends. */
	hex(want, self->buf + 5, 10);
	EXPECT_STREQ(want, io_read(key, 0, a + 5, 10));
	hex(want, self->buf + PG - 3, 10);
	EXPECT_STREQ(want, io_read(key, RR, a + PG - 3, 10));
	hex(want, self->buf + 1, 3);
	EXPECT_STREQ(want, io_read(key, 0, a + 1, 3));
	hex(want, self->buf + 8 * PG - 4, 4);
	EXPECT_STREQ(want, io_read(key, 0, a + 8 * PG - 4, 4));
	EXPECT_STREQ("0 ", io_read(key, 0, a + 8 * PG, 0));
	/* The whole MR: a read that walks 8 pages. */
	ASSERT_EQ(0, strncmp("0 ", io_read(key, 0, a + 1, 8 * PG - 1), 2));

	/* Out of bounds: -ERANGE. */
	EXPECT_STREQ("-34", io_read(key, 0, a, 4));
	EXPECT_STREQ("-34", io_read(key, 0, a + 8 * PG - 4, 5));
	EXPECT_STREQ("-34", io_read(key, 0, a + 8 * PG + 1, 0));
	EXPECT_STREQ("-34", io_read(key, 0, UINT64_MAX, 2));

	/* Writes land in the process's memory, across a page boundary. */
	EXPECT_STREQ("0", io_cmd("w %x 0 %llx a1b2c3d4e5", key,
				 (unsigned long long)a + PG - 2));
	EXPECT_EQ((char)0xa1, self->buf[PG - 2]);
	EXPECT_EQ((char)0xb2, self->buf[PG - 1]);
	EXPECT_EQ((char)0xc3, self->buf[PG]);
	EXPECT_EQ((char)0xe5, self->buf[PG + 2]);
	EXPECT_STREQ("0", io_cmd("w %x %x %llx 77", key, RW,
				 (unsigned long long)a + 100));
	EXPECT_EQ(0x77, self->buf[100]);

	/* Unknown and stale keys. */
	EXPECT_STREQ("-2", io_read(key ^ 0x100, 0, a + 5, 1));
	EXPECT_STREQ("-2", io_read(key + 1, 0, a + 5, 1));

	/* Rights: a read-only MR takes no writes, no remote reads. */
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf, PG, 0,
				&ro, &rokey));
	EXPECT_STREQ("-13", io_cmd("w %x 0 %llx 00", rokey,
				   (unsigned long long)a));
	EXPECT_STREQ("-13", io_read(rokey, RR, a, 1));
	EXPECT_STREQ("-13", io_read(rokey, RA, a, 1));
	hex(want, self->buf, 1);
	EXPECT_STREQ(want, io_read(rokey, 0, a, 1));
	/* MR->MR copy into it is refused before any byte moves. */
	EXPECT_STREQ("-13", io_cmd("c %x 0 %llx %x 0 %llx 4", rokey,
				   (unsigned long long)a, key,
				   (unsigned long long)a + 8));

	/* Zero based: iova 0 is the first byte. */
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf + 2 * PG + 9,
				PG, LW | SV_ACCESS_ZERO_BASED, &zb, &zbkey));
	hex(want, self->buf + 2 * PG + 9, 6);
	EXPECT_STREQ(want, io_read(zbkey, 0, 0, 6));
	EXPECT_STREQ("-34", io_read(zbkey, 0, PG - 1, 2));
	/* An iova unrelated to the address. */
	ASSERT_EQ(0, reg_iova(self->fd, self->pd, self->buf + 7, 3 * PG,
			      0x100000, LW, &io, &iokey));
	hex(want, self->buf + 8, 5);
	EXPECT_STREQ(want, io_read(iokey, 0, 0x100001, 5));
	EXPECT_STREQ("-34", io_read(iokey, 0, 0xfffff, 1));

	/* MR to MR, across pages on both sides, then within one MR. */
	EXPECT_STREQ("0", io_cmd("c %x 0 %llx %x 0 %llx %u", zbkey, 0ULL, key,
				 (unsigned long long)a + PG - 100, 300U));
	EXPECT_EQ(0, memcmp(self->buf + 2 * PG + 9, self->buf + PG - 100,
			    300));
	EXPECT_STREQ("0", io_cmd("c %x 0 %llx %x 0 %llx %u", key,
				 (unsigned long long)a + 5 * PG + 11, key,
				 (unsigned long long)a + 3 * PG + 4000,
				 5000U));
	EXPECT_EQ(0, memcmp(self->buf + 5 * PG + 11, self->buf + 3 * PG + 4000,
			    5000));
	EXPECT_STREQ("-34", io_cmd("c %x 0 %llx %x 0 %llx %u", zbkey, 0ULL,
				   key, (unsigned long long)a + 1, PG + 1));

	/* Rereg: the key stays and sees the new range only. */
	ASSERT_EQ(0, rereg(self->fd, mr, SV_REREG_MR_CHANGE_TRANSLATION, 0,
			   self->buf + 10 * PG, PG, 0, &key2));
	EXPECT_EQ(key, key2);
	EXPECT_STREQ("-34", io_read(key, 0, a + 5, 1));
	hex(want, self->buf + 10 * PG + 3, 2);
	EXPECT_STREQ(want, io_read(key, 0, a + 10 * PG + 3, 2));
	/* Access change: writes refused once LOCAL_WRITE is gone. */
	ASSERT_EQ(0, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS, 0, NULL, 0,
			   RR, &key2));
	EXPECT_EQ(key, key2);
	EXPECT_STREQ("-13", io_cmd("w %x 0 %llx 00", key,
				   (unsigned long long)a + 10 * PG));
	hex(want, self->buf + 10 * PG, 1);
	EXPECT_STREQ(want, io_read(key, RR, a + 10 * PG, 1));

	/* Dereg: the key is gone. */
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	EXPECT_STREQ("-2", io_read(key, 0, a + 10 * PG, 1));
	EXPECT_STREQ("-22", io_cmd("bogus"));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, ro));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, zb));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, io));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
}

/*
 * Copies racing with rereg and dereg: every copy either completes on a
 * consistent MR or fails with -ENOENT/-ERANGE; nothing crashes or hangs.
 */
TEST_F(mr, copy_races_rereg_dereg)
{
	volatile __u32 *shared;
	__u32 mr, key;
	int status, i;
	pid_t pid;

	if (access(SV_DEBUGFS0 "/mr_io", W_OK))
		SKIP(return, "no debugfs mr_io (needs root)");
	shared = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	shared[0] = 0;		/* current key */
	shared[1] = 0;		/* stop */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		__u64 a = (uintptr_t)self->buf;
		unsigned long n = 0;
		const char *r;

		while (!shared[1]) {
			r = io_read(shared[0], 0, a + (n % 4) * PG, 2 * PG);
			if (r[0] == '0' ? r[1] != ' ' :
			    strcmp(r, "-2") && strcmp(r, "-34"))
				_exit(1);
			r = io_cmd("c %x 0 %llx %x 0 %llx %lu", shared[0],
				   (unsigned long long)a + 9 * PG, shared[0],
				   (unsigned long long)a + 2, PG + 5);
			if (strcmp(r, "0") && strcmp(r, "-2") &&
			    strcmp(r, "-34"))
				_exit(2);
			n++;
		}
		_exit(n ? 0 : 3);
	}
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf,
					16 * PG, LW, &mr, &key));
		shared[0] = key;
		ASSERT_EQ(0, rereg(self->fd, mr,
				   SV_REREG_MR_CHANGE_TRANSLATION, 0,
				   self->buf + (i % 3) * PG, 12 * PG, 0, &key));
		shared[0] = key;
		ASSERT_EQ(0, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS, 0,
				   NULL, 0, LW | RR, &key));
		shared[0] = key;
		usleep(100);
		ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	}
	shared[1] = 1;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
	munmap((void *)shared, PG);
}

/*
 * Keys are not a sequence: successive registrations do not step by a
 * constant (they did, by 0x101, from 0x101 at load). 16 keys from random
 * indexes and variants all at one distance: about 2^-360.
 */
TEST_F(mr, keys_unpredictable)
{
	enum { N = 16 };
	__u32 mrs[N], keys[N];
	int i, same = 0, adjacent = 0;

	for (i = 0; i < N; i++)
		ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, self->buf, PG, 0,
					&mrs[i], &keys[i]));
	for (i = 2; i < N; i++) {
		same += keys[i] - keys[i - 1] == keys[1] - keys[0];
		adjacent += (keys[i] >> 8) - (keys[i - 1] >> 8) == 1;
	}
	EXPECT_GT(N - 2, same) TH_LOG("keys step by %#x",
				      keys[1] - keys[0]);
	/* Nor are the indexes handed out one after the other. */
	EXPECT_GT(N - 2, adjacent);
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, svt_dereg_mr(self->fd, mrs[i]));
}

static int sv_mod_load(const char *ko)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -1;
	ret = syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	return ret;
}

/* The first key after loading the module: 0 if it could not register. */
static __u32 first_key_after_load(const char *ko)
{
	static char page[PG] __attribute__((aligned(4096)));
	__u32 pd, mr, key = 0;
	int fd;

	if (sv_mod_load(ko))
		return 0;
	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	if (fd >= 0 && !svt_alloc_pd(fd, &pd) &&
	    svt_reg_mr(fd, pd, page, PG, 0, &mr, &key))
		key = 0;
	if (fd >= 0)
		close(fd);
	if (syscall(SYS_delete_module, "softverbs", O_NONBLOCK))
		return 0;
	return key;
}

/*
 * The first MR on a freshly loaded module does not get a known key (it
 * was 0x101 every time), and reloading does not repeat the keys.
 */
TEST(first_key_after_reload)
{
	const char *ko = getenv("SV_KO");
	__u32 keys[4];
	int i, distinct = 0;

	if (!ko || geteuid())
		SKIP(return, "needs root and SV_KO (run_tests.sh sets it)");
	if (access("/sys/module/softverbs", F_OK) == 0 &&
	    syscall(SYS_delete_module, "softverbs", O_NONBLOCK))
		SKIP(return, "softverbs is in use: %s", strerror(errno));
	for (i = 0; i < 4; i++)
		keys[i] = first_key_after_load(ko);
	/* Leave it loaded, as run_tests.sh had it. */
	ASSERT_EQ(0, sv_mod_load(ko));
	for (i = 0; i < 4; i++) {
		ASSERT_NE(0, keys[i]) TH_LOG("load %d: no MR", i);
		EXPECT_NE(0x101, keys[i]);
		distinct += i == 0 || keys[i] != keys[0];
	}
	EXPECT_LT(1, distinct);
}

/*
 * While rereg switches the translation between two buffers, a reader
 * through the unchanged key sees either buffer whole (or a key that is
 * switching: -ENOENT), never a mix of the two.
 */
TEST_F(mr, rereg_translation_never_half_seen)
{
	char *x = self->buf, *y = self->buf + 8 * PG;
	volatile __u32 *shared;
	__u32 mr, key;
	int status, i;
	pid_t pid;

	if (access(SV_DEBUGFS0 "/mr_io", W_OK))
		SKIP(return, "no debugfs mr_io (needs root)");
	memset(x, 0x11, 4 * PG);
	memset(y, 0x22, 4 * PG);
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, x, 4 * PG,
				SV_ACCESS_ZERO_BASED, &mr, &key));
	shared = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	shared[0] = 0;		/* stop */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		unsigned long seen_x = 0, seen_y = 0;
		const char *r;
		size_t j, n;

		while (!shared[0] || !seen_x || !seen_y) {
			r = io_read(key, 0, 0, 2 * PG);
			if (!strcmp(r, "-2"))
				continue;
			if (strncmp(r, "0 ", 2))
				_exit(1);
			n = strlen(r + 2);
			if (n != 4 * PG)
				_exit(2);
			for (j = 1; j < n; j++)
				if (r[2 + j] != r[2])
					_exit(3);	/* half old, half new */
			seen_x += r[2] == '1';
			seen_y += r[2] == '2';
			if (shared[0] > 1)
				_exit(4);
		}
		_exit(0);
	}
	for (i = 0; i < 400; i++) {
		ASSERT_EQ(0, rereg(self->fd, mr,
				   SV_REREG_MR_CHANGE_TRANSLATION, 0,
				   i & 1 ? x : y, 4 * PG, 0, &key));
		usleep(200);
	}
	shared[0] = 1;
	/* The reader stops once it has seen both buffers. */
	for (i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; i++) {
		ASSERT_EQ(0, rereg(self->fd, mr,
				   SV_REREG_MR_CHANGE_TRANSLATION, 0,
				   i & 1 ? x : y, 4 * PG, 0, &key));
		usleep(20000);
	}
	shared[0] = 2;
	if (i == 100)
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	munmap((void *)shared, PG);
}

/*
 * userfaultfd: a registration that faults on a missing page waits until
 * the page is supplied. Meanwhile the file's other control commands must
 * go on: pinning runs without f->lock.
 */
struct uffd_ctx {
	int fd, uffd;
	__u32 pd, mr;
	char *area;
	size_t len;
	int ret;		/* of the blocked call */
	int other_ret;		/* of the other thread's commands */
	sem_t other_done;
};

static void *uffd_reg_thread(void *arg)
{
	struct uffd_ctx *c = arg;
	__u32 key;

	__atomic_store_n(&c->ret, svt_reg_mr(c->fd, c->pd, c->area, c->len, LW,
					     &c->mr, &key), __ATOMIC_RELEASE);
	return NULL;
}

static void *uffd_rereg_thread(void *arg)
{
	struct uffd_ctx *c = arg;

	__atomic_store_n(&c->ret, rereg(c->fd, c->mr,
					SV_REREG_MR_CHANGE_TRANSLATION, 0,
					c->area, c->len, 0, NULL),
			 __ATOMIC_RELEASE);
	return NULL;
}

/* Commands on the same fd while the other thread is blocked. */
static void *uffd_other_thread(void *arg)
{
	struct sv_query_device q = { .size = sizeof(q) };
	static char page[PG] __attribute__((aligned(4096)));
	struct uffd_ctx *c = arg;
	__u32 pd, mr, key;

	c->other_ret = svt_alloc_pd(c->fd, &pd);
	if (!c->other_ret)
		c->other_ret = ioctl(c->fd, SV_IOC_QUERY_DEVICE, &q) ? -errno :
								       0;
	if (!c->other_ret)
		c->other_ret = svt_reg_mr(c->fd, pd, page, PG, 0, &mr, &key);
	if (!c->other_ret)
		c->other_ret = svt_dereg_mr(c->fd, mr);
	if (!c->other_ret)
		c->other_ret = svt_dealloc_pd(c->fd, pd);
	sem_post(&c->other_done);
	return NULL;
}

/*
 * Run fn (which blocks on c->area) in a thread; once it waits for the
 * page, check that other commands on the fd finish within 3 s, then
 * supply the pages. Returns 1 if the other commands were prompt, 0 if
 * they waited for the fault, -1 if fn never waited for userfaultfd.
 */
static int uffd_run(struct uffd_ctx *c, void *(*fn)(void *))
{
	struct pollfd pfd = { .fd = c->uffd, .events = POLLIN };
	struct uffdio_zeropage z = {
		.range = { (uintptr_t)c->area, c->len },
	};
	pthread_t t, o;
	struct timespec dl;
	int prompt;

	int i;

	c->ret = 1;
	c->other_ret = 1;
	sem_init(&c->other_done, 0, 0);
	if (pthread_create(&t, NULL, fn, c))
		return -2;
	/* Up to 10 s for the fault, unless the call is over without one. */
	for (i = 0; i < 100 && poll(&pfd, 1, 100) != 1; i++) {
		if (__atomic_load_n(&c->ret, __ATOMIC_ACQUIRE) != 1)
			break;
	}
	if (!(pfd.revents & POLLIN)) {
		pthread_join(t, NULL);
		return -1;
	}
	if (pthread_create(&o, NULL, uffd_other_thread, c))
		return -2;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 3;
	prompt = sem_timedwait(&c->other_done, &dl) == 0;
	/* Supply every page; the waiting call goes on. */
	if (ioctl(c->uffd, UFFDIO_ZEROPAGE, &z))
		return -3;
	pthread_join(t, NULL);
	pthread_join(o, NULL);
	sem_destroy(&c->other_done);
	return prompt;
}

static int uffd_area(struct uffd_ctx *c)
{
	struct uffdio_register r = { .mode = UFFDIO_REGISTER_MODE_MISSING };

	c->area = mmap(NULL, c->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->area == MAP_FAILED)
		return -1;
	r.range.start = (uintptr_t)c->area;
	r.range.len = c->len;
	return ioctl(c->uffd, UFFDIO_REGISTER, &r);
}

TEST_F(mr, pin_blocked_on_userfaultfd_leaves_file_usable)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffd_ctx c = { .fd = self->fd, .pd = self->pd, .len = 4 * PG };
	int ret;

	/*
	 * Faults from the kernel (GUP) need privilege when
	 * vm.unprivileged_userfaultfd is 0: the test runs as root.
	 */
	c.uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (c.uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(c.uffd, UFFDIO_API, &api));
	ASSERT_EQ(0, uffd_area(&c));

	ret = uffd_run(&c, uffd_reg_thread);
	if (ret == -1) {
		/*
		 * Before 6.4 long-term GUP faults without FAULT_FLAG_ALLOW_RETRY,
		 * and userfaultfd answers those with SIGBUS: EFAULT at once.
		 */
		EXPECT_EQ(-EFAULT, c.ret);
		close(c.uffd);
		SKIP(return, "long-term pinning does not wait for userfaultfd on this kernel");
	}
	EXPECT_EQ(1, ret) TH_LOG("a command waited for a blocked REG_MR");
	EXPECT_EQ(0, c.other_ret);
	ASSERT_EQ(0, c.ret);
	EXPECT_EQ(self->pin + 16, sv_vm_pin_kb());

	/* Rereg onto a missing range: the same. */
	munmap(c.area, c.len);
	ASSERT_EQ(0, uffd_area(&c));
	ret = uffd_run(&c, uffd_rereg_thread);
	EXPECT_EQ(1, ret) TH_LOG("a command waited for a blocked REREG_MR");
	EXPECT_EQ(0, c.other_ret);
	EXPECT_EQ(0, c.ret);
	EXPECT_EQ(self->pin + 16, sv_vm_pin_kb());
	ASSERT_EQ(0, svt_dereg_mr(self->fd, c.mr));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
	munmap(c.area, c.len);
	close(c.uffd);
}

/*
 * A registration near max_mr_size over memory that cannot be pinned
 * fails as the RDMA core does (EFAULT), at once: nothing sized by the
 * length is allocated up front (it was a 2 GiB page array: the OOM
 * killer in a 2 GiB VM).
 */
TEST_F(mr, huge_over_unpinnable_fails_fast)
{
	__u64 len = SV_MAX_MR_SIZE - PG;
	__u32 mr, key;
	double t;
	char *p;

	if (geteuid())
		SKIP(return, "needs CAP_IPC_LOCK (root)");
	p = mmap(NULL, SV_MAX_MR_SIZE, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	t = sv_now_s();
	EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, p, len, LW,
				      &mr, &key));
	EXPECT_GT(5.0, sv_now_s() - t);
	/* The first 64 pages are there, the rest is PROT_NONE. */
	ASSERT_EQ(0, mprotect(p, 64 * PG, PROT_READ | PROT_WRITE));
	t = sv_now_s();
	EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, p, len, LW | RW,
				      &mr, &key));
	EXPECT_GT(5.0, sv_now_s() - t);
	/* Unmapped. */
	ASSERT_EQ(0, munmap(p, SV_MAX_MR_SIZE));
	t = sv_now_s();
	EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, p, len, 0,
				      &mr, &key));
	EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, p, len, LW,
				      &mr, &key));
	EXPECT_GT(5.0, sv_now_s() - t);
	EXPECT_EQ(0, sv_obj_count("mr"));
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
}

/*
 * Unprivileged, with a small RLIMIT_MEMLOCK: a huge registration over
 * memory that could be faulted in is ENOMEM before any pinning; with
 * RLIMIT_MEMLOCK 0 it is EPERM, as in the RDMA core (can_do_mlock()).
 * Exit code: 0, or the failed step.
 */
static int huge_unprivileged_child(void)
{
	struct rlimit rl = { 16 * PG, 16 * PG };
	__u64 len = SV_MAX_MR_SIZE - PG;
	__u32 pd, mr, key;
	long pin, rss;
	double t;
	char *p;
	int fd;

	p = mmap(NULL, SV_MAX_MR_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 2;
	/* From root to nobody: every capability goes (no keepcaps). */
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 3;
	fd = open(SV_DEV0, O_RDWR);
	if (fd < 0 || svt_alloc_pd(fd, &pd))
		return 4;
	pin = sv_vm_pin_kb();
	rss = sv_proc_status_kb(getpid(), "VmRSS");
	t = sv_now_s();
	if (svt_reg_mr(fd, pd, p, len, LW | RW, &mr, &key) != -ENOMEM)
		return 5;
	if (svt_reg_mr(fd, pd, p, len, 0, &mr, &key) != -ENOMEM)
		return 6;
	if (sv_now_s() - t > 2.0)
		return 7;
	/* Nothing was faulted in, nothing stays charged. */
	if (sv_vm_pin_kb() != pin ||
	    sv_proc_status_kb(getpid(), "VmRSS") > rss + 1024)
		return 8;
	if (svt_reg_mr(fd, pd, p, 16 * PG, LW, &mr, &key))
		return 9;
	if (sv_vm_pin_kb() != pin + 64 || svt_dereg_mr(fd, mr))
		return 10;
	rl.rlim_cur = 0;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 11;
	if (svt_reg_mr(fd, pd, p, PG, LW, &mr, &key) != -EPERM)
		return 12;
	if (sv_vm_pin_kb() != pin)
		return 13;
	close(fd);
	return 0;
}

TEST(huge_unprivileged_memlock_first)
{
	int status;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to drop to an unprivileged user");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(huge_unprivileged_child());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("failed step %d",
						 WEXITSTATUS(status));
	EXPECT_EQ(0, sv_obj_count("mr"));
}

/*
 * A file of 4 pages in dir, mapped twice: shared read-write, and shared
 * read-only from an O_RDONLY open. 0, or -1 with errno.
 */
static int map_file(const char *dir, char **rw, char **ro)
{
	char path[256], page[PG];
	int f, g;

	snprintf(path, sizeof(path), "%s/sv-mr-test-%d", dir, getpid());
	f = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (f < 0)
		return -1;
	memset(page, 0x5a, sizeof(page));
	for (g = 0; g < 4; g++)
		if (write(f, page, PG) != (ssize_t)PG)
			return -1;
	g = open(path, O_RDONLY);
	unlink(path);
	if (g < 0)
		return -1;
	*rw = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	*ro = mmap(NULL, 4 * PG, PROT_READ, MAP_SHARED, g, 0);
	close(f);
	close(g);
	return *rw == MAP_FAILED || *ro == MAP_FAILED ? -1 : 0;
}

/*
 * What the RDMA core's ib_umem_get() accepts over file mappings, on the
 * kernel running: rw_write is what a writable MR over the read-write
 * shared mapping gives.
 */
static void file_mapping_cases(struct __test_metadata *_metadata,
			       FIXTURE_DATA(mr) *self, const char *dir,
			       int rw_write)
{
	__u32 mr, key;
	char *rw, *ro;

	ASSERT_EQ(0, map_file(dir, &rw, &ro)) TH_LOG("%s: %s", dir,
						     strerror(errno));
	EXPECT_EQ(rw_write, svt_reg_mr(self->fd, self->pd, rw, 4 * PG,
				       LW | RW | RR, &mr, &key)) TH_LOG("%s", dir);
	if (!rw_write) {
		/* The MR writes the file's pages. */
		ASSERT_EQ(0, strncmp("0", io_cmd("w %x 0 %llx 0102", key,
				     (unsigned long long)(uintptr_t)rw + 5),
				     1));
		EXPECT_EQ(1, rw[5]);
		EXPECT_EQ(2, ro[6]);
		ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	}
	/* Read-only over the read-write mapping: pinned either way. */
	ASSERT_EQ(0, svt_reg_mr(self->fd, self->pd, rw, 4 * PG, RR, &mr,
				&key)) TH_LOG("%s", dir);
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	/*
	 * Read-only over a read-only shared mapping: before 6.2 the core
	 * pins for writing (FOLL_FORCE cannot write a shared mapping).
	 */
	EXPECT_EQ(kernel_at_least(6, 2) ? 0 : -EFAULT,
		  svt_reg_mr(self->fd, self->pd, ro, 4 * PG, 0, &mr, &key))
		TH_LOG("%s", dir);
	if (kernel_at_least(6, 2))
		ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, ro, 4 * PG, LW,
				      &mr, &key)) TH_LOG("%s", dir);
	EXPECT_EQ(self->pin, sv_vm_pin_kb());
	munmap(rw, 4 * PG);
	munmap(ro, 4 * PG);
}

/* tmpfs (shmem) pages need no writeback: pinned on every kernel. */
TEST_F(mr, file_mapping_tmpfs)
{
	if (access(SV_DEBUGFS0 "/mr_io", W_OK))
		SKIP(return, "no debugfs mr_io (needs root)");
	file_mapping_cases(_metadata, self, "/dev/shm", 0);
}

/*
 * A disk file system (ext4 on a loop device): a writable long-term pin
 * of its page cache is what 6.5+ refuses in GUP itself (EFAULT) and what
 * 6.1's RDMA core still accepts.
 */
TEST_F(mr, file_mapping_ext4)
{
	char dir[] = "/tmp/sv-mr-ext4.XXXXXX", cmd[512];

	if (access(SV_DEBUGFS0 "/mr_io", W_OK))
		SKIP(return, "no debugfs mr_io (needs root)");
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "modprobe -q loop; modprobe -q ext4; "
		 "truncate -s 16M %s.img && mkfs.ext4 -q -F %s.img && "
		 "mount -o loop %s.img %s", dir, dir, dir, dir);
	if (system(cmd)) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s %s.img", dir, dir);
		if (system(cmd))
			TH_LOG("cleanup failed");
		SKIP(return, "no ext4 on a loop device here");
	}
	file_mapping_cases(_metadata, self, dir,
			   kernel_at_least(6, 5) ? -EFAULT : 0);
	snprintf(cmd, sizeof(cmd), "umount %s && rm -rf %s %s.img", dir, dir,
		 dir);
	EXPECT_EQ(0, system(cmd));
}

TEST_HARNESS_MAIN
