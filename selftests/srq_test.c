// SPDX-License-Identifier: GPL-2.0
/*
 * SRQs through the raw ioctls: create limits, modify (limit, resize),
 * query, destroy ordering against QPs and the PD.
 */
#include <fcntl.h>

#include "sv_harness.h"
#include "sv_qp_test.h"

FIXTURE(dev) {
	int fd;
	uint32_t pd;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", SV_DEV0, strerror(errno));
	self->pd = sv_alloc_pd(self->fd);
	ASSERT_NE(0, self->pd);
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

static int modify_srq(int fd, uint32_t srq, uint32_t mask, uint32_t max_wr,
		      uint32_t limit)
{
	struct sv_modify_srq m = { .size = sizeof(m), .handle = srq,
				   .attr_mask = mask, .max_wr = max_wr,
				   .srq_limit = limit };

	return sv_ioc(fd, SV_IOC_MODIFY_SRQ, &m);
}

static int query_srq(int fd, uint32_t srq, struct sv_query_srq *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->handle = srq;
	return sv_ioc(fd, SV_IOC_QUERY_SRQ, q);
}

TEST_F(dev, create_query_destroy)
{
	struct sv_create_srq c = { .size = sizeof(c), .pd_handle = self->pd,
				   .max_wr = 100, .max_sge = 3,
				   .user_handle = 5 };
	struct sv_destroy_srq d = { .size = sizeof(d) };
	struct sv_query_srq q;

	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_SRQ, &c));
	EXPECT_NE(0, c.handle);
	EXPECT_EQ(128, c.max_wr);
	EXPECT_EQ(3, c.max_sge);
	ASSERT_EQ(0, query_srq(self->fd, c.handle, &q));
	EXPECT_EQ(128, q.max_wr);
	EXPECT_EQ(3, q.max_sge);
	EXPECT_EQ(0, q.srq_limit);
	d.handle = c.handle;
	d.events_reported = 7;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_DESTROY_SRQ, &d));
	EXPECT_EQ(0, d.events_reported);
	EXPECT_EQ(ENOENT, sv_ioc(self->fd, SV_IOC_DESTROY_SRQ, &d));
	EXPECT_EQ(ENOENT, query_srq(self->fd, c.handle, &q));
}

TEST_F(dev, create_limits)
{
	uint32_t srq;

	/* 0 asks for the smallest, as on mlx5. */
	ASSERT_EQ(0, sv_create_srq(self->fd, self->pd, 0, 1, &srq));
	EXPECT_EQ(0, sv_destroy_srq(self->fd, srq));
	EXPECT_EQ(EINVAL, sv_create_srq(self->fd, self->pd,
					SV_DEFAULT_MAX_SRQ_WR + 1, 1, &srq));
	EXPECT_EQ(EINVAL, sv_create_srq(self->fd, self->pd, 1,
					SV_MAX_SRQ_SGE + 1, &srq));
	EXPECT_EQ(EINVAL, sv_create_srq(self->fd, self->pd, 0xffffffff, 1,
					&srq));
	ASSERT_EQ(0, sv_create_srq(self->fd, self->pd, SV_DEFAULT_MAX_SRQ_WR,
				   SV_MAX_SRQ_SGE, &srq));
	EXPECT_EQ(0, sv_destroy_srq(self->fd, srq));
	ASSERT_EQ(0, sv_create_srq(self->fd, self->pd, 1, 0, &srq));
	EXPECT_EQ(0, sv_destroy_srq(self->fd, srq));
}

TEST_F(dev, create_bad_args)
{
	struct sv_create_srq c = { .size = sizeof(c), .pd_handle = self->pd,
				   .max_wr = 4, .max_sge = 1 };
	uint32_t srq, cq = sv_create_cq(self->fd);

	EXPECT_EQ(ENOENT, sv_create_srq(self->fd, 0, 4, 1, &srq));
	EXPECT_EQ(ENOENT, sv_create_srq(self->fd, 77, 4, 1, &srq));
	EXPECT_EQ(EINVAL, sv_create_srq(self->fd, cq, 4, 1, &srq));
	c.reserved = 1;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_SRQ, &c));
	c.reserved = 0;
	c.size = SV_CREATE_SRQ_SIZE_VER0 - 8;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_SRQ, &c));
	/* Nothing left in use. */
	EXPECT_EQ(0, sv_dealloc_pd(self->fd, self->pd));
}

TEST_F(dev, modify)
{
	struct sv_query_srq q;
	struct sv_modify_srq m = { .size = sizeof(m) };
	uint32_t srq;

	ASSERT_EQ(0, sv_create_srq(self->fd, self->pd, 16, 1, &srq));
	EXPECT_EQ(0, modify_srq(self->fd, srq, SV_SRQ_LIMIT, 0, 10));
	ASSERT_EQ(0, query_srq(self->fd, srq, &q));
	EXPECT_EQ(10, q.srq_limit);
	EXPECT_EQ(0, modify_srq(self->fd, srq, SV_SRQ_LIMIT, 0, 16));
	EXPECT_EQ(EINVAL, modify_srq(self->fd, srq, SV_SRQ_LIMIT, 0, 17));
	ASSERT_EQ(0, query_srq(self->fd, srq, &q));
	EXPECT_EQ(16, q.srq_limit);
	EXPECT_EQ(0, modify_srq(self->fd, srq, SV_SRQ_LIMIT, 0, 0));
	/* Resizing: a new ring, then the limit against its size. */
	EXPECT_EQ(0, modify_srq(self->fd, srq, SV_SRQ_MAX_WR, 32, 0));
	ASSERT_EQ(0, query_srq(self->fd, srq, &q));
	EXPECT_EQ(32, q.max_wr);
	EXPECT_EQ(0, modify_srq(self->fd, srq, SV_SRQ_MAX_WR | SV_SRQ_LIMIT,
				20, 30));
	ASSERT_EQ(0, query_srq(self->fd, srq, &q));
	EXPECT_EQ(32, q.max_wr);
	EXPECT_EQ(30, q.srq_limit);
	/* Not below the armed limit, nor 0, nor with an old caller's size. */
	EXPECT_EQ(EINVAL, modify_srq(self->fd, srq, SV_SRQ_MAX_WR, 16, 0));
	EXPECT_EQ(EINVAL, modify_srq(self->fd, srq,
				     SV_SRQ_MAX_WR | SV_SRQ_LIMIT, 16, 17));
	EXPECT_EQ(0, modify_srq(self->fd, srq, SV_SRQ_LIMIT, 0, 0));
	EXPECT_EQ(EINVAL, modify_srq(self->fd, srq, SV_SRQ_MAX_WR, 0, 0));
	m.handle = srq;
	m.attr_mask = SV_SRQ_MAX_WR;
	m.max_wr = 64;
	m.size = SV_MODIFY_SRQ_SIZE_VER0;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_MODIFY_SRQ, &m));
	m.size = sizeof(m);
	m.attr_mask = 0;
	EXPECT_EQ(0, modify_srq(self->fd, srq, SV_SRQ_MAX_WR, 16, 0));
	EXPECT_EQ(EINVAL, modify_srq(self->fd, srq, 1 << 2, 0, 0));
	EXPECT_EQ(0, modify_srq(self->fd, srq, 0, 0, 0));
	EXPECT_EQ(ENOENT, modify_srq(self->fd, 999, SV_SRQ_LIMIT, 0, 1));
	EXPECT_EQ(EINVAL, modify_srq(self->fd, self->pd, SV_SRQ_LIMIT, 0, 1));
	m.handle = srq;
	m.reserved = 1;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_MODIFY_SRQ, &m));
	ASSERT_EQ(0, query_srq(self->fd, srq, &q));
	EXPECT_EQ(0, q.srq_limit);
	EXPECT_EQ(16, q.max_wr);
}

TEST_F(dev, destroy_order)
{
	uint32_t srq, cq = sv_create_cq(self->fd);
	struct sv_create_qp c;

	ASSERT_EQ(0, sv_create_srq(self->fd, self->pd, 16, 1, &srq));
	EXPECT_EQ(EBUSY, sv_dealloc_pd(self->fd, self->pd));
	sv_qp_req(&c, SV_QPT_UD, self->pd, cq, cq, srq);
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	EXPECT_EQ(EBUSY, sv_destroy_srq(self->fd, srq));
	EXPECT_EQ(0, sv_destroy_qp(self->fd, c.handle));
	EXPECT_EQ(0, sv_destroy_srq(self->fd, srq));
	EXPECT_EQ(0, sv_dealloc_pd(self->fd, self->pd));
}

TEST(foreign_srq)
{
	int a = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	int b = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	struct sv_query_srq q = { .size = sizeof(q) };
	uint32_t srq;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, sv_create_srq(a, sv_alloc_pd(a), 4, 1, &srq));
	q.handle = srq;
	EXPECT_EQ(ENOENT, sv_ioc(b, SV_IOC_QUERY_SRQ, &q));
	EXPECT_EQ(ENOENT, sv_destroy_srq(b, srq));
	EXPECT_EQ(0, sv_ioc(a, SV_IOC_QUERY_SRQ, &q));
	close(a);
	close(b);
}

TEST_HARNESS_MAIN
