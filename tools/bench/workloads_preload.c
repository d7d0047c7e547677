/* SPDX-License-Identifier: MIT */
/*
 * workloads_preload.c - tfd bench's workloads 9a and 9b (bench.h).
 *
 * 9a: what libtfd-preload.so adds to calls on other descriptors; 9b: what
 * the seccomp filter of --raw-syscalls adds to every system call; 12: how
 * late poll(2) returns for a timer 0.2-1 ms ahead (the preload's poll
 * delivers: tfd(7), Delivery), then epoll_wait(2), then a burst of 1,024
 * timers of one epoll set due at once, quiet and with two busy loops.  Each
 * round runs this program again twice (bench_preload_child): as it is
 * (native) and with the library preloaded (preload), or with the library
 * and TFD_RAW_SYSCALLS=1 (filter).  The two children stay alive for the
 * round and take turns: a slice of every measure in one, then in the
 * other, SLICES times, so that both see the machine as it is at that
 * moment; the round's figure is the median of the slices.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct cols native_preload = { { "native", "preload" },
	                                    "p/n" };
static const struct cols native_filter = { { "native", "filter" }, "f/n" };

enum { P_READ, P_WRITE, P_CLOSE, P_POLL, NPOPS };
#define PBATCH 64 /* calls between two clock readings */
#define NMEASURES (2 * NPOPS + 1) /* 9a: pipe, socket, poll with a timer */
#define NVALUES 20 /* of a slice: NMEASURES, NLATENCY at most */
#define SLICES 15

static const char *const measure_rows[NMEASURES] = {
	"9a read(2), pipe, 1 byte", "9a write(2), pipe, 1 byte",
	"9a close(2), a dup of a pipe", "9a poll(2), pipe, 0 ms",
	"9a read(2), socket, 1 byte", "9a write(2), socket, 1 byte",
	"9a close(2), a dup of a socket", "9a poll(2), socket, 0 ms",
	"9a poll(2), pipe, 1 timer open",
};
#define GETPPID_ROW "9b getppid(2)"

/* 12: for poll(2), epoll_wait(2) and a burst (BURST timers of one epoll
 * set due at once), the p50 and p99 of how late a slice's expirations
 * were read, and the process's CPU time (the service thread's too),
 * context switches and system calls per expiration, quiet and loaded,
 * with issue 20's targets (those of workloads 5, 11 and 7c) and issue
 * 30's (the counts). */
struct latency_row {
	const char *name, *unit;
	int goal[2]; /* quiet, loaded */
	double target[2];
};

#define NLATENCY 20 /* 5 measures: poll, epoll, the burst, calls */
#define NL 5
#define BURST 1024
/* Their names: "12 GROUP NAME", the calls' "12 NAME"; the burst's N is
 * BURST. */
static const char *const latency_groups[4] = { "poll ", "epoll ",
	                                       "burst ", "" };
_Static_assert(NMEASURES <= NVALUES && NLATENCY <= NVALUES, "a slice");
static const struct latency_row latency_rows[NL] = {
	{ "latency p50", "us", { G_PLUS_LE, G_NONE }, { 5, 0 } },
	{ "latency p99", "us", { G_RATIO_LE, G_RATIO_LE }, { 1.5, 1.5 } },
	{ "CPU/expiry", "us", { G_RATIO_LE, G_RATIO_LE },
	  { 1.2, 1.2 } },
	{ "switches/expiry", "", { G_RATIO_LE, G_RATIO_LE }, { 1.0, 1.0 } },
	{ "syscalls/expiry", "", { G_RATIO_LE, G_RATIO_LE }, { 0.5, 0.5 } },
};
/* The burst: what the kernel does costs it no switch (a ratio to none
 * is no target), and its system calls are arm and read (issue 30: a
 * quarter of them at most). */
static const struct latency_row burst_rows[NL] = {
	{ "latency p50", "us", { G_NONE, G_NONE }, { 0, 0 } },
	{ "latency p99", "us", { G_NONE, G_NONE }, { 0, 0 } },
	{ "CPU/expiry", "us", { G_RATIO_LE, G_RATIO_LE }, { 1.0, 1.0 } },
	{ "switches/expiry", "", { G_NONE, G_NONE }, { 0, 0 } },
	{ "syscalls/expiry", "", { G_RATIO_LE, G_RATIO_LE }, { 0.25, 0.25 } },
};

/* Calls that a wait does not follow: a read(2) of a non-blocking timer
 * with nothing due (the kernel's is a system call; the preload's answers
 * from memory) and timerfd_create(2) + close(2), their time and counts
 * per call (issue 30: a read with no system call, create + close at most
 * twice the kernel's). */
static const struct latency_row calls_rows[NL] = {
	{ "read, none due", "ns", { G_RATIO_LE, G_RATIO_LE }, { 1.0, 1.0 } },
	{ "read, none due syscalls", "", { G_RATIO_LE, G_RATIO_LE },
	  { 0, 0 } },
	{ "create+close", "ns", { G_NONE, G_NONE }, { 0, 0 } },
	{ "create+close syscalls", "", { G_RATIO_LE, G_RATIO_LE },
	  { 2.0, 2.0 } },
	{ "create+close switches", "", { G_NONE, G_NONE }, { 0, 0 } },
};

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
	struct itimerspec far = its(100 * TFD_NSEC, 0);
	int k, op, t;

	for (k = 0; k < 2; k++)
		for (op = 0; op < NPOPS; op++)
			if ((v[k * NPOPS + op] = time_op(op, pair[k][0],
			                                 pair[k][1],
			                                 batches)) < 0)
				return -1;
	t = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t < 0 || timerfd_settime(t, 0, &far, NULL) < 0)
		return -1;
	v[2 * NPOPS] = time_op(P_POLL, pair[0][0], pair[0][1], batches);
	close(t);
	return v[2 * NPOPS] < 0 ? -1 : 0;
}

/* The burst of a slice of 12: the BURST timers fds of set ep, armed
 * 5 ms ahead, read as epoll_wait(2) reports them, 256 at a time; how late
 * each was read into lat.  -1 if a call failed or a read came early. */
static int burst_12(const int *fds, int ep, int64_t *lat)
{
	struct epoll_event ev[256];
	int64_t d = now_ns() + 5 * MS;
	struct itimerspec at = its(d, 0);
	int i, r, got = 0;

	for (i = 0; i < BURST; i++)
		if (timerfd_settime(fds[i], TFD_TIMER_ABSTIME, &at, NULL) < 0)
			return -1;
	while (got < BURST) {
		while ((r = epoll_wait(ep, ev, 256, 2000)) < 0 && errno == EINTR)
			;
		if (r <= 0)
			return -1;
		for (i = 0; i < r && got < BURST; i++) {
			uint64_t c;

			if (read(fds[ev[i].data.u32], &c, sizeof(c)) !=
			    sizeof(c))
				return -1;
			if ((lat[got++] = now_ns() - d) < 0)
				return -1;
		}
	}
	return 0;
}

/* The calls of a slice of 12 (calls_rows), n of each, into v: read(2)
 * of a non-blocking timer an hour ahead, then timerfd_create(2) +
 * close(2).  -1 if a call failed. */
static int calls_12(long n, double *v)
{
	struct itimerspec far = its(3600 * TFD_NSEC, 0);
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	struct counts c0, d;
	int64_t t0;
	uint64_t c;
	long i;
	int k;

	if (fd < 0 || timerfd_settime(fd, 0, &far, NULL) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	c0 = bench_counts();
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (read(fd, &c, sizeof(c)) != -1 || errno != EAGAIN)
			break;
	v[0] = (double)(now_ns() - t0) / (double)n;
	v[1] = bench_counts_since(c0, (double)n).syscalls;
	close(fd);
	if (i < n)
		return -1;
	c0 = bench_counts();
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		k = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (k < 0 || close(k) < 0)
			return -1;
	}
	v[2] = (double)(now_ns() - t0) / (double)n;
	d = bench_counts_since(c0, (double)n);
	v[3] = d.syscalls;
	v[4] = d.switches;
	return 0;
}

/* One slice of 12: n times, a timer armed 0.2-1 ms ahead, poll(2) until
 * it is readable, then read; then n times the same with epoll_wait(2) on
 * a set that holds it (ep); then a burst (burst_12: bfds, in set bep, or
 * none if bep < 0).  v[0..4]: p50 and p99 of how late poll returned (us),
 * CPU (us), context switches and system calls per expiration (all the
 * process's threads; -1 where not counted); v[5..9]: epoll_wait's;
 * v[10..14]: the burst's (-1 without one); v[15..19]: calls_12's.
 * -1 if a call failed or returned early. */
static int slice_12(int fd, int ep, const int *bfds, int bep, long n,
                    double *v)
{
	static int64_t lat[BURST];
	struct counts c0, cost;
	int64_t cpu;
	long i;
	int k;

	if (n > 200)
		n = 200;
	for (k = 0; k < 3; k++) {
		if (k == 2 && bep < 0) {
			for (i = 0; i < NL; i++)
				v[NL * k + i] = -1;
			break;
		}
		cpu = cpu_ns();
		c0 = bench_counts();
		if (k == 2) {
			if (burst_12(bfds, bep, lat) < 0)
				return -1;
			n = BURST;
		}
		for (i = 0; k < 2 && i < n; i++) {
			int64_t d = now_ns() + 200 * US +
			            (int64_t)(bench_rnd() % (800 * US));
			struct itimerspec at = its(d, 0);
			struct pollfd p = { fd, POLLIN, 0 };
			struct epoll_event ev;
			uint64_t c;
			int r;

			if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &at, NULL) < 0)
				return -1;
			while ((r = k ? epoll_wait(ep, &ev, 1, 2000)
			              : poll(&p, 1, 2000)) < 0 && errno == EINTR)
				;
			lat[i] = now_ns() - d;
			if (r != 1 || lat[i] < 0 ||
			    read(fd, &c, sizeof(c)) != sizeof(c))
				return -1;
		}
		v[NL * k + 2] = (double)(cpu_ns() - cpu) / (double)n / US;
		cost = bench_counts_since(c0, (double)n);
		v[NL * k + 3] = cost.switches;
		v[NL * k + 4] = cost.syscalls;
		qsort(lat, (size_t)n, sizeof(*lat), bench_cmp_i64);
		v[NL * k] = (double)lat[n / 2] / US;
		v[NL * k + 1] = (double)lat[n * 99 / 100] / US;
	}
	return calls_12(1000, v + 3 * NL);
}

/* The burst's BURST timers, non-blocking, into fds, in an epoll set (its
 * number), with RLIMIT_NOFILE raised for them; -1 if they cannot be made
 * (the burst's rows are left out). */
static int burst_set(int *fds)
{
	struct rlimit rl;
	int ep, i;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < BURST + 64 &&
	    rl.rlim_max >= BURST + 64) {
		rl.rlim_cur = BURST + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return -1;
	for (i = 0; i < BURST; i++) {
		struct epoll_event ev = { EPOLLIN, { .u32 = (uint32_t)i } };

		fds[i] = timerfd_create(CLOCK_MONOTONIC,
		                        TFD_NONBLOCK | TFD_CLOEXEC);
		if (fds[i] < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) < 0)
			return -1; /* (the program ends soon) */
	}
	return ep;
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
int bench_preload_child(const char *what)
{
	long batches = bench.quick ? 2 : 4, k;
	long calls = bench.quick ? 1000 : 2000;
	int pair[2][2], i, n = strcmp(what, "9b") ? NMEASURES : 1;
	double v[NVALUES];
	char line[16];

	if (!strcmp(what, "12")) {
		static int bfds[BURST];
		int fd, ep, bep;
		struct epoll_event ev = { EPOLLIN, { 0 } };

		bench_counts_open(); /* before the library's threads */
		fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		ep = epoll_create1(EPOLL_CLOEXEC);
		bench_seed(0);
		if (fd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			return 1;
		bep = burst_set(bfds);
		while (fgets(line, sizeof(line), stdin)) {
			if (slice_12(fd, ep, bfds, bep, bench.quick ? 60 : 150,
			             v) < 0)
				return 1;
			for (i = 0; i < NLATENCY; i++)
				printf("%s%.2f", i ? " " : "", v[i]);
			printf("\n");
			fflush(stdout);
		}
		return 0;
	}
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
 * variables but TFD_DELIVERY (12 with TFD_DELIVERY=post measures the
 * service thread's delivery); with the library lib (NULL: native),
 * LD_PRELOAD with lib added last (a sanitizer's runtime must stay first),
 * ASAN_OPTIONS that let it, TFD_BACKEND=engine, and TFD_RAW_SYSCALLS=1 if
 * raw. */
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
		if ((strncmp(environ[i], "TFD_", 4) ||
		     !strncmp(environ[i], "TFD_DELIVERY=", 13)) &&
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

/* The figures of a round of workload w: per side, measure and slice. */
typedef double figures[2][NVALUES][SLICES];

static const struct cols *cols_of(int w)
{
	return w == W_FILTER ? &native_filter : &native_preload;
}

/* The CPUs the children of w run on: the one this process is on (12: any;
 * empty: the children run where we may). */
static void child_cpus(int w, cpu_set_t *cpus)
{
	int cpu = sched_getcpu();

	CPU_ZERO(cpus);
	if (cpu < 0 || sched_getaffinity(0, sizeof(*cpus), cpus) < 0)
		CPU_ZERO(cpus);
	else if (CPU_ISSET(cpu, cpus)) {
		CPU_ZERO(cpus);
		CPU_SET(cpu, cpus);
	}
	if (w == W_POLL_LATENCY || w == W_POLL_LATENCY_LOADED)
		CPU_ZERO(cpus); /* the waits and the service thread anywhere */
}

/* The children of w, one per side run: 0, or -1 (said). */
static int start_children(int w, struct live c[2])
{
	char arg[32], *argv[] = { (char *)"tfd", (char *)"bench", arg,
		                  (char *)(bench.quick ? "--quick" : NULL),
		                  NULL };
	struct child_env env;
	cpu_set_t cpus;
	int s, bad = 0;

	child_cpus(w, &cpus);
	snprintf(arg, sizeof(arg), "--preload-child=%s", bench_workloads[w].id);
	for (s = K; s <= E; s++) {
		c[s].pid = -1;
		c[s].to = c[s].from = NULL;
		if (!(bench.sides & 1 << s))
			continue;
		if (child_env(&env, s == K ? NULL : bench.preload,
		              w == W_FILTER && s == E) < 0) {
			bench_fail(s, "environment of a child process");
			bad = 1;
			continue;
		}
		if (live_start(&c[s], argv, env.v, &cpus) < 0) {
			bench_fail(s, "starting a child process");
			bad = 1;
		}
		child_env_free(&env);
	}
	return bad ? -1 : 0;
}

/* slices slices of n figures from each child in turn, into v: 0, or -1
 * (said). */
static int take_slices(int w, struct live c[2], int n, int slices,
                       figures v)
{
	double one[NVALUES];
	int i, j, m, s;

	for (j = 0; j < slices; j++) {
		for (i = 0; i < 2; i++) {
			s = (i + j) % 2; /* each side first in turn */
			if (!c[s].to)
				continue;
			if (live_slice(&c[s], one, n) < 0) {
				errno = errno == ETIMEDOUT ? errno : EIO;
				bench_fail(s, "%s in the %s child process",
				           bench_workloads[w].id,
				           cols_of(w)->name[s]);
				return -1;
			}
			for (m = 0; m < n; m++)
				v[s][m][j] = one[m];
		}
	}
	return 0;
}

/* Ends the children (killed if bad): 0, or -1 if one failed (said);
 * raw[s] as live_end gives it. */
static int end_children(int w, struct live c[2], int raw[2], int bad)
{
	int s;

	for (s = K; s <= E; s++)
		if (c[s].pid > 0 && live_end(&c[s], &raw[s], bad) < 0 && !bad) {
			errno = EIO;
			bench_fail(s, "%s in the %s child process",
			           bench_workloads[w].id, cols_of(w)->name[s]);
			bad = 1;
		}
	return bad ? -1 : 0;
}

/* The row of figure i of workload w. */
static struct row *row_of(int w, int i)
{
	const struct latency_row *l;
	int loaded = w == W_POLL_LATENCY_LOADED;
	char name[64];
	struct row *r;

	if (w == W_FILTER) {
		r = bench_row_in(&native_filter, GETPPID_ROW, 1, "ns", G_NONE,
		                 0);
		r->ref = "(n+70ns)";
		return r;
	}
	if (w == W_PRELOAD)
		return bench_row_in(&native_preload, measure_rows[i], 1, "ns",
		                    G_RATIO_LE, 1.05);
	l = i / NL == 3   ? &calls_rows[i % NL]
	    : i / NL == 2 ? &burst_rows[i % NL]
	                  : &latency_rows[i % NL];
	snprintf(name, sizeof(name), "12 %s%s%s", latency_groups[i / NL],
	         l->name, loaded ? ", 2 busy loops" : "");
	return bench_row_in(&native_preload, name, i / NL == 2 ? BURST : 1,
	                    l->unit, l->goal[loaded], l->target[loaded]);
}

/* The median of the slices of each figure, into its row; a figure of
 * 12 not counted here (-1) has none. */
static void add_figures(int w, int n, int slices, figures v)
{
	int lat = w == W_POLL_LATENCY || w == W_POLL_LATENCY_LOADED;
	int s, i;

	for (s = K; s <= E; s++) {
		if (!(bench.sides & 1 << s))
			continue;
		for (i = 0; i < n; i++) {
			qsort(v[s][i], (size_t)slices, sizeof(double),
			      bench_cmp_d);
			if (lat && v[s][i][slices / 2] < 0)
				continue; /* not counted here */
			bench_add(row_of(w, i), s, v[s][i][slices / 2]);
		}
	}
}

/* One round of workload w: see live_round. */
static void live_children(int w)
{
	int lat = w == W_POLL_LATENCY || w == W_POLL_LATENCY_LOADED;
	int n = w == W_FILTER ? 1 : lat ? NLATENCY : NMEASURES;
	int slices = bench.quick ? 5 : SLICES, nbusy = 0, bad;
	int raw[2] = { -1, -1 };
	pid_t busy[BUSY_N];
	struct live c[2];
	static figures v;

	bad = start_children(w, c) < 0;
	if (w == W_POLL_LATENCY_LOADED && !bad)
		nbusy = bench_busy_start(busy);
	if (!bad)
		bad = take_slices(w, c, n, slices, v) < 0;
	bench_busy_stop(busy, nbusy);
	if (end_children(w, c, raw, bad) < 0)
		return;
	if (w == W_FILTER && (bench.sides & 1 << E) && raw[E] != 1) {
		bench_note("9b: the filter was not in place in the child "
		           "(see its message above): no figures");
		return;
	}
	add_figures(w, n, slices, v);
}

/* One round of workload w (9a or 9b): the two children in turn, a
 * median per measure and side.  Both run on the CPU this process is on:
 * the CPUs of a virtual machine may differ by 10 % in what a system call
 * costs, and a child that moved (the preload's engine has threads) would
 * measure the move.  A child that dies makes our writes fail (EPIPE), not
 * kill us. */
void bench_live_round(int w)
{
	struct sigaction ign, old;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old);
	live_children(w);
	sigaction(SIGPIPE, &old, NULL);
}

/* What the filter adds, in ns: the difference of the two medians. */
void bench_filter_note(void)
{
	const struct row *r = bench_row_in(&native_filter, GETPPID_ROW, 1,
	                                   "ns", G_NONE, 0);
	struct stat3 k = bench_stats(r, K), f = bench_stats(r, E);

	if (k.n && f.n)
		bench_note("9b: the filter adds %.0f ns to a system call that "
		           "does almost nothing here (tfd-preload(7) measured "
		           "+70 ns)", f.med - k.med);
}
