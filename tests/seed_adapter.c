/* SPDX-License-Identifier: MIT */
/*
 * seed_adapter.c - lets the 2007 proposal's test program run unmodified.
 * It is compiled with -Dsyscall=tfd_seed_syscall -D__NR_timerfd=4242, so
 * its syscall(__NR_timerfd, ufd, clockid, flags, utmr, outmr) lands here and
 * is forwarded to the library's timerfd().
 */
#include "tfd.h"

#include <errno.h>
#include <stdarg.h>

long tfd_seed_syscall(long nr, ...);

long tfd_seed_syscall(long nr, ...)
{
	va_list ap;
	int ufd, clockid, flags;
	const struct itimerspec *utmr;
	struct itimerspec *outmr;

	if (nr != 4242) {
		errno = ENOSYS;
		return -1;
	}
	va_start(ap, nr);
	ufd = va_arg(ap, int);
	clockid = va_arg(ap, int);
	flags = va_arg(ap, int);
	utmr = va_arg(ap, const struct itimerspec *);
	outmr = va_arg(ap, struct itimerspec *);
	va_end(ap);
	return timerfd(ufd, clockid, flags, utmr, outmr);
}
