/* SPDX-License-Identifier: MIT */
/*
 * service.c - the service thread.
 *
 * It starts with the first timer and sleeps on a futex until the earliest
 * deadline of three queues (one per clock base) of the timers this
 * process delivers.  An API call, in this process or another of the
 * family, wakes it only when it makes a deadline earlier than the one it
 * sleeps for, or has a request: a new timer's file to fetch into the
 * thread's private descriptor table (files.c), files of closed timers to
 * close, timers to take over.  On waking it counts what expired through
 * the model and posts the counts in batches, writing them without the lock
 * so that readers are not held up; a settime, read or close of a timer
 * whose post is being written waits for that post (inflight).  With no
 * timer left it closes everything it holds at once and ends after GRACE,
 * so that a program that creates and closes timers one at a time does not
 * start a thread for each.
 *
 * While it runs it holds its process's `alive` mutex (family.c).  When
 * other processes of the family run service threads too, it sleeps with
 * futex_waitv(2) on their `alive` words as well as on its own wake-up
 * word: the kernel wakes it when one of them dies, and it reaps the dead
 * process at once, so that the timers that one delivered are taken over
 * with no gap longer than a wake-up.  Where futex_waitv is missing or
 * refused (ENOSYS, or whatever a seccomp filter answers, at any moment)
 * it looks at them every WATCH_NS instead.
 */
#define _GNU_SOURCE
#include "engine/engine.h"
#include "engine/notify.h"
#include "futex.h"

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

static int64_t grace(void)
{
	return tfd_eng.grace ? tfd_eng.grace : GRACE;
}
#define BATCH 64                    /* posts written per unlock */
#define WATCH_NS (10 * 1000 * 1000LL) /* without futex_waitv: how often the
                                       * other processes are looked at */

/*
 * A periodic timer whose last post nobody has read is not posted again at
 * every period: its descriptor is readable already, and tfd_read() counts
 * from the clock.  It is held back instead, for a period that doubles up
 * to HOLD_MAX, so a fast timer nobody reads costs a wake-up per HOLD_MAX,
 * not per period.  A plain read() may then trail by up to HOLD_MAX (tfd(7)).
 */
#define HOLD_MAX (4 * 1000 * 1000) /* ns */

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#ifndef FUTEX_32
#define FUTEX_32 2
#endif

struct waitv { /* struct futex_waitv of <linux/futex.h> (Linux 5.16) */
	uint64_t val;
	uint64_t uaddr;
	uint32_t flags;
	uint32_t reserved;
};

/* Sleep on any of n words until the absolute CLOCK_MONOTONIC time at (NULL:
 * none).  0 if it slept (woken, timed out, interrupted, or a word had
 * changed already); else the call is refused or missing: ENOSYS before
 * Linux 5.16, whatever a seccomp filter answers (EPERM, EACCES, ...). */
static int futex_waitv(struct waitv *w, unsigned n, const struct timespec *at)
{
	if (syscall(SYS_futex_waitv, w, n, 0U, at, CLOCK_MONOTONIC) >= 0)
		return 0; /* the index of the word that woke it */
	if (errno == EAGAIN || errno == ETIMEDOUT || errno == EINTR)
		return 0;
	return errno;
}

void tfd_engine_poke(void)
{
	if (tfd_eng.self >= 0)
		tfd_family_poke(tfd_eng.self);
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

/* Write the batch unlocked; each timer may be drained again as soon as
 * its post is written. */
static void flush(struct batch *b)
{
	unsigned i;

	if (b->n == 0)
		return;
	tfd_family_unlock();
	for (i = 0; i < b->n; i++) {
		tfd_notify_post(b->p[i].file, b->p[i].n);
		__atomic_store_n(&b->p[i].t->inflight, 0, __ATOMIC_RELEASE);
	}
	tfd_family_lock();
	tfd_family_changed(); /* a read or settime may sleep for them */
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
	t->flags |= T_SIGNALED;
	__atomic_store_n(&t->inflight, 1, __ATOMIC_RELAXED);
}

void tfd_engine_post_locked(struct tfd_timer *t)
{
	if (t->m.ticks && t->file >= 0 &&
	    tfd_notify_post(t->file, t->m.ticks) == 0) {
		t->m.ticks = 0;
		t->flags |= T_SIGNALED;
	}
}

/* A fast periodic timer whose last post may still be unread: one look
 * (ppoll) tells for all of a round, not one system call each. */
static int check_unread(const struct tfd_timer *t)
{
	return t->m.interval && t->m.interval < HOLD_MAX && t->file >= 0 &&
	       (t->flags & T_SIGNALED);
}

/* Which of the n timers have an unread post: unread[i] set for each. */
static void look(struct tfd_timer *const *t, unsigned n, unsigned char *unread)
{
	struct pollfd p[BATCH];
	unsigned idx[BATCH], k = 0, i;
	struct timespec zero = { 0, 0 };

	for (i = 0; i < n; i++) {
		unread[i] = 0;
		if (!check_unread(t[i]))
			continue;
		p[k].fd = t[i]->file;
		p[k].events = POLLIN;
		p[k].revents = 0;
		idx[k++] = i;
	}
	if (k && syscall(SYS_ppoll, p, (unsigned long)k, &zero, NULL, 0UL) > 0)
		for (i = 0; i < k; i++)
			unread[idx[i]] = (p[i].revents & POLLIN) != 0;
}

/* Count and post what expired on base by now, a round of up to BATCH
 * timers at a time; 1 if it dropped the lock (the queues must be looked
 * at again). */
static int expire(int base, int64_t now)
{
	const struct tfd_qent *top;
	struct tfd_timer *round[BATCH];
	unsigned char unread[BATCH];
	struct batch b;
	unsigned n, i;
	int dropped = 0;

	b.n = 0;
	for (;;) {
		/* Take the due timers off the queue. */
		for (n = 0; n < BATCH &&
		            (top = tfd_queue_top(&tfd_eng.q[base])) && top->key <= now;) {
			struct tfd_timer *t = tfd_timer_of(top->node);

			if (__atomic_load_n(&t->inflight, __ATOMIC_ACQUIRE))
				break; /* never: each round is written before the
				        * next, but a post is not made twice */
			tfd_engine_unqueue(t);
			if (t->base != base || !t->m.next || t->m.next > now ||
			    t->hold > now) {
				/* Changed by another process since it was
				 * queued here (in our inbox, looked at next):
				 * not due. */
				tfd_engine_requeue(t);
				continue;
			}
			tfd_model_advance(&t->m, now);
			round[n++] = t;
		}
		if (n == 0)
			break; /* nothing due (or only a post being written) */
		look(round, n, unread);
		for (i = 0; i < n; i++) {
			struct tfd_timer *t = round[i];

			/* Held back too when there is no file to post to (a
			 * closed timer on the fallback): not looked at again
			 * at once. */
			if (t->m.interval && t->m.interval < HOLD_MAX &&
			    (t->file < 0 || unread[i])) {
				int64_t d = t->backoff ? 2 * (int64_t)t->backoff
				                       : t->m.interval;

				t->backoff = (int32_t)(d < HOLD_MAX ? d : HOLD_MAX);
				t->hold = now + t->backoff;
			} else {
				t->hold = t->backoff = 0;
				add(&b, t);
			}
			tfd_engine_requeue(t);
		}
		if (b.n)
			dropped = 1;
		flush(&b);
		if (tfd_family_wanted()) {
			tfd_family_yield(); /* the program's calls go first */
			dropped = 1;
		}
	}
	return dropped;
}

/* ---- requests ---- */

unsigned tfd_engine_pool_count(int nonblock)
{
	unsigned i, n = 0;

	for (i = 0; i < tfd_eng.npool; i++)
		n += tfd_eng.pool_nb[i] == nonblock;
	return n;
}

void tfd_engine_pool_drop(unsigned i)
{
	tfd_eng.npool--;
	tfd_eng.pool[i] = tfd_eng.pool[tfd_eng.npool];
	tfd_eng.pool_id[i] = tfd_eng.pool_id[tfd_eng.npool];
	tfd_eng.pool_nb[i] = tfd_eng.pool_nb[tfd_eng.npool];
}

static void drain_pool(void)
{
	while (tfd_eng.npool)
		tfd_files_close(tfd_eng.pool[--tfd_eng.npool]);
}

/* Copy the files of new timers into the private table. */
static void fetch_files(void)
{
	while (tfd_eng.nfetch) {
		struct tfd_fetch *r = tfd_eng.fetch[0];
		unsigned room = 0;

		/* The copy and its pidfd need two numbers here below the
		 * descriptor limit, which the ready eventfds may hold when it
		 * is near (the reason create came this way): give up the
		 * two lowest. */
		while (tfd_eng.npool && room++ < 2) {
			unsigned i, low = 0;

			for (i = 1; i < tfd_eng.npool; i++)
				if (tfd_eng.pool[i] < tfd_eng.pool[low])
					low = i;
			tfd_files_close(tfd_eng.pool[low]);
			tfd_engine_pool_drop(low);
		}
		tfd_family_unlock();
		r->result = tfd_files_fetch(r->tid, r->fd);
		tfd_family_lock();
		if (r->result == -EMFILE && tfd_eng.npool) {
			drain_pool(); /* all of them, then once more */
			tfd_family_unlock();
			r->result = tfd_files_fetch(r->tid, r->fd);
			tfd_family_lock();
		}
		r->id = r->result >= 0 ? tfd_files_id(r->result) : 0;
		r->done = 1;
		tfd_eng.nfetch--;
		memmove(tfd_eng.fetch, tfd_eng.fetch + 1,
		        tfd_eng.nfetch * sizeof(*tfd_eng.fetch));
		tfd_family_changed();
	}
}

/* The ids of the files we hold that have none yet, read here, in our own
 * table, for fork's prepare handler (fork.c, ids_first), which waits with
 * the lock dropped.  Under the lock: holds and their files stay as they
 * are; about 3 us a file, once in each timer's life. */
static void read_ids(void)
{
	struct tfd_hold *h;

	if (tfd_eng.ids_done == tfd_eng.ids_asked)
		return;
	TFD_HOLDS_EACH(h) {
		if (h->nfds && !h->efd_id && !h->direct && h->file >= 0 &&
		    !h->unchecked)
			h->efd_id = tfd_files_id(h->file);
	}
	tfd_eng.ids_done = tfd_eng.ids_asked;
	tfd_family_changed();
}

/* Keep fresh eventfds ready for tfd_create (files.c), half of each kind;
 * made unlocked, so that creates go on meanwhile. */
static void refill(void)
{
	int k[POOL_MAX];
	uint32_t id[POOL_MAX];
	unsigned char nb[POOL_MAX];
	unsigned n = 0, want[2], kind, i;

	if (!tfd_eng.private_files)
		return;
	for (kind = 0; kind < 2; kind++) {
		unsigned have = tfd_engine_pool_count((int)kind);

		want[kind] = tfd_eng.pool_max / 2 > have ? tfd_eng.pool_max / 2 - have : 0;
	}
	if (!want[0] && !want[1])
		return;
	tfd_family_unlock();
	for (kind = 0; kind < 2; kind++)
		for (i = 0; i < want[kind]; i++) {
			if ((k[n] = tfd_files_fresh((int)kind)) < 0)
				break;
			id[n] = 0; /* read at fork, if ever (read_ids) */
			nb[n++] = (unsigned char)kind;
		}
	tfd_family_lock();
	while (n && tfd_eng.npool < POOL_MAX) {
		n--;
		tfd_eng.pool[tfd_eng.npool] = k[n];
		tfd_eng.pool_id[tfd_eng.npool] = id[n];
		tfd_eng.pool_nb[tfd_eng.npool++] = nb[n];
	}
	while (n)
		tfd_files_close(k[--n]);
}

/* Close the files of holds let go of, unlocked; then the holds go back
 * to their chunks, locked. */
static void close_freed(void)
{
	struct tfd_hold *list = tfd_eng.freed, *h, *next;

	if (!list)
		return;
	tfd_eng.freed = NULL;
	tfd_eng.nfreed = 0;
	tfd_family_unlock();
	for (h = list; h; h = h->next)
		if (h->file >= 0)
			tfd_files_close(h->file);
	tfd_family_lock();
	for (h = list; h; h = next) {
		next = h->next;
		tfd_hold_free(h);
	}
}

/* ---- the family ---- */

/* Other processes of the family died (their threads' alive words are
 * marked), or asked something of us. */
static void family(void)
{
	tfd_family_reap_dead(0);
	tfd_engine_sync(1);
}

/* ---- the thread ---- */

static int64_t mono_now(void)
{
	return tfd_clock_real(BASE_MONO);
}

static int have_waitv = 1; /* [S] futex_waitv(2) works */
static int pin = -1;        /* [S] our pidfd, in our table (files.c) */

/* Sleep for wait ns (TFD_NS_MAX: until woken) on our wake-up word seq,
 * and on the alive words of the family's other service threads.  0 if
 * there is no other to watch or it is ready to, 1 if one died already. */
static int sleep_on(unsigned seq, int64_t wait)
{
	struct tfd_proc *me = &tfd_fam->proc[tfd_eng.self];
	struct waitv w[PROC_MAX];
	struct timespec at;
	unsigned n = 1;
	uint64_t m;
	int i;

	w[0].val = seq;
	w[0].uaddr = (uintptr_t)&me->wake;
	w[0].flags = FUTEX_32;
	w[0].reserved = 0;
	TFD_PROC_EACH(i, tfd_fam->inuse, m) {
		const struct tfd_proc *p = &tfd_fam->proc[i];
		unsigned val, *word;

		if (i == tfd_eng.self || p->state != P_LIVE || !p->threaded)
			continue;
		if (!(word = tfd_family_watch(i, &val)))
			return 1; /* it died: reap it first */
		w[n].val = val;
		w[n].uaddr = (uintptr_t)word;
		w[n].flags = FUTEX_32;
		w[n].reserved = 0;
		n++;
	}
	tfd_family_unlock();
	if (n > 1 && have_waitv) {
		at = tfd_ns_to_ts(tfd_ns_add(mono_now(), wait));
		/* Refused (at any moment: a filter installed later) is
		 * missing: looked at every WATCH_NS from now on, below. */
		if (futex_waitv(w, n, wait == TFD_NS_MAX ? NULL : &at) != 0)
			have_waitv = 0;
		else
			goto out;
	}
	if (n > 1 && wait > WATCH_NS)
		wait = WATCH_NS;
	tfd_futex_nap(&me->wake, seq, wait == TFD_NS_MAX ? -1 : wait);
out:
	tfd_family_lock();
	return 0;
}

/* Sleep until the earliest deadline, a poke or a death in the family.
 * Called locked; returns locked. */
static void sleep_until_due(void)
{
	struct tfd_proc *me = &tfd_fam->proc[tfd_eng.self];
	int64_t wait = TFD_NS_MAX;
	unsigned seq = me->wake;
	int b;

	if (tfd_engine_sync_pending())
		return; /* what another process asked comes first */
	for (b = 0; b < NBASE; b++) {
		const struct tfd_qent *top = tfd_queue_top(&tfd_eng.q[b]);

		me->sleep_until[b] = TFD_NS_MAX;
		if (top) {
			int64_t d = top->key - tfd_clock_now(b);

			me->sleep_until[b] = top->key;
			if (d < wait)
				wait = d < 0 ? 0 : d;
		}
	}
	if (tfd_eng.nholds == 0 && wait > grace())
		wait = grace();
	if (wait == 0)
		return;
	me->sleeping = 1;
	tfd_eng.idle_sleep = tfd_eng.nholds == 0;
	sleep_on(seq, wait);
	me->sleeping = 0;
	tfd_eng.idle_sleep = 0;
	tfd_eng.wakeups++;
}

/* The thread's start, under the family's lock: a table of its own (or
 * the program's), the pinned file, its record watched by the others. */
static struct tfd_proc *service_begin(void)
{
	struct tfd_proc *me;
	int b, kept;

	kept = tfd_engine_keep_inherited(); /* in a forked child */
	tfd_family_lock();
	if (tfd_eng.private_files && !kept && tfd_files_unshare() != 0)
		tfd_eng.private_files = 0;
	if (!tfd_eng.private_files)
		tfd_engine_holds_direct(0); /* a forked child's: our table
		                             * is the program's */
	pin = tfd_eng.private_files ? tfd_files_pin() : -1;
	me = &tfd_fam->proc[tfd_eng.self];
	tfd_eng.tid = gettid();
	tfd_family_unlock();
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	pthread_mutex_lock(&me->alive); /* a fresh record: never a dead owner */
	tfd_family_lock();
	me->threaded = 1;
	me->threadless = 0;
	/* The other service threads of the family watch ours from now on:
	 * each looks again at whom it sleeps on. */
	for (b = 0; b < PROC_MAX; b++)
		if (b != tfd_eng.self && tfd_fam->proc[b].threaded)
			tfd_family_poke(b);
	refill();
	tfd_eng.state = RUNNING;
	tfd_family_changed();
	return me;
}

/* One round, under the family's lock: 1 to go round again at once, 0 to
 * sleep until something is due, -1 to stop. */
static int service_round(void)
{
	int again = 0, b;

	close_freed(); /* first: a fetch near the limit needs room */
	fetch_files();
	read_ids();
	if (tfd_eng.go_direct)
		return -1; /* a thread on the fallback replaces us */
	/* Refilled with no timer left too: a program that makes and closes
	 * one timer at a time would else find none ready and take the
	 * round trip each time (tfd(7)). */
	if (tfd_eng.pool_max && !tfd_eng.stop &&
	    (tfd_engine_pool_count(0) < POOL_LOW ||
	     tfd_engine_pool_count(1) < POOL_LOW))
		refill();
	if (tfd_eng.clock_set) {
		tfd_eng.clock_set = 0;
		tfd_clock_was_set();
		tfd_family_changed();
	}
	family();
	tfd_clock_watch_service(); /* after family(): adopted ones */
	for (b = 0; b < NBASE; b++)
		if (tfd_queue_top(&tfd_eng.q[b]))
			again |= expire(b, tfd_clock_now(b));
	if (again || tfd_eng.nfetch || tfd_eng.clock_set || tfd_eng.freed ||
	    tfd_eng.ids_done != tfd_eng.ids_asked)
		return 1;
	if (tfd_eng.nholds != 0 || tfd_eng.creating)
		tfd_eng.idle_since = 0;
	else if (!tfd_eng.idle_since)
		tfd_eng.idle_since = mono_now();
	else if (mono_now() - tfd_eng.idle_since >= grace() || tfd_eng.stop)
		return -1;
	return 0;
}

/* Our table and the copies in it go with us; the thread that replaces us
 * posts to the program's numbers, found here, where the kernel's ids are
 * read in our own table (tfd_engine_holds_direct). */
static void hand_over_direct(void)
{
	struct tfd_hold *h;

	TFD_HOLDS_EACH(h) {
		if (!h->direct && !h->efd_id && h->file >= 0 && !h->unchecked)
			h->efd_id = tfd_files_id(h->file);
	}
	tfd_engine_holds_direct(1);
	tfd_eng.private_files = 0;
	tfd_eng.go_direct = 0;
	close_freed();
}

/* The thread's end, under the family's lock, which it lets go. */
static void service_end(struct tfd_proc *me)
{
	tfd_eng.state = STOPPING; /* no timer is made until we are gone */
	if (tfd_eng.go_direct)
		hand_over_direct();
	drain_pool();
	if (pin >= 0)
		tfd_files_close(pin);
	pin = -1;
	tfd_family_unlock();
	tfd_clock_watch_stop();
	tfd_family_lock();
	me->threaded = 0;
	pthread_mutex_unlock(&me->alive);
	if (tfd_eng.nholds == 0 && !tfd_eng.creating) {
		tfd_family_free_proc(tfd_eng.self);
		tfd_eng.self = -1;
	}
	tfd_eng.state = STOPPED;
	tfd_eng.stop = 0;
	tfd_eng.idle_since = 0;
	tfd_family_changed();
	tfd_family_unlock();
}

static void *service(void *arg)
{
	struct tfd_proc *me = service_begin();
	int r;

	(void)arg;
	while ((r = service_round()) >= 0)
		if (r == 0)
			sleep_until_due();
	service_end(me);
	tfd_own_ended();
	return NULL;
}

/* Start the service thread if it is not running, and wait until it runs
 * (in a forked child, not: inside fork() (tfd_eng.in_fork) other libraries may
 * keep locks the new thread needs until fork() returns, and a thread that
 * first copies inherited numbers (tfd_eng.keeping) must find them unchanged).
 * Lock held; may drop it. */
int tfd_engine_start(void)
{
	int e;

	while (tfd_eng.state == STOPPING || tfd_eng.state == STARTING)
		tfd_family_wait();
	if (tfd_eng.state == RUNNING) {
		tfd_eng.idle_since = 0;
		return 0;
	}
	if (tfd_eng.self < 0 &&
	    (tfd_eng.self = tfd_family_new_proc(NO_PROC, P_LIVE)) < 0)
		return ENOMEM; /* PROC_MAX processes of the family hold timers */
	tfd_eng.private_files = tfd_files_private();
	tfd_eng.stop = 0;
	tfd_eng.idle_since = 0;
	/* Called by a thread of the program's (or in a fork handler, in the
	 * child's first thread): the program's descriptor table. */
	e = tfd_own_thread(&tfd_eng.thread, 0, service, NULL, 1);
	if (e)
		return e;
	tfd_eng.state = STARTING;
	if (tfd_eng.in_fork || __atomic_load_n(&tfd_eng.keeping, __ATOMIC_ACQUIRE))
		return 0; /* the thread goes on alone (fork.c) */
	while (tfd_eng.state == STARTING)
		tfd_family_wait();
	return 0;
}

/* The private files (files.c) were refused, once timers ran: the service
 * thread, whose own table cannot reach the program's numbers, leaves, and
 * one on the fallback, sharing the program's table, takes over what it
 * delivered (tfd_engine_holds_direct).  0 or errno.  Lock held; may drop
 * it. */
int tfd_engine_go_direct(void)
{
	while (tfd_eng.state == STARTING || tfd_eng.state == STOPPING)
		tfd_family_wait();
	if (tfd_eng.state == RUNNING && tfd_eng.private_files) {
		tfd_eng.go_direct = 1;
		tfd_engine_poke();
		while (tfd_eng.state != STOPPED)
			tfd_family_wait();
	}
	return tfd_engine_start();
}

/* The last timer went: the thread, unless it already sleeps no longer
 * than GRACE, wakes to close what it holds and to end after GRACE. */
void tfd_engine_stop_if_idle(void)
{
	if (tfd_eng.nholds == 0 && tfd_eng.state == RUNNING && !tfd_eng.idle_sleep)
		tfd_engine_poke();
}

/* h's file is the service thread's to close: when it next wakes, or now
 * if many wait (a wake-up for each close would cost two system calls and
 * two thread switches). */
void tfd_engine_free_later(struct tfd_hold *h)
{
	h->next = tfd_eng.freed;
	tfd_eng.freed = h;
	if (++tfd_eng.nfreed >= FREED_MAX)
		tfd_engine_poke();
}

/* Stop the thread now if no timer is left (switching clocks).  Lock held;
 * may drop it. */
void tfd_engine_stop_now(void)
{
	if (tfd_eng.nholds == 0 && tfd_eng.state == RUNNING) {
		tfd_eng.stop = 1;
		tfd_engine_poke();
	}
	while (tfd_eng.state != STOPPED)
		tfd_family_wait();
}

/* Test hook: how many fresh eventfds to keep ready (0: none, so that every
 * create makes its own eventfd, the path fault injection reaches). */
void tfd_engine_pool_size(unsigned n)
{
	int cs;

	tfd_engine_lock(&cs);
	tfd_eng.pool_max = n < POOL_MAX ? n : POOL_MAX; /* 0: none is taken */
	tfd_engine_unlock(cs);
}

/* Test hook: the eventfds of a kind ready for tfd_create. */
unsigned tfd_engine_pool_ready(int nonblock)
{
	unsigned n;
	int cs;

	tfd_engine_lock(&cs);
	n = tfd_engine_pool_count(nonblock);
	tfd_engine_unlock(cs);
	return n;
}

/* Test hook: how long the thread outlives the last timer (0: GRACE). */
void tfd_engine_grace(long long ns)
{
	int cs;

	tfd_engine_lock(&cs);
	tfd_eng.grace = ns;
	tfd_engine_unlock(cs);
}

/* In a child: the parent's thread is not here (fork.c). */
void tfd_engine_after_fork(void)
{
	tfd_eng.state = STOPPED;
	tfd_eng.stop = 0;
	tfd_eng.idle_since = 0;
	tfd_eng.nfetch = 0;
	tfd_eng.npool = 0; /* numbers of the parent's thread */
	tfd_eng.clock_set = 0;
	tfd_eng.creating = 0; /* the parent's threads' */
	tfd_clock_watch_forked();
	tfd_eng.start_pending = 0;
	tfd_eng.start_tried = 0;
	tfd_eng.asleep = 0; /* the parent's waits */
}
