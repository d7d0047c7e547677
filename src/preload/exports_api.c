/* SPDX-License-Identifier: MIT */
/*
 * exports_api.c - the drop-in's doors to the API (src/api.h).  A program
 * linked with libtfd.so calls these, the drop-in's copy of the library,
 * and they take its calls in as timerfd_create(2), timerfd_settime(2) and
 * read(2) are taken in (fdops.c): a timer it makes is a number we own,
 * watched by the waits; on virtual time its deadlines and its sets' move
 * the clocks, and a read that blocks waits in the domain.  The library's
 * own calls (inside), calls on a backend whose timers are the kernel's,
 * and calls on a number that is no timer of ours go to api.c as they
 * are: its checks and errors are the API's.
 */
#include "preload/preload.h"

#include <errno.h>
#include <fcntl.h>

/* The call goes to api.c as it is.  Init first: a constructor of the
 * program's may run before ours. */
static int through(void)
{
	tfd_preload_start();
	return tfd_inside || !tfd_emulated;
}

EXPORT int tfd_create(clockid_t clockid, int flags)
{
	if (through())
		return tfd_api_create(clockid, flags);
	return tfd_timer_create(clockid, flags, 0);
}

EXPORT int tfd_settime(int fd, int flags, const struct itimerspec *nv,
                       struct itimerspec *old)
{
	if (through() || !tfd_marked(fd))
		return tfd_api_settime(fd, flags, nv, old);
	return tfd_timer_settime(fd, flags, nv, old);
}

EXPORT int tfd_gettime(int fd, struct itimerspec *cur)
{
	if (through() || !tfd_marked(fd))
		return tfd_api_gettime(fd, cur);
	return tfd_timer_gettime(fd, cur);
}

EXPORT ssize_t tfd_read(int fd, void *buf, size_t n)
{
	/* No buffer, or one too short: the API's errors at once
	 * (tfd_read(3): EFAULT before waiting), not read(2)'s wait. */
	if (through() || !tfd_marked(fd) || !buf || n < sizeof(uint64_t))
		return tfd_api_read(fd, buf, n);
	return tfd_timer_read_as(fd, buf, n, 1);
}

EXPORT int tfd_close(int fd)
{
	if (through() || (!tfd_marked(fd) && !tfd_sets_has(fd)) ||
	    tfd_foreign())
		return tfd_api_close(fd);
	return tfd_vfds_changed_after(tfd_timer_close(fd));
}

/* The revised call on a timer of ours (made by it, ufd -1): as
 * tfd_timer_create, tfd_timer_settime and tfd_timer_gettime around
 * api.c's, which checks and does all. */
static int revised(int ufd, int clockid, int flags,
                   const struct itimerspec *utmr, struct itimerspec *outmr)
{
	int arm = utmr && ufd >= 0, held = 0, was, r, e;

	if (tfd_virt)
		tfd_dom_sync();
	if (arm)
		held = tfd_epoll_set_begin(ufd);
	was = tfd_enter();
	r = tfd_api_timerfd(ufd, clockid, flags, utmr, outmr);
	e = errno;
	tfd_leave(was);
	if (arm)
		tfd_epoll_set_end(held);
	if (arm && (r >= 0 || e == ECANCELED))
		tfd_epoll_consumed(ufd); /* the count is 0 again */
	if (ufd == -1 && r >= 0) {
		r = tfd_adopt(r);
		e = errno;
		if (r >= 0)
			tfd_timer_mode(r, !!(flags & TFD_NONBLOCK));
	}
	if (r >= 0 && utmr && tfd_virt)
		tfd_dom_publish();
	errno = e;
	return r;
}

EXPORT int timerfd(int ufd, int clockid, int flags,
                   const struct itimerspec *utmr, struct itimerspec *outmr)
{
	if (through() || (ufd != -1 && !tfd_marked(ufd)))
		return tfd_api_timerfd(ufd, clockid, flags, utmr, outmr);
	return revised(ufd, clockid, flags, utmr, outmr);
}

/* ---- timer sets: a set's number is not marked (its read(2) is the
 * backend's file's), but its timer is the backend's, and virtual time's
 * (vhost.c, has_timers) ---- */

EXPORT int tfd_set_create(clockid_t clockid, int flags)
{
	int was, r, e;

	if (through())
		return tfd_api_set_create(clockid, flags);
	was = tfd_enter();
	r = tfd_api_set_create(clockid, flags);
	e = errno;
	tfd_leave(was);
	errno = e;
	return r;
}

EXPORT int tfd_set_settime(int sfd, uint64_t key, int flags,
                           const struct itimerspec *nv,
                           struct itimerspec *old)
{
	int was, r, e;

	if (through())
		return tfd_api_set_settime(sfd, key, flags, nv, old);
	if (tfd_virt)
		tfd_dom_sync();
	was = tfd_enter();
	r = tfd_api_set_settime(sfd, key, flags, nv, old);
	e = errno;
	tfd_leave(was);
	if (r == 0 && tfd_virt)
		tfd_dom_publish();
	errno = e;
	return r;
}

EXPORT int tfd_set_gettime(int sfd, uint64_t key, struct itimerspec *cur)
{
	int was, r, e;

	if (through())
		return tfd_api_set_gettime(sfd, key, cur);
	if (tfd_virt)
		tfd_dom_sync();
	was = tfd_enter();
	r = tfd_api_set_gettime(sfd, key, cur);
	e = errno;
	tfd_leave(was);
	errno = e;
	return r;
}

/* As read_counted (fdops.c): on virtual time the wait is the domain's,
 * and the set's read takes what is there or fails EAGAIN; a blocking
 * set then waits there again. */
EXPORT ssize_t tfd_set_read(int sfd, struct tfd_expiry *buf, size_t count)
{
	int was, nw, e;
	ssize_t r;

	if (through())
		return tfd_api_set_read(sfd, buf, count);
	tfd_may_not_return();
	pthread_testcancel();
	for (;;) {
		if (tfd_virt)
			tfd_dom_sync();
		was = tfd_enter();
		nw = tfd_read_nowait_begin();
		r = tfd_api_set_read(sfd, buf, count);
		e = errno;
		tfd_read_nowait_end(nw);
		tfd_leave(was);
		/* Only a set with nothing due waits, in the domain: a number
		 * that is no set fails at once, as it does in libtfd. */
		if (!tfd_virt || r >= 0 || e != EAGAIN ||
		    (R(fcntl)(sfd, F_GETFL) & O_NONBLOCK))
			break;
		if (tfd_dom_read_wait(sfd) < 0)
			return -1;
	}
	errno = e;
	return r;
}
