/* SPDX-License-Identifier: MIT */
/*
 * workloads_vtime.c - tfd bench's workload 14 (bench.h): what a move of
 * virtual time costs its mover (tfd-preload(7), The cost of a move).
 *
 * Each round runs a tree under `tfd exec --backend virtual` (this
 * program, as tfd exec finds the library: tfd_find_preload): its program
 * (this program again, --vtime-child) parks N threads in
 * pthread_cond_wait() on a condition nobody signals, in its own process
 * or 10 in each of N/10 forked ones, lets the mover look at them once,
 * then its first thread makes MOVES moves: sleeps of 10 ms, each a jump
 * of the clock to its deadline and a wake of the sleeper.  Per move: the
 * real time, and what tfd exec (the mover; the tree's parent) spent:
 * CPU, system calls, reads, wake-ups.
 *
 * Inside the tree every clock is virtual (CLOCK_MONOTONIC, _RAW, the
 * raw system call too), so the real time is taken here, outside: the
 * program says "ready" and waits for a line; we take the mover's
 * figures, write "go" and read the clock; it makes its moves and says
 * "done"; we read the clock and the figures again.  The two lines that
 * cross the pipe are in the figure (some microseconds of 200 moves).
 * The mover's figures are the tfd exec process's alone, not the tree's:
 * its CPU clock (clock_getcpuclockid(3): every thread, to the
 * nanosecond; /proc's utime and stime count in ticks of 10 ms), its
 * system calls (a perf counter of its thread, where the kernel lets us:
 * the mover is its one thread), its read system calls (syscr in
 * /proc/PID/io: the reads of /proc, mostly) and its voluntary context
 * switches (/proc/PID/status: each a sleep, then a wake).
 */
#define _GNU_SOURCE
#include "cmd.h"
#include "bench.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define STEP (10 * MS)       /* a move: a sleep of 10 ms */
#define WARM 3               /* moves before the measure */
#define PROCS 10             /* the forked processes of _procs */
#define MAXPROCS 64
#define PARK_STACK (256 * 1024)
#define TREE_WAIT 60000      /* ms: a tree that says nothing has hung */

/* ---- the program of the tree (in it, every clock is virtual) ---- */

static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static long *parked_n; /* the threads parked, in memory the tree shares */

/* Parked for good: an untimed wait on a condition nobody signals. */
static void *park(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&park_lock);
	__atomic_add_fetch(parked_n, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pthread_cond_wait(&park_cond, &park_lock);
	return NULL;
}

/* n threads more, parked: 0, or -1. */
static int park_threads(long n)
{
	pthread_attr_t a;
	pthread_t t;
	long i;
	int bad = 0;

	if (pthread_attr_init(&a) != 0)
		return -1;
	pthread_attr_setstacksize(&a, PARK_STACK);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < n && !bad; i++)
		bad = pthread_create(&t, &a, park, NULL) != 0;
	pthread_attr_destroy(&a);
	return bad ? -1 : 0;
}

/* procs processes forked, each with per threads parked (its first one
 * of them), their pids into pids: how many were forked. */
static long park_procs(long procs, long per, pid_t *pids)
{
	long p;

	fflush(NULL);
	for (p = 0; p < procs; p++) {
		if ((pids[p] = fork()) < 0)
			break;
		if (pids[p] == 0) {
			if (park_threads(per - 1) < 0)
				_exit(1);
			park(NULL);
		}
	}
	return p;
}

/* Until n threads of the tree are parked (10 virtual s at most), then
 * WARM moves, before which the mover has looked at each: 0, or -1. */
static int all_parked(long n)
{
	long i;

	for (i = 0; i < 10000 && __atomic_load_n(parked_n, __ATOMIC_SEQ_CST) <
	                         n; i++)
		sleep_ns(MS);
	if (i == 10000)
		return -1;
	for (i = 0; i < WARM; i++)
		sleep_ns(STEP);
	return 0;
}

/* A line to the bench, which times it. */
static int say(const char *what)
{
	return printf("%s\n", what) < 0 || fflush(stdout) != 0 ? -1 : 0;
}

/* THREADS,PROCS,MOVES: THREADS parked (in PROCS forked processes, or 0:
 * in this one); when the bench says go, MOVES sleeps; then the end of
 * our input. */
int bench_vtime_child(const char *arg)
{
	long threads, procs, moves, forked = 0, i;
	pid_t pids[MAXPROCS];
	char line[16];
	int r = 0;

	if (sscanf(arg, "%ld,%ld,%ld", &threads, &procs, &moves) != 3 ||
	    threads < 0 || procs < 0 || procs > MAXPROCS || moves < 1 ||
	    (procs && threads % procs)) {
		return tfd_cmd_bad("bad --vtime-child '%s'", arg);
	}
	parked_n = mmap(NULL, sizeof(*parked_n), PROT_READ | PROT_WRITE,
	                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (parked_n == MAP_FAILED)
		return 1;
	if (procs)
		r = (forked = park_procs(procs, threads / procs, pids)) < procs;
	else
		r = park_threads(threads) < 0;
	if (r || all_parked(threads) < 0 || say("ready") < 0 ||
	    !fgets(line, sizeof(line), stdin))
		r = 1;
	for (i = 0; !r && i < moves; i++)
		sleep_ns(STEP);
	if (!r && (say("done") < 0 || fgets(line, sizeof(line), stdin)))
		r = 1; /* (the bench closes our input) */
	for (i = 0; i < forked; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < forked; i++)
		waitpid(pids[i], NULL, 0);
	return r;
}

/* ---- the bench's side, outside the tree ---- */

/* A tree of workload 14. */
struct tree {
	pid_t pid;  /* tfd exec: the mover, the tree's parent */
	FILE *to, *from;
	int perf;   /* its system calls, or -1 */
	int clock;  /* 1: cpu is its CPU clock */
	clockid_t cpu;
};

/* What the mover has spent so far; -1: not known. */
struct spent {
	double cpu, syscalls, reads, wakes;
};

static int perf_refused; /* a counter of the mover's calls was refused */

/* The number after key in /proc/PID/FILE, or -1. */
static double proc_field(pid_t pid, const char *file, const char *key)
{
	char path[64], buf[256];
	size_t len = strlen(key);
	double v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, key, len)) {
			v = strtod(buf + len, NULL);
			break;
		}
	fclose(f);
	return v;
}

static struct spent spent_now(const struct tree *t)
{
	struct spent s = { -1, -1, -1, -1 };
	struct timespec ts;
	uint64_t n;

	if (t->clock && clock_gettime(t->cpu, &ts) == 0)
		s.cpu = (double)ts.tv_sec * TFD_NSEC + (double)ts.tv_nsec;
	if (t->perf >= 0 && read(t->perf, &n, sizeof(n)) == sizeof(n))
		s.syscalls = (double)n;
	s.reads = proc_field(t->pid, "io", "syscr:");
	s.wakes = proc_field(t->pid, "status", "voluntary_ctxt_switches:");
	return s;
}

/* Our environment without the TFD_* variables but TFD_PRELOAD (tfd exec
 * finds the library as it would for a user); NULL if out of memory. */
static char **tree_env(void)
{
	size_t n = 0, i, k = 0;
	char **v;

	while (environ[n])
		n++;
	if (!(v = calloc(n + 1, sizeof(*v))))
		return NULL;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "TFD_", 4) ||
		    !strncmp(environ[i], "TFD_PRELOAD=", 12))
			v[k++] = environ[i];
	return v;
}

/* The child: tfd exec in a process group of its own (the tree's), our
 * pipes its input and output. */
static void tree_exec(char **argv, char **env, int in, int out)
{
	setpgid(0, 0);
	dup2(in, 0);
	dup2(out, 1);
	signal(SIGPIPE, SIG_DFL); /* we ignore it (workload_vtime) */
	execve("/proc/self/exe", argv, env);
	_exit(127);
}

/* tfd exec --backend virtual -- this program --vtime-child=arg: 0, or -1
 * (t->pid > 0 if it was started). */
static int tree_start(struct tree *t, const char *arg)
{
	char self[PATH_MAX], varg[64], **env = tree_env();
	char *argv[] = { (char *)"tfd", (char *)"exec", (char *)"--backend",
		         (char *)"virtual", (char *)"--", self,
		         (char *)"bench", varg, NULL };
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };

	memset(t, 0, sizeof(*t));
	t->pid = -1;
	t->perf = -1;
	snprintf(varg, sizeof(varg), "--vtime-child=%s", arg);
	if (env && len > 0 && pipe2(in, O_CLOEXEC) == 0 &&
	    pipe2(out, O_CLOEXEC) == 0) {
		self[len] = 0;
		fflush(NULL);
		if ((t->pid = fork()) == 0)
			tree_exec(argv, env, in[0], out[1]);
	}
	free(env);
	if (t->pid > 0) {
		setpgid(t->pid, t->pid);
		t->to = fdopen(in[1], "w");
		t->from = fdopen(out[0], "r");
		t->perf = bench_syscall_counter(t->pid, 0);
		perf_refused |= t->perf < 0;
		t->clock = clock_getcpuclockid(t->pid, &t->cpu) == 0;
	}
	if (in[0] >= 0)
		close(in[0]);
	if (out[1] >= 0)
		close(out[1]);
	if (!t->to && in[1] >= 0)
		close(in[1]);
	if (!t->from && out[0] >= 0)
		close(out[0]);
	return t->to && t->from ? 0 : -1;
}

/* The tree's next line, which must be want: 0, or -1. */
static int tree_line(struct tree *t, const char *want)
{
	struct pollfd p = { fileno(t->from), POLLIN, 0 };
	char line[64];
	int r;

	while ((r = poll(&p, 1, TREE_WAIT)) < 0 && errno == EINTR)
		;
	if (r == 0)
		errno = ETIMEDOUT;
	if (r <= 0 || !fgets(line, sizeof(line), t->from))
		return -1;
	line[strcspn(line, "\n")] = 0;
	if (strcmp(line, want)) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/* Ends the tree (killed if bad): 0 if tfd exec exited 0. */
static int tree_end(struct tree *t, int bad)
{
	int st = -1;

	if (bad && t->pid > 0)
		kill(-t->pid, SIGKILL);
	if (t->to)
		fclose(t->to); /* its program ends */
	if (t->from)
		fclose(t->from);
	if (t->perf >= 0)
		close(t->perf);
	if (t->pid > 0 && waitpid(t->pid, &st, 0) < 0)
		st = -1;
	return st == 0 ? 0 : -1;
}

/* The row "14 move[, P processes]: WHAT" over n threads, the engine's
 * column only (virtual time has no kernel counterpart); v per move, if
 * both ends were read. */
static void add(long n, long procs, const char *what, const char *unit,
                double target, double v0, double v1, double per)
{
	char name[64];

	if (v0 < 0 || v1 < 0)
		return;
	if (procs)
		snprintf(name, sizeof(name), "14 move, %ld processes: %s",
		         procs, what);
	else
		snprintf(name, sizeof(name), "14 move: %s", what);
	bench_add(bench_row(name, n, unit, target > 0 ? G_ABS_LE : G_NONE,
	                    target),
	          E, (v1 - v0) / per);
}

/* One round: a tree of n threads parked (in procs processes, or in its
 * first), timed from outside over its moves. */
static void vtime_round(long n, long procs)
{
	long moves = bench.quick ? 100 : 200;
	struct spent s0 = { -1, -1, -1, -1 }, s1 = s0;
	int64_t t0 = 0, t1 = 0;
	struct tree t;
	char arg[64];
	int bad;

	snprintf(arg, sizeof(arg), "%ld,%ld,%ld", n, procs, moves);
	errno = 0;
	bad = tree_start(&t, arg) < 0 || tree_line(&t, "ready") < 0;
	if (!bad) {
		s0 = spent_now(&t);
		t0 = now_ns();
		bad = fputs("go\n", t.to) < 0 || fflush(t.to) != 0 ||
		      tree_line(&t, "done") < 0;
		t1 = now_ns();
		s1 = spent_now(&t);
	}
	if (tree_end(&t, bad) < 0 || bad) {
		if (!errno)
			errno = EIO;
		bench_fail(E, "14: %s under tfd exec --backend virtual", arg);
		return;
	}
	add(n, procs, "real time", "us", 0, 0, (double)(t1 - t0),
	    (double)moves * US);
	/* the target of issue 31: 100 threads in 10 processes, none busy */
	add(n, procs, "mover CPU", "us", procs && n == 100 ? 20 : 0, s0.cpu,
	    s1.cpu, (double)moves * US);
	add(n, procs, "mover syscalls", "", 0, s0.syscalls, s1.syscalls,
	    (double)moves);
	add(n, procs, "mover reads", "", 0, s0.reads, s1.reads,
	    (double)moves);
	add(n, procs, "mover wake-ups", "", 0, s0.wakes, s1.wakes,
	    (double)moves);
}

/* A child that dies makes our writes fail (EPIPE), not kill us. */
static void round_of(int side, long n, long procs)
{
	struct sigaction ign, old;

	if (side != E)
		return;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old);
	vtime_round(n, procs);
	sigaction(SIGPIPE, &old, NULL);
}

void workload_vtime(int side, long n)
{
	round_of(side, n, 0);
}

void workload_vtime_procs(int side, long n)
{
	round_of(side, n, PROCS);
}

void bench_vtime_note(void)
{
	bench_note("14: a tree under tfd exec --backend virtual, N threads "
	           "parked in pthread_cond_wait(), its first thread sleeping "
	           "10 ms %d times (virtual); per move: the real time (timed "
	           "outside the tree), and tfd exec's (the mover's) CPU, "
	           "system calls, read system calls (/proc/PID/io syscr) and "
	           "voluntary switches (wake-ups).",
	           bench.quick ? 100 : 200);
	if (perf_refused)
		bench_note("14: the mover's system calls are not counted here "
		           "(perf_event_open refused): see its reads.");
}
