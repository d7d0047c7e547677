/* SPDX-License-Identifier: MIT */
/*
 * tree.c - the threads and processes of a virtual-time domain, from the
 * moment they exist: a thread's slot is taken by its creator before it
 * starts, a child's by the forking thread before the fork, so that the
 * mover never sees a moment where a thread of the tree runs unseen.  A
 * thread or a process that ends leaves its slots to the mover, which frees
 * them once /proc shows them gone.
 */
#include "preload/preload.h"
#include "preload/domain.h"

#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <unistd.h>

struct start {
	void *(*fn)(void *);
	void *arg;
	int slot;
};

/* A thread that ends keeps its slot, running, until it is gone: the
 * thread that joins it wakes only then, and time must not move between.
 * The mover frees the slot when /proc no longer shows the thread. */
static void *start_in_tree(void *p)
{
	struct start s = *(struct start *)p;

	free(p);
	tfd_dom_set_self(s.slot);
	tfd_dom_slot_name(s.slot, getpid(), gettid());
	return s.fn(s.arg);
}

int tfd_tree_thread(pthread_t *th, const pthread_attr_t *attr,
                    void *(*fn)(void *), void *arg)
{
	struct start *s = malloc(sizeof(*s));
	int e;

	if (!s)
		return EAGAIN;
	s->fn = fn;
	s->arg = arg;
	s->slot = tfd_dom_slot_take(getpid());
	e = R(pthread_create)(th, attr, start_in_tree, s);
	if (e) {
		tfd_dom_slot_free(s->slot);
		free(s);
	}
	return e;
}

/* In a child of fork(), before its program runs on: the locks of the
 * preload's parts, which another thread of the parent may have held when
 * it forked (a timed wait on virtual time publishing a deadline, an
 * agent, an epoll registration), are made anew: the child has none of
 * the parent's other threads to let go of them.  Not taken before the
 * fork: the engine's handler, which runs first, takes the engine's lock,
 * and these come before it in the lock order. */
static void forked_child(void)
{
	tfd_dom_locks_forked();
	tfd_epoll_forked();
	tfd_signals_forked();
	tfd_sigtimers_forked();
	tfd_rawsys_forked();
}

void tfd_tree_init(void)
{
	pthread_atfork(NULL, NULL, forked_child);
}

pid_t tfd_tree_fork(void)
{
	int slot = tfd_dom_slot_take(-1);
	pid_t pid = R(fork)();

	if (pid == 0) {
		tfd_dom_forked(slot);
	} else if (pid > 0) {
		tfd_dom_slot_name(slot, pid, pid);
		/* A child that shares none of our timers (the family's
		 * records all taken) reads their files where we do not see
		 * it: a readable one is not skipped any more (domain.c). */
		tfd_dom_publish();
	} else {
		tfd_dom_slot_free(slot);
	}
	return pid;
}

/* posix_spawn: the child runs no code of ours before its program loads
 * the library, which finds the slot by its thread id. */
int tfd_tree_spawn(int path, pid_t *pid, const char *file,
                   const posix_spawn_file_actions_t *fa,
                   const posix_spawnattr_t *at, char *const argv[],
                   char *const envp[])
{
	int slot = tfd_dom_slot_take(-1);
	pid_t child = 0;
	int e = path ? R(posix_spawnp)(&child, file, fa, at, argv, envp)
	             : R(posix_spawn)(&child, file, fa, at, argv, envp);

	if (e)
		tfd_dom_slot_free(slot);
	else
		tfd_dom_slot_name(slot, child, child);
	if (!e && pid)
		*pid = child;
	return e;
}
