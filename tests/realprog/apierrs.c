/* SPDX-License-Identifier: MIT */
/*
 * apierrs - the library's errors, each call on each kind of number, in a
 * program linked with libtfd.so: run as it is and under the drop-in on
 * each backend (whose doors take these calls in, exports_api.c), the
 * lines must be the same.  Among them, two that the doors once got
 * wrong: tfd_read() with no buffer fails EFAULT at once and leaves the
 * count (tfd_read(3)), where read(2) waits and takes it; tfd_set_read()
 * of a number that is no set fails EINVAL at once, where a wait on
 * virtual time hung on a pipe.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tfd.h"

/* The call's result and errno's name ("kept" if it did not change). */
#define T(expr)                                                            \
	do {                                                               \
		long r_;                                                   \
		errno = 12345;                                             \
		r_ = (long)(expr);                                         \
		printf("%-44s = %ld %s\n", #expr, r_,                      \
		       errno == 12345 ? "kept" : strerrorname_np(errno)); \
	} while (0)

static const struct itimerspec hundred = { { 0, 0 }, { 100, 0 } };
static const struct itimerspec bad = { { 0, 0 }, { 0, 2000000000 } };

static void timers(int t, int nb, int s, int pipe_r, int closed)
{
	struct itimerspec cur;
	uint64_t n;

	T(tfd_create(12345, 0));
	T(tfd_create(CLOCK_MONOTONIC, 0x40));
	T(tfd_settime(t, 0, &hundred, NULL));
	T(tfd_settime(t, 0, NULL, NULL));
	T(tfd_settime(t, 0, &bad, NULL));
	T(tfd_settime(t, 0x100, &hundred, NULL));
	T(tfd_settime(s, 0, &hundred, NULL));
	T(tfd_settime(pipe_r, 0, &hundred, NULL));
	T(tfd_settime(closed, 0, &hundred, NULL));
	T(tfd_settime(-1, 0, &hundred, NULL));
	T(tfd_gettime(t, NULL));
	T(tfd_gettime(s, &cur));
	T(tfd_gettime(pipe_r, &cur));
	T(tfd_gettime(closed, &cur));
	T(tfd_read(t, NULL, 8)); /* armed for 100 s: at once */
	T(tfd_read(nb, &n, 8));
	T(tfd_read(nb, &n, 4));
	T(tfd_read(nb, NULL, 8));
	T(tfd_read(s, &n, 8));
	T(tfd_read(pipe_r, &n, 8));
	T(tfd_read(closed, &n, 8));
	T(tfd_read(closed, NULL, 8));
	T(tfd_read(-1, &n, 8));
	T(timerfd(s, -1, 0, &hundred, NULL));
	T(timerfd(pipe_r, -1, 0, &hundred, NULL));
	T(timerfd(closed, -1, 0, NULL, &cur));
	T(timerfd(t, CLOCK_MONOTONIC, 0, NULL, &cur));
	T(timerfd(-1, CLOCK_MONOTONIC, 0, NULL, NULL));
	T(timerfd(-2, CLOCK_MONOTONIC, 0, &hundred, NULL));
}

static void sets(int t, int s, int sn, int pipe_r, int closed)
{
	struct tfd_expiry e[2];
	struct itimerspec cur;

	T(tfd_set_settime(s, 1, 0, &hundred, NULL));
	T(tfd_set_settime(s, 1, 0, NULL, NULL));
	T(tfd_set_settime(t, 1, 0, &hundred, NULL));
	T(tfd_set_settime(pipe_r, 1, 0, &hundred, NULL));
	T(tfd_set_settime(closed, 1, 0, &hundred, NULL));
	T(tfd_set_gettime(s, 99, &cur));
	T(tfd_set_gettime(t, 1, &cur));
	T(tfd_set_read(sn, e, sizeof(e)));
	T(tfd_set_read(sn, e, 8));
	T(tfd_set_read(s, NULL, sizeof(e)));
	T(tfd_set_read(t, e, sizeof(e)));
	T(tfd_set_read(pipe_r, e, sizeof(e))); /* an empty pipe: at once */
	T(tfd_set_read(closed, e, sizeof(e)));
	T(tfd_set_read(-1, e, sizeof(e)));
	T(tfd_set_create(CLOCK_REALTIME_ALARM, 0));
	T(tfd_set_create(CLOCK_MONOTONIC, 0x40));
}

/* A count left by tfd_read() with no buffer: the next read takes it. */
static void count_kept(void)
{
	struct itimerspec soon = { { 0, 0 }, { 0, 1000000 } };
	struct timespec pause = { 0, 20000000 };
	uint64_t n = 0;
	int nb = tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);

	tfd_settime(nb, 0, &soon, NULL);
	nanosleep(&pause, NULL);
	T(tfd_read(nb, NULL, 8));
	T(tfd_read(nb, &n, 8));
	printf("count: %llu\n", (unsigned long long)n);
	T(tfd_close(nb));
}

int main(void)
{
	int p[2], t, nb, s, sn, closed;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(p) < 0)
		return 1;
	t = tfd_create(CLOCK_MONOTONIC, 0);
	nb = tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	s = tfd_set_create(CLOCK_MONOTONIC, 0);
	sn = tfd_set_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	closed = tfd_create(CLOCK_MONOTONIC, 0);
	printf("made: %d %d %d %d %d\n", t >= 0, nb >= 0, s >= 0, sn >= 0,
	       closed >= 0);
	T(tfd_close(closed));
	timers(t, nb, s, p[0], closed);
	sets(t, s, sn, p[0], closed);
	count_kept();
	T(tfd_close(p[1]));
	T(fcntl(p[1], F_GETFD) >= 0);
	T(tfd_close(-1));
	T(tfd_close(t));
	T(tfd_close(t));
	T(tfd_close(s));
	T(tfd_close(s));
	T(tfd_set_read(s, NULL, 32));
	return 0;
}
