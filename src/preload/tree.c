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
#include "vtime/vtime.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
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
	if (tfd_gosys_on) { /* its maker may have blocked every signal */
		sigset_t ill;

		sigemptyset(&ill);
		sigaddset(&ill, SIGILL);
		pthread_sigmask(SIG_UNBLOCK, &ill, NULL);
	}
	tfd_dom_set_self(s.slot);
	tfd_dom_slot_name(s.slot, getpid(), gettid());
	return s.fn(s.arg);
}

int tfd_tree_thread(pthread_t *th, const pthread_attr_t *attr,
                    void *(*fn)(void *), void *arg)
{
	struct start *s = malloc(sizeof(*s));
	int e, slot;

	if (!s)
		return EAGAIN;
	s->fn = fn;
	s->arg = arg;
	s->slot = tfd_dom_slot_take(getpid());
	slot = s->slot;
	e = R(pthread_create)(th, attr, start_in_tree, s);
	if (e) {
		tfd_dom_slot_free(slot);
		free(s);
	} else {
		tfd_dom_slot_thread(slot, (uint64_t)*th);
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
	tfd_start_places_forked();
	tfd_slack_program(); /* a fork we did not see: its own in effect */
}

void tfd_tree_init(void)
{
	pthread_atfork(NULL, tfd_epoll_fork_parent, forked_child);
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
		 * it: published again, a readable one is one that may be
		 * read elsewhere (vtime's step.c). */
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

/* system(): the C library starts the shell with a posix_spawn of its own,
 * which we do not see, and waits for it: a slot taken before is the
 * shell's to claim when it loads the library, and time holds until then,
 * so that it does not move while the child is on its way.  A shell that
 * does not load the library holds time until it ends. */
int tfd_tree_system(const char *cmd)
{
	int slot = tfd_dom_child_slot(), r, e;

	r = R(system)(cmd);
	e = errno;
	tfd_dom_child_done(slot);
	errno = e;
	return r;
}

/* The children of this thread (/proc/self/task/TID/children: the
 * kernel's list, space-separated), malloc'd, or NULL. */
static char *children_text(void)
{
	char path[64], *buf = NULL, *more;
	size_t size = 0, len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", gettid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	do {
		if (len + 1 >= size) {
			size = size ? 2 * size : 256;
			more = realloc(buf, size);
			if (!more) {
				free(buf);
				R(close)(fd);
				return NULL;
			}
			buf = more;
		}
		n = read(fd, buf + len, size - 1 - len);
		if (n > 0)
			len += (size_t)n;
	} while (n > 0);
	R(close)(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[len] = 0;
	return buf;
}

/* The child in after that is not in before, or 0. */
static pid_t new_child(const char *before, const char *after)
{
	char key[24];
	const char *p = after;
	pid_t found = 0;

	while (*p) {
		char *end;
		long c = strtol(p, &end, 10);

		if (c <= 0)
			break;
		p = end;
		snprintf(key, sizeof(key), " %ld ", c);
		/* before is " a b c " once padded, as key is */
		if (!strstr(before, key)) {
			if (found)
				return 0; /* two: not ours to tell */
			found = (pid_t)c;
		}
		while (*p == ' ' || *p == '\n')
			p++;
	}
	return found;
}

/* popen(): the same, but the caller goes on while the child runs, and
 * learns its pid from the kernel's list of its children: the slot is
 * named after it, as a spawn's is, so that a child that does not load
 * the library is looked at in /proc, not waited for.  Where the kernel
 * keeps no such list, the slot is freed at once (time may then move
 * while the child is on its way). */
FILE *tfd_tree_popen(const char *cmd, const char *mode)
{
	int slot = tfd_dom_child_slot(), e;
	char *before = children_text(), *padded = NULL, *after = NULL;
	pid_t child = 0;
	FILE *f;

	f = R(popen)(cmd, mode);
	e = errno;
	if (f && before) {
		after = children_text();
		padded = malloc(strlen(before) + 3);
	}
	if (after && padded) {
		char *q;

		/* " a b c ": each pid between spaces */
		snprintf(padded, strlen(before) + 3, " %s ", before);
		for (q = padded; *q; q++)
			if (*q == '\n')
				*q = ' ';
		child = new_child(padded, after);
	}
	if (child > 0)
		tfd_dom_child_name(slot, child);
	else
		tfd_dom_child_done(slot);
	free(before);
	free(after);
	free(padded);
	errno = e;
	return f;
}
