// SPDX-License-Identifier: GPL-2.0
/*
 * XRC (ibv_open_xrcd(3), ibv_create_srq_ex(3), ibv_create_qp_ex(3),
 * ibv_open_qp(3)): domains shared by file, XRC SRQs, INI and TGT QPs.
 *
 *   - domains: fd -1 is a new domain; a file's inode names one domain on
 *     the device for every process (O_CREAT makes it, O_EXCL refuses an
 *     existing one, neither finds only), a bad fd is EBADF; a domain with
 *     an XRC SRQ or TGT QP of this handle does not close (EBUSY);
 *   - the data path: an INI QP's messages land in the XRC SRQ each WR
 *     names, data verified, the completion on that SRQ's CQ with the TGT
 *     QP's qp_num, the INI QP's src_qp, the immediate; RDMA WRITE, READ and
 *     atomics through the TGT QP with a key of the SRQ's PD; ibv_wr_* with
 *     ibv_wr_set_xrc_srqn();
 *   - the bad cases: an SRQ number that is no XRC SRQ, or one of another
 *     domain, completes IBV_WC_REM_INV_REQ_ERR and puts the TGT QP in ERR;
 *     no receive queue on either XRC QP, no send queue on the TGT QP
 *     (EINVAL); create and open attributes missing or wrong (EINVAL,
 *     ENOENT);
 *   - across processes: a child opens the parent's domain through the
 *     same file and ibv_open_qp()s its TGT QP; the parent destroys its
 *     handle and the QP keeps working for the child's INI QP; with the
 *     last handle it is gone (ENOENT). A process outside the domain cannot
 *     open the QP.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"
#include "sv_harness.h"
#include "sv_dp_test.h"

#define LEN	4096
#define ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |	\
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

FIXTURE(xrc) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	char path[64];
	int fd;
	struct ibv_xrcd *xrcd;
	char *buf;
	struct ibv_mr *mr;
};

static struct ibv_xrcd *open_xrcd(struct ibv_context *ctx, int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd, .oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *xsrq(struct ibv_context *ctx, struct ibv_pd *pd,
			    struct ibv_xrcd *xrcd, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = xrcd, .cq = cq,
	};

	return ibv_create_srq_ex(ctx, &a);
}

static struct ibv_qp *tgt_qp(struct ibv_context *ctx, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = xrcd,
	};

	return ibv_create_qp_ex(ctx, &a);
}

static struct ibv_qp *ini_qp(struct ibv_context *ctx, struct ibv_pd *pd,
			     struct ibv_cq *cq, uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = cq,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
	};

	if (send_ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = send_ops;
	}
	return ibv_create_qp_ex(ctx, &a);
}

/* Connect an INI QP and a TGT QP to each other, as ibv_xsrq_pingpong. */
static int xrc_connect(struct ibv_qp *ini, struct ibv_qp *tgt,
		       const union ibv_gid *gid)
{
	return rc_connect_gid(tgt, ini->qp_num, gid, 1, ACCESS, 0, 0) ||
	       rc_connect_gid(ini, tgt->qp_num, gid, 1, 0, 0, 0);
}

/* One XRC WR from ini to the SRQ srqn. */
static int xpost(struct ibv_qp *ini, enum ibv_wr_opcode op, struct ibv_mr *mr,
		 void *buf, uint32_t len, uint32_t srqn, uint64_t raddr,
		 uint32_t rkey)
{
	struct ibv_sge sg = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sg, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	wr.imm_data = htobe32(0x5eed);
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(ini, &wr, &bad);
}

static int xpost_recv(struct ibv_srq *srq, struct ibv_mr *mr, void *buf,
		      uint32_t len, uint64_t id)
{
	struct ibv_sge sg = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

FIXTURE_SETUP(xrc)
{
	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &self->gid));
	self->pd = ibv_alloc_pd(self->ctx);
	self->scq = ibv_create_cq(self->ctx, 32, NULL, NULL, 0);
	self->rcq = ibv_create_cq(self->ctx, 32, NULL, NULL, 0);
	ASSERT_NE(NULL, self->pd);
	ASSERT_NE(NULL, self->scq);
	ASSERT_NE(NULL, self->rcq);
	snprintf(self->path, sizeof(self->path), "/tmp/sv_xrc_%d", getpid());
	self->fd = open(self->path, O_RDWR | O_CREAT, 0600);
	ASSERT_LE(0, self->fd);
	self->xrcd = open_xrcd(self->ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, self->xrcd);
	self->buf = aligned_alloc(4096, 4 * LEN);
	ASSERT_NE(NULL, self->buf);
	memset(self->buf, 0, 4 * LEN);
	self->mr = ibv_reg_mr(self->pd, self->buf, 4 * LEN, ACCESS);
	ASSERT_NE(NULL, self->mr);
}

FIXTURE_TEARDOWN(xrc)
{
	/* Closing the device frees what a failed test left. */
	if (self->ctx)
		ibv_close_device(self->ctx);
	ibv_free_device_list(self->list);
	if (self->fd >= 0) {
		close(self->fd);
		unlink(self->path);
	}
	free(self->buf);
}

TEST_F(xrc, device_says_xrc)
{
	struct ibv_device_attr a;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &a));
	EXPECT_TRUE(a.device_cap_flags & IBV_DEVICE_XRC);
}

TEST_F(xrc, domain_open_flags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD, .fd = -1,
	};
	struct ibv_xrcd *x, *anon;
	char other[80];
	int ofd;

	/* The same file again: found, with or without O_CREAT. */
	x = open_xrcd(self->ctx, self->fd, 0);
	ASSERT_NE(NULL, x);
	EXPECT_EQ(0, ibv_close_xrcd(x));
	x = open_xrcd(self->ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, x);
	EXPECT_EQ(0, ibv_close_xrcd(x));
	/* It exists: O_EXCL refuses it. */
	EXPECT_EQ(NULL, open_xrcd(self->ctx, self->fd, O_CREAT | O_EXCL));
	EXPECT_EQ(EINVAL, errno);
	/* A file nobody opened a domain with: not without O_CREAT. */
	snprintf(other, sizeof(other), "%s.b", self->path);
	ofd = open(other, O_RDWR | O_CREAT, 0600);
	ASSERT_LE(0, ofd);
	EXPECT_EQ(NULL, open_xrcd(self->ctx, ofd, 0));
	EXPECT_EQ(EINVAL, errno);
	x = open_xrcd(self->ctx, ofd, O_CREAT | O_EXCL);
	ASSERT_NE(NULL, x);
	EXPECT_EQ(0, ibv_close_xrcd(x));
	/* Its last handle closed: the domain is gone with it. */
	EXPECT_EQ(NULL, open_xrcd(self->ctx, ofd, 0));
	EXPECT_EQ(EINVAL, errno);
	close(ofd);
	unlink(other);
	/* A descriptor that is no file: EBADF. */
	EXPECT_EQ(NULL, open_xrcd(self->ctx, 1000, O_CREAT));
	EXPECT_EQ(EBADF, errno);
	/* oflags beyond O_CREAT and O_EXCL */
	EXPECT_EQ(NULL, open_xrcd(self->ctx, self->fd, O_CREAT | O_TRUNC));
	EXPECT_EQ(EINVAL, errno);
	/* Without both fd and oflags in comp_mask (rdma-core: EINVAL) */
	EXPECT_EQ(NULL, ibv_open_xrcd(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	/* fd -1: a domain of its own, twice two different ones */
	anon = open_xrcd(self->ctx, -1, 0);
	ASSERT_NE(NULL, anon);
	x = open_xrcd(self->ctx, -1, 0);
	ASSERT_NE(NULL, x);
	EXPECT_EQ(0, ibv_close_xrcd(x));
	EXPECT_EQ(0, ibv_close_xrcd(anon));
}

TEST_F(xrc, domain_busy_while_used)
{
	struct ibv_xrcd *x = open_xrcd(self->ctx, -1, 0);
	struct ibv_srq *srq;
	struct ibv_qp *tgt;

	ASSERT_NE(NULL, x);
	srq = xsrq(self->ctx, self->pd, x, self->rcq);
	ASSERT_NE(NULL, srq);
	tgt = tgt_qp(self->ctx, x);
	ASSERT_NE(NULL, tgt);
	EXPECT_EQ(EBUSY, ibv_close_xrcd(x));
	/* ... and the CQ and PD the SRQ uses */
	EXPECT_EQ(EBUSY, ibv_destroy_cq(self->rcq));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(EBUSY, ibv_close_xrcd(x));
	EXPECT_EQ(0, ibv_destroy_qp(tgt));
	EXPECT_EQ(0, ibv_close_xrcd(x));
}

TEST_F(xrc, create_bad_attributes)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD,
		.srq_type = IBV_SRQT_XRC, .pd = self->pd, .xrcd = self->xrcd,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = self->pd,
	};
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = 0xfffff0, .xrcd = self->xrcd,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_qp *rc, *ini;
	struct ibv_qp_init_attr ia = {
		.send_cq = self->scq, .recv_cq = self->scq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	/* An XRC SRQ without its CQ */
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &sa));
	EXPECT_EQ(EINVAL, errno);
	/* A tag-matching SRQ without IBV_SRQ_INIT_ATTR_TM */
	sa.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
	sa.cq = self->rcq;
	sa.srq_type = IBV_SRQT_TM;
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &sa));
	EXPECT_EQ(EINVAL, errno);
	/* A TGT QP without its domain */
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &qa));
	EXPECT_EQ(EINVAL, errno);
	/* A domain on a QP that is not a TGT QP */
	qa.qp_type = IBV_QPT_RC;
	qa.send_cq = qa.recv_cq = self->scq;
	qa.comp_mask |= IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = self->xrcd;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &qa));
	EXPECT_EQ(EINVAL, errno);
	/* An INI QP without a PD */
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = 0;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &qa));
	EXPECT_EQ(EINVAL, errno);
	/* Opening a QP the domain has none of; or not the TGT type */
	EXPECT_EQ(NULL, ibv_open_qp(self->ctx, &oa));
	EXPECT_EQ(ENOENT, errno);
	rc = ibv_create_qp(self->pd, &ia);
	ASSERT_NE(NULL, rc);
	oa.qp_num = rc->qp_num;
	EXPECT_EQ(NULL, ibv_open_qp(self->ctx, &oa));
	EXPECT_EQ(ENOENT, errno);
	oa.qp_type = IBV_QPT_RC;
	EXPECT_EQ(NULL, ibv_open_qp(self->ctx, &oa));
	EXPECT_EQ(EINVAL, errno);
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_TYPE;
	EXPECT_EQ(NULL, ibv_open_qp(self->ctx, &oa));
	EXPECT_EQ(EINVAL, errno);
	/* The receive caps of an INI QP come back 0. */
	ini = ini_qp(self->ctx, self->pd, self->scq, 0);
	ASSERT_NE(NULL, ini);
	EXPECT_EQ(0, ibv_destroy_qp(ini));
	EXPECT_EQ(0, ibv_destroy_qp(rc));
}

TEST_F(xrc, send_lands_in_named_srq)
{
	struct ibv_srq *s1 = xsrq(self->ctx, self->pd, self->xrcd, self->rcq);
	struct ibv_srq *s2 = xsrq(self->ctx, self->pd, self->xrcd, self->rcq);
	struct ibv_qp *tgt = tgt_qp(self->ctx, self->xrcd);
	struct ibv_qp *ini = ini_qp(self->ctx, self->pd, self->scq, 0);
	char *src = self->buf, *d1 = self->buf + LEN, *d2 = self->buf + 2 * LEN;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_qp_attr qa;
	uint32_t n1, n2;
	struct ibv_wc wc;

	ASSERT_NE(NULL, s1);
	ASSERT_NE(NULL, s2);
	ASSERT_NE(NULL, tgt);
	ASSERT_NE(NULL, ini);
	ASSERT_EQ(0, ibv_get_srq_num(s1, &n1));
	ASSERT_EQ(0, ibv_get_srq_num(s2, &n2));
	EXPECT_NE(n1, n2);
	ASSERT_EQ(0, xrc_connect(ini, tgt, &self->gid));
	ASSERT_EQ(0, xpost_recv(s1, self->mr, d1, LEN, 11));
	ASSERT_EQ(0, xpost_recv(s2, self->mr, d2, LEN, 22));

	/* To the second SRQ first: it takes it, the first has nothing. */
	sv_fill(src, LEN, 3);
	ASSERT_EQ(0, xpost(ini, IBV_WR_SEND_WITH_IMM, self->mr, src, 3000, n2,
			   0, 0));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_SEND, wc.opcode);
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(22, wc.wr_id);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(3000, wc.byte_len);
	EXPECT_EQ(tgt->qp_num, wc.qp_num);
	EXPECT_EQ(ini->qp_num, wc.src_qp);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htobe32(0x5eed), wc.imm_data);
	EXPECT_EQ(0, memcmp(d2, src, 3000));
	EXPECT_EQ(0, d1[0]);

	sv_fill(src, LEN, 9);
	ASSERT_EQ(0, xpost(ini, IBV_WR_SEND, self->mr, src, LEN, n1, 0, 0));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(11, wc.wr_id);
	EXPECT_EQ(LEN, wc.byte_len);
	EXPECT_EQ(0, memcmp(d1, src, LEN));

	/* Neither XRC QP has a receive queue, the TGT QP no send queue. */
	rwr.num_sge = 0;
	EXPECT_EQ(EINVAL, ibv_post_recv(ini, &rwr, &rbad));
	EXPECT_EQ(EINVAL, ibv_post_recv(tgt, &rwr, &rbad));
	EXPECT_NE(0, xpost(tgt, IBV_WR_SEND, self->mr, src, 8, n1, 0, 0));
	/* The TGT QP's attributes are what its connect set */
	EXPECT_EQ(IBV_QPS_RTS, qp_state(tgt));
	ASSERT_EQ(0, ibv_query_qp(tgt, &qa, IBV_QP_DEST_QPN,
				  &(struct ibv_qp_init_attr){}));
	EXPECT_EQ(ini->qp_num, qa.dest_qp_num);

	EXPECT_EQ(0, ibv_destroy_qp(ini));
	EXPECT_EQ(0, ibv_destroy_qp(tgt));
	EXPECT_EQ(0, ibv_destroy_srq(s1));
	EXPECT_EQ(0, ibv_destroy_srq(s2));
}

/* RDMA and atomics through a TGT QP use the named SRQ's PD. */
TEST_F(xrc, rdma_and_atomics_through_tgt)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_srq *srq = xsrq(self->ctx, self->pd, self->xrcd, self->rcq);
	struct ibv_qp *tgt = tgt_qp(self->ctx, self->xrcd);
	struct ibv_qp *ini = ini_qp(self->ctx, pd2, self->scq, 0);
	char *lbuf = aligned_alloc(4096, 2 * LEN);
	char *remote = self->buf + LEN;
	struct ibv_mr *lmr;
	uint32_t n;
	struct ibv_wc wc;
	uint64_t v;

	ASSERT_NE(NULL, pd2);
	ASSERT_NE(NULL, srq);
	ASSERT_NE(NULL, tgt);
	ASSERT_NE(NULL, ini);
	ASSERT_NE(NULL, lbuf);
	/* The INI QP's memory is in its own PD. */
	lmr = ibv_reg_mr(pd2, lbuf, 2 * LEN, ACCESS);
	ASSERT_NE(NULL, lmr);
	ASSERT_EQ(0, ibv_get_srq_num(srq, &n));
	ASSERT_EQ(0, xrc_connect(ini, tgt, &self->gid));

	sv_fill(lbuf, LEN, 5);
	ASSERT_EQ(0, xpost(ini, IBV_WR_RDMA_WRITE, lmr, lbuf, LEN, n,
			   (uintptr_t)remote, self->mr->rkey));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
	EXPECT_EQ(0, memcmp(remote, lbuf, LEN));

	sv_fill(remote, LEN, 6);
	ASSERT_EQ(0, xpost(ini, IBV_WR_RDMA_READ, lmr, lbuf + LEN, LEN, n,
			   (uintptr_t)remote, self->mr->rkey));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
	EXPECT_EQ(0, memcmp(lbuf + LEN, remote, LEN));

	memcpy(remote, &(uint64_t){ 37 }, 8);
	ASSERT_EQ(0, xpost(ini, IBV_WR_ATOMIC_FETCH_AND_ADD, lmr, lbuf, 8, n,
			   (uintptr_t)remote, self->mr->rkey));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_FETCH_ADD, wc.opcode);
	memcpy(&v, lbuf, 8);
	EXPECT_EQ(37, v);
	memcpy(&v, remote, 8);
	EXPECT_EQ(42, v);
	/* Nothing reached the SRQ's CQ. */
	EXPECT_EQ(0, ibv_poll_cq(self->rcq, 1, &wc));

	/*
	 * A key of the INI side's PD is not the responder's: the SRQ's PD
	 * decides, as the IB spec's XRC annex.
	 */
	ASSERT_EQ(0, xpost(ini, IBV_WR_RDMA_WRITE, lmr, lbuf, 8, n,
			   (uintptr_t)lbuf, lmr->rkey));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
	EXPECT_EQ(IBV_QPS_ERR, qp_state(tgt));

	EXPECT_EQ(0, ibv_destroy_qp(ini));
	EXPECT_EQ(0, ibv_destroy_qp(tgt));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_dereg_mr(lmr));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
	free(lbuf);
}

/* An SRQ number that is no XRC SRQ of the TGT QP's domain. */
TEST_F(xrc, foreign_or_missing_srq)
{
	struct ibv_xrcd *other = open_xrcd(self->ctx, -1, 0);
	struct ibv_srq *mine, *theirs, *basic;
	struct ibv_srq_init_attr bi = { .attr = { .max_wr = 4, .max_sge = 1 } };
	uint32_t nums[3];
	struct ibv_qp *tgt, *ini;
	struct ibv_wc wc;
	int i;

	ASSERT_NE(NULL, other);
	mine = xsrq(self->ctx, self->pd, self->xrcd, self->rcq);
	theirs = xsrq(self->ctx, self->pd, other, self->rcq);
	basic = ibv_create_srq(self->pd, &bi);
	ASSERT_NE(NULL, mine);
	ASSERT_NE(NULL, theirs);
	ASSERT_NE(NULL, basic);
	ASSERT_EQ(0, ibv_get_srq_num(theirs, &nums[0]));
	ASSERT_EQ(0, ibv_get_srq_num(basic, &nums[1]));
	nums[2] = 0xfffff0;
	ASSERT_EQ(0, xpost_recv(theirs, self->mr, self->buf + LEN, LEN, 1));
	ASSERT_EQ(0, ibv_post_srq_recv(basic, &(struct ibv_recv_wr){
		.sg_list = &(struct ibv_sge){ (uintptr_t)self->buf, LEN,
					      self->mr->lkey },
		.num_sge = 1 }, &(struct ibv_recv_wr *){ NULL }));
	for (i = 0; i < 3; i++) {
		tgt = tgt_qp(self->ctx, self->xrcd);
		ini = ini_qp(self->ctx, self->pd, self->scq, 0);
		ASSERT_NE(NULL, tgt);
		ASSERT_NE(NULL, ini);
		ASSERT_EQ(0, xrc_connect(ini, tgt, &self->gid));
		ASSERT_EQ(0, xpost(ini, IBV_WR_SEND, self->mr,
				   self->buf + 2 * LEN, 64, nums[i], 0, 0));
		ASSERT_EQ(1, poll1(self->scq, &wc));
		EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, wc.status);
		EXPECT_EQ(IBV_QPS_ERR, qp_state(tgt));
		EXPECT_EQ(IBV_QPS_ERR, qp_state(ini));
		EXPECT_EQ(0, ibv_destroy_qp(ini));
		EXPECT_EQ(0, ibv_destroy_qp(tgt));
	}
	/* Nothing was placed or completed anywhere. */
	EXPECT_EQ(0, ibv_poll_cq(self->rcq, 1, &wc));
	EXPECT_EQ(0, self->buf[LEN]);
	EXPECT_EQ(0, ibv_destroy_srq(mine));
	EXPECT_EQ(0, ibv_destroy_srq(theirs));
	EXPECT_EQ(0, ibv_destroy_srq(basic));
	EXPECT_EQ(0, ibv_close_xrcd(other));
}

static int ioc(struct ibv_context *ctx, unsigned long req, void *arg)
{
	return ioctl(ctx->cmd_fd, req, arg) ? errno : 0;
}

/* The kernel's own checks of the new fields (what the library never sends). */
TEST_F(xrc, ioctl_fields)
{
	struct sv_create_srq c = { .size = sizeof(c), .max_wr = 4,
				   .pd_handle = self->pd->handle };
	struct sv_create_qp q = { .size = sizeof(q) };
	struct sv_open_qp o = { .size = sizeof(o),
				.qp_type = SV_QPT_XRC_RECV };
	struct sv_close_xrcd x = { .size = sizeof(x),
				   .handle = self->pd->handle };

	c.srq_type = 3;
	EXPECT_EQ(EINVAL, ioc(self->ctx, SV_IOC_CREATE_SRQ, &c));
	/* A TM SRQ without its CQ and tm_cap */
	c.srq_type = SV_SRQT_TM;
	EXPECT_EQ(EINVAL, ioc(self->ctx, SV_IOC_CREATE_SRQ, &c));
	/* A CQ or a domain on a basic SRQ */
	c.srq_type = SV_SRQT_BASIC;
	c.cq_handle = self->rcq->handle;
	EXPECT_EQ(EINVAL, ioc(self->ctx, SV_IOC_CREATE_SRQ, &c));
	/* An XRC SRQ whose domain handle is a PD's */
	c.srq_type = SV_SRQT_XRC;
	c.xrcd_handle = self->pd->handle;
	EXPECT_EQ(EINVAL, ioc(self->ctx, SV_IOC_CREATE_SRQ, &c));
	c.xrcd_handle = 0x7ffffff0;
	EXPECT_EQ(ENOENT, ioc(self->ctx, SV_IOC_CREATE_SRQ, &c));
	c.xrcd_handle = 0;
	c.srq_type = SV_SRQT_BASIC;
	c.cq_handle = 0;
	c.reserved3 = 1;
	EXPECT_EQ(EINVAL, ioc(self->ctx, SV_IOC_CREATE_SRQ, &c));
	/* A TGT QP with a PD, a CQ, a queue or a flag of other QPs */
	q.qp_type = SV_QPT_XRC_RECV;
	q.xrcd_handle = 0x7ffffff0;
	EXPECT_EQ(ENOENT, ioc(self->ctx, SV_IOC_CREATE_QP, &q));
	q.pd_handle = self->pd->handle;
	EXPECT_EQ(EINVAL, ioc(self->ctx, SV_IOC_CREATE_QP, &q));
	q.pd_handle = 0;
	q.create_flags = 1 << 1;
	EXPECT_EQ(EINVAL, ioc(self->ctx, SV_IOC_CREATE_QP, &q));
	/* An INI QP with a receive CQ */
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.qp_type = SV_QPT_XRC_SEND;
	q.pd_handle = self->pd->handle;
	q.send_cq_handle = q.recv_cq_handle = self->scq->handle;
	EXPECT_EQ(EINVAL, ioc(self->ctx, SV_IOC_CREATE_QP, &q));
	/* Open: reserved, a handle that is no domain */
	o.xrcd_handle = self->pd->handle;
	EXPECT_EQ(EINVAL, ioc(self->ctx, SV_IOC_OPEN_QP, &o));
	o.reserved = 1;
	EXPECT_EQ(EINVAL, ioc(self->ctx, SV_IOC_OPEN_QP, &o));
	/* Close a PD as a domain */
	EXPECT_EQ(EINVAL, ioc(self->ctx, SV_IOC_CLOSE_XRCD, &x));
	x.handle = 0x7ffffff0;
	EXPECT_EQ(ENOENT, ioc(self->ctx, SV_IOC_CLOSE_XRCD, &x));
}

/* The extended post API: ibv_wr_set_xrc_srqn(). */
TEST_F(xrc, wr_api_sets_srqn)
{
	struct ibv_srq *srq = xsrq(self->ctx, self->pd, self->xrcd, self->rcq);
	struct ibv_qp *tgt = tgt_qp(self->ctx, self->xrcd);
	struct ibv_qp *ini = ini_qp(self->ctx, self->pd, self->scq,
				    IBV_QP_EX_WITH_SEND |
				    IBV_QP_EX_WITH_RDMA_WRITE);
	struct ibv_qp_ex *x;
	struct ibv_wc wc;
	uint32_t n;

	ASSERT_NE(NULL, srq);
	ASSERT_NE(NULL, tgt);
	ASSERT_NE(NULL, ini);
	x = ibv_qp_to_qp_ex(ini);
	ASSERT_NE(NULL, x);
	ASSERT_EQ(0, ibv_get_srq_num(srq, &n));
	ASSERT_EQ(0, xrc_connect(ini, tgt, &self->gid));
	ASSERT_EQ(0, xpost_recv(srq, self->mr, self->buf + LEN, LEN, 5));
	sv_fill(self->buf, 100, 1);
	ibv_wr_start(x);
	x->wr_id = 9;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_xrc_srqn(x, n);
	ibv_wr_set_sge(x, self->mr->lkey, (uintptr_t)self->buf, 100);
	ASSERT_EQ(0, ibv_wr_complete(x));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(9, wc.wr_id);
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(5, wc.wr_id);
	EXPECT_EQ(100, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->buf + LEN, self->buf, 100));
	EXPECT_EQ(0, ibv_destroy_qp(ini));
	EXPECT_EQ(0, ibv_destroy_qp(tgt));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

/*
 * The child: its own context, the parent's domain through the same file,
 * a handle on the parent's TGT QP (after the word on the pipe), traffic
 * from its own INI QP into the parent's SRQ. Exit codes name the step.
 */
static int child(const char *path, uint32_t tgt_qpn, uint32_t srqn,
		 int rd, int wr)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = sv_open_named(list, "softverbs0");
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = tgt_qpn, .qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_xrcd *x, *stranger;
	struct ibv_qp *tgt, *ini;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	union ibv_gid gid;
	static char buf[LEN];
	struct ibv_wc wc;
	char c;
	int fd;

	if (!ctx || ibv_query_gid(ctx, 1, 1, &gid))
		return 2;
	/* A domain of its own cannot reach the parent's QP. */
	stranger = open_xrcd(ctx, -1, 0);
	oa.xrcd = stranger;
	if (!stranger || ibv_open_qp(ctx, &oa) || errno != ENOENT)
		return 3;
	fd = open(path, O_RDWR);
	x = open_xrcd(ctx, fd, 0);	/* the parent made it: found */
	if (!x)
		return 4;
	oa.xrcd = x;
	tgt = ibv_open_qp(ctx, &oa);
	if (!tgt || tgt->qp_num != tgt_qpn || tgt->qp_type != IBV_QPT_XRC_RECV)
		return 5;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	mr = pd ? ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	ini = cq && pd ? ini_qp(ctx, pd, cq, 0) : NULL;
	if (!ini || !mr)
		return 6;
	/* Connect both ends from here: the handle modifies the TGT QP. */
	if (xrc_connect(ini, tgt, &gid))
		return 7;
	/* Let the parent drop its handle, then send through ours. */
	if (write(wr, "c", 1) != 1 || read(rd, &c, 1) != 1)
		return 8;
	if (qp_state(tgt) != IBV_QPS_RTS)
		return 9;
	sv_fill(buf, LEN, 77);
	if (xpost(ini, IBV_WR_SEND, mr, buf, LEN, srqn, 0, 0))
		return 10;
	if (poll1(cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
		return 11;
	/* The last handle: the QP is gone, nobody can open it. */
	if (ibv_destroy_qp(tgt))
		return 12;
	if (ibv_open_qp(ctx, &oa) || errno != ENOENT)
		return 13;
	if (ibv_close_xrcd(stranger))
		return 14;
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}

TEST_F(xrc, two_processes_share_domain_and_tgt)
{
	struct ibv_srq *srq = xsrq(self->ctx, self->pd, self->xrcd, self->rcq);
	struct ibv_qp *tgt = tgt_qp(self->ctx, self->xrcd);
	int to_child[2], to_parent[2], st;
	char *dst = self->buf + LEN, c, want[LEN];
	struct ibv_wc wc;
	uint32_t n;
	pid_t pid;

	ASSERT_NE(NULL, srq);
	ASSERT_NE(NULL, tgt);
	ASSERT_EQ(0, ibv_get_srq_num(srq, &n));
	ASSERT_EQ(0, xpost_recv(srq, self->mr, dst, LEN, 3));
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(child(self->path, tgt->qp_num, n, to_child[0],
			    to_parent[1]));
	ASSERT_EQ(1, read(to_parent[0], &c, 1));
	/* The child connected it: this handle sees the same QP. */
	EXPECT_EQ(IBV_QPS_RTS, qp_state(tgt));
	/* This process lets go: the child's handle keeps it. */
	EXPECT_EQ(0, ibv_destroy_qp(tgt));
	ASSERT_EQ(1, write(to_child[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	/* Its message arrived in this process's SRQ. */
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(3, wc.wr_id);
	EXPECT_EQ(LEN, wc.byte_len);
	sv_fill(want, LEN, 77);
	EXPECT_EQ(0, memcmp(dst, want, LEN));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
}

/* A creator that exits leaves its TGT QP to the process that opened it. */
TEST_F(xrc, creator_exits)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.xrcd = self->xrcd, .qp_type = IBV_QPT_XRC_RECV,
	};
	int p[2], q[2], st;
	uint32_t qpn;
	struct ibv_qp *tgt;
	pid_t pid;

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(q));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ibv_device **list = ibv_get_device_list(NULL);
		struct ibv_context *ctx = sv_open_named(list, "softverbs0");
		struct ibv_xrcd *x = ctx ? open_xrcd(ctx, self->fd, 0) : NULL;
		struct ibv_qp *mine = x ? tgt_qp(ctx, x) : NULL;

		if (!mine)
			_exit(2);
		qpn = mine->qp_num;
		if (write(p[1], &qpn, 4) != 4)
			_exit(3);
		/* Wait for the parent's handle, then exit holding ours. */
		if (read(q[0], &qpn, 1) != 1)
			_exit(4);
		_exit(0);
	}
	ASSERT_EQ(4, read(p[0], &qpn, 4));
	oa.qp_num = qpn;
	tgt = ibv_open_qp(self->ctx, &oa);
	ASSERT_NE(NULL, tgt);
	EXPECT_EQ(IBV_QPT_XRC_RECV, tgt->qp_type);
	ASSERT_EQ(1, write(q[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
	/* Still there, and still ours to move through its states. */
	ASSERT_EQ(0, rc_connect_gid(tgt, 0x123, &self->gid, 1, ACCESS, 0, 0));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(tgt));
	EXPECT_EQ(0, ibv_destroy_qp(tgt));
	EXPECT_EQ(NULL, ibv_open_qp(self->ctx, &oa));
	EXPECT_EQ(ENOENT, errno);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

TEST_HARNESS_MAIN
