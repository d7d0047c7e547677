/* SPDX-License-Identifier: MIT */
/*
 * epoll_due.c - which of an epoll set's delivered timers are due, without
 * looking at every timer of the set (tfd(7), Delivery).
 *
 * Each registration that a set's waits deliver (epoll.c: want) is in one
 * place of its set's: a heap by deadline (keyed with the deadline the
 * backend told, on CLOCK_MONOTONIC), the list of those due, the list of
 * those to look at again (armed since, tfd_epoll_set_begin, or newly
 * covered), or the list of those the backend would not cover
 * (looked at by every wait: a timer with two numbers, say).  A wait takes
 * what the heap has due and what the lists hold, and reports from the
 * due list: O(k log n) for k timers due of n, whatever n.
 *
 * A key is never later than its timer's deadline: a settime puts the
 * timer on the list to look at (a read only makes a deadline later), and
 * a deadline told on CLOCK_REALTIME or CLOCK_BOOTTIME (whose key is also
 * on the set's drift list) is looked at again when that clock moves
 * against CLOCK_MONOTONIC (a set of the clock, a step of NTP, a
 * suspend).  What the heap says is only when to look: the backend tells
 * each timer's readiness as it is reported.  While a wait of the
 * kernel's is under way, the set's timers are posted instead (loosen).
 * All under epoll.c's lock.
 */
#include "preload/preload.h"
#include "preload/epoll.h"

#include <stdlib.h>

/* How far an offset may seem to move before the keys are made again:
 * it moves only when a clock is set or stepped, or the machine was
 * suspended (NTP's slewing moves CLOCK_MONOTONIC as much as
 * CLOCK_REALTIME); less the time its three readings took. */
#define OFFSET_SLACK (20 * 1000)

static int64_t now_on(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return tfd_ts_to_ns(&ts);
}

/* CLOCK_REALTIME and CLOCK_BOOTTIME less CLOCK_MONOTONIC, now, read as
 * the engine reads the clocks its deadlines are told on (through
 * clock_gettime, which a program may define); read again (three times
 * at most) if the thread was preempted between the readings. */
static void offsets(int64_t *mono, int64_t *real, int64_t *boot)
{
	int tries = 0;
	int64_t end;

	do {
		*mono = now_on(CLOCK_MONOTONIC);
		*real = now_on(CLOCK_REALTIME) - *mono;
		*boot = now_on(CLOCK_BOOTTIME) - *mono;
		end = now_on(CLOCK_MONOTONIC);
	} while (end - *mono > OFFSET_SLACK / 4 && ++tries < 3);
}

static void swap_at(struct set *s, unsigned i, unsigned j)
{
	struct reg *a = s->heap[i];

	s->heap[i] = s->heap[j];
	s->heap[j] = a;
	s->heap[i]->hix = i;
	s->heap[j]->hix = j;
}

static void heap_up(struct set *s, unsigned i)
{
	while (i && s->heap[(i - 1) / 2]->key > s->heap[i]->key) {
		swap_at(s, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_down(struct set *s, unsigned i)
{
	for (;;) {
		unsigned l = 2 * i + 1, m = i;

		if (l < s->nheap && s->heap[l]->key < s->heap[m]->key)
			m = l;
		if (l + 1 < s->nheap && s->heap[l + 1]->key < s->heap[m]->key)
			m = l + 1;
		if (m == i)
			return;
		swap_at(s, i, m);
		i = m;
	}
}

/* Lists link a registration through lnext[k] and lprev[k]: k 1 for the
 * drift list, 0 for the others. */
static void list_add(struct rlist *l, int k, struct reg *r)
{
	r->lnext[k] = NULL;
	if ((r->lprev[k] = l->last))
		l->last->lnext[k] = r;
	else
		l->first = r;
	l->last = r;
	l->n++;
}

static void list_del(struct rlist *l, int k, struct reg *r)
{
	struct reg *p = r->lprev[k], *n = r->lnext[k];

	*(p ? &p->lnext[k] : &l->first) = n;
	*(n ? &n->lprev[k] : &l->last) = p;
	l->n--;
}

void tfd_eset_unplace(struct set *s, struct reg *r)
{
	if (r->where == W_HEAP) {
		unsigned i = r->hix;

		if (i != --s->nheap) {
			swap_at(s, i, s->nheap);
			heap_down(s, i);
			heap_up(s, i);
		}
		if (r->drifts)
			list_del(&s->drift, 1, r);
	} else if (r->where != W_NONE) {
		list_del(&s->list[r->where], 0, r);
	}
	r->where = W_NONE;
}

/* r on the end of list w of its set s (not W_HEAP, W_NONE). */
static void put(struct set *s, struct reg *r, int w)
{
	tfd_eset_unplace(s, r);
	list_add(&s->list[w], 0, r);
	r->where = (unsigned char)w;
}

/* r in the heap, at deadline key (room was made with ndeliv), told on
 * another clock if drifts. */
static void put_heap(struct set *s, struct reg *r, int64_t key, int drifts)
{
	tfd_eset_unplace(s, r);
	r->key = key;
	r->hix = s->nheap;
	s->heap[s->nheap++] = r;
	r->where = W_HEAP;
	r->drifts = (unsigned char)drifts;
	if (drifts && !s->drift.n) { /* the offsets it was told with */
		int64_t mono;

		offsets(&mono, &s->off_real, &s->off_boot);
	}
	if (drifts)
		list_add(&s->drift, 1, r);
	heap_up(s, r->hix);
}

void tfd_eset_look(struct set *s, struct reg *r)
{
	if (r->want && r->where != W_LOOK)
		put(s, r, W_LOOK);
}

int tfd_eset_room(struct set *s)
{
	unsigned cap = s->cap ? 2 * s->cap : 64;
	struct reg **a;

	if (!s->ndeliv) {
		free(s->heap);
		s->heap = NULL;
		s->cap = s->nheap = 0;
		return 0;
	}
	if (s->ndeliv <= s->cap)
		return 0;
	if (!(a = realloc(s->heap, cap * sizeof(*a))))
		return -1;
	s->heap = a;
	s->cap = cap;
	return 0;
}

/* Where r belongs now, as the backend tells (its lock held too): due,
 * in the heap at its deadline (not before after, if the backend reads a
 * time later than the caller's now), nowhere (not armed, or posted: the
 * kernel reports it until it is read, which puts it back to look at), or,
 * if the backend would not cover it, with the loose.  1 if due. */
static int place(struct set *s, struct reg *r, int64_t after)
{
	int64_t d;
	int drifts = 0;

	if (!tfd_be->cover(r->fd, 1)) {
		put(s, r, W_LOOSE);
		return 0;
	}
	switch (tfd_be->ready(r->fd, &d, &drifts)) {
	case 1:
		if (r->where != W_DUE)
			put(s, r, W_DUE);
		return 1;
	case 0:
	case 2:
		if (d >= 0)
			put_heap(s, r, d > after ? d : after + 1, drifts);
		else
			tfd_eset_unplace(s, r);
		return 0;
	default:
		put(s, r, W_LOOSE);
		return 0;
	}
}

static int moved(int64_t was, int64_t now)
{
	return now - was > OFFSET_SLACK || was - now > OFFSET_SLACK;
}

/* The places of set s brought up to date, at CLOCK_MONOTONIC now: each
 * timer to look at placed, the loose looked at again, the heap's due
 * ones taken out (and those keyed on another clock, if it moved against
 * CLOCK_MONOTONIC). */
static void places(struct set *s, int64_t now)
{
	int64_t real, boot;
	unsigned n;

	if (s->drift.n) {
		offsets(&now, &real, &boot);
		if (moved(s->off_real, real) || moved(s->off_boot, boot)) {
			while (s->drift.first)
				put(s, s->drift.first, W_LOOK);
			s->off_real = real;
			s->off_boot = boot;
		}
	}
	for (n = s->list[W_LOOSE].n; n--;)
		put(s, s->list[W_LOOSE].first, W_LOOK);
	while (s->list[W_LOOK].first)
		place(s, s->list[W_LOOK].first, now);
	for (n = s->nheap; n-- && s->nheap && s->heap[0]->key <= now;)
		place(s, s->heap[0], now);
}

/* While a wait of the kernel's is under way on s (or, for a set numbered
 * EP_BITS or above, on one whose number has the same remainder: epoll.c),
 * which sees only what is posted: s's timers are not covered, and
 * posted.  With the loose from then on: the next wait that looks covers
 * them again. */
static void loosen(struct set *s)
{
	struct reg *r;

	for (;;) {
		if (s->nheap)
			r = s->heap[0];
		else if (!(r = s->list[W_DUE].first) &&
		         !(r = s->list[W_LOOK].first))
			return;
		tfd_be->cover(r->fd, 0);
		put(s, r, W_LOOSE);
	}
}

int tfd_eset_due(struct set *s, struct epoll_event *ev, int room,
                 int64_t *next, int raw)
{
	int64_t now = tfd_real_mono();
	struct reg *r;
	unsigned len;
	int n = 0;

	if (raw) {
		loosen(s);
		*next = -1;
		return 0;
	}
	places(s, now);
	for (len = s->list[W_DUE].n; len && n < room; len--) {
		r = s->list[W_DUE].first;
		if (place(s, r, now)) { /* (due still: a read the library
		                         * did not see has not taken it) */
			ev[n].events = EPOLLIN;
			ev[n++].data = r->ev.data;
			put(s, r, W_DUE); /* to the end */
		}
	}
	*next = len ? 0 : s->nheap ? s->heap[0]->key : -1;
	return n;
}
