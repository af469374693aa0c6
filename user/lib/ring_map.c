// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs: the rings a context maps from its device file (CQs, QPs,
 * SRQs, WQs).
 *
 * A mapping holds the device file open, and with it every kernel object
 * of the context: ibv_close_device() closes cmd_fd, but a ring still
 * mapped would keep the file, its QPs, MRs and pinned pages alive until
 * the process exits. So every ring mapping is registered with its context
 * here, and the context's fini unmaps those the application did not
 * destroy. The objects themselves leak, as they do with rdma-core; using
 * them after ibv_close_device() is undefined.
 */
#include <errno.h>
#include <sys/mman.h>

#include "sv_verbs.h"

static void sv_ring_link(struct sv_context *c, struct sv_ring_map *m)
{
	pthread_mutex_lock(&c->maps_lock);
	m->next = &c->maps;
	m->prev = c->maps.prev;
	c->maps.prev->next = m;
	c->maps.prev = m;
	pthread_mutex_unlock(&c->maps_lock);
}

/* Map @len bytes at @off of the device file into @m: its address, or NULL. */
void *sv_ring_map(struct ibv_context *ctx, struct sv_ring_map *m,
		  uint64_t off, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ctx->cmd_fd, off);

	if (p == MAP_FAILED)
		return NULL;
	m->addr = p;
	m->len = len;
	sv_ring_link(to_svctx(ctx), m);
	return p;
}

/* Put @addr, @len (mapped by the caller) in @m's place: a resized ring. */
void sv_ring_replace(struct ibv_context *ctx, struct sv_ring_map *m,
		     void *addr, size_t len)
{
	struct sv_context *c = to_svctx(ctx);

	pthread_mutex_lock(&c->maps_lock);
	munmap(m->addr, m->len);
	m->addr = addr;
	m->len = len;
	pthread_mutex_unlock(&c->maps_lock);
}

void sv_ring_unmap(struct ibv_context *ctx, struct sv_ring_map *m)
{
	struct sv_context *c = to_svctx(ctx);

	if (!m->addr)
		return;
	pthread_mutex_lock(&c->maps_lock);
	m->prev->next = m->next;
	m->next->prev = m->prev;
	munmap(m->addr, m->len);
	m->addr = NULL;
	m->prev = m->next = m;
	pthread_mutex_unlock(&c->maps_lock);
}

static int sv_ring_ctx_init(struct sv_context *c)
{
	c->maps.prev = c->maps.next = &c->maps;
	return pthread_mutex_init(&c->maps_lock, NULL);
}

static void sv_ring_ctx_fini(struct sv_context *c)
{
	struct sv_ring_map *m;

	pthread_mutex_lock(&c->maps_lock);
	while ((m = c->maps.next) != &c->maps) {
		c->maps.next = m->next;
		munmap(m->addr, m->len);
		m->addr = NULL;
		m->prev = m->next = m;
	}
	c->maps.prev = &c->maps;
	pthread_mutex_unlock(&c->maps_lock);
	pthread_mutex_destroy(&c->maps_lock);
}

SV_CTX_PROVIDER(ring_map, sv_ring_ctx_init, sv_ring_ctx_fini);
