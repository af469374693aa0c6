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
