/* SPDX-License-Identifier: MIT */
/*
 * vclock - clocks and sleeps under virtual time (issue 13), run natively
 * and under `tfd exec --backend virtual` by run.sh.  On virtual time
 * (TFD_BACKEND=virtual) every length is exact to the nanosecond and the
 * sleeps are long (30 s); natively they are short (30 ms) and only never
 * early.  Prints one line per fact; exits 1 if one failed.
 *
 *   gettimeofday() with a NULL time or a NULL zone
 *   clock_nanosleep and timer_create refused on the raw, coarse clocks
 *   nanosleep, clock_nanosleep relative and absolute, sleep, usleep
 *   time(), timespec_get(), the _COARSE clocks follow the sleeps
 *   two threads each 50 x usleep(1000): 50 ms of their time
 *   no end of time: a poll of a timer due in 200 years, with a timeout,
 *   ends at the timeout; a thread blocked in a read of it uses no CPU
 *   while the main thread sleeps
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "units.h" /* a unit: 1 s virtual, 1 ms native */

/* A length that took got, asked want: exact on virtual time, never early
 * and less than 1 s late natively. */
static void length(const char *what, int64_t got, int64_t want)
{
	length_within(what, got, want, SEC);
}

/* clock_nanosleep to units from now on clock c, absolute: the length on
 * that clock. */
static void sleep_until(clockid_t c, const char *what, int64_t units)
{
	int64_t t0 = now(c);
	struct timespec ts = { (time_t)((t0 + units * unit) / SEC),
		               (long)((t0 + units * unit) % SEC) };

	clock_nanosleep(c, TIMER_ABSTIME, &ts, NULL);
	length(what, now(c) - t0, units * unit);
}

static void *sleeper(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 50; i++)
		usleep(1000);
	return NULL;
}

static void *reader(void *arg)
{
	uint64_t n;

	if (read(*(int *)arg, &n, sizeof(n)) >= 0)
		fact("read of a timer due in 200 years returned", 0);
	return NULL;
}

int main(void)
{
	struct timespec ts;
	struct timeval tv;
	struct timezone tz = { -1, -1 };
	int64_t t0, r0, c0, cpu0;
	pthread_t th[2];
	time_t s0;
	struct timeval *volatile no_tv = NULL;
	const sigset_t *volatile no_set = NULL;
	int (*volatile stw)(const sigset_t *, siginfo_t *,
	                    const struct timespec *) = sigtimedwait;
	/* Called through a pointer: the declaration's nonnull attribute is
	 * what UBSan checks at a direct call, and NULL is what we test. */
	int (*volatile gtod)(struct timeval *, void *) =
	        (int (*)(struct timeval *, void *))gettimeofday;
	int fd, i;

	units_start(1000000);

	/* Linux sleeps and arms timers on none of the raw and coarse
	 * clocks: EOPNOTSUPP, on virtual time too. */
	{
		static const clockid_t no_wait[] = { CLOCK_MONOTONIC_RAW,
			                             CLOCK_MONOTONIC_COARSE,
			                             CLOCK_REALTIME_COARSE };
		struct timespec ms = { 0, 1000000 };
		struct sigevent none = { .sigev_notify = SIGEV_NONE };
		timer_t t;

		for (i = 0; i < 3; i++) {
			errno = 0;
			fact("clock_nanosleep on a raw or coarse clock: EOPNOTSUPP",
			     clock_nanosleep(no_wait[i], 0, &ms, NULL) ==
			             EOPNOTSUPP);
			fact("timer_create on a raw or coarse clock: EOPNOTSUPP",
			     timer_create(no_wait[i], &none, &t) < 0 &&
			             errno == EOPNOTSUPP);
		}
	}
	/* glibc declares the time nonnull, and allows NULL. */
	fact("gettimeofday(NULL, &tz)",
	     gtod(no_tv, &tz) == 0 && tz.tz_minuteswest != -1);
	fact("gettimeofday(&tv, NULL)", gettimeofday(&tv, NULL) == 0);
	fact("gettimeofday(NULL, NULL)", gtod(no_tv, NULL) == 0);
	/* Declared nonnull too; the kernel answers EFAULT (clock_gettime
	 * with NULL faults in the vDSO, with or without the preload). */
	errno = 0;
	fact("sigtimedwait(NULL, ...): EFAULT",
	     stw(no_set, NULL, &(struct timespec){ 0, 0 }) == -1 &&
	             errno == EFAULT);

	t0 = now(CLOCK_MONOTONIC);
	r0 = now(CLOCK_REALTIME);
	ts.tv_sec = 30 * unit / SEC;
	ts.tv_nsec = 30 * unit % SEC;
	nanosleep(&ts, NULL);
	length("nanosleep of 30 units: CLOCK_MONOTONIC", now(CLOCK_MONOTONIC) - t0,
	       30 * unit);
	length("nanosleep of 30 units: CLOCK_REALTIME", now(CLOCK_REALTIME) - r0,
	       30 * unit);

	t0 = now(CLOCK_MONOTONIC);
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	length("clock_nanosleep relative", now(CLOCK_MONOTONIC) - t0, 30 * unit);

	sleep_until(CLOCK_MONOTONIC,
	            "clock_nanosleep absolute, CLOCK_MONOTONIC", 7);
	sleep_until(CLOCK_REALTIME,
	            "clock_nanosleep absolute, CLOCK_REALTIME", 5);

	if (virt) { /* whole seconds: only where a second is quick */
		s0 = time(NULL);
		c0 = now(CLOCK_MONOTONIC_COARSE);
		r0 = now(CLOCK_REALTIME_COARSE);
		timespec_get(&ts, TIME_UTC);
		t0 = (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
		sleep(3);
		length("sleep(3): time()", ((int64_t)time(NULL) - s0) * SEC,
		       3 * SEC);
		timespec_get(&ts, TIME_UTC);
		length("sleep(3): timespec_get()",
		       (int64_t)ts.tv_sec * SEC + ts.tv_nsec - t0, 3 * SEC);
		length("sleep(3): CLOCK_MONOTONIC_COARSE",
		       now(CLOCK_MONOTONIC_COARSE) - c0, 3 * SEC);
		length("sleep(3): CLOCK_REALTIME_COARSE",
		       now(CLOCK_REALTIME_COARSE) - r0, 3 * SEC);
	}
	t0 = now(CLOCK_MONOTONIC);
	usleep(1500);
	length("usleep(1500)", now(CLOCK_MONOTONIC) - t0, 1500000);

	/* Sleepers due at the same instant do not wait for each other. */
	t0 = now(CLOCK_MONOTONIC);
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, sleeper, NULL);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	if (virt)
		length("two threads, 50 x usleep(1000) each",
		       now(CLOCK_MONOTONIC) - t0, 50000000);
	else
		fact("two threads, 50 x usleep(1000) each",
		     now(CLOCK_MONOTONIC) - t0 >= 50000000);

	/* No end of time: a deadline 200 years ahead is no deadline. */
	fd = timerfd_create(CLOCK_MONOTONIC, 0);
	{
		struct itimerspec far = { { 0, 0 }, { 200LL * 366 * 86400, 0 } };
		struct pollfd p = { fd, POLLIN, 0 };

		timerfd_settime(fd, 0, &far, NULL);
		t0 = now(CLOCK_MONOTONIC);
		fact("poll of a timer due in 200 years: timeout",
		     poll(&p, 1, 200) == 0);
		length("poll of a timer due in 200 years: 200 ms",
		       now(CLOCK_MONOTONIC) - t0, 200000000);
	}
	pthread_create(&th[0], NULL, reader, &fd);
	cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
	t0 = now(CLOCK_MONOTONIC);
	sleep(virt ? 100 : 1);
	length("sleep beside a read of that timer", now(CLOCK_MONOTONIC) - t0,
	       (virt ? 100 : 1) * SEC);
	fact("no CPU burnt meanwhile (< 0.3 s)",
	     now(CLOCK_PROCESS_CPUTIME_ID) - cpu0 < 300000000);
	printf("%s\n", failed ? "some failed" : "all passed");
	fflush(stdout);
	_exit(failed); /* the reader stays blocked: do not join it */
}
