// SPDX-License-Identifier: GPL-2.0
/*
 * Verbs that no Debian program uses, across sv_wire_test.h's veth with
 * rdma_rxe or softverbs on the other end, through our libibverbs.so.1
 * (build/compat: rdma-core's serves rxe behind it), so that one process
 * drives both ends with exact results.
 *
 * SEND with invalidate (IETH): the receiver binds a type 2 memory window,
 * the sender writes through it, then sends 9000 bytes (9 packets at a
 * 1024-byte MTU, the last SEND_LAST_WITH_INVALIDATE) naming the window's
 * rkey. The receive completes with IBV_WC_WITH_INV (rxe's flag as it
 * gives it: RXE_WC_WITH_INV) and the rkey in invalidated_rkey, the data
 * intact; a WRITE through the window then fails (IBV_WC_REM_ACCESS_ERR).
 * To a softverbs receiver, a SEND that names an MR's rkey (only windows
 * are remotely invalidated) is an invalid request: IBV_WC_REM_INV_REQ_ERR
 * on both sides.
 *
 * The receiver is the variant's server: rxe_serves, sv_serves_rxe,
 * sv_sv. The bodies run in a child of their own: rdma-core's rxe
 * context of a body that stopped early would keep rxe open, and
 * deleting rxe (the teardown) waits for that.
 */
#define SV_TEST_COMPAT_LIBIBVERBS	/* selftests/Makefile: how it links */
#include "sv_harness.h"
#include "sv_test.h"
#include "sv_dp_test.h"
#include "sv_wire_test.h"
#include "sv_wire_verbs.h"

#define LEN	(64 * 1024)
#define SLEN	9000

/*
 * rxe writes a user CQE's wc_flags in the kernel's numbering, which
 * rdma-core's rxe provider hands on: its IB_WC_WITH_INVALIDATE is bit 2,
 * IBV_WC_IP_CSUM_OK's in libibverbs (IBV_WC_WITH_INV is bit 3).
 */
#define RXE_WC_WITH_INV	(1 << 2)

/* fn(self, variant) in a child (sv_fork(), sv_reap()) */
static int in_child(int (*fn)(FIXTURE_DATA(wire) *,
			      const FIXTURE_VARIANT(wire) *),
		    FIXTURE_DATA(wire) *self,
		    const FIXTURE_VARIANT(wire) *variant)
{
	pid_t pid = sv_fork();

	if (!pid)
		_exit(fn(self, variant));
	return sv_reap(pid);
}

/* The receiver's and sender's ends, RC, connected. */
static int inv_pair(FIXTURE_DATA(wire) *self,
		    const FIXTURE_VARIANT(wire) *variant, struct vend *rcv,
		    struct vend *snd)
{
	const struct end *r = SERVER, *s = CLIENT;

	if (vend_open(rcv, r->ns, r->dev, r->g4, IBV_QPT_RC, LEN,
		      ACCESS | IBV_ACCESS_MW_BIND) ||
	    vend_open(snd, s->ns, s->dev, s->g4, IBV_QPT_RC, LEN, ACCESS))
		return -1;
	return vend_connect(rcv, snd, 7, 7) || vend_connect(snd, rcv, 7, 7) ?
	       -1 : 0;
}

/* x's SEND_WITH_INV of len bytes of its buffer, naming rkey. */
static int post_send_inv(struct vend *x, uint32_t len, uint32_t rkey)
{
	struct ibv_sge sg = { (uintptr_t)x->buf, len, x->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x1e, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
		.invalidate_rkey = rkey,
	}, *bad;

	return ibv_post_send(x->qp, &wr, &bad);
}

/* x binds type 2 window mw to the first 4 KiB of its buffer: status. */
static int bind_window(struct vend *x, struct ibv_mw *mw, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 0xb2, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey,
			     .bind_info = { .mr = x->mr,
					    .addr = (uintptr_t)x->buf,
					    .length = 4096,
					    .mw_access_flags =
						IBV_ACCESS_REMOTE_WRITE } },
	}, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(x->qp, &wr, &bad))
		return -1;
	if (wait1(x, &wc) != IBV_WC_SUCCESS || wc.opcode != IBV_WC_BIND_MW)
		return -1;
	return 0;
}

static int send_inv_body(FIXTURE_DATA(wire) *self,
			 const FIXTURE_VARIANT(wire) *variant)
{
	struct vend r, s;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	uint32_t rkey;

	CK(!inv_pair(self, variant, &r, &s));
	mw = ibv_alloc_mw(r.pd, IBV_MW_TYPE_2);
	CK(mw);
	rkey = ibv_inc_rkey(mw->rkey);
	CK(!bind_window(&r, mw, rkey));
	/* The window works: a WRITE through it lands. */
	sv_fill(s.buf, 100, 5);
	CK(!post_send(s.qp, IBV_WR_RDMA_WRITE, s.mr->lkey, s.buf, 100, 1,
		      IBV_SEND_SIGNALED, (uintptr_t)r.buf, rkey));
	CK(wait1(&s, &wc) == IBV_WC_SUCCESS);
	CK(!memcmp(r.buf, s.buf, 100));
	/* 9 packets, the last with the IETH: placed, then invalidated. */
	CK(!post_recv(r.qp, r.mr, r.buf + 8192, SLEN, 20));
	sv_fill(s.buf, SLEN, 6);
	CK(!post_send_inv(&s, SLEN, rkey));
	CK(wait1(&r, &wc) == IBV_WC_SUCCESS);
	CK(wc.wr_id == 20);
	CK(wc.opcode == IBV_WC_RECV);
	CK(wc.byte_len == SLEN);
	CK(wc.wc_flags & (SERVER->sv ? IBV_WC_WITH_INV : RXE_WC_WITH_INV));
	CK(!(wc.wc_flags & IBV_WC_WITH_IMM));
	CK(wc.invalidated_rkey == rkey);
	CK(wc.qp_num == r.qp->qp_num);
	CK(!memcmp(r.buf + 8192, s.buf, SLEN));
	CK(wait1(&s, &wc) == IBV_WC_SUCCESS);
	CK(wc.wr_id == 0x1e);
	CK(wc.opcode == IBV_WC_SEND);
	/* The window is free now: a WRITE through it is refused. */
	CK(!post_send(s.qp, IBV_WR_RDMA_WRITE, s.mr->lkey, s.buf, 100, 2,
		      IBV_SEND_SIGNALED, (uintptr_t)r.buf, rkey));
	CK(wait1(&s, &wc) == IBV_WC_REM_ACCESS_ERR);
	CK(!ibv_dealloc_mw(mw));
	vend_close(&r);
	vend_close(&s);
	return 0;
}

/* An MR's rkey cannot be invalidated remotely: an invalid request. */
static int send_inv_mr_body(FIXTURE_DATA(wire) *self,
			    const FIXTURE_VARIANT(wire) *variant)
{
	struct vend r, s;
	struct ibv_wc wc;

	CK(!inv_pair(self, variant, &r, &s));
	CK(!post_recv(r.qp, r.mr, r.buf, SLEN, 21));
	CK(!post_send_inv(&s, 64, r.mr->rkey));
	CK(wait1(&s, &wc) == IBV_WC_REM_INV_REQ_ERR);
	CK(wait1(&r, &wc) == IBV_WC_REM_INV_REQ_ERR);
	CK(wc.wr_id == 21);
	vend_close(&r);
	vend_close(&s);
	return 0;
}

TEST_F_TIMEOUT(wire, rc_send_inv, 120)
{
	ASSERT_EQ(0, in_child(send_inv_body, self, variant));
}

TEST_F_TIMEOUT(wire, rc_send_inv_mr, 120)
{
	if (!SERVER->sv)
		SKIP(return, "rxe's responder is not softverbs'");
	ASSERT_EQ(0, in_child(send_inv_mr_body, self, variant));
}

TEST_HARNESS_MAIN
