// SPDX-License-Identifier: GPL-2.0
/*
 * Unmodified Debian binaries over softverbs: rdma-core's ibv_*_pingpong,
 * server and client as two processes on localhost, with the library's
 * compat directory (build/compat) in LD_LIBRARY_PATH: ibv_*_pingpong
 * (rdma-core) and perftest's bandwidth and latency tests with default
 * options. Each run must exit 0 on both sides and print its result line.
 */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sv_harness.h"

static char compat_dir[PATH_MAX];

static void find_compat(void)
{
	char exe[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = 0;
	snprintf(compat_dir, sizeof(compat_dir), "%s/../compat",
		 dirname(exe));
}

/* Start argv with its output in out (a file path); returns the pid. */
static pid_t spawn(char *const argv[], const char *out)
{
	pid_t pid = fork();
	int fd;

	if (pid)
		return pid;
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	setenv("LD_LIBRARY_PATH", compat_dir, 1);
	execvp(argv[0], argv);
	_exit(127);
}

/* Wait for pid up to secs seconds; its exit status, or -1 (killed). */
static int reap(pid_t pid, int secs)
{
	int st, i;

	for (i = 0; i < secs * 10; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static int grep_file(const char *path, const char *what)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

static void dump(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "#   %s", line);
	fclose(f);
}

/* perftest's result lines: "#bytes ..." then a row of numbers. */
#define PP_DONE		"iters in"
#define PERF_DONE	"#bytes"

static int pingpong_expect(const char *prog, int port, const char *args,
			   const char *done);

static int pingpong(const char *prog, int port, const char *args)
{
	return pingpong_expect(prog, port, args, PP_DONE);
}

/*
 * Run "prog -p port args..." as server, then as client to localhost.
 * Returns 0 if both exit 0 and print their done line (the client alone
 * for ib_read_lat, whose server prints no result: the reads are the
 * client's).
 */
static int pingpong_expect(const char *prog, int port, const char *args,
			   const char *done)
{
	char *sargv[16], *cargv[16], portbuf[16], buf[256], *tok, *save;
	const char *sout = "/tmp/sv_pp_server.out";
	const char *cout = "/tmp/sv_pp_client.out";
	int n = 0, i, sst, cst;
	pid_t s, c;

	snprintf(portbuf, sizeof(portbuf), "%d", port);
	snprintf(buf, sizeof(buf), "%s", args);
	sargv[n++] = (char *)prog;
	sargv[n++] = "-p";
	sargv[n++] = portbuf;
	for (tok = strtok_r(buf, " ", &save); tok && n < 14;
	     tok = strtok_r(NULL, " ", &save))
		sargv[n++] = tok;
	sargv[n] = NULL;
	for (i = 0; i < n; i++)
		cargv[i] = sargv[i];
	cargv[n] = "localhost";
	cargv[n + 1] = NULL;

	s = spawn(sargv, sout);
	/* The server listens once it has set up its QP. */
	usleep(700000);
	for (i = 0; i < 5; i++) {
		c = spawn(cargv, cout);
		cst = reap(c, 60 * sv_slow());
		if (cst == 0 || !grep_file(cout, "Couldn't connect"))
			break;
		usleep(500000);
	}
	sst = reap(s, 30 * sv_slow());
	if (sst || cst || !grep_file(cout, done) ||
	    (strcmp(prog, "ib_read_lat") && !grep_file(sout, done))) {
		fprintf(stderr, "# %s %s: server %d client %d\n", prog, args,
			sst, cst);
		dump(sout);
		dump(cout);
		return -1;
	}
	return 0;
}

TEST(rc_c_1)
{
	EXPECT_EQ(0, pingpong("ibv_rc_pingpong", 18511, "-g 1 -c -s 1 -n 50"));
}

TEST(rc_c_4096)
{
	EXPECT_EQ(0, pingpong("ibv_rc_pingpong", 18512, "-g 1 -c -s 4096 -n 50"));
}

TEST(rc_c_65536)
{
	EXPECT_EQ(0, pingpong("ibv_rc_pingpong", 18513, "-g 1 -c -s 65536 -n 20"));
}

TEST(rc_e)
{
	EXPECT_EQ(0, pingpong("ibv_rc_pingpong", 18514, "-g 1 -e -n 50"));
}

TEST(rc_gid0_c_e_8192)
{
	EXPECT_EQ(0, pingpong("ibv_rc_pingpong", 18515, "-g 0 -c -e -s 8192 -n 20"));
}

TEST(uc_c_1)
{
	EXPECT_EQ(0, pingpong("ibv_uc_pingpong", 18521, "-g 1 -c -s 1 -n 50"));
}

TEST(uc_c_4096)
{
	EXPECT_EQ(0, pingpong("ibv_uc_pingpong", 18522, "-g 1 -c -s 4096 -n 50"));
}

TEST(uc_c_e_1000)
{
	EXPECT_EQ(0, pingpong("ibv_uc_pingpong", 18523, "-g 1 -c -e -s 1000 -n 50"));
}

TEST(ud_c_1)
{
	EXPECT_EQ(0, pingpong("ibv_ud_pingpong", 18531, "-g 1 -c -s 1 -n 50"));
}

TEST(ud_c_2048)
{
	EXPECT_EQ(0, pingpong("ibv_ud_pingpong", 18532, "-g 1 -c -s 2048 -n 50"));
}

TEST(ud_c_e_4096)
{
	EXPECT_EQ(0, pingpong("ibv_ud_pingpong", 18533, "-g 1 -c -e -s 4096 -n 50"));
}

TEST(srq_c_1)
{
	EXPECT_EQ(0, pingpong("ibv_srq_pingpong", 18541, "-g 1 -c -s 1 -n 50"));
}

TEST(srq_c_4096)
{
	EXPECT_EQ(0, pingpong("ibv_srq_pingpong", 18542, "-g 1 -c -s 4096 -n 50"));
}

TEST(srq_c_e_2000)
{
	EXPECT_EQ(0, pingpong("ibv_srq_pingpong", 18543, "-g 1 -c -e -s 2000 -n 50"));
}

/*
 * perftest with default options, -d (perftest wants a device name) and -F:
 * perftest calibrates its cycle counter against gettimeofday and, without
 * -F, refuses to print a report when the fit is poor (r^2 < 0.9), which a
 * loaded TCG guest makes it. The run is checked, not the numbers.
 */
static bool perftest_missing(const char *prog)
{
	char bin[64];

	snprintf(bin, sizeof(bin), "/usr/bin/%s", prog);
	return access(bin, X_OK) != 0;
}

/* prog on softverbs0 with more options (a missing perftest passes). */
static int perftest_with(const char *prog, int port, const char *more)
{
	char args[128];

	if (perftest_missing(prog))
		return 0;
	snprintf(args, sizeof(args), "-d softverbs0 -F %s", more);
	return pingpong_expect(prog, port, args, PERF_DONE);
}

static int perftest(const char *prog, int port)
{
	return perftest_with(prog, port, "");
}

/*
 * perftest's DC mode (-c DC, the DCI and DCT of mlx5dv_create_qp()):
 * perftest takes its ibv_wr_*() path, which DC needs, only on the
 * ConnectX part numbers it knows, so the device says it is one for the
 * run (svctl dev set part_id, Documentation/mlx5dv.rst) and goes back.
 */
static int perftest_dc(const char *prog, int port)
{
	char cmd[PATH_MAX + 64];
	int ret;

	if (perftest_missing(prog))
		return 0;
	snprintf(cmd, sizeof(cmd), "%s/../bin/svctl dev set softverbs0 part_id %s",
		 compat_dir, "4123");
	if (system(cmd))
		return -1;
	ret = pingpong_expect(prog, port, "-d softverbs0 -F -c DC", PERF_DONE);
	snprintf(cmd, sizeof(cmd), "%s/../bin/svctl dev set softverbs0 part_id %s",
		 compat_dir, "1");
	return system(cmd) ? -1 : ret;
}

TEST(ib_write_bw_dc)
{
	EXPECT_EQ(0, perftest_dc("ib_write_bw", 18611));
}

TEST(ib_read_bw_dc)
{
	EXPECT_EQ(0, perftest_dc("ib_read_bw", 18612));
}

TEST(ib_send_bw_dc)
{
	EXPECT_EQ(0, perftest_dc("ib_send_bw", 18613));
}

/* perftest's XRC mode (-c XRC): an XRC domain on a file, XRC SRQs. */
static int perftest_xrc(const char *prog, int port, const char *more)
{
	char args[96];

	snprintf(args, sizeof(args), "-c XRC %s", more);
	return perftest_with(prog, port, args);
}

TEST(ib_send_bw_xrc)
{
	EXPECT_EQ(0, perftest_xrc("ib_send_bw", 18621, "-q 2"));
}

TEST(ib_write_bw_xrc)
{
	EXPECT_EQ(0, perftest_xrc("ib_write_bw", 18622, ""));
}

TEST(ib_read_bw_xrc)
{
	EXPECT_EQ(0, perftest_xrc("ib_read_bw", 18623, ""));
}

TEST(ib_atomic_bw_xrc)
{
	EXPECT_EQ(0, perftest_xrc("ib_atomic_bw", 18624, ""));
}

TEST(ib_send_lat_xrc)
{
	EXPECT_EQ(0, perftest_xrc("ib_send_lat", 18625, ""));
}

TEST(ib_write_lat_xrc)
{
	EXPECT_EQ(0, perftest_xrc("ib_write_lat", 18626, ""));
}

TEST(ib_read_lat_xrc)
{
	EXPECT_EQ(0, perftest_xrc("ib_read_lat", 18627, ""));
}

/*
 * perftest's --odp: its buffers registered with IBV_ACCESS_ON_DEMAND
 * (perftest checks odp_caps for the transport first), never pinned.
 */
static int perftest_odp(const char *prog, int port)
{
	return perftest_with(prog, port, "--odp");
}

TEST(ib_write_bw_odp)
{
	EXPECT_EQ(0, perftest_odp("ib_write_bw", 18631));
}

TEST(ib_read_bw_odp)
{
	EXPECT_EQ(0, perftest_odp("ib_read_bw", 18632));
}

TEST(ib_send_bw_odp)
{
	EXPECT_EQ(0, perftest_odp("ib_send_bw", 18633));
}

/* (perftest refuses --odp with atomics: "ODP does not support ATOMICS") */
TEST(ib_write_lat_odp)
{
	EXPECT_EQ(0, perftest_odp("ib_write_lat", 18634));
}

TEST(ib_send_lat_odp)
{
	EXPECT_EQ(0, perftest_odp("ib_send_lat", 18635));
}

/*
 * odp_caps claims every transport, and SRQ receives: each one perftest
 * takes with --odp run (Debian's perftest refuses --odp with UC).
 */
TEST(ib_send_bw_odp_srq)
{
	EXPECT_EQ(0, perftest_with("ib_send_bw", 18636, "--odp --use-srq"));
}

TEST(ib_send_bw_odp_ud)
{
	EXPECT_EQ(0, perftest_with("ib_send_bw", 18637, "--odp -c UD"));
}

TEST(ib_write_bw_odp_xrc)
{
	EXPECT_EQ(0, perftest_with("ib_write_bw", 18639, "--odp -c XRC"));
}

/*
 * rdma-core's ibv_xsrq_pingpong: XRC SRQs and INI/TGT QP pairs, the
 * domain on a file; the server serves -c clients at once.
 */
#define XSRQ_DONE	"success"

TEST(xsrq_pingpong)
{
	EXPECT_EQ(0, pingpong_expect("ibv_xsrq_pingpong", 18630,
				     "-g 1 -n 20 -s 8192", XSRQ_DONE));
}

TEST(xsrq_pingpong_events_mtu4096)
{
	EXPECT_EQ(0, pingpong_expect("ibv_xsrq_pingpong", 18631,
				     "-g 1 -e -m 4096 -n 10 -s 65536",
				     XSRQ_DONE));
}

/*
 * Three clients and a server take longer than the harness's default 30 s
 * on a loaded host (a clean-clone run beside a debug-kernel VM): the
 * test's own waits (60 s a client) decide.
 */
FIXTURE(three) {};
FIXTURE_SETUP(three) {}
FIXTURE_TEARDOWN(three) {}

TEST_F_TIMEOUT(three, xsrq_pingpong_three_clients, 240)
{
	char *sargv[] = { "ibv_xsrq_pingpong", "-p", "18632", "-g", "1",
			  "-c", "3", "-n", "10", NULL };
	char *cargv[] = { "ibv_xsrq_pingpong", "-p", "18632", "-g", "1",
			  "-n", "10", "localhost", NULL };
	const char *outs[] = { "/tmp/sv_xsrq_c0.out", "/tmp/sv_xsrq_c1.out",
			       "/tmp/sv_xsrq_c2.out" };
	const char *sout = "/tmp/sv_xsrq_s.out";
	pid_t s, c[3];
	int i;

	s = spawn(sargv, sout);
	usleep(700000);
	for (i = 0; i < 3; i++)
		c[i] = spawn(cargv, outs[i]);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, reap(c[i], 60 * sv_slow()));
		EXPECT_TRUE(grep_file(outs[i], XSRQ_DONE));
	}
	EXPECT_EQ(0, reap(s, 30 * sv_slow()));
	EXPECT_TRUE(grep_file(sout, XSRQ_DONE));
}

TEST(ib_write_bw)
{
	EXPECT_EQ(0, perftest("ib_write_bw", 18601));
}

TEST(ib_read_bw)
{
	EXPECT_EQ(0, perftest("ib_read_bw", 18602));
}

TEST(ib_send_bw)
{
	EXPECT_EQ(0, perftest("ib_send_bw", 18603));
}

TEST(ib_atomic_bw)
{
	EXPECT_EQ(0, perftest("ib_atomic_bw", 18604));
}

TEST(ib_write_lat)
{
	EXPECT_EQ(0, perftest("ib_write_lat", 18605));
}

TEST(ib_send_lat)
{
	EXPECT_EQ(0, perftest("ib_send_lat", 18606));
}

int main(int argc, char **argv)
{
	find_compat();
	signal(SIGPIPE, SIG_IGN);
	sv_scale_timeouts();
	return test_harness_run(argc, argv);
}
