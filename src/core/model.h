/* SPDX-License-Identifier: MIT */
/*
 * model.h - the timer model: pure arithmetic, no clock, no system call.
 *
 * Time is a count of nanoseconds on the timer's clock (int64_t).  The caller
 * reads the clock and passes "now" in; the same code therefore runs on real
 * and on virtual time, and can be tested exhaustively.
 *
 * Values that do not fit (tv_sec near LONG_MAX) saturate at TFD_NS_MAX, about
 * 292 years, as Linux's ktime_t does; such a timer never fires in practice.
 */
#ifndef TFD_CORE_MODEL_H
#define TFD_CORE_MODEL_H

#include "core/time.h"

#include <stdint.h>
#include <time.h>

struct tfd_model {
	int64_t next;     /* next expiry on the clock; 0 when disarmed */
	int64_t interval; /* period; 0 for a one-shot timer */
	uint64_t ticks;   /* expirations counted but not yet handed out */
};

/*
 * Arm (value > 0) or disarm (value == 0) at time now.  A relative value
 * counts from now; an absolute one is a time on the clock and may be in the
 * past, in which case the timer is due at once.  Discards pending ticks;
 * the interval is stored even when disarming.
 */
void tfd_model_set(struct tfd_model *m, int64_t now, int64_t value,
                   int64_t interval, int absolute);

/*
 * Count every expiry at or before now into m->ticks and move m->next past
 * now (or disarm a one-shot).  Returns the number of expirations added.
 */
uint64_t tfd_model_advance(struct tfd_model *m, int64_t now);

/* Time from now to the next expiry after now, 0 if disarmed or a one-shot
 * that is due.  Changes nothing. */
int64_t tfd_model_remaining(const struct tfd_model *m, int64_t now);

/* Hand out the pending ticks and reset them to zero. */
uint64_t tfd_model_take(struct tfd_model *m);

/*
 * What a read at time now returns, as Linux's timerfd_read() computes it:
 * the ticks counted plus `delivered` (counted earlier and handed to the
 * descriptor, unread), and resets the count.  Linux forwards an unread
 * periodic timer from its first unread expiry when it is read, so on a
 * clock that can go back (can_go_back: absolute CLOCK_REALTIME) a timer
 * whose first unread expiry is after now returns 0 and fires again at that
 * expiry (SPEC 2, clock set backwards).
 */
uint64_t tfd_model_read(struct tfd_model *m, int64_t now, uint64_t delivered,
                        int can_go_back);

/* The itimerspec a query returns at time now. */
void tfd_model_query(const struct tfd_model *m, int64_t now,
                     struct itimerspec *out);

#endif
