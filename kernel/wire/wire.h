/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softverbs on the wire: RoCE v2 (InfiniBand transport headers over UDP
 * port 4791, IPv4 or IPv6) on a device's bound netdev.
 *
 * The headers (IBA vol. 1 ch. 9, and its RoCE v2 annex A17): a frame is
 * IP / UDP / BTH / the opcode's extension headers / payload / pad to 4
 * bytes / ICRC. All multi-byte fields are big endian. icrc.c computes the
 * ICRC, tx.c routes and sends a frame, rx.c takes the frames for the
 * device's GIDs off the netdev, ud.c is the UD transport.
 */
#ifndef SV_WIRE_H
#define SV_WIRE_H

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <net/ipv6.h>

#include "../exec.h"

#define SV_ROCE_V2_PORT		4791
#define SV_ICRC_LEN		4

/* Base Transport Header */
struct sv_bth {
	u8 opcode;
	u8 flags;		/* SE, M, PadCnt, TVer */
	__be16 pkey;
	__be32 qpn;		/* F, B, 6 reserved bits, DestQP */
	__be32 apsn;		/* AckReq, 7 reserved bits, PSN */
};

#define SV_BTH_SE		0x80
#define SV_BTH_MIG		0x40
#define SV_BTH_PAD_SHIFT	4
#define SV_BTH_PAD_MASK		0x30
#define SV_BTH_TVER_MASK	0x0f
#define SV_BTH_ACKREQ		0x80000000U
#define SV_BTH_PSN_MASK		0x00ffffffU

/* Datagram Extended Transport Header */
struct sv_deth {
	__be32 qkey;
	__be32 sqp;		/* 8 reserved bits, SrcQP */
};

/* Opcodes: the transport in the top 3 bits, the operation below. */
#define SV_OP_TRANSPORT(op)	((op) & 0xe0)
#define SV_OP_RC		0x00
#define SV_OP_UC		0x20
#define SV_OP_UD		0x60
#define SV_OP_SEND_FIRST	0x00
#define SV_OP_SEND_MIDDLE	0x01
#define SV_OP_SEND_LAST		0x02
#define SV_OP_SEND_LAST_IMM	0x03
#define SV_OP_SEND_ONLY		0x04
#define SV_OP_SEND_ONLY_IMM	0x05
#define SV_OP_WRITE_FIRST	0x06
#define SV_OP_WRITE_MIDDLE	0x07
#define SV_OP_WRITE_LAST	0x08
#define SV_OP_WRITE_LAST_IMM	0x09
#define SV_OP_WRITE_ONLY	0x0a
#define SV_OP_WRITE_ONLY_IMM	0x0b
#define SV_OP_READ_REQ		0x0c
#define SV_OP_READ_FIRST	0x0d
#define SV_OP_READ_MIDDLE	0x0e
#define SV_OP_READ_LAST		0x0f
#define SV_OP_READ_ONLY		0x10
#define SV_OP_ACK		0x11
#define SV_OP_ATOMIC_ACK	0x12
#define SV_OP_CMP_SWAP		0x13
#define SV_OP_FETCH_ADD		0x14
#define SV_OP_SEND_LAST_INV	0x16
#define SV_OP_SEND_ONLY_INV	0x17
#define SV_OP_FLUSH		0x1c	/* IBA 1.5 annex A19 (RC only) */
#define SV_OP_ATOMIC_WRITE	0x1d

/* FLUSH Extended Transport Header: selectivity level, placement type */
#define SV_FETH_LEN		4
#define SV_FETH_SEL_SHIFT	4
#define SV_FETH_SEL_MASK	0x30
#define SV_FETH_PLT_MASK	0x0f

/* ACK Extended Transport Header: syndrome, MSN */
#define SV_AETH_ACK		0x00	/* low 5 bits: credits */
#define SV_AETH_RNR		0x20	/* low 5 bits: the RNR timer */
#define SV_AETH_NAK		0x60	/* low 5 bits: the NAK code */
#define SV_AETH_TYPE_MASK	0x60
#define SV_AETH_NO_CREDITS	0x1f	/* "invalid": end-to-end credits off */
#define SV_NAK_PSN_SEQ		0
#define SV_NAK_INV_REQ		1
#define SV_NAK_REM_ACCESS	2
#define SV_NAK_REM_OP		3

/* Atomic Extended Transport Header */
struct sv_atomic_eth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

/* RDMA Extended Transport Header */
struct sv_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

/*
 * A connected QP's state on the wire (its engine's, under qp->sq.lock):
 * made when a modify to RTR finds the destination GID on no device of
 * this host (sv_wire_qp_rtr()), freed with the QP.
 */
enum sv_wire_resp {
	SV_RESP_IDLE,		/* between messages */
	SV_RESP_SEND,		/* in a SEND: rw taken, off placed */
	SV_RESP_WRITE,		/* in an RDMA WRITE to va/rkey */
};

#define SV_WIRE_MAX_RES		SV_MAX_QP_RD_ATOM

/*
 * The RC requester (rc_req.c): at most SV_RC_MAX_FL WQEs (a power of 2)
 * and SV_RC_WINDOW packets past the first unacknowledged one on the wire
 * (a READ asks for its responses in pieces of that many, the last of
 * which may overshoot the window): a burst the peer's receive path and
 * the veth or NIC queues between can take. More go out as the answers
 * come back.
 */
#define SV_RC_MAX_FL		128
#define SV_RC_WINDOW		128

struct sv_wire_qp {
	bool on;		/* RTR reached with a remote destination */
	u32 epsn;		/* the responder's expected PSN */
	enum sv_wire_resp resp;
	bool have_wqe;		/* rw is a taken receive WQE, still unused */
	u64 off;		/* bytes of the message placed */
	u64 va;			/* RDMA WRITE: its RETH */
	u32 rkey;
	u32 dmalen;
	struct sv_rwqe rw;
	/* RC responder */
	u32 msn;		/* messages completed */
	bool nak_sent;		/* a PSN sequence NAK not yet answered */
	bool acked;		/* this packet's ACK went before its CQE */
	bool ack_pending;	/* an ACK for ack_psn held back */
	u32 ack_psn;
	u32 nres;		/* atomic results kept: max_dest_rd_atomic */
	u32 res_next;
	struct sv_wire_res {
		u32 psn;
		bool valid;
		u64 orig;
	} res[SV_WIRE_MAX_RES];
	/*
	 * RC requester (rc_req.c): the WQEs in flight, at the SQ's slots
	 * cons to cons + nfl - 1, fl[fl_head] the one at cons.
	 */
	u32 nfl;
	u32 fl_head;
	u32 nrd;		/* READs and atomics among them */
	u32 push_from;		/* those before it: all sent, or failed */
	bool resend;		/* go back when the wait ends */
	bool retrying;		/* went back to retry_psn, no answer yet */
	bool drain_notify;	/* SQD: SQ_DRAINED when none is in flight */
	u32 retry_psn;
	u64 deadline;		/* ktime_get_ns(): retransmit then */
	struct sv_rc_fl {
		u64 len;	/* its message length */
		u32 psn;	/* its first PSN */
		u32 npkts;	/* its packets (a READ: its responses) */
		u32 acked;	/* of them acknowledged (or placed) */
		u32 sent;	/* of them sent (a READ: asked for) */
		u16 mtu;
		u8 opcode;
		u8 status;	/* failed: its completion's status */
	} fl[SV_RC_MAX_FL];
	struct sk_buff_head resps;	/* ACKs and responses, in order */
};

/*
 * A frame rx.c took: the skb's data starts at its BTH (the IP header is
 * its network header), and it is linear and checked: the opcode is one
 * the device takes, the headers and pad fit, the ICRC is right. The
 * transport's view of it, from sv_wire_parse():
 */
struct sv_wire_pkt {
	const struct sv_bth *bth;
	const u8 *ext;		/* the extension headers after the BTH */
	const u8 *payload;
	u32 paylen;		/* without pad and ICRC */
	u32 dqpn;
	u8 opcode;
};

/* icrc.c */
u32 sv_icrc(const u8 *nh, bool v6, u32 len);

/* tx.c: the route and frame of one message; sv_wire_xmit() sends it */
struct sv_wire_tx {
	struct net_device *ndev;	/* held */
	struct dst_entry *dst;		/* held */
	struct sk_buff *skb;		/* headroom for IP and UDP */
	u8 sgid[16];
	u8 dgid[16];
	bool v6;
	u8 tclass;
	u8 hop_limit;
	u32 flow_label;
	u16 sport;
	u32 mtu;			/* the path's, in payload bytes */
};

int sv_wire_route(struct sv_device *sdev, struct sv_wire_tx *t,
		  u32 sgid_index);
void sv_wire_tx_release(struct sv_wire_tx *t);
void *sv_wire_frame(struct sv_wire_tx *t, u32 hdrs, u32 paylen);
int sv_wire_xmit(struct sv_device *sdev, struct sv_wire_tx *t);
void sv_wire_ip_hdr(const struct sv_wire_tx *t, void *nh, u32 l4len);
u16 sv_wire_sport(u32 flow_label, u32 qpn);

/* rx.c */
bool sv_wire_rx(struct sv_device *sdev, struct sk_buff *skb);
bool sv_wire_icrc_take(struct sv_device *sdev, const struct sk_buff *skb);
void sv_wire_parse(const struct sk_buff *skb, struct sv_wire_pkt *p);

/* qp.c: the QP side of the wire */
int sv_wire_qp_prepare(struct sv_qp *qp, u32 mask, const struct sv_qp_attr *a,
		       struct sv_wire_qp **w);
void sv_wire_qp_rtr(struct sv_qp *qp, struct sv_wire_qp **w, int remote);
void sv_wire_qp_rts(struct sv_qp *qp);
void sv_wire_qp_reset(struct sv_qp *qp);
bool sv_wire_from_peer(struct sv_qp *qp, const struct sk_buff *skb);
bool sv_wire_recv(struct sv_qp *qp, struct sk_buff *skb,
		  const struct sv_rx_meta *m, void *buf);
void sv_wire_tx_av(struct sv_qp *qp, struct sv_wire_tx *t, u32 *sgid_index);

/*
 * The operation starts, ends a message, carries immediate data, carries
 * an IETH (the rkey a SEND with invalidate frees)
 */
static inline bool sv_wire_op_first(u8 op)
{
	return op == SV_OP_SEND_FIRST || op == SV_OP_SEND_ONLY ||
	       op == SV_OP_SEND_ONLY_IMM || op == SV_OP_SEND_ONLY_INV ||
	       op == SV_OP_WRITE_FIRST ||
	       op == SV_OP_WRITE_ONLY || op == SV_OP_WRITE_ONLY_IMM;
}

static inline bool sv_wire_op_last(u8 op)
{
	return op != SV_OP_SEND_FIRST && op != SV_OP_SEND_MIDDLE &&
	       op != SV_OP_WRITE_FIRST && op != SV_OP_WRITE_MIDDLE;
}

static inline bool sv_wire_op_imm(u8 op)
{
	return op == SV_OP_SEND_LAST_IMM || op == SV_OP_SEND_ONLY_IMM ||
	       op == SV_OP_WRITE_LAST_IMM || op == SV_OP_WRITE_ONLY_IMM;
}

static inline bool sv_wire_op_inv(u8 op)
{
	return op == SV_OP_SEND_LAST_INV || op == SV_OP_SEND_ONLY_INV;
}

/* msg.c */
u8 sv_wire_msg_op(u32 wr_op, u32 i, u32 n);
u32 sv_wire_msg_hdrs(u32 wr_op, u32 i, u32 n);
void sv_wire_msg_ext(u8 *p, const struct sv_send_wqe *w, u64 len, u32 i,
		     u32 n);
int sv_wire_take(struct sv_qp *qp);
u32 sv_wire_place(struct sv_qp *qp, const struct sv_wire_pkt *p, void *buf);

/* uc.c */
enum sv_exec_result sv_wire_uc_send(struct sv_req *r, u32 *status);
void sv_wire_conn_rx(struct sv_device *sdev, const struct sv_wire_pkt *p,
		     struct sk_buff *skb);
bool sv_wire_uc_recv(struct sv_qp *qp, struct sk_buff *skb,
		     const struct sv_rx_meta *m, void *buf);

/* PSNs: a - b in PSN space (24 bits, wrapping), and psn + n */
static inline s32 sv_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

static inline u32 sv_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SV_BTH_PSN_MASK;
}

/* rc.c */
void sv_wire_rc_bth(struct sv_bth *bth, u8 op, u32 dqpn, u32 psn,
		    u32 paylen, bool se, bool ackreq);
bool sv_wire_rc_route(struct sv_qp *qp, struct sv_wire_tx *t);
bool sv_wire_rc_recv(struct sv_qp *qp, struct sk_buff *skb,
		     const struct sv_rx_meta *m, void *buf);
void sv_wire_rc_ack_flush(struct sv_qp *qp);
void sv_wire_qp_free(struct sv_qp *qp);

/* rc_req.c */
static inline bool sv_wire_rc_on(const struct sv_qp *qp)
{
	return qp->qp_type == SV_QPT_RC && qp->wire && qp->wire->on;
}

bool sv_wire_rc_run(struct sv_qp *qp, struct sv_send_wqe *w, u32 wsize,
		    void *buf, u32 budget, u32 *wqes, u64 *bytes, u64 *wake,
		    u64 *started);
void sv_wire_rc_forget(struct sv_qp *qp);
bool sv_wire_rc_drain_later(struct sv_qp *qp);

/* The destination address of a frame rx.c took, as a GID. */
static inline void sv_wire_dgid(const struct sk_buff *skb, u8 *gid)
{
	const u8 *nh = skb_network_header(skb);

	if ((nh[0] >> 4) == 6)
		memcpy(gid, &((const struct ipv6hdr *)nh)->daddr, 16);
	else
		ipv6_addr_set_v4mapped(((const struct iphdr *)nh)->daddr,
				       (struct in6_addr *)gid);
}

/* mcast.c */
int sv_wire_mc_join(struct net_device *ndev, const u8 *gid, bool join);

/* ud.c */
enum sv_exec_result sv_wire_ud_send(struct sv_req *r, u32 *status);
void sv_wire_ud_rx(struct sv_device *sdev, const struct sv_wire_pkt *p,
		   struct sk_buff *skb);
bool sv_wire_ud_recv(struct sv_qp *qp, struct sk_buff *skb,
		     const struct sv_rx_meta *m, void *buf);

/* cm/mad.c: a UD frame to QP1 */
void sv_cm_rx_frame(struct sv_device *sdev, const struct sv_wire_pkt *p,
		    struct sk_buff *skb);

#endif /* SV_WIRE_H */
