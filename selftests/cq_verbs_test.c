// SPDX-License-Identifier: GPL-2.0
/*
 * CQs, completion channels and async events through the verbs API
 * (libsoftverbs): empty polls, arming, non-blocking event reads, the
 * documented errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <time.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "sv_harness.h"
#include "sv_qp_test.h"
#include "sv_dp_test.h"
#include "sv_test.h"

FIXTURE(ctx) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
};

FIXTURE_SETUP(ctx)
{
	int n;

	self->list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, self->list) TH_LOG("%s", strerror(errno));
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, ibv_query_device(self->ctx, &self->attr));
}

FIXTURE_TEARDOWN(ctx)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	ibv_free_device_list(self->list);
}

TEST_F(ctx, create_poll_destroy)
{
	struct ibv_wc wc[4];
	struct ibv_cq *cq;
	int ctxv;

	cq = ibv_create_cq(self->ctx, 10, &ctxv, NULL, 0);
	ASSERT_NE(NULL, cq) TH_LOG("%s", strerror(errno));
	EXPECT_LE(10, cq->cqe);
	EXPECT_EQ(self->ctx, cq->context);
	EXPECT_EQ(&ctxv, cq->cq_context);
	EXPECT_EQ(NULL, cq->channel);
	EXPECT_EQ(0, ibv_poll_cq(cq, 4, wc));
	EXPECT_EQ(0, ibv_poll_cq(cq, 0, wc));
	EXPECT_EQ(0, ibv_req_notify_cq(cq, 0));
	EXPECT_EQ(0, ibv_req_notify_cq(cq, 1));
	EXPECT_EQ(0, ibv_poll_cq(cq, 4, wc));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(ctx, create_limits)
{
	struct ibv_cq *cq;

	EXPECT_EQ(1, self->ctx->num_comp_vectors);
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, 0, NULL, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, -1, NULL, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, self->attr.max_cqe + 1,
				      NULL, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, 1, NULL, NULL,
				      self->ctx->num_comp_vectors));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, 1, NULL, NULL, -1));
	EXPECT_EQ(EINVAL, errno);
	cq = ibv_create_cq(self->ctx, self->attr.max_cqe, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	EXPECT_EQ(self->attr.max_cqe, cq->cqe);
	EXPECT_EQ(EINVAL, ibv_resize_cq(cq, 0));
	EXPECT_EQ(EINVAL, ibv_resize_cq(cq, self->attr.max_cqe + 1));
	EXPECT_EQ(0, ibv_resize_cq(cq, 16));
	EXPECT_LE(16, cq->cqe);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(ctx, channel)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq, *got;
	struct pollfd pfd;
	void *cookie;

	ch = ibv_create_comp_channel(self->ctx);
	ASSERT_NE(NULL, ch) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(self->ctx, ch->context);
	EXPECT_LE(0, ch->fd);
	cq = ibv_create_cq(self->ctx, 16, &cookie, ch, 0);
	ASSERT_NE(NULL, cq);
	EXPECT_EQ(ch, cq->channel);
	EXPECT_EQ(EBUSY, ibv_destroy_comp_channel(ch));

	EXPECT_EQ(0, ibv_req_notify_cq(cq, 0));
	ASSERT_EQ(0, fcntl(ch->fd, F_SETFL,
			   fcntl(ch->fd, F_GETFL) | O_NONBLOCK));
	EXPECT_EQ(-1, ibv_get_cq_event(ch, &got, &cookie));
	EXPECT_EQ(EAGAIN, errno);
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	EXPECT_EQ(0, poll(&pfd, 1, 0));

	ibv_ack_cq_events(cq, 0);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
}

TEST_F(ctx, async_fd)
{
	struct ibv_async_event ev;

	ASSERT_LE(0, self->ctx->async_fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(self->ctx->async_fd, F_GETFD));
	ASSERT_EQ(0, fcntl(self->ctx->async_fd, F_SETFL,
			   fcntl(self->ctx->async_fd, F_GETFL) | O_NONBLOCK));
	EXPECT_EQ(-1, ibv_get_async_event(self->ctx, &ev));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(ctx, cq_ex)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 8,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};
	struct ibv_poll_cq_attr pa = {};
	struct ibv_cq_ex *cq;

	cq = ibv_create_cq_ex(self->ctx, &a);
	ASSERT_NE(NULL, cq) TH_LOG("%s", strerror(errno));
	EXPECT_LE(8, cq->cqe);
	EXPECT_EQ(ENOENT, ibv_start_poll(cq, &pa));
	pa.comp_mask = 1;
	EXPECT_EQ(EINVAL, ibv_start_poll(cq, &pa));
	EXPECT_EQ(0, ibv_req_notify_cq(ibv_cq_ex_to_cq(cq), 0));
	EXPECT_EQ(0, ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1,
				 &(struct ibv_wc){}));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));

	/* Unsupported: parent domains, unknown flags. */
	a.flags = 1 << 7;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);
	a.flags = 0;
	a.comp_mask = 1 << 5;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	a.comp_mask = 0;
	a.cqe = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * Empty polls yield the CPU after SOFTVERBS_POLL_YIELD_US (default 200)
 * of nothing: counted by trapping sched_yield() with seccomp in a child
 * that polls an empty CQ for 20 ms. Its exit status is the count (at
 * most 250), or 255 on a setup failure.
 */
static volatile sig_atomic_t yields;

static void count_yield(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_syscall == __NR_sched_yield)
		yields++;
}

static int trap_sched_yield(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sched_yield, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };
	struct sigaction sa = {
		.sa_sigaction = count_yield, .sa_flags = SA_SIGINFO,
	};

	if (sigaction(SIGSYS, &sa, NULL) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void empty_poll_child(const char *env, bool ex)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 4 };
	struct ibv_poll_cq_attr pa = {};
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_cq_ex *cq;
	struct ibv_wc wc;
	double end;
	int n;

	if (env)
		setenv("SOFTVERBS_POLL_YIELD_US", env, 1);
	else
		unsetenv("SOFTVERBS_POLL_YIELD_US");
	list = ibv_get_device_list(&n);
	ctx = list ? sv_open_named(list, "softverbs0") : NULL;
	cq = ctx ? ibv_create_cq_ex(ctx, &a) : NULL;
	if (!cq || trap_sched_yield())
		_exit(255);
	end = now_s() + 0.02;
	while (now_s() < end) {
		if (ex ? ibv_start_poll(cq, &pa) != ENOENT :
			 ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc) != 0)
			_exit(255);
	}
	_exit(yields > 250 ? 250 : yields);
}

static int empty_poll_yields(const char *env, bool ex)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		empty_poll_child(env, ex);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(empty_polls_yield_the_cpu)
{
	int n;

	/* 20 ms of empty polls: a yield about every 200 us. */
	n = empty_poll_yields(NULL, false);
	ASSERT_NE(255, n);
	EXPECT_LE(2, n);
	EXPECT_GE(100, n);
	n = empty_poll_yields(NULL, true);
	EXPECT_LE(2, n);
	EXPECT_GE(100, n);
	n = empty_poll_yields("1000", false);
	EXPECT_LE(1, n);
	EXPECT_GE(20, n);
	/* Never, and not within a second. */
	EXPECT_EQ(0, empty_poll_yields("0", false));
	EXPECT_EQ(0, empty_poll_yields("0", true));
	EXPECT_EQ(0, empty_poll_yields("1000000", false));
}

TEST_F(ctx, close_with_live_cqs)
{
	int cqs0 = sv_obj_count("cq"), chs0 = sv_obj_count("comp_channel");
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);

	ASSERT_NE(NULL, ch);
	ASSERT_NE(NULL, ibv_create_cq(self->ctx, 4, NULL, ch, 0));
	ASSERT_NE(NULL, ibv_create_cq(self->ctx, 4, NULL, NULL, 0));
	/* Closing the context releases the kernel objects. */
	EXPECT_EQ(0, ibv_close_device(self->ctx));
	self->ctx = NULL;
	if (cqs0 < 0)
		SKIP(return, "no debugfs object counters");
	EXPECT_EQ(cqs0, sv_obj_count("cq"));
	EXPECT_EQ(chs0, sv_obj_count("comp_channel"));
}

/* ---- With completions, through the test-only SV_IOC_TEST_CQ_PUSH ---- */

#define SV_TEST_HOOKS	"/sys/module/softverbs/parameters/test_hooks"

static int set_test_hooks(const char *v)
{
	int fd = open(SV_TEST_HOOKS, O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, v, 1) == 1 ? 0 : -1;
	close(fd);
	return ret;
}

static int push(struct ibv_cq *cq, uint64_t wr_id, uint32_t status)
{
	struct sv_test_cq_push p = { .size = sizeof(p), .handle = cq->handle };

	p.cqe.wr_id = wr_id;
	p.cqe.status = status;
	p.cqe.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	p.cqe.byte_len = 4096;
	p.cqe.imm_data = htonl(0xabcd);
	p.cqe.qp_num = 17;
	p.cqe.src_qp = 18;
	p.cqe.wc_flags = IBV_WC_WITH_IMM | IBV_WC_GRH;
	p.cqe.pkey_index = 1;
	p.cqe.slid = 2;
	p.cqe.sl = 3;
	p.cqe.dlid_path_bits = 4;
	p.cqe.flow_tag = 99;
	return ioctl(cq->context->cmd_fd, SV_IOC_TEST_CQ_PUSH, &p);
}

FIXTURE(hook) {
	struct ibv_device **list;
	struct ibv_context *ctx;
};

FIXTURE_SETUP(hook)
{
	int n;

	self->ctx = NULL;
	self->list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, self->list);
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	if (set_test_hooks("1"))
		SKIP(return, "no test_hooks module parameter");
}

FIXTURE_TEARDOWN(hook)
{
	set_test_hooks("0");
	if (self->ctx)
		ibv_close_device(self->ctx);
	ibv_free_device_list(self->list);
}

TEST_F(hook, poll_cq)
{
	struct ibv_wc wc[8];
	struct ibv_cq *cq;
	int i;

	cq = ibv_create_cq(self->ctx, 8, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, push(cq, 10 + i, i == 4 ? IBV_WC_REM_ACCESS_ERR :
				  IBV_WC_SUCCESS));
	memset(wc, 0xff, sizeof(wc));
	ASSERT_EQ(2, ibv_poll_cq(cq, 2, wc));
	EXPECT_EQ(10, wc[0].wr_id);
	EXPECT_EQ(11, wc[1].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc[0].opcode);
	EXPECT_EQ(0, wc[0].vendor_err);
	EXPECT_EQ(4096, wc[0].byte_len);
	EXPECT_EQ(htonl(0xabcd), wc[0].imm_data);
	EXPECT_EQ(17, wc[0].qp_num);
	EXPECT_EQ(18, wc[0].src_qp);
	EXPECT_EQ(IBV_WC_WITH_IMM | IBV_WC_GRH, wc[0].wc_flags);
	EXPECT_EQ(1, wc[0].pkey_index);
	EXPECT_EQ(2, wc[0].slid);
	EXPECT_EQ(3, wc[0].sl);
	EXPECT_EQ(4, wc[0].dlid_path_bits);
	ASSERT_EQ(3, ibv_poll_cq(cq, 8, wc));
	EXPECT_EQ(12, wc[0].wr_id);
	EXPECT_EQ(14, wc[2].wr_id);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc[2].status);
	EXPECT_EQ(0, ibv_poll_cq(cq, 8, wc));
	/* The slots were handed back: 8 more fit. */
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, push(cq, 100 + i, 0));
	ASSERT_EQ(8, ibv_poll_cq(cq, 8, wc));
	EXPECT_EQ(107, wc[7].wr_id);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(hook, resize_keeps_completions)
{
	struct ibv_wc wc[8];
	struct ibv_cq *cq;
	int i;

	cq = ibv_create_cq(self->ctx, 4, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, push(cq, i, 0));
	ASSERT_EQ(1, ibv_poll_cq(cq, 1, wc));
	EXPECT_EQ(EINVAL, ibv_resize_cq(cq, 2));
	ASSERT_EQ(0, ibv_resize_cq(cq, 8));
	EXPECT_EQ(8, cq->cqe);
	for (i = 4; i < 9; i++)
		ASSERT_EQ(0, push(cq, i, 0));
	ASSERT_EQ(8, ibv_poll_cq(cq, 8, wc));
	for (i = 0; i < 8; i++)
		EXPECT_EQ(i + 1, wc[i].wr_id);
	EXPECT_EQ(0, ibv_poll_cq(cq, 8, wc));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(hook, cq_event_roundtrip)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq, *got = NULL;
	struct ibv_wc wc;
	void *cookie = NULL;
	int tag;

	ch = ibv_create_comp_channel(self->ctx);
	ASSERT_NE(NULL, ch);
	cq = ibv_create_cq(self->ctx, 4, &tag, ch, 0);
	ASSERT_NE(NULL, cq);

	/* The classic loop: arm, poll, wait, ack, re-arm, poll. */
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
	EXPECT_EQ(0, ibv_poll_cq(cq, 1, &wc));
	ASSERT_EQ(0, push(cq, 1, 0));
	ASSERT_EQ(0, ibv_get_cq_event(ch, &got, &cookie));	/* blocks */
	EXPECT_EQ(cq, got);
	EXPECT_EQ(&tag, cookie);
	ibv_ack_cq_events(got, 1);
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
	ASSERT_EQ(1, ibv_poll_cq(cq, 1, &wc));
	EXPECT_EQ(1, wc.wr_id);

	/* A second event left un-acked until just before destroy. */
	ASSERT_EQ(0, push(cq, 2, 0));
	ASSERT_EQ(0, ibv_get_cq_event(ch, &got, &cookie));
	ibv_ack_cq_events(got, 1);
	EXPECT_EQ(2, cq->comp_events_completed);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
}

/* Is there an event on ch within ms milliseconds? Takes and acks it. */
static int event_within(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *got;
	void *cookie;

	if (poll(&pfd, 1, ms) != 1)
		return 0;
	if (ibv_get_cq_event(ch, &got, &cookie))
		return -1;
	ibv_ack_cq_events(got, 1);
	return 1;
}

static int moderate(struct ibv_cq *cq, uint16_t count, uint16_t period)
{
	struct ibv_modify_cq_attr a = {
		.attr_mask = IBV_CQ_ATTR_MODERATE,
		.moderate = { .cq_count = count, .cq_period = period },
	};

	return ibv_modify_cq(cq, &a);
}

/* ibv_modify_cq(): an armed CQ's event waits for cq_count completions. */
TEST_F(hook, moderation_by_count)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);
	struct ibv_cq *cq;
	int i;

	ASSERT_NE(NULL, ch);
	cq = ibv_create_cq(self->ctx, 16, NULL, ch, 0);
	ASSERT_NE(NULL, cq);
	ASSERT_EQ(0, moderate(cq, 4, 0));
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, push(cq, i, 0));
	EXPECT_EQ(0, event_within(ch, 200));
	ASSERT_EQ(0, push(cq, 3, 0));
	EXPECT_EQ(1, event_within(ch, 5000));
	/* The count starts again at the next arm. */
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
	ASSERT_EQ(0, push(cq, 4, 0));
	EXPECT_EQ(0, event_within(ch, 200));
	/* Back to an event per arm: what waited gets its event now. */
	ASSERT_EQ(0, moderate(cq, 1, 0));
	EXPECT_EQ(1, event_within(ch, 5000));
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
	ASSERT_EQ(0, push(cq, 5, 0));
	EXPECT_EQ(1, event_within(ch, 5000));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
}

/*
 * Moderate cq to (count, period), arm it, push n completions: the
 * microseconds until its event, or -1 if none came within 5 s.
 */
static long event_delay_us(struct ibv_cq *cq, struct ibv_comp_channel *ch,
			   uint16_t count, uint16_t period, int n)
{
	struct timespec t0, t1;
	int i;

	if (moderate(cq, count, period) || ibv_req_notify_cq(cq, 0))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		if (push(cq, i, 0))
			return -1;
	if (event_within(ch, 5000) != 1)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0.tv_sec) * 1000000 +
	       (t1.tv_nsec - t0.tv_nsec) / 1000;
}

/* ... or for cq_period microseconds after the first of them. */
TEST_F(hook, moderation_by_period)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);
	struct ibv_cq *cq;

	ASSERT_NE(NULL, ch);
	cq = ibv_create_cq(self->ctx, 16, NULL, ch, 0);
	ASSERT_NE(NULL, cq);
	EXPECT_LE(4000, event_delay_us(cq, ch, 100, 4000, 2));
	/* Count 0: the period alone. */
	EXPECT_LE(2000, event_delay_us(cq, ch, 0, 2000, 1));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
}

TEST_F(hook, moderation_errors)
{
	struct ibv_modify_cq_attr a = { .attr_mask = IBV_CQ_ATTR_MODERATE };
	struct sv_modify_cq m = { .size = sizeof(m),
				  .attr_mask = SV_CQ_MODERATE };
	struct ibv_device_attr_ex ex;
	struct ibv_cq *cq;

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_EQ(SV_MAX_CQ_MOD_COUNT, ex.cq_mod_caps.max_cq_count);
	EXPECT_EQ(SV_MAX_CQ_MOD_PERIOD, ex.cq_mod_caps.max_cq_period);
	cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	a.moderate.cq_period = ex.cq_mod_caps.max_cq_period + 1;
	EXPECT_EQ(EINVAL, ibv_modify_cq(cq, &a));
	a.moderate.cq_period = 0;
	a.attr_mask = 0;
	EXPECT_EQ(EINVAL, ibv_modify_cq(cq, &a));
	a.attr_mask = IBV_CQ_ATTR_MODERATE << 1;
	EXPECT_EQ(EINVAL, ibv_modify_cq(cq, &a));
	a.attr_mask = IBV_CQ_ATTR_MODERATE;
	a.moderate.cq_count = ex.cq_mod_caps.max_cq_count;
	a.moderate.cq_period = ex.cq_mod_caps.max_cq_period;
	EXPECT_EQ(0, ibv_modify_cq(cq, &a));

	m.handle = cq->handle;
	m.reserved = 1;
	EXPECT_EQ(EINVAL, sv_ioc(cq->context->cmd_fd, SV_IOC_MODIFY_CQ, &m));
	m.reserved = 0;
	m.handle = 0x7ffffff0;
	EXPECT_EQ(ENOENT, sv_ioc(cq->context->cmd_fd, SV_IOC_MODIFY_CQ, &m));

	/* Destroyed with its timer running. */
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
	ASSERT_EQ(0, push(cq, 1, 0));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(hook, cq_ex_poll)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 4,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_FLOW_TAG |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct ibv_poll_cq_attr pa = {};
	struct ibv_cq_ex *cq;

	cq = ibv_create_cq_ex(self->ctx, &a);
	ASSERT_NE(NULL, cq);
	ASSERT_EQ(0, push(ibv_cq_ex_to_cq(cq), 5, 0));
	ASSERT_EQ(0, push(ibv_cq_ex_to_cq(cq), 6, IBV_WC_WR_FLUSH_ERR));
	ASSERT_EQ(0, ibv_start_poll(cq, &pa));
	EXPECT_EQ(5, cq->wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, cq->status);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, ibv_wc_read_opcode(cq));
	EXPECT_EQ(4096, ibv_wc_read_byte_len(cq));
	EXPECT_EQ(htonl(0xabcd), ibv_wc_read_imm_data(cq));
	EXPECT_EQ(17, ibv_wc_read_qp_num(cq));
	EXPECT_EQ(18, ibv_wc_read_src_qp(cq));
	EXPECT_EQ(IBV_WC_WITH_IMM | IBV_WC_GRH, ibv_wc_read_wc_flags(cq));
	EXPECT_EQ(2, ibv_wc_read_slid(cq));
	EXPECT_EQ(3, ibv_wc_read_sl(cq));
	EXPECT_EQ(4, ibv_wc_read_dlid_path_bits(cq));
	EXPECT_EQ(99, ibv_wc_read_flow_tag(cq));
	EXPECT_NE(0, ibv_wc_read_completion_wallclock_ns(cq));
	ASSERT_EQ(0, ibv_next_poll(cq));
	EXPECT_EQ(6, cq->wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, cq->status);
	EXPECT_EQ(ENOENT, ibv_next_poll(cq));
	ibv_end_poll(cq);
	EXPECT_EQ(ENOENT, ibv_start_poll(cq, &pa));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
}

TEST_F(hook, async_cq_err)
{
	struct ibv_async_event ev;
	struct ibv_cq *cq;
	int i;

	cq = ibv_create_cq(self->ctx, 2, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, push(cq, i, 0));
	EXPECT_EQ(-1, push(cq, 2, 0));
	EXPECT_EQ(ENOSPC, errno);
	ASSERT_EQ(0, ibv_get_async_event(self->ctx, &ev));
	EXPECT_EQ(IBV_EVENT_CQ_ERR, ev.event_type);
	EXPECT_EQ(cq, ev.element.cq);
	ibv_ack_async_event(&ev);
	EXPECT_EQ(1, cq->async_events_completed);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_HARNESS_MAIN
