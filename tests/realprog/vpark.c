/* SPDX-License-Identifier: MIT */
/*
 * vpark - threads parked in untimed waits on virtual time (tfd-preload(7),
 * The cost of a move).  A thread blocked in pthread_cond_wait() or
 * sem_wait() is looked at in /proc once, and then taken for blocked until
 * a thread of the tree signals, broadcasts or posts what it waits on.
 *
 *   vpark wake   a parked thread that a pthread_cond_signal(), a
 *                pthread_cond_broadcast(), a sem_post() or a signal's
 *                handler wakes runs before time moves: its waker sleeps
 *                10 s at once, and the woken thread reads the clock less
 *                than a second after the wake (on Linux, microseconds
 *                after it), 10 rounds of each; and a thread cancelled
 *                before its wait, whose cleanup handler blocks on a lock
 *                its canceller lets go of before it sleeps; and a
 *                pthread_join() of a thread that ends after 2 s, beside
 *                one that sleeps 10 s; and the handler of a signal to a
 *                parked thread that blocks in a read(2) of a pipe, then,
 *                the pipe written, computes for 100 ms of its CPU time:
 *                time does not move while it computes (its thread runs
 *                unparked in the handler).
 *   vpark cost [N [signals]]   the mover's reads of /proc do not grow
 *                with the threads parked: N (128) threads in conditions,
 *                semaphores and joins while the first thread sleeps 200
 *                times; the mover's read system calls (syscr in
 *                /proc/PPID/io: `tfd exec` is its parent) are fewer than
 *                16 a sleep (each thread looked at twice a move made
 *                over 500).  With "signals", a child of it gets a signal
 *                from its interval timer every 500 ms: the threads
 *                parked here are not looked at again for those.  With
 *                VPARK_SHOW set, the reads a sleep on standard error.
 *   vpark timed  the same, with 4 threads in timed waits of 1 s on one
 *                condition that nobody signals, one after the other,
 *                while the first thread sleeps 50 ms 200 times: the end
 *                of one's wait does not leave the others to /proc (the
 *                C library passes on only a signal it took): fewer than
 *                6 reads a sleep (about 3: one a move, and a look at
 *                each wait's end; 16 when each end woke the others).
 *
 * Prints what it found; on virtual time only (tests/realprog/run.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "syscr.h"

#define ROUNDS 10
#define NPARKED 4096
#define NSLEEPS 200

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t other = PTHREAD_COND_INITIALIZER;
static sem_t sem;
static int flag, stop;
static volatile int64_t woke_at;

static int64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void *cond_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	while (!flag)
		pthread_cond_wait(&cond, &lock);
	woke_at = now();
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *sem_waiter(void *arg)
{
	(void)arg;
	while (sem_wait(&sem) < 0)
		;
	woke_at = now();
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	woke_at = now();
}

/* Blocked in sem_wait() until stop; the handler notes its time. */
static void *sig_waiter(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		sem_wait(&sem);
	return NULL;
}

/* The handler that blocks, then computes (the comment above). */
static int pipe_fd[2];
static volatile int64_t busy_took;

static int64_t cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* never virtual */
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void on_usr2(int sig)
{
	int64_t t0, c0;
	char c;

	(void)sig;
	if (read(pipe_fd[0], &c, 1) != 1)
		return;
	t0 = now();
	c0 = cpu_now();
	while (cpu_now() - c0 < 100000000)
		;
	busy_took = now() - t0;
}

/* 1 if the handler's computing took less than a second of virtual time,
 * its interrupted thread parked and looked at before, and its pipe
 * written just before the writer sleeps 10 s. */
static int busy_handler_round(void)
{
	pthread_t t;

	stop = 0;
	busy_took = -1;
	if (pthread_create(&t, NULL, sig_waiter, NULL) != 0)
		return 0;
	sleep_ms(1000); /* parked, and looked at */
	pthread_kill(t, SIGUSR2);
	sleep_ms(1000); /* its handler blocked in read(2), looked at */
	if (write(pipe_fd[1], "x", 1) != 1)
		return 0;
	sleep_ms(10000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	sem_post(&sem);
	pthread_join(t, NULL);
	return busy_took >= 0 && busy_took < 1000000000;
}

enum how { SIGNAL, BROADCAST, POST, HANDLER };

/* One round: the thread parks (a second to be looked at), is woken, and
 * the waker sleeps 10 s.  1 if it ran within a second of the wake. */
static int round_of(enum how how)
{
	void *(*fn)(void *) = how == POST      ? sem_waiter
	                      : how == HANDLER ? sig_waiter
	                                       : cond_waiter;
	pthread_t t;
	int64_t t0;

	flag = stop = 0;
	woke_at = 0;
	if (pthread_create(&t, NULL, fn, NULL) != 0)
		return 0;
	sleep_ms(1000);
	/* A wake of something else first: it stays parked. */
	pthread_cond_broadcast(&other);
	sleep_ms(1000);
	pthread_mutex_lock(&lock);
	flag = 1;
	t0 = now();
	if (how == SIGNAL)
		pthread_cond_signal(&cond);
	else if (how == BROADCAST)
		pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	if (how == POST)
		sem_post(&sem);
	if (how == HANDLER)
		pthread_kill(t, SIGUSR1);
	sleep_ms(10000);
	if (how == HANDLER) {
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
		sem_post(&sem);
	}
	pthread_join(t, NULL);
	return woke_at >= t0 && woke_at - t0 < 1000000000;
}

/* A thread cancelled before its wait begins: the cancellation acts as
 * it waits, and its cleanup handler blocks on a lock its canceller holds
 * and lets go of just before its 10 s sleep. */
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;

static void cleanup(void *arg)
{
	(void)arg;
	pthread_mutex_unlock(&lock); /* (the wait took it back) */
	pthread_mutex_lock(&held);
	woke_at = now();
	pthread_mutex_unlock(&held);
}

static void *cancelled(void *arg)
{
	int old;

	(void)arg;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
	pthread_cleanup_push(cleanup, NULL);
	pthread_mutex_lock(&lock);
	for (;;)
		pthread_cond_wait(&cond, &lock);
	pthread_cleanup_pop(0);
	return NULL;
}

static int cancel_round(void)
{
	pthread_t t;
	int64_t t0;

	woke_at = 0;
	pthread_mutex_lock(&held);
	__atomic_store_n(&flag, 0, __ATOMIC_RELEASE);
	if (pthread_create(&t, NULL, cancelled, NULL) != 0)
		return 0;
	pthread_cancel(t);
	__atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
	sleep_ms(1000); /* its cleanup blocks, and is looked at */
	t0 = now();
	pthread_mutex_unlock(&held);
	sleep_ms(10000);
	pthread_join(t, NULL);
	return woke_at >= t0 && woke_at - t0 < 1000000000;
}

/* A join parked while its thread sleeps 2 s, beside a thread that
 * sleeps 10 s: it ends when the thread does. */
static void *sleeper(void *arg)
{
	sleep_ms((long)(intptr_t)arg);
	return NULL;
}

static int join_round(void)
{
	pthread_t t, u;
	int64_t t0 = now();

	if (pthread_create(&t, NULL, sleeper, (void *)(intptr_t)2000) != 0)
		return 0;
	if (pthread_create(&u, NULL, sleeper, (void *)(intptr_t)10000) != 0)
		return 0;
	pthread_join(t, NULL);
	woke_at = now();
	pthread_join(u, NULL);
	return woke_at - t0 >= 2000000000 && woke_at - t0 < 3000000000;
}

static int wake(void)
{
	static const char *name[] = { "pthread_cond_signal",
		                      "pthread_cond_broadcast", "sem_post",
		                      "a signal's handler" };
	struct sigaction sa;
	int how, r, ok;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	for (how = SIGNAL; how <= HANDLER; how++) {
		for (ok = 1, r = 0; r < ROUNDS; r++)
			ok &= round_of((enum how)how);
		printf("woken by %s, it runs before its waker's sleep "
		       "ends: %s\n", name[how], ok ? "yes" : "no");
	}
	for (ok = 1, r = 0; r < ROUNDS; r++)
		ok &= cancel_round();
	printf("cancelled before its wait, its cleanup runs before its "
	       "canceller's sleep ends: %s\n", ok ? "yes" : "no");
	for (ok = 1, r = 0; r < ROUNDS; r++)
		ok &= join_round();
	printf("a join ends when its thread does, before another's sleep "
	       "ends: %s\n", ok ? "yes" : "no");
	sa.sa_handler = on_usr2;
	if (pipe(pipe_fd) != 0 || sigaction(SIGUSR2, &sa, NULL) != 0)
		return 1;
	for (ok = 1, r = 0; r < ROUNDS; r++)
		ok &= busy_handler_round();
	printf("a handler that blocks, then computes, holds time while it "
	       "computes: %s\n", ok ? "yes" : "no");
	return 0;
}

/* The read system calls of process pid so far, -1. */
static long syscr(pid_t pid)
{
	char io[64];

	snprintf(io, sizeof(io), "/proc/%d/io", (int)pid);
	return syscr_of(io);
}

/* The mover's read system calls while this thread sleeps 50 ms NSLEEPS
 * times, -1 if unknown. */
static long reads_over_sleeps(void)
{
	long before = syscr(getppid()), after;
	int i;

	for (i = 0; i < NSLEEPS; i++)
		sleep_ms(50);
	after = syscr(getppid());
	return before < 0 || after < 0 ? -1 : after - before;
}

/* Whether the mover read /proc fewer than limit times a sleep. */
static void say_reads(long reads, int limit)
{
	if (getenv("VPARK_SHOW"))
		fprintf(stderr, "mover: %.1f reads a sleep\n",
		        (double)reads / NSLEEPS);
	printf("the mover reads /proc fewer than %d times a sleep: %s\n",
	       limit, reads >= 0 && reads < (long)limit * NSLEEPS ? "yes"
	                                                          : "no");
}

static void on_alarm(int sig)
{
	(void)sig;
}

static pthread_t th[NPARKED];

/* Thread i of the cost: in a condition, a semaphore, or a join of the
 * one before, by i % 3. */
static void *parked(void *arg)
{
	int i = (int)(intptr_t)arg;

	if (i % 3 == 2)
		return pthread_join(th[i - 1], NULL) == 0 ? NULL : arg;
	pthread_mutex_lock(&lock);
	while (!stop) {
		if (i % 3 == 0)
			pthread_cond_wait(&cond, &lock);
		else {
			pthread_mutex_unlock(&lock);
			sem_wait(&sem);
			pthread_mutex_lock(&lock);
		}
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* A process of the tree whose 500 ms interval timer sends it a signal
 * every 10th sleep: the threads parked in another are not looked at
 * again for it. */
static pid_t ticking(void)
{
	struct itimerval every = { { 0, 500000 }, { 0, 500000 } };
	pid_t pid = fork();

	if (pid == 0) {
		signal(SIGALRM, on_alarm);
		setitimer(ITIMER_REAL, &every, NULL);
		for (;;)
			pause();
	}
	return pid;
}

static int cost(int want, int signals)
{
	pid_t child = signals ? ticking() : -1;
	long reads;
	int i, n = 0, ok = 1;

	for (i = 0; i < want && i < NPARKED; i++, n++)
		if (pthread_create(&th[i], NULL, parked,
		                   (void *)(intptr_t)i) != 0)
			break;
	sleep_ms(100); /* all of them blocked, and looked at once */
	reads = reads_over_sleeps();
	pthread_mutex_lock(&lock);
	stop = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < n; i++)
		sem_post(&sem);
	for (i = 0; i < n; i++) /* (those a thread joins: by it) */
		if (i % 3 != 1 || i + 1 >= n)
			ok &= pthread_join(th[i], NULL) == 0;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	printf("%d threads parked, a third in joins: %s\n", n,
	       ok ? "all ended" : "not all ended");
	say_reads(reads, 16);
	return 0;
}

#define NTIMED 4

/* Thread i of the timed cost: 1 s waits on cond, each its own deadline
 * a quarter of a second after the one before's. */
static void *timed(void *arg)
{
	struct timespec at;
	int i = (int)(intptr_t)arg;

	pthread_mutex_lock(&lock);
	clock_gettime(CLOCK_REALTIME, &at);
	at.tv_nsec += i * 250000000L;
	at.tv_sec += at.tv_nsec / 1000000000L;
	at.tv_nsec %= 1000000000L;
	while (!stop) {
		at.tv_sec++;
		pthread_cond_timedwait(&cond, &lock, &at);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int timed_cost(void)
{
	pthread_t t[NTIMED];
	long reads;
	int i, ok = 1;

	for (i = 0; i < NTIMED; i++)
		if (pthread_create(&t[i], NULL, timed, (void *)(intptr_t)i))
			return 1;
	sleep_ms(100);
	reads = reads_over_sleeps();
	pthread_mutex_lock(&lock);
	stop = 1;
	pthread_mutex_unlock(&lock);
	for (i = 0; i < NTIMED; i++)
		ok &= pthread_join(t[i], NULL) == 0;
	printf("%d threads in timed waits: %s\n", NTIMED,
	       ok ? "all ended" : "not all ended");
	say_reads(reads, 6);
	return 0;
}

int main(int argc, char **argv)
{
	sem_init(&sem, 0, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "wake") == 0)
		return wake();
	if (argc >= 2 && strcmp(argv[1], "cost") == 0)
		return cost(argc > 2 ? atoi(argv[2]) : 128,
		            argc > 3 && strcmp(argv[3], "signals") == 0);
	if (argc == 2 && strcmp(argv[1], "timed") == 0)
		return timed_cost();
	fprintf(stderr, "usage: vpark wake|cost [N [signals]]|timed\n");
	return 2;
}
