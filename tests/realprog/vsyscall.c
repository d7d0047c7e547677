/* SPDX-License-Identifier: MIT */
/*
 * vsyscall.c - clock reads, sleeps and futex waits made through the C
 * library's syscall() (GLib's conditions wait so, and libstdc++'s
 * futures), on virtual time as the C library's wrappers are (issue 21).
 * Prints facts, never times: each wait ends as the kernel ends it, never
 * early; with TFD_EXACT set (virtual time) at its deadline to the
 * nanosecond.
 *
 *   vsyscall [SCALE]   (times divided by SCALE)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int exact, ok = 1;
static long scale = 1;
static uint32_t word;

static int64_t ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static struct timespec ts(int64_t n)
{
	struct timespec t = { (time_t)(n / 1000000000), (long)(n % 1000000000) };

	return t;
}

/* CLOCK_MONOTONIC through syscall(). */
static int64_t mono(void)
{
	struct timespec t;

	if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t) != 0)
		abort();
	return ns(&t);
}

static void report(const char *what, int64_t got, int64_t want)
{
	int good = got >= want && (!exact || got == want);

	ok &= good;
	printf("%s %s\n", good ? "ok  " : "FAIL", what);
}

static void fact(const char *what, int good)
{
	ok &= good;
	printf("%s %s\n", good ? "ok  " : "FAIL", what);
}

static void *waker(void *arg)
{
	struct timespec t = ts(1000000000 / scale);

	(void)arg;
	syscall(SYS_nanosleep, &t, NULL);
	__atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec t, r;
	struct timeval tv;
	int64_t s = 1000000000, t0;
	long res;
	pthread_t th;

	if (argc > 1)
		scale = atol(argv[1]);
	exact = getenv("TFD_EXACT") != NULL;
	s /= scale;

	t0 = mono();
	t = ts(2 * s);
	fact("syscall(SYS_nanosleep, 2 s): 0",
	     syscall(SYS_nanosleep, &t, NULL) == 0);
	report("  and 2 s went by", mono() - t0, 2 * s);

	t0 = mono();
	t = ts(s);
	fact("syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 1 s): 0",
	     syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &t, NULL) == 0);
	report("  and 1 s went by", mono() - t0, s);

	t0 = mono();
	t = ts(3 * s / 2);
	res = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &t, NULL, 0);
	fact("FUTEX_WAIT for 1.5 s, nobody wakes it: ETIMEDOUT",
	     res == -1 && errno == ETIMEDOUT);
	report("  at 1.5 s", mono() - t0, 3 * s / 2);

	res = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 7, &t, NULL, 0);
	fact("FUTEX_WAIT of a word that differs: EAGAIN at once",
	     res == -1 && errno == EAGAIN);

	syscall(SYS_clock_gettime, CLOCK_REALTIME, &r);
	t0 = mono();
	t = ts(ns(&r) + 3 * s);
	res = syscall(SYS_futex, &word,
	              FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 0, &t,
	              NULL, FUTEX_BITSET_MATCH_ANY);
	fact("FUTEX_WAIT_BITSET until CLOCK_REALTIME + 3 s: ETIMEDOUT",
	     res == -1 && errno == ETIMEDOUT);
	report("  at 3 s", mono() - t0, 3 * s);

	t0 = mono();
	if (pthread_create(&th, NULL, waker, NULL))
		abort();
	t = ts(10 * s);
	do
		res = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &t, NULL,
		              0);
	while (res == 0 && !__atomic_load_n(&word, __ATOMIC_SEQ_CST));
	fact("FUTEX_WAIT for 10 s, woken by a thread after 1 s: 0",
	     res == 0 || (res == -1 && errno == EAGAIN));
	report("  at 1 s", mono() - t0, s);
	pthread_join(th, NULL);

	syscall(SYS_gettimeofday, &tv, NULL);
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &r);
	fact("gettimeofday and time through syscall() read the clock the "
	     "program reads",
	     r.tv_sec - tv.tv_sec <= 1 && tv.tv_sec <= r.tv_sec &&
	             labs((long)syscall(SYS_time, NULL) - (long)r.tv_sec) <= 1 &&
	             labs((long)time(NULL) - (long)r.tv_sec) <= 1);
	printf("%s\n", ok ? "all ok" : "FAILED");
	return !ok;
}
