/* SPDX-License-Identifier: MIT */
/*
 * workloads_wakeups.c - tfd bench's workloads of expirations (bench.h):
 * 5 expiry latency, 6a N timers at one deadline (read through epoll and
 * through poll), 6b N periodic timers (and 7c, the CPU they take), 7a/7b
 * the CPU the process takes while it sleeps with timers armed far ahead
 * or firing every 10 us unread; 11, workloads 5 and 6a again with two
 * busy loops on the machine.
 */
#include "bench.h"

#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

/* Machine-wide busy time in ns (all CPUs, from /proc/stat); -1 if not. */
static int64_t machine_busy_ns(void)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "re");
	int64_t busy;
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
	           &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 8)
		return -1;
	busy = (int64_t)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
	return busy * TFD_NSEC / sysconf(_SC_CLK_TCK);
}

/* ---- 5: latency (11: with two busy loops) ---- */

static void latency(int side, int loaded)
{
	const struct impl *im = &bench_impls[side];
	long m = bench.quick ? 300 : 2000, i, early = 0;
	int64_t *lat = malloc(sizeof(*lat) * (size_t)m);
	pid_t busy[BUSY_N];
	int nbusy = loaded ? bench_busy_start(busy) : 0;
	int *fds = bench_open_set(side, 1, 0);
	int ep = fds ? bench_watch(side, fds, 1) : -1;

	if (!lat || ep < 0)
		goto out;
	for (i = 0; i < m; i++) {
		int64_t deadline = now_ns() + 200 * US +
		                   (int64_t)(bench_rnd() % (800 * US)), t;
		struct itimerspec v = its(deadline, 0);
		struct epoll_event ev;
		uint64_t c = 0;
		int r;

		if (im->settime(fds[0], TFD_TIMER_ABSTIME, &v, NULL) < 0) {
			bench_fail(side, "settime");
			break;
		}
		do
			r = epoll_wait(ep, &ev, 1, 2000);
		while (r < 0 && errno == EINTR);
		t = now_ns();
		if (r != 1) {
			errno = r ? errno : ETIMEDOUT;
			bench_fail(side, "epoll_wait for a timer 1 ms ahead");
			break;
		}
		if (t < deadline)
			early++;
		lat[i] = t - deadline;
		if (bench_read_ready(side, fds[0], &c) != sizeof(c) || c != 1) {
			bench_fail(side, "read after epoll_wait (count %"
			           PRIu64 ")", c);
			break;
		}
	}
	if (i == m && !loaded) {
		qsort(lat, (size_t)m, sizeof(*lat), bench_cmp_i64);
		bench_add(bench_row("5 latency p50", 1, "us", G_PLUS_LE, 5),
		          side, (double)lat[m / 2] / US);
		bench_add(bench_row("5 latency p99", 1, "us", G_RATIO_LE, 1.5),
		          side, (double)lat[m * 99 / 100] / US);
		bench_add(bench_row("5 latency max", 1, "us", G_NONE, 0),
		          side, (double)lat[m - 1] / US);
		bench_add(bench_row("5 early wake-ups", 1, "count", G_ZERO, 0),
		          side, (double)early);
	} else if (i == m) {
		qsort(lat, (size_t)m, sizeof(*lat), bench_cmp_i64);
		bench_add(bench_row("11 latency p50, 2 busy loops", 1, "us",
		                    G_NONE, 0),
		          side, (double)lat[m / 2] / US);
		bench_add(bench_row("11 latency p99, 2 busy loops", 1, "us",
		                    G_RATIO_LE, 1.5),
		          side, (double)lat[m * 99 / 100] / US);
		bench_add(bench_row("11 early wake-ups, 2 busy loops", 1,
		                    "count", G_ZERO, 0),
		          side, (double)early);
	}
out:
	bench_unwatch(side, ep, fds, 1);
	bench_busy_stop(busy, nbusy);
	free(lat);
}

void workload_latency(int side, long n)
{
	(void)n;
	latency(side, 0);
}

void workload_latency_loaded(int side, long n)
{
	(void)n;
	latency(side, 1);
}

/* ---- 6a: N timers at one deadline, until every fd has been read, through
 * epoll or through poll (11: through epoll, with two busy loops) ---- */

enum { B_EPOLL, B_POLL, B_LOADED };

/* Poll the timers not read yet (the first *live of pfds; those read are
 * moved past them): like epoll_wait, the index of each ready one in
 * ready[], at most max; their count, or -1. */
static int poll_ready(struct pollfd *pfds, long *idx, long *live,
                      long *ready, int max)
{
	long i, n = 0;
	int r;

	do
		r = poll(pfds, (nfds_t)*live, 5000);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return r;
	for (i = 0; i < *live && n < max; i++)
		if (pfds[i].revents & POLLIN)
			ready[n++] = idx[i];
	return (int)n;
}

/* fd k was read: poll no more for it. */
static void poll_done(struct pollfd *pfds, long *idx, long *pos, long *live,
                      long k)
{
	long i = pos[k], last = --*live;
	struct pollfd p = pfds[i];
	long ki = idx[i];

	pfds[i] = pfds[last];
	idx[i] = idx[last];
	pos[idx[i]] = i;
	pfds[last] = p;
	idx[last] = ki;
	pos[ki] = last;
}

/* The timers of a burst read through poll: pfds and idx as poll_ready
 * and poll_done keep them, pos[k] where fd k is in them. */
struct poll_set {
	struct pollfd *pfds;
	long *idx, *pos, live;
};

static int poll_set_init(struct poll_set *ps, const int *fds, long n)
{
	long i;

	ps->pfds = calloc((size_t)n, sizeof(*ps->pfds));
	ps->idx = calloc((size_t)n, sizeof(*ps->idx));
	ps->pos = calloc((size_t)n, sizeof(*ps->pos));
	ps->live = n;
	if (!ps->pfds || !ps->idx || !ps->pos)
		return -1;
	for (i = 0; i < n; i++) {
		ps->pfds[i].fd = fds[i];
		ps->pfds[i].events = POLLIN;
		ps->idx[i] = ps->pos[i] = i;
	}
	return 0;
}

static void poll_set_free(struct poll_set *ps)
{
	free(ps->pfds);
	free(ps->idx);
	free(ps->pos);
}

/* A burst being read: its timers, how they are waited for, what was read
 * (done[k]: fd k at least once) and when. */
struct burst {
	int side, how, ep;
	const int *fds;
	long n, ndone, early;
	char *done;
	struct poll_set ps;
	int64_t deadline, first, t;
};

/* The n timers armed at one deadline, margin ahead: 0, or -1 (a call
 * failed, or arming them took longer than their deadline three times,
 * each time with twice the time it took: a sanitizer, a busy machine;
 * setting a timer discards what it counted). */
static int arm_burst(struct burst *b)
{
	const struct impl *im = &bench_impls[b->side];
	int64_t margin = 50 * MS + b->n * 2 * US;
	static int slow;
	struct itimerspec v;
	long i;
	int try;

	for (try = 0; try < 3; try++) {
		int64_t t0 = now_ns();

		b->deadline = t0 + margin;
		v = its(b->deadline, 0);
		for (i = 0; i < b->n; i++)
			if (im->settime(b->fds[i], TFD_TIMER_ABSTIME, &v,
			                NULL) < 0)
				break;
		if (i < b->n) {
			bench_fail(b->side, "arming %ld timers", b->n);
			return -1;
		}
		if (now_ns() < b->deadline)
			return 0;
		margin = 2 * (now_ns() - t0) + 50 * MS;
	}
	if (!slow++)
		bench_note("6a: arming %ld timers took longer than their "
		           "deadline, three times: rounds left out", b->n);
	return -1;
}

/* The r ready timers of ready[]: read, and when. */
static void read_burst(struct burst *b, const long *ready, int r)
{
	int j;

	for (j = 0; j < r; j++) {
		long k = ready[j];
		uint64_t c = 0;

		if (bench_read_ready(b->side, b->fds[k], &c) != sizeof(c))
			continue;
		b->t = now_ns();
		if (!b->first)
			b->first = b->t;
		if (b->t < b->deadline)
			b->early++;
		if (!b->done[k]) {
			b->done[k] = 1;
			b->ndone++;
			if (b->how == B_POLL)
				poll_done(b->ps.pfds, b->ps.idx, b->ps.pos,
				          &b->ps.live, k);
		}
	}
}

/* Waits until every timer has been read: 0, or -1 (said). */
static int wait_burst(struct burst *b)
{
	struct epoll_event evs[512];
	long ready[512];
	int r, j;

	while (b->ndone < b->n) {
		if (b->how == B_POLL) {
			r = poll_ready(b->ps.pfds, b->ps.idx, &b->ps.live,
			               ready, 512);
		} else {
			r = epoll_wait(b->ep, evs, 512, 5000);
			for (j = 0; j < r; j++)
				ready[j] = (long)evs[j].data.u64;
		}
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			errno = r ? errno : ETIMEDOUT;
			bench_fail(b->side, "epoll_wait (%ld of %ld read)",
			           b->ndone, b->n);
			return -1;
		}
		read_burst(b, ready, r);
	}
	return 0;
}

static void burst_rows(const struct burst *b)
{
	long n = b->n;
	int side = b->side, how = b->how;

	if (how == B_EPOLL) {
		bench_add(bench_row("6a time until the first read", n, "ms",
		                    G_NONE, 0),
		          side, (double)(b->first - b->deadline) / MS);
		bench_add(bench_row("6a time until all read", n, "ms", G_NONE,
		                    0),
		          side, (double)(b->t - b->deadline) / MS);
	}
	bench_add(bench_row(how == B_POLL ? "6a throughput, poll"
	                    : how == B_EPOLL ? "6a throughput, epoll"
	                    : "11 burst throughput, 2 busy loops",
	                    n, "k/s", G_RATIO_GE, how == B_LOADED ? 1.0 : 1.5),
	          side,
	          (double)n / ((double)(b->t - b->deadline) / TFD_NSEC) / 1000);
	bench_add(bench_row(how == B_POLL ? "6a early reads, poll"
	                    : how == B_EPOLL ? "6a early reads, epoll"
	                    : "11 burst early reads, 2 busy loops",
	                    n, "count", G_ZERO, 0),
	          side, (double)b->early);
}

static void burst(int side, long n, int how)
{
	pid_t busy[BUSY_N];
	int nbusy = how == B_LOADED ? bench_busy_start(busy) : 0;
	int *fds = bench_open_set(side, n, 0);
	struct burst b = { side, how, -1, fds, n, 0, 0, NULL,
		           { NULL, NULL, NULL, 0 }, 0, 0, 0 };
	int ok;

	b.ep = fds && how != B_POLL ? bench_watch(side, fds, n) : -1;
	ok = b.ep >= 0;
	if (how == B_POLL && fds)
		ok = poll_set_init(&b.ps, fds, n) == 0;
	b.done = calloc((size_t)n, 1);
	if (ok && b.done && arm_burst(&b) == 0 && wait_burst(&b) == 0)
		burst_rows(&b);
	bench_unwatch(side, b.ep, fds, n);
	bench_busy_stop(busy, nbusy);
	free(b.done);
	poll_set_free(&b.ps);
}

void workload_burst(int side, long n)
{
	burst(side, n, B_EPOLL);
}

void workload_burst_poll(int side, long n)
{
	burst(side, n, B_POLL);
}

void workload_burst_loaded(int side, long n)
{
	burst(side, n, B_LOADED);
}

/* ---- 6b and 7c: N periodic timers, 100 ms, phases spread ---- */

/* What the periodic timers delivered from start: expirations, reads,
 * early reads and the sum of how late they were woken for. */
struct periodic {
	int side;
	const int *fds;
	long n, early;
	int64_t start, period, late;
	uint64_t *got, total, reads;
};

/* The r timers of evs, ready when the wait woke: read. */
static void read_periodic(struct periodic *pr, const struct epoll_event *evs,
                          int r, int64_t woke)
{
	int j;

	for (j = 0; j < r; j++) {
		long k = (long)evs[j].data.u64;
		int64_t last, after;
		uint64_t c = 0;

		if (bench_read_ready(pr->side, pr->fds[k], &c) != sizeof(c))
			continue;
		after = now_ns();
		pr->got[k] += c;
		pr->total += c;
		pr->reads++;
		last = pr->start + pr->period * k / pr->n +
		       (int64_t)(pr->got[k] - 1) * pr->period;
		if (last > after)
			pr->early++;
		if (woke > last)
			pr->late += woke - last;
	}
}

/* The rows of 6b and 7c: the process's CPU cpu and the machine's busy
 * time m (-1: not known) over the run that ended at t. */
static void periodic_rows(const struct periodic *pr, int64_t t, int64_t cpu,
                          int64_t m)
{
	long n = pr->n;
	int side = pr->side;

	if (pr->total) {
		bench_add(bench_row("7c CPU per expiration, process", n, "ns",
		                    G_RATIO_LE, 1.2),
		          side, (double)cpu / (double)pr->total);
		if (m >= 0)
			bench_add(bench_row("7c CPU per expiration, machine", n,
			                    "ns", G_RATIO_LE, 1.0),
			          side, (double)m / (double)pr->total);
	}
	bench_add(bench_row("6b expirations delivered", n, "k/s", G_RATIO_GE,
	                    0.8),
	          side,
	          (double)pr->total / ((double)(t - pr->start) / TFD_NSEC) /
	                  1000);
	bench_add(bench_row("6b mean lateness", n, "us", G_NONE, 0), side,
	          pr->reads ? (double)pr->late / (double)pr->reads / US : 0);
	bench_add(bench_row("6b early reads", n, "count", G_ZERO, 0),
	          side, (double)pr->early);
	bench_add(bench_row("7c CPU during 6b (whole process)", n, "%", G_NONE,
	                    0),
	          side, 100.0 * (double)cpu / (double)(t - pr->start));
}

/* Every timer armed periodic from pr->start, their phases spread over a
 * period: 0, or -1 (said). */
static int arm_periodic(const struct periodic *pr)
{
	const struct impl *im = &bench_impls[pr->side];
	long i;

	for (i = 0; i < pr->n; i++) {
		struct itimerspec v = its(pr->start + pr->period * i / pr->n,
		                          pr->period);

		if (im->settime(pr->fds[i], TFD_TIMER_ABSTIME, &v, NULL) < 0) {
			bench_fail(pr->side, "settime");
			return -1;
		}
	}
	return 0;
}

void workload_periodic(int side, long n)
{
	int64_t dur = bench.quick ? 250 * MS : 2 * TFD_NSEC;
	struct epoll_event evs[512];
	int *fds = bench_open_set(side, n, 0);
	int ep = fds ? bench_watch(side, fds, n) : -1;
	struct periodic pr = { side, fds, n, 0, 0, 100 * MS, 0,
		               calloc((size_t)n, sizeof(uint64_t)), 0, 0 };
	int64_t end, cpu0, m0, t = 0;

	pr.start = now_ns() + 20 * MS + n * 2 * US;
	if (ep < 0 || !pr.got || arm_periodic(&pr) < 0)
		goto out;
	end = pr.start + dur;
	while (now_ns() < pr.start)
		sleep_ns(pr.start - now_ns());
	m0 = machine_busy_ns();
	cpu0 = cpu_ns();
	while ((t = now_ns()) < end) {
		int r = epoll_wait(ep, evs, 512, (int)((end - t) / MS + 1));

		if (r < 0 && errno != EINTR) {
			bench_fail(side, "epoll_wait");
			goto out;
		}
		read_periodic(&pr, evs, r, now_ns());
	}
	t = now_ns();
	cpu0 = cpu_ns() - cpu0;
	m0 = m0 >= 0 && machine_busy_ns() >= 0 ? machine_busy_ns() - m0 : -1;
	periodic_rows(&pr, t, cpu0, m0);
out:
	bench_unwatch(side, ep, fds, n);
	free(pr.got);
}

/* ---- 7a, 7b: CPU while the program sleeps ---- */

static void cpu_while_asleep(int side, long n, const char *what,
                             const char *wake_what, double target)
{
	int64_t dur = bench.quick ? 100 * MS : 1 * TFD_NSEC, t0, c0, m0, m1;
	unsigned long w0;

	sleep_ns(20 * MS); /* let the engine settle */
	w0 = bench_wakeups();
	m0 = machine_busy_ns();
	c0 = cpu_ns();
	t0 = now_ns();
	sleep_ns(dur);
	t0 = now_ns() - t0;
	c0 = cpu_ns() - c0;
	m1 = machine_busy_ns();
	bench_add(bench_row(what, n, "%", G_ABS_LE, target),
	          side, 100.0 * (double)c0 / (double)t0);
	if (side == E && tfd_engine_wakeups)
		bench_add(bench_row(wake_what, n, "/s", G_NONE, 0),
		          side, (double)(bench_wakeups() - w0) /
		                        ((double)t0 / TFD_NSEC));
	if (n == 1 && m0 >= 0 && m1 >= 0)
		bench_add(bench_row("7b machine-wide busy, all CPUs (+-1%)", n,
		                    "%", G_NONE, 0),
		          side, 100.0 * (double)(m1 - m0) / (double)t0);
}

void workload_idle(int side, long n)
{
	int *fds = bench_open_set(side, n, 1);

	if (!fds)
		return;
	cpu_while_asleep(side, n, "7a CPU, timers armed far ahead",
	                 "7a engine wake-ups", 0.1);
	bench_close_set(side, fds, n);
}

void workload_fast(int side, long n)
{
	int *fds = bench_open_set(side, 1, 0);
	struct itimerspec v = its(10 * US, 10 * US);

	(void)n;
	if (!fds)
		return;
	if (bench_impls[side].settime(fds[0], 0, &v, NULL) < 0)
		bench_fail(side, "settime");
	else
		cpu_while_asleep(side, 1, "7b CPU, 10 us periodic, unread",
		                 "7b engine wake-ups", 2);
	bench_close_set(side, fds, 1);
}
