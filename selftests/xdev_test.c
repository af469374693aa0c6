// SPDX-License-Identifier: GPL-2.0
/*
 * Traffic across softverbs devices: softverbs0 and a second device bound to
 * a dummy netdev (svctl link add). A QP's messages go to the device whose
 * GID table holds the destination GID; a GID no device has reaches nobody,
 * and neither does one only a device of another network namespace has.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <infiniband/verbs.h>

#include "sv_harness.h"
#include "sv_dp_test.h"
#include "softverbs-abi.h"

#define LEN	8192
#define NETDEV	"svxd0"
#define DEV	"svx1"

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
	union ibv_gid gid;
};

static int side_open(struct side *s, struct ibv_device **list, const char *name)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	s->ctx = sv_open_named(list, name);
	if (!s->ctx || ibv_query_gid(s->ctx, 1, 1, &s->gid))
		return -1;
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
	s->buf = aligned_alloc(4096, LEN);
	if (!s->pd || !s->cq || !s->buf)
		return -1;
	s->mr = ibv_reg_mr(s->pd, s->buf, LEN, access);
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &ia);
	if (!s->mr || !s->qp)
		return -1;
	return qp_init(s->qp, access);
}

static void side_close(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->ctx)
		ibv_close_device(s->ctx);
	free(s->buf);
}

FIXTURE(xdev) {
	struct ibv_device **list;
	struct side a, b;
	char svctl[PATH_MAX + 16];
};

FIXTURE_SETUP(xdev)
{
	char cmd[PATH_MAX + 128];

	ASSERT_EQ(0, sv_svctl_path(self->svctl, sizeof(self->svctl)));
	ASSERT_EQ(0, system("ip link add " NETDEV " type dummy && "
			    "ip link set " NETDEV " up"));
	snprintf(cmd, sizeof(cmd), "%s link add " DEV " netdev " NETDEV,
		 self->svctl);
	ASSERT_EQ(0, system(cmd));
	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	ASSERT_EQ(0, side_open(&self->a, self->list, "softverbs0"));
	ASSERT_EQ(0, side_open(&self->b, self->list, DEV));
	ASSERT_NE(0, memcmp(&self->a.gid, &self->b.gid, sizeof(self->a.gid)));
}

FIXTURE_TEARDOWN(xdev)
{
	char cmd[PATH_MAX + 128];

	side_close(&self->a);
	side_close(&self->b);
	if (self->list)
		ibv_free_device_list(self->list);
	snprintf(cmd, sizeof(cmd), "%s link del " DEV, self->svctl);
	if (system(cmd) || system("ip link del " NETDEV))
		TH_LOG("cleanup failed");
}

TEST_F(xdev, rc_send_and_write_across_devices)
{
	static const char * const names[] = { "rx_packets", "rx_bytes",
		"tx_packets", "tx_bytes", "completions" };
	const long long delta[] = { 1, LEN, 1, LEN, 2 };
	long long before[5];
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 5; i++) {
		before[i] = sv_stat_of(self->svctl, DEV, names[i]);
		ASSERT_LE(0, before[i]);
	}
	ASSERT_EQ(0, qp_rtr_rts(self->a.qp, self->b.qp->qp_num, &self->b.gid,
				7, 1, 7));
	ASSERT_EQ(0, qp_rtr_rts(self->b.qp, self->a.qp->qp_num, &self->a.gid,
				7, 1, 7));
	sv_fill(self->a.buf, LEN, 1);
	memset(self->b.buf, 0, LEN);

	/* SEND from softverbs0 lands in svx1's receive buffer. */
	ASSERT_EQ(0, post_recv(self->b.qp, self->b.mr, self->b.buf, LEN, 2));
	ASSERT_EQ(0, post_send(self->a.qp, IBV_WR_SEND, self->a.mr->lkey,
			       self->a.buf, LEN, 1, IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, poll1(self->a.cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, poll1(self->b.cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(LEN, wc.byte_len);
	EXPECT_EQ(self->a.qp->qp_num, wc.src_qp);
	EXPECT_EQ(0, memcmp(self->a.buf, self->b.buf, LEN));

	/* RDMA WRITE back from svx1 into softverbs0's MR. */
	sv_fill(self->b.buf, LEN, 5);
	ASSERT_EQ(0, post_send(self->b.qp, IBV_WR_RDMA_WRITE, self->b.mr->lkey,
			       self->b.buf, LEN, 1, IBV_SEND_SIGNALED,
			       (uintptr_t)self->a.buf, self->a.mr->rkey));
	ASSERT_EQ(1, poll1(self->b.cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(self->a.buf, self->b.buf, LEN));

	/* svx1's counters moved with exactly this traffic. */
	for (i = 0; i < 5; i++) {
		long long now = sv_stat_of(self->svctl, DEV, names[i]);

		if (now != before[i] + delta[i])
			ksft_print_msg("%s: %lld, want %lld\n", names[i], now,
				       before[i] + delta[i]);
		EXPECT_EQ(before[i] + delta[i], now);
	}
}

TEST_F(xdev, unknown_gid_reaches_nobody)
{
	union ibv_gid nowhere = { .raw = { 0xfe, 0x80, [15] = 0x42 } };
	struct ibv_wc wc;

	/* The right QPN on the other device, but a GID nobody has. */
	ASSERT_EQ(0, qp_rtr_rts(self->a.qp, self->b.qp->qp_num, &nowhere,
				0, 1, 1));
	ASSERT_EQ(0, qp_rtr_rts(self->b.qp, self->a.qp->qp_num, &self->a.gid,
				0, 1, 1));
	ASSERT_EQ(0, post_recv(self->b.qp, self->b.mr, self->b.buf, LEN, 2));
	ASSERT_EQ(0, post_send(self->a.qp, IBV_WR_SEND, self->a.mr->lkey,
			       self->a.buf, LEN, 1, IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, poll1(self->a.cq, &wc));
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, wc.status);
	usleep(10000);
	EXPECT_EQ(0, ibv_poll_cq(self->b.cq, 1, &wc));
}

/*
 * link del: the device's QPs go to ERR and their engines hear of it at
 * once: posted receives flush now, not when a sleeping engine next wakes
 * on its own (up to 10 s later).
 */
TEST_F(xdev, link_del_flushes_at_once)
{
	char cmd[PATH_MAX + 128];
	struct timespec t0, t1;
	struct ibv_wc wc;
	int i;

	ASSERT_EQ(0, qp_rtr_rts(self->b.qp, self->a.qp->qp_num, &self->a.gid,
				7, 1, 7));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, post_recv(self->b.qp, self->b.mr, self->b.buf,
				       LEN, 40 + i));
	usleep(200000);		/* the engine is asleep by now */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(cmd, sizeof(cmd), "%s link del " DEV, self->svctl);
	ASSERT_EQ(0, system(cmd));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(1, poll1(self->b.cq, &wc));
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
		EXPECT_EQ(40 + i, wc.wr_id);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/*
	 * Well before the engine's 10 s nap would end; the debug kernel
	 * (SV_SLOW) needs longer for the svctl process alone.
	 */
	EXPECT_GT(sv_slow() > 1 ? 8.0 : 2.0, (t1.tv_sec - t0.tv_sec) +
		       (t1.tv_nsec - t0.tv_nsec) / 1e9);
	/* The teardown's link del finds nothing: put a device back. */
	snprintf(cmd, sizeof(cmd), "%s link add " DEV " netdev " NETDEV,
		 self->svctl);
	ASSERT_EQ(0, system(cmd));
}

/*
 * A device in another network namespace is out of reach, even with the
 * right GID and QPN; so is this namespace from there.
 */
TEST_F(xdev, other_netns_unreachable)
{
	char cmd[PATH_MAX + 256];
	struct ibv_device **list;
	struct side c = { 0 };
	struct ibv_wc wc;
	int i;

	snprintf(cmd, sizeof(cmd),
		 "ip netns add svxns && ip -n svxns link add svxd9 type dummy && "
		 "ip -n svxns link set svxd9 up && "
		 "ip netns exec svxns %s link add svx9 netdev svxd9",
		 self->svctl);
	ASSERT_EQ(0, system(cmd));
	list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, list);
	/*
	 * Not listed here, as in the RDMA core's exclusive mode (nor usable:
	 * the kernel refuses to open it from here)...
	 */
	for (i = 0; list[i]; i++)
		EXPECT_STRNE("svx9", ibv_get_device_name(list[i]));
	ibv_free_device_list(list);
	errno = 0;
	snprintf(cmd, sizeof(cmd), "/dev/infiniband/svx9");
	EXPECT_EQ(-1, open(cmd, O_RDWR));
	EXPECT_EQ(EPERM, errno);
	/* ... but there, where this namespace's are not; its QPs still
	 * cannot reach us.
	 */
	{
		int here = open("/proc/self/ns/net", O_RDONLY);
		int there = open("/run/netns/svxns", O_RDONLY);

		ASSERT_LE(0, here);
		ASSERT_LE(0, there);
		ASSERT_EQ(0, setns(there, CLONE_NEWNET));
		list = ibv_get_device_list(NULL);
		ASSERT_NE(NULL, list);
		for (i = 0; list[i]; i++)
			EXPECT_STRNE("softverbs0",
				     ibv_get_device_name(list[i]));
		EXPECT_EQ(0, side_open(&c, list, "svx9"));
		ibv_free_device_list(list);
		ASSERT_EQ(0, setns(here, CLONE_NEWNET));
		close(here);
		close(there);
	}
	if (c.qp) {
		ASSERT_EQ(0, qp_rtr_rts(self->a.qp, c.qp->qp_num, &c.gid,
					0, 1, 1));
		ASSERT_EQ(0, qp_rtr_rts(c.qp, self->a.qp->qp_num,
					&self->a.gid, 0, 1, 1));
		ASSERT_EQ(0, post_recv(c.qp, c.mr, c.buf, LEN, 2));
		ASSERT_EQ(0, post_recv(self->a.qp, self->a.mr, self->a.buf,
				       LEN, 2));
		ASSERT_EQ(0, post_send(self->a.qp, IBV_WR_SEND,
				       self->a.mr->lkey, self->a.buf, LEN, 1,
				       IBV_SEND_SIGNALED, 0, 0));
		ASSERT_EQ(1, poll1(self->a.cq, &wc));
		EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, wc.status);
		ASSERT_EQ(0, post_send(c.qp, IBV_WR_SEND, c.mr->lkey, c.buf,
				       LEN, 1, IBV_SEND_SIGNALED, 0, 0));
		ASSERT_EQ(1, poll1(c.cq, &wc));
		EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, wc.status);
		usleep(10000);
		/* nothing arrived: the receives are only flushed (ERR) */
		while (ibv_poll_cq(self->a.cq, 1, &wc) == 1)
			EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
		while (ibv_poll_cq(c.cq, 1, &wc) == 1)
			EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	}
	side_close(&c);
	ASSERT_EQ(0, system("ip netns del svxns"));
	for (i = 0; i < 100 && !access(SV_DEV_DIR "/svx9", F_OK); i++)
		usleep(100000);
	EXPECT_NE(0, access(SV_DEV_DIR "/svx9", F_OK));
}

TEST_HARNESS_MAIN
