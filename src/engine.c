/* SPDX-License-Identifier: MIT */
/*
 * engine.c - timers kept in user space, delivered through an eventfd.
 *
 * One mutex (g.lock) guards everything here.  Each timer owns the eventfd
 * the user holds (fd) and a private duplicate of it (priv): the engine only
 * ever writes to and waits on priv, so a number the user closed with plain
 * close() and the system handed out again is never touched.
 *
 * One service thread, started at the first arm, sleeps in ppoll() until the
 * earliest deadline of three queues (one per clock base), counts what
 * expired through the model (timer.c) and posts the counts.  API calls wake
 * it only when they make a deadline earlier than the one it sleeps for.  It
 * also watches a kernel timerfd armed with TFD_TIMER_CANCEL_ON_SET, the one
 * way Linux tells user space that CLOCK_REALTIME was set.  It stops, and its
 * two descriptors are closed, when the last timer is closed.
 */
#define _GNU_SOURCE
#include "backend.h"
#include "notify.h"
#include "queue.h"
#include "timer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* The clock a deadline is kept on.  A relative CLOCK_REALTIME timer
 * measures elapsed time (as Linux's hrtimers do), so it lives on BASE_MONO;
 * only absolute CLOCK_REALTIME timers follow the wall clock. */
enum { BASE_MONO, BASE_REAL, BASE_BOOT, NBASE };
static const clockid_t base_clock[NBASE] = { CLOCK_MONOTONIC, CLOCK_REALTIME,
	                                     CLOCK_BOOTTIME };

enum {
	T_CANCEL_ON_SET = 1 << 0, /* absolute CLOCK_REALTIME, CANCEL_ON_SET */
	T_CANCELLED = 1 << 1,     /* clock set since: next read ECANCELED */
	T_SIGNALED = 1 << 2,      /* posted to priv since the last drain */
	T_INHERITED = 1 << 3,     /* came through fork(); the parent runs it */
	T_CLOSED = 1 << 4,        /* closed while a tfd_read() waits on it */
};

/* 64 bytes: memory per timer is measured (tfd bench, workload 8). */
struct tfd_timer {
	union {
		struct tfd_qnode q;            /* while open */
		struct tfd_timer *zombie_next; /* on g.zombies once T_CLOSED */
	} u;
	struct tfd_model m;
	int64_t hold;          /* no post before this (coalescing) */
	int32_t backoff;       /* current hold-back period, <= HOLD_MAX */
	int priv;              /* ours; -1 in an inherited timer */
	unsigned nfds;         /* user descriptors naming it (dup) */
	unsigned readers;      /* tfd_read() calls blocked on priv */
	unsigned mark;         /* visited by a walk of the table */
	unsigned char clockid; /* CLOCK_REALTIME, _MONOTONIC or _BOOTTIME */
	unsigned char base;    /* queue holding the deadline */
	unsigned char flags;
};

_Static_assert(sizeof(struct tfd_timer) <= 64, "a timer fits in 64 bytes");

enum state { STOPPED, RUNNING, STOPPING };

static struct {
	pthread_mutex_t lock;
	pthread_cond_t stopped;
	struct tfd_timer **slot; /* by user descriptor */
	size_t nslot;
	size_t ntimers;
	size_t nq[NBASE]; /* timers that may sit on each queue */
	struct tfd_queue q[NBASE];
	struct tfd_timer *zombies;
	enum state state;
	pthread_t thread;
	int wakefd, stepfd;
	int stop, sleeping, wake_pending;
	unsigned long wakeups; /* times the thread woke (for tests) */
	int virtual;           /* the clocks are vnow, moved by calls */
	int64_t vnow[NBASE];
	int64_t sleep_until[NBASE]; /* deadline the thread sleeps for */
} g = {
	.lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP, /* held briefly */
	.stopped = PTHREAD_COND_INITIALIZER,
	.wakefd = -1,
	.stepfd = -1,
};

static pthread_once_t once = PTHREAD_ONCE_INIT;

static int64_t real_now(int base)
{
	struct timespec ts;

	clock_gettime(base_clock[base], &ts);
	return (int64_t)ts.tv_sec * TFD_NSEC_PER_SEC + ts.tv_nsec;
}

/* The clock of a base: the system's, or the virtual one.  Under g.lock. */
static int64_t now_ns(int base)
{
	return g.virtual ? g.vnow[base] : real_now(base);
}

static struct tfd_timer *timer_of(struct tfd_qnode *n)
{
	return (struct tfd_timer *)((char *)n - offsetof(struct tfd_timer, u.q));
}

static unsigned queue_mask(int clockid)
{
	if (clockid == CLOCK_REALTIME)
		return 1u << BASE_MONO | 1u << BASE_REAL;
	if (clockid == CLOCK_BOOTTIME)
		return 1u << BASE_BOOT;
	return 1u << BASE_MONO;
}

static int base_for(int clockid, int absolute)
{
	if (clockid == CLOCK_REALTIME)
		return absolute ? BASE_REAL : BASE_MONO;
	return clockid == CLOCK_BOOTTIME ? BASE_BOOT : BASE_MONO;
}

/* The timer open on fd: 0, or EBADF (not open) / EINVAL (not a timer). */
static int find(int fd, struct tfd_timer **t)
{
	if (fd >= 0 && (size_t)fd < g.nslot && g.slot[fd]) {
		*t = g.slot[fd];
		return 0;
	}
	if (fd < 0 || (fcntl(fd, F_GETFD) < 0 && errno == EBADF))
		return EBADF;
	return EINVAL;
}

/* Wake the thread if it sleeps past a new deadline key on base. */
static void kick(int base, int64_t key)
{
	if (g.sleeping && !g.wake_pending && key < g.sleep_until[base]) {
		g.wake_pending = 1;
		tfd_notify_post(g.wakefd, 1);
	}
}

/* Put the timer's deadline on its queue, or take it off if disarmed.  A
 * timer held back (see expire()) is not looked at before t->hold. */
static void requeue(struct tfd_timer *t)
{
	if (t->m.next)
		tfd_queue_set(&g.q[t->base], &t->u.q,
		              t->m.next > t->hold ? t->m.next : t->hold);
	else
		tfd_queue_remove(&g.q[t->base], &t->u.q);
}

/* Hand the counted ticks to the descriptor. */
static void deliver(struct tfd_timer *t)
{
	if (t->m.ticks && tfd_notify_post(t->priv, t->m.ticks) == 0) {
		t->m.ticks = 0;
		t->flags |= T_SIGNALED;
	}
}

/* Empty the descriptor of what the engine posted; the count taken. */
static uint64_t drain(struct tfd_timer *t)
{
	uint64_t n = 0;

	if (t->flags & T_SIGNALED) {
		tfd_notify_drain(t->priv, &n);
		t->flags &= ~T_SIGNALED;
	}
	t->hold = t->backoff = 0;
	return n;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Everything that expired up to now, taken from the model and the fd. */
static uint64_t collect(struct tfd_timer *t)
{
	tfd_model_advance(&t->m, now_ns(t->base));
	requeue(t);
	return sat_add(tfd_model_take(&t->m), drain(t));
}

static void destroy(struct tfd_timer *t)
{
	if (t->priv >= 0)
		close(t->priv);
	free(t);
}

/* Take t out of the queues; free it unless a reader waits. */
static void unlink_timer(struct tfd_timer *t)
{
	unsigned mask = queue_mask(t->clockid);
	int b;

	tfd_queue_remove(&g.q[t->base], &t->u.q);
	g.ntimers--;
	for (b = 0; b < NBASE; b++)
		if (mask & 1u << b)
			g.nq[b]--;
	if (t->readers) {
		t->flags |= T_CLOSED;
		t->u.zombie_next = g.zombies;
		g.zombies = t;
		tfd_notify_post(t->priv, 1); /* wake them: they see T_CLOSED */
	} else {
		destroy(t);
	}
}

/* The user's descriptor fd no longer names its timer; the last one that
 * did releases it. */
static void drop_fd(int fd)
{
	struct tfd_timer *t = g.slot[fd];

	g.slot[fd] = NULL;
	if (--t->nfds == 0)
		unlink_timer(t);
}

static void unzombie(struct tfd_timer *t)
{
	struct tfd_timer **p;

	for (p = &g.zombies; *p; p = &(*p)->u.zombie_next) {
		if (*p == t) {
			*p = t->u.zombie_next;
			break;
		}
	}
	destroy(t);
}

/* A number we just opened cannot belong to a timer the user closed with
 * plain close(): forget such a stale entry. */
static void forget_stale(int fd)
{
	if (fd >= 0 && (size_t)fd < g.nslot && g.slot[fd])
		drop_fd(fd);
}

/* ---- the service thread ---- */

/* The count we posted last is still unread (a look, not a read). */
static int unread(const struct tfd_timer *t)
{
	struct pollfd p = { t->priv, POLLIN, 0 };

	return (t->flags & T_SIGNALED) && poll(&p, 1, 0) == 1;
}

/*
 * Count and post what expired on base by now.  A periodic timer whose last
 * post nobody has read is not posted again at every period: its
 * descriptor is readable already, and tfd_read() counts from the clock.
 * It is held back instead, for a period that doubles up to HOLD_MAX, so a
 * fast timer nobody reads costs a wake-up per HOLD_MAX, not per period.
 * Timers slower than HOLD_MAX are posted at every period as before.
 * A plain read() may then trail the count by up to HOLD_MAX (tfd(7)).
 */
#define HOLD_MAX (4 * 1000 * 1000) /* ns */

static void expire(int base, int64_t now)
{
	const struct tfd_qent *top;
	unsigned n = 0;

	while ((top = tfd_queue_top(&g.q[base])) && top->key <= now) {
		struct tfd_timer *t = timer_of(top->node);

		tfd_model_advance(&t->m, now);
		if (t->m.interval && t->m.interval < HOLD_MAX && unread(t)) {
			int64_t b = t->backoff ? 2 * (int64_t)t->backoff
			                       : t->m.interval;

			t->backoff = (int32_t)(b < HOLD_MAX ? b : HOLD_MAX);
			t->hold = now + t->backoff;
		} else {
			t->hold = t->backoff = 0;
			deliver(t);
		}
		requeue(t);
		if (++n % 16 == 0) { /* a burst: let API calls in between */
			pthread_mutex_unlock(&g.lock);
			pthread_mutex_lock(&g.lock);
		}
	}
}

/* CLOCK_REALTIME was set: cancel the timers that asked for it (SPEC 2). */
static void clock_was_set(void)
{
	static unsigned pass;
	uint64_t n;
	size_t i;

	while (read(g.stepfd, &n, sizeof(n)) > 0 || errno == ECANCELED)
		;
	pass++;
	for (i = 0; i < g.nslot; i++) {
		struct tfd_timer *t = g.slot[i];

		if (t && t->mark != pass && (t->flags & T_CANCEL_ON_SET)) {
			t->mark = pass; /* once, however many numbers */
			t->flags |= T_CANCELLED;
			t->m.ticks = sat_add(t->m.ticks, 1);
			deliver(t);
		}
	}
}

void tfd_engine_clock_was_set(void)
{
	pthread_mutex_lock(&g.lock);
	clock_was_set();
	pthread_mutex_unlock(&g.lock);
}

unsigned long tfd_engine_wakeups(void)
{
	unsigned long n;

	pthread_mutex_lock(&g.lock);
	n = g.wakeups;
	pthread_mutex_unlock(&g.lock);
	return n;
}

static void *service(void *arg)
{
	(void)arg;
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	pthread_mutex_lock(&g.lock);
	while (!g.stop) {
		struct pollfd p[2] = { { g.wakefd, POLLIN, 0 },
			               { g.stepfd, POLLIN, 0 } };
		struct timespec ts;
		int64_t wait = TFD_NS_MAX;
		int b, n;

		for (b = 0; b < NBASE; b++) {
			const struct tfd_qent *top;
			int64_t now;

			g.sleep_until[b] = TFD_NS_MAX;
			if (!tfd_queue_top(&g.q[b]))
				continue;
			now = now_ns(b);
			expire(b, now);
			top = tfd_queue_top(&g.q[b]);
			if (top) {
				g.sleep_until[b] = top->key;
				if (top->key - now < wait)
					wait = top->key - now;
			}
		}
		ts = tfd_ns_to_ts(wait);
		g.sleeping = 1;
		pthread_mutex_unlock(&g.lock);
		n = ppoll(p, 2, wait == TFD_NS_MAX ? NULL : &ts, NULL);
		pthread_mutex_lock(&g.lock);
		g.sleeping = 0;
		g.wakeups++;
		if (g.wake_pending) {
			uint64_t x;

			tfd_notify_drain(g.wakefd, &x);
			g.wake_pending = 0;
		}
		if (n > 0 && (p[1].revents & POLLIN))
			clock_was_set();
	}
	pthread_mutex_unlock(&g.lock);
	return NULL;
}

/* A kernel timerfd that becomes readable when CLOCK_REALTIME is set. */
static int step_open(int *fd)
{
	struct itimerspec far = { { 0, 0 }, { (time_t)1 << 40, 0 } };

	*fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (*fd < 0)
		return errno;
	if (timerfd_settime(*fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
	                    &far, NULL) < 0) {
		int e = errno;

		close(*fd);
		*fd = -1;
		return e;
	}
	return 0;
}

static void close_thread_fds(void)
{
	if (g.wakefd >= 0)
		close(g.wakefd);
	if (g.stepfd >= 0)
		close(g.stepfd);
	g.wakefd = g.stepfd = -1;
}

/* Start the service thread if it is not running.  May drop the lock while
 * an earlier thread finishes stopping. */
static int start(void)
{
	sigset_t all, old;
	int e;

	while (g.state == STOPPING)
		pthread_cond_wait(&g.stopped, &g.lock);
	if (g.state == RUNNING)
		return 0;
	e = tfd_notify_open(TFD_NONBLOCK | TFD_CLOEXEC, &g.wakefd);
	if (!e)
		e = step_open(&g.stepfd);
	if (!e) {
		forget_stale(g.wakefd);
		forget_stale(g.stepfd);
		g.stop = 0;
		g.sleeping = 0;
		g.wake_pending = 0;
		/* No signal of the user's is ever handled on our thread. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		e = pthread_create(&g.thread, NULL, service, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (e) {
		close_thread_fds();
		return e;
	}
	g.state = RUNNING;
	return 0;
}

/* Stop the thread after the last timer is closed.  Drops the lock. */
static void stop(void)
{
	pthread_t th = g.thread;

	g.stop = 1;
	g.state = STOPPING;
	tfd_notify_post(g.wakefd, 1);
	pthread_mutex_unlock(&g.lock);
	pthread_join(th, NULL);
	pthread_mutex_lock(&g.lock);
	close_thread_fds();
	g.state = STOPPED;
	pthread_cond_broadcast(&g.stopped);
}

/* ---- the virtual clock ---- */

/*
 * Post every timer due on the virtual clocks, which have just moved from
 * before[] to g.vnow[].  Timers are taken in the order of their first
 * expiry within the step, across the three clocks; each posts once, with
 * every expiration the step crossed.
 */
static void virtual_deliver(const int64_t *before)
{
	for (;;) {
		struct tfd_qnode *first = NULL;
		int64_t off = 0;
		int b, fb = 0;

		for (b = 0; b < NBASE; b++) {
			const struct tfd_qent *top = tfd_queue_top(&g.q[b]);

			if (!top || top->key > g.vnow[b])
				continue;
			if (!first || top->key - before[b] < off) {
				first = top->node;
				off = top->key - before[b];
				fb = b;
			}
		}
		if (!first)
			return;
		tfd_model_advance(&timer_of(first)->m, g.vnow[fb]);
		requeue(timer_of(first));
		deliver(timer_of(first));
	}
}

/* The virtual clocks stop 1 ns short of TFD_NS_MAX, where saturated
 * deadlines lie: such a timer never fires, and a periodic one cannot be
 * due again and again at the same instant. */
#define VIRTUAL_END (TFD_NS_MAX - 1)

static int64_t clamp_add(int64_t a, int64_t d)
{
	return a > VIRTUAL_END - d ? VIRTUAL_END : a + d;
}

int tfd_engine_virtual_move(int64_t d_mono, int64_t d_boot, int64_t d_real,
                            const int64_t *real_to, int was_set)
{
	int64_t before[NBASE];
	int b;

	pthread_mutex_lock(&g.lock);
	if (!g.virtual) {
		pthread_mutex_unlock(&g.lock);
		return ENOTSUP;
	}
	for (b = 0; b < NBASE; b++)
		before[b] = g.vnow[b];
	g.vnow[BASE_MONO] = clamp_add(g.vnow[BASE_MONO], d_mono);
	g.vnow[BASE_BOOT] = clamp_add(g.vnow[BASE_BOOT], d_boot);
	g.vnow[BASE_REAL] = real_to ? clamp_add(*real_to, 0)
	                            : clamp_add(g.vnow[BASE_REAL], d_real);
	virtual_deliver(before);
	/* Linux cancels when the offset between the clocks changed. */
	if (was_set && g.vnow[BASE_REAL] - before[BASE_REAL] !=
	                   g.vnow[BASE_MONO] - before[BASE_MONO])
		clock_was_set();
	pthread_mutex_unlock(&g.lock);
	return 0;
}

int tfd_engine_virtual_now(int clockid, int64_t *ns)
{
	int e = 0;

	pthread_mutex_lock(&g.lock);
	if (!g.virtual)
		e = ENOTSUP;
	else
		*ns = g.vnow[base_for(clockid, 1)];
	pthread_mutex_unlock(&g.lock);
	return e;
}

/* Stop the thread if no timer is left.  May drop the lock. */
static void stop_if_idle(void)
{
	if (g.ntimers == 0 && g.state == RUNNING)
		stop();
}

/* ---- fork ---- */

static void fork_prepare(void)
{
	pthread_mutex_lock(&g.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&g.lock);
}

/* The child has no service thread.  Its timers stay with the parent, whose
 * engine keeps posting to the shared eventfds: the child may read and poll
 * them and close them, not change them (see tfd(7), FORK). */
static void fork_child(void)
{
	pthread_mutexattr_t a;
	size_t i;
	int b;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&g.lock, &a);
	pthread_mutexattr_destroy(&a);
	pthread_cond_init(&g.stopped, NULL);
	close_thread_fds();
	g.state = STOPPED;
	g.stop = g.sleeping = g.wake_pending = 0;
	for (b = 0; b < NBASE; b++)
		g.q[b].len = 0;
	for (i = 0; i < g.nslot; i++) {
		struct tfd_timer *t = g.slot[i];

		if (!t)
			continue;
		if (t->priv >= 0)
			close(t->priv);
		t->priv = -1;
		t->u.q.pos = TFD_QUEUE_NONE;
		t->readers = 0;
		t->flags = T_INHERITED;
	}
	while (g.zombies) {
		struct tfd_timer *t = g.zombies;

		g.zombies = t->u.zombie_next;
		destroy(t);
	}
}

static void init_once(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ---- the backend ---- */

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

static int e_create(int clockid, int flags, int *out)
{
	struct tfd_timer *t;
	unsigned mask = queue_mask(clockid);
	int e, fd, priv, b;

	if (clockid == CLOCK_REALTIME_ALARM || clockid == CLOCK_BOOTTIME_ALARM)
		return EPERM; /* the engine cannot wake a suspended system */
	pthread_once(&once, init_once);
	t = calloc(1, sizeof(*t));
	if (!t)
		return ENOMEM;
	e = tfd_notify_open(flags, &fd);
	if (e) {
		free(t);
		return e;
	}
	priv = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (priv < 0) {
		e = errno;
		close(fd);
		free(t);
		return e;
	}
	pthread_mutex_lock(&g.lock);
	e = grow_table(fd);
	for (b = 0; b < NBASE && !e; b++)
		if (mask & 1u << b)
			e = tfd_queue_reserve(&g.q[b], g.nq[b] + 1);
	if (e) {
		pthread_mutex_unlock(&g.lock);
		close(priv);
		close(fd);
		free(t);
		return e;
	}
	forget_stale(fd);
	forget_stale(priv);
	t->u.q.pos = TFD_QUEUE_NONE;
	t->nfds = 1;
	t->priv = priv;
	t->clockid = (unsigned char)clockid;
	t->base = (unsigned char)base_for(clockid, 0);
	g.slot[fd] = t;
	g.ntimers++;
	for (b = 0; b < NBASE; b++)
		if (mask & 1u << b)
			g.nq[b]++;
	pthread_mutex_unlock(&g.lock);
	*out = fd;
	return 0;
}

static int e_settime(int fd, int flags, const struct itimerspec *nv,
                     struct itimerspec *old)
{
	struct tfd_timer *t;
	int64_t value = tfd_ts_to_ns(&nv->it_value);
	int absolute = flags & TFD_TIMER_ABSTIME;
	int e, base;

	pthread_mutex_lock(&g.lock);
	e = find(fd, &t);
	if (!e && value && g.state != RUNNING && !g.virtual) {
		/* Arming needs the thread; fail before changing anything. */
		e = (t->flags & T_INHERITED) ? EINVAL : start();
		if (!e)
			e = find(fd, &t); /* start() may have dropped the lock */
		if (e)
			stop_if_idle(); /* e.g. fd was a stale number */
	}
	if (e)
		goto out;
	if (t->flags & T_INHERITED) {
		e = EINVAL;
		goto out;
	}
	if (old)
		tfd_model_query(&t->m, now_ns(t->base), old);
	if (t->clockid == CLOCK_REALTIME && absolute &&
	    (flags & TFD_TIMER_CANCEL_ON_SET))
		t->flags |= T_CANCEL_ON_SET;
	else
		t->flags &= ~(T_CANCEL_ON_SET | T_CANCELLED);
	drain(t);
	base = base_for(t->clockid, absolute);
	if (base != t->base) {
		tfd_queue_remove(&g.q[t->base], &t->u.q);
		t->base = (unsigned char)base;
	}
	tfd_model_set(&t->m, now_ns(base), value,
	              tfd_ts_to_ns(&nv->it_interval), absolute);
	requeue(t);
	if (g.virtual)
		virtual_deliver(g.vnow); /* due now: posted before we return */
	else if (t->m.next)
		kick(base, t->m.next);
	if (value && (t->flags & T_CANCELLED)) {
		t->flags &= ~T_CANCELLED;
		e = ECANCELED;
	}
out:
	pthread_mutex_unlock(&g.lock);
	return e;
}

static int e_check(int fd)
{
	struct tfd_timer *t;
	int e;

	pthread_mutex_lock(&g.lock);
	e = find(fd, &t);
	pthread_mutex_unlock(&g.lock);
	return e;
}

static int e_gettime(int fd, struct itimerspec *cur)
{
	struct tfd_timer *t;
	int e;

	pthread_mutex_lock(&g.lock);
	e = find(fd, &t);
	if (!e && (t->flags & T_INHERITED))
		e = EINVAL;
	if (!e)
		tfd_model_query(&t->m, now_ns(t->base), cur);
	pthread_mutex_unlock(&g.lock);
	return e;
}

/* read(2) on fd with its own O_NONBLOCK: 0 or errno. */
static int read_fd(int fd, uint64_t *n)
{
	ssize_t r = read(fd, n, sizeof(*n));

	if (r == (ssize_t)sizeof(*n))
		return 0;
	return r < 0 ? errno : EIO;
}

static int nonblocking(int fd)
{
	return (fcntl(fd, F_GETFL) & O_NONBLOCK) != 0;
}

static int e_read(int fd, uint64_t *count)
{
	struct tfd_timer *t;
	uint64_t n = 0, d;
	int e;

	pthread_mutex_lock(&g.lock);
	e = find(fd, &t);
	if (!e && (t->flags & T_INHERITED)) {
		pthread_mutex_unlock(&g.lock);
		return read_fd(fd, count);
	}
	if (!e)
		n = collect(t);
	/* Nothing counted: block (or EAGAIN) as the descriptor says; but a
	 * pending cancellation on a non-blocking one is reported at once, as
	 * Linux does. */
	if (!e && n == 0 && !((t->flags & T_CANCELLED) && nonblocking(t->priv))) {
		t->readers++;
		pthread_mutex_unlock(&g.lock);
		e = read_fd(t->priv, &d);
		pthread_mutex_lock(&g.lock);
		t->readers--;
		if (t->flags & T_CLOSED) {
			/* Closed while we waited: pass the wake-up on to the
			 * next waiter; the last one frees the timer. */
			if (t->readers)
				tfd_notify_post(t->priv, 1);
			else
				unzombie(t);
			e = EBADF;
		} else if (!e) {
			n = sat_add(d, collect(t));
		}
	}
	if (!e && (t->flags & T_CANCELLED)) {
		t->flags &= ~T_CANCELLED;
		e = ECANCELED;
	}
	pthread_mutex_unlock(&g.lock);
	*count = n;
	return e;
}

static int e_close(int fd)
{
	struct tfd_timer *t;
	int e = 0;

	pthread_mutex_lock(&g.lock);
	if (find(fd, &t) == 0)
		drop_fd(fd);
	if (close(fd) < 0)
		e = errno;
	stop_if_idle();
	pthread_mutex_unlock(&g.lock);
	return e;
}

/* newfd is now a duplicate of oldfd (dup(2) done by the caller): it names
 * the same timer, as on Linux.  A timer newfd named before is dropped. */
static int e_dup(int oldfd, int newfd)
{
	struct tfd_timer *t;
	int e;

	pthread_mutex_lock(&g.lock);
	e = find(oldfd, &t);
	if (!e && oldfd != newfd)
		e = grow_table(newfd);
	if (!e && oldfd != newfd) {
		forget_stale(newfd);
		g.slot[newfd] = t;
		t->nfds++;
	}
	pthread_mutex_unlock(&g.lock);
	return e;
}

static size_t e_count(void)
{
	size_t n;

	pthread_mutex_lock(&g.lock);
	n = g.ntimers;
	pthread_mutex_unlock(&g.lock);
	return n;
}

/* Switch between real and virtual clocks: only with no timer open. */
static int use_clocks(int virtual)
{
	int b, e = 0;

	pthread_mutex_lock(&g.lock);
	while (g.state == STOPPING)
		pthread_cond_wait(&g.stopped, &g.lock);
	if (g.ntimers)
		e = EBUSY;
	else if (virtual != g.virtual) {
		/* The virtual clocks start where the system's are now. */
		for (b = 0; b < NBASE; b++)
			g.vnow[b] = real_now(b);
		g.virtual = virtual;
	}
	pthread_mutex_unlock(&g.lock);
	return e;
}

static int e_activate(void)
{
	return use_clocks(0);
}

static int v_activate(void)
{
	return use_clocks(1);
}

const struct tfd_backend tfd_engine_backend = {
	"engine", e_create, e_check, e_settime, e_gettime,
	e_read,   e_close,  e_dup,   e_count,   e_activate,
};

/* The same engine, on clocks that move only when told. */
const struct tfd_backend tfd_virtual_backend = {
	"virtual", e_create, e_check, e_settime, e_gettime,
	e_read,    e_close,  e_dup,   e_count,   v_activate,
};
