/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softverbs memory regions, inside the module: the MR object that mr.c
 * (registered memory) and mkey.c (indirect keys over it) share, and the
 * life-cycle helpers mr.c describes.
 */
#ifndef SV_MR_H
#define SV_MR_H

#include "../sv.h"

struct sv_umem;
struct sv_mkey;
struct sv_mw;

struct sv_mr {
	struct sv_uobj uobj;		/* first */
	struct sv_device *sdev;
	u32 index;			/* in sv_mr_keys, for the MR's life */
	struct rcu_head rcu;
	/* Copies in flight, + 1 while open to them; see sv_mr_enter(). */
	atomic_t active;
	bool closing;			/* no new copies while set */
	struct completion idle;		/* active dropped to 0 */
	/* Changed by rereg/dereg under f->lock, only while closed. */
	u32 key;			/* lkey == rkey; 0 once deregistered */
	u32 access;			/* SV_ACCESS_* */
	u64 iova;			/* as requested; see sv_mr_base() */
	struct sv_pd *pd;		/* pinned */
	struct sv_umem *umem;		/* NULL once deregistered */
	u32 generation;			/* bumped by every rereg */
	/* An indirect key (mkey.c) instead of pages: set for its life. */
	struct sv_mkey *mkey;
	/* ... which is a memory window's (mw.c): set for its life. */
	struct sv_mw *mw;
};

/* mr.c */
void sv_mr_init(struct sv_mr *mr, struct sv_device *sdev);
void sv_mr_close(struct sv_mr *mr);
void sv_mr_open(struct sv_mr *mr);
int sv_mr_alloc_index(struct sv_mr *mr);
int sv_mr_key_publish(struct sv_mr *mr);
void sv_mr_key_release(struct sv_mr *mr);
struct sv_mr *sv_mr_lookup_key(struct sv_device *sdev, u32 key);
void sv_mr_put(struct sv_mr *mr);
void sv_mr_free(struct sv_uobj *u);
int sv_mr_obj_add(struct sv_file *f, struct sv_mr *mr, u32 pd_handle,
		  enum sv_obj_type type, const struct sv_uobj_ops *ops);

/* mkey.c: the data path through an indirect key */
int sv_mkey_check(struct sv_mr *mr, u32 access, u64 iova, u64 len,
		  u64 *offset);
int sv_mkey_span_io(const struct sv_mr_span *sp, u64 off, void *buf,
		    u64 len, bool to_mr);
int sv_mkey_span_copy(const struct sv_mr_span *dst, u64 doff,
		      const struct sv_mr_span *src, u64 soff, u64 len);
struct sv_mkey *sv_mkey_new(u32 max_entries);

void sv_mkey_release(struct sv_mkey *mk);
void sv_mkey_set_range(struct sv_mkey *mk, u32 lkey, u64 addr, u64 len,
		       u64 base, u32 access);

/* mkey.c: the direct span under an indirect one */
int sv_mkey_piece(const struct sv_mr_span *sp, u64 off, u64 max,
		  bool write, struct sv_mr_span *tmp,
		  const struct sv_mr_span **out, u64 *out_off, u64 *n);
void sv_mkey_piece_put(const struct sv_mr_span *sp, struct sv_mr_span *tmp);

/* odp.c: the page cache of an on-demand paging MR */
struct sv_odp *sv_odp_new(u64 addr, u64 length);
void sv_odp_release(struct sv_odp *odp);
int sv_odp_fault(struct sv_odp *odp, u64 addr, u64 len, bool write);
void sv_odp_fault_later(struct sv_odp *odp, u64 addr, u64 len, bool write);
int sv_odp_prefetch(struct sv_odp *odp, u64 addr, u64 len, bool write,
		    bool fault);
void *sv_odp_page(struct sv_odp *odp, u64 addr, bool write);
spinlock_t *sv_odp_lock(struct sv_odp *odp);

/* dmabuf.c: dma-buf MRs */
struct sv_dmabuf;
struct sv_dmabuf *sv_dmabuf_get(struct device *dev, int fd, u64 offset,
				u64 length);
void sv_dmabuf_release(struct sv_dmabuf *d);
void sv_dmabuf_revoke(struct sv_dmabuf *d);
spinlock_t *sv_dmabuf_lock(struct sv_dmabuf *d);
void *sv_dmabuf_addr(struct sv_dmabuf *d, u64 off);

/* mw.c: the checks of an access through a window */
int sv_mw_check(const struct sv_mr *mr, const struct sv_qp *qp);
int sv_mw_invalidate(struct sv_mr *mr, struct sv_pd *pd, u32 key);

#endif /* SV_MR_H */
