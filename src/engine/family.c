/* SPDX-License-Identifier: MIT */
/*
 * family.c - the memory a process shares with the children it forks.
 *
 * One mapping, MAP_SHARED and anonymous, made at the first use of the
 * engine: fork() gives every child the same pages at the same address, so
 * parent, children and grandchildren (a family) see one set of timers, as
 * on Linux they share one set of files.  It holds the lock, a record per
 * process that holds timers, and the timer records.  The mapping reserves
 * room for many timers (MAP_NORESERVE): pages are taken as records are
 * first used.  A family has records for PROC_MAX processes; a process
 * that finds them all taken by others, holding nothing in the family,
 * maps a family of its own (tfd_family_start_anew).
 *
 * A process whose service thread dies (the process exited, was killed,
 * or exec'd) must not leave its timers undelivered nor the lock held:
 * the lock is robust (a waiter gets EOWNERDEAD and repairs what a dying
 * owner may have left half done), and each service thread holds its
 * record's `alive` mutex, robust too, which the kernel marks when the
 * thread dies and so wakes a survivor that waits on it (service.c).  The
 * survivor reaps the dead process: its holds go, and each timer it
 * delivered waits for a process that still holds it to adopt it.
 */
#define _GNU_SOURCE
#include "engine/engine.h"
#include "lockorder.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct tfd_family *tfd_fam;

/* Where no mapping can be had: a family with no room for a timer, so that
 * the lock still works and every create fails with ENOMEM. */
static struct tfd_family no_room;

#ifdef TFD_DEBUG_LOCKS
void tfd_engine_assert_locked(void)
{
	tfd_lock_assert_held(LK_FAMILY);
}
#endif
#define HELD(v) ((v) ? tfd_lock_taken(LK_FAMILY) : tfd_lock_released(LK_FAMILY))

static void robust_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

static void init(struct tfd_family *f, uint32_t max)
{
	int i;

	robust_init(&f->lock);
	for (i = 0; i < PROC_MAX; i++)
		f->proc[i].state = P_FREE;
	f->max = max;
}

/* A fresh family: room for 2^20 timers in all (72 MiB of addresses, no
 * memory until used), less where the address space (or, under
 * mlockall(MCL_FUTURE), the locked memory) is limited.  Mapped without
 * access first and unlocked before it is made writable: a program that
 * locks all its future mappings would else have the kernel lock, and
 * so fault in, the whole of it at once.  NULL if none can be mapped. */
static struct tfd_family *map_family(void)
{
	uint32_t max;

	for (max = 1u << 20; max >= 1u << 10; max >>= 4) {
		size_t size = sizeof(struct tfd_family) +
		              (size_t)max * sizeof(struct tfd_timer);
		void *p = mmap(NULL, size, PROT_NONE,
		               MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE,
		               -1, 0);

		if (p != MAP_FAILED &&
		    (munlock(p, size) != 0 ||
		     mprotect(p, size, PROT_READ | PROT_WRITE) != 0)) {
			munmap(p, size);
			p = MAP_FAILED;
		}
		if (p != MAP_FAILED) {
			init(p, max);
			tfd_clock_frame_made(p);
			return p;
		}
	}
	return NULL;
}

static void open_once(void)
{
	struct tfd_family *f = map_family();

	if (!f) {
		init(&no_room, 0);
		f = &no_room;
	}
	tfd_eng.vnow = f->vnow;
	__atomic_store_n(&tfd_fam, f, __ATOMIC_RELEASE);
}

int tfd_family_open(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, open_once);
	return tfd_fam->max ? 0 : ENOMEM;
}

/* ---- the lock ---- */

/*
 * Nobody sleeps inside the robust mutex itself.  Its unlock wakes one
 * sleeper, and a sleeper woken and killed before it takes the lock takes
 * that wake-up with it: the kernel passes it on only if the lock is still
 * free when the sleeper dies, so the others could sleep for ever beside a
 * free lock (a parent whose children are killed in their calls).
 * A thread that cannot have the lock sets `sleepers` and sleeps on that
 * word; the unlock that finds it set clears it and wakes all of them (a
 * dead one cannot swallow that), and each tries again.  A sleep lasts
 * LOCK_NAP at most: an owner that dies holding the lock unlocks nothing,
 * and the next try finds it dead (EOWNERDEAD).
 */
#define LOCK_NAP (10 * 1000 * 1000L) /* ns */

/* The holder of f's lock makes its sequence count odd, and another value
 * than it was (one that died holding the lock left it odd), before it
 * changes anything; even again as it lets go, after its changes.  Not in
 * a ThreadSanitizer build, where nothing looks without the lock (and
 * which does not take fences). */
static void seq_held(struct tfd_family *f)
{
#ifdef TFD_TSAN
	(void)f;
#else
	unsigned s = __atomic_load_n(&f->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&f->seq, (s | 1U) + 2U, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
#endif
}

static void seq_let_go(struct tfd_family *f)
{
#ifdef TFD_TSAN
	(void)f;
#else
	unsigned s = __atomic_load_n(&f->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&f->seq, s + 1U, __ATOMIC_RELEASE);
#endif
}

/* The lock of f, as it is. */
static int lock_of(struct tfd_family *f)
{
	int r;

	while ((r = pthread_mutex_trylock(&f->lock)) == EBUSY) {
		/* A read-modify-write: the try below comes after it. */
		(void)__atomic_exchange_n(&f->sleepers, 1, __ATOMIC_SEQ_CST);
		r = pthread_mutex_trylock(&f->lock);
		if (r != EBUSY)
			break;
		tfd_futex_nap(&f->sleepers, 1, LOCK_NAP);
	}
	if (r == 0 || r == EOWNERDEAD)
		seq_held(f);
	return r;
}

/*
 * A service thread woken while the waker holds the lock would only find
 * the lock held and sleep again until it is let go of (two more system
 * calls and switches): a poke, always made with the lock held, changes
 * the thread's word at once and wakes it once the lock is let go of
 * (tfd_family_unlock).  Words stay mapped (a family left stays mapped):
 * a wake that comes late finds at worst a thread that has gone on.
 */
#define OWED_MAX 4
static __thread unsigned *owed[OWED_MAX]
	__attribute__((tls_model("initial-exec")));
static __thread unsigned nowed __attribute__((tls_model("initial-exec")));

static void wake_later(unsigned *word)
{
	unsigned i;

	for (i = 0; i < nowed; i++)
		if (owed[i] == word)
			return;
	if (nowed == OWED_MAX)
		tfd_futex_wake(word, 1); /* (many at once: a family's repair) */
	else
		owed[nowed++] = word;
}

static void wake_owed(void)
{
	while (nowed)
		tfd_futex_wake(owed[--nowed], 1);
}

static void unlock_of(struct tfd_family *f)
{
	seq_let_go(f);
	pthread_mutex_unlock(&f->lock);
	/* After the unlock, in that order (a read-modify-write: the word
	 * shares the lock's cache line, which this thread has just written). */
	if (__atomic_exchange_n(&f->sleepers, 0, __ATOMIC_SEQ_CST))
		tfd_futex_wake(&f->sleepers, INT_MAX);
}

static void repair(struct tfd_family *f);

/* The lock of our family.  A thread that waited for the lock of a family
 * this process has just left (tfd_family_start_anew) lets go of it and
 * takes the new one's. */
void tfd_family_lock(void)
{
	for (;;) {
		struct tfd_family *f = __atomic_load_n(&tfd_fam, __ATOMIC_ACQUIRE);
		int r = lock_of(f);

		if (r == EOWNERDEAD)
			pthread_mutex_consistent(&f->lock);
		if (f == __atomic_load_n(&tfd_fam, __ATOMIC_ACQUIRE)) {
			HELD(1);
			if (r == EOWNERDEAD)
				tfd_family_repair();
			return;
		}
		if (r == EOWNERDEAD)
			repair(f); /* for those still in it */
		unlock_of(f);
	}
}

/* The service thread, busy with many timers, lets the threads that wait
 * for the lock have it in turn (the thread that has just let it go would
 * take it again first). */
int tfd_family_wanted(void)
{
	return __atomic_load_n(&tfd_fam->sleepers, __ATOMIC_RELAXED) != 0;
}

void tfd_family_yield(void)
{
	tfd_family_unlock();
	sched_yield();
	tfd_family_lock();
}

void tfd_family_unlock(void)
{
	HELD(0);
	unlock_of(tfd_fam);
	wake_owed();
}

/*
 * Every record of our family is taken by a live process, and this one
 * holds nothing in it (its fork found no room, or it let go of its
 * record): it starts a family of its own, with the clocks it had, which
 * the children it forks from now on share.  Linux has no limit on the
 * processes that share timers, and none on those that make their own; a
 * process beyond the family's records still makes, arms and reads timers
 * of its own as any other.  Its old family's lock held; returns with the
 * new one's.  0, or ENOMEM (no mapping to be had).  The old mapping stays
 * mapped: another thread of ours may be waiting for its lock.
 */
int tfd_family_start_anew(void)
{
	struct tfd_family *old = tfd_fam, *f = map_family();

	TFD_ASSERT_LOCKED();
	if (!f)
		return ENOMEM;
	memcpy(f->vnow, old->vnow, sizeof(f->vnow));
	pthread_mutex_lock(&f->lock); /* nobody else knows it yet */
	seq_held(f);
	tfd_eng.vnow = f->vnow;
	__atomic_store_n(&tfd_fam, f, __ATOMIC_RELEASE);
	unlock_of(old);
	return 0;
}

/*
 * The lock, taken by a thread of the program, with cancellation off: a
 * pthread_cancel() never leaves it owned by a dead thread.  The program's
 * signals are not blocked (two system calls a call, as much again as the
 * call itself: tfd(7), Signals): a handler that runs while its thread is
 * inside a call of ours (other than a blocked tfd_read) must neither call
 * the library nor jump out of the call, the rule malloc() has; under the
 * preload library none runs there (its handlers are deferred, signals.c).
 */
void tfd_engine_relock(int *cancel_state)
{
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, cancel_state);
	tfd_family_lock();
	if (tfd_eng.start_pending)
		tfd_engine_start_pending(); /* in a forked child */
}

void tfd_engine_lock(int *cancel_state)
{
	tfd_family_open();
	tfd_engine_relock(cancel_state);
	if (tfd_waits_blocked)
		tfd_waits_check(); /* what a jump out of a wait left */
}

void tfd_engine_unlock(int cancel_state)
{
	tfd_family_unlock();
	pthread_setcancelstate(cancel_state, NULL);
}

/* Drop the lock until tfd_family_changed() (a broadcast to every thread of
 * the family that waits: each looks again at what it waits for). */
void tfd_family_wait(void)
{
	struct tfd_family *f = tfd_fam;
	unsigned seq = f->changed;

	/* Atomic: f may be a family we have left when the wait ends. */
	__atomic_add_fetch(&f->nwaiting, 1, __ATOMIC_SEQ_CST);
	tfd_family_unlock();
	tfd_futex_wait(&f->changed, seq);
	tfd_family_lock();
	__atomic_sub_fetch(&f->nwaiting, 1, __ATOMIC_SEQ_CST);
}

static void changed(struct tfd_family *f)
{
	__atomic_add_fetch(&f->changed, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&f->nwaiting, __ATOMIC_SEQ_CST))
		tfd_futex_wake(&f->changed, INT_MAX);
}

void tfd_family_changed(void)
{
	changed(tfd_fam);
}

/* ---- timer records ---- */

struct tfd_timer *tfd_family_new_timer(void)
{
	struct tfd_family *f = tfd_fam;
	struct tfd_timer *t;

	TFD_ASSERT_LOCKED();
	if (f->free) {
		t = &f->timer[f->free - 1];
		f->free = t->next;
	} else if (f->used < f->max) {
		t = &f->timer[f->used++];
		t->gen = 0;
	} else {
		return NULL;
	}
	memset(&t->m, 0, sizeof(t->m));
	t->q.pos = TFD_QUEUE_NONE;
	t->hold = 0;
	t->holders = 0;
	t->backoff = 0;
	t->file = -1;
	t->next = 0;
	t->deliverer = NO_PROC;
	t->flags = T_USED;
	__atomic_store_n(&t->inflight, 0, __ATOMIC_RELAXED);
	return t;
}

void tfd_family_free_timer(struct tfd_timer *t)
{
	struct tfd_family *f = tfd_fam;

	TFD_ASSERT_LOCKED();
	tfd_engine_inbox_unlink(t);
	t->flags = 0;
	t->gen++;
	t->holders = 0;
	t->deliverer = NO_PROC;
	t->next = f->free;
	f->free = (uint32_t)(t - f->timer) + 1;
}

/* ---- process records ---- */

/* CLOCK_MONOTONIC by the system call itself: this runs on the program's
 * threads with the lock held (in fork()'s handlers too), where the
 * preload library's clock_gettime() would read the virtual clocks, which
 * takes the lock. */
static int64_t mono_ns(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * TFD_NSEC + ts.tv_nsec;
}

/* A free record, made state (P_PENDING for a child of a fork in progress,
 * forked by parent; P_LIVE for this process).  -1 if all are taken by
 * live processes. */
int tfd_family_new_proc(int parent, int state)
{
	struct tfd_family *f = tfd_fam;
	int i, b, pass;

	TFD_ASSERT_LOCKED();
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < PROC_MAX; i++) {
			struct tfd_proc *p = &f->proc[i];

			if (p->state != P_FREE)
				continue;
			memset(p, 0, sizeof(*p));
			robust_init(&p->alive);
			p->state = state;
			f->inuse |= tfd_proc_bit(i);
			p->parent = parent;
			p->pid = state == P_LIVE ? getpid() : 0;
			p->pending_since = 0; /* first seen pending: gone() */
			for (b = 0; b < NBASE; b++)
				p->sleep_until[b] = TFD_NS_MAX;
			return i;
		}
		tfd_family_reap_dead(1); /* a record may be a dead one's */
	}
	return -1;
}

void tfd_family_free_proc(int i)
{
	TFD_ASSERT_LOCKED();
	tfd_fam->proc[i].state = P_FREE;
	tfd_fam->inuse &= ~tfd_proc_bit(i);
}

/* The word of the alive mutex: glibc's robust mutexes keep the owner's
 * thread id there, and the kernel sets FUTEX_OWNER_DIED in it when that
 * thread dies holding it (the robust futex ABI). */
static int *alive_word(struct tfd_proc *p)
{
#ifdef __GLIBC__
	return &p->alive.__data.__lock;
#else
	(void)p;
	return NULL;
#endif
}

int tfd_family_alive_dead(int i)
{
	int *w = alive_word(&tfd_fam->proc[i]);

	return w && (__atomic_load_n(w, __ATOMIC_ACQUIRE) & FUTEX_OWNER_DIED);
}

/* The futex word a survivor sleeps on to learn that record i's service
 * thread died, and the value to sleep with (FUTEX_WAITERS set, so that
 * the kernel wakes a waiter).  NULL if there is none to watch. */
unsigned *tfd_family_watch(int i, unsigned *val)
{
	int *w = alive_word(&tfd_fam->proc[i]);
	unsigned v;

	if (!w)
		return NULL;
	v = (unsigned)__atomic_load_n(w, __ATOMIC_ACQUIRE);
	while ((v & FUTEX_TID_MASK) && !(v & (FUTEX_WAITERS | FUTEX_OWNER_DIED))) {
		if (__atomic_compare_exchange_n(w, (int *)&v,
		                                (int)(v | FUTEX_WAITERS), 0,
		                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			v |= FUTEX_WAITERS;
	}
	if (!(v & FUTEX_TID_MASK) || (v & FUTEX_OWNER_DIED))
		return NULL; /* not held, or already dead: nothing to wait for */
	*val = v;
	return (unsigned *)w;
}

static void wake_proc(struct tfd_family *f, int i)
{
	struct tfd_proc *p = &f->proc[i];

	__atomic_store_n(&p->wake, p->wake + 1, __ATOMIC_RELEASE);
	if (p->sleeping)
		wake_later(&p->wake);
}

void tfd_family_poke(int i)
{
	wake_proc(tfd_fam, i);
}

/* t has no deliverer: every process that holds it looks at it. */
void tfd_family_orphan(struct tfd_timer *t)
{
	uint64_t m;
	int i;

	TFD_ASSERT_LOCKED();
	tfd_engine_inbox_unlink(t);
	t->flags &= (unsigned char)~T_COVER; /* its adopter's waits may not */
	t->deliverer = NO_PROC;
	t->q.pos = TFD_QUEUE_NONE;
	TFD_PROC_EACH(i, t->holders, m) {
		tfd_fam->proc[i].adopt = 1;
		tfd_family_poke(i);
	}
}

/* Record i's process is gone: its holds go with it, and each timer it
 * delivered is orphaned (or freed, if nobody else holds it). */
static void reap(int i)
{
	struct tfd_family *f = tfd_fam;
	struct tfd_proc *p = &f->proc[i];
	uint64_t bit = tfd_proc_bit(i);
	uint32_t k;

	while (p->inbox) {
		struct tfd_timer *t = &f->timer[p->inbox - 1];

		p->inbox = t->next;
		t->next = 0;
		t->flags &= (unsigned char)~T_INBOX;
	}
	for (k = 0; k < f->used; k++) {
		struct tfd_timer *t = &f->timer[k];

		if (!(t->flags & T_USED) || !(t->holders & bit))
			continue;
		t->holders &= ~bit;
		if (t->deliverer == i) {
			/* A post it was writing will never be finished. */
			__atomic_store_n(&t->inflight, 0, __ATOMIC_RELEASE);
			t->deliverer = NO_PROC;
			t->q.pos = TFD_QUEUE_NONE;
		}
		if (!t->holders)
			tfd_family_free_timer(t);
		else if (t->deliverer == NO_PROC)
			tfd_family_orphan(t);
	}
	/* Its alive mutex is left as the kernel marked it: a record is
	 * made anew (tfd_family_new_proc) before it is used again. */
	p->state = P_FREE;
	f->inuse &= ~bit;
	f->reaped++;
	tfd_family_changed();
}

/* Is record i's process gone?  Its service thread died (a mark the kernel
 * made: no system call); a child whose thread could not start, by its
 * pid; thoroughly, also a record with no thread (the virtual clocks), by
 * its pid, or a child that never claimed its record. */
static int gone(int i, int thoroughly)
{
	struct tfd_proc *p = &tfd_fam->proc[i];
	int e = errno, r;

	if (p->state == P_LIVE && p->threaded)
		return tfd_family_alive_dead(i);
	if (!thoroughly && !(p->state == P_LIVE && p->threadless))
		return 0;
	if (p->state == P_PENDING && !p->pid) { /* never ran? */
		int64_t now = mono_ns() - tfd_eng.timens[BASE_MONO];

		if (!p->pending_since) /* in the family's frame (clock.c) */
			p->pending_since = now;
		return now - p->pending_since > TFD_NSEC;
	}
	r = p->pid && kill(p->pid, 0) < 0 && errno == ESRCH;
	errno = e;
	return r;
}

void tfd_family_reap_dead(int thoroughly)
{
	uint64_t m;
	int i;

	TFD_ASSERT_LOCKED();
	TFD_PROC_EACH(i, tfd_fam->inuse, m)
		if (i != tfd_eng.self && gone(i, thoroughly))
			reap(i);
}

/*
 * A process died holding the lock, in the middle of something.  What it
 * was doing is unknown: forget the processes that died, rebuild the list
 * of free records and let every process requeue what it delivers from the
 * timers' models (the model of the one timer it was changing may be half
 * set: that timer is as the dead process left it).
 */
void tfd_family_repair(void)
{
	tfd_family_reap_dead(0);
	repair(tfd_fam);
}

/* The records of f made whole again (f may be a family we have left: the
 * dead are then reaped by the service threads of those still in it). */
static void repair(struct tfd_family *f)
{
	uint32_t k;
	int i;

	f->free = 0;
	for (k = f->used; k-- > 0;) {
		struct tfd_timer *t = &f->timer[k];

		t->flags &= (unsigned char)~T_INBOX;
		if (!(t->flags & T_USED)) {
			t->next = f->free;
			f->free = k + 1;
		}
	}
	f->inuse = 0; /* (a dead owner may have left it half changed) */
	for (i = 0; i < PROC_MAX; i++) {
		if (f->proc[i].state == P_FREE)
			continue;
		f->inuse |= tfd_proc_bit(i);
		f->proc[i].inbox = 0;
		f->proc[i].resync = 1;
		wake_proc(f, i);
	}
	changed(f);
}
