// SPDX-License-Identifier: GPL-2.0
/*
 * Who executes a work request: the poster's doorbell syscall or the
 * engine kthread. On a device whose idle_us is 0 the kthread never polls,
 * so every post finds the doorbell page asking for a ring and the
 * doorbell executes the WR before ibv_post_send() returns; a burst longer
 * than the doorbell's share is finished by the kthread. The device's
 * doorbells and doorbell_wqes counters say which path ran.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "sv_harness.h"
#include "sv_dp_test.h"
#include "sv_ring_test.h"
#include "softverbs-abi.h"

#define NETDEV	"sved0"
#define DEV	"sve1"
#define LEN	65536
#define DEPTH	64

FIXTURE(eng) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	char *buf;
	union ibv_gid gid;
	char svctl[PATH_MAX + 16];
};

static struct ibv_qp *mkqp(FIXTURE_DATA(eng) *self)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = self->cq, .recv_cq = self->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(self->pd, &ia);
}

FIXTURE_SETUP(eng)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	char cmd[2 * sizeof(self->svctl) + 128];

	ASSERT_EQ(0, sv_svctl_path(self->svctl, sizeof(self->svctl)));
	ASSERT_EQ(0, system("ip link add " NETDEV " type dummy && "
			    "ip link set " NETDEV " up"));
	snprintf(cmd, sizeof(cmd), "%s link add " DEV " netdev " NETDEV
		 " && %s dev set " DEV " idle_us 0", self->svctl, self->svctl);
	ASSERT_EQ(0, system(cmd));
	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	self->ctx = sv_open_named(self->list, DEV);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &self->gid));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 4 * DEPTH, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->buf = aligned_alloc(4096, 2 * LEN);
	ASSERT_NE(NULL, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, 2 * LEN, access);
	ASSERT_NE(NULL, self->mr);
	self->a = mkqp(self);
	self->b = mkqp(self);
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, qp_init(self->a, access));
	ASSERT_EQ(0, qp_init(self->b, access));
	ASSERT_EQ(0, qp_rtr_rts(self->a, self->b->qp_num, &self->gid, 7, 1, 7));
	ASSERT_EQ(0, qp_rtr_rts(self->b, self->a->qp_num, &self->gid, 7, 1, 7));
	/* The modifies kicked the kthread: let it go back to sleep. */
	usleep(50000);
}

FIXTURE_TEARDOWN(eng)
{
	char cmd[PATH_MAX + 128];

	if (self->a)
		ibv_destroy_qp(self->a);
	if (self->b)
		ibv_destroy_qp(self->b);
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
	free(self->buf);
	snprintf(cmd, sizeof(cmd), "%s link del " DEV, self->svctl);
	if (system(cmd) || system("ip link del " NETDEV))
		TH_LOG("cleanup failed");
}

static long long stat(FIXTURE_DATA(eng) *self, const char *name)
{
	return sv_stat_of(self->svctl, DEV, name);
}

/* The WR is done when ibv_post_send() returns: no waiting, no polling. */
TEST_F(eng, doorbell_executes_in_the_posters_call)
{
	long long db0 = stat(self, "doorbells");
	long long wq0 = stat(self, "doorbell_wqes");
	struct ibv_wc wc;
	int i, len;

	ASSERT_LE(0, db0);
	ASSERT_LE(0, wq0);
	for (i = 0; i < 50; i++) {
		len = 1 + i * 997 % 8192;
		sv_fill(self->buf, len, i);
		memset(self->buf + LEN, 0, len);
		ASSERT_EQ(0, post_send(self->a, IBV_WR_RDMA_WRITE,
				       self->mr->lkey, self->buf, len, i,
				       IBV_SEND_SIGNALED,
				       (uintptr_t)self->buf + LEN,
				       self->mr->rkey));
		ASSERT_EQ(1, ibv_poll_cq(self->cq, 1, &wc)) TH_LOG("WR %d", i);
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(i, wc.wr_id);
		EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
		ASSERT_EQ(0, memcmp(self->buf, self->buf + LEN, len));
	}
	EXPECT_EQ(db0 + 50, stat(self, "doorbells"));
	EXPECT_EQ(wq0 + 50, stat(self, "doorbell_wqes"));
}

/* A SEND rung in, its receive completion there at once too. */
TEST_F(eng, doorbell_delivers_a_send)
{
	struct ibv_wc wc;

	sv_fill(self->buf, 3000, 7);
	memset(self->buf + LEN, 0, 3000);
	ASSERT_EQ(0, post_recv(self->b, self->mr, self->buf + LEN, LEN, 42));
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, self->mr->lkey,
			       self->buf, 3000, 1, IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(2, ibv_poll_cq(self->cq, 1, &wc) +
		     ibv_poll_cq(self->cq, 1, &wc));
	EXPECT_EQ(0, memcmp(self->buf, self->buf + LEN, 3000));
}

/*
 * One ibv_post_send() of a chain longer than the doorbell's share: one
 * doorbell, which runs part of it; the kthread runs the rest, in order.
 */
TEST_F(eng, burst_is_finished_by_the_kthread)
{
	struct ibv_send_wr wr[DEPTH], *bad;
	long long db0 = stat(self, "doorbells");
	long long wq0 = stat(self, "doorbell_wqes");
	struct ibv_sge sg[DEPTH];
	struct ibv_wc wc;
	int i, n;

	ASSERT_LE(0, db0);
	sv_fill(self->buf, LEN, 3);
	memset(self->buf + LEN, 0, LEN);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < DEPTH; i++) {
		sg[i] = (struct ibv_sge){ (uintptr_t)self->buf + i * 1024, 1024,
					  self->mr->lkey };
		wr[i].wr_id = i;
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)self->buf + LEN +
					    i * 1024;
		wr[i].wr.rdma.rkey = self->mr->rkey;
		wr[i].next = i + 1 < DEPTH ? &wr[i + 1] : NULL;
	}
	ASSERT_EQ(0, ibv_post_send(self->a, wr, &bad));
	for (n = 0; n < DEPTH; n++) {
		ASSERT_EQ(1, poll1(self->cq, &wc));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(n, wc.wr_id);
	}
	EXPECT_EQ(0, memcmp(self->buf, self->buf + LEN, LEN));
	EXPECT_EQ(db0 + 1, stat(self, "doorbells"));
	n = stat(self, "doorbell_wqes") - wq0;
	EXPECT_LE(1, n);
	EXPECT_GT(DEPTH, n);
}

/*
 * Doorbell hints (uapi: SV_MAP_DOORBELL_HINTS): n more RC QPs, paired
 * and connected when @connect, with one-entry queues.
 */
static struct ibv_qp **mkqps(FIXTURE_DATA(eng) *self, int n, bool connect)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_qp_init_attr ia = {
		.send_cq = self->cq, .recv_cq = self->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp **q = calloc(n, sizeof(*q));
	int i;

	if (!q)
		return NULL;
	for (i = 0; i < n; i++) {
		q[i] = ibv_create_qp(self->pd, &ia);
		if (!q[i])
			goto err;
	}
	for (i = 0; connect && i + 1 < n; i += 2)
		if (qp_init(q[i], access) || qp_init(q[i + 1], access) ||
		    qp_rtr_rts(q[i], q[i + 1]->qp_num, &self->gid, 7, 1, 7) ||
		    qp_rtr_rts(q[i + 1], q[i]->qp_num, &self->gid, 7, 1, 7))
			goto err;
	return q;
err:
	while (n--)
		if (q[n])
			ibv_destroy_qp(q[n]);
	free(q);
	return NULL;
}

static void rmqps(struct ibv_qp **q, int n)
{
	while (n--)
		ibv_destroy_qp(q[n]);
	free(q);
}

/* One signaled RDMA WRITE of len bytes at off, from qp; its wr_id. */
static int write_at(FIXTURE_DATA(eng) *self, struct ibv_qp *qp, size_t off,
		    int len, uint64_t wr_id)
{
	sv_fill(self->buf + off, len, (int)wr_id);
	memset(self->buf + LEN + off, 0, len);
	return post_send(qp, IBV_WR_RDMA_WRITE, self->mr->lkey, self->buf + off,
			 len, wr_id, IBV_SEND_SIGNALED,
			 (uintptr_t)self->buf + LEN + off, self->mr->rkey);
}

/*
 * A ring that names its QP (SV_RING_QP) runs that QP in the ringer's
 * syscall, and only in the ringer's file: a WQE written into b's ring
 * with no hint and no ring waits; another file ringing b's slot number
 * (its own QPs have slots too) runs nothing of b's; b's own ring of the
 * slot executes it at once. (b's ring: the library's view of a's stays
 * whole.) A post through the library that rings names its QP that way
 * and sets no hint bit.
 */
TEST_F(eng, a_ring_names_its_qp_alone)
{
	struct ibv_context *other = sv_open_named(self->list, DEV);
	struct ibv_pd *opd = other ? ibv_alloc_pd(other) : NULL;
	struct ibv_cq *ocq = other ? ibv_create_cq(other, 4, NULL, NULL,
						   0) : NULL;
	struct ibv_qp_init_attr ia = {
		.send_cq = ocq, .recv_cq = ocq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *oq[4] = {};
	long long wq0 = stat(self, "doorbell_wqes");
	struct sv_send_wqe *w;
	struct sv_sge *sg;
	struct ring rg, ra;
	struct ibv_wc wc;
	__u64 *hint;
	int i;

	ASSERT_NE(NULL, ocq);
	for (i = 0; i < 4; i++) {
		oq[i] = ibv_create_qp(opd, &ia);
		ASSERT_NE(NULL, oq[i]);
	}
	ASSERT_EQ(0, ring_map(self->b, &rg));
	ASSERT_EQ(0, ring_map(self->a, &ra));
	ASSERT_NE(NULL, rg.db);
	ASSERT_GT(SV_DB_SLOTS, rg.slot);
	sv_fill(self->buf, 4096, 9);
	memset(self->buf + LEN, 0, 4096);
	w = ring_slot(&rg);
	w->wr_id = 77;
	w->opcode = SV_WR_RDMA_WRITE;
	w->send_flags = SV_SEND_SIGNALED;
	w->num_sge = 1;
	w->rkey = self->mr->rkey;
	w->remote_addr = (uintptr_t)self->buf + LEN;
	sg = (struct sv_sge *)(w + 1);
	sg->addr = (uintptr_t)self->buf;
	sg->length = 4096;
	sg->lkey = self->mr->lkey;
	ring_write(&rg);
	/* The other file's rings: its own slots, a's number among them. */
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, ring_qp(other->cmd_fd, i));
	EXPECT_EQ(0, ring_qp(other->cmd_fd, rg.slot));
	usleep(50000);
	EXPECT_EQ(0, ibv_poll_cq(self->cq, 1, &wc));
	EXPECT_EQ(wq0, stat(self, "doorbell_wqes"));
	EXPECT_NE(0, memcmp(self->buf, self->buf + LEN, 4096));
	/* b's file names it: done when the ring returns. */
	EXPECT_EQ(0, ring_qp(rg.fd, rg.slot));
	ASSERT_EQ(1, ibv_poll_cq(self->cq, 1, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(77, wc.wr_id);
	EXPECT_EQ(0, memcmp(self->buf, self->buf + LEN, 4096));
	EXPECT_EQ(wq0 + 1, stat(self, "doorbell_wqes"));
	/* The library's post rings the same way: no hint bit set. */
	hint = (__u64 *)((char *)ra.db + SV_DB_HINT_OFFSET);
	__atomic_store_n(&hint[ra.slot / 64], 0, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, write_at(self, self->a, 0, 512, 5));
	ASSERT_EQ(1, ibv_poll_cq(self->cq, 1, &wc));
	EXPECT_EQ(5, wc.wr_id);
	EXPECT_EQ(0, __atomic_load_n(&hint[ra.slot / 64], __ATOMIC_SEQ_CST) &
		     (1ULL << (ra.slot % 64)));
	ring_unmap(&rg);
	ring_unmap(&ra);
	for (i = 0; i < 4; i++)
		ibv_destroy_qp(oq[i]);
	ibv_destroy_cq(ocq);
	ibv_dealloc_pd(opd);
	ibv_close_device(other);
}

/*
 * Until the doorbell page of a's file says SV_DB_DEFER (at most 2 s):
 * true if it does.
 */
static bool defer_set(struct ring *ra)
{
	int i;

	for (i = 0; i < 20000; i++) {
		if (__atomic_load_n(&ra->db->flags, __ATOMIC_ACQUIRE) &
		    SV_DB_DEFER)
			return true;
		usleep(100);
	}
	return false;
}

/*
 * A busy poster's posts share a syscall (uapi: SV_DB_DEFER). While the
 * engine sleeps (idle_us 0), a post whose send CQ already holds a
 * completion it asked for rings once more, telling the engine its file
 * would defer; once the page says SV_DB_DEFER, such posts only set their
 * QP's bit and the next poll rings once for them all. Eight posts, one
 * ring, every completion in order, the data in place.
 */
#define DEFERRED	8

TEST_F(eng, posts_leave_their_rings_to_the_next_poll)
{
	long long db0 = stat(self, "doorbells");
	struct ibv_wc wc[DEFERRED + 2];
	struct ring ra;
	int i;

	ASSERT_LE(0, db0);
	ASSERT_EQ(0, ring_map(self->a, &ra));
	ASSERT_NE(NULL, ra.db);
	/* No completion outstanding: it rings, as would a ping-pong's. */
	ASSERT_EQ(0, write_at(self, self->a, 0, 512, 0));
	EXPECT_EQ(0, __atomic_load_n(&ra.db->defer, __ATOMIC_ACQUIRE));
	/* One outstanding: it rings, and asks for SV_DB_DEFER. */
	ASSERT_EQ(0, write_at(self, self->a, 512, 512, 1));
	ASSERT_TRUE(defer_set(&ra));
	for (i = 2; i < DEFERRED + 2; i++)
		ASSERT_EQ(0, write_at(self, self->a, i * 512, 512, i));
	ASSERT_EQ(DEFERRED + 2, ibv_poll_cq(self->cq, DEFERRED + 2, wc));
	for (i = 0; i < DEFERRED + 2; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		EXPECT_EQ(i, wc[i].wr_id);
	}
	EXPECT_EQ(0, memcmp(self->buf, self->buf + LEN, (DEFERRED + 2) * 512));
	/*
	 * Two rings for the first two posts, one for the poll (none if the
	 * posts came while the kthread was in the file: they need none).
	 */
	db0 = stat(self, "doorbells") - db0;
	EXPECT_LE(2, db0);
	EXPECT_GE(3, db0);
	ring_unmap(&ra);
}

/*
 * A deferred post whose poll never comes is not lost: the engine looks
 * at the hint bits every SV_DB_DEFER_US while the page says SV_DB_DEFER.
 * No library call after the post, and the data lands.
 */
TEST_F(eng, a_deferred_post_runs_without_its_poll)
{
	struct ibv_wc wc[3];
	struct ring ra;
	long long db0;
	int i, n;

	ASSERT_EQ(0, ring_map(self->a, &ra));
	ASSERT_NE(NULL, ra.db);
	db0 = stat(self, "doorbells");
	ASSERT_LE(0, db0);
	ASSERT_EQ(0, write_at(self, self->a, 0, 512, 0));
	ASSERT_EQ(0, write_at(self, self->a, 512, 512, 1));
	ASSERT_TRUE(defer_set(&ra));
	ASSERT_EQ(0, write_at(self, self->a, 4096, 8192, 2));
	for (i = 0; i < 2000; i++) {
		if (!memcmp(self->buf + 4096, self->buf + LEN + 4096, 8192))
			break;
		usleep(1000);
	}
	EXPECT_GT(2000, i);
	EXPECT_EQ(0, memcmp(self->buf + 4096, self->buf + LEN + 4096, 8192));
	/* The first two posts' rings alone: the third made none. */
	EXPECT_EQ(db0 + 2, stat(self, "doorbells"));
	for (n = 0; n < 3; n += i) {
		i = poll1(self->cq, &wc[n]);
		ASSERT_EQ(1, i);
		EXPECT_EQ(IBV_WC_SUCCESS, wc[n].status);
		EXPECT_EQ(n, wc[n].wr_id);
	}
	ring_unmap(&ra);
}

/*
 * Thousands of connected QPs that nobody posts to cost the engine
 * nothing: each write of a ping-pong on one QP runs a handful of QPs
 * (engine_qp_runs), not every QP of the file. Then one write on each of
 * the last 64 pairs at once (slots past the hint summary's first word):
 * every one completes, once, its data in place.
 */
#define IDLE_QPS	4200
#define LAST		64

TEST_F_TIMEOUT(eng, idle_qps_are_not_run, 120)
{
	struct ibv_qp **q = mkqps(self, IDLE_QPS, true);
	bool seen[LAST] = {};
	long long runs0, runs;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	int i, k;

	ASSERT_NE(NULL, q);
	/* The modifies put them on the ready list: a pass takes them off. */
	usleep(200000);
	runs0 = stat(self, "engine_qp_runs");
	ASSERT_LE(0, runs0);
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, write_at(self, self->a, 0, 512, i));
		ASSERT_EQ(1, poll1(self->cq, &wc)) TH_LOG("WR %d", i);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(i, wc.wr_id);
		ASSERT_EQ(0, memcmp(self->buf, self->buf + LEN, 512));
	}
	runs = stat(self, "engine_qp_runs") - runs0;
	/* Before hints: every pass ran all 4,202 QPs. */
	EXPECT_GT(50 * 8, runs) TH_LOG("%lld QP runs for 50 writes", runs);
	for (k = 0; k < LAST; k++) {
		qp = q[IDLE_QPS - 2 * LAST + 2 * k];
		ASSERT_EQ(0, write_at(self, qp, k * 1024, 1024, k));
	}
	for (i = 0; i < LAST; i++) {
		ASSERT_EQ(1, poll1(self->cq, &wc)) TH_LOG("%d done", i);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_GT(LAST, wc.wr_id);
		ASSERT_FALSE(seen[wc.wr_id]);
		seen[wc.wr_id] = true;
	}
	EXPECT_EQ(0, memcmp(self->buf, self->buf + LEN, LAST * 1024));
	EXPECT_EQ(0, ibv_poll_cq(self->cq, 1, &wc));
	rmqps(q, IDLE_QPS);
}

/*
 * A file's QPs past its SV_DB_SLOTS hint slots have none: the engine
 * runs them in every pass, and they work as the others.
 */
TEST_F_TIMEOUT(eng, qps_past_the_hint_slots_work, 180)
{
	/* a and b hold two slots: the last two of these have none. */
	struct ibv_qp **q = mkqps(self, SV_DB_SLOTS, false);
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;
	int i;

	ASSERT_NE(NULL, q);
	x = q[SV_DB_SLOTS - 2];
	y = q[SV_DB_SLOTS - 1];
	ASSERT_EQ(0, qp_init(x, access));
	ASSERT_EQ(0, qp_init(y, access));
	ASSERT_EQ(0, qp_rtr_rts(x, y->qp_num, &self->gid, 7, 1, 7));
	ASSERT_EQ(0, qp_rtr_rts(y, x->qp_num, &self->gid, 7, 1, 7));
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, write_at(self, i % 2 ? y : x, i * 100, 100, i));
		ASSERT_EQ(1, poll1(self->cq, &wc)) TH_LOG("WR %d", i);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(i, wc.wr_id);
	}
	EXPECT_EQ(0, memcmp(self->buf, self->buf + LEN, 2000));
	rmqps(q, SV_DB_SLOTS);
}

TEST_HARNESS_MAIN
