// SPDX-License-Identifier: GPL-2.0
/*
 * The connection manager's ABI (uapi/softverbs-cm.h), through raw ioctls
 * on /dev/infiniband/softverbs_cm, in a network namespace of the test's
 * own: a dummy netdev with 10.77.0.1/24 and a softverbs device on it, so
 * that connections take the local path (MADs between two ids of one
 * device). Bad arguments get their errno and leave nothing behind; a
 * whole connection is driven by hand (REQ, REJ, REP, RTU, DREQ, DREP)
 * and the two ends' QP attributes are checked against each other; ids
 * are private to their channel; a channel closed, or a device removed,
 * tells the other end.
 */
#include <poll.h>
#include <time.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "sv_harness.h"
#include "sv_test.h"
#include "softverbs-cm.h"

#define CM_DEV	SV_DEV_DIR "/" SV_CM_DEV_NAME
#define CM_IP	"10.77.0.1"

static int cm_open(void)
{
	return open(CM_DEV, O_RDWR | O_CLOEXEC);
}

static int cm_create(int fd, __u32 ps, __u32 qpt, __u64 uid)
{
	struct sv_cm_create_id c = { .size = sizeof(c), .ps = ps,
				     .qp_type = qpt, .uid = uid };

	return ioctl(fd, SV_CM_IOC_CREATE_ID, &c) ? -errno : (int)c.id;
}

static void in4(struct __kernel_sockaddr_storage *ss, const char *ip,
		int port)
{
	struct sockaddr_in *s = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	s->sin_family = AF_INET;
	s->sin_port = htons(port);
	inet_pton(AF_INET, ip, &s->sin_addr);
}

static int cm_bind(int fd, __u32 id, const char *ip, int port)
{
	struct sv_cm_bind c = { .size = sizeof(c), .id = id };

	in4(&c.addr, ip, port);
	return ioctl(fd, SV_CM_IOC_BIND, &c) ? -errno : 0;
}

/* The next event, waiting up to 10 s; -errno if none. */
static int cm_event(int fd, struct sv_cm_get_event *e)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 10000 * sv_slow()) != 1)
		return -ETIMEDOUT;
	memset(e, 0, sizeof(*e));
	e->size = sizeof(*e);
	return ioctl(fd, SV_CM_IOC_GET_EVENT, e) ? -errno : 0;
}

/* Resolve and route id to ip:port; 0 once ROUTE_RESOLVED came. */
static int cm_route_to(int fd, __u32 id, const char *ip, int port)
{
	struct sv_cm_resolve_addr ra = { .size = sizeof(ra), .id = id };
	struct sv_cm_resolve_route rr = { .size = sizeof(rr), .id = id };
	struct sv_cm_get_event e;

	in4(&ra.dst, ip, port);
	if (ioctl(fd, SV_CM_IOC_RESOLVE_ADDR, &ra) || cm_event(fd, &e) ||
	    e.event != SV_CM_EVENT_ADDR_RESOLVED)
		return -1;
	if (ioctl(fd, SV_CM_IOC_RESOLVE_ROUTE, &rr) || cm_event(fd, &e) ||
	    e.event != SV_CM_EVENT_ROUTE_RESOLVED)
		return -1;
	return 0;
}

static int cm_route(int fd, __u32 id, int port)
{
	return cm_route_to(fd, id, CM_IP, port);
}

static int cm_connect(int fd, __u32 id, __u32 qpn)
{
	struct sv_cm_connect c = { .size = sizeof(c), .id = id };

	c.param.qp_num = qpn;
	c.param.responder_resources = 4;
	c.param.initiator_depth = 4;
	c.param.retry_count = 7;
	c.param.rnr_retry_count = 7;
	c.param.private_data_len = 5;
	memcpy(c.param.private_data, "hello", 5);
	return ioctl(fd, SV_CM_IOC_CONNECT, &c) ? -errno : 0;
}

/*
 * Connect the routed id a of channel c to the listener of channel s: the
 * request accepted (uid 9, QPN 0x20), established on both ends. 0, or
 * the step that failed.
 */
static int cm_establish(int s, int c, __u32 a)
{
	struct sv_cm_accept acc = { .size = sizeof(acc), .uid = 9 };
	struct sv_cm_establish est = { .size = sizeof(est), .id = a };
	struct sv_cm_get_event e;

	if (cm_connect(c, a, 0x10) || cm_event(s, &e) ||
	    e.event != SV_CM_EVENT_CONNECT_REQUEST)
		return -1;
	acc.id = e.id;
	acc.param.qp_num = 0x20;
	if (ioctl(s, SV_CM_IOC_ACCEPT, &acc) || cm_event(c, &e) ||
	    e.event != SV_CM_EVENT_CONNECT_RESPONSE)
		return -2;
	if (ioctl(c, SV_CM_IOC_ESTABLISH, &est) || cm_event(s, &e) ||
	    e.event != SV_CM_EVENT_ESTABLISHED)
		return -3;
	return 0;
}

static int cm_listen(int fd, __u32 id, int port)
{
	struct sv_cm_listen l = { .size = sizeof(l), .id = id, .backlog = 4 };

	if (cm_bind(fd, id, "0.0.0.0", port))
		return -1;
	return ioctl(fd, SV_CM_IOC_LISTEN, &l) ? -errno : 0;
}

static int cm_qp_attr(int fd, __u32 id, __u32 state,
		      struct sv_cm_init_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->id = id;
	a->qp_state = state;
	return ioctl(fd, SV_CM_IOC_INIT_QP_ATTR, a) ? -errno : 0;
}

FIXTURE(chan) {
	int s, c;		/* the server's and the client's channels */
};

FIXTURE_SETUP(chan)
{
	char svctl[PATH_MAX + 256];

	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	snprintf(svctl, sizeof(svctl),
		 "set -e; ip link set lo up; ip link add d0 type dummy; "
		 "ip addr add " CM_IP "/24 dev d0; ip link set d0 up; "
		 "%s/../bin/svctl link add svcm0 netdev d0", sv_compat_dir());
	ASSERT_EQ(0, system(svctl));
	self->s = cm_open();
	self->c = cm_open();
	ASSERT_LE(0, self->s);
	ASSERT_LE(0, self->c);
}

FIXTURE_TEARDOWN(chan)
{
	char svctl[PATH_MAX + 256];

	close(self->s);
	close(self->c);
	snprintf(svctl, sizeof(svctl), "%s/../bin/svctl link del svcm0",
		 sv_compat_dir());
	if (system(svctl))
		TH_LOG("link del failed");
}

/* The ioctl frame: sizes, reserved fields, unknown commands and ids. */
TEST_F(chan, abi)
{
	struct {
		struct sv_cm_create_id c;
		__u64 extra;
	} big = { .c = { .size = sizeof(big), .ps = SV_CM_PS_TCP,
			 .qp_type = SV_QPT_RC }, .extra = 1 };
	struct sv_cm_destroy_id d = { .size = sizeof(d) };
	struct sv_cm_create_id c = { .size = 4 };
	struct sv_cm_get_event e = { .size = sizeof(e) };
	int id;

	EXPECT_EQ(-1, ioctl(self->s, _IOWR(SV_IOC_MAGIC, 0x3f, __u32), &c));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_CREATE_ID, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_CREATE_ID, &big));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(-EINVAL, cm_create(self->s, 0x1234, SV_QPT_RC, 0));
	EXPECT_EQ(-EINVAL, cm_create(self->s, SV_CM_PS_UDP, SV_QPT_RC, 0));
	EXPECT_EQ(-EINVAL, cm_create(self->s, SV_CM_PS_TCP, 99, 0));
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_GET_EVENT, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	d.id = 77;
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_DESTROY_ID, &d));
	EXPECT_EQ(ENOENT, errno);
	id = cm_create(self->s, SV_CM_PS_TCP, SV_QPT_RC, 42);
	ASSERT_LT(0, id);
	/* Another channel's id is no id of this one. */
	d.id = id;
	EXPECT_EQ(-1, ioctl(self->c, SV_CM_IOC_DESTROY_ID, &d));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-ENOENT, cm_bind(self->c, id, CM_IP, 0));
	d.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_DESTROY_ID, &d));
	EXPECT_EQ(EINVAL, errno);
	d.reserved = 0;
	EXPECT_EQ(0, ioctl(self->s, SV_CM_IOC_DESTROY_ID, &d));
	EXPECT_EQ(0u, d.events_reported);
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_DESTROY_ID, &d));
	EXPECT_EQ(ENOENT, errno);
	/* No event: a nonblocking read says so, poll says nothing. */
	fcntl(self->s, F_SETFL, O_NONBLOCK);
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_GET_EVENT, &e));
	EXPECT_EQ(EAGAIN, errno);
}

/* Addresses and ports: each refusal with its errno. */
TEST_F(chan, bind)
{
	struct sv_cm_bind b = { .size = sizeof(b) };
	struct sv_cm_query q = { .size = sizeof(q) };
	int a = cm_create(self->s, SV_CM_PS_TCP, SV_QPT_RC, 1);
	int x = cm_create(self->s, SV_CM_PS_TCP, SV_QPT_RC, 2);
	int u = cm_create(self->s, SV_CM_PS_UDP, SV_QPT_UD, 3);
	int low, high, port;
	FILE *f;

	ASSERT_LT(0, a);
	ASSERT_LT(0, x);
	ASSERT_LT(0, u);
	b.id = a;
	b.addr.ss_family = AF_UNIX;
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_BIND, &b));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	EXPECT_EQ(-EADDRNOTAVAIL, cm_bind(self->s, a, "192.0.2.99", 0));
	/* The namespace's, but no softverbs device's. */
	ASSERT_EQ(0, system("ip addr add 192.0.2.55/32 dev lo"));
	EXPECT_EQ(-ENODEV, cm_bind(self->s, a, "192.0.2.55", 0));
	/* Port 0: one of the local port range, on the device. */
	ASSERT_EQ(0, cm_bind(self->s, a, CM_IP, 0));
	EXPECT_EQ(-EINVAL, cm_bind(self->s, a, CM_IP, 0));
	q.id = a;
	ASSERT_EQ(0, ioctl(self->s, SV_CM_IOC_QUERY, &q));
	port = ntohs(((struct sockaddr_in *)&q.src)->sin_port);
	f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(2, fscanf(f, "%d %d", &low, &high));
	fclose(f);
	EXPECT_LE(low, port);
	EXPECT_GE(high, port);
	EXPECT_STREQ("svcm0", q.dev_name);
	EXPECT_EQ(1u, q.port_num);
	/* The same port and an overlapping address: taken. */
	EXPECT_EQ(-EADDRINUSE, cm_bind(self->s, x, "0.0.0.0", port));
	/* Another port space has its own ports. */
	EXPECT_EQ(0, cm_bind(self->s, u, CM_IP, port));
	/* A privileged port needs CAP_NET_BIND_SERVICE. */
	if (!fork()) {
		if (setuid(65534))
			_exit(1);
		_exit(cm_bind(self->s, x, CM_IP, 999) == -EACCES ? 0 : 2);
	}
	{
		int st;

		wait(&st);
		EXPECT_EQ(0, WEXITSTATUS(st));
	}
	EXPECT_EQ(0, cm_bind(self->s, x, CM_IP, 999));
}

/* Resolution: events for the network's answers, errno for the caller's. */
TEST_F(chan, resolve)
{
	struct sv_cm_resolve_addr ra = { .size = sizeof(ra) };
	struct sv_cm_resolve_route rr = { .size = sizeof(rr) };
	int a = cm_create(self->s, SV_CM_PS_TCP, SV_QPT_RC, 7);
	struct sv_cm_init_qp_attr qa;
	struct sv_cm_get_event e;

	ASSERT_LT(0, a);
	ra.id = a;
	rr.id = a;
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_RESOLVE_ROUTE, &rr));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, cm_connect(self->s, a, 5));
	/* A destination with no route: ADDR_ERROR, status ENETUNREACH. */
	in4(&ra.dst, "203.0.113.9", 1);
	ASSERT_EQ(0, ioctl(self->s, SV_CM_IOC_RESOLVE_ADDR, &ra));
	ASSERT_EQ(0, cm_event(self->s, &e));
	EXPECT_EQ(SV_CM_EVENT_ADDR_ERROR, e.event);
	EXPECT_EQ(-ENETUNREACH, e.status);
	EXPECT_EQ(7u, e.uid);
	in4(&ra.dst, CM_IP, 1);
	ra.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_RESOLVE_ADDR, &ra));
	EXPECT_EQ(EINVAL, errno);
	ra.reserved = 0;
	ASSERT_EQ(0, ioctl(self->s, SV_CM_IOC_RESOLVE_ADDR, &ra));
	ASSERT_EQ(0, cm_event(self->s, &e));
	EXPECT_EQ(SV_CM_EVENT_ADDR_RESOLVED, e.event);
	EXPECT_EQ(0, e.status);
	/* Not connected: INIT's attributes only. */
	EXPECT_EQ(0, cm_qp_attr(self->s, a, SV_QPS_INIT, &qa));
	EXPECT_EQ(0u, qa.attr.qp_access_flags);
	EXPECT_EQ(-EINVAL, cm_qp_attr(self->s, a, SV_QPS_RTR, &qa));
	EXPECT_EQ(-EINVAL, cm_qp_attr(self->s, a, 42, &qa));
	ASSERT_EQ(0, ioctl(self->s, SV_CM_IOC_RESOLVE_ROUTE, &rr));
	ASSERT_EQ(0, cm_event(self->s, &e));
	EXPECT_EQ(SV_CM_EVENT_ROUTE_RESOLVED, e.event);
	/* Nobody listens on port 1: REJECTED, invalid service ID (8). */
	ASSERT_EQ(0, cm_connect(self->s, a, 5));
	ASSERT_EQ(0, cm_event(self->s, &e));
	EXPECT_EQ(SV_CM_EVENT_REJECTED, e.event);
	EXPECT_EQ(8, e.status);
}

/*
 * A loopback address, as the kernel's rdma_cm takes one: bound and
 * listened on as the wildcard (no device; a request to any address
 * reaches the listener), and as a destination (or the wildcard)
 * resolved to the namespace's device, from 127.0.0.1, whose route then
 * fails with ENODEV (a RoCE path needs a netdev).
 */
TEST_F(chan, loopback)
{
	struct sv_cm_resolve_addr ra = { .size = sizeof(ra) };
	struct sv_cm_resolve_route rr = { .size = sizeof(rr) };
	struct sv_cm_listen lis = { .size = sizeof(lis), .backlog = 4 };
	struct sv_cm_query q = { .size = sizeof(q) };
	int l = cm_create(self->s, SV_CM_PS_TCP, SV_QPT_RC, 1);
	int x = cm_create(self->s, SV_CM_PS_TCP, SV_QPT_RC, 2);
	int a = cm_create(self->c, SV_CM_PS_TCP, SV_QPT_RC, 3);
	const char *dsts[] = { "127.0.0.1", "127.1.2.3", "0.0.0.0" };
	struct sv_cm_get_event e;
	unsigned int i;

	ASSERT_LT(0, l);
	ASSERT_LT(0, x);
	ASSERT_LT(0, a);
	ASSERT_EQ(0, cm_bind(self->s, l, "127.0.0.1", 18950));
	q.id = l;
	ASSERT_EQ(0, ioctl(self->s, SV_CM_IOC_QUERY, &q));
	EXPECT_STREQ("", q.dev_name);
	EXPECT_EQ(htonl(INADDR_LOOPBACK),
		  ((struct sockaddr_in *)&q.src)->sin_addr.s_addr);
	/* As the wildcard, it overlaps the device's address. */
	EXPECT_EQ(-EADDRINUSE, cm_bind(self->s, x, CM_IP, 18950));
	lis.id = l;
	ASSERT_EQ(0, ioctl(self->s, SV_CM_IOC_LISTEN, &lis));
	ASSERT_EQ(0, cm_route(self->c, a, 18950));
	ASSERT_EQ(0, cm_establish(self->s, self->c, a));

	for (i = 0; i < sizeof(dsts) / sizeof(dsts[0]); i++) {
		int r = cm_create(self->c, SV_CM_PS_TCP, SV_QPT_RC, 10 + i);

		ASSERT_LT(0, r);
		ra.id = r;
		in4(&ra.dst, dsts[i], 18950);
		ASSERT_EQ(0, ioctl(self->c, SV_CM_IOC_RESOLVE_ADDR, &ra));
		ASSERT_EQ(0, cm_event(self->c, &e));
		EXPECT_EQ(SV_CM_EVENT_ADDR_RESOLVED, e.event);
		EXPECT_EQ(0, e.status);
		q.id = r;
		ASSERT_EQ(0, ioctl(self->c, SV_CM_IOC_QUERY, &q));
		EXPECT_STREQ("svcm0", q.dev_name);
		EXPECT_EQ(htonl(INADDR_LOOPBACK),
			  ((struct sockaddr_in *)&q.src)->sin_addr.s_addr);
		rr.id = r;
		EXPECT_EQ(-1, ioctl(self->c, SV_CM_IOC_RESOLVE_ROUTE, &rr));
		EXPECT_EQ(ENODEV, errno);
		EXPECT_EQ(-EINVAL, cm_connect(self->c, r, 5));
	}
}

/*
 * A connection by hand: rejected once (consumer defined, with private
 * data), then accepted; the QP attributes of both ends agree; the client
 * disconnects and both hear of it.
 */
TEST_F(chan, connect)
{
	int l = cm_create(self->s, SV_CM_PS_TCP, SV_QPT_RC, 100);
	int a = cm_create(self->c, SV_CM_PS_TCP, SV_QPT_RC, 200);
	struct sv_cm_reject rej = { .size = sizeof(rej) };
	struct sv_cm_accept acc = { .size = sizeof(acc), .uid = 101 };
	struct sv_cm_establish est = { .size = sizeof(est) };
	struct sv_cm_disconnect dis = { .size = sizeof(dis) };
	struct sv_cm_init_qp_attr sa, ca;
	struct sv_cm_get_event e;
	__u32 child;

	ASSERT_LT(0, l);
	ASSERT_LT(0, a);
	ASSERT_EQ(0, cm_listen(self->s, l, 18900));
	ASSERT_EQ(0, cm_route(self->c, a, 18900));
	ASSERT_EQ(0, cm_connect(self->c, a, 0x111));
	ASSERT_EQ(0, cm_event(self->s, &e));
	ASSERT_EQ(SV_CM_EVENT_CONNECT_REQUEST, e.event);
	EXPECT_EQ(100u, e.uid);
	EXPECT_EQ(100u, e.listen_uid);
	EXPECT_EQ(0x111u, e.param.qp_num);
	EXPECT_EQ(56, e.param.private_data_len);
	EXPECT_EQ(0, memcmp(e.param.private_data, "hello", 5));
	EXPECT_EQ(4, e.param.responder_resources);
	child = e.id;
	rej.id = child;
	rej.private_data_len = 3;
	memcpy(rej.private_data, "no!", 3);
	rej.reserved[1] = 1;
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_REJECT, &rej));
	EXPECT_EQ(EINVAL, errno);
	rej.reserved[1] = 0;
	ASSERT_EQ(0, ioctl(self->s, SV_CM_IOC_REJECT, &rej));
	ASSERT_EQ(0, cm_event(self->c, &e));
	EXPECT_EQ(SV_CM_EVENT_REJECTED, e.event);
	EXPECT_EQ(28, e.status);
	EXPECT_EQ(0, memcmp(e.param.private_data, "no!", 3));
	/* Rejected is final: no accept, no second reject. */
	acc.id = child;
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_ACCEPT, &acc));
	EXPECT_EQ(EINVAL, errno);

	/* Again, with a new id, and accepted. */
	a = cm_create(self->c, SV_CM_PS_TCP, SV_QPT_RC, 201);
	ASSERT_LT(0, a);
	ASSERT_EQ(0, cm_route(self->c, a, 18900));
	ASSERT_EQ(0, cm_connect(self->c, a, 0x222));
	EXPECT_EQ(-EINVAL, cm_connect(self->c, a, 0x222));
	ASSERT_EQ(0, cm_event(self->s, &e));
	ASSERT_EQ(SV_CM_EVENT_CONNECT_REQUEST, e.event);
	child = e.id;
	acc.id = child;
	acc.param.qp_num = 0x333;
	acc.param.responder_resources = 2;
	acc.param.initiator_depth = 3;
	acc.param.rnr_retry_count = 8;		/* > 7 */
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_ACCEPT, &acc));
	EXPECT_EQ(EINVAL, errno);
	acc.param.rnr_retry_count = 6;
	acc.param.private_data_len = 197;	/* > a REP's 196 */
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_ACCEPT, &acc));
	EXPECT_EQ(EINVAL, errno);
	acc.param.private_data_len = 2;
	memcpy(acc.param.private_data, "ok", 2);
	ASSERT_EQ(0, ioctl(self->s, SV_CM_IOC_ACCEPT, &acc));
	ASSERT_EQ(0, cm_event(self->c, &e));
	ASSERT_EQ(SV_CM_EVENT_CONNECT_RESPONSE, e.event);
	EXPECT_EQ(200u + 1, e.uid);
	EXPECT_EQ(0x333u, e.param.qp_num);
	EXPECT_EQ(0, memcmp(e.param.private_data, "ok", 2));
	EXPECT_EQ(6, e.param.rnr_retry_count);

	/* Each end's RTR expects what the other's RTS sends. */
	ASSERT_EQ(0, cm_qp_attr(self->s, child, SV_QPS_RTR, &sa));
	ASSERT_EQ(0, cm_qp_attr(self->c, a, SV_QPS_RTS, &ca));
	EXPECT_EQ(0x222u, sa.attr.dest_qp_num);
	EXPECT_EQ(sa.attr.rq_psn, ca.attr.sq_psn);
	EXPECT_EQ(2, sa.attr.max_dest_rd_atomic);
	EXPECT_EQ(2, ca.attr.max_rd_atomic);	/* the peer's resources */
	EXPECT_EQ(6, ca.attr.rnr_retry);
	EXPECT_EQ(7, ca.attr.retry_cnt);
	ASSERT_EQ(0, cm_qp_attr(self->c, a, SV_QPS_RTR, &ca));
	ASSERT_EQ(0, cm_qp_attr(self->s, child, SV_QPS_RTS, &sa));
	EXPECT_EQ(0x333u, ca.attr.dest_qp_num);
	EXPECT_EQ(ca.attr.rq_psn, sa.attr.sq_psn);
	EXPECT_EQ(3, ca.attr.max_dest_rd_atomic);
	EXPECT_EQ(1, ca.attr.ah_attr.is_global);
	ASSERT_EQ(0, cm_qp_attr(self->c, a, SV_QPS_INIT, &ca));
	EXPECT_EQ(SV_ACCESS_REMOTE_WRITE | SV_ACCESS_REMOTE_READ |
		  SV_ACCESS_REMOTE_ATOMIC, ca.attr.qp_access_flags);

	est.id = a;
	ASSERT_EQ(0, ioctl(self->c, SV_CM_IOC_ESTABLISH, &est));
	EXPECT_EQ(-1, ioctl(self->c, SV_CM_IOC_ESTABLISH, &est));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, cm_event(self->s, &e));
	EXPECT_EQ(SV_CM_EVENT_ESTABLISHED, e.event);
	EXPECT_EQ(101u, e.uid);

	dis.id = a;
	ASSERT_EQ(0, ioctl(self->c, SV_CM_IOC_DISCONNECT, &dis));
	ASSERT_EQ(0, cm_event(self->s, &e));
	EXPECT_EQ(SV_CM_EVENT_DISCONNECTED, e.event);
	EXPECT_EQ(101u, e.uid);
	ASSERT_EQ(0, cm_event(self->c, &e));
	EXPECT_EQ(SV_CM_EVENT_DISCONNECTED, e.event);
	EXPECT_EQ(201u, e.uid);
	/* Once is enough: again is a no-op. */
	EXPECT_EQ(0, ioctl(self->c, SV_CM_IOC_DISCONNECT, &dis));
}

/* What dies tells the other end: a channel closed, a device removed. */
TEST_F(chan, death)
{
	int l = cm_create(self->s, SV_CM_PS_TCP, SV_QPT_RC, 1);
	int a = cm_create(self->c, SV_CM_PS_TCP, SV_QPT_RC, 2);
	int b = cm_create(self->c, SV_CM_PS_TCP, SV_QPT_RC, 3);
	char svctl[PATH_MAX + 256];
	struct sv_cm_get_event e;
	int i, seen = 0;

	ASSERT_LT(0, l);
	ASSERT_LT(0, a);
	ASSERT_LT(0, b);
	ASSERT_EQ(0, cm_listen(self->s, l, 18901));
	ASSERT_EQ(0, cm_route(self->c, a, 18901));
	ASSERT_EQ(0, cm_route(self->c, b, 18901));
	ASSERT_EQ(0, cm_establish(self->s, self->c, a));
	/* b's request stays unread by the server. */
	ASSERT_EQ(0, cm_connect(self->c, b, 0x11));
	usleep(200000);

	/* The server goes: a is disconnected, b rejected (in any order). */
	close(self->s);
	self->s = cm_open();
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, cm_event(self->c, &e));
		if (e.uid == 2) {
			EXPECT_EQ(SV_CM_EVENT_DISCONNECTED, e.event);
			seen |= 1;
		} else {
			EXPECT_EQ(3u, e.uid);
			EXPECT_EQ(SV_CM_EVENT_REJECTED, e.event);
			EXPECT_EQ(28, e.status);
			seen |= 2;
		}
	}
	EXPECT_EQ(3, seen);

	/* The device goes: its ids hear DEVICE_REMOVAL. */
	snprintf(svctl, sizeof(svctl), "%s/../bin/svctl link del svcm0",
		 sv_compat_dir());
	ASSERT_EQ(0, system(svctl));
	ASSERT_EQ(0, cm_event(self->c, &e));
	EXPECT_EQ(SV_CM_EVENT_DEVICE_REMOVAL, e.event);
	ASSERT_EQ(0, cm_event(self->c, &e));
	EXPECT_EQ(SV_CM_EVENT_DEVICE_REMOVAL, e.event);
	EXPECT_EQ(-EINVAL, cm_connect(self->c, a, 1));
	snprintf(svctl, sizeof(svctl), "%s/../bin/svctl link add svcm0 "
		 "netdev d0", sv_compat_dir());
	ASSERT_EQ(0, system(svctl));
}

/* A SIDR REQ of UD id @id (routed) for qpn, with 3 bytes of data. */
static int cm_sidr(int fd, __u32 id, __u32 qpn)
{
	struct sv_cm_connect c = { .size = sizeof(c), .id = id };

	c.param.qp_num = qpn;
	c.param.private_data_len = 3;
	memcpy(c.param.private_data, "udp", 3);
	return ioctl(fd, SV_CM_IOC_CONNECT, &c) ? -errno : 0;
}

/*
 * UD ids: SIDR to no listener (status 1, invalid service), to an RC
 * listener of the port (1 too), rejected (2, with the private data),
 * accepted (ESTABLISHED: the QP number and RDMA_UDP_QKEY); what an
 * accepted UD id does not do.
 */
TEST_F(chan, sidr)
{
	struct sv_cm_accept acc = { .size = sizeof(acc) };
	struct sv_cm_reject rej = { .size = sizeof(rej) };
	struct sv_cm_init_qp_attr a;
	struct sv_cm_get_event e;
	int lis, rc_lis, cl, child;

	/* Nobody listens on 7400: UNREACHABLE, SIDR status 1. */
	cl = cm_create(self->c, SV_CM_PS_UDP, SV_QPT_UD, 1);
	ASSERT_LT(0, cl);
	ASSERT_EQ(0, cm_route(self->c, cl, 7400));
	ASSERT_EQ(0, cm_qp_attr(self->c, cl, SV_QPS_INIT, &a));
	EXPECT_EQ(SV_CM_UDP_QKEY, a.attr.qkey);
	EXPECT_EQ(-EINVAL, cm_qp_attr(self->c, cl, SV_QPS_RTR, &a));
	EXPECT_EQ(0, cm_sidr(self->c, cl, 0x123));
	EXPECT_EQ(-EINVAL, cm_sidr(self->c, cl, 0x123));
	ASSERT_EQ(0, cm_event(self->c, &e));
	EXPECT_EQ(SV_CM_EVENT_UNREACHABLE, e.event);
	EXPECT_EQ(1, e.status);

	/* A TCP (RC) listener is no UD service, even on the port. */
	rc_lis = cm_create(self->s, SV_CM_PS_TCP, SV_QPT_RC, 2);
	ASSERT_EQ(0, cm_listen(self->s, rc_lis, 7401));
	lis = cm_create(self->s, SV_CM_PS_UDP, SV_QPT_UD, 3);
	ASSERT_EQ(0, cm_listen(self->s, lis, 7402));
	cl = cm_create(self->c, SV_CM_PS_UDP, SV_QPT_UD, 4);
	ASSERT_EQ(0, cm_route(self->c, cl, 7401));
	EXPECT_EQ(0, cm_sidr(self->c, cl, 0x123));
	ASSERT_EQ(0, cm_event(self->c, &e));
	EXPECT_EQ(SV_CM_EVENT_UNREACHABLE, e.event);
	EXPECT_EQ(1, e.status);

	/* Rejected, with private data: status 2. */
	cl = cm_create(self->c, SV_CM_PS_UDP, SV_QPT_UD, 5);
	ASSERT_EQ(0, cm_route(self->c, cl, 7402));
	EXPECT_EQ(0, cm_sidr(self->c, cl, 0x123));
	ASSERT_EQ(0, cm_event(self->s, &e));
	ASSERT_EQ(SV_CM_EVENT_CONNECT_REQUEST, e.event);
	EXPECT_EQ(3ull, e.listen_uid);
	EXPECT_EQ(0, memcmp(e.param.private_data, "udp", 3));
	child = e.id;
	rej.id = child;
	rej.private_data_len = SV_CM_SIDR_REP_PRIVATE_MAX + 1;
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_REJECT, &rej));
	EXPECT_EQ(EINVAL, errno);
	rej.private_data_len = 2;
	memcpy(rej.private_data, "no", 2);
	EXPECT_EQ(0, ioctl(self->s, SV_CM_IOC_REJECT, &rej));
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_REJECT, &rej));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, cm_event(self->c, &e));
	EXPECT_EQ(SV_CM_EVENT_UNREACHABLE, e.event);
	EXPECT_EQ(2, e.status);
	EXPECT_EQ(0, memcmp(e.param.private_data, "no", 2));

	/* Accepted: the QP number and the Q_Key come back. */
	cl = cm_create(self->c, SV_CM_PS_UDP, SV_QPT_UD, 6);
	ASSERT_EQ(0, cm_route(self->c, cl, 7402));
	EXPECT_EQ(0, cm_sidr(self->c, cl, 0x123));
	ASSERT_EQ(0, cm_event(self->s, &e));
	ASSERT_EQ(SV_CM_EVENT_CONNECT_REQUEST, e.event);
	child = e.id;
	acc.id = child;
	acc.uid = 7;
	acc.param.qp_num = 0x456;
	/* Its QP in INIT has the Q_Key: another one cannot be asked for. */
	ASSERT_EQ(0, cm_qp_attr(self->s, child, SV_QPS_INIT, &a));
	EXPECT_EQ(SV_CM_UDP_QKEY, a.attr.qkey);
	acc.param.qkey = 0x1111;
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_ACCEPT, &acc));
	EXPECT_EQ(EINVAL, errno);
	acc.param.qkey = 0;
	EXPECT_EQ(0, ioctl(self->s, SV_CM_IOC_ACCEPT, &acc));
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_ACCEPT, &acc));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, cm_event(self->c, &e));
	EXPECT_EQ(SV_CM_EVENT_ESTABLISHED, e.event);
	EXPECT_EQ(0, e.status);
	EXPECT_EQ(0x456u, e.param.qp_num);
	EXPECT_EQ(SV_CM_UDP_QKEY, e.param.qkey);
	/* No connection to end, no RTR attributes: UD has neither. */
	EXPECT_EQ(0, ioctl(self->c, SV_CM_IOC_DISCONNECT,
			   &(struct sv_cm_disconnect){ sizeof(struct sv_cm_disconnect), cl }));
	EXPECT_EQ(-EINVAL, cm_qp_attr(self->s, child, SV_QPS_RTS, &a));
}

/*
 * rdma_migrate_id: an id and its unread events move to another channel
 * under a new number; what may not move, and bad arguments.
 */
TEST_F(chan, migrate)
{
	struct sv_cm_resolve_addr ra = { .size = sizeof(ra) };
	struct sv_cm_migrate_id m = { .size = sizeof(m) };
	struct sv_cm_get_event e;
	int id, l, a, null;

	id = cm_create(self->c, SV_CM_PS_TCP, SV_QPT_RC, 5);
	ASSERT_LT(0, id);
	ra.id = id;
	in4(&ra.dst, CM_IP, 7600);
	ASSERT_EQ(0, ioctl(self->c, SV_CM_IOC_RESOLVE_ADDR, &ra));
	/* Its ADDR_RESOLVED, unread, goes along. */
	m.id = id;
	m.fd = self->c;
	ASSERT_EQ(0, ioctl(self->s, SV_CM_IOC_MIGRATE_ID, &m));
	EXPECT_EQ(0u, m.events_reported);
	EXPECT_EQ(-ETIMEDOUT, ({ struct pollfd p = { self->c, POLLIN, 0 };
				  poll(&p, 1, 0) == 1 ? 0 : -ETIMEDOUT; }));
	EXPECT_EQ(-ENOENT, cm_bind(self->c, id, CM_IP, 0));
	ASSERT_EQ(0, cm_event(self->s, &e));
	EXPECT_EQ(SV_CM_EVENT_ADDR_RESOLVED, e.event);
	EXPECT_EQ(5u, e.uid);
	EXPECT_EQ(m.id, e.id);
	/* To the channel it is on: nothing moves; its count of read events. */
	id = m.id;
	m.fd = self->s;
	ASSERT_EQ(0, ioctl(self->s, SV_CM_IOC_MIGRATE_ID, &m));
	EXPECT_EQ((__u32)id, m.id);
	EXPECT_EQ(1u, m.events_reported);

	/* Not a channel, no file, no such id. */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, null);
	m.fd = null;
	EXPECT_EQ(-1, ioctl(self->c, SV_CM_IOC_MIGRATE_ID, &m));
	EXPECT_EQ(EINVAL, errno);
	close(null);
	m.fd = -1;
	EXPECT_EQ(-1, ioctl(self->c, SV_CM_IOC_MIGRATE_ID, &m));
	EXPECT_EQ(EBADF, errno);
	m.fd = self->s;
	m.id = 999;
	EXPECT_EQ(-1, ioctl(self->c, SV_CM_IOC_MIGRATE_ID, &m));
	EXPECT_EQ(ENOENT, errno);

	/* A listener with a request unread stays where it is. */
	l = cm_create(self->s, SV_CM_PS_TCP, SV_QPT_RC, 6);
	a = cm_create(self->c, SV_CM_PS_TCP, SV_QPT_RC, 7);
	ASSERT_EQ(0, cm_listen(self->s, l, 7601));
	ASSERT_EQ(0, cm_route(self->c, a, 7601));
	ASSERT_EQ(0, cm_connect(self->c, a, 0x10));
	usleep(200000);
	m.id = l;
	m.fd = self->s;
	EXPECT_EQ(-1, ioctl(self->c, SV_CM_IOC_MIGRATE_ID, &m));
	EXPECT_EQ(EBUSY, errno);
	ASSERT_EQ(0, cm_event(self->s, &e));
	ASSERT_EQ(SV_CM_EVENT_CONNECT_REQUEST, e.event);
	/* Read: it moves, and later requests come to its new channel. */
	EXPECT_EQ(0, ioctl(self->c, SV_CM_IOC_MIGRATE_ID, &m));
}

static int cm_join(int fd, __u32 id, __u64 uid, const char *ip,
		   struct sv_cm_join_mcast *j)
{
	memset(j, 0, sizeof(*j));
	j->size = sizeof(*j);
	j->id = id;
	j->uid = uid;
	in4(&j->addr, ip, 0);
	return ioctl(fd, SV_CM_IOC_JOIN_MCAST, j) ? -errno : 0;
}

/*
 * Multicast joins: which ids may join what, the event (the join's uid,
 * the group QPN and the Q_Key), leaving (its unread event goes with it),
 * and the bound of joins per id.
 */
TEST_F(chan, mcast)
{
	static const __u8 mgid[16] = { [10] = 0xff, [11] = 0xff,
				       239, 1, 2, 3 };
	struct sv_cm_leave_mcast l = { .size = sizeof(l) };
	struct sv_cm_query q = { .size = sizeof(q) };
	struct sv_cm_join_mcast j;
	struct sv_cm_get_event e;
	int rc, ud, idle, i, n;

	rc = cm_create(self->s, SV_CM_PS_TCP, SV_QPT_RC, 1);
	ud = cm_create(self->s, SV_CM_PS_UDP, SV_QPT_UD, 2);
	idle = cm_create(self->s, SV_CM_PS_UDP, SV_QPT_UD, 3);
	ASSERT_EQ(0, cm_bind(self->s, rc, CM_IP, 0));
	ASSERT_EQ(0, cm_bind(self->s, ud, CM_IP, 0));
	EXPECT_EQ(-EINVAL, cm_join(self->s, rc, 10, "239.1.2.3", &j));
	EXPECT_EQ(-EINVAL, cm_join(self->s, idle, 10, "239.1.2.3", &j));
	EXPECT_EQ(-EINVAL, cm_join(self->s, ud, 10, "10.77.0.9", &j));
	EXPECT_EQ(-ENOENT, cm_join(self->c, ud, 10, "239.1.2.3", &j));
	j.flags = 2;
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_JOIN_MCAST, &j));
	EXPECT_EQ(EINVAL, errno);
	j.flags = 0;
	j.addr.ss_family = AF_UNIX;
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_JOIN_MCAST, &j));
	EXPECT_EQ(EAFNOSUPPORT, errno);

	/* A bound id's source GID is its address's, as a resolved id's. */
	q.id = cm_create(self->c, SV_CM_PS_UDP, SV_QPT_UD, 4);
	ASSERT_EQ(0, cm_route(self->c, q.id, 7500));
	ASSERT_EQ(0, ioctl(self->c, SV_CM_IOC_QUERY, &q));
	ASSERT_EQ(0, cm_join(self->s, ud, 10, "239.1.2.3", &j));
	EXPECT_EQ(q.sgid_index, j.sgid_index);
	EXPECT_EQ(0, memcmp(j.mgid, mgid, 16));
	EXPECT_EQ(64, j.hop_limit);
	EXPECT_EQ(-EEXIST, cm_join(self->s, ud, 10, "239.1.2.4", &j));
	ASSERT_EQ(0, cm_event(self->s, &e));
	EXPECT_EQ(SV_CM_EVENT_MULTICAST_JOIN, e.event);
	EXPECT_EQ(10ull, e.uid);
	EXPECT_EQ((__u32)SV_CM_MC_QPN, e.param.qp_num);
	EXPECT_EQ(SV_CM_UDP_QKEY, e.param.qkey);
	/* Left: the one event read is reported; left again, no such join. */
	l.id = ud;
	l.uid = 10;
	EXPECT_EQ(0, ioctl(self->s, SV_CM_IOC_LEAVE_MCAST, &l));
	EXPECT_EQ(1u, l.events_reported);
	EXPECT_EQ(-1, ioctl(self->s, SV_CM_IOC_LEAVE_MCAST, &l));
	EXPECT_EQ(ENOENT, errno);
	/* A join left before its event was read: the event is gone. */
	ASSERT_EQ(0, cm_join(self->s, ud, 11, "239.1.2.5", &j));
	l.uid = 11;
	EXPECT_EQ(0, ioctl(self->s, SV_CM_IOC_LEAVE_MCAST, &l));
	EXPECT_EQ(0u, l.events_reported);
	EXPECT_EQ(-ETIMEDOUT, ({ struct pollfd p = { self->s, POLLIN, 0 };
				  poll(&p, 1, 0) == 1 ? 0 : -ETIMEDOUT; }));
	/* At most SV_CM_MAX_MCS joins an id; destroying it drops them. */
	for (i = 0, n = 0; i < 300; i++) {
		int r = cm_join(self->s, ud, 100 + i, "239.9.9.9", &j);

		if (r) {
			EXPECT_EQ(-ENOSPC, r);
			break;
		}
		n++;
	}
	EXPECT_EQ(256, n);
}

/*
 * Two devices on the two ends of a veth, the server's end in a namespace
 * of its own (PEER_NS): the CM's MADs go over the wire.
 */
#define PEER_NS	"svcmpeer"

FIXTURE(peer) {
	int s, c;
};

FIXTURE_SETUP(peer)
{
	char sh[3 * PATH_MAX];
	int cur, ns;

	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	snprintf(sh, sizeof(sh),
		 "set -e; ip netns del " PEER_NS " 2>/dev/null || true; "
		 "ip link set lo up; ip netns add " PEER_NS "; "
		 "ip link add p0 type veth peer name p1 netns " PEER_NS "; "
		 "ip addr add 10.78.0.1/24 dev p0; ip link set p0 up; "
		 "ip -n " PEER_NS " link set lo up; "
		 "ip -n " PEER_NS " addr add 10.78.0.2/24 dev p1; "
		 "ip -n " PEER_NS " link set p1 up; "
		 "%s/../bin/svctl link add svcmp0 netdev p0; "
		 "ip netns exec " PEER_NS " %s/../bin/svctl link add svcmp1 "
		 "netdev p1", sv_compat_dir(), sv_compat_dir());
	ASSERT_EQ(0, system(sh));
	self->c = cm_open();
	ASSERT_LE(0, self->c);
	/* The server's channel is of the peer's namespace: opened there. */
	cur = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ns = open("/run/netns/" PEER_NS, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, cur);
	ASSERT_LE(0, ns);
	ASSERT_EQ(0, setns(ns, CLONE_NEWNET));
	self->s = cm_open();
	ASSERT_EQ(0, setns(cur, CLONE_NEWNET));
	close(ns);
	close(cur);
	ASSERT_LE(0, self->s);
}

FIXTURE_TEARDOWN(peer)
{
	char sh[3 * PATH_MAX];

	close(self->s);
	close(self->c);
	snprintf(sh, sizeof(sh),
		 "%s/../bin/svctl link del svcmp0; "
		 "ip netns exec " PEER_NS " %s/../bin/svctl link del svcmp1; "
		 "ip netns del " PEER_NS, sv_compat_dir(), sv_compat_dir());
	if (system(sh))
		TH_LOG("teardown failed");
}

/*
 * A connection over the wire whose peer disappears (its link goes
 * down): a disconnect is retried until the DREQ's retries run out, and
 * then DISCONNECTED is reported all the same.
 */
TEST_F_TIMEOUT(peer, gone, 120)
{
	int l = cm_create(self->s, SV_CM_PS_TCP, SV_QPT_RC, 1);
	int a = cm_create(self->c, SV_CM_PS_TCP, SV_QPT_RC, 2);
	struct sv_cm_disconnect dis = { .size = sizeof(dis), .id = a };
	struct timespec t0, t1;
	struct sv_cm_get_event e;
	int i, ret;

	ASSERT_LT(0, l);
	ASSERT_LT(0, a);
	ASSERT_EQ(0, cm_listen(self->s, l, 18950));
	ASSERT_EQ(0, cm_route_to(self->c, a, "10.78.0.2", 18950));
	ASSERT_EQ(0, cm_establish(self->s, self->c, a));

	ASSERT_EQ(0, system("ip -n " PEER_NS " link set p1 down"));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, ioctl(self->c, SV_CM_IOC_DISCONNECT, &dis));
	for (i = 0; i < 6; i++) {
		ret = cm_event(self->c, &e);
		if (ret != -ETIMEDOUT)
			break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(SV_CM_EVENT_DISCONNECTED, e.event);
	EXPECT_EQ(2u, e.uid);
	/* 15 DREQs went unanswered first (about a second each). */
	EXPECT_LE(10, t1.tv_sec - t0.tv_sec);
	/* The server heard nothing. */
	EXPECT_EQ(-ETIMEDOUT, ({ struct pollfd p = { self->s, POLLIN, 0 };
				  poll(&p, 1, 0) == 1 ? 0 : -ETIMEDOUT; }));
}

TEST_HARNESS_MAIN
