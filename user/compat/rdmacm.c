// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * librdmacm.so.1 for softverbs devices: the rdma_cm API (rdma_cma.h,
 * rdma_verbs.h) over /dev/infiniband/softverbs_cm, whose kernel side
 * speaks the IB CM protocol on the wire (kernel/cm/). As rdma-core's
 * librdmacm does over the kernel's rdma_ucm, this library moves the QPs
 * made on an id through their states: INIT when made, RTR and RTS when
 * the connection is accepted or its response comes (the kernel says
 * which attributes), ERR on a disconnect or a rejection.
 *
 * UD ids resolve their service with SIDR (rdma_connect, rdma_accept);
 * multicast joins are rdmacm_mcast.c's.
 *
 * Synchronous ids (no channel: rdma_create_ep, rdma_get_request) and
 * rdma_migrate_id are rdmacm_sync.c's.
 *
 * Not here yet (EOPNOTSUPP): ECE, rsockets.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rdmacm.h"
#include "../lib/sv_private.h"

/* Opened device contexts and their default PDs, for the library's life */
static pthread_mutex_t sv_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_context **sv_ctxs;
static struct ibv_pd **sv_pds;
static int sv_nctx;

static int sv_open_all(void)
{
	struct ibv_device **list;
	int i, n, ret = 0;

	pthread_mutex_lock(&sv_dev_lock);
	if (sv_ctxs)
		goto out;
	list = ibv_get_device_list(&n);
	if (!list) {
		ret = -1;
		goto out;
	}
	sv_ctxs = calloc(n + 1, sizeof(*sv_ctxs));
	sv_pds = calloc(n + 1, sizeof(*sv_pds));
	if (!sv_ctxs || !sv_pds) {
		free(sv_ctxs);
		free(sv_pds);
		sv_ctxs = NULL;
		sv_pds = NULL;
		ibv_free_device_list(list);
		errno = ENOMEM;
		ret = -1;
		goto out;
	}
	/* The system's librdmacm serves the others (rdmacm_system.c). */
	for (i = 0; i < n; i++) {
		if (!sv_private_device_is_ours(list[i]))
			continue;
		sv_ctxs[sv_nctx] = ibv_open_device(list[i]);
		if (sv_ctxs[sv_nctx])
			sv_nctx++;
	}
	ibv_free_device_list(list);
out:
	pthread_mutex_unlock(&sv_dev_lock);
	return ret;
}

static int sv_ctx_index(const char *name)
{
	int i;

	if (sv_open_all())
		return -1;
	for (i = 0; i < sv_nctx; i++)
		if (!strcmp(ibv_get_device_name(sv_ctxs[i]->device), name))
			return i;
	return -1;
}

static struct ibv_pd *sv_default_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = NULL;
	int i;

	pthread_mutex_lock(&sv_dev_lock);
	for (i = 0; i < sv_nctx; i++) {
		if (sv_ctxs[i] != ctx)
			continue;
		if (!sv_pds[i])
			sv_pds[i] = ibv_alloc_pd(ctx);
		pd = sv_pds[i];
	}
	pthread_mutex_unlock(&sv_dev_lock);
	return pd;
}

int sv_cm_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -1 : 0;
}

/* Both fds in an epoll fd, each non-blocking (sv_cms_wait() waits). */
static int sv_chan_merge(struct sv_cm_chan *c)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		return -1;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, c->kfd, &ev) ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, c->sys->fd, &ev) ||
	    fcntl(c->kfd, F_SETFL, fcntl(c->kfd, F_GETFL) | O_NONBLOCK) ||
	    fcntl(c->sys->fd, F_SETFL,
		  fcntl(c->sys->fd, F_GETFL) | O_NONBLOCK)) {
		close(ep);
		return -1;
	}
	c->ch.fd = ep;
	return 0;
}

/*
 * A channel; the devices are opened here, once, as rdma-core's library
 * finds its devices when its first channel is made, so that binding and
 * listening later take no more than their ioctls (perftest -R's server
 * races its client's connect to listen).
 */
SV_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct sv_cm_chan *c;

	if (sv_open_all())
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->kfd = open(SV_DEV_DIR "/" SV_CM_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (c->kfd < 0) {
		if (errno == ENOENT)
			errno = ENODEV;
		free(c);
		return NULL;
	}
	c->ch.fd = c->kfd;
	c->sys = sv_cms_channel();
	if (c->sys && sv_chan_merge(c)) {
		SV_CMS_VOID(rdma_destroy_event_channel, c->sys);
		c->sys = NULL;
	}
	return &c->ch;
}

SV_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	struct sv_cm_chan *c = sv_chan(ch);

	if (c->sys) {
		SV_CMS_VOID(rdma_destroy_event_channel, c->sys);
		close(ch->fd);
	}
	close(c->kfd);
	free(c);
}

static uint32_t sv_qpt(enum ibv_qp_type t)
{
	return t == IBV_QPT_UD ? SV_QPT_UD : SV_QPT_RC;
}

struct sv_cm_idp *sv_idp_new(struct rdma_event_channel *ch, void *context,
			     enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct sv_cm_idp *p = calloc(1, sizeof(*p));

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->id.channel = ch;
	p->id.context = context;
	p->id.ps = ps;
	p->id.qp_type = qpt;
	return p;
}

void sv_idp_free(struct sv_cm_idp *p)
{
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}

/* An id of qp type qpt; no channel: a synchronous id, with its own. */
int sv_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
		 void *context, enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct sv_cm_create_id c = { .size = sizeof(c), .ps = ps };
	bool sync = !ch;
	struct sv_cm_idp *p;
	int save;

	if (sync) {
		ch = rdma_create_event_channel();
		if (!ch)
			return -1;
	}
	p = sv_idp_new(ch, context, ps, qpt);
	if (!p)
		goto err;
	c.uid = (uintptr_t)p;
	c.qp_type = sv_qpt(qpt);
	if (sv_cm_ioctl(sv_kfd(ch), SV_CM_IOC_CREATE_ID, &c)) {
		sv_idp_free(p);
		goto err;
	}
	p->handle = c.id;
	p->sync = sync;
	*id = &p->id;
	return 0;
err:
	save = errno;
	if (sync)
		rdma_destroy_event_channel(ch);
	errno = save;
	return -1;
}

SV_EXPORT int rdma_create_id(struct rdma_event_channel *ch,
			     struct rdma_cm_id **id, void *context,
			     enum rdma_port_space ps)
{
	return sv_create_id(ch, id, context, ps,
			    ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ?
			    IBV_QPT_UD : IBV_QPT_RC);
}

/* A forwarded id: the system's goes, after the event it holds. */
static int sv_destroy_fwd(struct sv_cm_idp *p)
{
	struct rdma_cm_id *id = &p->id;

	if (id->event) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	if (SV_CMS(rdma_destroy_id, p->sys))
		return -1;
	if (p->sync)
		rdma_destroy_event_channel(id->channel);
	free(p->qp_init_attr);
	sv_idp_free(p);
	return 0;
}

SV_EXPORT int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct sv_cm_idp *p = sv_idp(id);
	struct sv_cm_destroy_id c = { .size = sizeof(c), .id = p->handle };

	if (p->fwd)
		return sv_destroy_fwd(p);
	/* A wildcard's system id beside ours. */
	if (p->sys && SV_CMS(rdma_destroy_id, p->sys))
		return -1;
	p->sys = NULL;
	sv_mc_leave_all(p);
	if (sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_DESTROY_ID, &c))
		return -1;
	if (id->event)		/* a synchronous id's last one */
		rdma_ack_cm_event(id->event);
	/* Its events handed out must all be acked first. */
	pthread_mutex_lock(&p->lock);
	while (p->events_completed < c.events_reported)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
	if (p->sync)
		rdma_destroy_event_channel(id->channel);
	free(p->qp_init_attr);
	sv_idp_free(p);
	return 0;
}

static socklen_t sv_addr_len(const struct sockaddr *a)
{
	switch (a->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

static int sv_copy_addr(struct __kernel_sockaddr_storage *to,
			const struct sockaddr *a)
{
	socklen_t len = sv_addr_len(a);

	if (!len) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	memcpy(to, a, len);
	return 0;
}

/* The kernel's view of the id: addresses, device, path. */
static int sv_query_k(struct sv_cm_idp *p, struct sv_cm_query *out)
{
	struct sv_cm_query q = { .size = sizeof(q), .id = p->handle };
	struct rdma_cm_id *id = &p->id;
	int i;

	if (sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_QUERY, &q))
		return -1;
	if (out)
		*out = q;
	memcpy(&id->route.addr.src_storage, &q.src, sizeof(q.src));
	memcpy(&id->route.addr.dst_storage, &q.dst, sizeof(q.dst));
	memcpy(id->route.addr.addr.ibaddr.sgid.raw, q.sgid, 16);
	memcpy(id->route.addr.addr.ibaddr.dgid.raw, q.dgid, 16);
	id->route.addr.addr.ibaddr.pkey = htobe16(q.pkey);
	if (q.dev_name[0] && !id->verbs) {
		i = sv_ctx_index(q.dev_name);
		if (i < 0) {
			errno = ENODEV;
			return -1;
		}
		id->verbs = sv_ctxs[i];
		id->port_num = q.port_num;
		/* The device's PD, as rdma-core's gives (rdma_reg_msgs()). */
		if (!id->pd)
			id->pd = sv_default_pd(id->verbs);
	}
	if (q.num_paths) {
		struct ibv_sa_path_rec *r = &p->path;

		memset(r, 0, sizeof(*r));
		memcpy(r->sgid.raw, q.sgid, 16);
		memcpy(r->dgid.raw, q.dgid, 16);
		r->pkey = htobe16(q.pkey);
		r->mtu = q.mtu;
		r->mtu_selector = 2;	/* exactly */
		r->hop_limit = q.hop_limit;
		r->traffic_class = q.traffic_class;
		r->reversible = 1;
		r->numb_path = 1;
		r->packet_life_time = 16;
		r->packet_life_time_selector = 2;
		id->route.path_rec = r;
		id->route.num_paths = 1;
	}
	return 0;
}

static int sv_query(struct sv_cm_idp *p)
{
	return sv_query_k(p, NULL);
}

static __be16 sv_port_of(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_port;
	if (a->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)a)->sin6_port;
	return 0;
}

/* The IPv4-mapped or IPv6 GID of an address. */
static bool sv_addr_gid(const struct sockaddr *a, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (a->sa_family == AF_INET) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12],
		       &((const struct sockaddr_in *)a)->sin_addr, 4);
		return true;
	}
	if (a->sa_family == AF_INET6) {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)a)->sin6_addr,
		       16);
		return true;
	}
	return false;
}

/* Does a softverbs device of this namespace hold the address? */
bool sv_cm_addr_ours(const struct sockaddr *a)
{
	struct ibv_port_attr pa;
	union ibv_gid want, gid;
	int i, j;

	if (!sv_addr_gid(a, &want) || sv_open_all())
		return false;
	for (i = 0; i < sv_nctx; i++) {
		if (ibv_query_port(sv_ctxs[i], 1, &pa))
			continue;
		for (j = 0; j < pa.gid_tbl_len; j++)
			if (!ibv_query_gid(sv_ctxs[i], 1, j, &gid) &&
			    !memcmp(&gid, &want, sizeof(gid)))
				return true;
	}
	return false;
}

/* The wildcard or a loopback address: rdma_cm binds both as the wildcard. */
static bool sv_addr_any(const struct sockaddr *a)
{
	const struct in6_addr *a6;

	if (a->sa_family == AF_INET) {
		in_addr_t v4 = ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr);

		return !v4 || (v4 >> 24) == IN_LOOPBACKNET;
	}
	a6 = &((const struct sockaddr_in6 *)a)->sin6_addr;
	return IN6_IS_ADDR_UNSPECIFIED(a6) || IN6_IS_ADDR_LOOPBACK(a6);
}

/*
 * Is dst reached from an address of a device of the system's library?
 * The source the kernel's routing picks (a connected UDP socket's) says.
 */
static bool sv_route_is_system(const struct sockaddr *src,
			       const struct sockaddr *dst)
{
	struct sockaddr_storage s;
	socklen_t len = sizeof(s);
	bool sys = false;
	int fd;

	if (src && sv_addr_len(src) && !sv_addr_any(src))
		return !sv_cm_addr_ours(src);
	if (!sv_addr_len(dst))
		return false;
	fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	if (!connect(fd, dst, sv_addr_len(dst)) &&
	    !getsockname(fd, (struct sockaddr *)&s, &len))
		sys = !sv_cm_addr_ours((struct sockaddr *)&s);
	close(fd);
	return sys;
}

/* The port ours took, for the system's id beside it. */
static void sv_set_port(struct sockaddr_storage *a, __be16 port)
{
	if (a->ss_family == AF_INET)
		((struct sockaddr_in *)a)->sin_port = port;
	else
		((struct sockaddr_in6 *)a)->sin6_port = port;
}

static void sv_drop_sys(struct sv_cm_idp *p)
{
	int save = errno;

	if (p->sys)
		SV_CMS(rdma_destroy_id, p->sys);
	p->sys = NULL;
	errno = save;
}

/*
 * A wildcard binds the system's id beside ours, to the same port, so
 * that a listener takes requests from every device: a port named is bound
 * there first (busy there, the bind fails with nothing bound); a port
 * picked for us is tried there after, and if busy the id is ours alone.
 */
SV_EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct sv_cm_idp *p = sv_idp(id);
	struct sv_cm_bind c = { .size = sizeof(c), .id = p->handle };
	bool sys = sv_chan(id->channel)->sys, both;
	struct sockaddr_storage a;

	if (p->fwd)
		return SV_CMS_FWD(p, rdma_bind_addr, addr);
	if (!addr || sv_copy_addr(&c.addr, addr)) {
		errno = addr ? errno : EINVAL;
		return -1;
	}
	/* Another device's address: the system's id, if it binds there. */
	if (sys && !p->sys && !sv_addr_any(addr) && !sv_cm_addr_ours(addr)) {
		if (sv_cms_attach(p))
			return -1;
		if (SV_CMS(rdma_bind_addr, p->sys, addr)) {
			sv_drop_sys(p);
			return -1;
		}
		sv_cms_commit(p);
		return 0;
	}
	both = sys && sv_addr_any(addr) && !p->sys;
	if (both && sv_port_of(addr) &&
	    (sv_cms_attach(p) || SV_CMS(rdma_bind_addr, p->sys, addr))) {
		sv_drop_sys(p);
		return -1;
	}
	if (sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_BIND, &c) ||
	    sv_query(p)) {
		sv_drop_sys(p);
		return -1;
	}
	if (both && !sv_port_of(addr)) {
		memcpy(&a, addr, sv_addr_len(addr));
		sv_set_port(&a, sv_port_of(&id->route.addr.src_addr));
		if (sv_cms_attach(p) ||
		    SV_CMS(rdma_bind_addr, p->sys, (struct sockaddr *)&a))
			sv_drop_sys(p);
	}
	return 0;
}

SV_EXPORT int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src,
				struct sockaddr *dst, int timeout_ms)
{
	struct sv_cm_idp *p = sv_idp(id);
	struct sv_cm_resolve_addr c = {
		.size = sizeof(c),
		.id = p->handle,
		.timeout_ms = timeout_ms,
	};
	const struct sockaddr *bound = &id->route.addr.src_addr;

	if (!dst) {
		errno = EINVAL;
		return -1;
	}
	if (p->fwd)
		return SV_CMS_FWD(p, rdma_resolve_addr, src, dst, timeout_ms) ?:
		       sv_complete(id);
	/*
	 * Unbound or on the wildcard: the route decides whose the id is. If
	 * the system's refuses it, it stays as it was (a wildcard's system
	 * id stays beside it).
	 */
	if (sv_chan(id->channel)->sys &&
	    (!bound->sa_family || sv_addr_any(bound)) &&
	    sv_route_is_system(src, dst)) {
		bool had = p->sys;

		if (sv_cms_attach(p))
			return -1;
		if (SV_CMS(rdma_resolve_addr, p->sys, src, dst, timeout_ms)) {
			if (!had)
				sv_drop_sys(p);
			return -1;
		}
		sv_cms_commit(p);
		return sv_complete(id);
	}
	sv_drop_sys(p);
	if ((src && sv_copy_addr(&c.src, src)) || sv_copy_addr(&c.dst, dst) ||
	    sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_RESOLVE_ADDR, &c))
		return -1;
	return sv_complete(id);
}

SV_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct sv_cm_resolve_route c = {
		.size = sizeof(c),
		.id = sv_idp(id)->handle,
		.timeout_ms = timeout_ms,
	};

	if (sv_idp(id)->fwd) {
		if (SV_CMS_FWD(sv_idp(id), rdma_resolve_route, timeout_ms))
			return -1;
		return sv_complete(id);
	}
	if (sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_RESOLVE_ROUTE, &c))
		return -1;
	return sv_complete(id);
}

SV_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id,
				struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	struct sv_cm_init_qp_attr c = {
		.size = sizeof(c),
		.id = sv_idp(id)->handle,
		.qp_state = qp_attr->qp_state,
	};
	struct ibv_ah_attr *ah = &qp_attr->ah_attr;

	if (sv_idp(id)->fwd)
		return SV_CMS_FWD(sv_idp(id), rdma_init_qp_attr, qp_attr,
				  qp_attr_mask);

	if (sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_INIT_QP_ATTR, &c))
		return -1;
	memset(qp_attr, 0, sizeof(*qp_attr));
	qp_attr->qp_state = c.attr.qp_state;
	qp_attr->path_mtu = c.attr.path_mtu;
	qp_attr->qkey = c.attr.qkey;
	qp_attr->rq_psn = c.attr.rq_psn;
	qp_attr->sq_psn = c.attr.sq_psn;
	qp_attr->dest_qp_num = c.attr.dest_qp_num;
	qp_attr->qp_access_flags = c.attr.qp_access_flags;
	qp_attr->pkey_index = c.attr.pkey_index;
	qp_attr->max_rd_atomic = c.attr.max_rd_atomic;
	qp_attr->max_dest_rd_atomic = c.attr.max_dest_rd_atomic;
	qp_attr->min_rnr_timer = c.attr.min_rnr_timer;
	qp_attr->port_num = c.attr.port_num;
	qp_attr->timeout = c.attr.timeout;
	qp_attr->retry_cnt = c.attr.retry_cnt;
	qp_attr->rnr_retry = c.attr.rnr_retry;
	memcpy(ah->grh.dgid.raw, c.attr.ah_attr.dgid, 16);
	ah->grh.flow_label = c.attr.ah_attr.flow_label;
	ah->grh.sgid_index = c.attr.ah_attr.sgid_index;
	ah->grh.hop_limit = c.attr.ah_attr.hop_limit;
	ah->grh.traffic_class = c.attr.ah_attr.traffic_class;
	ah->is_global = c.attr.ah_attr.is_global;
	ah->port_num = c.attr.ah_attr.port_num;
	ah->sl = c.attr.ah_attr.sl;
	*qp_attr_mask = c.mask;
	return 0;
}

static int sv_modify(struct rdma_cm_id *id, enum ibv_qp_state state,
		     int rd_atomic)
{
	struct ibv_qp_attr a = { .qp_state = state };
	int mask;

	if (rdma_init_qp_attr(id, &a, &mask))
		return -1;
	if (rd_atomic >= 0 && state == IBV_QPS_RTR)
		a.max_dest_rd_atomic = rd_atomic;
	if (rd_atomic >= 0 && state == IBV_QPS_RTS)
		a.max_rd_atomic = rd_atomic;
	errno = ibv_modify_qp(id->qp, &a, mask);
	return errno ? -1 : 0;
}

static void sv_qp_err(struct rdma_cm_id *id)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (id->qp)
		ibv_modify_qp(id->qp, &a, IBV_QP_STATE);
}

/* INIT again (the access rights are known now), then RTR and RTS. */
static int sv_qp_connect(struct rdma_cm_id *id, int resp_res, int init_depth)
{
	if (sv_modify(id, IBV_QPS_INIT, -1) ||
	    sv_modify(id, IBV_QPS_RTR, resp_res) ||
	    sv_modify(id, IBV_QPS_RTS, init_depth))
		return -1;
	return 0;
}

/* INIT; a UD QP on to RTS at once (its peers are in its sends). */
static int sv_qp_init(struct rdma_cm_id *id)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };

	if (sv_modify(id, IBV_QPS_INIT, -1))
		return -1;
	if (id->qp_type != IBV_QPT_UD)
		return 0;
	errno = ibv_modify_qp(id->qp, &a, IBV_QP_STATE);
	if (errno)
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	errno = ibv_modify_qp(id->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return errno ? -1 : 0;
}

/* The library's CQs of an id, and their completion channels, go. */
static void sv_destroy_cqs(struct rdma_cm_id *id)
{
	if (id->qp_type == IBV_QPT_XRC_RECV && id->srq)
		return;
	if (id->recv_cq)
		ibv_destroy_cq(id->recv_cq);
	if (id->send_cq && id->send_cq != id->recv_cq)
		ibv_destroy_cq(id->send_cq);
	id->recv_cq = id->send_cq = NULL;
	if (id->recv_cq_channel)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	if (id->send_cq_channel && id->send_cq_channel != id->recv_cq_channel)
		ibv_destroy_comp_channel(id->send_cq_channel);
	id->recv_cq_channel = id->send_cq_channel = NULL;
}

/*
 * As rdma-core's library: a CQ (with a completion channel, for
 * rdma_get_send_comp() and rdma_get_recv_comp()) for each side whose
 * size is not 0.
 */
static int sv_create_cq(struct rdma_cm_id *id, uint32_t size,
			struct ibv_cq **cq, struct ibv_comp_channel **ch)
{
	if (!size)
		return 0;
	*ch = ibv_create_comp_channel(id->verbs);
	if (!*ch)
		return -1;
	*cq = ibv_create_cq(id->verbs, size, id, *ch, 0);
	return *cq ? 0 : -1;
}

static int sv_create_cqs(struct rdma_cm_id *id, uint32_t send_size,
			 uint32_t recv_size)
{
	if (sv_create_cq(id, recv_size, &id->recv_cq, &id->recv_cq_channel) ||
	    sv_create_cq(id, send_size, &id->send_cq, &id->send_cq_channel)) {
		sv_destroy_cqs(id);
		return -1;
	}
	return 0;
}

SV_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *id,
				struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp *qp;
	int save;

	if (sv_idp(id)->fwd)
		return SV_CMS_FWD(sv_idp(id), rdma_create_qp_ex, attr);

	if (!id->verbs || (attr->pd && attr->pd->context != id->verbs)) {
		errno = EINVAL;
		return -1;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = id->pd ?: sv_default_pd(id->verbs);
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
		if (!attr->pd)
			return -1;
	}
	if (sv_create_cqs(id, attr->send_cq || id->send_cq ? 0 :
			  attr->cap.max_send_wr,
			  attr->recv_cq || id->recv_cq ? 0 :
			  attr->cap.max_recv_wr))
		return -1;
	if (!attr->send_cq)
		attr->send_cq = id->send_cq;
	if (!attr->recv_cq)
		attr->recv_cq = id->recv_cq;
	if (id->srq && !attr->srq)
		attr->srq = id->srq;
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (!qp)
		goto err_cq;
	id->qp = qp;
	if (sv_qp_init(id)) {
		save = errno;
		ibv_destroy_qp(qp);
		id->qp = NULL;
		errno = save;
		goto err_cq;
	}
	id->pd = attr->pd;
	return 0;
err_cq:
	save = errno;
	sv_destroy_cqs(id);
	errno = save;
	return -1;
}

SV_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			     struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex a;
	int ret;

	memset(&a, 0, sizeof(a));
	memcpy(&a, qp_init_attr, sizeof(*qp_init_attr));
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	ret = rdma_create_qp_ex(id, &a);
	if (!ret)
		memcpy(qp_init_attr, &a, sizeof(*qp_init_attr));
	return ret;
}

SV_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
	/* rdma-core's destroys what it is given, NULL too: not called. */
	if (sv_idp(id)->fwd) {
		if (id->qp)
			SV_CMS_FWD_VOID(sv_idp(id), rdma_destroy_qp);
		return;
	}
	if (id->qp)
		ibv_destroy_qp(id->qp);
	id->qp = NULL;
	sv_destroy_cqs(id);
}

static void sv_param_in(struct sv_cm_conn_param *k,
			const struct rdma_conn_param *c)
{
	k->private_data_len = c->private_data_len;
	if (c->private_data && c->private_data_len)
		memcpy(k->private_data, c->private_data, c->private_data_len);
	k->responder_resources = c->responder_resources;
	k->initiator_depth = c->initiator_depth;
	k->flow_control = c->flow_control;
	k->retry_count = c->retry_count;
	k->rnr_retry_count = c->rnr_retry_count;
	k->srq = c->srq;
	k->qp_num = c->qp_num;
}

static bool sv_param_ok(const struct rdma_conn_param *c, uint32_t max_pd)
{
	return !c || (c->private_data_len <= max_pd &&
		      (c->private_data || !c->private_data_len));
}

SV_EXPORT int rdma_connect(struct rdma_cm_id *id,
			   struct rdma_conn_param *conn_param)
{
	struct sv_cm_connect c = { .size = sizeof(c), .id = sv_idp(id)->handle };
	struct rdma_conn_param def = {
		.responder_resources = RDMA_MAX_RESP_RES,
		.initiator_depth = RDMA_MAX_INIT_DEPTH,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};

	if (sv_idp(id)->fwd)
		return SV_CMS_FWD(sv_idp(id), rdma_connect, conn_param) ?:
		       sv_complete(id);

	if (!sv_param_ok(conn_param, id->qp_type == IBV_QPT_UD ?
			 SV_CM_SIDR_REQ_PRIVATE_MAX : SV_CM_REQ_PRIVATE_MAX)) {
		errno = EINVAL;
		return -1;
	}
	sv_param_in(&c.param, conn_param ?: &def);
	if (c.param.retry_count > 7)
		c.param.retry_count = 7;
	if (c.param.rnr_retry_count > 7)
		c.param.rnr_retry_count = 7;
	if (id->qp) {
		c.param.qp_num = id->qp->qp_num;
		c.param.srq = id->qp->srq != NULL;
	}
	if (sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_CONNECT, &c))
		return -1;
	return sv_complete(id);
}

SV_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct sv_cm_listen c = {
		.size = sizeof(c),
		.id = sv_idp(id)->handle,
		.backlog = backlog > 0 ? backlog : 0,
	};

	if (sv_idp(id)->fwd)
		return SV_CMS_FWD(sv_idp(id), rdma_listen, backlog);
	if (sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_LISTEN, &c))
		return -1;
	/* A wildcard's system id listens too, or goes. */
	if (sv_idp(id)->sys && SV_CMS(rdma_listen, sv_idp(id)->sys, backlog))
		sv_drop_sys(sv_idp(id));
	return sv_query(sv_idp(id));
}

/* A UD id's SIDR REP: its QP number, the Q_Key of its port space. */
static int sv_accept_ud(struct sv_cm_idp *p,
			const struct rdma_conn_param *conn_param)
{
	struct sv_cm_accept c = {
		.size = sizeof(c),
		.id = p->handle,
		.uid = (uintptr_t)p,
	};

	if (!sv_param_ok(conn_param, SV_CM_SIDR_REP_PRIVATE_MAX)) {
		errno = EINVAL;
		return -1;
	}
	if (conn_param) {
		c.param.private_data_len = conn_param->private_data_len;
		if (conn_param->private_data_len)
			memcpy(c.param.private_data, conn_param->private_data,
			       conn_param->private_data_len);
		c.param.qp_num = conn_param->qp_num;
	}
	if (p->id.qp)
		c.param.qp_num = p->id.qp->qp_num;
	return sv_cm_ioctl(sv_kfd(p->id.channel), SV_CM_IOC_ACCEPT, &c);
}

SV_EXPORT int rdma_accept(struct rdma_cm_id *id,
			  struct rdma_conn_param *conn_param)
{
	struct sv_cm_idp *p = sv_idp(id);
	struct sv_cm_accept c = {
		.size = sizeof(c),
		.id = p->handle,
		.uid = (uintptr_t)p,
	};
	struct rdma_conn_param def = {
		.responder_resources = p->req_resp_res,
		.initiator_depth = p->req_init_depth,
		.rnr_retry_count = 7,
	};

	if (p->fwd) {
		if (SV_CMS_FWD(p, rdma_accept, conn_param))
			return -1;
		return id->qp_type == IBV_QPT_UD ? 0 : sv_complete(id);
	}

	if (id->qp_type == IBV_QPT_UD)
		return sv_accept_ud(p, conn_param);
	if (!sv_param_ok(conn_param, SV_CM_REP_PRIVATE_MAX)) {
		errno = EINVAL;
		return -1;
	}
	sv_param_in(&c.param, conn_param ?: &def);
	if (c.param.rnr_retry_count > 7)
		c.param.rnr_retry_count = 7;
	c.param.retry_count = 0;
	if (c.param.responder_resources > p->req_resp_res)
		c.param.responder_resources = p->req_resp_res;
	if (c.param.initiator_depth > p->req_init_depth)
		c.param.initiator_depth = p->req_init_depth;
	if (id->qp) {
		c.param.qp_num = id->qp->qp_num;
		c.param.srq = id->qp->srq != NULL;
		if (sv_qp_connect(id, c.param.responder_resources,
				  c.param.initiator_depth)) {
			int save = errno;

			sv_qp_err(id);
			errno = save;
			return -1;
		}
	}
	if (sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_ACCEPT, &c)) {
		int save = errno;

		sv_qp_err(id);
		errno = save;
		return -1;
	}
	return sv_complete(id);
}

SV_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data,
			  uint8_t private_data_len)
{
	struct sv_cm_reject c = { .size = sizeof(c), .id = sv_idp(id)->handle };

	if (sv_idp(id)->fwd)
		return SV_CMS_FWD(sv_idp(id), rdma_reject, private_data,
				  private_data_len);

	if (private_data_len > SV_CM_REJ_PRIVATE_MAX ||
	    (!private_data && private_data_len)) {
		errno = EINVAL;
		return -1;
	}
	c.private_data_len = private_data_len;
	if (private_data_len)
		memcpy(c.private_data, private_data, private_data_len);
	return sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_REJECT, &c);
}

SV_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
			      uint8_t private_data_len)
{
	return rdma_reject(id, private_data, private_data_len);
}

SV_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	struct sv_cm_disconnect c = { .size = sizeof(c),
				      .id = sv_idp(id)->handle };

	if (sv_idp(id)->fwd)
		return SV_CMS_FWD(sv_idp(id), rdma_disconnect) ?:
		       sv_complete(id);

	if (id->qp_type != IBV_QPT_UD)
		sv_qp_err(id);
	if (sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_DISCONNECT, &c))
		return -1;
	/* A UD id has no connection: no event comes to wait for. */
	return id->qp_type == IBV_QPT_UD ? 0 : sv_complete(id);
}

SV_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
	struct sv_cm_establish c = { .size = sizeof(c),
				     .id = sv_idp(id)->handle };

	if (sv_idp(id)->fwd)
		return SV_CMS_FWD(sv_idp(id), rdma_establish);

	if (id->qp) {
		errno = EINVAL;
		return -1;
	}
	return sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_ESTABLISH, &c);
}

SV_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int optname,
			      void *optval, size_t optlen)
{
	struct sv_cm_idp *p = sv_idp(id);
	struct sv_cm_set_option c = { .size = sizeof(c), .id = p->handle };

	if (p->fwd)
		return SV_CMS_FWD(p, rdma_set_option, level, optname, optval,
				  optlen);
	if (level != RDMA_OPTION_ID || !optval) {
		errno = level == RDMA_OPTION_IB ? EOPNOTSUPP : EINVAL;
		return -1;
	}
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t))
			goto inval;
		c.value = *(uint8_t *)optval;
		break;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			goto inval;
		c.value = !!*(int *)optval;
		break;
	default:
		errno = ENOSYS;
		return -1;
	}
	c.option = optname;
	if (sv_cm_ioctl(sv_kfd(id->channel), SV_CM_IOC_SET_OPTION, &c))
		return -1;
	/* Kept for a system id made later, and set on one there is. */
	if (optname < SV_CM_OPTS) {
		p->opt_set |= 1 << optname;
		p->opt_val[optname] = c.value;
	}
	if (p->sys)
		SV_CMS(rdma_set_option, p->sys, level, optname, optval, optlen);
	return 0;
inval:
	errno = EINVAL;
	return -1;
}

static void sv_param_out(struct sv_cm_evp *e, const struct sv_cm_conn_param *k)
{
	struct rdma_conn_param *c = &e->ev.param.conn;

	memcpy(e->private_data, k->private_data, sizeof(e->private_data));
	c->private_data = k->private_data_len ? e->private_data : NULL;
	c->private_data_len = k->private_data_len;
	c->responder_resources = k->responder_resources;
	c->initiator_depth = k->initiator_depth;
	c->flow_control = k->flow_control;
	c->retry_count = k->retry_count;
	c->rnr_retry_count = k->rnr_retry_count;
	c->srq = k->srq;
	c->qp_num = k->qp_num;
}

/* A UD id's event: the peer's (or a group's) address, QP and Q_Key. */
static void sv_param_out_ud(struct sv_cm_evp *e, struct sv_cm_idp *p,
			    const struct sv_cm_conn_param *k)
{
	struct rdma_ud_param *u = &e->ev.param.ud;
	struct sv_cm_query q;

	memset(u, 0, sizeof(*u));
	memcpy(e->private_data, k->private_data, sizeof(e->private_data));
	u->private_data = k->private_data_len ? e->private_data : NULL;
	u->private_data_len = k->private_data_len;
	u->qp_num = k->qp_num;
	u->qkey = k->qkey;
	if (e->ev.event != RDMA_CM_EVENT_ESTABLISHED || sv_query_k(p, &q))
		return;
	memcpy(u->ah_attr.grh.dgid.raw, q.dgid, 16);
	u->ah_attr.grh.sgid_index = q.sgid_index;
	u->ah_attr.grh.hop_limit = q.hop_limit;
	u->ah_attr.grh.traffic_class = q.traffic_class;
	u->ah_attr.is_global = 1;
	u->ah_attr.port_num = q.port_num;
}

/* A CONNECT_REQUEST's new id, in the listener's image. */
static struct sv_cm_idp *sv_conn_req(struct sv_cm_idp *lis,
				     const struct sv_cm_get_event *k)
{
	struct sv_cm_idp *p = sv_idp_new(lis->id.channel, lis->id.context,
					 lis->id.ps, lis->id.qp_type);

	if (!p)
		return NULL;
	p->handle = k->id;
	p->req_resp_res = k->param.initiator_depth;
	p->req_init_depth = k->param.responder_resources;
	/* A synchronous listener's requests are synchronous ids too. */
	if (sv_query(p) || (lis->sync && rdma_migrate_id(&p->id, NULL))) {
		sv_idp_free(p);
		return NULL;
	}
	return p;
}

SV_EXPORT int rdma_get_cm_event(struct rdma_event_channel *ch,
				struct rdma_cm_event **event)
{
	struct sv_cm_get_event k;
	struct sv_cm_idp *p, *child;
	struct sv_cm_evp *e;
	int ret;

	if (!event) {
		errno = EINVAL;
		return -1;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		errno = ENOMEM;
		return -1;
	}
retry:
	/* With the system's channel beside ours: whichever has one. */
	ret = sv_chan(ch)->sys ? sv_cms_wait(ch) : 1;
	if (ret == 2) {
		if (!sv_cms_event(ch, e)) {
			*event = &e->ev;
			return 0;
		}
		ret = -1;
	}
	if (ret == 1) {
		memset(&k, 0, sizeof(k));
		k.size = sizeof(k);
		ret = sv_cm_ioctl(sv_kfd(ch), SV_CM_IOC_GET_EVENT, &k);
	}
	if (ret) {
		/* Taken by another thread: wait again, if it may. */
		if (errno == EAGAIN && sv_chan(ch)->sys &&
		    !sv_cms_nonblock(ch))
			goto retry;
		free(e);
		return -1;
	}
	if (k.event == SV_CM_EVENT_MULTICAST_JOIN ||
	    k.event == SV_CM_EVENT_MULTICAST_ERROR) {
		sv_mc_event(e, &k);
		*event = &e->ev;
		return 0;
	}
	p = (struct sv_cm_idp *)(uintptr_t)k.uid;
	e->owner = p;
	e->ev.id = &p->id;
	e->ev.event = k.event;
	e->ev.status = k.status;
	if (p->id.qp_type == IBV_QPT_UD)
		sv_param_out_ud(e, p, &k.param);
	else
		sv_param_out(e, &k.param);
	switch (k.event) {
	case SV_CM_EVENT_ADDR_RESOLVED:
	case SV_CM_EVENT_ROUTE_RESOLVED:
		if (sv_query(p)) {
			e->ev.event = k.event == SV_CM_EVENT_ADDR_RESOLVED ?
				      RDMA_CM_EVENT_ADDR_ERROR :
				      RDMA_CM_EVENT_ROUTE_ERROR;
			e->ev.status = -errno;
		}
		break;
	case SV_CM_EVENT_CONNECT_REQUEST:
		child = sv_conn_req(p, &k);
		if (!child) {
			/* Lost to us: it goes, and the peer is told. */
			struct sv_cm_destroy_id d = { .size = sizeof(d),
						      .id = k.id };

			ioctl(sv_kfd(ch), SV_CM_IOC_DESTROY_ID, &d);
			rdma_ack_cm_event(&e->ev);
			e = calloc(1, sizeof(*e));
			if (!e) {
				errno = ENOMEM;
				return -1;
			}
			goto retry;
		}
		e->ev.listen_id = &p->id;
		e->ev.id = &child->id;
		break;
	case SV_CM_EVENT_CONNECT_RESPONSE:
		if (!p->id.qp)
			break;
		/* As rdma-core: the QP to RTS, the RTU, and ESTABLISHED. */
		ret = sv_qp_connect(&p->id, -1, -1);
		if (!ret) {
			struct sv_cm_establish c = { .size = sizeof(c),
						     .id = p->handle };

			ret = sv_cm_ioctl(sv_kfd(ch), SV_CM_IOC_ESTABLISH, &c);
		}
		if (ret) {
			e->ev.status = -errno;
			e->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
			sv_qp_err(&p->id);
			rdma_reject(&p->id, NULL, 0);
		} else {
			e->ev.event = RDMA_CM_EVENT_ESTABLISHED;
		}
		break;
	case SV_CM_EVENT_REJECTED:
	case SV_CM_EVENT_UNREACHABLE:
	case SV_CM_EVENT_CONNECT_ERROR:
		if (p->id.qp_type != IBV_QPT_UD)
			sv_qp_err(&p->id);
		break;
	default:
		break;
	}
	*event = &e->ev;
	return 0;
}

SV_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct sv_cm_evp *e = (struct sv_cm_evp *)event;
	struct sv_cm_idp *p;

	if (!event) {
		errno = EINVAL;
		return -1;
	}
	if (e->sys_ev) {
		/* Nothing of the id is touched: it may go once this is done. */
		SV_CMS(rdma_ack_cm_event, e->sys_ev);
		free(e);
		return 0;
	}
	p = e->owner;
	pthread_mutex_lock(&p->lock);
	if (e->mc)
		e->mc->events_completed++;
	else
		p->events_completed++;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	free(e);
	return 0;
}

SV_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char * const names[] = {
		"RDMA_CM_EVENT_ADDR_RESOLVED",
		"RDMA_CM_EVENT_ADDR_ERROR",
		"RDMA_CM_EVENT_ROUTE_RESOLVED",
		"RDMA_CM_EVENT_ROUTE_ERROR",
		"RDMA_CM_EVENT_CONNECT_REQUEST",
		"RDMA_CM_EVENT_CONNECT_RESPONSE",
		"RDMA_CM_EVENT_CONNECT_ERROR",
		"RDMA_CM_EVENT_UNREACHABLE",
		"RDMA_CM_EVENT_REJECTED",
		"RDMA_CM_EVENT_ESTABLISHED",
		"RDMA_CM_EVENT_DISCONNECTED",
		"RDMA_CM_EVENT_DEVICE_REMOVAL",
		"RDMA_CM_EVENT_MULTICAST_JOIN",
		"RDMA_CM_EVENT_MULTICAST_ERROR",
		"RDMA_CM_EVENT_ADDR_CHANGE",
		"RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < sizeof(names) / sizeof(names[0]))
		return names[event];
	return "UNKNOWN EVENT";
}

/*
 * Ours, then the system library's: its own list is kept past the end, for
 * rdma_free_devices().
 */
SV_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list, **sys;
	int n;

	if (sv_open_all())
		return NULL;
	sys = sv_cms_devices(&n);
	list = calloc(sv_nctx + n + 2, sizeof(*list));
	if (!list) {
		if (sys)
			SV_CMS_VOID(rdma_free_devices, sys);
		errno = ENOMEM;
		return NULL;
	}
	memcpy(list, sv_ctxs, sv_nctx * sizeof(*list));
	if (n)
		memcpy(list + sv_nctx, sys, n * sizeof(*list));
	list[sv_nctx + n + 1] = (struct ibv_context *)sys;
	if (num_devices)
		*num_devices = sv_nctx + n;
	return list;
}

SV_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	struct ibv_context **end;

	if (!list)
		return;
	for (end = list; *end; end++)
		;
	if (end[1])
		SV_CMS_VOID(rdma_free_devices, (struct ibv_context **)end[1]);
	free(list);
}

SV_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return sv_port_of(&id->route.addr.src_addr);
}

SV_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return sv_port_of(&id->route.addr.dst_addr);
}

SV_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id,
				 struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq *srq;

	if (sv_idp(id)->fwd)
		return SV_CMS_FWD(sv_idp(id), rdma_create_srq_ex, attr);

	if (!id->verbs) {
		errno = EINVAL;
		return -1;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = id->pd ?: sv_default_pd(id->verbs);
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)) {
		attr->srq_type = IBV_SRQT_BASIC;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_TYPE;
	}
	srq = ibv_create_srq_ex(id->verbs, attr);
	if (!srq)
		return -1;
	id->srq = srq;
	id->pd = attr->pd;
	return 0;
}

SV_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
			      struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex a;
	int ret;

	memset(&a, 0, sizeof(a));
	memcpy(&a, attr, sizeof(*attr));
	a.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE;
	a.pd = pd;
	a.srq_type = IBV_SRQT_BASIC;
	ret = rdma_create_srq_ex(id, &a);
	if (!ret)
		memcpy(attr, &a, sizeof(*attr));
	return ret;
}

SV_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	/* rdma-core's destroys what it is given, NULL too: not called. */
	if (sv_idp(id)->fwd) {
		if (id->srq)
			SV_CMS_FWD_VOID(sv_idp(id), rdma_destroy_srq);
		return;
	}
	if (id->srq)
		ibv_destroy_srq(id->srq);
	id->srq = NULL;
}

/* rdma_getaddrinfo: getaddrinfo()'s answer in rdma_addrinfo's form */
static struct rdma_addrinfo *sv_rai(const struct addrinfo *ai,
				    const struct rdma_addrinfo *hints,
				    bool passive)
{
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));
	struct sockaddr *a;

	if (!r)
		return NULL;
	a = malloc(ai->ai_addrlen);
	if (!a) {
		free(r);
		return NULL;
	}
	memcpy(a, ai->ai_addr, ai->ai_addrlen);
	r->ai_flags = hints ? hints->ai_flags : 0;
	r->ai_family = ai->ai_family;
	r->ai_qp_type = hints && hints->ai_qp_type ? hints->ai_qp_type :
			IBV_QPT_RC;
	r->ai_port_space = hints && hints->ai_port_space ?
			   hints->ai_port_space :
			   r->ai_qp_type == IBV_QPT_UD ? RDMA_PS_UDP :
							 RDMA_PS_TCP;
	if (passive) {
		r->ai_src_addr = a;
		r->ai_src_len = ai->ai_addrlen;
	} else {
		r->ai_dst_addr = a;
		r->ai_dst_len = ai->ai_addrlen;
		if (hints && hints->ai_src_addr && hints->ai_src_len) {
			r->ai_src_addr = malloc(hints->ai_src_len);
			if (r->ai_src_addr) {
				memcpy(r->ai_src_addr, hints->ai_src_addr,
				       hints->ai_src_len);
				r->ai_src_len = hints->ai_src_len;
			}
		}
	}
	return r;
}

SV_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *next;

	for (; res; res = next) {
		next = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
	}
}

/* A copy of an address (none: nothing); -1 if out of memory. */
static int sv_dup_addr(struct sockaddr **to, socklen_t *to_len,
		       const struct sockaddr *from, socklen_t len)
{
	if (!len)
		return 0;
	*to = malloc(len);
	if (!*to)
		return -1;
	memcpy(*to, from, len);
	*to_len = len;
	return 0;
}

/* No node nor service: as rdma-core, one answer made of the hints' own. */
static int sv_rai_of_hints(const struct rdma_addrinfo *hints,
			   struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));

	if (!r ||
	    sv_dup_addr(&r->ai_dst_addr, &r->ai_dst_len, hints->ai_dst_addr,
			hints->ai_dst_len) ||
	    sv_dup_addr(&r->ai_src_addr, &r->ai_src_len, hints->ai_src_addr,
			hints->ai_src_len)) {
		rdma_freeaddrinfo(r);
		errno = ENOMEM;
		return -1;
	}
	r->ai_flags = hints->ai_flags;
	r->ai_family = hints->ai_family;
	r->ai_qp_type = hints->ai_qp_type;
	r->ai_port_space = hints->ai_port_space;
	*res = r;
	return 0;
}

SV_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
			       const struct rdma_addrinfo *hints,
			       struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_socktype = SOCK_STREAM }, *ai, *it;
	bool passive = hints && (hints->ai_flags & RAI_PASSIVE);
	struct rdma_addrinfo *head = NULL, **tail = &head, *r;
	int ret;

	if (!res || (!node && !service && !hints)) {
		errno = EINVAL;
		return -1;
	}
	if (!node && !service)
		return sv_rai_of_hints(hints, res);
	if (hints) {
		/* As rdma-core's: the hints' family (AF_IB is not here). */
		h.ai_flags = (passive ? AI_PASSIVE : 0) |
			     (hints->ai_flags & RAI_NUMERICHOST ?
			      AI_NUMERICHOST : 0);
		if (hints->ai_family != AF_IB)
			h.ai_family = hints->ai_family;
		if (hints->ai_qp_type == IBV_QPT_UD)
			h.ai_socktype = SOCK_DGRAM;
	}
	ret = getaddrinfo(node, service, &h, &ai);
	if (ret) {
		errno = ret == EAI_SYSTEM ? errno : ENOENT;
		return ret;
	}
	for (it = ai; it; it = it->ai_next) {
		if (it->ai_family != AF_INET && it->ai_family != AF_INET6)
			continue;
		r = sv_rai(it, hints, passive);
		if (!r) {
			freeaddrinfo(ai);
			rdma_freeaddrinfo(head);
			errno = ENOMEM;
			return -1;
		}
		*tail = r;
		tail = &r->ai_next;
	}
	freeaddrinfo(ai);
	if (!head) {
		errno = ENOENT;
		return -1;
	}
	*res = head;
	return 0;
}

/*
 * Not yet: each says so, but on an id the system's library serves, which
 * may do them.
 */
#define SV_NOT_YET_FWD(name, type)					\
	SV_EXPORT int name(struct rdma_cm_id *id, type arg)		\
	{								\
		if (sv_idp(id)->fwd)					\
			return SV_CMS_FWD(sv_idp(id), name, arg);	\
		errno = EOPNOTSUPP;					\
		return -1;						\
	}

SV_NOT_YET_FWD(rdma_notify, enum ibv_event_type)
SV_NOT_YET_FWD(rdma_set_local_ece, struct ibv_ece *)
SV_NOT_YET_FWD(rdma_get_remote_ece, struct ibv_ece *)

