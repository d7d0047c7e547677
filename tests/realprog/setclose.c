/* SPDX-License-Identifier: MIT */
/*
 * setclose - under the drop-in, a set's number closed or replaced by the
 * program's own calls ends the set, as tfd_close(3) does (tfd_set(3)):
 * close(2), close_range(2), closefrom(3), and dup2(2) and dup3(2) onto
 * it.  Each time, an eventfd made after takes the number, and the set
 * calls on it fail with EINVAL (no set there); a set made after works.
 * Linked with libtfd.so: under tfd exec, the preload's set calls are the
 * ones it makes.  Run as it is, with no preload, it prints "no" for each
 * (tfd_set(3), BUGS).  And the look at every close(2) that this takes
 * needs no lock: a handler's close(2) that interrupts a set call, and a
 * thread's tfd_create() and tfd_close() beside another's set calls (the
 * engine's own close(2) under its lock), both hung on the set's lock
 * when it did.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "tfd.h"

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE 2
#endif

enum how { CLOSE, CLOSE_RANGE, CLOSE_RANGE_UNSHARED, CLOSEFROM, DUP2, DUP3 };

static const char *name[] = { "close(2)", "close_range(2)",
	                      "close_range(2), CLOSE_RANGE_UNSHARE",
	                      "closefrom(3)", "dup2(2) onto it",
	                      "dup3(2) onto it" };

/* A set with a key armed 100 s ahead, ended by how: 1 if its number then
 * names no set. */
static int gone(enum how how)
{
	const struct itimerspec far = { { 0, 0 }, { 100, 0 } };
	struct itimerspec cur;
	int s = tfd_set_create(CLOCK_MONOTONIC, 0), e = -1;

	if (s < 0 || tfd_set_settime(s, 7, 0, &far, NULL) != 0)
		return 0;
	switch (how) {
	case CLOSE:
		close(s);
		break;
	case CLOSE_RANGE:
		close_range((unsigned)s, (unsigned)s, 0);
		break;
	case CLOSE_RANGE_UNSHARED:
		close_range((unsigned)s, (unsigned)s, CLOSE_RANGE_UNSHARE);
		break;
	case CLOSEFROM:
		closefrom(s);
		break;
	case DUP2:
	case DUP3:
		e = eventfd(0, 0);
		if (how == DUP2 ? dup2(e, s) != s : dup3(e, s, 0) != s)
			return 0;
		close(e);
		break;
	}
	if (how != DUP2 && how != DUP3 && (e = eventfd(0, 0)) != s)
		return 0;
	errno = 0;
	e = tfd_set_gettime(s, 7, &cur) < 0 && errno == EINVAL;
	close(s);
	return e;
}

/* A set made after: its key comes due and is read. */
static int works(void)
{
	const struct itimerspec soon = { { 0, 0 }, { 0, 20000000 } };
	struct tfd_expiry rec[4];
	int s = tfd_set_create(CLOCK_MONOTONIC, 0);
	ssize_t n;

	if (s < 0 || tfd_set_settime(s, 9, 0, &soon, NULL) != 0)
		return 0;
	n = tfd_set_read(s, rec, sizeof(rec)); /* bytes, as read(2) */
	return n == (ssize_t)sizeof(rec[0]) && rec[0].key == 9 &&
	       rec[0].count == 1 && tfd_close(s) == 0;
}

static volatile long handled;

static void on_alarm(int sig)
{
	int e = errno; /* a handler keeps it (close(-1) sets EBADF) */

	(void)sig;
	close(-1);
	handled++;
	errno = e;
}

/* Set calls, interrupted every 200 us by a handler's close(2). */
static int handler_closes(void)
{
	const struct itimerspec far = { { 0, 0 }, { 100, 0 } };
	struct itimerval every = { { 0, 200 }, { 0, 200 } }, off = { 0 };
	struct itimerspec cur;
	int s = tfd_set_create(CLOCK_MONOTONIC, 0);
	long i;

	if (s < 0 || tfd_set_settime(s, 7, 0, &far, NULL) != 0)
		return 0;
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &every, NULL);
	for (i = 0; i < 300000 || handled < 100; i++)
		tfd_set_gettime(s, 7, &cur);
	setitimer(ITIMER_REAL, &off, NULL);
	return tfd_close(s) == 0;
}

static int rearming_set;
static int stop; /* atomic */

static void *rearm(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); i++) {
		struct itimerspec v = { { 0, 0 }, { 10 + (i & 1) * 10, 0 } };

		tfd_set_settime(rearming_set, 1, 0, &v, NULL);
	}
	return NULL;
}

/* Timers made and closed beside another thread's set calls. */
static int beside_set_calls(void)
{
	pthread_t t;
	int i, ok = 1;

	rearming_set = tfd_set_create(CLOCK_MONOTONIC, 0);
	if (rearming_set < 0 ||
	    pthread_create(&t, NULL, rearm, NULL) != 0)
		return 0;
	for (i = 0; i < 5000; i++) {
		int fd = tfd_create(CLOCK_MONOTONIC, 0);

		ok &= fd >= 0 && tfd_close(fd) == 0;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	return ok && tfd_close(rearming_set) == 0;
}

int main(void)
{
	int how;

	for (how = CLOSE; how <= DUP3; how++)
		printf("ended by %s: %s\n", name[how],
		       gone((enum how)how) ? "yes" : "no");
	printf("a set made after works: %s\n", works() ? "yes" : "no");
	printf("a handler's close(2) beside set calls: %s\n",
	       handler_closes() ? "done" : "failed");
	printf("timers made and closed beside set calls: %s\n",
	       beside_set_calls() ? "done" : "failed");
	return 0;
}
