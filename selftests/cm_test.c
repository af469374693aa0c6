// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_cm on the wire: Debian's rdmacm-utils programs, unmodified, over
 * sv_wire_test.h's veth between softverbs and rdma_rxe (the rxe end
 * through the system's librdmacm and the kernel's rdma_cm), or two
 * softverbs devices, with the server on either end. The softverbs end
 * uses build/compat's librdmacm.so.1 (kernel/cm/).
 */
#include "sv_harness.h"
#include "sv_test.h"
#include "sv_wire_test.h"

/*
 * prog's server on s and client on c, with args for both: 0 if both exit
 * 0 and the client's output has @want. The client tries again while the
 * server does not listen yet (rejected).
 */
static int cm_pair(const struct end *s, const struct end *c, const char *prog,
		   const char *s_args, const char *c_args, const char *want)
{
	char s_cmd[512], c_cmd[512];

	snprintf(s_cmd, sizeof(s_cmd), "%s %s", prog, s_args);
	snprintf(c_cmd, sizeof(c_cmd), "%s %s", prog, c_args);
	return pair(s, s_cmd, c, c_cmd, "REJECTED\\|UNREACHABLE", 25, false,
		    want);
}

/* rping -v -V: 10 pings, each verified by both ends, IPv4 and IPv6. */
TEST_F_TIMEOUT(wire, rping, 300)
{
	char s_args[128], c_args[128];
	bool v6;

	for (v6 = false; ; v6 = true) {
		const char *ip = v6 ? S_IP(IP6_A, IP6_B) : S_IP(IP_A, IP_B);

		snprintf(s_args, sizeof(s_args), "-s -v -V -C 10 -a %s -p %d",
			 ip, 18700 + v6);
		snprintf(c_args, sizeof(c_args), "-c -v -V -C 10 -a %s -p %d",
			 ip, 18700 + v6);
		EXPECT_EQ(0, cm_pair(SERVER, CLIENT, "rping", s_args, c_args,
				     "ping data: rdma-ping-9: "))
			TH_LOG("%s", v6 ? "IPv6" : "IPv4");
		if (v6)
			break;
	}
}

/* rping -v -V over VLAN 100 (vlan_up(): softverbs bound to the VLAN device) */
TEST_F_TIMEOUT(wire, rping_vlan, 300)
{
	const char *ip = S_IP(IP_VA, IP_VB);
	char s_args[128], c_args[128];

	ASSERT_EQ(0, vlan_up(self, variant));
	snprintf(s_args, sizeof(s_args), "-s -v -V -C 10 -a %s -p 18705", ip);
	snprintf(c_args, sizeof(c_args), "-c -v -V -C 10 -a %s -p 18705", ip);
	EXPECT_EQ(0, cm_pair(SERVER, CLIENT, "rping", s_args, c_args,
			     "ping data: rdma-ping-9: "));
}

/*
 * prog (ucmatose, udaddy: "-b" binds the server, "-s" names it) with
 * the server's address and more args on both ends, until "test complete".
 */
static int cm_bs(FIXTURE_DATA(wire) *self,
		 const FIXTURE_VARIANT(wire) *variant, const char *prog,
		 const char *args)
{
	char s_args[128], c_args[128];
	const char *ip = S_IP(IP_A, IP_B);

	snprintf(s_args, sizeof(s_args), "-b %s %s", ip, args);
	snprintf(c_args, sizeof(c_args), "-s %s %s", ip, args);
	return cm_pair(SERVER, CLIENT, prog, s_args, c_args, "test complete");
}

/* ucmatose: 4 connections, 50 messages of 1000 bytes each way on each. */
TEST_F_TIMEOUT(wire, ucmatose, 300)
{
	EXPECT_EQ(0, cm_bs(self, variant, "ucmatose",
			   "-p 18710 -c 4 -C 50 -S 1000"));
}

/*
 * udaddy: UD ids, their service resolved with SIDR; 2 ids of 10 messages
 * of 100 bytes each way (the server answers once it has them all). Its
 * port is 7174 (-p is the port space).
 */
TEST_F_TIMEOUT(wire, udaddy, 300)
{
	EXPECT_EQ(0, cm_bs(self, variant, "udaddy", "-c 2 -C 10 -S 100"));
}

/*
 * rdma_server and rdma_client: synchronous ids (rdma_create_ep,
 * rdma_get_request, a blocking rdma_connect and rdma_accept) and the
 * rdma_verbs.h helpers (rdma_reg_msgs, rdma_post_recv/send,
 * rdma_get_recv_comp/send_comp): 16 bytes each way, inline.
 */
TEST_F_TIMEOUT(wire, rdma_server, 300)
{
	char s_cmd[128], c_cmd[128];
	const char *ip = S_IP(IP_A, IP_B);

	snprintf(s_cmd, sizeof(s_cmd), "rdma_server -s %s -p 18730", ip);
	snprintf(c_cmd, sizeof(c_cmd), "rdma_client -s %s -p 18730", ip);
	EXPECT_EQ(0, pair(SERVER, s_cmd, CLIENT, c_cmd, "refused", 25, false,
			  "rdma_client: end 0"));
}

/*
 * mckey: the server end joins 239.1.2.3 and waits for 3 messages of 100
 * bytes to the group; the client end joins send-only and sends 3. mckey's
 * sender leaves and destroys its QP right after posting, unsignaled, so
 * a device that sends after the post returns (rxe, or softverbs' engine
 * on a busy CPU) may lose some of them: the sender runs again until the
 * receiver has had its 3 and exits 0.
 */
TEST_F_TIMEOUT(wire, mckey, 300)
{
	char sp[PATH_MAX + 64], cp[PATH_MAX + 64];

	end_prefix(SERVER, sp, sizeof(sp));
	end_prefix(CLIENT, cp, sizeof(cp));
	snprintf(cmd, sizeof(cmd),
		 "o=/tmp/svmc.$$; "
		 "%s timeout %d stdbuf -oL mckey -m 239.1.2.3 -b %s -C 3 -S 100 "
		 "> $o.s 2>&1 & s=$!; "
		 "for i in $(seq 12); do sleep 0.4; kill -0 $s 2>/dev/null || "
		 "break; %s timeout %d stdbuf -oL mckey -m 239.1.2.3 -b %s "
		 "-C 3 -S 100 -s -o > $o.c 2>&1 || break; done; "
		 "wait $s; q=$?; grep -q 'test complete' $o.c; w=$?; "
		 "[ $q = 0 -a $w = 0 ] || { echo \"receiver: exit $q\"; "
		 "cat $o.s; echo sender:; cat $o.c; }; "
		 "rm -f $o.s $o.c; [ $q = 0 -a $w = 0 ]",
		 sp, 120 * sv_slow(), S_IP(IP_A, IP_B),
		 cp, 30 * sv_slow(), C_IP(IP_A, IP_B));
	EXPECT_EQ(0, sh(cmd));
}

/*
 * The rxe end through our librdmacm.so.1 too: it hands rxe's ids to the
 * system's librdmacm (rdmacm_system.c), so one library serves both.
 * rping (an id bound to, or resolved from, rxe's address), rdma_server
 * and rdma_client (synchronous ids, rdma_create_ep), ucmatose, whose
 * server binds the wildcard (a listener on both libraries), and udaddy
 * (UD ids, SIDR).
 */
TEST_F_TIMEOUT(wire, rxe_through_ours, 400)
{
	char s_args[128], c_args[128];
	const char *ip = S_IP(IP_A, IP_B);

	if (!variant->rxe)
		SKIP(return, "for the rxe end");
	self->a.lib = true;
	snprintf(s_args, sizeof(s_args), "-s -v -V -C 5 -a %s -p 18740", ip);
	snprintf(c_args, sizeof(c_args), "-c -v -V -C 5 -a %s -p 18740", ip);
	EXPECT_EQ(0, cm_pair(SERVER, CLIENT, "rping", s_args, c_args,
			     "ping data: rdma-ping-4: "));
	snprintf(s_args, sizeof(s_args), "rdma_server -s %s -p 18741", ip);
	snprintf(c_args, sizeof(c_args), "rdma_client -s %s -p 18741", ip);
	EXPECT_EQ(0, pair(SERVER, s_args, CLIENT, c_args, "refused", 25,
			  false, "rdma_client: end 0"));
	snprintf(c_args, sizeof(c_args), "-s %s -p 18742 -c 2 -C 20 -S 500",
		 ip);
	EXPECT_EQ(0, cm_pair(SERVER, CLIENT, "ucmatose",
			     "-p 18742 -c 2 -C 20 -S 500", c_args,
			     "test complete"));
	EXPECT_EQ(0, cm_bs(self, variant, "udaddy", "-c 1 -C 5 -S 100"));
}

/*
 * One program, both libraries at once: a ucmatose server in init_net on
 * the wildcard, through ours, takes a connection from the softverbs end
 * across the wire to rxe's address (the system's library) and one from a
 * softverbs device of its own namespace (ours), bound to a dummy.
 */
TEST_F_TIMEOUT(wire, both_at_once, 300)
{
	char svctl[PATH_MAX + 32], pre[PATH_MAX + 64], bpre[PATH_MAX + 64];

	if (!variant->rxe || !variant->a_serves)
		SKIP(return, "for rxe serving");
	snprintf(svctl, sizeof(svctl), "%s/../bin/svctl", sv_compat_dir());
	snprintf(cmd, sizeof(cmd),
		 "set -e; ip link add " DUMMY_D " type dummy; "
		 "ip addr add " IP_D "/24 dev " DUMMY_D "; "
		 "ip link set " DUMMY_D " up; %s link add " SV_D " netdev "
		 DUMMY_D, svctl);
	ASSERT_EQ(0, sh(cmd));
	self->a.lib = true;
	end_prefix(&self->a, pre, sizeof(pre));
	end_prefix(&self->b, bpre, sizeof(bpre));
	/* Each client tries again while the server does not listen yet. */
	snprintf(cmd, sizeof(cmd),
		 "o=/tmp/svboth.$$; "
		 "%s timeout %d stdbuf -oL ucmatose -p 18743 -c 2 -C 20 "
		 "> $o.s 2>&1 & s=$!; "
		 "cl() { n=$1; shift; for i in $(seq 25); do sleep 0.5; "
		 "\"$@\" > $o.$n 2>&1 && return 0; "
		 "grep -q 'REJECTED\\|UNREACHABLE' $o.$n || return 1; done; "
		 "return 1; }; "
		 "cl w %s timeout %d ucmatose -s " IP_A " -p 18743 -c 1 -C 20 & "
		 "w=$!; cl l %s timeout %d ucmatose -s " IP_D
		 " -p 18743 -c 1 -C 20; l=$?; wait $w; w=$?; wait $s; q=$?; "
		 "[ $q = 0 -a $w = 0 -a $l = 0 ] || { echo \"server $q\"; "
		 "cat $o.s; echo \"wire client $w\"; cat $o.w; "
		 "echo \"local client $l\"; cat $o.l; }; "
		 "grep -q 'test complete' $o.w && grep -q 'test complete' $o.l; "
		 "r=$?; rm -f $o.s $o.w $o.l; [ $q = 0 -a $w = 0 -a $l = 0 ] && "
		 "[ $r = 0 ]",
		 pre, 120 * sv_slow(), bpre, 60 * sv_slow(), pre,
		 60 * sv_slow());
	EXPECT_EQ(0, sh(cmd));
}

TEST_HARNESS_MAIN
