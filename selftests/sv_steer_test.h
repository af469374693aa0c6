/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The raw Ethernet tests' helpers and their veth fixture: a softverbs
 * device DEV bound (svctl link add DEV netdev NEAR) to one end of a veth
 * pair whose other end, FAR, is in a network namespace of the test's own,
 * NS. Frames come from the far side through AF_PACKET sockets and
 * ordinary UDP sockets; RAW_PACKET QPs send frames there; ibv_create_flow
 * rules decide which QP gets what.
 *
 * What a test gets depends on what it defines before it includes this:
 *
 *   (nothing)        frames (struct frame, eth_frame, crc32_eth), far_send,
 *                    set_timeout, RAW_PACKET QPs (struct rawqp, rawqp_open,
 *                    rx_poll, rx_is) and flow specs (struct spec_attr,
 *                    fa_*, eth_rule, mac_rule): netlink_test
 *   NS, FAR          the far namespace and the veth end in it: far_packet,
 *                    udp_socket, udp_send, udp_got
 *   NEAR_IP, FAR_IP  the two ends' IPv4 addresses (a /24): ipv4_frame,
 *                    udp_rule; the fixture gives the ends these addresses
 *                    and static neighbours both ways (no ARP on the way:
 *                    a default rule would take it)
 *   SV_VETH_FIXTURE  the fixture's name (TEST_F(name, ...)); with NS, NEAR,
 *                    FAR and DEV: the fixture (self->ctx, self->pd,
 *                    self->mac, self->far_mac, self->far_ifindex, self->pkt:
 *                    a far AF_PACKET socket for ETYPE, ...), set up by
 *                    sv_veth_up() and torn down by sv_veth_down(); or
 *                    defined before a second include, further down, to
 *                    have the fixture defined (and run) after others
 *
 * and these hooks, all optional:
 *
 *   NRECV              receives a rawqp posts (32)
 *   SV_FRAME_MEMBERS   more members of struct frame, after b[] and len
 *   SV_VETH_MEMBERS    more members of the fixture
 *   SV_VETH_IPV6       keep IPv6 on both ends; without it, neither end
 *                      has IPv6: its router and neighbour solicitations
 *                      and MLD reports are multicast frames the default
 *                      rules would take
 *   SV_VETH_OWN_SETUP  the test writes FIXTURE_SETUP and FIXTURE_TEARDOWN
 *                      itself, calling sv_veth_up() and sv_veth_down()
 *                      around what it adds
 */
#ifndef SV_STEER_TEST_H
#define SV_STEER_TEST_H

#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <linux/if_ether.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "sv_harness.h"
#include "sv_dp_test.h"
#include "sv_test.h"

#if defined(NS) != defined(FAR) || defined(NEAR_IP) != defined(FAR_IP)
#error "define NS with FAR, and NEAR_IP with FAR_IP"
#endif

#define ETYPE	0x88b5		/* IEEE local experimental */
#define BUFSZ	4096
#ifndef NRECV
#define NRECV	32
#endif

/* ---- frames ---- */

/* The ones' complement sum of n bytes (big-endian words), from s. */
static inline uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += p[i] << 8 | p[i + 1];
	if (n & 1)
		s += p[n - 1] << 8;
	return s;
}

/* The ones' complement of the folded sum: a checksum field's value. */
static inline uint16_t csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s & 0xffff;
}

struct frame {
	uint8_t b[1600];
	size_t len;
#ifdef SV_FRAME_MEMBERS
	SV_FRAME_MEMBERS
#endif
};

static inline void eth_frame(struct frame *f, const uint8_t dst[6],
			     const uint8_t src[6], uint16_t etype, int seed,
			     size_t payload)
{
	memcpy(f->b, dst, 6);
	memcpy(f->b + 6, src, 6);
	f->b[12] = etype >> 8;
	f->b[13] = etype & 0xff;
	sv_fill((char *)f->b + 14, payload, seed);
	f->len = 14 + payload;
}

/* The Ethernet FCS of @n bytes at @p (CRC-32, sent least significant first). */
static inline uint32_t crc32_eth(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffff;
	int k;

	while (n--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320 : c >> 1;
	}
	return ~c;
}

/* A receive timeout of @ms on socket @s. */
static inline void set_timeout(int s, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* Send a frame through packet socket @s out of @ifindex: 0 if it went. */
/* Wait for @n children; how many exited with status 0 (others logged). */
static inline int sv_wait_kids(struct __test_metadata *_metadata,
			       const pid_t *kids, int n)
{
	int i, st, ok = 0;

	for (i = 0; i < n; i++) {
		if (waitpid(kids[i], &st, 0) != kids[i])
			TH_LOG("child %d: waitpid failed", i);
		else if (WIFEXITED(st) && !WEXITSTATUS(st))
			ok++;
		else
			TH_LOG("child %d: status 0x%x", i, st);
	}
	return ok;
}

static inline int far_send(int s, int ifindex, const void *frame, size_t len)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_ifindex = ifindex, .sll_halen = 6 };

	return sendto(s, frame, len, 0, (struct sockaddr *)&sll,
		      sizeof(sll)) == (ssize_t)len ? 0 : -1;
}

/* A child sending @frame from the far end until killed; its pid. */
static inline pid_t sv_far_flood(int s, int ifindex, const void *frame,
				 size_t len)
{
	pid_t pid = fork();

	if (!pid) {
		for (;;)
			far_send(s, ifindex, frame, len);
	}
	return pid;
}

/* ---- the verbs side ---- */

struct rawqp {
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp;
	char *buf;
	struct ibv_mr *mr;
	/*
	 * Completions taken off the CQ while looking for another kind (a
	 * looped-back frame's receive may complete before its send does):
	 * rx_poll() returns them first, in order.
	 */
	struct ibv_wc held[8];
	uint32_t held_tag[8];
	int nheld;
};

static inline int raw_qp_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE) ? -1 : 0;
}

static inline int post_rq(struct rawqp *r, int i)
{
	return post_recv(r->qp, r->mr, r->buf + (size_t)i * 2048, 2048, i);
}

/*
 * A QP as @ia asks (its CQ and PD are filled in), in RTS with NRECV
 * receives posted; RAW_PACKET unless @ia says UD.
 */
static inline int rawqp_open_attr(struct ibv_context *ctx, struct ibv_pd *pd,
				  struct rawqp *r,
				  struct ibv_qp_init_attr_ex *ia)
{
	struct ibv_cq_init_attr_ex cqa = {
		.cqe = 256,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_FLOW_TAG,
	};
	int i;

	memset(r, 0, sizeof(*r));
	r->cqx = ibv_create_cq_ex(ctx, &cqa);
	if (!r->cqx)
		return -1;
	r->cq = ibv_cq_ex_to_cq(r->cqx);
	r->buf = aligned_alloc(4096, NRECV * 2048 + BUFSZ);
	if (!r->buf)
		return -1;
	r->mr = ibv_reg_mr(pd, r->buf, NRECV * 2048 + BUFSZ,
			   IBV_ACCESS_LOCAL_WRITE);
	ia->comp_mask |= IBV_QP_INIT_ATTR_PD;
	ia->pd = pd;
	ia->send_cq = ia->recv_cq = r->cq;
	r->qp = ibv_create_qp_ex(ctx, ia);
	if (!r->mr || !r->qp)
		return -1;
	if (ia->qp_type == IBV_QPT_UD) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
					 .port_num = 1, .qkey = 0x11 };

		if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_PORT |
				  IBV_QP_PKEY_INDEX | IBV_QP_QKEY))
			return -1;
		a.qp_state = IBV_QPS_RTR;
		if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE))
			return -1;
		a.qp_state = IBV_QPS_RTS;
		if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
			return -1;
	} else if (raw_qp_init(r->qp)) {
		return -1;
	}
	for (i = 0; i < NRECV; i++)
		if (post_rq(r, i))
			return -1;
	return 0;
}

/* A RAW_PACKET QP (or @type) in RTS with NRECV receives posted. */
static inline int rawqp_open(struct ibv_context *ctx, struct ibv_pd *pd,
			     struct rawqp *r, enum ibv_qp_type type,
			     uint32_t cflags)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = type,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.create_flags = cflags,
	};

	return rawqp_open_attr(ctx, pd, r, &ia);
}

static inline void rawqp_close(struct rawqp *r)
{
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

/* Poll one receive within @ms: 1 and its wc (and tag), else 0. */
/* One completion straight off r's CQ, if there is one. */
static inline int cq_take(struct rawqp *r, struct ibv_wc *wc, uint32_t *tag)
{
	struct ibv_poll_cq_attr pa = {};

	if (ibv_start_poll(r->cqx, &pa))
		return 0;
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = r->cqx->wr_id;
	wc->status = r->cqx->status;
	wc->opcode = ibv_wc_read_opcode(r->cqx);
	wc->byte_len = ibv_wc_read_byte_len(r->cqx);
	wc->src_qp = ibv_wc_read_src_qp(r->cqx);
	if (tag)
		*tag = ibv_wc_read_flow_tag(r->cqx);
	ibv_end_poll(r->cqx);
	return 1;
}

/* The next completion of r (held ones first), waiting up to ms ms. */
static inline int rx_poll(struct rawqp *r, struct ibv_wc *wc, uint32_t *tag,
			  int ms)
{
	int waited = 0;

	if (r->nheld) {
		*wc = r->held[0];
		if (tag)
			*tag = r->held_tag[0];
		r->nheld--;
		memmove(r->held, r->held + 1, r->nheld * sizeof(*wc));
		memmove(r->held_tag, r->held_tag + 1,
			r->nheld * sizeof(*r->held_tag));
		return 1;
	}
	for (;;) {
		if (cq_take(r, wc, tag))
			return 1;
		if (waited >= ms)
			return 0;
		usleep(1000);
		waited++;
	}
}

/* The receive @wc names holds @f exactly; it is reposted. */
static inline int rx_is(struct rawqp *r, const struct ibv_wc *wc,
			const struct frame *f)
{
	const char *got = r->buf + wc->wr_id * 2048;
	int ok = wc->status == IBV_WC_SUCCESS && wc->opcode == IBV_WC_RECV &&
		 wc->byte_len == f->len && !memcmp(got, f->b, f->len);

	post_rq(r, wc->wr_id);
	return ok;
}

/* ---- flows ---- */

struct spec_attr {
	struct ibv_flow_attr attr;
	uint8_t specs[512];
};

static inline void fa_init(struct spec_attr *a, int type, int prio, int flags)
{
	memset(a, 0, sizeof(*a));
	a->attr.type = type;
	a->attr.priority = prio;
	a->attr.port = 1;
	a->attr.flags = flags;
	a->attr.size = sizeof(a->attr);
}

static inline void *fa_add(struct spec_attr *a, size_t size)
{
	void *p = (char *)a + a->attr.size;

	a->attr.size += size;
	a->attr.num_of_specs++;
	return p;
}

/* ETH: the destination and source MACs and the ethertype that are given. */
static inline void fa_eth_src(struct spec_attr *a, const uint8_t *dst,
			      const uint8_t *src, uint16_t etype)
{
	struct ibv_flow_spec_eth *e = fa_add(a, sizeof(*e));

	e->type = IBV_FLOW_SPEC_ETH;
	e->size = sizeof(*e);
	if (dst) {
		memcpy(e->val.dst_mac, dst, 6);
		memset(e->mask.dst_mac, 0xff, 6);
	}
	if (src) {
		memcpy(e->val.src_mac, src, 6);
		memset(e->mask.src_mac, 0xff, 6);
	}
	if (etype) {
		e->val.ether_type = htons(etype);
		e->mask.ether_type = 0xffff;
	}
}

static inline void fa_eth(struct spec_attr *a, const uint8_t *dst,
			  uint16_t etype)
{
	fa_eth_src(a, dst, NULL, etype);
}

static inline void fa_ipv4(struct spec_attr *a, const char *src,
			   const char *dst)
{
	struct ibv_flow_spec_ipv4 *s = fa_add(a, sizeof(*s));

	s->type = IBV_FLOW_SPEC_IPV4;
	s->size = sizeof(*s);
	if (src) {
		inet_pton(AF_INET, src, &s->val.src_ip);
		s->mask.src_ip = 0xffffffff;
	}
	if (dst) {
		inet_pton(AF_INET, dst, &s->val.dst_ip);
		s->mask.dst_ip = 0xffffffff;
	}
}

static inline void fa_l4(struct spec_attr *a, int type, int dport)
{
	struct ibv_flow_spec_tcp_udp *s = fa_add(a, sizeof(*s));

	s->type = type;
	s->size = sizeof(*s);
	s->val.dst_port = htons(dport);
	s->mask.dst_port = 0xffff;
}

static inline void fa_tag(struct spec_attr *a, uint32_t tag)
{
	struct ibv_flow_spec_action_tag *t = fa_add(a, sizeof(*t));

	t->type = IBV_FLOW_SPEC_ACTION_TAG;
	t->size = sizeof(*t);
	t->tag_id = tag;
}

static inline void fa_drop(struct spec_attr *a)
{
	struct ibv_flow_spec_action_drop *d = fa_add(a, sizeof(*d));

	d->type = IBV_FLOW_SPEC_ACTION_DROP;
	d->size = sizeof(*d);
}


static inline void fa_count(struct spec_attr *a, struct ibv_counters *c)
{
	struct ibv_flow_spec_counter_action *s = fa_add(a, sizeof(*s));

	s->type = IBV_FLOW_SPEC_ACTION_COUNT;
	s->size = sizeof(*s);
	s->counters = c;
}

/* A rule for frames of ethertype @etype (and, if given, to @dst). */
static inline struct ibv_flow *eth_rule(struct ibv_qp *qp, const uint8_t *dst,
					uint16_t etype, int prio, int flags)
{
	struct spec_attr a;

	fa_init(&a, IBV_FLOW_ATTR_NORMAL, prio, flags);
	fa_eth(&a, dst, etype);
	return ibv_create_flow(qp, &a.attr);
}

/* A rule for frames to @dst of ethertype @etype, tagged @tag. */
static inline struct ibv_flow *mac_rule(struct ibv_qp *qp, const uint8_t *dst,
					uint16_t etype, uint32_t tag)
{
	struct spec_attr a;

	fa_init(&a, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_eth(&a, dst, etype);
	fa_tag(&a, tag);
	return ibv_create_flow(qp, &a.attr);
}

#ifdef NS

/* ---- sockets in the far namespace ---- */

/* A packet socket on the far end, for ethertype @proto; its ifindex. */
static inline int far_packet(uint16_t proto, int *ifindex, uint8_t mac[6])
{
	int s = sv_ns_socket(NS, AF_PACKET, SOCK_RAW, htons(proto));
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(proto) };
	struct ifreq ifr = {};

	if (s < 0)
		return -1;
	strcpy(ifr.ifr_name, FAR);
	if (ioctl(s, SIOCGIFINDEX, &ifr))
		return -1;
	sll.sll_ifindex = *ifindex = ifr.ifr_ifindex;
	if (ioctl(s, SIOCGIFHWADDR, &ifr))
		return -1;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (bind(s, (struct sockaddr *)&sll, sizeof(sll)))
		return -1;
	set_timeout(s, 2000);
	return s;
}

/* An ordinary UDP socket; far: in the peer namespace. Bound to @port. */
static inline int udp_socket(bool far, const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int s = far ? sv_ns_socket(NS, AF_INET, SOCK_DGRAM, 0) :
		      socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0)
		return -1;
	inet_pton(AF_INET, ip, &a.sin_addr);
	if (bind(s, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	set_timeout(s, 1500);
	return s;
}

static inline int udp_send(int s, const char *ip, int port, const void *p,
			   size_t n)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &a.sin_addr);
	return sendto(s, p, n, 0, (struct sockaddr *)&a, sizeof(a)) ==
	       (ssize_t)n ? 0 : -1;
}

/* Did the near stack's socket get @p? 1 yes, 0 nothing within @ms. */
static inline int udp_got(int s, const void *p, size_t n, int ms)
{
	char buf[2048];
	ssize_t r;

	set_timeout(s, ms);
	r = recv(s, buf, sizeof(buf), 0);
	if (r < 0)
		return 0;
	return r == (ssize_t)n && !memcmp(buf, p, n) ? 1 : -1;
}

#endif /* NS */

#ifdef NEAR_IP

/* ---- IPv4 between the two ends ---- */

/* An IPv4 packet to us of protocol @proto whose payload is @pl. */
static inline void ipv4_frame(struct frame *f, const uint8_t dst[6],
			      const uint8_t src[6], uint8_t proto,
			      const void *pl, size_t n)
{
	uint8_t *ip = f->b + 14;

	eth_frame(f, dst, src, ETH_P_IP, 0, 0);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = (20 + n) >> 8;
	ip[3] = (20 + n) & 0xff;
	ip[8] = 64;
	ip[9] = proto;
	inet_pton(AF_INET, FAR_IP, ip + 12);
	inet_pton(AF_INET, NEAR_IP, ip + 16);
	memcpy(ip + 20, pl, n);
	f->len = 14 + 20 + n;
}

/* A rule for UDP to NEAR_IP:@port. */
static inline struct ibv_flow *udp_rule(struct ibv_qp *qp,
					const uint8_t *mac, int port, int prio,
					int flags, uint32_t tag)
{
	struct spec_attr a;

	fa_init(&a, IBV_FLOW_ATTR_NORMAL, prio, flags);
	fa_eth(&a, mac, 0);
	fa_ipv4(&a, NULL, NEAR_IP);
	fa_l4(&a, IBV_FLOW_SPEC_UDP, port);
	if (tag)
		fa_tag(&a, tag);
	return ibv_create_flow(qp, &a.attr);
}

#endif /* NEAR_IP */

#endif /* SV_STEER_TEST_H */

/*
 * The fixture: where SV_VETH_FIXTURE is defined. A test may include this
 * file first without it (but with NS and FAR) and again, further down,
 * with it: the harness runs the fixtures in the order they are defined.
 */
#if defined(SV_VETH_FIXTURE) && !defined(SV_VETH_FIXTURE_DEFINED)
#define SV_VETH_FIXTURE_DEFINED

#if !defined(NS) || !defined(NEAR) || !defined(DEV)
#error "the fixture needs NS, NEAR, FAR and DEV"
#endif

/* The harness pastes names: expand SV_VETH_FIXTURE first. */
#define SV_VETH_FIXTURE_(name)	FIXTURE(name)
#define SV_VETH_SETUP_(name)	FIXTURE_SETUP(name)
#define SV_VETH_TEARDOWN_(name)	FIXTURE_TEARDOWN(name)
#define SV_VETH_DATA_(name)	FIXTURE_DATA(name)
#define SV_VETH_DATA		SV_VETH_DATA_(SV_VETH_FIXTURE)

#define SH(...) ({ char _c[1024]; snprintf(_c, sizeof(_c), __VA_ARGS__); \
		   system(_c); })

SV_VETH_FIXTURE_(SV_VETH_FIXTURE) {
	char svctl[PATH_MAX + 16];
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t mac[6], far_mac[6];
	int far_ifindex;
	int pkt;		/* far AF_PACKET socket, ETYPE */
#ifdef SV_VETH_MEMBERS
	SV_VETH_MEMBERS
#endif
};

/*
 * The namespace, the veth pair (up; IPv4 addresses if NEAR_IP; no IPv6
 * unless SV_VETH_IPV6), DEV bound to NEAR, self->pkt, and DEV opened with
 * a PD. ASSERTs: a failure ends the test (the harness longjmp()s).
 */
static inline void sv_veth_up(struct __test_metadata *_metadata,
			      SV_VETH_DATA *self)
{
	char cmd[PATH_MAX + 128];
	FILE *f;

	ASSERT_EQ(0, sv_svctl_path(self->svctl, sizeof(self->svctl)));
	SH("ip netns del " NS " 2>/dev/null; ip link del " NEAR
	   " 2>/dev/null");
	ASSERT_EQ(0, SH("ip netns add " NS " && ip link add " NEAR
			" type veth peer name " FAR " netns " NS));
#ifndef SV_VETH_IPV6
	ASSERT_EQ(0, SH("sysctl -qw net.ipv6.conf." NEAR ".disable_ipv6=1 && "
			"ip netns exec " NS " sysctl -qw net.ipv6.conf." FAR
			".disable_ipv6=1"));
#endif
#ifdef NEAR_IP
	ASSERT_EQ(0, SH("ip addr add " NEAR_IP "/24 dev " NEAR " && ip -n " NS
			" addr add " FAR_IP "/24 dev " FAR));
#endif
	ASSERT_EQ(0, SH("ip link set " NEAR " up && ip -n " NS
			" link set " FAR " up"));
	f = fopen("/sys/class/net/" NEAR "/address", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(6, fscanf(f, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &self->mac[0],
			    &self->mac[1], &self->mac[2], &self->mac[3],
			    &self->mac[4], &self->mac[5]));
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s link add " DEV " netdev " NEAR,
		 self->svctl);
	ASSERT_EQ(0, system(cmd));
	self->pkt = far_packet(ETYPE, &self->far_ifindex, self->far_mac);
	ASSERT_LE(0, self->pkt);
#ifdef NEAR_IP
	ASSERT_EQ(0, SH("ip -n " NS " neigh add " NEAR_IP " lladdr "
			"%02x:%02x:%02x:%02x:%02x:%02x dev " FAR,
			self->mac[0], self->mac[1], self->mac[2], self->mac[3],
			self->mac[4], self->mac[5]));
	ASSERT_EQ(0, SH("ip neigh add " FAR_IP " lladdr "
			"%02x:%02x:%02x:%02x:%02x:%02x dev " NEAR,
			self->far_mac[0], self->far_mac[1], self->far_mac[2],
			self->far_mac[3], self->far_mac[4], self->far_mac[5]));
#endif
	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	self->ctx = sv_open_named(self->list, DEV);
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
}

/* What sv_veth_up() made goes (the PD and context only if still set). */
static inline void sv_veth_down(struct __test_metadata *_metadata,
				SV_VETH_DATA *self)
{
	char cmd[PATH_MAX + 128];

	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
	if (self->pkt >= 0)
		close(self->pkt);
	snprintf(cmd, sizeof(cmd), "%s link del " DEV, self->svctl);
	if (system(cmd) || SH("ip link del " NEAR) || SH("ip netns del " NS))
		TH_LOG("cleanup failed");
}

#ifndef SV_VETH_OWN_SETUP
SV_VETH_SETUP_(SV_VETH_FIXTURE)
{
	sv_veth_up(_metadata, self);
}

SV_VETH_TEARDOWN_(SV_VETH_FIXTURE)
{
	sv_veth_down(_metadata, self);
}
#endif

#endif /* SV_VETH_FIXTURE */
