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

#endif /* SV_COMPAT_H */
