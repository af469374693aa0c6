// SPDX-License-Identifier: GPL-2.0
/*
 * Drives (SV_RING_DRIVE, kernel/engine.c): a poll that finds its CQ empty
 * while the engine has no CPU of its own runs the engine for its own uid,
 * in its own thread. A drive takes the posts of another process of the
 * same uid and never another user's; a SEND stream whose receiver drives
 * arrives whole and in order.
 *
 * A driver here calls the ioctl itself, so that its return value (1: the
 * drive did work) says whose work it did: the driver has none of its own.
 */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"
#include "sv_harness.h"
#include "sv_dp_test.h"
#include "sv_test.h"

#define NOBODY		65534
#define BATCH		32		/* WRITEs per post list */
#define SLOT		8
#define STREAM		20000		/* SENDs of the stream test */
#define STREAM_LEN	64
#define STREAM_WINDOW	64		/* SENDs in flight */
#define STREAM_RECVS	256

/* What the processes of a test report. */
struct drive_shared {
	volatile int stop;
	long drives;		/* the driver's ioctls */
	long worked;		/* ... that did work (returned 1) */
	long rounds;		/* the poster's batches, data checked */
	int driver_ready;
};

static int become(uid_t uid)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return -1;
	if (!uid)
		return 0;
	return setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	       setresuid(uid, uid, uid) ? -1 : 0;
}

/* One context with a QP connected to itself; the driver and the poster. */
struct self_qp {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
};

/* A context, its PD, CQ, a registered buffer and an RC QP in INIT. */
static int qp_end_open(struct self_qp *s, size_t len, int depth)
{
	s->list = ibv_get_device_list(NULL);
	s->ctx = sv_open_named(s->list, "softverbs0");
	if (!s->ctx)
		return -1;
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 2 * depth, NULL, NULL, 0);
	s->buf = aligned_alloc(4096, len);
	if (!s->pd || !s->cq || !s->buf)
		return -1;
	memset(s->buf, 0, len);
	s->mr = ibv_reg_mr(s->pd, s->buf, len, SV_ALL_ACCESS);
	s->qp = sv_rc_pair_qp(&(struct sv_rc_pair){ .pd = s->pd }, s->cq,
			      depth, 1);
	return !s->mr || !s->qp || qp_init(s->qp, SV_ALL_ACCESS) ? -1 : 0;
}

static int self_qp_open(struct self_qp *s, size_t len)
{
	union ibv_gid gid;

	if (qp_end_open(s, len, 2 * BATCH) ||
	    ibv_query_gid(s->ctx, 1, 1, &gid))
		return -1;
	return qp_rtr_rts(s->qp, s->qp->qp_num, &gid, 7, 1, 7) ? -1 : 0;
}

/*
 * The driver: drives on its own empty CQ until told to stop, counting
 * the drives that did work. Its QP (an engine share) stays idle.
 */
static void driver(uid_t uid, struct drive_shared *sh)
{
	struct self_qp s = {};
	struct sv_ring_doorbell d = {
		.size = sizeof(d), .flags = SV_RING_DRIVE,
	};
	int r;

	if (become(uid) || self_qp_open(&s, 4096))
		_exit(10);
	d.cq_handle = s.cq->handle;
	__atomic_store_n(&sh->driver_ready, 1, __ATOMIC_RELEASE);
	while (!sh->stop) {
		r = ioctl(s.ctx->cmd_fd, SV_IOC_DOORBELL, &d);
		if (r < 0)
			_exit(11);
		__atomic_add_fetch(&sh->drives, 1, __ATOMIC_RELAXED);
		if (r > 0)
			__atomic_add_fetch(&sh->worked, 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

/*
 * The poster: batches of BATCH RDMA WRITEs to itself in one post list
 * (its ring runs a few, the rest waits for the engine), each writing the
 * round's number into its own slot, the last one signaled; then the
 * completion and every slot checked.
 */
static void poster(uid_t uid, struct drive_shared *sh)
{
	struct ibv_send_wr wr[BATCH], *bad;
	struct ibv_sge sg[BATCH];
	struct self_qp s = {};
	struct ibv_wc wc;
	uint64_t round, v;
	char *src, *dst;
	int i, n;

	if (become(uid) || self_qp_open(&s, 2 * BATCH * SLOT))
		_exit(20);
	src = s.buf;
	dst = s.buf + BATCH * SLOT;
	for (round = 1; !sh->stop; round++) {
		for (i = 0; i < BATCH; i++) {
			v = round * BATCH + i;
			memcpy(src + i * SLOT, &v, SLOT);
			sg[i] = (struct ibv_sge){
				(uintptr_t)(src + i * SLOT), SLOT, s.mr->lkey };
			wr[i] = (struct ibv_send_wr){
				.wr_id = round, .sg_list = &sg[i], .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.next = i + 1 < BATCH ? &wr[i + 1] : NULL,
				.send_flags = i + 1 < BATCH ? 0 :
					      IBV_SEND_SIGNALED,
			};
			wr[i].wr.rdma.remote_addr = (uintptr_t)(dst + i * SLOT);
			wr[i].wr.rdma.rkey = s.mr->rkey;
		}
		if (ibv_post_send(s.qp, wr, &bad))
			_exit(21);
		do {
			n = ibv_poll_cq(s.cq, 1, &wc);
		} while (!n && !sh->stop);
		if (!n)
			break;
		if (n < 0 || wc.status != IBV_WC_SUCCESS || wc.wr_id != round)
			_exit(22);
		for (i = 0; i < BATCH; i++) {
			memcpy(&v, dst + i * SLOT, SLOT);
			if (v != round * BATCH + i)
				_exit(23);
		}
		__atomic_add_fetch(&sh->rounds, 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

FIXTURE(drive) {
	struct drive_shared *sh;
	pid_t kids[2];
};

FIXTURE_SETUP(drive)
{
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset(self->sh, 0, sizeof(*self->sh));
}

FIXTURE_TEARDOWN(drive)
{
	int i, st;

	for (i = 0; i < 2; i++)
		if (self->kids[i] > 0) {
			kill(self->kids[i], SIGKILL);
			waitpid(self->kids[i], &st, 0);
		}
	munmap(self->sh, sizeof(*self->sh));
}

/*
 * Run a driver of uid du beside a poster of uid pu until the driver did
 * work or secs passed; 0 if both exited cleanly.
 */
static int drive_run(struct __test_metadata *_metadata,
		     FIXTURE_DATA(drive) *self, uid_t du, uid_t pu,
		     double secs)
{
	struct drive_shared *sh = self->sh;
	double end;
	int a, b;

	self->kids[0] = fork();
	if (!self->kids[0])
		driver(du, sh);
	while (self->kids[0] > 0 &&
	       !__atomic_load_n(&sh->driver_ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	self->kids[1] = fork();
	if (!self->kids[1])
		poster(pu, sh);
	end = sv_now_s() + secs * sv_slow();
	while (sv_now_s() < end &&
	       !__atomic_load_n(&sh->worked, __ATOMIC_RELAXED))
		usleep(10000);
	sh->stop = 1;
	a = sv_child_status(self->kids[0]);
	b = sv_child_status(self->kids[1]);
	self->kids[0] = self->kids[1] = 0;
	TH_LOG("driver uid %u: %ld drives, %ld did work; poster uid %u: %ld batches of %d",
	       du, sh->drives, sh->worked, pu, sh->rounds, BATCH);
	EXPECT_EQ(0, a);
	EXPECT_EQ(0, b);
	return a || b ? -1 : 0;
}

/* A process's drive runs another process's posts of the same uid. */
TEST_F_TIMEOUT(drive, same_user_drive_takes_posts, 120)
{
	if (geteuid())
		SKIP(return, "needs root (to become other uids)");
	ASSERT_EQ(0, drive_run(_metadata, self, 1000, 1000, 20));
	EXPECT_LT(0, self->sh->rounds);
	EXPECT_LT(0, self->sh->worked);
}

/* ... and never another user's: it has nothing of its own to do. */
TEST_F_TIMEOUT(drive, other_user_drive_takes_none, 120)
{
	if (geteuid())
		SKIP(return, "needs root (to become other uids)");
	ASSERT_EQ(0, drive_run(_metadata, self, NOBODY, 1000, 3));
	EXPECT_LT(0, self->sh->rounds);
	EXPECT_LT(0, self->sh->drives);
	EXPECT_EQ(0, self->sh->worked);
}

/*
 * Back-offs beside a driver: a poster of the driver's uid, with files
 * beside its own on the engines, sends RDMA WRITEs to a QP number that
 * is gone, each to end in RETRY_EXC_ERR after its retries. The kthread
 * comes back for each retry, its passes going over the uid's files while
 * the driver's drives look at them: every WR completes, in time.
 */
#define BACKOFF_WRS	40
#define BACKOFF_FILES	3

static void backoff_poster(uid_t uid, struct drive_shared *sh)
{
	struct self_qp s[BACKOFF_FILES] = {};
	struct ibv_qp *gone;
	union ibv_gid gid;
	struct ibv_wc wc;
	uint32_t dqpn;
	double end;
	int i, n;

	if (become(uid))
		_exit(50);
	for (i = 0; i < BACKOFF_FILES; i++)
		if (self_qp_open(&s[i], 4096))
			_exit(51);
	gone = sv_rc_pair_qp(&(struct sv_rc_pair){ .pd = s[0].pd }, s[0].cq,
			     1, 1);
	if (!gone)
		_exit(52);
	dqpn = gone->qp_num;
	if (ibv_destroy_qp(gone) || ibv_query_gid(s[0].ctx, 1, 1, &gid))
		_exit(53);
	/* s[0]'s QP, from RTS back to RESET, now names the vanished QP. */
	if (qp_reset_rts(s[0].qp, dqpn, &gid, 3))
		_exit(54);
	for (i = 0; i < BACKOFF_WRS; i++) {
		if (post_send(s[0].qp, IBV_WR_RDMA_WRITE, s[0].mr->lkey,
			      s[0].buf, 64, i, IBV_SEND_SIGNALED,
			      (uintptr_t)s[1].buf, s[1].mr->rkey))
			_exit(55);
		end = sv_now_s() + 2 * sv_slow();
		do {
			n = ibv_poll_cq(s[0].cq, 1, &wc);
		} while (!n && sv_now_s() < end);
		if (n != 1)
			_exit(56);	/* lost: nobody came back for it */
		if (wc.status != IBV_WC_RETRY_EXC_ERR || wc.wr_id != (uint64_t)i)
			_exit(57);
		/* Back to RTS for the next WR. */
		if (qp_reset_rts(s[0].qp, dqpn, &gid, 3))
			_exit(58);
		__atomic_add_fetch(&sh->rounds, 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

TEST_F_TIMEOUT(drive, backoffs_beside_a_driver, 300)
{
	struct drive_shared *sh = self->sh;
	int a, b;

	if (geteuid())
		SKIP(return, "needs root (to become other uids)");
	self->kids[0] = fork();
	ASSERT_LE(0, self->kids[0]);
	if (!self->kids[0])
		driver(1000, sh);
	while (!__atomic_load_n(&sh->driver_ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	self->kids[1] = fork();
	ASSERT_LE(0, self->kids[1]);
	if (!self->kids[1])
		backoff_poster(1000, sh);
	b = sv_child_status(self->kids[1]);
	sh->stop = 1;
	a = sv_child_status(self->kids[0]);
	self->kids[0] = self->kids[1] = 0;
	TH_LOG("%ld of %d WRs ended in RETRY_EXC_ERR; %ld drives",
	       sh->rounds, BACKOFF_WRS, sh->drives);
	EXPECT_EQ(0, a);
	EXPECT_EQ(0, b);
	EXPECT_EQ(BACKOFF_WRS, sh->rounds);
}

/*
 * ib_send_bw's pattern: one process streams SENDs, each carrying its
 * number, with STREAM_WINDOW in flight; another posts receives and polls
 * (its empty polls drive through the library). Every message arrives,
 * in order, with its own bytes.
 */
static int stream_connect(struct self_qp *s, int wfd, int rfd)
{
	union ibv_gid gid;
	uint32_t qpn;

	if (ibv_query_gid(s->ctx, 1, 1, &gid) ||
	    write(wfd, &s->qp->qp_num, 4) != 4 || read(rfd, &qpn, 4) != 4)
		return -1;
	return qp_rtr_rts(s->qp, qpn, &gid, 7, 12, 7) ? -1 : 0;
}

static void stream_sender(int wfd, int rfd)
{
	struct self_qp s = {};
	struct ibv_wc wc[16];
	long posted = 0, done = 0;
	int i, n;

	if (become(0) ||
	    qp_end_open(&s, STREAM_WINDOW * STREAM_LEN, STREAM_RECVS) ||
	    stream_connect(&s, wfd, rfd))
		_exit(30);
	while (done < STREAM) {
		while (posted < STREAM && posted - done < STREAM_WINDOW) {
			char *p = s.buf + (posted % STREAM_WINDOW) * STREAM_LEN;

			sv_fill(p, STREAM_LEN, (int)posted);
			memcpy(p, &posted, sizeof(posted));
			if (post_send(s.qp, IBV_WR_SEND, s.mr->lkey, p,
				      STREAM_LEN, posted, IBV_SEND_SIGNALED,
				      0, 0))
				_exit(31);
			posted++;
		}
		n = ibv_poll_cq(s.cq, 16, wc);
		if (n < 0)
			_exit(32);
		for (i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].wr_id != (uint64_t)done++)
				_exit(33);
	}
	_exit(0);
}

static void stream_receiver(int wfd, int rfd, long *got)
{
	char want[STREAM_LEN], *p;
	struct self_qp s = {};
	struct ibv_wc wc[16];
	long next = 0, slot;
	int i, n;

	if (become(0) ||
	    qp_end_open(&s, STREAM_RECVS * STREAM_LEN, STREAM_RECVS))
		_exit(40);
	for (i = 0; i < STREAM_RECVS; i++)
		if (post_recv(s.qp, s.mr, s.buf + i * STREAM_LEN, STREAM_LEN,
			      i))
			_exit(41);
	if (stream_connect(&s, wfd, rfd))
		_exit(42);
	while (next < STREAM) {
		n = ibv_poll_cq(s.cq, 16, wc);
		if (n < 0)
			_exit(43);
		for (i = 0; i < n; i++, next++) {
			slot = (long)wc[i].wr_id;
			p = s.buf + slot * STREAM_LEN;
			sv_fill(want, STREAM_LEN, (int)next);
			memcpy(want, &next, sizeof(next));
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].opcode != IBV_WC_RECV ||
			    wc[i].byte_len != STREAM_LEN ||
			    memcmp(p, want, STREAM_LEN))
				_exit(44);
			if (post_recv(s.qp, s.mr, p, STREAM_LEN, slot))
				_exit(45);
		}
		__atomic_store_n(got, next, __ATOMIC_RELAXED);
	}
	_exit(0);
}

TEST_F_TIMEOUT(drive, send_stream_with_driving_receiver, 300)
{
	char svctl[PATH_MAX + 16];
	long long d0, d1;
	int ab[2], ba[2];

	ASSERT_EQ(0, sv_svctl_path(svctl, sizeof(svctl)));
	d0 = sv_stat_of(svctl, "softverbs0", "drive_wqes");
	ASSERT_EQ(0, pipe(ab));
	ASSERT_EQ(0, pipe(ba));
	self->kids[0] = fork();
	ASSERT_LE(0, self->kids[0]);
	if (!self->kids[0])
		stream_receiver(ab[1], ba[0], &self->sh->rounds);
	self->kids[1] = fork();
	ASSERT_LE(0, self->kids[1]);
	if (!self->kids[1])
		stream_sender(ba[1], ab[0]);
	EXPECT_EQ(0, sv_child_status(self->kids[1]));
	EXPECT_EQ(0, sv_child_status(self->kids[0]));
	self->kids[0] = self->kids[1] = 0;
	d1 = sv_stat_of(svctl, "softverbs0", "drive_wqes");
	TH_LOG("%ld of %d SENDs received in order; WQEs drives ran: %lld",
	       self->sh->rounds, STREAM, d1 - d0);
	EXPECT_EQ(STREAM, self->sh->rounds);
}

TEST_HARNESS_MAIN
