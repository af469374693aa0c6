// SPDX-License-Identifier: GPL-2.0
/*
 * RoCE v2 over VLANs, sv_wire_test.h's veth between softverbs and
 * rdma_rxe, or two softverbs devices, with VLAN 100 above each end:
 * Debian's ibv_rc_pingpong with content checks (-c) over the VLAN
 * addresses' GIDs, with a softverbs end bound to the VLAN device itself,
 * and bound to the veth end below it (the VLAN device's addresses are
 * its GIDs then, as on rxe and RoCE NICs). The frames must have gone
 * through the VLAN device (its receive counter); the tag's PCP comes
 * from the traffic class; a VLAN device another handler has is left
 * alone.
 * Skipped where rdma_rxe cannot be loaded (the rxe variants only).
 */
#include "sv_harness.h"
#include "sv_test.h"
#include "sv_wire_test.h"

/* The number the shell command c prints first, or -1. */
static long long sh_number(const char *c)
{
	char line[256];
	long long n = -1;
	FILE *f;

	f = popen(c, "r");
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f) && line[0] >= '0' && line[0] <= '9')
		n = atoll(line);
	pclose(f);
	return n;
}

/*
 * The VLAN devices' received frames, from sysfs in ns ("" for init_net);
 * -1 if unread.
 */
static long long vlan_rx(const char *ns, const char *dev)
{
	char c[256];

	snprintf(c, sizeof(c), "%s%s cat /sys/class/net/%s/statistics/rx_packets",
		 *ns ? "ip netns exec " : "", ns, dev);
	return sh_number(c);
}

/*
 * ibv_rc_pingpong over the VLAN addresses' GIDs (vlan_up() or
 * vlan_uppers() set them), content checked, and the frames went through
 * B's VLAN device.
 */
static void vlan_rc(struct __test_metadata *_metadata,
		    FIXTURE_DATA(wire) *self,
		    const FIXTURE_VARIANT(wire) *variant)
{
	long long rx = vlan_rx(NS_B, END_B ".100");

	ASSERT_LE(0, rx);
	EXPECT_EQ(0, rc(self, variant, false, "-c -s 65536 -n 20", 18720)) {
		static const char * const names[] = {
			"wire_rx_frames", "wire_tx_frames", "wire_rx_drops",
			"wire_tx_drops", "wire_retransmits",
			"wire_rx_duplicates", "wire_naks_sent",
			"wire_naks_received", "wire_rx_out_of_sequence",
		};
		unsigned int i;

		/* What B's end saw of it, for a hang seen once (6.1) */
		for (i = 0; i < ARRAY_SIZE(names); i++)
			TH_LOG("B %s %lld", names[i], stat_of(&self->b,
							     names[i]));
	}
	EXPECT_LE(rx + 20 * 64, vlan_rx(NS_B, END_B ".100"));
	EXPECT_EQ(0, stat_of(&self->b, "wire_icrc_errors"));
}

/* RoCE over a VLAN device a softverbs end is bound to (vlan_up()). */
TEST_F_TIMEOUT(wire, rc_vlan, 300)
{
	ASSERT_EQ(0, vlan_up(self, variant));
	vlan_rc(_metadata, self, variant);
}

/*
 * RoCE over VLAN devices above the bound netdevs, rxe's way (vlan_uppers():
 * A's softverbs end takes its VLAN device as it comes, B's is bound again
 * when its VLAN device is there). With B's VLAN device deleted, its GID
 * leaves B's table and the veth end's stays.
 */
TEST_F_TIMEOUT(wire, rc_vlan_upper, 300)
{
	ASSERT_EQ(0, vlan_uppers(self, variant));
	vlan_rc(_metadata, self, variant);
	ASSERT_EQ(0, sh("ip -n " NS_B " link del " END_B ".100"));
	EXPECT_GT(0, gid_wait(&self->b, IP_VB, true));
	EXPECT_LE(0, gid_index_now(&self->b, IP_B));
}

/*
 * The RoCE v2 frames in VLAN 100 with PCP prio that reached A's veth
 * end, from a tc flower filter on its ingress (pcp_filters()); -1 if
 * unread.
 */
static long long pcp_count(const FIXTURE_VARIANT(wire) *variant, int prio)
{
	char c[512];

	snprintf(c, sizeof(c), "%stc -s filter show dev " END_A
		 " ingress pref %d | sed -n 's/.*Sent [0-9]* bytes \\([0-9]*\\) pkt.*/\\1/p'",
		 variant->rxe ? "" : "ip netns exec " NS_A " ", 10 + prio);
	return sh_number(c);
}

/* Counters at A's veth end for RoCE v2 frames in VLAN 100, PCP 5 and 0. */
static int pcp_filters(const FIXTURE_VARIANT(wire) *variant)
{
	const char *a = variant->rxe ? "" : "ip netns exec " NS_A " ";
	int prio[] = { 5, 0 };
	unsigned int i;

	snprintf(cmd, sizeof(cmd), "%stc qdisc add dev " END_A " clsact", a);
	if (sh(cmd))
		return -1;
	for (i = 0; i < ARRAY_SIZE(prio); i++) {
		snprintf(cmd, sizeof(cmd), "%stc filter add dev " END_A
			 " ingress pref %d protocol 802.1Q flower vlan_id 100 "
			 "vlan_prio %d vlan_ethtype ipv4 ip_proto udp "
			 "dst_port 4791 action pass", a, 10 + prio[i], prio[i]);
		if (sh(cmd))
			return -1;
	}
	return 0;
}

/*
 * The VLAN tag's PCP comes from the traffic class: B's frames of an
 * ib_send_bw with --tclass 16 (IPTOS_LOWDELAY, priority 6 as for a
 * socket with that TOS) leave B's VLAN device, whose egress map makes
 * priority 6 PCP 5, with PCP 5 and none with PCP 0.
 */
TEST_F_TIMEOUT(wire, rc_vlan_pcp, 300)
{
	ASSERT_EQ(0, vlan_uppers(self, variant));
	ASSERT_EQ(0, sh("ip -n " NS_B " link set " END_B ".100 type vlan "
			"egress-qos-map 6:5"));
	ASSERT_EQ(0, pcp_filters(variant));
	ASSERT_EQ(0, pcp_count(variant, 5));
	EXPECT_EQ(0, run(self, variant, "ib_send_bw", false,
			 "-F -n 100 -s 64 --tclass=16", 18722));
	EXPECT_LE(1, pcp_count(variant, 5));
	EXPECT_EQ(0, pcp_count(variant, 0));
}

/*
 * Is B's netdev dev a member of 239.1.2.3, waiting up to 10 s for want?
 * 1, 0, or -1.
 */
static int b_member(const char *dev, bool want)
{
	char c[256];
	int i, got = -1;

	snprintf(c, sizeof(c), "ip -n " NS_B " maddr show dev %s | "
		 "grep -qw 239.1.2.3", dev);
	for (i = 0; i < 20 * sv_slow(); i++) {
		got = sh(c);
		if (got < 0 || got > 1)
			return -1;
		if (!got == want)
			break;
		usleep(500000);
	}
	return !got;
}

/*
 * UD multicast over VLAN devices above the bound netdevs: B's mckey
 * joins 239.1.2.3 from its VLAN address, which makes B's device a member
 * of the group on its VLAN device (IGMP, and the VLAN device's and the
 * veth end's filters) while its QP is attached, and not after; A's
 * mckey, from its VLAN address, sends it 3 messages of 100 bytes, which
 * arrive through B's VLAN device. A sender that left too soon after its
 * posts is run again (cm_test's mckey says why).
 */
TEST_F_TIMEOUT(wire, mckey_vlan_upper, 300)
{
	char bp[PATH_MAX + 64], ap[PATH_MAX + 64];
	long long rx;

	ASSERT_EQ(0, vlan_uppers(self, variant));
	ASSERT_EQ(0, b_member(END_B ".100", false));
	rx = vlan_rx(NS_B, END_B ".100");
	end_prefix(&self->b, bp, sizeof(bp));
	end_prefix(&self->a, ap, sizeof(ap));
	snprintf(cmd, sizeof(cmd),
		 "o=/tmp/svmcv; "
		 "%s timeout %d stdbuf -oL mckey -m 239.1.2.3 -b " IP_VB
		 " -C 3 -S 100 > $o.s 2>&1 & echo $! > $o.pid",
		 bp, 120 * sv_slow());
	ASSERT_EQ(0, sh(cmd));
	EXPECT_EQ(1, b_member(END_B ".100", true));
	snprintf(cmd, sizeof(cmd),
		 "o=/tmp/svmcv; s=$(cat $o.pid); "
		 "for i in $(seq 12); do kill -0 $s 2>/dev/null || break; "
		 "%s timeout %d stdbuf -oL mckey -m 239.1.2.3 -b " IP_VA
		 " -C 3 -S 100 -s -o > $o.c 2>&1 || break; sleep 0.4; done; "
		 "while kill -0 $s 2>/dev/null; do sleep 0.2; done; "
		 "grep -q 'data transfers complete' $o.s; q=$?; "
		 "[ $q = 0 ] || { cat $o.s; echo sender:; cat $o.c; }; "
		 "rm -f $o.s $o.c $o.pid; [ $q = 0 ]",
		 ap, 30 * sv_slow());
	EXPECT_EQ(0, sh(cmd));
	EXPECT_LE(rx + 3, vlan_rx(NS_B, END_B ".100"));
	EXPECT_EQ(0, b_member(END_B ".100", false));
}

/*
 * A group joined before a VLAN device comes (B's mckey on the veth end's
 * address) is joined on it too when B's device takes it; when the QP
 * goes (its process killed), the group leaves both.
 */
TEST_F_TIMEOUT(wire, mcast_vlan_later, 120)
{
	char bp[PATH_MAX + 64];

	if (variant->rxe)
		SKIP(return, "B's device and groups: one variant is enough");
	end_prefix(&self->b, bp, sizeof(bp));
	snprintf(cmd, sizeof(cmd),
		 "%s timeout %d mckey -m 239.1.2.3 -b " IP_B " -C 3 -S 100 "
		 ">/dev/null 2>&1 &",
		 bp, 60 * sv_slow());
	ASSERT_EQ(0, sh(cmd));
	EXPECT_EQ(1, b_member(END_B, true));
	ASSERT_EQ(0, sh("ip -n " NS_B " link add link " END_B " name " END_B
			".200 type vlan id 200 && ip -n " NS_B " link set "
			END_B ".200 up"));
	EXPECT_EQ(1, b_member(END_B ".200", true));
	ASSERT_EQ(0, sh("pkill -x mckey"));
	EXPECT_EQ(0, b_member(END_B ".200", false));
	EXPECT_EQ(0, b_member(END_B, false));
}

/*
 * A VLAN device with a receive handler of its own (a macvlan's lower
 * device) is not the device's, nor are its addresses GIDs; while it is
 * the device's, a macvlan cannot be put on it (EBUSY).
 */
TEST_F_TIMEOUT(wire, vlan_upper_busy, 120)
{
	ASSERT_EQ(0, vlan_links(variant));
	ASSERT_LE(0, gid_index(&self->b, IP_VB));
	EXPECT_NE(0, sh("ip -n " NS_B " link add link " END_B ".100 name "
			"mvb type macvlan 2>/dev/null"));
	ASSERT_EQ(0, rebind(NS_B, SV_B, END_B, "ip -n " NS_B " link add link "
			    END_B ".100 name mvb type macvlan"));
	EXPECT_LE(0, gid_index(&self->b, IP_B));
	EXPECT_GT(0, gid_index_now(&self->b, IP_VB));
}

TEST_HARNESS_MAIN
