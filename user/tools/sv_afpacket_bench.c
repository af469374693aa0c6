// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sv_afpacket_bench: the software baseline of the raw Ethernet benchmark,
 * what the kernel's AF_PACKET does with the traffic a RAW_PACKET QP would
 * get (see sv_raw_bench, the verbs side).
 *
 *   sv_afpacket_bench rx -i IFNAME [-t SECS] [-w SECS] [-T SECS] [frame options]
 *
 *     An AF_PACKET socket for ETH_P_IP bound to IFNAME with a TPACKET_V3
 *     receive ring (32 blocks of 1 MiB, retired after 10 ms) and a classic
 *     BPF filter that passes only the --flows flows (destination address
 *     and UDP port ranges; sv_pkt.h). Prints "ready" once bound, then counts
 *     the frames of those flows whose kernel receive timestamp falls in a
 *     window of -t seconds (3) that opens -w seconds (1) after the first
 *     frame, and prints frames/s. Exits 3 if no frame came within -T
 *     seconds (30) of "ready".
 *
 *   sv_afpacket_bench tx -i IFNAME [-t SECS] [-w SECS] [-Q] [frame options]
 *
 *     sendmmsg of the frames (64 bytes), SV_PKT_BATCH a call, with
 *     PACKET_QDISC_BYPASS unless -Q: -w seconds unmeasured, then -t
 *     seconds measured; prints frames/s.
 *
 * The last line is "RESULT frames=N secs=S fps=R ..." for scripts/bench-guest.
 */
#include <poll.h>
#include <sys/mman.h>
#include <linux/filter.h>
#include "sv_pkt.h"

#define RING_BLOCK (1u << 20)
#define RING_BLOCKS 32u
#define RING_FRAME 2048u

static int usage(FILE *f)
{
	fprintf(f,
		"usage: sv_afpacket_bench rx -i IFNAME [-t SECS] [-w SECS] [-T SECS] [frame options]\n"
		"       sv_afpacket_bench tx -i IFNAME [-t SECS] [-w SECS] [-Q] [frame options]\n"
		SV_PKT_USAGE);
	return f == stdout ? 0 : 2;
}

/* Pass IPv4 UDP frames to [ip_lo, ip_hi] ports [p_lo, p_hi]. */
static int attach_filter(int fd, uint32_t ip_lo, uint32_t ip_hi,
			 uint32_t p_lo, uint32_t p_hi)
{
	enum { DROP = 12 };
	struct sock_filter code[] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETHERTYPE_IP, 0, DROP - 2),
		/* 2 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 23),
		/* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, DROP - 4),
		/* 4 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 30),
		/* 5 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, ip_lo, 0, DROP - 6),
		/* 6 */ BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, ip_hi, DROP - 7, 0),
		/* 7 */ BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 14),
		/* 8 */ BPF_STMT(BPF_LD | BPF_H | BPF_IND, 16),
		/* 9 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, p_lo, 0, DROP - 10),
		/* 10 */ BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, p_hi, DROP - 11, 0),
		/* 11 */ BPF_STMT(BPF_RET | BPF_K, 0x40000),
		/* 12 = DROP */ BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = {
		.len = sizeof(code) / sizeof(code[0]),
		.filter = code,
	};

	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog))) {
		perror("SO_ATTACH_FILTER");
		return -1;
	}
	return 0;
}

static double ts_of(const struct tpacket3_hdr *h)
{
	return h->tp_sec + h->tp_nsec / 1e9;
}

static double realtime(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int rx(const char *ifname, const struct sv_pkt_cfg *c, double secs,
	      double warm, double timeout)
{
	struct tpacket_req3 req = {
		.tp_block_size = RING_BLOCK,
		.tp_block_nr = RING_BLOCKS,
		.tp_frame_size = RING_FRAME,
		.tp_frame_nr = RING_BLOCK / RING_FRAME * RING_BLOCKS,
		.tp_retire_blk_tov = 10,
	};
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct tpacket_stats_v3 st = {};
	socklen_t stlen = sizeof(st);
	unsigned long long count = 0, seen = 0, other = 0;
	uint32_t ppi, b = 0;
	double first = -1, start = 0, end = 0, last = 0, deadline, t_ready;
	uint8_t *ring;
	int fd, ifindex, v = TPACKET_V3, done = 0;

	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex) {
		fprintf(stderr, "%s: %s\n", ifname, strerror(errno));
		return 1;
	}
	/* Protocol 0: no frame reaches the socket before the bind below. */
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		perror("socket(AF_PACKET)");
		return 1;
	}
	ppi = c->flows < c->ports_per_ip ? c->flows : c->ports_per_ip;
	if (attach_filter(fd, c->dip, c->dip + (c->flows - 1) / c->ports_per_ip,
			  c->dport, c->dport + ppi - 1))
		return 1;
	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req))) {
		perror("TPACKET_V3 ring");
		return 1;
	}
	ring = mmap(NULL, (size_t)RING_BLOCK * RING_BLOCKS,
		    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, fd, 0);
	if (ring == MAP_FAILED) {
		perror("mmap(ring)");
		return 1;
	}
	sll.sll_ifindex = ifindex;
	sll.sll_protocol = htons(ETH_P_IP);
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		perror("bind(AF_PACKET)");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	/* Monotonic: the frames' timestamps are CLOCK_REALTIME, the wait not. */
	t_ready = sv_now();
	deadline = t_ready + timeout;

	while (!done) {
		struct tpacket_block_desc *bd =
			(void *)(ring + (size_t)b * RING_BLOCK);
		struct pollfd p = { .fd = fd, .events = POLLIN | POLLERR };
		struct tpacket3_hdr *h;
		uint32_t i, n;

		if (!(__atomic_load_n(&bd->hdr.bh1.block_status,
				      __ATOMIC_ACQUIRE) & TP_STATUS_USER)) {
			/* Every frame before end is in a retired block by now. */
			if (first >= 0 && realtime() > end + 0.5)
				break;
			if (first < 0 && sv_now() > deadline) {
				if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS,
					       &st, &stlen))
					perror("PACKET_STATISTICS");
				fprintf(stderr, "sv_afpacket_bench rx: no frame of the %u flow(s) in %.0f s (%llu frames in the ring; the socket counted %u, dropped %u)\n",
					c->flows, timeout, seen, st.tp_packets,
					st.tp_drops);
				printf("RESULT frames=0 secs=0 fps=0 error=noframes\n");
				return 3;
			}
			poll(&p, 1, 50);
			continue;
		}
		n = bd->hdr.bh1.num_pkts;
		h = (void *)((uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt);
		for (i = 0; i < n; i++) {
			double t = ts_of(h);

			seen++;
			if (sv_pkt_match((uint8_t *)h + h->tp_mac,
					 h->tp_snaplen, c) < 0) {
				other++;
			} else {
				if (first < 0) {
					first = t;
					start = first + warm;
					end = start + secs;
					printf("first frame %.3f s after ready\n",
					       sv_now() - t_ready);
				}
				if (t >= end)
					done = 1;
				else if (t >= start)
					count++;
				last = t;
			}
			h = (void *)((uint8_t *)h + h->tp_next_offset);
		}
		__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL,
				 __ATOMIC_RELEASE);
		b = (b + 1) % RING_BLOCKS;
	}
	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &stlen))
		perror("PACKET_STATISTICS");
	if (last < end - 0.01)
		fprintf(stderr, "sv_afpacket_bench rx: the traffic stopped %.3f s before the window closed\n",
			end - last);
	printf("sv_afpacket_bench rx: %llu frames in %.3f s: %.0f frames/s (%llu frames in all, %llu not of the flows, ring drops %u)\n",
	       count, secs, count / secs, seen, other, st.tp_drops);
	printf("RESULT frames=%llu secs=%.3f fps=%.0f drops=%u\n",
	       count, secs, count / secs, st.tp_drops);
	munmap(ring, (size_t)RING_BLOCK * RING_BLOCKS);
	close(fd);
	return 0;
}

static int tx(const char *ifname, const struct sv_pkt_cfg *c, double secs,
	      double warm, int bypass)
{
	struct sv_tx_result r;

	if (warm > 0 && sv_afpacket_tx(ifname, c, warm, bypass, 0, &r))
		return 1;
	if (sv_afpacket_tx(ifname, c, secs, bypass, 0, &r))
		return 1;
	printf("sv_afpacket_bench tx: %llu frames of %u bytes in %.3f s: %.0f frames/s (%llu send errors)\n",
	       r.frames, c->len, r.secs, r.frames / r.secs, r.errors);
	printf("RESULT frames=%llu secs=%.3f fps=%.0f errors=%llu\n",
	       r.frames, r.secs, r.frames / r.secs, r.errors);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		SV_PKT_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct sv_pkt_cfg c;
	const char *ifname = NULL, *mode;
	double secs = 3, warm = 1, timeout = 30;
	int opt, bypass = 1, ret;

	if (argc < 2)
		return usage(stderr);
	mode = argv[1];
	if (!strcmp(mode, "-h") || !strcmp(mode, "--help"))
		return usage(stdout);
	if (strcmp(mode, "rx") && strcmp(mode, "tx"))
		return usage(stderr);
	sv_pkt_cfg_default(&c);
	optind = 2;
	while ((opt = getopt_long(argc, argv, "i:t:w:T:Qh", lo, NULL)) != -1) {
		switch (opt) {
		case 'i':
			ifname = optarg;
			break;
		case 't':
		case 'w':
		case 'T':
			if (sv_parse_secs(optarg, opt == 't' ? &secs :
					  opt == 'w' ? &warm : &timeout))
				return usage(stderr);
			break;
		case 'Q':
			bypass = 0;
			break;
		case 'h':
			return usage(stdout);
		default:
			ret = sv_pkt_opt(&c, opt, optarg);
			if (ret) {
				if (ret < 0)
					fprintf(stderr, "bad value: %s\n", optarg);
				return usage(stderr);
			}
		}
	}
	if (!ifname || optind != argc || secs <= 0 || sv_pkt_cfg_check(&c))
		return usage(stderr);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "rx"))
		return rx(ifname, &c, secs, warm, timeout);
	return tx(ifname, &c, secs, warm, bypass);
}
