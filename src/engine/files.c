/* SPDX-License-Identifier: MIT */
/*
 * files.c - how the engine holds a timer's file without a number in the
 * program's descriptor table.
 *
 * The service thread gives itself a descriptor table of its own, empty
 * (close_range(CLOSE_RANGE_UNSHARE)), and copies each new timer's eventfd
 * into it from the creating thread's table with pidfd_getfd(2), through a
 * pidfd naming that thread (PIDFD_THREAD, Linux 6.9).  It posts only to
 * those copies: whatever the program then does with its numbers (close,
 * closefrom, dup2 over them, reuse) cannot reach them, and the program's
 * table holds one descriptor per timer, its own.
 *
 * A new timer normally needs no round trip to that thread: it keeps a few
 * fresh eventfds ready in its table, and the creating thread takes one
 * into the program's with pidfd_getfd(2) (tfd_files_take), at the lowest
 * free number, as timerfd_create(2) would give.  Only when none is ready,
 * or the program's table has a single free slot (the transient pidfd needs
 * one), does create make the eventfd itself and wait while the service
 * thread copies it.
 *
 * Where that is missing (older kernels, a seccomp profile that refuses
 * pidfd_open, or TFD_ENGINE_FILES=direct in the environment), the service
 * thread posts to the user's own number instead, under the rule that a
 * number is never written to after tfd_close() released it; a plain
 * close(2) followed by reuse of the number is then not safe (tfd(7)).
 * A refusal that comes later (a filter installed once timers run, with
 * SECCOMP_FILTER_FLAG_TSYNC) ends the mechanism for good: the service
 * thread is replaced by one on the fallback (service.c, go_direct).
 */
#define _GNU_SOURCE
#include "engine/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* TFD_ENGINE_FILES=direct forces the fallback (tests run both).  Not read
 * in a set-user-ID program. */
static int forced_direct(void)
{
	const char *v = secure_getenv("TFD_ENGINE_FILES");

	return v && !strcmp(v, "direct");
}

/* The calls exist and PIDFD_THREAD is known: asked of a thread id that
 * cannot exist, a kernel that knows the flag says ESRCH, not EINVAL.
 * Nothing is opened. */
static int known = -1; /* [A] the mechanism works: -1 not asked yet */

int tfd_files_private(void)
{
	if (__atomic_load_n(&known, __ATOMIC_ACQUIRE) < 0) {
		long r = syscall(SYS_pidfd_open, (pid_t)INT32_MAX, PIDFD_THREAD);
		int e = errno;

		int k = !forced_direct() && r < 0 && e == ESRCH &&
		        syscall(SYS_pidfd_getfd, -1, 0, 0) < 0 && errno == EBADF;

		if (r >= 0)
			close((int)r);
		/* A refusal seen meanwhile stays. */
		e = -1;
		__atomic_compare_exchange_n(&known, &e, k, 0, __ATOMIC_ACQ_REL,
		                            __ATOMIC_ACQUIRE);
	}
	return __atomic_load_n(&known, __ATOMIC_ACQUIRE) > 0;
}

/* Did tfd_files_take() or tfd_files_fetch() fail with e because the
 * calls are refused (a seccomp filter installed since: ENOSYS, EPERM,
 * EACCES, EINVAL, whatever it answers), rather than for want of room,
 * as Linux's timerfd_create(2) could fail too?  If so, the mechanism is
 * not used again in this process (nor in the children it forks). */
int tfd_files_refused(int e)
{
	if (e == EMFILE || e == ENFILE || e == ENOMEM)
		return 0;
	__atomic_store_n(&known, 0, __ATOMIC_RELEASE);
	return 1;
}

int tfd_engine_private_files(void)
{
	return tfd_files_private();
}

/* Close numbers lo..hi of the calling thread's table, giving the thread a
 * table of its own first if it shares one (the rest of the numbers stay,
 * as copies).  0 or errno. */
int tfd_files_close_range(unsigned lo, unsigned hi)
{
	if (syscall(SYS_close_range, lo, hi, CLOSE_RANGE_UNSHARE) == 0)
		return 0;
	return errno;
}

/* Called first thing in a new thread: give it an empty table of its own.
 * 0 or errno. */
int tfd_files_unshare(void)
{
	return tfd_files_close_range(0U, ~0U);
}

/*
 * The service thread's own descriptors are closed, written and polled
 * with the system calls themselves: they are numbers of its table, not
 * the program's, and a libc wrapper that a tool interposes (a sanitizer's
 * model of one table per process, a preload library) must not take them
 * for the program's.
 */
void tfd_files_close(int fd)
{
	syscall(SYS_close, fd);
}

/* A fresh eventfd in the calling (service) thread's table.  Made with its
 * O_NONBLOCK: a file that appears at a number of the program's has its
 * flags from the first instant, as a timerfd_create(2)'s has (a thread
 * reading a number it raced for must not block on it). */
int tfd_files_fresh(int nonblock)
{
	long k = syscall(SYS_eventfd2, 0U,
	                 EFD_CLOEXEC | (nonblock ? EFD_NONBLOCK : 0));

	return k < 0 ? -1 : (int)k;
}

/* Take eventfd k of the service thread tid (made with the O_NONBLOCK that
 * flags ask) into the caller's table with the TFD_CLOEXEC flags ask: 0 and
 * *out, or errno (EMFILE when the pidfd left no room: the caller falls
 * back to the round trip).  Four system calls: pidfd_open(2) (cheap while
 * the service thread keeps a pidfd of its own, tfd_files_pin),
 * pidfd_getfd(2), and dup3(2) and close(2) to move the copy to the
 * pidfd's number, which was the lowest free one, the number Linux would
 * have given.  Raw calls: these numbers are never the program's before
 * create returns (a wrapper that interposes on close or dup3 must not see
 * them). */
int tfd_files_take(int tid, int k, int flags, int *out)
{
	long p = syscall(SYS_pidfd_open, (pid_t)tid, PIDFD_THREAD);
	long fd;
	int e;

	if (p < 0)
		return errno;
	fd = syscall(SYS_pidfd_getfd, (int)p, k, 0); /* close-on-exec */
	e = errno;
	if (fd < 0) {
		syscall(SYS_close, (int)p);
		return e;
	}
	if (fd > p) {
		/* p is ours until this replaces it: no other thread can
		 * have opened a file there meanwhile. */
		if (syscall(SYS_dup3, (int)fd, (int)p,
		            flags & TFD_CLOEXEC ? O_CLOEXEC : 0) == p) {
			syscall(SYS_close, (int)fd);
			*out = (int)p;
			return 0;
		}
		e = errno;
		syscall(SYS_close, (int)fd);
		syscall(SYS_close, (int)p);
		return e;
	}
	/* A lower number was freed meanwhile: fd is the lowest. */
	syscall(SYS_close, (int)p);
	if (!(flags & TFD_CLOEXEC))
		fcntl((int)fd, F_SETFD, 0);
	*out = (int)fd;
	return 0;
}

/* A pidfd of the calling (service) thread, in its own table, kept while it
 * runs, or -1.  While one is open, the kernel keeps the thread's pidfs
 * inode, and each pidfd_open(2) of tfd_files_take only takes a reference
 * (about 1 us to open and close); with none, each makes the inode anew
 * (about 4 us, tfd(7)).  Nothing depends on it but the cost. */
int tfd_files_pin(void)
{
	long p = syscall(SYS_pidfd_open, (pid_t)gettid(), PIDFD_THREAD);

	return p < 0 ? -1 : (int)p;
}

/* The id the kernel gives eventfd k of the calling thread's table (its
 * fdinfo's "eventfd-id", Linux 6.1), or 0.  Read in the service thread
 * only, whose own table takes the descriptor of /proc meanwhile: opened
 * in the program's table, from a thread of the program's, it would hold
 * the lowest free number for a moment, and another thread's open(2) would
 * get a higher one than Linux gives (tfd(7), NOTES 15).  Not at create
 * (three system calls and the formatting of the fdinfo: about 3 us): a
 * fork names its children's numbers by it, and asks the service thread
 * for the ids it lacks (fork.c); a thread that leaves for the fallback
 * reads its own (service.c).  No allocation. */
static uint32_t id_of(const char *table, int k)
{
	char path[64], buf[512], *p;
	long fd, n;
	unsigned long id = 0;

	snprintf(path, sizeof(path), "/proc/%s/fdinfo/%d", table, k);
	fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = syscall(SYS_read, (int)fd, buf, sizeof(buf) - 1);
	tfd_files_close((int)fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strstr(buf, "eventfd-id:");
	if (p)
		id = strtoul(p + 11, NULL, 10);
	return (uint32_t)id;
}

uint32_t tfd_files_id(int k)
{
	return id_of("thread-self", k);
}

/* The id of eventfd k of the program's table (the first thread's), read
 * by a thread with a table of its own (as tfd_files_id), or 0. */
uint32_t tfd_files_id_program(int k)
{
	return id_of("self", k);
}

/* Copy descriptor fd of thread tid into this thread's table: the new
 * number, or -errno. */
int tfd_files_fetch(int tid, int fd)
{
	long p = syscall(SYS_pidfd_open, (pid_t)tid, PIDFD_THREAD);
	long k;
	int e;

	if (p < 0)
		return -errno;
	k = syscall(SYS_pidfd_getfd, (int)p, fd, 0);
	e = errno;
	tfd_files_close((int)p);
	return k < 0 ? -e : (int)k;
}
