/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A QP's send ring written directly, as a library would (or would not):
 * for the tests of what the kernel makes of a ring's content and of the
 * doorbells that name it.
 */
#ifndef SV_RING_TEST_H
#define SV_RING_TEST_H

#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "softverbs-abi.h"

/*
 * The QP's ring, written directly (what the library would refuse). The
 * library's file posts with hints: a post names its QP as the library's
 * do (uapi: SV_MAP_DOORBELL_HINTS), in the doorbell mapping.
 */
struct ring {
	void *map;
	size_t len;
	struct sv_wq_ring *r;
	char *wqes;
	uint32_t prod;
	int fd;
	uint32_t slot;
	struct sv_doorbell *db;
	size_t db_len;
};

static inline int ring_map(struct ibv_qp *qp, struct ring *rg)
{
	struct sv_map_wq m = { .size = sizeof(m), .type = SV_WQ_QP,
			       .handle = qp->handle };
	struct sv_map_doorbell d = { .size = sizeof(d) };

	rg->fd = qp->context->cmd_fd;
	if (ioctl(rg->fd, SV_IOC_MAP_WQ, &m))
		return -1;
	rg->len = m.sq_len;
	rg->map = mmap(NULL, m.sq_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       rg->fd, m.sq_offset);
	if (rg->map == MAP_FAILED)
		return -1;
	rg->r = rg->map;
	rg->wqes = (char *)rg->map + rg->r->wqe_offset;
	rg->prod = __atomic_load_n(&rg->r->prod, __ATOMIC_ACQUIRE);
	rg->slot = m.db_slot;
	rg->db = NULL;
	if (ioctl(rg->fd, SV_IOC_MAP_DOORBELL, &d))
		return -1;
	if (!(d.flags & SV_MAP_DOORBELL_HINTS))
		return 0;
	rg->db_len = d.len;
	rg->db = mmap(NULL, d.len, PROT_READ | PROT_WRITE, MAP_SHARED, rg->fd,
		      d.offset);
	return rg->db == MAP_FAILED ? -1 : 0;
}

static inline void ring_unmap(struct ring *rg)
{
	munmap(rg->map, rg->len);
	if (rg->db)
		munmap(rg->db, rg->db_len);
}

static inline struct sv_send_wqe *ring_slot(struct ring *rg)
{
	struct sv_send_wqe *w = (struct sv_send_wqe *)
		(rg->wqes + (size_t)(rg->prod & (rg->r->entries - 1)) *
			    rg->r->wqe_size);

	memset(w, 0, rg->r->wqe_size);
	return w;
}

/* The WQE in ring_slot() is posted: prod moves, nothing names it. */
static inline void ring_write(struct ring *rg)
{
	rg->prod++;
	__atomic_store_n(&rg->r->prod, rg->prod, __ATOMIC_RELEASE);
}

/* ... then its QP's hint bits, then a plain ring, as posts that ring. */
static inline void ring_post(struct ring *rg)
{
	struct sv_ring_doorbell d = { .size = sizeof(d) };
	__u64 *hint;

	ring_write(rg);
	if (rg->db && rg->slot < SV_DB_SLOTS) {
		hint = (__u64 *)((char *)rg->db + SV_DB_HINT_OFFSET);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		__atomic_fetch_or(&hint[rg->slot / 64], 1ULL << (rg->slot % 64),
				  __ATOMIC_SEQ_CST);
		__atomic_fetch_or(&rg->db->hint_sum[rg->slot / 4096],
				  1ULL << (rg->slot / 64 % 64),
				  __ATOMIC_SEQ_CST);
	}
	ioctl(rg->fd, SV_IOC_DOORBELL, &d);
}

/* A ring that names the QP in slot (SV_RING_QP) on fd: its result. */
static inline int ring_qp(int fd, uint32_t slot)
{
	struct sv_ring_doorbell d = {
		.size = sizeof(d), .flags = SV_RING_QP, .qp_slot = slot,
	};

	return ioctl(fd, SV_IOC_DOORBELL, &d);
}

#endif
