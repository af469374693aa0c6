// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs mmap: memory the module shares with the library (CQ rings, and
 * the QP/SRQ rings and doorbell pages of other objects).
 *
 * A shared buffer is a struct sv_mbuf: zeroed pages, vmap()ed for the
 * kernel, with a reference count. The buffer is charged to whoever made
 * it, as memory it pins for RDMA: its pages to the caller's memory cgroup
 * (__GFP_ACCOUNT; the charge goes with each page when it is freed) and
 * their number to the caller's mm->pinned_vm against RLIMIT_MEMLOCK, as
 * ib_umem_get() charges an mlx5 CQ buffer (unlimited with CAP_IPC_LOCK).
 * The buffer grabs that mm and returns the pinned_vm charge when it is
 * freed, which may be after the file and the creating process are gone.
 *
 * An object that wants userspace to map a buffer
 * registers it in its file's mmap table with sv_mmap_entry_add(), which
 * returns the offset to pass to mmap(2); the table holds one reference.
 * Every VMA mapping the buffer holds another (vm_ops open/close), so a
 * buffer outlives the object (and its table entry) until the last munmap:
 * destroying an object while userspace still maps its ring is safe.
 *
 * The offset is a key, not a position: entry N is mapped at offset
 * N << PAGE_SHIFT, always whole, with MAP_SHARED and never executable.
 * The pages are inserted into the VMA (vm_map_pages_zero()): a mapping
 * holds a reference on each page besides the one on the buffer.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "sv.h"

/* Keys fit in a pgoff on 32-bit too. */
#define SV_MMAP_MAX_KEY	BIT(20)

struct sv_mmap_entry {
	struct sv_mbuf *buf;
};

/*
 * Ring pages: charged to the caller's memory cgroup. Past its limit the
 * allocation fails (ENOMEM) instead of calling the cgroup's OOM killer
 * on the caller's behalf: a ring is a request the caller can retry smaller.
 */
#define SV_MBUF_GFP	(GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_RETRY_MAYFAIL | \
			 __GFP_NOWARN)

static void sv_mbuf_free_pages(struct sv_mbuf *b, unsigned long n)
{
	while (n)
		__free_page(b->pages[--n]);
}

/*
 * The start of sv_mbuf_alloc() and sv_mbuf_pin(): a buffer of size bytes
 * (page aligned, not 0) with room for its page list, the pages charged to
 * current's RLIMIT_MEMLOCK. -EFAULT without an mm, -ENOMEM.
 */
static struct sv_mbuf *sv_mbuf_new(size_t size)
{
	struct mm_struct *mm = current->mm;
	struct sv_mbuf *b;
	int ret;

	if (!mm)
		return ERR_PTR(-EFAULT);
	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return ERR_PTR(-ENOMEM);
	b->size = size;
	b->npages = size >> PAGE_SHIFT;
	ret = sv_pinned_charge(mm, b->npages);
	if (ret)
		goto err_free;
	b->pages = kvcalloc(b->npages, sizeof(*b->pages),
			    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (b->pages)
		return b;
	ret = -ENOMEM;
	sv_pinned_uncharge(mm, b->npages);
err_free:
	kfree(b);
	return ERR_PTR(ret);
}

/* Undo sv_mbuf_new(), whose pages were given back. */
static void sv_mbuf_undo(struct sv_mbuf *b)
{
	sv_pinned_uncharge(current->mm, b->npages);
	kvfree(b->pages);
	kfree(b);
}

/* Its pages all there: map them for the kernel, hold the mm. */
static int sv_mbuf_ready(struct sv_mbuf *b)
{
	/* One page needs no kernel mapping of its own (no vmap area). */
	if (b->npages == 1 && !PageHighMem(b->pages[0]))
		b->vaddr = page_address(b->pages[0]);
	else
		b->vaddr = vmap(b->pages, b->npages, VM_MAP, PAGE_KERNEL);
	if (!b->vaddr)
		return -ENOMEM;
	mmgrab(current->mm);
	b->mm = current->mm;
	kref_init(&b->ref);
	return 0;
}

/**
 * sv_mbuf_alloc - a zeroed buffer to share with userspace
 * @size: bytes; rounded up to whole pages
 *
 * Process context, on behalf of current (an ioctl). Returns the buffer
 * with one reference, or ERR_PTR(-EINVAL) for size 0, -ENOMEM when the
 * memory cgroup or RLIMIT_MEMLOCK refuses it, -EFAULT without an mm.
 */
struct sv_mbuf *sv_mbuf_alloc(size_t size)
{
	struct sv_mbuf *b;
	unsigned long i;
	int ret;

	if (!size)
		return ERR_PTR(-EINVAL);
	b = sv_mbuf_new(PAGE_ALIGN(size));
	if (IS_ERR(b))
		return b;
	for (i = 0; i < b->npages; i++) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_pages;
		}
		b->pages[i] = alloc_page(SV_MBUF_GFP);
		if (!b->pages[i]) {
			ret = -ENOMEM;
			goto err_pages;
		}
		cond_resched();
	}
	ret = sv_mbuf_ready(b);
	if (!ret)
		return b;
err_pages:
	sv_mbuf_free_pages(b, i);
	sv_mbuf_undo(b);
	return ERR_PTR(ret);
}

/* Give back the pages of a buffer: the module's, or the user's pinned. */
static void sv_mbuf_drop_pages(struct sv_mbuf *b)
{
	if (b->user)
		unpin_user_pages_dirty_lock(b->pages, b->npages, true);
	else
		sv_mbuf_free_pages(b, b->npages);
	kvfree(b->pages);
}

/**
 * sv_mbuf_pin - a buffer of the caller's own memory, pinned
 * @addr: its user address, page aligned
 * @size: bytes, page aligned, not 0
 *
 * A ring in a parent domain's allocator's memory: the pages pinned
 * (long-term, writable) and charged to RLIMIT_MEMLOCK as sv_mbuf_alloc()
 * charges its own, zeroed, vmap()ed. Never mapped through the device
 * file (b->user). Process context. -EINVAL for a bad range, -EFAULT for
 * memory that is not mapped writable, -ENOMEM, -EINTR.
 */
struct sv_mbuf *sv_mbuf_pin(u64 addr, size_t size)
{
	unsigned long done = 0;
	struct sv_mbuf *b;
	long n;
	int ret;

	if (!size || !PAGE_ALIGNED(addr) || !PAGE_ALIGNED(size) ||
	    addr + size < addr)
		return ERR_PTR(-EINVAL);
	b = sv_mbuf_new(size);
	if (IS_ERR(b))
		return b;
	b->user = true;
	while (done < b->npages) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
		n = pin_user_pages_fast(addr + (done << PAGE_SHIFT),
					b->npages - done,
					FOLL_WRITE | FOLL_LONGTERM,
					b->pages + done);
		if (n <= 0) {
			ret = n ? n : -EFAULT;
			goto err_unpin;
		}
		done += n;
	}
	ret = sv_mbuf_ready(b);
	if (!ret) {
		memset(b->vaddr, 0, size);
		return b;
	}
err_unpin:
	unpin_user_pages(b->pages, done);
	sv_mbuf_undo(b);
	return ERR_PTR(ret);
}

/* The last reference: no mapping and no object uses the buffer. */
static void sv_mbuf_release(struct kref *ref)
{
	struct sv_mbuf *b = container_of(ref, struct sv_mbuf, ref);

	if (is_vmalloc_addr(b->vaddr))
		vunmap(b->vaddr);
	sv_mbuf_drop_pages(b);
	sv_pinned_uncharge(b->mm, b->npages);
	mmdrop(b->mm);
	kfree(b);
}

/* Process context: freeing unmaps the kernel's view (vunmap sleeps). */
void sv_mbuf_put(struct sv_mbuf *b)
{
	kref_put(&b->ref, sv_mbuf_release);
}

void sv_mmap_file_init(struct sv_file *f)
{
	xa_init_flags(&f->mmaps, XA_FLAGS_ALLOC1);
}

/* The file is gone: every object already removed its entries. */
void sv_mmap_file_cleanup(struct sv_file *f)
{
	WARN_ON_ONCE(!xa_empty(&f->mmaps));
	xa_destroy(&f->mmaps);
}

int sv_mmap_entry_add(struct sv_file *f, struct sv_mbuf *b, u64 *offset)
{
	struct sv_mmap_entry *e;
	u32 key;
	int ret;

	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		return -ENOMEM;
	kref_get(&b->ref);
	e->buf = b;
	ret = xa_alloc(&f->mmaps, &key, e, XA_LIMIT(1, SV_MMAP_MAX_KEY - 1),
		       GFP_KERNEL_ACCOUNT);
	if (ret) {
		sv_mbuf_put(b);
		kfree(e);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	*offset = (u64)key << PAGE_SHIFT;
	return 0;
}

/*
 * sv_mbuf_alloc() of size bytes, mappable by f's owner at *offset (its
 * table holds the buffer's one reference besides the caller's); an
 * ERR_PTR if either fails.
 */
struct sv_mbuf *sv_mbuf_alloc_mapped(struct sv_file *f, size_t size,
				     u64 *offset)
{
	struct sv_mbuf *b = sv_mbuf_alloc(size);
	int ret;

	if (IS_ERR(b))
		return b;
	ret = sv_mmap_entry_add(f, b, offset);
	if (ret) {
		sv_mbuf_put(b);
		return ERR_PTR(ret);
	}
	return b;
}

/* Userspace can no longer map it; existing mappings keep the buffer. */
void sv_mmap_entry_remove(struct sv_file *f, u64 offset)
{
	struct sv_mmap_entry *e;

	e = xa_erase(&f->mmaps, offset >> PAGE_SHIFT);
	if (WARN_ON_ONCE(!e))
		return;
	sv_mbuf_put(e->buf);
	kfree(e);
}

static void sv_vma_open(struct vm_area_struct *vma)
{
	struct sv_mbuf *b = vma->vm_private_data;

	kref_get(&b->ref);
}

static void sv_vma_close(struct vm_area_struct *vma)
{
	sv_mbuf_put(vma->vm_private_data);
}

static const struct vm_operations_struct sv_vm_ops = {
	.open = sv_vma_open,
	.close = sv_vma_close,
};

int sv_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct sv_file *f = filp->private_data;
	unsigned long len = vma->vm_end - vma->vm_start;
	struct sv_mmap_entry *e;
	struct sv_mbuf *b = NULL;
	int ret;

	if (!(vma->vm_flags & VM_SHARED) || (vma->vm_flags & VM_EXEC))
		return -EINVAL;
	/* (A user's buffer has no entry: sv_move_ring() removed it.) */
	if (vma->vm_pgoff >= SV_MMAP_MAX_KEY)
		return -EINVAL;

	xa_lock(&f->mmaps);
	e = xa_load(&f->mmaps, vma->vm_pgoff);
	if (e && e->buf->size == len) {
		b = e->buf;
		kref_get(&b->ref);
	}
	xa_unlock(&f->mmaps);
	if (!b)
		return -EINVAL;

	sv_vm_flags_clear(vma, VM_MAYEXEC);
	sv_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	/* On error, the caller unmaps what was inserted. */
	ret = vm_map_pages_zero(vma, b->pages, b->npages);
	if (ret) {
		sv_mbuf_put(b);
		return ret;
	}
	vma->vm_private_data = b;
	vma->vm_ops = &sv_vm_ops;
	return 0;
}

/*
 * SV_IOC_MOVE_RING: a new QP's or CQ's ring into the caller's memory
 * (a parent domain's allocator's buffer): engine.c and cq.c move it.
 */
int sv_move_ring(struct sv_file *f, void *arg)
{
	static const u8 types[] = { [SV_WQ_QP] = SV_OBJ_QP,
				    [SV_WQ_SRQ] = SV_OBJ_SRQ,
				    [SV_RING_CQ] = SV_OBJ_CQ,
				    [SV_RING_WQ] = SV_OBJ_WQ };
	struct sv_move_ring *m = arg;
	struct sv_mbuf *nb;
	struct sv_uobj *u;
	size_t need;
	int ret;

	if (m->reserved || m->type >= ARRAY_SIZE(types))
		return -EINVAL;
	u = sv_uobj_get(f, m->handle, types[m->type]);
	if (IS_ERR(u))
		return PTR_ERR(u);
	if (m->type == SV_WQ_QP)
		need = container_of(u, struct sv_qp, uobj)->sq.buf->size;
	else if (m->type == SV_WQ_SRQ)
		need = container_of(u, struct sv_srq, uobj)->rq.buf->size;
	else if (m->type == SV_RING_CQ)
		need = container_of(u, struct sv_cq, uobj)->ring_buf->size;
	else
		need = sv_rwq_ring_size(u);
	if (m->len < need) {
		ret = -EINVAL;
		goto out;
	}
	nb = sv_mbuf_pin(m->addr, need);
	if (IS_ERR(nb)) {
		ret = PTR_ERR(nb);
		goto out;
	}
	if (m->type == SV_WQ_QP)
		ret = sv_wq_move(f, container_of(u, struct sv_qp, uobj), nb);
	else if (m->type == SV_WQ_SRQ)
		ret = sv_srq_move(f, container_of(u, struct sv_srq, uobj), nb);
	else if (m->type == SV_RING_CQ)
		ret = sv_cq_move(f, container_of(u, struct sv_cq, uobj), nb);
	else
		ret = sv_rwq_move(f, u, nb);
	sv_mbuf_put(nb);
out:
	sv_uobj_put(u);
	return ret;
}
