// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * XRC domains and the QPs that share them: ibv_open_xrcd(),
 * ibv_close_xrcd() and ibv_open_qp() (the context ops the header's inline
 * functions call). The domain is the kernel's (kernel/xrc.c): opening it
 * with a file descriptor joins every other process that opened the same
 * file. XRC SRQs are srq.c's, XRC INI and TGT QPs qp.c's.
 */
#include <fcntl.h>
#include <stdlib.h>

#include "sv_verbs.h"

#define SV_XRCD_INIT_ATTR_KNOWN	(IBV_XRCD_INIT_ATTR_FD |		\
				 IBV_XRCD_INIT_ATTR_OFLAGS)

/* As rdma-core's ibv_cmd_open_xrcd(): fd and oflags are both needed. */
static struct ibv_xrcd *sv_open_xrcd(struct ibv_context *ctx,
				     struct ibv_xrcd_init_attr *attr)
{
	struct sv_open_xrcd o = { .size = sizeof(o) };
	struct sv_xrcd *x;
	int ret;

	if (!attr || (attr->comp_mask & ~(uint32_t)SV_XRCD_INIT_ATTR_KNOWN)) {
		errno = attr ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) ||
	    !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		errno = ENOMEM;
		return NULL;
	}
	o.fd = attr->fd;
	o.oflags = attr->oflags;
	ret = sv_cmd(ctx, SV_IOC_OPEN_XRCD, &o);
	if (ret) {
		free(x);
		errno = ret;
		return NULL;
	}
	x->xrcd.context = ctx;
	x->handle = o.handle;
	return &x->xrcd;
}

static int sv_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct sv_xrcd *x = to_svxrcd(xrcd);
	struct sv_close_xrcd c = { .size = sizeof(c), .handle = x->handle };
	int ret;

	ret = sv_cmd(xrcd->context, SV_IOC_CLOSE_XRCD, &c);
	if (ret)
		return ret;
	free(x);
	return 0;
}

#define SV_QP_OPEN_ATTR_NEEDED	(IBV_QP_OPEN_ATTR_NUM |			\
				 IBV_QP_OPEN_ATTR_XRCD |		\
				 IBV_QP_OPEN_ATTR_TYPE)

/*
 * A handle on another process's (or this one's) XRC TGT QP, as rdma-core's
 * ibv_cmd_open_qp(): no PD, CQs or queues, its state unknown until asked.
 */
static struct ibv_qp *sv_open_qp(struct ibv_context *ctx,
				 struct ibv_qp_open_attr *attr)
{
	struct sv_open_qp o = { .size = sizeof(o) };
	struct sv_qp *qp;
	int ret;

	if (attr->comp_mask >= IBV_QP_OPEN_ATTR_RESERVED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & SV_QP_OPEN_ATTR_NEEDED) !=
	    SV_QP_OPEN_ATTR_NEEDED || !attr->xrcd ||
	    attr->xrcd->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	o.xrcd_handle = to_svxrcd(attr->xrcd)->handle;
	o.qpn = attr->qp_num;
	o.qp_type = attr->qp_type;
	o.user_handle = (uintptr_t)&qp->qpx.qp_base;
	ret = sv_cmd(ctx, SV_IOC_OPEN_QP, &o);
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	sv_qp_init_base(qp, ctx, o.handle, attr->qp_num, attr->qp_type);
	qp->qpx.qp_base.qp_context = attr->qp_context;
	qp->qpx.qp_base.state = IBV_QPS_UNKNOWN;
	qp->kqp_type = SV_QPT_XRC_RECV;
	return &qp->qpx.qp_base;
}

static int sv_xrcd_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.open_xrcd = sv_open_xrcd;
	ctx->vctx.close_xrcd = sv_close_xrcd;
	ctx->vctx.open_qp = sv_open_qp;
	return 0;
}
SV_CTX_PROVIDER(xrcd, sv_xrcd_ctx_init, NULL);
