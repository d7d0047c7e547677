/* SPDX-License-Identifier: MIT */
/*
 * cmd_bench.c - tfd bench: the engine side by side with the kernel's
 * timerfd.  See bench/README.md.
 *
 *   tfd bench [--quick] [--json] [--filter NAME]... [--rounds R]
 *             [--side kernel|engine|both] [--plain-read]
 *
 * --rounds, --side and --plain-read are for profiling (e.g. under
 * valgrind --tool=callgrind --side engine); --plain-read reads ready
 * engine timers in workloads 5 and 6 with read(2) instead of tfd_read.
 *
 * Every workload of issue 6 runs on the kernel's timerfd (timerfd_create(2)
 * and friends, called directly) and on the engine (tfd_*), in the same
 * process, interleaved kernel, engine, kernel, engine... for R rounds (5 by
 * default).  The table shows for each measure the median of the rounds,
 * their spread [min-max], the ratio engine/kernel and the target of the
 * issue.  Workloads 9a and 9b (issue 12) compare instead a process as it
 * is with one that has libtfd-preload.so loaded (9b: and its seccomp
 * filter), two children of this program that take turns.  It is a
 * benchmark: it prints, it never fails because the machine is slow or
 * busy.  Exit status 1 only when a call failed that must not
 * fail (the figures would then be meaningless), 2 on bad usage.
 */
#define _GNU_SOURCE
#include "cmd.h"
#include "tfd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The engine's own count of service-thread wake-ups (src/engine.c).  Weak:
 * when the library stops exporting it, the figures that use it are left
 * out instead of the link failing. */
extern unsigned long tfd_engine_wakeups(void) __attribute__((weak));

#define NS ((int64_t)1000000000)
#define MS ((int64_t)1000000)
#define US ((int64_t)1000)

#define MAXR 64     /* rounds */
#define MAXROWS 96
#define TOP_N 16384 /* the issue's largest N */
#define FAR (100 * NS)   /* background deadlines: 100 s ... */
#define SPREAD (900 * NS) /* ... to 1000 s ahead, random */
#define FLAGS (TFD_NONBLOCK | TFD_CLOEXEC)

enum { K, E }; /* the two sides: kernel, engine */
static const char *const side_name[2] = { "kernel", "engine" };

/* What a row's two columns are: the kernel and the engine, or for
 * workload 9 a program as it is and with libtfd-preload.so. */
struct cols {
	const char *name[2], *ratio;
};
static const struct cols kernel_engine = { { "kernel", "engine" }, "e/k" };
static const struct cols native_preload = { { "native", "preload" },
	                                    "p/n" };
static const struct cols native_filter = { { "native", "filter" }, "f/n" };

/* ---- the two implementations, called the same way ---- */

struct impl {
	int (*create)(int clockid, int flags);
	int (*settime)(int fd, int flags, const struct itimerspec *nv,
	               struct itimerspec *old);
	int (*gettime)(int fd, struct itimerspec *cur);
	ssize_t (*read)(int fd, void *buf, size_t n);
	int (*close)(int fd);
};

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

static const struct impl impls[2] = {
	{ k_create, k_settime, k_gettime, k_read, k_close },
	{ e_create, tfd_settime, tfd_gettime, tfd_read, tfd_close },
};

/* ---- options and results ---- */

enum goal {
	G_NONE,     /* information only */
	G_RATIO_LE, /* engine/kernel <= target */
	G_RATIO_GE, /* engine/kernel >= target */
	G_PLUS_LE,  /* engine <= kernel + target */
	G_ABS_LE,   /* engine <= target */
	G_ZERO,     /* a count summed over rounds: must be 0 */
};

struct row {
	char what[48];
	long n;
	const char *unit;
	enum goal goal;
	double target;
	const struct cols *cols;
	const char *ref; /* G_NONE: a figure to compare with, or NULL */
	double v[2][MAXR];
	int nv[2];
};

static struct {
	int quick, json, rounds, sides, failed, nfilter, plain;
	const char *filter[16];
	long kmax, emax; /* the largest N of timers that fits in fds */
	long nofile;     /* RLIMIT_NOFILE, raised to the hard limit */
	long nboth, nkernel;
	double overhead; /* ns of one clock reading inside a timed interval */
	struct row rows[MAXROWS];
	int nrows;
	char notes[8][512];
	char preload[PATH_MAX]; /* libtfd-preload.so, "" if not found */
	int nnotes;
	int64_t started;
} o;

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void seed(int round)
{
	rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(round + 1);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static struct itimerspec its(int64_t value, int64_t interval)
{
	struct itimerspec v;

	v.it_value.tv_sec = (time_t)(value / NS);
	v.it_value.tv_nsec = (long)(value % NS);
	v.it_interval.tv_sec = (time_t)(interval / NS);
	v.it_interval.tv_nsec = (long)(interval % NS);
	return v;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { (time_t)(ns / NS), (long)(ns % NS) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	if (o.nnotes == (int)(sizeof(o.notes) / sizeof(*o.notes)))
		return;
	va_start(ap, fmt);
	vsnprintf(o.notes[o.nnotes++], sizeof(*o.notes), fmt, ap);
	va_end(ap);
}

/* A call that must not fail did: say it; the run exits 1. */
static void fail(int side, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail(int side, const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	fprintf(stderr, "tfd bench: %s: ", side_name[side]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(e));
	o.failed = 1;
}

/* The row (what, n), created on first use with its columns, unit and
 * goal. */
static struct row *row_in(const struct cols *cols, const char *what, long n,
                          const char *unit, enum goal goal, double target)
{
	struct row *r;
	int i;

	for (i = 0; i < o.nrows; i++)
		if (o.rows[i].n == n && !strcmp(o.rows[i].what, what))
			return &o.rows[i];
	if (o.nrows == MAXROWS) {
		static struct row spare; /* never printed */

		return &spare;
	}
	r = &o.rows[o.nrows++];
	snprintf(r->what, sizeof(r->what), "%s", what);
	r->n = n;
	r->unit = unit;
	r->goal = goal;
	r->target = target;
	r->cols = cols;
	return r;
}

static struct row *row(const char *what, long n, const char *unit,
                       enum goal goal, double target)
{
	return row_in(&kernel_engine, what, n, unit, goal, target);
}

/* How workloads 5 and 6 read a ready timer: tfd_read on the engine, or
 * with --plain-read the eventfd's own read(2) (a profiling aid: it shows
 * what the engine's lock costs the reader). */
static ssize_t read_ready(int side, int fd, uint64_t *c)
{
	return side == E && !o.plain ? tfd_read(fd, c, sizeof(*c))
	                             : read(fd, c, sizeof(*c));
}

static void add(struct row *r, int side, double v)
{
	if (r->nv[side] < MAXR)
		r->v[side][r->nv[side]++] = v;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

struct stat3 {
	double med, min, max, sum;
	int n;
};

static struct stat3 stats(const struct row *r, int side)
{
	struct stat3 s = { 0, 0, 0, 0, r->nv[side] };
	double v[MAXR];
	int i;

	if (!s.n)
		return s;
	memcpy(v, r->v[side], sizeof(double) * (size_t)s.n);
	qsort(v, (size_t)s.n, sizeof(double), cmp_d);
	s.min = v[0];
	s.max = v[s.n - 1];
	s.med = s.n % 2 ? v[s.n / 2] : (v[s.n / 2 - 1] + v[s.n / 2]) / 2;
	for (i = 0; i < s.n; i++)
		s.sum += v[i];
	return s;
}

/* 1 met, 0 missed, -1 no verdict (no target or a column missing). */
static int verdict(const struct row *r, double *ratio)
{
	struct stat3 k = stats(r, K), e = stats(r, E);

	*ratio = k.n && e.n && k.med > 0 ? e.med / k.med : -1;
	switch (r->goal) {
	case G_NONE:
		return -1;
	case G_ZERO:
		return e.n || k.n ? (e.sum == 0 && k.sum == 0) : -1;
	case G_ABS_LE:
		return e.n ? e.med <= r->target : -1;
	case G_PLUS_LE:
		return k.n && e.n ? e.med <= k.med + r->target : -1;
	case G_RATIO_LE:
		return *ratio >= 0 ? *ratio <= r->target : -1;
	case G_RATIO_GE:
		return *ratio >= 0 ? *ratio >= r->target : -1;
	}
	return -1;
}

static void target_text(const struct row *r, char *buf, size_t n)
{
	switch (r->goal) {
	case G_NONE:
		snprintf(buf, n, "%s", r->ref ? r->ref : "-");
		break;
	case G_ZERO:
		snprintf(buf, n, "= 0");
		break;
	case G_ABS_LE:
		snprintf(buf, n, "<= %g %s", r->target, r->unit);
		break;
	case G_PLUS_LE:
		snprintf(buf, n, "<= k+%g%s", r->target, r->unit);
		break;
	case G_RATIO_LE:
		snprintf(buf, n, "<= %gx", r->target);
		break;
	case G_RATIO_GE:
		snprintf(buf, n, ">= %gx", r->target);
		break;
	}
}

static void num(char *buf, size_t n, double v)
{
	double a = v < 0 ? -v : v;

	if (a >= 100 || a == 0)
		snprintf(buf, n, "%.0f", v);
	else if (a >= 10)
		snprintf(buf, n, "%.1f", v);
	else if (a >= 0.1)
		snprintf(buf, n, "%.2f", v);
	else
		snprintf(buf, n, "%.3f", v);
}

/* "median [min-max]", the sum for counts, or why the column is empty. */
static void cell(const struct row *r, int side, char *buf, size_t n)
{
	struct stat3 s = stats(r, side);
	char a[24], b[24], c[24];

	if (!s.n) {
		snprintf(buf, n, "%s", side == E && r->n > o.emax ? "n/a (fds)*"
		                                                   : "-");
		return;
	}
	if (r->goal == G_ZERO) {
		num(a, sizeof(a), s.sum);
		snprintf(buf, n, "%s%s", a, s.sum ? " !!" : "");
		return;
	}
	num(a, sizeof(a), s.med);
	num(b, sizeof(b), s.min);
	num(c, sizeof(c), s.max);
	snprintf(buf, n, "%s [%s-%s]", a, b, c);
}

static void print_table(void)
{
	char nb[24], kc[80], ec[80], rt[24], tt[32];
	int i, any_na = 0, early = 0;
	const struct cols *shown = NULL;

	printf("tfd bench%s: %d rounds, kernel and engine interleaved; "
	       "median [min-max] of the rounds\n",
	       o.quick ? " --quick" : "", o.rounds);
	for (i = 0; i < o.nrows; i++) {
		const struct row *r = &o.rows[i];
		double ratio;
		int v = verdict(r, &ratio);

		if (!r->nv[K] && !r->nv[E])
			continue;
		if (r->cols != shown) /* a header for each kind of columns */
			printf("%s%-34s %6s %-5s %-24s %-24s %6s  %-12s\n",
			       shown ? "\n" : "", shown ? "" : "workload", "N",
			       "unit", r->cols->name[K], r->cols->name[E],
			       r->cols->ratio, "target");
		shown = r->cols;
		if (!r->nv[E] && r->n > o.emax)
			any_na = 1;
		if (r->goal == G_ZERO && v == 0)
			early = 1;
		snprintf(nb, sizeof(nb), "%ld", r->n);
		cell(r, K, kc, sizeof(kc));
		cell(r, E, ec, sizeof(ec));
		if (ratio >= 0 && r->goal != G_ZERO)
			num(rt, sizeof(rt), ratio);
		else
			snprintf(rt, sizeof(rt), "-");
		target_text(r, tt, sizeof(tt));
		printf("%-34s %6s %-5s %-24s %-24s %6s  %-12s %s\n", r->what,
		       r->n ? nb : "-", r->unit, kc, ec, rt, tt,
		       v < 0 ? "" : v ? "met" : "MISSED");
	}
	if (any_na)
		printf("* the engine column stops at N = %ld: RLIMIT_NOFILE "
		       "allows %ld descriptors.\n", o.emax, o.nofile);
	if (early)
		printf("!! EARLY WAKE-UPS: an expiration was reported before "
		       "its deadline. That is a bug, not a slow machine.\n");
	for (i = 0; i < o.nnotes; i++)
		printf("note: %s\n", o.notes[i]);
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void json_side(const struct row *r, int side)
{
	struct stat3 s = stats(r, side);
	int i;

	if (!s.n) {
		printf("null");
		return;
	}
	printf("{\"median\": %.6g, \"min\": %.6g, \"max\": %.6g, "
	       "\"sum\": %.6g, \"rounds\": [",
	       s.med, s.min, s.max, s.sum);
	for (i = 0; i < s.n; i++)
		printf("%s%.6g", i ? ", " : "", r->v[side][i]);
	printf("]}");
}

static void print_json(void)
{
	struct utsname u;
	char date[32], tt[32];
	time_t t = time(NULL);
	int i, printed = 0;

	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	uname(&u);
	printf("{\n  \"tool\": \"tfd bench\",\n  \"version\": ");
	json_str(TFD_VERSION_STRING);
	printf(",\n  \"date\": \"%s\",\n  \"quick\": %s,\n  \"rounds\": %d,\n",
	       date, o.quick ? "true" : "false", o.rounds);
	printf("  \"machine\": {\"cpus\": %ld, \"kernel\": ",
	       sysconf(_SC_NPROCESSORS_ONLN));
	json_str(u.release);
	printf(", \"nofile\": %ld, \"engine_max_n\": %ld, "
	       "\"kernel_max_n\": %ld},\n",
	       o.nofile, o.emax, o.kmax);
	printf("  \"seconds\": %.1f,\n  \"results\": [",
	       (double)(now_ns() - o.started) / NS);
	for (i = 0; i < o.nrows; i++) {
		const struct row *r = &o.rows[i];
		double ratio;
		int v = verdict(r, &ratio);

		if (!r->nv[K] && !r->nv[E])
			continue;
		target_text(r, tt, sizeof(tt));
		printf("%s\n    {\"what\": ", printed++ ? "," : "");
		json_str(r->what);
		printf(", \"n\": %ld, \"unit\": ", r->n);
		json_str(r->unit);
		printf(",\n     \"%s\": ", r->cols->name[K]);
		json_side(r, K);
		printf(",\n     \"%s\": ", r->cols->name[E]);
		json_side(r, E);
		if (ratio >= 0 && r->goal != G_ZERO)
			printf(",\n     \"ratio\": %.4g", ratio);
		else
			printf(",\n     \"ratio\": null");
		printf(", \"target\": ");
		json_str(tt);
		printf(", \"met\": %s}",
		       v < 0 ? "null" : v ? "true" : "false");
	}
	printf("\n  ],\n  \"notes\": [");
	for (i = 0; i < o.nnotes; i++) {
		printf("%s\n    ", i ? "," : "");
		json_str(o.notes[i]);
	}
	printf("\n  ]\n}\n");
}

/* ---- helpers of the workloads ---- */

/* n timers on CLOCK_MONOTONIC; armed at random deadlines 100 to 1000 s
 * ahead when arm is set.  NULL (after saying why) on failure. */
static void close_set(int side, int *fds, long n)
{
	long i;

	for (i = 0; i < n; i++)
		impls[side].close(fds[i]);
	free(fds);
}

static int *open_set(int side, long n, int arm)
{
	const struct impl *im = &impls[side];
	int *fds = malloc(sizeof(*fds) * (size_t)(n ? n : 1));
	long i;

	if (!fds) {
		fail(side, "malloc");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		struct itimerspec v = its(FAR + (int64_t)(rnd() % SPREAD), 0);

		fds[i] = im->create(CLOCK_MONOTONIC, FLAGS);
		if (fds[i] < 0) {
			fail(side, "create timer %ld of %ld", i + 1, n);
			close_set(side, fds, i);
			return NULL;
		}
		if (arm && im->settime(fds[i], 0, &v, NULL) < 0) {
			fail(side, "settime");
			close_set(side, fds, i + 1);
			return NULL;
		}
	}
	return fds;
}

/* An epoll instance watching fds for EPOLLIN, data = index; -1 on error. */
static int watch(int side, const int *fds, long n)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	long i;

	if (ep < 0) {
		fail(side, "epoll_create1");
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct epoll_event ev = { EPOLLIN, { .u64 = (uint64_t)i } };

		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) < 0) {
			fail(side, "epoll_ctl");
			close(ep);
			return -1;
		}
	}
	return ep;
}

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
	return busy * NS / sysconf(_SC_CLK_TCK);
}

static unsigned long wakeups(void)
{
	return tfd_engine_wakeups ? tfd_engine_wakeups() : 0;
}

/* ---- 1: create + close ---- */

static void w_create(int side, long n)
{
	const struct impl *im = &impls[side];
	long m = o.quick ? 5000 : 20000, i;
	int64_t t0 = now_ns();

	(void)n;
	for (i = 0; i < m; i++) {
		int fd = im->create(CLOCK_MONOTONIC, FLAGS);

		if (fd < 0 || im->close(fd) < 0) {
			fail(side, fd < 0 ? "create" : "close");
			return;
		}
	}
	add(row("1 create + close", 1, "ns", G_RATIO_LE, 1.3), side,
	    (double)(now_ns() - t0) / (double)m);
}

/* ---- 2: arm, re-arm, disarm with N armed timers ---- */

static const char *const arm_rows[3] = { "2 arm a disarmed timer",
	                                 "2 re-arm to a new deadline",
	                                 "2 disarm" };

static void w_arm(int side, long n)
{
	const struct impl *im = &impls[side];
	long m = o.quick ? 3000 : 20000, i;
	int64_t sum[3] = { 0, 0, 0 };
	struct itimerspec off = its(0, 0);
	int *fds = open_set(side, n, 1);
	unsigned long w0 = wakeups();
	int k;

	if (!fds)
		return;
	for (i = 0; i < m; i++) {
		int fd = fds[rnd() % (uint64_t)n];
		struct itimerspec re = its(FAR + (int64_t)(rnd() % SPREAD), 0);
		struct itimerspec on = its(FAR + (int64_t)(rnd() % SPREAD), 0);
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
			fail(side, "settime");
			break;
		}
		sum[1] += t1 - t0;
		sum[2] += t2 - t1;
		sum[0] += t3 - t2;
	}
	if (i == m)
		for (k = 0; k < 3; k++)
			add(row(arm_rows[k], n, "ns", G_RATIO_LE, 0.2), side,
			    (double)sum[k] / (double)m - o.overhead);
	if (i == m && side == E && tfd_engine_wakeups)
		add(row("2 engine wake-ups per 1000 calls", n, "", G_NONE, 0),
		    side, (double)(wakeups() - w0) * 1000 / (double)(3 * m));
	close_set(side, fds, n);
}

/* ---- 2f: re-arming a timer inherited through fork(), in the child: on
 * Linux the child acts on the parent's timer; so does it on the engine
 * (tfd(7), FORK AND EXEC), at the cost of a re-arm in the parent
 * (row 2).  The child times m re-arms and tells the parent. ---- */

static void w_fork_arm(int side, long n)
{
	const struct impl *im = &impls[side];
	long m = o.quick ? 3000 : 20000;
	int *fds = open_set(side, 1, 1), p[2], st = 1;
	double v = -1;
	pid_t pid;

	(void)n;
	if (!fds)
		return;
	if (pipe2(p, O_CLOEXEC) < 0) {
		fail(side, "pipe");
		close_set(side, fds, 1);
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
			re = its(FAR + (int64_t)(rnd() % SPREAD), 0);
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
		fail(side, "re-arm in a forked child");
	else
		add(row("2f re-arm an inherited timer, in a child", 1, "ns",
		        G_RATIO_LE, 0.2),
		    side, v - o.overhead);
	close(p[0]);
	close_set(side, fds, 1);
}

/* ---- 3: gettime; 4: read ---- */

static void w_gettime(int side, long n)
{
	const struct impl *im = &impls[side];
	long m = o.quick ? 20000 : 100000, i;
	int *fds = open_set(side, 1, 1);
	struct itimerspec cur;
	int64_t t0;

	(void)n;
	if (!fds)
		return;
	t0 = now_ns();
	for (i = 0; i < m; i++)
		if (im->gettime(fds[0], &cur) < 0)
			break;
	t0 = now_ns() - t0;
	if (i < m || cur.it_value.tv_sec < 1)
		fail(side, "gettime");
	else
		add(row("3 gettime, armed timer", 1, "ns", G_RATIO_LE, 0.2),
		    side, (double)t0 / (double)m);
	close_set(side, fds, 1);
}

static void w_read_none(int side, long n)
{
	const struct impl *im = &impls[side];
	long m = o.quick ? 20000 : 100000, i;
	int *fds = open_set(side, 1, 1);
	uint64_t c;
	int64_t t0;
	int pass;

	(void)n;
	if (!fds)
		return;
	/* pass 0: the API (tfd_read on the engine); pass 1: plain read(). */
	for (pass = 0; pass < 2; pass++) {
		ssize_t (*rd)(int, void *, size_t) = pass ? k_read : im->read;

		t0 = now_ns();
		for (i = 0; i < m; i++)
			if (rd(fds[0], &c, sizeof(c)) >= 0 || errno != EAGAIN)
				break;
		t0 = now_ns() - t0;
		if (i < m) {
			fail(side, "read of an unexpired timer");
			break;
		}
		add(pass ? row("4a read(2), nothing expired", 1, "ns", G_NONE, 0)
		         : row("4a tfd_read, nothing expired", 1, "ns",
		               G_NONE, 0),
		    side, (double)t0 / (double)m);
	}
	close_set(side, fds, 1);
}

/* 1,024 one-shot timers armed in the past, all readable; read each once. */
static void w_read_some(int side, long n)
{
	const struct impl *im = &impls[side];
	int batches = o.quick ? 3 : 10, b;
	struct itimerspec past = its(1, 0); /* absolute 1 ns: long ago */
	int *fds = open_set(side, n, 0);
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
			fail(side, "settime");
			break;
		}
		for (i = 0; i < n; i++) {
			struct pollfd p = { fds[i], POLLIN, 0 };

			if (poll(&p, 1, 1000) != 1)
				break;
		}
		if (i < n) {
			fail(side, "a timer armed in the past is not readable");
			break;
		}
		t0 = now_ns();
		for (i = 0; i < n; i++) {
			uint64_t c = 0;

			if (im->read(fds[i], &c, sizeof(c)) != sizeof(c) ||
			    c != 1)
				break;
		}
		total += now_ns() - t0;
		if (i < n) {
			fail(side, "read of an expired one-shot timer");
			break;
		}
	}
	if (b == batches)
		add(row("4b read, 1 expiration", n, "ns", G_NONE, 0), side,
		    (double)total / (double)(n * batches));
	close_set(side, fds, n);
}

/* ---- 5: latency ---- */

static void w_latency(int side, long n)
{
	const struct impl *im = &impls[side];
	long m = o.quick ? 300 : 2000, i, early = 0;
	int64_t *lat = malloc(sizeof(*lat) * (size_t)m);
	int *fds = open_set(side, 1, 0);
	int ep = fds ? watch(side, fds, 1) : -1;

	(void)n;
	if (!lat || ep < 0)
		goto out;
	for (i = 0; i < m; i++) {
		int64_t deadline = now_ns() + 200 * US +
		                   (int64_t)(rnd() % (800 * US)), t;
		struct itimerspec v = its(deadline, 0);
		struct epoll_event ev;
		uint64_t c = 0;
		int r;

		if (im->settime(fds[0], TFD_TIMER_ABSTIME, &v, NULL) < 0) {
			fail(side, "settime");
			break;
		}
		do
			r = epoll_wait(ep, &ev, 1, 2000);
		while (r < 0 && errno == EINTR);
		t = now_ns();
		if (r != 1) {
			errno = r ? errno : ETIMEDOUT;
			fail(side, "epoll_wait for a timer 1 ms ahead");
			break;
		}
		if (t < deadline)
			early++;
		lat[i] = t - deadline;
		if (read_ready(side, fds[0], &c) != sizeof(c) || c != 1) {
			fail(side, "read after epoll_wait (count %" PRIu64 ")",
			     c);
			break;
		}
	}
	if (i == m) {
		qsort(lat, (size_t)m, sizeof(*lat), cmp_i64);
		add(row("5 latency p50", 1, "us", G_PLUS_LE, 20), side,
		    (double)lat[m / 2] / US);
		add(row("5 latency p99", 1, "us", G_RATIO_LE, 2), side,
		    (double)lat[m * 99 / 100] / US);
		add(row("5 latency max", 1, "us", G_NONE, 0), side,
		    (double)lat[m - 1] / US);
		add(row("5 early wake-ups", 1, "count", G_ZERO, 0), side,
		    (double)early);
	}
out:
	if (ep >= 0)
		close(ep);
	if (fds)
		close_set(side, fds, 1);
	free(lat);
}

/* ---- 6a: N timers at one deadline, until every fd has been read ---- */

static void w_burst(int side, long n)
{
	const struct impl *im = &impls[side];
	struct epoll_event evs[512];
	int *fds = open_set(side, n, 0);
	int ep = fds ? watch(side, fds, n) : -1;
	char *done = calloc((size_t)n, 1);
	static int slow;
	long ndone = 0, early = 0, i;
	int64_t deadline, t = 0, first = 0, margin = 50 * MS + n * 2 * US;
	int try;
	struct itimerspec v;

	if (ep < 0 || !done)
		goto out;
	/* Armed again, with twice the time it took, if arming them took
	 * longer than the margin (a sanitizer, a busy machine): setting a
	 * timer discards what it counted. */
	for (try = 0; try < 3; try++) {
		int64_t t0 = now_ns();

		deadline = t0 + margin;
		v = its(deadline, 0);
		for (i = 0; i < n; i++)
			if (im->settime(fds[i], TFD_TIMER_ABSTIME, &v, NULL) < 0)
				break;
		if (i < n) {
			fail(side, "arming %ld timers", n);
			goto out;
		}
		if (now_ns() < deadline)
			break;
		margin = 2 * (now_ns() - t0) + 50 * MS;
	}
	if (try == 3) {
		if (!slow++)
			note("6a: arming %ld timers took longer than their "
			     "deadline, three times: rounds left out", n);
		goto out;
	}
	while (ndone < n) {
		int r = epoll_wait(ep, evs, 512, 5000), j;

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			errno = r ? errno : ETIMEDOUT;
			fail(side, "epoll_wait (%ld of %ld read)", ndone, n);
			goto out;
		}
		for (j = 0; j < r; j++) {
			long k = (long)evs[j].data.u64;
			uint64_t c = 0;

			if (read_ready(side, fds[k], &c) != sizeof(c))
				continue;
			t = now_ns();
			if (!first)
				first = t;
			if (t < deadline)
				early++;
			if (!done[k]) {
				done[k] = 1;
				ndone++;
			}
		}
	}
	add(row("6a time until the first read", n, "ms", G_NONE, 0), side,
	    (double)(first - deadline) / MS);
	add(row("6a time until all read", n, "ms", G_NONE, 0), side,
	    (double)(t - deadline) / MS);
	add(row("6a throughput", n, "k/s", G_RATIO_GE, 0.8), side,
	    (double)n / ((double)(t - deadline) / NS) / 1000);
	add(row("6a early reads", n, "count", G_ZERO, 0), side, (double)early);
out:
	if (ep >= 0)
		close(ep);
	if (fds)
		close_set(side, fds, n);
	free(done);
}

/* ---- 6b and 7c: N periodic timers, 100 ms, phases spread ---- */

static void w_periodic(int side, long n)
{
	const struct impl *im = &impls[side];
	const int64_t period = 100 * MS;
	int64_t dur = o.quick ? 250 * MS : 2 * NS;
	struct epoll_event evs[512];
	int *fds = open_set(side, n, 0);
	int ep = fds ? watch(side, fds, n) : -1;
	uint64_t *got = calloc((size_t)n, sizeof(*got)), total = 0, reads = 0;
	int64_t start, end, cpu0, late = 0, t = 0;
	long early = 0, i;

	if (ep < 0 || !got)
		goto out;
	start = now_ns() + 20 * MS + n * 2 * US;
	for (i = 0; i < n; i++) {
		struct itimerspec v = its(start + period * i / n, period);

		if (im->settime(fds[i], TFD_TIMER_ABSTIME, &v, NULL) < 0)
			break;
	}
	if (i < n) {
		fail(side, "settime");
		goto out;
	}
	end = start + dur;
	while (now_ns() < start)
		sleep_ns(start - now_ns());
	cpu0 = cpu_ns();
	while ((t = now_ns()) < end) {
		int r = epoll_wait(ep, evs, 512, (int)((end - t) / MS + 1)), j;
		int64_t woke = now_ns();

		if (r < 0 && errno != EINTR) {
			fail(side, "epoll_wait");
			goto out;
		}
		for (j = 0; j < r; j++) {
			long k = (long)evs[j].data.u64;
			int64_t last, after;
			uint64_t c = 0;

			if (read_ready(side, fds[k], &c) != sizeof(c))
				continue;
			after = now_ns();
			got[k] += c;
			total += c;
			reads++;
			last = start + period * k / n +
			       (int64_t)(got[k] - 1) * period;
			if (last > after)
				early++;
			if (woke > last)
				late += woke - last;
		}
	}
	t = now_ns();
	add(row("6b expirations delivered", n, "k/s", G_RATIO_GE, 0.8), side,
	    (double)total / ((double)(t - start) / NS) / 1000);
	add(row("6b mean lateness", n, "us", G_NONE, 0), side,
	    reads ? (double)late / (double)reads / US : 0);
	add(row("6b early reads", n, "count", G_ZERO, 0), side, (double)early);
	add(row("7c CPU during 6b (whole process)", n, "%", G_NONE, 0), side,
	    100.0 * (double)(cpu_ns() - cpu0) / (double)(t - start));
out:
	if (ep >= 0)
		close(ep);
	if (fds)
		close_set(side, fds, n);
	free(got);
}

/* ---- 7a, 7b: CPU while the program sleeps ---- */

static void cpu_while_asleep(int side, long n, const char *what,
                             const char *wake_what, double target)
{
	int64_t dur = o.quick ? 100 * MS : 1 * NS, t0, c0, m0, m1;
	unsigned long w0;

	sleep_ns(20 * MS); /* let the engine settle */
	w0 = wakeups();
	m0 = machine_busy_ns();
	c0 = cpu_ns();
	t0 = now_ns();
	sleep_ns(dur);
	t0 = now_ns() - t0;
	c0 = cpu_ns() - c0;
	m1 = machine_busy_ns();
	add(row(what, n, "%", G_ABS_LE, target), side,
	    100.0 * (double)c0 / (double)t0);
	if (side == E && tfd_engine_wakeups)
		add(row(wake_what, n, "/s", G_NONE, 0), side,
		    (double)(wakeups() - w0) / ((double)t0 / NS));
	if (n == 1 && m0 >= 0 && m1 >= 0)
		add(row("7b machine-wide busy, all CPUs (+-1%)", n, "%", G_NONE, 0),
		    side, 100.0 * (double)(m1 - m0) / (double)t0);
}

static void w_idle(int side, long n)
{
	int *fds = open_set(side, n, 1);

	if (!fds)
		return;
	cpu_while_asleep(side, n, "7a CPU, timers armed far ahead",
	                 "7a engine wake-ups", 0.1);
	close_set(side, fds, n);
}

static void w_fast(int side, long n)
{
	int *fds = open_set(side, 1, 0);
	struct itimerspec v = its(10 * US, 10 * US);

	(void)n;
	if (!fds)
		return;
	if (impls[side].settime(fds[0], 0, &v, NULL) < 0)
		fail(side, "settime");
	else
		cpu_while_asleep(side, 1, "7b CPU, 10 us periodic, unread",
		                 "7b engine wake-ups", 2);
	close_set(side, fds, 1);
}

/* ---- 8: memory, measured in a fresh process (the engine's tables keep
 * their high-water mark, so a second measurement in one process would
 * miss them) ---- */

static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

static long long rss_bytes(void)
{
	long long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%lld %lld", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * sysconf(_SC_PAGESIZE);
}

static long long slab_bytes(void)
{
	char line[128];
	long long kb = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/* What the process has in use: malloc's, and the shared memory it has
 * touched (the engine keeps its timers in memory a fork shares). */
static long long heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();
	long long shmem = 0;
	char line[128];
	FILE *f = fopen("/proc/self/status", "re");

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "RssShmem: %lld kB", &shmem) == 1)
				break;
		fclose(f);
	}
	return (long long)(mi.uordblks + mi.hblkhd) + shmem * 1024;
}

/* In the child: print "malloc rss fds slab" per timer for n timers. */
static int memory_child(int side, long n)
{
	long long h0, r0, s0;
	long f0, f1;
	int *fds = malloc(sizeof(*fds) * (size_t)n), *one;

	if (!fds)
		return 1;
	memset(fds, 0, sizeof(*fds) * (size_t)n);
	one = open_set(side, 1, 1); /* start the engine's thread first */
	if (!one)
		return 1;
	h0 = heap_bytes();
	r0 = rss_bytes();
	f0 = count_fds();
	s0 = slab_bytes();
	free(fds);
	n--; /* with the first one, n timers: tables sized for n */
	fds = open_set(side, n, 1);
	if (!fds || n < 1)
		return 1;
	f1 = count_fds();
	printf("%.2f %.2f %.3f %.2f\n", (double)(heap_bytes() - h0) / n,
	       (double)(rss_bytes() - r0) / n, (double)(f1 - f0) / n,
	       (double)(slab_bytes() - s0) / n);
	close_set(side, fds, n); /* measured: leave nothing (LeakSanitizer) */
	close_set(side, one, 1);
	return 0;
}

/* This program run again with argv and the environment env (NULL: ours),
 * what it prints on standard output in out: 0 if it exited 0, else -1
 * (errno EIO when it ran and failed). */
static int rerun(char **argv, char **env, char *out, size_t n)
{
	ssize_t r, len = 0;
	int p[2], st;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execve("/proc/self/exe", argv, env ? env : environ);
		_exit(127);
	}
	close(p[1]);
	while (pid > 0 && (r = read(p[0], out + len,
	                            n - 1 - (size_t)len)) > 0)
		len += r;
	out[len] = 0;
	close(p[0]);
	if (pid < 0)
		return -1;
	if (waitpid(pid, &st, 0) < 0 || st != 0) {
		errno = EIO;
		return -1;
	}
	return 0;
}

static void w_memory(int side, long n)
{
	char arg[2][32], out[256] = "";
	char *argv[] = { (char *)"tfd", (char *)"bench", arg[0], arg[1], NULL };
	double v[4];
	int r;

	snprintf(arg[0], sizeof(arg[0]), "--memory-child=%s", side_name[side]);
	snprintf(arg[1], sizeof(arg[1]), "%ld", n);
	r = rerun(argv, NULL, out, sizeof(out));
	if (r == 0 &&
	    sscanf(out, "%lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3]) != 4) {
		errno = EIO;
		r = -1;
	}
	if (r < 0) {
		fail(side, "memory measurement in a child process");
		return;
	}
	add(row("8 user memory per timer (malloc+shared)", n, "B", G_ABS_LE,
	        128),
	    side, v[0]);
	add(row("8 RSS per timer", n, "B", G_NONE, 0), side, v[1]);
	add(row("8 descriptors per timer", n, "fds", G_NONE, 0), side, v[2]);
	add(row("8 kernel slab per timer (noisy)", n, "B", G_NONE, 0), side,
	    v[3]);
}

/* The workloads, for --filter (each runs for one or several N). */
enum { W_CREATE, W_ARM, W_FORK_ARM, W_GETTIME, W_READ_NONE, W_READ_SOME, W_LATENCY,
       W_BURST, W_PERIODIC, W_IDLE, W_FAST, W_MEMORY, W_PRELOAD, W_FILTER,
       NWORKLOADS };
static const struct {
	const char *id, *name;
} workloads[NWORKLOADS] = {
	[W_CREATE] = { "1", "create + close" },
	[W_ARM] = { "2", "arm, re-arm, disarm" },
	[W_FORK_ARM] = { "2f", "re-arm in a forked child" },
	[W_GETTIME] = { "3", "gettime" },
	[W_READ_NONE] = { "4a", "read, nothing expired" },
	[W_READ_SOME] = { "4b", "read, something expired" },
	[W_LATENCY] = { "5", "expiry latency" },
	[W_BURST] = { "6a", "burst: one deadline" },
	[W_PERIODIC] = { "6b", "periodic, 100 ms, spread" },
	[W_IDLE] = { "7a", "CPU: idle timers" },
	[W_FAST] = { "7b", "CPU: 10 us periodic, unread" },
	[W_MEMORY] = { "8", "memory" },
	[W_PRELOAD] = { "9a", "preload: pipes, sockets" },
	[W_FILTER] = { "9b", "seccomp filter: getppid" },
};

/* ---- 9a: what libtfd-preload.so adds to calls on other descriptors;
 * 9b: what the seccomp filter of --raw-syscalls adds to every system
 * call.  Each round runs this program again twice (preload_child): as it
 * is (native) and with the library preloaded (preload), or with the
 * library and TFD_RAW_SYSCALLS=1 (filter).  The two children stay alive
 * for the round and take turns: a slice of every measure in one, then in
 * the other, SLICES times, so that both see the machine as it is at that
 * moment; the round's figure is the median of the slices. ---- */

enum { P_READ, P_WRITE, P_CLOSE, P_POLL, NPOPS };
#define PBATCH 64 /* calls between two clock readings */
#define NMEASURES (2 * NPOPS + 1) /* 9a: pipe, socket, poll with a timer */
#define SLICES 15

static const char *const measure_rows[NMEASURES] = {
	"9a read(2), pipe, 1 byte", "9a write(2), pipe, 1 byte",
	"9a close(2), a dup of a pipe", "9a poll(2), pipe, 0 ms",
	"9a read(2), socket, 1 byte", "9a write(2), socket, 1 byte",
	"9a close(2), a dup of a socket", "9a poll(2), socket, 0 ms",
	"9a poll(2), pipe, 1 timer open",
};
#define GETPPID_ROW "9b getppid(2)"

/* ns per call of op on the pair (rd, wr), over batches of PBATCH calls;
 * what a batch needs (bytes to read, descriptors to close) is made
 * outside the timed part.  -1 if a call failed. */
static double time_op(int op, int rd, int wr, long batches)
{
	char buf[PBATCH] = { 0 };
	int fds[PBATCH], i;
	struct pollfd p = { rd, POLLIN, 0 };
	int64_t spent = 0, t0;
	long b;

	for (b = 0; b < batches; b++) {
		if (op == P_READ && write(wr, buf, PBATCH) != PBATCH)
			return -1;
		for (i = 0; op == P_CLOSE && i < PBATCH; i++)
			if ((fds[i] = dup(rd)) < 0)
				return -1;
		t0 = now_ns();
		for (i = 0; i < PBATCH; i++) {
			switch (op) {
			case P_READ:
				if (read(rd, buf, 1) != 1)
					return -1;
				break;
			case P_WRITE:
				if (write(wr, buf, 1) != 1)
					return -1;
				break;
			case P_CLOSE:
				if (close(fds[i]) < 0)
					return -1;
				break;
			default:
				if (poll(&p, 1, 0) != 0)
					return -1;
			}
		}
		spent += now_ns() - t0;
		if (op == P_WRITE && read(rd, buf, PBATCH) != PBATCH)
			return -1;
	}
	return (double)spent / (double)(batches * PBATCH);
}

/* One slice of 9a: every measure, into v; -1 if a call failed.  The last
 * with a timer open (the preload's waits then look at their sets). */
static int slice_9a(int pair[2][2], long batches, double *v)
{
	struct itimerspec far = its(100 * NS, 0);
	int k, op, t;

	for (k = 0; k < 2; k++)
		for (op = 0; op < NPOPS; op++)
			if ((v[k * NPOPS + op] = time_op(op, pair[k][0],
			                                 pair[k][1], batches)) < 0)
				return -1;
	t = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t < 0 || timerfd_settime(t, 0, &far, NULL) < 0)
		return -1;
	v[2 * NPOPS] = time_op(P_POLL, pair[0][0], pair[0][1], batches);
	close(t);
	return v[2 * NPOPS] < 0 ? -1 : 0;
}

/* 1 if a raw timerfd_gettime(2) on a timer of glibc's timerfd_create
 * works: a kernel timerfd, or the preload's trap (the filter is on). */
static int raw_gettime_works(void)
{
	struct itimerspec cur;
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC), ok;

	ok = fd >= 0 && syscall(SYS_timerfd_gettime, fd, &cur) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* The child of workload 9a or 9b: for each line on standard input, one
 * slice, its figures on one line of standard output.  At the end of its
 * input, 9b says whether the filter was in place ("raw 1"). */
static int preload_child(const char *what)
{
	long batches = o.quick ? 2 : 4, calls = o.quick ? 1000 : 2000, k;
	int pair[2][2], i, n = strcmp(what, "9b") ? NMEASURES : 1;
	double v[NMEASURES];
	char line[16];

	if (n > 1 && (pipe2(pair[0], O_CLOEXEC) < 0 ||
	              socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	                         pair[1]) < 0))
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		if (n > 1 && slice_9a(pair, batches, v) < 0)
			return 1;
		if (n == 1) {
			int64_t t0 = now_ns();

			for (k = 0; k < calls; k++)
				getppid();
			v[0] = (double)(now_ns() - t0) / (double)calls;
		}
		for (i = 0; i < n; i++)
			printf("%s%.2f", i ? " " : "", v[i]);
		printf("\n");
		fflush(stdout);
	}
	if (n == 1)
		printf("raw %d\n", raw_gettime_works());
	for (i = 0; n > 1 && i < 4; i++)
		close(pair[i / 2][i % 2]);
	return 0;
}

/* A string made as printf would, or NULL. */
static char *str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&p, fmt, ap);
	va_end(ap);
	return r < 0 ? NULL : p;
}

/* The environment of a child of workload 9: ours without the TFD_*
 * variables; with the library lib (NULL: native), LD_PRELOAD with lib
 * added last (a sanitizer's runtime must stay first), ASAN_OPTIONS that
 * let it, TFD_BACKEND=engine, and TFD_RAW_SYSCALLS=1 if raw. */
struct child_env {
	char **v;
	char *own[2]; /* LD_PRELOAD=, ASAN_OPTIONS= */
};

static void child_env_free(struct child_env *c)
{
	free(c->v);
	free(c->own[0]);
	free(c->own[1]);
}

static int child_env(struct child_env *c, const char *lib, int raw)
{
	const char *pre = getenv("LD_PRELOAD"), *asan = getenv("ASAN_OPTIONS");
	size_t n = 0, i, k = 0;

	memset(c, 0, sizeof(*c));
	while (environ[n])
		n++;
	c->v = calloc(n + 5, sizeof(*c->v));
	if (!c->v)
		return -1;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "TFD_", 4) &&
		    (!lib || (strncmp(environ[i], "LD_PRELOAD=", 11) &&
		              strncmp(environ[i], "ASAN_OPTIONS=", 13))))
			c->v[k++] = environ[i];
	if (!lib)
		return 0;
	c->own[0] = str("LD_PRELOAD=%s%s%s", pre ? pre : "",
	                pre && *pre ? ":" : "", lib);
	c->own[1] = str("ASAN_OPTIONS=verify_asan_link_order=0%s%s",
	                asan && *asan ? ":" : "", asan ? asan : "");
	if (!c->own[0] || !c->own[1]) {
		child_env_free(c);
		return -1;
	}
	c->v[k++] = c->own[0];
	c->v[k++] = c->own[1];
	c->v[k++] = (char *)"TFD_BACKEND=engine";
	if (raw)
		c->v[k++] = (char *)"TFD_RAW_SYSCALLS=1";
	return 0;
}

/* A child that runs slices when asked (preload_child). */
struct live {
	pid_t pid;
	FILE *to, *from;
};

/* Starts this program as argv in the environment env, on the CPUs of
 * cpus: 0 or -1. */
static int live_start(struct live *c, char **argv, char **env,
                      const cpu_set_t *cpus)
{
	struct sigaction dfl;
	int in[2], out[2];

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	c->pid = -1;
	c->to = c->from = NULL;
	if (pipe2(in, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	fflush(NULL);
	c->pid = fork();
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		sched_setaffinity(0, sizeof(*cpus), cpus);
		sigaction(SIGPIPE, &dfl, NULL); /* we ignore it (live_round) */
		execve("/proc/self/exe", argv, env);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->to = c->pid > 0 ? fdopen(in[1], "w") : NULL;
	c->from = c->pid > 0 ? fdopen(out[0], "r") : NULL;
	if (c->pid > 0 && c->to && c->from)
		return 0;
	if (c->to)
		fclose(c->to);
	else
		close(in[1]);
	if (c->from)
		fclose(c->from);
	else
		close(out[0]);
	c->to = c->from = NULL;
	if (c->pid > 0) /* its input is closed: it ends */
		waitpid(c->pid, NULL, 0);
	c->pid = -1;
	return -1;
}

/* One slice: n figures into v; 0 or -1.  A child that does not answer
 * within LIVE_WAIT ms (a library that hangs) fails with ETIMEDOUT. */
#define LIVE_WAIT 60000
static int live_slice(struct live *c, double *v, int n)
{
	struct pollfd p1 = { fileno(c->from), POLLIN, 0 };
	char line[512], *p = line, *end;
	int i, r;

	if (fputs("go\n", c->to) < 0 || fflush(c->to) != 0)
		return -1;
	while ((r = poll(&p1, 1, LIVE_WAIT)) < 0 && errno == EINTR)
		;
	if (r == 0)
		errno = ETIMEDOUT;
	if (r <= 0 || !fgets(line, sizeof(line), c->from))
		return -1;
	for (i = 0; i < n; i++, p = end) {
		v[i] = strtod(p, &end);
		if (end == p)
			return -1;
	}
	return 0;
}

/* Ends the child (killed first if stop): 0 if it exited 0; *raw from
 * its last line, or -1. */
static int live_end(struct live *c, int *raw, int stop)
{
	char line[64];
	int st = -1;

	*raw = -1;
	if (stop)
		kill(c->pid, SIGKILL);
	if (c->to)
		fclose(c->to);
	while (c->from && fgets(line, sizeof(line), c->from))
		sscanf(line, "raw %d", raw);
	if (c->from)
		fclose(c->from);
	if (c->pid > 0 && waitpid(c->pid, &st, 0) < 0)
		st = -1;
	return st == 0 ? 0 : -1;
}

/* One round of workload w: see live_round. */
static void live_children(int w)
{
	const struct cols *cols = w == W_FILTER ? &native_filter
	                                        : &native_preload;
	int n = w == W_FILTER ? 1 : NMEASURES, slices = o.quick ? 5 : SLICES;
	char arg[32], *argv[] = { (char *)"tfd", (char *)"bench", arg,
		                  (char *)(o.quick ? "--quick" : NULL), NULL };
	double v[2][NMEASURES][SLICES];
	struct child_env env[2];
	struct live c[2];
	int s, i, j, m, raw[2] = { -1, -1 }, bad = 0, cpu = sched_getcpu();
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	if (cpu < 0 || sched_getaffinity(0, sizeof(cpus), &cpus) < 0)
		CPU_ZERO(&cpus); /* an empty set: the children run where we may */
	else if (CPU_ISSET(cpu, &cpus)) {
		CPU_ZERO(&cpus);
		CPU_SET(cpu, &cpus);
	}
	snprintf(arg, sizeof(arg), "--preload-child=%s", workloads[w].id);
	for (s = K; s <= E; s++) {
		c[s].pid = -1;
		c[s].to = c[s].from = NULL;
		if (!(o.sides & 1 << s))
			continue;
		if (child_env(&env[s], s == K ? NULL : o.preload,
		              w == W_FILTER && s == E) < 0) {
			fail(s, "environment of a child process");
			bad = 1;
			continue;
		}
		if (live_start(&c[s], argv, env[s].v, &cpus) < 0) {
			fail(s, "starting a child process");
			bad = 1;
		}
		child_env_free(&env[s]);
	}
	for (j = 0; j < slices && !bad; j++) {
		double one[NMEASURES];

		for (i = 0; i < 2 && !bad; i++) {
			s = (i + j) % 2; /* each side first in turn */
			if (!c[s].to)
				continue;
			if (live_slice(&c[s], one, n) < 0) {
				errno = errno == ETIMEDOUT ? errno : EIO;
				fail(s, "%s in the %s child process",
				     workloads[w].id, cols->name[s]);
				bad = 1;
			}
			for (m = 0; !bad && m < n; m++)
				v[s][m][j] = one[m];
		}
	}
	for (s = K; s <= E; s++)
		if (c[s].pid > 0 && live_end(&c[s], &raw[s], bad) < 0 && !bad) {
			errno = EIO;
			fail(s, "%s in the %s child process", workloads[w].id,
			     cols->name[s]);
			bad = 1;
		}
	if (bad)
		return;
	if (w == W_FILTER && (o.sides & 1 << E) && raw[E] != 1) {
		note("9b: the filter was not in place in the child (see its "
		     "message above): no figures");
		return;
	}
	for (s = K; s <= E; s++) {
		if (!(o.sides & 1 << s))
			continue;
		for (i = 0; i < n; i++) {
			struct row *r;

			qsort(v[s][i], (size_t)slices, sizeof(double), cmp_d);
			if (w == W_FILTER) {
				r = row_in(cols, GETPPID_ROW, 1, "ns", G_NONE, 0);
				r->ref = "(k+70ns)";
			} else {
				r = row_in(cols, measure_rows[i], 1, "ns",
				           G_RATIO_LE, 1.05);
			}
			add(r, s, v[s][i][slices / 2]);
		}
	}
}

/* One round of workload w (9a or 9b): the two children in turn, a
 * median per measure and side.  Both run on the CPU this process is on:
 * the CPUs of a virtual machine may differ by 10 % in what a system call
 * costs, and a child that moved (the preload's engine has threads) would
 * measure the move.  A child that dies makes our writes fail (EPIPE), not
 * kill us. */
static void live_round(int w)
{
	struct sigaction ign, old;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old);
	live_children(w);
	sigaction(SIGPIPE, &old, NULL);
}

/* What the filter adds, in ns: the difference of the two medians. */
static void filter_note(void)
{
	const struct row *r = row_in(&native_filter, GETPPID_ROW, 1, "ns",
	                             G_NONE, 0);
	struct stat3 k = stats(r, K), f = stats(r, E);

	if (k.n && f.n)
		note("9b: the filter adds %.0f ns to a system call that does "
		     "almost nothing here (tfd-preload(7) measured +70 ns)",
		     f.med - k.med);
}

/* ---- the driver ---- */

static int selected(int w)
{
	int i;

	if (!o.nfilter)
		return 1;
	for (i = 0; i < o.nfilter; i++)
		if (strstr(workloads[w].id, o.filter[i]) ||
		    strstr(workloads[w].name, o.filter[i]))
			return 1;
	return 0;
}

/* Runs fn for R rounds, kernel then engine; the engine only if n fits.
 * Without fn, a workload whose sides run together (9a, 9b). */
static void run(int w, void (*fn)(int, long), long n)
{
	const char *id = workloads[w].id, *name = workloads[w].name;
	int64_t t0 = now_ns();
	int r, s;

	if (!selected(w))
		return;
	fprintf(stderr, "tfd bench: %-3s %-30s N=%-6ld", id, name, n);
	fflush(stderr);
	for (r = 0; r < o.rounds && !o.failed; r++) {
		if (!fn)
			live_round(w);
		for (s = K; fn && s <= E; s++) {
			if (!(o.sides & 1 << s) ||
			    (s == E && n > o.emax) || (s == K && n > o.kmax))
				continue;
			seed(r);
			fn(s, n);
		}
		fputc('.', stderr);
	}
	fprintf(stderr, " %.1f s\n", (double)(now_ns() - t0) / NS);
}

/* One clock reading's share of a timed interval, for per-call timing. */
static double clock_overhead(void)
{
	double v[5];
	int r, i;

	for (r = 0; r < 5; r++) {
		int64_t t0 = now_ns(), t = t0;

		for (i = 0; i < 20000; i++)
			t = now_ns();
		v[r] = (double)(t - t0) / 20000;
	}
	qsort(v, 5, sizeof(*v), cmp_d);
	return v[2];
}

/* The largest N of a power of two with n * per + 64 <= limit. */
static long fits(long limit, long per)
{
	long n = 1;

	while (n * 2 <= TOP_N && n * 2 * per + 64 <= limit)
		n *= 2;
	return n;
}

enum { O_QUICK, O_JSON, O_FILTER, O_ROUNDS, O_SIDE, O_PLAIN, O_CHILD,
       O_PCHILD };
static const struct tfd_opt opts[] = {
	[O_QUICK] = { "quick", NULL, "fewer iterations: under 20 s" },
	[O_JSON] = { "json", NULL, "the same figures as JSON" },
	[O_FILTER] = { "filter", "NAME",
	               "only the workloads whose number or name contains\n"
	               "NAME (may be repeated)" },
	[O_ROUNDS] = { "rounds", "R", "R rounds (1 to 64) instead of 5" },
	[O_SIDE] = { "side", "SIDE",
	             "kernel, engine or both (default): run one side\n"
	             "only, for profiling (in workload 9: native, or\n"
	             "with the library)" },
	[O_PLAIN] = { "plain-read", NULL,
	              "the engine side reads ready timers with read(2)\n"
	              "instead of tfd_read (workloads 5 and 6)" },
	/* Internal: the child process that measures memory (w_memory). */
	[O_CHILD] = { "memory-child", "SIDE", NULL },
	/* Internal: the child process that times workload 9a or 9b. */
	[O_PCHILD] = { "preload-child", "WORKLOAD", NULL },
	{ NULL, NULL, NULL },
};

static int tfd_cmd_bench(int argc, char **argv);

const struct tfd_cmd tfd_bench_cmd = {
	.name = "bench",
	.operands = "",
	.summary = "measure the engine against the kernel's timerfd",
	.text = "Runs every workload on the kernel's timerfd and on the engine,\n"
	        "interleaved, for 5 rounds, and prints medians, spreads and the\n"
	        "ratio engine/kernel next to each target (about 80 s).  The\n"
	        "workloads: 1 create + close, 2 arm/re-arm/disarm, 3 gettime,\n"
	        "4a/4b read, 5 expiry latency, 6a burst, 6b periodic, 7a/7b CPU,\n"
	        "8 memory; and, each side a fresh process, what libtfd-preload.so\n"
	        "adds to read, write, close and poll on pipes and sockets (9a)\n"
	        "and what the seccomp filter of tfd exec --raw-syscalls adds to\n"
	        "getppid(2) (9b).  Exit status 1 only when a call that must not\n"
	        "fail did: a benchmark does not fail on a slow machine.",
	.opts = opts,
	.fn = tfd_cmd_bench,
};

static int tfd_cmd_bench(int argc, char **argv)
{
	struct rlimit rl;
	long limit = 1024, ns[4], v;
	int i, k, nn = 0, child = -1, r;
	const char *pchild = NULL;
	char why[PATH_MAX + 64];
	struct tfd_args a;

	o.rounds = 5;
	o.sides = 1 << K | 1 << E;
	tfd_args_init(&a, &tfd_bench_cmd, argc, argv);
	while ((r = tfd_opt_next(&a)) >= 0) {
		switch (r) {
		case O_QUICK:
			o.quick = 1;
			break;
		case O_JSON:
			o.json = 1;
			break;
		case O_PLAIN:
			o.plain = 1;
			break;
		case O_FILTER:
			if (o.nfilter == 16)
				return tfd_cmd_bad("%s", "more than 16 --filter");
			o.filter[o.nfilter++] = a.val;
			break;
		case O_ROUNDS:
			if (tfd_parse_long(a.val, 1, MAXR, &v))
				return tfd_cmd_bad("bad --rounds '%s': expected "
				                   "1 to 64", a.val);
			o.rounds = (int)v;
			break;
		case O_SIDE:
			if (!strcmp(a.val, "kernel"))
				o.sides = 1 << K;
			else if (!strcmp(a.val, "engine"))
				o.sides = 1 << E;
			else if (!strcmp(a.val, "both"))
				o.sides = 1 << K | 1 << E;
			else
				return tfd_cmd_bad("bad --side '%s'", a.val);
			break;
		case O_CHILD:
			child = strcmp(a.val, "kernel") ? E : K;
			break;
		case O_PCHILD:
			pchild = a.val;
			break;
		}
	}
	if (r != TFD_OPT_END)
		return tfd_opt_status(r);
	if (pchild) { /* --preload-child=9a|9b: before anything starts */
		if (strcmp(pchild, "9a") && strcmp(pchild, "9b"))
			return tfd_cmd_bad("bad --preload-child '%s'", pchild);
		if (a.argc > 0)
			return tfd_cmd_bad("unexpected argument '%s'",
			                   a.argv[0]);
		return preload_child(pchild);
	}
	if (child >= 0) { /* --memory-child=SIDE N */
		if (a.argc != 1 || tfd_parse_long(a.argv[0], 1, TOP_N, &v))
			return tfd_cmd_bad("%s", "--memory-child needs a count");
		nn = (int)v;
	} else if (a.argc > 0) {
		return tfd_cmd_bad("unexpected argument '%s'", a.argv[0]);
	}
	for (i = 0, k = 0; i < NWORKLOADS; i++)
		k += selected(i);
	if (k == 0)
		return tfd_cmd_bad("no workload matches --filter '%s'",
		                   o.filter[0]);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		limit = rl.rlim_cur > 1L << 30 ? 1L << 30 : (long)rl.rlim_cur;
	}
	o.nofile = limit;
	o.kmax = fits(limit, 1);
	o.emax = fits(limit, 1); /* and one in the service thread's table */
	if (tfd_use_backend("engine") < 0) {
		perror("tfd bench: tfd_use_backend(\"engine\")");
		return 1;
	}
	if (child >= 0)
		return nn > 0 ? memory_child(child, nn) : 2;
	o.started = now_ns();
	o.overhead = clock_overhead();
	o.nboth = o.kmax < o.emax ? o.kmax : o.emax;
	o.nkernel = o.kmax > o.nboth ? o.kmax : 0;
	if (o.quick)
		o.nkernel = 0;
	ns[0] = 1;
	ns[1] = 1024 < o.nboth ? 1024 : o.nboth;
	ns[2] = o.nboth;
	ns[3] = o.nkernel;

	run(W_CREATE, w_create, 1);
	/* Rows in the order arm, re-arm, disarm, each over N. */
	for (k = 0; k < 3; k++)
		for (i = 0; i < 4; i++)
			if (ns[i] && (i == 0 || ns[i] != ns[i - 1]))
				row(arm_rows[k], ns[i], "ns", G_RATIO_LE, 0.2);
	for (i = 0; i < 4 && tfd_engine_wakeups; i++)
		if (ns[i] && (i == 0 || ns[i] != ns[i - 1]) && ns[i] <= o.emax)
			row("2 engine wake-ups per 1000 calls", ns[i], "", G_NONE,
			    0);
	for (i = 0; i < 4; i++)
		if (ns[i] && (i == 0 || ns[i] != ns[i - 1]))
			run(W_ARM, w_arm, ns[i]);
	run(W_FORK_ARM, w_fork_arm, 1);
	run(W_GETTIME, w_gettime, 1);
	run(W_READ_NONE, w_read_none, 1);
	run(W_READ_SOME, w_read_some, ns[1]);
	run(W_LATENCY, w_latency, 1);
	run(W_BURST, w_burst, o.nboth);
	if (o.nkernel)
		run(W_BURST, w_burst, o.nkernel);
	run(W_PERIODIC, w_periodic, o.nboth);
	if (o.nkernel)
		run(W_PERIODIC, w_periodic, o.nkernel);
	run(W_IDLE, w_idle, o.nboth);
	run(W_FAST, w_fast, 1);
	run(W_MEMORY, w_memory, o.nboth);
	if (o.nkernel)
		run(W_MEMORY, w_memory, o.nkernel);
	if (tfd_find_preload(o.preload, sizeof(o.preload), why,
	                     sizeof(why)) < 0) {
		o.preload[0] = 0;
		if (selected(W_PRELOAD) || selected(W_FILTER))
			note("9a, 9b: not run: %s", why);
	} else if (selected(W_PRELOAD) || selected(W_FILTER)) {
		run(W_PRELOAD, NULL, 1);
		run(W_FILTER, NULL, 1);
		note("9a, 9b: each round runs this program twice more, fresh: "
		     "as it is (native) and with %s on the engine (preload; "
		     "9b: filter, with TFD_RAW_SYSCALLS=1)", o.preload);
		filter_note();
	}

	if (o.nboth < TOP_N)
		note("N = %ld stands in for the issue's 16384 wherever both "
		     "columns are shown (workloads 2, 6, 7a, 8): see *.",
		     o.nboth);
	note("workload 2 times each call alone; %.0f ns of clock reading per "
	     "call is subtracted.", o.overhead);
	note("7a/7b are the process's CPU (getrusage-like, all threads); the "
	     "kernel's own timer interrupts are not charged to the process: "
	     "see the machine-wide row.");
	if (!tfd_engine_wakeups)
		note("the engine's wake-up counter is not exported: no "
		     "wake-up rows.");
	if (o.json)
		print_json();
	else
		print_table();
	fflush(stdout);
	if (!o.json)
		fprintf(stderr, "tfd bench: %.1f s\n",
		        (double)(now_ns() - o.started) / NS);
	return o.failed;
}
