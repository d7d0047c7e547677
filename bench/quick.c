/*
 * quick.c - a first side-by-side measurement: tfd_settime (re-arm of an
 * armed timer) and tfd_gettime against the kernel's timerfd_settime and
 * timerfd_gettime, interleaved kernel/engine for 7 rounds, medians.
 * Not a test: it prints figures and never fails on a slow machine.
 */
#define _GNU_SOURCE
#include "tfd.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

enum { ROUNDS = 7, OPS = 200000 };

static int64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v)
{
	qsort(v, ROUNDS, sizeof(*v), cmp);
	return v[ROUNDS / 2];
}

/* ns per operation of one round. */
static double rearm(int kernel)
{
	int fd = kernel ? timerfd_create(CLOCK_MONOTONIC, 0)
	                : tfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec v = { { 0, 0 }, { 3600, 0 } };
	int64_t t0;
	int i;

	if (kernel)
		timerfd_settime(fd, 0, &v, NULL);
	else
		tfd_settime(fd, 0, &v, NULL);
	t0 = now();
	for (i = 0; i < OPS; i++) {
		v.it_value.tv_sec = 3600 + (i & 1023); /* later and earlier */
		if (kernel)
			timerfd_settime(fd, 0, &v, NULL);
		else
			tfd_settime(fd, 0, &v, NULL);
	}
	t0 = now() - t0;
	if (kernel)
		close(fd);
	else
		tfd_close(fd);
	return (double)t0 / OPS;
}

static double gettime(int kernel)
{
	int fd = kernel ? timerfd_create(CLOCK_MONOTONIC, 0)
	                : tfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec v = { { 0, 0 }, { 3600, 0 } }, cur;
	int64_t t0;
	int i;

	if (kernel)
		timerfd_settime(fd, 0, &v, NULL);
	else
		tfd_settime(fd, 0, &v, NULL);
	t0 = now();
	for (i = 0; i < OPS; i++) {
		if (kernel)
			timerfd_gettime(fd, &cur);
		else
			tfd_gettime(fd, &cur);
	}
	t0 = now() - t0;
	if (kernel)
		close(fd);
	else
		tfd_close(fd);
	return (double)t0 / OPS;
}

int main(void)
{
	double k[2][ROUNDS], e[2][ROUNDS];
	int r;

	for (r = 0; r < ROUNDS; r++) {
		k[0][r] = rearm(1);
		e[0][r] = rearm(0);
		k[1][r] = gettime(1);
		e[1][r] = gettime(0);
	}
	printf("%-10s %12s %12s %8s   (median of %d rounds x %d ops)\n",
	       "op", "kernel ns", "engine ns", "ratio", ROUNDS, OPS);
	printf("%-10s %12.1f %12.1f %8.3f\n", "re-arm", median(k[0]),
	       median(e[0]), median(e[0]) / median(k[0]));
	printf("%-10s %12.1f %12.1f %8.3f\n", "gettime", median(k[1]),
	       median(e[1]), median(e[1]) / median(k[1]));
	return 0;
}
