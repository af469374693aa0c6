/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the QP, SRQ and AH selftests: raw-ioctl wrappers that return
 * 0 or the errno value, and a valid RoCE address vector.
 */
#ifndef SV_QP_TEST_H
#define SV_QP_TEST_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "sv_test.h"

#define SV_DEBUGFS0_OBJS "/sys/kernel/debug/" SV_CLASS_NAME "/softverbs0/objects"

/* Live objects of one type on softverbs0, from debugfs; -1 if unknown. */
static inline int sv_nobjs(const char *type)
{
	char line[128], name[64];
	FILE *fp = fopen(SV_DEBUGFS0_OBJS, "r");
	int n, ret = -1;

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "%63s %d", name, &n) == 2 &&
		    !strcmp(name, type))
			ret = n;
	fclose(fp);
	return ret;
}

static inline int sv_ioc(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? errno : 0;
}

static inline uint32_t sv_alloc_pd(int fd)
{
	struct sv_alloc_pd a = { .size = sizeof(a) };

	return sv_ioc(fd, SV_IOC_ALLOC_PD, &a) ? 0 : a.pd_handle;
}

static inline int sv_dealloc_pd(int fd, uint32_t pd)
{
	struct sv_dealloc_pd d = { .size = sizeof(d), .pd_handle = pd };

	return sv_ioc(fd, SV_IOC_DEALLOC_PD, &d);
}

static inline uint32_t sv_create_cq(int fd)
{
	struct sv_create_cq c = { .size = sizeof(c), .cqe = 16 };

	return sv_ioc(fd, SV_IOC_CREATE_CQ, &c) ? 0 : c.handle;
}

static inline int sv_destroy_cq(int fd, uint32_t cq)
{
	struct sv_destroy_cq d = { .size = sizeof(d), .handle = cq };

	return sv_ioc(fd, SV_IOC_DESTROY_CQ, &d);
}

static inline void sv_qp_req(struct sv_create_qp *c, uint32_t type,
			     uint32_t pd, uint32_t scq, uint32_t rcq,
			     uint32_t srq)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->qp_type = type;
	c->pd_handle = pd;
	c->send_cq_handle = scq;
	c->recv_cq_handle = rcq;
	c->srq_handle = srq;
	c->cap.max_send_wr = 10;
	c->cap.max_recv_wr = 20;
	c->cap.max_send_sge = 2;
	c->cap.max_recv_sge = 3;
	c->cap.max_inline_data = 64;
}

static inline int sv_destroy_qp(int fd, uint32_t qp)
{
	struct sv_destroy_qp d = { .size = sizeof(d), .handle = qp };

	return sv_ioc(fd, SV_IOC_DESTROY_QP, &d);
}

static inline int sv_create_srq(int fd, uint32_t pd, uint32_t max_wr,
				uint32_t max_sge, uint32_t *handle)
{
	struct sv_create_srq c = { .size = sizeof(c), .pd_handle = pd,
				   .max_wr = max_wr, .max_sge = max_sge };
	int ret = sv_ioc(fd, SV_IOC_CREATE_SRQ, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

static inline int sv_destroy_srq(int fd, uint32_t srq)
{
	struct sv_destroy_srq d = { .size = sizeof(d), .handle = srq };

	return sv_ioc(fd, SV_IOC_DESTROY_SRQ, &d);
}

/* GID index 0 and 1 always exist: fe80::<EUI-64> as RoCE v1 and v2. */
#define SV_TEST_SGID	1
/* Without a netdev nothing fills this entry. */
#define SV_TEST_EMPTY_SGID	(SV_GID_TBL_LEN - 1)

static inline void sv_good_av(struct sv_ah_attr *ah)
{
	static const uint8_t dgid[16] = { 0xfe, 0x80, [15] = 0x42 };

	memset(ah, 0, sizeof(*ah));
	memcpy(ah->dgid, dgid, sizeof(dgid));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->sgid_index = SV_TEST_SGID;
	ah->hop_limit = 64;
	ah->flow_label = 0x12345;
	ah->traffic_class = 0x20;
	ah->sl = 3;
}

#endif /* SV_QP_TEST_H */
