// SPDX-License-Identifier: GPL-2.0
/*
 * Completion timestamps (Documentation/cq-and-events.rst, "Timestamps"):
 * the device clock (hca_core_clock, completion_timestamp_mask,
 * ibv_query_rt_values_ex()) and the stamps of completions on softverbs0
 * (RC traffic), checked against clocks the test reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <linux/if_ether.h>
#include <linux/virtio_net.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "sv_harness.h"
#include "sv_dp_test.h"
#include "sv_test.h"
#include "softverbs-abi.h"

#define NRECV	32
#define SLOT	2048

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- the verbs side ---- */

struct rxc {
	uint64_t wr_id;
	int status, opcode;
	uint32_t byte_len, qp_num, tag, wc_flags;
	uint16_t cvlan;
	uint64_t ts, wall;
};

/* One completion of @cq within @ms, every field read: 1, else 0. */
static int cq_poll(struct ibv_cq_ex *cq, struct rxc *c, int ms)
{
	struct ibv_poll_cq_attr pa = {};
	int waited = 0;

	for (;;) {
		if (!ibv_start_poll(cq, &pa)) {
			c->wr_id = cq->wr_id;
			c->status = cq->status;
			c->opcode = ibv_wc_read_opcode(cq);
			c->byte_len = ibv_wc_read_byte_len(cq);
			c->qp_num = ibv_wc_read_qp_num(cq);
			c->wc_flags = ibv_wc_read_wc_flags(cq);
			c->tag = ibv_wc_read_flow_tag(cq);
			c->cvlan = ibv_wc_read_cvlan(cq);
			c->ts = ibv_wc_read_completion_ts(cq);
			c->wall = ibv_wc_read_completion_wallclock_ns(cq);
			ibv_end_poll(cq);
			return 1;
		}
		if (waited >= ms * sv_slow())
			return 0;
		usleep(1000);
		waited++;
	}
}

static struct ibv_cq_ex *mkcq(struct ibv_context *ctx, uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 64, .wc_flags = wc_flags };

	return ibv_create_cq_ex(ctx, &a);
}

/* A receive queue's buffers: NRECV slots of SLOT bytes. */
struct rbuf {
	char *buf;
	struct ibv_mr *mr;
};

static int rbuf_init(struct ibv_pd *pd, struct rbuf *r)
{
	r->buf = aligned_alloc(4096, NRECV * SLOT);
	if (!r->buf)
		return -1;
	memset(r->buf, 0, NRECV * SLOT);
	r->mr = ibv_reg_mr(pd, r->buf, NRECV * SLOT, IBV_ACCESS_LOCAL_WRITE);
	return r->mr ? 0 : -1;
}

static void rbuf_fini(struct rbuf *r)
{
	if (r->mr)
		ibv_dereg_mr(r->mr);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

/* ==== the device clock and completion stamps, on softverbs0 ==== */

FIXTURE(clk) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	struct rbuf b;
};

FIXTURE_SETUP(clk)
{
	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &self->gid));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	ASSERT_EQ(0, rbuf_init(self->pd, &self->b));
}

FIXTURE_TEARDOWN(clk)
{
	rbuf_fini(&self->b);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
}

/* The clock as ibv_query_device_ex() describes it. */
TEST_F(clk, device_attrs)
{
	struct ibv_device_attr_ex ex;

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_EQ(1000000, ex.hca_core_clock);	/* kHz: 1 GHz, ns ticks */
	EXPECT_EQ(0x7fffffffffffffffULL, ex.completion_timestamp_mask);
	/* No netdev: no raw packet offloads. */
	EXPECT_EQ(0, ex.raw_packet_caps);
	EXPECT_FALSE(ex.device_cap_flags_ex & IBV_DEVICE_RAW_IP_CSUM);
}

/*
 * ibv_query_rt_values_ex: the device clock is CLOCK_MONOTONIC_RAW, read
 * without a syscall, in tv_nsec as mlx5 reports its cycles.
 */
TEST_F(clk, rt_values)
{
	struct ibv_values_ex v = {};
	uint64_t t0, t1;

	EXPECT_EQ(0, ibv_query_rt_values_ex(self->ctx, &v));
	EXPECT_EQ(0, v.comp_mask);
	v.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	t0 = now_ns(CLOCK_MONOTONIC_RAW);
	ASSERT_EQ(0, ibv_query_rt_values_ex(self->ctx, &v));
	t1 = now_ns(CLOCK_MONOTONIC_RAW);
	EXPECT_EQ(IBV_VALUES_MASK_RAW_CLOCK, v.comp_mask);
	EXPECT_EQ(0, v.raw_clock.tv_sec);
	EXPECT_LE(t0, (uint64_t)v.raw_clock.tv_nsec);
	EXPECT_GE(t1, (uint64_t)v.raw_clock.tv_nsec);
	/* Unknown bits: EINVAL, as mlx5 (check_comp_mask). */
	v.comp_mask = IBV_VALUES_MASK_RAW_CLOCK | 2;
	EXPECT_EQ(EINVAL, ibv_query_rt_values_ex(self->ctx, &v));
	v.comp_mask = 1U << 31;
	EXPECT_EQ(EINVAL, ibv_query_rt_values_ex(self->ctx, &v));
}

static int rt_clock(struct ibv_context *ctx, uint64_t *t)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	int ret = ibv_query_rt_values_ex(ctx, &v);

	*t = v.raw_clock.tv_nsec;
	return ret;
}

static struct ibv_qp *mkrc(FIXTURE_DATA(clk) *self, struct ibv_cq_ex *scq,
			   struct ibv_cq_ex *rcq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = ibv_cq_ex_to_cq(scq),
		.recv_cq = ibv_cq_ex_to_cq(rcq),
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(self->pd, &ia);
}

/*
 * Every CQ gets the stamps it asked for and no other: the device clock
 * (the clock ibv_query_rt_values_ex() reads: taken between two readings
 * of it) and the wall clock; along each CQ they go forward.
 */
TEST_F(clk, completion_stamps)
{
	struct ibv_cq_ex *both, *dev, *wall, *none;
	uint64_t last[4] = {}, r0, r1, w0, w1, q0, q1;
	struct ibv_qp *a, *b;
	struct rxc c;
	int i;

	both = mkcq(self->ctx, IBV_WC_STANDARD_FLAGS |
		    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
		    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK);
	dev = mkcq(self->ctx, IBV_WC_STANDARD_FLAGS |
		   IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
	wall = mkcq(self->ctx, IBV_WC_STANDARD_FLAGS |
		    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK);
	none = mkcq(self->ctx, IBV_WC_STANDARD_FLAGS);
	ASSERT_TRUE(both && dev && wall && none);
	/* a sends on both and receives on dev; b on wall and none. */
	a = mkrc(self, both, dev);
	b = mkrc(self, wall, none);
	ASSERT_TRUE(a && b);
	ASSERT_EQ(0, qp_init(a, IBV_ACCESS_LOCAL_WRITE));
	ASSERT_EQ(0, qp_init(b, IBV_ACCESS_LOCAL_WRITE));
	ASSERT_EQ(0, qp_rtr_rts(a, b->qp_num, &self->gid, 7, 1, 7));
	ASSERT_EQ(0, qp_rtr_rts(b, a->qp_num, &self->gid, 7, 1, 7));

	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, rt_clock(self->ctx, &q0));
		r0 = now_ns(CLOCK_MONOTONIC_RAW);
		w0 = now_ns(CLOCK_REALTIME);
		ASSERT_EQ(0, post_recv(b, self->b.mr, self->b.buf, 64, i));
		ASSERT_EQ(0, post_recv(a, self->b.mr, self->b.buf + 64, 64, i));
		ASSERT_EQ(0, post_send(a, IBV_WR_SEND, self->b.mr->lkey,
				       self->b.buf + 128, 32, i,
				       IBV_SEND_SIGNALED, 0, 0));
		ASSERT_EQ(0, post_send(b, IBV_WR_SEND, self->b.mr->lkey,
				       self->b.buf + 192, 32, i,
				       IBV_SEND_SIGNALED, 0, 0));

		/* a's send: both stamps */
		ASSERT_EQ(1, cq_poll(both, &c, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, c.status);
		EXPECT_EQ(IBV_WC_SEND, c.opcode);
		ASSERT_EQ(0, rt_clock(self->ctx, &q1));
		r1 = now_ns(CLOCK_MONOTONIC_RAW);
		w1 = now_ns(CLOCK_REALTIME);
		EXPECT_LE(q0, c.ts);
		EXPECT_GE(q1, c.ts);
		EXPECT_LE(r0, c.ts);
		EXPECT_GE(r1, c.ts);
		EXPECT_LE(w0, c.wall);
		EXPECT_GE(w1, c.wall);
		EXPECT_LT(last[0], c.ts);
		EXPECT_LT(last[1], c.wall);
		last[0] = c.ts;
		last[1] = c.wall;

		/* b's receive: none */
		ASSERT_EQ(1, cq_poll(none, &c, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, c.status);
		EXPECT_EQ(IBV_WC_RECV, c.opcode);
		EXPECT_EQ(0, c.ts);
		EXPECT_EQ(0, c.wall);

		/* b's send: the wall clock only */
		ASSERT_EQ(1, cq_poll(wall, &c, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, c.status);
		w1 = now_ns(CLOCK_REALTIME);
		EXPECT_EQ(0, c.ts);
		EXPECT_LE(w0, c.wall);
		EXPECT_GE(w1, c.wall);
		EXPECT_LT(last[2], c.wall);
		last[2] = c.wall;

		/* a's receive: the device clock only */
		ASSERT_EQ(1, cq_poll(dev, &c, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, c.status);
		r1 = now_ns(CLOCK_MONOTONIC_RAW);
		EXPECT_EQ(0, c.wall);
		EXPECT_LE(r0, c.ts);
		EXPECT_GE(r1, c.ts);
		EXPECT_LT(last[3], c.ts);
		last[3] = c.ts;
	}
	EXPECT_EQ(0, ibv_destroy_qp(a));
	EXPECT_EQ(0, ibv_destroy_qp(b));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(both)));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(dev)));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(wall)));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(none)));
}

/* Stamps of CQEs not polled yet survive ibv_resize_cq(). */
TEST_F(clk, stamps_survive_resize)
{
	uint64_t r0, r1, w0, w1, last_ts = 0, last_wall = 0;
	struct ibv_cq_ex *cq;
	struct ibv_qp *a;
	struct rxc c;
	int i;

	cq = mkcq(self->ctx, IBV_WC_STANDARD_FLAGS |
		  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
		  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK);
	ASSERT_NE(NULL, cq);
	a = mkrc(self, cq, cq);
	ASSERT_NE(NULL, a);
	ASSERT_EQ(0, qp_init(a, IBV_ACCESS_LOCAL_WRITE));
	ASSERT_EQ(0, qp_rtr_rts(a, a->qp_num, &self->gid, 7, 1, 7));
	r0 = now_ns(CLOCK_MONOTONIC_RAW);
	w0 = now_ns(CLOCK_REALTIME);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, post_recv(a, self->b.mr, self->b.buf + i * 64,
				       64, 100 + i));
		ASSERT_EQ(0, post_send(a, IBV_WR_SEND, self->b.mr->lkey,
				       self->b.buf + 512, 16, i,
				       IBV_SEND_SIGNALED, 0, 0));
	}
	/* Eight CQEs come (the engine is quick), then the ring moves. */
	usleep(300000 * sv_slow());
	ASSERT_EQ(0, ibv_resize_cq(ibv_cq_ex_to_cq(cq), 256));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(1, cq_poll(cq, &c, 5000));
		EXPECT_EQ(IBV_WC_SUCCESS, c.status);
		EXPECT_LE(r0, c.ts);
		EXPECT_LE(w0, c.wall);
		EXPECT_LE(last_ts, c.ts);
		EXPECT_LE(last_wall, c.wall);
		last_ts = c.ts;
		last_wall = c.wall;
	}
	r1 = now_ns(CLOCK_MONOTONIC_RAW);
	w1 = now_ns(CLOCK_REALTIME);
	EXPECT_GE(r1, last_ts);
	EXPECT_GE(w1, last_wall);
	EXPECT_EQ(0, cq_poll(cq, &c, 0));
	EXPECT_EQ(0, ibv_destroy_qp(a));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
}

/*
 * The ring ABI: a CQ created with SV_CQ_FLAG_CQE_128 has 128-byte
 * entries, others 64; unknown flags are EINVAL.
 */
TEST(cqe_128_ring)
{
	struct sv_create_cq c = { .size = sizeof(c), .cqe = 64 };
	struct sv_destroy_cq d = { .size = sizeof(d) };
	struct sv_cq_ring *r;
	int fd;

	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	c.flags = 0x4;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_CREATE_CQ, &c));
	EXPECT_EQ(EINVAL, errno);
	c.flags = SV_CQ_FLAG_CQE_128;
	c.wc_flags = SV_CQ_WC_TIMESTAMPS;
	ASSERT_EQ(0, ioctl(fd, SV_IOC_CREATE_CQ, &c));
	EXPECT_EQ(64, c.cqe);
	EXPECT_EQ(c.cqe_offset + 64 * SV_CQE_128_SIZE, c.mmap_len);
	r = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 c.mmap_offset);
	ASSERT_NE(MAP_FAILED, r);
	EXPECT_EQ(SV_CQE_128_SIZE, r->cqe_size);
	EXPECT_EQ(64, r->entries);
	munmap(r, c.mmap_len);
	d.handle = c.handle;
	EXPECT_EQ(0, ioctl(fd, SV_IOC_DESTROY_CQ, &d));
	close(fd);
}

TEST_HARNESS_MAIN
