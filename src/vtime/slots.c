/* SPDX-License-Identifier: MIT */
/*
 * slots.c - a slot for each thread of the tree and a record for each
 * process (domain.h): taken by a thread's creator before it starts (a
 * child's by the forking thread, `tfd exec`'s child's by tfd exec),
 * named once its thread id is known, claimed by a program that finds the
 * slot its parent took, freed when the thread ends (by the mover, once
 * /proc shows it gone).  Built into `tfd exec` too.
 */
#define _GNU_SOURCE
#include "vtime/domain.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

struct tfd_dom *tfd_dom;
struct dom_proc *tfd_dom_me;
static __thread int my = -1; /* this thread's slot */

static struct dom_slot *slot_of(struct tfd_dom *d, int i)
{
	return d && i >= 0 ? &d->slot[i] : NULL;
}

/* This thread's slot; a thread that existed before the library loaded
 * was given one by its tid (tfd_dom_slots_for_others()): found once. */
struct dom_slot *tfd_dom_self_slot(void)
{
	int32_t tid, pid;
	uint32_t i;

	if (my >= 0 || !tfd_dom)
		return slot_of(tfd_dom, my);
	tid = gettid();
	pid = getpid();
	for (i = 0; i < tfd_dom->hiwater; i++)
		if (__atomic_load_n(&tfd_dom->slot[i].tid, __ATOMIC_ACQUIRE) ==
		            tid &&
		    tfd_dom->slot[i].pid == pid) {
			my = (int)i;
			break;
		}
	return slot_of(tfd_dom, my);
}

static void raise_hiwater(uint32_t *hw, uint32_t i)
{
	uint32_t h = __atomic_load_n(hw, __ATOMIC_RELAXED);

	while (h <= i && !__atomic_compare_exchange_n(hw, &h, i + 1, 1,
	                                              __ATOMIC_RELEASE,
	                                              __ATOMIC_RELAXED))
		;
}

/* A free slot, taken for a thread that runs (tid -1 until it is known):
 * the mover holds time while it is on its way. */
static int slot_take_again(struct tfd_dom *d, int32_t pid);
static void slot_free(struct tfd_dom *d, int i);

static int slot_take(struct tfd_dom *d, int32_t pid)
{
	static __thread int again;
	int i;

	for (i = 0; i < DOM_SLOTS; i++) {
		int32_t free_tid = 0;
		struct dom_slot *s = &d->slot[i];

		if (__atomic_load_n(&s->tid, __ATOMIC_RELAXED) != 0 ||
		    !__atomic_compare_exchange_n(&s->tid, &free_tid, -1, 0,
		                                 __ATOMIC_ACQ_REL,
		                                 __ATOMIC_RELAXED))
			continue;
		s->pid = pid;
		s->parent = getpid();
		s->kind = 0;
		s->deadline = DOM_NEVER;
		s->looked = 0;
		s->poked = 0;
		s->inlib = 0;
		s->park = 0;
		s->thread = 0;
		__atomic_add_fetch(&s->gen, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&s->state, DS_RUN, __ATOMIC_RELEASE);
		__atomic_add_fetch(&d->actrun, ACT_ONE + 1, __ATOMIC_SEQ_CST);
		raise_hiwater(&d->hiwater, (uint32_t)i);
		return i;
	}
	if (!again) {
		again = 1;
		i = slot_take_again(d, pid);
		again = 0;
		return i;
	}
	return -1; /* full: the thread runs unseen (tfd-preload(7)) */
}

/* Full: free the slots of threads that are gone, then take one. */
static int slot_take_again(struct tfd_dom *d, int32_t pid)
{
	uint32_t i;

	for (i = 0; i < d->hiwater; i++) {
		struct dom_slot *s = &d->slot[i];

		if (s->tid > 0 && s->pid > 0 &&
		    syscall(SYS_tgkill, s->pid, s->tid, 0) < 0 && errno == ESRCH)
			slot_free(d, (int)i);
	}
	return slot_take(d, pid);
}

/* The slot names its thread from now on. */
static void slot_name(struct tfd_dom *d, int i, int32_t pid, int32_t tid)
{
	struct dom_slot *s = slot_of(d, i);

	if (!s)
		return;
	__atomic_store_n(&s->pid, pid, __ATOMIC_RELAXED);
	__atomic_store_n(&s->tid, tid, __ATOMIC_RELEASE);
	tfd_dom_changed(d);
}

static void slot_free(struct tfd_dom *d, int i)
{
	struct dom_slot *s = slot_of(d, i);

	if (!s)
		return;
	if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == DS_RUN)
		__atomic_sub_fetch(&d->actrun, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->state, DS_FREE, __ATOMIC_RELAXED);
	__atomic_store_n(&s->pid, 0, __ATOMIC_RELAXED); /* read by the mover
	                                                 * with tid -1 */
	__atomic_store_n(&s->tid, 0, __ATOMIC_RELEASE);
	tfd_dom_changed(d);
}

int tfd_dom_slot_take(int32_t pid)
{
	return slot_take(tfd_dom, pid);
}

void tfd_dom_slot_name(int i, int32_t pid, int32_t tid)
{
	slot_name(tfd_dom, i, pid, tid);
}

void tfd_dom_slot_free(int i)
{
	slot_free(tfd_dom, i);
}

/* `tfd exec`'s child, on its way: its library finds the slot by its pid
 * (tfd_dom_slots_adopt()), or tfd exec names it once fork() returns. */
int tfd_dom_reserve(struct tfd_dom *d)
{
	return slot_take(d, -1);
}

void tfd_dom_reserved(struct tfd_dom *d, int slot, pid_t pid)
{
	slot_name(d, slot, pid, pid);
}

/* The slot counted at the outermost entry, uncounted at its leave (the
 * thread's slot may change meanwhile: a fork, the join at load). */
static __thread struct dom_slot *counted;

void tfd_dom_inlib(int d)
{
	static __thread int cs, off;
	struct dom_slot *s = d > 0 ? slot_of(tfd_dom, my) : counted;

	/* Not cancelled while counted (preload.h). */
	if (d > 0 && !off) {
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
		off = 1;
	} else if (d < 0 && off) {
		off = 0;
		pthread_setcancelstate(cs, NULL);
	}

	if (d > 0)
		counted = s;
	else
		counted = NULL;
	if (s && !__atomic_add_fetch(&s->inlib, (uint32_t)d, __ATOMIC_SEQ_CST))
		tfd_dom_changed(tfd_dom); /* the mover may wait for this */
}

int tfd_dom_self(void)
{
	return my;
}

void tfd_dom_set_self(int i)
{
	struct dom_slot *s = slot_of(tfd_dom, i);

	my = i;
	if (s) /* (the thread's own call) */
		__atomic_store_n(&s->thread, (uint64_t)pthread_self(),
		                 __ATOMIC_RELEASE);
}

/* The slot of this process's thread whose pthread_t is thread, starting
 * or alive, and its generation: -1 if none (the slot of one that ended,
 * whose pthread_t a new thread has, is passed over). */
int tfd_dom_slot_of(uint64_t thread, uint32_t *gen)
{
	struct tfd_dom *d = tfd_dom;
	uint32_t k, hi = __atomic_load_n(&d->hiwater, __ATOMIC_ACQUIRE);
	int32_t pid = getpid();

	for (k = 0; k < hi; k++) {
		struct dom_slot *s = &d->slot[k];
		int32_t t = __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE);

		if (t == 0 || t == -3 ||
		    __atomic_load_n(&s->thread, __ATOMIC_ACQUIRE) != thread ||
		    __atomic_load_n(&s->pid, __ATOMIC_RELAXED) != pid ||
		    (t > 0 && syscall(SYS_tgkill, pid, t, 0) != 0))
			continue;
		*gen = __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE);
		return (int)k;
	}
	return -1;
}

void tfd_dom_told_signal(struct tfd_dom *d, int32_t pid)
{
	dom_signalled(d, pid, 0);
}

/* The slot i taken for a thread made: its pthread_t, known to its maker
 * first (a join may come before the thread runs). */
void tfd_dom_slot_thread(int i, uint64_t thread)
{
	struct dom_slot *s = slot_of(tfd_dom, i);

	if (s)
		__atomic_store_n(&s->thread, thread, __ATOMIC_RELEASE);
}

struct dom_proc *tfd_dom_proc_take(int32_t pid)
{
	struct tfd_dom *d = tfd_dom;
	int i;

	for (i = 0; i < DOM_PROCS; i++) {
		int32_t zero = 0;
		struct dom_proc *p = &d->proc[i];

		if (__atomic_load_n(&p->pid, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&p->pid, &zero, -1, 0,
		                                __ATOMIC_ACQ_REL,
		                                __ATOMIC_RELAXED)) {
			p->kwaiters = 0;
			p->agent = 0;
			p->alone = 0;
			p->uring = 0;
			p->next_due = DOM_NEVER;
			p->skipped = 0;
			p->relook = p->relooked = 0;
			p->relook_act = 0;
			__atomic_store_n(&p->pid, pid, __ATOMIC_RELEASE);
			raise_hiwater(&d->phiwater, (uint32_t)i);
			return p;
		}
	}
	return NULL;
}

/* A process record left by this pid's earlier image, or a dead process
 * whose pid came back. */
void tfd_dom_procs_forget(int32_t pid)
{
	uint32_t i;

	for (i = 0; i < tfd_dom->phiwater; i++) {
		int32_t p = pid;

		__atomic_compare_exchange_n(&tfd_dom->proc[i].pid, &p, 0, 0,
		                            __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	}
}

/* A slot that this process's parent took for it and names once its
 * fork or spawn has returned there: 1 while one may be on its way. */
static int slot_on_its_way(void)
{
	int32_t parent = getppid();
	uint32_t i;

	for (i = 0; i < tfd_dom->hiwater; i++)
		if (__atomic_load_n(&tfd_dom->slot[i].tid, __ATOMIC_ACQUIRE) <
		            0 &&
		    tfd_dom->slot[i].pid != DOM_UNNAMED &&
		    tfd_dom->slot[i].parent == parent)
			return 1;
	return 0;
}

/* The slot names its thread from now on, if nobody named it first:
 * taken (tid -1) -> being named (-3) -> named, so that of two namers
 * (a child and its starter) one does it, and the mover holds time
 * meanwhile. */
static int slot_claim(struct dom_slot *s, int32_t pid, int32_t tid)
{
	int32_t taken = -1;

	if (!__atomic_compare_exchange_n(&s->tid, &taken, -3, 0,
	                                 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return 0;
	__atomic_store_n(&s->pid, pid, __ATOMIC_RELAXED);
	__atomic_store_n(&s->tid, tid, __ATOMIC_RELEASE);
	tfd_dom_changed(tfd_dom);
	return 1;
}

/* A slot taken for a child of this process's parent that the C library
 * started (system, popen: tfd_dom_child_slot), claimed. */
static int slot_unnamed(int32_t pid, int32_t tid)
{
	int32_t parent = getppid();
	uint32_t i;

	for (i = 0; i < tfd_dom->hiwater; i++) {
		struct dom_slot *s = &tfd_dom->slot[i];

		if (__atomic_load_n(&s->tid, __ATOMIC_ACQUIRE) == -1 &&
		    s->pid == DOM_UNNAMED && s->parent == parent &&
		    slot_claim(s, pid, tid))
			return (int)i;
	}
	return -1;
}

/* The slots of this pid, but the caller's (its earlier image's threads,
 * gone with the execve). */
int tfd_dom_slots_adopt(int32_t pid, int32_t tid)
{
	uint32_t i;
	int mine = -1, tries;

	for (tries = 0; tries < 100000; tries++) {
		for (i = 0; i < tfd_dom->hiwater && mine < 0; i++)
			if (__atomic_load_n(&tfd_dom->slot[i].tid,
			                    __ATOMIC_ACQUIRE) == tid &&
			    tfd_dom->slot[i].pid == pid)
				mine = (int)i;
		if (mine < 0)
			mine = slot_unnamed(pid, tid);
		if (mine >= 0 || !slot_on_its_way())
			break;
		sched_yield(); /* the parent is about to name it */
	}
	for (i = 0; i < tfd_dom->hiwater; i++) {
		struct dom_slot *s = &tfd_dom->slot[i];

		if (s->pid != pid || s->tid == 0 || (int)i == mine)
			continue;
		/* The old image's threads, and those it was starting (a
		 * thread's slot: its maker's pid), which never start. */
		if (s->tid > 0 || (s->tid == -1 && s->parent == pid))
			tfd_dom_slot_free((int)i);
	}
	if (mine >= 0 &&
	    __atomic_load_n(&tfd_dom->slot[mine].state, __ATOMIC_ACQUIRE) !=
	            DS_RUN) {
		tfd_dom->slot[mine].state = DS_RUN;
		__atomic_add_fetch(&tfd_dom->actrun, ACT_ONE + 1,
		                   __ATOMIC_SEQ_CST);
	}
	return mine;
}

/* Threads that exist already (started before the library, by another
 * library's constructor): a slot each. */
void tfd_dom_slots_for_others(int32_t pid, int32_t self)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		int32_t tid = (int32_t)atoi(e->d_name);
		int i;

		if (tid <= 0 || tid == self)
			continue;
		i = tfd_dom_slot_take(pid);
		tfd_dom_slot_name(i, pid, tid);
	}
	closedir(dir);
}

/* Slot i's process, if a thread has it; else 0. */
int32_t tfd_dom_slot_pid(const struct tfd_dom *d, uint32_t i)
{
	int32_t pid = __atomic_load_n(&d->slot[i].pid, __ATOMIC_RELAXED);

	return pid > 0 && __atomic_load_n(&d->slot[i].tid, __ATOMIC_RELAXED)
	               ? pid
	               : 0;
}

/* 1 if pid is a process of the tree: a thread of it has a slot. */
int tfd_dom_pid_in_tree(int32_t pid)
{
	struct tfd_dom *d = tfd_dom;
	uint32_t i, n;

	if (!d || pid <= 0)
		return 0;
	n = __atomic_load_n(&d->hiwater, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && i < DOM_SLOTS; i++)
		if (tfd_dom_slot_pid(d, i) == pid)
			return 1;
	return 0;
}

/* system() and popen() start their child inside the C library (its own
 * posix_spawn, which we do not see): a slot is taken for it before, a
 * child on its way for the mover (time holds), which the child claims
 * when its program loads the library (tfd_dom_slots_adopt()), or its starter
 * names once it knows the child's pid (popen), or frees when done (a
 * child that did not load the library: system). */
int tfd_dom_child_slot(void)
{
	return tfd_dom_slot_take(DOM_UNNAMED);
}

void tfd_dom_child_name(int i, int32_t pid)
{
	struct dom_slot *s = slot_of(tfd_dom, i);

	if (s)
		slot_claim(s, pid, pid);
}

void tfd_dom_child_done(int i)
{
	struct dom_slot *s = slot_of(tfd_dom, i);
	int32_t taken = -1;

	/* Unclaimed, it is free from the exchange on: RUN is uncounted. */
	if (s && __atomic_compare_exchange_n(&s->tid, &taken, 0, 0,
	                                     __ATOMIC_ACQ_REL,
	                                     __ATOMIC_RELAXED)) {
		__atomic_sub_fetch(&tfd_dom->actrun, 1, __ATOMIC_SEQ_CST);
		tfd_dom_changed(tfd_dom);
	}
}
