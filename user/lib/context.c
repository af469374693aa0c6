// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs: opening and closing a device, and the context's ops
 * tables. Every op starts at a default that fails with EOPNOTSUPP; the
 * files that implement verbs install theirs through SV_CTX_PROVIDER (the
 * design is written in sv_verbs.h).
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sv_verbs.h"
#include "sv_private.h"
#include "sv_system.h"

/* The providers every file registered, collected by the linker. */
extern const struct sv_ctx_provider __start_sv_ctx_providers[]
	__attribute__((weak, visibility("hidden")));
extern const struct sv_ctx_provider __stop_sv_ctx_providers[]
	__attribute__((weak, visibility("hidden")));

/* ---- defaults: everything fails until a file installs its op ---- */

#define SV_NOTSUP_PTR(ret)	do { errno = EOPNOTSUPP; return ret; } while (0)

static void *sv_nop_compat(void)
{
	SV_NOTSUP_PTR(NULL);
}

static void sv_nop_placeholder(void)
{
}

static int sv_nop_compat_query_port(struct ibv_context *c, uint8_t p,
				    struct _compat_ibv_port_attr *a)
{
	(void)c; (void)p; (void)a;
	return EOPNOTSUPP;
}

static struct ibv_mw *sv_nop_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type t)
{
	(void)pd; (void)t;
	SV_NOTSUP_PTR(NULL);
}

static int sv_nop_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
			  struct ibv_mw_bind *b)
{
	(void)qp; (void)mw; (void)b;
	return EOPNOTSUPP;
}

static int sv_nop_dealloc_mw(struct ibv_mw *mw)
{
	(void)mw;
	return EOPNOTSUPP;
}

/* ibv_poll_cq() reports failure as a negative value. */
static int sv_nop_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	(void)cq; (void)n; (void)wc;
	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;
}

static int sv_nop_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	(void)cq; (void)solicited_only;
	return EOPNOTSUPP;
}

static int sv_nop_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
				struct ibv_recv_wr **bad_wr)
{
	(void)srq;
	*bad_wr = wr;
	return EOPNOTSUPP;
}

static int sv_nop_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			    struct ibv_send_wr **bad_wr)
{
	(void)qp;
	*bad_wr = wr;
	return EOPNOTSUPP;
}

static int sv_nop_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad_wr)
{
	(void)qp;
	*bad_wr = wr;
	return EOPNOTSUPP;
}

static int sv_nop_query_port(struct ibv_context *c, uint8_t p,
			     struct ibv_port_attr *a, size_t len)
{
	(void)c; (void)p; (void)a; (void)len;
	return EOPNOTSUPP;
}

static int sv_nop_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice adv,
			    uint32_t flags, struct ibv_sge *sg, uint32_t n)
{
	(void)pd; (void)adv; (void)flags; (void)sg; (void)n;
	return EOPNOTSUPP;
}

static struct ibv_mr *sv_nop_alloc_null_mr(struct ibv_pd *pd)
{
	(void)pd;
	SV_NOTSUP_PTR(NULL);
}

static int sv_nop_read_counters(struct ibv_counters *c, uint64_t *v,
				uint32_t n, uint32_t flags)
{
	(void)c; (void)v; (void)n; (void)flags;
	return EOPNOTSUPP;
}

static int sv_nop_attach_counters_point_flow(struct ibv_counters *c,
					     struct ibv_counter_attach_attr *a,
					     struct ibv_flow *f)
{
	(void)c; (void)a; (void)f;
	return EOPNOTSUPP;
}

static struct ibv_counters *
sv_nop_create_counters(struct ibv_context *c, struct ibv_counters_init_attr *a)
{
	(void)c; (void)a;
	SV_NOTSUP_PTR(NULL);
}

static int sv_nop_destroy_counters(struct ibv_counters *c)
{
	(void)c;
	return EOPNOTSUPP;
}

static struct ibv_mr *sv_nop_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm,
				       uint64_t off, size_t len,
				       unsigned int access)
{
	(void)pd; (void)dm; (void)off; (void)len; (void)access;
	SV_NOTSUP_PTR(NULL);
}

static struct ibv_dm *sv_nop_alloc_dm(struct ibv_context *c,
				      struct ibv_alloc_dm_attr *a)
{
	(void)c; (void)a;
	SV_NOTSUP_PTR(NULL);
}

static int sv_nop_free_dm(struct ibv_dm *dm)
{
	(void)dm;
	return EOPNOTSUPP;
}

static int sv_nop_modify_flow_action_esp(struct ibv_flow_action *action,
					 struct ibv_flow_action_esp_attr *a)
{
	(void)action; (void)a;
	return EOPNOTSUPP;
}

static int sv_nop_destroy_flow_action(struct ibv_flow_action *action)
{
	(void)action;
	return EOPNOTSUPP;
}

static struct ibv_flow_action *
sv_nop_create_flow_action_esp(struct ibv_context *c,
			      struct ibv_flow_action_esp_attr *a)
{
	(void)c; (void)a;
	SV_NOTSUP_PTR(NULL);
}

static int sv_nop_modify_qp_rate_limit(struct ibv_qp *qp,
				       struct ibv_qp_rate_limit_attr *a)
{
	(void)qp; (void)a;
	return EOPNOTSUPP;
}

static struct ibv_pd *
sv_nop_alloc_parent_domain(struct ibv_context *c,
			   struct ibv_parent_domain_init_attr *a)
{
	(void)c; (void)a;
	SV_NOTSUP_PTR(NULL);
}

static int sv_nop_dealloc_td(struct ibv_td *td)
{
	(void)td;
	return EOPNOTSUPP;
}

static struct ibv_td *sv_nop_alloc_td(struct ibv_context *c,
				      struct ibv_td_init_attr *a)
{
	(void)c; (void)a;
	SV_NOTSUP_PTR(NULL);
}

static int sv_nop_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *a)
{
	(void)cq; (void)a;
	return EOPNOTSUPP;
}

static int sv_nop_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op,
			       struct ibv_ops_wr **bad_op)
{
	(void)srq;
	*bad_op = op;
	return EOPNOTSUPP;
}

static int sv_nop_destroy_rwq_ind_table(struct ibv_rwq_ind_table *t)
{
	(void)t;
	return EOPNOTSUPP;
}

static struct ibv_rwq_ind_table *
sv_nop_create_rwq_ind_table(struct ibv_context *c,
			    struct ibv_rwq_ind_table_init_attr *a)
{
	(void)c; (void)a;
	SV_NOTSUP_PTR(NULL);
}

static int sv_nop_destroy_wq(struct ibv_wq *wq)
{
	(void)wq;
	return EOPNOTSUPP;
}

static int sv_nop_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *a)
{
	(void)wq; (void)a;
	return EOPNOTSUPP;
}

static struct ibv_wq *sv_nop_create_wq(struct ibv_context *c,
				       struct ibv_wq_init_attr *a)
{
	(void)c; (void)a;
	SV_NOTSUP_PTR(NULL);
}

static int sv_nop_query_rt_values(struct ibv_context *c,
				  struct ibv_values_ex *v)
{
	(void)c; (void)v;
	return EOPNOTSUPP;
}

static struct ibv_cq_ex *sv_nop_create_cq_ex(struct ibv_context *c,
					     struct ibv_cq_init_attr_ex *a)
{
	(void)c; (void)a;
	SV_NOTSUP_PTR(NULL);
}

static int sv_nop_query_device_ex(struct ibv_context *c,
				  const struct ibv_query_device_ex_input *in,
				  struct ibv_device_attr_ex *a, size_t len)
{
	(void)c; (void)in; (void)a; (void)len;
	return EOPNOTSUPP;
}

static int sv_nop_compat_query_device(struct ibv_context *c,
				      struct ibv_device_attr *a)
{
	(void)c; (void)a;
	return EOPNOTSUPP;
}

static int sv_nop_destroy_flow(struct ibv_flow *flow)
{
	(void)flow;
	return EOPNOTSUPP;
}

static struct ibv_flow *sv_nop_create_flow(struct ibv_qp *qp,
					   struct ibv_flow_attr *a)
{
	(void)qp; (void)a;
	SV_NOTSUP_PTR(NULL);
}

static struct ibv_qp *sv_nop_open_qp(struct ibv_context *c,
				     struct ibv_qp_open_attr *a)
{
	(void)c; (void)a;
	SV_NOTSUP_PTR(NULL);
}

static struct ibv_qp *sv_nop_create_qp_ex(struct ibv_context *c,
					  struct ibv_qp_init_attr_ex *a)
{
	(void)c; (void)a;
	SV_NOTSUP_PTR(NULL);
}

static int sv_nop_get_srq_num(struct ibv_srq *srq, uint32_t *num)
{
	(void)srq; (void)num;
	return EOPNOTSUPP;
}

static struct ibv_srq *sv_nop_create_srq_ex(struct ibv_context *c,
					    struct ibv_srq_init_attr_ex *a)
{
	(void)c; (void)a;
	SV_NOTSUP_PTR(NULL);
}

static struct ibv_xrcd *sv_nop_open_xrcd(struct ibv_context *c,
					 struct ibv_xrcd_init_attr *a)
{
	(void)c; (void)a;
	SV_NOTSUP_PTR(NULL);
}

static int sv_nop_close_xrcd(struct ibv_xrcd *xrcd)
{
	(void)xrcd;
	return EOPNOTSUPP;
}

/* Point every op of the context at its failing default. */
static void sv_ctx_default_ops(struct verbs_context *v)
{
	struct ibv_context_ops *o = &v->context.ops;

	o->_compat_query_device = sv_nop_compat_query_device;
	o->_compat_query_port = sv_nop_compat_query_port;
	o->_compat_alloc_pd = sv_nop_compat;
	o->_compat_dealloc_pd = sv_nop_compat;
	o->_compat_reg_mr = sv_nop_compat;
	o->_compat_rereg_mr = sv_nop_compat;
	o->_compat_dereg_mr = sv_nop_compat;
	o->alloc_mw = sv_nop_alloc_mw;
	o->bind_mw = sv_nop_bind_mw;
	o->dealloc_mw = sv_nop_dealloc_mw;
	o->_compat_create_cq = sv_nop_compat;
	o->poll_cq = sv_nop_poll_cq;
	o->req_notify_cq = sv_nop_req_notify_cq;
	o->_compat_cq_event = sv_nop_compat;
	o->_compat_resize_cq = sv_nop_compat;
	o->_compat_destroy_cq = sv_nop_compat;
	o->_compat_create_srq = sv_nop_compat;
	o->_compat_modify_srq = sv_nop_compat;
	o->_compat_query_srq = sv_nop_compat;
	o->_compat_destroy_srq = sv_nop_compat;
	o->post_srq_recv = sv_nop_post_srq_recv;
	o->_compat_create_qp = sv_nop_compat;
	o->_compat_query_qp = sv_nop_compat;
	o->_compat_modify_qp = sv_nop_compat;
	o->_compat_destroy_qp = sv_nop_compat;
	o->post_send = sv_nop_post_send;
	o->post_recv = sv_nop_post_recv;
	o->_compat_create_ah = sv_nop_compat;
	o->_compat_destroy_ah = sv_nop_compat;
	o->_compat_attach_mcast = sv_nop_compat;
	o->_compat_detach_mcast = sv_nop_compat;
	o->_compat_async_event = sv_nop_compat;

	v->query_port = sv_nop_query_port;
	v->advise_mr = sv_nop_advise_mr;
	v->alloc_null_mr = sv_nop_alloc_null_mr;
	v->read_counters = sv_nop_read_counters;
	v->attach_counters_point_flow = sv_nop_attach_counters_point_flow;
	v->create_counters = sv_nop_create_counters;
	v->destroy_counters = sv_nop_destroy_counters;
	v->reg_dm_mr = sv_nop_reg_dm_mr;
	v->alloc_dm = sv_nop_alloc_dm;
	v->free_dm = sv_nop_free_dm;
	v->modify_flow_action_esp = sv_nop_modify_flow_action_esp;
	v->destroy_flow_action = sv_nop_destroy_flow_action;
	v->create_flow_action_esp = sv_nop_create_flow_action_esp;
	v->modify_qp_rate_limit = sv_nop_modify_qp_rate_limit;
	v->alloc_parent_domain = sv_nop_alloc_parent_domain;
	v->dealloc_td = sv_nop_dealloc_td;
	v->alloc_td = sv_nop_alloc_td;
	v->modify_cq = sv_nop_modify_cq;
	v->post_srq_ops = sv_nop_post_srq_ops;
	v->destroy_rwq_ind_table = sv_nop_destroy_rwq_ind_table;
	v->create_rwq_ind_table = sv_nop_create_rwq_ind_table;
	v->destroy_wq = sv_nop_destroy_wq;
	v->modify_wq = sv_nop_modify_wq;
	v->create_wq = sv_nop_create_wq;
	v->query_rt_values = sv_nop_query_rt_values;
	v->create_cq_ex = sv_nop_create_cq_ex;
	v->priv = NULL;		/* rdma-core's private data: none here */
	v->query_device_ex = sv_nop_query_device_ex;
	v->ibv_destroy_flow = sv_nop_destroy_flow;
	v->ABI_placeholder2 = sv_nop_placeholder;
	v->ibv_create_flow = sv_nop_create_flow;
	v->ABI_placeholder1 = sv_nop_placeholder;
	v->open_qp = sv_nop_open_qp;
	v->create_qp_ex = sv_nop_create_qp_ex;
	v->get_srq_num = sv_nop_get_srq_num;
	v->create_srq_ex = sv_nop_create_srq_ex;
	v->open_xrcd = sv_nop_open_xrcd;
	v->close_xrcd = sv_nop_close_xrcd;
	v->_ABI_placeholder3 = 0;
	v->sz = sizeof(*v);
}

/* ---- open and close ---- */

static const struct sv_ctx_provider *sv_providers_begin(void)
{
	return __start_sv_ctx_providers;
}

static const struct sv_ctx_provider *sv_providers_end(void)
{
	return __start_sv_ctx_providers ? __stop_sv_ctx_providers
					 : __start_sv_ctx_providers;
}

/* Undo the providers in [begin, end) in reverse order. */
static void sv_providers_fini(struct sv_context *ctx,
			      const struct sv_ctx_provider *end)
{
	const struct sv_ctx_provider *p = end;

	while (p-- != sv_providers_begin())
		if (p->fini)
			p->fini(ctx);
}

/*
 * A context on the device file cmd_fd of device (which it owns once this
 * succeeds): check that the kernel speaks this library's ABI (another
 * version fails with EPROTONOSUPPORT), then run the providers.
 */
static struct ibv_context *sv_ctx_new(struct ibv_device *device, int cmd_fd)
{
	struct sv_device *dev = to_svdev(device);
	struct sv_query_abi abi = { .size = sizeof(abi) };
	const struct sv_ctx_provider *p;
	struct sv_query_device qd;
	struct sv_context *ctx;
	int ret;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->vctx.context.cmd_fd = cmd_fd;
	ctx->vctx.context.device = device;
	ctx->vctx.context.async_fd = -1;
	ctx->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&ctx->vctx.context.mutex, NULL);

	ret = sv_cmd(&ctx->vctx.context, SV_IOC_QUERY_ABI, &abi);
	if (ret)
		goto err_free;
	if (abi.abi_version != SV_ABI_VERSION) {
		ret = EPROTONOSUPPORT;
		goto err_free;
	}
	ret = sv_query_device_raw(&ctx->vctx.context, &qd);
	if (ret)
		goto err_free;
	ctx->vctx.context.num_comp_vectors = qd.num_comp_vectors;

	sv_ctx_default_ops(&ctx->vctx);
	for (p = sv_providers_begin(); p != sv_providers_end(); p++) {
		ret = p->init ? p->init(ctx) : 0;
		if (ret) {
			sv_providers_fini(ctx, p);
			goto err_free;
		}
	}
	sv_device_get(dev);
	return &ctx->vctx.context;

err_free:
	pthread_mutex_destroy(&ctx->vctx.context.mutex);
	free(ctx);
	errno = ret;
	return NULL;
}

/* The device's char device node. */
static void sv_dev_path(const struct ibv_device *device, char *path,
			size_t len)
{
	snprintf(path, len, "%s/%s", SV_DEV_DIR, device->dev_name);
}

/* Open the device's char device for a context of its own. */
SV_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	SV_SYSTEM_FORWARD_DEV(device, ibv_open_device, device);
	char path[IBV_SYSFS_PATH_MAX];
	struct ibv_context *ctx;
	int fd, err;

	sv_dev_path(device, path, sizeof(path));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ctx = sv_ctx_new(device, fd);
	if (!ctx) {
		err = errno;
		close(fd);
		errno = err;
	}
	return ctx;
}

SV_EXPORT int ibv_close_device(struct ibv_context *context)
{
	SV_SYSTEM_FORWARD(context, ibv_close_device, context);
	struct sv_context *ctx = to_svctx(context);
	struct sv_device *dev = to_svdev(context->device);

	sv_providers_fini(ctx, sv_providers_end());
	close(context->cmd_fd);
	pthread_mutex_destroy(&context->mutex);
	free(ctx);
	sv_device_put(dev);
	return 0;
}

/*
 * The softverbs device whose char device fd is open on, referenced by a
 * device list the caller frees (*list); NULL if fd is no softverbs node.
 */
static struct ibv_device *sv_fd_device(int fd, struct ibv_device ***list)
{
	char path[IBV_SYSFS_PATH_MAX];
	struct ibv_device **l;
	struct stat fst, st;

	*list = NULL;
	if (fstat(fd, &fst) || !S_ISCHR(fst.st_mode))
		return NULL;
	l = ibv_get_device_list(NULL);
	if (!l)
		return NULL;
	*list = l;
	for (; *l; l++) {
		if (!sv_private_device_is_ours(*l))
			continue;
		sv_dev_path(*l, path, sizeof(path));
		if (!stat(path, &st) && S_ISCHR(st.st_mode) &&
		    st.st_rdev == fst.st_rdev)
			return *l;
	}
	return NULL;
}

/*
 * ibv_import_device(3): a context on a dup'd (or passed) cmd_fd of
 * another context; both then share the kernel's objects (the file), so
 * ibv_import_pd() and ibv_import_mr() find them by handle. Closing the
 * context closes cmd_fd (a failed import leaves it open). A file descriptor that is none of ours goes to
 * the system's libibverbs, if it has one (EOPNOTSUPP otherwise).
 */
SV_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct ibv_device **list, *dev = sv_fd_device(cmd_fd, &list);
	struct ibv_context *ctx = NULL;

	if (dev) {
		/* The context keeps its device beyond the list. */
		ctx = sv_ctx_new(dev, cmd_fd);
	} else if (sv_system_load()) {
		ctx = SV_SYSTEM_CALL(ibv_import_device, cmd_fd);
	} else {
		errno = EOPNOTSUPP;
	}
	if (list) {
		int err = errno;

		ibv_free_device_list(list);
		errno = err;
	}
	return ctx;
}
