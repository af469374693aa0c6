// SPDX-License-Identifier: GPL-2.0
/*
 * The management plane: the "softverbs" generic netlink family through
 * svctl and raw libmnl requests, with veth pairs in a network namespace
 * of the test's own (unshare(CLONE_NEWNET) in every test's child, so the
 * pair and the devices bound to it go away with the test).
 *
 * stat_show checks that every counter is there and starts at zero;
 * steering_counters that the steering counters count exactly the frames
 * sent from the far side of the veth pair, moved to a namespace of its
 * own. The data path's counters are datapath_test's.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/userfaultfd.h>
#include <net/if.h>
#include <sys/socket.h>
#include <time.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>

#include <infiniband/verbs.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include "sv_harness.h"
#include "sv_test.h"
#include "sv_steer_test.h"	/* flow specs: fa_*() */
#include "softverbs-netlink.h"

static char svctl[PATH_MAX];

/* build/selftests/netlink_test -> build/bin/svctl */
static void find_svctl(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		n = 0;
	exe[n] = 0;
	snprintf(svctl, sizeof(svctl), "%s/../bin/svctl", dirname(exe));
}

/* Run a shell command; its stdout+stderr in out. Returns the exit code. */
static int __attribute__((format(printf, 3, 4)))
run(char *out, size_t len, const char *fmt, ...)
{
	char cmd[1024], tmp[4096];
	size_t used = 0, n;
	va_list ap;
	FILE *p;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd) - 8, fmt, ap);
	va_end(ap);
	strcat(cmd, " 2>&1");
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (!out) {
		out = tmp;
		len = sizeof(tmp);
	}
	while (used + 1 < len && (n = fread(out + used, 1, len - 1 - used, p)))
		used += n;
	out[used] = 0;
	while (fread(tmp, 1, sizeof(tmp), p))
		;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define SH(...) run(NULL, 0, __VA_ARGS__)

/* Count the lines of s that contain needle. */
static int count_lines(const char *s, const char *needle)
{
	int n = 0;

	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		char line[1024];

		snprintf(line, sizeof(line), "%.*s", (int)len, s);
		if (strstr(line, needle))
			n++;
		s += len + (nl ? 1 : 0);
	}
	return n;
}

/* How many times needle occurs in s. */
static int count_str(const char *s, const char *needle)
{
	int n = 0;

	while ((s = strstr(s, needle))) {
		n++;
		s += strlen(needle);
	}
	return n;
}

static struct ibv_context *open_named(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		return NULL;
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/*
 * Wait up to ms for an async event of type want, acking every event read.
 * Returns 0 when it came.
 */
static int wait_event(struct ibv_context *ctx, enum ibv_event_type want,
		      int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	while (poll(&pfd, 1, ms) == 1) {
		if (ibv_get_async_event(ctx, &ev))
			return -1;
		ibv_ack_async_event(&ev);
		if (ev.event_type == want)
			return 0;
	}
	return -1;
}

static int find_gid(struct ibv_context *ctx, const uint8_t raw[16])
{
	union ibv_gid gid;
	int i;

	for (i = 0; i < SV_GID_TBL_LEN; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) &&
		    !memcmp(gid.raw, raw, 16))
			return i;
	return -1;
}

static int port_state(struct ibv_context *ctx, struct ibv_port_attr *pa)
{
	memset(pa, 0, sizeof(*pa));
	if (ibv_query_port(ctx, 1, pa))
		return -1;
	return pa->state;
}

/* ---- raw generic netlink, for what svctl never sends ---- */

struct nl {
	struct mnl_socket *sock;
	uint16_t family;
	char buf[32768];
	char msg[256];			/* extack message of the last error */
	void *priv;			/* for the dump callbacks below */
};

static int nl_family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl *nl = data;
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
			nl->family = mnl_attr_get_u16(a);
	return MNL_CB_OK;
}

static struct nlmsghdr *nl_start(struct nl *nl, uint16_t type, uint8_t cmd,
				 uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = time(NULL);
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	return nlh;
}

/* 0 or the negative errno of the request; nl->msg its extack message. */
static int nl_talk(struct nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb)
{
	unsigned int seq = nlh->nlmsg_seq;
	int ret;

	nl->msg[0] = 0;
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		struct nlmsghdr *r;

		ret = mnl_socket_recvfrom(nl->sock, nl->buf, sizeof(nl->buf));
		if (ret < 0)
			return -errno;
		r = (struct nlmsghdr *)nl->buf;
		/*
		 * A request's error, or a dump's: NLMSG_DONE carries the
		 * error code of a failed dump. Extack TLVs follow the code
		 * (NETLINK_CAP_ACK: no copy of the request in between).
		 */
		if (r->nlmsg_type == NLMSG_ERROR ||
		    (r->nlmsg_type == NLMSG_DONE &&
		     *(int *)mnl_nlmsg_get_payload(r) < 0)) {
			int *code = mnl_nlmsg_get_payload(r);
			void *tlvs = (char *)code +
				     (r->nlmsg_type == NLMSG_ERROR ?
				      sizeof(struct nlmsgerr) : sizeof(int));
			size_t len = (char *)r + r->nlmsg_len - (char *)tlvs;
			const struct nlattr *attr;

			if (r->nlmsg_flags & NLM_F_ACK_TLVS) {
				mnl_attr_for_each_payload(tlvs, len) {
					if (mnl_attr_get_type(attr) ==
					    NLMSGERR_ATTR_MSG)
						snprintf(nl->msg,
							 sizeof(nl->msg), "%s",
							 mnl_attr_get_str(attr));
				}
			}
			return *code;
		}
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
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	nlh = nl_start(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, SV_NL_FAMILY_NAME);
	if (nl_talk(nl, nlh, nl_family_cb) || !nl->family)
		return -1;
	return 0;
}

/* ---- dumps collected from raw requests ---- */

struct res_ent {
	char dev[32];
	uint32_t handle, pid, lkey, rkey, usecnt;
	uint64_t iova, length;
	bool has_lkey, has_rkey, has_iova, has_length;
	/* flows, WQs, indirection tables, counters objects */
	uint32_t qpn, flow_flags, tag, counters, wqn, wq_flags, cq, log_size;
	uint16_t priority;
	uint8_t flow_type, nspecs, wq_state;
	bool has_tag, drop, has_counters;
	int nflows;
	uint32_t flows[SV_NL_RES_FLOWS_MAX];
};

struct res_list {
	int n;
	struct res_ent e[64];
};

static int res_cb(const struct nlmsghdr *nlh, void *data)
{
	struct res_list *l = ((struct nl *)data)->priv;
	struct res_ent *e;
	const struct nlattr *a;

	if (l->n == (int)(sizeof(l->e) / sizeof(l->e[0])))
		return MNL_CB_OK;
	e = &l->e[l->n++];
	memset(e, 0, sizeof(*e));
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case SV_NL_ATTR_DEV_NAME:
			snprintf(e->dev, sizeof(e->dev), "%s",
				 mnl_attr_get_str(a));
			break;
		case SV_NL_ATTR_RES_HANDLE:
			e->handle = mnl_attr_get_u32(a);
			break;
		case SV_NL_ATTR_RES_PID:
			e->pid = mnl_attr_get_u32(a);
			break;
		case SV_NL_ATTR_RES_LKEY:
			e->lkey = mnl_attr_get_u32(a);
			e->has_lkey = true;
			break;
		case SV_NL_ATTR_RES_RKEY:
			e->rkey = mnl_attr_get_u32(a);
			e->has_rkey = true;
			break;
		case SV_NL_ATTR_RES_IOVA:
			e->iova = mnl_attr_get_u64(a);
			e->has_iova = true;
			break;
		case SV_NL_ATTR_RES_LENGTH:
			e->length = mnl_attr_get_u64(a);
			e->has_length = true;
			break;
		case SV_NL_ATTR_RES_USECNT:
			e->usecnt = mnl_attr_get_u32(a);
			break;
		case SV_NL_ATTR_RES_QPN:
			e->qpn = mnl_attr_get_u32(a);
			break;
		case SV_NL_ATTR_RES_FLOW_TYPE:
			e->flow_type = mnl_attr_get_u8(a);
			break;
		case SV_NL_ATTR_RES_FLOW_PRIORITY:
			e->priority = mnl_attr_get_u16(a);
			break;
		case SV_NL_ATTR_RES_FLOW_FLAGS:
			e->flow_flags = mnl_attr_get_u32(a);
			break;
		case SV_NL_ATTR_RES_FLOW_NSPECS:
			e->nspecs = mnl_attr_get_u8(a);
			break;
		case SV_NL_ATTR_RES_FLOW_TAG:
			e->tag = mnl_attr_get_u32(a);
			e->has_tag = true;
			break;
		case SV_NL_ATTR_RES_FLOW_DROP:
			e->drop = true;
			break;
		case SV_NL_ATTR_RES_COUNTERS_HANDLE:
			e->counters = mnl_attr_get_u32(a);
			e->has_counters = true;
			break;
		case SV_NL_ATTR_RES_WQN:
			e->wqn = mnl_attr_get_u32(a);
			break;
		case SV_NL_ATTR_RES_WQ_STATE:
			e->wq_state = mnl_attr_get_u8(a);
			break;
		case SV_NL_ATTR_RES_WQ_FLAGS:
			e->wq_flags = mnl_attr_get_u32(a);
			break;
		case SV_NL_ATTR_RES_CQ_HANDLE:
			e->cq = mnl_attr_get_u32(a);
			break;
		case SV_NL_ATTR_RES_LOG_SIZE:
			e->log_size = mnl_attr_get_u32(a);
			break;
		case SV_NL_ATTR_RES_FLOWS: {
			const struct nlattr *f;

			mnl_attr_for_each_nested(f, a)
				if (e->nflows < SV_NL_RES_FLOWS_MAX)
					e->flows[e->nflows++] =
						mnl_attr_get_u32(f);
			break;
		}
		}
	}
	return MNL_CB_OK;
}

/* The entry of l with this handle, or NULL. */
static struct res_ent *res_find(struct res_list *l, uint32_t handle)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->e[i].handle == handle)
			return &l->e[i];
	return NULL;
}

/* A RES_GET dump of one type (of one device if dev); 0 or -errno. */
static int res_get(struct nl *nl, uint8_t type, const char *dev,
		   struct res_list *l)
{
	struct nlmsghdr *nlh;

	memset(l, 0, sizeof(*l));
	nl->priv = l;
	nlh = nl_start(nl, nl->family, SV_NL_CMD_RES_GET, NLM_F_DUMP);
	mnl_attr_put_u8(nlh, SV_NL_ATTR_RES_TYPE, type);
	if (dev)
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, dev);
	return nl_talk(nl, nlh, res_cb);
}

/* The device names a LINK_GET or STAT_GET dump reports, each + " ". */
static int names_cb(const struct nlmsghdr *nlh, void *data)
{
	char *names = ((struct nl *)data)->priv;
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == SV_NL_ATTR_DEV_NAME &&
		    strlen(names) + strlen(mnl_attr_get_str(a)) + 3 < 4096) {
			strcat(names, mnl_attr_get_str(a));
			strcat(names, " ");
		}
	return MNL_CB_OK;
}

static int dump_names(struct nl *nl, uint8_t cmd, char names[4096])
{
	names[0] = ' ';
	names[1] = 0;
	nl->priv = names;
	return nl_talk(nl, nl_start(nl, nl->family, cmd, NLM_F_DUMP),
		       names_cb);
}

/* Drop to uid/gid 65534: no capabilities left. */
static int drop_privileges(void)
{
	return setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	       setresuid(65534, 65534, 65534);
}

/* ---- the fixture: a namespace with a veth pair, names of our own ---- */

FIXTURE(nl) {
	char dev[32];		/* softverbs device name */
	char va[16], vb[16];	/* the veth pair */
	struct ibv_context *ctx;
};

FIXTURE_SETUP(nl)
{
	find_svctl();
	ASSERT_EQ(0, access(svctl, X_OK));
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	snprintf(self->dev, sizeof(self->dev), "svt%d", getpid());
	snprintf(self->va, sizeof(self->va), "sva%d", getpid() % 100000);
	snprintf(self->vb, sizeof(self->vb), "svb%d", getpid() % 100000);
	ASSERT_EQ(0, SH("ip link add %s type veth peer name %s", self->va,
			self->vb));
	self->ctx = NULL;
}

FIXTURE_TEARDOWN(nl)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	SH("%s link del %s", svctl, self->dev);
	SH("ip link del %s", self->va);
	/* steering_counters' far side, if it is still there */
	SH("ip netns del svnl%d", getpid());
}

static int link_add(FIXTURE_DATA(nl) *self)
{
	return SH("%s link add %s netdev %s", svctl, self->dev, self->va);
}

static int link_up(FIXTURE_DATA(nl) *self)
{
	return SH("ip link set %s up && ip link set %s up", self->va,
		  self->vb);
}

TEST_F(nl, link_add_show_del)
{
	char out[4096], path[PATH_MAX], want[128];

	ASSERT_EQ(0, link_add(self));
	snprintf(path, sizeof(path), SV_DEV_DIR "/%s", self->dev);
	EXPECT_EQ(0, access(path, F_OK));
	snprintf(path, sizeof(path), "/sys/class/" SV_CLASS_NAME "/%s/dev_index",
		 self->dev);
	EXPECT_EQ(0, access(path, F_OK));

	/* show one, and the dump */
	ASSERT_EQ(0, run(out, sizeof(out), "%s -j link show %s", svctl,
			 self->dev));
	snprintf(want, sizeof(want), "\"dev\":\"%s\"", self->dev);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "\"netdev\":\"%s\"", self->va);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"state\":\"DOWN\"")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"idle_us\":1000")) TH_LOG("%s", out);
	EXPECT_EQ('[', out[0]);

	ASSERT_EQ(0, run(out, sizeof(out), "%s link show", svctl));
	snprintf(want, sizeof(want), "dev %s ", self->dev);
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s", out);
	/* softverbs0 lives in the initial namespace, not in this one */
	EXPECT_EQ(0, count_lines(out, "dev softverbs0 ")) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "netdev %s ", self->va);
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s", out);

	/* pretty JSON is indented */
	ASSERT_EQ(0, run(out, sizeof(out), "%s -j -p link show %s", svctl,
			 self->dev));
	EXPECT_EQ(0, strncmp(out, "[\n  {\n    \"dev\": ", 16)) TH_LOG("%s", out);

	/* the verbs library finds it */
	self->ctx = open_named(self->dev);
	ASSERT_NE(NULL, self->ctx);
	ibv_close_device(self->ctx);
	self->ctx = NULL;

	ASSERT_EQ(0, SH("%s link del %s", svctl, self->dev));
	snprintf(path, sizeof(path), SV_DEV_DIR "/%s", self->dev);
	EXPECT_EQ(-1, access(path, F_OK));
	EXPECT_EQ(1, run(out, sizeof(out), "%s link show %s", svctl,
			 self->dev));
	EXPECT_STREQ("Error: No softverbs device of that name.\n", out);
	EXPECT_EQ(1, run(out, sizeof(out), "%s link del %s", svctl,
			 self->dev));
	EXPECT_STREQ("Error: No softverbs device of that name.\n", out);

	/* the name and the netdev are free again */
	ASSERT_EQ(0, link_add(self));
}

TEST_F(nl, bad_input)
{
	char out[4096];

	EXPECT_EQ(1, run(out, sizeof(out), "%s link add %s netdev nosuch0",
			 svctl, self->dev));
	EXPECT_STREQ("Error: No such netdev in this network namespace.\n", out);
	EXPECT_EQ(1, run(out, sizeof(out), "%s link add %s netdev lo", svctl,
			 self->dev));
	EXPECT_STREQ("Error: Netdev is not an Ethernet device.\n", out);
	EXPECT_EQ(1, run(out, sizeof(out), "%s link add 9x netdev %s", svctl,
			 self->va));
	EXPECT_NE(NULL, strstr(out, "Error: Device name must start with")) TH_LOG("%s", out);
	EXPECT_EQ(1, run(out, sizeof(out), "%s link add a/b netdev %s", svctl,
			 self->va));
	EXPECT_NE(NULL, strstr(out, "Error: Device name must start with")) TH_LOG("%s", out);

	ASSERT_EQ(0, link_add(self));
	/* duplicate name, on another netdev */
	EXPECT_EQ(1, run(out, sizeof(out), "%s link add %s netdev %s", svctl,
			 self->dev, self->vb));
	EXPECT_STREQ("Error: A softverbs device of that name exists.\n", out);
	EXPECT_EQ(1, run(out, sizeof(out), "%s link add softverbs0 netdev %s",
			 svctl, self->vb));
	EXPECT_STREQ("Error: A softverbs device of that name exists.\n", out);
	/* the netdev is taken */
	EXPECT_EQ(1, run(out, sizeof(out), "%s link add %sx netdev %s", svctl,
			 self->dev, self->va));
	EXPECT_STREQ("Error: Netdev is bound to another softverbs device.\n",
		     out);
	/* softverbs0 is absent here; from its own namespace, not removable */
	EXPECT_EQ(1, run(out, sizeof(out), "%s link del softverbs0", svctl));
	EXPECT_STREQ("Error: No softverbs device of that name.\n", out);
	EXPECT_EQ(1, run(out, sizeof(out),
			 "nsenter --net=/proc/1/ns/net %s link del softverbs0",
			 svctl));
	EXPECT_STREQ("Error: The module's own device cannot be deleted.\n", out);

	/* tunables: range-checked by the policy */
	EXPECT_EQ(0, SH("%s dev set %s idle_us 250", svctl, self->dev));
	ASSERT_EQ(0, run(out, sizeof(out), "%s link show %s", svctl,
			 self->dev));
	EXPECT_NE(NULL, strstr(out, " idle_us 250")) TH_LOG("%s", out);
	EXPECT_EQ(1, run(out, sizeof(out), "%s dev set %s idle_us 10000001",
			 svctl, self->dev));
	EXPECT_NE(NULL, strstr(out, "Error: ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "out of range")) TH_LOG("%s", out);
	EXPECT_EQ(0, SH("%s dev set %s idle_us 10000000", svctl, self->dev));

	/* usage errors */
	EXPECT_EQ(1, run(out, sizeof(out), "%s link add %s", svctl, self->dev));
	EXPECT_NE(NULL, strstr(out, "usage")) TH_LOG("%s", out);
	EXPECT_EQ(1, run(out, sizeof(out), "%s frob", svctl));
	EXPECT_STREQ("Error: object \"frob\" is unknown, try \"svctl help\".\n",
		     out);
	EXPECT_EQ(1, run(out, sizeof(out), "%s res show qp dev nosuch", svctl));
	EXPECT_STREQ("Error: No softverbs device of that name.\n", out);
}

/* Missing and unknown attributes: requests svctl never sends. */
TEST_F(nl, missing_attributes)
{
	struct nlmsghdr *nlh;
	struct nl *nl;

	nl = calloc(1, sizeof(*nl));
	ASSERT_NE(NULL, nl);
	ASSERT_EQ(0, nl_open(nl));

	nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_ADD, 0);
	EXPECT_EQ(-EINVAL, nl_talk(nl, nlh, NULL));
	EXPECT_STREQ("Device name missing", nl->msg);

	nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_ADD, 0);
	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, self->dev);
	EXPECT_EQ(-EINVAL, nl_talk(nl, nlh, NULL));
	EXPECT_STREQ("Netdev name or index missing", nl->msg);

	/* by ifindex: an unknown one */
	nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_ADD, 0);
	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, self->dev);
	mnl_attr_put_u32(nlh, SV_NL_ATTR_NDEV_INDEX, 0x7fffffff);
	EXPECT_EQ(-ENODEV, nl_talk(nl, nlh, NULL));
	EXPECT_STREQ("No such netdev in this network namespace", nl->msg);

	nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_DEL, 0);
	EXPECT_EQ(-EINVAL, nl_talk(nl, nlh, NULL));
	EXPECT_STREQ("Device name missing", nl->msg);

	nlh = nl_start(nl, nl->family, SV_NL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, "softverbs0");
	EXPECT_EQ(-EINVAL, nl_talk(nl, nlh, NULL));
	EXPECT_STREQ("Nothing to set", nl->msg);

	nlh = nl_start(nl, nl->family, SV_NL_CMD_RES_GET, NLM_F_DUMP);
	EXPECT_EQ(-EINVAL, nl_talk(nl, nlh, NULL));
	EXPECT_STREQ("Resource type missing", nl->msg);

	nlh = nl_start(nl, nl->family, SV_NL_CMD_RES_GET, NLM_F_DUMP);
	mnl_attr_put_u8(nlh, SV_NL_ATTR_RES_TYPE, SV_NL_RES_QP);
	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, "nosuch");
	EXPECT_EQ(-ENODEV, nl_talk(nl, nlh, NULL));
	EXPECT_STREQ("No softverbs device of that name", nl->msg);

	/* out of range (the policy's ERANGE), unknown attribute, length */
	nlh = nl_start(nl, nl->family, SV_NL_CMD_RES_GET, NLM_F_DUMP);
	mnl_attr_put_u8(nlh, SV_NL_ATTR_RES_TYPE, SV_NL_RES_MAX + 1);
	EXPECT_EQ(-ERANGE, nl_talk(nl, nlh, NULL));
	nlh = nl_start(nl, nl->family, SV_NL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, "softverbs0");
	mnl_attr_put_u32(nlh, SV_NL_ATTR_IDLE_US, SV_NL_IDLE_US_MAX + 1);
	EXPECT_EQ(-ERANGE, nl_talk(nl, nlh, NULL));
	nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_GET, 0);
	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, "softverbs0");
	mnl_attr_put_u32(nlh, SV_NL_ATTR_MAX + 1, 0);
	EXPECT_EQ(-EINVAL, nl_talk(nl, nlh, NULL));
	nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_ADD, 0);
	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, self->dev);
	mnl_attr_put_u16(nlh, SV_NL_ATTR_NDEV_INDEX, 1);
	EXPECT_EQ(-EINVAL, nl_talk(nl, nlh, NULL));
	/* a name too long for the policy */
	nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_GET, 0);
	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME,
			  "a234567890123456789012345678901234567890");
	EXPECT_EQ(-EINVAL, nl_talk(nl, nlh, NULL));
	/* an unknown command */
	nlh = nl_start(nl, nl->family, SV_NL_CMD_MAX + 1, 0);
	EXPECT_EQ(-EOPNOTSUPP, nl_talk(nl, nlh, NULL));

	mnl_socket_close(nl->sock);
	free(nl);
}

/* Without CAP_NET_ADMIN: changes are EPERM, reading is allowed. */
TEST_F(nl, unprivileged)
{
	int status;
	pid_t pid;

	ASSERT_EQ(0, link_add(self));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char out[4096];
		struct nlmsghdr *nlh;
		struct nl *nl = calloc(1, sizeof(*nl));
		int bad = 0;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		if (!nl || nl_open(nl))
			_exit(11);
		nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_ADD, 0);
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, "svunpriv");
		mnl_attr_put_strz(nlh, SV_NL_ATTR_NDEV_NAME, self->vb);
		bad |= nl_talk(nl, nlh, NULL) != -EPERM;
		nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_DEL, 0);
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, self->dev);
		bad |= (nl_talk(nl, nlh, NULL) != -EPERM) << 1;
		nlh = nl_start(nl, nl->family, SV_NL_CMD_DEV_SET, 0);
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, self->dev);
		mnl_attr_put_u32(nlh, SV_NL_ATTR_IDLE_US, 1);
		bad |= (nl_talk(nl, nlh, NULL) != -EPERM) << 2;
		nlh = nl_start(nl, nl->family, SV_NL_CMD_DEV_SET, 0);
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, self->dev);
		mnl_attr_put_u32(nlh, SV_NL_ATTR_VENDOR_ID, 0x02c9);
		bad |= (nl_talk(nl, nlh, NULL) != -EPERM) << 9;
		bad |= (run(out, sizeof(out), "%s link del %s", svctl,
			    self->dev) != 1) << 3;
		bad |= (strcmp(out, "Error: Operation needs CAP_NET_ADMIN.\n") != 0) << 4;
		/* even for a device that does not exist */
		nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_DEL, 0);
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, "nosuchdev");
		bad |= (nl_talk(nl, nlh, NULL) != -EPERM) << 7;
		bad |= (strcmp(nl->msg, "Operation needs CAP_NET_ADMIN") != 0) << 8;
		bad |= (run(out, sizeof(out), "%s link show %s", svctl,
			    self->dev) != 0) << 5;
		bad |= (run(out, sizeof(out), "%s stat show", svctl) != 0) << 6;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* still there, its vendor_id softverbs' own */
	EXPECT_EQ(0, SH("%s link show %s", svctl, self->dev));
	{
		char out[4096];

		ASSERT_EQ(0, run(out, sizeof(out), "%s link show %s", svctl,
				 self->dev));
		EXPECT_NE(NULL, strstr(out, " vendor_id 21334")) TH_LOG("%s", out);
	}
}

TEST_F(nl, gids_follow_addresses)
{
	static const uint8_t v4[16] = { [10] = 0xff, [11] = 0xff,
					192, 0, 2, 1 };
	static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8,
					[15] = 0x01 };
	union ibv_gid gid;

	ASSERT_EQ(0, link_add(self));
	self->ctx = open_named(self->dev);
	ASSERT_NE(NULL, self->ctx);
	/* entry 0: the link-local GID of the netdev's MAC */
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 0, &gid));
	EXPECT_EQ(0xfe, gid.raw[0]);
	EXPECT_EQ(0x80, gid.raw[1]);
	EXPECT_EQ(0xff, gid.raw[11]);
	EXPECT_EQ(0xfe, gid.raw[12]);
	EXPECT_EQ(-1, find_gid(self->ctx, v4));

	ASSERT_EQ(0, SH("ip addr add 192.0.2.1/24 dev %s", self->va));
	EXPECT_EQ(0, wait_event(self->ctx, IBV_EVENT_GID_CHANGE, 5000));
	EXPECT_LE(0, find_gid(self->ctx, v4));
	ASSERT_EQ(0, SH("ip addr del 192.0.2.1/24 dev %s", self->va));
	EXPECT_EQ(0, wait_event(self->ctx, IBV_EVENT_GID_CHANGE, 5000));
	EXPECT_EQ(-1, find_gid(self->ctx, v4));

	ASSERT_EQ(0, SH("ip -6 addr add 2001:db8::1/64 dev %s nodad",
			self->va));
	EXPECT_EQ(0, wait_event(self->ctx, IBV_EVENT_GID_CHANGE, 5000));
	EXPECT_LE(0, find_gid(self->ctx, v6));
	ASSERT_EQ(0, SH("ip -6 addr del 2001:db8::1/64 dev %s", self->va));
	EXPECT_EQ(0, wait_event(self->ctx, IBV_EVENT_GID_CHANGE, 5000));
	EXPECT_EQ(-1, find_gid(self->ctx, v6));

	/* addresses present before the link: in the table at once */
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	ASSERT_EQ(0, SH("%s link del %s", svctl, self->dev));
	ASSERT_EQ(0, SH("ip addr add 192.0.2.1/24 dev %s", self->va));
	ASSERT_EQ(0, link_add(self));
	self->ctx = open_named(self->dev);
	ASSERT_NE(NULL, self->ctx);
	EXPECT_LE(0, find_gid(self->ctx, v4));
}

TEST_F(nl, port_follows_link)
{
	struct ibv_port_attr pa;
	char out[4096];

	ASSERT_EQ(0, link_add(self));
	self->ctx = open_named(self->dev);
	ASSERT_NE(NULL, self->ctx);
	EXPECT_EQ(IBV_PORT_DOWN, port_state(self->ctx, &pa));

	ASSERT_EQ(0, link_up(self));
	EXPECT_EQ(0, wait_event(self->ctx, IBV_EVENT_PORT_ACTIVE, 5000));
	EXPECT_EQ(IBV_PORT_ACTIVE, port_state(self->ctx, &pa));
	EXPECT_EQ(5, pa.phys_state);		/* LinkUp */
	EXPECT_EQ(IBV_MTU_1024, pa.active_mtu);	/* 1500 */
	ASSERT_EQ(0, run(out, sizeof(out), "%s link show %s", svctl,
			 self->dev));
	EXPECT_NE(NULL, strstr(out, " state ACTIVE mtu 1024 ")) TH_LOG("%s", out);

	ASSERT_EQ(0, SH("ip link set %s down", self->va));
	EXPECT_EQ(0, wait_event(self->ctx, IBV_EVENT_PORT_ERR, 5000));
	EXPECT_EQ(IBV_PORT_DOWN, port_state(self->ctx, &pa));
	EXPECT_EQ(3, pa.phys_state);		/* Disabled */

	ASSERT_EQ(0, SH("ip link set %s up", self->va));
	EXPECT_EQ(0, wait_event(self->ctx, IBV_EVENT_PORT_ACTIVE, 5000));
	EXPECT_EQ(IBV_PORT_ACTIVE, port_state(self->ctx, &pa));

	/* the peer going down takes the carrier away */
	ASSERT_EQ(0, SH("ip link set %s down", self->vb));
	EXPECT_EQ(0, wait_event(self->ctx, IBV_EVENT_PORT_ERR, 5000));
	EXPECT_EQ(IBV_PORT_DOWN, port_state(self->ctx, &pa));
	ASSERT_EQ(0, SH("ip link set %s up", self->vb));
	EXPECT_EQ(0, wait_event(self->ctx, IBV_EVENT_PORT_ACTIVE, 5000));

	/* the MTU follows */
	ASSERT_EQ(0, SH("ip link set %s mtu 9000", self->va));
	port_state(self->ctx, &pa);
	EXPECT_EQ(IBV_MTU_4096, pa.active_mtu);
	ASSERT_EQ(0, SH("ip link set %s mtu 1280", self->va));
	port_state(self->ctx, &pa);
	EXPECT_EQ(IBV_MTU_1024, pa.active_mtu);
	ASSERT_EQ(0, SH("ip link set %s mtu 1000", self->va));
	port_state(self->ctx, &pa);
	EXPECT_EQ(IBV_MTU_512, pa.active_mtu);
}

struct objs {
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	void *buf;
};

static int make_objs(struct ibv_context *ctx, struct objs *o)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	memset(o, 0, sizeof(*o));
	o->pd = ibv_alloc_pd(ctx);
	o->buf = calloc(1, 8192);
	if (!o->pd || !o->buf)
		return -1;
	o->mr = ibv_reg_mr(o->pd, o->buf, 8192, IBV_ACCESS_LOCAL_WRITE);
	o->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!o->mr || !o->cq)
		return -1;
	init.send_cq = o->cq;
	init.recv_cq = o->cq;
	o->qp = ibv_create_qp(o->pd, &init);
	if (!o->qp)
		return -1;
	return ibv_modify_qp(o->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static void free_objs(struct objs *o)
{
	if (o->qp)
		ibv_destroy_qp(o->qp);
	if (o->cq)
		ibv_destroy_cq(o->cq);
	if (o->mr)
		ibv_dereg_mr(o->mr);
	if (o->pd)
		ibv_dealloc_pd(o->pd);
	free(o->buf);
	memset(o, 0, sizeof(*o));
}

TEST_F(nl, resource_dumps)
{
	char *out = malloc(1 << 20), want[128];
	struct ibv_pd *pds[600];
	struct objs o;
	int i;

	ASSERT_NE(NULL, out);
	ASSERT_EQ(0, link_add(self));
	self->ctx = open_named(self->dev);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, make_objs(self->ctx, &o));

	ASSERT_EQ(0, run(out, 1 << 20, "%s res show dev %s", svctl, self->dev));
	EXPECT_EQ(4, count_lines(out, "")) TH_LOG("%s", out);
	snprintf(want, sizeof(want), " pid %d comm netlink_test", getpid());
	EXPECT_EQ(4, count_lines(out, want)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "dev %s type pd handle %u users 2 ",
		 self->dev, o.pd->handle);
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "type mr handle %u lkey 0x%x rkey 0x%x iova 0x%lx length 8192 ",
		 o.mr->handle, o.mr->lkey, o.mr->rkey,
		 (unsigned long)(uintptr_t)o.buf);
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s\n%s", want, out);
	snprintf(want, sizeof(want), "type cq handle %u cqe ", o.cq->handle);
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "type qp handle %u qpn %u qp_type RC state INIT ",
		 o.qp->handle, o.qp->qp_num);
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s", out);

	ASSERT_EQ(0, run(out, 1 << 20, "%s -j res show qp dev %s", svctl,
			 self->dev));
	snprintf(want, sizeof(want), "[{\"dev\":\"%s\",\"type\":\"qp\",\"handle\":%u,\"qpn\":%u,",
		 self->dev, o.qp->handle, o.qp->qp_num);
	EXPECT_EQ(0, strncmp(out, want, strlen(want))) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "\"pid\":%d,\"comm\":\"netlink_test\"}]",
		 getpid());
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);

	/* a dump spread over many messages resumes where it stopped */
	for (i = 0; i < 600; i++) {
		pds[i] = ibv_alloc_pd(self->ctx);
		ASSERT_NE(NULL, pds[i]);
	}
	ASSERT_EQ(0, run(out, 1 << 20, "%s res show pd dev %s", svctl,
			 self->dev));
	EXPECT_EQ(601, count_lines(out, " type pd ")) TH_LOG("%.200s", out);
	for (i = 0; i < 600; i++)
		ASSERT_EQ(0, ibv_dealloc_pd(pds[i]));

	free_objs(&o);
	ASSERT_EQ(0, run(out, 1 << 20, "%s res show dev %s", svctl,
			 self->dev));
	EXPECT_STREQ("", out);
	free(out);
}

struct churn {
	struct ibv_context *ctx;
	const char *ctx_name;
	volatile int stop;
	int errors;
};

static void *churn_pds(void *arg)
{
	struct churn *c = arg;
	struct ibv_pd *pd[16];
	int i;

	while (!c->stop) {
		/* a file that opens, holds a PD and closes */
		struct ibv_context *ctx = open_named(c->ctx_name);

		c->errors += !ctx || !ibv_alloc_pd(ctx);
		if (ctx)
			ibv_close_device(ctx);
		for (i = 0; i < 16; i++) {
			pd[i] = ibv_alloc_pd(c->ctx);
			c->errors += !pd[i];
		}
		for (i = 0; i < 16; i++)
			if (pd[i])
				c->errors += !!ibv_dealloc_pd(pd[i]);
	}
	return NULL;
}

/*
 * Dumps while objects and files come and go: no error, no splat. Forty
 * svctl runs take longer than the default 30 s under TCG on a busy host.
 */
TEST_F_TIMEOUT(nl, dumps_during_changes, 120)
{
	struct churn c = { 0 };
	pthread_t t;
	int i;

	ASSERT_EQ(0, link_add(self));
	self->ctx = open_named(self->dev);
	ASSERT_NE(NULL, self->ctx);
	c.ctx = self->ctx;
	c.ctx_name = self->dev;
	ASSERT_EQ(0, pthread_create(&t, NULL, churn_pds, &c));
	for (i = 0; i < 20; i++) {
		EXPECT_EQ(0, SH("%s res show pd", svctl));
		EXPECT_EQ(0, SH("%s -j res show dev %s", svctl, self->dev));
	}
	c.stop = 1;
	pthread_join(t, NULL);
	EXPECT_EQ(0, c.errors);
}

TEST_F(nl, stat_show)
{
	static const char * const names[] = {
		"tx_packets", "tx_bytes", "rx_packets", "rx_bytes",
		"completions", "rnr_naks", "retries", "steering_hits",
		"steering_misses", "steering_drops", "doorbells",
		"doorbell_wqes", "rx_peer_drops", "rx_raw_drops",
		"steering_matched", "steering_trapped", "steering_copies",
		"steering_passed", "rx_raw_queue_drops",
	};
	char out[4096], want[128];
	unsigned int i;

	ASSERT_EQ(0, link_add(self));
	ASSERT_EQ(0, run(out, sizeof(out), "%s -j stat show dev %s", svctl,
			 self->dev));
	snprintf(want, sizeof(want), "[{\"dev\":\"%s\",\"port\":1,",
		 self->dev);
	EXPECT_EQ(0, strncmp(out, want, strlen(want))) TH_LOG("%s", out);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(want, sizeof(want), "\"%s\":0", names[i]);
		EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", want);
	}
	ASSERT_EQ(0, run(out, sizeof(out), "%s stat show", svctl));
	snprintf(want, sizeof(want), "dev %s port 1 tx_packets 0 ", self->dev);
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s", out);
	/* softverbs0 is in the initial namespace: not counted here */
	EXPECT_EQ(0, count_lines(out, "dev softverbs0 port 1 ")) TH_LOG("%s", out);
}

/*
 * The netdev goes away under a device with open users: the device is
 * unregistered, the users' QPs are in ERR and their port DOWN, new objects
 * are EIO, and what they have can still be queried and destroyed.
 */
static void busy_device_goes_away(struct __test_metadata *_metadata,
				  FIXTURE_DATA(nl) *self, const char *how)
{
	struct ibv_qp_init_attr init;
	struct ibv_port_attr pa;
	struct ibv_qp_attr attr;
	char path[PATH_MAX];
	struct objs o;

	ASSERT_EQ(0, link_add(self));
	ASSERT_EQ(0, link_up(self));
	self->ctx = open_named(self->dev);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, make_objs(self->ctx, &o));
	/* the carrier may come after the open */
	wait_event(self->ctx, IBV_EVENT_PORT_ACTIVE, 2000);
	ASSERT_EQ(IBV_PORT_ACTIVE, port_state(self->ctx, &pa));

	ASSERT_EQ(0, SH("%s", how));
	snprintf(path, sizeof(path), SV_DEV_DIR "/%s", self->dev);
	EXPECT_EQ(-1, access(path, F_OK));
	EXPECT_NE(0, SH("%s link show %s", svctl, self->dev));

	EXPECT_EQ(0, wait_event(self->ctx, IBV_EVENT_PORT_ERR, 5000));
	EXPECT_EQ(0, wait_event(self->ctx, IBV_EVENT_DEVICE_FATAL, 5000));
	EXPECT_EQ(IBV_PORT_DOWN, port_state(self->ctx, &pa));
	ASSERT_EQ(0, ibv_query_qp(o.qp, &attr, IBV_QP_STATE, &init));
	EXPECT_EQ(IBV_QPS_ERR, attr.qp_state);

	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_pd(self->ctx));
	EXPECT_EQ(EIO, errno);
	attr.qp_state = IBV_QPS_RESET;
	EXPECT_EQ(EIO, ibv_modify_qp(o.qp, &attr, IBV_QP_STATE));

	free_objs(&o);
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	/* the name is free */
	EXPECT_EQ(0, access("/dev/infiniband/softverbs0", F_OK));
}

TEST_F(nl, netdev_deleted_under_busy_device)
{
	char how[128];

	snprintf(how, sizeof(how), "ip link del %s", self->va);
	busy_device_goes_away(_metadata, self, how);
}

TEST_F(nl, link_del_under_busy_device)
{
	char how[PATH_MAX + 64];

	snprintf(how, sizeof(how), "%s link del %s", svctl, self->dev);
	busy_device_goes_away(_metadata, self, how);
	/* the netdev can be bound again */
	EXPECT_EQ(0, link_add(self));
}

/* The netdev moves to another namespace: the device is deleted. */
TEST_F(nl, netdev_moved_removes_device)
{
	char path[PATH_MAX];

	ASSERT_EQ(0, link_add(self));
	ASSERT_EQ(0, SH("ip netns add svmv%d && ip link set %s netns svmv%d",
			getpid(), self->va, getpid()));
	snprintf(path, sizeof(path), SV_DEV_DIR "/%s", self->dev);
	EXPECT_EQ(-1, access(path, F_OK));
	EXPECT_NE(0, SH("%s link show %s", svctl, self->dev));
	EXPECT_NE(0, SH("ip netns exec svmv%d %s link show %s", getpid(),
			svctl, self->dev));
	EXPECT_EQ(0, SH("ip netns del svmv%d", getpid()));
}

/* The namespace with the netdev goes away: so does the device. */
TEST(netns_exit_removes_device)
{
	char path[PATH_MAX], name[32];
	int status, i;
	pid_t pid;

	find_svctl();
	snprintf(name, sizeof(name), "svns%d", getpid());
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (unshare(CLONE_NEWNET))
			_exit(10);
		if (SH("ip link add nsa type veth peer name nsb"))
			_exit(11);
		_exit(SH("%s link add %s netdev nsa", svctl, name) ? 12 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* The namespace is dismantled by a work item: wait for it. */
	snprintf(path, sizeof(path), SV_DEV_DIR "/%s", name);
	for (i = 0; i < 100 && !access(path, F_OK); i++)
		usleep(100000);
	EXPECT_EQ(-1, access(path, F_OK));
	EXPECT_NE(0, SH("%s link show %s", svctl, name));
}

/*
 * Keys and addresses only to CAP_NET_ADMIN (as rdma nldev): a user
 * without it sees its own MR, without lkey, rkey, iova and length; root
 * sees them.
 */
TEST_F(nl, res_keys_need_net_admin)
{
	struct { uint32_t lkey; uint64_t addr; } info;
	int up[2], down[2], status, i, found = 0;
	struct res_list *l;
	struct nl *nl;
	char out[4096];
	pid_t pid;

	ASSERT_EQ(0, link_add(self));
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ibv_context *ctx;
		struct ibv_pd *pd;
		struct ibv_mr *mr;
		char want[64];
		void *buf;
		int bad = 0, mine = 0;

		close(up[0]);
		close(down[1]);
		if (drop_privileges())
			_exit(100);
		ctx = open_named(self->dev);
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		buf = aligned_alloc(4096, 4096);
		mr = pd && buf ? ibv_reg_mr(pd, buf, 4096,
					    IBV_ACCESS_LOCAL_WRITE) : NULL;
		nl = calloc(1, sizeof(*nl));
		l = calloc(1, sizeof(*l));
		if (!mr || !nl || !l || nl_open(nl))
			_exit(101);
		bad |= res_get(nl, SV_NL_RES_MR, self->dev, l) != 0;
		for (i = 0; i < l->n; i++) {
			if (l->e[i].pid != (uint32_t)getpid())
				continue;
			mine++;
			bad |= (l->e[i].handle != mr->handle) << 1;
			bad |= (l->e[i].has_lkey || l->e[i].has_rkey ||
				l->e[i].has_iova || l->e[i].has_length) << 2;
		}
		bad |= (mine != 1) << 3;
		bad |= (run(out, sizeof(out), "%s res show mr dev %s", svctl,
			    self->dev) != 0) << 4;
		snprintf(want, sizeof(want), " type mr handle %u users 0 pid %d ",
			 mr->handle, getpid());
		bad |= (count_lines(out, want) != 1) << 5;
		bad |= (strstr(out, "key") || strstr(out, "iova")) << 6;
		info.lkey = mr->lkey;
		info.addr = (uintptr_t)buf;
		if (write(up[1], &info, sizeof(info)) != sizeof(info))
			bad |= 1 << 7;
		if (read(down[0], &i, 1) < 0)
			bad |= 1 << 8;
		if (bad)
			fprintf(stderr, "child: %#x\n%s", bad, out);
		_exit(bad);
	}
	close(up[1]);
	close(down[0]);
	ASSERT_EQ(sizeof(info), read(up[0], &info, sizeof(info)));
	nl = calloc(1, sizeof(*nl));
	l = calloc(1, sizeof(*l));
	ASSERT_NE(NULL, nl);
	ASSERT_NE(NULL, l);
	ASSERT_EQ(0, nl_open(nl));
	ASSERT_EQ(0, res_get(nl, SV_NL_RES_MR, self->dev, l));
	for (i = 0; i < l->n; i++) {
		if (l->e[i].pid != (uint32_t)pid)
			continue;
		found++;
		EXPECT_TRUE(l->e[i].has_lkey);
		EXPECT_EQ(info.lkey, l->e[i].lkey);
		EXPECT_EQ(info.lkey, l->e[i].rkey);
		EXPECT_EQ(info.addr, l->e[i].iova);
		EXPECT_EQ(4096, l->e[i].length);
	}
	EXPECT_EQ(1, found);
	ASSERT_EQ(0, run(out, sizeof(out), "%s res show mr dev %s", svctl,
			 self->dev));
	EXPECT_NE(NULL, strstr(out, " lkey 0x")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, " iova 0x")) TH_LOG("%s", out);
	ASSERT_EQ(1, write(down[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	mnl_socket_close(nl->sock);
	free(nl);
	free(l);
}

/*
 * Objects are filtered to the caller's pid namespace and their pids are
 * the ones it sees: pid 1 in a new pid namespace sees its own PD as pid
 * 1's and not the PD of the test outside it.
 */
TEST_F(nl, res_pid_namespace)
{
	struct ibv_pd *pd;
	int status;
	pid_t pid;

	ASSERT_EQ(0, link_add(self));
	self->ctx = open_named(self->dev);
	ASSERT_NE(NULL, self->ctx);
	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		pid_t in;

		if (unshare(CLONE_NEWPID))
			_exit(100);
		in = fork();
		if (in < 0)
			_exit(101);
		if (in == 0) {
			struct ibv_context *ctx = open_named(self->dev);
			struct ibv_pd *mine = ctx ? ibv_alloc_pd(ctx) : NULL;
			struct nl *nl = calloc(1, sizeof(*nl));
			struct res_list *l = calloc(1, sizeof(*l));
			char out[4096], want[64];
			int bad = 0;

			if (getpid() != 1 || !mine || !nl || !l || nl_open(nl))
				_exit(102);
			bad |= res_get(nl, SV_NL_RES_PD, self->dev, l) != 0;
			bad |= (l->n != 1) << 1;
			bad |= (l->e[0].pid != 1 ||
				l->e[0].handle != mine->handle) << 2;
			bad |= (run(out, sizeof(out), "%s res show pd", svctl)
				!= 0) << 3;
			snprintf(want, sizeof(want), " type pd handle %u users 0 pid 1 ",
				 mine->handle);
			bad |= (count_lines(out, " type pd ") != 1) << 4;
			bad |= (count_lines(out, want) != 1) << 5;
			if (bad)
				fprintf(stderr, "pid 1: %#x, %d PDs\n%s", bad,
					l->n, out);
			_exit(bad);
		}
		if (waitpid(in, &status, 0) != in || !WIFEXITED(status))
			_exit(103);
		_exit(WEXITSTATUS(status));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

/*
 * A device belongs to the network namespace of its netdev: from another
 * namespace it is absent (ENODEV) for every command, and dumps leave it
 * out; softverbs0 lives in the initial namespace.
 */
TEST_F(nl, other_netns_sees_nothing)
{
	char out[4096];
	struct ibv_pd *pd;
	int status;
	pid_t pid;

	ASSERT_EQ(0, link_add(self));
	self->ctx = open_named(self->dev);
	ASSERT_NE(NULL, self->ctx);
	pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = open("/proc/1/ns/net", O_RDONLY);
		struct nl *nl = calloc(1, sizeof(*nl));
		struct res_list *l = calloc(1, sizeof(*l));
		char names[4096], want[48];
		struct nlmsghdr *nlh;
		int bad = 0, i;

		if (fd < 0 || setns(fd, CLONE_NEWNET) || !nl || !l ||
		    nl_open(nl))
			_exit(100);
		nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_GET, 0);
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, self->dev);
		bad |= nl_talk(nl, nlh, NULL) != -ENODEV;
		bad |= strcmp(nl->msg, "No softverbs device of that name") << 1;
		nlh = nl_start(nl, nl->family, SV_NL_CMD_STAT_GET, 0);
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, self->dev);
		bad |= (nl_talk(nl, nlh, NULL) != -ENODEV) << 2;
		bad |= (res_get(nl, SV_NL_RES_PD, self->dev, l) != -ENODEV) << 3;
		nlh = nl_start(nl, nl->family, SV_NL_CMD_DEV_SET, 0);
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, self->dev);
		mnl_attr_put_u32(nlh, SV_NL_ATTR_IDLE_US, 7);
		bad |= (nl_talk(nl, nlh, NULL) != -ENODEV) << 4;
		nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_DEL, 0);
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, self->dev);
		bad |= (nl_talk(nl, nlh, NULL) != -ENODEV) << 5;
		snprintf(want, sizeof(want), " %s ", self->dev);
		bad |= (dump_names(nl, SV_NL_CMD_LINK_GET, names) ||
			strstr(names, want) ||
			!strstr(names, " softverbs0 ")) << 6;
		bad |= (dump_names(nl, SV_NL_CMD_STAT_GET, names) ||
			strstr(names, want) ||
			!strstr(names, " softverbs0 ")) << 7;
		bad |= res_get(nl, SV_NL_RES_PD, NULL, l) << 8;
		for (i = 0; i < l->n; i++)
			bad |= !strcmp(l->e[i].dev, self->dev) << 9;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* still there, untouched */
	ASSERT_EQ(0, run(out, sizeof(out), "%s link show %s", svctl,
			 self->dev));
	EXPECT_EQ(NULL, strstr(out, "idle_us 7")) TH_LOG("%s", out);

	/* and softverbs0 is not visible from here */
	EXPECT_EQ(1, run(out, sizeof(out), "%s link show softverbs0", svctl));
	EXPECT_STREQ("Error: No softverbs device of that name.\n", out);
	EXPECT_EQ(1, run(out, sizeof(out), "%s stat show dev softverbs0",
			 svctl));
	EXPECT_STREQ("Error: No softverbs device of that name.\n", out);
	EXPECT_EQ(1, run(out, sizeof(out), "%s res show pd dev softverbs0",
			 svctl));
	EXPECT_STREQ("Error: No softverbs device of that name.\n", out);
	EXPECT_EQ(1, run(out, sizeof(out), "%s dev set softverbs0 idle_us 5",
			 svctl));
	EXPECT_STREQ("Error: No softverbs device of that name.\n", out);
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

/* Names carry a softverbs prefix: nothing of the RDMA core's. */
TEST_F(nl, device_names)
{
	static const char * const bad_names[] = {
		"uverbs0", "rxe0", "mlx5_0", "rdma_cm", "s", "sVx",
	};
	char out[4096], name[32];
	struct nlmsghdr *nlh;
	struct nl *nl;
	unsigned int i;

	for (i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		EXPECT_EQ(1, run(out, sizeof(out), "%s link add %s netdev %s",
				 svctl, bad_names[i], self->va));
		EXPECT_NE(NULL, strstr(out, "Error: Device name must start with \"sv\" or \"softverbs\""))
			TH_LOG("%s: %s", bad_names[i], out);
	}
	nl = calloc(1, sizeof(*nl));
	ASSERT_NE(NULL, nl);
	ASSERT_EQ(0, nl_open(nl));
	nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_ADD, 0);
	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, "uverbs0");
	mnl_attr_put_strz(nlh, SV_NL_ATTR_NDEV_NAME, self->va);
	EXPECT_EQ(-EINVAL, nl_talk(nl, nlh, NULL));
	mnl_socket_close(nl->sock);
	free(nl);

	/* both prefixes work */
	snprintf(name, sizeof(name), "softverbs-t%d", getpid());
	ASSERT_EQ(0, SH("%s link add %s netdev %s", svctl, name, self->va));
	ASSERT_EQ(0, SH("%s link del %s", svctl, name));
	ASSERT_EQ(0, link_add(self));
}

/* The MAC of a netdev of this namespace, as "aa:bb:cc:dd:ee:ff". */
static int read_mac(const char *ndev, char mac[32])
{
	struct ifreq ifr = { 0 };
	unsigned char *m = (unsigned char *)ifr.ifr_hwaddr.sa_data;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ret;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ndev);
	ret = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (ret)
		return -1;
	snprintf(mac, 32, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
	return 0;
}

/* fe80::<EUI-64 of "aa:bb:cc:dd:ee:ff"> */
static int gid_from_mac(const char *mac, uint8_t gid[16])
{
	unsigned int m[6];

	if (sscanf(mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
		   &m[4], &m[5]) != 6)
		return -1;
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	gid[8] = m[0] ^ 2;
	gid[9] = m[1];
	gid[10] = m[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = m[3];
	gid[14] = m[4];
	gid[15] = m[5];
	return 0;
}

/*
 * A GID belongs to one device of a namespace: a link add that would give
 * a second device a GID another one holds is EADDRINUSE, and an address
 * another device's netdev has already is not added to the GID table.
 */
TEST_F(nl, gid_in_use)
{
	static const uint8_t v4[16] = { [10] = 0xff, [11] = 0xff,
					192, 0, 2, 7 };
	struct ibv_context *ctx_b;
	char out[4096], mac[32], devb[40];
	uint8_t gid[16];
	struct nlmsghdr *nlh;
	struct nl *nl;

	snprintf(devb, sizeof(devb), "%sb", self->dev);
	ASSERT_EQ(0, link_add(self));
	ASSERT_EQ(0, read_mac(self->va, mac));
	/* the peer with the same MAC: the same link-local GID */
	ASSERT_EQ(0, SH("ip link set %s address %s", self->vb, mac));
	EXPECT_EQ(1, run(out, sizeof(out), "%s link add %s netdev %s", svctl,
			 devb, self->vb));
	EXPECT_STREQ("Error: Another softverbs device in this network namespace has a GID of this netdev.\n",
		     out);
	nl = calloc(1, sizeof(*nl));
	ASSERT_NE(NULL, nl);
	ASSERT_EQ(0, nl_open(nl));
	nlh = nl_start(nl, nl->family, SV_NL_CMD_LINK_ADD, 0);
	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, devb);
	mnl_attr_put_strz(nlh, SV_NL_ATTR_NDEV_NAME, self->vb);
	EXPECT_EQ(-EADDRINUSE, nl_talk(nl, nlh, NULL));
	mnl_socket_close(nl->sock);
	free(nl);
	EXPECT_NE(0, SH("%s link show %s", svctl, devb));

	/* another MAC: fine; then the same IPv4 address on both netdevs */
	ASSERT_EQ(0, SH("ip link set %s address 02:5e:00:00:00:01", self->vb));
	ASSERT_EQ(0, SH("%s link add %s netdev %s", svctl, devb, self->vb));
	self->ctx = open_named(self->dev);
	ctx_b = open_named(devb);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_NE(NULL, ctx_b);
	ASSERT_EQ(0, SH("ip addr add 192.0.2.7/24 dev %s", self->va));
	EXPECT_EQ(0, wait_event(self->ctx, IBV_EVENT_GID_CHANGE, 5000));
	EXPECT_LE(0, find_gid(self->ctx, v4));
	ASSERT_EQ(0, SH("ip addr add 192.0.2.7/24 dev %s", self->vb));
	usleep(300000);
	EXPECT_EQ(-1, find_gid(ctx_b, v4));
	/* a MAC change to the other device's: its link-local GID stays out */
	ASSERT_EQ(0, SH("ip link set %s address %s", self->vb, mac));
	usleep(100000);
	EXPECT_EQ(0, gid_from_mac(mac, gid));
	EXPECT_LE(0, find_gid(self->ctx, gid));
	EXPECT_EQ(-1, find_gid(ctx_b, gid));
	ibv_close_device(ctx_b);
	EXPECT_EQ(0, SH("%s link del %s", svctl, devb));
}

/*
 * A user namespace (a container) can make devices in its own network
 * namespaces, up to the per-user-namespace limit, and they are its own.
 */
TEST(userns_device_limit)
{
	char out[8192], want[128], path[PATH_MAX];
	int i;

	find_svctl();
	/* Load dummy here: a user namespace cannot. */
	ASSERT_EQ(0, SH("ip link add svlim%d type dummy && ip link del svlim%d",
			getpid(), getpid()));
	ASSERT_EQ(0, run(out, sizeof(out),
			 "unshare -Urn sh -c 'for i in 1 2 3 4 5 6 7 8 9; do "
			 "ip link add d$i type dummy || exit 9; "
			 "%s link add svu%dx$i netdev d$i || { echo refused $i; break; }; "
			 "done; %s link show; echo end'",
			 svctl, getpid(), svctl));
	EXPECT_NE(NULL, strstr(out, "Error: Too many softverbs devices for this user namespace.\nrefused 9\n"))
		TH_LOG("%s", out);
	snprintf(want, sizeof(want), "dev svu%dx8 ", getpid());
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s", out);
	EXPECT_EQ(0, count_lines(out, "dev softverbs0 ")) TH_LOG("%s", out);
	/* Gone with the namespace (dismantled by a work item). */
	snprintf(path, sizeof(path), SV_DEV_DIR "/svu%dx1", getpid());
	for (i = 0; i < 100 && !access(path, F_OK); i++)
		usleep(100000);
	EXPECT_EQ(-1, access(path, F_OK));
}

/*
 * The management plane never waits for a file's control commands under
 * a lock the host's network configuration needs: with an MR registration
 * stuck on a userfaultfd page, the resource dump, the creation of an
 * unrelated netdev and a change of the bound netdev all complete.
 */
static int run_deadline(const char *cmd, int secs)
{
	struct timespec t0, t;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(SH("%s", cmd));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= secs)
			return -ETIMEDOUT;	/* left running */
		usleep(20000);
	}
}

struct stuck_reg {
	struct ibv_pd *pd;
	void *addr;
	struct ibv_mr *mr;
	int err;
};

static void *stuck_reg_thread(void *arg)
{
	struct stuck_reg *r = arg;

	r->mr = ibv_reg_mr(r->pd, r->addr, 2 * 4096, IBV_ACCESS_LOCAL_WRITE);
	r->err = errno;
	return NULL;
}

TEST_F(nl, stuck_registration_holds_nothing)
{
	char cmd[PATH_MAX + 128];
	int ready[2], go[2], status;
	char c;
	pid_t pid;

	ASSERT_EQ(0, link_add(self));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct uffdio_api api = { .api = UFFD_API };
		struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
		static char page[2 * 4096] __attribute__((aligned(4096)));
		struct uffdio_copy cp = { 0 };
		struct stuck_reg r = { 0 };
		struct ibv_context *ctx;
		struct pollfd pfd;
		struct ibv_mr *other;
		pthread_t t;
		void *buf;
		int uffd;

		close(ready[0]);
		close(go[1]);
		ctx = open_named(self->dev);
		r.pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		buf = aligned_alloc(4096, 4096);
		/* an MR the dump has to show */
		other = r.pd && buf ? ibv_reg_mr(r.pd, buf, 4096,
						 IBV_ACCESS_LOCAL_WRITE) : NULL;
		uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
		if (!other || uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
			_exit(100);
		r.addr = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		reg.range.start = (uintptr_t)r.addr;
		reg.range.len = 2 * 4096;
		if (r.addr == MAP_FAILED || ioctl(uffd, UFFDIO_REGISTER, &reg))
			_exit(101);
		if (pthread_create(&t, NULL, stuck_reg_thread, &r))
			_exit(102);
		/* The registration is stuck once its fault is reported. */
		pfd.fd = uffd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 10000) != 1)
			_exit(103);
		if (write(ready[1], "r", 1) != 1)
			_exit(104);
		if (read(go[0], &c, 1) < 0)
			_exit(105);
		/*
		 * Resolve both pages; the registration finishes. Whether
		 * it succeeds is mr.c's business (on 6.1 it has been seen
		 * to fail here): this test is about who waits meanwhile.
		 */
		cp.src = (uintptr_t)page;
		cp.dst = (uintptr_t)r.addr;
		cp.len = 2 * 4096;
		if (ioctl(uffd, UFFDIO_COPY, &cp))
			_exit(106);
		close(uffd);
		pthread_join(t, NULL);
		if (!r.mr)
			fprintf(stderr, "# registration after the fault: %s\n",
				strerror(r.err));
		else
			ibv_dereg_mr(r.mr);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	usleep(100000);
	snprintf(cmd, sizeof(cmd), "%s res show mr dev %s", svctl, self->dev);
	EXPECT_EQ(0, run_deadline(cmd, 10));
	snprintf(cmd, sizeof(cmd), "%s -j res show", svctl);
	EXPECT_EQ(0, run_deadline(cmd, 10));
	snprintf(cmd, sizeof(cmd), "ip link add svh%d type dummy && ip link del svh%d",
		 getpid(), getpid());
	EXPECT_EQ(0, run_deadline(cmd, 10));
	snprintf(cmd, sizeof(cmd), "ip link set %s up && ip link set %s down",
		 self->va, self->va);
	EXPECT_EQ(0, run_deadline(cmd, 10));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* ---- steering objects: flows, WQs, indirection tables, counters ---- */

/* A counters object counting packets at index 0. */
static struct ibv_counters *counters_new(struct ibv_context *ctx)
{
	struct ibv_counters_init_attr ia = {};
	struct ibv_counter_attach_attr at = {
		.counter_desc = IBV_COUNTER_PACKETS,
	};
	struct ibv_counters *c = ibv_create_counters(ctx, &ia);

	if (c && ibv_attach_counters_point_flow(c, &at, NULL)) {
		ibv_destroy_counters(c);
		c = NULL;
	}
	return c;
}

/* A RAW_PACKET QP on @cq, in @state (RESET, INIT or RTS). */
static struct ibv_qp *raw_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			     enum ibv_qp_state state)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp || state == IBV_QPS_RESET)
		return qp;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT))
		goto err;
	if (state == IBV_QPS_INIT)
		return qp;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		goto err;
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		goto err;
	return qp;
err:
	ibv_destroy_qp(qp);
	return NULL;
}

/*
 * What res_steering_objects and res_steering_isolation dump: a RAW_PACKET
 * QP with five flows (two counting into one counters object, another
 * counters object idle), two WQs and an indirection table of both.
 */
struct steer_objs {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_counters *c, *idle;
	struct ibv_flow *f[5];
	struct ibv_wq *wq[2];
	struct ibv_rwq_ind_table *tbl;
};

static const uint8_t steer_dst[6] = { 0x02, 0x5e, 0, 0, 0, 1 };

static int make_steer_objs(struct ibv_context *ctx, struct steer_objs *o)
{
	struct ibv_wq_init_attr wa = {
		.wq_type = IBV_WQT_RQ, .max_wr = 8, .max_sge = 1,
		.comp_mask = IBV_WQ_INIT_ATTR_FLAGS,
		.create_flags = IBV_WQ_FLAGS_CVLAN_STRIPPING,
	};
	struct ibv_wq_attr rdy = { .attr_mask = IBV_WQ_ATTR_STATE,
				   .wq_state = IBV_WQS_RDY };
	struct ibv_rwq_ind_table_init_attr ta = {
		.log_ind_tbl_size = 1, .ind_tbl = o->wq,
	};
	struct spec_attr a;
	int i;

	memset(o, 0, sizeof(*o));
	o->pd = ibv_alloc_pd(ctx);
	o->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!o->pd || !o->cq)
		return -1;
	o->qp = raw_qp(o->pd, o->cq, IBV_QPS_RESET);
	o->c = counters_new(ctx);
	o->idle = counters_new(ctx);
	if (!o->qp || !o->c || !o->idle)
		return -1;
	/* NORMAL at priority 3: ETH, a tag, a count */
	fa_init(&a, IBV_FLOW_ATTR_NORMAL, 3, 0);
	fa_eth(&a, steer_dst, 0x88b5);
	fa_tag(&a, 0x1234);
	fa_count(&a, o->c);
	o->f[0] = ibv_create_flow(o->qp, &a.attr);
	/* DONT_TRAP: ETH, IPv4, UDP, counting into the same object */
	fa_init(&a, IBV_FLOW_ATTR_NORMAL, 0, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	fa_eth(&a, steer_dst, 0);
	fa_ipv4(&a, NULL, "192.0.2.1");
	fa_l4(&a, IBV_FLOW_SPEC_UDP, 4000);
	fa_count(&a, o->c);
	o->f[1] = ibv_create_flow(o->qp, &a.attr);
	/* a drop */
	fa_init(&a, IBV_FLOW_ATTR_NORMAL, 1, 0);
	fa_eth(&a, NULL, 0x88b6);
	fa_drop(&a);
	o->f[2] = ibv_create_flow(o->qp, &a.attr);
	/* ALL_DEFAULT at 7 with a tag of 0 (a tag nonetheless) */
	fa_init(&a, IBV_FLOW_ATTR_ALL_DEFAULT, 7, 0);
	fa_tag(&a, 0);
	o->f[3] = ibv_create_flow(o->qp, &a.attr);
	fa_init(&a, IBV_FLOW_ATTR_SNIFFER, 0, 0);
	o->f[4] = ibv_create_flow(o->qp, &a.attr);
	for (i = 0; i < 5; i++)
		if (!o->f[i])
			return -1;
	wa.pd = o->pd;
	wa.cq = o->cq;
	o->wq[0] = ibv_create_wq(ctx, &wa);
	wa.create_flags = 0;
	o->wq[1] = ibv_create_wq(ctx, &wa);
	if (!o->wq[0] || !o->wq[1] || ibv_modify_wq(o->wq[0], &rdy))
		return -1;
	o->tbl = ibv_create_rwq_ind_table(ctx, &ta);
	return o->tbl ? 0 : -1;
}

static void free_steer_objs(struct steer_objs *o)
{
	int i;

	for (i = 0; i < 5; i++)
		if (o->f[i])
			ibv_destroy_flow(o->f[i]);
	if (o->tbl)
		ibv_destroy_rwq_ind_table(o->tbl);
	for (i = 0; i < 2; i++)
		if (o->wq[i])
			ibv_destroy_wq(o->wq[i]);
	if (o->c)
		ibv_destroy_counters(o->c);
	if (o->idle)
		ibv_destroy_counters(o->idle);
	if (o->qp)
		ibv_destroy_qp(o->qp);
	if (o->cq)
		ibv_destroy_cq(o->cq);
	if (o->pd)
		ibv_dealloc_pd(o->pd);
	memset(o, 0, sizeof(*o));
}

/* Every attribute of the new dump types, raw and through svctl. */
TEST_F(nl, res_steering_objects)
{
	char *out = malloc(1 << 16), want[256];
	struct res_ent *e, *idle;
	uint32_t ch;		/* the counters object of flows 0 and 1 */
	struct steer_objs o;
	struct res_list *l;
	struct nl *nl;
	int i;

	nl = calloc(1, sizeof(*nl));
	l = calloc(1, sizeof(*l));
	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, nl);
	ASSERT_NE(NULL, l);
	ASSERT_EQ(0, nl_open(nl));
	ASSERT_EQ(0, link_add(self));
	self->ctx = open_named(self->dev);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, make_steer_objs(self->ctx, &o));

	/* flows */
	ASSERT_EQ(0, res_get(nl, SV_NL_RES_FLOW, self->dev, l));
	ASSERT_EQ(5, l->n);
	for (i = 0; i < 5; i++) {
		e = res_find(l, o.f[i]->handle);
		ASSERT_NE(NULL, e);
		EXPECT_EQ(o.qp->qp_num, e->qpn);
		EXPECT_EQ((uint32_t)getpid(), e->pid);
		EXPECT_EQ(0, e->usecnt);
	}
	e = res_find(l, o.f[0]->handle);
	EXPECT_EQ(IBV_FLOW_ATTR_NORMAL, e->flow_type);
	EXPECT_EQ(3, e->priority);
	EXPECT_EQ(0, e->flow_flags);
	EXPECT_EQ(3, e->nspecs);
	EXPECT_TRUE(e->has_tag);
	EXPECT_EQ(0x1234, e->tag);
	EXPECT_FALSE(e->drop);
	EXPECT_TRUE(e->has_counters);
	ch = e->counters;
	e = res_find(l, o.f[1]->handle);
	EXPECT_EQ(0, e->priority);
	EXPECT_EQ(IBV_FLOW_ATTR_FLAGS_DONT_TRAP, e->flow_flags);
	EXPECT_EQ(4, e->nspecs);
	EXPECT_FALSE(e->has_tag);
	EXPECT_TRUE(e->has_counters);
	EXPECT_EQ(ch, e->counters);
	e = res_find(l, o.f[2]->handle);
	EXPECT_EQ(1, e->priority);
	EXPECT_EQ(2, e->nspecs);
	EXPECT_TRUE(e->drop);
	EXPECT_FALSE(e->has_tag);
	EXPECT_FALSE(e->has_counters);
	e = res_find(l, o.f[3]->handle);
	EXPECT_EQ(IBV_FLOW_ATTR_ALL_DEFAULT, e->flow_type);
	EXPECT_EQ(7, e->priority);
	EXPECT_EQ(1, e->nspecs);
	EXPECT_TRUE(e->has_tag);
	EXPECT_EQ(0, e->tag);
	e = res_find(l, o.f[4]->handle);
	EXPECT_EQ(IBV_FLOW_ATTR_SNIFFER, e->flow_type);
	EXPECT_EQ(0, e->nspecs);
	EXPECT_FALSE(e->has_tag || e->drop || e->has_counters);
	ASSERT_EQ(0, run(out, 1 << 16, "%s res show flow dev %s", svctl,
			 self->dev));
	EXPECT_EQ(5, count_lines(out, " type flow ")) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "dev %s type flow handle %u qpn %u flow_type NORMAL priority 3 flags none specs 3 tag 0x1234 drop no counters %u users 0 pid %d comm netlink_test",
		 self->dev, o.f[0]->handle, o.qp->qp_num, ch,
		 getpid());
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s\n%s", want, out);
	snprintf(want, sizeof(want), " handle %u qpn %u flow_type NORMAL priority 0 flags DONT_TRAP specs 4 drop no counters %u users 0 ",
		 o.f[1]->handle, o.qp->qp_num, ch);
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s\n%s", want, out);
	snprintf(want, sizeof(want), " handle %u qpn %u flow_type NORMAL priority 1 flags none specs 2 drop yes users 0 ",
		 o.f[2]->handle, o.qp->qp_num);
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s\n%s", want, out);
	snprintf(want, sizeof(want), " handle %u qpn %u flow_type ALL_DEFAULT priority 7 flags none specs 1 tag 0x0 drop no users 0 ",
		 o.f[3]->handle, o.qp->qp_num);
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s\n%s", want, out);
	snprintf(want, sizeof(want), " handle %u qpn %u flow_type SNIFFER priority 0 flags none specs 0 drop no users 0 ",
		 o.f[4]->handle, o.qp->qp_num);
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s\n%s", want, out);

	/* counters objects: which flows count into them */
	ASSERT_EQ(0, res_get(nl, SV_NL_RES_COUNTERS, self->dev, l));
	ASSERT_EQ(2, l->n);
	idle = res_find(l, ch);
	ASSERT_NE(NULL, idle);
	EXPECT_EQ(2, idle->usecnt);
	EXPECT_EQ(2, idle->nflows);
	EXPECT_EQ(o.f[0]->handle, idle->flows[0]);
	EXPECT_EQ(o.f[1]->handle, idle->flows[1]);
	idle = &l->e[l->e[0].handle == ch ? 1 : 0];
	EXPECT_EQ(0, idle->usecnt);
	EXPECT_EQ(0, idle->nflows);
	EXPECT_EQ((uint32_t)getpid(), idle->pid);
	ASSERT_EQ(0, run(out, 1 << 16, "%s res show counters dev %s", svctl,
			 self->dev));
	snprintf(want, sizeof(want), "dev %s type counters handle %u attached yes flows %u,%u users 2 pid %d comm netlink_test",
		 self->dev, ch, o.f[0]->handle, o.f[1]->handle,
		 getpid());
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s\n%s", want, out);
	snprintf(want, sizeof(want), " type counters handle %u attached no users 0 pid ",
		 idle->handle);
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s\n%s", want, out);
	ASSERT_EQ(0, run(out, 1 << 16, "%s -j res show counters dev %s",
			 svctl, self->dev));
	snprintf(want, sizeof(want), "\"type\":\"counters\",\"handle\":%u,\"attached\":\"yes\",\"flows\":[%u,%u],\"users\":2,",
		 ch, o.f[0]->handle, o.f[1]->handle);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s\n%s", want, out);

	/* WQs and the indirection table */
	ASSERT_EQ(0, res_get(nl, SV_NL_RES_WQ, self->dev, l));
	ASSERT_EQ(2, l->n);
	for (i = 0; i < 2; i++) {
		e = l->e[0].wqn == o.wq[i]->wq_num ? &l->e[0] : &l->e[1];
		EXPECT_EQ(o.wq[i]->wq_num, e->wqn);
		EXPECT_EQ(i ? IBV_WQS_RESET : IBV_WQS_RDY, e->wq_state);
		EXPECT_EQ(i ? 0 : IBV_WQ_FLAGS_CVLAN_STRIPPING, e->wq_flags);
		EXPECT_EQ(o.cq->handle, e->cq);
		EXPECT_EQ(1, e->usecnt);	/* the table */
	}
	ASSERT_EQ(0, res_get(nl, SV_NL_RES_RWQ_IND_TBL, self->dev, l));
	ASSERT_EQ(1, l->n);
	EXPECT_EQ(o.tbl->ind_tbl_handle, l->e[0].handle);
	EXPECT_EQ(1, l->e[0].log_size);
	ASSERT_EQ(0, run(out, 1 << 16, "%s res show dev %s", svctl,
			 self->dev));
	snprintf(want, sizeof(want), " type wq handle %u wqn %u state RDY cq %u flags CVLAN_STRIPPING users 1 pid %d ",
		 o.wq[0]->handle, o.wq[0]->wq_num, o.cq->handle, getpid());
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s\n%s", want, out);
	snprintf(want, sizeof(want), " type wq handle %u wqn %u state RESET cq %u flags none users 1 pid ",
		 o.wq[1]->handle, o.wq[1]->wq_num, o.cq->handle);
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s\n%s", want, out);
	snprintf(want, sizeof(want), " type rwq_ind_tbl handle %u size 2 log_size 1 users 0 pid %d ",
		 o.tbl->ind_tbl_handle, getpid());
	EXPECT_EQ(1, count_lines(out, want)) TH_LOG("%s\n%s", want, out);
	/* every type: PD, CQ, QP, 5 flows, 2 WQs, the table, 2 counters */
	EXPECT_EQ(13, count_lines(out, " pid ")) TH_LOG("%s", out);
	ASSERT_EQ(0, run(out, 1 << 16, "%s -j -p res show wq dev %s", svctl,
			 self->dev));
	EXPECT_NE(NULL, strstr(out, "\"state\": \"RDY\",")) TH_LOG("%s", out);

	/* a destroyed flow leaves its counters object's list */
	ASSERT_EQ(0, ibv_destroy_flow(o.f[0]));
	o.f[0] = NULL;
	ASSERT_EQ(0, res_get(nl, SV_NL_RES_COUNTERS, self->dev, l));
	e = res_find(l, ch);
	ASSERT_NE(NULL, e);
	EXPECT_EQ(1, e->usecnt);
	EXPECT_EQ(1, e->nflows);
	EXPECT_EQ(o.f[1]->handle, e->flows[0]);
	ASSERT_EQ(0, ibv_destroy_flow(o.f[1]));
	o.f[1] = NULL;
	ASSERT_EQ(0, run(out, 1 << 16, "%s -j res show counters dev %s",
			 svctl, self->dev));
	EXPECT_EQ(2, count_str(out, "\"attached\":\"no\",\"users\":0,")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "\"flows\"")) TH_LOG("%s", out);

	free_steer_objs(&o);
	ASSERT_EQ(0, run(out, 1 << 16, "%s res show dev %s", svctl,
			 self->dev));
	EXPECT_STREQ("", out);
	mnl_socket_close(nl->sock);
	free(nl);
	free(l);
	free(out);
}

/* The new types of a RES_GET dump of dev (all devices: NULL). */
static const uint8_t steer_res_types[] = {
	SV_NL_RES_FLOW, SV_NL_RES_WQ, SV_NL_RES_RWQ_IND_TBL, SV_NL_RES_COUNTERS,
};

/*
 * Flows, WQs, indirection tables and counters objects are isolated as
 * the other types are: another pid namespace sees only its own (as its
 * pids), another network namespace not even the device.
 */
TEST_F(nl, res_steering_isolation)
{
	struct steer_objs o;
	int status;
	pid_t pid;

	ASSERT_EQ(0, link_add(self));
	self->ctx = open_named(self->dev);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, make_steer_objs(self->ctx, &o));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		pid_t in;

		if (unshare(CLONE_NEWPID))
			_exit(100);
		in = fork();
		if (in < 0)
			_exit(101);
		if (in == 0) {
			struct ibv_context *ctx = open_named(self->dev);
			struct ibv_counters *mine = ctx ? counters_new(ctx) :
						    NULL;
			struct nl *nl = calloc(1, sizeof(*nl));
			struct res_list *l = calloc(1, sizeof(*l));
			char out[4096];
			unsigned int i;
			int bad = 0;

			if (getpid() != 1 || !mine || !nl || !l || nl_open(nl))
				_exit(102);
			for (i = 0; i < sizeof(steer_res_types); i++) {
				bad |= res_get(nl, steer_res_types[i],
					       self->dev, l) != 0;
				if (steer_res_types[i] != SV_NL_RES_COUNTERS)
					bad |= (l->n != 0) << 1;
				else
					bad |= (l->n != 1 || l->e[0].pid != 1)
					       << 2;
			}
			bad |= (run(out, sizeof(out), "%s res show dev %s",
				    svctl, self->dev) != 0) << 3;
			bad |= (count_lines(out, "") != 1 ||
				count_lines(out, " type counters ") != 1 ||
				count_lines(out, " attached no users 0 pid 1 comm netlink_test") != 1) << 4;
			if (bad)
				fprintf(stderr, "pid 1: %#x\n%s", bad, out);
			_exit(bad);
		}
		if (waitpid(in, &status, 0) != in || !WIFEXITED(status))
			_exit(103);
		_exit(WEXITSTATUS(status));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* The initial network namespace has no such device. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = open("/proc/1/ns/net", O_RDONLY);
		struct nl *nl = calloc(1, sizeof(*nl));
		struct res_list *l = calloc(1, sizeof(*l));
		unsigned int i;
		int bad = 0, j;

		if (fd < 0 || setns(fd, CLONE_NEWNET) || !nl || !l ||
		    nl_open(nl))
			_exit(100);
		for (i = 0; i < sizeof(steer_res_types); i++) {
			bad |= (res_get(nl, steer_res_types[i], self->dev, l) !=
				-ENODEV) << 1;
			bad |= res_get(nl, steer_res_types[i], NULL, l) << 2;
			for (j = 0; j < l->n; j++)
				bad |= !strcmp(l->e[j].dev, self->dev) << 3;
		}
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	free_steer_objs(&o);
}

/* One counter of a device by STAT_GET; -1 if absent, or the -errno. */
struct stat_want {
	const char *name;
	long long value;
};

static int stat_cb(const struct nlmsghdr *nlh, void *data)
{
	struct stat_want *w = ((struct nl *)data)->priv;
	const struct nlattr *a, *entry, *x;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) != SV_NL_ATTR_STATS)
			continue;
		mnl_attr_for_each_nested(entry, a) {
			const char *name = NULL;
			uint64_t v = 0;

			mnl_attr_for_each_nested(x, entry) {
				if (mnl_attr_get_type(x) == SV_NL_ATTR_STAT_NAME)
					name = mnl_attr_get_str(x);
				else if (mnl_attr_get_type(x) ==
					 SV_NL_ATTR_STAT_VALUE)
					v = mnl_attr_get_u64(x);
			}
			if (name && !strcmp(name, w->name))
				w->value = v;
		}
	}
	return MNL_CB_OK;
}

static long long stat_get(struct nl *nl, const char *dev, const char *name)
{
	struct stat_want w = { .name = name, .value = -1 };
	struct nlmsghdr *nlh;
	int ret;

	nl->priv = &w;
	nlh = nl_start(nl, nl->family, SV_NL_CMD_STAT_GET, 0);
	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, dev);
	ret = nl_talk(nl, nlh, stat_cb);
	return ret ? ret : w.value;
}

/* A frame from @src to @dst of ETYPE, @len bytes in all. */
static void steer_frame(uint8_t *f, const uint8_t dst[6], uint8_t src,
			size_t len)
{
	memset(f, src, len);
	memcpy(f, dst, 6);
	memcpy(f + 6, (uint8_t[6]){ 0x02, 0x5e, 0, 0, 0, src }, 6);
	f[12] = ETYPE >> 8;
	f[13] = ETYPE & 0xff;
}

/*
 * The steering counters, exactly, for frames sent from the far side of
 * the veth pair (moved to a namespace of its own, without IPv6, so that
 * nothing else crosses it): four rules on two RAW_PACKET QPs, by source
 * MAC: A traps to a ready QP, B copies (DONT_TRAP) to it, C drops, E
 * traps to a QP still in INIT (it cannot take the frame); D has no rule.
 */
TEST_F(nl, steering_counters)
{
	enum { A = 0xa, B = 0xb, C = 0xc, D = 0xd, E = 0xe, LEN = 100 };
	static const struct { uint8_t src; int n; } sends[] = {
		{ D, 4 }, { C, 3 }, { E, 1 }, { B, 2 }, { A, 3 },
	};
	static const struct { const char *name; long long v; } want[] = {
		{ "steering_hits", 3 + 2 + 1 },		/* A, B, E */
		{ "steering_drops", 3 },		/* C */
		{ "steering_misses", 4 },		/* D */
		{ "steering_matched", 3 + 2 + 3 + 1 },	/* all but D */
		{ "steering_trapped", 3 + 3 + 1 },	/* A, C, E */
		{ "steering_passed", 2 + 4 },		/* B, D */
		{ "steering_copies", 2 },		/* B */
		{ "rx_raw_drops", 1 },			/* E */
		{ "rx_raw_queue_drops", 0 },
		{ "rx_packets", 5 },			/* A, B */
		{ "rx_bytes", 5 * LEN },
		{ "completions", 5 },
	};
	uint8_t mac[6], frame[LEN];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_halen = 6 };
	struct ibv_flow *fl[4];
	struct ibv_qp *q1, *q2;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	struct ifreq ifr = {};
	struct spec_attr a;
	char ns[32], macs[32];
	long long total = 0;
	struct nl *nl;
	unsigned int i;
	int s, n, got, status;
	char *buf;
	pid_t pid;

	snprintf(ns, sizeof(ns), "svnl%d", getpid());
	ASSERT_EQ(0, SH("ip netns add %s && ip link set %s netns %s", ns,
			self->vb, ns));
	ASSERT_EQ(0, SH("sysctl -qw net.ipv6.conf.%s.disable_ipv6=1 && "
			"ip netns exec %s sysctl -qw net.ipv6.conf.%s.disable_ipv6=1",
			self->va, ns, self->vb));
	ASSERT_EQ(0, link_add(self));
	ASSERT_EQ(0, read_mac(self->va, macs));
	ASSERT_EQ(6, sscanf(macs, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0],
			    &mac[1], &mac[2], &mac[3], &mac[4], &mac[5]));
	nl = calloc(1, sizeof(*nl));
	ASSERT_NE(NULL, nl);
	ASSERT_EQ(0, nl_open(nl));

	self->ctx = open_named(self->dev);
	ASSERT_NE(NULL, self->ctx);
	pd = ibv_alloc_pd(self->ctx);
	cq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, pd);
	ASSERT_NE(NULL, cq);
	buf = aligned_alloc(4096, 16 * 2048);
	ASSERT_NE(NULL, buf);
	mr = ibv_reg_mr(pd, buf, 16 * 2048, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	q1 = raw_qp(pd, cq, IBV_QPS_RTS);
	q2 = raw_qp(pd, cq, IBV_QPS_INIT);
	ASSERT_NE(NULL, q1);
	ASSERT_NE(NULL, q2);
	for (i = 0; i < 16; i++) {
		struct ibv_sge sg = { (uintptr_t)buf + i * 2048, 2048,
				      mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sg,
					  .num_sge = 1 }, *bad;

		ASSERT_EQ(0, ibv_post_recv(q1, &wr, &bad));
	}
	for (i = 0; i < 4; i++) {
		static const uint8_t srcs[] = { A, B, C, E };
		uint8_t src[6] = { 0x02, 0x5e, 0, 0, 0, srcs[i] };

		fa_init(&a, IBV_FLOW_ATTR_NORMAL, 0,
			srcs[i] == B ? IBV_FLOW_ATTR_FLAGS_DONT_TRAP : 0);
		fa_eth_src(&a, mac, src, ETYPE);
		if (srcs[i] == C)
			fa_drop(&a);
		fl[i] = ibv_create_flow(srcs[i] == E ? q2 : q1, &a.attr);
		ASSERT_NE(NULL, fl[i]);
	}
	/* Before the link is up, nothing has been counted. */
	EXPECT_EQ(0, stat_get(nl, self->dev, "steering_hits"));
	EXPECT_EQ(0, stat_get(nl, self->dev, "steering_passed"));
	ASSERT_EQ(0, SH("ip link set %s up && ip -n %s link set %s up",
			self->va, ns, self->vb));

	s = sv_ns_socket(ns, AF_PACKET, SOCK_RAW, htons(ETYPE));
	ASSERT_LE(0, s);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", self->vb);
	ASSERT_EQ(0, ioctl(s, SIOCGIFINDEX, &ifr));
	sll.sll_ifindex = ifr.ifr_ifindex;
	/* The far end may take a moment to be running (its carrier). */
	for (i = 0; i < 500; i++) {
		ASSERT_EQ(0, ioctl(s, SIOCGIFFLAGS, &ifr));
		if (ifr.ifr_flags & IFF_RUNNING)
			break;
		usleep(10000);
	}
	for (i = 0; i < sizeof(sends) / sizeof(sends[0]); i++) {
		steer_frame(frame, mac, sends[i].src, LEN);
		for (n = 0; n < sends[i].n; n++)
			ASSERT_EQ(LEN, sendto(s, frame, LEN, 0,
					      (struct sockaddr *)&sll,
					      sizeof(sll)));
	}
	close(s);
	/* A's and B's frames reach q1; they were sent last. */
	for (got = 0, i = 0; got < 5 && i < 5000; i++) {
		n = ibv_poll_cq(cq, 1, &wc);
		ASSERT_LE(0, n);
		if (!n) {
			usleep(1000);
			continue;
		}
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(LEN, wc.byte_len);
		EXPECT_EQ(q1->qp_num, wc.qp_num);
		got++;
	}
	ASSERT_EQ(5, got);
	for (i = 0; i < 500 && total < 13; i++) {
		total = stat_get(nl, self->dev, "steering_hits") +
			stat_get(nl, self->dev, "steering_drops") +
			stat_get(nl, self->dev, "steering_misses");
		usleep(10000);
	}
	EXPECT_EQ(13, total);
	usleep(100000);		/* anything more would show now */
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		EXPECT_EQ(want[i].v, stat_get(nl, self->dev, want[i].name))
			TH_LOG("%s", want[i].name);

	/* The far side's namespace does not see the device at all. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char path[64], names[4096], dev[48];
		struct nl *fnl = calloc(1, sizeof(*fnl));
		struct nlmsghdr *nlh;
		int fd, bad = 0;

		snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
		fd = open(path, O_RDONLY);
		if (fd < 0 || setns(fd, CLONE_NEWNET) || !fnl || nl_open(fnl))
			_exit(100);
		bad |= stat_get(fnl, self->dev, "steering_hits") != -ENODEV;
		bad |= strcmp(fnl->msg, "No softverbs device of that name") << 1;
		snprintf(dev, sizeof(dev), " %s ", self->dev);
		bad |= (dump_names(fnl, SV_NL_CMD_STAT_GET, names) ||
			strstr(names, dev)) << 2;
		nlh = nl_start(fnl, fnl->family, SV_NL_CMD_RES_GET,
			       NLM_F_DUMP);
		mnl_attr_put_u8(nlh, SV_NL_ATTR_RES_TYPE, SV_NL_RES_FLOW);
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, self->dev);
		bad |= (nl_talk(fnl, nlh, NULL) != -ENODEV) << 3;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, ibv_destroy_flow(fl[i]));
	EXPECT_EQ(0, ibv_destroy_qp(q1));
	EXPECT_EQ(0, ibv_destroy_qp(q2));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
	free(buf);
	mnl_socket_close(nl->sock);
	free(nl);
	EXPECT_EQ(0, SH("ip netns del %s", ns));
}

TEST_HARNESS_MAIN
