/* SPDX-License-Identifier: MIT */
/*
 * cmd_exec.c - tfd exec: run a program with libtfd-preload.so preloaded, so
 * that its timerfd_create(2) timers are tfd timers.  See tfd(1) and
 * tfd-preload(7).
 *
 *   tfd exec [--backend engine|virtual|kernel] [--trace FILE] [--raw-syscalls]
 *            [--virtual-rate FACTOR] [--virtual-start DATE]
 *            [--virtual-slack US] [--allow-static]
 *            [--] PROG [ARG]...
 *
 * Options end at PROG (PROG's own options follow it).
 *
 * The library is $TFD_PRELOAD if set, else libtfd-preload.so next to this
 * program (the build tree), else the one in the private directory of the
 * library directory this program was built for (TFD_LIBDIR/tfd, where
 * make install puts it).  A statically linked PROG cannot take it
 * (elf.c): refused, unless --allow-static.
 *
 * Exit status, as env(1) and timeout(1): PROG's; 125 when tfd exec itself
 * fails (bad usage, TFD_BACKEND naming no backend, the library not found,
 * PROG statically linked); 126 when PROG is found but cannot be run; 127
 * when it is not found.
 */
#define _GNU_SOURCE
#include "cmd.h"
#include "core/time.h" /* TFD_NSEC */

#include "vtime/vtime.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TFD_LIBDIR
#define TFD_LIBDIR "/usr/local/lib"
#endif

#define PRELOAD_NAME "libtfd-preload.so"
/* Not a library to link with: a directory of its own, as libfaketime's. */
#define PRELOAD_DIR TFD_LIBDIR "/tfd"

static int readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The directory of this program, with a '/' at the end, into dir. */
static int self_dir(char *dir, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", dir, n - 1);
	char *slash;

	if (len <= 0)
		return -1;
	dir[len] = 0;
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	slash[1] = 0;
	return 0;
}

int tfd_find_preload(char *path, size_t n, char *why, size_t whyn)
{
	const char *env = getenv("TFD_PRELOAD");
	char dir[PATH_MAX];

	if (env && *env) {
		/* Absolute: PROG, or a program it runs, may change directory. */
		if (realpath(env, dir) && (size_t)snprintf(path, n, "%s", dir) < n)
			return 0;
		snprintf(path, n, "%s", env);
		if (readable(path))
			return 0;
		snprintf(why, whyn, "TFD_PRELOAD=%s: %s", env, strerror(errno));
		return -1;
	}
	if (self_dir(dir, sizeof(dir)) == 0 &&
	    (size_t)snprintf(path, n, "%s%s", dir, PRELOAD_NAME) < n &&
	    readable(path))
		return 0;
	snprintf(path, n, "%s/%s", PRELOAD_DIR, PRELOAD_NAME);
	if (readable(path))
		return 0;
	snprintf(why, whyn, "%s not found next to tfd nor in %s (set "
	                    "TFD_PRELOAD)", PRELOAD_NAME, PRELOAD_DIR);
	return -1;
}

/* LD_PRELOAD with the library added last: a sanitizer's runtime, which
 * must come first, may already be there; if the program needs one that
 * is not (runtime: its name), that run-time goes first. */
static int set_preload(const char *path, const char *runtime)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;
	int r;

	if (runtime && (!old || !strstr(old, runtime))) {
		if (asprintf(&v, "%s%s%s", runtime, old && *old ? ":" : "",
		             old ? old : "") < 0)
			return -1;
		r = setenv("LD_PRELOAD", v, 1);
		free(v);
		if (r < 0)
			return r;
		old = getenv("LD_PRELOAD");
	}

	if (strpbrk(path, " :")) {
		fprintf(stderr, "tfd: exec: cannot preload %s: the dynamic "
		                "linker splits LD_PRELOAD at spaces and colons\n",
		        path);
		errno = 0;
		return -1;
	}
	if (!old || !*old)
		return setenv("LD_PRELOAD", path, 1);
	if (asprintf(&v, "%s:%s", old, path) < 0)
		return -1;
	r = setenv("LD_PRELOAD", v, 1);
	free(v);
	return r;
}

/* TFD_TRACE as an absolute name (PROG may change directory), after
 * checking that lines can be appended to it. */
static int set_trace(const char *file)
{
	char cwd[PATH_MAX], *abs = NULL;
	int fd, r;

	fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "tfd: exec: --trace %s: %s\n", file,
		        strerror(errno));
		errno = 0;
		return -1;
	}
	close(fd);
	if (file[0] != '/' && getcwd(cwd, sizeof(cwd)) &&
	    asprintf(&abs, "%s/%s", cwd, file) < 0)
		return -1;
	r = setenv("TFD_TRACE", abs ? abs : file, 1);
	free(abs);
	return r;
}

static int known_backend(const char *b)
{
	return !strcmp(b, "engine") || !strcmp(b, "virtual") ||
	       !strcmp(b, "kernel");
}

/* tfd exec's own failures exit 125, as env(1)'s and timeout(1)'s: 126
 * and 127 are PROG's that cannot be run, any other PROG's own. */
#define FAILED 125

/* A usage error, one line (tfd_cmd_bad), exit 125. */
static int bad(const char *fmt, const char *arg)
{
	tfd_cmd_bad(fmt, arg);
	return FAILED;
}

enum { O_BACKEND, O_TRACE, O_RAW, O_RATE, O_START, O_SLACK, O_STATIC };
static const struct tfd_opt opts[] = {
	[O_BACKEND] = { "backend", "NAME", tfd_backend_help },
	[O_TRACE] = { "trace", "FILE",
	              "append one line per timer operation to FILE\n"
	              "(read it with tfd trace FILE)" },
	[O_RAW] = { "raw-syscalls", NULL,
	            "take over raw timerfd system calls too (a seccomp\n"
	            "filter; sets no_new_privs: tfd-preload(7))" },
	[O_RATE] = { "virtual-rate", "FACTOR",
	             "on virtual, time also flows between jumps, FACTOR\n"
	             "times the real rate (busy programs; default 0: it\n"
	             "moves only when every thread waits)" },
	[O_START] = { "virtual-start", "DATE",
	              "on virtual, CLOCK_REALTIME starts at DATE: @SECONDS\n"
	              "since the epoch, or YYYY-MM-DD [HH:MM:SS] in UTC\n"
	              "(default: the next whole second)" },
	[O_SLACK] = { "virtual-slack", "US",
	              "on virtual, waits due within US microseconds of the\n"
	              "earliest end together, as Linux's timer slack lets\n"
	              "them (0 to 1000000; default 50; 0: each at its own\n"
	              "deadline, in their order)" },
	[O_STATIC] = { "allow-static", NULL,
	               "run PROG even if it is statically linked: nothing\n"
	               "is preloaded into it, its timers stay the kernel's" },
	{ NULL, NULL, NULL },
};

static int tfd_cmd_exec(int argc, char **argv);

/* ---- virtual time: tfd exec stays as the tree's parent and moves time
 * for it (tfd-preload(7), VIRTUAL TIME) ---- */

static volatile sig_atomic_t child_pid;
static struct tfd_dom *dom;

static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/* A terminal's signals reach the child's process group already. */
	if (child_pid > 0 && si->si_code != SI_KERNEL) {
		kill((pid_t)child_pid, sig);
		if (dom)
			tfd_dom_told_signal(dom, (int32_t)child_pid);
	}
	if (dom)
		tfd_dom_changed(dom); /* the mover looks again (SIGCHLD says
		                        * if the child ended) */
}

/* A child of ours changed since the last look (set first: a look). */
static volatile sig_atomic_t child_news = 1;

static void on_child(int sig)
{
	(void)sig;
	child_news = 1;
	if (dom)
		tfd_dom_changed(dom); /* the mover looks (atomics, a futex) */
}

struct run {
	pid_t pid;
	int status, done;
	const char *trace; /* TFD_TRACE: each move is a line of it */
};

/* A line appended to the trace file as the preload appends its own
 * (tfd-preload(7), TRACE). */
static void trace_line(const char *trace, const char *line, int n)
{
	int fd;

	if (!strcmp(trace, "/dev/stderr"))
		fd = 2;
	else if (!strcmp(trace, "/dev/stdout"))
		fd = 1;
	else
		fd = open(trace, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0)
		n = 0;
	if (fd > 2)
		close(fd);
}

/* "TIME PID - exec(PROG) = 0": the name of the program that the lines of
 * PID that follow are from, for tfd trace (its tracks), written by the
 * process that is about to become PROG, on the trace's clock (now).
 * Bytes that are not text are written as '?', so that the line is one. */
static void trace_exec(const char *prog, int64_t now)
{
	const char *trace = getenv("TFD_TRACE");
	char line[320], name[256];
	size_t i;
	int n;

	if (!trace)
		return;
	for (i = 0; prog[i] && i < sizeof(name) - 1; i++)
		name[i] = prog[i] < 0x20 || prog[i] > 0x7e ? '?' : prog[i];
	name[i] = 0;
	n = snprintf(line, sizeof(line), "%lld.%09lld %d - exec(%s) = 0\n",
	             (long long)(now / TFD_NSEC),
	             (long long)(now % TFD_NSEC), (int)getpid(), name);
	trace_line(trace, line, n);
}

/* A move, as the preload's trace shows one (tfd-preload(7), TRACE),
 * under the pid of the program tfd exec runs (the root of the tree). */
static void traced(void *ctx, int64_t from, int64_t to)
{
	struct run *r = ctx;
	char line[128];
	int n;

	if (!r->trace)
		return;
	n = snprintf(line, sizeof(line),
	             "%lld.%09lld %d - virtual-advance(+%lld.%09lld) = 0\n",
	             (long long)(to / TFD_NSEC), (long long)(to % TFD_NSEC),
	             (int)r->pid, (long long)((to - from) / TFD_NSEC),
	             (long long)((to - from) % TFD_NSEC));
	trace_line(r->trace, line, n);
}

/* Asked at every step of the mover: a system call only after SIGCHLD
 * (each move of a program that ticks would make three). */
static int child_ended(void *ctx)
{
	struct run *r = ctx;

	if (!child_news)
		return r->done;
	child_news = 0;
	if (waitpid(r->pid, &r->status, WNOHANG) == r->pid)
		r->done = 1;
	return r->done;
}

static int handlers(void)
{
	static const int fwd[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
		                   SIGUSR2 };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	for (i = 0; i < sizeof(fwd) / sizeof(*fwd); i++)
		if (sigaction(fwd[i], &sa, NULL) < 0)
			return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP;
	return sigaction(SIGCHLD, &sa, NULL);
}

/* Runs PROG in a child on a domain of its own, CLOCK_REALTIME from
 * start (INT64_MIN: the default); returns its status. */
static int run_in_domain(char **argv, uint32_t rate, int64_t start,
                         uint32_t slack)
{
	struct run r = { 0, 0, 0, NULL };
	struct tfd_dom *d;
	char name[64];
	int fd, slot;

	d = dom = tfd_dom_create(&fd, rate);
	if (!d) {
		fprintf(stderr, "tfd: exec: cannot make the virtual-time "
		                "domain: %s\n", strerror(errno));
		return FAILED;
	}
	if (start != INT64_MIN)
		tfd_dom_start_at(d, start);
	tfd_dom_set_slack(d, slack);
	/* What PROG inherits from outside: a wait on it flows in real time. */
	tfd_dom_inherit(d);
	snprintf(name, sizeof(name), "%d:%d", (int)getpid(), fd);
	/* The domain ends even if we are killed (tfd-preload(7)). */
	if (setenv("TFD_DOMAIN", name, 1) < 0 || handlers() < 0 ||
	    tfd_dom_watch(d) < 0) {
		fprintf(stderr, "tfd: exec: %s\n", strerror(errno));
		return FAILED;
	}
	/* The child's slot, taken before it exists: time holds until the
	 * library, loaded with PROG, finds it by its thread id. */
	slot = tfd_dom_reserve(d);
	fflush(NULL);
	r.pid = fork();
	if (r.pid < 0) {
		fprintf(stderr, "tfd: exec: fork: %s\n", strerror(errno));
		return FAILED;
	}
	if (r.pid == 0) {
		char shown[128];
		int e;

		signal(SIGCHLD, SIG_DFL);
		trace_exec(argv[0], tfd_dom_now(d, DC_MONO));
		execvp(argv[0], argv);
		e = errno;
		fprintf(stderr, "tfd: exec: %s: %s\n",
		        tfd_printable(argv[0], shown, sizeof(shown)),
		        strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	child_pid = r.pid;
	tfd_dom_reserved(d, slot, r.pid);
	r.trace = getenv("TFD_TRACE");
	tfd_dom_move(d, 1, child_ended, traced, &r);
	/* Programs the child left behind go on with time flowing. */
	tfd_dom_end(d);
	if (WIFSIGNALED(r.status)) {
		signal(WTERMSIG(r.status), SIG_DFL);
		raise(WTERMSIG(r.status));
		return 128 + WTERMSIG(r.status);
	}
	return WEXITSTATUS(r.status);
}

/* FACTOR as thousandths: 0 (pure virtual time) to 1000000. */
static int parse_rate(const char *s, uint32_t *milli)
{
	char *end;
	double f = strtod(s, &end);

	if (end == s || *end || !(f >= 0) || f > 1000)
		return -1;
	*milli = (uint32_t)(f * 1000 + 0.5);
	return 0;
}

/* US, a whole number of microseconds up to a second, in ns. */
static int parse_slack(const char *s, uint32_t *ns)
{
	char *end;
	unsigned long us;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	us = strtoul(s, &end, 10);
	if (*end || errno || us > TFD_MAX_SLACK_NS / 1000)
		return -1;
	*ns = (uint32_t)us * 1000;
	return 0;
}

/* DATE as libfaketime's "@DATE" takes it: @SECONDS[.FRACTION] since the
 * epoch, or YYYY-MM-DD, YYYY-MM-DD HH:MM:SS (or with a T), in UTC; into
 * *ns.  -1 if it is none of these, or no such date. */
static int parse_start(const char *s, int64_t *ns)
{
	struct tm tm, back;
	const char *p;
	time_t t;
	int n = 0, frac = 0, digits = 0;
	long long sec;

	if (*s == '@') {
		if (s[1] < '0' || s[1] > '9' ||
		    sscanf(s + 1, "%lld%n", &sec, &n) != 1)
			return -1;
		p = s + 1 + n;
		if (*p == '.')
			for (p++; *p >= '0' && *p <= '9'; p++)
				if (digits++ < 9)
					frac = frac * 10 + (*p - '0');
		if (*p || p[-1] == '.' || sec >= INT64_MAX / 1000000000)
			return -1; /* (2262, where nanoseconds end) */
		while (digits++ < 9)
			frac *= 10;
		*ns = (int64_t)sec * 1000000000 + frac;
		return 0;
	}
	memset(&tm, 0, sizeof(tm));
	n = 0;
	if (sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	           &n) != 3 || n != 10)
		return -1;
	p = s + n;
	if (*p == ' ' || *p == 'T') {
		n = 0;
		if (sscanf(p + 1, "%2d:%2d:%2d%n", &tm.tm_hour, &tm.tm_min,
		           &tm.tm_sec, &n) != 3 || n != 8)
			return -1;
		p += 1 + n;
	}
	if (*p)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	back = tm;
	t = timegm(&tm);
	if (t < 0 || t >= INT64_MAX / 1000000000 || tm.tm_year != back.tm_year || tm.tm_mon != back.tm_mon ||
	    tm.tm_mday != back.tm_mday || tm.tm_hour != back.tm_hour ||
	    tm.tm_min != back.tm_min || tm.tm_sec != back.tm_sec)
		return -1; /* February 30th, 25:00... */
	*ns = (int64_t)t * 1000000000;
	return 0;
}

const struct tfd_cmd tfd_exec_cmd = {
	.name = "exec",
	.operands = "[--] PROG [ARG]...",
	.summary = "run a program with its timerfd(2) timers on tfd",
	.text = "Runs PROG with libtfd-preload.so preloaded: its\n"
	        "timerfd_create(2) timers are tfd timers of the backend chosen.\n"
	        "On virtual, time moves when PROG waits (tfd-preload(7)).\n"
	        "Options end at PROG.  Exit status, as env(1): PROG's; 125 when\n"
	        "tfd exec fails (bad usage, TFD_BACKEND naming no backend, the\n"
	        "library not found, PROG statically linked); 126 when PROG\n"
	        "cannot be run; 127 when it is not found.",
	.opts = opts,
	.fn = tfd_cmd_exec,
	.options_first = 1,
};

/* What the options ask for. */
struct exec_opts {
	const char *backend, *trace;
	uint32_t rate, slack;
	int64_t start;
	int raw, allow_static;
};

/* The options into x: -1, or the exit status. */
static int exec_options(struct tfd_args *a, struct exec_opts *x)
{
	int o;

	while ((o = tfd_opt_next(a)) >= 0) {
		if (o == O_BACKEND) {
			x->backend = a->val;
			if (!known_backend(x->backend))
				return bad("unknown backend '%s'", x->backend);
		} else if (o == O_TRACE) {
			x->trace = a->val;
			if (!*x->trace)
				return bad("%s", "--trace needs a file");
		} else if (o == O_RAW) {
			x->raw = 1;
		} else if (o == O_RATE) {
			if (parse_rate(a->val, &x->rate) < 0)
				return bad("--virtual-rate: '%s' is not a "
				           "factor from 0 to 1000", a->val);
		} else if (o == O_START) {
			if (parse_start(a->val, &x->start) < 0)
				return bad("--virtual-start: '%s' is not @SECONDS "
				           "nor YYYY-MM-DD [HH:MM:SS] (UTC)",
				           a->val);
		} else if (o == O_SLACK) {
			if (parse_slack(a->val, &x->slack) < 0)
				return bad("--virtual-slack: '%s' is not a whole "
				           "number of microseconds from 0 to "
				           "1000000", a->val);
		} else if (o == O_STATIC) {
			x->allow_static = 1;
		}
	}
	if (o != TFD_OPT_END)
		return o == TFD_OPT_HELP ? 0 : FAILED;
	return -1;
}

/* prog (or the interpreter of a script) is statically linked: say so,
 * 1; else 0. */
static int refused_static(const char *prog)
{
	char path[PATH_MAX], shown[128], name[128];
	int o = tfd_program_static(prog, 1, path, sizeof(path));

	if (!o)
		return 0;
	tfd_printable(path, shown, sizeof(shown));
	if (o == 2) /* a script */
		fprintf(stderr, "tfd: exec: %s runs on %s, which",
		        tfd_printable(prog, name, sizeof(name)), shown);
	else
		fprintf(stderr, "tfd: exec: %s", shown);
	fprintf(stderr, " is statically linked: libtfd-preload.so cannot be "
	        "loaded into it, its timers would be the kernel's "
	        "(--allow-static runs it so)\n");
	return 1;
}

/* The environment PROG runs in: the preload (after prog's sanitizer
 * runtime, if any), the trace file, the backend, raw system calls.
 * 0, or -1 (said). */
static int exec_env(const struct exec_opts *x, const char *prog)
{
	char path[PATH_MAX], why[PATH_MAX + 64], runtime[128];

	if (tfd_find_preload(path, sizeof(path), why, sizeof(why)) < 0) {
		fprintf(stderr, "tfd: exec: %s\n", why);
		return -1;
	}
	errno = 0;
	if (set_preload(path, tfd_program_runtime(prog, runtime,
	                                          sizeof(runtime))
	                              ? runtime : NULL) < 0 ||
	    (x->trace && set_trace(x->trace) < 0) ||
	    (x->backend && setenv("TFD_BACKEND", x->backend, 1) < 0) ||
	    (x->raw && setenv("TFD_RAW_SYSCALLS", "1", 1) < 0)) {
		if (errno) /* else the message is out already */
			fprintf(stderr, "tfd: exec: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int tfd_cmd_exec(int argc, char **argv)
{
	struct exec_opts x = { NULL, NULL, 0, TFD_DEFAULT_SLACK_NS, INT64_MIN,
		               0, 0 };
	const char *env;
	char shown[128];
	struct tfd_args a;
	int st;

	tfd_args_init(&a, &tfd_exec_cmd, argc, argv);
	if ((st = exec_options(&a, &x)) >= 0)
		return st;
	if (a.argc == 0)
		return bad("%s", "missing PROG: nothing to run");
	/* TFD_BACKEND=virtaul is refused as --backend virtaul is: the
	 * library would create no timer (tfd_use_backend(3)). */
	env = getenv("TFD_BACKEND");
	if (!x.backend && env && *env && !known_backend(env))
		return bad("TFD_BACKEND='%s' names no backend (engine, "
		           "virtual or kernel)", env);
	if ((!x.allow_static && refused_static(a.argv[0])) ||
	    exec_env(&x, a.argv[0]) < 0)
		return FAILED;
	env = x.backend ? x.backend : getenv("TFD_BACKEND");
	if (env && !strcmp(env, "virtual"))
		return run_in_domain(a.argv, x.rate, x.start, x.slack);
	unsetenv("TFD_DOMAIN");
	fflush(NULL);
	if (x.trace) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		trace_exec(a.argv[0], (int64_t)now.tv_sec * TFD_NSEC +
		                      now.tv_nsec);
	}
	execvp(a.argv[0], a.argv);
	fprintf(stderr, "tfd: exec: %s: %s\n",
	        tfd_printable(a.argv[0], shown, sizeof(shown)),
	        strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
