/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers for the selftests that use the verbs API. */
#ifndef SV_DP_TEST_H
#define SV_DP_TEST_H

#include <endian.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static inline int qp_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (qp->qp_type == IBV_QPT_UD) {
		a.qkey = 0x1234;
		mask |= IBV_QP_QKEY;
	} else {
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &a, mask);
}

static inline int qp_rtr_rts(struct ibv_qp *qp, uint32_t dqpn,
		      const union ibv_gid *gid, int rnr_retry, int min_rnr,
		      int retry_cnt)
{
	struct ibv_qp_attr a = {};
	int mask = IBV_QP_STATE;
	int ret;

	a.qp_state = IBV_QPS_RTR;
	if (qp->qp_type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_4096;
		a.dest_qp_num = dqpn;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = *gid;
		a.ah_attr.grh.sgid_index = 1;
		a.ah_attr.grh.hop_limit = 1;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
	}
	if (qp->qp_type == IBV_QPT_RC) {
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = min_rnr;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	ret = ibv_modify_qp(qp, &a, mask);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qp->qp_type == IBV_QPT_RC) {
		a.timeout = 8;
		a.retry_cnt = retry_cnt;
		a.rnr_retry = rnr_retry;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(qp, &a, mask);
}

/*
 * An RC QP through INIT, RTR and RTS the way ibv_rc_pingpong connects one:
 * path MTU 1024, a GRH from sgid_index to gid, one outstanding read or
 * atomic each way, retries 7. 0 or an errno value, as ibv_modify_qp().
 */
static inline int rc_connect_gid(struct ibv_qp *qp, uint32_t dqpn,
				 const union ibv_gid *gid, int sgid_index,
				 int access, uint32_t rq_psn, uint32_t sq_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = access,
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = sgid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Poll one completion, waiting up to 5 s; 1 if got one. */
static inline int poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		/* Longer on a slow (debug) kernel: SV_SLOW. */
		if (t.tv_sec - t0.tv_sec > 5 * sv_slow())
			return 0;
		usleep(100);
	}
}

static inline int post_recv(struct ibv_qp *qp, struct ibv_mr *mr,
			    void *buf, uint32_t len, uint64_t id)
{
	struct ibv_sge sg = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static inline int post_send(struct ibv_qp *qp, enum ibv_wr_opcode op,
			    uint32_t lkey, void *buf, uint32_t len, uint64_t id,
			    int flags, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = { (uintptr_t)buf, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = len ? 1 : 0,
		.opcode = op, .send_flags = flags,
	};
	struct ibv_send_wr *bad;

	wr.imm_data = htobe32(0xabcd);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/* A byte pattern that differs for every seed, to check data landed. */
static inline void sv_fill(char *p, size_t n, int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (char)(i * 7 + seed);
}

/* Open the device called @name in @list; NULL if there is none. */
static inline struct ibv_context *sv_open_named(struct ibv_device **list,
						const char *name)
{
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			return ibv_open_device(list[i]);
	return NULL;
}

/* build/selftests/<test> -> build/bin/svctl; 0 or -1. */
static inline int sv_svctl_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = 0;
	return snprintf(buf, len, "%s/../bin/svctl", dirname(exe)) <
	       (int)len ? 0 : -1;
}

/* One counter of svctl's JSON "stat show" of a device; -1 if absent. */
static inline long long sv_stat_of(const char *svctl, const char *dev,
				   const char *name)
{
	char cmd[PATH_MAX + 64], out[4096], key[64];
	long long v = -1;
	size_t n;
	FILE *p;
	char *at;

	snprintf(cmd, sizeof(cmd), "%s -j stat show dev %s", svctl, dev);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	if (pclose(p))
		return -1;
	snprintf(key, sizeof(key), "\"%s\"", name);
	at = strstr(out, key);
	if (at) {
		at += strlen(key);
		while (*at == ' ' || *at == ':')
			at++;
		v = strtoll(at, NULL, 10);
	}
	return v;
}

/*
 * Two RC QPs of softverbs0, a and b, each with its own CQ, connected to
 * each other with every remote right, the way the memory tests (odp,
 * dmabuf, null_mr) use them: the test registers its MRs on pd.
 */
struct sv_rc_pair {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *acq, *bcq;
	struct ibv_qp *a, *b;
	union ibv_gid gid;
};

#define SV_ALL_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* An RC QP back through RESET and INIT to RTS, now naming dqpn. */
static inline int qp_reset_rts(struct ibv_qp *qp, uint32_t dqpn,
			       const union ibv_gid *gid, int retry_cnt)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE) || qp_init(qp, SV_ALL_ACCESS))
		return -1;
	return qp_rtr_rts(qp, dqpn, gid, 7, 1, retry_cnt);
}

static inline struct ibv_qp *sv_rc_pair_qp(struct sv_rc_pair *p,
					   struct ibv_cq *cq, uint32_t wr,
					   uint32_t sge)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = sge, .max_recv_sge = sge },
	};

	return ibv_create_qp(p->pd, &ia);
}

/* 0, or -1 with what was made left for sv_rc_pair_close(). */
static inline int sv_rc_pair_open(struct sv_rc_pair *p, uint32_t wr,
				  uint32_t sge)
{
	p->list = ibv_get_device_list(NULL);
	p->ctx = sv_open_named(p->list, "softverbs0");
	if (!p->ctx || ibv_query_gid(p->ctx, 1, 1, &p->gid))
		return -1;
	p->pd = ibv_alloc_pd(p->ctx);
	if (!p->pd)
		return -1;
	p->acq = ibv_create_cq(p->ctx, 2 * wr, NULL, NULL, 0);
	p->bcq = ibv_create_cq(p->ctx, 2 * wr, NULL, NULL, 0);
	if (!p->acq || !p->bcq)
		return -1;
	p->a = sv_rc_pair_qp(p, p->acq, wr, sge);
	p->b = sv_rc_pair_qp(p, p->bcq, wr, sge);
	if (!p->a || !p->b)
		return -1;
	if (qp_init(p->a, SV_ALL_ACCESS) || qp_init(p->b, SV_ALL_ACCESS) ||
	    qp_rtr_rts(p->a, p->b->qp_num, &p->gid, 7, 1, 0) ||
	    qp_rtr_rts(p->b, p->a->qp_num, &p->gid, 7, 1, 0))
		return -1;
	return 0;
}

/* After the test's own MRs are gone. */
static inline void sv_rc_pair_close(struct sv_rc_pair *p)
{
	if (p->a)
		ibv_destroy_qp(p->a);
	if (p->b)
		ibv_destroy_qp(p->b);
	if (p->acq)
		ibv_destroy_cq(p->acq);
	if (p->bcq)
		ibv_destroy_cq(p->bcq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->ctx)
		ibv_close_device(p->ctx);
	if (p->list)
		ibv_free_device_list(p->list);
}

/* The status of the one completion of id on cq (*out: it); -1 if none. */
static inline int sv_status_of(struct ibv_cq *cq, uint64_t id,
			       struct ibv_wc *out)
{
	struct ibv_wc wc = {};

	if (poll1(cq, &wc) != 1 || wc.wr_id != id)
		return -1;
	if (out)
		*out = wc;
	return wc.status;
}

/* Whether the n bytes from p are all v. */
static inline int sv_all_bytes(const char *p, size_t n, char v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

#endif /* SV_DP_TEST_H */
