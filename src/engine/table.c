/* SPDX-License-Identifier: MIT */
/*
 * table.c - which descriptor names which timer, and how long a timer
 * lives: create, dup, release, close, and the timers kept after their last
 * descriptor for a thread still waiting on them.  The backend tables.
 */
#define _GNU_SOURCE
#include "engine/engine.h"
#include "engine/notify.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

struct tfd_engine g = {
	.lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP, /* held briefly */
	.changed = PTHREAD_COND_INITIALIZER,
	.pool_max = POOL_MAX,
};

/* g.lock, with cancellation off while it is held: a pthread_cancel() can
 * never leave the lock owned by a dead thread. */
void tfd_engine_lock(int *cancel_state)
{
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, cancel_state);
	pthread_mutex_lock(&g.lock);
}

void tfd_engine_unlock(int cancel_state)
{
	pthread_mutex_unlock(&g.lock);
	pthread_setcancelstate(cancel_state, NULL);
}

/* The timer open on fd: 0, or EBADF (not open) / EINVAL (not a timer). */
int tfd_engine_find(int fd, struct tfd_timer **t)
{
	if (fd >= 0 && (size_t)fd < g.nslot && g.slot[fd]) {
		*t = g.slot[fd];
		return 0;
	}
	if (fd < 0 || (fcntl(fd, F_GETFD) < 0 && errno == EBADF))
		return EBADF;
	return EINVAL;
}

/* A post to t is being written without the lock: wait until it landed, so
 * that a drain after this sees it.  The lock is dropped meanwhile, so the
 * wait holds t (as a waiter): another thread may close it, which then
 * leaves it T_CLOSED for us to let go (tfd_engine_let_go). */
void tfd_engine_wait_inflight(struct tfd_timer *t)
{
	if (!(t->flags & T_INFLIGHT))
		return;
	t->waiters++;
	while (t->flags & T_INFLIGHT) {
		g.inflight_wait = 1;
		pthread_cond_wait(&g.changed, &g.lock);
	}
	t->waiters--;
}

/* After a wait: 1 if t was closed meanwhile (then it is forgotten unless
 * another thread still waits on it). */
int tfd_engine_let_go(struct tfd_timer *t)
{
	if (!(t->flags & T_CLOSED))
		return 0;
	if (t->waiters == 0)
		tfd_engine_forget(t);
	return 1;
}

/* ---- the timer's file for the service thread (files.c) ---- */

/* Have the service thread copy fd's file into its table, and wait until
 * it has: the number is the program's until create returns, so what is
 * copied is the timer's file.  The copy's number, or -errno. */
static int fetch(int fd)
{
	struct tfd_fetch r = { fd, gettid(), 0, 0 };

	while (g.nfetch == FETCH_MAX)
		pthread_cond_wait(&g.changed, &g.lock);
	g.fetch[g.nfetch++] = &r;
	tfd_engine_poke();
	while (!r.done)
		pthread_cond_wait(&g.changed, &g.lock);
	return r.result;
}

/* Another number naming t, or -1. */
static int other_number(const struct tfd_timer *t)
{
	size_t i;

	for (i = 0; i < g.nslot; i++)
		if (g.slot[i] == t)
			return (int)i;
	return -1;
}

/* ---- lifetimes ---- */

/* The last reference is gone: free t, or hand its private file to the
 * service thread, which alone can close it. */
void tfd_engine_forget(struct tfd_timer *t)
{
	unsigned mask = tfd_clock_queues(t->clockid);
	int b;

	tfd_queue_remove(&g.q[t->base], &t->u.q);
	for (b = 0; b < NBASE; b++)
		if (mask & 1u << b)
			g.nq[b]--;
	g.nlive--;
	if (!(t->flags & T_DIRECT)) {
		t->u.next_freed = g.freed;
		g.freed = t;
		if (g.nlive == 0)
			tfd_engine_poke(); /* close what we hold now */
	} else {
		free(t);
	}
}

/* The user's descriptor fd no longer names its timer; with the last one
 * the timer goes, unless a thread still waits on it: then it keeps
 * running until that wait ends (SPEC 2, closing). */
static void drop_fd(int fd)
{
	struct tfd_timer *t = g.slot[fd];

	g.slot[fd] = NULL;
	t->nfds--;
	if (t->file == fd && (t->flags & T_DIRECT) && t->nfds)
		t->file = other_number(t); /* post through one still open */
	if (t->nfds)
		return;
	g.ntimers--;
	tfd_engine_wait_inflight(t);
	tfd_engine_drain(t, fd); /* never readable again through this file */
	if (t->waiters) {
		t->flags |= T_CLOSED;
		if (t->flags & T_DIRECT)
			t->file = -1; /* nowhere to post: the number is gone */
		return;
	}
	tfd_engine_forget(t);
}

/* A number we just opened cannot belong to a timer the user closed with
 * plain close(): forget such a stale entry. */
static void forget_stale(int fd)
{
	if (fd >= 0 && (size_t)fd < g.nslot && g.slot[fd])
		drop_fd(fd);
}

static int grow_table(int fd)
{
	size_t n = g.nslot;
	struct tfd_timer **s;

	if ((size_t)fd < g.nslot)
		return 0;
	while (n <= (size_t)fd) /* grow by an eighth: it is 8 bytes an fd */
		n += n / 8 + 64;
	s = realloc(g.slot, n * sizeof(*s));
	if (!s)
		return ENOMEM;
	memset(s + g.nslot, 0, (n - g.nslot) * sizeof(*s));
	g.slot = s;
	g.nslot = n;
	return 0;
}

/* Everything a timer needs is taken at create, where Linux can fail too:
 * room on its queues, the service thread (then the table entry). */
static int reserve(unsigned mask)
{
	int b, e = 0;

	for (b = 0; b < NBASE && !e; b++)
		if (mask & 1u << b)
			e = tfd_queue_reserve(&g.q[b], g.nq[b] + 1);
	if (!e && !g.virtual)
		e = tfd_engine_start();
	return e;
}

/* A ready eventfd of the service thread's of the kind flags ask, or -1;
 * asks for more as that kind runs low. */
static int pool_take(int flags)
{
	int nb = !!(flags & TFD_NONBLOCK), k;
	unsigned i;

	if (!g.pool_max)
		return -1;
	for (i = g.npool; i-- > 0;) {
		if (g.pool_nb[i] != nb)
			continue;
		k = g.pool[i];
		tfd_engine_pool_drop(i);
		if (tfd_engine_pool_count(nb) == POOL_LOW)
			tfd_engine_poke(); /* once, as it falls below */
		return k;
	}
	return -1;
}

/* The user's descriptor for a new timer, and the number posts go to:
 * the same on the virtual clocks and the fallback; else a copy in the
 * service thread's table (files.c). */
static int open_timer(int flags, int *fd, int *file)
{
	int e, k;

	if (g.virtual || !g.private_files) {
		e = tfd_notify_open(flags, fd);
		*file = *fd;
		return e;
	}
	k = pool_take(flags);
	if (k >= 0) {
		e = tfd_files_take(g.tid, k, flags, fd);
		if (e == 0) {
			*file = k;
			return 0;
		}
		g.pool_nb[g.npool] = !!(flags & TFD_NONBLOCK); /* still fresh */
		g.pool[g.npool++] = k;
	}
	e = tfd_notify_open(flags, fd);
	if (e)
		return e;
	k = fetch(*fd);
	if (k < 0) {
		close(*fd);
		return -k;
	}
	*file = k;
	return 0;
}

static int e_create(int clockid, int flags, int *out)
{
	struct tfd_timer *t;
	unsigned mask = tfd_clock_queues(clockid);
	int e, fd = -1, cs, b;

	if (clockid == CLOCK_REALTIME_ALARM || clockid == CLOCK_BOOTTIME_ALARM)
		return EPERM; /* the engine cannot wake a suspended system */
	tfd_engine_fork_init();
	t = calloc(1, sizeof(*t));
	if (!t)
		return ENOMEM;
	t->u.q.pos = TFD_QUEUE_NONE;
	t->nfds = 1;
	t->clockid = (unsigned char)clockid;
	t->base = (unsigned char)tfd_clock_base(clockid, 0);
	tfd_engine_lock(&cs);
	e = reserve(mask);
	if (!e)
		e = open_timer(flags, &fd, &t->file);
	if (!e && (g.virtual || !g.private_files))
		t->flags = T_DIRECT;
	if (!e && (e = grow_table(fd)) != 0) {
		close(fd);
		if (!(t->flags & T_DIRECT)) { /* its copy: the service's */
			t->u.next_freed = g.freed;
			g.freed = t;
			tfd_engine_poke();
			t = NULL;
		}
	}
	if (e) {
		tfd_engine_unlock(cs);
		free(t);
		return e;
	}
	forget_stale(fd);
	g.slot[fd] = t;
	g.ntimers++;
	g.nlive++;
	for (b = 0; b < NBASE; b++)
		if (mask & 1u << b)
			g.nq[b]++;
	tfd_engine_unlock(cs);
	*out = fd;
	return 0;
}

static int e_check(int fd)
{
	struct tfd_timer *t;
	int e, cs;

	tfd_engine_lock(&cs);
	e = tfd_engine_find(fd, &t);
	tfd_engine_unlock(cs);
	return e;
}

static int e_release(int fd)
{
	struct tfd_timer *t;
	int e, cs;

	tfd_engine_lock(&cs);
	e = tfd_engine_find(fd, &t);
	if (!e)
		drop_fd(fd);
	tfd_engine_stop_if_idle();
	tfd_engine_unlock(cs);
	return e;
}

static int e_close(int fd)
{
	struct tfd_timer *t;
	int e = 0, cs;

	tfd_engine_lock(&cs);
	if (tfd_engine_find(fd, &t) == 0)
		drop_fd(fd);
	if (close(fd) < 0)
		e = errno;
	tfd_engine_stop_if_idle();
	tfd_engine_unlock(cs);
	return e;
}

/* newfd is now a duplicate of oldfd (dup(2) done by the caller): it names
 * the same timer, as on Linux.  A timer newfd named before is dropped. */
static int e_dup(int oldfd, int newfd)
{
	struct tfd_timer *t;
	int e, cs;

	tfd_engine_lock(&cs);
	e = tfd_engine_find(oldfd, &t);
	if (!e && oldfd != newfd)
		e = grow_table(newfd);
	if (!e && oldfd != newfd) {
		forget_stale(newfd);
		g.slot[newfd] = t;
		t->nfds++;
	}
	tfd_engine_unlock(cs);
	return e;
}

/* A wait outside the library: see backend.h. */
static void *e_hold(int fd)
{
	struct tfd_timer *t = NULL;
	int cs;

	tfd_engine_lock(&cs);
	if (tfd_engine_find(fd, &t) == 0)
		t->waiters++;
	else
		t = NULL;
	tfd_engine_unlock(cs);
	return t;
}

static void e_unhold(void *held)
{
	struct tfd_timer *t = held;
	int cs;

	if (!t)
		return;
	tfd_engine_lock(&cs);
	if (--t->waiters == 0 && (t->flags & T_CLOSED))
		tfd_engine_forget(t);
	tfd_engine_stop_if_idle();
	tfd_engine_unlock(cs);
}

static size_t e_count(void)
{
	size_t n;
	int cs;

	tfd_engine_lock(&cs);
	n = g.ntimers;
	tfd_engine_unlock(cs);
	return n;
}

static int e_activate(void)
{
	return tfd_engine_virtual_use(0);
}

static int v_activate(void)
{
	return tfd_engine_virtual_use(1);
}

/* What the engine is on either clock. */
#define ENGINE_OPS                                                          \
	.create = e_create, .check = e_check,                               \
	.settime = tfd_engine_settime, .gettime = tfd_engine_gettime,       \
	.read = tfd_engine_read, .close = e_close, .dup = e_dup,            \
	.release = e_release, .hold = e_hold, .unhold = e_unhold,           \
	.count = e_count, .next_due = tfd_engine_next_due

const struct tfd_backend tfd_engine_backend = {
	.name = "engine",
	ENGINE_OPS,
	.activate = e_activate,
};

/* The same engine, on clocks that move only when told. */
const struct tfd_backend tfd_virtual_backend = {
	.name = "virtual",
	ENGINE_OPS,
	.activate = v_activate,
	.virtual_move = tfd_engine_virtual_move,
	.virtual_now = tfd_engine_virtual_now,
};
