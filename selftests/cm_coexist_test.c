// SPDX-License-Identifier: GPL-2.0
/*
 * Our librdmacm.so.1 beside rdma-core's (user/compat/rdmacm_system.c): in
 * one process, an id on an rdma_rxe device's address is served by
 * rdma-core's librdmacm behind ours, one on a softverbs device's address
 * by ours, and both report on one channel; a listener on the wildcard
 * takes requests from both; rdma_get_devices lists both;
 * SOFTVERBS_SYSTEM_LIBRDMACM=none leaves softverbs alone. rxe and a
 * softverbs device sit on the two ends of a veth pair in init_net.
 * Skipped where rdma_rxe cannot be loaded.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "sv_harness.h"
#include "sv_test.h"

#define NET0	"svcc0"
#define NET1	"svcc1"
#define RXE	"svccrxe0"
#define SVDEV	"svccsv0"
#define IP_RXE	"192.0.2.81"
#define IP_SV	"192.0.2.82"

static char cmd[PATH_MAX + 512];

static void cc_down(void)
{
	snprintf(cmd, sizeof(cmd),
		 "rdma link del " RXE " 2>/dev/null; "
		 "%s/../bin/svctl link del " SVDEV " 2>/dev/null; "
		 "ip link del " NET0 " 2>/dev/null; true", sv_compat_dir());
	if (system(cmd)) {
		/* The next setup cleans up again. */
	}
}

static bool cc_up(void)
{
	cc_down();
	snprintf(cmd, sizeof(cmd),
		 "modprobe rdma_rxe 2>/dev/null && "
		 "ip link add " NET0 " type veth peer name " NET1 " && "
		 "ip addr add " IP_RXE "/24 dev " NET0 " && "
		 "ip addr add " IP_SV "/24 dev " NET1 " && "
		 "ip link set " NET0 " up && ip link set " NET1 " up && "
		 "rdma link add " RXE " type rxe netdev " NET0 " && "
		 "%s/../bin/svctl link add " SVDEV " netdev " NET1,
		 sv_compat_dir());
	return !system(cmd);
}

static struct sockaddr_in sin_of(const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

/* The channel's next event, within 20 s (times the VM's slowness). */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	struct pollfd pf = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pf, 1, 20000 * sv_slow()) != 1 ||
	    rdma_get_cm_event(ch, &ev))
		return NULL;
	return ev;
}

/*
 * The tests' bodies run in a child of their own and return 0, or print
 * what failed and return 1: rdma-core's librdmacm keeps every device it
 * opened open until the process ends, and deleting rxe (the teardown)
 * waits for that (CK(): sv_test.h).
 */
static int in_child(int (*fn)(void))
{
	pid_t pid = sv_fork();

	if (!pid)
		_exit(fn());
	return sv_reap(pid);
}

static const char *dev_of(struct rdma_cm_id *id)
{
	return id->verbs ? ibv_get_device_name(id->verbs->device) : "";
}

FIXTURE(cc) {
};

FIXTURE_SETUP(cc)
{
	if (!cc_up())
		SKIP(return, "rdma_rxe and a softverbs device cannot be set up");
	/* The tables fill from the addresses a moment after they appear. */
	usleep(500000);
}

FIXTURE_TEARDOWN(cc)
{
	cc_down();
}

/* Ours first, then the system library's; NULL-terminated. */
static int devices_of_both(void)
{
	struct ibv_context **l;
	int i, n = -1, sv = -1, rxe = -1;

	l = rdma_get_devices(&n);
	CK(l);
	for (i = 0; i < n; i++) {
		CK(l[i]);
		if (!strcmp(ibv_get_device_name(l[i]->device), SVDEV))
			sv = i;
		if (!strcmp(ibv_get_device_name(l[i]->device), RXE))
			rxe = i;
	}
	CK(!l[n]);
	CK(sv >= 0);
	CK(rxe > sv);
	rdma_free_devices(l);
	return 0;
}

TEST_F(cc, devices_of_both)
{
	EXPECT_EQ(0, in_child(devices_of_both));
}

static int system_library_off(void)
{
	struct rdma_event_channel *ch;
	struct ibv_context **l;
	char path[64], link[64] = "";
	int i, n = -1;

	setenv("SOFTVERBS_SYSTEM_LIBRDMACM", "none", 1);
	l = rdma_get_devices(&n);
	CK(l);
	CK(n >= 1);
	for (i = 0; i < n; i++)
		CK(strcmp(RXE, ibv_get_device_name(l[i]->device)));
	rdma_free_devices(l);
	ch = rdma_create_event_channel();
	CK(ch);
	/* No system channel: the fd is the kernel's own. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", ch->fd);
	CK(readlink(path, link, sizeof(link) - 1) > 0);
	CK(strstr(link, "softverbs_cm"));
	rdma_destroy_event_channel(ch);
	return 0;
}

TEST_F(cc, system_library_off)
{
	EXPECT_EQ(0, in_child(system_library_off));
}

/* A non-blocking channel with nothing on either side: EAGAIN at once. */
static int nonblocking_channel(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;

	CK(ch);
	CK(!fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK));
	CK(rdma_get_cm_event(ch, &ev) == -1);
	CK(errno == EAGAIN);
	rdma_destroy_event_channel(ch);
	return 0;
}

TEST_F(cc, nonblocking_channel)
{
	EXPECT_EQ(0, in_child(nonblocking_channel));
}

/*
 * Two ids on one channel: one resolved to rxe's address (the system's
 * library serves it), one to the softverbs device's (ours). Each event
 * names the program's own id, with the right device, and each id has
 * its device's PD, as rdma_cm gives one once the address is resolved.
 */
static int one_channel_both_libraries(void)
{
	struct sockaddr_in d_rxe = sin_of(IP_RXE, 0), d_sv = sin_of(IP_SV, 0);
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *a = NULL, *b = NULL;
	struct rdma_cm_event *ev;
	int i, seen = 0;

	CK(ch);
	CK(!rdma_create_id(ch, &a, (void *)1, RDMA_PS_TCP));
	CK(!rdma_create_id(ch, &b, (void *)2, RDMA_PS_TCP));
	CK(!rdma_resolve_addr(a, NULL, (struct sockaddr *)&d_rxe, 2000));
	CK(!rdma_resolve_addr(b, NULL, (struct sockaddr *)&d_sv, 2000));
	for (i = 0; i < 2; i++) {
		ev = next_event(ch);
		CK(ev);
		CK(ev->event == RDMA_CM_EVENT_ADDR_RESOLVED);
		CK(!ev->status);
		if (ev->id == a) {
			CK(ev->id->context == (void *)1);
			CK(!strcmp(RXE, dev_of(a)));
			seen |= 1;
		} else {
			CK(ev->id == b);
			CK(ev->id->context == (void *)2);
			CK(!strcmp(SVDEV, dev_of(b)));
			seen |= 2;
		}
		CK(!rdma_ack_cm_event(ev));
	}
	CK(seen == 3);
	CK(a->pd && a->pd->context == a->verbs);
	CK(b->pd && b->pd->context == b->verbs);
	CK(!rdma_destroy_id(a));
	CK(!rdma_destroy_id(b));
	rdma_destroy_event_channel(ch);
	return 0;
}

TEST_F(cc, one_channel_both_libraries)
{
	EXPECT_EQ(0, in_child(one_channel_both_libraries));
}

/* A client id to ip:port, resolved, with a QP, connecting. */
static int cc_connect(struct rdma_event_channel *ch, struct rdma_cm_id **id,
		      const char *ip, __be16 port)
{
	struct sockaddr_in d = sin_of(ip, ntohs(port));
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_cm_event *ev;

	CK(!rdma_create_id(ch, id, NULL, RDMA_PS_TCP));
	CK(!rdma_resolve_addr(*id, NULL, (struct sockaddr *)&d, 2000));
	ev = next_event(ch);
	CK(ev && ev->event == RDMA_CM_EVENT_ADDR_RESOLVED);
	rdma_ack_cm_event(ev);
	CK(!rdma_resolve_route(*id, 2000));
	ev = next_event(ch);
	CK(ev && ev->event == RDMA_CM_EVENT_ROUTE_RESOLVED);
	rdma_ack_cm_event(ev);
	CK(!rdma_create_qp(*id, NULL, &qa));
	CK(!rdma_connect(*id, NULL));
	return 0;
}

/*
 * A listener on the wildcard, on a port picked for it, takes a request
 * to rxe's address and one to the softverbs device's: each a new id of
 * the program's with the listener as listen_id, on its device. So does
 * one on a loopback address, which rdma_cm binds as the wildcard (no
 * device: libfabric's verbs provider binds "localhost" so).
 */
static int listener_takes_both(const char *bind_ip)
{
	const char *ips[2] = { IP_RXE, IP_SV }, *devs[2] = { RXE, SVDEV };
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct sockaddr_in any = sin_of(bind_ip, 0);
	struct rdma_cm_id *lis, *req, *c;
	struct rdma_cm_event *ev;
	__be16 port;
	int i;

	CK(ch && cch);
	CK(!rdma_create_id(ch, &lis, NULL, RDMA_PS_TCP));
	CK(!rdma_bind_addr(lis, (struct sockaddr *)&any));
	CK(!lis->verbs);
	port = rdma_get_src_port(lis);
	CK(port);
	CK(!rdma_listen(lis, 4));
	for (i = 0; i < 2; i++) {
		CK(!cc_connect(cch, &c, ips[i], port));
		ev = next_event(ch);
		CK(ev);
		CK(ev->event == RDMA_CM_EVENT_CONNECT_REQUEST);
		CK(ev->listen_id == lis);
		CK(ev->id != lis);
		CK(!strcmp(devs[i], dev_of(ev->id)));
		CK(!rdma_reject(ev->id, NULL, 0));
		req = ev->id;
		CK(!rdma_ack_cm_event(ev));
		CK(!rdma_destroy_id(req));
		/* The client hears the refusal. */
		ev = next_event(cch);
		CK(ev);
		CK(ev->event == RDMA_CM_EVENT_REJECTED);
		rdma_ack_cm_event(ev);
		rdma_destroy_qp(c);
		CK(!rdma_destroy_id(c));
	}
	CK(!rdma_destroy_id(lis));
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(ch);
	return 0;
}

static int wildcard_listener_takes_both(void)
{
	return listener_takes_both("0.0.0.0");
}

TEST_F(cc, wildcard_listener_takes_both)
{
	EXPECT_EQ(0, in_child(wildcard_listener_takes_both));
}

static int loopback_listener_takes_both(void)
{
	return listener_takes_both("127.0.0.1");
}

TEST_F(cc, loopback_listener_takes_both)
{
	EXPECT_EQ(0, in_child(loopback_listener_takes_both));
}

/*
 * rdma_getaddrinfo with neither node nor service answers from the
 * hints' own addresses (libfabric asks so), one answer, as rdma-core's;
 * with no hints either, EINVAL.
 */
static int addrinfo_of_hints(void)
{
	struct sockaddr_in d = sin_of(IP_SV, 7471), s = sin_of(IP_SV, 0);
	struct rdma_addrinfo h = {
		.ai_family = AF_INET, .ai_qp_type = IBV_QPT_RC,
		.ai_port_space = RDMA_PS_TCP,
		.ai_dst_addr = (struct sockaddr *)&d, .ai_dst_len = sizeof(d),
	}, *r = NULL;

	CK(rdma_getaddrinfo(NULL, NULL, NULL, &r) == -1);
	CK(errno == EINVAL);
	CK(!rdma_getaddrinfo(NULL, NULL, &h, &r));
	CK(r && !r->ai_next);
	CK(r->ai_family == AF_INET && r->ai_qp_type == IBV_QPT_RC &&
	   r->ai_port_space == RDMA_PS_TCP);
	CK(r->ai_dst_len == sizeof(d) && !memcmp(r->ai_dst_addr, &d, sizeof(d)));
	CK(!r->ai_src_addr && !r->ai_src_len);
	rdma_freeaddrinfo(r);
	h.ai_src_addr = (struct sockaddr *)&s;
	h.ai_src_len = sizeof(s);
	CK(!rdma_getaddrinfo(NULL, NULL, &h, &r));
	CK(r->ai_src_len == sizeof(s) && !memcmp(r->ai_src_addr, &s, sizeof(s)));
	rdma_freeaddrinfo(r);
	return 0;
}

TEST_F(cc, addrinfo_of_hints)
{
	EXPECT_EQ(0, in_child(addrinfo_of_hints));
}

TEST_HARNESS_MAIN
