/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the softverbs selftests. */
#ifndef SV_TEST_H
#define SV_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "softverbs-abi.h"

#define SV_DEV0		SV_DEV_DIR "/softverbs0"
#define SV_SYSFS0	"/sys/class/" SV_CLASS_NAME "/softverbs0"

/* CLOCK_MONOTONIC in seconds. */
static inline double sv_now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A child's exit status, or -1 if it did not exit normally. */
static inline int sv_child_status(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

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

/* Live objects of one type ("pd", "mr", ...) on device dev; -1 on error. */
static inline long sv_dev_obj_count(const char *dev, const char *type)
{
	char path[128], name[32];
	long n, ret = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "/sys/kernel/debug/" SV_CLASS_NAME
		 "/%s/objects", dev);
	fp = fopen(path, "r");
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

/* ... on softverbs0. */
static inline long sv_obj_count(const char *type)
{
	return sv_dev_obj_count("softverbs0", type);
}

/* A socket made in the network namespace /var/run/netns/<ns>; -1 if not. */
static inline int sv_ns_socket(const char *ns, int domain, int type,
			       int proto)
{
	int self = open("/proc/self/ns/net", O_RDONLY);
	char path[128];
	int peer, s = -1;

	snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	peer = open(path, O_RDONLY);
	if (self >= 0 && peer >= 0 && !setns(peer, CLONE_NEWNET)) {
		s = socket(domain, type, proto);
		if (setns(self, CLONE_NEWNET))
			abort();
	}
	if (self >= 0)
		close(self);
	if (peer >= 0)
		close(peer);
	return s;
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

/* build/compat, from the test's own path (build/selftests/X). */
static inline const char *sv_compat_dir(void)
{
	static char dir[PATH_MAX + 16];
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	snprintf(dir, sizeof(dir), "%s/compat", exe);
	return dir;
}


/* Open a softverbs module parameter's file; -1 with errno. */
static inline int sv_param_open(const char *name, int flags)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/softverbs/parameters/%s",
		 name);
	return open(path, flags | O_CLOEXEC);
}

/* A softverbs module parameter's value; 0 if it cannot be read. */
static inline unsigned int sv_param(const char *name)
{
	int fd = sv_param_open(name, O_RDONLY);
	char buf[32];
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoul(buf, NULL, 0);
}

/* Write a softverbs module parameter: 0 or -errno (the module's check). */
static inline int sv_param_set(const char *name, const char *val)
{
	int fd = sv_param_open(name, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

/*
 * svctl dev set DEV SETTINGS ("max_cq 64 max_qp 32"), svctl being the
 * build's (build/bin, beside build/compat). svctl's exit status.
 */
static inline int sv_dev_set(const char *dev, const char *settings)
{
	const char *compat = sv_compat_dir();
	char cmd[PATH_MAX + 256];
	int st;

	if (!compat)
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/../bin/svctl dev set %s %s", compat,
		 dev, settings);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * DEV's six object limits and three queue depths back to a new device's
 * (module parameters).
 */
static inline int sv_dev_limits_reset(const char *dev)
{
	char s[384];

	snprintf(s, sizeof(s),
		 "max_pd %u max_mr %u max_cq %u max_qp %u max_srq %u max_ah %u "
		 "max_qp_wr %u max_cqe %u max_srq_wr %u",
		 sv_param("max_pd"), sv_param("max_mr"), sv_param("max_cq"),
		 sv_param("max_qp"), sv_param("max_srq"), sv_param("max_ah"),
		 sv_param("max_qp_wr"), sv_param("max_cqe"),
		 sv_param("max_srq_wr"));
	return sv_dev_set(dev, s);
}

/*
 * A body run in a child of its own, outside the harness: pid =
 * sv_fork(); the child _exit()s with the body's result; sv_reap(pid) is
 * that result, or -1 if the fork failed or the child did not exit. The
 * output buffered before is flushed first, so that it shows once.
 */
static inline pid_t sv_fork(void)
{
	fflush(stdout);
	fflush(stderr);
	return fork();
}

static inline int sv_reap(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/*
 * The checks of such a body: print what failed, return 1 from the body.
 */
#define CK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "# %s:%d: %s (errno %d)\n",	\
				__FILE__, __LINE__, #cond, errno);	\
			return 1;					\
		}							\
	} while (0)

#endif /* SV_TEST_H */
