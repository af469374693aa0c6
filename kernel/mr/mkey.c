// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs indirect memory keys: mlx5dv_create_mkey() and the UMR work
 * requests mlx5dv_wr_mr_interleaved() and mlx5dv_wr_mr_list().
 *
 * An indirect key is an MR (mr.h) with no pages: a key in the MR key
 * space, a PD, and a layout over pieces of other MRs of that PD. It is
 * created free (no layout: every access fails); an SV_WR_UMR posted on an
 * RC QP of its PD lays it out, SV_WR_LOCAL_INV frees it again, as an mlx5
 * UMR does. Accesses through it are zero-based: byte o of the key is
 * byte o of the layout, which is repeat_count repetitions of the entries'
 * bytes_count bytes, entry by entry; repetition r of entry e starts at
 * e.addr + r * (e.bytes_count + e.bytes_skip) of the MR e.lkey.
 *
 * The layout is only ever changed while the key's MR is closed
 * (sv_mr_close(): no new spans, the ones in flight waited for), under
 * mk->lock, which also orders UMR, LOCAL_INV and destroy: a span sees
 * one whole layout. The key's rights are the UMR's access flags; each
 * piece is then taken as a span of its own MR by lkey, with the key's PD
 * and a local right (a local write for anything written), when the bytes
 * move. So an MR deregistered under a laid-out key fails the accesses
 * that reach it, as on mlx5, and an indirect key never names another
 * (EPERM: no nesting). The entries array is sized at create time
 * (max_entries) and charged to the creator: executing a UMR allocates
 * nothing.
 *
 * A memory window (mw.c) is a one-entry key whose accesses are at the
 * addresses of the range it is bound to (base: that range's first
 * address; 0 for a zero-based window and for every mlx5 key).
 */
#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/slab.h>

#include "../sv.h"
#include "mr.h"

/* The rights a UMR may give (mlx5: the mkey context's access flags). */
#define SV_MKEY_RIGHTS	(SV_ACCESS_LOCAL_WRITE | SV_ACCESS_REMOTE_WRITE | \
			 SV_ACCESS_REMOTE_READ | SV_ACCESS_REMOTE_ATOMIC)

/* Pieces moved between chances to reschedule in a copy. */
#define SV_MKEY_PIECES_PER_RESCHED	1024

struct sv_mkey_ent {
	u64 addr;			/* of repetition 0 */
	u64 stride;			/* bytes_count + bytes_skip */
	u64 start;			/* offset of its bytes in a repetition */
	u32 count;			/* bytes_count */
	u32 lkey;
};

struct sv_mkey {
	struct mutex lock;		/* layout changes, destroy */
	u32 max_entries;
	/* The layout: changed under lock while the MR is closed. */
	bool valid;
	u32 access;
	u32 n;
	u64 pattern;			/* bytes of one repetition */
	u64 length;			/* repeat * pattern */
	u64 base;			/* the address of layout byte 0 */
	struct sv_mkey_ent ent[];
};

static struct sv_mr *to_sv_mr(struct sv_uobj *u)
{
	return container_of(u, struct sv_mr, uobj);
}

/*
 * Check an access through a laid-out key: rights and bounds; offsets are
 * zero-based. Called by sv_mr_check(), the MR entered.
 */
int sv_mkey_check(struct sv_mr *mr, u32 access, u64 iova, u64 len,
		  u64 *offset)
{
	struct sv_mkey *mk = mr->mkey;

	if (!mk->valid)
		return -ENOENT;
	if (access & ~mk->access & SV_MKEY_RIGHTS)
		return -EACCES;
	if (iova < mk->base)
		return -ERANGE;
	iova -= mk->base;
	if (iova > mk->length || len > mk->length - iova)
		return -ERANGE;
	*offset = iova;
	return 0;
}

/* Where byte off of the layout is: lkey, address, bytes contiguous. */
static void sv_mkey_locate(const struct sv_mkey *mk, u64 off, u32 *lkey,
			   u64 *addr, u64 *avail)
{
	const struct sv_mkey_ent *e;
	u64 r, in, rem;
	u32 lo = 0, hi = mk->n;

	r = div64_u64_rem(off, mk->pattern, &rem);
	/* The last entry starting at or before rem with bytes in it. */
	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (mk->ent[mid].start <= rem)
			lo = mid;
		else
			hi = mid;
	}
	/*
	 * The next entry starts at e->start + e->count > rem: rem is in e
	 * (an empty entry is never the last one starting at or before rem).
	 */
	e = &mk->ent[lo];
	in = rem - e->start;
	*lkey = e->lkey;
	*addr = e->addr + r * e->stride + in;
	*avail = e->count - in;
}

/*
 * A direct span for the bytes of sp from off on, at most max of them: sp
 * itself, or, through an indirect key, a span of the MR under it taken
 * into tmp (put it back when *out == tmp). *n bytes at *out_off of *out.
 */
int sv_mkey_piece(const struct sv_mr_span *sp, u64 off, u64 max,
		  bool write, struct sv_mr_span *tmp,
		  const struct sv_mr_span **out, u64 *out_off, u64 *n)
{
	struct sv_mr *mr = sp->mr;
	u64 addr, avail;
	u32 lkey;
	int ret;

	if (!mr->mkey) {
		*out = sp;
		*out_off = off;
		*n = min(max, sp->len - off);
		return 0;
	}
	sv_mkey_locate(mr->mkey, sp->off + off, &lkey, &addr, &avail);
	*n = min(max, avail);
	ret = sv_mr_span_get(mr->sdev, lkey, mr->pd,
			     write ? SV_ACCESS_LOCAL_WRITE : 0, addr, *n, tmp,
			     NULL);
	if (ret)
		return ret;
	tmp->nofault = sp->nofault;
	if (tmp->mr->mkey) {
		sv_mr_span_put(tmp);
		return -EPERM;
	}
	*out = tmp;
	*out_off = 0;
	return 0;
}

void sv_mkey_piece_put(const struct sv_mr_span *sp, struct sv_mr_span *tmp)
{
	if (sp == tmp)
		sv_mr_span_put(tmp);
}

/* sv_mr_span_io() through an indirect span: piece by piece. */
int sv_mkey_span_io(const struct sv_mr_span *sp, u64 off, void *buf,
		    u64 len, bool to_mr)
{
	const struct sv_mr_span *p;
	struct sv_mr_span tmp;
	u64 poff, n;
	int ret;

	if (!sv_span_fits(sp, off, len))
		return -ERANGE;
	while (len) {
		ret = sv_mkey_piece(sp, off, len, to_mr, &tmp, &p, &poff, &n);
		if (ret)
			return ret;
		ret = to_mr ? sv_mr_span_write(p, poff, buf, n) :
			      sv_mr_span_read(p, poff, buf, n);
		sv_mkey_piece_put(p, &tmp);
		if (ret)
			return ret;
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* sv_mr_span_copy() when either span is indirect: piece by piece. */
int sv_mkey_span_copy(const struct sv_mr_span *dst, u64 doff,
		      const struct sv_mr_span *src, u64 soff, u64 len)
{
	const struct sv_mr_span *d, *s;
	struct sv_mr_span dt, st;
	u64 dpoff, spoff, dn, n;
	u32 pieces = 0;
	int ret;

	if (!sv_span_fits(dst, doff, len) || !sv_span_fits(src, soff, len))
		return -ERANGE;
	while (len) {
		ret = sv_mkey_piece(dst, doff, len, true, &dt, &d, &dpoff, &dn);
		if (ret)
			return ret;
		ret = sv_mkey_piece(src, soff, dn, false, &st, &s, &spoff, &n);
		if (ret) {
			sv_mkey_piece_put(d, &dt);
			return ret;
		}
		ret = sv_mr_span_copy(d, dpoff, s, spoff, n);
		sv_mkey_piece_put(s, &st);
		sv_mkey_piece_put(d, &dt);
		if (ret)
			return ret;
		doff += n;
		soff += n;
		len -= n;
		if (++pieces % SV_MKEY_PIECES_PER_RESCHED == 0)
			cond_resched();
	}
	return 0;
}

/* ---- the layout's memory, for indirect keys and windows ---- */

struct sv_mkey *sv_mkey_new(u32 max_entries)
{
	struct sv_mkey *mk;

	mk = kvzalloc(struct_size(mk, ent, max_entries), GFP_KERNEL_ACCOUNT);
	if (!mk)
		return NULL;
	mutex_init(&mk->lock);
	mk->max_entries = max_entries;
	return mk;
}

void sv_mkey_release(struct sv_mkey *mk)
{
	if (!mk)
		return;
	mutex_destroy(&mk->lock);
	kvfree(mk);
}

/*
 * Lay a window out (its MR closed): len bytes at addr of the MR lkey,
 * accessed at base on with the rights in access; len 0 leaves it free.
 */
void sv_mkey_set_range(struct sv_mkey *mk, u32 lkey, u64 addr, u64 len,
		       u64 base, u32 access)
{
	mk->ent[0] = (struct sv_mkey_ent) {
		.addr = addr, .stride = len, .count = len, .lkey = lkey,
	};
	mk->n = 1;
	mk->pattern = len;
	mk->length = len;
	mk->base = base;
	mk->access = access & SV_MKEY_RIGHTS;
	mk->valid = len != 0;
}

/* ---- the object ---- */

static void sv_mkey_destroy(struct sv_uobj *u)
{
	struct sv_mr *mr = to_sv_mr(u);
	struct sv_mkey *mk = mr->mkey;
	struct sv_pd *pd;

	lockdep_assert_held(&u->file->lock);
	sv_mr_key_release(mr);
	mutex_lock(&mk->lock);
	sv_mr_close(mr);
	WRITE_ONCE(mr->key, 0);
	pd = mr->pd;
	mr->pd = NULL;
	mutex_unlock(&mk->lock);
	sv_pd_unpin(pd);
}

static void sv_mkey_free(struct sv_uobj *u)
{
	struct sv_mr *mr = to_sv_mr(u);

	sv_mkey_release(mr->mkey);
	sv_mr_free(u);
}

static const struct sv_uobj_ops sv_mkey_ops = {
	.destroy = sv_mkey_destroy,
	.free = sv_mkey_free,
};

int sv_create_mkey(struct sv_file *f, void *arg)
{
	struct sv_create_mkey *cmd = arg;
	struct sv_mr *mr;
	u32 max;
	int ret;

	if (cmd->flags || cmd->reserved ||
	    cmd->max_entries > SV_MAX_MKEY_ENTRIES)
		return -EINVAL;
	max = ALIGN(cmd->max_entries, 4);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return -ENOMEM;
	mr->mkey = sv_mkey_new(max);
	if (!mr->mkey) {
		kfree(mr);
		return -ENOMEM;
	}
	ret = sv_mr_obj_add(f, mr, cmd->pd_handle, SV_OBJ_MKEY, &sv_mkey_ops);
	if (ret)
		return ret;
	cmd->max_entries = max;
	cmd->mkey_handle = mr->uobj.handle;
	cmd->key = mr->key;
	return 0;
}

int sv_destroy_mkey(struct sv_file *f, void *arg)
{
	struct sv_destroy_mkey *cmd = arg;

	return sv_uobj_destroy(f, cmd->mkey_handle, SV_OBJ_MKEY);
}

/* ---- UMR and LOCAL_INV, executed by the QP's engine ---- */

/* Check a UMR's entries and fill mk's layout from them; 0 or a WC status. */
static u32 sv_mkey_entries(struct sv_mkey *mk, const struct sv_send_umr *u,
			   const struct sv_umr_ent *e)
{
	u64 pattern = 0, stride, last, end, length;
	u32 i;

	if (!u->repeat_count)
		return SV_WC_STATUS_LOC_QP_OP_ERR;
	for (i = 0; i < u->num_ent; i++) {
		if (e[i].reserved)
			return SV_WC_STATUS_LOC_QP_OP_ERR;
		stride = (u64)e[i].bytes_count + e[i].bytes_skip;
		/* The last repetition's last byte stays in the address space. */
		if (check_mul_overflow(stride, (u64)u->repeat_count - 1, &last) ||
		    check_add_overflow(e[i].addr, last, &end) ||
		    check_add_overflow(end, (u64)e[i].bytes_count, &end))
			return SV_WC_STATUS_LOC_QP_OP_ERR;
		mk->ent[i].addr = e[i].addr;
		mk->ent[i].stride = stride;
		mk->ent[i].start = pattern;
		mk->ent[i].count = e[i].bytes_count;
		mk->ent[i].lkey = e[i].lkey;
		pattern += e[i].bytes_count;
	}
	if (check_mul_overflow(pattern, (u64)u->repeat_count, &length) ||
	    length > SV_MAX_MR_SIZE)
		return SV_WC_STATUS_LOC_QP_OP_ERR;
	mk->n = u->num_ent;
	mk->pattern = pattern;
	mk->length = length;
	return 0;
}

/*
 * Apply a UMR to mk (the MR closed): its layout, its rights, or both. A
 * UMR that fails leaves the key free.
 */
static u32 sv_mkey_layout(struct sv_mkey *mk, const struct sv_send_umr *u,
			  const struct sv_umr_ent *e)
{
	u32 status;

	mk->valid = false;
	if (u->flags & SV_UMR_KEEP_LAYOUT) {
		if (u->num_ent)
			return SV_WC_STATUS_LOC_QP_OP_ERR;
	} else {
		status = sv_mkey_entries(mk, u, e);
		/* Entries may be half written: no layout is left. */
		if (status) {
			mk->n = 0;
			mk->pattern = 0;
			mk->length = 0;
			return status;
		}
	}
	if (!(u->flags & SV_UMR_KEEP_ACCESS))
		mk->access = u->access;
	mk->valid = mk->length != 0;
	return 0;
}

/**
 * sv_mkey_exec - execute an SV_WR_UMR or SV_WR_LOCAL_INV of qp
 * @qp: its engine holds qp->sq.lock
 * @w: the WQE, copied out of the ring with its slot's payload
 *
 * Returns the WC status: 0, LOC_QP_OP_ERR for a malformed UMR,
 * LOC_PROT_ERR for a key that is not an indirect key of qp's PD (nor,
 * for LOCAL_INV, a bound type 2 window of qp's PD: mw.c).
 */
u32 sv_mkey_exec(struct sv_qp *qp, const struct sv_send_wqe *w)
{
	const struct sv_send_umr *u = (const void *)(w + 1);
	bool umr = w->opcode == SV_WR_UMR;
	u32 key = umr ? w->rkey : w->imm_data;
	/* What a slot holds after the WQE (engine.c, sv_dp_qp_create()) */
	u32 room = max_t(u32, qp->cap.max_send_sge * sizeof(struct sv_sge),
			 qp->cap.max_inline_data);
	struct sv_mkey *mk;
	struct sv_mr *mr;
	u32 status = 0;

	if (w->num_sge || w->inline_len)
		return SV_WC_STATUS_LOC_QP_OP_ERR;
	if (umr && (room < sizeof(*u) ||
		    (u->flags & ~(SV_UMR_KEEP_ACCESS | SV_UMR_KEEP_LAYOUT)) ||
		    (u->access & ~SV_MKEY_RIGHTS) ||
		    u->num_ent > (room - sizeof(*u)) / sizeof(struct sv_umr_ent)))
		return SV_WC_STATUS_LOC_QP_OP_ERR;
	mr = sv_mr_lookup_key(qp->sdev, key);
	if (!mr)
		return SV_WC_STATUS_LOC_PROT_ERR;
	/* A window is freed by mw.c's rules and never laid out by a UMR. */
	if (mr->mw && !umr) {
		status = sv_mw_invalidate(mr, sv_qp_pd(qp), key) ?
			 SV_WC_STATUS_LOC_PROT_ERR : 0;
		goto out;
	}
	mk = mr->mkey;
	if (!mk || mr->mw ||
	    READ_ONCE(mr->pd) != sv_qp_pd(qp)) {
		status = SV_WC_STATUS_LOC_PROT_ERR;
		goto out;
	}
	if (umr && u->num_ent > mk->max_entries) {
		status = SV_WC_STATUS_LOC_QP_OP_ERR;
		goto out;
	}
	mutex_lock(&mk->lock);
	if (READ_ONCE(mr->key) != key) {	/* destroyed meanwhile */
		status = SV_WC_STATUS_LOC_PROT_ERR;
	} else {
		sv_mr_close(mr);
		if (umr)
			status = sv_mkey_layout(mk, u,
						(const struct sv_umr_ent *)(u + 1));
		else
			mk->valid = false;
		sv_mr_open(mr);
	}
	mutex_unlock(&mk->lock);
out:
	sv_mr_put(mr);
	return status;
}
