// SPDX-License-Identifier: GPL-2.0
/*
 * Object limits (kernel/limits.c): the per-device limits query_device
 * reports hold exactly, also when processes race for the last slots; one
 * uid holds at most user_share percent of a limit; the rdma cgroup's
 * rdma.max limits open files (hca_handle) and objects (hca_object).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "sv_harness.h"
#include "sv_cg_test.h"
#include "sv_qp_test.h"

/*
 * The device limits these tests fill: lower than a new device's (the
 * module parameters max_pd ... max_ah), so that filling one takes seconds.
 * Set on softverbs0 for a test, set back after (sv_dev_limits_reset()).
 */
#define T_MAX_PD	65536
#define T_MAX_CQ	16384
#define T_MAX_QP	16384
#define T_MAX_SRQ	16384
#define T_MAX_AH	65536
#define T_LIMITS	"max_pd 65536 max_cq 16384 max_qp 16384 " \
			"max_srq 16384 max_ah 65536"

static int query_device(int fd, struct sv_query_device *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	return sv_ioc(fd, SV_IOC_QUERY_DEVICE, q);
}

/* The smallest CQ: the header page and one page of CQEs. */
static int create_cq(int fd, uint32_t channel, uint32_t *handle)
{
	struct sv_create_cq c = { .size = sizeof(c), .cqe = 1,
				  .channel = channel };
	int ret = sv_ioc(fd, SV_IOC_CREATE_CQ, &c);

	*handle = ret ? 0 : c.handle;
	return ret;
}

static int create_ah(int fd, uint32_t pd, uint32_t *handle)
{
	struct sv_create_ah c = { .size = sizeof(c), .pd_handle = pd };
	int ret;

	sv_good_av(&c.attr);
	ret = sv_ioc(fd, SV_IOC_CREATE_AH, &c);
	*handle = ret ? 0 : c.handle;
	return ret;
}

static int create_qp(int fd, uint32_t pd, uint32_t cq, uint32_t *handle)
{
	struct sv_create_qp c;
	int ret;

	sv_qp_req(&c, SV_QPT_UD, pd, cq, cq, 0);
	c.cap.max_send_wr = 1;
	c.cap.max_recv_wr = 1;
	ret = sv_ioc(fd, SV_IOC_CREATE_QP, &c);
	*handle = ret ? 0 : c.handle;
	return ret;
}

static int create_channel(int fd, uint32_t *handle, int *chfd)
{
	struct sv_create_comp_channel c = { .size = sizeof(c) };
	int ret = sv_ioc(fd, SV_IOC_CREATE_COMP_CHANNEL, &c);

	*handle = ret ? 0 : c.handle;
	*chfd = ret ? -1 : (int)c.fd;
	return ret;
}

/* A PD, or its errno. */
static int alloc_pd_err(int fd)
{
	struct sv_alloc_pd a = { .size = sizeof(a) };

	return sv_ioc(fd, SV_IOC_ALLOC_PD, &a);
}

enum obj { OBJ_SRQ, OBJ_AH, OBJ_PD, OBJ_CQ };

static const char * const obj_name[] = { "srq", "ah", "pd", "cq" };

/* One object of kind k (in PD pd where it needs one): 0 or errno. */
static int create(int fd, enum obj k, uint32_t pd)
{
	uint32_t h;

	switch (k) {
	case OBJ_SRQ:
		return sv_create_srq(fd, pd, 1, 1, &h);
	case OBJ_AH:
		return create_ah(fd, pd, &h);
	case OBJ_PD:
		return alloc_pd_err(fd);
	case OBJ_CQ:
		return create_cq(fd, 0, &h);
	}
	return EINVAL;
}

/* max_cq, as query_device reports it, holds across files. */
TEST(max_cq_enforced)
{
	struct sv_query_device q;
	int fd1 = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	int fd2 = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	uint32_t h, last = 0;
	unsigned int i;

	if (geteuid())
		SKIP(return, "needs root (CAP_SYS_RESOURCE, CAP_IPC_LOCK)");
	ASSERT_LE(0, fd1);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, sv_dev_set("softverbs0", T_LIMITS));
	ASSERT_EQ(0, query_device(fd1, &q));
	ASSERT_EQ(T_MAX_CQ, q.max_cq);
	for (i = 0; i < q.max_cq; i++)
		ASSERT_EQ(0, create_cq(i & 1 ? fd2 : fd1, 0, &last))
			TH_LOG("CQ %u: %s", i, strerror(errno));
	EXPECT_EQ(q.max_cq, sv_obj_count("cq"));
	EXPECT_EQ(ENOMEM, create_cq(fd1, 0, &h));
	EXPECT_EQ(ENOMEM, create_cq(fd2, 0, &h));
	EXPECT_EQ(q.max_cq, sv_obj_count("cq"));
	/* last came from fd2 (max_cq is even): its slot is free again. */
	ASSERT_EQ(0, sv_destroy_cq(fd2, last));
	ASSERT_EQ(0, create_cq(fd1, 0, &h));
	EXPECT_EQ(ENOMEM, create_cq(fd2, 0, &h));
	ASSERT_EQ(0, close(fd1));
	ASSERT_EQ(0, close(fd2));
	EXPECT_EQ(0, sv_obj_count("cq"));
	EXPECT_EQ(0, sv_dev_limits_reset("softverbs0"));
}

/*
 * A device's limits change at run time (svctl dev set): query_device
 * reports each new value at once; a limit below what the device holds
 * stops creates (ENOMEM) and destroys nothing; raised, creates go on.
 * Out of 1..16777213: svctl fails and nothing changes.
 */
TEST(limits_at_run_time)
{
	struct sv_query_device q;
	int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	uint32_t pd, cq, qp[12], pd_qp_spare;
	int i;

	if (geteuid())
		SKIP(return, "needs root (CAP_NET_ADMIN, CAP_SYS_RESOURCE)");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sv_dev_set("softverbs0", "max_qp 8 max_cq 3"));
	ASSERT_EQ(0, query_device(fd, &q));
	ASSERT_EQ(8, q.max_qp);
	ASSERT_EQ(3, q.max_cq);
	ASSERT_EQ(8 * SV_MAX_QP_RD_ATOM, q.max_res_rd_atom);
	ASSERT_NE(0, pd = sv_alloc_pd(fd));
	ASSERT_EQ(0, create_cq(fd, 0, &cq));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, create_qp(fd, pd, cq, &qp[i])) TH_LOG("QP %d", i);
	EXPECT_EQ(ENOMEM, create_qp(fd, pd, cq, &qp[8]));
	/* Below what it holds: the 8 stay, creates fail until under 4. */
	ASSERT_EQ(0, sv_dev_set("softverbs0", "max_qp 4"));
	ASSERT_EQ(0, query_device(fd, &q));
	ASSERT_EQ(4, q.max_qp);
	EXPECT_EQ(8, sv_obj_count("qp"));
	for (i = 7; i >= 4; i--)
		ASSERT_EQ(0, sv_destroy_qp(fd, qp[i]));
	EXPECT_EQ(ENOMEM, create_qp(fd, pd, cq, &qp[4]));
	ASSERT_EQ(0, sv_destroy_qp(fd, qp[3]));
	ASSERT_EQ(0, create_qp(fd, pd, cq, &qp[3]));
	/* Raised: up to the new limit, exactly. */
	ASSERT_EQ(0, sv_dev_set("softverbs0", "max_qp 12"));
	for (i = 4; i < 12; i++)
		ASSERT_EQ(0, create_qp(fd, pd, cq, &qp[i])) TH_LOG("QP %d", i);
	EXPECT_EQ(ENOMEM, create_qp(fd, pd, cq, &pd_qp_spare));
	/* Completion channels follow max_cq; CQs stop at 3. */
	ASSERT_EQ(0, create_cq(fd, 0, &cq));
	ASSERT_EQ(0, create_cq(fd, 0, &cq));
	EXPECT_EQ(ENOMEM, create_cq(fd, 0, &cq));
	/* Out of range: refused, nothing changed. */
	EXPECT_NE(0, sv_dev_set("softverbs0", "max_qp 0"));
	EXPECT_NE(0, sv_dev_set("softverbs0", "max_qp 16777214"));
	EXPECT_NE(0, sv_dev_set("softverbs0", "max_mr 4294967295"));
	ASSERT_EQ(0, query_device(fd, &q));
	EXPECT_EQ(12, q.max_qp);
	EXPECT_EQ(0, sv_dev_set("softverbs0", "max_qp 16777213"));
	ASSERT_EQ(0, query_device(fd, &q));
	EXPECT_EQ(16777213, q.max_qp);
	ASSERT_EQ(0, close(fd));
	EXPECT_EQ(0, sv_obj_count("qp"));
	ASSERT_EQ(0, sv_dev_limits_reset("softverbs0"));
	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, query_device(fd, &q));
	EXPECT_EQ(sv_param("max_qp"), q.max_qp);
	EXPECT_EQ(sv_param("max_mr"), q.max_mr);
	close(fd);
	/* The module parameters take the same range (ERANGE), or junk. */
	EXPECT_EQ(-ERANGE, sv_param_set("max_qp", "0"));
	EXPECT_EQ(-ERANGE, sv_param_set("max_qp", "16777214"));
	EXPECT_EQ(-EINVAL, sv_param_set("max_mr", "lots"));
	EXPECT_EQ(262144, sv_param("max_qp"));
	EXPECT_EQ(1048576, sv_param("max_mr"));
}

/* A UD QP with send and receive queues of sq and rq WRs. */
static int create_qp_wr(int fd, uint32_t pd, uint32_t cq, uint32_t sq,
			uint32_t rq, uint32_t *handle)
{
	struct sv_create_qp c;
	int ret;

	sv_qp_req(&c, SV_QPT_UD, pd, cq, cq, 0);
	c.cap.max_send_wr = sq;
	c.cap.max_recv_wr = rq;
	ret = sv_ioc(fd, SV_IOC_CREATE_QP, &c);
	*handle = ret ? 0 : c.handle;
	return ret;
}

static int create_cq_n(int fd, uint32_t cqe, uint32_t *handle)
{
	struct sv_create_cq c = { .size = sizeof(c), .cqe = cqe };
	int ret = sv_ioc(fd, SV_IOC_CREATE_CQ, &c);

	*handle = ret ? 0 : c.handle;
	return ret;
}

static int resize_cq(int fd, uint32_t cq, uint32_t cqe)
{
	struct sv_resize_cq r = { .size = sizeof(r), .handle = cq,
				  .cqe = cqe };

	return sv_ioc(fd, SV_IOC_RESIZE_CQ, &r);
}

/*
 * max_qp_wr, max_cqe and max_srq_wr are the device's: svctl dev set
 * changes what query_device reports and what creates and resizes accept
 * (EINVAL beyond), past the defaults too; out of range is refused.
 */
TEST(depths_at_run_time)
{
	struct sv_query_device q;
	int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	uint32_t pd, cq, big, qp, srq;

	if (geteuid())
		SKIP(return, "needs root (CAP_NET_ADMIN)");
	ASSERT_LE(0, fd);
	ASSERT_NE(0, pd = sv_alloc_pd(fd));
	ASSERT_EQ(0, sv_dev_set("softverbs0",
				"max_qp_wr 64 max_cqe 128 max_srq_wr 32"));
	ASSERT_EQ(0, query_device(fd, &q));
	EXPECT_EQ(64, q.max_qp_wr);
	EXPECT_EQ(128, q.max_cqe);
	EXPECT_EQ(32, q.max_srq_wr);
	/* CQs: up to 128 entries, created or resized. */
	EXPECT_EQ(EINVAL, create_cq_n(fd, 129, &big));
	ASSERT_EQ(0, create_cq_n(fd, 128, &cq));
	EXPECT_EQ(EINVAL, resize_cq(fd, cq, 129));
	EXPECT_EQ(0, resize_cq(fd, cq, 100));
	/* QPs: 64 WRs per queue, send or receive. */
	EXPECT_EQ(EINVAL, create_qp_wr(fd, pd, cq, 65, 1, &qp));
	EXPECT_EQ(EINVAL, create_qp_wr(fd, pd, cq, 1, 65, &qp));
	ASSERT_EQ(0, create_qp_wr(fd, pd, cq, 64, 64, &qp));
	EXPECT_EQ(0, sv_destroy_qp(fd, qp));
	/* SRQs: 32. */
	EXPECT_EQ(EINVAL, sv_create_srq(fd, pd, 33, 1, &srq));
	ASSERT_EQ(0, sv_create_srq(fd, pd, 32, 1, &srq));
	EXPECT_EQ(0, sv_destroy_srq(fd, srq));
	/* Raised past the defaults: what a create takes follows. */
	ASSERT_EQ(0, sv_dev_set("softverbs0", "max_qp_wr 32768 max_cqe 131072 max_srq_wr 32768"));
	ASSERT_EQ(0, query_device(fd, &q));
	EXPECT_EQ(32768, q.max_qp_wr);
	EXPECT_EQ(131072, q.max_cqe);
	EXPECT_EQ(32768, q.max_srq_wr);
	EXPECT_EQ(0, resize_cq(fd, cq, 131072));
	ASSERT_EQ(0, create_cq_n(fd, 131072, &big));
	EXPECT_EQ(EINVAL, create_cq_n(fd, 131073, &big));
	ASSERT_EQ(0, create_qp_wr(fd, pd, cq, 32768, 32768, &qp));
	EXPECT_EQ(0, sv_destroy_qp(fd, qp));
	ASSERT_EQ(0, sv_create_srq(fd, pd, 32768, 1, &srq));
	EXPECT_EQ(0, sv_destroy_srq(fd, srq));
	/* Out of range: refused, nothing changed. */
	EXPECT_NE(0, sv_dev_set("softverbs0", "max_cqe 0"));
	EXPECT_NE(0, sv_dev_set("softverbs0", "max_qp_wr 4194305"));
	EXPECT_NE(0, sv_dev_set("softverbs0", "max_srq_wr 4294967295"));
	ASSERT_EQ(0, query_device(fd, &q));
	EXPECT_EQ(32768, q.max_qp_wr);
	EXPECT_EQ(131072, q.max_cqe);
	EXPECT_EQ(32768, q.max_srq_wr);
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, sv_dev_limits_reset("softverbs0"));
	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, query_device(fd, &q));
	EXPECT_EQ(SV_DEFAULT_MAX_QP_WR, q.max_qp_wr);
	EXPECT_EQ(SV_DEFAULT_MAX_CQE, q.max_cqe);
	EXPECT_EQ(SV_DEFAULT_MAX_SRQ_WR, q.max_srq_wr);
	close(fd);
	/* The module parameters: 1..4194304 (ERANGE), or junk. */
	EXPECT_EQ(-ERANGE, sv_param_set("max_cqe", "0"));
	EXPECT_EQ(-ERANGE, sv_param_set("max_qp_wr", "4194305"));
	EXPECT_EQ(-EINVAL, sv_param_set("max_srq_wr", "deep"));
	EXPECT_EQ(SV_DEFAULT_MAX_QP_WR, sv_param("max_qp_wr"));
	EXPECT_EQ(SV_DEFAULT_MAX_CQE, sv_param("max_cqe"));
	EXPECT_EQ(SV_DEFAULT_MAX_SRQ_WR, sv_param("max_srq_wr"));
}

#define RACERS	4
#define SLOTS	64

/*
 * A racer: its own file and PD; when the parent says go, SLOTS creates
 * (the device has SLOTS free in all); reports how many succeeded on res
 * (255: a failure other than ENOMEM), then holds them until done closes.
 */
static void racer(enum obj k, int go, int res, int done)
{
	int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	uint32_t pd = fd < 0 ? 0 : sv_alloc_pd(fd);
	unsigned char n = 0;
	int i, ret;
	char c;

	if (!pd)
		n = 255;
	if (read(go, &c, 1) != 0)
		n = 255;
	for (i = 0; i < SLOTS && n != 255; i++) {
		ret = create(fd, k, pd);
		if (!ret)
			n++;
		else if (ret != ENOMEM)
			n = 255;
	}
	if (write(res, &n, 1) != 1)
		_exit(1);
	if (read(done, &c, 1) != 0)
		_exit(1);
	_exit(0);
}

/* One round: RACERS processes race for the SLOTS free slots. */
static void race_round(struct __test_metadata *_metadata, enum obj k,
		       uint32_t max)
{
	int go[2], res[2], done[2], i, total = 0, status;
	pid_t pids[RACERS];
	unsigned char r;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(res));
	ASSERT_EQ(0, pipe(done));
	for (i = 0; i < RACERS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0) {
			close(go[1]);
			close(done[1]);
			racer(k, go[0], res[1], done[0]);
		}
	}
	close(go[0]);
	close(done[0]);
	close(res[1]);
	close(go[1]);		/* go */
	for (i = 0; i < RACERS; i++) {
		ASSERT_EQ(1, read(res[0], &r, 1));
		EXPECT_NE(255, r);
		total += r;
	}
	EXPECT_EQ(SLOTS, total);
	EXPECT_EQ(max, sv_obj_count(obj_name[k]));
	close(done[1]);		/* the racers exit: their objects go */
	for (i = 0; i < RACERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	close(res[0]);
}

#define ROUNDS	8

/* Fill kind k to max - SLOTS, then race for the rest ROUNDS times. */
static void race(struct __test_metadata *_metadata, enum obj k, uint32_t max)
{
	int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	uint32_t pd, n;
	int round;

	ASSERT_LE(0, fd);
	pd = sv_alloc_pd(fd);
	ASSERT_NE(0, pd);
	for (n = 0; n < max - SLOTS; n++)
		ASSERT_EQ(0, create(fd, k, pd)) TH_LOG("%s %u", obj_name[k], n);
	for (round = 0; round < ROUNDS; round++) {
		race_round(_metadata, k, max);
		ASSERT_EQ(max - SLOTS, sv_obj_count(obj_name[k]));
	}
	close(fd);
	EXPECT_EQ(0, sv_obj_count(obj_name[k]));
}

/*
 * The races create a device's worth of objects: minutes on the debug
 * kernel, so they have a longer timeout (a fixture's, x SV_SLOW).
 */
FIXTURE(race) {
	int unused;
};

FIXTURE_SETUP(race)
{
	ASSERT_EQ(0, sv_dev_set("softverbs0", T_LIMITS));
}

FIXTURE_TEARDOWN(race)
{
	EXPECT_EQ(0, sv_dev_limits_reset("softverbs0"));
}

/* Four processes racing for the last SRQ slots end with exactly max_srq. */
TEST_F_TIMEOUT(race, last_srq_slots, 120)
{
	struct sv_query_device q;
	int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);

	if (geteuid())
		SKIP(return, "needs root (CAP_SYS_RESOURCE, CAP_IPC_LOCK)");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, query_device(fd, &q));
	close(fd);
	ASSERT_EQ(T_MAX_SRQ, q.max_srq);
	race(_metadata, OBJ_SRQ, q.max_srq);
}

TEST_F_TIMEOUT(race, last_ah_slots, 120)
{
	struct sv_query_device q;
	int fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);

	if (geteuid())
		SKIP(return, "needs root (CAP_SYS_RESOURCE)");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, query_device(fd, &q));
	close(fd);
	ASSERT_EQ(T_MAX_AH, q.max_ah);
	race(_metadata, OBJ_AH, q.max_ah);
}

static int write_share(const char *val)
{
	return sv_param_set("user_share", val);
}

/* As uid, without privileges, ring memory unlimited. */
static int become(uid_t uid)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return -1;
	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -1;
	return 0;
}

/*
 * uid's share with user_share=1: max/100 PDs, CQs and QPs, then EAGAIN,
 * in any of its files. Exit status: 0 or the failed step; with hold, the
 * objects stay until ready's peer reads and done closes.
 */
static int share_child(uid_t uid, int ready, int done)
{
	uint32_t pd, cq, h, i;
	int fd, fd2;
	char c = 0;

	if (become(uid))
		return 1;
	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	fd2 = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fd2 < 0)
		return 2;
	/* The first PD is for the QPs. */
	pd = sv_alloc_pd(fd2);
	if (!pd)
		return 3;
	for (i = 1; i < T_MAX_PD / 100; i++)
		if (alloc_pd_err(i & 1 ? fd2 : fd))
			return 4;
	if (alloc_pd_err(fd) != EAGAIN)
		return 5;
	if (alloc_pd_err(fd2) != EAGAIN)
		return 6;
	for (i = 0; i < T_MAX_CQ / 100; i++)
		if (create_cq(fd2, 0, &cq))
			return 8;
	if (create_cq(fd, 0, &h) != EAGAIN)
		return 9;
	for (i = 0; i < T_MAX_QP / 100; i++)
		if (create_qp(fd2, pd, cq, &h))
			return 10;
	if (create_qp(fd2, pd, cq, &h) != EAGAIN)
		return 11;
	if (write(ready, &c, 1) != 1 || read(done, &c, 1) != 0)
		return 12;
	return 0;
}

/* One uid cannot take more than user_share percent; another still can. */
TEST(per_uid_share)
{
	int ready[2], done[2], status, share, fd, i;
	uint32_t pd;
	pid_t a, b;
	char c;

	if (geteuid())
		SKIP(return, "needs root");
	share = sv_param("user_share");
	ASSERT_EQ(50, share) TH_LOG("user_share is not the default");
	ASSERT_EQ(-EINVAL, write_share("0"));
	ASSERT_EQ(-EINVAL, write_share("101"));
	ASSERT_EQ(0, write_share("1"));
	ASSERT_EQ(0, sv_dev_set("softverbs0", T_LIMITS));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(done));

	a = fork();
	ASSERT_LE(0, a);
	if (a == 0) {
		close(ready[0]);
		close(done[1]);
		_exit(share_child(65534, ready[1], done[0]));
	}
	/* uid 65534 holds its share... */
	if (read(ready[0], &c, 1) != 1) {
		waitpid(a, &status, 0);
		write_share("50");
		sv_dev_limits_reset("softverbs0");
		ASSERT_TRUE(0) TH_LOG("uid 65534 failed step %d",
				      WEXITSTATUS(status));
	}
	EXPECT_EQ(T_MAX_PD / 100, sv_obj_count("pd"));
	/* ...and uid 65533 gets the same, */
	b = fork();
	ASSERT_LE(0, b);
	if (b == 0) {
		close(ready[0]);
		close(done[1]);
		_exit(share_child(65533, ready[1], done[0]));
	}
	if (read(ready[0], &c, 1) != 1) {
		waitpid(b, &status, 0);
		write_share("50");
		sv_dev_limits_reset("softverbs0");
		ASSERT_TRUE(0) TH_LOG("uid 65533 failed step %d",
				      WEXITSTATUS(status));
	}
	EXPECT_EQ(2 * (T_MAX_PD / 100), sv_obj_count("pd"));
	EXPECT_EQ(2 * (T_MAX_QP / 100), sv_obj_count("qp"));
	/* ...while root (CAP_SYS_RESOURCE) is not limited by a share. */
	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (i = 0; i < T_MAX_PD / 100 + 10; i++)
		ASSERT_NE(0, pd = sv_alloc_pd(fd));
	close(fd);
	close(done[1]);
	ASSERT_EQ(a, waitpid(a, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("uid 65534: step %d", WEXITSTATUS(status));
	ASSERT_EQ(b, waitpid(b, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("uid 65533: step %d", WEXITSTATUS(status));
	EXPECT_EQ(0, write_share("50"));
	EXPECT_EQ(0, sv_dev_limits_reset("softverbs0"));
	EXPECT_EQ(0, sv_obj_count("pd"));
	EXPECT_EQ(0, sv_obj_count("cq"));
	EXPECT_EQ(0, sv_obj_count("qp"));
}

/*
 * In a cgroup with rdma.max "softverbs0 hca_handle=2 hca_object=4": a
 * third open is EAGAIN, a fifth object is EAGAIN (completion channels do
 * not count, as in uverbs), and rdma.current follows.
 */
static int rdmacg_child(const char *cg)
{
	uint32_t pd, cq, h, ch, srq;
	int fd, fd2, chfd;
	char cur[256];

	if (sv_cg_enter(cg, getpid()))
		return 1;
	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	fd2 = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fd2 < 0)
		return 2;
	if (open(SV_DEV0, O_RDWR | O_CLOEXEC) != -1 || errno != EAGAIN)
		return 3;
	pd = sv_alloc_pd(fd);
	if (!pd || create_cq(fd, 0, &cq) || create_ah(fd, pd, &h))
		return 4;
	if (create_channel(fd, &ch, &chfd))
		return 5;
	if (sv_create_srq(fd, pd, 1, 1, &srq))
		return 6;
	if (alloc_pd_err(fd2) != EAGAIN)
		return 7;
	if (create_cq(fd, 0, &h) != EAGAIN || create_ah(fd, pd, &h) != EAGAIN)
		return 8;
	if (create_qp(fd, pd, cq, &h) != EAGAIN)
		return 9;
	if (sv_cg_read(cg, "rdma.current", cur, sizeof(cur)) ||
	    !strstr(cur, "softverbs0 hca_handle=2 hca_object=4"))
		return 10;
	/* A slot back: the QP fits. */
	if (sv_destroy_srq(fd, srq))
		return 11;
	if (create_qp(fd, pd, cq, &h))
		return 12;
	close(chfd);
	close(fd);
	close(fd2);
	/* Nothing left charged: the pool shows zeros, or is gone. */
	if (sv_cg_read(cg, "rdma.current", cur, sizeof(cur)) ||
	    (strstr(cur, "softverbs0") &&
	     !strstr(cur, "softverbs0 hca_handle=0 hca_object=0")))
		return 13;
	return 0;
}

TEST(rdma_cgroup)
{
	char cg[64], cur[256];
	int ret, status;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root for cgroups");
	snprintf(cg, sizeof(cg), "sv_limits_test.%d", getpid());
	ret = sv_cg_create(cg, "rdma");
	if (ret == -ENOENT)
		SKIP(return, "no cgroup2 rdma controller");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, sv_cg_write(cg, "rdma.max",
				 "softverbs0 hca_handle=2 hca_object=4"));
	ASSERT_EQ(0, sv_cg_read(cg, "rdma.max", cur, sizeof(cur)));
	EXPECT_NE(NULL, strstr(cur, "softverbs0 hca_handle=2 hca_object=4"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(rdmacg_child(cg));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("failed step %d",
						 WEXITSTATUS(status));
	EXPECT_EQ(0, sv_obj_count("pd"));
	EXPECT_EQ(0, sv_obj_count("srq"));
	/*
	 * Back to max first: the rdma controller (6.1) does not free an
	 * unused pool that still has a limit when its cgroup is removed,
	 * and unregistering the device later would unlink it from the
	 * freed cgroup (use after free, for every RDMA device).
	 */
	EXPECT_EQ(0, sv_cg_write(cg, "rdma.max",
				 "softverbs0 hca_handle=max hca_object=max"));
	sv_cg_destroy(cg);
}

TEST_HARNESS_MAIN
