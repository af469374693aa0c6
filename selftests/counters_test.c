// SPDX-License-Identifier: GPL-2.0
/*
 * Flow counters (Documentation/steering.rst, "Flow counters"):
 * ibv_create_counters, ibv_attach_counters_point_flow, flows with an
 * IBV_FLOW_SPEC_ACTION_COUNT spec, ibv_read_counters. As steer_test: a
 * device bound to one end of a veth pair whose other end is in a network
 * namespace of the test's own (svct_peer); frames come from there through
 * an AF_PACKET socket, so their lengths are known to the byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <linux/if_packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <grp.h>
#include <unistd.h>
#include <infiniband/verbs.h>

/*
 * sv_steer_test.h's veth fixture, without IPv4 addresses and with IPv6 on
 * both ends; the test checks that no counters object is left before it.
 */
#define SV_VETH_FIXTURE	cnt
#define NS	"svct_peer"
#define NEAR	"svct0"
#define FAR	"svct1"
#define DEV	"svct"
#define SV_VETH_IPV6
#define SV_VETH_OWN_SETUP
#define SV_VETH_MEMBERS	long base;	/* counters objects before the test */

#include "sv_steer_test.h"

#define ETYPE2	0x88b6		/* ETYPE's neighbour */
#define NOBODY	65534

/* ---- the verbs side ---- */

/*
 * Wait for @n receives within @ms (reposting them); the sum of their
 * byte_len in *bytes. Returns how many came.
 */
static int rx_wait(struct rawqp *r, int n, uint64_t *bytes, int ms)
{
	struct ibv_wc wc;
	int got = 0, waited = 0;

	*bytes = 0;
	while (got < n && waited < ms) {
		if (ibv_poll_cq(r->cq, 1, &wc) != 1) {
			usleep(1000);
			waited++;
			continue;
		}
		if (wc.status == IBV_WC_SUCCESS)
			*bytes += wc.byte_len;
		got++;
		post_rq(r, wc.wr_id);
	}
	return got;
}

/* A rule for frames of @etype to @dst. */
static void fa_rule(struct spec_attr *a, const uint8_t *dst, uint16_t etype,
		    int prio, int flags)
{
	fa_init(a, IBV_FLOW_ATTR_NORMAL, prio, flags);
	fa_eth(a, dst, etype);
}

static struct ibv_flow *rule(struct ibv_qp *qp, const uint8_t *dst,
			     uint16_t etype, int prio, int flags,
			     struct ibv_counters *c, bool drop)
{
	struct spec_attr a;

	fa_rule(&a, dst, etype, prio, flags);
	if (drop)
		fa_drop(&a);
	if (c)
		fa_count(&a, c);
	return ibv_create_flow(qp, &a.attr);
}

/* A counters object with (desc, index) pairs, -1 ending the list. */
static struct ibv_counters *counters_new(struct ibv_context *ctx,
					 const int *pairs)
{
	struct ibv_counters_init_attr ia = {};
	struct ibv_counters *c = ibv_create_counters(ctx, &ia);
	int i;

	for (i = 0; c && pairs[i] >= 0; i += 2) {
		struct ibv_counter_attach_attr a = {
			.counter_desc = pairs[i], .index = pairs[i + 1],
		};

		if (ibv_attach_counters_point_flow(c, &a, NULL)) {
			ibv_destroy_counters(c);
			return NULL;
		}
	}
	return c;
}

static const int PKT_BYTES[] = { IBV_COUNTER_PACKETS, 0,
				 IBV_COUNTER_BYTES, 1, -1 };

FIXTURE_SETUP(cnt)
{
	sv_veth_up(_metadata, self);
	self->base = sv_dev_obj_count(DEV, "counters");
	ASSERT_EQ(0, self->base);
}

FIXTURE_TEARDOWN(cnt)
{
	sv_veth_down(_metadata, self);
}

/* Send one frame of @etype and @payload bytes to the near end; its length. */
static size_t send_frame(FIXTURE_DATA(cnt) *self, uint16_t etype,
			 size_t payload, int seed)
{
	struct frame f;

	eth_frame(&f, self->mac, self->far_mac, etype, seed, payload);
	return far_send(self->pkt, self->far_ifindex, f.b, f.len) ? 0 : f.len;
}

/* N matching frames and M others: exactly N packets and their bytes. */
TEST_F(cnt, counts_exactly_the_hits)
{
	uint64_t v[6], bytes = 0, rxbytes;
	struct ibv_counters *c;
	struct ibv_flow *fl;
	struct rawqp r;
	size_t len;
	int i;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	c = counters_new(self->ctx, PKT_BYTES);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(1, sv_dev_obj_count(DEV, "counters"));
	fl = rule(r.qp, self->mac, ETYPE, 0, 0, c, false);
	ASSERT_NE(NULL, fl);
	/* Bound, nothing yet. */
	memset(v, 0xff, sizeof(v));
	EXPECT_EQ(0, ibv_read_counters(c, v, 2, 0));
	EXPECT_EQ(0, v[0]);
	EXPECT_EQ(0, v[1]);
	for (i = 0; i < 7; i++)
		ASSERT_NE(0, send_frame(self, ETYPE2, 60 + i, i));
	for (i = 0; i < 10; i++) {
		len = send_frame(self, ETYPE, 46 + i * 37, 100 + i);
		ASSERT_NE(0, len);
		bytes += len;
	}
	ASSERT_EQ(10, rx_wait(&r, 10, &rxbytes, 3000));
	EXPECT_EQ(bytes, rxbytes);
	/* Nothing late arrives: the others never count. */
	usleep(200 * 1000);
	EXPECT_EQ(0, rx_wait(&r, 1, &rxbytes, 50));
	EXPECT_EQ(0, ibv_read_counters(c, v, 2, 0));
	EXPECT_EQ(10, v[0]);
	EXPECT_EQ(bytes, v[1]);
	/* PREFER_CACHED: the same (exact software counts). */
	memset(v, 0xff, sizeof(v));
	EXPECT_EQ(0, ibv_read_counters(c, v, 2,
				       IBV_READ_COUNTERS_ATTR_PREFER_CACHED));
	EXPECT_EQ(10, v[0]);
	EXPECT_EQ(bytes, v[1]);
	/* More room than descriptions: the rest is zero; less: EINVAL. */
	memset(v, 0xff, sizeof(v));
	EXPECT_EQ(0, ibv_read_counters(c, v, 5, 0));
	EXPECT_EQ(10, v[0]);
	EXPECT_EQ(bytes, v[1]);
	EXPECT_EQ(0, v[2]);
	EXPECT_EQ(0, v[4]);
	EXPECT_EQ(UINT64_MAX, v[5]);
	EXPECT_EQ(EINVAL, ibv_read_counters(c, v, 1, 0));
	EXPECT_EQ(EINVAL, ibv_read_counters(c, v, 2, 2));
	/* Destroy order: the flow first (EBUSY before), then the object. */
	EXPECT_EQ(EBUSY, ibv_destroy_counters(c));
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	/* Bound to nothing: not readable (uverbs), attachable again. */
	EXPECT_EQ(EINVAL, ibv_read_counters(c, v, 2, 0));
	EXPECT_EQ(0, ibv_destroy_counters(c));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "counters"));
	rawqp_close(&r);
}

/* Two flows, one object; descriptions that share an index add up. */
TEST_F(cnt, shared_and_aggregated)
{
	static const int pairs[] = { IBV_COUNTER_BYTES, 0,
				     IBV_COUNTER_PACKETS, 0,
				     IBV_COUNTER_PACKETS, 3, -1 };
	uint64_t v[4], bytes = 0, rxbytes;
	struct ibv_flow *fa, *fb;
	struct ibv_counters *c;
	struct rawqp r;
	size_t len;
	int i;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	c = counters_new(self->ctx, pairs);
	ASSERT_NE(NULL, c);
	fa = rule(r.qp, self->mac, ETYPE, 0, 0, c, false);
	fb = rule(r.qp, self->mac, ETYPE2, 2, 0, c, false);
	ASSERT_NE(NULL, fa);
	ASSERT_NE(NULL, fb);
	for (i = 0; i < 7; i++) {
		len = send_frame(self, i % 2 ? ETYPE2 : ETYPE, 100 + i, i);
		ASSERT_NE(0, len);
		bytes += len;
	}
	ASSERT_EQ(7, rx_wait(&r, 7, &rxbytes, 3000));
	EXPECT_EQ(bytes, rxbytes);
	EXPECT_EQ(EINVAL, ibv_read_counters(c, v, 3, 0));
	EXPECT_EQ(0, ibv_read_counters(c, v, 4, 0));
	EXPECT_EQ(bytes + 7, v[0]);
	EXPECT_EQ(0, v[1]);
	EXPECT_EQ(0, v[2]);
	EXPECT_EQ(7, v[3]);
	/* One flow gone: still bound, still counting through the other. */
	EXPECT_EQ(0, ibv_destroy_flow(fa));
	EXPECT_EQ(EBUSY, ibv_destroy_counters(c));
	len = send_frame(self, ETYPE2, 80, 9);
	ASSERT_EQ(1, rx_wait(&r, 1, &rxbytes, 3000));
	EXPECT_EQ(0, ibv_read_counters(c, v, 4, 0));
	EXPECT_EQ(bytes + len + 8, v[0]);
	EXPECT_EQ(8, v[3]);
	EXPECT_EQ(0, ibv_destroy_flow(fb));
	EXPECT_EQ(0, ibv_destroy_counters(c));
	rawqp_close(&r);
}

/*
 * What hits a rule counts: a drop rule counts what it drops, a DONT_TRAP
 * rule its copies, a lower rule the trapping one hides nothing.
 */
TEST_F(cnt, drop_and_dont_trap)
{
	struct ibv_counters *cd, *ct, *cl;
	struct ibv_flow *fd, *ft, *flo;
	uint64_t v[2], bytes = 0, rxbytes;
	struct rawqp r;
	size_t len;
	int i;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	cd = counters_new(self->ctx, PKT_BYTES);
	ct = counters_new(self->ctx, PKT_BYTES);
	cl = counters_new(self->ctx, PKT_BYTES);
	ASSERT_TRUE(cd && ct && cl);
	EXPECT_EQ(3, sv_dev_obj_count(DEV, "counters"));
	ft = rule(r.qp, self->mac, ETYPE, 0, IBV_FLOW_ATTR_FLAGS_DONT_TRAP,
		  ct, false);
	fd = rule(r.qp, self->mac, ETYPE, 1, 0, cd, true);
	flo = rule(r.qp, self->mac, ETYPE, 2, 0, cl, false);
	ASSERT_TRUE(fd && ft && flo);
	for (i = 0; i < 6; i++) {
		len = send_frame(self, ETYPE, 200 + i * 3, i);
		ASSERT_NE(0, len);
		bytes += len;
	}
	/* The DONT_TRAP copies arrive; the drop takes the frames. */
	ASSERT_EQ(6, rx_wait(&r, 6, &rxbytes, 3000));
	usleep(200 * 1000);
	EXPECT_EQ(0, rx_wait(&r, 1, &rxbytes, 50));
	EXPECT_EQ(0, ibv_read_counters(ct, v, 2, 0));
	EXPECT_EQ(6, v[0]);
	EXPECT_EQ(bytes, v[1]);
	EXPECT_EQ(0, ibv_read_counters(cd, v, 2, 0));
	EXPECT_EQ(6, v[0]);
	EXPECT_EQ(bytes, v[1]);
	EXPECT_EQ(0, ibv_read_counters(cl, v, 2, 0));
	EXPECT_EQ(0, v[0]);
	EXPECT_EQ(0, v[1]);
	/*
	 * Without the drop, the lower rule is hit. Both rules give the frame
	 * to one QP, which gets one copy; both rules count it.
	 */
	EXPECT_EQ(0, ibv_destroy_flow(fd));
	len = send_frame(self, ETYPE, 64, 1);
	ASSERT_EQ(1, rx_wait(&r, 1, &rxbytes, 3000));
	usleep(200 * 1000);
	EXPECT_EQ(0, rx_wait(&r, 1, &rxbytes, 50));
	EXPECT_EQ(0, ibv_read_counters(cl, v, 2, 0));
	EXPECT_EQ(1, v[0]);
	EXPECT_EQ(len, v[1]);
	EXPECT_EQ(0, ibv_read_counters(ct, v, 2, 0));
	EXPECT_EQ(7, v[0]);
	EXPECT_EQ(bytes + len, v[1]);
	EXPECT_EQ(0, ibv_destroy_flow(ft));
	EXPECT_EQ(0, ibv_destroy_flow(flo));
	EXPECT_EQ(0, ibv_destroy_counters(cd));
	EXPECT_EQ(0, ibv_destroy_counters(ct));
	EXPECT_EQ(0, ibv_destroy_counters(cl));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "counters"));
	rawqp_close(&r);
}

/* The errors of each call, with their exact errno. */
TEST_F(cnt, errors)
{
	struct ibv_counters_init_attr ia = { .comp_mask = 1 };
	struct ibv_counter_attach_attr at = {};
	struct ibv_counters *c, *empty, *other_c;
	struct ibv_context *other;
	struct ibv_flow *fl, *plain;
	struct spec_attr a;
	uint64_t v[2];
	struct rawqp r;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_counters(self->ctx, &ia));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ia.comp_mask = 0;
	c = ibv_create_counters(self->ctx, &ia);
	empty = ibv_create_counters(self->ctx, &ia);
	ASSERT_TRUE(c && empty);
	/* attach: a flow (dynamic mode), comp_mask, desc, index. */
	plain = rule(r.qp, self->mac, ETYPE2, 0, 0, NULL, false);
	ASSERT_NE(NULL, plain);
	EXPECT_EQ(ENOTSUP, ibv_attach_counters_point_flow(c, &at, plain));
	at.comp_mask = 1;
	EXPECT_EQ(EOPNOTSUPP, ibv_attach_counters_point_flow(c, &at, NULL));
	at.comp_mask = 0;
	at.counter_desc = 2;
	EXPECT_EQ(ENOTSUP, ibv_attach_counters_point_flow(c, &at, NULL));
	at.counter_desc = IBV_COUNTER_BYTES;
	at.index = 256;
	EXPECT_EQ(EINVAL, ibv_attach_counters_point_flow(c, &at, NULL));
	at.index = 1;
	EXPECT_EQ(0, ibv_attach_counters_point_flow(c, &at, NULL));
	/* read: bound to no flow. */
	EXPECT_EQ(EINVAL, ibv_read_counters(c, v, 2, 0));
	/* create_flow: no description, NULL, two counts, another context. */
	errno = 0;
	EXPECT_EQ(NULL, rule(r.qp, self->mac, ETYPE, 0, 0, empty, false));
	EXPECT_EQ(EINVAL, errno);
	fa_rule(&a, self->mac, ETYPE, 0, 0);
	fa_count(&a, NULL);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_flow(r.qp, &a.attr));
	EXPECT_EQ(EINVAL, errno);
	fa_rule(&a, self->mac, ETYPE, 0, 0);
	fa_count(&a, c);
	fa_count(&a, c);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_flow(r.qp, &a.attr));
	EXPECT_EQ(EINVAL, errno);
	other = sv_open_named(self->list, DEV);
	ASSERT_NE(NULL, other);
	other_c = counters_new(other, PKT_BYTES);
	ASSERT_NE(NULL, other_c);
	errno = 0;
	EXPECT_EQ(NULL, rule(r.qp, self->mac, ETYPE, 0, 0, other_c, false));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ibv_destroy_counters(other_c));
	ibv_close_device(other);
	/* None of those left a flow or a binding behind. */
	EXPECT_EQ(1, sv_dev_obj_count(DEV, "flow"));
	EXPECT_EQ(0, ibv_destroy_counters(empty));
	/* Bound: attach is EBUSY, destroy EBUSY; unbound: both work. */
	fl = rule(r.qp, self->mac, ETYPE, 0, 0, c, false);
	ASSERT_NE(NULL, fl);
	EXPECT_EQ(EBUSY, ibv_attach_counters_point_flow(c, &at, NULL));
	EXPECT_EQ(EBUSY, ibv_destroy_counters(c));
	EXPECT_EQ(EBUSY, ibv_destroy_qp(r.qp));
	EXPECT_EQ(0, ibv_read_counters(c, v, 2, 0));
	EXPECT_EQ(0, v[0]);
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	EXPECT_EQ(0, ibv_attach_counters_point_flow(c, &at, NULL));
	EXPECT_EQ(0, ibv_destroy_counters(c));
	EXPECT_EQ(0, ibv_destroy_flow(plain));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "counters"));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "flow"));
	rawqp_close(&r);
}

/*
 * Without CAP_NET_RAW: counters can be made (they count nothing), a flow
 * cannot (EPERM, as any flow). A process that exits with counters bound
 * to flows leaves no object.
 */
TEST_F(cnt, unprivileged_and_exit)
{
	struct ibv_counters *c;
	struct rawqp r;
	pid_t pid;
	int st;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	c = counters_new(self->ctx, PKT_BYTES);
	ASSERT_NE(NULL, c);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_counters *mine;

		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(2);
		mine = counters_new(self->ctx, PKT_BYTES);
		if (!mine)
			_exit(3);
		errno = 0;
		if (rule(r.qp, self->mac, ETYPE, 0, 0, c, false) ||
		    errno != EPERM)
			_exit(4);
		_exit(ibv_destroy_counters(mine) ? 5 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(1, sv_dev_obj_count(DEV, "counters"));
	EXPECT_EQ(0, ibv_destroy_counters(c));
	rawqp_close(&r);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_context *ctx = sv_open_named(self->list, DEV);
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		struct ibv_counters *cc;

		if (!pd || rawqp_open(ctx, pd, &r, IBV_QPT_RAW_PACKET, 0))
			_exit(2);
		cc = counters_new(ctx, PKT_BYTES);
		if (!cc || !rule(r.qp, self->mac, ETYPE, 0, 0, cc, false) ||
		    !rule(r.qp, self->mac, ETYPE2, 0, 0, cc, false))
			_exit(3);
		_exit(sv_dev_obj_count(DEV, "counters") == 1 && sv_dev_obj_count(DEV, "flow") == 2 ?
		      0 : 4);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "counters"));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "flow"));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "qp"));
}

TEST_HARNESS_MAIN
