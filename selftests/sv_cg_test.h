/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup v2 helpers of the accounting selftests: make a child cgroup of
 * the root with a controller enabled, move a process into it, read and
 * write its files. The VM mounts cgroup2 at /sys/fs/cgroup.
 */
#ifndef SV_CG_TEST_H
#define SV_CG_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SV_CG_ROOT	"/sys/fs/cgroup"

/* Write val to cg/file (cg "" is the root); 0 or -errno. */
static inline int sv_cg_write(const char *cg, const char *file,
			      const char *val)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), SV_CG_ROOT "/%s/%s", cg, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	return 0;
}

/* The whole of cg/file, NUL-terminated; -1 on error. */
static inline int sv_cg_read(const char *cg, const char *file, char *buf,
			     size_t len)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), SV_CG_ROOT "/%s/%s", cg, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* A file holding one number ("memory.current"); -1 on error. */
static inline long long sv_cg_read_ll(const char *cg, const char *file)
{
	char buf[64];

	if (sv_cg_read(cg, file, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

/* The value of "key N" in a flat keyed file ("memory.events"); -1. */
static inline long long sv_cg_read_key(const char *cg, const char *file,
				       const char *key)
{
	char buf[4096], *p;
	size_t len = strlen(key);

	if (sv_cg_read(cg, file, buf, sizeof(buf)))
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, len) && p[len] == ' ')
			return strtoll(p + len + 1, NULL, 10);
	return -1;
}

/*
 * Make the child cgroup name (under the root) with controller ctl
 * ("memory", "rdma") enabled for it; 0, or -errno (the caller skips on
 * -ENOENT: no cgroup2 or no such controller).
 */
static inline int sv_cg_create(const char *name, const char *ctl)
{
	char path[256], buf[512], plus[32];

	if (sv_cg_read("", "cgroup.controllers", buf, sizeof(buf)))
		return -ENOENT;
	if (!strstr(buf, ctl))
		return -ENOENT;
	snprintf(plus, sizeof(plus), "+%s", ctl);
	if (sv_cg_write("", "cgroup.subtree_control", plus))
		return -errno;
	snprintf(path, sizeof(path), SV_CG_ROOT "/%s", name);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Move process pid into cg; 0 or -errno. */
static inline int sv_cg_enter(const char *cg, pid_t pid)
{
	char val[32];

	snprintf(val, sizeof(val), "%d", (int)pid);
	return sv_cg_write(cg, "cgroup.procs", val);
}

/* Remove cg (its processes have exited). */
static inline void sv_cg_destroy(const char *cg)
{
	char path[256];
	int i;

	snprintf(path, sizeof(path), SV_CG_ROOT "/%s", cg);
	/* An exited child may linger in cgroup.procs for a moment. */
	for (i = 0; i < 100 && rmdir(path) && errno == EBUSY; i++)
		usleep(10000);
}

#endif /* SV_CG_TEST_H */
