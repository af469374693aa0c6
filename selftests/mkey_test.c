// SPDX-License-Identifier: GPL-2.0
/*
 * Indirect memory keys through libmlx5.so.1 (Documentation/mlx5dv.rst,
 * "Indirect memory keys"), as an mlx5 program makes and uses them: a
 * DEVX context (mlx5dv_open_device), mlx5dv_create_mkey(), an RC QP made
 * by mlx5dv_create_qp() with MLX5DV_QP_EX_WITH_MR_LIST/_INTERLEAVED, and
 * the layout posted with mlx5dv_wr_mr_list()/mlx5dv_wr_mr_interleaved().
 *
 *   - mlx5dv_create_mkey's and mlx5dv_create_qp's errnos as mlx5's;
 *   - a list key over pieces of two MRs: RDMA WRITE, READ and an atomic
 *     through its rkey, a SEND gathered through its lkey, data verified
 *     byte by byte, the bytes around the pieces untouched;
 *   - an interleaved key (repeat count, strides): written and read back,
 *     the skipped bytes untouched;
 *   - the key's rights, its bounds, IBV_WR_LOCAL_INV, a free key, a
 *     deregistered MR under it, a key of another PD: the exact statuses;
 *   - the builders' errors (not inline, bad rights, too many entries);
 *   - the kernel's errnos for bad create and destroy arguments.
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include "softverbs-abi.h"
#include "sv_harness.h"
#include "sv_dp_test.h"

#define BUFSZ	16384
#define PIECE1	100		/* offset and length of the pieces */
#define LEN1	1000
#define PIECE2	52
#define LEN2	3000

FIXTURE(mkey) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;		/* a: the UMR QP; b: its peer */
	struct ibv_qp_ex *ax;
	struct mlx5dv_qp_ex *adv;
	struct ibv_mr *mr1, *mr2, *lmr;	/* under the key; b's own */
	char *buf1, *buf2, *lbuf;
	struct mlx5dv_mkey *mkey;
	union ibv_gid gid;
};

static struct ibv_device *find_dev(struct ibv_device **list,
				   const char *name)
{
	int i;

	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			return list[i];
	return NULL;
}

/* As mlx5 programs open a device for mkeys and DR: a DEVX context. */
static struct ibv_context *open_devx(struct ibv_device **list,
				     const char *name)
{
	struct mlx5dv_context_attr attr = {
		.flags = MLX5DV_CONTEXT_FLAGS_DEVX,
	};
	struct ibv_device *dev = find_dev(list, name);

	return dev ? mlx5dv_open_device(dev, &attr) : NULL;
}

static struct ibv_qp *umr_qp(struct ibv_context *ctx, struct ibv_pd *pd,
			     struct ibv_cq *cq, enum ibv_qp_type type,
			     uint64_t dv_ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = type, .send_cq = cq, .recv_cq = cq, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_LOCAL_INV,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 256 },
	};
	struct mlx5dv_qp_init_attr da = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS,
		.send_ops_flags = dv_ops,
	};

	return mlx5dv_create_qp(ctx, &ia, &da);
}

FIXTURE_SETUP(mkey)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 2, .max_recv_sge = 1 },
	};
	int rights = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct mlx5dv_mkey_init_attr ma = {
		.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT,
		.max_entries = 4,
	};

	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	self->ctx = open_devx(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &self->gid));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->buf1 = aligned_alloc(4096, BUFSZ);
	self->buf2 = aligned_alloc(4096, BUFSZ);
	self->lbuf = aligned_alloc(4096, BUFSZ);
	ASSERT_NE(NULL, self->buf1);
	ASSERT_NE(NULL, self->buf2);
	ASSERT_NE(NULL, self->lbuf);
	memset(self->buf1, 0x11, BUFSZ);
	memset(self->buf2, 0x22, BUFSZ);
	/* The MRs under the key grant no remote right of their own. */
	self->mr1 = ibv_reg_mr(self->pd, self->buf1, BUFSZ,
			       IBV_ACCESS_LOCAL_WRITE);
	self->mr2 = ibv_reg_mr(self->pd, self->buf2, BUFSZ,
			       IBV_ACCESS_LOCAL_WRITE);
	self->lmr = ibv_reg_mr(self->pd, self->lbuf, BUFSZ, rights);
	ASSERT_NE(NULL, self->mr1);
	ASSERT_NE(NULL, self->mr2);
	ASSERT_NE(NULL, self->lmr);

	self->a = umr_qp(self->ctx, self->pd, self->cq, IBV_QPT_RC,
			 MLX5DV_QP_EX_WITH_MR_INTERLEAVED |
			 MLX5DV_QP_EX_WITH_MR_LIST |
			 MLX5DV_QP_EX_WITH_MKEY_CONFIGURE);
	ASSERT_NE(NULL, self->a);
	self->ax = ibv_qp_to_qp_ex(self->a);
	ASSERT_NE(NULL, self->ax);
	self->adv = mlx5dv_qp_ex_from_ibv_qp_ex(self->ax);
	ASSERT_NE(NULL, self->adv);
	qa.send_cq = self->cq;
	qa.recv_cq = self->cq;
	self->b = ibv_create_qp(self->pd, &qa);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, qp_init(self->a, rights));
	ASSERT_EQ(0, qp_init(self->b, rights));
	ASSERT_EQ(0, qp_rtr_rts(self->a, self->b->qp_num, &self->gid, 7, 1,
				0));
	ASSERT_EQ(0, qp_rtr_rts(self->b, self->a->qp_num, &self->gid, 7, 1,
				0));

	ma.pd = self->pd;
	self->mkey = mlx5dv_create_mkey(&ma);
	ASSERT_NE(NULL, self->mkey);
	EXPECT_EQ(4, ma.max_entries);
	EXPECT_EQ(self->mkey->lkey, self->mkey->rkey);
}

FIXTURE_TEARDOWN(mkey)
{
	if (self->mkey)
		EXPECT_EQ(0, mlx5dv_destroy_mkey(self->mkey));
	if (self->a)
		ibv_destroy_qp(self->a);
	if (self->b)
		ibv_destroy_qp(self->b);
	if (self->mr1)
		ibv_dereg_mr(self->mr1);
	if (self->mr2)
		ibv_dereg_mr(self->mr2);
	if (self->lmr)
		ibv_dereg_mr(self->lmr);
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	free(self->buf1);
	free(self->buf2);
	free(self->lbuf);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
}

/* The list layout: LEN1 bytes of mr1 at PIECE1, LEN2 of mr2 at PIECE2. */
static int post_list(FIXTURE_DATA(mkey) *self, struct mlx5dv_mkey *mkey,
		     uint32_t access, unsigned int flags)
{
	struct ibv_sge sg[2] = {
		{ (uintptr_t)self->buf1 + PIECE1, LEN1, self->mr1->lkey },
		{ (uintptr_t)self->buf2 + PIECE2, LEN2, self->mr2->lkey },
	};

	ibv_wr_start(self->ax);
	self->ax->wr_id = 0x1111;
	self->ax->wr_flags = flags;
	mlx5dv_wr_mr_list(self->adv, mkey, access, 2, sg);
	return ibv_wr_complete(self->ax);
}

static int expect_wc(struct __test_metadata *_metadata, struct ibv_cq *cq,
		     uint64_t id, enum ibv_wc_status status, int opcode)
{
	struct ibv_wc wc = {};

	EXPECT_EQ(1, poll1(cq, &wc));
	EXPECT_EQ(id, wc.wr_id);
	EXPECT_EQ(status, wc.status);
	if (status == IBV_WC_SUCCESS && opcode >= 0)
		EXPECT_EQ(opcode, wc.opcode);
	return wc.status == status && wc.wr_id == id ? 0 : -1;
}

/*
 * Lay the key out read-only as post_list() does, signaled, and wait for
 * the UMR's completion: a UMR on QP a is not ordered with QP b's work,
 * so b may use the key only then (as on mlx5).
 */
static int lay_out_read(struct __test_metadata *_metadata,
			FIXTURE_DATA(mkey) *self)
{
	if (post_list(self, self->mkey, IBV_ACCESS_REMOTE_READ,
		      IBV_SEND_INLINE | IBV_SEND_SIGNALED))
		return -1;
	return expect_wc(_metadata, self->cq, 0x1111, IBV_WC_SUCCESS,
			 MLX5DV_WC_UMR);
}

/* b's RDMA op on the key at offset off, from/to lbuf; its status. */
static enum ibv_wc_status rdma_via_key(FIXTURE_DATA(mkey) *self,
				       enum ibv_wr_opcode op, uint64_t off,
				       uint32_t len, uint32_t rkey)
{
	struct ibv_wc wc = {};

	if (post_send(self->b, op, self->lmr->lkey, self->lbuf, len, 7,
		      IBV_SEND_SIGNALED, off, rkey))
		return -1;
	if (poll1(self->cq, &wc) != 1 || wc.wr_id != 7)
		return -1;
	return wc.status;
}

TEST(create_errors)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct mlx5dv_mkey_init_attr ma = { .max_entries = 5 };
	struct mlx5dv_context_attr ca = { .flags = 1U << 20 };
	struct ibv_context *ctx;
	struct mlx5dv_mkey *k;

	ASSERT_NE(NULL, list);
	ctx = open_devx(list, "softverbs0");
	ASSERT_NE(NULL, ctx);
	ma.pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, ma.pd);
	/* mlx5: no flag, or one without support: EOPNOTSUPP */
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_mkey(&ma));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ma.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
			  MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_mkey(&ma));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ma.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
			  MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_mkey(&ma));
	EXPECT_EQ(EOPNOTSUPP, errno);
	/* More entries than softverbs keeps */
	ma.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
	ma.max_entries = 2000;
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_create_mkey(&ma));
	EXPECT_EQ(EINVAL, errno);
	/* Rounded up to a multiple of 4, written back */
	ma.max_entries = 5;
	k = mlx5dv_create_mkey(&ma);
	ASSERT_NE(NULL, k);
	EXPECT_EQ(8, ma.max_entries);
	EXPECT_NE(0, k->lkey);
	/* A PD with a live key is busy; the key goes first */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(ma.pd));
	EXPECT_EQ(0, mlx5dv_destroy_mkey(k));
	EXPECT_EQ(0, ibv_dealloc_pd(ma.pd));
	EXPECT_EQ(0, ibv_close_device(ctx));
	/* Only DEVX among the context flags */
	errno = 0;
	EXPECT_EQ(NULL, mlx5dv_open_device(find_dev(list, "softverbs0"),
					   &ca));
	EXPECT_EQ(EINVAL, errno);
	ibv_free_device_list(list);
}

/* The kernel's own checks of SV_IOC_CREATE_MKEY and _DESTROY_MKEY. */
TEST_F(mkey, ioctl_errors)
{
	int fd = self->ctx->cmd_fd;
	struct sv_create_mkey c = { .size = sizeof(c),
				    .pd_handle = self->pd->handle };
	struct sv_destroy_mkey d = { .size = sizeof(d) };

	c.flags = 1;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_CREATE_MKEY, &c));
	EXPECT_EQ(EINVAL, errno);
	c.flags = 0;
	c.reserved = 1;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_CREATE_MKEY, &c));
	EXPECT_EQ(EINVAL, errno);
	c.reserved = 0;
	c.max_entries = SV_MAX_MKEY_ENTRIES + 1;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_CREATE_MKEY, &c));
	EXPECT_EQ(EINVAL, errno);
	c.max_entries = 1;
	c.pd_handle = 0x7fffffff;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_CREATE_MKEY, &c));
	EXPECT_EQ(ENOENT, errno);
	/* Another object type's handle: EINVAL, as for every handle */
	c.pd_handle = self->cq->handle;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_CREATE_MKEY, &c));
	EXPECT_EQ(EINVAL, errno);
	c.pd_handle = self->pd->handle;
	ASSERT_EQ(0, ioctl(fd, SV_IOC_CREATE_MKEY, &c));
	EXPECT_EQ(4, c.max_entries);
	/* An MR is not an mkey, nor an mkey an MR */
	d.mkey_handle = self->mr1->handle;
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_DESTROY_MKEY, &d));
	EXPECT_EQ(EINVAL, errno);
	{
		struct sv_dereg_mr dr = { .size = sizeof(dr),
					  .mr_handle = c.mkey_handle };

		EXPECT_EQ(-1, ioctl(fd, SV_IOC_DEREG_MR, &dr));
		EXPECT_EQ(EINVAL, errno);
	}
	d.mkey_handle = c.mkey_handle;
	EXPECT_EQ(0, ioctl(fd, SV_IOC_DESTROY_MKEY, &d));
	EXPECT_EQ(-1, ioctl(fd, SV_IOC_DESTROY_MKEY, &d));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(mkey, qp_create_errors)
{
	/* mlx5: the MR layouts on RC only; other mlx5 ops unbuilt */
	errno = 0;
	EXPECT_EQ(NULL, umr_qp(self->ctx, self->pd, self->cq, IBV_QPT_UC,
			       MLX5DV_QP_EX_WITH_MR_LIST));
	EXPECT_EQ(EOPNOTSUPP, errno);
	errno = 0;
	EXPECT_EQ(NULL, umr_qp(self->ctx, self->pd, self->cq, IBV_QPT_RC,
			       MLX5DV_QP_EX_WITH_RAW_WQE));
	EXPECT_EQ(EOPNOTSUPP, errno);
	errno = 0;
	EXPECT_EQ(NULL, umr_qp(self->ctx, self->pd, self->cq, IBV_QPT_RC,
			       1ULL << 40));
	EXPECT_EQ(EOPNOTSUPP, errno);
	/* No mlx5 send op at all: an ordinary QP with no MR builders */
	{
		struct ibv_qp *q = umr_qp(self->ctx, self->pd, self->cq,
					  IBV_QPT_RC, 0);
		struct mlx5dv_qp_ex *dv;

		ASSERT_NE(NULL, q);
		dv = mlx5dv_qp_ex_from_ibv_qp_ex(ibv_qp_to_qp_ex(q));
		ASSERT_NE(NULL, dv);
		EXPECT_EQ(NULL, dv->wr_mr_list);
		EXPECT_EQ(0, ibv_destroy_qp(q));
	}
	EXPECT_NE(NULL, self->adv->wr_mr_list);
	EXPECT_NE(NULL, self->adv->wr_mr_interleaved);
	EXPECT_NE(NULL, self->adv->wr_mkey_configure);
}

TEST_F(mkey, list_remote_and_local)
{
	uint32_t rk = self->mkey->rkey;
	uint64_t *p, before;
	char *pat = malloc(BUFSZ);
	int i;

	ASSERT_NE(NULL, pat);
	ASSERT_EQ(0, post_list(self, self->mkey, IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_WRITE |
			       IBV_ACCESS_REMOTE_READ |
			       IBV_ACCESS_REMOTE_ATOMIC,
			       IBV_SEND_INLINE | IBV_SEND_SIGNALED));
	ASSERT_EQ(0, expect_wc(_metadata, self->cq, 0x1111, IBV_WC_SUCCESS,
			       MLX5DV_WC_UMR));

	/* RDMA WRITE of the whole key, zero-based */
	sv_fill(pat, LEN1 + LEN2, 3);
	memcpy(self->lbuf, pat, LEN1 + LEN2);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma_via_key(self, IBV_WR_RDMA_WRITE, 0,
					       LEN1 + LEN2, rk));
	EXPECT_EQ(0, memcmp(self->buf1 + PIECE1, pat, LEN1));
	EXPECT_EQ(0, memcmp(self->buf2 + PIECE2, pat + LEN1, LEN2));
	for (i = 0; i < PIECE1; i++)
		ASSERT_EQ(0x11, self->buf1[i]);
	ASSERT_EQ(0x11, self->buf1[PIECE1 + LEN1]);
	for (i = 0; i < PIECE2; i++)
		ASSERT_EQ(0x22, self->buf2[i]);
	ASSERT_EQ(0x22, self->buf2[PIECE2 + LEN2]);

	/* RDMA READ across the seam */
	memset(self->lbuf, 0, BUFSZ);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma_via_key(self, IBV_WR_RDMA_READ, 500,
					       2000, rk));
	EXPECT_EQ(0, memcmp(self->lbuf, pat + 500, 2000));

	/* An atomic lands in mr2: key offset LEN1 + 8 */
	p = (uint64_t *)(self->buf2 + PIECE2 + 8);
	before = *p;
	{
		struct ibv_sge sg = { (uintptr_t)self->lbuf, 8,
				      self->lmr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 8, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IBV_SEND_SIGNALED,
		}, *bad;

		wr.wr.atomic.remote_addr = LEN1 + 8;
		wr.wr.atomic.rkey = rk;
		wr.wr.atomic.compare_add = 5;
		ASSERT_EQ(0, ibv_post_send(self->b, &wr, &bad));
		ASSERT_EQ(0, expect_wc(_metadata, self->cq, 8, IBV_WC_SUCCESS,
				       IBV_WC_FETCH_ADD));
		EXPECT_EQ(before, *(uint64_t *)self->lbuf);
		EXPECT_EQ(before + 5, *p);
	}

	/* A SEND gathered through the lkey: a's SGE is a key offset */
	memset(self->lbuf, 0, BUFSZ);
	ASSERT_EQ(0, post_recv(self->b, self->lmr, self->lbuf, BUFSZ, 9));
	memcpy(pat, self->buf1 + PIECE1, LEN1);
	memcpy(pat + LEN1, self->buf2 + PIECE2, LEN2);
	ibv_wr_start(self->ax);
	self->ax->wr_id = 10;
	self->ax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(self->ax);
	ibv_wr_set_sge(self->ax, self->mkey->lkey, 900, 300);
	ASSERT_EQ(0, ibv_wr_complete(self->ax));
	/* The receive's completion and the send's, in either order */
	for (i = 0; i < 2; i++) {
		struct ibv_wc wc = {};

		ASSERT_EQ(1, poll1(self->cq, &wc));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		if (wc.wr_id == 9) {
			EXPECT_EQ(IBV_WC_RECV, wc.opcode);
			EXPECT_EQ(300, wc.byte_len);
		} else {
			EXPECT_EQ(10, wc.wr_id);
			EXPECT_EQ(IBV_WC_SEND, wc.opcode);
		}
	}
	EXPECT_EQ(0, memcmp(self->lbuf, pat + 900, 300));
	free(pat);
}

TEST_F(mkey, interleaved)
{
	struct mlx5dv_mr_interleaved il[2] = {
		{ (uintptr_t)self->buf1, 16, 16, self->mr1->lkey },
		{ (uintptr_t)self->buf2 + 8, 8, 24, self->mr2->lkey },
	};
	char pat[96];
	int r, i;

	ibv_wr_start(self->ax);
	self->ax->wr_id = 0x2222;
	self->ax->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mr_interleaved(self->adv, self->mkey,
				 IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ, 4, 2, il);
	ASSERT_EQ(0, ibv_wr_complete(self->ax));
	ASSERT_EQ(0, expect_wc(_metadata, self->cq, 0x2222, IBV_WC_SUCCESS,
			       MLX5DV_WC_UMR));

	/* 4 repetitions of 16 + 8 bytes: 96 bytes of key */
	sv_fill(pat, sizeof(pat), 5);
	memcpy(self->lbuf, pat, sizeof(pat));
	ASSERT_EQ(IBV_WC_SUCCESS, rdma_via_key(self, IBV_WR_RDMA_WRITE, 0,
					       sizeof(pat),
					       self->mkey->rkey));
	for (r = 0; r < 4; r++) {
		EXPECT_EQ(0, memcmp(self->buf1 + 32 * r, pat + 24 * r, 16));
		EXPECT_EQ(0, memcmp(self->buf2 + 8 + 32 * r, pat + 24 * r + 16,
				    8));
		for (i = 16; i < 32; i++)
			ASSERT_EQ(0x11, self->buf1[32 * r + i]);
		for (i = 16; i < 40; i++)
			ASSERT_EQ(0x22, self->buf2[32 * r + i]);
	}
	ASSERT_EQ(0x22, self->buf2[0]);
	memset(self->lbuf, 0, sizeof(pat));
	ASSERT_EQ(IBV_WC_SUCCESS, rdma_via_key(self, IBV_WR_RDMA_READ, 20,
					       70, self->mkey->rkey));
	EXPECT_EQ(0, memcmp(self->lbuf, pat + 20, 70));
	/* One byte past the key: the responder's access error */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_via_key(self, IBV_WR_RDMA_READ, 90, 7,
			       self->mkey->rkey));
}

TEST_F(mkey, rights)
{
	ASSERT_EQ(0, lay_out_read(_metadata, self));
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_via_key(self, IBV_WR_RDMA_READ, 0, 64,
					       self->mkey->rkey));
	/* Read-only: a write is refused, nothing lands */
	memset(self->lbuf, 0x77, 64);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_via_key(self, IBV_WR_RDMA_WRITE, 0, 64,
			       self->mkey->rkey));
	EXPECT_EQ(0x11, self->buf1[PIECE1]);
}

TEST_F(mkey, local_inv)
{
	struct ibv_send_wr wr = {
		.wr_id = 0x3333, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	ASSERT_EQ(0, lay_out_read(_metadata, self));
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_via_key(self, IBV_WR_RDMA_READ, 0, 64,
					       self->mkey->rkey));
	/* ibv_post_send's LOCAL_INV frees it */
	wr.invalidate_rkey = self->mkey->rkey;
	ASSERT_EQ(0, ibv_post_send(self->a, &wr, &bad));
	ASSERT_EQ(0, expect_wc(_metadata, self->cq, 0x3333, IBV_WC_SUCCESS,
			       IBV_WC_LOCAL_INV));
	/* ... and it can be laid out again, then freed by ibv_wr_local_inv */
	ASSERT_EQ(0, lay_out_read(_metadata, self));
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_via_key(self, IBV_WR_RDMA_READ, 64, 64,
					       self->mkey->rkey));
	ibv_wr_start(self->ax);
	self->ax->wr_id = 0x4444;
	self->ax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(self->ax, self->mkey->rkey);
	ASSERT_EQ(0, ibv_wr_complete(self->ax));
	ASSERT_EQ(0, expect_wc(_metadata, self->cq, 0x4444, IBV_WC_SUCCESS,
			       IBV_WC_LOCAL_INV));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_via_key(self, IBV_WR_RDMA_READ, 0, 64,
			       self->mkey->rkey));
}

TEST_F(mkey, free_key)
{
	/* Never laid out: no access */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_via_key(self, IBV_WR_RDMA_READ, 0, 8,
			       self->mkey->rkey));
}

TEST_F(mkey, dereg_under_key)
{
	ASSERT_EQ(0, lay_out_read(_metadata, self));
	/* mr1 goes: the bytes in mr2 still read, those in mr1 do not */
	ASSERT_EQ(0, ibv_dereg_mr(self->mr1));
	self->mr1 = NULL;
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_via_key(self, IBV_WR_RDMA_READ, LEN1,
					       64, self->mkey->rkey));
	EXPECT_EQ(0x22, self->lbuf[0]);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_via_key(self, IBV_WR_RDMA_READ, 0, 8,
			       self->mkey->rkey));
}

TEST_F(mkey, other_pd)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct mlx5dv_mkey_init_attr ma = {
		.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT,
		.max_entries = 4, .pd = pd2,
	};
	struct mlx5dv_mkey *k;
	struct ibv_wc wc = {};

	ASSERT_NE(NULL, pd2);
	k = mlx5dv_create_mkey(&ma);
	ASSERT_NE(NULL, k);
	/* A key of another PD: the UMR fails, the QP goes to ERR */
	ASSERT_EQ(0, post_list(self, k, IBV_ACCESS_REMOTE_READ,
			       IBV_SEND_INLINE));
	ASSERT_EQ(1, poll1(self->cq, &wc));
	EXPECT_EQ(0x1111, wc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, wc.status);
	EXPECT_EQ(0, mlx5dv_destroy_mkey(k));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
}

TEST_F(mkey, builder_errors)
{
	struct ibv_sge sg[5] = {};
	int i;

	/* mlx5: a UMR must be inline */
	EXPECT_EQ(EOPNOTSUPP, post_list(self, self->mkey,
					IBV_ACCESS_REMOTE_READ, 0));
	/* The four rights of an mkey only */
	EXPECT_EQ(EINVAL, post_list(self, self->mkey, IBV_ACCESS_MW_BIND,
				    IBV_SEND_INLINE));
	/* More entries than the key holds */
	for (i = 0; i < 5; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)self->buf1 + 8 * i, 8,
					  self->mr1->lkey };
	ibv_wr_start(self->ax);
	self->ax->wr_flags = IBV_SEND_INLINE;
	mlx5dv_wr_mr_list(self->adv, self->mkey, 0, 5, sg);
	EXPECT_EQ(ENOMEM, ibv_wr_complete(self->ax));
	/* Nothing was posted: the QP still works */
	ASSERT_EQ(0, lay_out_read(_metadata, self));
}

/* mlx5dv_wr_mkey_configure() with @n setters: what ibv_wr_complete says */
static int configure(FIXTURE_DATA(mkey) *self, uint8_t n, int access,
		     bool list, struct mlx5dv_mkey_conf_attr *attr)
{
	struct ibv_sge sg[2] = {
		{ (uintptr_t)self->buf1 + PIECE1, LEN1, self->mr1->lkey },
		{ (uintptr_t)self->buf2 + PIECE2, LEN2, self->mr2->lkey },
	};
	struct mlx5dv_mkey_conf_attr none = {};

	ibv_wr_start(self->ax);
	self->ax->wr_id = 0x5555;
	self->ax->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mkey_configure(self->adv, self->mkey, n,
				 attr ? attr : &none);
	if (access >= 0)
		mlx5dv_wr_set_mkey_access_flags(self->adv, access);
	if (list)
		mlx5dv_wr_set_mkey_layout_list(self->adv, 2, sg);
	return ibv_wr_complete(self->ax);
}

TEST_F(mkey, configure)
{
	struct mlx5dv_mkey_conf_attr bad = { .comp_mask = 1 };
	struct ibv_send_wr inv = {
		.wr_id = 0x3333, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *badwr;
	struct mlx5dv_sig_block_attr sig = {};

	/* Rights and a layout */
	ASSERT_EQ(0, configure(self, 2, IBV_ACCESS_REMOTE_READ, true, NULL));
	ASSERT_EQ(0, expect_wc(_metadata, self->cq, 0x5555, IBV_WC_SUCCESS,
			       MLX5DV_WC_UMR));
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_via_key(self, IBV_WR_RDMA_READ, 990,
					       20, self->mkey->rkey));
	EXPECT_EQ(0, memcmp(self->lbuf, self->buf1 + PIECE1 + 990, 10));
	EXPECT_EQ(0, memcmp(self->lbuf + 10, self->buf2 + PIECE2, 10));
	/* Freed, then configured with no setter: the same layout, rights */
	inv.invalidate_rkey = self->mkey->rkey;
	ASSERT_EQ(0, ibv_post_send(self->a, &inv, &badwr));
	ASSERT_EQ(0, expect_wc(_metadata, self->cq, 0x3333, IBV_WC_SUCCESS,
			       IBV_WC_LOCAL_INV));
	ASSERT_EQ(0, configure(self, 0, -1, false, NULL));
	ASSERT_EQ(0, expect_wc(_metadata, self->cq, 0x5555, IBV_WC_SUCCESS,
			       MLX5DV_WC_UMR));
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_via_key(self, IBV_WR_RDMA_READ, 0, 8,
					       self->mkey->rkey));
	/* New rights only: the layout stays, a write now lands */
	ASSERT_EQ(0, configure(self, 1, IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_WRITE, false, NULL));
	ASSERT_EQ(0, expect_wc(_metadata, self->cq, 0x5555, IBV_WC_SUCCESS,
			       MLX5DV_WC_UMR));
	memset(self->lbuf, 0x5a, 16);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_via_key(self, IBV_WR_RDMA_WRITE,
					       LEN1 - 8, 16,
					       self->mkey->rkey));
	EXPECT_EQ(0x5a, self->buf1[PIECE1 + LEN1 - 1]);
	EXPECT_EQ(0x5a, self->buf2[PIECE2 + 7]);
	EXPECT_EQ(0x22, self->buf2[PIECE2 + 8]);

	/* The builder's and setters' errors; nothing posted by them */
	EXPECT_EQ(EOPNOTSUPP, configure(self, 0, -1, false, &bad));
	EXPECT_EQ(EINVAL, configure(self, 2, IBV_ACCESS_REMOTE_READ, false,
				    NULL));		/* a setter short */
	EXPECT_EQ(EINVAL, configure(self, 1, IBV_ACCESS_MW_BIND, false,
				    NULL));
	ibv_wr_start(self->ax);
	self->ax->wr_flags = IBV_SEND_INLINE;
	mlx5dv_wr_set_mkey_access_flags(self->adv, 0);	/* no configure */
	EXPECT_EQ(EINVAL, ibv_wr_complete(self->ax));
	ibv_wr_start(self->ax);
	self->ax->wr_flags = IBV_SEND_INLINE;
	mlx5dv_wr_mkey_configure(self->adv, self->mkey, 2, &bad);
	EXPECT_EQ(EOPNOTSUPP, ibv_wr_complete(self->ax));
	ibv_wr_start(self->ax);
	self->ax->wr_flags = IBV_SEND_INLINE;
	bad.comp_mask = 0;
	mlx5dv_wr_mkey_configure(self->adv, self->mkey, 2, &bad);
	mlx5dv_wr_set_mkey_access_flags(self->adv, 0);
	mlx5dv_wr_set_mkey_access_flags(self->adv, 0);	/* twice */
	EXPECT_EQ(EINVAL, ibv_wr_complete(self->ax));
	ibv_wr_start(self->ax);
	self->ax->wr_flags = IBV_SEND_INLINE;
	mlx5dv_wr_mkey_configure(self->adv, self->mkey, 1, &bad);
	mlx5dv_wr_set_mkey_sig_block(self->adv, &sig);
	EXPECT_EQ(EOPNOTSUPP, ibv_wr_complete(self->ax));
	/* The key is as the last good configure left it */
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_via_key(self, IBV_WR_RDMA_WRITE, 0, 8,
					       self->mkey->rkey));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_via_key(self, IBV_WR_RDMA_READ, 0, 8,
			       self->mkey->rkey));
}

TEST_HARNESS_MAIN
