// SPDX-License-Identifier: GPL-2.0
/*
 * Event queues are bounded (kernel/event.c): an async event an object has
 * unread already, and a completion event of a CQ whose last one is unread,
 * are merged into the unread one, so nobody can grow a queue by never
 * reading it. Events still arrive, one per object and type, once read.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/mman.h>

#include "sv_harness.h"
#include "sv_qp_test.h"

#define SV_TEST_HOOKS	"/sys/module/softverbs/parameters/test_hooks"
#define LOOPS		5000

static int modify_state(int fd, uint32_t qp, uint32_t state, uint32_t mask)
{
	struct sv_modify_qp m = {
		.size = sizeof(m), .handle = qp,
		.attr_mask = SV_QP_STATE | mask,
		.attr = { .qp_state = state, .port_num = 1,
			  .qkey = 0x11111111, .en_sqd_async_notify = 1 },
	};

	return sv_ioc(fd, SV_IOC_MODIFY_QP, &m);
}

/* A UD QP in RTS, user_handle uh. */
static uint32_t rts_qp(struct __test_metadata *_metadata, int fd,
		       uint32_t pd, uint32_t cq, uint64_t uh)
{
	struct sv_create_qp c;

	sv_qp_req(&c, SV_QPT_UD, pd, cq, cq, 0);
	c.user_handle = uh;
	EXPECT_EQ(0, sv_ioc(fd, SV_IOC_CREATE_QP, &c));
	EXPECT_EQ(0, modify_state(fd, c.handle, SV_QPS_INIT,
				  SV_QP_PKEY_INDEX | SV_QP_PORT | SV_QP_QKEY));
	EXPECT_EQ(0, modify_state(fd, c.handle, SV_QPS_RTR, 0));
	EXPECT_EQ(0, modify_state(fd, c.handle, SV_QPS_RTS, SV_QP_SQ_PSN));
	return c.handle;
}

/* RTS -> SQD (asking for SQ_DRAINED) -> RTS. */
static int sqd_and_back(int fd, uint32_t qp)
{
	int ret = modify_state(fd, qp, SV_QPS_SQD, SV_QP_EN_SQD_ASYNC_NOTIFY);

	return ret ? ret : modify_state(fd, qp, SV_QPS_RTS, 0);
}

/* Read async events until none is queued; count those of (type, elem). */
static int drain_async(int afd, uint32_t type, uint64_t elem, int *other)
{
	struct sv_async_event ev;
	int n = 0;

	*other = 0;
	while (read(afd, &ev, sizeof(ev)) == sizeof(ev)) {
		if (ev.event_type == type && ev.element == elem)
			n++;
		else
			(*other)++;
	}
	return errno == EAGAIN ? n : -1;
}

FIXTURE(qp) {
	int fd, afd;
	uint32_t pd, cq;
};

FIXTURE_SETUP(qp)
{
	struct sv_get_async_fd g = { .size = sizeof(g),
				     .flags = SV_EVENT_FD_NONBLOCK };

	self->fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_GET_ASYNC_FD, &g));
	self->afd = g.fd;
	self->pd = sv_alloc_pd(self->fd);
	self->cq = sv_create_cq(self->fd);
	ASSERT_NE(0, self->pd);
	ASSERT_NE(0, self->cq);
}

FIXTURE_TEARDOWN(qp)
{
	close(self->afd);
	close(self->fd);
}

/*
 * RTS -> SQD -> RTS many times without reading the async fd: one
 * SQ_DRAINED is queued, not one per loop; once read, the next one comes.
 */
TEST_F(qp, sqd_loop_is_bounded)
{
	struct sv_destroy_qp d = { .size = sizeof(d) };
	uint32_t qp = rts_qp(_metadata, self->fd, self->pd, self->cq, 0xabc);
	int i, other;

	/* Fewer on a slow (debug) kernel: 625 unread drains prove it too. */
	for (i = 0; i < LOOPS / sv_slow(); i++)
		ASSERT_EQ(0, sqd_and_back(self->fd, qp));
	EXPECT_EQ(1, drain_async(self->afd, SV_EVENT_SQ_DRAINED, 0xabc,
				 &other));
	EXPECT_EQ(0, other);
	/* Read: the next drain is reported again, once. */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, sqd_and_back(self->fd, qp));
	EXPECT_EQ(1, drain_async(self->afd, SV_EVENT_SQ_DRAINED, 0xabc,
				 &other));
	/* Unread when destroyed: dropped, and not counted as reported. */
	ASSERT_EQ(0, sqd_and_back(self->fd, qp));
	d.handle = qp;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_DESTROY_QP, &d));
	EXPECT_EQ(2, d.events_reported);
	EXPECT_EQ(0, drain_async(self->afd, SV_EVENT_SQ_DRAINED, 0xabc,
				 &other));
	EXPECT_EQ(0, other);
}

/* The bound is per object: two QPs each keep their own unread event. */
TEST_F(qp, bound_is_per_object)
{
	uint32_t a = rts_qp(_metadata, self->fd, self->pd, self->cq, 1);
	uint32_t b = rts_qp(_metadata, self->fd, self->pd, self->cq, 2);
	struct sv_async_event ev;
	int i;

	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, sqd_and_back(self->fd, a));
		ASSERT_EQ(0, sqd_and_back(self->fd, b));
	}
	/* In the order they first happened. */
	ASSERT_EQ(sizeof(ev), read(self->afd, &ev, sizeof(ev)));
	EXPECT_EQ(SV_EVENT_SQ_DRAINED, ev.event_type);
	EXPECT_EQ(1, ev.element);
	ASSERT_EQ(sizeof(ev), read(self->afd, &ev, sizeof(ev)));
	EXPECT_EQ(SV_EVENT_SQ_DRAINED, ev.event_type);
	EXPECT_EQ(2, ev.element);
	EXPECT_EQ(-1, read(self->afd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, sv_destroy_qp(self->fd, a));
	EXPECT_EQ(0, sv_destroy_qp(self->fd, b));
}

static int set_test_hooks(const char *v)
{
	int fd = open(SV_TEST_HOOKS, O_WRONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, v, 1) == 1 ? 0 : -1;
	close(fd);
	return ret;
}

static int push(int fd, uint32_t cq)
{
	struct sv_test_cq_push p = { .size = sizeof(p), .handle = cq };

	p.cqe.wr_id = 1;
	return sv_ioc(fd, SV_IOC_TEST_CQ_PUSH, &p);
}

struct cq {
	struct sv_create_cq c;
	struct sv_cq_ring *r;
};

static int make_cq(int fd, uint32_t channel, uint64_t uh, struct cq *cq)
{
	memset(&cq->c, 0, sizeof(cq->c));
	cq->c.size = sizeof(cq->c);
	cq->c.cqe = 16;
	cq->c.channel = channel;
	cq->c.user_handle = uh;
	if (sv_ioc(fd, SV_IOC_CREATE_CQ, &cq->c))
		return -1;
	cq->r = mmap(NULL, cq->c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     fd, cq->c.mmap_offset);
	return cq->r == MAP_FAILED ? -1 : 0;
}

/* Arm, produce one CQE, consume it (the ring never fills). */
static int arm_and_push(int fd, struct cq *cq)
{
	int ret;

	__atomic_fetch_or(&cq->r->arm, SV_CQ_ARM_NEXT, __ATOMIC_SEQ_CST);
	ret = push(fd, cq->c.handle);
	__atomic_store_n(&cq->r->cons,
			 __atomic_load_n(&cq->r->prod, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	return ret;
}

/* Completion events of an armed CQ nobody reads coalesce into one. */
TEST(comp_events_coalesce)
{
	struct sv_create_comp_channel ch = { .size = sizeof(ch),
					     .flags = SV_EVENT_FD_NONBLOCK };
	struct sv_destroy_cq d = { .size = sizeof(d) };
	struct sv_comp_event ev;
	struct pollfd pfd;
	struct cq a, b;
	int fd, i, n, other;

	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	if (set_test_hooks("1"))
		SKIP(return, "no test_hooks module parameter");
	ASSERT_EQ(0, sv_ioc(fd, SV_IOC_CREATE_COMP_CHANNEL, &ch));
	ASSERT_EQ(0, make_cq(fd, ch.handle, 0xa, &a));
	ASSERT_EQ(0, make_cq(fd, ch.handle, 0xb, &b));
	for (i = 0; i < LOOPS; i++) {
		ASSERT_EQ(0, arm_and_push(fd, &a));
		if (i % 10 == 0)
			ASSERT_EQ(0, arm_and_push(fd, &b));
	}
	/* One unread event per CQ, in the order they first came. */
	ASSERT_EQ(sizeof(ev), read(ch.fd, &ev, sizeof(ev)));
	EXPECT_EQ(0xa, ev.user_handle);
	EXPECT_EQ(a.c.handle, ev.cq_handle);
	ASSERT_EQ(sizeof(ev), read(ch.fd, &ev, sizeof(ev)));
	EXPECT_EQ(0xb, ev.user_handle);
	EXPECT_EQ(-1, read(ch.fd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
	/* Read, so the next armed completion raises one again. */
	ASSERT_EQ(0, arm_and_push(fd, &a));
	pfd = (struct pollfd){ .fd = ch.fd, .events = POLLIN };
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	for (n = 0, other = 0; read(ch.fd, &ev, sizeof(ev)) == sizeof(ev); n++)
		other += ev.user_handle != 0xa;
	EXPECT_EQ(1, n);
	EXPECT_EQ(0, other);
	/* Disarmed CQEs raise nothing. */
	ASSERT_EQ(0, push(fd, a.c.handle));
	EXPECT_EQ(0, poll(&pfd, 1, 0));

	d.handle = a.c.handle;
	ASSERT_EQ(0, sv_ioc(fd, SV_IOC_DESTROY_CQ, &d));
	EXPECT_EQ(2, d.comp_events_reported);
	d.handle = b.c.handle;
	ASSERT_EQ(0, sv_ioc(fd, SV_IOC_DESTROY_CQ, &d));
	EXPECT_EQ(1, d.comp_events_reported);
	munmap(a.r, a.c.mmap_len);
	munmap(b.r, b.c.mmap_len);
	set_test_hooks("0");
	close(ch.fd);
	close(fd);
}

TEST_HARNESS_MAIN
