// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs memory regions.
 *
 * Registering pins the user pages long-term with the GUP flags the RDMA
 * core's ib_umem_get() uses on the kernel we run on (SV_GUP_LONGTERM() in
 * compat.h), and charges them to the registering process's RLIMIT_MEMLOCK
 * on mm->pinned_vm, as ib_umem does; CAP_IPC_LOCK lifts the limit. The
 * limits are checked before anything sized by the length is allocated,
 * and the page list is built in chunks of one page of page pointers as
 * the pages are pinned, so a huge registration costs memory only as it
 * succeeds, is charged to the caller's memory cgroup, and a fatal signal
 * stops it. The MR keeps a grab on that mm, so the charge is returned when
 * the MR goes, even after the process has exited and another one closes
 * the file.
 *
 * Pinning can sleep for as long as userspace wants (a userfaultfd or FUSE
 * page), so REG_MR and REREG_MR run without f->lock (file.c) and take it
 * only to look at the file's objects and to commit: the lock that other
 * control commands, device removal and the resource dumps wait for is
 * never held across user-controlled sleeps here.
 *
 * Keys: every MR owns a 24-bit index in sv_mr_keys for its whole life,
 * chosen at random among the free ones, and its lkey (== rkey) is the
 * index << 8 | a random 8-bit variant: keys are not a sequence one can
 * guess from one's own. The key stays the same across every rereg
 * (access, PD, translation), as on rxe and mlx5: peers keep the rkey they
 * were given. The data path takes spans of MRs by key with
 * sv_mr_span_get() (xa_load under RCU, the memory is freed after a grace
 * period; then enter and check key, PD, access and bounds once) and moves
 * bytes between spans and buffers with sv_mr_span_copy/read/write().
 *
 * A span is held inside sv_mr_enter()/sv_mr_exit(): mr->active counts the
 * spans held plus one while the MR is open to them. Rereg and dereg close
 * it (drop that one and wait for the spans to be put; new ones fail),
 * change or unpin, and rereg reopens it. So a work request sees the MR
 * whole (all old or all new), never touches pages being unpinned, and
 * once dereg (or rereg) returns nobody uses the old pages any more. A work
 * request holds its spans while it executes; it may wait for a receive
 * queue's mutex, never for f->lock, the only lock rereg and dereg hold
 * while they wait.
 *
 * On-demand paging (SV_ACCESS_ON_DEMAND, odp.c) pins nothing: the page
 * lookups of a copy (sv_mr_addr()) go through the MR's page cache under
 * its lock, and a page not there is faulted in first (sv_mr_fault()), or
 * is -EAGAIN for a caller that may not sleep. The lock is held for one
 * page's copy at a time; two ODP MRs of one copy are locked together.
 *
 * Device limits: SV_MAX_MR MRs per device (max_mr; beyond: ENOMEM) of at
 * most SV_MAX_MR_SIZE bytes each (max_mr_size; beyond: EINVAL); the MR is
 * charged (limits.c: the device, the user's share, the rdma cgroup)
 * before anything is pinned.
 */
#include <linux/capability.h>
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/highmem.h>
#include <linux/ioport.h>
#include <linux/libnvdimm.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "../compat.h"
#include "../sv.h"
#include "mr.h"

#define SV_MR_KEY_VARIANT_MASK	0xffU
#define SV_MR_KEY_INDEX_MAX	((1U << SV_MR_KEY_INDEX_BITS) - 1)
#define SV_ACCESS_WRITES	(SV_ACCESS_LOCAL_WRITE | SV_ACCESS_REMOTE_WRITE | \
				 SV_ACCESS_REMOTE_ATOMIC | SV_ACCESS_MW_BIND)
#define SV_ACCESS_RIGHTS	(SV_ACCESS_LOCAL_WRITE | SV_ACCESS_REMOTE_WRITE | \
				 SV_ACCESS_REMOTE_READ | SV_ACCESS_REMOTE_ATOMIC)
#define SV_ACCESS_FLUSH		(SV_ACCESS_FLUSH_GLOBAL | \
				 SV_ACCESS_FLUSH_PERSISTENT)
#define SV_ACCESS_KNOWN		(SV_ACCESS_RIGHTS | SV_ACCESS_MW_BIND | \
				 SV_ACCESS_ZERO_BASED | SV_ACCESS_ON_DEMAND | \
				 SV_ACCESS_HUGETLB | SV_ACCESS_FLUSH | \
				 SV_ACCESS_OPTIONAL_RANGE)
#define SV_REREG_MR_FLAGS	(SV_REREG_MR_CHANGE_TRANSLATION | \
				 SV_REREG_MR_CHANGE_PD | \
				 SV_REREG_MR_CHANGE_ACCESS)
/*
 * Page pointers per chunk of the page list: one page worth. Pages are
 * pinned and unpinned a chunk at a time, too.
 */
#define SV_PIN_CHUNK_SHIFT	(PAGE_SHIFT - ilog2(sizeof(struct page *)))
#define SV_PIN_CHUNK		BIT(SV_PIN_CHUNK_SHIFT)

/*
 * Pinned, charged user memory: [addr, addr + length) of mm. Page i is
 * chunks[i / SV_PIN_CHUNK][i % SV_PIN_CHUNK].
 */
struct sv_umem {
	struct mm_struct *mm;
	struct page ***chunks;
	unsigned long npages;
	u64 addr;
	u64 length;
	bool writable;
	/*
	 * Or device memory (dm.c): its pages from first on, nothing pinned
	 * or charged again; addr is the offset in it. The DM is referenced
	 * and its use count raised.
	 */
	struct sv_dm *dm;
	unsigned long first;
	/*
	 * Or on-demand paging (odp.c): nothing pinned or charged; the pages
	 * come and go with the process's mapping. addr 0 and length
	 * U64_MAX: the whole address space (implicit).
	 */
	struct sv_odp *odp;
	/* Or nothing (ibv_alloc_null_mr): zeros in, writes discarded. */
	bool null;
	/* Or a dma-buf's range from addr on (dmabuf.c), nothing charged. */
	struct sv_dmabuf *dmabuf;
};

/*
 * What a null MR's writes land in: one page nobody reads, shared by every
 * null MR (concurrent writes to it are harmless). Its reads come from the
 * zero page.
 */
static void *sv_null_sink;

/* Key index -> struct sv_mr, for every device (indexes are unique). */
static DEFINE_XARRAY_ALLOC1(sv_mr_keys);

static struct sv_mr *to_sv_mr(struct sv_uobj *u)
{
	return container_of(u, struct sv_mr, uobj);
}

static bool sv_access_writable(u32 access)
{
	return access & SV_ACCESS_WRITES;
}

/* The rules of ibv_reg_mr(3) for access flags. */
static int sv_mr_check_access(u32 access)
{
	if (access & ~SV_ACCESS_KNOWN)
		return -EINVAL;
	if ((access & (SV_ACCESS_REMOTE_WRITE | SV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & SV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/* An implicit ODP MR: all of the address space (ibv_reg_mr(3)). */
static bool sv_mr_implicit(u64 addr, u64 length, u32 access)
{
	return !addr && length == U64_MAX && (access & SV_ACCESS_ON_DEMAND);
}

/*
 * A user range to register: not empty, no wrap, at most max_mr_size; or
 * an implicit ODP MR (its iova is 0, it is not zero-based).
 */
static int sv_mr_check_range(u64 addr, u64 length, u32 access, u64 iova)
{
	if (sv_mr_implicit(addr, length, access))
		return iova || (access & SV_ACCESS_ZERO_BASED) ? -EINVAL : 0;
	if (!length || length > SV_MAX_MR_SIZE)
		return -EINVAL;
	if (addr + length < addr || PAGE_ALIGN(addr + length) < addr + length)
		return -EINVAL;
	return 0;
}

/* The I/O virtual address of the MR's first byte. */
static u64 sv_mr_base(u32 access, u64 iova)
{
	return access & SV_ACCESS_ZERO_BASED ? 0 : iova;
}

static int sv_mr_check_iova(u32 access, u64 iova, u64 length)
{
	u64 base = sv_mr_base(access, iova);

	/* The last byte's address must not wrap; length is not 0. */
	return base + (length - 1) < base ? -EINVAL : 0;
}

/* The pages [addr, addr + length) touches. */
static unsigned long sv_umem_npages(u64 addr, u64 length)
{
	return (PAGE_ALIGN(addr + length) - (addr & PAGE_MASK)) >> PAGE_SHIFT;
}

static struct page *sv_umem_page(const struct sv_umem *umem, unsigned long i)
{
	if (umem->dm)
		return umem->dm->buf->pages[umem->first + i];
	return umem->chunks[i >> SV_PIN_CHUNK_SHIFT][i & (SV_PIN_CHUNK - 1)];
}

/* Unpin the first npinned pages of umem and free the page list. */
static void sv_umem_unpin(struct sv_umem *umem, unsigned long npinned,
			  bool dirty)
{
	unsigned long c, n;

	for (c = 0; c << SV_PIN_CHUNK_SHIFT < umem->npages; c++) {
		if (!umem->chunks[c])
			break;
		n = 0;
		if (npinned > c << SV_PIN_CHUNK_SHIFT)
			n = min(npinned - (c << SV_PIN_CHUNK_SHIFT),
				SV_PIN_CHUNK);
		if (n)
			unpin_user_pages_dirty_lock(umem->chunks[c], n, dirty);
		kfree(umem->chunks[c]);
		cond_resched();
	}
	kvfree(umem->chunks);
}

static void sv_umem_release(struct sv_umem *umem)
{
	if (umem->dmabuf)
		sv_dmabuf_release(umem->dmabuf);
	if (umem->null || umem->dmabuf) {
		kfree(umem);
		return;
	}
	if (umem->odp) {
		sv_odp_release(umem->odp);
		kfree(umem);
		return;
	}
	if (umem->dm) {
		atomic_dec(&umem->dm->uobj.usecnt);
		sv_uobj_put(&umem->dm->uobj);
		kfree(umem);
		return;
	}
	sv_umem_unpin(umem, umem->npages, umem->writable);
	sv_pinned_uncharge(umem->mm, umem->npages);
	mmdrop(umem->mm);
	kfree(umem);
}

/* Pin the pages of one chunk, starting at page first of the range. */
static int sv_umem_pin_chunk(struct sv_umem *umem, unsigned long first,
			     unsigned long n, unsigned int gup)
{
	u64 start = (umem->addr & PAGE_MASK) + ((u64)first << PAGE_SHIFT);
	struct page **pages = umem->chunks[first >> SV_PIN_CHUNK_SHIFT];
	unsigned long done = 0;
	long ret;

	while (done < n) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err;
		}
		ret = pin_user_pages_fast(start + (done << PAGE_SHIFT),
					  n - done, gup, pages + done);
		if (ret <= 0) {
			ret = ret ? ret : -EFAULT;
			goto err;
		}
		done += ret;
	}
	return 0;
err:
	unpin_user_pages(pages, done);
	return ret;
}

/* [addr, addr + length) of current's memory, paged on demand. */
static struct sv_umem *sv_umem_get_odp(u64 addr, u64 length, bool writable)
{
	struct sv_umem *umem;

	umem = kzalloc(sizeof(*umem), GFP_KERNEL_ACCOUNT);
	if (!umem)
		return ERR_PTR(-ENOMEM);
	umem->addr = addr;
	umem->length = length;
	umem->writable = writable;
	umem->odp = sv_odp_new(addr, length);
	if (IS_ERR(umem->odp)) {
		long ret = PTR_ERR(umem->odp);

		kfree(umem);
		return ERR_PTR(ret);
	}
	return umem;
}

/*
 * Are all of umem's pinned pages persistent memory? Only they can take
 * a FLUSH to persistence (SV_ACCESS_FLUSH_PERSISTENT).
 */
static bool sv_umem_pmem(const struct sv_umem *umem)
{
	unsigned long i;

	for (i = 0; i < umem->npages; i++)
		if (region_intersects(page_to_phys(sv_umem_page(umem, i)),
				      PAGE_SIZE, IORESOURCE_MEM,
				      IORES_DESC_PERSISTENT_MEMORY) !=
		    REGION_INTERSECTS)
			return false;
	return true;
}

/*
 * Pin [addr, addr + length) of current's memory; the range is checked.
 * May sleep for as long as the pages take to fault in: no locks held.
 * With SV_ACCESS_ON_DEMAND in access, nothing is pinned (odp.c).
 */
static struct sv_umem *sv_umem_get(u64 addr, u64 length, u32 access)
{
	bool writable = sv_access_writable(access);
	unsigned int gup = SV_GUP_LONGTERM(writable);
	struct mm_struct *mm = current->mm;
	unsigned long pinned = 0, nchunks, n;
	struct sv_umem *umem;
	int ret;

	if (access & SV_ACCESS_ON_DEMAND) {
		/* Persistence is promised for pages known at registration. */
		if (access & SV_ACCESS_FLUSH_PERSISTENT)
			return ERR_PTR(-EINVAL);
		return sv_umem_get_odp(addr, length, writable);
	}
	if (!mm)
		return ERR_PTR(-EFAULT);
	/* RLIMIT_MEMLOCK 0 without CAP_IPC_LOCK: EPERM, as in ib_umem_get. */
	if (!can_do_mlock())
		return ERR_PTR(-EPERM);
	umem = kzalloc(sizeof(*umem), GFP_KERNEL_ACCOUNT);
	if (!umem)
		return ERR_PTR(-ENOMEM);
	umem->addr = addr;
	umem->length = length;
	umem->writable = writable;
	umem->npages = sv_umem_npages(addr, length);

	/* Every limit before anything sized by the length. */
	ret = sv_pinned_charge(mm, umem->npages);
	if (ret)
		goto err_free;
	/* At most 4 MiB for max_mr_size; the chunks come as pages pin. */
	nchunks = DIV_ROUND_UP(umem->npages, SV_PIN_CHUNK);
	umem->chunks = kvcalloc(nchunks, sizeof(*umem->chunks),
				GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!umem->chunks) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	while (pinned < umem->npages) {
		n = min(umem->npages - pinned, SV_PIN_CHUNK);
		umem->chunks[pinned >> SV_PIN_CHUNK_SHIFT] =
			kmalloc_array(n, sizeof(struct page *),
				      GFP_KERNEL_ACCOUNT);
		if (!umem->chunks[pinned >> SV_PIN_CHUNK_SHIFT]) {
			ret = -ENOMEM;
			goto err_unpin;
		}
		ret = sv_umem_pin_chunk(umem, pinned, n, gup);
		if (ret)
			goto err_unpin;
		pinned += n;
		cond_resched();
	}
	if ((access & SV_ACCESS_FLUSH_PERSISTENT) && !sv_umem_pmem(umem)) {
		ret = -EINVAL;
		goto err_unpin;
	}
	mmgrab(mm);
	umem->mm = mm;
	return umem;

err_unpin:
	sv_umem_unpin(umem, pinned, false);
err_uncharge:
	sv_pinned_uncharge(mm, umem->npages);
err_free:
	kfree(umem);
	return ERR_PTR(ret);
}

static void sv_mr_exit(struct sv_mr *mr)
{
	if (atomic_dec_and_test(&mr->active))
		complete(&mr->idle);
}

/*
 * A copy may use the MR until sv_mr_exit(); false if it is closed or
 * closing (so a stream of copies cannot hold off rereg or dereg).
 */
static bool sv_mr_enter(struct sv_mr *mr)
{
	if (!atomic_inc_not_zero(&mr->active))
		return false;
	/* Ordered after the increment: a closer's flag store is seen. */
	if (READ_ONCE(mr->closing)) {
		sv_mr_exit(mr);
		return false;
	}
	return true;
}

/*
 * Close the MR to copies and wait for those in flight. Under f->lock, or
 * for an indirect key under its own lock (mkey.c): one closer at a time.
 */
void sv_mr_close(struct sv_mr *mr)
{
	WRITE_ONCE(mr->closing, true);
	sv_mr_exit(mr);
	wait_for_completion(&mr->idle);
}

/* Open it again, with what rereg changed visible to the next copy. */
void sv_mr_open(struct sv_mr *mr)
{
	reinit_completion(&mr->idle);
	WRITE_ONCE(mr->closing, false);
	atomic_set_release(&mr->active, 1);
}

static void sv_mr_destroy(struct sv_uobj *u)
{
	struct sv_mr *mr = to_sv_mr(u);
	struct sv_umem *umem;
	struct sv_pd *pd;

	/* No new lookups, no new copies; wait for those running. */
	lockdep_assert_held(&u->file->lock);
	sv_mr_key_release(mr);
	sv_mr_close(mr);
	WRITE_ONCE(mr->key, 0);
	umem = mr->umem;
	pd = mr->pd;
	mr->umem = NULL;
	mr->pd = NULL;

	sv_umem_release(umem);
	sv_pd_unpin(pd);
}

void sv_mr_free(struct sv_uobj *u)
{
	struct sv_mr *mr = to_sv_mr(u);

	/* Never destroyed: an MR that failed to become an object. */
	if (mr->umem)
		sv_umem_release(mr->umem);
	/* sv_mr_lookup_key() may still be looking at it under RCU. */
	kfree_rcu(mr, rcu);
}

static const struct sv_uobj_ops sv_mr_ops = {
	.destroy = sv_mr_destroy,
	.free = sv_mr_free,
};

/*
 * Reserve a key index for mr, at random among the free ones: the lowest
 * free index from a random start, wrapping around once.
 */
int sv_mr_alloc_index(struct sv_mr *mr)
{
	u32 start = get_random_u32_inclusive(1, SV_MR_KEY_INDEX_MAX);
	int ret;

	ret = xa_alloc(&sv_mr_keys, &mr->index, NULL,
		       XA_LIMIT(start, SV_MR_KEY_INDEX_MAX), GFP_KERNEL_ACCOUNT);
	if (ret == -EBUSY && start > 1)
		ret = xa_alloc(&sv_mr_keys, &mr->index, NULL,
			       XA_LIMIT(1, start - 1), GFP_KERNEL_ACCOUNT);
	if (ret)
		return ret == -EBUSY ? -ENOSPC : ret;
	/* The index is never 0, so neither is the key. */
	mr->key = mr->index << 8 | (get_random_u32() & SV_MR_KEY_VARIANT_MASK);
	return 0;
}

/* A new MR (or indirect key) of sdev: open to copies once published. */
void sv_mr_init(struct sv_mr *mr, struct sv_device *sdev)
{
	mr->sdev = sdev;
	atomic_set(&mr->active, 1);
	init_completion(&mr->idle);
}

/* Make a complete MR (or indirect key) findable by its key. */
int sv_mr_key_publish(struct sv_mr *mr)
{
	return xa_err(xa_store(&sv_mr_keys, mr->index, mr,
			       GFP_KERNEL_ACCOUNT));
}

/*
 * Bumped whenever a key index is given back: a cached lookup (struct
 * sv_mr_cache) made under an older generation may name an MR gone.
 */
static atomic64_t sv_mr_key_gen = ATOMIC64_INIT(1);

/*
 * Give its key index back: no new lookups find it, no cached one is used.
 * The MR's memory goes after a grace period (kfree_rcu).
 */
void sv_mr_key_release(struct sv_mr *mr)
{
	xa_erase(&sv_mr_keys, mr->index);
	atomic64_inc(&sv_mr_key_gen);
}

/*
 * The MR at key's index, or NULL; through cache if it is not NULL. A key
 * index names one MR from its publication to its release, so the cached
 * answer holds while no index has been released since it was looked up
 * (the generation is read first); the MR's memory then outlives our RCU
 * read side. The caller checks the MR's key, device and the rest.
 */
static struct sv_mr *sv_mr_find(u32 key, struct sv_mr_cache *cache,
				bool *again)
{
	u32 index = key >> 8;
	struct sv_mr *mr;
	u64 gen;

	*again = false;
	if (!cache)
		return xa_load(&sv_mr_keys, index);
	gen = atomic64_read(&sv_mr_key_gen);
	if (cache->mr && cache->gen == gen && cache->index == index) {
		*again = true;
		return cache->mr;
	}
	mr = xa_load(&sv_mr_keys, index);
	cache->mr = mr;
	cache->gen = gen;
	cache->index = index;
	return mr;
}

/* The MR whose key is key on sdev, referenced (sv_mr_put()), or NULL. */
struct sv_mr *sv_mr_lookup_key(struct sv_device *sdev, u32 key)
{
	struct sv_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sv_mr_keys, key >> 8);
	if (mr && (mr->sdev != sdev || READ_ONCE(mr->key) != key ||
		   !kref_get_unless_zero(&mr->uobj.ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

void sv_mr_put(struct sv_mr *mr)
{
	sv_uobj_put(&mr->uobj);
}

/*
 * [iova, iova + len) within the pages of mr (not an indirect key): the
 * byte offset of iova in the pinned range, or -ERANGE.
 */
static int sv_mr_range(const struct sv_mr *mr, u64 iova, u64 len,
		       u64 *offset)
{
	u64 base = sv_mr_base(mr->access, mr->iova);

	if (iova < base || iova - base > mr->umem->length ||
	    len > mr->umem->length - (iova - base))
		return -ERANGE;
	*offset = (mr->umem->addr & ~PAGE_MASK) + (iova - base);
	return 0;
}

/*
 * Check that [iova, iova + len) may be accessed through key by a QP of pd
 * with the rights in access (SV_ACCESS_*: 0 is a local read), and return
 * the byte offset of iova in the pinned range. qp is the responder of a
 * remote access, NULL for a local one: only remote accesses may go
 * through a memory window (mw.c). Between enter and exit.
 */
static int sv_mr_check(struct sv_mr *mr, u32 key, struct sv_pd *pd,
		       const struct sv_qp *qp, u32 access, u64 iova, u64 len,
		       u64 *offset)
{
	int ret;

	if (!mr->key || mr->key != key)
		return -ENOENT;
	if (mr->pd != pd)
		return -EPERM;
	if (mr->mw) {
		ret = sv_mw_check(mr, qp);
		if (ret)
			return ret;
	}
	/* Flush rights: the MR's own (no window or indirect key has them) */
	if (access & ~mr->access & SV_ACCESS_FLUSH)
		return -EACCES;
	if (mr->mkey)
		return sv_mkey_check(mr, access, iova, len, offset);
	/* A null MR has no rkey: its key is an lkey only. */
	if (qp && mr->umem->null)
		return -EACCES;
	if (access & ~mr->access & SV_ACCESS_RIGHTS)
		return -EACCES;
	return sv_mr_range(mr, iova, len, offset);
}

/* Writing needs a write right: local unless a remote one is named. */
static u32 sv_mr_write_access(u32 access)
{
	if (!(access & (SV_ACCESS_LOCAL_WRITE | SV_ACCESS_REMOTE_WRITE |
			SV_ACCESS_REMOTE_ATOMIC)))
		access |= SV_ACCESS_LOCAL_WRITE;
	return access;
}

/* Pages pinned for its life: no window, indirect key, ODP, dma-buf, null */
static bool sv_mr_pinned(const struct sv_mr *mr)
{
	const struct sv_umem *umem = mr->umem;

	return !mr->mkey && !mr->mw && !umem->odp && !umem->dmabuf &&
	       !umem->null;
}

void sv_mr_cache_drop(struct sv_mr_cache *cache)
{
	if (!cache->held)
		return;
	sv_mr_exit(cache->held);
	cache->held = NULL;
}

/*
 * A keeping cache keeps mr (entered by the caller, pinned), which passed
 * sv_mr_check() for key, pd and access: one more count of its own.
 */
static void sv_mr_cache_hold(struct sv_mr_cache *cache, struct sv_mr *mr,
			     u32 key, struct sv_pd *pd, u32 access)
{
	if (cache->held == mr && cache->held_key == key &&
	    cache->held_pd == pd) {
		/* Rights that each passed pass together. */
		cache->held_access |= access;
		return;
	}
	sv_mr_cache_drop(cache);
	/* Not 0: the caller's span counts. */
	atomic_inc(&mr->active);
	cache->held = mr;
	cache->held_key = key;
	cache->held_pd = pd;
	cache->held_access = access;
}

/*
 * A span of the MR cache keeps, if key, pd and the rights are those it
 * checked: sv_mr_check() would then fail only on the bounds. True with
 * the span taken or *ret = -ERANGE; false if the long way must decide.
 * A closing MR is given up: it takes no new spans (sv_mr_enter()).
 */
static bool sv_mr_span_kept(struct sv_mr_cache *cache,
			    struct sv_device *sdev, u32 key, struct sv_pd *pd,
			    u32 access, u64 iova, u64 len,
			    struct sv_mr_span *sp, int *ret)
{
	struct sv_mr *mr = cache->held;

	if (cache->held_key != key || cache->held_pd != pd ||
	    mr->sdev != sdev || (access & ~cache->held_access))
		return false;
	if (READ_ONCE(mr->closing)) {
		sv_mr_cache_drop(cache);
		return false;
	}
	*ret = sv_mr_range(mr, iova, len, &sp->off);
	if (*ret)
		return true;
	/* Not 0: the cache's count. */
	atomic_inc(&mr->active);
	sp->mr = mr;
	sp->len = len;
	sp->nofault = false;
	return true;
}

/* sv_mr_span_get(), and for a remote access at qp (non-NULL) */
static int sv_mr_span_take(struct sv_device *sdev, u32 key, struct sv_pd *pd,
			   const struct sv_qp *qp, u32 access, u64 iova,
			   u64 len, struct sv_mr_span *sp,
			   struct sv_mr_cache *cache)
{
	struct sv_mr *mr;
	bool again;
	int ret;

	if (cache && cache->held &&
	    sv_mr_span_kept(cache, sdev, key, pd, access, iova, len, sp,
			    &ret))
		return ret;
	/* The MR's memory outlives RCU readers (kfree_rcu). */
	rcu_read_lock();
	mr = sv_mr_find(key, cache, &again);
	if (!mr || mr->sdev != sdev || !sv_mr_enter(mr)) {
		rcu_read_unlock();
		return -ENOENT;
	}
	rcu_read_unlock();
	/* Entered: dereg waits for us before the MR can be freed. */
	ret = sv_mr_check(mr, key, pd, qp, access, iova, len, &sp->off);
	if (ret) {
		sv_mr_exit(mr);
		return ret;
	}
	sp->mr = mr;
	sp->len = len;
	sp->nofault = false;
	/* Kept from its second span on: one alone costs no more than before. */
	if (again && cache->keep && sv_mr_pinned(mr))
		sv_mr_cache_hold(cache, mr, key, pd, access);
	return 0;
}

/**
 * sv_mr_span_get - take a span of an MR for the data path
 * @sdev: the device the key must belong to
 * @key: the lkey or rkey
 * @pd: the PD of the QP using it
 * @access: SV_ACCESS_* rights needed; 0 is a local read, a span that is
 *          written needs a write right (SV_ACCESS_LOCAL_WRITE locally)
 * @iova: the span's first byte
 * @len: the span's length
 * @sp: the span, to give back with sv_mr_span_put()
 * @cache: the caller's cache of the last lookup (struct sv_mr_cache), or
 *         NULL
 *
 * Errors: -ENOENT (no such key, or the MR is going away), -EPERM (another
 * PD), -EACCES (a right not granted), -ERANGE (outside the MR); no span is
 * held then. Callable from any process context.
 */
int sv_mr_span_get(struct sv_device *sdev, u32 key, struct sv_pd *pd,
		   u32 access, u64 iova, u64 len, struct sv_mr_span *sp,
		   struct sv_mr_cache *cache)
{
	return sv_mr_span_take(sdev, key, pd, NULL, access, iova, len, sp,
			       cache);
}

/*
 * sv_mr_span_get() for a remote access arriving at dqp (of PD pd):
 * rkey may also be a memory window's.
 */
int sv_mr_span_get_remote(struct sv_qp *dqp, struct sv_pd *pd, u32 rkey,
			  u32 access, u64 iova, u64 len,
			  struct sv_mr_span *sp, struct sv_mr_cache *cache)
{
	return sv_mr_span_take(dqp->sdev, rkey, pd, dqp, access, iova, len,
			       sp, cache);
}

void sv_mr_span_put(struct sv_mr_span *sp)
{
	sv_mr_exit(sp->mr);
	sp->mr = NULL;
}

/* The kernel address of byte off of pinned pages or device memory's */
static void *sv_umem_addr(const struct sv_umem *umem, u64 off)
{
	return page_address(sv_umem_page(umem, off >> PAGE_SHIFT)) +
	       (off & ~PAGE_MASK);
}

/*
 * The kernel address of byte off of mr's pages (64-bit: no highmem to
 * map), or NULL for a page of an ODP MR that is not present (writable,
 * for write) or of a revoked dma-buf. Under sv_mr_lock(), if the MR's
 * pages have a lock.
 */
static void *sv_mr_addr(struct sv_mr *mr, u64 off, bool write)
{
	struct sv_umem *umem = mr->umem;
	u64 at = (umem->addr & PAGE_MASK) + off;

	if (umem->null)
		return (write ? sv_null_sink :
				page_address(ZERO_PAGE(0))) + (off & ~PAGE_MASK);
	if (umem->odp)
		return sv_odp_page(umem->odp, at, write);
	if (umem->dmabuf)
		return sv_dmabuf_addr(umem->dmabuf, at);
	return sv_umem_addr(umem, off);
}

/*
 * The I/O virtual range of all of the MR of rkey (SV_FLUSH_MR): -ENOENT
 * if there is none. A snapshot: sv_mr_flush() checks it again.
 */
static int sv_mr_whole(struct sv_device *sdev, u32 rkey, u64 *iova, u64 *len)
{
	struct sv_mr *mr;
	int ret = -ENOENT;

	rcu_read_lock();
	mr = xa_load(&sv_mr_keys, rkey >> 8);
	if (mr && mr->sdev == sdev && READ_ONCE(mr->key) == rkey &&
	    mr->umem && !mr->mkey) {
		*iova = sv_mr_base(mr->access, mr->iova);
		*len = mr->umem->length;
		ret = 0;
	}
	rcu_read_unlock();
	return ret;
}

/* Write back the CPU caches over a span of persistent memory. */
static void sv_mr_span_wb(const struct sv_mr_span *sp)
{
#ifdef CONFIG_ARCH_HAS_PMEM_API
	u64 off = sp->off, end = sp->off + sp->len, n;

	while (off < end) {
		n = min_t(u64, end - off, PAGE_SIZE - (off & ~PAGE_MASK));
		arch_wb_cache_pmem(sv_mr_addr(sp->mr, off, false), n);
		off += n;
		cond_resched();
	}
#endif
}

/**
 * sv_mr_flush - an RDMA FLUSH arriving at dqp (SV_WR_FLUSH)
 * @dqp: the responder QP, whose access flags the caller checked
 * @pd: its PD
 * @rkey: the MR's key
 * @access: the flush rights of its placement types: SV_ACCESS_FLUSH_GLOBAL
 *	and/or SV_ACCESS_FLUSH_PERSISTENT
 * @iova: the range's first byte (SV_FLUSH_RANGE)
 * @len: its length; 0 flushes nothing
 * @whole: SV_FLUSH_MR: all of the MR, @iova and @len unused
 *
 * Everything earlier requests placed is in memory the CPU sees already
 * (the engine copies with the CPU): a barrier makes it globally visible;
 * for persistence, the caches over the range are written back to the
 * persistent memory the MR was registered on. Errors as sv_mr_span_get():
 * the MR must grant @access.
 */
int sv_mr_flush(struct sv_qp *dqp, struct sv_pd *pd, u32 rkey, u32 access,
		u64 iova, u64 len, bool whole)
{
	struct sv_mr_span sp;
	int ret;

	if (whole) {
		ret = sv_mr_whole(dqp->sdev, rkey, &iova, &len);
		if (ret)
			return ret;
	}
	if (!len) {
		smp_mb();	/* nothing to flush: still ordered after writes */
		return 0;
	}
	ret = sv_mr_span_get_remote(dqp, pd, rkey, access, iova, len, &sp,
				    NULL);
	if (ret)
		return ret;
	if (access & SV_ACCESS_FLUSH_PERSISTENT)
		sv_mr_span_wb(&sp);
	/* Stores before it are seen (and written back) before its answer. */
	wmb();
	sv_mr_span_put(&sp);
	return 0;
}

/* The lock the MR's pages are used under: ODP and dma-buf MRs have one. */
static spinlock_t *sv_mr_lockp(const struct sv_mr_span *sp)
{
	struct sv_umem *umem = sp->mr->umem;

	if (umem->odp)
		return sv_odp_lock(umem->odp);
	if (umem->dmabuf)
		return sv_dmabuf_lock(umem->dmabuf);
	return NULL;
}

/*
 * Take the locks of one copy's two MRs (either may be NULL, or both the
 * same), in address order. For sparse, every path counts as one.
 */
static void sv_mr_lock(spinlock_t *a, spinlock_t *b) __acquires(pages)
{
	if (a == b || !b) {
		if (a)
			spin_lock_bh(a);
		else
			__acquire(pages);
		return;
	}
	if (!a) {
		spin_lock_bh(b);
		return;
	}
	if (a > b)
		swap(a, b);
	spin_lock_bh(a);
	spin_lock_nested(b, SINGLE_DEPTH_NESTING);
	__release(pages);
}

static void sv_mr_unlock(spinlock_t *a, spinlock_t *b) __releases(pages)
{
	if (b && b != a) {
		if (a) {
			if (a > b)
				swap(a, b);
			__acquire(pages);
			spin_unlock(b);
			spin_unlock_bh(a);
			return;
		}
		spin_unlock_bh(b);
		return;
	}
	if (a)
		spin_unlock_bh(a);
	else
		__release(pages);
}

/*
 * A page that sv_mr_addr() did not find: of a revoked dma-buf, -EFAULT;
 * of an ODP span, fault it in (and the copy's following pages, up to len
 * bytes), or queue that and say -EAGAIN when the caller may not sleep.
 */
static int sv_mr_fault(const struct sv_mr_span *sp, u64 off, u64 len,
		       bool write)
{
	struct sv_umem *umem = sp->mr->umem;
	u64 addr = (umem->addr & PAGE_MASK) + off;

	if (!umem->odp)
		return -EFAULT;

	if (sp->nofault) {
		sv_odp_fault_later(umem->odp, addr, len, write);
		return -EAGAIN;
	}
	return sv_odp_fault(umem->odp, addr, len, write);
}

static u64 sv_page_left(u64 off)
{
	return PAGE_SIZE - (off & ~PAGE_MASK);
}

bool sv_span_fits(const struct sv_mr_span *sp, u64 off, u64 len)
{
	return off <= sp->len && len <= sp->len - off;
}

/*
 * Map the page of byte at of a direct span: its cache locked if it has
 * one. len is what the copy has left from at. NULL (and *err) if the page
 * cannot be had: then nothing is locked, though sparse is told it is.
 */
static void *sv_mr_page_get(const struct sv_mr_span *sp, u64 at, u64 len,
			    bool write, int *err) __acquires(pages)
{
	spinlock_t *lock = sv_mr_lockp(sp);
	void *p;

	for (;;) {
		sv_mr_lock(lock, NULL);
		p = sv_mr_addr(sp->mr, at, write);
		if (p)
			return p;
		sv_mr_unlock(lock, NULL);
		*err = sv_mr_fault(sp, at, len, write);
		if (*err) {
			__acquire(pages);
			return NULL;
		}
	}
}

/* Copy between buf and [off, off + len) of a span. */
static int sv_mr_span_io(const struct sv_mr_span *sp, u64 off, void *buf,
			 u64 len, bool to_mr)
{
	u64 done, n, at;
	int ret = 0;
	void *p;

	if (sp->mr->mkey)
		return sv_mkey_span_io(sp, off, buf, len, to_mr);
	if (!sv_span_fits(sp, off, len))
		return -ERANGE;
	at = sp->off + off;
	for (done = 0; done < len; done += n, at += n) {
		n = min(len - done, sv_page_left(at));
		p = sv_mr_page_get(sp, at, len - done, to_mr, &ret);
		if (!p) {
			__release(pages);
			return ret;
		}
		/* An atomic's aligned word: one access nobody sees torn. */
		if (n == sizeof(u64) && len == n && IS_ALIGNED(at, n)) {
			if (to_mr)
				WRITE_ONCE(*(u64 *)p, get_unaligned((u64 *)buf));
			else
				put_unaligned(READ_ONCE(*(u64 *)p), (u64 *)buf);
		} else if (to_mr) {
			memcpy(p, buf + done, n);
		} else {
			memcpy(buf + done, p, n);
		}
		sv_mr_unlock(sv_mr_lockp(sp), NULL);
	}
	return 0;
}

/* The span must have been taken with a write right. */
int sv_mr_span_write(const struct sv_mr_span *dst, u64 doff,
		     const void *buf, u64 len)
{
	return sv_mr_span_io(dst, doff, (void *)buf, len, true);
}

int sv_mr_span_read(const struct sv_mr_span *src, u64 soff, void *buf,
		    u64 len)
{
	return sv_mr_span_io(src, soff, buf, len, false);
}

/*
 * sv_mr_word_get - map an aligned word of a span for an atomic
 * @sp: the span (taken with the atomic's right)
 * @off: the word's offset in it (the atomic's address is 8-byte aligned;
 *	through an indirect key the MR's byte under it need not be: then
 *	w->p is unaligned)
 * @write: whether the atomic may write it
 * @w: the mapping, to give back with sv_mr_word_put()
 *
 * May fault the page in (unless sp->nofault). -ERANGE outside the span,
 * for a word an indirect key splits, or one that crosses a page of its
 * MR; what a copy would return otherwise.
 */
int sv_mr_word_get(const struct sv_mr_span *sp, u64 off, bool write,
		   struct sv_mr_word *w) __acquires(pages)
{
	u64 at, n;
	int ret = 0;

	/* On error nothing is locked; sparse is told it is, as on success. */
	__acquire(pages);
	if (!sv_span_fits(sp, off, sizeof(u64)))
		return -ERANGE;
	ret = sv_mkey_piece(sp, off, sizeof(u64), write, &w->tmp, &w->piece,
			    &at, &n);
	if (ret)
		return ret;
	__release(pages);
	at += w->piece->off;
	if (n != sizeof(u64) || sv_page_left(at) < sizeof(u64)) {
		sv_mkey_piece_put(w->piece, &w->tmp);
		__acquire(pages);
		return -ERANGE;
	}
	w->p = sv_mr_page_get(w->piece, at, n, write, &ret);
	if (!w->p) {
		sv_mkey_piece_put(w->piece, &w->tmp);
		return ret;
	}
	w->lock = sv_mr_lockp(w->piece);
	return 0;
}

void sv_mr_word_put(struct sv_mr_word *w) __releases(pages)
{
	sv_mr_unlock(w->lock, NULL);
	sv_mkey_piece_put(w->piece, &w->tmp);
}

/*
 * n bytes within one page on each side. They overlap only within one page
 * of an MR copying to itself. memmove is the slower of the two where
 * string moves are (qemu's TCG runs rep movsb a byte at a time; x86
 * memmove uses it on any CPU with ERMS, memcpy only with FSRM).
 */
static void sv_page_copy(void *d, const void *s, u64 n)
{
	if (d + n <= s || s + n <= d)
		memcpy(d, s, n);
	else
		memmove(d, s, n);
}

/*
 * Copy len bytes from one span to another (possibly of the same MR) page
 * to page, with no bounce buffer: what a NIC's DMA does between two
 * hosts' memories. -ERANGE, and nothing copied, outside either span.
 */
int sv_mr_span_copy(const struct sv_mr_span *dst, u64 doff,
		    const struct sv_mr_span *src, u64 soff, u64 len)
{
	spinlock_t *dlock, *slock;
	u64 done, n;
	void *d, *s;
	int ret;

	if (dst->mr->mkey || src->mr->mkey)
		return sv_mkey_span_copy(dst, doff, src, soff, len);
	if (!sv_span_fits(dst, doff, len) || !sv_span_fits(src, soff, len))
		return -ERANGE;
	doff += dst->off;
	soff += src->off;
	/* Pinned pages, within one page on each side: no lock, no fault */
	if (len <= sv_page_left(soff) && len <= sv_page_left(doff) &&
	    sv_mr_pinned(src->mr) && sv_mr_pinned(dst->mr)) {
		sv_page_copy(sv_umem_addr(dst->mr->umem, doff),
			     sv_umem_addr(src->mr->umem, soff), len);
		return 0;
	}
	dlock = sv_mr_lockp(dst);
	slock = sv_mr_lockp(src);
	for (done = 0; done < len; done += n, soff += n, doff += n) {
		n = min3(len - done, sv_page_left(soff), sv_page_left(doff));
		for (;;) {
			sv_mr_lock(slock, dlock);
			s = sv_mr_addr(src->mr, soff, false);
			d = sv_mr_addr(dst->mr, doff, true);
			if (s && d)
				break;
			sv_mr_unlock(slock, dlock);
			ret = s ? 0 : sv_mr_fault(src, soff, len - done, false);
			if (ret == -EFAULT)
				return SV_ECOPY_SRC;
			if (!ret && !d)
				ret = sv_mr_fault(dst, doff, len - done, true);
			if (ret)
				return ret;
		}
		sv_page_copy(d, s, n);
		sv_mr_unlock(slock, dlock);
	}
	return 0;
}

/**
 * sv_mr_obj_add - make an MR made under f->lock an object of f
 * @f: the file; f->lock held
 * @mr: zeroed but for what it is made of: its pages (mr->umem and
 *	access: device memory), or its layout (mr->mkey, and mr->mw)
 * @pd_handle: its PD
 * @type: SV_OBJ_MR, SV_OBJ_MKEY or SV_OBJ_MW
 * @ops: the type's ops
 *
 * Charges it as an MR (indirect keys and windows too, as on mlx5),
 * reserves its key, pins its PD, gives it a handle and publishes its key.
 * On error mr is freed (ops->free), with what it is made of.
 */
int sv_mr_obj_add(struct sv_file *f, struct sv_mr *mr, u32 pd_handle,
		  enum sv_obj_type type, const struct sv_uobj_ops *ops)
{
	int ret;

	sv_mr_init(mr, f->sdev);
	ret = sv_charge(f, SV_OBJ_MR, &mr->uobj.charge);
	if (ret)
		goto err_free;
	ret = sv_mr_alloc_index(mr);
	if (ret)
		goto err_uncharge;
	mr->pd = sv_pd_pin(f, pd_handle);
	if (IS_ERR(mr->pd)) {
		ret = PTR_ERR(mr->pd);
		goto err_index;
	}
	ret = sv_uobj_add(f, &mr->uobj, type, ops);
	if (ret) {
		sv_pd_unpin(mr->pd);
		goto err_index;
	}
	ret = sv_mr_key_publish(mr);
	if (ret)
		sv_uobj_destroy(f, mr->uobj.handle, type);
	return ret;

err_index:
	sv_mr_key_release(mr);
err_uncharge:
	sv_uncharge(&mr->uobj.charge);
err_free:
	ops->free(&mr->uobj);
	return ret;
}

/*
 * SV_IOC_REG_MR runs without f->lock (file.c): the arguments are checked
 * and the pages pinned first, then f->lock is taken for the PD and the
 * handle table only.
 */
int sv_reg_mr(struct sv_file *f, void *arg)
{
	struct sv_reg_mr *cmd = arg;
	struct sv_umem *umem;
	struct sv_pd *pd;
	struct sv_mr *mr;
	int ret;

	ret = sv_mr_check_access(cmd->access);
	if (ret)
		return ret;
	ret = sv_mr_check_range(cmd->addr, cmd->length, cmd->access,
				cmd->iova);
	if (!ret)
		ret = sv_mr_check_iova(cmd->access, cmd->iova, cmd->length);
	if (ret)
		return ret;
	/* A bad PD handle fails before any pinning; pinned again below. */
	pd = sv_pd_get(f, cmd->pd_handle);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	sv_pd_put(pd);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return -ENOMEM;
	/*
	 * Every limit (max_mr, the user's share, the rdma cgroup) before any
	 * pinning: a full device or user costs no page walk.
	 */
	mutex_lock(&f->lock);
	ret = sv_charge(f, SV_OBJ_MR, &mr->uobj.charge);
	mutex_unlock(&f->lock);
	if (ret) {
		kfree(mr);
		return ret;
	}
	sv_mr_init(mr, f->sdev);
	mr->access = cmd->access;
	mr->iova = cmd->iova;
	/* Reserve the key index; the MR is published when complete. */
	ret = sv_mr_alloc_index(mr);
	if (ret)
		goto err_free;
	umem = sv_umem_get(cmd->addr, cmd->length, cmd->access);
	if (IS_ERR(umem)) {
		ret = PTR_ERR(umem);
		goto err_index;
	}
	mr->umem = umem;

	mutex_lock(&f->lock);
	/* sv_device_kill() waits for f->lock holders that saw it alive. */
	if (READ_ONCE(f->sdev->dead)) {
		ret = -EIO;
		goto err_unlock;
	}
	mr->pd = sv_pd_pin(f, cmd->pd_handle);
	if (IS_ERR(mr->pd)) {
		ret = PTR_ERR(mr->pd);
		goto err_unlock;
	}
	ret = sv_uobj_add(f, &mr->uobj, SV_OBJ_MR, &sv_mr_ops);
	if (ret) {
		sv_pd_unpin(mr->pd);
		goto err_unlock;
	}
	ret = sv_mr_key_publish(mr);
	if (ret) {
		/* Cannot happen for a reserved index; unwind all the same. */
		sv_uobj_destroy(f, mr->uobj.handle, SV_OBJ_MR);
		mutex_unlock(&f->lock);
		return ret;
	}
	cmd->mr_handle = mr->uobj.handle;
	cmd->lkey = mr->key;
	cmd->rkey = mr->key;
	mutex_unlock(&f->lock);
	return 0;

err_unlock:
	mutex_unlock(&f->lock);
	sv_umem_release(umem);
err_index:
	sv_mr_key_release(mr);
err_free:
	sv_uncharge(&mr->uobj.charge);
	kfree(mr);
	return ret;
}

static int sv_rereg_check(const struct sv_rereg_mr *cmd)
{
	int ret;

	if (!cmd->flags || cmd->flags & ~SV_REREG_MR_FLAGS || cmd->reserved)
		return -EINVAL;
	if (!(cmd->flags & SV_REREG_MR_CHANGE_TRANSLATION) &&
	    (cmd->addr || cmd->length || cmd->iova))
		return -EINVAL;
	if (!(cmd->flags & SV_REREG_MR_CHANGE_PD) && cmd->pd_handle)
		return -EINVAL;
	if (!(cmd->flags & SV_REREG_MR_CHANGE_ACCESS) && cmd->access)
		return -EINVAL;
	if (cmd->flags & SV_REREG_MR_CHANGE_ACCESS) {
		ret = sv_mr_check_access(cmd->access);
		if (ret)
			return ret;
		/* Persistence is checked on pages as they are pinned. */
		if ((cmd->access & SV_ACCESS_FLUSH_PERSISTENT) &&
		    !(cmd->flags & SV_REREG_MR_CHANGE_TRANSLATION))
			return -EINVAL;
	}
	/* A translation is checked with the access it will have: later. */
	if ((cmd->flags & SV_REREG_MR_CHANGE_TRANSLATION) &&
	    (!cmd->length || cmd->length > SV_MAX_MR_SIZE))
		return -EINVAL;
	return 0;
}

/* What a rereg makes of an MR, worked out from the MR as it is. */
struct sv_rereg_plan {
	u32 generation;			/* of the MR planned from */
	u32 access;
	u64 iova;
	bool pin;			/* new pages: */
	u64 addr;			/* [addr, addr + length) */
	u64 length;
	bool writable;
};

static bool sv_umem_implicit(const struct sv_umem *umem)
{
	return umem->odp && sv_mr_implicit(umem->addr, umem->length,
					   SV_ACCESS_ON_DEMAND);
}

static int sv_rereg_plan(struct sv_mr *mr, const struct sv_rereg_mr *cmd,
			 struct sv_rereg_plan *p)
{
	lockdep_assert_held(&mr->uobj.file->lock);
	if (!mr->umem)
		return -ENOENT;		/* deregistered meanwhile */
	/* Device memory MRs stay what they are: zero-based, over the DM. */
	if (mr->umem->dm || mr->umem->null)
		return -EINVAL;
	/* A dma-buf's MR stays over it; an implicit ODP MR, all memory. */
	if (mr->umem->dmabuf)
		return -EOPNOTSUPP;
	if (sv_umem_implicit(mr->umem) &&
	    (cmd->flags & ~SV_REREG_MR_CHANGE_PD))
		return -EOPNOTSUPP;
	p->generation = mr->generation;
	p->access = cmd->flags & SV_REREG_MR_CHANGE_ACCESS ? cmd->access :
							     mr->access;
	p->writable = sv_access_writable(p->access);
	p->iova = mr->iova;
	p->addr = mr->umem->addr;
	p->length = mr->umem->length;
	/*
	 * New pages for a new range, to pin the old one for writing, or to
	 * change between pinned and on-demand.
	 */
	p->pin = (p->writable && !mr->umem->writable && !mr->umem->odp) ||
		 !(p->access & SV_ACCESS_ON_DEMAND) != !mr->umem->odp;
	if (cmd->flags & SV_REREG_MR_CHANGE_TRANSLATION) {
		p->iova = cmd->iova;
		p->addr = cmd->addr;
		p->length = cmd->length;
		p->pin = true;
		if (sv_mr_implicit(p->addr, p->length, p->access) ||
		    sv_mr_check_range(p->addr, p->length, p->access, p->iova))
			return -EINVAL;
	}
	return sv_mr_check_iova(p->access, p->iova, p->length);
}

/*
 * SV_IOC_REREG_MR, all or nothing, keeping lkey and rkey. Runs without
 * f->lock (file.c): the change is planned under it, new pages are pinned
 * without it, and the swap is done under it again, if no other rereg
 * changed the MR meanwhile (else plan again).
 */
int sv_rereg_mr(struct sv_file *f, void *arg)
{
	struct sv_rereg_mr *cmd = arg;
	struct sv_rereg_plan plan;
	struct sv_umem *umem;
	struct sv_uobj *u;
	struct sv_pd *pd;
	struct sv_mr *mr;
	int ret;

	ret = sv_rereg_check(cmd);
	if (ret)
		return ret;
	u = sv_uobj_get(f, cmd->mr_handle, SV_OBJ_MR);
	if (IS_ERR(u))
		return PTR_ERR(u);
	mr = to_sv_mr(u);
	if (cmd->flags & SV_REREG_MR_CHANGE_PD) {
		/* A bad PD handle fails before any pinning. */
		pd = sv_pd_get(f, cmd->pd_handle);
		if (IS_ERR(pd)) {
			ret = PTR_ERR(pd);
			goto out;
		}
		sv_pd_put(pd);
	}
again:
	mutex_lock(&f->lock);
	ret = sv_rereg_plan(mr, cmd, &plan);
	mutex_unlock(&f->lock);
	if (ret)
		goto out;
	umem = NULL;
	if (plan.pin) {
		umem = sv_umem_get(plan.addr, plan.length, plan.access);
		if (IS_ERR(umem)) {
			ret = PTR_ERR(umem);
			goto out;
		}
	}

	mutex_lock(&f->lock);
	pd = NULL;
	if (READ_ONCE(f->sdev->dead)) {
		ret = -EIO;
	} else if (!mr->umem) {
		ret = -ENOENT;
	} else if (mr->generation != plan.generation) {
		mutex_unlock(&f->lock);
		if (umem)
			sv_umem_release(umem);
		goto again;
	} else if (cmd->flags & SV_REREG_MR_CHANGE_PD) {
		pd = sv_pd_pin(f, cmd->pd_handle);
		if (IS_ERR(pd))
			ret = PTR_ERR(pd);
	}
	if (ret) {
		mutex_unlock(&f->lock);
		if (umem)
			sv_umem_release(umem);
		goto out;
	}
	sv_mr_close(mr);
	if (umem)
		swap(mr->umem, umem);
	if (pd)
		swap(mr->pd, pd);
	mr->access = plan.access;
	mr->iova = plan.iova;
	mr->generation++;
	sv_mr_open(mr);
	cmd->lkey = mr->key;
	cmd->rkey = mr->key;
	mutex_unlock(&f->lock);

	/* What was swapped out is the old state. */
	if (umem)
		sv_umem_release(umem);
	if (pd)
		sv_pd_unpin(pd);
out:
	sv_uobj_put(u);
	return ret;
}

/* SV_IOC_QUERY_MR: an MR of this file as ibv_import_mr() rebuilds it. */
int sv_query_mr(struct sv_file *f, void *arg)
{
	struct sv_query_mr *cmd = arg;
	struct sv_uobj *u;
	struct sv_mr *mr;

	/* Rereg commits under f->lock: we see all old or all new. */
	lockdep_assert_held(&f->lock);
	u = sv_uobj_get(f, cmd->mr_handle, SV_OBJ_MR);
	if (IS_ERR(u))
		return PTR_ERR(u);
	mr = to_sv_mr(u);
	cmd->pd_handle = mr->pd->uobj.handle;
	cmd->lkey = mr->key;
	cmd->rkey = mr->key;
	cmd->access = mr->access;
	cmd->addr = mr->umem->dm ? 0 : mr->umem->addr;
	cmd->length = mr->umem->length;
	cmd->iova = mr->iova;
	sv_uobj_put(u);
	return 0;
}

/*
 * An MR over umem (filled by the caller, which gives it up on every path:
 * it is released if the MR cannot be made), with access and iova, of the
 * PD pd_handle: an object of f with its key published. f->lock held.
 */
static struct sv_mr *sv_mr_of_umem(struct sv_file *f, struct sv_umem *umem,
				   u32 access, u64 iova, u32 pd_handle)
{
	struct sv_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	int ret;

	if (!mr) {
		sv_umem_release(umem);
		return ERR_PTR(-ENOMEM);
	}
	mr->umem = umem;
	mr->access = access;
	mr->iova = iova;
	ret = sv_mr_obj_add(f, mr, pd_handle, SV_OBJ_MR, &sv_mr_ops);
	return ret ? ERR_PTR(ret) : mr;
}

/*
 * SV_IOC_REG_DM_MR: [dm_offset, dm_offset + length) of a DM as a
 * zero-based MR whose pages are the DM's. Under f->lock: nothing here
 * waits for userspace.
 */
int sv_reg_dm_mr(struct sv_file *f, void *arg)
{
	struct sv_reg_dm_mr *cmd = arg;
	struct sv_umem *umem;
	struct sv_dm *dm;
	struct sv_mr *mr;
	u64 off = cmd->dm_offset;
	int ret;

	/* A length of 0 is an MR nothing reaches, as mlx5 makes one. */
	if (cmd->reserved || !(cmd->access & SV_ACCESS_ZERO_BASED) ||
	    (cmd->access & SV_ACCESS_FLUSH_PERSISTENT))
		return -EINVAL;
	ret = sv_mr_check_access(cmd->access);
	if (ret)
		return ret;
	dm = sv_dm_get(f, cmd->dm_handle);
	if (IS_ERR(dm))
		return PTR_ERR(dm);
	if (off > dm->length || cmd->length > dm->length - off) {
		sv_uobj_put(&dm->uobj);
		return -EINVAL;
	}
	umem = kzalloc(sizeof(*umem), GFP_KERNEL_ACCOUNT);
	if (!umem) {
		sv_uobj_put(&dm->uobj);
		return -ENOMEM;
	}
	umem->dm = dm;			/* sv_dm_get()'s reference */
	atomic_inc(&dm->uobj.usecnt);
	umem->first = off >> PAGE_SHIFT;
	umem->addr = off;
	umem->length = cmd->length;
	umem->npages = sv_umem_npages(off, cmd->length);
	umem->writable = true;
	mr = sv_mr_of_umem(f, umem, cmd->access, 0, cmd->pd_handle);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	cmd->mr_handle = mr->uobj.handle;
	cmd->lkey = mr->key;
	cmd->rkey = mr->key;
	return 0;
}

/*
 * One range of ibv_advise_mr(): checked, then prefetched. A fault that
 * fails is the caller's error only with flush (FLUSH): the advice is a
 * hint whose faults nobody waits for otherwise.
 */
static int sv_advise_one(struct sv_device *sdev, struct sv_pd *pd,
			 const struct sv_sge *sge, bool write, bool fault,
			 bool flush)
{
	struct sv_mr *mr;
	struct sv_umem *umem;
	u64 off;
	int ret;

	rcu_read_lock();
	mr = xa_load(&sv_mr_keys, sge->lkey >> 8);
	if (!mr || mr->sdev != sdev || !sv_mr_enter(mr)) {
		rcu_read_unlock();
		return -EFAULT;
	}
	rcu_read_unlock();
	/* Entered: dereg and rereg wait for us; the MR is as checked. */
	if (!mr->key || mr->key != sge->lkey)
		ret = -EFAULT;
	else if (mr->mkey)
		ret = -EINVAL;
	else if (mr->pd != pd)
		ret = -EPERM;
	else if (!mr->umem->odp)
		ret = -ENOENT;
	else if (write && !(mr->access & SV_ACCESS_LOCAL_WRITE))
		ret = -EPERM;
	else
		ret = sv_mr_check(mr, sge->lkey, pd, NULL, 0, sge->addr,
				  sge->length, &off) ? -EFAULT : 0;
	if (!ret) {
		umem = mr->umem;
		ret = sv_odp_prefetch(umem->odp, (umem->addr & PAGE_MASK) + off,
				      sge->length, write, fault);
		if (ret != -EINTR && !flush)
			ret = 0;
	}
	sv_mr_exit(mr);
	return ret;
}

/*
 * SV_IOC_ADVISE_MR runs without f->lock (file.c): faults may sleep for as
 * long as userspace wants. The ranges are done in order; the first error
 * ends the call.
 */
int sv_advise_mr(struct sv_file *f, void *arg)
{
	struct sv_advise_mr *cmd = arg;
	struct sv_sge __user *usge = u64_to_user_ptr(cmd->sg_list);
	bool flush = cmd->flags & SV_ADVISE_MR_FLAG_FLUSH;
	bool write = cmd->advice == SV_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool fault = cmd->advice != SV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	struct sv_sge sge;
	struct sv_pd *pd;
	int ret = 0;
	u32 i;

	if (cmd->advice > SV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	if (cmd->flags & ~SV_ADVISE_MR_FLAG_FLUSH || cmd->reserved ||
	    !cmd->num_sge)
		return -EINVAL;
	pd = sv_pd_get(f, cmd->pd_handle);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	for (i = 0; i < cmd->num_sge && !ret; i++) {
		if (copy_from_user(&sge, usge + i, sizeof(sge))) {
			ret = -EFAULT;
			break;
		}
		if (!sge.length)
			continue;
		ret = sv_advise_one(f->sdev, pd, &sge, write, fault, flush);
		if (!ret && fatal_signal_pending(current))
			ret = -EINTR;
	}
	sv_pd_put(pd);
	return ret;
}

/*
 * SV_IOC_REG_DMABUF_MR: [offset, offset + length) of a dma-buf as an MR
 * whose first byte has I/O address iova (0 with ZERO_BASED). Under
 * f->lock: attaching waits for the exporter, never for userspace.
 */
int sv_reg_dmabuf_mr(struct sv_file *f, void *arg)
{
	struct sv_reg_dmabuf_mr *cmd = arg;
	struct sv_umem *umem;
	struct sv_mr *mr;
	int ret;

	if (cmd->reserved || (cmd->access & (SV_ACCESS_ON_DEMAND |
					     SV_ACCESS_FLUSH_PERSISTENT)))
		return -EINVAL;
	ret = sv_mr_check_access(cmd->access);
	if (!ret && (!cmd->length || cmd->length > SV_MAX_MR_SIZE))
		ret = -EINVAL;
	if (!ret)
		ret = sv_mr_check_iova(cmd->access, cmd->iova, cmd->length);
	if (ret)
		return ret;
	umem = kzalloc(sizeof(*umem), GFP_KERNEL_ACCOUNT);
	if (!umem)
		return -ENOMEM;
	umem->dmabuf = sv_dmabuf_get(&f->sdev->dev, cmd->fd, cmd->offset,
				     cmd->length);
	if (IS_ERR(umem->dmabuf)) {
		ret = PTR_ERR(umem->dmabuf);
		kfree(umem);
		return ret;
	}
	umem->addr = cmd->offset;
	umem->length = cmd->length;
	umem->writable = true;
	mr = sv_mr_of_umem(f, umem, cmd->access, cmd->iova, cmd->pd_handle);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	cmd->mr_handle = mr->uobj.handle;
	cmd->lkey = mr->key;
	cmd->rkey = mr->key;
	return 0;
}

/* SV_IOC_ALLOC_NULL_MR: an MR of no memory, an lkey only. */
int sv_alloc_null_mr(struct sv_file *f, void *arg)
{
	struct sv_alloc_null_mr *cmd = arg;
	struct sv_umem *umem;
	struct sv_mr *mr;

	umem = kzalloc(sizeof(*umem), GFP_KERNEL_ACCOUNT);
	if (!umem)
		return -ENOMEM;
	umem->null = true;
	umem->length = U64_MAX;
	umem->writable = true;
	mr = sv_mr_of_umem(f, umem, SV_ACCESS_LOCAL_WRITE, 0, cmd->pd_handle);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	cmd->mr_handle = mr->uobj.handle;
	cmd->lkey = mr->key;
	return 0;
}

int sv_null_mr_init(void)
{
	sv_null_sink = (void *)get_zeroed_page(GFP_KERNEL);
	return sv_null_sink ? 0 : -ENOMEM;
}

void sv_null_mr_exit(void)
{
	free_page((unsigned long)sv_null_sink);
}

int sv_dereg_mr(struct sv_file *f, void *arg)
{
	struct sv_dereg_mr *cmd = arg;

	return sv_uobj_destroy(f, cmd->mr_handle, SV_OBJ_MR);
}

/*
 * debugfs <dev>/mr_io (root only): the data-path copy helpers, driven from
 * a test the way the engine drives them. Write one command, read its
 * result: "0[ <hex bytes>]" or "-<errno>". Accesses go through the
 * key's MR with that MR's own PD.
 *   r KEY ACCESS IOVA LEN                      sv_mr_span_read
 *   w KEY ACCESS IOVA HEXBYTES                 sv_mr_span_write
 *   c DKEY DACCESS DIOVA SKEY SACCESS SIOVA LEN  sv_mr_span_copy
 * (w and c imply SV_ACCESS_LOCAL_WRITE when ACCESS names no write right.)
 */
#define SV_MR_IO_MAX	65536

struct sv_mr_io {
	struct sv_device *sdev;
	struct mutex lock;		/* out, outlen */
	char *out;
	size_t outlen;
};

static int sv_mr_io_open(struct inode *inode, struct file *filp)
{
	struct sv_mr_io *io = kzalloc(sizeof(*io), GFP_KERNEL);

	if (!io)
		return -ENOMEM;
	io->sdev = inode->i_private;
	mutex_init(&io->lock);
	filp->private_data = io;
	return nonseekable_open(inode, filp);
}

static int sv_mr_io_release(struct inode *inode, struct file *filp)
{
	struct sv_mr_io *io = filp->private_data;

	mutex_destroy(&io->lock);
	kvfree(io->out);
	kfree(io);
	return 0;
}

/* A span through key as its own MR's PD sees it. */
static int sv_mr_io_span(struct sv_device *sdev, struct sv_mr_span *sp,
			 u32 key, u32 access, u64 iova, u64 len)
{
	struct sv_mr *mr = sv_mr_lookup_key(sdev, key);
	int ret;

	if (!mr)
		return -ENOENT;
	ret = sv_mr_span_get(sdev, key, READ_ONCE(mr->pd), access, iova, len,
			     sp, NULL);
	sv_mr_put(mr);
	return ret;
}

static int sv_mr_io_cmd(struct sv_mr_io *io, char *cmd, char *out)
{
	struct sv_mr_span d = {}, s = {};
	u32 dkey, dacc, skey, sacc;
	u64 diova, siova, len;
	char hex[2 * 64 + 1];
	int ret, pos, i, n;
	u8 *buf = NULL;

	if (sscanf(cmd, "r %x %x %llx %llu", &skey, &sacc, &siova, &len) == 4) {
		if (len > SV_MR_IO_MAX)
			return -EINVAL;
		buf = kvmalloc(len ? len : 1, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
		ret = sv_mr_io_span(io->sdev, &s, skey, sacc, siova, len);
		if (!ret)
			ret = sv_mr_span_read(&s, 0, buf, len);
		if (!ret) {
			pos = sprintf(out, "0 ");
			for (i = 0; i < len; i += n) {
				n = min_t(int, len - i, 64);
				bin2hex(hex, buf + i, n);
				memcpy(out + pos, hex, 2 * n);
				pos += 2 * n;
			}
			out[pos] = 0;
		}
	} else if (sscanf(cmd, "w %x %x %llx %n", &dkey, &dacc, &diova,
			  &pos) == 3) {
		len = strcspn(cmd + pos, "\n") / 2;
		buf = kvmalloc(len ? len : 1, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
		if (hex2bin(buf, cmd + pos, len)) {
			kvfree(buf);
			return -EINVAL;
		}
		ret = sv_mr_io_span(io->sdev, &d, dkey,
				    sv_mr_write_access(dacc), diova, len);
		if (!ret)
			ret = sv_mr_span_write(&d, 0, buf, len);
	} else if (sscanf(cmd, "c %x %x %llx %x %x %llx %llu", &dkey, &dacc,
			  &diova, &skey, &sacc, &siova, &len) == 7) {
		/* Both checked before any byte moves. */
		ret = sv_mr_io_span(io->sdev, &s, skey, sacc, siova, len);
		if (!ret)
			ret = sv_mr_io_span(io->sdev, &d, dkey,
					    sv_mr_write_access(dacc), diova,
					    len);
		if (!ret)
			ret = sv_mr_span_copy(&d, 0, &s, 0, len);
	} else {
		return -EINVAL;
	}
	if (d.mr)
		sv_mr_span_put(&d);
	if (s.mr)
		sv_mr_span_put(&s);
	kvfree(buf);
	return ret;
}

static ssize_t sv_mr_io_write(struct file *filp, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	struct sv_mr_io *io = filp->private_data;
	char *cmd, *out;
	int ret;

	if (count > 2 * SV_MR_IO_MAX + 128)
		return -EINVAL;
	cmd = memdup_user_nul(ubuf, count);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	out = kvmalloc(2 * SV_MR_IO_MAX + 16, GFP_KERNEL);
	if (!out) {
		kfree(cmd);
		return -ENOMEM;
	}
	out[0] = 0;
	ret = sv_mr_io_cmd(io, cmd, out);
	kfree(cmd);
	if (ret)
		sprintf(out, "%d", ret);
	else if (!out[0])
		out[0] = '0', out[1] = 0;
	mutex_lock(&io->lock);
	kvfree(io->out);
	io->out = out;
	io->outlen = strlen(out);
	mutex_unlock(&io->lock);
	return count;
}

static ssize_t sv_mr_io_read(struct file *filp, char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	struct sv_mr_io *io = filp->private_data;
	ssize_t ret;

	mutex_lock(&io->lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, io->out, io->outlen);
	mutex_unlock(&io->lock);
	return ret;
}

static const struct file_operations sv_mr_io_fops = {
	.owner = THIS_MODULE,
	.open = sv_mr_io_open,
	.release = sv_mr_io_release,
	.read = sv_mr_io_read,
	.write = sv_mr_io_write,
};

/*
 * debugfs <dev>/dmabuf_revoke (root only): write the key of a dma-buf MR
 * of the device to have its buffer's exporter revoke it (move_notify),
 * as an exporter that moves buffers would; -ENOENT for no such MR,
 * -EINVAL for one that is no dma-buf's.
 */
static ssize_t sv_dmabuf_revoke_write(struct file *filp,
				      const char __user *ubuf, size_t count,
				      loff_t *ppos)
{
	struct sv_device *sdev = filp->private_data;
	struct sv_mr *mr;
	u32 key;
	int ret;

	ret = kstrtou32_from_user(ubuf, count, 0, &key);
	if (ret)
		return ret;
	mr = sv_mr_lookup_key(sdev, key);
	if (!mr)
		return -ENOENT;
	/* Entered: the MR's pages stay what they are meanwhile. */
	if (!sv_mr_enter(mr)) {
		ret = -ENOENT;
	} else {
		ret = mr->umem && mr->umem->dmabuf ? 0 : -EINVAL;
		if (!ret)
			sv_dmabuf_revoke(mr->umem->dmabuf);
		sv_mr_exit(mr);
	}
	sv_mr_put(mr);
	return ret ? ret : count;
}

static const struct file_operations sv_dmabuf_revoke_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = sv_dmabuf_revoke_write,
};

void sv_mr_debugfs_add(struct sv_device *sdev, struct dentry *dir)
{
	debugfs_create_file("mr_io", 0600, dir, sdev, &sv_mr_io_fops);
	debugfs_create_file("dmabuf_revoke", 0200, dir, sdev,
			    &sv_dmabuf_revoke_fops);
}

/* For resource dumps: the MR's key, address and length. f->lock held. */
void sv_mr_res_info(struct sv_uobj *u, u32 *key, u64 *iova, u64 *length)
{
	struct sv_mr *mr = to_sv_mr(u);

	lockdep_assert_held(&u->file->lock);
	*key = mr->key;
	*iova = mr->iova;
	*length = mr->umem ? mr->umem->length : 0;
}
