// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs completion queues.
 *
 * A CQ is a ring of struct sv_cqe in memory shared with the library
 * (kernel/mmap.c); the layout and the memory-ordering contract between the
 * kernel (producer) and the library (consumer) are written once, in
 * uapi/softverbs-abi.h. The library polls and arms the CQ without a
 * syscall; the kernel produces with sv_cq_push(), which also raises the
 * completion event an armed CQ asked for.
 *
 * Lifetime: the CQ holds a reference on its completion channel and counts
 * in its usecnt; QPs, SRQs and WQs that use the CQ count in the CQ's
 * usecnt, so the CQ cannot be destroyed under them (EBUSY) and
 * sv_cq_push() is never called on a destroyed CQ by a live user. The ring
 * memory lives until the last munmap. Resizing swaps in a new ring under
 * cq->lock, so producers always write to the current one.
 *
 * Stamps: a CQ that asked for IBV_WC_EX_WITH_COMPLETION_TIMESTAMP gets the
 * device clock (ktime_get_raw_ns(), SV_DEVICE_CLOCK in the uapi header)
 * in each CQE, one that asked for ..._WALLCLOCK CLOCK_REALTIME; taken
 * under cq->lock when the CQE is written, so they never go backwards
 * along the ring, unless the producer brings its own (a frame's arrival:
 * sv_cq_push_stamped()). The wall clock goes in the second half of a
 * 128-byte entry (SV_CQ_FLAG_CQE_128); see struct sv_cqe.
 *
 * Moderation (ibv_modify_cq(), SV_IOC_MODIFY_CQ in the uapi header): an
 * armed CQ with a count or a period keeps its arm while completions that
 * satisfy it accumulate (mod_pending), and raises the event when the
 * count is reached or when mod_timer, started by the first of them,
 * expires (a softirq hrtimer), whichever comes first. The state is under
 * cq->lock; the timer is cancelled, without waiting, by the event it
 * would have raised, and waited for when the CQ is destroyed.
 */
#include <linux/hrtimer.h>
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "sv.h"

/* The CQEs start on the page after the ring header. */
#define SV_CQ_CQE_OFFSET	PAGE_SIZE

#define SV_CQ_FLAGS_KNOWN	(SV_CQ_FLAG_IGNORE_OVERRUN | SV_CQ_FLAG_CQE_128)

static void sv_cq_destroy(struct sv_uobj *u)
{
	struct sv_cq *cq = container_of(u, struct sv_cq, uobj);
	struct sv_file *f = u->file;
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	cq->dead = true;
	spin_unlock_irqrestore(&cq->lock, flags);
	/* Dead: nothing starts it again. */
	hrtimer_cancel(&cq->mod_timer);

	if (cq->channel) {
		sv_comp_event_detach(cq->channel, &cq->events);
		atomic_dec(&cq->channel->uobj.usecnt);
	}
	sv_async_event_detach(f, &cq->events);
	if (!cq->ring_buf->user)
		sv_mmap_entry_remove(f, cq->mmap_offset);
}

/**
 * sv_cq_move - a new CQ's ring into nb (SV_IOC_MOVE_RING)
 * @f: the CQ's file, f->lock held
 * @cq: no QP, SRQ or WQ uses it (EBUSY): nothing pushes to it
 * @nb: the user's pinned buffer, as large as the ring's; the caller's
 *	reference stays the caller's
 */
int sv_cq_move(struct sv_file *f, struct sv_cq *cq, struct sv_mbuf *nb)
{
	struct sv_mbuf *old = cq->ring_buf;
	unsigned long flags;

	lockdep_assert_held(&f->lock);
	if (old->user)
		return -EINVAL;
	if (atomic_read(&cq->uobj.usecnt))
		return -EBUSY;
	kref_get(&nb->ref);
	spin_lock_irqsave(&cq->lock, flags);
	memcpy(nb->vaddr, old->vaddr, old->size);
	cq->ring_buf = nb;
	cq->ring = nb->vaddr;
	cq->cqes = nb->vaddr + SV_CQ_CQE_OFFSET;
	spin_unlock_irqrestore(&cq->lock, flags);
	sv_mmap_entry_remove(f, cq->mmap_offset);
	cq->mmap_offset = 0;
	sv_mbuf_put(old);
	return 0;
}

static void sv_cq_free(struct sv_uobj *u)
{
	struct sv_cq *cq = container_of(u, struct sv_cq, uobj);

	if (cq->channel)
		sv_uobj_put(&cq->channel->uobj);
	sv_mbuf_put(cq->ring_buf);
	kfree(cq);
}

static const struct sv_uobj_ops sv_cq_ops = {
	.destroy = sv_cq_destroy,
	.free = sv_cq_free,
};

struct sv_cq *sv_cq_get(struct sv_file *f, u32 handle)
{
	struct sv_uobj *u = sv_uobj_get(f, handle, SV_OBJ_CQ);

	if (IS_ERR(u))
		return ERR_CAST(u);
	return container_of(u, struct sv_cq, uobj);
}

/* Does cq hold completions its consumer has not taken? */
bool sv_cq_has_entries(struct sv_cq *cq)
{
	unsigned long flags;
	bool has;

	spin_lock_irqsave(&cq->lock, flags);
	/* The ring is replaced under the lock (resize). */
	has = cq->prod != smp_load_acquire(&cq->ring->cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return has;
}

/* Does arm ask for an event for a completion (solicited: or an error)? */
static bool sv_cq_arm_wants(u32 arm, bool solicited)
{
	return (arm & SV_CQ_ARM_NEXT) ||
	       ((arm & SV_CQ_ARM_SOLICITED) && solicited);
}

/*
 * Take the arm if a new completion satisfies it (solicited: it satisfies
 * a solicited-only arm too). Under cq->lock; false if it was not armed so.
 */
static bool sv_cq_take_arm(struct sv_cq *cq, bool solicited)
{
	u32 *armp = &cq->ring->arm;
	u32 arm, want;

	arm = READ_ONCE(*armp);
	for (;;) {
		if (!sv_cq_arm_wants(arm, solicited))
			return false;
		want = arm & ~SV_CQ_ARM_MASK;
		want = cmpxchg(armp, arm, want);
		if (want == arm)
			return true;
		arm = want;	/* the library changed it: look again */
	}
}

/* The event of a taken arm. Under cq->lock. */
static void sv_cq_fire(struct sv_cq *cq)
{
	cq->mod_pending = 0;
	/* Not waiting: its callback may be spinning on cq->lock. */
	hrtimer_try_to_cancel(&cq->mod_timer);
	if (cq->channel)
		sv_comp_event(cq->channel, cq->user_handle, cq->uobj.handle,
			      &cq->events);
}

/* One more completion owed an event: is it due? Under cq->lock. */
static bool sv_cq_mod_due(struct sv_cq *cq)
{
	if (!cq->mod_count && !cq->mod_period)
		return true;
	cq->mod_pending++;
	if (cq->mod_count && cq->mod_pending >= cq->mod_count)
		return true;
	if (cq->mod_pending == 1 && cq->mod_period)
		hrtimer_start(&cq->mod_timer,
			      ns_to_ktime((u64)cq->mod_period * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_SOFT);
	return false;
}

/* Called with cq->lock held, after the new CQE was published. */
static void sv_cq_notify(struct sv_cq *cq, bool solicited)
{
	u32 arm;

	/* Pairs with the library's atomic OR on arm (uapi contract). */
	smp_mb();
	arm = READ_ONCE(cq->ring->arm);
	if (!sv_cq_arm_wants(arm, solicited))
		return;
	if (sv_cq_mod_due(cq) && sv_cq_take_arm(cq, solicited))
		sv_cq_fire(cq);
}

/* The moderation period ran out: the event for what is pending. */
static enum hrtimer_restart sv_cq_mod_expire(struct hrtimer *t)
{
	struct sv_cq *cq = container_of(t, struct sv_cq, mod_timer);
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (!cq->dead && cq->mod_pending && sv_cq_take_arm(cq, true))
		sv_cq_fire(cq);
	cq->mod_pending = 0;
	spin_unlock_irqrestore(&cq->lock, flags);
	return HRTIMER_NORESTART;
}

/* Slot i of the current ring. cq->lock (or a ring nobody sees yet). */
static struct sv_cqe *sv_cq_slot(void *cqes, u32 cqe_size, u32 i)
{
	return cqes + (size_t)i * cqe_size;
}

/* The stamps the CQ asked for into slot: now, or the producer's @ts. */
static void sv_cq_stamp(struct sv_cq *cq, struct sv_cqe *slot,
			const struct sv_cq_stamp *ts)
{
	u64 want = cq->wc_flags & SV_CQ_WC_TIMESTAMPS;
	struct sv_cqe_ext *ext;
	u64 raw, real;

	slot->timestamp = 0;
	if (!want)
		return;
	raw = ts ? ts->raw : 0;
	real = ts ? ts->real : 0;
	if (want & SV_CQ_WC_TS_DEVICE)
		slot->timestamp = raw ?: ktime_get_raw_ns();
	if (!(want & SV_CQ_WC_TS_WALLCLOCK))
		return;
	real = real ?: ktime_get_real_ns();
	if (cq->cqe_size == SV_CQE_128_SIZE) {
		ext = (struct sv_cqe_ext *)(slot + 1);
		ext->wallclock = real;
	} else if (!(want & SV_CQ_WC_TS_DEVICE)) {
		slot->timestamp = real;	/* a 64-byte CQE has one stamp */
	}
}

/**
 * sv_cq_push_stamped - add one completion to a CQ
 * @cq: the CQ; the caller keeps it alive (a reference or its usecnt)
 * @cqe: the completion; its timestamp is not read: the CQ's stamps are
 *	filled here, if it wants them
 * @solicited: the completion satisfies a solicited-only arm (a receive
 *	of a message with the solicited event bit); errors always do
 * @ts: when the completion happened (device clock and wall clock, ns), or
 *	NULL for now; a zero member also means now
 *
 * Any context. Returns 0, or -ENOSPC if the ring was full (the CQE is
 * dropped; unless the CQ ignores overruns it is now in error and an
 * IBV_EVENT_CQ_ERR async event was raised), or -EINVAL if the CQ is
 * destroyed or already in error.
 */
int sv_cq_push_stamped(struct sv_cq *cq, const struct sv_cqe *cqe,
		       bool solicited, const struct sv_cq_stamp *ts)
{
	struct sv_cq_ring *ring;
	struct sv_cqe *slot;
	unsigned long flags;
	int ret = 0;
	u32 cons;

	spin_lock_irqsave(&cq->lock, flags);
	ring = cq->ring;		/* resize may swap it */
	if (cq->dead || cq->overflowed) {
		ret = -EINVAL;
		goto out;
	}
	/*
	 * Pairs with the library's release store of cons: it is done with
	 * the slots below. cons is untrusted: a bogus value only makes the
	 * ring look full.
	 */
	cons = smp_load_acquire(&ring->cons);
	if (cq->prod - cons >= cq->entries) {
		ret = -ENOSPC;
		if (cq->flags & SV_CQ_FLAG_IGNORE_OVERRUN)
			goto out;
		cq->overflowed = true;
		WRITE_ONCE(ring->flags, READ_ONCE(ring->flags) |
			   SV_CQ_RING_OVERFLOW);
		sv_async_event(cq->uobj.file, SV_EVENT_CQ_ERR, cq->user_handle,
			       &cq->events);
		goto out;
	}
	slot = sv_cq_slot(cq->cqes, cq->cqe_size,
			  cq->prod & (cq->entries - 1));
	memcpy(slot, cqe, sizeof(*slot));
	sv_cq_stamp(cq, slot, ts);
	cq->prod++;
	/* Publish: pairs with the library's acquire load of prod. */
	smp_store_release(&ring->prod, cq->prod);
	sv_stat_add(cq->uobj.file->sdev, SV_STAT_COMPLETIONS, 1);
	sv_cq_notify(cq, solicited || cqe->status);
out:
	spin_unlock_irqrestore(&cq->lock, flags);
	return ret;
}

/* sv_cq_push_stamped(), stamped now. */
int sv_cq_push(struct sv_cq *cq, const struct sv_cqe *cqe, bool solicited)
{
	return sv_cq_push_stamped(cq, cqe, solicited, NULL);
}

/* A zeroed ring of entries CQEs of cqe_size bytes, its header filled in. */
static struct sv_mbuf *sv_cq_ring_alloc(u32 entries, u32 cqe_size)
{
	struct sv_cq_ring *ring;
	struct sv_mbuf *b;

	b = sv_mbuf_alloc(SV_CQ_CQE_OFFSET + (size_t)entries * cqe_size);
	if (IS_ERR(b))
		return b;
	ring = b->vaddr;
	ring->entries = entries;
	ring->cqe_size = cqe_size;
	return b;
}

int sv_create_cq(struct sv_file *f, void *arg)
{
	struct sv_create_cq *cmd = arg;
	struct sv_comp_channel *ch = NULL;
	struct sv_cq *cq;
	u32 entries;
	int ret;

	BUILD_BUG_ON(sizeof(struct sv_cqe) != SV_CQE_SIZE);
	BUILD_BUG_ON(sizeof(struct sv_cqe) + sizeof(struct sv_cqe_ext) !=
		     SV_CQE_128_SIZE);
	BUILD_BUG_ON(sizeof(struct sv_cq_ring) > SV_CQ_CQE_OFFSET);

	if (cmd->flags & ~SV_CQ_FLAGS_KNOWN || cmd->reserved ||
	    cmd->wc_flags & ~SV_CQ_WC_FLAGS_KNOWN)
		return -EINVAL;
	if (cmd->wc_flags & ~SV_CQ_WC_FLAGS_SUPPORTED)
		return -EOPNOTSUPP;
	if (!cmd->cqe || cmd->cqe > sv_depth(f->sdev, SV_DEPTH_CQE) ||
	    cmd->comp_vector >= SV_NUM_COMP_VECTORS)
		return -EINVAL;
	entries = roundup_pow_of_two(cmd->cqe);

	if (cmd->channel) {
		ch = sv_comp_channel_get(f, cmd->channel);
		if (IS_ERR(ch))
			return PTR_ERR(ch);
	}
	cq = kzalloc(sizeof(*cq), GFP_KERNEL_ACCOUNT);
	if (!cq) {
		ret = -ENOMEM;
		goto err_channel;
	}
	/* max_cq (ENOMEM), the user's share and the rdma cgroup (EAGAIN) */
	ret = sv_charge(f, SV_OBJ_CQ, &cq->uobj.charge);
	if (ret)
		goto err_cq;
	spin_lock_init(&cq->lock);
	hrtimer_init(&cq->mod_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	cq->mod_timer.function = sv_cq_mod_expire;
	sv_event_obj_init(&cq->events);
	cq->entries = entries;
	cq->cqe_size = cmd->flags & SV_CQ_FLAG_CQE_128 ? SV_CQE_128_SIZE :
			SV_CQE_SIZE;
	cq->flags = cmd->flags;
	cq->wc_flags = cmd->wc_flags;
	cq->user_handle = cmd->user_handle;
	cq->ring_buf = sv_cq_ring_alloc(entries, cq->cqe_size);
	if (IS_ERR(cq->ring_buf)) {
		ret = PTR_ERR(cq->ring_buf);
		goto err_cq;
	}
	cq->ring = cq->ring_buf->vaddr;
	cq->cqes = cq->ring_buf->vaddr + SV_CQ_CQE_OFFSET;

	ret = sv_mmap_entry_add(f, cq->ring_buf, &cq->mmap_offset);
	if (ret)
		goto err_buf;
	ret = sv_uobj_add(f, &cq->uobj, SV_OBJ_CQ, &sv_cq_ops);
	if (ret)
		goto err_mmap;
	if (ch) {
		cq->channel = ch;
		atomic_inc(&ch->uobj.usecnt);
	}

	cmd->handle = cq->uobj.handle;
	cmd->cqe = entries;
	cmd->mmap_offset = cq->mmap_offset;
	cmd->mmap_len = cq->ring_buf->size;
	cmd->cqe_offset = SV_CQ_CQE_OFFSET;
	return 0;

err_mmap:
	sv_mmap_entry_remove(f, cq->mmap_offset);
err_buf:
	sv_mbuf_put(cq->ring_buf);
err_cq:
	sv_uncharge(&cq->uobj.charge);
	kfree(cq);
err_channel:
	if (ch)
		sv_uobj_put(&ch->uobj);
	return ret;
}

/*
 * Test hook: SV_IOC_TEST_CQ_PUSH lets selftests produce completions before
 * the execution engine exists. Off unless root turns it on at runtime.
 */
static bool test_hooks;
module_param(test_hooks, bool, 0600);
MODULE_PARM_DESC(test_hooks, "TEST ONLY: enable SV_IOC_TEST_CQ_PUSH (default off)");

int sv_test_cq_push(struct sv_file *f, void *arg)
{
	struct sv_test_cq_push *cmd = arg;
	struct sv_cq *cq;
	int ret;

	if (!READ_ONCE(test_hooks))
		return -ENOTTY;
	if (cmd->solicited > 1 || cmd->reserved)
		return -EINVAL;
	cq = sv_cq_get(f, cmd->handle);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	ret = sv_cq_push(cq, &cmd->cqe, cmd->solicited);
	sv_uobj_put(&cq->uobj);
	return ret;
}

int sv_resize_cq(struct sv_file *f, void *arg)
{
	struct sv_resize_cq *cmd = arg;
	struct sv_cq_ring *old_ring, *ring;
	struct sv_mbuf *b;
	void *cqes;
	unsigned long flags;
	u32 entries, pending, i;
	struct sv_cq *cq;
	u64 offset;
	int ret;

	if (cmd->reserved || !cmd->cqe ||
	    cmd->cqe > sv_depth(f->sdev, SV_DEPTH_CQE))
		return -EINVAL;
	entries = roundup_pow_of_two(cmd->cqe);
	cq = sv_cq_get(f, cmd->handle);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	b = sv_cq_ring_alloc(entries, cq->cqe_size);
	if (IS_ERR(b)) {
		ret = PTR_ERR(b);
		goto out_put;
	}
	ret = sv_mmap_entry_add(f, b, &offset);
	if (ret)
		goto out_buf;
	ring = b->vaddr;
	cqes = b->vaddr + SV_CQ_CQE_OFFSET;

	spin_lock_irqsave(&cq->lock, flags);
	old_ring = cq->ring;
	/* Pairs with the library's release store of cons, as in push. */
	pending = cq->prod - smp_load_acquire(&old_ring->cons);
	if (pending > cq->entries || pending > entries) {
		spin_unlock_irqrestore(&cq->lock, flags);
		sv_mmap_entry_remove(f, offset);
		ret = -EINVAL;
		goto out_buf;
	}
	for (i = 0; i < pending; i++)
		memcpy(sv_cq_slot(cqes, cq->cqe_size, i),
		       sv_cq_slot(cq->cqes, cq->cqe_size,
				  (cq->prod - pending + i) & (cq->entries - 1)),
		       cq->cqe_size);
	ring->prod = pending;
	ring->arm = READ_ONCE(old_ring->arm);
	ring->flags = READ_ONCE(old_ring->flags);
	swap(cq->ring_buf, b);		/* b is the old ring now */
	cq->ring = ring;
	cq->cqes = cqes;
	cq->entries = entries;
	cq->prod = pending;
	spin_unlock_irqrestore(&cq->lock, flags);

	/* Old mappings keep the old ring; it can no longer be mapped. */
	if (!b->user)
		sv_mmap_entry_remove(f, cq->mmap_offset);
	cq->mmap_offset = offset;
	cmd->cqe = entries;
	cmd->mmap_offset = offset;
	cmd->mmap_len = cq->ring_buf->size;
out_buf:
	sv_mbuf_put(b);
out_put:
	sv_uobj_put(&cq->uobj);
	return ret;
}

int sv_modify_cq(struct sv_file *f, void *arg)
{
	struct sv_modify_cq *cmd = arg;
	unsigned long flags;
	struct sv_cq *cq;

	if (cmd->attr_mask != SV_CQ_MODERATE || cmd->reserved ||
	    cmd->cq_count > SV_MAX_CQ_MOD_COUNT ||
	    cmd->cq_period > SV_MAX_CQ_MOD_PERIOD)
		return -EINVAL;
	cq = sv_cq_get(f, cmd->handle);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	spin_lock_irqsave(&cq->lock, flags);
	cq->mod_count = cmd->cq_count;
	cq->mod_period = cmd->cq_period;
	/* What waited under the old rules gets its event now. */
	if (!cq->dead && cq->mod_pending && sv_cq_take_arm(cq, true))
		sv_cq_fire(cq);
	cq->mod_pending = 0;
	spin_unlock_irqrestore(&cq->lock, flags);
	sv_uobj_put(&cq->uobj);
	return 0;
}

int sv_destroy_cq(struct sv_file *f, void *arg)
{
	struct sv_destroy_cq *cmd = arg;
	struct sv_cq *cq;
	int ret;

	cq = sv_cq_get(f, cmd->handle);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	ret = sv_uobj_destroy(f, cmd->handle, SV_OBJ_CQ);
	if (!ret) {
		/* Its events are detached: the counts are final. */
		cmd->comp_events_reported = cq->events.comp_reported;
		cmd->async_events_reported = cq->events.async_reported;
	}
	sv_uobj_put(&cq->uobj);
	return ret;
}
