/* SPDX-License-Identifier: MIT */
/*
 * vthreads - virtual time with threads (`tfd exec --backend virtual`):
 * time moves only once the other threads are blocked, and a thread's
 * sleep is a deadline for the waits of the others, as in Go's synctest.
 * Prints what happened; run.sh compares it with the expected lines.  On
 * real time it would take an hour.
 *
 * 1. A thread sleeps 50 ms and writes to a pipe; meanwhile the main thread
 *    polls the pipe and a timer due in 10 s: the pipe comes first.
 * 2. A thread sleeps 50 ms and sends SIGUSR1; the main thread blocks in
 *    read() on a disarmed timer: EINTR.
 * 3. A thread computes for 0.5 s of real time and never blocks; the main
 *    thread waits for a timer due in an hour: time moves anyway.
 * 4. Ten children end (exit() and _exit() in turn) while their parent
 *    sleeps 2 s: each sleep takes 2 s (time once stood still for good
 *    when a child was seen on its way out and not looked at again).
 * 5. The main thread ends with pthread_exit() while another sleeps 90 s:
 *    the other wakes after 90 s (time stood still: a first thread that
 *    has ended looks like a process on its way out), and its return ends
 *    the process (the library's agent kept it alive: tfd(7)).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int pipefd[2];
static pthread_t main_thread;
static int stop_spinning;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void *sleep_then_write(void *arg)
{
	(void)arg;
	sleep_ms(50);
	if (write(pipefd[1], "x", 1) != 1)
		perror("write");
	return NULL;
}

static void *sleep_then_signal(void *arg)
{
	(void)arg;
	sleep_ms(50);
	pthread_kill(main_thread, SIGUSR1);
	return NULL;
}

static void *spin(void *arg)
{
	struct timespec t0, t;

	(void)arg;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	while (!__atomic_load_n(&stop_spinning, __ATOMIC_RELAXED) &&
	       (t.tv_sec - t0.tv_sec) * 1000000000L +
	                                 (t.tv_nsec - t0.tv_nsec) < 500000000L);
	return NULL;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *sleep_then_print(void *arg)
{
	int64_t t0 = mono_ns();

	(void)arg;
	sleep(90);
	printf("5: the first thread gone, a sleep of 90 s took %lld ns\n",
	       (long long)(mono_ns() - t0));
	/* The last thread ends, and with it the process (exit(0), which
	 * flushes the line above), though the library's agent runs. */
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
}

static int64_t mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

int main(void)
{
	struct itimerspec ten = { { 0, 0 }, { 10, 0 } };
	struct itimerspec hour = { { 0, 0 }, { 3600, 0 } };
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct pollfd p[2];
	struct sigaction sa;
	pthread_t th;
	uint64_t n;
	ssize_t r;
	char c;
	int64_t t0;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	main_thread = pthread_self();
	if (fd < 0 || pipe(pipefd) < 0)
		return 1;

	timerfd_settime(fd, 0, &ten, NULL);
	pthread_create(&th, NULL, sleep_then_write, NULL);
	p[0].fd = pipefd[0];
	p[1].fd = fd;
	p[0].events = p[1].events = POLLIN;
	poll(p, 2, -1);
	printf("1: first ready: %s%s\n", p[0].revents ? "pipe " : "",
	       p[1].revents ? "timer" : "");
	pthread_join(th, NULL);
	if (read(pipefd[0], &c, 1) != 1)
		return 1;
	poll(p, 2, -1);
	printf("1: then: %s%s\n", p[0].revents ? "pipe " : "",
	       p[1].revents ? "timer" : "");
	if (read(fd, &n, sizeof(n)) != sizeof(n))
		return 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART */
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&th, NULL, sleep_then_signal, NULL);
	errno = 0;
	r = read(fd, &n, sizeof(n));
	printf("2: read of a disarmed timer: %zd %s\n", r,
	       strerrorname_np(errno));
	pthread_join(th, NULL);

	pthread_create(&th, NULL, spin, NULL);
	t0 = mono_s();
	timerfd_settime(fd, 0, &hour, NULL);
	n = 0;
	if (read(fd, &n, sizeof(n)) != sizeof(n))
		return 1;
	printf("3: timer of an hour: %llu after %lld s\n",
	       (unsigned long long)n, (long long)(mono_s() - t0));
	__atomic_store_n(&stop_spinning, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	close(fd);
	close(pipefd[0]);
	close(pipefd[1]);

	for (i = 0; i < 10; i++) {
		int64_t t1 = mono_ns(), took;
		int st = -1;
		pid_t pid = fork();

		if (pid == 0) {
			if (i % 2)
				_exit(i);
			exit(i);
		}
		sleep(2);
		took = mono_ns() - t1;
		if (pid < 0 || waitpid(pid, &st, 0) != pid ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != i ||
		    took != 2000000000LL) {
			printf("4: child %d: status %#x, a sleep of %lld ns\n",
			       i, st, (long long)took);
			return 1;
		}
	}
	printf("4: ten children ended while their parent slept 2 s each\n");

	pthread_create(&th, NULL, sleep_then_print, NULL);
	pthread_exit(NULL);
}
