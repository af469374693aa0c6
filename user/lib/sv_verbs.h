/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libsoftverbs internals shared by the library's files.
 *
 * The library is a drop-in libibverbs: it compiles against the system's
 * <infiniband/verbs.h> and fills its structs so the header's inline
 * functions dispatch into our code. Each verbs object type lives in one
 * file (pd.c, mr.c, cq.c, qp.c, ...), matching kernel/<type>.c.
 */
#ifndef SV_VERBS_H
#define SV_VERBS_H

#include <errno.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"

/* An opened softverbs device: the verbs context and its char device fd. */
struct sv_context {
	struct verbs_context vctx;	/* first: ibv_context is inside */
};

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

static inline struct sv_context *to_svctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct sv_context, vctx.context);
}

/*
 * Issue one softverbs ioctl; arg is an ABI struct whose first member is its
 * size. Returns 0, or an errno value (also left in errno), as the verbs
 * calls that return int do.
 */
static inline int sv_cmd(struct ibv_context *ctx, unsigned long req, void *arg)
{
	if (ioctl(ctx->cmd_fd, req, arg) == 0)
		return 0;
	return errno;
}

/* Visibility for functions the version script exports. */
#define SV_EXPORT __attribute__((visibility("default")))

/* PD and MR (pd.c, mr.c): ibv_pd.handle / ibv_mr.handle are kernel handles. */
struct sv_pd {
	struct ibv_pd ibpd;
};

struct sv_mr {
	struct ibv_mr ibmr;
};

static inline struct sv_pd *to_svpd(struct ibv_pd *pd)
{
	return container_of(pd, struct sv_pd, ibpd);
}

static inline struct sv_mr *to_svmr(struct ibv_mr *mr)
{
	return container_of(mr, struct sv_mr, ibmr);
}

#endif /* SV_VERBS_H */
