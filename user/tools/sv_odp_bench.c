// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sv_odp_bench: what on-demand paging costs the data path. RDMA WRITE
 * bandwidth into an ODP MR (IBV_ACCESS_ON_DEMAND), on the pass that faults
 * every page in and on the pass after it, against the same writes into a
 * pinned MR, in one process on one device:
 *
 *   sv_odp_bench [-d DEV] [-r ROUNDS] [-s MIB] [-m BYTES] [-H]
 *
 * Two RC QPs of DEV (softverbs0), a and b, each with its own CQ, are
 * connected to each other. The target is a region of MIB (256) MiB of
 * a's: b writes it from end to end with RDMA WRITEs of BYTES (65536) from
 * a pinned source buffer of BYTES, WINDOW (16) in flight, every one
 * signaled and its completion checked. One pass over the region is timed
 * (CLOCK_MONOTONIC, from the first post to the last completion). Each
 * round measures:
 *
 *   pinned:     a region written (memset) before ibv_reg_mr() pins it;
 *   odp_first:  a fresh anonymous mapping, never touched, registered
 *               with ON_DEMAND: every page is faulted in by the data
 *               path when the first write reaches it;
 *   odp_steady: a second pass over that same ODP MR, its pages present.
 *
 * Registration, memset and mmap are not timed. The regions are unmapped
 * and deregistered at the end of the round, and which of pinned and ODP
 * goes first swaps every round. Pages are 4 KiB ones (MADV_NOHUGEPAGE:
 * the most faults the region can take, whatever the system's THP
 * setting); -H asks for transparent huge pages (MADV_HUGEPAGE). After
 * every pass, the first and last byte of every message and every byte of
 * the first, middle and last messages must be the source's (whose
 * pattern changes every pass), or the tool fails.
 *
 * Per-round figures go to stderr; stdout has one line of "key value"
 * pairs for scripts/bench-guest: mib, msg, window, rounds, pages (4k or
 * thp), pinned_mbs, odp_first_mbs and odp_steady_mbs (medians, MB/s with
 * MB = 2^20 bytes, perftest's unit), first_ratio and steady_ratio (over
 * pinned_mbs).
 *
 * Exit status: 0; 1 on a failed call, a failed completion or wrong data;
 * 2 on bad usage; 3 when the device has no ODP (odp_caps without
 * IBV_ODP_SUPPORT, or no RDMA WRITE into RC ODP MRs, or ibv_reg_mr() with
 * ON_DEMAND says EOPNOTSUPP): no figure is printed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "sv_rc.h"

#define WINDOW 16
#define MAX_ROUNDS 1000
#define MAX_MSG (1UL << 30)

/* A connected pair: b writes into a's MR. */
struct bench {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *a, *b;
	struct ibv_mr *src_mr;
	unsigned char *src;
	size_t msg;
};

/* A target region and its MR. */
struct region {
	unsigned char *buf;
	size_t len;
	struct ibv_mr *mr;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void fail(const char *what, int err)
{
	fprintf(stderr, "sv_odp_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

/* No ODP on this device: no figure (scripts/bench-guest shows why). */
static void no_odp(const char *why)
{
	fprintf(stderr, "sv_odp_bench: no ODP: %s\n", why);
	exit(3);
}

static void usage(void)
{
	fprintf(stderr, "usage: sv_odp_bench [-d DEV] [-r ROUNDS] [-s MIB] [-m BYTES] [-H]\n");
	exit(2);
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_context *ctx = sv_open_dev(name);

	if (!ctx)
		fail(errno == ENODEV ? name : "ibv_get_device_list", errno);
	return ctx;
}

/* Exits 3 unless RC RDMA WRITEs into ODP MRs are supported. */
static void check_odp(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex ex;
	char why[128];
	int err;

	err = ibv_query_device_ex(ctx, NULL, &ex);
	if (err)
		fail("ibv_query_device_ex", err);
	if (!(ex.odp_caps.general_caps & IBV_ODP_SUPPORT)) {
		snprintf(why, sizeof(why), "odp_caps.general_caps 0x%llx lacks IBV_ODP_SUPPORT",
			 (unsigned long long)ex.odp_caps.general_caps);
		no_odp(why);
	}
	if (!(ex.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_WRITE)) {
		snprintf(why, sizeof(why), "rc_odp_caps 0x%x lacks IBV_ODP_SUPPORT_WRITE",
			 ex.odp_caps.per_transport_caps.rc_odp_caps);
		no_odp(why);
	}
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = WINDOW, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		fail("ibv_create_qp", errno);
	return qp;
}

/* a and b, each with its CQ, connected over GID index 1 at the port's MTU. */
static void connect_pair(struct bench *B)
{
	struct ibv_port_attr pa;
	union ibv_gid gid;
	int gi = 1;

	if (ibv_query_port(B->ctx, 1, &pa))
		fail("ibv_query_port", errno);
	if (ibv_query_gid(B->ctx, 1, gi, &gid)) {
		gi = 0;
		if (ibv_query_gid(B->ctx, 1, gi, &gid))
			fail("ibv_query_gid", errno);
	}
	B->cq_a = ibv_create_cq(B->ctx, WINDOW + 1, NULL, NULL, 0);
	B->cq_b = ibv_create_cq(B->ctx, WINDOW + 1, NULL, NULL, 0);
	if (!B->cq_a || !B->cq_b)
		fail("ibv_create_cq", errno);
	B->a = make_qp(B->pd, B->cq_a);
	B->b = make_qp(B->pd, B->cq_b);
	if (sv_rc_connect(B->a, B->b->qp_num, &gid, gi, pa.active_mtu) ||
	    sv_rc_connect(B->b, B->a->qp_num, &gid, gi, pa.active_mtu))
		fail("ibv_modify_qp", errno);
}

/* Byte i of the source on pass seed: never 0, so zero pages never match. */
static unsigned char pattern(size_t i, unsigned int seed)
{
	return (i * 7 + seed * 13) % 255 + 1;
}

static void fill_src(struct bench *B, unsigned int seed)
{
	size_t i;

	for (i = 0; i < B->msg; i++)
		B->src[i] = pattern(i, seed);
}

/* Bytes of message k of a region of len. */
static size_t msg_len(const struct bench *B, size_t len, size_t k)
{
	size_t off = k * B->msg;

	return len - off < B->msg ? len - off : B->msg;
}

/* Polls b's CQ once; returns the completions, all of which succeeded. */
static int reap(struct bench *B)
{
	struct ibv_wc wc[WINDOW];
	int n, i;

	n = ibv_poll_cq(B->cq_b, WINDOW, wc);
	if (n < 0)
		fail("ibv_poll_cq", EIO);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "sv_odp_bench: write %llu: %s (vendor_err 0x%x)\n",
				(unsigned long long)wc[i].wr_id,
				ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
			exit(1);
		}
	}
	return n;
}

/* Seconds one pass of writes over region R takes, WINDOW in flight. */
static double time_pass(struct bench *B, struct region *R)
{
	size_t nmsg = (R->len + B->msg - 1) / B->msg, posted = 0, done = 0;
	struct ibv_sge sge = {
		.addr = (uintptr_t)B->src, .lkey = B->src_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma.rkey = R->mr->rkey,
	}, *bad;
	double t0;
	int err;

	t0 = now();
	while (done < nmsg) {
		for (; posted < nmsg && posted - done < WINDOW; posted++) {
			wr.wr_id = posted;
			sge.length = msg_len(B, R->len, posted);
			wr.wr.rdma.remote_addr = (uintptr_t)R->buf + posted * B->msg;
			err = ibv_post_send(B->b, &wr, &bad);
			if (err)
				fail("ibv_post_send", err);
		}
		done += reap(B);
	}
	return now() - t0;
}

/* Exits 1 unless region R holds the source's bytes (a sample of them). */
static void verify(const struct bench *B, const struct region *R,
		   const char *what)
{
	size_t nmsg = (R->len + B->msg - 1) / B->msg, k, l;
	size_t full[3] = { 0, nmsg / 2, nmsg - 1 };
	const unsigned char *m;
	int i;

	for (k = 0; k < nmsg; k++) {
		m = R->buf + k * B->msg;
		l = msg_len(B, R->len, k);
		if (m[0] != B->src[0] || m[l - 1] != B->src[l - 1])
			goto bad;
	}
	for (i = 0; i < 3; i++) {
		k = full[i];
		if (memcmp(R->buf + k * B->msg, B->src, msg_len(B, R->len, k)))
			goto bad;
	}
	return;
bad:
	fprintf(stderr, "sv_odp_bench: %s: message %zu (offset %zu) is not the source's\n",
		what, k, k * B->msg);
	exit(1);
}

/* A fresh anonymous region of len, 4 KiB pages or THP, never touched. */
static void map_region(struct region *R, size_t len, int thp)
{
	R->len = len;
	R->buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (R->buf == MAP_FAILED)
		fail("mmap", errno);
	if (madvise(R->buf, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		fail("madvise", errno);
}

static void unmap_region(struct region *R)
{
	if (ibv_dereg_mr(R->mr))
		fail("ibv_dereg_mr", errno);
	if (munmap(R->buf, R->len))
		fail("munmap", errno);
}

/* One pass into a pinned MR over pre-touched pages: MB/s. */
static double run_pinned(struct bench *B, size_t len, int thp, unsigned int seed)
{
	struct region R;
	double t;

	map_region(&R, len, thp);
	memset(R.buf, 0, len);
	R.mr = ibv_reg_mr(B->pd, R.buf, len, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE);
	if (!R.mr)
		fail("ibv_reg_mr", errno);
	fill_src(B, seed);
	t = time_pass(B, &R);
	verify(B, &R, "pinned");
	unmap_region(&R);
	return len / t / (1 << 20);
}

/* Two passes into an ODP MR over untouched pages: first and steady MB/s. */
static void run_odp(struct bench *B, size_t len, int thp, unsigned int seed,
		    double *first, double *steady)
{
	struct region R;
	double t;

	map_region(&R, len, thp);
	R.mr = ibv_reg_mr(B->pd, R.buf, len, IBV_ACCESS_ON_DEMAND |
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!R.mr) {
		if (errno == EOPNOTSUPP)
			no_odp("ibv_reg_mr(IBV_ACCESS_ON_DEMAND): Operation not supported");
		fail("ibv_reg_mr(IBV_ACCESS_ON_DEMAND)", errno);
	}
	fill_src(B, seed);
	t = time_pass(B, &R);
	verify(B, &R, "odp first touch");
	*first = len / t / (1 << 20);
	fill_src(B, seed + 1);
	t = time_pass(B, &R);
	verify(B, &R, "odp steady");
	*steady = len / t / (1 << 20);
	unmap_region(&R);
}

/* The device, PD, connected pair and pinned source of msg bytes. */
static void setup(struct bench *B, const char *dev, size_t msg)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	/* The pinned region counts against RLIMIT_MEMLOCK; the ODP one not. */
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		fprintf(stderr, "sv_odp_bench: RLIMIT_MEMLOCK not raised: setrlimit: %s\n",
			strerror(errno));
	B->msg = msg;
	B->ctx = open_dev(dev);
	check_odp(B->ctx);
	B->pd = ibv_alloc_pd(B->ctx);
	if (!B->pd)
		fail("ibv_alloc_pd", errno);
	B->src = aligned_alloc(4096, (msg + 4095) & ~4095UL);
	if (!B->src)
		fail("aligned_alloc", ENOMEM);
	B->src_mr = ibv_reg_mr(B->pd, B->src, msg, IBV_ACCESS_LOCAL_WRITE);
	if (!B->src_mr)
		fail("ibv_reg_mr(source)", errno);
	connect_pair(B);
}

static void teardown(struct bench *B)
{
	ibv_destroy_qp(B->a);
	ibv_destroy_qp(B->b);
	ibv_destroy_cq(B->cq_a);
	ibv_destroy_cq(B->cq_b);
	ibv_dereg_mr(B->src_mr);
	free(B->src);
	ibv_dealloc_pd(B->pd);
	ibv_close_device(B->ctx);
}

int main(int argc, char **argv)
{
	static double pin[MAX_ROUNDS], first[MAX_ROUNDS], steady[MAX_ROUNDS];
	unsigned long mib = 256, msg = 65536;
	const char *dev = "softverbs0";
	unsigned int rounds = 5, r;
	double p, f, s;
	struct bench B;
	int opt, thp = 0;
	size_t len;

	while ((opt = getopt(argc, argv, "d:r:s:m:H")) != -1) {
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
		case 'm':
			msg = sv_parse_count_or(optarg, MAX_MSG, usage);
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
	setup(&B, dev, msg);

	/* Alternating, each going first every other round: same machine. */
	for (r = 0; r < rounds; r++) {
		if (r % 2) {
			run_odp(&B, len, thp, 2 * r, &first[r], &steady[r]);
			pin[r] = run_pinned(&B, len, thp, 2 * r + 1);
		} else {
			pin[r] = run_pinned(&B, len, thp, 2 * r);
			run_odp(&B, len, thp, 2 * r + 1, &first[r], &steady[r]);
		}
		fprintf(stderr, "round %u: pinned %.1f MB/s, odp first touch %.1f MB/s, odp steady %.1f MB/s\n",
			r + 1, pin[r], first[r], steady[r]);
	}
	p = sv_median(pin, rounds);
	f = sv_median(first, rounds);
	s = sv_median(steady, rounds);
	printf("mib %lu msg %lu window %d rounds %u pages %s pinned_mbs %.1f odp_first_mbs %.1f odp_steady_mbs %.1f first_ratio %.3f steady_ratio %.3f\n",
	       mib, msg, WINDOW, rounds, thp ? "thp" : "4k", p, f, s, f / p, s / p);
	teardown(&B);
	return 0;
}
