// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs events: completion channels and the async event queue.
 *
 * Both are a struct sv_evq read through an anonymous fd: read() returns
 * one record, poll() says whether one is queued (uapi/softverbs-abi.h).
 * The queue is reference counted: the fd holds one reference, and so does
 * its producer side (the completion channel object, or the device file for
 * async events). When the producer goes, the queue is closed: readers get
 * EIO once it is empty.
 *
 * Events are produced from any context (the execution engine), so the
 * queue is a spinlock-protected list of GFP_ATOMIC records, charged to
 * the producing task's memory cgroup. A record that names an object is
 * also linked on the object's struct sv_event_obj, so the object's destroy
 * can drop what was not read and report how many were
 * (comp_events_reported / async_events_reported).
 *
 * The queues are bounded: an event is merged into an unread one that says
 * the same thing. A CQ has at most one unread completion event on its
 * channel (a hardware EQ has one per arm, and a reader learns the same
 * from one: "this CQ has new completions"); an object, or the file for
 * port and device events, has at most one unread async event of each
 * type. So a queue holds at most (objects x event types) records, however
 * long nobody reads it. uverbs queues a record per event without a bound
 * and does not report drops; softverbs does not report merges either:
 * the counts the destroy ioctls return are of records read, so they stay
 * what the library acknowledges.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "sv.h"

struct sv_evq {
	struct kref ref;
	spinlock_t lock;		/* everything below, and event lists */
	struct list_head events;
	wait_queue_head_t wait;
	bool closed;			/* the producer side is gone */
	bool async;			/* which record and counter */
	u32 ownerless;			/* async types queued without owner */
};

struct sv_event {
	struct list_head list;		/* on sv_evq::events */
	struct list_head obj_list;	/* on the owner's list, if any */
	struct sv_event_obj *owner;
	union {
		struct sv_comp_event comp;
		struct sv_async_event async;
	};
};

static struct sv_evq *sv_evq_alloc(bool async)
{
	struct sv_evq *q;

	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return NULL;
	kref_init(&q->ref);
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->events);
	init_waitqueue_head(&q->wait);
	q->async = async;
	return q;
}

static void sv_evq_release(struct kref *ref)
{
	struct sv_evq *q = container_of(ref, struct sv_evq, ref);
	struct sv_event *ev, *tmp;

	/* Only ownerless events can remain: owners detach on destroy. */
	list_for_each_entry_safe(ev, tmp, &q->events, list)
		kfree(ev);
	kfree(q);
}

static void sv_evq_put(struct sv_evq *q)
{
	kref_put(&q->ref, sv_evq_release);
}

/* The producer side is gone. */
static void sv_evq_close(struct sv_evq *q)
{
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	q->closed = true;
	spin_unlock_irqrestore(&q->lock, flags);
	wake_up_interruptible(&q->wait);
	sv_evq_put(q);
}

/* Async event types fit in sv_evq::ownerless. */
#define SV_EVENT_TYPES	32

/* Would an event of type from owner repeat an unread one? q->lock held. */
static bool sv_evq_queued(struct sv_evq *q, struct sv_event_obj *owner,
			  u32 type)
{
	struct sv_event *ev;

	lockdep_assert_held(&q->lock);
	if (!q->async)
		return owner && !list_empty(&owner->comp_events);
	if (!owner)
		return type < SV_EVENT_TYPES && (q->ownerless & BIT(type));
	list_for_each_entry(ev, &owner->async_events, obj_list)
		if (ev->async.event_type == type)
			return true;
	return false;
}

/*
 * Queue a record of what @ev says, unless an unread one says it already.
 * Any context. False if the queue is closed or out of memory.
 */
static bool sv_evq_push(struct sv_evq *q, const struct sv_event *ev,
			struct sv_event_obj *owner)
{
	u32 type = q->async ? ev->async.event_type : 0;
	struct sv_event *rec;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	if (q->closed) {
		spin_unlock_irqrestore(&q->lock, flags);
		return false;
	}
	if (sv_evq_queued(q, owner, type)) {
		spin_unlock_irqrestore(&q->lock, flags);
		return true;	/* merged: the reader is not woken again */
	}
	rec = kmemdup(ev, sizeof(*ev), GFP_ATOMIC | __GFP_ACCOUNT |
		      __GFP_NOWARN);
	if (!rec) {
		spin_unlock_irqrestore(&q->lock, flags);
		return false;
	}
	list_add_tail(&rec->list, &q->events);
	rec->owner = owner;
	if (owner)
		list_add_tail(&rec->obj_list, q->async ?
			      &owner->async_events : &owner->comp_events);
	else if (q->async && type < SV_EVENT_TYPES)
		q->ownerless |= BIT(type);
	spin_unlock_irqrestore(&q->lock, flags);
	wake_up_interruptible(&q->wait);
	return true;
}

static void sv_evq_detach(struct sv_evq *q, struct list_head *obj_events)
{
	struct sv_event *ev, *tmp;
	unsigned long flags;
	LIST_HEAD(dropped);

	spin_lock_irqsave(&q->lock, flags);
	list_for_each_entry_safe(ev, tmp, obj_events, obj_list) {
		list_del(&ev->list);
		list_del(&ev->obj_list);
		list_add(&ev->list, &dropped);
	}
	spin_unlock_irqrestore(&q->lock, flags);
	list_for_each_entry_safe(ev, tmp, &dropped, list)
		kfree(ev);
}

static ssize_t sv_evq_read(struct file *filp, char __user *buf, size_t count,
			   loff_t *pos)
{
	struct sv_evq *q = filp->private_data;
	size_t len = q->async ? sizeof(struct sv_async_event) :
				sizeof(struct sv_comp_event);
	struct sv_event *ev;
	int ret;

	if (count < len)
		return -EINVAL;

	spin_lock_irq(&q->lock);
	while (list_empty(&q->events)) {
		if (q->closed) {
			spin_unlock_irq(&q->lock);
			return -EIO;
		}
		spin_unlock_irq(&q->lock);
		if (filp->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(q->wait,
					       !list_empty_careful(&q->events) ||
					       READ_ONCE(q->closed));
		if (ret)
			return ret;
		spin_lock_irq(&q->lock);
	}
	ev = list_first_entry(&q->events, struct sv_event, list);
	list_del(&ev->list);
	if (ev->owner) {
		list_del(&ev->obj_list);
		if (q->async)
			ev->owner->async_reported++;
		else
			ev->owner->comp_reported++;
	} else if (q->async && ev->async.event_type < SV_EVENT_TYPES) {
		q->ownerless &= ~BIT(ev->async.event_type);
	}
	spin_unlock_irq(&q->lock);

	ret = copy_to_user(buf, q->async ? (void *)&ev->async :
			   (void *)&ev->comp, len) ? -EFAULT : 0;
	kfree(ev);
	return ret ? ret : len;
}

static __poll_t sv_evq_poll(struct file *filp, struct poll_table_struct *wait)
{
	struct sv_evq *q = filp->private_data;
	__poll_t mask = 0;

	poll_wait(filp, &q->wait, wait);
	spin_lock_irq(&q->lock);
	if (!list_empty(&q->events))
		mask = EPOLLIN | EPOLLRDNORM;
	else if (q->closed)
		mask = EPOLLERR | EPOLLHUP;
	spin_unlock_irq(&q->lock);
	return mask;
}

static int sv_evq_release_file(struct inode *inode, struct file *filp)
{
	sv_evq_put(filp->private_data);
	return 0;
}

static const struct file_operations sv_evq_fops = {
	.owner = THIS_MODULE,
	.read = sv_evq_read,
	.poll = sv_evq_poll,
	.release = sv_evq_release_file,
};

/* A new fd on q, not installed yet: fd_install() once nothing can fail. */
static struct file *sv_evq_file(struct sv_evq *q, const char *name,
				u32 flags, int *fdp)
{
	int oflags = O_RDONLY | O_CLOEXEC;
	struct file *filp;
	int fd;

	if (flags & SV_EVENT_FD_NONBLOCK)
		oflags |= O_NONBLOCK;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return ERR_PTR(fd);
	kref_get(&q->ref);
	filp = anon_inode_getfile(name, &sv_evq_fops, q, oflags);
	if (IS_ERR(filp)) {
		sv_evq_put(q);
		put_unused_fd(fd);
		return filp;
	}
	*fdp = fd;
	return filp;
}

void sv_event_obj_init(struct sv_event_obj *eo)
{
	INIT_LIST_HEAD(&eo->comp_events);
	INIT_LIST_HEAD(&eo->async_events);
	eo->comp_reported = 0;
	eo->async_reported = 0;
}

/* ---- async events ---- */

int sv_event_file_init(struct sv_file *f)
{
	f->async_evq = sv_evq_alloc(true);
	return f->async_evq ? 0 : -ENOMEM;
}

void sv_event_file_cleanup(struct sv_file *f)
{
	sv_evq_close(f->async_evq);
	f->async_evq = NULL;
}

void sv_async_event(struct sv_file *f, u32 event_type, u64 element,
		    struct sv_event_obj *owner)
{
	struct sv_event ev = {
		.async = { .element = element, .event_type = event_type },
	};

	sv_evq_push(f->async_evq, &ev, owner);
}

void sv_async_event_detach(struct sv_file *f, struct sv_event_obj *owner)
{
	sv_evq_detach(f->async_evq, &owner->async_events);
}

int sv_get_async_fd(struct sv_file *f, void *arg)
{
	struct sv_get_async_fd *cmd = arg;
	struct file *filp;
	int fd;

	if (cmd->flags & ~SV_EVENT_FD_NONBLOCK || cmd->reserved)
		return -EINVAL;
	filp = sv_evq_file(f->async_evq, "[softverbs-async]", cmd->flags, &fd);
	if (IS_ERR(filp))
		return PTR_ERR(filp);
	sv_file_defer_fd(f, fd, filp);
	cmd->fd = fd;
	return 0;
}

/* ---- completion channels ---- */

bool sv_comp_event(struct sv_comp_channel *ch, u64 user_handle,
		   u32 cq_handle, struct sv_event_obj *owner)
{
	struct sv_event ev = {
		.comp = { .user_handle = user_handle, .cq_handle = cq_handle },
	};

	return sv_evq_push(ch->evq, &ev, owner);
}

void sv_comp_event_detach(struct sv_comp_channel *ch,
			  struct sv_event_obj *owner)
{
	sv_evq_detach(ch->evq, &owner->comp_events);
}

static void sv_comp_channel_destroy(struct sv_uobj *u)
{
	struct sv_comp_channel *ch = container_of(u, struct sv_comp_channel,
						  uobj);

	sv_evq_close(ch->evq);
	ch->evq = NULL;
}

static void sv_comp_channel_free(struct sv_uobj *u)
{
	kfree(container_of(u, struct sv_comp_channel, uobj));
}

static const struct sv_uobj_ops sv_comp_channel_ops = {
	.destroy = sv_comp_channel_destroy,
	.free = sv_comp_channel_free,
};

struct sv_comp_channel *sv_comp_channel_get(struct sv_file *f, u32 handle)
{
	struct sv_uobj *u = sv_uobj_get(f, handle, SV_OBJ_COMP_CHANNEL);

	if (IS_ERR(u))
		return ERR_CAST(u);
	return container_of(u, struct sv_comp_channel, uobj);
}

int sv_create_comp_channel(struct sv_file *f, void *arg)
{
	struct sv_create_comp_channel *cmd = arg;
	struct sv_comp_channel *ch;
	struct file *filp;
	int fd, ret;

	if (cmd->flags & ~SV_EVENT_FD_NONBLOCK)
		return -EINVAL;
	ch = kzalloc(sizeof(*ch), GFP_KERNEL_ACCOUNT);
	if (!ch)
		return -ENOMEM;
	ret = sv_charge(f, SV_OBJ_COMP_CHANNEL, &ch->uobj.charge);
	if (ret)
		goto err_free;
	ch->evq = sv_evq_alloc(false);
	if (!ch->evq) {
		ret = -ENOMEM;
		goto err_free;
	}
	filp = sv_evq_file(ch->evq, "[softverbs-comp-channel]", cmd->flags,
			   &fd);
	if (IS_ERR(filp)) {
		ret = PTR_ERR(filp);
		goto err_evq;
	}
	ret = sv_uobj_add(f, &ch->uobj, SV_OBJ_COMP_CHANNEL,
			  &sv_comp_channel_ops);
	if (ret)
		goto err_file;
	sv_file_defer_fd(f, fd, filp);
	cmd->handle = ch->uobj.handle;
	cmd->fd = fd;
	return 0;

err_file:
	fput(filp);		/* drops the fd's queue reference */
	put_unused_fd(fd);
err_evq:
	sv_evq_put(ch->evq);
err_free:
	sv_uncharge(&ch->uobj.charge);
	kfree(ch);
	return ret;
}

int sv_destroy_comp_channel(struct sv_file *f, void *arg)
{
	struct sv_destroy_comp_channel *cmd = arg;

	return sv_uobj_destroy(f, cmd->handle, SV_OBJ_COMP_CHANNEL);
}
