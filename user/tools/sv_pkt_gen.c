// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sv_pkt_gen: the far side of the raw Ethernet benchmark. Sends UDP/IPv4
 * Ethernet frames (64 bytes unless --len) out of one netdev with AF_PACKET
 * sendmmsg, SV_PKT_BATCH frames a call, for a given time, cycling over
 * --flows flows (see sv_pkt.h: flow k has its own destination address and
 * UDP port, matching sv_raw_bench's rule k), and prints how many it sent.
 * Every frame is written just before it is sent, with one flow too, so
 * that the generator's own cost per frame is the same for any --flows.
 *
 *   sv_pkt_gen -i IFNAME [-t SECS] [-Q] [frame options]
 *
 *   -i IFNAME   the netdev to send on
 *   -t SECS     how long to send at most (5); SIGTERM or SIGINT ends it
 *               sooner, with the same report
 *   -Q          go through the qdisc (default: PACKET_QDISC_BYPASS)
 *
 * Output: a human line and "RESULT frames=N secs=S fps=R errors=E", where
 * errors counts sendmmsg calls that failed with ENOBUFS/EAGAIN (retried).
 */
#include "sv_pkt.h"

static int usage(FILE *f)
{
	fprintf(f, "usage: sv_pkt_gen -i IFNAME [-t SECS] [-Q] [frame options]\n"
		SV_PKT_USAGE);
	return f == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		SV_PKT_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct sv_pkt_cfg c;
	struct sv_tx_result r;
	const char *ifname = NULL;
	double secs = 5;
	int opt, bypass = 1, ret;

	sv_pkt_cfg_default(&c);
	while ((opt = getopt_long(argc, argv, "i:t:Qh", lo, NULL)) != -1) {
		switch (opt) {
		case 'i':
			ifname = optarg;
			break;
		case 't':
			if (sv_parse_secs(optarg, &secs))
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
	if (!ifname || optind != argc || sv_pkt_cfg_check(&c))
		return usage(stderr);
	sv_stop_on_signals();
	if (sv_afpacket_tx(ifname, &c, secs, bypass, 1, &r))
		return 1;
	printf("sv_pkt_gen: %llu frames of %u bytes, %u flow(s), in %.3f s: %.0f frames/s (%llu send errors)\n",
	       r.frames, c.len, c.flows, r.secs, r.frames / r.secs, r.errors);
	printf("RESULT frames=%llu secs=%.3f fps=%.0f errors=%llu\n",
	       r.frames, r.secs, r.frames / r.secs, r.errors);
	return 0;
}
