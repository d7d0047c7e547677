/* SPDX-License-Identifier: MIT */
/*
 * bench.c - tfd bench, the command (bench.h says what is where): its
 * options, the workloads and the order they run in, the limits they run
 * within.
 *
 * --rounds, --side and --plain-read are for profiling (e.g. under
 * valgrind --tool=callgrind --side engine); --plain-read reads ready
 * engine timers in workloads 5 and 6 with read(2) instead of tfd_read.
 */
#include "cmd.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

const struct workload bench_workloads[NWORKLOADS] = {
	[W_CREATE] = { "1", "create + close" },
	[W_ARM] = { "2", "arm, re-arm, disarm" },
	[W_FORK_ARM] = { "2f", "re-arm in a forked child" },
	[W_GETTIME] = { "3", "gettime" },
	[W_READ_NONE] = { "4a", "read, nothing expired" },
	[W_READ_SOME] = { "4b", "read, something expired" },
	[W_LATENCY] = { "5", "expiry latency" },
	[W_BURST] = { "6a", "burst: one deadline, epoll" },
	[W_BURST_POLL] = { "6a", "burst: one deadline, poll" },
	[W_PERIODIC] = { "6b", "periodic, 100 ms, spread" },
	[W_IDLE] = { "7a", "CPU: idle timers" },
	[W_FAST] = { "7b", "CPU: 10 us periodic, unread" },
	[W_MEMORY] = { "8", "memory" },
	[W_PRELOAD] = { "9a", "preload: pipes, sockets" },
	[W_FILTER] = { "9b", "seccomp filter: getppid" },
	[W_LOOP] = { "10", "event loop" },
	[W_LOOP_LOADED] = { "10", "event loop, 2 busy loops" },
	[W_LATENCY_LOADED] = { "11", "latency, 2 busy loops" },
	[W_BURST_LOADED] = { "11", "burst, 2 busy loops" },
	[W_POLL_LATENCY] = { "12", "preload: poll, epoll latency" },
	[W_POLL_LATENCY_LOADED] = {
		"12", "preload: poll, epoll latency, 2 busy loops" },
	[W_SETS] = { "13", "timer sets" },
	[W_VTIME] = { "14", "virtual time: a move" },
	[W_VTIME_PROCS] = { "14", "virtual time: a move, 10 processes" },
};

static int selected(int w)
{
	int i;

	if (!bench.nfilter)
		return 1;
	for (i = 0; i < bench.nfilter; i++)
		if (strstr(bench_workloads[w].id, bench.filter[i]) ||
		    strstr(bench_workloads[w].name, bench.filter[i]))
			return 1;
	return 0;
}

/* Whether side s runs workload w with N = n: a side asked for, within
 * the descriptors (14's N is threads, on the engine's side alone). */
static int runs(int w, int s, long n)
{
	if (!(bench.sides & 1 << s))
		return 0;
	if (w == W_VTIME || w == W_VTIME_PROCS)
		return s == E;
	return n <= (s == E ? bench.emax : bench.kmax);
}

/* Runs fn for R rounds, kernel then engine; the engine only if n fits.
 * Without fn, a workload whose sides run together (9a, 9b). */
static void run(int w, void (*fn)(int, long), long n)
{
	const char *id = bench_workloads[w].id, *name = bench_workloads[w].name;
	int64_t t0 = now_ns();
	int r, s;

	if (!selected(w))
		return;
	fprintf(stderr, "tfd bench: %-3s %-30s N=%-6ld", id, name, n);
	fflush(stderr);
	for (r = 0; r < bench.rounds && !bench.failed; r++) {
		bench.round = r;
		if (!fn)
			bench_live_round(w);
		for (s = K; fn && s <= E; s++) {
			if (!runs(w, s, n))
				continue;
			bench_seed(r);
			fn(s, n);
		}
		fputc('.', stderr);
	}
	fprintf(stderr, " %.1f s\n", (double)(now_ns() - t0) / TFD_NSEC);
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
	qsort(v, 5, sizeof(*v), bench_cmp_d);
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
       O_PCHILD, O_VCHILD };
static const struct tfd_opt opts[] = {
	[O_QUICK] = { "quick", NULL,
	              "3 rounds of fewer iterations: about 30 s" },
	[O_JSON] = { "json", NULL, "the same figures as JSON" },
	[O_FILTER] = { "filter", "NAME",
	               "only the workloads whose number or name contains\n"
	               "NAME (may be repeated)" },
	[O_ROUNDS] = { "rounds", "R",
	               "R rounds (1 to 64) instead of 5 (--quick: 3)" },
	[O_SIDE] = { "side", "SIDE",
	             "kernel, engine or both (default): run one side\n"
	             "only, for profiling (in workload 9: native, or\n"
	             "with the library)" },
	[O_PLAIN] = { "plain-read", NULL,
	              "the engine side reads ready timers with read(2)\n"
	              "instead of tfd_read (workloads 5 and 6)" },
	/* Internal: the child process that measures memory (workload 8). */
	[O_CHILD] = { "memory-child", "SIDE", NULL },
	/* Internal: the child process that times workload 9a, 9b or 12. */
	[O_PCHILD] = { "preload-child", "WORKLOAD", NULL },
	/* Internal: the program of workload 14's tree, on virtual time. */
	[O_VCHILD] = { "vtime-child", "THREADS,PROCS,MOVES", NULL },
	{ NULL, NULL, NULL },
};

static int tfd_cmd_bench(int argc, char **argv);

const struct tfd_cmd tfd_bench_cmd = {
	.name = "bench",
	.operands = "",
	.summary = "measure the engine against the kernel's timerfd",
	.text = "Runs every workload on the kernel's timerfd and on the engine,\n"
	        "interleaved, for 5 rounds, and prints medians, spreads and the\n"
	        "ratio engine/kernel next to each target (about 3 min).  The\n"
	        "workloads: 1 create + close, 2 arm/re-arm/disarm, 3 gettime,\n"
	        "4a/4b read, 5 expiry latency, 6a burst, 6b periodic, 7a/7b CPU,\n"
	        "8 memory; 10 an event loop (one timer re-armed to the next of\n"
	        "1,000 random deadlines), quiet and with two busy loops; 11\n"
	        "workloads 5 and 6a with two busy loops; and, each side a fresh\n"
	        "process, what libtfd-preload.so adds to read, write, close and\n"
	        "poll on pipes and sockets (9a) and what the seccomp filter of\n"
	        "tfd exec --raw-syscalls adds to getppid(2) (9b), and how late\n"
	        "poll(2) and epoll_wait(2) return for a timer under the preload,\n"
	        "and a burst of 1,024 timers of one epoll set is read, with\n"
	        "their CPU, context switches and system calls per expiration,\n"
	        "all threads counted, and a read with nothing due and create +\n"
	        "close (12); 14, what a move of virtual time costs the\n"
	        "mover of tfd exec --backend virtual, with 0 to 1,000\n"
	        "threads parked.\n"
	        "Workloads 1, 3, 4 and 10 print their system calls\n"
	        "and switches per call too.  Each row is printed with its\n"
	        "target and whether it was met; the last line counts the\n"
	        "targets met.  Exit status 1 only when a call that must not\n"
	        "fail did: a benchmark does not fail on a slow machine.",
	.opts = opts,
	.fn = tfd_cmd_bench,
};

/* The options into bench; the child to be (--memory-child's side into
 * *child, --preload-child's workload into *pchild, --vtime-child's
 * argument into *vchild) and the operands left in a.  -1 when they are
 * all taken, else the exit status. */
static int options(struct tfd_args *a, int *child, const char **pchild,
                   const char **vchild)
{
	long v;
	int r;

	while ((r = tfd_opt_next(a)) >= 0) {
		switch (r) {
		case O_QUICK:
			bench.quick = 1;
			break;
		case O_JSON:
			bench.json = 1;
			break;
		case O_PLAIN:
			bench.plain = 1;
			break;
		case O_FILTER:
			if (bench.nfilter == 16)
				return tfd_cmd_bad("%s", "more than 16 --filter");
			bench.filter[bench.nfilter++] = a->val;
			break;
		case O_ROUNDS:
			if (tfd_parse_long(a->val, 1, MAXR, &v))
				return tfd_cmd_bad("bad --rounds '%s': expected "
				                   "1 to 64", a->val);
			bench.rounds = (int)v;
			break;
		case O_SIDE:
			if (!strcmp(a->val, "kernel"))
				bench.sides = 1 << K;
			else if (!strcmp(a->val, "engine"))
				bench.sides = 1 << E;
			else if (!strcmp(a->val, "both"))
				bench.sides = 1 << K | 1 << E;
			else
				return tfd_cmd_bad("bad --side '%s'", a->val);
			break;
		case O_CHILD:
			*child = strcmp(a->val, "kernel") ? E : K;
			break;
		case O_PCHILD:
			*pchild = a->val;
			break;
		case O_VCHILD:
			*vchild = a->val;
			break;
		}
	}
	return r != TFD_OPT_END ? tfd_opt_status(r) : -1;
}

/* RLIMIT_NOFILE raised to its hard limit; the largest N that fits. */
static void limits(void)
{
	struct rlimit rl;
	long limit = 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		limit = rl.rlim_cur > 1L << 30 ? 1L << 30 : (long)rl.rlim_cur;
	}
	bench.nofile = limit;
	bench.kmax = fits(limit, 1);
	bench.emax = fits(limit, 1); /* and one in the service thread's table */
}

/* Workload 2 over each N of ns (the rows first, in the order arm,
 * re-arm, disarm, each over N). */
static void arm_workloads(const long *ns)
{
	int i, k;

	for (k = 0; k < 3; k++)
		for (i = 0; i < 4; i++)
			if (ns[i] && (i == 0 || ns[i] != ns[i - 1]))
				bench_row(bench_arm_rows[k], ns[i], "ns",
				          G_RATIO_LE, 0.2);
	for (i = 0; i < 4 && tfd_engine_wakeups; i++)
		if (ns[i] && (i == 0 || ns[i] != ns[i - 1]) &&
		    ns[i] <= bench.emax)
			bench_row("2 engine wake-ups per 1000 calls", ns[i], "",
			          G_NONE, 0);
	for (i = 0; i < 4; i++)
		if (ns[i] && (i == 0 || ns[i] != ns[i - 1]))
			run(W_ARM, workload_arm, ns[i]);
}

/* 9a, 9b and 12, each side a fresh process with or without the
 * preload, if it is found. */
static void preload_workloads(void)
{
	char why[PATH_MAX + 64];
	int any = selected(W_PRELOAD) || selected(W_FILTER) ||
	          selected(W_POLL_LATENCY) || selected(W_POLL_LATENCY_LOADED);

	if (tfd_find_preload(bench.preload, sizeof(bench.preload), why,
	                     sizeof(why)) < 0) {
		bench.preload[0] = 0;
		if (any)
			bench_note("9a, 9b, 12: not run: %s", why);
		return;
	}
	if (!any)
		return;
	run(W_PRELOAD, NULL, 1);
	run(W_FILTER, NULL, 1);
	run(W_POLL_LATENCY, NULL, 1);
	run(W_POLL_LATENCY_LOADED, NULL, 1);
	bench_note("9a, 9b, 12: each round runs this program twice more, "
	           "fresh: as it is (native) and with %s on the engine "
	           "(preload; 9b: filter, with TFD_RAW_SYSCALLS=1)",
	           bench.preload);
	bench_filter_note();
}

/* 14, on virtual time: if tfd exec would find the library. */
static void vtime_workloads(void)
{
	char path[PATH_MAX], why[PATH_MAX + 64];

	if ((!selected(W_VTIME) && !selected(W_VTIME_PROCS)) ||
	    !(bench.sides & 1 << E))
		return;
	if (tfd_find_preload(path, sizeof(path), why, sizeof(why)) < 0) {
		bench_note("14: not run: %s", why);
		return;
	}
	run(W_VTIME, workload_vtime, 0);
	run(W_VTIME, workload_vtime, 100);
	run(W_VTIME, workload_vtime, 1000);
	run(W_VTIME_PROCS, workload_vtime_procs, 100);
	bench_vtime_note();
}

/* Every workload selected, in their order. */
static void workloads(void)
{
	long ns[4];

	bench.nboth = bench.kmax < bench.emax ? bench.kmax : bench.emax;
	bench.nkernel = bench.kmax > bench.nboth ? bench.kmax : 0;
	if (bench.quick)
		bench.nkernel = 0;
	ns[0] = 1;
	ns[1] = 1024 < bench.nboth ? 1024 : bench.nboth;
	ns[2] = bench.nboth;
	ns[3] = bench.nkernel;
	run(W_CREATE, workload_create, 1);
	arm_workloads(ns);
	run(W_FORK_ARM, workload_fork_arm, 1);
	run(W_GETTIME, workload_gettime, 1);
	run(W_READ_NONE, workload_read_none, 1);
	run(W_READ_SOME, workload_read_some, ns[1]);
	run(W_LATENCY, workload_latency, 1);
	run(W_BURST, workload_burst, bench.nboth);
	if (bench.nkernel)
		run(W_BURST, workload_burst, bench.nkernel);
	run(W_BURST_POLL, workload_burst_poll, bench.nboth);
	run(W_PERIODIC, workload_periodic, bench.nboth);
	if (bench.nkernel)
		run(W_PERIODIC, workload_periodic, bench.nkernel);
	run(W_IDLE, workload_idle, bench.nboth);
	run(W_FAST, workload_fast, 1);
	run(W_MEMORY, workload_memory, bench.nboth);
	if (bench.nkernel)
		run(W_MEMORY, workload_memory, bench.nkernel);
	run(W_LOOP, workload_loop, 1);
	run(W_LOOP_LOADED, workload_loop_loaded, 1);
	run(W_LATENCY_LOADED, workload_latency_loaded, 1);
	run(W_BURST_LOADED, workload_burst_loaded, bench.nboth);
	/* (the kernel's side needs one timer more than N) */
	run(W_SETS, workload_sets, bench.nboth > 1 ? bench.nboth - 1 : 1);
	preload_workloads();
	vtime_workloads();
}

/* The notes of every run, under the table. */
static void notes(void)
{
	if (bench.nboth < TOP_N)
		bench_note("N = %ld stands in for 16384, the N of the "
		           "targets, wherever both columns are shown "
		           "(workloads 2, 6, 7a, 8): see *.", bench.nboth);
	bench_note("workload 2 times each call alone; %.0f ns of clock reading "
	           "per call is subtracted.", bench.overhead);
	bench_note("7a/7b are the process's CPU (getrusage-like, all threads); "
	           "the kernel's own timer interrupts are not charged to the "
	           "process: see the machine-wide row.");
	if (!tfd_engine_wakeups)
		bench_note("the engine's wake-up counter is not exported: no "
		     "wake-up rows.");
}

static int tfd_cmd_bench(int argc, char **argv)
{
	int i, k, nn = 0, child = -1, r;
	const char *pchild = NULL, *vchild = NULL;
	struct tfd_args a;
	long v;

	bench.sides = 1 << K | 1 << E;
	tfd_args_init(&a, &tfd_bench_cmd, argc, argv);
	if ((r = options(&a, &child, &pchild, &vchild)) >= 0)
		return r;
	if (!bench.rounds)
		bench.rounds = bench.quick ? 3 : 5;
	if (pchild) { /* --preload-child=9a|9b: before anything starts */
		if (strcmp(pchild, "9a") && strcmp(pchild, "9b") &&
		    strcmp(pchild, "12"))
			return tfd_cmd_bad("bad --preload-child '%s'", pchild);
		if (a.argc > 0)
			return tfd_cmd_bad("unexpected argument '%s'",
			                   a.argv[0]);
		return bench_preload_child(pchild);
	}
	if (vchild) /* --vtime-child=THREADS,PROCS,MOVES: in the tree */
		return a.argc > 0 ? tfd_cmd_bad("unexpected argument '%s'",
		                                a.argv[0])
		                  : bench_vtime_child(vchild);
	if (child >= 0) { /* --memory-child=SIDE N */
		if (a.argc != 1 || tfd_parse_long(a.argv[0], 1, TOP_N, &v))
			return tfd_cmd_bad("%s",
			                   "--memory-child needs a count");
		nn = (int)v;
	} else if (a.argc > 0) {
		return tfd_cmd_bad("unexpected argument '%s'", a.argv[0]);
	}
	for (i = 0, k = 0; i < NWORKLOADS; i++)
		k += selected(i);
	if (k == 0)
		return tfd_cmd_bad("no workload matches --filter '%s'",
		                   bench.filter[0]);
	limits();
	if (tfd_use_backend("engine") < 0) {
		perror("tfd bench: tfd_use_backend(\"engine\")");
		return 1;
	}
	if (child >= 0)
		return nn > 0 ? bench_memory_child(child, nn) : 2;
	bench.started = now_ns();
	bench_counts_open(); /* before the engine's threads start */
	bench.overhead = clock_overhead();
	workloads();
	notes();
	bench_report(bench.json);
	fflush(stdout);
	if (!bench.json)
		fprintf(stderr, "tfd bench: %.1f s\n",
		        (double)(now_ns() - bench.started) / TFD_NSEC);
	return bench.failed;
}
