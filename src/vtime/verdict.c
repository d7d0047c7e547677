/* SPDX-License-Identifier: MIT */
/*
 * verdict.c - one look at the domain (mover.h): what each slot says (it
 * runs, waits with a deadline, has looked since anything ran), what the
 * processes' timers say, and from that whether time may move, and where
 * to.  A wait that is due is woken here; one whose look is stale is
 * poked to look again.
 */
#define _GNU_SOURCE
#include "vtime/mover.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A poke is sent once per round of looks and per jump. */
static uint64_t poke_key(const struct tfd_dom *d)
{
	return __atomic_load_n(&d->round, __ATOMIC_RELAXED) +
	       (__atomic_load_n(&d->jumps, __ATOMIC_RELAXED) << 32);
}

static void wake_slot(struct tfd_dom *d, struct dom_slot *s)
{
	uint64_t round = poke_key(d);

	if (__atomic_load_n(&s->poked, __ATOMIC_RELAXED) != round) {
		__atomic_store_n(&s->poked, round, __ATOMIC_RELAXED);
		syscall(SYS_tgkill, s->pid, s->tid, DOM_POKE_SIG);
	}
}

/* Poke again a slot poked in an earlier round (its signal may have come
 * while it was not waiting for it); with repoke 0, once a round. */
static void poke_slot(struct tfd_dom *d, struct dom_slot *s, int repoke)
{
	if (repoke)
		__atomic_store_n(&s->poked, 0, __ATOMIC_RELAXED);
	wake_slot(d, s);
}

/* Something is due or being looked at: a change, or a moment. */
static void soon(struct eval *e)
{
	if (e->v == V_MOVE)
		e->v = V_SOON;
}

/* The slot's process, or for a child not forked yet its parent's. */
static int32_t slot_proc(const struct dom_slot *s)
{
	int32_t pid = __atomic_load_n(&s->pid, __ATOMIC_RELAXED);

	return pid > 0 ? pid : __atomic_load_n(&s->parent, __ATOMIC_RELAXED);
}

/* A look is valid if nothing ran since it began (act): with no other
 * thread running then (quiet), or in a round of looks begun when the only
 * threads running were blocked outside our waits, none of which has run
 * since (the round's act, and outside_still() before a move). */
static int look_valid(const struct mover *m, const struct dom_slot *s)
{
	uint64_t look;

	if (s->kind == DK_SLEEP)
		return 1;
	if (!__atomic_load_n(&s->looked, __ATOMIC_ACQUIRE))
		return 0;
	look = __atomic_load_n(&s->look, __ATOMIC_RELAXED);
	if (look != m->e.act)
		return 0;
	return __atomic_load_n(&s->quiet, __ATOMIC_RELAXED) ||
	       (__atomic_load_n(&s->look_round, __ATOMIC_RELAXED) ==
	                __atomic_load_n(&m->d->round, __ATOMIC_RELAXED) &&
	        look == m->round_act);
}

/*
 * Timer slack.  Linux lets a sleep, a poll's or a futex's timeout end up
 * to the thread's timer slack (50 us by default) after its deadline, so
 * that timers close together fire at one wake-up; a timer's expiry
 * (timerfd, POSIX timers, itimers) has none.  A jump does the same: it
 * goes to the latest deadline of a wait that is no later than the
 * earliest one plus the domain's slack, and never past a timer's
 * expiry; the waits due by then are woken together (each at most the
 * slack late, never early), and run in the order the scheduler gives
 * them, as on Linux.  A wait alone, or the latest of those woken
 * together, ends at its deadline exactly, and which waits go together
 * depends only on their deadlines: the same on every run.  A slack of 0
 * (tfd exec --virtual-slack 0) moves to each deadline in turn.  (Fifty
 * threads of Python's test_queue in waits of 10 us took a move each.)
 * While time flows for a wait on the outside it stops at the earliest
 * deadline (e->first), as there is nothing to gain.
 */
static int64_t slack_to(const struct tfd_dom *d, const struct eval *e)
{
	int64_t slack = __atomic_load_n(&d->slack_ns, __ATOMIC_RELAXED);
	int64_t wait = e->best, timer = e->timer, to;
	int64_t limit = wait == DOM_NEVER ? DOM_NEVER : wait + slack;
	int i;

	if (timer < limit)
		limit = timer;
	to = wait < timer ? wait : timer;
	for (i = 0; i < e->ndl; i++)
		if (e->dl[i] <= limit && e->dl[i] > to)
			to = e->dl[i];
	return to;
}

/* A thread on its way out (inlib says so): it runs until it is gone, or
 * a zombie its parent may reap (the process's end), or a zombie at all
 * (a first thread ending alone). */
static void slot_leaving(struct mover *m, struct dom_slot *s, uint32_t in)
{
	struct seen t = tfd_dom_look_thread(m, s->pid, s->tid);

	if ((!t.state && syscall(SYS_tgkill, s->pid, s->tid, 0) < 0 &&
	     errno == ESRCH) ||
	    ((t.state == 'Z' || t.state == 'X') &&
	     (t.threads <= 1 || !(in & DOM_LEAVING)))) {
		tfd_dom_reclaim(m, s);
		tfd_dom_changed(m->d);
		tfd_dom_grace(m);
	} else {
		m->e.exiting = 1;
	}
}

/* A slot in one of our waits with deadline dl, due (now or before).  0
 * if it is one to count with the threads outside our waits. */
static int slot_due(struct mover *m, struct dom_slot *s)
{
	if (s->kind == DK_SLICE &&
	    __atomic_load_n(&s->slice_ended, __ATOMIC_ACQUIRE)) {
		/* Poked at its deadline, its slice ended: it is on its way
		 * out of the C library's wait (running: it tells us as it
		 * leaves), or blocked there for the program's mutex, which a
		 * thread that waits holds: time goes on without it, as on
		 * Linux. */
		if (tfd_dom_look_slot(m, s).state != 'R')
			return 0;
	} else {
		/* About to run; the last poke may have come too early. */
		poke_slot(m->d, s, m->repoke);
	}
	soon(&m->e);
	return 1;
}

/* Slot i, in one of our waits. */
static void slot_waiting(struct mover *m, struct dom_slot *s, uint32_t i)
{
	struct eval *e = &m->e;
	int64_t dl = __atomic_load_n(&s->deadline, __ATOMIC_RELAXED);

	e->timed |= dl != DOM_NEVER;
	e->outside |= __atomic_load_n(&s->outside, __ATOMIC_RELAXED) != 0;
	if (m->repoke && (dl <= e->now || !look_valid(m, s)) &&
	    syscall(SYS_tgkill, s->pid, s->tid, 0) < 0 && errno == ESRCH) {
		/* It does not answer: it ended in its wait (a thread
		 * cancelled there; a process's end is the sweep's). */
		tfd_dom_reclaim(m, s);
		tfd_dom_changed(m->d);
		return;
	}
	if (dl <= e->now) {
		if (!slot_due(m, s))
			e->out[e->nout++] = (int)i;
		return;
	}
	if (s->kind == DK_SLICE &&
	    __atomic_load_n(&s->looked, __ATOMIC_ACQUIRE)) {
		/* In the C library's wait, which only a thread that ran
		 * could end (its deadline is fixed), or that another's
		 * release of the program's mutex made runnable without
		 * anything of ours running: /proc tells whether it still
		 * blocks, as for the threads blocked outside our waits
		 * (waits.c). */
		e->out[e->nout++] = (int)i;
	} else if (!look_valid(m, s)) {
		e->invalid = 1;
		if (m->verified && s->kind == DK_KERNEL &&
		    __atomic_load_n(&s->looked, __ATOMIC_ACQUIRE))
			poke_slot(m->d, s, m->repoke);
	}
	if (dl < e->best)
		e->best = dl;
	if (dl != DOM_NEVER)
		e->dl[e->ndl++] = dl;
}

/* A wait's look not done yet, which may be in the library (a poll of a
 * timer): as a look elsewhere, it is one to wait for (slot_waiting), not
 * a thread that runs.  Taken for one that runs, it began a new round of
 * looks, in which every wait is poked to look again: under
 * ThreadSanitizer, whose looks are slow, the mover caught one in the
 * library at each round, and the rounds and the looks chased each other
 * (250 pokes and looks in 150 ms where 20 do; host case
 * far_timers_wait_quietly).  No look relied on being caught: a look the
 * mover does not see in the library (most of them, quick) goes so too.
 * A thread on its way out stays one that runs (but leaving_waits()). */
static int in_look(const struct dom_slot *s)
{
	return __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == DS_WAIT &&
	       s->kind == DK_KERNEL &&
	       !__atomic_load_n(&s->looked, __ATOMIC_ACQUIRE);
}

/* A thread on its way out (exit() has begun: DOM_LEAVING; a first thread
 * in pthread_exit(): DOM_ALONE) runs, but not while it waits in one of
 * ours or is parked, outside the library: a library's destructor, which
 * the C library calls after the preload's, or a cleanup handler, that
 * joins a thread asleep on the domain's clock (time must move for that
 * one to wake; realprog vctor). */
static int leaving_waits(const struct dom_slot *s, uint32_t in)
{
	return in && !(in & ~(DOM_LEAVING | DOM_ALONE)) &&
	       (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == DS_WAIT ||
	        __atomic_load_n(&s->park, __ATOMIC_ACQUIRE) != 0);
}

static void eval_slot(struct mover *m, uint32_t i)
{
	struct dom_slot *s = &m->d->slot[i];
	int32_t tid = __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE);
	uint32_t in;

	if (tid == 0 || tfd_dom_is_stopped(m, slot_proc(s)))
		return; /* free, or stopped: it holds no time */
	if (tid < 0) { /* a thread or child on its way */
		if (tid == -1)
			tfd_dom_starting_gone(m, s);
		m->e.v = V_BUSY;
		return;
	}
	in = __atomic_load_n(&s->inlib, __ATOMIC_ACQUIRE);
	if (in & (DOM_LEAVING | DOM_ALONE))
		slot_leaving(m, s, in);
	if (leaving_waits(s, in))
		in = 0;
	if (in && ((in & (DOM_LEAVING | DOM_ALONE)) || !in_look(s))) {
		/* In the library, maybe waiting for a lock of ours: it runs
		 * (a wait in there has looked, and is about to block
		 * again; one whose look is under way is waited for). */
		m->e.v = V_BUSY;
		return;
	}
	if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != DS_WAIT)
		m->e.out[m->e.nout++] = (int)i;
	else
		slot_waiting(m, s, i);
}

/* Wake the threads of pid in our waits (but in slices), which deliver
 * its timers in its own descriptor table: 1 if there was one. */
static int wake_deliverers(struct tfd_dom *d, int32_t pid)
{
	int found = 0;
	uint32_t k;

	for (k = 0; k < d->hiwater; k++) {
		struct dom_slot *s = &d->slot[k];

		if (s->pid == pid && s->tid > 0 &&
		    __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == DS_WAIT &&
		    s->kind != DK_SLICE) {
			wake_slot(d, s);
			found = 1;
		}
	}
	return found;
}

/* Record p's timers: the earliest ahead is a deadline; those due are
 * delivered by a thread of it in one of our waits, else by its agent;
 * with neither, when looked at. */
static void eval_proc(struct mover *m, struct dom_proc *p)
{
	struct eval *e = &m->e;
	int32_t pid = __atomic_load_n(&p->pid, __ATOMIC_ACQUIRE);
	int64_t due = __atomic_load_n(&p->next_due, __ATOMIC_RELAXED);
	int found;

	if (pid <= 0 || tfd_dom_is_stopped(m, pid))
		return;
	e->timed |= due != DOM_NEVER;
	if (due > e->now) {
		if (due < e->timer)
			e->timer = due;
		return;
	}
	found = wake_deliverers(m->d, pid);
	if (!found && tfd_dom_rec_dead(m, (size_t)(p - m->d->proc), pid)) {
		/* Its agent, gone with it, would be woken for ever. */
		tfd_dom_proc_forget(p, pid);
		return;
	}
	if (!found && __atomic_load_n(&p->agent, __ATOMIC_RELAXED)) {
		__atomic_add_fetch(&p->wake, 1, __ATOMIC_SEQ_CST);
		tfd_futex_wake(&p->wake, INT_MAX);
		found = 1;
	}
	if (found)
		soon(e);
}

/* One look at every slot and process: m->e, its verdict in m->e.v. */
void tfd_dom_evaluate(struct mover *m)
{
	struct tfd_dom *d = m->d;
	struct eval *e = &m->e;
	uint64_t ar = __atomic_load_n(&d->actrun, __ATOMIC_SEQ_CST);
	uint32_t i, hi = __atomic_load_n(&d->hiwater, __ATOMIC_ACQUIRE);

	e->v = V_MOVE;
	e->act = ar >> ACT_SHIFT;
	e->now = tfd_dom_now(d, DC_MONO);
	e->best = e->timer = DOM_NEVER;
	e->invalid = e->nout = e->ndl = 0;
	e->exiting = e->timed = e->outside = 0;
	for (i = 0; i < hi; i++)
		eval_slot(m, i);
	hi = __atomic_load_n(&d->phiwater, __ATOMIC_ACQUIRE);
	for (i = 0; i < hi; i++)
		eval_proc(m, &d->proc[i]);
	e->first = e->best < e->timer ? e->best : e->timer;
	e->to = slack_to(d, e);
	if (e->v == V_MOVE && e->invalid)
		e->v = V_SOON;
	else if (e->v == V_MOVE && e->to == DOM_NEVER)
		e->v = V_IDLE;
}
