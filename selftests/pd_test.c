// SPDX-License-Identifier: GPL-2.0
/*
 * Protection domains: alloc/dealloc, handle validation (unknown, wrong
 * type, other file, other process), EBUSY while an MR uses the PD, the
 * ABI's size and reserved-field rules, and cleanup when the file closes.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "sv_harness.h"
#include "sv_test.h"

FIXTURE(pd) {
	int fd;
	void *buf;
};

FIXTURE_SETUP(pd)
{
	self->fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", SV_DEV0, strerror(errno));
	self->buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 1, 4096);
}

FIXTURE_TEARDOWN(pd)
{
	munmap(self->buf, 4096);
	close(self->fd);
}

TEST_F(pd, alloc_dealloc)
{
	long before = sv_obj_count("pd");
	__u32 pd;

	ASSERT_LE(0, before);
	ASSERT_EQ(0, svt_alloc_pd(self->fd, &pd));
	EXPECT_NE(0, pd);
	EXPECT_EQ(before + 1, sv_obj_count("pd"));
	ASSERT_EQ(0, svt_dealloc_pd(self->fd, pd));
	EXPECT_EQ(before, sv_obj_count("pd"));
}

TEST_F(pd, alloc_dealloc_many)
{
	enum { N = 1000 };
	static __u32 pds[N];
	int i, j;

	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, svt_alloc_pd(self->fd, &pds[i]));
		for (j = 0; j < i; j++)
			ASSERT_NE(pds[j], pds[i]);
	}
	EXPECT_EQ(N, sv_obj_count("pd"));
	/* Every other one, then the rest: handles stay independent. */
	for (i = 0; i < N; i += 2)
		ASSERT_EQ(0, svt_dealloc_pd(self->fd, pds[i]));
	for (i = 1; i < N; i += 2)
		ASSERT_EQ(0, svt_dealloc_pd(self->fd, pds[i]));
	EXPECT_EQ(0, sv_obj_count("pd"));
}

TEST_F(pd, dealloc_twice_enoent)
{
	__u32 pd;

	ASSERT_EQ(0, svt_alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, svt_dealloc_pd(self->fd, pd));
	EXPECT_EQ(-ENOENT, svt_dealloc_pd(self->fd, pd));
}

TEST_F(pd, bad_handle_enoent)
{
	EXPECT_EQ(-ENOENT, svt_dealloc_pd(self->fd, 0));
	EXPECT_EQ(-ENOENT, svt_dealloc_pd(self->fd, 12345));
	EXPECT_EQ(-ENOENT, svt_dealloc_pd(self->fd, 0xffffffff));
}

TEST_F(pd, mr_handle_as_pd_einval)
{
	__u32 pd, mr;

	ASSERT_EQ(0, svt_alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, svt_reg_mr(self->fd, pd, self->buf, 4096, 0, &mr, NULL));
	EXPECT_EQ(-EINVAL, svt_dealloc_pd(self->fd, mr));
	/* ... and a PD handle where an MR is expected. */
	EXPECT_EQ(-EINVAL, svt_dereg_mr(self->fd, pd));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr));
	ASSERT_EQ(0, svt_dealloc_pd(self->fd, pd));
}

TEST_F(pd, other_file_enoent)
{
	int fd2 = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	__u32 pd, mr;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, svt_alloc_pd(self->fd, &pd));
	EXPECT_EQ(-ENOENT, svt_dealloc_pd(fd2, pd));
	EXPECT_EQ(-ENOENT, svt_reg_mr(fd2, pd, self->buf, 4096, 0, &mr, NULL));
	ASSERT_EQ(0, close(fd2));
	ASSERT_EQ(0, svt_dealloc_pd(self->fd, pd));
}

TEST_F(pd, dealloc_busy_with_mr)
{
	__u32 pd, mr1, mr2;

	ASSERT_EQ(0, svt_alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, svt_reg_mr(self->fd, pd, self->buf, 4096, 0, &mr1, NULL));
	ASSERT_EQ(0, svt_reg_mr(self->fd, pd, self->buf, 100, 0, &mr2, NULL));
	EXPECT_EQ(-EBUSY, svt_dealloc_pd(self->fd, pd));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr1));
	EXPECT_EQ(-EBUSY, svt_dealloc_pd(self->fd, pd));
	ASSERT_EQ(0, svt_dereg_mr(self->fd, mr2));
	EXPECT_EQ(0, svt_dealloc_pd(self->fd, pd));
	EXPECT_EQ(0, sv_obj_count("pd"));
	EXPECT_EQ(0, sv_obj_count("mr"));
}

TEST_F(pd, reserved_and_sizes)
{
	struct sv_alloc_pd a = { .size = sizeof(a), .reserved = 1 };
	struct {
		struct sv_alloc_pd a;
		__u64 tail;
	} big = { .a.size = sizeof(big) };
	struct sv_dealloc_pd d;

	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_ALLOC_PD, &a));
	EXPECT_EQ(EINVAL, errno);
	a.reserved = 0;
	a.size = SV_ALLOC_PD_SIZE_VER0 - 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_ALLOC_PD, &a));
	EXPECT_EQ(EINVAL, errno);
	a.size = 0;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_ALLOC_PD, &a));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, sv_obj_count("pd"));

	/* A longer struct: zero tail is fine, a non-zero one E2BIG. */
	big.tail = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_ALLOC_PD, &big));
	EXPECT_EQ(E2BIG, errno);
	big.tail = 0;
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_ALLOC_PD, &big));
	EXPECT_EQ(sizeof(big), big.a.size);
	EXPECT_EQ(0, big.tail);

	d.size = SV_DEALLOC_PD_SIZE_VER0 - 1;
	d.pd_handle = big.a.pd_handle;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_DEALLOC_PD, &d));
	EXPECT_EQ(EINVAL, errno);
	d.size = sizeof(d);
	EXPECT_EQ(0, ioctl(self->fd, SV_IOC_DEALLOC_PD, &d));
	EXPECT_EQ(0, sv_obj_count("pd"));
}

TEST(close_with_live_objects)
{
	int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	long pin = sv_vm_pin_kb();
	__u32 pd[4], mr;
	void *buf;
	int i;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, pin);
	buf = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, svt_alloc_pd(fd, &pd[i]));
		ASSERT_EQ(0, svt_reg_mr(fd, pd[i], buf, 1 << 20,
					SV_ACCESS_LOCAL_WRITE, &mr, NULL));
	}
	EXPECT_EQ(4, sv_obj_count("pd"));
	EXPECT_EQ(4, sv_obj_count("mr"));
	EXPECT_EQ(pin + 4 * 1024, sv_vm_pin_kb());
	ASSERT_EQ(0, close(fd));
	EXPECT_EQ(0, sv_obj_count("pd"));
	EXPECT_EQ(0, sv_obj_count("mr"));
	EXPECT_EQ(pin, sv_vm_pin_kb());
	munmap(buf, 1 << 20);
}

/*
 * A forked child shares the open file and its handles; a file the child
 * opens itself does not know them.
 */
TEST_F(pd, fork_other_process)
{
	__u32 pd, pd2;
	pid_t pid;
	int status;

	ASSERT_EQ(0, svt_alloc_pd(self->fd, &pd));
	ASSERT_EQ(0, svt_alloc_pd(self->fd, &pd2));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
		__u32 mine;

		if (fd < 0)
			_exit(1);
		if (svt_dealloc_pd(fd, pd) != -ENOENT)
			_exit(2);
		if (svt_alloc_pd(fd, &mine) || svt_dealloc_pd(fd, mine))
			_exit(3);
		/* The inherited file is the parent's context. */
		if (svt_dealloc_pd(self->fd, pd2))
			_exit(4);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(-ENOENT, svt_dealloc_pd(self->fd, pd2));
	EXPECT_EQ(0, svt_dealloc_pd(self->fd, pd));
}

/* A process that exits with its file open leaves nothing behind. */
TEST(exit_with_live_objects)
{
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = open(SV_DEV0, O_RDWR);
		static char buf[3 * 4096];
		__u32 pd, mr;

		if (fd < 0 || svt_alloc_pd(fd, &pd) ||
		    svt_reg_mr(fd, pd, buf, sizeof(buf), 0, &mr, NULL))
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, sv_obj_count("pd"));
	EXPECT_EQ(0, sv_obj_count("mr"));
}

/* max_pd, as SV_IOC_QUERY_DEVICE reports it, holds for the device. */
TEST(max_pd_enforced)
{
	struct sv_query_device q = { .size = sizeof(q) };
	int fd1 = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	int fd2 = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	__u32 pd, last = 0;
	unsigned int i;

	ASSERT_LE(0, fd1);
	ASSERT_LE(0, fd2);
	/* 65,536 of them: a new device holds more (limits_test). */
	ASSERT_EQ(0, sv_dev_set("softverbs0", "max_pd 65536"));
	ASSERT_EQ(0, ioctl(fd1, SV_IOC_QUERY_DEVICE, &q));
	ASSERT_EQ(65536, q.max_pd);
	for (i = 0; i < q.max_pd; i++)
		ASSERT_EQ(0, svt_alloc_pd(i & 1 ? fd2 : fd1, &last));
	EXPECT_EQ(q.max_pd, sv_obj_count("pd"));
	EXPECT_EQ(-ENOMEM, svt_alloc_pd(fd1, &pd));
	EXPECT_EQ(-ENOMEM, svt_alloc_pd(fd2, &pd));
	EXPECT_EQ(q.max_pd, sv_obj_count("pd"));
	/* last came from fd2 (max_pd is even). */
	ASSERT_EQ(0, svt_dealloc_pd(fd2, last));
	ASSERT_EQ(0, svt_alloc_pd(fd1, &pd));
	EXPECT_EQ(-ENOMEM, svt_alloc_pd(fd2, &pd));
	ASSERT_EQ(0, close(fd1));
	ASSERT_EQ(0, close(fd2));
	EXPECT_EQ(0, sv_obj_count("pd"));
	EXPECT_EQ(0, sv_dev_limits_reset("softverbs0"));
}

TEST_HARNESS_MAIN
