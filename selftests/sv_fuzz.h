/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The softverbs fuzzer's engine, shared by fuzz_test (which runs it in
 * several racing processes and checks that nothing leaked) and
 * killstorm_test (which SIGKILLs it at random points).
 *
 * One worker (fz_worker()) owns a few open files of softverbs0 and maybe
 * one inherited from its parent, shared with the other workers. Each step
 * picks one of:
 *   - a raw ioctl: any SV_NR_* number or an unknown one, with boundary
 *     sizes and a struct of random words biased towards handles (own live
 *     ones, destroyed ones, another type's, another process's), flags,
 *     small numbers and all-ones;
 *   - a mostly-valid structured request (create/modify/destroy of every
 *     object type over real buffers, QP state walks, resize, multicast,
 *     ring and doorbell mapping), whose handles are picked the same way;
 *   - the data path: plausible or random WQEs written into mapped rings,
 *     prod bumped by sane or bogus amounts, the doorbell rung, CQs
 *     consumed; a second thread scribbles on every mapped ring meanwhile;
 *   - mmap at wrong offsets, lengths and protections, munmap, mprotect
 *     and mremap of ring mappings, and a fork whose child touches the
 *     parent's mappings and uses the inherited files;
 *   - close and reopen of one of its files, objects and mappings alive;
 *   - a generic netlink request to the softverbs family with random
 *     attributes.
 * Everything may fail; nothing may crash the worker or the kernel. A
 * signal in the worker (other than in a guarded touch of a mapping) kills
 * it, which the caller reports.
 */
#ifndef SV_FUZZ_H
#define SV_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include "sv_test.h"
#include "softverbs-netlink.h"

#define FZ static __attribute__((unused))

/* ---- randomness: xorshift64*, one state per worker ---- */

FZ uint64_t fz_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Seeds: SV_FUZZ_SEED (decimal or 0x hex), else from the clock. */
FZ uint64_t fz_seed_from_env(void)
{
	const char *s = getenv("SV_FUZZ_SEED");
	struct timespec ts;

	if (s && *s)
		return strtoull(s, NULL, 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000000007ULL) ^ (uint64_t)ts.tv_nsec ^
	       ((uint64_t)getpid() << 32);
}

/* ---- shared statistics, one slot per worker (MAP_SHARED) ---- */

struct fz_stats {
	uint64_t ops;		/* steps, every kind */
	uint64_t ioctls;	/* structured requests */
	uint64_t raw;		/* raw random ioctls */
	uint64_t dp;		/* WQE posts, doorbells, CQ consumption */
	uint64_t scribbles;	/* the scribbler thread's writes */
	uint64_t mmaps;		/* mmap/munmap/mprotect/mremap/touch */
	uint64_t nl;		/* netlink requests */
	uint64_t forks;		/* fork children (each ran some steps) */
	uint64_t reopens;	/* close + reopen of a file */
	uint64_t ok;		/* requests that succeeded */
	uint64_t bad_children;	/* fork children that did not exit 0 */
	uint64_t faults;	/* faults touching a mapping mmap accepted */
	uint64_t rts;		/* QPs moved to RTS */
	uint64_t cqes;		/* CQEs the kernel produced into mapped CQs */
	uint64_t done;		/* set when the worker finished */
	int64_t vmpin_left_kb;	/* VmPin after cleanup minus at start */
};

#define FZ_NFOREIGN	64

/* What the workers share: stats and handles for one another to abuse. */
struct fz_shared {
	uint32_t foreign[FZ_NFOREIGN];
	uint32_t closed;	/* workers that closed all their files */
	uint32_t released;	/* the parent closed the shared file too */
	struct fz_stats st[];
};

/* ---- a worker's view of its objects and mappings ---- */

enum fz_type { FT_NONE, FT_PD, FT_MR, FT_CQ, FT_QP, FT_SRQ, FT_AH, FT_CH,
	       FT_NTYPES };

struct fz_obj {
	uint8_t type, alive, fdi, qpt, state;
	/* MR: an indirect key (1: SV_IOC_CREATE_MKEY) or a window (2) */
	uint8_t mkey;
	uint32_t handle;
	uint32_t qpn;		/* QP */
	uint32_t lkey;		/* MR */
	uint64_t addr, len;	/* MR: iova == addr */
};

enum fz_map_kind { FM_OTHER, FM_SQ, FM_RQ, FM_CQ, FM_DB };

struct fz_map {
	char *p;
	size_t len;
	uint8_t kind, fdi, qpt, writable;
	/* Layout as read at map time: the page's copy may be scribbled on. */
	uint32_t entries, wqe_size, wqe_offset;
	uint32_t prod;		/* SQ/RQ: what we think prod is */
};

#define FZ_NFD		3	/* own files; index 3 is the shared one */
#define FZ_MAXOBJ	256
#define FZ_MAXMAP	48
#define FZ_MAXOFF	64
#define FZ_NBUF		4
#define FZ_BUFLEN	(64 * 1024)
#define FZ_LIVE_CAP	40	/* live objects per file we try to keep under */

struct fz_cfg {
	uint64_t seed;
	uint64_t ops;		/* steps to run; 0: until killed */
	int shared_fd;		/* an inherited file, or -1 */
	int nobody;		/* drop to uid/gid 65534 first */
	int netlink;		/* send netlink requests too */
	int scribbler;		/* run the scribbling thread */
	struct fz_shared *sh;	/* may be NULL */
	int idx;		/* this worker's slot in sh->st */
};

struct fz {
	uint64_t rng;
	const struct fz_cfg *cfg;
	struct fz_stats *st;
	struct fz_stats local;	/* when cfg->sh is NULL */
	int fd[FZ_NFD + 1];
	uint8_t gid[16];
	struct fz_obj o[FZ_MAXOBJ];
	struct fz_map m[FZ_MAXMAP];
	int nmap;
	pthread_mutex_t mlock;	/* m[] and nmap, against the scribbler */
	uint64_t offs[FZ_MAXOFF];	/* mmap offsets the kernel gave us */
	size_t offlen[FZ_MAXOFF];
	int noff;
	uint32_t last_dm;	/* the handle of the last DM allocated */
	uint32_t last_xrcd;	/* ... XRC domain handle opened */
	uint32_t last_tgt;	/* ... XRC TGT QP's number */
	char *buf[FZ_NBUF];
	char *robuf;		/* a read-only page */
	char *hole;		/* an unmapped page */
	char *edge;		/* a page followed by an unmapped one */
	char *arg;		/* raw ioctl argument, SV_MAX_ARG_SIZE + 64 */
	struct mnl_socket *nl;
	uint16_t family;
	unsigned int nlseq;
	char nlbuf[16384];
	int in_child;
	volatile int stop;
	pthread_t scribbler;
};

#define FZ_RND(fz)	fz_next(&(fz)->rng)
#define FZ_N(fz, n)	((uint32_t)(fz_next(&(fz)->rng) % (uint64_t)(n)))
#define FZ_PCT(fz, p)	(FZ_N(fz, 100) < (uint32_t)(p))
#define FZ_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

FZ void fz_count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* ---- guarded touches: a fault there is counted, not fatal ---- */

static __thread sigjmp_buf *fz_guard;

static void fz_fault(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (fz_guard)
		siglongjmp(*fz_guard, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

FZ void fz_install_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fz_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Read (and with write, rewrite) a byte at p; 0 or the signal number. */
FZ int fz_touch(volatile char *p, int write)
{
	sigjmp_buf jb;
	int sig;

	sig = sigsetjmp(jb, 1);
	if (sig) {
		fz_guard = NULL;
		return sig;
	}
	fz_guard = &jb;
	if (write)
		p[0] = p[0];
	else
		(void)p[0];
	fz_guard = NULL;
	return 0;
}

/* ---- object table ---- */

FZ int fz_obj_new(struct fz *fz, int type, int fdi, uint32_t handle)
{
	int i, start = FZ_N(fz, FZ_MAXOBJ);

	for (i = 0; i < FZ_MAXOBJ; i++) {
		struct fz_obj *o = &fz->o[(start + i) % FZ_MAXOBJ];

		if (!o->alive) {
			memset(o, 0, sizeof(*o));
			o->type = type;
			o->alive = 1;
			o->fdi = fdi;
			o->handle = handle;
			if (fz->cfg->sh)
				fz->cfg->sh->foreign[FZ_N(fz, FZ_NFOREIGN)] =
					handle;
			return (start + i) % FZ_MAXOBJ;
		}
	}
	return -1;	/* full: the object lives on untracked */
}

/* A live object of type on file fdi (type 0: any), or NULL. */
FZ struct fz_obj *fz_pick_obj(struct fz *fz, int type, int fdi)
{
	int i, start = FZ_N(fz, FZ_MAXOBJ);

	for (i = 0; i < FZ_MAXOBJ; i++) {
		struct fz_obj *o = &fz->o[(start + i) % FZ_MAXOBJ];

		if (o->alive == 1 && (!type || o->type == type) &&
		    (fdi < 0 || o->fdi == fdi))
			return o;
	}
	return NULL;
}

/* A dead (destroyed) object of type, for its stale handle. */
FZ struct fz_obj *fz_pick_dead(struct fz *fz, int type)
{
	int i, start = FZ_N(fz, FZ_MAXOBJ);

	for (i = 0; i < FZ_MAXOBJ; i++) {
		struct fz_obj *o = &fz->o[(start + i) % FZ_MAXOBJ];

		if (!o->alive && o->type == type && o->handle)
			return o;
	}
	return NULL;
}

FZ int fz_live_on(struct fz *fz, int fdi)
{
	int i, n = 0;

	for (i = 0; i < FZ_MAXOBJ; i++)
		n += fz->o[i].alive && fz->o[i].fdi == fdi;
	return n;
}

/*
 * A handle for an argument that wants type: mostly a live one of this
 * file, else a destroyed one, another type's, another process's, or a
 * number.
 */
FZ uint32_t fz_handle(struct fz *fz, int type, int fdi)
{
	uint32_t r = FZ_N(fz, 100);
	struct fz_obj *o;

	if (r < 62) {
		o = fz_pick_obj(fz, type, fdi);
		if (o)
			return o->handle;
	} else if (r < 70) {
		o = fz_pick_dead(fz, type);
		if (o)
			return o->handle;
	} else if (r < 78) {
		o = fz_pick_obj(fz, FZ_N(fz, FT_NTYPES - 1) + 1, -1);
		if (o)
			return o->handle;
	} else if (r < 85 && fz->cfg->sh) {
		return fz->cfg->sh->foreign[FZ_N(fz, FZ_NFOREIGN)];
	}
	switch (FZ_N(fz, 5)) {
	case 0: return 0;
	case 1: return UINT32_MAX;
	case 2: return FZ_N(fz, 64) + 1;
	case 3: return 0x80000000U | FZ_N(fz, 16);
	default: return (uint32_t)FZ_RND(fz);
	}
}

/* A number an ioctl field might choke on. */
FZ uint64_t fz_word(struct fz *fz)
{
	switch (FZ_N(fz, 12)) {
	case 0: return 0;
	case 1: return UINT64_MAX;
	case 2: return UINT32_MAX;
	case 3: return FZ_N(fz, 8);
	case 4: return FZ_N(fz, 70000);
	case 5: return 1ULL << FZ_N(fz, 64);
	case 6: return 0x7fffffff;
	case 7: return (uint64_t)(uintptr_t)fz->buf[FZ_N(fz, FZ_NBUF)] +
		       FZ_N(fz, FZ_BUFLEN);
	case 8: return fz_handle(fz, FZ_N(fz, FT_NTYPES - 1) + 1, -1);
	default: return FZ_RND(fz);
	}
}

FZ int fz_fdi(struct fz *fz)
{
	if (fz->fd[FZ_NFD] >= 0 && FZ_PCT(fz, 15))
		return FZ_NFD;
	return FZ_N(fz, FZ_NFD);
}

/* An ioctl on file fdi: 0 or errno; counted. */
FZ int fz_ioc(struct fz *fz, int fdi, unsigned long req, void *arg)
{
	int ret = ioctl(fz->fd[fdi], req, arg) ? errno : 0;

	fz_count(&fz->st->ioctls);
	if (!ret)
		fz_count(&fz->st->ok);
	return ret;
}

FZ void fz_add_off(struct fz *fz, uint64_t off, size_t len)
{
	int i = fz->noff < FZ_MAXOFF ? fz->noff++ : (int)FZ_N(fz, FZ_MAXOFF);

	fz->offs[i] = off;
	fz->offlen[i] = len;
}

/* ---- mappings ---- */

/* Map off/len of file fdi for the data path; the mapping's index or -1. */
FZ int fz_map(struct fz *fz, int fdi, uint64_t off, size_t len, int kind,
	      int qpt)
{
	struct fz_map *m;
	char *p;
	int i;

	fz_add_off(fz, off, len);
	if (!len || len > (64U << 20))
		return -1;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fz->fd[fdi],
		 off);
	fz_count(&fz->st->mmaps);
	if (p == MAP_FAILED)
		return -1;
	pthread_mutex_lock(&fz->mlock);
	if (fz->nmap == FZ_MAXMAP) {
		pthread_mutex_unlock(&fz->mlock);
		munmap(p, len);
		return -1;
	}
	i = fz->nmap++;
	m = &fz->m[i];
	memset(m, 0, sizeof(*m));
	m->p = p;
	m->len = len;
	m->kind = kind;
	m->fdi = fdi;
	m->qpt = qpt;
	m->writable = 1;
	if (kind == FM_SQ || kind == FM_RQ) {
		struct sv_wq_ring *r = (struct sv_wq_ring *)p;

		m->entries = r->entries;
		m->wqe_size = r->wqe_size;
		m->wqe_offset = r->wqe_offset;
		m->prod = r->prod;
		/* Nothing we can trust: treat it as an unknown mapping. */
		if (!m->entries || (m->entries & (m->entries - 1)) ||
		    m->wqe_size < sizeof(struct sv_send_wqe) ||
		    (uint64_t)m->wqe_offset +
		    (uint64_t)m->entries * m->wqe_size > len)
			m->kind = FM_OTHER;
	} else if (kind == FM_CQ) {
		struct sv_cq_ring *r = (struct sv_cq_ring *)p;

		m->entries = r->entries;
	}
	pthread_mutex_unlock(&fz->mlock);
	return i;
}

/* Under mlock. */
FZ void fz_unmap_locked(struct fz *fz, int i)
{
	munmap(fz->m[i].p, fz->m[i].len);
	fz->m[i] = fz->m[--fz->nmap];
}

FZ void fz_unmap_all(struct fz *fz)
{
	pthread_mutex_lock(&fz->mlock);
	while (fz->nmap)
		fz_unmap_locked(fz, fz->nmap - 1);
	pthread_mutex_unlock(&fz->mlock);
}

/* ---- structured requests ---- */

static const uint32_t fz_access[] = {
	0, SV_ACCESS_LOCAL_WRITE,
	SV_ACCESS_LOCAL_WRITE | SV_ACCESS_REMOTE_WRITE | SV_ACCESS_REMOTE_READ,
	SV_ACCESS_LOCAL_WRITE | SV_ACCESS_REMOTE_WRITE |
		SV_ACCESS_REMOTE_READ | SV_ACCESS_REMOTE_ATOMIC,
	SV_ACCESS_REMOTE_WRITE, SV_ACCESS_ZERO_BASED | SV_ACCESS_LOCAL_WRITE,
	SV_ACCESS_ON_DEMAND, SV_ACCESS_RELAXED_ORDERING | SV_ACCESS_LOCAL_WRITE,
	SV_ACCESS_ON_DEMAND | SV_ACCESS_LOCAL_WRITE | SV_ACCESS_REMOTE_WRITE |
		SV_ACCESS_REMOTE_READ | SV_ACCESS_REMOTE_ATOMIC,
	SV_ACCESS_MW_BIND, SV_ACCESS_HUGETLB, 0x80000000U, 0xffffffffU,
};

FZ uint32_t fz_pick_access(struct fz *fz)
{
	if (FZ_PCT(fz, 60))
		return fz_access[3];
	return fz_access[FZ_N(fz, FZ_ARRAY_SIZE(fz_access))];
}

/* An [addr, len) for registration: mostly inside a buffer. */
FZ void fz_pick_range(struct fz *fz, __u64 *addr, __u64 *len)
{
	char *b = fz->buf[FZ_N(fz, FZ_NBUF)];
	uint64_t off = FZ_N(fz, FZ_BUFLEN);

	switch (FZ_N(fz, 14)) {
	case 0: *addr = (uintptr_t)fz->robuf; *len = 4096; return;
	case 1: *addr = (uintptr_t)fz->hole; *len = 4096; return;
	case 2: *addr = (uintptr_t)b; *len = 0; return;
	case 3: *addr = UINT64_MAX - 4095; *len = 8192; return;
	case 4: *addr = (uintptr_t)b; *len = SV_MAX_MR_SIZE + 1; return;
	case 5: *addr = (uintptr_t)fz->edge; *len = 8192; return;
	case 6: *addr = FZ_RND(fz); *len = FZ_N(fz, 1 << 20) + 1; return;
	default:
		*addr = (uintptr_t)b + off;
		*len = FZ_N(fz, FZ_BUFLEN - off) + 1;
	}
}

FZ void fz_alloc_pd(struct fz *fz, int fdi)
{
	struct sv_alloc_pd a = { .size = sizeof(a) };

	if (FZ_PCT(fz, 3))
		a.reserved = FZ_RND(fz);
	if (!fz_ioc(fz, fdi, SV_IOC_ALLOC_PD, &a))
		fz_obj_new(fz, FT_PD, fdi, a.pd_handle);
}

FZ void fz_reg_mr(struct fz *fz, int fdi)
{
	struct sv_reg_mr r = { .size = sizeof(r) };
	int i;

	r.pd_handle = fz_handle(fz, FT_PD, fdi);
	fz_pick_range(fz, &r.addr, &r.length);
	r.access = fz_pick_access(fz);
	r.iova = FZ_PCT(fz, 85) ? r.addr : fz_word(fz);
	if (!fz_ioc(fz, fdi, SV_IOC_REG_MR, &r)) {
		i = fz_obj_new(fz, FT_MR, fdi, r.mr_handle);
		if (i >= 0) {
			fz->o[i].lkey = r.lkey;
			fz->o[i].addr = r.access & SV_ACCESS_ZERO_BASED ?
					0 : r.iova;
			fz->o[i].len = r.length;
		}
	}
}

/* An indirect key: an MR object with a zero-based, guessed length. */
FZ void fz_create_mkey(struct fz *fz, int fdi)
{
	struct sv_create_mkey c = { .size = sizeof(c) };
	int i;

	c.pd_handle = fz_handle(fz, FT_PD, fdi);
	c.max_entries = FZ_PCT(fz, 90) ? FZ_N(fz, 9) :
			FZ_PCT(fz, 50) ? SV_MAX_MKEY_ENTRIES + FZ_N(fz, 2) :
			(uint32_t)fz_word(fz);
	if (FZ_PCT(fz, 3))
		c.flags = 1;
	if (FZ_PCT(fz, 3))
		c.reserved = 1;
	if (fz_ioc(fz, fdi, SV_IOC_CREATE_MKEY, &c))
		return;
	i = fz_obj_new(fz, FT_MR, fdi, c.mkey_handle);
	if (i >= 0) {
		fz->o[i].mkey = 1;
		fz->o[i].lkey = c.key;
		fz->o[i].len = FZ_N(fz, 8192) + 1;
	}
}

/* A memory window: an MR object whose key opens nothing until bound. */
FZ void fz_alloc_mw(struct fz *fz, int fdi)
{
	struct sv_alloc_mw c = { .size = sizeof(c) };
	int i;

	c.pd_handle = fz_handle(fz, FT_PD, fdi);
	c.type = FZ_PCT(fz, 95) ? FZ_N(fz, 2) + SV_MW_TYPE_1 :
		 (uint32_t)fz_word(fz);
	if (FZ_PCT(fz, 3))
		c.reserved = 1;
	if (fz_ioc(fz, fdi, SV_IOC_ALLOC_MW, &c))
		return;
	i = fz_obj_new(fz, FT_MR, fdi, c.mw_handle);
	if (i >= 0) {
		fz->o[i].mkey = 2;
		fz->o[i].lkey = c.rkey;
		fz->o[i].len = FZ_N(fz, 8192) + 1;
	}
}

FZ void fz_rereg_mr(struct fz *fz, int fdi)
{
	struct sv_rereg_mr r = { .size = sizeof(r) };
	struct fz_obj *o = fz_pick_obj(fz, FT_MR, fdi);

	r.mr_handle = o && FZ_PCT(fz, 80) ? o->handle : fz_handle(fz, FT_MR, fdi);
	r.flags = FZ_PCT(fz, 90) ? FZ_N(fz, 8) : (uint32_t)fz_word(fz);
	if (r.flags & SV_REREG_MR_CHANGE_PD)
		r.pd_handle = fz_handle(fz, FT_PD, fdi);
	if (r.flags & SV_REREG_MR_CHANGE_TRANSLATION) {
		fz_pick_range(fz, &r.addr, &r.length);
		r.iova = r.addr;
	}
	if (r.flags & SV_REREG_MR_CHANGE_ACCESS)
		r.access = fz_pick_access(fz);
	if (FZ_PCT(fz, 5))
		r.reserved = 1;
	if (!fz_ioc(fz, fdi, SV_IOC_REREG_MR, &r) && o &&
	    o->handle == r.mr_handle && (r.flags & SV_REREG_MR_CHANGE_TRANSLATION)) {
		o->addr = r.iova;
		o->len = r.length;
	}
	if (o && o->handle == r.mr_handle)
		o->lkey = r.lkey ? r.lkey : o->lkey;
}

/* Destroy one object (of type, or any): mark it dead on success. */
FZ void fz_destroy(struct fz *fz, int fdi, int type)
{
	struct fz_obj *o = fz_pick_obj(fz, type, fdi);
	uint32_t h = o && FZ_PCT(fz, 85) ? o->handle :
		     fz_handle(fz, type ? type : FT_PD, fdi);
	union {
		struct sv_dealloc_pd pd;
		struct sv_dereg_mr mr;
		struct sv_destroy_cq cq;
		struct sv_destroy_qp qp;
		struct sv_destroy_srq srq;
		struct sv_destroy_ah ah;
		struct sv_destroy_comp_channel ch;
		struct sv_destroy_mkey mk;
		struct sv_dealloc_mw mw;
	} u;
	unsigned long req;
	int t = o ? o->type : type, ret;

	memset(&u, 0, sizeof(u));
	switch (t) {
	case FT_PD: req = SV_IOC_DEALLOC_PD; u.pd.size = sizeof(u.pd);
		u.pd.pd_handle = h; break;
	case FT_MR:
		if (o && o->mkey == 2 && FZ_PCT(fz, 90)) {
			req = SV_IOC_DEALLOC_MW;
			u.mw.size = sizeof(u.mw);
			u.mw.mw_handle = h;
			break;
		}
		if (o && o->mkey && FZ_PCT(fz, 90)) {
			req = SV_IOC_DESTROY_MKEY;
			u.mk.size = sizeof(u.mk);
			u.mk.mkey_handle = h;
			break;
		}
		req = SV_IOC_DEREG_MR; u.mr.size = sizeof(u.mr);
		u.mr.mr_handle = h; break;
	case FT_CQ: req = SV_IOC_DESTROY_CQ; u.cq.size = sizeof(u.cq);
		u.cq.handle = h; break;
	case FT_QP: req = SV_IOC_DESTROY_QP; u.qp.size = sizeof(u.qp);
		u.qp.handle = h; break;
	case FT_SRQ: req = SV_IOC_DESTROY_SRQ; u.srq.size = sizeof(u.srq);
		u.srq.handle = h; break;
	case FT_AH: req = SV_IOC_DESTROY_AH; u.ah.size = sizeof(u.ah);
		u.ah.handle = h; break;
	case FT_CH: req = SV_IOC_DESTROY_COMP_CHANNEL;
		u.ch.size = sizeof(u.ch); u.ch.handle = h; break;
	default:
		return;
	}
	ret = fz_ioc(fz, fdi, req, &u);
	if (!ret && o && o->handle == h)
		o->alive = 0;
	else if (ret == ENOENT && o && o->handle == h)
		o->alive = 0;	/* a sibling sharing the file took it */
}

FZ void fz_create_cq(struct fz *fz, int fdi)
{
	static const uint32_t cqes[] = { 0, 1, 2, 7, 16, 64, 255, 1024,
					 SV_DEFAULT_MAX_CQE, SV_DEFAULT_MAX_CQE + 1,
					 UINT32_MAX };
	struct sv_create_cq c = { .size = sizeof(c) };

	c.cqe = FZ_PCT(fz, 70) ? FZ_N(fz, 128) + 1 :
		cqes[FZ_N(fz, FZ_ARRAY_SIZE(cqes))];
	c.channel = FZ_PCT(fz, 70) ? 0 : fz_handle(fz, FT_CH, fdi);
	c.comp_vector = FZ_PCT(fz, 95) ? 0 : (uint32_t)fz_word(fz);
	c.flags = FZ_PCT(fz, 80) ? 0 : FZ_N(fz, 4);
	c.wc_flags = FZ_PCT(fz, 70) ? 0 : FZ_PCT(fz, 80) ?
		     (FZ_RND(fz) & SV_CQ_WC_FLAGS_SUPPORTED) : fz_word(fz);
	c.user_handle = FZ_RND(fz);
	if (FZ_PCT(fz, 3))
		c.reserved = 1;
	if (fz_ioc(fz, fdi, SV_IOC_CREATE_CQ, &c))
		return;
	fz_obj_new(fz, FT_CQ, fdi, c.handle);
	if (FZ_PCT(fz, 60))
		fz_map(fz, fdi, c.mmap_offset, c.mmap_len, FM_CQ, 0);
	else
		fz_add_off(fz, c.mmap_offset, c.mmap_len);
}

FZ void fz_resize_cq(struct fz *fz, int fdi)
{
	struct sv_resize_cq r = { .size = sizeof(r) };

	r.handle = fz_handle(fz, FT_CQ, fdi);
	r.cqe = FZ_PCT(fz, 80) ? FZ_N(fz, 256) + 1 : (uint32_t)fz_word(fz);
	if (fz_ioc(fz, fdi, SV_IOC_RESIZE_CQ, &r))
		return;
	if (FZ_PCT(fz, 50))
		fz_map(fz, fdi, r.mmap_offset, r.mmap_len, FM_CQ, 0);
	else
		fz_add_off(fz, r.mmap_offset, r.mmap_len);
}

FZ void fz_modify_cq(struct fz *fz, int fdi)
{
	struct sv_modify_cq m = { .size = sizeof(m) };

	m.handle = fz_handle(fz, FT_CQ, fdi);
	m.attr_mask = FZ_PCT(fz, 90) ? SV_CQ_MODERATE : (uint32_t)fz_word(fz);
	m.cq_count = FZ_PCT(fz, 30) ? 0 : (uint16_t)FZ_N(fz, 70000);
	m.cq_period = FZ_PCT(fz, 30) ? 0 : (uint16_t)FZ_N(fz, 5000);
	if (FZ_PCT(fz, 3))
		m.reserved = 1;
	fz_ioc(fz, fdi, SV_IOC_MODIFY_CQ, &m);
}

FZ void fz_create_channel(struct fz *fz, int fdi)
{
	struct sv_create_comp_channel c = { .size = sizeof(c) };

	c.flags = FZ_PCT(fz, 90) ? FZ_N(fz, 2) : (uint32_t)fz_word(fz);
	if (fz_ioc(fz, fdi, SV_IOC_CREATE_COMP_CHANNEL, &c))
		return;
	fz_obj_new(fz, FT_CH, fdi, c.handle);
	/* The channel lives on with its handle; the fd may go now or never. */
	if (c.fd >= 0 && FZ_PCT(fz, 80))
		close(c.fd);
	else if (c.fd >= 0)
		fcntl(c.fd, F_SETFD, FD_CLOEXEC);
}

FZ void fz_async_fd(struct fz *fz, int fdi)
{
	struct sv_get_async_fd g = { .size = sizeof(g) };
	char ev[64];

	g.flags = FZ_PCT(fz, 90) ? SV_EVENT_FD_NONBLOCK : (uint32_t)fz_word(fz);
	if (fz_ioc(fz, fdi, SV_IOC_GET_ASYNC_FD, &g) || g.fd < 0)
		return;
	if (g.flags & SV_EVENT_FD_NONBLOCK)
		while (read(g.fd, ev, sizeof(ev)) > 0)
			;
	close(g.fd);
}

FZ void fz_map_wq(struct fz *fz, int fdi, int srq, uint32_t h, int qpt)
{
	struct sv_map_wq m = { .size = sizeof(m) };

	m.type = srq;
	m.handle = h;
	if (FZ_PCT(fz, 3))
		m.type = (uint32_t)fz_word(fz);
	if (fz_ioc(fz, fdi, SV_IOC_MAP_WQ, &m))
		return;
	if (m.sq_len) {
		if (FZ_PCT(fz, 85))
			fz_map(fz, fdi, m.sq_offset, m.sq_len, FM_SQ, qpt);
		else
			fz_add_off(fz, m.sq_offset, m.sq_len);
	}
	if (m.rq_len) {
		if (FZ_PCT(fz, 85))
			fz_map(fz, fdi, m.rq_offset, m.rq_len, FM_RQ, qpt);
		else
			fz_add_off(fz, m.rq_offset, m.rq_len);
	}
}

FZ void fz_map_db(struct fz *fz, int fdi)
{
	struct sv_map_doorbell d = { .size = sizeof(d) };

	if (FZ_PCT(fz, 3))
		d.flags = FZ_RND(fz);
	else if (FZ_PCT(fz, 50))
		d.flags = SV_MAP_DOORBELL_HINTS;
	if (fz_ioc(fz, fdi, SV_IOC_MAP_DOORBELL, &d))
		return;
	if (FZ_PCT(fz, 70))
		fz_map(fz, fdi, d.offset, d.len, FM_DB, 0);
	else
		fz_add_off(fz, d.offset, d.len);
}

FZ void fz_doorbell(struct fz *fz, int fdi)
{
	struct sv_ring_doorbell d = { .size = sizeof(d) };

	if (FZ_PCT(fz, 3))
		d.flags = FZ_RND(fz);
	else if (FZ_PCT(fz, 30))
		d.flags = SV_RING_DRIVE;
	else if (FZ_PCT(fz, 40))
		d.flags = SV_RING_QP;
	if (d.flags & SV_RING_DRIVE)
		d.cq_handle = fz_handle(fz, FT_CQ, fdi);
	/* Mostly a slot a QP may hold; sometimes anything. */
	if (d.flags & SV_RING_QP)
		d.qp_slot = FZ_PCT(fz, 90) ? FZ_RND(fz) % 64 : FZ_RND(fz);
	fz_ioc(fz, fdi, SV_IOC_DOORBELL, &d);
	fz_count(&fz->st->dp);
}

FZ void fz_create_qp(struct fz *fz, int fdi)
{
	static const uint32_t types[] = { SV_QPT_RC, SV_QPT_UC, SV_QPT_UD };
	static const uint32_t odd_types[] = { 0, 1, SV_QPT_RAW_PACKET,
		SV_QPT_XRC_SEND, SV_QPT_XRC_RECV, SV_QPT_DRIVER, UINT32_MAX,
		SV_QPT_DCI, SV_QPT_DCT, SV_QPT_DCI, SV_QPT_DCT };
	struct sv_create_qp c = { .size = sizeof(c) };
	int i;

	c.qp_type = FZ_PCT(fz, 93) ? types[FZ_N(fz, 3)] :
		    odd_types[FZ_N(fz, FZ_ARRAY_SIZE(odd_types))];
	c.pd_handle = fz_handle(fz, FT_PD, fdi);
	c.send_cq_handle = fz_handle(fz, FT_CQ, fdi);
	c.recv_cq_handle = FZ_PCT(fz, 50) ? c.send_cq_handle :
			   fz_handle(fz, FT_CQ, fdi);
	c.srq_handle = FZ_PCT(fz, 75) ? 0 : fz_handle(fz, FT_SRQ, fdi);
	c.flags = FZ_N(fz, 2);
	if (FZ_PCT(fz, 4))
		c.flags = (uint32_t)fz_word(fz);
	if (FZ_PCT(fz, 4))
		c.create_flags = (uint32_t)fz_word(fz);
	if (FZ_PCT(fz, 90)) {
		c.cap.max_send_wr = FZ_N(fz, 64) + 1;
		c.cap.max_recv_wr = FZ_N(fz, 64) + 1;
		c.cap.max_send_sge = FZ_N(fz, 5);
		c.cap.max_recv_sge = FZ_N(fz, 5);
		c.cap.max_inline_data = FZ_PCT(fz, 50) ? 0 : FZ_N(fz, 300);
	} else {
		c.cap.max_send_wr = (uint32_t)fz_word(fz);
		c.cap.max_recv_wr = (uint32_t)fz_word(fz);
		c.cap.max_send_sge = (uint32_t)fz_word(fz);
		c.cap.max_recv_sge = (uint32_t)fz_word(fz);
		c.cap.max_inline_data = (uint32_t)fz_word(fz);
	}
	c.user_handle = FZ_RND(fz);
	/* an XRC domain handle: XRC_RECV only */
	if (FZ_PCT(fz, 3))
		c.xrcd_handle = FZ_PCT(fz, 50) ? FZ_N(fz, 8) :
				(uint32_t)fz_word(fz);
	/* TSO headers: RAW_PACKET only (EINVAL here) */
	if (FZ_PCT(fz, 3))
		c.max_tso_header = FZ_PCT(fz, 50) ? FZ_N(fz, 300) :
				   (uint32_t)fz_word(fz);
	/* SOURCE_QPN: UD only, a QPN from 2 to 0xfffffe */
	if (FZ_PCT(fz, 3)) {
		c.create_flags |= FZ_PCT(fz, 80) ? 1 << 10 : 0;
		c.source_qpn = FZ_PCT(fz, 50) ? FZ_N(fz, 4) :
			       (uint32_t)fz_word(fz);
	}
	/* DC: a key (DCT), streams (DCI), or both on the wrong type */
	if (FZ_PCT(fz, 10))
		c.dc_access_key = fz_word(fz);
	if (FZ_PCT(fz, 10)) {
		c.dci_log_streams = FZ_N(fz, 6);
		c.dci_log_errored = FZ_N(fz, 6);
	}
	if (FZ_PCT(fz, 2))
		c.reserved2[FZ_N(fz, 6)] = 1;
	if (fz_ioc(fz, fdi, SV_IOC_CREATE_QP, &c))
		return;
	i = fz_obj_new(fz, FT_QP, fdi, c.handle);
	if (i >= 0) {
		fz->o[i].qpn = c.qpn;
		fz->o[i].qpt = c.qp_type;
		fz->o[i].state = SV_QPS_RESET;
	}
	if (FZ_PCT(fz, 75))
		fz_map_wq(fz, fdi, SV_WQ_QP, c.handle, c.qp_type);
}

FZ void fz_av(struct fz *fz, struct sv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	memcpy(ah->dgid, fz->gid, 16);
	ah->is_global = 1;
	ah->port_num = 1;
	ah->sgid_index = 1;
	ah->hop_limit = 64;
	ah->flow_label = FZ_PCT(fz, 80) ? FZ_N(fz, 1 << 20) : (uint32_t)FZ_RND(fz);
	ah->sl = FZ_N(fz, 16);
	if (FZ_PCT(fz, 10)) {
		switch (FZ_N(fz, 9)) {
		case 0: ah->is_global = 0; break;
		case 1: ah->port_num = FZ_N(fz, 256); break;
		case 2: ah->sgid_index = FZ_N(fz, 256); break;
		case 3: ah->reserved[FZ_N(fz, 2)] = 1; break;
		case 4: ah->dgid[0] = 0xff; break;
		case 5: ah->sl = FZ_N(fz, 256); break;
		case 6: ah->static_rate = FZ_N(fz, 256); break;
		case 7: ah->dlid = FZ_N(fz, 65536); break;
		default: memset(ah->dgid, 0, 16); break;
		}
	}
}

/* A QP number to connect to: a live QP's of this type, or odd ones. */
FZ uint32_t fz_peer_qpn(struct fz *fz, int qpt)
{
	int i, start = FZ_N(fz, FZ_MAXOBJ);

	if (FZ_PCT(fz, 90)) {
		for (i = 0; i < FZ_MAXOBJ; i++) {
			struct fz_obj *o = &fz->o[(start + i) % FZ_MAXOBJ];

			if (o->alive && o->type == FT_QP && o->qpt == qpt)
				return o->qpn;
		}
	}
	switch (FZ_N(fz, 4)) {
	case 0: return 1;
	case 1: return SV_QPN_MASK;
	case 2: return UINT32_MAX;
	default: return FZ_N(fz, 1 << 24);
	}
}

/* Attributes of the state walk RESET -> INIT -> RTR -> RTS (-> SQD). */
/* Pace a QP (kernel/pace.c): mostly rates that let traffic through. */
FZ void fz_rate_limit(struct fz *fz, int fdi)
{
	struct sv_qp_rate_limit r = { .size = sizeof(r) };

	r.handle = fz_handle(fz, FT_QP, fdi);
	r.rate_limit = FZ_PCT(fz, 20) ? 0 : FZ_PCT(fz, 80) ?
		       SV_QP_RATE_LIMIT_MIN * 1000 + FZ_N(fz, 10000000) :
		       (uint32_t)fz_word(fz);
	r.max_burst_sz = FZ_PCT(fz, 50) ? 0 : (uint32_t)fz_word(fz);
	r.typical_pkt_sz = (uint16_t)fz_word(fz);
	if (FZ_PCT(fz, 3))
		r.reserved = 1;
	fz_ioc(fz, fdi, SV_IOC_QP_RATE_LIMIT, &r);
}

FZ void fz_modify_qp(struct fz *fz, int fdi)
{
	struct sv_modify_qp m = { .size = sizeof(m) };
	struct fz_obj *o = fz_pick_obj(fz, FT_QP, fdi);
	struct sv_qp_attr *a = &m.attr;
	uint32_t next;
	int qpt;

	if (!o || FZ_PCT(fz, 10)) {
		/* Anything at all. */
		m.handle = fz_handle(fz, FT_QP, fdi);
		m.attr_mask = FZ_PCT(fz, 50) ? (uint32_t)FZ_RND(fz) &
			      0x21fffff : (uint32_t)fz_word(fz);
		a->qp_state = FZ_N(fz, 8);
		a->cur_qp_state = FZ_N(fz, 8);
		a->path_mtu = FZ_N(fz, 7);
		a->qkey = (uint32_t)fz_word(fz);
		a->dest_qp_num = fz_peer_qpn(fz, SV_QPT_RC);
		a->qp_access_flags = (uint32_t)fz_word(fz);
		a->pkey_index = FZ_N(fz, 3);
		a->port_num = FZ_N(fz, 3);
		a->timeout = FZ_N(fz, 32);
		a->retry_cnt = FZ_N(fz, 9);
		a->rnr_retry = FZ_N(fz, 7);
		a->max_rd_atomic = FZ_N(fz, 20);
		a->max_dest_rd_atomic = FZ_N(fz, 20);
		a->min_rnr_timer = FZ_N(fz, 32);
		a->rate_limit = (uint32_t)fz_word(fz);
		fz_av(fz, &a->ah_attr);
		fz_av(fz, &a->alt_ah_attr);
		fz_ioc(fz, fdi, SV_IOC_MODIFY_QP, &m);
		return;
	}
	qpt = o->qpt;
	m.handle = o->handle;
	switch (o->state) {
	case SV_QPS_RESET: next = SV_QPS_INIT; break;
	case SV_QPS_INIT: next = SV_QPS_RTR; break;
	case SV_QPS_RTR: next = SV_QPS_RTS; break;
	case SV_QPS_RTS: next = FZ_PCT(fz, 30) ? SV_QPS_SQD : SV_QPS_RTS; break;
	case SV_QPS_SQD: next = SV_QPS_RTS; break;
	default: next = SV_QPS_RESET; break;
	}
	if (FZ_PCT(fz, 6))
		next = SV_QPS_ERR;
	else if (FZ_PCT(fz, 4))
		next = SV_QPS_RESET;
	a->qp_state = next;
	m.attr_mask = SV_QP_STATE;
	switch (next) {
	case SV_QPS_INIT:
		if (o->state != SV_QPS_RESET)
			break;
		m.attr_mask |= SV_QP_PKEY_INDEX | SV_QP_PORT;
		a->port_num = 1;
		if (qpt == SV_QPT_UD) {
			m.attr_mask |= SV_QP_QKEY;
			a->qkey = FZ_PCT(fz, 90) ? 0x1234 : (uint32_t)FZ_RND(fz);
		} else {
			m.attr_mask |= SV_QP_ACCESS_FLAGS;
			a->qp_access_flags = FZ_PCT(fz, 80) ? 0xf : FZ_N(fz, 16);
		}
		break;
	case SV_QPS_RTR:
		if (qpt == SV_QPT_UD)
			break;
		m.attr_mask |= SV_QP_AV | SV_QP_PATH_MTU | SV_QP_DEST_QPN |
			       SV_QP_RQ_PSN;
		fz_av(fz, &a->ah_attr);
		a->path_mtu = FZ_PCT(fz, 90) ? SV_MTU_4096 : FZ_N(fz, 8);
		a->dest_qp_num = fz_peer_qpn(fz, qpt);
		a->rq_psn = (uint32_t)FZ_RND(fz);
		if (qpt == SV_QPT_RC) {
			m.attr_mask |= SV_QP_MAX_DEST_RD_ATOMIC |
				       SV_QP_MIN_RNR_TIMER;
			a->max_dest_rd_atomic = FZ_N(fz, 17);
			a->min_rnr_timer = FZ_N(fz, 32);
		}
		break;
	case SV_QPS_RTS:
		if (o->state != SV_QPS_RTR)
			break;
		m.attr_mask |= SV_QP_SQ_PSN;
		a->sq_psn = (uint32_t)FZ_RND(fz);
		if (qpt == SV_QPT_RC) {
			m.attr_mask |= SV_QP_TIMEOUT | SV_QP_RETRY_CNT |
				       SV_QP_RNR_RETRY | SV_QP_MAX_QP_RD_ATOMIC;
			a->timeout = FZ_N(fz, 9);
			a->retry_cnt = FZ_N(fz, 8);
			a->rnr_retry = FZ_N(fz, 7);	/* 7 is forever */
			a->max_rd_atomic = FZ_N(fz, 17);
		}
		break;
	case SV_QPS_SQD:
		if (FZ_PCT(fz, 50)) {
			m.attr_mask |= SV_QP_EN_SQD_ASYNC_NOTIFY;
			a->en_sqd_async_notify = 1;
		}
		break;
	default:
		break;
	}
	/* Now and then one wrong bit or value. */
	if (FZ_PCT(fz, 12))
		m.attr_mask ^= 1U << FZ_N(fz, 26);
	if (FZ_PCT(fz, 5))
		a->cur_qp_state = FZ_N(fz, 8), m.attr_mask |= SV_QP_CUR_STATE;
	if (FZ_PCT(fz, 3))
		m.reserved = 1;
	if (FZ_PCT(fz, 3))
		a->reserved = 1;
	if (!fz_ioc(fz, fdi, SV_IOC_MODIFY_QP, &m) &&
	    (m.attr_mask & SV_QP_STATE)) {
		o->state = a->qp_state;
		if (o->state == SV_QPS_RTS)
			fz_count(&fz->st->rts);
	}
}

FZ void fz_query_qp(struct fz *fz, int fdi)
{
	struct sv_query_qp q = { .size = sizeof(q) };
	struct fz_obj *o = fz_pick_obj(fz, FT_QP, fdi);

	q.handle = o && FZ_PCT(fz, 80) ? o->handle : fz_handle(fz, FT_QP, fdi);
	q.attr_mask = (uint32_t)FZ_RND(fz);
	if (!fz_ioc(fz, fdi, SV_IOC_QUERY_QP, &q) && o &&
	    o->handle == q.handle)
		o->state = q.attr.qp_state;	/* the engine may have moved it */
}

FZ void fz_sge(struct fz *fz, int fdi, struct sv_sge *s, uint32_t maxlen);

/* ibv_post_srq_ops on any SRQ: tags 0..3 that the data path's TMHs use */
FZ void fz_srq_ops(struct fz *fz, int fdi)
{
	struct sv_srq_op ops[8];
	struct sv_post_srq_ops p = { .size = sizeof(p) };
	uint32_t i, n = FZ_N(fz, 8) + 1;

	memset(ops, 0, sizeof(ops));
	for (i = 0; i < n; i++) {
		ops[i].wr_id = FZ_RND(fz);
		ops[i].recv_wr_id = FZ_RND(fz);
		ops[i].opcode = FZ_PCT(fz, 95) ? FZ_N(fz, 3) :
				(uint32_t)fz_word(fz);
		ops[i].flags = FZ_PCT(fz, 95) ? FZ_N(fz, 4) :
			       (uint32_t)fz_word(fz);
		ops[i].unexpected_cnt = FZ_N(fz, 4);
		ops[i].handle = FZ_PCT(fz, 80) ? FZ_N(fz, 8) |
				(FZ_N(fz, 3) << 10) : (uint32_t)fz_word(fz);
		ops[i].tag = FZ_N(fz, 4);
		ops[i].mask = FZ_PCT(fz, 80) ? ~0ULL : FZ_RND(fz);
		ops[i].num_sge = FZ_PCT(fz, 95) ? FZ_N(fz, 3) :
				 (uint32_t)fz_word(fz);
		fz_sge(fz, fdi, &ops[i].sge[0], 16384);
		fz_sge(fz, fdi, &ops[i].sge[1], 16384);
		if (FZ_PCT(fz, 2))
			ops[i].reserved = 1;
	}
	p.handle = fz_handle(fz, FT_SRQ, fdi);
	p.ops = (uintptr_t)ops;
	p.count = FZ_PCT(fz, 95) ? n : (uint32_t)fz_word(fz);
	if (FZ_PCT(fz, 3))
		p.ops = fz_word(fz);
	fz_ioc(fz, fdi, SV_IOC_POST_SRQ_OPS, &p);
}

/*
 * A TMH (and an RVH over a live MR) at the start of a send's first SGE,
 * when that is the fuzzer's own memory: TM SRQs match, read, answer.
 */
FZ void fz_tmh(struct fz *fz, const struct sv_sge *sg)
{
	struct fz_obj *mr = fz_pick_obj(fz, FT_MR, -1);
	uint8_t *p = (uint8_t *)(uintptr_t)sg->addr;
	uint64_t v;
	uint32_t k, len;
	int i;

	/* Offsets, not pointers: a junk address near the top must not wrap */
	for (i = 0; i < FZ_NBUF; i++)
		if (sg->addr - (uintptr_t)fz->buf[i] <= FZ_BUFLEN - 32)
			break;
	if (i == FZ_NBUF || sg->length < 16)
		return;
	memset(p, 0, 16);
	p[0] = FZ_N(fz, 5);			/* NO_TAG .. EAGER, one junk */
	p[15] = FZ_N(fz, 4);			/* the tag, big endian */
	v = mr ? mr->addr + FZ_N(fz, 256) : fz_word(fz);
	k = mr ? mr->lkey : (uint32_t)fz_word(fz);
	len = FZ_PCT(fz, 90) ? FZ_N(fz, 32768) : (uint32_t)fz_word(fz);
	v = __builtin_bswap64(v);
	k = __builtin_bswap32(k);
	len = __builtin_bswap32(len);
	memcpy(p + 16, &v, 8);
	memcpy(p + 24, &k, 4);
	memcpy(p + 28, &len, 4);
}

FZ void fz_srq(struct fz *fz, int fdi)
{
	union {
		struct sv_create_srq c;
		struct sv_modify_srq m;
		struct sv_query_srq q;
	} u;

	memset(&u, 0, sizeof(u));
	switch (FZ_N(fz, 5)) {
	case 4:
		fz_srq_ops(fz, fdi);
		return;
	case 0:
	case 1:
		u.c.size = sizeof(u.c);
		u.c.pd_handle = fz_handle(fz, FT_PD, fdi);
		u.c.max_wr = FZ_PCT(fz, 90) ? FZ_N(fz, 64) + 1 :
			     (uint32_t)fz_word(fz);
		u.c.max_sge = FZ_PCT(fz, 90) ? FZ_N(fz, 5) : (uint32_t)fz_word(fz);
		u.c.user_handle = FZ_RND(fz);
		/* A tag-matching SRQ: its CQ and list (tm.c) */
		if (FZ_PCT(fz, 25)) {
			u.c.srq_type = SV_SRQT_TM;
			u.c.cq_handle = fz_handle(fz, FT_CQ, fdi);
			u.c.max_num_tags = FZ_PCT(fz, 90) ? FZ_N(fz, 8) + 1 :
					   (uint32_t)fz_word(fz);
			u.c.max_ops = FZ_PCT(fz, 90) ? FZ_N(fz, 8) + 1 :
				      (uint32_t)fz_word(fz);
		}
		if (fz_ioc(fz, fdi, SV_IOC_CREATE_SRQ, &u.c))
			return;
		fz_obj_new(fz, FT_SRQ, fdi, u.c.handle);
		if (FZ_PCT(fz, 70))
			fz_map_wq(fz, fdi, SV_WQ_SRQ, u.c.handle, 0);
		return;
	case 2:
		u.m.size = sizeof(u.m);
		u.m.handle = fz_handle(fz, FT_SRQ, fdi);
		u.m.attr_mask = FZ_PCT(fz, 60) ? SV_SRQ_LIMIT : FZ_N(fz, 8);
		u.m.srq_limit = FZ_N(fz, 80);
		/* A resize: mostly sizes that may fit what is posted. */
		u.m.max_wr = FZ_PCT(fz, 80) ? FZ_N(fz, 128) + 1 :
			     (uint32_t)fz_word(fz);
		if (FZ_PCT(fz, 5))
			u.m.size = SV_MODIFY_SRQ_SIZE_VER0;
		if (fz_ioc(fz, fdi, SV_IOC_MODIFY_SRQ, &u.m) ||
		    !(u.m.attr_mask & SV_SRQ_MAX_WR) || !u.m.mmap_len)
			return;
		if (FZ_PCT(fz, 60))
			fz_map(fz, fdi, u.m.mmap_offset, u.m.mmap_len, FM_RQ,
			       0);
		else
			fz_add_off(fz, u.m.mmap_offset, u.m.mmap_len);
		return;
	default:
		u.q.size = sizeof(u.q);
		u.q.handle = fz_handle(fz, FT_SRQ, fdi);
		fz_ioc(fz, fdi, SV_IOC_QUERY_SRQ, &u.q);
	}
}

FZ void fz_create_ah(struct fz *fz, int fdi)
{
	struct sv_create_ah c = { .size = sizeof(c) };

	c.pd_handle = fz_handle(fz, FT_PD, fdi);
	fz_av(fz, &c.attr);
	if (!fz_ioc(fz, fdi, SV_IOC_CREATE_AH, &c))
		fz_obj_new(fz, FT_AH, fdi, c.handle);
}

FZ void fz_mcast(struct fz *fz, int fdi)
{
	struct sv_mcast m = { .size = sizeof(m) };
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

	m.qp_handle = fz_handle(fz, FT_QP, fdi);
	switch (FZ_N(fz, 4)) {
	case 0:
		memcpy(m.gid, v4, 12);
		m.gid[12] = 224 + FZ_N(fz, 20);
		m.gid[15] = FZ_N(fz, 4);
		break;
	case 1:
		for (unsigned int i = 0; i < 16; i++)
			m.gid[i] = (uint8_t)FZ_RND(fz);
		break;
	default:
		m.gid[0] = 0xff;
		m.gid[1] = 0x0e;
		m.gid[15] = FZ_N(fz, 4);
	}
	m.lid = FZ_N(fz, 65536);
	if (FZ_PCT(fz, 3))
		m.reserved = 1;
	fz_ioc(fz, fdi, FZ_PCT(fz, 55) ? SV_IOC_ATTACH_MCAST :
				       SV_IOC_DETACH_MCAST, &m);
}

/*
 * A flow matcher: a random or mostly-zero key (pads sometimes set), odd
 * lengths, flags and reserved fields; destroyed again most of the time,
 * or a random handle destroyed instead.
 */
FZ void fz_matcher(struct fz *fz, int fdi)
{
	struct sv_create_flow_matcher c = { .size = sizeof(c) };
	struct sv_destroy_flow_matcher d = { .size = sizeof(d) };
	struct sv_flow_key k;
	uint8_t *b = (uint8_t *)&k;
	unsigned int i;

	memset(&k, 0, sizeof(k));
	for (i = 0; i < sizeof(k); i++)
		if (FZ_PCT(fz, FZ_PCT(fz, 50) ? 5 : 60))
			b[i] = (uint8_t)FZ_RND(fz);
	if (FZ_PCT(fz, 70)) {
		memset(k.outer.pad, 0, sizeof(k.outer.pad));
		memset(k.inner.pad, 0, sizeof(k.inner.pad));
		memset(k.pad, 0, sizeof(k.pad));
		memset(k.pad2, 0, sizeof(k.pad2));
		k.tunnel = FZ_PCT(fz, 50) ? 0 : 0xff;
		k.outer.flow_label &= htobe32(0xfffff);
		k.inner.flow_label &= htobe32(0xfffff);
	}
	c.mask = FZ_PCT(fz, 95) ? (uintptr_t)&k : (uintptr_t)fz->hole;
	c.mask_len = FZ_PCT(fz, 90) ? sizeof(k) : (uint32_t)fz_word(fz);
	c.flags = FZ_PCT(fz, 85) ? FZ_N(fz, 2) * SV_FLOW_ATTR_FLAGS_EGRESS :
				   (uint32_t)fz_word(fz);
	c.priority = FZ_N(fz, 65536);
	if (FZ_PCT(fz, 3))
		c.reserved = 1;
	if (FZ_PCT(fz, 20))
		c.table_handle = fz_handle(fz, FZ_N(fz, FT_NTYPES - 1) + 1, fdi);
	if (FZ_PCT(fz, 30)) {
		/* In a steering table of its own, or the last one made */
		struct sv_create_steer_table t = { .size = sizeof(t) };

		t.flags = c.flags;
		t.level = FZ_PCT(fz, 90) ? FZ_N(fz, 66) :
					   (uint32_t)fz_word(fz);
		if (!fz_ioc(fz, fdi, SV_IOC_CREATE_STEER_TABLE, &t))
			c.table_handle = t.handle;
	}
	d.handle = (uint32_t)fz_word(fz);
	if (!fz_ioc(fz, fdi, SV_IOC_CREATE_FLOW_MATCHER, &c) && FZ_PCT(fz, 85))
		d.handle = c.handle;
	fz_ioc(fz, fdi, SV_IOC_DESTROY_FLOW_MATCHER, &d);
	if (c.table_handle && FZ_PCT(fz, 80)) {
		struct sv_destroy_steer_obj o = { .size = sizeof(o),
						  .handle = c.table_handle };

		fz_ioc(fz, fdi, SV_IOC_DESTROY_STEER_TABLE, &o);
	}
	if (FZ_PCT(fz, 20)) {
		struct sv_create_steer_anchor an = { .size = sizeof(an) };
		struct sv_destroy_steer_obj o = { .size = sizeof(o) };

		an.flags = FZ_N(fz, 2) * SV_FLOW_ATTR_FLAGS_EGRESS;
		an.priority = FZ_PCT(fz, 90) ? FZ_N(fz, 20) : FZ_N(fz, 65536);
		o.handle = (uint32_t)fz_word(fz);
		if (!fz_ioc(fz, fdi, SV_IOC_CREATE_STEER_ANCHOR, &an) &&
		    FZ_PCT(fz, 80))
			o.handle = an.handle;
		fz_ioc(fz, fdi, SV_IOC_DESTROY_STEER_ANCHOR, &o);
	}
}

/*
 * A steering action: each type with plausible or random data (modify
 * actions of known and unknown fields, encap headers cut anywhere,
 * mirrors of live or random QPs and tables), odd sizes and reserved
 * bits; destroyed again most of the time, or a random handle instead.
 */
FZ void fz_steer_action(struct fz *fz, int fdi)
{
	struct sv_create_steer_action c = { .size = sizeof(c) };
	struct sv_destroy_steer_obj o = { .size = sizeof(o) };
	uint64_t buf[80];
	uint8_t *b = (uint8_t *)buf;
	struct sv_steer_dest *d = (struct sv_steer_dest *)buf;
	unsigned int i, n;

	memset(buf, 0, sizeof(buf));
	c.type = FZ_PCT(fz, 90) ? FZ_N(fz, 7) : (uint32_t)fz_word(fz);
	c.flags = FZ_PCT(fz, 85) ? FZ_N(fz, 2) * SV_FLOW_ATTR_FLAGS_EGRESS :
				   (uint32_t)fz_word(fz);
	switch (c.type) {
	case SV_STEER_ACT_PUSH_VLAN:
		c.vlan_hdr = htobe32((FZ_PCT(fz, 50) ? 0x8100U : 0x88a8U) << 16 |
				     FZ_N(fz, 65536));
		if (FZ_PCT(fz, 10))
			c.vlan_hdr = (uint32_t)fz_word(fz);
		break;
	case SV_STEER_ACT_MODIFY:
		n = FZ_PCT(fz, 90) ? FZ_N(fz, 8) + 1 : FZ_N(fz, 80);
		for (i = 0; i < n; i++)
			buf[i] = htobe64((uint64_t)FZ_N(fz, 4) << 60 |
					 (uint64_t)FZ_N(fz, 0x80) << 48 |
					 (uint64_t)FZ_N(fz, 32) << 40 |
					 (uint64_t)FZ_N(fz, 32) << 32 |
					 (uint32_t)FZ_RND(fz));
		c.data_len = n * 8;
		break;
	case SV_STEER_ACT_ENCAP:
		for (i = 0; i < 160; i++)
			b[i] = (uint8_t)FZ_RND(fz);
		b[12] = 0x08;
		b[13] = FZ_PCT(fz, 50) ? 0x00 : 0xdd;
		b[14] = FZ_PCT(fz, 50) ? 0x45 : 0x60;
		c.data_len = FZ_N(fz, 160);
		break;
	case SV_STEER_ACT_MIRROR:
		n = FZ_N(fz, SV_STEER_MAX_DEST + 3);
		for (i = 0; i < n; i++) {
			d[i].type = FZ_N(fz, 4);
			d[i].handle = fz_handle(fz, FZ_PCT(fz, 80) ? FT_QP :
						FT_PD, fdi);
			if (FZ_PCT(fz, 20))
				d[i].encap_handle = (uint32_t)fz_word(fz);
			if (FZ_PCT(fz, 3))
				d[i].reserved = 1;
		}
		c.data_len = n * sizeof(*d);
		break;
	default:
		c.data_len = FZ_PCT(fz, 80) ? 0 : FZ_N(fz, 600);
		break;
	}
	c.data = FZ_PCT(fz, 95) ? (uintptr_t)buf : (uintptr_t)fz->hole;
	if (FZ_PCT(fz, 5))
		c.data_len = (uint32_t)fz_word(fz);
	o.handle = (uint32_t)fz_word(fz);
	if (!fz_ioc(fz, fdi, SV_IOC_CREATE_STEER_ACTION, &c) && FZ_PCT(fz, 85))
		o.handle = c.handle;
	fz_ioc(fz, fdi, SV_IOC_DESTROY_STEER_ACTION, &o);
}

FZ void fz_query(struct fz *fz, int fdi)
{
	union {
		struct sv_query_device d;
		struct sv_query_port p;
		struct sv_query_gid g;
		struct sv_query_pkey k;
		struct sv_query_abi a;
		struct sv_test_cq_push t;
	} u;

	memset(&u, 0, sizeof(u));
	switch (FZ_N(fz, 6)) {
	case 0:
		u.d.size = sizeof(u.d);
		u.d.comp_mask = FZ_PCT(fz, 90) ? 0 : 1;
		fz_ioc(fz, fdi, SV_IOC_QUERY_DEVICE, &u.d);
		break;
	case 1:
		u.p.size = sizeof(u.p);
		u.p.port_num = FZ_PCT(fz, 80) ? 1 : (uint32_t)fz_word(fz);
		fz_ioc(fz, fdi, SV_IOC_QUERY_PORT, &u.p);
		break;
	case 2:
		u.g.size = sizeof(u.g);
		u.g.port_num = FZ_PCT(fz, 90) ? 1 : (uint32_t)fz_word(fz);
		u.g.index = FZ_PCT(fz, 80) ? FZ_N(fz, SV_GID_TBL_LEN + 2) :
			    (uint32_t)fz_word(fz);
		fz_ioc(fz, fdi, SV_IOC_QUERY_GID, &u.g);
		break;
	case 3:
		u.k.size = sizeof(u.k);
		u.k.port_num = FZ_N(fz, 3);
		u.k.index = FZ_N(fz, 3);
		fz_ioc(fz, fdi, SV_IOC_QUERY_PKEY, &u.k);
		break;
	case 4:
		u.t.size = sizeof(u.t);
		u.t.handle = fz_handle(fz, FT_CQ, fdi);
		u.t.solicited = FZ_N(fz, 3);
		u.t.cqe.wr_id = FZ_RND(fz);
		fz_ioc(fz, fdi, SV_IOC_TEST_CQ_PUSH, &u.t);
		break;
	default:
		u.a.size = sizeof(u.a);
		fz_ioc(fz, fdi, SV_IOC_QUERY_ABI, &u.a);
	}
}

/* ---- raw ioctls ---- */

struct fz_cmd {
	uint8_t nr;
	uint16_t ver0, size;
	int16_t fd_off;		/* where a returned fd is, or -1 */
};

#define FZ_CMD(n, type, v0, fdo) { SV_NR_##n, v0, sizeof(struct type), fdo }
static const struct fz_cmd fz_cmds[] = {
	FZ_CMD(QUERY_ABI, sv_query_abi, SV_QUERY_ABI_SIZE_VER0, -1),
	FZ_CMD(QUERY_DEVICE, sv_query_device, SV_QUERY_DEVICE_SIZE_VER0, -1),
	FZ_CMD(QUERY_PORT, sv_query_port, SV_QUERY_PORT_SIZE_VER0, -1),
	FZ_CMD(QUERY_GID, sv_query_gid, SV_QUERY_GID_SIZE_VER0, -1),
	FZ_CMD(QUERY_PKEY, sv_query_pkey, SV_QUERY_PKEY_SIZE_VER0, -1),
	FZ_CMD(ALLOC_PD, sv_alloc_pd, SV_ALLOC_PD_SIZE_VER0, -1),
	FZ_CMD(DEALLOC_PD, sv_dealloc_pd, SV_DEALLOC_PD_SIZE_VER0, -1),
	FZ_CMD(REG_MR, sv_reg_mr, SV_REG_MR_SIZE_VER0, -1),
	FZ_CMD(REREG_MR, sv_rereg_mr, SV_REREG_MR_SIZE_VER0, -1),
	FZ_CMD(DEREG_MR, sv_dereg_mr, SV_DEREG_MR_SIZE_VER0, -1),
	FZ_CMD(CREATE_MKEY, sv_create_mkey, SV_CREATE_MKEY_SIZE_VER0, -1),
	FZ_CMD(DESTROY_MKEY, sv_destroy_mkey, SV_DESTROY_MKEY_SIZE_VER0, -1),
	FZ_CMD(QP_RATE_LIMIT, sv_qp_rate_limit, SV_QP_RATE_LIMIT_SIZE_VER0, -1),
	FZ_CMD(QUERY_PD, sv_query_pd, SV_QUERY_PD_SIZE_VER0, -1),
	FZ_CMD(QUERY_MR, sv_query_mr, SV_QUERY_MR_SIZE_VER0, -1),
	FZ_CMD(ADVISE_MR, sv_advise_mr, SV_ADVISE_MR_SIZE_VER0, -1),
	FZ_CMD(ALLOC_NULL_MR, sv_alloc_null_mr, SV_ALLOC_NULL_MR_SIZE_VER0, -1),
	FZ_CMD(ALLOC_DM, sv_alloc_dm, SV_ALLOC_DM_SIZE_VER0, -1),
	FZ_CMD(FREE_DM, sv_free_dm, SV_FREE_DM_SIZE_VER0, -1),
	FZ_CMD(QUERY_DM, sv_query_dm, SV_QUERY_DM_SIZE_VER0, -1),
	FZ_CMD(REG_DM_MR, sv_reg_dm_mr, SV_REG_DM_MR_SIZE_VER0, -1),
	FZ_CMD(ALLOC_MW, sv_alloc_mw, SV_ALLOC_MW_SIZE_VER0, -1),
	FZ_CMD(DEALLOC_MW, sv_dealloc_mw, SV_DEALLOC_MW_SIZE_VER0, -1),
	FZ_CMD(OPEN_XRCD, sv_open_xrcd, SV_OPEN_XRCD_SIZE_VER0, -1),
	FZ_CMD(CLOSE_XRCD, sv_close_xrcd, SV_CLOSE_XRCD_SIZE_VER0, -1),
	FZ_CMD(OPEN_QP, sv_open_qp, SV_OPEN_QP_SIZE_VER0, -1),
	FZ_CMD(CREATE_COMP_CHANNEL, sv_create_comp_channel,
	       SV_CREATE_COMP_CHANNEL_SIZE_VER0, 12),
	FZ_CMD(DESTROY_COMP_CHANNEL, sv_destroy_comp_channel,
	       SV_DESTROY_COMP_CHANNEL_SIZE_VER0, -1),
	FZ_CMD(GET_ASYNC_FD, sv_get_async_fd, SV_GET_ASYNC_FD_SIZE_VER0, 8),
	FZ_CMD(CREATE_CQ, sv_create_cq, SV_CREATE_CQ_SIZE_VER0, -1),
	FZ_CMD(RESIZE_CQ, sv_resize_cq, SV_RESIZE_CQ_SIZE_VER0, -1),
	FZ_CMD(MODIFY_CQ, sv_modify_cq, SV_MODIFY_CQ_SIZE_VER0, -1),
	FZ_CMD(DESTROY_CQ, sv_destroy_cq, SV_DESTROY_CQ_SIZE_VER0, -1),
	FZ_CMD(TEST_CQ_PUSH, sv_test_cq_push, SV_TEST_CQ_PUSH_SIZE_VER0, -1),
	FZ_CMD(CREATE_QP, sv_create_qp, SV_CREATE_QP_SIZE_VER0, -1),
	FZ_CMD(MODIFY_QP, sv_modify_qp, SV_MODIFY_QP_SIZE_VER0, -1),
	FZ_CMD(QUERY_QP, sv_query_qp, SV_QUERY_QP_SIZE_VER0, -1),
	FZ_CMD(DESTROY_QP, sv_destroy_qp, SV_DESTROY_QP_SIZE_VER0, -1),
	FZ_CMD(CREATE_SRQ, sv_create_srq, SV_CREATE_SRQ_SIZE_VER0, -1),
	FZ_CMD(MODIFY_SRQ, sv_modify_srq, SV_MODIFY_SRQ_SIZE_VER0, -1),
	FZ_CMD(QUERY_SRQ, sv_query_srq, SV_QUERY_SRQ_SIZE_VER0, -1),
	FZ_CMD(DESTROY_SRQ, sv_destroy_srq, SV_DESTROY_SRQ_SIZE_VER0, -1),
	FZ_CMD(POST_SRQ_OPS, sv_post_srq_ops, SV_POST_SRQ_OPS_SIZE_VER0, -1),
	FZ_CMD(MOVE_RING, sv_move_ring, SV_MOVE_RING_SIZE_VER0, -1),
	FZ_CMD(CREATE_AH, sv_create_ah, SV_CREATE_AH_SIZE_VER0, -1),
	FZ_CMD(DESTROY_AH, sv_destroy_ah, SV_DESTROY_AH_SIZE_VER0, -1),
	FZ_CMD(ATTACH_MCAST, sv_mcast, SV_MCAST_SIZE_VER0, -1),
	FZ_CMD(DETACH_MCAST, sv_mcast, SV_MCAST_SIZE_VER0, -1),
	FZ_CMD(CREATE_FLOW, sv_create_flow, SV_CREATE_FLOW_SIZE_VER0, -1),
	FZ_CMD(DESTROY_FLOW, sv_destroy_flow, SV_DESTROY_FLOW_SIZE_VER0, -1),
	FZ_CMD(CREATE_FLOW_MATCHER, sv_create_flow_matcher,
	       SV_CREATE_FLOW_MATCHER_SIZE_VER0, -1),
	FZ_CMD(DESTROY_FLOW_MATCHER, sv_destroy_flow_matcher,
	       SV_DESTROY_FLOW_MATCHER_SIZE_VER0, -1),
	FZ_CMD(CREATE_STEER_TABLE, sv_create_steer_table,
	       SV_CREATE_STEER_TABLE_SIZE_VER0, -1),
	FZ_CMD(DESTROY_STEER_TABLE, sv_destroy_steer_obj,
	       SV_DESTROY_STEER_OBJ_SIZE_VER0, -1),
	FZ_CMD(CREATE_STEER_ANCHOR, sv_create_steer_anchor,
	       SV_CREATE_STEER_ANCHOR_SIZE_VER0, -1),
	FZ_CMD(DESTROY_STEER_ANCHOR, sv_destroy_steer_obj,
	       SV_DESTROY_STEER_OBJ_SIZE_VER0, -1),
	FZ_CMD(CREATE_STEER_ACTION, sv_create_steer_action,
	       SV_CREATE_STEER_ACTION_SIZE_VER0, -1),
	FZ_CMD(DESTROY_STEER_ACTION, sv_destroy_steer_obj,
	       SV_DESTROY_STEER_OBJ_SIZE_VER0, -1),
	FZ_CMD(CREATE_COUNTERS, sv_create_counters,
	       SV_CREATE_COUNTERS_SIZE_VER0, -1),
	FZ_CMD(DESTROY_COUNTERS, sv_destroy_counters,
	       SV_DESTROY_COUNTERS_SIZE_VER0, -1),
	FZ_CMD(ATTACH_COUNTERS, sv_attach_counters,
	       SV_ATTACH_COUNTERS_SIZE_VER0, -1),
	FZ_CMD(READ_COUNTERS, sv_read_counters, SV_READ_COUNTERS_SIZE_VER0, -1),
	FZ_CMD(CREATE_WQ, sv_create_wq, SV_CREATE_WQ_SIZE_VER0, -1),
	FZ_CMD(MODIFY_WQ, sv_modify_wq, SV_MODIFY_WQ_SIZE_VER0, -1),
	FZ_CMD(DESTROY_WQ, sv_destroy_wq, SV_DESTROY_WQ_SIZE_VER0, -1),
	FZ_CMD(CREATE_RWQ_IND_TBL, sv_create_rwq_ind_tbl,
	       SV_CREATE_RWQ_IND_TBL_SIZE_VER0, -1),
	FZ_CMD(DESTROY_RWQ_IND_TBL, sv_destroy_rwq_ind_tbl,
	       SV_DESTROY_RWQ_IND_TBL_SIZE_VER0, -1),
	FZ_CMD(CREATE_RSS_QP, sv_create_rss_qp, SV_CREATE_RSS_QP_SIZE_VER0, -1),
	FZ_CMD(MAP_WQ, sv_map_wq, SV_MAP_WQ_SIZE_VER0, -1),
	FZ_CMD(MAP_DOORBELL, sv_map_doorbell, SV_MAP_DOORBELL_SIZE_VER0, -1),
	FZ_CMD(RESET_DCI_STREAM, sv_reset_dci_stream,
	       SV_RESET_DCI_STREAM_SIZE_VER0, -1),
	FZ_CMD(DOORBELL, sv_ring_doorbell, SV_RING_DOORBELL_SIZE_VER0, -1),
};

/*
 * One raw ioctl: a known or unknown number, a boundary size, a struct of
 * biased random words; sometimes a bad pointer or other direction bits.
 */
FZ void fz_raw(struct fz *fz, int fdi)
{
	const struct fz_cmd *c = NULL;
	unsigned int nr, i, words;
	uint32_t size, dir = _IOC_READ | _IOC_WRITE, type = SV_IOC_MAGIC;
	char *arg = fz->arg;
	int ret, tail = 0;

	if (FZ_PCT(fz, 85)) {
		c = &fz_cmds[FZ_N(fz, FZ_ARRAY_SIZE(fz_cmds))];
		nr = c->nr;
	} else {
		nr = FZ_N(fz, 256);
		for (i = 0; i < FZ_ARRAY_SIZE(fz_cmds); i++)
			if (fz_cmds[i].nr == nr)
				c = &fz_cmds[i];
	}
	switch (FZ_N(fz, 14)) {
	case 0: size = 0; break;
	case 1: size = 4; break;
	case 2: size = c ? c->ver0 - 1u : 7; break;
	case 3: size = c ? c->ver0 : 8; break;
	case 4: size = c ? c->size + 8u : 72; tail = 0; break;
	case 5: size = c ? c->size + 8u : 72; tail = 1; break;
	case 6: size = SV_MAX_ARG_SIZE; tail = FZ_N(fz, 2); break;
	case 7: size = SV_MAX_ARG_SIZE + 1; break;
	case 8: size = (uint32_t)fz_word(fz); break;
	default: size = c ? c->size : 64; break;
	}
	words = (SV_MAX_ARG_SIZE + 64) / 8;
	/* Fill what the kernel may read, up to the size or a struct. */
	if (size <= SV_MAX_ARG_SIZE + 8)
		words = ((c ? c->size : 256) + 16) / 8;
	for (i = 0; i < words; i++) {
		uint64_t w = FZ_PCT(fz, 40) ? 0 : fz_word(fz);

		if (FZ_PCT(fz, 30))
			w = (w & 0xffffffff) |
			    ((uint64_t)fz_handle(fz, FZ_N(fz, FT_NTYPES - 1) + 1,
						  fdi) << 32);
		memcpy(arg + i * 8, &w, 8);
	}
	if (c && size > c->size && size <= SV_MAX_ARG_SIZE + 8) {
		memset(arg + c->size, 0, size - c->size);
		if (tail)
			arg[c->size + FZ_N(fz, size - c->size)] = 1;
	}
	memcpy(arg, &size, 4);
	if (FZ_PCT(fz, 5))
		dir = FZ_N(fz, 4);
	if (FZ_PCT(fz, 2))
		type = FZ_N(fz, 256);
	switch (FZ_N(fz, 40)) {
	case 0: arg = NULL; break;
	case 1: arg = fz->hole; break;
	case 2: arg = fz->edge + 4096 - 8; memcpy(arg, &size, 4); break;
	case 3: arg = fz->robuf; break;
	default: break;
	}
	ret = ioctl(fz->fd[fdi], _IOC(dir, type, nr, FZ_N(fz, 1 << 14)), arg) ?
	      errno : 0;
	fz_count(&fz->st->raw);
	if (ret)
		return;
	fz_count(&fz->st->ok);
	/* An fd the kernel installed for us: close it. */
	if (c && c->fd_off >= 0 && arg == fz->arg && type == SV_IOC_MAGIC) {
		int fd;

		memcpy(&fd, arg + c->fd_off, 4);
		if (fd > 2 && fd != fz->fd[0] && fd != fz->fd[1] &&
		    fd != fz->fd[2] && fd != fz->fd[3])
			close(fd);
	}
}

/* ---- data path ---- */

static const uint32_t fz_ops_rc[] = { SV_WR_RDMA_WRITE, SV_WR_RDMA_WRITE_WITH_IMM,
	SV_WR_SEND, SV_WR_SEND_WITH_IMM, SV_WR_RDMA_READ,
	SV_WR_ATOMIC_CMP_AND_SWP, SV_WR_ATOMIC_FETCH_AND_ADD,
	SV_WR_SEND_WITH_INV, SV_WR_UMR, SV_WR_LOCAL_INV, SV_WR_BIND_MW,
	SV_WR_BIND_MW, SV_WR_ATOMIC_WRITE, SV_WR_FLUSH };

/* An SGE over a live MR of file fdi (or junk). */
FZ void fz_sge(struct fz *fz, int fdi, struct sv_sge *s, uint32_t maxlen)
{
	struct fz_obj *mr = fz_pick_obj(fz, FT_MR, fdi);
	uint64_t off;

	if (!mr || FZ_PCT(fz, 8)) {
		s->addr = fz_word(fz);
		s->length = (uint32_t)fz_word(fz);
		s->lkey = (uint32_t)fz_word(fz);
		return;
	}
	off = mr->len ? FZ_RND(fz) % mr->len : 0;
	s->addr = mr->addr + off;
	s->length = FZ_N(fz, (mr->len - off < maxlen ? mr->len - off : maxlen) + 1);
	s->lkey = FZ_PCT(fz, 95) ? mr->lkey : (uint32_t)fz_word(fz);
	if (FZ_PCT(fz, 3))
		s->length = (uint32_t)fz_word(fz);
}

/*
 * Device memory: a DM (mapped or not), an MR over part of it (an MR
 * object the data path then uses, zero-based), or a DM freed.
 */
FZ void fz_dm(struct fz *fz, int fdi)
{
	struct sv_alloc_dm a = { .size = sizeof(a) };
	struct sv_reg_dm_mr r = { .size = sizeof(r) };
	struct sv_free_dm f = { .size = sizeof(f) };
	int i;

	switch (FZ_N(fz, 3)) {
	case 0:
		a.length = FZ_PCT(fz, 90) ? FZ_N(fz, 65536) + 1 : fz_word(fz);
		a.log_align_req = FZ_PCT(fz, 90) ? FZ_N(fz, 13) :
				  (uint32_t)fz_word(fz);
		if (FZ_PCT(fz, 3))
			a.flags = 1;
		if (fz_ioc(fz, fdi, SV_IOC_ALLOC_DM, &a))
			return;
		fz->last_dm = a.dm_handle;
		if (FZ_PCT(fz, 60))
			fz_map(fz, fdi, a.mmap_offset, a.mmap_len, FM_OTHER, 0);
		else
			fz_add_off(fz, a.mmap_offset, a.mmap_len);
		return;
	case 1:
		r.pd_handle = fz_handle(fz, FT_PD, fdi);
		r.dm_handle = FZ_PCT(fz, 80) ? fz->last_dm : (uint32_t)fz_word(fz);
		r.access = SV_ACCESS_ZERO_BASED | (FZ_PCT(fz, 90) ?
			   FZ_N(fz, 16) : (uint32_t)fz_word(fz));
		r.dm_offset = FZ_PCT(fz, 90) ? FZ_N(fz, 8192) : fz_word(fz);
		r.length = FZ_PCT(fz, 90) ? FZ_N(fz, 8192) + 1 : fz_word(fz);
		if (fz_ioc(fz, fdi, SV_IOC_REG_DM_MR, &r))
			return;
		i = fz_obj_new(fz, FT_MR, fdi, r.mr_handle);
		if (i >= 0) {
			fz->o[i].lkey = r.lkey;
			fz->o[i].addr = 0;
			fz->o[i].len = r.length;
		}
		return;
	default:
		f.dm_handle = FZ_PCT(fz, 80) ? fz->last_dm : (uint32_t)fz_word(fz);
		fz_ioc(fz, fdi, SV_IOC_FREE_DM, &f);
	}
}

/*
 * XRC: domains (private, or of one file every worker shares), XRC SRQs
 * on them, TGT QPs and handles opened on other workers' TGT QPs, INI QPs
 * whose sends name random SRQ numbers; closes, busy or not.
 */
FZ void fz_xrc(struct fz *fz, int fdi)
{
	struct sv_open_xrcd o = { .size = sizeof(o), .fd = -1 };
	struct sv_create_srq c = { .size = sizeof(c) };
	struct sv_create_qp q = { .size = sizeof(q) };
	struct sv_open_qp oq = { .size = sizeof(oq) };
	struct sv_close_xrcd x = { .size = sizeof(x) };
	uint32_t xh = FZ_PCT(fz, 85) ? fz->last_xrcd : (uint32_t)fz_word(fz);
	int i, ffd = -1;

	switch (FZ_N(fz, 6)) {
	case 0:
		if (FZ_PCT(fz, 60)) {
			ffd = open("/tmp/sv_fuzz_xrcd", O_RDWR | O_CREAT, 0600);
			o.fd = ffd;
		} else if (FZ_PCT(fz, 10)) {
			o.fd = (int32_t)fz_word(fz);
		}
		o.oflags = FZ_PCT(fz, 80) ? O_CREAT : FZ_PCT(fz, 50) ?
			   O_CREAT | O_EXCL : (uint32_t)fz_word(fz);
		if (!fz_ioc(fz, fdi, SV_IOC_OPEN_XRCD, &o))
			fz->last_xrcd = o.handle;
		if (ffd >= 0)
			close(ffd);
		return;
	case 1:
		c.pd_handle = fz_handle(fz, FT_PD, fdi);
		c.max_wr = FZ_PCT(fz, 90) ? FZ_N(fz, 64) + 1 : fz_word(fz);
		c.max_sge = FZ_N(fz, 4);
		c.srq_type = FZ_PCT(fz, 90) ? SV_SRQT_XRC : FZ_N(fz, 5);
		c.xrcd_handle = xh;
		c.cq_handle = fz_handle(fz, FT_CQ, fdi);
		if (fz_ioc(fz, fdi, SV_IOC_CREATE_SRQ, &c))
			return;
		fz_obj_new(fz, FT_SRQ, fdi, c.handle);
		if (FZ_PCT(fz, 75))
			fz_map_wq(fz, fdi, SV_WQ_SRQ, c.handle, 0);
		return;
	case 2:
	case 3:
		q.qp_type = FZ_PCT(fz, 50) ? SV_QPT_XRC_RECV : SV_QPT_XRC_SEND;
		if (q.qp_type == SV_QPT_XRC_RECV || FZ_PCT(fz, 5))
			q.xrcd_handle = xh;
		if (q.qp_type == SV_QPT_XRC_SEND || FZ_PCT(fz, 5)) {
			q.pd_handle = fz_handle(fz, FT_PD, fdi);
			q.send_cq_handle = fz_handle(fz, FT_CQ, fdi);
			q.cap.max_send_wr = FZ_N(fz, 32) + 1;
			q.cap.max_send_sge = FZ_N(fz, 3);
		}
		q.user_handle = FZ_RND(fz);
		if (fz_ioc(fz, fdi, SV_IOC_CREATE_QP, &q))
			return;
		if (q.qp_type == SV_QPT_XRC_RECV)
			fz->last_tgt = q.qpn;
		i = fz_obj_new(fz, FT_QP, fdi, q.handle);
		if (i >= 0) {
			fz->o[i].qpn = q.qpn;
			fz->o[i].qpt = q.qp_type;
			fz->o[i].state = SV_QPS_RESET;
		}
		if (q.qp_type == SV_QPT_XRC_SEND && FZ_PCT(fz, 75))
			fz_map_wq(fz, fdi, SV_WQ_QP, q.handle, q.qp_type);
		return;
	case 4:
		oq.xrcd_handle = xh;
		oq.qpn = FZ_PCT(fz, 70) ? fz->last_tgt : FZ_N(fz, 4096);
		oq.qp_type = FZ_PCT(fz, 90) ? SV_QPT_XRC_RECV :
			     (uint32_t)fz_word(fz);
		oq.user_handle = FZ_RND(fz);
		if (FZ_PCT(fz, 3))
			oq.reserved = 1;
		if (fz_ioc(fz, fdi, SV_IOC_OPEN_QP, &oq))
			return;
		i = fz_obj_new(fz, FT_QP, fdi, oq.handle);
		if (i >= 0) {
			fz->o[i].qpn = oq.qpn;
			fz->o[i].qpt = SV_QPT_XRC_RECV;
		}
		return;
	default:
		x.handle = xh;
		fz_ioc(fz, fdi, SV_IOC_CLOSE_XRCD, &x);
	}
}

/* A bind of a window (or junk) to a piece of a live MR (or junk). */
FZ void fz_bind_mw(struct fz *fz, int fdi, struct sv_send_wqe *w)
{
	struct fz_obj *k = fz_pick_obj(fz, FT_MR, fdi);
	struct sv_sge s;

	w->num_sge = FZ_PCT(fz, 95) ? 0 : 1;
	w->send_flags &= ~SV_SEND_INLINE;
	if (k && k->mkey == 2 && FZ_PCT(fz, 90))
		w->rkey = k->lkey;
	/* Usually the next key, sometimes another index. */
	w->imm_data = FZ_PCT(fz, 90) ? (w->rkey & ~0xffU) |
		      ((w->rkey + 1) & 0xffU) : (uint32_t)fz_word(fz);
	fz_sge(fz, fdi, &s, 1 << 20);
	w->remote_addr = s.addr;
	w->compare_add = FZ_PCT(fz, 10) ? 0 : FZ_PCT(fz, 95) ? s.length :
			 fz_word(fz);
	w->swap = FZ_PCT(fz, 95) ? s.lkey : fz_word(fz);
	w->remote_qkey = FZ_PCT(fz, 90) ? FZ_N(fz, 16) << 1 :
			 (uint32_t)fz_word(fz);
}

/* A UMR's layout after w (in room bytes): pieces of live MRs, or junk. */
FZ void fz_umr(struct fz *fz, int fdi, struct sv_send_wqe *w, uint32_t room)
{
	struct sv_send_umr *u = (struct sv_send_umr *)(w + 1);
	struct sv_umr_ent *e = (struct sv_umr_ent *)(u + 1);
	struct fz_obj *k = fz_pick_obj(fz, FT_MR, fdi);
	uint32_t i, n, max;
	struct sv_sge s;

	w->num_sge = FZ_PCT(fz, 95) ? 0 : 1;
	w->send_flags &= ~SV_SEND_INLINE;
	if (k && k->mkey && FZ_PCT(fz, 90))
		w->rkey = k->lkey;
	if (room < sizeof(*u))
		return;
	max = (room - sizeof(*u)) / sizeof(*e);
	n = FZ_N(fz, (max < 6 ? max : 6) + 1);
	u->access = FZ_PCT(fz, 90) ? FZ_N(fz, 16) : (uint32_t)fz_word(fz);
	u->repeat_count = FZ_PCT(fz, 80) ? FZ_N(fz, 4) + 1 :
			  (uint32_t)fz_word(fz);
	u->num_ent = FZ_PCT(fz, 95) ? n : (uint32_t)fz_word(fz);
	u->flags = FZ_PCT(fz, 80) ? 0 : FZ_PCT(fz, 90) ? FZ_N(fz, 4) :
		   (uint32_t)fz_word(fz);
	for (i = 0; i < n; i++) {
		fz_sge(fz, fdi, &s, 4096);
		e[i].addr = s.addr;
		e[i].bytes_count = s.length;
		e[i].bytes_skip = FZ_PCT(fz, 90) ? FZ_N(fz, 64) :
				  (uint32_t)fz_word(fz);
		e[i].lkey = s.lkey;
		e[i].reserved = FZ_PCT(fz, 97) ? 0 : 1;
	}
}

/* Under mlock: write one WQE into map m and publish it. */
FZ void fz_post_locked(struct fz *fz, struct fz_map *m)
{
	char *slot = m->p + m->wqe_offset +
		     (size_t)(m->prod & (m->entries - 1)) * m->wqe_size;
	uint32_t maxsge, n, i, bump;

	if (FZ_PCT(fz, 10)) {
		for (i = 0; i + 8 <= m->wqe_size; i += 8) {
			uint64_t w = fz_word(fz);

			memcpy(slot + i, &w, 8);
		}
	} else if (m->kind == FM_RQ) {
		struct sv_recv_wqe *w = (struct sv_recv_wqe *)slot;
		struct sv_sge *s = (struct sv_sge *)(w + 1);

		maxsge = (m->wqe_size - sizeof(*w)) / sizeof(*s);
		n = FZ_N(fz, (maxsge < 4 ? maxsge : 4) + 1);
		w->wr_id = FZ_RND(fz);
		w->num_sge = FZ_PCT(fz, 95) ? n : (uint32_t)fz_word(fz);
		w->reserved = FZ_PCT(fz, 97) ? 0 : 1;
		for (i = 0; i < n; i++)
			fz_sge(fz, m->fdi, &s[i], 8192);
	} else {
		struct sv_send_wqe *w = (struct sv_send_wqe *)slot;
		struct sv_sge *s = (struct sv_sge *)(w + 1);
		struct fz_obj *mr = fz_pick_obj(fz, FT_MR, -1);
		struct fz_obj *ah = fz_pick_obj(fz, FT_AH, m->fdi);

		memset(w, 0, sizeof(*w));
		maxsge = (m->wqe_size - sizeof(*w)) / sizeof(*s);
		n = FZ_N(fz, (maxsge < 4 ? maxsge : 4) + 1);
		w->wr_id = FZ_RND(fz);
		if (m->qpt == SV_QPT_UD)
			w->opcode = FZ_N(fz, 2) + SV_WR_SEND;
		else if (m->qpt == SV_QPT_UC)
			w->opcode = FZ_N(fz, 4);
		else
			w->opcode = fz_ops_rc[FZ_N(fz, FZ_ARRAY_SIZE(fz_ops_rc))];
		if (FZ_PCT(fz, 5))
			w->opcode = (uint32_t)fz_word(fz);
		/* TSO on a QP that is not RAW_PACKET: LOC_QP_OP_ERR */
		if (FZ_PCT(fz, 3))
			w->opcode = SV_WR_TSO;
		/* IP_CSUM: ignored by these QP types */
		w->send_flags = FZ_PCT(fz, 80) ? SV_SEND_SIGNALED : FZ_N(fz, 32);
		w->num_sge = n;
		w->imm_data = (uint32_t)FZ_RND(fz);
		if (mr) {
			w->rkey = mr->lkey;
			w->remote_addr = mr->addr + (mr->len ? FZ_RND(fz) % mr->len : 0);
			if (w->opcode >= SV_WR_ATOMIC_CMP_AND_SWP)
				w->remote_addr &= ~7ULL;
		} else {
			w->rkey = (uint32_t)fz_word(fz);
			w->remote_addr = fz_word(fz);
		}
		w->compare_add = FZ_RND(fz);
		w->swap = FZ_RND(fz);
		/* FLUSH: mostly a valid kind, over a short range */
		if (w->opcode == SV_WR_FLUSH && FZ_PCT(fz, 80)) {
			w->swap = (FZ_N(fz, 3) + 1) | FZ_N(fz, 2) << 8;
			w->compare_add = FZ_N(fz, 8192);
			w->num_sge = 0;
		}
		w->ah_handle = ah && FZ_PCT(fz, 90) ? ah->handle :
			       fz_handle(fz, FT_AH, m->fdi);
		w->remote_qpn = fz_peer_qpn(fz, SV_QPT_UD);
		w->remote_qkey = FZ_PCT(fz, 90) ? 0x1234 : (uint32_t)FZ_RND(fz);
		if (w->opcode == SV_WR_LOCAL_INV) {
			struct fz_obj *k = fz_pick_obj(fz, FT_MR, m->fdi);

			w->num_sge = 0;
			if (k && FZ_PCT(fz, 90))
				w->imm_data = k->lkey;
			/* A window bound once has its next key. */
			if (k && k->mkey == 2 && FZ_PCT(fz, 50))
				w->imm_data = (k->lkey & ~0xffU) |
					      ((k->lkey + 1) & 0xffU);
		} else if (w->opcode == SV_WR_SEND_WITH_INV) {
			struct fz_obj *k = fz_pick_obj(fz, FT_MR, -1);

			if (k && k->mkey == 2 && FZ_PCT(fz, 70))
				w->imm_data = (k->lkey & ~0xffU) |
					      ((k->lkey + FZ_N(fz, 2)) & 0xffU);
		} else if (w->opcode == SV_WR_UMR) {
			fz_umr(fz, m->fdi, w, m->wqe_size - sizeof(*w));
		} else if (w->opcode == SV_WR_BIND_MW) {
			fz_bind_mw(fz, m->fdi, w);
		} else if (w->opcode == SV_WR_TSO && m->wqe_size >= sizeof(*w) +
		    sizeof(struct sv_send_tso)) {
			struct sv_send_tso *t = (struct sv_send_tso *)(w + 1);

			t->hdr_sz = FZ_PCT(fz, 50) ? 54 : (uint16_t)fz_word(fz);
			t->mss = FZ_PCT(fz, 50) ? 1000 : (uint16_t)fz_word(fz);
			t->reserved = FZ_PCT(fz, 95) ? 0 : 1;
		} else if (FZ_PCT(fz, 10) && m->wqe_size > sizeof(*w)) {
			w->send_flags |= SV_SEND_INLINE;
			w->inline_len = FZ_PCT(fz, 90) ?
				FZ_N(fz, m->wqe_size - sizeof(*w) + 1) :
				(uint32_t)fz_word(fz);
			w->num_sge = 0;
		} else {
			for (i = 0; i < n; i++)
				fz_sge(fz, m->fdi, &s[i], 16384);
			if (w->opcode <= SV_WR_SEND_WITH_IMM &&
			    w->opcode >= SV_WR_SEND && FZ_PCT(fz, 40))
				fz_tmh(fz, &s[0]);
		}
		if (FZ_PCT(fz, 3))
			w->reserved = 1;
	}
	switch (FZ_N(fz, 20)) {
	case 0: bump = (uint32_t)FZ_RND(fz); break;
	case 1: bump = m->entries + FZ_N(fz, 4); break;
	case 2: bump = 0; break;
	case 3: bump = FZ_N(fz, m->entries) + 1; break;
	default: bump = 1; break;
	}
	m->prod += bump;
	__atomic_store_n(&((struct sv_wq_ring *)m->p)->prod, m->prod,
			 __ATOMIC_RELEASE);
}

/* Under mlock: consume a CQ's entries (or lie about it). */
FZ void fz_poll_locked(struct fz *fz, struct fz_map *m)
{
	struct sv_cq_ring *r = (struct sv_cq_ring *)m->p;
	uint32_t prod = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE);
	uint32_t ready = prod - __atomic_load_n(&r->cons, __ATOMIC_RELAXED);

	if (m->entries && ready <= m->entries)
		__atomic_fetch_add(&fz->st->cqes, ready, __ATOMIC_RELAXED);
	if (FZ_PCT(fz, 90))
		__atomic_store_n(&r->cons, prod, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&r->cons, (uint32_t)FZ_RND(fz), __ATOMIC_RELEASE);
	if (FZ_PCT(fz, 20))
		__atomic_fetch_or(&r->arm, FZ_N(fz, 4), __ATOMIC_SEQ_CST);
}

FZ void fz_datapath(struct fz *fz)
{
	int i, n, k, kick = -1;

	pthread_mutex_lock(&fz->mlock);
	if (!fz->nmap) {
		pthread_mutex_unlock(&fz->mlock);
		return;
	}
	n = 1 + FZ_N(fz, 4);
	for (k = 0; k < n; k++) {
		struct fz_map *m = &fz->m[FZ_N(fz, fz->nmap)];

		if (m->kind == FM_SQ || m->kind == FM_RQ) {
			fz_post_locked(fz, m);
			kick = m->fdi;
		} else if (m->kind == FM_CQ) {
			fz_poll_locked(fz, m);
		} else if (m->kind == FM_DB && FZ_PCT(fz, 50)) {
			/* Hints naming any slot, or none: bits of any kind */
			if (m->writable && FZ_PCT(fz, 30) &&
			    m->len >= SV_DB_HINT_OFFSET + SV_DB_SLOTS / 8) {
				struct sv_doorbell *db = (void *)m->p;
				__u64 *hint = (__u64 *)(m->p +
							SV_DB_HINT_OFFSET);

				__atomic_fetch_or(&hint[FZ_N(fz, SV_DB_SLOTS /
							      64)],
						  FZ_RND(fz), __ATOMIC_SEQ_CST);
				__atomic_fetch_or(&db->hint_sum[FZ_N(fz, 8)],
						  FZ_RND(fz), __ATOMIC_SEQ_CST);
				/* "Posts defer": any word (SV_DB_DEFER) */
				if (FZ_PCT(fz, 30))
					__atomic_store_n(&db->defer,
							 (__u32)FZ_RND(fz),
							 __ATOMIC_RELAXED);
			}
			kick = m->fdi;
		}
		fz_count(&fz->st->dp);
	}
	pthread_mutex_unlock(&fz->mlock);
	if (kick < 0)
		return;
	/* As the library does: a doorbell only if the engine sleeps. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(&fz->mlock);
	for (i = 0; i < fz->nmap; i++)
		if (fz->m[i].kind == FM_DB && fz->m[i].fdi == kick)
			break;
	k = i < fz->nmap && (__atomic_load_n((uint32_t *)fz->m[i].p,
					     __ATOMIC_RELAXED) & SV_DB_NEED_WAKEUP);
	pthread_mutex_unlock(&fz->mlock);
	if (k || FZ_PCT(fz, 30))
		fz_doorbell(fz, kick);
}

/* The other thread: random words on ring indices and WQE/SGE contents. */
static void *fz_scribble(void *arg)
{
	struct fz *fz = arg;
	uint64_t rng = fz->rng ^ 0x5c71bb1eULL;
	unsigned int n = 0;

	while (!__atomic_load_n(&fz->stop, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&fz->mlock);
		if (fz->nmap) {
			struct fz_map *m = &fz->m[fz_next(&rng) % fz->nmap];
			size_t off;
			uint32_t w = (uint32_t)fz_next(&rng);

			switch (fz_next(&rng) % 6) {
			case 0: off = 0; break;		/* prod */
			case 1: off = 64; break;	/* cons */
			case 2: off = 128 + 4 * (fz_next(&rng) % 4); break;
			default:
				off = fz_next(&rng) % m->len;
				off &= ~(size_t)3;
			}
			if (fz_next(&rng) % 4 == 0)
				w = m->prod + (uint32_t)(fz_next(&rng) % 5) - 2;
			if (m->writable && off + 4 <= m->len)
				__atomic_store_n((uint32_t *)(m->p + off), w,
						 __ATOMIC_RELAXED);
			fz_count(&fz->st->scribbles);
		}
		pthread_mutex_unlock(&fz->mlock);
		if (++n % 16 == 0)
			usleep(200);
		else
			sched_yield();
	}
	return NULL;
}

/* ---- mmap abuse ---- */

FZ void fz_mmap_abuse(struct fz *fz)
{
	static const int prots[] = { PROT_READ | PROT_WRITE, PROT_READ,
		PROT_WRITE, PROT_READ | PROT_WRITE | PROT_EXEC,
		PROT_READ | PROT_EXEC, PROT_NONE };
	long pg = 4096;
	int fdi = fz_fdi(fz), prot, flags, i;
	uint64_t off;
	size_t len;
	char *p;

	fz_count(&fz->st->mmaps);
	switch (FZ_N(fz, 6)) {
	case 0: /* munmap one */
		pthread_mutex_lock(&fz->mlock);
		if (fz->nmap)
			fz_unmap_locked(fz, FZ_N(fz, fz->nmap));
		pthread_mutex_unlock(&fz->mlock);
		return;
	case 1: /* mprotect / mremap a ring mapping: both must fail or be safe */
		pthread_mutex_lock(&fz->mlock);
		if (fz->nmap) {
			struct fz_map *m = &fz->m[FZ_N(fz, fz->nmap)];

			if (FZ_PCT(fz, 50)) {
				if (!mprotect(m->p, m->len,
					      PROT_READ | PROT_EXEC))
					m->writable = 0;
			} else {
				p = mremap(m->p, m->len, m->len + pg,
					   FZ_PCT(fz, 50) ? MREMAP_MAYMOVE : 0);
				if (p != MAP_FAILED) {
					/* Accepted: keep only what we knew. */
					m->p = p;
					m->len += pg;
					m->kind = FM_OTHER;
				}
			}
		}
		pthread_mutex_unlock(&fz->mlock);
		return;
	case 2: /* touch every mapping, guarded */
		pthread_mutex_lock(&fz->mlock);
		for (i = 0; i < fz->nmap; i++) {
			struct fz_map *m = &fz->m[i];

			if (fz_touch(m->p, m->writable) ||
			    fz_touch(m->p + m->len - 1, m->writable))
				fz_count(&fz->st->faults);
		}
		pthread_mutex_unlock(&fz->mlock);
		return;
	default:
		break;
	}
	/* A mapping at a known offset or a wrong one. */
	i = fz->noff ? (int)FZ_N(fz, fz->noff) : -1;
	off = i >= 0 ? fz->offs[i] : 0;
	len = i >= 0 ? fz->offlen[i] : (size_t)pg;
	switch (FZ_N(fz, 10)) {
	case 0: off += pg; break;
	case 1: off -= pg; break;
	case 2: off = FZ_RND(fz) & ~(uint64_t)(pg - 1); break;
	case 3: len += pg; break;
	case 4: len = len > (size_t)pg ? len - pg : 0; break;
	case 5: len = (size_t)1 << (20 + FZ_N(fz, 10)); break;
	case 6: off = (uint64_t)FZ_N(fz, 1 << 20) << 12; break;
	default: break;
	}
	prot = FZ_PCT(fz, 60) ? PROT_READ | PROT_WRITE :
	       prots[FZ_N(fz, FZ_ARRAY_SIZE(prots))];
	flags = FZ_PCT(fz, 80) ? MAP_SHARED : MAP_PRIVATE;
	if (FZ_PCT(fz, 10))
		flags |= MAP_POPULATE;
	p = mmap(NULL, len, prot, flags, fz->fd[fdi], (off_t)off);
	if (p == MAP_FAILED)
		return;
	fz_count(&fz->st->ok);
	if (prot & PROT_READ)
		if (fz_touch(p, 0) || fz_touch(p + len - 1, 0))
			fz_count(&fz->st->faults);
	pthread_mutex_lock(&fz->mlock);
	if (fz->nmap < FZ_MAXMAP && (prot & PROT_WRITE) && (prot & PROT_READ) &&
	    (flags & MAP_SHARED)) {
		struct fz_map *m = &fz->m[fz->nmap++];

		memset(m, 0, sizeof(*m));
		m->p = p;
		m->len = len;
		m->kind = FM_OTHER;
		m->fdi = fdi;
		m->writable = 1;
	} else {
		munmap(p, len);
	}
	pthread_mutex_unlock(&fz->mlock);
}

/* ---- netlink ---- */

FZ int fz_nl_open(struct fz *fz)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	int one = 1, ret;
	char *buf = fz->nlbuf;

	fz->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!fz->nl)
		return -1;
	if (mnl_socket_bind(fz->nl, 0, MNL_SOCKET_AUTOPID))
		goto fail;
	mnl_socket_setsockopt(fz->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(fz->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = ++fz->nlseq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, SV_NL_FAMILY_NAME);
	if (mnl_socket_sendto(fz->nl, nlh, nlh->nlmsg_len) < 0)
		goto fail;
	ret = mnl_socket_recvfrom(fz->nl, buf, sizeof(fz->nlbuf));
	if (ret <= 0)
		goto fail;
	nlh = (struct nlmsghdr *)buf;
	if (nlh->nlmsg_type == GENL_ID_CTRL) {
		struct nlattr *a;

		mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
			if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
				fz->family = mnl_attr_get_u16(a);
	}
	if (fz->family)
		return 0;
fail:
	mnl_socket_close(fz->nl);
	fz->nl = NULL;
	return -1;
}

static const char *const fz_devnames[] = { "softverbs0", "svfz0", "svfz1",
	"", "uverbs0", "sv/../x", "svfz0123456789012345678901234567",
	"softverbs63" };
static const char *const fz_ndevnames[] = { "lo", "svfznodev", "", "eth0",
	"0123456789abcdef" };

/* One attribute for a request, right-ish or random. */
FZ void fz_nl_attr(struct fz *fz, struct nlmsghdr *nlh, int depth)
{
	uint16_t type = FZ_PCT(fz, 85) ? FZ_N(fz, SV_NL_ATTR_MAX + 1) :
			FZ_N(fz, 64);
	char junk[48];
	unsigned int i, len;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (char)FZ_RND(fz);

	if (FZ_PCT(fz, 25) || type > SV_NL_ATTR_MAX) {
		len = FZ_N(fz, sizeof(junk) + 1);
		/* Never a valid-looking idle time or limit for a real device. */
		if ((type == SV_NL_ATTR_IDLE_US ||
		     (type >= SV_NL_ATTR_MAX_PD &&
		      type <= SV_NL_ATTR_MAX_SRQ_WR)) &&
		    len == 4)
			len = 3;
		mnl_attr_put(nlh, type, len, junk);
		return;
	}
	switch (type) {
	case SV_NL_ATTR_DEV_NAME:
	case SV_NL_ATTR_RES_COMM:
	case SV_NL_ATTR_STAT_NAME:
		mnl_attr_put_strz(nlh, type,
			fz_devnames[FZ_N(fz, FZ_ARRAY_SIZE(fz_devnames))]);
		break;
	case SV_NL_ATTR_NDEV_NAME:
		mnl_attr_put_strz(nlh, type,
			fz_ndevnames[FZ_N(fz, FZ_ARRAY_SIZE(fz_ndevnames))]);
		break;
	case SV_NL_ATTR_IDLE_US: {
		static const uint32_t v[] = { 0, 1, 500, 1000, 2000,
			SV_NL_IDLE_US_MAX + 1, UINT32_MAX };

		mnl_attr_put_u32(nlh, type, v[FZ_N(fz, FZ_ARRAY_SIZE(v))]);
		break;
	}
	case SV_NL_ATTR_MAX_PD:
	case SV_NL_ATTR_MAX_MR:
	case SV_NL_ATTR_MAX_CQ:
	case SV_NL_ATTR_MAX_QP:
	case SV_NL_ATTR_MAX_SRQ:
	case SV_NL_ATTR_MAX_AH:
	case SV_NL_ATTR_MAX_QP_WR:
	case SV_NL_ATTR_MAX_CQE:
	case SV_NL_ATTR_MAX_SRQ_WR: {
		/* Out of range only: a real device keeps its limits. */
		uint32_t max = type >= SV_NL_ATTR_MAX_QP_WR ?
			       SV_NL_DEPTH_MAX : SV_NL_OBJ_LIMIT_MAX;
		const uint32_t v[] = { 0, max + 1, UINT32_MAX };

		mnl_attr_put_u32(nlh, type, v[FZ_N(fz, FZ_ARRAY_SIZE(v))]);
		break;
	}
	case SV_NL_ATTR_RES_TYPE:
		/* Every dump type (flows, WQs, tables, counters too), 0, one more. */
		mnl_attr_put_u8(nlh, type, FZ_PCT(fz, 90) ?
				FZ_N(fz, SV_NL_RES_MAX + 2) :
				(uint8_t)FZ_RND(fz));
		break;
	case SV_NL_ATTR_PORT_STATE:
	case SV_NL_ATTR_RES_QP_TYPE:
	case SV_NL_ATTR_RES_QP_STATE:
		mnl_attr_put_u8(nlh, type, FZ_PCT(fz, 80) ? FZ_N(fz, 6) :
					   (uint8_t)FZ_RND(fz));
		break;
	case SV_NL_ATTR_NODE_GUID:
	case SV_NL_ATTR_RES_IOVA:
	case SV_NL_ATTR_RES_LENGTH:
	case SV_NL_ATTR_STAT_VALUE:
	case SV_NL_ATTR_PAD:
		mnl_attr_put_u64(nlh, type, fz_word(fz));
		break;
	case SV_NL_ATTR_MAC:
		mnl_attr_put(nlh, type, FZ_PCT(fz, 80) ? 6 : FZ_N(fz, 12), junk);
		break;
	case SV_NL_ATTR_STATS:
	case SV_NL_ATTR_STAT_ENTRY:
	case SV_NL_ATTR_RES_FLOWS: {
		struct nlattr *nest = mnl_attr_nest_start(nlh, type);

		for (i = FZ_N(fz, 3); depth < 3 && i; i--)
			fz_nl_attr(fz, nlh, depth + 1);
		mnl_attr_nest_end(nlh, nest);
		break;
	}
	default:
		mnl_attr_put_u32(nlh, type, FZ_PCT(fz, 70) ? FZ_N(fz, 4) :
					    (uint32_t)fz_word(fz));
	}
}

/* Send one request, read until its ack/error/done; at most ~1 s. */
FZ void fz_netlink(struct fz *fz)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	unsigned int i, n;
	struct pollfd pfd;
	int ret;

	if (!fz->nl)
		return;
	nlh = mnl_nlmsg_put_header(fz->nlbuf);
	nlh->nlmsg_type = FZ_PCT(fz, 97) ? fz->family : FZ_N(fz, 64);
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	if (FZ_PCT(fz, 40))
		nlh->nlmsg_flags |= NLM_F_DUMP;
	nlh->nlmsg_seq = ++fz->nlseq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = FZ_PCT(fz, 90) ? FZ_N(fz, SV_NL_CMD_MAX + 1) : FZ_N(fz, 256);
	g->version = FZ_PCT(fz, 95) ? 1 : FZ_N(fz, 256);
	n = FZ_N(fz, 5);
	for (i = 0; i < n; i++)
		fz_nl_attr(fz, nlh, 0);
	fz_count(&fz->st->nl);
	if (mnl_socket_sendto(fz->nl, nlh, nlh->nlmsg_len) < 0)
		return;
	pfd.fd = mnl_socket_get_fd(fz->nl);
	pfd.events = POLLIN;
	for (i = 0; i < 256; i++) {
		struct nlmsghdr *r;
		int len;

		if (poll(&pfd, 1, 1000) != 1)
			return;
		ret = recv(pfd.fd, fz->nlbuf, sizeof(fz->nlbuf), MSG_DONTWAIT);
		if (ret <= 0)
			return;
		len = ret;
		for (r = (struct nlmsghdr *)fz->nlbuf; mnl_nlmsg_ok(r, len);
		     r = mnl_nlmsg_next(r, &len)) {
			if (r->nlmsg_type == NLMSG_ERROR ||
			    r->nlmsg_type == NLMSG_DONE) {
				if (r->nlmsg_seq == fz->nlseq) {
					if (r->nlmsg_type == NLMSG_ERROR &&
					    !*(int *)mnl_nlmsg_get_payload(r))
						fz_count(&fz->st->ok);
					if (r->nlmsg_type == NLMSG_ERROR ||
					    !(nlh->nlmsg_flags & NLM_F_ACK))
						return;
				}
			}
		}
	}
}

/* Send one request with fixed attributes (cleanup); 0 or -errno. */
FZ int fz_nl_simple(struct fz *fz, int cmd, const char *dev, int idle)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(fz->nlbuf);
	struct genlmsghdr *g;
	struct pollfd pfd;
	int ret;

	nlh->nlmsg_type = fz->family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++fz->nlseq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, dev);
	if (idle >= 0)
		mnl_attr_put_u32(nlh, SV_NL_ATTR_IDLE_US, idle);
	if (mnl_socket_sendto(fz->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	pfd.fd = mnl_socket_get_fd(fz->nl);
	pfd.events = POLLIN;
	for (;;) {
		struct nlmsghdr *r = (struct nlmsghdr *)fz->nlbuf;

		if (poll(&pfd, 1, 5000) != 1)
			return -ETIMEDOUT;
		ret = recv(pfd.fd, fz->nlbuf, sizeof(fz->nlbuf), 0);
		if (ret <= 0)
			return -EIO;
		if (r->nlmsg_type == NLMSG_ERROR && r->nlmsg_seq == fz->nlseq)
			return *(int *)mnl_nlmsg_get_payload(r);
	}
}

/* ---- the worker ---- */

FZ void fz_step(struct fz *fz);

/* A child that touches the parent's mappings and uses inherited files. */
FZ void fz_fork(struct fz *fz)
{
	pid_t pid;
	int st, i;

	pthread_mutex_lock(&fz->mlock);	/* the scribbler holds nothing */
	pid = fork();
	if (pid == 0) {
		pthread_mutex_unlock(&fz->mlock);
		fz->in_child = 1;
		fz->nl = NULL;	/* the parent's socket: leave it alone */
		for (i = 0; i < fz->nmap; i++) {
			if (fz_touch(fz->m[i].p, fz->m[i].writable))
				_exit(3);
		}
		fz->rng ^= (uint64_t)getpid() << 17;
		for (i = 0; i < 40; i++)
			fz_step(fz);
		if (FZ_PCT(fz, 50))
			close(fz->fd[FZ_N(fz, FZ_NFD)]);
		for (i = 0; i < 10; i++)
			fz_step(fz);
		_exit(0);
	}
	pthread_mutex_unlock(&fz->mlock);
	if (pid < 0)
		return;
	fz_count(&fz->st->forks);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		fprintf(stderr, "# fuzz: fork child %d: status %#x\n", pid, st);
		fz_count(&fz->st->bad_children);
	}
}

FZ void fz_reopen(struct fz *fz)
{
	int fdi = FZ_N(fz, FZ_NFD), i;

	close(fz->fd[fdi]);
	for (i = 0; i < FZ_MAXOBJ; i++)
		if (fz->o[i].fdi == fdi)
			fz->o[i].alive = 0;
	fz->fd[fdi] = open(SV_DEV0, O_RDWR | O_CLOEXEC);
	if (fz->fd[fdi] < 0)
		fz->fd[fdi] = open("/dev/null", O_RDWR | O_CLOEXEC);
	fz_count(&fz->st->reopens);
}

FZ void fz_step(struct fz *fz)
{
	int fdi = fz_fdi(fz);
	uint32_t r = FZ_N(fz, 1000);

	fz_count(&fz->st->ops);
	/* Too many live objects on this file: destroy first. */
	if (fz_live_on(fz, fdi) > FZ_LIVE_CAP && r < 600) {
		fz_destroy(fz, fdi, 0);
		return;
	}
	if (r < 200)
		fz_raw(fz, fdi);
	else if (r < 230)
		fz_alloc_pd(fz, fdi);
	else if (r < 270)
		fz_reg_mr(fz, fdi);
	else if (r < 285)
		fz_rereg_mr(fz, fdi);
	else if (r < 320)
		fz_create_cq(fz, fdi);
	else if (r < 335 && FZ_PCT(fz, 70))
		fz_resize_cq(fz, fdi);
	else if (r < 335)
		fz_modify_cq(fz, fdi);
	else if (r < 345)
		fz_create_channel(fz, fdi);
	else if (r < 352)
		fz_async_fd(fz, fdi);
	else if (r < 400)
		fz_create_qp(fz, fdi);
	else if (r < 500 && FZ_PCT(fz, 95))
		fz_modify_qp(fz, fdi);
	else if (r < 500)
		fz_rate_limit(fz, fdi);
	else if (r < 515)
		fz_query_qp(fz, fdi);
	else if (r < 540)
		fz_srq(fz, fdi);
	else if (r < 555)
		fz_create_ah(fz, fdi);
	else if (r < 570)
		fz_mcast(fz, fdi);
	else if (r < 585)
		fz_map_db(fz, fdi);
	else if (r < 600) {
		struct fz_obj *o = fz_pick_obj(fz, FZ_PCT(fz, 80) ? FT_QP :
					       FT_SRQ, fdi);

		if (o)
			fz_map_wq(fz, fdi, o->type == FT_SRQ, o->handle, o->qpt);
	} else if (r < 610)
		fz_query(fz, fdi);
	else if (r < 615 && FZ_PCT(fz, 60))
		fz_matcher(fz, fdi);
	else if (r < 615 && FZ_PCT(fz, 50))
		fz_steer_action(fz, fdi);
	else if (r < 615 && FZ_PCT(fz, 50))
		fz_create_mkey(fz, fdi);
	else if (r < 615 && FZ_PCT(fz, 50))
		fz_alloc_mw(fz, fdi);
	else if (r < 615 && FZ_PCT(fz, 50))
		fz_dm(fz, fdi);
	else if (r < 615)
		fz_xrc(fz, fdi);
	else if (r < 700)
		fz_destroy(fz, fdi, 0);
	else if (r < 860)
		fz_datapath(fz);
	else if (r < 930)
		fz_mmap_abuse(fz);
	else if (r < 960 && fz->nl && !fz->in_child)
		fz_netlink(fz);
	else if (r < 963 && !fz->in_child)
		fz_fork(fz);
	else if (r < 968)
		fz_reopen(fz);
	else
		fz_doorbell(fz, fdi);
}

FZ void fz_drop_privileges(void)
{
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534)) {
		perror("# fuzz: drop privileges");
		_exit(4);
	}
}

FZ int fz_setup(struct fz *fz, const struct fz_cfg *cfg)
{
	struct sv_query_gid g = { .size = sizeof(g), .port_num = 1, .index = 1 };
	int i;

	memset(fz, 0, sizeof(*fz));
	fz->cfg = cfg;
	fz->rng = cfg->seed * 0x9E3779B97F4A7C15ULL + cfg->idx + 1;
	if (!fz->rng)
		fz->rng = 1;
	fz->st = cfg->sh ? &cfg->sh->st[cfg->idx] : &fz->local;
	pthread_mutex_init(&fz->mlock, NULL);
	for (i = 0; i < FZ_NFD; i++) {
		fz->fd[i] = open(SV_DEV0, O_RDWR | O_CLOEXEC);
		if (fz->fd[i] < 0)
			return -errno;
	}
	fz->fd[FZ_NFD] = cfg->shared_fd;
	if (ioctl(fz->fd[0], SV_IOC_QUERY_GID, &g))
		return -errno;
	memcpy(fz->gid, g.gid, 16);
	for (i = 0; i < FZ_NBUF; i++) {
		fz->buf[i] = mmap(NULL, FZ_BUFLEN, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fz->buf[i] == MAP_FAILED)
			return -ENOMEM;
		memset(fz->buf[i], i, FZ_BUFLEN);
	}
	fz->robuf = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	fz->hole = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fz->arg = malloc(SV_MAX_ARG_SIZE + 4096);
	if (fz->robuf == MAP_FAILED || fz->hole == MAP_FAILED || !fz->arg)
		return -ENOMEM;
	/* hole: an unmapped page; edge: a page with an unmapped one after. */
	fz->edge = fz->hole + 4096;
	munmap(fz->hole, 4096);
	munmap(fz->edge + 4096, 4096);
	if (cfg->netlink)
		fz_nl_open(fz);
	return 0;
}

/*
 * Run a worker: cfg->ops steps (0: forever), then close everything and
 * record how much VmPin is left. Returns the exit code for the process.
 */
FZ int fz_worker(const struct fz_cfg *cfg)
{
	static struct fz fzs;	/* big: not on the stack */
	struct fz *fz = &fzs;
	long pin0, pin1 = -1;
	uint64_t i;
	int ret, tries;

	fz_install_handlers();
	if (cfg->nobody)
		fz_drop_privileges();
	pin0 = sv_vm_pin_kb();
	ret = fz_setup(fz, cfg);
	if (ret) {
		fprintf(stderr, "# fuzz worker %d: setup: %s\n", cfg->idx,
			strerror(-ret));
		return 5;
	}
	if (cfg->scribbler &&
	    pthread_create(&fz->scribbler, NULL, fz_scribble, fz))
		return 6;
	for (i = 0; !cfg->ops || i < cfg->ops; i++)
		fz_step(fz);
	if (cfg->scribbler) {
		__atomic_store_n(&fz->stop, 1, __ATOMIC_RELAXED);
		pthread_join(fz->scribbler, NULL);
	}
	/* Everything goes: mappings, files, and with them every charge. */
	fz_unmap_all(fz);
	if (fz->nl)
		mnl_socket_close(fz->nl);
	/* Our files, the shared one, channel and async fds we kept. */
	close_range(3, ~0U, 0);
	/*
	 * Rings made on the shared file are charged to us until the last
	 * worker and the parent have closed it.
	 */
	if (cfg->sh) {
		__atomic_fetch_add(&cfg->sh->closed, 1, __ATOMIC_SEQ_CST);
		while (!__atomic_load_n(&cfg->sh->released, __ATOMIC_SEQ_CST))
			usleep(2000);
	}
	for (tries = 0; tries < 200; tries++) {
		pin1 = sv_vm_pin_kb();
		if (pin1 <= pin0)
			break;
		usleep(10000);
	}
	fz->st->vmpin_left_kb = pin1 - pin0;
	fz->st->done = 1;
	return 0;
}

#endif /* SV_FUZZ_H */
