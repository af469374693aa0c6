// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs queue pairs: create, modify (the state machine is in
 * qp_attr.c), query, destroy, and lookup by QP number.
 *
 * Life of a QP: SV_IOC_CREATE_QP takes a reference and a usecnt on its PD,
 * CQs and SRQ, gets a QPN from the device's xarray and a handle in the
 * file's table. Destroying (the ioctl, or the file closing) erases the QPN
 * so no new lookup finds it, detaches it from multicast groups and releases
 * the parents' usecnt; the memory, and the references on the parents, go
 * with the last reference, after an RCU grace period for sv_qp_get().
 *
 * Work queue rings are not allocated here yet: that is the data path's
 * work, as is flushing work requests on the way to ERR or RESET.
 */
#include <linux/capability.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "sv.h"
#include "wire/wire.h"

void sv_qp_device_init(struct sv_device *sdev)
{
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC);
	ida_init(&sdev->srqns);
	sv_mcast_device_init(sdev);
	sv_xrc_device_init(sdev);
}

void sv_qp_device_fini(struct sv_device *sdev)
{
	sv_xrc_device_fini(sdev);
	xa_destroy(&sdev->qps);
	ida_destroy(&sdev->srqns);
	sv_mcast_device_fini(sdev);
}

static struct sv_qp *to_sv_qp(struct sv_uobj *u)
{
	return container_of(u, struct sv_qp, uobj);
}

/*
 * Bumped by everything that may change where a message of a connected QP
 * goes, or whether its peer takes it: a QP leaving its device's table, a
 * modify of any QP, a GID table change, a device coming or going. The
 * engine's per-QP route cache (exec.c) is good while this is unchanged.
 */
static atomic64_t sv_route_generation = ATOMIC64_INIT(1);

u64 sv_route_gen(void)
{
	return atomic64_read(&sv_route_generation);
}

void sv_route_changed(void)
{
	atomic64_inc(&sv_route_generation);
}

/*
 * Take qp out of its device's table: no new lookup finds it, and no
 * cached route reaches it (its memory lives on for RCU readers).
 */
void sv_qp_unpublish(struct sv_qp *qp)
{
	xa_erase(&qp->sdev->qps, qp->qpn);
	sv_route_changed();
}

/* The QP with number qpn, referenced, or NULL. Any context. */
struct sv_qp *sv_qp_get(struct sv_device *sdev, u32 qpn)
{
	struct sv_qp *qp;

	rcu_read_lock();
	qp = xa_load(&sdev->qps, qpn);
	if (qp && !kref_get_unless_zero(&qp->uobj.ref))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

/*
 * The softverbs device of this host and of @own's network namespace
 * whose GID table holds @dgid (@own first), or NULL: a message to a GID
 * none holds is for the wire (wire/). A GID is held by at most one device
 * of a namespace (netdev.c). RCU held. Devices that left the registry
 * stay readable for a grace period; an unregistered @own reaches nobody
 * (its namespace may be gone: sdev->net is only compared while alive).
 */
static struct sv_device *sv_gid_device(struct sv_device *own,
				       const u8 dgid[16])
{
	struct sv_device *sdev;
	unsigned long index;
	const struct net *net;

	if (sv_gid_present(own, dgid))
		return own;
	net = read_pnet(&own->net);
	xa_for_each(&sv_devices, index, sdev)
		if (sdev != own && sv_device_in_net(sdev, net) &&
		    sv_gid_present(sdev, dgid))
			return sdev;
	return NULL;
}

/* Does a device of this host and of @own's namespace hold @dgid? */
bool sv_gid_local(struct sv_device *own, const u8 dgid[16])
{
	bool local;

	rcu_read_lock();
	local = sv_gid_device(own, dgid);
	rcu_read_unlock();
	return local;
}

/*
 * The QP a message to (@dgid, @qpn) reaches (sv_gid_device()),
 * referenced; NULL if there is none. *@local says whether a device holds
 * @dgid. A QP keeps its device alive.
 */
struct sv_qp *sv_qp_route(struct sv_device *own, const u8 dgid[16], u32 qpn,
			  bool *local)
{
	struct sv_device *sdev;
	struct sv_qp *qp = NULL;

	*local = true;
	rcu_read_lock();
	/* sv_device_remove() sets dead, then waits for a grace period. */
	if (READ_ONCE(own->dead))
		goto out;
	sdev = sv_gid_device(own, dgid);
	if (sdev)
		qp = sv_qp_get(sdev, qpn);
	else
		*local = false;
out:
	rcu_read_unlock();
	return qp;
}

/* Drop a reference from sv_qp_get(); may free: process context only. */
void sv_qp_put(struct sv_qp *qp)
{
	sv_uobj_put(&qp->uobj);
}

static void sv_parent_release(struct sv_uobj *p)
{
	if (p)
		atomic_dec(&p->usecnt);
}

static void sv_qp_destroy(struct sv_uobj *u)
{
	struct sv_qp *qp = to_sv_qp(u);

	sv_dp_qp_destroy(qp);
	sv_rss_qp_destroy(qp);
	sv_qp_unpublish(qp);
	sv_mcast_detach_all(qp);
	sv_async_event_detach(u->file, &qp->events);
	sv_parent_release(qp->pd);
	sv_parent_release(qp->send_cq);
	sv_parent_release(qp->recv_cq);
	sv_parent_release(qp->srq);
}

static void sv_parent_drop(struct sv_uobj *p)
{
	if (p)
		sv_uobj_put(p);
}

/* An XRC TGT QP has no PD, CQs or SRQ; an INI QP no receive CQ. */
static void sv_qp_free(struct sv_uobj *u)
{
	struct sv_qp *qp = to_sv_qp(u);

	sv_dp_qp_free(qp);
	sv_parent_drop(qp->pd);
	sv_parent_drop(qp->send_cq);
	sv_parent_drop(qp->recv_cq);
	sv_parent_drop(qp->srq);
	if (qp->xrcd)
		sv_xrcd_put(qp->xrcd);
	sv_wire_qp_free(qp);
	put_device(&qp->sdev->dev);
	kfree_rcu(qp, rcu);
}

/* A TGT QP's own reference uses these too (xrc.c); .destroy never runs. */
const struct sv_uobj_ops sv_qp_ops = {
	.destroy = sv_qp_destroy,
	.free = sv_qp_free,
};

/* Look up a parent object; on success it is referenced and in use. */
static struct sv_uobj *sv_parent_get(struct sv_file *f, u32 handle,
				     enum sv_obj_type type)
{
	struct sv_uobj *p = sv_uobj_get(f, handle, type);

	if (!IS_ERR(p))
		atomic_inc(&p->usecnt);
	return p;
}

static void sv_parent_put(struct sv_uobj *p)
{
	if (p && !IS_ERR(p)) {
		atomic_dec(&p->usecnt);
		sv_uobj_put(p);
	}
}

static u32 sv_qp_round_wr(u32 n)
{
	return n ? roundup_pow_of_two(n) : 0;
}

/*
 * The IBV_QP_CREATE_* flags verbs defines, and those softverbs takes,
 * where mlx5 takes them: on RAW_PACKET QPs BLOCK_SELF_MCAST_LB (steer/rx.c:
 * the e-switch), SCATTER_FCS and CVLAN_STRIPPING (steer/rxmeta.c); on UD
 * QPs SOURCE_QPN and BLOCK_SELF_MCAST_LB (exec.c: a QP's multicast sends
 * do not come back to it, as mckey asks); on any QP PCI_WRITE_END_PADDING, which asks the NIC to
 * pad its writes of a receive to a cache line and so changes nothing here.
 * Others, and these on other QP types, are EOPNOTSUPP.
 */
#define SV_QP_CREATE_KNOWN	(SV_QP_CREATE_BLOCK_SELF_MC_LB |	\
				 SV_QP_CREATE_SCATTER_FCS |		\
				 SV_QP_CREATE_CVLAN_STRIPPING |		\
				 SV_QP_CREATE_SOURCE_QPN |		\
				 SV_QP_CREATE_PCI_WRITE_END_PADDING)
#define SV_QP_CREATE_RAW	(SV_QP_CREATE_BLOCK_SELF_MC_LB |	\
				 SV_QP_CREATE_SCATTER_FCS |		\
				 SV_QP_CREATE_CVLAN_STRIPPING)

#define SV_CREATE_QP_FLAGS_KNOWN	(SV_CREATE_QP_SQ_SIG_ALL |	\
					 SV_CREATE_QP_TIR_FLAGS |	\
					 SV_CREATE_QP_SHARED_RINGS)

/*
 * DC QPs as mlx5_ib takes them (check_qp_attr()): a DCT needs an SRQ and
 * has no send queue; a DCI has no receive queue; keys and streams only
 * on their own type.
 */
static int sv_qp_check_dc(struct sv_create_qp *c)
{
	if (c->dc_access_key && c->qp_type != SV_QPT_DCT)
		return -EINVAL;
	if ((c->dci_log_streams || c->dci_log_errored) &&
	    c->qp_type != SV_QPT_DCI)
		return -EINVAL;
	if (c->qp_type == SV_QPT_DCT) {
		if (!c->srq_handle)
			return -EINVAL;
		/* mlx5's DCT has no send queue: whatever was asked, none */
		memset(&c->cap, 0, sizeof(c->cap));
	}
	if (c->qp_type == SV_QPT_DCI &&
	    (c->cap.max_recv_wr || c->cap.max_recv_sge ||
	     c->dci_log_streams > SV_MAX_DCI_LOG_STREAMS ||
	     c->dci_log_errored > SV_MAX_DCI_LOG_ERRORED))
		return -EINVAL;
	return 0;
}

/*
 * XRC QPs as uverbs makes them: an INI QP has no receive side (its caps
 * come back 0, as mlx5's), a TGT QP nothing but its domain.
 */
static int sv_qp_check_xrc(struct sv_create_qp *c)
{
	if (c->qp_type != SV_QPT_XRC_RECV && c->xrcd_handle)
		return -EINVAL;
	if (c->qp_type == SV_QPT_XRC_SEND) {
		if (c->recv_cq_handle || c->srq_handle)
			return -EINVAL;
		c->cap.max_recv_wr = 0;
		c->cap.max_recv_sge = 0;
	}
	if (c->qp_type == SV_QPT_XRC_RECV) {
		if (c->pd_handle || c->send_cq_handle || c->recv_cq_handle ||
		    c->srq_handle || c->create_flags ||
		    (c->flags & ~(SV_CREATE_QP_SQ_SIG_ALL |
				  SV_CREATE_QP_SHARED_RINGS)))
			return -EINVAL;
		memset(&c->cap, 0, sizeof(c->cap));
	}
	return 0;
}

static int sv_qp_check_create(struct sv_file *f, struct sv_create_qp *c)
{
	struct sv_device *sdev = f->sdev;
	u32 max_wr;
	int ret;

	switch (c->qp_type) {
	case SV_QPT_RC:
	case SV_QPT_UC:
	case SV_QPT_UD:
		break;
	case SV_QPT_RAW_PACKET:
		/* Frames need a netdev; sending raw ones, CAP_NET_RAW. */
		if (!READ_ONCE(sdev->ndev))
			return -EOPNOTSUPP;
		if (!ns_capable(read_pnet(&sdev->net)->user_ns, CAP_NET_RAW))
			return -EPERM;
		break;
	case SV_QPT_DCI:
	case SV_QPT_DCT:
	case SV_QPT_XRC_SEND:
	case SV_QPT_XRC_RECV:
		break;
	case SV_QPT_DRIVER:
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
	ret = sv_qp_check_xrc(c);
	if (ret)
		return ret;
	if ((c->flags & ~SV_CREATE_QP_FLAGS_KNOWN) ||
	    memchr_inv(c->reserved2, 0, sizeof(c->reserved2)))
		return -EINVAL;
	ret = sv_qp_check_dc(c);
	if (ret)
		return ret;
	/*
	 * The mlx5 TIR flags (uapi): RAW_PACKET QPs only, EINVAL elsewhere,
	 * as mlx5_ib's vendor flags; the self-loopback bits only on a TIR.
	 */
	if ((c->flags & SV_CREATE_QP_TIR_FLAGS) &&
	    c->qp_type != SV_QPT_RAW_PACKET)
		return -EINVAL;
	if ((c->flags & SV_CREATE_QP_TIR_SELF_LB) &&
	    !(c->flags & SV_CREATE_QP_MLX5_TIR))
		return -EINVAL;
	/* TSO headers (steer/tx.c): RAW_PACKET QPs only, as mlx5. */
	if (c->max_tso_header && (c->qp_type != SV_QPT_RAW_PACKET ||
				  c->max_tso_header > SV_MAX_TSO_HEADER))
		return -EINVAL;
	if (c->create_flags & ~SV_QP_CREATE_KNOWN)
		return -EINVAL;
	if (c->create_flags & ~(SV_QP_CREATE_PCI_WRITE_END_PADDING |
				(c->qp_type == SV_QPT_RAW_PACKET ?
				 SV_QP_CREATE_RAW :
				 c->qp_type == SV_QPT_UD ?
				 SV_QP_CREATE_SOURCE_QPN |
				 SV_QP_CREATE_BLOCK_SELF_MC_LB : 0)))
		return -EOPNOTSUPP;
	if (c->source_qpn && !(c->create_flags & SV_QP_CREATE_SOURCE_QPN))
		return -EINVAL;
	if (c->create_flags & SV_QP_CREATE_SOURCE_QPN) {
		/*
		 * Sending as any QPN is spoofing another QP's messages: as
		 * the RDMA core, CAP_NET_RAW. Never as the special QPs or
		 * the multicast QPN.
		 */
		if (!ns_capable(read_pnet(&sdev->net)->user_ns, CAP_NET_RAW))
			return -EPERM;
		if (c->source_qpn < 2 || c->source_qpn >= SV_QPN_MASK)
			return -EINVAL;
	}
	max_wr = sv_depth(sdev, SV_DEPTH_QP_WR);
	if (c->cap.max_send_wr > max_wr ||
	    c->cap.max_send_sge > SV_MAX_SGE ||
	    c->cap.max_inline_data > SV_MAX_INLINE_DATA)
		return -EINVAL;
	if (!c->srq_handle && (c->cap.max_recv_wr > max_wr ||
			       c->cap.max_recv_sge > SV_MAX_SGE))
		return -EINVAL;
	return 0;
}

int sv_create_qp(struct sv_file *f, void *arg)
{
	struct sv_device *sdev = f->sdev;
	struct sv_create_qp *c = arg;
	struct sv_qp *qp;
	int ret;

	ret = sv_qp_check_create(f, c);
	if (ret)
		return ret;

	qp = kzalloc(sizeof(*qp), GFP_KERNEL_ACCOUNT);
	if (!qp)
		return -ENOMEM;
	/* max_qp (ENOMEM), the user's share and the rdma cgroup (EAGAIN) */
	ret = sv_charge(f, SV_OBJ_QP, &qp->uobj.charge);
	if (ret) {
		kfree(qp);
		return ret;
	}
	qp->sdev = sdev;
	qp->qp_type = c->qp_type;
	qp->flags = c->flags;
	qp->create_flags = c->create_flags;
	qp->source_qpn = c->source_qpn;
	qp->max_tso_header = c->max_tso_header;
	qp->dc_key = c->dc_access_key;
	if (c->qp_type == SV_QPT_DCI && c->dci_log_streams) {
		qp->dci_streams = 1U << c->dci_log_streams;
		qp->dci_max_errored = 1U << c->dci_log_errored;
	}
	sv_steer_qp_init(qp);
	qp->user_handle = c->user_handle;
	spin_lock_init(&qp->lock);
	INIT_LIST_HEAD(&qp->mcast);
	INIT_LIST_HEAD(&qp->engine_node);
	INIT_LIST_HEAD(&qp->ready_node);
	qp->db_slot = SV_DB_NO_SLOT;
	sv_event_obj_init(&qp->events);

	if (c->qp_type == SV_QPT_XRC_RECV) {
		qp->attr.qp_state = SV_QPS_RESET;
		qp->attr.port_num = SV_PORT_NUM;
		ret = sv_xrc_tgt_create(f, qp, c);
		if (ret)
			goto err_parents;
		c->qpn = qp->qpn;
		c->cap = qp->cap;
		return 0;
	}
	qp->pd = sv_parent_get(f, c->pd_handle, SV_OBJ_PD);
	qp->send_cq = sv_parent_get(f, c->send_cq_handle, SV_OBJ_CQ);
	if (c->qp_type != SV_QPT_XRC_SEND)
		qp->recv_cq = sv_parent_get(f, c->recv_cq_handle, SV_OBJ_CQ);
	if (c->srq_handle)
		qp->srq = sv_parent_get(f, c->srq_handle, SV_OBJ_SRQ);
	if (IS_ERR(qp->pd))
		ret = PTR_ERR(qp->pd);
	else if (IS_ERR(qp->send_cq))
		ret = PTR_ERR(qp->send_cq);
	else if (IS_ERR(qp->recv_cq))
		ret = PTR_ERR(qp->recv_cq);
	else if (IS_ERR(qp->srq))
		ret = PTR_ERR(qp->srq);
	/* Tag matching is for RC (IBV_TM_CAP_RC) */
	else if (qp->srq && qp->qp_type != SV_QPT_RC &&
		 container_of(qp->srq, struct sv_srq, uobj)->tm)
		ret = -EINVAL;
	if (ret)
		goto err_parents;

	qp->cap.max_send_wr = sv_qp_round_wr(c->cap.max_send_wr);
	qp->cap.max_send_sge = c->cap.max_send_sge;
	qp->cap.max_inline_data = c->cap.max_inline_data;
	if (!qp->srq) {
		qp->cap.max_recv_wr = sv_qp_round_wr(c->cap.max_recv_wr);
		qp->cap.max_recv_sge = c->cap.max_recv_sge;
	}
	qp->attr.qp_state = SV_QPS_RESET;
	qp->attr.port_num = SV_PORT_NUM;

	ret = sv_dp_qp_create(f, qp, c->flags & SV_CREATE_QP_SHARED_RINGS);
	if (ret)
		goto err_parents;
	/*
	 * QP0 and QP1 are the special QPs and 0xffffff the multicast QPN:
	 * never handed out.
	 */
	ret = xa_alloc_cyclic(&sdev->qps, &qp->qpn, NULL,
			      XA_LIMIT(2, SV_QPN_MASK - 1), &sdev->next_qpn,
			      GFP_KERNEL);
	if (ret < 0) {
		ret = ret == -EBUSY ? -ENOMEM : ret;
		goto err_count;
	}

	ret = sv_uobj_add(f, &qp->uobj, SV_OBJ_QP, &sv_qp_ops);
	if (ret)
		goto err_qpn;
	/* Held until the QP's memory goes: peers' engines may route to it. */
	get_device(&sdev->dev);
	/* Visible to the data path only once complete. */
	xa_store(&sdev->qps, qp->qpn, qp, GFP_KERNEL);
	sv_dp_qp_activate(f, qp);

	c->handle = qp->uobj.handle;
	c->qpn = qp->qpn;
	c->cap = qp->cap;
	return 0;

err_qpn:
	xa_erase(&sdev->qps, qp->qpn);
err_count:
	sv_dp_qp_abort(f, qp);
err_parents:
	sv_parent_put(qp->pd);
	sv_parent_put(qp->send_cq);
	sv_parent_put(qp->recv_cq);
	sv_parent_put(qp->srq);
	sv_uncharge(&qp->uobj.charge);
	kfree(qp);
	return ret;
}

/*
 * As uverbs (modify_qp_mask()): an XRC QP's modify drops the attributes
 * of the side it does not have, which programs written for RC pass.
 */
static u32 sv_qp_xrc_mask(u32 qp_type, u32 mask)
{
	if (qp_type == SV_QPT_XRC_SEND)
		return mask & ~(SV_QP_MAX_DEST_RD_ATOMIC | SV_QP_MIN_RNR_TIMER);
	if (qp_type == SV_QPT_XRC_RECV)
		return mask & ~(SV_QP_MAX_QP_RD_ATOMIC | SV_QP_RETRY_CNT |
				SV_QP_RNR_RETRY);
	return mask;
}

int sv_modify_qp(struct sv_file *f, void *arg)
{
	struct sv_modify_qp *m = arg;
	struct sv_wire_qp *wire = NULL;
	bool to_sqd, notify, tgt;
	struct sv_qp *qp;
	u32 old_state;
	int ret, remote;

	if (m->reserved)
		return -EINVAL;
	/*
	 * A controlled Q_Key (bit 31) is privileged: the RDMA core asks for
	 * CAP_NET_RAW (since 6.4), so that an ordinary process cannot send
	 * as, or receive what is meant for, the subnet's management agents.
	 */
	if ((m->attr_mask & SV_QP_QKEY) && (m->attr.qkey & SV_QKEY_CONTROLLED) &&
	    !capable(CAP_NET_RAW))
		return -EPERM;
	qp = sv_qp_lookup(f, m->handle);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	if (qp->rss) {		/* RSS QPs have no state to change */
		sv_qp_put(qp);
		return -EOPNOTSUPP;
	}
	/* An XRC TGT QP has no queues: its state is all there is. */
	tgt = qp->qp_type == SV_QPT_XRC_RECV;
	sv_ah_attr_normalize(&m->attr.ah_attr);
	sv_ah_attr_normalize(&m->attr.alt_ah_attr);
	m->attr_mask = sv_qp_xrc_mask(qp->qp_type, m->attr_mask);
	/* To RTR with a destination on the wire: its state, made here. */
	remote = sv_wire_qp_prepare(qp, m->attr_mask, &m->attr, &wire);
	if (remote < 0) {
		sv_qp_put(qp);
		return remote;
	}
	spin_lock_bh(&qp->lock);
	old_state = qp->attr.qp_state;
	to_sqd = (m->attr_mask & SV_QP_STATE) &&
		 m->attr.qp_state == SV_QPS_SQD &&
		 qp->attr.qp_state == SV_QPS_RTS;
	ret = sv_qp_check_modify(qp, m->attr_mask, &m->attr);
	if (!ret) {
		sv_qp_apply_modify(qp, m->attr_mask, &m->attr);
		sv_route_changed();
	}
	notify = !ret && to_sqd && qp->attr.en_sqd_async_notify;
	/*
	 * Nothing is in flight on a local QP, so the send queue is drained
	 * at once: tell the owner if it asked to know (every handle of a
	 * TGT QP).
	 */
	if (notify && tgt)
		sv_xrc_qp_event(qp, SV_EVENT_SQ_DRAINED);
	spin_unlock_bh(&qp->lock);
	if (!ret && !tgt && (m->attr_mask & (SV_QP_AV | SV_QP_DEST_QPN)))
		sv_dp_qp_dest_changed(qp);
	if (!ret && !tgt && (m->attr_mask & SV_QP_STATE) &&
	    m->attr.qp_state == SV_QPS_RTR)
		sv_wire_qp_rtr(qp, &wire, remote);
	kfree(wire);
	if (!ret && !tgt && (m->attr_mask & SV_QP_STATE))
		sv_dp_qp_modified(qp, old_state);
	/* An RC QP on the wire drains when its WQEs in flight completed. */
	if (notify && !tgt && !sv_wire_rc_drain_later(qp))
		sv_async_event(f, SV_EVENT_SQ_DRAINED, qp->user_handle,
			       &qp->events);
	sv_qp_put(qp);
	return ret;
}

int sv_query_qp(struct sv_file *f, void *arg)
{
	struct sv_query_qp *q = arg;
	struct sv_qp *qp;

	if (q->reserved || q->reserved2)
		return -EINVAL;
	qp = sv_qp_lookup(f, q->handle);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	if (qp->rss) {
		sv_qp_put(qp);
		return -EOPNOTSUPP;
	}
	spin_lock_bh(&qp->lock);
	q->attr = qp->attr;
	spin_unlock_bh(&qp->lock);
	q->attr.cur_qp_state = q->attr.qp_state;
	q->cap = qp->cap;
	q->qp_type = qp->qp_type;
	q->flags = qp->flags;
	q->qpn = qp->qpn;
	sv_qp_put(qp);
	return 0;
}

int sv_destroy_qp(struct sv_file *f, void *arg)
{
	struct sv_destroy_qp *d = arg;
	struct sv_uobj *u;
	int ret;

	if (d->reserved)
		return -EINVAL;
	/* A handle on an XRC TGT QP goes; the QP with the last (xrc.c). */
	u = sv_qp_uobj_get(f, d->handle);
	if (IS_ERR(u))
		return PTR_ERR(u);
	ret = sv_uobj_destroy(f, d->handle, u->type);
	/* Its events are detached: the count is final. */
	if (!ret)
		d->events_reported = u->type == SV_OBJ_QP ?
			to_sv_qp(u)->events.async_reported :
			sv_xrc_qp_events(u)->async_reported;
	sv_uobj_put(u);
	return ret;
}

/* mlx5dv_dci_stream_id_reset(): the stream takes work again. */
int sv_reset_dci_stream(struct sv_file *f, void *arg)
{
	struct sv_reset_dci_stream *r = arg;
	struct sv_uobj *u;
	struct sv_qp *qp;
	int ret = 0;

	if (r->reserved)
		return -EINVAL;
	u = sv_uobj_get(f, r->handle, SV_OBJ_QP);
	if (IS_ERR(u))
		return PTR_ERR(u);
	qp = to_sv_qp(u);
	if (qp->qp_type != SV_QPT_DCI || !qp->dci_streams) {
		ret = -EINVAL;
	} else {
		/*
		 * The engine reads and sets the bitmap under sq.lock. The id
		 * is taken modulo the channels, as a WQE's is (dc.c; mlx5
		 * programs reset the id they posted on). A stream that is
		 * not in error is EINVAL, as mlx5's device refuses it.
		 */
		u32 s = r->stream & (qp->dci_streams - 1);

		mutex_lock(&qp->sq.lock);
		if (!__test_and_clear_bit(s, &qp->dci_errored))
			ret = -EINVAL;
		mutex_unlock(&qp->sq.lock);
		sv_engine_kick_qp(qp);
	}
	sv_uobj_put(u);
	return ret;
}
