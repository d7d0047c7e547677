/* SPDX-License-Identifier: MIT */
/* notify.c - eventfd readiness.  See notify.h. */
#define _GNU_SOURCE
#include "engine/notify.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

int tfd_notify_open(int flags, int *fd)
{
	int ef = 0;

	if (flags & TFD_NONBLOCK)
		ef |= EFD_NONBLOCK;
	if (flags & TFD_CLOEXEC)
		ef |= EFD_CLOEXEC;
	*fd = eventfd(0, ef);
	return *fd < 0 ? errno : 0;
}

int tfd_notify_post(int fd, uint64_t n)
{
	ssize_t r;

	/* The system call itself: fd may be a number of the service thread's
	 * own table (see files.c, tfd_files_close). */
	do
		r = syscall(SYS_write, fd, &n, sizeof(n));
	while (r < 0 && errno == EINTR);
	return r < 0 ? errno : 0;
}

int tfd_notify_drain(int fd, uint64_t *n)
{
	struct iovec iov = { n, sizeof(*n) };
	ssize_t r;
	struct pollfd p = { fd, POLLIN, 0 };

	*n = 0;
	/* The descriptor is shared with the user, who decides O_NONBLOCK;
	 * RWF_NOWAIT makes this one read non-blocking regardless. */
	do
		r = preadv2(fd, &iov, 1, -1, RWF_NOWAIT);
	while (r < 0 && errno == EINTR);
	if (r == (ssize_t)sizeof(*n))
		return 0;
	if (r < 0 && errno == EAGAIN) {
		*n = 0;
		return 0;
	}
	if (r < 0 && errno == EBADF)
		return errno;
	/* Kernels before 5.x (EOPNOTSUPP, EINVAL), or preadv2(2) refused (a
	 * seccomp filter's ENOSYS, EPERM, EACCES...): look before reading.
	 * A concurrent plain read() by the user can still empty it in
	 * between; the read below then waits for the next expiration
	 * (documented in tfd(7)). */
	*n = 0;
	if (poll(&p, 1, 0) != 1 || !(p.revents & POLLIN))
		return 0;
	r = read(fd, n, sizeof(*n));
	if (r != (ssize_t)sizeof(*n))
		*n = 0;
	return 0;
}
