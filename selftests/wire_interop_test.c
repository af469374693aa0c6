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
 * ATOMIC WRITE and RDMA FLUSH (IBA 1.5's memory placement extensions):
 * eight ATOMIC WRITEs in one batch land in order, a misaligned one is an
 * invalid request; FLUSH after a WRITE (a range, the whole MR, an empty
 * range) completes with IBV_WC_FLUSH, a persistence the MR lacks is a
 * remote access error. rxe has ATOMIC WRITE from Linux 6.2 (its ends
 * skip on 6.1); FLUSH runs between softverbs ends only (rc_flush says
 * why).
 *
 * The receiver (or responder) is the variant's server: rxe_serves,
 * sv_serves_rxe, sv_sv. The bodies run in a child of their own:
 * rdma-core's rxe context of a body that stopped early would keep rxe
 * open, and deleting rxe (the teardown) waits for that.
 */
#define SV_TEST_COMPAT_LIBIBVERBS	/* selftests/Makefile: how it links */
#include "sv_harness.h"
#include "sv_test.h"
#include "sv_dp_test.h"
#include "sv_wire_test.h"
#include "sv_wire_verbs.h"
#include "sv_verbs45.h"

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

/* A body's exit code for a skip: an end lacks what it needs. */
#define SKIPPED	77

/* Does v's device say it does cap (rdma-core 45's IBV_DEVICE_*)? */
static bool has_cap(struct vend *v, uint64_t cap)
{
	struct ibv_device_attr_ex a;

	return !ibv_query_device_ex(v->ctx, NULL, &a) &&
	       (a.device_cap_flags_ex & cap);
}

/*
 * The responder's (the server's) and requester's ends, RC, connected;
 * the responder's MR and QP grant ACCESS | access, the requester's QP
 * has the builders of send_ops.
 */
static int mpe_pair(FIXTURE_DATA(wire) *self,
		    const FIXTURE_VARIANT(wire) *variant, struct vend *rsp,
		    struct vend *req, int access, uint64_t send_ops)
{
	const struct end *r = SERVER, *s = CLIENT;
	struct ibv_qp_attr a = { .qp_access_flags = ACCESS | access };

	if (vend_open(rsp, r->ns, r->dev, r->g4, IBV_QPT_RC, LEN,
		      ACCESS | access) ||
	    vend_open_ops(req, s->ns, s->dev, s->g4, IBV_QPT_RC, LEN, ACCESS,
			  send_ops))
		return -1;
	if (vend_connect(rsp, req, 7, 7) || vend_connect(req, rsp, 7, 7))
		return -1;
	return access ? ibv_modify_qp(rsp->qp, &a, IBV_QP_ACCESS_FLAGS) : 0;
}

/* n signaled ATOMIC WRITEs of vals[i] at raddr + 8 i, one batch */
static int post_awrites(struct vend *x, uint32_t rkey, uint64_t raddr,
			const uint64_t *vals, int n)
{
	int i;

	ibv_wr_start(x->qpx);
	for (i = 0; i < n; i++) {
		x->qpx->wr_id = 0xa0 + i;
		x->qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_atomic_write(x->qpx, rkey, raddr + 8 * i, &vals[i]);
	}
	return ibv_wr_complete(x->qpx);
}

/*
 * Eight ATOMIC WRITEs in one batch (more than max_rd_atomic, 4, may be
 * in flight): each completes in order with IBV_WC_ATOMIC_WRITE, the 64
 * bytes land as the requester held them, nothing around them moves. A
 * misaligned one is an invalid request (IBV_WC_REM_INV_REQ_ERR).
 */
static int atomic_write_body(FIXTURE_DATA(wire) *self,
			     const FIXTURE_VARIANT(wire) *variant)
{
	uint64_t vals[8];
	struct vend r, s;
	struct ibv_wc wc;
	char pad[128];
	int i;

	CK(!mpe_pair(self, variant, &r, &s, 0,
		     IBV_QP_EX_WITH_ATOMIC_WRITE));
	if (!has_cap(&r, DEVICE_ATOMIC_WRITE) ||
	    !has_cap(&s, DEVICE_ATOMIC_WRITE))
		return SKIPPED;
	for (i = 0; i < 8; i++)
		vals[i] = 0x0102030405060708ULL * (i + 1) ^ 0xa5;
	memset(r.buf, 0xee, 256);
	memset(pad, 0xee, sizeof(pad));
	CK(!post_awrites(&s, r.mr->rkey, (uintptr_t)r.buf + 64, vals, 8));
	for (i = 0; i < 8; i++) {
		CK(wait1(&s, &wc) == IBV_WC_SUCCESS);
		CK(wc.wr_id == 0xa0 + (uint64_t)i);
		CK(wc.opcode == IBV_WC_ATOMIC_WRITE);
	}
	CK(!memcmp(r.buf + 64, vals, 64));
	CK(!memcmp(r.buf, pad, 64));
	CK(!memcmp(r.buf + 128, pad, 128));
	CK(!post_awrites(&s, r.mr->rkey, (uintptr_t)r.buf + 4, vals, 1));
	CK(wait1(&s, &wc) == IBV_WC_REM_INV_REQ_ERR);
	CK(!memcmp(r.buf, pad, 64));
	vend_close(&r);
	vend_close(&s);
	return 0;
}

/* One signaled FLUSH of x's; its completion's status (opcode checked) */
static int flush1(struct vend *x, uint32_t rkey, uint64_t addr, size_t len,
		  uint8_t type, uint8_t level)
{
	struct ibv_wc wc;
	int st;

	if (post_flush(x->qpx, 0xf1, rkey, addr, len, type, level))
		return -1;
	st = wait1(x, &wc);
	if (st == IBV_WC_SUCCESS && (wc.opcode != WC_FLUSH || wc.wr_id != 0xf1))
		return -1;
	return st;
}

/*
 * RDMA FLUSH after an RDMA WRITE: global visibility over the written
 * range, the whole MR, an empty range, each IBV_WC_FLUSH. Persistence on
 * an MR of ordinary memory (which cannot have that right) is a remote
 * access error, though the QP grants it.
 */
static int flush_body(FIXTURE_DATA(wire) *self,
		      const FIXTURE_VARIANT(wire) *variant)
{
	struct ibv_qp_attr pa = {
		.qp_access_flags = ACCESS | ACCESS_FLUSH_GLOBAL |
				   ACCESS_FLUSH_PERSISTENT,
	};
	struct vend r, s;
	uint64_t rb;

	CK(!mpe_pair(self, variant, &r, &s, ACCESS_FLUSH_GLOBAL,
		     IBV_QP_EX_WITH_RDMA_WRITE | QP_EX_WITH_FLUSH));
	rb = (uintptr_t)r.buf;
	sv_fill(s.buf, 4096, 9);
	CK(!post_send(s.qp, IBV_WR_RDMA_WRITE, s.mr->lkey, s.buf, 4096, 1, 0,
		      rb + 8192, r.mr->rkey));
	CK(flush1(&s, r.mr->rkey, rb + 8192, 4096, FLUSH_GLOBAL,
		  FLUSH_RANGE) == IBV_WC_SUCCESS);
	CK(!memcmp(r.buf + 8192, s.buf, 4096));
	CK(flush1(&s, r.mr->rkey, 0, 0, FLUSH_GLOBAL, FLUSH_MR) ==
	   IBV_WC_SUCCESS);
	CK(flush1(&s, r.mr->rkey, rb, 0, FLUSH_GLOBAL, FLUSH_RANGE) ==
	   IBV_WC_SUCCESS);
	/* The QP grants persistence; the MR cannot. */
	CK(!ibv_modify_qp(r.qp, &pa, IBV_QP_ACCESS_FLAGS));
	CK(flush1(&s, r.mr->rkey, rb, 64, FLUSH_PERSISTENT, FLUSH_RANGE) ==
	   IBV_WC_REM_ACCESS_ERR);
	vend_close(&r);
	vend_close(&s);
	return 0;
}

/* fn in a child; its skip is the harness's */
#define RUN_CHILD(fn, why)						\
	do {								\
		int ret_ = in_child(fn, self, variant);			\
									\
		if (ret_ == SKIPPED)					\
			SKIP(return, why);				\
		ASSERT_EQ(0, ret_);					\
	} while (0)

TEST_F_TIMEOUT(wire, rc_atomic_write, 120)
{
	RUN_CHILD(atomic_write_body, "an end has no ATOMIC WRITE (rxe < 6.2)");
}

TEST_F_TIMEOUT(wire, rc_flush, 120)
{
	/*
	 * rxe's FLUSH frames are not RoCE v2's: its opcode table gives
	 * FLUSH no payload offset, so its ICRC sums the BTH, FETH and RETH
	 * twice, and it drops a FLUSH with the standard ICRC (ours) as
	 * corrupt; and rdma-core 44's rxe provider has no ibv_wr_flush().
	 */
	if (!SERVER->sv || !CLIENT->sv)
		SKIP(return, "rxe's FLUSH ICRC is not RoCE v2's");
	ASSERT_EQ(0, in_child(flush_body, self, variant));
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
