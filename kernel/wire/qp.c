// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs on the wire: a connected (UC, RC) QP's side of it.
 *
 * Whether a connected QP talks over the wire is settled when it goes to
 * RTR: if no device of this host (in its namespace) holds the
 * destination GID, its wire state (struct sv_wire_qp, charged to the
 * caller) is made then and switched on, with the responder's expected
 * PSN from rq_psn; a modify to RTS sets the requester's next PSN from
 * sq_psn; RESET switches it off and forgets a message in progress. A QP
 * whose destination is on this host keeps the direct path.
 *
 * Frames for a QP (rx.c) wait on its frame queue for its engine, which
 * checks their ICRC (sv_wire_icrc_take(): the CRC's cost on the CPU that
 * runs the QP) and takes only those from its peer: the source address
 * must be its destination GID and the destination address one of its
 * device's GIDs (rx.c checked that), as rxe and RoCE NICs check.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/ipv6.h>

#include "wire.h"

static bool sv_wire_qp_type(const struct sv_qp *qp)
{
	return qp->qp_type == SV_QPT_UC || qp->qp_type == SV_QPT_RC;
}

/**
 * sv_wire_qp_prepare - before a modify: does it connect qp over the wire?
 * @qp: the QP being modified
 * @mask: the modify's attribute mask
 * @a: its attributes
 * @w: set to new wire state if qp needs one and has none (for
 *	sv_wire_qp_rtr(); the caller frees what is left)
 *
 * 1 if the modify goes to RTR with a destination on the wire, 0 if not,
 * -ENOMEM.
 */
int sv_wire_qp_prepare(struct sv_qp *qp, u32 mask, const struct sv_qp_attr *a,
		       struct sv_wire_qp **w)
{
	u8 dgid[16];

	*w = NULL;
	if (!(mask & SV_QP_STATE) || a->qp_state != SV_QPS_RTR ||
	    !sv_wire_qp_type(qp))
		return 0;
	if (mask & SV_QP_AV) {
		memcpy(dgid, a->ah_attr.dgid, 16);
	} else {
		spin_lock_bh(&qp->lock);
		memcpy(dgid, qp->attr.ah_attr.dgid, 16);
		spin_unlock_bh(&qp->lock);
	}
	if (sv_gid_local(qp->sdev, dgid))
		return 0;
	if (!READ_ONCE(qp->wire)) {
		*w = kzalloc(sizeof(**w), GFP_KERNEL_ACCOUNT);
		if (!*w)
			return -ENOMEM;
		skb_queue_head_init(&(*w)->resps);
	}
	return 1;
}

/* After a modify to RTR: switch the wire on (@remote) or off. */
void sv_wire_qp_rtr(struct sv_qp *qp, struct sv_wire_qp **w, int remote)
{
	struct sv_wire_qp *wq;

	mutex_lock(&qp->sq.lock);
	if (!qp->wire && *w) {
		WRITE_ONCE(qp->wire, *w);
		*w = NULL;
	}
	wq = qp->wire;
	if (wq) {
		spin_lock_bh(&qp->lock);
		wq->epsn = qp->attr.rq_psn & SV_BTH_PSN_MASK;
		wq->nres = clamp_t(u32, qp->attr.max_dest_rd_atomic, 1,
				   SV_WIRE_MAX_RES);
		spin_unlock_bh(&qp->lock);
		wq->resp = SV_RESP_IDLE;
		wq->have_wqe = false;
		wq->msn = 0;
		wq->nak_sent = false;
		wq->ack_pending = false;
		memset(wq->res, 0, sizeof(wq->res));
		wq->on = remote > 0;
	}
	mutex_unlock(&qp->sq.lock);
}

/* A modify to RTS: the requester's PSNs start at sq_psn. qp->sq.lock. */
void sv_wire_qp_rts(struct sv_qp *qp)
{
	spin_lock_bh(&qp->lock);
	qp->tx_psn = qp->attr.sq_psn & SV_BTH_PSN_MASK;
	spin_unlock_bh(&qp->lock);
}

/* A modify to RESET: off, and a message in progress forgotten. sq.lock */
void sv_wire_qp_reset(struct sv_qp *qp)
{
	if (!qp->wire)
		return;
	qp->wire->on = false;
	qp->wire->resp = SV_RESP_IDLE;
	qp->wire->have_wqe = false;
	qp->wire->ack_pending = false;
	sv_wire_rc_forget(qp);
}

/* With the QP: the last reference is gone, nobody runs it. */
void sv_wire_qp_free(struct sv_qp *qp)
{
	if (!qp->wire)
		return;
	skb_queue_purge(&qp->wire->resps);
	kfree(qp->wire);
	qp->wire = NULL;
}

/* Is a frame queued for connected qp from its destination GID? */
bool sv_wire_from_peer(struct sv_qp *qp, const struct sk_buff *skb)
{
	const u8 *nh = skb_network_header(skb);
	u8 sgid[16];
	bool ok;

	if ((nh[0] >> 4) == 6)
		memcpy(sgid, &((const struct ipv6hdr *)nh)->saddr, 16);
	else
		ipv6_addr_set_v4mapped(((const struct iphdr *)nh)->saddr,
				       (struct in6_addr *)sgid);
	spin_lock_bh(&qp->lock);
	ok = !memcmp(qp->attr.ah_attr.dgid, sgid, 16);
	spin_unlock_bh(&qp->lock);
	if (!ok)
		sv_stat_add(qp->sdev, SV_STAT_RX_PEER_DROPS, 1);
	return ok;
}

/*
 * A queued frame (sv_rx_queue_wire()) into qp, by its transport. Its
 * engine, under qp->sq.lock. False if it found no receive WQE.
 */
bool sv_wire_recv(struct sv_qp *qp, struct sk_buff *skb,
		  const struct sv_rx_meta *m, void *buf)
{
	if (qp->qp_type == SV_QPT_UD)
		return sv_wire_ud_recv(qp, skb, m, buf);
	/* Its ICRC first (rx.c), then: connected over the wire, from its peer */
	if (!sv_wire_icrc_take(qp->sdev, skb) || !qp->wire || !qp->wire->on ||
	    !sv_wire_from_peer(qp, skb)) {
		sv_stat_add(qp->sdev, SV_STAT_WIRE_RX_DROPS, 1);
		return true;
	}
	if (qp->qp_type == SV_QPT_RC)
		return sv_wire_rc_recv(qp, skb, m, buf);
	return sv_wire_uc_recv(qp, skb, m, buf);
}

/*
 * rx.c: a UC or RC frame for the QP it names, if that is a QP of the
 * frame's transport, queued for its engine; else dropped. Softirq, RCU
 * held (see sv_wire_ud_rx()): whether the QP is on the wire and the
 * frame from its peer is the engine's to check.
 */
void sv_wire_conn_rx(struct sv_device *sdev, const struct sv_wire_pkt *p,
		     struct sk_buff *skb)
{
	struct sv_qp *qp = xa_load(&sdev->qps, p->dqpn);
	u32 type = SV_OP_TRANSPORT(p->opcode) == SV_OP_RC ? SV_QPT_RC :
		   SV_QPT_UC;

	if (!qp || qp->qp_type != type) {
		/* Counted as if it had been queued and checked */
		sv_wire_icrc_take(sdev, skb);
		kfree_skb(skb);
		sv_stat_add(sdev, SV_STAT_WIRE_RX_DROPS, 1);
		return;
	}
	sv_rx_queue_wire(sdev, qp, skb);
}

/*
 * The route fields of a connected qp's frames: from its address vector
 * (under qp->lock, as a modify may change it).
 */
void sv_wire_tx_av(struct sv_qp *qp, struct sv_wire_tx *t, u32 *sgid_index)
{
	spin_lock_bh(&qp->lock);
	memcpy(t->dgid, qp->attr.ah_attr.dgid, 16);
	t->tclass = qp->attr.ah_attr.traffic_class;
	t->hop_limit = qp->attr.ah_attr.hop_limit ?: 64;
	t->flow_label = qp->attr.ah_attr.flow_label;
	*sgid_index = qp->attr.ah_attr.sgid_index;
	spin_unlock_bh(&qp->lock);
	t->sport = sv_wire_sport(t->flow_label, qp->qpn);
}
