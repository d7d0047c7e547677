/* SPDX-License-Identifier: MIT */
/*
 * workloads_sets.c - 13, timer sets (tfd_set(3)): N timers as keys of one
 * set on the engine's side, as N timerfds on the kernel's (a descriptor
 * and a kernel timer each, as a program must without sets).  Arm +
 * cancel, the re-arm of a random armed timer, and the delivery of N
 * timers due within 100 ms read through epoll; and on the engine alone,
 * the same with a million keys and (without --quick) ten million, which
 * no descriptor table holds, and the wake-ups while a million wait.
 */
#define _GNU_SOURCE
#include "bench/bench.h"

#include <malloc.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define MILLION 1000000L

/* One side's N timers: the kernel's descriptors, or one set's keys. */
struct timers {
	int side, sfd, *fds;
	long n;
};

static int arm(struct timers *t, long i, int flags, int64_t value)
{
	struct itimerspec v = its(value, 0);

	if (t->side == K)
		return timerfd_settime(t->fds[i], flags, &v, NULL);
	return tfd_set_settime(t->sfd, (uint64_t)i, flags, &v, NULL);
}

/* n + 1 timers (the last for arm + cancel), the first n armed far
 * ahead.  0, or -1 after saying why. */
static int open_timers(struct timers *t, int side, long n)
{
	long i;

	t->side = side;
	t->n = n;
	t->sfd = -1;
	t->fds = NULL;
	if (side == K) {
		t->fds = bench_open_set(K, n + 1, 0);
		if (!t->fds)
			return -1;
	} else if ((t->sfd = tfd_set_create(CLOCK_MONOTONIC, FLAGS)) < 0) {
		bench_fail(side, "tfd_set_create");
		return -1;
	}
	for (i = 0; i < n; i++)
		if (arm(t, i, 0, FAR + (int64_t)(bench_rnd() % SPREAD)) < 0) {
			bench_fail(side, "arm timer %ld of %ld", i + 1, n);
			return -1;
		}
	return 0;
}

static void close_timers(struct timers *t)
{
	if (t->fds)
		bench_close_set(K, t->fds, t->n + 1);
	if (t->sfd >= 0)
		tfd_close(t->sfd);
}

/* Arm + cancel of the extra timer, m times, and m re-arms of random armed
 * ones; ns each into the rows. */
static void calls(struct timers *t, long m)
{
	int64_t t0;
	long i;
	int bad = 0;

	t0 = now_ns();
	for (i = 0; i < m; i++)
		bad |= arm(t, t->n, 0, MS + (int64_t)(bench_rnd() % SPREAD)) |
		       arm(t, t->n, 0, 0);
	t0 = now_ns() - t0;
	bench_add(bench_row("13 set: arm + cancel", t->n, "ns", G_RATIO_LE,
	                    0.1),
	          t->side, (double)t0 / (double)m);
	t0 = now_ns();
	for (i = 0; i < m; i++)
		bad |= arm(t, (long)(bench_rnd() % (uint64_t)t->n), 0,
		           FAR + (int64_t)(bench_rnd() % SPREAD));
	t0 = now_ns() - t0;
	bench_add(bench_row("13 set: re-arm a random timer", t->n, "ns",
	                    G_ABS_LE, 50),
	          t->side, (double)t0 / (double)m);
	if (bad)
		bench_fail(t->side, "settime");
}

/* What a delivery read: keys read once (each key's deadline in due is
 * then -1), early (read before their deadline: the clock read after the
 * read is at or past the deadline of every timer the read returned),
 * and read again or not of the set. */
struct tally {
	long got, early, twice;
};

static void tally(struct tally *y, const struct timers *t, int64_t *due,
                  uint64_t key, int64_t now)
{
	if (key >= (uint64_t)t->n || due[key] < 0) {
		y->twice++;
		return;
	}
	y->got++;
	y->early += now < due[key];
	due[key] = -1;
}

/* Read what is ready on ep: the kernel's descriptors one by one, the
 * set in batches.  How many records (or counts) were read. */
static long read_ready(struct timers *t, int ep, int64_t *due,
                       struct tally *y)
{
	static struct tfd_expiry rec[1024];
	struct epoll_event ev[256];
	int k = epoll_wait(ep, ev, 256, 1000), j;
	long before = y->got + y->twice;
	uint64_t c;

	for (j = 0; t->side == K && j < k; j++) {
		uint64_t i = ev[j].data.u64;

		if (read(t->fds[i], &c, sizeof(c)) == (ssize_t)sizeof(c))
			tally(y, t, due, i, now_ns());
	}
	while (t->side == E && k > 0) {
		ssize_t r = tfd_set_read(t->sfd, rec, sizeof(rec));
		int64_t now = now_ns();

		if (r <= 0)
			break;
		for (j = 0; j < r / (ssize_t)sizeof(*rec); j++)
			tally(y, t, due, rec[j].key, now);
	}
	return y->got + y->twice - before;
}

/* The n timers due within 100 ms (from 10 ms on), read through epoll
 * until all are: CPU ns per expiration (every thread), and the keys
 * early, lost or read twice. */
static void delivery(struct timers *t, const char *how, enum goal goal,
                     double target)
{
	char what[2][64];
	int64_t start = now_ns() + 10 * MS, cpu, *due;
	struct tally y = { 0, 0, 0 };
	long i, idle = 0;
	struct epoll_event ev = { EPOLLIN, { 0 } };
	int ep = t->side == E ? epoll_create1(EPOLL_CLOEXEC)
	                      : bench_watch(K, t->fds, t->n);

	due = malloc(sizeof(*due) * (size_t)t->n);
	if (ep < 0 || !due ||
	    (t->side == E && epoll_ctl(ep, EPOLL_CTL_ADD, t->sfd, &ev) < 0)) {
		bench_fail(t->side, "epoll");
		goto out;
	}
	for (i = 0; i < t->n; i++) {
		due[i] = start + (int64_t)(bench_rnd() % (uint64_t)(100 * MS));
		if (arm(t, i, TFD_TIMER_ABSTIME, due[i]) < 0) {
			bench_fail(t->side, "settime");
			goto out;
		}
	}
	cpu = cpu_ns();
	while (y.got < t->n && idle < 3)
		idle = read_ready(t, ep, due, &y) > 0 ? 0 : idle + 1;
	cpu = cpu_ns() - cpu;
	snprintf(what[0], sizeof(what[0]), "13 set: %s, CPU per expiration",
	         how ? how : "delivery");
	snprintf(what[1], sizeof(what[1]), "13 set: %s%searly, lost, twice",
	         how ? how : "", how ? ", " : "");
	bench_add(bench_row(what[0], t->n, "ns", goal, target), t->side,
	          (double)cpu / (double)(y.got ? y.got : 1));
	bench_add(bench_row(what[1], t->n, "", G_ZERO, 0), t->side,
	          (double)(y.early + t->n - y.got + y.twice));
out:
	if (ep >= 0)
		close(ep);
	free(due);
}

/* Arm + cancel of the extra key among n, m times: ns each. */
static void arm_cancel(struct timers *t, long m)
{
	int64_t t0 = now_ns();
	long i;
	int bad = 0;

	for (i = 0; i < m; i++)
		bad |= arm(t, t->n, 0, MS + (int64_t)(bench_rnd() % SPREAD)) |
		       arm(t, t->n, 0, 0);
	t0 = now_ns() - t0;
	bench_add(bench_row("13 set: arm + cancel", t->n, "ns", G_ABS_LE, 100),
	          E, (double)t0 / (double)m);
	if (bad)
		bench_fail(E, "settime");
}

/* The engine's wake-ups while the keys wait far ahead: none is due, so
 * none is needed. */
static void idle(long n)
{
	int64_t dur = bench.quick ? 100 * MS : 1 * TFD_NSEC;
	unsigned long w0;

	if (!tfd_engine_wakeups)
		return;
	sleep_ns(20 * MS); /* let the engine settle */
	w0 = bench_wakeups();
	sleep_ns(dur);
	bench_add(bench_row("13 set: engine wake-ups, keys far ahead", n, "",
	                    G_ZERO, 0),
	          E, (double)(bench_wakeups() - w0));
}

/* The engine alone: n keys (a million; ten million in the first round
 * without --quick), which no descriptor table holds: the bytes each
 * takes (the allocator's count), the wake-ups while a million wait, arm
 * + cancel among them, and the delivery of the n keys. */
static void big_set(long n)
{
	struct mallinfo2 m0 = mallinfo2(), m1;
	struct timers t;

	if (open_timers(&t, E, n) < 0) {
		close_timers(&t);
		return;
	}
	m1 = mallinfo2();
	/* (the target is a million's: the heap and the hash double) */
	bench_add(bench_row("13 set: bytes per key", n, "B",
	                    n == MILLION ? G_ABS_LE : G_NONE, 64), E,
	          (double)((m1.uordblks + m1.hblkhd) -
	                   (m0.uordblks + m0.hblkhd)) / (double)n);
	if (n == MILLION) {
		idle(n);
		arm_cancel(&t, bench.quick ? 20000 : 100000);
	}
	delivery(&t, NULL, G_ABS_LE, 100); /* 10 M expirations/s */
	close_timers(&t);
}

void workload_sets(int side, long n)
{
	struct timers t;

	if (open_timers(&t, side, n) == 0) {
		calls(&t, bench.quick ? 20000 : 100000);
		delivery(&t, NULL, G_RATIO_LE, 0.1);
	}
	close_timers(&t);
	/* The same keys in a set whose program takes them up to 1 ms late
	 * (tfd_set(3), Slack): a timer slack, which timerfds do not have. */
	if (side == E && !bench.failed) {
		prctl(PR_SET_TIMERSLACK, MS, 0, 0, 0);
		if (open_timers(&t, side, n) == 0)
			delivery(&t, "1 ms slack", G_NONE, 0);
		prctl(PR_SET_TIMERSLACK, 0, 0, 0, 0);
		close_timers(&t);
	}
	if (side == E && !bench.failed)
		big_set(MILLION);
	if (side == E && !bench.failed && !bench.quick && !bench.round)
		big_set(10 * MILLION); /* (once: 20 s) */
}
