/* SPDX-License-Identifier: MIT */
/*
 * waits_select.c - select and pselect on timers of ours, or on virtual
 * time (waits.h).
 */
#include "preload/waits.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
			tfd_hold_one(s, fd);
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
 * set in the read set (waits_poll.c: pwait_ours); how many were not. */
static int swait_ours(void *ctx, struct scan *c)
{
	struct swait *w = ctx;
	int h = __atomic_load_n(&tfd_hiwater, __ATOMIC_RELAXED), added = 0, fd;
	fd_set *rd = (fd_set *)(void *)w->saved[0];

	for (fd = 0; fd < w->nfds && fd < h; fd++) {
		if (!tfd_marked(fd) || !set_has(rd, fd) ||
		    !tfd_scan_one(c, fd, set_has(w->set[0], fd)) || !c->mark ||
		    set_has(w->set[0], fd))
			continue;
		set_add(w->set[0], fd);
		added++;
	}
	for (fd = 0; !added && c->phase == SCAN_BLOCK && fd < w->nfds && fd < h;
	     fd++)
		if (tfd_marked(fd) && set_has(rd, fd))
			tfd_scan_defer(c, fd);
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
 * delivers (tfd_waiter_delivers). */
static int swait_deliver(struct swait *w, int64_t ns)
{
	const struct dwait d = { swait_clear, swait_ours, swait_call,
		                 w->mask };

	return tfd_waiter_delivers(w, &d, ns);
}

/* Virtual time: 0 or a result when time moved; VWAIT_BLOCK with the sets
 * as given when the caller must wait for real. */
static int swait_virtual(struct swait *w, int64_t ns)
{
	int i;
	int r;

	for (i = 0; tfd_dom && ns != 0 && w->set[0] && i < w->nfds; i++)
		if (set_has(w->set[0], i) && tfd_wait_outside(i)) {
			tfd_dom_wait_outside(); /* (waits_poll.c) */
			break;
		}
	r = tfd_dom_wait(ns, w->mask, swait_look, swait_block, w);
	if (r == VWAIT_BLOCK)
		for (i = 0; i < 3; i++)
			if (w->set[i])
				memcpy(w->set[i], w->saved[i],
				       set_bytes(w->nfds));
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

	tfd_holds_init(&s, ns);
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
	tfd_holds_end(&s);
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

