/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * softverbs management plane: the "softverbs" generic netlink family.
 *
 * Resolve the family id with CTRL_CMD_GETFAMILY (SV_NL_FAMILY_NAME). Every
 * request is validated strictly against one policy: unknown attributes,
 * wrong lengths and out-of-range values are EINVAL with an extended ack
 * message naming the attribute. Changes (link add/del, dev set) need
 * CAP_NET_ADMIN in the user namespace owning the network namespace of the
 * netdev concerned (the initial one for a device without a netdev).
 *
 *   SV_NL_CMD_LINK_ADD   DEV_NAME, NDEV_NAME or NDEV_INDEX: a new device
 *                        bound to a netdev of the caller's namespace
 *   SV_NL_CMD_LINK_DEL   DEV_NAME: unregister a device made by LINK_ADD
 *   SV_NL_CMD_LINK_GET   DEV_NAME (doit) or dump: one message per device
 *   SV_NL_CMD_DEV_SET    DEV_NAME and tunables (IDLE_US, PART_ID, MAX_PD ..
 *                        MAX_AH, MAX_QP_WR .. MAX_SRQ_WR)
 *   SV_NL_CMD_RES_GET    dump; RES_TYPE, optional DEV_NAME: one message
 *                        per object (PD, MR, CQ, QP, flow, WQ, receive
 *                        WQ indirection table, counters object)
 *   SV_NL_CMD_STAT_GET   DEV_NAME (doit) or dump: counters of port 1
 */
#ifndef _UAPI_SOFTVERBS_NETLINK_H
#define _UAPI_SOFTVERBS_NETLINK_H

#define SV_NL_FAMILY_NAME	"softverbs"
#define SV_NL_FAMILY_VERSION	1

enum sv_nl_cmd {
	SV_NL_CMD_UNSPEC,
	SV_NL_CMD_LINK_GET,
	SV_NL_CMD_LINK_ADD,
	SV_NL_CMD_LINK_DEL,
	SV_NL_CMD_DEV_SET,
	SV_NL_CMD_RES_GET,
	SV_NL_CMD_STAT_GET,
	__SV_NL_CMD_MAX,
	SV_NL_CMD_MAX = __SV_NL_CMD_MAX - 1
};

enum sv_nl_attr {
	SV_NL_ATTR_UNSPEC,
	SV_NL_ATTR_PAD,
	SV_NL_ATTR_DEV_INDEX,		/* u32 */
	SV_NL_ATTR_DEV_NAME,		/* string, < SV_NL_DEV_NAME_MAX */
	SV_NL_ATTR_NDEV_INDEX,		/* u32: bound netdev's ifindex */
	SV_NL_ATTR_NDEV_NAME,		/* string, < IFNAMSIZ */
	SV_NL_ATTR_PORT,		/* u32: port number (1) */
	SV_NL_ATTR_PORT_STATE,		/* u8: SV_PORT_* (verbs encoding) */
	SV_NL_ATTR_ACTIVE_MTU,		/* u32: bytes (256 .. 4096) */
	SV_NL_ATTR_NDEV_MTU,		/* u32: the netdev's MTU */
	SV_NL_ATTR_NODE_GUID,		/* u64, host order */
	SV_NL_ATTR_MAC,			/* binary, 6 bytes */
	SV_NL_ATTR_IDLE_US,		/* u32: engine idle time, 0..10^7 us */
	SV_NL_ATTR_RES_TYPE,		/* u8: SV_NL_RES_* */
	SV_NL_ATTR_RES_HANDLE,		/* u32: the object's handle in its file */
	SV_NL_ATTR_RES_PID,		/* u32: creator's pid (caller's pid ns) */
	SV_NL_ATTR_RES_COMM,		/* string: creator's command */
	SV_NL_ATTR_RES_QPN,		/* u32 */
	SV_NL_ATTR_RES_QP_TYPE,		/* u8: SV_QPT_* (verbs encoding; DCI, DCT ours) */
	SV_NL_ATTR_RES_QP_STATE,	/* u8: SV_QPS_* (verbs encoding) */
	SV_NL_ATTR_RES_LKEY,		/* u32 */
	SV_NL_ATTR_RES_RKEY,		/* u32 */
	SV_NL_ATTR_RES_IOVA,		/* u64 */
	SV_NL_ATTR_RES_LENGTH,		/* u64 */
	SV_NL_ATTR_RES_CQE,		/* u32: CQ entries */
	SV_NL_ATTR_RES_USECNT,		/* u32: live objects naming it */
	SV_NL_ATTR_STATS,		/* nest of SV_NL_ATTR_STAT_ENTRY */
	SV_NL_ATTR_STAT_ENTRY,		/* nest: STAT_NAME, STAT_VALUE */
	SV_NL_ATTR_STAT_NAME,		/* string */
	SV_NL_ATTR_STAT_VALUE,		/* u64 */
	/* Flows, WQs, indirection tables, counters objects (RES_GET) */
	SV_NL_ATTR_RES_FLOW_TYPE,	/* u8: SV_FLOW_ATTR_* (verbs encoding) */
	SV_NL_ATTR_RES_FLOW_PRIORITY,	/* u16 */
	SV_NL_ATTR_RES_FLOW_FLAGS,	/* u32: SV_FLOW_ATTR_FLAGS_* */
	SV_NL_ATTR_RES_FLOW_NSPECS,	/* u8: specs, actions included */
	SV_NL_ATTR_RES_FLOW_TAG,	/* u32: ACTION_TAG; absent without */
	SV_NL_ATTR_RES_FLOW_DROP,	/* flag: ACTION_DROP */
	SV_NL_ATTR_RES_COUNTERS_HANDLE,	/* u32: ACTION_COUNT's object */
	SV_NL_ATTR_RES_WQN,		/* u32: a WQ's wq_num */
	SV_NL_ATTR_RES_WQ_STATE,	/* u8: SV_WQS_* (verbs encoding) */
	SV_NL_ATTR_RES_WQ_FLAGS,	/* u32: SV_WQ_FLAGS_* */
	SV_NL_ATTR_RES_CQ_HANDLE,	/* u32: a WQ's CQ */
	SV_NL_ATTR_RES_LOG_SIZE,	/* u32: an indirection table's */
	SV_NL_ATTR_RES_FLOWS,		/* nest of RES_FLOW_HANDLE */
	SV_NL_ATTR_RES_FLOW_HANDLE,	/* u32 */
	SV_NL_ATTR_RES_MATCHER_HANDLE,	/* u32: a flow's matcher, if any */
	SV_NL_ATTR_RES_FLOW_MISS,	/* flag: a flow's DEFAULT_MISS */
	SV_NL_ATTR_RES_TABLE_HANDLE,	/* u32: a matcher's steering table */
	SV_NL_ATTR_RES_TABLE_LEVEL,	/* u32: a steering table's level */
	SV_NL_ATTR_RES_DEST_TABLE,	/* u32: the table a flow sends to */
	SV_NL_ATTR_RES_DEST_ANCHOR,	/* u32: the anchor a flow sends to */
	SV_NL_ATTR_PART_ID,		/* u32: the device's vendor_part_id */
	/* u32: how many of each a device holds (1..SV_NL_OBJ_LIMIT_MAX) */
	SV_NL_ATTR_MAX_PD,
	SV_NL_ATTR_MAX_MR,
	SV_NL_ATTR_MAX_CQ,
	SV_NL_ATTR_MAX_QP,
	SV_NL_ATTR_MAX_SRQ,
	SV_NL_ATTR_MAX_AH,
	/* u32: queue depths (1..SV_NL_DEPTH_MAX) */
	SV_NL_ATTR_MAX_QP_WR,
	SV_NL_ATTR_MAX_CQE,
	SV_NL_ATTR_MAX_SRQ_WR,
	SV_NL_ATTR_VENDOR_ID,		/* u32: the device's vendor_id */
	__SV_NL_ATTR_MAX,
	SV_NL_ATTR_MAX = __SV_NL_ATTR_MAX - 1
};

#define SV_NL_DEV_NAME_MAX	32	/* with the NUL */

/*
 * The execution engine's idle time: how long it polls a device's queues
 * without work before it sets NEED_WAKEUP and sleeps.
 */
#define SV_NL_IDLE_US_DEFAULT	1000
#define SV_NL_IDLE_US_MAX	10000000	/* 10 s */

/*
 * The largest object limit of a device: QP numbers have 24 bits (0 and 1
 * are special, 0xffffff is multicast), and so do memory key indexes.
 */
#define SV_NL_OBJ_LIMIT_MAX	0xfffffd

/* The largest queue depth limit: 4 Mi work requests or CQEs. */
#define SV_NL_DEPTH_MAX		0x400000

enum sv_nl_res_type {
	SV_NL_RES_PD = 1,
	SV_NL_RES_MR,
	SV_NL_RES_CQ,
	SV_NL_RES_QP,
	SV_NL_RES_FLOW,
	SV_NL_RES_WQ,
	SV_NL_RES_RWQ_IND_TBL,
	SV_NL_RES_COUNTERS,
	SV_NL_RES_FLOW_MATCHER,
	SV_NL_RES_STEER_TABLE,
	SV_NL_RES_STEER_ANCHOR,
	SV_NL_RES_MAX = SV_NL_RES_STEER_ANCHOR
};

/*
 * A counters object's RES_FLOWS names at most this many of the flows
 * bound to it (RES_USECNT counts them all).
 */
#define SV_NL_RES_FLOWS_MAX	16

/* Port states and MTUs a netdev-bound port reports (verbs encodings). */
#define SV_PORT_DOWN		1	/* IBV_PORT_DOWN */
#define SV_PHYS_STATE_DISABLED	3
#define SV_MTU_256		1	/* IBV_MTU_256 */
#define SV_MTU_512		2
#define SV_MTU_1024		3
#define SV_MTU_2048		4

#endif /* _UAPI_SOFTVERBS_NETLINK_H */
