/* SPDX-License-Identifier: MIT */
/*
 * busy.c - the threads outside our waits (mover.h): time moves only when
 * each is blocked and none has run since it was seen so, and flows at
 * the real rate while one runs busy.
 *
 * Busy threads.  Time stands while a thread runs, which is what makes
 * virtual time exact; but an interpreter that preempts its running thread
 * from another one with a timed wait (CPython's GIL: a 5 ms
 * pthread_cond_timedwait, then a request to drop it), or a test that
 * interrupts a busy loop with alarm(), waits for time that never comes
 * while the busy thread runs: the busy thread is never preempted.  The
 * rule: a thread outside our waits that has used more than a quantum of
 * CPU time without blocking (no voluntary context switch) while something
 * in the tree waits on a deadline, lets time flow at the real rate, until
 * it blocks or waits (then time stands again where it has come, and jumps
 * as before).  CPU time, not the time it was seen runnable: on a loaded
 * machine a thread waiting for a CPU has not run.
 */
#define _GNU_SOURCE
#include "sanitizer.h"
#include "vtime/mover.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef TFD_SANITIZED
/* Built with a sanitizer, the preload brings its run-time into every
 * program of the tree, whose start-up alone then takes 15-30 ms of CPU
 * with no wait: a quantum shorter than that lets time flow while a child
 * starts and its parent waits on a deadline. */
#define QUANTUM_NS 100000000 /* 100 ms */
#else
#define QUANTUM_NS 20000000 /* 20 ms */
#endif

/* Thread k (of slot k), seen running (t): 1 if it has used more than a
 * quantum of CPU since it last blocked. */
static int busy_thread(struct mover *m, int k, const struct dom_slot *s,
                       const struct seen *t)
{
	int64_t cpu = t->cpu > 0 ? t->cpu
	                         : tfd_dom_thread_cpu(s->pid, s->tid);
	long vol = tfd_dom_slot_blocked_count(m, s);

	if (cpu < 0 || vol < 0)
		return 0;
	if (m->mark[k].tid != s->tid || m->mark[k].vol != vol) {
		m->mark[k].tid = s->tid;
		m->mark[k].vol = vol;
		m->mark[k].cpu = cpu;
		return 0;
	}
	return cpu - m->mark[k].cpu > QUANTUM_NS;
}

enum out_is {
	O_ENDING, /* on its way out: time holds */
	O_ENDED,  /* gone: its slot freed, look again in a moment */
	O_SEEN,   /* its state and runs count in t */
};

/* Slot s's thread, outside our waits, as /proc shows it (t). */
static enum out_is outside_look(struct mover *m, struct dom_slot *s,
                                struct seen t, int known[2])
{
	if (t.state == 'Z' && t.threads > 1)
		return O_ENDING; /* a process's first thread has ended,
		                  * others are on their way: its parent is
		                  * told when the last goes */
	if (!t.state && !(syscall(SYS_tgkill, s->pid, s->tid, 0) < 0 &&
	                  errno == ESRCH))
		return O_ENDING; /* unreadable, not gone: a thread that the
		                  * scheduler has not let finish yet */
	/* A thread seen S lives, and so does its process (which ends its
	 * threads first; one gone reads as nothing): no more to ask, at
	 * each look of a thread blocked for good (six system calls). */
	if (!t.state || t.state == 'Z' || t.state == 'X' ||
	    (t.state != 'R' && t.state != 'S' &&
	     tfd_dom_slot_dead(s, known))) {
		/* Its end wakes its parent (waitpid), which reaps it
		 * showing S. */
		tfd_dom_reclaim(m, s);
		tfd_dom_changed(m->d);
		tfd_dom_grace(m);
		return O_ENDED;
	}
	return O_SEEN;
}

/* 1 if what slot s's thread is parked on may have been woken since
 * from: its object's bucket; for a join, the thread joined has ended
 * (the mover frees its slot once /proc shows it gone; a slot taken anew
 * has another generation). */
static int woken_since(const struct tfd_dom *d, const struct dom_slot *s,
                       uint32_t what, uint64_t from)
{
	uint32_t k = what & ~DOM_PARK_JOIN;

	if (!(what & DOM_PARK_JOIN))
		return __atomic_load_n(&d->woken[k], __ATOMIC_SEQ_CST) > from;
	return k >= DOM_SLOTS ||
	       __atomic_load_n(&d->slot[k].tid, __ATOMIC_SEQ_CST) == 0 ||
	       __atomic_load_n(&d->slot[k].gen, __ATOMIC_SEQ_CST) !=
	               __atomic_load_n(&s->park_gen, __ATOMIC_SEQ_CST);
}

/*
 * Parked (vtime.h: tfd_dom_park): a thread in a wait of the C library's
 * that only a wake the tree makes can end.  Its park word keeps the
 * count of wakes when it parked: a wake of what it waits on made since
 * (woken_since(), or a wake of anything), even one told late, leaves it
 * to /proc until it parks anew.  The mover sees it blocked there once
 * (/proc, as for any thread outside our waits: the word's verified bit),
 * and once more after each signal to it or its process, whose handler
 * runs unparked (sig_seen: the count of signals it was last seen blocked
 * after).  1 if slot s's thread is blocked so, w the wakes count read
 * before.
 */
static int parked(struct mover *m, struct dom_slot *s, uint64_t w)
{
	struct tfd_dom *d = m->d;
	size_t k = (size_t)(s - d->slot);
	uint64_t p = __atomic_load_n(&s->park, __ATOMIC_SEQ_CST), from, sig;
	uint32_t what = (uint32_t)(p >> 1) & DOM_PARK_WHAT;

	if (!p)
		return 0;
	from = (p >> 14) - 1;
	if (from > w || /* parked since w was read */
	    __atomic_load_n(&d->woken[0], __ATOMIC_SEQ_CST) > from ||
	    woken_since(d, s, what, from))
		return 0;
	sig = __atomic_load_n(&d->signalled, __ATOMIC_SEQ_CST);
	if (sig < __atomic_load_n(&s->signalled, __ATOMIC_SEQ_CST))
		sig = __atomic_load_n(&s->signalled, __ATOMIC_SEQ_CST);
	if ((p & 1) && sig <= m->sig_seen[k])
		return 1;
	if (tfd_dom_look_slot_state(m, s).state != 'S' ||
	    !__atomic_compare_exchange_n(&s->park, &p, p | 1, 0,
	                                 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return 0;
	m->sig_seen[k] = sig;
	return 1;
}

/* The threads outside our waits: 1 if all are blocked (their runs counts
 * noted in e->sw), 0 if one runs (e->busy: one runs busy); gone ones are
 * freed.  A thread parked is looked at in /proc once: a Java program's
 * dozens of threads in conditions and semaphores, untouched from one
 * move to the next, cost a move nothing (a look at one that parks anew
 * costs a read: its state). */
int tfd_dom_outside_blocked(struct mover *m)
{
	struct eval *e = &m->e;
	int i, all = tfd_dom_real_mono() >= m->grace_until;
	int known[2] = { 0, 0 };
	uint64_t w = __atomic_load_n(&m->d->wakes, __ATOMIC_SEQ_CST);

	e->busy = 0;
	for (i = 0; i < e->nout; i++) {
		struct dom_slot *s = &m->d->slot[e->out[i]];
		struct seen t;
		enum out_is is;

		if (parked(m, s, w)) {
			e->sw[i] = RUNS_PARKED;
			continue;
		}
		t = tfd_dom_look_slot(m, s);
		is = outside_look(m, s, t, known);
		if (is != O_SEEN) {
			if (is == O_ENDED)
				e->sw[i] = -1;
			all = 0;
			continue;
		}
		e->sw[i] = t.runs;
		/* Running, in a short wait of the kernel's (D), or stopped
		 * by a debugger or a sanitizer's leak check at exit (t):
		 * time holds for it.  Stopped by SIGSTOP (T), it waits for
		 * another process's SIGCONT: time flows for that one, as on
		 * Linux. */
		if (t.state != 'S' && t.state != 'T')
			all = 0;
		if (t.state == 'R' && e->timed &&
		    busy_thread(m, e->out[i], s, &t))
			e->busy = 1;
	}
	return all;
}

/* 1 if the kernel's io_uring threads of a process that made a ring run
 * or wait for I/O: an operation is under way, which ends a wait of the
 * tree (an io_uring_enter(2) for its completion) without any thread we
 * see running meanwhile. */
int tfd_dom_uring_hold(struct mover *m)
{
	struct tfd_dom *d = m->d;
	uint32_t i, hi = __atomic_load_n(&d->phiwater, __ATOMIC_ACQUIRE);

	for (i = 0; i < hi; i++) {
		struct dom_proc *p = &d->proc[i];
		int32_t pid = __atomic_load_n(&p->pid, __ATOMIC_ACQUIRE);

		if (pid > 0 && __atomic_load_n(&p->uring, __ATOMIC_ACQUIRE) &&
		    !tfd_dom_is_stopped(m, pid) && tfd_dom_uring_busy(pid))
			return 1;
	}
	return 0;
}

/* 1 if none of them ran since tfd_dom_outside_blocked() (m->snap): one
 * parked then is parked still, and no wake since was for it. */
int tfd_dom_outside_still(struct mover *m)
{
	const struct eval *e = &m->snap;
	uint64_t w = __atomic_load_n(&m->d->wakes, __ATOMIC_SEQ_CST);
	int i;

	for (i = 0; i < e->nout; i++) {
		struct dom_slot *s = &m->d->slot[e->out[i]];
		struct seen t;

		if (e->sw[i] < 0 ||
		    (e->sw[i] == RUNS_PARKED && parked(m, s, w)))
			continue;
		t = tfd_dom_look_slot(m, s);
		if ((t.state != 'S' && t.state != 'T') ||
		    t.runs != e->sw[i])
			return 0;
	}
	return 1;
}
