// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs memory regions.
 *
 * Registering pins the user pages long-term (FOLL_LONGTERM, with FOLL_WRITE
 * when any access can write them) and charges them to the registering
 * process's RLIMIT_MEMLOCK on mm->pinned_vm, as the RDMA core's umem does;
 * CAP_IPC_LOCK lifts the limit. The MR keeps a grab on that mm, so the
 * charge is returned when the MR goes, even after the process has exited
 * and another one closes the file.
 *
 * Keys: every MR owns a 24-bit index in sv_mr_keys for its whole life; its
 * lkey (== rkey) is the index << 8 | an 8-bit variant that changes on every
 * rereg, so stale keys miss. The data path finds an MR by key with
 * sv_mr_lookup_key() (xa_load under RCU + kref_get_unless_zero; the memory
 * is freed after a grace period) and moves bytes with sv_mr_copy_to/from(),
 * which check key, PD, access and bounds under mr->lock. Rereg and dereg
 * change the MR under the same lock (writer side), so a copy never touches
 * pages that are being unpinned: once dereg (or rereg) returns, nobody uses
 * the old pages any more.
 *
 * Device limits: SV_MAX_MR MRs per device (max_mr; beyond: ENOMEM) of at
 * most SV_MAX_MR_SIZE bytes each (max_mr_size; beyond: EINVAL).
 */
#include <linux/capability.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "sv.h"

#define SV_MR_KEY_VARIANT_MASK	0xffU
#define SV_ACCESS_WRITES	(SV_ACCESS_LOCAL_WRITE | SV_ACCESS_REMOTE_WRITE | \
				 SV_ACCESS_REMOTE_ATOMIC | SV_ACCESS_MW_BIND)
#define SV_ACCESS_RIGHTS	(SV_ACCESS_LOCAL_WRITE | SV_ACCESS_REMOTE_WRITE | \
				 SV_ACCESS_REMOTE_READ | SV_ACCESS_REMOTE_ATOMIC)
#define SV_ACCESS_KNOWN		(SV_ACCESS_RIGHTS | SV_ACCESS_MW_BIND | \
				 SV_ACCESS_ZERO_BASED | SV_ACCESS_ON_DEMAND | \
				 SV_ACCESS_HUGETLB | SV_ACCESS_OPTIONAL_RANGE)
#define SV_REREG_MR_FLAGS	(SV_REREG_MR_CHANGE_TRANSLATION | \
				 SV_REREG_MR_CHANGE_PD | \
				 SV_REREG_MR_CHANGE_ACCESS)
/* Pages pinned or unpinned per call: one page worth of page pointers. */
#define SV_PIN_CHUNK		(PAGE_SIZE / sizeof(struct page *))

/* Pinned, charged user memory: [addr, addr + length) of mm. */
struct sv_umem {
	struct mm_struct *mm;
	struct page **pages;
	unsigned long npages;
	u64 addr;
	u64 length;
	bool writable;
};

struct sv_mr {
	struct sv_uobj uobj;		/* first */
	struct sv_device *sdev;
	u32 index;			/* in sv_mr_keys, for the MR's life */
	struct rcu_head rcu;
	/* Writers (rereg, dereg) under the file lock and this, bh off. */
	rwlock_t lock;
	u32 key;			/* lkey == rkey; 0 once deregistered */
	u32 access;			/* SV_ACCESS_* */
	u64 iova;			/* as requested; see sv_mr_base() */
	struct sv_pd *pd;		/* pinned */
	struct sv_umem *umem;
};

/* Key index -> struct sv_mr, for every device (indexes are unique). */
static DEFINE_XARRAY_ALLOC1(sv_mr_keys);
static u32 sv_mr_next_index;
/* Makes the max_mr check and the add one step, across files. */
static DEFINE_MUTEX(sv_mr_limit_lock);
static atomic_t sv_mr_variant = ATOMIC_INIT(0);

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
	if (access & SV_ACCESS_ON_DEMAND)
		return -EOPNOTSUPP;
	return 0;
}

/* A user range to pin: not empty, no wrap, at most max_mr_size. */
static int sv_mr_check_range(u64 addr, u64 length)
{
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

	return base + length < base ? -EINVAL : 0;
}

static void sv_unpin_pages(struct page **pages, unsigned long npages,
			   bool dirty)
{
	unsigned long done, n;

	for (done = 0; done < npages; done += n) {
		n = min_t(unsigned long, npages - done, SV_PIN_CHUNK);
		unpin_user_pages_dirty_lock(pages + done, n, dirty);
		cond_resched();
	}
}

static void sv_umem_release(struct sv_umem *umem)
{
	sv_unpin_pages(umem->pages, umem->npages, umem->writable);
	atomic64_sub(umem->npages, &umem->mm->pinned_vm);
	mmdrop(umem->mm);
	kvfree(umem->pages);
	kfree(umem);
}

/* Charge npages to current's RLIMIT_MEMLOCK, as ib_umem_get() does. */
static int sv_charge_pinned(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 pinned = atomic64_add_return(npages, &mm->pinned_vm);

	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

/* Pin [addr, addr + length) of current's memory; the range is checked. */
static struct sv_umem *sv_umem_get(u64 addr, u64 length, bool writable)
{
	unsigned int gup = FOLL_LONGTERM | (writable ? FOLL_WRITE : 0);
	u64 start = addr & PAGE_MASK;
	struct mm_struct *mm = current->mm;
	unsigned long pinned = 0;
	struct sv_umem *umem;
	long ret;

	if (!mm)
		return ERR_PTR(-EFAULT);
	umem = kzalloc(sizeof(*umem), GFP_KERNEL_ACCOUNT);
	if (!umem)
		return ERR_PTR(-ENOMEM);
	umem->addr = addr;
	umem->length = length;
	umem->writable = writable;
	umem->npages = (PAGE_ALIGN(addr + length) - start) >> PAGE_SHIFT;

	ret = sv_charge_pinned(mm, umem->npages);
	if (ret)
		goto err_free;
	umem->pages = kvcalloc(umem->npages, sizeof(*umem->pages),
			       GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!umem->pages) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	while (pinned < umem->npages) {
		unsigned long n = min_t(unsigned long, umem->npages - pinned,
					SV_PIN_CHUNK);

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
		ret = pin_user_pages_fast(start + pinned * PAGE_SIZE, n, gup,
					  umem->pages + pinned);
		if (ret <= 0) {
			ret = ret ? ret : -EFAULT;
			goto err_unpin;
		}
		pinned += ret;
		cond_resched();
	}
	mmgrab(mm);
	umem->mm = mm;
	return umem;

err_unpin:
	sv_unpin_pages(umem->pages, pinned, false);
	kvfree(umem->pages);
err_uncharge:
	atomic64_sub(umem->npages, &mm->pinned_vm);
err_free:
	kfree(umem);
	return ERR_PTR(ret);
}

static void sv_mr_destroy(struct sv_uobj *u)
{
	struct sv_mr *mr = to_sv_mr(u);
	struct sv_umem *umem;
	struct sv_pd *pd;

	/* No new lookups; holders see key 0 and stay off the pages. */
	xa_erase(&sv_mr_keys, mr->index);
	write_lock_bh(&mr->lock);
	WRITE_ONCE(mr->key, 0);
	umem = mr->umem;
	pd = mr->pd;
	mr->umem = NULL;
	mr->pd = NULL;
	write_unlock_bh(&mr->lock);

	sv_umem_release(umem);
	sv_pd_unpin(pd);
}

static void sv_mr_free(struct sv_uobj *u)
{
	struct sv_mr *mr = to_sv_mr(u);

	/* sv_mr_lookup_key() may still be looking at it under RCU. */
	kfree_rcu(mr, rcu);
}

static const struct sv_uobj_ops sv_mr_ops = {
	.destroy = sv_mr_destroy,
	.free = sv_mr_free,
};

static u32 sv_mr_new_key(u32 index)
{
	u32 variant = atomic_inc_return(&sv_mr_variant);

	return index << 8 | (variant & SV_MR_KEY_VARIANT_MASK);
}

/*
 * The MR whose lkey/rkey is key on sdev, referenced (sv_mr_put()), or
 * NULL. Callable from any context.
 */
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
 * Check that [iova, iova + len) may be accessed through key by a QP of pd
 * with the rights in access (SV_ACCESS_*: 0 is a local read), and return
 * the byte offset of iova in the pinned range. Under mr->lock.
 */
static int sv_mr_check(struct sv_mr *mr, u32 key, struct sv_pd *pd,
		       u32 access, u64 iova, size_t len, u64 *offset)
{
	u64 base;

	if (!mr->key || mr->key != key)
		return -ENOENT;
	if (mr->pd != pd)
		return -EPERM;
	if (access & ~mr->access & SV_ACCESS_RIGHTS)
		return -EACCES;
	base = sv_mr_base(mr->access, mr->iova);
	if (iova < base || iova - base > mr->umem->length ||
	    len > mr->umem->length - (iova - base))
		return -ERANGE;
	*offset = (mr->umem->addr & ~PAGE_MASK) + (iova - base);
	return 0;
}

/*
 * Copy between buf and the MR, one page at a time, each under mr->lock:
 * a concurrent rereg or dereg makes the rest fail with -ENOENT.
 * Errors: -ENOENT (key not, or no longer, valid), -EPERM (other PD),
 * -EACCES (access not granted), -ERANGE (outside the MR).
 */
static int sv_mr_copy(struct sv_mr *mr, u32 key, struct sv_pd *pd,
		      u32 access, u64 iova, void *buf, size_t len, bool to_mr)
{
	size_t done = 0;
	int ret = 0;

	/* Writing needs a write right: local unless a remote one is named. */
	if (to_mr && !(access & SV_ACCESS_WRITES))
		access |= SV_ACCESS_LOCAL_WRITE;
	do {
		size_t n;
		u64 off;
		void *p;

		read_lock_bh(&mr->lock);
		ret = sv_mr_check(mr, key, pd, access, iova + done,
				  len - done, &off);
		if (ret) {
			read_unlock_bh(&mr->lock);
			break;
		}
		n = min_t(size_t, len - done, PAGE_SIZE - (off & ~PAGE_MASK));
		if (n) {
			p = kmap_local_page(mr->umem->pages[off >> PAGE_SHIFT]);
			if (to_mr)
				memcpy(p + (off & ~PAGE_MASK), buf + done, n);
			else
				memcpy(buf + done, p + (off & ~PAGE_MASK), n);
			kunmap_local(p);
		}
		read_unlock_bh(&mr->lock);
		done += n;
	} while (done < len);
	return ret;
}

int sv_mr_copy_to(struct sv_mr *mr, u32 key, struct sv_pd *pd, u32 access,
		  u64 iova, const void *buf, size_t len)
{
	return sv_mr_copy(mr, key, pd, access, iova, (void *)buf, len, true);
}

int sv_mr_copy_from(struct sv_mr *mr, u32 key, struct sv_pd *pd, u32 access,
		    u64 iova, void *buf, size_t len)
{
	return sv_mr_copy(mr, key, pd, access, iova, buf, len, false);
}

int sv_reg_mr(struct sv_file *f, void *arg)
{
	struct sv_reg_mr *cmd = arg;
	struct sv_mr *mr;
	void *old;
	int ret;

	ret = sv_mr_check_access(cmd->access);
	if (ret)
		return ret;
	ret = sv_mr_check_range(cmd->addr, cmd->length);
	if (!ret)
		ret = sv_mr_check_iova(cmd->access, cmd->iova, cmd->length);
	if (ret)
		return ret;
	/* Fail early when full; the add below checks again, strictly. */
	if (atomic_read(&f->sdev->nobjs[SV_OBJ_MR]) >= SV_MAX_MR)
		return -ENOMEM;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return -ENOMEM;
	rwlock_init(&mr->lock);
	mr->sdev = f->sdev;
	mr->access = cmd->access;
	mr->iova = cmd->iova;
	mr->pd = sv_pd_pin(f, cmd->pd_handle);
	if (IS_ERR(mr->pd)) {
		ret = PTR_ERR(mr->pd);
		goto err_free;
	}
	/* Reserve the key index; the MR is published when complete. */
	ret = xa_alloc_cyclic(&sv_mr_keys, &mr->index, NULL,
			      XA_LIMIT(1, (1U << SV_MR_KEY_INDEX_BITS) - 1),
			      &sv_mr_next_index, GFP_KERNEL);
	if (ret < 0) {
		ret = ret == -EBUSY ? -ENOSPC : ret;
		goto err_pd;
	}
	mr->key = sv_mr_new_key(mr->index);
	mr->umem = sv_umem_get(cmd->addr, cmd->length,
			       sv_access_writable(cmd->access));
	if (IS_ERR(mr->umem)) {
		ret = PTR_ERR(mr->umem);
		goto err_index;
	}
	mutex_lock(&sv_mr_limit_lock);
	if (atomic_read(&f->sdev->nobjs[SV_OBJ_MR]) >= SV_MAX_MR)
		ret = -ENOMEM;
	else
		ret = sv_uobj_add(f, &mr->uobj, SV_OBJ_MR, &sv_mr_ops);
	mutex_unlock(&sv_mr_limit_lock);
	if (ret)
		goto err_umem;

	old = xa_store(&sv_mr_keys, mr->index, mr, GFP_KERNEL);
	if (xa_is_err(old)) {
		/* Cannot happen for a reserved index; unwind all the same. */
		sv_uobj_destroy(f, mr->uobj.handle, SV_OBJ_MR);
		return xa_err(old);
	}
	cmd->mr_handle = mr->uobj.handle;
	cmd->lkey = mr->key;
	cmd->rkey = mr->key;
	return 0;

err_umem:
	sv_umem_release(mr->umem);
err_index:
	xa_erase(&sv_mr_keys, mr->index);
err_pd:
	sv_pd_unpin(mr->pd);
err_free:
	kfree(mr);
	return ret;
}

static int sv_rereg_check(const struct sv_rereg_mr *cmd)
{
	if (!cmd->flags || cmd->flags & ~SV_REREG_MR_FLAGS || cmd->reserved)
		return -EINVAL;
	if (!(cmd->flags & SV_REREG_MR_CHANGE_TRANSLATION) &&
	    (cmd->addr || cmd->length || cmd->iova))
		return -EINVAL;
	if (!(cmd->flags & SV_REREG_MR_CHANGE_PD) && cmd->pd_handle)
		return -EINVAL;
	if (!(cmd->flags & SV_REREG_MR_CHANGE_ACCESS) && cmd->access)
		return -EINVAL;
	if (cmd->flags & SV_REREG_MR_CHANGE_ACCESS)
		return sv_mr_check_access(cmd->access);
	return 0;
}

int sv_rereg_mr(struct sv_file *f, void *arg)
{
	struct sv_rereg_mr *cmd = arg;
	struct sv_umem *umem = NULL;
	struct sv_pd *pd = NULL;
	u32 access, key;
	struct sv_uobj *u;
	struct sv_mr *mr;
	u64 iova;
	int ret;

	ret = sv_rereg_check(cmd);
	if (ret)
		return ret;
	u = sv_uobj_get(f, cmd->mr_handle, SV_OBJ_MR);
	if (IS_ERR(u))
		return PTR_ERR(u);
	mr = to_sv_mr(u);

	/* Only control commands change these, and they hold f->lock. */
	access = cmd->flags & SV_REREG_MR_CHANGE_ACCESS ? cmd->access :
							  mr->access;
	iova = mr->iova;
	if (cmd->flags & SV_REREG_MR_CHANGE_TRANSLATION) {
		ret = sv_mr_check_range(cmd->addr, cmd->length);
		if (ret)
			goto out;
		iova = cmd->iova;
	}
	ret = sv_mr_check_iova(access, iova,
			       cmd->flags & SV_REREG_MR_CHANGE_TRANSLATION ?
			       cmd->length : mr->umem->length);
	if (ret)
		goto out;
	if (cmd->flags & SV_REREG_MR_CHANGE_PD) {
		pd = sv_pd_pin(f, cmd->pd_handle);
		if (IS_ERR(pd)) {
			ret = PTR_ERR(pd);
			goto out;
		}
	}
	/* New pages for a new range, or to pin the old one for writing. */
	if (cmd->flags & SV_REREG_MR_CHANGE_TRANSLATION)
		umem = sv_umem_get(cmd->addr, cmd->length,
				   sv_access_writable(access));
	else if (sv_access_writable(access) && !mr->umem->writable)
		umem = sv_umem_get(mr->umem->addr, mr->umem->length, true);
	if (IS_ERR(umem)) {
		ret = PTR_ERR(umem);
		if (pd)
			sv_pd_unpin(pd);
		goto out;
	}

	key = (mr->key & ~SV_MR_KEY_VARIANT_MASK) |
	      ((mr->key + 1) & SV_MR_KEY_VARIANT_MASK);
	write_lock_bh(&mr->lock);
	if (umem)
		swap(mr->umem, umem);
	if (pd)
		swap(mr->pd, pd);
	mr->access = access;
	mr->iova = iova;
	WRITE_ONCE(mr->key, key);
	write_unlock_bh(&mr->lock);

	/* What was swapped out is the old state. */
	if (umem)
		sv_umem_release(umem);
	if (pd)
		sv_pd_unpin(pd);
	cmd->lkey = key;
	cmd->rkey = key;
out:
	sv_uobj_put(u);
	return ret;
}

int sv_dereg_mr(struct sv_file *f, void *arg)
{
	struct sv_dereg_mr *cmd = arg;

	return sv_uobj_destroy(f, cmd->mr_handle, SV_OBJ_MR);
}

/* For resource dumps: the MR's key, address and length. f->lock held. */
void sv_mr_res_info(struct sv_uobj *u, u32 *key, u64 *iova, u64 *length)
{
	struct sv_mr *mr = to_sv_mr(u);

	read_lock_bh(&mr->lock);
	*key = mr->key;
	*iova = mr->iova;
	*length = mr->umem ? mr->umem->length : 0;
	read_unlock_bh(&mr->lock);
}
