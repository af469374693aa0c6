// SPDX-License-Identifier: GPL-2.0
/*
 * The ioctl ABI envelope: open/close, QUERY_ABI, unknown commands, and
 * the size rules of uapi/softverbs-abi.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <termios.h>

#include "sv_harness.h"
#include "sv_test.h"

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", SV_DEV0, strerror(errno));
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST(open_close_many)
{
	int fds[64], i;

	for (i = 0; i < 64; i++) {
		fds[i] = open(SV_DEV0, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[i]);
	}
	for (i = 0; i < 64; i++)
		ASSERT_EQ(0, close(fds[i]));
}

TEST(open_missing_device)
{
	EXPECT_EQ(-1, open(SV_DEV_DIR "/softverbs63", O_RDWR));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(dev, query_abi)
{
	struct sv_query_abi q = { .size = sizeof(q) };

	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_QUERY_ABI, &q));
	EXPECT_EQ(sizeof(q), q.size);
	EXPECT_EQ(SV_ABI_VERSION, q.abi_version);
	EXPECT_EQ(SV_MAX_ARG_SIZE, q.max_arg_size);
	EXPECT_EQ(0, q.reserved);
}

TEST_F(dev, seek_is_espipe)
{
	EXPECT_EQ(-1, lseek(self->fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
}

TEST_F(dev, unknown_ioctl_is_enotty)
{
	struct sv_query_abi q = { .size = sizeof(q) };

	/* A number the kernel does not know. */
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(SV_IOC_MAGIC, 0xfe,
					    struct sv_query_abi), &q));
	EXPECT_EQ(ENOTTY, errno);
	/* Another driver's magic. */
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR('T', SV_NR_QUERY_ABI,
					    struct sv_query_abi), &q));
	EXPECT_EQ(ENOTTY, errno);
	/* Our number with the wrong direction bits. */
	EXPECT_EQ(-1, ioctl(self->fd, _IO(SV_IOC_MAGIC, SV_NR_QUERY_ABI), &q));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOR(SV_IOC_MAGIC, SV_NR_QUERY_ABI,
					   struct sv_query_abi), &q));
	EXPECT_EQ(ENOTTY, errno);
	/* A terminal ioctl. */
	EXPECT_EQ(-1, ioctl(self->fd, TCGETS, &q));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(dev, bad_size_is_einval)
{
	static const uint32_t bad[] = { 0, 1, 4, SV_QUERY_ABI_SIZE_VER0 - 1,
					SV_MAX_ARG_SIZE + 1, UINT32_MAX };
	struct sv_query_abi q;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&q, 0, sizeof(q));
		q.size = bad[i];
		EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_ABI, &q))
			TH_LOG("size %u accepted", bad[i]);
		EXPECT_EQ(EINVAL, errno) TH_LOG("size %u", bad[i]);
		EXPECT_EQ(0, q.abi_version);
	}
}

TEST_F(dev, bigger_struct_zero_tail_is_ok)
{
	struct {
		struct sv_query_abi q;
		uint8_t future[100];
	} big;

	memset(&big, 0, sizeof(big));
	big.q.size = sizeof(big);
	memset(big.future, 0, sizeof(big.future));
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_QUERY_ABI, &big));
	EXPECT_EQ(SV_ABI_VERSION, big.q.abi_version);
	EXPECT_EQ(sizeof(big), big.q.size);
}

TEST_F(dev, bigger_struct_nonzero_tail_is_e2big)
{
	struct {
		struct sv_query_abi q;
		uint8_t future[100];
	} big;

	memset(&big, 0, sizeof(big));
	big.q.size = sizeof(big);
	big.future[99] = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_ABI, &big));
	EXPECT_EQ(E2BIG, errno);
}

TEST_F(dev, reserved_nonzero_is_einval)
{
	struct sv_query_abi q = { .size = sizeof(q), .reserved = 1 };

	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_ABI, &q));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, bad_pointer_is_efault)
{
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_ABI, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_ABI, (void *)8));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(dev, short_buffer_at_page_end_is_efault)
{
	/* size says 16 but only 8 bytes are mapped. */
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sv_query_abi *q;

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, munmap(p + pg, pg));
	q = (struct sv_query_abi *)(p + pg - 8);
	q->size = sizeof(*q);
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_QUERY_ABI, q));
	EXPECT_EQ(EFAULT, errno);
	munmap(p, pg);
}

TEST_HARNESS_MAIN
