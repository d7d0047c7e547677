/* SPDX-License-Identifier: MIT */
/*
 * bench.h - tfd bench: the engine side by side with the kernel's timerfd.
 * See bench/README.md (at the top of the tree) and tfd(1).
 *
 *   tfd bench [--quick] [--json] [--filter NAME]... [--rounds R]
 *             [--side kernel|engine|both] [--plain-read]
 *
 * Every workload of issue 6 runs on the kernel's timerfd (timerfd_create(2)
 * and friends, called directly) and on the engine (tfd_*), in the same
 * process, interleaved kernel, engine, kernel, engine... for R rounds (5 by
 * default, 3 with --quick).  The table shows for each measure the median
 * of the rounds, their range, the ratio engine/kernel and the target, and
 * counts the targets met; --json has every round's figure.  Workloads 9a
 * and 9b (issue 12) compare instead a process as it is with one that has
 * libtfd-preload.so loaded (9b: and its seccomp filter), two children of
 * this program that take turns.  It is a
 * benchmark: it prints, it never fails because the machine is slow or
 * busy.  Exit status 1 only when a call failed that must not fail (the
 * figures would then be meaningless), 2 on bad usage.
 *
 * What is where:
 *   bench.c              the command: its options, the order the
 *                        workloads run in, the table of workloads
 *   rows.c               the results: a row per measure, its figures per
 *                        round and side; notes; a call that failed
 *   counts.c             system calls and context switches per operation
 *                        (perf counters of every thread)
 *   stats.c              a row's median, spread and sum; its verdict
 *                        against the target of the issue
 *   report.c             the one printer: the table or the JSON
 *   timers.c             the two implementations called the same way, sets
 *                        of timers, the random deadlines
 *   workloads_calls.c    1 create + close, 2 arm/re-arm/disarm, 2f re-arm
 *                        in a forked child, 3 gettime, 4a/4b read
 *   workloads_wakeups.c  5 expiry latency, 6a burst (epoll, poll), 6b
 *                        periodic, 7a/7b CPU while the program sleeps,
 *                        11 (5 and 6a with two busy loops)
 *   workloads_memory.c   8 memory, measured in a fresh process
 *   workloads_loop.c     10 an event loop (one timer re-armed to the next
 *                        of 1,000 random deadlines), quiet and with two
 *                        busy loops; the busy loops of 10 and 11
 *   workloads_sets.c     13 timer sets against a timerfd per timer, and a
 *                        million keys on the engine alone
 *   workloads_preload.c  9a what libtfd-preload.so adds to calls on other
 *                        descriptors, 9b what its seccomp filter adds:
 *                        two child processes that take turns
 *   workloads_vtime.c    14 a move of virtual time: a tree under tfd exec
 *                        --backend virtual, threads parked in it, what
 *                        its mover spends on each move
 */
#ifndef TFD_BENCH_H
#define TFD_BENCH_H

#include "tfd.h"
#include "core/time.h" /* TFD_NSEC */

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* The engine's own count of service-thread wake-ups (src/engine/).
 * Weak: when the library stops exporting it, the figures that use it are
 * left out instead of the link failing. */
extern unsigned long tfd_engine_wakeups(void) __attribute__((weak));

#define MS ((int64_t)1000000)
#define US ((int64_t)1000)

#define MAXR 64     /* rounds */
#define MAXROWS 192
#define TOP_N 16384 /* the largest N */
#define FAR (100 * TFD_NSEC)   /* background deadlines: 100 s ... */
#define SPREAD (900 * TFD_NSEC) /* ... to 1000 s ahead, random */
#define FLAGS (TFD_NONBLOCK | TFD_CLOEXEC)

enum { K, E }; /* the two sides: kernel, engine */
extern const char *const bench_side_name[2];

/* What a row's two columns are: the kernel and the engine, or for
 * workload 9 a program as it is and with libtfd-preload.so. */
struct cols {
	const char *name[2], *ratio;
};

/* ---- the two implementations, called the same way (timers.c) ---- */

struct impl {
	int (*create)(int clockid, int flags);
	int (*settime)(int fd, int flags, const struct itimerspec *nv,
	               struct itimerspec *old);
	int (*gettime)(int fd, struct itimerspec *cur);
	ssize_t (*read)(int fd, void *buf, size_t n);
	int (*close)(int fd);
};
extern const struct impl bench_impls[2];

/* ---- options and results (rows.c) ---- */

enum goal {
	G_NONE,     /* information only */
	G_RATIO_LE, /* engine/kernel <= target */
	G_RATIO_GE, /* engine/kernel >= target */
	G_PLUS_LE,  /* engine <= kernel + target */
	G_ABS_LE,   /* engine <= target */
	G_ZERO,     /* a count summed over rounds: must be 0 */
};

struct row {
	char what[64];
	long n;
	const char *unit;
	enum goal goal;
	double target;
	const struct cols *cols;
	const char *ref; /* G_NONE: a figure to compare with, or NULL */
	double v[2][MAXR];
	int nv[2];
};

struct bench {
	int quick, json, rounds, sides, failed, nfilter, plain;
	int round; /* the round running, from 0 */
	const char *filter[16];
	long kmax, emax; /* the largest N of timers that fits in fds */
	long nofile;     /* RLIMIT_NOFILE, raised to the hard limit */
	long nboth, nkernel;
	double overhead; /* ns of one clock reading inside a timed interval */
	struct row rows[MAXROWS];
	int nrows;
	char notes[12][512];
	char preload[PATH_MAX]; /* libtfd-preload.so, "" if not found */
	int nnotes;
	int64_t started;
};
extern struct bench bench;

void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A call that must not fail did: say it; the run exits 1. */
void bench_fail(int side, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The row (what, n), created on first use with its columns, unit and
 * goal; bench_row: kernel and engine columns. */
struct row *bench_row_in(const struct cols *cols, const char *what, long n,
                         const char *unit, enum goal goal, double target);
struct row *bench_row(const char *what, long n, const char *unit,
                      enum goal goal, double target);
void bench_add(struct row *r, int side, double v);

/* ---- counts (counts.c): per operation, every thread of the process ---- */

struct counts {
	double switches, syscalls; /* -1: not counted here */
};
/* Open the counters: before the engine's first timer (its threads
 * inherit them). */
void bench_counts_open(void);
/* A perf counter of the system calls of pid (0: this process), its
 * threads made later too if inherit; -1 where the kernel refuses it. */
int bench_syscall_counter(pid_t pid, int inherit);
struct counts bench_counts(void);
/* What ops operations cost since c0, per operation. */
struct counts bench_counts_since(struct counts c0, double ops);
/* The rows "WHAT syscalls" (with its target, engine/kernel; 0: none)
 * and "WHAT switches", over n timers, since c0. */
void bench_count_rows(const char *what, long n, int side, struct counts c0,
                      double ops, double syscalls_target);

/* ---- statistics (stats.c) ---- */

struct stat3 {
	double med, min, max, sum;
	int n;
};
int bench_cmp_d(const void *a, const void *b);
int bench_cmp_i64(const void *a, const void *b);
struct stat3 bench_stats(const struct row *r, int side);
/* 1 met, 0 missed, -1 no verdict (no target or a column missing); the
 * ratio engine/kernel of the medians into *ratio, or -1. */
int bench_verdict(const struct row *r, double *ratio);
/* The target as the table shows it: of the ratio ("<= 0.2x"), of the
 * second column itself ("e <= 128 B", "e <= k+5us"), of a count ("= 0"). */
void bench_target_text(const struct row *r, char *buf, size_t n);

/* ---- the report (report.c): the table, or JSON with --json ---- */

void bench_report(int json);

/* ---- helpers of the workloads (timers.c) ---- */

uint64_t bench_rnd(void);
void bench_seed(int round);
ssize_t bench_read_ready(int side, int fd, uint64_t *c);
/* n timers on CLOCK_MONOTONIC; armed at random deadlines 100 to 1000 s
 * ahead when arm is set.  NULL (after saying why) on failure. */
int *bench_open_set(int side, long n, int arm);
void bench_close_set(int side, int *fds, long n);
/* An epoll instance watching fds for EPOLLIN, data = index; -1 on error. */
int bench_watch(int side, const int *fds, long n);
/* The epoll instance ep closed (if >= 0), then the n timers fds (if
 * any). */
void bench_unwatch(int side, int ep, int *fds, long n);
unsigned long bench_wakeups(void);

static inline int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * TFD_NSEC + ts.tv_nsec;
}

static inline int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * TFD_NSEC + ts.tv_nsec;
}

static inline struct itimerspec its(int64_t value, int64_t interval)
{
	struct itimerspec v;

	v.it_value.tv_sec = (time_t)(value / TFD_NSEC);
	v.it_value.tv_nsec = (long)(value % TFD_NSEC);
	v.it_interval.tv_sec = (time_t)(interval / TFD_NSEC);
	v.it_interval.tv_nsec = (long)(interval % TFD_NSEC);
	return v;
}

static inline void sleep_ns(int64_t ns)
{
	struct timespec ts = { (time_t)(ns / TFD_NSEC), (long)(ns % TFD_NSEC) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- the workloads: each runs one side (K or E) with n timers ---- */

enum { W_CREATE, W_ARM, W_FORK_ARM, W_GETTIME, W_READ_NONE, W_READ_SOME,
       W_LATENCY, W_BURST, W_BURST_POLL, W_PERIODIC, W_IDLE, W_FAST,
       W_MEMORY, W_PRELOAD, W_FILTER, W_LOOP, W_LOOP_LOADED,
       W_LATENCY_LOADED, W_BURST_LOADED, W_POLL_LATENCY,
       W_POLL_LATENCY_LOADED, W_SETS, W_VTIME, W_VTIME_PROCS, NWORKLOADS };
/* Their numbers and names, for --filter and the progress lines. */
struct workload {
	const char *id, *name;
};
extern const struct workload bench_workloads[NWORKLOADS];

/* workloads_calls.c */
extern const char *const bench_arm_rows[3];
void workload_create(int side, long n);
void workload_arm(int side, long n);
void workload_fork_arm(int side, long n);
void workload_gettime(int side, long n);
void workload_read_none(int side, long n);
void workload_read_some(int side, long n);
/* workloads_sets.c */
void workload_sets(int side, long n);
/* workloads_wakeups.c */
void workload_latency(int side, long n);
void workload_latency_loaded(int side, long n);
void workload_burst(int side, long n);
void workload_burst_poll(int side, long n);
void workload_burst_loaded(int side, long n);
void workload_periodic(int side, long n);
void workload_idle(int side, long n);
void workload_fast(int side, long n);
/* workloads_loop.c: 10; the busy loops of 10 and 11 (BUSY_N processes
 * that spin until stopped: their number, pids in pids) */
#define BUSY_N 2
void workload_loop(int side, long n);
void workload_loop_loaded(int side, long n);
int bench_busy_start(pid_t *pids);
void bench_busy_stop(const pid_t *pids, int n);
/* workloads_memory.c; the child it runs: --memory-child=SIDE N */
void workload_memory(int side, long n);
int bench_memory_child(int side, long n);
/* workloads_preload.c: one round of 9a or 9b (both sides at once); the
 * child it runs: --preload-child=9a|9b; the note of what 9b measured */
void bench_live_round(int w);
int bench_preload_child(const char *what);
void bench_filter_note(void);
/* workloads_vtime.c: 14 with n threads parked in the first process, or
 * in 10 forked ones (_procs); the program of its tree:
 * --vtime-child=THREADS,PROCS,MOVES */
void workload_vtime(int side, long n);
void workload_vtime_procs(int side, long n);
int bench_vtime_child(const char *arg);
/* The notes of 14: how it measures; what it could not count. */
void bench_vtime_note(void);

#endif
