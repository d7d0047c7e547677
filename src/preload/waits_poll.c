/* SPDX-License-Identifier: MIT */
/*
 * waits_poll.c - poll and ppoll on timers of ours, or on virtual time
 * (waits.h).
 */
#include "preload/waits.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define POLL_WRITE (POLLOUT | POLLWRNORM | POLLWRBAND)

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
		tfd_hold_one(s, fds[i].fd);
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
static void poll_outside(const struct pollfd *fds, nfds_t n)
{
	nfds_t i;

	for (i = 0; i < n; i++)
		if (fds[i].fd >= 0 && (fds[i].events & POLL_READ) &&
		    tfd_wait_outside(fds[i].fd)) {
			tfd_dom_wait_outside();
			return;
		}
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
		    !tfd_scan_one(c, p->fd, p->revents & POLLIN) || !c->mark ||
		    (p->revents & POLLIN))
			continue;
		added += !p->revents;
		p->revents |= POLLIN;
	}
	for (i = 0; !added && c->phase == SCAN_BLOCK && i < w->n; i++)
		if ((w->fds[i].events & POLLIN) && tfd_marked(w->fds[i].fd))
			tfd_scan_defer(c, w->fds[i].fd);
	return added;
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

	return tfd_waiter_delivers(w, &d, ns);
}

/* ns: the wait's limit on the caller's clock; poll_ms: poll's own. */
static int pwait_run(struct pwait *w, int64_t ns, int poll_ms,
                     const struct timespec *ts)
{
	struct unwrite u;
	struct holds s;
	int r, e;

	tfd_holds_init(&s, ns);
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
	tfd_holds_end(&s);
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

