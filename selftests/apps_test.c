// SPDX-License-Identifier: GPL-2.0
/*
 * Verbs programs of other projects, unmodified, from Debian: qperf and
 * libfabric's verbs provider (fi_pingpong), over
 * sv_wire_test.h's veth between softverbs and rdma_rxe, or two softverbs
 * devices, with the server on either end. Nobody here tuned them to
 * softverbs: they find the devices, addresses and limits as they would a
 * RoCE NIC's. Each is skipped where Debian's package is not installed.
 */
#include "sv_harness.h"
#include "sv_test.h"
#include "sv_wire_test.h"

static bool have(const char *prog)
{
	char path[64];

	snprintf(path, sizeof(path), "/usr/bin/%s", prog);
	return !access(path, X_OK);
}

/*
 * qperf over rdma_cm (-cm1: qperf's own LID addressing is InfiniBand's,
 * which RoCE refuses): RC send, read, write bandwidth and latency, and
 * the atomics checked by value (ver_rc_*: qperf fails on a wrong one),
 * each test then "quit", which ends the server.
 *
 * Debian's qperf 0.4.11 sends its rdma_cm port to the client before it
 * listens on it (fixed upstream after 0.4.11, "Fix rdmacm race"): a
 * client that connects first is rejected (invalid service ID, as the
 * kernel's CM answers too), and the server's test process then waits
 * for a request forever. So each test has a server of its own, and one
 * rejected that way is run again with a new server (pair() kills the
 * old one's timeout(1), which takes its stuck test process with it).
 */
TEST_F_TIMEOUT(wire, qperf, 600)
{
	static const char * const tests[] = {
		"rc_bw", "rc_lat", "rc_rdma_read_bw", "rc_rdma_write_lat",
		"ver_rc_compare_swap", "ver_rc_fetch_add",
	};
	char s_cmd[128], c_cmd[256], want[64];
	unsigned int i;

	if (!have("qperf"))
		SKIP(return, "qperf is not installed");
	snprintf(s_cmd, sizeof(s_cmd), "qperf -lp 18750");
	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		snprintf(c_cmd, sizeof(c_cmd),
			 "qperf -lp 18750 -cm1 -t 1 %s %s quit",
			 S_IP(IP_A, IP_B), tests[i]);
		snprintf(want, sizeof(want), "%s:", tests[i]);
		EXPECT_EQ(0, pair(SERVER, s_cmd, CLIENT, c_cmd,
				  "connect\\|Event rejected", 10, true, want))
			TH_LOG("qperf %s", tests[i]);
	}
}

/*
 * fi_pingpong on libfabric's verbs provider, an FI_EP_MSG endpoint (RC
 * over rdma_cm), every size from 1 byte to 8 MiB, each message checked
 * (-c) by the other end.
 */
TEST_F_TIMEOUT(wire, fi_pingpong, 300)
{
	char s_cmd[256], c_cmd[256];

	if (!have("fi_pingpong"))
		SKIP(return, "libfabric-bin is not installed");
	snprintf(s_cmd, sizeof(s_cmd),
		 "fi_pingpong -p verbs -e msg -d %s -B 18753 -S all -I 5 -c",
		 SERVER->dev);
	snprintf(c_cmd, sizeof(c_cmd),
		 "fi_pingpong -p verbs -e msg -d %s -P 18753 -S all -I 5 -c %s",
		 CLIENT->dev, S_IP(IP_A, IP_B));
	/* Again while its server does not listen yet (TCP or rdma_cm). */
	EXPECT_EQ(0, pair(SERVER, s_cmd, CLIENT, c_cmd, "ctrl/\\|refused", 25,
			  false, "8m "));
}

TEST_HARNESS_MAIN
