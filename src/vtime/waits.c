/* SPDX-License-Identifier: MIT */
/*
 * waits.c - the waits of a virtual-time domain, in three ways of blocking:
 * a sleep (only time ends it), a wait in the kernel on something else as
 * well (descriptors, signals: poked to look again), a wait in real
 * slices (a condition, a lock: poked to end its slice at its deadline,
 * and looked at in /proc meanwhile); and on them the program's sleeps and
 * blocking reads of a timer.
 *
 * A wait registers its thread (WAIT, with its deadline and kind) before
 * it looks at what it waits for, and blocks only if the look found
 * nothing.  Whatever the mover sees, then, is true of the thread: WAIT
 * and looked means "nothing it waits for was ready at a moment the mover
 * can place".  The thread is RUN again as soon as it leaves the wait.
 */
#define _GNU_SOURCE
#include "backend.h"
#include "core/time.h"
#include "host.h"
#include "tfd.h"
#include "vtime/domain.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The system's CLOCK_MONOTONIC, in ns (the C library's: the program's
 * reads it virtual). */
static int64_t real_mono(void)
{
	struct timespec ts;

	tfd_dom_host.clock_gettime(CLOCK_MONOTONIC, &ts);
	return tfd_ts_to_ns(&ts);
}

static void begin_look(struct dom_slot *s)
{
	uint64_t round = __atomic_load_n(&tfd_dom->round, __ATOMIC_SEQ_CST);
	uint64_t ar = __atomic_load_n(&tfd_dom->actrun, __ATOMIC_SEQ_CST);

	__atomic_store_n(&s->looked, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->look_round, round, __ATOMIC_RELAXED);
	__atomic_store_n(&s->look, ar >> ACT_SHIFT, __ATOMIC_RELAXED);
	__atomic_store_n(&s->quiet, NRUN(ar) == 0, __ATOMIC_RELEASE);
}

/* The look is done; the mover is told unless quiet (it knew already). */
static void end_look(struct dom_slot *s, int quiet)
{
	__atomic_store_n(&s->looked, 1, __ATOMIC_RELEASE);
	if (!quiet)
		tfd_dom_changed(tfd_dom);
}

/* A look found nothing: 1 if the deadline has come (the wait ends), else
 * the mover is told, with this process's next deadline. */
static int looked_nothing_q(struct dom_slot *s, int64_t deadline, int quiet)
{
	if (tfd_dom_now(tfd_dom, DC_MONO) >= deadline)
		return 1;
	if (s) {
		if (!quiet)
			tfd_dom_publish();
		end_look(s, quiet);
	}
	return 0;
}

static int looked_nothing(struct dom_slot *s, int64_t deadline)
{
	return looked_nothing_q(s, deadline, 0);
}

/*
 * A wait whose deadline has been reached lets time pass it.  Time stands
 * still while a thread runs, so a loop "left = end - now; if (now > end)
 * give up; wait(left)" (Python's subprocess, concurrent.futures) finds
 * now == end after its wait timed out, waits 0, and would spin at that
 * instant for ever.  The rule: a timed wait that ends at its deadline
 * with nothing found notes the instant; a later timed wait of the same
 * thread whose deadline is reached while the clock still reads that
 * instant waits for the smallest step past it, 1 ns, which time makes
 * when every thread waits, as for any deadline.  The first wait of zero
 * at an instant returns at once, as on Linux; only a thread that already
 * timed out there waits (an event loop polling with a zero timeout pays
 * a move of the mover's for each such poll).  Exact and repeatable: the
 * loop gives up 1 ns past its end (or at a deadline within the timer
 * slack after it: verdict.c), every run.  A thread that goes on
 * doing so spins on its clock (GLib's main loop running an idle callback
 * until a timeout of its own: 1 ns a poll would take 50 million polls to
 * its 50 ms): each such wait in a row waits twice as long as the one
 * before, up to 1 ms, so that it sees time pass as a spinning thread does
 * on Linux, and the same every run.
 */
static __thread int64_t timed_out_at = -1;
/* The program's reads of the clock since, at that instant. */
static __thread uint32_t spin_reads;

/* The step of the thread's next such wait: each one in a row waits twice
 * as long as the one before, from 1 ns up to CRAWL_MAX_NS. */
#define CRAWL_MAX_NS 1000000 /* 1 ms */
static __thread int64_t crawl = 1;

static int64_t crawl_step(void)
{
	int64_t step = crawl;

	crawl = step < CRAWL_MAX_NS / 2 ? 2 * step : CRAWL_MAX_NS;
	return step;
}

static int64_t past_reached(int64_t deadline)
{
	int64_t now;

	if (deadline != DOM_NEVER && timed_out_at >= 0) {
		now = tfd_dom_now(tfd_dom, DC_MONO);
		if (deadline <= now && now == timed_out_at)
			return now + crawl_step();
	}
	crawl = 1;
	return deadline;
}

/* A wait ended: at its deadline with nothing (timed_out), or not. */
static void wait_ended(int timed_out)
{
	int64_t was = timed_out_at;

	timed_out_at = timed_out ? tfd_dom_now(tfd_dom, DC_MONO) : -1;
	if (timed_out_at != was)
		spin_reads = 0;
}

/* RUN -> WAIT: the thread leaves the count of running ones. */
static void to_wait(struct dom_slot *s, int kind, int64_t deadline,
                    int outside)
{
	s->kind = (uint32_t)kind;
	__atomic_store_n(&s->slice_ended, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->outside, (uint32_t)outside, __ATOMIC_RELAXED);
	__atomic_store_n(&s->deadline, deadline, __ATOMIC_RELAXED);
	__atomic_store_n(&s->looked, kind == DK_SLEEP, __ATOMIC_RELAXED);
	__atomic_store_n(&s->state, DS_WAIT, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&tfd_dom->actrun, 1, __ATOMIC_SEQ_CST);
}

/* WAIT -> RUN: it runs, which may end others' waits. */
static void to_run(struct dom_slot *s)
{
	__atomic_store_n(&s->state, DS_RUN, __ATOMIC_RELEASE);
	__atomic_add_fetch(&tfd_dom->actrun, ACT_ONE + 1, __ATOMIC_SEQ_CST);
	tfd_dom_changed(tfd_dom);
}

/* The end of the slice a wait in slices is in (tfd_dom_slice_wait), {0,
 * 0} outside one: the mover's poke sets it to long past, and tells the
 * wait's slot. */
static __thread struct timespec slice_until
	__attribute__((tls_model("initial-exec")));
static __thread struct dom_slot *slice_slot
	__attribute__((tls_model("initial-exec")));

static void end_slice(void)
{
	slice_until.tv_sec = 0;
	slice_until.tv_nsec = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (slice_slot)
		__atomic_store_n(&slice_slot->slice_ended, 1, __ATOMIC_RELEASE);
}

/* slice_until set: no poke has ended this slice yet (one before this
 * ended none, or set slice_until to long past: seen by the caller). */
static void begin_slice(struct dom_slot *s)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (s) /* seq_cst: before the caller's read of the clock */
		__atomic_store_n(&s->slice_ended, 0, __ATOMIC_SEQ_CST);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void tfd_dom_slice_poked(void)
{
	if (!tfd_dom_no_wait(&slice_until))
		end_slice();
}

/*
 * A wait ends without coming back through its own code when a handler of
 * the program's jumps out of it (siglongjmp: the timeout idiom) or the
 * thread is cancelled in it.  The slot must not stay WAIT then: the mover
 * would take a thread that runs (or a dead one) for one that waits.  A
 * handler runs through ours (signals.c), which counts the thread as
 * running for as long as the handler runs, and puts the wait back only
 * when the handler returns to it; a thread that ends in a wait (a
 * cancellation) is put back to running by a key's destructor (no cleanup
 * handler: a jump would leave glibc pointing at it).
 */
void tfd_dom_handler(int begin, struct tfd_dom_paused *p)
{
	struct dom_slot *s = tfd_dom ? tfd_dom_self_slot() : NULL;
	struct dom_proc *me = tfd_dom_me;

	if (begin) {
		/* A wait in slices in the handler sets its own end; a poke
		 * meanwhile ends the slice the handler interrupted too. */
		p->until = slice_until;
		p->kind = 0;
		/* Parked, it runs the handler: /proc tells, until it is back
		 * in the wait it was parked in. */
		p->slot = s;
		p->park = s ? __atomic_exchange_n(&s->park, 0, __ATOMIC_SEQ_CST)
		            : 0;
		if (!s || __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != DS_WAIT)
			return;
		p->kind = (int)s->kind;
		p->outside = (int)s->outside;
		p->deadline = __atomic_load_n(&s->deadline, __ATOMIC_RELAXED);
		if (p->kind == DK_KERNEL && me)
			__atomic_sub_fetch(&me->kwaiters, 1, __ATOMIC_SEQ_CST);
		to_run(s);
	} else if (s && (p->park || p->kind)) {
		/* Back where it was parked: as parked then (a wake since has
		 * made that stale). */
		if (p->park && p->slot == s)
			__atomic_store_n(&s->park, p->park, __ATOMIC_SEQ_CST);
		if (!p->kind)
			return;
		to_wait(s, p->kind, p->deadline, p->outside);
		if (p->kind == DK_SLICE) {
			/* Back in the C library's wait: the mover asks /proc.
			 * Its slice goes on, unless it had ended, or its
			 * deadline came meanwhile (a poke for it ended only a
			 * wait of the handler's); set in the slice loop's order
			 * (a poke after the end is restored ends it). */
			__atomic_store_n(&s->looked, 1, __ATOMIC_RELEASE);
			slice_slot = s;
			slice_until = p->until;
			begin_slice(s);
			if (tfd_dom_no_wait(&p->until) ||
			    tfd_dom_now(tfd_dom, DC_MONO) >= p->deadline)
				end_slice();
		}
		if (p->kind == DK_KERNEL && me)
			__atomic_add_fetch(&me->kwaiters, 1, __ATOMIC_SEQ_CST);
		tfd_dom_changed(tfd_dom);
	}
}

/* A cancellation already pending acts here, before the thread is parked
 * (its pthread_cancel() was told before this thread read the count). */
void *tfd_dom_park(const void *obj)
{
	struct dom_slot *s = tfd_dom_self_slot();
	uint64_t w;

	if (!s || !obj)
		return NULL;
	w = __atomic_load_n(&tfd_dom->wakes, __ATOMIC_SEQ_CST);
	pthread_testcancel();
	__atomic_store_n(&s->park, dom_park_word(w, dom_bucket(obj), 0),
	                 __ATOMIC_SEQ_CST);
	return s;
}

/* A join of the thread of this process whose pthread_t is thread, and
 * whose slot the mover frees once it is gone. */
void *tfd_dom_park_join(uint64_t thread)
{
	struct dom_slot *s = tfd_dom_self_slot();
	uint32_t gen;
	int k = s ? tfd_dom_slot_of(thread, &gen) : -1;
	uint64_t w;

	if (k < 0)
		return NULL;
	w = __atomic_load_n(&tfd_dom->wakes, __ATOMIC_SEQ_CST);
	pthread_testcancel();
	__atomic_store_n(&s->park_gen, gen, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->park,
	                 dom_park_word(w, DOM_PARK_JOIN | (uint32_t)k, 0),
	                 __ATOMIC_SEQ_CST);
	return s;
}

/* (The slot is the thread's still: not a child's, forked in a handler
 * that interrupted the wait.) */
void tfd_dom_unpark(void *parked)
{
	if (parked && parked == tfd_dom_self_slot())
		__atomic_store_n(&((struct dom_slot *)parked)->park, 0,
		                 __ATOMIC_SEQ_CST);
}

/* (Another slot, a child's forked in a handler, or none parked: the end
 * is a wake.) */
void tfd_dom_unpark_ended(void *parked, const void *obj, int timed_out)
{
	struct dom_slot *s = parked;
	uint64_t p = 0;

	if (!s)
		return;
	if (s == tfd_dom_self_slot())
		p = __atomic_exchange_n(&s->park, 0, __ATOMIC_SEQ_CST);
	if (p)
		dom_wait_ended(tfd_dom, obj, (p >> 14) - 1, timed_out);
	else
		dom_woke(tfd_dom, obj);
}

void tfd_dom_woke(const void *obj)
{
	dom_woke(tfd_dom, obj);
}

void tfd_dom_signalled(int32_t pid, int32_t tid)
{
	dom_signalled(tfd_dom, pid, tid);
}

/* try(ctx, until), parked on obj (NULL: not parked).  Its end may be a
 * wake of obj (tfd_dom_unpark_ended). */
static int try_parked(int (*try)(void *, const struct timespec *),
                      void *ctx, const struct timespec *until,
                      const void *obj)
{
	void *p = tfd_dom_park(obj);
	int r = try(ctx, until);

	tfd_dom_unpark_ended(p, obj, r == ETIMEDOUT);
	return r;
}

static pthread_key_t wait_key;
static pthread_once_t wait_key_once = PTHREAD_ONCE_INIT;
static int have_wait_key;
static __thread int wait_keyed;

static void ends_in_wait(void *arg)
{
	struct tfd_dom_paused p;

	(void)arg;
	wait_keyed = 0;
	tfd_dom_handler(1, &p); /* running, until /proc shows it gone */
}

static void make_wait_key(void)
{
	have_wait_key = pthread_key_create(&wait_key, ends_in_wait) == 0;
}

/* Before this thread's first wait: its end undoes a wait it ends in. */
static void wait_key_set(void)
{
	if (wait_keyed)
		return;
	pthread_once(&wait_key_once, make_wait_key);
	if (have_wait_key && pthread_setspecific(wait_key, &wait_key) == 0)
		wait_keyed = 1;
}

/* Every signal is held from the moment a wait registers until the kernel
 * blocks, which lets them through atomically (ppoll's mask): a signal
 * that comes meanwhile interrupts the wait, as it would have on Linux
 * where the wait began before time could move.  Faults stay deliverable. */
static void hold_signals(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGTRAP);
	sigdelset(&all, SIGSYS);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

/* A poke pending (blocked) is dropped. */
static void drop_pokes(void)
{
	struct timespec zero = { 0, 0 };
	sigset_t poke;

	sigemptyset(&poke);
	sigaddset(&poke, DOM_POKE_SIG);
	while (syscall(SYS_rt_sigtimedwait, &poke, NULL, &zero, _NSIG / 8) ==
	       DOM_POKE_SIG)
		;
}

/* A poke that came after the last look is dropped; the mask restored. */
static void release_signals(const sigset_t *old)
{
	drop_pokes();
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static int block_sleep(void *ctx, const sigset_t *mask, int64_t ns)
{
	struct timespec ts = tfd_ns_to_ts(ns);

	(void)ctx;
	return tfd_dom_host.ppoll(NULL, 0, ns < 0 ? NULL : &ts, mask);
}

/* A sleep until deadline (virtual CLOCK_MONOTONIC): 0 when it comes,
 * EINTR if a signal handler ran first.  The mover pokes it when time
 * gets there. */
static int dom_sleep(int64_t deadline)
{
	struct dom_slot *s = tfd_dom_self_slot();
	sigset_t old, during;
	int e = 0;

	if (!s) { /* no slot (the domain is full): a deadline of nobody's */
		while (tfd_dom_now(tfd_dom, DC_MONO) < deadline) {
			struct timespec ms = { 0, 1000000 };

			tfd_dom_host.nanosleep(&ms, NULL);
		}
		return 0;
	}
	wait_key_set();
	hold_signals(&old);
	during = old;
	sigdelset(&during, DOM_POKE_SIG);
	to_wait(s, DK_SLEEP, deadline, 0);
	tfd_dom_publish();
	tfd_dom_changed(tfd_dom);
	while (tfd_dom_now(tfd_dom, DC_MONO) < deadline) {
		unsigned h0 = tfd_dom_host.handled();
		int64_t left = tfd_dom_real_left(tfd_dom, deadline);

		if (block_sleep(NULL, &during, left) < 0 &&
		    errno == EINTR && tfd_dom_host.handled() != h0) {
			e = EINTR; /* a signal of the program's */
			break;
		}
		tfd_dom_publish(); /* poked: this process's timers may be due */
	}
	to_run(s);
	release_signals(&old);
	return e;
}

/*
 * Waits on the outside.  A descriptor whose other end may be held by a
 * process outside the tree (outside.c) can become ready at any real
 * moment; jumping over a wait on one would time it out before the writer
 * comes (`(sleep 1; echo hi) | tfd exec ... read -t 5`).  Such a wait is
 * marked on its slot, and the mover lets time flow at the real rate
 * instead of jumping while one is the tree's only way on (mover.c).
 */
static __thread int next_outside;

void tfd_dom_wait_outside(void)
{
	next_outside = 1;
}

/* A wait on something the kernel tells (descriptors, signals): look
 * registered, then block in the kernel with DOM_POKE_SIG let through,
 * which the mover sends to ask for another look (something may have
 * changed) or when time reaches the deadline.  Returns look()'s result
 * (> 0, or < 0 with errno), 0 at the deadline, or -1 with errno from
 * block() (EINTR: a signal of the program's). */
int tfd_dom_kwait(int64_t deadline, const sigset_t *mask,
                  int (*look)(void *), int (*block)(void *, const sigset_t *,
                                                    int64_t),
                  void *ctx)
{
	struct dom_slot *s = tfd_dom_self_slot();
	struct dom_proc *me = tfd_dom_me;
	sigset_t old, during;
	int r = 0, e = errno, e0 = errno, outside = next_outside;

	next_outside = 0;
	deadline = past_reached(deadline);
	if (s)
		wait_key_set();
	hold_signals(&old);
	during = mask ? *mask : old;
	sigdelset(&during, DOM_POKE_SIG);
	if (s) {
		to_wait(s, DK_KERNEL, deadline, outside);
		if (me)
			__atomic_add_fetch(&me->kwaiters, 1, __ATOMIC_SEQ_CST);
	}
	for (;;) {
		unsigned h0 = tfd_dom_host.handled();

		if (s)
			begin_look(s);
		tfd_dom_sync();
		errno = e0; /* what look() or block() sets is theirs alone */
		r = look(ctx);
		if (r != 0) {
			e = errno;
			break;
		}
		if (looked_nothing(s, deadline))
			break;
		errno = e0;
		r = block(ctx, &during, tfd_dom_real_left(tfd_dom, deadline));
		e = errno;
		if (r > 0 ||
		    (r < 0 && !(e == EINTR && tfd_dom_host.handled() == h0)))
			break; /* ready, failed, or the program's signal */
		/* poked, or the real time of busy mode ran out: look again */
	}
	if (s) {
		if (me)
			__atomic_sub_fetch(&me->kwaiters, 1, __ATOMIC_SEQ_CST);
		to_run(s);
	}
	release_signals(&old);
	wait_ended(r == 0);
	/* A wait that ends at its deadline leaves errno as it was (the
	 * pokes' EINTR is ours); else it is what the last look or block
	 * set (a look may succeed with the error of the call it made:
	 * wait4's ECHILD). */
	errno = r == 0 ? e0 : e;
	return r;
}

/*
 * A wait that can only block in real time, in slices (a condition
 * variable, a lock, a join): try(ctx, until) waits until the real time
 * *until at most and returns 0 (done), ETIMEDOUT (the slice ran out) or
 * another error.  Returns 0, the error, or ETIMEDOUT at the virtual
 * deadline.  With no deadline (beyond the horizon), one wait without a
 * limit, the thread running for us (blocked outside our waits, which
 * /proc tells).
 *
 * The mover does not wait for such a wait to look again: it asks /proc
 * whether the thread is still blocked and has not run since (busy.c),
 * which is all a look would tell (its deadline is the program's, fixed);
 * with park (what a condition's or a semaphore's wait waits on; NULL:
 * none) each slice is parked (tfd_dom_park), and the mover asks /proc
 * once.
 * When time reaches the deadline, or starts to flow, it pokes the
 * thread: the poke's handler sets the slice's end, which the C library's
 * wait reads again as its wait is interrupted (glibc 2.36's conditions,
 * locks, priority-inheritance mutexes and joins; a semaphore's wait and
 * a raw futex return EINTR, and the slice loop looks again), to long
 * past (tfd_dom_slice_poked), and the slice ends at once; the slot is
 * told (slice_ended), and the mover then takes a thread that stays
 * blocked for a condition's mutex for one blocked outside our waits.
 * The slices are what a poke may miss: long, since each slice's end is
 * a chance to lose a condition's signal (one sent as the slice times out
 * finds no waiter).  The poke is let through for the wait's length, also
 * where the program's mask blocks it.
 */
#define SLICE_NS 100000000 /* 100 ms */
#define SLICE_ALONE_NS 1000000 /* 1 ms, with no slot: nobody pokes it */

/* The real CLOCK_MONOTONIC time ns from now (the C library's clock, not
 * the program's: ours is virtual). */
static struct timespec real_after(int64_t ns)
{
	return tfd_ns_to_ts(real_mono() + ns);
}

static const struct timespec no_wait = { 0, 0 };

int tfd_dom_slice_wait(int64_t deadline,
                       int (*try)(void *, const struct timespec *),
                       void *ctx, const void *park)
{
	struct dom_slot *s = tfd_dom_self_slot();
	sigset_t poke, old;
	int r, unblocked = 0, told = 0;

	if (deadline == DOM_NEVER)
		return try_parked(try, ctx, NULL, park);

	deadline = past_reached(deadline);
	if (s) {
		wait_key_set();
		sigemptyset(&poke);
		sigaddset(&poke, DOM_POKE_SIG);
		unblocked = pthread_sigmask(SIG_UNBLOCK, &poke, &old) == 0 &&
		            sigismember(&old, DOM_POKE_SIG) == 1;
		to_wait(s, DK_SLICE, deadline, 0);
		slice_slot = s;
	}
	for (;;) {
		int64_t left = tfd_dom_real_left(tfd_dom, deadline);
		int64_t slice = s ? SLICE_NS : SLICE_ALONE_NS;
		unsigned h0 = tfd_dom_host.handled();

		if (s)
			begin_look(s);
		r = try(ctx, &no_wait);
		/* The mover is told of the first look (the thread waits now),
		 * not of the others: it does not wait for them (above). */
		if (r != ETIMEDOUT || looked_nothing_q(s, deadline, told))
			break;
		told = 1;
		slice_until = real_after(left >= 0 && left < slice ? left : slice);
		begin_slice(s);
		/* A poke before the lines above was for a clock moved before
		 * them (the mover moves, then pokes): seen here. */
		if (tfd_dom_now(tfd_dom, DC_MONO) >= deadline) {
			r = ETIMEDOUT;
			break;
		}
		r = try_parked(try, ctx, &slice_until, park);
		if (r == EINTR && tfd_dom_host.handled() == h0)
			r = ETIMEDOUT; /* only the poke: look again */
		if (r != ETIMEDOUT)
			break;
	}
	slice_until = no_wait; /* no slice: a poke now ends none */
	if (s) {
		to_run(s);
		if (unblocked) { /* blocked again, a poke come since dropped */
			pthread_sigmask(SIG_BLOCK, &poke, NULL);
			drop_pokes();
		}
	}
	wait_ended(r == ETIMEDOUT);
	return r;
}

/*
 * A wait of at most timeout_ns (-1: no limit) on the virtual clock.
 * look() tries without blocking: > 0 ready, < 0 failed, 0 nothing;
 * block(ctx, mask, real_ns) blocks in the kernel with that signal mask,
 * for real_ns (-1: no limit).  Returns look()'s or block()'s result, or 0
 * when the time is up.  Without a domain, VWAIT_BLOCK: the caller waits
 * for real.
 */
int tfd_dom_wait(int64_t timeout_ns, const sigset_t *mask, int (*look)(void *),
              int (*block)(void *, const sigset_t *, int64_t), void *ctx)
{
	if (!tfd_dom)
		return VWAIT_BLOCK;
	return tfd_dom_kwait(tfd_dom_deadline(timeout_ns), mask, look, block,
	                     ctx);
}

struct one_fd {
	int fd;
};

static int look_readable(void *ctx)
{
	struct pollfd p = { ((struct one_fd *)ctx)->fd, POLLIN, 0 };

	return tfd_dom_host.poll(&p, 1, 0);
}

static int block_readable(void *ctx, const sigset_t *mask, int64_t ns)
{
	struct pollfd p = { ((struct one_fd *)ctx)->fd, POLLIN, 0 };
	struct timespec ts = tfd_ns_to_ts(ns);
	uintptr_t b = tfd_engine_waits_block(); /* see waits.c */
	int r = tfd_dom_host.ppoll(&p, 1, ns < 0 ? NULL : &ts, mask), e = errno;

	tfd_engine_waits_unblock(b);
	errno = e;
	return r;
}

/* A blocking read of a timer with nothing to read waits on virtual time
 * until it has something: 0, or -1 with errno (EINTR: a signal). */
int tfd_dom_read_wait(int fd)
{
	struct one_fd ctx = { fd };
	void *held = NULL;
	int was, r;

	if (!tfd_dom)
		return 0;
	was = tfd_dom_host.enter();
	if (tfd_dom_host.be->hold)
		held = tfd_dom_host.be->hold(fd);
	tfd_dom_host.leave(was);
	/* A handler installed with SA_RESTART lets the read go on, as
	 * Linux restarts read(2) after it. */
	for (;;) {
		unsigned u = tfd_dom_host.unrestarted();

		r = tfd_dom_kwait(DOM_NEVER, NULL, look_readable,
		                  block_readable, &ctx);
		if (!(r < 0 && errno == EINTR &&
		      tfd_dom_host.unrestarted() == u))
			break;
	}
	was = tfd_dom_host.enter();
	if (held)
		tfd_dom_host.be->unhold(held);
	tfd_dom_host.leave(was);
	return r < 0 ? -1 : 0;
}

/* A sleep until the virtual CLOCK_MONOTONIC reaches deadline: 0, EINTR
 * (a signal handler ran; *left is the time not slept), or VWAIT_BLOCK for
 * a sleep beyond the horizon (the caller sleeps for real, which is
 * forever for a program). */
int tfd_dom_sleep_until(int64_t deadline, int64_t *left)
{
	int64_t now = tfd_dom_clock_now(CLOCK_MONOTONIC);
	int e;

	if (tfd_dom)
		deadline = past_reached(deadline);
	if (deadline <= now) {
		if (tfd_dom)
			wait_ended(1);
		return 0;
	}
	if (deadline - now > TFD_HORIZON || !tfd_dom)
		return VWAIT_BLOCK;
	e = dom_sleep(deadline);
	wait_ended(!e);
	if (e && left) {
		*left = deadline - tfd_dom_clock_now(CLOCK_MONOTONIC);
		if (*left < 0)
			*left = 0;
	}
	return e;
}

int tfd_dom_sleep(int64_t ns, int64_t *left)
{
	if (ns <= 0 && !tfd_dom)
		return 0;
	if (ns > TFD_HORIZON)
		return VWAIT_BLOCK;
	return tfd_dom_sleep_until(tfd_dom_clock_now(CLOCK_MONOTONIC) + ns,
	                           left);
}

/*
 * A clock read by the program.  The loop above may not wait at all when
 * its time left is zero (Python's Event.wait(0) only tries the lock:
 * concurrent.futures.as_completed): after a wait of the thread's timed
 * out, SPIN_READS reads of the clock at that same instant with no other
 * wait between are a spin, and the last of them waits for the smallest
 * step past the instant, as a wait of zero there does (and as those,
 * twice as long each time in a row: a loop that spins on the clock alone
 * until a time of its own gets there).  Counted, not timed: the same on
 * every run.
 */
#define SPIN_READS 1000
int64_t tfd_dom_read_clock(clockid_t c)
{
	struct dom_slot *s;

	/* Not from a handler that interrupted a wait of the thread's (its
	 * slot is WAIT): a wait there would register it twice. */
	if (tfd_dom && timed_out_at >= 0 && (s = tfd_dom_self_slot()) &&
	    __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == DS_RUN) {
		int64_t now = tfd_dom_now(tfd_dom, DC_MONO);

		if (now != timed_out_at) {
			timed_out_at = -1;
			spin_reads = 0;
			crawl = 1;
		} else if (++spin_reads >= SPIN_READS) {
			/* A clock read is no cancellation point and leaves
			 * errno as it was: the wait is made as one of ours. */
			int e = errno, cs;

			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
			wait_ended(!dom_sleep(now + crawl_step()));
			pthread_setcancelstate(cs, NULL);
			errno = e;
		}
	}
	return tfd_dom_clock_now(c);
}
