// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sv_regmr_bench: what ibv_reg_mr() of a large buffer costs next to the
 * bare cost of pinning the same pages. The baseline is io_uring's fixed
 * buffers (IORING_REGISTER_BUFFERS), the kernel's own path that does what
 * an MR must: pin_user_pages(FOLL_WRITE | FOLL_LONGTERM) of every page and
 * keep the page list. Both run in one process on one buffer:
 *
 *   sv_regmr_bench [-d DEV] [-r ROUNDS] [-s MIB] [-H]
 *
 * DEV is softverbs0 by default; the buffer is MIB (1024) MiB of anonymous
 * memory, every page written before anything is timed, so no page fault
 * falls in either measurement. Its pages are 4 KiB ones (MADV_NOHUGEPAGE:
 * the same pages to pin whatever the system's THP setting); -H asks for
 * transparent huge pages instead (MADV_HUGEPAGE). Each round times one
 * IORING_REGISTER_BUFFERS call (then unregisters, untimed) and one
 * ibv_reg_mr() call (then deregisters, untimed), ROUNDS (5) rounds, the
 * order of the two swapped every round. Per-round times go to stderr;
 * stdout has one line of "key value" pairs for scripts/bench-guest:
 * mib, rounds, pages (4k or thp), thp_mib (the process's AnonHugePages),
 * pin_ms and reg_mr_ms (medians) and ratio (reg_mr_ms / pin_ms).
 *
 * Exit status: 0; 1 on a failed call; 2 on bad usage; 3 when io_uring is
 * not available (no baseline, so no figure is printed).
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <linux/io_uring.h>

#include "sv_rc.h"

/* io_uring refuses a fixed buffer over 1 GiB (io_buffer_validate()). */
#define IOV_MAX_LEN (1UL << 30)
#define MAX_ROUNDS 1000

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void fail(const char *what, int err)
{
	fprintf(stderr, "sv_regmr_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: sv_regmr_bench [-d DEV] [-r ROUNDS] [-s MIB] [-H]\n");
	exit(2);
}

/* AnonHugePages of the whole process, in MiB (the buffer is nearly all). */
static long thp_mib(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib < 0 ? -1 : kib / 1024;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_context *ctx = sv_open_dev(name);

	if (!ctx)
		fail(errno == ENODEV ? name : "ibv_get_device_list", errno);
	return ctx;
}

/* Seconds one IORING_REGISTER_BUFFERS of iov[0..n) takes; unregisters. */
static double time_pin(int ring, const struct iovec *iov, unsigned int n)
{
	double t0, t;

	t0 = now();
	if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, iov, n))
		fail("IORING_REGISTER_BUFFERS", errno);
	t = now() - t0;
	if (syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0))
		fail("IORING_UNREGISTER_BUFFERS", errno);
	return t;
}

/* Seconds one ibv_reg_mr() of the buffer takes; deregisters. */
static double time_reg_mr(struct ibv_pd *pd, void *buf, size_t len)
{
	struct ibv_mr *mr;
	double t0, t;

	t0 = now();
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	t = now() - t0;
	if (!mr)
		fail("ibv_reg_mr", errno);
	if (ibv_dereg_mr(mr))
		fail("ibv_dereg_mr", errno);
	return t;
}

int main(int argc, char **argv)
{
	static double pin[MAX_ROUNDS], reg[MAX_ROUNDS];
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	unsigned int rounds = 5, niov, r, i;
	struct io_uring_params p = {};
	const char *dev = "softverbs0";
	unsigned long mib = 1024;
	struct ibv_context *ctx;
	struct iovec *iov;
	struct ibv_pd *pd;
	double pin_ms, reg_ms;
	int opt, ring, thp = 0;
	size_t len, off;
	char *buf;

	while ((opt = getopt(argc, argv, "d:r:s:H")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'r':
			rounds = sv_parse_count_or(optarg, MAX_ROUNDS, usage);
			break;
		case 's':
			mib = sv_parse_count_or(optarg, 1UL << 20, usage);
			break;
		case 'H':
			thp = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	len = mib << 20;

	/*
	 * Both registrations pin long-term and count against RLIMIT_MEMLOCK
	 * (io_uring's only without CAP_IPC_LOCK). If it cannot be raised, go
	 * on: the registration says ENOMEM or EPERM when it does not fit.
	 */
	if (setrlimit(RLIMIT_MEMLOCK, &rl)) {
		int err = errno;

		if (getrlimit(RLIMIT_MEMLOCK, &rl))
			fail("getrlimit(RLIMIT_MEMLOCK)", errno);
		if (rl.rlim_cur == RLIM_INFINITY)
			fprintf(stderr, "sv_regmr_bench: RLIMIT_MEMLOCK is unlimited already\n");
		else
			fprintf(stderr, "sv_regmr_bench: RLIMIT_MEMLOCK stays %llu bytes: setrlimit: %s\n",
				(unsigned long long)rl.rlim_cur, strerror(err));
	}

	/*
	 * The ring, only for its registration calls: nothing is submitted.
	 * No io_uring (ENOSYS: not built; EPERM: kernel.io_uring_disabled)
	 * means no baseline, and then no figure at all.
	 */
	ring = syscall(__NR_io_uring_setup, 1, &p);
	if (ring < 0) {
		int err = errno;

		fprintf(stderr, "sv_regmr_bench: io_uring unavailable: io_uring_setup: %s\n",
			strerror(err));
		return err == ENOSYS || err == EPERM ? 3 : 1;
	}

	/* Every page written before anything is timed: no faults inside. */
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		fail("mmap", errno);
	if (madvise(buf, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		fail("madvise", errno);
	for (off = 0; off < len; off += 4096)
		buf[off] = 1;

	/*
	 * The same bytes as io_uring fixed buffers: one iovec per GiB (one
	 * 1 GiB iovec by default), io_uring's limit for one buffer.
	 */
	niov = (len + IOV_MAX_LEN - 1) / IOV_MAX_LEN;
	iov = calloc(niov, sizeof(*iov));
	if (!iov)
		fail("calloc", ENOMEM);
	for (i = 0; i < niov; i++) {
		iov[i].iov_base = buf + (size_t)i * IOV_MAX_LEN;
		iov[i].iov_len = len - (size_t)i * IOV_MAX_LEN < IOV_MAX_LEN ?
				 len - (size_t)i * IOV_MAX_LEN : IOV_MAX_LEN;
	}

	ctx = open_dev(dev);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		fail("ibv_alloc_pd", errno);

	/* Alternating, each going first every other round: same machine. */
	for (r = 0; r < rounds; r++) {
		if (r % 2) {
			reg[r] = time_reg_mr(pd, buf, len);
			pin[r] = time_pin(ring, iov, niov);
		} else {
			pin[r] = time_pin(ring, iov, niov);
			reg[r] = time_reg_mr(pd, buf, len);
		}
		fprintf(stderr, "round %u: pin %.1f ms, reg_mr %.1f ms\n",
			r + 1, pin[r] * 1e3, reg[r] * 1e3);
	}
	pin_ms = sv_median(pin, rounds) * 1e3;
	reg_ms = sv_median(reg, rounds) * 1e3;
	printf("mib %lu rounds %u pages %s thp_mib %ld pin_ms %.1f reg_mr_ms %.1f ratio %.3f\n",
	       mib, rounds, thp ? "thp" : "4k", thp_mib(), pin_ms, reg_ms,
	       reg_ms / pin_ms);

	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	close(ring);
	free(iov);
	munmap(buf, len);
	return 0;
}
