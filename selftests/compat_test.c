// SPDX-License-Identifier: GPL-2.0
/*
 * The compat directory (build/compat): our libibverbs.so.1, libmlx5.so.1,
 * libefa.so.1 and librdmacm.so.1. Unmodified Debian perftest binaries
 * must load against it (they link libmlx5, libefa and librdmacm with
 * BIND_NOW), find softverbs0, open it and get as far as the library takes
 * them.
 *
 * - every versioned symbol of rdma-core's libmlx5.so.1, libefa.so.1 and
 *   librdmacm.so.1 is in ours, in the same version node (dlvsym);
 * - the direct-verbs calls answer for a softverbs device as documented
 *   (mlx5dv_test tests libmlx5's softverbs face in depth);
 * - the dynamic loader resolves every perftest binary against the directory
 *   with nothing undefined (what `ldd -r` checks), and each one runs;
 * - ib_write_bw finds softverbs0 and a server/client pair on it opens the
 *   device and exchanges QP numbers over TCP.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/efadv.h>

#include "sv_harness.h"
#include "sv_test.h"

#define SYS_LIBDIR	"/usr/lib/x86_64-linux-gnu"

static const char *const perftest[] = {
	"ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_atomic_bw",
	"ib_write_lat", "ib_send_lat", "ib_read_lat", "ib_atomic_lat",
};

static void *compat_open(const char *lib)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", sv_compat_dir(), lib);
	return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

/*
 * Run argv with extra environment entries; output (stdout and stderr) into
 * out. Killed after timeout_s. Returns the wait status, or -1.
 */
static int run(char *const argv[], char *const env[], char *out, size_t len,
	       int timeout_s)
{
	time_t end = time(NULL) + timeout_s;
	int pfd[2], status;
	size_t used = 0;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		for (; env && *env; env++)
			putenv(*env);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		int left = (int)(end - time(NULL));
		ssize_t n;

		if (left <= 0 || poll(&p, 1, left * 1000) <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		n = read(pfd[0], out + used, len - 1 - used);
		if (n <= 0)
			break;
		used += n;
		if (used == len - 1) {
			/* Keep reading so the child never blocks on us. */
			char sink[4096];

			while (read(pfd[0], sink, sizeof(sink)) > 0)
				;
			break;
		}
	}
	out[used] = 0;
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static bool have_perftest(void)
{
	return !access("/usr/bin/ib_write_bw", X_OK);
}

/*
 * Every "name@VER" / "name@@VER" defined in the system library must be
 * found by dlvsym in ours, under the same version.
 */
static int check_versions(struct __test_metadata *_metadata,
			  const char *syslib, void *ours)
{
	char *const argv[] = { "readelf", "--dyn-syms", "-W",
			       (char *)syslib, NULL };
	static char out[1 << 18];
	char *line, *save;
	int status, n = 0;

	status = run(argv, NULL, out, sizeof(out), 60);
	if (status)
		return -1;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[256], *at, *ver;

		/* Num: Value Size Type Bind Vis Ndx Name */
		if (!strstr(line, " FUNC ") || strstr(line, " UND "))
			continue;
		at = strrchr(line, ' ');
		if (!at || !strchr(at, '@'))
			continue;
		snprintf(name, sizeof(name), "%s", at + 1);
		at = strchr(name, '@');
		*at = 0;
		ver = at + 1 + (at[1] == '@');
		EXPECT_NE(NULL, dlvsym(ours, name, ver))
			TH_LOG("%s@%s missing", name, ver);
		n++;
	}
	return n;
}

/* librdmacm: rdma-core 44's 68 functions, rsockets too, in their nodes. */
TEST(rdmacm_symbols)
{
	void *h = compat_open("librdmacm.so.1");
	int n;

	ASSERT_NE(NULL, h) TH_LOG("%s", dlerror());
	if (access(SYS_LIBDIR "/librdmacm.so.1", R_OK))
		SKIP(dlclose(h); return, "no rdma-core librdmacm.so.1 to compare");
	n = check_versions(_metadata, SYS_LIBDIR "/librdmacm.so.1", h);
	if (n < 0)
		SKIP(dlclose(h); return, "readelf failed");
	EXPECT_LE(60, n);
	dlclose(h);
}

TEST(mlx5_symbols)
{
	void *h = compat_open("libmlx5.so.1");
	int n;

	ASSERT_NE(NULL, h) TH_LOG("%s", dlerror());
	if (access(SYS_LIBDIR "/libmlx5.so.1", R_OK))
		SKIP(dlclose(h); return, "no rdma-core libmlx5.so.1 to compare");
	n = check_versions(_metadata, SYS_LIBDIR "/libmlx5.so.1", h);
	if (n < 0)
		SKIP(dlclose(h); return, "readelf failed");
	/* rdma-core 44: 128 names, mlx5dv_init_obj twice. */
	EXPECT_GE(n, 129);
	/* Both versions of mlx5dv_init_obj, the default being MLX5_1.2. */
	EXPECT_NE(NULL, dlvsym(h, "mlx5dv_init_obj", "MLX5_1.0"));
	EXPECT_EQ(dlvsym(h, "mlx5dv_init_obj", "MLX5_1.2"),
		  dlsym(h, "mlx5dv_init_obj"));
	EXPECT_NE(dlvsym(h, "mlx5dv_init_obj", "MLX5_1.0"),
		  dlvsym(h, "mlx5dv_init_obj", "MLX5_1.2"));
	/* Nothing of ours leaks out. */
	EXPECT_EQ(NULL, dlsym(h, "sv_mlx5dv_init_obj_1_0"));
	dlclose(h);
}

TEST(efa_symbols)
{
	void *h = compat_open("libefa.so.1");
	int n;

	ASSERT_NE(NULL, h) TH_LOG("%s", dlerror());
	if (access(SYS_LIBDIR "/libefa.so.1", R_OK))
		SKIP(dlclose(h); return, "no rdma-core libefa.so.1 to compare");
	n = check_versions(_metadata, SYS_LIBDIR "/libefa.so.1", h);
	if (n < 0)
		SKIP(dlclose(h); return, "readelf failed");
	EXPECT_GE(n, 6);
	EXPECT_NE(NULL, dlvsym(h, "efadv_query_device", "EFA_1.1"));
	EXPECT_NE(NULL, dlvsym(h, "efadv_create_cq", "EFA_1.2"));
	dlclose(h);
}

FIXTURE(dv) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	void *mlx5, *efa;
};

FIXTURE_SETUP(dv)
{
	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	ASSERT_NE(NULL, self->list[0]) TH_LOG("no softverbs device");
	self->ctx = ibv_open_device(self->list[0]);
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 4, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->mlx5 = compat_open("libmlx5.so.1");
	ASSERT_NE(NULL, self->mlx5) TH_LOG("%s", dlerror());
	self->efa = compat_open("libefa.so.1");
	ASSERT_NE(NULL, self->efa) TH_LOG("%s", dlerror());
}

FIXTURE_TEARDOWN(dv)
{
	if (self->efa)
		dlclose(self->efa);
	if (self->mlx5)
		dlclose(self->mlx5);
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
}

#define DV(h, name, ver)	((__typeof__(&name))dlvsym(h, #name, ver))

TEST_F(dv, mlx5_answers)
{
	__typeof__(&mlx5dv_init_obj) init_obj_1_0 =
		(__typeof__(&mlx5dv_init_obj))dlvsym(self->mlx5, "mlx5dv_init_obj",
						     "MLX5_1.0");
	__typeof__(&mlx5dv_init_obj) init_obj_1_2 =
		(__typeof__(&mlx5dv_init_obj))dlvsym(self->mlx5, "mlx5dv_init_obj",
						     "MLX5_1.2");
	struct mlx5dv_context_attr oattr = {};
	struct mlx5dv_context dattr = {};
	struct ibv_qp_init_attr_ex qattr = {
		.qp_type = IBV_QPT_RC, .send_cq = self->cq, .recv_cq = self->cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = self->pd,
	};
	struct mlx5dv_qp_init_attr mqattr = {};
	struct mlx5dv_steering_anchor_attr sattr = {};
	struct mlx5dv_steering_anchor *sa;
	struct mlx5dv_dr_domain *dmn;
	struct mlx5dv_clock_info clock;
	struct mlx5dv_cq mcq = {};
	struct mlx5dv_obj obj = { .cq = { .in = self->cq, .out = &mcq } };
	struct ibv_context *ctx2;
	struct ibv_qp *qp;
	uint32_t qpn = 0;

	ASSERT_NE(NULL, init_obj_1_0);
	ASSERT_NE(NULL, init_obj_1_2);

	/*
	 * softverbs devices are served (mlx5dv_test has the details),
	 * through the libsoftverbs.so.1 this test linked: libmlx5's own
	 * libibverbs.so.1 (its DT_NEEDED) comes second in the lookup order.
	 */
	EXPECT_TRUE(DV(self->mlx5, mlx5dv_is_supported, "MLX5_1.8")(self->list[0]));
	EXPECT_EQ(0, DV(self->mlx5, mlx5dv_query_device, "MLX5_1.0")(self->ctx, &dattr));
	ctx2 = DV(self->mlx5, mlx5dv_open_device, "MLX5_1.7")(self->list[0], &oattr);
	ASSERT_NE(NULL, ctx2);
	EXPECT_EQ(0, ibv_close_device(ctx2));
	EXPECT_EQ(EOPNOTSUPP, init_obj_1_0(&obj, MLX5DV_OBJ_CQ));
	EXPECT_EQ(EOPNOTSUPP, init_obj_1_2(&obj, MLX5DV_OBJ_CQ));
	qp = DV(self->mlx5, mlx5dv_create_qp, "MLX5_1.3")(self->ctx, &qattr, &mqattr);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	/* Anchors and DR domains are served (mlx5dv_flow_test) ... */
	sa = DV(self->mlx5, mlx5dv_create_steering_anchor,
		"MLX5_1.24")(self->ctx, &sattr);
	ASSERT_NE(NULL, sa);
	EXPECT_EQ(0, DV(self->mlx5, mlx5dv_destroy_steering_anchor,
			"MLX5_1.24")(sa));
	/* ... with rdma-core's answer to an unknown comp_mask bit */
	sattr.comp_mask = 1;
	errno = 0;
	EXPECT_EQ(NULL, DV(self->mlx5, mlx5dv_create_steering_anchor,
			   "MLX5_1.24")(self->ctx, &sattr));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(EOPNOTSUPP, DV(self->mlx5, mlx5dv_get_clock_info,
				 "MLX5_1.4")(self->ctx, &clock));
	EXPECT_EQ(EOPNOTSUPP, DV(self->mlx5, mlx5dv_reserved_qpn_alloc,
				 "MLX5_1.18")(self->ctx, &qpn));
	errno = 0;
	EXPECT_EQ(NULL, DV(self->mlx5, mlx5dv_devx_obj_create,
			   "MLX5_1.7")(self->ctx, &qpn, sizeof(qpn), &qpn,
					 sizeof(qpn)));
	EXPECT_EQ(EOPNOTSUPP, errno);
	errno = 0;
	EXPECT_EQ(-1, DV(self->mlx5, mlx5dv_devx_get_event,
			 "MLX5_1.11")(NULL, NULL, 0));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(-EOPNOTSUPP, DV(self->mlx5, mlx5dv_qp_cancel_posted_send_wrs,
				  "MLX5_1.20")(NULL, 0));
	dmn = DV(self->mlx5, mlx5dv_dr_domain_create, "MLX5_1.10")
		(self->ctx, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	ASSERT_NE(NULL, dmn);
	EXPECT_EQ(0, DV(self->mlx5, mlx5dv_dr_domain_destroy, "MLX5_1.10")(dmn));
	errno = 0;
	EXPECT_EQ(NULL, DV(self->mlx5, mlx5dv_dr_domain_create, "MLX5_1.10")
		  (self->ctx, MLX5DV_DR_DOMAIN_TYPE_FDB));
	EXPECT_EQ(EOPNOTSUPP, errno);
	/* The library's own objects are untouched by all this. */
	EXPECT_EQ(0, ibv_destroy_cq(self->cq));
	self->cq = NULL;
}

TEST_F(dv, efa_answers)
{
	struct efadv_device_attr attr;
	struct ibv_cq_init_attr_ex cattr = { .cqe = 4 };
	struct efadv_cq_init_attr ecattr = {};
	struct ibv_qp_init_attr qattr = {
		.qp_type = IBV_QPT_UD, .send_cq = self->cq, .recv_cq = self->cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	memset(&attr, 0xa5, sizeof(attr));
	EXPECT_EQ(EOPNOTSUPP, DV(self->efa, efadv_query_device, "EFA_1.1")
		  (self->ctx, &attr, sizeof(attr)));
	errno = 0;
	EXPECT_EQ(NULL, DV(self->efa, efadv_create_cq, "EFA_1.2")
		  (self->ctx, &cattr, &ecattr, sizeof(ecattr)));
	EXPECT_EQ(EOPNOTSUPP, errno);
	errno = 0;
	EXPECT_EQ(NULL, DV(self->efa, efadv_create_driver_qp, "EFA_1.0")
		  (self->pd, &qattr, EFADV_QP_DRIVER_TYPE_SRD));
	EXPECT_EQ(EOPNOTSUPP, errno);
}

/* What `ldd -r` does: the loader lists what it bound, and warns. */
TEST(perftest_links)
{
	char lib_path[PATH_MAX + 32], want[PATH_MAX + 64];
	static char out[1 << 16];
	unsigned int i;

	if (!have_perftest())
		SKIP(return, "perftest is not installed");
	snprintf(lib_path, sizeof(lib_path), "LD_LIBRARY_PATH=%s", sv_compat_dir());
	for (i = 0; i < sizeof(perftest) / sizeof(perftest[0]); i++) {
		char bin[64];
		char *const argv[] = { bin, NULL };
		char *const env[] = { lib_path, "LD_TRACE_LOADED_OBJECTS=1",
				      "LD_BIND_NOW=1", "LD_WARN=1", NULL };
		const char *const libs[] = { "libibverbs.so.1", "libmlx5.so.1",
					     "libefa.so.1", "librdmacm.so.1" };
		unsigned int j;
		int status;

		snprintf(bin, sizeof(bin), "/usr/bin/%s", perftest[i]);
		status = run(argv, env, out, sizeof(out), 60);
		EXPECT_EQ(0, status) TH_LOG("%s: %s", bin, out);
		EXPECT_EQ(NULL, strstr(out, "undefined symbol"))
			TH_LOG("%s: %s", bin, out);
		EXPECT_EQ(NULL, strstr(out, "not found")) TH_LOG("%s: %s", bin, out);
		EXPECT_EQ(NULL, strstr(out, "symbol lookup error"));
		for (j = 0; j < sizeof(libs) / sizeof(libs[0]); j++) {
			snprintf(want, sizeof(want), "%s => %s/%s", libs[j],
				 sv_compat_dir(), libs[j]);
			EXPECT_NE(NULL, strstr(out, want))
				TH_LOG("%s: no \"%s\" in\n%s", bin, want, out);
		}
	}
}

/* Each binary runs main(): its usage text, exit status 1 (perftest's). */
TEST(perftest_runs)
{
	char lib_path[PATH_MAX + 32];
	static char out[1 << 16];
	unsigned int i;

	if (!have_perftest())
		SKIP(return, "perftest is not installed");
	snprintf(lib_path, sizeof(lib_path), "LD_LIBRARY_PATH=%s", sv_compat_dir());
	for (i = 0; i < sizeof(perftest) / sizeof(perftest[0]); i++) {
		char *const argv[] = { (char *)perftest[i], "--help", NULL };
		char *const env[] = { lib_path, NULL };
		int status = run(argv, env, out, sizeof(out), 60);

		ASSERT_TRUE(WIFEXITED(status)) TH_LOG("%s: %s", perftest[i], out);
		EXPECT_EQ(1, WEXITSTATUS(status)) TH_LOG("%s: %s", perftest[i], out);
		EXPECT_NE(NULL, strstr(out, "Usage:")) TH_LOG("%s: %s", perftest[i], out);
	}
}

/* perftest asks our device list for a name: softverbs0 is there. */
TEST(perftest_finds_device)
{
	char lib_path[PATH_MAX + 32];
	static char out[1 << 16];
	char *const argv[] = { "ib_write_bw", "-d", "sv_no_such_dev", NULL };
	char *const env[] = { lib_path, NULL };
	int status;

	if (!have_perftest())
		SKIP(return, "perftest is not installed");
	snprintf(lib_path, sizeof(lib_path), "LD_LIBRARY_PATH=%s", sv_compat_dir());
	status = run(argv, env, out, sizeof(out), 60);
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("%s", out);
	EXPECT_EQ(1, WEXITSTATUS(status));
	/* Not "Did not detect devices": the list was not empty. */
	EXPECT_NE(NULL, strstr(out, "IB device sv_no_such_dev not found"))
		TH_LOG("%s", out);
}

/* Is a TCP socket listening on port (any address)? */
static bool tcp_listening(unsigned int port)
{
	char line[512];
	bool found = false;
	FILE *fp;

	fp = fopen("/proc/net/tcp", "r");
	if (!fp)
		return false;
	while (fgets(line, sizeof(line), fp)) {
		unsigned int lport, state;

		if (sscanf(line, " %*d: %*x:%x %*x:%*x %x", &lport, &state) == 2 &&
		    lport == port && state == 0x0a)
			found = true;
	}
	fclose(fp);
	return found;
}

/*
 * A server and a client on softverbs0: both open the device, create their
 * QPs, connect them over TCP and print both addresses. What happens after
 * that depends on the data path; either way both must end, by themselves,
 * with no signal.
 */
FIXTURE(pair) {
};

FIXTURE_SETUP(pair)
{
}

FIXTURE_TEARDOWN(pair)
{
}

/* Under TCG the pair takes tens of seconds: more than the default 30. */
TEST_F_TIMEOUT(pair, perftest_pair, 240)
{
	char lib_path[PATH_MAX + 32];
	static char out[1 << 16];
	char *const env[] = { lib_path, NULL };
	char *const cargv[] = { "ib_write_bw", "-d", "softverbs0", "-n", "5",
				"-p", "18733", "-F", "127.0.0.1", NULL };
	int status, srv_status = 0, i;
	pid_t srv, done = 0;

	if (!have_perftest())
		SKIP(return, "perftest is not installed");
	snprintf(lib_path, sizeof(lib_path), "LD_LIBRARY_PATH=%s", sv_compat_dir());
	ASSERT_FALSE(tcp_listening(18733));
	srv = fork();
	ASSERT_LE(0, srv);
	if (!srv) {
		int null = open("/dev/null", O_WRONLY);

		putenv(lib_path);
		dup2(null, 1);
		dup2(null, 2);
		alarm(120);
		execlp("ib_write_bw", "ib_write_bw", "-d", "softverbs0", "-n",
		       "5", "-p", "18733", "-F", NULL);
		_exit(127);
	}
	for (i = 0; i < 600 && !tcp_listening(18733); i++) {
		done = waitpid(srv, &srv_status, WNOHANG);
		if (done)
			break;
		usleep(100000);
	}
	ASSERT_EQ(0, done) TH_LOG("the server ended, status %#x", srv_status);
	ASSERT_TRUE(tcp_listening(18733)) {
		kill(srv, SIGKILL);
		waitpid(srv, NULL, 0);
	}
	status = run(cargv, env, out, sizeof(out), 120);
	ASSERT_EQ(srv, waitpid(srv, &srv_status, 0));
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("client: %s", out);
	EXPECT_TRUE(WIFEXITED(srv_status)) TH_LOG("server status %#x", srv_status);
	EXPECT_NE(NULL, strstr(out, "Device         : softverbs0")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, " local address: LID")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, " remote address: LID")) TH_LOG("%s", out);
	/* Whatever the data path did, every object went back. */
	EXPECT_EQ(0, sv_obj_count("qp"));
	EXPECT_EQ(0, sv_obj_count("mr"));
	EXPECT_EQ(0, sv_obj_count("pd"));
}

TEST_HARNESS_MAIN
