/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * softverbs connection manager ABI: ioctls on /dev/infiniband/softverbs_cm.
 *
 * One open file is one rdma_cm event channel: the ids made through it
 * belong to it, their events are read from it (SV_CM_IOC_GET_EVENT, and
 * poll() says when one is waiting), and closing it destroys them. The
 * file's network namespace is its opener's: addresses are resolved, and
 * ports bound, there.
 *
 * The rules of softverbs-abi.h hold: every argument struct starts with its
 * size, read with copy_struct_from_user() semantics; reserved fields must
 * be zero (EINVAL); an unknown command is ENOTTY; an id from another file,
 * or destroyed, is ENOENT. Addresses are struct sockaddr_in or
 * sockaddr_in6 in a struct __kernel_sockaddr_storage.
 */
#ifndef _UAPI_SOFTVERBS_CM_H
#define _UAPI_SOFTVERBS_CM_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/socket.h>

#include "softverbs-abi.h"

#define SV_CM_DEV_NAME		"softverbs_cm"	/* in SV_DEV_DIR */

/* Port spaces (enum rdma_ucm_port_space): the service ID's high bits */
#define SV_CM_PS_IPOIB		0x0002
#define SV_CM_PS_IB		0x013f
#define SV_CM_PS_TCP		0x0106
#define SV_CM_PS_UDP		0x0111

/* Events: enum rdma_cm_event_type's values */
enum sv_cm_event_type {
	SV_CM_EVENT_ADDR_RESOLVED,
	SV_CM_EVENT_ADDR_ERROR,
	SV_CM_EVENT_ROUTE_RESOLVED,
	SV_CM_EVENT_ROUTE_ERROR,
	SV_CM_EVENT_CONNECT_REQUEST,
	SV_CM_EVENT_CONNECT_RESPONSE,
	SV_CM_EVENT_CONNECT_ERROR,
	SV_CM_EVENT_UNREACHABLE,
	SV_CM_EVENT_REJECTED,
	SV_CM_EVENT_ESTABLISHED,
	SV_CM_EVENT_DISCONNECTED,
	SV_CM_EVENT_DEVICE_REMOVAL,
	SV_CM_EVENT_MULTICAST_JOIN,
	SV_CM_EVENT_MULTICAST_ERROR,
	SV_CM_EVENT_ADDR_CHANGE,
	SV_CM_EVENT_TIMEWAIT_EXIT,
};

#define SV_CM_PRIVATE_MAX	224	/* an RTU's; a REP has 196 */
#define SV_CM_REP_PRIVATE_MAX	196
#define SV_CM_REQ_PRIVATE_MAX	56	/* a REQ's, after the 36-byte IP header */
#define SV_CM_REJ_PRIVATE_MAX	148
#define SV_CM_DREQ_PRIVATE_MAX	220
#define SV_CM_SIDR_REQ_PRIVATE_MAX	180	/* after the IP CM header */
#define SV_CM_SIDR_REP_PRIVATE_MAX	136

#define SV_CM_UDP_QKEY		0x01234567	/* UD ids' Q_Key (RDMA_UDP_QKEY) */
#define SV_CM_MC_QPN		0xffffff	/* a group's "QP" in its events */

/* What a connect or accept offers, and what a request or reply carried */
struct sv_cm_conn_param {
	__u32 qp_num;
	__u32 qkey;		/* UD: accept: 0 for the default; the peer's */
	__u8 responder_resources;
	__u8 initiator_depth;
	__u8 flow_control;
	__u8 retry_count;	/* connect: at most 7 */
	__u8 rnr_retry_count;	/* at most 7 */
	__u8 srq;
	__u8 private_data_len;
	__u8 reserved;
	__u8 private_data[SV_CM_PRIVATE_MAX];
};

enum sv_cm_nr {
	SV_CM_NR_CREATE_ID = 0x00,
	SV_CM_NR_DESTROY_ID = 0x01,
	SV_CM_NR_BIND = 0x02,
	SV_CM_NR_RESOLVE_ADDR = 0x03,
	SV_CM_NR_RESOLVE_ROUTE = 0x04,
	SV_CM_NR_QUERY = 0x05,
	SV_CM_NR_CONNECT = 0x06,
	SV_CM_NR_LISTEN = 0x07,
	SV_CM_NR_ACCEPT = 0x08,
	SV_CM_NR_REJECT = 0x09,
	SV_CM_NR_DISCONNECT = 0x0a,
	SV_CM_NR_ESTABLISH = 0x0b,
	SV_CM_NR_INIT_QP_ATTR = 0x0c,
	SV_CM_NR_GET_EVENT = 0x0d,
	SV_CM_NR_SET_OPTION = 0x0e,
	SV_CM_NR_JOIN_MCAST = 0x0f,
	SV_CM_NR_LEAVE_MCAST = 0x10,
	SV_CM_NR_MIGRATE_ID = 0x11,
	SV_CM_NR_MAX
};

/* SV_CM_IOC_CREATE_ID: a new id of port space ps (SV_CM_PS_*) */
struct sv_cm_create_id {
	__u32 size;
	__u32 ps;
	__u64 uid;		/* the caller's, given back in its events */
	__u32 qp_type;		/* SV_QPT_RC or SV_QPT_UD */
	__u32 id;		/* out */
};

/* SV_CM_IOC_DESTROY_ID: also drops its events not read yet */
struct sv_cm_destroy_id {
	__u32 size;
	__u32 id;
	__u32 events_reported;	/* out: events of it that were read */
	__u32 reserved;
};

/* SV_CM_IOC_BIND: a local address (any address: the wildcard), port 0: any */
struct sv_cm_bind {
	__u32 size;
	__u32 id;
	struct __kernel_sockaddr_storage addr;
};

/*
 * SV_CM_IOC_RESOLVE_ADDR: the route to dst picks the device (its
 * netdev's) and, unless bound, the source address; ADDR_RESOLVED or
 * ADDR_ERROR follows (an address of no softverbs device: ENODEV).
 */
struct sv_cm_resolve_addr {
	__u32 size;
	__u32 id;
	__u32 timeout_ms;
	__u32 reserved;
	struct __kernel_sockaddr_storage src;	/* family 0: none */
	struct __kernel_sockaddr_storage dst;
};

/* SV_CM_IOC_RESOLVE_ROUTE: ROUTE_RESOLVED follows */
struct sv_cm_resolve_route {
	__u32 size;
	__u32 id;
	__u32 timeout_ms;
	__u32 reserved;
};

/* SV_CM_IOC_QUERY: where an id is */
struct sv_cm_query {
	__u32 size;
	__u32 id;
	struct __kernel_sockaddr_storage src;	/* out */
	struct __kernel_sockaddr_storage dst;	/* out */
	__u64 node_guid;	/* out: the device's, 0 if none yet */
	__u8 sgid[16];		/* out */
	__u8 dgid[16];		/* out */
	__u32 sgid_index;	/* out */
	__u32 port_num;		/* out: 1 with a device, else 0 */
	__u16 pkey;		/* out */
	__u8 mtu;		/* out: the path's SV_MTU_* */
	__u8 hop_limit;		/* out */
	__u8 traffic_class;	/* out */
	__u8 num_paths;		/* out: 1 once the route is resolved */
	__u16 reserved;
	__u32 qp_num;		/* out: the remote QP, once known */
	__u32 qkey;		/* out */
	char dev_name[64];	/* out: the device's name */
};

/*
 * SV_CM_IOC_CONNECT: send a REQ (RC), or a SIDR REQ (UD: the service's
 * QP number and Q_Key come in ESTABLISHED's param, a refusal or no
 * answer is UNREACHABLE with the SIDR status or -ETIMEDOUT)
 */
struct sv_cm_connect {
	__u32 size;
	__u32 id;
	struct sv_cm_conn_param param;
};

/* SV_CM_IOC_LISTEN */
struct sv_cm_listen {
	__u32 size;
	__u32 id;
	__u32 backlog;		/* 0: a default */
	__u32 reserved;
};

/* SV_CM_IOC_ACCEPT: answer a CONNECT_REQUEST's id with a REP */
struct sv_cm_accept {
	__u32 size;
	__u32 id;
	__u64 uid;		/* the id's uid from now on */
	struct sv_cm_conn_param param;
};

/* SV_CM_IOC_REJECT: answer a CONNECT_REQUEST's id with a REJ */
struct sv_cm_reject {
	__u32 size;
	__u32 id;
	__u8 private_data_len;
	__u8 reserved[3];
	__u32 reason;		/* 0: consumer defined (28) */
	__u8 private_data[SV_CM_REJ_PRIVATE_MAX];
};

/* SV_CM_IOC_DISCONNECT: send a DREQ */
struct sv_cm_disconnect {
	__u32 size;
	__u32 id;
};

/* SV_CM_IOC_ESTABLISH: after CONNECT_RESPONSE, with the QP in RTS: an RTU */
struct sv_cm_establish {
	__u32 size;
	__u32 id;
};

/* SV_CM_IOC_INIT_QP_ATTR: the attributes that move a QP to qp_state */
struct sv_cm_init_qp_attr {
	__u32 size;
	__u32 id;
	__u32 qp_state;		/* in: SV_QPS_INIT, _RTR or _RTS */
	__u32 mask;		/* out: SV_QP_ATTR_* */
	struct sv_qp_attr attr;	/* out */
};

/* SV_CM_IOC_GET_EVENT: the next event; waits unless O_NONBLOCK (EAGAIN) */
struct sv_cm_get_event {
	__u32 size;
	__u32 event;		/* out: SV_CM_EVENT_* */
	__u64 uid;		/* out: the id's */
	__u32 id;		/* out: the id's (a CONNECT_REQUEST: the new id) */
	__s32 status;		/* out: 0, -errno or a REJ reason */
	__u64 listen_uid;	/* out: CONNECT_REQUEST: the listener's uid */
	struct sv_cm_conn_param param;	/* out */
};

/* SV_CM_IOC_SET_OPTION */
#define SV_CM_OPT_TOS		0	/* value: the IP TOS (traffic class) */
#define SV_CM_OPT_REUSEADDR	1
#define SV_CM_OPT_AFONLY	2
#define SV_CM_OPT_ACK_TIMEOUT	3	/* value: the QP's local ACK timeout */

struct sv_cm_set_option {
	__u32 size;
	__u32 id;
	__u32 option;		/* SV_CM_OPT_* */
	__u32 value;
};

/*
 * SV_CM_IOC_JOIN_MCAST: a UD id with a device (bound or resolved) joins
 * the group of a multicast address; MULTICAST_JOIN follows, with uid and
 * the group's QP number (SV_CM_MC_QPN) and Q_Key. The group's GID: the
 * IPv6 address, or an IPv4 one mapped (::ffff:a.b.c.d), as RoCE v2 has
 * it. The membership on the wire (IGMP, MLD) comes with attaching a QP.
 */
#define SV_CM_JOIN_SENDONLY	1	/* a send-only full member */

struct sv_cm_join_mcast {
	__u32 size;
	__u32 id;
	__u64 uid;		/* the join's, in its events */
	__u32 flags;		/* SV_CM_JOIN_* */
	__u32 reserved;
	struct __kernel_sockaddr_storage addr;
	__u8 mgid[16];		/* out: the group's GID */
	__u32 sgid_index;	/* out: the id's source GID */
	__u8 hop_limit;		/* out */
	__u8 traffic_class;	/* out */
	__u16 reserved2;
};

/* SV_CM_IOC_LEAVE_MCAST: the join of uid ends; its unread events go */
struct sv_cm_leave_mcast {
	__u32 size;
	__u32 id;
	__u64 uid;
	__u32 events_reported;	/* out: events of the join that were read */
	__u32 reserved;
};

/*
 * SV_CM_IOC_MIGRATE_ID, on the channel the id moves to: the id of the
 * channel file fd (of the same network namespace) comes here with its
 * unread events, under a new number. An id is not moved while an unread
 * CONNECT_REQUEST names it, or one of its own (EBUSY).
 */
struct sv_cm_migrate_id {
	__u32 size;
	__u32 id;		/* in: its number on fd; out: here */
	__s32 fd;		/* the channel it is on */
	__u32 events_reported;	/* out: its events read from fd */
};

#define SV_CM_IOC(nr, type)	_IOWR(SV_IOC_MAGIC, nr, type)
#define SV_CM_IOC_CREATE_ID	SV_CM_IOC(SV_CM_NR_CREATE_ID, struct sv_cm_create_id)
#define SV_CM_IOC_DESTROY_ID	SV_CM_IOC(SV_CM_NR_DESTROY_ID, struct sv_cm_destroy_id)
#define SV_CM_IOC_BIND		SV_CM_IOC(SV_CM_NR_BIND, struct sv_cm_bind)
#define SV_CM_IOC_RESOLVE_ADDR	SV_CM_IOC(SV_CM_NR_RESOLVE_ADDR, struct sv_cm_resolve_addr)
#define SV_CM_IOC_RESOLVE_ROUTE	SV_CM_IOC(SV_CM_NR_RESOLVE_ROUTE, struct sv_cm_resolve_route)
#define SV_CM_IOC_QUERY		SV_CM_IOC(SV_CM_NR_QUERY, struct sv_cm_query)
#define SV_CM_IOC_CONNECT	SV_CM_IOC(SV_CM_NR_CONNECT, struct sv_cm_connect)
#define SV_CM_IOC_LISTEN	SV_CM_IOC(SV_CM_NR_LISTEN, struct sv_cm_listen)
#define SV_CM_IOC_ACCEPT	SV_CM_IOC(SV_CM_NR_ACCEPT, struct sv_cm_accept)
#define SV_CM_IOC_REJECT	SV_CM_IOC(SV_CM_NR_REJECT, struct sv_cm_reject)
#define SV_CM_IOC_DISCONNECT	SV_CM_IOC(SV_CM_NR_DISCONNECT, struct sv_cm_disconnect)
#define SV_CM_IOC_ESTABLISH	SV_CM_IOC(SV_CM_NR_ESTABLISH, struct sv_cm_establish)
#define SV_CM_IOC_INIT_QP_ATTR	SV_CM_IOC(SV_CM_NR_INIT_QP_ATTR, struct sv_cm_init_qp_attr)
#define SV_CM_IOC_GET_EVENT	SV_CM_IOC(SV_CM_NR_GET_EVENT, struct sv_cm_get_event)
#define SV_CM_IOC_SET_OPTION	SV_CM_IOC(SV_CM_NR_SET_OPTION, struct sv_cm_set_option)
#define SV_CM_IOC_JOIN_MCAST	SV_CM_IOC(SV_CM_NR_JOIN_MCAST, struct sv_cm_join_mcast)
#define SV_CM_IOC_LEAVE_MCAST	SV_CM_IOC(SV_CM_NR_LEAVE_MCAST, struct sv_cm_leave_mcast)
#define SV_CM_IOC_MIGRATE_ID	SV_CM_IOC(SV_CM_NR_MIGRATE_ID, struct sv_cm_migrate_id)

#endif /* _UAPI_SOFTVERBS_CM_H */
