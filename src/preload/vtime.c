/* SPDX-License-Identifier: MIT */
/*
 * vtime.c - the virtual-time scheduler.  With a backend that has virtual
 * clocks, time moves when the program waits: a poll, select, epoll wait or
 * blocking read that would block moves the virtual clocks to the next
 * deadline (the idea of Go's synctest and tokio's time::pause), sleeps
 * move them by their length, and clock_gettime(), gettimeofday() and
 * time() read them.
 */
#include "preload/preload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tfd_threads_started; /* the program has started threads of its own */

int64_t tfd_vnow(clockid_t c)
{
	struct timespec ts = { 0, 0 };
	int was = tfd_enter();

	tfd_virtual_now(c, &ts);
	tfd_leave(was);
	return tfd_ts_to_ns(&ts);
}

/* The base of a clock the virtual backend keeps, or -1. */
clockid_t tfd_virtual_base(clockid_t c)
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

/* ---- sleepers ---- */

/* Threads in a virtual sleep or a timed wait of wtimed.c: when each ends,
 * on the virtual CLOCK_MONOTONIC (0: a free slot).  A wait in another
 * thread moves time no further than the first of them, as to a timer's
 * expiry.  A slot's kind tells whether its thread is inside our sleep
 * (known to be blocked until its time comes) or in a real wait of its
 * own (a condition, a semaphore: another thread may wake it at any
 * moment, so only /proc can tell). */
#define NSLEEPERS 1024
static pthread_mutex_t vlock = PTHREAD_MUTEX_INITIALIZER;
static int64_t sleepers[NSLEEPERS];
static unsigned char kind[NSLEEPERS]; /* 1 our sleep, 2 a real wait */
static pid_t tids[NSLEEPERS];         /* the thread of each */
static int nslots; /* no slot in use at or above */
/* Threads between the start of a sleep and its slot: running, though
 * /proc may show one waiting for our lock or the engine's. */
static int transit;

static int slot_add(int64_t at, int k)
{
	int i;

	pthread_mutex_lock(&vlock);
	for (i = 0; i < NSLEEPERS && sleepers[i]; i++)
		;
	if (i < NSLEEPERS) {
		sleepers[i] = at;
		kind[i] = (unsigned char)k;
		tids[i] = gettid();
		if (i >= nslots)
			nslots = i + 1;
	}
	pthread_mutex_unlock(&vlock);
	return i < NSLEEPERS ? i : -1;
}

static int sleeper_add(int64_t at)
{
	return slot_add(at, 1);
}

static void sleeper_remove(int i)
{
	pthread_mutex_lock(&vlock);
	if (i >= 0)
		sleepers[i] = 0;
	while (nslots > 0 && !sleepers[nslots - 1])
		nslots--;
	pthread_mutex_unlock(&vlock);
}

/* 1 if a sleeper other than slot "except" is due at now: it is about to
 * run. */
static int sleeper_due(int except, int64_t now)
{
	int i, due = 0;

	pthread_mutex_lock(&vlock);
	for (i = 0; i < nslots && !due; i++)
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
	for (i = 0; i < nslots; i++)
		if (sleepers[i] > now && (best < 0 || sleepers[i] - now < best))
			best = sleepers[i] - now;
	pthread_mutex_unlock(&vlock);
	return best;
}

/* Threads of the process (num_threads in /proc/self/stat), or -1. */
static int threads_now(void)
{
	char buf[1024], *p;
	ssize_t n;
	int fd, i;

	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = R(read)(fd, buf, sizeof(buf) - 1);
	R(close)(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strrchr(buf, ')');
	for (i = 0; p && i < 18; i++) /* state ... nice, then num_threads */
		p = strchr(p + 1, ' ');
	return p ? atoi(p + 1) : -1;
}

/* 1 if every other thread of the process is in a virtual sleep of ours
 * (a slot of kind 1, slot self aside) whose time has not come, or, with
 * due_too, in one whatever its time: they are blocked, and no look in
 * /proc is needed. */
static int others_all_asleep(int self, int64_t now, int due_too)
{
	int i, n = 0, ok = 1, threads;

	pthread_mutex_lock(&vlock);
	for (i = 0; i < nslots && ok; i++) {
		if (i == self || !sleepers[i])
			continue;
		if (kind[i] != 1 || (!due_too && sleepers[i] <= now))
			ok = 0;
		n++;
	}
	pthread_mutex_unlock(&vlock);
	if (!ok)
		return 0;
	threads = threads_now();
	return threads > 0 && n == threads - 1;
}

/* ---- the next deadline ---- */

static int fd_readable(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return R(poll)(&p, 1, 0) == 1;
}

/* The exact answer, at a cost per timer: the earliest expiry that would
 * make a timer readable.  A timer readable already is left out: its next
 * expiries only add to its count. */
static int64_t unread_deadline(void)
{
	int64_t best = -1;
	int fd, h = __atomic_load_n(&tfd_hiwater, __ATOMIC_RELAXED), was;

	was = tfd_enter();
	for (fd = 0; fd < h; fd++) {
		struct itimerspec cur;
		int64_t ns;

		if (!tfd_marked(fd) || tfd_gettime(fd, &cur) < 0 ||
		    fd_readable(fd))
			continue;
		ns = tfd_ts_to_ns(&cur.it_value);
		if (ns > 0 && (best < 0 || ns < best))
			best = ns;
	}
	tfd_leave(was);
	return best;
}

/* Time to the next deadline of a timer or a sleeper, or -1 if there is
 * none.  The backend's next_due answers at once, but counts timers whose
 * count nobody has read: a wait that time has moved for more than once per
 * timer without an end (a periodic timer nobody reads comes first again
 * and again) asks for the exact answer instead (exact != 0). */
static int64_t next_deadline(int exact)
{
	int64_t best = sleepers_next(tfd_vnow(CLOCK_MONOTONIC)), ns = -1;
	int was;

	if (exact || !tfd_be->next_due) {
		ns = unread_deadline();
	} else {
		was = tfd_enter();
		if (tfd_be->next_due(&ns) != 0 || ns <= 0)
			ns = -1;
		tfd_leave(was);
	}
	if (ns > 0 && (best < 0 || ns < best))
		best = ns;
	return best > TFD_HORIZON ? -1 : best; /* no end of time */
}

/* Steps a wait takes on next_due before it asks for the exact answer. */
static int exact_after(void)
{
	return __atomic_load_n(&tfd_nmarked, __ATOMIC_RELAXED) + 1;
}

/* ---- other threads ---- */

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

/* The threads in our sleeps (kind 1), other than slot self, and with
 * due_too also those whose time has come: known to be blocked.  Up to max
 * of them into known[]; returns how many, or -1 if there were more. */
static int known_asleep(int self, int64_t now, int due_too, pid_t *known,
                        int max)
{
	int i, n = 0;

	pthread_mutex_lock(&vlock);
	for (i = 0; i < nslots && n >= 0; i++) {
		if (i == self || !sleepers[i] || kind[i] != 1 ||
		    (!due_too && sleepers[i] <= now))
			continue;
		if (n < max)
			known[n++] = tids[i];
		else
			n = -1;
	}
	pthread_mutex_unlock(&vlock);
	return n;
}

/* 1 if some other thread of the process is not blocked in a system call
 * (state S) nor stopped (T, t): running, or in a short uninterruptible
 * wait (D, a page-in).  Threads in our sleeps (known_asleep()) are not
 * looked at. */
static int others_running(int self, int64_t now, int due_too)
{
	pid_t known[NSLEEPERS];
	DIR *d;
	struct dirent *e;
	pid_t me = gettid(), tid;
	int running = 0, nknown, i;

	nknown = known_asleep(self, now, due_too, known, NSLEEPERS);
	d = opendir("/proc/self/task");
	if (!d)
		return 0;
	while (!running && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		tid = (pid_t)atoi(e->d_name);
		if (tid == me)
			continue;
		for (i = 0; i < nknown && known[i] != tid; i++)
			;
		if (i < nknown)
			continue;
		running = !strchr("STt", thread_state(e->d_name));
	}
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
 * none), which does not count.  Threads that are all in a virtual sleep
 * of ours are known to be blocked: no look in /proc, no wait.
 *
 *   SETTLE_WAIT      a wait about to move time
 *   SETTLE_UNTIL_DUE a sleeper: stops looking when its own time comes
 *   SETTLE_FINAL     a sleeper whose time came, about to return: other
 *                    sleepers due as well are on their way back too, and
 *                    do not hold it (they would hold each other)
 *
 * Returns 1 if some other thread was seen running.
 */
#define SETTLE_MAX 2000 /* looks */
enum { SETTLE_WAIT, SETTLE_UNTIL_DUE, SETTLE_FINAL };

static int settle(int self, int mode)
{
	struct timespec ts = { 0, 100000 };
	int i, quiet = 0, ran = 0;
	int64_t now;

	if (!__atomic_load_n(&tfd_threads_started, __ATOMIC_RELAXED))
		return 0;
	for (i = 0; i < SETTLE_MAX && quiet < 3; i++) {
		now = tfd_vnow(CLOCK_MONOTONIC);
		if (mode == SETTLE_UNTIL_DUE && self >= 0 &&
		    __atomic_load_n(&sleepers[self], __ATOMIC_RELAXED) <= now)
			break; /* our own time came */
		if (others_all_asleep(self, now, mode == SETTLE_FINAL))
			break; /* all in our sleeps: blocked, for sure */
		if (__atomic_load_n(&transit, __ATOMIC_RELAXED) ||
		    (mode != SETTLE_FINAL && sleeper_due(self, now)) ||
		    others_running(self, now, mode == SETTLE_FINAL)) {
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
static int advance_to(int64_t to)
{
	struct timespec ts = { 0, 0 };
	int64_t ns;
	int was, r = 0;

	pthread_mutex_lock(&vlock);
	ns = to - tfd_vnow(CLOCK_MONOTONIC);
	if (ns > 0) {
		ts = tfd_ns_to_ts(ns);
		was = tfd_enter();
		r = tfd_virtual_advance(&ts);
		tfd_leave(was);
	}
	pthread_mutex_unlock(&vlock);
	if (ns > 0)
		tfd_trace(-1, r, errno, "virtual-advance(+%lld.%09ld)",
		          (long long)ts.tv_sec, ts.tv_nsec);
	return tfd_vnow(CLOCK_MONOTONIC) >= to; /* 0: the clocks' end */
}

/*
 * A wait of at most timeout_ns (-1: no limit) on the virtual clock.  look()
 * tries without blocking: > 0 ready, < 0 failed, 0 nothing.  While nothing
 * is ready, time moves to the next expiry that makes a timer readable, or
 * to the end of the wait.  Returns look()'s result, 0 when the time is up,
 * or VWAIT_BLOCK when no timer would become readable and the wait has no
 * limit: then only something else (another thread, a signal, another
 * process) can end it, and the caller waits for real.
 */
int tfd_vwait(int64_t timeout_ns, int (*look)(void *), void *ctx)
{
	int64_t end = -1, now, next, step;
	int r, settled = 0, steps = 0;

	if (timeout_ns > TFD_HORIZON)
		timeout_ns = -1; /* beyond the horizon: no limit */
	if (timeout_ns >= 0) {
		now = tfd_vnow(CLOCK_MONOTONIC);
		end = tfd_ns_add(now, timeout_ns);
	}
	for (;;) {
		r = look(ctx);
		if (r != 0)
			return r;
		now = tfd_vnow(CLOCK_MONOTONIC);
		if (end >= 0 && now >= end)
			return 0;
		next = next_deadline(steps > exact_after());
		if (next < 0 && end < 0)
			return VWAIT_BLOCK;
		if (!settled && settle(-1, SETTLE_WAIT)) {
			settled = 1; /* the others ran: look again, once */
			continue;
		}
		settled = 0;
		/* The others may have made deadlines while we looked. */
		next = next_deadline(steps > exact_after());
		if (next < 0 && end < 0)
			continue; /* none now: look, then wait for real */
		step = next;
		if (end >= 0 && (next < 0 || next > end - now))
			step = end - now;
		if (!advance_to(now + step))
			return VWAIT_BLOCK; /* the clocks' end: time cannot move */
		steps++;
	}
}

static int look_readable(void *ctx)
{
	return fd_readable(*(int *)ctx);
}

/* A blocking read of a timer with nothing to read moves time until it has
 * something (or no timer is armed). */
void tfd_virtual_read_wait(int fd)
{
	int fl = R(fcntl)(fd, F_GETFL);
	void *held = NULL;
	int was;

	if (fl < 0 || (fl & O_NONBLOCK))
		return;
	was = tfd_enter();
	if (tfd_be->hold)
		held = tfd_be->hold(fd);
	tfd_leave(was);
	tfd_vwait(-1, look_readable, &fd);
	was = tfd_enter();
	if (held)
		tfd_be->unhold(held);
	tfd_leave(was);
}

/* A sleep of ns on the virtual clock.  The sleeper is a deadline for the
 * waits of other threads; it moves time itself, from deadline to
 * deadline, once the other threads are blocked (settle()).  When time
 * reaches its end, it returns once the others are blocked again: the
 * thread that moved time there was on its way to a wait, and gets there
 * first, as in synctest.  A sleep beyond the horizon (or at the clocks'
 * end) returns VWAIT_BLOCK: the caller sleeps for real, as long as it
 * asked, which is forever for a program. */
int tfd_virtual_sleep(int64_t ns)
{
	int64_t now, end, next;
	int slot, steps = 0;

	if (ns <= 0)
		return 0;
	if (ns > TFD_HORIZON)
		return VWAIT_BLOCK; /* no end of time: the caller sleeps */
	__atomic_add_fetch(&transit, 1, __ATOMIC_RELAXED);
	now = tfd_vnow(CLOCK_MONOTONIC);
	end = tfd_ns_add(now, ns);
	slot = sleeper_add(end);
	__atomic_sub_fetch(&transit, 1, __ATOMIC_RELAXED);
	for (;;) {
		settle(slot, SETTLE_UNTIL_DUE);
		now = tfd_vnow(CLOCK_MONOTONIC);
		if (now >= end)
			break;
		next = next_deadline(steps++ > exact_after());
		if (!advance_to(next >= 0 && next < end - now ? now + next
		                                              : end)) {
			sleeper_remove(slot); /* the clocks' end */
			return VWAIT_BLOCK;
		}
	}
	settle(slot, SETTLE_FINAL); /* due: the others wait for us meanwhile */
	sleeper_remove(slot);
	return 0;
}
