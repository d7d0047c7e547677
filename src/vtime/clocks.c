/* SPDX-License-Identifier: MIT */
/*
 * clocks.c - the mover's hand on the clocks (mover.h): set forward, let
 * flow at the real rate up to a cap or stand; and when the mover is
 * gone, however it went, time flowing for real for what it left.
 */
#define _GNU_SOURCE
#include "vtime/mover.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Set the clocks to mono (forward only), the others by as much, and
 * whether time flows from there, and up to where (cap). */
static void set_clocks_flowing(struct tfd_dom *d, int64_t mono,
                               uint32_t flowing, int64_t cap)
{
	int64_t now = tfd_dom_now(d, DC_MONO), delta = mono - now;
	int64_t real = tfd_dom_now(d, DC_REAL), boot = tfd_dom_now(d, DC_BOOT);

	if (delta < 0)
		delta = 0;
	__atomic_add_fetch(&d->seq, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&d->vbase[DC_MONO], now + delta, __ATOMIC_RELAXED);
	__atomic_store_n(&d->vbase[DC_REAL], real + delta, __ATOMIC_RELAXED);
	__atomic_store_n(&d->vbase[DC_BOOT], boot + delta, __ATOMIC_RELAXED);
	__atomic_store_n(&d->rbase, tfd_dom_real_mono(), __ATOMIC_RELAXED);
	__atomic_store_n(&d->cap, cap, __ATOMIC_RELAXED);
	__atomic_store_n(&d->flowing, flowing, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&d->seq, 1, __ATOMIC_ACQ_REL);
}

void tfd_dom_set_clocks(struct tfd_dom *d, int64_t mono)
{
	set_clocks_flowing(d, mono, __atomic_load_n(&d->flowing,
	                                            __ATOMIC_RELAXED),
	                   __atomic_load_n(&d->cap, __ATOMIC_RELAXED));
}

/* Every wait of the tree that blocks without a limit while time stands
 * (a sleep, a wait in the kernel) is poked, and every agent woken, to
 * wait again with a limit of real time: time flows. */
static void wake_all(struct tfd_dom *d)
{
	uint32_t i, hi = __atomic_load_n(&d->hiwater, __ATOMIC_ACQUIRE);

	for (i = 0; i < hi; i++) {
		struct dom_slot *s = &d->slot[i];

		if (s->tid > 0 &&
		    __atomic_load_n(&s->state, __ATOMIC_SEQ_CST) == DS_WAIT)
			syscall(SYS_tgkill, s->pid, s->tid, DOM_POKE_SIG);
	}
	hi = __atomic_load_n(&d->phiwater, __ATOMIC_ACQUIRE);
	for (i = 0; i < hi; i++) {
		struct dom_proc *p = &d->proc[i];

		if (__atomic_load_n(&p->pid, __ATOMIC_ACQUIRE) > 0 &&
		    __atomic_load_n(&p->agent, __ATOMIC_ACQUIRE)) {
			__atomic_add_fetch(&p->wake, 1, __ATOMIC_SEQ_CST);
			tfd_futex_wake(&p->wake, INT_MAX);
		}
	}
}

/* Time flows at the real rate up to cap (on), or stands where it has
 * come (off): a thread outside our waits runs busy (busy.c), or a wait
 * is on the outside (waits.c). */
void tfd_dom_flow_to(struct tfd_dom *d, int on, int64_t cap)
{
	uint32_t was = __atomic_load_n(&d->flowing, __ATOMIC_RELAXED);

	if (!was == !on &&
	    (!on || __atomic_load_n(&d->cap, __ATOMIC_RELAXED) == cap))
		return;
	set_clocks_flowing(d, tfd_dom_now(d, DC_MONO), on ? 1 : 0,
	                   on ? cap : DOM_NEVER);
	if (on)
		wake_all(d);
}

/* The mover is gone: programs the tree left behind go on with time
 * flowing for real from where it is.  Their waits blocked without a
 * limit (pure virtual time: only the mover ended them) are poked, and
 * the agents woken, to wait again for real.  Once: a second call (the
 * watch below, after `tfd exec` ended it) only pokes. */
void tfd_dom_end(struct tfd_dom *d)
{
	uint32_t s = __atomic_load_n(&d->seq, __ATOMIC_ACQUIRE);

	/* A mover killed in the middle of writing the clocks left seq odd:
	 * the readers would wait for it for ever (the watcher ends the
	 * domain then, and nothing writes the clocks but the one ending). */
	if (s & 1)
		__atomic_store_n(&d->seq, s + 1, __ATOMIC_RELEASE);
	if (!__atomic_load_n(&d->ended, __ATOMIC_SEQ_CST)) {
		/* the flow of a busy thread's, or a wait's on the outside,
		 * kept */
		tfd_dom_set_clocks(d, tfd_dom_now(d, DC_MONO));
		__atomic_store_n(&d->ended, 1, __ATOMIC_SEQ_CST);
	}
	tfd_dom_changed(d);
	wake_all(d);
}

/* A process of its own (a fork of the mover's, outside the tree, with
 * no descriptor but a pipe's read end) that ends the domain when the
 * mover is gone, however it went: a mover killed (SIGKILL, by timeout(1)
 * or a test harness) left the tree's waits blocked for ever.  It ignores
 * the signals a terminal or timeout(1) sends to the group: it ends with
 * the mover, at the pipe's end.  0, or -1 with errno. */
int tfd_dom_watch(struct tfd_dom *d)
{
	static const int ign[] = { SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
		                   SIGUSR1, SIGUSR2, SIGPIPE, SIGTSTP,
		                   SIGTTIN, SIGTTOU };
	int p[2];
	pid_t w;
	char c;
	size_t i;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	w = fork();
	if (w < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (w > 0) {
		close(p[0]);
		return 0; /* p[1]: the mover's until it is gone */
	}
	for (i = 0; i < sizeof(ign) / sizeof(*ign); i++)
		signal(ign[i], SIG_IGN);
	if (dup2(p[0], 0) < 0)
		_exit(1);
	syscall(SYS_close_range, 1, ~0u, 0); /* a failure leaves them open */
	while (read(0, &c, 1) < 0 && errno == EINTR)
		;
	tfd_dom_end(d);
	_exit(0);
}
