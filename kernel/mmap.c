// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs mmap: memory the module shares with the library (CQ rings, and
 * the QP/SRQ rings and doorbell pages of other objects).
 *
 * A shared buffer is a struct sv_mbuf: vmalloc_user() memory with a
 * reference count. An object that wants userspace to map a buffer
 * registers it in its file's mmap table with sv_mmap_entry_add(), which
 * returns the offset to pass to mmap(2); the table holds one reference.
 * Every VMA mapping the buffer holds another (vm_ops open/close), so a
 * buffer outlives the object (and its table entry) until the last munmap:
 * destroying an object while userspace still maps its ring is safe.
 *
 * The offset is a key, not a position: entry N is mapped at offset
 * N << PAGE_SHIFT, always whole, with MAP_SHARED and never executable.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "sv.h"

/* Keys fit in a pgoff on 32-bit too. */
#define SV_MMAP_MAX_KEY	BIT(20)

struct sv_mmap_entry {
	struct sv_mbuf *buf;
};

struct sv_mbuf *sv_mbuf_alloc(size_t size)
{
	struct sv_mbuf *b;

	if (!size)
		return ERR_PTR(-EINVAL);
	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return ERR_PTR(-ENOMEM);
	b->size = PAGE_ALIGN(size);
	b->vaddr = vmalloc_user(b->size);	/* zeroed */
	if (!b->vaddr) {
		kfree(b);
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&b->ref);
	return b;
}

static void sv_mbuf_release(struct kref *ref)
{
	struct sv_mbuf *b = container_of(ref, struct sv_mbuf, ref);

	vfree(b->vaddr);
	kfree(b);
}

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
		       GFP_KERNEL);
	if (ret) {
		sv_mbuf_put(b);
		kfree(e);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	*offset = (u64)key << PAGE_SHIFT;
	return 0;
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

	ret = remap_vmalloc_range(vma, b->vaddr, 0);
	if (ret) {
		sv_mbuf_put(b);
		return ret;
	}
	sv_vm_flags_clear(vma, VM_MAYEXEC);
	sv_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = b;
	vma->vm_ops = &sv_vm_ops;
	return 0;
}
