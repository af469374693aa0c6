// SPDX-License-Identifier: GPL-2.0
/*
 * CQs, completion channels and the async event fd, through the raw
 * ioctls and mmap: argument checking, the ring mapping and its header,
 * destroy rules (ENOENT, EBUSY), event fds, and cleanup on close.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "sv_harness.h"
#include "sv_test.h"

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
					SV_DEFAULT_MAX_CQE - 1, SV_DEFAULT_MAX_CQE };
	static const uint32_t got[] = { 1, 2, 4, 128, 4096, 8192,
					SV_DEFAULT_MAX_CQE, SV_DEFAULT_MAX_CQE };
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
	EXPECT_EQ(-1, create_cq(self->fd, &c, SV_DEFAULT_MAX_CQE + 1, 0));
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
	c.flags = 4;	/* past SV_CQ_FLAG_CQE_128 (rxmeta_test) */
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

TEST_F(dev, resize_bad_args)
{
	struct sv_resize_cq r = { .size = sizeof(r), .cqe = 16 };
	struct sv_create_cq c;

	ASSERT_EQ(0, create_cq(self->fd, &c, 1, 0));
	r.handle = 999;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_RESIZE_CQ, &r));
	EXPECT_EQ(ENOENT, errno);
	r.handle = c.handle;
	r.cqe = 0;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_RESIZE_CQ, &r));
	EXPECT_EQ(EINVAL, errno);
	r.cqe = SV_DEFAULT_MAX_CQE + 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_RESIZE_CQ, &r));
	EXPECT_EQ(EINVAL, errno);
	r.cqe = 4;
	r.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_RESIZE_CQ, &r));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, destroy_cq(self->fd, c.handle));
}

TEST_F(dev, resize_empty)
{
	struct sv_resize_cq r = { .size = sizeof(r), .cqe = 100 };
	struct sv_create_cq c;
	struct sv_cq_ring *old, *ring;

	ASSERT_EQ(0, create_cq(self->fd, &c, 4, 0));
	old = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		   self->fd, c.mmap_offset);
	ASSERT_NE(MAP_FAILED, old);
	r.handle = c.handle;
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_RESIZE_CQ, &r));
	EXPECT_EQ(128, r.cqe);
	EXPECT_NE(c.mmap_offset, r.mmap_offset);
	EXPECT_EQ(self->pg + 128 * SV_CQE_SIZE, r.mmap_len);
	/* The old offset is gone, the old mapping still readable. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, c.mmap_len, PROT_READ, MAP_SHARED,
				   self->fd, c.mmap_offset));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(4, old->entries);
	ring = mmap(NULL, r.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    self->fd, r.mmap_offset);
	ASSERT_NE(MAP_FAILED, ring);
	EXPECT_EQ(128, ring->entries);
	EXPECT_EQ(0, ring->prod);
	EXPECT_EQ(0, ring->cons);
	/* Smaller again. */
	r.cqe = 1;
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_RESIZE_CQ, &r));
	EXPECT_EQ(1, r.cqe);
	EXPECT_EQ(0, destroy_cq(self->fd, c.handle));
	munmap(old, c.mmap_len);
	munmap(ring, self->pg + 128 * SV_CQE_SIZE);
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

	cqs0 = sv_obj_count("cq");
	chs0 = sv_obj_count("comp_channel");
	if (cqs0 < 0 || chs0 < 0)
		SKIP(return, "no debugfs object counters");

	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, create_channel(fd, &ch, 0));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, create_cq(fd, &c, 16 << i, i & 1 ? ch.handle : 0));
	EXPECT_EQ(cqs0 + 10, sv_obj_count("cq"));
	EXPECT_EQ(chs0 + 1, sv_obj_count("comp_channel"));
	close(fd);
	EXPECT_EQ(cqs0, sv_obj_count("cq"));
	EXPECT_EQ(chs0, sv_obj_count("comp_channel"));
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

/* ---- The producer side, through the test-only SV_IOC_TEST_CQ_PUSH ---- */

#define SV_TEST_HOOKS	"/sys/module/softverbs/parameters/test_hooks"

static int set_test_hooks(const char *v)
{
	int fd = open(SV_TEST_HOOKS, O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, v, 1) == 1 ? 0 : -1;
	close(fd);
	return ret;
}

static int push(int fd, uint32_t cq, uint64_t wr_id, uint32_t status,
		uint32_t solicited)
{
	struct sv_test_cq_push p = { .size = sizeof(p), .handle = cq,
				     .solicited = solicited };

	p.cqe.wr_id = wr_id;
	p.cqe.status = status;
	p.cqe.opcode = 128;		/* IBV_WC_RECV */
	p.cqe.byte_len = 1000 + wr_id;
	p.cqe.imm_data = 0x01020304;
	p.cqe.qp_num = 0x11;
	p.cqe.src_qp = 0x22;
	p.cqe.wc_flags = 2;		/* IBV_WC_WITH_IMM */
	p.cqe.pkey_index = 3;
	p.cqe.slid = 0x44;
	p.cqe.sl = 5;
	p.cqe.dlid_path_bits = 6;
	p.cqe.flow_tag = 0x77;
	return ioctl(fd, SV_IOC_TEST_CQ_PUSH, &p);
}

FIXTURE(ring) {
	int fd;
	struct sv_create_comp_channel ch;
	struct sv_create_cq c;
	struct sv_cq_ring *r;
	struct sv_cqe *cqes;
};

FIXTURE_SETUP(ring)
{
	char *p;

	self->fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	self->r = NULL;
	self->ch.fd = -1;
	if (set_test_hooks("1"))
		SKIP(return, "no test_hooks module parameter");
	ASSERT_EQ(0, create_channel(self->fd, &self->ch, SV_EVENT_FD_NONBLOCK));
	ASSERT_EQ(0, create_cq(self->fd, &self->c, 4, self->ch.handle));
	p = mmap(NULL, self->c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, self->c.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	self->r = (struct sv_cq_ring *)p;
	self->cqes = (struct sv_cqe *)(p + self->c.cqe_offset);
}

FIXTURE_TEARDOWN(ring)
{
	set_test_hooks("0");
	if (self->r)
		munmap(self->r, self->c.mmap_len);
	close(self->fd);
	if (self->ch.fd >= 0)
		close(self->ch.fd);
}

static int comp_event_ready(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0);
}

TEST_F(ring, push_and_consume)
{
	struct sv_cqe *e = &self->cqes[0];

	ASSERT_EQ(0, push(self->fd, self->c.handle, 7, 0, 0));
	EXPECT_EQ(1, __atomic_load_n(&self->r->prod, __ATOMIC_ACQUIRE));
	EXPECT_EQ(7, e->wr_id);
	EXPECT_EQ(0, e->status);
	EXPECT_EQ(128, e->opcode);
	EXPECT_EQ(1007, e->byte_len);
	EXPECT_EQ(0x01020304, e->imm_data);
	EXPECT_EQ(0x11, e->qp_num);
	EXPECT_EQ(0x22, e->src_qp);
	EXPECT_EQ(2, e->wc_flags);
	EXPECT_EQ(3, e->pkey_index);
	EXPECT_EQ(0x44, e->slid);
	EXPECT_EQ(5, e->sl);
	EXPECT_EQ(6, e->dlid_path_bits);
	EXPECT_EQ(0x77, e->flow_tag);
	EXPECT_EQ(0, e->timestamp);	/* not asked for */
	/* Not armed: no event. */
	EXPECT_EQ(0, comp_event_ready(self->ch.fd));
	/* Wraps around the 4 slots while consumed. */
	for (uint32_t i = 1; i < 11; i++) {
		__atomic_store_n(&self->r->cons, i, __ATOMIC_RELEASE);
		ASSERT_EQ(0, push(self->fd, self->c.handle, 100 + i, 0, 0));
		EXPECT_EQ(100 + i, self->cqes[i & 3].wr_id);
	}
	EXPECT_EQ(11, self->r->prod);
	EXPECT_EQ(0, self->r->flags);
}

TEST_F(ring, arm_next)
{
	struct sv_comp_event ev;

	__atomic_fetch_or(&self->r->arm, SV_CQ_ARM_NEXT | 0x100,
			  __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, push(self->fd, self->c.handle, 1, 0, 0));
	/* One event, arm cleared, the library's upper bits kept. */
	EXPECT_EQ(0x100, self->r->arm);
	EXPECT_EQ(1, comp_event_ready(self->ch.fd));
	ASSERT_EQ(sizeof(ev), read(self->ch.fd, &ev, sizeof(ev)));
	EXPECT_EQ(0x1234567890abcdefULL, ev.user_handle);
	EXPECT_EQ(self->c.handle, ev.cq_handle);
	EXPECT_EQ(0, ev.reserved);
	/* Disarmed: the next CQE raises nothing. */
	ASSERT_EQ(0, push(self->fd, self->c.handle, 2, 0, 0));
	EXPECT_EQ(0, comp_event_ready(self->ch.fd));
	EXPECT_EQ(-1, read(self->ch.fd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(ring, arm_solicited)
{
	struct sv_comp_event ev;

	__atomic_fetch_or(&self->r->arm, SV_CQ_ARM_SOLICITED,
			  __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, push(self->fd, self->c.handle, 1, 0, 0));
	EXPECT_EQ(0, comp_event_ready(self->ch.fd));
	EXPECT_EQ(SV_CQ_ARM_SOLICITED, self->r->arm);
	ASSERT_EQ(0, push(self->fd, self->c.handle, 2, 0, 1));
	EXPECT_EQ(1, comp_event_ready(self->ch.fd));
	EXPECT_EQ(0, self->r->arm);
	ASSERT_EQ(sizeof(ev), read(self->ch.fd, &ev, sizeof(ev)));

	/* An error completion satisfies a solicited-only arm. */
	__atomic_store_n(&self->r->cons, 2, __ATOMIC_RELEASE);
	__atomic_fetch_or(&self->r->arm, SV_CQ_ARM_SOLICITED,
			  __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, push(self->fd, self->c.handle, 3, 5, 0));
	EXPECT_EQ(1, comp_event_ready(self->ch.fd));
	ASSERT_EQ(sizeof(ev), read(self->ch.fd, &ev, sizeof(ev)));

	/* Solicited, then next: next wins. */
	__atomic_fetch_or(&self->r->arm, SV_CQ_ARM_SOLICITED,
			  __ATOMIC_SEQ_CST);
	__atomic_fetch_or(&self->r->arm, SV_CQ_ARM_NEXT, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, push(self->fd, self->c.handle, 4, 0, 0));
	EXPECT_EQ(1, comp_event_ready(self->ch.fd));
	EXPECT_EQ(0, self->r->arm);
}

TEST_F(ring, overflow_raises_cq_err)
{
	struct sv_get_async_fd a = { .size = sizeof(a),
				     .flags = SV_EVENT_FD_NONBLOCK };
	struct sv_destroy_cq d = { .size = sizeof(d) };
	struct sv_async_event ev;
	int i;

	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_GET_ASYNC_FD, &a));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, push(self->fd, self->c.handle, i, 0, 0));
	EXPECT_EQ(0, comp_event_ready(a.fd));
	EXPECT_EQ(-1, push(self->fd, self->c.handle, 4, 0, 0));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(SV_CQ_RING_OVERFLOW, self->r->flags);
	EXPECT_EQ(4, self->r->prod);
	/* In error now, even with room. */
	__atomic_store_n(&self->r->cons, 4, __ATOMIC_RELEASE);
	EXPECT_EQ(-1, push(self->fd, self->c.handle, 5, 0, 0));
	EXPECT_EQ(EINVAL, errno);

	EXPECT_EQ(1, comp_event_ready(a.fd));
	ASSERT_EQ(sizeof(ev), read(a.fd, &ev, sizeof(ev)));
	EXPECT_EQ(SV_EVENT_CQ_ERR, ev.event_type);
	EXPECT_EQ(0x1234567890abcdefULL, ev.element);
	EXPECT_EQ(-1, read(a.fd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);

	/* One async event was read, none of the completion kind. */
	d.handle = self->c.handle;
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_DESTROY_CQ, &d));
	EXPECT_EQ(0, d.comp_events_reported);
	EXPECT_EQ(1, d.async_events_reported);
	close(a.fd);
}

TEST_F(ring, bogus_cons_is_full)
{
	/* Userspace lies about cons: the kernel sees a full ring. */
	__atomic_store_n(&self->r->cons, 0x80000000U, __ATOMIC_RELEASE);
	EXPECT_EQ(-1, push(self->fd, self->c.handle, 1, 0, 0));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(0, self->r->prod);
	EXPECT_EQ(SV_CQ_RING_OVERFLOW, self->r->flags);
}

TEST_F(ring, ignore_overrun)
{
	struct sv_create_cq c;
	struct sv_cq_ring *r;
	int i;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.cqe = 2;
	c.flags = SV_CQ_FLAG_IGNORE_OVERRUN;
	c.wc_flags = 1ULL << 11;	/* WALLCLOCK timestamp */
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_CREATE_CQ, &c));
	r = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, c.mmap_offset);
	ASSERT_NE(MAP_FAILED, r);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, push(self->fd, c.handle, i, 0, 0));
	EXPECT_NE(0, ((struct sv_cqe *)((char *)r + c.cqe_offset))->timestamp);
	EXPECT_EQ(-1, push(self->fd, c.handle, 2, 0, 0));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(0, r->flags);
	/* Room again: it goes on. */
	__atomic_store_n(&r->cons, 1, __ATOMIC_RELEASE);
	EXPECT_EQ(0, push(self->fd, c.handle, 3, 0, 0));
	EXPECT_EQ(3, r->prod);
	EXPECT_EQ(0, destroy_cq(self->fd, c.handle));
	munmap(r, c.mmap_len);
}

TEST_F(ring, destroy_counts_read_events_only)
{
	struct sv_destroy_cq d = { .size = sizeof(d) };
	struct sv_comp_event ev;

	/* Two events: one read, one still queued when the CQ goes. */
	__atomic_fetch_or(&self->r->arm, SV_CQ_ARM_NEXT, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, push(self->fd, self->c.handle, 1, 0, 0));
	ASSERT_EQ(sizeof(ev), read(self->ch.fd, &ev, sizeof(ev)));
	__atomic_fetch_or(&self->r->arm, SV_CQ_ARM_NEXT, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, push(self->fd, self->c.handle, 2, 0, 0));
	EXPECT_EQ(1, comp_event_ready(self->ch.fd));
	d.handle = self->c.handle;
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_DESTROY_CQ, &d));
	EXPECT_EQ(1, d.comp_events_reported);
	EXPECT_EQ(0, d.async_events_reported);
	/* The unread one went with the CQ. */
	EXPECT_EQ(0, comp_event_ready(self->ch.fd));
	EXPECT_EQ(-1, push(self->fd, self->c.handle, 3, 0, 0));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(0, destroy_channel(self->fd, self->ch.handle));
}

TEST_F(ring, blocking_read_wakes_on_event)
{
	struct sv_comp_event ev;
	pid_t pid;
	int st;

	ASSERT_EQ(0, fcntl(self->ch.fd, F_SETFL, 0));
	__atomic_fetch_or(&self->r->arm, SV_CQ_ARM_NEXT, __ATOMIC_SEQ_CST);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(read(self->ch.fd, &ev, sizeof(ev)) == sizeof(ev) &&
		      ev.cq_handle == self->c.handle ? 0 : 1);
	usleep(200000);
	ASSERT_EQ(0, push(self->fd, self->c.handle, 1, 0, 0));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_F(ring, push_bad_args)
{
	struct sv_test_cq_push p = { .size = sizeof(p),
				     .handle = self->c.handle };

	p.solicited = 2;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_TEST_CQ_PUSH, &p));
	EXPECT_EQ(EINVAL, errno);
	p.solicited = 0;
	p.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_TEST_CQ_PUSH, &p));
	EXPECT_EQ(EINVAL, errno);
	p.reserved = 0;
	p.handle = self->ch.handle;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_TEST_CQ_PUSH, &p));
	EXPECT_EQ(EINVAL, errno);
	p.handle = 999;
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_TEST_CQ_PUSH, &p));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(ring, resize_keeps_pending)
{
	struct sv_resize_cq r = { .size = sizeof(r), .handle = self->c.handle };
	struct sv_cq_ring *ring;
	struct sv_cqe *cqes;
	int i;

	/* 4 slots: produce 6, consume 3, so 3 are pending across the wrap. */
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, push(self->fd, self->c.handle, i, 0, 0));
	__atomic_store_n(&self->r->cons, 2, __ATOMIC_RELEASE);
	for (i = 4; i < 6; i++)
		ASSERT_EQ(0, push(self->fd, self->c.handle, i, 0, 0));
	__atomic_store_n(&self->r->cons, 3, __ATOMIC_RELEASE);
	__atomic_fetch_or(&self->r->arm, SV_CQ_ARM_NEXT, __ATOMIC_SEQ_CST);

	r.cqe = 2;		/* fewer than pending */
	EXPECT_EQ(-1, ioctl(self->fd, SV_IOC_RESIZE_CQ, &r));
	EXPECT_EQ(EINVAL, errno);
	r.cqe = 3;
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_RESIZE_CQ, &r));
	EXPECT_EQ(4, r.cqe);
	ring = mmap(NULL, r.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    self->fd, r.mmap_offset);
	ASSERT_NE(MAP_FAILED, ring);
	cqes = (struct sv_cqe *)((char *)ring + self->c.cqe_offset);
	EXPECT_EQ(3, ring->prod);
	EXPECT_EQ(0, ring->cons);
	EXPECT_EQ(SV_CQ_ARM_NEXT, ring->arm);
	EXPECT_EQ(3, cqes[0].wr_id);
	EXPECT_EQ(4, cqes[1].wr_id);
	EXPECT_EQ(5, cqes[2].wr_id);
	/* The kernel produces into the new ring, and the arm fires. */
	ASSERT_EQ(0, push(self->fd, self->c.handle, 6, 0, 0));
	EXPECT_EQ(4, ring->prod);
	EXPECT_EQ(6, cqes[3].wr_id);
	EXPECT_EQ(6, self->r->prod);	/* the old ring is left alone */
	EXPECT_EQ(1, comp_event_ready(self->ch.fd));
	EXPECT_EQ(-1, push(self->fd, self->c.handle, 7, 0, 0));
	EXPECT_EQ(ENOSPC, errno);
	munmap(ring, r.mmap_len);
}

TEST_F(ring, concurrent_producer)
{
	const uint32_t n = 3000;
	uint32_t got = 0, cons = 0, prod;
	struct sv_create_cq c;
	struct sv_cq_ring *r;
	struct sv_cqe *cqes;
	pid_t pid;
	int st;

	/* Overruns must not put this CQ in error: the producer retries. */
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.cqe = 4;
	c.flags = SV_CQ_FLAG_IGNORE_OVERRUN;
	ASSERT_EQ(0, ioctl(self->fd, SV_IOC_CREATE_CQ, &c));
	r = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, c.mmap_offset);
	ASSERT_NE(MAP_FAILED, r);
	cqes = (struct sv_cqe *)((char *)r + c.cqe_offset);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		for (uint32_t i = 0; i < n; i++)
			while (push(self->fd, c.handle, i, 0, 0))
				if (errno != ENOSPC)
					_exit(1);
		_exit(0);
	}
	while (got < n) {
		prod = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE);
		if (prod == cons) {
			if (waitpid(pid, &st, WNOHANG) == pid &&
			    __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE) == cons)
				break;	/* the producer is gone */
			sched_yield();	/* the VM may have one CPU */
			continue;
		}
		if (prod - cons > 4 || cqes[cons & 3].wr_id != got ||
		    cqes[cons & 3].byte_len != 1000 + got)
			break;
		got++;
		cons++;
		__atomic_store_n(&r->cons, cons, __ATOMIC_RELEASE);
	}
	EXPECT_EQ(n, got);
	if (got < n)
		kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	EXPECT_EQ(n, r->prod);
	EXPECT_EQ(0, r->flags);
	EXPECT_EQ(0, destroy_cq(self->fd, c.handle));
	munmap(r, c.mmap_len);
}

TEST(test_hook_off_by_default)
{
	struct sv_test_cq_push p = { .size = sizeof(p) };
	struct sv_create_cq c;
	int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, create_cq(fd, &c, 1, 0));
	p.handle = c.handle;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_TEST_CQ_PUSH, &p));
	EXPECT_EQ(ENOTTY, errno);
	close(fd);
}

TEST_HARNESS_MAIN
