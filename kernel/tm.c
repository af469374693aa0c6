// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs tag matching: the tagged buffers of a TM SRQ (IBV_SRQT_TM)
 * and the messages that match them, as rdma-core's tag matching
 * document and ibv_post_srq_ops(3) describe and mlx5 does.
 *
 * A TM SRQ keeps a list of tagged buffers in the order they were added
 * (SV_IOC_POST_SRQ_OPS, ADD). A SEND that reaches an RC QP using the SRQ
 * and starts with a TMH (struct ibv_tmh) of opcode EAGER or RNDV takes
 * the first listed buffer whose tag it matches: EAGER places the payload
 * after the TMH there, RNDV reads the data its RVH names from the
 * sender's memory (the RDMA READ of the protocol) and then sends the
 * sender a FIN, the TMH and RVH back with opcode FIN. A message no buffer
 * matches is unexpected: it lands, whole, in one of the SRQ's ordinary
 * WQEs, and counts. NO_TAG messages land there too, uncounted; anything
 * else is an ordinary receive.
 *
 * Software handles unexpected messages and says how many it has handled
 * (unexpected_cnt with IBV_OPS_TM_SYNC). A buffer added while that count
 * is behind the device's may belong to an unexpected message software
 * has not seen yet (MPI's ordering): the device never matches it.
 *
 * Everything here is under the SRQ's ring lock (sv_wq_lock(&srq->rq)),
 * which the senders' engines take to deliver (exec.c). A handle is the
 * buffer's index and a generation, so that a stale one (consumed or
 * deleted) fails with IBV_WC_TM_ERR and never names a newer buffer.
 */
#include <linux/list.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "exec.h"

#define SV_TM_IDX_BITS		10	/* SV_TM_MAX_NUM_TAGS < 1 << this */
#define SV_TM_IDX_MASK		((1U << SV_TM_IDX_BITS) - 1)
/* Unexpected messages software may lag behind before it is asked. */
#define SV_TM_MAX_SYNC_DIFF	0x3fff

/* The TMH's opcodes (enum ibv_tmh_op) */
#define SV_TMH_NO_TAG		0
#define SV_TMH_RNDV		1
#define SV_TMH_FIN		2
#define SV_TMH_EAGER		3

struct sv_tmh {				/* struct ibv_tmh */
	u8 opcode;
	u8 reserved[3];
	__be32 app_ctx;
	__be64 tag;
};

struct sv_rvh {				/* struct ibv_rvh */
	__be64 va;
	__be32 rkey;
	__be32 len;
};

struct sv_tm_tag {
	struct list_head node;		/* in listed (in order) or free */
	u64 tag;
	u64 mask;
	u64 wr_id;
	u32 gen;			/* the handle's upper bits */
	bool listed;
	bool matchable;			/* added in sync */
	u32 num_sge;
	struct sv_sge sge[SV_TM_MAX_SGE];
};

struct sv_tm {
	u32 max_tags;
	u32 max_ops;
	u32 unexp_hw;			/* unexpected messages delivered */
	u32 unexp_sw;			/* ... as software last reported */
	struct list_head listed;
	struct list_head free;		/* least recently used first */
	struct sv_tm_tag tags[];
};

int sv_tm_create(struct sv_srq *srq, u32 max_tags, u32 max_ops)
{
	struct sv_tm *tm;
	u32 i;

	tm = kvzalloc(struct_size(tm, tags, max_tags), GFP_KERNEL_ACCOUNT);
	if (!tm)
		return -ENOMEM;
	tm->max_tags = max_tags;
	tm->max_ops = max_ops;
	INIT_LIST_HEAD(&tm->listed);
	INIT_LIST_HEAD(&tm->free);
	for (i = 0; i < max_tags; i++)
		list_add_tail(&tm->tags[i].node, &tm->free);
	srq->tm = tm;
	return 0;
}

void sv_tm_free(struct sv_srq *srq)
{
	kvfree(srq->tm);
	srq->tm = NULL;
}

static u32 sv_tm_handle(struct sv_tm *tm, struct sv_tm_tag *t)
{
	return (t->gen << SV_TM_IDX_BITS) | (u32)(t - tm->tags);
}

/* Off the list (consumed or deleted): its handle is stale from now on. */
static void sv_tm_unlist(struct sv_tm *tm, struct sv_tm_tag *t)
{
	list_move_tail(&t->node, &tm->free);
	t->listed = false;
	t->gen = (t->gen + 1) & (U32_MAX >> SV_TM_IDX_BITS);
}

/* The first buffer listed in sync whose tag matches, or NULL. */
static struct sv_tm_tag *sv_tm_match(struct sv_tm *tm, u64 tag)
{
	struct sv_tm_tag *t;

	list_for_each_entry(t, &tm->listed, node)
		if (t->matchable && !((t->tag ^ tag) & t->mask))
			return t;
	return NULL;
}

static bool sv_tm_in_sync(const struct sv_tm *tm)
{
	return tm->unexp_sw == tm->unexp_hw;
}

/* One op; 0, or the errno that stops the list. */
static int sv_tm_op(struct sv_srq *srq, struct sv_srq_op *op)
{
	struct sv_tm *tm = srq->tm;
	struct sv_cqe cqe = { .wr_id = op->wr_id };
	struct sv_tm_tag *t;
	u32 idx;

	if (op->reserved || (op->flags & ~(SV_OPS_SIGNALED | SV_OPS_TM_SYNC)))
		return -EINVAL;
	switch (op->opcode) {
	case SV_TM_OP_ADD:
		if (op->num_sge > SV_TM_MAX_SGE)
			return -EINVAL;
		t = list_first_entry_or_null(&tm->free, struct sv_tm_tag,
					     node);
		if (!t)
			return -ENOMEM;
		if (op->flags & SV_OPS_TM_SYNC)
			tm->unexp_sw = op->unexpected_cnt;
		t->tag = op->tag;
		t->mask = op->mask;
		t->wr_id = op->recv_wr_id;
		t->num_sge = op->num_sge;
		memcpy(t->sge, op->sge, sizeof(t->sge));
		t->matchable = sv_tm_in_sync(tm);
		t->listed = true;
		list_move_tail(&t->node, &tm->listed);
		op->handle = sv_tm_handle(tm, t);
		cqe.opcode = SV_WC_TM_ADD;
		break;
	case SV_TM_OP_DEL:
		idx = op->handle & SV_TM_IDX_MASK;
		if (idx >= tm->max_tags)
			return -EINVAL;
		if (op->flags & SV_OPS_TM_SYNC)
			tm->unexp_sw = op->unexpected_cnt;
		t = &tm->tags[idx];
		cqe.opcode = SV_WC_TM_DEL;
		/* Consumed (or deleted) meanwhile: always reported. */
		if (!t->listed || sv_tm_handle(tm, t) != op->handle)
			cqe.status = SV_WC_TM_ERR;
		else
			sv_tm_unlist(tm, t);
		break;
	case SV_TM_OP_SYNC:
		if (op->flags & SV_OPS_TM_SYNC)
			tm->unexp_sw = op->unexpected_cnt;
		cqe.opcode = SV_WC_TM_SYNC;
		break;
	default:
		return -EINVAL;
	}
	if (!sv_tm_in_sync(tm))
		cqe.wc_flags = SV_WC_F_TM_SYNC_REQ;
	if ((op->flags & SV_OPS_SIGNALED) || cqe.status)
		sv_dp_push_cqe(srq->cq, &cqe, false);
	return 0;
}

int sv_post_srq_ops(struct sv_file *f, void *arg)
{
	struct sv_post_srq_ops *p = arg;
	struct sv_srq_op __user *uops = u64_to_user_ptr(p->ops);
	struct sv_srq_op *ops;
	struct sv_srq *srq;
	struct sv_uobj *u;
	int ret = 0, err = 0;
	u32 i;

	if (p->reserved)
		return -EINVAL;
	u = sv_uobj_get(f, p->handle, SV_OBJ_SRQ);
	if (IS_ERR(u))
		return PTR_ERR(u);
	srq = container_of(u, struct sv_srq, uobj);
	if (!srq->tm || !p->count || p->count > srq->tm->max_ops) {
		ret = -EINVAL;
		goto out_put;
	}
	/* Copied in whole: nothing faults under the lock senders take. */
	ops = kvmalloc_array(p->count, sizeof(*ops), GFP_KERNEL_ACCOUNT);
	if (!ops) {
		ret = -ENOMEM;
		goto out_put;
	}
	if (copy_from_user(ops, uops, array_size(p->count, sizeof(*ops)))) {
		ret = -EFAULT;
		goto out_free;
	}
	sv_wq_lock(&srq->rq);
	for (i = 0; i < p->count && !err; i++)
		err = sv_tm_op(srq, &ops[i]);
	sv_wq_unlock(&srq->rq);
	p->done = err ? i - 1 : i;
	p->error = -err;
	for (i = 0; i < p->done; i++)
		if (ops[i].opcode == SV_TM_OP_ADD &&
		    put_user(ops[i].handle, &uops[i].handle))
			ret = -EFAULT;
out_free:
	kvfree(ops);
out_put:
	sv_uobj_put(u);
	return ret;
}

/*
 * An unexpected message took one of the SRQ's WQEs (cqe, not pushed
 * yet): counted; software far behind is asked to catch up.
 */
void sv_tm_unexpected(struct sv_srq *srq, struct sv_cqe *cqe)
{
	struct sv_tm *tm = srq->tm;

	tm->unexp_hw++;
	if (tm->unexp_hw - tm->unexp_sw > SV_TM_MAX_SYNC_DIFF)
		cqe->wc_flags |= SV_WC_F_TM_SYNC_REQ;
}

/*
 * The tagged buffer t took a message it could not hold, or hit a bad
 * key or a lost page: as for an ordinary receive WQE, the responder goes
 * to ERR and the sender hears REM_INV_REQ_ERR (a length) or REM_OP_ERR.
 */
static enum sv_exec_result sv_tm_fail(struct sv_req *r, struct sv_srq *srq,
				      struct sv_cqe *cqe, u32 *status)
{
	sv_responder_err(r->dqp, false);
	sv_dp_push_cqe(srq->cq, cqe, true);
	*status = sv_recv_fail_status(cqe->status);
	return SV_EXEC_FATAL;
}

/* An EAGER message into the tagged buffer r->tsg holds. */
static enum sv_exec_result sv_tm_eager(struct sv_req *r, struct sv_srq *srq,
				       struct sv_tm_tag *t,
				       struct sv_cqe *cqe, u32 *status)
{
	u64 len = r->len - sizeof(struct sv_tmh);
	int ret;

	if (len > r->tsg->len) {
		ret = -ERANGE;
	} else {
		ret = sv_req_payload_at(r, sizeof(struct sv_tmh), r->tsg,
					len);
		/* The sender's own page (ODP): its error, the buffer kept. */
		if (ret == SV_ECOPY_SRC) {
			*status = SV_WC_LOC_PROT_ERR;
			return SV_EXEC_FATAL;
		}
	}
	sv_tm_unlist(srq->tm, t);
	if (ret) {
		cqe->status = ret == -EFAULT ? SV_WC_LOC_PROT_ERR :
					       SV_WC_LOC_LEN_ERR;
		return sv_tm_fail(r, srq, cqe, status);
	}
	if (!sv_req_inv(r)) {
		cqe->status = SV_WC_REM_INV_REQ_ERR;
		return sv_tm_fail(r, srq, cqe, status);
	}
	cqe->byte_len = len;
	cqe->wc_flags |= SV_WC_F_TM_DATA_VALID;
	sv_dp_push_cqe(srq->cq, cqe,
		       !!(r->w->send_flags & SV_SEND_SOLICITED));
	return SV_EXEC_DONE;
}

/*
 * A rendezvous request into the tagged buffer r->tsg holds: matched (a
 * first completion), the data read from the sender through the RVH, then
 * a second completion, and the FIN the caller sends. A buffer too small
 * takes the request itself (IBV_WC_TM_RNDV_INCOMPLETE): software goes on.
 */
static enum sv_tm_kind sv_tm_rndv(struct sv_req *r, struct sv_srq *srq,
				  struct sv_tm_tag *t, struct sv_cqe *cqe,
				  const struct sv_tmh *h,
				  const struct sv_rvh *rvh,
				  enum sv_exec_result *res, u32 *status)
{
	struct sv_qp *qp = r->qp;
	u64 len = be32_to_cpu(rvh->len);
	struct sv_tmh *fin;
	int ret;

	if (len > r->tsg->len) {
		len = min(r->len, r->tsg->len);
		ret = sv_req_payload_at(r, 0, r->tsg, len);
		if (ret == SV_ECOPY_SRC) {
			*status = SV_WC_LOC_PROT_ERR;
			*res = SV_EXEC_FATAL;
			return SV_TM_DONE;
		}
		sv_tm_unlist(srq->tm, t);
		if (ret) {
			cqe->status = SV_WC_LOC_PROT_ERR;
			*res = sv_tm_fail(r, srq, cqe, status);
			return SV_TM_DONE;
		}
		cqe->status = SV_WC_TM_RNDV_INCOMPLETE;
		cqe->byte_len = len;
		cqe->wc_flags |= SV_WC_F_TM_DATA_VALID;
		sv_dp_push_cqe(srq->cq, cqe, true);
		*res = SV_EXEC_DONE;
		return SV_TM_DONE;
	}
	sv_tm_unlist(srq->tm, t);
	sv_dp_push_cqe(srq->cq, cqe, false);

	/* The RDMA READ: the sender's key, rights and memory. */
	ret = 0;
	if (!(READ_ONCE(qp->attr.qp_access_flags) & SV_ACCESS_REMOTE_READ))
		ret = -EACCES;
	else if (len)
		ret = sv_sg_remote(r->rsg, qp, sv_qp_pd(qp),
				   SV_ACCESS_REMOTE_READ,
				   be32_to_cpu(rvh->rkey),
				   be64_to_cpu(rvh->va), len);
	if (!ret && len) {
		ret = sv_sg_copy_at(r->tsg, 0, r->rsg, 0, len);
		sv_sg_release(r->rsg);
	}
	cqe->tm_tag = 0;
	cqe->tm_priv = 0;
	cqe->wc_flags = SV_WC_F_TM_DATA_VALID;
	cqe->byte_len = len;
	if (ret) {
		/* Both ends of a failed read go to ERR, as on the wire. */
		cqe->status = ret == -EFAULT ? SV_WC_LOC_PROT_ERR :
					       SV_WC_REM_ACCESS_ERR;
		sv_responder_err(r->dqp, false);
		sv_dp_push_cqe(srq->cq, cqe, true);
		*status = SV_WC_REM_ACCESS_ERR;
		*res = SV_EXEC_FATAL;
		return SV_TM_DONE;
	}
	if (!sv_req_inv(r)) {
		cqe->status = SV_WC_REM_INV_REQ_ERR;
		*res = sv_tm_fail(r, srq, cqe, status);
		return SV_TM_DONE;
	}
	sv_dp_push_cqe(srq->cq, cqe,
		       !!(r->w->send_flags & SV_SEND_SOLICITED));
	/* The FIN: the request's TMH and RVH, opcode FIN (qp's engine). */
	fin = (struct sv_tmh *)qp->tm_fin;
	*fin = *h;
	fin->opcode = SV_TMH_FIN;
	memcpy(qp->tm_fin + sizeof(*h), rvh, sizeof(*rvh));
	qp->tm_fin_src = sv_qp_wire_qpn(r->dqp);
	return SV_TM_FIN;
}

/**
 * sv_tm_recv - what a TM SRQ makes of a message
 * @r: the request, a SEND* to an RC QP using @srq
 * @srq: a TM SRQ, its ring locked (not dead)
 * @res: the result when the message is done here
 * @status: the requester's status when @res is SV_EXEC_FATAL
 *
 * SV_TM_DONE and SV_TM_FIN when a tagged buffer took it (or the sender's
 * own memory failed); otherwise how sv_deliver() places it in a WQE.
 */
enum sv_tm_kind sv_tm_recv(struct sv_req *r, struct sv_srq *srq,
			   enum sv_exec_result *res, u32 *status)
{
	struct sv_qp *dqp = r->dqp;
	enum sv_tm_kind kind;
	struct sv_cqe cqe = {};
	struct sv_rvh rvh;
	struct sv_tmh h;
	struct sv_tm_tag *t;
	u64 tag;
	int ret;

	if (dqp->qp_type != SV_QPT_RC || r->len < sizeof(h))
		return SV_TM_PLAIN;
	ret = sv_req_read(r, 0, &h, sizeof(h));
	if (!ret && h.opcode == SV_TMH_RNDV) {
		if (r->len < sizeof(h) + sizeof(rvh))
			return SV_TM_UNEXPECTED;	/* software's */
		ret = sv_req_read(r, sizeof(h), &rvh, sizeof(rvh));
	}
	if (ret) {
		/* The sender's own page (ODP) */
		*status = SV_WC_LOC_PROT_ERR;
		*res = SV_EXEC_FATAL;
		return SV_TM_DONE;
	}
	if (h.opcode == SV_TMH_NO_TAG)
		return SV_TM_NO_TAG;
	if (h.opcode != SV_TMH_EAGER && h.opcode != SV_TMH_RNDV)
		return SV_TM_PLAIN;
	tag = be64_to_cpu(h.tag);
	t = sv_tm_match(srq->tm, tag);
	if (!t)
		return SV_TM_UNEXPECTED;

	cqe.wr_id = t->wr_id;
	cqe.opcode = SV_WC_TM_RECV;
	cqe.qp_num = dqp->qpn;
	cqe.src_qp = sv_qp_wire_qpn(r->qp);
	cqe.wc_flags = SV_WC_F_TM_MATCH;
	cqe.tm_tag = tag;
	cqe.tm_priv = be32_to_cpu(h.app_ctx);
	sv_recv_cqe_imm(&cqe, r->w);
	ret = sv_sg_resolve(r->tsg, dqp->sdev, r->dpd, SV_ACCESS_LOCAL_WRITE,
			    t->sge, t->num_sge);
	if (ret) {
		sv_tm_unlist(srq->tm, t);
		cqe.status = SV_WC_LOC_PROT_ERR;
		*res = sv_tm_fail(r, srq, &cqe, status);
		return SV_TM_DONE;
	}
	if (h.opcode == SV_TMH_EAGER) {
		*res = sv_tm_eager(r, srq, t, &cqe, status);
		sv_sg_release(r->tsg);
		return SV_TM_DONE;
	}
	kind = sv_tm_rndv(r, srq, t, &cqe, &h, &rvh, res, status);
	sv_sg_release(r->tsg);
	return kind;
}

/**
 * sv_tm_fin_resume - place a rendezvous's FIN in its sender's queue
 * @qp: the sender, its engine running it; qp->tm_fin_pending
 * @rsg: scratch (sv_exec_buf's)
 * @rw: scratch (sv_exec_buf's)
 * @status: a status when the result is SV_EXEC_FATAL
 *
 * The FIN is a SEND from the QP that read the data, after the request's
 * own completion (as the wire has it: acked, read, then answered).
 * Without a receive WQE it is an RNR NAK as any, retried, the sender's
 * next WQEs waiting behind it, until rnr_retry runs out: the engine then
 * moves the sender to ERR.
 */
enum sv_exec_result sv_tm_fin_resume(struct sv_qp *qp, struct sv_sg *rsg,
				     struct sv_rwqe *rw, u32 *status)
{
	struct sv_send_wqe w = { .opcode = SV_WR_SEND };
	struct sv_req r = {
		.qp = qp, .dqp = qp, .w = &w, .inl = qp->tm_fin,
		.len = sizeof(qp->tm_fin), .dpd = sv_qp_pd(qp), .rsg = rsg,
		.rw = rw, .src_qpn = qp->tm_fin_src,
	};
	enum sv_exec_result res;

	res = sv_deliver(&r, status);
	if (res != SV_EXEC_RETRY)
		WRITE_ONCE(qp->tm_fin_pending, false);
	return res;
}

/* The rendezvous is done: its FIN goes once its request completes. */
enum sv_exec_result sv_tm_fin(struct sv_req *r, u32 *status)
{
	WRITE_ONCE(r->qp->tm_fin_pending, true);
	return SV_EXEC_DONE;
}
