// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sv_td_bench: what a thread domain saves (ibv_alloc_td(3)). A QP made in
 * a parent domain with a thread domain posts without its queue lock, a CQ
 * made in one polls without its own; this times both paths, with and
 * without the thread domain, in one process on one device:
 *
 *   sv_td_bench -d DEV [-n POSTS] [-p POLLS] [-r ROUNDS]
 *
 * post_recv: ns per ibv_post_recv() of one WR into an RQ of POSTS (16384)
 * slots, filled from empty (no syscall: the RQ ring is shared memory);
 * poll: ns per ibv_poll_cq() of an empty CQ, POLLS (4000000) times. Each
 * figure is the best of ROUNDS (5). One line of "name value" pairs:
 * post_recv_ns, post_recv_td_ns, poll_ns, poll_td_ns.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void fail(const char *what, int err)
{
	fprintf(stderr, "sv_td_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

static struct ibv_cq *make_cq(struct ibv_context *ctx, struct ibv_pd *par)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 64 };
	struct ibv_cq_ex *cq;

	if (par) {
		ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
		ca.parent_domain = par;
	}
	cq = ibv_create_cq_ex(ctx, &ca);
	if (!cq)
		fail("ibv_create_cq_ex", errno);
	return ibv_cq_ex_to_cq(cq);
}

/* ns per post of n single receive WRs into a fresh QP of pd. */
static double post_ns(struct ibv_pd *pd, struct ibv_cq *cq, struct ibv_mr *mr,
		      uint32_t n)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = n,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_sge sg = { (uintptr_t)mr->addr, 64, mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sg, .num_sge = 1 }, *bad;
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	double t0, t;
	uint32_t i;

	if (!qp)
		fail("ibv_create_qp", errno);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		fail("ibv_modify_qp", errno);
	t0 = now();
	for (i = 0; i < n; i++) {
		wr.wr_id = i;
		if (ibv_post_recv(qp, &wr, &bad))
			fail("ibv_post_recv", errno);
	}
	t = now() - t0;
	if (ibv_destroy_qp(qp))
		fail("ibv_destroy_qp", errno);
	return t * 1e9 / n;
}

static double poll_ns(struct ibv_cq *cq, uint32_t n)
{
	struct ibv_wc wc;
	double t0 = now();
	uint32_t i;

	for (i = 0; i < n; i++)
		if (ibv_poll_cq(cq, 1, &wc))
			fail("ibv_poll_cq: a completion", EIO);
	return (now() - t0) * 1e9 / n;
}

static double best(double a, double b)
{
	return a < b ? a : b;
}

int main(int argc, char **argv)
{
	uint32_t posts = 16384, polls = 4000000, rounds = 5, r;
	double pr = 1e9, prt = 1e9, po = 1e9, pot = 1e9;
	struct ibv_parent_domain_init_attr pa = {};
	struct ibv_td_init_attr ta = {};
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_cq *cq, *tcq;
	struct ibv_pd *pd, *par;
	const char *dev = NULL;
	struct ibv_mr *mr;
	struct ibv_td *td;
	static char buf[4096];
	int opt, i;

	while ((opt = getopt(argc, argv, "d:n:p:r:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'n':
			posts = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			polls = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rounds = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: sv_td_bench -d DEV [-n POSTS] [-p POLLS] [-r ROUNDS]\n");
			return 2;
		}
	}
	if (!dev || !posts || !polls || !rounds) {
		fprintf(stderr, "usage: sv_td_bench -d DEV [-n POSTS] [-p POLLS] [-r ROUNDS]\n");
		return 2;
	}
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		fail(dev, ENODEV);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		fail("ibv_alloc_pd", errno);
	td = ibv_alloc_td(ctx, &ta);
	if (!td)
		fail("ibv_alloc_td", errno);
	pa.pd = pd;
	pa.td = td;
	par = ibv_alloc_parent_domain(ctx, &pa);
	if (!par)
		fail("ibv_alloc_parent_domain", errno);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		fail("ibv_reg_mr", errno);
	cq = make_cq(ctx, NULL);
	tcq = make_cq(ctx, par);
	/* Interleaved, so both see the same machine. */
	for (r = 0; r < rounds; r++) {
		pr = best(pr, post_ns(pd, cq, mr, posts));
		prt = best(prt, post_ns(par, tcq, mr, posts));
		po = best(po, poll_ns(cq, polls));
		pot = best(pot, poll_ns(tcq, polls));
	}
	printf("post_recv_ns %.2f post_recv_td_ns %.2f poll_ns %.2f poll_td_ns %.2f\n",
	       pr, prt, po, pot);
	ibv_destroy_cq(tcq);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(par);
	ibv_dealloc_td(td);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
