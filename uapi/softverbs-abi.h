/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * softverbs kernel <-> user ABI: ioctls on /dev/infiniband/softverbsN.
 *
 * Every ioctl argument is a struct whose first member is `__u32 size`, the
 * number of bytes the caller passes. The kernel reads it with
 * copy_struct_from_user() semantics, so the ABI can grow in both directions:
 *
 *   - size smaller than the command's first version (SV_*_SIZE_VER0), or
 *     larger than SV_MAX_ARG_SIZE:                         EINVAL
 *   - size larger than the kernel's struct and a byte past the kernel's
 *     struct is non-zero (a field this kernel does not know): E2BIG
 *   - otherwise fields the caller did not pass read as zero, and on return
 *     the kernel writes back at most `size` bytes.
 *
 * The size bits of the ioctl number are not used: commands are identified
 * by type SV_IOC_MAGIC and number. An unknown command is ENOTTY.
 * Reserved fields and unused flag bits must be zero (EINVAL otherwise).
 */
#ifndef _UAPI_SOFTVERBS_ABI_H
#define _UAPI_SOFTVERBS_ABI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define SV_ABI_VERSION		1
#define SV_IOC_MAGIC		0xeb
#define SV_MAX_ARG_SIZE		4096

/* sysfs: /sys/class/softverbs/<dev>/{abi_version,node_guid,...} */
#define SV_CLASS_NAME		"softverbs"
#define SV_DEV_DIR		"/dev/infiniband"

/*
 * Command numbers, in one range per concern; each concern's structs are in
 * its own section below, in this order.
 *   0x00-0x0f  ABI, device, port, GID and P_Key queries
 *   0x10-0x17  PD                 0x18-0x1f  MR
 *   0x20-0x2f  CQ, completion channels, async events
 *   0x30-0x3f  QP                 0x40-0x47  SRQ
 *   0x48-0x4f  AH                 0x50-0x57  multicast
 */
enum sv_ioctl_nr {
	SV_NR_QUERY_ABI = 0x00,
	SV_NR_QUERY_DEVICE = 0x01,
	SV_NR_QUERY_PORT = 0x02,
	SV_NR_QUERY_GID = 0x03,
	SV_NR_QUERY_PKEY = 0x04,

	/* CQ, completion channels, async events */
	SV_NR_CREATE_COMP_CHANNEL = 0x20,
	SV_NR_DESTROY_COMP_CHANNEL = 0x21,
	SV_NR_GET_ASYNC_FD = 0x22,
	SV_NR_CREATE_CQ = 0x23,
	SV_NR_RESIZE_CQ = 0x24,
	SV_NR_DESTROY_CQ = 0x25,
	SV_NR_TEST_CQ_PUSH = 0x2f,	/* test only, see below */
};

/* SV_IOC_QUERY_ABI: which ABI this kernel speaks. */
struct sv_query_abi {
	__u32 size;		/* in */
	__u32 abi_version;	/* out: SV_ABI_VERSION */
	__u32 max_arg_size;	/* out: SV_MAX_ARG_SIZE */
	__u32 reserved;		/* must be zero */
};

#define SV_QUERY_ABI_SIZE_VER0	16
#define SV_IOC_QUERY_ABI _IOWR(SV_IOC_MAGIC, SV_NR_QUERY_ABI, struct sv_query_abi)

/* ---- Device, port, GID and P_Key queries (0x01-0x0f) ---- */

/*
 * Device limits. The kernel enforces these numbers on every create/modify
 * call and SV_IOC_QUERY_DEVICE reports exactly them, so userspace sees
 * what the kernel enforces.
 */
#define SV_MAX_QP		16384		/* queue pairs per device */
#define SV_MAX_QP_WR		16384		/* work requests per SQ or RQ */
#define SV_MAX_SGE		32		/* SGEs per send/recv WR */
#define SV_MAX_SGE_RD		32		/* SGEs per RDMA read WR */
#define SV_MAX_CQ		16384
#define SV_MAX_CQE		65536		/* entries per CQ */
#define SV_MAX_MR		65536
#define SV_MAX_MR_SIZE		0x10000000000ULL /* bytes per MR (1 TiB) */
#define SV_MAX_PD		65536
#define SV_MAX_QP_RD_ATOM	16		/* responder RDMA read/atomic depth */
#define SV_MAX_QP_INIT_RD_ATOM	16		/* initiator RDMA read/atomic depth */
#define SV_MAX_RES_RD_ATOM	(SV_MAX_QP * SV_MAX_QP_RD_ATOM)
#define SV_MAX_SRQ		16384
#define SV_MAX_SRQ_WR		16384
#define SV_MAX_SRQ_SGE		32
#define SV_MAX_AH		65536
#define SV_MAX_MCAST_GRP	8192
#define SV_MAX_MCAST_QP_ATTACH	56		/* QPs per multicast group */
#define SV_MAX_TOTAL_MCAST_QP_ATTACH (SV_MAX_MCAST_GRP * SV_MAX_MCAST_QP_ATTACH)
#define SV_MAX_INLINE_DATA	256		/* bytes of inline send data */
#define SV_MAX_PKEYS		1		/* only the default P_Key 0xffff */
#define SV_DEFAULT_PKEY		0xffff
#define SV_LOCAL_CA_ACK_DELAY	15
#define SV_PHYS_PORT_CNT	1		/* port 1 only */
#define SV_PAGE_SIZE_CAP	0xfffff000ULL	/* 4 KiB .. 2 GiB pages */
#define SV_MAX_MSG_SZ		0x80000000U	/* 2 GiB, the IB maximum */
#define SV_GID_TBL_LEN		32		/* RoCE GID table entries */
#define SV_NUM_COMP_VECTORS	1

/*
 * Identity. softverbs has no IEEE OUI; the vendor id 0x005356 ("SV") is
 * made up and fixed, so applications can recognise the device.
 */
#define SV_VENDOR_ID		0x005356
#define SV_VENDOR_PART_ID	1
#define SV_HW_VER		1
#define SV_FW_VER		"1.0.0"

/*
 * Encodings below are the verbs ones (<infiniband/verbs.h>), so the
 * library copies values through unchanged.
 */
/* device_cap_flags: only what softverbs does */
#define SV_DEVICE_SYS_IMAGE_GUID	0x00000800U	/* IBV_DEVICE_SYS_IMAGE_GUID */
#define SV_DEVICE_RC_RNR_NAK_GEN	0x00001000U	/* IBV_DEVICE_RC_RNR_NAK_GEN */
#define SV_DEVICE_CAP_FLAGS	(SV_DEVICE_SYS_IMAGE_GUID | SV_DEVICE_RC_RNR_NAK_GEN)
#define SV_ATOMIC_HCA		1	/* IBV_ATOMIC_HCA */

/* port attributes */
#define SV_PORT_ACTIVE		4	/* IBV_PORT_ACTIVE */
#define SV_MTU_4096		5	/* IBV_MTU_4096 */
#define SV_PORT_IP_BASED_GIDS	0x04000000U	/* IBV_PORT_IP_BASED_GIDS */
#define SV_PORT_CAP_FLAGS	SV_PORT_IP_BASED_GIDS
#define SV_WIDTH_4X		2	/* active_width 4X */
#define SV_SPEED_EDR		32	/* active_speed 25 Gb/s per lane */
#define SV_PHYS_STATE_LINK_UP	5
#define SV_LINK_LAYER_ETHERNET	2	/* IBV_LINK_LAYER_ETHERNET */
#define SV_MAX_VL_NUM		1	/* one data VL */

/* GID types: enum ibv_gid_type */
#define SV_GID_TYPE_ROCE_V1	1
#define SV_GID_TYPE_ROCE_V2	2

/* SV_IOC_QUERY_DEVICE: the device's attributes and limits. */
struct sv_query_device {
	__u32 size;			/* in */
	__u32 comp_mask;		/* in: must be zero */
	char fw_ver[64];		/* out: NUL-terminated */
	__be64 node_guid;
	__be64 sys_image_guid;
	__u64 max_mr_size;
	__u64 page_size_cap;
	__u32 vendor_id;
	__u32 vendor_part_id;
	__u32 hw_ver;
	__u32 max_qp;
	__u32 max_qp_wr;
	__u32 device_cap_flags;
	__u32 max_sge;
	__u32 max_sge_rd;
	__u32 max_cq;
	__u32 max_cqe;
	__u32 max_mr;
	__u32 max_pd;
	__u32 max_qp_rd_atom;
	__u32 max_res_rd_atom;
	__u32 max_qp_init_rd_atom;
	__u32 atomic_cap;
	__u32 max_mcast_grp;
	__u32 max_mcast_qp_attach;
	__u32 max_total_mcast_qp_attach;
	__u32 max_ah;
	__u32 max_srq;
	__u32 max_srq_wr;
	__u32 max_srq_sge;
	__u16 max_pkeys;
	__u8 local_ca_ack_delay;
	__u8 phys_port_cnt;
	__u32 max_inline_data;
	__u32 num_comp_vectors;
};

#define SV_QUERY_DEVICE_SIZE_VER0	208
#define SV_IOC_QUERY_DEVICE _IOWR(SV_IOC_MAGIC, SV_NR_QUERY_DEVICE, struct sv_query_device)

/* SV_IOC_QUERY_PORT: attributes of port_num (1 only; others EINVAL). */
struct sv_query_port {
	__u32 size;			/* in */
	__u32 port_num;			/* in */
	__u32 state;			/* out: SV_PORT_* */
	__u32 max_mtu;
	__u32 active_mtu;
	__u32 gid_tbl_len;
	__u32 port_cap_flags;
	__u32 max_msg_sz;
	__u32 bad_pkey_cntr;
	__u32 qkey_viol_cntr;
	__u16 pkey_tbl_len;
	__u16 lid;
	__u16 sm_lid;
	__u8 lmc;
	__u8 max_vl_num;
	__u8 sm_sl;
	__u8 subnet_timeout;
	__u8 init_type_reply;
	__u8 active_width;
	__u8 active_speed;
	__u8 phys_state;
	__u8 link_layer;
	__u8 flags;
	__u16 port_cap_flags2;
	__u16 reserved;			/* must be zero */
};

#define SV_QUERY_PORT_SIZE_VER0		60
#define SV_IOC_QUERY_PORT _IOWR(SV_IOC_MAGIC, SV_NR_QUERY_PORT, struct sv_query_port)

/*
 * SV_IOC_QUERY_GID: one entry of port_num's GID table.
 * index >= SV_GID_TBL_LEN: EINVAL; an empty entry: ENODATA.
 * The RoCE table: 0 and 1 are fe80::<EUI-64 of the MAC> as RoCE v1 and v2,
 * then each IP address of the bound netdev (IPv4 as ::ffff:a.b.c.d) as a
 * v1/v2 pair.
 */
struct sv_query_gid {
	__u32 size;			/* in */
	__u32 port_num;			/* in */
	__u32 index;			/* in */
	__u32 gid_type;			/* out: SV_GID_TYPE_* */
	__u8 gid[16];			/* out, network order */
	__u32 ndev_ifindex;		/* out: 0 without a netdev */
	__u32 reserved;			/* must be zero */
};

#define SV_QUERY_GID_SIZE_VER0		40
#define SV_IOC_QUERY_GID _IOWR(SV_IOC_MAGIC, SV_NR_QUERY_GID, struct sv_query_gid)

/* SV_IOC_QUERY_PKEY: index 0 is 0xffff; any other index EINVAL. */
struct sv_query_pkey {
	__u32 size;			/* in */
	__u32 port_num;			/* in */
	__u32 index;			/* in */
	__u16 pkey;			/* out */
	__u16 reserved;			/* must be zero */
};

#define SV_QUERY_PKEY_SIZE_VER0		16
#define SV_IOC_QUERY_PKEY _IOWR(SV_IOC_MAGIC, SV_NR_QUERY_PKEY, struct sv_query_pkey)
/*
 * ---------------------------------------------------------------------
 * CQs, completion channels, async events (0x20-0x2f)
 * ---------------------------------------------------------------------
 *
 * The CQ ring
 * -----------
 * SV_IOC_CREATE_CQ returns an mmap offset and length; mmap(MAP_SHARED,
 * PROT_READ | PROT_WRITE) of exactly that range at exactly that offset on
 * the device fd maps the ring (any other offset, length, MAP_PRIVATE or
 * PROT_EXEC: EINVAL). The mapping starts with a struct sv_cq_ring header;
 * `cqe_offset` bytes into it starts an array of `entries` (a power of two)
 * struct sv_cqe. The mapping stays valid (and harmless) after the CQ is
 * destroyed, until munmap.
 *
 * Indices are free-running __u32 counters; the slot of index i is
 * i & (entries - 1). prod - cons is the number of CQEs ready.
 *
 *   prod   written only by the kernel. The kernel fills the slot, then
 *          stores prod + 1 with release semantics (smp_store_release).
 *          The library loads prod with acquire semantics
 *          (__atomic_load_n(..., __ATOMIC_ACQUIRE)) before it reads any
 *          CQE below it.
 *   cons   written only by the library: after it has copied CQEs out, it
 *          stores the new cons with release semantics, which hands the
 *          slots back. The kernel loads cons with acquire semantics and
 *          treats a value it cannot trust (prod - cons > entries) as a
 *          full ring: userspace cannot make it write outside the array.
 *   arm    notification request. The library sets SV_CQ_ARM_NEXT
 *          (ibv_req_notify_cq(cq, 0)) or SV_CQ_ARM_SOLICITED
 *          (solicited_only = 1) with an atomic OR (a full barrier); no
 *          syscall. After publishing CQEs the kernel issues a full barrier
 *          (smp_mb) and then reads arm: if ARM_NEXT is set, or
 *          ARM_SOLICITED is set and one of the new CQEs was solicited (or
 *          an error completion), it clears both bits with cmpxchg and, if
 *          that succeeded, queues exactly one event on the CQ's completion
 *          channel. The barrier pairs with the library's atomic OR: either
 *          the kernel sees the arm, or the library's poll after arming sees
 *          the CQE (poll, arm, poll again, then wait: no lost wakeup).
 *          Bits 2..31 belong to the library (e.g. a sequence number); the
 *          kernel preserves them.
 *   flags  written only by the kernel: SV_CQ_RING_OVERFLOW once a CQE had
 *          to be dropped because the ring was full; the CQ is then in
 *          error and an IBV_EVENT_CQ_ERR async event was raised.
 *
 * Events
 * ------
 * A completion channel is an object (handle) plus an anonymous fd; read()
 * on the fd returns one struct sv_comp_event per call (buffer smaller than
 * one: EINVAL), blocks while none is queued (EAGAIN with O_NONBLOCK), and
 * poll() reports EPOLLIN while one is queued. After the channel is
 * destroyed (or the device fd closed) read() returns EIO and poll() EPOLLERR.
 * SV_IOC_GET_ASYNC_FD returns an fd of the same kind on the device file's
 * async event queue, reading struct sv_async_event.
 *
 * Destroying a CQ drops its events that were not read yet and returns how
 * many were read (comp_events_reported, async_events_reported): the library
 * waits until the application acknowledged that many (ibv_destroy_cq).
 */

/* CQE, 64 bytes: everything struct ibv_wc and ibv_cq_ex's read_* need. */
struct sv_cqe {
	__u64 wr_id;
	__u32 status;		/* enum ibv_wc_status */
	__u32 opcode;		/* enum ibv_wc_opcode */
	__u32 vendor_err;
	__u32 byte_len;
	__u32 imm_data;		/* big endian, or the invalidated rkey */
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;		/* enum ibv_wc_flags */
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u16 cvlan;
	__u32 flow_tag;
	__u32 reserved;
	__u64 timestamp;	/* ns, CLOCK_REALTIME, if the CQ asked for it */
};

#define SV_CQE_SIZE		64

/* Ring header at offset 0 of the mapping; each index in its cache line. */
struct sv_cq_ring {
	__u32 prod;		/* kernel writes (release) */
	__u32 pad0[15];
	__u32 cons;		/* library writes (release) */
	__u32 pad1[15];
	__u32 arm;		/* library sets bits, kernel clears them */
	__u32 flags;		/* SV_CQ_RING_* (kernel writes) */
	__u32 entries;		/* constant: power of two */
	__u32 cqe_size;		/* constant: SV_CQE_SIZE */
};

#define SV_CQ_ARM_NEXT		0x1U
#define SV_CQ_ARM_SOLICITED	0x2U
#define SV_CQ_ARM_MASK		(SV_CQ_ARM_NEXT | SV_CQ_ARM_SOLICITED)

#define SV_CQ_RING_OVERFLOW	0x1U

/* SV_MAX_CQE and SV_NUM_COMP_VECTORS are device limits (above). */

/* Read from a completion channel fd. */
struct sv_comp_event {
	__u64 user_handle;	/* the CQ's user_handle */
	__u32 cq_handle;
	__u32 reserved;
};

/* Async event types: the values of enum ibv_event_type. */
enum sv_event_type {
	SV_EVENT_CQ_ERR = 0,
	SV_EVENT_QP_FATAL = 1,
	SV_EVENT_QP_REQ_ERR = 2,
	SV_EVENT_QP_ACCESS_ERR = 3,
	SV_EVENT_COMM_EST = 4,
	SV_EVENT_SQ_DRAINED = 5,
	SV_EVENT_PATH_MIG = 6,
	SV_EVENT_PATH_MIG_ERR = 7,
	SV_EVENT_DEVICE_FATAL = 8,
	SV_EVENT_PORT_ACTIVE = 9,
	SV_EVENT_PORT_ERR = 10,
	SV_EVENT_LID_CHANGE = 11,
	SV_EVENT_PKEY_CHANGE = 12,
	SV_EVENT_SM_CHANGE = 13,
	SV_EVENT_SRQ_ERR = 14,
	SV_EVENT_SRQ_LIMIT_REACHED = 15,
	SV_EVENT_QP_LAST_WQE_REACHED = 16,
	SV_EVENT_CLIENT_REREGISTER = 17,
	SV_EVENT_GID_CHANGE = 18,
	SV_EVENT_WQ_FATAL = 19,
};

/* Read from the async event fd. */
struct sv_async_event {
	__u64 element;		/* object's user_handle, or port number */
	__u32 event_type;	/* enum ibv_event_type */
	__u32 reserved;
};

/* SV_IOC_CREATE_COMP_CHANNEL: a new channel and its fd (O_CLOEXEC). */
struct sv_create_comp_channel {
	__u32 size;
	__u32 flags;		/* in: SV_EVENT_FD_NONBLOCK */
	__u32 handle;		/* out */
	__s32 fd;		/* out */
};

#define SV_EVENT_FD_NONBLOCK	0x1U

#define SV_CREATE_COMP_CHANNEL_SIZE_VER0	16
#define SV_IOC_CREATE_COMP_CHANNEL _IOWR(SV_IOC_MAGIC, \
	SV_NR_CREATE_COMP_CHANNEL, struct sv_create_comp_channel)

/* SV_IOC_DESTROY_COMP_CHANNEL: EBUSY while CQs use it. */
struct sv_destroy_comp_channel {
	__u32 size;
	__u32 handle;		/* in */
};

#define SV_DESTROY_COMP_CHANNEL_SIZE_VER0	8
#define SV_IOC_DESTROY_COMP_CHANNEL _IOWR(SV_IOC_MAGIC, \
	SV_NR_DESTROY_COMP_CHANNEL, struct sv_destroy_comp_channel)

/* SV_IOC_GET_ASYNC_FD: a new fd (O_CLOEXEC) on this file's async events. */
struct sv_get_async_fd {
	__u32 size;
	__u32 flags;		/* in: SV_EVENT_FD_NONBLOCK */
	__s32 fd;		/* out */
	__u32 reserved;
};

#define SV_GET_ASYNC_FD_SIZE_VER0	16
#define SV_IOC_GET_ASYNC_FD _IOWR(SV_IOC_MAGIC, SV_NR_GET_ASYNC_FD, \
	struct sv_get_async_fd)

/* SV_IOC_CREATE_CQ */
struct sv_create_cq {
	__u32 size;
	__u32 cqe;		/* in: at least 1; out: the ring's entries */
	__u32 comp_vector;	/* in: < SV_NUM_COMP_VECTORS */
	__u32 channel;		/* in: comp channel handle, 0: none */
	__u32 flags;		/* in: SV_CQ_FLAG_* */
	__u32 handle;		/* out */
	__u64 wc_flags;		/* in: IBV_WC_EX_WITH_* the CQ must fill */
	__u64 user_handle;	/* in: returned in this CQ's events */
	__u64 mmap_offset;	/* out */
	__u64 mmap_len;		/* out */
	__u32 cqe_offset;	/* out: where the CQE array starts */
	__u32 reserved;
};

/*
 * wc_flags are IBV_WC_EX_WITH_* bits (bit 0 BYTE_LEN ... bit 11
 * COMPLETION_TIMESTAMP_WALLCLOCK). Bits the CQE carries are accepted;
 * TM_INFO (bit 10) is EOPNOTSUPP; bits past 11 are EINVAL.
 */
#define SV_CQ_WC_FLAGS_KNOWN		0xfffULL
#define SV_CQ_WC_FLAGS_SUPPORTED	0xbffULL
#define SV_CQ_WC_TIMESTAMPS		0x880ULL	/* bits 7 and 11 */

/* IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN: drop CQEs on overrun, no CQ error. */
#define SV_CQ_FLAG_IGNORE_OVERRUN	0x1U

#define SV_CREATE_CQ_SIZE_VER0	64
#define SV_IOC_CREATE_CQ _IOWR(SV_IOC_MAGIC, SV_NR_CREATE_CQ, \
	struct sv_create_cq)

/*
 * SV_IOC_RESIZE_CQ: move the CQ to a new ring of at least cqe entries
 * (1..SV_MAX_CQE; fewer than the CQEs not yet consumed: EINVAL). The
 * unconsumed CQEs are copied to the start of the new ring (its cons 0,
 * prod their number), and arm and flags carry over. The new ring is
 * mapped at the returned offset, its CQEs at the same cqe_offset as at
 * creation; the old offset can no longer be mapped, existing mappings of
 * it stay valid but the kernel writes only to the new ring. The library
 * must not poll or arm while this runs.
 */
struct sv_resize_cq {
	__u32 size;
	__u32 handle;		/* in */
	__u32 cqe;		/* in: at least; out: the new ring's entries */
	__u32 reserved;
	__u64 mmap_offset;	/* out */
	__u64 mmap_len;		/* out */
};

#define SV_RESIZE_CQ_SIZE_VER0	32
#define SV_IOC_RESIZE_CQ _IOWR(SV_IOC_MAGIC, SV_NR_RESIZE_CQ, \
	struct sv_resize_cq)

/* SV_IOC_DESTROY_CQ: EBUSY while QPs, SRQs or WQs use it. */
struct sv_destroy_cq {
	__u32 size;
	__u32 handle;			/* in */
	__u32 comp_events_reported;	/* out */
	__u32 async_events_reported;	/* out */
};

#define SV_DESTROY_CQ_SIZE_VER0	16
#define SV_IOC_DESTROY_CQ _IOWR(SV_IOC_MAGIC, SV_NR_DESTROY_CQ, \
	struct sv_destroy_cq)

/*
 * SV_IOC_TEST_CQ_PUSH: TEST ONLY, not part of the verbs ABI. Adds one CQE
 * to a CQ as the execution engine would (sv_cq_push), so selftests can
 * exercise polling, arming, events and overruns without QPs. ENOTTY
 * unless root enabled it with the module parameter test_hooks
 * (/sys/module/softverbs/parameters/test_hooks, default off). Returns
 * sv_cq_push()'s result: 0, ENOSPC (ring full), EINVAL (CQ in error).
 */
struct sv_test_cq_push {
	__u32 size;
	__u32 handle;		/* in: CQ */
	__u32 solicited;	/* in: 0 or 1 */
	__u32 reserved;
	struct sv_cqe cqe;	/* in */
};

#define SV_TEST_CQ_PUSH_SIZE_VER0	80
#define SV_IOC_TEST_CQ_PUSH _IOWR(SV_IOC_MAGIC, SV_NR_TEST_CQ_PUSH, \
	struct sv_test_cq_push)

#endif /* _UAPI_SOFTVERBS_ABI_H */
