/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * softverbs compat providers: libmlx5.so.1 and libefa.so.1 stand-ins.
 *
 * Debian's perftest (and other rdma-core users) link the direct-verbs
 * libraries of the vendors they support, with BIND_NOW, so the loader must
 * find every mlx5dv_* and efadv_* symbol they name before main() runs.
 * rdma-core's own provider libraries cannot be loaded next to our
 * libibverbs.so.1 (they need its IBVERBS_PRIVATE_* symbols), so the compat
 * directory holds these instead: the same symbols in the same version
 * nodes, each answering for softverbs devices (none of which is an mlx5 or
 * EFA device) or failing the way its man page says calls fail: NULL with
 * errno EOPNOTSUPP, an errno value EOPNOTSUPP, or -1 with errno. The
 * machine's other devices are rdma-core's: libmlx5 hands their calls to
 * rdma-core's libmlx5 in the namespace of rdma-core's libibverbs
 * (mlx5_system.h).
 *
 * The stubs ignore their arguments; compat/ is built with
 * -Wno-unused-parameter rather than marking every one of them.
 */
#ifndef SV_COMPAT_H
#define SV_COMPAT_H

#include <errno.h>
#include <stddef.h>

#define SV_EXPORT	__attribute__((visibility("default")))
#define SV_NOTSUP_NULL	do { errno = EOPNOTSUPP; return NULL; } while (0)
#define SV_NOTSUP_NEG1	do { errno = EOPNOTSUPP; return -1; } while (0)

#endif /* SV_COMPAT_H */
