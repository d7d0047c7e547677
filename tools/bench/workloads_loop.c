/* SPDX-License-Identifier: MIT */
/*
 * workloads_loop.c - tfd bench's workload 10 (bench.h), an event loop:
 * one timer re-armed every iteration to the next of 1,000 random
 * deadlines 1 to 10 ms ahead (each one, once it fired, replaced by a new
 * one), waited for with epoll_wait and read; expirations per second, on a
 * quiet machine and with two busy loops on it.  And the busy loops that
 * workloads 10 and 11 run with: child processes that spin until killed,
 * started before the timers of the side measured, so that both sides run
 * under the same load.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- busy loops ---- */

int bench_busy_start(pid_t *pids)
{
	int i, n = 0;

	fflush(NULL);
	for (i = 0; i < BUSY_N; i++) {
		pid_t p = fork();

		if (p == 0) {
			volatile unsigned long spin = 0;

			for (;;)
				spin++;
		}
		if (p > 0)
			pids[n++] = p;
	}
	if (n < BUSY_N)
		bench_note("10, 11: %d busy loop(s) of %d could be started",
		           n, BUSY_N);
	return n;
}

void bench_busy_stop(const pid_t *pids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < n; i++)
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
}

/* ---- 10: the event loop ---- */

#define LOOP_DEADLINES 1000

static int64_t next_deadline(int64_t now)
{
	return now + 1 * MS + (int64_t)(bench_rnd() % (9 * MS));
}

/* The binary min-heap h of n deadlines: h[0] changed, put it in place. */
static void sift_down(int64_t *h, int n)
{
	int i = 0;

	for (;;) {
		int l = 2 * i + 1, m = i;
		int64_t x;

		if (l < n && h[l] < h[m])
			m = l;
		if (l + 1 < n && h[l + 1] < h[m])
			m = l + 1;
		if (m == i)
			return;
		x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

static void event_loop(int side, int loaded)
{
	const struct impl *im = &bench_impls[side];
	int64_t dur = bench.quick ? 200 * MS : TFD_NSEC, h[LOOP_DEADLINES];
	int64_t t0, t, end;
	pid_t busy[BUSY_N];
	int nbusy = loaded ? bench_busy_start(busy) : 0;
	int *fds = bench_open_set(side, 1, 0);
	int ep = fds ? bench_watch(side, fds, 1) : -1, i;
	uint64_t total = 0;
	long early = 0;
	struct counts c0;

	if (ep < 0)
		goto out;
	t0 = now_ns();
	for (i = 0; i < LOOP_DEADLINES; i++)
		h[i] = next_deadline(t0);
	qsort(h, LOOP_DEADLINES, sizeof(*h), bench_cmp_i64); /* sorted: a heap */
	c0 = bench_counts();
	t0 = now_ns();
	end = t0 + dur;
	while ((t = now_ns()) < end) {
		struct itimerspec v = its(h[0], 0);
		struct epoll_event ev;
		uint64_t c = 0;
		int r;

		if (im->settime(fds[0], TFD_TIMER_ABSTIME, &v, NULL) < 0) {
			bench_fail(side, "settime");
			goto out;
		}
		do
			r = epoll_wait(ep, &ev, 1, 2000);
		while (r < 0 && errno == EINTR);
		t = now_ns();
		if (r != 1) {
			errno = r ? errno : ETIMEDOUT;
			bench_fail(side, "epoll_wait for a timer 10 ms ahead");
			goto out;
		}
		if (t < h[0])
			early++;
		if (bench_read_ready(side, fds[0], &c) != sizeof(c) || c != 1) {
			bench_fail(side, "read after epoll_wait");
			goto out;
		}
		total += c;
		h[0] = next_deadline(t);
		sift_down(h, LOOP_DEADLINES);
	}
	bench_add(bench_row(loaded ? "10 event loop, 2 busy loops"
	                           : "10 event loop",
	                    1, "k/s", G_RATIO_GE, loaded ? 1.0 : 1.5),
	          side, (double)total / ((double)(t - t0) / TFD_NSEC) / 1000);
	bench_add(bench_row(loaded ? "10 early reads, 2 busy loops"
	                           : "10 early reads",
	                    1, "count", G_ZERO, 0),
	          side, (double)early);
	/* Counts per iteration, quiet only: the busy loops are children of
	 * this process, and their switches would be counted. */
	if (!loaded && total)
		bench_count_rows("10 event loop", 1, side, c0, (double)total,
		                 0);
out:
	bench_unwatch(side, ep, fds, 1);
	bench_busy_stop(busy, nbusy);
}

void workload_loop(int side, long n)
{
	(void)n;
	event_loop(side, 0);
}

void workload_loop_loaded(int side, long n)
{
	(void)n;
	event_loop(side, 1);
}
