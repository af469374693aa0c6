// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs steering actions: SV_IOC_CREATE/DESTROY_STEER_ACTION, the
 * kernel half of mlx5 DR's push_vlan, modify_header, packet_reformat and
 * dest_array actions (user/compat/mlx5_dr.c), and the flows that use
 * them (SV_FLOW_SPEC_REWRITE, _POP_VLAN, _DEST_MIRROR).
 *
 * An action is fixed at its creation: its arguments are checked and
 * turned into what the frame path needs (modify-header actions into
 * field descriptors, an encap header with the offsets of the lengths to
 * fill in, a mirror's destinations referenced). A flow holds the actions
 * it uses (a reference and a usecnt: EBUSY while used); a mirror holds
 * its QPs, tables and encap actions the same way. Memory goes with the
 * last reference, which the flows drop a grace period after their
 * removal (flow.c), so frames never see a freed action.
 *
 * The rewrites themselves (rewrite.c) work on a private copy of the
 * frame: the original may be shared with taps and the stack.
 */
#include <linux/capability.h>
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <linux/uaccess.h>

#include "steer.h"

static struct sv_steer_action *to_sv_action(struct sv_uobj *u)
{
	return container_of(u, struct sv_steer_action, uobj);
}

/* The mirror's destinations: the holds of its live handle. */
static void sv_mirror_unuse(struct sv_steer_action *a, u32 n)
{
	struct sv_mirror_dest *d;
	u32 i;

	for (i = 0; i < n; i++) {
		d = &a->dests[i];
		if (d->qp)
			atomic_dec(&d->qp->uobj.usecnt);
		if (d->table)
			sv_steer_table_unuse(d->table);
		if (d->encap)
			atomic_dec(&d->encap->uobj.usecnt);
	}
}

static void sv_mirror_put(struct sv_steer_action *a, u32 n)
{
	struct sv_mirror_dest *d;
	u32 i;

	for (i = 0; i < n; i++) {
		d = &a->dests[i];
		if (d->qp)
			sv_qp_put(d->qp);
		if (d->table)
			sv_uobj_put(d->table);
		if (d->encap)
			sv_uobj_put(&d->encap->uobj);
	}
}

static void sv_action_destroy(struct sv_uobj *u)
{
	struct sv_steer_action *a = to_sv_action(u);

	if (a->type == SV_STEER_ACT_MIRROR)
		sv_mirror_unuse(a, a->n);
}

static void sv_action_free(struct sv_uobj *u)
{
	struct sv_steer_action *a = to_sv_action(u);

	if (a->type == SV_STEER_ACT_MIRROR)
		sv_mirror_put(a, a->n);
	kfree(a->mods);
	kfree(a->hdr);
	kfree(a->dests);
	kfree(a);
}

static const struct sv_uobj_ops sv_action_ops = {
	.destroy = sv_action_destroy,
	.free = sv_action_free,
};

/* ---- modify header: the PRM's set_action_in / add_action_in ---- */

/* mlx5_ifc.h's MLX5_ACTION_IN_FIELD_OUT_* (the PRM's field ids) */
enum {
	SV_FLD_SMAC_47_16 = 0x01,
	SV_FLD_SMAC_15_0 = 0x02,
	SV_FLD_ETHERTYPE = 0x03,
	SV_FLD_DMAC_47_16 = 0x04,
	SV_FLD_DMAC_15_0 = 0x05,
	SV_FLD_IP_DSCP = 0x06,
	SV_FLD_TCP_FLAGS = 0x07,
	SV_FLD_TCP_SPORT = 0x08,
	SV_FLD_TCP_DPORT = 0x09,
	SV_FLD_IP_TTL = 0x0a,
	SV_FLD_UDP_SPORT = 0x0b,
	SV_FLD_UDP_DPORT = 0x0c,
	SV_FLD_SIPV6_127_96 = 0x0d,	/* .. 0x10: SIPV6_31_0 */
	SV_FLD_DIPV6_127_96 = 0x11,	/* .. 0x14: DIPV6_31_0 */
	SV_FLD_SIPV4 = 0x15,
	SV_FLD_DIPV4 = 0x16,
	SV_FLD_FIRST_VID = 0x17,
	SV_FLD_IPV6_HOPLIMIT = 0x47,
	SV_FLD_METADATA_REGA = 0x49,
	SV_FLD_METADATA_REGB = 0x50,
	SV_FLD_METADATA_REGC_0 = 0x51,	/* .. 0x56: REGC_5 */
	SV_FLD_METADATA_REGC_5 = 0x56,
	SV_FLD_TCP_SEQ_NUM = 0x59,
	SV_FLD_TCP_ACK_NUM = 0x5b,
	SV_FLD_GTPU_TEID = 0x6e,
	SV_FLD_IP_ECN = 0x73,
};

#define SV_MOD_TYPE_SET		1
#define SV_MOD_TYPE_ADD		2
#define SV_MOD_TYPE_COPY	3

/*
 * Where each field is: its header, the byte offset and width of the
 * bytes that hold it, its bit 0 there and its width (mlx5 DR's lengths).
 * IP_DSCP and IP_ECN sit in IPv4's TOS byte or IPv6's first word.
 */
#define F(w, o, b, s, n, x) { .where = w, .off = o, .bytes = b, .shift = s, \
			     .width = n, .flags = x }
static const struct sv_mod_field sv_mod_fields[] = {
	[SV_FLD_SMAC_47_16] = F(SV_MW_ETH, 6, 4, 0, 32, 0),
	[SV_FLD_SMAC_15_0] = F(SV_MW_ETH, 10, 2, 0, 16, 0),
	[SV_FLD_ETHERTYPE] = F(SV_MW_ETYPE, 0, 2, 0, 16, 0),
	[SV_FLD_DMAC_47_16] = F(SV_MW_ETH, 0, 4, 0, 32, 0),
	[SV_FLD_DMAC_15_0] = F(SV_MW_ETH, 4, 2, 0, 16, 0),
	[SV_FLD_IP_DSCP] = F(SV_MW_IP, 1, 1, 2, 6, 0),
	[SV_FLD_TCP_FLAGS] = F(SV_MW_TCP, 12, 2, 0, 9, 0),
	[SV_FLD_TCP_SPORT] = F(SV_MW_TCP, 0, 2, 0, 16, 0),
	[SV_FLD_TCP_DPORT] = F(SV_MW_TCP, 2, 2, 0, 16, 0),
	[SV_FLD_IP_TTL] = F(SV_MW_IP4, 8, 1, 0, 8, SV_MF_ADD),
	[SV_FLD_UDP_SPORT] = F(SV_MW_UDP, 0, 2, 0, 16, 0),
	[SV_FLD_UDP_DPORT] = F(SV_MW_UDP, 2, 2, 0, 16, 0),
	[0x0d] = F(SV_MW_IP6, 8, 4, 0, 32, SV_MF_PSEUDO),
	[0x0e] = F(SV_MW_IP6, 12, 4, 0, 32, SV_MF_PSEUDO),
	[0x0f] = F(SV_MW_IP6, 16, 4, 0, 32, SV_MF_PSEUDO),
	[0x10] = F(SV_MW_IP6, 20, 4, 0, 32, SV_MF_PSEUDO),
	[0x11] = F(SV_MW_IP6, 24, 4, 0, 32, SV_MF_PSEUDO),
	[0x12] = F(SV_MW_IP6, 28, 4, 0, 32, SV_MF_PSEUDO),
	[0x13] = F(SV_MW_IP6, 32, 4, 0, 32, SV_MF_PSEUDO),
	[0x14] = F(SV_MW_IP6, 36, 4, 0, 32, SV_MF_PSEUDO),
	[SV_FLD_SIPV4] = F(SV_MW_IP4, 12, 4, 0, 32, SV_MF_PSEUDO),
	[SV_FLD_DIPV4] = F(SV_MW_IP4, 16, 4, 0, 32, SV_MF_PSEUDO),
	[SV_FLD_FIRST_VID] = F(SV_MW_VLAN, 2, 2, 0, 16, 0),
	[SV_FLD_IPV6_HOPLIMIT] = F(SV_MW_IP6, 7, 1, 0, 8, SV_MF_ADD),
	[SV_FLD_TCP_SEQ_NUM] = F(SV_MW_TCP, 4, 4, 0, 32, SV_MF_ADD),
	[SV_FLD_TCP_ACK_NUM] = F(SV_MW_TCP, 8, 4, 0, 32, SV_MF_ADD),
	[SV_FLD_IP_ECN] = F(SV_MW_IP, 1, 1, 0, 2, 0),
};

#undef F

/* The L3 and L4 kinds a field belongs to, for mlx5 DR's mixing rules. */
static u8 sv_mod_l3(const struct sv_mod_field *d)
{
	return d->where == SV_MW_IP4 ? 4 : d->where == SV_MW_IP6 ? 6 : 0;
}

static u8 sv_mod_l4(const struct sv_mod_field *d)
{
	return d->where == SV_MW_TCP ? IPPROTO_TCP :
	       d->where == SV_MW_UDP ? IPPROTO_UDP : 0;
}

/*
 * One 64-bit action (big-endian) into @m; what mlx5 DR refuses, refused
 * with its errno: an unknown type EOPNOTSUPP (copy too: softverbs has
 * no copy), an unknown field EINVAL, a field without a header here
 * (metadata registers, GTP-U) EOPNOTSUPP.
 */
static int sv_mod_parse(__be64 raw, struct sv_rw_mod *m)
{
	u64 v = be64_to_cpu(raw);
	u32 type = v >> 60, field = (v >> 48) & 0xfff;
	u32 off = (v >> 40) & 0x1f, len = (v >> 32) & 0x1f;
	const struct sv_mod_field *d = NULL;

	if (type != SV_MOD_TYPE_SET && type != SV_MOD_TYPE_ADD)
		return -EOPNOTSUPP;
	/* mlx5 DR: an add only on TTL, hop limit, TCP sequence or ack */
	if (type == SV_MOD_TYPE_ADD && field != SV_FLD_IP_TTL &&
	    field != SV_FLD_IPV6_HOPLIMIT && field != SV_FLD_TCP_SEQ_NUM &&
	    field != SV_FLD_TCP_ACK_NUM)
		return -EINVAL;
	if (field < ARRAY_SIZE(sv_mod_fields) && sv_mod_fields[field].width)
		d = &sv_mod_fields[field];
	if (!d) {
		if (field == SV_FLD_METADATA_REGA ||
		    field == SV_FLD_METADATA_REGB ||
		    (field >= SV_FLD_METADATA_REGC_0 &&
		     field <= SV_FLD_METADATA_REGC_5) ||
		    field == SV_FLD_GTPU_TEID)
			return -EOPNOTSUPP;
		return -EINVAL;
	}
	m->type = type;
	m->field = d;
	m->data = (u32)v;
	if (type == SV_MOD_TYPE_ADD) {
		/* add_action_in: no offset, no length */
		if ((v >> 32) & 0xffff)
			return -EINVAL;
		m->off = 0;
		m->len = d->width;
		return 0;
	}
	if ((v >> 32) & 0xe0e0)
		return -EINVAL;
	if (!len)
		len = 32;
	if (off + len > d->width)
		return -EINVAL;
	m->off = off;
	m->len = len;
	return 0;
}

static int sv_action_modify(struct sv_steer_action *a, const void *buf,
			    u32 len)
{
	const __be64 *raw = buf;
	u8 l3 = 0, l4 = 0, x;
	u32 i, n = len / 8;
	int ret;

	if (!n || len % 8 || n > SV_STEER_MAX_MODIFY)
		return -EINVAL;
	a->mods = kcalloc(n, sizeof(*a->mods), GFP_KERNEL_ACCOUNT);
	if (!a->mods)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ret = sv_mod_parse(raw[i], &a->mods[i]);
		if (ret)
			return ret;
		/* mlx5 DR: one L3 type (ENOTSUP) and one L4 type (EINVAL) */
		x = sv_mod_l3(a->mods[i].field);
		if (x && l3 && x != l3)
			return -EOPNOTSUPP;
		l3 = l3 ?: x;
		x = sv_mod_l4(a->mods[i].field);
		if (x && l4 && x != l4)
			return -EINVAL;
		l4 = l4 ?: x;
	}
	a->n = n;
	return 0;
}

/* ---- packet reformat: the encap header ---- */

static int sv_action_encap(struct sv_steer_action *a, const u8 *h, u32 len)
{
	u32 off = ETH_HLEN, ihl;
	__be16 proto;

	if (len < ETH_HLEN || len > SV_STEER_MAX_ENCAP)
		return -EINVAL;
	proto = *(const __be16 *)(h + 12);
	if (eth_type_vlan(proto)) {
		if (len < VLAN_ETH_HLEN)
			return -EINVAL;
		proto = *(const __be16 *)(h + 16);
		off = VLAN_ETH_HLEN;
	}
	if (proto == htons(ETH_P_IP)) {
		if (len < off + sizeof(struct iphdr) || (h[off] >> 4) != 4)
			return -EINVAL;
		ihl = (h[off] & 0xf) * 4;
		if (ihl < sizeof(struct iphdr) || len < off + ihl)
			return -EINVAL;
		a->l3 = 4;
		a->l3off = off;
		a->l4off = off + ihl;
		if (h[off + 9] == IPPROTO_UDP)
			a->udp = true;
	} else if (proto == htons(ETH_P_IPV6)) {
		if (len < off + sizeof(struct ipv6hdr) || (h[off] >> 4) != 6)
			return -EINVAL;
		a->l3 = 6;
		a->l3off = off;
		a->l4off = off + sizeof(struct ipv6hdr);
		if (h[off + 6] == IPPROTO_UDP)
			a->udp = true;
	}
	if (a->udp && len < a->l4off + sizeof(struct udphdr))
		return -EINVAL;
	a->hdr = kmemdup(h, len, GFP_KERNEL_ACCOUNT);
	if (!a->hdr)
		return -ENOMEM;
	a->n = len;
	return 0;
}

/* ---- dest_array: the mirror's destinations ---- */

static int sv_mirror_dest(struct sv_file *f, struct sv_steer_action *a,
			  const struct sv_steer_dest *s, struct sv_mirror_dest *d)
{
	struct sv_uobj *u;
	struct sv_qp *qp;

	if (s->reserved)
		return -EINVAL;
	switch (s->type) {
	case SV_STEER_DEST_QP:
		u = sv_uobj_get(f, s->handle, SV_OBJ_QP);
		if (IS_ERR(u))
			return -EINVAL;
		qp = container_of(u, struct sv_qp, uobj);
		if (qp->qp_type != SV_QPT_RAW_PACKET &&
		    qp->qp_type != SV_QPT_UD) {
			sv_qp_put(qp);
			return -EINVAL;
		}
		atomic_inc(&u->usecnt);
		d->qp = qp;
		break;
	case SV_STEER_DEST_TABLE:
		u = sv_steer_table_use(f, s->handle, a->flags);
		if (IS_ERR(u))
			return PTR_ERR(u);
		d->table = u;
		d->st = sv_steer_table_st(u);
		if (!a->min_level || sv_steer_table_level(u) < a->min_level)
			a->min_level = sv_steer_table_level(u);
		break;
	default:
		return -EINVAL;
	}
	if (!s->encap_handle)
		return 0;
	u = sv_uobj_get(f, s->encap_handle, SV_OBJ_STEER_ACTION);
	if (IS_ERR(u))
		return -EINVAL;
	if (to_sv_action(u)->type != SV_STEER_ACT_ENCAP) {
		sv_uobj_put(u);
		return -EOPNOTSUPP;
	}
	atomic_inc(&u->usecnt);
	d->encap = to_sv_action(u);
	return 0;
}

static int sv_action_mirror(struct sv_file *f, struct sv_steer_action *a,
			    const void *buf, u32 len)
{
	const struct sv_steer_dest *s = buf;
	u32 i, n = len / sizeof(*s);
	int ret;

	BUILD_BUG_ON(sizeof(*s) != 16);
	if (a->flags)
		return -EOPNOTSUPP;	/* mlx5 DR: NIC_RX (and FDB) only */
	if (len % sizeof(*s) || n < 2 || n > SV_STEER_MAX_DEST)
		return -EINVAL;
	a->dests = kcalloc(n, sizeof(*a->dests), GFP_KERNEL_ACCOUNT);
	if (!a->dests)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ret = sv_mirror_dest(f, a, &s[i], &a->dests[i]);
		if (ret) {
			/* What this entry took, then the ones before it */
			sv_mirror_unuse(a, i + 1);
			sv_mirror_put(a, i + 1);
			return ret;
		}
	}
	a->n = n;
	return 0;
}

int sv_create_steer_action(struct sv_file *f, void *arg)
{
	struct sv_create_steer_action *c = arg;
	struct sv_steer_action *a;
	void *buf = NULL;
	u16 tpid;
	int ret;

	BUILD_BUG_ON(sizeof(struct sv_create_steer_action) !=
		     SV_CREATE_STEER_ACTION_SIZE_VER0);
	if (c->flags & ~SV_FLOW_ATTR_FLAGS_EGRESS)
		return -EINVAL;
	if (c->type == SV_STEER_ACT_PUSH_VLAN) {
		tpid = be32_to_cpu(c->vlan_hdr) >> 16;
		if ((tpid != ETH_P_8021Q && tpid != ETH_P_8021AD) ||
		    c->data_len)
			return -EINVAL;
	} else if (c->vlan_hdr) {
		return -EINVAL;
	}
	switch (c->type) {
	case SV_STEER_ACT_PUSH_VLAN:
	case SV_STEER_ACT_DECAP:
		if (c->data_len)
			return -EINVAL;
		break;
	case SV_STEER_ACT_MODIFY:
		if (!c->data_len || c->data_len > SV_STEER_MAX_MODIFY * 8)
			return -EINVAL;
		break;
	case SV_STEER_ACT_ENCAP:
		if (c->data_len > SV_STEER_MAX_ENCAP)
			return -EINVAL;
		break;
	case SV_STEER_ACT_MIRROR:
		if (c->data_len > SV_STEER_MAX_DEST * sizeof(struct sv_steer_dest))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	if (!a)
		return -ENOMEM;
	a->type = c->type;
	a->flags = c->flags;
	a->vlan_hdr = c->vlan_hdr;
	if (c->data_len) {
		buf = memdup_user(u64_to_user_ptr(c->data), c->data_len);
		if (IS_ERR(buf)) {
			ret = PTR_ERR(buf);
			buf = NULL;
			goto err;
		}
	}
	switch (c->type) {
	case SV_STEER_ACT_MODIFY:
		ret = sv_action_modify(a, buf, c->data_len);
		break;
	case SV_STEER_ACT_ENCAP:
		ret = sv_action_encap(a, buf, c->data_len);
		break;
	case SV_STEER_ACT_MIRROR:
		ret = sv_action_mirror(f, a, buf, c->data_len);
		break;
	default:
		ret = 0;
		break;
	}
	if (ret)
		goto err;
	ret = sv_uobj_add(f, &a->uobj, SV_OBJ_STEER_ACTION, &sv_action_ops);
	if (ret) {
		if (a->type == SV_STEER_ACT_MIRROR) {
			sv_mirror_unuse(a, a->n);
			sv_mirror_put(a, a->n);
		}
		goto err;
	}
	kfree(buf);
	c->handle = a->uobj.handle;
	return 0;
err:
	kfree(buf);
	kfree(a->mods);
	kfree(a->hdr);
	kfree(a->dests);
	kfree(a);
	return ret;
}

int sv_destroy_steer_action(struct sv_file *f, void *arg)
{
	struct sv_destroy_steer_obj *d = arg;

	return sv_uobj_destroy(f, d->handle, SV_OBJ_STEER_ACTION);
}

/* ---- the flows that use them ---- */

/*
 * The rewrite specs a flow's parse collected (in their order; handle 0
 * for a pop) and its mirror: each bound, referenced with a usecnt.
 * Under f->lock.
 */
int sv_flow_rw_apply(struct sv_file *f, struct sv_flow *fl,
		     const u32 *handles, u32 n, u32 mirror, bool has_mirror)
{
	struct sv_steer_action *a;
	struct sv_flow_rw *rw;
	struct sv_uobj *u;
	u32 i;

	if (!n && !has_mirror)
		return 0;
	rw = kzalloc(sizeof(*rw), GFP_KERNEL_ACCOUNT);
	if (!rw)
		return -ENOMEM;
	fl->rw = rw;
	for (i = 0; i < n; i++) {
		if (!handles[i]) {
			rw->n++;	/* NULL: pop the VLAN tag */
			continue;
		}
		u = sv_uobj_get(f, handles[i], SV_OBJ_STEER_ACTION);
		if (IS_ERR(u))
			return -EINVAL;
		a = to_sv_action(u);
		rw->act[rw->n++] = a;
		atomic_inc(&u->usecnt);
		if (a->type == SV_STEER_ACT_MIRROR)
			return -EINVAL;
	}
	if (!has_mirror)
		return 0;
	u = sv_uobj_get(f, mirror, SV_OBJ_STEER_ACTION);
	if (IS_ERR(u))
		return -EINVAL;
	a = to_sv_action(u);
	rw->mirror = a;
	atomic_inc(&u->usecnt);
	/* Its tables further down than the flow's; of its direction */
	if (a->type != SV_STEER_ACT_MIRROR ||
	    (fl->flags & SV_FLOW_ATTR_FLAGS_EGRESS) != a->flags ||
	    (a->min_level &&
	     a->min_level <= sv_steer_table_level(fl->table)))
		return -EINVAL;
	return 0;
}

/* The flow's handle left the table / its memory goes. */
void sv_flow_rw_unbind(struct sv_flow *fl)
{
	struct sv_flow_rw *rw = fl->rw;
	u32 i;

	if (!rw)
		return;
	for (i = 0; i < rw->n; i++)
		if (rw->act[i])
			atomic_dec(&rw->act[i]->uobj.usecnt);
	if (rw->mirror)
		atomic_dec(&rw->mirror->uobj.usecnt);
}

void sv_flow_rw_put(struct sv_flow *fl)
{
	struct sv_flow_rw *rw = fl->rw;
	u32 i;

	if (!rw)
		return;
	for (i = 0; i < rw->n; i++)
		if (rw->act[i])
			sv_uobj_put(&rw->act[i]->uobj);
	if (rw->mirror)
		sv_uobj_put(&rw->mirror->uobj);
	kfree(rw);
	fl->rw = NULL;
}
