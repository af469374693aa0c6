// SPDX-License-Identifier: GPL-2.0
/*
 * Receive metadata and completion timestamps (Documentation/steering.rst,
 * "Receive metadata"; Documentation/cq-and-events.rst, "Timestamps"):
 *
 *   - the device clock: hca_core_clock, completion_timestamp_mask,
 *     ibv_query_rt_values_ex(), and the stamps of completions on
 *     softverbs0 (RC traffic), checked against clocks the test reads;
 *   - on a device bound to one end of a veth pair whose other end is in
 *     a network namespace of the test's own (svrm_peer), frames sent from
 *     there by AF_PACKET sockets: IBV_WC_IP_CSUM_OK, CVLAN stripping and
 *     FCS scattering on RAW_PACKET QPs (create flags) and WQs, and the
 *     frames' arrival stamps.
 *
 * The veth fixture is sv_steer_test.h's, without IPv4 addresses: the
 * frames are the test's own.
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

#include "softverbs-abi.h"

#define NS	"svrm_peer"
#define NEAR	"svrm0"
#define FAR	"svrm1"
#define DEV	"svrm"
/* struct frame: where its headers are, what it carries */
#define SV_FRAME_MEMBERS						\
	size_t l3, l4;		/* offsets of the IP and L4 headers */	\
	int v6, proto;							\
	size_t l4len;		/* L4 header and payload */

#include "sv_steer_test.h"

#define SLOT	2048
#define TAG	0x77
#define TCI	0x2123		/* priority 1, CFI 0, VLAN 0x123 */

/*
 * Each test makes and removes a veth pair and a namespace: seconds under
 * TCG, and many more on a loaded host (the harness' default is 30 s).
 */
#define RX_TIMEOUT	120

#define WC_ALL	(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_CVLAN |		\
		 IBV_WC_EX_WITH_FLOW_TAG |				\
		 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |			\
		 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- frames ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* The pseudo-header sum of f's L4 segment (not folded). */
static uint32_t pseudo(const struct frame *f)
{
	const uint8_t *ip = f->b + f->l3;
	uint32_t s;

	if (f->v6)
		s = sum16(ip + 8, 32, 0);
	else
		s = sum16(ip + 12, 8, 0);
	return s + f->proto + f->l4len;
}

/* The checksum field of f's L4 header. */
static uint8_t *l4_check(struct frame *f)
{
	return f->b + f->l4 + (f->proto == IPPROTO_TCP ? 16 :
			       f->proto == IPPROTO_UDP ? 6 : 2);
}

/* Set f's L4 checksum right (ICMP: over its message only). */
static void l4_csum(struct frame *f)
{
	uint8_t *c = l4_check(f);
	uint16_t v;

	put16(c, 0);
	v = csum_fold(sum16(f->b + f->l4, f->l4len,
			    f->proto == IPPROTO_ICMP ? 0 : pseudo(f)));
	if (!v && f->proto == IPPROTO_UDP)
		v = 0xffff;
	put16(c, v);
}

static void ip4_csum(struct frame *f)
{
	uint8_t *ip = f->b + f->l3;

	put16(ip + 10, 0);
	put16(ip + 10, csum_fold(sum16(ip, 20, 0)));
}

/*
 * An Ethernet frame from @src to @dst, with a VLAN tag if @tci >= 0,
 * carrying an IPv4 (or, v6, IPv6) packet of protocol @proto (TCP, UDP,
 * ICMP) with @pay bytes of payload; every checksum right.
 */
static void mkframe(struct frame *f, const uint8_t dst[6],
		    const uint8_t src[6], int tci, int v6, int proto,
		    size_t pay, int seed)
{
	size_t hl = v6 ? 40 : 20, l4h, i;
	uint8_t *ip, *l4;

	memset(f, 0, sizeof(*f));
	memcpy(f->b, dst, 6);
	memcpy(f->b + 6, src, 6);
	f->l3 = 14;
	if (tci >= 0) {
		put16(f->b + 12, ETH_P_8021Q);
		put16(f->b + 14, tci);
		f->l3 = 18;
	}
	put16(f->b + f->l3 - 2, v6 ? ETH_P_IPV6 : ETH_P_IP);
	f->v6 = v6;
	f->proto = proto;
	l4h = proto == IPPROTO_TCP ? 20 : 8;
	f->l4 = f->l3 + hl;
	f->l4len = l4h + pay;
	f->len = f->l4 + f->l4len;
	ip = f->b + f->l3;
	l4 = f->b + f->l4;
	if (v6) {
		ip[0] = 0x60;
		put16(ip + 4, f->l4len);
		ip[6] = proto;
		ip[7] = 64;
		ip[8] = 0xfd;
		ip[23] = 2;
		ip[24] = 0xfd;
		ip[39] = 1;
	} else {
		ip[0] = 0x45;
		put16(ip + 2, hl + f->l4len);
		put16(ip + 4, 0x1234 + seed);
		ip[8] = 64;
		ip[9] = proto;
		ip[12] = 10;
		ip[13] = 66;
		ip[15] = 2;
		ip[16] = 10;
		ip[17] = 66;
		ip[19] = 1;
		ip4_csum(f);
	}
	if (proto == IPPROTO_ICMP) {
		l4[0] = 8;	/* echo request */
	} else {
		put16(l4, 40000 + seed);
		put16(l4 + 2, 7000);
		if (proto == IPPROTO_TCP) {
			l4[12] = 5 << 4;
			l4[13] = 0x18;	/* PSH ACK */
			put16(l4 + 14, 512);
		} else {
			put16(l4 + 4, f->l4len);
		}
	}
	for (i = 0; i < pay; i++)
		l4[l4h + i] = (uint8_t)(i * 13 + seed);
	l4_csum(f);
}

/* @f without its VLAN tag. */
static void untagged(struct frame *u, const struct frame *f)
{
	*u = *f;
	memcpy(u->b + 12, f->b + 16, f->len - 16);
	u->len = f->len - 4;
	u->l3 -= 4;
	u->l4 -= 4;
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

/* The clock as ibv_query_device_ex() describes it; the create flag caps. */
TEST_F(clk, device_attrs)
{
	struct ibv_device_attr_ex ex;

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_EQ(1000000, ex.hca_core_clock);	/* kHz: 1 GHz, ns ticks */
	EXPECT_EQ(0x7fffffffffffffffULL, ex.completion_timestamp_mask);
	EXPECT_TRUE(ex.device_cap_flags_ex & IBV_DEVICE_PCI_WRITE_END_PADDING);
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

/* ==== frames from the far side of a veth pair ==== */

#define SV_VETH_FIXTURE	rx
#include "sv_steer_test.h"

/* A RAW_PACKET QP in RTS with NRECV receives posted, IPv4 and IPv6 flows. */
struct rxqp {
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct rbuf b;
	struct ibv_flow *fl4, *fl6;
};

static int raw_post(struct rxqp *r, int i)
{
	return post_recv(r->qp, r->b.mr, r->b.buf + (size_t)i * SLOT, SLOT, i);
}

static int raw_open(FIXTURE_DATA(rx) *self, struct rxqp *r, uint32_t cflags,
		    int nrecv)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 4, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = self->pd,
		.create_flags = cflags,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int i;

	memset(r, 0, sizeof(*r));
	r->cq = mkcq(self->ctx, WC_ALL);
	if (!r->cq || rbuf_init(self->pd, &r->b))
		return -1;
	ia.send_cq = ia.recv_cq = ibv_cq_ex_to_cq(r->cq);
	r->qp = ibv_create_qp_ex(self->ctx, &ia);
	if (!r->qp || ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_PORT))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE))
		return -1;
	for (i = 0; i < nrecv; i++)
		if (raw_post(r, i))
			return -1;
	r->fl4 = mac_rule(r->qp, self->mac, ETH_P_IP, TAG);
	r->fl6 = mac_rule(r->qp, self->mac, ETH_P_IPV6, TAG);
	return r->fl4 && r->fl6 ? 0 : -1;
}

static void raw_close(struct rxqp *r)
{
	if (r->fl4)
		ibv_destroy_flow(r->fl4);
	if (r->fl6)
		ibv_destroy_flow(r->fl6);
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(r->cq));
	rbuf_fini(&r->b);
}

/*
 * Send @f, receive it: the completion in *c, and 1 if the buffer holds
 * exactly @want (byte_len included) followed by @tail (tail_len bytes).
 * The WQE is posted again.
 */
static int rx_one(FIXTURE_DATA(rx) *self, struct rxqp *r,
		  const struct frame *f, const struct frame *want,
		  const uint8_t *tail, size_t tail_len, struct rxc *c)
{
	const char *got;
	int ok;

	memset(c, 0, sizeof(*c));
	if (far_send(self->pkt, self->far_ifindex, f->b, f->len) ||
	    !cq_poll(r->cq, c, 3000))
		return 0;
	got = r->b.buf + c->wr_id * SLOT;
	ok = c->status == IBV_WC_SUCCESS && c->opcode == IBV_WC_RECV &&
	     c->tag == TAG && c->qp_num == r->qp->qp_num &&
	     c->byte_len == want->len + tail_len &&
	     !memcmp(got, want->b, want->len) &&
	     !memcmp(got + want->len, tail, tail_len);
	raw_post(r, c->wr_id);
	return ok;
}

/* What ibv_query_device_ex() says a bound device does. */
TEST_F_TIMEOUT(rx, caps, RX_TIMEOUT)
{
	struct ibv_device_attr_ex ex;
	struct ibv_device_attr a;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &a));
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_TRUE(a.device_cap_flags & IBV_DEVICE_RAW_IP_CSUM);
	EXPECT_TRUE(ex.device_cap_flags_ex & IBV_DEVICE_RAW_IP_CSUM);
	EXPECT_TRUE(ex.device_cap_flags_ex & IBV_DEVICE_RAW_SCATTER_FCS);
	EXPECT_TRUE(ex.device_cap_flags_ex & IBV_DEVICE_PCI_WRITE_END_PADDING);
	EXPECT_EQ(IBV_RAW_PACKET_CAP_CVLAN_STRIPPING |
		  IBV_RAW_PACKET_CAP_SCATTER_FCS | IBV_RAW_PACKET_CAP_IP_CSUM,
		  ex.raw_packet_caps);
	EXPECT_EQ(1000000, ex.hca_core_clock);
	/* UD QPs' checksums: not offered (IPoIB's). */
	EXPECT_FALSE(a.device_cap_flags & IBV_DEVICE_UD_IP_CSUM);
}

static int create_qp_errno(FIXTURE_DATA(rx) *self, struct ibv_context *ctx,
			   struct ibv_pd *pd, enum ibv_qp_type t,
			   uint32_t cflags)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = t, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = pd, .create_flags = cflags,
	};
	struct ibv_qp *qp;
	int ret = 0;

	(void)self;
	if (!cq)
		return -1;
	qp = ibv_create_qp_ex(ctx, &ia);
	if (qp)
		ibv_destroy_qp(qp);
	else
		ret = errno;
	ibv_destroy_cq(cq);
	return ret;
}

/*
 * The create flags: where mlx5 takes them (CVLAN_STRIPPING, SCATTER_FCS
 * on RAW_PACKET QPs; PCI_WRITE_END_PADDING on any), EOPNOTSUPP where it
 * does not, EINVAL for unknown bits and on an RSS QP.
 */
TEST_F_TIMEOUT(rx, create_flags, RX_TIMEOUT)
{
	const uint32_t strip = IBV_QP_CREATE_CVLAN_STRIPPING;
	const uint32_t fcs = IBV_QP_CREATE_SCATTER_FCS;
	const uint32_t pad = IBV_QP_CREATE_PCI_WRITE_END_PADDING;
	struct ibv_context *c = self->ctx;
	struct ibv_pd *pd = self->pd;
	struct ibv_rwq_ind_table_init_attr ta = {};
	struct ibv_wq_init_attr wa = {
		.wq_type = IBV_WQT_RQ, .max_wr = 1, .max_sge = 1, .pd = pd,
	};
	struct ibv_rwq_ind_table *t;
	struct ibv_qp_init_attr_ex ia = {};
	uint8_t key[40] = { 1 };
	struct ibv_wq *wq;

	EXPECT_EQ(0, create_qp_errno(self, c, pd, IBV_QPT_RAW_PACKET,
				     strip | fcs | pad));
	EXPECT_EQ(0, create_qp_errno(self, c, pd, IBV_QPT_RAW_PACKET, strip));
	EXPECT_EQ(0, create_qp_errno(self, c, pd, IBV_QPT_RAW_PACKET, fcs));
	EXPECT_EQ(0, create_qp_errno(self, c, pd, IBV_QPT_RC, pad));
	EXPECT_EQ(0, create_qp_errno(self, c, pd, IBV_QPT_UD, pad));
	EXPECT_EQ(EOPNOTSUPP, create_qp_errno(self, c, pd, IBV_QPT_RC, strip));
	EXPECT_EQ(EOPNOTSUPP, create_qp_errno(self, c, pd, IBV_QPT_UC, fcs));
	EXPECT_EQ(EOPNOTSUPP, create_qp_errno(self, c, pd, IBV_QPT_UD,
					      strip | fcs));
	EXPECT_EQ(EOPNOTSUPP, create_qp_errno(self, c, pd, IBV_QPT_RAW_PACKET,
					      IBV_QP_CREATE_SOURCE_QPN));
	EXPECT_EQ(EINVAL, create_qp_errno(self, c, pd, IBV_QPT_RAW_PACKET,
					  strip | (1U << 12)));
	EXPECT_EQ(EINVAL, create_qp_errno(self, c, pd, IBV_QPT_RC, 1U << 0));

	/* An RSS QP takes no create flags (mlx5: EINVAL). */
	wa.cq = ibv_create_cq(c, 4, NULL, NULL, 0);
	ASSERT_NE(NULL, wa.cq);
	wq = ibv_create_wq(c, &wa);
	ASSERT_NE(NULL, wq);
	ta.ind_tbl = &wq;
	t = ibv_create_rwq_ind_table(c, &ta);
	ASSERT_NE(NULL, t);
	ia.qp_type = IBV_QPT_RAW_PACKET;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
		       IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ia.pd = pd;
	ia.rwq_ind_tbl = t;
	ia.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	ia.rx_hash_conf.rx_hash_key_len = sizeof(key);
	ia.rx_hash_conf.rx_hash_key = key;
	ia.create_flags = strip;
	EXPECT_EQ(NULL, ibv_create_qp_ex(c, &ia));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ibv_destroy_rwq_ind_table(t));
	EXPECT_EQ(0, ibv_destroy_wq(wq));
	EXPECT_EQ(0, ibv_destroy_cq(wa.cq));
}

/* One frame through rx_one(): IBV_WC_IP_CSUM_OK set or not. */
static void csum_case(struct __test_metadata *_metadata,
		      FIXTURE_DATA(rx) *self, struct rxqp *r,
		      const struct frame *f, int ok, const char *what)
{
	struct rxc c;

	ASSERT_EQ(1, rx_one(self, r, f, f, NULL, 0, &c)) TH_LOG("%s", what);
	EXPECT_EQ(ok ? IBV_WC_IP_CSUM_OK : 0,
		  c.wc_flags & IBV_WC_IP_CSUM_OK) TH_LOG("%s", what);
	EXPECT_EQ(0, c.cvlan) TH_LOG("%s", what);
}

/*
 * IBV_WC_IP_CSUM_OK: an IPv4 packet whose header checksum and TCP or UDP
 * checksum are right (verbs and mlx5 report it for IPv4 only). A wrong
 * one clears the flag; the frame arrives all the same, unchanged.
 */
TEST_F_TIMEOUT(rx, ip_csum, RX_TIMEOUT)
{
	struct rxqp r;
	struct frame f;
	struct ibv_wc wc;
	int p;

	ASSERT_EQ(0, raw_open(self, &r, 0, NRECV));
	for (p = 0; p < 2; p++) {
		int proto = p ? IPPROTO_TCP : IPPROTO_UDP;

		mkframe(&f, self->mac, self->far_mac, -1, 0, proto, 100, p);
		csum_case(_metadata, self, &r, &f, 1, "good");
		l4_check(&f)[1] ^= 0x40;
		csum_case(_metadata, self, &r, &f, 0, "bad L4");
		l4_check(&f)[1] ^= 0x40;
		f.b[f.l3 + 11] ^= 1;
		csum_case(_metadata, self, &r, &f, 0, "bad IPv4 header");
		f.b[f.l3 + 11] ^= 1;
		/* An odd length, and Ethernet padding after the packet. */
		mkframe(&f, self->mac, self->far_mac, -1, 0, proto, 3, p);
		memset(f.b + f.len, 0xee, 60 - f.len);
		f.len = 60;
		csum_case(_metadata, self, &r, &f, 1, "padded");
		/* IPv6: verbs' flag is about IPv4 (mlx5: not set). */
		mkframe(&f, self->mac, self->far_mac, -1, 1, proto, 100, p);
		csum_case(_metadata, self, &r, &f, 0, "IPv6");
		/* Behind a VLAN tag (kept in the frame). */
		mkframe(&f, self->mac, self->far_mac, TCI, 0, proto, 64, p);
		csum_case(_metadata, self, &r, &f, 1, "VLAN");
	}
	/* UDP without a checksum: fine over IPv4. */
	mkframe(&f, self->mac, self->far_mac, -1, 0, IPPROTO_UDP, 20, 7);
	put16(l4_check(&f), 0);
	csum_case(_metadata, self, &r, &f, 1, "UDP checksum 0");
	/* Neither TCP nor UDP; a fragment: no L4 checksum to vouch for. */
	mkframe(&f, self->mac, self->far_mac, -1, 0, IPPROTO_ICMP, 20, 8);
	csum_case(_metadata, self, &r, &f, 0, "ICMP");
	mkframe(&f, self->mac, self->far_mac, -1, 0, IPPROTO_UDP, 20, 9);
	f.b[f.l3 + 6] = 0x20;	/* more fragments */
	ip4_csum(&f);
	csum_case(_metadata, self, &r, &f, 0, "fragment");
	/* A bad UDP checksum in ibv_poll_cq()'s struct ibv_wc too. */
	mkframe(&f, self->mac, self->far_mac, -1, 0, IPPROTO_UDP, 30, 10);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, poll1(ibv_cq_ex_to_cq(r.cq), &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_IP_CSUM_OK, wc.wc_flags);
	raw_post(&r, wc.wr_id);
	l4_check(&f)[0] ^= 0x10;
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, poll1(ibv_cq_ex_to_cq(r.cq), &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, wc.wc_flags);
	EXPECT_EQ(f.len, wc.byte_len);
	EXPECT_EQ(0, memcmp(r.b.buf + wc.wr_id * SLOT, f.b, f.len));
	raw_post(&r, wc.wr_id);
	raw_close(&r);
}

/*
 * A checksum the sender left to the "hardware" (CHECKSUM_PARTIAL: an
 * AF_PACKET socket with a virtio-net header asking for it) is filled in
 * before the frame lands, as it would be on a wire, and it is right.
 */
TEST_F_TIMEOUT(rx, csum_partial_filled_in, RX_TIMEOUT)
{
	struct virtio_net_hdr vh = {
		.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
		.gso_type = VIRTIO_NET_HDR_GSO_NONE,
	};
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_ifindex = self->far_ifindex,
				   .sll_halen = 6 };
	uint8_t out[sizeof(vh) + sizeof(((struct frame *)0)->b)];
	struct frame f, sent;
	struct rxqp r;
	struct rxc c;
	int s, one = 1;

	s = sv_ns_socket(NS, AF_PACKET, SOCK_RAW, 0);
	ASSERT_LE(0, s);
	ASSERT_EQ(0, setsockopt(s, SOL_PACKET, PACKET_VNET_HDR, &one,
				sizeof(one)));
	ASSERT_EQ(0, raw_open(self, &r, 0, NRECV));
	mkframe(&f, self->mac, self->far_mac, -1, 0, IPPROTO_UDP, 77, 11);
	/* What a stack sends: the pseudo-header sum, for the NIC to finish */
	sent = f;
	put16(l4_check(&sent), ~csum_fold(pseudo(&sent)) & 0xffff);
	vh.csum_start = sent.l4;
	vh.csum_offset = 6;
	memcpy(out, &vh, sizeof(vh));
	memcpy(out + sizeof(vh), sent.b, sent.len);
	ASSERT_EQ((ssize_t)(sizeof(vh) + sent.len),
		  sendto(s, out, sizeof(vh) + sent.len, 0,
			 (struct sockaddr *)&sll, sizeof(sll)));
	ASSERT_EQ(1, cq_poll(r.cq, &c, 3000));
	EXPECT_EQ(IBV_WC_SUCCESS, c.status);
	EXPECT_EQ(f.len, c.byte_len);
	EXPECT_EQ(0, memcmp(r.b.buf + c.wr_id * SLOT, f.b, f.len));
	EXPECT_EQ(IBV_WC_IP_CSUM_OK, c.wc_flags & IBV_WC_IP_CSUM_OK);
	raw_close(&r);
	close(s);
}

/*
 * IBV_QP_CREATE_CVLAN_STRIPPING: the tag stays out of the buffer
 * (byte_len 4 less), its TCI is in the completion (ibv_wc_read_cvlan;
 * mlx5 sets no wc_flags bit for it); an untagged frame is untouched.
 * Without the flag the tag stays and cvlan is 0.
 */
TEST_F_TIMEOUT(rx, cvlan_stripping, RX_TIMEOUT)
{
	struct frame f, u, v;
	struct rxqp r;
	struct rxc c;

	mkframe(&f, self->mac, self->far_mac, TCI, 0, IPPROTO_UDP, 90, 1);
	untagged(&u, &f);
	mkframe(&v, self->mac, self->far_mac, 0xe00a, 0, IPPROTO_TCP, 33, 2);

	ASSERT_EQ(0, raw_open(self, &r, IBV_QP_CREATE_CVLAN_STRIPPING,
			      NRECV));
	ASSERT_EQ(1, rx_one(self, &r, &f, &u, NULL, 0, &c));
	EXPECT_EQ(TCI, c.cvlan);
	EXPECT_EQ(f.len - 4, c.byte_len);
	EXPECT_EQ(IBV_WC_IP_CSUM_OK, c.wc_flags);
	untagged(&u, &v);
	ASSERT_EQ(1, rx_one(self, &r, &v, &u, NULL, 0, &c));
	EXPECT_EQ(0xe00a, c.cvlan);
	EXPECT_EQ(IBV_WC_IP_CSUM_OK, c.wc_flags);
	ASSERT_EQ(1, rx_one(self, &r, &u, &u, NULL, 0, &c));
	EXPECT_EQ(0, c.cvlan);
	raw_close(&r);

	ASSERT_EQ(0, raw_open(self, &r, 0, NRECV));
	ASSERT_EQ(1, rx_one(self, &r, &f, &f, NULL, 0, &c));
	EXPECT_EQ(0, c.cvlan);
	EXPECT_EQ(f.len, c.byte_len);
	raw_close(&r);
}

/*
 * IBV_QP_CREATE_SCATTER_FCS: the frame's FCS (the CRC32 of the frame as
 * sent, tag included) follows it and counts in byte_len; with stripping
 * too, after the stripped frame. A buffer without room for it is
 * IBV_WC_LOC_LEN_ERR.
 */
TEST_F_TIMEOUT(rx, scatter_fcs, RX_TIMEOUT)
{
	struct frame f, u;
	struct rxqp r;
	uint8_t fcs[4];
	uint32_t crc;
	struct rxc c;

	mkframe(&f, self->mac, self->far_mac, TCI, 0, IPPROTO_UDP, 200, 3);
	untagged(&u, &f);
	crc = crc32_eth(f.b, f.len);
	fcs[0] = crc;
	fcs[1] = crc >> 8;
	fcs[2] = crc >> 16;
	fcs[3] = crc >> 24;

	ASSERT_EQ(0, raw_open(self, &r, IBV_QP_CREATE_SCATTER_FCS, NRECV));
	ASSERT_EQ(1, rx_one(self, &r, &f, &f, fcs, 4, &c));
	EXPECT_EQ(f.len + 4, c.byte_len);
	EXPECT_EQ(0, c.cvlan);
	EXPECT_EQ(IBV_WC_IP_CSUM_OK, c.wc_flags);
	raw_close(&r);

	ASSERT_EQ(0, raw_open(self, &r, IBV_QP_CREATE_SCATTER_FCS |
			      IBV_QP_CREATE_CVLAN_STRIPPING, NRECV));
	ASSERT_EQ(1, rx_one(self, &r, &f, &u, fcs, 4, &c));
	EXPECT_EQ(u.len + 4, c.byte_len);
	EXPECT_EQ(TCI, c.cvlan);
	EXPECT_EQ(IBV_WC_IP_CSUM_OK, c.wc_flags);
	raw_close(&r);

	/* A receive with room for the frame but not its FCS. */
	ASSERT_EQ(0, raw_open(self, &r, IBV_QP_CREATE_SCATTER_FCS, 0));
	ASSERT_EQ(0, post_recv(r.qp, r.b.mr, r.b.buf, f.len + 3, 5));
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, cq_poll(r.cq, &c, 3000));
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, c.status);
	EXPECT_EQ(5, c.wr_id);
	raw_close(&r);
}

/*
 * The WQ path (an RSS QP's table): CVLAN stripping reports the TCI too,
 * checksums are reported, SCATTER_FCS as on a QP, and the arrival stamps.
 */
TEST_F_TIMEOUT(rx, wq_cvlan_csum_fcs, RX_TIMEOUT)
{
	struct ibv_wq_init_attr wa = {
		.wq_type = IBV_WQT_RQ, .max_wr = NRECV, .max_sge = 1,
		.pd = self->pd, .comp_mask = IBV_WQ_INIT_ATTR_FLAGS,
		.create_flags = IBV_WQ_FLAGS_CVLAN_STRIPPING,
	};
	struct ibv_wq_attr ma = { .attr_mask = IBV_WQ_ATTR_STATE,
				  .wq_state = IBV_WQS_RDY };
	struct ibv_rwq_ind_table_init_attr ta = {};
	struct ibv_qp_init_attr_ex ia = {};
	struct ibv_rwq_ind_table *t;
	uint8_t key[40] = { 1 }, fcs[4];
	uint64_t r0, r1, w0, w1;
	struct ibv_flow *fl;
	struct ibv_cq_ex *cq;
	struct ibv_wq *wq;
	struct ibv_qp *qp;
	struct frame f, u;
	struct rbuf b;
	uint32_t crc;
	struct rxc c;
	int i;

	cq = mkcq(self->ctx, WC_ALL);
	ASSERT_NE(NULL, cq);
	ASSERT_EQ(0, rbuf_init(self->pd, &b));
	wa.cq = ibv_cq_ex_to_cq(cq);
	wq = ibv_create_wq(self->ctx, &wa);
	ASSERT_NE(NULL, wq);
	for (i = 0; i < NRECV; i++) {
		struct ibv_sge sg = { (uintptr_t)(b.buf + i * SLOT), SLOT,
				      b.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sg,
					  .num_sge = 1 };
		struct ibv_recv_wr *bad;

		ASSERT_EQ(0, ibv_post_wq_recv(wq, &wr, &bad));
	}
	ASSERT_EQ(0, ibv_modify_wq(wq, &ma));
	ta.ind_tbl = &wq;
	t = ibv_create_rwq_ind_table(self->ctx, &ta);
	ASSERT_NE(NULL, t);
	ia.qp_type = IBV_QPT_RAW_PACKET;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
		       IBV_QP_INIT_ATTR_RX_HASH;
	ia.pd = self->pd;
	ia.rwq_ind_tbl = t;
	ia.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	ia.rx_hash_conf.rx_hash_key_len = sizeof(key);
	ia.rx_hash_conf.rx_hash_key = key;
	qp = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, qp);
	fl = mac_rule(qp, self->mac, ETH_P_IP, TAG);
	ASSERT_NE(NULL, fl);

	mkframe(&f, self->mac, self->far_mac, TCI, 0, IPPROTO_UDP, 120, 4);
	untagged(&u, &f);
	r0 = now_ns(CLOCK_MONOTONIC_RAW);
	w0 = now_ns(CLOCK_REALTIME);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, cq_poll(cq, &c, 3000));
	r1 = now_ns(CLOCK_MONOTONIC_RAW);
	w1 = now_ns(CLOCK_REALTIME);
	EXPECT_EQ(IBV_WC_SUCCESS, c.status);
	EXPECT_EQ(wq->wq_num, c.qp_num);
	EXPECT_EQ(TAG, c.tag);
	EXPECT_EQ(TCI, c.cvlan);
	EXPECT_EQ(IBV_WC_IP_CSUM_OK, c.wc_flags);
	EXPECT_EQ(u.len, c.byte_len);
	EXPECT_EQ(0, memcmp(b.buf + c.wr_id * SLOT, u.b, u.len));
	EXPECT_LE(r0, c.ts);
	EXPECT_GE(r1, c.ts);
	EXPECT_LE(w0, c.wall);
	EXPECT_GE(w1, c.wall);

	/* A bad checksum; then FCS scattering (the stripping stays). */
	l4_check(&f)[1] ^= 1;
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, cq_poll(cq, &c, 3000));
	EXPECT_EQ(0, c.wc_flags);
	EXPECT_EQ(TCI, c.cvlan);
	l4_check(&f)[1] ^= 1;
	ma.attr_mask = IBV_WQ_ATTR_FLAGS;
	ma.flags = ma.flags_mask = IBV_WQ_FLAGS_SCATTER_FCS;
	ASSERT_EQ(0, ibv_modify_wq(wq, &ma));
	crc = crc32_eth(f.b, f.len);
	fcs[0] = crc;
	fcs[1] = crc >> 8;
	fcs[2] = crc >> 16;
	fcs[3] = crc >> 24;
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, cq_poll(cq, &c, 3000));
	EXPECT_EQ(u.len + 4, c.byte_len);
	EXPECT_EQ(TCI, c.cvlan);
	EXPECT_EQ(0, memcmp(b.buf + c.wr_id * SLOT, u.b, u.len));
	EXPECT_EQ(0, memcmp(b.buf + c.wr_id * SLOT + u.len, fcs, 4));
	/* No stripping any more: the tag is back, cvlan 0. */
	ma.flags = 0;
	ma.flags_mask = IBV_WQ_FLAGS_CVLAN_STRIPPING;
	ASSERT_EQ(0, ibv_modify_wq(wq, &ma));
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, cq_poll(cq, &c, 3000));
	EXPECT_EQ(f.len + 4, c.byte_len);
	EXPECT_EQ(0, c.cvlan);
	EXPECT_EQ(0, memcmp(b.buf + c.wr_id * SLOT, f.b, f.len));

	EXPECT_EQ(0, ibv_destroy_flow(fl));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_rwq_ind_table(t));
	EXPECT_EQ(0, ibv_destroy_wq(wq));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	rbuf_fini(&b);
}

/* A burst of frames: their stamps, between the test's clock readings. */
static void burst_stamps(struct __test_metadata *_metadata,
			 FIXTURE_DATA(rx) *self, struct rxqp *r, int n)
{
	uint64_t r0, r1, w0, w1, last_ts = 0, last_wall = 0;
	struct frame f;
	struct rxc c;
	int i;

	r0 = now_ns(CLOCK_MONOTONIC_RAW);
	w0 = now_ns(CLOCK_REALTIME);
	for (i = 0; i < n; i++) {
		mkframe(&f, self->mac, self->far_mac, -1, 0, IPPROTO_UDP, 40,
			i);
		ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b,
				      f.len));
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(1, cq_poll(r->cq, &c, 3000));
		EXPECT_EQ(IBV_WC_SUCCESS, c.status);
		EXPECT_LE(last_ts, c.ts);
		EXPECT_LE(last_wall, c.wall);
		if (!i) {
			EXPECT_LE(r0, c.ts);
			EXPECT_LE(w0, c.wall);
		}
		last_ts = c.ts;
		last_wall = c.wall;
		raw_post(r, c.wr_id);
	}
	r1 = now_ns(CLOCK_MONOTONIC_RAW);
	w1 = now_ns(CLOCK_REALTIME);
	EXPECT_GE(r1, last_ts);
	EXPECT_GE(w1, last_wall);
	EXPECT_EQ(0, cq_poll(r->cq, &c, 0));
}

/*
 * Arrival stamps of RAW_PACKET receives: in the order of the frames,
 * between the test's readings of the clocks. Also once the stack stamps
 * received frames itself (a socket asked for SO_TIMESTAMPNS): then the
 * stamps are the stack's arrival time.
 */
TEST_F_TIMEOUT(rx, arrival_stamps, RX_TIMEOUT)
{
	struct rxqp r;
	int s, one = 1;

	ASSERT_EQ(0, raw_open(self, &r, 0, NRECV));
	burst_stamps(_metadata, self, &r, 16);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, s);
	ASSERT_EQ(0, setsockopt(s, SOL_SOCKET, SO_TIMESTAMPNS, &one,
				sizeof(one)));
	burst_stamps(_metadata, self, &r, 16);
	close(s);
	raw_close(&r);
}

TEST_HARNESS_MAIN
