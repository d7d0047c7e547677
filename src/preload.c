/* SPDX-License-Identifier: MIT */
/*
 * preload.c - libtfd-preload.so: glibc's timerfd_create(2),
 * timerfd_settime(2) and timerfd_gettime(2) on the selected tfd backend, for
 * programs that cannot be changed (LD_PRELOAD, or `tfd exec`).  See
 * tfd-preload(7).
 *
 * A table indexed by descriptor says which numbers name a timer this
 * library created (or a duplicate of one).  Calls on those are routed to the
 * library: read() to tfd_read() (exact counts, ECANCELED), write() fails
 * EINVAL, close() to tfd_close(), dup*() tell the backend the duplicate
 * names the same timer, and poll/select/epoll never report them writable.
 * Every other call costs one look at the table and goes straight to the
 * next definition (libc's), resolved once with dlsym(RTLD_NEXT).
 *
 * The library itself calls read, write, close, fcntl, timerfd_* and
 * pthread_create, and those land here too.  A thread-local flag, set while
 * a call of the library runs and for good in the threads it starts, sends
 * them straight through.  The library's private descriptors are never put
 * in the table.
 *
 * With the virtual backend, time moves when the program waits: a poll,
 * select, epoll wait or blocking read that would block moves the virtual
 * clocks to the next deadline (the idea of Go's synctest and tokio's
 * time::pause), sleeps move them by their length, and clock_gettime(),
 * gettimeofday() and time() read them.
 */
#undef _FORTIFY_SOURCE /* we define read() and poll() ourselves */
#define _GNU_SOURCE
#include "tfd.h"

#include "backend.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define unlikely(x) __builtin_expect(!!(x), 0)
#define NSEC 1000000000LL

#ifndef TFD_IOC_SET_TICKS
#define TFD_IOC_SET_TICKS _IOW('T', 0, uint64_t)
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* glibc's fortified entry points (declared only under _FORTIFY_SOURCE). */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                const sigset_t *mask, size_t fdslen);

/* ---- the next definitions (libc's) ---- */

static struct {
	int (*timerfd_create)(int, int);
	int (*timerfd_settime)(int, int, const struct itimerspec *,
	                       struct itimerspec *);
	int (*timerfd_gettime)(int, struct itimerspec *);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*writev)(int, const struct iovec *, int);
	int (*close)(int);
	int (*close_range)(unsigned, unsigned, int);
	void (*closefrom)(int);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*fcntl)(int, int, ...);
	int (*fcntl64)(int, int, ...);
	int (*ioctl)(int, unsigned long, ...);
	int (*epoll_ctl)(int, int, int, struct epoll_event *);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *,
	             const sigset_t *);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *,
	               const struct timespec *, const sigset_t *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int,
	                   const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int,
	                    const struct timespec *, const sigset_t *);
	int (*nanosleep)(const struct timespec *, struct timespec *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *,
	                       struct timespec *);
	unsigned (*sleep)(unsigned);
	int (*usleep)(useconds_t);
	int (*clock_gettime)(clockid_t, struct timespec *);
	int (*gettimeofday)(struct timeval *, void *);
	time_t (*time)(time_t *);
	int (*pthread_create)(pthread_t *, const pthread_attr_t *,
	                      void *(*)(void *), void *);
} real;

#define LOAD(f) (real.f = (__typeof__(real.f))dlsym(RTLD_NEXT, #f))

static void load_io(void)
{
	LOAD(timerfd_create);
	LOAD(timerfd_settime);
	LOAD(timerfd_gettime);
	LOAD(read);
	LOAD(readv);
	LOAD(write);
	LOAD(writev);
	LOAD(close);
	LOAD(close_range);
	LOAD(closefrom);
	LOAD(dup);
	LOAD(dup2);
	LOAD(dup3);
	LOAD(fcntl);
	LOAD(fcntl64);
	LOAD(ioctl);
	LOAD(epoll_ctl);
}

static void load_waits(void)
{
	LOAD(poll);
	LOAD(ppoll);
	LOAD(select);
	LOAD(pselect);
	LOAD(epoll_wait);
	LOAD(epoll_pwait);
	LOAD(epoll_pwait2);
	LOAD(nanosleep);
	LOAD(clock_nanosleep);
	LOAD(sleep);
	LOAD(usleep);
	LOAD(clock_gettime);
	LOAD(gettimeofday);
	LOAD(time);
	LOAD(pthread_create);
}

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load_all(void)
{
	load_io();
	load_waits();
}

/* A function libc may lack (closefrom, close_range, epoll_pwait2): 1 if
 * it was found. */
#define loaded(p) (pthread_once(&load_once, load_all), (p) != NULL)

/* Every wrapper names its next definition through R(): resolved by the
 * constructor, or here if another library's constructor calls first. */
#define R(f) (*(unlikely(!real.f) ? (pthread_once(&load_once, load_all), \
                                       real.f)                           \
                                    : real.f))

/* ---- state ---- */

/* Timers by descriptor: 1 if the number names a timer made here.  Numbers
 * from MARK_MAX up (only with fs.nr_open raised) are never timers. */
#define MARK_MAX (1 << 20)
static unsigned char mark[MARK_MAX];
static int nmarked;  /* marked numbers (for the waits' fast path) */
static int hiwater;  /* no mark at or above */
static int engine;   /* the backend keeps timers itself (not "kernel") */
static int virt;     /* the backend is "virtual" */

/* Set while the library runs on this thread (and for good in its own
 * threads): its calls go straight through. */
static __thread int inside __attribute__((tls_model("initial-exec")));
/* dup2() over a timer: the close() the library makes of that number is
 * not done (dup2 replaces it atomically). */
static __thread int swallow __attribute__((tls_model("initial-exec"))) = -1;

static int marked(int fd)
{
	return (unsigned)fd < MARK_MAX &&
	       __atomic_load_n(&mark[fd], __ATOMIC_RELAXED);
}

static void set_mark(int fd)
{
	int h = __atomic_load_n(&hiwater, __ATOMIC_RELAXED);

	if (__atomic_exchange_n(&mark[fd], 1, __ATOMIC_RELAXED))
		return;
	__atomic_add_fetch(&nmarked, 1, __ATOMIC_RELAXED);
	while (fd >= h && !__atomic_compare_exchange_n(
	                          &hiwater, &h, fd + 1, 0, __ATOMIC_RELAXED,
	                          __ATOMIC_RELAXED))
		;
}

static void clear_mark(int fd)
{
	if (marked(fd) && __atomic_exchange_n(&mark[fd], 0, __ATOMIC_RELAXED))
		__atomic_sub_fetch(&nmarked, 1, __ATOMIC_RELAXED);
}

static int enter(void)
{
	int was = inside;

	inside = 1;
	return was;
}

static void leave(int was)
{
	inside = was;
}

/* Waits must look at the descriptors (virtual time, or writability to
 * hide); else they go straight through. */
static int hook_waits(void)
{
	return virt || (engine && __atomic_load_n(&nmarked, __ATOMIC_RELAXED));
}

/* ---- trace: one line per timer operation (TFD_TRACE) ---- */

static const char *trace_path;
static int trace_fd = -1; /* 1 or 2 for /dev/stdout, /dev/stderr */

static void trace_open(void)
{
	const char *p = getenv("TFD_TRACE");

	if (!p || !*p)
		return;
	if (!strcmp(p, "/dev/stderr") || !strcmp(p, "/dev/fd/2"))
		trace_fd = 2;
	else if (!strcmp(p, "/dev/stdout") || !strcmp(p, "/dev/fd/1"))
		trace_fd = 1;
	trace_path = p;
}

/* The file is opened for each line: a program that closes descriptors it
 * does not know (closefrom, daemons) never closes or reuses ours. */
static void trace_write(const char *line, size_t len)
{
	int fd = trace_fd;

	if (fd < 0)
		fd = open(trace_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
		          0644);
	if (fd < 0)
		return;
	if (R(write)(fd, line, len) < 0)
		errno = 0;
	if (fd != trace_fd)
		R(close)(fd);
}

/* "TIME PID FD CALL(ARGS) = RESULT": fmt gives CALL(ARGS). */
static void trace(int fd, long ret, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void trace(int fd, long ret, int err, const char *fmt, ...)
{
	char line[512];
	struct timespec now;
	va_list ap;
	int saved = errno, n, m;

	if (!trace_path)
		return;
	/* The program's CLOCK_MONOTONIC: the virtual one on virtual. */
	m = enter();
	if (!virt || tfd_virtual_now(CLOCK_MONOTONIC, &now) != 0)
		R(clock_gettime)(CLOCK_MONOTONIC, &now);
	leave(m);
	n = snprintf(line, sizeof(line), "%lld.%09ld %d ", (long long)now.tv_sec,
	             now.tv_nsec, (int)getpid());
	n += fd >= 0 ? snprintf(line + n, sizeof(line) - (size_t)n, "%d ", fd)
	             : snprintf(line + n, sizeof(line) - (size_t)n, "- ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
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

static const char *clock_name(int c)
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
static const char *flag_names(char *buf, size_t n, int flags, int settime)
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
	if (t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < NSEC)
		snprintf(buf, n, "%lld.%09ld", (long long)t->tv_sec, t->tv_nsec);
	else
		snprintf(buf, n, "{%lld, %ld}", (long long)t->tv_sec, t->tv_nsec);
	return buf;
}

/* "{VALUE, INTERVAL}" in seconds, or "NULL". */
static const char *its_text(char *buf, size_t n, const struct itimerspec *s)
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
static const char *next_text(char *buf, size_t n, int fd)
{
	struct itimerspec cur;
	char v[48];
	int was, r;

	buf[0] = 0;
	if (!trace_path)
		return buf;
	was = enter();
	r = tfd_gettime(fd, &cur);
	leave(was);
	if (r == 0)
		snprintf(buf, n, " [next %s]", ts_text(v, sizeof(v), &cur.it_value));
	return buf;
}

/* ---- timers and their numbers ---- */

/* A number tfd_create() returned: mark it, or give up a number the table
 * cannot hold (EMFILE). */
static int adopt(int fd)
{
	int was;

	if (fd < MARK_MAX) {
		set_mark(fd);
		return fd;
	}
	was = enter();
	tfd_close(fd);
	leave(was);
	errno = EMFILE;
	return -1;
}

/* The backend's answer for fd: 0 if it is a timer. */
static int backend_check(int fd)
{
	int was = enter(), e = tfd_current_backend()->check(fd);

	leave(was);
	return e;
}

/* A marked number that the backend does not know was closed by a call we
 * do not see (fclose() of fdopen(), a raw close system call): forget it.
 * Returns 1 if fd still names a timer. */
static int still_timer(int fd)
{
	if (backend_check(fd) == 0)
		return 1;
	clear_mark(fd);
	return 0;
}

/* newfd was just made a duplicate of the timer oldfd: it names the same
 * timer.  0, or -1 with errno set and newfd closed. */
static int share(int oldfd, int newfd)
{
	int was, e;

	if (newfd >= MARK_MAX) {
		R(close)(newfd);
		errno = EMFILE;
		return -1;
	}
	was = enter();
	e = tfd_current_backend()->dup(oldfd, newfd);
	leave(was);
	if (e == 0) {
		set_mark(newfd);
	} else if (e == EBADF || e == EINVAL) {
		clear_mark(oldfd); /* stale: newfd is a plain duplicate */
	} else {
		R(close)(newfd);
		errno = e;
		return -1;
	}
	return 0;
}

/* fd stops naming its timer without being closed (dup2 over it): the
 * library releases its part; the close it makes is not done. */
static void release_number(int fd)
{
	int was = enter();

	swallow = fd; /* close() sees the mark still set, and this */
	tfd_current_backend()->close(fd);
	swallow = -1;
	leave(was);
	clear_mark(fd);
}

/* A dup of a marked oldfd returned newfd (or failed); call is the text
 * of the call, "%d" for oldfd, for the trace. */
static int dup_result(int oldfd, int newfd, const char *call, int arg)
{
	int e;

	if (newfd >= 0 && share(oldfd, newfd) < 0)
		newfd = -1;
	e = errno;
	trace(oldfd, newfd, e, call, oldfd, arg);
	errno = e;
	return newfd;
}

/* ---- the virtual clock ---- */

static int64_t ts_ns(const struct timespec *ts)
{
	if (ts->tv_sec >= INT64_MAX / NSEC)
		return INT64_MAX;
	return (int64_t)ts->tv_sec * NSEC + ts->tv_nsec;
}

static int64_t vnow(clockid_t c)
{
	struct timespec ts = { 0, 0 };
	int was = enter();

	tfd_virtual_now(c, &ts);
	leave(was);
	return ts_ns(&ts);
}

/* Threads in a virtual sleep: when each wakes, on the virtual
 * CLOCK_MONOTONIC (0: a free slot).  A wait in another thread moves time
 * no further than the first of them, as to a timer's expiry. */
#define NSLEEPERS 64
static pthread_mutex_t vlock = PTHREAD_MUTEX_INITIALIZER;
static int64_t sleepers[NSLEEPERS];

static int sleeper_add(int64_t at)
{
	int i;

	pthread_mutex_lock(&vlock);
	for (i = 0; i < NSLEEPERS && sleepers[i]; i++)
		;
	if (i < NSLEEPERS)
		sleepers[i] = at;
	pthread_mutex_unlock(&vlock);
	return i < NSLEEPERS ? i : -1;
}

static void sleeper_remove(int i)
{
	pthread_mutex_lock(&vlock);
	if (i >= 0)
		sleepers[i] = 0;
	pthread_mutex_unlock(&vlock);
}

/* 1 if a sleeper other than slot "except" is due at now: it is about to
 * run. */
static int sleeper_due(int except, int64_t now)
{
	int i, due = 0;

	pthread_mutex_lock(&vlock);
	for (i = 0; i < NSLEEPERS && !due; i++)
		due = i != except && sleepers[i] && sleepers[i] <= now;
	pthread_mutex_unlock(&vlock);
	return due;
}

/* Time from now to the first sleeper's wake-up, or -1. */
static int64_t sleepers_next(int64_t now)
{
	int64_t best = -1;
	int i;

	pthread_mutex_lock(&vlock);
	for (i = 0; i < NSLEEPERS; i++)
		if (sleepers[i] > now && (best < 0 || sleepers[i] - now < best))
			best = sleepers[i] - now;
	pthread_mutex_unlock(&vlock);
	return best;
}

static int fd_readable(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return R(poll)(&p, 1, 0) == 1;
}

/* Time to the earliest expiry that would make a timer readable, or to
 * the first sleeper's wake-up, or -1 if there is none.  A timer readable
 * already is left out: its next expiries only add to its count, so a wait
 * never moves time more than once per timer before it blocks for real. */
static int64_t next_deadline(void)
{
	int64_t best = sleepers_next(vnow(CLOCK_MONOTONIC));
	int fd, h = __atomic_load_n(&hiwater, __ATOMIC_RELAXED), was;

	was = enter();
	for (fd = 0; fd < h; fd++) {
		struct itimerspec cur;
		int64_t ns;

		if (!marked(fd) || tfd_gettime(fd, &cur) < 0 || fd_readable(fd))
			continue;
		ns = ts_ns(&cur.it_value);
		if (ns > 0 && (best < 0 || ns < best))
			best = ns;
	}
	leave(was);
	return best;
}

/* The program has started threads of its own. */
static int threads_started;

/* The state letter of thread tid of this process (R running, S, D
 * blocked...), or 0 if it is gone. */
static char thread_state(const char *tid)
{
	char path[300], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%s/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = R(read)(fd, buf, sizeof(buf) - 1);
	R(close)(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')'); /* after the name, which may hold anything */
	return p && p[1] == ' ' ? p[2] : 0;
}

/* 1 if some other thread of the process is not blocked in a system call
 * (state S) nor stopped (T, t): running, or in a short uninterruptible
 * wait (D, a page-in). */
static int others_running(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char self[32];
	int running = 0;

	if (!d)
		return 0;
	snprintf(self, sizeof(self), "%d", (int)gettid());
	while (!running && (e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, self))
			running = !strchr("STt", thread_state(e->d_name));
	closedir(d);
	return running;
}

/*
 * As Go's synctest: time moves only once every other thread is blocked,
 * so that a thread about to wait (for a signal, a pipe, a timer) gets
 * there before time moves past what it waits for.  Blocked means so at
 * three looks 100 us apart: a thread that waits a moment for a lock is not
 * blocked (synctest's "durably blocked"), and a sleeper whose time has
 * come is not blocked either.  Gives up after SETTLE_MAX looks, 200 ms (a
 * thread that never blocks).  self is the caller's sleeper slot (-1 if
 * none), which does not count; with until_due, the caller stops looking
 * when its own time comes.  Returns 1 if some other thread was seen
 * running.
 */
#define SETTLE_MAX 2000 /* looks */

static int settle(int self, int until_due)
{
	struct timespec ts = { 0, 100000 };
	int i, quiet = 0, ran = 0;
	int64_t now;

	if (!__atomic_load_n(&threads_started, __ATOMIC_RELAXED))
		return 0;
	for (i = 0; i < SETTLE_MAX && quiet < 3; i++) {
		now = vnow(CLOCK_MONOTONIC);
		if (until_due && self >= 0 && sleepers[self] <= now)
			break; /* our own time came */
		if (sleeper_due(self, now) || others_running()) {
			quiet = 0;
			ran = 1;
		} else {
			quiet++;
		}
		if (quiet < 3)
			R(nanosleep)(&ts, NULL);
	}
	return ran;
}

/* Move the virtual clocks forward to "to" on CLOCK_MONOTONIC, unless
 * another thread has moved them there already: every expiration crossed
 * is delivered before this returns. */
static void advance_to(int64_t to)
{
	struct timespec ts;
	int64_t ns;
	int was, r = 0;

	pthread_mutex_lock(&vlock);
	ns = to - vnow(CLOCK_MONOTONIC);
	if (ns > 0) {
		ts.tv_sec = (time_t)(ns / NSEC);
		ts.tv_nsec = (long)(ns % NSEC);
		was = enter();
		r = tfd_virtual_advance(&ts);
		leave(was);
	}
	pthread_mutex_unlock(&vlock);
	if (ns > 0)
		trace(-1, r, errno, "virtual-advance(+%lld.%09ld)",
		      (long long)ts.tv_sec, ts.tv_nsec);
}

#define VWAIT_BLOCK INT_MIN

/*
 * A wait of at most timeout_ns (-1: no limit) on the virtual clock.  look()
 * tries without blocking: > 0 ready, < 0 failed, 0 nothing.  While nothing
 * is ready, time moves to the next expiry that makes a timer readable, or
 * to the end of the wait.  Returns look()'s result, 0 when the time is up,
 * or VWAIT_BLOCK when no timer would become readable and the wait has no
 * limit: then only something else (another thread, a signal, another
 * process) can end it, and the caller waits for real.
 */
static int vwait(int64_t timeout_ns, int (*look)(void *), void *ctx)
{
	int64_t end = -1, now, next, step;
	int r, settled = 0;

	if (timeout_ns >= 0) {
		now = vnow(CLOCK_MONOTONIC);
		end = timeout_ns > INT64_MAX - now ? INT64_MAX : now + timeout_ns;
	}
	for (;;) {
		r = look(ctx);
		if (r != 0)
			return r;
		now = vnow(CLOCK_MONOTONIC);
		if (end >= 0 && now >= end)
			return 0;
		next = next_deadline();
		if (next < 0 && end < 0)
			return VWAIT_BLOCK;
		if (!settled && settle(-1, 0)) {
			settled = 1; /* the others ran: look again, once */
			continue;
		}
		settled = 0;
		step = next;
		if (end >= 0 && (next < 0 || next > end - now))
			step = end - now;
		advance_to(now + step);
	}
}

static int64_t ms_ns(int ms)
{
	return ms < 0 ? -1 : (int64_t)ms * 1000000;
}

static int64_t tsp_ns(const struct timespec *ts)
{
	return ts ? ts_ns(ts) : -1;
}

/* The base of a clock the virtual backend keeps, or -1. */
static clockid_t virtual_base(clockid_t c)
{
	switch (c) {
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
		return CLOCK_REALTIME;
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_MONOTONIC_COARSE:
		return CLOCK_MONOTONIC;
	case CLOCK_BOOTTIME:
		return CLOCK_BOOTTIME;
	default:
		return -1;
	}
}

/* ---- timerfd_create, timerfd_settime, timerfd_gettime ---- */

EXPORT int timerfd_create(int clockid, int flags)
{
	char f[96];
	int was, fd, e;

	if (inside)
		return R(timerfd_create)(clockid, flags);
	was = enter();
	fd = tfd_create(clockid, flags);
	leave(was);
	if (fd >= 0)
		fd = adopt(fd);
	e = errno;
	trace(fd, fd, e, "timerfd_create(%s, %s)", clock_name(clockid),
	      flag_names(f, sizeof(f), flags, 0));
	errno = e;
	return fd;
}

EXPORT int timerfd_settime(int fd, int flags, const struct itimerspec *nv,
                           struct itimerspec *old)
{
	char f[96], v[96], o[96], x[64] = "";
	int was, r, e;

	if (inside || !marked(fd))
		return R(timerfd_settime)(fd, flags, nv, old);
	was = enter();
	r = tfd_settime(fd, flags, nv, old);
	leave(was);
	e = errno;
	trace(fd, r, e, "timerfd_settime(%d, %s, %s, %s)%s", fd,
	      flag_names(f, sizeof(f), flags, 1), its_text(v, sizeof(v), nv),
	      r == 0 ? its_text(o, sizeof(o), old) : old ? "old" : "NULL",
	      r == 0 ? next_text(x, sizeof(x), fd) : "");
	errno = e;
	return r;
}

EXPORT int timerfd_gettime(int fd, struct itimerspec *cur)
{
	char v[96];
	int was, r, e;

	if (inside || !marked(fd))
		return R(timerfd_gettime)(fd, cur);
	was = enter();
	r = tfd_gettime(fd, cur);
	leave(was);
	e = errno;
	trace(fd, r, e, "timerfd_gettime(%d, %s)", fd,
	      r == 0 ? its_text(v, sizeof(v), cur) : cur ? "cur" : "NULL");
	errno = e;
	return r;
}

/* ---- read, write ---- */

static int look_readable(void *ctx)
{
	return fd_readable(*(int *)ctx);
}

/* Virtual time: a blocking read of a timer with nothing to read moves
 * time until it has something (or no timer is armed). */
static void virtual_read_wait(int fd)
{
	int fl = R(fcntl)(fd, F_GETFL);

	if (fl >= 0 && !(fl & O_NONBLOCK))
		vwait(-1, look_readable, &fd);
}

/* read(2) of a timer: tfd_read's exact count. */
static ssize_t timer_read(int fd, void *buf, size_t n)
{
	uint64_t count = 0;
	ssize_t r;
	int was, e;

	if (virt && n >= sizeof(count)) /* else it fails at once */
		virtual_read_wait(fd);
	was = enter();
	/* A NULL buffer: Linux waits (or fails EAGAIN) first, then takes the
	 * count and fails EFAULT copying it out. */
	r = tfd_read(fd, buf || n < sizeof(count) ? buf : &count, n);
	leave(was);
	e = errno;
	if (!buf && r >= 0) {
		r = -1;
		e = EFAULT;
	}
	if (r < 0 && e == EINVAL && !still_timer(fd))
		return R(read)(fd, buf, n);
	if (r == (ssize_t)sizeof(count) && buf)
		memcpy(&count, buf, sizeof(count));
	trace(fd, (long)r, e, "read(%d, %zu) [count %llu]", fd, n,
	      (unsigned long long)count);
	errno = e;
	return r;
}

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	if (!marked(fd) || inside)
		return R(read)(fd, buf, n);
	return timer_read(fd, buf, n);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		abort(); /* glibc's __chk_fail: a buffer overflow */
	return read(fd, buf, n);
}

/* readv(2) of a timer: 8 bytes spread over the buffers, EINVAL if they
 * hold fewer. */
static ssize_t timer_readv(int fd, const struct iovec *iov, int cnt)
{
	uint64_t count;
	size_t total = 0, done = 0;
	ssize_t r;
	int i;

	if (cnt < 0 || cnt > IOV_MAX) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < cnt; i++)
		total += iov[i].iov_len;
	r = timer_read(fd, &count, total < sizeof(count) ? total : sizeof(count));
	for (i = 0; r > 0 && i < cnt && done < sizeof(count); i++) {
		size_t k = iov[i].iov_len < sizeof(count) - done
		                   ? iov[i].iov_len
		                   : sizeof(count) - done;

		memcpy(iov[i].iov_base, (char *)&count + done, k);
		done += k;
	}
	return r;
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	if (!marked(fd) || inside)
		return R(readv)(fd, iov, cnt);
	return timer_readv(fd, iov, cnt);
}

/* write(2) and writev(2) of a timer fail with EINVAL, as on Linux. */
static ssize_t timer_write(int fd, size_t n)
{
	trace(fd, -1, EINVAL, "write(%d, %zu)", fd, n);
	errno = EINVAL;
	return -1;
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	if (!marked(fd) || inside || !engine || !still_timer(fd))
		return R(write)(fd, buf, n);
	return timer_write(fd, n);
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	if (!marked(fd) || inside || !engine || !still_timer(fd))
		return R(writev)(fd, iov, cnt);
	return timer_write(fd, 0);
}

/* ---- close ---- */

static int timer_close(int fd)
{
	int was, r, e;

	clear_mark(fd);
	was = enter();
	r = tfd_close(fd);
	leave(was);
	e = errno;
	trace(fd, r, e, "close(%d)", fd);
	errno = e;
	return r;
}

/* A close() made by the library itself. */
static int inside_close(int fd)
{
	if (fd == swallow) {
		swallow = -1;
		return 0;
	}
	return R(close)(fd);
}

EXPORT int close(int fd)
{
	if (!marked(fd))
		return R(close)(fd);
	return inside ? inside_close(fd) : timer_close(fd);
}

/* Release the timers numbered from lo to hi before a range is closed. */
static void close_marked(unsigned lo, unsigned hi)
{
	unsigned fd, h = (unsigned)__atomic_load_n(&hiwater, __ATOMIC_RELAXED);

	for (fd = lo; fd < h && fd <= hi; fd++)
		if (marked((int)fd))
			timer_close((int)fd);
}

EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (!loaded(real.close_range)) {
		errno = ENOSYS;
		return -1;
	}
	/* CLOEXEC closes nothing now; UNSHARE closes in a private copy of
	 * the table (before an exec): the timers stay open here. */
	if (!inside && first <= last &&
	    !(flags & (int)(CLOSE_RANGE_CLOEXEC | CLOSE_RANGE_UNSHARE)))
		close_marked(first, last);
	return R(close_range)(first, last, flags);
}

EXPORT void closefrom(int lowfd)
{
	if (!inside && lowfd >= 0)
		close_marked((unsigned)lowfd, UINT_MAX);
	if (loaded(real.closefrom))
		real.closefrom(lowfd);
}

/* ---- dup, dup2, dup3, fcntl(F_DUPFD*), ioctl ---- */

EXPORT int dup(int fd)
{
	if (!marked(fd) || inside)
		return R(dup)(fd);
	return dup_result(fd, R(dup)(fd), "dup(%d)", 0);
}

/* dup2/dup3 where a timer is involved: the number newfd stops naming its
 * timer, if it did, and names oldfd's, if that is one. */
static int timer_dup3(int oldfd, int newfd, int flags, int three)
{
	int r, e;

	/* Only once dup2 is sure to replace newfd (oldfd is open). */
	if (oldfd != newfd && marked(newfd) && R(fcntl)(oldfd, F_GETFD) >= 0)
		release_number(newfd);
	r = three ? R(dup3)(oldfd, newfd, flags) : R(dup2)(oldfd, newfd);
	if (r >= 0 && oldfd != newfd && marked(oldfd) && share(oldfd, r) < 0)
		r = -1;
	e = errno;
	trace(oldfd, r, e, "%s(%d, %d)", three ? "dup3" : "dup2", oldfd, newfd);
	errno = e;
	return r;
}

EXPORT int dup2(int oldfd, int newfd)
{
	if ((!marked(oldfd) && !marked(newfd)) || inside)
		return R(dup2)(oldfd, newfd);
	return timer_dup3(oldfd, newfd, 0, 0);
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	if ((!marked(oldfd) && !marked(newfd)) || inside ||
	    (flags & ~O_CLOEXEC) || oldfd == newfd)
		return R(dup3)(oldfd, newfd, flags);
	return timer_dup3(oldfd, newfd, flags, 1);
}

/* fcntl's third argument is read as a pointer, as glibc itself does: it
 * carries an int as well. */
static int timer_fcntl(int fd, int cmd, void *arg, int is64)
{
	int r = is64 ? R(fcntl64)(fd, cmd, arg) : R(fcntl)(fd, cmd, arg);

	if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC)
		return r;
	return dup_result(fd, r,
	                  cmd == F_DUPFD ? "fcntl(%d, F_DUPFD, %d)"
	                                 : "fcntl(%d, F_DUPFD_CLOEXEC, %d)",
	                  (int)(intptr_t)arg);
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!marked(fd) || inside)
		return R(fcntl)(fd, cmd, arg);
	return timer_fcntl(fd, cmd, arg, 0);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!marked(fd) || inside)
		return R(fcntl64)(fd, cmd, arg);
	return timer_fcntl(fd, cmd, arg, 1);
}

/* TFD_IOC_SET_TICKS reaches the engine's eventfd, which fails ENOTTY, as
 * Linux does without CONFIG_CHECKPOINT_RESTORE; the kernel backend's
 * timerfd does what Linux does.  Traced, otherwise untouched. */
EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int r, e;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!marked(fd) || inside)
		return R(ioctl)(fd, req, arg);
	r = R(ioctl)(fd, req, arg);
	e = errno;
	trace(fd, r, e, "ioctl(%d, %s)", fd,
	      req == TFD_IOC_SET_TICKS ? "TFD_IOC_SET_TICKS" : "other");
	errno = e;
	return r;
}

/* ---- readiness: a timer is never writable ---- */

#define POLL_WRITE (POLLOUT | POLLWRNORM | POLLWRBAND)
#define EPOLL_WRITE (EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND)

EXPORT int epoll_ctl(int ep, int op, int fd, struct epoll_event *ev)
{
	struct epoll_event copy;

	if (!marked(fd) || inside || !engine || !ev ||
	    (op != EPOLL_CTL_ADD && op != EPOLL_CTL_MOD) ||
	    !(ev->events & EPOLL_WRITE) || !still_timer(fd))
		return R(epoll_ctl)(ep, op, fd, ev);
	copy = *ev;
	copy.events &= ~(uint32_t)EPOLL_WRITE;
	return R(epoll_ctl)(ep, op, fd, &copy);
}

/* The write events asked for on timers, taken out of a pollfd array for
 * the time of a wait and put back after. */
struct unwrite {
	struct pollfd *fds;
	nfds_t n;
	short *saved; /* NULL if nothing was taken out */
	short small[16];
};

static void unwrite_take(struct unwrite *u, struct pollfd *fds, nfds_t n)
{
	nfds_t i;

	u->fds = fds;
	u->n = n;
	u->saved = NULL;
	if (!engine)
		return;
	for (i = 0; i < n; i++) {
		if (!marked(fds[i].fd) || !(fds[i].events & POLL_WRITE))
			continue;
		if (!u->saved && n <= 16)
			u->saved = memset(u->small, 0, sizeof(u->small));
		else if (!u->saved)
			u->saved = calloc(n, sizeof(*u->saved));
		if (!u->saved)
			return; /* out of memory: left as it is */
		u->saved[i] = fds[i].events & POLL_WRITE;
		fds[i].events &= (short)~POLL_WRITE;
	}
}

static void unwrite_give(struct unwrite *u)
{
	nfds_t i;

	if (!u->saved)
		return;
	for (i = 0; i < u->n; i++)
		u->fds[i].events |= u->saved[i];
	if (u->saved != u->small)
		free(u->saved);
}

/* In a select set: timers are never writable. */
static void unwrite_set(int nfds, fd_set *w)
{
	int fd;

	if (!w || !engine)
		return;
	for (fd = 0; fd < nfds && fd < FD_SETSIZE; fd++)
		if (marked(fd) && FD_ISSET(fd, w))
			FD_CLR(fd, w);
}

/* ---- poll, ppoll ---- */

struct pwait {
	struct pollfd *fds;
	nfds_t n;
	const sigset_t *mask;
	int ppoll;
};

static int pwait_call(struct pwait *w, int64_t ns)
{
	struct timespec ts = { (time_t)(ns / NSEC), (long)(ns % NSEC) };

	if (w->ppoll)
		return R(ppoll)(w->fds, w->n, ns < 0 ? NULL : &ts, w->mask);
	return R(poll)(w->fds, w->n, ns < 0 ? -1 : (int)(ns / 1000000));
}

static int pwait_look(void *ctx)
{
	return pwait_call(ctx, 0);
}

/* ns: the wait's limit on the caller's clock; poll_ms: poll's own. */
static int pwait_run(struct pwait *w, int64_t ns, int poll_ms,
                     const struct timespec *ts)
{
	struct unwrite u;
	int r;

	unwrite_take(&u, w->fds, w->n);
	r = virt ? vwait(ns, pwait_look, w) : VWAIT_BLOCK;
	if (r == VWAIT_BLOCK)
		r = w->ppoll ? R(ppoll)(w->fds, w->n, virt ? NULL : ts, w->mask)
		             : R(poll)(w->fds, w->n, virt ? -1 : poll_ms);
	unwrite_give(&u);
	return r;
}

static int timer_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct pwait w = { fds, n, NULL, 0 };

	return pwait_run(&w, ms_ns(timeout), timeout, NULL);
}

static int timer_ppoll(struct pollfd *fds, nfds_t n,
                       const struct timespec *ts, const sigset_t *mask)
{
	struct pwait w = { fds, n, mask, 1 };

	return pwait_run(&w, tsp_ns(ts), 0, ts);
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	if (inside || !hook_waits())
		return R(poll)(fds, n, timeout);
	return timer_poll(fds, n, timeout);
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                 const sigset_t *mask)
{
	if (inside || !hook_waits())
		return R(ppoll)(fds, n, ts, mask);
	return timer_ppoll(fds, n, ts, mask);
}

EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout,
                      size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();
	return poll(fds, n, timeout);
}

EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n,
                       const struct timespec *ts, const sigset_t *mask,
                       size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();
	return ppoll(fds, n, ts, mask);
}

/* ---- select, pselect ---- */

struct swait {
	int nfds;
	fd_set *set[3];
	fd_set saved[3];
	const sigset_t *mask;
};

static int swait_look(void *ctx)
{
	struct swait *w = ctx;
	struct timespec zero = { 0, 0 };
	int i;

	for (i = 0; i < 3; i++)
		if (w->set[i])
			*w->set[i] = w->saved[i];
	return R(pselect)(w->nfds, w->set[0], w->set[1], w->set[2], &zero,
	                  w->mask);
}

/* Virtual time: 0 or a result when time moved; VWAIT_BLOCK with the sets
 * as given when the caller must wait for real. */
static int swait_virtual(struct swait *w, int64_t ns)
{
	int i, r;

	for (i = 0; i < 3; i++)
		if (w->set[i])
			w->saved[i] = *w->set[i];
	r = vwait(ns, swait_look, w);
	if (r == VWAIT_BLOCK)
		for (i = 0; i < 3; i++)
			if (w->set[i])
				*w->set[i] = w->saved[i];
	return r;
}

static int timer_select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
                        struct timeval *tv)
{
	struct swait w = { nfds, { rd, wr, ex }, { { { 0 } } }, NULL };
	int64_t ns, start = 0;
	int r;

	unwrite_set(nfds, wr);
	if (!virt)
		return R(select)(nfds, rd, wr, ex, tv);
	ns = tv ? (int64_t)tv->tv_sec * NSEC + (int64_t)tv->tv_usec * 1000 : -1;
	if (tv)
		start = vnow(CLOCK_MONOTONIC);
	r = swait_virtual(&w, ns);
	if (r == VWAIT_BLOCK)
		return R(select)(nfds, rd, wr, ex, NULL);
	if (tv) { /* Linux leaves the time not slept */
		int64_t left = ns - (vnow(CLOCK_MONOTONIC) - start);

		left = left < 0 ? 0 : left;
		tv->tv_sec = (time_t)(left / NSEC);
		tv->tv_usec = (suseconds_t)(left % NSEC / 1000);
	}
	return r;
}

EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
                  struct timeval *tv)
{
	if (inside || !hook_waits() || nfds < 0 || nfds > FD_SETSIZE)
		return R(select)(nfds, rd, wr, ex, tv);
	return timer_select(nfds, rd, wr, ex, tv);
}

static int timer_pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
                         const struct timespec *ts, const sigset_t *mask)
{
	struct swait w = { nfds, { rd, wr, ex }, { { { 0 } } }, mask };
	int r;

	unwrite_set(nfds, wr);
	if (!virt)
		return R(pselect)(nfds, rd, wr, ex, ts, mask);
	r = swait_virtual(&w, tsp_ns(ts));
	if (r == VWAIT_BLOCK)
		r = R(pselect)(nfds, rd, wr, ex, NULL, mask);
	return r;
}

EXPORT int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
                   const struct timespec *ts, const sigset_t *mask)
{
	if (inside || !hook_waits() || nfds < 0 || nfds > FD_SETSIZE)
		return R(pselect)(nfds, rd, wr, ex, ts, mask);
	return timer_pselect(nfds, rd, wr, ex, ts, mask);
}

/* ---- epoll_wait, epoll_pwait, epoll_pwait2 (virtual time only) ---- */

struct ewait {
	int ep;
	struct epoll_event *ev;
	int max;
	const sigset_t *mask;
};

static int ewait_look(void *ctx)
{
	struct ewait *w = ctx;

	return R(epoll_pwait)(w->ep, w->ev, w->max, 0, w->mask);
}

static int ewait_virtual(struct ewait *w, int64_t ns)
{
	int r = vwait(ns, ewait_look, w);

	if (r == VWAIT_BLOCK)
		r = R(epoll_pwait)(w->ep, w->ev, w->max, -1, w->mask);
	return r;
}

static int virtual_epoll(int ep, struct epoll_event *ev, int max, int64_t ns,
                         const sigset_t *mask)
{
	struct ewait w = { ep, ev, max, mask };

	return ewait_virtual(&w, ns);
}

EXPORT int epoll_wait(int ep, struct epoll_event *ev, int max, int timeout)
{
	if (!virt || inside)
		return R(epoll_wait)(ep, ev, max, timeout);
	return virtual_epoll(ep, ev, max, ms_ns(timeout), NULL);
}

EXPORT int epoll_pwait(int ep, struct epoll_event *ev, int max, int timeout,
                       const sigset_t *mask)
{
	if (!virt || inside)
		return R(epoll_pwait)(ep, ev, max, timeout, mask);
	return virtual_epoll(ep, ev, max, ms_ns(timeout), mask);
}

EXPORT int epoll_pwait2(int ep, struct epoll_event *ev, int max,
                        const struct timespec *ts, const sigset_t *mask)
{
	if (!loaded(real.epoll_pwait2)) {
		errno = ENOSYS;
		return -1;
	}
	if (!virt || inside)
		return R(epoll_pwait2)(ep, ev, max, ts, mask);
	return virtual_epoll(ep, ev, max, tsp_ns(ts), mask);
}

/* ---- sleeps and clocks (virtual time only) ---- */

/* A sleep of ns on the virtual clock.  The sleeper is a deadline for the
 * waits of other threads; it moves time itself, from deadline to
 * deadline, once the other threads are blocked (settle()).  When time
 * reaches its end, it returns once the others are blocked again: the
 * thread that moved time there was on its way to a wait, and gets there
 * first, as in synctest. */
static void virtual_sleep(int64_t ns)
{
	int64_t now = vnow(CLOCK_MONOTONIC), end, next;
	int slot;

	if (ns <= 0)
		return;
	end = ns > INT64_MAX - now ? INT64_MAX : now + ns;
	slot = sleeper_add(end);
	for (;;) {
		settle(slot, 1);
		now = vnow(CLOCK_MONOTONIC);
		if (now >= end)
			break;
		next = next_deadline();
		advance_to(next >= 0 && next < end - now ? now + next : end);
	}
	settle(slot, 0); /* due: the others wait for us meanwhile */
	sleeper_remove(slot);
}

EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (!virt || inside || !req || req->tv_nsec < 0 ||
	    req->tv_nsec >= NSEC || req->tv_sec < 0)
		return R(nanosleep)(req, rem);
	virtual_sleep(ts_ns(req));
	return 0;
}

EXPORT int clock_nanosleep(clockid_t c, int flags, const struct timespec *req,
                           struct timespec *rem)
{
	clockid_t base = virtual_base(c);

	if (!virt || inside || base < 0 || !req || req->tv_nsec < 0 ||
	    req->tv_nsec >= NSEC || req->tv_sec < 0)
		return R(clock_nanosleep)(c, flags, req, rem);
	virtual_sleep((flags & TIMER_ABSTIME) ? ts_ns(req) - vnow(base)
	                                      : ts_ns(req));
	return 0;
}

EXPORT unsigned sleep(unsigned s)
{
	if (!virt || inside)
		return R(sleep)(s);
	virtual_sleep((int64_t)s * NSEC);
	return 0;
}

EXPORT int usleep(useconds_t us)
{
	if (!virt || inside)
		return R(usleep)(us);
	virtual_sleep((int64_t)us * 1000);
	return 0;
}

EXPORT int clock_gettime(clockid_t c, struct timespec *ts)
{
	clockid_t base;
	int64_t ns;

	if (!virt || inside || (base = virtual_base(c)) < 0)
		return R(clock_gettime)(c, ts);
	ns = vnow(base);
	ts->tv_sec = (time_t)(ns / NSEC);
	ts->tv_nsec = (long)(ns % NSEC);
	return 0;
}

EXPORT int gettimeofday(struct timeval *tv, void *tz)
{
	int64_t ns;

	if (!virt || inside)
		return R(gettimeofday)(tv, tz);
	ns = vnow(CLOCK_REALTIME);
	tv->tv_sec = (time_t)(ns / NSEC);
	tv->tv_usec = (suseconds_t)(ns % NSEC / 1000);
	return 0;
}

EXPORT time_t time(time_t *t)
{
	time_t now;

	if (!virt || inside)
		return R(time)(t);
	now = (time_t)(vnow(CLOCK_REALTIME) / NSEC);
	if (t)
		*t = now;
	return now;
}

/* ---- threads the library starts run inside it ---- */

struct start {
	void *(*fn)(void *);
	void *arg;
};

static void *start_inside(void *p)
{
	struct start s = *(struct start *)p;

	free(p);
	inside = 1;
	return s.fn(s.arg);
}

EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg)
{
	struct start *s;
	int e;

	if (!inside) {
		__atomic_store_n(&threads_started, 1, __ATOMIC_RELAXED);
		return R(pthread_create)(th, attr, fn, arg);
	}
	s = malloc(sizeof(*s));
	if (!s)
		return EAGAIN;
	s->fn = fn;
	s->arg = arg;
	e = R(pthread_create)(th, attr, start_inside, s);
	if (e)
		free(s);
	return e;
}

/* ---- start ---- */

/* The backend is chosen now (TFD_BACKEND), so that the virtual clocks
 * start with the program. */
__attribute__((constructor)) static void preload_init(void)
{
	const char *name;
	int was;

	pthread_once(&load_once, load_all);
	trace_open();
	was = enter();
	name = tfd_backend_name();
	leave(was);
	engine = strcmp(name, "kernel") != 0;
	virt = strcmp(name, "virtual") == 0;
}
