/* SPDX-License-Identifier: MIT */
/*
 * lockorder.c - the run-time check of lockorder.h's order, in builds with
 * TFD_DEBUG_LOCKS: which ranks this thread holds (a bit each), and the
 * addresses of the named locks.
 */
#include "lockorder.h"

#ifdef TFD_DEBUG_LOCKS
#undef pthread_mutex_lock
#undef pthread_mutex_trylock
#undef pthread_mutex_unlock
#undef pthread_rwlock_rdlock
#undef pthread_rwlock_wrlock
#undef pthread_rwlock_unlock

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const names[] = {
	[LK_SELECT] = "select_lock (api.c)",
	[LK_SETS] = "sets_lock (sets.c)",
	[LK_AGENT] = "agent_lock (vtime/step.c)",
	[LK_PUBLISH] = "publish_lock (vtime/step.c)",
	[LK_SYNC] = "sync_lock (vtime/step.c)",
	[LK_SIGTIMERS] = "lock (preload/sigtimers.c)",
	[LK_EPOLL] = "lock (preload/epoll.c)",
	[LK_SIGNALS] = "lock (preload/signals.c)",
	[LK_RAWSYS] = "prog_lock (preload/rawsys.c)",
	[LK_KERNEL] = "lock (backend_kernel.c)",
	[LK_FAMILY] = "the family's lock (engine/family.c)",
};

#define NAMED 16
static struct {
	const void *lock;
	enum tfd_lock_rank rank;
} named[NAMED];
static int nnamed; /* [A] entries published */
static __thread unsigned held; /* bit per rank */

/* Called by constructors, one at a time (the loader's lock), but not
 * always before a thread of ours runs: a plugin's own constructor may
 * make a timer before the library's have all run.  An entry is written,
 * then published. */
void tfd_lock_name(const void *lock, enum tfd_lock_rank rank)
{
	int i = __atomic_load_n(&nnamed, __ATOMIC_RELAXED);

	if (i == NAMED)
		abort();
	named[i].lock = lock;
	named[i].rank = rank;
	__atomic_store_n(&nnamed, i + 1, __ATOMIC_RELEASE);
}

static int rank_of(const void *lock)
{
	int i, n = __atomic_load_n(&nnamed, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		if (named[i].lock == lock)
			return (int)named[i].rank;
	return -1; /* a lock of the program's (timed waits pass them on) */
}

static void stop(const char *what, enum tfd_lock_rank a, unsigned h)
{
	int b = 0;

	while (!(h & (1u << b)))
		b++;
	fprintf(stderr, "tfd: lock order broken: %s %s while holding %s\n",
		what, names[a], names[b]);
	abort();
}

void tfd_lock_taken(enum tfd_lock_rank rank)
{
	unsigned at_or_below = ~((1u << rank) - 1);

	if (held & at_or_below)
		stop("took", rank, held & at_or_below);
	held |= 1u << rank;
}

void tfd_lock_released(enum tfd_lock_rank rank)
{
	if (!(held & (1u << rank))) {
		fprintf(stderr, "tfd: lock order: %s released, not held\n",
			names[rank]);
		abort();
	}
	held &= ~(1u << rank);
}

void tfd_lock_assert_held(enum tfd_lock_rank rank)
{
	if (!(held & (1u << rank))) {
		fprintf(stderr, "tfd: %s is not held here\n", names[rank]);
		abort();
	}
}

static int taken(const void *lock, int r)
{
	int k = rank_of(lock);

	if (k >= 0 && (r == 0 || r == EOWNERDEAD))
		tfd_lock_taken((enum tfd_lock_rank)k);
	return r;
}

static void before(const void *lock)
{
	int k = rank_of(lock);
	unsigned at_or_below = k >= 0 ? ~((1u << k) - 1) : 0;

	if (held & at_or_below) /* check before blocking: a deadlock */
		stop("takes", (enum tfd_lock_rank)k, held & at_or_below);
}

/* A lock taken before its name was published is let go of unchecked. */
static int released(const void *lock, int r)
{
	int k = rank_of(lock);

	if (k >= 0)
		held &= ~(1u << k);
	return r;
}

int tfd_lock_mutex(pthread_mutex_t *m)
{
	before(m);
	return taken(m, pthread_mutex_lock(m));
}

/* A try never waits, so it may take a lock out of order. */
int tfd_trylock_mutex(pthread_mutex_t *m)
{
	int r = pthread_mutex_trylock(m), k = rank_of(m);

	if (k >= 0 && (r == 0 || r == EOWNERDEAD))
		held |= 1u << k;
	return r;
}

int tfd_unlock_mutex(pthread_mutex_t *m)
{
	return released(m, pthread_mutex_unlock(m));
}

int tfd_lock_rd(pthread_rwlock_t *l)
{
	before(l);
	return taken(l, pthread_rwlock_rdlock(l));
}

int tfd_lock_wr(pthread_rwlock_t *l)
{
	before(l);
	return taken(l, pthread_rwlock_wrlock(l));
}

int tfd_unlock_rw(pthread_rwlock_t *l)
{
	return released(l, pthread_rwlock_unlock(l));
}
#else
typedef int tfd_lockorder_unused; /* ISO C: no empty unit */
#endif
