// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs QP state machine: which transitions ibv_modify_qp() may make,
 * which attributes each transition requires and allows per QP type (IB
 * spec vol. 1, 11.2.4.2 / the table in ibv_modify_qp(3)), and the range of
 * each attribute value. Checking is separate from applying so a modify
 * either changes everything it names or nothing.
 */
#include "sv.h"

/*
 * RAW_PACKET QPs take no attribute but the port (on RESET -> INIT). XRC
 * INI (XI) and TGT (XT) QPs take RC's, less what their missing side would
 * use, as the IB spec's XRC tables (and the RDMA core's qp_state_table).
 */
enum { SV_T_RC, SV_T_UC, SV_T_UD, SV_T_RAW, SV_T_XI, SV_T_XT, SV_T_MAX };

#define SV_XRC_INIT	(SV_QP_PKEY_INDEX | SV_QP_PORT | SV_QP_ACCESS_FLAGS)
#define SV_XRC_RTR_REQ	(SV_QP_AV | SV_QP_PATH_MTU | SV_QP_DEST_QPN |	\
			 SV_QP_RQ_PSN)
#define SV_XRC_RTR_OPT	(SV_QP_ALT_PATH | SV_QP_ACCESS_FLAGS |		\
			 SV_QP_PKEY_INDEX)
#define SV_XRC_RTS_OPT	(SV_QP_CUR_STATE | SV_QP_ALT_PATH |		\
			 SV_QP_ACCESS_FLAGS | SV_QP_PATH_MIG_STATE)
#define SV_XRC_SQD_OPT	(SV_QP_PORT | SV_QP_AV | SV_QP_TIMEOUT |	\
			 SV_QP_ALT_PATH | SV_QP_ACCESS_FLAGS |		\
			 SV_QP_PKEY_INDEX | SV_QP_PATH_MIG_STATE)

struct sv_qp_trans {
	bool valid;
	u32 req[SV_T_MAX];	/* required attributes besides SV_QP_STATE */
	u32 opt[SV_T_MAX];	/* allowed attributes */
};

static const struct sv_qp_trans sv_qp_trans[SV_QPS_ERR + 1][SV_QPS_ERR + 1] = {
	[SV_QPS_RESET] = {
		[SV_QPS_RESET] = { .valid = true },
		[SV_QPS_INIT] = {
			.valid = true,
			.req = {
				[SV_T_RC] = SV_QP_PKEY_INDEX | SV_QP_PORT |
					   SV_QP_ACCESS_FLAGS,
				[SV_T_UC] = SV_QP_PKEY_INDEX | SV_QP_PORT |
					   SV_QP_ACCESS_FLAGS,
				[SV_T_UD] = SV_QP_PKEY_INDEX | SV_QP_PORT |
					   SV_QP_QKEY,
				[SV_T_RAW] = SV_QP_PORT,
				[SV_T_XI] = SV_XRC_INIT,
				[SV_T_XT] = SV_XRC_INIT,
			},
		},
		[SV_QPS_ERR] = { .valid = true },
	},
	[SV_QPS_INIT] = {
		[SV_QPS_RESET] = { .valid = true },
		[SV_QPS_ERR] = { .valid = true },
		[SV_QPS_INIT] = {
			.valid = true,
			.opt = {
				[SV_T_RC] = SV_QP_PKEY_INDEX | SV_QP_PORT |
					   SV_QP_ACCESS_FLAGS,
				[SV_T_UC] = SV_QP_PKEY_INDEX | SV_QP_PORT |
					   SV_QP_ACCESS_FLAGS,
				[SV_T_UD] = SV_QP_PKEY_INDEX | SV_QP_PORT |
					   SV_QP_QKEY,
				[SV_T_RAW] = SV_QP_PORT,
				[SV_T_XI] = SV_XRC_INIT,
				[SV_T_XT] = SV_XRC_INIT,
			},
		},
		[SV_QPS_RTR] = {
			.valid = true,
			.req = {
				[SV_T_RC] = SV_QP_AV | SV_QP_PATH_MTU |
					   SV_QP_DEST_QPN | SV_QP_RQ_PSN |
					   SV_QP_MAX_DEST_RD_ATOMIC |
					   SV_QP_MIN_RNR_TIMER,
				[SV_T_UC] = SV_QP_AV | SV_QP_PATH_MTU |
					   SV_QP_DEST_QPN | SV_QP_RQ_PSN,
				[SV_T_XI] = SV_XRC_RTR_REQ,
				[SV_T_XT] = SV_XRC_RTR_REQ |
					   SV_QP_MAX_DEST_RD_ATOMIC |
					   SV_QP_MIN_RNR_TIMER,
			},
			.opt = {
				[SV_T_RC] = SV_QP_ALT_PATH | SV_QP_ACCESS_FLAGS |
					   SV_QP_PKEY_INDEX,
				[SV_T_UC] = SV_QP_ALT_PATH | SV_QP_ACCESS_FLAGS |
					   SV_QP_PKEY_INDEX,
				[SV_T_UD] = SV_QP_PKEY_INDEX | SV_QP_QKEY,
				[SV_T_XI] = SV_XRC_RTR_OPT,
				[SV_T_XT] = SV_XRC_RTR_OPT,
			},
		},
	},
	[SV_QPS_RTR] = {
		[SV_QPS_RESET] = { .valid = true },
		[SV_QPS_ERR] = { .valid = true },
		[SV_QPS_RTS] = {
			.valid = true,
			.req = {
				[SV_T_RC] = SV_QP_TIMEOUT | SV_QP_RETRY_CNT |
					   SV_QP_RNR_RETRY | SV_QP_SQ_PSN |
					   SV_QP_MAX_QP_RD_ATOMIC,
				[SV_T_UC] = SV_QP_SQ_PSN,
				[SV_T_UD] = SV_QP_SQ_PSN,
				[SV_T_XI] = SV_QP_TIMEOUT | SV_QP_RETRY_CNT |
					   SV_QP_RNR_RETRY | SV_QP_SQ_PSN |
					   SV_QP_MAX_QP_RD_ATOMIC,
				[SV_T_XT] = SV_QP_TIMEOUT | SV_QP_SQ_PSN,
			},
			.opt = {
				[SV_T_RC] = SV_QP_CUR_STATE | SV_QP_ALT_PATH |
					   SV_QP_ACCESS_FLAGS |
					   SV_QP_MIN_RNR_TIMER |
					   SV_QP_PATH_MIG_STATE,
				[SV_T_UC] = SV_QP_CUR_STATE | SV_QP_ALT_PATH |
					   SV_QP_ACCESS_FLAGS |
					   SV_QP_PATH_MIG_STATE,
				[SV_T_UD] = SV_QP_CUR_STATE | SV_QP_QKEY,
				[SV_T_XI] = SV_XRC_RTS_OPT,
				[SV_T_XT] = SV_XRC_RTS_OPT | SV_QP_MIN_RNR_TIMER,
			},
		},
	},
	[SV_QPS_RTS] = {
		[SV_QPS_RESET] = { .valid = true },
		[SV_QPS_ERR] = { .valid = true },
		[SV_QPS_RTS] = {
			.valid = true,
			.opt = {
				[SV_T_RC] = SV_QP_CUR_STATE | SV_QP_ACCESS_FLAGS |
					   SV_QP_ALT_PATH |
					   SV_QP_PATH_MIG_STATE |
					   SV_QP_MIN_RNR_TIMER,
				[SV_T_UC] = SV_QP_CUR_STATE | SV_QP_ACCESS_FLAGS |
					   SV_QP_ALT_PATH |
					   SV_QP_PATH_MIG_STATE,
				[SV_T_UD] = SV_QP_CUR_STATE | SV_QP_QKEY,
				[SV_T_XI] = SV_XRC_RTS_OPT,
				[SV_T_XT] = SV_XRC_RTS_OPT | SV_QP_MIN_RNR_TIMER,
			},
		},
		[SV_QPS_SQD] = {
			.valid = true,
			.opt = {
				[SV_T_RC] = SV_QP_EN_SQD_ASYNC_NOTIFY,
				[SV_T_UC] = SV_QP_EN_SQD_ASYNC_NOTIFY,
				[SV_T_UD] = SV_QP_EN_SQD_ASYNC_NOTIFY,
				[SV_T_XI] = SV_QP_EN_SQD_ASYNC_NOTIFY,
				[SV_T_XT] = SV_QP_EN_SQD_ASYNC_NOTIFY,
			},
		},
	},
	[SV_QPS_SQD] = {
		[SV_QPS_RESET] = { .valid = true },
		[SV_QPS_ERR] = { .valid = true },
		[SV_QPS_RTS] = {
			.valid = true,
			.opt = {
				[SV_T_RC] = SV_QP_CUR_STATE | SV_QP_ALT_PATH |
					   SV_QP_ACCESS_FLAGS |
					   SV_QP_MIN_RNR_TIMER |
					   SV_QP_PATH_MIG_STATE,
				[SV_T_UC] = SV_QP_CUR_STATE | SV_QP_ALT_PATH |
					   SV_QP_ACCESS_FLAGS |
					   SV_QP_PATH_MIG_STATE,
				[SV_T_UD] = SV_QP_CUR_STATE | SV_QP_QKEY,
				[SV_T_XI] = SV_XRC_RTS_OPT,
				[SV_T_XT] = SV_XRC_RTS_OPT | SV_QP_MIN_RNR_TIMER,
			},
		},
		[SV_QPS_SQD] = {
			.valid = true,
			.opt = {
				[SV_T_RC] = SV_QP_PORT | SV_QP_AV |
					   SV_QP_TIMEOUT | SV_QP_RETRY_CNT |
					   SV_QP_RNR_RETRY |
					   SV_QP_MAX_QP_RD_ATOMIC |
					   SV_QP_MAX_DEST_RD_ATOMIC |
					   SV_QP_ALT_PATH |
					   SV_QP_ACCESS_FLAGS |
					   SV_QP_PKEY_INDEX |
					   SV_QP_MIN_RNR_TIMER |
					   SV_QP_PATH_MIG_STATE,
				[SV_T_UC] = SV_QP_AV | SV_QP_ALT_PATH |
					   SV_QP_ACCESS_FLAGS |
					   SV_QP_PKEY_INDEX |
					   SV_QP_PATH_MIG_STATE,
				[SV_T_UD] = SV_QP_PKEY_INDEX | SV_QP_QKEY,
				[SV_T_XI] = SV_XRC_SQD_OPT | SV_QP_RETRY_CNT |
					   SV_QP_RNR_RETRY |
					   SV_QP_MAX_QP_RD_ATOMIC,
				[SV_T_XT] = SV_XRC_SQD_OPT |
					   SV_QP_MAX_DEST_RD_ATOMIC |
					   SV_QP_MIN_RNR_TIMER,
			},
		},
	},
	[SV_QPS_SQE] = {
		[SV_QPS_RESET] = { .valid = true },
		[SV_QPS_ERR] = { .valid = true },
		[SV_QPS_RTS] = {
			.valid = true,
			/* SQE is a UC and UD state; an RC QP never gets there. */
			.opt = {
				[SV_T_UC] = SV_QP_CUR_STATE | SV_QP_ACCESS_FLAGS,
				[SV_T_UD] = SV_QP_CUR_STATE | SV_QP_QKEY,
			},
		},
	},
	[SV_QPS_ERR] = {
		[SV_QPS_RESET] = { .valid = true },
		[SV_QPS_ERR] = { .valid = true },
	},
};

/* Every mask bit ibv_modify_qp() defines. */
#define SV_QP_ATTR_KNOWN	(GENMASK(20, 0) | SV_QP_RATE_LIMIT)

static int sv_qp_tindex(u32 qp_type)
{
	switch (qp_type) {
	case SV_QPT_RC:
		return SV_T_RC;
	case SV_QPT_UC:
		return SV_T_UC;
	case SV_QPT_RAW_PACKET:
		return SV_T_RAW;
	case SV_QPT_XRC_SEND:
		return SV_T_XI;
	case SV_QPT_XRC_RECV:
		return SV_T_XT;
	default:
		return SV_T_UD;
	}
}

static int sv_qp_check_values(struct sv_device *sdev, u32 mask,
			      const struct sv_qp_attr *a)
{
	if (a->reserved)
		return -EINVAL;
	if ((mask & SV_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~SV_QP_ACCESS_MASK))
		return -EINVAL;
	if ((mask & SV_QP_PKEY_INDEX) && a->pkey_index >= SV_MAX_PKEYS)
		return -EINVAL;
	if ((mask & SV_QP_PORT) && a->port_num != SV_PORT_NUM)
		return -EINVAL;
	if ((mask & SV_QP_AV) && sv_ah_attr_check(sdev, &a->ah_attr))
		return -EINVAL;
	if ((mask & SV_QP_PATH_MTU) &&
	    (a->path_mtu < 1 || a->path_mtu > SV_PORT_MAX_MTU))
		return -EINVAL;
	if ((mask & SV_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & SV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & SV_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & SV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & SV_QP_MAX_QP_RD_ATOMIC) &&
	    a->max_rd_atomic > SV_MAX_QP_INIT_RD_ATOM)
		return -EINVAL;
	if ((mask & SV_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > SV_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & SV_QP_DEST_QPN) && a->dest_qp_num > SV_QPN_MASK)
		return -EINVAL;
	if ((mask & SV_QP_PATH_MIG_STATE) && a->path_mig_state > 2)
		return -EINVAL;	/* IBV_MIG_MIGRATED, _REARM, _ARMED */
	if (mask & SV_QP_ALT_PATH) {
		if (a->alt_port_num != SV_PORT_NUM ||
		    a->alt_pkey_index >= SV_MAX_PKEYS ||
		    a->alt_timeout > 31 ||
		    sv_ah_attr_check(sdev, &a->alt_ah_attr))
			return -EINVAL;
	}
	return 0;
}

/* Exactly req, and any of opt: mlx5_ib's is_valid_mask(). */
static bool sv_mask_is(u32 mask, u32 req, u32 opt)
{
	req |= SV_QP_STATE;
	return (mask & req) == req && !(mask & ~(req | opt));
}

/* A DCI's transitions: mlx5_ib's modify_dci_qp_is_ok(). */
static bool sv_dci_trans_ok(u32 cur, u32 next, u32 mask)
{
	if (next == SV_QPS_RESET)
		return sv_mask_is(mask, 0, 0);
	if (cur == SV_QPS_RESET && next == SV_QPS_INIT)
		return sv_mask_is(mask, SV_QP_PKEY_INDEX | SV_QP_PORT, 0);
	if (cur == SV_QPS_INIT && next == SV_QPS_INIT)
		return sv_mask_is(mask, 0, SV_QP_PKEY_INDEX | SV_QP_PORT);
	if (cur == SV_QPS_INIT && next == SV_QPS_RTR)
		return sv_mask_is(mask, SV_QP_PATH_MTU,
				  SV_QP_PKEY_INDEX | SV_QP_AV);
	if (cur == SV_QPS_RTR && next == SV_QPS_RTS)
		return sv_mask_is(mask, SV_QP_TIMEOUT | SV_QP_RETRY_CNT |
				  SV_QP_RNR_RETRY | SV_QP_MAX_QP_RD_ATOMIC |
				  SV_QP_SQ_PSN, SV_QP_MIN_RNR_TIMER);
	if (cur == SV_QPS_RTS && next == SV_QPS_RTS)
		return sv_mask_is(mask, 0, SV_QP_MIN_RNR_TIMER);
	if (cur != SV_QPS_RESET && next == SV_QPS_ERR)
		return sv_mask_is(mask, 0, 0);
	return false;
}

/* A DCT's: mlx5_ib_modify_dct(), two transitions and nothing else. */
static bool sv_dct_trans_ok(u32 cur, u32 next, u32 mask)
{
	if (cur == SV_QPS_RESET && next == SV_QPS_INIT)
		return sv_mask_is(mask, SV_QP_ACCESS_FLAGS | SV_QP_PKEY_INDEX |
				  SV_QP_PORT, 0);
	if (cur == SV_QPS_INIT && next == SV_QPS_RTR)
		return sv_mask_is(mask, SV_QP_MIN_RNR_TIMER | SV_QP_AV |
				  SV_QP_PATH_MTU, 0);
	return false;
}

/*
 * Can qp make the modification? Called with qp->lock held, so that the
 * state checked is the state the modification applies to.
 */
int sv_qp_check_modify(struct sv_qp *qp, u32 mask,
		       const struct sv_qp_attr *attr)
{
	const struct sv_qp_trans *t;
	u32 cur, next, req, opt;

	lockdep_assert_held(&qp->lock);
	if (mask & ~SV_QP_ATTR_KNOWN)
		return -EINVAL;
	cur = qp->attr.qp_state;
	if ((mask & SV_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;
	next = (mask & SV_QP_STATE) ? attr->qp_state : cur;
	if (next > SV_QPS_ERR)
		return -EINVAL;

	if (sv_qp_is_dc(qp)) {
		if (!(mask & SV_QP_STATE) ||
		    !(qp->qp_type == SV_QPT_DCI ?
		      sv_dci_trans_ok(cur, next, mask) :
		      sv_dct_trans_ok(cur, next, mask)))
			return -EINVAL;
		return sv_qp_check_values(qp->sdev, mask, attr);
	}
	t = &sv_qp_trans[cur][next];
	if (!t->valid)
		return -EINVAL;
	/* As mlx5's underlay QPs: the state, nothing else to set. */
	if (qp->create_flags & SV_QP_CREATE_SOURCE_QPN)
		return mask & ~(SV_QP_STATE | SV_QP_CUR_STATE) ? -EINVAL : 0;
	req = t->req[sv_qp_tindex(qp->qp_type)];
	opt = t->opt[sv_qp_tindex(qp->qp_type)];
	if ((mask & req) != req)
		return -EINVAL;
	if (mask & ~(req | opt | SV_QP_STATE))
		return -EINVAL;
	/* SQE -> RTS exists for UC and UD only. */
	if (cur == SV_QPS_SQE && next == SV_QPS_RTS &&
	    qp->qp_type != SV_QPT_UC && qp->qp_type != SV_QPT_UD)
		return -EINVAL;

	return sv_qp_check_values(qp->sdev, mask, attr);
}

/* Apply a modification sv_qp_check_modify() accepted, under qp->lock. */
void sv_qp_apply_modify(struct sv_qp *qp, u32 mask,
			const struct sv_qp_attr *a)
{
	struct sv_qp_attr *q = &qp->attr;

	lockdep_assert_held(&qp->lock);
	if (mask & SV_QP_EN_SQD_ASYNC_NOTIFY)
		q->en_sqd_async_notify = !!a->en_sqd_async_notify;
	if (mask & SV_QP_ACCESS_FLAGS)
		q->qp_access_flags = a->qp_access_flags;
	if (mask & SV_QP_PKEY_INDEX)
		q->pkey_index = a->pkey_index;
	if (mask & SV_QP_PORT)
		q->port_num = a->port_num;
	if (mask & SV_QP_QKEY)
		q->qkey = a->qkey;
	if (mask & SV_QP_AV)
		q->ah_attr = a->ah_attr;
	if (mask & SV_QP_PATH_MTU)
		q->path_mtu = a->path_mtu;
	if (mask & SV_QP_TIMEOUT)
		q->timeout = a->timeout;
	if (mask & SV_QP_RETRY_CNT)
		q->retry_cnt = a->retry_cnt;
	if (mask & SV_QP_RNR_RETRY)
		q->rnr_retry = a->rnr_retry;
	if (mask & SV_QP_RQ_PSN)
		q->rq_psn = a->rq_psn & SV_PSN_MASK;
	if (mask & SV_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = a->max_rd_atomic;
	if (mask & SV_QP_ALT_PATH) {
		q->alt_ah_attr = a->alt_ah_attr;
		q->alt_port_num = a->alt_port_num;
		q->alt_pkey_index = a->alt_pkey_index;
		q->alt_timeout = a->alt_timeout;
	}
	if (mask & SV_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = a->min_rnr_timer;
	if (mask & SV_QP_SQ_PSN)
		q->sq_psn = a->sq_psn & SV_PSN_MASK;
	if (mask & SV_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & SV_QP_PATH_MIG_STATE)
		q->path_mig_state = a->path_mig_state;
	if (mask & SV_QP_DEST_QPN)
		q->dest_qp_num = a->dest_qp_num;
	if (mask & SV_QP_STATE) {
		q->qp_state = a->qp_state;
		q->cur_qp_state = a->qp_state;
		/* The engine may read its rings from now on (sv_wq_move()). */
		if (a->qp_state != SV_QPS_RESET)
			WRITE_ONCE(qp->left_reset, true);
		/*
		 * Nothing executes work requests yet, so a send queue is
		 * drained the moment it enters SQD.
		 */
		q->sq_draining = 0;
	}
}
