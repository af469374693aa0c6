// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs on the wire: the UC transport.
 *
 * A UC message (SEND, SEND with immediate, RDMA WRITE, RDMA WRITE with
 * immediate) leaves as path-MTU packets, FIRST, MIDDLE... LAST or ONLY,
 * with consecutive PSNs; an RDMA WRITE's first packet carries the RETH,
 * the last one the ImmDt. The path MTU is the smaller of the QP's and
 * the port's. UC is unreliable: a packet the IP layer refuses is lost,
 * and the send still completes.
 *
 * The responder takes the packets of its peer (qp.c) in PSN order. A
 * packet whose PSN is not the expected one means packets were lost: the
 * message in progress is dropped and so is the packet unless it starts a
 * new message, as the IBA says of UC (its receive WQE, if one was taken,
 * serves the next message); the expected PSN goes on from the packet's.
 * A SEND takes the next receive WQE at its first packet (none there: the
 * message is dropped, counted in wire_rx_drops) and completes it at its
 * last, IBV_WC_LOC_LEN_ERR and the QP in ERR if it does not fit, as on
 * the direct path. An RDMA WRITE is checked against its rkey's MR (the
 * QP's PD, the QP's and MR's remote-write rights, the whole range) at
 * its first packet and dropped if that fails; with immediate data it
 * takes and completes a receive WQE (IBV_WC_RECV_RDMA_WITH_IMM).
 */
#include "wire.h"

/**
 * sv_wire_uc_send - send r's UC message as RoCE v2 packets
 * @r: the request (qp, w, the payload)
 * @status: the requester's status on SV_EXEC_FATAL
 *
 * The engine, under qp->sq.lock.
 */
enum sv_exec_result sv_wire_uc_send(struct sv_req *r, u32 *status)
{
	struct sv_qp *qp = r->qp;
	struct sv_send_wqe *w = r->w;
	struct sv_wire_tx t = {};
	u32 sgid_index, mtu, n, i, seg, hdrs;
	u64 off = 0;
	u8 *p;

	if (w->opcode != SV_WR_SEND && w->opcode != SV_WR_SEND_WITH_IMM &&
	    w->opcode != SV_WR_RDMA_WRITE &&
	    w->opcode != SV_WR_RDMA_WRITE_WITH_IMM) {
		*status = SV_WC_LOC_QP_OP_ERR;	/* UC has no invalidate */
		return SV_EXEC_FATAL;
	}
	sv_wire_tx_av(qp, &t, &sgid_index);
	if (sv_wire_route(qp->sdev, &t, sgid_index)) {
		sv_wire_tx_release(&t);
		sv_stat_add(qp->sdev, SV_STAT_WIRE_TX_DROPS, 1);
		return SV_EXEC_DONE;
	}
	spin_lock_bh(&qp->lock);
	mtu = min(t.mtu, sv_mtu_bytes(qp->attr.path_mtu) ?: t.mtu);
	spin_unlock_bh(&qp->lock);
	n = max_t(u32, 1, DIV_ROUND_UP_ULL(r->len, mtu));
	for (i = 0; i < n; i++, off += seg) {
		struct sv_bth *bth;
		u8 op = SV_OP_UC | sv_wire_msg_op(w->opcode, i, n);
		bool last = i == n - 1;

		seg = min_t(u64, mtu, r->len - off);
		hdrs = sizeof(*bth) + sv_wire_msg_hdrs(w->opcode, i, n);
		p = sv_wire_frame(&t, hdrs, seg);
		if (!p) {
			sv_stat_add(qp->sdev, SV_STAT_WIRE_TX_DROPS, 1);
			qp->tx_psn = (qp->tx_psn + 1) & SV_BTH_PSN_MASK;
			continue;
		}
		if (seg && sv_req_read(r, off, p + hdrs, seg)) {
			sv_wire_tx_release(&t);
			*status = SV_WC_LOC_PROT_ERR;
			return SV_EXEC_FATAL;
		}
		bth = (struct sv_bth *)p;
		bth->opcode = op;
		bth->flags = ((-seg & 3) << SV_BTH_PAD_SHIFT) |
			     (last && (w->send_flags & SV_SEND_SOLICITED) ?
			      SV_BTH_SE : 0);
		bth->pkey = htons(SV_DEFAULT_PKEY);
		bth->qpn = htonl(qp->dest_qpn & SV_QPN_MASK);
		bth->apsn = htonl(qp->tx_psn);
		qp->tx_psn = (qp->tx_psn + 1) & SV_BTH_PSN_MASK;
		sv_wire_msg_ext(p + sizeof(*bth), w, r->len, i, n);
		sv_wire_xmit(qp->sdev, &t);
	}
	sv_wire_tx_release(&t);
	sv_stat_add(qp->sdev, SV_STAT_TX_PKTS, 1);
	sv_stat_add(qp->sdev, SV_STAT_TX_BYTES, r->len);
	return SV_EXEC_DONE;
}

/* The message in progress is dropped; a taken WQE serves the next one. */
static void sv_uc_abandon(struct sv_qp *qp)
{
	struct sv_wire_qp *wq = qp->wire;

	if (wq->resp == SV_RESP_SEND)
		wq->have_wqe = true;
	if (wq->resp != SV_RESP_IDLE)
		sv_stat_add(qp->sdev, SV_STAT_WIRE_RX_DROPS, 1);
	wq->resp = SV_RESP_IDLE;
}

/* Complete the taken WQE; an error puts the QP in ERR first. */
static void sv_uc_complete(struct sv_qp *qp, struct sv_cqe *cqe,
			   bool solicited, const struct sv_rx_meta *m)
{
	cqe->wr_id = qp->wire->rw.hdr.wr_id;
	cqe->qp_num = qp->qpn;
	cqe->src_qp = qp->dest_qpn;
	if (cqe->status) {
		cqe->byte_len = 0;
		cqe->wc_flags = 0;
		sv_responder_err(qp, false);
		solicited = true;
	}
	sv_cq_push_stamped(container_of(qp->recv_cq, struct sv_cq, uobj), cqe,
			   solicited, &m->ts);
	qp->wire->resp = SV_RESP_IDLE;
}

/* Write an RDMA WRITE packet's payload at va + off; false: dropped. */
static bool sv_uc_write(struct sv_qp *qp, const struct sv_wire_pkt *p,
			void *buf)
{
	struct sv_wire_qp *wq = qp->wire;
	struct sv_sg *sg = buf;
	int ret;

	if (wq->off + p->paylen > wq->dmalen)
		return false;
	if (!p->paylen)
		return true;
	ret = sv_sg_remote(sg, qp, sv_qp_pd(qp), SV_ACCESS_REMOTE_WRITE,
			   wq->rkey, wq->va + wq->off, p->paylen);
	if (ret)
		return false;
	ret = sv_sg_write(sg, 0, p->payload, p->paylen);
	sv_sg_release(sg);
	wq->off += p->paylen;
	return !ret;
}

/* A SEND packet: into the message's receive WQE. */
static void sv_uc_send_pkt(struct sv_qp *qp, const struct sv_wire_pkt *p,
			   const struct sv_rx_meta *m, void *buf)
{
	struct sv_wire_qp *wq = qp->wire;
	u8 op = p->opcode & 0x1f;
	struct sv_cqe cqe = { .opcode = SV_WC_RECV };
	int ret;

	if (sv_wire_op_first(op)) {
		ret = sv_wire_take(qp);
		if (!ret) {
			sv_stat_add(qp->sdev, SV_STAT_WIRE_RX_DROPS, 1);
			return;		/* no WQE: the message is lost */
		}
		wq->resp = SV_RESP_SEND;
		wq->off = 0;
		if (ret < 0) {
			cqe.status = SV_WC_LOC_QP_OP_ERR;
			sv_uc_complete(qp, &cqe, false, m);
			return;
		}
	} else if (wq->resp != SV_RESP_SEND) {
		return;			/* the rest of a dropped message */
	}
	cqe.status = sv_wire_place(qp, p, buf);
	if (!cqe.status && !sv_wire_op_last(op))
		return;
	cqe.byte_len = wq->off;
	if (sv_wire_op_imm(op)) {
		cqe.wc_flags |= SV_WC_F_WITH_IMM;
		memcpy(&cqe.imm_data, p->payload - 4, 4);
	}
	sv_uc_complete(qp, &cqe, p->bth->flags & SV_BTH_SE, m);
}

/* An RDMA WRITE packet: into the memory its RETH named. */
static void sv_uc_write_pkt(struct sv_qp *qp, const struct sv_wire_pkt *p,
			    const struct sv_rx_meta *m, void *buf)
{
	struct sv_wire_qp *wq = qp->wire;
	u8 op = p->opcode & 0x1f;
	struct sv_cqe cqe = { .opcode = SV_WC_RECV_RDMA_WITH_IMM };
	int ret;

	if (sv_wire_op_first(op)) {
		const struct sv_reth *reth = (const struct sv_reth *)p->ext;
		struct sv_sg *sg = buf;

		wq->va = be64_to_cpu(reth->va);
		wq->rkey = ntohl(reth->rkey);
		wq->dmalen = ntohl(reth->len);
		wq->off = 0;
		/* The whole range, once: the MR, its PD, the rights. */
		if (wq->dmalen) {
			if (sv_sg_remote(sg, qp, sv_qp_pd(qp),
					 SV_ACCESS_REMOTE_WRITE, wq->rkey,
					 wq->va, wq->dmalen)) {
				sv_stat_add(qp->sdev, SV_STAT_WIRE_RX_DROPS, 1);
				return;
			}
			sv_sg_release(sg);
		}
		wq->resp = SV_RESP_WRITE;
	} else if (wq->resp != SV_RESP_WRITE) {
		return;
	}
	if (!sv_uc_write(qp, p, buf)) {
		sv_uc_abandon(qp);
		return;
	}
	if (!sv_wire_op_last(op))
		return;
	if (wq->off != wq->dmalen) {
		sv_uc_abandon(qp);
		return;
	}
	wq->resp = SV_RESP_IDLE;
	if (!sv_wire_op_imm(op))
		return;
	ret = sv_wire_take(qp);
	if (!ret) {
		sv_stat_add(qp->sdev, SV_STAT_WIRE_RX_DROPS, 1);
		return;
	}
	if (ret < 0)
		cqe.status = SV_WC_LOC_QP_OP_ERR;
	cqe.byte_len = wq->dmalen;
	cqe.wc_flags = SV_WC_F_WITH_IMM;
	memcpy(&cqe.imm_data, p->payload - 4, 4);
	sv_uc_complete(qp, &cqe, p->bth->flags & SV_BTH_SE, m);
}

/**
 * sv_wire_uc_recv - one queued UC packet into qp
 * @qp: the UC QP on the wire, its engine holding qp->sq.lock, the
 *	packet from its peer (sv_wire_recv())
 * @skb: the packet (the caller's to free)
 * @m: its arrival
 * @buf: sv_exec_buf_size() bytes of scratch memory
 *
 * Always true: what finds no receive WQE is counted here.
 */
bool sv_wire_uc_recv(struct sv_qp *qp, struct sk_buff *skb,
		     const struct sv_rx_meta *m, void *buf)
{
	struct sv_wire_qp *wq = qp->wire;
	struct sv_wire_pkt p;
	u32 psn;
	u8 op;

	sv_wire_parse(skb, &p);
	op = p.opcode & 0x1f;
	psn = ntohl(p.bth->apsn) & SV_BTH_PSN_MASK;
	if (psn != wq->epsn) {
		sv_stat_add(qp->sdev, SV_STAT_WIRE_RX_OOS, 1);
		sv_uc_abandon(qp);
	}
	wq->epsn = (psn + 1) & SV_BTH_PSN_MASK;
	/* A new message ends one whose last packet never came. */
	if (sv_wire_op_first(op))
		sv_uc_abandon(qp);
	if (op <= SV_OP_SEND_ONLY_IMM)
		sv_uc_send_pkt(qp, &p, m, buf);
	else
		sv_uc_write_pkt(qp, &p, m, buf);
	return true;
}
