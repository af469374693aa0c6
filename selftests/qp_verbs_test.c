// SPDX-License-Identifier: GPL-2.0
/*
 * QPs, SRQs, AHs and multicast through the verbs API (libsoftverbs):
 * create/modify/query/destroy as applications call them, ibv_create_qp_ex
 * and ibv_qp_ex, SRQs, AHs (also from a received completion), the SQ
 * drained async event, and the verbs the data path will fill in.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdlib.h>

#include "sv_harness.h"
#include "sv_dp_test.h"
#include "sv_test.h"

FIXTURE(ctx) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	union ibv_gid gid;		/* our GID index 1 (RoCE v2) */
};

FIXTURE_SETUP(ctx)
{
	int n;

	self->list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, self->list) TH_LOG("%s", strerror(errno));
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx) TH_LOG("%s", strerror(errno));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd) TH_LOG("%s", strerror(errno));
	self->cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &self->gid));
}

FIXTURE_TEARDOWN(ctx)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	ibv_free_device_list(self->list);
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = type,
		.cap = { .max_send_wr = 5, .max_recv_wr = 5,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

/* What ibv_rc_pingpong does, against our own QPN. */
static int connect_rc(struct ibv_qp *qp, const union ibv_gid *gid)
{
	return rc_connect_gid(qp, qp->qp_num, gid, 1,
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			      0x111, 0x222);
}

TEST_F(ctx, rc_lifecycle)
{
	struct ibv_qp_init_attr ia = {
		.qp_context = self, .send_cq = self->cq, .recv_cq = self->cq,
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = 100, .max_recv_wr = 3,
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 32 },
	};
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;

	qp = ibv_create_qp(self->pd, &ia);
	ASSERT_NE(NULL, qp) TH_LOG("%s", strerror(errno));
	EXPECT_LE(2, qp->qp_num);
	EXPECT_EQ(IBV_QPS_RESET, qp->state);
	EXPECT_EQ(IBV_QPT_RC, qp->qp_type);
	EXPECT_EQ(self->ctx, qp->context);
	EXPECT_EQ(self->pd, qp->pd);
	EXPECT_LE(100, ia.cap.max_send_wr);
	EXPECT_LE(3, ia.cap.max_recv_wr);

	ASSERT_EQ(0, connect_rc(qp, &self->gid));
	EXPECT_EQ(IBV_QPS_RTS, qp->state);

	ASSERT_EQ(0, ibv_query_qp(qp, &a, IBV_QP_STATE, &qia));
	EXPECT_EQ(IBV_QPS_RTS, a.qp_state);
	EXPECT_EQ(IBV_MTU_1024, a.path_mtu);
	EXPECT_EQ(qp->qp_num, a.dest_qp_num);
	EXPECT_EQ(0x111, a.rq_psn);
	EXPECT_EQ(0x222, a.sq_psn);
	EXPECT_EQ(14, a.timeout);
	EXPECT_EQ(1, a.ah_attr.is_global);
	EXPECT_EQ(1, a.ah_attr.grh.sgid_index);
	EXPECT_EQ(0, memcmp(&self->gid, &a.ah_attr.grh.dgid, 16));
	EXPECT_EQ(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		  a.qp_access_flags);
	EXPECT_EQ(ia.cap.max_send_wr, a.cap.max_send_wr);
	EXPECT_EQ(self, qia.qp_context);
	EXPECT_EQ(self->cq, qia.send_cq);
	EXPECT_EQ(self->cq, qia.recv_cq);
	EXPECT_EQ(NULL, qia.srq);
	EXPECT_EQ(IBV_QPT_RC, qia.qp_type);
	EXPECT_EQ(1, qia.sq_sig_all);
	EXPECT_EQ(ia.cap.max_inline_data, qia.cap.max_inline_data);

	/* A missing required attribute: EINVAL, the state unchanged. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	EXPECT_EQ(IBV_QPS_ERR, qp->state);
	a.qp_state = IBV_QPS_RESET;
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT |
					IBV_QP_PKEY_INDEX));
	EXPECT_EQ(IBV_QPS_RESET, qp->state);

	/* The CQ and PD are in use. */
	EXPECT_EQ(EBUSY, ibv_destroy_cq(self->cq));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(self->cq));
	EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	self->cq = NULL;
}

TEST_F(ctx, create_errors)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = self->cq, .recv_cq = self->cq,
		.qp_type = IBV_QPT_RAW_PACKET,
	};

	EXPECT_EQ(NULL, ibv_create_qp(self->pd, &ia));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ia.qp_type = IBV_QPT_UD;
	ia.cap.max_send_wr = 1u << 30;
	EXPECT_EQ(NULL, ibv_create_qp(self->pd, &ia));
	EXPECT_EQ(EINVAL, errno);
	ia.cap.max_send_wr = 1;
	ia.send_cq = NULL;
	EXPECT_EQ(NULL, ibv_create_qp(self->pd, &ia));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(ctx, create_qp_ex)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = self->cq, .recv_cq = self->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = self->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
	};
	struct ibv_qp_ex *qpx;
	struct ibv_qp *qp;

	qp = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, qp) TH_LOG("%s", strerror(errno));
	qpx = ibv_qp_to_qp_ex(qp);
	ASSERT_NE(NULL, qpx);
	EXPECT_EQ(qp, &qpx->qp_base);
	/* The QP is in RESET: nothing can be posted (datapath_test posts). */
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 0, 0, 0);
	EXPECT_EQ(EINVAL, ibv_wr_complete(qpx));
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	/* Operations the transport does not have. */
	ia.qp_type = IBV_QPT_UD;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ia));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ia.qp_type = IBV_QPT_UC;
	ia.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ia));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ia.send_ops_flags = IBV_QP_EX_WITH_TSO;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ia));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ia.send_ops_flags = 1ull << 40;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ia));
	EXPECT_EQ(EINVAL, errno);
	ia.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE;
	qp = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, qp) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	/* Other comp_mask bits. */
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ia.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ia));
	EXPECT_EQ(EOPNOTSUPP, errno);
	/* An XRC domain is an XRC TGT QP's alone (xrc_test). */
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ia));
	EXPECT_EQ(EINVAL, errno);
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | (1u << 20);
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ia));
	EXPECT_EQ(EINVAL, errno);
	ia.comp_mask = IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ia.create_flags = 0;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ia));
	EXPECT_EQ(EINVAL, errno);

	/* Without SEND_OPS_FLAGS there is no ibv_qp_ex. */
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	qp = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(NULL, ibv_qp_to_qp_ex(qp));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(ctx, data_path_not_yet)
{
	struct ibv_qp *qp = make_qp(self->pd, self->cq, IBV_QPT_UD, NULL);
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *sbad = NULL;
	struct ibv_recv_wr rwr = { 0 }, *rbad = NULL;

	ASSERT_NE(NULL, qp);
	/* In RESET: EINVAL (datapath_test posts in the other states). */
	EXPECT_EQ(EINVAL, ibv_post_send(qp, &swr, &sbad));
	EXPECT_EQ(&swr, sbad);
	EXPECT_EQ(EINVAL, ibv_post_recv(qp, &rwr, &rbad));
	EXPECT_EQ(&rwr, rbad);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(ctx, srq)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 10, .max_sge = 2,
						  .srq_limit = 5 } };
	struct ibv_srq_init_attr_ex sx = { 0 };
	struct ibv_recv_wr rwr = { 0 }, *bad = NULL;
	struct ibv_srq_attr q;
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq) TH_LOG("%s", strerror(errno));
	EXPECT_LE(10, sa.attr.max_wr);
	EXPECT_EQ(2, sa.attr.max_sge);
	ASSERT_EQ(0, ibv_query_srq(srq, &q));
	EXPECT_EQ(sa.attr.max_wr, q.max_wr);
	EXPECT_EQ(0, q.srq_limit);
	q.srq_limit = 4;
	EXPECT_EQ(0, ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT));
	ASSERT_EQ(0, ibv_query_srq(srq, &q));
	EXPECT_EQ(4, q.srq_limit);
	q.srq_limit = q.max_wr + 1;
	EXPECT_EQ(EINVAL, ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT));
	q.max_wr = 64;
	EXPECT_EQ(0, ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR));
	ASSERT_EQ(0, ibv_query_srq(srq, &q));
	EXPECT_EQ(64, q.max_wr);
	EXPECT_EQ(0, ibv_post_srq_recv(srq, &rwr, &bad));

	qp = make_qp(self->pd, self->cq, IBV_QPT_RC, srq);
	ASSERT_NE(NULL, qp) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(srq, qp->srq);
	EXPECT_EQ(EBUSY, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_srq(srq));

	/* 0 is the smallest SRQ, as on mlx5 (pyverbs' default asks it). */
	sa.attr.max_wr = 0;
	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	EXPECT_EQ(1, sa.attr.max_wr);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	sa.attr.max_wr = 1 << 30;
	EXPECT_EQ(NULL, ibv_create_srq(self->pd, &sa));
	EXPECT_EQ(EINVAL, errno);

	/* ibv_create_srq_ex: basic SRQs, and XRC ones (xrc_test). */
	sx.attr.max_wr = 4;
	sx.attr.max_sge = 1;
	sx.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE;
	sx.pd = self->pd;
	sx.srq_type = IBV_SRQT_BASIC;
	srq = ibv_create_srq_ex(self->ctx, &sx);
	ASSERT_NE(NULL, srq) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	/* An XRC SRQ without its domain and CQ */
	sx.srq_type = IBV_SRQT_XRC;
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &sx));
	EXPECT_EQ(EINVAL, errno);
	/* A tag-matching SRQ without its CQ and tm_cap */
	sx.srq_type = IBV_SRQT_TM;
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &sx));
	EXPECT_EQ(EINVAL, errno);
	/* No PD */
	sx.srq_type = IBV_SRQT_BASIC;
	sx.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_CQ;
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &sx));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(ctx, ah)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = self->gid, .sgid_index = 1, .hop_limit = 64 },
	};
	struct ibv_ah *ah;

	ah = ibv_create_ah(self->pd, &a);
	ASSERT_NE(NULL, ah) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(self->pd, ah->pd);
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_destroy_ah(ah));
	a.is_global = 0;
	EXPECT_EQ(NULL, ibv_create_ah(self->pd, &a));
	EXPECT_EQ(EINVAL, errno);
	a.is_global = 1;
	a.port_num = 2;
	EXPECT_EQ(NULL, ibv_create_ah(self->pd, &a));
	EXPECT_EQ(EINVAL, errno);
}

static void make_grh6(struct ibv_grh *g, const union ibv_gid *src,
		      const union ibv_gid *dst)
{
	memset(g, 0, sizeof(*g));
	g->version_tclass_flow = htonl(6u << 28 | 0x5au << 20 | 0xabcde);
	g->next_hdr = 0x11;
	g->hop_limit = 64;
	g->sgid = *src;
	g->dgid = *dst;
}

TEST_F(ctx, ah_from_wc)
{
	union ibv_gid remote = { .raw = { 0xfe, 0x80, [8] = 2, [15] = 9 } };
	struct ibv_wc wc = { .wc_flags = IBV_WC_GRH, .sl = 2, .slid = 7 };
	struct ibv_ah_attr a;
	struct ibv_grh grh;
	uint8_t *ip4 = (uint8_t *)&grh + 20;
	struct ibv_ah *ah;

	make_grh6(&grh, &remote, &self->gid);
	ASSERT_EQ(0, ibv_init_ah_from_wc(self->ctx, 1, &wc, &grh, &a));
	EXPECT_EQ(1, a.is_global);
	EXPECT_EQ(1, a.port_num);
	EXPECT_EQ(0, memcmp(&remote, &a.grh.dgid, 16));
	EXPECT_EQ(1, a.grh.sgid_index);	/* the RoCE v2 entry of our GID */
	EXPECT_EQ(0xabcde, a.grh.flow_label);
	EXPECT_EQ(0x5a, a.grh.traffic_class);
	EXPECT_EQ(0xff, a.grh.hop_limit);
	EXPECT_EQ(2, a.sl);

	ah = ibv_create_ah_from_wc(self->pd, &wc, &grh, 1);
	ASSERT_NE(NULL, ah) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, ibv_destroy_ah(ah));

	/* RoCE needs the GRH. */
	wc.wc_flags = 0;
	EXPECT_EQ(-1, ibv_init_ah_from_wc(self->ctx, 1, &wc, &grh, &a));
	EXPECT_EQ(EINVAL, errno);
	wc.wc_flags = IBV_WC_GRH;
	EXPECT_EQ(-1, ibv_init_ah_from_wc(self->ctx, 2, &wc, &grh, &a));
	EXPECT_EQ(EINVAL, errno);
	/* Sent to a GID that is not ours. */
	make_grh6(&grh, &remote, &remote);
	EXPECT_EQ(-1, ibv_init_ah_from_wc(self->ctx, 1, &wc, &grh, &a));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(NULL, ibv_create_ah_from_wc(self->pd, &wc, &grh, 1));
	EXPECT_EQ(ENOENT, errno);
	/* Neither an IPv6 nor a valid IPv4 header. */
	memset(&grh, 0, sizeof(grh));
	EXPECT_EQ(-1, ibv_init_ah_from_wc(self->ctx, 1, &wc, &grh, &a));
	EXPECT_EQ(EINVAL, errno);
	/* RoCE v2 over IPv4: 10.0.0.2 -> 10.0.0.1 is no GID of ours. */
	ip4[0] = 0x45;
	ip4[8] = 64;
	ip4[9] = 17;
	ip4[12] = 10; ip4[15] = 2;
	ip4[16] = 10; ip4[19] = 1;
	{
		uint32_t sum = 0;
		int i;

		for (i = 0; i < 20; i += 2)
			sum += (ip4[i] << 8) | ip4[i + 1];
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		sum = ~sum & 0xffff;
		ip4[10] = sum >> 8;
		ip4[11] = sum & 0xff;
	}
	EXPECT_EQ(-1, ibv_init_ah_from_wc(self->ctx, 1, &wc, &grh, &a));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(ctx, multicast)
{
	union ibv_gid mgid = { .raw = { 0xff, 0x12, 0x40, 0x1b, [15] = 3 } };
	struct ibv_qp *ud = make_qp(self->pd, self->cq, IBV_QPT_UD, NULL);
	struct ibv_qp *rc = make_qp(self->pd, self->cq, IBV_QPT_RC, NULL);

	ASSERT_NE(NULL, ud);
	ASSERT_NE(NULL, rc);
	EXPECT_EQ(0, ibv_attach_mcast(ud, &mgid, 0));
	EXPECT_EQ(0, ibv_attach_mcast(ud, &mgid, 0));
	EXPECT_EQ(EINVAL, ibv_attach_mcast(rc, &mgid, 0));
	EXPECT_EQ(EINVAL, ibv_attach_mcast(ud, &self->gid, 0));
	EXPECT_EQ(EBUSY, ibv_destroy_qp(ud));
	EXPECT_EQ(0, ibv_detach_mcast(ud, &mgid, 0));
	EXPECT_EQ(EINVAL, ibv_detach_mcast(ud, &mgid, 0));
	EXPECT_EQ(0, ibv_destroy_qp(ud));
	EXPECT_EQ(0, ibv_destroy_qp(rc));
}

TEST_F(ctx, sq_drained_event)
{
	struct ibv_qp *qp = make_qp(self->pd, self->cq, IBV_QPT_RC, NULL);
	struct ibv_async_event ev;
	struct ibv_qp_attr a = { 0 };

	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, connect_rc(qp, &self->gid));
	a.qp_state = IBV_QPS_SQD;
	a.en_sqd_async_notify = 1;
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE |
				   IBV_QP_EN_SQD_ASYNC_NOTIFY));
	ASSERT_EQ(0, ibv_get_async_event(self->ctx, &ev));
	EXPECT_EQ(IBV_EVENT_SQ_DRAINED, ev.event_type);
	EXPECT_EQ(qp, ev.element.qp);
	ibv_ack_async_event(&ev);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/*
 * A QP moved to RESET, or destroyed, leaves none of its completions in
 * its CQs, as mlx5's provider cleans them (rdma-core's tests restart a
 * failed QP from RESET and poll on): a responder's error and flushes go,
 * the other QPs' completions on the CQ stay, in order.
 */
TEST(reset_and_destroy_drop_their_cqes)
{
	struct ibv_qp *c, *d;
	struct sv_rc_pair p = {};
	struct ibv_mr *mr;
	struct ibv_wc wc;
	char *buf;

	ASSERT_EQ(0, sv_rc_pair_open(&p, 8, 1));
	buf = calloc(1, 4096);
	ASSERT_NE(NULL, buf);
	mr = ibv_reg_mr(p.pd, buf, 4096, SV_ALL_ACCESS);
	ASSERT_NE(NULL, mr);
	/* c shares a's CQ, d b's; c writes into d's memory. */
	c = sv_rc_pair_qp(&p, p.acq, 8, 1);
	d = sv_rc_pair_qp(&p, p.bcq, 8, 1);
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, qp_init(c, SV_ALL_ACCESS));
	ASSERT_EQ(0, qp_init(d, SV_ALL_ACCESS));
	ASSERT_EQ(0, qp_rtr_rts(c, d->qp_num, &p.gid, 7, 1, 0));
	ASSERT_EQ(0, qp_rtr_rts(d, c->qp_num, &p.gid, 7, 1, 0));

	ASSERT_EQ(0, post_send(c, IBV_WR_RDMA_WRITE, mr->lkey, buf, 64, 100,
			       IBV_SEND_SIGNALED, (uintptr_t)buf + 1024,
			       mr->rkey));
	/* a's first receive has a bad key: its error, then a flush. */
	{
		struct ibv_sge sg = { (uintptr_t)buf, 64, mr->lkey ^ 0x100 };
		struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sg,
					  .num_sge = 1 };
		struct ibv_recv_wr *bad;

		ASSERT_EQ(0, ibv_post_recv(p.a, &wr, &bad));
		ASSERT_EQ(0, post_recv(p.a, mr, buf, 64, 2));
	}
	ASSERT_EQ(0, post_send(p.b, IBV_WR_SEND, mr->lkey, buf + 2048, 64, 10,
			       IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(0, post_send(c, IBV_WR_RDMA_WRITE, mr->lkey, buf, 64, 101,
			       IBV_SEND_SIGNALED, (uintptr_t)buf + 1024,
			       mr->rkey));
	/* b hears the error after a's CQE went in; a's flush follows. */
	EXPECT_EQ(IBV_WC_REM_OP_ERR, sv_status_of(p.bcq, 10, NULL));
	usleep(100000 * sv_slow());

	ASSERT_EQ(0, ibv_modify_qp(p.a, &(struct ibv_qp_attr){
		.qp_state = IBV_QPS_RESET }, IBV_QP_STATE));
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(p.acq, 100, &wc));
	EXPECT_EQ(c->qp_num, wc.qp_num);
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(p.acq, 101, &wc));
	EXPECT_EQ(c->qp_num, wc.qp_num);
	EXPECT_EQ(0, ibv_poll_cq(p.acq, 1, &wc));
	ASSERT_EQ(0, ibv_modify_qp(p.b, &(struct ibv_qp_attr){
		.qp_state = IBV_QPS_RESET }, IBV_QP_STATE));
	EXPECT_EQ(0, ibv_poll_cq(p.bcq, 1, &wc));

	/* Back to RTS, both: only the new traffic's completions show. */
	ASSERT_EQ(0, qp_reset_rts(p.a, p.b->qp_num, &p.gid, 0));
	ASSERT_EQ(0, qp_reset_rts(p.b, p.a->qp_num, &p.gid, 0));
	ASSERT_EQ(0, post_recv(p.a, mr, buf, 64, 3));
	ASSERT_EQ(0, post_send(p.b, IBV_WR_SEND, mr->lkey, buf + 2048, 64, 11,
			       IBV_SEND_SIGNALED, 0, 0));
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(p.bcq, 11, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(p.acq, 3, &wc));
	EXPECT_EQ(p.a->qp_num, wc.qp_num);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);

	/* A destroyed QP's completions go with it; a's stay. */
	ASSERT_EQ(0, post_recv(p.a, mr, buf, 64, 4));
	ASSERT_EQ(0, post_send(p.b, IBV_WR_SEND, mr->lkey, buf + 2048, 64, 12,
			       IBV_SEND_SIGNALED, 0, 0));
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(p.bcq, 12, NULL));
	ASSERT_EQ(0, post_send(c, IBV_WR_RDMA_WRITE, mr->lkey, buf, 64, 102,
			       IBV_SEND_SIGNALED, (uintptr_t)buf + 1024,
			       mr->rkey));
	usleep(100000 * sv_slow());
	EXPECT_EQ(0, ibv_destroy_qp(c));
	EXPECT_EQ(IBV_WC_SUCCESS, sv_status_of(p.acq, 4, &wc));
	EXPECT_EQ(p.a->qp_num, wc.qp_num);
	EXPECT_EQ(0, ibv_poll_cq(p.acq, 1, &wc));

	EXPECT_EQ(0, ibv_destroy_qp(d));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	free(buf);
	sv_rc_pair_close(&p);
}

TEST_HARNESS_MAIN
