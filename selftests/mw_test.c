// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows (ibv_alloc_mw(3), ibv_bind_mw(3), IBV_WR_BIND_MW,
 * IBV_WR_LOCAL_INV, IBV_WR_SEND_WITH_INV), as the man pages and IBA
 * 10.6.7 say, between two connected RC QPs of softverbs0: a, the owner
 * of the memory (an MR with LOCAL_WRITE and MW_BIND only: no remote
 * right of its own), and b, the peer that reaches it through windows.
 *
 *   - type 1: ibv_bind_mw() gives a new rkey (same index), IBV_WC_BIND_MW;
 *     RDMA WRITE, READ and atomics through it, data verified, the bytes
 *     around the window untouched; the old key after a rebind, an unbind,
 *     bounds and rights: IBV_WC_REM_ACCESS_ERR; LOCAL_INV of it fails;
 *   - type 2: IBV_WR_BIND_MW and ibv_wr_bind_mw(), zero-based windows,
 *     LOCAL_INV and SEND_WITH_INV really invalidate (IBV_WC_WITH_INV and
 *     the key in the receive completion), a window used after
 *     invalidation, a second bind of a bound window, accesses through
 *     another QP than the binder;
 *   - the bind rules: an MR without IBV_ACCESS_MW_BIND, a writable window
 *     over an MR without LOCAL_WRITE, a range outside the MR, a window of
 *     another process's PD: IBV_WC_MW_BIND_ERR;
 *   - ibv_dereg_mr() of an MR with a bound window: EBUSY;
 *   - SEND_WITH_INV of a key that is no type 2 window: REM_INV_REQ_ERR;
 *   - a window key is no lkey; the device's capabilities; the kernel's
 *     errnos for bad alloc and dealloc arguments; a process that exits
 *     with windows bound.
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"
#include "sv_harness.h"
#include "sv_qp_test.h"
#include "sv_dp_test.h"

#define BUFSZ	8192
#define WOFF	256		/* the window's offset in the MR and length */
#define WLEN	1024
#define ALL_REMOTE (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		    IBV_ACCESS_REMOTE_ATOMIC)

FIXTURE(mw) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *acq, *bcq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr, *bmr;	/* a's memory; b's local buffer */
	char *buf, *bbuf;
	union ibv_gid gid;
};

static struct ibv_qp *rc_qp(FIXTURE_DATA(mw) *self, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.pd = self->pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_LOCAL_INV |
				  IBV_QP_EX_WITH_SEND_WITH_INV,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp_ex(self->ctx, &ia);
}

static int connect_pair(FIXTURE_DATA(mw) *self, struct ibv_qp *x,
			struct ibv_qp *y)
{
	int ret;

	ret = qp_init(x, ALL_REMOTE | IBV_ACCESS_LOCAL_WRITE);
	ret = ret ?: qp_init(y, ALL_REMOTE | IBV_ACCESS_LOCAL_WRITE);
	ret = ret ?: qp_rtr_rts(x, y->qp_num, &self->gid, 7, 1, 0);
	ret = ret ?: qp_rtr_rts(y, x->qp_num, &self->gid, 7, 1, 0);
	return ret;
}

FIXTURE_SETUP(mw)
{
	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &self->gid));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->acq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	self->bcq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, self->acq);
	ASSERT_NE(NULL, self->bcq);
	self->buf = aligned_alloc(4096, BUFSZ);
	self->bbuf = aligned_alloc(4096, BUFSZ);
	ASSERT_NE(NULL, self->buf);
	ASSERT_NE(NULL, self->bbuf);
	memset(self->buf, 0x11, BUFSZ);
	memset(self->bbuf, 0x22, BUFSZ);
	/* No remote right of its own: only windows open it. */
	self->mr = ibv_reg_mr(self->pd, self->buf, BUFSZ,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	self->bmr = ibv_reg_mr(self->pd, self->bbuf, BUFSZ,
			       IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->mr);
	ASSERT_NE(NULL, self->bmr);
	self->a = rc_qp(self, self->acq);
	self->b = rc_qp(self, self->bcq);
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_pair(self, self->a, self->b));
}

FIXTURE_TEARDOWN(mw)
{
	if (self->a)
		ibv_destroy_qp(self->a);
	if (self->b)
		ibv_destroy_qp(self->b);
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->bmr)
		ibv_dereg_mr(self->bmr);
	if (self->acq)
		ibv_destroy_cq(self->acq);
	if (self->bcq)
		ibv_destroy_cq(self->bcq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	free(self->buf);
	free(self->bbuf);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
}

/* One completion of cq: its status, or -1 (and opcode/flags out). */
static int wc_of(struct ibv_cq *cq, uint64_t id, int *opcode,
		 struct ibv_wc *out)
{
	struct ibv_wc wc = {};

	if (poll1(cq, &wc) != 1 || wc.wr_id != id)
		return -1;
	if (opcode)
		*opcode = wc.opcode;
	if (out)
		*out = wc;
	return wc.status;
}

/* ibv_bind_mw() of a type 1 window, signaled: the bind's status. */
static int bind1(FIXTURE_DATA(mw) *self, struct ibv_mw *mw, struct ibv_mr *mr,
		 uint64_t off, uint64_t len, unsigned int access)
{
	struct ibv_mw_bind b = {
		.wr_id = 0xb1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .length = len,
			       .addr = mr ? (uintptr_t)self->buf + off : 0,
			       .mw_access_flags = access },
	};
	int op = -1, st, ret;

	ret = ibv_bind_mw(self->a, mw, &b);
	if (ret)
		return -ret;
	st = wc_of(self->acq, 0xb1, &op, NULL);
	if (st == IBV_WC_SUCCESS && op != IBV_WC_BIND_MW)
		return -1000;
	return st;
}

/* IBV_WR_BIND_MW of a type 2 window through ibv_post_send(), signaled. */
static int bind2(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mw *mw, uint32_t rkey,
		 struct ibv_mr *mr, uint64_t addr, uint64_t len,
		 unsigned int access)
{
	struct ibv_send_wr wr = {
		.wr_id = 0xb2, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey,
			     .bind_info = { .mr = mr, .addr = addr,
					    .length = len,
					    .mw_access_flags = access } },
	}, *bad;
	int op = -1, st, ret;

	ret = ibv_post_send(qp, &wr, &bad);
	if (ret)
		return -ret;
	st = wc_of(cq, 0xb2, &op, NULL);
	if (st == IBV_WC_SUCCESS && op != IBV_WC_BIND_MW)
		return -1000;
	return st;
}

/* b's RDMA op of len bytes of bbuf at remote addr through rkey: status. */
static int b_rdma(FIXTURE_DATA(mw) *self, enum ibv_wr_opcode op,
		  uint64_t raddr, uint32_t rkey, uint32_t len)
{
	if (post_send(self->b, op, self->bmr->lkey, self->bbuf, len, 0x77,
		      IBV_SEND_SIGNALED, raddr, rkey))
		return -1;
	return wc_of(self->bcq, 0x77, NULL, NULL);
}

static uint64_t at(FIXTURE_DATA(mw) *self, uint64_t off)
{
	return (uintptr_t)self->buf + off;
}

/* A type 1 window bound to [WOFF, WOFF + WLEN) of mr; NULL if not. */
static struct ibv_mw *bound1(FIXTURE_DATA(mw) *self, unsigned int access)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);

	if (mw && bind1(self, mw, self->mr, WOFF, WLEN, access)) {
		ibv_dealloc_mw(mw);
		return NULL;
	}
	return mw;
}

/* The same with a type 2 window that a bound: *key is its key. */
static struct ibv_mw *bound2(FIXTURE_DATA(mw) *self, unsigned int access,
			     uint32_t *key)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);

	if (!mw)
		return NULL;
	*key = ibv_inc_rkey(mw->rkey);
	if (bind2(self->a, self->acq, mw, *key, self->mr, at(self, WOFF),
		  WLEN, access)) {
		ibv_dealloc_mw(mw);
		return NULL;
	}
	return mw;
}

static int all_bytes(const char *p, size_t n, char c)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != c)
			return 0;
	return 1;
}

TEST_F(mw, device_caps)
{
	struct ibv_device_attr attr;
	struct ibv_device_attr_ex ex;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &attr));
	EXPECT_TRUE(attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	EXPECT_TRUE(attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	EXPECT_FALSE(attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2A);
	EXPECT_EQ(attr.max_mr, attr.max_mw);
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_TRUE(ex.device_cap_flags_ex & IBV_DEVICE_MEM_WINDOW);
}

TEST_F(mw, type1_write_read_atomic)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	uint32_t key0;
	uint64_t old;

	ASSERT_NE(NULL, mw);
	EXPECT_EQ(IBV_MW_TYPE_1, mw->type);
	key0 = mw->rkey;
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, self->mr, WOFF, WLEN,
					ALL_REMOTE));
	/* The next key: same index, another tag (ibv_inc_rkey). */
	EXPECT_EQ(ibv_inc_rkey(key0), mw->rkey);

	sv_fill(self->bbuf, WLEN, 5);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE,
					 at(self, WOFF), mw->rkey, WLEN));
	EXPECT_EQ(0, memcmp(self->buf + WOFF, self->bbuf, WLEN));
	EXPECT_TRUE(all_bytes(self->buf, WOFF, 0x11));
	EXPECT_TRUE(all_bytes(self->buf + WOFF + WLEN, BUFSZ - WOFF - WLEN,
			      0x11));
	memset(self->bbuf, 0, WLEN);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_READ,
					 at(self, WOFF), mw->rkey, WLEN));
	EXPECT_EQ(0, memcmp(self->buf + WOFF, self->bbuf, WLEN));

	/* An atomic through the window. */
	memcpy(self->buf + WOFF, &(uint64_t){ 40 }, 8);
	{
		struct ibv_sge sg = { (uintptr_t)self->bbuf, 8,
				      self->bmr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 0x78, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.atomic = { .remote_addr = at(self, WOFF),
				       .rkey = mw->rkey, .compare_add = 2 },
		}, *bad;

		ASSERT_EQ(0, ibv_post_send(self->b, &wr, &bad));
		ASSERT_EQ(IBV_WC_SUCCESS, wc_of(self->bcq, 0x78, NULL, NULL));
	}
	memcpy(&old, self->bbuf, 8);
	EXPECT_EQ(40, old);
	memcpy(&old, self->buf + WOFF, 8);
	EXPECT_EQ(42, old);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, type1_old_key_after_rebind)
{
	struct ibv_mw *mw = bound1(self, IBV_ACCESS_REMOTE_WRITE);
	uint32_t key1;

	ASSERT_NE(NULL, mw);
	key1 = mw->rkey;
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, self->mr, 0, WLEN,
					IBV_ACCESS_REMOTE_WRITE));
	EXPECT_NE(key1, mw->rkey);
	/* The peer's old key no longer opens anything. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_WRITE, at(self, WOFF), key1, 64));
	EXPECT_TRUE(all_bytes(self->buf, BUFSZ, 0x11));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, type1_new_range)
{
	struct ibv_mw *mw = bound1(self, IBV_ACCESS_REMOTE_WRITE);

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, self->mr, 4096, 16,
					IBV_ACCESS_REMOTE_WRITE));
	sv_fill(self->bbuf, 16, 9);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE,
					 at(self, 4096), mw->rkey, 16));
	EXPECT_EQ(0, memcmp(self->buf + 4096, self->bbuf, 16));
	/* The old range is closed. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_WRITE, at(self, WOFF), mw->rkey,
			 16));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, type1_unbind)
{
	struct ibv_mw *mw = bound1(self, IBV_ACCESS_REMOTE_WRITE);

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, NULL, 0, 0, 0));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_WRITE, at(self, WOFF), mw->rkey,
			 8));
	EXPECT_TRUE(all_bytes(self->buf, BUFSZ, 0x11));
	/* Unbound, the MR can go. */
	EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = NULL;
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, bounds)
{
	struct ibv_mw *mw = bound1(self, IBV_ACCESS_REMOTE_WRITE);

	ASSERT_NE(NULL, mw);
	/* The last 8 bytes of the window, and 8 beyond. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_WRITE, at(self, WOFF + WLEN - 8),
			 mw->rkey, 16));
	EXPECT_TRUE(all_bytes(self->buf, BUFSZ, 0x11));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, rights)
{
	struct ibv_mw *mw = bound1(self, IBV_ACCESS_REMOTE_READ);

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_READ,
					 at(self, WOFF), mw->rkey, 64));
	EXPECT_TRUE(all_bytes(self->bbuf, 64, 0x11));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_WRITE, at(self, WOFF), mw->rkey,
			 64));
	EXPECT_TRUE(all_bytes(self->buf, BUFSZ, 0x11));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

/* Both QPs back through RESET to RTS, after an error moved one to ERR. */
static int reconnect(FIXTURE_DATA(mw) *self)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(self->a, &reset, IBV_QP_STATE) ||
	    ibv_modify_qp(self->b, &reset, IBV_QP_STATE))
		return -1;
	return connect_pair(self, self->a, self->b);
}

/* Which MRs a window may be bound to, and with which rights (C10-73/74). */
TEST_F(mw, bind_rules_of_the_mr)
{
	static const struct {
		int mr_access;
		unsigned int mw_access;
		int status;
	} rules[] = {
		/* No MW_BIND on the MR. */
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		  IBV_ACCESS_REMOTE_WRITE, IBV_WC_MW_BIND_ERR },
		/* A writable window over an MR without LOCAL_WRITE. */
		{ IBV_ACCESS_MW_BIND, IBV_ACCESS_REMOTE_WRITE,
		  IBV_WC_MW_BIND_ERR },
		{ IBV_ACCESS_MW_BIND, IBV_ACCESS_REMOTE_ATOMIC,
		  IBV_WC_MW_BIND_ERR },
		/* A read-only window needs no local write. */
		{ IBV_ACCESS_MW_BIND, IBV_ACCESS_REMOTE_READ, IBV_WC_SUCCESS },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND, ALL_REMOTE,
		  IBV_WC_SUCCESS },
		/*
		 * LOCAL_WRITE in a bind, as mlx5 and rxe take it (pyverbs'
		 * tests ask for it): no right of a window, so a remote
		 * write through this read-only one fails.
		 */
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND,
		  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
		  IBV_WC_SUCCESS },
	};
	unsigned int i;

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
		struct ibv_mr *mr = ibv_reg_mr(self->pd, self->buf, BUFSZ,
					       rules[i].mr_access);

		ASSERT_NE(NULL, mw);
		ASSERT_NE(NULL, mr);
		EXPECT_EQ(rules[i].status,
			  bind1(self, mw, mr, WOFF, WLEN, rules[i].mw_access))
			TH_LOG("rule %u", i);
		if (rules[i].status == IBV_WC_SUCCESS)
			EXPECT_EQ(IBV_WC_SUCCESS,
				  b_rdma(self, IBV_WR_RDMA_READ,
					 at(self, WOFF), mw->rkey, 32));
		if (rules[i].status == IBV_WC_SUCCESS &&
		    !(rules[i].mw_access & IBV_ACCESS_REMOTE_WRITE))
			EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
				  b_rdma(self, IBV_WR_RDMA_WRITE,
					 at(self, WOFF), mw->rkey, 32));
		EXPECT_EQ(0, ibv_dealloc_mw(mw));
		EXPECT_EQ(0, ibv_dereg_mr(mr));
		ASSERT_EQ(0, reconnect(self));
	}
}

TEST_F(mw, range_outside_mr)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);

	ASSERT_NE(NULL, mw);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, bind1(self, mw, self->mr, BUFSZ - 8, 16,
					    IBV_ACCESS_REMOTE_READ));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, bind_argument_errors)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind b = {
		.bind_info = { .mr = self->mr, .addr = at(self, WOFF),
			       .length = WLEN,
			       .mw_access_flags = IBV_ACCESS_MW_BIND },
	};

	ASSERT_NE(NULL, mw);
	/* MW_BIND is no window right; the header's own checks. */
	EXPECT_EQ(EINVAL, ibv_bind_mw(self->a, mw, &b));
	b.bind_info.mw_access_flags = 0;
	b.bind_info.mr = NULL;
	EXPECT_EQ(EINVAL, ibv_bind_mw(self->a, mw, &b));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	/* ibv_bind_mw() is for type 1 windows. */
	mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw);
	b.bind_info.mr = self->mr;
	EXPECT_EQ(EINVAL, ibv_bind_mw(self->a, mw, &b));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_mw(self->pd, (enum ibv_mw_type)3));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(mw, dereg_mr_busy_while_bound)
{
	struct ibv_mw *mw = bound1(self, IBV_ACCESS_REMOTE_WRITE);

	ASSERT_NE(NULL, mw);
	EXPECT_EQ(EBUSY, ibv_dereg_mr(self->mr));
	/* Still whole: the window works. */
	sv_fill(self->bbuf, 32, 3);
	EXPECT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE,
					 at(self, WOFF), mw->rkey, 32));
	EXPECT_EQ(0, memcmp(self->buf + WOFF, self->bbuf, 32));
	/* Deallocating the window unbinds it. */
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = NULL;
}

TEST_F(mw, window_key_is_no_lkey)
{
	struct ibv_mw *mw = bound1(self, ALL_REMOTE);

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(0, post_recv(self->b, self->bmr, self->bbuf, 64, 0x99));
	ASSERT_EQ(0, post_send(self->a, IBV_WR_SEND, mw->rkey,
			       self->buf + WOFF, 64, 0x98, IBV_SEND_SIGNALED,
			       0, 0));
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, wc_of(self->acq, 0x98, NULL, NULL));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, type1_not_invalidated)
{
	struct ibv_mw *mw = bound1(self, IBV_ACCESS_REMOTE_WRITE);
	struct ibv_send_wr wr = {
		.wr_id = 0x55, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	ASSERT_NE(NULL, mw);
	wr.invalidate_rkey = mw->rkey;
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, wc_of(self->acq, 0x55, NULL, NULL));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, type2_free_at_birth)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);

	ASSERT_NE(NULL, mw);
	EXPECT_EQ(IBV_MW_TYPE_2, mw->type);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_READ, at(self, WOFF), mw->rkey, 8));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, type2_bind_write)
{
	struct ibv_mw *mw;
	uint32_t key;

	mw = bound2(self, IBV_ACCESS_REMOTE_WRITE, &key);
	ASSERT_NE(NULL, mw);
	sv_fill(self->bbuf, WLEN, 7);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE,
					 at(self, WOFF), key, WLEN));
	EXPECT_EQ(0, memcmp(self->buf + WOFF, self->bbuf, WLEN));

	/* A bound type 2 window cannot be bound again. */
	EXPECT_EQ(IBV_WC_MW_BIND_ERR,
		  bind2(self->a, self->acq, mw, key, self->mr,
			at(self, 0), 64, IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, type2_local_inv)
{
	struct ibv_mw *mw;
	struct ibv_send_wr wr = {
		.wr_id = 0x56, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t key;
	int op = -1;

	mw = bound2(self, IBV_ACCESS_REMOTE_WRITE, &key);
	ASSERT_NE(NULL, mw);
	wr.invalidate_rkey = key;
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	EXPECT_EQ(IBV_WC_SUCCESS, wc_of(self->acq, 0x56, &op, NULL));
	EXPECT_EQ(IBV_WC_LOCAL_INV, op);
	/* Used after invalidation. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_WRITE, at(self, WOFF), key, 8));
	EXPECT_TRUE(all_bytes(self->buf, BUFSZ, 0x11));
	/* Free again: the MR can go, the window stays. */
	EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = NULL;
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, type2_rebind_after_inv)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {
		.wr_id = 0x56, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t k1, k2;

	ASSERT_NE(NULL, mw);
	k1 = ibv_inc_rkey(mw->rkey);
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self->a, self->acq, mw, k1,
					self->mr, at(self, WOFF), WLEN,
					IBV_ACCESS_REMOTE_READ));
	wr.invalidate_rkey = k1;
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	ASSERT_EQ(IBV_WC_SUCCESS, wc_of(self->acq, 0x56, NULL, NULL));
	/* The bind names the window by its current key. */
	k2 = ibv_inc_rkey(k1);
	mw->rkey = k1;
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self->a, self->acq, mw, k2,
					self->mr, at(self, 0), 64,
					IBV_ACCESS_REMOTE_READ));
	EXPECT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_READ, at(self, 0),
					 k2, 64));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_READ, at(self, 0), k1, 64));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, type2_zero_based_wr_api)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	struct ibv_qp_ex *ax = ibv_qp_to_qp_ex(self->a);
	struct ibv_mw_bind_info bi = {
		.mr = self->mr, .addr = at(self, WOFF), .length = WLEN,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_ZERO_BASED,
	};
	uint32_t key;
	int op = -1;

	ASSERT_NE(NULL, mw);
	ASSERT_NE(NULL, ax);
	key = ibv_inc_rkey(mw->rkey);
	ibv_wr_start(ax);
	ax->wr_id = 0x57;
	ax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(ax, mw, key, &bi);
	ASSERT_EQ(0, ibv_wr_complete(ax));
	ASSERT_EQ(IBV_WC_SUCCESS, wc_of(self->acq, 0x57, &op, NULL));
	EXPECT_EQ(IBV_WC_BIND_MW, op);
	/* Offsets from 0 land at the window's first byte. */
	sv_fill(self->bbuf, 100, 11);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE, 8, key,
					 100));
	EXPECT_EQ(0, memcmp(self->buf + WOFF + 8, self->bbuf, 100));
	EXPECT_TRUE(all_bytes(self->buf + WOFF, 8, 0x11));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_WRITE, WLEN - 4, key, 8));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, type1_zero_based_refused)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);

	ASSERT_NE(NULL, mw);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR,
		  bind1(self, mw, self->mr, WOFF, WLEN,
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, type2_empty_bind_refused)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);

	ASSERT_NE(NULL, mw);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR,
		  bind2(self->a, self->acq, mw, ibv_inc_rkey(mw->rkey),
			self->mr, at(self, WOFF), 0, IBV_ACCESS_REMOTE_READ));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, type2_send_with_inv)
{
	struct ibv_mw *mw;
	struct ibv_sge sg = { (uintptr_t)self->bbuf, 32, self->bmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x60, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	uint32_t key;

	mw = bound2(self, IBV_ACCESS_REMOTE_WRITE, &key);
	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE,
					 at(self, WOFF), key, 16));
	/* The message carries the key; a's receive lands in buf's end. */
	ASSERT_EQ(0, post_recv(self->a, self->mr, self->buf + 4096, 64, 0x61));
	wr.invalidate_rkey = key;
	ASSERT_EQ(0, ibv_post_send(self->b, &wr, &bad));
	EXPECT_EQ(IBV_WC_SUCCESS, wc_of(self->bcq, 0x60, NULL, NULL));
	ASSERT_EQ(IBV_WC_SUCCESS, wc_of(self->acq, 0x61, NULL, &wc));
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_INV);
	EXPECT_EQ(key, wc.invalidated_rkey);
	EXPECT_EQ(32, wc.byte_len);
	/* Really invalidated. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  b_rdma(self, IBV_WR_RDMA_WRITE, at(self, WOFF), key, 16));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, send_with_inv_of_an_mr_key)
{
	struct ibv_sge sg = { (uintptr_t)self->bbuf, 32, self->bmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x62, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	ASSERT_EQ(0, post_recv(self->a, self->mr, self->buf, 64, 0x63));
	wr.invalidate_rkey = self->mr->rkey;
	ASSERT_EQ(0, ibv_post_send(self->b, &wr, &bad));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, wc_of(self->bcq, 0x62, NULL, NULL));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, wc_of(self->acq, 0x63, NULL, NULL));
	/* The MR is untouched by it: still registered, still local. */
	EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = NULL;
}

TEST_F(mw, type2_only_through_its_qp)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	struct ibv_cq *cq2 = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	struct ibv_qp *a2, *b2;
	uint32_t key;

	ASSERT_NE(NULL, mw);
	ASSERT_NE(NULL, cq2);
	a2 = rc_qp(self, cq2);
	b2 = rc_qp(self, cq2);
	ASSERT_NE(NULL, a2);
	ASSERT_NE(NULL, b2);
	ASSERT_EQ(0, connect_pair(self, a2, b2));
	key = ibv_inc_rkey(mw->rkey);
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self->a, self->acq, mw, key,
					self->mr, at(self, WOFF), WLEN,
					IBV_ACCESS_REMOTE_WRITE));
	/* b2's write arrives at a2, which did not bind it. */
	ASSERT_EQ(0, post_send(b2, IBV_WR_RDMA_WRITE, self->bmr->lkey,
			       self->bbuf, 16, 0x70, IBV_SEND_SIGNALED,
			       at(self, WOFF), key));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc_of(cq2, 0x70, NULL, NULL));
	EXPECT_TRUE(all_bytes(self->buf, BUFSZ, 0x11));
	/* Through a, it works. */
	EXPECT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE,
					 at(self, WOFF), key, 16));
	EXPECT_EQ(0, ibv_destroy_qp(a2));
	EXPECT_EQ(0, ibv_destroy_qp(b2));
	EXPECT_EQ(0, ibv_destroy_cq(cq2));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, destroyed_binder_qp)
{
	struct ibv_mw *mw;
	uint32_t key;

	mw = bound2(self, IBV_ACCESS_REMOTE_WRITE, &key);
	ASSERT_NE(NULL, mw);
	/* The window keeps its QP's memory, not its life. */
	EXPECT_EQ(0, ibv_destroy_qp(self->a));
	self->a = NULL;
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR,
		  b_rdma(self, IBV_WR_RDMA_WRITE, at(self, WOFF), key, 16));
	EXPECT_TRUE(all_bytes(self->buf, BUFSZ, 0x11));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_F(mw, window_of_another_process)
{
	struct ibv_context *ctx2 = sv_open_named(self->list, "softverbs0");
	struct ibv_pd *pd2;
	struct ibv_mw *mw2, fake;

	ASSERT_NE(NULL, ctx2);
	pd2 = ibv_alloc_pd(ctx2);
	ASSERT_NE(NULL, pd2);
	mw2 = ibv_alloc_mw(pd2, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw2);
	/* The library refuses another context's window ... */
	EXPECT_EQ(-EINVAL, bind2(self->a, self->acq, mw2,
				 ibv_inc_rkey(mw2->rkey), self->mr,
				 at(self, WOFF), WLEN,
				 IBV_ACCESS_REMOTE_WRITE));
	/* ... and the kernel its key, which is of another PD. */
	fake = *mw2;
	fake.context = self->ctx;
	fake.pd = self->pd;
	EXPECT_EQ(IBV_WC_MW_BIND_ERR,
		  bind2(self->a, self->acq, &fake,
			ibv_inc_rkey(mw2->rkey), self->mr, at(self, WOFF),
			WLEN, IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(0, ibv_dealloc_mw(mw2));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
	EXPECT_EQ(0, ibv_close_device(ctx2));
}

TEST_F(mw, kernel_errnos)
{
	int fd = self->ctx->cmd_fd;
	struct sv_alloc_mw a = { .size = sizeof(a), .pd_handle = self->pd->handle,
				 .type = SV_MW_TYPE_1 };
	struct sv_dealloc_mw d = { .size = sizeof(d) };

	a.type = 0;
	EXPECT_EQ(EINVAL, sv_ioc(fd, SV_IOC_ALLOC_MW, &a));
	a.type = 3;
	EXPECT_EQ(EINVAL, sv_ioc(fd, SV_IOC_ALLOC_MW, &a));
	a.type = SV_MW_TYPE_2;
	a.reserved = 1;
	EXPECT_EQ(EINVAL, sv_ioc(fd, SV_IOC_ALLOC_MW, &a));
	a.reserved = 0;
	a.pd_handle = 0x7ffffff0;
	EXPECT_EQ(ENOENT, sv_ioc(fd, SV_IOC_ALLOC_MW, &a));
	/* An MR's handle is no PD's. */
	a.pd_handle = self->mr->handle;
	EXPECT_EQ(EINVAL, sv_ioc(fd, SV_IOC_ALLOC_MW, &a));
	a.size = SV_ALLOC_MW_SIZE_VER0 - 4;
	a.pd_handle = self->pd->handle;
	EXPECT_EQ(EINVAL, sv_ioc(fd, SV_IOC_ALLOC_MW, &a));

	d.mw_handle = 0x7ffffff0;
	EXPECT_EQ(ENOENT, sv_ioc(fd, SV_IOC_DEALLOC_MW, &d));
	d.mw_handle = self->mr->handle;
	EXPECT_EQ(EINVAL, sv_ioc(fd, SV_IOC_DEALLOC_MW, &d));
	/* A PD with a window is busy. */
	a.size = sizeof(a);
	ASSERT_EQ(0, sv_ioc(fd, SV_IOC_ALLOC_MW, &a));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	d.mw_handle = a.mw_handle;
	EXPECT_EQ(0, sv_ioc(fd, SV_IOC_DEALLOC_MW, &d));
	EXPECT_EQ(ENOENT, sv_ioc(fd, SV_IOC_DEALLOC_MW, &d));
}

/*
 * A process that exits with windows of both types bound over its MR and
 * writes in flight through them: its file's teardown takes them down.
 */
static int child_with_windows(FIXTURE_DATA(mw) *self)
{
	struct ibv_mw *m1, *m2;

	/* A fresh context of its own, set up as the fixture's. */
	self->ctx = sv_open_named(self->list, "softverbs0");
	if (!self->ctx)
		return 1;
	self->pd = ibv_alloc_pd(self->ctx);
	self->acq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	self->bcq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	if (!self->pd || !self->acq || !self->bcq)
		return 2;
	self->mr = ibv_reg_mr(self->pd, self->buf, BUFSZ,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	self->bmr = ibv_reg_mr(self->pd, self->bbuf, BUFSZ,
			       IBV_ACCESS_LOCAL_WRITE);
	self->a = rc_qp(self, self->acq);
	self->b = rc_qp(self, self->bcq);
	if (!self->mr || !self->bmr || !self->a || !self->b ||
	    connect_pair(self, self->a, self->b))
		return 3;
	m1 = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	m2 = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	if (!m1 || !m2 || bind1(self, m1, self->mr, WOFF, WLEN, ALL_REMOTE) ||
	    bind2(self->a, self->acq, m2, ibv_inc_rkey(m2->rkey),
		  self->mr, at(self, 0), 64, ALL_REMOTE))
		return 4;
	post_send(self->b, IBV_WR_RDMA_WRITE, self->bmr->lkey, self->bbuf,
		  WLEN, 1, 0, at(self, WOFF), m1->rkey);
	post_send(self->b, IBV_WR_RDMA_WRITE, self->bmr->lkey, self->bbuf,
		  64, 2, 0, at(self, 0), ibv_inc_rkey(m2->rkey));
	return 0;
}

TEST_F(mw, exit_with_windows_bound)
{
	struct ibv_mw *mw;
	int i, status;
	pid_t pid;

	for (i = 0; i < 4; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(child_with_windows(self));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}
	/* Ours still work. */
	mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	ASSERT_NE(NULL, mw);
	EXPECT_EQ(IBV_WC_SUCCESS, bind1(self, mw, self->mr, WOFF, WLEN,
					IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(IBV_WC_SUCCESS, b_rdma(self, IBV_WR_RDMA_WRITE,
					 at(self, WOFF), mw->rkey, 8));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

TEST_HARNESS_MAIN
