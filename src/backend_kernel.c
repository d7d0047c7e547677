/* SPDX-License-Identifier: MIT */
/*
 * backend_kernel.c - straight through to Linux's timerfd_create(2),
 * timerfd_settime(2), timerfd_gettime(2) and read(2).  The reference the
 * conformance suite compares the engine against.
 */
#define _GNU_SOURCE
#include "backend.h"
#include "lockorder.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

/*
 * The descriptors this backend created (or recorded as duplicates), so
 * that switching backends can tell whether a timer is still open.  A
 * number closed with plain close() is noticed when counting.
 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(lock, LK_KERNEL);
static unsigned char *mine;
static size_t nmine;

/* A child of a threaded parent must not inherit the lock held. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void fork_release(void)
{
	pthread_mutex_unlock(&lock);
}

static void fork_init(void)
{
	pthread_atfork(fork_prepare, fork_release, fork_release);
}

/* Before the engine's handlers (tfd_engine_fork_init): fork's prepare
 * handlers run in the reverse order, the family's lock first, then this
 * one (lockorder.h). */
void tfd_kernel_fork_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fork_init);
}

/* Record (on = 1) or forget fd; 0 or ENOMEM. */
static int mark(int fd, int on)
{
	int e = 0;

	tfd_kernel_fork_init();
	pthread_mutex_lock(&lock);
	if ((size_t)fd >= nmine && on) {
		size_t n = (size_t)fd + 64;
		unsigned char *m = realloc(mine, n);

		if (m) {
			memset(m + nmine, 0, n - nmine);
			mine = m;
			nmine = n;
		} else {
			e = ENOMEM;
		}
	}
	if (!e && (size_t)fd < nmine)
		mine[fd] = (unsigned char)on;
	pthread_mutex_unlock(&lock);
	return e;
}

static int k_create(int clockid, int flags, int *fd)
{
	int e;

	*fd = timerfd_create(clockid, flags);
	if (*fd < 0)
		return errno;
	e = mark(*fd, 1);
	if (e)
		close(*fd);
	return e;
}

/* A timerfd answers timerfd_gettime(); anything else fails EINVAL. */
static int k_check(int fd)
{
	struct itimerspec cur;

	return timerfd_gettime(fd, &cur) < 0 ? errno : 0;
}

static int k_settime(int fd, int flags, const struct itimerspec *nv,
                     struct itimerspec *old)
{
	return timerfd_settime(fd, flags, nv, old) < 0 ? errno : 0;
}

static int k_gettime(int fd, struct itimerspec *cur)
{
	return timerfd_gettime(fd, cur) < 0 ? errno : 0;
}

/* 1 if fd is a number this backend created or recorded: a timerfd,
 * unless the program closed it with plain close() and reused it. */
static int recorded(int fd)
{
	int on;

	pthread_mutex_lock(&lock);
	on = fd >= 0 && (size_t)fd < nmine && mine[fd];
	pthread_mutex_unlock(&lock);
	return on;
}

/* One read(2), as a plain read of the timerfd costs, for the numbers we
 * know; any other is asked first (read(2) on a pipe would read the pipe). */
static int k_read(int fd, uint64_t *count)
{
	ssize_t r;
	int e = recorded(fd) ? 0 : k_check(fd);

	if (e)
		return e;
	r = read(fd, count, sizeof(*count));
	if (r == (ssize_t)sizeof(*count))
		return 0;
	return r < 0 ? errno : EIO;
}

static int k_close(int fd)
{
	if (fd >= 0)
		mark(fd, 0);
	return close(fd) < 0 ? errno : 0;
}

static int k_release(int fd)
{
	return mark(fd, 0);
}

/* A duplicate of a kernel timerfd is the same timer already. */
static int k_dup(int oldfd, int newfd)
{
	int e = k_check(oldfd);

	return e ? e : mark(newfd, 1);
}

/* Timers still open: a recorded number that no longer holds a timerfd
 * was closed with plain close(), and is forgotten. */
static size_t k_count(void)
{
	size_t fd, n = 0;

	pthread_mutex_lock(&lock);
	for (fd = 0; fd < nmine; fd++) {
		if (mine[fd] && k_check((int)fd) != 0)
			mine[fd] = 0;
		n += mine[fd];
	}
	pthread_mutex_unlock(&lock);
	return n;
}

static int k_activate(void)
{
	return 0;
}

const struct tfd_backend tfd_kernel_backend = {
	.name = "kernel",
	.native = 1,
	.create = k_create,
	.check = k_check,
	.settime = k_settime,
	.gettime = k_gettime,
	.read = k_read,
	.close = k_close,
	.dup = k_dup,
	.release = k_release,
	.count = k_count,
	.activate = k_activate,
};
