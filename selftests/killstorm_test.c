// SPDX-License-Identifier: GPL-2.0
/*
 * Kill storms (issue 15, "And prove it stays fixed"): processes SIGKILLed
 * at random points
 *   - mid-traffic: RC and UD pairs in one process, and an RC pair across
 *     two processes, running ping-pong sends and 1 MiB RDMA writes, with
 *     their objects made and destroyed over and over;
 *   - mid-registration: ibv_reg_mr/ibv_dereg_mr of 32 MiB in a loop;
 *   - during `svctl link add`/`link del` of a device bound to a dummy
 *     netdev, while other victims use that device;
 *   - mid-fuzz: the fuzzer of fuzz_test (sv_fuzz.h), scribbler and all.
 * The victims run in a fresh memory cgroup, each in its own process
 * group (killed as a group, so svctl and fork children die too); the test
 * is their subreaper and reaps everything. Afterwards:
 *   - the debugfs object counters of softverbs0 are where they started;
 *   - a survivor that ran traffic through the storm has the same VmPin
 *     (pinned pages) as before it, and its traffic still works;
 *   - the victims' cgroup is charged no more than KS_MEMCG_SLACK beyond
 *     its page cache (memory.stat "file": pages the victims read, such as
 *     svctl's binary, that stay cached). The slack covers the per-CPU
 *     charge stock that memcg keeps precharged (64 pages per CPU) and
 *     slab objects freed through RCU; a leaked ring or pinned MR is at
 *     least 2 MiB here.
 * run_tests.sh then unloads the module.
 *
 *   SV_KILLSTORM_ROUNDS=N   rounds per storm (default 6)
 *   SV_FUZZ_SEED=S          the seed (printed)
 */
#include <libgen.h>
#include <limits.h>
#include <sys/prctl.h>
#include <infiniband/verbs.h>

#include "sv_harness.h"
#include "sv_cg_test.h"
#include "sv_dp_test.h"
#include "sv_fuzz.h"

#define KS_CG		"sv_killstorm"
#define KS_MEMCG_SLACK	(1024 * 1024LL)
#define KS_NETDEV	"svksdummy0"
#define KS_DEV		"svks0"
#define KS_MAXV		8

static char svctl[PATH_MAX];

static int ks_rounds(void)
{
	const char *s = getenv("SV_KILLSTORM_ROUNDS");

	return s && atoi(s) > 0 ? atoi(s) : 6;
}

/* What the victims and the survivor share with the test. */
struct ks_shared {
	struct {
		uint32_t qpn, rkey, ready;
		uint64_t addr;
	} x[KS_MAXV];		/* cross-process RC pairs: 2k and 2k+1 */
	uint64_t iters;		/* traffic iterations, all victims */
	uint64_t regs;		/* registrations */
	uint64_t links;		/* link adds and dels that succeeded */
	long survivor_pin[2];	/* VmPin before and after the storm */
	int survivor_ok;	/* its traffic still ran at the end */
	int stop;		/* the survivor stops */
	struct fz_shared fz;	/* the fuzz victims' stats */
};

#define KS_SHLEN (sizeof(struct ks_shared) + KS_MAXV * sizeof(struct fz_stats))

/* ---- traffic ---- */

struct pair {
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b, *c, *d, *x;
	struct ibv_ah *ah;
	char *buf;
};

#define BUF_LEN		(4 << 20)
#define BULK		(1 << 20)

static struct ibv_qp *mk_qp(struct pair *p, enum ibv_qp_type t)
{
	struct ibv_qp_init_attr a = {
		.send_cq = p->cq, .recv_cq = p->cq, .qp_type = t,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(p->pd, &a);
}

static void pair_free(struct pair *p)
{
	if (p->ah)
		ibv_destroy_ah(p->ah);
	if (p->x)
		ibv_destroy_qp(p->x);
	if (p->d)
		ibv_destroy_qp(p->d);
	if (p->c)
		ibv_destroy_qp(p->c);
	if (p->b)
		ibv_destroy_qp(p->b);
	if (p->a)
		ibv_destroy_qp(p->a);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

#define ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	     IBV_ACCESS_REMOTE_READ)

/* RC a<->b, UD c->d, and x for a peer process (xi >= 0); 0 or -1. */
static int pair_setup(struct ibv_context *ctx, struct pair *p,
		      const union ibv_gid *gid, struct ks_shared *sh, int xi)
{
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1 };

	memset(p, 0, sizeof(*p));
	p->buf = aligned_alloc(4096, BUF_LEN);
	p->pd = ibv_alloc_pd(ctx);
	if (!p->buf || !p->pd)
		return -1;
	memset(p->buf, 0x5a, BUF_LEN);
	p->mr = ibv_reg_mr(p->pd, p->buf, BUF_LEN, ACC);
	p->cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!p->mr || !p->cq)
		return -1;
	p->a = mk_qp(p, IBV_QPT_RC);
	p->b = mk_qp(p, IBV_QPT_RC);
	p->c = mk_qp(p, IBV_QPT_UD);
	p->d = mk_qp(p, IBV_QPT_UD);
	if (!p->a || !p->b || !p->c || !p->d)
		return -1;
	if (qp_init(p->a, ACC) || qp_init(p->b, ACC) || qp_init(p->c, 0) ||
	    qp_init(p->d, 0) ||
	    qp_rtr_rts(p->a, p->b->qp_num, gid, 7, 1, 7) ||
	    qp_rtr_rts(p->b, p->a->qp_num, gid, 7, 1, 7) ||
	    qp_rtr_rts(p->c, 0, gid, 0, 0, 0) ||
	    qp_rtr_rts(p->d, 0, gid, 0, 0, 0))
		return -1;
	ah.grh.dgid = *gid;
	ah.grh.sgid_index = 1;
	ah.grh.hop_limit = 1;
	p->ah = ibv_create_ah(p->pd, &ah);
	if (!p->ah)
		return -1;
	if (xi < 0)
		return 0;
	/* Meet the peer process: publish ours, wait up to 2 s for theirs. */
	p->x = mk_qp(p, IBV_QPT_RC);
	if (!p->x || qp_init(p->x, ACC))
		return -1;
	__atomic_store_n(&sh->x[xi].ready, 0, __ATOMIC_SEQ_CST);
	sh->x[xi].qpn = p->x->qp_num;
	sh->x[xi].rkey = p->mr->rkey;
	sh->x[xi].addr = (uintptr_t)p->buf;
	__atomic_store_n(&sh->x[xi].ready, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 200; i++) {
		if (__atomic_load_n(&sh->x[xi ^ 1].ready, __ATOMIC_SEQ_CST))
			return qp_rtr_rts(p->x, sh->x[xi ^ 1].qpn, gid, 1, 1,
					  1) ? -1 : 0;
		usleep(10000);
	}
	ibv_destroy_qp(p->x);
	p->x = NULL;
	return 0;
}

/* Poll until n completions or 2 s; how many were successes. */
static int drain(struct ibv_cq *cq, int n)
{
	struct ibv_wc wc[8];
	int got = 0, ok = 0, k, i, spins;

	for (spins = 0; got < n && spins < 20000; spins++) {
		k = ibv_poll_cq(cq, 8, wc);
		if (k < 0)
			return -1;
		for (i = 0; i < k; i++)
			ok += wc[i].status == IBV_WC_SUCCESS;
		got += k;
		if (!k)
			usleep(100);
	}
	return ok;
}

/* One round of traffic on p; 0 if everything completed well. */
static int pair_traffic(struct pair *p, struct ks_shared *sh, int xi)
{
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sg;
	int ok = 0;

	/* RC ping-pong: a -> b and back. */
	post_recv(p->b, p->mr, p->buf + 2 * BULK, 4096, 1);
	post_send(p->a, IBV_WR_SEND, p->mr->lkey, p->buf, 4096, 2,
		  IBV_SEND_SIGNALED, 0, 0);
	ok += drain(p->cq, 2) == 2;
	post_recv(p->a, p->mr, p->buf, 4096, 3);
	post_send(p->b, IBV_WR_SEND, p->mr->lkey, p->buf + 2 * BULK, 4096, 4,
		  IBV_SEND_SIGNALED, 0, 0);
	ok += drain(p->cq, 2) == 2;
	/* Bulk RDMA write, 1 MiB. */
	post_send(p->a, IBV_WR_RDMA_WRITE, p->mr->lkey, p->buf, BULK, 5,
		  IBV_SEND_SIGNALED, (uintptr_t)p->buf + BULK, p->mr->rkey);
	ok += drain(p->cq, 1) == 1;
	/* UD c -> d. */
	post_recv(p->d, p->mr, p->buf + 3 * BULK, 4096 + 40, 6);
	sg.addr = (uintptr_t)p->buf;
	sg.length = 1024;
	sg.lkey = p->mr->lkey;
	wr.wr_id = 7;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = p->ah;
	wr.wr.ud.remote_qpn = p->d->qp_num;
	wr.wr.ud.remote_qkey = 0x1234;
	ibv_post_send(p->c, &wr, &bad);
	ok += drain(p->cq, 2) == 2;
	/* Across processes: write into the peer's buffer (it may be dead). */
	if (p->x) {
		post_send(p->x, IBV_WR_RDMA_WRITE, p->mr->lkey, p->buf, BULK,
			  8, IBV_SEND_SIGNALED, sh->x[xi ^ 1].addr + BULK,
			  sh->x[xi ^ 1].rkey);
		drain(p->cq, 1);
	}
	__atomic_fetch_add(&sh->iters, 1, __ATOMIC_RELAXED);
	return ok == 4 ? 0 : -1;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = sv_open_named(l, name);

	ibv_free_device_list(l);
	return ctx;
}

/* A victim: traffic on device name, objects made and destroyed. */
static int traffic_victim(struct ks_shared *sh, const char *name, int xi)
{
	struct ibv_context *ctx;
	union ibv_gid gid;
	struct pair p;
	int i;

	for (;;) {
		ctx = open_dev(name);
		if (!ctx || ibv_query_gid(ctx, 1, 1, &gid)) {
			if (ctx)
				ibv_close_device(ctx);
			usleep(5000);	/* the device comes and goes */
			continue;
		}
		if (!pair_setup(ctx, &p, &gid, sh, xi))
			for (i = 0; i < 5; i++)
				if (pair_traffic(&p, sh, xi))
					break;
		pair_free(&p);
		ibv_close_device(ctx);
	}
	return 0;
}

/* The survivor: traffic through the whole storm, VmPin before/after. */
static int survivor(struct ks_shared *sh)
{
	struct ibv_context *ctx = open_dev("softverbs0");
	union ibv_gid gid;
	struct pair p;
	int ok = 0;

	if (!ctx || ibv_query_gid(ctx, 1, 1, &gid) ||
	    pair_setup(ctx, &p, &gid, sh, -1))
		return 1;
	sh->survivor_pin[0] = sv_vm_pin_kb();
	while (!__atomic_load_n(&sh->stop, __ATOMIC_SEQ_CST))
		if (pair_traffic(&p, sh, -1))
			usleep(1000);
	ok = !pair_traffic(&p, sh, -1);
	sh->survivor_pin[1] = sv_vm_pin_kb();
	sh->survivor_ok = ok;
	pair_free(&p);
	ibv_close_device(ctx);
	return 0;
}

/* ---- registration ---- */

static int reg_victim(struct ks_shared *sh)
{
	struct ibv_context *ctx = open_dev("softverbs0");
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	size_t len;

	if (!pd)
		return 1;
	for (;;) {
		/* 1 to 32 MiB: some finish, some are cut off mid-pin. */
		len = ((size_t)(rand() % 32) + 1) << 20;
		char *b = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct ibv_mr *mr;

		if (b == MAP_FAILED)
			return 2;
		mr = ibv_reg_mr(pd, b, len, ACC);
		__atomic_fetch_add(&sh->regs, 1, __ATOMIC_RELAXED);
		/* Now and then keep it: the file's close must drop it. */
		if (mr && rand() % 4)
			ibv_dereg_mr(mr);
		else if (mr)
			continue;
		munmap(b, len);
	}
	return 0;
}

/* ---- link add/del ---- */

static int link_victim(struct ks_shared *sh)
{
	char cmd[PATH_MAX + 128];

	for (;;) {
		snprintf(cmd, sizeof(cmd), "%s link add " KS_DEV " netdev "
			 KS_NETDEV " >/dev/null 2>&1", svctl);
		if (!system(cmd))
			__atomic_fetch_add(&sh->links, 1, __ATOMIC_RELAXED);
		/* Long enough for the others to open it and send. */
		usleep(50000 + rand() % 250000);
		snprintf(cmd, sizeof(cmd), "%s link del " KS_DEV
			 " >/dev/null 2>&1", svctl);
		if (!system(cmd))
			__atomic_fetch_add(&sh->links, 1, __ATOMIC_RELAXED);
	}
	return 0;
}

/* ---- the storm ---- */

enum ks_kind { KS_TRAFFIC, KS_REG, KS_LINK, KS_FUZZ };

FIXTURE(ks) {
	struct ks_shared *sh;
	uint64_t rng;
	long base[16];
	char names[16][32];
	int nnames;
	pid_t survivor;
	int killed;
};

static int ks_objects(long counts[16], char names[16][32], int *n)
{
	FILE *fp = fopen(SV_DEBUGFS0 "/objects", "r");

	if (!fp)
		return -1;
	*n = 0;
	while (*n < 16 && fscanf(fp, "%31s %ld", names[*n], &counts[*n]) == 2)
		(*n)++;
	fclose(fp);
	return *n ? 0 : -1;
}

FIXTURE_SETUP(ks)
{
	char exe[PATH_MAX];
	ssize_t n;
	uint64_t seed = fz_seed_from_env();
	int ret;

	if (access(SV_DEBUGFS0 "/objects", R_OK))
		SKIP(return, "no debugfs (root and a mounted debugfs needed)");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = 0;
	snprintf(svctl, sizeof(svctl), "%s/../bin/svctl", dirname(exe));
	ret = sv_cg_create(KS_CG, "memory");
	if (ret == -ENOENT)
		SKIP(return, "no cgroup2 memory controller");
	ASSERT_EQ(0, ret);
	/* A fresh cgroup: nothing charged yet. */
	rmdir(SV_CG_ROOT "/" KS_CG);
	ASSERT_EQ(0, sv_cg_create(KS_CG, "memory"));
	printf("# killstorm: seed %#llx (SV_FUZZ_SEED reproduces)\n",
	       (unsigned long long)seed);
	fflush(stdout);
	self->rng = seed | 1;
	srand(seed);
	self->sh = mmap(NULL, KS_SHLEN, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset(self->sh, 0, KS_SHLEN);
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	ASSERT_EQ(0, ks_objects(self->base, self->names, &self->nnames));
	self->survivor = fork();
	ASSERT_LE(0, self->survivor);
	if (!self->survivor)
		_exit(survivor(self->sh));
	/* Let it set up before the storm. */
	for (n = 0; n < 500 && !self->sh->survivor_pin[0]; n++)
		usleep(10000);
}

FIXTURE_TEARDOWN(ks)
{
	if (self->survivor > 0)
		kill(self->survivor, SIGKILL);
	sv_cg_destroy(KS_CG);
}

/* Start one victim of kind in the cgroup, in its own process group. */
static pid_t ks_spawn(struct ks_shared *sh, enum ks_kind kind, int idx,
		      uint64_t seed)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	setpgid(0, 0);
	if (sv_cg_enter(KS_CG, getpid()))
		_exit(90);
	srand(seed + idx);
	switch (kind) {
	case KS_TRAFFIC:
		_exit(traffic_victim(sh, "softverbs0", idx < 4 ? idx : -1));
	case KS_REG:
		_exit(reg_victim(sh));
	case KS_LINK:
		/* One adds and deletes; the others use the device. */
		if (idx == 0)
			_exit(link_victim(sh));
		_exit(traffic_victim(sh, KS_DEV, -1));
	case KS_FUZZ: {
		struct fz_cfg cfg = {
			.seed = seed, .ops = 0, .shared_fd = -1,
			.scribbler = 1, .netlink = idx == 0,
			.sh = &sh->fz, .idx = idx,
		};

		_exit(fz_worker(&cfg));
	}
	}
	_exit(91);
}

/*
 * rounds x (nv victims of kind, SIGKILLed one by one at random points
 * between min_ms and max_ms). Returns the number killed.
 */
static int ks_storm(struct __test_metadata *_metadata, struct ks_shared *sh,
		    uint64_t *rng, enum ks_kind kind, int nv, int min_ms,
		    int max_ms, pid_t survivor)
{
	int r, i, j, killed = 0, rounds = ks_rounds();
	pid_t v[KS_MAXV], order[KS_MAXV], t;

	for (r = 0; r < rounds; r++) {
		memset(sh->x, 0, sizeof(sh->x));
		for (i = 0; i < nv; i++) {
			v[i] = ks_spawn(sh, kind, i, fz_next(rng));
			ASSERT_LT(0, v[i]);
			setpgid(v[i], v[i]);
		}
		/* Each dies at a random point of [min_ms, max_ms]. */
		memcpy(order, v, sizeof(order));
		for (i = nv - 1; i > 0; i--) {
			j = fz_next(rng) % (i + 1);
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		usleep(min_ms * 1000);
		for (i = 0; i < nv; i++) {
			usleep(fz_next(rng) % ((max_ms - min_ms) * 1000 / nv));
			kill(-order[i], SIGKILL);
			kill(order[i], SIGKILL);
		}
		/* Survivor excluded: wait for exactly our victims first. */
		for (i = 0; i < nv; i++) {
			int st;

			if (waitpid(v[i], &st, 0) == v[i] &&
			    WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
				killed++;
			else
				TH_LOG("victim %d: status %#x", v[i], st);
		}
	}
	(void)survivor;
	return killed;
}

/* Orphans (svctl, fork children) are ours: reap them, non-blocking. */
static void ks_reap_orphans(pid_t survivor)
{
	pid_t pid;
	int st, tries;

	for (tries = 0; tries < 500; tries++) {
		pid = waitpid(-1, &st, WNOHANG | __WALL);
		if (pid == survivor)
			continue;
		if (pid < 0)
			return;
		if (!pid) {
			char ev[256];

			/* Nothing left in the cgroup: done. */
			if (!sv_cg_read(KS_CG, "cgroup.events", ev, sizeof(ev)) &&
			    strstr(ev, "populated 0"))
				return;
			usleep(10000);
		}
	}
}

/* The checks after a storm. */
static void ks_check(struct __test_metadata *_metadata, FIXTURE_DATA(ks) *self,
		     const char *what, int killed)
{
	long now[16];
	char nn[16][32];
	long long cur = -1, file = 0, peak;
	int n, i, tries, same = 0;

	ks_reap_orphans(self->survivor);
	for (tries = 0; tries < 1000 && !same; tries++) {
		ASSERT_EQ(0, ks_objects(now, nn, &n));
		same = n == self->nnames;
		for (i = 0; same && i < n; i++)
			same = now[i] == self->base[i];
		if (!same)
			usleep(10000);
	}
	for (i = 0; !same && i < n; i++)
		if (now[i] != self->base[i])
			TH_LOG("%s: %s %ld, was %ld", what, nn[i], now[i],
			       self->base[i]);
	EXPECT_TRUE(same);
	/* Memory charges: RCU frees and the charge stock settle. */
	for (tries = 0; tries < 300; tries++) {
		cur = sv_cg_read_ll(KS_CG, "memory.current");
		file = sv_cg_read_key(KS_CG, "memory.stat", "file");
		if (cur - file <= KS_MEMCG_SLACK)
			break;
		usleep(10000);
	}
	peak = sv_cg_read_ll(KS_CG, "memory.peak");
	printf("# killstorm %s: %d processes killed; memcg now %lld bytes "
	       "(%lld page cache), peak %lld\n", what, killed, cur, file, peak);
	fflush(stdout);
	EXPECT_LE(cur - file, KS_MEMCG_SLACK);
	self->killed += killed;
}

static void ks_finish(struct __test_metadata *_metadata, FIXTURE_DATA(ks) *self)
{
	int st;

	__atomic_store_n(&self->sh->stop, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(self->survivor, waitpid(self->survivor, &st, 0));
	self->survivor = -1;
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("survivor: status %#x", st);
	EXPECT_TRUE(self->sh->survivor_ok) TH_LOG("survivor's traffic failed");
	EXPECT_EQ(self->sh->survivor_pin[0], self->sh->survivor_pin[1])
		TH_LOG("survivor's VmPin moved");
	printf("# killstorm: survivor VmPin %ld kB before and %ld kB after; "
	       "%llu traffic rounds, %llu registrations, %llu link add/del\n",
	       self->sh->survivor_pin[0], self->sh->survivor_pin[1],
	       (unsigned long long)self->sh->iters,
	       (unsigned long long)self->sh->regs,
	       (unsigned long long)self->sh->links);
	fflush(stdout);
}

TEST_F_TIMEOUT(ks, traffic, 200)
{
	int k = ks_storm(_metadata, self->sh, &self->rng, KS_TRAFFIC, 4, 300,
			 1500, self->survivor);

	ks_finish(_metadata, self);
	ks_check(_metadata, self, "traffic", k);
}

TEST_F_TIMEOUT(ks, registration, 200)
{
	int k = ks_storm(_metadata, self->sh, &self->rng, KS_REG, 3, 300,
			 1500, self->survivor);

	ks_finish(_metadata, self);
	ks_check(_metadata, self, "registration", k);
}

TEST_F_TIMEOUT(ks, link_add_del, 200)
{
	char cmd[PATH_MAX + 64];
	int k;

	ASSERT_EQ(0, system("ip link add " KS_NETDEV " type dummy && "
			    "ip link set " KS_NETDEV " up"));
	k = ks_storm(_metadata, self->sh, &self->rng, KS_LINK, 3, 500, 2500,
		     self->survivor);
	snprintf(cmd, sizeof(cmd), "%s link del " KS_DEV " >/dev/null 2>&1",
		 svctl);
	if (system(cmd) == -1)
		TH_LOG("svctl link del: %s", strerror(errno));
	ks_finish(_metadata, self);
	ks_check(_metadata, self, "link add/del", k);
	EXPECT_EQ(0, system("ip link del " KS_NETDEV));
}

TEST_F_TIMEOUT(ks, fuzz, 200)
{
	char cmd[PATH_MAX + 128];
	unsigned int i;
	int k;

	uint64_t ops = 0;

	k = ks_storm(_metadata, self->sh, &self->rng, KS_FUZZ, 3, 300, 2000,
		     self->survivor);
	for (i = 0; i < 3; i++)
		ops += self->sh->fz.st[i].ops;
	printf("# killstorm fuzz: the victims ran %llu fuzz steps\n",
	       (unsigned long long)ops);
	/* Devices netlink fuzzing made (svfz0, svfz1) go. */
	for (i = 1; i < 3; i++) {
		snprintf(cmd, sizeof(cmd), "%s link del %s >/dev/null 2>&1",
			 svctl, fz_devnames[i]);
		if (system(cmd) == -1)
			TH_LOG("svctl link del: %s", strerror(errno));
	}
	snprintf(cmd, sizeof(cmd), "%s dev set softverbs0 idle_us $(cat "
		 "/sys/module/softverbs/parameters/idle_us)", svctl);
	EXPECT_EQ(0, system(cmd));
	ks_finish(_metadata, self);
	ks_check(_metadata, self, "fuzz", k);
}

TEST_HARNESS_MAIN
