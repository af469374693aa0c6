/* SPDX-License-Identifier: GPL-2.0 */
/* softverbs: module-internal declarations shared between files. */
#ifndef SV_H
#define SV_H

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <linux/rcupdate.h>

#include <linux/hrtimer.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <net/net_namespace.h>

#include "../uapi/softverbs-abi.h"
#include "../uapi/softverbs-netlink.h"

#define SV_MAX_DEVICES	64

/* Queue depth limits of a device (depth.c). */
enum sv_depth {
	SV_DEPTH_QP_WR,
	SV_DEPTH_CQE,
	SV_DEPTH_SRQ_WR,
	SV_DEPTH_MAX
};

enum sv_obj_type {
	SV_OBJ_NONE,
	SV_OBJ_PD,
	SV_OBJ_MR,
	SV_OBJ_CQ,
	SV_OBJ_QP,
	SV_OBJ_SRQ,
	SV_OBJ_AH,
	SV_OBJ_COMP_CHANNEL,
	SV_OBJ_WQ,
	SV_OBJ_RWQ_IND_TBL,
	SV_OBJ_FLOW,
	SV_OBJ_COUNTERS,
	SV_OBJ_FLOW_MATCHER,
	SV_OBJ_STEER_TABLE,
	SV_OBJ_STEER_ANCHOR,
	SV_OBJ_STEER_ACTION,
	SV_OBJ_MKEY,
	SV_OBJ_MW,
	SV_OBJ_DM,
	SV_OBJ_XRCD,			/* a file's handle on an XRC domain */
	SV_OBJ_XRC_QP,			/* ... on an XRC TGT QP (xrc.c) */
	SV_OBJ_MAX
};

/* query.c: one entry of a device's RoCE GID table */
struct sv_gid_entry {
	u8 gid[16];
	u32 type;			/* SV_GID_TYPE_* */
	u32 ifindex;			/* netdev of the address, or 0 */
	bool valid;
};

/*
 * One softverbs device: a char device /dev/infiniband/softverbsN and its
 * sysfs node /sys/class/softverbs/softverbsN. Its lifetime is the embedded
 * struct device's reference count: every open file holds a reference.
 */
struct sv_device {
	struct device dev;
	struct cdev cdev;
	u32 index;
	u8 mac[6];
	__be64 node_guid;
	struct dentry *debugfs;
	atomic_t nobjs[SV_OBJ_MAX];	/* charged objects of each type */
	struct sv_dev_limits *limits;	/* limits.c */
	/* query.c: the RoCE GID table of port 1 */
	spinlock_t gid_lock;		/* protects gids[]; BH-safe */
	struct sv_gid_entry gids[SV_GID_TBL_LEN];

	/* QPs and multicast (qp.c, mcast.c) */
	struct xarray qps;		/* qpn -> struct sv_qp, RCU lookups */
	struct ida srqns;		/* SRQ numbers (srq.c) */
	struct xarray xsrqs;		/* srqn -> XRC SRQ, RCU lookups */
	struct mutex xrcd_lock;		/* xrcds (xrc.c) */
	struct list_head xrcds;		/* XRC domains opened by inode */
	u32 next_qpn;			/* cyclic QPN allocation */
	struct mutex mcast_lock;	/* the multicast groups and attachments */
	struct list_head mcast_groups;	/* struct sv_mcast_grp, RCU readers */
	struct list_head mcast_leaving;	/* groups gone, joined on the netdev */
	struct delayed_work mcast_work;	/* joins and leaves on the netdev */
	bool mcast_unbound;		/* no more of them: unbound */
	u32 mcast_ngroups;
	u32 mcast_nattach;

	/* Management plane (device.c, netdev.c, netlink.c, stats.c) */
	struct mutex files_lock;	/* files; nests inside rtnl */
	struct list_head files;		/* struct sv_file, by id */
	u64 next_file_id;
	bool dead;			/* unregistered: see sv_ioctl() */
	bool removable;			/* made by "link add" */
	struct net_device *ndev;	/* bound netdev; rtnl + sv_devices_lock */
	/*
	 * The network namespace the device lives in: its netdev's, or
	 * init_net. Set at creation; meaningful while the device is
	 * registered (a netdev leaving its namespace removes the device).
	 */
	possible_net_t net;
	netdevice_tracker ndev_tracker;
	u8 port_state;			/* SV_PORT_ACTIVE or SV_PORT_DOWN */
	u8 active_mtu;			/* SV_MTU_* */
	u32 idle_us;			/* engine idle time before sleeping */
	u32 part_id;			/* vendor_part_id (svctl dev set) */
	u32 vendor_id;			/* vendor_id (svctl dev set) */
	u32 max_depth[SV_DEPTH_MAX];	/* depth.c */
	struct work_struct gid_work;	/* GID_CHANGE from atomic context */
	struct sv_steer *steer;		/* flow steering tables (steer/) */
	struct sv_steer *steer_tx;	/* ... the egress rules' */
	u64 __percpu *stats;		/* SV_STAT_MAX counters per CPU */
};

/*
 * Data path (engine.c, exec.c): a work queue ring shared with the library.
 * cons is the kernel's copy; the ring's own cons is only written.
 */
struct sv_wq {
	struct sv_mbuf *buf;
	struct sv_wq_ring *ring;
	void *wqes;
	u32 entries;
	u32 wqe_size;
	u32 cons;
	u64 mmap_offset;
	u32 ring_off;			/* of ring in buf */
	bool map_shared;		/* another ring's mapping (its entry) */
	/*
	 * Consumers take lock, or with bh bh_lock: a receive queue that only
	 * steered frames fill (a RAW_PACKET QP's own, a WQ's) takes them in
	 * softirq (steer/rx.c), so its consumers must not sleep. Set once
	 * at create; sv_wq_lock() picks.
	 */
	struct mutex lock;
	spinlock_t bh_lock;		/* consumers, with bh */
	bool bh;
};

/* For sparse, either lock is the one context "wq". */
static inline void sv_wq_lock(struct sv_wq *wq) __acquires(wq)
{
	if (wq->bh) {
		spin_lock_bh(&wq->bh_lock);
	} else {
		mutex_lock(&wq->lock);
		__acquire(&wq->bh_lock);
	}
}

static inline void sv_wq_unlock(struct sv_wq *wq) __releases(wq)
{
	if (wq->bh) {
		spin_unlock_bh(&wq->bh_lock);
	} else {
		__release(&wq->bh_lock);
		mutex_unlock(&wq->lock);
	}
}

static inline void sv_wq_assert_held(struct sv_wq *wq)
{
	if (wq->bh)
		lockdep_assert_held(&wq->bh_lock);
	else
		lockdep_assert_held(&wq->lock);
}

/* Per-open-file state: the verbs context of one process (or fd). */
struct sv_file {
	struct sv_device *sdev;
	struct mutex lock;		/* serializes control ioctls */
	struct xarray objs;		/* handle -> struct sv_uobj */
	struct xarray mmaps;		/* mmap key -> entry (mmap.c) */
	struct sv_evq *async_evq;	/* async events (event.c) */
	struct list_head dev_node;	/* sdev->files, under files_lock */
	u64 id;				/* resource dump cursor */
	struct sv_engine_file *ef;	/* its engine share (engine.c), or NULL */
	/* file.c: an fd to install once a command's result is out */
	struct file *new_filp;		/* under lock */
	int new_fd;
	struct rdma_cgroup *rdmacg;	/* charged an hca_handle (limits.c) */
	kuid_t uid;			/* the opener's real uid (f_cred) */
};

struct sv_uobj;
struct sv_user_objs;
struct rdma_cgroup;

/* limits.c: what creating one object was charged; zeroed: nothing. */
struct sv_charge {
	struct sv_device *sdev;		/* sdev->nobjs[type] */
	struct sv_user_objs *user;	/* the uid's share, or NULL: exempt */
	struct rdma_cgroup *rdmacg;	/* hca_object, or NULL */
	enum sv_obj_type type;
};

struct sv_uobj_ops {
	/* The handle left the table: tear down, drop parents' usecnt. */
	void (*destroy)(struct sv_uobj *u);
	/* The last reference is gone: free the memory. */
	void (*free)(struct sv_uobj *u);
};

/* Embedded first in every object userspace names by handle. */
struct sv_uobj {
	struct kref ref;
	struct sv_file *file;
	u32 handle;
	enum sv_obj_type type;
	atomic_t usecnt;		/* live objects that name this one */
	const struct sv_uobj_ops *ops;
	struct pid *owner;		/* creator's thread group (dumps) */
	char comm[TASK_COMM_LEN];	/* creator's command */
	struct sv_charge charge;	/* returned when the handle goes */
};

static inline struct sv_device *to_sv_device(struct device *dev)
{
	return container_of(dev, struct sv_device, dev);
}

/* device.c */
int sv_device_class_init(void);
void sv_device_class_exit(void);
struct sv_device *sv_device_create(const char *name, const u8 *mac,
				   struct net *net);

/* uobj.c */
const char *sv_obj_name(enum sv_obj_type type);
int sv_uobj_add(struct sv_file *f, struct sv_uobj *u, enum sv_obj_type type,
		const struct sv_uobj_ops *ops);
struct sv_uobj *sv_uobj_get(struct sv_file *f, u32 handle,
			    enum sv_obj_type type);
void sv_uobj_put(struct sv_uobj *u);
int sv_uobj_destroy(struct sv_file *f, u32 handle, enum sv_obj_type type);
int sv_uobj_destroy_of(struct sv_file *f, u32 handle, u32 types);
void sv_uobj_destroy_all(struct sv_file *f);

/* depth.c */
void sv_depth_device_init(struct sv_device *sdev);
u32 sv_depth(struct sv_device *sdev, enum sv_depth d);
void sv_depth_set(struct sv_device *sdev, enum sv_depth d, u32 n);

/* limits.c */
struct kernel_param;
int sv_limit_param_set(const char *val, const struct kernel_param *kp,
		       unsigned int max);
u32 sv_obj_limit(struct sv_device *sdev, enum sv_obj_type type);
void sv_obj_limit_set(struct sv_device *sdev, enum sv_obj_type type, u32 n);
int sv_charge(struct sv_file *f, enum sv_obj_type type, struct sv_charge *c);
void sv_uncharge(struct sv_charge *c);
int sv_pinned_charge(struct mm_struct *mm, unsigned long npages);
void sv_pinned_uncharge(struct mm_struct *mm, unsigned long npages);
int sv_limits_file_open(struct sv_file *f);
void sv_limits_file_release(struct sv_file *f);
int sv_limits_device_init(struct sv_device *sdev);
void sv_limits_device_fini(struct sv_device *sdev);

/* debugfs.c */
void sv_debugfs_init(void);
void sv_debugfs_exit(void);
void sv_debugfs_add_device(struct sv_device *sdev);
void sv_debugfs_del_device(struct sv_device *sdev);

/* query.c: device, port, GID and P_Key queries */
int sv_query_device(struct sv_file *f, void *arg);
int sv_query_port(struct sv_file *f, void *arg);
int sv_query_gid(struct sv_file *f, void *arg);
int sv_query_pkey(struct sv_file *f, void *arg);
void sv_gid_table_init(struct sv_device *sdev);
int sv_gid_add(struct sv_device *sdev, const u8 gid[16], u32 ifindex);
bool sv_gid_present(struct sv_device *sdev, const u8 gid[16]);
void sv_gid_get(struct sv_device *sdev, u32 index, u8 gid[16]);
int sv_gid_index(struct sv_device *sdev, const u8 gid[16], u32 type);
void sv_gid_del(struct sv_device *sdev, const u8 gid[16], u32 ifindex);
bool sv_gid_del_netdev(struct sv_device *sdev, u32 ifindex);
bool sv_gid_on(struct sv_device *sdev, const u8 gid[16], u32 ifindex);
u32 sv_gid_ifindex(struct sv_device *sdev, u32 index);

/* PD and MR (pd.c, mr/mr.c) */

/* A protection domain. Children pin it: sv_pd_pin() ... sv_pd_unpin(). */
struct sv_pd {
	struct sv_uobj uobj;
};

struct sv_pd *sv_pd_get(struct sv_file *f, u32 handle);
void sv_pd_put(struct sv_pd *pd);
struct sv_pd *sv_pd_pin(struct sv_file *f, u32 handle);
void sv_pd_unpin(struct sv_pd *pd);
int sv_alloc_pd(struct sv_file *f, void *arg);
int sv_dealloc_pd(struct sv_file *f, void *arg);
int sv_query_pd(struct sv_file *f, void *arg);

/* MR keys: a 24-bit index (never 0) and an 8-bit variant. */
#define SV_MR_KEY_INDEX_BITS	24

struct sv_mr;

/*
 * The data path's view of an MR: a checked span of it, "entered" so that
 * neither rereg nor dereg can change it until sv_mr_span_put(). Spans are
 * held for the execution of one work request.
 */
struct sv_mr_span {
	struct sv_mr *mr;
	u64 off;			/* of the first byte in the MR's pages */
	u64 len;
	/*
	 * Set by a caller that may not sleep (softirq): a page of an ODP MR
	 * that is not present is -EAGAIN (its fault is queued), not faulted.
	 */
	bool nofault;
};

/*
 * The MR that the last key looked up through it named (mr.c), good while
 * no key index has been given back since; zeroed, it is empty. Used by
 * one thread at a time (a list in the engine's scratch).
 *
 * With keep set it also keeps entered (held) an MR over pinned pages
 * that it took a second span of in a row, with the key, PD and rights
 * that span was checked for: a later span of the same key needs only its
 * bounds checked. A closer (dereg, rereg) waits for it like for a copy,
 * so the keeper gives it up with sv_mr_cache_drop() at the end of each
 * bounded engine pass. The data path never closes such an MR
 * (invalidations close only windows and indirect keys, which are not
 * kept) and never takes the file lock a closer holds: keeping cannot
 * deadlock.
 */
struct sv_mr_cache {
	struct sv_mr *mr;
	u64 gen;
	u32 index;
	bool keep;
	struct sv_mr *held;
	struct sv_pd *held_pd;
	u32 held_key;
	u32 held_access;
};

void sv_mr_cache_drop(struct sv_mr_cache *cache);

int sv_mr_span_get(struct sv_device *sdev, u32 key, struct sv_pd *pd,
		   u32 access, u64 iova, u64 len, struct sv_mr_span *sp,
		   struct sv_mr_cache *cache);
struct sv_qp;
int sv_mr_flush(struct sv_qp *dqp, struct sv_pd *pd, u32 rkey, u32 access,
		u64 iova, u64 len, bool whole);

/*
 * An RDMA FLUSH's placement types (SV_FLUSH_GLOBAL, _PERSISTENT: at least
 * one, no other) and selectivity (SV_FLUSH_RANGE or _MR): fit to carry
 * out? And the flush rights (SV_ACCESS_FLUSH_*) its types need of the
 * responder's QP and MR.
 */
static inline bool sv_flush_kind_ok(u32 type, u32 level)
{
	return type && !(type & ~(SV_FLUSH_GLOBAL | SV_FLUSH_PERSISTENT)) &&
	       (level == SV_FLUSH_RANGE || level == SV_FLUSH_MR);
}

static inline u32 sv_flush_access(u32 type)
{
	return (type & SV_FLUSH_GLOBAL ? SV_ACCESS_FLUSH_GLOBAL : 0) |
	       (type & SV_FLUSH_PERSISTENT ? SV_ACCESS_FLUSH_PERSISTENT : 0);
}

int sv_mr_span_get_remote(struct sv_qp *dqp, struct sv_pd *pd, u32 rkey,
			  u32 access, u64 iova, u64 len,
			  struct sv_mr_span *sp, struct sv_mr_cache *cache);
void sv_mr_span_put(struct sv_mr_span *sp);
/*
 * The copies fail with -ERANGE outside a span; a page of an ODP MR that
 * cannot be had (not mapped, not writable, the process gone) is -EFAULT,
 * or SV_ECOPY_SRC when it is the source's in sv_mr_span_copy(): the side
 * that lost it gets the error.
 */
#define SV_ECOPY_SRC	(-ENODATA)
bool sv_span_fits(const struct sv_mr_span *sp, u64 off, u64 len);
int sv_mr_span_copy(const struct sv_mr_span *dst, u64 doff,
		    const struct sv_mr_span *src, u64 soff, u64 len);
int sv_mr_span_write(const struct sv_mr_span *dst, u64 doff,
		     const void *buf, u64 len);
int sv_mr_span_read(const struct sv_mr_span *src, u64 soff, void *buf,
		    u64 len);

/*
 * An aligned 8-byte word of a span, mapped for an atomic: nothing can
 * move the page until sv_mr_word_put(). BHs are off in between.
 */
struct sv_odp;
struct sv_mr_word {
	u64 *p;
	spinlock_t *lock;		/* held, if the MR's pages need one */
	const struct sv_mr_span *piece;	/* the direct span it is in */
	struct sv_mr_span tmp;		/* ... when that is a piece's */
};

int sv_mr_word_get(const struct sv_mr_span *sp, u64 off, bool write,
		   struct sv_mr_word *w) __acquires(pages);
void sv_mr_word_put(struct sv_mr_word *w) __releases(pages);

/* mr/odp.c: the workqueue of on-demand paging */
int sv_odp_init(void);
void sv_odp_exit(void);

/* A resolved scatter/gather list: MR spans, held until released (exec.c). */
struct sv_sg {
	struct sv_mr_span ent[SV_MAX_SGE];
	u32 n;
	u64 len;
	struct sv_mr_cache cache;	/* the last key it looked up */
};

int sv_sg_resolve(struct sv_sg *sg, struct sv_device *sdev, struct sv_pd *pd,
		  u32 access, const struct sv_sge *sges, u32 n);
void sv_sg_release(struct sv_sg *sg);
void sv_mr_debugfs_add(struct sv_device *sdev, struct dentry *dir);
int sv_reg_mr(struct sv_file *f, void *arg);
int sv_rereg_mr(struct sv_file *f, void *arg);
int sv_advise_mr(struct sv_file *f, void *arg);
int sv_alloc_null_mr(struct sv_file *f, void *arg);
int sv_reg_dmabuf_mr(struct sv_file *f, void *arg);
int sv_null_mr_init(void);
void sv_null_mr_exit(void);
int sv_dereg_mr(struct sv_file *f, void *arg);
int sv_query_mr(struct sv_file *f, void *arg);
int sv_reg_dm_mr(struct sv_file *f, void *arg);

/* mr/dm.c: device memory */
struct sv_dm {
	struct sv_uobj uobj;
	struct sv_mbuf *buf;		/* zeroed, mapped by the library */
	u64 length;
	u64 mmap_offset;
};

int sv_alloc_dm(struct sv_file *f, void *arg);
int sv_free_dm(struct sv_file *f, void *arg);
int sv_query_dm(struct sv_file *f, void *arg);
struct sv_dm *sv_dm_get(struct sv_file *f, u32 handle);

/*
 * CQs, completion channels, async events, shared memory
 * (cq.c, event.c, mmap.c)
 */

/* mmap.c: a buffer shared with userspace, alive until its last user. */
struct sv_mbuf {
	struct kref ref;
	void *vaddr;		/* vmap() of pages (one: its address), zeroed */
	size_t size;		/* page aligned */
	struct page **pages;	/* charged to the creator's memory cgroup */
	unsigned long npages;
	struct mm_struct *mm;	/* charged npages of pinned_vm; grabbed */
	bool user;		/* the user's pinned pages, never mapped */
};

struct vm_area_struct;
struct sv_mbuf *sv_mbuf_alloc(size_t size);
struct sv_mbuf *sv_mbuf_pin(u64 addr, size_t size);
int sv_move_ring(struct sv_file *f, void *arg);
struct sv_cq;
struct sv_srq;
int sv_wq_move(struct sv_file *f, struct sv_qp *qp, struct sv_mbuf *nb);
int sv_srq_move(struct sv_file *f, struct sv_srq *srq, struct sv_mbuf *nb);
int sv_wq_move_one(struct sv_file *f, struct sv_wq *wq, struct sv_mbuf *nb);
int sv_rwq_move(struct sv_file *f, struct sv_uobj *u, struct sv_mbuf *nb);
size_t sv_rwq_ring_size(struct sv_uobj *u);
int sv_cq_move(struct sv_file *f, struct sv_cq *cq, struct sv_mbuf *nb);
void sv_mbuf_put(struct sv_mbuf *b);
int sv_mmap_entry_add(struct sv_file *f, struct sv_mbuf *b, u64 *offset);
struct sv_mbuf *sv_mbuf_alloc_mapped(struct sv_file *f, size_t size,
				     u64 *offset);
void sv_mmap_entry_remove(struct sv_file *f, u64 offset);
int sv_mmap(struct file *filp, struct vm_area_struct *vma);
void sv_mmap_file_init(struct sv_file *f);
void sv_mmap_file_cleanup(struct sv_file *f);

/*
 * event.c: an event queue behind an anonymous fd (a completion channel,
 * or a file's async events). Objects that events name embed a struct
 * sv_event_obj: it links their unread events, so destroying the object
 * can drop them, and counts the ones userspace read (the *_reported
 * values destroy ioctls return). Both are protected by the lock of the
 * queue the events are on.
 */
struct sv_evq;

struct sv_event_obj {
	struct list_head comp_events;	/* on the CQ's channel */
	struct list_head async_events;	/* on the file's async queue */
	u32 comp_reported;
	u32 async_reported;
};

struct sv_comp_channel {
	struct sv_uobj uobj;
	struct sv_evq *evq;
};

void sv_event_obj_init(struct sv_event_obj *eo);
int sv_event_file_init(struct sv_file *f);
void sv_event_file_cleanup(struct sv_file *f);
/*
 * Any context. element: the object's user_handle, or a port number. An
 * event the owner (NULL: the file) has unread already is merged into it.
 */
void sv_async_event(struct sv_file *f, u32 event_type, u64 element,
		    struct sv_event_obj *owner);
/* Drop owner's unread async events; owner->async_reported is final. */
void sv_async_event_detach(struct sv_file *f, struct sv_event_obj *owner);
/*
 * Any context: queue a completion event, or merge it into the CQ's unread
 * one; false if out of memory or the channel is closed.
 */
bool sv_comp_event(struct sv_comp_channel *ch, u64 user_handle,
		   u32 cq_handle, struct sv_event_obj *owner);
void sv_comp_event_detach(struct sv_comp_channel *ch,
			  struct sv_event_obj *owner);
struct sv_comp_channel *sv_comp_channel_get(struct sv_file *f, u32 handle);
int sv_create_comp_channel(struct sv_file *f, void *arg);
int sv_destroy_comp_channel(struct sv_file *f, void *arg);
int sv_get_async_fd(struct sv_file *f, void *arg);

/* cq.c */
struct sv_cq {
	struct sv_uobj uobj;
	spinlock_t lock;		/* producers (sv_cq_push) */
	struct sv_mbuf *ring_buf;
	struct sv_cq_ring *ring;	/* header in ring_buf */
	void *cqes;			/* entries CQEs in ring_buf */
	u32 cqe_size;			/* SV_CQE_SIZE or SV_CQE_128_SIZE */
	u32 entries;
	u32 prod;			/* the kernel's copy, never read back */
	u32 flags;			/* SV_CQ_FLAG_* */
	bool overflowed;
	bool dead;			/* destroyed: sv_cq_push refuses */
	u64 wc_flags;
	u64 user_handle;
	u64 mmap_offset;
	struct sv_comp_channel *channel;	/* or NULL; referenced */
	struct sv_event_obj events;
	/* Event moderation (ibv_modify_cq), under lock */
	u16 mod_count;
	u16 mod_period;			/* microseconds; 0: no timer */
	u32 mod_pending;		/* completions owed an event */
	struct hrtimer mod_timer;
};

/* A referenced CQ by handle; put it with sv_uobj_put(&cq->uobj). */
struct sv_cq *sv_cq_get(struct sv_file *f, u32 handle);
bool sv_cq_has_entries(struct sv_cq *cq);
int sv_cq_push(struct sv_cq *cq, const struct sv_cqe *cqe, bool solicited);

/* When a completion happened: ns of the device clock and of CLOCK_REALTIME */
struct sv_cq_stamp {
	u64 raw;
	u64 real;
};

int sv_cq_push_stamped(struct sv_cq *cq, const struct sv_cqe *cqe,
		       bool solicited, const struct sv_cq_stamp *ts);
int sv_create_cq(struct sv_file *f, void *arg);
int sv_resize_cq(struct sv_file *f, void *arg);
int sv_modify_cq(struct sv_file *f, void *arg);
int sv_destroy_cq(struct sv_file *f, void *arg);
int sv_test_cq_push(struct sv_file *f, void *arg);

/* file.c */
extern const struct file_operations sv_fops;
void sv_file_defer_fd(struct sv_file *f, int fd, struct file *filp);

/*
 * QPs, SRQs, AHs, multicast (qp.c, qp_attr.c, srq.c, ah.c, mcast.c).
 *
 * A QP is found by handle (its file's table) or by QPN (sv_qp_get(), the
 * data path: RCU lookup in sdev->qps plus a reference). It keeps a
 * reference and a usecnt on the PD, CQs and SRQ it names; the references
 * go when the QP's memory goes, so whoever drops the last QP reference
 * must be in process context.
 */
struct sv_qp {
	struct sv_uobj uobj;		/* first */
	struct sv_device *sdev;
	struct rcu_head rcu;
	u32 qpn;
	u32 qp_type;			/* SV_QPT_* */
	u32 flags;			/* SV_CREATE_QP_* */
	u32 create_flags;		/* SV_QP_CREATE_* */
	u32 source_qpn;			/* SOURCE_QPN: the QPN it sends as */
	u32 max_tso_header;		/* RAW_PACKET: SV_WR_TSO headers, or 0 */
	struct sv_uobj *pd;
	struct sv_uobj *send_cq;
	struct sv_uobj *recv_cq;
	struct sv_uobj *srq;		/* NULL without an SRQ */
	/* XRC TGT (xrc.c): its domain and the handles on it, qp->lock */
	struct sv_xrcd *xrcd;
	struct list_head xrc_handles;
	struct sv_qp_cap cap;
	spinlock_t lock;		/* attr: the data path reads it */
	struct sv_qp_attr attr;		/* attr.qp_state is the state */
	struct list_head mcast;		/* sv_mcast_attach, under mcast_lock */
	u64 user_handle;
	struct sv_event_obj events;
	/* data path (engine.c, exec.c) */
	struct sv_wq sq;		/* lock: the engine executing it */
	struct sv_wq rq;		/* unused with an SRQ */
	struct list_head engine_node;	/* on its file's engine share, or empty */
	struct list_head ready_node;	/* on its share's ready list, or empty */
	u32 db_slot;			/* its doorbell hint slot, SV_DB_NO_SLOT */
	u64 wait_until;			/* ktime_get_ns(): RNR/retry back-off */
	u32 rnr_left;			/* RNR retries left for the head WQE */
	u32 retry_left;			/* transport retries left */
	bool waiting;			/* backing off before a retry */
	/* Pacing (pace.c): under sq.lock */
	u64 pace_bps;			/* bytes per second; 0: none */
	u64 pace_burst;			/* bytes the bucket holds at most */
	s64 pace_tokens;		/* bytes; negative: in debt */
	u64 pace_last;			/* ktime_get_ns() of the last refill */
	bool retried;			/* rnr_left or retry_left went down */
	u32 dest_qpn;			/* RC, UC: attr's, for the engine */
	u8 dest_gid[16];
	/*
	 * Connected QPs: the destination the last message found, while
	 * sv_route_gen() is still dest_gen (exec.c); under sq.lock. No
	 * reference: RCU and the generation say whether it still lives.
	 */
	struct sv_qp *dest_cache;
	u64 dest_gen;
	bool last_wqe_sent;		/* SRQ: LAST_WQE_REACHED raised */
	bool dead;			/* destroyed: no more execution */
	bool left_reset;		/* has left RESET: rings stay put */
	u32 tx_psn;			/* wire/: the next frame's PSN */
	struct sv_wire_qp *wire;	/* RC, UC on the wire (wire/qp.c) */
	/* steered frames for the engine to receive (steer/rx.c) */
	struct sk_buff_head rxq;
	u32 rxq_bytes;			/* truesize queued; rxq.lock */
	/* the last frame's arrival stamp: rxq.lock, or lock if rx is direct */
	struct sv_cq_stamp rx_last;
	struct sv_rss_qp *rss;		/* an RSS QP (steer/rss.c), or NULL */
	/* DC (exec.c): a DCT's key; a DCI's streams, errored ones under sq.lock */
	u64 dc_key;
	u32 dci_streams;		/* stream channels, 0: none */
	u32 dci_max_errored;		/* streams in error that fail the DCI */
	unsigned long dci_errored;	/* bitmap of streams in error */
	/*
	 * tm.c: the FIN of a rendezvous this QP's last send asked for, not
	 * yet placed in this QP's receive queue: its engine places it
	 * before the next WQE; under sq.lock
	 */
	bool tm_fin_pending;
	u32 tm_fin_src;			/* the QPN it comes from */
	u8 tm_fin[32];			/* TMH and RVH */
};

/* The PD a QP was made in. */
static inline struct sv_pd *sv_qp_pd(const struct sv_qp *qp)
{
	return container_of(qp->pd, struct sv_pd, uobj);
}

static inline bool sv_qp_is_dc(const struct sv_qp *qp)
{
	return qp->qp_type == SV_QPT_DCI || qp->qp_type == SV_QPT_DCT;
}

/* Does the requester wait for an answer (RC, DCI), or is it unreliable? */
static inline bool sv_qp_reliable(const struct sv_qp *qp)
{
	return qp->qp_type == SV_QPT_RC || qp->qp_type == SV_QPT_DCI ||
	       qp->qp_type == SV_QPT_XRC_SEND;
}

/*
 * SV_CREATE_QP_* (uapi) of a RAW_PACKET or RSS QP's receive side, from
 * mlx5dv_create_qp(): the TIR flags (steer/rxmeta.c, steer/table.c).
 */
#define SV_CREATE_QP_TIR_SELF_LB	(SV_CREATE_QP_TIR_SELF_LB_UC |	\
					 SV_CREATE_QP_TIR_SELF_LB_MC)
#define SV_CREATE_QP_TIR_FLAGS		(SV_CREATE_QP_TUNNEL_OFFLOADS |	\
					 SV_CREATE_QP_MLX5_TIR |	\
					 SV_CREATE_QP_TIR_SELF_LB)

/* IBV_QP_CREATE_* (enum ibv_qp_create_flags) */
#define SV_QP_CREATE_BLOCK_SELF_MC_LB	BIT(1)	/* BLOCK_SELF_MCAST_LB */
#define SV_QP_CREATE_SCATTER_FCS	BIT(8)
#define SV_QP_CREATE_CVLAN_STRIPPING	BIT(9)
#define SV_QP_CREATE_SOURCE_QPN		BIT(10)
#define SV_QP_CREATE_PCI_WRITE_END_PADDING BIT(11)

/* The QPN a QP's messages carry as their source. */
static inline u32 sv_qp_wire_qpn(const struct sv_qp *qp)
{
	return qp->source_qpn ?: qp->qpn;
}

struct sv_srq {
	struct sv_uobj uobj;		/* first */
	struct rcu_head rcu;		/* XRC: sv_xsrq_get() */
	struct sv_uobj *pd;
	int srqn;			/* ibv_get_srq_num() */
	/* XRC: its domain (xrc.c), the file's handle on it, its CQ */
	struct sv_xrcd *xrcd;
	struct sv_uobj *xrcd_handle;
	struct sv_uobj *cq;
	struct sv_tm *tm;		/* a TM SRQ's tag list (tm.c), or NULL */
	bool dead;			/* destroyed: set under lock and rq's */
	spinlock_t lock;		/* max_wr, limit, dead */
	u32 max_wr;
	u32 max_sge;
	u32 limit;			/* 0: not armed */
	u64 user_handle;
	struct sv_event_obj events;
	struct sv_wq rq;		/* data path */
};

struct sv_ah {
	struct sv_uobj uobj;		/* first */
	struct sv_uobj *pd;
	struct sv_ah_attr attr;
};

/* The bytes of an IB MTU (SV_MTU_*); 0 for none. */
static inline u32 sv_mtu_bytes(u32 mtu)
{
	return mtu >= SV_MTU_256 && mtu <= SV_MTU_4096 ? 128U << mtu : 0;
}

/* qp.c */
void sv_qp_device_init(struct sv_device *sdev);
void sv_qp_device_fini(struct sv_device *sdev);
struct sv_qp *sv_qp_get(struct sv_device *sdev, u32 qpn);
bool sv_gid_local(struct sv_device *own, const u8 dgid[16]);
struct sv_qp *sv_qp_route(struct sv_device *own, const u8 dgid[16], u32 qpn,
			  bool *local);
void sv_qp_put(struct sv_qp *qp);
void sv_qp_unpublish(struct sv_qp *qp);
u64 sv_route_gen(void);
void sv_route_changed(void);
int sv_create_qp(struct sv_file *f, void *arg);
int sv_modify_qp(struct sv_file *f, void *arg);
int sv_query_qp(struct sv_file *f, void *arg);
int sv_destroy_qp(struct sv_file *f, void *arg);
int sv_reset_dci_stream(struct sv_file *f, void *arg);

extern const struct sv_uobj_ops sv_qp_ops;

/* xrc.c: XRC domains, TGT QPs and the handles on them */
struct sv_xrcd;
void sv_xrc_device_init(struct sv_device *sdev);
void sv_xrc_device_fini(struct sv_device *sdev);
void sv_xrcd_put(struct sv_xrcd *x);
struct sv_uobj *sv_xrcd_use(struct sv_file *f, u32 handle,
			    struct sv_xrcd **x);
void sv_xrcd_unuse(struct sv_uobj *u, struct sv_xrcd *x);
int sv_open_xrcd(struct sv_file *f, void *arg);
int sv_close_xrcd(struct sv_file *f, void *arg);
int sv_xrc_tgt_create(struct sv_file *f, struct sv_qp *qp,
		      struct sv_create_qp *c);
int sv_open_qp(struct sv_file *f, void *arg);
struct sv_uobj *sv_qp_uobj_get(struct sv_file *f, u32 handle);
struct sv_qp *sv_qp_lookup(struct sv_file *f, u32 handle);
struct sv_event_obj *sv_xrc_qp_events(struct sv_uobj *u);
void sv_xrc_qp_event(struct sv_qp *qp, u32 event);
struct sv_srq *sv_xsrq_get(struct sv_qp *tgt, u32 srqn);

/* qp_attr.c */
int sv_qp_check_modify(struct sv_qp *qp, u32 mask,
		       const struct sv_qp_attr *attr);
void sv_qp_apply_modify(struct sv_qp *qp, u32 mask,
			const struct sv_qp_attr *attr);

/* srq.c */
int sv_create_srq(struct sv_file *f, void *arg);
int sv_modify_srq(struct sv_file *f, void *arg);
int sv_query_srq(struct sv_file *f, void *arg);
int sv_destroy_srq(struct sv_file *f, void *arg);

/* ah.c */
int sv_ah_attr_check(struct sv_device *sdev, const struct sv_ah_attr *ah);
void sv_ah_attr_normalize(struct sv_ah_attr *ah);
int sv_create_ah(struct sv_file *f, void *arg);
int sv_destroy_ah(struct sv_file *f, void *arg);

/* mcast.c */
int sv_attach_mcast(struct sv_file *f, void *arg);
int sv_detach_mcast(struct sv_file *f, void *arg);
void sv_mcast_detach_all(struct sv_qp *qp);
void sv_mcast_device_init(struct sv_device *sdev);
void sv_mcast_device_fini(struct sv_device *sdev);
void sv_mcast_unbind(struct sv_device *sdev, struct net_device *ndev);
void sv_mcast_upper(struct sv_device *sdev, struct net_device *upper,
		    bool join);
bool sv_mcast_member(struct sv_device *sdev, const u8 *gid);
bool sv_gid_is_multicast(const u8 *gid);
u32 sv_mcast_rcu_qps(struct sv_device *sdev, const u8 *gid,
		     struct sv_qp **qps, u32 max);
int sv_mcast_qps(struct sv_device *sdev, const u8 *gid, struct sv_qp **qps,
		 int max);

/*
 * Data path (engine.c: the pool of execution kthreads shared by every
 * file, rings, doorbell; exec.c: executing one send WQE against its
 * destination).
 */
struct sv_engine;
struct sv_engine_file;
struct seq_file;

int sv_wq_init(struct sv_file *f, struct sv_wq *wq, u32 entries,
	       u32 wqe_size);
int sv_wq_resize(struct sv_file *f, struct sv_wq *wq, u32 entries);
void sv_wq_fini(struct sv_file *f, struct sv_wq *wq);
void sv_wq_free(struct sv_wq *wq);
int sv_dp_qp_create(struct sv_file *f, struct sv_qp *qp, bool shared_rings);
void sv_dp_qp_activate(struct sv_file *f, struct sv_qp *qp);
void sv_dp_qp_abort(struct sv_file *f, struct sv_qp *qp);
u32 sv_default_idle_us(void);
void sv_dp_qp_destroy(struct sv_qp *qp);
void sv_dp_qp_free(struct sv_qp *qp);
void sv_dp_qp_modified(struct sv_qp *qp, u32 old_state);
void sv_dp_qp_dest_changed(struct sv_qp *qp);
void sv_engine_kick_qp(struct sv_qp *qp);
void sv_engine_kick_rx(struct sv_qp *qp);
void sv_engine_detach(struct sv_file *f);
int sv_engines_init(void);
void sv_engines_exit(void);
int sv_map_wq(struct sv_file *f, void *arg);
int sv_map_doorbell(struct sv_file *f, void *arg);
int sv_ring_doorbell(struct sv_file *f, void *arg);
void sv_engines_show(struct seq_file *m);
/* exec.c */
enum sv_exec_result {
	SV_EXEC_DONE,		/* completed; CQE as the WQE asked */
	SV_EXEC_RETRY,		/* back off (qp->wait_until) and retry */
	/* completed in error: the QP (a DCI's stream, dc.c) is in ERR */
	SV_EXEC_FATAL,
};

/* IBV_WC_WR_FLUSH_ERR */
#define SV_WC_STATUS_FLUSH	5
/* IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOC_PROT_ERR */
#define SV_WC_STATUS_LOC_QP_OP_ERR	2
#define SV_WC_STATUS_LOC_PROT_ERR	4
/* IBV_WC_MW_BIND_ERR */
#define SV_WC_STATUS_MW_BIND_ERR	6

/* tm.c: tag matching on TM SRQs */
struct sv_tm;
int sv_tm_create(struct sv_srq *srq, u32 max_tags, u32 max_ops);
void sv_tm_free(struct sv_srq *srq);
int sv_post_srq_ops(struct sv_file *f, void *arg);

/* mr/mkey.c: indirect keys (mlx5dv_create_mkey) */
int sv_create_mkey(struct sv_file *f, void *arg);
int sv_destroy_mkey(struct sv_file *f, void *arg);
u32 sv_mkey_exec(struct sv_qp *qp, const struct sv_send_wqe *w);

/* mw.c: memory windows */
int sv_alloc_mw(struct sv_file *f, void *arg);
int sv_dealloc_mw(struct sv_file *f, void *arg);
u32 sv_mw_bind(struct sv_qp *qp, const struct sv_send_wqe *w);
int sv_mw_remote_inv(struct sv_device *sdev, struct sv_pd *pd, u32 rkey);

/* pace.c: ibv_modify_qp_rate_limit */
int sv_qp_rate_limit(struct sv_file *f, void *arg);
bool sv_pace_held(struct sv_qp *qp, u64 *until);
void sv_pace_charge(struct sv_qp *qp, u64 bytes);

/* dc.c */
bool sv_dc_key_ok(const struct sv_send_wqe *w, struct sv_qp *dct);
bool sv_dci_stream_blocked(struct sv_qp *qp, const struct sv_send_wqe *w);
bool sv_dci_stream_failed(struct sv_qp *qp, const struct sv_send_wqe *w);
void sv_dci_streams_reset(struct sv_qp *qp);

size_t sv_exec_buf_size(void);
void sv_exec_buf_keep(void *buf);
void sv_exec_buf_drop(void *buf);
enum sv_exec_result sv_exec_tm_fin(struct sv_qp *qp, void *buf, u32 *status);
enum sv_exec_result sv_exec_send(struct sv_qp *qp, struct sv_send_wqe *w,
				 void *buf, u32 *status);
void sv_sq_complete(struct sv_qp *qp, const struct sv_send_wqe *w, u32 size,
		    u32 status, bool always, bool qp_err);
void sv_qp_to_err(struct sv_qp *qp);
void sv_qp_fatal(struct sv_qp *qp);
void sv_dp_push(struct sv_uobj *cq, u64 wr_id, u32 status, u32 opcode,
		u32 byte_len, u32 qpn, bool solicited);

/*
 * Management plane: device registry, netdev binding, counters, generic
 * netlink (device.c, netdev.c, stats.c, netlink.c).
 *
 * Lock order: rtnl -> sv_devices_lock -> sdev->files_lock -> f->lock.
 */
extern struct mutex sv_devices_lock;
extern struct xarray sv_devices;	/* index -> sv_device; RCU readers */

#define SV_IDLE_US_DEFAULT	SV_NL_IDLE_US_DEFAULT
#define SV_IDLE_US_MAX		SV_NL_IDLE_US_MAX

struct sv_device *sv_device_find(const char *name);
struct sv_device *sv_device_find_net(const struct net *net, const char *name);

/* Does the device live in @net? (Registered devices; see sdev->net.) */
static inline bool sv_device_in_net(struct sv_device *sdev,
				    const struct net *net)
{
	return net_eq(read_pnet(&sdev->net), net);
}

void sv_device_remove(struct sv_device *sdev);

/* cm/: the connection manager (its device, and a device going away) */
int sv_cm_init(void);
void sv_cm_exit(void);
void sv_cm_device_gone(struct sv_device *sdev);
void sv_device_event(struct sv_device *sdev, u32 event_type);
void sv_device_remove_all(void);

int sv_netdev_bind(struct sv_device *sdev, struct net_device *ndev);
void sv_netdev_unbind(struct sv_device *sdev);
void sv_gid_work(struct work_struct *work);
int sv_netdev_gids_free(struct net *net, struct net_device *ndev);
struct sv_device *sv_device_by_netdev(const struct net_device *ndev);
struct sv_device *sv_device_by_addr_netdev(const struct net_device *ndev);
int sv_wire_upper_bind(struct sv_device *sdev, struct net_device *upper);
void sv_wire_upper_unbind(struct sv_device *sdev, struct net_device *upper);
bool sv_wire_upper_ours(const struct sv_device *sdev,
			const struct net_device *upper);
struct sv_device *sv_gid_holder(const struct net *net, struct sv_device *self,
				const u8 gid[16]);
int sv_netdev_init(void);
void sv_netdev_exit(void);

enum sv_stat {
	SV_STAT_TX_PKTS,
	SV_STAT_TX_BYTES,
	SV_STAT_RX_PKTS,
	SV_STAT_RX_BYTES,
	SV_STAT_COMPLETIONS,
	SV_STAT_RNR_NAKS,
	SV_STAT_RETRIES,
	SV_STAT_STEER_HITS,
	SV_STAT_STEER_MISSES,
	SV_STAT_STEER_DROPS,
	SV_STAT_DOORBELLS,		/* SV_IOC_DOORBELL calls */
	SV_STAT_DOORBELL_WQES,		/* WQEs executed in those calls */
	SV_STAT_RX_PEER_DROPS,		/* RC/UC: not from the connected peer */
	SV_STAT_RX_RAW_DROPS,		/* steered frames no QP could take */
	SV_STAT_STEER_MATCHED,		/* frames a NORMAL rule took */
	SV_STAT_STEER_TRAPPED,		/* ... a rule kept from the stack */
	SV_STAT_STEER_COPIES,		/* DONT_TRAP and sniffer copies */
	SV_STAT_STEER_PASSED,		/* ... no rule trapped */
	SV_STAT_RX_RAW_QUEUE_DROPS,	/* copies a full QP queue dropped */
	SV_STAT_STEER_TX_DROPS,		/* sent frames an egress rule dropped */
	SV_STAT_STEER_LOOP_DROPS,	/* frames sent round tables/anchors */
	SV_STAT_DC_KEY_DROPS,		/* DC messages with a wrong access key */
	SV_STAT_RX_ODP_DROPS,		/* frames dropped for an ODP page fault */
	SV_STAT_WIRE_TX_FRAMES,		/* RoCE v2 frames sent (wire/) */
	SV_STAT_WIRE_TX_BYTES,		/* ... their bytes from the BTH on */
	SV_STAT_WIRE_TX_DROPS,		/* ... not sent: no route, refused */
	SV_STAT_WIRE_RX_FRAMES,		/* RoCE v2 frames taken, good ICRC */
	SV_STAT_WIRE_RX_BYTES,		/* ... their bytes from the BTH on */
	SV_STAT_WIRE_RX_DROPS,		/* ... dropped: malformed, no QP ... */
	SV_STAT_WIRE_ICRC_ERRORS,	/* ... dropped for a bad ICRC */
	SV_STAT_WIRE_RX_OOS,		/* ... not the PSN expected */
	SV_STAT_WIRE_RX_DUPLICATES,	/* ... RC requests seen before */
	SV_STAT_WIRE_RETRANSMITS,	/* RC: sent again (timeout, NAK) */
	SV_STAT_WIRE_NAKS_SENT,		/* RC: NAKs and RNR NAKs sent */
	SV_STAT_WIRE_NAKS_RECEIVED,	/* RC: ... received */
	SV_STAT_DOORBELL_FRAMES,	/* queued frames doorbells took */
	SV_STAT_DRIVES,			/* SV_IOC_DOORBELL drives (polls) */
	SV_STAT_DRIVE_WQES,		/* WQEs of the file drives executed */
	SV_STAT_QP_RUNS,		/* QPs engine passes looked at */
	SV_STAT_MAX
};

int sv_stats_alloc(struct sv_device *sdev);
void sv_stats_free(struct sv_device *sdev);
const char *sv_stat_name(enum sv_stat stat);
u64 sv_stat_read(struct sv_device *sdev, enum sv_stat stat);

/* Any context. */
static inline void sv_stat_add(struct sv_device *sdev, enum sv_stat stat,
			       u64 n)
{
	this_cpu_add(sdev->stats[stat], n);
}

/* mr/mr.c, for resource dumps */
void sv_mr_res_info(struct sv_uobj *u, u32 *key, u64 *iova, u64 *length);

/*
 * Flow steering and raw Ethernet (steer/): see steer/steer.h. A bound
 * device's netdev rx_handler steers frames to RAW_PACKET and UD QPs.
 */
struct sv_steer;
int sv_steer_device_init(struct sv_device *sdev);
void sv_steer_device_fini(struct sv_device *sdev);
int sv_steer_init(void);
void sv_steer_exit(void);
int sv_steer_bind(struct sv_device *sdev, struct net_device *ndev);
void sv_steer_unbind(struct sv_device *sdev, struct net_device *ndev);
/* steer/tx.c: a RAW_PACKET QP's send WQE (from sv_exec_send()) */
enum sv_exec_result sv_tx_send(struct sv_qp *qp, struct sv_send_wqe *w,
			       struct sv_sg *sg, u32 *status);
u64 sv_tx_wqe_bytes(const struct sv_send_wqe *w, u32 size);
void sv_steer_qp_init(struct sv_qp *qp);
bool sv_steer_qp_pending(struct sv_qp *qp);
u32 sv_steer_qp_drain(struct sv_qp *qp, void *buf, u32 budget);
void sv_steer_qp_purge(struct sv_qp *qp);
int sv_create_flow(struct sv_file *f, void *arg);
int sv_destroy_flow(struct sv_file *f, void *arg);
/* steer/counters.c: flow counters (ACTION_COUNT) */
int sv_create_counters(struct sv_file *f, void *arg);
int sv_destroy_counters(struct sv_file *f, void *arg);
int sv_attach_counters(struct sv_file *f, void *arg);
int sv_read_counters(struct sv_file *f, void *arg);
int sv_create_flow_matcher(struct sv_file *f, void *arg);
int sv_destroy_flow_matcher(struct sv_file *f, void *arg);
int sv_create_steer_table(struct sv_file *f, void *arg);
int sv_destroy_steer_table(struct sv_file *f, void *arg);
int sv_create_steer_anchor(struct sv_file *f, void *arg);
int sv_destroy_steer_anchor(struct sv_file *f, void *arg);
int sv_create_steer_action(struct sv_file *f, void *arg);
int sv_destroy_steer_action(struct sv_file *f, void *arg);

/*
 * steer/rxmeta.c: what a receive queue reports of a steered frame besides
 * its bytes. SV_RX_* are what a queue asks for.
 */
#define SV_RX_STRIP_CVLAN	BIT(0)	/* the VLAN tag into the CQE's cvlan */
#define SV_RX_SCATTER_FCS	BIT(1)	/* the FCS after the frame */
#define SV_RX_CSUM		BIT(2)	/* IBV_WC_IP_CSUM_OK */
#define SV_RX_TUNNEL		BIT(3)	/* ... of a tunnel's inner headers */

/* A queued frame: what its QP's queue knows of it besides the skb. */
struct sv_rx_meta {
	u32 tag;			/* the flow's tag */
	u32 flags;			/* SV_RX_* of the queue it goes to */
	struct sv_cq_stamp ts;		/* its arrival */
};

/* How one frame lands in a buffer: sv_rx_frame_prep() */
struct sv_rx_frame {
	const u8 *mac;			/* the MAC header, linear */
	u32 maclen;			/* its bytes before skb->data */
	u8 vhdr[4];			/* the VLAN tag to put back ... */
	u32 vlen;			/* ... 0 or 4 bytes of it */
	__le32 fcs;
	u32 fcs_len;			/* 0 or 4 */
	u32 len;			/* all bytes written */
	u32 wire_len;			/* the frame's, tag in, FCS out */
	u16 cvlan;			/* the stripped TCI */
	u32 wc_flags;			/* IBV_WC_IP_CSUM_OK */
};

void sv_rx_stamp(const struct sk_buff *skb, struct sv_cq_stamp *last,
		 struct sv_cq_stamp *ts);
u32 sv_rx_qp_flags(const struct sv_qp *qp);
int sv_rx_frame_prep(struct sk_buff *skb, u32 flags, struct sv_rx_frame *fr);

void sv_rx_queue_wire(struct sv_device *sdev, struct sv_qp *qp,
		      struct sk_buff *skb);

/* exec.c: one steered frame into qp's receive queue; false: dropped */
bool sv_exec_recv_frame(struct sv_qp *qp, struct sk_buff *skb,
			const struct sv_rx_meta *m, void *buf);

/* Receive WQs, indirection tables, RSS QPs (steer/wq.c, steer/rss.c) */
int sv_create_wq(struct sv_file *f, void *arg);
int sv_modify_wq(struct sv_file *f, void *arg);
int sv_destroy_wq(struct sv_file *f, void *arg);
int sv_create_rwq_ind_tbl(struct sv_file *f, void *arg);
int sv_destroy_rwq_ind_tbl(struct sv_file *f, void *arg);
int sv_create_rss_qp(struct sv_file *f, void *arg);
void sv_rss_qp_destroy(struct sv_qp *qp);
bool sv_rss_recv_frame(struct sv_qp *qp, struct sk_buff *skb,
		       const struct sv_rx_meta *m, void *buf);

int sv_netlink_init(void);
void sv_netlink_exit(void);

#endif /* SV_H */
