/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the softverbs selftests. */
#ifndef SV_TEST_H
#define SV_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "softverbs-abi.h"

#define SV_DEV0		SV_DEV_DIR "/softverbs0"
#define SV_SYSFS0	"/sys/class/" SV_CLASS_NAME "/softverbs0"

/* Read a sysfs attribute, newline stripped; returns bytes or -1. */
static inline int sv_read_attr(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	return n;
}

#define SV_DEBUGFS0	"/sys/kernel/debug/" SV_CLASS_NAME "/softverbs0"

/* Live objects of one type ("pd", "mr", ...) on softverbs0; -1 on error. */
static inline long sv_obj_count(const char *type)
{
	FILE *fp = fopen(SV_DEBUGFS0 "/objects", "r");
	char name[32];
	long n, ret = -1;

	if (!fp)
		return -1;
	while (fscanf(fp, "%31s %ld", name, &n) == 2) {
		if (!strcmp(name, type)) {
			ret = n;
			break;
		}
	}
	fclose(fp);
	return ret;
}

/* A "Name:   N kB" line of /proc/<pid>/status, in kB; -1 if absent. */
static inline long sv_proc_status_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t len = strlen(field);
	long ret = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		if (!strncmp(line, field, len) && line[len] == ':') {
			ret = strtol(line + len + 1, NULL, 10);
			break;
		}
	}
	fclose(fp);
	return ret;
}

/* Pages this process has pinned (mm->pinned_vm), in kB. */
static inline long sv_vm_pin_kb(void)
{
	return sv_proc_status_kb(getpid(), "VmPin");
}

/* PD and MR over raw ioctls: 0 or -errno. */
static inline int svt_alloc_pd(int fd, __u32 *pd)
{
	struct sv_alloc_pd c = { .size = sizeof(c) };

	*pd = 0;
	if (ioctl(fd, SV_IOC_ALLOC_PD, &c))
		return -errno;
	*pd = c.pd_handle;
	return 0;
}

static inline int svt_dealloc_pd(int fd, __u32 pd)
{
	struct sv_dealloc_pd c = { .size = sizeof(c), .pd_handle = pd };

	return ioctl(fd, SV_IOC_DEALLOC_PD, &c) ? -errno : 0;
}

/* key (may be NULL) gets the lkey; the rkey must be equal (-EPROTO). */
static inline int svt_reg_mr(int fd, __u32 pd, const void *addr, __u64 len,
			     __u32 access, __u32 *mr, __u32 *key)
{
	struct sv_reg_mr c = {
		.size = sizeof(c), .pd_handle = pd,
		.addr = (__u64)(unsigned long)addr, .length = len,
		.iova = (__u64)(unsigned long)addr, .access = access,
	};

	*mr = 0;
	if (key)
		*key = 0;
	if (ioctl(fd, SV_IOC_REG_MR, &c))
		return -errno;
	*mr = c.mr_handle;
	if (key)
		*key = c.lkey;
	return c.lkey == c.rkey ? 0 : -EPROTO;
}

static inline int svt_dereg_mr(int fd, __u32 mr)
{
	struct sv_dereg_mr c = { .size = sizeof(c), .mr_handle = mr };

	return ioctl(fd, SV_IOC_DEREG_MR, &c) ? -errno : 0;
}

#endif /* SV_TEST_H */
