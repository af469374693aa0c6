// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rdma-core's libmlx5 beside ours: see mlx5_system.h.
 *
 * Which one: $SOFTVERBS_SYSTEM_LIBMLX5 if set ("" or "none": softverbs
 * devices only; a setuid or setgid program ignores it, as it names code
 * to load), else SV_SYSTEM_LIBMLX5, the path rdma-core's package installs
 * it at (the Makefile's). That file is also what the namespace's
 * libibverbs loads as its mlx5 provider (libmlx5-rdmav34.so links to
 * it), so the loader hands back the same instance: the one whose
 * contexts and objects the calls are given. A path that is this very
 * file (ours, installed in its place) is not loaded.
 *
 * The system's objects: a multiset of their addresses, so that an
 * address the system's library frees and hands out again in another
 * thread before the first destructor's return has been seen stays in it
 * once (keep and forget count). A program with no system object pays
 * one atomic load per call.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sv_compat.h"
#include "mlx5_system.h"
#include "../lib/sv_private.h"

#ifndef SV_SYSTEM_LIBMLX5
#define SV_SYSTEM_LIBMLX5 "/usr/lib/x86_64-linux-gnu/libmlx5.so.1"
#endif

static pthread_once_t sv_mlx5s_once = PTHREAD_ONCE_INIT;
static void *sv_mlx5s_handle;

static void sv_mlx5s_open(void)
{
	const char *path = sv_private_system_path("SOFTVERBS_SYSTEM_LIBMLX5",
						  SV_SYSTEM_LIBMLX5,
						  (void *)sv_mlx5s_open);
	int save = errno;

	if (!path)
		goto out;
	sv_mlx5s_handle = sv_private_system_dlopen(path);
	if (sv_mlx5s_handle && !dlsym(sv_mlx5s_handle, "mlx5dv_is_supported")) {
		dlclose(sv_mlx5s_handle);
		sv_mlx5s_handle = NULL;
	}
out:
	/* Not there: the system's devices get EOPNOTSUPP, as before. */
	errno = save;
}

bool sv_mlx5s_loaded(void)
{
	pthread_once(&sv_mlx5s_once, sv_mlx5s_open);
	return sv_mlx5s_handle;
}

/* Not ours means the system's libibverbs made it (it is loaded). */
bool sv_mlx5s_device(struct ibv_device *dev)
{
	return dev && !sv_private_device_is_ours(dev) && sv_mlx5s_loaded();
}

bool sv_mlx5s_context(struct ibv_context *ctx)
{
	return ctx && sv_mlx5s_device(ctx->device);
}

void *sv_mlx5s_sym(const char *name, const char *version)
{
	void *p;

	if (!version)
		return sv_private_system_sym(sv_mlx5s_handle, "libmlx5", name);
	p = dlvsym(sv_mlx5s_handle, name, version);
	return p ? p : sv_private_system_sym(sv_mlx5s_handle, "libmlx5", name);
}

void sv_mlx5s_errno(void)
{
	errno = sv_private_system_errno();
}

/* ---- the system's objects ---- */

struct sv_mlx5s_slot {
	const void *obj;	/* NULL: free */
	unsigned long refs;
};

static pthread_mutex_t sv_mlx5s_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sv_mlx5s_slot *sv_mlx5s_tab;
static size_t sv_mlx5s_size;	/* a power of two, or 0 */
static size_t sv_mlx5s_used;	/* read without the lock: 0 is "none" */

static size_t sv_mlx5s_hash(const void *obj, size_t size)
{
	uint64_t h = (uintptr_t)obj * 0x9e3779b97f4a7c15ULL;

	return (h >> 32) & (size - 1);
}

/* The slot of @obj, or the free one where it would go. */
static struct sv_mlx5s_slot *sv_mlx5s_find(const void *obj)
{
	size_t i = sv_mlx5s_hash(obj, sv_mlx5s_size);

	while (sv_mlx5s_tab[i].obj && sv_mlx5s_tab[i].obj != obj)
		i = (i + 1) & (sv_mlx5s_size - 1);
	return &sv_mlx5s_tab[i];
}

/* Kept at most half full, so that a probe always ends. */
static int sv_mlx5s_grow(void)
{
	struct sv_mlx5s_slot *old = sv_mlx5s_tab;
	size_t i, n = sv_mlx5s_size;
	size_t size = n ? 2 * n : 64;
	struct sv_mlx5s_slot *tab = calloc(size, sizeof(*tab));

	if (!tab)
		return ENOMEM;
	sv_mlx5s_tab = tab;
	sv_mlx5s_size = size;
	for (i = 0; i < n; i++)
		if (old[i].obj)
			*sv_mlx5s_find(old[i].obj) = old[i];
	free(old);
	return 0;
}

bool sv_mlx5s_object(const void *obj)
{
	bool found;

	if (!obj || !__atomic_load_n(&sv_mlx5s_used, __ATOMIC_ACQUIRE))
		return false;
	pthread_mutex_lock(&sv_mlx5s_lock);
	found = sv_mlx5s_size && sv_mlx5s_find(obj)->obj;
	pthread_mutex_unlock(&sv_mlx5s_lock);
	return found;
}

/*
 * Without memory to remember it, the object would be taken for ours:
 * nothing can be done then but stop.
 */
void sv_mlx5s_keep(const void *obj)
{
	struct sv_mlx5s_slot *s;

	pthread_mutex_lock(&sv_mlx5s_lock);
	if (2 * (sv_mlx5s_used + 1) > sv_mlx5s_size && sv_mlx5s_grow())
		abort();
	s = sv_mlx5s_find(obj);
	if (!s->obj) {
		s->obj = obj;
		__atomic_store_n(&sv_mlx5s_used, sv_mlx5s_used + 1,
				 __ATOMIC_RELEASE);
	}
	s->refs++;
	pthread_mutex_unlock(&sv_mlx5s_lock);
}

/* Linear probing: the entries after a freed slot move up into it. */
void sv_mlx5s_forget(const void *obj)
{
	size_t i, j, k, mask = sv_mlx5s_size - 1;
	struct sv_mlx5s_slot *s;

	pthread_mutex_lock(&sv_mlx5s_lock);
	s = sv_mlx5s_size ? sv_mlx5s_find(obj) : NULL;
	if (!s || !s->obj || --s->refs)
		goto out;
	i = s - sv_mlx5s_tab;
	for (j = (i + 1) & mask; sv_mlx5s_tab[j].obj; j = (j + 1) & mask) {
		k = sv_mlx5s_hash(sv_mlx5s_tab[j].obj, sv_mlx5s_size);
		/* Stays if its home is cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		sv_mlx5s_tab[i] = sv_mlx5s_tab[j];
		i = j;
	}
	sv_mlx5s_tab[i].obj = NULL;
	sv_mlx5s_tab[i].refs = 0;
	__atomic_store_n(&sv_mlx5s_used, sv_mlx5s_used - 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&sv_mlx5s_lock);
}
