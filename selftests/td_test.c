// SPDX-License-Identifier: GPL-2.0
/*
 * Thread domains and parent domains (ibv_alloc_td(3),
 * ibv_alloc_parent_domain(3)): a parent domain stands wherever its PD
 * does; QPs and CQs made in one with a thread domain run without locks.
 *
 *   - the errnos of bad attributes; a PD, TD or parent domain in use is
 *     EBUSY to free;
 *   - traffic between QPs of a parent domain with a thread domain, on CQs
 *     made in it, data verified; MRs registered in it;
 *   - the allocators: asked for each QP's and CQ's rings with our resource
 *     types and the ring's size; IBV_ALLOCATOR_USE_DEFAULT works, NULL is
 *     ENOMEM, a misaligned buffer EINVAL (handed back); the application's
 *     own page-aligned memory becomes the rings: traffic through them,
 *     the kernel's ring indexes seen there, the buffers handed back on
 *     destroy and when a resize moves a CQ's ring back to module memory.
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"

#include "sv_harness.h"
#include "sv_dp_test.h"

/* user/lib/sv_verbs.h's resource types for the allocator */
#define SV_RES_TYPE_QP	((uint64_t)0x5356 << 32 | 1)
#define SV_RES_TYPE_CQ	((uint64_t)0x5356 << 32 | 2)
#define SV_RES_TYPE_SRQ	((uint64_t)0x5356 << 32 | 3)
#define SV_RES_TYPE_RWQ	((uint64_t)0x5356 << 32 | 4)

FIXTURE(td) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
};

FIXTURE_SETUP(td)
{
	self->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, self->list);
	self->ctx = sv_open_named(self->list, "softverbs0");
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &self->gid));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
}

FIXTURE_TEARDOWN(td)
{
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
	ibv_free_device_list(self->list);
}

/* What the allocator saw, and what it answers. */
struct alloc_log {
	int calls, frees;
	uint64_t types[8];
	size_t sizes[8];
	void *answer;		/* IBV_ALLOCATOR_USE_DEFAULT, NULL, or "own" */
	void *given, *freed;
};

static void *t_alloc(struct ibv_pd *pd, void *ctx, size_t size,
		     size_t align, uint64_t type)
{
	struct alloc_log *l = ctx;

	(void)pd;
	(void)align;
	if (l->calls < 8) {
		l->types[l->calls] = type;
		l->sizes[l->calls] = size;
	}
	l->calls++;
	if (l->answer == (void *)1) {		/* as asked: aligned */
		l->given = aligned_alloc(align, size);
		return l->given;
	}
	if (l->answer == (void *)2) {		/* misaligned */
		l->given = malloc(size + 64);
		return l->given ? (char *)l->given + 8 : NULL;
	}
	return l->answer;
}

static void t_free(struct ibv_pd *pd, void *ctx, void *ptr, uint64_t type)
{
	struct alloc_log *l = ctx;

	(void)pd;
	(void)type;
	l->frees++;
	l->freed = ptr;
	free(l->answer == (void *)2 ? (char *)ptr - 8 : ptr);
}

static struct ibv_cq *pd_cq(struct ibv_context *ctx, struct ibv_pd *parent)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 32, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = parent,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &ca);

	return cq ? ibv_cq_ex_to_cq(cq) : NULL;
}

static struct ibv_qp *pd_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

/* A parent domain of pd whose allocator (t_alloc, t_free) logs to log. */
static struct ibv_pd *alloc_parent(struct ibv_context *ctx, struct ibv_pd *pd,
				   struct alloc_log *log)
{
	struct ibv_parent_domain_init_attr pa = {
		.pd = pd,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = t_alloc, .free = t_free, .pd_context = log,
	};

	return ibv_alloc_parent_domain(ctx, &pa);
}

/* a and b connected to each other: RC, local writes only; 0 or errno. */
static int connect_pair(struct ibv_qp *a, struct ibv_qp *b,
			const union ibv_gid *gid)
{
	return qp_init(a, IBV_ACCESS_LOCAL_WRITE) ?:
	       qp_init(b, IBV_ACCESS_LOCAL_WRITE) ?:
	       qp_rtr_rts(a, b->qp_num, gid, 7, 1, 0) ?:
	       qp_rtr_rts(b, a->qp_num, gid, 7, 1, 0);
}

/*
 * Messages first..last-1 of 256 bytes from a to b, each into a receive
 * posted on b (or on srq), both completions on cq successful and the
 * data in place: 0, or the number of the message that failed plus one.
 */
static int exchange(struct ibv_qp *a, struct ibv_qp *b, struct ibv_srq *srq,
		    struct ibv_cq *cq, struct ibv_mr *mr, int first, int last)
{
	char *buf = mr->addr;
	struct ibv_sge sg = { (uintptr_t)buf + 4096, 256, mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sg, .num_sge = 1 }, *bad;
	struct ibv_wc wc;
	int i;

	for (i = first; i < last; i++) {
		sv_fill(buf, 256, i);
		memset(buf + 4096, 0, 256);
		wr.wr_id = 100 + i;
		if ((srq ? ibv_post_srq_recv(srq, &wr, &bad) :
			   ibv_post_recv(b, &wr, &bad)) ||
		    post_send(a, IBV_WR_SEND, mr->lkey, buf, 256, i,
			      IBV_SEND_SIGNALED, 0, 0) ||
		    poll1(cq, &wc) != 1 || wc.status ||
		    poll1(cq, &wc) != 1 || wc.status ||
		    memcmp(buf, buf + 4096, 256))
			return i + 1;
	}
	return 0;
}

TEST_F(td, bad_attributes)
{
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	struct ibv_parent_domain_init_attr pa = {};
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = self->pd,
	};
	struct ibv_pd *par;
	struct ibv_td *td;

	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_td(self->ctx, &ta));
	EXPECT_EQ(EINVAL, errno);
	ta.comp_mask = 0;
	td = ibv_alloc_td(self->ctx, &ta);
	ASSERT_NE(NULL, td);
	EXPECT_EQ(self->ctx, td->context);
	/* No PD; an unknown bit; allocators without functions. */
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(self->ctx, &pa));
	EXPECT_EQ(EINVAL, errno);
	pa.pd = self->pd;
	pa.comp_mask = 1 << 2;
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(self->ctx, &pa));
	EXPECT_EQ(EINVAL, errno);
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(self->ctx, &pa));
	EXPECT_EQ(EINVAL, errno);
	pa.comp_mask = 0;
	pa.td = td;
	par = ibv_alloc_parent_domain(self->ctx, &pa);
	ASSERT_NE(NULL, par);
	EXPECT_EQ(self->pd->handle, par->handle);
	/* Not over another parent domain. */
	pa.pd = par;
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(self->ctx, &pa));
	EXPECT_EQ(EINVAL, errno);
	/* A CQ's parent_domain must be one. */
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &ca));
	EXPECT_EQ(EINVAL, errno);
	/* In use: EBUSY. */
	EXPECT_EQ(EBUSY, ibv_dealloc_td(td));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_dealloc_pd(par));
	EXPECT_EQ(0, ibv_dealloc_td(td));
}

TEST_F(td, traffic_in_a_thread_domain)
{
	struct ibv_td_init_attr ta = {};
	struct ibv_td *td = ibv_alloc_td(self->ctx, &ta);
	struct ibv_parent_domain_init_attr pa = { .pd = self->pd, .td = td };
	char *buf = aligned_alloc(4096, 8192);
	struct ibv_pd *par;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;

	ASSERT_NE(NULL, td);
	ASSERT_NE(NULL, buf);
	par = ibv_alloc_parent_domain(self->ctx, &pa);
	ASSERT_NE(NULL, par);
	cq = pd_cq(self->ctx, par);
	ASSERT_NE(NULL, cq);
	a = pd_qp(par, cq);
	b = pd_qp(par, cq);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(par, a->pd);
	mr = ibv_reg_mr(par, buf, 8192, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, connect_pair(a, b, &self->gid));
	ASSERT_EQ(0, exchange(a, b, NULL, cq, mr, 0, 40));
	/* The parent domain is busy while its QPs and CQ live. */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(par));
	EXPECT_EQ(0, ibv_destroy_qp(a));
	EXPECT_EQ(0, ibv_destroy_qp(b));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(par));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dealloc_pd(par));
	EXPECT_EQ(0, ibv_dealloc_td(td));
	free(buf);
}

TEST_F(td, allocators)
{
	struct alloc_log log = { .answer = IBV_ALLOCATOR_USE_DEFAULT };
	struct ibv_pd *par = alloc_parent(self->ctx, self->pd, &log);
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	ASSERT_NE(NULL, par);
	/* USE_DEFAULT: the module's memory. */
	cq = pd_cq(self->ctx, par);
	ASSERT_NE(NULL, cq);
	qp = pd_qp(par, cq);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(2, log.calls);
	EXPECT_EQ(SV_RES_TYPE_CQ, log.types[0]);
	EXPECT_EQ(SV_RES_TYPE_QP, log.types[1]);
	EXPECT_LT(0, log.sizes[1]);
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	/* NULL: no memory. */
	log.answer = NULL;
	errno = 0;
	EXPECT_EQ(NULL, pd_qp(par, cq));
	EXPECT_EQ(ENOMEM, errno);
	/* Not page aligned: EINVAL, handed back. */
	log.answer = (void *)2;
	EXPECT_EQ(NULL, pd_qp(par, cq));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(1, log.frees);
	EXPECT_EQ((char *)log.given + 8, log.freed);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dealloc_pd(par));
}

/*
 * The application's own memory as the rings: two QPs and a CQ of a
 * parent domain whose allocator gives page-aligned buffers. The data
 * goes through, the ring indexes the kernel and the library write are in
 * those buffers, and each goes back to free() on destroy; a CQ resize
 * moves the ring back to module memory and hands its buffer back.
 */
TEST_F(td, rings_in_application_memory)
{
	struct alloc_log log = { .answer = (void *)1 };
	struct ibv_pd *par = alloc_parent(self->ctx, self->pd, &log);
	char *buf = aligned_alloc(4096, 8192);
	struct sv_cq_ring *cring;
	struct sv_wq_ring *aring;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	struct ibv_wc wc;

	ASSERT_NE(NULL, par);
	ASSERT_NE(NULL, buf);
	cq = pd_cq(self->ctx, par);
	ASSERT_NE(NULL, cq) TH_LOG("%s", strerror(errno));
	cring = log.given;
	ASSERT_EQ(SV_RES_TYPE_CQ, log.types[0]);
	EXPECT_EQ(0, log.sizes[0] % 4096);
	EXPECT_LE(32, cring->entries);	/* the kernel's header, here */
	a = pd_qp(par, cq);
	ASSERT_NE(NULL, a) TH_LOG("%s", strerror(errno));
	aring = log.given;		/* the send ring's header first */
	b = pd_qp(par, cq);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(3, log.calls);
	EXPECT_EQ(SV_RES_TYPE_QP, log.types[1]);
	EXPECT_EQ(0, log.frees);
	mr = ibv_reg_mr(par, buf, 8192, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, connect_pair(a, b, &self->gid));
	ASSERT_EQ(0, exchange(a, b, NULL, cq, mr, 0, 40));
	/* 40 sends posted there, 80 completions pushed there */
	EXPECT_EQ(40, __atomic_load_n(&aring->prod, __ATOMIC_ACQUIRE));
	EXPECT_EQ(40, __atomic_load_n(&aring->cons, __ATOMIC_ACQUIRE));
	EXPECT_EQ(80, __atomic_load_n(&cring->prod, __ATOMIC_ACQUIRE));
	EXPECT_EQ(0, ibv_destroy_qp(a));
	EXPECT_EQ(1, log.frees);
	EXPECT_EQ((void *)aring, log.freed);
	EXPECT_EQ(0, ibv_destroy_qp(b));
	EXPECT_EQ(2, log.frees);
	/* A resize: module memory again, the buffer back; still works. */
	EXPECT_EQ(0, ibv_resize_cq(cq, 64));
	EXPECT_EQ(3, log.frees);
	EXPECT_EQ((void *)cring, log.freed);
	EXPECT_EQ(0, ibv_poll_cq(cq, 1, &wc));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(3, log.frees);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dealloc_pd(par));
	free(buf);
}

/*
 * An SRQ's ring in the allocator's buffer: receives posted there land
 * data, the ring's index is seen there, a resize gives the buffer back
 * and the SRQ goes on in module memory; a QP on it keeps it from moving.
 */
TEST_F(td, srq_ring_in_application_memory)
{
	struct alloc_log log = { .answer = IBV_ALLOCATOR_USE_DEFAULT };
	struct ibv_pd *par = alloc_parent(self->ctx, self->pd, &log);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16,
						  .max_sge = 1 } };
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
	};
	struct ibv_srq_attr ra = { .max_wr = 64 };
	char *buf = aligned_alloc(4096, 8192);
	struct sv_wq_ring *ring;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;

	ASSERT_NE(NULL, par);
	ASSERT_NE(NULL, buf);
	cq = pd_cq(self->ctx, par);
	ASSERT_NE(NULL, cq);
	log.answer = (void *)1;
	srq = ibv_create_srq(par, &sa);
	ASSERT_NE(NULL, srq) TH_LOG("%s", strerror(errno));
	ring = log.given;
	EXPECT_EQ(SV_RES_TYPE_SRQ, log.types[1]);
	log.answer = IBV_ALLOCATOR_USE_DEFAULT;
	ia.send_cq = ia.recv_cq = cq;
	a = ibv_create_qp(par, &ia);
	ia.srq = srq;
	b = ibv_create_qp(par, &ia);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	mr = ibv_reg_mr(par, buf, 8192, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, connect_pair(a, b, &self->gid));
	ASSERT_EQ(0, exchange(a, b, srq, cq, mr, 0, 10));
	EXPECT_EQ(10, __atomic_load_n(&ring->prod, __ATOMIC_ACQUIRE));
	/* Module memory again, the buffer back to free() */
	ASSERT_EQ(0, ibv_modify_srq(srq, &ra, IBV_SRQ_MAX_WR));
	EXPECT_EQ(1, log.frees);
	EXPECT_EQ((void *)ring, log.freed);
	ASSERT_EQ(0, exchange(a, b, srq, cq, mr, 10, 20));
	EXPECT_EQ(0, ibv_destroy_qp(a));
	EXPECT_EQ(0, ibv_destroy_qp(b));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(1, log.frees);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dealloc_pd(par));
	free(buf);
}

/* A WQ's ring (ibv_create_wq(3)) in the allocator's buffer too. */
TEST_F(td, wq_ring_in_application_memory)
{
	struct alloc_log log = { .answer = (void *)1 };
	struct ibv_pd *par = alloc_parent(self->ctx, self->pd, &log);
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = 8,
				       .max_sge = 1, .pd = par, .cq = cq };
	struct ibv_sge sg = { 0, 64, 0 };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	struct sv_wq_ring *ring;
	struct ibv_wq *wq;

	ASSERT_NE(NULL, par);
	ASSERT_NE(NULL, cq);
	wq = ibv_create_wq(self->ctx, &wa);
	ASSERT_NE(NULL, wq) TH_LOG("%s", strerror(errno));
	ring = log.given;
	EXPECT_EQ(1, log.calls);
	EXPECT_EQ(SV_RES_TYPE_RWQ, log.types[0]);
	EXPECT_LE(8, ring->entries);	/* the kernel's header, here */
	ASSERT_EQ(0, ibv_post_wq_recv(wq, &wr, &bad));
	EXPECT_EQ(1, __atomic_load_n(&ring->prod, __ATOMIC_ACQUIRE));
	EXPECT_EQ(0, ibv_destroy_wq(wq));
	EXPECT_EQ(1, log.frees);
	EXPECT_EQ((void *)ring, log.freed);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dealloc_pd(par));
}

/* SV_IOC_MOVE_RING's errnos, through the context's command file. */
TEST_F(td, move_ring_errors)
{
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 8, NULL, NULL, 0);
	struct sv_move_ring m = { .size = sizeof(m), .type = SV_RING_CQ };
	char *p = aligned_alloc(4096, 65536);
	struct ibv_qp *qp;

	ASSERT_NE(NULL, cq);
	ASSERT_NE(NULL, p);
	memset(p, 0, 65536);
	m.handle = cq->handle;
	m.addr = (uintptr_t)p;
	m.len = 4096;		/* smaller than the ring's mapping */
	EXPECT_EQ(-1, ioctl(self->ctx->cmd_fd, SV_IOC_MOVE_RING, &m));
	EXPECT_EQ(EINVAL, errno);
	m.len = 65536;
	m.addr = (uintptr_t)p + 8;
	EXPECT_EQ(-1, ioctl(self->ctx->cmd_fd, SV_IOC_MOVE_RING, &m));
	EXPECT_EQ(EINVAL, errno);
	m.addr = 4096;		/* not mapped */
	EXPECT_EQ(-1, ioctl(self->ctx->cmd_fd, SV_IOC_MOVE_RING, &m));
	EXPECT_EQ(EFAULT, errno);
	m.addr = (uintptr_t)p;
	m.type = 7;
	EXPECT_EQ(-1, ioctl(self->ctx->cmd_fd, SV_IOC_MOVE_RING, &m));
	EXPECT_EQ(EINVAL, errno);
	m.type = SV_RING_CQ;
	/* In use by a QP: EBUSY; a QP not in RESET: EINVAL */
	qp = pd_qp(self->pd, cq);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(-1, ioctl(self->ctx->cmd_fd, SV_IOC_MOVE_RING, &m));
	EXPECT_EQ(EBUSY, errno);
	ASSERT_EQ(0, qp_init(qp, IBV_ACCESS_LOCAL_WRITE));
	m.type = SV_WQ_QP;
	m.handle = qp->handle;
	EXPECT_EQ(-1, ioctl(self->ctx->cmd_fd, SV_IOC_MOVE_RING, &m));
	EXPECT_EQ(EINVAL, errno);
	/* Back in RESET, but it has been out of it: still EINVAL */
	ASSERT_EQ(0, ibv_modify_qp(qp, &(struct ibv_qp_attr){
					 .qp_state = IBV_QPS_RESET },
				   IBV_QP_STATE));
	EXPECT_EQ(-1, ioctl(self->ctx->cmd_fd, SV_IOC_MOVE_RING, &m));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	/*
	 * Once: unused again, the CQ's ring moves (this library's mapping
	 * is stale then: only destroy follows); a second move is EINVAL.
	 */
	m.type = SV_RING_CQ;
	m.handle = cq->handle;
	EXPECT_EQ(0, ioctl(self->ctx->cmd_fd, SV_IOC_MOVE_RING, &m));
	EXPECT_EQ(-1, ioctl(self->ctx->cmd_fd, SV_IOC_MOVE_RING, &m));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	free(p);
}

TEST_HARNESS_MAIN
