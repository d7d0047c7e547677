/* SPDX-License-Identifier: MIT */
/*
 * service.c - the service thread.
 *
 * It starts with the first timer and sleeps on a futex until the earliest
 * deadline of three queues (one per clock base).  An API call wakes it only
 * when it makes a deadline earlier than the one it sleeps for, or has a
 * request: a new timer's file to fetch into the thread's private
 * descriptor table (files.c), files of closed timers to close.  On waking
 * it counts what expired through the model and posts the counts in
 * batches, writing them without the lock so that readers are not held up;
 * a settime, read or close of a timer whose post is being written waits
 * for that post (T_INFLIGHT).  With no timer left it closes everything it
 * holds at once and ends after GRACE, so that a program that creates and
 * closes timers one at a time does not start a thread for each.
 */
#define _GNU_SOURCE
#include "engine/engine.h"
#include "engine/notify.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define GRACE (200 * 1000 * 1000LL) /* ns the thread outlives the last timer */
#define BATCH 64                    /* posts written per unlock */

/*
 * A periodic timer whose last post nobody has read is not posted again at
 * every period: its descriptor is readable already, and tfd_read() counts
 * from the clock.  It is held back instead, for a period that doubles up
 * to HOLD_MAX, so a fast timer nobody reads costs a wake-up per HOLD_MAX,
 * not per period.  A plain read() may then trail by up to HOLD_MAX (tfd(7)).
 */
#define HOLD_MAX (4 * 1000 * 1000) /* ns */

static void futex_wait(unsigned *word, unsigned val, const struct timespec *ts)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, ts, NULL, 0);
}

static void futex_wake(unsigned *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void tfd_engine_poke(void)
{
	__atomic_store_n(&g.wake, g.wake + 1, __ATOMIC_RELEASE);
	if (g.sleeping)
		futex_wake(&g.wake);
}

/* Wake the thread if it sleeps past a new deadline key on base. */
void tfd_engine_kick(int base, int64_t key)
{
	if (g.state == RUNNING && key < g.sleep_until[base]) {
		g.sleep_until[base] = key; /* one wake-up is enough */
		tfd_engine_poke();
	}
}

/* ---- posting ---- */

struct post {
	struct tfd_timer *t;
	int file;
	uint64_t n;
};

struct batch {
	struct post p[BATCH];
	unsigned n;
};

/* Write the batch unlocked; then the timers may be drained again. */
static void flush(struct batch *b)
{
	unsigned i;

	if (b->n == 0)
		return;
	pthread_mutex_unlock(&g.lock);
	for (i = 0; i < b->n; i++)
		tfd_notify_post(b->p[i].file, b->p[i].n);
	pthread_mutex_lock(&g.lock);
	for (i = 0; i < b->n; i++)
		b->p[i].t->flags &= ~T_INFLIGHT;
	if (g.inflight_wait) {
		g.inflight_wait = 0;
		pthread_cond_broadcast(&g.changed);
	}
	b->n = 0;
}

static void add(struct batch *b, struct tfd_timer *t)
{
	if (!t->m.ticks || t->file < 0)
		return;
	b->p[b->n].t = t;
	b->p[b->n].file = t->file;
	b->p[b->n].n = t->m.ticks;
	b->n++;
	t->m.ticks = 0;
	t->flags |= T_SIGNALED | T_INFLIGHT;
}

void tfd_engine_post_locked(struct tfd_timer *t)
{
	if (t->m.ticks && t->file >= 0 &&
	    tfd_notify_post(t->file, t->m.ticks) == 0) {
		t->m.ticks = 0;
		t->flags |= T_SIGNALED;
	}
}

/* The count we posted last is still unread (a look, not a read). */
static int unread(const struct tfd_timer *t)
{
	struct pollfd p = { t->file, POLLIN, 0 };
	struct timespec zero = { 0, 0 };

	return (t->flags & T_SIGNALED) &&
	       syscall(SYS_ppoll, &p, 1UL, &zero, NULL, 0UL) == 1;
}

/* Count and post what expired on base by now; 1 if it dropped the lock
 * (the queues must be looked at again). */
static int expire(int base, int64_t now)
{
	const struct tfd_qent *top;
	struct batch b;
	int dropped = 0;

	b.n = 0;
	while ((top = tfd_queue_top(&g.q[base])) && top->key <= now) {
		struct tfd_timer *t = (struct tfd_timer *)(void *)((char *)top->node -
		                       offsetof(struct tfd_timer, u.q));

		if (t->flags & T_INFLIGHT) {
			flush(&b); /* posted twice in one pass: write in order */
			dropped = 1;
			continue;
		}
		tfd_model_advance(&t->m, now);
		if (t->m.interval && t->m.interval < HOLD_MAX && unread(t)) {
			int64_t d = t->backoff ? 2 * (int64_t)t->backoff
			                       : t->m.interval;

			t->backoff = (int32_t)(d < HOLD_MAX ? d : HOLD_MAX);
			t->hold = now + t->backoff;
		} else {
			t->hold = t->backoff = 0;
			add(&b, t);
		}
		tfd_engine_requeue(t);
		if (b.n == BATCH) {
			flush(&b);
			dropped = 1;
		}
	}
	if (b.n)
		dropped = 1;
	flush(&b);
	return dropped;
}

/* ---- requests ---- */

unsigned tfd_engine_pool_count(int nonblock)
{
	unsigned i, n = 0;

	for (i = 0; i < g.npool; i++)
		n += g.pool_nb[i] == nonblock;
	return n;
}

void tfd_engine_pool_drop(unsigned i)
{
	g.npool--;
	g.pool[i] = g.pool[g.npool];
	g.pool_nb[i] = g.pool_nb[g.npool];
}

static void drain_pool(void)
{
	while (g.npool)
		tfd_files_close(g.pool[--g.npool]);
}

/* Copy the files of new timers into the private table. */
static void fetch_files(void)
{
	while (g.nfetch) {
		struct tfd_fetch *r = g.fetch[0];
		unsigned room = 0;

		/* The copy and its pidfd need two numbers here below the
		 * descriptor limit, which the ready eventfds may hold when it
		 * is near (the reason create came this way): give up the
		 * two lowest. */
		while (g.npool && room++ < 2) {
			unsigned i, low = 0;

			for (i = 1; i < g.npool; i++)
				if (g.pool[i] < g.pool[low])
					low = i;
			tfd_files_close(g.pool[low]);
			tfd_engine_pool_drop(low);
		}
		pthread_mutex_unlock(&g.lock);
		r->result = tfd_files_fetch(r->tid, r->fd);
		pthread_mutex_lock(&g.lock);
		if (r->result == -EMFILE && g.npool) {
			drain_pool(); /* all of them, then once more */
			pthread_mutex_unlock(&g.lock);
			r->result = tfd_files_fetch(r->tid, r->fd);
			pthread_mutex_lock(&g.lock);
		}
		r->done = 1;
		g.nfetch--;
		memmove(g.fetch, g.fetch + 1, g.nfetch * sizeof(*g.fetch));
		pthread_cond_broadcast(&g.changed);
	}
}

/* Keep fresh eventfds ready for tfd_create (files.c), half of each kind;
 * made unlocked, so that creates go on meanwhile. */
static void refill(void)
{
	int k[POOL_MAX];
	unsigned char nb[POOL_MAX];
	unsigned n = 0, want[2], kind, i;

	if (!g.private_files)
		return;
	for (kind = 0; kind < 2; kind++) {
		unsigned have = tfd_engine_pool_count((int)kind);

		want[kind] = g.pool_max / 2 > have ? g.pool_max / 2 - have : 0;
	}
	if (!want[0] && !want[1])
		return;
	pthread_mutex_unlock(&g.lock);
	for (kind = 0; kind < 2; kind++)
		for (i = 0; i < want[kind]; i++) {
			if ((k[n] = tfd_files_fresh((int)kind)) < 0)
				break;
			nb[n++] = (unsigned char)kind;
		}
	pthread_mutex_lock(&g.lock);
	while (n && g.npool < POOL_MAX) {
		n--;
		g.pool[g.npool] = k[n];
		g.pool_nb[g.npool++] = nb[n];
	}
	while (n)
		tfd_files_close(k[--n]);
}


/* Close the files of timers that are gone, unlocked. */
static void close_freed(void)
{
	struct tfd_timer *t = g.freed;

	if (!t)
		return;
	g.freed = NULL;
	pthread_mutex_unlock(&g.lock);
	while (t) {
		struct tfd_timer *next = t->u.next_freed;

		tfd_files_close(t->file);
		free(t);
		t = next;
	}
	pthread_mutex_lock(&g.lock);
}

/* ---- the thread ---- */

static int64_t mono_now(void)
{
	return tfd_clock_real(BASE_MONO);
}

/* Sleep until the earliest deadline or a poke.  Called locked; returns
 * locked. */
static void sleep_until_due(void)
{
	struct timespec ts;
	int64_t wait = TFD_NS_MAX;
	unsigned seq = g.wake;
	int b;

	for (b = 0; b < NBASE; b++) {
		const struct tfd_qent *top = tfd_queue_top(&g.q[b]);

		g.sleep_until[b] = TFD_NS_MAX;
		if (top) {
			int64_t d = top->key - tfd_clock_now(b);

			g.sleep_until[b] = top->key;
			if (d < wait)
				wait = d < 0 ? 0 : d;
		}
	}
	if (g.nlive == 0 && wait > GRACE)
		wait = GRACE;
	if (wait == 0)
		return;
	ts = tfd_ns_to_ts(wait);
	g.sleeping = 1;
	pthread_mutex_unlock(&g.lock);
	futex_wait(&g.wake, seq, wait == TFD_NS_MAX ? NULL : &ts);
	pthread_mutex_lock(&g.lock);
	g.sleeping = 0;
	g.wakeups++;
}

static void *service(void *arg)
{
	int again, b, e;

	(void)arg;
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	pthread_mutex_lock(&g.lock);
	g.tid = gettid();
	if (g.private_files && tfd_files_unshare() != 0)
		g.private_files = 0;
	pthread_mutex_unlock(&g.lock);
	e = tfd_clock_watch_start();
	pthread_mutex_lock(&g.lock);
	g.start_error = e;
	refill();
	if (e) {
		drain_pool(); /* the creating thread fails; we are gone */
		g.state = STOPPED;
		pthread_cond_broadcast(&g.changed);
		pthread_mutex_unlock(&g.lock);
		return NULL;
	}
	g.state = RUNNING;
	pthread_cond_broadcast(&g.changed);
	for (;;) {
		fetch_files();
		close_freed();
		if (g.nlive && g.pool_max &&
		    (tfd_engine_pool_count(0) < POOL_LOW ||
		     tfd_engine_pool_count(1) < POOL_LOW))
			refill();
		if (g.clock_set) {
			g.clock_set = 0;
			tfd_clock_was_set();
			pthread_cond_broadcast(&g.changed);
		}
		again = 0;
		for (b = 0; b < NBASE; b++)
			if (tfd_queue_top(&g.q[b]))
				again |= expire(b, tfd_clock_now(b));
		if (again || g.nfetch || g.clock_set)
			continue;
		if (g.nlive == 0) {
			if (!g.idle_since)
				g.idle_since = mono_now();
			else if (mono_now() - g.idle_since >= GRACE || g.stop)
				break;
		} else {
			g.idle_since = 0;
		}
		sleep_until_due();
	}
	g.state = STOPPING; /* no timer is made until we are gone */
	drain_pool();
	pthread_mutex_unlock(&g.lock);
	tfd_clock_watch_stop();
	pthread_mutex_lock(&g.lock);
	g.state = STOPPED;
	g.stop = 0;
	g.idle_since = 0;
	pthread_cond_broadcast(&g.changed);
	pthread_mutex_unlock(&g.lock);
	return NULL;
}

/* Start the service thread if it is not running, and wait until it has
 * made its private table.  Lock held; may drop it. */
int tfd_engine_start(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int e;

	while (g.state == STOPPING || g.state == STARTING)
		pthread_cond_wait(&g.changed, &g.lock);
	if (g.state == RUNNING) {
		g.idle_since = 0;
		return 0;
	}
	g.private_files = tfd_files_private();
	g.stop = 0;
	g.sleeping = 0;
	g.idle_since = 0;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* No signal of the program's is ever handled on our threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&g.thread, &attr, service, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (e)
		return e;
	g.state = STARTING;
	while (g.state == STARTING)
		pthread_cond_wait(&g.changed, &g.lock);
	return g.state == RUNNING ? 0 : g.start_error;
}

/* The last timer went: let the thread close what it holds now. */
void tfd_engine_stop_if_idle(void)
{
	if (g.nlive == 0 && g.state == RUNNING)
		tfd_engine_poke();
}

/* Stop the thread now if no timer is left (switching clocks).  Lock held;
 * may drop it. */
void tfd_engine_stop_now(void)
{
	if (g.nlive == 0 && g.state == RUNNING) {
		g.stop = 1;
		tfd_engine_poke();
	}
	while (g.state != STOPPED)
		pthread_cond_wait(&g.changed, &g.lock);
}

/* Test hook: how many fresh eventfds to keep ready (0: none, so that every
 * create makes its own eventfd, the path fault injection reaches). */
void tfd_engine_pool_size(unsigned n)
{
	int cs;

	tfd_engine_lock(&cs);
	g.pool_max = n < POOL_MAX ? n : POOL_MAX; /* 0: none is taken */
	tfd_engine_unlock(cs);
}

/* A child has no service thread: fork.c. */
void tfd_engine_after_fork(void)
{
	g.state = STOPPED;
	g.stop = g.sleeping = 0;
	g.idle_since = 0;
	g.nfetch = 0;
	g.npool = 0; /* numbers of the parent's thread */
	g.clock_set = 0;
	g.inflight_wait = 0;
}
