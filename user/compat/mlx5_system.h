/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libmlx5.so.1 beside rdma-core's (mlx5_system.c): every mlx5dv_* call
 * on an object that is not softverbs' (a real mlx5 device's, or any other
 * device the system's libibverbs serves) is made by rdma-core's libmlx5,
 * loaded in the link-map namespace of the system's libibverbs, the
 * instance that is that namespace's mlx5 provider. A program then gets
 * exactly what rdma-core alone would give it, on those devices.
 *
 * Which library an argument belongs to:
 *  - a device, a context, or a verbs object that names its context (a
 *    QP, CQ, PD ...): the system's when the device is not ours;
 *  - an mlx5dv object (a DR domain, a flow matcher, a DevX object, an
 *    mkey ...): the system's when that library made it. Those its
 *    creators return are kept in a set until they are destroyed.
 */
#ifndef SV_MLX5_SYSTEM_H
#define SV_MLX5_SYSTEM_H

#include <stdbool.h>
#include <infiniband/mlx5dv.h>

/* A device or context of the system's, and its libmlx5 is loaded. */
bool sv_mlx5s_device(struct ibv_device *dev);
bool sv_mlx5s_context(struct ibv_context *ctx);
/* It is loaded (the devices of mlx5dv_get_vfio_device_list() are its). */
bool sv_mlx5s_loaded(void);
/* An mlx5dv object the system's libmlx5 made (and did not destroy). */
bool sv_mlx5s_object(const void *obj);
void sv_mlx5s_keep(const void *obj);
void sv_mlx5s_forget(const void *obj);
/* Its definition of @name (@version: a node of it, or NULL). */
void *sv_mlx5s_sym(const char *name, const char *version);
/* errno as that namespace's libc has it. */
void sv_mlx5s_errno(void);

/*
 * For our DR actions that name no domain (drop, default miss, tag, pop
 * VLAN): the system's twin of one, made on its first use in one of the
 * system's rules, arrays or samplers (mlx5_dr.c); NULL + errno.
 */
struct mlx5dv_dr_action *sv_dr_action_system(struct mlx5dv_dr_action *a);

#define sv_ctx_of(o)	((o) ? (o)->context : NULL)

#define SV_MLX5S_CALL(fn, ...)						\
	({								\
		__auto_type _sv_r =					\
			((__typeof__(&fn))sv_mlx5s_sym(#fn, NULL))(__VA_ARGS__); \
		sv_mlx5s_errno();					\
		_sv_r;							\
	})

#define SV_MLX5S_CALL_VOID(fn, ...)					\
	do {								\
		((__typeof__(&fn))sv_mlx5s_sym(#fn, NULL))(__VA_ARGS__); \
		sv_mlx5s_errno();					\
	} while (0)

/* At the top of an exported call: when @cond, the system's makes it. */
#define SV_MLX5S_IF(cond, fn, ...)					\
	do {								\
		if (cond)						\
			return SV_MLX5S_CALL(fn, __VA_ARGS__);		\
	} while (0)

#define SV_MLX5S_CTX(ctx, fn, ...)					\
	SV_MLX5S_IF(sv_mlx5s_context(ctx), fn, __VA_ARGS__)
#define SV_MLX5S_OBJ(obj, fn, ...)					\
	SV_MLX5S_IF(sv_mlx5s_object(obj), fn, __VA_ARGS__)

#define SV_MLX5S_OBJ_VOID(obj, fn, ...)					\
	do {								\
		if (sv_mlx5s_object(obj)) {				\
			SV_MLX5S_CALL_VOID(fn, __VA_ARGS__);		\
			return;						\
		}							\
	} while (0)

/* ... a creator: what it returns is the system's. */
#define SV_MLX5S_NEW(cond, fn, ...)					\
	do {								\
		if (cond) {						\
			__auto_type _sv_o = SV_MLX5S_CALL(fn, __VA_ARGS__); \
									\
			if (_sv_o)					\
				sv_mlx5s_keep(_sv_o);			\
			return _sv_o;					\
		}							\
	} while (0)

/* ... a destructor of @obj: 0 when it is gone. */
#define SV_MLX5S_GONE(obj, fn, ...)					\
	do {								\
		if (sv_mlx5s_object(obj)) {				\
			int _sv_r = SV_MLX5S_CALL(fn, __VA_ARGS__);	\
									\
			if (!_sv_r)					\
				sv_mlx5s_forget(obj);			\
			return _sv_r;					\
		}							\
	} while (0)

#define SV_MLX5S_GONE_VOID(obj, fn, ...)				\
	do {								\
		if (sv_mlx5s_object(obj)) {				\
			SV_MLX5S_CALL_VOID(fn, __VA_ARGS__);		\
			sv_mlx5s_forget(obj);				\
			return;						\
		}							\
	} while (0)

#endif /* SV_MLX5_SYSTEM_H */
