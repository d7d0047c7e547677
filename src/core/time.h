/* SPDX-License-Identifier: MIT */
/*
 * time.h - nanoseconds: the one constant and the one set of conversions
 * and saturating operations used everywhere in tfd.  Pure: no clock.
 *
 * Time is a count of nanoseconds (int64_t).  Values that do not fit
 * (tv_sec near LONG_MAX) saturate at TFD_NS_MAX, about 292 years, as
 * Linux's ktime_t does.
 */
#ifndef TFD_CORE_TIME_H
#define TFD_CORE_TIME_H

#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#define TFD_NSEC 1000000000LL /* nanoseconds in a second */
#define TFD_NS_MAX INT64_MAX

/* A timespec that settime accepts: tv_sec >= 0, 0 <= tv_nsec < 1e9. */
int tfd_ts_valid(const struct timespec *ts);
/* Nanoseconds in a valid timespec, saturating at TFD_NS_MAX. */
int64_t tfd_ts_to_ns(const struct timespec *ts);
/* The timespec for a non-negative count of nanoseconds. */
struct timespec tfd_ns_to_ts(int64_t ns);
/* The same for a timeval (microseconds, truncated toward zero). */
int64_t tfd_tv_to_ns(const struct timeval *tv);
struct timeval tfd_ns_to_tv(int64_t ns);

/* a + b and a * b for non-negative operands, saturating at TFD_NS_MAX. */
int64_t tfd_ns_add(int64_t a, int64_t b);
int64_t tfd_ns_mul(int64_t a, int64_t b);
/* a + b for counts, saturating at UINT64_MAX. */
uint64_t tfd_count_add(uint64_t a, uint64_t b);

#endif
