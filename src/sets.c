/* SPDX-License-Identifier: MIT */
/*
 * sets.c - timer sets over any backend (sets.h).
 *
 * A set is a timer of the backend in use (its descriptor is the set's)
 * and the keys of core/set.c.  The timer is armed, absolute, at the
 * earliest deadline of the keys and disarmed when none is armed: the
 * descriptor is readable from the moment a key is due (or, right after a
 * read, a slack later: rearm()) until a read takes it, and the backend
 * is asked for one deadline whatever the number of keys.  Arming,
 * re-arming and cancelling a key touch the backend only when the
 * earliest deadline changes.  A read takes the due keys from
 * memory; with none due it waits in the timer's own read (blocking, or
 * EAGAIN), then looks again.
 *
 * TFD_TIMER_CANCEL_ON_SET: while a key asks for it, the timer is armed
 * with it too, and the backend says that CLOCK_REALTIME was set the only
 * way it can, ECANCELED from the timer's read or settime.  A settime
 * also takes the backend's cancellation (as timerfd_settime(2) does), so
 * the set keeps what it learned in core/set.c and arms its timer at once
 * until a read reports it; and a read first asks (a settime keeping the
 * flag), so that it is reported by the first read after the clock was
 * set, whether the reader waited in the timer's read or in poll(2).
 *
 * One lock, sets_lock, guards the table and every set; it is never held
 * across a wait.  The keys live in this process's memory: in a child of
 * fork() a set's descriptor is no set (tfd_set(3), BUGS): the child's
 * handler forgets the table, with no prepare handler to order against
 * the program's or the backend's.
 */
#define _GNU_SOURCE
#include "sets.h"
#include "core/set.h"
#include "core/time.h"
#include "lockorder.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define SET_SLACK_NS 50000

struct tfd_set {
	int clockid;
	int64_t slack; /* ns, on real clocks: rearm() */
	int64_t armed; /* the timer's deadline, -1 disarmed, -2 unknown,
	                * 0 at once (a cancellation waits) */
	int64_t at;    /* the time it is armed for: armed, or a slack later */
	int watch;     /* the timer armed with TFD_TIMER_CANCEL_ON_SET */
	struct tfd_set_core core;
};

static pthread_mutex_t sets_lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(sets_lock, LK_SETS);
static struct tfd_set **table; /* [sets_lock] by descriptor */
static size_t ntable;          /* [sets_lock] */
int tfd_nsets;                 /* [sets_lock], read without it */
/* A byte a number, 1 for a set's: tfd_sets_is() without the lock, which
 * the drop-in asks at every close(2) and dup2(2) while a set exists, from
 * code that may hold the engine's lock or run in a handler that
 * interrupted a set call.  Written under sets_lock as table is; a grown
 * map replaces the old, which is kept (a look may still read it). */
static unsigned char *setmap;  /* [sets_lock], read without it */
static size_t nsetmap;         /* [sets_lock], read without it */
static unsigned char *oldmaps[64]; /* [sets_lock] */
static unsigned noldmaps;      /* [sets_lock] */

static void mark(int fd, unsigned char on)
{
	__atomic_store_n(&setmap[fd], on, __ATOMIC_RELEASE);
}

static void free_set(struct tfd_set *s)
{
	tfd_set_core_free(&s->core);
	free(s);
}

/* In a child of fork(): no set, and a lock no thread holds.  The table is
 * freed unless a thread of the parent was changing it. */
static void sets_forked(void)
{
	struct tfd_set **t = table;
	size_t n = ntable, i;

	table = NULL;
	ntable = 0;
	__atomic_store_n(&tfd_nsets, 0, __ATOMIC_RELAXED);
	if (setmap)
		memset(setmap, 0, nsetmap);
	if (pthread_mutex_trylock(&sets_lock) != 0) {
		pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

		sets_lock = fresh; /* its holder is not in this process */
		return;
	}
	for (i = 0; i < n; i++)
		if (t[i])
			free_set(t[i]);
	free(t);
	pthread_mutex_unlock(&sets_lock);
}

static void at_fork_once(void)
{
	pthread_atfork(NULL, NULL, sets_forked);
}

static struct tfd_set *lookup(int fd)
{
	return fd >= 0 && (size_t)fd < ntable ? table[fd] : NULL;
}

/* Not a set: EBADF if fd is no descriptor, else EINVAL. */
static int not_set(int fd)
{
	return fcntl(fd, F_GETFD) < 0 && errno == EBADF ? EBADF : EINVAL;
}

/* The set's clock now, as its timer sees it. */
static int64_t now_of(const struct tfd_backend *be, const struct tfd_set *s)
{
	struct timespec ts;
	int64_t ns;

	if (be->virtual_now && be->virtual_now(s->clockid, &ns) == 0)
		return ns;
	clock_gettime(s->clockid, &ts);
	return tfd_ts_to_ns(&ts);
}

/*
 * The timer at the earliest deadline, if that changed (or if force); a
 * deadline after now but before not_before at not_before.  A read that
 * took keys passes now + the set's slack on real clocks: the keys of a
 * dense set (a million due within a second come a microsecond apart) are
 * then read some at a time, each at most that late, instead of one post
 * and one wake-up of the reader each; a key alone comes at its deadline.
 * Never early.  The slack is the timer slack of the thread that made the
 * set (prctl(2) PR_SET_TIMERSLACK): the lateness Linux lets the timeouts
 * of poll(2) and its kin have, 50 us unless the program chose another.
 * On the virtual clock, where a wake-up costs nothing, there is none.
 */

/* The timer's setting: at once while a cancellation waits for a read
 * (the descriptor readable for it), else the earliest deadline. */
static int64_t target(struct tfd_set *s)
{
	if (tfd_set_core_cancelled(&s->core, 0))
		return 0;
	return tfd_set_core_next(&s->core);
}

static int rearm(const struct tfd_backend *be, int fd, struct tfd_set *s,
                 int64_t now, int64_t not_before, int force)
{
	struct itimerspec its;
	int64_t next, at;
	int watch, e;

	/* At most three rounds: one that learns the clock was set makes the
	 * target 0, the next arms it, the third finds it armed. */
	for (;; force = 0) {
		next = at = target(s);
		watch = tfd_set_core_watch(&s->core);
		if (!force && next == s->armed && watch == s->watch)
			return 0;
		if (next > now && next < not_before)
			at = not_before;
		if (force && next == s->armed && next >= 0)
			at = s->at; /* (only to ask: as it is, its slack too) */
		memset(&its, 0, sizeof(its));
		if (next >= 0)
			its.it_value = tfd_ns_to_ts(at > 0 ? at : 1);
		e = be->settime(fd, TFD_TIMER_ABSTIME |
		                        (watch ? TFD_TIMER_CANCEL_ON_SET : 0),
		                &its, NULL);
		/* Armed anyway.  A cancellation left from before this watch
		 * began is no key's: Linux keeps it through a settime
		 * without the flag, the set forgot it. */
		if (e == ECANCELED && s->watch)
			tfd_set_core_clock_set(&s->core);
		if (e == ECANCELED)
			e = 0;
		s->armed = e ? -2 : next;
		s->at = at;
		if (e)
			return e;
		s->watch = watch;
	}
}

/* Room in the table and the map for fd: 0 or ENOMEM. */
static int table_room(int fd)
{
	size_t n = ntable ? ntable : 64;
	struct tfd_set **t;
	unsigned char *m;

	if ((size_t)fd < ntable && (size_t)fd < nsetmap)
		return 0;
	while (n <= (size_t)fd)
		n *= 2;
	if (n > ntable) {
		t = realloc(table, n * sizeof(*t));
		if (!t)
			return ENOMEM;
		memset(t + ntable, 0, (n - ntable) * sizeof(*t));
		table = t;
		ntable = n;
	}
	if (n > nsetmap) {
		if (noldmaps == sizeof(oldmaps) / sizeof(oldmaps[0]) ||
		    !(m = calloc(n, 1)))
			return ENOMEM;
		if (setmap)
			memcpy(m, setmap, nsetmap);
		oldmaps[noldmaps++] = setmap;
		__atomic_store_n(&setmap, m, __ATOMIC_RELEASE);
		__atomic_store_n(&nsetmap, n, __ATOMIC_RELEASE);
	}
	return 0;
}

static void drop(int fd)
{
	struct tfd_set *s = table[fd];

	table[fd] = NULL;
	mark(fd, 0);
	__atomic_store_n(&tfd_nsets, tfd_nsets - 1, __ATOMIC_RELAXED);
	free_set(s);
}

/* The lock only for a number the map says is a set's: every create and
 * every number the drop-in lets go comes here. */
void tfd_sets_forget(int fd)
{
	if (!tfd_sets_has(fd))
		return;
	pthread_mutex_lock(&sets_lock);
	if (lookup(fd))
		drop(fd);
	pthread_mutex_unlock(&sets_lock);
}

int tfd_sets_create(const struct tfd_backend *be, int clockid, int flags,
                    int *sfd)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct tfd_set *s = calloc(1, sizeof(*s));
	int fd, e;

	if (!s)
		return ENOMEM;
	pthread_once(&once, at_fork_once);
	e = be->create(clockid, flags, &fd);
	if (e) {
		free(s);
		return e;
	}
	s->clockid = clockid;
	s->slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (s->slack < 0)
		s->slack = SET_SLACK_NS; /* (Linux's default) */
	s->armed = -1;
	tfd_set_core_init(&s->core);
	pthread_mutex_lock(&sets_lock);
	e = table_room(fd);
	if (!e && table[fd])
		drop(fd); /* closed with close(2): that set is gone */
	if (!e) {
		table[fd] = s;
		mark(fd, 1);
		__atomic_store_n(&tfd_nsets, tfd_nsets + 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&sets_lock);
	if (e) {
		be->close(fd);
		free(s);
		return e;
	}
	*sfd = fd;
	return 0;
}

int tfd_sets_settime(const struct tfd_backend *be, int sfd, uint64_t key,
                     int flags, const struct itimerspec *nv,
                     struct itimerspec *old)
{
	const int both = TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET;
	int abs = (flags & TFD_TIMER_ABSTIME) != 0, e;
	struct tfd_set *s;
	int64_t now = 0;

	pthread_mutex_lock(&sets_lock);
	s = lookup(sfd);
	if (!s) {
		pthread_mutex_unlock(&sets_lock);
		return not_set(sfd);
	}
	if (old || !abs) /* (an absolute arm needs no clock) */
		now = now_of(be, s);
	/* CANCEL_ON_SET counts where a timerfd's does; elsewhere it is
	 * accepted and ignored, as by timerfd_settime(2). */
	e = tfd_set_core_arm(&s->core, key, now, tfd_ts_to_ns(&nv->it_value),
	                     tfd_ts_to_ns(&nv->it_interval), abs,
	                     s->clockid == CLOCK_REALTIME &&
	                             (flags & both) == both,
	                     old);
	/* The key is armed: a failure to move the timer (none on the
	 * engine) leaves armed -2, and the next call tries again. */
	if (!e)
		rearm(be, sfd, s, 0, 0, 0);
	pthread_mutex_unlock(&sets_lock);
	return e;
}

int tfd_sets_gettime(const struct tfd_backend *be, int sfd, uint64_t key,
                     struct itimerspec *cur)
{
	struct tfd_set *s;
	int e;

	pthread_mutex_lock(&sets_lock);
	s = lookup(sfd);
	if (s)
		e = tfd_set_core_query(&s->core, key, now_of(be, s), cur);
	pthread_mutex_unlock(&sets_lock);
	return s ? e : not_set(sfd);
}

/* The keys due now into buf (max): how many, 0 if none.  Keys that
 * came due while it took the others are taken too, while there is room:
 * the timer is re-armed once, in the future, instead of at a deadline
 * already past (a post, and a wake-up, for each key of a dense set).
 * Those are taken as of a time before the next deadline of every
 * periodic key already taken: a read gives a key one record at most.
 * Locked. */
static size_t take(const struct tfd_backend *be, int sfd, struct tfd_set *s,
                   struct tfd_expiry *buf, size_t max)
{
	struct tfd_set_out out[64];
	int64_t now = now_of(be, s), at = now, again = TFD_NS_MAX, next;
	size_t n = 0, k, i;

	while (n < max) {
		k = max - n < 64 ? max - n : 64;
		k = tfd_set_core_take(&s->core, at, out, k, &again);
		for (i = 0; i < k; i++) {
			buf[n + i].key = out[i].key;
			buf[n + i].count = out[i].count;
		}
		n += k;
		if (k)
			continue;
		next = tfd_set_core_next(&s->core);
		now = now_of(be, s);
		at = now < again ? now : again - 1;
		if (next < 0 || next > at)
			break;
	}
	/* (a failure leaves armed -2: tried again) */
	rearm(be, sfd, s, now,
	      n && !be->virtual_now ? tfd_ns_add(now, s->slack) : 0, 0);
	return n;
}

/* What a read finds, locked: ECANCELED if the clock was set since the
 * last read (asking the backend first, while a key watches: the read
 * that reports it comes before any taken on the clock as set, however
 * the reader waited), else the keys due (*n, maybe 0). */
static int take_or_cancel(const struct tfd_backend *be, int sfd,
                          struct tfd_set *s, struct tfd_expiry *buf,
                          size_t max, size_t *n)
{
	*n = 0;
	if (s->watch)
		rearm(be, sfd, s, 0, 0, 1);
	if (tfd_set_core_cancelled(&s->core, 1)) {
		rearm(be, sfd, s, 0, 0, 0); /* readable for keys due only */
		return ECANCELED;
	}
	*n = take(be, sfd, s, buf, max);
	return 0;
}

int tfd_sets_read(const struct tfd_backend *be, int sfd,
                  struct tfd_expiry *buf, size_t max, size_t *n)
{
	struct tfd_set *s;
	uint64_t count;
	int e = 0;

	*n = 0;
	for (;;) {
		pthread_mutex_lock(&sets_lock);
		s = lookup(sfd);
		if (s)
			e = take_or_cancel(be, sfd, s, buf, max, n);
		pthread_mutex_unlock(&sets_lock);
		if (!s)
			return not_set(sfd);
		if (e || *n)
			return e;
		/* None due: the timer's read waits for the earliest (or says
		 * EAGAIN on a non-blocking set) and takes its expiration, or
		 * says the clock was set. */
		e = be->read(sfd, &count);
		if (e && e != ECANCELED)
			return e;
		pthread_mutex_lock(&sets_lock);
		if ((s = lookup(sfd))) {
			if (e && s->watch)
				tfd_set_core_clock_set(&s->core);
			s->armed = -2;
		}
		pthread_mutex_unlock(&sets_lock);
	}
}

int tfd_sets_check(int sfd)
{
	return tfd_sets_has(sfd) ? 0 : not_set(sfd);
}

/* Without the lock (setmap): the map's length first, then the map,
 * which is at least as long. */
int tfd_sets_is(int fd)
{
	size_t n = __atomic_load_n(&nsetmap, __ATOMIC_ACQUIRE);
	const unsigned char *m = __atomic_load_n(&setmap, __ATOMIC_ACQUIRE);

	return fd >= 0 && (size_t)fd < n &&
	       __atomic_load_n(&m[fd], __ATOMIC_ACQUIRE);
}

int tfd_sets_next(int from)
{
	size_t n = __atomic_load_n(&nsetmap, __ATOMIC_ACQUIRE), i;
	const unsigned char *m = __atomic_load_n(&setmap, __ATOMIC_ACQUIRE);

	if (!__atomic_load_n(&tfd_nsets, __ATOMIC_RELAXED) || from < 0)
		return -1;
	for (i = (size_t)from; i < n; i++)
		if (__atomic_load_n(&m[i], __ATOMIC_ACQUIRE))
			return (int)i;
	return -1;
}

int tfd_sets_close(const struct tfd_backend *be, int fd, int *e)
{
	int is;

	if (!__atomic_load_n(&tfd_nsets, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&sets_lock);
	is = lookup(fd) != NULL;
	if (is)
		drop(fd);
	pthread_mutex_unlock(&sets_lock);
	if (is)
		*e = be->close(fd);
	return is;
}
