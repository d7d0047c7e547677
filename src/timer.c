/* SPDX-License-Identifier: MIT */
/* timer.c - the timer model.  See timer.h; SPEC section 1. */
#include "timer.h"

int tfd_ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 &&
	       ts->tv_nsec < TFD_NSEC_PER_SEC;
}

int64_t tfd_ts_to_ns(const struct timespec *ts)
{
	if (ts->tv_sec >= TFD_NS_MAX / TFD_NSEC_PER_SEC)
		return TFD_NS_MAX;
	return (int64_t)ts->tv_sec * TFD_NSEC_PER_SEC + ts->tv_nsec;
}

struct timespec tfd_ns_to_ts(int64_t ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ns / TFD_NSEC_PER_SEC);
	ts.tv_nsec = (long)(ns % TFD_NSEC_PER_SEC);
	return ts;
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

void tfd_model_set(struct tfd_model *m, int64_t now, int64_t value,
                   int64_t interval, int absolute)
{
	m->ticks = 0;
	m->interval = interval;
	if (value == 0)
		m->next = 0;
	else
		m->next = absolute ? value : tfd_ns_add(now, value);
}

/* The expiry count at time now >= next, and the expiry after now. */
static uint64_t due(const struct tfd_model *m, int64_t now, int64_t *after)
{
	int64_t k;

	if (m->interval == 0) {
		*after = 0;
		return 1;
	}
	k = (now - m->next) / m->interval + 1;
	*after = tfd_ns_add(m->next, tfd_ns_mul(k, m->interval));
	return (uint64_t)k;
}

uint64_t tfd_model_advance(struct tfd_model *m, int64_t now)
{
	uint64_t n;

	if (m->next == 0 || now < m->next)
		return 0;
	n = due(m, now, &m->next);
	if (m->ticks > UINT64_MAX - n)
		m->ticks = UINT64_MAX;
	else
		m->ticks += n;
	return n;
}

int64_t tfd_model_remaining(const struct tfd_model *m, int64_t now)
{
	int64_t after;

	if (m->next == 0)
		return 0;
	if (now < m->next)
		return m->next - now;
	due(m, now, &after);
	return after == 0 ? 0 : after - now;
}

uint64_t tfd_model_take(struct tfd_model *m)
{
	uint64_t n = m->ticks;

	m->ticks = 0;
	return n;
}

void tfd_model_query(const struct tfd_model *m, int64_t now,
                     struct itimerspec *out)
{
	out->it_value = tfd_ns_to_ts(tfd_model_remaining(m, now));
	out->it_interval = tfd_ns_to_ts(m->interval);
}
