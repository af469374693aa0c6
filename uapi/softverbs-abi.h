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
 * PD (0x10-0x17) and MR (0x18-0x1f).
 *
 * Handles are per open file. An unknown handle (never allocated, destroyed,
 * or from another file) is ENOENT; a handle of another object type EINVAL.
 */
enum sv_ioctl_nr_pdmr {
	SV_NR_ALLOC_PD = 0x10,
	SV_NR_DEALLOC_PD = 0x11,
	SV_NR_REG_MR = 0x18,
	SV_NR_REREG_MR = 0x19,
	SV_NR_DEREG_MR = 0x1a,
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
 * Memory access flags: the values of enum ibv_access_flags. Bits in
 * SV_ACCESS_OPTIONAL_RANGE are hints (accepted, may be ignored); other
 * unknown bits are EINVAL. REMOTE_WRITE and REMOTE_ATOMIC need
 * LOCAL_WRITE (EINVAL). ON_DEMAND is EOPNOTSUPP.
 */
#define SV_ACCESS_LOCAL_WRITE		0x00000001U
#define SV_ACCESS_REMOTE_WRITE		0x00000002U
#define SV_ACCESS_REMOTE_READ		0x00000004U
#define SV_ACCESS_REMOTE_ATOMIC		0x00000008U
#define SV_ACCESS_MW_BIND		0x00000010U
#define SV_ACCESS_ZERO_BASED		0x00000020U
#define SV_ACCESS_ON_DEMAND		0x00000040U
#define SV_ACCESS_HUGETLB		0x00000080U
#define SV_ACCESS_RELAXED_ORDERING	0x00100000U
#define SV_ACCESS_OPTIONAL_RANGE	0x3ff00000U

/*
 * SV_IOC_REG_MR: register [addr, addr + length) of the caller's memory.
 * The pages are pinned and charged to RLIMIT_MEMLOCK (ENOMEM beyond it,
 * unless CAP_IPC_LOCK). The MR's first byte has I/O virtual address iova,
 * or 0 with SV_ACCESS_ZERO_BASED. length 0, or a range that wraps: EINVAL;
 * longer than the device's max_mr_size: EINVAL; an unmapped range, or a
 * read-only one with a write access: EFAULT. lkey == rkey.
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

/* SV_IOC_DEREG_MR: unpin and uncharge the pages; the keys die. */
struct sv_dereg_mr {
	__u32 size;		/* in */
	__u32 mr_handle;	/* in */
};

#define SV_DEREG_MR_SIZE_VER0	8
#define SV_IOC_DEREG_MR _IOWR(SV_IOC_MAGIC, SV_NR_DEREG_MR, struct sv_dereg_mr)

#endif /* _UAPI_SOFTVERBS_ABI_H */
