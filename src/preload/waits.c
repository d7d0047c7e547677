/* SPDX-License-Identifier: MIT */
/*
 * waits.c - what poll, ppoll, select, pselect and the epoll waits share
 * (waits.h), where a timer of a backend that emulates them (not kernel
 * timerfds) is waited on, or time is virtual: waits_poll.c,
 * waits_select.c, waits_epoll.c.
 *
 * A timer is never writable: write events asked for on timers are taken
 * out for the time of the wait and put back after.  A wait that may block
 * holds each timer it waits on (the backend's hold): closing the timer's
 * last descriptor in another thread meanwhile does not stop the timer, as
 * Linux keeps the file of a descriptor being waited on.  A handler may
 * jump out of the system call such a wait blocks in, or a cancellation
 * end the thread there: the engine, told where it blocks
 * (tfd_engine_waits_block), then undoes the holds itself.  On real time
 * a poll or select whose set holds timers delivers them itself
 * (tfd_waiter_delivers: tfd(7), Delivery); on virtual time the wait
 * moves time (vtime.h).
 */
#include "preload/waits.h"

#include <errno.h>
#include <poll.h>

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

/* ns: the wait's timeout, -1 for none.  A wait that cannot block (a
 * timeout of 0, as a loop that looks between other work makes) holds
 * nothing: no close can come while it waits, and each hold takes the
 * backend's lock, twice per timer on every call. */
void tfd_holds_init(struct holds *s, int64_t ns)
{
	s->n = 0;
	s->on = ns != 0;
}

void tfd_hold_one(struct holds *s, int fd)
{
	int was;

	if (!s->on || !tfd_be->hold || !tfd_emulated)
		return;
	was = tfd_enter();
	if (tfd_be->hold(fd))
		s->n++;
	tfd_leave(was);
}

void tfd_holds_end(struct holds *s)
{
	int was;

	if (!s->n)
		return;
	was = tfd_enter();
	tfd_engine_waits_end();
	tfd_leave(was);
}

/* ---- the waiter delivers (real time) ---- */

void tfd_scan_begin(struct scan *c, int phase, int64_t end)
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

int64_t tfd_held_until(void)
{
	return __atomic_load_n(&held_until, __ATOMIC_RELAXED);
}

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
int tfd_scan_one(struct scan *c, int fd, int seen)
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
		return R(ppoll)(&p, 1, &zero, NULL) == 1 &&
		       (p.revents & POLLIN);
	if (r == 1 && !seen && c->mark) /* told from memory */
		held_to(tfd_real_mono());
	return r == 1;
}

/* The second pass before a wait blocks: fd is due at the earliest
 * deadline, and the wait will be awake then.  (A deadline on another
 * clock than CLOCK_MONOTONIC is converted anew with each look: within a
 * microsecond is the same.) */
void tfd_scan_defer(const struct scan *c, int fd)
{
	int64_t d;

	if (c->next >= 0 && (c->end < 0 || c->next < c->end) &&
	    tfd_be->ready(fd, &d, NULL) == 0 && d >= 0 && d <= c->next + 1000) {
		tfd_be->defer(fd, 1);
		held_to(c->next);
	}
}

void tfd_scan_end(struct scan *c)
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

int64_t tfd_wake_aim(int64_t at)
{
	int64_t now = tfd_real_mono(), est = (at - now) / 1000;

	/* A wait that wakes early and sleeps again is woken the second time
	 * like a thread that has just run: on a busy machine, after the
	 * running one's time slice (1-3 ms late, where 0.1 % of a wait of
	 * under 20 ms is under 20 us late). */
	return est > 20000 ? at - est : at;
}

/* The timeout of a wait until at (-1: none), from now. */
struct timespec *tfd_timeout_to(int64_t at, struct timespec *ts)
{
	int64_t now;

	if (at < 0)
		return NULL;
	now = tfd_real_mono();
	*ts = tfd_ns_to_ts(at > now ? at - now : 0);
	return ts;
}

/* A wait on real time with timers of ours in the set: the thread that
 * waits delivers (tfd(7), Delivery).  It sleeps in the kernel until the
 * earliest deadline of its timers at most, and then reports those that
 * expired itself: one wake-up, its own, where the service thread's post
 * and then the wake-up it causes take two.  The service thread posts
 * only if the timer is still unread DELIVER_GRACE later, for waits we do
 * not see. */
int tfd_waiter_delivers(void *w, const struct dwait *d, int64_t ns)
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
			tfd_scan_begin(&c, SCAN_BLOCK, end);
			k = d->ours(w, &c);
			tfd_scan_end(&c);
		}
		if (k || !ns) {
			ts.tv_sec = ts.tv_nsec = 0; /* the others as they are */
			tp = &ts;
		} else if (c.next >= 0 && (end < 0 || c.next < end)) {
			tfd_slack_fine();
			tp = tfd_timeout_to(tfd_wake_aim(c.next), &ts);
		} else {
			tp = tfd_timeout_to(end, &ts);
		}
		/* A look after one of ours was found due: Linux returns what
		 * is ready, even with a signal pending that the mask lets
		 * through. */
		r = d->call(w, tp, k ? NULL : d->mask);
		e = errno;
		done = r != 0 || (end >= 0 && tfd_real_mono() >= end);
		tfd_scan_begin(&c, done ? SCAN_END : SCAN_LOOK, end);
		c.mark = r >= 0;
		k = d->ours(w, &c);
		if (k && !done) { /* it returns: the others are given back
		                   * (and no more marked: k is the count) */
			c.phase = SCAN_END;
			c.mark = 0;
			d->ours(w, &c);
		}
		tfd_scan_end(&c);
		errno = e;
		if (done || k)
			return r < 0 ? r : r + k;
	}
}

