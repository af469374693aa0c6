// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs on the wire: the UD transport.
 *
 * A UD send to a GID that no device of this host holds is one frame:
 * BTH (SEND_ONLY, or SEND_ONLY_WITH_IMMEDIATE with its ImmDt), DETH
 * (the Q_Key, the QP's own one when the WR's has its top bit set, and
 * the source QPN), the payload of at most the port's MTU. It is
 * unreliable, as on any wire: a send with no route, or a frame the IP
 * layer refuses, completes successfully and is counted (wire_tx_drops).
 *
 * A received UD frame goes to the QP its BTH names if that is a UD QP
 * (not one with a SOURCE_QPN, which receives through steering only)
 * whose Q_Key the DETH's matches; else it is dropped and counted
 * (wire_rx_drops). It waits on the QP's frame queue (steer/rx.c) for the
 * QP's engine, which writes into the next receive WQE the 40 bytes of a
 * GRH (an IPv6 header, or 20 zero bytes and the IPv4 header, as RoCE NICs
 * place them, which ibv_init_ah_from_wc() tells apart) and the payload.
 *
 * Multicast: a send to the multicast QPN goes to the AH's group address
 * (after the device's own attached QPs got it, exec.c), and a frame to
 * the multicast QPN and a group the device has (rx.c) goes to a copy for
 * each UD QP attached to it whose Q_Key the DETH's matches; dropped and
 * counted if none took it. A frame to QP1 is a MAD for the connection
 * manager (cm/mad.c).
 */
#include <linux/ip.h>

#include "wire.h"

/**
 * sv_wire_ud_send - send r's UD message as a RoCE v2 frame
 * @r: the request: qp, w, the payload, av (the AH's address vector)
 * @status: the requester's status on SV_EXEC_FATAL
 *
 * The engine, under qp->sq.lock.
 */
enum sv_exec_result sv_wire_ud_send(struct sv_req *r, u32 *status)
{
	struct sv_qp *qp = r->qp;
	struct sv_send_wqe *w = r->w;
	bool imm = w->opcode == SV_WR_SEND_WITH_IMM;
	u32 hdrs = sizeof(struct sv_bth) + sizeof(struct sv_deth) +
		   (imm ? 4 : 0);
	struct sv_wire_tx t = {
		.tclass = r->av.traffic_class,
		.hop_limit = r->av.hop_limit ?: 64,
		.flow_label = r->av.flow_label,
		.sport = sv_wire_sport(r->av.flow_label, qp->qpn),
	};
	struct sv_deth *deth;
	struct sv_bth *bth;
	u32 qkey;
	u8 *p;

	memcpy(t.dgid, r->av.dgid, 16);
	if (sv_wire_route(qp->sdev, &t, r->av.sgid_index))
		goto drop;
	if (r->len > t.mtu) {
		sv_wire_tx_release(&t);
		*status = SV_WC_LOC_LEN_ERR;
		return SV_EXEC_FATAL;
	}
	p = sv_wire_frame(&t, hdrs, r->len);
	if (!p)
		goto drop;
	if (r->len && sv_req_read(r, 0, p + hdrs, r->len)) {
		sv_wire_tx_release(&t);
		*status = SV_WC_LOC_PROT_ERR;
		return SV_EXEC_FATAL;
	}
	qkey = w->remote_qkey;
	if (qkey & SV_QKEY_CONTROLLED) {
		spin_lock_bh(&qp->lock);
		qkey = qp->attr.qkey;
		spin_unlock_bh(&qp->lock);
	}
	bth = (struct sv_bth *)p;
	bth->opcode = SV_OP_UD | (imm ? SV_OP_SEND_ONLY_IMM : SV_OP_SEND_ONLY);
	bth->flags = ((-r->len & 3) << SV_BTH_PAD_SHIFT) |
		     (w->send_flags & SV_SEND_SOLICITED ? SV_BTH_SE : 0);
	bth->pkey = htons(SV_DEFAULT_PKEY);
	bth->qpn = htonl(w->remote_qpn & SV_QPN_MASK);
	bth->apsn = htonl(qp->tx_psn);
	qp->tx_psn = (qp->tx_psn + 1) & SV_BTH_PSN_MASK;
	deth = (struct sv_deth *)(bth + 1);
	deth->qkey = htonl(qkey);
	deth->sqp = htonl(sv_qp_wire_qpn(qp));
	if (imm)
		memcpy(deth + 1, &w->imm_data, 4);
	if (sv_wire_xmit(qp->sdev, &t))
		goto out;
	sv_stat_add(qp->sdev, SV_STAT_TX_PKTS, 1);
	sv_stat_add(qp->sdev, SV_STAT_TX_BYTES, r->len);
	goto out;
drop:
	sv_stat_add(qp->sdev, SV_STAT_WIRE_TX_DROPS, 1);
out:
	sv_wire_tx_release(&t);
	return SV_EXEC_DONE;
}

/* May a UD frame with the DETH's Q_Key go to qp? Under RCU. */
static bool sv_wire_ud_takes(struct sv_qp *qp, u32 qkey)
{
	bool ok;

	if (qp->qp_type != SV_QPT_UD ||
	    (qp->create_flags & SV_QP_CREATE_SOURCE_QPN))
		return false;
	spin_lock_bh(&qp->lock);
	ok = !qp->dead && qp->attr.qkey == qkey;
	spin_unlock_bh(&qp->lock);
	return ok;
}

/* A frame to the multicast QPN: a copy for each QP of its group. */
static bool sv_wire_ud_mcast(struct sv_device *sdev, struct sk_buff *skb,
			     const u8 *gid, u32 qkey)
{
	struct sv_qp *qps[SV_MAX_MCAST_QP_ATTACH];
	struct sk_buff *c;
	bool any = false;
	u32 i, n;

	n = sv_mcast_rcu_qps(sdev, gid, qps, ARRAY_SIZE(qps));
	for (i = 0; i < n; i++) {
		if (!sv_wire_ud_takes(qps[i], qkey))
			continue;
		c = skb_clone(skb, GFP_ATOMIC);
		if (!c)
			break;
		sv_rx_queue_wire(sdev, qps[i], c);
		any = true;
	}
	return any;
}

/**
 * sv_wire_ud_rx - queue a UD frame for the QP (or group) it names, or drop it
 * @sdev: the device it came in on
 * @p: what it is (sv_wire_parse())
 * @skb: the frame, which this consumes
 *
 * Softirq, RCU held: a QP found stays readable (freed after a grace
 * period); the queue takes nothing once it is dead.
 */
void sv_wire_ud_rx(struct sv_device *sdev, const struct sv_wire_pkt *p,
		   struct sk_buff *skb)
{
	const struct sv_deth *deth = (const struct sv_deth *)p->ext;
	u32 qkey = ntohl(deth->qkey);
	struct sv_qp *qp;
	bool mc = p->dqpn == SV_QPN_MASK;
	u8 gid[16];

	/* The multicast QPN to a group, and only to a group. */
	sv_wire_dgid(skb, gid);
	if (sv_gid_is_multicast(gid) != mc)
		goto drop;
	if (!mc && p->dqpn == 1) {
		/* QP1: the connection manager's MADs (cm/mad.c) */
		sv_cm_rx_frame(sdev, p, skb);
		return;
	}
	if (mc) {
		if (sv_wire_ud_mcast(sdev, skb, gid, qkey)) {
			consume_skb(skb);
			return;
		}
	} else {
		qp = xa_load(&sdev->qps, p->dqpn);
		if (qp && sv_wire_ud_takes(qp, qkey)) {
			sv_rx_queue_wire(sdev, qp, skb);
			return;
		}
	}
drop:
	kfree_skb(skb);
	sv_stat_add(sdev, SV_STAT_WIRE_RX_DROPS, 1);
}

/**
 * sv_wire_ud_recv - place a queued UD frame in qp's next receive WQE
 * @qp: the UD QP, its engine holding qp->sq.lock
 * @skb: the frame (sv_wire_ud_rx()), the caller's to free
 * @m: its arrival
 * @buf: sv_exec_buf_size() bytes of scratch memory
 *
 * False if it was dropped: no receive WQE (counted by the caller).
 */
bool sv_wire_ud_recv(struct sv_qp *qp, struct sk_buff *skb,
		     const struct sv_rx_meta *m, void *buf)
{
	const u8 *nh = skb_network_header(skb);
	struct sv_cqe cqe = {
		.opcode = SV_WC_RECV,
		.wc_flags = SV_WC_F_GRH,
	};
	const struct sv_deth *deth;
	struct sv_chunk c[2];
	struct sv_wire_pkt p;
	u8 grh[SV_GRH_LEN] = {};

	sv_wire_parse(skb, &p);
	deth = (const struct sv_deth *)p.ext;
	if ((nh[0] >> 4) == 6)
		memcpy(grh, nh, SV_GRH_LEN);
	else
		memcpy(grh + SV_GRH_LEN - sizeof(struct iphdr), nh,
		       sizeof(struct iphdr));
	c[0] = (struct sv_chunk){ grh, SV_GRH_LEN };
	c[1] = (struct sv_chunk){ p.payload, p.paylen };
	cqe.src_qp = ntohl(deth->sqp) & SV_QPN_MASK;
	cqe.byte_len = SV_GRH_LEN + p.paylen;
	cqe.pkey_index = 0;
	if (p.opcode == (SV_OP_UD | SV_OP_SEND_ONLY_IMM)) {
		cqe.wc_flags |= SV_WC_F_WITH_IMM;
		memcpy(&cqe.imm_data, deth + 1, 4);
	}
	if (!sv_recv_chunks(qp, c, 2, &cqe, p.bth->flags & SV_BTH_SE, &m->ts,
			    buf))
		return false;
	if (!cqe.status) {
		sv_stat_add(qp->sdev, SV_STAT_RX_PKTS, 1);
		sv_stat_add(qp->sdev, SV_STAT_RX_BYTES, p.paylen);
	}
	return true;
}
