/* SPDX-License-Identifier: MIT */
/*
 * clocks.c - more ways to read the virtual clocks: timespec_get(), which
 * glibc answers inside itself without clock_gettime()'s symbol.
 */
#include "preload/preload.h"

#include <dlfcn.h>

EXPORT int timespec_get(struct timespec *ts, int base)
{
	static int (*next)(struct timespec *, int);

	if (!tfd_virt || tfd_inside || base != TIME_UTC) {
		if (!next)
			next = (int (*)(struct timespec *, int))dlsym(
				RTLD_NEXT, "timespec_get");
		return next ? next(ts, base) : 0;
	}
	*ts = tfd_ns_to_ts(tfd_vread(CLOCK_REALTIME));
	return base;
}
