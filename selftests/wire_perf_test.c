// SPDX-License-Identifier: GPL-2.0
/*
 * RoCE v2 on the wire, under load and on a bad wire: sv_wire_test.h's
 * veth between softverbs and rdma_rxe, or two softverbs devices.
 * perftest's ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw and
 * ib_send_lat over RC with the server on either end; RC transfers with
 * 1% loss, reordering and duplication each way (tc netem), content
 * checked, and the recovery counters moving; corrupted frames dropped
 * for their ICRC and counted while the transfer still completes.
 * Skipped where rdma_rxe cannot be loaded (the rxe variants only).
 */
#include "sv_harness.h"
#include "sv_test.h"
#include "sv_wire_test.h"

/*
 * perftest's args with the local ACK timeout (-u; its default 14 is
 * 67 ms) raised as many times as the run is slower (SV_SLOW, rounded up
 * to a power of two). On the debug kernel the answers to one window of
 * READs queue for longer than 67 ms: each timeout then asks again for
 * everything in flight, whose answers queue longer still, until the
 * retries run out without progress (go-back-N's collapse when the
 * timeout is shorter than the round trip; rxe's requester goes back the
 * same way). Measured there: IBV_WC_RETRY_EXC_ERR in 3 of 3 runs of
 * ib_read_bw -n 100 at 14 (49 to 56 timeouts each), all 3 complete at 18
 * (0 to 3 timeouts).
 */
static const char *slow_args(char *buf, size_t len, const char *args)
{
	int u = 14, k;

	for (k = 1; k < sv_slow(); k *= 2)
		u++;
	if (u == 14)
		return args;
	snprintf(buf, len, "%s -u %d", args, u);
	return buf;
}

/*
 * perftest over RC: each program, the server on this variant's side (the
 * ACK timeout raised on a slow kernel: softverbs<->softverbs on the debug
 * kernel ran out of retries at 14 in ib_write_bw and ib_send_bw of 64 KiB,
 * before and after 2026-12-01's change, as the READs below did).
 */
TEST_F_TIMEOUT(wire, perftest, 600)
{
	static const char * const progs[] = {
		"ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_atomic_bw",
		"ib_send_lat",
	};
	unsigned int i;
	char args[64];

	for (i = 0; i < ARRAY_SIZE(progs); i++) {
		const char *prog = progs[i];

		EXPECT_EQ(0, run(self, variant, prog, false,
				 slow_args(args, sizeof(args), "-F -n 100"),
				 18670 + i)) TH_LOG("%s", prog ?: "?");
	}
}

/*
 * ibv_rc_pingpong -c on a bad wire. The last ACK of either end may be
 * lost when its sender, done, has already closed its QP: the other end
 * then retransmits to a QP that is gone, for ever if it is rxe (it takes
 * retry_cnt 7 as infinite), or until its retries run out if it is
 * softverbs (IBV_WC_RETRY_EXC_ERR), whatever the end that left runs. A
 * run may fail that way (a few percent of runs at 2% corruption: one of
 * the last ACKs), and two in a row were seen once (CI, 2026-11-30, rxe
 * serving: rxe hung, then the softverbs client's retries ran out); then
 * it runs again, three runs in all. Data errors fail every run (-c).
 */
static int rc_bad_wire(FIXTURE_DATA(wire) *self,
		       const FIXTURE_VARIANT(wire) *variant, int port)
{
	int i, ret = -1;

	for (i = 0; i < 3 && ret; i++)
		ret = rc(self, variant, false, "-c -s 65536 -n 40",
			 port + 5 * i);
	return ret;
}

/*
 * A lossy wire (1% loss, reordering and duplication each way): RC
 * transfers still complete with their data intact, and the counters
 * show what was recovered.
 */
TEST_F_TIMEOUT(wire, rc_lossy, 600)
{
	long long before = recovered(&self->b);
	char args[64];

	ASSERT_EQ(0, netem(variant, "delay 1ms reorder 1% loss 1% "
			   "duplicate 1%"));
	EXPECT_EQ(0, rc_bad_wire(self, variant, 18680));
	EXPECT_EQ(0, run(self, variant, "ib_write_bw", false,
			 slow_args(args, sizeof(args), "-F -n 200"), 18681));
	EXPECT_EQ(0, run(self, variant, "ib_read_bw", false,
			 slow_args(args, sizeof(args), "-F -n 100"), 18682));
	EXPECT_LT(before, recovered(&self->b));
	netem(variant, "");
}

/* Corrupted frames: dropped for their ICRC, counted, and recovered. */
TEST_F_TIMEOUT(wire, icrc_errors, 300)
{
	ASSERT_EQ(0, netem(variant, "corrupt 2%"));
	EXPECT_EQ(0, rc_bad_wire(self, variant, 18690));
	EXPECT_LT(0, stat_of(&self->b, "wire_icrc_errors"));
	netem(variant, "");
}

TEST_HARNESS_MAIN
