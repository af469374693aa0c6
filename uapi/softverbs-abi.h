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
 *   0x00-0x0f  ABI, device, port, GID and P_Key queries; 0x05: a DM's;
 *              0x06: ibv_advise_mr, 0x07: ibv_alloc_null_mr, 0x08:
 *              ibv_reg_dmabuf_mr (the MR range is full)
 *   0x10-0x17  PD                 0x18-0x1f  MR
 *   0x20-0x2f  CQ, completion channels, async events
 *   0x30-0x3f  QP                 0x40-0x47  SRQ
 *   0x48-0x4f  AH                 0x50-0x57  multicast
 *   0x58-0x5f  data path (rings, doorbell)
 *   0x60-0x67  flow steering (0x62-0x63: flow matchers, 0x64-0x67: flow
 *              counters); 0x70-0x73 steering tables and anchors; 0x74-0x75
 *              steering actions (frame rewrites, mirrors)
 */
enum sv_ioctl_nr {
	SV_NR_QUERY_ABI = 0x00,
	SV_NR_QUERY_DEVICE = 0x01,
	SV_NR_QUERY_PORT = 0x02,
	SV_NR_QUERY_GID = 0x03,
	SV_NR_QUERY_PKEY = 0x04,
	SV_NR_QUERY_DM = 0x05,
	SV_NR_ADVISE_MR = 0x06,		/* the MR range is full */
	SV_NR_ALLOC_NULL_MR = 0x07,	/* ... and so is this */
	SV_NR_REG_DMABUF_MR = 0x08,	/* ... and this */

	/* CQ, completion channels, async events */
	SV_NR_CREATE_COMP_CHANNEL = 0x20,
	SV_NR_DESTROY_COMP_CHANNEL = 0x21,
	SV_NR_GET_ASYNC_FD = 0x22,
	SV_NR_CREATE_CQ = 0x23,
	SV_NR_RESIZE_CQ = 0x24,
	SV_NR_DESTROY_CQ = 0x25,
	SV_NR_MODIFY_CQ = 0x26,
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
 * what the kernel enforces. How many PDs, MRs, CQs, QPs, SRQs and AHs a
 * device holds is the device's own (module parameters max_pd ... max_ah
 * for new devices, SV_NL_ATTR_MAX_* in svctl dev set at run time, up to
 * SV_NL_OBJ_LIMIT_MAX): SV_IOC_QUERY_DEVICE reports the current values.
 * So are the queue depths max_qp_wr, max_cqe and max_srq_wr (module
 * parameters of those names, SV_NL_ATTR_MAX_QP_WR .. in svctl dev set,
 * up to SV_NL_DEPTH_MAX); SV_DEFAULT_MAX_* are a new device's.
 */
#define SV_DEFAULT_MAX_QP_WR	16384		/* work requests per SQ or RQ */
#define SV_MAX_SGE		32		/* SGEs per send/recv WR */
#define SV_MAX_SGE_RD		32		/* SGEs per RDMA read WR */
#define SV_DEFAULT_MAX_CQE	65536		/* entries per CQ */
#define SV_MAX_MR_SIZE		0x10000000000ULL /* bytes per MR (1 TiB) */
#define SV_MAX_QP_RD_ATOM	128		/* RDMA read/atomic depth (as rxe) */
#define SV_MAX_QP_INIT_RD_ATOM	128		/* initiator depth (as rxe) */
#define SV_DEFAULT_MAX_SRQ_WR	16384
#define SV_MAX_SRQ_SGE		32
#define SV_MAX_MCAST_GRP	8192
#define SV_MAX_MCAST_QP_ATTACH	56		/* QPs per multicast group */
#define SV_MAX_TOTAL_MCAST_QP_ATTACH (SV_MAX_MCAST_GRP * SV_MAX_MCAST_QP_ATTACH)
#define SV_MAX_INLINE_DATA	512		/* bytes of inline send data */
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
#define SV_DEVICE_MEM_WINDOW	0x00020000U	/* IBV_DEVICE_MEM_WINDOW */
#define SV_DEVICE_MEM_WINDOW_TYPE_2B 0x01000000U /* ..._MEM_WINDOW_TYPE_2B */
#define SV_DEVICE_SRQ_RESIZE	0x00002000U	/* IBV_DEVICE_SRQ_RESIZE */
#define SV_DEVICE_XRC		0x00100000U	/* IBV_DEVICE_XRC */
#define SV_DEVICE_CAP_FLAGS	(SV_DEVICE_SYS_IMAGE_GUID | SV_DEVICE_RC_RNR_NAK_GEN | \
				 SV_DEVICE_SRQ_RESIZE | SV_DEVICE_MEM_WINDOW | \
				 SV_DEVICE_MEM_WINDOW_TYPE_2B | SV_DEVICE_XRC)
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
	__u32 raw_caps;		/* SV_RAW_CAP_* */
	__u32 max_mw;		/* memory windows: they count against max_mr */
	/* since size 216: */
	__u32 odp_caps;		/* SV_ODP_SUPPORT* (enum ibv_odp_general_caps) */
	/* What ODP MRs work with, every transport: enum ibv_odp_transport_cap_bits */
	__u32 odp_transport_caps;
};

#define SV_ODP_SUPPORT			0x1
#define SV_ODP_SUPPORT_IMPLICIT		0x2
#define SV_ODP_TRANSPORT_CAPS		0x3f	/* SEND .. SRQ_RECV */

/* The device is bound to a netdev: RAW_PACKET and RSS QPs can be made. */
#define SV_RAW_CAP_NETDEV		0x1
/* RAW_PACKET QPs take SV_SEND_IP_CSUM (IPv4 header, TCP and UDP sums) */
#define SV_RAW_CAP_IP_CSUM		0x2
/* ... and SV_WR_TSO, up to SV_MAX_TSO bytes of payload (ibv tso_caps) */
#define SV_RAW_CAP_TSO			0x4

/*
 * The device clock that stamps completions (IBV_WC_EX_WITH_COMPLETION_
 * TIMESTAMP) and that ibv_query_rt_values_ex() reads: CLOCK_MONOTONIC_RAW
 * in nanoseconds, ktime_get_raw_ns() in the kernel and
 * clock_gettime(CLOCK_MONOTONIC_RAW) in userspace (the vDSO: no syscall),
 * one clock. hca_core_clock is its frequency in kHz (1 GHz: a tick is a
 * nanosecond); completion_timestamp_mask its valid bits.
 */
#define SV_DEVICE_CLOCK			CLOCK_MONOTONIC_RAW
#define SV_HCA_CORE_CLOCK_KHZ		1000000ULL
#define SV_TIMESTAMP_MASK		0x7fffffffffffffffULL

#define SV_QUERY_DEVICE_SIZE_VER0	208
#define SV_QUERY_DEVICE_SIZE_VER1	216
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
 * PD (0x10-0x17) and MR (0x18-0x1f).
 *
 * Handles are per open file. An unknown handle (never allocated, destroyed,
 * or from another file) is ENOENT; a handle of another object type EINVAL.
 */
enum sv_ioctl_nr_pdmr {
	SV_NR_ALLOC_PD = 0x10,
	SV_NR_DEALLOC_PD = 0x11,
	SV_NR_QUERY_PD = 0x12,
	SV_NR_OPEN_XRCD = 0x16,
	SV_NR_CLOSE_XRCD = 0x17,
	SV_NR_REG_MR = 0x18,
	SV_NR_REREG_MR = 0x19,
	SV_NR_DEREG_MR = 0x1a,
	SV_NR_CREATE_MKEY = 0x1b,
	SV_NR_DESTROY_MKEY = 0x1c,
	SV_NR_ALLOC_MW = 0x1d,
	SV_NR_DEALLOC_MW = 0x1e,
	SV_NR_QUERY_MR = 0x1f,
	SV_NR_ALLOC_DM = 0x13,
	SV_NR_FREE_DM = 0x14,
	SV_NR_REG_DM_MR = 0x15,
};

/* SV_IOC_ALLOC_PD: allocate a protection domain. */
struct sv_alloc_pd {
	__u32 size;		/* in */
	__u32 pd_handle;	/* out */
	__u64 reserved;		/* must be zero */
};

#define SV_ALLOC_PD_SIZE_VER0	16
#define SV_IOC_ALLOC_PD _IOWR(SV_IOC_MAGIC, SV_NR_ALLOC_PD, struct sv_alloc_pd)

/* SV_IOC_DEALLOC_PD: EBUSY while an MR, QP, SRQ, AH, ... uses the PD. */
struct sv_dealloc_pd {
	__u32 size;		/* in */
	__u32 pd_handle;	/* in */
};

#define SV_DEALLOC_PD_SIZE_VER0	8
#define SV_IOC_DEALLOC_PD _IOWR(SV_IOC_MAGIC, SV_NR_DEALLOC_PD, \
				struct sv_dealloc_pd)

/*
 * SV_IOC_QUERY_PD and SV_IOC_QUERY_MR (ibv_import_pd(3), ibv_import_mr(3)):
 * a PD or an MR of this file by handle, for another context on the same
 * file (ibv_import_device(3): a dup'd or passed fd). The MR's PD, keys,
 * access flags, registered address (addr), length and iova come back.
 */
struct sv_query_pd {
	__u32 size;		/* in */
	__u32 pd_handle;	/* in */
};

#define SV_QUERY_PD_SIZE_VER0	8
#define SV_IOC_QUERY_PD _IOWR(SV_IOC_MAGIC, SV_NR_QUERY_PD, struct sv_query_pd)

/*
 * SV_IOC_OPEN_XRCD (ibv_open_xrcd(3)): an XRC domain. fd -1 makes a new
 * domain of this file's own. Any other fd names a file: every open of the
 * same device with a file of the same inode, in any process, reaches the
 * same domain (which lives while a handle, an XRC SRQ or an XRC TGT QP
 * of it does). oflags as the man page: without O_CREAT a domain must
 * exist for the inode; with O_CREAT | O_EXCL it must not (EINVAL
 * otherwise, as uverbs). A bad fd is EBADF. Other oflags bits: EINVAL.
 */
struct sv_open_xrcd {
	__u32 size;		/* in */
	__s32 fd;		/* in: a file whose inode names the domain, or -1 */
	__u32 oflags;		/* in: O_CREAT, O_EXCL */
	__u32 handle;		/* out */
};

#define SV_MAX_XRCD		65536		/* handles, per device */
#define SV_OPEN_XRCD_SIZE_VER0	16
#define SV_IOC_OPEN_XRCD _IOWR(SV_IOC_MAGIC, SV_NR_OPEN_XRCD, struct sv_open_xrcd)

/* SV_IOC_CLOSE_XRCD: EBUSY while an XRC SRQ or TGT QP of this handle is. */
struct sv_close_xrcd {
	__u32 size;		/* in */
	__u32 handle;		/* in */
};

#define SV_CLOSE_XRCD_SIZE_VER0	8
#define SV_IOC_CLOSE_XRCD _IOWR(SV_IOC_MAGIC, SV_NR_CLOSE_XRCD, struct sv_close_xrcd)

struct sv_query_mr {
	__u32 size;		/* in */
	__u32 mr_handle;	/* in */
	__u32 pd_handle;	/* out */
	__u32 lkey;		/* out */
	__u32 rkey;		/* out */
	__u32 access;		/* out: SV_ACCESS_* */
	__u64 addr;		/* out */
	__u64 length;		/* out */
	__u64 iova;		/* out */
};

#define SV_QUERY_MR_SIZE_VER0	48
#define SV_IOC_QUERY_MR _IOWR(SV_IOC_MAGIC, SV_NR_QUERY_MR, struct sv_query_mr)

/*
 * Memory access flags: the values of enum ibv_access_flags. Bits in
 * SV_ACCESS_OPTIONAL_RANGE are hints (accepted, may be ignored); other
 * unknown bits are EINVAL. REMOTE_WRITE and REMOTE_ATOMIC need
 * LOCAL_WRITE (EINVAL). ON_DEMAND: on-demand paging (below).
 */
#define SV_ACCESS_LOCAL_WRITE		0x00000001U
#define SV_ACCESS_REMOTE_WRITE		0x00000002U
#define SV_ACCESS_REMOTE_READ		0x00000004U
#define SV_ACCESS_REMOTE_ATOMIC		0x00000008U
#define SV_ACCESS_MW_BIND		0x00000010U
#define SV_ACCESS_ZERO_BASED		0x00000020U
#define SV_ACCESS_ON_DEMAND		0x00000040U
#define SV_ACCESS_HUGETLB		0x00000080U
/*
 * Targets of SV_WR_FLUSH (IBA 1.5): with global visibility, and with
 * persistence, which only an MR of persistent memory (pinned pages of
 * pmem) may grant: EINVAL for any other, and on rereg, DM, dma-buf and
 * ODP MRs.
 */
#define SV_ACCESS_FLUSH_GLOBAL		0x00000100U
#define SV_ACCESS_FLUSH_PERSISTENT	0x00000200U
#define SV_ACCESS_RELAXED_ORDERING	0x00100000U
#define SV_ACCESS_OPTIONAL_RANGE	0x3ff00000U

/*
 * SV_IOC_REG_MR: register [addr, addr + length) of the caller's memory.
 * The pages are pinned and charged to RLIMIT_MEMLOCK (ENOMEM beyond it,
 * unless CAP_IPC_LOCK). The MR's first byte has I/O virtual address iova,
 * or 0 with SV_ACCESS_ZERO_BASED. length 0, or a range that wraps: EINVAL;
 * longer than the device's max_mr_size: EINVAL; an unmapped range, or a
 * read-only one with a write access: EFAULT. lkey == rkey.
 *
 * With SV_ACCESS_ON_DEMAND nothing is pinned or charged to RLIMIT_MEMLOCK:
 * pages are faulted in when the data path touches them (an unmapped one
 * then fails that access) and follow munmap, mremap, fork and migration.
 * addr 0 with length U64_MAX (and iova 0, not ZERO_BASED) is an implicit
 * ODP MR over the whole address space; rereg of it may only change its PD
 * (EOPNOTSUPP).
 */
struct sv_reg_mr {
	__u32 size;		/* in */
	__u32 pd_handle;	/* in */
	__u64 addr;		/* in */
	__u64 length;		/* in */
	__u64 iova;		/* in */
	__u32 access;		/* in: SV_ACCESS_* */
	__u32 mr_handle;	/* out */
	__u32 lkey;		/* out */
	__u32 rkey;		/* out */
};

#define SV_REG_MR_SIZE_VER0	48
#define SV_IOC_REG_MR _IOWR(SV_IOC_MAGIC, SV_NR_REG_MR, struct sv_reg_mr)

/* sv_rereg_mr.flags: the values of enum ibv_rereg_mr_flags. */
#define SV_REREG_MR_CHANGE_TRANSLATION	0x00000001U
#define SV_REREG_MR_CHANGE_PD		0x00000002U
#define SV_REREG_MR_CHANGE_ACCESS	0x00000004U

/*
 * SV_IOC_REREG_MR: change an MR's translation (addr, length, iova), PD
 * and/or access, all or nothing: on error the MR is unchanged. flags 0 or
 * unknown bits: EINVAL. Fields a flag does not select must be zero. On
 * success the MR has new keys (the 8-bit variant changes).
 */
struct sv_rereg_mr {
	__u32 size;		/* in */
	__u32 mr_handle;	/* in */
	__u32 flags;		/* in: SV_REREG_MR_* */
	__u32 pd_handle;	/* in: with CHANGE_PD */
	__u64 addr;		/* in: with CHANGE_TRANSLATION */
	__u64 length;		/* in: with CHANGE_TRANSLATION */
	__u64 iova;		/* in: with CHANGE_TRANSLATION */
	__u32 access;		/* in: with CHANGE_ACCESS */
	__u32 reserved;		/* must be zero */
	__u32 lkey;		/* out */
	__u32 rkey;		/* out */
};

#define SV_REREG_MR_SIZE_VER0	56
#define SV_IOC_REREG_MR _IOWR(SV_IOC_MAGIC, SV_NR_REREG_MR, struct sv_rereg_mr)

/* sv_advise_mr.advice: enum ibv_advise_mr_advice */
#define SV_ADVISE_MR_ADVICE_PREFETCH		0
#define SV_ADVISE_MR_ADVICE_PREFETCH_WRITE	1
#define SV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT	2
/* sv_advise_mr.flags: IBV_ADVISE_MR_FLAG_FLUSH */
#define SV_ADVISE_MR_FLAG_FLUSH			0x1

/*
 * SV_IOC_ADVISE_MR (ibv_advise_mr): make the pages of num_sge ranges of
 * ODP MRs of pd_handle present (PREFETCH: for reading, PREFETCH_WRITE:
 * for writing, NO_FAULT: those the process has mapped already). sg_list
 * points at num_sge struct sv_sge. Without FLUSH a page that cannot be
 * faulted in is skipped; with FLUSH it is EFAULT. Errors, as
 * ibv_advise_mr(3): an unknown advice EOPNOTSUPP; unknown flags, no SGEs,
 * reserved bits, an lkey of a window or indirect key EINVAL; an unknown
 * lkey, a range outside its MR EFAULT; an MR of another PD, or a write
 * prefetch of an MR without a write right EPERM; an MR that is not ODP
 * ENOENT.
 */
struct sv_advise_mr {
	__u32 size;		/* in */
	__u32 pd_handle;	/* in */
	__u32 advice;		/* in: SV_ADVISE_MR_ADVICE_* */
	__u32 flags;		/* in: SV_ADVISE_MR_FLAG_* */
	__u64 sg_list;		/* in: user pointer */
	__u32 num_sge;		/* in */
	__u32 reserved;		/* must be zero */
};

#define SV_ADVISE_MR_SIZE_VER0	32
#define SV_IOC_ADVISE_MR _IOWR(SV_IOC_MAGIC, SV_NR_ADVISE_MR, struct sv_advise_mr)

/*
 * SV_IOC_ALLOC_NULL_MR (ibv_alloc_null_mr): an MR of pd_handle with no
 * memory: as an lkey, writes to it are discarded and reads give zeros,
 * over any address (iova 0, length U64_MAX). It has no rkey: a remote
 * access with its key fails. Rereg is EINVAL; binding a window to it
 * fails (it has no MW_BIND). Deregistered with SV_IOC_DEREG_MR.
 */
struct sv_alloc_null_mr {
	__u32 size;		/* in */
	__u32 pd_handle;	/* in */
	__u32 mr_handle;	/* out */
	__u32 lkey;		/* out */
};

#define SV_ALLOC_NULL_MR_SIZE_VER0	16
#define SV_IOC_ALLOC_NULL_MR _IOWR(SV_IOC_MAGIC, SV_NR_ALLOC_NULL_MR, \
				   struct sv_alloc_null_mr)

/*
 * SV_IOC_REG_DMABUF_MR (ibv_reg_dmabuf_mr): [offset, offset + length) of
 * the dma-buf fd names as an MR whose first byte has I/O address iova (0
 * with ZERO_BASED). The buffer is pinned and reached through its
 * exporter's kernel mapping; nothing is charged to RLIMIT_MEMLOCK. fd not
 * a file: EBADF; not a dma-buf, a range outside it, length 0, ON_DEMAND,
 * reserved bits: EINVAL; an exporter without a kernel mapping of system
 * memory: EOPNOTSUPP. Rereg is EOPNOTSUPP. Should the exporter revoke the
 * buffer (move_notify), every access through the MR fails from then on.
 */
struct sv_reg_dmabuf_mr {
	__u32 size;		/* in */
	__u32 pd_handle;	/* in */
	__u64 offset;		/* in: in the dma-buf */
	__u64 length;		/* in */
	__u64 iova;		/* in */
	__s32 fd;		/* in: the dma-buf */
	__u32 access;		/* in: SV_ACCESS_* */
	__u32 mr_handle;	/* out */
	__u32 lkey;		/* out */
	__u32 rkey;		/* out */
	__u32 reserved;		/* must be zero */
};

#define SV_REG_DMABUF_MR_SIZE_VER0	56
#define SV_IOC_REG_DMABUF_MR _IOWR(SV_IOC_MAGIC, SV_NR_REG_DMABUF_MR, \
				   struct sv_reg_dmabuf_mr)

/* SV_IOC_DEREG_MR: unpin and uncharge the pages; the keys die. */
struct sv_dereg_mr {
	__u32 size;		/* in */
	__u32 mr_handle;	/* in */
};

#define SV_DEREG_MR_SIZE_VER0	8
#define SV_IOC_DEREG_MR _IOWR(SV_IOC_MAGIC, SV_NR_DEREG_MR, struct sv_dereg_mr)

/*
 * Indirect memory keys (mlx5dv_create_mkey, Documentation/mlx5dv.rst).
 *
 * SV_IOC_CREATE_MKEY makes a key in the MR key space with no memory of
 * its own: it is free (every access through it fails) until an RC QP of
 * its PD posts an SV_WR_UMR naming it, which lays it out over up to
 * max_entries pieces of other MRs of that PD; SV_WR_LOCAL_INV frees it
 * again. Accesses through it are zero-based (offsets into the layout),
 * with the rights the UMR gave. It counts as an MR against max_mr.
 * flags must be zero; max_entries is rounded up to a multiple of 4
 * (returned), at most SV_MAX_MKEY_ENTRIES (EINVAL beyond). lkey == rkey.
 */
#define SV_MAX_MKEY_ENTRIES	1024

struct sv_create_mkey {
	__u32 size;		/* in */
	__u32 pd_handle;	/* in */
	__u32 flags;		/* in: must be zero */
	__u32 max_entries;	/* in, out */
	__u32 mkey_handle;	/* out */
	__u32 key;		/* out */
	__u64 reserved;		/* must be zero */
};

#define SV_CREATE_MKEY_SIZE_VER0	32
#define SV_IOC_CREATE_MKEY _IOWR(SV_IOC_MAGIC, SV_NR_CREATE_MKEY, \
				 struct sv_create_mkey)

/* SV_IOC_DESTROY_MKEY: the key dies; accesses in flight finish first. */
struct sv_destroy_mkey {
	__u32 size;		/* in */
	__u32 mkey_handle;	/* in */
};

#define SV_DESTROY_MKEY_SIZE_VER0	8
#define SV_IOC_DESTROY_MKEY _IOWR(SV_IOC_MAGIC, SV_NR_DESTROY_MKEY, \
				  struct sv_destroy_mkey)

/*
 * Device memory (ibv_alloc_dm(3), Documentation/memory.rst).
 *
 * SV_IOC_ALLOC_DM makes length bytes (1..SV_MAX_DM_SIZE, max_dm_size) of
 * zeroed module memory, mapped whole at mmap_offset (the library's
 * ibv_memcpy_to_dm/_from_dm copy through that mapping), aligned to a page:
 * log_align_req up to PAGE_SHIFT (12), EINVAL beyond. It is charged as
 * ring memory is (memory cgroup, RLIMIT_MEMLOCK); a device holds at most
 * SV_MAX_DM of them. SV_IOC_REG_DM_MR registers [dm_offset, dm_offset +
 * length) of it as a zero-based MR (access must have SV_ACCESS_ZERO_BASED;
 * beyond the DM: EINVAL); SV_IOC_FREE_DM is EBUSY while MRs use it.
 */
#define SV_MAX_DM_SIZE		0x100000	/* bytes per allocation (1 MiB) */
#define SV_MAX_DM		4096		/* per device */

struct sv_alloc_dm {
	__u32 size;		/* in */
	__u32 log_align_req;	/* in */
	__u64 length;		/* in */
	__u32 flags;		/* in: must be zero */
	__u32 dm_handle;	/* out */
	__u64 mmap_offset;	/* out */
	__u64 mmap_len;		/* out */
};

#define SV_ALLOC_DM_SIZE_VER0	40
#define SV_IOC_ALLOC_DM _IOWR(SV_IOC_MAGIC, SV_NR_ALLOC_DM, struct sv_alloc_dm)

struct sv_free_dm {
	__u32 size;		/* in */
	__u32 dm_handle;	/* in */
};

#define SV_FREE_DM_SIZE_VER0	8
#define SV_IOC_FREE_DM _IOWR(SV_IOC_MAGIC, SV_NR_FREE_DM, struct sv_free_dm)

/*
 * SV_IOC_QUERY_DM (ibv_import_dm(3)): a DM of this file by handle, for
 * another context on the same file: its length and where to map it.
 */
struct sv_query_dm {
	__u32 size;		/* in */
	__u32 dm_handle;	/* in */
	__u64 length;		/* out: as allocated */
	__u64 mmap_offset;	/* out */
	__u64 mmap_len;		/* out */
};

#define SV_QUERY_DM_SIZE_VER0	32
#define SV_IOC_QUERY_DM _IOWR(SV_IOC_MAGIC, SV_NR_QUERY_DM, struct sv_query_dm)

struct sv_reg_dm_mr {
	__u32 size;		/* in */
	__u32 pd_handle;	/* in */
	__u32 dm_handle;	/* in */
	__u32 access;		/* in: SV_ACCESS_*, with ZERO_BASED */
	__u64 dm_offset;	/* in */
	__u64 length;		/* in */
	__u32 mr_handle;	/* out */
	__u32 lkey;		/* out */
	__u32 rkey;		/* out */
	__u32 reserved;		/* must be zero */
};

#define SV_REG_DM_MR_SIZE_VER0	48
#define SV_IOC_REG_DM_MR _IOWR(SV_IOC_MAGIC, SV_NR_REG_DM_MR, \
			       struct sv_reg_dm_mr)

/*
 * Memory windows (ibv_alloc_mw(3), ibv_bind_mw(3), Documentation/mr.rst).
 *
 * SV_IOC_ALLOC_MW makes a window of pd: a key in the MR key space (rkey,
 * never valid as an lkey) with no memory until an SV_WR_BIND_MW on a QP
 * of its PD binds it to a range of an MR of that PD. type is
 * SV_MW_TYPE_1 (bound and unbound by ibv_bind_mw(), never invalidated)
 * or SV_MW_TYPE_2 (type 2B: bound when free, remote accesses only through
 * the QP that bound it, freed by LOCAL_INV or SEND_WITH_INV); anything
 * else EINVAL. It counts as an MR against max_mr.
 */
#define SV_MW_TYPE_1		1	/* IBV_MW_TYPE_1 */
#define SV_MW_TYPE_2		2	/* IBV_MW_TYPE_2 */

struct sv_alloc_mw {
	__u32 size;		/* in */
	__u32 pd_handle;	/* in */
	__u32 type;		/* in: SV_MW_TYPE_* */
	__u32 mw_handle;	/* out */
	__u32 rkey;		/* out */
	__u32 reserved;		/* must be zero */
};

#define SV_ALLOC_MW_SIZE_VER0	24
#define SV_IOC_ALLOC_MW _IOWR(SV_IOC_MAGIC, SV_NR_ALLOC_MW, struct sv_alloc_mw)

/* SV_IOC_DEALLOC_MW: unbinds it; accesses in flight finish first. */
struct sv_dealloc_mw {
	__u32 size;		/* in */
	__u32 mw_handle;	/* in */
};

#define SV_DEALLOC_MW_SIZE_VER0	8
#define SV_IOC_DEALLOC_MW _IOWR(SV_IOC_MAGIC, SV_NR_DEALLOC_MW, \
				struct sv_dealloc_mw)

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

/*
 * CQE, 64 bytes: everything struct ibv_wc and ibv_cq_ex's read_* need.
 *
 * Stamps (only if the CQ asked for them in wc_flags; 0 otherwise), taken
 * when the completion is generated (a steered frame: when it reached the
 * device):
 *   timestamp  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP: the device clock
 *              (SV_DEVICE_CLOCK, ns; see the device section).
 *   wallclock  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK: ns of
 *              CLOCK_REALTIME, in struct sv_cqe_ext after the CQE, on a
 *              CQ created with SV_CQ_FLAG_CQE_128. A CQ without that flag
 *              has one stamp per CQE (as the first version of this ABI):
 *              timestamp is the device clock if the CQ asked for
 *              COMPLETION_TIMESTAMP, else the wall clock if it asked for
 *              WALLCLOCK.
 */
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
	union {
		struct {
			__u16 pkey_index;
			__u16 slid;
		};
		__u32 tm_priv;	/* IBV_WC_TM_MATCH: the TMH's app_ctx */
	};
	__u8 sl;
	__u8 dlid_path_bits;
	__u16 cvlan;		/* RAW_PACKET receive: the stripped VLAN TCI */
	union {
		struct {
			__u32 flow_tag;
			__u32 reserved;
		};
		__u64 tm_tag;	/* IBV_WC_TM_MATCH: the TMH's tag */
	};
	__u64 timestamp;	/* the device clock (see above) */
};

#define SV_CQE_SIZE		64

/*
 * With SV_CQ_FLAG_CQE_128 each ring entry is 128 bytes: a struct sv_cqe,
 * then this. The ring header's cqe_size says which (SV_CQE_SIZE or
 * SV_CQE_128_SIZE).
 */
struct sv_cqe_ext {
	__u64 wallclock;	/* ns, CLOCK_REALTIME (see above) */
	__u64 reserved[7];
};

#define SV_CQE_128_SIZE		128

/* Ring header at offset 0 of the mapping; each index in its cache line. */
struct sv_cq_ring {
	__u32 prod;		/* kernel writes (release) */
	__u32 pad0[15];
	__u32 cons;		/* library writes (release) */
	__u32 pad1[15];
	__u32 arm;		/* library sets bits, kernel clears them */
	__u32 flags;		/* SV_CQ_RING_* (kernel writes) */
	__u32 entries;		/* constant: power of two */
	__u32 cqe_size;		/* constant: SV_CQE_SIZE or SV_CQE_128_SIZE */
};

#define SV_CQ_ARM_NEXT		0x1U
#define SV_CQ_ARM_SOLICITED	0x2U
#define SV_CQ_ARM_MASK		(SV_CQ_ARM_NEXT | SV_CQ_ARM_SOLICITED)

#define SV_CQ_RING_OVERFLOW	0x1U

/* max_cqe and SV_NUM_COMP_VECTORS are device limits (above). */

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
 * COMPLETION_TIMESTAMP_WALLCLOCK): the CQE carries them all (TM_INFO,
 * bit 10, in tm_tag and tm_priv); bits past 11 are EINVAL.
 */
#define SV_CQ_WC_FLAGS_KNOWN		0xfffULL
#define SV_CQ_WC_FLAGS_SUPPORTED	0xfffULL
#define SV_CQ_WC_TS_DEVICE		0x80ULL		/* COMPLETION_TIMESTAMP */
#define SV_CQ_WC_TS_WALLCLOCK		0x800ULL	/* ..._WALLCLOCK */
#define SV_CQ_WC_TIMESTAMPS		(SV_CQ_WC_TS_DEVICE | SV_CQ_WC_TS_WALLCLOCK)

/* IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN: drop CQEs on overrun, no CQ error. */
#define SV_CQ_FLAG_IGNORE_OVERRUN	0x1U
/* 128-byte ring entries: struct sv_cqe and struct sv_cqe_ext (wallclock). */
#define SV_CQ_FLAG_CQE_128		0x2U

#define SV_CREATE_CQ_SIZE_VER0	64
#define SV_IOC_CREATE_CQ _IOWR(SV_IOC_MAGIC, SV_NR_CREATE_CQ, \
	struct sv_create_cq)

/*
 * SV_IOC_RESIZE_CQ: move the CQ to a new ring of at least cqe entries
 * (1..the device's max_cqe; fewer than the CQEs not yet consumed: EINVAL). The
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

/*
 * SV_IOC_MODIFY_CQ (ibv_modify_cq(3)): attr_mask SV_CQ_MODERATE sets the
 * CQ's event moderation. An armed CQ then raises its completion event
 * once cq_count completions that satisfy the arm have arrived, or
 * cq_period microseconds after the first of them, whichever comes first;
 * cq_count 0 counts nothing (the period alone), cq_period 0 times
 * nothing (the count alone); cq_count 0 or 1 with cq_period 0 is an
 * event per arm at the first completion (the default). cq_count at most
 * SV_MAX_CQ_MOD_COUNT, cq_period at most SV_MAX_CQ_MOD_PERIOD; beyond, an
 * attr_mask of 0 or with other bits, or a nonzero reserved: EINVAL.
 * Completions waiting for an event when it is changed get theirs at once.
 */
#define SV_CQ_MODERATE		0x1U	/* IBV_CQ_ATTR_MODERATE */
#define SV_MAX_CQ_MOD_COUNT	65535
#define SV_MAX_CQ_MOD_PERIOD	4095	/* microseconds */

struct sv_modify_cq {
	__u32 size;
	__u32 handle;		/* in */
	__u32 attr_mask;	/* in: SV_CQ_MODERATE */
	__u16 cq_count;		/* in */
	__u16 cq_period;	/* in: microseconds */
	__u64 reserved;		/* must be zero */
};

#define SV_MODIFY_CQ_SIZE_VER0	24
#define SV_IOC_MODIFY_CQ _IOWR(SV_IOC_MAGIC, SV_NR_MODIFY_CQ, \
	struct sv_modify_cq)

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

/*
 * QP, SRQ, AH and multicast (0x30-0x57).
 *
 * Constants have the values of <infiniband/verbs.h> (IBV_QPT_*, IBV_QPS_*,
 * IBV_QP_* attribute mask bits, IBV_MTU_*, IBV_SRQ_*): the library passes
 * them through unchanged.
 */
enum sv_qp_nr {
	SV_NR_CREATE_QP = 0x30,
	SV_NR_MODIFY_QP = 0x31,
	SV_NR_QUERY_QP = 0x32,
	SV_NR_DESTROY_QP = 0x33,
	SV_NR_RESET_DCI_STREAM = 0x34,
	SV_NR_QP_RATE_LIMIT = 0x35,
	SV_NR_OPEN_QP = 0x36,
	SV_NR_CREATE_SRQ = 0x40,
	SV_NR_MODIFY_SRQ = 0x41,
	SV_NR_QUERY_SRQ = 0x42,
	SV_NR_DESTROY_SRQ = 0x43,
	SV_NR_POST_SRQ_OPS = 0x44,
	SV_NR_CREATE_AH = 0x48,
	SV_NR_DESTROY_AH = 0x49,
	SV_NR_ATTACH_MCAST = 0x50,
	SV_NR_DETACH_MCAST = 0x51,
};

/*
 * The QP/SRQ/AH/multicast limits are the SV_MAX_* numbers above; these are
 * the port's facts the QP attributes are checked against.
 */
#define SV_PORT_NUM		1	/* the only port */
#define SV_PORT_MAX_MTU		SV_MTU_4096
#define SV_QPN_MASK		0xffffff	/* QP numbers are 24 bits */
#define SV_PSN_MASK		0xffffff	/* PSNs are 24 bits */
/* Q_Keys with bit 31 set are controlled: setting one needs CAP_NET_RAW. */
#define SV_QKEY_CONTROLLED	0x80000000U

enum sv_qp_type {		/* enum ibv_qp_type */
	SV_QPT_RC = 2,
	SV_QPT_UC = 3,
	SV_QPT_UD = 4,
	SV_QPT_RAW_PACKET = 8,
	SV_QPT_XRC_SEND = 9,
	SV_QPT_XRC_RECV = 10,
	SV_QPT_DRIVER = 0xff,
	/*
	 * softverbs' own: mlx5's Dynamically Connected QPs, which verbs
	 * knows only as IBV_QPT_DRIVER (the library reports that type).
	 * A DCI sends to any DCT named in each WQE (its AH, DCT number and
	 * access key); a DCT receives from any DCI that knows its key.
	 */
	SV_QPT_DCI = 0x80,
	SV_QPT_DCT = 0x81,
};

/*
 * DCI streams (mlx5dv_dci_streams): up to 2^SV_MAX_DCI_LOG_STREAMS
 * stream channels, up to 2^SV_MAX_DCI_LOG_ERRORED of them in error before
 * the DCI itself moves to ERR.
 */
#define SV_MAX_DCI_LOG_STREAMS	4
#define SV_MAX_DCI_LOG_ERRORED	4

enum sv_qp_state {		/* enum ibv_qp_state */
	SV_QPS_RESET,
	SV_QPS_INIT,
	SV_QPS_RTR,
	SV_QPS_RTS,
	SV_QPS_SQD,
	SV_QPS_SQE,
	SV_QPS_ERR,
};

enum sv_qp_attr_mask {		/* enum ibv_qp_attr_mask */
	SV_QP_STATE = 1 << 0,
	SV_QP_CUR_STATE = 1 << 1,
	SV_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	SV_QP_ACCESS_FLAGS = 1 << 3,
	SV_QP_PKEY_INDEX = 1 << 4,
	SV_QP_PORT = 1 << 5,
	SV_QP_QKEY = 1 << 6,
	SV_QP_AV = 1 << 7,
	SV_QP_PATH_MTU = 1 << 8,
	SV_QP_TIMEOUT = 1 << 9,
	SV_QP_RETRY_CNT = 1 << 10,
	SV_QP_RNR_RETRY = 1 << 11,
	SV_QP_RQ_PSN = 1 << 12,
	SV_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	SV_QP_ALT_PATH = 1 << 14,
	SV_QP_MIN_RNR_TIMER = 1 << 15,
	SV_QP_SQ_PSN = 1 << 16,
	SV_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	SV_QP_PATH_MIG_STATE = 1 << 18,
	SV_QP_CAP = 1 << 19,
	SV_QP_DEST_QPN = 1 << 20,
	SV_QP_RATE_LIMIT = 1 << 25,
};

/*
 * QP access flags a QP accepts: its rights (IBV_ACCESS_LOCAL_WRITE ...
 * REMOTE_ATOMIC, FLUSH_GLOBAL, FLUSH_PERSISTENT), and the bits only an
 * MR has (MW_BIND, ZERO_BASED, ON_DEMAND, HUGETLB, the optional range),
 * which the kernel's uverbs takes in a QP's too: kept, granting nothing.
 */
#define SV_QP_ACCESS_MASK	0x3ff003ff

/* struct ibv_ah_attr, with its struct ibv_global_route flattened. */
struct sv_ah_attr {
	__u8 dgid[16];
	__u32 flow_label;	/* 20 bits */
	__u8 sgid_index;
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 sl;		/* 0..15 */
	__u16 dlid;		/* ignored: RoCE has no LIDs */
	__u8 src_path_bits;
	__u8 static_rate;
	__u8 is_global;		/* must be 1: RoCE addresses need a GRH */
	__u8 port_num;		/* must be SV_PORT_NUM */
	__u8 reserved[2];	/* must be zero */
};

/* struct ibv_qp_cap */
struct sv_qp_cap {
	__u32 max_send_wr;
	__u32 max_recv_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline_data;
};

/* struct ibv_qp_attr without its cap (QUERY_QP returns that separately). */
struct sv_qp_attr {
	__u32 qp_state;
	__u32 cur_qp_state;
	__u32 path_mtu;
	__u32 path_mig_state;
	__u32 qkey;
	__u32 rq_psn;		/* 24 bits; higher bits are dropped */
	__u32 sq_psn;		/* 24 bits; higher bits are dropped */
	__u32 dest_qp_num;	/* 24 bits */
	__u32 qp_access_flags;
	__u32 rate_limit;
	__u16 pkey_index;
	__u16 alt_pkey_index;
	__u8 en_sqd_async_notify;
	__u8 sq_draining;	/* out only */
	__u8 max_rd_atomic;
	__u8 max_dest_rd_atomic;
	__u8 min_rnr_timer;
	__u8 port_num;
	__u8 timeout;
	__u8 retry_cnt;
	__u8 rnr_retry;
	__u8 alt_port_num;
	__u8 alt_timeout;
	__u8 reserved;		/* must be zero */
	struct sv_ah_attr ah_attr;
	struct sv_ah_attr alt_ah_attr;
};

/*
 * SV_CREATE_QP flags. SQ_SIG_ALL is ibv_qp_init_attr's sq_sig_all. The
 * others are the mlx5 direct-verbs create flags that change what a
 * RAW_PACKET QP (or an RSS QP: SV_IOC_CREATE_RSS_QP takes them too) does
 * with what it receives, as mlx5 programs them into the QP's TIR
 * (Documentation/mlx5dv.rst); on other QP types they are EINVAL, as on
 * mlx5:
 *
 *   TUNNEL_OFFLOADS (MLX5DV_QP_CREATE_TUNNEL_OFFLOADS): the checksum
 *	verdict of a VXLAN (UDP port 4789) or GRE frame, IBV_WC_IP_CSUM_OK,
 *	is about its inner IPv4 and TCP/UDP headers (and needs the outer
 *	ones right too); an RSS QP may hash on inner fields only with it.
 *   MLX5_TIR: the QP receives as an mlx5 TIR does: a frame a RAW_PACKET
 *	QP of the same file sends and the device loops back (to the
 *	device's own MAC, multicast, broadcast) reaches it only with
 *	TIR_SELF_LB_UC (unicast) or TIR_SELF_LB_MC (multicast and
 *	broadcast); frames other files send reach it as any QP. Without
 *	MLX5_TIR the SELF_LB bits are EINVAL.
 *
 * SHARED_RINGS (any QP type): the send and receive rings share one buffer
 * and one mapping, as mlx5 lays a QP's queues out: each ring's struct
 * sv_wq_ring in cache lines of its own at the start, then the send
 * slots, then the receive slots, so that a QP with small queues takes one
 * page. SV_IOC_MAP_WQ then reports the same offset and length for both
 * and where in the mapping each ring is (sq_ring, rq_ring), which needs
 * its SV_MAP_WQ_SIZE_VER1 layout (EINVAL with VER0). A QP without a
 * receive ring of its own (on an SRQ) has its send ring alone.
 */
#define SV_CREATE_QP_SQ_SIG_ALL		0x1
#define SV_CREATE_QP_TUNNEL_OFFLOADS	0x2
#define SV_CREATE_QP_MLX5_TIR		0x4
#define SV_CREATE_QP_TIR_SELF_LB_UC	0x8
#define SV_CREATE_QP_TIR_SELF_LB_MC	0x10
#define SV_CREATE_QP_SHARED_RINGS	0x20

/*
 * SV_IOC_QP_RATE_LIMIT (ibv_modify_qp_rate_limit(3)): pace an RTS QP's
 * sends (EINVAL in another state) to rate_limit kbit/s of message bytes,
 * SV_QP_RATE_LIMIT_MIN..SV_QP_RATE_LIMIT_MAX or 0 for no limit (EINVAL
 * otherwise), with bursts of up to max_burst_sz bytes (0: one 4 KiB MTU);
 * typical_pkt_sz is accepted and not needed. A token bucket in the engine:
 * a WR waits until the QP is no longer in debt, then its bytes are taken.
 */
#define SV_QP_RATE_LIMIT_MIN	8		/* kbit/s */
#define SV_QP_RATE_LIMIT_MAX	100000000	/* kbit/s: 100 Gbit/s */

struct sv_qp_rate_limit {
	__u32 size;
	__u32 handle;		/* in: the QP */
	__u32 rate_limit;	/* in: kbit/s */
	__u32 max_burst_sz;	/* in: bytes */
	__u16 typical_pkt_sz;	/* in: bytes */
	__u16 reserved;		/* must be zero */
	__u32 reserved2;	/* must be zero */
};

#define SV_QP_RATE_LIMIT_SIZE_VER0	24
#define SV_IOC_QP_RATE_LIMIT _IOWR(SV_IOC_MAGIC, SV_NR_QP_RATE_LIMIT, \
				   struct sv_qp_rate_limit)

/*
 * SV_IOC_CREATE_QP: a RC, UC, UD, RAW_PACKET, XRC or DC QP in RESET.
 * DRIVER QPs are EOPNOTSUPP. A RAW_PACKET QP needs a device bound to a
 * netdev (EOPNOTSUPP otherwise) and CAP_NET_RAW in the device's network
 * namespace (EPERM). Both CQs are required (they may be the same
 * CQ); srq_handle 0 means no SRQ. With an SRQ, max_recv_wr and
 * max_recv_sge are ignored and returned as 0. create_flags are
 * IBV_QP_CREATE_* bits: BLOCK_SELF_MCAST_LB on RAW_PACKET and UD QPs (a
 * UD QP's multicast sends do not come back to it), SCATTER_FCS and
 * CVLAN_STRIPPING on RAW_PACKET QPs only (EOPNOTSUPP on others, as mlx5);
 * PCI_WRITE_END_PADDING on every QP (accepted, no effect);
 * IBV_QP_CREATE_SOURCE_QPN on UD QPs only, with CAP_NET_RAW in the
 * device's network namespace (EPERM) and source_qpn a QPN from 2 to
 * 0xfffffe (EINVAL); the others EOPNOTSUPP (unknown bits EINVAL). A
 * SOURCE_QPN QP sends as source_qpn and receives only what flows steer
 * to it; its modify takes the state alone. cap is the
 * request on input and the QP's actual capacities, each at least the
 * request, on output. max_tso_header (ibv_qp_init_attr_ex's, 0 for none)
 * lets a RAW_PACKET QP post SV_WR_TSO with headers of up to that many
 * bytes; on another QP type, or above SV_MAX_TSO_HEADER, it is EINVAL.
 *
 * DC (SV_QPT_DCI, SV_QPT_DCT), as mlx5 makes them: a DCI has no receive
 * queue (max_recv_wr and max_recv_sge must be 0, EINVAL) and may have
 * dci_log_streams stream channels (SV_IOC_RESET_DCI_STREAM); a DCT needs
 * an SRQ (EINVAL without), has no send queue (its cap comes back 0) and
 * takes dc_access_key, which every DCI must present. A DCI goes RESET ->
 * INIT (pkey_index, port) -> RTR (path_mtu; pkey_index, AV optional) ->
 * RTS (timeout, retry_cnt, rnr_retry, max_rd_atomic, sq_psn;
 * min_rnr_timer optional), to ERR and RESET from anywhere; a DCT only
 * RESET -> INIT (access flags, pkey_index, port) -> RTR (min_rnr_timer,
 * AV, path_mtu), exactly those: as mlx5_ib.
 *
 * XRC (ibv_create_qp_ex(3)): an XRC_SEND (INI) QP has a PD and a send CQ
 * and no receive queue (recv_cq_handle and srq_handle must be 0; the
 * receive caps come back 0); each of its work requests names, in
 * remote_qpn, the SRQ number of an XRC SRQ at the other end. An
 * XRC_RECV (TGT) QP has only xrcd_handle: no PD, CQs, SRQ or queues
 * (every other handle and cap must be 0, and come back 0). It belongs to
 * the XRC domain, not to the file: SV_IOC_OPEN_QP gives other files
 * handles on it, and it lives until the last handle is destroyed. A
 * message from the INI QP it is connected to lands in the XRC SRQ the
 * request names, which must be of the TGT QP's domain (else the
 * requester sees IBV_WC_REM_INV_REQ_ERR and the TGT QP goes to ERR); its
 * completion goes to that SRQ's CQ with qp_num the TGT QP's number, and
 * RDMA and atomics are checked against the SRQ's PD and the TGT QP's
 * access flags. State transitions as the IB spec's XRC tables (uverbs).
 */
struct sv_create_qp {
	__u32 size;
	__u32 pd_handle;	/* in */
	__u32 send_cq_handle;	/* in */
	__u32 recv_cq_handle;	/* in */
	__u32 srq_handle;	/* in: 0 for none */
	__u32 qp_type;		/* in: SV_QPT_* */
	__u32 flags;		/* in: SV_CREATE_QP_* */
	__u32 create_flags;	/* in: IBV_QP_CREATE_* (see above) */
	struct sv_qp_cap cap;	/* in/out */
	__u32 handle;		/* out */
	__u32 qpn;		/* out: unique on the device, >= 2 */
	__u32 xrcd_handle;	/* in: XRC_RECV only, else 0 */
	__u64 user_handle;	/* in: returned in this QP's async events */
	__u32 source_qpn;	/* in: with IBV_QP_CREATE_SOURCE_QPN, else 0 */
	__u32 max_tso_header;	/* in: RAW_PACKET only, <= SV_MAX_TSO_HEADER */
	__u64 dc_access_key;	/* in: DCT only, else 0 */
	__u8 dci_log_streams;	/* in: DCI only, <= SV_MAX_DCI_LOG_STREAMS */
	__u8 dci_log_errored;	/* in: DCI only, <= SV_MAX_DCI_LOG_ERRORED */
	__u8 reserved2[6];	/* must be zero */
};

#define SV_CREATE_QP_SIZE_VER0	72
#define SV_IOC_CREATE_QP _IOWR(SV_IOC_MAGIC, SV_NR_CREATE_QP, struct sv_create_qp)

/*
 * SV_IOC_MODIFY_QP: ibv_modify_qp(). attr_mask selects the attributes of
 * attr that are read; the transition (current state -> attr.qp_state, or
 * the current state without SV_QP_STATE) and the QP type decide which
 * attributes are required and which are allowed, as in the IB spec.
 */
struct sv_modify_qp {
	__u32 size;
	__u32 handle;		/* in */
	__u32 attr_mask;	/* in: SV_QP_* */
	__u32 reserved;		/* must be zero */
	struct sv_qp_attr attr;	/* in */
};

#define SV_MODIFY_QP_SIZE_VER0	136
#define SV_IOC_MODIFY_QP _IOWR(SV_IOC_MAGIC, SV_NR_MODIFY_QP, struct sv_modify_qp)

/* SV_IOC_QUERY_QP: every attribute, whatever attr_mask asks for. */
struct sv_query_qp {
	__u32 size;
	__u32 handle;		/* in */
	__u32 attr_mask;	/* in: ignored, all are returned */
	__u32 reserved;		/* must be zero */
	struct sv_qp_attr attr;	/* out */
	struct sv_qp_cap cap;	/* out */
	__u32 qp_type;		/* out */
	__u32 flags;		/* out: SV_CREATE_QP_* */
	__u32 qpn;		/* out */
	__u32 reserved2;
};

#define SV_QUERY_QP_SIZE_VER0	172
#define SV_IOC_QUERY_QP _IOWR(SV_IOC_MAGIC, SV_NR_QUERY_QP, struct sv_query_qp)

/*
 * SV_IOC_DESTROY_QP: EBUSY while the QP is attached to a multicast group.
 * events_reported: the QP's async events userspace has read; the others
 * are dropped.
 */
struct sv_destroy_qp {
	__u32 size;
	__u32 handle;		/* in */
	__u32 events_reported;	/* out */
	__u32 reserved;		/* must be zero */
};

#define SV_DESTROY_QP_SIZE_VER0	16
#define SV_IOC_DESTROY_QP _IOWR(SV_IOC_MAGIC, SV_NR_DESTROY_QP, struct sv_destroy_qp)

/*
 * SV_IOC_RESET_DCI_STREAM: mlx5dv_dci_stream_id_reset(). A DCI created
 * with dci_log_streams takes its WQEs' dc_stream modulo its number of
 * stream channels; an error on one moves only that stream to error (its
 * later WQEs complete with IBV_WC_WR_FLUSH_ERR) until this resets it, and
 * the DCI itself to ERR once 2^dci_log_errored streams are in error.
 * The stream is taken modulo the channels too. EINVAL on any other QP,
 * for a DCI without streams, or a stream not in error.
 */
struct sv_reset_dci_stream {
	__u32 size;
	__u32 handle;		/* in: the DCI */
	__u32 stream;		/* in */
	__u32 reserved;		/* must be zero */
};

#define SV_RESET_DCI_STREAM_SIZE_VER0	16
#define SV_IOC_RESET_DCI_STREAM _IOWR(SV_IOC_MAGIC, SV_NR_RESET_DCI_STREAM, \
	struct sv_reset_dci_stream)

/*
 * SV_IOC_OPEN_QP (ibv_open_qp(3)): a handle in this file on the XRC TGT
 * QP qpn of the XRC domain xrcd_handle names (ENOENT if the domain has
 * none; qp_type must be SV_QPT_XRC_RECV, EINVAL otherwise). The handle
 * modifies, queries and destroys the QP like its creator's, and gets its
 * async events under user_handle.
 */
struct sv_open_qp {
	__u32 size;		/* in */
	__u32 xrcd_handle;	/* in */
	__u32 qpn;		/* in */
	__u32 qp_type;		/* in: SV_QPT_XRC_RECV */
	__u64 user_handle;	/* in: returned in the QP's async events */
	__u32 handle;		/* out */
	__u32 reserved;		/* must be zero */
};

#define SV_OPEN_QP_SIZE_VER0	32
#define SV_IOC_OPEN_QP _IOWR(SV_IOC_MAGIC, SV_NR_OPEN_QP, struct sv_open_qp)

enum sv_srq_attr_mask {		/* enum ibv_srq_attr_mask */
	SV_SRQ_MAX_WR = 1 << 0,
	SV_SRQ_LIMIT = 1 << 1,
};

/*
 * SV_IOC_CREATE_SRQ: a basic SRQ. max_wr (1..the device's max_srq_wr) and max_sge
 * (0..SV_MAX_SRQ_SGE) come back as the actual values, at least the
 * request. The SRQ starts unarmed (srq_limit 0). srqn is its number
 * (ibv_get_srq_num(), which mlx5 answers for every SRQ).
 */
struct sv_create_srq {
	__u32 size;
	__u32 pd_handle;	/* in */
	__u32 max_wr;		/* in/out */
	__u32 max_sge;		/* in/out */
	__u32 handle;		/* out */
	__u32 reserved;		/* must be zero */
	__u64 user_handle;	/* in: returned in this SRQ's async events */
	__u32 srqn;		/* out: unique on the device, >= 1 */
	__u32 reserved2;
	/* VER1 */
	__u32 srq_type;		/* in: SV_SRQT_* */
	__u32 xrcd_handle;	/* in: SV_SRQT_XRC only, else 0 */
	__u32 cq_handle;	/* in: SV_SRQT_XRC and SV_SRQT_TM, else 0 */
	__u32 reserved3;	/* must be zero */
	/* VER2: SV_SRQT_TM only (else 0) */
	__u32 max_num_tags;	/* in/out: 1..SV_TM_MAX_NUM_TAGS */
	__u32 max_ops;		/* in/out: 1..SV_TM_MAX_OPS */
};

/*
 * An XRC SRQ (ibv_create_srq_ex(3), IBV_SRQT_XRC) belongs to an XRC
 * domain as well as a PD, and has its own CQ: every XRC TGT QP of the
 * domain delivers into it the messages that name its srqn.
 *
 * A tag-matching SRQ (IBV_SRQT_TM, needs SV_CREATE_SRQ_SIZE_VER2) has
 * its own CQ too, which takes the receive completions of the RC QPs that
 * use it (only RC QPs may: EINVAL for others) and the completions of
 * SV_IOC_POST_SRQ_OPS. It keeps a list of up to max_num_tags tagged
 * buffers; a SEND whose payload starts with a struct ibv_tmh of opcode
 * EAGER or RNDV lands in the first listed buffer whose tag it matches,
 * without its headers (RNDV: the device reads the data the RVH names,
 * then sends the sender a FIN), and in the SRQ's own WQEs, whole, when
 * none matches. See Documentation/qp.rst, "Tag matching".
 */
enum sv_srq_type {		/* enum ibv_srq_type */
	SV_SRQT_BASIC = 0,
	SV_SRQT_XRC = 1,
	SV_SRQT_TM = 2,
};

#define SV_CREATE_SRQ_SIZE_VER0	32
#define SV_CREATE_SRQ_SIZE_VER1	48
#define SV_CREATE_SRQ_SIZE_VER2	56

/* The device's tag-matching capabilities (struct ibv_tm_caps) */
#define SV_TM_MAX_NUM_TAGS	1023	/* tagged buffers per TM SRQ */
#define SV_TM_MAX_OPS		1024	/* ops per SV_IOC_POST_SRQ_OPS */
#define SV_TM_MAX_SGE		4	/* SGEs per tagged buffer */
#define SV_TM_MAX_RNDV_HDR	64	/* a rendezvous request's bytes */
#define SV_TM_CAP_RC		0x1	/* IBV_TM_CAP_RC */
#define SV_IOC_CREATE_SRQ _IOWR(SV_IOC_MAGIC, SV_NR_CREATE_SRQ, struct sv_create_srq)

/*
 * SV_IOC_MODIFY_SRQ: SV_SRQ_MAX_WR resizes the SRQ (ibv_modify_srq(3),
 * IBV_DEVICE_SRQ_RESIZE) to at least max_wr WQEs (1..max_srq_wr, at least
 * the WQEs posted and not yet consumed, at least the armed limit; else
 * EINVAL; needs SV_MODIFY_SRQ_SIZE_VER1): those WQEs move to the start of
 * a new ring, mapped at the returned mmap_offset, its actual size in
 * max_wr. As with SV_IOC_RESIZE_CQ, the old offset can no longer be
 * mapped and the library must not post while this runs. SV_SRQ_LIMIT
 * then arms the limit (srq_limit <= max_wr, else EINVAL).
 */
struct sv_modify_srq {
	__u32 size;
	__u32 handle;		/* in */
	__u32 attr_mask;	/* in: SV_SRQ_* */
	__u32 max_wr;		/* in; out with SV_SRQ_MAX_WR */
	__u32 srq_limit;	/* in */
	__u32 reserved;		/* must be zero */
	__u64 mmap_offset;	/* out with SV_SRQ_MAX_WR: the new ring */
	__u64 mmap_len;		/* out */
};

#define SV_MODIFY_SRQ_SIZE_VER0	24
#define SV_MODIFY_SRQ_SIZE_VER1	40
#define SV_IOC_MODIFY_SRQ _IOWR(SV_IOC_MAGIC, SV_NR_MODIFY_SRQ, struct sv_modify_srq)

struct sv_query_srq {
	__u32 size;
	__u32 handle;		/* in */
	__u32 max_wr;		/* out */
	__u32 max_sge;		/* out */
	__u32 srq_limit;	/* out */
	__u32 reserved;		/* must be zero */
};

#define SV_QUERY_SRQ_SIZE_VER0	24
#define SV_IOC_QUERY_SRQ _IOWR(SV_IOC_MAGIC, SV_NR_QUERY_SRQ, struct sv_query_srq)

/*
 * SV_IOC_DESTROY_SRQ: EBUSY while a QP uses the SRQ. events_reported as
 * for a QP.
 */
struct sv_destroy_srq {
	__u32 size;
	__u32 handle;		/* in */
	__u32 events_reported;	/* out */
	__u32 reserved;		/* must be zero */
};

#define SV_DESTROY_SRQ_SIZE_VER0	16
#define SV_IOC_DESTROY_SRQ _IOWR(SV_IOC_MAGIC, SV_NR_DESTROY_SRQ, struct sv_destroy_srq)

/* SV_IOC_CREATE_AH: an address handle for UD sends. */
struct sv_create_ah {
	__u32 size;
	__u32 pd_handle;	/* in */
	struct sv_ah_attr attr;	/* in */
	__u32 handle;		/* out */
	__u32 reserved;		/* must be zero */
};

#define SV_CREATE_AH_SIZE_VER0	48
#define SV_IOC_CREATE_AH _IOWR(SV_IOC_MAGIC, SV_NR_CREATE_AH, struct sv_create_ah)

struct sv_destroy_ah {
	__u32 size;
	__u32 handle;		/* in */
};

#define SV_DESTROY_AH_SIZE_VER0	8
#define SV_IOC_DESTROY_AH _IOWR(SV_IOC_MAGIC, SV_NR_DESTROY_AH, struct sv_destroy_ah)

/*
 * SV_IOC_ATTACH_MCAST / SV_IOC_DETACH_MCAST: a UD QP joins or leaves a
 * multicast group (gid: ff00::/8, or an IPv4-mapped 224.0.0.0/4 address).
 * lid is ignored (RoCE). Attaching a group the QP is already in succeeds
 * and changes nothing; detaching a group it is not in is EINVAL.
 */
struct sv_mcast {
	__u32 size;
	__u32 qp_handle;	/* in */
	__u8 gid[16];		/* in */
	__u16 lid;		/* in: ignored */
	__u16 reserved;		/* must be zero */
};

#define SV_MCAST_SIZE_VER0	28
#define SV_IOC_ATTACH_MCAST _IOWR(SV_IOC_MAGIC, SV_NR_ATTACH_MCAST, struct sv_mcast)
#define SV_IOC_DETACH_MCAST _IOWR(SV_IOC_MAGIC, SV_NR_DETACH_MCAST, struct sv_mcast)

/*
 * ---------------------------------------------------------------------
 * Data path: work queue rings and the doorbell (0x58-0x5f)
 * ---------------------------------------------------------------------
 *
 * Every QP has a send queue ring and (without an SRQ) a receive queue
 * ring; every SRQ has a receive queue ring. SV_IOC_MAP_WQ names their
 * mmap offsets and lengths; SV_IOC_MAP_DOORBELL names the file's doorbell
 * page. Mappings work as for CQ rings (MAP_SHARED, exact offset/length).
 *
 * A work queue ring starts with a struct sv_wq_ring header; wqe_offset
 * bytes into the mapping start `entries` (a power of two) slots of
 * wqe_size bytes: struct sv_send_wqe (SQ) or struct sv_recv_wqe (RQ,
 * SRQ), each followed by its SGEs (or, for an inline send, its data).
 *
 * The ordering contract, for every ring (the same as the CQ ring's with
 * the roles swapped):
 *   prod   written only by the library. It fills slot prod & (entries - 1)
 *          then stores prod + 1 with release semantics
 *          (__atomic_store_n(..., __ATOMIC_RELEASE)). The kernel loads
 *          prod with acquire semantics (smp_load_acquire) before it reads
 *          any WQE below it, and copies each WQE out of the ring once
 *          before looking at it. A prod the kernel cannot trust (more than
 *          `entries` ahead of cons) moves the QP to the error state.
 *   cons   written only by the kernel: it stores cons + n with release
 *          semantics once it no longer reads the n slots (their WQEs are
 *          complete, or copied out for good). The library loads it with
 *          acquire semantics to find free slots (prod - cons < entries).
 *   flags  written only by the kernel: SV_WQ_RING_ERR while the QP is in
 *          the error state (new WQEs are flushed: see the doorbell).
 *
 * The doorbell page is one struct sv_doorbell per open file. The kernel's
 * execution engine (a kthread of a pool shared by every file; each file is
 * served by one) polls the file's queues while there is work and for
 * idle_us microseconds after; before it sleeps it sets SV_DB_NEED_WAKEUP
 * in the flags of every file it serves, issues a full barrier (smp_mb) and
 * looks at every queue once more. It also sets the flag while it shares
 * its CPU (and may be off it), and clears it while it runs alone. After
 * storing prod the library issues a full barrier
 * (__atomic_thread_fence(__ATOMIC_SEQ_CST)) and loads flags: only
 * if SV_DB_NEED_WAKEUP is set does it call SV_IOC_DOORBELL. Either the
 * engine sees the new prod, or the library sees the flag: no lost wakeup.
 * Posting a receive rings the doorbell only if the ring says
 * SV_WQ_RING_ERR (the engine must flush it) and the engine sleeps.
 *
 * Hints (SV_MAP_DOORBELL_HINTS): a NIC's doorbell names its queue, and
 * so may a post here, so that the engine's passes cost what was posted
 * to, not what exists. Each QP of the file has a slot below SV_DB_SLOTS
 * (sv_map_wq's db_slot; SV_DB_NO_SLOT past them). The doorbell mapping
 * holds a bitmap of SV_DB_SLOTS bits at SV_DB_HINT_OFFSET (bit s % 64 of
 * word s / 64), and struct sv_doorbell a summary of it: bit i of
 * hint_sum[j] stands for the bitmap's word j * 64 + i. After storing a
 * send queue's prod (or a receive queue's, when its ring says
 * SV_WQ_RING_ERR) the library issues a full barrier, sets the QP's bit
 * (an atomic OR, skipped if the bit is already set), then the summary's
 * bit (the same), issues a full barrier and looks at flags as above. The
 * engine takes the summary words (atomic exchange with 0), then the
 * words they name, and runs the QPs whose bits it took. It runs a QP
 * only while it has work, once named, or once the kernel itself gave it
 * some (frames, a state change, a back-off's end): a QP that is posted
 * to without its bit may wait for ever. QPs without a slot, and every
 * QP of a file that did not ask for hints, are run in every pass.
 */
enum sv_dp_ioctl_nr {
	SV_NR_MAP_WQ = 0x58,
	SV_NR_MAP_DOORBELL = 0x59,
	SV_NR_DOORBELL = 0x5a,
	SV_NR_MOVE_RING = 0x5b,
};

struct sv_wq_ring {
	__u32 prod;		/* library writes (release) */
	__u32 pad0[15];
	__u32 cons;		/* kernel writes (release) */
	__u32 pad1[15];
	__u32 flags;		/* SV_WQ_RING_* (kernel writes) */
	__u32 entries;		/* constant: power of two */
	__u32 wqe_size;		/* constant: bytes per slot */
	__u32 wqe_offset;	/* constant: first slot's offset from here */
};

#define SV_WQ_RING_ERR		0x1U

struct sv_sge {
	__u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * SV_IOC_POST_SRQ_OPS: ibv_post_srq_ops(3) on a TM SRQ, count ops (1..
 * the SRQ's max_ops) carried out in order, each at once. ADD lists a
 * tagged buffer (num_sge 0..SV_TM_MAX_SGE, else EINVAL; a full list is
 * ENOMEM) and returns its handle; DEL takes one off (a handle that was
 * never one of this SRQ's is EINVAL; one already consumed or deleted
 * completes with IBV_WC_TM_ERR, signaled or not); SYNC does neither.
 * With SV_OPS_TM_SYNC an op reports unexpected_cnt, the unexpected
 * messages software has handled. A buffer listed while that count is
 * behind the device's is never matched (it may belong to a message
 * software has not seen yet); completions say so with
 * IBV_WC_TM_SYNC_REQ. SV_OPS_SIGNALED ops complete on the SRQ's CQ with
 * IBV_WC_TM_ADD, _DEL or _SYNC. An op that fails stops the list: the
 * ioctl still succeeds, done says how many ops were carried out and
 * error the failed one's errno. Handles come back in each ADD op's
 * handle. EINVAL for an SRQ that is not a TM SRQ.
 */
enum sv_srq_op_code {		/* enum ibv_ops_wr_opcode */
	SV_TM_OP_ADD = 0,
	SV_TM_OP_DEL = 1,
	SV_TM_OP_SYNC = 2,
};

#define SV_OPS_SIGNALED		0x1	/* IBV_OPS_SIGNALED */
#define SV_OPS_TM_SYNC		0x2	/* IBV_OPS_TM_SYNC */

struct sv_srq_op {
	__u64 wr_id;
	__u64 recv_wr_id;	/* ADD: the buffer's receive completions' */
	__u64 tag;		/* ADD: matches a message's if equal ... */
	__u64 mask;		/* ... in the bits of mask */
	__u32 opcode;		/* SV_TM_OP_* */
	__u32 flags;		/* SV_OPS_* */
	__u32 unexpected_cnt;	/* with SV_OPS_TM_SYNC */
	__u32 handle;		/* DEL: in; ADD: out */
	__u32 num_sge;		/* ADD */
	__u32 reserved;		/* must be zero */
	struct sv_sge sge[SV_TM_MAX_SGE];
};

struct sv_post_srq_ops {
	__u32 size;
	__u32 handle;		/* in: the TM SRQ */
	__u64 ops;		/* in: user address of count struct sv_srq_op */
	__u32 count;		/* in: 1..the SRQ's max_ops, else EINVAL */
	__u32 done;		/* out: how many were carried out */
	__u32 error;		/* out: 0, or the errno of op done */
	__u32 reserved;		/* must be zero */
};

#define SV_POST_SRQ_OPS_SIZE_VER0	32
#define SV_IOC_POST_SRQ_OPS _IOWR(SV_IOC_MAGIC, SV_NR_POST_SRQ_OPS, struct sv_post_srq_ops)

/* Send opcodes: enum ibv_wr_opcode. */
enum sv_wr_opcode {
	SV_WR_RDMA_WRITE = 0,
	SV_WR_RDMA_WRITE_WITH_IMM = 1,
	SV_WR_SEND = 2,
	SV_WR_SEND_WITH_IMM = 3,
	SV_WR_RDMA_READ = 4,
	SV_WR_ATOMIC_CMP_AND_SWP = 5,
	SV_WR_ATOMIC_FETCH_AND_ADD = 6,
	SV_WR_LOCAL_INV = 7,	/* imm_data: the key to free */
	SV_WR_BIND_MW = 8,	/* RC, UC: see SV_WR_BIND_MW below */
	SV_WR_SEND_WITH_INV = 9,
	SV_WR_TSO = 10,		/* RAW_PACKET: see struct sv_send_tso */
	SV_WR_UMR = 11,		/* RC: see struct sv_send_umr */
	SV_WR_FLUSH = 14,	/* RC: see SV_WR_FLUSH below */
	SV_WR_ATOMIC_WRITE = 15,	/* RC: compare_add's 8 bytes */
};

/* Send flags: enum ibv_send_flags. */
#define SV_SEND_FENCE		0x1U
#define SV_SEND_SIGNALED	0x2U
#define SV_SEND_SOLICITED	0x4U
#define SV_SEND_INLINE		0x8U
#define SV_SEND_IP_CSUM		0x10U	/* RAW_PACKET: fill in IP/TCP/UDP sums */

/*
 * A send WQE, followed by num_sge struct sv_sge, or by inline_len bytes
 * of data with SV_SEND_INLINE.
 */
struct sv_send_wqe {
	__u64 wr_id;
	__u32 opcode;		/* SV_WR_* */
	__u32 send_flags;	/* SV_SEND_* */
	__u32 num_sge;
	__u32 inline_len;
	__u32 imm_data;		/* big endian; SEND_WITH_INV, LOCAL_INV: key */
	__u32 rkey;		/* RDMA and atomics; UMR: the indirect key */
	__u64 remote_addr;	/* RDMA and atomics */
	__u64 compare_add;	/* atomics */
	__u64 swap;		/* ATOMIC_CMP_AND_SWP */
	__u32 ah_handle;	/* UD, DCI */
	__u32 remote_qpn;	/* UD; DCI: the DCT's; XRC_SEND: the SRQ's number */
	__u32 remote_qkey;	/* UD; DCI: the DC access key's low 32 bits */
	__u32 dc_key_hi;	/* DCI: the DC access key's high 32 bits */
	__u16 dc_stream;	/* DCI: the stream channel (mlx5dv) */
	__u16 reserved;
	__u32 reserved2;
};

/*
 * SV_WR_FLUSH (ibv_wr_flush, IBA 1.5; RC, DCI and XRC INI QPs): makes
 * what earlier writes placed in the responder's memory reach the
 * placement types of swap's low byte (SV_FLUSH_GLOBAL, _PERSISTENT; at
 * least one, else the WR is LOC_QP_OP_ERR), for the range [remote_addr,
 * remote_addr + compare_add) of rkey's MR (SV_FLUSH_RANGE) or all of it
 * (SV_FLUSH_MR; remote_addr and compare_add unused), the selectivity in
 * swap's second byte. The responder's QP and the MR must grant the
 * matching SV_ACCESS_FLUSH_* (else REM_ACCESS_ERR). num_sge and
 * inline_len must be 0. It completes with IBV_WC_FLUSH.
 */
#define SV_FLUSH_GLOBAL		0x1	/* enum ibv_placement_type */
#define SV_FLUSH_PERSISTENT	0x2
#define SV_FLUSH_RANGE		0	/* enum ibv_selectivity_level */
#define SV_FLUSH_MR		1

/*
 * SV_WR_ATOMIC_WRITE (ibv_wr_atomic_write, IBA 1.5) writes the 8 bytes of
 * compare_add at remote_addr (8-byte aligned) through rkey in one store,
 * as one atomic access against the device's other atomics; it needs the
 * responder's IBV_ACCESS_REMOTE_WRITE (QP and key), as rxe. num_sge and
 * inline_len must be 0.
 *
 * SV_WR_BIND_MW binds the window whose key is rkey to [remote_addr,
 * remote_addr + compare_add) of the MR whose lkey is the low 32 bits of
 * swap, with the rights in remote_qkey (SV_ACCESS_REMOTE_READ, _WRITE,
 * _ATOMIC, and _ZERO_BASED for a type 2 window); the window's key is
 * imm_data from then on (same index: only the low 8 bits may differ).
 * A type 1 window is unbound by a length of 0. num_sge and inline_len
 * must be 0. A bind that breaks a rule of ibv_bind_mw(3) or IBA C10-72
 * to C10-75 completes with IBV_WC_MW_BIND_ERR.
 *
 * SV_WR_LOCAL_INV frees the type 2 window or indirect key whose key is
 * imm_data (of the QP's PD); SV_WR_SEND_WITH_INV frees, at the
 * responder, the type 2 window of the responder's PD whose key is
 * imm_data, once the message is placed.
 */

/*
 * SV_WR_TSO has a WQE layout of its own: the struct sv_send_wqe is
 * followed by a struct sv_send_tso, then the hdr_sz bytes of the frames'
 * header (Ethernet, VLAN tags, IPv4 or IPv6, TCP) padded to 16 bytes,
 * then num_sge struct sv_sge: the TCP payload, cut into mss-byte segments
 * that each get a copy of the header (Documentation/steering.rst, "TX
 * offloads"). The SGEs start SV_TSO_SGE_OFFSET(hdr_sz) bytes after the
 * struct sv_send_wqe. A QP created with max_tso_header has slots that
 * hold max_tso_header bytes of header and max_send_sge SGEs. The WQE's
 * other fields mean what they mean for a send; inline data is not
 * allowed.
 */
struct sv_send_tso {
	__u16 hdr_sz;		/* 1 .. the QP's max_tso_header */
	__u16 mss;		/* TCP payload bytes per segment, > 0 */
	__u32 reserved;		/* must be zero */
};

#define SV_MAX_TSO_HEADER	512		/* bytes of a TSO header */
#define SV_MAX_TSO		(256 * 1024)	/* payload bytes of a TSO WQE */
#define SV_TSO_SGE_OFFSET(hdr_sz) \
	(sizeof(struct sv_send_tso) + (((hdr_sz) + 15U) & ~15U))

/*
 * SV_WR_UMR (mlx5dv_wr_mr_interleaved, mlx5dv_wr_mr_list) lays out the
 * indirect key named by rkey: the struct sv_send_wqe is followed by a
 * struct sv_send_umr and num_ent struct sv_umr_ent (which must fit in
 * the QP's slot, and be at most the key's max_entries). The key's bytes
 * are repeat_count times, in order, bytes_count bytes of each entry;
 * repetition r of entry e starts at e.addr + r * (e.bytes_count +
 * e.bytes_skip) of the MR e.lkey. A list is repeat_count 1. access:
 * SV_ACCESS_LOCAL_WRITE, _REMOTE_WRITE, _REMOTE_READ, _REMOTE_ATOMIC.
 * The key's length is at most SV_MAX_MR_SIZE. num_sge and inline_len
 * must be zero. A UMR over a laid-out key replaces its layout. flags
 * (mlx5dv_wr_mkey_configure()): SV_UMR_KEEP_ACCESS keeps the key's rights
 * (access is ignored), SV_UMR_KEEP_LAYOUT its layout (num_ent must be 0):
 * a key freed by LOCAL_INV is usable again with the layout it had.
 */
struct sv_send_umr {
	__u32 access;		/* SV_ACCESS_* */
	__u32 repeat_count;	/* >= 1 */
	__u32 num_ent;
	__u32 flags;		/* SV_UMR_* */
};

#define SV_UMR_KEEP_ACCESS	0x1U
#define SV_UMR_KEEP_LAYOUT	0x2U

struct sv_umr_ent {
	__u64 addr;
	__u32 bytes_count;
	__u32 bytes_skip;
	__u32 lkey;
	__u32 reserved;		/* must be zero */
};

/* A receive WQE, followed by num_sge struct sv_sge. */
struct sv_recv_wqe {
	__u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

/*
 * rx: nonzero when frames wait in the receive queue of one of the file's
 * QPs for an engine that sleeps or shares its CPU. The kernel sets it; a
 * poll that finds its CQ empty and rx set rings SV_IOC_DOORBELL, whose
 * pass takes them (bounded) in the poller's context; the doorbell clears
 * rx before its pass and sets it again if frames are left. A library
 * that ignores it loses nothing: the engine is woken for the same frames.
 */
struct sv_doorbell {
	__u32 flags;		/* SV_DB_* (kernel writes) */
	__u32 rx;		/* kernel writes: see above */
	__u32 reserved[14];
	/*
	 * posted: the library sets it after publishing a post's prod (its
	 * own cache line); a drive (SV_RING_DRIVE) visits only the files
	 * with posted or rx set, and clears posted before its pass. A
	 * library that never sets it gets its posts run by its own rings
	 * and the engine, not by other files' drives.
	 */
	__u32 posted;
	/*
	 * defer: the library sets it when a post leaves its ring to the
	 * next poll (SV_DB_DEFER), or would have, had the flag been set.
	 * The engine clears it when it looks; while files set it, it keeps
	 * SV_DB_DEFER set (see there).
	 */
	__u32 defer;
	__u32 reserved2[14];
	/* Hints (above): the summary of the bitmap at SV_DB_HINT_OFFSET. */
	__u64 hint_sum[8];
};

#define SV_DB_NEED_WAKEUP	0x1U
/*
 * SV_DB_DEFER (with SV_DB_NEED_WAKEUP): the engine sleeps no longer than
 * SV_DB_DEFER_US microseconds and then runs the QPs the file's hint bits
 * name (on a shared CPU, as soon as the scheduler lets it). A post may
 * then set its QP's bits and leave the ring to a later call, as the
 * library does when its send CQ has a completion it asked for
 * outstanding (a poll will come): the context's next poll,
 * ibv_req_notify_cq() or ibv_get_cq_event() rings once (flags 0) for all
 * such posts, so a busy poster makes one syscall per poll, not per WR.
 * Its barriers are the hints': the library sets the bits, issues a full
 * barrier and looks at flags; the engine clears SV_DB_DEFER, issues
 * smp_mb() and then looks at the bits. A post that finds
 * SV_DB_NEED_WAKEUP without SV_DB_DEFER rings. The kernel sets the flag
 * while files of its engine defer (struct sv_doorbell's defer), and a
 * plain doorbell's pass then runs up to 64 WQEs of a QP, not 4.
 */
#define SV_DB_DEFER		0x2U
#define SV_DB_DEFER_US		1000
#define SV_DB_HINT_OFFSET	4096
#define SV_DB_SLOTS		32768
#define SV_DB_NO_SLOT		0xffffffffU

/*
 * SV_IOC_MAP_WQ: the rings of a QP (type SV_WQ_QP: sq_* and rq_*; rq_len
 * is 0 with an SRQ) or of an SRQ (type SV_WQ_SRQ: rq_* only). sq_ring and
 * rq_ring (VER1) are the byte offsets of each ring's struct sv_wq_ring in
 * its mapping: 0, but for a QP created with SV_CREATE_QP_SHARED_RINGS,
 * whose two rings are one mapping (sq_offset == rq_offset).
 */
#define SV_WQ_QP		0
#define SV_WQ_SRQ		1

struct sv_map_wq {
	__u32 size;
	__u32 type;		/* in: SV_WQ_* */
	__u32 handle;		/* in */
	__u32 reserved;		/* must be zero */
	__u64 sq_offset;	/* out */
	__u64 sq_len;		/* out */
	__u64 rq_offset;	/* out */
	__u64 rq_len;		/* out */
	__u32 sq_ring;		/* out (VER1) */
	__u32 rq_ring;		/* out (VER1) */
	__u32 db_slot;		/* out (VER2): a QP's hint slot (see above) */
	__u32 reserved2;	/* must be zero */
};

#define SV_MAP_WQ_SIZE_VER0	48
#define SV_MAP_WQ_SIZE_VER1	56
#define SV_MAP_WQ_SIZE_VER2	64
#define SV_IOC_MAP_WQ _IOWR(SV_IOC_MAGIC, SV_NR_MAP_WQ, struct sv_map_wq)

/*
 * SV_IOC_MAP_DOORBELL: the file's doorbell page (and engine) on first use.
 * flags: in, SV_MAP_DOORBELL_HINTS to post with hints (above), which then
 * holds for the file's life; out, the flags in effect. len covers the
 * hint bitmap.
 */
struct sv_map_doorbell {
	__u32 size;
	__u32 flags;		/* in/out: SV_MAP_DOORBELL_*; VER0: reserved */
	__u64 offset;		/* out */
	__u64 len;		/* out */
};

#define SV_MAP_DOORBELL_HINTS	0x1U

#define SV_MAP_DOORBELL_SIZE_VER0	24
#define SV_IOC_MAP_DOORBELL _IOWR(SV_IOC_MAGIC, SV_NR_MAP_DOORBELL, \
				  struct sv_map_doorbell)

/*
 * SV_IOC_DOORBELL: run a pass over the file's own queues and wake its
 * engine (flags 0). With hints (SV_MAP_DOORBELL_HINTS) the pass runs the
 * QPs named in the bitmap and those with work; a ring written without
 * naming its QP is not looked at.
 *
 * SV_RING_DRIVE (VER1): a poll that found its CQ (cq_handle) empty lends
 * its thread to the engines: passes over every queue of the caller's uid
 * on each engine that has no CPU of its own (SV_DB_NEED_WAKEUP), each
 * user's files round robin as the engine's passes go, while they find
 * work, at most 256 WQEs and about 1 MiB in all, and while the caller
 * has its CPU to itself; with nothing to do, it returns once the CQ has a
 * completion (after 5 microseconds), else after about 20. Meanwhile the
 * uid's files there have SV_DB_NEED_WAKEUP clear, so their posts need no
 * syscall. Only the uid's own queues, never another user's: the work is
 * charged to the caller's CPU time. Returns 1 if it did work or found
 * work under way in another context (the kthread, a doorbell), 0 if it
 * found none (a poller backs off before the next drive).
 *
 * SV_RING_QP (VER1, a file mapped with SV_MAP_DOORBELL_HINTS): a post's
 * ring that names its QP by its hint slot (qp_slot, sv_map_wq's db_slot)
 * instead of by the bitmap: the doorbell runs that QP alone (at most 4
 * WQEs, the rest left to the engine, which is woken), or, if the engine
 * or a drive is in the file, puts it before them. A slot that names no
 * QP of the file runs nothing. The library names the QP this way when it
 * has seen SV_DB_NEED_WAKEUP, so a post that rings sets no hint bit; one
 * that found the flag clear sets its bits and rings only if the flag is
 * set when it looks again after them.
 */
#define SV_RING_DRIVE		0x1U
#define SV_RING_QP		0x2U

struct sv_ring_doorbell {
	__u32 size;
	__u32 flags;		/* in: 0, SV_RING_DRIVE or SV_RING_QP; VER0: reserved */
	__u32 cq_handle;	/* in (VER1): SV_RING_DRIVE's CQ, else zero */
	__u32 qp_slot;		/* in: SV_RING_QP's slot, else zero */
};

#define SV_RING_DOORBELL_SIZE_VER0	8
#define SV_RING_DOORBELL_SIZE_VER1	16
#define SV_IOC_DOORBELL _IOWR(SV_IOC_MAGIC, SV_NR_DOORBELL, \
			      struct sv_ring_doorbell)

/*
 * SV_IOC_MOVE_RING: put a new QP's rings (type SV_WQ_QP: in RESET and
 * never out of it yet, its two rings in one buffer or no receive ring,
 * else EINVAL), a new SRQ's ring
 * (SV_WQ_SRQ: no QP uses it yet, else EBUSY), a WQ's ring (SV_RING_WQ,
 * ibv_create_wq(3): in RESET, else EINVAL) or a new CQ's ring
 * (SV_RING_CQ: no QP, SRQ or WQ uses it yet, else EBUSY) in the
 * caller's own memory, a parent domain's allocator's buffer
 * (ibv_alloc_parent_domain(3)): len bytes at addr, page aligned, at
 * least the mapping's size (sq_len of SV_IOC_MAP_WQ, mmap_len of
 * SV_IOC_CREATE_CQ), else EINVAL. The pages are pinned and charged to
 * RLIMIT_MEMLOCK as a mapped ring's are (ENOMEM beyond it; EFAULT if not
 * mapped writable), the ring's content moves there, and the mapping's
 * offset is no longer valid: SV_IOC_MAP_WQ reports offset 0. A ring
 * moves once (EINVAL after); a resized CQ or SRQ goes back to module
 * memory.
 */
#define SV_RING_CQ		2
#define SV_RING_WQ		3

struct sv_move_ring {
	__u32 size;
	__u32 type;		/* in: SV_WQ_QP, _SRQ, SV_RING_CQ or _WQ */
	__u32 handle;		/* in */
	__u32 reserved;		/* must be zero */
	__u64 addr;		/* in */
	__u64 len;		/* in */
};

#define SV_MOVE_RING_SIZE_VER0	32
#define SV_IOC_MOVE_RING _IOWR(SV_IOC_MAGIC, SV_NR_MOVE_RING, \
			       struct sv_move_ring)

/*
 * Flow steering (0x60-0x67): ibv_create_flow / ibv_destroy_flow.
 *
 * SV_IOC_CREATE_FLOW passes, at user address attr, exactly what the
 * application gave ibv_create_flow(): a struct ibv_flow_attr followed by
 * num_of_specs specs, attr_len bytes in all (the attr's size field). The
 * structs below mirror <infiniband/verbs.h> byte for byte (sizes in the
 * SV_FLOW_*_SIZE constants); a spec whose size field is not its type's
 * size, a total that does not add up, an unknown spec type, comp_mask or
 * flag bit, or port != 1 is EINVAL. Values and masks are in network byte
 * order; a value bit outside its mask is ignored. The QP must be a
 * RAW_PACKET or UD QP of this file on a device bound to a netdev, and the
 * caller needs CAP_NET_RAW in the device's network namespace (EPERM). A
 * QP with flows cannot be destroyed (EBUSY); closing the file destroys
 * flows first. Documentation/steering.rst has the semantics.
 */
enum sv_flow_nr {
	SV_NR_CREATE_FLOW = 0x60,
	SV_NR_DESTROY_FLOW = 0x61,
	SV_NR_CREATE_FLOW_MATCHER = 0x62,
	SV_NR_DESTROY_FLOW_MATCHER = 0x63,
	/* Steering tables and anchors: 0x70-0x73 */
	SV_NR_CREATE_STEER_TABLE = 0x70,
	SV_NR_DESTROY_STEER_TABLE = 0x71,
	SV_NR_CREATE_STEER_ANCHOR = 0x72,
	SV_NR_DESTROY_STEER_ANCHOR = 0x73,
	SV_NR_CREATE_STEER_ACTION = 0x74,
	SV_NR_DESTROY_STEER_ACTION = 0x75,
};

/* enum ibv_flow_attr_type */
#define SV_FLOW_ATTR_NORMAL		0x0
#define SV_FLOW_ATTR_ALL_DEFAULT	0x1
#define SV_FLOW_ATTR_MC_DEFAULT		0x2
#define SV_FLOW_ATTR_SNIFFER		0x3

/* enum ibv_flow_flags (bit 0: the older headers' ALLOW_LOOP_BACK) */
#define SV_FLOW_ATTR_FLAGS_ALLOW_LOOP_BACK	0x1
#define SV_FLOW_ATTR_FLAGS_DONT_TRAP		0x2
#define SV_FLOW_ATTR_FLAGS_EGRESS		0x4

/* enum ibv_flow_spec_type */
#define SV_FLOW_SPEC_ETH		0x20
#define SV_FLOW_SPEC_IPV4		0x30
#define SV_FLOW_SPEC_IPV6		0x31
#define SV_FLOW_SPEC_IPV4_EXT		0x32
#define SV_FLOW_SPEC_ESP		0x34
#define SV_FLOW_SPEC_TCP		0x40
#define SV_FLOW_SPEC_UDP		0x41
#define SV_FLOW_SPEC_VXLAN_TUNNEL	0x50
#define SV_FLOW_SPEC_GRE		0x51
#define SV_FLOW_SPEC_MPLS		0x60
#define SV_FLOW_SPEC_INNER		0x100
#define SV_FLOW_SPEC_ACTION_TAG		0x1000
#define SV_FLOW_SPEC_ACTION_DROP	0x1001
#define SV_FLOW_SPEC_ACTION_HANDLE	0x1002
#define SV_FLOW_SPEC_ACTION_COUNT	0x1003

/* struct ibv_flow_attr, 20 bytes */
struct sv_flow_attr {
	__u32 comp_mask;
	__u32 type;		/* SV_FLOW_ATTR_* */
	__u16 size;		/* the attr and its specs, in bytes */
	__u16 priority;		/* lower values are tried first */
	__u8 num_of_specs;
	__u8 port;
	__u16 pad;
	__u32 flags;		/* SV_FLOW_ATTR_FLAGS_* */
};

/* The head of every spec: type, then size (enum, uint16_t) */
struct sv_flow_spec_hdr {
	__u32 type;
	__u16 size;
};

struct sv_flow_eth_filter {
	__u8 dst_mac[6];
	__u8 src_mac[6];
	__be16 ether_type;
	__be16 vlan_tag;	/* 802.1Q TCI: prio 3, CFI 1, VLAN id 12 */
};

struct sv_flow_spec_eth {	/* 40 bytes */
	__u32 type;
	__u16 size;
	struct sv_flow_eth_filter val;
	struct sv_flow_eth_filter mask;
	__u16 pad;
};

struct sv_flow_ipv4_filter {
	__be32 src_ip;
	__be32 dst_ip;
};

struct sv_flow_spec_ipv4 {	/* 24 bytes */
	__u32 type;
	__u16 size;
	__u16 pad;
	struct sv_flow_ipv4_filter val;
	struct sv_flow_ipv4_filter mask;
};

struct sv_flow_ipv4_ext_filter {
	__be32 src_ip;
	__be32 dst_ip;
	__u8 proto;
	__u8 tos;
	__u8 ttl;
	__u8 flags;		/* the 3 flag bits of the fragment field */
};

struct sv_flow_spec_ipv4_ext {	/* 32 bytes */
	__u32 type;
	__u16 size;
	__u16 pad;
	struct sv_flow_ipv4_ext_filter val;
	struct sv_flow_ipv4_ext_filter mask;
};

struct sv_flow_ipv6_filter {
	__u8 src_ip[16];
	__u8 dst_ip[16];
	__be32 flow_label;	/* 20 bits */
	__u8 next_hdr;
	__u8 traffic_class;
	__u8 hop_limit;
	__u8 pad;
};

struct sv_flow_spec_ipv6 {	/* 88 bytes */
	__u32 type;
	__u16 size;
	__u16 pad;
	struct sv_flow_ipv6_filter val;
	struct sv_flow_ipv6_filter mask;
};

struct sv_flow_tcp_udp_filter {
	__be16 dst_port;
	__be16 src_port;
};

struct sv_flow_spec_tcp_udp {	/* 16 bytes */
	__u32 type;
	__u16 size;
	struct sv_flow_tcp_udp_filter val;
	struct sv_flow_tcp_udp_filter mask;
	__u16 pad;
};

struct sv_flow_tunnel_filter {
	__be32 tunnel_id;	/* VXLAN: the VNI in the upper 24 bits */
};

struct sv_flow_spec_tunnel {	/* 16 bytes */
	__u32 type;
	__u16 size;
	__u16 pad;
	struct sv_flow_tunnel_filter val;
	struct sv_flow_tunnel_filter mask;
};

struct sv_flow_gre_filter {
	__be16 c_ks_res0_ver;
	__be16 protocol;
	__be32 key;
};

struct sv_flow_spec_gre {	/* 24 bytes */
	__u32 type;
	__u16 size;
	__u16 pad;
	struct sv_flow_gre_filter val;
	struct sv_flow_gre_filter mask;
};

struct sv_flow_mpls_filter {
	__be32 label;		/* label 20, TC 3, bottom of stack 1, TTL 8 */
};

struct sv_flow_spec_mpls {	/* 16 bytes */
	__u32 type;
	__u16 size;
	__u16 pad;
	struct sv_flow_mpls_filter val;
	struct sv_flow_mpls_filter mask;
};

struct sv_flow_esp_filter {
	__be32 spi;
	__be32 seq;
};

struct sv_flow_spec_esp {	/* 24 bytes */
	__u32 type;
	__u16 size;
	__u16 pad;
	struct sv_flow_esp_filter val;
	struct sv_flow_esp_filter mask;
};

struct sv_flow_spec_action_tag {	/* 12 bytes */
	__u32 type;
	__u16 size;
	__u16 pad;
	__u32 tag_id;		/* host order: the CQE's flow_tag */
};

struct sv_flow_spec_action_drop {	/* 8 bytes */
	__u32 type;
	__u16 size;
	__u16 pad;
};

/*
 * struct ibv_flow_spec_counter_action, 16 bytes: verbs.h has a pointer to
 * the struct ibv_counters at offset 8; the library puts the counters'
 * handle there instead (and zero in the upper half) before the attr goes
 * to the kernel.
 */
struct sv_flow_spec_action_count {
	__u32 type;
	__u16 size;
	__u16 pad;
	__u32 counters_handle;
	__u32 reserved;		/* zero */
};

#define SV_FLOW_ATTR_SIZE		20
#define SV_FLOW_SPEC_ETH_SIZE		40
#define SV_FLOW_SPEC_IPV4_SIZE		24
#define SV_FLOW_SPEC_IPV4_EXT_SIZE	32
#define SV_FLOW_SPEC_IPV6_SIZE		88
#define SV_FLOW_SPEC_TCP_UDP_SIZE	16
#define SV_FLOW_SPEC_TUNNEL_SIZE	16
#define SV_FLOW_SPEC_GRE_SIZE		24
#define SV_FLOW_SPEC_MPLS_SIZE		16
#define SV_FLOW_SPEC_ESP_SIZE		24
#define SV_FLOW_SPEC_ACTION_TAG_SIZE	12
#define SV_FLOW_SPEC_ACTION_DROP_SIZE	8
#define SV_FLOW_SPEC_ACTION_COUNT_SIZE	16
/* The largest attr + specs SV_IOC_CREATE_FLOW takes. */
#define SV_FLOW_ATTR_MAX_SIZE		1024
/*
 * Flows per device: 2^18, so that one user's default share (half) holds
 * more than 100,000 rules, as NIC flow tables do; each costs its creator
 * about half a KiB of kernel memory, charged to its memory cgroup.
 */
#define SV_MAX_FLOW			262144

struct sv_create_flow {
	__u32 size;
	__u32 qp_handle;	/* in */
	__u64 attr;		/* in: user address of the ibv_flow_attr */
	__u32 attr_len;		/* in: its size field (at most 1024) */
	__u32 handle;		/* out */
};

#define SV_CREATE_FLOW_SIZE_VER0	24
#define SV_IOC_CREATE_FLOW _IOWR(SV_IOC_MAGIC, SV_NR_CREATE_FLOW, \
				 struct sv_create_flow)

struct sv_destroy_flow {
	__u32 size;
	__u32 handle;		/* in */
};

#define SV_DESTROY_FLOW_SIZE_VER0	8
#define SV_IOC_DESTROY_FLOW _IOWR(SV_IOC_MAGIC, SV_NR_DESTROY_FLOW, \
				  struct sv_destroy_flow)

/*
 * Flow matchers (0x62-0x63), and the softverbs-private specs that use
 * them: mlx5dv_create_flow_matcher() and mlx5dv_create_flow() as
 * libmlx5.so.1 (user/compat/mlx5_flow.c) implements them. The library
 * translates mlx5's fte_match_param into the match key below, the one
 * the kernel keeps of every frame and rule (kernel/steer/parse.c says
 * what each field holds); a frame matches a rule when (key & mask) ==
 * value, bit for bit.
 *
 *   SV_IOC_CREATE_FLOW_MATCHER: a mask (sizeof(struct sv_flow_key) bytes
 *     at user address mask, mask_len that size, else EINVAL), a priority
 *     and flags 0 (receive) or SV_FLOW_ATTR_FLAGS_EGRESS (transmit). A
 *     nonzero pad byte or reserved field, or a tunnel mask other than
 *     0 or 0xff: EINVAL. No capability is needed: a matcher steers
 *     nothing until a flow uses it.
 *   SV_IOC_CREATE_FLOW with an SV_FLOW_SPEC_MATCHER spec: the rule's
 *     mask and priority are the matcher's, its value the spec's (a value
 *     bit outside the mask: EINVAL, as mlx5's flow core); no other
 *     match spec may come with it, the attr's priority must be the
 *     matcher's and its EGRESS flag the matcher's (EINVAL). The flow
 *     holds the matcher: SV_IOC_DESTROY_FLOW_MATCHER is EBUSY until
 *     every flow using it is destroyed.
 *   SV_FLOW_SPEC_DEFAULT_MISS: the frame leaves the device's rules at
 *     this rule, to the netdev's own receive path (or, for an egress
 *     rule, on to the wire): lower priorities and the default rules do
 *     not see it (mlx5's FWD_NEXT_NS). Not with a drop or DONT_TRAP.
 *   qp_handle SV_FLOW_NO_QP: a rule with no destination QP, allowed for
 *     a drop, a default miss, and egress rules (EINVAL otherwise).
 */
#define SV_FLOW_SPEC_MATCHER		0x8000
#define SV_FLOW_SPEC_DEFAULT_MISS	0x8001
#define SV_FLOW_NO_QP			0xffffffffU

/* sv_flow_hdrs.vlan: the type of the first VLAN tag, if any */
#define SV_FLOW_VLAN_C			0x1	/* 802.1Q */
#define SV_FLOW_VLAN_S			0x2	/* 802.1ad */

/* The headers of one layer (outer, or the inner frame of a tunnel). */
struct sv_flow_hdrs {
	__u8 dst_mac[6];
	__u8 src_mac[6];
	__be16 ether_type;	/* after the VLAN tag */
	__be16 vlan_tag;	/* the first tag's TCI, 0 without one */
	__u8 l3;		/* 4, 6 or 0: the IP version */
	__u8 ip_proto;		/* IPv4 protocol, IPv6 next header */
	__u8 tos;		/* IPv4 TOS, IPv6 traffic class */
	__u8 ttl;		/* IPv4 TTL, IPv6 hop limit */
	__u8 ip_flags;		/* IPv4: the 3 flag bits */
	__u8 l4;		/* IPPROTO_TCP or _UDP: the ports are valid */
	__u8 vlan;		/* SV_FLOW_VLAN_* */
	__u8 frag;		/* 1: an IP fragment */
	__be16 tcp_sport;	/* TCP only, else 0 */
	__be16 tcp_dport;
	__be16 udp_sport;	/* UDP only, else 0 */
	__be16 udp_dport;
	__be16 tcp_flags;	/* the low 9 bits of TCP's 13th-14th bytes */
	__u8 pad[2];
	__be32 flow_label;	/* IPv6, 20 bits */
	__u8 src_ip[16];	/* IPv4: the last 4 bytes, as in mlx5's */
	__u8 dst_ip[16];	/* fte_match_param */
};

/* Everything a rule can match on: 176 bytes. */
struct sv_flow_key {
	struct sv_flow_hdrs outer;
	__u8 tunnel;		/* SV_FLOW_TUN_* */
	__u8 pad[3];
	__be32 tunnel_id;	/* VXLAN: the VNI (24 bits) */
	__be16 gre_flags;	/* c_ks_res0_ver */
	__be16 gre_proto;
	__be32 gre_key;
	__be32 mpls_label;	/* the first label entry */
	__be32 esp_spi;
	__be32 esp_seq;
	struct sv_flow_hdrs inner;
	__u8 pad2[4];
} __attribute__((aligned(8)));

#define SV_FLOW_TUN_NONE		0
#define SV_FLOW_TUN_VXLAN		1
#define SV_FLOW_TUN_GRE			2

#define SV_FLOW_KEY_SIZE		176

/* The spec of a flow made through a matcher: 192 bytes. */
struct sv_flow_spec_matcher {
	__u32 type;		/* SV_FLOW_SPEC_MATCHER */
	__u16 size;
	__u16 pad;
	__u32 matcher_handle;
	__u32 reserved;		/* zero */
	struct sv_flow_key val;
};

#define SV_FLOW_SPEC_MATCHER_SIZE	192
#define SV_FLOW_SPEC_DEFAULT_MISS_SIZE	8	/* a type and a size */

struct sv_create_flow_matcher {
	__u32 size;
	__u32 handle;		/* out */
	__u64 mask;		/* in: user address of a struct sv_flow_key */
	__u32 mask_len;		/* in: SV_FLOW_KEY_SIZE */
	__u32 flags;		/* in: 0 or SV_FLOW_ATTR_FLAGS_EGRESS */
	__u16 priority;		/* in */
	__u16 reserved;		/* zero */
	__u32 table_handle;	/* in: a steering table, 0: the device's */
};

#define SV_CREATE_FLOW_MATCHER_SIZE_VER0	32
#define SV_IOC_CREATE_FLOW_MATCHER _IOWR(SV_IOC_MAGIC,			\
					 SV_NR_CREATE_FLOW_MATCHER,	\
					 struct sv_create_flow_matcher)

struct sv_destroy_flow_matcher {
	__u32 size;
	__u32 handle;		/* in */
};

#define SV_DESTROY_FLOW_MATCHER_SIZE_VER0	8
#define SV_IOC_DESTROY_FLOW_MATCHER _IOWR(SV_IOC_MAGIC,			\
					  SV_NR_DESTROY_FLOW_MATCHER,	\
					  struct sv_destroy_flow_matcher)

/* Flow matchers per device */
#define SV_MAX_FLOW_MATCHER		4096

/*
 * Steering tables and anchors (0x70-0x73): the mlx5dv_dr_* sandbox and
 * mlx5dv_create_steering_anchor(), as libmlx5 (user/compat/mlx5_dr.c)
 * builds them. Documentation/mlx5dv.rst has the semantics.
 *
 * A steering table is a set of rules of its own, of one direction
 * (flags 0: receive, SV_FLOW_ATTR_FLAGS_EGRESS: transmit) at a level
 * (1..SV_STEER_MAX_LEVEL, any u32 but 0, as on mlx5: the device's own
 * tables are level 0). A
 * matcher created with its handle puts the rules made through it there.
 * A frame reaches a table only through a rule with an
 * SV_FLOW_SPEC_DEST_TABLE spec, which must name a table of the same
 * direction at a higher level than its own (EINVAL); a frame no rule of
 * a steering table takes goes to the kernel's stack (receive) or on to
 * the wire (transmit), as a DEFAULT_MISS does.
 *
 * An anchor (CAP_NET_RAW in the device's namespace, else EPERM; a
 * priority up to SV_STEER_MAX_PRIO, else EINVAL) is a way back into the
 * device's own tables of its direction at its priority: a rule with an
 * SV_FLOW_SPEC_DEST_ANCHOR spec sends the frame on to the device's rules
 * of that priority and lower, then the defaults, then the stack. A frame
 * is sent back to a priority no higher than the one it left the device's
 * tables at, or through more than SV_STEER_MAX_HOPS tables and anchors in
 * all, is dropped (counted in steering_loop_drops).
 *
 * Rules with either spec deliver to no QP (qp_handle SV_FLOW_NO_QP).
 * Destroying a table is EBUSY while a matcher is in it or a rule sends to
 * it; an anchor, while a rule sends to it.
 */
#define SV_FLOW_SPEC_DEST_TABLE		0x8002
#define SV_FLOW_SPEC_DEST_ANCHOR	0x8003
#define SV_STEER_MAX_LEVEL		0xffffffffU
#define SV_STEER_MAX_PRIO		15
#define SV_STEER_MAX_HOPS		16
#define SV_MAX_STEER_TABLE		4096
#define SV_MAX_STEER_ANCHOR		4096

/* SV_FLOW_SPEC_DEST_TABLE, _DEST_ANCHOR: 16 bytes */
struct sv_flow_spec_dest {
	__u32 type;
	__u16 size;
	__u16 pad;
	__u32 handle;		/* the table's or the anchor's */
	__u32 reserved;		/* zero */
};

#define SV_FLOW_SPEC_DEST_SIZE		16

struct sv_create_steer_table {
	__u32 size;
	__u32 handle;		/* out */
	__u32 flags;		/* in: 0 or SV_FLOW_ATTR_FLAGS_EGRESS */
	__u32 level;		/* in: 1..SV_STEER_MAX_LEVEL (0: EINVAL) */
};

#define SV_CREATE_STEER_TABLE_SIZE_VER0	16
#define SV_IOC_CREATE_STEER_TABLE _IOWR(SV_IOC_MAGIC,			\
					SV_NR_CREATE_STEER_TABLE,	\
					struct sv_create_steer_table)

struct sv_create_steer_anchor {
	__u32 size;
	__u32 handle;		/* out: also the anchor's id */
	__u32 flags;		/* in: 0 or SV_FLOW_ATTR_FLAGS_EGRESS */
	__u16 priority;		/* in */
	__u16 reserved;		/* zero */
};

#define SV_CREATE_STEER_ANCHOR_SIZE_VER0	16
#define SV_IOC_CREATE_STEER_ANCHOR _IOWR(SV_IOC_MAGIC,			\
					 SV_NR_CREATE_STEER_ANCHOR,	\
					 struct sv_create_steer_anchor)

/* SV_IOC_DESTROY_STEER_TABLE and _ANCHOR */
struct sv_destroy_steer_obj {
	__u32 size;
	__u32 handle;		/* in */
};

#define SV_DESTROY_STEER_OBJ_SIZE_VER0	8
#define SV_IOC_DESTROY_STEER_TABLE _IOWR(SV_IOC_MAGIC,			\
					 SV_NR_DESTROY_STEER_TABLE,	\
					 struct sv_destroy_steer_obj)
#define SV_IOC_DESTROY_STEER_ANCHOR _IOWR(SV_IOC_MAGIC,		\
					  SV_NR_DESTROY_STEER_ANCHOR,	\
					  struct sv_destroy_steer_obj)

/*
 * Steering actions (0x74-0x75): what mlx5's DR rules do to a frame besides
 * sending it somewhere (mlx5dv_dr_action_create_push_vlan(),
 * _modify_header(), _packet_reformat(), _dest_array(), as libmlx5
 * builds them). Documentation/mlx5dv.rst has the semantics.
 *
 * SV_IOC_CREATE_STEER_ACTION makes an action object of one type:
 *
 *   SV_STEER_ACT_PUSH_VLAN: vlan_hdr (TPID << 16 | TCI, network order),
 *     TPID 0x8100 or 0x88a8 (EINVAL); no data.
 *   SV_STEER_ACT_MODIFY: data_len / 8 (1..SV_STEER_MAX_MODIFY, else
 *     EINVAL) big-endian 64-bit set (type 1) or add (type 2) actions in
 *     the PRM's set_action_in / add_action_in layout. Copy (3) and
 *     unknown types: EOPNOTSUPP; an unknown field EINVAL, a known one
 *     softverbs lacks (metadata registers, GTP-U TEID) EOPNOTSUPP;
 *     offset + length past the field, add on another field than
 *     TTL/hop limit, TCP sequence or acknowledgment number, nonzero
 *     reserved bits: EINVAL; IPv4 and IPv6 fields together: EOPNOTSUPP,
 *     TCP and UDP fields together: EINVAL (as mlx5 DR).
 *   SV_STEER_ACT_ENCAP: data_len (SV_ETH_HLEN..SV_STEER_MAX_ENCAP, else
 *     EINVAL) bytes of header to put before the frame: Ethernet, at most
 *     one VLAN tag, then, if its type says IPv4 or IPv6, a whole IP
 *     header (and a UDP header if IP says UDP), else EINVAL.
 *   SV_STEER_ACT_DECAP: no data; VXLAN (UDP port 4789) or GRE carrying
 *     Ethernet (0x6558): the frame becomes the inner Ethernet frame.
 *   SV_STEER_ACT_MIRROR: data_len / sizeof(struct sv_steer_dest)
 *     (2..SV_STEER_MAX_DEST, else EINVAL) destinations: RAW_PACKET or UD
 *     QPs of the file and steering tables of the action's direction
 *     (receive only: SV_FLOW_ATTR_FLAGS_EGRESS is EOPNOTSUPP), each
 *     optionally with an ENCAP action applied to its copy first (another
 *     type: EOPNOTSUPP). The action holds them: destroying them is
 *     EBUSY while it lives.
 *
 * A flow uses them with SV_FLOW_SPEC_REWRITE specs (struct
 * sv_flow_spec_dest, the action's handle; at most SV_FLOW_MAX_REWRITE,
 * applied in their order, EINVAL for a MIRROR there) and
 * SV_FLOW_SPEC_POP_VLAN (8 bytes: pop the outer VLAN tag, if there is
 * one), and an SV_FLOW_SPEC_DEST_MIRROR spec (the frame goes to every
 * destination of a MIRROR action; the flow has no QP, table or anchor;
 * the mirror's tables must be above the flow's table's level). A flow
 * that rewrites may not drop, miss or DONT_TRAP (EINVAL). An action in
 * use by a flow cannot be destroyed (EBUSY).
 */
#define SV_FLOW_SPEC_REWRITE		0x8004
#define SV_FLOW_SPEC_POP_VLAN		0x8005
#define SV_FLOW_SPEC_DEST_MIRROR	0x8006
#define SV_FLOW_SPEC_POP_VLAN_SIZE	8	/* a type and a size */
#define SV_FLOW_MAX_REWRITE		8

#define SV_STEER_ACT_PUSH_VLAN		1
#define SV_STEER_ACT_MODIFY		2
#define SV_STEER_ACT_ENCAP		3
#define SV_STEER_ACT_DECAP		4
#define SV_STEER_ACT_MIRROR		5

#define SV_STEER_MAX_MODIFY		64
#define SV_STEER_MAX_ENCAP		128
#define SV_STEER_MAX_DEST		16
#define SV_MAX_STEER_ACTION		65536
#define SV_ETH_HLEN			14

/* One destination of a MIRROR action: 16 bytes */
#define SV_STEER_DEST_QP		1
#define SV_STEER_DEST_TABLE		2

struct sv_steer_dest {
	__u32 type;		/* SV_STEER_DEST_* */
	__u32 handle;		/* the QP's or the steering table's */
	__u32 encap_handle;	/* 0, or an ENCAP action for this copy */
	__u32 reserved;		/* zero */
};

struct sv_create_steer_action {
	__u32 size;
	__u32 handle;		/* out */
	__u32 type;		/* in: SV_STEER_ACT_* */
	__u32 flags;		/* in: 0 or SV_FLOW_ATTR_FLAGS_EGRESS */
	__u64 data;		/* in: user address of data_len bytes */
	__u32 data_len;		/* in */
	__be32 vlan_hdr;	/* in: PUSH_VLAN */
};

#define SV_CREATE_STEER_ACTION_SIZE_VER0	32
#define SV_IOC_CREATE_STEER_ACTION _IOWR(SV_IOC_MAGIC,			\
					 SV_NR_CREATE_STEER_ACTION,	\
					 struct sv_create_steer_action)
#define SV_IOC_DESTROY_STEER_ACTION _IOWR(SV_IOC_MAGIC,		\
					  SV_NR_DESTROY_STEER_ACTION,	\
					  struct sv_destroy_steer_obj)

/*
 * Flow counters (0x64-0x67): ibv_create_counters, ibv_destroy_counters,
 * ibv_attach_counters_point_flow (static mode: flow NULL) and
 * ibv_read_counters. A counters object is bound to a flow by an
 * IBV_FLOW_SPEC_ACTION_COUNT spec in SV_IOC_CREATE_FLOW (struct
 * sv_flow_spec_action_count) and counts the packets and bytes of the
 * frames that hit the flow's rule; several flows may share one object
 * (their counts add up). Documentation/steering.rst has the semantics.
 *
 *   SV_IOC_ATTACH_COUNTERS: describe the counter at index (desc
 *     SV_COUNTER_PACKETS or SV_COUNTER_BYTES, else EOPNOTSUPP); index
 *     below SV_COUNTERS_MAX_INDEX and at most SV_COUNTERS_MAX_DESC
 *     descriptions (EINVAL); EBUSY while the object is bound to a flow.
 *   SV_IOC_CREATE_FLOW with an object that has no description: EINVAL.
 *   SV_IOC_READ_COUNTERS: EINVAL while the object is bound to no flow,
 *     for flags other than SV_READ_COUNTERS_PREFER_CACHED, and for
 *     ncounters below the highest described index + 1. Writes ncounters
 *     values at values: index i holds the sum of the counters described
 *     at i, 0 where none is. nvalid returns the highest described index
 *     + 1 (the kernel writes every value; nvalid is for information).
 *   SV_IOC_DESTROY_COUNTERS: EBUSY while bound to a flow.
 */
enum sv_counters_nr {
	SV_NR_CREATE_COUNTERS = 0x64,
	SV_NR_DESTROY_COUNTERS = 0x65,
	SV_NR_ATTACH_COUNTERS = 0x66,
	SV_NR_READ_COUNTERS = 0x67,
};

/* enum ibv_counter_description */
#define SV_COUNTER_PACKETS		0
#define SV_COUNTER_BYTES		1
/* enum ibv_read_counters_flags */
#define SV_READ_COUNTERS_PREFER_CACHED	0x1
/* Descriptions per counters object, and their indexes */
#define SV_COUNTERS_MAX_DESC		256
#define SV_COUNTERS_MAX_INDEX		256
/* Counters objects per device */
#define SV_MAX_COUNTERS			65536

struct sv_create_counters {
	__u32 size;
	__u32 handle;		/* out */
};

#define SV_CREATE_COUNTERS_SIZE_VER0	8
#define SV_IOC_CREATE_COUNTERS _IOWR(SV_IOC_MAGIC, SV_NR_CREATE_COUNTERS, \
				     struct sv_create_counters)

struct sv_destroy_counters {
	__u32 size;
	__u32 handle;		/* in */
};

#define SV_DESTROY_COUNTERS_SIZE_VER0	8
#define SV_IOC_DESTROY_COUNTERS _IOWR(SV_IOC_MAGIC, SV_NR_DESTROY_COUNTERS, \
				      struct sv_destroy_counters)

struct sv_attach_counters {
	__u32 size;
	__u32 handle;		/* in */
	__u32 desc;		/* in: SV_COUNTER_* */
	__u32 index;		/* in: where ibv_read_counters puts it */
};

#define SV_ATTACH_COUNTERS_SIZE_VER0	16
#define SV_IOC_ATTACH_COUNTERS _IOWR(SV_IOC_MAGIC, SV_NR_ATTACH_COUNTERS, \
				     struct sv_attach_counters)

struct sv_read_counters {
	__u32 size;
	__u32 handle;		/* in */
	__u64 values;		/* in: user address of ncounters __u64 */
	__u32 ncounters;	/* in */
	__u32 flags;		/* in: SV_READ_COUNTERS_* */
	__u32 nvalid;		/* out: highest described index + 1 */
	__u32 reserved;		/* zero */
};

#define SV_READ_COUNTERS_SIZE_VER0	32
#define SV_IOC_READ_COUNTERS _IOWR(SV_IOC_MAGIC, SV_NR_READ_COUNTERS, \
				   struct sv_read_counters)

/*
 * ---- Receive WQs, indirection tables and RSS QPs (0x68-0x6f) ----
 *
 * SV_IOC_CREATE_WQ: a receive work queue (IBV_WQT_RQ) with its own ring
 * (the RQ format: struct sv_recv_wqe and max_sge struct sv_sge), mapped
 * at ring_offset/ring_len, a CQ and a PD. Its number (wqn) comes from the
 * device's QP number space. SV_IOC_MODIFY_WQ moves it between RESET, RDY
 * and ERR (ERR flushes every posted WQE with IBV_WC_WR_FLUSH_ERR, also
 * those posted later: modify to ERR again) and changes its flags.
 * SV_IOC_CREATE_RWQ_IND_TBL: 1 << log_size WQ handles (a user array of
 * __u32); a WQ in a table cannot be destroyed (EBUSY). SV_IOC_CREATE_RSS_QP:
 * a RAW_PACKET QP without send or receive queue whose flows deliver each
 * frame to the table's WQ at Toeplitz(key, fields) & (size - 1); it is
 * destroyed with SV_IOC_DESTROY_QP. Documentation/steering.rst. Its
 * flags are SV_CREATE_QP_TUNNEL_OFFLOADS, _MLX5_TIR and _TIR_SELF_LB_UC/_MC
 * (others EINVAL); with MLX5_TIR, hashing on inner fields
 * (SV_RX_HASH_INNER) needs TUNNEL_OFFLOADS (EOPNOTSUPP), as on mlx5.
 */
enum sv_rss_nr {
	SV_NR_CREATE_WQ = 0x68,
	SV_NR_MODIFY_WQ = 0x69,
	SV_NR_DESTROY_WQ = 0x6a,
	SV_NR_CREATE_RWQ_IND_TBL = 0x6b,
	SV_NR_DESTROY_RWQ_IND_TBL = 0x6c,
	SV_NR_CREATE_RSS_QP = 0x6d,
};

#define SV_MAX_WQ			16384	/* per device */
#define SV_MAX_RWQ_IND_TBL		4096	/* per device */
#define SV_MAX_LOG_IND_TBL_SIZE		10	/* 1024 entries */

/* enum ibv_wq_type */
#define SV_WQT_RQ			0
/* enum ibv_wq_state */
#define SV_WQS_RESET			0
#define SV_WQS_RDY			1
#define SV_WQS_ERR			2
/* enum ibv_wq_flags */
#define SV_WQ_FLAGS_CVLAN_STRIPPING	0x1U
#define SV_WQ_FLAGS_SCATTER_FCS		0x2U
#define SV_WQ_FLAGS_DELAY_DROP		0x4U
#define SV_WQ_FLAGS_PCI_WRITE_END_PADDING 0x8U
/* enum ibv_wq_attr_mask */
#define SV_WQ_ATTR_STATE		0x1U
#define SV_WQ_ATTR_CURR_STATE		0x2U
#define SV_WQ_ATTR_FLAGS		0x4U
/* enum ibv_rx_hash_function_flags, enum ibv_rx_hash_fields */
#define SV_RX_HASH_FUNC_TOEPLITZ	0x1U
#define SV_RX_HASH_SRC_IPV4		0x1ULL
#define SV_RX_HASH_DST_IPV4		0x2ULL
#define SV_RX_HASH_SRC_IPV6		0x4ULL
#define SV_RX_HASH_DST_IPV6		0x8ULL
#define SV_RX_HASH_SRC_PORT_TCP		0x10ULL
#define SV_RX_HASH_DST_PORT_TCP		0x20ULL
#define SV_RX_HASH_SRC_PORT_UDP		0x40ULL
#define SV_RX_HASH_DST_PORT_UDP		0x80ULL
#define SV_RX_HASH_IPSEC_SPI		0x100ULL
#define SV_RX_HASH_INNER		0x80000000ULL
#define SV_RX_HASH_KEY_LEN		40

struct sv_create_wq {
	__u32 size;
	__u32 wq_type;		/* in: SV_WQT_RQ */
	__u32 pd_handle;	/* in */
	__u32 cq_handle;	/* in */
	__u32 max_wr;		/* in/out: 1..the device's max_qp_wr */
	__u32 max_sge;		/* in/out: 0..SV_MAX_SGE */
	__u32 flags;		/* in: SV_WQ_FLAGS_* */
	__u32 reserved;		/* must be zero */
	__u64 user_handle;	/* in */
	__u32 handle;		/* out */
	__u32 wqn;		/* out */
	__u64 ring_offset;	/* out: mmap offset of the ring */
	__u64 ring_len;		/* out */
};

#define SV_CREATE_WQ_SIZE_VER0		64
#define SV_IOC_CREATE_WQ _IOWR(SV_IOC_MAGIC, SV_NR_CREATE_WQ, \
			       struct sv_create_wq)

struct sv_modify_wq {
	__u32 size;
	__u32 handle;		/* in */
	__u32 attr_mask;	/* in: SV_WQ_ATTR_* */
	__u32 state;		/* in: SV_WQS_* */
	__u32 curr_state;	/* in: with SV_WQ_ATTR_CURR_STATE */
	__u32 flags;		/* in: with SV_WQ_ATTR_FLAGS, ... */
	__u32 flags_mask;	/* in: ... the flags to change */
	__u32 reserved;		/* must be zero */
};

#define SV_MODIFY_WQ_SIZE_VER0		32
#define SV_IOC_MODIFY_WQ _IOWR(SV_IOC_MAGIC, SV_NR_MODIFY_WQ, \
			       struct sv_modify_wq)

struct sv_destroy_wq {
	__u32 size;
	__u32 handle;		/* in */
};

#define SV_DESTROY_WQ_SIZE_VER0		8
#define SV_IOC_DESTROY_WQ _IOWR(SV_IOC_MAGIC, SV_NR_DESTROY_WQ, \
				struct sv_destroy_wq)

struct sv_create_rwq_ind_tbl {
	__u32 size;
	__u32 log_size;		/* in: 0..SV_MAX_LOG_IND_TBL_SIZE */
	__u64 wq_handles;	/* in: user address of 1 << log_size __u32 */
	__u32 handle;		/* out */
	__u32 ind_tbl_num;	/* out */
};

#define SV_CREATE_RWQ_IND_TBL_SIZE_VER0	24
#define SV_IOC_CREATE_RWQ_IND_TBL _IOWR(SV_IOC_MAGIC, \
					SV_NR_CREATE_RWQ_IND_TBL, \
					struct sv_create_rwq_ind_tbl)

struct sv_destroy_rwq_ind_tbl {
	__u32 size;
	__u32 handle;		/* in */
};

#define SV_DESTROY_RWQ_IND_TBL_SIZE_VER0	8
#define SV_IOC_DESTROY_RWQ_IND_TBL _IOWR(SV_IOC_MAGIC, \
					 SV_NR_DESTROY_RWQ_IND_TBL, \
					 struct sv_destroy_rwq_ind_tbl)

struct sv_create_rss_qp {
	__u32 size;
	__u32 pd_handle;	/* in */
	__u32 ind_tbl_handle;	/* in */
	__u32 hash_function;	/* in: SV_RX_HASH_FUNC_TOEPLITZ */
	__u64 fields_mask;	/* in: SV_RX_HASH_* */
	__u32 key_len;		/* in: SV_RX_HASH_KEY_LEN */
	__u32 flags;		/* in: SV_CREATE_QP_* (see above) */
	__u8 key[SV_RX_HASH_KEY_LEN];	/* in */
	__u64 user_handle;	/* in */
	__u32 handle;		/* out: a QP handle */
	__u32 qpn;		/* out */
};

#define SV_CREATE_RSS_QP_SIZE_VER0	88
#define SV_IOC_CREATE_RSS_QP _IOWR(SV_IOC_MAGIC, SV_NR_CREATE_RSS_QP, \
				   struct sv_create_rss_qp)

#endif /* _UAPI_SOFTVERBS_ABI_H */
