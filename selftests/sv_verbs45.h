/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdma-core 45's names for RDMA FLUSH (IBA 1.5), absent from Debian's
 * rdma-core 44 headers, so that a test calls ibv_wr_flush() as a program
 * built with rdma-core 45 calls it: through the builder that follows
 * wr_atomic_write in struct ibv_qp_ex (rdma-core 44's headers end there).
 * And the device capability bits of rdma-core 45's IBV_DEVICE_*.
 */
#ifndef SV_VERBS45_H
#define SV_VERBS45_H

#include <infiniband/verbs.h>

#define FLUSH_GLOBAL		1	/* IBV_FLUSH_GLOBAL */
#define FLUSH_PERSISTENT	2	/* IBV_FLUSH_PERSISTENT */
#define FLUSH_RANGE		0	/* IBV_FLUSH_RANGE */
#define FLUSH_MR		1	/* IBV_FLUSH_MR */
#define ACCESS_FLUSH_GLOBAL	(1 << 8)
#define ACCESS_FLUSH_PERSISTENT	(1 << 9)
#define QP_EX_WITH_FLUSH	(1ULL << 11)
#define WC_FLUSH		8	/* IBV_WC_FLUSH */
#define DEVICE_FLUSH_GLOBAL	(1ULL << 38)
#define DEVICE_FLUSH_PERSISTENT	(1ULL << 39)
#define DEVICE_ATOMIC_WRITE	(1ULL << 40)

struct qp_ex45 {
	struct ibv_qp_ex x;
	void (*wr_flush)(struct ibv_qp_ex *qp, uint32_t rkey,
			 uint64_t remote_addr, size_t len, uint8_t type,
			 uint8_t level);
};

/* What rdma-core 45's inline ibv_wr_flush() does */
static inline void wr_flush(struct ibv_qp_ex *qp, uint32_t rkey,
			    uint64_t addr, size_t len, uint8_t type,
			    uint8_t level)
{
	((struct qp_ex45 *)qp)->wr_flush(qp, rkey, addr, len, type, level);
}

/* One signaled FLUSH, wr_id, posted with the builders of qx: 0 or -1 */
static inline int post_flush(struct ibv_qp_ex *qx, uint64_t wr_id,
			     uint32_t rkey, uint64_t addr, size_t len,
			     uint8_t type, uint8_t level)
{
	ibv_wr_start(qx);
	qx->wr_id = wr_id;
	qx->wr_flags = IBV_SEND_SIGNALED;
	wr_flush(qx, rkey, addr, len, type, level);
	return ibv_wr_complete(qx) ? -1 : 0;
}

#endif
