// SPDX-License-Identifier: GPL-2.0
/*
 * Memory accounting of the rings and doorbells the module allocates for a
 * user: charged to the caller's memory cgroup (memory.current, memory.max
 * gives ENOMEM, not the OOM killer) and to its RLIMIT_MEMLOCK (VmPin;
 * unlimited with CAP_IPC_LOCK), returned when the last mapping goes.
 * Each case runs in a child: the cgroup and the rlimit are its own.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "sv_harness.h"
#include "sv_cg_test.h"
#include "sv_test.h"

#define PG		4096L
#define KB		1024LL
#define MB		(1024 * KB)
/* A CQ of SV_DEFAULT_MAX_CQE entries: 4 MiB of CQEs and the header page. */
#define BIG_CQ_BYTES	(PG + (long long)SV_DEFAULT_MAX_CQE * SV_CQE_SIZE)

static int create_cq(int fd, uint32_t cqe, struct sv_create_cq *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->cqe = cqe;
	return ioctl(fd, SV_IOC_CREATE_CQ, c) ? -errno : 0;
}

static int destroy_cq(int fd, uint32_t handle)
{
	struct sv_destroy_cq d = { .size = sizeof(d), .handle = handle };

	return ioctl(fd, SV_IOC_DESTROY_CQ, &d) ? -errno : 0;
}

/* Run fn in a child; its exit status is 0 or the number of a failed step. */
static int run_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn(arg));
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 1000 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

struct memcg_args {
	const char *cg;
	long long limit;
	int created;			/* out, through a shared mapping */
};

/*
 * In a cgroup with memory.max = limit: big CQs until ENOMEM. The first one
 * raises memory.current by about its ring; fewer than limit / ring fit;
 * destroying them returns the memory.
 */
static int memcg_child(void *arg)
{
	struct memcg_args *a = arg;
	uint32_t h[64];
	struct sv_create_cq c;
	long long before, after;
	int fd, i, n, ret = 0;

	if (sv_cg_enter(a->cg, getpid()))
		return 1;
	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 2;
	before = sv_cg_read_ll(a->cg, "memory.current");
	if (create_cq(fd, SV_DEFAULT_MAX_CQE, &c))
		return 3;
	h[0] = c.handle;
	after = sv_cg_read_ll(a->cg, "memory.current");
	/* The ring, give or take the memcg's per-CPU charge batches. */
	if (after - before < BIG_CQ_BYTES - 512 * KB ||
	    after - before > BIG_CQ_BYTES + 512 * KB) {
		fprintf(stderr, "# one CQ charged %lld bytes, ring %lld\n",
			after - before, BIG_CQ_BYTES);
		return 4;
	}
	for (n = 1; n < 64; n++) {
		ret = create_cq(fd, SV_DEFAULT_MAX_CQE, &c);
		if (ret)
			break;
		h[n] = c.handle;
	}
	a->created = n;
	if (ret != -ENOMEM) {
		fprintf(stderr, "# %d CQs of %lld bytes in %lld: %d\n", n,
			BIG_CQ_BYTES, a->limit, ret);
		return 5;
	}
	if (n > a->limit / BIG_CQ_BYTES)
		return 6;
	if (sv_cg_read_ll(a->cg, "memory.current") > a->limit)
		return 7;
	/* A small one still fits once a big one is gone. */
	if (destroy_cq(fd, h[--n]))
		return 8;
	if (create_cq(fd, 1, &c) || destroy_cq(fd, c.handle))
		return 9;
	for (i = 0; i < n; i++)
		if (destroy_cq(fd, h[i]))
			return 10;
	after = sv_cg_read_ll(a->cg, "memory.current");
	if (after > before + 512 * KB) {
		fprintf(stderr, "# %lld bytes left charged\n", after - before);
		return 11;
	}
	close(fd);
	return 0;
}

TEST(memcg_limits_rings)
{
	struct memcg_args *a;
	char cg[64], val[32];
	int ret;

	if (geteuid())
		SKIP(return, "needs root for cgroups");
	snprintf(cg, sizeof(cg), "sv_mem_test.%d", getpid());
	ret = sv_cg_create(cg, "memory");
	if (ret == -ENOENT)
		SKIP(return, "no cgroup2 memory controller");
	ASSERT_EQ(0, ret);
	a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, a);
	a->cg = cg;
	a->limit = 32 * MB;
	snprintf(val, sizeof(val), "%lld", a->limit);
	ASSERT_EQ(0, sv_cg_write(cg, "memory.max", val));
	/* Nothing to swap out in the VM, but be sure: no swap for it. */
	sv_cg_write(cg, "memory.swap.max", "0");

	ret = run_child(memcg_child, a);
	EXPECT_EQ(0, ret) TH_LOG("failed step %d, %d CQs created", ret,
				 a->created);
	/* ENOMEM, never the OOM killer. */
	EXPECT_EQ(0, sv_cg_read_key(cg, "memory.events", "oom_kill"));
	EXPECT_EQ(0, sv_obj_count("cq"));
	sv_cg_destroy(cg);
	munmap(a, sizeof(*a));
}

/* KiB of VmPin for n pages. */
#define PIN_KB(n)	((n) * PG / 1024)

/*
 * RLIMIT_MEMLOCK of 16 pages and no CAP_IPC_LOCK (uid 65534): a CQ of 17
 * pages is ENOMEM, smaller ones are charged to VmPin until the limit; the
 * charge follows the ring (a mapping keeps it after destroy) and is
 * returned with the last reference.
 */
static int memlock_child(void *arg)
{
	struct rlimit rl = { 16 * PG, 16 * PG };
	struct sv_create_cq c1, c2, c3;
	long pin;
	void *map;
	int fd;

	(void)arg;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 1;
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 2;
	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 3;
	pin = sv_vm_pin_kb();
	if (pin < 0)
		return 4;
	/* 1024 CQEs: 16 pages and the header. */
	if (create_cq(fd, 1024, &c1) != -ENOMEM)
		return 5;
	if (sv_vm_pin_kb() != pin)
		return 6;
	/* 512 CQEs: 9 pages; a second one would make 18. */
	if (create_cq(fd, 512, &c1))
		return 7;
	if (sv_vm_pin_kb() != pin + PIN_KB(9))
		return 8;
	if (create_cq(fd, 512, &c2) != -ENOMEM)
		return 9;
	/* 128 CQEs: 3 pages, 12 in all. */
	if (create_cq(fd, 128, &c2))
		return 10;
	if (sv_vm_pin_kb() != pin + PIN_KB(12))
		return 11;
	map = mmap(NULL, c1.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   c1.mmap_offset);
	if (map == MAP_FAILED)
		return 12;
	/* Destroyed but mapped: still charged, so still no room. */
	if (destroy_cq(fd, c1.handle))
		return 13;
	if (sv_vm_pin_kb() != pin + PIN_KB(12))
		return 14;
	if (create_cq(fd, 512, &c3) != -ENOMEM)
		return 15;
	if (munmap(map, c1.mmap_len))
		return 16;
	if (sv_vm_pin_kb() != pin + PIN_KB(3))
		return 17;
	if (create_cq(fd, 512, &c3))
		return 18;
	/* Closing the file returns the rest. */
	close(fd);
	if (sv_vm_pin_kb() != pin)
		return 19;
	return 0;
}

TEST(memlock_limits_rings)
{
	int ret;

	if (geteuid())
		SKIP(return, "needs root to drop to an unprivileged user");
	ret = run_child(memlock_child, NULL);
	EXPECT_EQ(0, ret) TH_LOG("failed step %d", ret);
	EXPECT_EQ(0, sv_obj_count("cq"));
}

/* With CAP_IPC_LOCK the limit does not apply, but VmPin still counts. */
static int cap_ipc_lock_child(void *arg)
{
	struct rlimit rl = { PG, PG };
	struct sv_create_cq c;
	long pin;
	int fd;

	(void)arg;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 1;
	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 2;
	pin = sv_vm_pin_kb();
	if (create_cq(fd, 1024, &c))
		return 3;
	if (sv_vm_pin_kb() != pin + PIN_KB(17))
		return 4;
	if (destroy_cq(fd, c.handle) || sv_vm_pin_kb() != pin)
		return 5;
	close(fd);
	return 0;
}

TEST(memlock_cap_ipc_lock)
{
	int ret;

	if (geteuid())
		SKIP(return, "needs root");
	ret = run_child(cap_ipc_lock_child, NULL);
	EXPECT_EQ(0, ret) TH_LOG("failed step %d", ret);
}

/*
 * A ring mapped by a forked child outlives the creating process and its
 * file: the charge stays on the creator's mm until the child unmaps.
 */
TEST(ring_outlives_creator)
{
	struct sv_create_cq c;
	int fd, status, pipefd[2];
	volatile struct sv_cq_ring *ring;
	char x;
	pid_t pid;

	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, create_cq(fd, 64, &c));
	ring = mmap(NULL, c.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    c.mmap_offset);
	ASSERT_NE(MAP_FAILED, ring);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(pipefd[1]);
		/* Wait until the parent destroyed and closed everything. */
		if (read(pipefd[0], &x, 1) != 0)
			_exit(1);
		/* The header is still the CQ's. */
		_exit(ring->entries == 64 && ring->cqe_size == SV_CQE_SIZE ?
		      0 : 2);
	}
	close(pipefd[0]);
	ASSERT_EQ(0, destroy_cq(fd, c.handle));
	close(fd);
	ASSERT_EQ(0, munmap((void *)ring, c.mmap_len));
	close(pipefd[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
