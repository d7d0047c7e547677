/* SPDX-License-Identifier: MIT */
/*
 * noalloc - a single-threaded program's malloc, calloc, realloc and free
 * (it defines them, over glibc's) are never called by a thread it did
 * not start, while 32 periodic timers are polled, timers are made and
 * closed, and an absolute CLOCK_REALTIME timer is armed: a program may
 * use an allocator that is not thread-safe, and Linux's timerfd never
 * calls into it.  And the threads it did not start: at most one with
 * monotonic timers, two once a realtime one is made (the clock watcher,
 * tfd(7), RESOURCES).  The same in a child forked with the timers,
 * which arms the realtime one again and polls the others: the child's
 * service thread then delivers a timer another process made.  Natively
 * the counts are 0 and the answers yes;
 * through libtfd-preload.so they must be the same (tests/realprog/run.sh
 * compares the output; not in a sanitizer's build, whose run-time has
 * an allocator and threads of its own).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The allocator, counted when a thread other than main's calls it. */
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);

static __thread int program_thread;
static long foreign_allocs;

static void allocating(void)
{
	if (!program_thread)
		__atomic_add_fetch(&foreign_allocs, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
	allocating();
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	allocating();
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	allocating();
	return __libc_realloc(p, n);
}

void free(void *p)
{
	if (p)
		allocating();
	__libc_free(p);
}

/* Rounds of poll(2) on the timers, each read when readable. */
static void poll_rounds(struct pollfd *p, int n, int rounds)
{
	uint64_t count;
	int i;

	while (rounds-- > 0) {
		poll(p, (nfds_t)n, -1);
		for (i = 0; i < n; i++)
			if ((p[i].revents & POLLIN) &&
			    read(p[i].fd, &count, sizeof(count)) != sizeof(count))
				exit(1);
	}
}

/* Threads of the process but its first. */
static int others(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = -1;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 2; /* . and .. */
}

/* A child with the timers: real armed again once the parent has closed
 * it, the others polled. */
static void child(struct pollfd *p, int real, const struct itimerspec *far)
{
	int status, go[2];
	pid_t pid;
	char c;

	if (pipe(go) != 0 || (pid = fork()) < 0)
		exit(1);
	if (pid > 0) {
		close(real);
		close(go[0]);
		close(go[1]);
	}
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 0)
			exit(1);
		__atomic_store_n(&foreign_allocs, 0, __ATOMIC_RELAXED);
		timerfd_settime(real,
		                TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
		                far, NULL);
		poll_rounds(p, 32, 20);
		printf("child: allocator calls from threads not the "
		       "program's: %ld, at most 2 of them: %s\n",
		       __atomic_load_n(&foreign_allocs, __ATOMIC_RELAXED),
		       others() >= 0 && others() <= 2 ? "yes" : "no");
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || status != 0)
		exit(1);
}

int main(void)
{
	struct itimerspec its, far = { .it_value = { 3600, 0 } };
	struct pollfd p[32];
	struct timespec now;
	int i, k, mono, real;

	program_thread = 1;
	for (i = 0; i < 32; i++) {
		its.it_value.tv_sec = its.it_interval.tv_sec = 0;
		its.it_value.tv_nsec = its.it_interval.tv_nsec =
			(i % 3 + 1) * 1000000L;
		p[i].fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
		p[i].events = POLLIN;
		if (timerfd_settime(p[i].fd, 0, &its, NULL) != 0)
			exit(1);
	}
	poll_rounds(p, 32, 50);
	for (k = 0; k < 100; k++)
		close(timerfd_create(CLOCK_MONOTONIC, 0));
	mono = others();
	real = timerfd_create(CLOCK_REALTIME, 0);
	clock_gettime(CLOCK_REALTIME, &now);
	far.it_value.tv_sec += now.tv_sec;
	timerfd_settime(real, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
	                &far, NULL);
	poll_rounds(p, 32, 20);
	printf("threads not the program's: at most 1 with monotonic timers: "
	       "%s, at most 2 with a realtime one: %s\n",
	       mono >= 0 && mono <= 1 ? "yes" : "no",
	       others() >= 0 && others() <= 2 ? "yes" : "no");
	fflush(stdout);
	child(p, real, &far);
	for (i = 0; i < 32; i++)
		close(p[i].fd);
	printf("allocator calls from threads not the program's: %ld\n",
	       __atomic_load_n(&foreign_allocs, __ATOMIC_RELAXED));
	return 0;
}
