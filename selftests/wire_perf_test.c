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

/* perftest over RC: each program, the server on this variant's side. */
TEST_F_TIMEOUT(wire, perftest, 600)
{
	static const char * const progs[] = {
		"ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_atomic_bw",
		"ib_send_lat",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(progs); i++) {
		const char *prog = progs[i];

		EXPECT_EQ(0, run(self, variant, prog, false, "-F -n 100",
				 18670 + i)) TH_LOG("%s", prog ?: "?");
	}
}

/*
 * ibv_rc_pingpong -c on a bad wire. The last ACK of either end may be
 * lost when its sender, done, has already closed its QP: the other end
 * then retransmits to a QP that is gone, for ever if it is rxe (it takes
 * retry_cnt 7 as infinite), whatever the end that left runs. One run may
 * fail that way; then one more.
 */
static int rc_bad_wire(FIXTURE_DATA(wire) *self,
		       const FIXTURE_VARIANT(wire) *variant, int port)
{
	if (!rc(self, variant, false, "-c -s 65536 -n 40", port))
		return 0;
	return rc(self, variant, false, "-c -s 65536 -n 40", port + 5);
}

/*
 * A lossy wire (1% loss, reordering and duplication each way): RC
 * transfers still complete with their data intact, and the counters
 * show what was recovered.
 */
TEST_F_TIMEOUT(wire, rc_lossy, 600)
{
	long long before = recovered(&self->b);

	ASSERT_EQ(0, netem(variant, "delay 1ms reorder 1% loss 1% "
			   "duplicate 1%"));
	EXPECT_EQ(0, rc_bad_wire(self, variant, 18680));
	EXPECT_EQ(0, run(self, variant, "ib_write_bw", false, "-F -n 200",
			 18681));
	EXPECT_EQ(0, run(self, variant, "ib_read_bw", false, "-F -n 100",
			 18682));
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
