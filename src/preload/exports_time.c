/* SPDX-License-Identifier: MIT */
/*
 * exports_time.c - the exported sleeps, clock reads and timers that
 * signal (timer_create, alarm, setitimer): virtual time's (vtime.h,
 * sigtimers.c) on the virtual backend, the next definition's else.
 */
#include "preload/preload.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- sleeps and clocks (virtual time only) ---- */

EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	int64_t left = 0;
	int e;

	tfd_started();
	if (!tfd_virt || tfd_inside || !req || !tfd_ts_valid(req))
		return R(nanosleep)(req, rem);
	e = tfd_dom_sleep(tfd_ts_to_ns(req), &left);
	if (e == VWAIT_BLOCK)
		return R(nanosleep)(req, rem);
	if (e && rem)
		*rem = tfd_ns_to_ts(left);
	errno = e ? e : errno;
	return e ? -1 : 0;
}

EXPORT int clock_nanosleep(clockid_t c, int flags, const struct timespec *req,
                           struct timespec *rem)
{
	clockid_t base = tfd_dom_wait_base(c); /* (else the kernel's error) */
	int64_t left = 0, ns;
	int e;

	tfd_started();
	if (!tfd_virt || tfd_inside || base < 0 || !req || !tfd_ts_valid(req))
		return R(clock_nanosleep)(c, flags, req, rem);
	ns = tfd_ts_to_ns(req);
	e = (flags & TIMER_ABSTIME)
	            ? tfd_dom_sleep_until(tfd_dom_clock_now(CLOCK_MONOTONIC) +
	                                          ns - tfd_dom_clock_now(c),
	                                  NULL)
	            : tfd_dom_sleep(ns, &left);
	if (e == VWAIT_BLOCK)
		return R(clock_nanosleep)(c, flags & ~TIMER_ABSTIME, req, rem);
	if (e && rem && !(flags & TIMER_ABSTIME))
		*rem = tfd_ns_to_ts(left);
	return e;
}

EXPORT unsigned sleep(unsigned s)
{
	int64_t left = 0;
	int e;

	tfd_started();
	if (!tfd_virt || tfd_inside)
		return R(sleep)(s);
	e = tfd_dom_sleep((int64_t)s * TFD_NSEC, &left);
	if (e == VWAIT_BLOCK)
		return R(sleep)(s);
	return e ? (unsigned)((left + TFD_NSEC - 1) / TFD_NSEC) : 0;
}

EXPORT int usleep(useconds_t us)
{
	int64_t left;
	int e;

	tfd_started();
	if (!tfd_virt || tfd_inside)
		return R(usleep)(us);
	e = tfd_dom_sleep((int64_t)us * 1000, &left);
	if (e == VWAIT_BLOCK)
		return R(usleep)(us);
	if (e)
		errno = e;
	return e ? -1 : 0;
}

EXPORT int clock_gettime(clockid_t c, struct timespec *ts)
{
	clockid_t base;

	tfd_started();
	if (!tfd_virt || tfd_inside || (base = tfd_dom_clock_base(c)) < 0 ||
	    tfd_null(ts))
		return R(clock_gettime)(c, ts); /* NULL: libc's answer, a
		                                 * fault */
	*ts = tfd_ns_to_ts(tfd_dom_read_clock(c));
	return 0;
}

/* glibc's prototype says tv is never NULL; its code allows it, and so
 * do we: the next definition is called through a pointer without that
 * attribute. */
static int next_gettimeofday(struct timeval *tv, void *tz)
{
	int (*next)(struct timeval *, void *) = &R(gettimeofday);

	return next(tv, tz);
}

EXPORT int gettimeofday(struct timeval *tv, void *tz)
{
	tfd_started();
	if (!tfd_virt || tfd_inside || tfd_null(tv)) /* NULL: only the zone */
		return next_gettimeofday(tv, tz);
	if (tz && next_gettimeofday(NULL, tz) < 0) /* the zone, as libc has
	                                             * it */
		return -1;
	*tv = tfd_ns_to_tv(tfd_dom_read_clock(CLOCK_REALTIME));
	return 0;
}

EXPORT time_t time(time_t *t)
{
	time_t now;

	tfd_started();
	if (!tfd_virt || tfd_inside)
		return R(time)(t);
	now = (time_t)(tfd_dom_read_clock(CLOCK_REALTIME) / TFD_NSEC);
	if (t)
		*t = now;
	return now;
}

/* ---- timers that signal (virtual time only) ---- */

EXPORT int timer_create(clockid_t c, struct sigevent *ev, timer_t *id)
{
	int r;

	if (!tfd_dom || tfd_inside ||
	    (r = tfd_sigtimer_create(c, ev, id)) == TFD_PASS)
		return R(timer_create)(c, ev, id);
	return r;
}

EXPORT int timer_settime(timer_t id, int flags, const struct itimerspec *nv,
                         struct itimerspec *old)
{
	if (tfd_inside || !tfd_sigtimer_ours(id))
		return R(timer_settime)(id, flags, nv, old);
	return tfd_sigtimer_settime(id, flags, nv, old);
}

EXPORT int timer_gettime(timer_t id, struct itimerspec *cur)
{
	if (tfd_inside || !tfd_sigtimer_ours(id))
		return R(timer_gettime)(id, cur);
	return tfd_sigtimer_gettime(id, cur);
}

EXPORT int timer_getoverrun(timer_t id)
{
	if (tfd_inside || !tfd_sigtimer_ours(id))
		return R(timer_getoverrun)(id);
	return tfd_sigtimer_getoverrun(id);
}

EXPORT int timer_delete(timer_t id)
{
	if (tfd_inside || !tfd_sigtimer_ours(id))
		return R(timer_delete)(id);
	return tfd_sigtimer_delete(id);
}

EXPORT unsigned alarm(unsigned s)
{
	if (!tfd_dom || tfd_inside)
		return R(alarm)(s);
	return tfd_sigtimer_alarm(s);
}

EXPORT int setitimer(__itimer_which_t which, const struct itimerval *nv,
                     struct itimerval *old)
{
	if (!tfd_dom || tfd_inside || which != ITIMER_REAL)
		return R(setitimer)(which, nv, old);
	return tfd_sigtimer_setitimer(nv, old);
}

EXPORT int getitimer(__itimer_which_t which, struct itimerval *cur)
{
	if (!tfd_dom || tfd_inside || which != ITIMER_REAL || !cur)
		return R(getitimer)(which, cur);
	return tfd_sigtimer_getitimer(cur);
}
