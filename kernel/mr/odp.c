// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs on-demand paging: MRs registered with SV_ACCESS_ON_DEMAND.
 *
 * An ODP MR pins nothing and charges nothing to RLIMIT_MEMLOCK. It keeps
 * a cache of the pages the data path has touched, by user page number,
 * filled by faulting them in with hmm_range_fault() and emptied by an
 * mmu_interval_notifier over the MR's range (the whole address space for
 * an implicit MR: address 0, length U64_MAX). A cached page is used only
 * under odp->lock, and the notifier drops pages under that lock before
 * the kernel unmaps, moves or frees them: a copy sees the page the
 * process has at that address now, never one it has given up (munmap,
 * mremap, a COW break after fork, migration, THP collapse). The cache's
 * entries are pfn << 1 | writable (xa_mk_value); a read-only entry (a COW
 * or zero page) is faulted again for writing before it is written.
 *
 * Faulting runs in the context of whoever copies (an engine, an ioctl),
 * never under odp->lock. It reserves the cache's slots first, charged to
 * the registering process's memory cgroup, so that filling them under
 * the lock allocates nothing: the notifier may run in reclaim, and it
 * takes odp->lock. A copy that cannot sleep (a raw frame delivered in
 * softirq) gets -EAGAIN for a missing page and queues the fault to
 * sv_odp_wq; the caller drops what it was delivering, as a NIC drops
 * frames while a receive page fault is served.
 *
 * odp->lock is a BH-safe spinlock: copies into an MR happen in softirq
 * (raw frames) and under spinlocks (atomics). Two ODP MRs in one copy are
 * locked in address order. The MR's data path (mr.c) holds the lock for
 * at most one page's copy.
 *
 * Teardown: sv_odp_release() marks the cache dead and hands the rest to
 * sv_odp_wq: the queued fault (if any) is cancelled, the notifier removed
 * and the cache freed there, so that dereg (under f->lock) never waits
 * for a fault that userspace can make slow (a FUSE page).
 */
#include <linux/hmm.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "../sv.h"
#include "mr.h"

/* Pages faulted in at once: a copy's following pages come with its first. */
#define SV_ODP_FAULT_PAGES	32

struct sv_odp {
	spinlock_t lock;		/* the cache; BH-safe */
	struct mmu_interval_notifier notifier;
	struct xarray pages;		/* page number -> pfn << 1 | writable */
	struct mm_struct *mm;		/* grabbed */
	struct mem_cgroup *memcg;	/* the registering process's */
	u64 start, end;			/* page-aligned: the range watched */
	bool dead;			/* under lock: released */
	/* A fault queued by a copy that could not sleep: under lock. */
	u64 want_addr, want_len;
	bool want_write;
	struct work_struct fault_work;
	struct work_struct free_work;
};

static struct workqueue_struct *sv_odp_wq;

static bool sv_odp_invalidate(struct mmu_interval_notifier *mni,
			      const struct mmu_notifier_range *range,
			      unsigned long cur_seq)
{
	struct sv_odp *odp = container_of(mni, struct sv_odp, notifier);
	u64 first = max_t(u64, range->start, odp->start) >> PAGE_SHIFT;
	u64 last = (min_t(u64, range->end, odp->end) - 1) >> PAGE_SHIFT;
	XA_STATE(xas, &odp->pages, first);
	void *e;

	/* A spinlock: the same for callers that may not block. */
	spin_lock_bh(&odp->lock);
	mmu_interval_set_seq(mni, cur_seq);
	xas_lock(&xas);
	xas_for_each(&xas, e, last)
		if (xa_is_value(e))
			xas_store(&xas, NULL);
	xas_unlock(&xas);
	spin_unlock_bh(&odp->lock);
	return true;
}

static const struct mmu_interval_notifier_ops sv_odp_ops = {
	.invalidate = sv_odp_invalidate,
};

/*
 * Cache the pages of [addr, addr + len), at most SV_ODP_FAULT_PAGES from
 * addr's: faulted in (with write, writable) if fault, else only those
 * mapped already. 0 if done (with fault: at least addr's page cached);
 * -EFAULT if addr's page is not mapped (or not writable for write), or
 * the process is gone; -ENOMEM.
 */
static int sv_odp_fill(struct sv_odp *odp, u64 addr, u64 len, bool write,
		       bool fault)
{
	unsigned long pfns[SV_ODP_FAULT_PAGES];
	struct hmm_range range = {
		.notifier = &odp->notifier,
		.hmm_pfns = pfns,
		.default_flags = fault ? HMM_PFN_REQ_FAULT |
				 (write ? HMM_PFN_REQ_WRITE : 0) : 0,
	};
	struct mem_cgroup *old;
	u64 start = addr & PAGE_MASK, n, i;
	int ret = 0;

	if (addr < odp->start || addr >= odp->end)
		return -EFAULT;
	n = (PAGE_ALIGN(addr + max_t(u64, len, 1)) - start) >> PAGE_SHIFT;
	n = min3(n, (u64)SV_ODP_FAULT_PAGES, (odp->end - start) >> PAGE_SHIFT);
	if (!mmget_not_zero(odp->mm))
		return -EFAULT;
	/* The slots, so that filling them under the lock allocates nothing. */
	old = set_active_memcg(odp->memcg);
	for (i = 0; i < n && !ret; i++)
		ret = xa_reserve(&odp->pages, (start >> PAGE_SHIFT) + i,
				 GFP_KERNEL_ACCOUNT);
	set_active_memcg(old);
	if (ret)
		goto out;
again:
	range.start = start;
	range.end = start + (n << PAGE_SHIFT);
	range.notifier_seq = mmu_interval_read_begin(&odp->notifier);
	mmap_read_lock(odp->mm);
	ret = hmm_range_fault(&range);
	mmap_read_unlock(odp->mm);
	if (ret == -EBUSY) {
		cond_resched();
		goto again;
	}
	/* Pages after addr's may be unmapped: then only addr's. */
	if ((ret == -EFAULT || ret == -EPERM) && n > 1) {
		n = 1;
		goto again;
	}
	/* -EPERM: a write to a read-only mapping; the same as no mapping. */
	if (ret == -EPERM)
		ret = -EFAULT;
	if (ret)
		goto out;
	spin_lock_bh(&odp->lock);
	if (mmu_interval_read_retry(&odp->notifier, range.notifier_seq)) {
		spin_unlock_bh(&odp->lock);
		goto again;
	}
	for (i = 0; i < n; i++) {
		unsigned long v = (pfns[i] & ~HMM_PFN_FLAGS) << 1 |
				  ((pfns[i] & HMM_PFN_WRITE) ? 1 : 0);

		if (!(pfns[i] & HMM_PFN_VALID))
			continue;
		/* A slot lost meanwhile is faulted again when touched. */
		xa_store(&odp->pages, (start >> PAGE_SHIFT) + i,
			 xa_mk_value(v), GFP_NOWAIT | __GFP_NOWARN);
	}
	spin_unlock_bh(&odp->lock);
out:
	mmput(odp->mm);
	return ret;
}

/* Fault addr's page (and what follows, up to len) in: sv_odp_fill(). */
int sv_odp_fault(struct sv_odp *odp, u64 addr, u64 len, bool write)
{
	return sv_odp_fill(odp, addr, len, write, true);
}

/*
 * The kernel address of the page of user address addr, if cached (and
 * writable, for write); NULL if not. Under sv_odp_lock()'s lock, and good
 * until it is dropped.
 */
void *sv_odp_page(struct sv_odp *odp, u64 addr, bool write)
{
	void *e = xa_load(&odp->pages, addr >> PAGE_SHIFT);
	unsigned long v;

	if (!xa_is_value(e))
		return NULL;
	v = xa_to_value(e);
	if (write && !(v & 1))
		return NULL;
	return page_address(pfn_to_page(v >> 1)) + (addr & ~PAGE_MASK);
}

/* The lock sv_odp_page()'s answer is good under (mr.c takes it). */
spinlock_t *sv_odp_lock(struct sv_odp *odp)
{
	return &odp->lock;
}

static void sv_odp_fault_work(struct work_struct *work)
{
	struct sv_odp *odp = container_of(work, struct sv_odp, fault_work);
	u64 addr, len;
	bool write;

	spin_lock_bh(&odp->lock);
	addr = odp->want_addr;
	len = odp->want_len;
	write = odp->want_write;
	odp->want_len = 0;
	spin_unlock_bh(&odp->lock);
	if (len)
		sv_odp_fault(odp, addr, len, write);
}

/*
 * A copy that cannot sleep found addr's page missing: fault it (and what
 * follows, up to len) from sv_odp_wq. One request at a time: the latest.
 */
void sv_odp_fault_later(struct sv_odp *odp, u64 addr, u64 len, bool write)
{
	spin_lock_bh(&odp->lock);
	if (!odp->dead) {
		odp->want_addr = addr;
		odp->want_len = max_t(u64, len, 1);
		odp->want_write = write;
		queue_work(sv_odp_wq, &odp->fault_work);
	}
	spin_unlock_bh(&odp->lock);
}

/*
 * Prefetch (ibv_advise_mr): [addr, addr + len) into the cache; with fault
 * false only the pages the process has mapped already (NO_FAULT advice).
 * -EFAULT for a page that is not mapped (with fault).
 */
int sv_odp_prefetch(struct sv_odp *odp, u64 addr, u64 len, bool write,
		    bool fault)
{
	u64 end = addr + len, next;
	int ret;

	while (addr < end) {
		next = min(end, (addr & PAGE_MASK) +
				((u64)SV_ODP_FAULT_PAGES << PAGE_SHIFT));
		ret = sv_odp_fill(odp, addr, next - addr, write, fault);
		if (ret)
			return ret;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
		addr = next;
	}
	return 0;
}

static void sv_odp_free_work(struct work_struct *work)
{
	struct sv_odp *odp = container_of(work, struct sv_odp, free_work);

	cancel_work_sync(&odp->fault_work);
	mmu_interval_notifier_remove(&odp->notifier);
	xa_destroy(&odp->pages);
	mem_cgroup_put(odp->memcg);
	mmdrop(odp->mm);
	kfree(odp);
}

/*
 * A cache over [addr, addr + length) of current's memory, or over all of
 * it (implicit: addr 0, length U64_MAX). Nothing is faulted in yet.
 */
struct sv_odp *sv_odp_new(u64 addr, u64 length)
{
	struct mm_struct *mm = current->mm;
	struct sv_odp *odp;
	int ret;

	if (!mm)
		return ERR_PTR(-EFAULT);
	odp = kzalloc(sizeof(*odp), GFP_KERNEL_ACCOUNT);
	if (!odp)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&odp->lock);
	xa_init(&odp->pages);
	INIT_WORK(&odp->fault_work, sv_odp_fault_work);
	INIT_WORK(&odp->free_work, sv_odp_free_work);
	if (length == U64_MAX) {
		odp->start = 0;
		odp->end = mm->task_size;
	} else {
		odp->start = addr & PAGE_MASK;
		odp->end = PAGE_ALIGN(addr + length);
	}
	ret = mmu_interval_notifier_insert(&odp->notifier, mm, odp->start,
					   odp->end - odp->start,
					   &sv_odp_ops);
	if (ret) {
		kfree(odp);
		return ERR_PTR(ret);
	}
	mmgrab(mm);
	odp->mm = mm;
	odp->memcg = get_mem_cgroup_from_mm(mm);
	return odp;
}

/* The MR is done with it: no copy uses it any more. */
void sv_odp_release(struct sv_odp *odp)
{
	spin_lock_bh(&odp->lock);
	odp->dead = true;
	spin_unlock_bh(&odp->lock);
	queue_work(sv_odp_wq, &odp->free_work);
}

int sv_odp_init(void)
{
	sv_odp_wq = alloc_workqueue("softverbs_odp", WQ_UNBOUND, 0);
	return sv_odp_wq ? 0 : -ENOMEM;
}

/* After every file is closed: waits for the caches being freed. */
void sv_odp_exit(void)
{
	destroy_workqueue(sv_odp_wq);
}
