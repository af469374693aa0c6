// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzer (issue 15, "And prove it stays fixed"): several processes
 * run the engine of sv_fuzz.h against softverbs0 at once -- three as
 * root, one as uid 65534, each with its own files and all sharing one
 * file opened by the test -- while the test watches. At the end every
 * worker and every fork child must have exited normally, no mapping the
 * kernel accepted may have faulted, the debugfs object counters are back
 * where they started, each worker's VmPin is back to its start and the
 * test's own is unchanged. run_tests.sh then unloads the module.
 *
 *   SV_FUZZ_OPS=N    steps in all (default 24000: the short form that the
 *                    suite runs; the long form is e.g. 1000000)
 *   SV_FUZZ_SEED=S   the seed (printed at the start of every run)
 *
 * A second test races threads that close and reopen a file (dup2 onto
 * the same descriptor) against threads creating and destroying objects
 * on it, in four processes.
 */
#include <sys/resource.h>

#include "sv_harness.h"
#include "sv_fuzz.h"

#define FZ_DEFAULT_OPS	24000ULL
#define FZ_WORKERS	4

static uint64_t fz_total_ops(void)
{
	const char *s = getenv("SV_FUZZ_OPS");

	return s && *s ? strtoull(s, NULL, 0) : FZ_DEFAULT_OPS;
}

/* Every object type's count in debugfs; 0 or -1. */
static int read_objects(long counts[16], char names[16][32], int *n)
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

/* Wait up to 10 s for the counters to come back; the first differing. */
static int objects_back(long base[16], char names[16][32], int n,
			char *what, size_t len)
{
	long now[16];
	char nn[16][32];
	int i, m, tries;

	for (tries = 0; tries < 1000; tries++) {
		if (read_objects(now, nn, &m) || m != n)
			return -1;
		for (i = 0; i < n; i++)
			if (now[i] != base[i])
				break;
		if (i == n)
			return 0;
		snprintf(what, len, "%s: %ld, was %ld", names[i], now[i],
			 base[i]);
		usleep(10000);
	}
	return -1;
}

/* Delete the devices netlink fuzzing may have made, restore idle_us. */
static void nl_cleanup(void)
{
	static struct fz fz;
	struct fz_cfg cfg = { .idx = 0 };
	char idle[32] = "1000";
	unsigned int i;

	fz.cfg = &cfg;
	fz.st = &fz.local;
	if (fz_nl_open(&fz))
		return;
	for (i = 0; i < 3; i++)
		fz_nl_simple(&fz, SV_NL_CMD_LINK_DEL, fz_devnames[i], -1);
	sv_read_attr("/sys/module/softverbs/parameters/idle_us", idle,
		     sizeof(idle));
	fz_nl_simple(&fz, SV_NL_CMD_DEV_SET, "softverbs0", atoi(idle));
	mnl_socket_close(fz.nl);
}

FIXTURE(fuzz) {
	int unused;
};

FIXTURE_SETUP(fuzz)
{
	if (access(SV_DEBUGFS0 "/objects", R_OK))
		SKIP(return, "no debugfs (root and a mounted debugfs needed)");
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, ioctls_rings_mmap_netlink, 280)
{
	uint64_t seed = fz_seed_from_env(), ops = fz_total_ops();
	long base[16], pin0, pin1;
	char names[16][32], what[96] = "";
	struct fz_shared *sh;
	struct fz_stats sum = {};
	pid_t pids[FZ_WORKERS];
	int i, n, shared_fd, bad = 0, tries;
	struct timespec t0, t1;
	size_t shlen = sizeof(*sh) + FZ_WORKERS * sizeof(struct fz_stats);

	printf("# fuzz: seed %#llx, %llu operations "
	       "(SV_FUZZ_SEED=%#llx SV_FUZZ_OPS=%llu reproduces)\n",
	       (unsigned long long)seed, (unsigned long long)ops,
	       (unsigned long long)seed, (unsigned long long)ops);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, read_objects(base, names, &n));
	pin0 = sv_vm_pin_kb();
	sh = mmap(NULL, shlen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, shlen);
	shared_fd = open(SV_DEV0, O_RDWR);
	ASSERT_LE(0, shared_fd);

	for (i = 0; i < FZ_WORKERS; i++) {
		struct fz_cfg cfg = {
			.seed = seed, .ops = ops / FZ_WORKERS,
			.shared_fd = shared_fd, .sh = sh, .idx = i,
			/* worker 2 is uid 65534; 0 and 2 speak netlink */
			.nobody = i == 2, .netlink = i == 0 || i == 2,
			.scribbler = i != 3,
		};

		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			_exit(fz_worker(&cfg));
	}
	/* Once every worker closed its files, the shared one goes too. */
	for (tries = 0; __atomic_load_n(&sh->closed, __ATOMIC_SEQ_CST) <
			FZ_WORKERS; tries++) {
		int st;

		/* A worker that died will never count itself. */
		for (i = 0; i < FZ_WORKERS; i++)
			if (pids[i] > 0 && waitpid(pids[i], &st, WNOHANG) ==
			    pids[i]) {
				TH_LOG("worker %d died early: status %#x", i, st);
				pids[i] = -1;
				bad++;
				sh->closed++;
			}
		usleep(10000);
	}
	close(shared_fd);
	__atomic_store_n(&sh->released, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < FZ_WORKERS; i++) {
		int st;

		if (pids[i] < 0)
			continue;
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			TH_LOG("worker %d: status %#x", i, st);
			bad++;
		}
	}
	nl_cleanup();
	clock_gettime(CLOCK_MONOTONIC, &t1);

	for (i = 0; i < FZ_WORKERS; i++) {
		struct fz_stats *s = &sh->st[i];

		sum.ops += s->ops;
		sum.ioctls += s->ioctls;
		sum.raw += s->raw;
		sum.dp += s->dp;
		sum.scribbles += s->scribbles;
		sum.mmaps += s->mmaps;
		sum.nl += s->nl;
		sum.forks += s->forks;
		sum.reopens += s->reopens;
		sum.ok += s->ok;
		sum.bad_children += s->bad_children;
		sum.faults += s->faults;
		sum.rts += s->rts;
		sum.cqes += s->cqes;
		if (s->done && s->vmpin_left_kb) {
			TH_LOG("worker %d: VmPin %lld kB more after cleanup",
			       i, (long long)s->vmpin_left_kb);
			bad++;
		}
	}
	printf("# fuzz: %llu operations in %.1f s: %llu structured ioctls, "
	       "%llu raw ioctls, %llu data path, %llu ring scribbles, "
	       "%llu mmap, %llu netlink, %llu forks, %llu reopens; "
	       "%llu succeeded, %llu QPs to RTS, %llu CQEs seen\n",
	       (unsigned long long)(sum.ioctls + sum.raw + sum.dp +
				    sum.scribbles + sum.mmaps + sum.nl +
				    sum.forks + sum.reopens),
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       (unsigned long long)sum.ioctls, (unsigned long long)sum.raw,
	       (unsigned long long)sum.dp, (unsigned long long)sum.scribbles,
	       (unsigned long long)sum.mmaps, (unsigned long long)sum.nl,
	       (unsigned long long)sum.forks, (unsigned long long)sum.reopens,
	       (unsigned long long)sum.ok, (unsigned long long)sum.rts,
	       (unsigned long long)sum.cqes);
	fflush(stdout);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, sum.bad_children);
	EXPECT_EQ(0, sum.faults) TH_LOG("an accepted mapping faulted");
	EXPECT_EQ(0, objects_back(base, names, n, what, sizeof(what)))
		TH_LOG("objects left: %s", what);
	pin1 = sv_vm_pin_kb();
	EXPECT_EQ(pin0, pin1);
	munmap(sh, shlen);
}

/* ---- close/reopen racing ioctls on one descriptor ---- */

struct race {
	int fd;			/* the descriptor both threads use */
	volatile int stop;
	uint64_t ops;
	uint64_t rng;
};

static void *race_user(void *arg)
{
	struct race *r = arg;
	uint64_t rng = r->rng;

	while (!r->stop) {
		struct sv_alloc_pd pd = { .size = sizeof(pd) };
		struct sv_create_cq cq = { .size = sizeof(cq), .cqe = 8 };
		struct sv_dealloc_pd d = { .size = sizeof(d) };
		struct sv_destroy_cq dc = { .size = sizeof(dc) };
		struct sv_map_doorbell m = { .size = sizeof(m) };
		void *p;

		if (!ioctl(r->fd, SV_IOC_ALLOC_PD, &pd) && fz_next(&rng) & 1) {
			d.pd_handle = pd.pd_handle;
			ioctl(r->fd, SV_IOC_DEALLOC_PD, &d);
		}
		if (!ioctl(r->fd, SV_IOC_CREATE_CQ, &cq)) {
			p = mmap(NULL, cq.mmap_len, PROT_READ | PROT_WRITE,
				 MAP_SHARED, r->fd, cq.mmap_offset);
			if (p != MAP_FAILED)
				munmap(p, cq.mmap_len);
			dc.handle = cq.handle;
			if (fz_next(&rng) & 1)
				ioctl(r->fd, SV_IOC_DESTROY_CQ, &dc);
		}
		if (!ioctl(r->fd, SV_IOC_MAP_DOORBELL, &m)) {
			struct sv_ring_doorbell db = { .size = sizeof(db) };

			ioctl(r->fd, SV_IOC_DOORBELL, &db);
		}
		/* Handles guessed: another process's file shares numbers. */
		d.pd_handle = fz_next(&rng) % 16 + 1;
		ioctl(r->fd, SV_IOC_DEALLOC_PD, &d);
		__atomic_fetch_add(&r->ops, 6, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int race_child(uint64_t seed, int shared, int secs)
{
	struct race r = { .rng = seed | 1 };
	pthread_t th[2];
	struct timespec t0, t;
	int i, fd;

	r.fd = shared >= 0 ? dup(shared) : open(SV_DEV0, O_RDWR | O_CLOEXEC);
	if (r.fd < 0)
		return 1;
	for (i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, race_user, &r))
			return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		/* Swap a fresh file in under the users' feet. */
		fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, r.fd);
			close(fd);
		}
		usleep(fz_next(&r.rng) % 2000);
		__atomic_fetch_add(&r.ops, 1, __ATOMIC_RELAXED);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < secs);
	r.stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	close(r.fd);
	printf("# race child %d: %llu operations\n", getpid(),
	       (unsigned long long)r.ops);
	fflush(stdout);
	return 0;
}

TEST_F_TIMEOUT(fuzz, close_races_ioctls, 120)
{
	uint64_t seed = fz_seed_from_env();
	long base[16];
	char names[16][32], what[96] = "";
	int i, n, st, shared;
	pid_t pids[4];

	ASSERT_EQ(0, read_objects(base, names, &n));
	shared = open(SV_DEV0, O_RDWR);
	ASSERT_LE(0, shared);
	for (i = 0; i < 4; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			fflush(stdout);
			_exit(race_child(seed + i, i < 2 ? shared : -1, 4));
		}
	}
	close(shared);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
			TH_LOG("race child %d: status %#x", i, st);
	}
	EXPECT_EQ(0, objects_back(base, names, n, what, sizeof(what)))
		TH_LOG("objects left: %s", what);
}

/* The long form gets a timeout that grows with SV_FUZZ_OPS. */
static void fz_scale_timeout(void)
{
	uint64_t k = (fz_total_ops() + FZ_DEFAULT_OPS - 1) / FZ_DEFAULT_OPS;
	struct __fixture_metadata *f;
	struct __test_metadata *t;

	if (k <= 1)
		return;
	for (f = __fixture_list; f; f = f->next)
		for (t = f->tests; t; t = t->next)
			if (!strcmp(t->name, "ioctls_rings_mmap_netlink"))
				t->timeout *= k;
}

static void __attribute__((constructor)) __constructor_order_last(void)
{
	if (!__constructor_order)
		__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD;
}

int main(int argc, char **argv)
{
	fz_scale_timeout();
	sv_scale_timeouts();
	return test_harness_run(argc, argv);
}
