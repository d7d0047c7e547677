/* SPDX-License-Identifier: MIT */
/*
 * workloads_calls.c - tfd bench's workloads of single calls (bench.h):
 * 1 create + close, 2 arm/re-arm/disarm among N armed timers, 2f re-arm
 * in a forked child, 3 gettime, 4a read with nothing expired, 4b read of
 * one expiration.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- 1: create + close ---- */

void workload_create(int side, long n)
{
	const struct impl *im = &bench_impls[side];
	long m = bench.quick ? 5000 : 20000, i;
	struct counts c0 = bench_counts();
	int64_t t0 = now_ns();

	(void)n;
	for (i = 0; i < m; i++) {
		int fd = im->create(CLOCK_MONOTONIC, FLAGS);

		if (fd < 0 || im->close(fd) < 0) {
			bench_fail(side, fd < 0 ? "create" : "close");
			return;
		}
	}
	bench_add(bench_row("1 create + close", 1, "ns", G_RATIO_LE, 1.0), side,
	          (double)(now_ns() - t0) / (double)m);
	bench_count_rows("1 create + close", 1, side, c0, (double)m, 0);
}

/* ---- 2: arm, re-arm, disarm with N armed timers ---- */

const char *const bench_arm_rows[3] = { "2 arm a disarmed timer",
	                                 "2 re-arm to a new deadline",
	                                 "2 disarm" };

void workload_arm(int side, long n)
{
	const struct impl *im = &bench_impls[side];
	long m = bench.quick ? 3000 : 20000, i;
	int64_t sum[3] = { 0, 0, 0 };
	struct itimerspec off = its(0, 0);
	int *fds = bench_open_set(side, n, 1);
	unsigned long w0 = bench_wakeups();
	int k;

	if (!fds)
		return;
	for (i = 0; i < m; i++) {
		int fd = fds[bench_rnd() % (uint64_t)n];
		int64_t d1 = FAR + (int64_t)(bench_rnd() % SPREAD);
		int64_t d2 = FAR + (int64_t)(bench_rnd() % SPREAD);
		struct itimerspec re = its(d1, 0), on = its(d2, 0);
		int64_t t0, t1, t2, t3;
		int bad;

		t0 = now_ns();
		bad = im->settime(fd, 0, &re, NULL);
		t1 = now_ns();
		bad |= im->settime(fd, 0, &off, NULL);
		t2 = now_ns();
		bad |= im->settime(fd, 0, &on, NULL);
		t3 = now_ns();
		if (bad) {
			bench_fail(side, "settime");
			break;
		}
		sum[1] += t1 - t0;
		sum[2] += t2 - t1;
		sum[0] += t3 - t2;
	}
	if (i == m)
		for (k = 0; k < 3; k++)
			bench_add(bench_row(bench_arm_rows[k], n, "ns",
			                    G_RATIO_LE, 0.2),
			          side, (double)sum[k] / (double)m -
			                        bench.overhead);
	if (i == m && side == E && tfd_engine_wakeups)
		bench_add(bench_row("2 engine wake-ups per 1000 calls", n, "",
		                    G_NONE, 0),
		          side, (double)(bench_wakeups() - w0) * 1000 /
		                        (double)(3 * m));
	bench_close_set(side, fds, n);
}

/* ---- 2f: re-arming a timer inherited through fork(), in the child: on
 * Linux the child acts on the parent's timer; so does it on the engine
 * (tfd(7), FORK AND EXEC), at the cost of a re-arm in the parent
 * (row 2).  The child times m re-arms and tells the parent. ---- */

void workload_fork_arm(int side, long n)
{
	const struct impl *im = &bench_impls[side];
	long m = bench.quick ? 3000 : 20000;
	int *fds = bench_open_set(side, 1, 1), p[2], st = 1;
	double v = -1;
	pid_t pid;

	(void)n;
	if (!fds)
		return;
	if (pipe2(p, O_CLOEXEC) < 0) {
		bench_fail(side, "pipe");
		bench_close_set(side, fds, 1);
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		long i;
		int64_t t0, t1;

		/* The first call starts the child's service thread where
		 * fork() cannot (AddressSanitizer): not timed. */
		struct itimerspec re = its(FAR, 0);

		if (im->settime(fds[0], 0, &re, NULL) < 0)
			_exit(1);
		t0 = now_ns();
		for (i = 0; i < m; i++) {
			re = its(FAR + (int64_t)(bench_rnd() % SPREAD), 0);
			if (im->settime(fds[0], 0, &re, NULL) < 0)
				_exit(1);
		}
		t1 = now_ns();
		v = (double)(t1 - t0) / (double)m;
		_exit(write(p[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &v, sizeof(v)) != sizeof(v) ||
	    waitpid(pid, &st, 0) != pid || st != 0)
		bench_fail(side, "re-arm in a forked child");
	else
		bench_add(bench_row("2f re-arm an inherited timer, in a child",
		                    1, "ns", G_RATIO_LE, 0.2),
		          side, v - bench.overhead);
	close(p[0]);
	bench_close_set(side, fds, 1);
}

/* ---- 3: gettime; 4: read ---- */

void workload_gettime(int side, long n)
{
	const struct impl *im = &bench_impls[side];
	long m = bench.quick ? 20000 : 100000, i;
	int *fds = bench_open_set(side, 1, 1);
	struct itimerspec cur;
	struct counts c0;
	int64_t t0;

	(void)n;
	if (!fds)
		return;
	c0 = bench_counts();
	t0 = now_ns();
	for (i = 0; i < m; i++)
		if (im->gettime(fds[0], &cur) < 0)
			break;
	t0 = now_ns() - t0;
	if (i < m || cur.it_value.tv_sec < 1) {
		bench_fail(side, "gettime");
	} else {
		bench_add(bench_row("3 gettime, armed timer", 1, "ns",
		                    G_RATIO_LE, 0.1),
		          side, (double)t0 / (double)m);
		bench_count_rows("3 gettime", 1, side, c0, (double)m, 0);
	}
	bench_close_set(side, fds, 1);
}

void workload_read_none(int side, long n)
{
	const struct impl *im = &bench_impls[side];
	long m = bench.quick ? 20000 : 100000, i;
	int *fds = bench_open_set(side, 1, 1);
	uint64_t c;
	int64_t t0;
	int pass;

	(void)n;
	if (!fds)
		return;
	/* pass 0: the API (tfd_read on the engine); pass 1: plain read(). */
	for (pass = 0; pass < 2; pass++) {
		ssize_t (*rd)(int, void *, size_t) =
			pass ? bench_impls[K].read : im->read;
		struct counts c0 = bench_counts();

		t0 = now_ns();
		for (i = 0; i < m; i++)
			if (rd(fds[0], &c, sizeof(c)) >= 0 || errno != EAGAIN)
				break;
		t0 = now_ns() - t0;
		if (i < m) {
			bench_fail(side, "read of an unexpired timer");
			break;
		}
		/* The target is the API's (no system call when the count
		 * is in memory); read(2) is one on either side. */
		bench_add(bench_row(pass ? "4a read(2), nothing expired"
		                         : "4a tfd_read, nothing expired",
		                    1, "ns", pass ? G_NONE : G_RATIO_LE, 0.5),
		          side, (double)t0 / (double)m);
		bench_count_rows(pass ? "4a read(2), nothing expired"
		                      : "4a tfd_read, nothing expired",
		                 1, side, c0, (double)m, 0);
	}
	bench_close_set(side, fds, 1);
}

/* 1,024 one-shot timers armed in the past, all readable; read each once. */
void workload_read_some(int side, long n)
{
	const struct impl *im = &bench_impls[side];
	int batches = bench.quick ? 3 : 10, b;
	struct itimerspec past = its(1, 0); /* absolute 1 ns: long ago */
	int *fds = bench_open_set(side, n, 0);
	struct counts c0, d = { 0, 0 }, one;
	int64_t total = 0;
	long i;

	if (!fds)
		return;
	for (b = 0; b < batches; b++) {
		int64_t t0;

		for (i = 0; i < n; i++)
			if (im->settime(fds[i], TFD_TIMER_ABSTIME, &past, NULL))
				break;
		if (i < n) {
			bench_fail(side, "settime");
			break;
		}
		for (i = 0; i < n; i++) {
			struct pollfd p = { fds[i], POLLIN, 0 };

			if (poll(&p, 1, 1000) != 1)
				break;
		}
		if (i < n) {
			bench_fail(side, "a timer armed in the past is not "
			           "readable");
			break;
		}
		c0 = bench_counts();
		t0 = now_ns();
		for (i = 0; i < n; i++) {
			uint64_t c = 0;

			if (im->read(fds[i], &c, sizeof(c)) != sizeof(c) ||
			    c != 1)
				break;
		}
		total += now_ns() - t0;
		one = bench_counts_since(c0, (double)(n * batches));
		d.switches += one.switches;
		d.syscalls += one.syscalls;
		if (i < n) {
			bench_fail(side, "read of an expired one-shot timer");
			break;
		}
	}
	if (b == batches) {
		bench_add(bench_row("4b read, 1 expiration", n, "ns",
		                    G_RATIO_LE, 0.5),
		          side, (double)total / (double)(n * batches));
		if (d.syscalls >= 0)
			bench_add(bench_row("4b read, 1 expiration syscalls", n,
			                    "", G_NONE, 0),
			          side, d.syscalls);
		if (d.switches >= 0)
			bench_add(bench_row("4b read, 1 expiration switches", n,
			                    "", G_NONE, 0),
			          side, d.switches);
	}
	bench_close_set(side, fds, n);
}
