/* SPDX-License-Identifier: MIT */
/* model.c - the timer model.  See model.h; SPEC section 1. */
#include "core/model.h"

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
	m->ticks = tfd_count_add(m->ticks, n);
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

uint64_t tfd_model_read(struct tfd_model *m, int64_t now, uint64_t delivered,
                        int can_go_back)
{
	uint64_t n = tfd_count_add(m->ticks, delivered);
	int64_t span, first;

	m->ticks = 0;
	if (!can_go_back || !m->interval || !m->next || n == 0 ||
	    m->next == TFD_NS_MAX || n > (uint64_t)(INT64_MAX / m->interval))
		return n; /* saturated: the first expiry is not known */
	span = (int64_t)n * m->interval;
	if (span >= m->next)
		return n; /* more than the clock can have counted (a user's
		           * write(2) to the descriptor): nothing to go back to */
	first = m->next - span; /* the first expiry not yet read */
	if (now >= first)
		return n;
	m->next = first; /* the clock went back: it fires there again */
	return 0;
}
