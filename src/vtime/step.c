/* SPDX-License-Identifier: MIT */
/*
 * step.c - this process's timers (the engine's virtual clocks) kept in
 * step with the domain's clock: the engine's clocks start at the domain's
 * and are moved to it before a timer operation or a look (what expired is
 * delivered); the mover is told when this process's timers next need time
 * to stop (published), and an agent thread delivers them when time gets
 * there, whatever the program's threads are doing.
 */
#define _GNU_SOURCE
#include "backend.h"
#include "core/time.h"
#include "host.h"
#include "tfd.h"
#include "lockorder.h"
#include "vtime/domain.h"

#include <fcntl.h>
#include <signal.h>

static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(sync_lock, LK_SYNC);

/* The engine's virtual clocks start at the domain's. */
void tfd_dom_engine_start(void)
{
	int64_t now[3];
	int was;

	now[0] = tfd_dom_now(tfd_dom, DC_MONO);
	now[1] = tfd_dom_now(tfd_dom, DC_REAL);
	now[2] = tfd_dom_now(tfd_dom, DC_BOOT);
	was = tfd_dom_host.enter();
	tfd_dom_host.be->virtual_start(now[0], now[1], now[2]);
	tfd_dom_host.leave(was);
}

/* Move this process's engine to the domain's clock: every expiration up
 * to now is delivered (its eventfd written).  The engine's clocks are
 * its family's (the processes forked from one another without exec): one
 * of them may have moved them already, and then what this one delivers
 * is delivered now, with a move of nothing.  Two may sync at once (each
 * under its own sync_lock): the move is to the domain's time, not by a
 * difference read before, which would count the move twice. */
void tfd_dom_sync(void)
{
	struct dom_proc *me = tfd_dom_me;
	int64_t now, at = 0, d, in = 0;
	int was, due;

	if (!tfd_dom)
		return;
	now = tfd_dom_now(tfd_dom, DC_MONO);
	was = tfd_dom_host.enter();
	if (tfd_dom_host.be->virtual_now(CLOCK_MONOTONIC, &at) != 0 ||
	    (at >= now && (tfd_dom_host.be->next_due(&in) != 0 || in > 0))) {
		tfd_dom_host.leave(was);
		return;
	}
	pthread_mutex_lock(&sync_lock);
	if (tfd_dom_host.be->virtual_now(CLOCK_MONOTONIC, &at) == 0) {
		d = at < now ? now - at : 0;
		due = d > 0 || (tfd_dom_host.be->next_due(&in) == 0 && in == 0);
		if (due)
			tfd_dom_host.be->virtual_move_to(now);
		if (due && me &&
		    __atomic_load_n(&me->next_due, __ATOMIC_RELAXED) <= now)
			/* Timers were delivered: waits on them may end. */
			__atomic_add_fetch(&tfd_dom->actrun, ACT_ONE,
			                   __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&sync_lock);
	tfd_dom_host.leave(was);
}

static int fd_readable(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return tfd_dom_host.poll(&p, 1, 0) == 1;
}

/* A readable timer stays readable until a thread of this process reads
 * it (and then publishes again), unless its file is read elsewhere: by a
 * program started with it (not close-on-exec), or by a forked child that
 * does not share the family's timers (elsewhere; tfd(7), NOTES 6).  Of
 * the family's processes, each publishes its own look at a timer it
 * holds, and posts it when due (the engine's virtual.c).  Asked by the
 * backend, its lock held, of a posted timer: 1 if its file still shows
 * the post. */
static int shown(int fd, int elsewhere, void *arg)
{
	uint32_t *skipped = arg;
	int f;

	if (!fd_readable(fd))
		return 0;
	if (*skipped)
		return 1;
	f = elsewhere ? -1 : tfd_dom_host.fcntl(fd, F_GETFD);
	if (f < 0 || !(f & FD_CLOEXEC))
		*skipped = 1;
	return 1;
}

/* The earliest expiry that would make one of this process's timers
 * readable (one readable already only adds to its count), absolute on
 * the virtual CLOCK_MONOTONIC, or DOM_NEVER: from the backend's queues
 * (tfd-preload(7), The cost of a move).  *skipped: a readable one passed
 * over may be read elsewhere (above): the mover has this process look
 * again before it moves time (procs.c, relooks): a readable timer is no
 * deadline, else time would stop at each of its expiries.
 *
 * The expiry is counted from the engine's clock, not from the domain's:
 * the mover may have moved the domain's clock since the engine was
 * synced to it (a thread woken by a late poke looks again just as the
 * mover, which found its last look valid, moves), and an expiry counted
 * from the domain's clock is then late by as much as that move, and the
 * mover would move past the timer's own.  Counted from the engine's
 * clock, the expiry is the timer's own, due on the domain's clock: the
 * mover wakes the process to deliver it.  The engine's clock is never
 * ahead of the domain's and moves only forward: another process of the
 * family that moves it meanwhile makes an expiry early (looked at
 * again), not late. */
static int64_t unread_deadline(int64_t dom_now, uint32_t *skipped)
{
	const struct tfd_backend *be = tfd_dom_host.be;
	int64_t best = DOM_NEVER, now = dom_now, at = -1;
	int was;

	*skipped = 0;
	if (!tfd_dom_host.has_timers())
		return best;
	was = tfd_dom_host.enter();
	if (be->virtual_now(CLOCK_MONOTONIC, &now) != 0 || now > dom_now)
		now = dom_now;
	if (be->virtual_unread(&at, shown, skipped) == 0 && at > now &&
	    at - now <= TFD_HORIZON)
		best = at;
	tfd_dom_host.leave(was);
	return best;
}

/* Threads of the process publish one at a time: what each computes is
 * stored before another computes (a stale answer never lands last). */
static pthread_mutex_t publish_lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(publish_lock, LK_PUBLISH);

static void publish(void)
{
	struct dom_proc *me = tfd_dom_me;
	int64_t now, next, sig;
	uint32_t skipped;
	int was;

	/* Signals first, unlocked: a handler may run here and set a timer. */
	tfd_dom_host.sigtimers_fire(tfd_dom_now(tfd_dom, DC_MONO));
	/* Running, also while it waits for the lock. */
	was = tfd_dom_host.enter();
	pthread_mutex_lock(&publish_lock);
	tfd_dom_sync();
	now = tfd_dom_now(tfd_dom, DC_MONO);
	next = unread_deadline(now, &skipped);
	sig = tfd_dom_host.sigtimers_next();
	if (sig < next)
		next = sig;
	__atomic_store_n(&me->skipped, skipped, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&me->next_due, next, __ATOMIC_SEQ_CST) != next)
		tfd_dom_changed(tfd_dom);
	pthread_mutex_unlock(&publish_lock);
	tfd_dom_host.leave(was);
}

/* The agent: a thread of ours, started with the process's first armed
 * timer, that delivers its timers when time reaches them, whatever its
 * threads are doing (blocked in waitpid, say, while another process
 * waits on a timer they share).  Not a thread of the program's: it has
 * no slot, and the mover waits for it as for a due deadline. */
static uint32_t agent_running; /* futex word: its start is over */

static void *agent(void *arg)
{
	struct dom_proc *p = arg;
	sigset_t all;

	sigfillset(&all); /* the program's signals are for its threads */
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	__atomic_store_n(&agent_running, 1, __ATOMIC_RELEASE);
	tfd_futex_wake(&agent_running, INT_MAX);
	for (;;) {
		uint32_t w = __atomic_load_n(&p->wake, __ATOMIC_SEQ_CST);
		uint32_t ask = __atomic_load_n(&p->relook, __ATOMIC_SEQ_CST);
		int64_t due = __atomic_load_n(&p->next_due, __ATOMIC_SEQ_CST);

		if (due <= tfd_dom_now(tfd_dom, DC_MONO)) {
			publish();
			continue;
		}
		if (ask != __atomic_load_n(&p->relooked, __ATOMIC_SEQ_CST)) {
			publish(); /* the mover asks (procs.c, relooks) */
			__atomic_store_n(&p->relooked, ask, __ATOMIC_SEQ_CST);
			tfd_dom_changed(tfd_dom);
			continue;
		}
		tfd_futex_nap(&p->wake, w, tfd_dom_real_left(tfd_dom, due));
	}
	return NULL;
}

static pthread_mutex_t agent_lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(agent_lock, LK_AGENT);

static void agent_start(void)
{
	struct dom_proc *me = tfd_dom_me;
	pthread_t th;
	/* A thread of the library's; the lock held inside (no handler runs,
	 * none jumps out). */
	int was = tfd_dom_host.enter();

	pthread_mutex_lock(&agent_lock);
	if (!__atomic_load_n(&me->agent, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&agent_running, 0, __ATOMIC_RELAXED);
		if (tfd_own_thread(&th, 0, agent, me, 1) == 0) {
			__atomic_store_n(&me->agent, 1, __ATOMIC_RELEASE);
			/* Its start over before the program goes on: a fork
			 * meanwhile would give the child the locks the start
			 * holds (a sanitizer's allocator's). */
			while (!__atomic_load_n(&agent_running, __ATOMIC_ACQUIRE))
				tfd_futex_wait(&agent_running, 0);
		}
	}
	pthread_mutex_unlock(&agent_lock);
	tfd_dom_host.leave(was);
}

/* Tell the mover when this process's timers next need time to stop. */
void tfd_dom_publish(void)
{
	struct dom_proc *me = tfd_dom_me;

	if (!tfd_dom || !me)
		return;
	publish();
	if ((__atomic_load_n(&me->next_due, __ATOMIC_RELAXED) != DOM_NEVER ||
	     __atomic_load_n(&me->skipped, __ATOMIC_RELAXED)) &&
	    !__atomic_load_n(&me->agent, __ATOMIC_ACQUIRE))
		agent_start();
}

/* In a child of fork(): this part's locks, which another thread of the
 * parent may have held, are made anew (the preload's tree.c). */
void tfd_dom_locks_forked(void)
{
	pthread_mutex_init(&sync_lock, NULL);
	pthread_mutex_init(&publish_lock, NULL);
	pthread_mutex_init(&agent_lock, NULL);
}

