/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softverbs connection manager: the rdma_cm ids of the event channels
 * (/dev/infiniband/softverbs_cm, chan.c), their addresses and routes
 * (addr.c), and the InfiniBand CM protocol they speak in MADs on QP1
 * (proto.c over mad.c), with the RDMA IP CM service IDs, as the kernel's
 * rdma_cm does for rxe and RoCE NICs.
 *
 * Locking: sv_cm_lock (a mutex) covers every id, listener, port and
 * communication ID; MADs are handled in a work item, timers are delayed
 * works, both under it. A channel's event list has its own spinlock, so
 * that reading events never waits on the protocol.
 */
#ifndef SV_CM_H
#define SV_CM_H

#include <linux/kref.h>
#include <linux/socket.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "../compat.h"
#include "../sv.h"
#include "../../uapi/softverbs-cm.h"

extern struct mutex sv_cm_lock;
extern struct xarray sv_cm_all_ids;	/* every id, for device removal */
extern struct workqueue_struct *sv_cm_wq;	/* MADs and retry timers */

/* One event channel: an open file of the CM device. */
struct sv_cm_chan {
	struct kref ref;		/* the file's, and one per id */
	struct net *net;		/* the opener's, held */
	struct mem_cgroup *memcg;	/* the opener's: charged for all below */
	struct xarray ids;		/* handle -> struct sv_cm_id */
	u32 next_id;
	u32 nids;			/* ids, at most SV_CM_MAX_IDS */
	spinlock_t ev_lock;		/* events, nevents */
	struct list_head events;
	u32 nevents;
	wait_queue_head_t wait;
	bool closing;			/* released: no more events */
};

#define SV_CM_MAX_IDS		4096	/* per channel */
#define SV_CM_MAX_EVENTS	8192	/* per channel, queued */

enum sv_cm_state {
	SV_CM_IDLE,
	SV_CM_BOUND,			/* an address (and port) of its own */
	SV_CM_ADDR_RESOLVED,		/* a device, a source and destination */
	SV_CM_ROUTE_RESOLVED,
	SV_CM_LISTEN,
	SV_CM_REQ_SENT,			/* active: waiting for the REP */
	SV_CM_REP_RCVD,			/* active: CONNECT_RESPONSE reported */
	SV_CM_REQ_RCVD,			/* passive: CONNECT_REQUEST reported */
	SV_CM_REP_SENT,			/* passive: waiting for the RTU */
	SV_CM_ESTABLISHED,
	SV_CM_DREQ_SENT,
	SV_CM_DISCONNECTED,		/* DREQ/DREP done, or rejected */
	SV_CM_SIDR_REQ_SENT,		/* UD, active: waiting for the SIDR REP */
	SV_CM_SIDR_REQ_RCVD,		/* UD, passive: CONNECT_REQUEST reported */
	SV_CM_SIDR_DONE,		/* UD: the SIDR REP sent or received */
	SV_CM_DEAD,			/* destroyed, or its device gone */
};

/* An rdma_cm id. */
struct sv_cm_id {
	struct kref ref;
	struct sv_cm_chan *chan;	/* held */
	u32 handle;
	u32 all_index;			/* in sv_cm_all_ids */
	u64 uid;
	u16 ps;
	u32 qp_type;			/* SV_QPT_RC or SV_QPT_UD */
	enum sv_cm_state state;
	u32 events_reported;		/* read by the user */

	/* addresses (addr.c) */
	struct sockaddr_storage src, dst;
	u16 port;			/* bound port, host order; 0: none */
	struct hlist_node port_node;	/* in the port table while bound */
	bool reuseaddr, afonly;
	struct sv_device *sdev;		/* held (get_device) once resolved */
	u32 sgid_index;
	u8 sgid[16], dgid[16];
	u8 mtu;				/* SV_MTU_* of the path */
	u8 hop_limit;
	u8 tos;
	u8 ack_timeout;			/* 0: from the packet lifetime */
	bool route;
	bool loopback;			/* resolved to a loopback destination */
	u32 qkey;			/* UD: 0 until set (sv_cm_set_qkey()) */
	struct list_head mcs;		/* struct sv_cm_mc: its joins */
	u32 nmcs;

	/* listen (proto.c) */
	u32 backlog;
	u32 pending;			/* children not accepted or rejected */
	struct sv_cm_id *listener;	/* a child's, held while pending */

	/* the connection (proto.c) */
	u32 local_comm_id;
	u32 remote_comm_id;
	__be64 remote_guid;
	u32 local_qpn, remote_qpn;
	u32 local_psn, remote_psn;	/* the starting PSNs */
	u8 resp_res, init_depth;	/* ours, as agreed */
	u8 retry_count, rnr_retry;
	u8 peer_cm_timeout;		/* its local CM response timeout */
	u8 max_cm_retries;
	bool srq;
	u64 tid;
	u8 mad[256];			/* the last request sent, for retries */
	u32 retries;
	struct delayed_work timer;
};

/* A multicast group an id joined (mcast.c) */
struct sv_cm_mc {
	struct list_head node;
	u64 uid;			/* the library's, in its events */
	u32 events_reported;
	u8 mgid[16];
};

#define SV_CM_MAX_MCS		256	/* joins per id */

/* The rdma_cm's values: packet lifetime and CM response timeout (2^x us) */
#define SV_CM_PKT_LIFETIME	16
#define SV_CM_RESPONSE_TIMEOUT	20
#define SV_CM_MAX_RETRIES	15
#define SV_CM_HDR_LEN		36	/* struct cma_hdr */

/* IBA REJ reasons used here */
#define SV_REJ_TIMEOUT		1
#define SV_REJ_INVALID_SERVICE	8
#define SV_REJ_INVALID_GID	9
#define SV_REJ_STALE		10
#define SV_REJ_CONSUMER		28

/* MADs (mad.c) */
#define SV_MAD_LEN		256
#define SV_MAD_HDR_LEN		24
#define SV_CM_CLASS		0x07
#define SV_CM_CLASS_VERSION	2
#define SV_MAD_METHOD_SEND	0x03
#define SV_GSI_QKEY		0x80010000U

enum sv_cm_attr {
	SV_CM_ATTR_REQ = 0x0010,
	SV_CM_ATTR_MRA = 0x0011,
	SV_CM_ATTR_REJ = 0x0012,
	SV_CM_ATTR_REP = 0x0013,
	SV_CM_ATTR_RTU = 0x0014,
	SV_CM_ATTR_DREQ = 0x0015,
	SV_CM_ATTR_DREP = 0x0016,
	SV_CM_ATTR_SIDR_REQ = 0x0017,
	SV_CM_ATTR_SIDR_REP = 0x0018,
};

/* A MAD received: where it came from and went to, and its bytes. */
struct sv_cm_rx {
	struct list_head node;
	struct sv_device *sdev;		/* held: it came in on this device */
	u8 sgid[16];			/* the sender's address, as a GID */
	u8 dgid[16];			/* ours */
	u8 tclass;
	u8 mad[SV_MAD_LEN];
};

/* Big-endian fields of a MAD's data (byte offsets after its header) */
static inline u8 *sv_cm_at(u8 *mad, u32 off)
{
	return mad + SV_MAD_HDR_LEN + off;
}

static inline u32 sv_cm_get32(const u8 *mad, u32 off)
{
	return get_unaligned_be32(mad + SV_MAD_HDR_LEN + off);
}

static inline void sv_cm_put32(u8 *mad, u32 off, u32 v)
{
	put_unaligned_be32(v, mad + SV_MAD_HDR_LEN + off);
}

/* The top @bits bits of the 32-bit word at @off (a 24-bit QPN or PSN) */
static inline u32 sv_cm_get_hi(const u8 *mad, u32 off, u32 bits)
{
	return sv_cm_get32(mad, off) >> (32 - bits);
}

static inline void sv_cm_put_hi(u8 *mad, u32 off, u32 bits, u32 v)
{
	u32 w = sv_cm_get32(mad, off) & ~(~0U << (32 - bits));

	sv_cm_put32(mad, off, w | (v << (32 - bits)));
}

/* @width bits at bit @bit (0: the most significant) of the byte at @off */
static inline u8 sv_cm_get_bits(const u8 *mad, u32 off, u32 bit, u32 width)
{
	return (mad[SV_MAD_HDR_LEN + off] >> (8 - bit - width)) &
	       ((1U << width) - 1);
}

static inline void sv_cm_put_bits(u8 *mad, u32 off, u32 bit, u32 width,
				  u8 v)
{
	u8 mask = ((1U << width) - 1) << (8 - bit - width);
	u8 *b = mad + SV_MAD_HDR_LEN + off;

	*b = (*b & ~mask) | ((v << (8 - bit - width)) & mask);
}

static inline u16 sv_cm_attr(const u8 *mad)
{
	return get_unaligned_be16(mad + 16);
}

void sv_cm_mad_init(u8 *mad, u16 attr, u64 tid);
int sv_cm_mad_send(struct sv_device *sdev, u32 sgid_index, const u8 *dgid,
		   u8 tclass, const u8 *mad);
void sv_cm_mad_reply(const struct sv_cm_rx *rx, const u8 *mad);
struct sv_device *sv_cm_local_dev(const struct net *net, const u8 *gid);
void sv_cm_rx_flush(void);

/* chan.c */
void sv_cm_event(struct sv_cm_id *id, u32 event, int status,
		 const struct sv_cm_conn_param *param, struct sv_cm_id *child);
void sv_cm_mc_event(struct sv_cm_id *id, struct sv_cm_mc *mc, u32 event,
		    const struct sv_cm_conn_param *param);
u32 sv_cm_drop_events(struct sv_cm_id *id, u64 uid);
struct sv_cm_id *sv_cm_id_new(struct sv_cm_chan *chan, u16 ps, u32 qp_type,
			      u64 uid);
void sv_cm_id_put(struct sv_cm_id *id);
void sv_cm_destroy(struct sv_cm_id *id);

/* addr.c */
int sv_cm_bind(struct sv_cm_id *id, const struct sockaddr_storage *a);
int sv_cm_resolve_addr(struct sv_cm_id *id, const struct sockaddr_storage *src,
		       const struct sockaddr_storage *dst);
int sv_cm_resolve_route(struct sv_cm_id *id);
void sv_cm_unbind(struct sv_cm_id *id);
struct sv_cm_id *sv_cm_port_listener(struct net *net, u16 ps, u16 port,
				     const struct sockaddr_storage *dst,
				     struct sv_device *sdev);
void sv_cm_set_dev(struct sv_cm_id *id, struct sv_device *sdev);
bool sv_cm_addr_any(const struct sockaddr_storage *a);
u16 sv_cm_addr_port(const struct sockaddr_storage *a);
void sv_cm_addr_set_port(struct sockaddr_storage *a, u16 port);
void sv_cm_addr_to_gid(const struct sockaddr_storage *a, u8 *gid);
void sv_cm_gid_to_addr(const u8 *gid, u16 port, struct sockaddr_storage *a);

/* proto.c */
void sv_cm_arm(struct sv_cm_id *id, unsigned long delay);
void sv_cm_disarm(struct sv_cm_id *id);
unsigned long sv_cm_retry_delay(const struct sv_cm_id *id);
int sv_cm_comm_id_alloc(struct sv_cm_id *id);
void sv_cm_send(struct sv_cm_id *id, const u8 *mad);
void sv_cm_request(struct sv_cm_id *id, enum sv_cm_state state);
void sv_cm_unpend(struct sv_cm_id *id);
void sv_cm_put_hdr(struct sv_cm_id *id, u8 *p);
bool sv_cm_get_hdr(const u8 *h, struct sockaddr_storage *src,
		   struct sockaddr_storage *dst);
bool sv_cm_param_ok(const struct sv_cm_conn_param *p, u32 max_private);
struct sv_cm_id *sv_cm_mine(const struct sv_cm_rx *rx, u32 off);
void sv_cm_conn_param(struct sv_cm_conn_param *p, const u8 *data, u32 len);
struct sv_cm_id *sv_cm_req_listener(const struct sv_cm_rx *rx, u16 ps,
				    u16 port,
				    const struct sockaddr_storage *dst,
				    u32 qp_type);
struct sv_cm_id *sv_cm_new_child(struct sv_cm_rx *rx, struct sv_cm_id *lis,
				 u16 ps, const struct sockaddr_storage *src,
				 const u8 *sgid);
int sv_cm_listen(struct sv_cm_id *id, u32 backlog);
int sv_cm_connect(struct sv_cm_id *id, const struct sv_cm_conn_param *p);
int sv_cm_accept(struct sv_cm_id *id, const struct sv_cm_conn_param *p);
int sv_cm_reject(struct sv_cm_id *id, u16 reason, const u8 *data, u8 len);
int sv_cm_disconnect(struct sv_cm_id *id);
int sv_cm_establish(struct sv_cm_id *id);
int sv_cm_init_qp_attr(struct sv_cm_id *id, u32 state, u32 *mask,
		       struct sv_qp_attr *a);
void sv_cm_id_kill(struct sv_cm_id *id);
void sv_cm_handle(struct sv_cm_rx *rx);
void sv_cm_timeout(struct work_struct *work);
void sv_cm_device_gone(struct sv_device *sdev);

/* sidr.c: UD ids (service ID resolution) */
int sv_cm_set_qkey(struct sv_cm_id *id, u32 qkey);
int sv_cm_sidr_connect(struct sv_cm_id *id, const struct sv_cm_conn_param *p);
int sv_cm_sidr_accept(struct sv_cm_id *id, const struct sv_cm_conn_param *p);
int sv_cm_sidr_reject(struct sv_cm_id *id, const u8 *data, u8 len);
void sv_cm_sidr_kill(struct sv_cm_id *id);
void sv_cm_sidr_req(struct sv_cm_rx *rx);
void sv_cm_sidr_rep(struct sv_cm_rx *rx);
void sv_cm_sidr_timeout(struct sv_cm_id *id);

/* mcast.c: multicast joins of UD ids */
int sv_cm_join(struct sv_cm_id *id, struct sv_cm_join_mcast *c);
int sv_cm_leave(struct sv_cm_id *id, struct sv_cm_leave_mcast *c);
void sv_cm_leave_all(struct sv_cm_id *id);
struct sv_cm_mc *sv_cm_mc_find(struct sv_cm_id *id, u64 uid);

#endif /* SV_CM_H */
