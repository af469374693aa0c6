// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sv_syscall_bench: post RDMA writes on a softverbs RC QP (connected to
 * itself) and poll their completions, with no syscall of its own in the
 * measured loop, so that `strace -c -f` counts only what the verbs
 * library makes (doorbells).
 *
 *   sv_syscall_bench busy N      post N WRs back to back (every 32nd
 *                                signaled), keeping up to 64 in flight
 *   sv_syscall_bench spaced N    post one signaled WR every millisecond
 *                                (spinning on clock_gettime, a vDSO call)
 *                                and wait for its completion
 *   sv_syscall_bench setup 0     only the setup and teardown: the baseline
 *
 * It prints the mode, N and the wall time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
	perror(what);
	exit(1);
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 128, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc[16];
	union ibv_gid gid;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	long n, posted = 0, done = 0, i;
	double t0, t1, until;
	const char *mode;
	static char buf[8192];
	int k;

	if (argc != 3)
		return fprintf(stderr, "usage: %s busy|spaced|setup N\n",
			       argv[0]), 2;
	mode = argv[1];
	n = atol(argv[2]);

	list = ibv_get_device_list(NULL);
	if (!list || !list[0])
		die("no device");
	ctx = ibv_open_device(list[0]);
	if (!ctx || ibv_query_gid(ctx, 1, 1, &gid))
		die("open");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!pd || !cq || !mr)
		die("setup");
	ia.send_cq = cq;
	ia.recv_cq = cq;
	qp = ibv_create_qp(pd, &ia);
	if (!qp)
		die("create_qp");
	if (sv_rc_connect(qp, qp->qp_num, &gid, 1, IBV_MTU_4096))
		die("connect");

	sge.addr = (uintptr_t)buf;
	sge.length = 8;
	sge.lkey = mr->lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)buf + 4096;
	wr.wr.rdma.rkey = mr->rkey;

	t0 = now();
	if (!strcmp(mode, "busy")) {
		/* Up to 64 in flight; every 32nd signaled: done += 32. */
		while (done < n) {
			while (posted < n && posted - done < 64) {
				wr.wr_id = posted;
				wr.send_flags = (posted % 32 == 31 ||
						 posted == n - 1) ?
						IBV_SEND_SIGNALED : 0;
				if (ibv_post_send(qp, &wr, &bad))
					die("post_send");
				posted++;
			}
			k = ibv_poll_cq(cq, 16, wc);
			for (i = 0; i < k; i++) {
				if (wc[i].status)
					die("completion");
				done = wc[i].wr_id + 1;
			}
		}
	} else if (!strcmp(mode, "spaced")) {
		for (posted = 0; posted < n; posted++) {
			until = now() + 0.001;
			while (now() < until)
				;
			wr.wr_id = posted;
			wr.send_flags = IBV_SEND_SIGNALED;
			if (ibv_post_send(qp, &wr, &bad))
				die("post_send");
			while ((k = ibv_poll_cq(cq, 1, wc)) == 0)
				;
			if (k < 0 || wc[0].status)
				die("completion");
		}
	}
	t1 = now();
	printf("mode %s wrs %ld seconds %.3f\n", mode, n, t1 - t0);

	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
