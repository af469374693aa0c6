/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The system's libibverbs beside ours (system.c): when this library is the
 * libibverbs.so.1 a program loaded, the machine's other RDMA devices (rxe,
 * a ConnectX ...) are served by rdma-core's libibverbs, loaded in a
 * link-map namespace of its own (dlmopen), so that its providers bind to
 * it and not to us. ibv_get_device_list() lists both; every exported verb
 * that takes an object of that library hands it over (SV_SYSTEM_FORWARD).
 * The data path (ibv_post_send, ibv_poll_cq ...) needs nothing: verbs.h
 * calls through the object's own context ops.
 */
#ifndef SV_SYSTEM_H
#define SV_SYSTEM_H

#include <stdbool.h>
#include <infiniband/verbs.h>

/* Load it (once): true if it is there and usable. */
bool sv_system_load(void);
/* A device, a context not ours: the system library's (it is loaded). */
bool sv_system_device(struct ibv_device *dev);
bool sv_system_context(struct ibv_context *ctx);
/* Its definition of an exported verb (aborts if it has none). */
void *sv_system_sym(const char *name);
/* Set errno to the value it has in the system library's libc. */
void sv_system_errno(void);

/*
 * Call it, then take its errno: that library has a libc, and so an errno,
 * of its own (sv_system_errno()).
 */
#define SV_SYSTEM_CALL(fn, ...)						\
	({								\
		__auto_type _sv_r =					\
			((__typeof__(&fn))sv_system_sym(#fn))(__VA_ARGS__); \
		sv_system_errno();					\
		_sv_r;							\
	})

#define SV_SYSTEM_CALL_VOID(fn, ...)					\
	do {								\
		((__typeof__(&fn))sv_system_sym(#fn))(__VA_ARGS__);	\
		sv_system_errno();					\
	} while (0)

/* At the top of an exported verb: an object of the system's goes there. */
#define SV_SYSTEM_FORWARD(ctx, fn, ...)					\
	do {								\
		if (sv_system_context(ctx))				\
			return SV_SYSTEM_CALL(fn, __VA_ARGS__);		\
	} while (0)

#define SV_SYSTEM_FORWARD_DEV(dev, fn, ...)				\
	do {								\
		if (sv_system_device(dev))				\
			return SV_SYSTEM_CALL(fn, __VA_ARGS__);		\
	} while (0)

/* The device list's system part (device.c). */
struct ibv_device **sv_system_device_list(int *num);
void sv_system_free_device_list(struct ibv_device **list);

#endif /* SV_SYSTEM_H */
