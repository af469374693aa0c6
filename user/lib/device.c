// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs: device discovery. Devices are the entries of
 * /sys/class/softverbs whose abi_version this library speaks; each one
 * is a struct sv_device handed out as its struct ibv_device.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <endian.h>
#include <sys/socket.h>

#include "sv_verbs.h"
#include "sv_system.h"
#include "sv_private.h"

#define SV_SYSFS_CLASS	"/class/" SV_CLASS_NAME

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE	71
#endif

static char sv_sysfs_path[IBV_SYSFS_PATH_MAX];
/* "<sysfs>/class/softverbs/": where our devices' ibdev_path points. */
static char sv_class_prefix[IBV_SYSFS_PATH_MAX + sizeof(SV_SYSFS_CLASS)];
static size_t sv_class_prefix_len;
static pthread_once_t sv_sysfs_once = PTHREAD_ONCE_INIT;

static void sv_sysfs_path_init(void)
{
	const char *env = secure_getenv("SYSFS_PATH");
	size_t len;

	if (!env || !*env || strlen(env) >= sizeof(sv_sysfs_path))
		env = "/sys";
	len = strlen(env);
	memcpy(sv_sysfs_path, env, len + 1);
	/* No trailing slashes: callers append "/class/...". */
	while (len > 1 && sv_sysfs_path[len - 1] == '/')
		sv_sysfs_path[--len] = 0;
	/* Sized for the longest path, the class and the slash. */
	sv_class_prefix_len = snprintf(sv_class_prefix,
				       sizeof(sv_class_prefix), "%s%s/",
				       sv_sysfs_path, SV_SYSFS_CLASS);
}

/* The sysfs mount point: $SYSFS_PATH (as libibverbs honours it) or /sys. */
SV_EXPORT const char *ibv_get_sysfs_path(void)
{
	pthread_once(&sv_sysfs_once, sv_sysfs_path_init);
	return sv_sysfs_path;
}

/*
 * Read dir/file into buf (NUL-terminated, one trailing newline dropped).
 * Returns the length, or -1 with errno set.
 */
SV_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file,
				  char *buf, size_t size)
{
	char *path;
	ssize_t len;
	int fd;

	if (!size) {
		errno = EINVAL;
		return -1;
	}
	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len < 0)
		return -1;
	if ((size_t)len == size)
		len--;		/* truncated: keep room for the NUL */
	buf[len] = 0;
	if (len > 0 && buf[len - 1] == '\n')
		buf[--len] = 0;
	return len;
}

/* "xxxx:xxxx:xxxx:xxxx" as the kernel prints a GUID. */
static int sv_parse_guid(const char *s, __be64 *guid)
{
	unsigned int w[4];
	char end;

	if (sscanf(s, "%4x:%4x:%4x:%4x%c", &w[0], &w[1], &w[2], &w[3],
		   &end) != 4)
		return -1;
	*guid = htobe64(((uint64_t)w[0] << 48) | ((uint64_t)w[1] << 32) |
			((uint64_t)w[2] << 16) | w[3]);
	return 0;
}

void sv_device_get(struct sv_device *dev)
{
	__atomic_add_fetch(&dev->refcnt, 1, __ATOMIC_RELAXED);
}

void sv_device_put(struct sv_device *dev)
{
	if (__atomic_sub_fetch(&dev->refcnt, 1, __ATOMIC_ACQ_REL) == 0)
		free(dev);
}

/* The caller's network namespace's cookie; 0 if the kernel cannot say. */
static uint64_t sv_netns_cookie(void)
{
	socklen_t len = sizeof(uint64_t);
	uint64_t cookie = 0;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len))
		cookie = 0;
	close(fd);
	return cookie;
}

/*
 * One sysfs entry, or NULL when it is not a device this library drives:
 * another ABI's, or (cookie not 0) one of another network namespace,
 * which the kernel does not let this one open: as in the RDMA core's
 * exclusive mode, a namespace lists only its own devices.
 */
static struct sv_device *sv_device_probe(const char *class_dir,
					 const char *name, uint64_t cookie)
{
	struct sv_device *dev;
	size_t dir_len, name_len;
	char buf[64], *end;
	long abi, index;

	if (name[0] == '.')
		return NULL;
	dir_len = strlen(class_dir);
	name_len = strlen(name);
	if (name_len >= IBV_SYSFS_NAME_MAX ||
	    dir_len + 1 + name_len >= IBV_SYSFS_PATH_MAX)
		return NULL;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	memcpy(dev->ibdev.ibdev_path, class_dir, dir_len);
	dev->ibdev.ibdev_path[dir_len] = '/';
	memcpy(dev->ibdev.ibdev_path + dir_len + 1, name, name_len + 1);
	/* A kernel speaking another ABI: not ours to drive, as libibverbs
	 * leaves out devices without a matching provider.
	 */
	if (ibv_read_sysfs_file(dev->ibdev.ibdev_path, "abi_version", buf,
				sizeof(buf)) <= 0)
		goto skip;
	abi = strtol(buf, &end, 10);
	if (*end || abi != SV_ABI_VERSION)
		goto skip;
	if (ibv_read_sysfs_file(dev->ibdev.ibdev_path, "node_guid", buf,
				sizeof(buf)) <= 0 ||
	    sv_parse_guid(buf, &dev->node_guid))
		goto skip;
	if (cookie && ibv_read_sysfs_file(dev->ibdev.ibdev_path, "net_cookie",
					  buf, sizeof(buf)) > 0 &&
	    strtoull(buf, NULL, 10) != cookie)
		goto skip;
	/*
	 * The kernel's index: dev_index, or N of softverbsN on kernels
	 * without it. "svctl link add" names devices freely.
	 */
	if (ibv_read_sysfs_file(dev->ibdev.ibdev_path, "dev_index", buf,
				sizeof(buf)) > 0) {
		index = strtol(buf, &end, 10);
		if (*end || index < 0)
			goto skip;
	} else if (!strncmp(name, "softverbs", 9)) {
		index = strtol(name + 9, &end, 10);
		if (end == name + 9 || *end || index < 0)
			goto skip;
	} else {
		goto skip;
	}

	dev->refcnt = 1;
	dev->index = index;
	dev->ibdev.node_type = IBV_NODE_CA;
	dev->ibdev.transport_type = IBV_TRANSPORT_IB;
	strcpy(dev->ibdev.name, name);
	strcpy(dev->ibdev.dev_name, name);
	strcpy(dev->ibdev.dev_path, dev->ibdev.ibdev_path);
	return dev;
skip:
	free(dev);
	return NULL;
}

static int sv_device_cmp(const void *a, const void *b)
{
	const struct sv_device *x = *(struct sv_device * const *)a;
	const struct sv_device *y = *(struct sv_device * const *)b;

	return (x->index > y->index) - (x->index < y->index);
}

/*
 * The devices found so far, as libibverbs keeps them: a device stays
 * the same struct ibv_device from one ibv_get_device_list() to the next
 * for as long as sysfs shows it, and lives on after
 * ibv_free_device_list() while it does. ibv_get_device_list(3) says
 * only opened devices stay valid, but programs (pyverbs, for one) open
 * a device they found in a list they already freed, and compare
 * pointers from two lists; rdma-core's libibverbs allows both. The
 * cache holds a reference to each; a device sysfs no longer shows, or
 * shows with another index or GUID, leaves it at the next scan and is
 * freed when its last list and context are.
 */
static pthread_mutex_t sv_devices_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sv_device **sv_devices;
static size_t sv_devices_n, sv_devices_cap;

/* A device found by this scan: the cached one if it is the same. */
static struct sv_device *sv_device_cache(struct sv_device *dev)
{
	struct sv_device *old, **tmp;
	size_t i;

	for (i = 0; i < sv_devices_n; i++) {
		old = sv_devices[i];
		if (strcmp(old->ibdev.name, dev->ibdev.name))
			continue;
		if (old->index == dev->index &&
		    old->node_guid == dev->node_guid) {
			free(dev);
			return old;
		}
		/* Another device under an old name: it replaces it. */
		sv_devices[i] = dev;
		sv_device_put(old);
		return dev;
	}
	if (sv_devices_n == sv_devices_cap) {
		size_t cap = sv_devices_cap ? 2 * sv_devices_cap : 8;

		tmp = realloc(sv_devices, cap * sizeof(*tmp));
		if (!tmp) {
			free(dev);
			return NULL;
		}
		sv_devices = tmp;
		sv_devices_cap = cap;
	}
	sv_devices[sv_devices_n++] = dev;
	return dev;
}

/* Drop the cached devices this scan did not find (seen: its result). */
static void sv_device_cache_prune(struct sv_device **seen, size_t n)
{
	size_t i, j, kept = 0;

	for (i = 0; i < sv_devices_n; i++) {
		for (j = 0; j < n && seen[j] != sv_devices[i]; j++)
			;
		if (j < n)
			sv_devices[kept++] = sv_devices[i];
		else
			sv_device_put(sv_devices[i]);
	}
	sv_devices_n = kept;
}

/*
 * Our devices as sysfs shows them now, sorted by index, each with a
 * reference for the caller; *np their number. 0, or -1 with errno.
 */
static int sv_device_scan(struct sv_device ***devsp, size_t *np)
{
	struct sv_device **devs = NULL, **tmp, *dev;
	uint64_t cookie = sv_netns_cookie();
	char class_dir[IBV_SYSFS_PATH_MAX];
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *dir;

	snprintf(class_dir, sizeof(class_dir), "%s%s", ibv_get_sysfs_path(),
		 SV_SYSFS_CLASS);
	pthread_mutex_lock(&sv_devices_lock);
	dir = opendir(class_dir);
	/* No module loaded: an empty list, as with no RDMA devices. */
	while (dir && (de = readdir(dir))) {
		dev = sv_device_probe(class_dir, de->d_name, cookie);
		if (!dev)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			tmp = realloc(devs, cap * sizeof(*devs));
			if (!tmp) {
				free(dev);
				goto nomem;
			}
			devs = tmp;
		}
		dev = sv_device_cache(dev);
		if (!dev)
			goto nomem;
		devs[n++] = dev;
	}
	if (dir)
		closedir(dir);
	sv_device_cache_prune(devs, n);
	for (i = 0; i < n; i++)
		sv_device_get(devs[i]);
	pthread_mutex_unlock(&sv_devices_lock);
	if (n)
		qsort(devs, n, sizeof(*devs), sv_device_cmp);
	*devsp = devs;
	*np = n;
	return 0;

nomem:
	/* The cache keeps what it found; the next scan prunes it. */
	closedir(dir);
	pthread_mutex_unlock(&sv_devices_lock);
	free(devs);
	errno = ENOMEM;
	return -1;
}

SV_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list, **sys;
	struct sv_device **devs;
	size_t n, i;
	int nsys;

	if (num_devices)
		*num_devices = 0;
	if (sv_device_scan(&devs, &n))
		return NULL;

	/* The system library's devices after ours; its list in slot 0. */
	sys = sv_system_device_list(&nsys);
	list = calloc(n + nsys + 2, sizeof(*list));
	if (!list) {
		sv_system_free_device_list(sys);
		for (i = 0; i < n; i++)
			sv_device_put(devs[i]);
		free(devs);
		errno = ENOMEM;
		return NULL;
	}
	list[0] = (struct ibv_device *)sys;
	for (i = 0; i < n; i++)
		list[1 + i] = &devs[i]->ibdev;
	for (i = 0; i < (size_t)nsys; i++)
		list[1 + n + i] = sys[i];
	free(devs);
	if (num_devices)
		*num_devices = n + nsys;
	return list + 1;
}

SV_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	struct ibv_device **p;

	if (!list)
		return;
	for (p = list; *p; p++)
		if (sv_private_device_is_ours(*p))
			sv_device_put(to_svdev(*p));
	sv_system_free_device_list((struct ibv_device **)list[-1]);
	free(list - 1);
}

SV_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

/* The node GUID in network byte order, read afresh like libibverbs. */
SV_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	struct sv_device *dev;
	__be64 guid;
	char buf[64];

	SV_SYSTEM_FORWARD_DEV(device, ibv_get_device_guid, device);
	dev = to_svdev(device);

	if (ibv_read_sysfs_file(device->ibdev_path, "node_guid", buf,
				sizeof(buf)) > 0 && !sv_parse_guid(buf, &guid))
		return guid;
	return dev->node_guid;
}

/* The kernel's index of the device (sysfs dev_index). */
SV_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	SV_SYSTEM_FORWARD_DEV(device, ibv_get_device_index, device);
	return to_svdev(device)->index;
}

/*
 * libmlx5 (sv_private.h): a device of ours is one this library found in
 * /sys/class/softverbs, which is where its ibdev_path points; a device of
 * another library (rdma-core's, say) has its path in
 * /sys/class/infiniband.
 */
SV_EXPORT bool sv_private_device_is_ours(struct ibv_device *dev)
{
	if (!dev)
		return false;
	/* Every exported verb asks (sv_system.h): the prefix is made once. */
	pthread_once(&sv_sysfs_once, sv_sysfs_path_init);
	return !strncmp(dev->ibdev_path, sv_class_prefix,
			sv_class_prefix_len) &&
	       !strchr(dev->ibdev_path + sv_class_prefix_len, '/');
}

SV_EXPORT bool sv_private_context_is_ours(struct ibv_context *ctx)
{
	return ctx && sv_private_device_is_ours(ctx->device);
}
