// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sv_scale_bench: how a verbs device scales, through the plain verbs API
 * (so the same binary measures softverbs and rxe in one boot).
 *
 *   sv_scale_bench qps -d DEV -n N
 *	create N RC QPs with one-entry queues (one PD, one CQ), then
 *	destroy them; prints how many were created (it stops at the first
 *	failure and names it), QPs created and destroyed per second, and
 *	the kernel memory one QP took: the drop of MemFree over the creates
 *	less what the process itself gained in anonymous memory and page
 *	tables are counted in (a QP's ring mappings), divided by N.
 *
 *   sv_scale_bench rate -d DEV -q Q [-p P] [-s SECS] [-w W] [-i I]
 *	P processes (default 1), each with Q RC QP pairs connected on DEV,
 *	every QP keeping W (default 16) 64-byte RDMA writes in flight; all
 *	start posting together once every process is set up, and the
 *	writes completed by all of them in one window of SECS seconds
 *	(default 3) after a second of warm-up give the aggregate writes per
 *	second. With I, each process also has I more pairs, connected the
 *	same way, that nobody posts to.
 *
 * Output: one line of "key value" pairs, for scripts/bench-guest.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "sv_rc.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "sv_scale_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_context *ctx = sv_open_dev(name);

	if (!ctx && errno != ENODEV)
		die("ibv_get_device_list");
	if (!ctx) {
		fprintf(stderr, "sv_scale_bench: no device %s\n", name);
		exit(1);
	}
	return ctx;
}

/* A field of a /proc file in KiB ("MemFree:", "RssAnon:" ...). */
static long long proc_kib(const char *path, const char *key)
{
	size_t klen = strlen(key);
	long long v = -1;
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		die(path);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen)) {
			v = atoll(line + klen);
			break;
		}
	fclose(f);
	return v;
}

/* Kernel memory as this process's doing sees it: not free, not ours. */
static long long kernel_kib(void)
{
	return -proc_kib("/proc/meminfo", "MemFree:") -
	       proc_kib("/proc/self/status", "RssAnon:");
}

static int qps(const char *dev, long n)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *ctx = open_dev(dev);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp **q = calloc(n, sizeof(*q));
	long long k0, k1;
	double t0, t1, t2;
	char why[64];
	int err = 0;
	long i, made;

	if (!pd || !cq || !q)
		die("setup");
	ia.send_cq = ia.recv_cq = cq;
	/* The pointer array's pages first: they are not the device's. */
	memset(q, 0, n * sizeof(*q));
	k0 = kernel_kib();
	t0 = now();
	for (i = 0; i < n; i++) {
		q[i] = ibv_create_qp(pd, &ia);
		if (!q[i]) {
			err = errno;
			break;
		}
	}
	made = i;
	t1 = now();
	k1 = kernel_kib();
	for (i = 0; i < made; i++)
		if (ibv_destroy_qp(q[i]))
			die("ibv_destroy_qp");
	t2 = now();
	/* The reason as one word: the line is "key value" pairs. */
	snprintf(why, sizeof(why), "%s", made < n ? strerror(err) : "no");
	for (i = 0; why[i]; i++)
		if (why[i] == ' ')
			why[i] = '_';
	printf("dev %s qps %ld created_per_s %.0f destroyed_per_s %.0f "
	       "kib_per_qp %.2f stopped %s\n", dev, made,
	       made / (t1 - t0), made / (t2 - t1),
	       made ? (double)(k1 - k0) / made : 0.0, why);
	free(q);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}

/* ---- rate ---- */

#define MSG	64

struct pair {
	struct ibv_qp *a, *b;
};

/* A RoCE v2 GID of port 1 (rxe wants one matching its netdev), or 0. */
static int pick_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	struct ibv_port_attr pa;
	int i;

	if (ibv_query_port(ctx, 1, &pa))
		die("ibv_query_port");
	for (i = 0; i < pa.gid_tbl_len && i < 16; i++) {
		if (ibv_query_gid(ctx, 1, i, gid))
			continue;
		/* ::ffff:a.b.c.d: an IPv4 GID, which needs no ND */
		if (gid->raw[10] == 0xff && gid->raw[11] == 0xff)
			return i;
	}
	if (ibv_query_gid(ctx, 1, 0, gid))
		die("ibv_query_gid");
	return 0;
}

/*
 * What the processes of a rate run share (an anonymous shared mapping):
 * the parent starts every process's posting at once, when all are set
 * up, and reads the completions of all in one window of its own clock,
 * so that no process's setup or exit falls inside another's measurement.
 */
struct window {
	int ready;			/* processes set up */
	int go;				/* parent: post */
	int stop;			/* parent: stop */
	unsigned long long done[];	/* per process: writes completed */
};

/* One process's part: posts and counts completions until told to stop. */
static void rate_one(struct window *win, int me, const char *dev, int nq,
		     int ni, int w)
{
	struct ibv_context *ctx = open_dev(dev);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, nq * w + 1, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 2 * nq + 1, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = w, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct pair *p = calloc(nq + ni, sizeof(*p));
	char *buf = aligned_alloc(4096, 2 * 4096);
	unsigned long long done = 0;
	struct ibv_wc wc[64];
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	union ibv_gid gid;
	struct ibv_mr *mr;
	int gi, i, k, n;

	if (!pd || !cq || !rcq || !p || !buf)
		die("setup");
	mr = ibv_reg_mr(pd, buf, 2 * 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	gi = pick_gid(ctx, &gid);
	ia.send_cq = cq;
	ia.recv_cq = rcq;
	for (i = 0; i < nq + ni; i++) {
		p[i].a = ibv_create_qp(pd, &ia);
		p[i].b = ibv_create_qp(pd, &ia);
		if (!p[i].a || !p[i].b)
			die("ibv_create_qp");
		if (sv_rc_connect(p[i].a, p[i].b->qp_num, &gid, gi,
				  IBV_MTU_1024) ||
		    sv_rc_connect(p[i].b, p[i].a->qp_num, &gid, gi,
				  IBV_MTU_1024))
			die("ibv_modify_qp");
	}
	sge.addr = (uintptr_t)buf;
	sge.length = MSG;
	sge.lkey = mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)buf + 4096;
	wr.wr.rdma.rkey = mr->rkey;
	__atomic_add_fetch(&win->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&win->go, __ATOMIC_ACQUIRE))
		usleep(1000);
	/*
	 * w in flight on every QP, then each completion's QP gets its next
	 * WR, as an application keeps its QPs busy: the work per WR does not
	 * grow with the number of QPs (a scan of all of them per poll did,
	 * and measured this program more than the device).
	 */
	for (i = 0; i < nq; i++)
		for (k = 0; k < w; k++) {
			wr.wr_id = i;
			if (ibv_post_send(p[i].a, &wr, &bad))
				die("ibv_post_send");
		}
	while (!__atomic_load_n(&win->stop, __ATOMIC_RELAXED)) {
		n = ibv_poll_cq(cq, 64, wc);
		if (n < 0)
			die("ibv_poll_cq");
		for (k = 0; k < n; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "sv_scale_bench: %s\n",
					ibv_wc_status_str(wc[k].status));
				exit(1);
			}
			wr.wr_id = wc[k].wr_id;
			if (ibv_post_send(p[wr.wr_id].a, &wr, &bad))
				die("ibv_post_send");
		}
		if (n) {
			done += n;
			__atomic_store_n(&win->done[me], done,
					 __ATOMIC_RELAXED);
		}
	}
}

static unsigned long long window_sum(struct window *win, int np)
{
	unsigned long long sum = 0;
	int i;

	for (i = 0; i < np; i++)
		sum += __atomic_load_n(&win->done[i], __ATOMIC_RELAXED);
	return sum;
}

/* A process that ended before the window: the run has failed. */
static int reaped(int *left)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		(*left)--;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	return 0;
}

static int rate(const char *dev, int nq, int ni, int np, int w, double secs)
{
	size_t len = sizeof(struct window) + np * sizeof(unsigned long long);
	struct window *win = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned long long s0, s1;
	int i, st, bad = 0, left = np;
	double t0, t1;

	if (win == MAP_FAILED)
		die("mmap");
	for (i = 0; i < np; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid) {
			rate_one(win, i, dev, nq, ni, w);
			_exit(0);
		}
	}
	while (__atomic_load_n(&win->ready, __ATOMIC_ACQUIRE) < np && !bad) {
		bad = reaped(&left);
		usleep(10000);
	}
	__atomic_store_n(&win->go, 1, __ATOMIC_RELEASE);
	/* A second of warm-up, then the window; the parent only sleeps. */
	if (!bad)
		usleep(1000000);
	s0 = window_sum(win, np);
	t0 = now();
	if (!bad)
		usleep((useconds_t)(secs * 1e6));
	s1 = window_sum(win, np);
	t1 = now();
	__atomic_store_n(&win->stop, 1, __ATOMIC_RELAXED);
	while (left > 0 && wait(&st) > 0) {
		left--;
		bad |= !WIFEXITED(st) || WEXITSTATUS(st);
	}
	printf("dev %s processes %d qps_per_process %d idle_pairs %d window %d "
	       "writes_per_s %.0f%s\n", dev, np, nq, ni, w,
	       bad ? 0.0 : (s1 - s0) / (t1 - t0), bad ? " failed yes" : "");
	return bad;
}

int main(int argc, char **argv)
{
	const char *dev = "softverbs0";
	int nq = 1, ni = 0, np = 1, w = 16, opt;
	double secs = 3;
	long n = 1000;

	if (argc < 2) {
		fprintf(stderr, "usage: sv_scale_bench qps|rate [-d DEV] [-n N] [-q Q] [-p P] [-s SECS] [-w W] [-i I]\n");
		return 2;
	}
	optind = 2;
	while ((opt = getopt(argc, argv, "d:i:n:q:p:s:w:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'i': ni = atoi(optarg); break;
		case 'n': n = atol(optarg); break;
		case 'q': nq = atoi(optarg); break;
		case 'p': np = atoi(optarg); break;
		case 's': secs = atof(optarg); break;
		case 'w': w = atoi(optarg); break;
		default: return 2;
		}
	}
	if (n < 1 || nq < 1 || ni < 0 || np < 1 || w < 1 || secs <= 0)
		return 2;
	if (!strcmp(argv[1], "qps"))
		return qps(dev, n);
	if (!strcmp(argv[1], "rate"))
		return rate(dev, nq, ni, np, w, secs);
	return 2;
}
