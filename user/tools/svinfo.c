// SPDX-License-Identifier: GPL-2.0
/*
 * svinfo: list softverbs devices from sysfs and ask each for its ABI.
 *
 *   svinfo [DEVICE]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "softverbs-abi.h"

static int read_attr(const char *dev, const char *attr, char *buf, size_t len)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/%s/%s/%s", SV_CLASS_NAME,
		 dev, attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int show(const char *dev)
{
	struct sv_query_abi q = { .size = sizeof(q) };
	char guid[64] = "?", abi[16] = "?", path[256];
	int fd;

	if (read_attr(dev, "abi_version", abi, sizeof(abi))) {
		fprintf(stderr, "svinfo: %s: no such device\n", dev);
		return 1;
	}
	read_attr(dev, "node_guid", guid, sizeof(guid));
	snprintf(path, sizeof(path), "%s/%s", SV_DEV_DIR, dev);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, SV_IOC_QUERY_ABI, &q)) {
		fprintf(stderr, "svinfo: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	close(fd);
	printf("%-12s node_guid %s  sysfs abi %s  ioctl abi %u  %s\n",
	       dev, guid, abi, q.abi_version, path);
	return 0;
}

int main(int argc, char **argv)
{
	struct dirent *d;
	int ret = 0, n = 0;
	DIR *dir;

	if (argc > 1)
		return show(argv[1]);
	dir = opendir("/sys/class/" SV_CLASS_NAME);
	if (!dir) {
		fprintf(stderr, "svinfo: no softverbs devices (module not loaded?)\n");
		return 1;
	}
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		ret |= show(d->d_name);
		n++;
	}
	closedir(dir);
	if (!n)
		fprintf(stderr, "svinfo: no softverbs devices\n");
	return ret || !n;
}
