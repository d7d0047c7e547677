/*
 * backend_kernel.c - straight through to Linux's timerfd_create(2),
 * timerfd_settime(2), timerfd_gettime(2) and read(2).  The reference the
 * conformance suite compares the engine against.
 */
#define _GNU_SOURCE
#include "backend.h"

#include <errno.h>
#include <sys/timerfd.h>
#include <unistd.h>

static size_t open_timers; /* created and not yet tfd_close()d */

static int k_create(int clockid, int flags, int *fd)
{
	*fd = timerfd_create(clockid, flags);
	if (*fd < 0)
		return errno;
	__atomic_add_fetch(&open_timers, 1, __ATOMIC_RELAXED);
	return 0;
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

static int k_read(int fd, uint64_t *count)
{
	ssize_t r;
	int e = k_check(fd); /* read(2) on a pipe would read the pipe */

	if (e)
		return e;
	r = read(fd, count, sizeof(*count));
	if (r == (ssize_t)sizeof(*count))
		return 0;
	return r < 0 ? errno : EIO;
}

static int k_close(int fd)
{
	int timer = k_check(fd) == 0;

	if (close(fd) < 0)
		return errno;
	if (timer)
		__atomic_sub_fetch(&open_timers, 1, __ATOMIC_RELAXED);
	return 0;
}

/* A duplicate of a kernel timerfd is the same timer already. */
static int k_dup(int oldfd, int newfd)
{
	int e = k_check(oldfd);

	(void)newfd;
	if (!e) /* each number is closed once: count it */
		__atomic_add_fetch(&open_timers, 1, __ATOMIC_RELAXED);
	return e;
}

static size_t k_count(void)
{
	return __atomic_load_n(&open_timers, __ATOMIC_RELAXED);
}

static int k_activate(void)
{
	return 0;
}

const struct tfd_backend tfd_kernel_backend = {
	"kernel", k_create, k_check, k_settime, k_gettime,
	k_read,   k_close,  k_dup,   k_count,   k_activate,
};
