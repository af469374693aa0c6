/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * librdmacm.so.1 for softverbs devices: what its files share.
 */
#ifndef SV_COMPAT_RDMACM_H
#define SV_COMPAT_RDMACM_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "../../uapi/softverbs-cm.h"

#define SV_EXPORT __attribute__((visibility("default")))

struct sv_cm_mcp;

/*
 * A channel: the kernel's (kfd), and beside it the system librdmacm's when
 * that library serves devices too (rdmacm_system.c); ch.fd is then an
 * epoll fd over both, for the program's poll().
 */
struct sv_cm_chan {
	struct rdma_event_channel ch;
	int kfd;
	struct rdma_event_channel *sys;
};

static inline struct sv_cm_chan *sv_chan(struct rdma_event_channel *ch)
{
	return (struct sv_cm_chan *)ch;
}

static inline int sv_kfd(struct rdma_event_channel *ch)
{
	return sv_chan(ch)->kfd;
}

/* The rdma_set_option() values an id keeps, for its system id. */
#define SV_CM_OPTS	4

/* An rdma_cm_id and what the library keeps of it. */
struct sv_cm_idp {
	struct rdma_cm_id id;
	/*
	 * The system library's id beside it (a wildcard bind: a listener on
	 * both), or instead of it (fwd: no kernel id, every call goes there).
	 */
	struct rdma_cm_id *sys;
	bool fwd;
	uint8_t opt_set;		/* bit n: opt_val[n] was set */
	int opt_val[SV_CM_OPTS];
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
	struct rdma_cm_event *sys_ev;	/* the system library's, acked with it */
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
struct sv_cm_idp *sv_idp_new(struct rdma_event_channel *ch, void *context,
			     enum rdma_port_space ps, enum ibv_qp_type qpt);
void sv_idp_free(struct sv_cm_idp *p);
bool sv_cm_addr_ours(const struct sockaddr *a);

/* The system's librdmacm beside ours (rdmacm_system.c). */
struct rdma_event_channel *sv_cms_channel(void);
void *sv_cms_sym(const char *name);
int sv_cms_errno(void);
int sv_cms_attach(struct sv_cm_idp *p);
void sv_cms_push(struct sv_cm_idp *p);
void sv_cms_pull(struct sv_cm_idp *p);
void sv_cms_commit(struct sv_cm_idp *p);
int sv_cms_wait(struct rdma_event_channel *ch);
bool sv_cms_nonblock(struct rdma_event_channel *ch);
int sv_cms_event(struct rdma_event_channel *ch, struct sv_cm_evp *e);
struct ibv_context **sv_cms_devices(int *num);

/* Call the system library's fn; errno is taken from its libc. */
#define SV_CMS(fn, ...)							\
	({								\
		__auto_type _r =					\
			((__typeof__(&fn))sv_cms_sym(#fn))(__VA_ARGS__); \
		errno = sv_cms_errno();					\
		_r;							\
	})

#define SV_CMS_VOID(fn, ...)						\
	do {								\
		((__typeof__(&fn))sv_cms_sym(#fn))(__VA_ARGS__);	\
		errno = sv_cms_errno();					\
	} while (0)

/* fn on a forwarded id's system id, its fields copied each way. */
#define SV_CMS_FWD_VOID(p, fn)						\
	do {								\
		sv_cms_push(p);						\
		SV_CMS_VOID(fn, (p)->sys);				\
		sv_cms_pull(p);						\
	} while (0)

#define SV_CMS_FWD(p, fn, ...)						\
	({								\
		sv_cms_push(p);						\
		__auto_type _f = SV_CMS(fn, (p)->sys, ##__VA_ARGS__);	\
		sv_cms_pull(p);						\
		_f;							\
	})

#endif /* SV_COMPAT_RDMACM_H */
