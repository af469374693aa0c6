// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs dma-buf MRs: ibv_reg_dmabuf_mr() over a range of a dma-buf.
 *
 * The MR attaches to the buffer as a dynamic importer (so the exporter
 * can tell it the buffer moves: move_notify), pins it, as the RDMA core's
 * pinned dma-buf umem does (the Debian kernels have no
 * CONFIG_DMABUF_MOVE_NOTIFY: an importer that does not pin cannot map),
 * and reaches the bytes through the exporter's kernel mapping
 * (dma_buf_vmap()): a software device's DMA is the CPU's. An exporter
 * without a kernel mapping, or whose mapping is I/O memory, is
 * EOPNOTSUPP.
 *
 * The mapping is used under d->lock, which the data path (mr.c) holds
 * for one page's copy, as an ODP MR's cache lock. move_notify, should a
 * pinned buffer's exporter revoke it anyway, clears it under that lock:
 * every later access fails (IBV_WC_LOC_PROT_ERR for the owner,
 * IBV_WC_REM_ACCESS_ERR for a peer) until the MR is deregistered, and
 * no copy touches the old mapping once the exporter has been answered.
 */
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/iosys-map.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "../compat.h"
#include "../sv.h"
#include "mr.h"

MODULE_IMPORT_NS(DMA_BUF);

struct sv_dmabuf {
	spinlock_t lock;		/* vaddr; BH-safe */
	struct dma_buf *buf;		/* referenced */
	struct dma_buf_attachment *attach;
	struct iosys_map map;		/* the exporter's kernel mapping */
	void *vaddr;			/* map's, NULL once revoked */
};

static void sv_dmabuf_move_notify(struct dma_buf_attachment *attach)
{
	struct sv_dmabuf *d = attach->importer_priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	spin_lock_bh(&d->lock);
	d->vaddr = NULL;
	spin_unlock_bh(&d->lock);
}

static const struct dma_buf_attach_ops sv_dmabuf_attach_ops = {
	.allow_peer2peer = false,
	.move_notify = sv_dmabuf_move_notify,
};

/*
 * [offset, offset + length) of the dma-buf fd names, for dev's MRs: EBADF
 * (not a file), EINVAL (not a dma-buf, or outside it), EOPNOTSUPP (no
 * kernel mapping, or I/O memory).
 */
struct sv_dmabuf *sv_dmabuf_get(struct device *dev, int fd, u64 offset,
				u64 length)
{
	struct sv_dmabuf *d;
	int ret;

	d = kzalloc(sizeof(*d), GFP_KERNEL_ACCOUNT);
	if (!d)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&d->lock);
	d->buf = dma_buf_get(fd);
	if (IS_ERR(d->buf)) {
		ret = PTR_ERR(d->buf);
		goto err_free;
	}
	if (offset > d->buf->size || length > d->buf->size - offset) {
		ret = -EINVAL;
		goto err_put;
	}
	d->attach = dma_buf_dynamic_attach(d->buf, dev, &sv_dmabuf_attach_ops,
					   d);
	if (IS_ERR(d->attach)) {
		ret = PTR_ERR(d->attach);
		goto err_put;
	}
	dma_resv_lock(d->buf->resv, NULL);
	ret = dma_buf_pin(d->attach);
	dma_resv_unlock(d->buf->resv);
	if (ret)
		goto err_detach;
	ret = sv_dma_buf_vmap(d->buf, &d->map);
	if (ret) {
		ret = -EOPNOTSUPP;
		goto err_unpin;
	}
	if (d->map.is_iomem) {
		ret = -EOPNOTSUPP;
		goto err_vunmap;
	}
	d->vaddr = d->map.vaddr;
	return d;

err_vunmap:
	sv_dma_buf_vunmap(d->buf, &d->map);
err_unpin:
	dma_resv_lock(d->buf->resv, NULL);
	dma_buf_unpin(d->attach);
	dma_resv_unlock(d->buf->resv);
err_detach:
	dma_buf_detach(d->buf, d->attach);
err_put:
	dma_buf_put(d->buf);
err_free:
	kfree(d);
	return ERR_PTR(ret);
}

/* The MR is done with it: no copy uses it any more. */
void sv_dmabuf_release(struct sv_dmabuf *d)
{
	sv_dma_buf_vunmap(d->buf, &d->map);
	dma_resv_lock(d->buf->resv, NULL);
	dma_buf_unpin(d->attach);
	dma_resv_unlock(d->buf->resv);
	dma_buf_detach(d->buf, d->attach);
	dma_buf_put(d->buf);
	kfree(d);
}

/*
 * What an exporter does when it takes the buffer away: the dma-buf core's
 * move_notify to every dynamic importer, under the buffer's reservation
 * lock. For tests (debugfs dmabuf_revoke, mr.c): Debian's exporters never
 * move a pinned buffer.
 */
void sv_dmabuf_revoke(struct sv_dmabuf *d)
{
	dma_resv_lock(d->buf->resv, NULL);
	dma_buf_move_notify(d->buf);
	dma_resv_unlock(d->buf->resv);
}

spinlock_t *sv_dmabuf_lock(struct sv_dmabuf *d)
{
	return &d->lock;
}

/* Byte off of the buffer, or NULL once revoked. Under its lock. */
void *sv_dmabuf_addr(struct sv_dmabuf *d, u64 off)
{
	return d->vaddr ? d->vaddr + off : NULL;
}
