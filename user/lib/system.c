// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The system's libibverbs beside ours: see sv_system.h.
 *
 * Which one: $SOFTVERBS_SYSTEM_LIBIBVERBS if set ("" or "none": no system
 * library, softverbs devices only; a setuid or setgid program ignores it,
 * as it names code to load), else SV_SYSTEM_LIBIBVERBS, the path
 * rdma-core's package installs it at (the Makefile's). A path that is this
 * very file (the drop-in installed in its place) is not loaded.
 *
 * Why a namespace of its own: loaded with dlopen(), rdma-core's library and
 * its providers (libmlx5-rdmav34.so ...) would bind their libibverbs.so.1
 * symbols to the first definition in the global scope, ours. With
 * dlmopen(LM_ID_NEWLM) they have a scope of their own, with its own libc:
 * memory either library allocates is freed by the same one, and objects
 * never cross (an object is the system's when its device is not ours).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sv_verbs.h"
#include "sv_private.h"
#include "sv_system.h"

#ifndef SV_SYSTEM_LIBIBVERBS
#define SV_SYSTEM_LIBIBVERBS "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"
#endif

static pthread_once_t sv_system_once = PTHREAD_ONCE_INIT;
static void *sv_system_handle;
/* The errno of that namespace's libc, for the calling thread. */
static int *(*sv_system_errno_location)(void);

/* Is path the file that holds self (a drop-in installed in its place)? */
static bool sv_is_file_of(const char *path, const void *self)
{
	struct stat a, b;
	Dl_info info;

	if (!dladdr(self, &info) || !info.dli_fname)
		return false;
	if (stat(path, &a) || stat(info.dli_fname, &b))
		return false;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

SV_EXPORT const char *sv_private_system_path(const char *env,
					    const char *path, const void *self)
{
	const char *p = secure_getenv(env);

	if (!p)
		p = path;
	if (!*p || !strcmp(p, "none") || access(p, R_OK) ||
	    sv_is_file_of(p, self))
		return NULL;
	return p;
}

static void sv_system_open(void)
{
	const char *path = sv_private_system_path("SOFTVERBS_SYSTEM_LIBIBVERBS",
						  SV_SYSTEM_LIBIBVERBS,
						  (void *)sv_system_load);

	if (!path)
		return;
	sv_system_handle = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
	/* Not usable (no rdma-core, another ABI): softverbs devices only. */
	if (!sv_system_handle)
		return;
	sv_system_errno_location = (__typeof__(sv_system_errno_location))
		dlsym(sv_system_handle, "__errno_location");
	if (!dlsym(sv_system_handle, "ibv_get_device_list") ||
	    !sv_system_errno_location) {
		dlclose(sv_system_handle);
		sv_system_handle = NULL;
	}
}

void sv_system_errno(void)
{
	errno = *sv_system_errno_location();
}

bool sv_system_load(void)
{
	pthread_once(&sv_system_once, sv_system_open);
	return sv_system_handle;
}

/* Only the system library hands out devices that are not ours. */
bool sv_system_device(struct ibv_device *dev)
{
	return dev && sv_system_handle && !sv_private_device_is_ours(dev);
}

bool sv_system_context(struct ibv_context *ctx)
{
	return ctx && sv_system_device(ctx->device);
}

SV_EXPORT void *sv_private_system_dlopen(const char *path)
{
	Lmid_t lmid;

	if (!sv_system_load() ||
	    dlinfo(sv_system_handle, RTLD_DI_LMID, &lmid))
		return NULL;
	return dlmopen(lmid, path, RTLD_NOW | RTLD_LOCAL);
}

SV_EXPORT int sv_private_system_errno(void)
{
	return sv_system_handle ? *sv_system_errno_location() : 0;
}

SV_EXPORT void *sv_private_system_sym(void *handle, const char *lib,
				       const char *name)
{
	void *p = dlsym(handle, name);

	if (!p) {
		fprintf(stderr, "softverbs: the system %s has no %s\n", lib,
			name);
		abort();
	}
	return p;
}

void *sv_system_sym(const char *name)
{
	return sv_private_system_sym(sv_system_handle, "libibverbs", name);
}

struct ibv_device **sv_system_device_list(int *num)
{
	struct ibv_device **list;

	*num = 0;
	if (!sv_system_load())
		return NULL;
	list = SV_SYSTEM_CALL(ibv_get_device_list, num);
	if (!list)
		*num = 0;
	return list;
}

void sv_system_free_device_list(struct ibv_device **list)
{
	if (list)
		SV_SYSTEM_CALL_VOID(ibv_free_device_list, list);
}
