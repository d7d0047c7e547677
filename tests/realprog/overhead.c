/* SPDX-License-Identifier: MIT */
/*
 * overhead - what libtfd-preload.so costs a call on a descriptor that is
 * not a timer.  In one process, interleaved round by round, it times each
 * call made by name (through the preload library when it is loaded) and
 * made to libc's own function (found with dlsym on libc.so.6), and prints
 * the medians over ROUNDS rounds, in ns per call, and their difference.
 * Without the preload both columns are libc and the difference is the
 * method's noise.  tfd-preload(7) gives figures.
 *
 * Calls: read(2) of one byte from /dev/zero, close(2) of -1, poll(2) of a
 * pipe with timeout 0, clock_gettime(CLOCK_MONOTONIC).
 *
 *   overhead [ROUNDS [CALLS]]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { READ, CLOSE, POLL, CLOCK, NCALLS };

static const char *const names[NCALLS] = { "read", "close", "poll",
	                                   "clock_gettime" };

static struct {
	ssize_t (*read)(int, void *, size_t);
	int (*close)(int);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*clock_gettime)(clockid_t, struct timespec *);
} libc, named = { read, close, poll, clock_gettime };

static int zero;
static struct pollfd pf;

static double now(void)
{
	struct timespec ts;

	__asm__ volatile("" ::: "memory");
	libc.clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per call of call k through the functions f. */
static double run(int k, long calls, const __typeof__(libc) *f)
{
	struct timespec ts;
	double t0 = now();
	char c;
	long i;

	for (i = 0; i < calls; i++) {
		switch (k) {
		case READ:
			if (f->read(zero, &c, 1) != 1)
				exit(1);
			break;
		case CLOSE:
			f->close(-1);
			break;
		case POLL:
			f->poll(&pf, 1, 0);
			break;
		default:
			f->clock_gettime(CLOCK_MONOTONIC, &ts);
		}
	}
	return (now() - t0) / (double)calls;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void *must(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "overhead: no %s in libc.so.6\n", name);
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 31, p[2], r, k;
	long calls = argc > 2 ? atol(argv[2]) : 100000;
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	double *a, *b;

	zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (!h || zero < 0 || pipe(p) < 0 || rounds < 1 || calls < 1)
		return 1;
	libc.read = (__typeof__(libc.read))must(h, "read");
	libc.close = (__typeof__(libc.close))must(h, "close");
	libc.poll = (__typeof__(libc.poll))must(h, "poll");
	libc.clock_gettime =
		(__typeof__(libc.clock_gettime))must(h, "clock_gettime");
	pf.fd = p[0];
	pf.events = POLLIN;
	a = calloc((size_t)rounds, sizeof(double));
	b = calloc((size_t)rounds, sizeof(double));
	printf("%-14s %10s %10s %10s\n", "call", "by name", "libc", "extra");
	for (k = 0; k < NCALLS; k++) {
		run(k, calls, &named); /* warm up */
		for (r = 0; r < rounds; r++) {
			a[r] = run(k, calls, &named);
			b[r] = run(k, calls, &libc);
		}
		printf("%-14s %7.1f ns %7.1f ns %7.1f ns\n", names[k],
		       median(a, rounds), median(b, rounds),
		       median(a, rounds) - median(b, rounds));
	}
	free(a);
	free(b);
	close(p[0]);
	close(p[1]);
	close(zero);
	dlclose(h);
	return 0;
}
