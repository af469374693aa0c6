/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the softverbs selftests. */
#ifndef SV_TEST_H
#define SV_TEST_H

#include <fcntl.h>
#include <stdio.h>
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

#endif /* SV_TEST_H */
