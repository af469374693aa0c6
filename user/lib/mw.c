// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Memory windows: ibv_alloc_mw(), ibv_dealloc_mw() and ibv_bind_mw()
 * (the context ops the header's inline functions call). The window is
 * the kernel's (kernel/mr/mw.c); binding it is a send WR, IBV_WR_BIND_MW
 * (post.c), checked by the kernel when it executes: a bind the rules
 * refuse completes with IBV_WC_MW_BIND_ERR.
 */
#include <stdlib.h>

#include "sv_verbs.h"

static struct ibv_mw *sv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct sv_alloc_mw cmd = { .size = sizeof(cmd) };
	struct ibv_mw *mw;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	cmd.pd_handle = pd->handle;
	cmd.type = type;
	ret = sv_cmd(pd->context, SV_IOC_ALLOC_MW, &cmd);
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = cmd.rkey;
	mw->handle = cmd.mw_handle;
	mw->type = type;
	return mw;
}

static int sv_dealloc_mw(struct ibv_mw *mw)
{
	struct sv_dealloc_mw cmd = { .size = sizeof(cmd),
				     .mw_handle = mw->handle };
	int ret;

	ret = sv_cmd(mw->context, SV_IOC_DEALLOC_MW, &cmd);
	if (ret)
		return ret;
	free(mw);
	return 0;
}

/*
 * ibv_bind_mw() of a type 1 window (the header checked its type and the
 * MR's PD): a bind WR with the next key, which the window has from now on,
 * as on mlx5.
 */
static int sv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		      struct ibv_mw_bind *b)
{
	struct ibv_send_wr wr = {
		.wr_id = b->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = b->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = b->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	ret = qp->context->ops.post_send(qp, &wr, &bad);
	if (ret)
		return ret;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

static int sv_mw_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.context.ops.alloc_mw = sv_alloc_mw;
	ctx->vctx.context.ops.dealloc_mw = sv_dealloc_mw;
	ctx->vctx.context.ops.bind_mw = sv_bind_mw;
	return 0;
}

SV_CTX_PROVIDER(mw, sv_mw_ctx_init, NULL);
