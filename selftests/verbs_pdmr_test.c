// SPDX-License-Identifier: GPL-2.0
/*
 * PD and MR through the verbs API of libsoftverbs (<infiniband/verbs.h>,
 * -lsoftverbs): ibv_alloc_pd/ibv_dealloc_pd, the ibv_reg_mr family
 * including the header's inline dispatch to ibv_reg_mr_iova2, ibv_rereg_mr
 * with its return codes, ibv_dereg_mr, memory windows in their PD, and
 * the calls softverbs does not support (ODP, dma-buf MRs).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "sv_harness.h"
#include "sv_dp_test.h"
#include "sv_test.h"

FIXTURE(verbs) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char *buf;		/* 4 pages */
};

FIXTURE_SETUP(verbs)
{
	int n;

	self->list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, self->list);
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->buf = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
}

FIXTURE_TEARDOWN(verbs)
{
	if (self->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	if (self->ctx)
		EXPECT_EQ(0, ibv_close_device(self->ctx));
	if (self->list)
		ibv_free_device_list(self->list);
	munmap(self->buf, 4 * 4096);
	EXPECT_EQ(0, sv_obj_count("mr"));
	EXPECT_EQ(0, sv_obj_count("pd"));
}

TEST_F(verbs, pd)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);

	ASSERT_NE(NULL, pd2);
	EXPECT_EQ(self->ctx, pd2->context);
	EXPECT_NE(self->pd->handle, pd2->handle);
	EXPECT_EQ(2, sv_obj_count("pd"));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
	EXPECT_EQ(1, sv_obj_count("pd"));
}

TEST_F(verbs, reg_mr_fields)
{
	struct ibv_mr *mr;

	mr = ibv_reg_mr(self->pd, self->buf + 3, 5000,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(self->ctx, mr->context);
	EXPECT_EQ(self->pd, mr->pd);
	EXPECT_EQ(self->buf + 3, mr->addr);
	EXPECT_EQ(5000, mr->length);
	EXPECT_EQ(mr->lkey, mr->rkey);
	EXPECT_NE(0, mr->lkey);
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/* Non-constant or optional access flags go through ibv_reg_mr_iova2. */
TEST_F(verbs, reg_mr_variants)
{
	volatile unsigned int access = IBV_ACCESS_LOCAL_WRITE;
	struct ibv_mr *a, *b, *c, *d;

	a = ibv_reg_mr(self->pd, self->buf, 4096, access);
	ASSERT_NE(NULL, a);
	b = ibv_reg_mr(self->pd, self->buf, 4096,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING);
	ASSERT_NE(NULL, b);
	c = ibv_reg_mr_iova(self->pd, self->buf, 8192, 0x10000,
			    IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(self->buf, c->addr);
	d = ibv_reg_mr_iova2(self->pd, self->buf, 8192, 0,
			     IBV_ACCESS_ZERO_BASED);
	ASSERT_NE(NULL, d);
	EXPECT_NE(a->lkey, b->lkey);
	EXPECT_NE(b->lkey, c->lkey);
	EXPECT_NE(c->lkey, d->lkey);
	EXPECT_EQ(4, sv_obj_count("mr"));
	EXPECT_EQ(0, ibv_dereg_mr(a));
	EXPECT_EQ(0, ibv_dereg_mr(b));
	EXPECT_EQ(0, ibv_dereg_mr(c));
	EXPECT_EQ(0, ibv_dereg_mr(d));
}

TEST_F(verbs, reg_mr_errors)
{
	struct ibv_mr *mr;

	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf, 10,
				   IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(EINVAL, errno);
	/* ODP, and implicit ODP (addr 0, length SIZE_MAX): odp_test. */
	mr = ibv_reg_mr(self->pd, self->buf, 10, IBV_ACCESS_ON_DEMAND);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	mr = ibv_reg_mr(self->pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, NULL, 4096, 0));
	EXPECT_EQ(EFAULT, errno);
	/* fd 0 is no dma-buf (dmabuf_test has the rest). */
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->pd, 0, 4096, 0, 0,
					  IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, sv_obj_count("mr"));
}

/*
 * Windows live in their PD and count as MRs, as on mlx5 (mw_test.c has
 * the rest).
 */
TEST_F(verbs, memory_windows)
{
	long mrs = sv_obj_count("mr");
	struct ibv_mw *m1 = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	struct ibv_mw *m2 = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);

	ASSERT_NE(NULL, m1);
	ASSERT_NE(NULL, m2);
	EXPECT_EQ(self->pd, m1->pd);
	EXPECT_EQ(self->ctx, m2->context);
	EXPECT_NE(m1->rkey, m2->rkey);
	EXPECT_EQ(mrs + 2, sv_obj_count("mr"));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_dealloc_mw(m1));
	EXPECT_EQ(0, ibv_dealloc_mw(m2));
	EXPECT_EQ(mrs, sv_obj_count("mr"));
}

TEST_F(verbs, rereg)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_mr *mr;
	uint32_t key;

	ASSERT_NE(NULL, pd2);
	mr = ibv_reg_mr(self->pd, self->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);

	key = mr->lkey;
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0));
	EXPECT_EQ(pd2, mr->pd);
	/* The keys stay across a rereg, as on rxe and mlx5. */
	EXPECT_EQ(key, mr->lkey);
	EXPECT_EQ(key, mr->rkey);
	EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	self->pd = NULL;

	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
				  IBV_REREG_MR_CHANGE_ACCESS, NULL,
				  self->buf + 1, 3 * 4096,
				  IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_ATOMIC));
	EXPECT_EQ(self->buf + 1, mr->addr);
	EXPECT_EQ(3 * 4096, mr->length);
	EXPECT_EQ(key, mr->lkey);
	EXPECT_EQ(key, mr->rkey);

	/* Rejected before the kernel: IBV_REREG_MR_ERR_INPUT, EINVAL. */
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, 1 << 3, NULL, NULL, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			       self->buf, 0, 0));
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0,
			       IBV_ACCESS_LOCAL_WRITE));
	/* Refused by the kernel: IBV_REREG_MR_ERR_CMD, errno from it. */
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_CMD,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			       IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(IBV_REREG_MR_ERR_CMD,
		  ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	/* ... and the MR was left as it was. */
	EXPECT_EQ(self->buf + 1, mr->addr);
	EXPECT_EQ(pd2, mr->pd);

	EXPECT_EQ(EBUSY, ibv_dealloc_pd(pd2));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
}

/* An RDMA WRITE of len bytes from src through rkey at raddr; its status. */
static int write_through(struct ibv_qp *qp, struct ibv_cq *cq,
			 struct ibv_mr *smr, char *src, uint32_t len,
			 void *raddr, uint32_t rkey)
{
	struct ibv_wc wc;

	if (post_send(qp, IBV_WR_RDMA_WRITE, smr->lkey, src, len, 1,
		      IBV_SEND_SIGNALED, (uintptr_t)raddr, rkey))
		return -1;
	if (poll1(cq, &wc) != 1)
		return -2;
	return wc.status;
}

/*
 * A peer that was given the rkey once keeps using it across every rereg
 * (PD, access, translation): they used to change the keys, and the
 * peer's next RDMA WRITE completed with IBV_WC_REM_ACCESS_ERR.
 */
TEST_F(verbs, rereg_keeps_rkey_for_peer)
{
	int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_mr *smr, *mr;
	struct ibv_qp *a, *b;
	struct ibv_cq *cq;
	union ibv_gid gid;
	char *src = self->buf + 3 * 4096;
	uint32_t rkey, lkey;

	ASSERT_NE(NULL, pd2);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &gid));
	cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	ia.send_cq = cq;
	ia.recv_cq = cq;
	a = ibv_create_qp(self->pd, &ia);
	b = ibv_create_qp(self->pd, &ia);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, qp_init(a, all));
	ASSERT_EQ(0, qp_init(b, all));
	ASSERT_EQ(0, qp_rtr_rts(a, b->qp_num, &gid, 7, 1, 7));
	ASSERT_EQ(0, qp_rtr_rts(b, a->qp_num, &gid, 7, 1, 7));
	smr = ibv_reg_mr(self->pd, src, 4096, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, smr);

	/* b's MR starts in another PD, without remote write. */
	mr = ibv_reg_mr(pd2, self->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	rkey = mr->rkey;
	lkey = mr->lkey;
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, self->pd, NULL,
				  0, 0));
	EXPECT_EQ(rkey, mr->rkey);
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				  0, all));
	EXPECT_EQ(rkey, mr->rkey);
	EXPECT_EQ(lkey, mr->lkey);
	sv_fill(src, 4096, 3);
	memset(self->buf, 0, 4096);
	EXPECT_EQ(IBV_WC_SUCCESS, write_through(a, cq, smr, src, 100,
						self->buf + 8, rkey));
	EXPECT_EQ(0, memcmp(self->buf + 8, src, 100));

	/* New pages behind the same rkey: the write lands there. */
	memset(self->buf + 4096, 0, 2 * 4096);
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				  self->buf + 4096, 2 * 4096, 0));
	EXPECT_EQ(rkey, mr->rkey);
	EXPECT_EQ(lkey, mr->lkey);
	sv_fill(src, 4096, 9);
	EXPECT_EQ(IBV_WC_SUCCESS, write_through(a, cq, smr, src, 4096,
						self->buf + 4096 + 2000,
						rkey));
	EXPECT_EQ(0, memcmp(self->buf + 4096 + 2000, src, 4096));

	EXPECT_EQ(0, ibv_destroy_qp(a));
	EXPECT_EQ(0, ibv_destroy_qp(b));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dereg_mr(smr));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
}

/* Closing the device with live PDs and MRs frees them in the kernel. */
TEST(close_device_with_live_objects)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	static char buf[8192] __attribute__((aligned(4096)));
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	long pin = sv_vm_pin_kb();

	ASSERT_NE(NULL, list);
	ASSERT_NE(NULL, list[0]);
	ctx = ibv_open_device(list[0]);
	ASSERT_NE(NULL, ctx);
	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	ASSERT_NE(NULL, ibv_reg_mr(pd, buf, sizeof(buf),
				   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(1, sv_obj_count("mr"));
	EXPECT_EQ(pin + 8, sv_vm_pin_kb());
	EXPECT_EQ(0, ibv_close_device(ctx));
	EXPECT_EQ(0, sv_obj_count("mr"));
	EXPECT_EQ(0, sv_obj_count("pd"));
	EXPECT_EQ(pin, sv_vm_pin_kb());
	ibv_free_device_list(list);
}

/*
 * ... and with live QPs, an SRQ and a WQ, whose rings the library maps
 * from the device file: it unmaps them at close, else the mappings would
 * hold the file, every object and the pinned pages until exit.
 */
TEST(close_device_with_live_rings)
{
	static const char * const types[] = { "qp", "srq", "wq", "cq", "mr",
					       "pd" };
	struct ibv_device **list = ibv_get_device_list(NULL);
	static char buf[8192] __attribute__((aligned(4096)));
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4,
						  .max_sge = 1 } };
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = 4,
				       .max_sge = 1 };
	long pin = sv_vm_pin_kb(), n0[6];
	struct ibv_context *ctx;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned int i;

	ASSERT_NE(NULL, list);
	ASSERT_NE(NULL, list[0]);
	for (i = 0; i < 6; i++)
		n0[i] = sv_obj_count(types[i]);
	if (n0[0] < 0)
		SKIP(return, "no debugfs object counters");
	ctx = ibv_open_device(list[0]);
	ASSERT_NE(NULL, ctx);
	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	qa.send_cq = qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qp = ibv_create_qp(pd, &qa);
	ASSERT_NE(NULL, qp);
	qa.qp_type = IBV_QPT_UD;
	ASSERT_NE(NULL, ibv_create_qp(pd, &qa));
	srq = ibv_create_srq(pd, &sa);
	ASSERT_NE(NULL, srq);
	qa.qp_type = IBV_QPT_RC;
	qa.srq = srq;
	ASSERT_NE(NULL, ibv_create_qp(pd, &qa));
	wa.pd = pd;
	wa.cq = cq;
	ASSERT_NE(NULL, ibv_create_wq(ctx, &wa));
	EXPECT_EQ(n0[0] + 3, sv_obj_count("qp"));
	EXPECT_EQ(n0[2] + 1, sv_obj_count("wq"));
	/* The MR's pages and the rings (charged as pinned memory). */
	EXPECT_LT(pin + 8, sv_vm_pin_kb());
	EXPECT_EQ(0, ibv_close_device(ctx));
	for (i = 0; i < 6; i++)
		EXPECT_EQ(n0[i], sv_obj_count(types[i])) TH_LOG("%s", types[i]);
	EXPECT_EQ(pin, sv_vm_pin_kb());
	ibv_free_device_list(list);
}

TEST_HARNESS_MAIN
