/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * librdmacm.so.1 for softverbs devices: what its files share.
 */
#ifndef SV_COMPAT_RDMACM_H
#define SV_COMPAT_RDMACM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "../../uapi/softverbs-cm.h"

#define SV_EXPORT __attribute__((visibility("default")))

struct sv_cm_mcp;

/* An rdma_cm_id and what the library keeps of it. */
struct sv_cm_idp {
	struct rdma_cm_id id;
	uint32_t handle;
	pthread_mutex_t lock;		/* the counts below; cond */
	pthread_cond_t cond;
	uint32_t events_completed;
	struct ibv_sa_path_rec path;
	uint8_t req_resp_res, req_init_depth;	/* a request's, for accept */
	struct sv_cm_mcp *mcs;		/* its joins (rdmacm_mcast.c) */
	bool sync;			/* a channel of its own (rdmacm_sync.c) */
	struct ibv_qp_init_attr *qp_init_attr;	/* a passive endpoint's */
};

/* A multicast join of an id. */
struct sv_cm_mcp {
	struct sv_cm_mcp *next;
	struct sv_cm_idp *idp;
	void *context;
	struct sockaddr_storage addr;
	union ibv_gid mgid;
	uint8_t sgid_index, hop_limit, traffic_class;
	bool sendonly;
	uint32_t events_completed;	/* under idp->lock */
};

/* An event handed out: the owner's counts move when it is acked. */
struct sv_cm_evp {
	struct rdma_cm_event ev;
	struct sv_cm_idp *owner;
	struct sv_cm_mcp *mc;		/* a join's event */
	uint8_t private_data[SV_CM_PRIVATE_MAX];
};

static inline struct sv_cm_idp *sv_idp(struct rdma_cm_id *id)
{
	return (struct sv_cm_idp *)id;
}

int sv_cm_ioctl(int fd, unsigned long cmd, void *arg);
int sv_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
		 void *context, enum rdma_port_space ps, enum ibv_qp_type qpt);
int sv_complete(struct rdma_cm_id *id);
void sv_mc_event(struct sv_cm_evp *e, const struct sv_cm_get_event *k);
void sv_mc_leave_all(struct sv_cm_idp *p);

#endif /* SV_COMPAT_RDMACM_H */
