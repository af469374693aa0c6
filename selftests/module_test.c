// SPDX-License-Identifier: GPL-2.0
/*
 * Module life: load, the device node and sysfs class appear, the module
 * cannot go while a file is open, unload removes them, and it loads again.
 * Needs SV_KO, the path of softverbs.ko (run_tests.sh sets it).
 */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>

#include "sv_harness.h"
#include "sv_test.h"

static int sv_loaded(void)
{
	return access("/sys/module/softverbs", F_OK) == 0;
}

static int sv_load(const char *ko)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -1;
	ret = syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	return ret;
}

static int sv_unload(void)
{
	return syscall(SYS_delete_module, "softverbs", O_NONBLOCK);
}

FIXTURE(module) {
	const char *ko;
	int was_loaded;
};

FIXTURE_SETUP(module)
{
	self->ko = getenv("SV_KO");
	if (!self->ko)
		SKIP(return, "SV_KO (path of softverbs.ko) not set");
	if (geteuid())
		SKIP(return, "needs root");
	self->was_loaded = sv_loaded();
	if (self->was_loaded)
		ASSERT_EQ(0, sv_unload());
}

FIXTURE_TEARDOWN(module)
{
	/* Leave the module as we found it. */
	if (self->ko && self->was_loaded && !sv_loaded())
		sv_load(self->ko);
	if (self->ko && !self->was_loaded && sv_loaded())
		sv_unload();
}

TEST_F(module, load_creates_device_and_class)
{
	char buf[64], want[32];
	struct stat st;
	regex_t re;

	ASSERT_EQ(0, sv_load(self->ko));
	ASSERT_EQ(0, stat(SV_DEV0, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));

	ASSERT_LT(0, sv_read_attr(SV_SYSFS0 "/abi_version", buf, sizeof(buf)));
	EXPECT_EQ(SV_ABI_VERSION, atoi(buf));
	ASSERT_LT(0, sv_read_attr(SV_SYSFS0 "/ibdev", buf, sizeof(buf)));
	EXPECT_STREQ("softverbs0", buf);
	ASSERT_LT(0, sv_read_attr(SV_SYSFS0 "/node_guid", buf, sizeof(buf)));
	ASSERT_EQ(0, regcomp(&re, "^([0-9a-f]{4}:){3}[0-9a-f]{4}$",
			     REG_EXTENDED | REG_NOSUB));
	EXPECT_EQ(0, regexec(&re, buf, 0, NULL, 0));
	regfree(&re);
	/* The dev attribute matches the node's device number. */
	ASSERT_LT(0, sv_read_attr(SV_SYSFS0 "/dev", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%u:%u", major(st.st_rdev),
		 minor(st.st_rdev));
	EXPECT_STREQ(want, buf);
}

TEST_F(module, load_twice_is_eexist)
{
	ASSERT_EQ(0, sv_load(self->ko));
	EXPECT_EQ(-1, sv_load(self->ko));
	EXPECT_EQ(EEXIST, errno);
}

TEST_F(module, busy_while_file_open)
{
	struct sv_query_abi q = { .size = sizeof(q) };
	int fd;

	ASSERT_EQ(0, sv_load(self->ko));
	fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, sv_unload());
	EXPECT_EQ(EWOULDBLOCK, errno);
	EXPECT_TRUE(sv_loaded());
	/* The file still works. */
	EXPECT_EQ(0, ioctl(fd, SV_IOC_QUERY_ABI, &q));
	close(fd);
	EXPECT_EQ(0, sv_unload());
}

TEST_F(module, unload_removes_device_and_class)
{
	ASSERT_EQ(0, sv_load(self->ko));
	ASSERT_EQ(0, sv_unload());
	EXPECT_FALSE(sv_loaded());
	EXPECT_EQ(-1, access(SV_DEV0, F_OK));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, access("/sys/class/" SV_CLASS_NAME, F_OK));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(module, reload_cycles)
{
	int i;

	for (i = 0; i < 20; i++) {
		int fd;

		ASSERT_EQ(0, sv_load(self->ko));
		fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		close(fd);
		ASSERT_EQ(0, sv_unload());
	}
}

TEST_HARNESS_MAIN
