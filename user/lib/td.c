// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Thread domains and parent domains: ibv_alloc_td(3), ibv_dealloc_td(),
 * ibv_alloc_parent_domain(3) (freed with ibv_dealloc_pd()).
 *
 * Both live in the library only: a parent domain is an ibv_pd that stands
 * for its protection domain (same handle, so the kernel sees that PD) and
 * carries a thread domain and the application's allocators. A QP created
 * in a parent domain with a thread domain posts without taking its queue
 * locks, and a CQ created with one (ibv_create_cq_ex()'s parent_domain)
 * polls without its lock: the application promised that one thread at a
 * time uses them (scripts/bench, "tdomain", measures what that saves).
 *
 * Allocators: a QP's rings (one buffer), an SRQ's, a WQ's and a CQ's
 * ring are asked of alloc() once the kernel has made the object and said
 * the size, with the resource types SV_RES_TYPE_QP, _SRQ, _RWQ and _CQ
 * and page alignment.
 * IBV_ALLOCATOR_USE_DEFAULT keeps the module's memory, mapped from the
 * device file; NULL fails the create with ENOMEM; a buffer becomes the
 * ring (SV_IOC_MOVE_RING: the kernel pins it) and goes back to free()
 * when the object is destroyed, or when a resize moves the CQ's or
 * SRQ's ring back to module memory.
 */
#include <stdlib.h>
#include <unistd.h>

#include "sv_verbs.h"
#include "sv_system.h"

struct sv_td {
	struct ibv_td td;
	unsigned int parents;		/* parent domains using it */
};

static struct ibv_td *sv_alloc_td(struct ibv_context *ctx,
				  struct ibv_td_init_attr *attr)
{
	struct sv_td *td;

	if (!attr || attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td) {
		errno = ENOMEM;
		return NULL;
	}
	td->td.context = ctx;
	return &td->td;
}

/* EBUSY while a parent domain uses it. */
static int sv_dealloc_td(struct ibv_td *ibtd)
{
	struct sv_td *td = container_of(ibtd, struct sv_td, td);

	if (__atomic_load_n(&td->parents, __ATOMIC_ACQUIRE))
		return EBUSY;
	free(td);
	return 0;
}

#define SV_PARENT_DOMAIN_MASK	(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | \
				 IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)

static struct ibv_pd *sv_alloc_parent_domain(
	struct ibv_context *ctx, struct ibv_parent_domain_init_attr *attr)
{
	struct sv_pd *pd, *prot;

	if (!attr || !attr->pd || attr->pd->context != ctx ||
	    (attr->td && attr->td->context != ctx) ||
	    (attr->comp_mask & ~(uint32_t)SV_PARENT_DOMAIN_MASK) ||
	    ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	     (!attr->alloc || !attr->free))) {
		errno = EINVAL;
		return NULL;
	}
	prot = to_svpd(attr->pd);
	/* A parent domain over a parent domain: no, as rdma-core. */
	if (prot->protection) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibpd.context = ctx;
	pd->ibpd.handle = prot->ibpd.handle;
	pd->protection = prot;
	if (attr->td) {
		pd->td = container_of(attr->td, struct sv_td, td);
		__atomic_add_fetch(&pd->td->parents, 1, __ATOMIC_RELEASE);
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	__atomic_add_fetch(&prot->parents, 1, __ATOMIC_RELEASE);
	return &pd->ibpd;
}

/*
 * ibv_dealloc_pd() of a parent domain: only the library's, EBUSY while
 * QPs or CQs made in it live; its PD and TD may go once no parent domain
 * uses them.
 */
int sv_parent_domain_free(struct ibv_pd *ibpd)
{
	struct sv_pd *pd = to_svpd(ibpd);

	if (__atomic_load_n(&pd->uses, __ATOMIC_ACQUIRE))
		return EBUSY;
	if (pd->td)
		__atomic_sub_fetch(&pd->td->parents, 1, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&pd->protection->parents, 1, __ATOMIC_RELEASE);
	free(pd);
	return 0;
}

/* Does pd promise one thread at a time (a parent domain with a TD)? */
bool sv_pd_single_threaded(struct ibv_pd *pd)
{
	return pd && to_svpd(pd)->td;
}

/*
 * Ask a parent domain's allocator for a ring buffer of size bytes: NULL
 * (*err 0) if the module's memory is to be used, NULL with *err ENOMEM
 * if it has none to give, else the buffer.
 */
static void *sv_pd_buffer_get(struct ibv_pd *ibpd, size_t size,
			      uint64_t type, int *err)
{
	struct sv_pd *pd = ibpd ? to_svpd(ibpd) : NULL;
	void *p;

	*err = 0;
	if (!pd || !pd->protection || !pd->alloc)
		return NULL;
	p = pd->alloc(ibpd, pd->pd_context, size, sysconf(_SC_PAGESIZE),
		      type);
	if (p == IBV_ALLOCATOR_USE_DEFAULT)
		return NULL;
	if (!p)
		*err = ENOMEM;
	return p;
}

/* Give a buffer sv_pd_ring_take() returned back to the allocator. */
void sv_pd_buffer_put(struct ibv_pd *ibpd, void *buf, uint64_t type)
{
	struct sv_pd *pd = to_svpd(ibpd);

	if (buf)
		pd->free(ibpd, pd->pd_context, buf, type);
}

/**
 * sv_pd_ring_take - a parent domain's buffer as a new object's ring
 * @ctx: the object's context
 * @pd: the PD it was made in (a parent domain, or not)
 * @res_type: SV_RES_TYPE_*, for the allocator
 * @move_type: SV_WQ_QP, SV_WQ_SRQ, SV_RING_CQ or SV_RING_WQ
 * @handle: the object's
 * @len: its ring mapping's length
 * @err: 0, or an errno value
 *
 * The buffer pd's allocator gives, which the kernel then uses as the
 * object's ring (SV_IOC_MOVE_RING: it pins it); NULL with *err 0 if the
 * module's memory stays (no allocator, or IBV_ALLOCATOR_USE_DEFAULT).
 * On an error no buffer is kept: the allocator has it back.
 */
void *sv_pd_ring_take(struct ibv_context *ctx, struct ibv_pd *pd,
		      uint64_t res_type, uint32_t move_type, uint32_t handle,
		      size_t len, int *err)
{
	struct sv_move_ring m = { .size = sizeof(m), .type = move_type,
				  .handle = handle, .len = len };
	void *buf = sv_pd_buffer_get(pd, len, res_type, err);

	if (!buf)
		return NULL;
	m.addr = (uintptr_t)buf;
	*err = sv_cmd(ctx, SV_IOC_MOVE_RING, &m);
	if (*err) {
		sv_pd_buffer_put(pd, buf, res_type);
		return NULL;
	}
	return buf;
}

/* A QP or CQ made in (delta 1) or gone from (-1) pd, if a parent domain. */
void sv_pd_use(struct ibv_pd *ibpd, int delta)
{
	struct sv_pd *pd = ibpd ? to_svpd(ibpd) : NULL;

	if (pd && pd->protection)
		__atomic_add_fetch(&pd->uses, delta, __ATOMIC_ACQ_REL);
}

static int sv_td_ctx_init(struct sv_context *ctx)
{
	ctx->vctx.alloc_td = sv_alloc_td;
	ctx->vctx.dealloc_td = sv_dealloc_td;
	ctx->vctx.alloc_parent_domain = sv_alloc_parent_domain;
	return 0;
}

SV_CTX_PROVIDER(td, sv_td_ctx_init, NULL);
