/* SPDX-License-Identifier: MIT */
/* time.c - nanosecond arithmetic.  See time.h. */
#include "core/time.h"

int tfd_ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < TFD_NSEC;
}

int64_t tfd_ts_to_ns(const struct timespec *ts)
{
	if (ts->tv_sec >= TFD_NS_MAX / TFD_NSEC)
		return TFD_NS_MAX;
	return (int64_t)ts->tv_sec * TFD_NSEC + ts->tv_nsec;
}

struct timespec tfd_ns_to_ts(int64_t ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ns / TFD_NSEC);
	ts.tv_nsec = (long)(ns % TFD_NSEC);
	return ts;
}

int64_t tfd_tv_to_ns(const struct timeval *tv)
{
	if (tv->tv_sec >= TFD_NS_MAX / TFD_NSEC)
		return TFD_NS_MAX;
	return (int64_t)tv->tv_sec * TFD_NSEC + (int64_t)tv->tv_usec * 1000;
}

struct timeval tfd_ns_to_tv(int64_t ns)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(ns / TFD_NSEC);
	tv.tv_usec = (suseconds_t)(ns % TFD_NSEC / 1000);
	return tv;
}

int64_t tfd_ns_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return TFD_NS_MAX;
	return r;
}

int64_t tfd_ns_mul(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return TFD_NS_MAX;
	return r;
}

uint64_t tfd_count_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}
