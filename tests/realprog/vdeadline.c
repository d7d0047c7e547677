/* SPDX-License-Identifier: MIT */
/*
 * vdeadline - loops that wait until they are past their deadline (issue
 * 21): "left = end - now; if (now > end) stop; wait(left)", as Python's
 * subprocess and concurrent.futures do.  On virtual time the clock stands
 * still while the thread runs: the wait that times out leaves now == end,
 * the next wait is of zero, and the loop spun there for ever.  Each loop
 * must end past its deadline, never before; with TFD_EXACT set (on
 * virtual time) 1 ns past it, exactly.  And alarm() against the process's
 * own sleep: the signal ends the sleep at the alarm, with the rest left.
 * Prints facts, never times; exits 1 if one is false.
 *
 * And a busy loop that only a signal ends (alarm(), then a loop that
 * never waits): on virtual time the busy thread lets time flow at the
 * real rate (tfd-preload(7), Busy programs).
 *
 *   vdeadline cond|poll|sleep|spin MS
 *   vdeadline alarm|busy SECONDS
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec ts_of(int64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000), ns % 1000000000 };

	return ts;
}

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c;

/* One wait of at most left ns, as the loop's mode does it. */
static void wait_left(const char *mode, int64_t left)
{
	if (!strcmp(mode, "cond")) { /* a thread's timed wait */
		struct timespec abs = ts_of(now() + left);

		pthread_mutex_lock(&m);
		pthread_cond_timedwait(&c, &m, &abs);
		pthread_mutex_unlock(&m);
	} else if (!strcmp(mode, "poll")) { /* in ms: 0 under 1 ms */
		poll(NULL, 0, (int)(left / 1000000));
	} else if (!strcmp(mode, "sleep")) {
		struct timespec ts = ts_of(left);

		nanosleep(&ts, NULL);
	} else { /* spin: a wait of zero only tries (Python's Event.wait(0)) */
		if (left > 0) {
			struct timespec abs = ts_of(now() + left);

			pthread_mutex_lock(&m);
			pthread_cond_timedwait(&c, &m, &abs);
			pthread_mutex_unlock(&m);
		} else if (pthread_mutex_trylock(&m) == 0) {
			pthread_mutex_unlock(&m);
		}
	}
}

static int loop(const char *mode, int64_t ms)
{
	int64_t end = now() + ms * 1000000, t;

	for (;;) {
		t = now();
		if (t > end)
			break;
		wait_left(mode, end - t);
	}
	if (getenv("TFD_EXACT") && t != end + 1) {
		printf("FAIL %s loop: ended %lld ns past its deadline, not 1\n",
		       mode, (long long)(t - end));
		return 1;
	}
	printf("%s loop: ended past its deadline, not early\n", mode);
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
	if (write(1, "alarm\n", 6) < 0)
		_exit(2);
}

static int alarm_sleep(unsigned secs)
{
	unsigned left;

	signal(SIGALRM, on_alarm);
	alarm(secs);
	left = sleep(100);
	fflush(stdout);
	/* Natively the alarm comes a moment late: a second less may be
	 * left (glibc rounds the rest to the nearest second). */
	if (left != 100 - secs &&
	    (getenv("TFD_EXACT") || left != 100 - secs - 1)) {
		printf("FAIL sleep(100) left %u after alarm(%u)\n", left, secs);
		return 1;
	}
	printf("sleep(100) ended by alarm(%u), the rest left\n", secs);
	return 0;
}

static volatile sig_atomic_t rang;

static void on_busy_alarm(int sig)
{
	(void)sig;
	rang = 1;
}

static int busy_alarm(unsigned secs)
{
	int64_t t0 = now();
	unsigned long n = 0;

	signal(SIGALRM, on_busy_alarm);
	alarm(secs);
	while (!rang)
		n++;
	if (now() - t0 < (int64_t)secs * 1000000000) {
		printf("FAIL alarm(%u) ended a busy loop early\n", secs);
		return 1;
	}
	printf("alarm(%u) ended a busy loop, not early (%s)\n", secs,
	       n ? "it ran" : "it never ran");
	return 0;
}

int main(int argc, char **argv)
{
	pthread_condattr_t a;

	if (argc != 3) {
		fprintf(stderr, "usage: vdeadline cond|poll|sleep|spin MS | "
		                "alarm|busy SECONDS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&c, &a);
	if (!strcmp(argv[1], "alarm"))
		return alarm_sleep((unsigned)atoi(argv[2]));
	if (!strcmp(argv[1], "busy"))
		return busy_alarm((unsigned)atoi(argv[2]));
	return loop(argv[1], atoll(argv[2]));
}
