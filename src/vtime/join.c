/* SPDX-License-Identifier: MIT */
/*
 * join.c - a process's life in a virtual-time domain: it joins at load
 * (the domain `tfd exec` named, or one of its own with a mover thread),
 * its forked children join with the slot taken for them, and its end is
 * told (exit(), a first thread that ends alone).
 */
#define _GNU_SOURCE
#include "backend.h"
#include "core/time.h"
#include "host.h"
#include "vtime/domain.h"

#include <pthread.h>

#include <signal.h>
#include <string.h>
#include <unistd.h>

/* DOM_POKE_SIG: the wait it interrupts looks again; a wait in slices
 * ends its slice. */
static void on_poke(int sig)
{
	(void)sig;
	tfd_dom_slice_poked();
}

static int never_stop(void *ctx)
{
	(void)ctx;
	return 0;
}

static void traced(void *ctx, int64_t from, int64_t to)
{
	(void)ctx;
	tfd_dom_host.moved(to - from);
}

static void *mover_thread(void *arg)
{
	sigset_t all;

	sigfillset(&all); /* the program's signals are for its threads */
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	tfd_dom_move(arg, 0, never_stop, traced, NULL);
	return NULL;
}

/* At load, on the virtual backend: join the domain of TFD_DOMAIN, or
 * make one of our own with a mover thread (a program run on virtual time
 * without `tfd exec`: its forked children share it, programs it runs get
 * their own).  0, or -1: no domain (each wait then moves time by itself
 * to its own deadline, with no slack). */
struct tfd_dom_host tfd_dom_host;

int tfd_dom_join(const char *name, const struct tfd_dom_host *host)
{
	const struct tfd_backend *be = host->be;
	struct sigaction sa;
	int32_t pid = getpid(), tid = gettid();
	struct tfd_dom *own = NULL;
	pthread_t th;
	int my;

	tfd_dom_host = *host; /* (its calls are made without a domain too) */
	if (!be->virtual_now || !be->virtual_start || !be->virtual_move_to ||
	    !be->next_due || !be->virtual_unread)
		return -1; /* not a backend of virtual clocks */
	tfd_dom = name && *name ? tfd_dom_map(name) : NULL;
	if (!tfd_dom) {
		tfd_dom = own = tfd_dom_create(NULL, 0);
		if (!tfd_dom)
			return -1;
		tfd_dom_inherit(own); /* what this process came with */
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_poke;
	sa.sa_flags = SA_RESTART;
	tfd_dom_host.poke_install(&sa); /* the program's action kept */
	tfd_dom_procs_forget(pid);
	tfd_dom_me = tfd_dom_proc_take(pid);
	my = tfd_dom_slots_adopt(pid, tid);
	if (my < 0) {
		my = tfd_dom_slot_take(pid);
		tfd_dom_slot_name(my, pid, tid);
	}
	tfd_dom_set_self(my);
	tfd_dom_slots_for_others(pid, tid);
	tfd_dom_engine_start();
	if (own) { /* its mover, started last: not a thread of the program's */
		int was = tfd_dom_host.enter();

		tfd_own_thread(&th, 0, mover_thread, own, 1);
		tfd_dom_host.leave(was);
	}
	tfd_dom_changed(tfd_dom);
	return 0;
}

/* exit(): the process is on its way out (a sanitizer's report, the
 * runtime's threads): its timers are no deadline any more, and the
 * exiting thread counts as running until /proc shows it gone (but while
 * it waits in ours or is parked: verdict.c, leaving_waits), so that
 * time does not move between the program's end and its parent seeing
 * it. */
__attribute__((destructor)) static void leaving(void)
{
	struct dom_proc *me = tfd_dom_me;
	struct dom_slot *s;

	if (!tfd_dom || tfd_dom_host.inside())
		return;
	if (me)
		__atomic_store_n(&me->next_due, DOM_NEVER, __ATOMIC_SEQ_CST);
	s = tfd_dom_self_slot();
	if (s)
		__atomic_or_fetch(&s->inlib, DOM_LEAVING, __ATOMIC_SEQ_CST);
	tfd_dom_changed(tfd_dom);
}

/* An io_uring made: the kernel's workers (threads of this process that
 * no wait of ours sees) may do its operations while every thread of the
 * tree waits; the mover looks at them before time moves (busy.c). */
void tfd_dom_uses_uring(void)
{
	if (tfd_dom_me && !__atomic_load_n(&tfd_dom_me->uring,
	                                   __ATOMIC_RELAXED)) {
		__atomic_store_n(&tfd_dom_me->uring, 1, __ATOMIC_RELEASE);
		tfd_dom_changed(tfd_dom);
	}
}

/* pthread_exit() in the process's first thread, which ends while the
 * others go on.  /proc shows it a zombie until the last one ends, as it
 * shows the first thread of a process on its way out (exit_group): the
 * mover, told which, frees its slot once it is a zombie instead of
 * holding time until the process ends (which, the others waiting for
 * time, it never did). */
void tfd_dom_first_ends(void)
{
	struct dom_slot *s;

	if (!tfd_dom || tfd_dom_host.inside() || gettid() != getpid())
		return;
	if (tfd_dom_me)
		__atomic_store_n(&tfd_dom_me->alone, 1, __ATOMIC_SEQ_CST);
	s = tfd_dom_self_slot();
	if (s) {
		__atomic_or_fetch(&s->inlib, DOM_ALONE, __ATOMIC_SEQ_CST);
		tfd_dom_changed(tfd_dom);
	}
}

/* After fork(), in the child, with the slot the parent took for it. */
void tfd_dom_forked(int slot)
{
	int32_t pid = getpid();
	uint32_t uring = tfd_dom_me ? tfd_dom_me->uring : 0;

	tfd_dom_set_self(slot);
	tfd_dom_host.sigtimers_forked();
	tfd_dom_procs_forget(pid);
	tfd_dom_me = tfd_dom_proc_take(pid);
	if (tfd_dom_me) /* its parent's rings are its too */
		__atomic_store_n(&tfd_dom_me->uring, uring, __ATOMIC_RELEASE);
	tfd_dom_slot_name(slot, pid, pid);
	/* The timers it inherited it shares with its parent (tfd(7), FORK
	 * AND EXEC): the process that made each delivers it, this one once
	 * it takes one over.  Its own get an agent of their own. */
}
