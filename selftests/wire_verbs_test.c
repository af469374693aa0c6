// SPDX-License-Identifier: GPL-2.0
/*
 * RoCE v2 on the wire, through the verbs API with exact results: two
 * softverbs devices in two network namespaces (sv_wire_test.h's sv_sv
 * veth), opened by this one process (each from its own namespace), so
 * that every message between them crosses the veth as RoCE v2. RC RDMA
 * WRITE and READ of 300 KB (293 packets: more than two windows of the
 * requester, the READ asked for in three pieces) with the data verified,
 * atomics with their results, SEND and WRITE with immediate and their exact
 * completions, an RNR NAK that waits for the receive and one whose
 * retries run out, a bad rkey (IBV_WC_REM_ACCESS_ERR, the responder in
 * ERR), a full send queue of mixed WQEs in flight at once (in order, data
 * verified, atomics once each), IBV_SEND_FENCE after a READ, a failure
 * among WQEs in flight (those after it flushed), SQD with WQEs in flight
 * (SQ_DRAINED after the last completed), a SEND too long for its receive (IBV_WC_REM_INV_REQ_ERR and
 * IBV_WC_LOC_LEN_ERR), UC WRITE with immediate, UD multicast with the
 * groups joined on the netdev, the GRH of a UD message delivered inside
 * one device as the wire gives it.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <infiniband/verbs.h>

#define SV_WIRE_SV_ONLY
#include "sv_harness.h"
#include "sv_test.h"
#include "sv_dp_test.h"
#include "sv_wire_test.h"
#include "sv_wire_verbs.h"

#define LEN	(300 * 1000)
/*
 * A's and B's ends (devices SV_A and SV_B), IPv4 GIDs, QPs of type
 * connected to each other; A's with rnr_retry a_rnr.
 */
static int vpair(FIXTURE_DATA(wire) *self, struct vend *a, struct vend *b,
		 enum ibv_qp_type type, int a_rnr)
{
	if (vend_open(a, NS_A, SV_A, self->a.g4, type, 2 * LEN, ACCESS) ||
	    vend_open(b, NS_B, SV_B, self->b.g4, type, 2 * LEN, ACCESS))
		return -1;
	return vend_connect(a, b, a_rnr, 7) || vend_connect(b, a, 7, 7) ? -1 : 0;
}

/* RDMA WRITE and READ of 300 KB, data verified; nothing lost on the way. */
TEST_F_TIMEOUT(wire, rc_write_read, 120)
{
	struct vend a, b;
	struct ibv_wc wc;

	ASSERT_EQ(0, vpair(self, &a, &b, IBV_QPT_RC, 7));
	sv_fill(a.buf, LEN, 1);
	ASSERT_EQ(0, post_send(a.qp, IBV_WR_RDMA_WRITE, a.mr->lkey, a.buf, LEN,
			       1, IBV_SEND_SIGNALED, (uintptr_t)b.buf,
			       b.mr->rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
	EXPECT_EQ(0, memcmp(a.buf, b.buf, LEN));
	sv_fill(b.buf + LEN, LEN, 2);
	ASSERT_EQ(0, post_send(a.qp, IBV_WR_RDMA_READ, a.mr->lkey,
			       a.buf + LEN, LEN, 2, IBV_SEND_SIGNALED,
			       (uintptr_t)b.buf + LEN, b.mr->rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
	EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
	EXPECT_EQ(LEN, wc.byte_len);
	EXPECT_EQ(0, memcmp(a.buf + LEN, b.buf + LEN, LEN));
	EXPECT_EQ(0, stat_of(&self->b, "wire_rx_out_of_sequence"));
	EXPECT_EQ(0, stat_of(&self->a, "wire_naks_received"));
	/* Zero bytes: one packet, no data. */
	ASSERT_EQ(0, post_send(b.qp, IBV_WR_RDMA_WRITE, b.mr->lkey, b.buf, 0,
			       3, IBV_SEND_SIGNALED, (uintptr_t)a.buf,
			       a.mr->rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&b, &wc));
	EXPECT_LT(0, stat_of(&self->b, "wire_rx_frames"));
	vend_close(&a);
	vend_close(&b);
}

static int post_atomic(struct vend *x, enum ibv_wr_opcode op, void *res,
		       uint64_t raddr, uint32_t rkey, uint64_t cmp_add,
		       uint64_t swap)
{
	struct ibv_sge sg = { (uintptr_t)res, 8, x->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sg, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(x->qp, &wr, &bad);
}

/* Fetch-and-add and compare-and-swap: old values back, words changed. */
TEST_F_TIMEOUT(wire, rc_atomics, 120)
{
	uint64_t *word, *res;
	struct vend a, b;
	struct ibv_wc wc;

	ASSERT_EQ(0, vpair(self, &a, &b, IBV_QPT_RC, 7));
	word = (uint64_t *)(b.buf + 64);
	res = (uint64_t *)a.buf;
	*word = 1000;
	ASSERT_EQ(0, post_atomic(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, res,
				 (uintptr_t)word, b.mr->rkey, 234, 0));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
	EXPECT_EQ(IBV_WC_FETCH_ADD, wc.opcode);
	EXPECT_EQ(1000, *res);
	EXPECT_EQ(1234, *word);
	ASSERT_EQ(0, post_atomic(&a, IBV_WR_ATOMIC_CMP_AND_SWP, res,
				 (uintptr_t)word, b.mr->rkey, 1234, 77));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
	EXPECT_EQ(IBV_WC_COMP_SWAP, wc.opcode);
	EXPECT_EQ(1234, *res);
	EXPECT_EQ(77, *word);
	/* A compare that fails: the old value, the word unchanged. */
	ASSERT_EQ(0, post_atomic(&a, IBV_WR_ATOMIC_CMP_AND_SWP, res,
				 (uintptr_t)word, b.mr->rkey, 1, 5));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
	EXPECT_EQ(77, *res);
	EXPECT_EQ(77, *word);
	/* Misaligned: an invalid request (as rxe's), B's QP in ERR. */
	ASSERT_EQ(0, post_atomic(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, res,
				 (uintptr_t)word + 4, b.mr->rkey, 1, 0));
	ASSERT_EQ(IBV_WC_REM_INV_REQ_ERR, wait1(&a, &wc));
	vend_close(&a);
	vend_close(&b);
}

/* SEND and WRITE with immediate: B's completions, exactly. */
TEST_F_TIMEOUT(wire, rc_send_imm, 120)
{
	struct vend a, b;
	struct ibv_wc wc;

	ASSERT_EQ(0, vpair(self, &a, &b, IBV_QPT_RC, 7));
	ASSERT_EQ(0, post_recv(b.qp, b.mr, b.buf, LEN, 20));
	ASSERT_EQ(0, post_recv(b.qp, b.mr, b.buf + LEN, 16, 21));
	sv_fill(a.buf, 9000, 3);
	ASSERT_EQ(0, post_send(a.qp, IBV_WR_SEND_WITH_IMM, a.mr->lkey, a.buf,
			       9000, 4, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED,
			       0, 0));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&b, &wc));
	EXPECT_EQ(20, wc.wr_id);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(9000, wc.byte_len);
	EXPECT_EQ(IBV_WC_WITH_IMM, wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htobe32(0xabcd), wc.imm_data);
	EXPECT_EQ(a.qp->qp_num, wc.src_qp);
	EXPECT_EQ(b.qp->qp_num, wc.qp_num);
	EXPECT_EQ(0, memcmp(a.buf, b.buf, 9000));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
	EXPECT_EQ(IBV_WC_SEND, wc.opcode);
	sv_fill(a.buf, 5000, 4);
	ASSERT_EQ(0, post_send(a.qp, IBV_WR_RDMA_WRITE_WITH_IMM, a.mr->lkey,
			       a.buf, 5000, 5, IBV_SEND_SIGNALED, (uintptr_t)b.buf,
			       b.mr->rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&b, &wc));
	EXPECT_EQ(21, wc.wr_id);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_EQ(5000, wc.byte_len);
	EXPECT_EQ(htobe32(0xabcd), wc.imm_data);
	EXPECT_EQ(0, memcmp(a.buf, b.buf, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
	vend_close(&a);
	vend_close(&b);
}

/*
 * No receive WQE: RNR NAKs until one is posted (rnr_retry 7), and with
 * rnr_retry 1, IBV_WC_RNR_RETRY_EXC_ERR.
 */
TEST_F_TIMEOUT(wire, rc_rnr, 120)
{
	long long naks = stat_of(&self->b, "wire_naks_sent");
	struct vend a, b;
	struct ibv_wc wc;

	ASSERT_EQ(0, vpair(self, &a, &b, IBV_QPT_RC, 7));
	ASSERT_EQ(0, post_send(a.qp, IBV_WR_SEND, a.mr->lkey, a.buf, 100, 6,
			       IBV_SEND_SIGNALED, 0, 0));
	usleep(300000);
	EXPECT_EQ(0, ibv_poll_cq(a.cq, 1, &wc));
	EXPECT_LT(naks, stat_of(&self->b, "wire_naks_sent"));
	ASSERT_EQ(0, post_recv(b.qp, b.mr, b.buf, LEN, 22));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&b, &wc));
	EXPECT_EQ(100, wc.byte_len);
	vend_close(&a);
	vend_close(&b);

	ASSERT_EQ(0, vpair(self, &a, &b, IBV_QPT_RC, 1));
	ASSERT_EQ(0, post_send(a.qp, IBV_WR_SEND, a.mr->lkey, a.buf, 100, 7,
			       IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(IBV_WC_RNR_RETRY_EXC_ERR, wait1(&a, &wc));
	EXPECT_EQ(7, wc.wr_id);
	vend_close(&a);
	vend_close(&b);
}

/* A bad rkey: IBV_WC_REM_ACCESS_ERR, the responder's QP in ERR. */
TEST_F_TIMEOUT(wire, rc_bad_rkey, 120)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct vend a, b;
	struct ibv_wc wc;

	ASSERT_EQ(0, vpair(self, &a, &b, IBV_QPT_RC, 7));
	sv_fill(b.buf, 64, 9);
	ASSERT_EQ(0, post_send(a.qp, IBV_WR_RDMA_WRITE, a.mr->lkey, a.buf, 64,
			       8, IBV_SEND_SIGNALED, (uintptr_t)b.buf,
			       b.mr->rkey ^ 0x100));
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR, wait1(&a, &wc));
	EXPECT_EQ(8, wc.wr_id);
	ASSERT_EQ(0, ibv_query_qp(b.qp, &qa, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_ERR, qa.qp_state);
	/* Nothing was written. */
	sv_fill(a.buf + LEN, 64, 9);
	EXPECT_EQ(0, memcmp(a.buf + LEN, b.buf, 64));
	vend_close(&a);
	vend_close(&b);
}

/* A SEND longer than its receive: both sides see it fail. */
TEST_F_TIMEOUT(wire, rc_recv_too_short, 120)
{
	struct vend a, b;
	struct ibv_wc wc;

	ASSERT_EQ(0, vpair(self, &a, &b, IBV_QPT_RC, 7));
	ASSERT_EQ(0, post_recv(b.qp, b.mr, b.buf, 4096, 23));
	ASSERT_EQ(0, post_send(a.qp, IBV_WR_SEND, a.mr->lkey, a.buf, 8192, 9,
			       IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(IBV_WC_REM_INV_REQ_ERR, wait1(&a, &wc));
	ASSERT_EQ(IBV_WC_LOC_LEN_ERR, wait1(&b, &wc));
	EXPECT_EQ(23, wc.wr_id);
	vend_close(&a);
	vend_close(&b);
}

/* wr as one of a chain: op, local and remote address, signaled. */
static void chain_wr(struct ibv_send_wr *wr, struct ibv_sge *sg,
		     struct vend *a, struct vend *b, enum ibv_wr_opcode op,
		     size_t loff, size_t roff, uint32_t len, uint64_t id)
{
	memset(wr, 0, sizeof(*wr));
	sg->addr = (uintptr_t)a->buf + loff;
	sg->length = len;
	sg->lkey = a->mr->lkey;
	wr->wr_id = id;
	wr->sg_list = sg;
	wr->num_sge = 1;
	wr->opcode = op;
	wr->send_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr->wr.atomic.remote_addr = (uintptr_t)b->buf + roff;
		wr->wr.atomic.rkey = b->mr->rkey;
		wr->wr.atomic.compare_add = 1;
	} else {
		wr->wr.rdma.remote_addr = (uintptr_t)b->buf + roff;
		wr->wr.rdma.rkey = b->mr->rkey;
	}
}

/*
 * Many WQEs on the wire at once: rounds of 16 posted as one chain (a
 * full send queue: WRITEs of 3 packets, READs, fetch-and-adds, SENDs;
 * more READs and atomics than max_rd_atomic) complete in order with
 * their data, the atomics carried out in order, once each.
 */
#define FAA_OFF	200000
TEST_F_TIMEOUT(wire, rc_pipeline, 120)
{
	enum ibv_wr_opcode ops[4] = { IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
				      IBV_WR_ATOMIC_FETCH_AND_ADD,
				      IBV_WR_SEND };
	enum ibv_wc_opcode wcs[4] = { IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ,
				      IBV_WC_FETCH_ADD, IBV_WC_SEND };
	struct ibv_send_wr wr[16], *bad;
	struct ibv_sge sg[16];
	struct vend a, b;
	struct ibv_wc wc;
	uint64_t *res;
	int r, k;

	ASSERT_EQ(0, vpair(self, &a, &b, IBV_QPT_RC, 7));
	for (r = 0; r < 20; r++) {
		sv_fill(a.buf, 48000, r);
		sv_fill(b.buf + 100000, 32000, 100 + r);
		sv_fill(a.buf + 210000, 8000, 200 + r);
		memset(a.buf + 100000, 0, 32000);
		for (k = 0; k < 4; k++)
			ASSERT_EQ(0, post_recv(b.qp, b.mr,
					       b.buf + 300000 + k * 500, 500,
					       1000 + k));
		for (k = 0; k < 16; k++) {
			switch (k % 4) {
			case 0:
				chain_wr(&wr[k], &sg[k], &a, &b, ops[0],
					 k * 3000, k * 3000, 3000, k);
				break;
			case 1:
				chain_wr(&wr[k], &sg[k], &a, &b, ops[1],
					 100000 + k * 2000, 100000 + k * 2000,
					 2000, k);
				break;
			case 2:
				chain_wr(&wr[k], &sg[k], &a, &b, ops[2],
					 FAA_OFF + 8 + k * 8, FAA_OFF, 8, k);
				break;
			default:
				chain_wr(&wr[k], &sg[k], &a, &b, ops[3],
					 210000 + k * 500, 0, 500, k);
			}
			wr[k].next = k < 15 ? &wr[k + 1] : NULL;
		}
		ASSERT_EQ(0, ibv_post_send(a.qp, wr, &bad));
		for (k = 0; k < 16; k++) {
			ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
			ASSERT_EQ(k, wc.wr_id);
			ASSERT_EQ(wcs[k % 4], wc.opcode);
		}
		for (k = 0; k < 4; k++) {
			ASSERT_EQ(IBV_WC_SUCCESS, wait1(&b, &wc));
			ASSERT_EQ(1000 + k, wc.wr_id);
			ASSERT_EQ(500, wc.byte_len);
			ASSERT_EQ(0, memcmp(b.buf + 300000 + k * 500,
					    a.buf + 210000 + (4 * k + 3) * 500,
					    500));
		}
		for (k = 0; k < 16; k += 4)
			ASSERT_EQ(0, memcmp(a.buf + k * 3000, b.buf + k * 3000,
					    3000));
		for (k = 1; k < 16; k += 4)
			ASSERT_EQ(0, memcmp(a.buf + 100000 + k * 2000,
					    b.buf + 100000 + k * 2000, 2000));
		/* Each fetch-and-add once, in order: 0, 1, 2, ... */
		for (k = 2; k < 16; k += 4) {
			res = (uint64_t *)(a.buf + FAA_OFF + 8 + k * 8);
			ASSERT_EQ(r * 4 + k / 4, *res);
		}
	}
	EXPECT_EQ(80, *(uint64_t *)(b.buf + FAA_OFF));
	vend_close(&a);
	vend_close(&b);
}

/*
 * IBV_SEND_FENCE: a SEND of what a READ before it brings waits for the
 * READ's data (without the fence it may go before it comes: it does).
 */
TEST_F_TIMEOUT(wire, rc_fence, 120)
{
	struct ibv_send_wr wr[2], *bad;
	struct ibv_sge sg[2];
	struct vend a, b;
	struct ibv_wc wc;
	int r;

	ASSERT_EQ(0, vpair(self, &a, &b, IBV_QPT_RC, 7));
	for (r = 0; r < 10; r++) {
		sv_fill(b.buf, 8000, 50 + r);
		memset(a.buf, 0, 8000);
		ASSERT_EQ(0, post_recv(b.qp, b.mr, b.buf + LEN, 8000, 30));
		chain_wr(&wr[0], &sg[0], &a, &b, IBV_WR_RDMA_READ, 0, 0, 8000,
			 1);
		chain_wr(&wr[1], &sg[1], &a, &b, IBV_WR_SEND, 0, 0, 8000, 2);
		wr[1].send_flags |= IBV_SEND_FENCE;
		wr[0].next = &wr[1];
		ASSERT_EQ(0, ibv_post_send(a.qp, wr, &bad));
		ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
		ASSERT_EQ(1, wc.wr_id);
		ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
		ASSERT_EQ(2, wc.wr_id);
		ASSERT_EQ(IBV_WC_SUCCESS, wait1(&b, &wc));
		ASSERT_EQ(0, memcmp(b.buf, b.buf + LEN, 8000));
	}
	vend_close(&a);
	vend_close(&b);
}

/*
 * A failure among WQEs in flight: those before it complete, it fails,
 * those after it are flushed, the QP is in ERR.
 */
TEST_F_TIMEOUT(wire, rc_pipeline_error, 120)
{
	struct ibv_send_wr wr[4], *bad;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct ibv_sge sg[4];
	struct vend a, b;
	struct ibv_wc wc;
	int k;

	ASSERT_EQ(0, vpair(self, &a, &b, IBV_QPT_RC, 7));
	ASSERT_EQ(0, post_recv(b.qp, b.mr, b.buf + LEN, 100, 40));
	sv_fill(a.buf, 4000, 7);
	for (k = 0; k < 4; k++) {
		chain_wr(&wr[k], &sg[k], &a, &b,
			 k == 3 ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, k * 1000,
			 k * 1000, 1000, k);
		wr[k].next = k < 3 ? &wr[k + 1] : NULL;
	}
	wr[1].wr.rdma.rkey ^= 0x100;
	ASSERT_EQ(0, ibv_post_send(a.qp, wr, &bad));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
	EXPECT_EQ(0, wc.wr_id);
	ASSERT_EQ(IBV_WC_REM_ACCESS_ERR, wait1(&a, &wc));
	EXPECT_EQ(1, wc.wr_id);
	ASSERT_EQ(IBV_WC_WR_FLUSH_ERR, wait1(&a, &wc));
	EXPECT_EQ(2, wc.wr_id);
	ASSERT_EQ(IBV_WC_WR_FLUSH_ERR, wait1(&a, &wc));
	EXPECT_EQ(3, wc.wr_id);
	EXPECT_EQ(0, memcmp(a.buf, b.buf, 1000));
	ASSERT_EQ(0, ibv_query_qp(a.qp, &qa, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_ERR, qa.qp_state);
	vend_close(&a);
	vend_close(&b);
}

/* Wait up to 10 s for ctx's next async event; its type, or -1. */
static int async1(struct ibv_context *ctx)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int type;

	if (poll(&pfd, 1, 10000) != 1 || ibv_get_async_event(ctx, &ev))
		return -1;
	type = ev.event_type;
	ibv_ack_async_event(&ev);
	return type;
}

/*
 * RTS to SQD with WQEs in flight: those started complete, in order, and
 * SQ_DRAINED comes after them; the rest (and one posted in SQD) wait for
 * RTS, then complete. 15 WQEs in the 16-deep SQ, so that the one posted
 * in SQD fits even if none had started (a slow kernel: then the SQ is
 * drained at once).
 */
TEST_F_TIMEOUT(wire, rc_sqd_drains, 120)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_SQD,
				  .en_sqd_async_notify = 1 };
	struct ibv_send_wr wr[15], *bad;
	struct ibv_sge sg[15];
	struct vend a, b;
	struct ibv_wc wc;
	int k, done, flags;

	ASSERT_EQ(0, vpair(self, &a, &b, IBV_QPT_RC, 7));
	flags = fcntl(a.ctx->async_fd, F_GETFL);
	ASSERT_EQ(0, fcntl(a.ctx->async_fd, F_SETFL, flags | O_NONBLOCK));
	sv_fill(a.buf, 15 * 8000, 11);
	for (k = 0; k < 15; k++) {
		chain_wr(&wr[k], &sg[k], &a, &b,
			 k % 2 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
			 k * 8000, k * 8000, 8000, k);
		wr[k].next = k < 14 ? &wr[k + 1] : NULL;
	}
	ASSERT_EQ(0, ibv_post_send(a.qp, wr, &bad));
	usleep(1000);
	ASSERT_EQ(0, ibv_modify_qp(a.qp, &qa, IBV_QP_STATE |
				   IBV_QP_EN_SQD_ASYNC_NOTIFY));
	ASSERT_EQ(IBV_EVENT_SQ_DRAINED, async1(a.ctx));
	/* What started completed before the event; nothing more in SQD. */
	for (done = 0; ibv_poll_cq(a.cq, 1, &wc) == 1; done++) {
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(done, wc.wr_id);
	}
	ASSERT_EQ(0, post_send(a.qp, IBV_WR_RDMA_WRITE, a.mr->lkey, a.buf, 100,
			       99, IBV_SEND_SIGNALED, (uintptr_t)b.buf + LEN,
			       b.mr->rkey));
	usleep(200000);
	EXPECT_EQ(0, ibv_poll_cq(a.cq, 1, &wc));
	qa.qp_state = IBV_QPS_RTS;
	ASSERT_EQ(0, ibv_modify_qp(a.qp, &qa, IBV_QP_STATE));
	for (k = done; k < 16; k++) {
		ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
		ASSERT_EQ(k < 15 ? k : 99, wc.wr_id);
	}
	for (k = 0; k < 15; k += 2)
		ASSERT_EQ(0, memcmp(a.buf + k * 8000, b.buf + k * 8000, 8000));
	EXPECT_EQ(0, memcmp(a.buf, b.buf + LEN, 100));
	TH_LOG("%d of 15 completed in SQD", done);
	vend_close(&a);
	vend_close(&b);
}

/* UC: WRITE with immediate of 20 KB, data and completion exact. */
TEST_F_TIMEOUT(wire, uc_write_imm, 120)
{
	struct vend a, b;
	struct ibv_wc wc;

	ASSERT_EQ(0, vpair(self, &a, &b, IBV_QPT_UC, 7));
	ASSERT_EQ(0, post_recv(b.qp, b.mr, b.buf + LEN, 16, 24));
	sv_fill(a.buf, 20000, 5);
	ASSERT_EQ(0, post_send(a.qp, IBV_WR_RDMA_WRITE_WITH_IMM, a.mr->lkey,
			       a.buf, 20000, 10, IBV_SEND_SIGNALED,
			       (uintptr_t)b.buf, b.mr->rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&a, &wc));
	ASSERT_EQ(IBV_WC_SUCCESS, wait1(&b, &wc));
	EXPECT_EQ(24, wc.wr_id);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_EQ(20000, wc.byte_len);
	EXPECT_EQ(0, memcmp(a.buf, b.buf, 20000));
	vend_close(&a);
	vend_close(&b);
}

/* A UD QP's group on its end: listed by ip maddr (joined), within 5 s. */
static int joined(const char *ns, const char *dev, const char *group,
		  bool want)
{
	int i, r = -1;

	for (i = 0; i < 50; i++) {
		snprintf(cmd, sizeof(cmd),
			 "ip -n %s maddr show dev %s | grep -qw %s", ns, dev,
			 group);
		r = sh(cmd) == 0;
		if (r == want)
			return 0;
		usleep(100000);
	}
	return -1;
}

/* An AH from a's GID gidx to a group. */
static struct ibv_ah *group_ah(struct vend *a, int gidx,
			       const union ibv_gid *group)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *group, .sgid_index = gidx, .hop_limit = 1 },
	};

	return ibv_create_ah(a->pd, &aa);
}

/* A UD SEND of len bytes (with immediate if imm) from x to QP qpn by ah. */
static int ud_send(struct vend *x, struct ibv_ah *ah, uint32_t qpn,
		   uint32_t len, bool imm)
{
	struct ibv_sge sg = { (uintptr_t)x->buf, len, x->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 77, .sg_list = &sg, .num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(9),
	};
	struct ibv_send_wr *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = 0x1234;
	return ibv_post_send(x->qp, &wr, &bad);
}

/* A UD SEND of len bytes of seed from a's QP by ah; 0 if posted. */
static int mcast_send(struct vend *a, struct ibv_ah *ah, uint32_t len,
		      int seed)
{
	sv_fill(a->buf, len, seed);
	return ud_send(a, ah, 0xffffff, len, false);
}

/* The completions of v within 500 ms, at most max. */
static int drain(struct vend *v, struct ibv_wc *wc, int max)
{
	int i, n = 0;

	for (i = 0; i < 50 && n < max; i++) {
		n += ibv_poll_cq(v->cq, max - n, wc + n);
		usleep(10000);
	}
	return n;
}

/*
 * wc is a multicast receive of len bytes of seed on v from QP src, the
 * GRH's destination dst (IPv4: the header at byte 20, else IPv6's).
 */
static int mcast_ok(struct vend *v, const struct ibv_wc *wc, uint32_t src,
		    uint32_t len, int seed, const union ibv_gid *dst)
{
	const char *grh = v->buf + LEN;
	char want[256];

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV ||
	    wc->byte_len != 40 + len || wc->src_qp != src ||
	    !(wc->wc_flags & IBV_WC_GRH))
		return -1;
	sv_fill(want, len, seed);
	if (memcmp(grh + 40, want, len))
		return -1;
	if (dst->raw[0] == 0xff)
		return memcmp(grh + 24, dst->raw, 16) ? -1 : 0;
	return memcmp(grh + 20 + 16, dst->raw + 12, 4) ? -1 : 0;
}

/* The next completion of v is that receive. */
static int mcast_got(struct vend *v, uint32_t src, uint32_t len, int seed,
		     const union ibv_gid *dst)
{
	struct ibv_wc wc;

	if (wait1(v, &wc) < 0)
		return -1;
	return mcast_ok(v, &wc, src, len, seed, dst);
}

/*
 * UD multicast on the wire: B's QP attached to an IPv4 and an IPv6 group
 * joins them on its netdev (ip maddr lists them); A's sends to the groups
 * reach it with the GRH of the group, and A's own QP attached to the
 * group gets its send once (not again off the wire); detached, the
 * groups are left and nothing more arrives.
 */
TEST_F_TIMEOUT(wire, ud_multicast, 120)
{
	union ibv_gid g4 = { .raw = { [10] = 0xff, [11] = 0xff,
				      239, 1, 2, 3 } };
	union ibv_gid g6 = { .raw = { 0xff, 0x0e, [13] = 1, [15] = 2 } };
	struct ibv_ah *ah4, *ah6;
	struct ibv_wc wc[4];
	struct vend a, b;
	int i, n;

	ASSERT_EQ(0, vend_open(&a, NS_A, SV_A, self->a.g4, IBV_QPT_UD,
			       2 * LEN, ACCESS));
	ASSERT_EQ(0, vend_open(&b, NS_B, SV_B, self->b.g4, IBV_QPT_UD,
			       2 * LEN, ACCESS));
	ASSERT_EQ(0, ud_rts(a.qp, 0x1234));
	ASSERT_EQ(0, ud_rts(b.qp, 0x1234));
	ah4 = group_ah(&a, self->a.g4, &g4);
	ah6 = group_ah(&a, self->a.g6, &g6);
	ASSERT_NE(NULL, ah4);
	ASSERT_NE(NULL, ah6);
	ASSERT_EQ(0, ibv_attach_mcast(b.qp, &g4, 0));
	ASSERT_EQ(0, ibv_attach_mcast(b.qp, &g6, 0));
	ASSERT_EQ(0, ibv_attach_mcast(a.qp, &g4, 0));
	EXPECT_EQ(0, joined(NS_B, END_B, "239.1.2.3", true));
	EXPECT_EQ(0, joined(NS_B, END_B, "ff0e::1:2", true));
	EXPECT_EQ(0, joined(NS_A, END_A, "239.1.2.3", true));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, post_recv(b.qp, b.mr, b.buf + LEN, 4096, i));
		ASSERT_EQ(0, post_recv(a.qp, a.mr, a.buf + LEN, 4096, i));
	}

	/* A: its send's completion and its own copy, once. */
	ASSERT_EQ(0, mcast_send(&a, ah4, 200, 3));
	EXPECT_EQ(0, mcast_got(&b, a.qp->qp_num, 200, 3, &g4));
	n = drain(&a, wc, 4);
	ASSERT_EQ(2, n);
	for (i = 0; i < n; i++) {
		if (wc[i].opcode == IBV_WC_SEND) {
			EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
			EXPECT_EQ(77, wc[i].wr_id);
		} else {
			EXPECT_EQ(0, mcast_ok(&a, &wc[i], a.qp->qp_num, 200, 3,
					      &g4));
		}
	}
	EXPECT_NE(wc[0].opcode, wc[1].opcode);
	ASSERT_EQ(0, mcast_send(&a, ah6, 100, 4));
	EXPECT_EQ(0, mcast_got(&b, a.qp->qp_num, 100, 4, &g6));
	EXPECT_EQ(1, drain(&a, wc, 4));		/* the send: A not in g6 */

	ASSERT_EQ(0, ibv_detach_mcast(b.qp, &g4, 0));
	ASSERT_EQ(0, ibv_detach_mcast(b.qp, &g6, 0));
	ASSERT_EQ(0, ibv_detach_mcast(a.qp, &g4, 0));
	EXPECT_EQ(0, joined(NS_B, END_B, "239.1.2.3", false));
	EXPECT_EQ(0, joined(NS_B, END_B, "ff0e::1:2", false));
	EXPECT_EQ(0, joined(NS_A, END_A, "239.1.2.3", false));
	ASSERT_EQ(0, mcast_send(&a, ah4, 200, 5));
	EXPECT_EQ(1, drain(&a, wc, 4));
	EXPECT_EQ(0, drain(&b, wc, 4));
	ibv_destroy_ah(ah4);
	ibv_destroy_ah(ah6);
	vend_close(&a);
	vend_close(&b);
}

/*
 * The GRH of a UD message from x (its GID gidx) to r, as r got it in
 * grh[40]; x's send completion taken too. 0 if both completed.
 */
static int ud_grh(struct vend *x, int gidx, struct vend *r, uint32_t len,
		  bool imm, unsigned char *grh)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = r->gid, .sgid_index = gidx, .hop_limit = 64,
			 .traffic_class = 0x20 },
	};
	struct ibv_ah *ah = ibv_create_ah(x->pd, &aa);
	struct ibv_wc wc;
	int ret = -1;

	if (!ah || post_recv(r->qp, r->mr, r->buf + LEN, 4096, 1) ||
	    ud_send(x, ah, r->qp->qp_num, len, imm))
		goto out;
	if (wait1(x, &wc) != IBV_WC_SUCCESS || wait1(r, &wc) != IBV_WC_SUCCESS ||
	    wc.byte_len != 40 + len || !(wc.wc_flags & IBV_WC_GRH))
		goto out;
	memcpy(grh, r->buf + LEN, 40);
	ret = 0;
out:
	if (ah)
		ibv_destroy_ah(ah);
	return ret;
}

/* The one's complement sum of an IPv4 header: 0 when its checksum is right. */
static uint16_t ip_sum(const unsigned char *h)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		sum += (h[i] << 8) | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/*
 * A UD message between two QPs of one device (delivered without the
 * wire) begins with the 40 bytes the wire would give it, as one from the
 * other device does: over IPv4 GIDs 20 zero bytes and the IPv4 header
 * (UDP, DF, the AH's class and hop limit, lengths of the frame, a valid
 * checksum), which UD programs read the addresses from at byte 20; over
 * IPv6 the IPv6 header (next header UDP).
 */
TEST_F_TIMEOUT(wire, ud_grh_local_as_wire, 120)
{
	unsigned char loc[40], wir[40], zero[20] = {};
	struct vend a, a2, b;
	int v6, imm;

	for (v6 = 0; v6 < 2; v6++) {
		int ga = v6 ? self->a.g6 : self->a.g4;
		int gb = v6 ? self->b.g6 : self->b.g4;

		ASSERT_EQ(0, vend_open(&a, NS_A, SV_A, ga, IBV_QPT_UD,
				       2 * LEN, ACCESS));
		ASSERT_EQ(0, vend_open(&a2, NS_A, SV_A, ga, IBV_QPT_UD,
				       2 * LEN, ACCESS));
		ASSERT_EQ(0, vend_open(&b, NS_B, SV_B, gb, IBV_QPT_UD,
				       2 * LEN, ACCESS));
		ASSERT_EQ(0, ud_rts(a.qp, 0x1234));
		ASSERT_EQ(0, ud_rts(a2.qp, 0x1234));
		ASSERT_EQ(0, ud_rts(b.qp, 0x1234));
		for (imm = 0; imm < 2; imm++) {
			ASSERT_EQ(0, ud_grh(&a, ga, &a2, 301, imm, loc));
			ASSERT_EQ(0, ud_grh(&b, gb, &a2, 301, imm, wir));
			if (!v6) {
				EXPECT_EQ(0, memcmp(loc, zero, 20));
				EXPECT_EQ(0x45, loc[20]);
				EXPECT_EQ(0x20, loc[21]);	/* tos */
				/* 20 IP, 8 UDP, 12 BTH, 8 DETH, 304, 4 ICRC */
				EXPECT_EQ(356 + 4 * imm,
					  (loc[22] << 8) | loc[23]);
				EXPECT_EQ(0x40, loc[26]);	/* DF */
				EXPECT_EQ(64, loc[28]);
				EXPECT_EQ(17, loc[29]);
				EXPECT_EQ(0, ip_sum(loc + 20));
				EXPECT_EQ(0, memcmp(loc + 32, a.gid.raw + 12, 4));
				EXPECT_EQ(0, memcmp(loc + 36, a2.gid.raw + 12, 4));
				/* The wire's: the same but its source. */
				EXPECT_EQ(0, memcmp(loc, wir, 24));
				EXPECT_EQ(0, memcmp(loc + 26, wir + 26, 4));
				EXPECT_EQ(0, memcmp(wir + 32, b.gid.raw + 12, 4));
				EXPECT_EQ(0, memcmp(loc + 36, wir + 36, 4));
			} else {
				EXPECT_EQ(0x62, loc[0]);	/* 6, class */
				EXPECT_EQ(336 + 4 * imm,
					  (loc[4] << 8) | loc[5]);
				EXPECT_EQ(17, loc[6]);
				EXPECT_EQ(64, loc[7]);
				EXPECT_EQ(0, memcmp(loc + 8, a.gid.raw, 16));
				EXPECT_EQ(0, memcmp(loc + 24, a2.gid.raw, 16));
				EXPECT_EQ(0, memcmp(loc, wir, 8));
				EXPECT_EQ(0, memcmp(wir + 8, b.gid.raw, 16));
				EXPECT_EQ(0, memcmp(loc + 24, wir + 24, 16));
			}
		}
		vend_close(&a);
		vend_close(&a2);
		vend_close(&b);
	}
}

/*
 * The device goes away with its groups joined: deleted (svctl link del),
 * or its netdev deleted. The first leaves the groups on the netdev; both
 * leave the QP's objects to be closed without a splat.
 */
static void mcast_gone(struct __test_metadata *_metadata,
		       FIXTURE_DATA(wire) *self, bool netdev)
{
	union ibv_gid g4 = { .raw = { [10] = 0xff, [11] = 0xff,
				      239, 1, 2, 4 } };
	union ibv_gid g6 = { .raw = { 0xff, 0x0e, [13] = 1, [15] = 4 } };
	struct vend b;

	ASSERT_EQ(0, vend_open(&b, NS_B, SV_B, self->b.g4, IBV_QPT_UD,
			       2 * LEN, ACCESS));
	ASSERT_EQ(0, ud_rts(b.qp, 0x1234));
	ASSERT_EQ(0, ibv_attach_mcast(b.qp, &g4, 0));
	ASSERT_EQ(0, ibv_attach_mcast(b.qp, &g6, 0));
	EXPECT_EQ(0, joined(NS_B, END_B, "239.1.2.4", true));
	EXPECT_EQ(0, joined(NS_B, END_B, "ff0e::1:4", true));
	if (netdev) {
		ASSERT_EQ(0, sh("ip -n " NS_B " link del " END_B));
	} else {
		snprintf(cmd, sizeof(cmd), "ip netns exec " NS_B
			 " %s/../bin/svctl link del " SV_B, sv_compat_dir());
		ASSERT_EQ(0, sh(cmd));
		EXPECT_EQ(0, joined(NS_B, END_B, "239.1.2.4", false));
		EXPECT_EQ(0, joined(NS_B, END_B, "ff0e::1:4", false));
	}
	/* The device is gone: whatever these say, they must not splat. */
	ibv_detach_mcast(b.qp, &g4, 0);
	vend_close(&b);
}

TEST_F_TIMEOUT(wire, ud_multicast_link_del, 120)
{
	mcast_gone(_metadata, self, false);
}

TEST_F_TIMEOUT(wire, ud_multicast_netdev_del, 120)
{
	mcast_gone(_metadata, self, true);
}

TEST_HARNESS_MAIN
