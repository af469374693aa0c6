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

#endif /* _UAPI_SOFTVERBS_ABI_H */
