// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs Dynamically Connected transport, mlx5's DC: what a DCI and a
 * DCT do beyond RC.
 *
 * A DCI is an RC requester whose destination is in each WQE (an AH, the
 * DCT's number, the DC access key) rather than in its attributes; exec.c
 * resolves it as it resolves a UD destination and then runs the message
 * as RC does (RNR and transport retries, REM_* errors). A DCT is an RC
 * responder that receives through its SRQ from any DCI presenting its
 * key. A message with a wrong key is dropped at the DCT and counted
 * (dc_key_violations), as mlx5 drops it and raises a DCT key violation
 * only DevX can see: to the DCI it is a responder that never answers, so
 * its WQE ends with IBV_WC_RETRY_EXC_ERR once retry_cnt runs out. An
 * error a DCI's message meets never moves the DCT to ERR: the DCT serves
 * every initiator.
 *
 * DCI streams (mlx5dv_dci_streams): each WQE names a stream channel
 * (mlx5dv_wr_set_dc_addr_stream(); the id is taken modulo the channels).
 * Work runs in send-queue order here, which keeps each stream's order.
 * A WQE that fails puts its stream in error rather than the DCI: later
 * WQEs of that stream complete with IBV_WC_WR_FLUSH_ERR until
 * mlx5dv_dci_stream_id_reset() (qp.c), other streams go on, and the DCI
 * goes to ERR when 2^log_num_errored streams are in error at once.
 */
#include <linux/bitops.h>

#include "sv.h"

/* Does the WQE carry dct's access key? Counted on dct's device if not. */
bool sv_dc_key_ok(const struct sv_send_wqe *w, struct sv_qp *dct)
{
	u64 key = (u64)w->dc_key_hi << 32 | w->remote_qkey;

	if (key == dct->dc_key)
		return true;
	sv_stat_add(dct->sdev, SV_STAT_DC_KEY_DROPS, 1);
	return false;
}

static u32 sv_dci_stream(const struct sv_qp *qp, const struct sv_send_wqe *w)
{
	return w->dc_stream & (qp->dci_streams - 1);
}

/* Is w's stream in error (flush it)? Under qp->sq.lock. */
bool sv_dci_stream_blocked(struct sv_qp *qp, const struct sv_send_wqe *w)
{
	lockdep_assert_held(&qp->sq.lock);
	if (!qp->dci_streams)
		return false;
	return test_bit(sv_dci_stream(qp, w), &qp->dci_errored);
}

/*
 * w failed: put its stream in error. True if that takes the whole DCI to
 * ERR (it has no streams, or too many are in error). Under qp->sq.lock.
 */
bool sv_dci_stream_failed(struct sv_qp *qp, const struct sv_send_wqe *w)
{
	lockdep_assert_held(&qp->sq.lock);
	if (qp->qp_type != SV_QPT_DCI || !qp->dci_streams)
		return true;
	__set_bit(sv_dci_stream(qp, w), &qp->dci_errored);
	return hweight_long(qp->dci_errored) >= qp->dci_max_errored;
}

/* The DCI went through RESET: no stream is in error. Under sq.lock. */
void sv_dci_streams_reset(struct sv_qp *qp)
{
	lockdep_assert_held(&qp->sq.lock);
	qp->dci_errored = 0;
}
