// SPDX-License-Identifier: GPL-2.0
/*
 * RoCE v2 frames crafted by hand: what a softverbs device bound to a
 * netdev does with frames from an untrusted peer. The test writes
 * Ethernet frames with an AF_PACKET socket on the veth end of namespace
 * NS_A (sv_wire_test.h's sv_sv fixture) to softverbs device SV_B, whose
 * UD and RC QPs it opened itself, and reads B's answers (ACKs, NAKs)
 * with another on the same end. Its own CRC-32 computes the ICRC, so a
 * frame that should pass gets past the check and one that should not
 * fails on exactly the field it breaks.
 *
 * Each bad frame (the multicast QPN to a unicast address among them) is
 * followed by a good UD frame; that the good one is the
 * next receive completion and the counters moved by exactly what the bad
 * one deserved (dropped where, counted as what) is the check. Then a
 * connected RC QP: a packet from a source that is not its peer, a PSN
 * ahead (one sequence NAK), the expected PSN (delivered, ACKed), the same
 * again (a duplicate, ACKed again, not delivered twice), an RDMA WRITE
 * with a bad rkey (remote access NAK). A burst of RDMA WRITEs to another
 * RC QP: all land, answered by rising (coalesced) ACKs up to the last
 * packet's PSN. Last, thousands of mutated frames,
 * half of them with the ICRC made right again, after which the device
 * still delivers a good frame (and the run's dmesg check finds no splat).
 */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <poll.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

#define SV_WIRE_SV_ONLY
#include "sv_harness.h"
#include "sv_test.h"
#include "sv_dp_test.h"
#include "sv_wire_test.h"
#include "sv_wire_verbs.h"
#include "../user/tools/sv_pkt.h"

#define QKEY		0x11111111u
#define PEER_QPN	0x4242u		/* the RC QP's made-up peer */
#define RQ_PSN		0x100u
#define BUF		65536
#define SLOT		2048		/* bytes per receive WQE */
#define NRECV		16
#define GOOD_SEED	0x5a

enum { OP_RC = 0x00, OP_UD = 0x60 };
enum {
	OP_SEND_FIRST = 0x00, OP_SEND_ONLY = 0x04, OP_WRITE_ONLY = 0x0a,
	OP_ACK = 0x11,
};

/* The crafting end: its socket, addresses and the frames it builds. */
struct crafter {
	int tx, rx;			/* AF_PACKET, on END_A in NS_A */
	int ifindex;
	uint8_t mac_a[6], mac_b[6];
	uint32_t ip_a, ip_b;
};

/* A frame being built: headers at fixed offsets. */
struct frame {
	uint8_t b[2048];
	size_t len;
};

#define ETH	14
#define IPH	20
#define UDPH	8
#define BTH	(ETH + IPH + UDPH)

static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
	int k;

	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return crc;
}

/*
 * The ICRC of an IPv4 frame as the RoCE v2 annex defines it: CRC-32 over
 * 8 bytes of ones, the IP header with TOS, TTL and checksum as ones, the
 * UDP header with its checksum as ones, the BTH with its reserved byte as
 * ones, then the rest up to the ICRC.
 */
static uint32_t icrc_of(const struct frame *f)
{
	uint8_t ph[IPH + UDPH + 12], ones[8];
	uint32_t crc = 0xffffffffu;

	memset(ones, 0xff, sizeof(ones));
	memcpy(ph, f->b + ETH, sizeof(ph));
	ph[1] = 0xff;				/* TOS */
	ph[8] = 0xff;				/* TTL */
	ph[10] = ph[11] = 0xff;			/* header checksum */
	ph[IPH + 6] = ph[IPH + 7] = 0xff;	/* UDP checksum */
	ph[IPH + UDPH + 4] = 0xff;		/* BTH reserved byte */
	crc = crc32_update(crc, ones, sizeof(ones));
	crc = crc32_update(crc, ph, sizeof(ph));
	crc = crc32_update(crc, f->b + BTH + 12, f->len - 4 - BTH - 12);
	return ~crc;
}

/*
 * Lengths, IP checksum and ICRC (if there is room for a BTH and one) made
 * right for what the frame holds.
 */
static void seal(struct frame *f)
{
	uint32_t icrc;

	sv_put16(f->b + ETH + 2, f->len - ETH);
	f->b[ETH + 10] = f->b[ETH + 11] = 0;
	sv_put16(f->b + ETH + 10, sv_ip_csum_n(f->b + ETH, IPH));
	sv_put16(f->b + ETH + IPH + 4, f->len - ETH - IPH);
	if (f->len < BTH + 12 + 4)
		return;
	icrc = icrc_of(f);
	memcpy(f->b + f->len - 4, &icrc, 4);	/* least significant first */
}

/*
 * An IPv4 RoCE v2 frame from saddr to B: the BTH (opcode, dest QPN, PSN,
 * AckReq), ext bytes of extension headers, then n payload bytes of seed.
 */
static void craft(struct frame *f, const struct crafter *c, uint32_t saddr,
		  uint8_t opcode, uint32_t qpn, uint32_t psn, bool ackreq,
		  const uint8_t *ext, size_t next, size_t n, int seed)
{
	uint8_t *ip = f->b + ETH, *udp = ip + IPH, *bth = udp + UDPH;
	size_t pad = (4 - n % 4) % 4;

	memset(f, 0, sizeof(*f));
	memcpy(f->b, c->mac_b, 6);
	memcpy(f->b + 6, c->mac_a, 6);
	sv_put16(f->b + 12, ETH_P_IP);
	ip[0] = 0x45;
	ip[6] = 0x40;				/* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	memcpy(ip + 12, &saddr, 4);
	memcpy(ip + 16, &c->ip_b, 4);
	sv_put16(udp, 49152);
	sv_put16(udp + 2, 4791);
	bth[0] = opcode;
	bth[1] = pad << 4;			/* SE 0, M 0, pad, TVer 0 */
	sv_put16(bth + 2, 0xffff);
	sv_put32(bth + 4, qpn & 0xffffff);
	sv_put32(bth + 8, (ackreq ? 1u << 31 : 0) | (psn & 0xffffff));
	memcpy(bth + 12, ext, next);
	sv_fill((char *)bth + 12 + next, n, seed);
	f->len = BTH + 12 + next + n + pad + 4;
	seal(f);
}

/* A UD SEND ONLY to qpn with qkey, n bytes of seed, from A. */
static void craft_ud(struct frame *f, const struct crafter *c, uint32_t qpn,
		     uint32_t qkey, size_t n, int seed)
{
	uint8_t deth[8];

	sv_put32(deth, qkey);
	sv_put32(deth + 4, 0x777);			/* the source QP */
	craft(f, c, c->ip_a, OP_UD | OP_SEND_ONLY, qpn, 0, false, deth, 8, n,
	      seed);
}

static int xmit(const struct crafter *c, const struct frame *f)
{
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET, .sll_ifindex = c->ifindex,
		.sll_halen = 6,
	};

	memcpy(to.sll_addr, c->mac_b, 6);
	return sendto(c->tx, f->b, f->len, 0, (struct sockaddr *)&to,
		      sizeof(to)) == (ssize_t)f->len ? 0 : -1;
}

/*
 * The next RC ACK or NAK from B on END_A within ms: its PSN and AETH
 * syndrome; -1 if none came.
 */
static int answer(const struct crafter *c, int ms, uint32_t *psn,
		  uint8_t *syn)
{
	struct pollfd p = { .fd = c->rx, .events = POLLIN };
	uint8_t b[2048], *bth = b + BTH;
	ssize_t n;

	while (poll(&p, 1, ms) == 1) {
		n = recv(c->rx, b, sizeof(b), 0);
		if (n < BTH + 16 + 4 || b[12] != 0x08 || b[13] != 0 ||
		    memcmp(b + ETH + 12, &c->ip_b, 4) ||
		    b[ETH + IPH + 2] != 0x12 || b[ETH + IPH + 3] != 0xb7 ||
		    bth[0] != (OP_RC | OP_ACK))
			continue;
		*psn = (bth[9] << 16) | (bth[10] << 8) | bth[11];
		*syn = bth[12];
		return 0;
	}
	return -1;
}

static void drain_answers(const struct crafter *c)
{
	uint32_t psn;
	uint8_t syn;

	while (!answer(c, 0, &psn, &syn))
		;
}

/* The MAC of dev in namespace ns, by ip(8). */
static int mac_of(const char *ns, const char *dev, uint8_t *mac)
{
	unsigned int m[6];
	FILE *f;
	int i, ok;

	snprintf(cmd, sizeof(cmd), "ip -n %s -br link show %s | awk '{print $3}'",
		 ns, dev);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
		    &m[4], &m[5]) == 6;
	pclose(f);
	for (i = 0; i < 6; i++)
		mac[i] = m[i];
	return ok ? 0 : -1;
}

/* Sockets on END_A, made in NS_A (this thread goes there and back). */
static int crafter_open(struct crafter *c)
{
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), ns;
	struct sockaddr_ll at = { .sll_family = AF_PACKET };

	memset(c, 0, sizeof(*c));
	c->tx = c->rx = -1;
	if (mac_of(NS_A, END_A, c->mac_a) || mac_of(NS_B, END_B, c->mac_b))
		return -1;
	inet_pton(AF_INET, IP_A, &c->ip_a);
	inet_pton(AF_INET, IP_B, &c->ip_b);
	ns = open("/var/run/netns/" NS_A, O_RDONLY | O_CLOEXEC);
	if (self < 0 || ns < 0 || setns(ns, CLONE_NEWNET))
		return -1;
	c->ifindex = if_nametoindex(END_A);
	c->tx = socket(AF_PACKET, SOCK_RAW, 0);
	/*
	 * ETH_P_ALL: a tap sees frames before the rx_handler of A's own
	 * softverbs device takes them (for its GID, no QP of its).
	 */
	c->rx = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	at.sll_protocol = htons(ETH_P_ALL);
	at.sll_ifindex = c->ifindex;
	if (c->rx >= 0 && bind(c->rx, (struct sockaddr *)&at, sizeof(at)))
		c->rx = -1;
	if (setns(self, CLONE_NEWNET))
		abort();
	close(ns);
	close(self);
	return c->ifindex && c->tx >= 0 && c->rx >= 0 ? 0 : -1;
}

/* B's objects: a UD QP (QKEY) and an RC QP connected to A's PEER_QPN. */
struct bside {
	struct vend v;			/* its QP: the UD one */
	struct ibv_qp *rc;
};

/* A UD receive WQE: its wr_id is its slot of the buffer. */
static int ud_recv(struct bside *b, uint64_t slot)
{
	return post_recv(b->v.qp, b->v.mr, b->v.buf + slot * SLOT, SLOT, slot);
}

static int bside_open(FIXTURE_DATA(wire) *self, struct bside *b)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	union ibv_gid peer = {};
	int i;

	if (vend_open(&b->v, NS_B, SV_B, self->b.g4, IBV_QPT_UD, BUF,
		      IBV_ACCESS_LOCAL_WRITE))
		return -1;
	if (ud_rts(b->v.qp, QKEY))
		return -1;
	for (i = 0; i < NRECV; i++)
		if (ud_recv(b, i))
			return -1;
	/* The RC QP: its peer A's IPv4 GID, QPN PEER_QPN; no remote rights */
	ia.send_cq = ia.recv_cq = b->v.cq;
	b->rc = ibv_create_qp(b->v.pd, &ia);
	if (!b->rc)
		return -1;
	/* ::ffff:198.51.100.1 */
	peer.raw[10] = peer.raw[11] = 0xff;
	inet_pton(AF_INET, IP_A, &peer.raw[12]);
	if (rc_connect_gid(b->rc, PEER_QPN, &peer, self->b.g4, 0, RQ_PSN, 0))
		return -1;
	for (i = 0; i < 4; i++)
		if (post_recv(b->rc, b->v.mr, b->v.buf + BUF / 2 + i * SLOT,
			      SLOT, 1000 + i))
			return -1;
	return 0;
}

static void bside_close(struct bside *b)
{
	if (b->rc)
		ibv_destroy_qp(b->rc);
	vend_close(&b->v);
}

/*
 * The next completion is the good UD frame's (sent by good()): its
 * receive WQE, 40 + n bytes, the payload of GOOD_SEED. Its WQE is posted
 * again. 0 if so.
 */
static int good_arrived(struct bside *b, size_t n)
{
	char want[SLOT];
	struct ibv_wc wc;

	if (poll1(b->v.cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.qp_num != b->v.qp->qp_num || wc.byte_len != 40 + n ||
	    wc.src_qp != 0x777 || !(wc.wc_flags & IBV_WC_GRH) ||
	    wc.wr_id >= NRECV)
		return -1;
	sv_fill(want, n, GOOD_SEED);
	if (memcmp(b->v.buf + wc.wr_id * SLOT + 40, want, n))
		return -1;
	return ud_recv(b, wc.wr_id);
}

static int good(const struct crafter *c, struct bside *b)
{
	struct frame f;

	craft_ud(&f, c, b->v.qp->qp_num, QKEY, 100, GOOD_SEED);
	return xmit(c, &f) || good_arrived(b, 100);
}

/* The counters a bad frame may move */
static const char * const names[] = {
	"wire_rx_frames", "wire_rx_drops", "wire_icrc_errors",
	"rx_peer_drops", "wire_rx_out_of_sequence", "wire_rx_duplicates",
	"wire_naks_sent",
};

#define NNAMES	(sizeof(names) / sizeof(names[0]))

static void counters(FIXTURE_DATA(wire) *self, long long *v)
{
	stats_of(&self->b, names, NNAMES, v);
}

/* Wait up to 5 s for B's counter name to read want; what it read. */
static long long stat_becomes(FIXTURE_DATA(wire) *self, const char *name,
			      long long want)
{
	long long v = -1;
	int i;

	for (i = 0; i < 50 && v != want; i++) {
		if (i)
			usleep(100000);
		v = stat_of(&self->b, name);
	}
	return v;
}

/*
 * One bad frame then a good one: the good one is the next completion and
 * the counters moved by exactly want (names[] order; the good frame's
 * wire_rx_frames not included).
 */
static int bad_then_good(struct __test_metadata *_metadata,
			 FIXTURE_DATA(wire) *self, const struct crafter *c,
			 struct bside *b, const struct frame *f,
			 const long long *want, const char *what)
{
	long long before[NNAMES], after[NNAMES];
	size_t i;
	int bad = 0;

	counters(self, before);
	if (xmit(c, f) || good(c, b)) {
		TH_LOG("%s: the good frame after it was not the next completion",
		       what);
		return -1;
	}
	counters(self, after);
	after[0]--;
	for (i = 0; i < NNAMES; i++)
		if (after[i] - before[i] != want[i]) {
			TH_LOG("%s: %s moved by %lld, not %lld", what,
			       names[i], after[i] - before[i], want[i]);
			bad = -1;
		}
	return bad;
}

/* What a dropped frame moves: seen and dropped, or only dropped, ... */
static const long long TAKEN_DROPPED[NNAMES] = { 1, 1 };
static const long long DROPPED[NNAMES] = { 0, 1 };
static const long long ICRC[NNAMES] = { 0, 1, 1 };
static const long long UNTOUCHED[NNAMES];

TEST_F_TIMEOUT(wire, ud_bad_frames, 120)
{
	struct crafter c;
	struct bside b = {};
	struct frame f;
	uint32_t qpn;
	uint8_t opt[4] = { 1, 1, 1, 0 };	/* IPv4 NOPs, end of options */

	ASSERT_EQ(0, crafter_open(&c));
	ASSERT_EQ(0, bside_open(self, &b));
	qpn = b.v.qp->qp_num;
	/* The good frame alone: the crafting is right. */
	ASSERT_EQ(0, good(&c, &b));

	craft_ud(&f, &c, qpn, QKEY, 64, 1);
	f.b[f.len - 1] ^= 1;
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, ICRC,
				   "a bad ICRC"));
	craft_ud(&f, &c, qpn, QKEY, 64, 1);
	f.b[BTH + 1] |= 1;			/* TVer 1 */
	seal(&f);
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, DROPPED,
				   "BTH version 1"));
	craft_ud(&f, &c, qpn, QKEY, 64, 1);
	sv_put16(f.b + BTH + 2, 0x8123);		/* a P_Key not the device's */
	seal(&f);
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, DROPPED,
				   "a foreign P_Key"));
	craft_ud(&f, &c, qpn, QKEY + 1, 64, 1);
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f,
				   TAKEN_DROPPED, "a wrong Q_Key"));
	craft_ud(&f, &c, 0xabcdef, QKEY, 64, 1);
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f,
				   TAKEN_DROPPED, "no such QP"));
	craft_ud(&f, &c, qpn, QKEY, 64, 1);
	f.b[BTH] = OP_RC | OP_SEND_ONLY;	/* an RC SEND to a UD QP */
	seal(&f);
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f,
				   TAKEN_DROPPED, "RC to a UD QP"));
	craft_ud(&f, &c, qpn, QKEY, 64, 1);
	f.b[BTH] = OP_UD | OP_SEND_FIRST;	/* no such thing on UD */
	seal(&f);
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, DROPPED,
				   "a UD SEND FIRST"));
	craft_ud(&f, &c, qpn, QKEY, 0, 1);
	f.b[BTH + 1] |= 3 << 4;		/* pad 3 of no payload */
	seal(&f);
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, DROPPED,
				   "more pad than payload"));
	craft_ud(&f, &c, qpn, QKEY, 64, 1);
	f.len = BTH + 10;			/* shorter than BTH and ICRC */
	seal(&f);
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, DROPPED,
				   "a short frame"));
	craft_ud(&f, &c, qpn, QKEY, 64, 1);
	sv_put16(f.b + ETH + IPH + 4, f.len - ETH - IPH - 4);
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, DROPPED,
				   "UDP and IP lengths disagree"));
	craft_ud(&f, &c, qpn, QKEY, 64, 1);
	f.b[ETH + 11] ^= 0x40;			/* the IP header checksum */
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, DROPPED,
				   "a bad IPv4 header checksum"));
	craft_ud(&f, &c, qpn, QKEY, 64, 1);
	sv_put16(f.b + ETH + 2, f.len - ETH + 100);	/* past the frame */
	sv_put16(f.b + ETH + IPH + 4, f.len - ETH - IPH + 100);
	f.b[ETH + 10] = f.b[ETH + 11] = 0;
	sv_put16(f.b + ETH + 10, sv_ip_csum_n(f.b + ETH, IPH));
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, DROPPED,
				   "an IP length past the frame"));
	craft_ud(&f, &c, 0xffffff, QKEY, 64, 1);	/* multicast QPN */
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f,
				   TAKEN_DROPPED, "the multicast QPN to B"));
	/* Not RoCE v2 for B: left to the stack, no wire counter moves. */
	craft_ud(&f, &c, 0xffffff, QKEY, 64, 1);
	f.b[ETH + 16] = 239;			/* a group B is not in */
	seal(&f);
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, UNTOUCHED,
				   "a group B is not in"));
	craft_ud(&f, &c, qpn, QKEY, 64, 1);
	f.b[ETH + 6] = 0x20;			/* more fragments */
	seal(&f);
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, UNTOUCHED,
				   "a fragment"));
	craft_ud(&f, &c, qpn, QKEY, 64, 1);
	f.b[ETH + 19] = 9;			/* 198.51.100.9: not B's */
	seal(&f);
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, UNTOUCHED,
				   "another address"));
	craft_ud(&f, &c, qpn, QKEY, 64, 1);
	memmove(f.b + ETH + IPH + 4, f.b + ETH + IPH, f.len - ETH - IPH);
	memcpy(f.b + ETH + IPH, opt, 4);
	f.b[ETH] = 0x46;			/* IPv4 options */
	f.len += 4;
	sv_put16(f.b + ETH + 2, f.len - ETH);
	f.b[ETH + 10] = f.b[ETH + 11] = 0;
	sv_put16(f.b + ETH + 10, sv_ip_csum_n(f.b + ETH, IPH + 4));
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, UNTOUCHED,
				   "IPv4 options"));
	craft_ud(&f, &c, qpn, QKEY, 64, 1);
	memmove(f.b + 16, f.b + 12, f.len - 12);
	sv_put16(f.b + 12, ETH_P_8021Q);		/* VLAN 5: none is set up */
	sv_put16(f.b + 14, 5);
	f.len += 4;
	EXPECT_EQ(0, bad_then_good(_metadata, self, &c, &b, &f, UNTOUCHED,
				   "a VLAN tag"));
	bside_close(&b);
	close(c.tx);
	close(c.rx);
}

/* An RC SEND ONLY to B's RC QP with n bytes of seed, asking for an ACK */
static void craft_rc_send(struct frame *f, const struct crafter *c,
			  uint32_t saddr, uint32_t qpn, uint32_t psn, int seed)
{
	craft(f, c, saddr, OP_RC | OP_SEND_ONLY, qpn, psn, true, NULL, 0, 32,
	      seed);
}

TEST_F_TIMEOUT(wire, rc_bad_frames, 120)
{
	struct crafter c;
	struct bside b = {};
	struct ibv_wc wc;
	struct frame f;
	uint8_t reth[16] = { 0 }, syn;
	uint32_t qpn, psn, spoof;
	char want[32];

	ASSERT_EQ(0, crafter_open(&c));
	ASSERT_EQ(0, bside_open(self, &b));
	qpn = b.rc->qp_num;
	inet_pton(AF_INET, "198.51.100.77", &spoof);
	drain_answers(&c);

	/* Not from its peer: dropped, counted, not answered. */
	craft_rc_send(&f, &c, spoof, qpn, RQ_PSN, 3);
	EXPECT_EQ(0, xmit(&c, &f));
	EXPECT_EQ(0, good(&c, &b));
	EXPECT_EQ(1, stat_becomes(self, "rx_peer_drops", 1));
	EXPECT_EQ(-1, answer(&c, 200, &psn, &syn));

	/* Ahead of the expected PSN: one PSN sequence NAK for RQ_PSN. */
	craft_rc_send(&f, &c, c.ip_a, qpn, RQ_PSN + 5, 3);
	EXPECT_EQ(0, xmit(&c, &f));
	ASSERT_EQ(0, answer(&c, 5000, &psn, &syn));
	EXPECT_EQ(RQ_PSN, psn);
	EXPECT_EQ(0x60, syn);			/* NAK, PSN sequence error */
	EXPECT_EQ(1, stat_becomes(self, "wire_rx_out_of_sequence", 1));

	/* The expected one: delivered, ACKed with its PSN. */
	craft_rc_send(&f, &c, c.ip_a, qpn, RQ_PSN, 4);
	EXPECT_EQ(0, xmit(&c, &f));
	ASSERT_EQ(1, poll1(b.v.cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(1000, wc.wr_id);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(32, wc.byte_len);
	EXPECT_EQ(b.rc->qp_num, wc.qp_num);
	sv_fill(want, sizeof(want), 4);
	EXPECT_EQ(0, memcmp(b.v.buf + BUF / 2, want, sizeof(want)));
	ASSERT_EQ(0, answer(&c, 5000, &psn, &syn));
	EXPECT_EQ(RQ_PSN, psn);
	EXPECT_EQ(0, syn & 0xe0);		/* an ACK */

	/* Again: a duplicate, ACKed again, not delivered twice. */
	EXPECT_EQ(0, xmit(&c, &f));
	ASSERT_EQ(0, answer(&c, 5000, &psn, &syn));
	EXPECT_EQ(RQ_PSN, psn);
	EXPECT_EQ(0, syn & 0xe0);
	EXPECT_EQ(1, stat_becomes(self, "wire_rx_duplicates", 1));
	EXPECT_EQ(0, good(&c, &b));		/* no RC completion before */

	/* An RDMA WRITE where the QP grants no remote write: NAK, ERR. */
	sv_put32(reth + 8, b.v.mr->rkey);
	sv_put32(reth + 12, 32);
	memcpy(reth, &(uint64_t){ htobe64((uintptr_t)b.v.buf) }, 8);
	craft(&f, &c, c.ip_a, OP_RC | OP_WRITE_ONLY, qpn, RQ_PSN + 1, true,
	      reth, sizeof(reth), 32, 5);
	EXPECT_EQ(0, xmit(&c, &f));
	ASSERT_EQ(0, answer(&c, 5000, &psn, &syn));
	EXPECT_EQ(RQ_PSN + 1, psn);
	EXPECT_EQ(0x62, syn);			/* NAK, remote access error */
	/* The QP in error flushes its receive WQEs. */
	ASSERT_EQ(1, poll1(b.v.cq, &wc));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	EXPECT_EQ(1001, wc.wr_id);
	bside_close(&b);
	close(c.tx);
	close(c.rx);
}

/*
 * A zeroed buffer of len bytes that peers may write, and an RC QP of B's
 * connected to a made-up peer at A's address that grants remote write.
 */
struct rc_target {
	char *mem;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
};

static int rc_target_open(FIXTURE_DATA(wire) *self, struct bside *b,
			  struct rc_target *t, size_t len)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.send_cq = b->v.cq, .recv_cq = b->v.cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	union ibv_gid peer = {};

	t->mem = calloc(1, len);
	t->mr = t->mem ? ibv_reg_mr(b->v.pd, t->mem, len,
				    IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE) : NULL;
	t->qp = t->mr ? ibv_create_qp(b->v.pd, &ia) : NULL;
	if (!t->qp)
		return -1;
	peer.raw[10] = peer.raw[11] = 0xff;
	inet_pton(AF_INET, IP_A, &peer.raw[12]);
	return rc_connect_gid(t->qp, PEER_QPN + 1, &peer, self->b.g4,
			      IBV_ACCESS_REMOTE_WRITE, RQ_PSN, 0);
}

static void rc_target_close(struct rc_target *t)
{
	if (t->qp)
		ibv_destroy_qp(t->qp);
	if (t->mr)
		ibv_dereg_mr(t->mr);
	free(t->mem);
}

/* An RDMA WRITE ONLY of n bytes (seed) to va, at psn, asking for an ACK */
static void craft_write(struct frame *f, const struct crafter *c,
			const struct rc_target *t, char *va, uint32_t psn,
			size_t n, int seed)
{
	uint8_t reth[16];

	memcpy(reth, &(uint64_t){ htobe64((uintptr_t)va) }, 8);
	sv_put32(reth + 8, t->mr->rkey);
	sv_put32(reth + 12, n);
	craft(f, c, c->ip_a, OP_RC | OP_WRITE_ONLY, t->qp->qp_num, psn, true,
	      reth, sizeof(reth), n, seed);
}

/*
 * An RC WRITE with a bad ICRC to a QP that would take it: the QP's engine
 * checks the ICRC before it uses anything of the packet (the softirq left
 * it to the engine, Documentation/wire.rst), so nothing lands, nothing
 * answers, and it is counted as a bad ICRC and a drop, not as a frame
 * taken. The same packet sealed right lands and is acknowledged: the
 * expected PSN did not move.
 */
TEST_F_TIMEOUT(wire, rc_write_bad_icrc, 120)
{
	long long before[NNAMES], after[NNAMES];
	static const long long want[NNAMES] = { 1, 1, 1 };
	char data[48], zero[48] = {};
	struct rc_target t = {};
	struct crafter c;
	struct bside b = {};
	struct frame f;
	uint32_t psn;
	uint8_t syn;
	size_t i;

	ASSERT_EQ(0, crafter_open(&c));
	ASSERT_EQ(0, bside_open(self, &b));
	ASSERT_EQ(0, rc_target_open(self, &b, &t, sizeof(data)));
	drain_answers(&c);
	counters(self, before);

	craft_write(&f, &c, &t, t.mem, RQ_PSN, sizeof(data), 21);
	f.b[f.len - 1] ^= 1;
	ASSERT_EQ(0, xmit(&c, &f));
	EXPECT_EQ(1, stat_becomes(self, "wire_icrc_errors",
				  before[2] + 1) - before[2]);
	EXPECT_EQ(-1, answer(&c, 300, &psn, &syn));
	EXPECT_EQ(0, memcmp(t.mem, zero, sizeof(zero)));

	seal(&f);
	ASSERT_EQ(0, xmit(&c, &f));
	ASSERT_EQ(0, answer(&c, 5000, &psn, &syn));
	EXPECT_EQ(RQ_PSN, psn);
	EXPECT_EQ(0, syn & 0xe0);		/* an ACK */
	sv_fill(data, sizeof(data), 21);
	EXPECT_EQ(0, memcmp(t.mem, data, sizeof(data)));
	/* The good one taken, the bad one dropped for its ICRC: no more. */
	counters(self, after);
	for (i = 0; i < NNAMES; i++)
		EXPECT_EQ(want[i], after[i] - before[i]);
	rc_target_close(&t);
	bside_close(&b);
	close(c.tx);
	close(c.rx);
}

/*
 * A burst of RDMA WRITEs, each asking for an ACK, to an RC QP that grants
 * remote write: every one lands, and what comes back is ACKs only, their
 * PSNs rising, the last one for the burst's last packet, and nothing
 * after it. The responder coalesces ACKs over a receive batch (one ACK
 * answers every packet up to its PSN), so there may be fewer ACKs than
 * packets but never more, and an ACK it held back must still go out.
 */
#define BURST	64

TEST_F_TIMEOUT(wire, rc_burst_acked, 120)
{
	long long before[NNAMES], after[NNAMES];
	uint32_t psn, last = RQ_PSN - 1;
	struct rc_target t = {};
	struct crafter c;
	struct bside b = {};
	struct frame f;
	char want[32];
	int acks = 0, i;
	uint8_t syn;

	ASSERT_EQ(0, crafter_open(&c));
	ASSERT_EQ(0, bside_open(self, &b));
	ASSERT_EQ(0, rc_target_open(self, &b, &t, BURST * 32));
	drain_answers(&c);
	counters(self, before);

	for (i = 0; i < BURST; i++) {
		craft_write(&f, &c, &t, t.mem + i * 32, RQ_PSN + i, 32, 10 + i);
		ASSERT_EQ(0, xmit(&c, &f));
	}
	while (last != RQ_PSN + BURST - 1 && !answer(&c, 10000, &psn, &syn)) {
		acks++;
		EXPECT_EQ(0, syn & 0xe0);	/* an ACK, not a NAK */
		EXPECT_LT(last, psn);		/* rising: cumulative */
		EXPECT_GE(RQ_PSN + BURST - 1, psn);
		last = psn;
	}
	TH_LOG("%d packets answered by %d ACKs", BURST, acks);
	EXPECT_EQ(RQ_PSN + BURST - 1, last);
	EXPECT_GE(BURST, acks);
	EXPECT_LE(1, acks);
	/* Nothing after the last one. */
	EXPECT_EQ(-1, answer(&c, 300, &psn, &syn));
	for (i = 0; i < BURST; i++) {
		sv_fill(want, sizeof(want), 10 + i);
		EXPECT_EQ(0, memcmp(t.mem + i * 32, want, sizeof(want)));
	}
	counters(self, after);
	EXPECT_EQ(BURST, after[0] - before[0]);		/* wire_rx_frames */
	for (i = 1; i < (int)NNAMES; i++)
		EXPECT_EQ(0, after[i] - before[i]);	/* nothing else */
	rc_target_close(&t);
	bside_close(&b);
	close(c.tx);
	close(c.rx);
}

/*
 * Thousands of frames mutated at random (a few bytes anywhere past the
 * Ethernet header, or cut short), half of them sealed again so that they
 * pass the length and ICRC checks and reach the transports: B still
 * delivers a good frame, and nothing splats (the run checks dmesg).
 */
TEST_F_TIMEOUT(wire, fuzz, 300)
{
	struct crafter c;
	struct bside b = {};
	struct frame base[3], f;
	struct ibv_wc wc[16];
	uint8_t reth[16] = { 0 };
	unsigned int seed = 0x5eed, i, k, n;
	uint32_t qpn;
	int found = 0, tries;

	ASSERT_EQ(0, crafter_open(&c));
	ASSERT_EQ(0, bside_open(self, &b));
	qpn = b.v.qp->qp_num;
	craft_ud(&base[0], &c, qpn, QKEY, 200, 1);
	craft_rc_send(&base[1], &c, c.ip_a, b.rc->qp_num, RQ_PSN, 2);
	sv_put32(reth + 12, 4096);
	craft(&base[2], &c, c.ip_a, OP_RC | OP_WRITE_ONLY, b.rc->qp_num,
	      RQ_PSN, true, reth, sizeof(reth), 1024, 3);
	for (i = 0; i < 6000; i++) {
		f = base[i % 3];
		n = 1 + rand_r(&seed) % 4;
		for (k = 0; k < n; k++)
			f.b[ETH + rand_r(&seed) % (f.len - ETH)] ^=
				1 << (rand_r(&seed) % 8);
		if (rand_r(&seed) % 8 == 0)
			f.len = ETH + rand_r(&seed) % (f.len - ETH);
		if (i % 2 && f.len > BTH + 16)
			seal(&f);
		if (f.len > ETH)
			ASSERT_EQ(0, xmit(&c, &f));
		/* Keep the UD QP's receive queue fed. */
		while ((n = ibv_poll_cq(b.v.cq, 16, wc)) > 0)
			for (k = 0; k < n; k++)
				if (wc[k].qp_num == qpn)
					ud_recv(&b, wc[k].wr_id);
	}
	/*
	 * The good one, after the rest of the storm drained. On a slow
	 * host the storm's last frames may still take receives: they are
	 * posted again, and the good frame (UD: lost if it found none) is
	 * sent again every second.
	 */
	craft_ud(&f, &c, qpn, QKEY, 100, GOOD_SEED);
	for (tries = 0; tries < 200 * sv_slow() && !found; tries++) {
		if (tries % 20 == 0)
			ASSERT_EQ(0, xmit(&c, &f));
		n = ibv_poll_cq(b.v.cq, 16, wc);
		for (k = 0; k < n; k++) {
			if (wc[k].qp_num != qpn)
				continue;
			if (wc[k].status == IBV_WC_SUCCESS &&
			    wc[k].byte_len == 140 &&
			    b.v.buf[wc[k].wr_id * SLOT + 40] == GOOD_SEED)
				found = 1;
			else
				ud_recv(&b, wc[k].wr_id);
		}
		if (!found)
			usleep(50000);
	}
	EXPECT_TRUE(found);
	EXPECT_LT(0, stat_of(&self->b, "wire_icrc_errors"));
	EXPECT_LT(0, stat_of(&self->b, "wire_rx_drops"));
	bside_close(&b);
	close(c.tx);
	close(c.rx);
}

TEST_HARNESS_MAIN
