// SPDX-License-Identifier: GPL-2.0
/*
 * softverbs data path: work queue rings, the doorbell page and the
 * execution engine.
 *
 * Each open file that creates a QP gets an engine: a kthread with the
 * list of the file's QPs. It executes their send queues (exec.c) and
 * flushes the queues of QPs in the error state; it keeps polling while
 * there is work and, while it has its CPU to itself, for the device's
 * idle_us after the last. Then it sets SV_DB_NEED_WAKEUP in the file's
 * doorbell page and sleeps until SV_IOC_DOORBELL, a state change, a retry
 * time or kthread_stop(). The ring and doorbell memory-ordering contract
 * is in uapi/softverbs-abi.h.
 *
 * SV_IOC_DOORBELL runs one pass of the engine in the caller's context
 * (unless the engine is running one) and then wakes the engine: a poster
 * that waits for each answer (a latency test, a ping-pong) gets its WR
 * executed in its own syscall, without waiting for a CPU for the kthread;
 * a poster that keeps posting wakes the kthread, which polls on a CPU of
 * its own and the poster makes no more syscalls. An engine that would
 * have to share its CPU does not poll: it moves to another CPU (at most
 * every 10 ms: wakeups tend to leave it on the poster's) or, if that one
 * is busy too, sleeps and the poster rings.
 *
 * Fairness: a pass gives each QP at most SV_ENGINE_BUDGET WQEs and about
 * SV_ENGINE_BYTES bytes; copies reschedule every SV_COPY_CHUNK (exec.c).
 *
 * Lifetimes: a QP is on its engine's list from create to destroy; destroy
 * takes it off and then takes qp->sq.lock, so the engine is done with it.
 * At close the file's objects are destroyed first (each QP leaves the
 * engine's list that way) and the engine is stopped after them.
 * Receive queues are consumed by other files' engines too (the requester
 * does the work), under wq->lock; they hold a QP reference, which keeps
 * the ring memory.
 */
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "sv.h"

static unsigned int idle_us = SV_IDLE_US_DEFAULT;
module_param(idle_us, uint, 0644);
MODULE_PARM_DESC(idle_us, "Default microseconds an engine polls after its last work before sleeping (default 1000)");

/* WQEs executed per QP per pass: fairness between QPs. */
#define SV_ENGINE_BUDGET	64
/* ... and bytes: a QP of 2 GiB messages gives way after each one. */
#define SV_ENGINE_BYTES		SZ_4M
/*
 * The doorbell's pass does fewer: enough for a poster that waits for each
 * answer, while a burst goes to the kthread on its own CPU instead of
 * holding the poster in its syscall.
 */
#define SV_DOORBELL_BUDGET	4
/* The longest the kthread sleeps with nothing to wait for. */
#define SV_ENGINE_NAP_NS	(10 * NSEC_PER_SEC)
/* A pass's wake time when no QP is backing off. */
#define SV_NO_WAKE		U64_MAX

struct sv_engine {
	struct sv_file *f;
	struct task_struct *task;
	struct mutex run_lock;		/* one pass at a time: scratch */
	spinlock_t lock;		/* qps, kicked */
	struct list_head qps;
	u32 nqps;
	wait_queue_head_t wait;
	bool kicked;
	u64 doorbell_wake_ns;		/* a doorbell wakes the kthread after */
	u64 executed;			/* WQEs executed; under run_lock */
	u64 move_after;			/* the kthread may change CPU after */
	cpumask_var_t others;		/* the kthread's: CPUs but its own */
	struct sv_mbuf *db_buf;
	struct sv_doorbell *db;
	u64 db_offset;
	void *scratch;			/* one send WQE, copied out */
	u32 scratch_size;
	void *exec_buf;			/* sv_exec_send()'s scratch */
};

#define SV_SEND_WQE_MAX	(sizeof(struct sv_send_wqe) + \
			 SV_MAX_SGE * sizeof(struct sv_sge))

/* ---- rings ---- */

int sv_wq_init(struct sv_file *f, struct sv_wq *wq, u32 entries,
	       u32 wqe_size)
{
	struct sv_wq_ring *ring;
	int ret;

	entries = entries ? roundup_pow_of_two(entries) : 1;
	wqe_size = ALIGN(wqe_size, 64);
	wq->buf = sv_mbuf_alloc(PAGE_SIZE + (size_t)entries * wqe_size);
	if (IS_ERR(wq->buf)) {
		ret = PTR_ERR(wq->buf);
		wq->buf = NULL;
		return ret;
	}
	ring = wq->buf->vaddr;
	ring->entries = entries;
	ring->wqe_size = wqe_size;
	ring->wqe_offset = PAGE_SIZE;
	wq->ring = ring;
	wq->wqes = wq->buf->vaddr + PAGE_SIZE;
	wq->entries = entries;
	wq->wqe_size = wqe_size;
	wq->cons = 0;
	ret = sv_mmap_entry_add(f, wq->buf, &wq->mmap_offset);
	if (ret) {
		sv_mbuf_put(wq->buf);
		wq->buf = NULL;
		wq->ring = NULL;
	}
	return ret;
}

/* Userspace can no longer map it (the memory stays until sv_wq_free). */
void sv_wq_fini(struct sv_file *f, struct sv_wq *wq)
{
	if (wq->buf)
		sv_mmap_entry_remove(f, wq->mmap_offset);
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
		sv_dp_push(cq, wr_id, 5 /* WR_FLUSH_ERR */, op, 0, qpn, true);
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

	did = sv_wq_flush(&qp->sq, qp->send_cq, qp->qpn, true);
	if (qp->rq.ring) {
		mutex_lock(&qp->rq.lock);
		did |= sv_wq_flush(&qp->rq, qp->recv_cq, qp->qpn, false);
		mutex_unlock(&qp->rq.lock);
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

	if (w->send_flags & SV_SEND_INLINE)
		return w->inline_len;
	for (i = 0; i < n; i++)
		len += sge[i].length;
	return len;
}

/* Execute qp's send queue; true if anything happened. */
static bool sv_engine_run_qp(struct sv_engine *e, struct sv_qp *qp,
			     u32 budget, u64 *wake)
{
	struct sv_wq *sq = &qp->sq;
	struct sv_send_wqe *w = e->scratch;
	enum sv_exec_result res;
	bool did = false, sig;
	u32 prod, state, status, n;
	u64 bytes = 0;

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
		       min(sq->wqe_size, e->scratch_size));
		res = sv_exec_send(qp, w, e->exec_buf, &status);
		did = true;
		e->executed++;
		if (res == SV_EXEC_RETRY) {
			qp->waiting = true;
			*wake = min(*wake, qp->wait_until);
			break;
		}
		/*
		 * The slot is free before its completion is visible: an
		 * application that saw the CQE may reuse the slot at once.
		 */
		sq->cons++;
		/* Pairs with the library's acquire load of cons. */
		smp_store_release(&sq->ring->cons, sq->cons);
		sig = (w->send_flags & SV_SEND_SIGNALED) ||
		      (qp->flags & SV_CREATE_QP_SQ_SIG_ALL);
		/*
		 * In ERR before the error completion shows: an application
		 * that reacts to it with a modify to RESET must not find
		 * its new state overwritten by this error afterwards.
		 */
		if (res == SV_EXEC_FATAL)
			sv_qp_to_err(qp);
		if (res == SV_EXEC_FATAL || sig)
			sv_dp_push(qp->send_cq, w->wr_id, status,
				   sv_wc_opcode(w->opcode),
				   status ? 0 : (w->send_flags & SV_SEND_INLINE ?
						 w->inline_len : 0),
				   qp->qpn, false);
		if (qp->retried)
			sv_qp_reset_retries(qp);
		if (res == SV_EXEC_FATAL)
			break;
		bytes += sv_wqe_bytes(w, e->scratch_size);
		if (bytes >= SV_ENGINE_BYTES)
			break;
	}
out:
	mutex_unlock(&sq->lock);
	return did;
}

/* One pass over the file's QPs, each once, round robin. */
static bool sv_engine_pass(struct sv_engine *e, u32 budget,
			   u64 *wake)
{
	struct sv_qp *qp;
	bool did = false;
	u32 i, n;

	spin_lock(&e->lock);
	n = e->nqps;
	spin_unlock(&e->lock);
	for (i = 0; i < n; i++) {
		spin_lock(&e->lock);
		if (list_empty(&e->qps)) {
			spin_unlock(&e->lock);
			break;
		}
		qp = list_first_entry(&e->qps, struct sv_qp, engine_node);
		list_move_tail(&qp->engine_node, &e->qps);
		kref_get(&qp->uobj.ref);
		spin_unlock(&e->lock);
		did |= sv_engine_run_qp(e, qp, budget, wake);
		sv_qp_put(qp);
	}
	return did;
}

/* Is there anything to do right now? Under e->lock. */
static bool sv_engine_pending(struct sv_engine *e)
{
	struct sv_qp *qp;
	u32 state;

	list_for_each_entry(qp, &e->qps, engine_node) {
		state = READ_ONCE(qp->attr.qp_state);
		if (state == SV_QPS_ERR &&
		    (sv_wq_pending(&qp->sq) || sv_wq_pending(&qp->rq)))
			return true;
		if (state == SV_QPS_RTS && !qp->waiting &&
		    sv_wq_pending(&qp->sq))
			return true;
	}
	return false;
}

static bool sv_engine_has_work(struct sv_engine *e)
{
	bool pending;

	spin_lock(&e->lock);
	pending = sv_engine_pending(e);
	spin_unlock(&e->lock);
	return pending;
}

static bool sv_engine_woken(struct sv_engine *e)
{
	return READ_ONCE(e->kicked) || kthread_should_stop();
}

/* One pass by whoever runs it: the kthread or a doorbell. */
static bool sv_engine_run(struct sv_engine *e, u64 *wake)
{
	bool did;

	mutex_lock(&e->run_lock);
	did = sv_engine_pass(e, SV_ENGINE_BUDGET, wake);
	mutex_unlock(&e->run_lock);
	return did;
}

/*
 * The kthread shares its CPU: try another one, at most every 10 ms. A
 * wakeup tends to place the kthread on the waker's CPU (the poster's,
 * when a doorbell wakes it) and to keep it there, even with a CPU idle;
 * once moved, later wakeups find it where it was. True if it now has the
 * CPU to itself.
 */
static bool sv_engine_move(struct sv_engine *e)
{
	u64 now = ktime_get_ns();
	int ret;

	if (now < e->move_after || num_online_cpus() < 2)
		return false;
	e->move_after = now + 10 * NSEC_PER_MSEC;
	cpumask_copy(e->others, cpu_online_mask);
	cpumask_clear_cpu(raw_smp_processor_id(), e->others);
	ret = set_cpus_allowed_ptr(current, e->others);
	/* Free to go anywhere again; it stays where it is now. */
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	return !ret && single_task_running();
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
	if (ktime_get_ns() - idle_start >=
	    (u64)READ_ONCE(e->f->sdev->idle_us) * NSEC_PER_USEC)
		return false;
	if (need_resched()) {
		WRITE_ONCE(e->db->flags, SV_DB_NEED_WAKEUP);
		cond_resched();
		WRITE_ONCE(e->db->flags, 0);
	}
	return single_task_running() || sv_engine_move(e);
}

static int sv_engine_thread(void *arg)
{
	struct sv_engine *e = arg;
	u64 idle_start = ktime_get_ns(), wake, now;
	bool pending;

	while (!kthread_should_stop()) {
		wake = SV_NO_WAKE;
		if (sv_engine_run(e, &wake)) {
			idle_start = ktime_get_ns();
			cond_resched();
			continue;
		}
		if (sv_engine_keep_polling(e, idle_start)) {
			cpu_relax();
			continue;
		}
		/* Going to sleep: tell the library, then look once more. */
		WRITE_ONCE(e->db->flags, SV_DB_NEED_WAKEUP);
		/* Pairs with the library's fence between prod and flags. */
		smp_mb();
		spin_lock(&e->lock);
		pending = sv_engine_pending(e) || e->kicked;
		e->kicked = false;
		spin_unlock(&e->lock);
		now = ktime_get_ns();
		wake = min(wake, now + SV_ENGINE_NAP_NS);
		/* An hrtimer: back-offs are tens of microseconds and up. */
		if (!pending && wake > now)
			wait_event_interruptible_hrtimeout(e->wait,
							   sv_engine_woken(e),
							   ns_to_ktime(wake - now));
		WRITE_ONCE(e->db->flags, 0);
		spin_lock(&e->lock);
		e->kicked = false;
		spin_unlock(&e->lock);
		idle_start = ktime_get_ns();
	}
	return 0;
}

/* The file's engine, created on first use. Under f->lock. */
static struct sv_engine *sv_engine_get(struct sv_file *f)
{
	struct sv_engine *e = f->engine;
	int ret;

	if (e)
		return e;
	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		return ERR_PTR(-ENOMEM);
	e->f = f;
	mutex_init(&e->run_lock);
	spin_lock_init(&e->lock);
	INIT_LIST_HEAD(&e->qps);
	init_waitqueue_head(&e->wait);
	if (!zalloc_cpumask_var(&e->others, GFP_KERNEL)) {
		kfree(e);
		return ERR_PTR(-ENOMEM);
	}
	e->scratch_size = SV_SEND_WQE_MAX;
	e->scratch = kzalloc(e->scratch_size, GFP_KERNEL_ACCOUNT);
	e->exec_buf = kzalloc(sv_exec_buf_size(), GFP_KERNEL_ACCOUNT);
	if (!e->scratch || !e->exec_buf) {
		ret = -ENOMEM;
		goto err_scratch;
	}
	e->db_buf = sv_mbuf_alloc(PAGE_SIZE);
	if (IS_ERR(e->db_buf)) {
		ret = PTR_ERR(e->db_buf);
		goto err_scratch;
	}
	e->db = e->db_buf->vaddr;
	ret = sv_mmap_entry_add(f, e->db_buf, &e->db_offset);
	if (ret)
		goto err_db;
	e->task = kthread_run(sv_engine_thread, e, "softverbs%u-eng",
			      f->sdev->index);
	if (IS_ERR(e->task)) {
		ret = PTR_ERR(e->task);
		goto err_mmap;
	}
	/* The doorbell reads it without f->lock. */
	smp_store_release(&f->engine, e);
	return e;

err_mmap:
	sv_mmap_entry_remove(f, e->db_offset);
err_db:
	sv_mbuf_put(e->db_buf);
err_scratch:
	kfree(e->exec_buf);
	kfree(e->scratch);
	free_cpumask_var(e->others);
	kfree(e);
	return ERR_PTR(ret);
}

static void sv_engine_wake(struct sv_engine *e)
{
	spin_lock(&e->lock);
	e->kicked = true;
	spin_unlock(&e->lock);
	wake_up(&e->wait);
}

void sv_engine_kick(struct sv_file *f)
{
	if (f->engine)
		sv_engine_wake(f->engine);
}

/* The file is closing: stop the engine before its objects go. */
void sv_engine_stop(struct sv_file *f)
{
	struct sv_engine *e = f->engine;

	if (!e)
		return;
	kthread_stop(e->task);
	sv_mmap_entry_remove(f, e->db_offset);
	sv_mbuf_put(e->db_buf);
	kfree(e->exec_buf);
	kfree(e->scratch);
	mutex_destroy(&e->run_lock);
	free_cpumask_var(e->others);
	kfree(e);
	f->engine = NULL;
}

/* ---- QP hooks (qp.c) ---- */

int sv_dp_qp_create(struct sv_file *f, struct sv_qp *qp)
{
	struct sv_engine *e;
	u32 payload;
	int ret;

	e = sv_engine_get(f);
	if (IS_ERR(e))
		return PTR_ERR(e);
	payload = max_t(u32, qp->cap.max_send_sge * sizeof(struct sv_sge),
			qp->cap.max_inline_data);
	/* Three lock classes: an engine holds its SQ and takes an RQ. */
	mutex_init(&qp->sq.lock);
	mutex_init(&qp->rq.lock);
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

/* The QP is complete: the engine may run it. */
void sv_dp_qp_activate(struct sv_file *f, struct sv_qp *qp)
{
	struct sv_engine *e = f->engine;

	spin_lock(&e->lock);
	list_add_tail(&qp->engine_node, &e->qps);
	e->nqps++;
	spin_unlock(&e->lock);
}

/* Undo sv_dp_qp_create() (before activation). */
void sv_dp_qp_abort(struct sv_file *f, struct sv_qp *qp)
{
	sv_wq_fini(f, &qp->sq);
	sv_wq_fini(f, &qp->rq);
	sv_dp_qp_free(qp);
}

static void sv_dp_qp_unlink(struct sv_qp *qp)
{
	struct sv_engine *e = qp->uobj.file->engine;

	if (!e || list_empty(&qp->engine_node))
		return;
	spin_lock(&e->lock);
	list_del_init(&qp->engine_node);
	e->nqps--;
	spin_unlock(&e->lock);
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
	lockdep_assert_held(&wq->lock);
	if (!wq->ring)
		return;
	wq->cons = READ_ONCE(wq->ring->prod);
	/* Every slot is the library's again. */
	smp_store_release(&wq->ring->cons, wq->cons);
	WRITE_ONCE(wq->ring->flags, 0);
}

/* A modify set the destination: the engine's copy, under qp->sq.lock. */
void sv_dp_qp_dest_changed(struct sv_qp *qp)
{
	mutex_lock(&qp->sq.lock);
	spin_lock_bh(&qp->lock);
	qp->dest_qpn = qp->attr.dest_qp_num;
	memcpy(qp->dest_gid, qp->attr.ah_attr.dgid, sizeof(qp->dest_gid));
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
		qp->last_wqe_sent = false;
		qp->waiting = false;
		mutex_unlock(&qp->sq.lock);
		mutex_lock(&qp->rq.lock);
		sv_wq_reset(&qp->rq);
		mutex_unlock(&qp->rq.lock);
	} else if (state == SV_QPS_ERR) {
		WRITE_ONCE(qp->sq.ring->flags, SV_WQ_RING_ERR);
		if (qp->rq.ring)
			WRITE_ONCE(qp->rq.ring->flags, SV_WQ_RING_ERR);
	}
	if (state == SV_QPS_RTS && old_state != SV_QPS_RTS) {
		mutex_lock(&qp->sq.lock);
		sv_qp_reset_retries(qp);
		mutex_unlock(&qp->sq.lock);
	}
	sv_engine_kick(qp->uobj.file);
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
	if (m->type == SV_WQ_QP) {
		u = sv_uobj_get(f, m->handle, SV_OBJ_QP);
		if (IS_ERR(u))
			return PTR_ERR(u);
		qp = container_of(u, struct sv_qp, uobj);
		m->sq_offset = qp->sq.mmap_offset;
		m->sq_len = qp->sq.buf->size;
		if (qp->rq.buf) {
			m->rq_offset = qp->rq.mmap_offset;
			m->rq_len = qp->rq.buf->size;
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
	struct sv_engine *e;

	if (m->reserved)
		return -EINVAL;
	e = sv_engine_get(f);
	if (IS_ERR(e))
		return PTR_ERR(e);
	m->offset = e->db_offset;
	m->len = e->db_buf->size;
	return 0;
}

/* Without f->lock (file.c): the engine, once there, stays until release. */
int sv_ring_doorbell(struct sv_file *f, void *arg)
{
	struct sv_ring_doorbell *d = arg;
	struct sv_engine *e;
	u64 wake = SV_NO_WAKE, now, executed;
	u32 idle;
	bool more;

	if (d->reserved)
		return -EINVAL;
	sv_stat_add(f->sdev, SV_STAT_DOORBELLS, 1);
	/* Pairs with the release store in sv_engine_get(). */
	e = smp_load_acquire(&f->engine);
	if (!e)
		return 0;
	/* Somebody is running a pass: make sure one more follows. */
	if (!mutex_trylock(&e->run_lock)) {
		sv_engine_wake(e);
		return 0;
	}
	executed = e->executed;
	sv_engine_pass(e, SV_DOORBELL_BUDGET, &wake);
	sv_stat_add(f->sdev, SV_STAT_DOORBELL_WQES, e->executed - executed);
	now = ktime_get_ns();
	/* Left over (budget), or a QP backing off: the kthread's job. */
	more = sv_engine_has_work(e) || wake != SV_NO_WAKE;
	/*
	 * Offer the kthread the work at most once per idle time: if it
	 * finds a CPU of its own it polls and the poster stops ringing; if
	 * not, it sleeps again, and a poster that rings for each WR must not
	 * pay a wakeup and two context switches every time. An idle time of
	 * 0 means the kthread never polls: it gets only what is left over.
	 */
	idle = READ_ONCE(f->sdev->idle_us);
	if (idle && now >= e->doorbell_wake_ns) {
		e->doorbell_wake_ns = now + (u64)idle * NSEC_PER_USEC;
		more = true;
	}
	mutex_unlock(&e->run_lock);
	if (more)
		sv_engine_wake(e);
	return 0;
}

u32 sv_default_idle_us(void)
{
	return READ_ONCE(idle_us);
}
