/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c - tfd run: arm a timer, print one line per read.  See tfd(1).
 */
#define _GNU_SOURCE
#include "cmd.h"
#include "core/time.h" /* TFD_NSEC */
#include "tfd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* "SEC[.FRAC]" into ns; 0 or -1 for anything else (sign, exponent,
 * garbage, more than 9 decimals, more than about 292 years). */
static int parse_time(const char *s, int64_t *ns)
{
	int64_t sec = 0, frac = 0;
	int digits = 0, fd = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (sec > (INT64_MAX / TFD_NSEC - 9) / 10)
			return -1;
		sec = sec * 10 + (*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, fd++) {
			if (fd == 9)
				return -1;
			frac = frac * 10 + (*p - '0');
		}
	}
	if (*p || digits + fd == 0)
		return -1;
	for (; fd < 9; fd++)
		frac *= 10;
	*ns = sec * TFD_NSEC + frac;
	return 0;
}

static int parse_count(const char *s, uint64_t *n)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*n = strtoull(s, &end, 10);
	return (*end || errno || *n == 0) ? -1 : 0;
}

static struct timespec ts_of(int64_t ns)
{
	struct timespec ts = { (time_t)(ns / TFD_NSEC), (long)(ns % TFD_NSEC) };

	return ts;
}

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * TFD_NSEC + ts->tv_nsec;
}

/* On the virtual backend (TFD_BACKEND=virtual, as under tfd exec
 * --backend virtual) nothing else moves this program's clocks: the
 * library is linked in, so the preload's scheduler never sees its reads.
 * The clock is read from the library, and each read moves time to the
 * timer's next expiry first. */
static int virt;

static int64_t now(clockid_t c)
{
	struct timespec ts;

	if (!virt || tfd_virtual_now(c, &ts) != 0)
		clock_gettime(c, &ts);
	return ns_of(&ts);
}

/* Virtual time: move to fd's next expiry (nothing to read before it). */
static void virtual_wait(int fd)
{
	struct itimerspec cur;

	if (virt && tfd_gettime(fd, &cur) == 0 &&
	    (cur.it_value.tv_sec || cur.it_value.tv_nsec))
		tfd_virtual_advance(&cur.it_value);
}

static const struct {
	const char *name;
	clockid_t id;
} clocks[] = {
	{ "monotonic", CLOCK_MONOTONIC },
	{ "realtime", CLOCK_REALTIME },
	{ "boottime", CLOCK_BOOTTIME },
	{ "realtime-alarm", CLOCK_REALTIME_ALARM },
	{ "boottime-alarm", CLOCK_BOOTTIME_ALARM },
};

static int fail(const char *what)
{
	fprintf(stderr, "tfd: %s: %s\n", what, strerror(errno));
	return 1;
}

enum { O_CLOCK, O_ABS, O_API, O_BACKEND };
static const struct tfd_opt opts[] = {
	[O_CLOCK] = { "clock", "CLOCK",
	              "monotonic (default), realtime, boottime,\n"
	              "realtime-alarm or boottime-alarm" },
	[O_ABS] = { "abs", NULL, "arm with TFD_TIMER_ABSTIME at now + VALUE" },
	[O_API] = { "api", "API",
	            "linux: tfd_create/tfd_settime/tfd_gettime/tfd_read\n"
	            "(default); revised: the 2007 timerfd() call and\n"
	            "plain read()" },
	[O_BACKEND] = { "backend", "NAME", tfd_backend_help },
	{ NULL, NULL, NULL },
};

static int tfd_cmd_run(int argc, char **argv);

const struct tfd_cmd tfd_run_cmd = {
	.name = "run",
	.operands = "VALUE [INTERVAL [COUNT]]",
	.summary = "arm a timer and print one line per read",
	.text = "Arms a timer file descriptor for VALUE seconds, repeating every\n"
	        "INTERVAL seconds (0: one-shot), and reads it until COUNT\n"
	        "expirations (default 1) have been counted, printing one line\n"
	        "per read: elapsed seconds, the count read, the total, and the\n"
	        "time remaining.  Times are decimal seconds with up to 9\n"
	        "decimals, e.g. 0.5 or 2.25.",
	.opts = opts,
	.fn = tfd_cmd_run,
};

/* What the command line asks for. */
struct run {
	clockid_t clock;
	int absolute, revised;
	const char *backend;
	int64_t value, interval;
	uint64_t count;
};

/* The options into r: -1, or the exit status. */
static int run_options(struct tfd_args *a, struct run *r)
{
	size_t c;
	int o, nclock;

	while ((o = tfd_opt_next(a)) >= 0) {
		switch (o) {
		case O_ABS:
			r->absolute = 1;
			break;
		case O_API:
			if (!strcmp(a->val, "revised"))
				r->revised = 1;
			else if (!strcmp(a->val, "linux"))
				r->revised = 0;
			else
				return tfd_cmd_bad("unknown API '%s'", a->val);
			break;
		case O_CLOCK:
			for (c = 0, nclock = -1;
			     c < sizeof(clocks) / sizeof(*clocks); c++)
				if (!strcmp(a->val, clocks[c].name))
					nclock = (int)c;
			if (nclock < 0)
				return tfd_cmd_bad("unknown clock '%s'", a->val);
			r->clock = clocks[nclock].id;
			break;
		case O_BACKEND:
			r->backend = a->val;
			break;
		}
	}
	return o != TFD_OPT_END ? tfd_opt_status(o) : -1;
}

/* VALUE [INTERVAL [COUNT]] into r: -1, or the exit status. */
static int run_operands(int argc, char **argv, struct run *r)
{
	if (argc < 1)
		return tfd_cmd_bad("%s", "missing VALUE");
	if (argc > 3)
		return tfd_cmd_bad("unexpected argument '%s'", argv[3]);
	if (parse_time(argv[0], &r->value))
		return tfd_cmd_bad("invalid VALUE '%s': expected seconds such as 0.5",
		           argv[0]);
	if (argc > 1 && parse_time(argv[1], &r->interval))
		return tfd_cmd_bad("invalid INTERVAL '%s': expected seconds such as 0.5",
		           argv[1]);
	if (argc > 2 && parse_count(argv[2], &r->count))
		return tfd_cmd_bad("invalid COUNT '%s': expected a positive integer",
		           argv[2]);
	if (r->value == 0)
		return tfd_cmd_bad("%s", "VALUE must be more than 0 (0 disarms)");
	if (r->count > 1 && r->interval == 0)
		return tfd_cmd_bad("%s", "a COUNT above 1 needs an INTERVAL");
	return -1;
}

/* The backend of --backend, else of TFD_BACKEND: -1, or the exit status.
 * The library's own list judges a name, which would else make every
 * create fail (EINVAL). */
static int run_backend(const char *backend)
{
	const char *env = getenv("TFD_BACKEND");

	if (!backend && env && *env)
		backend = env;
	else
		env = NULL;
	if (backend && tfd_use_backend(backend) < 0) {
		if (errno != EINVAL)
			return fail("tfd_use_backend");
		return tfd_cmd_bad(env ? "TFD_BACKEND='%s' names no backend "
		                         "(engine, virtual or kernel)"
		                       : "unknown backend '%s'", backend);
	}
	return -1;
}

/* The timer armed as r asks, into *fd: -1, or the exit status. */
static int run_arm(const struct run *r, int *fd)
{
	struct itimerspec its;
	int64_t value = r->value;
	int flags = r->absolute ? TFD_TIMER_ABSTIME : 0;

	if (r->absolute) /* now + VALUE, saturating like the library */
		value = value > INT64_MAX - now(r->clock)
		                ? INT64_MAX : now(r->clock) + value;
	its.it_value = ts_of(value);
	its.it_interval = ts_of(r->interval);
	if (r->revised) {
		*fd = timerfd(-1, r->clock, flags, &its, NULL);
		return *fd < 0 ? fail("timerfd") : -1;
	}
	*fd = tfd_create(r->clock, 0);
	if (*fd < 0)
		return fail("tfd_create");
	if (tfd_settime(*fd, flags, &its, NULL) < 0)
		return fail("tfd_settime");
	return -1;
}

/* A line per read of fd until COUNT expirations, the time from start. */
static int run_reads(const struct run *r, int fd, int64_t start)
{
	struct itimerspec cur;
	uint64_t total = 0, n;

	printf("%10s %8s %8s %12s\n", "elapsed", "read", "total", "remaining");
	fflush(stdout);
	while (total < r->count) {
		ssize_t got;
		int64_t el;

		virtual_wait(fd);
		got = r->revised ? read(fd, &n, sizeof(n))
		                 : tfd_read(fd, &n, sizeof(n));
		el = now(CLOCK_MONOTONIC) - start;

		if (got != (ssize_t)sizeof(n))
			return fail("read");
		if ((r->revised ? timerfd(fd, -1, 0, NULL, &cur)
		                : tfd_gettime(fd, &cur)) < 0)
			return fail(r->revised ? "timerfd" : "tfd_gettime");
		total += n;
		printf("%3lld.%06lld %8" PRIu64 " %8" PRIu64 " %5lld.%06lld\n",
		       el / TFD_NSEC, el % TFD_NSEC / 1000, n, total,
		       ns_of(&cur.it_value) / TFD_NSEC,
		       ns_of(&cur.it_value) % TFD_NSEC / 1000);
		fflush(stdout);
	}
	if (tfd_close(fd) < 0)
		return fail("tfd_close");
	return 0;
}

static int tfd_cmd_run(int argc, char **argv)
{
	struct run r = { CLOCK_MONOTONIC, 0, 0, NULL, 0, 0, 1 };
	struct tfd_args a;
	int64_t start;
	int st, fd;

	tfd_args_init(&a, &tfd_run_cmd, argc, argv);
	if ((st = run_options(&a, &r)) >= 0 ||
	    (st = run_operands(a.argc, a.argv, &r)) >= 0 ||
	    (st = run_backend(r.backend)) >= 0)
		return st;
	virt = !strcmp(tfd_backend_name(), "virtual");
	start = now(CLOCK_MONOTONIC);
	if ((st = run_arm(&r, &fd)) >= 0)
		return st;
	return run_reads(&r, fd, start);
}
