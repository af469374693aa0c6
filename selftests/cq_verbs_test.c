// SPDX-License-Identifier: GPL-2.0
/*
 * CQs, completion channels and async events through the verbs API
 * (libsoftverbs): empty polls, arming, non-blocking event reads, the
 * documented errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "sv_test.h"

FIXTURE(ctx) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
};

FIXTURE_SETUP(ctx)
{
	int i, n;

	self->list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, self->list) TH_LOG("%s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(self->list[i]), "softverbs0"))
			break;
	ASSERT_LT(i, n);
	self->ctx = ibv_open_device(self->list[i]);
	ASSERT_NE(NULL, self->ctx) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, ibv_query_device(self->ctx, &self->attr));
}

FIXTURE_TEARDOWN(ctx)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	ibv_free_device_list(self->list);
}

TEST_F(ctx, create_poll_destroy)
{
	struct ibv_wc wc[4];
	struct ibv_cq *cq;
	int ctxv;

	cq = ibv_create_cq(self->ctx, 10, &ctxv, NULL, 0);
	ASSERT_NE(NULL, cq) TH_LOG("%s", strerror(errno));
	EXPECT_LE(10, cq->cqe);
	EXPECT_EQ(self->ctx, cq->context);
	EXPECT_EQ(&ctxv, cq->cq_context);
	EXPECT_EQ(NULL, cq->channel);
	EXPECT_EQ(0, ibv_poll_cq(cq, 4, wc));
	EXPECT_EQ(0, ibv_poll_cq(cq, 0, wc));
	EXPECT_EQ(0, ibv_req_notify_cq(cq, 0));
	EXPECT_EQ(0, ibv_req_notify_cq(cq, 1));
	EXPECT_EQ(0, ibv_poll_cq(cq, 4, wc));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(ctx, create_limits)
{
	struct ibv_cq *cq;

	EXPECT_EQ(1, self->ctx->num_comp_vectors);
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, 0, NULL, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, -1, NULL, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, self->attr.max_cqe + 1,
				      NULL, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, 1, NULL, NULL,
				      self->ctx->num_comp_vectors));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, 1, NULL, NULL, -1));
	EXPECT_EQ(EINVAL, errno);
	cq = ibv_create_cq(self->ctx, self->attr.max_cqe, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	EXPECT_EQ(self->attr.max_cqe, cq->cqe);
	EXPECT_EQ(EOPNOTSUPP, ibv_resize_cq(cq, 16));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(ctx, channel)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq, *got;
	struct pollfd pfd;
	void *cookie;

	ch = ibv_create_comp_channel(self->ctx);
	ASSERT_NE(NULL, ch) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(self->ctx, ch->context);
	EXPECT_LE(0, ch->fd);
	cq = ibv_create_cq(self->ctx, 16, &cookie, ch, 0);
	ASSERT_NE(NULL, cq);
	EXPECT_EQ(ch, cq->channel);
	EXPECT_EQ(EBUSY, ibv_destroy_comp_channel(ch));

	EXPECT_EQ(0, ibv_req_notify_cq(cq, 0));
	ASSERT_EQ(0, fcntl(ch->fd, F_SETFL,
			   fcntl(ch->fd, F_GETFL) | O_NONBLOCK));
	EXPECT_EQ(-1, ibv_get_cq_event(ch, &got, &cookie));
	EXPECT_EQ(EAGAIN, errno);
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	EXPECT_EQ(0, poll(&pfd, 1, 0));

	ibv_ack_cq_events(cq, 0);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
}

TEST_F(ctx, async_fd)
{
	struct ibv_async_event ev;

	ASSERT_LE(0, self->ctx->async_fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(self->ctx->async_fd, F_GETFD));
	ASSERT_EQ(0, fcntl(self->ctx->async_fd, F_SETFL,
			   fcntl(self->ctx->async_fd, F_GETFL) | O_NONBLOCK));
	EXPECT_EQ(-1, ibv_get_async_event(self->ctx, &ev));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(ctx, cq_ex)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 8,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};
	struct ibv_poll_cq_attr pa = {};
	struct ibv_cq_ex *cq;

	cq = ibv_create_cq_ex(self->ctx, &a);
	ASSERT_NE(NULL, cq) TH_LOG("%s", strerror(errno));
	EXPECT_LE(8, cq->cqe);
	EXPECT_EQ(ENOENT, ibv_start_poll(cq, &pa));
	pa.comp_mask = 1;
	EXPECT_EQ(EINVAL, ibv_start_poll(cq, &pa));
	EXPECT_EQ(0, ibv_req_notify_cq(ibv_cq_ex_to_cq(cq), 0));
	EXPECT_EQ(0, ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1,
				 &(struct ibv_wc){}));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));

	/* Unsupported: TM_INFO, parent domains, unknown flags. */
	a.wc_flags = IBV_WC_EX_WITH_TM_INFO;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);
	a.wc_flags = 0;
	a.flags = 1 << 7;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);
	a.flags = 0;
	a.comp_mask = 1 << 5;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	a.comp_mask = 0;
	a.cqe = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(ctx, close_with_live_cqs)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);

	ASSERT_NE(NULL, ch);
	ASSERT_NE(NULL, ibv_create_cq(self->ctx, 4, NULL, ch, 0));
	ASSERT_NE(NULL, ibv_create_cq(self->ctx, 4, NULL, NULL, 0));
	/* Closing the context releases the kernel objects. */
	EXPECT_EQ(0, ibv_close_device(self->ctx));
	self->ctx = NULL;
}

TEST_HARNESS_MAIN
