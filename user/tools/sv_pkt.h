/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * sv_pkt.h: what the raw Ethernet benchmark tools (sv_pkt_gen,
 * sv_afpacket_bench, sv_raw_bench) share: the UDP/IPv4 test frame, the
 * numbering of flows, option parsing for both, the clock, and the
 * AF_PACKET sendmmsg loop. Header-only: each tool is one .c file.
 *
 * Flows. Flow k (0 <= k < flows) is the frame to IPv4 destination
 * dip + k / ports_per_ip and UDP destination port dport + k % ports_per_ip.
 * A UDP port has 16 bits, so 100,000 distinct rules need more than one
 * destination address: with the defaults (dport 10000, 50,000 ports per
 * address) flows 0..49,999 go to 198.19.0.1 ports 10000..59999, flows
 * 50,000..99,999 to 198.19.0.2, and so on (RFC 2544's benchmark range). sv_raw_bench's rule k matches
 * exactly flow k; sv_pkt_gen --flows N sends flows 0..N-1 in turn, so that
 * with N rules installed every frame hits a rule and every rule is hit.
 */
#ifndef SV_PKT_H
#define SV_PKT_H

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SV_PKT_MIN_LEN 42	/* Ethernet 14 + IPv4 20 + UDP 8 */
#define SV_PKT_MAX_LEN 1514
#define SV_PKT_BATCH 64		/* frames per sendmmsg */

struct sv_pkt_cfg {
	uint8_t dmac[6], smac[6];
	uint32_t sip, dip;	/* host order; dip is flow 0's address */
	uint16_t sport, dport;	/* dport is flow 0's port */
	uint32_t ports_per_ip;
	uint32_t flows;
	uint32_t len;		/* frame length handed to the netdev (no FCS) */
};

static inline void sv_pkt_cfg_default(struct sv_pkt_cfg *c)
{
	static const uint8_t dmac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static const uint8_t smac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };

	memset(c, 0, sizeof(*c));
	memcpy(c->dmac, dmac, 6);
	memcpy(c->smac, smac, 6);
	c->sip = 0xc6120002;	/* 198.18.0.2 */
	c->dip = 0xc6130001;	/* 198.19.0.1 */
	c->sport = 9;
	c->dport = 10000;
	c->ports_per_ip = 50000;
	c->flows = 1;
	c->len = 64;
}

static inline double sv_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static inline void sv_flow_key(const struct sv_pkt_cfg *c, uint32_t k,
			       uint32_t *dip, uint16_t *dport)
{
	*dip = c->dip + k / c->ports_per_ip;
	*dport = (uint16_t)(c->dport + k % c->ports_per_ip);
}

/* The checksum of an IPv4 header of n bytes (its checksum field 0). */
static inline uint16_t sv_ip_csum_n(const uint8_t *h, size_t n)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static inline uint16_t sv_ip_csum(const uint8_t *h)
{
	return sv_ip_csum_n(h, 20);
}

static inline void sv_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = (uint8_t)v;
}

static inline void sv_put32(uint8_t *p, uint32_t v)
{
	sv_put16(p, v >> 16);
	sv_put16(p + 2, (uint16_t)v);
}

static inline uint16_t sv_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t sv_get32(const uint8_t *p)
{
	return (uint32_t)sv_get16(p) << 16 | sv_get16(p + 2);
}

/* Write flow k's frame (c->len bytes) to buf. UDP checksum 0 (none). */
static inline void sv_pkt_build(uint8_t *buf, const struct sv_pkt_cfg *c,
				uint32_t k)
{
	uint8_t *ip = buf + 14, *udp = buf + 34;
	uint32_t dip;
	uint16_t dport;

	sv_flow_key(c, k, &dip, &dport);
	memset(buf, 0, c->len);
	memcpy(buf, c->dmac, 6);
	memcpy(buf + 6, c->smac, 6);
	sv_put16(buf + 12, ETHERTYPE_IP);
	ip[0] = 0x45;
	sv_put16(ip + 2, (uint16_t)(c->len - 14));
	ip[6] = 0x40;		/* DF */
	ip[8] = 64;		/* TTL */
	ip[9] = IPPROTO_UDP;
	sv_put32(ip + 12, c->sip);
	sv_put32(ip + 16, dip);
	sv_put16(ip + 10, sv_ip_csum(ip));
	sv_put16(udp, c->sport);
	sv_put16(udp + 2, dport);
	sv_put16(udp + 4, (uint16_t)(c->len - 34));
	/* The payload: the flow number, for anyone looking at a capture. */
	if (c->len >= SV_PKT_MIN_LEN + 4)
		sv_put32(buf + SV_PKT_MIN_LEN, k);
}

/* Is this frame one of the c->flows flows? Its flow number, or -1. */
static inline long sv_pkt_match(const uint8_t *buf, size_t len,
				const struct sv_pkt_cfg *c)
{
	const uint8_t *ip = buf + 14, *udp;
	uint32_t dip, port, k;
	size_t ihl;

	if (len < SV_PKT_MIN_LEN || sv_get16(buf + 12) != ETHERTYPE_IP ||
	    (ip[0] >> 4) != 4 || ip[9] != IPPROTO_UDP)
		return -1;
	ihl = (size_t)(ip[0] & 0xf) * 4;
	if (ihl < 20 || len < 14 + ihl + 8)
		return -1;
	udp = ip + ihl;
	dip = sv_get32(ip + 16);
	port = sv_get16(udp + 2);
	if (dip < c->dip || port < c->dport ||
	    port - c->dport >= c->ports_per_ip)
		return -1;
	k = (dip - c->dip) * c->ports_per_ip + (port - c->dport);
	return k < c->flows ? (long)k : -1;
}

static inline int sv_parse_mac(const char *s, uint8_t *mac)
{
	unsigned int b[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5]) != 6)
		return -1;
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -1;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

/* The netdev's MAC address, from /sys/class/net/IF/address. */
static inline int sv_if_mac(const char *ifname, uint8_t *mac)
{
	char path[128], line[64];
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f))
		ret = sv_parse_mac(line, mac);
	fclose(f);
	return ret;
}

static inline int sv_parse_u32(const char *s, uint32_t *v, uint32_t max)
{
	unsigned long x;
	char *end;

	errno = 0;
	x = strtoul(s, &end, 0);
	if (errno || end == s || *end || x > max)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static inline int sv_parse_secs(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return end == s || *end || *v < 0 || *v > 3600 ? -1 : 0;
}

/*
 * The frame options every tool takes (getopt_long ids above 255):
 *   --dmac MAC --smac MAC --sip A.B.C.D --dip A.B.C.D --sport N
 *   --dport N --ports-per-ip N --flows N --len BYTES
 */
enum {
	SV_OPT_DMAC = 256, SV_OPT_SMAC, SV_OPT_SIP, SV_OPT_DIP, SV_OPT_SPORT,
	SV_OPT_DPORT, SV_OPT_PPI, SV_OPT_FLOWS, SV_OPT_LEN, SV_OPT_LAST
};

#define SV_PKT_LONGOPTS							\
	{ "dmac", required_argument, NULL, SV_OPT_DMAC },		\
	{ "smac", required_argument, NULL, SV_OPT_SMAC },		\
	{ "sip", required_argument, NULL, SV_OPT_SIP },			\
	{ "dip", required_argument, NULL, SV_OPT_DIP },			\
	{ "sport", required_argument, NULL, SV_OPT_SPORT },		\
	{ "dport", required_argument, NULL, SV_OPT_DPORT },		\
	{ "ports-per-ip", required_argument, NULL, SV_OPT_PPI },	\
	{ "flows", required_argument, NULL, SV_OPT_FLOWS },		\
	{ "len", required_argument, NULL, SV_OPT_LEN }

#define SV_PKT_USAGE							\
	"frame options (flow k: --dip + k / --ports-per-ip, UDP port\n"	\
	"--dport + k %% --ports-per-ip):\n"				\
	"  --dmac MAC          destination MAC (02:00:00:00:00:01)\n"	\
	"  --smac MAC          source MAC (02:00:00:00:00:02)\n"	\
	"  --sip A.B.C.D       source address (198.18.0.2)\n"		\
	"  --dip A.B.C.D       flow 0's destination address (198.19.0.1)\n" \
	"  --sport N           UDP source port (9)\n"			\
	"  --dport N           flow 0's UDP destination port (10000)\n"	\
	"  --ports-per-ip N    destination ports per address (50000)\n"	\
	"  --flows N           number of flows (1)\n"			\
	"  --len BYTES         frame length without FCS, 42..1514 (64)\n"

/* One frame option: 0 if taken, -1 if bad, 1 if not a frame option. */
static inline int sv_pkt_opt(struct sv_pkt_cfg *c, int opt, const char *arg)
{
	struct in_addr a;
	uint32_t v;

	switch (opt) {
	case SV_OPT_DMAC:
		return sv_parse_mac(arg, c->dmac);
	case SV_OPT_SMAC:
		return sv_parse_mac(arg, c->smac);
	case SV_OPT_SIP:
	case SV_OPT_DIP:
		if (inet_pton(AF_INET, arg, &a) != 1)
			return -1;
		if (opt == SV_OPT_SIP)
			c->sip = ntohl(a.s_addr);
		else
			c->dip = ntohl(a.s_addr);
		return 0;
	case SV_OPT_SPORT:
	case SV_OPT_DPORT:
		if (sv_parse_u32(arg, &v, 65535))
			return -1;
		if (opt == SV_OPT_SPORT)
			c->sport = (uint16_t)v;
		else
			c->dport = (uint16_t)v;
		return 0;
	case SV_OPT_PPI:
		return sv_parse_u32(arg, &c->ports_per_ip, 65536) ||
		       !c->ports_per_ip ? -1 : 0;
	case SV_OPT_FLOWS:
		return sv_parse_u32(arg, &c->flows, 1u << 30) || !c->flows ?
		       -1 : 0;
	case SV_OPT_LEN:
		return sv_parse_u32(arg, &c->len, SV_PKT_MAX_LEN) ||
		       c->len < SV_PKT_MIN_LEN ? -1 : 0;
	}
	return 1;
}

/* The flows must fit: ports within 16 bits. */
static inline int sv_pkt_cfg_check(const struct sv_pkt_cfg *c)
{
	uint32_t ppi = c->flows < c->ports_per_ip ? c->flows : c->ports_per_ip;

	if ((uint32_t)c->dport + ppi - 1 > 65535) {
		fprintf(stderr, "--dport %u + %u ports goes past 65535\n",
			c->dport, ppi);
		return -1;
	}
	return 0;
}

/* An AF_PACKET socket bound to ifname for protocol proto (network order). */
static inline int sv_packet_socket(const char *ifname, uint16_t proto,
				   int *ifindex)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	int fd;

	*ifindex = (int)if_nametoindex(ifname);
	if (!*ifindex) {
		fprintf(stderr, "%s: %s\n", ifname, strerror(errno));
		return -1;
	}
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		perror("socket(AF_PACKET)");
		return -1;
	}
	sll.sll_ifindex = *ifindex;
	sll.sll_protocol = proto;
	if (proto && bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		perror("bind(AF_PACKET)");
		close(fd);
		return -1;
	}
	return fd;
}

/* Set by a signal handler: sv_afpacket_tx stops early and reports. */
static volatile sig_atomic_t sv_stop;

static inline void sv_stop_handler(int sig)
{
	(void)sig;
	sv_stop = 1;
}

/* SIGTERM and SIGINT end the run early instead of the process. */
static inline void sv_stop_on_signals(void)
{
	struct sigaction sa = { .sa_handler = sv_stop_handler };

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

struct sv_tx_result {
	unsigned long long frames;	/* accepted by sendmmsg */
	unsigned long long errors;	/* ENOBUFS and the like, retried */
	double secs;
};

/*
 * Send c->flows flows in turn on ifname with sendmmsg (SV_PKT_BATCH frames a
 * call) for secs seconds; bypass: PACKET_QDISC_BYPASS. rebuild: write every
 * frame before it is sent even when there is one flow, so that the cost per
 * frame does not depend on the number of flows (the generator does; with
 * more than one flow the frames are always rebuilt). 0, or -1 on error.
 */
static inline int sv_afpacket_tx(const char *ifname,
				 const struct sv_pkt_cfg *c, double secs,
				 int bypass, int rebuild,
				 struct sv_tx_result *r)
{
	static uint8_t frames[SV_PKT_BATCH][SV_PKT_MAX_LEN];
	struct mmsghdr msg[SV_PKT_BATCH];
	struct iovec iov[SV_PKT_BATCH];
	struct sockaddr_ll to = { .sll_family = AF_PACKET };
	uint32_t k = 0;
	double t0, end, t;
	int fd, ifindex, i, n, one = 1;

	memset(r, 0, sizeof(*r));
	fd = sv_packet_socket(ifname, 0, &ifindex);
	if (fd < 0)
		return -1;
	if (bypass && setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one,
				 sizeof(one)))
		perror("PACKET_QDISC_BYPASS (going on without)");
	to.sll_ifindex = ifindex;
	to.sll_halen = 6;
	memcpy(to.sll_addr, c->dmac, 6);
	memset(msg, 0, sizeof(msg));
	for (i = 0; i < SV_PKT_BATCH; i++) {
		iov[i].iov_base = frames[i];
		iov[i].iov_len = c->len;
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
		msg[i].msg_hdr.msg_name = &to;
		msg[i].msg_hdr.msg_namelen = sizeof(to);
	}
	if (c->flows > 1)
		rebuild = 1;
	for (i = 0; i < SV_PKT_BATCH; i++)
		sv_pkt_build(frames[i], c, 0);
	t0 = sv_now();
	end = t0 + secs;
	do {
		if (rebuild)
			for (i = 0; i < SV_PKT_BATCH; i++) {
				sv_pkt_build(frames[i], c, k);
				if (++k == c->flows)
					k = 0;
			}
		n = sendmmsg(fd, msg, SV_PKT_BATCH, 0);
		if (n < 0) {
			if (errno != ENOBUFS && errno != EAGAIN &&
			    errno != EINTR) {
				perror("sendmmsg");
				close(fd);
				return -1;
			}
			r->errors++;
			n = 0;
		}
		r->frames += (unsigned int)n;
		/* Frames a short send left out go first next time. */
		if (rebuild && n < SV_PKT_BATCH)
			k = (k + c->flows - (SV_PKT_BATCH - n) % c->flows) %
			    c->flows;
		t = sv_now();
	} while (t < end && !sv_stop);
	r->secs = t - t0;
	close(fd);
	return 0;
}

#endif /* SV_PKT_H */
