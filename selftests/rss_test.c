// SPDX-License-Identifier: GPL-2.0
/*
 * Receive WQs, receive WQ indirection tables and RSS QPs
 * (Documentation/steering.rst, "RSS"): a device bound to one end of a
 * veth pair whose other end is in a network namespace of the test's own
 * (svrs_peer); frames come from there through an AF_PACKET socket. The
 * test computes the Toeplitz hash of every frame itself (checked first
 * against the Microsoft RSS verification vectors) and checks that the
 * frame landed, byte for byte, in the WQ that hash picks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <linux/if_ether.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"

#define NWQ_LOG	3
#define NWQ	(1 << NWQ_LOG)
#define NRECV	64
#define SLOT	2048
#define TAG	0x5a5a
#define NOBODY	65534

/* A receive WQ with its CQ and NRECV buffers of SLOT bytes. */
struct wqr {
	struct ibv_cq_ex *cqx;
	struct ibv_wq *wq;
	char *buf;
	struct ibv_mr *mr;
};

/*
 * sv_steer_test.h's veth fixture, without IPv4 addresses, with the test's
 * WQs (closed before the fixture's teardown); struct frame with the hash
 * input the test expects.
 */
#define SV_VETH_FIXTURE	rss
#define NS	"svrs_peer"
#define NEAR	"svrs0"
#define FAR	"svrs1"
#define DEV	"svrs"
#define SV_VETH_MEMBERS	struct wqr w[NWQ];
#define SV_VETH_OWN_SETUP
#define SV_FRAME_MEMBERS						\
	uint8_t hin[40];	/* the expected hash input */		\
	size_t hlen;

#include "sv_steer_test.h"

/* The Microsoft RSS verification key. */
static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* Reference Toeplitz: bit by bit over a 320-bit key. */
static uint32_t ref_toeplitz(const uint8_t key[40], const uint8_t *in,
			     size_t len)
{
	uint32_t h = 0;
	size_t bit, j;

	for (bit = 0; bit < len * 8; bit++) {
		uint32_t w = 0;

		if (!(in[bit / 8] & (0x80 >> (bit % 8))))
			continue;
		for (j = 0; j < 32; j++) {
			size_t k = bit + j;

			w = (w << 1) | ((key[k / 8] >> (7 - k % 8)) & 1);
		}
		h ^= w;
	}
	return h;
}

/* ---- frames ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void ip4_csum(uint8_t *ip)
{
	uint32_t s = 0;
	int i;

	ip[10] = ip[11] = 0;
	for (i = 0; i < 20; i += 2)
		s += ip[i] << 8 | ip[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	put16(ip + 10, ~s & 0xffff);
}

struct tuple {
	int v6;			/* IPv6, else IPv4 */
	int proto;		/* 6, 17, 50 (ESP) */
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t spi;
};

/* An IP packet at @p: its length. */
static size_t ip_packet(uint8_t *p, const struct tuple *t, int seed)
{
	size_t l4len = t->proto == 6 ? 20 : 8, pay = 32 + seed % 16;
	size_t hl = t->v6 ? 40 : 20, i;
	uint8_t *l4 = p + hl;

	memset(p, 0, hl + l4len);
	if (t->v6) {
		p[0] = 0x60;
		put16(p + 4, l4len + pay);
		p[6] = t->proto;
		p[7] = 64;
		memcpy(p + 8, t->src, 16);
		memcpy(p + 24, t->dst, 16);
	} else {
		p[0] = 0x45;
		put16(p + 2, hl + l4len + pay);
		p[8] = 64;
		p[9] = t->proto;
		memcpy(p + 12, t->src, 4);
		memcpy(p + 16, t->dst, 4);
		ip4_csum(p);
	}
	if (t->proto == 50) {
		l4[0] = t->spi >> 24;
		l4[1] = t->spi >> 16;
		l4[2] = t->spi >> 8;
		l4[3] = t->spi;
		l4[7] = 1;
	} else {
		put16(l4, t->sport);
		put16(l4 + 2, t->dport);
		if (t->proto == 6)
			l4[12] = 5 << 4;
		else
			put16(l4 + 4, l4len + pay);
	}
	for (i = 0; i < pay; i++)
		l4[l4len + i] = (uint8_t)(i * 13 + seed);
	return hl + l4len + pay;
}

static void eth_hdr(uint8_t *p, const uint8_t dst[6], const uint8_t src[6],
		    uint16_t etype)
{
	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	put16(p + 12, etype);
}

/* The hash input of @t for @fields (the Microsoft order). */
static size_t hash_input(const struct tuple *t, uint64_t fields, uint8_t *in)
{
	size_t al = t->v6 ? 16 : 4, n = 0;
	uint64_t s = t->v6 ? IBV_RX_HASH_SRC_IPV6 : IBV_RX_HASH_SRC_IPV4;
	uint64_t d = t->v6 ? IBV_RX_HASH_DST_IPV6 : IBV_RX_HASH_DST_IPV4;
	uint64_t sp = t->proto == 6 ? IBV_RX_HASH_SRC_PORT_TCP :
		      t->proto == 17 ? IBV_RX_HASH_SRC_PORT_UDP : 0;
	uint64_t dp = t->proto == 6 ? IBV_RX_HASH_DST_PORT_TCP :
		      t->proto == 17 ? IBV_RX_HASH_DST_PORT_UDP : 0;

	if (fields & s) {
		memcpy(in + n, t->src, al);
		n += al;
	}
	if (fields & d) {
		memcpy(in + n, t->dst, al);
		n += al;
	}
	if (fields & sp) {
		put16(in + n, t->sport);
		n += 2;
	}
	if (fields & dp) {
		put16(in + n, t->dport);
		n += 2;
	}
	if ((fields & IBV_RX_HASH_IPSEC_SPI) && t->proto == 50) {
		in[n] = t->spi >> 24;
		in[n + 1] = t->spi >> 16;
		in[n + 2] = t->spi >> 8;
		in[n + 3] = t->spi;
		n += 4;
	}
	return n;
}

/* Tuple number @i of a family: distinct addresses and ports. */
static void tuple_of(struct tuple *t, int v6, int proto, int i)
{
	memset(t, 0, sizeof(*t));
	t->v6 = v6;
	t->proto = proto;
	if (v6) {
		t->src[0] = 0xfd;
		t->src[1] = 0x42;
		t->src[13] = i * 37;
		t->src[14] = i >> 3;
		t->src[15] = i * 11 + 1;
		t->dst[0] = 0xfd;
		t->dst[1] = 0x43;
		t->dst[15] = 1 + (i % 3);
	} else {
		t->src[0] = 10;
		t->src[1] = 99;
		t->src[2] = i * 7;
		t->src[3] = i * 29 + 1;
		t->dst[0] = 10;
		t->dst[1] = 88;
		t->dst[3] = 1 + (i % 3);
	}
	t->sport = 1024 + i * 997;
	t->dport = 4000 + (i * 31) % 500;
	t->spi = 0x1000 + i * 0x10101;
}

/* ---- verbs side ---- */

static int wq_post(struct wqr *w, int i)
{
	struct ibv_sge sg = { (uintptr_t)(w->buf + (size_t)i * SLOT), SLOT,
			      w->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_wq_recv(w->wq, &wr, &bad);
}

static int wq_open(struct ibv_context *ctx, struct ibv_pd *pd, struct wqr *w,
		   uint32_t flags, int nrecv)
{
	struct ibv_cq_init_attr_ex cqa = {
		.cqe = 256,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_FLOW_TAG,
	};
	struct ibv_wq_init_attr wa = {
		.wq_type = IBV_WQT_RQ, .max_wr = NRECV, .max_sge = 1, .pd = pd,
		.comp_mask = IBV_WQ_INIT_ATTR_FLAGS, .create_flags = flags,
	};
	struct ibv_wq_attr ma = { .attr_mask = IBV_WQ_ATTR_STATE,
				  .wq_state = IBV_WQS_RDY };
	int i;

	memset(w, 0, sizeof(*w));
	w->cqx = ibv_create_cq_ex(ctx, &cqa);
	if (!w->cqx)
		return -1;
	wa.cq = ibv_cq_ex_to_cq(w->cqx);
	w->buf = aligned_alloc(4096, NRECV * SLOT);
	if (!w->buf)
		return -1;
	w->mr = ibv_reg_mr(pd, w->buf, NRECV * SLOT, IBV_ACCESS_LOCAL_WRITE);
	w->wq = ibv_create_wq(ctx, &wa);
	if (!w->mr || !w->wq)
		return -1;
	for (i = 0; i < nrecv; i++)
		if (wq_post(w, i))
			return -1;
	return ibv_modify_wq(w->wq, &ma) ? -1 : 0;
}

static void wq_close(struct wqr *w)
{
	if (w->wq)
		ibv_destroy_wq(w->wq);
	if (w->mr)
		ibv_dereg_mr(w->mr);
	if (w->cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(w->cqx));
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

struct rwc {
	uint64_t wr_id;
	int status, opcode;
	uint32_t byte_len, qp_num, tag;
};

/* One completion of @w within @ms: 1, else 0. */
static int wq_poll(struct wqr *w, struct rwc *c, int ms)
{
	struct ibv_poll_cq_attr pa = {};
	int waited = 0;

	for (;;) {
		if (!ibv_start_poll(w->cqx, &pa)) {
			c->wr_id = w->cqx->wr_id;
			c->status = w->cqx->status;
			c->opcode = ibv_wc_read_opcode(w->cqx);
			c->byte_len = ibv_wc_read_byte_len(w->cqx);
			c->qp_num = ibv_wc_read_qp_num(w->cqx);
			c->tag = ibv_wc_read_flow_tag(w->cqx);
			ibv_end_poll(w->cqx);
			return 1;
		}
		if (waited >= ms)
			return 0;
		usleep(1000);
		waited++;
	}
}

static struct ibv_rwq_ind_table *ind_tbl(struct ibv_context *ctx,
					 struct wqr *w, int log)
{
	struct ibv_wq *wqs[NWQ];
	struct ibv_rwq_ind_table_init_attr a = {
		.log_ind_tbl_size = log, .ind_tbl = wqs,
	};
	int i;

	for (i = 0; i < (1 << log); i++)
		wqs[i] = w[i].wq;
	return ibv_create_rwq_ind_table(ctx, &a);
}

static struct ibv_qp *rss_qp(struct ibv_context *ctx, struct ibv_pd *pd,
			     struct ibv_rwq_ind_table *t, uint64_t fields)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.pd = pd,
		.rwq_ind_tbl = t,
		.rx_hash_conf = {
			.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
			.rx_hash_key_len = sizeof(ms_key),
			.rx_hash_key = (uint8_t *)ms_key,
			.rx_hash_fields_mask = fields,
		},
	};

	return ibv_create_qp_ex(ctx, &ia);
}

FIXTURE_SETUP(rss)
{
	sv_veth_up(_metadata, self);
}

FIXTURE_TEARDOWN(rss)
{
	int i;

	for (i = 0; i < NWQ; i++)
		wq_close(&self->w[i]);
	sv_veth_down(_metadata, self);
}

/* The reference hash is right: the Microsoft verification vectors. */
TEST(toeplitz_reference)
{
	static const struct { const char *s, *d; int sp, dp; uint32_t ip,
		l4; } v[] = {
		{ "66.9.149.187", "161.142.100.80", 2794, 1766,
		  0x323e8fc2, 0x51ccc178 },
		{ "199.92.111.2", "65.69.140.83", 14230, 4739,
		  0xd718262a, 0xc626b0ea },
		{ "24.19.198.95", "12.22.207.184", 12898, 38024,
		  0xd2d0a5de, 0x5c2b394a },
	};
	uint8_t in[12];
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		inet_pton(AF_INET, v[i].s, in);
		inet_pton(AF_INET, v[i].d, in + 4);
		put16(in + 8, v[i].sp);
		put16(in + 10, v[i].dp);
		EXPECT_EQ(v[i].ip, ref_toeplitz(ms_key, in, 8));
		EXPECT_EQ(v[i].l4, ref_toeplitz(ms_key, in, 12));
	}
}

/* RESET -> RDY -> ERR (flush) -> RESET, curr_state, flags. */
TEST_F(rss, wq_state_machine_and_flush)
{
	struct ibv_wq_attr ma = {};
	struct ibv_device_attr_ex dx;
	struct wqr *w = &self->w[0];
	struct ibv_wq_init_attr wa = {
		.wq_type = IBV_WQT_RQ, .max_wr = 4, .max_sge = 1,
		.pd = self->pd, .comp_mask = IBV_WQ_INIT_ATTR_FLAGS,
	};
	struct ibv_wq *wq;
	struct rwc c;
	int i, seen;

	/* What ibv_query_device_ex says. */
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &dx));
	EXPECT_EQ(1u << IBV_QPT_RAW_PACKET, dx.rss_caps.supported_qpts);
	EXPECT_EQ(IBV_RX_HASH_FUNC_TOEPLITZ, dx.rss_caps.rx_hash_function);
	EXPECT_EQ(1024u, dx.rss_caps.max_rwq_indirection_table_size);
	EXPECT_NE(0u, dx.rss_caps.max_rwq_indirection_tables);
	EXPECT_NE(0u, dx.max_wq_type_rq);
	EXPECT_TRUE(dx.rss_caps.rx_hash_fields_mask & IBV_RX_HASH_INNER);
	EXPECT_TRUE(dx.raw_packet_caps & IBV_RAW_PACKET_CAP_CVLAN_STRIPPING);
	EXPECT_TRUE(dx.raw_packet_caps & IBV_RAW_PACKET_CAP_SCATTER_FCS);

	ASSERT_EQ(0, wq_open(self->ctx, self->pd, w, 0, 0));
	/* wq_open moved it to RDY; back to RESET, post there, then RDY. */
	ma.attr_mask = IBV_WQ_ATTR_STATE;
	ma.wq_state = IBV_WQS_RESET;
	ASSERT_EQ(0, ibv_modify_wq(w->wq, &ma));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, wq_post(w, i));
	ma.attr_mask = IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE;
	ma.curr_wq_state = IBV_WQS_RDY;		/* wrong */
	ma.wq_state = IBV_WQS_RDY;
	EXPECT_EQ(EINVAL, ibv_modify_wq(w->wq, &ma));
	ma.curr_wq_state = IBV_WQS_RESET;
	ASSERT_EQ(0, ibv_modify_wq(w->wq, &ma));
	EXPECT_EQ(IBV_WQS_RDY, w->wq->state);
	/* RDY -> ERR flushes the four, qp_num is the WQ's number. */
	ma.attr_mask = IBV_WQ_ATTR_STATE;
	ma.wq_state = IBV_WQS_ERR;
	ASSERT_EQ(0, ibv_modify_wq(w->wq, &ma));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(1, wq_poll(w, &c, 1000));
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, c.status);
		EXPECT_EQ((uint64_t)i, c.wr_id);
		EXPECT_EQ(w->wq->wq_num, c.qp_num);
	}
	/* Posted in ERR: flushed too. */
	seen = 0;
	ASSERT_EQ(0, wq_post(w, 7));
	ASSERT_EQ(0, wq_post(w, 8));
	while (wq_poll(w, &c, 500)) {
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, c.status);
		seen++;
	}
	EXPECT_EQ(2, seen);
	/* ERR -> RDY is not a transition; ERR -> RESET -> RDY is. */
	ma.wq_state = IBV_WQS_RDY;
	EXPECT_EQ(EINVAL, ibv_modify_wq(w->wq, &ma));
	ma.wq_state = IBV_WQS_RESET;
	EXPECT_EQ(0, ibv_modify_wq(w->wq, &ma));
	ma.wq_state = IBV_WQS_ERR;
	EXPECT_EQ(EINVAL, ibv_modify_wq(w->wq, &ma));
	ma.wq_state = IBV_WQS_RDY;
	EXPECT_EQ(0, ibv_modify_wq(w->wq, &ma));
	/* Flags: known and supported, known and not, unknown. */
	ma.attr_mask = IBV_WQ_ATTR_FLAGS;
	ma.flags = ma.flags_mask = IBV_WQ_FLAGS_CVLAN_STRIPPING;
	EXPECT_EQ(0, ibv_modify_wq(w->wq, &ma));
	ma.flags = ma.flags_mask = IBV_WQ_FLAGS_DELAY_DROP;
	EXPECT_EQ(EOPNOTSUPP, ibv_modify_wq(w->wq, &ma));
	ma.flags = ma.flags_mask = 1u << 20;
	EXPECT_EQ(EINVAL, ibv_modify_wq(w->wq, &ma));

	wa.cq = ibv_cq_ex_to_cq(w->cqx);
	wa.create_flags = IBV_WQ_FLAGS_SCATTER_FCS |
			  IBV_WQ_FLAGS_CVLAN_STRIPPING;
	wq = ibv_create_wq(self->ctx, &wa);
	ASSERT_NE(NULL, wq);
	EXPECT_NE(w->wq->wq_num, wq->wq_num);
	EXPECT_EQ(0, ibv_destroy_wq(wq));
	wa.create_flags = 1u << 20;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_wq(self->ctx, &wa));
	EXPECT_EQ(EINVAL, errno);
	wa.create_flags = IBV_WQ_FLAGS_DELAY_DROP;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_wq(self->ctx, &wa));
	EXPECT_EQ(EOPNOTSUPP, errno);
	/* Accepted (it changes nothing), as IBV_DEVICE_PCI_WRITE_END_PADDING */
	wa.create_flags = IBV_WQ_FLAGS_PCI_WRITE_END_PADDING;
	wq = ibv_create_wq(self->ctx, &wa);
	ASSERT_NE(NULL, wq);
	EXPECT_EQ(0, ibv_destroy_wq(wq));
	wa.create_flags = 0;
	wa.max_wr = 0;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_wq(self->ctx, &wa));
	EXPECT_EQ(EINVAL, errno);
	wa.max_wr = 4;
	wa.wq_type = 1;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_wq(self->ctx, &wa));
	EXPECT_EQ(EINVAL, errno);
	/* The CQ and PD are in use. */
	EXPECT_EQ(EBUSY, ibv_destroy_cq(ibv_cq_ex_to_cq(w->cqx)));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	wq_close(w);
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "wq"));
}

/* Indirection tables and RSS QPs: what is refused. */
TEST_F(rss, ind_table_and_rss_qp_errors)
{
	struct ibv_rwq_ind_table_init_attr ta = {};
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.pd = self->pd,
		.rx_hash_conf = {
			.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
			.rx_hash_key_len = 40,
			.rx_hash_key = (uint8_t *)ms_key,
			.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4,
		},
	};
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT };
	struct ibv_qp_init_attr qia;
	struct ibv_rwq_ind_table *t, *t0;
	struct ibv_wq *wqs[2048];
	struct ibv_context *c0;
	struct ibv_qp *qp;
	pid_t pid;
	int i, st;

	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, wq_open(self->ctx, self->pd, &self->w[i], 0, 0));
	/* Sizes: at most 2^10. */
	for (i = 0; i < 2048; i++)
		wqs[i] = self->w[i & 1].wq;
	ta.ind_tbl = wqs;
	ta.log_ind_tbl_size = 11;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_rwq_ind_table(self->ctx, &ta));
	EXPECT_EQ(EINVAL, errno);
	ta.log_ind_tbl_size = 10;
	t = ibv_create_rwq_ind_table(self->ctx, &ta);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(0, ibv_destroy_rwq_ind_table(t));
	ta.comp_mask = 1;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_rwq_ind_table(self->ctx, &ta));
	EXPECT_EQ(EINVAL, errno);
	ta.comp_mask = 0;

	t = ind_tbl(self->ctx, self->w, 1);
	ASSERT_NE(NULL, t);
	t0 = ind_tbl(self->ctx, self->w, 0);
	ASSERT_NE(NULL, t0);
	/* A WQ in a table cannot go. */
	EXPECT_EQ(EBUSY, ibv_destroy_wq(self->w[0].wq));
	EXPECT_EQ(EBUSY, ibv_destroy_wq(self->w[1].wq));
	ia.rwq_ind_tbl = t;

	/* The hash configuration. */
#define REFUSED(want) do {						\
		errno = 0;						\
		EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ia));	\
		EXPECT_EQ(want, errno);					\
	} while (0)
	ia.rx_hash_conf.rx_hash_key_len = 20;
	REFUSED(EINVAL);
	ia.rx_hash_conf.rx_hash_key_len = 40;
	ia.rx_hash_conf.rx_hash_function = 0;
	REFUSED(EOPNOTSUPP);
	ia.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	ia.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 |
					      IBV_RX_HASH_DST_IPV6;
	REFUSED(EINVAL);
	ia.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_PORT_TCP |
					      IBV_RX_HASH_DST_PORT_UDP;
	REFUSED(EINVAL);
	ia.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_PORT_TCP |
					      IBV_RX_HASH_IPSEC_SPI;
	REFUSED(EINVAL);
	ia.rx_hash_conf.rx_hash_fields_mask = 1u << 12;
	REFUSED(EINVAL);
	ia.rx_hash_conf.rx_hash_fields_mask = 0;	/* 2 entries: no */
	REFUSED(EINVAL);
	ia.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4;
	/* No send or receive queue, RAW_PACKET only. */
	ia.cap.max_send_wr = 1;
	REFUSED(EINVAL);
	ia.cap.max_send_wr = 0;
	ia.cap.max_recv_wr = 1;
	REFUSED(EINVAL);
	ia.cap.max_recv_wr = 0;
	ia.qp_type = IBV_QPT_UD;
	REFUSED(EOPNOTSUPP);
	ia.qp_type = IBV_QPT_RAW_PACKET;
	ia.comp_mask &= ~IBV_QP_INIT_ATTR_RX_HASH;
	REFUSED(EINVAL);
	ia.comp_mask |= IBV_QP_INIT_ATTR_RX_HASH;
#undef REFUSED
	/* Without CAP_NET_RAW: EPERM. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(2);
		errno = 0;
		_exit(!ibv_create_qp_ex(self->ctx, &ia) && errno == EPERM ?
		      0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	qp = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(EBUSY, ibv_destroy_rwq_ind_table(t));
	EXPECT_EQ(EOPNOTSUPP, ibv_modify_qp(qp, &qa, IBV_QP_STATE));
	EXPECT_EQ(EOPNOTSUPP, ibv_query_qp(qp, &qa, IBV_QP_STATE, &qia));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	/* No fields: a one-entry table only. */
	ia.rwq_ind_tbl = t0;
	ia.rx_hash_conf.rx_hash_fields_mask = 0;
	qp = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_rwq_ind_table(t));
	EXPECT_EQ(0, ibv_destroy_rwq_ind_table(t0));
	EXPECT_EQ(0, ibv_destroy_wq(self->w[0].wq));
	self->w[0].wq = NULL;

	/* softverbs0 has no netdev: no RSS QPs. */
	c0 = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, c0);
	{
		struct ibv_pd *pd0 = ibv_alloc_pd(c0);
		struct ibv_device_attr_ex dx;
		struct wqr w0;

		/* ... and says so, but WQs it has. */
		ASSERT_EQ(0, ibv_query_device_ex(c0, NULL, &dx));
		EXPECT_EQ(0u, dx.rss_caps.supported_qpts);
		EXPECT_EQ(0u, dx.raw_packet_caps);
		EXPECT_NE(0u, dx.max_wq_type_rq);

		ASSERT_EQ(0, wq_open(c0, pd0, &w0, 0, 0));
		t = ind_tbl(c0, &w0, 0);
		ASSERT_NE(NULL, t);
		ia.pd = pd0;
		ia.rwq_ind_tbl = t;
		errno = 0;
		EXPECT_EQ(NULL, ibv_create_qp_ex(c0, &ia));
		EXPECT_EQ(EOPNOTSUPP, errno);
		EXPECT_EQ(0, ibv_destroy_rwq_ind_table(t));
		wq_close(&w0);
		ibv_dealloc_pd(pd0);
	}
	ibv_close_device(c0);
}

/*
 * Frames of many 5-tuples from the far side: each lands in the WQ the
 * reference hash picks, byte for byte, with the flow's tag and the WQ's
 * number as qp_num.
 */
static void spread(struct __test_metadata *_metadata,
		   FIXTURE_DATA(rss) *self, int v6, int proto,
		   uint64_t fields, int nframes)
{
	uint16_t etype = v6 ? ETH_P_IPV6 : ETH_P_IP;
	int i, j, got[NWQ] = {}, used = 0;
	struct ibv_rwq_ind_table *t;
	struct ibv_flow *fl;
	struct ibv_qp *qp;
	struct frame f;
	struct tuple tu;
	struct rwc c;

	for (i = 0; i < NWQ; i++)
		ASSERT_EQ(0, wq_open(self->ctx, self->pd, &self->w[i], 0,
				     NRECV));
	t = ind_tbl(self->ctx, self->w, NWQ_LOG);
	ASSERT_NE(NULL, t);
	qp = rss_qp(self->ctx, self->pd, t, fields);
	ASSERT_NE(NULL, qp);
	fl = mac_rule(qp, self->mac, etype, TAG);
	ASSERT_NE(NULL, fl);
	for (i = 0; i < nframes; i++) {
		uint32_t h;
		int want;

		tuple_of(&tu, v6, proto, i);
		eth_hdr(f.b, self->mac, self->far_mac, etype);
		f.len = 14 + ip_packet(f.b + 14, &tu, i);
		f.hlen = hash_input(&tu, fields, f.hin);
		h = ref_toeplitz(ms_key, f.hin, f.hlen);
		want = h & (NWQ - 1);
		ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b,
				      f.len));
		ASSERT_EQ(1, wq_poll(&self->w[want], &c, 3000))
			TH_LOG("frame %d: nothing in WQ %d (hash %#x)", i,
			       want, h);
		EXPECT_EQ(IBV_WC_SUCCESS, c.status);
		EXPECT_EQ(IBV_WC_RECV, c.opcode);
		EXPECT_EQ(f.len, c.byte_len);
		EXPECT_EQ(self->w[want].wq->wq_num, c.qp_num);
		EXPECT_EQ((uint32_t)TAG, c.tag);
		EXPECT_EQ(0, memcmp(self->w[want].buf + c.wr_id * SLOT, f.b,
				    f.len));
		EXPECT_EQ(0, wq_post(&self->w[want], c.wr_id));
		got[want]++;
	}
	/* Nothing went anywhere else. */
	for (j = 0; j < NWQ; j++) {
		EXPECT_EQ(0, wq_poll(&self->w[j], &c, 0));
		used += !!got[j];
	}
	/* The frames do spread: most WQs had some. */
	if (fields)
		EXPECT_LE(NWQ / 2, used);
	EXPECT_EQ(EBUSY, ibv_destroy_rwq_ind_table(t));
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_rwq_ind_table(t));
	for (i = 0; i < NWQ; i++)
		wq_close(&self->w[i]);
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "wq"));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "rwq_ind_tbl"));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "flow"));
}

TEST_F(rss, ipv4_udp_spread)
{
	spread(_metadata, self, 0, 17, IBV_RX_HASH_SRC_IPV4 |
	       IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_UDP |
	       IBV_RX_HASH_DST_PORT_UDP, 48);
}

TEST_F(rss, ipv4_tcp_spread)
{
	spread(_metadata, self, 0, 6, IBV_RX_HASH_SRC_IPV4 |
	       IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_TCP |
	       IBV_RX_HASH_DST_PORT_TCP, 48);
}

TEST_F(rss, ipv6_udp_spread)
{
	spread(_metadata, self, 1, 17, IBV_RX_HASH_SRC_IPV6 |
	       IBV_RX_HASH_DST_IPV6 | IBV_RX_HASH_SRC_PORT_UDP |
	       IBV_RX_HASH_DST_PORT_UDP, 48);
}

TEST_F(rss, ipv6_tcp_spread)
{
	spread(_metadata, self, 1, 6, IBV_RX_HASH_SRC_IPV6 |
	       IBV_RX_HASH_DST_IPV6 | IBV_RX_HASH_SRC_PORT_TCP |
	       IBV_RX_HASH_DST_PORT_TCP, 48);
}

/* Some fields only; fields the frame lacks are left out. */
TEST_F(rss, partial_and_missing_fields)
{
	/* Source address only. */
	spread(_metadata, self, 0, 17, IBV_RX_HASH_SRC_IPV4, 24);
	/* TCP ports selected, UDP frames: the addresses only. */
	spread(_metadata, self, 0, 17, IBV_RX_HASH_SRC_IPV4 |
	       IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_TCP, 24);
	/* Destination port only. */
	spread(_metadata, self, 1, 6, IBV_RX_HASH_DST_PORT_TCP, 24);
}

TEST_F(rss, ipsec_spi)
{
	spread(_metadata, self, 0, 50, IBV_RX_HASH_SRC_IPV4 |
	       IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_IPSEC_SPI, 32);
}

/* IBV_RX_HASH_INNER: a VXLAN frame's inner headers decide. */
TEST_F(rss, vxlan_inner)
{
	static const uint8_t imac[6] = { 0x02, 0, 0, 0, 0, 0x77 };
	static const uint8_t omac[6] = { 0x02, 0, 0, 0, 0, 0x78 };
	uint64_t fields = IBV_RX_HASH_INNER | IBV_RX_HASH_SRC_IPV4 |
			  IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_UDP |
			  IBV_RX_HASH_DST_PORT_UDP;
	struct ibv_rwq_ind_table *t;
	struct tuple outer, inner;
	struct ibv_flow *fl;
	struct ibv_qp *qp;
	int i, want, n;
	struct frame f;
	struct rwc c;
	uint8_t *o, *ip;

	for (i = 0; i < NWQ; i++)
		ASSERT_EQ(0, wq_open(self->ctx, self->pd, &self->w[i], 0,
				     NRECV));
	t = ind_tbl(self->ctx, self->w, NWQ_LOG);
	ASSERT_NE(NULL, t);
	qp = rss_qp(self->ctx, self->pd, t, fields);
	ASSERT_NE(NULL, qp);
	fl = mac_rule(qp, self->mac, ETH_P_IP, TAG);
	ASSERT_NE(NULL, fl);
	tuple_of(&outer, 0, 17, 5);
	outer.dport = 4789;
	for (i = 0; i < 24; i++) {
		tuple_of(&inner, 0, 17, i + 100);
		/* Inner Ethernet + IPv4 + UDP after the VXLAN header. */
		o = f.b + 14 + 20 + 8;
		memset(o, 0, 8);
		o[0] = 0x08;
		o[6] = 0x42;
		eth_hdr(o + 8, imac, omac, ETH_P_IP);
		n = 8 + 14 + ip_packet(o + 8 + 14, &inner, i);
		/* The outer UDP datagram around it. */
		eth_hdr(f.b, self->mac, self->far_mac, ETH_P_IP);
		ip = f.b + 14;
		memset(ip, 0, 28);
		ip[0] = 0x45;
		put16(ip + 2, 28 + n);
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, outer.src, 4);
		memcpy(ip + 16, outer.dst, 4);
		ip4_csum(ip);
		put16(ip + 20, outer.sport);
		put16(ip + 22, 4789);
		put16(ip + 24, 8 + n);
		f.len = 14 + 28 + n;
		f.hlen = hash_input(&inner, fields, f.hin);
		want = ref_toeplitz(ms_key, f.hin, f.hlen) & (NWQ - 1);
		ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b,
				      f.len));
		ASSERT_EQ(1, wq_poll(&self->w[want], &c, 3000))
			TH_LOG("frame %d: nothing in WQ %d", i, want);
		EXPECT_EQ(f.len, c.byte_len);
		EXPECT_EQ(0, memcmp(self->w[want].buf + c.wr_id * SLOT, f.b,
				    f.len));
		EXPECT_EQ(0, wq_post(&self->w[want], c.wr_id));
	}
	for (i = 0; i < NWQ; i++)
		EXPECT_EQ(0, wq_poll(&self->w[i], &c, 0));
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_rwq_ind_table(t));
}

/* CVLAN stripping and FCS scattering; a WQ not RDY drops. */
TEST_F(rss, vlan_strip_fcs_and_not_ready)
{
	struct ibv_wq_attr ma = { .attr_mask = IBV_WQ_ATTR_FLAGS };
	struct ibv_rwq_ind_table *t;
	struct ibv_flow *fl;
	struct ibv_qp *qp;
	struct frame f, plain;
	struct tuple tu;
	struct rwc c;
	uint32_t fcs;
	size_t n;

	ASSERT_EQ(0, wq_open(self->ctx, self->pd, &self->w[0], 0, NRECV));
	t = ind_tbl(self->ctx, self->w, 0);
	ASSERT_NE(NULL, t);
	qp = rss_qp(self->ctx, self->pd, t, 0);
	ASSERT_NE(NULL, qp);
	fl = mac_rule(qp, self->mac, ETH_P_IP, TAG);
	ASSERT_NE(NULL, fl);
	/* A VLAN-tagged IPv4/UDP frame, and the same without its tag. */
	tuple_of(&tu, 0, 17, 3);
	eth_hdr(f.b, self->mac, self->far_mac, ETH_P_8021Q);
	put16(f.b + 14, 0x2123);
	put16(f.b + 16, ETH_P_IP);
	n = ip_packet(f.b + 18, &tu, 3);
	f.len = 18 + n;
	eth_hdr(plain.b, self->mac, self->far_mac, ETH_P_IP);
	memcpy(plain.b + 14, f.b + 18, n);
	plain.len = 14 + n;

	/* As sent. */
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, wq_poll(&self->w[0], &c, 3000));
	EXPECT_EQ(f.len, c.byte_len);
	EXPECT_EQ(0, memcmp(self->w[0].buf + c.wr_id * SLOT, f.b, f.len));
	wq_post(&self->w[0], c.wr_id);
	/* Stripped. */
	ma.flags = ma.flags_mask = IBV_WQ_FLAGS_CVLAN_STRIPPING;
	ASSERT_EQ(0, ibv_modify_wq(self->w[0].wq, &ma));
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, wq_poll(&self->w[0], &c, 3000));
	EXPECT_EQ(plain.len, c.byte_len);
	EXPECT_EQ(0, memcmp(self->w[0].buf + c.wr_id * SLOT, plain.b,
			    plain.len));
	wq_post(&self->w[0], c.wr_id);
	/* Stripped, with the FCS of the frame on the wire after it. */
	ma.flags = ma.flags_mask = IBV_WQ_FLAGS_SCATTER_FCS;
	ASSERT_EQ(0, ibv_modify_wq(self->w[0].wq, &ma));
	fcs = crc32_eth(f.b, f.len);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, wq_poll(&self->w[0], &c, 3000));
	EXPECT_EQ(plain.len + 4, c.byte_len);
	EXPECT_EQ(0, memcmp(self->w[0].buf + c.wr_id * SLOT, plain.b,
			    plain.len));
	EXPECT_EQ(0, memcmp(self->w[0].buf + c.wr_id * SLOT + plain.len,
			    (uint8_t[]){ fcs, fcs >> 8, fcs >> 16, fcs >> 24 },
			    4));
	wq_post(&self->w[0], c.wr_id);
	/* A WQ in RESET takes nothing; RDY again, it does. */
	ma.attr_mask = IBV_WQ_ATTR_STATE;
	ma.wq_state = IBV_WQS_RESET;
	ASSERT_EQ(0, ibv_modify_wq(self->w[0].wq, &ma));
	ASSERT_EQ(0, wq_post(&self->w[0], 0));
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, wq_poll(&self->w[0], &c, 400));
	ma.wq_state = IBV_WQS_RDY;
	ASSERT_EQ(0, ibv_modify_wq(self->w[0].wq, &ma));
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, wq_poll(&self->w[0], &c, 3000));
	EXPECT_EQ(plain.len + 4, c.byte_len);
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_rwq_ind_table(t));
}

/* A process that exits with WQs, tables, RSS QPs and flows leaves none. */
TEST_F(rss, exit_leaves_nothing)
{
	pid_t pid;
	int st;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_context *ctx = sv_open_named(self->list, DEV);
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		struct ibv_rwq_ind_table *t;
		struct wqr w[NWQ];
		int i;

		if (!pd)
			_exit(1);
		for (i = 0; i < NWQ; i++)
			if (wq_open(ctx, pd, &w[i], 0, 8))
				_exit(2);
		t = ind_tbl(ctx, w, NWQ_LOG);
		if (!t || !mac_rule(rss_qp(ctx, pd, t, IBV_RX_HASH_SRC_IPV4),
				    self->mac, ETH_P_IP, TAG))
			_exit(3);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "wq"));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "rwq_ind_tbl"));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "flow"));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "qp"));
}

TEST_HARNESS_MAIN
