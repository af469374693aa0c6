// SPDX-License-Identifier: GPL-2.0
/*
 * Transmit offloads of RAW_PACKET QPs (Documentation/steering.rst, "TX
 * offloads"): IBV_SEND_IP_CSUM and IBV_WR_TSO, on the veth fixture of
 * sv_steer_test.h (svot0 bound to the device, svot1 in svot_peer).
 *
 * What leaves the QP is checked on the far side of the veth: byte for
 * byte with an AF_PACKET socket against checksums this file computes on
 * its own, and by the far kernel stack itself, whose UDP sockets drop a
 * datagram with a bad checksum and whose TCP socket takes a stream of TSO
 * segments only if every header and checksum is right. The TCP stream's
 * handshake is done from a raw QP too: its SYN goes out as a frame, the
 * SYN-ACK and later ACKs come back through an ibv_create_flow rule (so
 * the near kernel stack, which knows no such connection, never sends a
 * RST).
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"

#define SV_VETH_FIXTURE	offload
#define NS	"svot_peer"
#define NEAR	"svot0"
#define FAR	"svot1"
#define DEV	"svot"
#define NEAR_IP	"10.79.0.1"
#define FAR_IP	"10.79.0.2"

#include "sv_steer_test.h"
#include "sv_ring_test.h"

/* The far end's VLAN and IPv6 (far_extras()). */
#define VLAN_ID		10
#define FARV		FAR ".10"
#define NEAR_VIP	"10.80.0.1"
#define FAR_VIP		"10.80.0.2"
#define NEAR_IP6	"fd00:79::1"
#define FAR_IP6		"fd00:79::2"
#define NEAR_VIP6	"fd00:80::1"
#define FAR_VIP6	"fd00:80::2"

#define MAX_TSO_HDR	128
#define SEND_AREA	(NRECV * 2048)	/* r->buf: frames to send from */

#define TCPF_FIN	0x01
#define TCPF_SYN	0x02
#define TCPF_RST	0x04
#define TCPF_PSH	0x08
#define TCPF_ACK	0x10
#define TCPF_CWR	0x80

typedef FIXTURE_DATA(offload) fx_t;

/* ---- the far end: a VLAN, IPv6 ---- */

static int far_extras(fx_t *self)
{
	const uint8_t *m = self->mac;

	return SH("ip -n " NS " link add link " FAR " name " FARV
		  " type vlan id %d && ip -n " NS " addr add " FAR_VIP
		  "/24 dev " FARV " && ip -n " NS " link set " FARV " up && "
		  "ip netns exec " NS " sysctl -qw net/ipv6/conf/" FAR
		  "/disable_ipv6=0 net/ipv6/conf/" FARV "/disable_ipv6=0 && "
		  "ip -n " NS " addr add " FAR_IP6 "/64 dev " FAR " nodad && "
		  "ip -n " NS " addr add " FAR_VIP6 "/64 dev " FARV " nodad && "
		  "for a in " NEAR_IP6 "/" FAR " " NEAR_VIP "/" FARV " "
		  NEAR_VIP6 "/" FARV "; do ip -n " NS " neigh add ${a%%/*} "
		  "lladdr %02x:%02x:%02x:%02x:%02x:%02x dev ${a##*/} || "
		  "exit 1; done", VLAN_ID, m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* ---- frames ---- */

/* Where a frame's layers are. */
struct pkt {
	uint8_t b[2048];
	size_t len;
	size_t l3, l4;
	bool v6;
	uint8_t proto;
};

/* Addresses: VLAN frames go to the far VLAN interface. */
static void addrs(bool v6, bool vlan, uint8_t *src, uint8_t *dst)
{
	if (v6) {
		inet_pton(AF_INET6, vlan ? NEAR_VIP6 : NEAR_IP6, src);
		inet_pton(AF_INET6, vlan ? FAR_VIP6 : FAR_IP6, dst);
	} else {
		inet_pton(AF_INET, vlan ? NEAR_VIP : NEAR_IP, src);
		inet_pton(AF_INET, vlan ? FAR_VIP : FAR_IP, dst);
	}
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static uint16_t get16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/*
 * A frame from us to the far end: Ethernet (to @dst, VLAN_ID tagged if
 * @vlan), IPv4 (ID @ipid) or IPv6, a UDP or TCP header of @l4h bytes
 * (TCP: ACK|PSH; options NOPs) from port 9000 to @dport, @n payload bytes
 * of pattern @seed. Every checksum field is zero.
 */
static void mk_frame(struct pkt *p, const fx_t *self, const uint8_t *dst,
		     bool v6, bool vlan, uint8_t proto, size_t l4h,
		     uint16_t dport, uint16_t ipid, size_t n, int seed)
{
	uint8_t *b = p->b, *ip, *l4;
	size_t l4len = l4h + n;

	memset(p, 0, sizeof(*p));
	memcpy(b, dst, 6);
	memcpy(b + 6, self->mac, 6);
	p->l3 = 14;
	if (vlan) {
		put16(b + 12, 0x8100);
		put16(b + 14, VLAN_ID);
		p->l3 = 18;
	}
	put16(b + p->l3 - 2, v6 ? 0x86dd : 0x0800);
	ip = b + p->l3;
	if (v6) {
		ip[0] = 0x60;
		put16(ip + 4, l4len);
		ip[6] = proto;
		ip[7] = 64;
		addrs(true, vlan, ip + 8, ip + 24);
		p->l4 = p->l3 + 40;
	} else {
		ip[0] = 0x45;
		put16(ip + 2, 20 + l4len);
		put16(ip + 4, ipid);
		ip[6] = 0x40;		/* DF */
		ip[8] = 64;
		ip[9] = proto;
		addrs(false, vlan, ip + 12, ip + 16);
		p->l4 = p->l3 + 20;
	}
	l4 = b + p->l4;
	put16(l4, 9000);
	put16(l4 + 2, dport);
	if (proto == IPPROTO_UDP) {
		put16(l4 + 4, l4len);
	} else if (proto == IPPROTO_TCP) {
		put32(l4 + 4, 0x01020304);
		l4[12] = (l4h / 4) << 4;
		l4[13] = TCPF_ACK | TCPF_PSH;
		put16(l4 + 14, 8192);
		memset(l4 + 20, 1, l4h - 20);		/* NOPs */
	}
	sv_fill((char *)l4 + l4h, n, seed);
	p->v6 = v6;
	p->proto = proto;
	p->len = p->l4 + l4len;
}

/*
 * This file's own idea of the checksums IP_CSUM and TSO fill in: the IPv4
 * header's, then the TCP or UDP one over the pseudo-header (the L4 length
 * from the IP header). A UDP sum of 0 is sent as 0xffff.
 */
static void ref_csum(struct pkt *p)
{
	uint8_t *ip = p->b + p->l3, *l4 = p->b + p->l4;
	size_t l4len, off;
	uint32_t s;
	uint16_t c;

	if (p->v6) {
		l4len = get16(ip + 4);
		s = sum16(ip + 8, 32, 0);
	} else {
		put16(ip + 10, 0);
		put16(ip + 10, csum_fold(sum16(ip, (ip[0] & 0xf) * 4, 0)));
		l4len = get16(ip + 2) - (ip[0] & 0xf) * 4;
		s = sum16(ip + 12, 8, 0);
	}
	if (p->proto != IPPROTO_TCP && p->proto != IPPROTO_UDP)
		return;
	s += p->proto + (l4len & 0xffff) + (l4len >> 16);
	off = p->proto == IPPROTO_TCP ? 16 : 6;
	put16(l4 + off, 0);
	c = csum_fold(sum16(l4, l4len, s));
	if (p->proto == IPPROTO_UDP && !c)
		c = 0xffff;
	put16(l4 + off, c);
}

/* Describe a captured frame (layers, protocol) in p; false if not IP. */
static bool parse(struct pkt *p)
{
	uint16_t et;

	p->l3 = 14;
	et = get16(p->b + 12);
	if (et == 0x8100) {
		et = get16(p->b + 16);
		p->l3 = 18;
	}
	if (et == 0x0800) {
		p->v6 = false;
		p->proto = p->b[p->l3 + 9];
		p->l4 = p->l3 + (p->b[p->l3] & 0xf) * 4;
	} else if (et == 0x86dd) {
		p->v6 = true;
		p->proto = p->b[p->l3 + 6];
		p->l4 = p->l3 + 40;
	} else {
		return false;
	}
	return p->len >= p->l4 + 4;
}

/* ---- the far end's view: AF_PACKET with the VLAN tag put back ---- */

static int far_capture(const fx_t *self)
{
	int s = sv_ns_socket(NS, AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = self->far_ifindex };
	int one = 1;

	if (s < 0 || bind(s, (struct sockaddr *)&sll, sizeof(sll)) ||
	    setsockopt(s, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)))
		return -1;
	set_timeout(s, 2000);
	return s;
}

/*
 * The next frame the far end receives (not one it sends) whose L4
 * destination port is @dport, or (@dport 0) whose IPv4 ID is @ipid:
 * 1 and the frame in p, 0 if none comes within @ms.
 */
static int cap_next(int s, struct pkt *p, uint16_t dport, uint16_t ipid,
		    int ms)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} ctl;
	struct sockaddr_ll from;
	struct iovec iov;
	struct msghdr m;
	struct cmsghdr *c;
	struct timespec t0, t;
	ssize_t n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return 0;
		memset(&m, 0, sizeof(m));
		iov.iov_base = p->b + 4;	/* room to put a tag back */
		iov.iov_len = sizeof(p->b) - 4;
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_control = &ctl;
		m.msg_controllen = sizeof(ctl);
		m.msg_name = &from;
		m.msg_namelen = sizeof(from);
		set_timeout(s, 100);
		n = recvmsg(s, &m, 0);
		if (n < 14 || from.sll_pkttype == PACKET_OUTGOING)
			continue;
		p->len = n;
		memmove(p->b, p->b + 4, n);
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			struct tpacket_auxdata a;

			if (c->cmsg_level != SOL_PACKET ||
			    c->cmsg_type != PACKET_AUXDATA)
				continue;
			memcpy(&a, CMSG_DATA(c), sizeof(a));
			if (!(a.tp_status & TP_STATUS_VLAN_VALID))
				continue;
			memmove(p->b + 16, p->b + 12, n - 12);
			put16(p->b + 12, a.tp_status & TP_STATUS_VLAN_TPID_VALID ?
				     a.tp_vlan_tpid : 0x8100);
			put16(p->b + 14, a.tp_vlan_tci);
			p->len += 4;
		}
		if (!parse(p))
			continue;
		if (dport && (p->proto == IPPROTO_TCP ||
			      p->proto == IPPROTO_UDP) &&
		    get16(p->b + p->l4 + 2) == dport)
			return 1;
		if (!dport && !p->v6 && get16(p->b + p->l3 + 4) == ipid)
			return 1;
	}
}

/* A UDP socket of the far end, IPv4 or IPv6, on @ip port @port. */
static int far_udp(const char *ip, int port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(port) };
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	bool v6 = strchr(ip, ':');
	int s = sv_ns_socket(NS, v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);

	if (s < 0)
		return -1;
	inet_pton(AF_INET, ip, &a.sin_addr);
	inet_pton(AF_INET6, ip, &a6.sin6_addr);
	if (v6 ? bind(s, (struct sockaddr *)&a6, sizeof(a6)) :
		 bind(s, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	return s;
}

/* ---- the QP ---- */

/* A raw QP for this file: TSO headers, 4 SGEs, 256 bytes inline, qp_ex. */
static int oqp_open(fx_t *self, struct rawqp *r, uint16_t max_tso_header)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 4, .max_recv_sge = 1,
			 .max_inline_data = 256 },
		.comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};

	if (max_tso_header) {
		ia.comp_mask |= IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
		ia.max_tso_header = max_tso_header;
		ia.send_ops_flags |= IBV_QP_EX_WITH_TSO;
	}
	return rawqp_open_attr(self->ctx, self->pd, r, &ia);
}

/* Back to RTS after an error (nothing else is posted). */
static int oqp_recover(struct rawqp *r)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc;
	int i;

	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE) || raw_qp_init(r->qp))
		return -1;
	/* The receives were flushed: the CQ has them; post them again. */
	while (ibv_poll_cq(r->cq, 1, &wc) > 0)
		;
	for (i = 0; i < NRECV; i++)
		if (post_rq(r, i))
			return -1;
	return 0;
}

/*
 * The completion of send @id: its status, or -1 if none comes within 5 s.
 * Receives on the way are reposted.
 */
static int tx_wait(struct rawqp *r, uint64_t id)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 5000 * sv_slow(); i++) {
		if (!rx_poll(r, &wc, NULL, 1))
			continue;
		/*
		 * A RAW_PACKET QP's receives complete as IBV_WC_RECV; an error
		 * completion's opcode is unspecified (ibv_poll_cq(3)), and
		 * a scribbled UMR opcode is MLX5DV_WC_UMR, which has the
		 * IBV_WC_RECV bit: compare, do not mask.
		 */
		if (wc.opcode == IBV_WC_RECV) {
			if (wc.status == IBV_WC_SUCCESS)
				post_rq(r, wc.wr_id);
			continue;
		}
		if (wc.wr_id == id)
			return wc.status;
	}
	return -1;
}

/*
 * Send p as one frame with @flags: inline, or (@nsge 1..3) gathered from
 * the QP's send area in that many pieces, cut inside the headers.
 */
static int send_frame(struct rawqp *r, const struct pkt *p, int flags,
		      int nsge, uint64_t id)
{
	char *area = r->buf + SEND_AREA;
	struct ibv_sge sg[3];
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = sg,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED | flags };
	struct ibv_send_wr *bad;
	size_t cut[4] = { 0, 10, p->l4 + 3, p->len };
	int i;

	if (!nsge) {
		sg[0] = (struct ibv_sge){ (uintptr_t)p->b, p->len, 0 };
		wr.num_sge = 1;
		wr.send_flags |= IBV_SEND_INLINE;
	} else {
		memcpy(area, p->b, p->len);
		if (nsge == 1)
			cut[1] = p->len;
		for (i = 0; i < nsge; i++)
			sg[i] = (struct ibv_sge){ (uintptr_t)area + cut[i],
						  (nsge == i + 1 ? p->len :
						   cut[i + 1]) - cut[i],
						  r->mr->lkey };
		wr.num_sge = nsge;
	}
	if (ibv_post_send(r->qp, &wr, &bad))
		return -1;
	return tx_wait(r, id) == IBV_WC_SUCCESS ? 0 : -1;
}

/* The capabilities ibv_query_device_ex reports: bound devices only. */
TEST_F_TIMEOUT(offload, caps, 90)
{
	struct ibv_device_attr_ex ex;
	struct ibv_context *c0;

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_TRUE(ex.raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM);
	EXPECT_TRUE(ex.device_cap_flags_ex & IBV_DEVICE_RAW_IP_CSUM);
	EXPECT_TRUE(ex.orig_attr.device_cap_flags & IBV_DEVICE_RAW_IP_CSUM);
	EXPECT_FALSE(ex.orig_attr.device_cap_flags & IBV_DEVICE_UD_IP_CSUM);
	EXPECT_EQ(256 * 1024, ex.tso_caps.max_tso);
	EXPECT_EQ(1U << IBV_QPT_RAW_PACKET, ex.tso_caps.supported_qpts);

	c0 = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, c0);
	ASSERT_EQ(0, ibv_query_device_ex(c0, NULL, &ex));
	EXPECT_FALSE(ex.raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM);
	EXPECT_FALSE(ex.device_cap_flags_ex & IBV_DEVICE_RAW_IP_CSUM);
	EXPECT_EQ(0, ex.tso_caps.max_tso);
	EXPECT_EQ(0, ex.tso_caps.supported_qpts);
	ibv_close_device(c0);
}

/* Post p with IP_CSUM; the far end must see exactly ref (and @got it). */
static int csum_case(struct rawqp *r, int cap, struct pkt *p, int nsge,
		     uint16_t dport, uint16_t ipid)
{
	struct pkt ref = *p, got;

	ref_csum(&ref);
	if (send_frame(r, p, IBV_SEND_IP_CSUM, nsge, dport ?: ipid))
		return -1;
	if (cap_next(cap, &got, dport, ipid, 2000 * sv_slow()) != 1)
		return -2;
	if (got.len != ref.len || memcmp(got.b, ref.b, ref.len))
		return -3;
	return 0;
}

/* The payload of a far UDP socket's next datagram is that of p. */
static int udp_payload_is(int s, const struct pkt *p)
{
	char buf[2048];
	size_t n = p->len - p->l4 - 8;
	ssize_t got;

	set_timeout(s, 2000 * sv_slow());
	got = recv(s, buf, sizeof(buf), 0);
	return got == (ssize_t)n && !memcmp(buf, p->b + p->l4 + 8, n);
}

/*
 * IP_CSUM fills in the checksums of the frame as posted: IPv4/UDP
 * (inline), IPv4/TCP (three SGEs, cut inside the headers), IPv6/UDP, a
 * VLAN-tagged IPv4/UDP, a UDP sum that computes to 0 (0xffff), through
 * ibv_post_send and the ibv_wr_* builders; the far stack's UDP sockets
 * take the datagrams. Not-TCP/UDP IPv4 gets its header sum only, a
 * non-IP frame goes out unchanged.
 */
TEST_F_TIMEOUT(offload, ip_csum, 90)
{
	int cap = far_capture(self), s4, s6, sv, s0;
	struct ibv_qp_ex *qx;
	struct frame f;
	struct pkt p, got;
	struct rawqp r;
	uint16_t c;
	ssize_t n;

	ASSERT_EQ(0, far_extras(self));
	s4 = far_udp(FAR_IP, 7001);
	s6 = far_udp(FAR_IP6, 7003);
	sv = far_udp(FAR_VIP, 7004);
	s0 = far_udp(FAR_IP, 7005);
	ASSERT_LE(0, cap);
	ASSERT_LE(0, s4);
	ASSERT_LE(0, s6);
	ASSERT_LE(0, sv);
	ASSERT_LE(0, s0);
	ASSERT_EQ(0, oqp_open(self, &r, 0));

	mk_frame(&p, self, self->far_mac, false, false, IPPROTO_UDP, 8, 7001,
		 1, 100, 1);
	EXPECT_EQ(0, csum_case(&r, cap, &p, 0, 7001, 0));
	EXPECT_TRUE(udp_payload_is(s4, &p));

	mk_frame(&p, self, self->far_mac, false, false, IPPROTO_TCP, 32, 7002,
		 2, 333, 2);
	EXPECT_EQ(0, csum_case(&r, cap, &p, 3, 7002, 0));

	mk_frame(&p, self, self->far_mac, true, false, IPPROTO_UDP, 8, 7003,
		 0, 201, 3);
	EXPECT_EQ(0, csum_case(&r, cap, &p, 1, 7003, 0));
	EXPECT_TRUE(udp_payload_is(s6, &p));

	mk_frame(&p, self, self->far_mac, false, true, IPPROTO_UDP, 8, 7004,
		 4, 150, 4);
	EXPECT_EQ(0, csum_case(&r, cap, &p, 0, 7004, 0));
	EXPECT_TRUE(udp_payload_is(sv, &p));

	/* A payload word that makes the sum 0: sent as 0xffff. */
	mk_frame(&p, self, self->far_mac, false, false, IPPROTO_UDP, 8, 7005,
		 5, 64, 5);
	put16(p.b + p.len - 2, 0);
	got = p;
	ref_csum(&got);
	c = get16(got.b + got.l4 + 6);
	put16(p.b + p.len - 2, c);
	got = p;
	ref_csum(&got);
	ASSERT_EQ(0xffff, get16(got.b + got.l4 + 6));
	EXPECT_EQ(0, csum_case(&r, cap, &p, 2, 7005, 0));
	EXPECT_TRUE(udp_payload_is(s0, &p));

	/* IPv4 of another protocol: the header's sum only. */
	mk_frame(&p, self, self->far_mac, false, false, 253, 8, 0, 0x4242,
		 50, 6);
	put16(p.b + p.l4 + 6, 0xabcd);
	EXPECT_EQ(0, csum_case(&r, cap, &p, 0, 0, 0x4242));

	/* Through the builders: wr_flags. */
	qx = ibv_qp_to_qp_ex(r.qp);
	ASSERT_NE(NULL, qx);
	mk_frame(&p, self, self->far_mac, false, false, IPPROTO_UDP, 8, 7001,
		 7, 77, 7);
	got = p;
	ref_csum(&got);
	ibv_wr_start(qx);
	qx->wr_id = 99;
	qx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM;
	ibv_wr_send(qx);
	ibv_wr_set_inline_data(qx, p.b, p.len);
	ASSERT_EQ(0, ibv_wr_complete(qx));
	EXPECT_EQ(IBV_WC_SUCCESS, tx_wait(&r, 99));
	p = got;
	ASSERT_EQ(1, cap_next(cap, &got, 7001, 0, 2000 * sv_slow()));
	EXPECT_EQ(p.len, got.len);
	EXPECT_EQ(0, memcmp(p.b, got.b, p.len));
	EXPECT_TRUE(udp_payload_is(s4, &p));

	/* Not IP: as posted. */
	eth_frame(&f, self->far_mac, self->mac, ETYPE, 8, 60);
	memcpy(p.b, f.b, f.len);
	p.len = f.len;
	p.l4 = 14;
	ASSERT_EQ(0, send_frame(&r, &p, IBV_SEND_IP_CSUM, 1, 8));
	n = recv(self->pkt, got.b, sizeof(got.b), 0);
	EXPECT_EQ((ssize_t)f.len, n);
	EXPECT_EQ(0, memcmp(got.b, f.b, f.len));

	rawqp_close(&r);
	close(cap);
	close(s4);
	close(s6);
	close(sv);
	close(s0);
}

/* Without IP_CSUM a frame goes out exactly as posted: a bad sum stays. */
TEST_F_TIMEOUT(offload, no_ip_csum_as_posted, 90)
{
	int cap = far_capture(self), s = far_udp(FAR_IP, 7011);
	struct pkt p, got;
	struct rawqp r;
	char buf[64];

	ASSERT_LE(0, cap);
	ASSERT_LE(0, s);
	ASSERT_EQ(0, oqp_open(self, &r, 0));
	mk_frame(&p, self, self->far_mac, false, false, IPPROTO_UDP, 8, 7011,
		 11, 40, 11);
	ref_csum(&p);
	put16(p.b + p.l4 + 6, get16(p.b + p.l4 + 6) ^ 0x0101);
	ASSERT_EQ(0, send_frame(&r, &p, 0, 2, 1));
	ASSERT_EQ(1, cap_next(cap, &got, 7011, 0, 2000 * sv_slow()));
	EXPECT_EQ(p.len, got.len);
	EXPECT_EQ(0, memcmp(p.b, got.b, p.len));
	/* ... and the far stack drops it. */
	set_timeout(s, 300);
	EXPECT_GT(0, recv(s, buf, sizeof(buf), 0));

	/* The same frame with IP_CSUM: repaired, taken. */
	ASSERT_EQ(0, send_frame(&r, &p, IBV_SEND_IP_CSUM, 2, 2));
	ref_csum(&p);
	ASSERT_EQ(1, cap_next(cap, &got, 7011, 0, 2000 * sv_slow()));
	EXPECT_EQ(0, memcmp(p.b, got.b, p.len));
	EXPECT_TRUE(udp_payload_is(s, &p));
	rawqp_close(&r);
	close(cap);
	close(s);
}

/* ---- TSO ---- */

/* A registered buffer for TSO payloads. */
struct payload {
	uint8_t *b;
	size_t len;
	struct ibv_mr *mr;
};

static int payload_open(fx_t *self, struct payload *pl, size_t len, int seed)
{
	pl->len = len;
	pl->b = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!pl->b)
		return -1;
	sv_fill((char *)pl->b, len, seed);
	pl->mr = ibv_reg_mr(self->pd, pl->b, len, IBV_ACCESS_LOCAL_WRITE);
	return pl->mr ? 0 : -1;
}

static void payload_close(struct payload *pl)
{
	if (pl->mr)
		ibv_dereg_mr(pl->mr);
	free(pl->b);
}

/* Post a TSO WQE: header @hdr, payload from @nsge SGEs, segments of mss. */
static int post_tso(struct rawqp *r, const void *hdr, uint16_t hdr_sz,
		    uint16_t mss, const struct ibv_sge *sg, int nsge,
		    int flags, uint64_t id)
{
	struct ibv_send_wr wr = { .wr_id = id, .opcode = IBV_WR_TSO,
				  .sg_list = (struct ibv_sge *)sg,
				  .num_sge = nsge,
				  .send_flags = IBV_SEND_SIGNALED | flags };
	struct ibv_send_wr *bad;

	wr.tso.hdr = (void *)hdr;
	wr.tso.hdr_sz = hdr_sz;
	wr.tso.mss = mss;
	return ibv_post_send(r->qp, &wr, &bad);
}

/*
 * What segment i of a TSO must be, from its header template @tpl (of
 * tpl->len bytes) and the payload's @n bytes at @data.
 */
static void seg_expect(struct pkt *e, const struct pkt *tpl, int i,
		       int nseg, uint32_t off, const uint8_t *data, size_t n)
{
	uint8_t *ip, *th;
	size_t hl;

	*e = *tpl;
	ip = e->b + e->l3;
	th = e->b + e->l4;
	hl = tpl->len;
	memcpy(e->b + hl, data, n);
	e->len = hl + n;
	if (e->v6) {
		put16(ip + 4, e->len - e->l4);
	} else {
		put16(ip + 2, e->len - e->l3);
		put16(ip + 4, get16(ip + 4) + i);
	}
	put32(th + 4, get32(th + 4) + off);
	if (i != nseg - 1)
		th[13] &= ~(TCPF_FIN | TCPF_PSH);
	if (i)
		th[13] &= ~TCPF_CWR;
	ref_csum(e);
}

/* The next frame a sniffer QP got from @mac, to @dport: 1 and it, or 0. */
static int sniffed(struct rawqp *r, struct pkt *p, const uint8_t *mac,
		   uint16_t dport)
{
	struct ibv_wc wc;

	while (rx_poll(r, &wc, NULL, 2000 * sv_slow())) {
		if (wc.status != IBV_WC_SUCCESS)
			return 0;
		p->len = wc.byte_len;
		memcpy(p->b, r->buf + wc.wr_id * 2048, p->len);
		post_rq(r, wc.wr_id);
		if (parse(p) && !memcmp(p->b + 6, mac, 6) &&
		    get16(p->b + p->l4 + 2) == dport)
			return 1;
	}
	return 0;
}

/*
 * The segments a TSO makes, on the wire: count, lengths, IPv4 IDs (from
 * 0xfffe, wrapping), sequence numbers (wrapping), FIN/PSH on the last and
 * CWR on the first only, IPv4 and TCP options kept, checksums; a payload
 * gathered from three SGEs whose bounds fall inside segments; each
 * segment counted in tx_packets and seen by a sniffer. Then VLAN + IPv6
 * through ibv_wr_send_tso, and a TSO without payload (one frame).
 */
TEST_F_TIMEOUT(offload, tso_segments, 120)
{
	static const size_t part[3][2] = { { 0, 1200 }, { 5000, 1100 },
					   { 9000, 1200 } };
	int cap = far_capture(self);
	long long pkts, bytes, sent = 0;
	struct pkt tpl, e, got;
	struct rawqp r, sn;
	struct ibv_flow *snf;
	struct spec_attr a;
	struct payload pl;
	struct ibv_sge sg[3];
	struct ibv_qp_ex *qx;
	uint8_t data[3500];
	size_t n, off;
	uint8_t *ip;
	int i;

	ASSERT_LE(0, cap);
	ASSERT_EQ(0, far_extras(self));
	ASSERT_EQ(0, oqp_open(self, &r, MAX_TSO_HDR));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &sn, IBV_QPT_RAW_PACKET,
				0));
	fa_init(&a, IBV_FLOW_ATTR_SNIFFER, 0, 0);
	snf = ibv_create_flow(sn.qp, &a.attr);
	ASSERT_NE(NULL, snf);
	ASSERT_EQ(0, payload_open(self, &pl, 16384, 21));

	/* IPv4 with 4 bytes of options, TCP with 12, every flag we fix. */
	mk_frame(&tpl, self, self->far_mac, false, false, IPPROTO_TCP, 32,
		 7100, 0xfffe, 0, 0);
	ip = tpl.b + tpl.l3;
	memmove(ip + 24, ip + 20, 32);
	memcpy(ip + 20, "\x01\x01\x01\x00", 4);
	ip[0] = 0x46;
	tpl.l4 += 4;
	tpl.len += 4;
	put32(tpl.b + tpl.l4 + 4, 0xfffff800);
	tpl.b[tpl.l4 + 13] = TCPF_CWR | TCPF_ACK | TCPF_PSH | TCPF_FIN;
	for (i = 0, off = 0; i < 3; off += part[i][1], i++) {
		sg[i] = (struct ibv_sge){ (uintptr_t)pl.b + part[i][0],
					  part[i][1], pl.mr->lkey };
		memcpy(data + off, pl.b + part[i][0], part[i][1]);
	}
	pkts = sv_stat_of(self->svctl, DEV, "tx_packets");
	bytes = sv_stat_of(self->svctl, DEV, "tx_bytes");
	ASSERT_EQ(0, post_tso(&r, tpl.b, tpl.len, 1000, sg, 3, 0, 1));
	EXPECT_EQ(IBV_WC_SUCCESS, tx_wait(&r, 1));
	for (i = 0, off = 0; i < 4; i++, off += n) {
		n = i < 3 ? 1000 : 500;
		seg_expect(&e, &tpl, i, 4, off, data + off, n);
		ASSERT_EQ(1, cap_next(cap, &got, 7100, 0, 2000 * sv_slow()));
		EXPECT_EQ(e.len, got.len);
		EXPECT_EQ(0, memcmp(e.b, got.b, e.len)) {
			TH_LOG("segment %d differs", i);
		}
		EXPECT_EQ((0xfffe + i) & 0xffff, get16(got.b + got.l3 + 4));
		EXPECT_EQ(0xfffff800 + (uint32_t)off,
			  get32(got.b + got.l4 + 4));
		sent += e.len;
		/* The sniffer's copy (it sees the far end's frames too). */
		ASSERT_EQ(1, sniffed(&sn, &got, self->mac, 7100));
		EXPECT_EQ(e.len, got.len);
		EXPECT_EQ(0, memcmp(got.b, e.b, e.len));
	}
	EXPECT_EQ(0, cap_next(cap, &got, 7100, 0, 200));
	EXPECT_EQ(pkts + 4, sv_stat_of(self->svctl, DEV, "tx_packets"));
	EXPECT_EQ(bytes + sent, sv_stat_of(self->svctl, DEV, "tx_bytes"));
	EXPECT_EQ(0, ibv_destroy_flow(snf));
	rawqp_close(&sn);

	/* VLAN + IPv6 through the builders: 1200, 1200, 100. */
	mk_frame(&tpl, self, self->far_mac, true, true, IPPROTO_TCP, 20, 7101,
		 0, 0, 0);
	tpl.b[tpl.l4 + 13] = TCPF_ACK | TCPF_PSH;
	qx = ibv_qp_to_qp_ex(r.qp);
	ASSERT_NE(NULL, qx);
	ibv_wr_start(qx);
	qx->wr_id = 2;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_tso(qx, tpl.b, tpl.len, 1200);
	ibv_wr_set_sge(qx, pl.mr->lkey, (uintptr_t)pl.b + 100, 2500);
	ASSERT_EQ(0, ibv_wr_complete(qx));
	EXPECT_EQ(IBV_WC_SUCCESS, tx_wait(&r, 2));
	for (i = 0, off = 0; i < 3; i++, off += n) {
		n = i < 2 ? 1200 : 100;
		seg_expect(&e, &tpl, i, 3, off, pl.b + 100 + off, n);
		ASSERT_EQ(1, cap_next(cap, &got, 7101, 0, 2000 * sv_slow()));
		EXPECT_EQ(e.len, got.len);
		EXPECT_EQ(0, memcmp(e.b, got.b, e.len)) {
			TH_LOG("IPv6 segment %d differs", i);
		}
	}

	/* No payload: the header alone, its flags as they are. */
	mk_frame(&tpl, self, self->far_mac, false, false, IPPROTO_TCP, 20,
		 7102, 77, 0, 0);
	tpl.b[tpl.l4 + 13] = TCPF_CWR | TCPF_ACK | TCPF_FIN;
	ASSERT_EQ(0, post_tso(&r, tpl.b, tpl.len, 1000, NULL, 0, 0, 3));
	EXPECT_EQ(IBV_WC_SUCCESS, tx_wait(&r, 3));
	seg_expect(&e, &tpl, 0, 1, 0, NULL, 0);
	ASSERT_EQ(1, cap_next(cap, &got, 7102, 0, 2000 * sv_slow()));
	EXPECT_EQ(e.len, got.len);
	EXPECT_EQ(0, memcmp(e.b, got.b, e.len));

	payload_close(&pl);
	rawqp_close(&r);
	close(cap);
}

/*
 * TSO segments to the device's own MAC go through the e-switch into its
 * own steering (a rule of another QP takes each), not out on the wire.
 */
TEST_F_TIMEOUT(offload, tso_eswitch, 90)
{
	int cap = far_capture(self);
	struct rawqp r, dst;
	struct ibv_flow *fl;
	struct spec_attr a;
	struct payload pl;
	struct ibv_sge sg;
	struct pkt tpl, e, got;
	struct ibv_wc wc;
	size_t n, off;
	int i;

	ASSERT_LE(0, cap);
	ASSERT_EQ(0, oqp_open(self, &r, MAX_TSO_HDR));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &dst, IBV_QPT_RAW_PACKET,
				0));
	fa_init(&a, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_eth(&a, self->mac, 0);
	fa_ipv4(&a, NULL, FAR_IP);
	fa_l4(&a, IBV_FLOW_SPEC_TCP, 7200);
	fl = ibv_create_flow(dst.qp, &a.attr);
	ASSERT_NE(NULL, fl);
	ASSERT_EQ(0, payload_open(self, &pl, 4096, 31));
	mk_frame(&tpl, self, self->mac, false, false, IPPROTO_TCP, 20, 7200,
		 500, 0, 0);
	sg = (struct ibv_sge){ (uintptr_t)pl.b, 2500, pl.mr->lkey };
	ASSERT_EQ(0, post_tso(&r, tpl.b, tpl.len, 1000, &sg, 1, 0, 1));
	EXPECT_EQ(IBV_WC_SUCCESS, tx_wait(&r, 1));
	for (i = 0, off = 0; i < 3; i++, off += n) {
		n = i < 2 ? 1000 : 500;
		seg_expect(&e, &tpl, i, 3, off, pl.b + off, n);
		ASSERT_EQ(1, rx_poll(&dst, &wc, NULL, 2000 * sv_slow()));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(e.len, wc.byte_len);
		EXPECT_EQ(0, memcmp(dst.buf + wc.wr_id * 2048, e.b, e.len));
		post_rq(&dst, wc.wr_id);
	}
	EXPECT_EQ(0, cap_next(cap, &got, 7200, 0, 300));
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	payload_close(&pl);
	rawqp_close(&dst);
	rawqp_close(&r);
	close(cap);
}

/* ---- a TCP connection from a raw QP ---- */

struct conn {
	bool v6, vlan;
	uint16_t sport, dport;
	uint32_t snd_una, snd_nxt, rcv_nxt;
	uint32_t wnd;
	uint16_t ipid;
};

/* The header of our next segment: @flags, seq @seq, MSS option on SYN. */
static void conn_hdr(const fx_t *self, struct conn *c, struct pkt *p,
		     uint8_t flags, uint32_t seq)
{
	uint8_t *th;

	mk_frame(p, self, self->far_mac, c->v6, c->vlan, IPPROTO_TCP,
		 flags & TCPF_SYN ? 24 : 20, c->dport, c->ipid++, 0, 0);
	th = p->b + p->l4;
	put16(th, c->sport);
	put32(th + 4, seq);
	put32(th + 8, c->rcv_nxt);
	th[13] = flags;
	put16(th + 14, 65535);
	if (flags & TCPF_SYN)
		memcpy(th + 20, "\x02\x04\x03\xe8", 4);	/* MSS 1000 */
}

/* The rule that brings the far end's segments to us: dport c->sport. */
static struct ibv_flow *conn_rule(const fx_t *self, struct rawqp *r,
				  const struct conn *c)
{
	struct ibv_flow_spec_ipv6 *s6;
	struct spec_attr a;

	fa_init(&a, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_eth(&a, self->mac, 0);
	if (c->v6) {
		s6 = fa_add(&a, sizeof(*s6));
		s6->type = IBV_FLOW_SPEC_IPV6;
		s6->size = sizeof(*s6);
		inet_pton(AF_INET6, c->vlan ? NEAR_VIP6 : NEAR_IP6,
			  s6->val.dst_ip);
		memset(s6->mask.dst_ip, 0xff, 16);
	} else {
		fa_ipv4(&a, NULL, c->vlan ? NEAR_VIP : NEAR_IP);
	}
	fa_l4(&a, IBV_FLOW_SPEC_TCP, c->sport);
	return ibv_create_flow(r->qp, &a.attr);
}

/*
 * One completion of r, within @ms: a receive updates c from the far end's
 * segment (1: it was a segment of ours; its flags in *flags), a send is
 * checked (0, or -1 if it failed); -2 if nothing came.
 */
static int conn_poll(struct rawqp *r, struct conn *c, uint8_t *flags,
		     int ms, int *inflight)
{
	struct ibv_wc wc;
	struct pkt p;
	uint32_t ack;
	uint8_t *th;

	if (!rx_poll(r, &wc, NULL, ms))
		return -2;
	if (!(wc.opcode & IBV_WC_RECV)) {
		(*inflight)--;
		return wc.status == IBV_WC_SUCCESS ? 0 : -1;
	}
	if (wc.status != IBV_WC_SUCCESS)
		return -1;
	p.len = wc.byte_len;
	memcpy(p.b, r->buf + wc.wr_id * 2048, p.len);
	post_rq(r, wc.wr_id);
	if (!parse(&p) || p.proto != IPPROTO_TCP ||
	    get16(p.b + p.l4 + 2) != c->sport)
		return 0;
	th = p.b + p.l4;
	*flags = th[13];
	if (th[13] & TCPF_SYN)
		c->rcv_nxt = get32(th + 4) + 1;
	ack = get32(th + 8);
	if ((th[13] & TCPF_ACK) && (int32_t)(ack - c->snd_una) > 0)
		c->snd_una = ack;
	c->wnd = get16(th + 14);
	return 1;
}

/* Post one of our segments (no payload) inline; its completion: conn_poll. */
static int conn_send(struct rawqp *r, const struct pkt *h, int *inflight)
{
	struct ibv_sge sg = { (uintptr_t)h->b, h->len, 0 };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED |
						IBV_SEND_INLINE |
						IBV_SEND_IP_CSUM };
	struct ibv_send_wr *bad;

	if (ibv_post_send(r->qp, &wr, &bad))
		return -1;
	(*inflight)++;
	return 0;
}

/*
 * The headline: a far TCP socket accepts a connection a raw QP opens and
 * receives exactly the bytes TSO WQEs (mss 1000, up to 16000 bytes each,
 * within the window the far end advertises, retransmitting from the last
 * ACK when one is lost) send.
 */
static void tso_stream(struct __test_metadata *_metadata, fx_t *self,
		       bool v6, bool vlan)
{
	const size_t total = 100000;
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_port = htons(7300) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(7300) };
	struct conn c = { .v6 = v6, .vlan = vlan, .sport = 40000,
			  .dport = 7300, .ipid = 1 };
	const uint32_t iss = 0x7ffff000, end = iss + 1 + total;
	int ls, as, one = 1, inflight = 0, ret;
	uint8_t *out, flags = 0;
	double t0, progress;
	struct ibv_flow *fl;
	struct payload pl;
	struct rawqp r;
	struct ibv_sge sg;
	size_t got = 0;
	struct pkt h;
	uint32_t len, una = 0;
	ssize_t n;

	ASSERT_EQ(0, far_extras(self));
	ls = sv_ns_socket(NS, v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, ls);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	inet_pton(AF_INET, vlan ? FAR_VIP : FAR_IP, &a4.sin_addr);
	inet_pton(AF_INET6, vlan ? FAR_VIP6 : FAR_IP6, &a6.sin6_addr);
	ASSERT_EQ(0, v6 ? bind(ls, (struct sockaddr *)&a6, sizeof(a6)) :
			  bind(ls, (struct sockaddr *)&a4, sizeof(a4)));
	ASSERT_EQ(0, listen(ls, 1));
	set_timeout(ls, 5000 * sv_slow());
	out = malloc(total);
	ASSERT_NE(NULL, out);
	ASSERT_EQ(0, payload_open(self, &pl, total, 41));
	ASSERT_EQ(0, oqp_open(self, &r, MAX_TSO_HDR));
	fl = conn_rule(self, &r, &c);
	ASSERT_NE(NULL, fl);

	/* SYN, SYN-ACK (through the rule), ACK. */
	conn_hdr(self, &c, &h, TCPF_SYN, iss);
	c.snd_una = iss;
	c.snd_nxt = iss + 1;
	ASSERT_EQ(0, conn_send(&r, &h, &inflight));
	t0 = sv_now_s();
	while (!(flags & TCPF_SYN) && sv_now_s() - t0 < 5 * sv_slow())
		ASSERT_NE(-1, conn_poll(&r, &c, &flags, 100, &inflight));
	ASSERT_TRUE(flags & TCPF_SYN);
	ASSERT_TRUE(flags & TCPF_ACK);
	ASSERT_EQ(iss + 1, c.snd_una);
	conn_hdr(self, &c, &h, TCPF_ACK, c.snd_nxt);
	ASSERT_EQ(0, conn_send(&r, &h, &inflight));
	as = accept(ls, NULL, NULL);
	ASSERT_LE(0, as);

	/*
	 * The data: TSO within the window, until all of it is ACKed; back to
	 * the last ACK when none came for a while (an ACK the RQ had no room
	 * for is dropped, as a NIC drops it).
	 */
	t0 = progress = sv_now_s();
	while ((got < total || c.snd_una != end) &&
	       sv_now_s() - t0 < 60 * sv_slow()) {
		n = recv(as, out + got, total - got, MSG_DONTWAIT);
		if (n > 0)
			got += n;
		while ((ret = conn_poll(&r, &c, &flags, 0, &inflight)) != -2)
			ASSERT_NE(-1, ret);
		if (c.snd_una != una) {
			una = c.snd_una;
			progress = sv_now_s();
		}
		if ((int32_t)(c.snd_una - c.snd_nxt) > 0 ||
		    (c.snd_nxt != c.snd_una && sv_now_s() - progress > 0.3)) {
			c.snd_nxt = c.snd_una;
			progress = sv_now_s();
		}
		len = end - c.snd_nxt;
		if (c.wnd < c.snd_nxt - c.snd_una)
			len = 0;
		else if (len > c.wnd - (c.snd_nxt - c.snd_una))
			len = c.wnd - (c.snd_nxt - c.snd_una);
		if (len > 16000)
			len = 16000;
		if (!len || inflight >= 16) {
			if (n <= 0)
				usleep(200);
			continue;
		}
		conn_hdr(self, &c, &h, TCPF_ACK | TCPF_PSH, c.snd_nxt);
		sg = (struct ibv_sge){ (uintptr_t)pl.b + (c.snd_nxt - iss - 1),
				       len, pl.mr->lkey };
		ASSERT_EQ(0, post_tso(&r, h.b, h.len, 1000, &sg, 1, 0, 10));
		inflight++;
		c.snd_nxt += len;
	}
	EXPECT_EQ(total, got);
	EXPECT_EQ(0, memcmp(out, pl.b, total));
	EXPECT_EQ(end, c.snd_una);
	/* Nothing more than was sent. */
	EXPECT_GT(0, recv(as, out, 1, MSG_DONTWAIT));

	close(as);
	close(ls);
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	rawqp_close(&r);
	payload_close(&pl);
	free(out);
}

TEST_F_TIMEOUT(offload, tso_tcp_stream, 180)
{
	tso_stream(_metadata, self, false, false);
}

TEST_F_TIMEOUT(offload, tso_tcp_stream_vlan_ipv6, 180)
{
	tso_stream(_metadata, self, true, true);
}

/* ---- bad input ---- */

/* Post what the library refuses: EINVAL, nothing in the ring. */
static int tso_post_errno(struct rawqp *r, const void *hdr, uint16_t hdr_sz,
			  uint16_t mss, int flags, const struct ibv_sge *sg)
{
	return post_tso(r, hdr, hdr_sz, mss, sg, 1, flags, 100);
}

/* A TSO WQE in the ring: header @hdr (@copy bytes of it), one SGE. */
static void ring_tso(struct ring *rg, uint64_t id, const void *hdr,
		     uint16_t copy, uint16_t hdr_sz, uint16_t mss,
		     uint32_t flags, const struct ibv_sge *sg)
{
	struct sv_send_wqe *w = ring_slot(rg);
	struct sv_send_tso *t = (struct sv_send_tso *)(w + 1);
	struct sv_sge *s;

	w->wr_id = id;
	w->opcode = SV_WR_TSO;
	w->send_flags = SV_SEND_SIGNALED | flags;
	w->num_sge = 1;
	t->hdr_sz = hdr_sz;
	t->mss = mss;
	memcpy(t + 1, hdr, copy);
	s = (struct sv_sge *)((char *)t + SV_TSO_SGE_OFFSET(copy));
	s->addr = sg->addr;
	s->length = sg->length;
	s->lkey = sg->lkey;
	ring_post(rg);
}

/*
 * Bad TSO and IP_CSUM input. The library refuses (EINVAL) what it can
 * tell: max_tso_header on another QP type or above 256, TSO on a QP
 * without it, a header of 0 or more than max_tso_header bytes, mss 0, a
 * NULL header, inline TSO, IP_CSUM on a non-raw QP. The kernel completes
 * the rest with an error, sending nothing: a header that is not Ethernet
 * + IP + TCP (UDP, not IP, a fragment, hdr_sz beyond the TCP header):
 * LOC_QP_OP_ERR; a payload over max_tso, or segments over the MTU:
 * LOC_LEN_ERR; and what the library would refuse, written into the
 * ring: LOC_QP_OP_ERR.
 */
TEST_F_TIMEOUT(offload, tso_bad_input, 120)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
		.max_tso_header = 64,
	};
	int cap = far_capture(self);
	struct rawqp r, plain, rq;
	struct pkt tpl, bad, got;
	struct payload pl;
	struct ibv_sge sg;
	struct ibv_qp_ex *qx;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ring rg;
	char hdr[256];

	ASSERT_LE(0, cap);
	ASSERT_EQ(0, payload_open(self, &pl, SV_MAX_TSO + 4096, 51));
	ASSERT_EQ(0, oqp_open(self, &r, MAX_TSO_HDR));
	ASSERT_EQ(0, oqp_open(self, &plain, 0));
	mk_frame(&tpl, self, self->far_mac, false, false, IPPROTO_TCP, 20,
		 7400, 1, 0, 0);
	sg = (struct ibv_sge){ (uintptr_t)pl.b, 3000, pl.mr->lkey };

	/* Create: max_tso_header is for RAW_PACKET QPs, at most 512. */
	cq = ibv_create_cq(self->ctx, 8, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	ia.pd = self->pd;
	ia.send_cq = ia.recv_cq = cq;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ia));
	EXPECT_EQ(EINVAL, errno);
	ia.qp_type = IBV_QPT_RC;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ia));
	EXPECT_EQ(EINVAL, errno);
	ia.qp_type = IBV_QPT_RAW_PACKET;
	ia.max_tso_header = SV_MAX_TSO_HEADER + 1;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ia));
	EXPECT_EQ(EINVAL, errno);
	ia.max_tso_header = SV_MAX_TSO_HEADER;
	qp = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	/* IP_CSUM on an RC QP: EINVAL (no RC/UD checksum offload). */
	ia.qp_type = IBV_QPT_RC;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	qp = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, qp_init(qp, 0));
	EXPECT_EQ(EINVAL, post_send(qp, IBV_WR_SEND, pl.mr->lkey, pl.b, 8, 1,
				    IBV_SEND_IP_CSUM, 0, 0));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));

	/* Post: what the library can tell. */
	EXPECT_EQ(EINVAL, tso_post_errno(&plain, tpl.b, tpl.len, 1000, 0,
					 &sg));
	EXPECT_EQ(EINVAL, tso_post_errno(&r, tpl.b, 0, 1000, 0, &sg));
	EXPECT_EQ(EINVAL, tso_post_errno(&r, hdr, MAX_TSO_HDR + 1, 1000, 0,
					 &sg));
	EXPECT_EQ(EINVAL, tso_post_errno(&r, tpl.b, tpl.len, 0, 0, &sg));
	EXPECT_EQ(EINVAL, tso_post_errno(&r, NULL, tpl.len, 1000, 0, &sg));
	EXPECT_EQ(EINVAL, tso_post_errno(&r, tpl.b, tpl.len, 1000,
					 IBV_SEND_INLINE, &sg));
	qx = ibv_qp_to_qp_ex(r.qp);
	ASSERT_NE(NULL, qx);
	ibv_wr_start(qx);
	ibv_wr_send_tso(qx, tpl.b, 0, 1000);
	EXPECT_EQ(EINVAL, ibv_wr_complete(qx));
	ibv_wr_start(qx);
	ibv_wr_send_tso(qx, tpl.b, tpl.len, 1000);
	ibv_wr_set_inline_data(qx, pl.b, 100);
	EXPECT_EQ(EINVAL, ibv_wr_complete(qx));
	/* Nothing was posted: a good one completes first. */
	ASSERT_EQ(0, post_tso(&r, tpl.b, tpl.len, 1000, &sg, 1, 0, 1));
	EXPECT_EQ(IBV_WC_SUCCESS, tx_wait(&r, 1));
	EXPECT_EQ(1, cap_next(cap, &got, 7400, 0, 2000 * sv_slow()));
	EXPECT_EQ(1, cap_next(cap, &got, 7400, 0, 2000 * sv_slow()));
	EXPECT_EQ(1, cap_next(cap, &got, 7400, 0, 2000 * sv_slow()));

	/* Headers that are not Ethernet + IPv4/IPv6 + TCP, exactly. */
	mk_frame(&bad, self, self->far_mac, false, false, IPPROTO_UDP, 8,
		 7400, 1, 0, 0);
	ASSERT_EQ(0, post_tso(&r, bad.b, bad.len, 1000, &sg, 1, 0, 2));
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, tx_wait(&r, 2));
	ASSERT_EQ(0, oqp_recover(&r));
	bad = tpl;
	put16(bad.b + 12, ETYPE);
	ASSERT_EQ(0, post_tso(&r, bad.b, bad.len, 1000, &sg, 1, 0, 3));
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, tx_wait(&r, 3));
	ASSERT_EQ(0, oqp_recover(&r));
	bad = tpl;
	put16(bad.b + bad.l3 + 6, 0x2000);	/* MF: a fragment */
	ASSERT_EQ(0, post_tso(&r, bad.b, bad.len, 1000, &sg, 1, 0, 4));
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, tx_wait(&r, 4));
	ASSERT_EQ(0, oqp_recover(&r));
	ASSERT_EQ(0, post_tso(&r, tpl.b, tpl.len + 4, 1000, &sg, 1, 0, 5));
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, tx_wait(&r, 5));
	ASSERT_EQ(0, oqp_recover(&r));
	ASSERT_EQ(0, post_tso(&r, tpl.b, tpl.len - 1, 1000, &sg, 1, 0, 6));
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, tx_wait(&r, 6));
	ASSERT_EQ(0, oqp_recover(&r));

	/* Lengths: over max_tso, over the MTU. */
	sg.length = SV_MAX_TSO + 1;
	ASSERT_EQ(0, post_tso(&r, tpl.b, tpl.len, 1000, &sg, 1, 0, 7));
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, tx_wait(&r, 7));
	ASSERT_EQ(0, oqp_recover(&r));
	sg.length = 3000;
	ASSERT_EQ(0, post_tso(&r, tpl.b, tpl.len, 1500 - 40 + 1, &sg, 1, 0,
			      8));
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, tx_wait(&r, 8));
	ASSERT_EQ(0, oqp_recover(&r));
	/* ... exactly the MTU is fine: 1460 + 1460 + 80. */
	ASSERT_EQ(0, post_tso(&r, tpl.b, tpl.len, 1500 - 40, &sg, 1, 0, 9));
	EXPECT_EQ(IBV_WC_SUCCESS, tx_wait(&r, 9));
	EXPECT_EQ(1, cap_next(cap, &got, 7400, 0, 2000 * sv_slow()));
	EXPECT_EQ(1514, got.len);
	EXPECT_EQ(1, cap_next(cap, &got, 7400, 0, 2000 * sv_slow()));
	EXPECT_EQ(1, cap_next(cap, &got, 7400, 0, 2000 * sv_slow()));
	EXPECT_EQ(54 + 80, got.len);
	/* None of the failed ones sent a thing. */
	EXPECT_EQ(0, cap_next(cap, &got, 7400, 0, 300));

	/* In the ring: what the library refuses, the kernel too. */
	ASSERT_EQ(0, oqp_open(self, &rq, MAX_TSO_HDR));
	ASSERT_EQ(0, ring_map(rq.qp, &rg));
	ring_tso(&rg, 11, tpl.b, tpl.len, 0, 1000, 0, &sg);
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, tx_wait(&rq, 11));
	ASSERT_EQ(0, oqp_recover(&rq));
	ring_tso(&rg, 12, tpl.b, tpl.len, tpl.len, 0, 0, &sg);
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, tx_wait(&rq, 12));
	ASSERT_EQ(0, oqp_recover(&rq));
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, tpl.b, tpl.len);
	ring_tso(&rg, 13, hdr, MAX_TSO_HDR, MAX_TSO_HDR + 1, 1000, 0, &sg);
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, tx_wait(&rq, 13));
	ASSERT_EQ(0, oqp_recover(&rq));
	ring_tso(&rg, 14, tpl.b, tpl.len, tpl.len, 1000, SV_SEND_INLINE, &sg);
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, tx_wait(&rq, 14));
	ASSERT_EQ(0, oqp_recover(&rq));
	/* ... and a good one goes. */
	ring_tso(&rg, 15, tpl.b, tpl.len, tpl.len, 1000, 0, &sg);
	EXPECT_EQ(IBV_WC_SUCCESS, tx_wait(&rq, 15));
	ring_unmap(&rg);
	/* TSO on a QP made without max_tso_header, in its ring. */
	ASSERT_EQ(0, ring_map(plain.qp, &rg));
	ring_tso(&rg, 16, tpl.b, tpl.len, tpl.len, 1000, 0, &sg);
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, tx_wait(&plain, 16));
	ring_unmap(&rg);

	rawqp_close(&rq);
	rawqp_close(&plain);
	rawqp_close(&r);
	payload_close(&pl);
	close(cap);
}

/*
 * Random send WQEs written straight into a TSO QP's ring: opcodes, flags,
 * header sizes and bytes (a good header with bytes changed), mss, SGEs.
 * Each completes with success or a local error, and the module stays up
 * (vm-run fails the run on any kernel splat).
 */
TEST_F_TIMEOUT(offload, tso_ring_scribble, 180)
{
	static const uint32_t ok[] = { IBV_WC_SUCCESS, IBV_WC_LOC_LEN_ERR,
				       IBV_WC_LOC_QP_OP_ERR,
				       IBV_WC_LOC_PROT_ERR };
	uint64_t seed = (uint64_t)time(NULL);
	struct pkt tpl;
	struct payload pl;
	struct rawqp r;
	struct ring rg;
	int i, k, st, errs = 0;

	ASSERT_EQ(0, payload_open(self, &pl, 65536, 61));
	ASSERT_EQ(0, oqp_open(self, &r, MAX_TSO_HDR));
	ASSERT_EQ(0, ring_map(r.qp, &rg));
	TH_LOG("seed %llu", (unsigned long long)seed);
	srandom(seed);
	for (i = 0; i < 400; i++) {
		struct sv_send_wqe *w = ring_slot(&rg);
		struct sv_send_tso *t = (struct sv_send_tso *)(w + 1);
		uint32_t room = rg.r->wqe_size - sizeof(*w);
		struct sv_sge *s;
		uint8_t *h;
		int ns;

		mk_frame(&tpl, self, random() % 4 ? self->far_mac : self->mac,
			 random() % 2, random() % 3 == 0,
			 random() % 5 ? IPPROTO_TCP : IPPROTO_UDP,
			 random() % 4 ? 20 : 20 + 4 * (random() % 11), 7500,
			 random(), 0, 0);
		w->wr_id = i;
		w->opcode = random() % 8 ? SV_WR_TSO : SV_WR_SEND;
		if (random() % 40 == 0)
			w->opcode = random() % 16;
		w->send_flags = SV_SEND_SIGNALED | (random() % 4 == 0 ?
			SV_SEND_IP_CSUM : 0) | (random() % 16 == 0 ?
			SV_SEND_INLINE : 0);
		ns = random() % 4;
		if (random() % 30 == 0)
			ns = 5 + random() % 64;		/* > max_send_sge */
		w->num_sge = ns;
		if (w->opcode == SV_WR_TSO) {
			t->hdr_sz = random() % 5 ? (long)tpl.len :
				    random() % (MAX_TSO_HDR + 8);
			t->mss = random() % 4 ? 64 + random() % 1500 :
				 random() % 70;
			if (random() % 50 == 0)
				t->reserved = random();
			h = (uint8_t *)(t + 1);
			memcpy(h, tpl.b, tpl.len);
			for (k = random() % 3; k > 0; k--)
				h[random() % tpl.len] = random();
			s = (struct sv_sge *)((char *)t +
				SV_TSO_SGE_OFFSET(t->hdr_sz < MAX_TSO_HDR ?
						  t->hdr_sz : MAX_TSO_HDR));
		} else {
			memcpy(t, tpl.b, tpl.len);
			w->inline_len = random() % 300;
			s = (struct sv_sge *)(w + 1);
		}
		for (k = 0; k < ns && k < 4 &&
		     (char *)(s + k + 1) <= (char *)(w + 1) + room; k++) {
			s[k].addr = (uintptr_t)pl.b + random() % 60000;
			s[k].length = random() % 2 ? random() % 5000 :
				      random() % 70000;
			s[k].lkey = random() % 20 ? pl.mr->lkey : random();
		}
		ring_post(&rg);
		st = tx_wait(&r, i);
		for (k = 0; k < 4 && ok[k] != (uint32_t)st; k++)
			;
		EXPECT_GT(4, k) {
			TH_LOG("WQE %d: status %d", i, st);
		}
		if (st == IBV_WC_SUCCESS)
			continue;
		errs++;
		ASSERT_EQ(0, oqp_recover(&r));
	}
	TH_LOG("%d of 400 completed in error", errs);
	ring_unmap(&rg);
	rawqp_close(&r);
	payload_close(&pl);
}

TEST_HARNESS_MAIN
