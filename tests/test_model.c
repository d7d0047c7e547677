/* SPDX-License-Identifier: MIT */
/* The pure model (src/timer.c) and the deadline queue (src/queue.c). */
#include "t.h"

#include "core/queue.h"
#include "core/model.h"

#include <limits.h>

static struct timespec ts(time_t s, long ns)
{
	struct timespec t = { s, ns };
	return t;
}

TEST(model_timespec_validity)
{
	CHECK(tfd_ts_valid(&(struct timespec){ 0, 0 }));
	CHECK(tfd_ts_valid(&(struct timespec){ 0, 999999999 }));
	CHECK(!tfd_ts_valid(&(struct timespec){ 0, 1000000000 }));
	CHECK(!tfd_ts_valid(&(struct timespec){ 0, -1 }));
	CHECK(!tfd_ts_valid(&(struct timespec){ -1, 0 }));
	CHECK(tfd_ts_valid(&(struct timespec){ LONG_MAX, 999999999 }));
}

TEST(model_timespec_conversion_saturates)
{
	struct timespec t = ts(LONG_MAX, 999999999), back;

	CHECK_EQ(tfd_ts_to_ns(&t), TFD_NS_MAX);
	t = ts(9223372036, 854775807); /* exactly INT64_MAX ns */
	CHECK_EQ(tfd_ts_to_ns(&t), TFD_NS_MAX);
	t = ts(9223372035, 999999999);
	CHECK_EQ(tfd_ts_to_ns(&t), 9223372035999999999LL);
	t = ts(1, 5);
	CHECK_EQ(tfd_ts_to_ns(&t), 1000000005LL);
	back = tfd_ns_to_ts(1000000005LL);
	CHECK_EQ(back.tv_sec, 1);
	CHECK_EQ(back.tv_nsec, 5);
	CHECK_EQ(tfd_ns_add(TFD_NS_MAX, 1), TFD_NS_MAX);
	CHECK_EQ(tfd_ns_add(TFD_NS_MAX - 5, 5), TFD_NS_MAX);
	CHECK_EQ(tfd_ns_mul(TFD_NS_MAX / 2, 3), TFD_NS_MAX);
	CHECK_EQ(tfd_ns_mul(7, 6), 42);
}

TEST(model_expiry_exactly_now_counts)
{
	struct tfd_model m;

	tfd_model_set(&m, 1000, 100, 0, 0);
	CHECK_EQ(m.next, 1100);
	CHECK_EQ(tfd_model_advance(&m, 1099), 0);
	CHECK_EQ(m.ticks, 0);
	CHECK_EQ(m.next, 1100);
	CHECK_EQ(tfd_model_advance(&m, 1100), 1);
	CHECK_EQ(m.ticks, 1);
	CHECK_EQ(m.next, 0); /* one-shot disarms */
	CHECK_EQ(tfd_model_advance(&m, 5000), 0);
	CHECK_EQ(tfd_model_take(&m), 1);
	CHECK_EQ(m.ticks, 0);
}

TEST(model_periodic_counts)
{
	struct tfd_model m;

	tfd_model_set(&m, 1000, 100, 10, 0);
	CHECK_EQ(tfd_model_advance(&m, 1100), 1);
	CHECK_EQ(m.next, 1110);
	CHECK_EQ(tfd_model_advance(&m, 1129), 2); /* 1110, 1120 */
	CHECK_EQ(m.ticks, 3);
	CHECK_EQ(m.next, 1130);
	CHECK_EQ(tfd_model_advance(&m, 1130), 1); /* exactly on 1130 */
	CHECK_EQ(tfd_model_advance(&m, 2129), 99); /* 1140 .. 2120 */
	CHECK_EQ(m.ticks, 103);
	CHECK_EQ(m.next, 2130);
	CHECK_EQ(tfd_model_take(&m), 103);
}

TEST(model_count_formula_matches_brute_force)
{
	int64_t v, i, t;

	for (v = 1; v < 40; v += 3) {
		for (i = 0; i < 9; i++) {
			for (t = 0; t < 200; t += 7) {
				struct tfd_model m;
				int64_t e, want = 0;

				tfd_model_set(&m, 0, v, i, 0);
				for (e = v; e <= t; e += i) {
					want++;
					if (i == 0)
						break;
				}
				tfd_model_advance(&m, t);
				CHECKF(m.ticks == (uint64_t)want,
				       "v=%ld i=%ld t=%ld: %lu != %ld", (long)v,
				       (long)i, (long)t, (unsigned long)m.ticks,
				       (long)want);
			}
		}
	}
}

TEST(model_past_absolute_counts_every_interval)
{
	struct tfd_model m;
	int64_t now = 100 * SEC;

	/* The seed's case: absolute now - 20 s, interval 1 s, read at once. */
	tfd_model_set(&m, now, now - 20 * SEC, 1 * SEC, 1);
	CHECK_EQ(tfd_model_advance(&m, now), 21);
	CHECK_EQ(m.next, now + SEC);
	/* Past, one-shot: fires once. */
	tfd_model_set(&m, now, 5, 0, 1);
	CHECK_EQ(tfd_model_advance(&m, now), 1);
	CHECK_EQ(m.next, 0);
}

TEST(model_zero_value_disarms_and_keeps_interval)
{
	struct tfd_model m;
	struct itimerspec q;

	tfd_model_set(&m, 1000, 50, 0, 0);
	m.ticks = 3;
	tfd_model_set(&m, 1010, 0, 7 * SEC, 0);
	CHECK_EQ(m.next, 0);
	CHECK_EQ(m.ticks, 0);
	CHECK_EQ(m.interval, 7 * SEC);
	CHECK_EQ(tfd_model_advance(&m, TFD_NS_MAX), 0);
	tfd_model_query(&m, 2000, &q);
	CHECK_EQ(q.it_value.tv_sec, 0);
	CHECK_EQ(q.it_value.tv_nsec, 0);
	CHECK_EQ(q.it_interval.tv_sec, 7);
	CHECK_EQ(q.it_interval.tv_nsec, 0);
	/* The same with absolute. */
	tfd_model_set(&m, 1010, 0, 3, 1);
	CHECK_EQ(m.next, 0);
	CHECK_EQ(m.interval, 3);
}

TEST(model_remaining_never_changes_the_model)
{
	struct tfd_model m, copy;

	tfd_model_set(&m, 0, 100, 30, 0);
	copy = m;
	CHECK_EQ(tfd_model_remaining(&m, 0), 100);
	CHECK_EQ(tfd_model_remaining(&m, 99), 1);
	CHECK_EQ(tfd_model_remaining(&m, 100), 30); /* 100 fired, next 130 */
	CHECK_EQ(tfd_model_remaining(&m, 129), 1);
	CHECK_EQ(tfd_model_remaining(&m, 130), 30);
	CHECK_EQ(memcmp(&m, &copy, sizeof(m)), 0);
	/* One-shot due or fired: 0, never "1 ns" as the proposal did. */
	tfd_model_set(&m, 0, 100, 0, 0);
	CHECK_EQ(tfd_model_remaining(&m, 100), 0);
	CHECK_EQ(tfd_model_remaining(&m, 1000), 0);
	tfd_model_advance(&m, 1000);
	CHECK_EQ(tfd_model_remaining(&m, 1000), 0);
}

TEST(model_huge_values_never_overflow)
{
	struct tfd_model m;
	struct timespec big = ts(LONG_MAX, 999999999);
	int64_t now = 5 * SEC;

	tfd_model_set(&m, now, tfd_ts_to_ns(&big), tfd_ts_to_ns(&big), 0);
	CHECK_EQ(m.next, TFD_NS_MAX);
	CHECK_EQ(tfd_model_remaining(&m, now), TFD_NS_MAX - now);
	CHECK_EQ(tfd_model_advance(&m, TFD_NS_MAX - 1), 0);
	/* Reaching the end of time: fires once, next saturates. */
	CHECK_EQ(tfd_model_advance(&m, TFD_NS_MAX), 1);
	CHECK_EQ(m.next, TFD_NS_MAX);
	/* 1 ns interval over ~292 years: a count, no overflow. */
	tfd_model_set(&m, 0, 1, 1, 0);
	CHECK_EQ(tfd_model_advance(&m, TFD_NS_MAX), (uint64_t)TFD_NS_MAX);
	CHECK_EQ(m.next, TFD_NS_MAX);
	/* Absolute huge value with a huge interval. */
	tfd_model_set(&m, now, TFD_NS_MAX - 10, TFD_NS_MAX, 1);
	CHECK_EQ(tfd_model_advance(&m, TFD_NS_MAX), 1);
	CHECK_EQ(tfd_model_remaining(&m, TFD_NS_MAX), 0);
	/* Ticks saturate rather than wrap. */
	m.ticks = UINT64_MAX - 1;
	tfd_model_set(&m, 0, 1, 1, 0);
	m.ticks = UINT64_MAX - 1;
	tfd_model_advance(&m, 100);
	CHECK_EQ(m.ticks, UINT64_MAX);
}

/* ---- the queue, against a brute-force minimum ---- */

struct item {
	struct tfd_qnode n;
	int64_t key;
	int in;
};

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* tfd_queue_least against a brute-force minimum of the entries taken;
 * the top is asked once when taken, and an entry whose key is not below
 * the best found so far is never asked. */
struct least_ctx {
	int64_t best;
	unsigned calls;
};

static int least_accept(const struct tfd_qent *e, void *arg)
{
	struct least_ctx *c = arg;
	const struct item *it = (const struct item *)(const void *)e->node;

	CHECK_LT(e->key, c->best);
	c->calls++;
	if (it->key % 3 == 0)
		return 0;
	c->best = e->key;
	return 1;
}

static int take_all(const struct tfd_qent *e, void *arg)
{
	(void)e;
	++*(unsigned *)arg;
	return 1;
}

TEST(queue_least_matches_brute_force_and_asks_little)
{
	enum { N = 500 };
	static struct item it[N];
	struct tfd_queue q = { 0 };
	int i, round;

	CHECK_EQ(tfd_queue_reserve(&q, N), 0);
	for (i = 0; i < N; i++)
		it[i].n.pos = TFD_QUEUE_NONE;
	for (round = 0; round < 2000; round++) {
		int64_t bound = (int64_t)(next_rand() % 1200), want = bound;
		struct least_ctx c = { INT64_MAX, 0 };
		unsigned calls = 0;
		int k = (int)(next_rand() % N);

		it[k].key = (int64_t)(next_rand() % 1000);
		tfd_queue_set(&q, &it[k].n, it[k].key);
		it[k].in = 1;
		for (i = 0; i < N; i++)
			if (it[i].in && it[i].key % 3 && it[i].key < want)
				want = it[i].key;
		c.best = bound;
		CHECK_EQ(tfd_queue_least(&q, bound, least_accept, &c), want);
		CHECK_EQ(tfd_queue_least(&q, INT64_MAX, take_all, &calls),
		         tfd_queue_top(&q)->key);
		CHECK_EQ(calls, 1u);
	}
	tfd_queue_free(&q);
}

TEST(queue_random_operations_match_brute_force)
{
	enum { N = 300 };
	static struct item it[N];
	struct tfd_queue q = { 0 };
	int i, step;

	CHECK_EQ(tfd_queue_reserve(&q, N), 0);
	for (i = 0; i < N; i++)
		it[i].n.pos = TFD_QUEUE_NONE;
	for (step = 0; step < 200000; step++) {
		int k = (int)(next_rand() % N), j, live = 0;
		int64_t min = INT64_MAX;
		const struct tfd_qent *top;

		if (next_rand() % 3) {
			it[k].key = (int64_t)(next_rand() % 1000);
			tfd_queue_set(&q, &it[k].n, it[k].key);
			it[k].in = 1;
		} else {
			tfd_queue_remove(&q, &it[k].n);
			it[k].in = 0;
		}
		for (j = 0; j < N; j++) {
			if (it[j].in) {
				live++;
				if (it[j].key < min)
					min = it[j].key;
				CHECK_EQ(q.a[it[j].n.pos].node, &it[j].n);
				CHECK_EQ(q.a[it[j].n.pos].key, it[j].key);
			} else {
				CHECK_EQ(it[j].n.pos, TFD_QUEUE_NONE);
			}
		}
		CHECK_EQ(q.len, (size_t)live);
		top = tfd_queue_top(&q);
		if (live) {
			CHECK(top);
			CHECK_EQ(top->key, min);
		} else {
			CHECK(!top);
		}
		if (step % 1000 == 0)
			for (j = 1; j < (int)q.len; j++)
				CHECK_LE(q.a[(j - 1) / 4].key, q.a[j].key);
	}
	tfd_queue_free(&q);
}
