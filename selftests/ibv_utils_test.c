// SPDX-License-Identifier: GPL-2.0
/*
 * Debian's unmodified ibv_devices and ibv_devinfo (ibverbs-utils), run
 * with LD_LIBRARY_PATH at build/compat so they load our libibverbs.so.1,
 * see softverbs0 and its attributes.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "sv_harness.h"
#include "sv_test.h"

#define IBV_DEVICES	"/usr/bin/ibv_devices"
#define IBV_DEVINFO	"/usr/bin/ibv_devinfo"

/* build/selftests/<me> -> build/compat */
static int compat_dir(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return -1;
	exe[n] = 0;
	if (snprintf(buf, len, "%s/../compat", dirname(exe)) >= (int)len)
		return -1;
	return access(buf, R_OK) ? -1 : 0;
}

/*
 * Run cmd (stdout and stderr) with our compat library; the output is
 * returned malloc'ed, the exit status in *status.
 */
static char *run(const char *cmd, int *status)
{
	char dir[PATH_MAX], *line, *out = NULL;
	size_t len = 0, cap = 0;
	char buf[4096];
	FILE *p;
	int ret;

	if (compat_dir(dir, sizeof(dir)))
		return NULL;
	if (asprintf(&line, "LD_LIBRARY_PATH='%s' %s 2>&1", dir, cmd) < 0)
		return NULL;
	p = popen(line, "r");
	free(line);
	if (!p)
		return NULL;
	while (fgets(buf, sizeof(buf), p)) {
		size_t n = strlen(buf);

		if (len + n + 1 > cap) {
			cap = 2 * (len + n + 1);
			out = realloc(out, cap);
			if (!out)
				break;
		}
		memcpy(out + len, buf, n + 1);
		len += n;
	}
	ret = pclose(p);
	*status = WIFEXITED(ret) ? WEXITSTATUS(ret) : -1;
	if (!out)
		out = strdup("");
	return out;
}

static void show(const char *out)
{
	const char *s = out, *nl;

	while (*s) {
		nl = strchrnul(s, '\n');
		printf("#   %.*s\n", (int)(nl - s), s);
		s = *nl ? nl + 1 : nl;
	}
	fflush(stdout);
}

FIXTURE(utils) {
	char guid[64];		/* sysfs form: xxxx:xxxx:xxxx:xxxx */
};

FIXTURE_SETUP(utils)
{
	char dir[PATH_MAX];

	if (access(IBV_DEVINFO, X_OK) || access(IBV_DEVICES, X_OK))
		SKIP(return, "ibverbs-utils is not installed");
	ASSERT_EQ(0, compat_dir(dir, sizeof(dir)))
		TH_LOG("no build/compat next to this test");
	ASSERT_LT(0, sv_read_attr(SV_SYSFS0 "/node_guid", self->guid,
				  sizeof(self->guid)));
}

FIXTURE_TEARDOWN(utils)
{
}

TEST_F(utils, ibv_devices)
{
	char hex[32], *out;
	int status, i, j;

	out = run(IBV_DEVICES, &status);
	ASSERT_NE(NULL, out);
	show(out);
	EXPECT_EQ(0, status);
	EXPECT_NE(NULL, strstr(out, "softverbs0"));
	/* ibv_devices prints the GUID as 16 hex digits. */
	for (i = 0, j = 0; self->guid[i] && j < 16; i++)
		if (self->guid[i] != ':')
			hex[j++] = self->guid[i];
	hex[j] = 0;
	EXPECT_NE(NULL, strstr(out, hex)) TH_LOG("no %s", hex);
	free(out);
}

TEST_F(utils, ibv_devinfo_v)
{
	char want[128], *out;
	int status;

	out = run(IBV_DEVINFO " -v", &status);
	ASSERT_NE(NULL, out);
	show(out);
	EXPECT_EQ(0, status);
	EXPECT_NE(NULL, strstr(out, "hca_id:\tsoftverbs0"));
	EXPECT_NE(NULL, strstr(out, "transport:\t\t\tInfiniBand (0)"));
	snprintf(want, sizeof(want), "fw_ver:\t\t\t\t%s", SV_FW_VER);
	EXPECT_NE(NULL, strstr(out, want));
	snprintf(want, sizeof(want), "node_guid:\t\t\t%s", self->guid);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), "sys_image_guid:\t\t\t%s", self->guid);
	EXPECT_NE(NULL, strstr(out, want));
	snprintf(want, sizeof(want), "vendor_id:\t\t\t0x%04x", SV_VENDOR_ID);
	EXPECT_NE(NULL, strstr(out, want));
	snprintf(want, sizeof(want), "max_qp:\t\t\t\t%u", sv_param("max_qp"));
	EXPECT_NE(NULL, strstr(out, want));
	snprintf(want, sizeof(want), "max_cqe:\t\t\t%d", SV_DEFAULT_MAX_CQE);
	EXPECT_NE(NULL, strstr(out, want));
	EXPECT_NE(NULL, strstr(out, "phys_port_cnt:\t\t\t1"));
	EXPECT_NE(NULL, strstr(out, "port:\t1"));
	EXPECT_NE(NULL, strstr(out, "PORT_ACTIVE (4)"));
	EXPECT_NE(NULL, strstr(out, "4096 (5)"));
	EXPECT_NE(NULL, strstr(out, "link_layer:\t\tEthernet"));
	EXPECT_NE(NULL, strstr(out, "LINK_UP"));
	EXPECT_NE(NULL, strstr(out, "GID[  0]:\t\tfe80:0000:0000:0000:"));
	EXPECT_NE(NULL, strstr(out, "RoCE v2"));
	EXPECT_NE(NULL, strstr(out, "RoCE v1"));
	free(out);
}

TEST_F(utils, ibv_devinfo_named_device)
{
	char *out;
	int status;

	out = run(IBV_DEVINFO " -d softverbs0 -i 1", &status);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, status);
	EXPECT_NE(NULL, strstr(out, "hca_id:\tsoftverbs0"));
	EXPECT_NE(NULL, strstr(out, "PORT_ACTIVE"));
	free(out);
}

TEST_F(utils, ibv_devinfo_missing_device)
{
	char *out;
	int status;

	out = run(IBV_DEVINFO " -d nosuch", &status);
	ASSERT_NE(NULL, out);
	show(out);
	EXPECT_NE(0, status);
	EXPECT_NE(NULL, strstr(out, "nosuch"));
	EXPECT_EQ(NULL, strstr(out, "hca_id"));
	free(out);
}

/*
 * rdma-core's librdmacm links libibverbs with versioned public symbols
 * only: every one it needs resolves in ours (ldd -r binds them all).
 */
TEST(librdmacm_resolves)
{
	const char *lib = "/usr/lib/x86_64-linux-gnu/librdmacm.so.1";
	char cmd[PATH_MAX], *out;
	int status;

	if (access(lib, R_OK))
		SKIP(return, "librdmacm1 is not installed");
	snprintf(cmd, sizeof(cmd), "ldd -r %s", lib);
	out = run(cmd, &status);
	ASSERT_NE(NULL, out);
	show(out);
	EXPECT_EQ(0, status);
	EXPECT_NE(NULL, strstr(out, "compat/libibverbs.so.1"));
	EXPECT_EQ(NULL, strstr(out, "undefined symbol"));
	EXPECT_EQ(NULL, strstr(out, "not found"));
	free(out);
}

TEST_HARNESS_MAIN
