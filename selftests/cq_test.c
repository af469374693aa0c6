// SPDX-License-Identifier: GPL-2.0
/*
 * CQs, completion channels and the async event fd, through the raw
 * ioctls and mmap: argument checking, the ring mapping and its header,
 * destroy rules (ENOENT, EBUSY), event fds, and cleanup on close.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "sv_test.h"

#define SV_DEBUGFS0	"/sys/kernel/debug/" SV_CLASS_NAME "/softverbs0/objects"

/* Live objects of one type on softverbs0, from debugfs; -1 if unknown. */
static int sv_nobjs(const char *type)
{
	char line[128], name[64];
	FILE *fp = fopen(SV_DEBUGFS0, "r");
	int n, ret = -1;

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "%63s %d", name, &n) == 2 &&
		    !strcmp(name, type))
			ret = n;
	fclose(fp);
	return ret;
}

static int create_cq(int fd, struct sv_create_cq *c, uint32_t cqe,
		     uint32_t channel)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->cqe = cqe;
	c->channel = channel;
	c->user_handle = 0x1234567890abcdefULL;
	return ioctl(fd, SV_IOC_CREATE_CQ, c);
}

static int destroy_cq(int fd, uint32_t handle)
{
	struct sv_destroy_cq d = { .size = sizeof(d), .handle = handle };

	return ioctl(fd, SV_IOC_DESTROY_CQ, &d);
}

static int create_channel(int fd, struct sv_create_comp_channel *ch,
			  uint32_t flags)
{
	memset(ch, 0, sizeof(*ch));
	ch->size = sizeof(*ch);
	ch->flags = flags;
	ch->fd = -1;
	return ioctl(fd, SV_IOC_CREATE_COMP_CHANNEL, ch);
}

static int destroy_channel(int fd, uint32_t handle)
{
	struct sv_destroy_comp_channel d = { .size = sizeof(d),
					     .handle = handle };

	return ioctl(fd, SV_IOC_DESTROY_COMP_CHANNEL, &d);
}

FIXTURE(dev) {
	int fd;
	long pg;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", SV_DEV0, strerror(errno));
	self->pg = sysconf(_SC_PAGESIZE);
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST_F(dev, create_sizes)
{
	static const uint32_t req[] = { 1, 2, 3, 100, 4096, 4097,
					SV_MAX_CQE - 1, SV_MAX_CQE };
	static const uint32_t got[] = { 1, 2, 4, 128, 4096, 8192,
					SV_MAX_CQE, SV_MAX_CQE };
	struct sv_create_cq c;
	unsigned int i;

	for (i = 0; i < sizeof(req) / sizeof(req[0]); i++) {
		ASSERT_EQ(0, create_cq(self->fd, &c, req[i], 0))
			TH_LOG("cqe %u: %s", req[i], strerror(errno));
		EXPECT_EQ(got[i], c.cqe);
		EXPECT_NE(0, c.handle);
		EXPECT_EQ(self->pg, c.cqe_offset);
		EXPECT_EQ(0, c.mmap_offset % self->pg);
		EXPECT_NE(0, c.mmap_offset);
		EXPECT_EQ((self->pg + got[i] * SV_CQE_SIZE + self->pg - 1) /
			  self->pg * self->pg, c.mmap_len);
		EXPECT_EQ(0, destroy_cq(self->fd, c.handle));
	}
}

TEST_F(dev, create_bad_args)
{
	struct sv_create_cq c;

	EXPECT_EQ(-1, create_cq(self->fd, &c, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, c.handle);
	EXPECT_EQ(-1, create_cq(self->fd, &c, SV_MAX_CQE + 1, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, create_cq(self->fd, &c, UINT32_MAX, 0));
	EXPECT_EQ(EINVAL, errno);

	/* One completion vector: only 0 is valid. */
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.cqe = 1;
	c.comp_vector = SV_NUM_COMP_VECTORS;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_CREATE_CQ, &c));
	EXPECT_EQ(EINVAL, errno);

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.cqe = 1;
	c.flags = 2;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_CREATE_CQ, &c));
	EXPECT_EQ(EINVAL, errno);

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.cqe = 1;
	c.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_CREATE_CQ, &c));
	EXPECT_EQ(EINVAL, errno);

	/* Unknown wc_flags bits: EINVAL; known but unsupported: EOPNOTSUPP */
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.cqe = 1;
	c.wc_flags = 1ULL << 12;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_CREATE_CQ, &c));
	EXPECT_EQ(EINVAL, errno);
	c.wc_flags = 1ULL << 10;	/* IBV_WC_EX_WITH_TM_INFO */
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_CREATE_CQ, &c));
	EXPECT_EQ(EOPNOTSUPP, errno);
	c.wc_flags = SV_CQ_WC_FLAGS_SUPPORTED;
	c.flags = SV_CQ_FLAG_IGNORE_OVERRUN;
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_CREATE_CQ, &c));
	EXPECT_EQ(0, destroy_cq(self->fd, c.handle));

	/* Too small a struct. */
	memset(&c, 0, sizeof(c));
	c.size = SV_CREATE_CQ_SIZE_VER0 - 1;
	c.cqe = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_CREATE_CQ, &c));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, create_bad_channel)
{
	struct sv_create_comp_channel ch;
	struct sv_create_cq c, c2;

	EXPECT_EQ(-1, create_cq(self->fd, &c, 1, 12345));
	EXPECT_EQ(ENOENT, errno);

	/* A handle of another type. */
	ASSERT_EQ(0, create_cq(self->fd, &c2, 1, 0));
	EXPECT_EQ(-1, create_cq(self->fd, &c, 1, c2.handle));
	EXPECT_EQ(EINVAL, errno);

	/* A destroyed channel. */
	ASSERT_EQ(0, create_channel(self->fd, &ch, 0));
	ASSERT_EQ(0, destroy_channel(self->fd, ch.handle));
	EXPECT_EQ(-1, create_cq(self->fd, &c, 1, ch.handle));
	EXPECT_EQ(ENOENT, errno);
	close(ch.fd);

	/* Another file's channel: a handle unknown to this file. */
	{
		int fd2 = open(SV_DEV0, O_RDWR | O_CLOEXEC), i;

		ASSERT_LE(0, fd2);
		for (i = 0; i < 8; i++) {
			ASSERT_EQ(0, create_channel(fd2, &ch, 0));
			close(ch.fd);
		}
		EXPECT_EQ(8, ch.handle);
		EXPECT_EQ(-1, create_cq(self->fd, &c, 1, ch.handle));
		EXPECT_EQ(ENOENT, errno);
		close(fd2);
	}
	EXPECT_EQ(0, destroy_cq(self->fd, c2.handle));
}

TEST_F(dev, ring_header_and_mmap)
{
	struct sv_create_cq c;
	struct sv_cq_ring *r;
	struct sv_cqe *cqes;
	char *p;

	ASSERT_EQ(0, create_cq(self->fd, &c, 100, 0));
	p = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, c.mmap_offset);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
	r = (struct sv_cq_ring *)p;
	EXPECT_EQ(0, r->prod);
	EXPECT_EQ(0, r->cons);
	EXPECT_EQ(0, r->arm);
	EXPECT_EQ(0, r->flags);
	EXPECT_EQ(128, r->entries);
	EXPECT_EQ(SV_CQE_SIZE, r->cqe_size);
	EXPECT_EQ(SV_CQE_SIZE, sizeof(struct sv_cqe));
	cqes = (struct sv_cqe *)(p + c.cqe_offset);
	EXPECT_EQ(0, cqes[0].wr_id);
	EXPECT_EQ(0, cqes[127].status);

	/* The library writes cons and arm. */
	__atomic_store_n(&r->cons, 0, __ATOMIC_RELEASE);
	__atomic_fetch_or(&r->arm, SV_CQ_ARM_NEXT, __ATOMIC_SEQ_CST);
	EXPECT_EQ(SV_CQ_ARM_NEXT, r->arm);

	/* A second mapping sees the same memory. */
	{
		struct sv_cq_ring *r2 = mmap(NULL, c.mmap_len, PROT_READ,
					     MAP_SHARED, self->fd,
					     c.mmap_offset);

		ASSERT_NE(MAP_FAILED, r2);
		EXPECT_EQ(SV_CQ_ARM_NEXT, r2->arm);
		munmap(r2, c.mmap_len);
	}
	EXPECT_EQ(0, munmap(p, c.mmap_len));
	EXPECT_EQ(0, destroy_cq(self->fd, c.handle));
}

TEST_F(dev, mmap_bad_args)
{
	struct sv_create_cq c;
	void *p;

	ASSERT_EQ(0, create_cq(self->fd, &c, 64, 0));
	/* Offset 0 and offsets that name no ring. */
	p = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, c.mmap_offset + self->pg);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, c.mmap_offset + 1000 * self->pg);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* Wrong length, both ways. */
	p = mmap(NULL, c.mmap_len - self->pg, PROT_READ | PROT_WRITE,
		 MAP_SHARED, self->fd, c.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, c.mmap_len + self->pg, PROT_READ | PROT_WRITE,
		 MAP_SHARED, self->fd, c.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* Private or executable. */
	p = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		 self->fd, c.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, c.mmap_len, PROT_READ | PROT_EXEC, MAP_SHARED,
		 self->fd, c.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* mprotect cannot add PROT_EXEC later. */
	p = mmap(NULL, c.mmap_len, PROT_READ, MAP_SHARED, self->fd,
		 c.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, c.mmap_len, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	munmap(p, c.mmap_len);
	/* Another file does not see this file's rings. */
	{
		int fd2 = open(SV_DEV0, O_RDWR | O_CLOEXEC);

		ASSERT_LE(0, fd2);
		p = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd2, c.mmap_offset);
		EXPECT_EQ(MAP_FAILED, p);
		EXPECT_EQ(EINVAL, errno);
		close(fd2);
	}
	/* After destroy the offset is gone. */
	EXPECT_EQ(0, destroy_cq(self->fd, c.handle));
	p = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, c.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, munmap_after_destroy)
{
	struct sv_create_cq c;
	struct sv_cq_ring *r;

	ASSERT_EQ(0, create_cq(self->fd, &c, 1000, 0));
	r = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, c.mmap_offset);
	ASSERT_NE(MAP_FAILED, r);
	EXPECT_EQ(0, destroy_cq(self->fd, c.handle));
	/* Still mapped and harmless. */
	EXPECT_EQ(1024, r->entries);
	r->cons = 77;
	EXPECT_EQ(77, r->cons);
	/* Unmap in two pieces (splits the VMA). */
	EXPECT_EQ(0, munmap((char *)r + self->pg, c.mmap_len - self->pg));
	EXPECT_EQ(1024, r->entries);
	EXPECT_EQ(0, munmap(r, self->pg));
}

TEST(munmap_after_close)
{
	struct sv_create_cq c;
	struct sv_cq_ring *r;
	int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, create_cq(fd, &c, 8, 0));
	r = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, c.mmap_offset);
	ASSERT_NE(MAP_FAILED, r);
	close(fd);
	EXPECT_EQ(8, r->entries);
	EXPECT_EQ(0, munmap(r, c.mmap_len));
}

TEST_F(dev, destroy)
{
	struct sv_destroy_cq d = { .size = sizeof(d) };
	struct sv_create_cq c;

	ASSERT_EQ(0, create_cq(self->fd, &c, 1, 0));
	d.handle = c.handle;
	d.comp_events_reported = 99;
	d.async_events_reported = 99;
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_DESTROY_CQ, &d));
	EXPECT_EQ(0, d.comp_events_reported);
	EXPECT_EQ(0, d.async_events_reported);
	EXPECT_EQ(-1, destroy_cq(self->fd, c.handle));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, destroy_cq(self->fd, 0));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, destroy_cq(self->fd, UINT32_MAX));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(dev, destroy_wrong_type)
{
	struct sv_create_comp_channel ch;
	struct sv_create_cq c;

	ASSERT_EQ(0, create_channel(self->fd, &ch, 0));
	ASSERT_EQ(0, create_cq(self->fd, &c, 1, 0));
	EXPECT_EQ(-1, destroy_cq(self->fd, ch.handle));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, destroy_channel(self->fd, c.handle));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, destroy_cq(self->fd, c.handle));
	EXPECT_EQ(0, destroy_channel(self->fd, ch.handle));
	close(ch.fd);
}

TEST_F(dev, resize_not_supported)
{
	struct sv_resize_cq r = { .size = sizeof(r), .cqe = 16 };
	struct sv_create_cq c;

	ASSERT_EQ(0, create_cq(self->fd, &c, 1, 0));
	r.handle = c.handle;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_RESIZE_CQ, &r));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(0, destroy_cq(self->fd, c.handle));
}

TEST_F(dev, channel_busy_with_cqs)
{
	struct sv_create_comp_channel ch;
	struct sv_create_cq c1, c2;

	ASSERT_EQ(0, create_channel(self->fd, &ch, 0));
	EXPECT_NE(0, ch.handle);
	EXPECT_LE(0, ch.fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(ch.fd, F_GETFD));
	ASSERT_EQ(0, create_cq(self->fd, &c1, 1, ch.handle));
	ASSERT_EQ(0, create_cq(self->fd, &c2, 1, ch.handle));
	EXPECT_EQ(-1, destroy_channel(self->fd, ch.handle));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(0, destroy_cq(self->fd, c1.handle));
	EXPECT_EQ(-1, destroy_channel(self->fd, ch.handle));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(0, destroy_cq(self->fd, c2.handle));
	EXPECT_EQ(0, destroy_channel(self->fd, ch.handle));
	EXPECT_EQ(-1, destroy_channel(self->fd, ch.handle));
	EXPECT_EQ(ENOENT, errno);
	close(ch.fd);
}

TEST_F(dev, channel_bad_args)
{
	struct sv_create_comp_channel ch;

	EXPECT_EQ(-1, create_channel(self->fd, &ch, 2));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ch.fd);
	EXPECT_EQ(-1, destroy_channel(self->fd, 777));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(dev, channel_fd_empty)
{
	struct sv_create_comp_channel ch;
	struct sv_comp_event ev;
	struct pollfd pfd;

	ASSERT_EQ(0, create_channel(self->fd, &ch, SV_EVENT_FD_NONBLOCK));
	pfd.fd = ch.fd;
	pfd.events = POLLIN;
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	EXPECT_EQ(-1, read(ch.fd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(-1, read(ch.fd, &ev, sizeof(ev) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, write(ch.fd, &ev, sizeof(ev)));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(-1, lseek(ch.fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);

	/* Destroyed: EIO, and poll says so. */
	EXPECT_EQ(0, destroy_channel(self->fd, ch.handle));
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_EQ(POLLERR | POLLHUP, pfd.revents);
	EXPECT_EQ(-1, read(ch.fd, &ev, sizeof(ev)));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(0, close(ch.fd));
}

TEST_F(dev, channel_blocking_read_wakes_on_destroy)
{
	struct sv_create_comp_channel ch;
	struct sv_comp_event ev;
	pid_t pid;
	int st;

	ASSERT_EQ(0, create_channel(self->fd, &ch, 0));
	EXPECT_EQ(0, fcntl(ch.fd, F_GETFL) & O_NONBLOCK);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Blocks until the parent destroys the channel. */
		_exit(read(ch.fd, &ev, sizeof(ev)) == -1 && errno == EIO ?
		      0 : 1);
	}
	usleep(200000);
	EXPECT_EQ(0, destroy_channel(self->fd, ch.handle));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	close(ch.fd);
}

TEST_F(dev, channel_fd_outlives_device_fd)
{
	struct sv_create_comp_channel ch;
	struct sv_comp_event ev;
	int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, create_channel(fd, &ch, SV_EVENT_FD_NONBLOCK));
	close(fd);
	EXPECT_EQ(-1, read(ch.fd, &ev, sizeof(ev)));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(0, close(ch.fd));
}

TEST_F(dev, async_fd)
{
	struct sv_get_async_fd a = { .size = sizeof(a) };
	struct sv_async_event ev;
	struct pollfd pfd;

	a.flags = 2;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_GET_ASYNC_FD, &a));
	EXPECT_EQ(EINVAL, errno);
	a.flags = 0;
	a.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_GET_ASYNC_FD, &a));
	EXPECT_EQ(EINVAL, errno);
	a.reserved = 0;
	a.flags = SV_EVENT_FD_NONBLOCK;
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_GET_ASYNC_FD, &a));
	EXPECT_LE(0, a.fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(a.fd, F_GETFD));
	pfd.fd = a.fd;
	pfd.events = POLLIN;
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	EXPECT_EQ(-1, read(a.fd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(-1, read(a.fd, &ev, sizeof(ev) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, close(a.fd));
}

TEST(async_fd_after_device_close)
{
	struct sv_get_async_fd a = { .size = sizeof(a) };
	struct sv_async_event ev;
	struct pollfd pfd;
	int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, SV_IOC_GET_ASYNC_FD, &a));
	close(fd);
	pfd.fd = a.fd;
	pfd.events = POLLIN;
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_EQ(POLLERR | POLLHUP, pfd.revents);
	/* Blocking fd, but the queue is closed: EIO at once. */
	EXPECT_EQ(-1, read(a.fd, &ev, sizeof(ev)));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(0, close(a.fd));
}

TEST(close_with_live_objects)
{
	struct sv_create_comp_channel ch;
	struct sv_create_cq c;
	int fd, i, cqs0, chs0;

	cqs0 = sv_nobjs("cq");
	chs0 = sv_nobjs("comp_channel");
	if (cqs0 < 0 || chs0 < 0)
		SKIP(return, "no debugfs object counters");

	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, create_channel(fd, &ch, 0));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, create_cq(fd, &c, 16 << i, i & 1 ? ch.handle : 0));
	EXPECT_EQ(cqs0 + 10, sv_nobjs("cq"));
	EXPECT_EQ(chs0 + 1, sv_nobjs("comp_channel"));
	close(fd);
	EXPECT_EQ(cqs0, sv_nobjs("cq"));
	EXPECT_EQ(chs0, sv_nobjs("comp_channel"));
	close(ch.fd);
}

TEST(many_cqs)
{
	struct sv_create_cq c;
	uint32_t handles[256];
	int fd, i;

	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (i = 0; i < 256; i++) {
		ASSERT_EQ(0, create_cq(fd, &c, 1 + i, 0));
		handles[i] = c.handle;
	}
	for (i = 0; i < 256; i += 2)
		EXPECT_EQ(0, destroy_cq(fd, handles[i]));
	close(fd);
}

TEST_HARNESS_MAIN
