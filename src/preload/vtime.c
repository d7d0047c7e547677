/* SPDX-License-Identifier: MIT */
/*
 * vtime.c - virtual time as the program sees it: its clocks read the
 * domain's (domain.h), and its sleeps and waits are waits of the domain's
 * (domain.c), which end when the mover has moved time to their deadline
 * or when what they wait for is ready.  The idea of Go's synctest and
 * tokio's time::pause, for a whole process tree: see tfd-preload(7),
 * VIRTUAL TIME.
 */
#include "preload/preload.h"
#include "preload/domain.h"

#include <errno.h>
#include <fcntl.h>

/* CLOCK_TAI - CLOCK_REALTIME on this system, in whole seconds (0 where
 * the kernel was never told the offset). */
static int64_t tai_offset(void)
{
	static int64_t off = -1;
	struct timespec tai, real;

	if (off < 0) {
		R(clock_gettime)(CLOCK_TAI, &tai);
		R(clock_gettime)(CLOCK_REALTIME, &real);
		off = (tfd_ts_to_ns(&tai) - tfd_ts_to_ns(&real) + TFD_NSEC / 2) /
		      TFD_NSEC * TFD_NSEC;
	}
	return off;
}

int64_t tfd_vnow(clockid_t c)
{
	struct timespec ts = { 0, 0 };
	int was;

	if (tfd_dom) {
		clockid_t b = tfd_virtual_base(c);

		return tfd_dom_now(tfd_dom, b == CLOCK_REALTIME   ? DC_REAL
		                            : b == CLOCK_BOOTTIME ? DC_BOOT
		                                                  : DC_MONO) +
		       (c == CLOCK_TAI ? tai_offset() : 0);
	}
	was = tfd_enter();
	tfd_virtual_now(c, &ts);
	tfd_leave(was);
	return tfd_ts_to_ns(&ts);
}

/* The base of a clock the virtual backend keeps, or -1. */
clockid_t tfd_virtual_base(clockid_t c)
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

/* The engine in step with the domain's clock (before a timer operation),
 * and the domain told of this process's next deadline (after one). */
void tfd_vsync(void)
{
	if (tfd_dom)
		tfd_dom_sync();
}

void tfd_vpublish(void)
{
	if (tfd_dom)
		tfd_dom_publish();
}

/* The deadline on the virtual CLOCK_MONOTONIC of a wait of ns (-1: none);
 * beyond the horizon, none: no end of time. */
int64_t tfd_vdeadline(int64_t ns)
{
	if (ns < 0 || ns > TFD_HORIZON)
		return DOM_NEVER;
	return tfd_vnow(CLOCK_MONOTONIC) + ns;
}

/*
 * A wait of at most timeout_ns (-1: no limit) on the virtual clock.
 * look() tries without blocking: > 0 ready, < 0 failed, 0 nothing;
 * block(ctx, mask, real_ns) blocks in the kernel with that signal mask,
 * for real_ns (-1: no limit).  Returns look()'s or block()'s result, or 0
 * when the time is up.  Without a domain, VWAIT_BLOCK: the caller waits
 * for real.
 */
int tfd_vwait(int64_t timeout_ns, const sigset_t *mask, int (*look)(void *),
              int (*block)(void *, const sigset_t *, int64_t), void *ctx)
{
	if (!tfd_dom)
		return VWAIT_BLOCK;
	return tfd_dom_kwait(tfd_vdeadline(timeout_ns), mask, look, block, ctx);
}

struct one_fd {
	int fd;
};

static int look_readable(void *ctx)
{
	struct pollfd p = { ((struct one_fd *)ctx)->fd, POLLIN, 0 };

	return R(poll)(&p, 1, 0);
}

static int block_readable(void *ctx, const sigset_t *mask, int64_t ns)
{
	struct pollfd p = { ((struct one_fd *)ctx)->fd, POLLIN, 0 };
	struct timespec ts = tfd_ns_to_ts(ns);
	uintptr_t b = tfd_engine_waits_block(); /* see waits.c */
	int r = R(ppoll)(&p, 1, ns < 0 ? NULL : &ts, mask), e = errno;

	tfd_engine_waits_unblock(b);
	errno = e;
	return r;
}

/* A blocking read of a timer with nothing to read waits on virtual time
 * until it has something: 0, or -1 with errno (EINTR: a signal). */
int tfd_virtual_read_wait(int fd)
{
	int fl = R(fcntl)(fd, F_GETFL);
	struct one_fd ctx = { fd };
	void *held = NULL;
	int was, r;

	if (fl < 0 || (fl & O_NONBLOCK) || !tfd_dom)
		return 0;
	was = tfd_enter();
	if (tfd_be->hold)
		held = tfd_be->hold(fd);
	tfd_leave(was);
	/* A handler installed with SA_RESTART lets the read go on, as
	 * Linux restarts read(2) after it. */
	for (;;) {
		unsigned u = tfd_sig_unrestarted;

		r = tfd_dom_kwait(DOM_NEVER, NULL, look_readable,
		                  block_readable, &ctx);
		if (!(r < 0 && errno == EINTR && tfd_sig_unrestarted == u))
			break;
	}
	was = tfd_enter();
	if (held)
		tfd_be->unhold(held);
	tfd_leave(was);
	return r < 0 ? -1 : 0;
}

/* A sleep until the virtual CLOCK_MONOTONIC reaches deadline: 0, EINTR
 * (a signal handler ran; *left is the time not slept), or VWAIT_BLOCK for
 * a sleep beyond the horizon (the caller sleeps for real, which is
 * forever for a program). */
int tfd_virtual_sleep_until(int64_t deadline, int64_t *left)
{
	int64_t now = tfd_vnow(CLOCK_MONOTONIC);
	int e;

	if (deadline <= now)
		return 0;
	if (deadline - now > TFD_HORIZON || !tfd_dom)
		return VWAIT_BLOCK;
	e = tfd_dom_sleep(deadline);
	if (e && left) {
		*left = deadline - tfd_vnow(CLOCK_MONOTONIC);
		if (*left < 0)
			*left = 0;
	}
	return e;
}

int tfd_virtual_sleep(int64_t ns, int64_t *left)
{
	if (ns <= 0)
		return 0;
	if (ns > TFD_HORIZON)
		return VWAIT_BLOCK;
	return tfd_virtual_sleep_until(tfd_vnow(CLOCK_MONOTONIC) + ns, left);
}
