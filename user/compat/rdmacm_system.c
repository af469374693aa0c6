// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * librdmacm.so.1 beside rdma-core's: the machine's other RDMA devices
 * (rxe, a RoCE NIC) are served by the system's librdmacm, loaded in the
 * link-map namespace of the system's libibverbs (our libibverbs.so.1
 * keeps it, lib/system.c), so that the contexts, PDs and QPs it makes are
 * the ones our libibverbs hands to that library.
 *
 * Which library serves an id is known once it has an address:
 *  - rdma_bind_addr() to an address a softverbs device holds: ours; to
 *    another one of the host: the system's; to the wildcard: both, one
 *    port, so a listener takes requests from every device;
 *  - rdma_resolve_addr(): the source address the kernel's routing picks
 *    for the destination (or the one given) decides the same way.
 * The program's rdma_cm_id stays ours; an id the system's library serves
 * is "forwarded": every call is made on the system's id, and the fields
 * the program reads (verbs, qp, route, the CQs ...) are copied back. Its
 * events come through the program's channel: each of our channels has one
 * of the system's beside it, and ch->fd is an epoll fd over the two.
 *
 * $SOFTVERBS_SYSTEM_LIBRDMACM names the library ("none": ours only); a
 * setuid or setgid program ignores it (secure_getenv), as it loads code.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rdmacm.h"
#include "../lib/sv_private.h"

#ifndef SV_SYSTEM_LIBRDMACM
#define SV_SYSTEM_LIBRDMACM "/usr/lib/x86_64-linux-gnu/librdmacm.so.1"
#endif

static pthread_once_t sv_cms_once = PTHREAD_ONCE_INIT;
static void *sv_cms_handle;

static void sv_cms_open(void)
{
	const char *path = sv_private_system_path("SOFTVERBS_SYSTEM_LIBRDMACM",
						  SV_SYSTEM_LIBRDMACM,
						  (void *)sv_cms_channel);
	struct ibv_context **list;
	int n = 0;

	if (!path)
		return;
	sv_cms_handle = sv_private_system_dlopen(path);
	if (!sv_cms_handle)
		return;
	if (!dlsym(sv_cms_handle, "rdma_create_event_channel") ||
	    !dlsym(sv_cms_handle, "rdma_get_devices"))
		goto none;
	/* A library with no device of its own has nothing to serve. */
	list = SV_CMS(rdma_get_devices, &n);
	if (!list)
		goto none;
	SV_CMS_VOID(rdma_free_devices, list);
	if (n > 0)
		return;
none:
	dlclose(sv_cms_handle);
	sv_cms_handle = NULL;
}

void *sv_cms_sym(const char *name)
{
	return sv_private_system_sym(sv_cms_handle, "librdmacm", name);
}

int sv_cms_errno(void)
{
	return sv_private_system_errno();
}

/* A channel of the system's for one of ours, NULL when it has no use. */
struct rdma_event_channel *sv_cms_channel(void)
{
	struct rdma_event_channel *ch;
	int save = errno;

	pthread_once(&sv_cms_once, sv_cms_open);
	if (!sv_cms_handle)
		return NULL;
	ch = SV_CMS(rdma_create_event_channel);
	/* Not fatal: our devices still work. */
	errno = save;
	return ch;
}

/* The devices the system's library serves: the list is its own. */
struct ibv_context **sv_cms_devices(int *num)
{
	struct ibv_context **list;

	*num = 0;
	pthread_once(&sv_cms_once, sv_cms_open);
	if (!sv_cms_handle)
		return NULL;
	list = SV_CMS(rdma_get_devices, num);
	if (!list)
		*num = 0;
	return list;
}

/* The fields a program reads, from the system's id to ours ... */
void sv_cms_pull(struct sv_cm_idp *p)
{
	struct rdma_cm_id *s = p->sys, *id = &p->id;

	if (!p->fwd)
		return;
	id->verbs = s->verbs;
	id->route = s->route;
	id->port_num = s->port_num;
	id->send_cq_channel = s->send_cq_channel;
	id->send_cq = s->send_cq;
	id->recv_cq_channel = s->recv_cq_channel;
	id->recv_cq = s->recv_cq;
	id->srq = s->srq;
	id->pd = s->pd;
	id->qp = s->qp;
	id->qp_type = s->qp_type;
}

/* ... and those it may set, to the system's before a call. */
void sv_cms_push(struct sv_cm_idp *p)
{
	struct rdma_cm_id *s = p->sys, *id = &p->id;

	if (!p->fwd)
		return;
	s->send_cq_channel = id->send_cq_channel;
	s->send_cq = id->send_cq;
	s->recv_cq_channel = id->recv_cq_channel;
	s->recv_cq = id->recv_cq;
	s->srq = id->srq;
	s->pd = id->pd;
	s->qp = id->qp;
}

/* The system's id beside ours, on our channel's system channel. */
int sv_cms_attach(struct sv_cm_idp *p)
{
	struct rdma_event_channel *sch = sv_chan(p->id.channel)->sys;
	int i;

	if (p->sys)
		return 0;
	if (!sch) {
		errno = ENODEV;
		return -1;
	}
	if (SV_CMS(rdma_create_id, sch, &p->sys, p, p->id.ps))
		return -1;
	for (i = 0; i < SV_CM_OPTS; i++) {
		int v = p->opt_val[i];

		if (!(p->opt_set & (1 << i)))
			continue;
		if (i == RDMA_OPTION_ID_TOS || i == RDMA_OPTION_ID_ACK_TIMEOUT) {
			uint8_t b = v;

			SV_CMS(rdma_set_option, p->sys, RDMA_OPTION_ID, i, &b,
			       sizeof(b));
		} else {
			SV_CMS(rdma_set_option, p->sys, RDMA_OPTION_ID, i, &v,
			       sizeof(v));
		}
	}
	return 0;
}

/*
 * A call on the system's id (sv_cms_attach()) succeeded: the id is the
 * system's from now on, and its kernel id (idle or bound, with no event)
 * goes.
 */
void sv_cms_commit(struct sv_cm_idp *p)
{
	struct sv_cm_destroy_id c = { .size = sizeof(c), .id = p->handle };

	if (!p->fwd)
		ioctl(sv_kfd(p->id.channel), SV_CM_IOC_DESTROY_ID, &c);
	p->fwd = true;
	sv_cms_pull(p);
}

/* Has the program made its channel non-blocking? */
bool sv_cms_nonblock(struct rdma_event_channel *ch)
{
	int fl = fcntl(ch->fd, F_GETFL);

	return fl >= 0 && (fl & O_NONBLOCK);
}

/*
 * Wait on a channel with both: 1 when the kernel's fd has an event, 2 the
 * system's, -1 with errno (EAGAIN: none, on a non-blocking channel).
 */
int sv_cms_wait(struct rdma_event_channel *ch)
{
	struct sv_cm_chan *c = sv_chan(ch);
	struct pollfd pf[2] = {
		{ .fd = c->kfd, .events = POLLIN },
		{ .fd = c->sys->fd, .events = POLLIN },
	};
	int n;

	n = poll(pf, 2, sv_cms_nonblock(ch) ? 0 : -1);
	if (n < 0)
		return -1;
	if (!n) {
		errno = EAGAIN;
		return -1;
	}
	return pf[0].revents ? 1 : 2;
}

/* A CONNECT_REQUEST's new id of the system's, in the listener's image. */
static struct sv_cm_idp *sv_cms_child(struct sv_cm_idp *lis,
				      struct rdma_cm_id *sid)
{
	struct sv_cm_idp *p = sv_idp_new(lis->id.channel, lis->id.context,
					 lis->id.ps, sid->qp_type);

	if (!p)
		return NULL;
	p->sys = sid;
	p->fwd = true;
	sid->context = p;
	sv_cms_pull(p);
	if (lis->sync && rdma_migrate_id(&p->id, NULL)) {
		sid->context = lis;
		sv_idp_free(p);
		return NULL;
	}
	return p;
}

/*
 * The system channel's next event, as ours: its ids are the program's.
 * -1 with errno EAGAIN when there was none after all.
 */
int sv_cms_event(struct rdma_event_channel *ch, struct sv_cm_evp *e)
{
	struct rdma_cm_event *sev;
	struct sv_cm_idp *p, *child;

	if (SV_CMS(rdma_get_cm_event, sv_chan(ch)->sys, &sev))
		return -1;
	p = sev->id->context;
	if (sev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		p = sev->listen_id->context;
		child = sv_cms_child(p, sev->id);
		if (!child) {
			/* Lost to us: refused, as the kernel's would be. */
			struct rdma_cm_id *sid = sev->id;

			SV_CMS(rdma_reject, sid, NULL, 0);
			SV_CMS(rdma_ack_cm_event, sev);
			SV_CMS(rdma_destroy_id, sid);
			errno = EAGAIN;
			return -1;
		}
		e->ev = *sev;
		e->ev.listen_id = &p->id;
		e->ev.id = &child->id;
	} else {
		sv_cms_pull(p);
		e->ev = *sev;
		e->ev.id = &p->id;
	}
	e->owner = p;
	e->sys_ev = sev;
	return 0;
}
