// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions: access flags, ranges, pinning (VmPin), RLIMIT_MEMLOCK,
 * iova, rereg, keys, and cleanup when the file or the process goes.
 */
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sv_test.h"

#define PG		4096UL
#define LW		SV_ACCESS_LOCAL_WRITE
#define RW		SV_ACCESS_REMOTE_WRITE
#define RR		SV_ACCESS_REMOTE_READ
#define RA		SV_ACCESS_REMOTE_ATOMIC

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

TEST_F(mr, on_demand_eopnotsupp)
{
	__u32 mr, key;

	EXPECT_EQ(-EOPNOTSUPP, svt_reg_mr(self->fd, self->pd, self->buf, PG,
					  SV_ACCESS_ON_DEMAND, &mr, &key));
	EXPECT_EQ(-EOPNOTSUPP, svt_reg_mr(self->fd, self->pd, self->buf, PG,
					  SV_ACCESS_ON_DEMAND | LW | RW,
					  &mr, &key));
	/* An invalid combination is EINVAL before ODP is looked at. */
	EXPECT_EQ(-EINVAL, svt_reg_mr(self->fd, self->pd, self->buf, PG,
				      SV_ACCESS_ON_DEMAND | RW, &mr, &key));
	EXPECT_EQ(0, sv_obj_count("mr"));
}

TEST_F(mr, unknown_access_einval)
{
	__u32 mr, key;
	int bit;

	for (bit = 8; bit < 32; bit++) {
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
	EXPECT_EQ(-EFAULT, svt_reg_mr(self->fd, self->pd, p, PG, 0,
				      &mr, &key));
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
	/* Same index, another variant. */
	EXPECT_EQ(key >> 8, key2 >> 8);
	EXPECT_NE(key, key2);
	EXPECT_EQ(self->pin + 8, sv_vm_pin_kb());
	EXPECT_EQ(-EINVAL, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS, 0,
				 NULL, 0, RW, NULL));
	EXPECT_EQ(-EINVAL, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS, 0,
				 NULL, 0, LW | 1U << 12, NULL));
	EXPECT_EQ(-EOPNOTSUPP, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS,
				     0, NULL, 0, SV_ACCESS_ON_DEMAND, NULL));
	ASSERT_EQ(0, rereg(self->fd, mr, SV_REREG_MR_CHANGE_ACCESS, 0, NULL,
			   0, 0, &key3));
	EXPECT_NE(key2, key3);
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
	EXPECT_NE(key, key2);
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
			   SV_REREG_MR_CHANGE_ACCESS, 0, p, PG, RR, NULL));
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
	EXPECT_NE(key, key2);
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

/* max_mr, as SV_IOC_QUERY_DEVICE reports it, holds for the device. */
TEST_F(mr, max_mr_enforced)
{
	struct sv_query_device q = { .size = sizeof(q) };
	int fd2 = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	__u32 pd2, mr, key, last = 0;
	unsigned int i;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, svt_alloc_pd(fd2, &pd2));
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_QUERY_DEVICE, &q));
	ASSERT_EQ(SV_MAX_MR, q.max_mr);
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
	EXPECT_EQ(q.max_mr / 2, sv_obj_count("mr"));
}

TEST_HARNESS_MAIN
