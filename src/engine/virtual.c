/* SPDX-License-Identifier: MIT */
/*
 * virtual.c - the virtual clocks (tfd_virtual(3)): they move only when
 * told, and every expiration a move crosses is posted before the move
 * returns, on the caller's thread.  No thread and no descriptor of their
 * own: timers on the virtual clocks post to the user's number.  The
 * clocks are the family's: a forked child reads the same virtual time;
 * each process posts the timers it delivers, when it moves the clocks or
 * arms a timer that is due.
 */
#define _GNU_SOURCE
#include "engine/engine.h"
#include "engine/notify.h"

#include <errno.h>
#include <stddef.h>

/*
 * A timer this process holds and another process of the family delivers:
 * its number here, to post to, or -1 (ours, or none).  On the virtual
 * clocks no thread of the deliverer's watches them: the deliverer posts
 * when it moves them, and when a process that holds the timer finds it
 * due and the deliverer has not posted yet (asleep in a wait of its own,
 * its last look at the timer's file made before another process read it),
 * that process posts it to its own number, the same file.  The count is
 * the model's, in the family's memory: whoever posts first posts it all.
 * Lock held.
 */
int tfd_engine_virtual_foreign(struct tfd_hold *h)
{
	struct tfd_timer *t = h->t;

	if (!tfd_eng.virtual || !h->direct || h->closed ||
	    t->deliverer == tfd_eng.self ||
	    !(t->flags & T_USED) || t->gen != h->gen)
		return -1;
	return tfd_engine_hold_file(h, 0);
}

/* Another process of the family has a record: only then may a timer we
 * hold be delivered by another (a process alone pays nothing for what
 * is above). */
int tfd_engine_virtual_shared(void)
{
	uint64_t me = tfd_eng.self >= 0 ? tfd_proc_bit(tfd_eng.self) : 0;

	return (tfd_fam->inuse & ~me) != 0;
}

/* How many timers we hold that another delivers are due. */
static size_t foreign_due(void)
{
	struct tfd_hold *h;
	size_t n = 0;

	if (!tfd_engine_virtual_shared())
		return 0;
	TFD_HOLDS_EACH(h) {
		struct tfd_timer *t = h->t;

		n += t->m.next && t->m.next <= tfd_eng.vnow[t->base] &&
		     tfd_engine_virtual_foreign(h) >= 0;
	}
	return n;
}

/*
 * Post every timer due on the virtual clocks, which have just moved from
 * before[] to tfd_eng.vnow[]: those we deliver, and those we hold that another
 * delivers (above).  Timers are taken in the order of their first expiry
 * within the step, across the three clocks; each posts once, with every
 * expiration the step crossed.  Lock held.
 */
void tfd_engine_virtual_deliver(const int64_t *before)
{
	size_t foreign;

	/* No service thread here watches the family's other processes:
	 * one that died is found by its pid, and its timers adopted. */
	tfd_family_reap_dead(1);
	tfd_engine_sync(0);
	foreign = foreign_due();
	for (;;) {
		struct tfd_qnode *first = NULL;
		struct tfd_hold *held = NULL, *h;
		struct tfd_timer *t;
		int64_t off = 0;
		int b, fb = 0, file = -1;

		for (b = 0; b < NBASE; b++) {
			const struct tfd_qent *top = tfd_queue_top(&tfd_eng.q[b]);

			if (!top || top->key > tfd_eng.vnow[b])
				continue;
			if (!first || top->key - before[b] < off) {
				first = top->node;
				off = top->key - before[b];
				fb = b;
			}
		}
		for (h = foreign ? tfd_holds_from(tfd_eng.room, 0, 0) : NULL;
		     h; h = tfd_holds_next(h)) {
			int64_t next = h->t->m.next;

			b = h->t->base;
			if (!next || next > tfd_eng.vnow[b] ||
			    ((first || held) && next - before[b] >= off) ||
			    tfd_engine_virtual_foreign(h) < 0)
				continue;
			first = NULL;
			held = h;
			off = next - before[b];
			fb = b;
		}
		if (!first && !held)
			return;
		t = first ? tfd_timer_of(first) : held->t;
		tfd_model_advance(&t->m, tfd_eng.vnow[fb]);
		tfd_engine_requeue(t);
		if (first) {
			tfd_engine_post_locked(t);
			continue;
		}
		if (foreign)
			foreign--; /* not due any more */
		if (t->m.ticks &&
		           (file = tfd_engine_virtual_foreign(held)) >= 0 &&
		           tfd_notify_post(file, t->m.ticks) == 0) {
			t->m.ticks = 0;
			t->flags |= T_SIGNALED;
		}
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

/* Both hooks: the clocks moved by d_*, or (mono_to) forward until
 * CLOCK_MONOTONIC reads *mono_to, all three by as much, with the
 * difference taken under the lock. */
static int move(const int64_t *mono_to, int64_t d_mono, int64_t d_boot,
                int64_t d_real, const int64_t *real_to, int was_set)
{
	int64_t before[NBASE];
	int b, cs;

	tfd_engine_lock(&cs);
	if (!tfd_eng.virtual) {
		tfd_engine_unlock(cs);
		return ENOTSUP;
	}
	for (b = 0; b < NBASE; b++)
		before[b] = tfd_eng.vnow[b];
	if (mono_to) {
		d_mono = *mono_to - tfd_eng.vnow[BASE_MONO];
		d_mono = d_boot = d_real = d_mono > 0 ? d_mono : 0;
	}
	tfd_eng.vnow[BASE_MONO] = clamp_add(tfd_eng.vnow[BASE_MONO], d_mono);
	tfd_eng.vnow[BASE_BOOT] = clamp_add(tfd_eng.vnow[BASE_BOOT], d_boot);
	tfd_eng.vnow[BASE_REAL] = real_to ? clamp_add(*real_to, 0)
	                            : clamp_add(tfd_eng.vnow[BASE_REAL], d_real);
	tfd_engine_virtual_deliver(before);
	/* Linux cancels when the offset between the clocks changed. */
	if (was_set && tfd_eng.vnow[BASE_REAL] - before[BASE_REAL] !=
	                   tfd_eng.vnow[BASE_MONO] - before[BASE_MONO])
		tfd_clock_was_set();
	tfd_engine_unlock(cs);
	return 0;
}

int tfd_engine_virtual_move(int64_t d_mono, int64_t d_boot, int64_t d_real,
                     const int64_t *real_to, int was_set)
{
	return move(NULL, d_mono, d_boot, d_real, real_to, was_set);
}

/*
 * The other hook of a virtual-time domain: the clocks moved forward, each
 * by as much, until CLOCK_MONOTONIC reads mono (not moved if it reads as
 * much or more), and what is due delivered.  The processes of a family
 * share the clocks, and each brings them to the domain's when it syncs:
 * a move by a difference read before the lock was taken adds up when two
 * sync at once (the clocks ran ahead of the domain's, timers expired
 * early); a move to a time does not.  0, or ENOTSUP.
 */
int tfd_engine_virtual_move_to(int64_t mono)
{
	return move(&mono, 0, 0, 0, NULL, 0);
}

int tfd_engine_virtual_now(int clockid, int64_t *ns)
{
	int e = 0, cs;

	tfd_engine_lock(&cs);
	if (!tfd_eng.virtual)
		e = ENOTSUP;
	else
		*ns = tfd_eng.vnow[tfd_clock_base(clockid, 1)];
	tfd_engine_unlock(cs);
	return e;
}

/*
 * The hook of a virtual-time domain (virtual time's src/vtime/step.c):
 * the virtual clocks start at the domain's values instead of the system's,
 * so that every process of a tree starts on one clock; the preload then
 * keeps them in step with virtual_move.  Only while no timer is open (at
 * load), else EBUSY; ENOTSUP when the clocks are not virtual.
 */
int tfd_engine_virtual_start(int64_t mono, int64_t real, int64_t boot)
{
	int e = 0, cs;

	tfd_engine_lock(&cs);
	if (!tfd_eng.virtual)
		e = ENOTSUP;
	else if (tfd_eng.ntimers || tfd_eng.nholds)
		e = EBUSY;
	else {
		tfd_eng.vnow[BASE_MONO] = mono;
		tfd_eng.vnow[BASE_REAL] = real;
		tfd_eng.vnow[BASE_BOOT] = boot;
	}
	tfd_engine_unlock(cs);
	return e;
}

/* Switch between real and virtual clocks: only with no timer open.  The
 * service thread, idle, is stopped first. */
int tfd_engine_virtual_use(int on)
{
	int b, e = 0, cs;

	/* Real clocks with no family yet: as it starts, with nothing mapped
	 * (a process that never makes a timer maps nothing). */
	if (!on && !__atomic_load_n(&tfd_fam, __ATOMIC_ACQUIRE))
		return 0;
	tfd_engine_lock(&cs);
	if (tfd_eng.ntimers || tfd_eng.nholds)
		e = EBUSY;
	else if (on != tfd_eng.virtual) {
		tfd_engine_stop_now();
		/* The virtual clocks start where the system's are now, unless
		 * another process of the family already runs on them. */
		if (!tfd_engine_virtual_shared())
			for (b = 0; b < NBASE; b++)
				tfd_eng.vnow[b] = tfd_clock_real(b);
		tfd_eng.virtual = on;
	}
	tfd_engine_unlock(cs);
	return e;
}

/*
 * The earliest expiry of a timer this process delivers whose file shows
 * no post, absolute on the virtual CLOCK_MONOTONIC (-1: none): the next
 * time anything can change for a wait on our timers (an expiry of a
 * timer posted already only adds to its count).  A timer posted (its
 * file showed a post) is asked of shown(): its file may have been read
 * where we do not see it.  Found in the queues, from their tops: O(log n)
 * for a queue whose earliest is not posted, and as much again for each
 * earlier posted one.  While another process of the family has a record,
 * the timers we hold that it delivers are looked at too, each (in
 * memory: the family's).
 */
struct unread {
	int (*shown)(int fd, int elsewhere, void *arg);
	void *arg;
};

/* t, held here as h under number file, is armed past the clock and its
 * file shows no post.  Its file may be read elsewhere if a process
 * outside the family has it, or a program this one starts may (a second
 * number of ours: not all may be close-on-exec). */
static int unposted_timer(const struct unread *u, const struct tfd_timer *t,
                          const struct tfd_hold *h, int file)
{
	if (!t->m.next || t->m.next <= tfd_eng.vnow[t->base])
		return 0; /* disarmed, or due and not posted yet */
	return !(t->flags & T_SIGNALED) ||
	       (file >= 0 &&
	        !u->shown(file, (t->flags & T_OUTSIDE) || !h || h->nfds > 1,
	                  u->arg));
}

static int unposted(const struct tfd_qent *e, void *arg)
{
	const struct tfd_timer *t = tfd_timer_of(e->node);
	const struct tfd_hold *h = NULL;

	if (t->file >= 0 && (size_t)t->file < tfd_eng.nslot &&
	    tfd_eng.slot[t->file] && tfd_eng.slot[t->file]->t == t)
		h = tfd_eng.slot[t->file];
	/* (a key past the deadline: held back for a wait, not virtual) */
	return e->key == t->m.next && unposted_timer(arg, t, h, t->file);
}

/* The earliest expiry on MONOTONIC of a timer we hold and another
 * process delivers, below best. */
static int64_t foreign_unposted(const struct unread *u, int64_t best)
{
	struct tfd_hold *h;
	int file;

	for (h = tfd_holds_from(tfd_eng.room, 0, 0); h; h = tfd_holds_next(h)) {
		const struct tfd_timer *t = h->t;
		int64_t at;

		if (!t->m.next)
			continue;
		at = tfd_ns_add(t->m.next, tfd_eng.vnow[BASE_MONO] -
		                                   tfd_eng.vnow[t->base]);
		if (at < best && (file = tfd_engine_virtual_foreign(h)) >= 0 &&
		    unposted_timer(u, t, h, file))
			best = at;
	}
	return best;
}

int tfd_engine_virtual_unread(int64_t *at,
                              int (*shown)(int fd, int elsewhere, void *arg),
                              void *arg)
{
	struct unread u = { shown, arg };
	int64_t best = INT64_MAX, off, bound, k;
	int b, cs;

	tfd_engine_lock(&cs);
	if (!tfd_eng.virtual) {
		tfd_engine_unlock(cs);
		return ENOTSUP;
	}
	tfd_engine_sync(0); /* what another process changed: queued here */
	for (b = 0; b < NBASE; b++) {
		/* A key on base b is a time on MONOTONIC plus off. */
		off = tfd_eng.vnow[b] - tfd_eng.vnow[BASE_MONO];
		bound = best == INT64_MAX ? INT64_MAX : tfd_ns_add(best, off);
		k = tfd_queue_least(&tfd_eng.q[b], bound, unposted, &u);
		if (k < bound)
			best = tfd_ns_add(k, -off);
	}
	if (tfd_engine_virtual_shared())
		best = foreign_unposted(&u, best);
	*at = best == INT64_MAX ? -1 : best;
	tfd_engine_unlock(cs);
	return 0;
}
