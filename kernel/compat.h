/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels softverbs builds for (Debian bookworm's
 * 6.1 and 6.12), kept in one place as out-of-tree modules do.
 */
#ifndef SV_COMPAT_H
#define SV_COMPAT_H

#include <linux/version.h>

/* struct class::devnode takes a const struct device since 6.2. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define SV_DEVNODE_CONST const
#else
#define SV_DEVNODE_CONST
#endif

/* vm_flags became read-only behind vm_flags_set/clear() in 6.3. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define sv_vm_flags_set(vma, flags)	vm_flags_set(vma, flags)
#define sv_vm_flags_clear(vma, flags)	vm_flags_clear(vma, flags)
#else
#define sv_vm_flags_set(vma, flags)	((vma)->vm_flags |= (flags))
#define sv_vm_flags_clear(vma, flags)	((vma)->vm_flags &= ~(flags))
#endif

/*
 * GUP flags of a long-term pin for an MR, as the kernel's own RDMA core
 * (ib_umem_get) uses them: before 6.2 it always pinned for writing, with
 * FOLL_FORCE when the MR is read-only (the reliable R/O long-term pin of
 * that time); since 6.2 FOLL_WRITE only when the MR can be written.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define SV_GUP_LONGTERM(writable) \
	(FOLL_LONGTERM | ((writable) ? FOLL_WRITE : 0))
#else
#define SV_GUP_LONGTERM(writable) \
	(FOLL_LONGTERM | FOLL_WRITE | ((writable) ? 0 : FOLL_FORCE))
#endif

/*
 * A dump's parsed attributes: genl_dumpit_info carries a struct genl_info
 * since 6.2 (split ops).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define sv_genl_dump_attrs(cb)	(genl_dumpit_info(cb)->info.attrs)
#else
#define sv_genl_dump_attrs(cb)	(genl_dumpit_info(cb)->attrs)
#endif

/* The unaligned access helpers moved to <linux/unaligned.h> in 6.12. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * A dma-buf's kernel mapping without its reservation lock held: 6.2 made
 * dma_buf_vmap() want it and added the _unlocked pair; before, the plain
 * pair took a lock of its own.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define sv_dma_buf_vmap		dma_buf_vmap_unlocked
#define sv_dma_buf_vunmap	dma_buf_vunmap_unlocked
#else
#define sv_dma_buf_vmap		dma_buf_vmap
#define sv_dma_buf_vunmap	dma_buf_vunmap
#endif

#endif /* SV_COMPAT_H */
