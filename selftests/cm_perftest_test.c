// SPDX-License-Identifier: GPL-2.0
/*
 * perftest with its QPs connected by rdma_cm (-R) over sv_wire_test.h's
 * veth: softverbs (build/compat's librdmacm.so.1) and rxe (the system's
 * librdmacm, the kernel's rdma_cm), the server on either end, and two
 * softverbs devices.
 *
 * perftest -R races itself: once its handshake is done, the client
 * connects its QPs while the server makes its listening id, and a REQ
 * that comes first is rejected (reason 8, no one listens), by softverbs
 * as by the kernel's rdma_cm. perftest 4.5's client then "retries" on ids
 * it has destroyed, and crashes. Its control connection (rdma_cm too,
 * with -R) may also come before the server listens ("Unexpected CM event
 * bl blka 8"). So a run that a REJ failed is started again, server and
 * client, a few times.
 */
#include "sv_harness.h"
#include "sv_test.h"
#include "sv_wire_test.h"

static int perftest_r(FIXTURE_DATA(wire) *self,
		      const FIXTURE_VARIANT(wire) *variant, const char *prog,
		      int port)
{
	char s_cmd[256], c_cmd[256];

	snprintf(s_cmd, sizeof(s_cmd), "%s -R -F -n 100 -d %s -p %d", prog,
		 SERVER->dev, port);
	snprintf(c_cmd, sizeof(c_cmd), "%s -R -F -n 100 -d %s -p %d %s", prog,
		 CLIENT->dev, port, S_IP(IP_A, IP_B));
	return pair(SERVER, s_cmd, CLIENT, c_cmd,
		    "REJECTED\\|CM event bl blka 8\\|couldn.t connect\\|"
		    "unable to connect", 8, true, "#bytes");
}

TEST_F_TIMEOUT(wire, write_bw, 300)
{
	EXPECT_EQ(0, perftest_r(self, variant, "ib_write_bw", 18800));
}

TEST_F_TIMEOUT(wire, read_bw, 300)
{
	EXPECT_EQ(0, perftest_r(self, variant, "ib_read_bw", 18801));
}

TEST_F_TIMEOUT(wire, send_bw, 300)
{
	EXPECT_EQ(0, perftest_r(self, variant, "ib_send_bw", 18802));
}

TEST_F_TIMEOUT(wire, atomic_bw, 300)
{
	EXPECT_EQ(0, perftest_r(self, variant, "ib_atomic_bw", 18803));
}

TEST_F_TIMEOUT(wire, send_lat, 300)
{
	EXPECT_EQ(0, perftest_r(self, variant, "ib_send_lat", 18804));
}

TEST_HARNESS_MAIN
