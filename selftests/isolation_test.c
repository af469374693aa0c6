// SPDX-License-Identifier: GPL-2.0
/*
 * Isolation between processes and users, and the verbs semantics that
 * programs written elsewhere rely on (issue 15): an RC/UC QP takes
 * messages only from its connected peer; controlled Q_Keys need
 * CAP_NET_RAW; the multicast QPN is never handed out; a QP brought back
 * from ERR works; address vectors as lenient as rxe's and mlx5's; a
 * create whose result cannot be copied out leaves nothing behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "sv_harness.h"
#include "sv_dp_test.h"
#include "sv_test.h"

#define BUF	4096
#define NOBODY	65534
#define ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* Become uid/gid 65534 with no capabilities; 0 or -1. */
static int drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return -1;
	return 0;
}

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	char *buf;
	struct ibv_mr *mr;
};

static int end_open(struct end *e, enum ibv_qp_type t)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr ia = {
		.qp_type = t,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	memset(e, 0, sizeof(*e));
	if (!list)
		return -1;
	e->ctx = sv_open_named(list, "softverbs0");
	ibv_free_device_list(list);
	if (!e->ctx)
		return -1;
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->pd ? ibv_create_cq(e->ctx, 64, NULL, NULL, 0) : NULL;
	if (!e->cq)
		return -1;
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &ia);
	e->buf = aligned_alloc(4096, BUF);
	if (!e->qp || !e->buf)
		return -1;
	memset(e->buf, 0, BUF);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF, ACCESS);
	if (!e->mr)
		return -1;
	return qp_init(e->qp, t == IBV_QPT_UC ?
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE :
		       ACCESS);
}

static void end_close(struct end *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->ctx)
		ibv_close_device(e->ctx);
	free(e->buf);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

static long long peer_drops(void)
{
	char svctl[PATH_MAX];

	if (sv_svctl_path(svctl, sizeof(svctl)))
		return -1;
	return sv_stat_of(svctl, "softverbs0", "rx_peer_drops");
}

/*
 * A stranger (another user's process) connects a QP of its own to the
 * victim's QP number and GID and tries to write into the victim's MR
 * with its rkey, and to send to it. Exit status: 0 if the WRITE fails
 * (RC: RETRY_EXC_ERR; UC: silently dropped), the QP numbers as given.
 */
static int stranger(enum ibv_qp_type t, uint32_t vqpn, uint64_t vaddr,
		    uint32_t vrkey)
{
	struct ibv_wc wc;
	union ibv_gid gid;
	struct end s;

	if (drop_to_nobody())
		return 10;
	if (end_open(&s, t))
		return 11;
	if (ibv_query_gid(s.ctx, 1, 1, &gid))
		return 12;
	/* retry_cnt 1, timeout 8 (1 ms): a dead peer fails fast. */
	if (qp_rtr_rts(s.qp, vqpn, &gid, 0, 1, 1))
		return 13;
	memset(s.buf, 0x5a, BUF);
	if (post_send(s.qp, IBV_WR_RDMA_WRITE, s.mr->lkey, s.buf, 64, 1,
		      IBV_SEND_SIGNALED, vaddr, vrkey))
		return 14;
	if (poll1(s.cq, &wc) != 1)
		return 15;
	if (t == IBV_QPT_RC && wc.status != IBV_WC_RETRY_EXC_ERR)
		return 16;
	if (t == IBV_QPT_UC && wc.status != IBV_WC_SUCCESS)
		return 17;
	if (t == IBV_QPT_UC) {
		/* A SEND must not take the victim's receive WQE either. */
		if (post_send(s.qp, IBV_WR_SEND, s.mr->lkey, s.buf, 64, 2,
			      IBV_SEND_SIGNALED, 0, 0) ||
		    poll1(s.cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
			return 18;
	}
	end_close(&s);
	return 0;
}

/* The victim's A <-> B pair; a stranger targets B. */
static void stranger_case(struct __test_metadata *_metadata,
			  enum ibv_qp_type t)
{
	struct end a, b;
	union ibv_gid gid;
	struct ibv_wc wc;
	long long drops0, drops1;
	pid_t pid;
	int i;

	ASSERT_EQ(0, end_open(&a, t));
	ASSERT_EQ(0, end_open(&b, t));
	ASSERT_EQ(0, ibv_query_gid(a.ctx, 1, 1, &gid));
	ASSERT_EQ(0, qp_rtr_rts(a.qp, b.qp->qp_num, &gid, 7, 1, 7));
	ASSERT_EQ(0, qp_rtr_rts(b.qp, a.qp->qp_num, &gid, 7, 1, 7));
	ASSERT_EQ(0, post_recv(b.qp, b.mr, b.buf + 2048, 2048, 77));
	drops0 = peer_drops();
	ASSERT_LE(0, drops0);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(stranger(t, b.qp->qp_num, (uintptr_t)b.buf,
			       b.mr->rkey));
	ASSERT_EQ(0, sv_child_status(pid));

	/* Nothing of the victim changed. */
	for (i = 0; i < BUF; i++)
		ASSERT_EQ(0, b.buf[i]);
	EXPECT_EQ(IBV_QPS_RTS, qp_state(b.qp));
	EXPECT_EQ(0, ibv_poll_cq(b.cq, 1, &wc));
	drops1 = peer_drops();
	EXPECT_LE(drops0 + 1, drops1);

	/* The connected peer still gets through, into the same WQE. */
	sv_fill(a.buf, 64, 3);
	ASSERT_EQ(0, post_send(a.qp, IBV_WR_SEND, a.mr->lkey, a.buf, 64, 5,
			       IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, poll1(a.cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, poll1(b.cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(77, wc.wr_id);
	EXPECT_EQ(a.qp->qp_num, wc.src_qp);
	EXPECT_EQ(0, memcmp(a.buf, b.buf + 2048, 64));
	ASSERT_EQ(0, post_send(a.qp, IBV_WR_RDMA_WRITE, a.mr->lkey, a.buf, 64,
			       6, IBV_SEND_SIGNALED, (uintptr_t)b.buf,
			       b.mr->rkey));
	ASSERT_EQ(1, poll1(a.cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a.buf, b.buf, 64));
	end_close(&a);
	end_close(&b);
}

TEST(rc_stranger_is_dropped)
{
	stranger_case(_metadata, IBV_QPT_RC);
}

TEST(uc_stranger_is_dropped)
{
	stranger_case(_metadata, IBV_QPT_UC);
}

/* Connected to a QP, but from a GID the peer did not name: dropped. */
TEST(rc_wrong_gid_is_dropped)
{
	union ibv_gid gid0, gid1;
	struct end a, b;
	struct ibv_wc wc;

	ASSERT_EQ(0, end_open(&a, IBV_QPT_RC));
	ASSERT_EQ(0, end_open(&b, IBV_QPT_RC));
	/* GID 0 and 1 are the same address as RoCE v1 and v2: use ::1. */
	ASSERT_EQ(0, ibv_query_gid(a.ctx, 1, 1, &gid1));
	gid0 = gid1;
	gid0.raw[15] ^= 1;
	ASSERT_EQ(0, qp_rtr_rts(a.qp, b.qp->qp_num, &gid1, 0, 1, 1));
	/* b expects a, but at another GID. */
	ASSERT_EQ(0, qp_rtr_rts(b.qp, a.qp->qp_num, &gid0, 0, 1, 1));
	ASSERT_EQ(0, post_send(a.qp, IBV_WR_RDMA_WRITE, a.mr->lkey, a.buf, 8,
			       1, IBV_SEND_SIGNALED, (uintptr_t)b.buf,
			       b.mr->rkey));
	ASSERT_EQ(1, poll1(a.cq, &wc));
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, wc.status);
	EXPECT_EQ(IBV_QPS_RTS, qp_state(b.qp));
	end_close(&a);
	end_close(&b);
}

/* Bit 31 of a Q_Key: CAP_NET_RAW, as the RDMA core asks since 6.4. */
TEST(controlled_qkey_needs_cap_net_raw)
{
	struct ibv_qp_attr attr = { .qkey = 0x80010000 };
	struct end e;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (drop_to_nobody() || end_open(&e, IBV_QPT_UD))
			_exit(10);
		if (ibv_modify_qp(e.qp, &attr, IBV_QP_QKEY) != EPERM)
			_exit(11);
		attr.qkey = 0x10000;
		if (ibv_modify_qp(e.qp, &attr, IBV_QP_QKEY))
			_exit(12);
		end_close(&e);
		_exit(0);
	}
	ASSERT_EQ(0, sv_child_status(pid));
	ASSERT_EQ(0, end_open(&e, IBV_QPT_UD));
	EXPECT_EQ(0, ibv_modify_qp(e.qp, &attr, IBV_QP_QKEY));
	end_close(&e);
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* 0xffffff is the multicast QPN: allocation wraps before it. */
TEST(qpn_never_multicast)
{
	static const char knob[] =
		"/sys/kernel/debug/softverbs/softverbs0/next_qpn";
	struct ibv_qp *qp[3];
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct end e;
	int i;

	ASSERT_EQ(0, end_open(&e, IBV_QPT_UD));
	ASSERT_EQ(0, write_file(knob, "16777214"));	/* 0xfffffe */
	ia.send_cq = e.cq;
	ia.recv_cq = e.cq;
	for (i = 0; i < 3; i++) {
		qp[i] = ibv_create_qp(e.pd, &ia);
		ASSERT_NE(NULL, qp[i]);
		EXPECT_NE(0xffffffu, qp[i]->qp_num);
		EXPECT_LE(2u, qp[i]->qp_num);
	}
	EXPECT_EQ(0xfffffeu, qp[0]->qp_num);
	EXPECT_GT(0xfffffeu, qp[1]->qp_num);
	for (i = 0; i < 3; i++)
		ibv_destroy_qp(qp[i]);
	end_close(&e);
}

/* One signaled 64-byte RDMA WRITE from a to b's buffer: its status. */
static int write_status(struct end *a, struct end *b, int fill)
{
	struct ibv_wc wc;

	sv_fill(a->buf, 64, fill);
	if (post_send(a->qp, IBV_WR_RDMA_WRITE, a->mr->lkey, a->buf, 64, 9,
		      IBV_SEND_SIGNALED, (uintptr_t)b->buf, b->mr->rkey) ||
	    poll1(a->cq, &wc) != 1)
		return -1;
	return wc.status;
}

/*
 * The engine remembers where a connected QP's messages went: a peer that
 * is connected elsewhere afterwards takes no more of them (the requester
 * sees RETRY_EXC_ERR, the peer's memory is untouched).
 */
TEST(rc_peer_reconnected_elsewhere_is_dropped)
{
	struct end a, b, c;
	union ibv_gid gid;

	ASSERT_EQ(0, end_open(&a, IBV_QPT_RC));
	ASSERT_EQ(0, end_open(&b, IBV_QPT_RC));
	ASSERT_EQ(0, end_open(&c, IBV_QPT_RC));
	ASSERT_EQ(0, ibv_query_gid(a.ctx, 1, 1, &gid));
	ASSERT_EQ(0, qp_rtr_rts(a.qp, b.qp->qp_num, &gid, 0, 1, 1));
	ASSERT_EQ(0, qp_rtr_rts(b.qp, a.qp->qp_num, &gid, 0, 1, 1));
	ASSERT_EQ(IBV_WC_SUCCESS, write_status(&a, &b, 1));
	ASSERT_EQ(0, memcmp(a.buf, b.buf, 64));
	ASSERT_EQ(IBV_WC_SUCCESS, write_status(&a, &b, 2));
	ASSERT_EQ(0, memcmp(a.buf, b.buf, 64));

	/* b now names c: a is a stranger to it. */
	ASSERT_EQ(0, qp_reset_rts(b.qp, c.qp->qp_num, &gid, 7));
	memset(b.buf, 0, 64);
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, write_status(&a, &b, 3));
	EXPECT_EQ(0, b.buf[0]);
	EXPECT_EQ(0, memcmp(b.buf, b.buf + 1, 63));
	end_close(&a);
	end_close(&b);
	end_close(&c);
}

/*
 * A peer destroyed: the requester's next message finds nobody (its QP
 * memory is not read again: KASAN on the debug kernel would see it).
 * A new QP given the same number and connected back: the requester's
 * messages reach it.
 */
TEST(rc_peer_number_reused_reaches_new_qp)
{
	static const char knob[] =
		"/sys/kernel/debug/softverbs/softverbs0/next_qpn";
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	union ibv_gid gid;
	struct end a, b;
	char num[16];
	uint32_t bqpn;

	ASSERT_EQ(0, end_open(&a, IBV_QPT_RC));
	ASSERT_EQ(0, end_open(&b, IBV_QPT_RC));
	ASSERT_EQ(0, ibv_query_gid(a.ctx, 1, 1, &gid));
	bqpn = b.qp->qp_num;
	ASSERT_EQ(0, qp_rtr_rts(a.qp, bqpn, &gid, 0, 1, 1));
	ASSERT_EQ(0, qp_rtr_rts(b.qp, a.qp->qp_num, &gid, 0, 1, 1));
	ASSERT_EQ(IBV_WC_SUCCESS, write_status(&a, &b, 1));
	ASSERT_EQ(0, memcmp(a.buf, b.buf, 64));

	ASSERT_EQ(0, ibv_destroy_qp(b.qp));
	b.qp = NULL;
	usleep(100 * 1000);	/* past a grace period: its memory is freed */
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, write_status(&a, &b, 2));

	snprintf(num, sizeof(num), "%u", bqpn);
	ASSERT_EQ(0, write_file(knob, num));
	ia.send_cq = b.cq;
	ia.recv_cq = b.cq;
	b.qp = ibv_create_qp(b.pd, &ia);
	ASSERT_NE(NULL, b.qp);
	ASSERT_EQ(bqpn, b.qp->qp_num);
	ASSERT_EQ(0, qp_init(b.qp, ACCESS));
	ASSERT_EQ(0, qp_rtr_rts(b.qp, a.qp->qp_num, &gid, 0, 1, 1));
	ASSERT_EQ(0, qp_reset_rts(a.qp, bqpn, &gid, 7));
	EXPECT_EQ(IBV_WC_SUCCESS, write_status(&a, &b, 3));
	EXPECT_EQ(0, memcmp(a.buf, b.buf, 64));
	end_close(&a);
	end_close(&b);
}

/*
 * An RC pair fails with a remote operation error (the responder's receive
 * WQE names a bad lkey: REM_OP_ERR and LOC_PROT_ERR, both QPs in ERR).
 * The requester, as soon as it sees its error, goes RESET -> RTS again,
 * then the responder; new traffic works: nothing of the old error is left
 * (a late move to ERR, ring flags, engine state, flush markers).
 */
TEST(rc_recovers_from_err)
{
	struct ibv_wc wc;
	union ibv_gid gid;
	struct end a, b;
	struct ibv_mr bad = {};
	int round, n;

	ASSERT_EQ(0, end_open(&a, IBV_QPT_RC));
	ASSERT_EQ(0, end_open(&b, IBV_QPT_RC));
	ASSERT_EQ(0, ibv_query_gid(a.ctx, 1, 1, &gid));
	ASSERT_EQ(0, qp_rtr_rts(a.qp, b.qp->qp_num, &gid, 7, 1, 7));
	ASSERT_EQ(0, qp_rtr_rts(b.qp, a.qp->qp_num, &gid, 7, 1, 7));
	bad.lkey = b.mr->lkey ^ 0x5a5a00;
	for (round = 0; round < 40; round++) {
		ASSERT_EQ(0, post_recv(b.qp, &bad, b.buf, 64, 1));
		ASSERT_EQ(0, post_send(a.qp, IBV_WR_SEND, a.mr->lkey, a.buf,
				       64, 3, IBV_SEND_SIGNALED, 0, 0));
		ASSERT_EQ(1, poll1(a.cq, &wc));
		ASSERT_EQ(IBV_WC_REM_OP_ERR, wc.status);
		ASSERT_EQ(0, qp_reset_rts(a.qp, b.qp->qp_num, &gid, 7));
		ASSERT_EQ(1, poll1(b.cq, &wc));
		ASSERT_EQ(IBV_WC_LOC_PROT_ERR, wc.status);
		ASSERT_EQ(0, qp_reset_rts(b.qp, a.qp->qp_num, &gid, 7));
		ASSERT_EQ(IBV_QPS_RTS, qp_state(a.qp));
		ASSERT_EQ(IBV_QPS_RTS, qp_state(b.qp));
		for (n = 0; n < 2; n++) {
			sv_fill(a.buf, 64, n + round);
			ASSERT_EQ(0, post_recv(b.qp, b.mr, b.buf + 1024, 1024,
					       10 + n));
			ASSERT_EQ(0, post_send(a.qp, IBV_WR_SEND, a.mr->lkey,
					       a.buf, 64, 20 + n,
					       IBV_SEND_SIGNALED, 0, 0));
			ASSERT_EQ(1, poll1(a.cq, &wc));
			ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
			ASSERT_EQ(20 + n, wc.wr_id);
			ASSERT_EQ(1, poll1(b.cq, &wc));
			ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
			ASSERT_EQ(10 + n, wc.wr_id);
			ASSERT_EQ(0, memcmp(a.buf, b.buf + 1024, 64));
		}
		ASSERT_EQ(0, ibv_poll_cq(a.cq, 1, &wc));
		ASSERT_EQ(0, ibv_poll_cq(b.cq, 1, &wc));
	}
	end_close(&a);
	end_close(&b);
}

/*
 * rxe and mlx5 take any flow label (they use its low 20 bits: programs
 * pass ~0 or a path index to spread the UDP source port), any SL, and a
 * dlid on RoCE. So do we: in ibv_create_ah and in a QP's AV.
 */
TEST(av_as_lenient_as_rxe)
{
	struct ibv_ah_attr ah = {
		.is_global = 1, .port_num = 1, .dlid = 0x1234, .sl = 0x1f,
		.grh = { .flow_label = 0xffffffff, .sgid_index = 1,
			 .hop_limit = 64 },
	};
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct ibv_ah *h;
	struct end a, b;

	ASSERT_EQ(0, end_open(&a, IBV_QPT_RC));
	ASSERT_EQ(0, end_open(&b, IBV_QPT_RC));
	ASSERT_EQ(0, ibv_query_gid(a.ctx, 1, 1, &ah.grh.dgid));
	h = ibv_create_ah(a.pd, &ah);
	ASSERT_NE(NULL, h);
	ibv_destroy_ah(h);

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTR;
	qa.path_mtu = IBV_MTU_1024;
	qa.dest_qp_num = b.qp->qp_num;
	qa.ah_attr = ah;
	qa.max_dest_rd_atomic = 1;
	qa.min_rnr_timer = 1;
	ASSERT_EQ(0, ibv_modify_qp(a.qp, &qa, IBV_QP_STATE | IBV_QP_AV |
				   IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER));
	memset(&qa, 0, sizeof(qa));
	ASSERT_EQ(0, ibv_query_qp(a.qp, &qa, IBV_QP_AV, &ia));
	EXPECT_EQ(0xfffffu, qa.ah_attr.grh.flow_label);
	EXPECT_EQ(0xf, qa.ah_attr.sl);
	end_close(&a);
	end_close(&b);
}

/* ---- a create whose result cannot be copied out ---- */

static int count_fds(void)
{
	char path[64];
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (!access(path, F_OK))
			n++;
	}
	return n;
}

static long live_objects(const char *type)
{
	return sv_obj_count(type);
}

/*
 * The argument lives in a read-only page: the kernel reads it, makes the
 * object, cannot write the result back. EFAULT, and nothing is left.
 */
TEST(create_undone_when_copy_out_fails)
{
	static const struct {
		const char *type;
		unsigned long cmd;
		uint32_t size;
	} cmds[] = {
		{ "pd", SV_IOC_ALLOC_PD, sizeof(struct sv_alloc_pd) },
		{ "cq", SV_IOC_CREATE_CQ, sizeof(struct sv_create_cq) },
		{ "comp_channel", SV_IOC_CREATE_COMP_CHANNEL,
		  sizeof(struct sv_create_comp_channel) },
		{ NULL, SV_IOC_GET_ASYNC_FD, sizeof(struct sv_get_async_fd) },
	};
	unsigned int i;
	int fd, fds;
	long before;
	void *page;

	fd = open("/dev/infiniband/softverbs0", O_RDWR);
	ASSERT_LE(0, fd);
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct sv_create_cq *cq = page;

		ASSERT_EQ(0, mprotect(page, 4096, PROT_READ | PROT_WRITE));
		memset(page, 0, 4096);
		*(uint32_t *)page = cmds[i].size;
		if (cmds[i].cmd == SV_IOC_CREATE_CQ)
			cq->cqe = 16;
		ASSERT_EQ(0, mprotect(page, 4096, PROT_READ));
		before = cmds[i].type ? live_objects(cmds[i].type) : 0;
		fds = count_fds();
		errno = 0;
		EXPECT_EQ(-1, ioctl(fd, cmds[i].cmd, page));
		EXPECT_EQ(EFAULT, errno);
		if (cmds[i].type)
			EXPECT_EQ(before, live_objects(cmds[i].type));
		EXPECT_EQ(fds, count_fds());
	}
	/* An MR: registered, then deregistered again. */
	{
		struct sv_alloc_pd pd = { .size = sizeof(pd) };
		struct sv_reg_mr *mr = page;
		static char buf[8192];

		ASSERT_EQ(0, ioctl(fd, SV_IOC_ALLOC_PD, &pd));
		ASSERT_EQ(0, mprotect(page, 4096, PROT_READ | PROT_WRITE));
		memset(page, 0, 4096);
		mr->size = sizeof(*mr);
		mr->pd_handle = pd.pd_handle;
		mr->addr = (uintptr_t)buf;
		mr->length = sizeof(buf);
		mr->access = SV_ACCESS_LOCAL_WRITE;
		ASSERT_EQ(0, mprotect(page, 4096, PROT_READ));
		before = live_objects("mr");
		errno = 0;
		EXPECT_EQ(-1, ioctl(fd, SV_IOC_REG_MR, page));
		EXPECT_EQ(EFAULT, errno);
		EXPECT_EQ(before, live_objects("mr"));
	}
	/* And the file still works. */
	ASSERT_EQ(0, mprotect(page, 4096, PROT_READ | PROT_WRITE));
	memset(page, 0, 4096);
	*(uint32_t *)page = sizeof(struct sv_alloc_pd);
	EXPECT_EQ(0, ioctl(fd, SV_IOC_ALLOC_PD, page));
	munmap(page, 4096);
	close(fd);
}

TEST_HARNESS_MAIN
