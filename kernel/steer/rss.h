/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softverbs receive WQs, receive WQ indirection tables and RSS QPs.
 *
 *   wq.c   SV_IOC_CREATE_WQ / _MODIFY_WQ / _DESTROY_WQ: a receive ring
 *          (the RQ format of a QP), its CQ and PD, the RESET/RDY/ERR
 *          states; its flags (CVLAN stripping, FCS scattering) ask
 *          rxmeta.c, as a RAW_PACKET QP's create flags do
 *   rss.c  SV_IOC_CREATE_RWQ_IND_TBL / _DESTROY_RWQ_IND_TBL and
 *          SV_IOC_CREATE_RSS_QP: a RAW_PACKET QP without queues of its
 *          own; the frames its flows give it are queued on it like any
 *          RAW_PACKET QP's (rx.c) and its engine pass hands each to the
 *          WQ that the Toeplitz hash of the frame picks
 */
#ifndef SV_RSS_H
#define SV_RSS_H

#include "steer.h"

/*
 * A receive WQ. Its receive side is a QP as exec.c knows one (shadow):
 * shadow.rq is the ring, shadow.recv_cq the CQ, shadow.pd the PD,
 * shadow.qpn the WQ number, so sv_exec_recv_frame() fills its WQEs and
 * reports wq_num as the completion's qp_num. Nothing else of shadow is
 * used: it is never in the device's QP table or on an engine.
 */
struct sv_rwq {
	struct sv_uobj uobj;		/* first */
	struct sv_device *sdev;
	u32 state;			/* SV_WQS_*; shadow.rq.lock */
	u32 flags;			/* SV_WQ_FLAGS_*; shadow.rq.lock */
	u64 user_handle;
	struct sv_qp shadow;
};

struct sv_rwq_ind_tbl {
	struct sv_uobj uobj;		/* first */
	u32 log_size;
	struct sv_rwq *wqs[];		/* referenced, usecnt held */
};

struct sv_rss_qp {
	struct sv_rwq_ind_tbl *tbl;	/* referenced, usecnt held */
	u64 fields;			/* SV_RX_HASH_* */
	u8 key[SV_RX_HASH_KEY_LEN];
};

/* wq.c */
struct sv_rwq *sv_rwq_get(struct sv_file *f, u32 handle);
bool sv_rwq_recv_frame(struct sv_rwq *wq, struct sk_buff *skb,
		       const struct sv_rx_meta *m, void *buf);

/* rss.c */
u32 sv_toeplitz(const u8 *key, const u8 *data, u32 len);

#endif /* SV_RSS_H */
