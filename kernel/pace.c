// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs send pacing: ibv_modify_qp_rate_limit().
 *
 * A QP with a rate has a token bucket of bytes, kept under its send
 * queue's lock (the engine's, engine.c): before a WR executes the bucket
 * is refilled at the rate for the time gone by, up to the burst size; a
 * QP in debt (negative tokens) waits, the engine sleeping until the debt
 * is paid (qp->wait_until, as for an RNR back-off); a WR that executes
 * takes its message bytes, which may put the QP in debt. So a QP moves
 * rate bytes per second on average, bursts of up to the burst size plus
 * one message, and a message larger than the burst still goes.
 */
#include <linux/ktime.h>
#include <linux/math64.h>

#include "sv.h"

/* One 4 KiB MTU when the caller names no burst size */
#define SV_PACE_DEFAULT_BURST	4096

/* Is qp in debt? Then *until is when it will not be. Under qp->sq.lock. */
bool sv_pace_held(struct sv_qp *qp, u64 *until)
{
	u64 now, gained, room;

	if (!qp->pace_bps)
		return false;
	now = ktime_get_ns();
	gained = mul_u64_u64_div_u64(now - qp->pace_last, qp->pace_bps,
				     NSEC_PER_SEC);
	qp->pace_last = now;
	/* Up to the burst; compared first, so a long idle cannot overflow. */
	room = qp->pace_burst - qp->pace_tokens;
	qp->pace_tokens = gained >= room ? (s64)qp->pace_burst :
			  qp->pace_tokens + (s64)gained;
	if (qp->pace_tokens >= 0)
		return false;
	*until = now + mul_u64_u64_div_u64(-qp->pace_tokens, NSEC_PER_SEC,
					   qp->pace_bps) + 1;
	return true;
}

/* A WR of bytes executed. Under qp->sq.lock. */
void sv_pace_charge(struct sv_qp *qp, u64 bytes)
{
	if (qp->pace_bps)
		qp->pace_tokens -= min_t(u64, bytes, S64_MAX / 2);
}

int sv_qp_rate_limit(struct sv_file *f, void *arg)
{
	struct sv_qp_rate_limit *cmd = arg;
	struct sv_uobj *u;
	struct sv_qp *qp;
	u32 state;
	int ret = 0;

	if (cmd->reserved || cmd->reserved2 ||
	    (cmd->rate_limit && (cmd->rate_limit < SV_QP_RATE_LIMIT_MIN ||
				 cmd->rate_limit > SV_QP_RATE_LIMIT_MAX)))
		return -EINVAL;
	u = sv_uobj_get(f, cmd->handle, SV_OBJ_QP);
	if (IS_ERR(u))
		return PTR_ERR(u);
	qp = container_of(u, struct sv_qp, uobj);
	if (qp->rss || sv_qp_is_dc(qp)) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	spin_lock_bh(&qp->lock);
	state = qp->attr.qp_state;
	spin_unlock_bh(&qp->lock);
	/* As mlx5: the rate of a QP that sends (it stays in RTS). */
	if (state != SV_QPS_RTS) {
		ret = -EINVAL;
		goto out;
	}
	mutex_lock(&qp->sq.lock);
	qp->pace_bps = (u64)cmd->rate_limit * 1000 / 8;
	qp->pace_burst = cmd->max_burst_sz ?: SV_PACE_DEFAULT_BURST;
	qp->pace_tokens = 0;
	qp->pace_last = ktime_get_ns();
	mutex_unlock(&qp->sq.lock);
out:
	sv_uobj_put(u);
	return ret;
}
