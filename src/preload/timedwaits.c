/* SPDX-License-Identifier: MIT */
/*
 * timedwaits.c - waits with a timeout on a condition, a semaphore, a lock
 * or a thread's end, on virtual time.  Only another thread ends them
 * early, through memory the kernel does not tell us about: they wait for
 * real in slices (vtime.h: tfd_dom_slice_wait), each the call's own with
 * a real time as its limit, which the mover's poke moves to long past
 * when the virtual clock reaches their deadline (they end with
 * ETIMEDOUT).  A deadline is counted on the clock the call names, as an
 * absolute time.  One beyond the horizon is none: the wait is the call's
 * own without a limit (NULL), blocked outside our waits
 * as an untimed wait is, using no CPU.  A raw futex wait with a timeout
 * (syscall(2): GLib's conditions) is one more of them.
 */
#include "preload/preload.h"
#include "vtime/vtime.h"

#include <errno.h>
#include <string.h>
#include <linux/futex.h>
#include <semaphore.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The deadline of an absolute time on clock c, on the virtual
 * CLOCK_MONOTONIC (DOM_NEVER beyond the horizon). */
static int64_t deadline_of(clockid_t c, const struct timespec *abs)
{
	int64_t now = tfd_dom_clock_now(CLOCK_MONOTONIC);
	int64_t left = tfd_ts_to_ns(abs) - tfd_dom_clock_now(c);

	if (left > TFD_HORIZON)
		return DOM_NEVER;
	return left < 0 ? now : now + left;
}

/* Which clock a condition variable measures its timeouts on: glibc keeps
 * it in bit 1 of __wrefs (pthread_condattr_setclock). */
static clockid_t cond_clock(const pthread_cond_t *c)
{
	return (c->__data.__wrefs & 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

/* ---- conditions ---- */

/* What a wait on c is parked on (vtime.h: tfd_dom_park): c, or NULL if it
 * is shared between processes, which may map it at other addresses (glibc
 * keeps that in bit 0 of __wrefs, which its waits change atomically). */
const void *tfd_cond_obj(const pthread_cond_t *c)
{
	return (__atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED) & 1)
	               ? NULL
	               : c;
}

/* The same for a semaphore: glibc's sem_t of 64-bit machines holds, after
 * its 64-bit value, what its futex calls add to their operation: 0 if it
 * is private.  Elsewhere none is parked. */
const void *tfd_sem_obj(const sem_t *s)
{
	int shared;

	if (sizeof(void *) != 8)
		return NULL;
	memcpy(&shared, (const char *)s + sizeof(uint64_t), sizeof(shared));
	return shared ? NULL : s;
}

struct cw {
	pthread_cond_t *c;
	pthread_mutex_t *m;
};

static int cond_try(void *ctx, const struct timespec *until)
{
	struct cw *w = ctx;

	if (tfd_dom_no_wait(until))
		return ETIMEDOUT; /* nothing to try without waiting */
	if (!until)
		return R(pthread_cond_wait)(w->c, w->m);
	return R(pthread_cond_clockwait)(w->c, w->m, CLOCK_MONOTONIC, until);
}

int tfd_timed_cond(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                   const struct timespec *abs)
{
	struct cw w = { c, m };

	if (clk == (clockid_t)-1)
		clk = cond_clock(c);
	return tfd_dom_slice_wait(deadline_of(clk, abs), cond_try, &w,
	                          tfd_cond_obj(c));
}

/* ---- semaphores ---- */

static int sem_try(void *ctx, const struct timespec *until)
{
	if (tfd_dom_no_wait(until))
		return sem_trywait(ctx) == 0 ? 0 : errno == EAGAIN ? ETIMEDOUT
		                                                   : errno;
	if (!until)
		return R(sem_wait)(ctx) == 0 ? 0 : errno;
	return R(sem_clockwait)(ctx, CLOCK_MONOTONIC, until) == 0 ? 0 : errno;
}

int tfd_timed_sem(sem_t *s, clockid_t clk, const struct timespec *abs)
{
	int e;

	if (abs->tv_nsec < 0 || abs->tv_nsec >= TFD_NSEC) {
		if (sem_trywait(s) == 0)
			return 0; /* Linux takes an available count first */
		errno = EINVAL;
		return -1;
	}
	e = tfd_dom_slice_wait(deadline_of(clk, abs), sem_try, s,
	                       tfd_sem_obj(s));
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

/* ---- mutexes and read-write locks ---- */

struct lw {
	void *lock;
	enum tfd_lock_kind kind;
};

static int lock_try(void *ctx, const struct timespec *until)
{
	struct lw *w = ctx;

	if (tfd_dom_no_wait(until)) {
		int e = w->kind == TL_MUTEX ? pthread_mutex_trylock(w->lock)
		        : w->kind == TL_READ ? pthread_rwlock_tryrdlock(w->lock)
		                       : pthread_rwlock_trywrlock(w->lock);

		return e == EBUSY ? ETIMEDOUT : e;
	}
	if (!until)
		return w->kind == TL_MUTEX   ? pthread_mutex_lock(w->lock)
		       : w->kind == TL_READ ? pthread_rwlock_rdlock(w->lock)
		                      : pthread_rwlock_wrlock(w->lock);
	if (w->kind == TL_MUTEX)
		return R(pthread_mutex_clocklock)(w->lock, CLOCK_MONOTONIC, until);
	if (w->kind == TL_READ)
		return R(pthread_rwlock_clockrdlock)(w->lock, CLOCK_MONOTONIC,
		                                       until);
	return R(pthread_rwlock_clockwrlock)(w->lock, CLOCK_MONOTONIC, until);
}

int tfd_timed_lock(void *lock, enum tfd_lock_kind kind, clockid_t clk,
                   const struct timespec *abs)
{
	struct lw w = { lock, kind };
	int e = lock_try(&w, &(const struct timespec){ 0, 0 });

	if (e != ETIMEDOUT)
		return e; /* taken, or an error (EDEADLK...) */
	if (abs->tv_nsec < 0 || abs->tv_nsec >= TFD_NSEC)
		return EINVAL;
	return tfd_dom_slice_wait(deadline_of(clk, abs), lock_try, &w, NULL);
}

/* ---- joins ---- */

struct jw {
	pthread_t th;
	void **ret;
};

static int join_try(void *ctx, const struct timespec *until)
{
	struct jw *w = ctx;
	int e;

	if (tfd_dom_no_wait(until)) {
		e = pthread_tryjoin_np(w->th, w->ret);
		return e == EBUSY ? ETIMEDOUT : e;
	}
	if (!until)
		return pthread_join(w->th, w->ret);
	return R(pthread_clockjoin_np)(w->th, w->ret, CLOCK_MONOTONIC, until);
}

int tfd_timed_join(pthread_t th, void **ret, clockid_t clk,
                   const struct timespec *abs)
{
	struct jw w = { th, ret };

	if (!abs)
		return pthread_join(th, ret);
	return tfd_dom_slice_wait(deadline_of(clk, abs), join_try, &w, NULL);
}

/* ---- raw futex waits ----
 *
 * syscall(SYS_futex, FUTEX_WAIT or FUTEX_WAIT_BITSET with a timeout):
 * GLib's conditions (g_cond_wait_until), and any program that waits on a
 * futex of its own.  Each slice is a FUTEX_WAIT_BITSET with the program's
 * word, value and bitset (and its private flag), until a real time; the
 * look without waiting is one with a time long past ({0, 0}), which the
 * kernel answers as the program's call would (EAGAIN for a changed word,
 * EFAULT, EINVAL), never ours reading its memory.
 */
struct fw {
	uint32_t *word;
	uint32_t val, bitset;
	int priv;
};

static int futex_try(void *ctx, const struct timespec *until)
{
	struct fw *w = ctx;
	long r;

	r = R(syscall)(SYS_futex, w->word, w->priv | FUTEX_WAIT_BITSET, w->val,
	               until, NULL, w->bitset);
	return r < 0 ? errno : 0;
}

long tfd_timed_futex(uint32_t *word, int op, uint32_t val,
                     const struct timespec *ts, uint32_t bitset)
{
	int cmd = op & FUTEX_CMD_MASK, e;
	struct fw w = { word, val, bitset, op & FUTEX_PRIVATE_FLAG };
	int64_t deadline;

	if (cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET)
		return TFD_PASS;
	if (!ts || ts->tv_sec < 0 || ts->tv_nsec < 0 ||
	    ts->tv_nsec >= TFD_NSEC)
		return TFD_PASS; /* no limit, or the kernel's EINVAL */
	if (cmd == FUTEX_WAIT) {
		w.bitset = FUTEX_BITSET_MATCH_ANY;
		deadline = tfd_dom_deadline(tfd_ts_to_ns(ts));
	} else {
		deadline = deadline_of(op & FUTEX_CLOCK_REALTIME ?
		                               CLOCK_REALTIME : CLOCK_MONOTONIC,
		                       ts);
	}
	e = tfd_dom_slice_wait(deadline, futex_try, &w, NULL);
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}
