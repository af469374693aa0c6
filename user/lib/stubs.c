// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libsoftverbs: weak fallbacks for every exported verb the core does not
 * own. Each fails the documented way (NULL + errno EOPNOTSUPP, an errno
 * value, or -1 + errno). The file implementing a verb (pd.c, mr.c, cq.c,
 * event.c, qp.c, srq.c, ah.c ...) defines it normally; its strong symbol
 * replaces the weak one here at link time. See sv_verbs.h.
 */
#include "sv_verbs.h"
#include "sv_system.h"

#define SV_STUB		SV_EXPORT __attribute__((weak))
#define SV_NOTSUP_NULL	do { errno = EOPNOTSUPP; return NULL; } while (0)
#define SV_NOTSUP_NEG1	do { errno = EOPNOTSUPP; return -1; } while (0)

/* ---- completion channels and events (event.c / cq.c) ---- */
SV_STUB struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *c)
{
	(void)c;
	SV_NOTSUP_NULL;
}

SV_STUB int ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	(void)ch;
	return EOPNOTSUPP;
}

SV_STUB int ibv_get_async_event(struct ibv_context *c,
				struct ibv_async_event *event)
{
	(void)c; (void)event;
	SV_NOTSUP_NEG1;
}

SV_STUB void ibv_ack_async_event(struct ibv_async_event *event)
{
	(void)event;
}

SV_STUB int ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
			     void **cq_context)
{
	(void)ch; (void)cq; (void)cq_context;
	SV_NOTSUP_NEG1;
}

SV_STUB void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	(void)cq; (void)nevents;
}

/* ---- CQ (cq.c) ---- */
SV_STUB struct ibv_cq *ibv_create_cq(struct ibv_context *c, int cqe,
				     void *cq_context,
				     struct ibv_comp_channel *ch,
				     int comp_vector)
{
	(void)c; (void)cqe; (void)cq_context; (void)ch; (void)comp_vector;
	SV_NOTSUP_NULL;
}

SV_STUB int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq; (void)cqe;
	return EOPNOTSUPP;
}

SV_STUB int ibv_destroy_cq(struct ibv_cq *cq)
{
	(void)cq;
	return EOPNOTSUPP;
}

/* ---- PD (pd.c) ---- */
SV_STUB struct ibv_pd *ibv_alloc_pd(struct ibv_context *c)
{
	(void)c;
	SV_NOTSUP_NULL;
}

SV_STUB int ibv_dealloc_pd(struct ibv_pd *pd)
{
	(void)pd;
	return EOPNOTSUPP;
}

/* ---- MR (mr.c) ---- */
SV_STUB struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr,
				    size_t length, int access)
{
	(void)pd; (void)addr; (void)length; (void)access;
	SV_NOTSUP_NULL;
}

SV_STUB struct ibv_mr *(ibv_reg_mr_iova)(struct ibv_pd *pd, void *addr,
					 size_t length, uint64_t iova,
					 int access)
{
	(void)pd; (void)addr; (void)length; (void)iova; (void)access;
	SV_NOTSUP_NULL;
}

SV_STUB struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
					size_t length, uint64_t iova,
					unsigned int access)
{
	(void)pd; (void)addr; (void)length; (void)iova; (void)access;
	SV_NOTSUP_NULL;
}

SV_STUB struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					 size_t length, uint64_t iova, int fd,
					 int access)
{
	(void)pd; (void)offset; (void)length; (void)iova; (void)fd;
	(void)access;
	SV_NOTSUP_NULL;
}

/* The old MR stays valid: IBV_REREG_MR_ERR_INPUT. */
SV_STUB int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			 void *addr, size_t length, int access)
{
	(void)mr; (void)flags; (void)pd; (void)addr; (void)length;
	(void)access;
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

SV_STUB int ibv_dereg_mr(struct ibv_mr *mr)
{
	(void)mr;
	return EOPNOTSUPP;
}

/* ---- QP (qp.c) ---- */
SV_STUB struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
				     struct ibv_qp_init_attr *attr)
{
	(void)pd; (void)attr;
	SV_NOTSUP_NULL;
}

SV_STUB int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			  int attr_mask)
{
	(void)qp; (void)attr; (void)attr_mask;
	return EOPNOTSUPP;
}

SV_STUB int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	(void)qp; (void)attr; (void)attr_mask; (void)init_attr;
	return EOPNOTSUPP;
}

SV_STUB int ibv_destroy_qp(struct ibv_qp *qp)
{
	(void)qp;
	return EOPNOTSUPP;
}

SV_STUB struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	(void)qp;
	SV_NOTSUP_NULL;
}

SV_STUB int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	SV_SYSTEM_FORWARD(qp->context, ibv_query_ece, qp, ece);
	(void)qp; (void)ece;
	return EOPNOTSUPP;
}

SV_STUB int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	SV_SYSTEM_FORWARD(qp->context, ibv_set_ece, qp, ece);
	(void)qp; (void)ece;
	return EOPNOTSUPP;
}

/* ---- SRQ (srq.c) ---- */
SV_STUB struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
				       struct ibv_srq_init_attr *attr)
{
	(void)pd; (void)attr;
	SV_NOTSUP_NULL;
}

SV_STUB int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			   int attr_mask)
{
	(void)srq; (void)attr; (void)attr_mask;
	return EOPNOTSUPP;
}

SV_STUB int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	(void)srq; (void)attr;
	return EOPNOTSUPP;
}

SV_STUB int ibv_destroy_srq(struct ibv_srq *srq)
{
	(void)srq;
	return EOPNOTSUPP;
}

/* ---- AH and multicast (ah.c) ---- */
SV_STUB struct ibv_ah *ibv_create_ah(struct ibv_pd *pd,
				     struct ibv_ah_attr *attr)
{
	(void)pd; (void)attr;
	SV_NOTSUP_NULL;
}

SV_STUB struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd,
					     struct ibv_wc *wc,
					     struct ibv_grh *grh,
					     uint8_t port_num)
{
	(void)pd; (void)wc; (void)grh; (void)port_num;
	SV_NOTSUP_NULL;
}

SV_STUB int ibv_init_ah_from_wc(struct ibv_context *c, uint8_t port_num,
				struct ibv_wc *wc, struct ibv_grh *grh,
				struct ibv_ah_attr *ah_attr)
{
	(void)c; (void)port_num; (void)wc; (void)grh; (void)ah_attr;
	SV_NOTSUP_NEG1;
}

SV_STUB int ibv_destroy_ah(struct ibv_ah *ah)
{
	(void)ah;
	return EOPNOTSUPP;
}

SV_STUB int ibv_resolve_eth_l2_from_gid(struct ibv_context *c,
					struct ibv_ah_attr *attr,
					uint8_t eth_mac[ETHERNET_LL_SIZE],
					uint16_t *vid)
{
	SV_SYSTEM_FORWARD(c, ibv_resolve_eth_l2_from_gid, c, attr, eth_mac, vid);
	(void)c; (void)attr; (void)eth_mac; (void)vid;
	return EOPNOTSUPP;
}

SV_STUB int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			     uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	return EOPNOTSUPP;
}

SV_STUB int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			     uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	return EOPNOTSUPP;
}
