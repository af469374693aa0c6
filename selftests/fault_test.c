// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection over every create, modify and destroy path: each
 * allocation an operation makes is made to fail in turn, as the kernel's
 * iommufd selftests do (tools/testing/selftests/iommu/iommufd_fail_nth.c).
 *
 * Writing N to /proc/thread-self/fail-nth makes the Nth fault-injection
 * point this task reaches fail: every slab allocation (failslab), every
 * page allocation (fail_page_alloc) and, where the kernel has
 * CONFIG_FAULT_INJECTION_USERCOPY, every copy from or to user memory. The
 * file reads 0 once that fault was injected. For each operation the test
 * runs N = 1, 2, ... until the operation gets through without reaching its
 * Nth point; every iteration sets up what the operation needs (with no
 * fault armed), arms N, runs the operation, disarms, and then checks:
 *
 *   - the operation succeeded, or failed with ENOMEM, EFAULT, EAGAIN,
 *     EINTR, ENFILE or ENOBUFS, and failed only when a fault was injected;
 *   - a failed create (or any failure but EFAULT, which a command may
 *     return after it did its work and could not copy the result out)
 *     changed nothing: the objects of softverbs0 (debugfs "objects"), the
 *     pinned pages (VmPin), the open fds and the devices are as before;
 *   - what is left is destroyed with the ordinary calls, which succeed;
 *   - after the file is closed, objects, VmPin, fds, devices and the
 *     module's reference count are back to where the iteration started.
 *
 * failslab and fail_page_alloc are set up through debugfs so that they
 * count every allocation (ignore-gfp-wait N, fail_page_alloc's min-order 0
 * and ignore-gfp-highmem N), quietly (verbose 0; SV_FAULT_VERBOSE=1 or 2
 * for the kernel's report of each failure), and only for tasks that ask
 * (task-filter Y, probability 0: nothing fails at random); the old values
 * come back at the end. The per-user object table is exercised too: the
 * test drops CAP_SYS_RESOURCE, which would exempt it.
 *
 * Each test prints how many faults it injected; the program ends with the
 * total. Without CONFIG_FAULT_INJECTION, CONFIG_FAILSLAB,
 * CONFIG_FAIL_PAGE_ALLOC and CONFIG_FAULT_INJECTION_DEBUG_FS (the Debian
 * kernels) every test is skipped: scripts/test-debug runs it on the debug
 * kernel, which has them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/genetlink.h>
#include <libmnl/libmnl.h>

#include "sv_harness.h"
#include "sv_qp_test.h"
#include "softverbs-netlink.h"

#define PG		4096UL
/* An MR of two page-list chunks (512 pages each) and two pages more. */
#define BIG_LEN		((2 * 512 + 2) * PG)
#define SMALL_LEN	(4 * PG)
/* No path has nearly this many fault points. */
#define MAX_NTH		5000
#define NL_DUMMY	"svfault0"
#define NL_DEV		"svfault"

/* ---- the fault-injection knobs ---- */

#define FI_DIR		"/sys/kernel/debug"

struct knob {
	char path[64];
	const char *val;
	char old[32];
	bool set;
};

/* What the test sets; then every fail* directory's verbose, to 0. */
#define MAX_KNOBS	32
static struct knob knobs[MAX_KNOBS] = {
	{ .path = "failslab/ignore-gfp-wait", .val = "N" },
	{ .path = "failslab/task-filter", .val = "Y" },
	{ .path = "failslab/probability", .val = "0" },
	{ .path = "fail_page_alloc/ignore-gfp-wait", .val = "N" },
	{ .path = "fail_page_alloc/ignore-gfp-highmem", .val = "N" },
	{ .path = "fail_page_alloc/min-order", .val = "0" },
	{ .path = "fail_page_alloc/task-filter", .val = "Y" },
	{ .path = "fail_page_alloc/probability", .val = "0" },
};
#define FIXED_KNOBS	8

/* fi_basic: root and softverbs0's debugfs; fi_ready: fault injection. */
static bool fi_basic, fi_ready;
static char fi_why[512];
static pid_t fi_parent;

/* Shared with the harness's per-test children. */
struct fi_totals {
	unsigned long faults;
	unsigned long ops;
};
static struct fi_totals *fi_sum;

static int read_str(const char *path, char *buf, size_t len)
{
	return sv_read_attr(path, buf, len) < 0 ? -1 : 0;
}

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

static void __attribute__((constructor)) fi_setup(void)
{
	const char *verbose = getenv("SV_FAULT_VERBOSE");
	unsigned int i, n;
	struct dirent *e;
	char path[256];
	DIR *dir;

	fi_parent = getpid();
	fi_sum = mmap(NULL, sizeof(*fi_sum), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fi_sum == MAP_FAILED) {
		fi_sum = NULL;
		snprintf(fi_why, sizeof(fi_why), "mmap: %s", strerror(errno));
		return;
	}
	if (geteuid()) {
		snprintf(fi_why, sizeof(fi_why), "needs root");
		return;
	}
	if (access(SV_DEBUGFS0 "/objects", R_OK)) {
		snprintf(fi_why, sizeof(fi_why), "no %s/objects",
			 SV_DEBUGFS0);
		return;
	}
	fi_basic = true;
	if (access("/proc/thread-self/fail-nth", W_OK)) {
		snprintf(fi_why, sizeof(fi_why),
			 "no /proc/thread-self/fail-nth: the kernel lacks CONFIG_FAULT_INJECTION");
		return;
	}
	if (access(FI_DIR "/failslab", F_OK) ||
	    access(FI_DIR "/fail_page_alloc", F_OK)) {
		snprintf(fi_why, sizeof(fi_why),
			 "no %s/failslab or fail_page_alloc: the kernel lacks CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC or CONFIG_FAULT_INJECTION_DEBUG_FS",
			 FI_DIR);
		return;
	}
	/*
	 * Quiet: each fault-injection point (failslab, fail_page_alloc,
	 * fail_usercopy, ...) reports its failures by default, with a stack
	 * trace that would count as a splat.
	 */
	n = FIXED_KNOBS;
	dir = opendir(FI_DIR);
	while (dir && (e = readdir(dir)) && n < MAX_KNOBS) {
		if (strncmp(e->d_name, "fail", 4) ||
		    strlen(e->d_name) > sizeof(knobs[n].path) - 9)
			continue;
		snprintf(knobs[n].path, sizeof(knobs[n].path), "%.50s/verbose",
			 e->d_name);
		snprintf(path, sizeof(path), FI_DIR "/%.63s", knobs[n].path);
		if (access(path, W_OK))
			continue;
		knobs[n++].val = verbose ? verbose : "0";
	}
	if (dir)
		closedir(dir);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), FI_DIR "/%.63s", knobs[i].path);
		if (read_str(path, knobs[i].old, sizeof(knobs[i].old))) {
			snprintf(fi_why, sizeof(fi_why), "cannot read %s",
				 path);
			return;
		}
		if (write_str(path, knobs[i].val)) {
			snprintf(fi_why, sizeof(fi_why), "cannot write %s",
				 path);
			return;
		}
		knobs[i].set = true;
	}
	fi_ready = true;
}

static void __attribute__((destructor)) fi_restore(void)
{
	char path[256];
	unsigned int i;

	if (getpid() != fi_parent)
		return;
	for (i = 0; i < MAX_KNOBS; i++) {
		if (!knobs[i].set)
			continue;
		snprintf(path, sizeof(path), FI_DIR "/%.63s", knobs[i].path);
		write_str(path, knobs[i].old);
	}
	if (fi_ready && fi_sum)
		printf("# fault_test: %lu allocations failed in total, over %lu operations\n",
		       fi_sum->faults, fi_sum->ops);
}

/* ---- fail-nth ---- */

static int nth_fd = -1;

static int nth_open(void)
{
	char path[64];

	/* The harness runs each test in a child: this thread's file. */
	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth",
		 (long)syscall(SYS_gettid));
	if (nth_fd < 0)
		nth_fd = open(path, O_RDWR | O_CLOEXEC);
	return nth_fd < 0 ? -errno : 0;
}

/* The nth fault-injection point of this task from now on fails. */
static int nth_arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return pwrite(nth_fd, buf, len, 0) == len ? 0 : -errno;
}

/*
 * Disarm; true if the armed fault was injected (fail-nth reads 0). The
 * read and the write are fault points themselves (their copies to and
 * from user memory): a read that fails with EFAULT consumed a fault that
 * was still pending, so the operation did not; a write that fails so is
 * repeated (iommufd_fail_nth.c does the same).
 */
static bool nth_disarm(void)
{
	char buf[32] = "";
	bool injected;
	ssize_t n;

	n = pread(nth_fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		injected = false;
	else
		injected = n >= 1 && buf[0] == '0';
	while (pwrite(nth_fd, "0", 1, 0) != 1 && errno == EFAULT)
		;
	return injected;
}

/* ---- what must come back ---- */

#define MAX_TYPES	16

struct snap {
	char name[MAX_TYPES][24];
	long obj[MAX_TYPES];
	int ntypes;
	long vmpin;
	long refcnt;
	int nfds;
	int ndevs;
};

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static int snap_take(struct snap *s)
{
	FILE *fp = fopen(SV_DEBUGFS0 "/objects", "r");
	char buf[32];

	memset(s, 0, sizeof(*s));
	if (!fp)
		return -1;
	while (s->ntypes < MAX_TYPES &&
	       fscanf(fp, "%23s %ld", s->name[s->ntypes],
		      &s->obj[s->ntypes]) == 2)
		s->ntypes++;
	fclose(fp);
	s->vmpin = sv_vm_pin_kb();
	s->refcnt = -1;
	if (!read_str("/sys/module/softverbs/refcnt", buf, sizeof(buf)))
		s->refcnt = atol(buf);
	s->nfds = count_dir("/proc/self/fd");
	s->ndevs = count_dir("/sys/class/" SV_CLASS_NAME);
	return s->ntypes && s->vmpin >= 0 ? 0 : -1;
}

/* 0 if equal, else a description of the first difference in why. */
static int snap_cmp(const struct snap *a, const struct snap *b,
		    bool refcnt, char *why, size_t len)
{
	int i;

	for (i = 0; i < a->ntypes; i++) {
		if (a->obj[i] != b->obj[i]) {
			snprintf(why, len, "%s objects %ld -> %ld", a->name[i],
				 a->obj[i], b->obj[i]);
			return -1;
		}
	}
	if (a->vmpin != b->vmpin)
		snprintf(why, len, "VmPin %ld kB -> %ld kB", a->vmpin,
			 b->vmpin);
	else if (a->nfds != b->nfds)
		snprintf(why, len, "open fds %d -> %d", a->nfds, b->nfds);
	else if (a->ndevs != b->ndevs)
		snprintf(why, len, "devices %d -> %d", a->ndevs, b->ndevs);
	else if (refcnt && a->refcnt != b->refcnt)
		snprintf(why, len, "module refcnt %ld -> %ld", a->refcnt,
			 b->refcnt);
	else
		return 0;
	return -1;
}

/* ---- an operation, and what it needs ---- */

#define MAX_MAPS	4

struct nl {
	struct mnl_socket *sock;
	uint16_t family;
	char buf[16384];
};

struct fx {
	int fd, ch_fd, async_fd;
	uint32_t pd, pd2, cq, cq2, ch, srq, qp, qp2, mr, ah, matcher, table;
	uint32_t anchor;
	uint32_t action;
	uint32_t xrcd;
	uint32_t qp_type;
	bool with_srq;
	const char *variant;		/* for the report */
	struct { void *p; size_t len; uint64_t off; } map[MAX_MAPS];
	struct nl *nl;
};

enum {
	FOP_CREATE = 1,		/* on failure nothing may have changed */
	FOP_NOFD = 2,		/* the operation opens the device itself */
};

struct fop {
	const char *name;
	unsigned int flags;
	int (*setup)(struct fx *x);	/* unarmed: 0 or -errno */
	int (*op)(struct fx *x);	/* armed: 0 or -errno */
	int (*cleanup)(struct fx *x, int ret);	/* unarmed */
};

static char *buf_small, *buf_big;

static int bufs_init(void)
{
	if (buf_big)
		return 0;
	buf_small = mmap(NULL, SMALL_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	buf_big = mmap(NULL, BIG_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf_small == MAP_FAILED || buf_big == MAP_FAILED)
		return -1;
	/* Populated: pinning finds the pages, it does not fault them in. */
	memset(buf_small, 1, SMALL_LEN);
	memset(buf_big, 2, BIG_LEN);
	return 0;
}

static int ioc(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

/* A destroy left to the cleanup: after op's ret, what may it find? */
static int destroy_after(int again, int ret)
{
	if (!ret)			/* done: the handle is gone */
		return again == -ENOENT ? 0 : again ? again : -EEXIST;
	if (ret == -EFAULT)		/* done or not: copy-in or -out */
		return again == -ENOENT ? 0 : again;
	return again;			/* not done: it must work now */
}

/* ---- setup helpers (nothing armed) ---- */

static int do_pd(struct fx *x, uint32_t *pd)
{
	struct sv_alloc_pd a = { .size = sizeof(a) };
	int ret = ioc(x->fd, SV_IOC_ALLOC_PD, &a);

	*pd = ret ? 0 : a.pd_handle;
	return ret;
}

static int dealloc_pd(struct fx *x, uint32_t pd)
{
	struct sv_dealloc_pd d = { .size = sizeof(d), .pd_handle = pd };

	return ioc(x->fd, SV_IOC_DEALLOC_PD, &d);
}

static int do_channel(struct fx *x)
{
	struct sv_create_comp_channel c = { .size = sizeof(c) };
	int ret = ioc(x->fd, SV_IOC_CREATE_COMP_CHANNEL, &c);

	if (!ret) {
		x->ch = c.handle;
		x->ch_fd = c.fd;
	}
	return ret;
}

static int destroy_channel(struct fx *x)
{
	struct sv_destroy_comp_channel d = { .size = sizeof(d),
					     .handle = x->ch };

	return ioc(x->fd, SV_IOC_DESTROY_COMP_CHANNEL, &d);
}

static int do_cq(struct fx *x, uint32_t *cq, uint32_t cqe, uint32_t ch)
{
	struct sv_create_cq c = { .size = sizeof(c), .cqe = cqe,
				  .channel = ch };
	int ret = ioc(x->fd, SV_IOC_CREATE_CQ, &c);

	*cq = ret ? 0 : c.handle;
	return ret;
}

static int destroy_cq(struct fx *x, uint32_t cq)
{
	struct sv_destroy_cq d = { .size = sizeof(d), .handle = cq };

	return ioc(x->fd, SV_IOC_DESTROY_CQ, &d);
}

static int do_srq(struct fx *x)
{
	struct sv_create_srq c = { .size = sizeof(c), .pd_handle = x->pd,
				   .max_wr = 64, .max_sge = 4 };
	int ret = ioc(x->fd, SV_IOC_CREATE_SRQ, &c);

	x->srq = ret ? 0 : c.handle;
	return ret;
}

static int destroy_srq(struct fx *x)
{
	struct sv_destroy_srq d = { .size = sizeof(d), .handle = x->srq };

	return ioc(x->fd, SV_IOC_DESTROY_SRQ, &d);
}

static int do_qp(struct fx *x, uint32_t type, bool srq, uint32_t *qp)
{
	struct sv_create_qp c;
	int ret;

	sv_qp_req(&c, type, x->pd, x->cq, x->cq2 ? x->cq2 : x->cq,
		  srq ? x->srq : 0);
	ret = ioc(x->fd, SV_IOC_CREATE_QP, &c);
	*qp = ret ? 0 : c.handle;
	return ret;
}

static int destroy_qp(struct fx *x, uint32_t qp)
{
	struct sv_destroy_qp d = { .size = sizeof(d), .handle = qp };

	return ioc(x->fd, SV_IOC_DESTROY_QP, &d);
}

static int do_mr(struct fx *x, char *buf, size_t len, uint32_t access)
{
	struct sv_reg_mr c = {
		.size = sizeof(c), .pd_handle = x->pd,
		.addr = (uintptr_t)buf, .length = len,
		.iova = (uintptr_t)buf, .access = access,
	};
	int ret = ioc(x->fd, SV_IOC_REG_MR, &c);

	x->mr = ret ? 0 : c.mr_handle;
	return ret;
}

static int dereg_mr(struct fx *x)
{
	struct sv_dereg_mr d = { .size = sizeof(d), .mr_handle = x->mr };

	return ioc(x->fd, SV_IOC_DEREG_MR, &d);
}

static int do_ah(struct fx *x)
{
	struct sv_create_ah c = { .size = sizeof(c), .pd_handle = x->pd };
	int ret;

	sv_good_av(&c.attr);
	ret = ioc(x->fd, SV_IOC_CREATE_AH, &c);
	x->ah = ret ? 0 : c.handle;
	return ret;
}

static int destroy_ah(struct fx *x)
{
	struct sv_destroy_ah d = { .size = sizeof(d), .handle = x->ah };

	return ioc(x->fd, SV_IOC_DESTROY_AH, &d);
}

/* A flow matcher (mlx5dv): a UDP destination port mask. */
static int do_matcher(struct fx *x)
{
	struct sv_create_flow_matcher c = { .size = sizeof(c) };
	struct sv_flow_key k = {};
	int ret;

	k.outer.udp_dport = 0xffff;
	c.mask = (uintptr_t)&k;
	c.mask_len = sizeof(k);
	c.priority = 3;
	ret = ioc(x->fd, SV_IOC_CREATE_FLOW_MATCHER, &c);
	x->matcher = ret ? 0 : c.handle;
	return ret;
}

/* A steering table, and an anchor (the test runs as root). */
static int do_table(struct fx *x)
{
	struct sv_create_steer_table c = { .size = sizeof(c), .level = 2 };
	int ret = ioc(x->fd, SV_IOC_CREATE_STEER_TABLE, &c);

	x->table = ret ? 0 : c.handle;
	return ret;
}

static int do_anchor(struct fx *x)
{
	struct sv_create_steer_anchor c = { .size = sizeof(c),
					    .priority = 2 };
	int ret = ioc(x->fd, SV_IOC_CREATE_STEER_ANCHOR, &c);

	x->anchor = ret ? 0 : c.handle;
	return ret;
}

static int destroy_sandbox(struct fx *x, unsigned long req, uint32_t h)
{
	struct sv_destroy_steer_obj d = { .size = sizeof(d), .handle = h };

	return ioc(x->fd, req, &d);
}

static int destroy_table(struct fx *x)
{
	return destroy_sandbox(x, SV_IOC_DESTROY_STEER_TABLE, x->table);
}

static int destroy_anchor(struct fx *x)
{
	return destroy_sandbox(x, SV_IOC_DESTROY_STEER_ANCHOR, x->anchor);
}

static int cleanup_table(struct fx *x, int ret)
{
	(void)ret;
	return x->table ? destroy_table(x) : 0;
}

static int cleanup_anchor(struct fx *x, int ret)
{
	(void)ret;
	return x->anchor ? destroy_anchor(x) : 0;
}

/* Steering actions: a modify header of two fields, a VXLAN encap */
static int do_action(struct fx *x, uint32_t type, const void *data,
		     uint32_t len)
{
	struct sv_create_steer_action c = {
		.size = sizeof(c), .type = type, .data = (uintptr_t)data,
		.data_len = len,
	};
	int ret = ioc(x->fd, SV_IOC_CREATE_STEER_ACTION, &c);

	x->action = ret ? 0 : c.handle;
	return ret;
}

static int do_modify(struct fx *x)
{
	const uint64_t m[2] = {
		htobe64(1ULL << 60 | 0x15ULL << 48 | 0x0a000001),
		htobe64(2ULL << 60 | 0x0aULL << 48 | 0xff),
	};

	return do_action(x, SV_STEER_ACT_MODIFY, m, sizeof(m));
}

static int do_encap(struct fx *x)
{
	uint8_t h[50] = { [12] = 0x08, [14] = 0x45, [23] = 17 };

	return do_action(x, SV_STEER_ACT_ENCAP, h, sizeof(h));
}

static int destroy_action(struct fx *x)
{
	return destroy_sandbox(x, SV_IOC_DESTROY_STEER_ACTION, x->action);
}

static int cleanup_action(struct fx *x, int ret)
{
	(void)ret;
	return x->action ? destroy_action(x) : 0;
}

static int cleanup_destroy_action(struct fx *x, int ret)
{
	return destroy_after(destroy_action(x), ret);
}

static int cleanup_destroy_table(struct fx *x, int ret)
{
	return destroy_after(destroy_table(x), ret);
}

static int cleanup_destroy_anchor(struct fx *x, int ret)
{
	return destroy_after(destroy_anchor(x), ret);
}

static int destroy_matcher(struct fx *x)
{
	struct sv_destroy_flow_matcher d = { .size = sizeof(d),
					     .handle = x->matcher };

	return ioc(x->fd, SV_IOC_DESTROY_FLOW_MATCHER, &d);
}

static const uint8_t mgid[16] = { 0xff, 0x12, [15] = 0x77 };

static int mcast(struct fx *x, unsigned long req, uint32_t qp)
{
	struct sv_mcast m = { .size = sizeof(m), .qp_handle = qp };

	memcpy(m.gid, mgid, sizeof(m.gid));
	return ioc(x->fd, req, &m);
}

static int modify(struct fx *x, uint32_t qp, uint32_t mask,
		  const struct sv_qp_attr *a)
{
	struct sv_modify_qp m = { .size = sizeof(m), .handle = qp,
				  .attr_mask = mask, .attr = *a };

	return ioc(x->fd, SV_IOC_MODIFY_QP, &m);
}

/*
 * RESET -> INIT -> RTR -> RTS with the attributes each type requires,
 * then, with all, RTS -> SQD (asking for the SQ-drained event) -> RTS ->
 * ERR -> RESET. Stops at the first error.
 */
static int qp_walk(struct fx *x, uint32_t qp, uint32_t type, bool all)
{
	bool rc = type == SV_QPT_RC, ud = type == SV_QPT_UD;
	struct sv_qp_attr a;
	uint32_t mask;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = SV_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x1234;
	a.qp_access_flags = SV_ACCESS_LOCAL_WRITE | SV_ACCESS_REMOTE_WRITE |
			    SV_ACCESS_REMOTE_READ;
	mask = SV_QP_STATE | SV_QP_PKEY_INDEX | SV_QP_PORT |
	       (ud ? SV_QP_QKEY : SV_QP_ACCESS_FLAGS);
	ret = modify(x, qp, mask, &a);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = SV_QPS_RTR;
	mask = SV_QP_STATE;
	if (!ud) {
		a.path_mtu = SV_MTU_4096;
		a.dest_qp_num = 0x123;
		a.rq_psn = 0x100;
		sv_good_av(&a.ah_attr);
		mask |= SV_QP_AV | SV_QP_PATH_MTU | SV_QP_DEST_QPN |
			SV_QP_RQ_PSN;
	}
	if (rc) {
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 12;
		mask |= SV_QP_MAX_DEST_RD_ATOMIC | SV_QP_MIN_RNR_TIMER;
	}
	ret = modify(x, qp, mask, &a);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = SV_QPS_RTS;
	a.sq_psn = 0x200;
	mask = SV_QP_STATE | SV_QP_SQ_PSN;
	if (rc) {
		a.timeout = 14;
		a.retry_cnt = 6;
		a.rnr_retry = 7;
		a.max_rd_atomic = 4;
		mask |= SV_QP_TIMEOUT | SV_QP_RETRY_CNT | SV_QP_RNR_RETRY |
			SV_QP_MAX_QP_RD_ATOMIC;
	}
	ret = modify(x, qp, mask, &a);
	if (ret || !all)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = SV_QPS_SQD;
	a.en_sqd_async_notify = 1;
	ret = modify(x, qp, SV_QP_STATE | SV_QP_EN_SQD_ASYNC_NOTIFY, &a);
	if (ret)
		return ret;
	a.qp_state = SV_QPS_RTS;
	ret = modify(x, qp, SV_QP_STATE, &a);
	if (ret)
		return ret;
	a.qp_state = SV_QPS_ERR;
	ret = modify(x, qp, SV_QP_STATE, &a);
	if (ret)
		return ret;
	a.qp_state = SV_QPS_RESET;
	return modify(x, qp, SV_QP_STATE, &a);
}

/* A PD, a CQ and, with the variant's SRQ, an SRQ. */
static int setup_qp_parents(struct fx *x)
{
	int ret = do_pd(x, &x->pd);

	if (!ret)
		ret = do_cq(x, &x->cq, 16, 0);
	if (!ret)
		ret = do_cq(x, &x->cq2, 16, 0);
	if (!ret && x->with_srq)
		ret = do_srq(x);
	return ret;
}

/* ---- the operations ---- */

static int op_open(struct fx *x)
{
	x->fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	return x->fd < 0 ? -errno : 0;
}

/* Every kind of object, an RC QP in RTS, a UD QP in a group, mappings. */
static int setup_everything(struct fx *x)
{
	struct sv_get_async_fd g = { .size = sizeof(g) };
	struct sv_map_doorbell db = { .size = sizeof(db) };
	int ret;

	x->with_srq = true;
	ret = do_channel(x);
	if (!ret)
		ret = do_pd(x, &x->pd);
	if (!ret)
		ret = do_cq(x, &x->cq, 64, x->ch);
	if (!ret)
		ret = do_srq(x);
	if (!ret)
		ret = do_mr(x, buf_small, SMALL_LEN, SV_ACCESS_LOCAL_WRITE);
	if (!ret)
		ret = do_ah(x);
	if (!ret)
		ret = do_qp(x, SV_QPT_RC, false, &x->qp);
	if (!ret)
		ret = qp_walk(x, x->qp, SV_QPT_RC, false);
	if (!ret)
		ret = do_qp(x, SV_QPT_UD, true, &x->qp2);
	if (!ret)
		ret = mcast(x, SV_IOC_ATTACH_MCAST, x->qp2);
	if (!ret)
		ret = ioc(x->fd, SV_IOC_GET_ASYNC_FD, &g);
	if (!ret)
		x->async_fd = g.fd;
	if (!ret)
		ret = ioc(x->fd, SV_IOC_MAP_DOORBELL, &db);
	if (!ret) {
		x->map[0].len = db.len;
		x->map[0].p = mmap(NULL, db.len, PROT_READ | PROT_WRITE,
				   MAP_SHARED, x->fd, db.offset);
		if (x->map[0].p == MAP_FAILED) {
			x->map[0].p = NULL;
			ret = -errno;
		}
	}
	return ret;
}

static int op_close(struct fx *x)
{
	int fd = x->fd;

	x->fd = -1;
	return close(fd) ? -errno : 0;
}

static int setup_pd(struct fx *x)
{
	return do_pd(x, &x->pd);
}

static int op_alloc_pd(struct fx *x)
{
	return do_pd(x, &x->pd);
}

static int cleanup_pd(struct fx *x, int ret)
{
	(void)ret;
	return x->pd ? dealloc_pd(x, x->pd) : 0;
}

static int op_dealloc_pd(struct fx *x)
{
	return dealloc_pd(x, x->pd);
}

static int cleanup_dealloc_pd(struct fx *x, int ret)
{
	return destroy_after(dealloc_pd(x, x->pd), ret);
}

static int op_reg_mr(struct fx *x)
{
	return do_mr(x, buf_big, BIG_LEN, SV_ACCESS_LOCAL_WRITE |
		     SV_ACCESS_REMOTE_WRITE | SV_ACCESS_REMOTE_READ);
}

static int cleanup_mr(struct fx *x, int ret)
{
	(void)ret;
	return x->mr ? dereg_mr(x) : 0;
}

/* On-demand paging: the notifier and the page cache, nothing pinned. */
static int op_reg_mr_odp(struct fx *x)
{
	return do_mr(x, buf_big, BIG_LEN, SV_ACCESS_ON_DEMAND |
		     SV_ACCESS_LOCAL_WRITE | SV_ACCESS_REMOTE_WRITE);
}

static int op_alloc_null_mr(struct fx *x)
{
	struct sv_alloc_null_mr c = { .size = sizeof(c), .pd_handle = x->pd };
	int ret = ioc(x->fd, SV_IOC_ALLOC_NULL_MR, &c);

	x->mr = ret ? 0 : c.mr_handle;
	return ret;
}

static int setup_odp_mr(struct fx *x)
{
	int ret = do_pd(x, &x->pd);

	return ret ?: do_mr(x, buf_small, SMALL_LEN, SV_ACCESS_ON_DEMAND |
			    SV_ACCESS_LOCAL_WRITE);
}

/* Faults the pages in: the cache's slots, charged, then filled. */
static int op_advise_mr(struct fx *x)
{
	struct sv_query_mr q = { .size = sizeof(q), .mr_handle = x->mr };
	struct sv_sge sge = { (uintptr_t)buf_small, SMALL_LEN, 0 };
	struct sv_advise_mr c = {
		.size = sizeof(c), .pd_handle = x->pd,
		.advice = SV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		.flags = SV_ADVISE_MR_FLAG_FLUSH,
		.sg_list = (uintptr_t)&sge, .num_sge = 1,
	};
	int ret = ioc(x->fd, SV_IOC_QUERY_MR, &q);

	sge.lkey = q.lkey;
	return ret ?: ioc(x->fd, SV_IOC_ADVISE_MR, &c);
}

static int setup_mr(struct fx *x)
{
	int ret = do_pd(x, &x->pd);

	if (!ret)
		ret = do_pd(x, &x->pd2);
	if (!ret)
		ret = do_mr(x, buf_small, SMALL_LEN, 0);
	return ret;
}

/* A new range (more pages than before), another PD, write access. */
static int op_rereg_mr(struct fx *x)
{
	struct sv_rereg_mr r = {
		.size = sizeof(r), .mr_handle = x->mr,
		.flags = SV_REREG_MR_CHANGE_TRANSLATION |
			 SV_REREG_MR_CHANGE_PD | SV_REREG_MR_CHANGE_ACCESS,
		.pd_handle = x->pd2, .addr = (uintptr_t)buf_big,
		.length = BIG_LEN, .iova = 0x10000,
		.access = SV_ACCESS_LOCAL_WRITE | SV_ACCESS_REMOTE_WRITE,
	};

	return ioc(x->fd, SV_IOC_REREG_MR, &r);
}

/* Read-only to writable: the same range pinned again, for writing. */
static int op_rereg_mr_access(struct fx *x)
{
	struct sv_rereg_mr r = {
		.size = sizeof(r), .mr_handle = x->mr,
		.flags = SV_REREG_MR_CHANGE_ACCESS,
		.access = SV_ACCESS_LOCAL_WRITE,
	};

	return ioc(x->fd, SV_IOC_REREG_MR, &r);
}

/* The MR survives a failed rereg, and its PDs are free once it goes. */
static int cleanup_rereg(struct fx *x, int ret)
{
	int r = dereg_mr(x);

	(void)ret;
	if (!r)
		r = dealloc_pd(x, x->pd);
	if (!r)
		r = dealloc_pd(x, x->pd2);
	return r;
}

static int op_dereg_mr(struct fx *x)
{
	return dereg_mr(x);
}

static int cleanup_dereg_mr(struct fx *x, int ret)
{
	ret = destroy_after(dereg_mr(x), ret);
	if (!ret)
		ret = dealloc_pd(x, x->pd);
	return ret ? ret : dealloc_pd(x, x->pd2);
}

static int setup_channel(struct fx *x)
{
	return do_channel(x);
}

static int op_create_cq(struct fx *x)
{
	return do_cq(x, &x->cq, 1000, x->ch);
}

static int cleanup_cq(struct fx *x, int ret)
{
	int r = x->cq ? destroy_cq(x, x->cq) : 0;

	(void)ret;
	/* The CQ, if any, no longer holds the channel. */
	return r ? r : x->ch ? destroy_channel(x) : 0;
}

static int setup_cq(struct fx *x)
{
	return do_cq(x, &x->cq, 16, 0);
}

static int op_resize_cq(struct fx *x)
{
	struct sv_resize_cq r = { .size = sizeof(r), .handle = x->cq,
				  .cqe = 1000 };

	return ioc(x->fd, SV_IOC_RESIZE_CQ, &r);
}

static int op_destroy_cq(struct fx *x)
{
	return destroy_cq(x, x->cq);
}

static int cleanup_destroy_cq(struct fx *x, int ret)
{
	return destroy_after(destroy_cq(x, x->cq), ret);
}

static int op_create_channel(struct fx *x)
{
	return do_channel(x);
}

static int cleanup_channel(struct fx *x, int ret)
{
	(void)ret;
	return x->ch ? destroy_channel(x) : 0;
}

static int op_destroy_channel(struct fx *x)
{
	return destroy_channel(x);
}

static int cleanup_destroy_channel(struct fx *x, int ret)
{
	return destroy_after(destroy_channel(x), ret);
}

static int op_get_async_fd(struct fx *x)
{
	struct sv_get_async_fd g = { .size = sizeof(g) };
	int ret = ioc(x->fd, SV_IOC_GET_ASYNC_FD, &g);

	if (!ret)
		x->async_fd = g.fd;
	return ret;
}

static int op_create_srq(struct fx *x)
{
	return do_srq(x);
}

static int cleanup_srq(struct fx *x, int ret)
{
	int r = x->srq ? destroy_srq(x) : 0;

	(void)ret;
	return r ? r : dealloc_pd(x, x->pd);
}

static int setup_srq(struct fx *x)
{
	int ret = do_pd(x, &x->pd);

	return ret ? ret : do_srq(x);
}

static int op_modify_srq(struct fx *x)
{
	struct sv_modify_srq m = { .size = sizeof(m), .handle = x->srq,
				   .attr_mask = SV_SRQ_LIMIT,
				   .srq_limit = 8 };

	return ioc(x->fd, SV_IOC_MODIFY_SRQ, &m);
}

static int op_destroy_srq(struct fx *x)
{
	return destroy_srq(x);
}

static int cleanup_destroy_srq(struct fx *x, int ret)
{
	ret = destroy_after(destroy_srq(x), ret);
	return ret ? ret : dealloc_pd(x, x->pd);
}

/* XRC: a domain of the file's own, an XRC SRQ on it, a TGT QP. */
static int do_xrcd(struct fx *x)
{
	struct sv_open_xrcd o = { .size = sizeof(o), .fd = -1 };
	int ret = ioc(x->fd, SV_IOC_OPEN_XRCD, &o);

	x->xrcd = ret ? 0 : o.handle;
	return ret;
}

static int op_open_xrcd(struct fx *x)
{
	return do_xrcd(x);
}

/* A PD, a CQ and a domain for an XRC SRQ or TGT QP. */
static int setup_xrc(struct fx *x)
{
	int ret = do_pd(x, &x->pd);

	if (!ret)
		ret = do_cq(x, &x->cq, 16, 0);
	return ret ? ret : do_xrcd(x);
}

static int op_create_xrc_srq(struct fx *x)
{
	struct sv_create_srq c = { .size = sizeof(c), .pd_handle = x->pd,
				   .max_wr = 64, .max_sge = 4,
				   .srq_type = SV_SRQT_XRC,
				   .xrcd_handle = x->xrcd, .cq_handle = x->cq };
	int ret = ioc(x->fd, SV_IOC_CREATE_SRQ, &c);

	x->srq = ret ? 0 : c.handle;
	return ret;
}

static int op_create_tgt_qp(struct fx *x)
{
	struct sv_create_qp c = { .size = sizeof(c),
				  .qp_type = SV_QPT_XRC_RECV,
				  .xrcd_handle = x->xrcd };
	int ret = ioc(x->fd, SV_IOC_CREATE_QP, &c);

	x->qp = ret ? 0 : c.handle;
	return ret;
}

/* Whatever of the XRC objects there is: a leaked use makes close EBUSY. */
static int cleanup_xrc(struct fx *x, int ret)
{
	struct sv_close_xrcd c = { .size = sizeof(c), .handle = x->xrcd };
	int r = x->srq ? destroy_srq(x) : 0;

	(void)ret;
	if (!r && x->qp)
		r = destroy_qp(x, x->qp);
	if (!r && x->xrcd)
		r = ioc(x->fd, SV_IOC_CLOSE_XRCD, &c);
	if (!r && x->cq)
		r = destroy_cq(x, x->cq);
	return r || !x->pd ? r : dealloc_pd(x, x->pd);
}

static int op_create_ah(struct fx *x)
{
	return do_ah(x);
}

static int cleanup_ah(struct fx *x, int ret)
{
	int r = x->ah ? destroy_ah(x) : 0;

	(void)ret;
	return r ? r : dealloc_pd(x, x->pd);
}

static int setup_ah(struct fx *x)
{
	int ret = do_pd(x, &x->pd);

	return ret ? ret : do_ah(x);
}

static int op_destroy_ah(struct fx *x)
{
	return destroy_ah(x);
}

static int cleanup_destroy_ah(struct fx *x, int ret)
{
	ret = destroy_after(destroy_ah(x), ret);
	return ret ? ret : dealloc_pd(x, x->pd);
}

static int cleanup_matcher(struct fx *x, int ret)
{
	(void)ret;
	return x->matcher ? destroy_matcher(x) : 0;
}

static int cleanup_destroy_matcher(struct fx *x, int ret)
{
	return destroy_after(destroy_matcher(x), ret);
}

/* The QP's parents go too: the QP released them. */
static int cleanup_parents(struct fx *x)
{
	int ret = 0;

	if (x->srq)
		ret = destroy_srq(x);
	if (!ret && x->cq2)
		ret = destroy_cq(x, x->cq2);
	if (!ret && x->cq)
		ret = destroy_cq(x, x->cq);
	if (!ret && x->pd)
		ret = dealloc_pd(x, x->pd);
	return ret;
}

/*
 * The file's engine (and its doorbell page, charged to VmPin) is made on
 * first use and kept until the file closes, also when the QP create that
 * made it fails: make it first, so that a failed create must leave
 * nothing. map_doorbell fails each allocation of the engine's creation.
 */
static int setup_qp_create(struct fx *x)
{
	struct sv_map_doorbell m = { .size = sizeof(m) };
	int ret = setup_qp_parents(x);

	return ret ? ret : ioc(x->fd, SV_IOC_MAP_DOORBELL, &m);
}

static int op_create_qp(struct fx *x)
{
	return do_qp(x, x->qp_type, x->with_srq, &x->qp);
}

static int cleanup_qp(struct fx *x, int ret)
{
	int r = x->qp ? destroy_qp(x, x->qp) : 0;

	(void)ret;
	return r ? r : cleanup_parents(x);
}

static int setup_qp(struct fx *x)
{
	int ret = setup_qp_parents(x);

	return ret ? ret : do_qp(x, x->qp_type, x->with_srq, &x->qp);
}

static int op_modify_qp(struct fx *x)
{
	return qp_walk(x, x->qp, x->qp_type, true);
}

static int op_destroy_qp(struct fx *x)
{
	return destroy_qp(x, x->qp);
}

static int cleanup_destroy_qp(struct fx *x, int ret)
{
	ret = destroy_after(destroy_qp(x, x->qp), ret);
	return ret ? ret : cleanup_parents(x);
}

/* Two UD QPs: the first attach makes the group, the second joins it. */
static int setup_mcast(struct fx *x)
{
	int ret = setup_qp_parents(x);

	if (!ret)
		ret = do_qp(x, SV_QPT_UD, false, &x->qp);
	if (!ret)
		ret = do_qp(x, SV_QPT_UD, false, &x->qp2);
	return ret;
}

static int op_attach_mcast(struct fx *x)
{
	int ret = mcast(x, SV_IOC_ATTACH_MCAST, x->qp);

	return ret ? ret : mcast(x, SV_IOC_ATTACH_MCAST, x->qp2);
}

/* Whatever got attached is detached: a QP in a group cannot go. */
static int cleanup_mcast(struct fx *x, int ret)
{
	int r;

	(void)ret;
	mcast(x, SV_IOC_DETACH_MCAST, x->qp);
	mcast(x, SV_IOC_DETACH_MCAST, x->qp2);
	r = destroy_qp(x, x->qp);
	if (!r)
		r = destroy_qp(x, x->qp2);
	return r ? r : cleanup_parents(x);
}

static int setup_detach(struct fx *x)
{
	int ret = setup_mcast(x);

	return ret ? ret : op_attach_mcast(x);
}

static int op_detach_mcast(struct fx *x)
{
	int ret = mcast(x, SV_IOC_DETACH_MCAST, x->qp2);

	return ret ? ret : mcast(x, SV_IOC_DETACH_MCAST, x->qp);
}

static int op_map_doorbell(struct fx *x)
{
	struct sv_map_doorbell m = { .size = sizeof(m) };

	return ioc(x->fd, SV_IOC_MAP_DOORBELL, &m);
}

/* An RC QP with its own RQ and one on the SRQ. */
static int setup_wq(struct fx *x)
{
	int ret;

	x->with_srq = true;
	ret = setup_qp_parents(x);
	if (!ret)
		ret = do_qp(x, SV_QPT_RC, false, &x->qp);
	if (!ret)
		ret = do_qp(x, SV_QPT_RC, true, &x->qp2);
	return ret;
}

static int op_map_wq(struct fx *x)
{
	struct sv_map_wq m = { .size = sizeof(m), .type = SV_WQ_QP,
			       .handle = x->qp };
	int ret = ioc(x->fd, SV_IOC_MAP_WQ, &m);

	m.handle = x->qp2;
	if (!ret)
		ret = ioc(x->fd, SV_IOC_MAP_WQ, &m);
	m.type = SV_WQ_SRQ;
	m.handle = x->srq;
	if (!ret)
		ret = ioc(x->fd, SV_IOC_MAP_WQ, &m);
	return ret;
}

static int cleanup_wq(struct fx *x, int ret)
{
	int r = destroy_qp(x, x->qp);

	(void)ret;
	if (!r)
		r = destroy_qp(x, x->qp2);
	return r ? r : cleanup_parents(x);
}

/* Rings to map: a CQ's, an RC QP's SQ and RQ, and the doorbell page. */
static int setup_mmap(struct fx *x)
{
	struct sv_map_doorbell db = { .size = sizeof(db) };
	struct sv_map_wq m = { .size = sizeof(m), .type = SV_WQ_QP };
	struct sv_create_cq c = { .size = sizeof(c), .cqe = 64 };
	int ret = do_pd(x, &x->pd);

	if (!ret)
		ret = do_cq(x, &x->cq, 16, 0);
	if (!ret)
		ret = do_qp(x, SV_QPT_RC, false, &x->qp);
	m.handle = x->qp;
	if (!ret)
		ret = ioc(x->fd, SV_IOC_MAP_WQ, &m);
	if (!ret)
		ret = ioc(x->fd, SV_IOC_MAP_DOORBELL, &db);
	if (!ret)
		ret = ioc(x->fd, SV_IOC_CREATE_CQ, &c);
	if (ret)
		return ret;
	x->cq2 = c.handle;
	x->map[0].off = c.mmap_offset;
	x->map[0].len = c.mmap_len;
	x->map[1].off = m.sq_offset;
	x->map[1].len = m.sq_len;
	x->map[2].off = m.rq_offset;
	x->map[2].len = m.rq_len;
	x->map[3].off = db.offset;
	x->map[3].len = db.len;
	return 0;
}

static int op_mmap(struct fx *x)
{
	int i;

	for (i = 0; i < MAX_MAPS; i++) {
		void *p = mmap(NULL, x->map[i].len, PROT_READ | PROT_WRITE,
			       MAP_SHARED, x->fd, x->map[i].off);

		if (p == MAP_FAILED)
			return -errno;
		x->map[i].p = p;
	}
	return 0;
}

static int cleanup_mmap(struct fx *x, int ret)
{
	int r = destroy_qp(x, x->qp);

	(void)ret;
	/* Destroyed while mapped: the mappings keep the rings. */
	if (!r && x->cq2)
		r = destroy_cq(x, x->cq2);
	x->cq2 = 0;
	return r ? r : cleanup_parents(x);
}

static int setup_doorbell(struct fx *x)
{
	int ret = setup_mmap(x);

	if (!ret)
		ret = qp_walk(x, x->qp, SV_QPT_RC, false);
	return ret ? ret : op_map_doorbell(x);
}

static int op_doorbell(struct fx *x)
{
	struct sv_ring_doorbell d = { .size = sizeof(d) };

	return ioc(x->fd, SV_IOC_DOORBELL, &d);
}

static int cleanup_doorbell(struct fx *x, int ret)
{
	int r = destroy_qp(x, x->qp);

	(void)ret;
	return r ? r : cleanup_parents(x);
}

/* ---- netlink: link add and del ---- */

static int nl_family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl *nl = data;
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
			nl->family = mnl_attr_get_u16(a);
	return MNL_CB_OK;
}

static struct nlmsghdr *nl_start(struct nl *nl, uint16_t type, uint8_t cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	struct genlmsghdr *g;
	static unsigned int seq;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = time(NULL) + ++seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	return nlh;
}

/* The answer to a request sent: 0 or -errno (ENOBUFS: lost). */
static int nl_answer(struct nl *nl, unsigned int seq, mnl_cb_t cb)
{
	int ret;

	for (;;) {
		struct nlmsghdr *r;

		ret = mnl_socket_recvfrom(nl->sock, nl->buf, sizeof(nl->buf));
		if (ret < 0)
			return -errno;
		r = (struct nlmsghdr *)nl->buf;
		if (r->nlmsg_type == NLMSG_ERROR)
			return *(int *)mnl_nlmsg_get_payload(r);
		ret = mnl_cb_run(nl->buf, ret, seq,
				 mnl_socket_get_portid(nl->sock), cb, nl);
		if (ret <= MNL_CB_STOP)
			return ret < 0 ? -errno : 0;
	}
}

static int nl_open(struct nl *nl)
{
	struct nlmsghdr *nlh;
	int one = 1;

	nl->sock = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sock || mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID))
		return -1;
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	nlh = nl_start(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, SV_NL_FAMILY_NAME);
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -1;
	return nl_answer(nl, nlh->nlmsg_seq, nl_family_cb) || !nl->family ?
	       -1 : 0;
}

/*
 * Send a link request armed: the kernel does the work in sendmsg, in
 * this task. The answer is read after the fault is disarmed (an ack that
 * could not be allocated reads as ENOBUFS).
 */
static int nl_link(struct fx *x, uint8_t cmd)
{
	struct nl *nl = x->nl;
	struct nlmsghdr *nlh = nl_start(nl, nl->family, cmd);
	int ret = 0;

	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, NL_DEV);
	if (cmd == SV_NL_CMD_LINK_ADD)
		mnl_attr_put_strz(nlh, SV_NL_ATTR_NDEV_NAME, NL_DUMMY);
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		ret = -errno;
	return ret ? ret : (int)nlh->nlmsg_seq;
}

static bool nl_dev_exists(void)
{
	return !access("/sys/class/" SV_CLASS_NAME "/" NL_DEV, F_OK);
}

static int nl_sync(struct fx *x, uint8_t cmd)
{
	int seq = nl_link(x, cmd);

	return seq < 0 ? seq : nl_answer(x->nl, seq, NULL);
}

/* Set by the op for the cleanup: the sequence number, or -errno. */
static int nl_seq;

static int op_link_add(struct fx *x)
{
	nl_seq = nl_link(x, SV_NL_CMD_LINK_ADD);
	return nl_seq < 0 ? nl_seq : 0;
}

static int op_link_del(struct fx *x)
{
	nl_seq = nl_link(x, SV_NL_CMD_LINK_DEL);
	return nl_seq < 0 ? nl_seq : 0;
}

static int setup_link(struct fx *x)
{
	return nl_sync(x, SV_NL_CMD_LINK_ADD);
}

/*
 * The answer must be success or an allocation failure (or lost); the
 * device exists exactly when the request says it succeeded, then goes.
 */
static int cleanup_link(struct fx *x, int ret, bool add)
{
	int answer = ret ? ret : nl_answer(x->nl, nl_seq, NULL);
	bool exists = nl_dev_exists();

	if (answer && answer != -ENOMEM && answer != -EFAULT &&
	    answer != -ENOBUFS && answer != -EAGAIN && answer != -EINTR) {
		fprintf(stderr, "# link %s answered %s\n", add ? "add" : "del",
			strerror(-answer));
		return answer;
	}
	if (answer != -ENOBUFS && exists != (add ? !answer : !!answer)) {
		fprintf(stderr, "# link %s answered %s, device %s\n",
			add ? "add" : "del", strerror(-answer),
			exists ? "there" : "gone");
		return -EPROTO;
	}
	return exists ? nl_sync(x, SV_NL_CMD_LINK_DEL) : 0;
}

static int cleanup_link_add(struct fx *x, int ret)
{
	return cleanup_link(x, ret, true);
}

static int cleanup_link_del(struct fx *x, int ret)
{
	return cleanup_link(x, ret, false);
}

/* ---- the loop ---- */

static bool errno_ok(int err)
{
	return err == ENOMEM || err == EFAULT || err == EAGAIN ||
	       err == EINTR || err == ENFILE || err == ENOBUFS;
}

static void fx_reset(struct fx *x)
{
	const char *variant = x->variant;
	uint32_t type = x->qp_type;
	bool srq = x->with_srq;
	struct nl *nl = x->nl;

	memset(x, 0, sizeof(*x));
	x->fd = x->ch_fd = x->async_fd = -1;
	x->qp_type = type;
	x->with_srq = srq;
	x->nl = nl;
	x->variant = variant;
}

static void fx_close(struct fx *x)
{
	int i;

	for (i = 0; i < MAX_MAPS; i++)
		if (x->map[i].p)
			munmap(x->map[i].p, x->map[i].len);
	if (x->async_fd >= 0)
		close(x->async_fd);
	if (x->ch_fd >= 0)
		close(x->ch_fd);
	if (x->fd >= 0)
		close(x->fd);
}

/* Without CAP_SYS_RESOURCE the per-user object limits apply. */
static int drop_sys_resource(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_TO_INDEX(CAP_SYS_RESOURCE)].effective &=
		~CAP_TO_MASK(CAP_SYS_RESOURCE);
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

static void fault_loop(struct __test_metadata *_metadata,
		       const struct fop *o, struct fx *x)
{
	unsigned int n, errors = 0, swallowed = 0;
	struct snap base, pre, post;
	char why[128];
	bool injected;
	int ret, r;

	ASSERT_EQ(0, bufs_init());
	if (fi_ready)
		ASSERT_EQ(0, nth_open()) TH_LOG("fail-nth: %s",
						strerror(errno));
	for (n = 1; ; n++) {
		ASSERT_GT(MAX_NTH, n) TH_LOG("%s: more than %u fault points?",
					     o->name, MAX_NTH);
		ASSERT_EQ(0, snap_take(&base));
		fx_reset(x);
		if (!(o->flags & FOP_NOFD)) {
			x->fd = open(SV_DEV0, O_RDWR | O_CLOEXEC);
			ASSERT_LE(0, x->fd) TH_LOG("open: %s", strerror(errno));
		}
		if (o->setup) {
			r = o->setup(x);
			ASSERT_EQ(0, r) TH_LOG("%s nth %u: setup: %s", o->name,
					       n, strerror(-r));
		}
		ASSERT_EQ(0, snap_take(&pre));

		if (fi_ready)
			ASSERT_EQ(0, nth_arm(n));
		ret = o->op(x);
		injected = fi_ready && nth_disarm();

		if (ret) {
			ASSERT_TRUE(injected)
				TH_LOG("%s nth %u: %s with no fault injected",
				       o->name, n, strerror(-ret));
			ASSERT_TRUE(errno_ok(-ret))
				TH_LOG("%s nth %u: an allocation failure gave %s",
				       o->name, n, strerror(-ret));
			errors++;
			ASSERT_EQ(0, snap_take(&post));
			if ((o->flags & FOP_CREATE) || ret != -EFAULT)
				ASSERT_EQ(0, snap_cmp(&pre, &post, false, why,
						      sizeof(why)))
					TH_LOG("%s nth %u failed (%s) but left %s",
					       o->name, n, strerror(-ret), why);
		} else if (injected) {
			swallowed++;
		}
		r = o->cleanup ? o->cleanup(x, ret) : 0;
		ASSERT_EQ(0, r) TH_LOG("%s nth %u (%s): cleanup: %s", o->name,
				       n, strerror(-ret), strerror(-r));
		fx_close(x);
		ASSERT_EQ(0, snap_take(&post));
		ASSERT_EQ(0, snap_cmp(&base, &post, true, why, sizeof(why)))
			TH_LOG("%s nth %u (%s): after cleanup, %s", o->name, n,
			       strerror(-ret), why);
		if (!injected)
			break;
	}
	if (!fi_ready)
		return;
	printf("# %s%s%s: %u allocations failed: %u errors, %u succeeded anyway\n",
	       o->name, x->variant ? " " : "", x->variant ? x->variant : "",
	       n - 1, errors, swallowed);
	fflush(stdout);
	__atomic_add_fetch(&fi_sum->faults, n - 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&fi_sum->ops, 1, __ATOMIC_RELAXED);
}

/*
 * Without fault injection the operation runs once, unfailed (which checks
 * the test's setup, cleanup and accounting), and the test is skipped.
 */
#define RUN(op) do { \
	if (!fi_basic) \
		SKIP(return, "%s", fi_why); \
	ASSERT_EQ(0, drop_sys_resource()); \
	fault_loop(_metadata, &(op), &self->x); \
	if (!fi_ready) \
		SKIP(return, "%s (ran once without faults)", fi_why); \
} while (0)

#define FOP(n, f, s, o, c) \
	static const struct fop fop_##n = { #n, f, s, o, c }

FOP(open, FOP_CREATE | FOP_NOFD, NULL, op_open, NULL);
FOP(close, 0, setup_everything, op_close, NULL);
FOP(alloc_pd, FOP_CREATE, NULL, op_alloc_pd, cleanup_pd);
FOP(dealloc_pd, 0, setup_pd, op_dealloc_pd, cleanup_dealloc_pd);
FOP(reg_mr, FOP_CREATE, setup_pd, op_reg_mr, cleanup_mr);
FOP(reg_mr_odp, FOP_CREATE, setup_pd, op_reg_mr_odp, cleanup_mr);
FOP(alloc_null_mr, FOP_CREATE, setup_pd, op_alloc_null_mr, cleanup_mr);
FOP(advise_mr, 0, setup_odp_mr, op_advise_mr, cleanup_mr);
FOP(rereg_mr, 0, setup_mr, op_rereg_mr, cleanup_rereg);
FOP(rereg_mr_access, 0, setup_mr, op_rereg_mr_access, cleanup_rereg);
FOP(dereg_mr, 0, setup_mr, op_dereg_mr, cleanup_dereg_mr);
FOP(create_cq, FOP_CREATE, setup_channel, op_create_cq, cleanup_cq);
FOP(resize_cq, 0, setup_cq, op_resize_cq, cleanup_cq);
FOP(destroy_cq, 0, setup_cq, op_destroy_cq, cleanup_destroy_cq);
FOP(create_comp_channel, FOP_CREATE, NULL, op_create_channel,
    cleanup_channel);
FOP(destroy_comp_channel, 0, setup_channel, op_destroy_channel,
    cleanup_destroy_channel);
FOP(get_async_fd, FOP_CREATE, NULL, op_get_async_fd, NULL);
FOP(create_srq, FOP_CREATE, setup_pd, op_create_srq, cleanup_srq);
FOP(modify_srq, 0, setup_srq, op_modify_srq, cleanup_srq);
FOP(destroy_srq, 0, setup_srq, op_destroy_srq, cleanup_destroy_srq);
FOP(create_ah, FOP_CREATE, setup_pd, op_create_ah, cleanup_ah);
FOP(open_xrcd, FOP_CREATE, NULL, op_open_xrcd, cleanup_xrc);
FOP(create_xrc_srq, FOP_CREATE, setup_xrc, op_create_xrc_srq, cleanup_xrc);
FOP(create_tgt_qp, FOP_CREATE, setup_xrc, op_create_tgt_qp, cleanup_xrc);
FOP(destroy_ah, 0, setup_ah, op_destroy_ah, cleanup_destroy_ah);
FOP(create_qp, FOP_CREATE, setup_qp_create, op_create_qp, cleanup_qp);
FOP(modify_qp, 0, setup_qp, op_modify_qp, cleanup_qp);
FOP(destroy_qp, 0, setup_qp, op_destroy_qp, cleanup_destroy_qp);
FOP(attach_mcast, 0, setup_mcast, op_attach_mcast, cleanup_mcast);
FOP(detach_mcast, 0, setup_detach, op_detach_mcast, cleanup_mcast);
FOP(map_doorbell, 0, NULL, op_map_doorbell, NULL);
FOP(map_wq, 0, setup_wq, op_map_wq, cleanup_wq);
FOP(mmap, 0, setup_mmap, op_mmap, cleanup_mmap);
FOP(doorbell, 0, setup_doorbell, op_doorbell, cleanup_doorbell);
FOP(create_flow_matcher, FOP_CREATE, NULL, do_matcher, cleanup_matcher);
FOP(destroy_flow_matcher, 0, do_matcher, destroy_matcher,
    cleanup_destroy_matcher);
FOP(create_steer_table, FOP_CREATE, NULL, do_table, cleanup_table);
FOP(destroy_steer_table, 0, do_table, destroy_table, cleanup_destroy_table);
FOP(create_steer_anchor, FOP_CREATE, NULL, do_anchor, cleanup_anchor);
FOP(destroy_steer_anchor, 0, do_anchor, destroy_anchor,
    cleanup_destroy_anchor);
FOP(create_steer_action_modify, FOP_CREATE, NULL, do_modify, cleanup_action);
FOP(create_steer_action_encap, FOP_CREATE, NULL, do_encap, cleanup_action);
FOP(destroy_steer_action, 0, do_modify, destroy_action,
    cleanup_destroy_action);
FOP(link_add, FOP_NOFD, NULL, op_link_add, cleanup_link_add);
FOP(link_del, FOP_NOFD, setup_link, op_link_del, cleanup_link_del);

/* Slow kernels (KASAN under TCG) take a while per iteration. */
#define T	300

FIXTURE(fault) {
	struct fx x;
};

FIXTURE_SETUP(fault)
{
	fx_reset(&self->x);
}

FIXTURE_TEARDOWN(fault)
{
}

TEST_F_TIMEOUT(fault, open, T) { RUN(fop_open); }
TEST_F_TIMEOUT(fault, close_with_everything, T) { RUN(fop_close); }
TEST_F_TIMEOUT(fault, alloc_pd, T) { RUN(fop_alloc_pd); }
TEST_F_TIMEOUT(fault, dealloc_pd, T) { RUN(fop_dealloc_pd); }
TEST_F_TIMEOUT(fault, reg_mr, T) { RUN(fop_reg_mr); }
TEST_F_TIMEOUT(fault, reg_mr_odp, T) { RUN(fop_reg_mr_odp); }
TEST_F_TIMEOUT(fault, alloc_null_mr, T) { RUN(fop_alloc_null_mr); }
TEST_F_TIMEOUT(fault, advise_mr, T) { RUN(fop_advise_mr); }
TEST_F_TIMEOUT(fault, rereg_mr, T) { RUN(fop_rereg_mr); }
TEST_F_TIMEOUT(fault, rereg_mr_access, T) { RUN(fop_rereg_mr_access); }
TEST_F_TIMEOUT(fault, dereg_mr, T) { RUN(fop_dereg_mr); }
TEST_F_TIMEOUT(fault, create_cq, T) { RUN(fop_create_cq); }
TEST_F_TIMEOUT(fault, resize_cq, T) { RUN(fop_resize_cq); }
TEST_F_TIMEOUT(fault, destroy_cq, T) { RUN(fop_destroy_cq); }
TEST_F_TIMEOUT(fault, create_comp_channel, T) { RUN(fop_create_comp_channel); }
TEST_F_TIMEOUT(fault, destroy_comp_channel, T) { RUN(fop_destroy_comp_channel); }
TEST_F_TIMEOUT(fault, get_async_fd, T) { RUN(fop_get_async_fd); }
TEST_F_TIMEOUT(fault, create_srq, T) { RUN(fop_create_srq); }
TEST_F_TIMEOUT(fault, modify_srq, T) { RUN(fop_modify_srq); }
TEST_F_TIMEOUT(fault, destroy_srq, T) { RUN(fop_destroy_srq); }
TEST_F_TIMEOUT(fault, create_ah, T) { RUN(fop_create_ah); }
TEST_F_TIMEOUT(fault, open_xrcd, T) { RUN(fop_open_xrcd); }
TEST_F_TIMEOUT(fault, create_xrc_srq, T) { RUN(fop_create_xrc_srq); }
TEST_F_TIMEOUT(fault, create_tgt_qp, T) { RUN(fop_create_tgt_qp); }
TEST_F_TIMEOUT(fault, destroy_ah, T) { RUN(fop_destroy_ah); }
TEST_F_TIMEOUT(fault, attach_mcast, T) { RUN(fop_attach_mcast); }
TEST_F_TIMEOUT(fault, detach_mcast, T) { RUN(fop_detach_mcast); }
TEST_F_TIMEOUT(fault, map_doorbell, T) { RUN(fop_map_doorbell); }
TEST_F_TIMEOUT(fault, map_wq, T) { RUN(fop_map_wq); }
TEST_F_TIMEOUT(fault, mmap, T) { RUN(fop_mmap); }
TEST_F_TIMEOUT(fault, doorbell, T) { RUN(fop_doorbell); }
TEST_F_TIMEOUT(fault, create_flow_matcher, T)
{
	RUN(fop_create_flow_matcher);
}

TEST_F_TIMEOUT(fault, destroy_flow_matcher, T)
{
	RUN(fop_destroy_flow_matcher);
}

TEST_F_TIMEOUT(fault, create_steer_table, T)
{
	RUN(fop_create_steer_table);
}

TEST_F_TIMEOUT(fault, destroy_steer_table, T)
{
	RUN(fop_destroy_steer_table);
}

TEST_F_TIMEOUT(fault, create_steer_anchor, T)
{
	RUN(fop_create_steer_anchor);
}

TEST_F_TIMEOUT(fault, destroy_steer_anchor, T)
{
	RUN(fop_destroy_steer_anchor);
}

TEST_F_TIMEOUT(fault, create_steer_action_modify, T)
{
	RUN(fop_create_steer_action_modify);
}

TEST_F_TIMEOUT(fault, create_steer_action_encap, T)
{
	RUN(fop_create_steer_action_encap);
}

TEST_F_TIMEOUT(fault, destroy_steer_action, T)
{
	RUN(fop_destroy_steer_action);
}

/* Each QP type, with and without an SRQ. */
FIXTURE(qp) {
	struct fx x;
};

FIXTURE_VARIANT(qp) {
	const char *name;
	uint32_t type;
	bool srq;
};

FIXTURE_VARIANT_ADD(qp, rc) { "rc", SV_QPT_RC, false };
FIXTURE_VARIANT_ADD(qp, rc_srq) { "rc_srq", SV_QPT_RC, true };
FIXTURE_VARIANT_ADD(qp, uc) { "uc", SV_QPT_UC, false };
FIXTURE_VARIANT_ADD(qp, uc_srq) { "uc_srq", SV_QPT_UC, true };
FIXTURE_VARIANT_ADD(qp, ud) { "ud", SV_QPT_UD, false };
FIXTURE_VARIANT_ADD(qp, ud_srq) { "ud_srq", SV_QPT_UD, true };

FIXTURE_SETUP(qp)
{
	self->x.qp_type = variant->type;
	self->x.with_srq = variant->srq;
	self->x.variant = variant->name;
	fx_reset(&self->x);
}

FIXTURE_TEARDOWN(qp)
{
}

TEST_F_TIMEOUT(qp, create, T) { RUN(fop_create_qp); }
TEST_F_TIMEOUT(qp, modify, T) { RUN(fop_modify_qp); }
TEST_F_TIMEOUT(qp, destroy, T) { RUN(fop_destroy_qp); }

/*
 * Link add and del, on a dummy netdev in a network namespace of the
 * test's own (the harness runs each test in a child).
 */
FIXTURE(link) {
	struct fx x;
	struct nl nl;
};

FIXTURE_SETUP(link)
{
	fx_reset(&self->x);
	if (!fi_basic)
		return;
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, system("ip link add " NL_DUMMY " type dummy"));
	ASSERT_EQ(0, nl_open(&self->nl)) TH_LOG("no %s family",
						SV_NL_FAMILY_NAME);
	self->x.nl = &self->nl;
}

FIXTURE_TEARDOWN(link)
{
	if (self->nl.sock)
		mnl_socket_close(self->nl.sock);
}

TEST_F_TIMEOUT(link, add, T) { RUN(fop_link_add); }
TEST_F_TIMEOUT(link, del, T) { RUN(fop_link_del); }

TEST_HARNESS_MAIN
