// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs flows: SV_IOC_CREATE_FLOW and SV_IOC_DESTROY_FLOW.
 *
 * The argument names the application's struct ibv_flow_attr and its specs
 * in user memory, laid out as <infiniband/verbs.h> has them (mirrored in
 * uapi/softverbs-abi.h). Each spec adds its value and mask to the rule's
 * key (struct sv_flow_key): a spec also implies what its layer needs (an
 * IPv4 spec: an IPv4 packet; TCP: a TCP header; VXLAN: a VXLAN tunnel),
 * and two specs that ask for different values of one bit are EINVAL.
 *
 * Life of a flow: create checks and charges it (a per-device limit, the
 * user's share, the rdma cgroup), takes a reference and a usecnt on its
 * QP and inserts it into the device's tables (table.c); destroy, or the
 * file closing (flows go first), removes it, waits for a grace period
 * and drops the QP.
 */
#include <linux/capability.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "steer.h"

static struct sv_flow *to_sv_flow(struct sv_uobj *u)
{
	return container_of(u, struct sv_flow, uobj);
}

/* Merge value/mask bytes into the rule's key; -EINVAL on a conflict. */
static int sv_key_merge(struct sv_flow_key *kv, struct sv_flow_key *km,
			void *field, const void *val, const void *mask,
			size_t len)
{
	size_t off = (u8 *)field - (u8 *)kv;
	u8 *v = (u8 *)kv + off, *m = (u8 *)km + off;
	const u8 *nv = val, *nm = mask;
	size_t i;

	for (i = 0; i < len; i++)
		if ((v[i] ^ nv[i]) & m[i] & nm[i])
			return -EINVAL;
	for (i = 0; i < len; i++) {
		v[i] = (v[i] & m[i]) | (nv[i] & nm[i]);
		m[i] |= nm[i];
	}
	return 0;
}

/* A field that must be exactly @val (a spec's implication). */
static int sv_key_imply(struct sv_flow_key *kv, struct sv_flow_key *km,
			void *field, const void *val, size_t len)
{
	static const u8 ones[16] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};

	return sv_key_merge(kv, km, field, val, ones, len);
}

static int sv_imply_u8(struct sv_flow_key *kv, struct sv_flow_key *km,
		       u8 *field, u8 val)
{
	return sv_key_imply(kv, km, field, &val, 1);
}

static int sv_spec_eth(struct sv_flow_key *kv, struct sv_flow_key *km,
		       struct sv_flow_hdrs *h, const void *spec)
{
	const struct sv_flow_spec_eth *s = spec;
	int ret;

	ret = sv_key_merge(kv, km, h->dst_mac, s->val.dst_mac,
			   s->mask.dst_mac, ETH_ALEN);
	ret = ret ?: sv_key_merge(kv, km, h->src_mac, s->val.src_mac,
				  s->mask.src_mac, ETH_ALEN);
	ret = ret ?: sv_key_merge(kv, km, &h->ether_type, &s->val.ether_type,
				  &s->mask.ether_type, 2);
	ret = ret ?: sv_key_merge(kv, km, &h->vlan_tag, &s->val.vlan_tag,
				  &s->mask.vlan_tag, 2);
	return ret;
}

static int sv_spec_ipv4(struct sv_flow_key *kv, struct sv_flow_key *km,
			struct sv_flow_hdrs *h, const void *spec, bool ext)
{
	const struct sv_flow_spec_ipv4_ext *x = spec;
	const struct sv_flow_spec_ipv4 *s = spec;
	int ret;

	ret = sv_imply_u8(kv, km, &h->l3, 4);
	ret = ret ?: sv_key_merge(kv, km, h->src_ip + 12, &s->val.src_ip,
				  &s->mask.src_ip, 4);
	ret = ret ?: sv_key_merge(kv, km, h->dst_ip + 12, &s->val.dst_ip,
				  &s->mask.dst_ip, 4);
	if (ret || !ext)
		return ret;
	ret = sv_key_merge(kv, km, &h->ip_proto, &x->val.proto,
			   &x->mask.proto, 1);
	ret = ret ?: sv_key_merge(kv, km, &h->tos, &x->val.tos,
				  &x->mask.tos, 1);
	ret = ret ?: sv_key_merge(kv, km, &h->ttl, &x->val.ttl,
				  &x->mask.ttl, 1);
	ret = ret ?: sv_key_merge(kv, km, &h->ip_flags, &x->val.flags,
				  &x->mask.flags, 1);
	return ret;
}

static int sv_spec_ipv6(struct sv_flow_key *kv, struct sv_flow_key *km,
			struct sv_flow_hdrs *h, const void *spec)
{
	const struct sv_flow_spec_ipv6 *s = spec;
	int ret;

	if (s->mask.flow_label & ~htonl(0xfffff))
		return -EINVAL;
	ret = sv_imply_u8(kv, km, &h->l3, 6);
	ret = ret ?: sv_key_merge(kv, km, h->src_ip, s->val.src_ip,
				  s->mask.src_ip, 16);
	ret = ret ?: sv_key_merge(kv, km, h->dst_ip, s->val.dst_ip,
				  s->mask.dst_ip, 16);
	ret = ret ?: sv_key_merge(kv, km, &h->flow_label, &s->val.flow_label,
				  &s->mask.flow_label, 4);
	ret = ret ?: sv_key_merge(kv, km, &h->ip_proto, &s->val.next_hdr,
				  &s->mask.next_hdr, 1);
	ret = ret ?: sv_key_merge(kv, km, &h->tos, &s->val.traffic_class,
				  &s->mask.traffic_class, 1);
	ret = ret ?: sv_key_merge(kv, km, &h->ttl, &s->val.hop_limit,
				  &s->mask.hop_limit, 1);
	return ret;
}

static int sv_spec_l4(struct sv_flow_key *kv, struct sv_flow_key *km,
		      struct sv_flow_hdrs *h, const void *spec, u8 proto)
{
	const struct sv_flow_spec_tcp_udp *s = spec;
	bool tcp = proto == IPPROTO_TCP;
	int ret;

	ret = sv_imply_u8(kv, km, &h->ip_proto, proto);
	ret = ret ?: sv_imply_u8(kv, km, &h->l4, proto);
	ret = ret ?: sv_key_merge(kv, km, tcp ? &h->tcp_dport : &h->udp_dport,
				  &s->val.dst_port, &s->mask.dst_port, 2);
	ret = ret ?: sv_key_merge(kv, km, tcp ? &h->tcp_sport : &h->udp_sport,
				  &s->val.src_port, &s->mask.src_port, 2);
	return ret;
}

/* The spec sizes of <infiniband/verbs.h>. */
static int sv_spec_size(u32 type)
{
	switch (type & ~SV_FLOW_SPEC_INNER) {
	case SV_FLOW_SPEC_ETH:
		return SV_FLOW_SPEC_ETH_SIZE;
	case SV_FLOW_SPEC_IPV4:
		return SV_FLOW_SPEC_IPV4_SIZE;
	case SV_FLOW_SPEC_IPV4_EXT:
		return SV_FLOW_SPEC_IPV4_EXT_SIZE;
	case SV_FLOW_SPEC_IPV6:
		return SV_FLOW_SPEC_IPV6_SIZE;
	case SV_FLOW_SPEC_TCP:
	case SV_FLOW_SPEC_UDP:
		return SV_FLOW_SPEC_TCP_UDP_SIZE;
	case SV_FLOW_SPEC_VXLAN_TUNNEL:
		return SV_FLOW_SPEC_TUNNEL_SIZE;
	case SV_FLOW_SPEC_GRE:
		return SV_FLOW_SPEC_GRE_SIZE;
	case SV_FLOW_SPEC_MPLS:
		return SV_FLOW_SPEC_MPLS_SIZE;
	case SV_FLOW_SPEC_ESP:
		return SV_FLOW_SPEC_ESP_SIZE;
	case SV_FLOW_SPEC_ACTION_TAG:
		return SV_FLOW_SPEC_ACTION_TAG_SIZE;
	case SV_FLOW_SPEC_ACTION_DROP:
		return SV_FLOW_SPEC_ACTION_DROP_SIZE;
	case SV_FLOW_SPEC_ACTION_HANDLE:
	case SV_FLOW_SPEC_ACTION_COUNT:
		return 16;	/* a type, a size and a pointer */
	case SV_FLOW_SPEC_MATCHER:
		return SV_FLOW_SPEC_MATCHER_SIZE;
	case SV_FLOW_SPEC_DEFAULT_MISS:
		return SV_FLOW_SPEC_DEFAULT_MISS_SIZE;
	case SV_FLOW_SPEC_DEST_TABLE:
	case SV_FLOW_SPEC_DEST_ANCHOR:
	case SV_FLOW_SPEC_REWRITE:
	case SV_FLOW_SPEC_DEST_MIRROR:
		return SV_FLOW_SPEC_DEST_SIZE;
	case SV_FLOW_SPEC_POP_VLAN:
		return SV_FLOW_SPEC_POP_VLAN_SIZE;
	default:
		return -1;
	}
}

/* What parsing a flow's specs found besides its key. */
struct sv_flow_parse {
	bool tagged;
	bool has_matcher;
	bool has_dest;
	struct sv_flow_spec_matcher matcher;	/* an aligned copy */
	struct sv_flow_spec_dest dest;
	/* REWRITE specs' actions in order (0: POP_VLAN); DEST_MIRROR's */
	u32 rw[SV_FLOW_MAX_REWRITE];
	u32 nrw;
	u32 mirror;
	bool has_mirror;
};

/* A rewrite, pop or mirror spec: collected, bound once parsed. */
static int sv_spec_rw(u32 type, const void *spec, struct sv_flow_parse *p)
{
	const struct sv_flow_spec_dest *d = spec;

	if (type == SV_FLOW_SPEC_DEST_MIRROR) {
		if (p->has_mirror || d->reserved || d->pad)
			return -EINVAL;
		p->has_mirror = true;
		p->mirror = d->handle;
		return 0;
	}
	if (p->nrw == SV_FLOW_MAX_REWRITE)
		return -EINVAL;
	if (type == SV_FLOW_SPEC_POP_VLAN) {
		p->rw[p->nrw++] = 0;
		return 0;
	}
	if (d->reserved || d->pad || !d->handle)
		return -EINVAL;
	p->rw[p->nrw++] = d->handle;
	return 0;
}

/* Apply one spec to the flow; its size has been checked. */
static int sv_spec_apply(struct sv_flow *fl, struct sv_flow_key *km,
			 u32 type, const void *spec, struct sv_flow_parse *p)
{
	struct sv_flow_key *kv = &fl->val;
	bool inner = type & SV_FLOW_SPEC_INNER;
	struct sv_flow_hdrs *h = inner ? &kv->inner : &kv->outer;
	const struct sv_flow_spec_tunnel *t = spec;
	const struct sv_flow_spec_gre *g = spec;
	const struct sv_flow_spec_mpls *mp = spec;
	const struct sv_flow_spec_esp *e = spec;
	int ret;

	switch (type & ~SV_FLOW_SPEC_INNER) {
	case SV_FLOW_SPEC_ETH:
		return sv_spec_eth(kv, km, h, spec);
	case SV_FLOW_SPEC_IPV4:
		return sv_spec_ipv4(kv, km, h, spec, false);
	case SV_FLOW_SPEC_IPV4_EXT:
		return sv_spec_ipv4(kv, km, h, spec, true);
	case SV_FLOW_SPEC_IPV6:
		return sv_spec_ipv6(kv, km, h, spec);
	case SV_FLOW_SPEC_TCP:
		return sv_spec_l4(kv, km, h, spec, IPPROTO_TCP);
	case SV_FLOW_SPEC_UDP:
		return sv_spec_l4(kv, km, h, spec, IPPROTO_UDP);
	}
	/* Tunnels, MPLS, ESP and actions have no inner form. */
	if (inner)
		return -EINVAL;
	switch (type) {
	case SV_FLOW_SPEC_VXLAN_TUNNEL:
		if (t->mask.tunnel_id & ~htonl(0xffffff))
			return -EINVAL;
		ret = sv_imply_u8(kv, km, &kv->tunnel, SV_TUN_VXLAN);
		return ret ?: sv_key_merge(kv, km, &kv->tunnel_id,
					   &t->val.tunnel_id,
					   &t->mask.tunnel_id, 4);
	case SV_FLOW_SPEC_GRE:
		ret = sv_imply_u8(kv, km, &kv->tunnel, SV_TUN_GRE);
		ret = ret ?: sv_key_merge(kv, km, &kv->gre_flags,
					  &g->val.c_ks_res0_ver,
					  &g->mask.c_ks_res0_ver, 2);
		ret = ret ?: sv_key_merge(kv, km, &kv->gre_proto,
					  &g->val.protocol,
					  &g->mask.protocol, 2);
		return ret ?: sv_key_merge(kv, km, &kv->gre_key, &g->val.key,
					   &g->mask.key, 4);
	case SV_FLOW_SPEC_MPLS:
		return sv_key_merge(kv, km, &kv->mpls_label, &mp->val.label,
				    &mp->mask.label, 4);
	case SV_FLOW_SPEC_ESP:
		ret = sv_imply_u8(kv, km, &kv->outer.ip_proto, IPPROTO_ESP);
		ret = ret ?: sv_key_merge(kv, km, &kv->esp_spi, &e->val.spi,
					  &e->mask.spi, 4);
		return ret ?: sv_key_merge(kv, km, &kv->esp_seq, &e->val.seq,
					   &e->mask.seq, 4);
	case SV_FLOW_SPEC_ACTION_TAG:
		if (p->tagged)
			return -EINVAL;
		p->tagged = true;
		fl->tag = ((const struct sv_flow_spec_action_tag *)spec)->tag_id;
		return 0;
	case SV_FLOW_SPEC_ACTION_DROP:
		if (fl->drop)
			return -EINVAL;
		fl->drop = true;
		return 0;
	case SV_FLOW_SPEC_ACTION_COUNT:
		return sv_counters_spec(fl, spec);	/* counters.c */
	case SV_FLOW_SPEC_MATCHER:
		/* Applied once the file's objects can be looked up. */
		if (p->has_matcher)
			return -EINVAL;
		p->has_matcher = true;
		memcpy(&p->matcher, spec, sizeof(p->matcher));
		return 0;
	case SV_FLOW_SPEC_DEFAULT_MISS:
		if (fl->miss)
			return -EINVAL;
		fl->miss = true;
		return 0;
	case SV_FLOW_SPEC_DEST_TABLE:
	case SV_FLOW_SPEC_DEST_ANCHOR:
		if (p->has_dest)
			return -EINVAL;
		p->has_dest = true;
		memcpy(&p->dest, spec, sizeof(p->dest));
		return 0;
	case SV_FLOW_SPEC_REWRITE:
	case SV_FLOW_SPEC_POP_VLAN:
	case SV_FLOW_SPEC_DEST_MIRROR:
		return sv_spec_rw(type, spec, p);
	default:
		/* Flow actions are objects softverbs lacks. */
		return -EOPNOTSUPP;
	}
}

#define SV_FLOW_FLAGS_KNOWN (SV_FLOW_ATTR_FLAGS_ALLOW_LOOP_BACK | \
			     SV_FLOW_ATTR_FLAGS_DONT_TRAP |	  \
			     SV_FLOW_ATTR_FLAGS_EGRESS)

/* Parse attr + specs (len bytes at buf) into fl, its mask and p. */
static int sv_flow_parse(struct sv_flow *fl, struct sv_flow_key *km,
			 const void *buf, u32 len, struct sv_flow_parse *p)
{
	const struct sv_flow_attr *a = buf;
	const struct sv_flow_spec_hdr *h;
	u32 off, i;
	int ret, sz;

	if (len < SV_FLOW_ATTR_SIZE || a->size != len)
		return -EINVAL;
	if (a->comp_mask || (a->flags & ~SV_FLOW_FLAGS_KNOWN) ||
	    a->port != SV_PORT_NUM || a->type > SV_FLOW_ATTR_SNIFFER)
		return -EINVAL;
	/* Egress rules filter what the device sends: no defaults there. */
	if ((a->flags & SV_FLOW_ATTR_FLAGS_EGRESS) &&
	    a->type != SV_FLOW_ATTR_NORMAL)
		return -EINVAL;
	fl->type = a->type;
	fl->flags = a->flags;
	fl->priority = a->priority;
	fl->nspecs = a->num_of_specs;
	off = SV_FLOW_ATTR_SIZE;
	for (i = 0; i < a->num_of_specs; i++) {
		if (len - off < 8)
			return -EINVAL;
		h = buf + off;
		sz = sv_spec_size(h->type);
		if (sz < 0 || h->size != sz || len - off < (u32)sz)
			return -EINVAL;
		ret = sv_spec_apply(fl, km, h->type, h, p);
		if (ret)
			return ret;
		off += sz;
	}
	if (off != len)
		return -EINVAL;
	fl->tagged = p->tagged;
	/* Default and sniffer rules match on nothing; a drop delivers none. */
	if (fl->type != SV_FLOW_ATTR_NORMAL &&
	    memchr_inv(km, 0, sizeof(*km)))
		return -EINVAL;
	if (fl->drop && (p->tagged ||
			 (fl->flags & SV_FLOW_ATTR_FLAGS_DONT_TRAP) ||
			 fl->type == SV_FLOW_ATTR_SNIFFER))
		return -EINVAL;
	/*
	 * A default miss, or a table or anchor to go on to, decides where
	 * the frame goes: one that only copies cannot, nor two of them.
	 */
	if ((fl->miss || p->has_dest) &&
	    (fl->drop || fl->type != SV_FLOW_ATTR_NORMAL ||
	     (fl->flags & SV_FLOW_ATTR_FLAGS_DONT_TRAP) ||
	     (fl->miss && p->has_dest)))
		return -EINVAL;
	/*
	 * A rule that rewrites or mirrors the frame decides where it goes:
	 * not with a drop, a default miss, DONT_TRAP or as a default or
	 * sniffer rule; a mirror is its only destination.
	 */
	if ((p->nrw || p->has_mirror) &&
	    (fl->drop || fl->miss || fl->type != SV_FLOW_ATTR_NORMAL ||
	     (fl->flags & SV_FLOW_ATTR_FLAGS_DONT_TRAP) ||
	     (p->has_mirror && p->has_dest)))
		return -EINVAL;
	/* A tag marks a receive completion: sent frames have none. */
	if (p->tagged && (fl->flags & SV_FLOW_ATTR_FLAGS_EGRESS))
		return -EINVAL;
	return 0;
}

/*
 * The table a flow lives in: its steering table's (sandbox.c), or the
 * device's receive or egress one.
 */
static struct sv_steer *sv_flow_table(struct sv_device *sdev,
				      const struct sv_flow *fl)
{
	if (fl->table)
		return sv_steer_table_st(fl->table);
	return fl->flags & SV_FLOW_ATTR_FLAGS_EGRESS ? sdev->steer_tx :
						      sdev->steer;
}

static void sv_flow_destroy(struct sv_uobj *u)
{
	struct sv_flow *fl = to_sv_flow(u);

	sv_steer_remove(sv_flow_table(fl->sdev, fl), fl);
	if (fl->qp)
		atomic_dec(&fl->qp->uobj.usecnt);
	sv_counters_unbind(fl);
	sv_flow_dest_unbind(fl);
	sv_flow_rw_unbind(fl);
	sv_flow_matcher_unbind(fl);
}

static void sv_flow_free_work(struct work_struct *work)
{
	struct sv_flow *fl = container_of(to_rcu_work(work), struct sv_flow,
					  free_work);

	sv_steer_release(fl);
	if (fl->qp)
		sv_qp_put(fl->qp);
	sv_counters_put(fl);
	sv_flow_dest_put(fl);
	sv_flow_rw_put(fl);
	sv_flow_matcher_put(fl);
	kfree(fl);
}

/*
 * Frames may still be looking at the flow (its QP, counters, tag) for a
 * grace period after sv_steer_remove(): the free waits for one, without
 * making the destroy wait.
 */
static void sv_flow_free(struct sv_uobj *u)
{
	struct sv_flow *fl = to_sv_flow(u);

	sv_steer_defer(&fl->free_work, sv_flow_free_work);
}

static const struct sv_uobj_ops sv_flow_ops = {
	.destroy = sv_flow_destroy,
	.free = sv_flow_free,
};

/*
 * The flow's destination: the QP @handle names (a RAW_PACKET or UD QP of
 * the file; the lookup's reference becomes the flow's), or none
 * (SV_FLOW_NO_QP), which only a rule that delivers nothing may have: a
 * drop, a default miss, an egress rule.
 */
static int sv_flow_dest(struct sv_file *f, struct sv_flow *fl, u32 handle)
{
	struct sv_uobj *u;
	struct sv_qp *qp;

	bool mirror = fl->rw && fl->rw->mirror;

	if (handle == SV_FLOW_NO_QP) {
		/*
		 * A steering table's rule that rewrites the frame and sends
		 * it nowhere leaves it to the table's miss.
		 */
		if (fl->drop || fl->miss || fl->dest_table || fl->dest_anchor ||
		    mirror || (fl->rw && fl->table) ||
		    (fl->flags & SV_FLOW_ATTR_FLAGS_EGRESS))
			return 0;
		return -EINVAL;
	}
	/* A rule that sends the frame on delivers it to no QP. */
	if (fl->dest_table || fl->dest_anchor || mirror)
		return -EINVAL;
	u = sv_uobj_get(f, handle, SV_OBJ_QP);
	if (IS_ERR(u))
		return PTR_ERR(u);
	qp = container_of(u, struct sv_qp, uobj);
	if (qp->qp_type != SV_QPT_RAW_PACKET && qp->qp_type != SV_QPT_UD) {
		sv_qp_put(qp);
		return -EINVAL;
	}
	fl->qp = qp;
	return 0;
}

/* Undo what sv_flow_build() bound; fl is not in the tables. */
static void sv_flow_unbuild(struct sv_flow *fl)
{
	sv_counters_unbind(fl);
	sv_counters_put(fl);
	sv_flow_dest_unbind(fl);
	sv_flow_dest_put(fl);
	sv_flow_rw_unbind(fl);
	sv_flow_rw_put(fl);
	sv_flow_matcher_unbind(fl);
	sv_flow_matcher_put(fl);
	if (fl->qp)
		sv_qp_put(fl->qp);
	fl->qp = NULL;
}

/* Parse the attr and bind what it names: the flow, ready to insert. */
static int sv_flow_build(struct sv_file *f, struct sv_flow *fl,
			 struct sv_flow_key *km, const void *buf, u32 len,
			 u32 qp_handle)
{
	struct sv_flow_parse *p;
	int ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return -ENOMEM;
	ret = sv_flow_parse(fl, km, buf, len, p);
	if (!ret && p->has_matcher)
		ret = sv_flow_matcher_apply(f, fl, km, &p->matcher);
	/* After the matcher: it says which table, and so which level. */
	if (!ret && p->has_dest)
		ret = sv_flow_dest_apply(f, fl, &p->dest);
	if (!ret)
		ret = sv_flow_rw_apply(f, fl, p->rw, p->nrw, p->mirror,
				       p->has_mirror);
	kfree(p);
	ret = ret ?: sv_counters_bind(f, fl);
	ret = ret ?: sv_flow_dest(f, fl, qp_handle);
	if (ret)
		sv_flow_unbuild(fl);
	return ret;
}

int sv_create_flow(struct sv_file *f, void *arg)
{
	struct sv_device *sdev = f->sdev;
	struct sv_create_flow *c = arg;
	struct sv_flow_key *km;
	struct sv_flow *fl;
	void *buf;
	int ret;

	if (c->attr_len < SV_FLOW_ATTR_SIZE ||
	    c->attr_len > SV_FLOW_ATTR_MAX_SIZE)
		return -EINVAL;
	if (!READ_ONCE(sdev->ndev))
		return -EOPNOTSUPP;
	/* Steering takes frames off the wire: as a raw socket would. */
	if (!ns_capable(read_pnet(&sdev->net)->user_ns, CAP_NET_RAW))
		return -EPERM;
	ret = -ENOMEM;
	buf = kmalloc(c->attr_len, GFP_KERNEL_ACCOUNT);
	km = kzalloc(sizeof(*km), GFP_KERNEL_ACCOUNT);
	fl = kzalloc(sizeof(*fl), GFP_KERNEL_ACCOUNT);
	if (!buf || !km || !fl)
		goto err_free;
	if (copy_from_user(buf, u64_to_user_ptr(c->attr), c->attr_len)) {
		ret = -EFAULT;
		goto err_free;
	}
	fl->sdev = sdev;
	INIT_LIST_HEAD(&fl->list);
	ret = sv_flow_build(f, fl, km, buf, c->attr_len, c->qp_handle);
	if (ret)
		goto err_free;
	ret = sv_charge(f, SV_OBJ_FLOW, &fl->uobj.charge);
	if (ret)
		goto err_unbuild;
	if (fl->qp)
		atomic_inc(&fl->qp->uobj.usecnt);
	ret = sv_steer_insert(sv_flow_table(sdev, fl), fl, km);
	if (ret)
		goto err_usecnt;
	ret = sv_uobj_add(f, &fl->uobj, SV_OBJ_FLOW, &sv_flow_ops);
	if (ret) {
		sv_steer_remove(sv_flow_table(sdev, fl), fl);
		/* Rare: the grace period in line. */
		synchronize_rcu();
		sv_steer_release(fl);
		goto err_usecnt;
	}
	sv_counters_link(fl);
	c->handle = fl->uobj.handle;
	kfree(km);
	kfree(buf);
	return 0;

err_usecnt:
	if (fl->qp)
		atomic_dec(&fl->qp->uobj.usecnt);
	sv_uncharge(&fl->uobj.charge);
err_unbuild:
	sv_flow_unbuild(fl);
err_free:
	kfree(fl);
	kfree(km);
	kfree(buf);
	return ret;
}

int sv_destroy_flow(struct sv_file *f, void *arg)
{
	struct sv_destroy_flow *d = arg;

	return sv_uobj_destroy(f, d->handle, SV_OBJ_FLOW);
}
