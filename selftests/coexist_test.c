// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs beside the machine's other RDMA devices (user/lib/system.c):
 * through our libibverbs, a program sees softverbs0 and an rdma_rxe
 * device (on a veth, served by rdma-core's libibverbs loaded in a
 * namespace of its own), and uses either, and both at once: RC traffic
 * with the data checked, completion channels, async events acked, every
 * object destroyed. SOFTVERBS_SYSTEM_LIBIBVERBS=none leaves softverbs
 * devices only; Debian's unmodified ibv_rc_pingpong runs on the rxe
 * device through our library. Skipped where rdma_rxe cannot be loaded.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "sv_harness.h"
#include "sv_dp_test.h"
#include "sv_test.h"
#include "sv_rxe_test.h"

#define NET0	"svcx0"
#define NET1	"svcx1"
#define RXE	"svcxrxe0"
#define LEN	4096

static bool gid_v4(const union ibv_gid *g)
{
	static const uint8_t pre[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, pre, sizeof(pre));
}

/*
 * The GID to connect with: rxe's IPv4 one (its table fills from the
 * netdev's addresses a moment after it is made: wait; a link-local one
 * would need neighbour discovery), else the first that is set.
 */
static int pick_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	static const union ibv_gid zero;
	bool v4 = !strcmp(ibv_get_device_name(ctx->device), RXE);
	int i, tries;

	for (tries = 0; tries < 100 * sv_slow(); tries++) {
		for (i = 0; i < 16; i++)
			if (!ibv_query_gid(ctx, 1, i, gid) &&
			    memcmp(gid, &zero, sizeof(zero)) &&
			    (!v4 || gid_v4(gid)))
				return i;
		usleep(50000);
	}
	errno = ENODATA;
	return -1;
}

/* Everything one device needs for an RC write and send between two QPs. */
struct cx {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp[2];
	char *buf;
};

static int cx_open(struct cx *c, struct ibv_device *dev)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	union ibv_gid gid;
	int gidx, i;

	memset(c, 0, sizeof(*c));
	c->ctx = ibv_open_device(dev);
	if (!c->ctx)
		return -1;
	c->ch = ibv_create_comp_channel(c->ctx);
	c->pd = ibv_alloc_pd(c->ctx);
	c->buf = calloc(1, 2 * LEN);
	if (!c->ch || !c->pd || !c->buf)
		return -1;
	c->cq = ibv_create_cq(c->ctx, 16, c, c->ch, 0);
	c->mr = ibv_reg_mr(c->pd, c->buf, 2 * LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	if (!c->cq || !c->mr)
		return -1;
	ia.send_cq = ia.recv_cq = c->cq;
	for (i = 0; i < 2; i++) {
		c->qp[i] = ibv_create_qp(c->pd, &ia);
		if (!c->qp[i])
			return -1;
	}
	gidx = pick_gid(c->ctx, &gid);
	if (gidx < 0)
		return -1;
	for (i = 0; i < 2; i++) {
		errno = rc_connect_gid(c->qp[i], c->qp[!i]->qp_num, &gid,
				       gidx, IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_LOCAL_WRITE, 0, 0);
		if (errno) {
			fprintf(stderr, "# connect QP %u, GID index %d: %s\n",
				c->qp[i]->qp_num, gidx, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Also after a cx_open() that failed half way. */
static void cx_close(struct __test_metadata *_metadata, struct cx *c)
{
	int i;

	for (i = 0; i < 2; i++)
		if (c->qp[i])
			EXPECT_EQ(0, ibv_destroy_qp(c->qp[i]));
	if (c->mr)
		EXPECT_EQ(0, ibv_dereg_mr(c->mr));
	if (c->cq)
		EXPECT_EQ(0, ibv_destroy_cq(c->cq));
	if (c->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(c->pd));
	if (c->ch)
		EXPECT_EQ(0, ibv_destroy_comp_channel(c->ch));
	if (c->ctx)
		EXPECT_EQ(0, ibv_close_device(c->ctx));
	free(c->buf);
}

#define CX_OPEN(c, dev)							\
	do {								\
		int _r = cx_open(c, dev);				\
									\
		if (_r)							\
			cx_close(_metadata, c);				\
		ASSERT_EQ(0, _r) TH_LOG("%s: %s",			\
					ibv_get_device_name(dev),	\
					strerror(errno));		\
	} while (0)

/* One completion, through the channel (armed, waited for, acked). */
static int cx_wait(struct cx *c, struct ibv_wc *wc)
{
	struct ibv_cq *cq;
	void *cq_ctx;
	int n, i;

	for (i = 0; i < 100; i++) {
		n = ibv_poll_cq(c->cq, 1, wc);
		if (n)
			return n;
		if (ibv_req_notify_cq(c->cq, 0))
			return -1;
		n = ibv_poll_cq(c->cq, 1, wc);
		if (n)
			return n;
		if (ibv_get_cq_event(c->ch, &cq, &cq_ctx) || cq != c->cq ||
		    cq_ctx != c)
			return -1;
		ibv_ack_cq_events(cq, 1);
	}
	return 0;
}

/* QP 0 writes the buffer's first half into its second half, then sends. */
static void cx_traffic(struct __test_metadata *_metadata, struct cx *c,
		       unsigned int seed)
{
	struct ibv_sge s = { (uintptr_t)c->buf, LEN, c->mr->lkey };
	struct ibv_sge r = { (uintptr_t)c->buf + LEN, LEN, c->mr->lkey };
	struct ibv_recv_wr rw = { .wr_id = 2, .sg_list = &r, .num_sge = 1 };
	struct ibv_send_wr w = {
		.wr_id = 1, .sg_list = &s, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)c->buf + LEN, c->mr->rkey },
	}, *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc;
	int i;

	srand(seed);
	for (i = 0; i < LEN; i++)
		c->buf[i] = rand();
	ASSERT_EQ(0, ibv_post_send(c->qp[0], &w, &bad));
	ASSERT_EQ(1, cx_wait(c, &wc));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, wc.wr_id);
	ASSERT_EQ(0, memcmp(c->buf, c->buf + LEN, LEN));
	/* A send of the same bytes into QP 1's receive buffer, zeroed. */
	memset(c->buf + LEN, 0, LEN);
	ASSERT_EQ(0, ibv_post_recv(c->qp[1], &rw, &rbad));
	w.opcode = IBV_WR_SEND;
	w.wr_id = 3;
	ASSERT_EQ(0, ibv_post_send(c->qp[0], &w, &bad));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, cx_wait(c, &wc));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s",
			ibv_wc_status_str(wc.status));
		ASSERT_TRUE(wc.wr_id == 2 || wc.wr_id == 3);
		if (wc.wr_id == 2)
			ASSERT_EQ(LEN, wc.byte_len);
	}
	ASSERT_EQ(0, memcmp(c->buf, c->buf + LEN, LEN));
}

FIXTURE(cx) {
	struct ibv_device **list;
	int n;
};

FIXTURE_SETUP(cx)
{
	if (!sv_rxe_up(NET0, NET1, RXE, "192.0.2.77"))
		SKIP(return, "rdma_rxe cannot be set up here");
	self->list = ibv_get_device_list(&self->n);
	ASSERT_NE(NULL, self->list);
}

FIXTURE_TEARDOWN(cx)
{
	if (self->list)
		ibv_free_device_list(self->list);
	sv_rxe_down(NET0, RXE);
}

/* One list: softverbs devices first, then the system's, rxe among them. */
TEST_F(cx, one_list)
{
	struct ibv_device *sv = sv_find_dev(self->list, "softverbs0");
	struct ibv_device *rxe = sv_find_dev(self->list, RXE);
	int i, ours = 0;

	ASSERT_NE(NULL, sv);
	ASSERT_NE(NULL, rxe);
	for (i = 0; i < self->n; i++) {
		ASSERT_NE(NULL, self->list[i]);
		if (!strncmp(ibv_get_device_name(self->list[i]), "softverbs", 9) ||
		    !strncmp(ibv_get_device_name(self->list[i]), "sv", 2)) {
			ASSERT_EQ(i, ours) TH_LOG("softverbs devices come first");
			ours++;
		}
	}
	ASSERT_EQ(NULL, self->list[self->n]);
	/* The system library answers for its device. */
	EXPECT_NE(0, ibv_get_device_guid(rxe));
	EXPECT_LE(0, ibv_get_device_index(rxe));
	EXPECT_NE(0, ibv_get_device_guid(sv));
}

TEST_F(cx, rc_on_each)
{
	const char *names[] = { "softverbs0", RXE };
	struct ibv_device_attr attr;
	struct ibv_port_attr pa;
	struct cx c;
	int i;

	for (i = 0; i < 2; i++) {
		struct ibv_device *d = sv_find_dev(self->list, names[i]);

		ASSERT_NE(NULL, d);
		CX_OPEN(&c, d);
		ASSERT_EQ(0, ibv_query_device(c.ctx, &attr));
		ASSERT_EQ(0, ibv_query_port(c.ctx, 1, &pa));
		EXPECT_EQ(IBV_PORT_ACTIVE, pa.state);
		cx_traffic(_metadata, &c, 7 + i);
		cx_close(_metadata, &c);
	}
}

/* Both devices open together, their objects made and freed interleaved. */
TEST_F(cx, both_at_once)
{
	struct cx a, b;

	CX_OPEN(&a, sv_find_dev(self->list, "softverbs0"));
	CX_OPEN(&b, sv_find_dev(self->list, RXE));
	cx_traffic(_metadata, &b, 11);
	cx_traffic(_metadata, &a, 12);
	cx_traffic(_metadata, &b, 13);
	cx_close(_metadata, &a);
	cx_traffic(_metadata, &b, 14);
	cx_close(_metadata, &b);
}

/* An async event of the system's device is read and acked through us. */
TEST_F(cx, async_event_of_system_device)
{
	struct ibv_async_event ev;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct cx c;
	int fl;

	CX_OPEN(&c, sv_find_dev(self->list, RXE));
	/* A QP moved to ERR raises no event; the fd is polled, not read. */
	ASSERT_EQ(0, ibv_modify_qp(c.qp[0], &a, IBV_QP_STATE));
	fl = fcntl(c.ctx->async_fd, F_GETFL);
	ASSERT_EQ(0, fcntl(c.ctx->async_fd, F_SETFL, fl | O_NONBLOCK));
	if (!ibv_get_async_event(c.ctx, &ev))
		ibv_ack_async_event(&ev);
	else
		ASSERT_EQ(EAGAIN, errno);
	cx_close(_metadata, &c);
}

/*
 * SOFTVERBS_SYSTEM_LIBIBVERBS=none: softverbs devices only (read when a
 * process first lists devices: Debian's ibv_devices, started afresh).
 */
TEST_F(cx, system_library_off)
{
	const char *lib = sv_compat_dir();
	char cmd[2 * PATH_MAX];

	ASSERT_NE(NULL, lib);
	snprintf(cmd, sizeof(cmd), "LD_LIBRARY_PATH=%s ibv_devices | "
		 "grep -qw " RXE, lib);
	ASSERT_EQ(0, system(cmd)) TH_LOG("ibv_devices lists " RXE);
	snprintf(cmd, sizeof(cmd), "LD_LIBRARY_PATH=%s "
		 "SOFTVERBS_SYSTEM_LIBIBVERBS=none ibv_devices > /tmp/cx.$$ && "
		 "grep -qw softverbs0 /tmp/cx.$$ && ! grep -qw " RXE " /tmp/cx.$$; "
		 "r=$?; rm -f /tmp/cx.$$; exit $r", lib);
	ASSERT_EQ(0, system(cmd));
}

/* Debian's ibv_rc_pingpong, unmodified, on rxe through our library. */
TEST_F(cx, debian_rc_pingpong_on_rxe)
{
	const char *lib = sv_compat_dir();
	char cmd[3 * PATH_MAX];

	if (access("/usr/bin/ibv_rc_pingpong", X_OK))
		SKIP(return, "no ibv_rc_pingpong");
	ASSERT_NE(NULL, lib);
	snprintf(cmd, sizeof(cmd),
		 "export LD_LIBRARY_PATH=%s; "
		 "ldd /usr/bin/ibv_rc_pingpong | grep -q 'libibverbs.so.1 => %s' || exit 3; "
		 "timeout %d ibv_rc_pingpong -d " RXE " -g 1 -n 20 >/dev/null 2>&1 & "
		 "for i in $(seq 50); do sleep 0.2; "
		 "timeout %d ibv_rc_pingpong -d " RXE " -g 1 -n 20 127.0.0.1 "
		 ">/dev/null 2>&1 && break; done; r=$?; wait $! || exit 4; exit $r",
		 lib, lib, 60 * sv_slow(), 30 * sv_slow());
	ASSERT_EQ(0, system(cmd));
}

/*
 * Debian's ibv_devinfo -v on rxe through our library shows rxe's GID
 * table, as through the system's: the GIDs and their types (it asks for
 * the type with rdma-core's private ibv_query_gid_type()).
 */
TEST_F(cx, debian_devinfo_gids_of_rxe)
{
	const char *lib = sv_compat_dir();
	union ibv_gid gid;
	struct ibv_context *ctx;
	char cmd[3 * PATH_MAX];

	ASSERT_NE(NULL, lib);
	/* Its IPv4 GID is there once pick_gid() saw it. */
	ctx = ibv_open_device(sv_find_dev(self->list, RXE));
	ASSERT_NE(NULL, ctx);
	ASSERT_LE(0, pick_gid(ctx, &gid));
	ibv_close_device(ctx);
	snprintf(cmd, sizeof(cmd),
		 "LD_LIBRARY_PATH=%s ibv_devinfo -v -d " RXE " | "
		 "grep -q 'GID\\[ *[0-9]*\\]:.*::ffff:.*, RoCE v2'", lib);
	ASSERT_EQ(0, system(cmd));
}

TEST_HARNESS_MAIN
