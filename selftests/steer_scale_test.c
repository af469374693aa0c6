// SPDX-License-Identifier: GPL-2.0
/*
 * Flow steering at scale: one process puts 100,000 exact-match ETH rules
 * (one mask, 100,000 source MACs, a tag each) on one RAW_PACKET QP of a
 * device bound to a veth pair, as NIC flow tables hold them
 * (Documentation/steering.rst, "The tables"):
 *
 * - the last 1,000 creates, with 99,000 rules installed, are not much
 *   slower than the first 1,000: both rates are printed, and the median
 *   time of one create among the last 1,000 must be less than 10 times
 *   that among the first 1,000 (the median, as this runs under TCG on a
 *   loaded host, where a vCPU the host preempts stretches whichever
 *   creates it was running by tens of milliseconds);
 * - a frame still reaches the QP with the tag of the one rule it matches,
 *   and a frame no rule matches does not;
 * - svctl dumps all 100,000 flows;
 * - close() of the file returns within 5 s (x $SV_SLOW) plus as long as
 *   the creates took (a busy host slows both alike; a close that waited
 *   for a grace period per flow would take minutes), and the device's
 *   debugfs object counts are all zero after it.
 *
 * The rules are created without CAP_SYS_RESOURCE, so the per-user share
 * of the device's flow limit applies (limits.c): at the defaults
 * (SV_MAX_FLOW 262144, user_share 50) it is 131072.
 */
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/capability.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"

#define NFLOWS	100000
#define WINDOW	1000
#define NRECV	16
#define SLOT	2048

/*
 * sv_steer_test.h's veth fixture, without IPv4 addresses, with one
 * RAW_PACKET QP in RTS (NRECV receives of SLOT bytes posted) that the
 * test puts the rules on.
 */
#define SV_VETH_FIXTURE	scale
#define NS	"svsc_peer"
#define NEAR	"svsc0"
#define FAR	"svsc1"
#define DEV	"svsc"
#define SV_VETH_OWN_SETUP
#define SV_VETH_MEMBERS							\
	struct ibv_cq_ex *cqx;						\
	struct ibv_qp *qp;						\
	struct ibv_mr *mr;						\
	char *buf;

#include "sv_steer_test.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of n values (sorts them). */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The source MAC of rule @i: 02:5c:00 and 24 bits of i. */
static void rule_mac(uint8_t mac[6], unsigned int i)
{
	mac[0] = 0x02;
	mac[1] = 0x5c;
	mac[2] = 0;
	mac[3] = i >> 16;
	mac[4] = i >> 8;
	mac[5] = i;
}

struct rule {
	struct ibv_flow_attr attr;
	struct ibv_flow_spec_eth eth;
	struct ibv_flow_spec_action_tag tag;
};

_Static_assert(sizeof(struct rule) == 20 + 40 + 12, "no padding");

/* Rule @i: frames of ETYPE from rule_mac(i) to @dst, tagged i + 1. */
static void rule_init(struct rule *r, const uint8_t dst[6], unsigned int i)
{
	memset(r, 0, sizeof(*r));
	r->attr.type = IBV_FLOW_ATTR_NORMAL;
	r->attr.size = sizeof(*r);
	r->attr.num_of_specs = 2;
	r->attr.port = 1;
	r->eth.type = IBV_FLOW_SPEC_ETH;
	r->eth.size = sizeof(r->eth);
	memcpy(r->eth.val.dst_mac, dst, 6);
	memset(r->eth.mask.dst_mac, 0xff, 6);
	rule_mac(r->eth.val.src_mac, i);
	memset(r->eth.mask.src_mac, 0xff, 6);
	r->eth.val.ether_type = htons(ETYPE);
	r->eth.mask.ether_type = 0xffff;
	r->tag.type = IBV_FLOW_SPEC_ACTION_TAG;
	r->tag.size = sizeof(r->tag);
	r->tag.tag_id = i + 1;
}

/* Drop CAP_SYS_RESOURCE from the effective set: the user's share applies. */
static int drop_sys_resource(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[0].effective &= ~(1U << CAP_SYS_RESOURCE);
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

/*
 * Unmap every mapping of @path: the library keeps a QP's rings mapped
 * when the context closes with the QP alive (as rdma-core leaves live
 * objects), and a mapping holds the file open. Without them, the close
 * of the file descriptor is the file's release.
 */
static int unmap_all(const char *path)
{
	unsigned long start[64], end[64];
	char line[512], name[256];
	int i, n = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (n < 64 && fgets(line, sizeof(line), f)) {
		name[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &start[n],
			   &end[n], name) == 3 && !strcmp(name, path))
			n++;
	}
	fclose(f);
	for (i = 0; i < n; i++)
		if (munmap((void *)start[i], end[i] - start[i]))
			return -1;
	return n;
}

/* The sum of a device's debugfs object counts; -1 if unreadable. */
static long obj_total(const char *dev)
{
	char path[128], name[32];
	long n, sum = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/sys/kernel/debug/" SV_CLASS_NAME
		 "/%s/objects", dev);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (fscanf(fp, "%31s %ld", name, &n) == 2)
		sum += n;
	fclose(fp);
	return sum;
}

FIXTURE_SETUP(scale)
{
	struct ibv_cq_init_attr_ex cqa = {
		.cqe = 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_FLOW_TAG,
	};
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 4, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int i;

	sv_veth_up(_metadata, self);
	self->cqx = ibv_create_cq_ex(self->ctx, &cqa);
	ASSERT_NE(NULL, self->cqx);
	self->buf = aligned_alloc(4096, NRECV * SLOT);
	ASSERT_NE(NULL, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, NRECV * SLOT,
			      IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->mr);
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(self->cqx);
	self->qp = ibv_create_qp(self->pd, &qa);
	ASSERT_NE(NULL, self->qp);
	ASSERT_EQ(0, ibv_modify_qp(self->qp, &a, IBV_QP_STATE | IBV_QP_PORT));
	a.qp_state = IBV_QPS_RTR;
	ASSERT_EQ(0, ibv_modify_qp(self->qp, &a, IBV_QP_STATE));
	a.qp_state = IBV_QPS_RTS;
	ASSERT_EQ(0, ibv_modify_qp(self->qp, &a, IBV_QP_STATE));
	for (i = 0; i < NRECV; i++)
		ASSERT_EQ(0, post_recv(self->qp, self->mr,
				       self->buf + (size_t)i * SLOT, SLOT, i));
}

FIXTURE_TEARDOWN(scale)
{
	/* The context goes with every object in it, the PD too. */
	if (self->ctx) {
		unmap_all(SV_DEV_DIR "/" DEV);
		ibv_close_device(self->ctx);
	}
	self->ctx = NULL;
	self->pd = NULL;
	sv_veth_down(_metadata, self);
}

/* Send a frame from rule_mac(@i); 0 if it went out. */
static int send_from(FIXTURE_DATA(scale) *self, unsigned int i)
{
	uint8_t f[64];

	memcpy(f, self->mac, 6);
	rule_mac(f + 6, i);
	f[12] = ETYPE >> 8;
	f[13] = ETYPE & 0xff;
	memset(f + 14, i & 0xff, sizeof(f) - 14);
	return far_send(self->pkt, self->far_ifindex, f, sizeof(f));
}

/*
 * The next receive within @ms: its tag, after checking that it holds the
 * frame send_from() sent for rule @i (and reposting it); -1 if none came,
 * -2 if it is not that frame.
 */
static long long recv_tag(FIXTURE_DATA(scale) *self, unsigned int i, int ms)
{
	struct ibv_poll_cq_attr pa = {};
	uint8_t src[6];
	const uint8_t *p;
	long long tag;
	uint64_t id;
	int ok;

	for (;;) {
		if (!ibv_start_poll(self->cqx, &pa))
			break;
		if (ms-- <= 0)
			return -1;
		usleep(1000);
	}
	id = self->cqx->wr_id;
	ok = self->cqx->status == IBV_WC_SUCCESS &&
	     ibv_wc_read_byte_len(self->cqx) == 64;
	tag = ibv_wc_read_flow_tag(self->cqx);
	ibv_end_poll(self->cqx);
	p = (const uint8_t *)self->buf + id * SLOT;
	rule_mac(src, i);
	ok = ok && !memcmp(p, self->mac, 6) && !memcmp(p + 6, src, 6) &&
	     p[20] == (i & 0xff);
	post_recv(self->qp, self->mr, self->buf + id * SLOT, SLOT, id);
	return ok ? tag : -2;
}

/*
 * Lines of svctl's flow dump of the device, the first one a flow's; -1 if
 * it failed. Read in big blocks: the dump is 100,000 lines.
 */
static long dump_lines(const char *svctl)
{
	static char buf[1 << 16];
	char cmd[PATH_MAX + 64];
	bool first = true, ok = false;
	long n = 0;
	size_t got, i;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s res show flow dev " DEV, svctl);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while ((got = fread(buf, 1, sizeof(buf), p)) > 0) {
		if (first && got > 20)
			ok = !strncmp(buf, "dev " DEV " type flow ", 19);
		first = false;
		for (i = 0; i < got; i++)
			n += buf[i] == '\n';
	}
	return pclose(p) || !ok ? -1 : n;
}

TEST_F_TIMEOUT(scale, flows_100k, 120)
{
	static const unsigned int probes[] = { 0, 1, NFLOWS / 2, NFLOWS - 1 };
	static double op_first[WINDOW], op_last[WINDOW];
	double t0, first = 0, last = 0, create_s, close_s, dump_s;
	double med_first, med_last;
	struct rule r;
	unsigned int i;
	long n;

	ASSERT_EQ(0, drop_sys_resource());
	t0 = now();
	for (i = 0; i < NFLOWS; i++) {
		double t = now(), d;

		rule_init(&r, self->mac, i);
		if (!ibv_create_flow(self->qp, &r.attr)) {
			TH_LOG("flow %u: %s", i, strerror(errno));
			ASSERT_TRUE(0);
		}
		d = now() - t;
		if (i < WINDOW) {
			op_first[i] = d;
			first += d;
		} else if (i >= NFLOWS - WINDOW) {
			op_last[i - (NFLOWS - WINDOW)] = d;
			last += d;
		}
	}
	create_s = now() - t0;
	med_first = median(op_first, WINDOW);
	med_last = median(op_last, WINDOW);
	ksft_print_msg("%d flows in %.2f s: the first %d in %.3f s (%.0f/s), the last %d in %.3f s (%.0f/s)\n",
		       NFLOWS, create_s, WINDOW, first, WINDOW / first, WINDOW,
		       last, WINDOW / last);
	ksft_print_msg("median create: %.1f us among the first %d, %.1f us among the last %d (%.2fx)\n",
		       med_first * 1e6, WINDOW, med_last * 1e6, WINDOW,
		       med_last / med_first);
	fflush(stdout);		/* the harness's child ends with _exit() */
	EXPECT_EQ(NFLOWS, sv_dev_obj_count(DEV, "flow"));
	EXPECT_LT(med_last, 10 * med_first);

	/* Each frame reaches the QP with its own rule's tag, and only it. */
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		ASSERT_EQ(0, send_from(self, probes[i]));
		EXPECT_EQ((long long)probes[i] + 1,
			  recv_tag(self, probes[i], 3000))
			TH_LOG("rule %u", probes[i]);
	}
	ASSERT_EQ(0, send_from(self, NFLOWS));
	EXPECT_EQ(-1, recv_tag(self, NFLOWS, 300));

	/* The dump resumes over many messages: every flow, once. */
	t0 = now();
	n = dump_lines(self->svctl);
	dump_s = now() - t0;
	EXPECT_EQ(NFLOWS, n);
	ksft_print_msg("svctl res show flow: %ld flows in %.2f s\n", n, dump_s);
	fflush(stdout);

	/* close() of the file destroys them all, and returns soon. */
	ASSERT_LT(0, unmap_all(SV_DEV_DIR "/" DEV));
	t0 = now();
	ibv_close_device(self->ctx);
	close_s = now() - t0;
	self->ctx = NULL;
	ksft_print_msg("close() with %d flows: %.3f s\n", NFLOWS, close_s);
	fflush(stdout);
	EXPECT_LT(close_s, 5.0 * sv_slow() + create_s);
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "flow"));
	EXPECT_EQ(0, obj_total(DEV));
}

TEST_HARNESS_MAIN
