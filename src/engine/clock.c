/* SPDX-License-Identifier: MIT */
/*
 * clock.c - the clocks the engine counts on, and the watcher that learns
 * from the kernel that CLOCK_REALTIME was set.
 *
 * Linux says so in one way only: a timerfd armed with
 * TFD_TIMER_CANCEL_ON_SET fails its read with ECANCELED.  The watcher is a
 * thread of the service thread's, blocked in that read, with its own
 * (empty) descriptor table holding the timerfd; on a set it tells the
 * service thread, which cancels the timers that asked for it and looks at
 * its absolute CLOCK_REALTIME deadlines again.
 */
#define _GNU_SOURCE
#include "engine/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

static const clockid_t base_clock[NBASE] = { CLOCK_MONOTONIC, CLOCK_REALTIME,
	                                     CLOCK_BOOTTIME };

int64_t tfd_clock_real(int base)
{
	struct timespec ts;

	tfd_host.clock_gettime(base_clock[base], &ts);
	return (int64_t)ts.tv_sec * TFD_NSEC + ts.tv_nsec;
}

/*
 * Time namespaces.  A process of the family may run in a time namespace
 * of its own (a child forked after unshare(CLONE_NEWTIME)), whose
 * CLOCK_MONOTONIC and CLOCK_BOOTTIME are its parent's plus an offset.
 * Deadlines in the family's memory are told in one frame, the time
 * namespace of the process that mapped it; each process converts its
 * readings of those two clocks into it (tfd_eng.timens: its offsets less
 * the frame's), and an absolute time a caller gives or is given, out of
 * it.  CLOCK_REALTIME has no offset, nor have the virtual clocks.
 *
 * A namespace is told by its inode (readlink(2) of /proc/self/ns/time,
 * which opens nothing).  Its offsets are read from
 * /proc/self/timens_offsets only in a forked child that is in another
 * namespace than the frame's, before fork() returns: a file opened while
 * other threads of the program run would take a number of theirs for a
 * moment.  The file shows the offsets of the namespace the process's
 * children get, which is its own in a child just forked.  The frame's
 * offsets are known when its maker runs in the first namespace (none);
 * a maker in another (inside a container) is taken to share its
 * children's, unknown offsets only if they move to yet another.
 */
#define TIME_NS_INIT 4026531834ULL /* PROC_TIME_INIT_INO */

static uint64_t timens_inode(void)
{
	char link[64];
	long n = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/ns/time", link,
	                 sizeof(link) - 1);

	if (n <= 0)
		return 0; /* none (no namespaces, or no /proc) */
	link[n] = '\0';
	return strncmp(link, "time:[", 6) ? 0 : strtoull(link + 6, NULL, 10);
}

static void timens_offsets(int64_t off[NBASE])
{
	char buf[160], *p, *end;
	long n;
	int fd;

	memset(off, 0, NBASE * sizeof(*off));
	/* The system call itself: in a fork() handler, past any wrapper. */
	fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/timens_offsets",
	                  O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	buf[n > 0 ? n : 0] = '\0';
	for (p = buf; *p; p = end + (*end != '\0')) {
		char name[16];
		long long s, ns;

		end = strchr(p, '\n');
		if (!end)
			end = p + strlen(p);
		if (sscanf(p, "%15s %lld %lld", name, &s, &ns) != 3)
			continue;
		if (!strcmp(name, "monotonic"))
			off[BASE_MONO] = (int64_t)s * TFD_NSEC + ns;
		else if (!strcmp(name, "boottime"))
			off[BASE_BOOT] = (int64_t)s * TFD_NSEC + ns;
	}
}

void tfd_clock_frame_made(struct tfd_family *f)
{
	f->timens_ino = timens_inode();
	memset(tfd_eng.timens, 0, sizeof(tfd_eng.timens));
}

/* In a forked child, before fork() returns (one thread): our namespace
 * may not be our parent's. */
void tfd_clock_frame_forked(void)
{
	uint64_t ino = timens_inode(), frame = tfd_fam->timens_ino;

	memset(tfd_eng.timens, 0, sizeof(tfd_eng.timens));
	/* The frame's offsets are known (none) only in the first namespace,
	 * or where no namespace shows (no /proc). */
	if (ino && ino != frame && (frame == TIME_NS_INIT || !frame))
		timens_offsets(tfd_eng.timens);
}

/* at (> 0) less d: the past stays the past (1), the end of time the
 * end (offsets are far from INT64_MIN). */
static int64_t shifted(int64_t at, int64_t d)
{
	if (d > 0)
		return at > d ? at - d : 1;
	return tfd_ns_add(at, -d);
}

/* at as this process tells it, in the family's frame; and back. */
int64_t tfd_clock_to_shared(int base, int64_t at)
{
	return shifted(at, tfd_eng.virtual ? 0 : tfd_eng.timens[base]);
}

int64_t tfd_clock_to_local(int base, int64_t at)
{
	return shifted(at, tfd_eng.virtual ? 0 : -tfd_eng.timens[base]);
}

/* The clock of a base: the system's, or the virtual one.  Lock held. */
int64_t tfd_clock_now(int base)
{
	return tfd_eng.virtual ? tfd_eng.vnow[base] : tfd_clock_shared(base);
}

int tfd_clock_base(int clockid, int absolute)
{
	if (clockid == CLOCK_REALTIME)
		return absolute ? BASE_REAL : BASE_MONO;
	return clockid == CLOCK_BOOTTIME ? BASE_BOOT : BASE_MONO;
}

unsigned tfd_clock_queues(int clockid)
{
	if (clockid == CLOCK_REALTIME)
		return 1u << BASE_MONO | 1u << BASE_REAL;
	if (clockid == CLOCK_BOOTTIME)
		return 1u << BASE_BOOT;
	return 1u << BASE_MONO;
}

/* CLOCK_REALTIME was set: cancel the timers that asked for it (SPEC 2),
 * those this process delivers: every process of a family learns of the
 * set, each timer is cancelled once.  Each set counts a tick, as Linux's
 * does (a plain read(2) shows them). */
void tfd_clock_was_set(void)
{
	struct tfd_hold *h;

	TFD_HOLDS_EACH(h) {
		struct tfd_timer *t = h->t;

		if (t->deliverer == tfd_eng.self && (t->flags & T_CANCEL_ON_SET)) {
			t->flags |= T_CANCELLED;
			t->m.ticks = tfd_count_add(t->m.ticks, 1);
			tfd_engine_post_locked(t); /* none in flight here */
		}
	}
}

/* ---- the watcher ---- */

/* ThreadSanitizer locks its run-time around fork() (no end of a thread
 * is cut there), and a forked child that joins a thread of its own and
 * starts another may be given the id of a thread of its parent's, which
 * it takes for one still running ("dup thread with used id", exit 66):
 * built with it, a watcher that cannot watch ends on its own. */

enum { W_NONE, W_STARTING, W_ON, W_OFF };

static pthread_t watcher; /* [L] */
static int wstate;        /* [L] W_*: W_OFF, tried and cannot watch */
static int watch_ready;   /* [L] the watcher has started */
static int watch_armed;   /* [L] ... and watches (else it ends at once) */

/* The watcher is running our code: its start (which a sanitizer's runtime
 * may make allocate) is over before the engine says it runs, so that a
 * fork() right after a create never copies that runtime's locks held.
 * So is its end, when it cannot watch (tfd_clock_watch_start joins it):
 * a thread that ends on its own may hold an allocator's lock as a fork()
 * comes, and the child's first thread would wait on it for good. */
static void watch_is_ready(int armed)
{
	tfd_family_lock();
	watch_armed = armed;
	watch_ready = 1;
	tfd_family_changed();
	tfd_family_unlock();
}

/* The watcher's end, also when it is cancelled.  Its file is closed
 * with the system call itself, as the service thread's own numbers are
 * (files.c): a number of the watcher's table, which a sanitizer's model
 * of one table per process would take for the program's (ThreadSanitizer
 * saw a race with the program's dup(0) once the thread ended). */
static void watch_end(void *fd)
{
	if (*(int *)fd >= 0)
		tfd_files_close(*(int *)fd);
	tfd_own_ended();
}

static int watch_arm(int fd)
{
	struct itimerspec far = { { 0, 0 }, { (time_t)1 << 40, 0 } };

	return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
	                       &far, NULL);
}

static void *watch(void *arg)
{
	uint64_t n;
	int fd = -1, armed;

	(void)arg;
	pthread_cleanup_push(watch_end, &fd);
	/* A table of its own, emptied: without one (close_range(2)
	 * refused) its timerfd would take a number of the program's, and
	 * there is no detector (tfd(7), CLOCKS). */
	fd = tfd_files_unshare() == 0 ? timerfd_create(CLOCK_REALTIME,
	                                               TFD_CLOEXEC) : -1;
	armed = fd >= 0 && watch_arm(fd) == 0;
	watch_is_ready(armed);
	while (armed) {
		ssize_t r;

		/* A cancellation point: tfd_clock_watch_stop() ends us here.
		 * Any failure but a set (a read refused by a filter
		 * installed since) ends the watch: never a loop. */
		r = read(fd, &n, sizeof(n));
		if (r < 0 && errno != ECANCELED && errno != EINTR)
			break;
		if (r < 0 && errno == ECANCELED) {
			int cs;

			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
			tfd_family_lock();
			tfd_eng.clock_set = 1;
			tfd_engine_poke();
			tfd_family_unlock();
			watch_arm(fd);
			pthread_setcancelstate(cs, NULL);
		}
	}
	pthread_cleanup_pop(1);
	return NULL;
}

/*
 * The watcher runs only in a process with a CLOCK_REALTIME timer: a
 * program of monotonic timers has the service thread alone.  The thread
 * that creates the first one starts it (tfd_clock_watch_ensure): a set
 * after any settime of it is seen, pthread_create()'s allocation is the
 * program's thread's, inside its call, and create is where Linux may
 * fail too.  The service thread starts it when it finds itself
 * delivering one and none runs (tfd_eng.want_watch, set as one is
 * queued here: a timer another process made, after a restart of the
 * thread).  It lives until the service thread ends.  Lock held; dropped
 * while the thread starts.  0, or pthread_create()'s error (then not
 * started; the next create, or round of the service thread, tries
 * again).  A watcher that cannot watch (close_range(2) or
 * timerfd_create(2) refused) is not an error: there is none then.
 */
static int watch_start(void)
{
	pthread_t th;
	int e, armed;

	wstate = W_STARTING;
	watch_ready = 0;
	tfd_family_unlock();
	e = tfd_own_thread(&th, 1, watch, NULL, 0);
	tfd_family_lock();
	while (e == 0 && !watch_ready)
		tfd_family_wait();
	armed = e == 0 && watch_armed;
#if !defined(TFD_TSAN)
	if (e == 0 && !armed) { /* it ends now: wait for its end */
		tfd_family_unlock();
		pthread_join(th, NULL);
		tfd_family_lock();
	}
#else
	armed = e == 0;
#endif
	if (e == 0)
		watcher = th;
	wstate = e ? W_NONE : armed ? W_ON : W_OFF;
	tfd_family_changed();
	return e;
}

static int watch_wanted(void)
{
	return tfd_eng.want_watch && tfd_eng.state == RUNNING &&
	       !tfd_eng.virtual;
}

/* As a CLOCK_REALTIME timer is made: 0 once a watcher runs (or cannot),
 * or EAGAIN. */
int tfd_clock_watch_ensure(void)
{
	tfd_eng.want_watch = 1;
	while (wstate == W_STARTING) /* by another thread: until it runs */
		tfd_family_wait();
	return wstate == W_NONE && watch_wanted() && watch_start() ? EAGAIN
	                                                            : 0;
}

/* The service thread, on each round: started if a timer another process
 * made asks for it (without a thread to be had, tried again next round:
 * a set is not seen until then, and a create would fail with EAGAIN). */
void tfd_clock_watch_service(void)
{
	if (wstate == W_NONE && watch_wanted())
		watch_start();
}

/* The service thread ends: so does the watcher.  Lock not held. */
void tfd_clock_watch_stop(void)
{
	pthread_t th;
	int on;

	tfd_family_lock();
	while (wstate == W_STARTING)
		tfd_family_wait();
	on = wstate == W_ON;
	th = watcher;
	wstate = W_NONE;
	if (tfd_eng.nholds == 0)
		tfd_eng.want_watch = 0;
	tfd_family_unlock();
	if (on) {
		pthread_cancel(th);
		pthread_join(th, NULL);
	}
}

/* In a forked child: the parent's watcher is not here. */
void tfd_clock_watch_forked(void)
{
	wstate = W_NONE;
}

/* Test hook: what the engine does on a set, without setting the clock.
 * Returns when the service thread has done it. */
void tfd_engine_clock_was_set(void)
{
	int cs;

	tfd_engine_lock(&cs);
	if (tfd_eng.virtual) {
		tfd_clock_was_set();
	} else if (tfd_eng.state == RUNNING) {
		tfd_eng.clock_set = 1;
		tfd_engine_poke();
		while (tfd_eng.clock_set && tfd_eng.state == RUNNING)
			tfd_family_wait();
	}
	tfd_engine_unlock(cs);
}

unsigned long tfd_engine_wakeups(void)
{
	unsigned long n;
	int cs;

	tfd_engine_lock(&cs);
	n = tfd_eng.wakeups;
	tfd_engine_unlock(cs);
	return n;
}
