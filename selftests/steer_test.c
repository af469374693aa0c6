// SPDX-License-Identifier: GPL-2.0
/*
 * Raw Ethernet and flow steering (Documentation/steering.rst): a device
 * bound to one end of a veth pair whose other end is in a network
 * namespace of the test's own (svst_peer). Frames come from the far side
 * through AF_PACKET sockets and ordinary UDP sockets; RAW_PACKET QPs send
 * frames there; ibv_create_flow rules decide which QP gets what, and what
 * the near side's kernel stack still sees.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <linux/if_ether.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"

#define SV_VETH_FIXTURE	steer
#define NS	"svst_peer"
#define NEAR	"svst0"
#define FAR	"svst1"
#define DEV	"svst"
#define NEAR_IP	"10.77.0.1"
#define FAR_IP	"10.77.0.2"
#define NOBODY	65534

#include "sv_steer_test.h"

/* Where a RAW_PACKET QP may be created, and by whom. */
TEST_F(steer, raw_qp_needs_netdev_and_cap_net_raw)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *c0;
	struct ibv_pd *pd0;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	pid_t pid;
	int st;

	/* softverbs0 has no netdev: no frames. */
	c0 = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, c0);
	pd0 = ibv_alloc_pd(c0);
	cq = ibv_create_cq(c0, 8, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	ia.send_cq = ia.recv_cq = cq;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_qp(pd0, &ia));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd0);
	ibv_close_device(c0);

	cq = ibv_create_cq(self->ctx, 8, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	ia.send_cq = ia.recv_cq = cq;
	/* Without CAP_NET_RAW: EPERM. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(2);
		errno = 0;
		_exit(!ibv_create_qp(self->pd, &ia) && errno == EPERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* Create flags: BLOCK_SELF_MCAST_LB only. */
	qp = ibv_create_qp(self->pd, &ia);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(0, raw_qp_init(qp));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

/* Each send WQE is one frame on the wire, byte for byte. */
TEST_F(steer, raw_send_frames)
{
	struct frame f, g;
	struct rawqp r;
	struct ibv_sge sg[2];
	struct ibv_send_wr wr = { .sg_list = sg, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	uint8_t got[2048];
	ssize_t n;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	/* Two SGEs: the header and the payload. */
	eth_frame(&f, self->far_mac, self->mac, ETYPE, 3, 1000);
	memcpy(r.buf + NRECV * 2048, f.b, f.len);
	sg[0] = (struct ibv_sge){ (uintptr_t)r.buf + NRECV * 2048, 14,
				  r.mr->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)r.buf + NRECV * 2048 + 14,
				  f.len - 14, r.mr->lkey };
	wr.num_sge = 2;
	wr.wr_id = 7;
	ASSERT_EQ(0, ibv_post_send(r.qp, &wr, &bad));
	ASSERT_EQ(1, poll1(r.cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(7, wc.wr_id);
	EXPECT_EQ(IBV_WC_SEND, wc.opcode);
	n = recv(self->pkt, got, sizeof(got), 0);
	ASSERT_EQ((ssize_t)f.len, n);
	EXPECT_EQ(0, memcmp(got, f.b, f.len));

	/* Inline. */
	eth_frame(&g, self->far_mac, self->mac, ETYPE, 9, 40);
	sg[0] = (struct ibv_sge){ (uintptr_t)g.b, g.len, 0 };
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	wr.wr_id = 8;
	ASSERT_EQ(0, ibv_post_send(r.qp, &wr, &bad));
	ASSERT_EQ(1, poll1(r.cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	n = recv(self->pkt, got, sizeof(got), 0);
	ASSERT_EQ((ssize_t)g.len, n);
	EXPECT_EQ(0, memcmp(got, g.b, g.len));

	/* Longer than the MTU (1500) plus the Ethernet header: LOC_LEN_ERR. */
	memset(r.buf + NRECV * 2048, 0, 1515);
	memcpy(r.buf + NRECV * 2048, f.b, 14);
	sg[0] = (struct ibv_sge){ (uintptr_t)r.buf + NRECV * 2048, 1515,
				  r.mr->lkey };
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr_id = 9;
	ASSERT_EQ(0, ibv_post_send(r.qp, &wr, &bad));
	ASSERT_EQ(1, poll1(r.cq, &wc));
	EXPECT_EQ(9, wc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status);
	rawqp_close(&r);
}

/*
 * ETH + IPV4 + UDP with a tag: frames to that port land whole in the QP
 * with the tag, and the near stack never sees them; other ports still
 * reach the stack's socket.
 */
TEST_F(steer, udp_rule_traps_and_tags)
{
	static const char msg[] = "steered to a raw QP";
	static const char other[] = "for the kernel stack";
	int far = udp_socket(true, FAR_IP, 6000);
	int s5000 = udp_socket(false, NEAR_IP, 5000);
	int s5001 = udp_socket(false, NEAR_IP, 5001);
	struct ibv_flow *fl;
	struct ibv_wc wc;
	struct rawqp r;
	uint32_t tag;
	const uint8_t *p;

	ASSERT_LE(0, far);
	ASSERT_LE(0, s5000);
	ASSERT_LE(0, s5001);
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	fl = udp_rule(r.qp, self->mac, 5000, 0, 0, 0x123456);
	ASSERT_NE(NULL, fl);
	EXPECT_EQ(1, sv_dev_obj_count(DEV, "flow"));

	ASSERT_EQ(0, udp_send(far, NEAR_IP, 5000, msg, sizeof(msg)));
	ASSERT_EQ(1, rx_poll(&r, &wc, &tag, 3000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(14 + 20 + 8 + sizeof(msg), wc.byte_len);
	EXPECT_EQ(0x123456, tag);
	p = (const uint8_t *)r.buf + wc.wr_id * 2048;
	EXPECT_EQ(0, memcmp(p, self->mac, 6));
	EXPECT_EQ(0, memcmp(p + 6, self->far_mac, 6));
	EXPECT_EQ(0x08, p[12]);
	EXPECT_EQ(0x00, p[13]);
	EXPECT_EQ(0, memcmp(p + 42, msg, sizeof(msg)));
	post_rq(&r, wc.wr_id);
	/* Trapped: the stack's socket on 5000 gets nothing. */
	EXPECT_EQ(0, udp_got(s5000, msg, sizeof(msg), 300));

	/* Not matched: the stack has it, the QP not. */
	ASSERT_EQ(0, udp_send(far, NEAR_IP, 5001, other, sizeof(other)));
	EXPECT_EQ(1, udp_got(s5001, other, sizeof(other), 1500));
	EXPECT_EQ(0, rx_poll(&r, &wc, NULL, 200));

	/* With the rule gone, the stack has 5000 again. */
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	ASSERT_EQ(0, udp_send(far, NEAR_IP, 5000, msg, sizeof(msg)));
	EXPECT_EQ(1, udp_got(s5000, msg, sizeof(msg), 1500));
	EXPECT_EQ(0, rx_poll(&r, &wc, NULL, 200));
	rawqp_close(&r);
	close(far);
	close(s5000);
	close(s5001);
}

/* DONT_TRAP: the QP has a copy and lower rules and the stack still see it. */
TEST_F(steer, dont_trap_copies)
{
	static const char msg[] = "both of you";
	int far = udp_socket(true, FAR_IP, 6000);
	int near = udp_socket(false, NEAR_IP, 5002);
	struct ibv_flow *fa, *fb;
	struct ibv_wc wc;
	struct rawqp a, b;
	uint32_t tag;

	ASSERT_LE(0, far);
	ASSERT_LE(0, near);
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &a, IBV_QPT_RAW_PACKET,
				0));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &b, IBV_QPT_RAW_PACKET,
				0));
	fa = udp_rule(a.qp, NULL, 5002, 0, IBV_FLOW_ATTR_FLAGS_DONT_TRAP, 5);
	ASSERT_NE(NULL, fa);
	/* A lower rule (a higher value) still sees the frame: it traps. */
	fb = udp_rule(b.qp, NULL, 5002, 3, 0, 6);
	ASSERT_NE(NULL, fb);
	ASSERT_EQ(0, udp_send(far, NEAR_IP, 5002, msg, sizeof(msg)));
	ASSERT_EQ(1, rx_poll(&a, &wc, &tag, 3000));
	EXPECT_EQ(5, tag);
	ASSERT_EQ(1, rx_poll(&b, &wc, &tag, 3000));
	EXPECT_EQ(6, tag);
	EXPECT_EQ(0, udp_got(near, msg, sizeof(msg), 300));

	/* A QP with a flow cannot be destroyed. */
	EXPECT_EQ(EBUSY, ibv_destroy_qp(b.qp));
	EXPECT_EQ(0, ibv_destroy_flow(fb));

	/* Only the copy left: the stack gets the datagram too. */
	ASSERT_EQ(0, udp_send(far, NEAR_IP, 5002, msg, sizeof(msg)));
	ASSERT_EQ(1, rx_poll(&a, &wc, &tag, 3000));
	EXPECT_EQ(1, udp_got(near, msg, sizeof(msg), 1500));
	EXPECT_EQ(0, rx_poll(&b, &wc, NULL, 200));
	EXPECT_EQ(0, ibv_destroy_flow(fa));
	rawqp_close(&a);
	rawqp_close(&b);
	close(far);
	close(near);
}

/* Lower priority values first; equal priorities: one copy, first rule. */
TEST_F(steer, priorities)
{
	struct ibv_flow *f0, *f1, *f2, *f3;
	struct rawqp a, b;
	struct ibv_wc wc;
	struct frame f;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &a, IBV_QPT_RAW_PACKET,
				0));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &b, IBV_QPT_RAW_PACKET,
				0));
	/* b's rule is made first but has the higher value. */
	f1 = eth_rule(b.qp, self->mac, ETYPE, 7, 0);
	f0 = eth_rule(a.qp, self->mac, ETYPE, 2, 0);
	ASSERT_NE(NULL, f0);
	ASSERT_NE(NULL, f1);
	eth_frame(&f, self->mac, self->far_mac, ETYPE, 1, 100);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, rx_poll(&a, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&a, &wc, &f));
	EXPECT_EQ(0, rx_poll(&b, &wc, NULL, 300));
	EXPECT_EQ(0, ibv_destroy_flow(f0));
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, rx_poll(&b, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&b, &wc, &f));
	EXPECT_EQ(0, rx_poll(&a, &wc, NULL, 300));

	/*
	 * Equal priorities, one with a wider mask, both to a: one copy. And
	 * a third to b at the same priority, made later: b gets nothing.
	 */
	f2 = eth_rule(a.qp, self->mac, ETYPE, 7, 0);
	f3 = eth_rule(a.qp, NULL, ETYPE, 7, 0);
	ASSERT_NE(NULL, f2);
	ASSERT_NE(NULL, f3);
	EXPECT_EQ(0, ibv_destroy_flow(f1));
	f1 = eth_rule(b.qp, self->mac, ETYPE, 7, 0);
	ASSERT_NE(NULL, f1);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, rx_poll(&a, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&a, &wc, &f));
	EXPECT_EQ(0, rx_poll(&a, &wc, NULL, 300));
	EXPECT_EQ(0, rx_poll(&b, &wc, NULL, 10));
	EXPECT_EQ(0, ibv_destroy_flow(f1));
	EXPECT_EQ(0, ibv_destroy_flow(f2));
	EXPECT_EQ(0, ibv_destroy_flow(f3));
	rawqp_close(&a);
	rawqp_close(&b);
}

/* ACTION_DROP: nobody, not even the stack. ALL_DEFAULT / MC_DEFAULT. */
TEST_F(steer, drop_and_defaults)
{
	static const char msg[] = "dropped";
	static const uint8_t mc[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };
	int far = udp_socket(true, FAR_IP, 6000);
	int near = udp_socket(false, NEAR_IP, 5003);
	struct ibv_flow *drop, *all, *mcd;
	struct spec_attr sa;
	struct rawqp a, b;
	struct ibv_wc wc;
	struct frame f, m;
	long drops;

	ASSERT_LE(0, far);
	ASSERT_LE(0, near);
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &a, IBV_QPT_RAW_PACKET,
				0));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &b, IBV_QPT_RAW_PACKET,
				0));
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_eth(&sa, NULL, 0);
	fa_ipv4(&sa, NULL, NEAR_IP);
	fa_l4(&sa, IBV_FLOW_SPEC_UDP, 5003);
	fa_drop(&sa);
	drop = ibv_create_flow(a.qp, &sa.attr);
	ASSERT_NE(NULL, drop);
	drops = sv_stat_of(self->svctl, DEV, "steering_drops");
	ASSERT_EQ(0, udp_send(far, NEAR_IP, 5003, msg, sizeof(msg)));
	EXPECT_EQ(0, udp_got(near, msg, sizeof(msg), 500));
	EXPECT_EQ(0, rx_poll(&a, &wc, NULL, 10));
	EXPECT_EQ(drops + 1, sv_stat_of(self->svctl, DEV, "steering_drops"));
	EXPECT_EQ(0, ibv_destroy_flow(drop));

	/* MC_DEFAULT: multicast nothing else took; ALL_DEFAULT: the rest. */
	fa_init(&sa, IBV_FLOW_ATTR_MC_DEFAULT, 0, 0);
	mcd = ibv_create_flow(b.qp, &sa.attr);
	ASSERT_NE(NULL, mcd);
	fa_init(&sa, IBV_FLOW_ATTR_ALL_DEFAULT, 1, 0);
	all = ibv_create_flow(a.qp, &sa.attr);
	ASSERT_NE(NULL, all);
	eth_frame(&f, self->mac, self->far_mac, ETYPE, 4, 64);
	eth_frame(&m, mc, self->far_mac, ETYPE, 5, 64);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, rx_poll(&a, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&a, &wc, &f));
	EXPECT_EQ(0, rx_poll(&b, &wc, NULL, 200));
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, m.b, m.len));
	ASSERT_EQ(1, rx_poll(&b, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&b, &wc, &m));
	EXPECT_EQ(0, rx_poll(&a, &wc, NULL, 200));
	/* A NORMAL rule comes first. */
	ASSERT_NE(NULL, drop = eth_rule(b.qp, self->mac, ETYPE, 9, 0));
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, rx_poll(&b, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&b, &wc, &f));
	EXPECT_EQ(0, rx_poll(&a, &wc, NULL, 200));
	/* ALL_DEFAULT traps the stack's traffic too. */
	ASSERT_EQ(0, udp_send(far, NEAR_IP, 5003, msg, sizeof(msg)));
	ASSERT_EQ(1, rx_poll(&a, &wc, NULL, 3000));
	post_rq(&a, wc.wr_id);
	EXPECT_EQ(0, udp_got(near, msg, sizeof(msg), 300));
	EXPECT_EQ(0, ibv_destroy_flow(drop));
	EXPECT_EQ(0, ibv_destroy_flow(all));
	EXPECT_EQ(0, ibv_destroy_flow(mcd));
	rawqp_close(&a);
	rawqp_close(&b);
	close(far);
	close(near);
}

/* SNIFFER: a copy of every frame received and sent; nothing trapped. */
TEST_F(steer, sniffer)
{
	static const char msg[] = "sniffed";
	int far = udp_socket(true, FAR_IP, 6000);
	int near = udp_socket(false, NEAR_IP, 5004);
	struct ibv_sge sg;
	struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED |
						IBV_SEND_INLINE };
	struct ibv_send_wr *bad;
	struct spec_attr sa;
	struct ibv_flow *sn;
	struct rawqp a, s;
	struct ibv_wc wc;
	struct frame f;

	ASSERT_LE(0, far);
	ASSERT_LE(0, near);
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &a, IBV_QPT_RAW_PACKET,
				0));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &s, IBV_QPT_RAW_PACKET,
				0));
	fa_init(&sa, IBV_FLOW_ATTR_SNIFFER, 0, 0);
	sn = ibv_create_flow(s.qp, &sa.attr);
	ASSERT_NE(NULL, sn);
	ASSERT_EQ(0, udp_send(far, NEAR_IP, 5004, msg, sizeof(msg)));
	EXPECT_EQ(1, udp_got(near, msg, sizeof(msg), 1500));
	ASSERT_EQ(1, rx_poll(&s, &wc, NULL, 3000));
	EXPECT_EQ(14 + 20 + 8 + sizeof(msg), wc.byte_len);
	post_rq(&s, wc.wr_id);
	/* a sends a frame: the sniffer has it too. */
	eth_frame(&f, self->far_mac, self->mac, ETYPE, 6, 50);
	sg = (struct ibv_sge){ (uintptr_t)f.b, f.len, 0 };
	ASSERT_EQ(0, ibv_post_send(a.qp, &wr, &bad));
	ASSERT_EQ(1, poll1(a.cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, rx_poll(&s, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&s, &wc, &f));
	EXPECT_EQ(0, ibv_destroy_flow(sn));
	rawqp_close(&a);
	rawqp_close(&s);
	close(far);
	close(near);
}

/* VLAN tags match and come back in the frame; a UD QP gets a GRH first. */
TEST_F(steer, vlan_and_ud)
{
	struct ibv_flow_spec_eth *e;
	struct spec_attr sa;
	struct ibv_flow *fl;
	struct rawqp r, u;
	struct ibv_wc wc;
	struct frame f, g;
	const char *p;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_eth(&sa, self->mac, ETYPE);
	e = (void *)sa.specs;
	e->val.vlan_tag = htons(0x2064);	/* prio 1, VLAN 100 */
	e->mask.vlan_tag = htons(0xefff);
	fl = ibv_create_flow(r.qp, &sa.attr);
	ASSERT_NE(NULL, fl);
	/* dst, src, 0x8100, TCI, ETYPE, payload */
	eth_frame(&f, self->mac, self->far_mac, 0x8100, 0, 0);
	f.b[14] = 0x20;
	f.b[15] = 0x64;
	f.b[16] = ETYPE >> 8;
	f.b[17] = ETYPE & 0xff;
	sv_fill((char *)f.b + 18, 200, 8);
	f.len = 218;
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, rx_poll(&r, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&r, &wc, &f));
	/* VLAN 101 does not match, nor does an untagged frame. */
	f.b[15] = 0x65;
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	eth_frame(&g, self->mac, self->far_mac, ETYPE, 1, 64);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, g.b, g.len));
	EXPECT_EQ(0, rx_poll(&r, &wc, NULL, 300));
	EXPECT_EQ(0, ibv_destroy_flow(fl));

	/* UD: 40 bytes of GRH, then the frame. */
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &u, IBV_QPT_UD, 0));
	fl = eth_rule(u.qp, self->mac, ETYPE, 0, 0);
	ASSERT_NE(NULL, fl);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, g.b, g.len));
	ASSERT_EQ(1, rx_poll(&u, &wc, NULL, 3000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(40 + g.len, wc.byte_len);
	p = u.buf + wc.wr_id * 2048;
	EXPECT_EQ(0, memcmp(p + 40, g.b, g.len));
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	rawqp_close(&r);
	rawqp_close(&u);
}

/* No receive WQE: the frame is dropped and counted, as a NIC does. */
TEST_F(steer, no_wqe_drops)
{
	struct ibv_flow *fl;
	struct rawqp r;
	struct ibv_wc wc;
	struct frame f;
	long long before;
	int i;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	fl = eth_rule(r.qp, self->mac, ETYPE, 0, 0);
	ASSERT_NE(NULL, fl);
	eth_frame(&f, self->mac, self->far_mac, ETYPE, 2, 64);
	before = sv_stat_of(self->svctl, DEV, "rx_raw_drops");
	ASSERT_LE(0, before);
	/* NRECV frames fill every WQE; 5 more find none. */
	for (i = 0; i < NRECV + 5; i++)
		ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b,
				      f.len));
	for (i = 0; i < NRECV; i++) {
		ASSERT_EQ(1, rx_poll(&r, &wc, NULL, 3000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	usleep(300000);
	EXPECT_EQ(0, rx_poll(&r, &wc, NULL, 10));
	EXPECT_EQ(before + 5, sv_stat_of(self->svctl, DEV, "rx_raw_drops"));
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	rawqp_close(&r);
}

/* What ibv_create_flow refuses, and who may call it. */
TEST_F(steer, bad_specs_and_permissions)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_flow_spec_eth *e;
	struct spec_attr sa;
	struct ibv_flow *fl;
	struct ibv_qp *rc;
	struct rawqp r;
	long flows = sv_dev_obj_count(DEV, "flow");
	pid_t pid;
	int st;

	ASSERT_LE(0, flows);
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
#define REFUSED(want) do {						\
		errno = 0;						\
		fl = ibv_create_flow(r.qp, &sa.attr);			\
		EXPECT_EQ(NULL, fl);					\
		EXPECT_EQ(want, errno);					\
		if (fl)							\
			ibv_destroy_flow(fl);				\
	} while (0)
	/* A spec whose size is not verbs.h's. */
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_eth(&sa, self->mac, 0);
	e = (void *)sa.specs;
	e->size = 38;
	sa.attr.size -= 2;
	REFUSED(EINVAL);
	/* num_of_specs counts a spec that is not there (zeros). */
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_eth(&sa, self->mac, 0);
	sa.attr.num_of_specs = 2;
	REFUSED(EINVAL);
	/*
	 * The specs' own sizes say how long the attr is: as libibverbs,
	 * its size field is not read (pyverbs leaves it at the attr's).
	 */
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_eth(&sa, self->mac, 0);
	sa.attr.size = sizeof(sa.attr);
	fl = ibv_create_flow(r.qp, &sa.attr);
	ASSERT_NE(NULL, fl);
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	sa.attr.size = 0xffff;
	fl = ibv_create_flow(r.qp, &sa.attr);
	ASSERT_NE(NULL, fl);
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	/* An unknown spec type. */
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_eth(&sa, self->mac, 0);
	e->type = 0x21;
	REFUSED(EINVAL);
	/* comp_mask, flags, port, type. */
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_eth(&sa, self->mac, 0);
	sa.attr.comp_mask = 1;
	REFUSED(EINVAL);
	sa.attr.comp_mask = 0;
	sa.attr.flags = 1 << 5;
	REFUSED(EINVAL);
	sa.attr.flags = 0;
	sa.attr.port = 2;
	REFUSED(EINVAL);
	sa.attr.port = 1;
	sa.attr.type = 7;
	REFUSED(EINVAL);
	/* Conflicting values: IPv4 and IPv6 on one layer. */
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_ipv4(&sa, NULL, NEAR_IP);
	{
		struct ibv_flow_spec_ipv6 *s6 = fa_add(&sa, sizeof(*s6));

		memset(s6, 0, sizeof(*s6));
		s6->type = IBV_FLOW_SPEC_IPV6;
		s6->size = sizeof(*s6);
	}
	REFUSED(EINVAL);
	/* A default rule with match criteria. */
	fa_init(&sa, IBV_FLOW_ATTR_ALL_DEFAULT, 0, 0);
	fa_eth(&sa, self->mac, 0);
	REFUSED(EINVAL);
	/* Flow actions: not yet (counters: counters_test). */
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	{
		struct ibv_flow_spec_action_handle *c = fa_add(&sa,
							       sizeof(*c));

		memset(c, 0, sizeof(*c));
		c->type = IBV_FLOW_SPEC_ACTION_HANDLE;
		c->size = sizeof(*c);
	}
	REFUSED(EOPNOTSUPP);
	EXPECT_EQ(flows, sv_dev_obj_count(DEV, "flow"));

	/* Only RAW_PACKET and UD QPs. */
	ia.send_cq = ia.recv_cq = r.cq;
	rc = ibv_create_qp(self->pd, &ia);
	ASSERT_NE(NULL, rc);
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_eth(&sa, self->mac, 0);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_flow(rc, &sa.attr));
	EXPECT_EQ(EINVAL, errno);
	ibv_destroy_qp(rc);

	/* Without CAP_NET_RAW: EPERM. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(2);
		errno = 0;
		fl = ibv_create_flow(r.qp, &sa.attr);
		_exit(!fl && errno == EPERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* A good one counts and holds its QP. */
	fl = ibv_create_flow(r.qp, &sa.attr);
	ASSERT_NE(NULL, fl);
	EXPECT_EQ(flows + 1, sv_dev_obj_count(DEV, "flow"));
	EXPECT_EQ(EBUSY, ibv_destroy_qp(r.qp));
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	EXPECT_EQ(flows, sv_dev_obj_count(DEV, "flow"));
	rawqp_close(&r);

	/* A process that exits with flows: the file's close destroys them. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_context *ctx = sv_open_named(self->list, DEV);
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;

		if (!pd || rawqp_open(ctx, pd, &r, IBV_QPT_RAW_PACKET, 0))
			_exit(2);
		if (!ibv_create_flow(r.qp, &sa.attr) ||
		    !ibv_create_flow(r.qp, &sa.attr))
			_exit(3);
		_exit(sv_dev_obj_count(DEV, "flow") == flows + 2 ? 0 : 4);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_EQ(flows, sv_dev_obj_count(DEV, "flow"));
	EXPECT_EQ(0, sv_dev_obj_count(DEV, "qp"));
}

/* Processes making and destroying rules while frames flow: no splat. */
TEST_F(steer, churn_under_traffic)
{
	struct frame f;
	pid_t kids[4], sender;
	long flows = sv_dev_obj_count(DEV, "flow");
	int i, st, ok = 0;

	eth_frame(&f, self->mac, self->far_mac, ETYPE, 3, 300);
	sender = sv_far_flood(self->pkt, self->far_ifindex, f.b, f.len);
	ASSERT_LE(0, sender);
	for (i = 0; i < 4; i++) {
		kids[i] = fork();
		ASSERT_LE(0, kids[i]);
		if (!kids[i]) {
			struct ibv_context *ctx = sv_open_named(self->list, DEV);
			struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
			struct ibv_flow *fl[8];
			struct ibv_wc wc;
			struct rawqp r;
			int n, k, got = 0;

			if (!pd || rawqp_open(ctx, pd, &r, IBV_QPT_RAW_PACKET,
					      0))
				_exit(2);
			for (n = 0; n < 30; n++) {
				for (k = 0; k < 8; k++) {
					fl[k] = eth_rule(r.qp, k & 1 ? self->mac
							 : NULL, ETYPE, k % 3,
							 k & 2 ?
							 IBV_FLOW_ATTR_FLAGS_DONT_TRAP
							 : 0);
					if (!fl[k])
						_exit(3);
				}
				while (rx_poll(&r, &wc, NULL, 0)) {
					got++;
					post_rq(&r, wc.wr_id);
				}
				for (k = 0; k < 8; k++)
					if (ibv_destroy_flow(fl[k]))
						_exit(4);
			}
			/*
			 * A loaded host may not have run the sender in the
			 * rounds: then one rule waits for a frame.
			 */
			if (!got && eth_rule(r.qp, NULL, ETYPE, 0,
					     IBV_FLOW_ATTR_FLAGS_DONT_TRAP) &&
			    rx_poll(&r, &wc, NULL, 5000 * sv_slow()))
				got++;
			/* Half of them leave rules for the close. */
			if (i & 1)
				eth_rule(r.qp, NULL, ETYPE, 1, 0);
			else
				rawqp_close(&r);
			_exit(got ? 0 : 5);
		}
	}
	ok = sv_wait_kids(_metadata, kids, 4);
	kill(sender, SIGKILL);
	waitpid(sender, &st, 0);
	EXPECT_EQ(4, ok);
	EXPECT_EQ(flows, sv_dev_obj_count(DEV, "flow"));
}

#define ALLOW_LOOP_BACK	(1 << 0)	/* older verbs.h names bit 0 so */

static int raw_send_inline(struct rawqp *r, const struct frame *f,
			   uint64_t id)
{
	struct ibv_sge sg = { (uintptr_t)f->b, f->len, 0 };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED |
						IBV_SEND_INLINE };
	struct ibv_send_wr *bad;

	return ibv_post_send(r->qp, &wr, &bad);
}

/*
 * Wait for r's send completion; a receive completion found before it (a
 * looped-back frame may complete first) is held for rx_poll().
 */
static int tx_done(struct rawqp *r)
{
	struct ibv_wc wc;
	uint32_t tag;
	int i;

	for (i = 0; i < 3000; i++) {
		if (!cq_take(r, &wc, &tag)) {
			usleep(1000);
			continue;
		}
		if (wc.opcode == IBV_WC_SEND)
			return wc.status == IBV_WC_SUCCESS ? 0 : -1;
		if (r->nheld == (int)(sizeof(r->held) / sizeof(r->held[0])))
			return -1;
		r->held[r->nheld] = wc;
		r->held_tag[r->nheld++] = tag;
	}
	return -1;
}

/* Frames to the device's own MAC, multicast, broadcast: the e-switch. */
TEST_F(steer, eswitch_loopback)
{
	static const uint8_t mc[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x42 };
	struct ibv_flow *fb, *fa, *fm[3];
	struct rawqp a, b, c;
	uint8_t got[2048];
	struct ibv_wc wc;
	struct frame f, m, n;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &a, IBV_QPT_RAW_PACKET,
				0));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &b, IBV_QPT_RAW_PACKET,
				0));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &c, IBV_QPT_RAW_PACKET,
				IBV_QP_CREATE_BLOCK_SELF_MCAST_LB));
	/* a to the own MAC: b has it, the wire not, a not (no LOOP_BACK). */
	fb = eth_rule(b.qp, self->mac, ETYPE, 0, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	fa = eth_rule(a.qp, self->mac, ETYPE, 1, 0);
	ASSERT_NE(NULL, fb);
	ASSERT_NE(NULL, fa);
	eth_frame(&f, self->mac, self->mac, ETYPE, 11, 40);
	ASSERT_EQ(0, raw_send_inline(&a, &f, 1));
	ASSERT_EQ(1, rx_poll(&b, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&b, &wc, &f));
	EXPECT_EQ(0, tx_done(&a));
	EXPECT_EQ(0, rx_poll(&a, &wc, NULL, 300));
	set_timeout(self->pkt, 300);
	EXPECT_GT(0, recv(self->pkt, got, sizeof(got), 0));
	/* With ALLOW_LOOP_BACK a has it too. */
	EXPECT_EQ(0, ibv_destroy_flow(fa));
	fa = eth_rule(a.qp, self->mac, ETYPE, 1, ALLOW_LOOP_BACK);
	ASSERT_NE(NULL, fa);
	ASSERT_EQ(0, raw_send_inline(&a, &f, 2));
	ASSERT_EQ(1, rx_poll(&b, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&b, &wc, &f));
	EXPECT_EQ(0, tx_done(&a));
	ASSERT_EQ(1, rx_poll(&a, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&a, &wc, &f));

	/* Multicast: b and the wire; c never its own, even with LOOP_BACK. */
	fm[0] = eth_rule(b.qp, mc, ETYPE, 0, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	fm[1] = eth_rule(c.qp, mc, ETYPE, 0,
			 IBV_FLOW_ATTR_FLAGS_DONT_TRAP | ALLOW_LOOP_BACK);
	fm[2] = eth_rule(a.qp, mc, ETYPE, 0, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	ASSERT_NE(NULL, fm[0]);
	ASSERT_NE(NULL, fm[1]);
	ASSERT_NE(NULL, fm[2]);
	eth_frame(&m, mc, self->mac, ETYPE, 12, 44);
	ASSERT_EQ(0, raw_send_inline(&c, &m, 3));
	ASSERT_EQ(1, rx_poll(&b, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&b, &wc, &m));
	ASSERT_EQ(1, rx_poll(&a, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&a, &wc, &m));
	EXPECT_EQ(0, tx_done(&c));
	EXPECT_EQ(0, rx_poll(&c, &wc, NULL, 300));
	set_timeout(self->pkt, 2000);
	ASSERT_EQ((ssize_t)m.len, recv(self->pkt, got, sizeof(got), 0));
	EXPECT_EQ(0, memcmp(got, m.b, m.len));
	/* A unicast frame to another MAC: only the wire. */
	eth_frame(&n, self->far_mac, self->mac, ETYPE, 13, 46);
	ASSERT_EQ(0, raw_send_inline(&b, &n, 4));
	ASSERT_EQ((ssize_t)n.len, recv(self->pkt, got, sizeof(got), 0));
	EXPECT_EQ(0, tx_done(&b));
	EXPECT_EQ(0, rx_poll(&a, &wc, NULL, 200));
	EXPECT_EQ(0, rx_poll(&c, &wc, NULL, 10));

	EXPECT_EQ(0, ibv_destroy_flow(fm[0]));
	EXPECT_EQ(0, ibv_destroy_flow(fm[1]));
	EXPECT_EQ(0, ibv_destroy_flow(fm[2]));
	EXPECT_EQ(0, ibv_destroy_flow(fa));
	EXPECT_EQ(0, ibv_destroy_flow(fb));

	/* To the own MAC, trapped by no rule: the local stack has it. */
	{
		static const char msg[] = "via the e-switch";
		int near = udp_socket(false, NEAR_IP, 5010);
		uint8_t udp[8 + sizeof(msg)] = { 0x17, 0x70, 5010 >> 8,
						 5010 & 0xff, 0,
						 sizeof(udp) };
		uint32_t sum = 0;
		int i;

		ASSERT_LE(0, near);
		memcpy(udp + 8, msg, sizeof(msg));
		ipv4_frame(&f, self->mac, self->mac, 17, udp, sizeof(udp));
		for (i = 0; i < 20; i += 2)
			sum += f.b[14 + i] << 8 | f.b[15 + i];
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		f.b[14 + 10] = ~sum >> 8;
		f.b[14 + 11] = ~sum & 0xff;
		ASSERT_EQ(0, raw_send_inline(&a, &f, 5));
		EXPECT_EQ(0, tx_done(&a));
		EXPECT_EQ(1, udp_got(near, msg, sizeof(msg), 2000));
		close(near);
	}
	rawqp_close(&a);
	rawqp_close(&b);
	rawqp_close(&c);
}

/* A netdev with a receive handler already (a bridge port): EBUSY. */
TEST_F(steer, link_add_busy_netdev)
{
	char cmd[PATH_MAX + 128];

	ASSERT_EQ(0, SH("ip link add svstd type dummy && ip link add svstbr "
			"type bridge && ip link set svstd master svstbr"));
	snprintf(cmd, sizeof(cmd), "%s link add svsb netdev svstd 2>&1 | "
		 "grep -q 'receive handler'", self->svctl);
	EXPECT_EQ(0, system(cmd));
	snprintf(cmd, sizeof(cmd), "%s link show 2>/dev/null | grep -q svsb",
		 self->svctl);
	EXPECT_NE(0, system(cmd));
	SH("ip link del svstd; ip link del svstbr");
}

/* An IPv6 + UDP frame to us with the given traffic class, label, hop limit. */
static void ipv6_frame(struct frame *f, const uint8_t dst[6],
		       const uint8_t src[6], uint8_t tclass, uint32_t label,
		       uint8_t hops, int dport)
{
	uint8_t *ip = f->b + 14, *udp = ip + 40;
	uint32_t vtf = (6u << 28) | ((uint32_t)tclass << 20) | label;

	eth_frame(f, dst, src, ETH_P_IPV6, 0, 0);
	memset(ip, 0, 48 + 16);
	vtf = htonl(vtf);
	memcpy(ip, &vtf, 4);
	ip[5] = 24;		/* payload length */
	ip[6] = 17;		/* UDP */
	ip[7] = hops;
	ip[8] = 0xfe;
	ip[9] = 0x80;
	ip[23] = 1;
	ip[24] = 0xfe;
	ip[25] = 0x80;
	ip[39] = 2;
	udp[0] = 7000 >> 8;
	udp[1] = 7000 & 0xff;
	udp[2] = dport >> 8;
	udp[3] = dport & 0xff;
	udp[5] = 24;
	sv_fill((char *)udp + 8, 16, 3);
	f->len = 14 + 40 + 24;
}

/* IPv6 fields, bit-exact masks; TCP from an ordinary socket. */
TEST_F(steer, ipv6_and_tcp)
{
	struct ibv_flow_spec_ipv6 *s6;
	struct ibv_flow *f6, *ft;
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct spec_attr sa;
	struct rawqp r;
	struct ibv_wc wc;
	struct frame f;
	const uint8_t *p;
	int far, lst, acc;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	s6 = fa_add(&sa, sizeof(*s6));
	s6->type = IBV_FLOW_SPEC_IPV6;
	s6->size = sizeof(*s6);
	s6->val.flow_label = htonl(0x12345);
	s6->mask.flow_label = htonl(0xfffff);
	s6->val.traffic_class = 0x28;
	s6->mask.traffic_class = 0xfc;		/* DSCP only */
	s6->val.next_hdr = 17;
	s6->mask.next_hdr = 0xff;
	s6->val.hop_limit = 33;
	s6->mask.hop_limit = 0xff;
	fa_l4(&sa, IBV_FLOW_SPEC_UDP, 7001);
	f6 = ibv_create_flow(r.qp, &sa.attr);
	ASSERT_NE(NULL, f6);
	/* ECN bits are outside the mask: still a match. */
	ipv6_frame(&f, self->mac, self->far_mac, 0x2b, 0x12345, 33, 7001);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, rx_poll(&r, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&r, &wc, &f));
	/* One bit off anywhere masked: no match. */
	ipv6_frame(&f, self->mac, self->far_mac, 0x2b, 0x12344, 33, 7001);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ipv6_frame(&f, self->mac, self->far_mac, 0x28, 0x12345, 32, 7001);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ipv6_frame(&f, self->mac, self->far_mac, 0x68, 0x12345, 33, 7001);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ipv6_frame(&f, self->mac, self->far_mac, 0x28, 0x12345, 33, 7002);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, rx_poll(&r, &wc, NULL, 400));
	EXPECT_EQ(0, ibv_destroy_flow(f6));

	/* TCP: the SYNs to 5005 are the QP's; 5006 connects through the stack. */
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_ipv4(&sa, FAR_IP, NEAR_IP);
	fa_l4(&sa, IBV_FLOW_SPEC_TCP, 5005);
	ft = ibv_create_flow(r.qp, &sa.attr);
	ASSERT_NE(NULL, ft);
	lst = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, lst);
	a.sin_port = htons(5006);
	inet_pton(AF_INET, NEAR_IP, &a.sin_addr);
	ASSERT_EQ(0, bind(lst, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, listen(lst, 4));
	far = sv_ns_socket(NS, AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, far);
	ASSERT_EQ(0, connect(far, (struct sockaddr *)&a, sizeof(a)));
	acc = accept(lst, NULL, NULL);
	EXPECT_LE(0, acc);
	close(acc);
	close(far);
	EXPECT_EQ(0, rx_poll(&r, &wc, NULL, 200));
	far = sv_ns_socket(NS, AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, far);
	fcntl(far, F_SETFL, O_NONBLOCK);
	a.sin_port = htons(5005);
	connect(far, (struct sockaddr *)&a, sizeof(a));
	ASSERT_EQ(1, rx_poll(&r, &wc, NULL, 3000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	p = (const uint8_t *)r.buf + wc.wr_id * 2048;
	EXPECT_EQ(6, p[14 + 9]);			/* IP protocol TCP */
	EXPECT_EQ(5005, p[14 + 20 + 2] << 8 | p[14 + 20 + 3]);
	EXPECT_EQ(0x02, p[14 + 20 + 13] & 0x12);	/* SYN, no ACK */
	post_rq(&r, wc.wr_id);
	close(far);
	close(lst);
	EXPECT_EQ(0, ibv_destroy_flow(ft));
	rawqp_close(&r);
}

/* A VXLAN frame: the VNI and the inner headers (IBV_FLOW_SPEC_INNER). */
TEST_F(steer, vxlan_inner)
{
	static const uint8_t imac[6] = { 0x02, 0, 0, 0, 0, 0x77 };
	struct ibv_flow_spec_tunnel *t;
	struct ibv_flow_spec_eth *ie;
	struct ibv_flow *fl;
	struct spec_attr sa;
	struct rawqp r;
	struct ibv_wc wc;
	struct frame f;
	uint8_t *ip, *udp, *vx;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	fa_ipv4(&sa, NULL, NEAR_IP);
	t = fa_add(&sa, sizeof(*t));
	t->type = IBV_FLOW_SPEC_VXLAN_TUNNEL;
	t->size = sizeof(*t);
	t->val.tunnel_id = htonl(4242);
	t->mask.tunnel_id = htonl(0xffffff);
	ie = fa_add(&sa, sizeof(*ie));
	memset(ie, 0, sizeof(*ie));
	ie->type = IBV_FLOW_SPEC_ETH | IBV_FLOW_SPEC_INNER;
	ie->size = sizeof(*ie);
	memcpy(ie->val.dst_mac, imac, 6);
	memset(ie->mask.dst_mac, 0xff, 6);
	fl = ibv_create_flow(r.qp, &sa.attr);
	ASSERT_NE(NULL, fl);

	/* Ethernet, IPv4 to us, UDP to 4789, VXLAN VNI 4242, inner frame. */
	eth_frame(&f, self->mac, self->far_mac, ETH_P_IP, 0, 0);
	ip = f.b + 14;
	udp = ip + 20;
	vx = udp + 8;
	memset(ip, 0, 20 + 8 + 8 + 14 + 20);
	ip[0] = 0x45;
	ip[3] = 20 + 8 + 8 + 14 + 20;
	ip[8] = 64;
	ip[9] = 17;
	inet_pton(AF_INET, FAR_IP, ip + 12);
	inet_pton(AF_INET, NEAR_IP, ip + 16);
	udp[0] = 0x12;
	udp[2] = 4789 >> 8;
	udp[3] = 4789 & 0xff;
	udp[5] = 8 + 8 + 14 + 20;
	vx[0] = 0x08;
	vx[4] = (4242 >> 16) & 0xff;
	vx[5] = (4242 >> 8) & 0xff;
	vx[6] = 4242 & 0xff;
	memcpy(vx + 8, imac, 6);
	memcpy(vx + 14, self->far_mac, 6);
	vx[20] = 0x08;
	sv_fill((char *)vx + 22, 20, 5);
	f.len = 14 + 20 + 8 + 8 + 14 + 20;
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, rx_poll(&r, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&r, &wc, &f));
	/* Another VNI, another inner MAC: no. */
	vx[6]++;
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	vx[6]--;
	vx[8 + 5]++;
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, rx_poll(&r, &wc, NULL, 400));
	EXPECT_EQ(0, ibv_destroy_flow(fl));
	rawqp_close(&r);
}

/* GRE (key, inner IPv4 + UDP), ESP (SPI), MPLS (the label bits). */
TEST_F(steer, gre_esp_mpls)
{
	struct ibv_flow_spec_gre *g;
	struct ibv_flow_spec_esp *e;
	struct ibv_flow_spec_mpls *m;
	struct ibv_flow_spec_ipv4 *i4;
	struct ibv_flow_spec_tcp_udp *u;
	struct ibv_flow *fg, *fe, *fm;
	struct spec_attr sa;
	uint8_t pl[64];
	struct rawqp r;
	struct ibv_wc wc;
	struct frame f;
	uint32_t tag;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &r, IBV_QPT_RAW_PACKET,
				0));
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	g = fa_add(&sa, sizeof(*g));
	memset(g, 0, sizeof(*g));
	g->type = IBV_FLOW_SPEC_GRE;
	g->size = sizeof(*g);
	g->val.c_ks_res0_ver = htons(0x2000);	/* key present */
	g->mask.c_ks_res0_ver = htons(0x2000);
	g->val.protocol = htons(0x0800);
	g->mask.protocol = 0xffff;
	g->val.key = htonl(0xdeadbeef);
	g->mask.key = 0xffffffff;
	i4 = fa_add(&sa, sizeof(*i4));
	memset(i4, 0, sizeof(*i4));
	i4->type = IBV_FLOW_SPEC_IPV4 | IBV_FLOW_SPEC_INNER;
	i4->size = sizeof(*i4);
	inet_pton(AF_INET, "192.0.2.2", &i4->val.dst_ip);
	i4->mask.dst_ip = 0xffffffff;
	u = fa_add(&sa, sizeof(*u));
	memset(u, 0, sizeof(*u));
	u->type = IBV_FLOW_SPEC_UDP | IBV_FLOW_SPEC_INNER;
	u->size = sizeof(*u);
	u->val.dst_port = htons(9999);
	u->mask.dst_port = 0xffff;
	fa_tag(&sa, 1);
	fg = ibv_create_flow(r.qp, &sa.attr);
	ASSERT_NE(NULL, fg);

	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	e = fa_add(&sa, sizeof(*e));
	memset(e, 0, sizeof(*e));
	e->type = IBV_FLOW_SPEC_ESP;
	e->size = sizeof(*e);
	e->val.spi = htonl(0x1000);
	e->mask.spi = 0xffffffff;
	fa_tag(&sa, 2);
	fe = ibv_create_flow(r.qp, &sa.attr);
	ASSERT_NE(NULL, fe);

	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, 0);
	m = fa_add(&sa, sizeof(*m));
	memset(m, 0, sizeof(*m));
	m->type = IBV_FLOW_SPEC_MPLS;
	m->size = sizeof(*m);
	m->val.label = htonl(1234 << 12);
	m->mask.label = htonl(0xfffff000);
	fa_tag(&sa, 3);
	fm = ibv_create_flow(r.qp, &sa.attr);
	ASSERT_NE(NULL, fm);

	/* GRE with a key around IPv4 + UDP to 192.0.2.2:9999. */
	memset(pl, 0, sizeof(pl));
	pl[0] = 0x20;			/* K */
	pl[2] = 0x08;			/* IPv4 */
	pl[4] = 0xde;
	pl[5] = 0xad;
	pl[6] = 0xbe;
	pl[7] = 0xef;
	pl[8] = 0x45;
	pl[8 + 3] = 28;
	pl[8 + 9] = 17;
	inet_pton(AF_INET, "192.0.2.1", pl + 8 + 12);
	inet_pton(AF_INET, "192.0.2.2", pl + 8 + 16);
	pl[28 + 2] = 9999 >> 8;
	pl[28 + 3] = 9999 & 0xff;
	ipv4_frame(&f, self->mac, self->far_mac, 47, pl, 36);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, rx_poll(&r, &wc, &tag, 3000));
	EXPECT_EQ(1, tag);
	EXPECT_TRUE(rx_is(&r, &wc, &f));
	pl[7] ^= 1;			/* another key */
	ipv4_frame(&f, self->mac, self->far_mac, 47, pl, 36);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	pl[7] ^= 1;
	pl[28 + 3] ^= 1;		/* another inner port */
	ipv4_frame(&f, self->mac, self->far_mac, 47, pl, 36);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, rx_poll(&r, &wc, NULL, 300));

	/* ESP SPI 0x1000, sequence 7. */
	memset(pl, 0, sizeof(pl));
	pl[2] = 0x10;
	pl[7] = 7;
	ipv4_frame(&f, self->mac, self->far_mac, 50, pl, 24);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, rx_poll(&r, &wc, &tag, 3000));
	EXPECT_EQ(2, tag);
	EXPECT_TRUE(rx_is(&r, &wc, &f));

	/* MPLS: label 1234, any TC, bottom of stack, TTL. */
	eth_frame(&f, self->mac, self->far_mac, 0x8847, 0, 30);
	tag = htonl(1234 << 12 | 5 << 9 | 1 << 8 | 64);
	memcpy(f.b + 14, &tag, 4);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	ASSERT_EQ(1, rx_poll(&r, &wc, &tag, 3000));
	EXPECT_EQ(3, tag);
	EXPECT_TRUE(rx_is(&r, &wc, &f));
	f.b[15] ^= 0x10;		/* label 1235 */
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, f.b, f.len));
	EXPECT_EQ(0, rx_poll(&r, &wc, NULL, 300));

	EXPECT_EQ(0, ibv_destroy_flow(fg));
	EXPECT_EQ(0, ibv_destroy_flow(fe));
	EXPECT_EQ(0, ibv_destroy_flow(fm));
	rawqp_close(&r);
}

/* An egress rule for ETYPE frames to @dst; DROP and COUNT if given. */
static struct ibv_flow *egress_rule(struct ibv_qp *qp, const uint8_t *dst,
				    int prio, int flags, bool drop,
				    struct ibv_counters *c)
{
	struct spec_attr a;

	fa_init(&a, IBV_FLOW_ATTR_NORMAL, prio,
		flags | IBV_FLOW_ATTR_FLAGS_EGRESS);
	fa_eth(&a, dst, ETYPE);
	if (drop)
		fa_drop(&a);
	if (c) {
		struct ibv_flow_spec_counter_action *s = fa_add(&a, sizeof(*s));

		s->type = IBV_FLOW_SPEC_ACTION_COUNT;
		s->size = sizeof(*s);
		s->counters = c;
	}
	return ibv_create_flow(qp, &a.attr);
}

/* Did the far side get @f within @ms? Other frames are skipped. */
static bool far_got(int pkt, const struct frame *f, int ms)
{
	uint8_t got[2048];
	ssize_t n;

	set_timeout(pkt, ms);
	while ((n = recv(pkt, got, sizeof(got), 0)) > 0)
		if ((size_t)n == f->len && !memcmp(got, f->b, f->len))
			return true;
	return false;
}

/*
 * IBV_FLOW_ATTR_FLAGS_EGRESS, as mlx5: the device's transmit table sees
 * what every QP of the device sends, before the e-switch and the wire. A
 * DROP rule drops (the send still succeeds), a rule without one lets the
 * frame go on at its priority, DONT_TRAP rules only count.
 */
TEST_F(steer, egress_rules)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct ibv_counters_init_attr cia = {};
	struct ibv_counter_attach_attr at = {};
	struct ibv_flow *drop, *allow, *count, *lb, *own;
	struct ibv_counters *c;
	struct rawqp a, b;
	struct spec_attr sa;
	struct frame f, g, m;
	struct ibv_wc wc;
	uint64_t v[2];

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &a, IBV_QPT_RAW_PACKET,
				0));
	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &b, IBV_QPT_RAW_PACKET,
				0));
	eth_frame(&f, self->far_mac, self->mac, ETYPE, 21, 40);
	eth_frame(&g, bcast, self->mac, ETYPE, 22, 44);

	/* Without rules both go out. */
	ASSERT_EQ(0, raw_send_inline(&a, &g, 1));
	EXPECT_EQ(0, tx_done(&a));
	EXPECT_TRUE(far_got(self->pkt, &g, 2000));

	/* A drop rule (on a's QP) drops a's and b's frames to the far MAC. */
	c = ibv_create_counters(self->ctx, &cia);
	ASSERT_NE(NULL, c);
	at.counter_desc = IBV_COUNTER_PACKETS;
	ASSERT_EQ(0, ibv_attach_counters_point_flow(c, &at, NULL));
	at.counter_desc = IBV_COUNTER_BYTES;
	at.index = 1;
	ASSERT_EQ(0, ibv_attach_counters_point_flow(c, &at, NULL));
	drop = egress_rule(a.qp, self->far_mac, 5, 0, true, c);
	ASSERT_NE(NULL, drop) TH_LOG("errno %d", errno);
	ASSERT_EQ(0, raw_send_inline(&a, &f, 2));
	EXPECT_EQ(0, tx_done(&a));
	ASSERT_EQ(0, raw_send_inline(&b, &f, 3));
	EXPECT_EQ(0, tx_done(&b));
	ASSERT_EQ(0, raw_send_inline(&b, &g, 4));
	EXPECT_EQ(0, tx_done(&b));
	/* The broadcast after them arrives, they did not. */
	EXPECT_TRUE(far_got(self->pkt, &g, 2000));
	EXPECT_FALSE(far_got(self->pkt, &f, 300));
	ASSERT_EQ(0, ibv_read_counters(c, v, 2, 0));
	EXPECT_EQ(2, v[0]);
	EXPECT_EQ(2 * f.len, v[1]);

	/* An allowing rule of a lower priority value wins... */
	allow = egress_rule(b.qp, self->far_mac, 2, 0, false, NULL);
	ASSERT_NE(NULL, allow);
	ASSERT_EQ(0, raw_send_inline(&a, &f, 5));
	EXPECT_EQ(0, tx_done(&a));
	EXPECT_TRUE(far_got(self->pkt, &f, 2000));
	/* ... a DONT_TRAP one only counts, and the drop decides. */
	EXPECT_EQ(0, ibv_destroy_flow(allow));
	count = egress_rule(b.qp, self->far_mac, 1,
			    IBV_FLOW_ATTR_FLAGS_DONT_TRAP, false, NULL);
	ASSERT_NE(NULL, count);
	ASSERT_EQ(0, raw_send_inline(&a, &f, 6));
	EXPECT_EQ(0, tx_done(&a));
	ASSERT_EQ(0, raw_send_inline(&a, &g, 7));
	EXPECT_EQ(0, tx_done(&a));
	EXPECT_TRUE(far_got(self->pkt, &g, 2000));
	EXPECT_FALSE(far_got(self->pkt, &f, 300));
	ASSERT_EQ(0, ibv_read_counters(c, v, 2, 0));
	EXPECT_EQ(3, v[0]);
	EXPECT_EQ(3 * f.len, v[1]);
	EXPECT_EQ(0, ibv_destroy_flow(count));

	/* Before the e-switch: a dropped frame to the own MAC reaches no QP. */
	lb = eth_rule(b.qp, self->mac, ETYPE, 0, 0);
	ASSERT_NE(NULL, lb);
	eth_frame(&m, self->mac, self->mac, ETYPE, 23, 46);
	ASSERT_EQ(0, raw_send_inline(&a, &m, 8));
	EXPECT_EQ(0, tx_done(&a));
	ASSERT_EQ(1, rx_poll(&b, &wc, NULL, 3000));
	EXPECT_TRUE(rx_is(&b, &wc, &m));
	own = egress_rule(a.qp, self->mac, 0, 0, true, NULL);
	ASSERT_NE(NULL, own);
	ASSERT_EQ(0, raw_send_inline(&a, &m, 9));
	EXPECT_EQ(0, tx_done(&a));
	EXPECT_EQ(0, rx_poll(&b, &wc, NULL, 300));

	/* Without the rules, frames go out again. */
	EXPECT_EQ(0, ibv_destroy_flow(own));
	EXPECT_EQ(0, ibv_destroy_flow(lb));
	EXPECT_EQ(0, ibv_destroy_flow(drop));
	ASSERT_EQ(0, raw_send_inline(&a, &f, 10));
	EXPECT_EQ(0, tx_done(&a));
	EXPECT_TRUE(far_got(self->pkt, &f, 2000));

	/* No defaults, sniffers or tags on the egress side: EINVAL. */
	fa_init(&sa, IBV_FLOW_ATTR_ALL_DEFAULT, 0, IBV_FLOW_ATTR_FLAGS_EGRESS);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_flow(a.qp, &sa.attr));
	EXPECT_EQ(EINVAL, errno);
	fa_init(&sa, IBV_FLOW_ATTR_MC_DEFAULT, 0, IBV_FLOW_ATTR_FLAGS_EGRESS);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_flow(a.qp, &sa.attr));
	EXPECT_EQ(EINVAL, errno);
	fa_init(&sa, IBV_FLOW_ATTR_SNIFFER, 0, IBV_FLOW_ATTR_FLAGS_EGRESS);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_flow(a.qp, &sa.attr));
	EXPECT_EQ(EINVAL, errno);
	fa_init(&sa, IBV_FLOW_ATTR_NORMAL, 0, IBV_FLOW_ATTR_FLAGS_EGRESS);
	fa_eth(&sa, self->far_mac, ETYPE);
	fa_tag(&sa, 7);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_flow(a.qp, &sa.attr));
	EXPECT_EQ(EINVAL, errno);

	EXPECT_EQ(0, ibv_destroy_counters(c));
	rawqp_close(&a);
	rawqp_close(&b);
}

/* A UD send of @len bytes at @buf (r's MR) to @qpn through @ah. */
static int ud_send(struct rawqp *r, struct ibv_ah *ah, uint32_t qpn,
		   uint32_t qkey, const char *buf, uint32_t len, uint64_t id)
{
	struct ibv_sge sg = { (uintptr_t)buf, len, r->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	return ibv_post_send(r->qp, &wr, &bad);
}

/*
 * IBV_QP_CREATE_SOURCE_QPN: a UD QP that sends as source_qpn (the
 * receiver's src_qp), whose modify takes the state alone, and that
 * receives what flows steer to it, never by QPN. CAP_NET_RAW.
 */
TEST_F(steer, source_qpn_ud)
{
	struct ibv_cq_init_attr_ex cqa = { .cqe = 64,
					   .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = self->pd,
		.create_flags = IBV_QP_CREATE_SOURCE_QPN,
		.source_qpn = 0x4242,
	};
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .qkey = 0x11 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = 1, .hop_limit = 1 } };
	struct rawqp s = {}, u;
	struct ibv_flow *fl;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	struct frame g;
	int st, i;
	pid_t pid;

	ASSERT_EQ(0, rawqp_open(self->ctx, self->pd, &u, IBV_QPT_UD, 0));
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &aa.grh.dgid));
	ah = ibv_create_ah(self->pd, &aa);
	ASSERT_NE(NULL, ah);
	s.cqx = ibv_create_cq_ex(self->ctx, &cqa);
	ASSERT_NE(NULL, s.cqx);
	s.cq = ibv_cq_ex_to_cq(s.cqx);
	s.buf = aligned_alloc(4096, NRECV * 2048 + BUFSZ);
	ASSERT_NE(NULL, s.buf);
	s.mr = ibv_reg_mr(self->pd, s.buf, NRECV * 2048 + BUFSZ,
			  IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, s.mr);
	ia.send_cq = ia.recv_cq = s.cq;

	/* Without CAP_NET_RAW: EPERM. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_qp *q;

		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(2);
		q = ibv_create_qp_ex(self->ctx, &ia);
		_exit(!q && errno == EPERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("%#x", st);

	s.qp = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, s.qp) TH_LOG("errno %d", errno);
	EXPECT_NE(0x4242, s.qp->qp_num);
	/* The state alone: a Q_Key (or port, P_Key) is EINVAL, as mlx5. */
	EXPECT_EQ(EINVAL, ibv_modify_qp(s.qp, &qa, IBV_QP_STATE | IBV_QP_QKEY));
	ASSERT_EQ(0, ibv_modify_qp(s.qp, &qa, IBV_QP_STATE));
	qa.qp_state = IBV_QPS_RTR;
	ASSERT_EQ(0, ibv_modify_qp(s.qp, &qa, IBV_QP_STATE));
	qa.qp_state = IBV_QPS_RTS;
	ASSERT_EQ(0, ibv_modify_qp(s.qp, &qa, IBV_QP_STATE));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, post_rq(&s, i));

	/* It sends as 0x4242. */
	sv_fill(s.buf + NRECV * 2048, 100, 5);
	ASSERT_EQ(0, ud_send(&s, ah, u.qp->qp_num, 0x11, s.buf + NRECV * 2048,
			     100, 1));
	ASSERT_EQ(1, poll1(s.cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_SEND, wc.opcode);
	ASSERT_EQ(1, rx_poll(&u, &wc, NULL, 3000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0x4242, wc.src_qp);
	EXPECT_EQ(140, wc.byte_len);
	EXPECT_EQ(0, memcmp(u.buf + wc.wr_id * 2048 + 40,
			    s.buf + NRECV * 2048, 100));
	post_rq(&u, wc.wr_id);

	/* Messages to its QPN, or to the one it sends as, do not reach it. */
	ASSERT_EQ(0, ud_send(&u, ah, s.qp->qp_num, 0, u.buf + NRECV * 2048,
			     64, 2));
	ASSERT_EQ(0, ud_send(&u, ah, 0x4242, 0, u.buf + NRECV * 2048, 64, 3));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, rx_poll(&u, &wc, NULL, 3000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(IBV_WC_SEND, wc.opcode);
	}
	EXPECT_EQ(0, rx_poll(&s, &wc, NULL, 300));

	/* Flows steer frames to it: 40 bytes of GRH, then the frame. */
	fl = eth_rule(s.qp, self->mac, ETYPE, 0, 0);
	ASSERT_NE(NULL, fl);
	eth_frame(&g, self->mac, self->far_mac, ETYPE, 6, 64);
	ASSERT_EQ(0, far_send(self->pkt, self->far_ifindex, g.b, g.len));
	ASSERT_EQ(1, rx_poll(&s, &wc, NULL, 3000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(40 + g.len, wc.byte_len);
	EXPECT_EQ(0, memcmp(s.buf + wc.wr_id * 2048 + 40, g.b, g.len));
	EXPECT_EQ(0, ibv_destroy_flow(fl));

	EXPECT_EQ(0, ibv_destroy_ah(ah));
	rawqp_close(&s);
	rawqp_close(&u);
}

TEST_HARNESS_MAIN
