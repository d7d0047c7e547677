/* SPDX-License-Identifier: MIT */
/*
 * trace.c - TFD_TRACE: one line per timer operation, "TIME PID FD
 * CALL(ARGS) = RESULT" (tfd-preload(7), TRACE; read by tfd trace).
 *
 * The name is copied when the library is loaded: a program may rewrite
 * its environment block later (setproctitle).  A secure-execution process
 * (AT_SECURE: set-user-ID, set-group-ID, file capabilities) ignores it, as
 * it ignores every TFD_* variable: a user could otherwise have a
 * privileged program append to a file of the user's choosing.  The file
 * is opened with O_NOFOLLOW and O_APPEND, and created only when the
 * process runs as the user it acts for (real and effective ids equal).
 *
 * A process's first line comes after "TIME PID - exec(PROG) = 0", the
 * program it runs (its argv[0] when the library was loaded): tfd trace
 * names the process by it, not only the one tfd exec started.
 */
#include "preload/preload.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *tfd_trace_path;
static char path[PATH_MAX];
static int trace_fd = -1; /* 1 or 2 for /dev/stdout, /dev/stderr */
static int may_create;
static char prog[256]; /* argv[0] as text, for the exec line */
static int named;      /* the pid whose exec line was written */

void tfd_trace_init(void)
{
	const char *p = secure_getenv("TFD_TRACE");
	size_t i;

	if (!p || !*p || strlen(p) >= sizeof(path))
		return;
	memcpy(path, p, strlen(p) + 1);
	if (!strcmp(path, "/dev/stderr") || !strcmp(path, "/dev/fd/2"))
		trace_fd = 2;
	else if (!strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/fd/1"))
		trace_fd = 1;
	may_create = getuid() == geteuid() && getgid() == getegid();
	p = program_invocation_name;
	for (i = 0; p && p[i] && i < sizeof(prog) - 1; i++)
		prog[i] = p[i] < 0x20 || p[i] > 0x7e ? '?' : p[i];
	prog[i] = 0;
	tfd_trace_path = path;
}

/* The file is opened for each line: a program that closes descriptors it
 * does not know (closefrom, daemons) never closes or reuses ours. */
static void trace_write(const char *line, size_t len)
{
	int fd = trace_fd;

	if (fd < 0)
		fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
		                        (may_create ? O_CREAT : 0),
		          0644);
	if (fd < 0)
		return;
	if (R(write)(fd, line, len) < 0)
		errno = 0;
	if (fd != trace_fd)
		R(close)(fd);
}

/* The time of the line being made: read by tfd_next_text() just before
 * it asks for the time left, so that the line's time plus "[next]" is
 * when the timer is due (never later: "early" reads in tfd trace), or
 * else by tfd_trace() itself. */
static __thread struct timespec stamp;
static __thread int stamped;

/* The program's CLOCK_MONOTONIC: the virtual one on virtual. */
static struct timespec trace_now(void)
{
	struct timespec now;
	int m = tfd_enter();

	if (tfd_virt)
		now = tfd_ns_to_ts(tfd_dom_clock_now(CLOCK_MONOTONIC));
	else
		R(clock_gettime)(CLOCK_MONOTONIC, &now);
	tfd_leave(m);
	return now;
}

void tfd_trace(int fd, long ret, int err, const char *fmt, ...)
{
	char line[512];
	struct timespec now;
	va_list ap;
	int saved = errno, n, m, pid;

	if (!tfd_trace_path)
		return;
	now = stamped ? stamp : trace_now();
	stamped = 0;
	pid = (int)getpid();
	if (prog[0] &&
	    __atomic_exchange_n(&named, pid, __ATOMIC_RELAXED) != pid) {
		n = snprintf(line, sizeof(line),
		             "%lld.%09ld %d - exec(%s) = 0\n",
		             (long long)now.tv_sec, now.tv_nsec, pid, prog);
		trace_write(line, (size_t)n);
	}
	n = snprintf(line, sizeof(line), "%lld.%09ld %d ", (long long)now.tv_sec,
	             now.tv_nsec, pid);
	n += fd >= 0 ? snprintf(line + n, sizeof(line) - (size_t)n, "%d ", fd)
	             : snprintf(line + n, sizeof(line) - (size_t)n, "- ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	if (ret < 0)
		m = snprintf(line + n, sizeof(line) - (size_t)n, " = -1 %s\n",
		             strerrorname_np(err) ? strerrorname_np(err) : "?");
	else
		m = snprintf(line + n, sizeof(line) - (size_t)n, " = %ld\n", ret);
	n += m;
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	trace_write(line, (size_t)n);
	errno = saved;
}

const char *tfd_clock_name(int c)
{
	switch (c) {
	case CLOCK_REALTIME: return "CLOCK_REALTIME";
	case CLOCK_MONOTONIC: return "CLOCK_MONOTONIC";
	case CLOCK_BOOTTIME: return "CLOCK_BOOTTIME";
	case CLOCK_REALTIME_ALARM: return "CLOCK_REALTIME_ALARM";
	case CLOCK_BOOTTIME_ALARM: return "CLOCK_BOOTTIME_ALARM";
	default: return "?";
	}
}

/* Flag names joined by '|', "0" for none; unknown bits in hex. */
const char *tfd_flag_names(char *buf, size_t n, int flags, int settime)
{
	static const struct {
		int bit;
		const char *c, *s;
	} names[] = {
		{ TFD_NONBLOCK, "TFD_NONBLOCK", NULL },
		{ TFD_CLOEXEC, "TFD_CLOEXEC", NULL },
		{ TFD_TIMER_ABSTIME, NULL, "TFD_TIMER_ABSTIME" },
		{ TFD_TIMER_CANCEL_ON_SET, NULL, "TFD_TIMER_CANCEL_ON_SET" },
	};
	size_t i, len = 0;

	buf[0] = 0;
	for (i = 0; i < sizeof(names) / sizeof(*names); i++) {
		const char *name = settime ? names[i].s : names[i].c;

		if (name && (flags & names[i].bit)) {
			len += (size_t)snprintf(buf + len, n - len, "%s%s",
			                        len ? "|" : "", name);
			flags &= ~names[i].bit;
		}
	}
	if (flags || !len)
		snprintf(buf + len, n - len, "%s%#x", len ? "|" : "", flags);
	return buf;
}

/* A time in seconds, "S.NNNNNNNNN"; one that is not a valid time (a
 * negative field, tv_nsec out of range) as it is: "{SEC, NSEC}". */
static const char *ts_text(char *buf, size_t n, const struct timespec *t)
{
	if (tfd_ts_valid(t))
		snprintf(buf, n, "%lld.%09ld", (long long)t->tv_sec, t->tv_nsec);
	else
		snprintf(buf, n, "{%lld, %ld}", (long long)t->tv_sec, t->tv_nsec);
	return buf;
}

/* "{VALUE, INTERVAL}" in seconds, or "NULL". */
const char *tfd_its_text(char *buf, size_t n, const struct itimerspec *s)
{
	char v[48], i[48];

	if (!s)
		return "NULL";
	snprintf(buf, n, "{%s, %s}", ts_text(v, sizeof(v), &s->it_value),
	         ts_text(i, sizeof(i), &s->it_interval));
	return buf;
}

/* After a successful timerfd_settime: " [next R]", R the time to the
 * first expiry as a query gives it at once (0: due already, or disarmed),
 * so that a reader of the trace knows the deadline armed on any clock. */
const char *tfd_next_text(char *buf, size_t n, int fd)
{
	struct itimerspec cur;
	char v[48];
	int was, r;

	buf[0] = 0;
	if (!tfd_trace_path)
		return buf;
	stamp = trace_now();
	stamped = 1;
	was = tfd_enter();
	r = tfd_api_gettime(fd, &cur);
	tfd_leave(was);
	if (r == 0)
		snprintf(buf, n, " [next %s]", ts_text(v, sizeof(v), &cur.it_value));
	return buf;
}
