// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs data path: work queue rings, the doorbell page and the
 * execution engines.
 *
 * Engines: a bounded pool of kthreads (softverbs-engN) shared by every
 * open file of every device. The bound is the max_engines module
 * parameter, by default the number of online housekeeping CPUs at load
 * (isolcpus excluded); engines are created lazily up to it, by the
 * kthreadd, never in a user's cgroups, and stop at module exit (no file
 * can be open then). A file is attached to one engine at its first QP (or
 * doorbell mapping): an engine without files if the pool can grow, else
 * the one serving the fewest files. It keeps that engine until it closes.
 * On its engine the file belongs to its user: the real uid of the cred
 * it was opened with (f->uid). An engine keeps one struct sv_engine_user
 * per uid with files on it, made when the uid's first file there
 * attaches and taken off when its last one there detaches.
 *
 * An engine executes its files' send queues (exec.c) and flushes the
 * queues of QPs in the error state. A pass goes over its users round
 * robin; in each, over the user's files round robin; in each, over the
 * file's QPs round robin: at most SV_ENGINE_BUDGET WQEs and about
 * SV_ENGINE_BYTES bytes per QP per turn, and at most SV_FILE_BUDGET WQEs
 * and about SV_FILE_BYTES per user per pass, however many files it has
 * (a QP or file whose turn did not come is first in the user's next
 * turn). While the user's budget lasts and its last round did work, its
 * files get another round, at most SV_USER_ROUNDS in all: a user with one
 * busy QP gets as much as one with many. So a QP waits for at most one
 * user budget per user on the engine: a user with 64 busy files and a
 * user with one get about half of the engine each, and between the QPs
 * and files of one user the shares are as even as per-turn budgets make
 * them. A pass visits every user and, until its budget is spent, its
 * files, each round at most once: O(users + files) besides the work,
 * without allocating. Copies reschedule every SV_COPY_CHUNK (exec.c).
 * debugfs's softverbs/engines lists each engine's users and the WQEs the
 * kthread executed for each.
 *
 * What the kthreads do for a user is this copying, outside its CPU
 * cgroup (not charged to it): bounded per engine pass by one user budget
 * as above, on each engine that serves one of the user's files, and by
 * the number of files and QPs the user may have (the rdma cgroup's
 * hca_handle and hca_object, the per-user limits of limits.c). No user
 * action creates a kthread beyond the pool's bound. The memory a file's
 * engine state needs (its doorbell page, its scratch WQE) is charged to
 * the file's creator, its user's share of an engine (struct
 * sv_engine_user) to the user whose file made it.
 *
 * An engine keeps polling while there is work and, while it has its CPU
 * to itself, for the longest idle_us of its files' devices after the
 * last (steered frames that woke it start no such window: it drains
 * them and sleeps, and their next one wakes it, unless it executes send
 * work or something else wakes it meanwhile; only UD QPs and QPs on
 * an SRQ get frames that way, the others take them in softirq,
 * steer/rx.c). Then it sets SV_DB_NEED_WAKEUP in the doorbell page of
 * every file it serves, issues a full barrier,
 * looks once more at every file's queues and sleeps until
 * SV_IOC_DOORBELL, a state change, a retry time or kthread_stop(). A
 * file attached to a sleeping engine starts with the flag set. The ring
 * and doorbell memory-ordering contract is in uapi/softverbs-abi.h.
 *
 * SV_IOC_DOORBELL runs one pass over the poster's own file in the
 * poster's context (charged to the poster: its CPU time, its cgroups),
 * unless the engine is in that file's pass, and then wakes the engine: a
 * poster that waits for each answer (a latency test, a ping-pong) gets
 * its WR executed in its own syscall, without waiting for a CPU for the
 * kthread; a poster that keeps posting wakes the kthread, which polls on
 * a CPU of its own and the poster makes no more syscalls. The doorbell's
 * pass is bounded: SV_DOORBELL_BUDGET WQEs per QP and one file budget,
 * and it is outside the engine's per-user budgets (the poster pays).
 *
 * This is how posts that find no engine CPU do a bounded share of the
 * work themselves (ARCHITECTURE.md, decision 10): an engine without a
 * CPU of its own does not poll (below) but sleeps, and while it sleeps or
 * shares its CPU SV_DB_NEED_WAKEUP is set (sv_engine_share()), so each
 * post rings, and the ring runs the bounded pass above over
 * the poster's file before it hands what is left to the kthread (woken
 * then, it takes its turns on a shared CPU from the scheduler). Only the
 * poster's own file: a post never runs another file's WRs (posted work
 * is either done or with a woken kthread, which sleeps only when every
 * queue is empty or backing off, then with a timer for the back-off).
 * A busy poster's posts share their rings (SV_DB_DEFER, uapi): while a
 * file says its posts would defer (its doorbell page's defer), the
 * kthread lets them, in every hinted file it serves, and never sleeps
 * longer than SV_ENGINE_LAZY_NS meanwhile (sv_engine_lazy()); its
 * wakeups run what the deferred posts' hint bits name.
 * Polls do the same for frames queued for the file's QPs: while the
 * kthread sleeps or shares its CPU they set the doorbell page's rx, and a
 * poll that finds its CQ empty rings for them.
 *
 * Affinity: an engine runs on the CPUs it was given: at creation, those
 * of the kthreadd that are housekeeping CPUs for kthreads; later, whatever
 * the admin sets (taskset). It never widens them. An engine that would
 * have to share its CPU does not poll: it moves to another of its allowed
 * CPUs (at most every 10 ms: wakeups tend to leave it on the poster's) by
 * narrowing its mask for the move and setting back the allowed one, or,
 * if that one is busy too, sleeps and the posters ring. The allowed mask
 * is re-read before each move, so an admin's change is adopted; on 6.2
 * and later the scheduler also keeps a user-set mask (user_cpus_ptr)
 * over the engine's own calls, on 6.1 a change made during the move
 * itself (microseconds) is undone.
 *
 * Lifetimes and locks: sv_engines_lock (creating engines, picking one)
 * -> e->lock (spinlock, taken with BH off: steering kicks the engine
 * from softirq; the engine's user list, every user's file list, every
 * attached file's QP list, kicked, asleep). A struct
 * sv_engine_user is referenced by the engine's list, from its first
 * file's attach to its last file's detach, and by a pass in the user's
 * turn (which then frees it). A file's struct sv_engine_file is
 * referenced by the file and by a pass that is working on it; its
 * run_lock (mutex) is held by whoever runs the file, the engine or the
 * doorbell, one at a time (the scratch memory is the file's). A QP is
 * on its file's list from activation to destroy; destroy takes it off
 * and then takes qp->sq.lock, so no pass is still in it. At close the
 * file's QPs are destroyed first, then sv_engine_detach() takes the
 * file off the engine, takes its run_lock once (a pass in the file
 * finishes) and marks it detached: a pass that took a reference before
 * skips it; the last reference frees the doorbell page (whose mapping
 * may outlive the file: mbuf references) and the scratch. Receive
 * queues are consumed by other files' engines too (the requester does
 * the work), under wq->lock; they hold a QP reference, which keeps the
 * ring memory.
 */
#include <linux/cpumask.h>
#include <linux/cred.h>
#include <linux/kthread.h>
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/isolation.h>
#include <linux/sched/stat.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/seq_file.h>
#include <linux/wait.h>

#include "sv.h"
#include "wire/wire.h"

static unsigned int idle_us = SV_IDLE_US_DEFAULT;
module_param(idle_us, uint, 0644);
MODULE_PARM_DESC(idle_us, "Default microseconds an engine polls after its last work before sleeping (default 1000)");

static unsigned int max_engines;
module_param(max_engines, uint, 0444);
MODULE_PARM_DESC(max_engines, "Engine kthreads shared by all open files (0 at load: one per online housekeeping CPU); reads back the bound in use");

/* WQEs executed per QP per pass: fairness between QPs. */
#define SV_ENGINE_BUDGET	64
/* ... and bytes: a QP of 2 GiB messages gives way after each one. */
#define SV_ENGINE_BYTES		SZ_4M
/*
 * WQEs and bytes per user (uid) per engine pass, over its files: fairness
 * between users. The doorbell's pass over one file has the same bound.
 */
#define SV_FILE_BUDGET		256
#define SV_FILE_BYTES		SZ_16M
/*
 * Rounds over a user's files in one pass: a user with a single busy QP
 * gets its whole budget, as one with many, but each round visits every
 * file of the user, so the rounds are bounded too.
 */
#define SV_USER_ROUNDS		(SV_FILE_BUDGET / SV_ENGINE_BUDGET)
/*
 * The doorbell's pass does fewer: enough for a poster that waits for each
 * answer, while a burst goes to the kthread on its own CPU instead of
 * holding the poster in its syscall.
 */
#define SV_DOORBELL_BUDGET	4
/* A drive's, over all its passes: its poll gets its completions soon. */
#define SV_DRIVE_BUDGET		256
/*
 * ... and bytes: a drive holds its poller (whose own completion may
 * come early in it) for about a millisecond of copying at most.
 */
#define SV_DRIVE_BYTES		SZ_1M
/* With nothing to do and no completion for its poll, a drive waits... */
#define SV_DRIVE_IDLE_NS	(20 * NSEC_PER_USEC)
/* ... or, once it has, a little while for a poster's next WQE. */
#define SV_DRIVE_LINGER_NS	(5 * NSEC_PER_USEC)
/* The files with a hint a drive takes in one look at a user's share */
#define SV_DRIVE_FILES		16
/* The engines one drive runs its user's shares of */
#define SV_DRIVE_ENGINES	8
/* The longest the kthread sleeps with nothing to wait for. */
#define SV_ENGINE_NAP_NS	(10 * NSEC_PER_SEC)
/* A pass's wake time when no QP is backing off. */
#define SV_NO_WAKE		U64_MAX
/* While files defer their rings (SV_DB_DEFER): the longest sleep ... */
#define SV_ENGINE_LAZY_NS	(SV_DB_DEFER_US * NSEC_PER_USEC)
/* ... for this long after a file last deferred. */
#define SV_ENGINE_LAZY_HOLD_NS	(100 * NSEC_PER_MSEC)

/* One execution kthread of the pool. */
struct sv_engine {
	struct task_struct *task;
	spinlock_t lock;		/* users, files, their qps, kicked, asleep */
	struct list_head users;		/* struct sv_engine_user, round robin */
	u32 nusers;
	u32 nfiles;			/* on all its users' lists */
	wait_queue_head_t wait;
	bool kicked;
	/* Since it last slept: kicked by steered frames only (no polling) */
	bool rx_only;
	bool asleep;			/* the doorbell pages ask for a ring */
	bool lazy;			/* ... or a later one (SV_DB_DEFER) */
	bool want_lazy;			/* a ring saw a file that would defer */
	u64 lazy_until;			/* lazy till then, unless files defer */
	u64 idle_ns;			/* its files' longest idle_us */
	u64 move_after;			/* the kthread may change CPU after */
	cpumask_var_t allowed;		/* its CPUs: never widened */
	cpumask_var_t others;		/* the kthread's: allowed but its own */
};

/*
 * A user's share of an engine: the files of one uid attached to it. Made
 * by the user's first file there, charged to the user; it leaves the
 * engine with the user's last file there.
 */
struct sv_engine_user {
	struct kref ref;		/* e->users', and a pass's on it */
	kuid_t uid;
	struct list_head node;		/* on e->users, under e->lock */
	struct list_head files;		/* its files, round robin; e->lock */
	u32 nfiles;			/* under e->lock */
	u32 drivers;			/* its polls driving; e->lock */
	u32 drive_next;			/* where drives look first; e->lock */
	bool skipped;			/* the kthread left drives files; e->lock */
	u64 executed;			/* WQEs the kthread ran for it */
};

/* A file's share of its engine: its QPs, its doorbell page. */
struct sv_engine_file {
	struct kref ref;		/* the file's, and a pass's on it */
	struct sv_engine *e;		/* for the file's whole life */
	struct sv_engine_user *user;	/* its uid's; while attached */
	struct sv_device *sdev;		/* the file's; while !detached */
	struct list_head node;		/* on user->files, under e->lock */
	struct list_head qps;		/* under e->lock */
	u32 nqps;
	/*
	 * The QPs a pass runs, round robin (e->lock): those with work, or
	 * named by a hint or a kick since their last run. Every QP without
	 * a hint slot, and every one while the file posts without hints,
	 * stays on it.
	 */
	struct list_head ready;
	u32 nready;
	struct xarray slots;		/* hint slot -> QP; stores: e->lock */
	bool hints;			/* the library names its posts */
	u64 *hint;			/* the bitmap, in the doorbell mapping */
	struct mutex run_lock;		/* a pass on the file: scratch */
	bool detached;			/* the file is gone; under run_lock */
	bool quiet;			/* the kthread's turn: no rings; e->lock */
	u64 doorbell_wake_ns;		/* a doorbell wakes the kthread after */
	u64 executed;			/* WQEs executed; under run_lock */
	u64 frames;			/* queued frames taken; under run_lock */
	struct sv_mbuf *db_buf;
	struct sv_doorbell *db;
	u64 db_offset;
	void *scratch;			/* one send WQE, copied out */
	u32 scratch_size;
	void *exec_buf;			/* sv_exec_send()'s scratch */
};

/* The pool: sv_nengines of at most max_engines, under sv_engines_lock. */
static DEFINE_MUTEX(sv_engines_lock);
static struct sv_engine **sv_engines;
static u32 sv_nengines;

/* The biggest slot: SGEs, or a TSO header and SGEs (steer/tx.c) */
#define SV_SEND_WQE_MAX	(sizeof(struct sv_send_wqe) + \
			 SV_TSO_SGE_OFFSET(SV_MAX_TSO_HEADER) + \
			 SV_MAX_SGE * sizeof(struct sv_sge))

/* ---- rings ---- */

/* A ring header's room: its own cache lines (the uapi's three). */
#define SV_RING_HDR	ALIGN(sizeof(struct sv_wq_ring), 64)

static u32 sv_wq_entries(u32 entries)
{
	return entries ? roundup_pow_of_two(entries) : 1;
}

/* Point wq at its ring in buf: the header at ring_off, slots at slots. */
static void sv_wq_place(struct sv_wq *wq, struct sv_mbuf *buf, u32 ring_off,
			u32 slots, u32 entries, u32 wqe_size)
{
	struct sv_wq_ring *ring = buf->vaddr + ring_off;

	ring->entries = entries;
	ring->wqe_size = wqe_size;
	ring->wqe_offset = slots - ring_off;
	wq->buf = buf;
	wq->ring = ring;
	wq->ring_off = ring_off;
	wq->wqes = buf->vaddr + slots;
	wq->entries = entries;
	wq->wqe_size = wqe_size;
	wq->cons = 0;
	wq->map_shared = false;
}

int sv_wq_init(struct sv_file *f, struct sv_wq *wq, u32 entries,
	       u32 wqe_size)
{
	struct sv_mbuf *buf;

	entries = sv_wq_entries(entries);
	wqe_size = ALIGN(wqe_size, 64);
	buf = sv_mbuf_alloc_mapped(f, PAGE_SIZE + (size_t)entries * wqe_size,
				   &wq->mmap_offset);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	sv_wq_place(wq, buf, 0, PAGE_SIZE, entries, wqe_size);
	return 0;
}

/*
 * A QP's two rings in one buffer (SV_CREATE_QP_SHARED_RINGS), as mlx5
 * lays a QP out: both headers, then the send slots, then the receive
 * slots; one page for small queues. The send ring owns the mapping's
 * entry; the receive ring holds a reference of its own on the buffer.
 */
static int sv_wq_init_pair(struct sv_file *f, struct sv_wq *sq, u32 sq_n,
			   u32 sq_wqe, struct sv_wq *rq, u32 rq_n, u32 rq_wqe)
{
	size_t sq_slots = 2 * SV_RING_HDR, rq_slots;
	struct sv_mbuf *buf;

	sq_n = sv_wq_entries(sq_n);
	rq_n = sv_wq_entries(rq_n);
	sq_wqe = ALIGN(sq_wqe, 64);
	rq_wqe = ALIGN(rq_wqe, 64);
	rq_slots = sq_slots + (size_t)sq_n * sq_wqe;
	buf = sv_mbuf_alloc_mapped(f, rq_slots + (size_t)rq_n * rq_wqe,
				   &sq->mmap_offset);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	sv_wq_place(sq, buf, 0, sq_slots, sq_n, sq_wqe);
	kref_get(&buf->ref);
	sv_wq_place(rq, buf, SV_RING_HDR, rq_slots, rq_n, rq_wqe);
	rq->mmap_offset = sq->mmap_offset;
	rq->map_shared = true;
	return 0;
}

/**
 * sv_wq_resize - move a ring of its own (an SRQ's) to one of @entries slots
 * @f: the file; f->lock held (the ring's mapping changes)
 * @wq: the ring; its library must not post while this runs
 * @entries: at least the WQEs posted and not yet consumed
 *
 * Those WQEs are copied to the start of the new ring (its cons 0, prod
 * their number) under the consumers' lock, so no consumer sees a half
 * moved ring; the old ring's mapping can no longer be made, ones made
 * keep the old memory. 0, -EINVAL (too few slots, or a prod the kernel
 * cannot trust), or -ENOMEM.
 */
int sv_wq_resize(struct sv_file *f, struct sv_wq *wq, u32 entries)
{
	struct sv_wq_ring *ring;
	struct sv_mbuf *buf, *old;
	u64 offset, old_offset;
	u32 prod, pending, i;

	lockdep_assert_held(&f->lock);
	if (WARN_ON_ONCE(wq->map_shared))
		return -EINVAL;
	entries = sv_wq_entries(entries);
	buf = sv_mbuf_alloc_mapped(f, PAGE_SIZE +
				   (size_t)entries * wq->wqe_size, &offset);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	sv_wq_lock(wq);
	/* Pairs with the library's release store of prod (uapi contract). */
	prod = smp_load_acquire(&wq->ring->prod);
	pending = prod - wq->cons;
	if (pending > wq->entries || pending > entries) {
		sv_wq_unlock(wq);
		sv_mmap_entry_remove(f, offset);
		sv_mbuf_put(buf);
		return -EINVAL;
	}
	ring = buf->vaddr;
	for (i = 0; i < pending; i++)
		memcpy(buf->vaddr + PAGE_SIZE + (size_t)i * wq->wqe_size,
		       wq->wqes + (size_t)((wq->cons + i) & (wq->entries - 1)) *
		       wq->wqe_size, wq->wqe_size);
	ring->prod = pending;
	ring->flags = READ_ONCE(wq->ring->flags);
	old = wq->buf;
	old_offset = wq->mmap_offset;
	sv_wq_place(wq, buf, 0, PAGE_SIZE, entries, wq->wqe_size);
	wq->mmap_offset = offset;
	sv_wq_unlock(wq);
	if (!old->user)
		sv_mmap_entry_remove(f, old_offset);
	sv_mbuf_put(old);
	return 0;
}

/* Userspace can no longer map it (the memory stays until sv_wq_free). */
void sv_wq_fini(struct sv_file *f, struct sv_wq *wq)
{
	if (wq->buf && !wq->map_shared && !wq->buf->user)
		sv_mmap_entry_remove(f, wq->mmap_offset);
}

/* The same ring in nb, which holds a copy of wq's buffer: a reference. */
static void sv_wq_rebase(struct sv_wq *wq, struct sv_mbuf *nb)
{
	size_t slots = (void *)wq->wqes - wq->buf->vaddr;

	kref_get(&nb->ref);
	wq->ring = nb->vaddr + wq->ring_off;
	wq->wqes = nb->vaddr + slots;
	wq->buf = nb;
	wq->mmap_offset = 0;
}

/**
 * sv_wq_move - a new QP's rings into nb (SV_IOC_MOVE_RING)
 * @f: the QP's file, f->lock held
 * @qp: in RESET, its rings in one buffer (or no receive ring)
 * @nb: the user's pinned buffer, as large as that one; the caller's
 *	reference stays the caller's
 *
 * In RESET nothing but this file's ioctls (f->lock) touches the rings:
 * the engine only looks at a QP's rings in RTR and later states, or ERR.
 * Only a QP that has never left RESET: the engine reads the state, then
 * the ring, under its own lock only (sv_file_pending()), so a QP taken
 * back to RESET may still have its old ring read for a moment.
 */
int sv_wq_move(struct sv_file *f, struct sv_qp *qp, struct sv_mbuf *nb)
{
	struct sv_mbuf *old = qp->sq.buf;
	bool rq = qp->rq.buf;
	u64 offset = qp->sq.mmap_offset;

	lockdep_assert_held(&f->lock);
	if (READ_ONCE(qp->attr.qp_state) != SV_QPS_RESET ||
	    READ_ONCE(qp->left_reset) || !old || old->user ||
	    (rq && qp->rq.buf != old))
		return -EINVAL;
	mutex_lock(&qp->sq.lock);
	sv_wq_lock(&qp->rq);
	memcpy(nb->vaddr, old->vaddr, old->size);
	sv_wq_rebase(&qp->sq, nb);
	if (rq)
		sv_wq_rebase(&qp->rq, nb);
	sv_wq_unlock(&qp->rq);
	mutex_unlock(&qp->sq.lock);
	sv_mmap_entry_remove(f, offset);
	sv_mbuf_put(old);
	if (rq)
		sv_mbuf_put(old);
	return 0;
}

/**
 * sv_srq_move - a new SRQ's ring into nb (SV_IOC_MOVE_RING)
 * @f: the SRQ's file, f->lock held
 * @srq: no QP of this file uses it (EBUSY); an XRC SRQ's TGT QPs of
 *	other files deliver under its ring's lock, which the move holds
 * @nb: the user's pinned buffer, as large as the ring's; the caller's
 *	reference stays the caller's
 */
int sv_srq_move(struct sv_file *f, struct sv_srq *srq, struct sv_mbuf *nb)
{
	lockdep_assert_held(&f->lock);
	if (atomic_read(&srq->uobj.usecnt))
		return -EBUSY;
	return sv_wq_move_one(f, &srq->rq, nb);
}

/**
 * sv_wq_move_one - a ring alone in its buffer into nb, under its lock
 * @f: its file, f->lock held
 * @wq: the ring: whoever else uses it holds its lock meanwhile
 * @nb: the user's pinned buffer, as large as wq's; the caller's
 *	reference stays the caller's
 */
int sv_wq_move_one(struct sv_file *f, struct sv_wq *wq, struct sv_mbuf *nb)
{
	struct sv_mbuf *old = wq->buf;
	u64 offset = wq->mmap_offset;

	if (old->user || wq->map_shared)
		return -EINVAL;
	sv_wq_lock(wq);
	memcpy(nb->vaddr, old->vaddr, old->size);
	sv_wq_rebase(wq, nb);
	sv_wq_unlock(wq);
	sv_mmap_entry_remove(f, offset);
	sv_mbuf_put(old);
	return 0;
}

void sv_wq_free(struct sv_wq *wq)
{
	if (wq->buf)
		sv_mbuf_put(wq->buf);
	wq->buf = NULL;
}

/* ---- the engine ---- */

static bool sv_wq_pending(struct sv_wq *wq)
{
	return wq->ring && READ_ONCE(wq->ring->prod) != wq->cons;
}

/* Flush a ring: every posted WQE completes with WR_FLUSH_ERR. */
static bool sv_wq_flush(struct sv_wq *wq, struct sv_uobj *cq, u32 qpn,
			bool send)
{
	/* Pairs with the library's release store of prod (uapi contract). */
	u32 prod = smp_load_acquire(&wq->ring->prod);
	bool did = false;
	void *slot;
	u64 wr_id;
	u32 op;

	if (prod - wq->cons > wq->entries)
		wq->cons = prod - wq->entries;	/* bogus: flush what fits */
	while (wq->cons != prod) {
		slot = wq->wqes +
		       (size_t)(wq->cons & (wq->entries - 1)) * wq->wqe_size;
		if (send) {
			struct sv_send_wqe *w = slot;

			switch (READ_ONCE(w->opcode)) {
			case SV_WR_RDMA_WRITE:
			case SV_WR_RDMA_WRITE_WITH_IMM:
				op = 1;
				break;
			case SV_WR_RDMA_READ:
				op = 2;
				break;
			case SV_WR_ATOMIC_CMP_AND_SWP:
				op = 3;
				break;
			case SV_WR_ATOMIC_FETCH_AND_ADD:
				op = 4;
				break;
			case SV_WR_ATOMIC_WRITE:
				op = 9;	/* IBV_WC_ATOMIC_WRITE */
				break;
			case SV_WR_FLUSH:
				op = 8;	/* IBV_WC_FLUSH */
				break;
			case SV_WR_TSO:
				op = 7;
				break;
			default:
				op = 0;
			}
		} else {
			op = 128;
		}
		wr_id = READ_ONCE(*(u64 *)slot);
		wq->cons++;
		/* The slot is the library's again before the CQE shows. */
		smp_store_release(&wq->ring->cons, wq->cons);
		sv_dp_push(cq, wr_id, SV_WC_STATUS_FLUSH, op, 0, qpn, true);
		did = true;
	}
	/* Hand back the slots (also those of a bogus prod we skipped). */
	smp_store_release(&wq->ring->cons, wq->cons);
	WRITE_ONCE(wq->ring->flags, SV_WQ_RING_ERR);
	return did;
}

static u32 sv_wc_opcode(u32 wr_op)
{
	switch (wr_op) {
	case SV_WR_RDMA_WRITE:
	case SV_WR_RDMA_WRITE_WITH_IMM:
		return 1;
	case SV_WR_RDMA_READ:
		return 2;
	case SV_WR_ATOMIC_CMP_AND_SWP:
		return 3;
	case SV_WR_ATOMIC_FETCH_AND_ADD:
		return 4;
	case SV_WR_ATOMIC_WRITE:
		return 9;	/* IBV_WC_ATOMIC_WRITE */
	case SV_WR_FLUSH:
		return 8;	/* IBV_WC_FLUSH */
	case SV_WR_BIND_MW:
		return 5;	/* IBV_WC_BIND_MW */
	case SV_WR_LOCAL_INV:
		return 6;	/* IBV_WC_LOCAL_INV */
	case SV_WR_TSO:
		return 7;	/* IBV_WC_TSO */
	case SV_WR_UMR:
		return 135;	/* IBV_WC_DRIVER1: MLX5DV_WC_UMR */
	default:
		return 0;
	}
}

static void sv_qp_reset_retries(struct sv_qp *qp)
{
	spin_lock_bh(&qp->lock);
	qp->rnr_left = qp->attr.rnr_retry;
	qp->retry_left = qp->attr.retry_cnt;
	spin_unlock_bh(&qp->lock);
	qp->waiting = false;
	qp->retried = false;
}

/* Flush a QP in ERR. Under qp->sq.lock. */
static bool sv_engine_flush(struct sv_qp *qp)
{
	bool did;

	/* The WQEs in flight on the wire are flushed with the rest. */
	sv_wire_rc_forget(qp);
	did = sv_wq_flush(&qp->sq, qp->send_cq, qp->qpn, true);
	WRITE_ONCE(qp->tm_fin_pending, false);	/* in ERR: no FIN */
	if (sv_steer_qp_pending(qp)) {
		sv_steer_qp_purge(qp);
		did = true;
	}
	/* An XRC INI QP has no receive CQ: whatever its ring says, no WQE. */
	if (qp->rq.ring && qp->recv_cq) {
		sv_wq_lock(&qp->rq);
		did |= sv_wq_flush(&qp->rq, qp->recv_cq, qp->qpn, false);
		sv_wq_unlock(&qp->rq);
	}
	if (qp->srq && !qp->last_wqe_sent) {
		qp->last_wqe_sent = true;
		sv_async_event(qp->uobj.file, SV_EVENT_QP_LAST_WQE_REACHED,
			       qp->user_handle, &qp->events);
	}
	return did;
}

/* The bytes a (copied-out) send WQE moves, for the per-pass budget. */
static u64 sv_wqe_bytes(const struct sv_send_wqe *w, u32 size)
{
	const struct sv_sge *sge = (const struct sv_sge *)(w + 1);
	u32 i, n = min_t(u32, w->num_sge,
			 (size - sizeof(*w)) / sizeof(*sge));
	u64 len = 0;

	if (w->opcode == SV_WR_TSO)
		return sv_tx_wqe_bytes(w, size);
	if (w->send_flags & SV_SEND_INLINE)
		return w->inline_len;
	for (i = 0; i < n; i++)
		len += sge[i].length;
	return len;
}

/*
 * A send completion's byte_len: what an RDMA READ read and an atomic's 8
 * bytes, as ibv_poll_cq(3) says the send queue reports them (and an
 * inline send's length, as before).
 */
static u32 sv_wc_byte_len(const struct sv_send_wqe *w, u32 size)
{
	switch (w->opcode) {
	case SV_WR_RDMA_READ:
		return sv_wqe_bytes(w, size);
	case SV_WR_ATOMIC_CMP_AND_SWP:
	case SV_WR_ATOMIC_FETCH_AND_ADD:
		return 8;
	default:
		return w->send_flags & SV_SEND_INLINE ? w->inline_len : 0;
	}
}

/**
 * sv_sq_complete - the head WQE of qp's send queue is done
 * @qp: its engine holds qp->sq.lock
 * @w: the WQE, copied out of its slot
 * @size: the bytes of it copied
 * @status: its completion's status
 * @always: a completion even if it is not signaled (an error, a flush)
 * @qp_err: the QP goes to ERR with it
 *
 * Its slot is the library's again, then its completion goes out.
 */
void sv_sq_complete(struct sv_qp *qp, const struct sv_send_wqe *w, u32 size,
		    u32 status, bool always, bool qp_err)
{
	struct sv_wq *sq = &qp->sq;

	lockdep_assert_held(&sq->lock);
	/*
	 * The slot is free before its completion is visible: an
	 * application that saw the CQE may reuse the slot at once.
	 */
	sq->cons++;
	/* Pairs with the library's acquire load of cons. */
	smp_store_release(&sq->ring->cons, sq->cons);
	/*
	 * In ERR before the error completion shows: an application that
	 * reacts to it with a modify to RESET must not find its new state
	 * overwritten by this error afterwards.
	 */
	if (qp_err)
		sv_qp_to_err(qp);
	if (always || (w->send_flags & SV_SEND_SIGNALED) ||
	    (qp->flags & SV_CREATE_QP_SQ_SIG_ALL))
		sv_dp_push(qp->send_cq, w->wr_id, status,
			   sv_wc_opcode(w->opcode),
			   status ? 0 : sv_wc_byte_len(w, size), qp->qpn,
			   false);
	if (qp->retried)
		sv_qp_reset_retries(qp);
}

/*
 * Execute qp's send queue: at most *wqes WQEs (and SV_ENGINE_BUDGET or
 * qbudget) and about *bytes bytes (and SV_ENGINE_BYTES); both are charged
 * what was done. True if anything happened. Under ef->run_lock.
 */
static bool sv_engine_run_qp(struct sv_engine_file *ef, struct sv_qp *qp,
			     u32 qbudget, u32 *wqes, u64 *bytes, u64 *wake)
{
	struct sv_wq *sq = &qp->sq;
	struct sv_send_wqe *w = ef->scratch;
	u64 len = 0, max_len = min_t(u64, *bytes, SV_ENGINE_BYTES), wbytes;
	u32 budget = min(qbudget, *wqes);
	enum sv_exec_result res;
	bool did = false, flushed, qp_err;
	u32 prod, state, status, n;

	lockdep_assert_held(&ef->run_lock);
	mutex_lock(&sq->lock);
	if (qp->dead)
		goto out;
	spin_lock_bh(&qp->lock);
	state = qp->attr.qp_state;
	spin_unlock_bh(&qp->lock);
	if (state == SV_QPS_ERR) {
		did = sv_engine_flush(qp);
		goto out;
	}
	/* Steered frames into the receive queue (steer/rx.c). */
	if (state >= SV_QPS_RTR && state <= SV_QPS_SQE &&
	    sv_steer_qp_pending(qp)) {
		n = sv_steer_qp_drain(qp, ef->exec_buf, budget);
		ef->frames += n;
		did = n;
	}
	/*
	 * RC on the wire: WQEs in flight, completed as answers come (in SQD
	 * too, until none is left; no new one starts there).
	 */
	if ((state == SV_QPS_RTS || state == SV_QPS_SQD) && sv_wire_rc_on(qp)) {
		did |= sv_wire_rc_run(qp, w, ef->scratch_size, ef->exec_buf,
				      budget, wqes, bytes, wake,
				      &ef->executed);
		goto out;
	}
	if (state != SV_QPS_RTS)
		goto out;
	for (n = 0; n < budget; n++) {
		if (qp->waiting) {
			if (ktime_get_ns() < qp->wait_until) {
				*wake = min(*wake, qp->wait_until);
				break;
			}
			qp->waiting = false;
		}
		/* A rendezvous's FIN goes before the next WQE (tm.c). */
		if (qp->tm_fin_pending) {
			did = true;
			res = sv_exec_tm_fin(qp, ef->exec_buf, &status);
			if (res == SV_EXEC_RETRY) {
				qp->waiting = true;
				*wake = min(*wake, qp->wait_until);
				break;
			}
			if (qp->retried)
				sv_qp_reset_retries(qp);
			if (res == SV_EXEC_FATAL) {
				sv_qp_to_err(qp);
				n++;
				break;
			}
			continue;
		}
		/* Pairs with the library's release store of prod. */
		prod = smp_load_acquire(&sq->ring->prod);
		if (prod == sq->cons)
			break;
		if (prod - sq->cons > sq->entries) {
			sv_qp_to_err(qp);
			did = true;
			break;
		}
		memcpy(w, sq->wqes +
		       (size_t)(sq->cons & (sq->entries - 1)) * sq->wqe_size,
		       min(sq->wqe_size, ef->scratch_size));
		/* A paced QP in debt waits, its WR not started (pace.c). */
		if (sv_pace_held(qp, &qp->wait_until)) {
			qp->waiting = true;
			*wake = min(*wake, qp->wait_until);
			break;
		}
		/* A DCI stream in error flushes its work (dc.c). */
		flushed = sv_dci_stream_blocked(qp, w);
		if (flushed) {
			res = SV_EXEC_DONE;
			status = SV_WC_STATUS_FLUSH;
		} else {
			res = sv_exec_send(qp, w, ef->exec_buf, &status);
		}
		did = true;
		ef->executed++;
		if (res == SV_EXEC_RETRY) {
			qp->waiting = true;
			*wake = min(*wake, qp->wait_until);
			break;
		}
		wbytes = sv_wqe_bytes(w, ef->scratch_size);
		sv_pace_charge(qp, wbytes);
		qp_err = res == SV_EXEC_FATAL && sv_dci_stream_failed(qp, w);
		sv_sq_complete(qp, w, ef->scratch_size, status,
			       res == SV_EXEC_FATAL || flushed, qp_err);
		if (qp_err) {
			n++;
			break;
		}
		len += wbytes;
		if (len >= max_len) {
			n++;
			break;
		}
	}
	*wqes -= min(n, *wqes);
	*bytes -= min(len, *bytes);
out:
	mutex_unlock(&sq->lock);
	return did;
}

/* Frames queued for qp that a pass would take (or flush) now */
static bool sv_qp_frames_due(struct sv_qp *qp, u32 state)
{
	return (state == SV_QPS_ERR ||
		(state >= SV_QPS_RTR && state <= SV_QPS_SQE)) &&
	       sv_steer_qp_pending(qp);
}

/* Is there anything for a pass to do in qp right now? */
static bool sv_qp_due(struct sv_qp *qp)
{
	u32 state = READ_ONCE(qp->attr.qp_state);

	if (state == SV_QPS_ERR &&
	    (sv_wq_pending(&qp->sq) || sv_wq_pending(&qp->rq)))
		return true;
	if (state == SV_QPS_RTS && !qp->waiting &&
	    (sv_wq_pending(&qp->sq) || READ_ONCE(qp->tm_fin_pending)))
		return true;
	return sv_qp_frames_due(qp, state);
}

/* qp goes on the ready list, if on its file's share. Under e->lock. */
static void sv_qp_ready(struct sv_engine_file *ef, struct sv_qp *qp)
{
	lockdep_assert_held(&ef->e->lock);
	if (list_empty(&qp->ready_node) && !list_empty(&qp->engine_node)) {
		list_add_tail(&qp->ready_node, &ef->ready);
		ef->nready++;
	}
}

static void sv_qp_unready(struct sv_engine_file *ef, struct sv_qp *qp)
{
	lockdep_assert_held(&ef->e->lock);
	if (!list_empty(&qp->ready_node)) {
		list_del_init(&qp->ready_node);
		ef->nready--;
	}
}

/*
 * The QPs the library named (uapi: SV_MAP_DOORBELL_HINTS) go on the
 * ready list: each summary word taken, then each bitmap word it names.
 * The words are the user's: a bit may name no QP. Under e->lock.
 */
static void sv_file_take_hints(struct sv_engine_file *ef)
{
	u64 *sum = ef->db->hint_sum, s, w;
	unsigned int i, b, k;
	struct sv_qp *qp;

	lockdep_assert_held(&ef->e->lock);
	for (i = 0; i < ARRAY_SIZE(ef->db->hint_sum); i++) {
		if (!READ_ONCE(sum[i]))
			continue;
		for (s = xchg(&sum[i], 0); s; s &= s - 1) {
			b = i * 64 + __ffs64(s);
			for (w = xchg(&ef->hint[b], 0); w; w &= w - 1) {
				k = b * 64 + __ffs64(w);
				qp = xa_load(&ef->slots, k);
				if (qp)
					sv_qp_ready(ef, qp);
			}
		}
	}
}

/* Has the library named a QP the pass has not taken yet? */
static bool sv_file_hinted(struct sv_engine_file *ef)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ef->db->hint_sum); i++)
		if (READ_ONCE(ef->db->hint_sum[i]))
			return true;
	return false;
}

/*
 * After qp's run: it leaves the ready list once it has nothing to do, no
 * back-off to wake for, and a slot that names its posts. What gives it
 * work later puts it back: a hint, or a kick (sv_engine_kick_qp()), which
 * come after the work they announce, so a run that missed the work is
 * followed by one that sees it. Under e->lock.
 */
static void sv_qp_settle(struct sv_engine_file *ef, struct sv_qp *qp,
			 bool backoff)
{
	lockdep_assert_held(&ef->e->lock);
	if (backoff || !READ_ONCE(ef->hints) || qp->db_slot == SV_DB_NO_SLOT ||
	    sv_qp_due(qp))
		return;
	sv_qp_unready(ef, qp);
}

/*
 * One pass over a file's ready QPs, round robin, within *wqes and *bytes
 * (the user's budget, or the doorbell's), which are charged what was
 * done: a QP whose turn did not come is first in the next pass. Under
 * ef->run_lock: by the engine or by the file's doorbell.
 */
static bool sv_file_pass(struct sv_engine_file *ef, u32 qbudget, u32 *wqes,
			 u64 *bytes, u64 *wake)
{
	struct sv_engine *e = ef->e;
	struct sv_qp *qp;
	bool did = false;
	u32 i, n;
	u64 qwake;

	lockdep_assert_held(&ef->run_lock);
	spin_lock_bh(&e->lock);
	if (READ_ONCE(ef->hints))
		sv_file_take_hints(ef);
	n = ef->nready;
	spin_unlock_bh(&e->lock);
	for (i = 0; i < n && *wqes && *bytes; i++) {
		spin_lock_bh(&e->lock);
		if (list_empty(&ef->ready)) {
			spin_unlock_bh(&e->lock);
			break;
		}
		qp = list_first_entry(&ef->ready, struct sv_qp, ready_node);
		list_move_tail(&qp->ready_node, &ef->ready);
		kref_get(&qp->uobj.ref);
		spin_unlock_bh(&e->lock);
		qwake = SV_NO_WAKE;
		did |= sv_engine_run_qp(ef, qp, qbudget, wqes, bytes, &qwake);
		*wake = min(*wake, qwake);
		spin_lock_bh(&e->lock);
		sv_qp_settle(ef, qp, qwake != SV_NO_WAKE);
		spin_unlock_bh(&e->lock);
		sv_qp_put(qp);
	}
	sv_stat_add(ef->sdev, SV_STAT_QP_RUNS, i);
	/* The MRs the pass kept between WQEs: a closer may be waiting. */
	sv_exec_buf_drop(ef->exec_buf);
	return did;
}

/* Is there anything to do in the file right now? Under e->lock. */
static bool sv_file_pending(struct sv_engine_file *ef)
{
	struct sv_qp *qp;

	lockdep_assert_held(&ef->e->lock);
	if (READ_ONCE(ef->hints) && sv_file_hinted(ef))
		return true;
	list_for_each_entry(qp, &ef->ready, ready_node)
		if (sv_qp_due(qp))
			return true;
	return false;
}

static bool sv_file_has_work(struct sv_engine_file *ef)
{
	bool pending;

	spin_lock_bh(&ef->e->lock);
	pending = sv_file_pending(ef);
	spin_unlock_bh(&ef->e->lock);
	return pending;
}

/* Frames due in one of the file's QPs? (They are on the ready list.) */
static bool sv_file_has_frames(struct sv_engine_file *ef)
{
	struct sv_qp *qp;
	bool pending = false;

	spin_lock_bh(&ef->e->lock);
	list_for_each_entry(qp, &ef->ready, ready_node)
		if (sv_qp_frames_due(qp, READ_ONCE(qp->attr.qp_state))) {
			pending = true;
			break;
		}
	spin_unlock_bh(&ef->e->lock);
	return pending;
}

/*
 * A drive visits a file only if its library posted since (db->posted,
 * set after a post's prod, cleared before the pass), or frames wait
 * (rx): what else makes work (a state change, a back-off's end) wakes
 * the kthread.
 */
static bool sv_drive_hinted(struct sv_engine_file *ef)
{
	return READ_ONCE(ef->db->posted) || READ_ONCE(ef->db->rx);
}

/*
 * While a user's poll drives, the files it will visit are the drive's:
 * the kthread leaves them (and notes it: the drive wakes it as it leaves,
 * for their back-offs). Under e->lock.
 */
static bool sv_drive_takes(struct sv_engine_user *u, struct sv_engine_file *ef)
{
	lockdep_assert_held(&ef->e->lock);
	return u->drivers && sv_drive_hinted(ef);
}

/*
 * ... in any of the user's files on e, but those a running drive takes?
 * Under e->lock.
 */
static bool sv_user_pending(struct sv_engine *e, struct sv_engine_user *u)
{
	struct sv_engine_file *ef;

	lockdep_assert_held(&e->lock);
	list_for_each_entry(ef, &u->files, node)
		if (!sv_drive_takes(u, ef) && sv_file_pending(ef))
			return true;
	return false;
}

/* ... in any of the engine's files? Under e->lock. */
static bool sv_engine_pending(struct sv_engine *e)
{
	struct sv_engine_user *u;

	lockdep_assert_held(&e->lock);
	list_for_each_entry(u, &e->users, node)
		if (sv_user_pending(e, u))
			return true;
	return false;
}

static void sv_engine_user_release(struct kref *ref)
{
	kfree(container_of(ref, struct sv_engine_user, ref));
}

static void sv_engine_file_release(struct kref *ref)
{
	struct sv_engine_file *ef = container_of(ref, struct sv_engine_file,
						 ref);

	sv_mbuf_put(ef->db_buf);
	sv_exec_buf_drop(ef->exec_buf);
	kfree(ef->exec_buf);
	kfree(ef->scratch);
	mutex_destroy(&ef->run_lock);
	xa_destroy(&ef->slots);
	kfree(ef);
}

/*
 * What one pass of the kthread (or of a drive: driver) found: its files'
 * longest idle time, and whether it executed send WQEs (a poster may
 * follow them up).
 */
struct sv_pass {
	u64 wake;
	u64 idle_ns;
	bool seen;
	bool sent;
	bool driver;
	bool busy;	/* a drive found a file's pass taken, with work */
};

/*
 * Under ef->run_lock, before a drive's pass: the hint is taken. A drive
 * that holds the run_lock always makes the pass (the kthread, finding
 * the lock taken, skipped the file: its back-offs are the drive's to
 * report).
 */
static void sv_drive_take_hint(struct sv_engine_file *ef)
{
	WRITE_ONCE(ef->db->posted, 0);
	/* The hint's clear before the pass reads prod: pairs with the
	 * library's release of prod before its store of posted.
	 */
	smp_mb();
}

/* A file's turn in a user's pass. Under ef->run_lock. */
static bool sv_user_file_turn(struct sv_engine_user *u,
			      struct sv_engine_file *ef, struct sv_pass *p,
			      u32 *wqes, u64 *bytes)
{
	u64 executed = ef->executed;
	bool did;

	if (ef->detached)
		return false;
	if (p->driver)
		sv_drive_take_hint(ef);
	did = sv_file_pass(ef, SV_ENGINE_BUDGET, wqes, bytes, &p->wake);
	executed = ef->executed - executed;
	if (p->driver)
		sv_stat_add(ef->sdev, SV_STAT_DRIVE_WQES, executed);
	else
		WRITE_ONCE(u->executed, u->executed + executed);
	p->sent |= executed != 0;
	p->idle_ns = max_t(u64, p->idle_ns,
			   (u64)READ_ONCE(ef->sdev->idle_us) * NSEC_PER_USEC);
	p->seen = true;
	return did;
}

/*
 * A file needs a ring while the kthread has no CPU of its own, unless one
 * of its user's polls drives or the kthread is in the file's turn (a ring
 * could not take the run_lock then; the kthread's look after the turn
 * sees what was posted meanwhile). Under e->lock.
 */
static u32 sv_file_db_flags(struct sv_engine *e, struct sv_engine_user *u,
			    struct sv_engine_file *ef)
{
	if (!e->asleep || u->drivers || ef->quiet)
		return 0;
	/* Deferred posts are found by their hint bits. */
	return SV_DB_NEED_WAKEUP | (e->lazy && ef->hints ? SV_DB_DEFER : 0);
}

static void sv_user_set_flags(struct sv_engine *e, struct sv_engine_user *u)
{
	struct sv_engine_file *ef;

	lockdep_assert_held(&e->lock);
	list_for_each_entry(ef, &u->files, node)
		WRITE_ONCE(ef->db->flags, sv_file_db_flags(e, u, ef));
}

/*
 * The kthread's turn in a file. On a shared CPU (e->asleep: posts ring)
 * the file needs no ring while the kthread holds its run_lock: a ring
 * could not take it. After the turn the flag is back, then a full
 * barrier and a look at the queues: a post made meanwhile is either seen
 * here (the turn counts as work: another pass follows) or sees the flag
 * and rings. Only the kthread writes e->asleep.
 */
static bool sv_kthread_file_turn(struct sv_engine *e, struct sv_engine_user *u,
				 struct sv_engine_file *ef, struct sv_pass *p,
				 u32 *wqes, u64 *bytes)
{
	bool did, pending;

	if (!READ_ONCE(e->asleep))
		return sv_user_file_turn(u, ef, p, wqes, bytes);
	spin_lock_bh(&e->lock);
	ef->quiet = true;
	WRITE_ONCE(ef->db->flags, sv_file_db_flags(e, u, ef));
	spin_unlock_bh(&e->lock);
	did = sv_user_file_turn(u, ef, p, wqes, bytes);
	spin_lock_bh(&e->lock);
	ef->quiet = false;
	WRITE_ONCE(ef->db->flags, sv_file_db_flags(e, u, ef));
	/* Pairs with the library's fence between prod and the flags. */
	smp_mb();
	pending = sv_file_pending(ef);
	spin_unlock_bh(&e->lock);
	return pending || did;
}

/*
 * A user's turn in a pass: its files round robin, within one budget for
 * them all (*budget WQEs and *bytes, charged what was done; a file whose
 * turn did not come is first in the user's next turn); again, at most
 * SV_USER_ROUNDS times, while the budget lasts and the last round did
 * work. A file whose doorbell or a drive is running a pass is skipped:
 * the doorbell wakes the engine if it leaves work, the drive when it
 * leaves (work, or a QP backing off). So is a file a running drive of the
 * user takes (sv_drive_takes()).
 */
static bool sv_user_pass(struct sv_engine *e, struct sv_engine_user *u,
			 struct sv_pass *p, u32 *budget, u64 *bytes)
{
	u32 wqes = *budget, before, round, i, n;
	struct sv_engine_file *ef;
	bool did = false;

	for (round = 0; round < SV_USER_ROUNDS && wqes && *bytes; round++) {
		before = wqes;
		spin_lock_bh(&e->lock);
		n = u->nfiles;
		spin_unlock_bh(&e->lock);
		for (i = 0; i < n && wqes && *bytes; i++) {
			spin_lock_bh(&e->lock);
			if (list_empty(&u->files)) {
				spin_unlock_bh(&e->lock);
				goto out;
			}
			ef = list_first_entry(&u->files, struct sv_engine_file,
					      node);
			list_move_tail(&ef->node, &u->files);
			if (sv_drive_takes(u, ef)) {
				u->skipped = true;
				spin_unlock_bh(&e->lock);
				continue;
			}
			kref_get(&ef->ref);
			spin_unlock_bh(&e->lock);
			if (mutex_trylock(&ef->run_lock)) {
				did |= sv_kthread_file_turn(e, u, ef, p, &wqes,
							    bytes);
				mutex_unlock(&ef->run_lock);
			}
			kref_put(&ef->ref, sv_engine_file_release);
		}
		if (wqes == before)
			break;
	}
out:
	*budget = wqes;
	return did;
}

/*
 * A drive's turn in a user's share: one look at its files under e->lock
 * takes those with a hint, at most SV_DRIVE_FILES, from where the user's
 * last drive turn stopped; then each gets a pass within the budget. The
 * list is left as it is: the kthread's rounds go over it by moving each
 * file they visit to its end, so a file a drive moved under them would be
 * skipped, its back-offs unseen. A file the drive finds taken is under
 * way elsewhere (busy).
 */
static bool sv_drive_user_pass(struct sv_engine *e, struct sv_engine_user *u,
			       struct sv_pass *p, u32 *budget, u64 *bytes)
{
	struct sv_engine_file *ef, *files[SV_DRIVE_FILES];
	struct sv_engine_file *wrap[SV_DRIVE_FILES];
	u32 wqes = *budget, start, n = 0, nwrap = 0, h = 0, i;
	bool did = false;

	spin_lock_bh(&e->lock);
	start = u->drive_next;
	list_for_each_entry(ef, &u->files, node) {
		if (!sv_drive_hinted(ef))
			continue;
		if (h++ >= start) {
			if (n < SV_DRIVE_FILES)
				files[n++] = ef;
		} else if (nwrap < SV_DRIVE_FILES) {
			wrap[nwrap++] = ef;
		}
	}
	for (i = 0; i < nwrap && n < SV_DRIVE_FILES; i++)
		files[n++] = wrap[i];
	/* Fewer hinted files than start: this look began at the first. */
	if (start >= h)
		start = 0;
	u->drive_next = h ? (start + n) % h : 0;
	for (i = 0; i < n; i++)
		kref_get(&files[i]->ref);
	spin_unlock_bh(&e->lock);

	for (i = 0; i < n; i++) {
		ef = files[i];
		/* Past the budget, a file keeps its hint for the next look. */
		if (wqes && *bytes) {
			if (mutex_trylock(&ef->run_lock)) {
				did |= sv_user_file_turn(u, ef, p, &wqes,
							 bytes);
				mutex_unlock(&ef->run_lock);
			} else {
				p->busy = true;
			}
		}
		kref_put(&ef->ref, sv_engine_file_release);
	}
	*budget = wqes;
	return did;
}

/*
 * One pass of the kthread over its users, round robin, each within its
 * budget: a user with many files takes no more of the engine than one
 * with a single busy file.
 */
static bool sv_engine_pass(struct sv_engine *e, u64 *wake, bool *sent)
{
	struct sv_pass p = { .wake = *wake };
	struct sv_engine_user *u;
	bool did = false;
	u64 bytes;
	u32 i, n, wqes;

	spin_lock_bh(&e->lock);
	n = e->nusers;
	spin_unlock_bh(&e->lock);
	for (i = 0; i < n; i++) {
		spin_lock_bh(&e->lock);
		if (list_empty(&e->users)) {
			spin_unlock_bh(&e->lock);
			break;
		}
		u = list_first_entry(&e->users, struct sv_engine_user, node);
		list_move_tail(&u->node, &e->users);
		kref_get(&u->ref);
		spin_unlock_bh(&e->lock);
		wqes = SV_FILE_BUDGET;
		bytes = SV_FILE_BYTES;
		did |= sv_user_pass(e, u, &p, &wqes, &bytes);
		kref_put(&u->ref, sv_engine_user_release);
	}
	if (p.seen || !n)
		WRITE_ONCE(e->idle_ns, p.idle_ns);
	*wake = p.wake;
	*sent = p.sent;
	return did;
}

/*
 * Set (or clear) the need-wakeup flag in the doorbell page of each file,
 * and the defer flag with it while lazy.
 */
static void sv_engine_set_asleep(struct sv_engine *e, bool asleep, bool lazy)
{
	struct sv_engine_user *u;

	spin_lock_bh(&e->lock);
	WRITE_ONCE(e->asleep, asleep);
	WRITE_ONCE(e->lazy, lazy);
	list_for_each_entry(u, &e->users, node)
		sv_user_set_flags(e, u);
	spin_unlock_bh(&e->lock);
}

static bool sv_engine_woken(struct sv_engine *e)
{
	return READ_ONCE(e->kicked) || kthread_should_stop();
}

/*
 * The kthread shares its CPU: try another of its allowed ones, at most
 * every 10 ms. A wakeup tends to place the kthread on the waker's CPU
 * (the poster's, when a doorbell wakes it) and to keep it there, even
 * with a CPU idle; once moved, later wakeups find it where it was. Its
 * mask is narrowed for the move and set back after: never wider than the
 * allowed one, which follows the admin's changes (header comment). True
 * if it now has the CPU to itself.
 */
static bool sv_engine_move(struct sv_engine *e)
{
	u64 now = ktime_get_ns();
	int ret;

	if (now < e->move_after)
		return false;
	e->move_after = now + 10 * NSEC_PER_MSEC;
	/* Not our own narrowed mask (we set it back): the admin's. */
	if (!cpumask_equal(current->cpus_ptr, e->allowed))
		cpumask_copy(e->allowed, current->cpus_ptr);
	cpumask_and(e->others, e->allowed, cpu_online_mask);
	cpumask_clear_cpu(raw_smp_processor_id(), e->others);
	if (cpumask_empty(e->others))
		return false;
	ret = set_cpus_allowed_ptr(current, e->others);
	set_cpus_allowed_ptr(current, e->allowed);
	return !ret && single_task_running();
}

/*
 * The doorbell pages ask for a ring unless the kthread has its CPU to
 * itself. A kthread that shares its CPU is off it for whole time slices
 * (and, under voluntary preemption, may leave it at any mutex or
 * allocation in a pass): a post that did not ring would wait for it,
 * unannounced, while its poster spins for the completion. With more busy
 * processes than CPUs that is the normal case: then every post rings and
 * runs its own file's share (sv_ring_doorbell()), and the kthread takes
 * what is left.
 */
static void sv_engine_share(struct sv_engine *e)
{
	bool shared = need_resched() || !single_task_running();
	bool lazy = e->lazy;

	/* A ring found a file that would defer: let it, from now. */
	if (!lazy && READ_ONCE(e->want_lazy)) {
		WRITE_ONCE(e->want_lazy, false);
		e->lazy_until = ktime_get_ns() + SV_ENGINE_LAZY_HOLD_NS;
		lazy = true;
	}
	/* Only the kthread writes e->asleep and e->lazy. */
	if (shared != e->asleep || lazy != e->lazy)
		sv_engine_set_asleep(e, shared, lazy);
}

/*
 * Going to sleep: lazy (sleeping SV_ENGINE_LAZY_NS at most, its files
 * told SV_DB_DEFER) while files defer their rings, and for
 * SV_ENGINE_LAZY_HOLD_NS after. Each file's defer is taken as looked at.
 */
static bool sv_engine_lazy(struct sv_engine *e, u64 now)
{
	struct sv_engine_file *ef;
	struct sv_engine_user *u;
	bool defer = READ_ONCE(e->want_lazy);

	WRITE_ONCE(e->want_lazy, false);
	spin_lock_bh(&e->lock);
	list_for_each_entry(u, &e->users, node) {
		list_for_each_entry(ef, &u->files, node) {
			if (!READ_ONCE(ef->db->defer))
				continue;
			WRITE_ONCE(ef->db->defer, 0);
			defer = true;
		}
	}
	spin_unlock_bh(&e->lock);
	if (defer)
		e->lazy_until = now + SV_ENGINE_LAZY_HOLD_NS;
	return now < e->lazy_until;
}

static void sv_engine_yield(struct sv_engine *e)
{
	sv_engine_share(e);
	cond_resched();
}

/*
 * Keep polling with nothing to do? Only within idle_us of the last work
 * and only while the CPU is the kthread's alone: a poller that shares its
 * CPU delays the other task and is itself off the CPU while the library
 * believes it polls. A task that wakes up here (a kworker, say) gets the
 * CPU at once, with the posters ringing meanwhile; if it is gone when the
 * kthread is back, polling goes on.
 */
static bool sv_engine_keep_polling(struct sv_engine *e, u64 idle_start)
{
	if (ktime_get_ns() - idle_start >= READ_ONCE(e->idle_ns))
		return false;
	if (need_resched())
		sv_engine_yield(e);
	if (!single_task_running() && !sv_engine_move(e))
		return false;
	sv_engine_share(e);
	return true;
}

/* Housekeeping CPUs only, unless that leaves none of the kthreadd's. */
static void sv_engine_init_affinity(struct sv_engine *e)
{
	cpumask_copy(e->allowed, current->cpus_ptr);
	if (cpumask_and(e->others, e->allowed,
			housekeeping_cpumask(HK_TYPE_KTHREAD)) &&
	    !cpumask_equal(e->others, e->allowed) &&
	    !set_cpus_allowed_ptr(current, e->others))
		cpumask_copy(e->allowed, e->others);
}

static int sv_engine_thread(void *arg)
{
	struct sv_engine *e = arg;
	u64 idle_start = ktime_get_ns(), wake, now;
	bool pending, sent, rx_only, lazy;

	sv_engine_init_affinity(e);
	while (!kthread_should_stop()) {
		wake = SV_NO_WAKE;
		if (sv_engine_pass(e, &wake, &sent)) {
			/*
			 * Steered frames alone start no polling window:
			 * they kick the engine themselves
			 * (sv_engine_kick_rx()).
			 */
			if (sent || idle_start)
				idle_start = ktime_get_ns();
			sv_engine_yield(e);
			continue;
		}
		if (sv_engine_keep_polling(e, idle_start)) {
			cpu_relax();
			continue;
		}
		/* Going to sleep: tell every file, then look once more. */
		lazy = sv_engine_lazy(e, ktime_get_ns());
		sv_engine_set_asleep(e, true, lazy);
		/* Pairs with the library's fence between prod and flags. */
		smp_mb();
		spin_lock_bh(&e->lock);
		pending = sv_engine_pending(e) || e->kicked;
		e->kicked = false;
		spin_unlock_bh(&e->lock);
		now = ktime_get_ns();
		wake = min(wake, now + (lazy ? SV_ENGINE_LAZY_NS :
						    SV_ENGINE_NAP_NS));
		/* An hrtimer: back-offs are tens of microseconds and up. */
		if (!pending && wake > now)
			wait_event_interruptible_hrtimeout(e->wait,
							   sv_engine_woken(e),
							   ns_to_ktime(wake - now));
		else
			/*
			 * Work it cannot take yet: a file whose doorbell holds
			 * it (that poster may be waiting for this CPU), a
			 * back-off ending. Never spin past the scheduler.
			 */
			cond_resched();
		sv_engine_share(e);
		spin_lock_bh(&e->lock);
		e->kicked = false;
		rx_only = e->rx_only;
		e->rx_only = false;
		spin_unlock_bh(&e->lock);
		/* Woken by frames alone: no polling window after them. */
		idle_start = rx_only ? 0 : ktime_get_ns();
	}
	return 0;
}

static struct sv_engine *sv_engine_create(u32 id)
{
	struct sv_engine *e;
	int ret = -ENOMEM;

	/* The module's, not the user's who happened to need it first. */
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&e->lock);
	INIT_LIST_HEAD(&e->users);
	init_waitqueue_head(&e->wait);
	if (!zalloc_cpumask_var(&e->allowed, GFP_KERNEL))
		goto err;
	if (!zalloc_cpumask_var(&e->others, GFP_KERNEL))
		goto err_allowed;
	e->task = kthread_run(sv_engine_thread, e, "softverbs-eng%u", id);
	if (IS_ERR(e->task)) {
		ret = PTR_ERR(e->task);
		goto err_others;
	}
	return e;

err_others:
	free_cpumask_var(e->others);
err_allowed:
	free_cpumask_var(e->allowed);
err:
	kfree(e);
	return ERR_PTR(ret);
}

/*
 * The engine for a new file: one without files while the pool may grow,
 * else the one with the fewest. Under sv_engines_lock.
 */
static struct sv_engine *sv_engine_pick(void)
{
	struct sv_engine *e, *best = NULL;
	u32 i;

	lockdep_assert_held(&sv_engines_lock);
	for (i = 0; i < sv_nengines; i++) {
		e = sv_engines[i];
		if (!best || READ_ONCE(e->nfiles) < READ_ONCE(best->nfiles))
			best = e;
	}
	if ((!best || READ_ONCE(best->nfiles)) && sv_nengines < max_engines) {
		e = sv_engine_create(sv_nengines);
		if (!IS_ERR(e)) {
			sv_engines[sv_nengines] = e;
			/* A drive reads the array without the mutex. */
			smp_store_release(&sv_nengines, sv_nengines + 1);
			return e;
		}
		if (!best)
			return e;
	}
	return best;
}

/* The file's share of an engine, made on first use. Under f->lock. */
static struct sv_engine_file *sv_engine_file_get(struct sv_file *f)
{
	struct sv_engine_file *ef = f->ef;
	struct sv_engine_user *u, *nu;
	struct sv_engine *e;
	int ret = -ENOMEM;

	lockdep_assert_held(&f->lock);
	if (ef)
		return ef;
	ef = kzalloc(sizeof(*ef), GFP_KERNEL_ACCOUNT);
	if (!ef)
		return ERR_PTR(-ENOMEM);
	kref_init(&ef->ref);
	ef->sdev = f->sdev;
	INIT_LIST_HEAD(&ef->qps);
	INIT_LIST_HEAD(&ef->ready);
	/*
	 * Its lock nests in e->lock, which kicks take in softirq: always
	 * taken with BH off (the _bh calls, or under e->lock).
	 */
	xa_init_flags(&ef->slots, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	mutex_init(&ef->run_lock);
	ef->scratch_size = SV_SEND_WQE_MAX;
	ef->scratch = kzalloc(ef->scratch_size, GFP_KERNEL_ACCOUNT);
	ef->exec_buf = kzalloc(sv_exec_buf_size(), GFP_KERNEL_ACCOUNT);
	if (!ef->scratch || !ef->exec_buf)
		goto err_scratch;
	sv_exec_buf_keep(ef->exec_buf);
	/* The biggest slot holds the most inline data too. */
	BUILD_BUG_ON(SV_MAX_SGE * sizeof(struct sv_sge) < SV_MAX_INLINE_DATA);
	BUILD_BUG_ON(sizeof(struct sv_doorbell) > SV_DB_HINT_OFFSET);
	BUILD_BUG_ON(ARRAY_SIZE(ef->db->hint_sum) * 64 * 64 != SV_DB_SLOTS);
	ef->db_buf = sv_mbuf_alloc(SV_DB_HINT_OFFSET + SV_DB_SLOTS / 8);
	if (IS_ERR(ef->db_buf)) {
		ret = PTR_ERR(ef->db_buf);
		goto err_scratch;
	}
	ef->db = ef->db_buf->vaddr;
	ef->hint = ef->db_buf->vaddr + SV_DB_HINT_OFFSET;
	ret = sv_mmap_entry_add(f, ef->db_buf, &ef->db_offset);
	if (ret)
		goto err_db;
	/* The user's share of the engine, in case it has none there yet. */
	nu = kzalloc(sizeof(*nu), GFP_KERNEL_ACCOUNT);
	if (!nu) {
		ret = -ENOMEM;
		goto err_mmap;
	}
	mutex_lock(&sv_engines_lock);
	e = sv_engine_pick();
	if (IS_ERR(e)) {
		mutex_unlock(&sv_engines_lock);
		ret = PTR_ERR(e);
		goto err_user;
	}
	ef->e = e;
	spin_lock_bh(&e->lock);
	list_for_each_entry(u, &e->users, node)
		if (uid_eq(u->uid, f->uid))
			break;
	if (list_entry_is_head(u, &e->users, node)) {
		u = nu;
		nu = NULL;
		kref_init(&u->ref);
		u->uid = f->uid;
		INIT_LIST_HEAD(&u->files);
		list_add_tail(&u->node, &e->users);
		e->nusers++;
	}
	ef->user = u;
	/* A sleeping engine must be rung for, unless the user drives. */
	WRITE_ONCE(ef->db->flags, sv_file_db_flags(e, u, ef));
	list_add_tail(&ef->node, &u->files);
	u->nfiles++;
	WRITE_ONCE(e->nfiles, e->nfiles + 1);
	spin_unlock_bh(&e->lock);
	mutex_unlock(&sv_engines_lock);
	kfree(nu);
	/* The doorbell and kicks read it without f->lock. */
	smp_store_release(&f->ef, ef);
	return ef;

err_user:
	kfree(nu);
err_mmap:
	sv_mmap_entry_remove(f, ef->db_offset);
err_db:
	sv_mbuf_put(ef->db_buf);
err_scratch:
	kfree(ef->exec_buf);
	kfree(ef->scratch);
	mutex_destroy(&ef->run_lock);
	kfree(ef);
	return ERR_PTR(ret);
}

/* Wake e (rx: for frames alone); first qp goes on ef's ready list. */
static void sv_engine_wake_poll(struct sv_engine *e, struct sv_engine_file *ef,
				struct sv_qp *qp, bool rx)
{
	spin_lock_bh(&e->lock);
	if (qp)
		sv_qp_ready(ef, qp);
	/* The first kick since it slept says; any other kick clears it. */
	e->rx_only = rx && (e->rx_only || !e->kicked);
	e->kicked = true;
	spin_unlock_bh(&e->lock);
	wake_up(&e->wait);
}

static void sv_engine_wake(struct sv_engine *e)
{
	sv_engine_wake_poll(e, NULL, NULL, false);
}

/*
 * The file's engine, if it has one yet: qp (if any) has work for it, on
 * the ready list, then wake it (rx: for frames alone). Frames for an
 * engine without a CPU of its own also tell the file's pollers (the
 * doorbell page's rx): one of them may take them first.
 */
static void sv_engine_kick_file(struct sv_file *f, struct sv_qp *qp, bool rx)
{
	/* Pairs with the release store in sv_engine_file_get(). */
	struct sv_engine_file *ef = smp_load_acquire(&f->ef);

	if (!ef)
		return;
	sv_engine_wake_poll(ef->e, ef, qp, rx);
	if (rx && READ_ONCE(ef->e->asleep))
		WRITE_ONCE(ef->db->rx, 1);
}

/*
 * The kernel gave qp work (a state change, an error to flush): the
 * engine runs it. The caller keeps the file alive: its own syscall, or
 * qp found not dead under qp->lock.
 */
void sv_engine_kick_qp(struct sv_qp *qp)
{
	sv_engine_kick_file(qp->uobj.file, qp, false);
}

/*
 * The same for steered frames in a QP's queue: the engine takes them and
 * sleeps again, without the polling window a post gets (idle_us): the
 * next frame kicks it again, and a poller would only take the CPU the
 * frames' sender and their receiver need.
 */
void sv_engine_kick_rx(struct sv_qp *qp)
{
	sv_engine_kick_file(qp->uobj.file, qp, true);
}

/*
 * The file is closing, its QPs are destroyed: leave the engine, and the
 * user's share of it with the user's last file there. A pass in the file
 * finishes first; one about to start finds it detached.
 */
void sv_engine_detach(struct sv_file *f)
{
	struct sv_engine_file *ef = f->ef;
	struct sv_engine_user *u;
	struct sv_engine *e;
	bool last;

	if (!ef)
		return;
	e = ef->e;
	u = ef->user;
	spin_lock_bh(&e->lock);
	list_del(&ef->node);
	u->nfiles--;
	last = !u->nfiles;
	if (last) {
		list_del(&u->node);
		e->nusers--;
	}
	WRITE_ONCE(e->nfiles, e->nfiles - 1);
	spin_unlock_bh(&e->lock);
	ef->user = NULL;
	/* A pass in the user's turn frees it when it is done. */
	if (last)
		kref_put(&u->ref, sv_engine_user_release);
	mutex_lock(&ef->run_lock);
	ef->detached = true;
	mutex_unlock(&ef->run_lock);
	sv_mmap_entry_remove(f, ef->db_offset);
	f->ef = NULL;
	kref_put(&ef->ref, sv_engine_file_release);
}

/* Module load: the pool's bound; engines come with the files. */
int sv_engines_init(void)
{
	u32 n = max_engines;

	if (!n)
		n = cpumask_weight_and(housekeeping_cpumask(HK_TYPE_KTHREAD),
				       cpu_online_mask);
	max_engines = clamp_t(u32, n, 1, num_possible_cpus());
	sv_engines = kcalloc(max_engines, sizeof(*sv_engines), GFP_KERNEL);
	return sv_engines ? 0 : -ENOMEM;
}

/* Module exit: no file is open, no engine has a file. */
void sv_engines_exit(void)
{
	struct sv_engine *e;
	u32 i;

	for (i = 0; i < sv_nengines; i++) {
		e = sv_engines[i];
		kthread_stop(e->task);
		free_cpumask_var(e->others);
		free_cpumask_var(e->allowed);
		kfree(e);
	}
	kfree(sv_engines);
	sv_engines = NULL;
	sv_nengines = 0;
}

/* ---- QP hooks (qp.c) ---- */

/*
 * A hint slot for qp (uapi: SV_MAP_DOORBELL_HINTS), reserved until the
 * QP is whole: none past SV_DB_SLOTS (the QP is run in every pass).
 */
static int sv_dp_qp_slot(struct sv_engine_file *ef, struct sv_qp *qp)
{
	int ret;

	ret = xa_alloc_bh(&ef->slots, &qp->db_slot, NULL,
			  XA_LIMIT(0, SV_DB_SLOTS - 1), GFP_KERNEL_ACCOUNT);
	if (ret)
		qp->db_slot = SV_DB_NO_SLOT;
	return ret == -EBUSY ? 0 : ret;
}

static void sv_dp_qp_slot_free(struct sv_engine_file *ef, struct sv_qp *qp)
{
	if (qp->db_slot != SV_DB_NO_SLOT)
		xa_erase_bh(&ef->slots, qp->db_slot);
	qp->db_slot = SV_DB_NO_SLOT;
}

static int sv_dp_qp_rings(struct sv_file *f, struct sv_qp *qp,
			  bool shared_rings)
{
	u32 payload;
	int ret;

	payload = max_t(u32, qp->cap.max_send_sge * sizeof(struct sv_sge),
			qp->cap.max_inline_data);
	/* A TSO WQE: its header, then the SGEs (steer/tx.c) */
	if (qp->max_tso_header)
		payload = max_t(u32, payload,
				SV_TSO_SGE_OFFSET(qp->max_tso_header) +
				qp->cap.max_send_sge * sizeof(struct sv_sge));
	/* Three lock classes: an engine holds its SQ and takes an RQ. */
	mutex_init(&qp->sq.lock);
	mutex_init(&qp->rq.lock);
	/* Only steered frames fill a RAW_PACKET QP's own RQ: in softirq. */
	spin_lock_init(&qp->rq.bh_lock);
	qp->rq.bh = qp->qp_type == SV_QPT_RAW_PACKET && !qp->srq;
	if (shared_rings && !qp->srq)
		return sv_wq_init_pair(f, &qp->sq, qp->cap.max_send_wr,
				       sizeof(struct sv_send_wqe) + payload,
				       &qp->rq, qp->cap.max_recv_wr,
				       sizeof(struct sv_recv_wqe) +
				       qp->cap.max_recv_sge *
				       sizeof(struct sv_sge));
	ret = sv_wq_init(f, &qp->sq, qp->cap.max_send_wr,
			 sizeof(struct sv_send_wqe) + payload);
	if (ret)
		return ret;
	if (!qp->srq) {
		ret = sv_wq_init(f, &qp->rq, qp->cap.max_recv_wr,
				 sizeof(struct sv_recv_wqe) +
				 qp->cap.max_recv_sge * sizeof(struct sv_sge));
		if (ret) {
			sv_wq_fini(f, &qp->sq);
			sv_wq_free(&qp->sq);
			return ret;
		}
	}
	return 0;
}

int sv_dp_qp_create(struct sv_file *f, struct sv_qp *qp, bool shared_rings)
{
	struct sv_engine_file *ef;
	int ret;

	ef = sv_engine_file_get(f);
	if (IS_ERR(ef))
		return PTR_ERR(ef);
	ret = sv_dp_qp_rings(f, qp, shared_rings);
	if (ret)
		return ret;
	ret = sv_dp_qp_slot(ef, qp);
	if (ret)
		sv_dp_qp_abort(f, qp);
	return ret;
}

/*
 * The QP is complete: the engine may run it. It starts on the ready list
 * (a QP without a slot stays there); its slot names it from now on.
 */
void sv_dp_qp_activate(struct sv_file *f, struct sv_qp *qp)
{
	struct sv_engine_file *ef = f->ef;
	struct sv_engine *e = ef->e;

	spin_lock_bh(&e->lock);
	list_add_tail(&qp->engine_node, &ef->qps);
	ef->nqps++;
	sv_qp_ready(ef, qp);
	/* Replaces the reservation: allocates nothing. */
	if (qp->db_slot != SV_DB_NO_SLOT)
		xa_store(&ef->slots, qp->db_slot, qp, GFP_ATOMIC);
	spin_unlock_bh(&e->lock);
}

/* Undo sv_dp_qp_create() (before activation). */
void sv_dp_qp_abort(struct sv_file *f, struct sv_qp *qp)
{
	sv_dp_qp_slot_free(f->ef, qp);
	sv_wq_fini(f, &qp->sq);
	sv_wq_fini(f, &qp->rq);
	sv_dp_qp_free(qp);
}

/*
 * Off the file's share, the ready list and the slots, all under e->lock:
 * a pass or a hint that finds the QP there may run it.
 */
static void sv_dp_qp_unlink(struct sv_qp *qp)
{
	struct sv_engine_file *ef = qp->uobj.file->ef;
	struct sv_engine *e;

	if (!ef || list_empty(&qp->engine_node))
		return;
	e = ef->e;
	spin_lock_bh(&e->lock);
	list_del_init(&qp->engine_node);
	ef->nqps--;
	sv_qp_unready(ef, qp);
	sv_dp_qp_slot_free(ef, qp);
	spin_unlock_bh(&e->lock);
}

/* The QP's handle is gone: no more execution, no more mapping. */
void sv_dp_qp_destroy(struct sv_qp *qp)
{
	struct sv_file *f = qp->uobj.file;

	sv_dp_qp_unlink(qp);
	mutex_lock(&qp->sq.lock);
	spin_lock_bh(&qp->lock);
	qp->dead = true;
	spin_unlock_bh(&qp->lock);
	mutex_unlock(&qp->sq.lock);
	/* No flow names the QP any more: nothing queues frames to it. */
	sv_steer_qp_purge(qp);
	sv_wq_fini(f, &qp->sq);
	sv_wq_fini(f, &qp->rq);
}

void sv_dp_qp_free(struct sv_qp *qp)
{
	sv_wq_free(&qp->sq);
	sv_wq_free(&qp->rq);
}

/* Drop whatever is posted: the queues of a QP in RESET are empty. */
static void sv_wq_reset(struct sv_wq *wq)
{
	sv_wq_assert_held(wq);
	if (!wq->ring)
		return;
	wq->cons = READ_ONCE(wq->ring->prod);
	/* Every slot is the library's again. */
	smp_store_release(&wq->ring->cons, wq->cons);
	WRITE_ONCE(wq->ring->flags, 0);
}

/*
 * A modify set the destination: the engine's copy, under qp->sq.lock,
 * and no route cached from the old one (the modify's new generation may
 * have been read with the old copy).
 */
void sv_dp_qp_dest_changed(struct sv_qp *qp)
{
	mutex_lock(&qp->sq.lock);
	spin_lock_bh(&qp->lock);
	qp->dest_qpn = qp->attr.dest_qp_num;
	memcpy(qp->dest_gid, qp->attr.ah_attr.dgid, sizeof(qp->dest_gid));
	qp->dest_cache = NULL;
	spin_unlock_bh(&qp->lock);
	mutex_unlock(&qp->sq.lock);
}

/* After a successful modify that named a state. Under f->lock. */
void sv_dp_qp_modified(struct sv_qp *qp, u32 old_state)
{
	u32 state = READ_ONCE(qp->attr.qp_state);

	if (state == SV_QPS_RESET) {
		mutex_lock(&qp->sq.lock);
		sv_wq_reset(&qp->sq);
		sv_dci_streams_reset(qp);
		qp->last_wqe_sent = false;
		WRITE_ONCE(qp->tm_fin_pending, false);
		qp->waiting = false;
		sv_wire_qp_reset(qp);
		mutex_unlock(&qp->sq.lock);
		sv_wq_lock(&qp->rq);
		sv_wq_reset(&qp->rq);
		sv_wq_unlock(&qp->rq);
		sv_steer_qp_purge(qp);
	} else if (state == SV_QPS_ERR) {
		WRITE_ONCE(qp->sq.ring->flags, SV_WQ_RING_ERR);
		if (qp->rq.ring)
			WRITE_ONCE(qp->rq.ring->flags, SV_WQ_RING_ERR);
	}
	if (state == SV_QPS_RTS && old_state != SV_QPS_RTS) {
		mutex_lock(&qp->sq.lock);
		sv_qp_reset_retries(qp);
		if (old_state == SV_QPS_RTR)
			sv_wire_qp_rts(qp);
		mutex_unlock(&qp->sq.lock);
	}
	sv_engine_kick_qp(qp);
}

/* ---- ioctls ---- */

int sv_map_wq(struct sv_file *f, void *arg)
{
	struct sv_map_wq *m = arg;
	struct sv_uobj *u;
	struct sv_srq *srq;
	struct sv_qp *qp;

	if (m->reserved)
		return -EINVAL;
	/* Out only: what the caller left there is not echoed back. */
	m->sq_offset = 0;
	m->sq_len = 0;
	m->rq_offset = 0;
	m->rq_len = 0;
	m->sq_ring = 0;
	m->rq_ring = 0;
	m->db_slot = SV_DB_NO_SLOT;
	if (m->reserved2)
		return -EINVAL;
	if (m->type == SV_WQ_QP) {
		u = sv_uobj_get(f, m->handle, SV_OBJ_QP);
		if (IS_ERR(u))
			return PTR_ERR(u);
		qp = container_of(u, struct sv_qp, uobj);
		/* The shared layout cannot be told without sq_ring, rq_ring */
		if (qp->rq.map_shared && m->size < SV_MAP_WQ_SIZE_VER1) {
			sv_uobj_put(u);
			return -EINVAL;
		}
		m->sq_offset = qp->sq.mmap_offset;
		m->sq_len = qp->sq.buf->size;
		m->sq_ring = qp->sq.ring_off;
		m->db_slot = qp->db_slot;
		if (qp->rq.buf) {
			m->rq_offset = qp->rq.mmap_offset;
			m->rq_len = qp->rq.buf->size;
			m->rq_ring = qp->rq.ring_off;
		}
	} else if (m->type == SV_WQ_SRQ) {
		u = sv_uobj_get(f, m->handle, SV_OBJ_SRQ);
		if (IS_ERR(u))
			return PTR_ERR(u);
		srq = container_of(u, struct sv_srq, uobj);
		m->rq_offset = srq->rq.mmap_offset;
		m->rq_len = srq->rq.buf->size;
	} else {
		return -EINVAL;
	}
	sv_uobj_put(u);
	return 0;
}

int sv_map_doorbell(struct sv_file *f, void *arg)
{
	struct sv_map_doorbell *m = arg;
	struct sv_engine_file *ef;

	if (m->flags & ~SV_MAP_DOORBELL_HINTS)
		return -EINVAL;
	ef = sv_engine_file_get(f);
	if (IS_ERR(ef))
		return PTR_ERR(ef);
	/* For the file's life: its QPs may leave the ready list from now. */
	if (m->flags & SV_MAP_DOORBELL_HINTS)
		WRITE_ONCE(ef->hints, true);
	m->flags = ef->hints ? SV_MAP_DOORBELL_HINTS : 0;
	m->offset = ef->db_offset;
	m->len = ef->db_buf->size;
	return 0;
}

/* sv_user_pending(), taking e->lock. */
static bool sv_user_has_work(struct sv_engine *e, struct sv_engine_user *u)
{
	bool pending;

	spin_lock_bh(&e->lock);
	pending = sv_user_pending(e, u);
	spin_unlock_bh(&e->lock);
	return pending;
}

/* Under e->lock: the share of e of the user uid, or NULL. */
static struct sv_engine_user *sv_engine_user_of(struct sv_engine *e,
						kuid_t uid)
{
	struct sv_engine_user *u;

	lockdep_assert_held(&e->lock);
	list_for_each_entry(u, &e->users, node)
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/*
 * What a drive runs: the caller's uid's shares of the engines without a
 * CPU of their own (its own file's engine first), referenced, each with
 * the drive counted in its drivers, and the time a pass asks the engine
 * to come back (an RNR or retry back-off; 0, now: files it left to the
 * drive).
 */
struct sv_drive {
	u32 n;
	struct sv_engine *e[SV_DRIVE_ENGINES];
	struct sv_engine_user *u[SV_DRIVE_ENGINES];
	u64 wake[SV_DRIVE_ENGINES];
};

static void sv_drive_add(struct sv_drive *d, struct sv_engine *e,
			 kuid_t uid)
{
	struct sv_engine_user *u;

	spin_lock_bh(&e->lock);
	u = e->asleep ? sv_engine_user_of(e, uid) : NULL;
	if (u) {
		kref_get(&u->ref);
		if (!u->drivers++)
			sv_user_set_flags(e, u);
		d->e[d->n] = e;
		d->u[d->n] = u;
		d->wake[d->n] = SV_NO_WAKE;
		d->n++;
	}
	spin_unlock_bh(&e->lock);
}

static void sv_drive_enter(struct sv_drive *d, struct sv_engine_file *ef)
{
	/* Pairs with the release store in sv_engine_pick(). */
	u32 i, n = smp_load_acquire(&sv_nengines);

	d->n = 0;
	sv_drive_add(d, ef->e, ef->user->uid);
	for (i = 0; i < n && d->n < SV_DRIVE_ENGINES; i++)
		if (sv_engines[i] != ef->e)
			sv_drive_add(d, sv_engines[i], ef->user->uid);
}

/*
 * One pass over each share within the drive's budget; did it find any?
 * busy: it found a file with work whose pass another context runs.
 */
static bool sv_drive_pass(struct sv_drive *d, u32 *wqes, u64 *bytes,
			  bool *busy)
{
	struct sv_pass p = { .driver = true };
	bool did = false;
	u32 i;

	for (i = 0; i < d->n && *wqes && *bytes; i++) {
		p.wake = d->wake[i];
		did |= sv_drive_user_pass(d->e[i], d->u[i], &p, wqes, bytes);
		d->wake[i] = p.wake;
	}
	if (busy)
		*busy = p.busy;
	return did;
}

/*
 * Leave as the kthread goes to sleep: the flags first, a full barrier,
 * then one more look at every queue, so that either the drive sees a
 * post or the post sees the flag. Work left, or a QP backing off, is
 * the kthread's.
 */
static void sv_drive_leave(struct sv_drive *d)
{
	u32 wqes, i;
	u64 bytes;

	for (i = 0; i < d->n; i++) {
		spin_lock_bh(&d->e[i]->lock);
		if (!--d->u[i]->drivers) {
			sv_user_set_flags(d->e[i], d->u[i]);
			/* Files the kthread left: it comes back for them. */
			if (d->u[i]->skipped) {
				d->u[i]->skipped = false;
				d->wake[i] = 0;
			}
		}
		spin_unlock_bh(&d->e[i]->lock);
	}
	/* Pairs with the library's fence between prod and the flags. */
	smp_mb();
	for (i = 0; i < d->n; i++) {
		if (sv_user_has_work(d->e[i], d->u[i])) {
			wqes = SV_DOORBELL_BUDGET;
			bytes = SV_DRIVE_BYTES;
			sv_drive_pass(d, &wqes, &bytes, NULL);
			break;
		}
	}
	for (i = 0; i < d->n; i++) {
		if (d->wake[i] != SV_NO_WAKE ||
		    sv_user_has_work(d->e[i], d->u[i]))
			sv_engine_wake(d->e[i]);
		kref_put(&d->u[i]->ref, sv_engine_user_release);
	}
}

/*
 * SV_RING_DRIVE (uapi): a poll that found cq empty runs the engines for
 * its own uid, in its own context, while they have no CPU of their own.
 * The uid's files there need no ring meanwhile (sv_file_db_flags()). It
 * goes on while passes find work, within SV_DRIVE_BUDGET and
 * SV_DRIVE_BYTES, and while the caller has its CPU to itself; with
 * nothing to do it leaves once cq has a completion and SV_DRIVE_LINGER_NS
 * passed, else after SV_DRIVE_IDLE_NS. 1 if it did work or found work
 * under way elsewhere.
 */
static int sv_engine_drive(struct sv_file *f, struct sv_engine_file *ef,
			   u32 cq_handle)
{
	u32 wqes = SV_DRIVE_BUDGET, before;
	u64 bytes = SV_DRIVE_BYTES, idle = 0;
	struct sv_drive d;
	bool found = false, busy;
	struct sv_cq *cq;

	cq = sv_cq_get(f, cq_handle);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	/*
	 * No QP, no engine: nothing to drive. A caller that shares its CPU
	 * with other runnable tasks has no CPU to lend: a drive would take
	 * it from them, and leave when it is preempted.
	 */
	if (!ef || !single_task_running()) {
		sv_uobj_put(&cq->uobj);
		return 0;
	}
	sv_stat_add(ef->sdev, SV_STAT_DRIVES, 1);
	sv_drive_enter(&d, ef);
	/* The file's own frames: the drive's passes take them. */
	WRITE_ONCE(ef->db->rx, 0);
	/* Pairs with the library's fence between prod and the flags. */
	smp_mb();
	while (d.n && wqes && bytes) {
		before = wqes;
		if (sv_drive_pass(&d, &wqes, &bytes, &busy) && wqes == before)
			found = true;	/* frames */
		if (wqes != before || busy) {
			/* Work under way elsewhere: this CPU is wanted too. */
			found = true;
			idle = 0;
		} else if (!idle) {
			idle = ktime_get_ns();
		} else if (ktime_get_ns() - idle > SV_DRIVE_IDLE_NS ||
			   (ktime_get_ns() - idle > SV_DRIVE_LINGER_NS &&
			    sv_cq_has_entries(cq))) {
			break;
		}
		/*
		 * The user's CPU, as long as it is the user's alone: a driver
		 * off its CPU would leave the posts it silenced waiting.
		 */
		if (need_resched() || !single_task_running() ||
		    signal_pending(current))
			break;
		cpu_relax();
	}
	sv_drive_leave(&d);
	if (READ_ONCE(ef->e->asleep) && sv_file_has_frames(ef))
		WRITE_ONCE(ef->db->rx, 1);
	sv_uobj_put(&cq->uobj);
	return found;
}

/*
 * Offer the kthread the work at most once per idle time: if it finds a
 * CPU of its own it polls and the poster stops ringing; if not, it
 * sleeps again, and a poster that rings for each WR must not pay a
 * wakeup and two context switches every time. An idle time of 0 means
 * the kthread never polls for this file: it gets only what is left over.
 * True if it is the time. Under ef->run_lock.
 */
static bool sv_doorbell_offer(struct sv_file *f, struct sv_engine_file *ef)
{
	u32 idle = READ_ONCE(f->sdev->idle_us);
	u64 now;

	if (!idle)
		return false;
	now = ktime_get_ns();
	if (now < ef->doorbell_wake_ns)
		return false;
	ef->doorbell_wake_ns = now + (u64)idle * NSEC_PER_USEC;
	return true;
}

/*
 * A ring from a file whose posts would leave their rings to a later poll
 * but for a missing SV_DB_DEFER (struct sv_doorbell's defer): have the
 * kthread set it. A lazy engine keeps it set while files defer.
 */
static void sv_doorbell_defer(struct sv_engine_file *ef)
{
	struct sv_engine *e = ef->e;

	if (likely(READ_ONCE(e->lazy) || !ef->hints ||
		   !READ_ONCE(ef->db->defer)))
		return;
	WRITE_ONCE(e->want_lazy, true);
	sv_engine_wake(e);
}

/*
 * A post's ring that names its QP (SV_RING_QP): that QP alone, in the
 * poster's syscall, with no hint to take and no other QP to look at. Its
 * hint bits were not set: if the engine, a drive or another doorbell is
 * in the file, the QP goes on the ready list for them, and the kthread
 * is woken as for a plain ring (a drive leaves with a look at it).
 */
static int sv_ring_qp(struct sv_file *f, struct sv_engine_file *ef, u32 slot)
{
	u64 wake = SV_NO_WAKE, bytes = SV_FILE_BYTES, executed;
	struct sv_engine *e = ef->e;
	u32 wqes = SV_FILE_BUDGET;
	struct sv_qp *qp;
	bool ran, more;

	sv_doorbell_defer(ef);
	ran = mutex_trylock(&ef->run_lock);
	spin_lock_bh(&e->lock);
	qp = xa_load(&ef->slots, slot);
	if (qp && !ran)
		sv_qp_ready(ef, qp);
	else if (qp)
		kref_get(&qp->uobj.ref);
	spin_unlock_bh(&e->lock);
	if (!ran) {
		if (qp && !READ_ONCE(ef->user->drivers))
			sv_engine_wake(e);
		return 0;
	}
	if (!qp) {
		mutex_unlock(&ef->run_lock);
		return 0;
	}
	executed = ef->executed;
	sv_engine_run_qp(ef, qp, SV_DOORBELL_BUDGET, &wqes, &bytes, &wake);
	sv_stat_add(f->sdev, SV_STAT_QP_RUNS, 1);
	sv_stat_add(f->sdev, SV_STAT_DOORBELL_WQES, ef->executed - executed);
	sv_exec_buf_drop(ef->exec_buf);
	/*
	 * Left over (budget), or backing off: the kthread's job. Done, and
	 * off the ready list: nothing to settle (whoever puts it there
	 * after this look runs it).
	 */
	more = wake != SV_NO_WAKE || sv_qp_due(qp);
	if (more || !list_empty(&qp->ready_node)) {
		spin_lock_bh(&e->lock);
		if (more)
			sv_qp_ready(ef, qp);
		else
			sv_qp_settle(ef, qp, false);
		spin_unlock_bh(&e->lock);
	}
	more |= sv_doorbell_offer(f, ef);
	mutex_unlock(&ef->run_lock);
	sv_qp_put(qp);
	if (more)
		sv_engine_wake(e);
	return 0;
}

/*
 * Without f->lock (file.c): the file's engine share, once there, stays
 * until release. Runs the poster's own file only, in its context, or, to
 * drive, the files of the poster's uid on the file's engine.
 */
int sv_ring_doorbell(struct sv_file *f, void *arg)
{
	struct sv_ring_doorbell *d = arg;
	struct sv_engine_file *ef;
	u64 wake = SV_NO_WAKE, bytes = SV_FILE_BYTES, executed, frames;
	u32 wqes = SV_FILE_BUDGET;
	bool more, left;

	if (d->flags & ~(SV_RING_DRIVE | SV_RING_QP) ||
	    (d->flags && d->size < SV_RING_DOORBELL_SIZE_VER1) ||
	    d->flags == (SV_RING_DRIVE | SV_RING_QP) ||
	    (d->flags & SV_RING_QP ? d->cq_handle ||
	     d->qp_slot >= SV_DB_SLOTS : d->qp_slot))
		return -EINVAL;
	/* Pairs with the release store in sv_engine_file_get(). */
	ef = smp_load_acquire(&f->ef);
	if (d->flags & SV_RING_DRIVE)
		return sv_engine_drive(f, ef, d->cq_handle);
	sv_stat_add(f->sdev, SV_STAT_DOORBELLS, 1);
	if (!ef)
		return 0;
	if (d->flags & SV_RING_QP)
		return sv_ring_qp(f, ef, d->qp_slot);
	sv_doorbell_defer(ef);
	/* The engine is in the file: make sure one more pass follows. */
	if (!mutex_trylock(&ef->run_lock)) {
		/* A drive leaves with one more look at every queue. */
		if (!READ_ONCE(ef->user->drivers))
			sv_engine_wake(ef->e);
		return 0;
	}
	executed = ef->executed;
	frames = ef->frames;
	/* Before the pass: what comes during it sets rx again. */
	WRITE_ONCE(ef->db->rx, 0);
	/* Posts left to a later ring (SV_DB_DEFER) come in bursts. */
	sv_file_pass(ef, READ_ONCE(ef->e->lazy) ? SV_ENGINE_BUDGET :
		     SV_DOORBELL_BUDGET, &wqes, &bytes, &wake);
	sv_stat_add(f->sdev, SV_STAT_DOORBELL_WQES, ef->executed - executed);
	sv_stat_add(f->sdev, SV_STAT_DOORBELL_FRAMES, ef->frames - frames);
	/* Left over (budget), or a QP backing off: the kthread's job. */
	left = sv_file_has_work(ef);
	more = left || wake != SV_NO_WAKE;
	/*
	 * Frames left are the pollers' too, while the kthread has no CPU of
	 * its own (not WQEs: a WQE in flight on the wire waits for its
	 * answer, which comes as a frame). Frames due count as work, so
	 * with none left there is nothing to look for.
	 */
	if (left && READ_ONCE(ef->e->asleep) && sv_file_has_frames(ef))
		WRITE_ONCE(ef->db->rx, 1);
	more |= sv_doorbell_offer(f, ef);
	mutex_unlock(&ef->run_lock);
	if (more)
		sv_engine_wake(ef->e);
	return 0;
}

/*
 * debugfs (softverbs/engines): each engine's users, their files there
 * and the WQEs the kthread executed for them.
 */
void sv_engines_show(struct seq_file *m)
{
	struct sv_engine_user *u;
	struct sv_engine *e;
	u32 i;

	mutex_lock(&sv_engines_lock);
	for (i = 0; i < sv_nengines; i++) {
		e = sv_engines[i];
		spin_lock_bh(&e->lock);
		seq_printf(m, "engine %u files %u users %u\n", i, e->nfiles,
			   e->nusers);
		list_for_each_entry(u, &e->users, node)
			seq_printf(m, "engine %u uid %u files %u executed %llu\n",
				   i, from_kuid_munged(&init_user_ns, u->uid),
				   u->nfiles, READ_ONCE(u->executed));
		spin_unlock_bh(&e->lock);
	}
	mutex_unlock(&sv_engines_lock);
}

u32 sv_default_idle_us(void)
{
	return READ_ONCE(idle_us);
}
