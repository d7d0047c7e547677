/* SPDX-License-Identifier: MIT */
/*
 * run.c - the test runner.  Runs every registered test (or those whose
 * name contains one of the arguments) each in its own process, several at
 * a time, with a time limit; a test fails if it fails a check, crashes,
 * runs out of time, or leaves a descriptor open that it did not have when
 * it started.  A test may skip itself (t_skip: exit status T_SKIP, the
 * reason on its first line of output).  Ends with the line
 * "N passed, N failed, N skipped".
 *
 *   tfd-test [-j JOBS] [-v] [-l] [-x NAME]... [NAME...]
 *                        -x leaves out the tests whose name contains NAME
 *                        -l lists the names of the tests chosen, runs none
 *   TFD_TESTS="NAME... -x NAME..."   chooses among those too, the same
 *                        way (make check TESTS=..., tests/select.sh)
 *   tfd-test --fds       print the open descriptors (used by exec tests)
 *   tfd-test --poll FD MS   print "readable" or "idle" after polling FD
 *   tfd-test --read FD   print the count a non-blocking read(2) of FD
 *                        returns, or its errno name
 */
#include "t.h"

#include "tfd.h"

#if T_ASAN
#include <sanitizer/lsan_interface.h>
#endif

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct job {
	pid_t pid;
	struct t_case *c;
	FILE *out;
	int64_t start;
};

static struct t_case *cases;
static size_t ncases;
/* Globals, so that a child's memory checker sees them still reachable. */
static struct t_case **list;
static struct job *jobs;

void t_register(struct t_case *c)
{
	c->next = cases;
	cases = c;
	ncases++;
}

int t_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload") != NULL;
}

void t_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(NULL);
	_exit(T_SKIP);
}

/* The environment's var, which make check sets, or the test skips. */
static const char *given(const char *var, const char *what)
{
	const char *v = getenv(var);

	if (!v || !*v)
		t_skip("%s is not set: no %s (make check sets it)", var, what);
	return v;
}

const char *t_tool(void)
{
	return given("TFD_TOOL", "tfd program to run");
}

const char *t_examples(void)
{
	return given("TFD_EXAMPLES", "examples to run");
}

void t_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: check failed: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

const char *t_str_i(char *buf, long long v)
{
	snprintf(buf, 48, "%lld", v);
	return buf;
}

const char *t_str_u(char *buf, unsigned long long v)
{
	snprintf(buf, 48, "%llu", v);
	return buf;
}

const char *t_str_d(char *buf, double v)
{
	snprintf(buf, 48, "%g", v);
	return buf;
}

const char *t_str_p(char *buf, const void *v)
{
	snprintf(buf, 48, "%p", v);
	return buf;
}

int64_t t_now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return t_ns(&ts);
}

int64_t t_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * SEC + ts->tv_nsec;
}

struct itimerspec t_its(int64_t value, int64_t interval)
{
	struct itimerspec its;

	its.it_value.tv_sec = value / SEC;
	its.it_value.tv_nsec = value % SEC;
	its.it_interval.tv_sec = interval / SEC;
	its.it_interval.tv_nsec = interval % SEC;
	return its;
}

int t_readable(int fd, int timeout_ms)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

int t_timer(clockid_t c, int flags)
{
	return (int)CHECK_OK(tfd_create(c, flags));
}

void t_arm(int fd, int flags, int64_t value, int64_t interval)
{
	struct itimerspec v = t_its(value, interval);

	CHECK_OK(tfd_settime(fd, flags, &v, NULL));
}

uint64_t t_due(int64_t e0, int64_t i, int64_t t)
{
	if (t < e0)
		return 0;
	return i ? 1 + (uint64_t)((t - e0) / i) : 1;
}

int t_wait_asleep(pid_t tid)
{
	char path[64], buf[256];
	int seen = 0, k;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	for (k = 0; k < 5000 && seen < 10; k++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		const char *st;

		if (fd >= 0)
			close(fd);
		if (n <= 0)
			return 0;
		buf[n] = 0;
		st = strrchr(buf, ')');
		seen = st && st[1] == ' ' && st[2] == 'S' ? seen + 1 : 0;
		t_sleep_ns(2 * MS);
	}
	return seen >= 10;
}

int t_threads(void)
{
	char line[256];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	CHECK_NE(f, NULL);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

void t_sleep_ns(int64_t ns)
{
	struct timespec ts = { ns / SEC, ns % SEC };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int t_sh(const char *cmd, char *out, size_t outn, char *err, size_t errn)
{
	char ef[] = "/tmp/tfd-test-err.XXXXXX", *full;
	int efd = mkstemp(ef), st;
	FILE *p, *e;
	size_t n;

	CHECK_GE(efd, 0);
	CHECK_GT(asprintf(&full, "( %s ) 2>%s", cmd, ef), 0);
	p = popen(full, "r");
	CHECK(p);
	n = fread(out, 1, outn - 1, p);
	out[n] = 0;
	while (fread(out + n, 1, 1, p) == 1) /* the rest, thrown away */
		;
	out[n] = 0;
	st = pclose(p);
	free(full);
	e = fdopen(efd, "r");
	CHECK(e);
	n = fread(err, 1, errn - 1, e);
	err[n] = 0;
	fclose(e);
	unlink(ef);
	CHECKF(WIFEXITED(st), "'%s' ended by a signal", cmd);
	return WEXITSTATUS(st);
}

/* The set of open descriptors, as a bitmap of the first 4096. */
static void open_fds(unsigned char *map, size_t n)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	memset(map, 0, n);
	if (!d)
		return;
	while ((e = readdir(d))) {
		long fd = strtol(e->d_name, NULL, 10);

		if (e->d_name[0] != '.' && fd != dirfd(d) && fd >= 0 &&
		    (size_t)fd < n)
			map[fd] = 1;
	}
	closedir(d);
}

static void run_child(struct t_case *c)
{
	static unsigned char before[4096], after[4096];
	size_t i;
	int leaked = 0;

	open_fds(before, sizeof(before));
	alarm((unsigned)c->seconds);
	c->fn();
	alarm(0);
	open_fds(after, sizeof(after));
	for (i = 0; i < sizeof(after); i++) {
		if (after[i] && !before[i]) {
			char path[64], link[256] = "";

			snprintf(path, sizeof(path), "/proc/self/fd/%zu", i);
			if (readlink(path, link, sizeof(link) - 1) < 0)
				strcpy(link, "?");
			fprintf(stderr, "leaked descriptor %zu (%s)\n", i, link);
			leaked = 1;
		}
	}
	fflush(NULL);
#if T_ASAN
	__lsan_do_leak_check(); /* _exit skips it; a leak fails the test */
#endif
	_exit(leaked ? 1 : 0);
}


/* The first line of a test's output, without its newline, into buf. */
static const char *first_line(FILE *f, char *buf, size_t n)
{
	char *nl;

	rewind(f);
	if (!fgets(buf, (int)n, f))
		buf[0] = 0;
	if ((nl = strchr(buf, '\n')))
		*nl = 0;
	return buf;
}

/* 1 passed, 0 failed, -1 skipped. */
static int finish(struct job *j, int status, int verbose)
{
	int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	int skip = WIFEXITED(status) && WEXITSTATUS(status) == T_SKIP;
	double secs = (double)(t_now(CLOCK_MONOTONIC) - j->start) / SEC;
	char buf[4096];
	size_t n;

	if (skip) {
		printf("skip %s: %s\n", j->c->name,
		       first_line(j->out, buf, sizeof(buf)));
		fclose(j->out);
		fflush(stdout);
		return -1;
	}
	printf("%s %s (%.2fs)", ok ? "ok  " : "FAIL", j->c->name, secs);
	if (WIFSIGNALED(status))
		printf(": %s%s", strsignal(WTERMSIG(status)),
		       WTERMSIG(status) == SIGALRM ? " (time limit)" : "");
	printf("\n");
	if (!ok || verbose) {
		rewind(j->out);
		while ((n = fread(buf, 1, sizeof(buf), j->out)) > 0)
			fwrite(buf, 1, n, stdout);
	}
	fclose(j->out);
	fflush(stdout);
	return ok;
}

/* Names given with -x: tests to leave out. */
static const char *excluded[16];
static int nexcluded;

/* TFD_TESTS: words NAME or -x NAME, as tests/select.sh reads them. */
static int env_selected(const char *name)
{
	const char *env = getenv("TFD_TESTS");
	char *words = strdup(env ? env : ""), *w, *save = NULL;
	int any = 0, hit = 0, x = 0, out = 0;

	if (!words)
		return 1;
	for (w = strtok_r(words, " \t\n", &save); w;
	     w = strtok_r(NULL, " \t\n", &save)) {
		if (x) {
			x = 0;
			out |= strstr(name, w) != NULL;
		} else if (!strcmp(w, "-x")) {
			x = 1;
		} else {
			any = 1;
			hit |= strstr(name, w) != NULL;
		}
	}
	free(words);
	return !out && (!any || hit);
}

static int selected(struct t_case *c, int argc, char **argv)
{
	int i;

	if (!env_selected(c->name))
		return 0;
	for (i = 0; i < nexcluded; i++)
		if (strstr(c->name, excluded[i]))
			return 0;
	if (argc == 0)
		return 1;
	for (i = 0; i < argc; i++)
		if (strstr(c->name, argv[i]))
			return 1;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct t_case *const *)a)->name,
	              (*(struct t_case *const *)b)->name);
}

int main(int argc, char **argv)
{
	struct t_case *c;
	int jobs_max = 2, verbose = 0, passed = 0, failed = 0, skipped = 0;
	int listing = 0;
	int running = 0;
	size_t i, n = 0;

	if (argc == 2 && !strcmp(argv[1], "--fds")) {
		unsigned char map[4096];

		open_fds(map, sizeof(map));
		for (i = 0; i < sizeof(map); i++)
			if (map[i])
				printf("%zu\n", i);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--read")) {
		int fd = atoi(argv[2]);
		uint64_t count;

		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		if (read(fd, &count, sizeof(count)) == (ssize_t)sizeof(count))
			printf("%llu\n", (unsigned long long)count);
		else
			printf("%s\n", strerrorname_np(errno));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "--poll")) {
		int fd = atoi(argv[2]);

		puts(t_readable(fd, atoi(argv[3])) ? "readable" : "idle");
		return 0;
	}
	for (argc--, argv++; argc > 0 && argv[0][0] == '-'; argc--, argv++) {
		if (!strcmp(argv[0], "-v"))
			verbose = 1;
		else if (!strcmp(argv[0], "-l"))
			listing = 1;
		else if (!strcmp(argv[0], "-j") && argc > 1)
			jobs_max = atoi((--argc, *++argv));
		else if (!strcmp(argv[0], "-x") && argc > 1 && nexcluded < 16)
			excluded[nexcluded++] = (--argc, *++argv);
		else {
			fprintf(stderr, "usage: tfd-test [-j N] [-v] [-l] "
			        "[-x NAME]... [NAME...]\n");
			return 2;
		}
	}
	if (jobs_max < 1)
		jobs_max = 1;
	list = calloc(ncases, sizeof(*list));
	jobs = calloc((size_t)jobs_max, sizeof(*jobs));
	for (c = cases; c; c = c->next)
		if (selected(c, argc, argv))
			list[n++] = c;
	qsort(list, n, sizeof(*list), by_name);
	if (listing) {
		for (i = 0; i < n; i++)
			puts(list[i]->name);
		free(list);
		free(jobs);
		return 0;
	}
	/* The longest tests first, so they overlap the rest. */
	for (i = 0; i < n; i++) {
		if (list[i]->seconds > 30) {
			struct t_case *t = list[i];

			memmove(list + 1, list, i * sizeof(*list));
			list[0] = t;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < n || running > 0;) {
		int status, k;
		pid_t pid;

		if (i < n && running < jobs_max) {
			struct job *j = NULL;

			for (k = 0; k < jobs_max; k++)
				if (!jobs[k].pid)
					j = &jobs[k];
			j->c = list[i++];
			j->out = tmpfile();
			fcntl(fileno(j->out), F_SETFD, FD_CLOEXEC);
			j->start = t_now(CLOCK_MONOTONIC);
			fflush(NULL);
			j->pid = fork();
			if (j->pid == 0) {
				dup2(fileno(j->out), 1);
				dup2(fileno(j->out), 2);
				fclose(j->out);
				setvbuf(stdout, NULL, _IONBF, 0);
				run_child(j->c);
			}
			running++;
			continue;
		}
		pid = wait(&status);
		for (k = 0; k < jobs_max; k++) {
			if (jobs[k].pid == pid && pid > 0) {
				switch (finish(&jobs[k], status, verbose)) {
				case 1: passed++; break;
				case 0: failed++; break;
				default: skipped++; break;
				}
				jobs[k].pid = 0;
				running--;
			}
		}
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	free(list);
	free(jobs);
	return failed ? 1 : 0;
}
