/* SPDX-License-Identifier: MIT */
/*
 * fork.c - what a child inherits: the same timers (SPEC 2, fork).
 *
 * The timers are in the family's memory (family.c), which the child shares
 * with the parent; what the child needs of its own is a record in the
 * family, its holds (its copy of the parent's, for the numbers it
 * inherited), and a service thread, to take over their delivery if the
 * parent lets go of them or dies (daemon(): the parent exits at once).
 * The thread starts in the child's fork handler and, before fork()
 * returns, copies the inherited numbers into a table of its own
 * (tfd_engine_keep_inherited): from then on the program may close or
 * reuse them.  A copy is used only if it is the timer's eventfd (its id,
 * tfd_engine_hold_file): the parent may have closed a number plainly and
 * reused it before fork().
 *
 * The fork handlers make that happen atomically with fork(): the prepare
 * handler takes the lock and makes the child's record, marking it as a
 * holder of every timer the parent has a number for, so that nothing the
 * parent does after fork() returns can free a timer the child holds.  The
 * parent's handler undoes that if fork() failed (glibc leaves fork's
 * errno for the parent's handlers; ours set it to 0 before) and lets go
 * of the lock.  The child's handler waits for the lock, claims its record
 * and starts its service thread, waiting only until it has its copies
 * (for which the thread takes no lock).  Inside fork() nothing here
 * allocates or frees, and the thread's code needs no lock of another
 * library's: other libraries may hold their allocators' locks until
 * fork() returns.  A child whose record was undone after all (another
 * library's handler changed errno) registers anew, keeping the timers
 * that still exist; one that finds no record free (PROC_MAX processes of
 * the family hold timers) shares nothing: its inherited numbers are
 * plain eventfds, and its first timer starts a family of its own
 * (family.c, tfd_family_start_anew; tfd(7), NOTES 6).  The handlers are
 * the library's code run on the program's thread: a host that interposes
 * the C library's calls is told (host.h, enter).
 */
#define _GNU_SOURCE
#include "engine/engine.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * A thread started inside fork() must not need a lock that another
 * library keeps until fork() returns.  The thread's own code needs none,
 * but AddressSanitizer's start of a thread allocates, and newer run-times
 * of it (LLVM 17's) lock its allocator around fork(): built with it, the
 * thread starts at the first call instead (tfd(7), FORK).  GCC 12's does
 * not lock it: an allocation of another thread that fork() cuts leaves
 * its lock held in the child for good, so a thread of ours should not be
 * starting or ending on its own when the program forks (clock.c; the
 * service thread's end, GRACE after the last timer, still may).
 */
#ifdef TFD_ASAN
#define START_IN_FORK 0
#else
#define START_IN_FORK 1
#endif

/* The handlers are the library's code on the program's thread. */
static int enter(void)
{
	return tfd_host.enter();
}

static void leave(int was)
{
	tfd_host.leave(was);
}

static int locked;       /* prepare took the lock */
static int pending = -1; /* the record made for the child */
static int forker = -1;  /* ours, when we forked */
static int saved_errno;

/* Mark (or unmark) record c as a holder of every timer we have a number
 * for. */
static void mark_holders(int c, int on)
{
	struct tfd_hold *h;

	TFD_HOLDS_EACH(h) {
		if (!h->nfds)
			continue;
		tfd_engine_uncover(h->t); /* the child's waits are not ours */
		h->mode = MODE_UNKNOWN;   /* nor its fcntl()s */
		if (on)
			h->t->holders |= tfd_proc_bit(c);
		else
			h->t->holders &= ~tfd_proc_bit(c);
	}
}

/* Every timer we have a number for goes to a child that has no record
 * of the family's: its file is read where we do not see it (T_OUTSIDE;
 * kept, should the fork fail after all). */
static void outside(void)
{
	struct tfd_hold *h;

	TFD_HOLDS_EACH(h)
		if (h->nfds) {
			tfd_engine_uncover(h->t);
			h->t->flags |= T_OUTSIDE;
		}
}

/* A file we hold whose eventfd id is not known yet. */
static int ids_missing(void)
{
	struct tfd_hold *h;

	if (tfd_eng.state != RUNNING || !tfd_eng.private_files)
		return 0;
	TFD_HOLDS_EACH(h) {
		if (h->nfds && !h->efd_id && !h->direct && h->file >= 0 &&
		    !h->unchecked)
			return 1;
	}
	return 0;
}

/* The child names its numbers by the eventfds' ids (tfd_engine_hold_file):
 * the service thread reads those it lacks, in its own table, while we wait
 * with the lock dropped (tfd_family_wait; the thread may be waiting for
 * the lock).  Not here: opening the fdinfo in the program's table would
 * take its lowest free number for a moment, while its other threads run
 * (tfd(7), NOTES 15).  Timers made meanwhile are asked for again, a few
 * times; a file still without an id is not taken over by the child, as
 * when the number was reused.  Lock held. */
static void ids_first(void)
{
	int tries;

	for (tries = 0; tries < 4 && ids_missing(); tries++) {
		unsigned ask = ++tfd_eng.ids_asked;

		tfd_engine_poke();
		while (tfd_eng.state == RUNNING &&
		       (int)(tfd_eng.ids_done - ask) < 0)
			tfd_family_wait();
	}
}

static void prepare(void)
{
	int was;

	saved_errno = errno;
	if (!__atomic_load_n(&tfd_fam, __ATOMIC_ACQUIRE))
		return;
	was = enter();
	tfd_family_lock();
	ids_first();
	locked = 1;
	forker = tfd_eng.self;
	pending = -1;
	if (tfd_eng.self >= 0 && tfd_eng.ntimers) {
		pending = tfd_family_new_proc(tfd_eng.self, P_PENDING);
		if (pending >= 0)
			mark_holders(pending, 1);
		else
			outside(); /* the child will share nothing */
	}
	leave(was);
	errno = 0; /* the parent's handler tells failure by it */
}

static void parent(void)
{
	int failed = errno != 0, was;

	if (locked) {
		was = enter();
		if (failed && pending >= 0) {
			mark_holders(pending, 0);
			tfd_family_free_proc(pending);
		}
		pending = -1;
		locked = 0;
		tfd_family_unlock();
		leave(was);
	}
	if (!failed)
		errno = saved_errno;
}

/* A hold dropped inside fork() waits on tfd_eng.freed (with no file to close)
 * for the service thread or the next create to free it. */
static void discard(struct tfd_hold *h)
{
	h->file = -1;
	tfd_engine_free_later(h);
}

/* Forget h here only: the family never counted this process as its holder
 * (or no longer does).  Unlisted, it waits on tfd_eng.freed: a loop over
 * the holds (TFD_HOLDS_EACH) may go on past it. */
static void forget_here(struct tfd_hold *h)
{
	size_t i;

	for (i = 0; i < tfd_eng.nslot; i++)
		if (tfd_eng.slot[i] == h)
			tfd_eng.slot[i] = NULL;
	if (h->nfds)
		tfd_eng.ntimers--;
	h->listed = 0;
	tfd_eng.nholds--;
	tfd_engine_unreserve(tfd_clock_queues(h->t->clockid));
	discard(h);
}

/* Let go of every timer, as if each number had been released: they stay
 * open as plain eventfds.  Letting go may free a hold and its chunk: the
 * first one listed each time. */
static void let_all_go(void)
{
	struct tfd_hold *h;
	size_t i;

	for (i = 0; i < tfd_eng.nslot; i++)
		tfd_eng.slot[i] = NULL;
	tfd_eng.ntimers = 0;
	while ((h = tfd_holds_from(tfd_eng.room, 0, 0))) {
		h->nfds = 0;
		h->file = -1;
		tfd_engine_let_hold_go(h);
	}
}

/* Our record after all: the one made for us, or a new one holding what
 * still exists.  0, or -1 if there is none to be had. */
static int claim(int c)
{
	struct tfd_family *f = tfd_fam;
	struct tfd_hold *h;

	if (c >= 0 && f->proc[c].state == P_PENDING &&
	    f->proc[c].parent == forker) {
		f->proc[c].state = P_LIVE;
		f->proc[c].pid = getpid();
		tfd_eng.self = c;
		return 0;
	}
	c = tfd_family_new_proc(NO_PROC, P_LIVE);
	if (c < 0)
		return -1;
	tfd_eng.self = c;
	TFD_HOLDS_EACH(h) {
		if (h->nfds && (h->t->flags & T_USED) && h->t->gen == h->gen &&
		    h->t->holders)
			h->t->holders |= tfd_proc_bit(c);
		else
			forget_here(h); /* gone meanwhile */
	}
	return 0;
}

/* In the child's new service thread, first thing, while the thread that
 * started it waits in tfd_engine_start_pending (holding the lock, so that
 * nothing here changes): a table of the thread's own with a copy of each
 * inherited timer's lowest number, and nothing else of the program's.
 * The first close_range(2) unshares the table.  1 if the thread has its
 * table. */
int tfd_engine_keep_inherited(void)
{
	size_t i, from = 0;
	int kept;

	if (!__atomic_load_n(&tfd_eng.keeping, __ATOMIC_ACQUIRE))
		return 0;
	if (!tfd_eng.private_files) {
		__atomic_store_n(&tfd_eng.keeping, 0, __ATOMIC_RELEASE);
		tfd_futex_wake(&tfd_eng.keeping, 1);
		return 0;
	}
	for (i = 0; i < tfd_eng.nslot; i++) {
		struct tfd_hold *h = tfd_eng.slot[i];

		if (!h || h->file >= 0)
			continue; /* the program's, or a second number */
		if (i > from && tfd_files_close_range(from, i - 1) != 0)
			break;
		h->file = (int)i;
		h->unchecked = 1;
		from = i + 1;
	}
	kept = i == tfd_eng.nslot && tfd_files_close_range(from, ~0U) == 0;
	if (!kept) {
		/* No table of its own after all (a sandbox forbids
		 * close_range(2)): service() tries again, with no copies. */
		for (i = 0; i < tfd_eng.nslot; i++)
			if (tfd_eng.slot[i]) {
				tfd_eng.slot[i]->file = -1;
				tfd_eng.slot[i]->unchecked = 0;
			}
	}
	__atomic_store_n(&tfd_eng.keeping, 0, __ATOMIC_RELEASE);
	tfd_futex_wake(&tfd_eng.keeping, 1);
	return kept;
}

static void child(void)
{
	struct tfd_hold *h;
	int c = pending, was;

	if (!locked) {
		errno = saved_errno;
		return;
	}
	was = enter();
	locked = 0;
	pending = -1;
	/* prepare's lock is the parent's thread's, which lets go of it. */
	tfd_lock_released(LK_FAMILY);
	/* What was the parent's alone: its thread, its private numbers. */
	tfd_engine_after_fork();
	tfd_clock_frame_forked();
	tfd_engine_queues_forget();
	for (h = tfd_eng.freed; h; h = h->next)
		h->file = -1; /* numbers of the parent's thread's table */
	tfd_eng.transit = NULL; /* the parent's readers */
	tfd_eng.lookers = 0;    /* the parent's too (tfd_engine_quiet) */
	tfd_waits_forget();
	tfd_eng.self = -1;
	tfd_eng.in_fork = 1;
	tfd_family_lock(); /* once the parent's handler let go of it */
	TFD_HOLDS_EACH(h) {
		h->waiters = 0; /* the parent's threads */
		h->file = -1;   /* the parent's; ours as fork() returns */
		h->unchecked = 0;
		if (!h->nfds)
			forget_here(h); /* kept for a parent's waiter */
	}
	if (!tfd_eng.nholds) {
		if (c >= 0) /* made for numbers since forgotten: unused */
			tfd_family_free_proc(c);
	} else if (claim(c) != 0) {
		TFD_HOLDS_EACH(h) { /* PROC_MAX: we share nothing */
			if ((h->t->flags & T_USED) && h->t->gen == h->gen)
				h->t->flags |= T_OUTSIDE;
			forget_here(h);
		}
	} else if (!tfd_eng.virtual) {
		tfd_eng.start_pending = 1;
		if (START_IN_FORK)
			tfd_engine_start_pending();
	}
	tfd_eng.in_fork = 0;
	tfd_family_unlock();
	leave(was);
	errno = saved_errno;
}

/* The service thread of a child that holds inherited timers: started in
 * the fork handler, or where that is not safe, by the first call of the
 * library after fork() (then the copies are of the numbers as they are
 * at that call).  It returns once the thread has its copies.
 *
 * A child forked at RLIMIT_NPROC (or short of memory for a stack) cannot
 * start it.  It keeps its timers anyway, as Linux's child does: the other
 * holders' threads deliver them, and its own blocking reads wait by the
 * clock for those nobody else posts (ops.c, wait_ms); its calls try the
 * thread again, at most every RETRY_NS, until one starts (a task of the
 * user's ended).  It makes no timer of its own meanwhile (tfd_create:
 * EAGAIN; the drop-in's timerfd_create makes the kernel's, fdops.c).
 * Lock held (the thread does not take it before). */
#define RETRY_NS (10 * 1000 * 1000LL)

void tfd_engine_start_pending(void)
{
	int64_t now = tfd_eng.start_tried ? tfd_clock_now(BASE_MONO) : 0;
	int e;

	if (now && now - tfd_eng.start_tried < RETRY_NS)
		return;
	tfd_eng.start_pending = 0;
	__atomic_store_n(&tfd_eng.keeping, 1, __ATOMIC_RELEASE);
	e = tfd_engine_start();
	if (e != 0 || tfd_eng.state != STARTING)
		__atomic_store_n(&tfd_eng.keeping, 0, __ATOMIC_RELEASE);
	while (__atomic_load_n(&tfd_eng.keeping, __ATOMIC_ACQUIRE))
		tfd_futex_wait(&tfd_eng.keeping, 1);
	tfd_eng.start_tried = 0;
	if (e == 0)
		return;
	if (tfd_eng.self >= 0 && tfd_eng.nholds) {
		/* A child with no thread: the others' threads find its end
		 * by its pid (family.c, gone). */
		tfd_fam->proc[tfd_eng.self].threadless = 1;
		tfd_eng.start_pending = 1;
		tfd_eng.start_tried = now ? now : tfd_clock_now(BASE_MONO);
		return;
	}
	let_all_go(); /* nothing to take over with */
	if (tfd_eng.self >= 0 && !tfd_eng.nholds) {
		tfd_family_free_proc(tfd_eng.self);
		tfd_eng.self = -1;
	}
}

static void init_once(void)
{
	tfd_kernel_fork_init(); /* its prepare after ours */
	pthread_atfork(prepare, parent, child);
}

void tfd_engine_fork_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, init_once);
}

/* The handlers are registered as the library loads, before any the
 * program registers in main(): fork() runs prepare handlers in the
 * reverse order, so the program's run before ours takes the family's
 * lock, and may use its timers (registered at the first timer, ours ran
 * first and the program's hung on the lock); the child's run after ours
 * have made the child's timers whole.  They do nothing before the first
 * timer.  Not in a ThreadSanitizer build: registered that early, the
 * family's lock taken in prepare and let go of in the child's handler is
 * held twice for ThreadSanitizer in the child ("double lock of a
 * mutex"); there they are registered at the first timer, as before. */
#ifndef TFD_TSAN
__attribute__((constructor)) static void fork_handlers_at_load(void)
{
	tfd_engine_fork_init();
}
#endif
