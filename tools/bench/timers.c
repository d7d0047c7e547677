/* SPDX-License-Identifier: MIT */
/*
 * timers.c - what tfd bench's workloads share (bench.h): the kernel's
 * timerfd and the engine called the same way, sets of timers at random
 * deadlines far ahead, an epoll instance over them, the engine's count of
 * wake-ups.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

static int k_create(int c, int f) { return timerfd_create(c, f); }
static int k_settime(int fd, int f, const struct itimerspec *nv,
                     struct itimerspec *old)
{
	return timerfd_settime(fd, f, nv, old);
}
static int k_gettime(int fd, struct itimerspec *cur)
{
	return timerfd_gettime(fd, cur);
}
static ssize_t k_read(int fd, void *b, size_t n) { return read(fd, b, n); }
static int k_close(int fd) { return close(fd); }
static int e_create(int c, int f) { return tfd_create(c, f); }

const struct impl bench_impls[2] = {
	{ k_create, k_settime, k_gettime, k_read, k_close },
	{ e_create, tfd_settime, tfd_gettime, tfd_read, tfd_close },
};

static uint64_t rng;

uint64_t bench_rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Each round draws the same deadlines on both sides. */
void bench_seed(int round)
{
	rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(round + 1);
}

/* How workloads 5 and 6 read a ready timer: tfd_read on the engine, or
 * with --plain-read the eventfd's own read(2) (a profiling aid: it shows
 * what the engine's lock costs the reader). */
ssize_t bench_read_ready(int side, int fd, uint64_t *c)
{
	return side == E && !bench.plain ? tfd_read(fd, c, sizeof(*c))
	                                 : read(fd, c, sizeof(*c));
}

void bench_close_set(int side, int *fds, long n)
{
	long i;

	for (i = 0; i < n; i++)
		bench_impls[side].close(fds[i]);
	free(fds);
}

int *bench_open_set(int side, long n, int arm)
{
	const struct impl *im = &bench_impls[side];
	int *fds = malloc(sizeof(*fds) * (size_t)(n ? n : 1));
	long i;

	if (!fds) {
		bench_fail(side, "malloc");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		struct itimerspec v = its(FAR + (int64_t)(bench_rnd() % SPREAD),
		                          0);

		fds[i] = im->create(CLOCK_MONOTONIC, FLAGS);
		if (fds[i] < 0) {
			bench_fail(side, "create timer %ld of %ld", i + 1, n);
			bench_close_set(side, fds, i);
			return NULL;
		}
		if (arm && im->settime(fds[i], 0, &v, NULL) < 0) {
			bench_fail(side, "settime");
			bench_close_set(side, fds, i + 1);
			return NULL;
		}
	}
	return fds;
}

int bench_watch(int side, const int *fds, long n)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	long i;

	if (ep < 0) {
		bench_fail(side, "epoll_create1");
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct epoll_event ev = { EPOLLIN, { .u64 = (uint64_t)i } };

		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) < 0) {
			bench_fail(side, "epoll_ctl");
			close(ep);
			return -1;
		}
	}
	return ep;
}

void bench_unwatch(int side, int ep, int *fds, long n)
{
	if (ep >= 0)
		close(ep);
	if (fds)
		bench_close_set(side, fds, n);
}

unsigned long bench_wakeups(void)
{
	return tfd_engine_wakeups ? tfd_engine_wakeups() : 0;
}
