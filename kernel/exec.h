/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softverbs data path internals shared by exec.c, which executes a send
 * WQE, and tm.c, which matches tagged messages on a TM SRQ: the request
 * being executed, the receive WQE it takes, and the copy helpers.
 */
#ifndef SV_EXEC_H
#define SV_EXEC_H

#include "sv.h"

/* The work completion opcodes (enum ibv_wc_opcode). */
#define SV_WC_SEND		0
#define SV_WC_RDMA_WRITE	1
#define SV_WC_RDMA_READ		2
#define SV_WC_COMP_SWAP		3
#define SV_WC_FETCH_ADD		4
#define SV_WC_RECV		128
#define SV_WC_RECV_RDMA_WITH_IMM 129
#define SV_WC_TM_ADD		130
#define SV_WC_TM_DEL		131
#define SV_WC_TM_SYNC		132
#define SV_WC_TM_RECV		133
#define SV_WC_TM_NO_TAG		134

/* Statuses (enum ibv_wc_status). */
#define SV_WC_SUCCESS		0
#define SV_WC_LOC_LEN_ERR	1
#define SV_WC_LOC_QP_OP_ERR	2
#define SV_WC_LOC_PROT_ERR	4
#define SV_WC_WR_FLUSH_ERR	5
#define SV_WC_REM_INV_REQ_ERR	9
#define SV_WC_REM_ACCESS_ERR	10
#define SV_WC_REM_OP_ERR	11
#define SV_WC_RETRY_EXC_ERR	12
#define SV_WC_RNR_RETRY_EXC_ERR	13
#define SV_WC_GENERAL_ERR	21
#define SV_WC_TM_ERR		22
#define SV_WC_TM_RNDV_INCOMPLETE 23

/* wc_flags (enum ibv_wc_flags) */
#define SV_WC_F_GRH		0x1
#define SV_WC_F_WITH_IMM	0x2
#define SV_WC_F_WITH_INV	0x8
#define SV_WC_F_TM_SYNC_REQ	0x10
#define SV_WC_F_TM_MATCH	0x20
#define SV_WC_F_TM_DATA_VALID	0x40

/* The GRH a UD receive buffer begins with */
#define SV_GRH_LEN		40

/* A receive WQE taken from a QP's RQ or SRQ, copied out. */
struct sv_rwqe {
	struct sv_recv_wqe hdr;
	struct sv_sge sge[SV_MAX_SGE];
};

struct sv_req {
	struct sv_qp *qp;
	struct sv_send_wqe *w;
	struct sv_sg *lsg;		/* local SGEs, or NULL for inline */
	const void *inl;		/* inline data */
	u64 len;			/* message length */
	struct sv_qp *dqp;
	/* the PD, and the SRQ an XRC request names, at the responder */
	struct sv_pd *dpd;
	struct sv_srq *xsrq;
	struct sv_sg *rsg;		/* scratch for the responder's list */
	struct sv_sg *tsg;		/* scratch for a tagged buffer (tm.c) */
	struct sv_rwqe *rw;		/* scratch for a receive WQE */
	u32 src_qpn;			/* the CQE's src_qp if not qp's (tm.c) */
	u8 mgid[16];			/* the destination GID (AH or QP's) */
	struct sv_ah_attr av;		/* UD: the AH's address vector */
	bool wire;			/* no device here holds mgid */
};

/* What a TM SRQ makes of a message (tm.c) */
enum sv_tm_kind {
	SV_TM_PLAIN,		/* no tag matching: an SRQ WQE, IBV_WC_RECV */
	SV_TM_NO_TAG,		/* an SRQ WQE, IBV_WC_TM_NO_TAG */
	SV_TM_UNEXPECTED,	/* an SRQ WQE, IBV_WC_TM_RECV, counted */
	SV_TM_DONE,		/* matched: done, the result says how */
	SV_TM_FIN,		/* matched rendezvous: done, FIN to send */
};

/* One piece of what a received frame writes: sv_recv_chunks() */
struct sv_chunk {
	const void *p;
	u32 len;
};

int sv_atomic_word(struct sv_sg *rsg, u32 opcode, u64 compare_add, u64 swap,
		   u64 *old);
u64 sv_timeout_ns(u8 timeout);
u64 sv_rnr_ns(u8 timer);
int sv_rq_take(struct sv_qp *qp, struct sv_rwqe *rw);
bool sv_recv_chunks(struct sv_qp *qp, const struct sv_chunk *c, u32 n,
		    struct sv_cqe *cqe, bool solicited,
		    const struct sv_cq_stamp *ts, void *buf);
int sv_sg_copy_at(struct sv_sg *dst, u64 doff, struct sv_sg *src, u64 soff,
		  u64 len);
int sv_sg_write(struct sv_sg *dst, u64 doff, const void *buf, u64 len);
int sv_sg_remote(struct sv_sg *sg, struct sv_qp *dqp, struct sv_pd *pd,
		 u32 access, u32 rkey, u64 addr, u64 len);
enum sv_exec_result sv_req_local(struct sv_req *r, void *buf, u32 *status);
void sv_req_release(struct sv_req *r);
int sv_req_read(struct sv_req *r, u64 off, void *buf, u64 len);
int sv_req_payload_at(struct sv_req *r, u64 soff, struct sv_sg *dst,
		      u64 len);
void sv_dp_push_cqe(struct sv_uobj *cq, struct sv_cqe *cqe, bool solicited);
void sv_recv_cqe_imm(struct sv_cqe *cqe, const struct sv_send_wqe *w);
bool sv_req_inv(struct sv_req *r);
u32 sv_recv_fail_status(u32 cqe_status);
void sv_responder_err(struct sv_qp *dqp, bool access);
enum sv_exec_result sv_deliver(struct sv_req *r, u32 *status);

/* A FLUSH WR's placement types (swap's low byte), selectivity (next). */
static inline u32 sv_flush_type(const struct sv_send_wqe *w)
{
	return w->swap & 0xff;
}

static inline u32 sv_flush_level(const struct sv_send_wqe *w)
{
	return (w->swap >> 8) & 0xff;
}

/* tm.c */
enum sv_tm_kind sv_tm_recv(struct sv_req *r, struct sv_srq *srq,
			   enum sv_exec_result *res, u32 *status);
void sv_tm_unexpected(struct sv_srq *srq, struct sv_cqe *cqe);
enum sv_exec_result sv_tm_fin(struct sv_req *r, u32 *status);
enum sv_exec_result sv_tm_fin_resume(struct sv_qp *qp, struct sv_sg *rsg,
				     struct sv_rwqe *rw, u32 *status);

#endif
