// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs receive WQ indirection tables and RSS QPs.
 *
 * An indirection table (ibv_create_rwq_ind_table) names 1 << log_size
 * WQs, each referenced with its usecnt held (a WQ in a table cannot be
 * destroyed: EBUSY). An RSS QP (ibv_create_qp_ex with an indirection
 * table and rx_hash_conf) is a RAW_PACKET QP made by sv_create_qp() with
 * no queue of its own (its one-slot rings are never used), held in RTR so
 * that the steering path delivers frames to it, and holding its table.
 * Its flows' frames are handed, in the softirq that received them (rx.c),
 * to the WQ at index hash & (size - 1), where hash is the Toeplitz hash,
 * with the QP's 40-byte key, of the selected fields in the order source
 * IP, destination IP, source port, destination port, SPI (the Microsoft
 * RSS order). The outer headers are hashed, or the inner ones of a VXLAN
 * or GRE tunnel with IBV_RX_HASH_INNER. A field the
 * frame lacks (an IPv6 address of an IPv4 frame, TCP ports of a UDP
 * datagram or of a non-first fragment, an SPI without ESP) is left out of
 * the input: a frame with none of the fields hashes to 0, entry 0.
 *
 * Checks follow mlx5 (create_rss_raw_qp_tir): a hash function other than
 * Toeplitz is EOPNOTSUPP, a key of other than 40 bytes EINVAL, IPv4 and
 * IPv6 fields together EINVAL, more than one of TCP ports, UDP ports and
 * the SPI EINVAL, no fields with a table of more than one entry EINVAL.
 * An RSS QP cannot be modified or queried (EOPNOTSUPP; mlx5 says ENOSYS).
 */
#include <linux/capability.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "../compat.h"
#include "rss.h"

#define SV_RX_HASH_L3_V4	(SV_RX_HASH_SRC_IPV4 | SV_RX_HASH_DST_IPV4)
#define SV_RX_HASH_L3_V6	(SV_RX_HASH_SRC_IPV6 | SV_RX_HASH_DST_IPV6)
#define SV_RX_HASH_TCP		(SV_RX_HASH_SRC_PORT_TCP | \
				 SV_RX_HASH_DST_PORT_TCP)
#define SV_RX_HASH_UDP		(SV_RX_HASH_SRC_PORT_UDP | \
				 SV_RX_HASH_DST_PORT_UDP)
#define SV_RX_HASH_KNOWN	(SV_RX_HASH_L3_V4 | SV_RX_HASH_L3_V6 | \
				 SV_RX_HASH_TCP | SV_RX_HASH_UDP |	\
				 SV_RX_HASH_IPSEC_SPI | SV_RX_HASH_INNER)

/* ---- indirection tables ---- */

static struct sv_rwq_ind_tbl *to_sv_ind_tbl(struct sv_uobj *u)
{
	return container_of(u, struct sv_rwq_ind_tbl, uobj);
}

static void sv_ind_tbl_destroy(struct sv_uobj *u)
{
	struct sv_rwq_ind_tbl *t = to_sv_ind_tbl(u);
	u32 i;

	for (i = 0; i < (1U << t->log_size); i++)
		atomic_dec(&t->wqs[i]->uobj.usecnt);
}

static void sv_ind_tbl_free(struct sv_uobj *u)
{
	struct sv_rwq_ind_tbl *t = to_sv_ind_tbl(u);
	u32 i;

	for (i = 0; i < (1U << t->log_size); i++)
		sv_uobj_put(&t->wqs[i]->uobj);
	kvfree(t);
}

static const struct sv_uobj_ops sv_ind_tbl_ops = {
	.destroy = sv_ind_tbl_destroy,
	.free = sv_ind_tbl_free,
};

int sv_create_rwq_ind_tbl(struct sv_file *f, void *arg)
{
	struct sv_create_rwq_ind_tbl *c = arg;
	struct sv_rwq_ind_tbl *t;
	u32 *handles, n, i, got = 0;
	struct sv_rwq *wq;
	int ret;

	if (c->log_size > SV_MAX_LOG_IND_TBL_SIZE)
		return -EINVAL;
	n = 1U << c->log_size;
	handles = memdup_array_user(u64_to_user_ptr(c->wq_handles), n,
				    sizeof(u32));
	if (IS_ERR(handles))
		return PTR_ERR(handles);
	t = kvzalloc(struct_size(t, wqs, n), GFP_KERNEL_ACCOUNT);
	if (!t) {
		ret = -ENOMEM;
		goto out;
	}
	t->log_size = c->log_size;
	for (got = 0; got < n; got++) {
		wq = sv_rwq_get(f, handles[got]);
		if (IS_ERR(wq)) {
			ret = -EINVAL;
			goto err_wqs;
		}
		t->wqs[got] = wq;
	}
	/* SV_MAX_RWQ_IND_TBL (ENOMEM), the user's share, the rdma cgroup */
	ret = sv_charge(f, SV_OBJ_RWQ_IND_TBL, &t->uobj.charge);
	if (ret)
		goto err_wqs;
	for (i = 0; i < n; i++)
		atomic_inc(&t->wqs[i]->uobj.usecnt);
	ret = sv_uobj_add(f, &t->uobj, SV_OBJ_RWQ_IND_TBL, &sv_ind_tbl_ops);
	if (ret) {
		for (i = 0; i < n; i++)
			atomic_dec(&t->wqs[i]->uobj.usecnt);
		sv_uncharge(&t->uobj.charge);
		goto err_wqs;
	}
	c->handle = t->uobj.handle;
	c->ind_tbl_num = t->uobj.handle;
	kfree(handles);
	return 0;

err_wqs:
	for (i = 0; i < got; i++)
		sv_uobj_put(&t->wqs[i]->uobj);
	kvfree(t);
out:
	kfree(handles);
	return ret;
}

int sv_destroy_rwq_ind_tbl(struct sv_file *f, void *arg)
{
	struct sv_destroy_rwq_ind_tbl *d = arg;

	return sv_uobj_destroy(f, d->handle, SV_OBJ_RWQ_IND_TBL);
}

/* ---- the hash ---- */

/* Toeplitz over len (at most key length - 4) bytes of data. */
u32 sv_toeplitz(const u8 *key, const u8 *data, u32 len)
{
	u32 v = get_unaligned_be32(key);
	u32 hash = 0, i, b;

	for (i = 0; i < len; i++) {
		for (b = 0; b < 8; b++) {
			if (data[i] & (0x80 >> b))
				hash ^= v;
			v = (v << 1) | ((key[i + 4] >> (7 - b)) & 1);
		}
	}
	return hash;
}

/* The hash input of a frame's key: at most 36 bytes. */
static u32 sv_rss_input(const struct sv_rss_qp *r,
			const struct sv_flow_key *k, u8 in[36])
{
	const struct sv_flow_hdrs *h = r->fields & SV_RX_HASH_INNER ?
				       &k->inner : &k->outer;
	u64 f = r->fields;
	u32 n = 0;

	if (h->l3 == 4) {
		if (f & SV_RX_HASH_SRC_IPV4) {
			memcpy(in + n, h->src_ip + 12, 4);
			n += 4;
		}
		if (f & SV_RX_HASH_DST_IPV4) {
			memcpy(in + n, h->dst_ip + 12, 4);
			n += 4;
		}
	} else if (h->l3 == 6) {
		if (f & SV_RX_HASH_SRC_IPV6) {
			memcpy(in + n, h->src_ip, 16);
			n += 16;
		}
		if (f & SV_RX_HASH_DST_IPV6) {
			memcpy(in + n, h->dst_ip, 16);
			n += 16;
		}
	}
	if ((h->l4 == IPPROTO_TCP && (f & SV_RX_HASH_TCP)) ||
	    (h->l4 == IPPROTO_UDP && (f & SV_RX_HASH_UDP))) {
		bool tcp = h->l4 == IPPROTO_TCP;

		if (f & (SV_RX_HASH_SRC_PORT_TCP | SV_RX_HASH_SRC_PORT_UDP)) {
			memcpy(in + n, tcp ? &h->tcp_sport : &h->udp_sport, 2);
			n += 2;
		}
		if (f & (SV_RX_HASH_DST_PORT_TCP | SV_RX_HASH_DST_PORT_UDP)) {
			memcpy(in + n, tcp ? &h->tcp_dport : &h->udp_dport, 2);
			n += 2;
		}
	}
	if ((f & SV_RX_HASH_IPSEC_SPI) && k->outer.ip_proto == IPPROTO_ESP) {
		memcpy(in + n, &k->esp_spi, 4);
		n += 4;
	}
	return n;
}

/*
 * One frame an RSS QP's flow gave it, into the WQ its hash picks.
 * Softirq, under qp->lock with the QP not dead: it holds its table.
 */
bool sv_rss_recv_frame(struct sv_qp *qp, struct sk_buff *skb,
		       const struct sv_rx_meta *m, void *buf)
{
	const struct sv_rss_qp *r = qp->rss;
	struct sv_flow_key key;
	u32 hash = 0, len;
	u8 in[36];

	if (r->fields) {
		sv_steer_parse(skb, &key);
		len = sv_rss_input(r, &key, in);
		hash = sv_toeplitz(r->key, in, len);
	}
	return sv_rwq_recv_frame(r->tbl->wqs[hash & ((1U << r->tbl->log_size) - 1)],
				 skb, m, buf);
}

/* ---- RSS QPs ---- */

static int sv_rss_check(struct sv_file *f, const struct sv_create_rss_qp *c)
{
	u64 m = c->fields_mask;

	if (c->flags & ~SV_CREATE_QP_TIR_FLAGS)
		return -EINVAL;
	if ((c->flags & SV_CREATE_QP_TIR_SELF_LB) &&
	    !(c->flags & SV_CREATE_QP_MLX5_TIR))
		return -EINVAL;
	/* As for any RAW_PACKET QP (sv_create_qp() checks it again). */
	if (!READ_ONCE(f->sdev->ndev))
		return -EOPNOTSUPP;
	if (!ns_capable(read_pnet(&f->sdev->net)->user_ns, CAP_NET_RAW))
		return -EPERM;
	if (c->hash_function != SV_RX_HASH_FUNC_TOEPLITZ)
		return -EOPNOTSUPP;
	if (c->key_len != SV_RX_HASH_KEY_LEN || (m & ~SV_RX_HASH_KNOWN))
		return -EINVAL;
	if ((m & SV_RX_HASH_L3_V4) && (m & SV_RX_HASH_L3_V6))
		return -EINVAL;
	if (!!(m & SV_RX_HASH_TCP) + !!(m & SV_RX_HASH_UDP) +
	    !!(m & SV_RX_HASH_IPSEC_SPI) > 1)
		return -EINVAL;
	/*
	 * An mlx5 TIR hashes on inner fields only with tunnel offloads
	 * (mlx5_ib's create_rss_raw_qp_tir()); plain verbs RSS QPs may.
	 */
	if ((c->flags & SV_CREATE_QP_MLX5_TIR) && (m & SV_RX_HASH_INNER) &&
	    !(c->flags & SV_CREATE_QP_TUNNEL_OFFLOADS))
		return -EOPNOTSUPP;
	return 0;
}

int sv_create_rss_qp(struct sv_file *f, void *arg)
{
	struct sv_create_rss_qp *c = arg;
	struct sv_create_qp qc = { .size = sizeof(qc) };
	struct sv_rwq_ind_tbl *t;
	struct sv_rss_qp *r;
	struct sv_uobj *u;
	struct sv_qp *qp;
	int ret;

	ret = sv_rss_check(f, c);
	if (ret)
		return ret;
	u = sv_uobj_get(f, c->ind_tbl_handle, SV_OBJ_RWQ_IND_TBL);
	if (IS_ERR(u))
		return PTR_ERR(u);
	t = to_sv_ind_tbl(u);
	if (!c->fields_mask && t->log_size) {
		ret = -EINVAL;
		goto err_tbl;
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r) {
		ret = -ENOMEM;
		goto err_tbl;
	}
	r->tbl = t;
	r->fields = c->fields_mask;
	memcpy(r->key, c->key, sizeof(r->key));

	/*
	 * The QP proper: no queues, the CQ of the table's first WQ named
	 * for both (that WQ holds it anyway); nothing is ever posted.
	 */
	qc.pd_handle = c->pd_handle;
	qc.send_cq_handle = t->wqs[0]->shadow.recv_cq->handle;
	qc.recv_cq_handle = qc.send_cq_handle;
	qc.qp_type = SV_QPT_RAW_PACKET;
	qc.flags = c->flags;
	qc.user_handle = c->user_handle;
	ret = sv_create_qp(f, &qc);
	if (ret)
		goto err_rss;
	u = sv_uobj_get(f, qc.handle, SV_OBJ_QP);
	if (WARN_ON_ONCE(IS_ERR(u))) {
		ret = PTR_ERR(u);
		goto err_rss;
	}
	qp = container_of(u, struct sv_qp, uobj);
	atomic_inc(&t->uobj.usecnt);
	/* Control ioctls of the file are serialized: nobody saw it yet. */
	spin_lock_bh(&qp->lock);
	qp->rss = r;
	qp->attr.qp_state = SV_QPS_RTR;
	spin_unlock_bh(&qp->lock);
	sv_uobj_put(u);
	c->handle = qc.handle;
	c->qpn = qc.qpn;
	return 0;

err_rss:
	kfree(r);
err_tbl:
	sv_uobj_put(&t->uobj);
	return ret;
}

/* The RSS QP is destroyed: its engine no longer runs it. */
void sv_rss_qp_destroy(struct sv_qp *qp)
{
	struct sv_rss_qp *r = qp->rss;

	if (!r)
		return;
	qp->rss = NULL;
	atomic_dec(&r->tbl->uobj.usecnt);
	sv_uobj_put(&r->tbl->uobj);
	kfree(r);
}
