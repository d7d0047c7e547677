/* SPDX-License-Identifier: MIT */
/*
 * clock.c - the virtual clocks as the program reads them: the domain's
 * (shm.c), or without one the engine's; and a wait's deadline on them.
 * The idea of Go's synctest and tokio's time::pause, for a whole process
 * tree: see tfd-preload(7), VIRTUAL TIME.
 */
#define _GNU_SOURCE
#include "backend.h"
#include "core/time.h"
#include "host.h"
#include "tfd.h"
#include "vtime/domain.h"

/* CLOCK_TAI - CLOCK_REALTIME on this system, in whole seconds (0 where
 * the kernel was never told the offset). */
static int64_t tai_offset(void)
{
	static int64_t off = -1;
	struct timespec tai, real;

	if (off < 0) {
		tfd_dom_host.clock_gettime(CLOCK_TAI, &tai);
		tfd_dom_host.clock_gettime(CLOCK_REALTIME, &real);
		off = (tfd_ts_to_ns(&tai) - tfd_ts_to_ns(&real) + TFD_NSEC / 2) /
		      TFD_NSEC * TFD_NSEC;
	}
	return off;
}

int64_t tfd_dom_clock_now(clockid_t c)
{
	struct timespec ts = { 0, 0 };
	int was;

	if (tfd_dom) {
		clockid_t b = tfd_dom_clock_base(c);

		return tfd_dom_now(tfd_dom, b == CLOCK_REALTIME   ? DC_REAL
		                            : b == CLOCK_BOOTTIME ? DC_BOOT
		                                                  : DC_MONO) +
		       (c == CLOCK_TAI ? tai_offset() : 0);
	}
	was = tfd_dom_host.enter();
	tfd_virtual_now(c, &ts);
	tfd_dom_host.leave(was);
	return tfd_ts_to_ns(&ts);
}

/* The base of a clock the virtual backend keeps, or -1. */
clockid_t tfd_dom_clock_base(clockid_t c)
{
	switch (c) {
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
	case CLOCK_TAI:
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

/* The same for a clock one may sleep on or arm a timer on: not the raw
 * and coarse clocks, which Linux refuses there (EOPNOTSUPP), nor the
 * CPU-time ones (the system's). */
clockid_t tfd_dom_wait_base(clockid_t c)
{
	if (c == CLOCK_MONOTONIC_RAW || c == CLOCK_MONOTONIC_COARSE ||
	    c == CLOCK_REALTIME_COARSE)
		return -1;
	return tfd_dom_clock_base(c);
}

/* The deadline on the virtual CLOCK_MONOTONIC of a wait of ns (-1: none);
 * beyond the horizon, none: no end of time. */
int64_t tfd_dom_deadline(int64_t ns)
{
	if (ns < 0 || ns > TFD_HORIZON)
		return DOM_NEVER;
	return tfd_dom_clock_now(CLOCK_MONOTONIC) + ns;
}

