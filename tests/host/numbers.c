/* SPDX-License-Identifier: MIT */
/*
 * numbers.c - the program's descriptor table is the program's: whatever
 * the library does around its timers (here: fork with timers open), a
 * number the program closes is the one its next open() gets, as on Linux,
 * where nothing else opens a file in the table meanwhile.
 */
#include "host.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>

#define ROUNDS 60
#define TIMERS 8
#define FORKS 3

static int go;       /* [atomic] the checker closes and reopens k */
static int idle;     /* [atomic] the checker stopped, holding k */
static int done;     /* [atomic] */
static int k;        /* the checker's number: the lowest free one */
static long checks, mismatches;

/* close(k); open(): k again, unless something else took it meanwhile. */
static void *checker(void *arg)
{
	(void)arg;
	for (;;) {
		__atomic_store_n(&idle, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) {
			if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
				return NULL;
			sched_yield();
		}
		__atomic_store_n(&idle, 0, __ATOMIC_RELEASE);
		while (__atomic_load_n(&go, __ATOMIC_ACQUIRE)) {
			int fd, tries = 0;

			close(k);
			fd = open("/dev/null", O_RDONLY);
			checks++;
			if (fd == k)
				continue;
			mismatches++;
			/* Whatever held k lets go of it soon: take k back. */
			while (fd != k && tries++ < 100000) {
				if (fd >= 0)
					close(fd);
				sched_yield();
				fd = open("/dev/null", O_RDONLY);
			}
			if (fd != k)
				abort();
		}
	}
}

/* One thread makes timers and forks (children exit at once) while another
 * closes and reopens the lowest free number: it always gets it back. */
HOST_CASE(numbers_lowest_free_while_forking, 0)
{
	int fd[TIMERS], r, i, j, st;
	pthread_t th;

	k = open("/dev/null", O_RDONLY);
	if (k < 0)
		return 1;
	for (i = 0; i < TIMERS; i++)
		fd[i] = -1;
	if (pthread_create(&th, NULL, checker, NULL) != 0)
		return 1;
	for (r = 0; r < ROUNDS; r++) {
		/* The checker holds k: new numbers are above it. */
		while (!__atomic_load_n(&idle, __ATOMIC_ACQUIRE))
			sched_yield();
		for (i = 0; i < TIMERS; i++) {
			if (fd[i] >= 0)
				T_close(fd[i]);
			fd[i] = h_timer(T_NONBLOCK, 1, 1);
			if (fd[i] < 0)
				return 1;
		}
		__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&idle, __ATOMIC_ACQUIRE))
			sched_yield();
		for (j = 0; j < FORKS; j++) {
			pid_t p = fork();

			if (p == 0)
				_exit(0);
			if (p < 0 || waitpid(p, &st, 0) != p)
				return 1;
		}
		__atomic_store_n(&go, 0, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	for (i = 0; i < TIMERS; i++)
		T_close(fd[i]);
	close(k);
	say("checked: %s", checks > 0 ? "yes" : "no");
	say("another number than the lowest free one: %ld times", mismatches);
	return 0;
}
