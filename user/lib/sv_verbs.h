/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libsoftverbs internals shared by the library's files.
 *
 * The library is a drop-in libibverbs: it compiles against the system's
 * <infiniband/verbs.h> and fills its structs so the header's inline
 * functions dispatch into our code. Each verbs object type lives in one
 * file (pd.c, mr.c, cq.c, qp.c, ...), matching kernel/<type>.c.
 */
#ifndef SV_VERBS_H
#define SV_VERBS_H

#include <errno.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include "softverbs-abi.h"

/* An opened softverbs device: the verbs context and its char device fd. */
struct sv_doorbell;

/* A ring mapped from the device file, registered with its context. */
struct sv_ring_map {
	void *addr;			/* NULL: not mapped */
	size_t len;
	struct sv_ring_map *prev, *next;
};

struct sv_context {
	struct verbs_context vctx;	/* first: ibv_context is inside */
	/* every ring mapped (ring_map.c), unmapped at close */
	pthread_mutex_t maps_lock;
	struct sv_ring_map maps;
	/* data path (post.c): the doorbell page, mapped with the first QP */
	struct sv_doorbell *db;
	size_t db_len;
	__u64 *hint;			/* the hint bitmap, if the kernel has it */
	/* empty polls (post.c): no drive before (ns), the next back-off */
	uint64_t drive_after;
	uint64_t drive_backoff;
	bool no_drive;			/* the kernel does not drive */
	bool no_ring_qp;		/* nor take SV_RING_QP */
	/* posts left their rings to the next poll (uapi: SV_DB_DEFER) */
	uint32_t deferred;
};

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

static inline struct sv_context *to_svctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct sv_context, vctx.context);
}

/*
 * Issue one softverbs ioctl; arg is an ABI struct whose first member is its
 * size. Returns 0, or an errno value (also left in errno), as the verbs
 * calls that return int do.
 */
static inline int sv_cmd(struct ibv_context *ctx, unsigned long req, void *arg)
{
	if (ioctl(ctx->cmd_fd, req, arg) == 0)
		return 0;
	return errno;
}

/* Visibility for functions the version script exports. */
#define SV_EXPORT __attribute__((visibility("default")))

/*
 * ---- Core: devices, contexts, and how each file plugs in its ops ----
 *
 * Exported functions. Every public ibv_* function is listed in
 * libsoftverbs.map under rdma-core's version node. The file that owns a
 * verb defines it with SV_EXPORT (pd.c defines ibv_alloc_pd, ...).
 * stubs.c holds a *weak* EOPNOTSUPP definition of every exported verb the
 * core does not own, so the library always exports the full list (binaries
 * linked with BIND_NOW load) and a file's strong definition simply replaces
 * the stub at link time: no file has to be edited when another lands.
 *
 * Context ops. The header's inline functions (ibv_poll_cq, ibv_post_send,
 * ibv_create_qp_ex, ibv_create_cq_ex, ibv_query_port, ...) call through
 * ibv_context.ops and struct verbs_context. ibv_open_device() first points
 * EVERY op at a default that fails (int ops return EOPNOTSUPP, pointer ops
 * return NULL with errno EOPNOTSUPP; none is ever NULL), then runs each
 * registered ops provider in link order. A file registers itself with
 *
 *	static int sv_cq_ctx_init(struct sv_context *ctx)
 *	{
 *		ctx->vctx.context.ops.poll_cq = sv_poll_cq;
 *		ctx->vctx.context.ops.req_notify_cq = sv_req_notify_cq;
 *		ctx->vctx.create_cq_ex = sv_create_cq_ex;
 *		return 0;
 *	}
 *	SV_CTX_PROVIDER(cq, sv_cq_ctx_init, NULL);
 *
 * init may also set up per-context state the file owns (it may allocate
 * and hang it off fields it adds to struct sv_context, open context->
 * async_fd, map doorbells ...). Returning an errno value fails
 * ibv_open_device() with that errno after the providers already run are
 * undone by their fini, in reverse order. fini (may be NULL) runs at
 * ibv_close_device(), in reverse order, before cmd_fd is closed.
 * Providers are collected in the ELF section "sv_ctx_providers".
 *
 * async_fd is -1 until the event file's provider opens one.
 */
struct sv_context;

struct sv_ctx_provider {
	const char *name;
	int (*init)(struct sv_context *ctx);
	void (*fini)(struct sv_context *ctx);
};

#define SV_CTX_PROVIDER(tag, initfn, finifn)				\
	static const struct sv_ctx_provider sv_ctx_provider_##tag	\
	__attribute__((used, section("sv_ctx_providers"),		\
		       aligned(sizeof(void *)))) =			\
		{ .name = #tag, .init = (initfn), .fini = (finifn) }

/*
 * A device found in /sys/class/softverbs. Handed out as its embedded
 * struct ibv_device; reference counted: one reference for each device
 * list that holds it and one for each open context.
 */
struct sv_device {
	struct ibv_device ibdev;
	int refcnt;			/* atomic */
	int index;			/* N of softverbsN */
	__be64 node_guid;
};

static inline struct sv_device *to_svdev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct sv_device, ibdev);
}

/* device.c */
void sv_device_get(struct sv_device *dev);
void sv_device_put(struct sv_device *dev);

/* query.c: the device attributes the library caches at open */
int sv_query_device_raw(struct ibv_context *ctx, struct sv_query_device *q);

/*
 * ---- CQs and completion channels (cq.c, event.c) ----
 *
 * A CQ's ring is mapped from the kernel (layout and ordering rules in
 * uapi/softverbs-abi.h); polling and arming never enter the kernel.
 * Events are read from anonymous fds: the channel's fd for completion
 * events, context->async_fd (opened by event.c's provider) for async ones.
 * Objects that async events name pass their own pointer as user_handle
 * when they are created; ibv_get_async_event() hands it back.
 */
#include <pthread.h>
#include <stdbool.h>

struct sv_comp_channel {
	struct ibv_comp_channel ch;	/* first: handed out */
	uint32_t handle;
};

static inline struct sv_comp_channel *to_svchan(struct ibv_comp_channel *ch)
{
	return container_of(ch, struct sv_comp_channel, ch);
}

struct sv_cq {
	union {				/* first: handed out */
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;	/* starts like struct ibv_cq */
	};
	pthread_spinlock_t lock;	/* pollers, unless single threaded */
	bool single_threaded;
	struct ibv_pd *parent;		/* its parent domain, or NULL */
	struct sv_cq_ring *ring;
	char *cqes;			/* entries of cqe_size bytes */
	uint32_t cqe_size;		/* SV_CQE_SIZE or SV_CQE_128_SIZE */
	uint32_t mask;			/* entries - 1 */
	uint32_t cons;			/* our copy of ring->cons */
	uint64_t wc_flags;
	void *app_ring;			/* its parent domain's buffer, or NULL */
	struct sv_ring_map map;
	uint32_t cqe_offset;
	struct sv_cqe cur;		/* ibv_cq_ex: the current CQE */
	uint64_t cur_wallclock;		/* ... and its sv_cqe_ext's */
	/*
	 * Signaled send WRs of its QPs not yet polled (post.c): while any
	 * are, a poll will come, and posts may leave their rings to it.
	 * Only a guess (an error completes unsignaled WRs too).
	 */
	int64_t sig_out;
	/*
	 * Empty polls in a row, and the clock (ns) at the run's first read
	 * or its last yield: cq.c, sv_cq_idle().
	 */
	uint32_t empty;
	uint64_t empty_since;
};

static inline struct sv_cq *to_svcq(struct ibv_cq *cq)
{
	return container_of(cq, struct sv_cq, cq);
}

static inline struct sv_cq *to_svcq_ex(struct ibv_cq_ex *cq)
{
	return container_of(cq, struct sv_cq, cq_ex);
}

/* PD and MR (pd.c, mr.c): ibv_pd.handle / ibv_mr.handle are kernel handles. */
struct sv_td;

/*
 * A protection domain, or a parent domain (td.c): protection is then the
 * PD it stands for (its handle is ibpd.handle), with an optional thread
 * domain and the application's allocators.
 */
struct sv_pd {
	struct ibv_pd ibpd;
	unsigned int parents;		/* parent domains over it */
	unsigned int uses;		/* a parent domain's QPs and CQs */
	struct sv_pd *protection;	/* a parent domain's PD, or NULL */
	struct sv_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
};

/* td.c */
bool sv_pd_single_threaded(struct ibv_pd *pd);
int sv_parent_domain_free(struct ibv_pd *pd);
void sv_pd_use(struct ibv_pd *pd, int delta);
void *sv_pd_ring_take(struct ibv_context *ctx, struct ibv_pd *pd,
		      uint64_t res_type, uint32_t move_type, uint32_t handle,
		      size_t len, int *err);
void sv_pd_buffer_put(struct ibv_pd *pd, void *buf, uint64_t type);
/* The resource types sv_pd_ring_take() hands a parent's alloc(). */
#define SV_RES_TYPE_QP	((uint64_t)0x5356 << 32 | 1)
#define SV_RES_TYPE_CQ	((uint64_t)0x5356 << 32 | 2)
#define SV_RES_TYPE_SRQ	((uint64_t)0x5356 << 32 | 3)
#define SV_RES_TYPE_RWQ	((uint64_t)0x5356 << 32 | 4)

struct sv_mr {
	struct ibv_mr ibmr;
};

struct ibv_mr *sv_mr_create(struct ibv_pd *pd, unsigned long req, void *cmd,
			    const uint32_t *handle, const uint32_t *lkey,
			    const uint32_t *rkey, void *addr, size_t length);

static inline struct sv_pd *to_svpd(struct ibv_pd *pd)
{
	return container_of(pd, struct sv_pd, ibpd);
}

static inline struct sv_mr *to_svmr(struct ibv_mr *mr)
{
	return container_of(mr, struct sv_mr, ibmr);
}

/*
 * ---- QPs, SRQs, AHs (qp.c, srq.c, ah.c) ----
 *
 * ibv_qp.handle, ibv_srq.handle and ibv_ah.handle are kernel handles;
 * qp_num is the kernel's QPN. QPs and SRQs pass their own pointer as the
 * user_handle their async events carry.
 */
/* data path (post.c): a work queue ring mapped from the kernel */
struct sv_uwq {
	struct sv_wq_ring *ring;
	char *wqes;
	uint32_t entries;
	uint32_t wqe_size;
	uint32_t prod;			/* our copy of ring->prod */
	uint32_t max_sge;
	struct sv_ring_map map;
	pthread_spinlock_t lock;	/* posters */
	bool single;			/* one thread at a time: no lock (TD) */
};

static inline void sv_uwq_lock(struct sv_uwq *wq)
{
	if (!wq->single)
		pthread_spin_lock(&wq->lock);
}

static inline void sv_uwq_unlock(struct sv_uwq *wq)
{
	if (!wq->single)
		pthread_spin_unlock(&wq->lock);
}

/*
 * ibv_wr_flush() (RDMA FLUSH): rdma-core 45 appended its builder to
 * struct ibv_qp_ex, right after wr_atomic_write, where rdma-core 44's
 * struct ends. A program built with newer headers calls it there.
 */
typedef void (*sv_wr_flush_fn)(struct ibv_qp_ex *qp, uint32_t rkey,
			       uint64_t remote_addr, size_t len, uint8_t type,
			       uint8_t level);
#define SV_QP_EX_WITH_FLUSH	(1ULL << 11)	/* IBV_QP_EX_WITH_FLUSH */
#define SV_WR_OP_FLUSH		14		/* IBV_WR_FLUSH */

struct sv_qp {
	struct ibv_qp_ex qpx;		/* first: qpx.qp_base is handed out */
	sv_wr_flush_fn wr_flush;	/* ibv_qp_ex's, rdma-core 45 on */
	struct mlx5dv_qp_ex dv;		/* libmlx5's builders (post.c) */
	uint32_t kqp_type;		/* the kernel's SV_QPT_* */
	bool has_qpx;			/* created with SEND_OPS_FLAGS */
	uint64_t send_ops_flags;
	uint64_t dv_send_ops;		/* MLX5DV_QP_EX_WITH_MR_* (mkey.c) */
	int wr_err;			/* what ibv_wr_complete() returns */
	/* data path (post.c) */
	struct sv_uwq sq, rq;
	uint32_t db_slot;		/* its doorbell hint slot (post.c) */
	bool sig_all;			/* created with sq_sig_all */
	uint32_t wr_nsig;		/* ibv_wr_*: signaled WRs since start */
	void *app_ring;			/* its parent domain's buffer, or NULL */
	uint32_t max_inline;
	uint32_t max_tso_header;	/* RAW_PACKET: IBV_WR_TSO headers */
	uint32_t wr_start_prod;		/* ibv_wr_start(): first WR's index */
	void *wr_cur;			/* ibv_wr_*: the WQE being built */
	/* mlx5dv_wr_mkey_configure(): its UMR until the last setter */
	struct sv_send_umr *umr;
	struct sv_mkey *umr_mkey;
	uint8_t umr_setters;		/* setters still to come */
};

/*
 * The send WQE room a QP with mlx5 mkey send ops has at least: a UMR of
 * this many entries (mlx5 rounds an mkey's entries up to 4).
 */
#define SV_UMR_MIN_ENTRIES	4
#define SV_UMR_MIN_ROOM		(sizeof(struct sv_send_umr) + \
				 SV_UMR_MIN_ENTRIES * sizeof(struct sv_umr_ent))

/* cq.c: drop a QP's CQEs from a CQ (RESET, destroy) */
void sv_cq_clean(struct ibv_cq *cq, uint32_t qpn);

/* mkey.c: an indirect key (mlx5dv_create_mkey), laid out by UMR WQEs */
struct sv_mkey {
	struct mlx5dv_mkey dv;		/* handed out */
	struct ibv_context *ctx;
	uint32_t handle;
	uint32_t max_entries;
};

/* ring_map.c: the rings a context maps, unmapped at its close */
void *sv_ring_map(struct ibv_context *ctx, struct sv_ring_map *m,
		  uint64_t off, size_t len);
void sv_ring_replace(struct ibv_context *ctx, struct sv_ring_map *m,
		     void *addr, size_t len);
void sv_ring_unmap(struct ibv_context *ctx, struct sv_ring_map *m);

/* post.c: an empty poll takes work waiting for a busy engine (cq.c) */
bool sv_db_rx_ring(struct ibv_context *ctx, uint32_t cq_handle);
uint64_t sv_now_ns(void);
void sv_db_flush(struct ibv_context *ctx);

/* post.c: a receive or send ring's mapping (QPs, SRQs, WQs) */
int sv_uwq_map(struct ibv_context *ctx, struct sv_uwq *wq, uint64_t off,
	       size_t len, uint32_t ring, uint32_t max_sge);
int sv_uwq_attach(struct ibv_context *ctx, struct sv_uwq *wq,
		  struct ibv_pd *pd, uint64_t res_type, uint32_t move_type,
		  uint32_t handle, uint64_t off, size_t len, uint32_t max_sge,
		  void **app);
void sv_uwq_unmap(struct ibv_context *ctx, struct sv_uwq *wq);

/* post.c: map/unmap a QP's or SRQ's rings (qp.c, srq.c call these) */
int sv_dp_qp_map(struct sv_qp *qp, const struct ibv_qp_cap *cap);
void sv_dp_qp_unmap(struct sv_qp *qp);
void sv_dp_fill_wr_ops(struct sv_qp *qp);
/* post.c: the raw QPs' transmit offloads in ibv_query_device_ex (wq.c) */
void sv_tx_fill_caps(struct ibv_device_attr_ex *ex, uint32_t raw_caps);
struct sv_srq;
int sv_dp_srq_map(struct sv_srq *srq, uint32_t max_sge);
int sv_dp_srq_remap(struct sv_srq *srq, uint64_t off, size_t len);
void sv_dp_srq_unmap(struct sv_srq *srq);

/* counters.c: ACTION_COUNT specs' counters pointers -> handles (flow.c) */
int sv_flow_attr_counters(struct ibv_context *ctx, void *buf, size_t len);
/* wq.c: RSS QPs (qp.c's ibv_create_qp_ex), the WQ capabilities (query.c) */
struct ibv_qp *sv_create_rss_qp(struct ibv_context *ctx,
				struct ibv_qp_init_attr_ex *attr,
				uint32_t dv_flags);
void sv_wq_fill_caps(struct ibv_device_attr_ex *ex, uint32_t raw_caps);

_Static_assert(offsetof(struct sv_qp, wr_flush) == sizeof(struct ibv_qp_ex),
	       "ibv_wr_flush() finds its builder right after struct ibv_qp_ex");

static inline struct sv_qp *to_svqp(struct ibv_qp *qp)
{
	return container_of(qp, struct sv_qp, qpx.qp_base);
}

/* xrcd.c: an XRC domain handle */
struct sv_xrcd {
	struct ibv_xrcd xrcd;		/* first: handed out */
	uint32_t handle;
};

static inline struct sv_xrcd *to_svxrcd(struct ibv_xrcd *x)
{
	return container_of(x, struct sv_xrcd, xrcd);
}

/* qp.c: the ibv_qp of a new QP or of a handle on an XRC TGT QP */
void sv_qp_init_base(struct sv_qp *qp, struct ibv_context *ctx,
		     uint32_t handle, uint32_t qpn, enum ibv_qp_type type);

struct sv_srq {
	struct ibv_srq srq;		/* first: handed out */
	uint32_t srqn;			/* ibv_get_srq_num() */
	uint32_t tm_max_ops;		/* a TM SRQ's; 0 for others */
	struct sv_uwq rq;		/* data path (post.c) */
	void *app_ring;			/* its parent domain's buffer, or NULL */
};

struct sv_ah {
	struct ibv_ah ah;		/* first: handed out */
	struct ibv_ah_attr attr;	/* as created: the UD destination */
};

static inline struct sv_ah *to_svah(struct ibv_ah *ah)
{
	return container_of(ah, struct sv_ah, ah);
}

#endif /* SV_VERBS_H */
