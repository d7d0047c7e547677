/* SPDX-License-Identifier: MIT */
/*
 * The lock order of src/lockorder.h is checked at run time in the builds
 * that define TFD_DEBUG_LOCKS (the sanitizer builds): a lock taken out of
 * order stops the process with a message naming both locks.
 */
#include "t.h"

#include "lockorder.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef TFD_DEBUG_LOCKS
/* Run fn in a child; its stderr into buf; its wait status. */
static int in_child(void (*fn)(void), char *buf, size_t len)
{
	int p[2], st;
	ssize_t n;
	pid_t pid;

	CHECK_EQ(pipe(p), 0);
	pid = fork();
	CHECK_GE(pid, 0);
	if (pid == 0) {
		dup2(p[1], 2);
		fn();
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(p[0]);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	return st;
}

static void in_order(void)
{
	tfd_lock_taken(LK_SELECT);
	tfd_lock_taken(LK_SYNC);
	tfd_lock_taken(LK_FAMILY);
	tfd_lock_assert_held(LK_SYNC);
	tfd_lock_released(LK_FAMILY);
	tfd_lock_released(LK_SYNC);
	tfd_lock_released(LK_SELECT);
}

static void out_of_order(void)
{
	tfd_lock_taken(LK_FAMILY);
	tfd_lock_taken(LK_SELECT);
}

static void twice(void)
{
	tfd_lock_taken(LK_EPOLL);
	tfd_lock_taken(LK_EPOLL);
}

static void not_held(void)
{
	tfd_lock_assert_held(LK_FAMILY);
}
#endif

TEST(lock_order_is_checked_in_debug_builds)
{
#ifndef TFD_DEBUG_LOCKS
	t_skip("built without TFD_DEBUG_LOCKS (make SAN=... defines it)");
#else
	char err[512];
	int st;

	st = in_child(in_order, err, sizeof err);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "in order: %#x %s", st,
	       err);
	st = in_child(out_of_order, err, sizeof err);
	CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "status %#x", st);
	CHECKF(strstr(err, "took select_lock (api.c) while holding the "
			   "family's lock (engine/family.c)"),
	       "said: %s", err);
	st = in_child(twice, err, sizeof err);
	CHECKF(WIFSIGNALED(st) && strstr(err, "while holding lock "
					     "(preload/epoll.c)"),
	       "status %#x, said: %s", st, err);
	st = in_child(not_held, err, sizeof err);
	CHECKF(WIFSIGNALED(st) && strstr(err, "is not held"),
	       "status %#x, said: %s", st, err);
#endif
}
