// SPDX-License-Identifier: GPL-2.0
/*
 * QPs through the raw ioctls: create for each type and its argument
 * checks, the whole IB state machine (every transition, every required
 * and every disallowed attribute, per QP type), attribute values, query,
 * destroy ordering against PD/CQ/SRQ, QPNs, the SQ drained event,
 * multicast attach/detach, and cleanup when the file closes.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "sv_harness.h"
#include "sv_qp_test.h"

static const uint32_t qp_types[] = { SV_QPT_RC, SV_QPT_UC, SV_QPT_UD };

/* Every attribute mask bit ibv_modify_qp() knows, besides SV_QP_STATE. */
static const uint32_t all_bits[] = {
	SV_QP_CUR_STATE, SV_QP_EN_SQD_ASYNC_NOTIFY, SV_QP_ACCESS_FLAGS,
	SV_QP_PKEY_INDEX, SV_QP_PORT, SV_QP_QKEY, SV_QP_AV, SV_QP_PATH_MTU,
	SV_QP_TIMEOUT, SV_QP_RETRY_CNT, SV_QP_RNR_RETRY, SV_QP_RQ_PSN,
	SV_QP_MAX_QP_RD_ATOMIC, SV_QP_ALT_PATH, SV_QP_MIN_RNR_TIMER,
	SV_QP_SQ_PSN, SV_QP_MAX_DEST_RD_ATOMIC, SV_QP_PATH_MIG_STATE,
	SV_QP_CAP, SV_QP_DEST_QPN, SV_QP_RATE_LIMIT,
};

/*
 * The transition table of ibv_modify_qp(3) and the IB spec (11.2.4.2),
 * written independently of the kernel's: returns whether cur -> next is
 * legal for the type and fills the required and optional attributes.
 */
static int trans(uint32_t type, int cur, int next, uint32_t *req,
		 uint32_t *opt)
{
	const int rc = type == SV_QPT_RC, uc = type == SV_QPT_UC;
	const int ud = type == SV_QPT_UD;
	const uint32_t alt = SV_QP_ALT_PATH | SV_QP_PATH_MIG_STATE;

	*req = 0;
	*opt = 0;
	if (next == SV_QPS_RESET || next == SV_QPS_ERR)
		return 1;	/* any state -> RESET or ERR, no attributes */
	switch (cur * 10 + next) {
	case SV_QPS_RESET * 10 + SV_QPS_INIT:
		*req = SV_QP_PKEY_INDEX | SV_QP_PORT |
		       (ud ? SV_QP_QKEY : SV_QP_ACCESS_FLAGS);
		return 1;
	case SV_QPS_INIT * 10 + SV_QPS_INIT:
		*opt = SV_QP_PKEY_INDEX | SV_QP_PORT |
		       (ud ? SV_QP_QKEY : SV_QP_ACCESS_FLAGS);
		return 1;
	case SV_QPS_INIT * 10 + SV_QPS_RTR:
		if (ud) {
			*opt = SV_QP_PKEY_INDEX | SV_QP_QKEY;
			return 1;
		}
		*req = SV_QP_AV | SV_QP_PATH_MTU | SV_QP_DEST_QPN |
		       SV_QP_RQ_PSN;
		if (rc)
			*req |= SV_QP_MAX_DEST_RD_ATOMIC | SV_QP_MIN_RNR_TIMER;
		*opt = SV_QP_ALT_PATH | SV_QP_ACCESS_FLAGS | SV_QP_PKEY_INDEX;
		return 1;
	case SV_QPS_RTR * 10 + SV_QPS_RTS:
		*req = SV_QP_SQ_PSN;
		if (rc)
			*req |= SV_QP_TIMEOUT | SV_QP_RETRY_CNT |
				SV_QP_RNR_RETRY | SV_QP_MAX_QP_RD_ATOMIC;
		/* the optional ones are those of RTS -> RTS */
		__attribute__((fallthrough));
	case SV_QPS_RTS * 10 + SV_QPS_RTS:
	case SV_QPS_SQD * 10 + SV_QPS_RTS:
		if (ud)
			*opt = SV_QP_CUR_STATE | SV_QP_QKEY;
		else
			*opt = SV_QP_CUR_STATE | SV_QP_ACCESS_FLAGS | alt |
			       (rc ? SV_QP_MIN_RNR_TIMER : 0);
		return 1;
	case SV_QPS_RTS * 10 + SV_QPS_SQD:
		*opt = SV_QP_EN_SQD_ASYNC_NOTIFY;
		return 1;
	case SV_QPS_SQD * 10 + SV_QPS_SQD:
		if (ud)
			*opt = SV_QP_PKEY_INDEX | SV_QP_QKEY;
		else if (uc)
			*opt = SV_QP_AV | SV_QP_ACCESS_FLAGS |
			       SV_QP_PKEY_INDEX | alt;
		else
			*opt = SV_QP_PORT | SV_QP_AV | SV_QP_TIMEOUT |
			       SV_QP_RETRY_CNT | SV_QP_RNR_RETRY |
			       SV_QP_MAX_QP_RD_ATOMIC |
			       SV_QP_MAX_DEST_RD_ATOMIC | SV_QP_ACCESS_FLAGS |
			       SV_QP_PKEY_INDEX | SV_QP_MIN_RNR_TIMER | alt;
		return 1;
	case SV_QPS_RESET * 10 + SV_QPS_RESET:
		return 1;
	}
	return 0;
}

/* Valid values for every attribute. */
static void good_attr(struct sv_qp_attr *a, int cur, int next)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = next;
	a->cur_qp_state = cur;
	a->path_mtu = 3;	/* IBV_MTU_1024 */
	a->qkey = 0x11111111;
	a->rq_psn = 0x100;
	a->sq_psn = 0x200;
	a->dest_qp_num = 0x123456;
	a->qp_access_flags = 7;
	a->pkey_index = 0;
	a->max_rd_atomic = 4;
	a->max_dest_rd_atomic = 5;
	a->min_rnr_timer = 12;
	a->port_num = 1;
	a->timeout = 14;
	a->retry_cnt = 6;
	a->rnr_retry = 7;
	sv_good_av(&a->ah_attr);
	sv_good_av(&a->alt_ah_attr);
	a->alt_ah_attr.sgid_index = 0;
	a->alt_port_num = 1;
	a->alt_timeout = 10;
}

static int modify(int fd, uint32_t qp, uint32_t mask,
		  const struct sv_qp_attr *a)
{
	struct sv_modify_qp m = { .size = sizeof(m), .handle = qp,
				  .attr_mask = mask, .attr = *a };

	return sv_ioc(fd, SV_IOC_MODIFY_QP, &m);
}

static int query(int fd, uint32_t qp, struct sv_query_qp *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->handle = qp;
	return sv_ioc(fd, SV_IOC_QUERY_QP, q);
}

static int qp_state(int fd, uint32_t qp)
{
	struct sv_query_qp q;

	return query(fd, qp, &q) ? -1 : (int)q.attr.qp_state;
}

/* Take a QP in RESET to state, with exactly the required attributes. */
static int goto_state(int fd, uint32_t qp, uint32_t type, int state)
{
	static const int path[] = { SV_QPS_INIT, SV_QPS_RTR, SV_QPS_RTS,
				    SV_QPS_SQD };
	struct sv_qp_attr a;
	uint32_t req, opt;
	int cur = SV_QPS_RESET, i, ret;

	if (state == SV_QPS_ERR || state == SV_QPS_RESET) {
		good_attr(&a, cur, state);
		return modify(fd, qp, SV_QP_STATE, &a);
	}
	for (i = 0; cur != state; i++) {
		trans(type, cur, path[i], &req, &opt);
		good_attr(&a, cur, path[i]);
		ret = modify(fd, qp, SV_QP_STATE | req, &a);
		if (ret)
			return ret;
		cur = path[i];
	}
	return 0;
}

FIXTURE(dev) {
	int fd;
	uint32_t pd, cq, cq2;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", SV_DEV0, strerror(errno));
	self->pd = sv_alloc_pd(self->fd);
	ASSERT_NE(0, self->pd);
	self->cq = sv_create_cq(self->fd);
	ASSERT_NE(0, self->cq);
	self->cq2 = sv_create_cq(self->fd);
	ASSERT_NE(0, self->cq2);
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

static uint32_t new_qp(struct __test_metadata *_metadata, int fd,
		       uint32_t type, uint32_t pd, uint32_t cq)
{
	struct sv_create_qp c;

	sv_qp_req(&c, type, pd, cq, cq, 0);
	EXPECT_EQ(0, sv_ioc(fd, SV_IOC_CREATE_QP, &c));
	return c.handle;
}

TEST_F(dev, create_each_type)
{
	struct sv_create_qp c;
	struct sv_query_qp q;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		sv_qp_req(&c, qp_types[i], self->pd, self->cq, self->cq2, 0);
		c.flags = i == 1 ? SV_CREATE_QP_SQ_SIG_ALL : 0;
		c.user_handle = 77;
		ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
		EXPECT_NE(0, c.handle);
		EXPECT_LE(2, c.qpn);
		EXPECT_GE(SV_QPN_MASK, c.qpn);
		/* Actual caps: at least the request. */
		EXPECT_EQ(16, c.cap.max_send_wr);
		EXPECT_EQ(32, c.cap.max_recv_wr);
		EXPECT_EQ(2, c.cap.max_send_sge);
		EXPECT_EQ(3, c.cap.max_recv_sge);
		EXPECT_EQ(64, c.cap.max_inline_data);

		ASSERT_EQ(0, query(self->fd, c.handle, &q));
		EXPECT_EQ(SV_QPS_RESET, q.attr.qp_state);
		EXPECT_EQ(SV_QPS_RESET, q.attr.cur_qp_state);
		EXPECT_EQ(qp_types[i], q.qp_type);
		EXPECT_EQ(c.qpn, q.qpn);
		EXPECT_EQ(c.flags, q.flags);
		EXPECT_EQ(0, memcmp(&c.cap, &q.cap, sizeof(c.cap)));
		EXPECT_EQ(0, sv_destroy_qp(self->fd, c.handle));
	}
}

TEST_F(dev, create_zero_caps)
{
	struct sv_create_qp c;

	sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, self->cq, 0);
	memset(&c.cap, 0, sizeof(c.cap));
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	EXPECT_EQ(0, c.cap.max_send_wr);
	EXPECT_EQ(0, c.cap.max_recv_wr);
}

TEST_F(dev, create_unsupported_types)
{
	/* XRC QPs with a receive CQ (INI) or any of these (TGT): EINVAL */
	static const uint32_t eopnotsupp[] = { SV_QPT_RAW_PACKET,
		SV_QPT_DRIVER };
	static const uint32_t einval[] = { 0, 1, 5, 6, 7, 11, 0xfe, 0x100,
					   0xffffffff, SV_QPT_XRC_SEND,
					   SV_QPT_XRC_RECV };
	struct sv_create_qp c;
	unsigned int i;

	for (i = 0; i < sizeof(eopnotsupp) / sizeof(eopnotsupp[0]); i++) {
		sv_qp_req(&c, eopnotsupp[i], self->pd, self->cq, self->cq, 0);
		EXPECT_EQ(EOPNOTSUPP, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	}
	for (i = 0; i < sizeof(einval) / sizeof(einval[0]); i++) {
		sv_qp_req(&c, einval[i], self->pd, self->cq, self->cq, 0);
		EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	}
}

TEST_F(dev, create_caps_limits)
{
	struct sv_create_qp c;
	int i;

	for (i = 0; i < 5; i++) {
		uint32_t *cap[] = { &c.cap.max_send_wr, &c.cap.max_recv_wr,
				    &c.cap.max_send_sge, &c.cap.max_recv_sge,
				    &c.cap.max_inline_data };
		uint32_t max[] = { SV_DEFAULT_MAX_QP_WR, SV_DEFAULT_MAX_QP_WR, SV_MAX_SGE,
				   SV_MAX_SGE, SV_MAX_INLINE_DATA };

		sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, self->cq, 0);
		*cap[i] = max[i] + 1;
		EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c))
			TH_LOG("cap %d", i);
		sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, self->cq, 0);
		*cap[i] = max[i];
		ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c))
			TH_LOG("cap %d", i);
		EXPECT_EQ(max[i], *cap[i]);
		EXPECT_EQ(0, sv_destroy_qp(self->fd, c.handle));
	}
	sv_qp_req(&c, SV_QPT_UD, self->pd, self->cq, self->cq, 0);
	c.cap.max_send_wr = 0xffffffff;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
}

TEST_F(dev, create_flags_and_reserved)
{
	/*
	 * RAW_PACKET only (steer_test, rxmeta_test), but for
	 * BLOCK_SELF_MCAST_LB (1 << 1), which UD QPs take too.
	 */
	static const uint32_t known[] = { 1 << 1, 1 << 8, 1 << 9 };
	struct sv_create_qp c;
	unsigned int i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, self->cq, 0);
		c.create_flags = known[i];
		EXPECT_EQ(EOPNOTSUPP, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
		sv_qp_req(&c, SV_QPT_UD, self->pd, self->cq, self->cq, 0);
		c.create_flags = known[i];
		if (i) {
			EXPECT_EQ(EOPNOTSUPP,
				  sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
			continue;
		}
		ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
		EXPECT_EQ(0, sv_destroy_qp(self->fd, c.handle));
	}
	/* PCI_WRITE_END_PADDING: any QP, as on mlx5 (it changes nothing). */
	sv_qp_req(&c, SV_QPT_UD, self->pd, self->cq, self->cq, 0);
	c.create_flags = 1 << 11;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	EXPECT_EQ(0, sv_destroy_qp(self->fd, c.handle));
	sv_qp_req(&c, SV_QPT_UD, self->pd, self->cq, self->cq, 0);
	c.create_flags = 1 << 0;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	c.create_flags = 1u << 31;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	c.create_flags = 0;
	c.flags = 2;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	c.flags = 0;
	/* an XRC domain on a QP that is not an XRC TGT */
	c.xrcd_handle = 1;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	c.xrcd_handle = 0;
	c.size = SV_CREATE_QP_SIZE_VER0 - 1;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	c.size = SV_CREATE_QP_SIZE_VER0;
	EXPECT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
}

/* IBV_QP_CREATE_SOURCE_QPN (1 << 10): UD only, a QPN from 2 to 0xfffffe. */
TEST_F(dev, create_source_qpn)
{
	static const uint32_t bad[] = { 0, 1, 0xffffff, 0x1000000,
					0xffffffff };
	struct sv_create_qp c;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sv_qp_req(&c, SV_QPT_UD, self->pd, self->cq, self->cq, 0);
		c.create_flags = 1 << 10;
		c.source_qpn = bad[i];
		EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c))
			TH_LOG("source_qpn %#x", bad[i]);
	}
	/* A source QPN without the flag. */
	sv_qp_req(&c, SV_QPT_UD, self->pd, self->cq, self->cq, 0);
	c.source_qpn = 0x1234;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	/* RC and UC: EOPNOTSUPP, as any flag a QP type lacks. */
	sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, self->cq, 0);
	c.create_flags = 1 << 10;
	c.source_qpn = 0x1234;
	EXPECT_EQ(EOPNOTSUPP, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	sv_qp_req(&c, SV_QPT_UD, self->pd, self->cq, self->cq, 0);
	c.create_flags = 1 << 10;
	c.source_qpn = 0xfffffe;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	/* Its own QPN, not the one it sends as. */
	EXPECT_NE(0xfffffe, c.qpn);
	EXPECT_EQ(0, sv_destroy_qp(self->fd, c.handle));
}

TEST_F(dev, create_bad_handles)
{
	struct sv_create_qp c;
	uint32_t srq;
	int other;

	/* Unknown handles: ENOENT; a handle of another type: EINVAL. */
	sv_qp_req(&c, SV_QPT_RC, 0, self->cq, self->cq, 0);
	EXPECT_EQ(ENOENT, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	sv_qp_req(&c, SV_QPT_RC, 12345, self->cq, self->cq, 0);
	EXPECT_EQ(ENOENT, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	sv_qp_req(&c, SV_QPT_RC, self->cq, self->cq, self->cq, 0);
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	sv_qp_req(&c, SV_QPT_RC, self->pd, 0, self->cq, 0);
	EXPECT_EQ(ENOENT, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	sv_qp_req(&c, SV_QPT_RC, self->pd, self->pd, self->cq, 0);
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, 0, 0);
	EXPECT_EQ(ENOENT, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, self->pd, 0);
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, self->cq, 999);
	EXPECT_EQ(ENOENT, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, self->cq, self->cq);
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));

	/* Another file's objects are unknown here. */
	other = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, other);
	sv_qp_req(&c, SV_QPT_RC, sv_alloc_pd(other), sv_create_cq(other),
		  sv_create_cq(other), 0);
	ASSERT_EQ(0, sv_create_srq(other, c.pd_handle, 4, 1, &srq));
	c.srq_handle = srq;
	EXPECT_EQ(0, sv_ioc(other, SV_IOC_CREATE_QP, &c));
	c.pd_handle = 100;
	c.send_cq_handle = 101;
	c.recv_cq_handle = 102;
	c.srq_handle = 103;
	EXPECT_EQ(ENOENT, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	close(other);

	/* A failed create leaves nothing in use: all can go. */
	EXPECT_EQ(0, sv_destroy_cq(self->fd, self->cq));
	EXPECT_EQ(0, sv_destroy_cq(self->fd, self->cq2));
	EXPECT_EQ(0, sv_dealloc_pd(self->fd, self->pd));
}

TEST_F(dev, create_with_srq)
{
	struct sv_create_qp c;
	struct sv_query_qp q;
	uint32_t srq;

	ASSERT_EQ(0, sv_create_srq(self->fd, self->pd, 8, 2, &srq));
	/* With an SRQ the receive capacities are ignored. */
	sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, self->cq, srq);
	c.cap.max_recv_wr = SV_DEFAULT_MAX_QP_WR + 1;
	c.cap.max_recv_sge = SV_MAX_SGE + 1;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	EXPECT_EQ(0, c.cap.max_recv_wr);
	EXPECT_EQ(0, c.cap.max_recv_sge);
	ASSERT_EQ(0, query(self->fd, c.handle, &q));
	EXPECT_EQ(0, q.cap.max_recv_wr);

	EXPECT_EQ(EBUSY, sv_destroy_srq(self->fd, srq));
	EXPECT_EQ(0, sv_destroy_qp(self->fd, c.handle));
	EXPECT_EQ(0, sv_destroy_srq(self->fd, srq));
}

/* Does [a, a + an) overlap [b, b + bn)? */
static int overlaps(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return a < b + bn && b < a + an;
}

/*
 * SV_CREATE_QP_SHARED_RINGS: one mapping holds both rings (one page for
 * small queues), its layout told by MAP_WQ's VER1 fields only; the
 * headers and slot arrays do not overlap and fit in it.
 */
TEST_F(dev, shared_rings)
{
	struct sv_map_wq m = { .size = sizeof(m), .type = SV_WQ_QP };
	const struct sv_wq_ring *sr, *rr;
	struct sv_create_qp c;
	uint64_t so, ro;
	uint32_t srq;
	char *p;

	sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, self->cq, 0);
	c.flags = SV_CREATE_QP_SHARED_RINGS;
	c.cap.max_send_wr = 1;
	c.cap.max_recv_wr = 1;
	c.cap.max_send_sge = 1;
	c.cap.max_recv_sge = 1;
	c.cap.max_inline_data = 0;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	m.handle = c.handle;
	/* Without sq_ring and rq_ring the layout cannot be told: EINVAL */
	m.size = SV_MAP_WQ_SIZE_VER0;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_MAP_WQ, &m));
	m.size = sizeof(m);
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_MAP_WQ, &m));
	EXPECT_EQ(m.sq_offset, m.rq_offset);
	EXPECT_EQ(m.sq_len, m.rq_len);
	EXPECT_EQ(4096, m.sq_len);
	EXPECT_EQ(0, m.sq_ring);
	EXPECT_NE(0, m.rq_ring);
	p = mmap(NULL, m.sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 m.sq_offset);
	ASSERT_NE(MAP_FAILED, p);
	sr = (const struct sv_wq_ring *)(p + m.sq_ring);
	rr = (const struct sv_wq_ring *)(p + m.rq_ring);
	EXPECT_EQ(1, sr->entries);
	EXPECT_EQ(1, rr->entries);
	so = m.sq_ring + sr->wqe_offset;
	ro = m.rq_ring + rr->wqe_offset;
	EXPECT_GE(m.sq_len, so + sr->entries * sr->wqe_size);
	EXPECT_GE(m.sq_len, ro + rr->entries * rr->wqe_size);
	EXPECT_FALSE(overlaps(m.sq_ring, sizeof(*sr), m.rq_ring, sizeof(*rr)));
	EXPECT_FALSE(overlaps(so, sr->entries * sr->wqe_size,
			      ro, rr->entries * rr->wqe_size));
	EXPECT_FALSE(overlaps(so, sr->entries * sr->wqe_size,
			      m.rq_ring, sizeof(*rr)));
	EXPECT_FALSE(overlaps(ro, rr->entries * rr->wqe_size,
			      m.sq_ring, sizeof(*sr)));
	/* The mapping outlives the QP; the QP's memory goes with both. */
	EXPECT_EQ(0, sv_destroy_qp(self->fd, c.handle));
	EXPECT_EQ(1, sr->entries);
	EXPECT_EQ(0, munmap(p, m.sq_len));

	/* Larger queues: still one mapping, larger. */
	sv_qp_req(&c, SV_QPT_UD, self->pd, self->cq, self->cq, 0);
	c.flags = SV_CREATE_QP_SHARED_RINGS;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	m.handle = c.handle;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_MAP_WQ, &m));
	EXPECT_EQ(m.sq_offset, m.rq_offset);
	EXPECT_LT(4096, m.sq_len);
	EXPECT_EQ(0, sv_destroy_qp(self->fd, c.handle));

	/*
	 * On an SRQ: the send ring alone. Without the flag: 0, 0. Output
	 * fields are never the caller's echoed back.
	 */
	ASSERT_EQ(0, sv_create_srq(self->fd, self->pd, 8, 2, &srq));
	sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, self->cq, srq);
	c.flags = SV_CREATE_QP_SHARED_RINGS;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	m.handle = c.handle;
	m.rq_offset = m.rq_len = 99;
	m.rq_ring = 77;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_MAP_WQ, &m));
	EXPECT_EQ(0, m.rq_offset);
	EXPECT_EQ(0, m.rq_len);
	EXPECT_EQ(0, m.rq_ring);
	EXPECT_EQ(0, sv_destroy_qp(self->fd, c.handle));
	EXPECT_EQ(0, sv_destroy_srq(self->fd, srq));
	sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, self->cq, 0);
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	m.handle = c.handle;
	m.size = sizeof(m);
	m.sq_ring = m.rq_ring = 77;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_MAP_WQ, &m));
	EXPECT_NE(m.sq_offset, m.rq_offset);
	EXPECT_EQ(0, m.sq_ring);
	EXPECT_EQ(0, m.rq_ring);
	EXPECT_EQ(0, sv_destroy_qp(self->fd, c.handle));
}

TEST_F(dev, destroy_order)
{
	uint32_t qp;
	struct sv_create_qp c;

	/* The same CQ for both queues. */
	sv_qp_req(&c, SV_QPT_UC, self->pd, self->cq, self->cq, 0);
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	qp = c.handle;
	EXPECT_EQ(EBUSY, sv_dealloc_pd(self->fd, self->pd));
	EXPECT_EQ(EBUSY, sv_destroy_cq(self->fd, self->cq));
	EXPECT_EQ(0, sv_destroy_cq(self->fd, self->cq2));
	EXPECT_EQ(0, sv_destroy_qp(self->fd, qp));
	EXPECT_EQ(ENOENT, sv_destroy_qp(self->fd, qp));
	EXPECT_EQ(-1, qp_state(self->fd, qp));
	EXPECT_EQ(0, sv_destroy_cq(self->fd, self->cq));
	EXPECT_EQ(0, sv_dealloc_pd(self->fd, self->pd));
}

TEST_F(dev, wrong_type_handles)
{
	struct sv_qp_attr a;
	struct sv_query_qp q;

	good_attr(&a, 0, SV_QPS_INIT);
	EXPECT_EQ(EINVAL, modify(self->fd, self->cq, SV_QP_STATE, &a));
	EXPECT_EQ(ENOENT, modify(self->fd, 4242, SV_QP_STATE, &a));
	EXPECT_EQ(EINVAL, query(self->fd, self->pd, &q));
	EXPECT_EQ(EINVAL, sv_destroy_qp(self->fd, self->pd));
}

TEST_F(dev, qpn_unique)
{
	static uint32_t qpns[256];
	struct sv_create_qp c;
	int i, j, other;

	other = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, other);
	for (i = 0; i < 256; i++) {
		int fd = i & 1 ? other : self->fd;

		sv_qp_req(&c, qp_types[i % 3], i & 1 ? sv_alloc_pd(fd) :
			  self->pd, 0, 0, 0);
		c.send_cq_handle = c.recv_cq_handle =
			i & 1 ? sv_create_cq(fd) : self->cq;
		ASSERT_EQ(0, sv_ioc(fd, SV_IOC_CREATE_QP, &c));
		ASSERT_LE(2, c.qpn);
		qpns[i] = c.qpn;
		for (j = 0; j < i; j++)
			ASSERT_NE(qpns[j], qpns[i]);
	}
	close(other);
}

TEST_F(dev, full_path_rc_uc_ud)
{
	unsigned int i;

	for (i = 0; i < 3; i++) {
		uint32_t type = qp_types[i];
		uint32_t qp = new_qp(_metadata, self->fd, type, self->pd,
				     self->cq);
		struct sv_qp_attr a;
		uint32_t req, opt;

		ASSERT_EQ(0, goto_state(self->fd, qp, type, SV_QPS_RTS));
		EXPECT_EQ(SV_QPS_RTS, qp_state(self->fd, qp));
		/* RTS -> SQD -> SQD -> RTS -> RTS -> ERR -> RESET -> INIT */
		good_attr(&a, SV_QPS_RTS, SV_QPS_SQD);
		EXPECT_EQ(0, modify(self->fd, qp, SV_QP_STATE, &a));
		EXPECT_EQ(SV_QPS_SQD, qp_state(self->fd, qp));
		trans(type, SV_QPS_SQD, SV_QPS_SQD, &req, &opt);
		good_attr(&a, SV_QPS_SQD, SV_QPS_SQD);
		EXPECT_EQ(0, modify(self->fd, qp, opt, &a));
		good_attr(&a, SV_QPS_SQD, SV_QPS_RTS);
		EXPECT_EQ(0, modify(self->fd, qp, SV_QP_STATE, &a));
		EXPECT_EQ(SV_QPS_RTS, qp_state(self->fd, qp));
		trans(type, SV_QPS_RTS, SV_QPS_RTS, &req, &opt);
		good_attr(&a, SV_QPS_RTS, SV_QPS_RTS);
		EXPECT_EQ(0, modify(self->fd, qp, opt, &a));
		good_attr(&a, SV_QPS_RTS, SV_QPS_ERR);
		EXPECT_EQ(0, modify(self->fd, qp, SV_QP_STATE, &a));
		EXPECT_EQ(SV_QPS_ERR, qp_state(self->fd, qp));
		good_attr(&a, SV_QPS_ERR, SV_QPS_RESET);
		EXPECT_EQ(0, modify(self->fd, qp, SV_QP_STATE, &a));
		EXPECT_EQ(SV_QPS_RESET, qp_state(self->fd, qp));
		EXPECT_EQ(0, goto_state(self->fd, qp, type, SV_QPS_INIT));
		EXPECT_EQ(SV_QPS_INIT, qp_state(self->fd, qp));
		EXPECT_EQ(0, sv_destroy_qp(self->fd, qp));
	}
}

/*
 * Every (state, next state) pair for every type: illegal transitions,
 * each missing required attribute and each attribute not allowed are
 * EINVAL and change nothing; the exact required set, and the required
 * plus all optional ones, succeed.
 */
TEST_F(dev, transition_table)
{
	static const int states[] = { SV_QPS_RESET, SV_QPS_INIT, SV_QPS_RTR,
				      SV_QPS_RTS, SV_QPS_SQD, SV_QPS_ERR };
	unsigned int t, s, b, checked = 0;
	int next;

	for (t = 0; t < 3; t++) {
		for (s = 0; s < 6; s++) {
			uint32_t type = qp_types[t];
			int cur = states[s];
			uint32_t qp = new_qp(_metadata, self->fd, type,
					     self->pd, self->cq);

			ASSERT_EQ(0, goto_state(self->fd, qp, type, cur));
			ASSERT_EQ(cur, qp_state(self->fd, qp));
			for (next = 0; next <= SV_QPS_ERR + 2; next++) {
				struct sv_qp_attr a;
				uint32_t req, opt, q2;
				int ok = next <= SV_QPS_ERR &&
					 trans(type, cur, next, &req, &opt);

				good_attr(&a, cur, next);
				if (!ok) {
					EXPECT_EQ(EINVAL, modify(self->fd, qp,
						  SV_QP_STATE, &a))
						TH_LOG("type %u %d->%d", type,
						       cur, next);
					checked++;
					continue;
				}
				for (b = 0; b < 32; b++) {
					if (!(req & (1u << b)))
						continue;
					EXPECT_EQ(EINVAL, modify(self->fd, qp,
						  (SV_QP_STATE | req | opt) &
						  ~(1u << b), &a))
						TH_LOG("type %u %d->%d missing %#x",
						       type, cur, next, 1u << b);
					checked++;
				}
				for (b = 0; b < sizeof(all_bits) /
						sizeof(all_bits[0]); b++) {
					if ((req | opt) & all_bits[b])
						continue;
					EXPECT_EQ(EINVAL, modify(self->fd, qp,
						  SV_QP_STATE | req |
						  all_bits[b], &a))
						TH_LOG("type %u %d->%d extra %#x",
						       type, cur, next,
						       all_bits[b]);
					checked++;
				}
				EXPECT_EQ(cur, qp_state(self->fd, qp));

				/* Required only, then required + optional. */
				q2 = new_qp(_metadata, self->fd, type,
					    self->pd, self->cq);
				ASSERT_EQ(0, goto_state(self->fd, q2, type,
							cur));
				EXPECT_EQ(0, modify(self->fd, q2,
						    SV_QP_STATE | req, &a))
					TH_LOG("type %u %d->%d", type, cur,
					       next);
				EXPECT_EQ(next, qp_state(self->fd, q2));
				EXPECT_EQ(0, sv_destroy_qp(self->fd, q2));
				q2 = new_qp(_metadata, self->fd, type,
					    self->pd, self->cq);
				ASSERT_EQ(0, goto_state(self->fd, q2, type,
							cur));
				EXPECT_EQ(0, modify(self->fd, q2,
						    SV_QP_STATE | req | opt,
						    &a))
					TH_LOG("type %u %d->%d opt %#x", type,
					       cur, next, opt);
				EXPECT_EQ(next, qp_state(self->fd, q2));
				EXPECT_EQ(0, sv_destroy_qp(self->fd, q2));
				checked += 2;
			}
			EXPECT_EQ(0, sv_destroy_qp(self->fd, qp));
		}
	}
	TH_LOG("%u modify checks", checked);
}

/* Without SV_QP_STATE, a modify stays in the current state. */
TEST_F(dev, modify_without_state)
{
	uint32_t qp = new_qp(_metadata, self->fd, SV_QPT_RC, self->pd,
			     self->cq);
	struct sv_qp_attr a;
	struct sv_query_qp q;

	good_attr(&a, SV_QPS_RESET, SV_QPS_RESET);
	EXPECT_EQ(0, modify(self->fd, qp, 0, &a));
	EXPECT_EQ(EINVAL, modify(self->fd, qp, SV_QP_QKEY, &a));
	ASSERT_EQ(0, goto_state(self->fd, qp, SV_QPT_RC, SV_QPS_RTS));
	good_attr(&a, SV_QPS_RTS, SV_QPS_RTS);
	a.min_rnr_timer = 31;
	EXPECT_EQ(0, modify(self->fd, qp, SV_QP_MIN_RNR_TIMER, &a));
	ASSERT_EQ(0, query(self->fd, qp, &q));
	EXPECT_EQ(SV_QPS_RTS, q.attr.qp_state);
	EXPECT_EQ(31, q.attr.min_rnr_timer);
	/* Not allowed in RTS -> RTS. */
	EXPECT_EQ(EINVAL, modify(self->fd, qp, SV_QP_PATH_MTU, &a));
}

TEST_F(dev, cur_state)
{
	uint32_t qp = new_qp(_metadata, self->fd, SV_QPT_UD, self->pd,
			     self->cq);
	uint32_t req, opt;
	struct sv_qp_attr a;

	ASSERT_EQ(0, goto_state(self->fd, qp, SV_QPT_UD, SV_QPS_RTR));
	trans(SV_QPT_UD, SV_QPS_RTR, SV_QPS_RTS, &req, &opt);
	good_attr(&a, SV_QPS_INIT, SV_QPS_RTS);
	EXPECT_EQ(EINVAL, modify(self->fd, qp,
				 SV_QP_STATE | SV_QP_CUR_STATE | req, &a));
	a.cur_qp_state = 100;
	EXPECT_EQ(EINVAL, modify(self->fd, qp,
				 SV_QP_STATE | SV_QP_CUR_STATE | req, &a));
	EXPECT_EQ(SV_QPS_RTR, qp_state(self->fd, qp));
	a.cur_qp_state = SV_QPS_RTR;
	EXPECT_EQ(0, modify(self->fd, qp,
			    SV_QP_STATE | SV_QP_CUR_STATE | req, &a));
	EXPECT_EQ(SV_QPS_RTS, qp_state(self->fd, qp));
}

/*
 * The access bits only an MR has (MW_BIND, ZERO_BASED, ON_DEMAND,
 * HUGETLB, RELAXED_ORDERING) are taken in a QP's and kept, as the
 * kernel's uverbs and mlx5 take them (pyverbs' ODP tests set ON_DEMAND
 * there); they grant nothing.
 */
TEST_F(dev, mr_access_bits_in_qp_access)
{
	uint32_t qp = new_qp(_metadata, self->fd, SV_QPT_RC, self->pd,
			     self->cq);
	const uint32_t bits = SV_ACCESS_LOCAL_WRITE | SV_ACCESS_REMOTE_READ |
			      SV_ACCESS_MW_BIND | SV_ACCESS_ZERO_BASED |
			      SV_ACCESS_ON_DEMAND | SV_ACCESS_HUGETLB |
			      SV_ACCESS_RELAXED_ORDERING;
	struct sv_query_qp q;
	struct sv_qp_attr a;

	good_attr(&a, SV_QPS_RESET, SV_QPS_INIT);
	a.qp_access_flags = bits;
	EXPECT_EQ(0, modify(self->fd, qp, SV_QP_STATE | SV_QP_PKEY_INDEX |
			    SV_QP_PORT | SV_QP_ACCESS_FLAGS, &a));
	ASSERT_EQ(0, query(self->fd, qp, &q));
	EXPECT_EQ(SV_QPS_INIT, q.attr.qp_state);
	EXPECT_EQ(bits, q.attr.qp_access_flags);
}

/* RESET -> ERR -> ... : SQE is reached only by errors, never by modify. */
TEST_F(dev, no_modify_to_sqe)
{
	uint32_t qp = new_qp(_metadata, self->fd, SV_QPT_UC, self->pd,
			     self->cq);
	struct sv_qp_attr a;

	ASSERT_EQ(0, goto_state(self->fd, qp, SV_QPT_UC, SV_QPS_RTS));
	good_attr(&a, SV_QPS_RTS, SV_QPS_SQE);
	EXPECT_EQ(EINVAL, modify(self->fd, qp, SV_QP_STATE, &a));
	good_attr(&a, SV_QPS_RTS, SV_QPS_ERR + 1);	/* IBV_QPS_UNKNOWN */
	EXPECT_EQ(EINVAL, modify(self->fd, qp, SV_QP_STATE, &a));
	EXPECT_EQ(SV_QPS_RTS, qp_state(self->fd, qp));
}

struct bad_value {
	const char *name;
	uint32_t type;
	int cur, next;
	uint32_t mask;		/* added to the transition's required set */
	void (*spoil)(struct sv_qp_attr *a);
};

#define SPOIL(n, stmt) static void n(struct sv_qp_attr *a) { stmt; }
SPOIL(port0, a->port_num = 0)
SPOIL(port2, a->port_num = 2)
SPOIL(pkey1, a->pkey_index = 1)
SPOIL(access_unknown, a->qp_access_flags = 1 << 10)
SPOIL(access_high, a->qp_access_flags = 1u << 31)
SPOIL(mtu0, a->path_mtu = 0)
SPOIL(mtu6, a->path_mtu = 6)
SPOIL(dqpn, a->dest_qp_num = 1 << 24)
SPOIL(dest_rd17, a->max_dest_rd_atomic = SV_MAX_QP_RD_ATOM + 1)
SPOIL(rnr32, a->min_rnr_timer = 32)
SPOIL(av_local, a->ah_attr.is_global = 0)
SPOIL(av_port0, a->ah_attr.port_num = 0)
SPOIL(av_port2, a->ah_attr.port_num = 2)
SPOIL(av_sgid_big, a->ah_attr.sgid_index = SV_GID_TBL_LEN)
SPOIL(av_sgid_empty, a->ah_attr.sgid_index = SV_TEST_EMPTY_SGID)
SPOIL(av_reserved, a->ah_attr.reserved[1] = 1)
SPOIL(alt_av, a->alt_ah_attr.is_global = 0)
SPOIL(alt_port, a->alt_port_num = 2)
SPOIL(alt_pkey, a->alt_pkey_index = 1)
SPOIL(alt_timeout, a->alt_timeout = 32)
SPOIL(timeout32, a->timeout = 32)
SPOIL(retry8, a->retry_cnt = 8)
SPOIL(rnr_retry8, a->rnr_retry = 8)
SPOIL(rd17, a->max_rd_atomic = SV_MAX_QP_INIT_RD_ATOM + 1)
SPOIL(mig3, a->path_mig_state = 3)
SPOIL(reserved, a->reserved = 1)
SPOIL(nothing, (void)a)

static const struct bad_value bad_values[] = {
	{ "port 0", SV_QPT_RC, 0, 1, 0, port0 },
	{ "port 2", SV_QPT_UD, 0, 1, 0, port2 },
	{ "pkey_index 1", SV_QPT_UC, 0, 1, 0, pkey1 },
	{ "access bit 10", SV_QPT_RC, 0, 1, 0, access_unknown },
	{ "access bit 31", SV_QPT_UC, 0, 1, 0, access_high },
	{ "reserved", SV_QPT_RC, 0, 1, 0, reserved },
	{ "path_mtu 0", SV_QPT_RC, 1, 2, 0, mtu0 },
	{ "path_mtu 6", SV_QPT_UC, 1, 2, 0, mtu6 },
	{ "dest_qpn 2^24", SV_QPT_RC, 1, 2, 0, dqpn },
	{ "max_dest_rd_atomic", SV_QPT_RC, 1, 2, 0, dest_rd17 },
	{ "min_rnr_timer 32", SV_QPT_RC, 1, 2, 0, rnr32 },
	{ "AV without GRH", SV_QPT_RC, 1, 2, 0, av_local },
	{ "AV port 0", SV_QPT_UC, 1, 2, 0, av_port0 },
	{ "AV port 2", SV_QPT_RC, 1, 2, 0, av_port2 },
	{ "AV sgid_index", SV_QPT_RC, 1, 2, 0, av_sgid_big },
	{ "AV empty sgid", SV_QPT_UC, 1, 2, 0, av_sgid_empty },
	{ "AV reserved", SV_QPT_RC, 1, 2, 0, av_reserved },
	{ "alt AV", SV_QPT_RC, 1, 2, SV_QP_ALT_PATH, alt_av },
	{ "alt port", SV_QPT_UC, 1, 2, SV_QP_ALT_PATH, alt_port },
	{ "alt pkey", SV_QPT_RC, 1, 2, SV_QP_ALT_PATH, alt_pkey },
	{ "alt timeout", SV_QPT_RC, 1, 2, SV_QP_ALT_PATH, alt_timeout },
	{ "timeout 32", SV_QPT_RC, 2, 3, 0, timeout32 },
	{ "retry_cnt 8", SV_QPT_RC, 2, 3, 0, retry8 },
	{ "rnr_retry 8", SV_QPT_RC, 2, 3, 0, rnr_retry8 },
	{ "max_rd_atomic", SV_QPT_RC, 2, 3, 0, rd17 },
	{ "path_mig_state 3", SV_QPT_UC, 2, 3, SV_QP_PATH_MIG_STATE, mig3 },
};

TEST_F(dev, bad_values)
{
	unsigned int i;

	for (i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
		const struct bad_value *v = &bad_values[i];
		uint32_t qp = new_qp(_metadata, self->fd, v->type, self->pd,
				     self->cq);
		struct sv_query_qp before, after;
		uint32_t req, opt;
		struct sv_qp_attr a;

		ASSERT_EQ(0, goto_state(self->fd, qp, v->type, v->cur));
		ASSERT_EQ(0, query(self->fd, qp, &before));
		trans(v->type, v->cur, v->next, &req, &opt);
		good_attr(&a, v->cur, v->next);
		v->spoil(&a);
		EXPECT_EQ(EINVAL, modify(self->fd, qp,
					 SV_QP_STATE | req | v->mask, &a))
			TH_LOG("%s", v->name);
		/* All or nothing: the QP is as it was. */
		ASSERT_EQ(0, query(self->fd, qp, &after));
		EXPECT_EQ(0, memcmp(&before, &after, sizeof(before)))
			TH_LOG("%s", v->name);
		/* The same modify with good values works. */
		good_attr(&a, v->cur, v->next);
		nothing(&a);
		EXPECT_EQ(0, modify(self->fd, qp, SV_QP_STATE | req | v->mask,
				    &a)) TH_LOG("%s", v->name);
		EXPECT_EQ(0, sv_destroy_qp(self->fd, qp));
	}
}

TEST_F(dev, bad_mask_and_envelope)
{
	uint32_t qp = new_qp(_metadata, self->fd, SV_QPT_RC, self->pd,
			     self->cq);
	struct sv_modify_qp m = { .size = sizeof(m), .handle = qp };
	struct sv_qp_attr a;
	int b;

	good_attr(&a, SV_QPS_RESET, SV_QPS_INIT);
	for (b = 21; b < 32; b++) {
		if (b == 25)
			continue;
		EXPECT_EQ(EINVAL, modify(self->fd, qp, SV_QP_STATE |
					 SV_QP_PKEY_INDEX | SV_QP_PORT |
					 SV_QP_ACCESS_FLAGS | (1u << b), &a));
	}
	m.attr_mask = SV_QP_STATE;
	m.reserved = 1;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_MODIFY_QP, &m));
	m.reserved = 0;
	m.size = SV_MODIFY_QP_SIZE_VER0 - 4;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_MODIFY_QP, &m));
	EXPECT_EQ(SV_QPS_RESET, qp_state(self->fd, qp));
}

TEST_F(dev, query_returns_what_was_set)
{
	uint32_t qp = new_qp(_metadata, self->fd, SV_QPT_RC, self->pd,
			     self->cq);
	struct sv_qp_attr a, want;
	struct sv_query_qp q;
	uint32_t req, opt;

	good_attr(&want, 0, 0);
	want.qp_access_flags = 3;
	want.qkey = 0;
	want.path_mtu = 5;
	want.dest_qp_num = 0xabcdef;
	want.rq_psn = 0x12fedcba;	/* PSNs are 24 bits */
	want.sq_psn = 0xff000001;
	want.max_dest_rd_atomic = SV_MAX_QP_RD_ATOM;
	want.max_rd_atomic = SV_MAX_QP_INIT_RD_ATOM;
	want.min_rnr_timer = 31;
	want.timeout = 31;
	want.retry_cnt = 7;
	want.rnr_retry = 7;
	want.path_mig_state = 2;

	a = want;
	a.qp_state = SV_QPS_INIT;
	trans(SV_QPT_RC, 0, 1, &req, &opt);
	ASSERT_EQ(0, modify(self->fd, qp, SV_QP_STATE | req, &a));
	a.qp_state = SV_QPS_RTR;
	trans(SV_QPT_RC, 1, 2, &req, &opt);
	ASSERT_EQ(0, modify(self->fd, qp,
			    SV_QP_STATE | req | SV_QP_ALT_PATH, &a));
	a.qp_state = SV_QPS_RTS;
	trans(SV_QPT_RC, 2, 3, &req, &opt);
	ASSERT_EQ(0, modify(self->fd, qp,
			    SV_QP_STATE | req | SV_QP_PATH_MIG_STATE, &a));

	ASSERT_EQ(0, query(self->fd, qp, &q));
	EXPECT_EQ(SV_QPS_RTS, q.attr.qp_state);
	EXPECT_EQ(SV_QPS_RTS, q.attr.cur_qp_state);
	EXPECT_EQ(3, q.attr.qp_access_flags);
	EXPECT_EQ(0, q.attr.pkey_index);
	EXPECT_EQ(1, q.attr.port_num);
	EXPECT_EQ(5, q.attr.path_mtu);
	EXPECT_EQ(0xabcdef, q.attr.dest_qp_num);
	EXPECT_EQ(0xfedcba, q.attr.rq_psn);
	EXPECT_EQ(0x000001, q.attr.sq_psn);
	EXPECT_EQ(SV_MAX_QP_RD_ATOM, q.attr.max_dest_rd_atomic);
	EXPECT_EQ(SV_MAX_QP_INIT_RD_ATOM, q.attr.max_rd_atomic);
	EXPECT_EQ(31, q.attr.min_rnr_timer);
	EXPECT_EQ(31, q.attr.timeout);
	EXPECT_EQ(7, q.attr.retry_cnt);
	EXPECT_EQ(7, q.attr.rnr_retry);
	EXPECT_EQ(2, q.attr.path_mig_state);
	EXPECT_EQ(0, memcmp(&want.ah_attr, &q.attr.ah_attr,
			    sizeof(want.ah_attr)));
	EXPECT_EQ(0, memcmp(&want.alt_ah_attr, &q.attr.alt_ah_attr,
			    sizeof(want.alt_ah_attr)));
	EXPECT_EQ(1, q.attr.alt_port_num);
	EXPECT_EQ(10, q.attr.alt_timeout);
	EXPECT_EQ(0, q.attr.sq_draining);
	EXPECT_EQ(0, q.attr.en_sqd_async_notify);
	/* A QP's qkey is not part of RC: never set, still 0. */
	EXPECT_EQ(0, q.attr.qkey);

	/* The size of the first ABI version is enough. */
	memset(&q, 0, sizeof(q));
	q.size = SV_QUERY_QP_SIZE_VER0;
	q.handle = qp;
	EXPECT_EQ(0, sv_ioc(self->fd, SV_IOC_QUERY_QP, &q));
	q.reserved = 1;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_QUERY_QP, &q));
}

TEST_F(dev, ud_qkey)
{
	uint32_t qp = new_qp(_metadata, self->fd, SV_QPT_UD, self->pd,
			     self->cq);
	struct sv_query_qp q;
	struct sv_qp_attr a;

	ASSERT_EQ(0, goto_state(self->fd, qp, SV_QPT_UD, SV_QPS_RTS));
	good_attr(&a, SV_QPS_RTS, SV_QPS_RTS);
	a.qkey = 0x80010000;
	EXPECT_EQ(0, modify(self->fd, qp, SV_QP_QKEY, &a));
	ASSERT_EQ(0, query(self->fd, qp, &q));
	EXPECT_EQ(0x80010000, q.attr.qkey);
	EXPECT_EQ(0x200, q.attr.sq_psn);
}

TEST_F(dev, sq_drained_event)
{
	struct sv_get_async_fd g = { .size = sizeof(g),
				     .flags = SV_EVENT_FD_NONBLOCK };
	struct sv_destroy_qp d = { .size = sizeof(d) };
	struct sv_async_event ev;
	struct sv_create_qp c;
	struct sv_qp_attr a;
	struct sv_query_qp q;

	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_GET_ASYNC_FD, &g));
	sv_qp_req(&c, SV_QPT_RC, self->pd, self->cq, self->cq, 0);
	c.user_handle = 0xfeedface12345678ULL;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_CREATE_QP, &c));
	ASSERT_EQ(0, goto_state(self->fd, c.handle, SV_QPT_RC, SV_QPS_RTS));

	/* Without the notify flag: no event. */
	good_attr(&a, SV_QPS_RTS, SV_QPS_SQD);
	ASSERT_EQ(0, modify(self->fd, c.handle, SV_QP_STATE, &a));
	EXPECT_EQ(-1, read(g.fd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
	good_attr(&a, SV_QPS_SQD, SV_QPS_RTS);
	ASSERT_EQ(0, modify(self->fd, c.handle, SV_QP_STATE, &a));

	good_attr(&a, SV_QPS_RTS, SV_QPS_SQD);
	a.en_sqd_async_notify = 1;
	ASSERT_EQ(0, modify(self->fd, c.handle,
			    SV_QP_STATE | SV_QP_EN_SQD_ASYNC_NOTIFY, &a));
	ASSERT_EQ(0, query(self->fd, c.handle, &q));
	EXPECT_EQ(SV_QPS_SQD, q.attr.qp_state);
	EXPECT_EQ(1, q.attr.en_sqd_async_notify);
	EXPECT_EQ(0, q.attr.sq_draining);
	ASSERT_EQ(sizeof(ev), read(g.fd, &ev, sizeof(ev)));
	EXPECT_EQ(SV_EVENT_SQ_DRAINED, ev.event_type);
	EXPECT_EQ(0xfeedface12345678ULL, ev.element);

	d.handle = c.handle;
	ASSERT_EQ(0, sv_ioc(self->fd, SV_IOC_DESTROY_QP, &d));
	EXPECT_EQ(1, d.events_reported);
	close(g.fd);
}

static int mcast(int fd, unsigned long req, uint32_t qp, const uint8_t *gid)
{
	struct sv_mcast m = { .size = sizeof(m), .qp_handle = qp };

	memcpy(m.gid, gid, 16);
	return sv_ioc(fd, req, &m);
}

TEST_F(dev, multicast)
{
	static const uint8_t mgid[16] = { 0xff, 0x12, 0x60, 0x1b, [15] = 1 };
	static const uint8_t mgid2[16] = { 0xff, 0x0e, [15] = 2 };
	static const uint8_t v4mc[16] = { [10] = 0xff, [11] = 0xff,
					  [12] = 239, [15] = 1 };
	static const uint8_t v4uc[16] = { [10] = 0xff, [11] = 0xff,
					  [12] = 10, [15] = 1 };
	static const uint8_t ucast[16] = { 0xfe, 0x80, [15] = 1 };
	uint32_t ud = new_qp(_metadata, self->fd, SV_QPT_UD, self->pd,
			     self->cq);
	uint32_t rc = new_qp(_metadata, self->fd, SV_QPT_RC, self->pd,
			     self->cq);
	struct sv_mcast m = { .size = sizeof(m), .qp_handle = ud };

	EXPECT_EQ(0, mcast(self->fd, SV_IOC_ATTACH_MCAST, ud, mgid));
	/* Attaching again changes nothing. */
	EXPECT_EQ(0, mcast(self->fd, SV_IOC_ATTACH_MCAST, ud, mgid));
	EXPECT_EQ(0, mcast(self->fd, SV_IOC_ATTACH_MCAST, ud, v4mc));
	EXPECT_EQ(EINVAL, mcast(self->fd, SV_IOC_ATTACH_MCAST, ud, ucast));
	EXPECT_EQ(EINVAL, mcast(self->fd, SV_IOC_ATTACH_MCAST, ud, v4uc));
	EXPECT_EQ(EINVAL, mcast(self->fd, SV_IOC_ATTACH_MCAST, rc, mgid));
	EXPECT_EQ(EINVAL, mcast(self->fd, SV_IOC_ATTACH_MCAST, self->cq,
				mgid));
	EXPECT_EQ(ENOENT, mcast(self->fd, SV_IOC_ATTACH_MCAST, 9999, mgid));
	memcpy(m.gid, mgid2, 16);
	m.reserved = 1;
	EXPECT_EQ(EINVAL, sv_ioc(self->fd, SV_IOC_ATTACH_MCAST, &m));

	/* A QP in a group cannot be destroyed. */
	EXPECT_EQ(EBUSY, sv_destroy_qp(self->fd, ud));
	EXPECT_EQ(0, mcast(self->fd, SV_IOC_DETACH_MCAST, ud, mgid));
	EXPECT_EQ(EINVAL, mcast(self->fd, SV_IOC_DETACH_MCAST, ud, mgid));
	EXPECT_EQ(EINVAL, mcast(self->fd, SV_IOC_DETACH_MCAST, ud, mgid2));
	EXPECT_EQ(EBUSY, sv_destroy_qp(self->fd, ud));
	EXPECT_EQ(0, mcast(self->fd, SV_IOC_DETACH_MCAST, ud, v4mc));
	EXPECT_EQ(0, sv_destroy_qp(self->fd, ud));
	EXPECT_EQ(0, sv_destroy_qp(self->fd, rc));
}

TEST(multicast_group_limit)
{
	uint8_t gid[16] = { 0xff, 0x12, [15] = 7 };
	int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC), i;
	uint32_t pd, cq, qp;

	ASSERT_LE(0, fd);
	pd = sv_alloc_pd(fd);
	cq = sv_create_cq(fd);
	for (i = 0; i < SV_MAX_MCAST_QP_ATTACH; i++) {
		qp = new_qp(_metadata, fd, SV_QPT_UD, pd, cq);
		ASSERT_EQ(0, mcast(fd, SV_IOC_ATTACH_MCAST, qp, gid));
	}
	qp = new_qp(_metadata, fd, SV_QPT_UD, pd, cq);
	EXPECT_EQ(ENOMEM, mcast(fd, SV_IOC_ATTACH_MCAST, qp, gid));
	gid[15] = 8;
	EXPECT_EQ(0, mcast(fd, SV_IOC_ATTACH_MCAST, qp, gid));
	close(fd);
}

/* Closing the file with live QPs in groups frees everything. */
TEST(close_with_live_objects)
{
	static const uint8_t mgid[16] = { 0xff, 0x02, [15] = 9 };
	int base_qp = sv_obj_count("qp"), base_srq = sv_obj_count("srq");
	int base_ah = sv_obj_count("ah"), base_pd = sv_obj_count("pd");
	int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC), i;
	struct sv_create_ah ah = { .size = sizeof(ah) };
	struct sv_create_qp c;
	uint32_t pd, cq, srq;

	if (base_qp < 0)
		SKIP(return, "no debugfs object counters");
	ASSERT_LE(0, fd);
	pd = sv_alloc_pd(fd);
	cq = sv_create_cq(fd);
	ASSERT_EQ(0, sv_create_srq(fd, pd, 16, 1, &srq));
	ah.pd_handle = pd;
	sv_good_av(&ah.attr);
	ASSERT_EQ(0, sv_ioc(fd, SV_IOC_CREATE_AH, &ah));
	for (i = 0; i < 9; i++) {
		sv_qp_req(&c, qp_types[i % 3], pd, cq, cq, i & 1 ? srq : 0);
		ASSERT_EQ(0, sv_ioc(fd, SV_IOC_CREATE_QP, &c));
		if (qp_types[i % 3] == SV_QPT_UD)
			ASSERT_EQ(0, mcast(fd, SV_IOC_ATTACH_MCAST, c.handle,
					   mgid));
		ASSERT_EQ(0, goto_state(fd, c.handle, qp_types[i % 3],
					SV_QPS_RTS));
	}
	EXPECT_EQ(base_qp + 9, sv_obj_count("qp"));
	EXPECT_EQ(base_srq + 1, sv_obj_count("srq"));
	EXPECT_EQ(base_ah + 1, sv_obj_count("ah"));
	close(fd);
	EXPECT_EQ(base_qp, sv_obj_count("qp"));
	EXPECT_EQ(base_srq, sv_obj_count("srq"));
	EXPECT_EQ(base_ah, sv_obj_count("ah"));
	EXPECT_EQ(base_pd, sv_obj_count("pd"));
}

TEST_HARNESS_MAIN
