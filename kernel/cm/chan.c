// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs connection manager: the event channels.
 *
 * /dev/infiniband/softverbs_cm (mode 0666, as rdma_cm's device): each
 * open file is an rdma_cm event channel of its opener's network
 * namespace. Its ids are numbered per file; a number from another file
 * is ENOENT. Events wait in the file's queue (bounded: a peer cannot
 * make it grow without end) until read; destroying an id drops its
 * unread events, and the ids of its unread CONNECT_REQUESTs with them.
 * Closing the file destroys its ids: their connections are rejected or
 * disconnected on the wire, as when a process using rdma_cm dies. Ids
 * and events are charged to the opener's memory cgroup.
 */
#include <linux/file.h>
#include <linux/memcontrol.h>
#include <linux/miscdevice.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <net/net_namespace.h>

#include "cm.h"

/* Every id's state, the port and communication ID tables (cm.h) */
DEFINE_MUTEX(sv_cm_lock);
DEFINE_XARRAY_ALLOC(sv_cm_all_ids);
struct workqueue_struct *sv_cm_wq;

struct sv_cm_ev {
	struct list_head node;
	u32 owner;		/* the id whose event it is (for the count) */
	struct sv_cm_get_event ev;
};

static void sv_cm_chan_free(struct kref *ref)
{
	struct sv_cm_chan *chan = container_of(ref, struct sv_cm_chan, ref);

	put_net(chan->net);
	mem_cgroup_put(chan->memcg);
	xa_destroy(&chan->ids);
	kfree(chan);
}

static void sv_cm_id_free(struct kref *ref)
{
	struct sv_cm_id *id = container_of(ref, struct sv_cm_id, ref);

	kref_put(&id->chan->ref, sv_cm_chan_free);
	kfree(id);
}

void sv_cm_id_put(struct sv_cm_id *id)
{
	kref_put(&id->ref, sv_cm_id_free);
}

/* A new id of chan, in its table; under sv_cm_lock. */
struct sv_cm_id *sv_cm_id_new(struct sv_cm_chan *chan, u16 ps, u32 qp_type,
			      u64 uid)
{
	struct mem_cgroup *old;
	struct sv_cm_id *id;
	u32 any;
	int ret;

	lockdep_assert_held(&sv_cm_lock);
	if (chan->closing || chan->nids >= SV_CM_MAX_IDS)
		return ERR_PTR(-ENOSPC);
	/* A peer's REQ makes ids in a work item: the channel's user pays. */
	old = set_active_memcg(chan->memcg);
	id = kzalloc(sizeof(*id), GFP_KERNEL_ACCOUNT);
	set_active_memcg(old);
	if (!id)
		return ERR_PTR(-ENOMEM);
	kref_init(&id->ref);
	INIT_DELAYED_WORK(&id->timer, sv_cm_timeout);
	INIT_LIST_HEAD(&id->mcs);
	id->ps = ps;
	id->qp_type = qp_type;
	id->uid = uid;
	id->state = SV_CM_IDLE;
	ret = xa_alloc_cyclic(&chan->ids, &id->handle, id,
			      XA_LIMIT(1, INT_MAX), &chan->next_id, GFP_KERNEL);
	if (ret < 0)
		goto err;
	ret = xa_alloc(&sv_cm_all_ids, &any, id, xa_limit_32b, GFP_KERNEL);
	if (ret < 0) {
		xa_erase(&chan->ids, id->handle);
		goto err;
	}
	id->all_index = any;
	kref_get(&chan->ref);
	id->chan = chan;
	chan->nids++;
	return id;
err:
	kfree(id);
	return ERR_PTR(ret);
}

/*
 * Queue an event of @id with @uid (for a CONNECT_REQUEST: of the
 * listener @id, about the new id @child). Under sv_cm_lock. A full queue
 * or a closing channel drops it; a CONNECT_REQUEST dropped takes its id
 * along.
 */
static void sv_cm_queue(struct sv_cm_id *id, u64 uid, u32 event, int status,
			const struct sv_cm_conn_param *param,
			struct sv_cm_id *child)
{
	struct sv_cm_chan *chan = id->chan;
	struct mem_cgroup *old;
	struct sv_cm_ev *e;

	lockdep_assert_held(&sv_cm_lock);
	old = set_active_memcg(chan->memcg);
	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	set_active_memcg(old);
	if (!e)
		goto drop;
	e->owner = id->handle;
	e->ev.event = event;
	e->ev.status = status;
	e->ev.uid = uid;
	e->ev.id = child ? child->handle : id->handle;
	e->ev.listen_uid = child ? id->uid : 0;
	if (param)
		e->ev.param = *param;
	spin_lock_bh(&chan->ev_lock);
	if (chan->closing || chan->nevents >= SV_CM_MAX_EVENTS) {
		spin_unlock_bh(&chan->ev_lock);
		kfree(e);
		goto drop;
	}
	list_add_tail(&e->node, &chan->events);
	chan->nevents++;
	spin_unlock_bh(&chan->ev_lock);
	wake_up_interruptible(&chan->wait);
	return;
drop:
	if (child)
		sv_cm_destroy(child);
}

void sv_cm_event(struct sv_cm_id *id, u32 event, int status,
		 const struct sv_cm_conn_param *param, struct sv_cm_id *child)
{
	sv_cm_queue(id, id->uid, event, status, param, child);
}

/* An event of a multicast join of @id: it carries the join's uid. */
void sv_cm_mc_event(struct sv_cm_id *id, struct sv_cm_mc *mc, u32 event,
		    const struct sv_cm_conn_param *param)
{
	sv_cm_queue(id, mc->uid, event, 0, param, NULL);
}

static bool sv_cm_mc_ev(const struct sv_cm_ev *e)
{
	return e->ev.event == SV_CM_EVENT_MULTICAST_JOIN ||
	       e->ev.event == SV_CM_EVENT_MULTICAST_ERROR;
}

/* Drop the unread events of @id's join @uid; under sv_cm_lock. */
u32 sv_cm_drop_events(struct sv_cm_id *id, u64 uid)
{
	struct sv_cm_chan *chan = id->chan;
	struct sv_cm_ev *e, *tmp;
	LIST_HEAD(dead);
	u32 n = 0;

	spin_lock_bh(&chan->ev_lock);
	list_for_each_entry_safe(e, tmp, &chan->events, node) {
		if (e->owner != id->handle || e->ev.uid != uid ||
		    !sv_cm_mc_ev(e))
			continue;
		list_move_tail(&e->node, &dead);
		chan->nevents--;
	}
	spin_unlock_bh(&chan->ev_lock);
	list_for_each_entry_safe(e, tmp, &dead, node) {
		kfree(e);
		n++;
	}
	return n;
}

/*
 * Destroy an id: the protocol's goodbye (sv_cm_id_kill()), out of the
 * channel, its unread events gone. Under sv_cm_lock.
 */
void sv_cm_destroy(struct sv_cm_id *id)
{
	struct sv_cm_chan *chan = id->chan;
	struct sv_cm_ev *e, *tmp;
	LIST_HEAD(dead);

	sv_cm_id_kill(id);
	sv_cm_leave_all(id);
	xa_erase(&chan->ids, id->handle);
	xa_erase(&sv_cm_all_ids, id->all_index);
	chan->nids--;
	spin_lock_bh(&chan->ev_lock);
	list_for_each_entry_safe(e, tmp, &chan->events, node) {
		if (e->owner != id->handle && e->ev.id != id->handle)
			continue;
		list_move_tail(&e->node, &dead);
		chan->nevents--;
	}
	spin_unlock_bh(&chan->ev_lock);
	list_for_each_entry_safe(e, tmp, &dead, node) {
		struct sv_cm_id *child;

		/* A request nobody read: its id goes too. */
		if (e->ev.event == SV_CM_EVENT_CONNECT_REQUEST &&
		    e->ev.id != id->handle) {
			child = xa_load(&chan->ids, e->ev.id);
			if (child)
				sv_cm_destroy(child);
		}
		kfree(e);
	}
	sv_cm_id_put(id);
}

static struct sv_cm_id *sv_cm_id_get(struct sv_cm_chan *chan, u32 handle)
{
	lockdep_assert_held(&sv_cm_lock);
	return xa_load(&chan->ids, handle);
}

/* Ioctl handlers: under sv_cm_lock, the argument copied in. */

static int sv_cm_do_create_id(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_create_id *c = arg;
	struct sv_cm_id *id;

	switch (c->ps) {
	case SV_CM_PS_TCP:
	case SV_CM_PS_IB:
		if (c->qp_type != SV_QPT_RC && c->qp_type != SV_QPT_UD)
			return -EINVAL;
		break;
	case SV_CM_PS_UDP:
	case SV_CM_PS_IPOIB:
		if (c->qp_type != SV_QPT_UD)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (c->id)
		return -EINVAL;
	id = sv_cm_id_new(chan, c->ps, c->qp_type, c->uid);
	if (IS_ERR(id))
		return PTR_ERR(id);
	c->id = id->handle;
	return 0;
}

static int sv_cm_do_destroy_id(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_destroy_id *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);

	if (c->reserved)
		return -EINVAL;
	if (!id)
		return -ENOENT;
	c->events_reported = id->events_reported;
	sv_cm_destroy(id);
	return 0;
}

static int sv_cm_check_addr(const struct __kernel_sockaddr_storage *a,
			    bool may_be_empty)
{
	if (!a->ss_family && may_be_empty)
		return 0;
	if (a->ss_family != AF_INET && a->ss_family != AF_INET6)
		return -EAFNOSUPPORT;
	return 0;
}

static int sv_cm_do_bind(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_bind *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);
	int ret = sv_cm_check_addr(&c->addr, false);

	if (ret)
		return ret;
	if (!id)
		return -ENOENT;
	return sv_cm_bind(id, (struct sockaddr_storage *)&c->addr);
}

static int sv_cm_do_resolve_addr(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_resolve_addr *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);
	int ret;

	if (c->reserved)
		return -EINVAL;
	ret = sv_cm_check_addr(&c->src, true) ?:
	      sv_cm_check_addr(&c->dst, false);
	if (ret)
		return ret;
	if (!id)
		return -ENOENT;
	return sv_cm_resolve_addr(id, (struct sockaddr_storage *)&c->src,
				  (struct sockaddr_storage *)&c->dst);
}

static int sv_cm_do_resolve_route(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_resolve_route *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);

	if (c->reserved)
		return -EINVAL;
	if (!id)
		return -ENOENT;
	return sv_cm_resolve_route(id);
}

static int sv_cm_do_query(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_query *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);

	if (!id)
		return -ENOENT;
	memset((u8 *)c + 8, 0, sizeof(*c) - 8);
	memcpy(&c->src, &id->src, sizeof(c->src));
	memcpy(&c->dst, &id->dst, sizeof(c->dst));
	if (id->sdev) {
		c->node_guid = be64_to_cpu(id->sdev->node_guid);
		strscpy(c->dev_name, dev_name(&id->sdev->dev),
			sizeof(c->dev_name));
		c->port_num = 1;
		c->pkey = SV_DEFAULT_PKEY;
		c->sgid_index = id->sgid_index;
		memcpy(c->sgid, id->sgid, 16);
	}
	if (id->state >= SV_CM_ADDR_RESOLVED)
		memcpy(c->dgid, id->dgid, 16);
	if (id->route) {
		c->num_paths = 1;
		c->mtu = id->mtu;
		c->hop_limit = id->hop_limit;
		c->traffic_class = id->tos;
	}
	c->qp_num = id->remote_qpn;
	c->qkey = id->qkey;
	return 0;
}

static int sv_cm_do_connect(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_connect *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);

	if (!id)
		return -ENOENT;
	return sv_cm_connect(id, &c->param);
}

static int sv_cm_do_listen(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_listen *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);

	if (c->reserved)
		return -EINVAL;
	if (!id)
		return -ENOENT;
	return sv_cm_listen(id, min_t(u32, c->backlog, SV_CM_MAX_IDS));
}

static int sv_cm_do_accept(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_accept *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);
	int ret;

	if (!id)
		return -ENOENT;
	ret = sv_cm_accept(id, &c->param);
	if (!ret)
		id->uid = c->uid;
	return ret;
}

static int sv_cm_do_reject(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_reject *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);

	if (c->reserved[0] || c->reserved[1] || c->reserved[2] ||
	    c->reason > 0xffff)
		return -EINVAL;
	if (!id)
		return -ENOENT;
	return sv_cm_reject(id, c->reason, c->private_data,
			    c->private_data_len);
}

static int sv_cm_do_disconnect(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_disconnect *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);

	if (!id)
		return -ENOENT;
	return sv_cm_disconnect(id);
}

static int sv_cm_do_establish(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_establish *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);

	if (!id)
		return -ENOENT;
	return sv_cm_establish(id);
}

static int sv_cm_do_join_mcast(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_join_mcast *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);
	int ret = sv_cm_check_addr(&c->addr, false);

	if (c->reserved || c->flags & ~SV_CM_JOIN_SENDONLY)
		return -EINVAL;
	if (ret)
		return ret;
	if (!id)
		return -ENOENT;
	return sv_cm_join(id, c);
}

static int sv_cm_do_leave_mcast(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_leave_mcast *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);

	if (c->reserved)
		return -EINVAL;
	if (!id)
		return -ENOENT;
	return sv_cm_leave(id, c);
}

static const struct file_operations sv_cm_fops;

/* May @id move from @from to @to? Under sv_cm_lock. */
static int sv_cm_may_move(struct sv_cm_id *id, struct sv_cm_chan *from,
			  struct sv_cm_chan *to)
{
	struct sv_cm_ev *e;
	int ret = 0;

	if (to->net != from->net)
		return -EINVAL;
	if (to->nids >= SV_CM_MAX_IDS)
		return -ENOSPC;
	/* A request that names it, or one of its own, is read first. */
	spin_lock_bh(&from->ev_lock);
	list_for_each_entry(e, &from->events, node)
		if (e->ev.event == SV_CM_EVENT_CONNECT_REQUEST &&
		    (e->ev.id == id->handle || e->owner == id->handle))
			ret = -EBUSY;
	spin_unlock_bh(&from->ev_lock);
	return ret;
}

/* Move @id and its unread events from @from to @to. Under sv_cm_lock. */
static int sv_cm_move(struct sv_cm_id *id, struct sv_cm_chan *from,
		      struct sv_cm_chan *to)
{
	struct sv_cm_ev *e, *tmp;
	LIST_HEAD(moving);
	u32 handle;
	int ret;

	ret = sv_cm_may_move(id, from, to);
	if (ret)
		return ret;
	ret = xa_alloc_cyclic(&to->ids, &handle, id, XA_LIMIT(1, INT_MAX),
			      &to->next_id, GFP_KERNEL);
	if (ret < 0)
		return ret;
	spin_lock_bh(&from->ev_lock);
	list_for_each_entry_safe(e, tmp, &from->events, node) {
		if (e->owner != id->handle)
			continue;
		list_move_tail(&e->node, &moving);
		from->nevents--;
		e->owner = handle;
		if (e->ev.id == id->handle)
			e->ev.id = handle;
	}
	spin_unlock_bh(&from->ev_lock);
	xa_erase(&from->ids, id->handle);
	from->nids--;
	to->nids++;
	kref_get(&to->ref);
	id->chan = to;
	id->handle = handle;
	kref_put(&from->ref, sv_cm_chan_free);	/* the file holds it still */
	if (list_empty(&moving))
		return 0;
	spin_lock_bh(&to->ev_lock);
	list_for_each_entry_safe(e, tmp, &moving, node) {
		/* Beyond the bound (a full channel): dropped, as sv_cm_event(). */
		if (to->nevents >= SV_CM_MAX_EVENTS) {
			list_del(&e->node);
			kfree(e);
			continue;
		}
		list_move_tail(&e->node, &to->events);
		to->nevents++;
	}
	spin_unlock_bh(&to->ev_lock);
	wake_up_interruptible(&to->wait);
	return 0;
}

static int sv_cm_do_migrate_id(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_migrate_id *c = arg;
	struct sv_cm_chan *from;
	struct sv_cm_id *id;
	struct file *f;
	int ret;

	f = fget(c->fd);
	if (!f)
		return -EBADF;
	ret = -EINVAL;
	if (f->f_op != &sv_cm_fops)
		goto out;
	from = f->private_data;
	ret = -ENOENT;
	id = sv_cm_id_get(from, c->id);
	if (!id)
		goto out;
	c->events_reported = id->events_reported;
	ret = from == chan ? 0 : sv_cm_move(id, from, chan);
	if (!ret)
		c->id = id->handle;
out:
	/* The last reference of a file is put on the way out (task work). */
	fput(f);
	return ret;
}

static int sv_cm_do_init_qp_attr(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_init_qp_attr *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);

	if (!id)
		return -ENOENT;
	return sv_cm_init_qp_attr(id, c->qp_state, &c->mask, &c->attr);
}

static int sv_cm_do_set_option(struct sv_cm_chan *chan, void *arg)
{
	struct sv_cm_set_option *c = arg;
	struct sv_cm_id *id = sv_cm_id_get(chan, c->id);

	if (!id)
		return -ENOENT;
	switch (c->option) {
	case SV_CM_OPT_TOS:
		if (c->value > 0xff)
			return -EINVAL;
		id->tos = c->value;
		return 0;
	case SV_CM_OPT_REUSEADDR:
		if (id->state != SV_CM_IDLE)
			return -EINVAL;
		id->reuseaddr = !!c->value;
		return 0;
	case SV_CM_OPT_AFONLY:
		if (id->state != SV_CM_IDLE)
			return -EINVAL;
		id->afonly = !!c->value;
		return 0;
	case SV_CM_OPT_ACK_TIMEOUT:
		if (c->value > 31)
			return -EINVAL;
		id->ack_timeout = c->value;
		return 0;
	default:
		return -ENOPROTOOPT;
	}
}

struct sv_cm_ioctl {
	int (*handler)(struct sv_cm_chan *chan, void *arg);
	u32 size;
	u32 min_size;
};

#define SV_CM_CMD(nr, fn, type) \
	[SV_CM_NR_##nr] = { fn, sizeof(struct type), sizeof(struct type) }

static const struct sv_cm_ioctl sv_cm_ioctls[SV_CM_NR_MAX] = {
	SV_CM_CMD(CREATE_ID, sv_cm_do_create_id, sv_cm_create_id),
	SV_CM_CMD(DESTROY_ID, sv_cm_do_destroy_id, sv_cm_destroy_id),
	SV_CM_CMD(BIND, sv_cm_do_bind, sv_cm_bind),
	SV_CM_CMD(RESOLVE_ADDR, sv_cm_do_resolve_addr, sv_cm_resolve_addr),
	SV_CM_CMD(RESOLVE_ROUTE, sv_cm_do_resolve_route, sv_cm_resolve_route),
	SV_CM_CMD(QUERY, sv_cm_do_query, sv_cm_query),
	SV_CM_CMD(CONNECT, sv_cm_do_connect, sv_cm_connect),
	SV_CM_CMD(LISTEN, sv_cm_do_listen, sv_cm_listen),
	SV_CM_CMD(ACCEPT, sv_cm_do_accept, sv_cm_accept),
	SV_CM_CMD(REJECT, sv_cm_do_reject, sv_cm_reject),
	SV_CM_CMD(DISCONNECT, sv_cm_do_disconnect, sv_cm_disconnect),
	SV_CM_CMD(ESTABLISH, sv_cm_do_establish, sv_cm_establish),
	SV_CM_CMD(INIT_QP_ATTR, sv_cm_do_init_qp_attr, sv_cm_init_qp_attr),
	SV_CM_CMD(SET_OPTION, sv_cm_do_set_option, sv_cm_set_option),
	SV_CM_CMD(JOIN_MCAST, sv_cm_do_join_mcast, sv_cm_join_mcast),
	SV_CM_CMD(LEAVE_MCAST, sv_cm_do_leave_mcast, sv_cm_leave_mcast),
	SV_CM_CMD(MIGRATE_ID, sv_cm_do_migrate_id, sv_cm_migrate_id),
};

/* The count of read events that @e is one of: its join's or its id's. */
static u32 *sv_cm_reported(struct sv_cm_chan *chan, const struct sv_cm_ev *e)
{
	struct sv_cm_id *id = sv_cm_id_get(chan, e->owner);
	struct sv_cm_mc *mc;

	if (!id)
		return NULL;
	if (!sv_cm_mc_ev(e))
		return &id->events_reported;
	mc = sv_cm_mc_find(id, e->ev.uid);
	return mc ? &mc->events_reported : NULL;
}

/* The next event, or -EAGAIN. */
static int sv_cm_pop(struct sv_cm_chan *chan, struct sv_cm_ev **out)
{
	struct sv_cm_ev *e;

	spin_lock_bh(&chan->ev_lock);
	e = list_first_entry_or_null(&chan->events, struct sv_cm_ev, node);
	if (e) {
		list_del(&e->node);
		chan->nevents--;
	}
	spin_unlock_bh(&chan->ev_lock);
	*out = e;
	return e ? 0 : -EAGAIN;
}

static long sv_cm_get_event(struct file *filp, struct sv_cm_chan *chan,
			    void __user *uarg, u32 usize)
{
	struct sv_cm_ev *e;
	u32 *count;
	int ret;

	if (usize < sizeof(struct sv_cm_get_event))
		return -EINVAL;
	for (;;) {
		mutex_lock(&sv_cm_lock);
		ret = sv_cm_pop(chan, &e);
		if (!ret) {
			count = sv_cm_reported(chan, e);
			if (count)
				(*count)++;
		}
		mutex_unlock(&sv_cm_lock);
		if (!ret)
			break;
		if (filp->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(chan->wait,
					       !list_empty_careful(&chan->events));
		if (ret)
			return ret;
	}
	e->ev.size = usize;
	if (copy_to_user(uarg, &e->ev, sizeof(e->ev))) {
		/* Not lost: first again, uncounted. */
		mutex_lock(&sv_cm_lock);
		count = sv_cm_reported(chan, e);
		if (count)
			(*count)--;
		spin_lock_bh(&chan->ev_lock);
		list_add(&e->node, &chan->events);
		chan->nevents++;
		spin_unlock_bh(&chan->ev_lock);
		mutex_unlock(&sv_cm_lock);
		return -EFAULT;
	}
	kfree(e);
	return 0;
}

static long sv_cm_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct sv_cm_chan *chan = filp->private_data;
	void __user *uarg = (void __user *)arg;
	const struct sv_cm_ioctl *d;
	u32 usize;
	void *karg;
	long ret;

	if (_IOC_TYPE(cmd) != SV_IOC_MAGIC ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE) ||
	    _IOC_NR(cmd) >= SV_CM_NR_MAX)
		return -ENOTTY;
	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize > SV_MAX_ARG_SIZE)
		return -EINVAL;
	if (_IOC_NR(cmd) == SV_CM_NR_GET_EVENT)
		return sv_cm_get_event(filp, chan, uarg, usize);
	d = &sv_cm_ioctls[_IOC_NR(cmd)];
	if (!d->handler)
		return -ENOTTY;
	if (usize < d->min_size)
		return -EINVAL;
	karg = kzalloc(d->size, GFP_KERNEL);
	if (!karg)
		return -ENOMEM;
	ret = copy_struct_from_user(karg, d->size, uarg, usize);
	if (ret)
		goto out;
	*(u32 *)karg = usize;
	mutex_lock(&sv_cm_lock);
	ret = d->handler(chan, karg);
	mutex_unlock(&sv_cm_lock);
	if (!ret && copy_to_user(uarg, karg, min_t(u32, usize, d->size)))
		ret = -EFAULT;
out:
	kfree(karg);
	return ret;
}

static __poll_t sv_cm_poll(struct file *filp, poll_table *wait)
{
	struct sv_cm_chan *chan = filp->private_data;

	poll_wait(filp, &chan->wait, wait);
	return list_empty_careful(&chan->events) ? 0 : EPOLLIN | EPOLLRDNORM;
}

static int sv_cm_open(struct inode *inode, struct file *filp)
{
	struct sv_cm_chan *chan;

	chan = kzalloc(sizeof(*chan), GFP_KERNEL_ACCOUNT);
	if (!chan)
		return -ENOMEM;
	kref_init(&chan->ref);
	chan->net = get_net(current->nsproxy->net_ns);
	chan->memcg = get_mem_cgroup_from_mm(current->mm);
	xa_init_flags(&chan->ids, XA_FLAGS_ALLOC1);
	spin_lock_init(&chan->ev_lock);
	INIT_LIST_HEAD(&chan->events);
	init_waitqueue_head(&chan->wait);
	filp->private_data = chan;
	return stream_open(inode, filp);
}

static int sv_cm_release(struct inode *inode, struct file *filp)
{
	struct sv_cm_chan *chan = filp->private_data;
	struct sv_cm_id *id;
	unsigned long i;

	mutex_lock(&sv_cm_lock);
	spin_lock_bh(&chan->ev_lock);
	chan->closing = true;
	spin_unlock_bh(&chan->ev_lock);
	xa_for_each(&chan->ids, i, id)
		sv_cm_destroy(id);
	mutex_unlock(&sv_cm_lock);
	kref_put(&chan->ref, sv_cm_chan_free);
	return 0;
}

static const struct file_operations sv_cm_fops = {
	.owner = THIS_MODULE,
	.open = sv_cm_open,
	.release = sv_cm_release,
	.unlocked_ioctl = sv_cm_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = sv_cm_poll,
};

static struct miscdevice sv_cm_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = SV_CM_DEV_NAME,
	.nodename = "infiniband/" SV_CM_DEV_NAME,
	.mode = 0666,
	.fops = &sv_cm_fops,
};

int sv_cm_init(void)
{
	int ret;

	sv_cm_wq = alloc_workqueue("softverbs_cm", 0, 0);
	if (!sv_cm_wq)
		return -ENOMEM;
	ret = misc_register(&sv_cm_misc);
	if (ret)
		destroy_workqueue(sv_cm_wq);
	return ret;
}

/*
 * Module exit, after the netdevs were let go (no MAD comes in): no
 * channel is open, and the MADs and timers still queued go.
 */
void sv_cm_exit(void)
{
	misc_deregister(&sv_cm_misc);
	sv_cm_rx_flush();
	destroy_workqueue(sv_cm_wq);
}
