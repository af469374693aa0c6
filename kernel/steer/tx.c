// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs steering: the transmit path of RAW_PACKET QPs.
 *
 * exec.c hands every send WQE of a RAW_PACKET QP to sv_tx_send():
 *
 *  - IBV_WR_SEND: the WQE's SGEs gathered (or its inline data) are one
 *    Ethernet frame, MAC header first. With SV_SEND_IP_CSUM the frame's
 *    checksums are filled in first (offload.c).
 *  - IBV_WR_TSO (a QP created with max_tso_header): the header the WQE
 *    carries and the payload of its SGEs become segments of at most mss
 *    payload bytes, each a frame of its own with the header fixed for it
 *    (offload.c), as a ConnectX's LSO does.
 *
 * Every frame, and every segment, then takes the same way out: the
 * egress rules (egress.c: a DROP rule ends its way there), the e-switch
 * (a frame to the device's own MAC, or to a multicast or broadcast
 * address, also goes through the device's own steering; one to
 * its own MAC goes only there: what no rule traps goes to the local
 * kernel stack, not out; the sending QP receives it only by a rule with
 * ALLOW_LOOP_BACK, and a multicast frame never if it was created with
 * BLOCK_SELF_MCAST_LB; SNIFFER rules see every frame sent), then
 * dev_queue_xmit() on the bound netdev. Each counts in tx_pkts and
 * tx_bytes.
 *
 * Bounds: a frame is at most the netdev's MTU plus its hard header; a TSO
 * WQE carries at most SV_MAX_TSO payload bytes, so at most that many
 * segments, with a chance to reschedule after each, and the engine
 * charges its budget the bytes of all of them (sv_tx_wqe_bytes()).
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/sizes.h>

#include "steer.h"

/* Statuses (enum ibv_wc_status). */
#define SV_WC_SUCCESS		0
#define SV_WC_LOC_LEN_ERR	1
#define SV_WC_LOC_QP_OP_ERR	2
#define SV_WC_LOC_PROT_ERR	4
#define SV_WC_GENERAL_ERR	21

/* The longest frame a RAW_PACKET QP may try: a 64 KiB MTU and a VLAN header */
#define SV_RAW_MAX_FRAME	(SZ_64K + VLAN_ETH_HLEN)

/* One send WQE on its way out. */
struct sv_tx {
	struct sv_qp *qp;
	struct net_device *ndev;	/* held */
	u32 max_frame;			/* the MTU and the hard header */
	struct sv_sg *sg;		/* the payload: resolved SGEs, */
	const u8 *inl;			/* ... or inline data */
	u64 len;			/* ... of this many bytes */
};

/*
 * The e-switch: what a frame the device sends to itself (its own MAC,
 * multicast, broadcast) does in its own steering, and the sniffers' copy
 * of every frame sent. @skb has data at the MAC header. True if the
 * frame is for the device alone (its own MAC): it does not go out.
 */
static bool sv_steer_loopback(struct sv_device *sdev, struct sv_qp *qp,
			      struct net_device *ndev, struct sk_buff *skb)
{
	const struct ethhdr *eth = (const struct ethhdr *)skb->data;
	bool own = ether_addr_equal(eth->h_dest, ndev->dev_addr);
	bool mc = is_multicast_ether_addr(eth->h_dest);
	struct sk_buff *c;

	if (!own && !atomic_read(&sdev->steer->nrules))
		return false;
	c = skb_copy(skb, GFP_KERNEL);
	if (!c)
		return own;
	c->protocol = eth_type_trans(c, ndev);
	if (eth_type_vlan(c->protocol))
		c = skb_vlan_untag(c);
	if (!c)
		return own;
	local_bh_disable();
	rcu_read_lock();
	if (own) {
		/*
		 * What no rule traps goes to the host, as a NIC's e-switch
		 * hands it to the PF: the kernel's stack, as a looped-back
		 * frame, which our own rx_handler lets pass.
		 */
		if (!sv_steer_frame(sdev, c, qp)) {
			c->pkt_type = PACKET_LOOPBACK;
			netif_rx(c);
			c = NULL;
		}
	} else if (mc) {
		sv_steer_frame(sdev, c, qp);
	} else {
		struct sv_steer_verdict v;
		struct sv_flow *fl;
		u32 i = 0;

		/* Not for the e-switch: only the sniffers see it. */
		v.n = 0;
		list_for_each_entry_rcu(fl, &sdev->steer->sniffers, list) {
			if (fl->qp == qp)
				continue;
			sv_flow_count(fl, sv_steer_frame_len(c));
			if (v.n < ARRAY_SIZE(v.deliver))
				v.deliver[v.n++] = fl;
		}
		for (i = 0; i < v.n; i++)
			sv_steer_enqueue(sdev, v.deliver[i], c);
	}
	rcu_read_unlock();
	local_bh_enable();
	if (c)
		consume_skb(c);
	return own;
}

/* Send one frame (data at the MAC header, checked): consumes @skb. */
static void sv_tx_frame(struct sv_tx *t, struct sk_buff *skb)
{
	struct sv_device *sdev = t->qp->sdev;
	u32 len;

	skb->dev = t->ndev;
	skb_reset_mac_header(skb);
	skb_set_network_header(skb, ETH_HLEN);
	skb->protocol = eth_hdr(skb)->h_proto;
	/*
	 * The NIC's transmit table comes before its e-switch and the wire;
	 * its rules may drop the frame or rewrite it.
	 */
	skb = sv_steer_egress(sdev, skb);
	if (!skb)
		return;
	len = skb->len;
	if (sv_steer_loopback(sdev, t->qp, t->ndev, skb))
		consume_skb(skb);
	else
		/* A full queue drops, as a NIC's wire would: not our error. */
		dev_queue_xmit(skb);
	sv_stat_add(sdev, SV_STAT_TX_PKTS, 1);
	sv_stat_add(sdev, SV_STAT_TX_BYTES, len);
}

/* Copy len bytes of the WQE's payload, from byte off of it, to buf. */
static int sv_tx_read(const struct sv_tx *t, u64 off, void *buf, u64 len)
{
	u64 n;
	u32 i;
	int ret;

	if (t->inl) {
		memcpy(buf, t->inl + off, len);
		return 0;
	}
	for (i = 0; i < t->sg->n && off >= t->sg->ent[i].len; i++)
		off -= t->sg->ent[i].len;
	for (; i < t->sg->n && len; i++, off = 0) {
		n = min(len, t->sg->ent[i].len - off);
		ret = sv_mr_span_read(&t->sg->ent[i], off, buf, n);
		if (ret)
			return ret;
		buf += n;
		len -= n;
	}
	return len ? -ERANGE : 0;
}

/* A frame of @len bytes of headroom-reserved memory; NULL if none. */
static struct sk_buff *sv_tx_alloc(u32 len)
{
	struct sk_buff *skb = alloc_skb(LL_MAX_HEADER + len, GFP_KERNEL);

	if (skb)
		skb_reserve(skb, LL_MAX_HEADER);
	return skb;
}

/* IBV_WR_SEND: the payload is one frame. */
static enum sv_exec_result sv_tx_one(struct sv_tx *t, u32 flags, u32 *status)
{
	struct sk_buff *skb;

	if (t->len > t->max_frame) {
		*status = SV_WC_LOC_LEN_ERR;
		return SV_EXEC_FATAL;
	}
	skb = sv_tx_alloc(t->len);
	if (!skb) {
		*status = SV_WC_GENERAL_ERR;
		return SV_EXEC_FATAL;
	}
	if (sv_tx_read(t, 0, skb_put(skb, t->len), t->len)) {
		kfree_skb(skb);
		*status = SV_WC_LOC_PROT_ERR;
		return SV_EXEC_FATAL;
	}
	if (flags & SV_SEND_IP_CSUM)
		sv_tx_csum(skb->data, skb->len);
	sv_tx_frame(t, skb);
	return SV_EXEC_DONE;
}

/* IBV_WR_TSO: the payload in segments of mss bytes, each with the header. */
static enum sv_exec_result sv_tx_tso(struct sv_tx *t,
				     const struct sv_send_tso *tso,
				     u32 *status)
{
	const u8 *hdr = (const u8 *)(tso + 1);
	struct sv_tso_hdr th;
	struct sk_buff *skb;
	u32 i, n, nseg;
	u64 off;
	u8 *p;

	if (sv_tso_parse(hdr, tso->hdr_sz, &th)) {
		*status = SV_WC_LOC_QP_OP_ERR;
		return SV_EXEC_FATAL;
	}
	/* Nothing goes out unless every segment can. */
	if (t->len > SV_MAX_TSO ||
	    tso->hdr_sz + min_t(u64, tso->mss, t->len) > t->max_frame) {
		*status = SV_WC_LOC_LEN_ERR;
		return SV_EXEC_FATAL;
	}
	/* No payload: the header alone, once (a bare ACK, say). */
	nseg = t->len ? DIV_ROUND_UP((u32)t->len, tso->mss) : 1;
	for (i = 0, off = 0; i < nseg; i++, off += n) {
		n = min_t(u64, tso->mss, t->len - off);
		skb = sv_tx_alloc(tso->hdr_sz + n);
		if (!skb) {
			*status = SV_WC_GENERAL_ERR;
			return SV_EXEC_FATAL;
		}
		p = skb_put(skb, tso->hdr_sz + n);
		memcpy(p, hdr, tso->hdr_sz);
		if (sv_tx_read(t, off, p + tso->hdr_sz, n)) {
			kfree_skb(skb);
			*status = SV_WC_LOC_PROT_ERR;
			return SV_EXEC_FATAL;
		}
		sv_tso_fix(&th, p, n, off, i, i == nseg - 1);
		sv_tx_frame(t, skb);
		cond_resched();
	}
	return SV_EXEC_DONE;
}

/**
 * sv_tx_wqe_bytes - what a TSO WQE put on the wire, for the engine's budget
 * @w: the WQE, executed, as copied out of its slot
 * @size: the bytes of @w that were copied
 *
 * Return: the payload, and one header for each segment.
 */
u64 sv_tx_wqe_bytes(const struct sv_send_wqe *w, u32 size)
{
	const struct sv_send_tso *tso = (const void *)(w + 1);
	size_t off = sizeof(*w) + SV_TSO_SGE_OFFSET(tso->hdr_sz);
	const struct sv_sge *sge = (const void *)w + off;
	u64 len = 0;
	u32 i;

	/* Only SGEs inside the copy (the WQE executed: they are). */
	if (off > size)
		return 0;
	for (i = 0; i < min_t(u64, w->num_sge, (size - off) / sizeof(*sge));
	     i++)
		len += sge[i].length;
	return len + (u64)tso->hdr_sz *
	       (tso->mss && len ? DIV_ROUND_UP_ULL(len, tso->mss) : 1);
}

/**
 * sv_tx_send - execute the send WQE of a RAW_PACKET QP
 * @qp: the QP; its engine holds qp->sq.lock
 * @w: the WQE, copied out of the ring; its SGEs or data follow it
 * @sg: scratch for the resolved SGEs
 * @status: the status when the result is SV_EXEC_FATAL
 *
 * A bad opcode, too many SGEs, too much inline data, inline data or a
 * header the QP cannot have with TSO: LOC_QP_OP_ERR. A frame shorter than
 * an Ethernet header or longer than the netdev takes, a TSO payload over
 * SV_MAX_TSO or segments over the MTU: LOC_LEN_ERR. A bad lkey:
 * LOC_PROT_ERR. With no netdev any more (the device is going) the frames
 * are lost and the WQE completes.
 */
enum sv_exec_result sv_tx_send(struct sv_qp *qp, struct sv_send_wqe *w,
			       struct sv_sg *sg, u32 *status)
{
	const struct sv_send_tso *tso = NULL;
	struct sv_tx t = { .qp = qp };
	enum sv_exec_result res;
	const void *data = w + 1;
	struct sv_device *sdev = qp->sdev;

	*status = SV_WC_SUCCESS;
	if (w->opcode == SV_WR_TSO) {
		tso = data;
		if (!tso->hdr_sz || tso->hdr_sz > qp->max_tso_header ||
		    !tso->mss || tso->reserved ||
		    (w->send_flags & SV_SEND_INLINE)) {
			*status = SV_WC_LOC_QP_OP_ERR;
			return SV_EXEC_FATAL;
		}
		data += SV_TSO_SGE_OFFSET(tso->hdr_sz);
	} else if (w->opcode != SV_WR_SEND) {
		*status = SV_WC_LOC_QP_OP_ERR;
		return SV_EXEC_FATAL;
	}
	if (w->send_flags & SV_SEND_INLINE) {
		if (w->inline_len > qp->cap.max_inline_data) {
			*status = SV_WC_LOC_QP_OP_ERR;
			return SV_EXEC_FATAL;
		}
		t.inl = data;
		t.len = w->inline_len;
	} else {
		if (w->num_sge > qp->cap.max_send_sge) {
			*status = SV_WC_LOC_QP_OP_ERR;
			return SV_EXEC_FATAL;
		}
		if (sv_sg_resolve(sg, sdev, sv_qp_pd(qp), 0, data,
				  w->num_sge)) {
			*status = SV_WC_LOC_PROT_ERR;
			return SV_EXEC_FATAL;
		}
		t.sg = sg;
		t.len = sg->len;
	}
	if (!tso && (t.len > SV_RAW_MAX_FRAME || t.len < ETH_HLEN)) {
		*status = SV_WC_LOC_LEN_ERR;
		res = SV_EXEC_FATAL;
		goto out;
	}
	rcu_read_lock();
	t.ndev = READ_ONCE(sdev->ndev);
	if (t.ndev)
		dev_hold(t.ndev);
	rcu_read_unlock();
	res = SV_EXEC_DONE;
	if (!t.ndev)
		goto out;
	t.max_frame = READ_ONCE(t.ndev->mtu) + t.ndev->hard_header_len;
	res = tso ? sv_tx_tso(&t, tso, status) :
		    sv_tx_one(&t, w->send_flags, status);
	dev_put(t.ndev);
out:
	if (t.sg)
		sv_sg_release(t.sg);
	return res;
}
