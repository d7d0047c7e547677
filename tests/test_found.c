/* SPDX-License-Identifier: MIT */
/*
 * Bugs found by the reliability checkers of issue 7 (the operation checker
 * fuzz/opcheck.c, under libFuzzer and in test_opcheck.c).  Each test here
 * is the smallest reproduction, written before the fix described above it
 * (it failed then) and kept as a regression test; the three were fixed in
 * commit f8d5d67.  A fourth, in the tfd program, is in test_tool.c
 * (found_tool_argument_with_a_newline_gives_one_line).
 */
#include "t.h"

#include "backend.h"
#include "engine/hooks.h"
#include "tfd.h"

#include <limits.h>
#include <poll.h>
#include <unistd.h>

static const struct itimerspec zero;

/*
 * 1. A cancellation left pending by a disarm (or whose tick a plain read()
 * took) is not reported by a non-blocking tfd_read(): EAGAIN instead of
 * ECANCELED.  Linux's timerfd_read() checks timerfd_canceled() whatever
 * the count, so a non-blocking read fails with ECANCELED; tfd_read(3) says
 * ECANCELED whenever the cancellation is still pending, and tfd(7) NOTES 1
 * that after a plain read() it "stays pending for tfd_read(3)".
 * The fix (src/engine/ops.c, tfd_engine_read): do not block or fail with EAGAIN when
 * T_CANCELLED is set and the descriptor is non-blocking, e.g.
 *     if (!e && n == 0 && !((t->flags & T_CANCELLED) &&
 *                           (fcntl(t->priv, F_GETFL) & O_NONBLOCK)))
 * (a blocking read waits for a tick first, as Linux does).
 */
TEST(found_nonblocking_read_reports_a_pending_cancellation)
{
	const int flags = TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET;
	struct itimerspec v = t_its(0, 0);
	int fd = (int)CHECK_OK(tfd_create(CLOCK_REALTIME, TFD_NONBLOCK));
	uint64_t n;

	v.it_value.tv_sec = time(NULL) + 3600;
	CHECK_OK(tfd_settime(fd, flags, &v, NULL));
	tfd_engine_clock_was_set();
	CHECK_OK(tfd_settime(fd, flags, &zero, NULL)); /* keeps it pending */
	CHECK_ERR(tfd_read(fd, &n, 8), ECANCELED);
	CHECK_ERR(tfd_read(fd, &n, 8), EAGAIN); /* once */
	/* The same after a plain read() took the cancellation's count. */
	CHECK_OK(tfd_settime(fd, flags, &v, NULL));
	tfd_engine_clock_was_set();
	CHECK_READ_SYS(fd, &n, 1);
	CHECK_ERR(tfd_read(fd, &n, 8), ECANCELED);
	CHECK_ERR(tfd_read(fd, &n, 8), EAGAIN);
	CHECK_OK(tfd_close(fd));
}

/*
 * 2. The virtual clock saturates at TFD_NS_MAX, where saturated deadlines
 * lie: a periodic timer whose next expiry saturates is requeued at
 * TFD_NS_MAX <= now, and virtual_deliver() loops forever with the
 * engine's lock held (every later call of the library hangs).  A saturated one-shot would
 * also fire, where SPEC 1 says such a timer never fires.
 * The fix (src/engine/virtual.c, clamp_add and move): let the
 * virtual clocks stop 1 ns short of the end of time, e.g.
 *     return a > TFD_NS_MAX - 1 - d ? TFD_NS_MAX - 1 : a + d;
 * and clamp real_to the same way.
 */
TEST_LIMIT(found_virtual_clock_at_the_end_of_time_does_not_hang, 10)
{
	struct timespec end = { LONG_MAX, 999999999 }, now;
	struct itimerspec p = t_its(SEC, SEC), far = t_its(0, 0);
	int a, b;
	int64_t e0;
	uint64_t n;

	CHECK_OK(tfd_use_backend("virtual"));
	a = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	b = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	CHECK_OK(tfd_virtual_now(CLOCK_MONOTONIC, &now));
	e0 = t_ns(&now) + SEC;
	CHECK_OK(tfd_settime(a, 0, &p, NULL));
	far.it_value.tv_sec = LONG_MAX; /* saturates: never fires */
	CHECK_OK(tfd_settime(b, 0, &far, NULL));
	CHECK_OK(tfd_virtual_advance(&end)); /* hung here */
	CHECK_OK(tfd_virtual_advance(&end));
	CHECK_OK(tfd_virtual_now(CLOCK_MONOTONIC, &now));
	CHECK_EQ(tfd_read(a, &n, 8), 8);
	CHECKF(n == 1 + (uint64_t)((t_ns(&now) - e0) / SEC), "count %llu",
	       (unsigned long long)n);
	CHECK_ERR(tfd_read(b, &n, 8), EAGAIN);
	CHECK_OK(tfd_close(a));
	CHECK_OK(tfd_close(b));
	CHECK_OK(tfd_use_backend("engine"));
}

/*
 * 3. Holding back posts (commit 304c024) delays the held count of a
 * periodic timer whose interval exceeds HOLD_MAX until its next expiry: a
 * whole period, not the 4 ms of tfd(7) NOTES 3.  expire() sets t->hold to
 * now + min(interval, HOLD_MAX), but requeue() keys the timer at
 * max(next, hold) = next.  A plain read() of a 60 ms timer whose first
 * post was read late then misses the second expiration for ~60 ms (and
 * one of a timer with a period of years blocks for years).
 * The fix (src/engine/service.c, expire): hold back only timers faster than HOLD_MAX,
 *     if (t->m.interval && t->m.interval < HOLD_MAX && unread(t))
 * (for those, hold >= next, so the key is the hold; a slower timer costs a
 * wake-up per period anyway).
 */
TEST(found_plain_read_trails_a_slow_periodic_timer_by_at_most_4ms)
{
	int fd = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	int64_t e0 = t_now(CLOCK_MONOTONIC) + 10 * MS, i = 60 * MS;
	struct itimerspec v = t_its(e0, i);
	uint64_t n, total;

	CHECK_OK(tfd_settime(fd, TFD_TIMER_ABSTIME, &v, NULL));
	/* The first post stays unread past the second expiry (e0 + i). */
	t_sleep_ns(e0 + i + 5 * MS - t_now(CLOCK_MONOTONIC));
	CHECK_EQ(read(fd, &n, 8), 8);
	total = n;
	/* Two were due 5 ms ago; the second may trail by 4 ms, not 60. */
	if (total < 2) {
		CHECKF(t_readable(fd, 25), "second expiration not posted "
		       "%lld ms after it was due",
		       (long long)((t_now(CLOCK_MONOTONIC) - e0 - i) / MS));
		CHECK_EQ(read(fd, &n, 8), 8);
		total += n;
	}
	CHECK_GE(total, 2);
	CHECK_OK(tfd_close(fd));
}
