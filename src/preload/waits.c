/* SPDX-License-Identifier: MIT */
/*
 * waits.c - poll, ppoll, select, pselect and the epoll waits, where a
 * timer of a backend that emulates them (not kernel timerfds) is waited
 * on, or time is virtual.
 *
 * A timer is never writable: write events asked for on timers are taken
 * out for the time of the wait and put back after.  A wait that may block
 * holds each timer it waits on (the backend's hold): closing the timer's
 * last descriptor in another thread meanwhile does not stop the timer, as
 * Linux keeps the file of a descriptor being waited on.  A handler may
 * jump out of the system call such a wait blocks in, or a cancellation
 * end the thread there: the engine, told where it blocks
 * (tfd_engine_waits_block), then undoes the holds itself.  On real time
 * a poll or select whose set holds timers delivers them itself (deliver:
 * tfd(7), Delivery); on virtual time the wait moves time (vtime.h).
 */
#include "preload/preload.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define POLL_WRITE (POLLOUT | POLLWRNORM | POLLWRBAND)

int tfd_waits_deliver;

int64_t tfd_ms_ns(int ms)
{
	return ms < 0 ? -1 : (int64_t)ms * 1000000;
}

int64_t tfd_tsp_ns(const struct timespec *ts)
{
	return ts ? tfd_ts_to_ns(ts) : -1;
}

int64_t tfd_real_mono(void)
{
	struct timespec ts;

	R(clock_gettime)(CLOCK_MONOTONIC, &ts);
	return tfd_ts_to_ns(&ts);
}

/* ---- holding the timers of a wait ---- */

/* The engine keeps the holds, in the thread's own memory, and lets them
 * all go at the end (nothing of them is on this stack, nor allocated
 * here: a handler that jumps out of the wait leaves nothing to free). */
struct holds {
	size_t n;
	int on; /* the wait may block */
};

/* ns: the wait's timeout, -1 for none.  A wait that cannot block (a
 * timeout of 0, as a loop that looks between other work makes) holds
 * nothing: no close can come while it waits, and each hold takes the
 * backend's lock, twice per timer on every call. */
static void holds_init(struct holds *s, int64_t ns)
{
	s->n = 0;
	s->on = ns != 0;
}

static void hold_one(struct holds *s, int fd)
{
	int was;

	if (!s->on || !tfd_be->hold || !tfd_emulated)
		return;
	was = tfd_enter();
	if (tfd_be->hold(fd))
		s->n++;
	tfd_leave(was);
}

static void holds_end(struct holds *s)
{
	int was;

	if (!s->n)
		return;
	was = tfd_enter();
	tfd_engine_waits_end();
	tfd_leave(was);
}

/* ---- poll, ppoll ---- */

/* The write events asked for on timers, taken out of a pollfd array for
 * the time of a wait and put back after. */
struct unwrite {
	struct pollfd *fds;
	nfds_t n;
	nfds_t timers; /* entries that are timers */
	short *saved; /* NULL if nothing was taken out */
	short small[16];
};

static void unwrite_take(struct unwrite *u, struct holds *s,
                         struct pollfd *fds, nfds_t n)
{
	nfds_t i;

	u->fds = fds;
	u->n = n;
	u->timers = 0;
	u->saved = NULL;
	for (i = 0; tfd_emulated && i < n; i++) {
		if (!tfd_marked(fds[i].fd)) {
			if (unlikely(__atomic_load_n(&tfd_nreg,
			                             __ATOMIC_RELAXED)) &&
			    tfd_epoll_set(fds[i].fd))
				tfd_epoll_held(fds[i].fd); /* a set polled */
			continue;
		}
		u->timers++;
		hold_one(s, fds[i].fd);
		if (!(fds[i].events & POLL_WRITE))
			continue;
		if (!u->saved && n <= 16)
			u->saved = memset(u->small, 0, sizeof(u->small));
		else if (!u->saved)
			u->saved = calloc(n, sizeof(*u->saved));
		if (!u->saved)
			continue; /* out of memory: left as it is */
		u->saved[i] = fds[i].events & POLL_WRITE;
		fds[i].events &= (short)~POLL_WRITE;
	}
}

static void unwrite_give(struct unwrite *u)
{
	nfds_t i;

	if (!u->saved)
		return;
	for (i = 0; i < u->n; i++)
		u->fds[i].events |= u->saved[i];
	if (u->saved != u->small)
		free(u->saved);
}

struct pwait {
	struct pollfd *fds;
	nfds_t n;
	const sigset_t *mask;
	int ppoll;
};

static int pwait_look(void *ctx)
{
	struct pwait *w = ctx;
	struct timespec zero = { 0, 0 };

	if (w->ppoll)
		return R(ppoll)(w->fds, w->n, &zero, w->mask);
	return R(poll)(w->fds, w->n, 0);
}

/* ppoll(2) on the set, told to the engine if it may block. */
static int pwait_call(void *ctx, const struct timespec *tp,
                      const sigset_t *mask)
{
	struct pwait *w = ctx;
	uintptr_t b = 0;
	int r, e;

	if (!tp || tp->tv_sec || tp->tv_nsec)
		b = tfd_engine_waits_block();
	r = R(ppoll)(w->fds, w->n, tp, mask);
	e = errno;
	tfd_engine_waits_unblock(b);
	errno = e;
	return r;
}

static int pwait_block(void *ctx, const sigset_t *mask, int64_t ns)
{
	struct timespec ts = tfd_ns_to_ts(ns);

	return pwait_call(ctx, ns < 0 ? NULL : &ts, mask);
}

/* A wait for input on a descriptor whose other end may be held outside
 * the tree is a wait on the outside (vtime.h: tfd_dom_fd_outside). */
#define POLL_READ (POLLIN | POLLPRI | POLLRDNORM | POLLRDBAND)
static void poll_outside(const struct pollfd *fds, nfds_t n)
{
	nfds_t i;

	for (i = 0; i < n; i++)
		if (fds[i].fd >= 0 && (fds[i].events & POLL_READ) &&
		    tfd_dom_fd_outside(fds[i].fd)) {
			tfd_dom_wait_outside();
			return;
		}
}

/* ---- the waiter delivers (real time) ---- */

/* A look at the timers of a wait's set, with the backend's lock (ready,
 * defer): which a read would count now, and the earliest deadline of the
 * others.  Before the wait blocks, the timers due at that deadline are
 * left to it (defer 1); when it returns, those not due are given back
 * (defer 0).  A wait that woke a little before the deadline (aim) only
 * looks, and sleeps again. */
enum { SCAN_LOOK, SCAN_BLOCK, SCAN_END };

struct scan {
	int phase, begun, was;
	int mark; /* the ready ones are marked (not after an error) */
	int64_t next; /* CLOCK_MONOTONIC, -1 for none */
	int64_t end;  /* the wait's own end, -1 for none */
};

static void scan_begin(struct scan *c, int phase, int64_t end)
{
	c->end = end;
	c->phase = phase;
	c->mark = 1;
	c->next = -1;
	c->was = tfd_enter();
	c->begun = tfd_be->ready_begin();
}

/* Until when (CLOCK_MONOTONIC) a timer that a poll or select of the
 * process reported from memory may be unposted: the latest deadline a
 * wait deferred, or the last time a wait reported one from memory, and
 * the service thread's grace (DELIVER_GRACE, 100 us) or wake-up with
 * room to spare.  An epoll wait before then posts such timers of its set
 * (epoll_post_due). */
#define HELD_MARGIN (10 * 1000 * 1000LL)
static int64_t held_until = -1;

/* A timer may be readable without its post until at (CLOCK_MONOTONIC),
 * and HELD_MARGIN after. */
static void held_to(int64_t at)
{
	int64_t d = tfd_ns_add(at, HELD_MARGIN);
	int64_t was = __atomic_load_n(&held_until, __ATOMIC_RELAXED);

	while (was < d &&
	       !__atomic_compare_exchange_n(&held_until, &was, d, 1,
	                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* 1 if a read of timer fd would count now.  seen: the kernel's look at
 * the set, just made, found fd readable.  A post that landed after that
 * look (or one that a read the library does not see emptied) is looked
 * at again. */
static int scan_one(struct scan *c, int fd, int seen)
{
	struct pollfd p = { fd, POLLIN, 0 };
	struct timespec zero = { 0, 0 };
	int64_t d;
	int r = tfd_be->ready(fd, &d, NULL);

	if (c->phase == SCAN_END)
		tfd_be->defer(fd, 0);
	if ((r == 0 || r == 2) && d >= 0 && (c->next < 0 || d < c->next))
		c->next = d;
	if (r == 2 && c->phase != SCAN_BLOCK && c->mark && !seen)
		return R(ppoll)(&p, 1, &zero, NULL) == 1 && (p.revents & POLLIN);
	if (r == 1 && !seen && c->mark) /* told from memory */
		held_to(tfd_real_mono());
	return r == 1;
}

/* The second pass before a wait blocks: fd is due at the earliest
 * deadline, and the wait will be awake then.  (A deadline on another
 * clock than CLOCK_MONOTONIC is converted anew with each look: within a
 * microsecond is the same.) */
static void scan_defer(const struct scan *c, int fd)
{
	int64_t d;

	if (c->next >= 0 && (c->end < 0 || c->next < c->end) &&
	    tfd_be->ready(fd, &d, NULL) == 0 && d >= 0 && d <= c->next + 1000) {
		tfd_be->defer(fd, 1);
		held_to(c->next);
	}
}

static void scan_end(struct scan *c)
{
	tfd_be->ready_end(c->begun);
	tfd_leave(c->was);
}

/* When to wake for a deadline at (CLOCK_MONOTONIC).  Linux ends a wait
 * for a timerfd at its deadline; a timed wait may end later than asked,
 * by the thread's timer slack (50 us unless the program set it) or by
 * 0.1 % of the time asked for, whichever is more.  So a thread whose
 * wait ends at a deadline of ours has a slack of 1 ns (slack.c), and the
 * wait asks to end 0.1 % earlier, and waits again for the rest if it
 * woke before the deadline. */

static int64_t aim(int64_t at)
{
	int64_t now = tfd_real_mono(), est = (at - now) / 1000;

	/* A wait that wakes early and sleeps again is woken the second time
	 * like a thread that has just run: on a busy machine, after the
	 * running one's time slice (1-3 ms late, where 0.1 % of a wait of
	 * under 20 ms is under 20 us late). */
	return est > 20000 ? at - est : at;
}

/* The timeout of a wait until at (-1: none), from now. */
static struct timespec *timeout_to(int64_t at, struct timespec *ts)
{
	int64_t now;

	if (at < 0)
		return NULL;
	now = tfd_real_mono();
	*ts = tfd_ns_to_ts(at > now ? at - now : 0);
	return ts;
}

/* The timers of the set get POLLIN where a read would count, if asked
 * for, whether the service thread has posted their files yet or not; how
 * many entries became ready that were not. */
static int pwait_ours(void *ctx, struct scan *c)
{
	struct pwait *w = ctx;
	int added = 0;
	nfds_t i;

	for (i = 0; i < w->n; i++) {
		struct pollfd *p = &w->fds[i];

		if (!(p->events & POLLIN) || !tfd_marked(p->fd) ||
		    !scan_one(c, p->fd, p->revents & POLLIN) || !c->mark ||
		    (p->revents & POLLIN))
			continue;
		added += !p->revents;
		p->revents |= POLLIN;
	}
	for (i = 0; !added && c->phase == SCAN_BLOCK && i < w->n; i++)
		if ((w->fds[i].events & POLLIN) && tfd_marked(w->fds[i].fd))
			scan_defer(c, w->fds[i].fd);
	return added;
}

/* A wait that delivers, on poll's array or select's sets: empty its
 * results, look at its timers (pwait_ours, swait_ours), wait in the
 * kernel (told to the engine when it may block). */
struct dwait {
	void (*clear)(void *w);
	int (*ours)(void *w, struct scan *c);
	int (*call)(void *w, const struct timespec *tp, const sigset_t *mask);
	const sigset_t *mask;
};

/* A wait on real time with timers of ours in the set: the thread that
 * waits delivers (tfd(7), Delivery).  It sleeps in the kernel until the
 * earliest deadline of its timers at most, and then reports those that
 * expired itself: one wake-up, its own, where the service thread's post
 * and then the wake-up it causes take two.  The service thread posts
 * only if the timer is still unread DELIVER_GRACE later, for waits we do
 * not see. */
static int deliver(void *w, const struct dwait *d, int64_t ns)
{
	int64_t end = ns < 0 ? -1 : tfd_ns_add(tfd_real_mono(), ns);
	struct timespec ts, *tp;
	struct scan c;
	int r, k, e, done;

	for (;;) {
		d->clear(w);
		c.next = -1;
		k = 0;
		if (ns || d->mask) { /* (a look needs none before it, but
		                      * for its mask: below) */
			scan_begin(&c, SCAN_BLOCK, end);
			k = d->ours(w, &c);
			scan_end(&c);
		}
		if (k || !ns) {
			ts.tv_sec = ts.tv_nsec = 0; /* the others as they are */
			tp = &ts;
		} else if (c.next >= 0 && (end < 0 || c.next < end)) {
			tfd_slack_fine();
			tp = timeout_to(aim(c.next), &ts);
		} else {
			tp = timeout_to(end, &ts);
		}
		/* A look after one of ours was found due: Linux returns what
		 * is ready, even with a signal pending that the mask lets
		 * through. */
		r = d->call(w, tp, k ? NULL : d->mask);
		e = errno;
		done = r != 0 || (end >= 0 && tfd_real_mono() >= end);
		scan_begin(&c, done ? SCAN_END : SCAN_LOOK, end);
		c.mark = r >= 0;
		k = d->ours(w, &c);
		if (k && !done) { /* it returns: the others are given back
		                   * (and no more marked: k is the count) */
			c.phase = SCAN_END;
			c.mark = 0;
			d->ours(w, &c);
		}
		scan_end(&c);
		errno = e;
		if (done || k)
			return r < 0 ? r : r + k;
	}
}

static void pwait_clear(void *ctx)
{
	struct pwait *w = ctx;
	nfds_t i;

	for (i = 0; i < w->n; i++)
		w->fds[i].revents = 0;
}

static int pwait_deliver(struct pwait *w, int64_t ns)
{
	const struct dwait d = { pwait_clear, pwait_ours, pwait_call,
		                 w->mask };

	return deliver(w, &d, ns);
}

/* ns: the wait's limit on the caller's clock; poll_ms: poll's own. */
static int pwait_run(struct pwait *w, int64_t ns, int poll_ms,
                     const struct timespec *ts)
{
	struct unwrite u;
	struct holds s;
	int r, e;

	holds_init(&s, ns);
	unwrite_take(&u, &s, w->fds, w->n);
	if (tfd_virt && tfd_dom && ns != 0) /* (a try never blocks) */
		poll_outside(w->fds, w->n);
	r = tfd_virt ? tfd_dom_wait(ns, w->mask, pwait_look, pwait_block, w)
	             : VWAIT_BLOCK;
	if (r == VWAIT_BLOCK && u.timers && tfd_waits_deliver) {
		r = pwait_deliver(w, ns);
	} else if (r == VWAIT_BLOCK) { /* no domain: real time */
		uintptr_t b = tfd_engine_waits_block();

		r = w->ppoll ? R(ppoll)(w->fds, w->n, ts, w->mask)
		             : R(poll)(w->fds, w->n, poll_ms);
		e = errno;
		tfd_engine_waits_unblock(b);
		errno = e;
	}
	e = errno;
	unwrite_give(&u);
	holds_end(&s);
	errno = e;
	return r;
}

int tfd_wait_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct pwait w = { fds, n, NULL, 0 };

	return pwait_run(&w, tfd_ms_ns(timeout), timeout, NULL);
}

int tfd_wait_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                   const sigset_t *mask)
{
	struct pwait w = { fds, n, mask, 1 };

	if (ts && !tfd_ts_valid(ts)) /* EINVAL: Linux's */
		return R(ppoll)(fds, n, ts, mask);

	return pwait_run(&w, tfd_tsp_ns(ts), 0, ts);
}

/* ---- select, pselect ---- */

/* Sets of any size: glibc lets a program pass nfds above FD_SETSIZE with
 * sets it allocated larger. */
#define WORD_BITS (8 * sizeof(unsigned long))

static size_t set_bytes(int nfds)
{
	return ((size_t)nfds + WORD_BITS - 1) / WORD_BITS *
	       sizeof(unsigned long);
}

static int set_has(const fd_set *s, int fd)
{
	const unsigned long *w = (const unsigned long *)(const void *)s;

	return (w[(size_t)fd / WORD_BITS] >> ((size_t)fd % WORD_BITS)) & 1;
}

static void set_clear(fd_set *s, int fd)
{
	unsigned long *w = (unsigned long *)(void *)s;

	w[(size_t)fd / WORD_BITS] &= ~(1UL << ((size_t)fd % WORD_BITS));
}

static void set_add(fd_set *s, int fd)
{
	unsigned long *w = (unsigned long *)(void *)s;

	w[(size_t)fd / WORD_BITS] |= 1UL << ((size_t)fd % WORD_BITS);
}

struct swait {
	int nfds;
	fd_set *set[3];
	unsigned char *saved[3]; /* set_bytes(nfds) each */
	const sigset_t *mask;
};

/* Holds the timers of the sets; takes timers out of the write set.  How
 * many timers the read set has. */
static int sets_take(int nfds, fd_set **set, struct holds *s)
{
	int fd, h = __atomic_load_n(&tfd_hiwater, __ATOMIC_RELAXED), i, n = 0;

	if (!tfd_emulated)
		return 0;
	/* An epoll set of timers selected: a wait on it (epoll.c). */
	for (fd = 0; set[0] && fd < nfds && fd < 1024 &&
	             unlikely(__atomic_load_n(&tfd_nreg, __ATOMIC_RELAXED));
	     fd++)
		if (tfd_epoll_set(fd) && !tfd_marked(fd) && set_has(set[0], fd))
			tfd_epoll_held(fd);
	for (fd = 0; fd < nfds && fd < h; fd++) {
		if (!tfd_marked(fd))
			continue;
		for (i = 0; i < 3; i++)
			if (set[i] && set_has(set[i], fd))
				break;
		if (i < 3)
			hold_one(s, fd);
		if (set[0] && set_has(set[0], fd))
			n++;
		if (set[1] && set_has(set[1], fd))
			set_clear(set[1], fd);
	}
	return n;
}

static int swait_call(void *ctx, const struct timespec *ts,
                      const sigset_t *mask)
{
	struct swait *w = ctx;
	uintptr_t b = 0;
	int i, r, e;

	for (i = 0; i < 3; i++)
		if (w->set[i])
			memcpy(w->set[i], w->saved[i], set_bytes(w->nfds));
	if (!ts || ts->tv_sec || ts->tv_nsec)
		b = tfd_engine_waits_block();
	r = R(pselect)(w->nfds, w->set[0], w->set[1], w->set[2], ts, mask);
	e = errno;
	tfd_engine_waits_unblock(b);
	errno = e;
	return r;
}

/* select(2) or pselect(2) for real time, told to the engine (above). */
static int select_real(int nfds, fd_set **set, const struct timespec *ts,
                       const sigset_t *mask, struct timeval *tv)
{
	uintptr_t b = tfd_engine_waits_block();
	int r, e;

	r = tv ? R(select)(nfds, set[0], set[1], set[2], tv)
	       : R(pselect)(nfds, set[0], set[1], set[2], ts, mask);
	e = errno;
	tfd_engine_waits_unblock(b);
	errno = e;
	return r;
}

static int swait_look(void *ctx)
{
	struct swait *w = ctx;
	struct timespec zero = { 0, 0 };

	return swait_call(w, &zero, w->mask);
}

static int swait_block(void *ctx, const sigset_t *mask, int64_t ns)
{
	struct timespec ts = tfd_ns_to_ts(ns);

	return swait_call(ctx, ns < 0 ? NULL : &ts, mask);
}

/* The sets as given are kept in w->saved, each wait starting from them:
 * in small if they fit (a handler may jump out of the wait), else
 * allocated (swait_end frees it).  -1 ENOMEM. */
static int swait_begin(struct swait *w, unsigned char *small, size_t size)
{
	size_t len = set_bytes(w->nfds);
	unsigned char *buf = 3 * len <= size ? small : malloc(3 * len + 1);
	int i;

	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < 3; i++) {
		w->saved[i] = buf + (size_t)i * len;
		if (w->set[i])
			memcpy(w->saved[i], w->set[i], len);
	}
	return 0;
}

static void swait_end(struct swait *w, const unsigned char *small)
{
	if (w->saved[0] != small)
		free(w->saved[0]);
}

/* The timers of the read set as given that a read would count now are
 * set in the read set (pwait_ours); how many were not. */
static int swait_ours(void *ctx, struct scan *c)
{
	struct swait *w = ctx;
	int h = __atomic_load_n(&tfd_hiwater, __ATOMIC_RELAXED), added = 0, fd;
	fd_set *rd = (fd_set *)(void *)w->saved[0];

	for (fd = 0; fd < w->nfds && fd < h; fd++) {
		if (!tfd_marked(fd) || !set_has(rd, fd) ||
		    !scan_one(c, fd, set_has(w->set[0], fd)) || !c->mark ||
		    set_has(w->set[0], fd))
			continue;
		set_add(w->set[0], fd);
		added++;
	}
	for (fd = 0; !added && c->phase == SCAN_BLOCK && fd < w->nfds && fd < h;
	     fd++)
		if (tfd_marked(fd) && set_has(rd, fd))
			scan_defer(c, fd);
	return added;
}

static void swait_clear(void *ctx)
{
	struct swait *w = ctx;
	int i;

	for (i = 0; i < 3; i++)
		if (w->set[i])
			memset(w->set[i], 0, set_bytes(w->nfds));
}

/* Real time, with timers of ours in the read set: the thread that waits
 * delivers (deliver). */
static int swait_deliver(struct swait *w, int64_t ns)
{
	const struct dwait d = { swait_clear, swait_ours, swait_call,
		                 w->mask };

	return deliver(w, &d, ns);
}

/* Virtual time: 0 or a result when time moved; VWAIT_BLOCK with the sets
 * as given when the caller must wait for real. */
static int swait_virtual(struct swait *w, int64_t ns)
{
	int i;
	int r;

	for (i = 0; tfd_dom && ns != 0 && w->set[0] && i < w->nfds; i++)
		if (set_has(w->set[0], i) && tfd_dom_fd_outside(i)) {
			tfd_dom_wait_outside(); /* (poll_outside) */
			break;
		}
	r = tfd_dom_wait(ns, w->mask, swait_look, swait_block, w);
	if (r == VWAIT_BLOCK)
		for (i = 0; i < 3; i++)
			if (w->set[i])
				memcpy(w->set[i], w->saved[i], set_bytes(w->nfds));
	return r;
}

static int select_run(int nfds, fd_set **set, const struct timespec *ts,
                      const sigset_t *mask, struct timeval *tv)
{
	struct swait w = { nfds, { set[0], set[1], set[2] }, { 0 }, mask };
	unsigned char small[3 * sizeof(fd_set)];
	struct holds s;
	int64_t ns = tv ? tfd_tv_to_ns(tv) : tfd_tsp_ns(ts), start = 0;
	int r, e, timers, deliver;

	holds_init(&s, ns);
	timers = sets_take(nfds, set, &s);
	deliver = timers && tfd_waits_deliver;
	if (!tfd_virt && !deliver) {
		r = select_real(nfds, set, ts, mask, tv);
		goto out;
	}
	if (swait_begin(&w, small, sizeof(small)) < 0) {
		r = -1;
		goto out;
	}
	start = tfd_virt ? tfd_dom_clock_now(CLOCK_MONOTONIC) : tfd_real_mono();
	r = deliver ? swait_deliver(&w, ns) : swait_virtual(&w, ns);
	if (r == VWAIT_BLOCK) { /* no domain: real time */
		r = select_real(nfds, set, ts, mask, tv);
	} else if (tv && (r >= 0 || errno == EINTR)) {
		/* Linux leaves the time not slept */
		int64_t now = tfd_virt ? tfd_dom_clock_now(CLOCK_MONOTONIC)
		                       : tfd_real_mono();
		int64_t left = ns - (now - start);

		*tv = tfd_ns_to_tv(left < 0 ? 0 : left);
	}
	swait_end(&w, small);
out:
	e = errno;
	holds_end(&s);
	errno = e;
	return r;
}

int tfd_wait_select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
                    struct timeval *tv)
{
	fd_set *set[3] = { rd, wr, ex };

	if (tv && (tv->tv_sec < 0 || tv->tv_usec < 0)) /* EINVAL: Linux's */
		return R(select)(nfds, rd, wr, ex, tv);
	if (!tv)
		return select_run(nfds, set, NULL, NULL, NULL);
	return select_run(nfds, set, NULL, NULL, tv);
}

int tfd_wait_pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
                     const struct timespec *ts, const sigset_t *mask)
{
	fd_set *set[3] = { rd, wr, ex };

	if (ts && !tfd_ts_valid(ts)) /* EINVAL: Linux's */
		return R(pselect)(nfds, rd, wr, ex, ts, mask);
	return select_run(nfds, set, ts, mask, NULL);
}

/* ---- epoll_wait, epoll_pwait, epoll_pwait2 ---- */

struct ewait {
	int ep;
	struct epoll_event *ev;
	int max;
	const sigset_t *mask;
};

static int ewait_look(void *ctx)
{
	struct ewait *w = ctx;

	return R(epoll_pwait)(w->ep, w->ev, w->max, 0, w->mask);
}

static int ewait_block(void *ctx, const sigset_t *mask, int64_t ns)
{
	struct ewait *w = ctx;
	int ms = ns < 0 ? -1 : ns > INT_MAX * 1000000LL ? INT_MAX
	                                                : (int)((ns + 999999) / 1000000);

	return R(epoll_pwait)(w->ep, w->ev, w->max, ms, mask);
}

/* Sets found to hold timers and, for input, nothing else: the tree's
 * count of changes (tfd_dom_fds_gen) << 32 | 1 << 31 | the set's number,
 * in a slot by number.  Such a set has nothing to look at until the
 * count moves. */
#define TIMER_SETS 16
static uint64_t timer_set[TIMER_SETS];

/* An epoll set's descriptors are the kernel's: /proc/self/fdinfo/EP
 * lists them ("tfd: FD events: MASK ..."), read with raw calls (not the
 * program's open and read).  A wait for input on one outside the tree is
 * a wait on the outside (poll_outside). */
static void epoll_outside(int ep)
{
	char path[48], buf[1024], *p, *nl; /* small: it may run on a Go
	                                    * signal stack (gosys.c) */
	uint64_t seen = (uint64_t)tfd_dom_fds_gen() << 32 | 1u << 31 |
	                (uint32_t)ep; /* (ep <= INT_MAX: a set is never 0) */
	uint64_t *slot = &timer_set[(unsigned)ep % TIMER_SETS];
	size_t have = 0;
	ssize_t n;
	int fd, found = 0, timers = 0, others = 0;

	if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) == seen)
		return;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ep);
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* Line by line: a large set is longer than the buffer. */
	while (!found &&
	       (n = syscall(SYS_read, fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = 0;
		for (p = buf; !found && (nl = strchr(p, '\n')); p = nl + 1) {
			char *q;
			long t;
			unsigned long evs = 0;

			*nl = 0;
			if (strncmp(p, "tfd:", 4))
				continue;
			t = strtol(p + 4, &q, 10);
			q = strstr(q, "events:");
			if (q)
				evs = strtoul(q + 7, NULL, 16);
			if (!(evs & POLL_READ) || t < 0 || t > INT_MAX)
				continue;
			if (tfd_marked((int)t)) { /* a timer: ours */
				timers++;
				continue;
			}
			others++;
			found = tfd_dom_fd_outside((int)t);
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line longer than the buffer */
	}
	syscall(SYS_close, fd);
	if (found)
		tfd_dom_wait_outside();
	else if (timers && !others && n == 0)
		__atomic_store_n(slot, seen, __ATOMIC_RELEASE);
}

/* ---- epoll on real time ---- */

/* The timers of one epoll set that a wait posts (epoll_post_due); the
 * others wait for the service thread. */
#define EPOLL_SCANNED 32

/* Before an epoll wait on real time, while a poll or select may have
 * reported a timer from memory (held_until): the timers registered in
 * the set that a read would count now and whose files do not show it
 * (the service thread holds the post back: tfd(7), Delivery) are posted
 * here, so that the kernel reports them as it does a timer that a poll
 * reported readable.  The epoll waits do not deliver themselves:
 * measured, the post they would make and the look after it cost more
 * than the service thread's wake-up (tfd(7), NOTES 16). */
static void epoll_post_due(int ep)
{
	int fds[EPOLL_SCANNED], n, i, e = errno;
	struct scan c;

	n = tfd_epoll_timers(ep, fds, EPOLL_SCANNED);
	if (!n)
		return;
	scan_begin(&c, SCAN_LOOK, -1);
	for (i = 0; i < n; i++)
		tfd_be->post(fds[i]);
	scan_end(&c);
	errno = e;
}

/* The covered timers that are due, as epoll reports them, after the r
 * events the kernel wrote to ev (max in all): those it reported already
 * (a post made before the timer was covered) are not reported twice.  The
 * new count. */
static int ewait_merge(struct epoll_event *ev, int r, int max,
                       const struct epoll_event *mine, int k)
{
	int i, j, n = r < 0 ? 0 : r;

	for (i = 0; i < k && n < max; i++) {
		for (j = 0; j < r; j++)
			if (ev[j].data.u64 == mine[i].data.u64)
				break;
		if (j == r || r < 0)
			ev[n++] = mine[i];
	}
	return n;
}

/* The kernel's epoll wait on w's set, until the CLOCK_MONOTONIC time at
 * (-1: none). */
static int ewait_until(struct ewait *w, int64_t at, const sigset_t *mask)
{
	struct timespec ts, *tp = timeout_to(at, &ts);
	uintptr_t b;
	int r, e, ms;

	b = tfd_engine_waits_block();
	if (LOADED(epoll_pwait2)) {
		r = R(epoll_pwait2)(w->ep, w->ev, w->max, tp, mask);
		if (r >= 0 || errno != ENOSYS)
			goto out;
	}
	ms = !tp ? -1 : tp->tv_sec > INT_MAX / 1000 - 1 ? INT_MAX
	     : (int)(tp->tv_sec * 1000 + (tp->tv_nsec + 999999) / 1000000);
	r = R(epoll_pwait)(w->ep, w->ev, w->max, ms, mask);
out:
	e = errno;
	tfd_engine_waits_unblock(b);
	errno = e;
	return r;
}

/* An epoll wait on real time on a set with covered timers (epoll.c): the
 * waiting thread delivers them (tfd(7), Delivery).  It reports those due
 * with what the kernel has ready, or sleeps in the kernel until the
 * earliest deadline of them at most and looks again; the backend neither
 * posts them nor wakes for them.  VWAIT_BLOCK if the set has none. */
#define EWAIT_MINE 64
static int ewait_deliver(struct ewait *w, int64_t ns)
{
	int64_t end = ns < 0 ? -1 : tfd_ns_add(tfd_real_mono(), ns), next;
	struct epoll_event mine[EWAIT_MINE];
	int room = w->max < EWAIT_MINE ? w->max : EWAIT_MINE, k, r, e;

	if (w->max <= 0 || !w->ev) /* Linux's EINVAL, EFAULT */
		return VWAIT_BLOCK;
	for (;;) {
		/* Told asleep in the look that finds when to wake: a settime
		 * after it posts (backend.h, asleep). */
		k = tfd_epoll_deliver(w->ep, mine, room, &next, ns != 0);
		if (k < 0)
			return VWAIT_BLOCK; /* none covered: the kernel's wait */
		if (k || !ns) {
			if (ns != 0)
				tfd_epoll_awake();
			r = w->max > k ? R(epoll_pwait)(w->ep, w->ev, w->max - k,
			                                0, NULL)
			               : 0;
			return r < 0 ? r : ewait_merge(w->ev, r, w->max, mine, k);
		}
		if (next >= 0 && (end < 0 || next < end)) {
			tfd_slack_fine();
			r = ewait_until(w, aim(next), w->mask);
		} else {
			r = ewait_until(w, end, w->mask);
		}
		e = errno;
		tfd_epoll_awake();
		room = w->max - (r > 0 ? r : 0);
		if (room > EWAIT_MINE)
			room = EWAIT_MINE;
		k = tfd_epoll_deliver(w->ep, mine, room, &next, 0);
		if (r != 0 || k > 0 || (end >= 0 && tfd_real_mono() >= end)) {
			errno = e;
			return r < 0 ? r
			             : ewait_merge(w->ev, r, w->max, mine,
			                           k < 0 ? 0 : k);
		}
		if (k < 0) /* uncovered meanwhile: the kernel's from now */
			return ewait_until(w, end, w->mask);
		if (end >= 0)
			ns = end - tfd_real_mono() > 0 ? end - tfd_real_mono() : 0;
		room = w->max < EWAIT_MINE ? w->max : EWAIT_MINE;
	}
}

/* VWAIT_BLOCK: the caller makes its own call (real time). */
int tfd_wait_epoll(int ep, struct epoll_event *ev, int max, int64_t ns,
                   const sigset_t *mask)
{
	struct ewait w = { ep, ev, max, mask };

	if (!tfd_virt) {
		int64_t held = __atomic_load_n(&held_until, __ATOMIC_RELAXED);

		if (!tfd_waits_deliver)
			return VWAIT_BLOCK;
		if (held >= 0 && held >= tfd_real_mono())
			epoll_post_due(ep);
		return ewait_deliver(&w, ns);
	}
	if (tfd_dom && ns != 0)
		epoll_outside(ep);
	return tfd_dom_wait(ns, mask, ewait_look, ewait_block, &w);
}
