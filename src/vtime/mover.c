/* SPDX-License-Identifier: MIT */
/*
 * mover.c - the one mover of a virtual-time domain (domain.h).  It runs
 * in `tfd exec`, which stays as the tree's parent, or in a thread of the
 * preload's when a program runs on virtual time without `tfd exec`.
 *
 * The mover sleeps on the domain's futex word while anything runs.  When
 * every thread of the tree is in a wait of ours (or blocked outside them,
 * which /proc tells), it makes sure that each wait which something else
 * than time could end has looked since the last thing that could have
 * ended it (else it pokes it and waits for its look; a wait in slices is
 * asked of /proc instead), then moves the clocks to the earliest
 * deadline of the tree, and wakes what is due.  Each turn of that is
 * one step (mover_step()), which says how long to sleep before the next;
 * its parts are listed in mover.h.
 */
#define _GNU_SOURCE
#include "vtime/mover.h"

#include <string.h>
#include <sys/mman.h>

/* Something runs in our code: it tells us when it is done, but for a
 * process stopped or killed there; looked at after this long. */
#define BUSY_LOOK_NS 100000000 /* 100 ms */
/* Looks, or what is due, to come: their change, or this long. */
#define SOON_NS 2000000 /* 2 ms */
/* The back-offs: from 20 us, doubled up to 5 ms. */
#define BACKOFF_MIN_NS 20000
#define BACKOFF_MAX_NS 5000000
/* Nothing to move to: looked at now and then, for a thread outside our
 * waits that may end, a stopped process continued. */
#define IDLE_LOOK_NS 100000000 /* 100 ms */

/* How long the step sleeps (a back-off, which doubles for the next). */
static int64_t back_off(int64_t *b)
{
	int64_t ns = *b;

	if (*b < BACKOFF_MAX_NS)
		*b *= 2;
	return ns;
}

static uint64_t act_now(const struct tfd_dom *d)
{
	return __atomic_load_n(&d->actrun, __ATOMIC_SEQ_CST) >> ACT_SHIFT;
}

/* The threads outside our waits are the ones seen at the verification. */
static int same_set(const struct eval *e, const struct eval *snap)
{
	return e->nout == snap->nout &&
	       !memcmp(e->out, snap->out, sizeof(e->out[0]) * (size_t)e->nout);
}

/* The same, and they have not run since. */
static int same_outside(const struct eval *e, const struct eval *snap)
{
	return same_set(e, snap) &&
	       !memcmp(e->sw, snap->sw, sizeof(e->sw[0]) * (size_t)e->nout);
}

/* Something runs: it tells us when it stops, but for a thread on its way
 * out: /proc is looked at again (a child that exit()s while its parent
 * sleeps on virtual time: nothing else would ever change), and if the
 * sleep ends with nothing told, a process may have died, or stopped, in
 * our code (the sweep). */
static int64_t step_busy(struct mover *m)
{
	m->verified = 0;
	m->after = AFTER_SWEEP;
	return m->e.exiting ? back_off(&m->backoff) : BUSY_LOOK_NS;
}

/* Every thread blocks or waits.  A round begun, nothing run since, the
 * same threads outside our waits: they were blocked at its beginning,
 * and are looked at once more just before time moves.  Else they are
 * looked at now: 0 if one runs (time flows while one runs busy). */
static int outside_settled(struct mover *m)
{
	struct eval *e = &m->e;

	if (m->verified && e->v != V_IDLE && same_set(e, &m->snap) &&
	    act_now(m->d) == m->round_act) {
		memcpy(e->sw, m->snap.sw, sizeof(e->sw[0]) * (size_t)e->nout);
		return 1;
	}
	if (e->nout && !tfd_dom_outside_blocked(m)) {
		tfd_dom_flow_to(m->d, e->busy, DOM_NEVER);
		m->verified = 0;
		return 0;
	}
	return 1;
}

/* The threads outside our waits are blocked: looks made from now on see
 * all they did.  A new round of looks, from this look. */
static void begin_round(struct mover *m)
{
	memcpy(&m->snap, &m->e, sizeof(m->e));
	m->round_act = act_now(m->d);
	__atomic_add_fetch(&m->d->round, 1, __ATOMIC_SEQ_CST);
	m->verified = 1;
}

/* The verdict is a move: time moves to m->e.to, or with a wait on the
 * outside flows at the real rate up to the earliest deadline and stops
 * there exactly (the waits poked to wait for real; what is due then is
 * woken as after a jump).  How long to sleep. */
static int64_t step_move(struct mover *m, uint32_t gen)
{
	struct tfd_dom *d = m->d;
	struct eval *e = &m->e;
	uint64_t act = act_now(d);
	int64_t from, left;

	/* The kernel's io_uring threads first: one that ends its work
	 * wakes a waiter, which the look at the outside then sees. */
	if (tfd_dom_uring_hold(m))
		return back_off(&m->hold);
	if (e->nout && !tfd_dom_outside_still(m)) {
		m->verified = 0;
		return 0;
	}
	if (act_now(d) != act ||
	    __atomic_load_n(&d->gen, __ATOMIC_SEQ_CST) != gen)
		return 0; /* something happened meanwhile */
	switch (tfd_dom_procs_sweep(m)) {
	case SW_HOLD: /* a process on its way out: its end first */
		return back_off(&m->hold);
	case SW_CHANGED:
		return 0;
	case SW_SETTLED:
		break;
	}
	m->hold = BACKOFF_MIN_NS;
	if (!tfd_dom_deadline_alive(m, e->outside ? e->first : e->to))
		return 0;
	if (e->outside) {
		tfd_dom_flow_to(d, 1, e->first);
		left = tfd_dom_real_left(d, e->first);
		return left < 0 ? 1000000 : left;
	}
	from = tfd_dom_now(d, DC_MONO);
	tfd_dom_set_clocks(d, e->to);
	__atomic_add_fetch(&d->jumps, 1, __ATOMIC_RELAXED);
	if (m->moved)
		m->moved(m->ctx, from, e->to);
	return 0; /* the next look wakes what is due */
}

/* One step: look, and move time or not.  How long to sleep before the
 * next (on the domain's gen, as it was before the step): 0 none, -1
 * until something changes. */
static int64_t mover_step(struct mover *m, uint32_t gen)
{
	struct eval *e = &m->e;

	if (m->nstopped && tfd_dom_continued(m))
		m->verified = 0;
	tfd_dom_evaluate(m);
	m->repoke = 0;
	if (e->v == V_BUSY)
		return step_busy(m);
	if (!outside_settled(m))
		return back_off(&m->backoff);
	/* Time stands, but for a wait on the outside (below). */
	if (!e->outside)
		tfd_dom_flow_to(m->d, 0, DOM_NEVER);
	m->backoff = BACKOFF_MIN_NS;
	if (m->verified &&
	    (!same_outside(e, &m->snap) || act_now(m->d) != m->round_act))
		m->verified = 0;
	if (!m->verified) {
		begin_round(m);
		return 0;
	}
	if (e->v == V_SOON) {
		/* If nothing comes, a poke may have come before its wait
		 * began (poke again), or the wait does not answer (the
		 * processes looked at: is it alive?). */
		m->after = AFTER_REPOKE;
		return SOON_NS;
	}
	if (tfd_dom_relooks_pending(m))
		return SOON_NS;
	if (e->v == V_IDLE) {
		/* A wait on the outside: time flows meanwhile. */
		if (e->outside)
			tfd_dom_flow_to(m->d, 1, DOM_NEVER);
		return e->nout || m->nstopped ? IDLE_LOOK_NS : -1;
	}
	return step_move(m, gen);
}

/* Sleep before the next step; then what the step asked for if nothing
 * ended the sleep. */
static void mover_sleep(struct mover *m, uint32_t gen, int64_t ns)
{
	struct tfd_dom *d = m->d;
	enum after after = m->after;

	m->after = AFTER_NOTHING;
	__atomic_store_n(&d->sleeping, 1, __ATOMIC_SEQ_CST);
	tfd_futex_nap(&d->gen, gen, ns);
	__atomic_store_n(&d->sleeping, 0, __ATOMIC_SEQ_CST);
	if (after == AFTER_NOTHING ||
	    __atomic_load_n(&d->gen, __ATOMIC_SEQ_CST) != gen)
		return;
	tfd_dom_procs_sweep(m);
	m->repoke = after == AFTER_REPOKE;
}

/* The mover's state is mapped, not allocated: in the preload the mover
 * is a thread of the program's, whose allocator is the program's. */
int tfd_dom_move(struct tfd_dom *d, int keep_files, int (*stop)(void *),
                 void (*moved)(void *, int64_t, int64_t), void *ctx)
{
	struct mover *m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
	                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int r;

	if (m == MAP_FAILED)
		return -1;
	m->d = d;
	m->moved = moved;
	m->ctx = ctx;
	m->backoff = m->hold = BACKOFF_MIN_NS;
	m->no_schedstat = -1;
	if (keep_files)
		tfd_dom_keep_files(m);
	for (;;) {
		/* gen before stop(): a change after either wakes the nap. */
		uint32_t gen = __atomic_load_n(&d->gen, __ATOMIC_SEQ_CST);
		int64_t ns;

		if ((r = stop(ctx)))
			break;
		ns = mover_step(m, gen);
		if (ns)
			mover_sleep(m, gen, ns);
	}
	tfd_dom_drop_all_kept(m);
	munmap(m, sizeof(*m));
	return r;
}
