/* SPDX-License-Identifier: MIT */
/*
 * waits_epoll.c - epoll_wait, epoll_pwait and epoll_pwait2 on sets with
 * timers of ours, or on virtual time (waits.h).
 */
#include "preload/waits.h"

#include <errno.h>
#include <limits.h>

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
	int ms = ns < 0                   ? -1
	         : ns > INT_MAX * 1000000LL ? INT_MAX
	                                    : (int)((ns + 999999) / 1000000);

	return R(epoll_pwait)(w->ep, w->ev, w->max, ms, mask);
}

/* Sets found to hold timers and, for input, nothing else: the tree's
 * count of changes (tfd_dom_fds_gen) << 32 | 1 << 31 | the set's number,
 * in a slot by number.  Such a set has nothing to look at until the
 * count moves. */
#define TIMER_SETS 16
static uint64_t timer_set[TIMER_SETS];

/* What a set holds for input: timers of ours, and others. */
struct held {
	int timers, others;
};

static int held_outside(int fd, void *arg)
{
	struct held *h = arg;

	if (tfd_marked(fd)) { /* a timer: ours */
		h->timers++;
		return 0;
	}
	h->others++;
	return tfd_dom_fd_outside(fd);
}

/* An epoll set's descriptors are the kernel's (vtime.h:
 * tfd_dom_epoll_each).  A wait for input on one outside the tree is a
 * wait on the outside (waits_poll.c, poll_outside). */
static void epoll_outside(int ep)
{
	uint64_t seen = (uint64_t)tfd_dom_fds_gen() << 32 | 1u << 31 |
	                (uint32_t)ep; /* (ep <= INT_MAX: a set is never 0) */
	uint64_t *slot = &timer_set[(unsigned)ep % TIMER_SETS];
	struct held h = { 0, 0 };
	int r;

	if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) == seen)
		return;
	r = tfd_dom_epoll_each(ep, held_outside, &h);
	if (r > 0)
		tfd_dom_wait_outside();
	else if (r == 0 && h.timers && !h.others)
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
	tfd_scan_begin(&c, SCAN_LOOK, -1);
	for (i = 0; i < n; i++)
		tfd_be->post(fds[i]);
	tfd_scan_end(&c);
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
	struct timespec ts, *tp = tfd_timeout_to(at, &ts);
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
			return VWAIT_BLOCK; /* none covered: the kernel's */
		if (k || !ns) {
			if (ns != 0)
				tfd_epoll_awake();
			r = w->max <= k ? 0
			                : R(epoll_pwait)(w->ep, w->ev,
			                                 w->max - k, 0, NULL);
			return r < 0 ? r
			             : ewait_merge(w->ev, r, w->max, mine, k);
		}
		if (next >= 0 && (end < 0 || next < end)) {
			tfd_slack_fine();
			r = ewait_until(w, tfd_wake_aim(next), w->mask);
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
		if (end >= 0) {
			ns = end - tfd_real_mono();
			ns = ns > 0 ? ns : 0;
		}
		room = w->max < EWAIT_MINE ? w->max : EWAIT_MINE;
	}
}

/* VWAIT_BLOCK: the caller makes its own call (real time). */
int tfd_wait_epoll(int ep, struct epoll_event *ev, int max, int64_t ns,
                   const sigset_t *mask)
{
	struct ewait w = { ep, ev, max, mask };

	if (!tfd_virt) {
		int64_t held = tfd_held_until();

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
