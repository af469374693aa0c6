/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * sv_rc.h: what the verbs benchmark tools (sv_syscall_bench,
 * sv_scale_bench, sv_regmr_bench, sv_odp_bench) share: a device opened
 * by name, an RC QP taken from RESET to RTS, connected to a QP of the
 * same port by GID, and the median of a run's rounds. Header-only: each
 * tool is one .c file.
 */
#ifndef SV_RC_H
#define SV_RC_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

/* The device called name, opened; NULL with errno (ENODEV: none). */
static inline struct ibv_context *sv_open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		return NULL;
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		errno = ENODEV;
	return ctx;
}

/* A count from 1 to max written in s (any base strtoul takes); 0 if not. */
static inline unsigned long sv_parse_count(const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	return errno || end == s || *end || v > max ? 0 : v;
}

/* sv_parse_count(), or the program's usage() (which exits) if s is bad. */
static inline unsigned long sv_parse_count_or(const char *s, unsigned long max,
					      void (*usage)(void))
{
	unsigned long v = sv_parse_count(s, max);

	if (!v)
		usage();
	return v;
}

static inline int sv_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of n values (sorts them). */
static inline double sv_median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), sv_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * qp, in RESET, to RTS with dqpn as its peer at gid (our sgid_index
 * gid_index on port 1), remote writes allowed, path MTU mtu: 0, or -1
 * with errno from the ibv_modify_qp() that failed.
 */
static inline int sv_rc_connect(struct ibv_qp *qp, uint32_t dqpn,
				const union ibv_gid *gid, int gid_index,
				enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) ? -1 : 0;
}

#endif /* SV_RC_H */
