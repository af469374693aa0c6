// SPDX-License-Identifier: GPL-2.0
/*
 * The data path through the verbs API: every opcode with its data
 * checked, the error statuses, flush on ERR, RNR, SRQs, UD, the qp_ex
 * builders, and a process killed mid-traffic.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "sv_harness.h"
#include "sv_dp_test.h"
#include "sv_test.h"

#define BUF	65536

struct ends {
	struct ibv_qp *a, *b;
};

FIXTURE(dp) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *a, *b;
	union ibv_gid gid;
	char *sbuf, *rbuf;
	struct ibv_mr *smr, *rmr;
};

FIXTURE_SETUP(dp)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	ASSERT_NE(NULL, self->list[0]);
	self->ctx = ibv_open_device(self->list[0]);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &self->gid));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->scq = ibv_create_cq(self->ctx, 256, NULL, NULL, 0);
	self->rcq = ibv_create_cq(self->ctx, 256, NULL, NULL, 0);
	ASSERT_NE(NULL, self->scq);
	ASSERT_NE(NULL, self->rcq);
	self->sbuf = aligned_alloc(4096, BUF);
	self->rbuf = aligned_alloc(4096, BUF);
	ASSERT_NE(NULL, self->sbuf);
	ASSERT_NE(NULL, self->rbuf);
	self->smr = ibv_reg_mr(self->pd, self->sbuf, BUF, access);
	self->rmr = ibv_reg_mr(self->pd, self->rbuf, BUF, access);
	ASSERT_NE(NULL, self->smr);
	ASSERT_NE(NULL, self->rmr);
}

FIXTURE_TEARDOWN(dp)
{
	if (self->a)
		ibv_destroy_qp(self->a);
	if (self->b)
		ibv_destroy_qp(self->b);
	ibv_dereg_mr(self->smr);
	ibv_dereg_mr(self->rmr);
	ibv_destroy_cq(self->scq);
	ibv_destroy_cq(self->rcq);
	ibv_dealloc_pd(self->pd);
	ibv_close_device(self->ctx);
	ibv_free_device_list(self->list);
	free(self->sbuf);
	free(self->rbuf);
}

static struct ibv_qp *mkqp(FIXTURE_DATA(dp) *self, enum ibv_qp_type t,
			   struct ibv_srq *srq, int sig_all)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = self->scq, .recv_cq = self->rcq, .srq = srq,
		.qp_type = t, .sq_sig_all = sig_all,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 128 },
	};

	return ibv_create_qp(self->pd, &ia);
}

/* a -> b and b -> a, both RTS. */
static int pair(FIXTURE_DATA(dp) *self, enum ibv_qp_type t, int rnr_retry,
		int retry)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	self->a = mkqp(self, t, NULL, 0);
	self->b = mkqp(self, t, NULL, 0);
	if (!self->a || !self->b)
		return -1;
	if (t == IBV_QPT_UC)
		access &= ~(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (qp_init(self->a, access) || qp_init(self->b, access))
		return -2;
	if (qp_rtr_rts(self->a, self->b->qp_num, &self->gid, rnr_retry, 1,
		       retry) ||
	    qp_rtr_rts(self->b, self->a->qp_num, &self->gid, rnr_retry, 1,
		       retry))
		return -3;
	return 0;
}

TEST_F(dp, rc_send_sizes)
{
	static const uint32_t sizes[] = { 0, 1, 64, 4095, 4096, 4097, 65536 };
	struct ibv_wc wc;
	unsigned int i;

	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		sv_fill(self->sbuf, sizes[i], i);
		memset(self->rbuf, 0, BUF);
		ASSERT_EQ(0, post_recv(self->b, self->rmr, self->rbuf, BUF,
				       100 + i));
		ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND_WITH_IMM,
				       self->smr->lkey, self->sbuf, sizes[i],
				       i, IBV_SEND_SIGNALED, 0, 0));
		ASSERT_EQ(1, poll1(self->scq, &wc));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(IBV_WC_SEND, wc.opcode);
		EXPECT_EQ(i, wc.wr_id);
		ASSERT_EQ(1, poll1(self->rcq, &wc));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(IBV_WC_RECV, wc.opcode);
		EXPECT_EQ(100 + i, wc.wr_id);
		EXPECT_EQ(sizes[i], wc.byte_len);
		EXPECT_EQ(self->a->qp_num, wc.src_qp);
		EXPECT_EQ(self->b->qp_num, wc.qp_num);
		EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
		EXPECT_EQ(htobe32(0xabcd), wc.imm_data);
		EXPECT_EQ(0, memcmp(self->sbuf, self->rbuf, sizes[i]));
	}
}

TEST_F(dp, rc_inline_and_sge_list)
{
	struct ibv_sge sg[3];
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_wc wc;

	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	sv_fill(self->sbuf, 300, 3);
	sg[0] = (struct ibv_sge){ (uintptr_t)self->sbuf, 10, self->smr->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)self->sbuf + 10, 0,
				  self->smr->lkey };
	sg[2] = (struct ibv_sge){ (uintptr_t)self->sbuf + 10, 290,
				  self->smr->lkey };
	ASSERT_EQ(0, post_recv(self->b, self->rmr, self->rbuf, BUF, 1));
	wr.sg_list = sg;
	wr.num_sge = 3;
	wr.opcode = IBV_WR_SEND;
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(300, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->sbuf, self->rbuf, 300));
	/* unsignaled: no send completion */
	EXPECT_EQ(0, ibv_poll_cq(self->scq, 1, &wc));

	/* inline: the buffer need not be registered and may change at once */
	char data[100];

	sv_fill(data, sizeof(data), 9);
	sg[0] = (struct ibv_sge){ (uintptr_t)data, sizeof(data), 0 };
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	ASSERT_EQ(0, post_recv(self->b, self->rmr, self->rbuf, BUF, 2));
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	memset(data + 50, 0, 10);
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(100, wc.byte_len);
	sv_fill(data, sizeof(data), 9);
	EXPECT_EQ(0, memcmp(data, self->rbuf, 100));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);

	/* too much inline data, too many SGEs: EINVAL at post time */
	char big[200];

	sg[0] = (struct ibv_sge){ (uintptr_t)big, sizeof(big), 0 };
	EXPECT_EQ(EINVAL, ibv_post_send(self->a, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	wr.send_flags = 0;
	wr.num_sge = 5;
	EXPECT_EQ(EINVAL, ibv_post_send(self->a, &wr, &bad));
}

TEST_F(dp, rc_rdma_write_read)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	sv_fill(self->sbuf, 20000, 5);
	memset(self->rbuf, 0, BUF);
	ASSERT_EQ(0, post_send(self->a, IBV_WR_RDMA_WRITE, self->smr->lkey,
			       self->sbuf, 20000, 1, IBV_SEND_SIGNALED,
			       (uintptr_t)self->rbuf + 100, self->rmr->rkey));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
	EXPECT_EQ(0, memcmp(self->sbuf, self->rbuf + 100, 20000));
	EXPECT_EQ(0, ibv_poll_cq(self->rcq, 1, &wc));

	/* write with immediate consumes a receive */
	ASSERT_EQ(0, post_recv(self->b, self->rmr, self->rbuf, 0, 7));
	ASSERT_EQ(0, post_send(self->a, IBV_WR_RDMA_WRITE_WITH_IMM,
			       self->smr->lkey, self->sbuf, 64, 2, 0,
			       (uintptr_t)self->rbuf + 50000,
			       self->rmr->rkey));
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_EQ(7, wc.wr_id);
	EXPECT_EQ(64, wc.byte_len);
	EXPECT_EQ(htobe32(0xabcd), wc.imm_data);
	EXPECT_EQ(0, memcmp(self->sbuf, self->rbuf + 50000, 64));

	/* read back into the send buffer */
	memset(self->sbuf, 0, BUF);
	sv_fill(self->rbuf, 5000, 11);
	ASSERT_EQ(0, post_send(self->a, IBV_WR_RDMA_READ, self->smr->lkey,
			       self->sbuf + 3, 5000, 3, IBV_SEND_SIGNALED,
			       (uintptr_t)self->rbuf, self->rmr->rkey));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
	EXPECT_EQ(0, memcmp(self->sbuf + 3, self->rbuf, 5000));
}

TEST_F(dp, rc_atomics)
{
	struct ibv_sge sg = { (uintptr_t)self->sbuf, 8, self->smr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint64_t *target = (uint64_t *)(self->rbuf + 64);
	uint64_t *old = (uint64_t *)self->sbuf;
	struct ibv_wc wc;

	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	*target = 40;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = (uintptr_t)target;
	wr.wr.atomic.rkey = self->rmr->rkey;
	wr.wr.atomic.compare_add = 2;
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_FETCH_ADD, wc.opcode);
	EXPECT_EQ(40, *old);
	EXPECT_EQ(42, *target);

	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 42;
	wr.wr.atomic.swap = 7;
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_COMP_SWAP, wc.opcode);
	EXPECT_EQ(42, *old);
	EXPECT_EQ(7, *target);
	/* no swap when different */
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(7, *old);
	EXPECT_EQ(7, *target);

	/* misaligned: the responder rejects the request */
	wr.wr.atomic.remote_addr = (uintptr_t)target + 1;
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, wc.status);
}

TEST_F(dp, rc_errors_and_flush)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;
	struct ibv_wc wc;

	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	/* bad rkey: REM_ACCESS_ERR, both QPs to ERR */
	ASSERT_EQ(0, post_send(self->a, IBV_WR_RDMA_WRITE, self->smr->lkey,
			       self->sbuf, 8, 1, 0, (uintptr_t)self->rbuf,
			       self->rmr->rkey ^ 0x100));
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey,
			       self->sbuf, 8, 2, 0, 0, 0));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
	EXPECT_EQ(1, wc.wr_id);
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	EXPECT_EQ(2, wc.wr_id);
	ASSERT_EQ(0, ibv_query_qp(self->a, &qa, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_ERR, qa.qp_state);
	ASSERT_EQ(0, ibv_query_qp(self->b, &qa, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_ERR, qa.qp_state);
	/* receives posted to a QP in ERR are flushed */
	ASSERT_EQ(0, post_recv(self->b, self->rmr, self->rbuf, 8, 9));
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	EXPECT_EQ(9, wc.wr_id);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
}

TEST_F(dp, rc_local_errors)
{
	struct ibv_wc wc;

	/* bad lkey: LOC_PROT_ERR */
	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	ASSERT_EQ(0, post_recv(self->b, self->rmr, self->rbuf, BUF, 1));
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey + 0x100,
			       self->sbuf, 8, 1, 0, 0, 0));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, wc.status);
}

TEST_F(dp, rc_remote_len_and_op_err)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	/* receive too small: LOC_LEN_ERR at b, REM_INV_REQ_ERR at a */
	ASSERT_EQ(0, post_recv(self->b, self->rmr, self->rbuf, 4, 1));
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey,
			       self->sbuf, 8, 2, 0, 0, 0));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, wc.status);
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status);
	EXPECT_EQ(1, wc.wr_id);
}

TEST_F(dp, rc_remote_op_err)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	struct ibv_mr bad = *self->rmr;

	/* receive with a bad lkey: LOC_PROT_ERR at b, REM_OP_ERR at a */
	bad.lkey ^= 0x100;
	ASSERT_EQ(0, post_recv(self->b, &bad, self->rbuf, 8, 1));
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey,
			       self->sbuf, 8, 2, 0, 0, 0));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_REM_OP_ERR, wc.status);
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, wc.status);
}

TEST_F(dp, rc_rnr)
{
	struct ibv_wc wc;

	/* rnr_retry 1: one retry after min_rnr_timer, then RNR_RETRY_EXC */
	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 1, 7));
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey,
			       self->sbuf, 8, 1, 0, 0, 0));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_RNR_RETRY_EXC_ERR, wc.status);
}

TEST_F(dp, rc_rnr_forever_then_recv)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey,
			       self->sbuf, 8, 1, IBV_SEND_SIGNALED, 0, 0));
	usleep(200000);
	EXPECT_EQ(0, ibv_poll_cq(self->scq, 1, &wc));
	ASSERT_EQ(0, post_recv(self->b, self->rmr, self->rbuf, 8, 1));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
}

TEST_F(dp, rc_retry_exceeded)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 1));
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	self->b = NULL;
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey,
			       self->sbuf, 8, 1, 0, 0, 0));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, wc.status);
}

TEST_F(dp, uc_no_read)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, pair(self, IBV_QPT_UC, 0, 0));
	EXPECT_EQ(EINVAL, post_send(self->a, IBV_WR_RDMA_READ,
				    self->smr->lkey, self->sbuf, 8, 1, 0,
				    (uintptr_t)self->rbuf, self->rmr->rkey));
	/* a send without a receive is dropped, the sender completes */
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey,
			       self->sbuf, 8, 1, IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	sv_fill(self->sbuf, 100, 1);
	ASSERT_EQ(0, post_send(self->a, IBV_WR_RDMA_WRITE, self->smr->lkey,
			       self->sbuf, 100, 2, IBV_SEND_SIGNALED,
			       (uintptr_t)self->rbuf, self->rmr->rkey));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(self->sbuf, self->rbuf, 100));
}

TEST_F(dp, ud_send_grh_qkey)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = self->gid, .sgid_index = 1, .hop_limit = 1 },
	};
	struct ibv_sge sg = { (uintptr_t)self->sbuf, 100, self->smr->lkey };
	struct ibv_send_wr wr = { .wr_id = 5, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	struct ibv_ah *ah;

	ASSERT_EQ(0, pair(self, IBV_QPT_UD, 0, 0));
	ah = ibv_create_ah(self->pd, &aa);
	ASSERT_NE(NULL, ah);
	sv_fill(self->sbuf, 100, 4);
	ASSERT_EQ(0, post_recv(self->b, self->rmr, self->rbuf, 140, 3));
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = self->b->qp_num;
	wr.wr.ud.remote_qkey = 0x1234;
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(140, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_GRH);
	EXPECT_EQ(self->a->qp_num, wc.src_qp);
	EXPECT_EQ(0, memcmp(self->sbuf, self->rbuf + 40, 100));
	/*
	 * The GRH: the IPv6 header the frame would have on the wire (next
	 * header UDP; 8 UDP, 12 BTH, 8 DETH, 100, 4 ICRC bytes after it),
	 * with the sender's GID and the AH's destination GID.
	 */
	EXPECT_EQ(6, self->rbuf[0] >> 4);
	EXPECT_EQ(132, ((uint8_t)self->rbuf[4] << 8) |
		       (uint8_t)self->rbuf[5]);
	EXPECT_EQ(17, self->rbuf[6]);
	EXPECT_EQ(0, memcmp(self->rbuf + 8, self->gid.raw, 16));
	EXPECT_EQ(0, memcmp(self->rbuf + 24, self->gid.raw, 16));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	/* wrong Q_Key: dropped */
	wr.wr.ud.remote_qkey = 0x4321;
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	usleep(10000);
	EXPECT_EQ(0, ibv_poll_cq(self->rcq, 1, &wc));
	/* an AH the kernel does not know: LOC_QP_OP_ERR, the QP to ERR */
	struct ibv_ah fake = *ah;

	fake.handle = 0x7ffffff0;
	wr.wr.ud.ah = &fake;
	wr.wr.ud.remote_qkey = 0x1234;
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, wc.status);
	wr.wr.ud.ah = ah;
	ASSERT_EQ(0, ibv_destroy_qp(self->a));
	self->a = mkqp(self, IBV_QPT_UD, NULL, 0);
	ASSERT_NE(NULL, self->a);
	ASSERT_EQ(0, qp_init(self->a, 0));
	ASSERT_EQ(0, qp_rtr_rts(self->a, 0, &self->gid, 0, 0, 0));
	/* larger than the path MTU: LOC_LEN_ERR */
	sg.length = 8192;
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status);
	ibv_destroy_ah(ah);
}

TEST_F(dp, ud_multicast)
{
	union ibv_gid mgid = { .raw = { 0xff, 0x0e, [15] = 0x42 } };
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = mgid, .sgid_index = 1, .hop_limit = 1 },
	};
	struct ibv_sge sg = { (uintptr_t)self->sbuf, 64, self->smr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	struct ibv_wc wc;
	struct ibv_ah *ah;

	ASSERT_EQ(0, pair(self, IBV_QPT_UD, 0, 0));
	ah = ibv_create_ah(self->pd, &aa);
	ASSERT_NE(NULL, ah);
	ASSERT_EQ(0, ibv_attach_mcast(self->b, &mgid, 0));
	sv_fill(self->sbuf, 64, 6);
	ASSERT_EQ(0, post_recv(self->b, self->rmr, self->rbuf, 200, 3));
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0xffffff;
	wr.wr.ud.remote_qkey = 0x1234;
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(3, wc.wr_id);
	EXPECT_EQ(104, wc.byte_len);
	EXPECT_EQ(self->b->qp_num, wc.qp_num);
	EXPECT_EQ(0, memcmp(self->sbuf, self->rbuf + 40, 64));
	ASSERT_EQ(0, ibv_detach_mcast(self->b, &mgid, 0));
	ibv_destroy_ah(ah);
}

/* BLOCK_SELF_MCAST_LB on a UD QP: its sends to a group skip itself. */
TEST_F(dp, ud_multicast_block_self)
{
	union ibv_gid mgid = { .raw = { 0xff, 0x0e, [15] = 0x43 } };
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = mgid, .sgid_index = 1, .hop_limit = 1 },
	};
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = self->scq, .recv_cq = self->rcq,
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = self->pd,
		.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB,
	};
	struct ibv_sge sg = { (uintptr_t)self->sbuf, 64, self->smr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	struct ibv_ah *ah;
	struct ibv_qp *c;

	ASSERT_EQ(0, pair(self, IBV_QPT_UD, 0, 0));
	c = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, qp_init(c, 0));
	ASSERT_EQ(0, qp_rtr_rts(c, 0, &self->gid, 0, 0, 0));
	ah = ibv_create_ah(self->pd, &aa);
	ASSERT_NE(NULL, ah);
	ASSERT_EQ(0, ibv_attach_mcast(self->b, &mgid, 0));
	ASSERT_EQ(0, ibv_attach_mcast(c, &mgid, 0));
	ASSERT_EQ(0, post_recv(self->b, self->rmr, self->rbuf, 200, 3));
	ASSERT_EQ(0, post_recv(c, self->rmr, self->rbuf + 512, 200, 4));
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0xffffff;
	wr.wr.ud.remote_qkey = 0x1234;
	ASSERT_EQ(0, ibv_post_send(c, &wr, &bad));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(3, wc.wr_id);
	EXPECT_EQ(self->b->qp_num, wc.qp_num);
	EXPECT_EQ(c->qp_num, wc.src_qp);
	/* and nothing for c itself */
	usleep(100000);
	EXPECT_EQ(0, ibv_poll_cq(self->rcq, 1, &wc));
	ASSERT_EQ(0, ibv_detach_mcast(c, &mgid, 0));
	ASSERT_EQ(0, ibv_detach_mcast(self->b, &mgid, 0));
	ASSERT_EQ(0, ibv_destroy_qp(c));
	ibv_destroy_ah(ah);
}

TEST_F(dp, modify_to_err_flushes_and_reset_drops)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	int i;

	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	/* b has no receives: a's sends wait in RNR (forever) */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey,
				       self->sbuf, 8, i, IBV_SEND_SIGNALED,
				       0, 0));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, post_recv(self->a, self->rmr, self->rbuf, 8,
				       10 + i));
	usleep(50000);
	EXPECT_EQ(0, ibv_poll_cq(self->scq, 1, &wc));
	ASSERT_EQ(0, ibv_modify_qp(self->a, &qa, IBV_QP_STATE));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(1, poll1(self->scq, &wc));
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
		EXPECT_EQ(i, wc.wr_id);
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, poll1(self->rcq, &wc));
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
		EXPECT_EQ(10 + i, wc.wr_id);
	}
	/* RESET, then back to RTS: the queues are empty and work */
	qa.qp_state = IBV_QPS_RESET;
	ASSERT_EQ(0, ibv_modify_qp(self->a, &qa, IBV_QP_STATE));
	ASSERT_EQ(0, qp_init(self->a, IBV_ACCESS_LOCAL_WRITE));
	ASSERT_EQ(0, post_recv(self->b, self->rmr, self->rbuf, 8, 20));
	ASSERT_EQ(0, qp_rtr_rts(self->a, self->b->qp_num, &self->gid, 7, 1,
				7));
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey,
			       self->sbuf, 8, 30, IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(30, wc.wr_id);
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(20, wc.wr_id);
}

TEST_F(dp, cq_overflow_raises_cq_err)
{
	struct ibv_async_event ev;
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 1, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = self->rcq, .qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 8, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int i;

	ASSERT_NE(NULL, cq);
	self->a = ibv_create_qp(self->pd, &ia);
	ASSERT_NE(NULL, self->a);
	ASSERT_EQ(0, qp_init(self->a, IBV_ACCESS_REMOTE_WRITE));
	ASSERT_EQ(0, qp_rtr_rts(self->a, self->a->qp_num, &self->gid, 7, 1,
				7));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, post_send(self->a, IBV_WR_RDMA_WRITE,
				       self->smr->lkey, self->sbuf, 8, i, 0,
				       (uintptr_t)self->rbuf,
				       self->rmr->rkey));
	ASSERT_EQ(0, ibv_get_async_event(self->ctx, &ev));
	EXPECT_EQ(IBV_EVENT_CQ_ERR, ev.event_type);
	EXPECT_EQ(cq, ev.element.cq);
	ibv_ack_async_event(&ev);
	ASSERT_EQ(0, ibv_destroy_qp(self->a));
	self->a = NULL;
	ASSERT_EQ(0, ibv_destroy_cq(cq));
}

/* a -> b over RC, b receiving from srq; both RTS. */
static int srq_pair(FIXTURE_DATA(dp) *self, struct ibv_srq *srq)
{
	self->a = mkqp(self, IBV_QPT_RC, NULL, 1);
	self->b = mkqp(self, IBV_QPT_RC, srq, 0);
	if (!self->a || !self->b ||
	    qp_init(self->a, IBV_ACCESS_LOCAL_WRITE) ||
	    qp_init(self->b, IBV_ACCESS_LOCAL_WRITE) ||
	    qp_rtr_rts(self->a, self->b->qp_num, &self->gid, 7, 1, 7) ||
	    qp_rtr_rts(self->b, self->a->qp_num, &self->gid, 7, 1, 7))
		return -1;
	return 0;
}

/* Receives from..to - 1 on srq, 64 bytes each at rbuf + 64 * i. */
static int srq_post(FIXTURE_DATA(dp) *self, struct ibv_srq *srq, int from,
		    int to)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sg;
	int i;

	for (i = from; i < to; i++) {
		sg = (struct ibv_sge){ (uintptr_t)self->rbuf + i * 64, 64,
				       self->rmr->lkey };
		wr = (struct ibv_recv_wr){ .wr_id = i, .sg_list = &sg,
					   .num_sge = 1 };
		if (ibv_post_srq_recv(srq, &wr, &bad))
			return -1;
	}
	return 0;
}

TEST_F(dp, srq_limit_and_last_wqe)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq_attr lim = { .srq_limit = 2 };
	struct ibv_async_event ev;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	struct ibv_srq *srq;

	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, srq_pair(self, srq));
	ASSERT_EQ(0, srq_post(self, srq, 0, 3));
	ASSERT_EQ(0, ibv_modify_srq(srq, &lim, IBV_SRQ_LIMIT));
	sv_fill(self->sbuf, 64, 2);
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey,
			       self->sbuf, 64, 1, 0, 0, 0));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(0, wc.wr_id);
	EXPECT_EQ(0, memcmp(self->sbuf, self->rbuf, 64));
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey,
			       self->sbuf, 64, 1, 0, 0, 0));
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(1, wc.wr_id);
	ASSERT_EQ(0, ibv_get_async_event(self->ctx, &ev));
	EXPECT_EQ(IBV_EVENT_SRQ_LIMIT_REACHED, ev.event_type);
	EXPECT_EQ(srq, ev.element.srq);
	ibv_ack_async_event(&ev);
	/* to ERR: the QP reports its last WQE */
	ASSERT_EQ(0, ibv_modify_qp(self->b, &qa, IBV_QP_STATE));
	ASSERT_EQ(0, ibv_get_async_event(self->ctx, &ev));
	EXPECT_EQ(IBV_EVENT_QP_LAST_WQE_REACHED, ev.event_type);
	EXPECT_EQ(self->b, ev.element.qp);
	ibv_ack_async_event(&ev);
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	self->b = NULL;
	ASSERT_EQ(0, ibv_destroy_qp(self->a));
	self->a = NULL;
	ASSERT_EQ(0, ibv_destroy_srq(srq));
}

/*
 * ibv_modify_srq(IBV_SRQ_MAX_WR) moves the posted receives to a bigger
 * ring, in order, and later ones land there too; a size below what is
 * posted is EINVAL and changes nothing.
 */
TEST_F(dp, srq_resize)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq_attr q;
	struct ibv_device_attr da;
	struct ibv_wc wc;
	struct ibv_srq *srq;
	int i;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &da));
	EXPECT_TRUE(da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE);
	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, srq_pair(self, srq));
	/* 12 posted, 2 consumed: 10 to move. */
	ASSERT_EQ(0, srq_post(self, srq, 0, 12));
	for (i = 0; i < 2; i++) {
		sv_fill(self->sbuf + i * 64, 64, i);
		ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey,
				       self->sbuf + i * 64, 64, i, 0, 0, 0));
		ASSERT_EQ(1, poll1(self->scq, &wc));
		ASSERT_EQ(1, poll1(self->rcq, &wc));
		EXPECT_EQ(i, wc.wr_id);
	}
	q.max_wr = 8;
	EXPECT_EQ(EINVAL, ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR));
	q.max_wr = da.max_srq_wr + 1;
	EXPECT_EQ(EINVAL, ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR));
	q.max_wr = 100;
	ASSERT_EQ(0, ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR));
	ASSERT_EQ(0, ibv_query_srq(srq, &q));
	EXPECT_LE(100, q.max_wr);
	/* Room for 100 now: post the rest, 110 in all. */
	ASSERT_EQ(0, srq_post(self, srq, 12, 110));
	memset(self->rbuf, 0, BUF);
	for (i = 2; i < 110; i++) {
		sv_fill(self->sbuf + i * 64, 64, i);
		ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->smr->lkey,
				       self->sbuf + i * 64, 64, i, 0, 0, 0));
		ASSERT_EQ(1, poll1(self->scq, &wc));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(1, poll1(self->rcq, &wc));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(i, wc.wr_id);
	}
	EXPECT_EQ(0, memcmp(self->sbuf + 128, self->rbuf + 128, 108 * 64));
	/* Empty again: it may shrink. */
	q.max_wr = 4;
	EXPECT_EQ(0, ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR));
	ASSERT_EQ(0, ibv_query_srq(srq, &q));
	EXPECT_EQ(4, q.max_wr);
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	self->b = NULL;
	ASSERT_EQ(0, ibv_destroy_qp(self->a));
	self->a = NULL;
	ASSERT_EQ(0, ibv_destroy_srq(srq));
}

/*
 * ibv_wr_atomic_write(): 8 bytes in one store at an aligned address, with
 * the responder's REMOTE_WRITE; IBV_WC_ATOMIC_WRITE; the bad cases.
 */
TEST_F(dp, atomic_write)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = self->scq, .recv_cq = self->rcq,
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = self->pd,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	uint64_t val = 0x1122334455667788ULL, *target;
	struct ibv_mr *ro = ibv_reg_mr(self->pd, self->sbuf + 8192, 4096,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_READ);
	struct ibv_device_attr_ex ex;
	struct ibv_send_wr wr = { .opcode = IBV_WR_ATOMIC_WRITE }, *bad;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;

	ASSERT_NE(NULL, ro);
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_TRUE(ex.device_cap_flags_ex & (1ULL << 40));
	self->a = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, self->a);
	self->b = mkqp(self, IBV_QPT_RC, NULL, 0);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, qp_init(self->a, IBV_ACCESS_LOCAL_WRITE));
	ASSERT_EQ(0, qp_init(self->b, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ));
	ASSERT_EQ(0, qp_rtr_rts(self->a, self->b->qp_num, &self->gid, 7, 1, 7));
	ASSERT_EQ(0, qp_rtr_rts(self->b, self->a->qp_num, &self->gid, 7, 1, 7));
	x = ibv_qp_to_qp_ex(self->a);
	ASSERT_NE(NULL, x);
	/* ibv_post_send() has no place for its data. */
	EXPECT_EQ(EINVAL, ibv_post_send(self->a, &wr, &bad));

	memset(self->rbuf, 0xee, 64);
	target = (uint64_t *)(self->rbuf + 16);
	ibv_wr_start(x);
	x->wr_id = 7;
	ibv_wr_atomic_write(x, self->rmr->rkey, (uintptr_t)target, &val);
	ASSERT_EQ(0, ibv_wr_complete(x));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(7, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_ATOMIC_WRITE, wc.opcode);
	EXPECT_EQ(val, *target);
	EXPECT_EQ(0xeeeeeeeeeeeeeeeeULL, *(uint64_t *)(self->rbuf + 8));
	EXPECT_EQ(0xeeeeeeeeeeeeeeeeULL, *(uint64_t *)(self->rbuf + 24));

	/* A key without REMOTE_WRITE: REM_ACCESS_ERR, nothing written. */
	ibv_wr_start(x);
	x->wr_id = 8;
	ibv_wr_atomic_write(x, ro->rkey, (uintptr_t)self->sbuf + 8192, &val);
	ASSERT_EQ(0, ibv_wr_complete(x));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
	EXPECT_NE(val, *(uint64_t *)(self->sbuf + 8192));
	ibv_destroy_qp(self->a);
	ibv_destroy_qp(self->b);
	self->a = self->b = NULL;
	EXPECT_EQ(0, ibv_dereg_mr(ro));

	/* Misaligned: REM_INV_REQ_ERR. */
	self->a = ibv_create_qp_ex(self->ctx, &ia);
	self->b = mkqp(self, IBV_QPT_RC, NULL, 0);
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, qp_init(self->a, IBV_ACCESS_LOCAL_WRITE));
	ASSERT_EQ(0, qp_init(self->b, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE));
	ASSERT_EQ(0, qp_rtr_rts(self->a, self->b->qp_num, &self->gid, 7, 1, 7));
	ASSERT_EQ(0, qp_rtr_rts(self->b, self->a->qp_num, &self->gid, 7, 1, 7));
	x = ibv_qp_to_qp_ex(self->a);
	ibv_wr_start(x);
	x->wr_id = 9;
	ibv_wr_atomic_write(x, self->rmr->rkey, (uintptr_t)self->rbuf + 4, &val);
	ASSERT_EQ(0, ibv_wr_complete(x));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, wc.status);
	EXPECT_EQ(0xeeeeeeeeU, *(uint32_t *)(self->rbuf + 4));
}

/*
 * ibv_modify_qp_rate_limit(): 24 writes of 16 KiB at 8,000 kbit/s (1 MB/s)
 * with a 16 KiB burst take at least (384 - 32) KiB / 1 MB/s; the bad
 * attributes are EINVAL; a rate of 0 lifts the limit.
 */
TEST_F(dp, rate_limit)
{
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = 8000,
					     .max_burst_sz = 16384,
					     .typical_pkt_sz = 4096 };
	struct ibv_device_attr_ex ex;
	struct timespec t0, t1;
	struct ibv_wc wc;
	double secs;
	int i;

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_EQ(SV_QP_RATE_LIMIT_MIN, ex.packet_pacing_caps.qp_rate_limit_min);
	EXPECT_EQ(SV_QP_RATE_LIMIT_MAX, ex.packet_pacing_caps.qp_rate_limit_max);
	EXPECT_TRUE(ex.packet_pacing_caps.supported_qpts & (1 << IBV_QPT_RC));
	self->a = mkqp(self, IBV_QPT_RC, NULL, 0);
	ASSERT_NE(NULL, self->a);
	/* Not in RTS: EINVAL. */
	EXPECT_EQ(EINVAL, ibv_modify_qp_rate_limit(self->a, &rl));
	ibv_destroy_qp(self->a);
	self->a = NULL;
	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	rl.comp_mask = 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp_rate_limit(self->a, &rl));
	rl.comp_mask = 0;
	rl.rate_limit = SV_QP_RATE_LIMIT_MIN - 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp_rate_limit(self->a, &rl));
	rl.rate_limit = SV_QP_RATE_LIMIT_MAX + 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp_rate_limit(self->a, &rl));
	rl.rate_limit = 8000;
	ASSERT_EQ(0, ibv_modify_qp_rate_limit(self->a, &rl));

	sv_fill(self->sbuf, 16384, 5);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 24; i++)
		ASSERT_EQ(0, post_send(self->a, IBV_WR_RDMA_WRITE,
				       self->smr->lkey, self->sbuf, 16384, i,
				       IBV_SEND_SIGNALED,
				       (uintptr_t)self->rbuf + (i % 4) * 16384,
				       self->rmr->rkey));
	for (i = 0; i < 24; i++) {
		ASSERT_EQ(1, poll1(self->scq, &wc));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(i, wc.wr_id);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	EXPECT_LE((384 - 32) * 1024 / 1e6, secs) TH_LOG("%.3f s", secs);
	TH_LOG("paced at 1,000,000 B/s: 393,216 B in %.3f s (%.0f B/s)", secs,
	       393216 / secs);
	EXPECT_EQ(0, memcmp(self->sbuf, self->rbuf + 3 * 16384, 16384));

	/* No limit: the same writes go as fast as the engine goes. */
	rl.rate_limit = 0;
	ASSERT_EQ(0, ibv_modify_qp_rate_limit(self->a, &rl));
	for (i = 0; i < 24; i++)
		ASSERT_EQ(0, post_send(self->a, IBV_WR_RDMA_WRITE,
				       self->smr->lkey, self->sbuf, 16384,
				       100 + i, IBV_SEND_SIGNALED,
				       (uintptr_t)self->rbuf, self->rmr->rkey));
	for (i = 0; i < 24; i++) {
		ASSERT_EQ(1, poll1(self->scq, &wc));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	}
}

/* Not promised: the copy's stores are not ordered (README). */
TEST_F(dp, data_in_order)
{
	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	EXPECT_EQ(0, ibv_query_qp_data_in_order(self->a, IBV_WR_RDMA_WRITE, 0));
	EXPECT_EQ(0, ibv_query_qp_data_in_order(self->a, IBV_WR_SEND, 0));
}

TEST_F(dp, qp_ex_builders)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = self->scq, .recv_cq = self->rcq,
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = self->pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_ATOMIC;
	uint64_t *target = (uint64_t *)(self->rbuf + 1024);
	struct ibv_qp_ex *x;
	struct ibv_wc wc;

	self->a = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, self->a);
	self->b = mkqp(self, IBV_QPT_RC, NULL, 0);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, qp_init(self->a, access));
	ASSERT_EQ(0, qp_init(self->b, access));
	ASSERT_EQ(0, qp_rtr_rts(self->a, self->b->qp_num, &self->gid, 7, 1, 7));
	ASSERT_EQ(0, qp_rtr_rts(self->b, self->a->qp_num, &self->gid, 7, 1, 7));
	x = ibv_qp_to_qp_ex(self->a);
	ASSERT_NE(NULL, x);
	sv_fill(self->sbuf, 512, 8);
	*target = 1;
	ASSERT_EQ(0, post_recv(self->b, self->rmr, self->rbuf, 64, 4));
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = 0;
	ibv_wr_rdma_write(x, self->rmr->rkey, (uintptr_t)self->rbuf + 2048);
	ibv_wr_set_sge(x, self->smr->lkey, (uintptr_t)self->sbuf, 512);
	x->wr_id = 2;
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, self->sbuf, 32);
	x->wr_id = 3;
	ibv_wr_atomic_fetch_add(x, self->rmr->rkey, (uintptr_t)target, 5);
	ibv_wr_set_sge(x, self->smr->lkey, (uintptr_t)self->sbuf + 4096, 8);
	ASSERT_EQ(0, ibv_wr_complete(x));
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(2, wc.wr_id);
	ASSERT_EQ(1, poll1(self->scq, &wc));
	EXPECT_EQ(3, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(self->sbuf, self->rbuf + 2048, 512));
	EXPECT_EQ(6, *target);
	EXPECT_EQ(1, *(uint64_t *)(self->sbuf + 4096));
	ASSERT_EQ(1, poll1(self->rcq, &wc));
	EXPECT_EQ(32, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->sbuf, self->rbuf, 32));
	/* abort: nothing posted */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, self->sbuf, 8);
	ibv_wr_abort(x);
	usleep(10000);
	EXPECT_EQ(0, ibv_poll_cq(self->scq, 1, &wc));
}

/*
 * The engine remembers the MR its last key named: after a dereg (and a
 * grace period, which frees the MR's memory) the old key must be looked
 * up again and found gone. One test for an rkey, one for an lkey.
 */
/*
 * A signaled 64-byte RDMA WRITE from a to b with key as its rkey (remote)
 * or its lkey (from buf2), the fixture's MRs on the other side; its CQE's
 * status, or -1.
 */
static int write_with_key(FIXTURE_DATA(dp) *self, bool remote, uint32_t key,
			  char *buf2, uint64_t wr_id, struct ibv_wc *wc)
{
	if (post_send(self->a, IBV_WR_RDMA_WRITE,
		      remote ? self->smr->lkey : key,
		      remote ? self->sbuf : buf2, 64, wr_id, IBV_SEND_SIGNALED,
		      remote ? (uintptr_t)buf2 : (uintptr_t)self->rbuf,
		      remote ? key : self->rmr->rkey) ||
	    poll1(self->scq, wc) != 1)
		return -1;
	return wc->status;
}

static void stale_key_case(struct __test_metadata *_metadata,
			   FIXTURE_DATA(dp) *self, bool remote)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	char *buf2 = aligned_alloc(4096, BUF);
	struct ibv_mr *mr2;
	struct ibv_wc wc;
	uint32_t key;

	ASSERT_NE(NULL, buf2);
	mr2 = ibv_reg_mr(self->pd, buf2, BUF, access);
	ASSERT_NE(NULL, mr2);
	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	key = remote ? mr2->rkey : mr2->lkey;
	sv_fill(self->sbuf, 64, 1);
	sv_fill(buf2, 64, 2);
	/* Twice, so that the second finds the key remembered. */
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(IBV_WC_SUCCESS,
			  write_with_key(self, remote, key, buf2, i, &wc));
	ASSERT_EQ(0, ibv_dereg_mr(mr2));
	usleep(100 * 1000);	/* past a grace period: the MR is freed */
	EXPECT_EQ(remote ? IBV_WC_REM_ACCESS_ERR : IBV_WC_LOC_PROT_ERR,
		  write_with_key(self, remote, key, buf2, 9, &wc));
	EXPECT_EQ(9, wc.wr_id);
	free(buf2);
}

/* One WR of a chain: 64 bytes from lkey's buf to raddr through rkey. */
struct chain_wr {
	enum ibv_wr_opcode op;
	uint32_t lkey;
	char *buf;
	uint64_t raddr;
	uint32_t rkey;
};

/*
 * Post n WRs in one call (the engine most likely takes them in one run),
 * only the last signaled; 0 or the errno.
 */
static int post_chain(struct ibv_qp *qp, const struct chain_wr *c, int n)
{
	struct ibv_send_wr wr[8] = {}, *bad;
	struct ibv_sge sg[8];
	int i;

	for (i = 0; i < n; i++) {
		sg[i] = (struct ibv_sge){ (uintptr_t)c[i].buf, 64, c[i].lkey };
		wr[i].wr_id = i;
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].opcode = c[i].op;
		wr[i].send_flags = i == n - 1 ? IBV_SEND_SIGNALED : 0;
		wr[i].wr.rdma.remote_addr = c[i].raddr;
		wr[i].wr.rdma.rkey = c[i].rkey;
		wr[i].next = i == n - 1 ? NULL : &wr[i + 1];
	}
	return ibv_post_send(qp, wr, &bad);
}

/*
 * The engine keeps the MR of a key it used twice in a row between the
 * WRs of a pass: each WR must still be checked for its own bounds, key
 * and rights. UC drops what the responder refuses (the sender completes):
 * only the good writes land.
 */
TEST_F(dp, wrs_of_one_run_checked_each)
{
	int ro = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	char *rbuf2 = aligned_alloc(4096, 4096);
	char *rb = self->rbuf, *sb = self->sbuf;
	uint64_t r = (uintptr_t)rb, r2 = (uintptr_t)rbuf2;
	uint32_t lk = self->smr->lkey, rk = self->rmr->rkey, rk2;
	struct ibv_mr *mr2, *lro;

	ASSERT_NE(NULL, rbuf2);
	mr2 = ibv_reg_mr(self->pd, rbuf2, 4096, ro);
	ASSERT_NE(NULL, mr2);
	rk2 = mr2->rkey;
	ASSERT_EQ(0, pair(self, IBV_QPT_UC, 0, 0));
	sv_fill(sb, 64, 3);
	memset(rb, 0, BUF);
	memset(rbuf2, 0, 4096);
	{
		const struct chain_wr c[] = {
			{ IBV_WR_RDMA_WRITE, lk, sb, r, rk },
			{ IBV_WR_RDMA_WRITE, lk, sb, r + 128, rk },
			{ IBV_WR_RDMA_WRITE, lk, sb, r + BUF - 32, rk },
			{ IBV_WR_RDMA_WRITE, lk, sb, r2, rk2 },
			{ IBV_WR_RDMA_WRITE, lk, sb, r + 256, rk ^ 1 },
			{ IBV_WR_RDMA_WRITE, lk, sb, r + 384, rk },
		};

		ASSERT_EQ(0, post_chain(self->a, c, 6));
	}
	ASSERT_EQ(IBV_WC_SUCCESS, sv_status_of(self->scq, 5, NULL));
	EXPECT_EQ(0, memcmp(sb, rb, 64));
	EXPECT_EQ(0, memcmp(sb, rb + 128, 64));
	EXPECT_EQ(0, memcmp(sb, rb + 384, 64));
	/* Past the MR's end, without the right, another key's variant */
	EXPECT_TRUE(sv_all_bytes(rb + BUF - 32, 32, 0));
	EXPECT_TRUE(sv_all_bytes(rbuf2, 4096, 0));
	EXPECT_TRUE(sv_all_bytes(rb + 256, 64, 0));
	ibv_destroy_qp(self->a);
	ibv_destroy_qp(self->b);

	/* RC: reads through a read-only rkey, then a write through it. */
	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	sv_fill(rbuf2, 64, 4);
	memset(sb, 0, 256);
	{
		const struct chain_wr c[] = {
			{ IBV_WR_RDMA_READ, lk, sb, r2, rk2 },
			{ IBV_WR_RDMA_READ, lk, sb + 64, r2, rk2 },
			{ IBV_WR_RDMA_WRITE, lk, sb + 128, r2 + 64, rk2 },
		};

		ASSERT_EQ(0, post_chain(self->a, c, 3));
	}
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, sv_status_of(self->scq, 2, NULL));
	EXPECT_EQ(0, memcmp(rbuf2, sb, 64));
	EXPECT_EQ(0, memcmp(rbuf2, sb + 64, 64));
	EXPECT_TRUE(sv_all_bytes(rbuf2 + 64, 4096 - 64, 0));
	ibv_destroy_qp(self->a);
	ibv_destroy_qp(self->b);

	/* A local key without local write: a source, then a READ's sink. */
	lro = ibv_reg_mr(self->pd, sb, 4096, 0);
	ASSERT_NE(NULL, lro);
	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	sv_fill(sb, 64, 5);
	memset(rb, 0, 4096);
	{
		const struct chain_wr c[] = {
			{ IBV_WR_RDMA_WRITE, lro->lkey, sb, r, rk },
			{ IBV_WR_RDMA_WRITE, lro->lkey, sb, r + 64, rk },
			{ IBV_WR_RDMA_READ, lro->lkey, sb + 128, r, rk },
		};

		ASSERT_EQ(0, post_chain(self->a, c, 3));
	}
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, sv_status_of(self->scq, 2, NULL));
	EXPECT_EQ(0, memcmp(sb, rb, 64));
	EXPECT_EQ(0, memcmp(sb, rb + 64, 64));
	EXPECT_TRUE(sv_all_bytes(sb + 128, 64, 0));
	EXPECT_EQ(0, ibv_dereg_mr(lro));
	EXPECT_EQ(0, ibv_dereg_mr(mr2));
	free(rbuf2);
}

TEST_F(dp, stale_rkey_after_dereg)
{
	stale_key_case(_metadata, self, true);
}

TEST_F(dp, stale_lkey_after_dereg)
{
	stale_key_case(_metadata, self, false);
}

/*
 * Deregistering the target MR and then destroying the QPs while writes
 * stream: completions are successes until the rkey dies, then
 * REM_ACCESS_ERR (and flushes); nothing crashes or leaks.
 */
TEST_F(dp, dereg_and_destroy_mid_traffic)
{
	struct ibv_mr *mr2;
	char *buf2 = aligned_alloc(4096, 1 << 20);
	struct ibv_wc wc[16];
	int i, k, posted = 0, ok = 0, err = 0, other = 0;

	ASSERT_NE(NULL, buf2);
	mr2 = ibv_reg_mr(self->pd, buf2, 1 << 20, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	ASSERT_NE(NULL, mr2);
	ASSERT_EQ(0, pair(self, IBV_QPT_RC, 7, 7));
	for (i = 0; i < 400; i++) {
		if (post_send(self->a, IBV_WR_RDMA_WRITE, self->smr->lkey,
			      self->sbuf, BUF, i, IBV_SEND_SIGNALED,
			      (uintptr_t)buf2 + (i % 8) * BUF, mr2->rkey) == 0)
			posted++;
		if (i == 200)
			ASSERT_EQ(0, ibv_dereg_mr(mr2));
		k = ibv_poll_cq(self->scq, 16, wc);
		while (k-- > 0) {
			if (wc[k].status == IBV_WC_SUCCESS)
				ok++;
			else if (wc[k].status == IBV_WC_REM_ACCESS_ERR)
				err++;
			else if (wc[k].status == IBV_WC_WR_FLUSH_ERR)
				other++;
		}
	}
	ASSERT_EQ(0, ibv_destroy_qp(self->a));
	self->a = NULL;
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	self->b = NULL;
	EXPECT_GE(1, err);
	TH_LOG("posted %d: %d ok, %d REM_ACCESS_ERR, %d flushed before destroy",
	       posted, ok, err, other);
	free(buf2);
	EXPECT_EQ(2, sv_obj_count("mr"));
}

/* The data path ioctls' own errors, on a raw device fd. */
TEST(raw_ioctls)
{
	struct sv_map_wq m = { .size = sizeof(m) };
	struct sv_map_doorbell d = { .size = sizeof(d) };
	struct sv_ring_doorbell r = { .size = sizeof(r) };
	struct sv_doorbell *db;
	int fd = open(SV_DEV0, O_RDWR);
	char big[32];

	ASSERT_LE(0, fd);
	m.handle = 12345;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_MAP_WQ, &m));
	EXPECT_EQ(ENOENT, errno);
	m.type = 7;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_MAP_WQ, &m));
	EXPECT_EQ(EINVAL, errno);
	m.type = SV_WQ_QP;
	m.reserved = 1;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_MAP_WQ, &m));
	EXPECT_EQ(EINVAL, errno);
	m.reserved = 0;
	m.reserved2 = 1;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_MAP_WQ, &m));
	EXPECT_EQ(EINVAL, errno);
	d.flags = 2;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_MAP_DOORBELL, &d));
	EXPECT_EQ(EINVAL, errno);
	d.flags = ~0U;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_MAP_DOORBELL, &d));
	EXPECT_EQ(EINVAL, errno);
	d.flags = 0;
	ASSERT_EQ(0, ioctl(fd, SV_IOC_MAP_DOORBELL, &d));
	EXPECT_EQ(0, d.flags);
	/* The page, then the hint bitmap */
	EXPECT_EQ(SV_DB_HINT_OFFSET + SV_DB_SLOTS / 8, d.len);
	/* Hints, once asked for, hold for the file's life. */
	d.flags = SV_MAP_DOORBELL_HINTS;
	ASSERT_EQ(0, ioctl(fd, SV_IOC_MAP_DOORBELL, &d));
	EXPECT_EQ(SV_MAP_DOORBELL_HINTS, d.flags);
	d.flags = 0;
	ASSERT_EQ(0, ioctl(fd, SV_IOC_MAP_DOORBELL, &d));
	EXPECT_EQ(SV_MAP_DOORBELL_HINTS, d.flags);
	db = mmap(NULL, d.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  d.offset);
	ASSERT_NE(MAP_FAILED, db);
	/*
	 * The engine has nothing to do: it goes to sleep and says so (and
	 * whether posts may defer, for other files' sake: SV_DB_DEFER).
	 */
	usleep(100000);
	EXPECT_EQ(SV_DB_NEED_WAKEUP, db->flags & ~SV_DB_DEFER);
	EXPECT_EQ(0, ioctl(fd, SV_IOC_DOORBELL, &r));
	/* A drive names a CQ of the file; VER0 has no room for it. */
	r.flags = SV_RING_DRIVE;
	r.cq_handle = 12345;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_DOORBELL, &r));
	EXPECT_EQ(ENOENT, errno);
	r.size = SV_RING_DOORBELL_SIZE_VER0;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_DOORBELL, &r));
	EXPECT_EQ(EINVAL, errno);
	r.size = sizeof(r);
	r.flags = 4;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_DOORBELL, &r));
	EXPECT_EQ(EINVAL, errno);
	r.flags = ~(SV_RING_DRIVE | SV_RING_QP);
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_DOORBELL, &r));
	EXPECT_EQ(EINVAL, errno);
	/* A ring that names a QP names no CQ, and a slot there can be. */
	r.flags = SV_RING_QP;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_DOORBELL, &r));
	EXPECT_EQ(EINVAL, errno);
	r.flags = SV_RING_QP | SV_RING_DRIVE;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_DOORBELL, &r));
	EXPECT_EQ(EINVAL, errno);
	r.cq_handle = 0;
	r.flags = SV_RING_QP;
	r.qp_slot = SV_DB_SLOTS;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_DOORBELL, &r));
	EXPECT_EQ(EINVAL, errno);
	r.qp_slot = SV_DB_SLOTS - 1;
	r.size = SV_RING_DOORBELL_SIZE_VER0;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_DOORBELL, &r));
	EXPECT_EQ(EINVAL, errno);
	/* A slot that names no QP of the file: nothing to run. */
	r.size = sizeof(r);
	EXPECT_EQ(0, ioctl(fd, SV_IOC_DOORBELL, &r));
	r.qp_slot = 7;
	EXPECT_EQ(0, ioctl(fd, SV_IOC_DOORBELL, &r));
	/* Without SV_RING_QP the slot is reserved. */
	r.flags = 0;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_DOORBELL, &r));
	EXPECT_EQ(EINVAL, errno);
	r.qp_slot = 0;
	r.size = 4;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_DOORBELL, &r));
	EXPECT_EQ(EINVAL, errno);
	/* A larger struct's tail must be zero; a VER0 command number works. */
	memset(big, 0, sizeof(big));
	memcpy(big, &r, sizeof(r));
	((struct sv_ring_doorbell *)big)->size = sizeof(big);
	big[sizeof(big) - 1] = 1;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_DOORBELL, big));
	EXPECT_EQ(E2BIG, errno);
	big[sizeof(big) - 1] = 0;
	EXPECT_EQ(0, ioctl(fd, SV_IOC_DOORBELL, big));
	r.size = SV_RING_DOORBELL_SIZE_VER0;
	EXPECT_EQ(0, ioctl(fd, _IOWR(SV_IOC_MAGIC, SV_NR_DOORBELL, __u64), &r));
	EXPECT_EQ(0, ioctl(fd, SV_IOC_DOORBELL, &r));
	/* a PROT_EXEC or private mapping of a ring: EINVAL */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, d.len, PROT_READ, MAP_PRIVATE, fd,
				   d.offset));
	munmap(db, d.len);
	close(fd);
}

/* A child streams writes into a parent's MR and dies by SIGKILL. */
TEST(killed_mid_traffic)
{
	pid_t pid;
	int st;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_device **l = ibv_get_device_list(NULL);
		struct ibv_context *ctx = ibv_open_device(l[0]);
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		char *buf = malloc(1 << 20);
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, 1 << 20,
					       IBV_ACCESS_LOCAL_WRITE |
					       IBV_ACCESS_REMOTE_WRITE);
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 64, .max_recv_wr = 1,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_qp *qp = ibv_create_qp(pd, &ia);
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
					 .port_num = 1,
					 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
		union ibv_gid gid;
		struct ibv_wc wc;

		if (!qp || ibv_query_gid(ctx, 1, 1, &gid))
			_exit(2);
		ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
		if (qp_rtr_rts(qp, qp->qp_num, &gid, 7, 1, 7))
			_exit(3);
		for (;;) {
			struct ibv_sge sg = { (uintptr_t)buf, 1 << 19,
					      mr->lkey };
			struct ibv_send_wr wr = {
				.sg_list = &sg, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { (uintptr_t)buf + (1 << 19),
					     mr->rkey },
			}, *bad;

			if (ibv_post_send(qp, &wr, &bad) == 0)
				continue;
			while (ibv_poll_cq(cq, 1, &wc) > 0)
				;
		}
	}
	usleep(300000);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFSIGNALED(st));
	usleep(100000);
	EXPECT_EQ(0, sv_obj_count("qp"));
	EXPECT_EQ(0, sv_obj_count("mr"));
	EXPECT_EQ(0, sv_obj_count("cq"));
	EXPECT_EQ(0, sv_obj_count("pd"));
}

TEST_HARNESS_MAIN
