/* SPDX-License-Identifier: MIT */
/*
 * apivirt - a program linked with libtfd.so, on virtual time (tfd exec
 * --backend virtual): its own calls of the API are virtual time's, as
 * its timerfd_create(2) would be.  Hours of timers, each waited for in
 * one of the ways a program waits: a blocking tfd_read(), poll(2) and
 * epoll_wait(2) on a timer, the revised timerfd() call, a blocking
 * tfd_set_read() and poll(2) on a set; and a tfd_read() whose timer
 * another thread closes.  Prints the virtual time of each
 * expiry, to the millisecond: on virtual time they are exact.  The
 * drop-in's copy of the library gave these calls straight to the engine,
 * whose deadlines did not move the clocks: the first blocking read
 * waited for good.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "tfd.h"

static struct timespec start;

/* Seconds since start, on CLOCK_MONOTONIC (the virtual one). */
static double at(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - start.tv_sec) +
	       (double)(t.tv_nsec - start.tv_nsec) / 1e9;
}

static struct itimerspec secs(long value, long interval)
{
	struct itimerspec v = { { interval, 0 }, { value, 0 } };

	return v;
}

static void timer(void)
{
	struct itimerspec v = secs(3600, 0), cur;
	struct epoll_event ev = { EPOLLIN, { 0 } };
	uint64_t n = 0;
	int fd = tfd_create(CLOCK_MONOTONIC, 0), ep, k;
	struct pollfd p = { fd, POLLIN, 0 };
	ssize_t r;

	tfd_settime(fd, 0, &v, NULL);
	r = tfd_read(fd, &n, sizeof(n));
	printf("tfd_read: %zd, count %llu, at %.3f\n", r,
	       (unsigned long long)n, at());
	v = secs(1800, 600);
	tfd_settime(fd, 0, &v, NULL);
	tfd_gettime(fd, &cur);
	printf("tfd_gettime: %ld s left\n", (long)cur.it_value.tv_sec);
	k = poll(&p, 1, -1);
	printf("poll: %d at %.3f\n", k, at());
	ep = epoll_create1(EPOLL_CLOEXEC);
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	tfd_read(fd, &n, sizeof(n));
	k = epoll_wait(ep, &ev, 1, -1);
	printf("epoll_wait: %d at %.3f\n", k, at());
	r = tfd_read(fd, &n, sizeof(n));
	printf("tfd_read: %zd, count %llu\n", r, (unsigned long long)n);
	close(ep);
	printf("tfd_close: %d\n", tfd_close(fd));
}

static void revised(void)
{
	struct itimerspec v = secs(7200, 0), cur;
	uint64_t n = 0;
	int fd = timerfd(-1, CLOCK_MONOTONIC, 0, &v, NULL);
	ssize_t r;

	timerfd(fd, -1, 0, NULL, &cur);
	printf("timerfd: %ld s left\n", (long)cur.it_value.tv_sec);
	r = tfd_read(fd, &n, sizeof(n));
	printf("tfd_read: %zd, count %llu, at %.3f\n", r,
	       (unsigned long long)n, at());
	v = secs(60, 0);
	timerfd(fd, -1, 0, &v, NULL);
	r = read(fd, &n, sizeof(n));
	printf("read: %zd, count %llu, at %.3f\n", r,
	       (unsigned long long)n, at());
	printf("tfd_close: %d\n", tfd_close(fd));
}

static int closing;

static void *close_later(void *arg)
{
	struct timespec one = { 1, 0 };

	(void)arg;
	nanosleep(&one, NULL);
	printf("tfd_close: %d at %.3f\n", tfd_close(closing), at());
	return NULL;
}

/* A timer closed by another thread while a tfd_read() waits on it: on
 * virtual time the read fails EBADF at the close (tfd-preload(7),
 * Differences; on real time it returns the expiry, as on Linux). */
static void closed_meanwhile(void)
{
	struct itimerspec v = secs(3, 0);
	pthread_t th;
	uint64_t n = 0;
	double when;
	ssize_t r;
	int e;

	closing = tfd_create(CLOCK_MONOTONIC, 0);
	tfd_settime(closing, 0, &v, NULL);
	pthread_create(&th, NULL, close_later, NULL);
	r = tfd_read(closing, &n, sizeof(n));
	e = errno;
	when = at();
	pthread_join(th, NULL); /* (its line first) */
	printf("tfd_read: %zd %s at %.3f\n", r,
	       r < 0 && e == EBADF ? "EBADF" : "", when);
}

static void set(void)
{
	struct itimerspec v = secs(5400, 0), cur;
	struct tfd_expiry e[4] = { { 0, 0 } };
	int s = tfd_set_create(CLOCK_MONOTONIC, 0), k;
	struct pollfd p = { s, POLLIN, 0 };
	ssize_t r;

	tfd_set_settime(s, 7, 0, &v, NULL);
	v = secs(9000, 0);
	tfd_set_settime(s, 8, 0, &v, NULL);
	r = tfd_set_read(s, e, sizeof(e));
	printf("tfd_set_read: %zd, key %llu, count %llu, at %.3f\n", r,
	       (unsigned long long)e[0].key, (unsigned long long)e[0].count,
	       at());
	tfd_set_gettime(s, 8, &cur);
	printf("tfd_set_gettime: %ld s left\n", (long)cur.it_value.tv_sec);
	k = poll(&p, 1, -1);
	printf("poll: %d at %.3f\n", k, at());
	r = tfd_set_read(s, e, sizeof(e));
	printf("tfd_set_read: %zd, key %llu, count %llu\n", r,
	       (unsigned long long)e[0].key, (unsigned long long)e[0].count);
	printf("tfd_close: %d\n", tfd_close(s));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	timer();
	revised();
	set();
	closed_meanwhile();
	return 0;
}
