/* SPDX-License-Identifier: MIT */
/*
 * The engine's behaviour through the public API: never early, exact
 * counts, readiness through poll/select/epoll, blocking reads, fcntl
 * flags, re-arm clearing readiness, threads, close and number reuse,
 * fork and exec, idle cost.
 */
#include "t.h"

#include "backend.h"
#include "engine/hooks.h"
#include "tfd.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


TEST(never_early_one_shot_on_each_clock)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME,
		                            CLOCK_BOOTTIME };
	size_t c;
	int round;

	for (c = 0; c < 3; c++) {
		for (round = 0; round < 5; round++) {
			int fd = t_timer(clocks[c], 0);
			int64_t v = (1 + round * 3) * MS, t0, t1;
			uint64_t n;

			t0 = t_now(clocks[c]);
			t_arm(fd, 0, v, 0);
			CHECK_EQ(tfd_read(fd, &n, 8), 8);
			t1 = t_now(clocks[c]);
			CHECK_EQ(n, 1);
			CHECKF(t1 - t0 >= v, "clock %d: woke after %ld ns < %ld",
			       (int)clocks[c], (long)(t1 - t0), (long)v);
			CHECK_OK(tfd_close(fd));
		}
	}
}

TEST(never_early_plain_read_and_poll)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0), round;

	for (round = 0; round < 10; round++) {
		int64_t v = (round % 4 + 1) * MS, t0 = t_now(CLOCK_MONOTONIC);
		uint64_t n;

		t_arm(fd, 0, v, 0);
		if (round % 2) {
			CHECK(t_readable(fd, 5000));
		} else {
			CHECK_READ_SYS(fd, &n, 1);
		}
		CHECK_GE(t_now(CLOCK_MONOTONIC) - t0, v);
		if (round % 2)
			CHECK_READ_SYS(fd, &n, 1);
	}
	CHECK_OK(tfd_close(fd));
}

TEST(absolute_timer_never_early)
{
	int fd = t_timer(CLOCK_REALTIME, 0);
	int64_t at = t_now(CLOCK_REALTIME) + 30 * MS;
	uint64_t n;

	t_arm(fd, TFD_TIMER_ABSTIME, at, 0);
	CHECK_READ(fd, &n, 1);
	CHECK_GE(t_now(CLOCK_REALTIME), at);
	CHECK_OK(tfd_close(fd));
}

TEST(periodic_counts_are_exact_at_read_time)
{
	int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK), round;
	int64_t e0, i = 2 * MS;
	uint64_t total = 0, n;

	e0 = t_now(CLOCK_MONOTONIC) + i;
	t_arm(fd, TFD_TIMER_ABSTIME, e0, i);
	for (round = 0; round < 20; round++) {
		int64_t before, after;

		t_sleep_ns((round % 5) * MS);
		before = t_now(CLOCK_MONOTONIC);
		if (tfd_read(fd, &n, 8) == 8)
			total += n;
		else
			CHECK_EQ(errno, EAGAIN);
		after = t_now(CLOCK_MONOTONIC);
		/* tfd_read counts from the clock: exact within the call. */
		CHECKF(total >= t_due(e0, i, before) &&
		               total <= t_due(e0, i, after),
		       "total %lu not in [%lu, %lu]", (unsigned long)total,
		       (unsigned long)t_due(e0, i, before),
		       (unsigned long)t_due(e0, i, after));
	}
	CHECK_OK(tfd_close(fd));
}

TEST(one_nanosecond_interval_counts_from_the_clock)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0);
	int64_t e0 = t_now(CLOCK_MONOTONIC) + 1 * MS, before, after;
	uint64_t n;

	t_arm(fd, TFD_TIMER_ABSTIME, e0, 1);
	t_sleep_ns(50 * MS);
	before = t_now(CLOCK_MONOTONIC);
	CHECK_EQ(tfd_read(fd, &n, 8), 8);
	after = t_now(CLOCK_MONOTONIC);
	CHECK_GE(n, t_due(e0, 1, before));
	CHECK_LE(n, t_due(e0, 1, after));
	CHECK_GT(n, 40000000); /* tens of millions per 50 ms, not wake-ups */
	CHECK_OK(tfd_close(fd));
}

TEST(past_absolute_time_counts_every_interval)
{
	int fd = t_timer(CLOCK_REALTIME, 0);
	uint64_t n;
	struct itimerspec cur;

	t_arm(fd, TFD_TIMER_ABSTIME, t_now(CLOCK_REALTIME) - 20 * SEC, SEC);
	CHECK_READ(fd, &n, 21);
	CHECK_EQ(tfd_gettime(fd, &cur), 0);
	CHECK_GT(t_ns(&cur.it_value), 0);
	CHECK_LE(t_ns(&cur.it_value), SEC);
	/* One-shot in the past: one expiration, then disarmed. */
	t_arm(fd, TFD_TIMER_ABSTIME, 1, 0);
	CHECK_READ(fd, &n, 1);
	CHECK_EQ(tfd_gettime(fd, &cur), 0);
	CHECK_EQ(t_ns(&cur.it_value), 0);
	CHECK_OK(tfd_close(fd));
}

TEST(gettime_reports_remaining_and_interval)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0), fa = t_timer(CLOCK_REALTIME, 0);
	struct itimerspec cur;
	int64_t t0 = t_now(CLOCK_MONOTONIC), r;

	t_arm(fd, 0, 10 * SEC, 250 * MS);
	CHECK_EQ(tfd_gettime(fd, &cur), 0);
	r = t_ns(&cur.it_value);
	CHECK_LE(r, 10 * SEC);
	CHECK_GE(r, 10 * SEC - (t_now(CLOCK_MONOTONIC) - t0));
	CHECK_EQ(cur.it_interval.tv_sec, 0);
	CHECK_EQ(cur.it_interval.tv_nsec, 250 * MS);
	/* Absolute timers report relative time too. */
	t_arm(fa, TFD_TIMER_ABSTIME, t_now(CLOCK_REALTIME) + 5 * SEC, 0);
	CHECK_EQ(tfd_gettime(fa, &cur), 0);
	CHECK_GT(t_ns(&cur.it_value), 4 * SEC);
	CHECK_LE(t_ns(&cur.it_value), 5 * SEC);
	/* A huge value saturates like Linux (about 292 years), no error. */
	{
		struct itimerspec big = t_its(0, 0);

		big.it_value.tv_sec = 0x7fffffffffffffffL;
		CHECK_EQ(tfd_settime(fd, 0, &big, NULL), 0);
		CHECK_EQ(tfd_gettime(fd, &cur), 0);
		CHECK_GT(cur.it_value.tv_sec, 9000000000L);
		CHECK_LT(cur.it_value.tv_sec, 9300000000L);
	}
	CHECK_OK(tfd_close(fd));
	CHECK_OK(tfd_close(fa));
}

TEST(fired_one_shot_reads_zero_and_query_keeps_the_count)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0), i;
	struct itimerspec cur;
	uint64_t n;

	t_arm(fd, 0, 5 * MS, 0);
	t_sleep_ns(30 * MS);
	for (i = 0; i < 5; i++) {
		CHECK_EQ(tfd_gettime(fd, &cur), 0);
		CHECK_EQ(cur.it_value.tv_sec, 0);
		CHECK_EQ(cur.it_value.tv_nsec, 0);
	}
	CHECK_READ(fd, &n, 1);
	/* Periodic: queries while expirations pile up lose none. */
	t_arm(fd, 0, 2 * MS, 2 * MS);
	for (i = 0; i < 10; i++) {
		t_sleep_ns(MS);
		CHECK_EQ(tfd_gettime(fd, &cur), 0);
		CHECK_GT(t_ns(&cur.it_value), 0);
		CHECK_LE(t_ns(&cur.it_value), 2 * MS);
	}
	t_sleep_ns(2 * MS);
	CHECK_EQ(tfd_read(fd, &n, 8), 8);
	CHECK_GE(n, 5);
	CHECK_OK(tfd_close(fd));
}

TEST(rearm_and_disarm_clear_pending_and_readiness)
{
	int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK), ep, i;
	struct epoll_event ev = { EPOLLIN, { 0 } }, out;
	uint64_t n;

	ep = (int)CHECK_OK(epoll_create1(EPOLL_CLOEXEC));
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	/* An event loop that never reads and only re-arms must not spin. */
	for (i = 0; i < 20; i++) {
		t_arm(fd, 0, MS, 0);
		CHECK_EQ(epoll_wait(ep, &out, 1, 5000), 1);
		t_arm(fd, 0, 3600 * SEC, 0);
		CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
		CHECK(!t_readable(fd, 0));
	}
	CHECK_ERR(tfd_read(fd, &n, 8), EAGAIN);
	CHECK_ERR(read(fd, &n, 8), EAGAIN);
	/* Disarm clears too, and keeps the interval. */
	t_arm(fd, 0, MS, 7 * MS);
	CHECK(t_readable(fd, 5000));
	t_arm(fd, 0, 0, 7 * MS);
	CHECK(!t_readable(fd, 0));
	{
		struct itimerspec cur;

		CHECK_EQ(tfd_gettime(fd, &cur), 0);
		CHECK_EQ(t_ns(&cur.it_value), 0);
		CHECK_EQ(t_ns(&cur.it_interval), 7 * MS);
	}
	/* Expired but not yet posted: the re-arm discards it as well. */
	t_arm(fd, 0, 1, 0);
	t_arm(fd, 0, 3600 * SEC, 0);
	t_sleep_ns(20 * MS);
	CHECK(!t_readable(fd, 0));
	CHECK_ERR(tfd_read(fd, &n, 8), EAGAIN);
	close(ep);
	CHECK_OK(tfd_close(fd));
}

TEST(readiness_poll_select_epoll_match_the_count)
{
	int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK), ep;
	struct epoll_event ev = { EPOLLIN | EPOLLET, { 0 } }, out;
	struct pollfd p = { fd, POLLIN, 0 };
	fd_set rd;
	struct timeval tv = { 5, 0 };
	uint64_t n;

	ep = (int)CHECK_OK(epoll_create1(EPOLL_CLOEXEC));
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	CHECK_EQ(poll(&p, 1, 0), 0);
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
	t_arm(fd, 0, 5 * MS, 0);
	FD_ZERO(&rd);
	FD_SET(fd, &rd);
	CHECK_EQ(select(fd + 1, &rd, NULL, NULL, &tv), 1);
	CHECK(FD_ISSET(fd, &rd));
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK(p.revents & POLLIN);
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 1);
	CHECK(out.events & EPOLLIN);
	CHECK_READ(fd, &n, 1);
	CHECK_EQ(poll(&p, 1, 0), 0);
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
	/* Periodic through epoll, edge-triggered: a fresh edge each expiry. */
	t_arm(fd, 0, 2 * MS, 2 * MS);
	CHECK_EQ(epoll_wait(ep, &out, 1, 5000), 1);
	CHECK_EQ(read(fd, &n, 8), 8);
	CHECK_GE(n, 1);
	CHECK_EQ(epoll_wait(ep, &out, 1, 5000), 1);
	CHECK_EQ(tfd_read(fd, &n, 8), 8);
	CHECK_GE(n, 1);
	close(ep);
	CHECK_OK(tfd_close(fd));
}

/* What a wait that delivers asks of the engine (backend.h, ready; the
 * preload's poll and select, tfd(7) Delivery): not ready before the
 * deadline on the timer's own clock, which it gives on CLOCK_MONOTONIC;
 * ready (1) from then on while the file does not show it (here: the
 * engine's lock is held across the deadline, so the service thread
 * cannot post), shown by the file (2) once posted, neither once a read
 * took the count. */
TEST(ready_for_a_waiter_is_never_early_and_gives_the_deadline)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME,
		                            CLOCK_BOOTTIME };
	const struct tfd_backend *b = &tfd_engine_backend;
	size_t c;
	int p[2], k, drifts;
	int64_t m;

	for (c = 0; c < 3; c++) {
		int fd = t_timer(clocks[c], TFD_NONBLOCK), r, tries = 0;
		int64_t at = t_now(clocks[c]) + 20 * MS, want;
		uint64_t n;

		t_arm(fd, TFD_TIMER_ABSTIME, at, 0);
		want = t_now(CLOCK_MONOTONIC) + (at - t_now(clocks[c]));
		k = b->ready_begin();
		CHECK_EQ(b->ready(fd, &m, &drifts), 0);
		CHECK_EQ(drifts, clocks[c] != CLOCK_MONOTONIC); /* told on
		                                                 * another */
		if (clocks[c] == CLOCK_MONOTONIC) {
			CHECK_EQ(m, at);
		} else { /* two clocks read apart: within 1 ms */
			CHECK_GT(m, want - MS);
			CHECK_LT(m, want + MS);
		}
		while ((r = b->ready(fd, &m, NULL)) == 0 && tries++ < 2000)
			t_sleep_ns(MS / 4);
		CHECKF(t_now(clocks[c]) >= at, "clock %d: ready before %ld",
		       (int)clocks[c], (long)at);
		b->ready_end(k);
		CHECK_EQ(r, 1);
		CHECK(t_readable(fd, 5000)); /* posted (the post may still
		                              * be in flight a moment: 1) */
		for (tries = 0; tries < 2000; tries++) {
			k = b->ready_begin();
			r = b->ready(fd, &m, NULL);
			b->ready_end(k);
			if (r != 1)
				break;
			t_sleep_ns(MS / 4);
		}
		CHECK_EQ(r, 2);
		CHECK_EQ(m, -1); /* a one-shot: no next deadline */
		CHECK_READ(fd, &n, 1);
		k = b->ready_begin();
		CHECK_EQ(b->ready(fd, &m, NULL), 0);
		CHECK_EQ(m, -1);
		b->ready_end(k);
		CHECK_OK(tfd_close(fd));
		k = b->ready_begin();
		CHECK_EQ(b->ready(fd, &m, NULL), -1);
		b->ready_end(k);
	}
	CHECK_OK(pipe(p));
	k = b->ready_begin();
	CHECK_EQ(b->ready(p[0], &m, NULL), -1);
	b->ready_end(k);
	close(p[0]);
	close(p[1]);
}

/* A wait that slept for a deadline posts the timer itself (backend op
 * post, the epoll waits): never before the deadline, once, a periodic
 * timer's count whole, and not a timer posted already. */
TEST(a_waiter_posts_a_due_timer_once_and_never_early)
{
	const struct tfd_backend *b = &tfd_engine_backend;
	int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK), k, r, tries = 0;
	int64_t at, m, period = 20 * MS, lead = 20 * MS;
	uint64_t n = 0;

	/* Held before the deadline, the lock keeps the service thread from
	 * counting the timer until ready_end; on a slow machine (valgrind)
	 * the arm and the first post may take longer than the lead: arm
	 * again, further out. */
	for (;;) {
		at = t_now(CLOCK_MONOTONIC) + lead;
		t_arm(fd, TFD_TIMER_ABSTIME, at, period);
		k = b->ready_begin();
		r = b->post(fd);
		if (t_now(CLOCK_MONOTONIC) < at)
			break;
		b->ready_end(k);
		CHECK_LT(lead, 10000 * MS);
		lead *= 4;
		t_arm(fd, 0, 0, 0);
		(void)tfd_read(fd, &n, 8);
	}
	CHECK_EQ(r, 0); /* not due */
	CHECK(!t_readable(fd, 0));
	while ((r = b->ready(fd, &m, NULL)) == 0 && tries++ < 2000)
		t_sleep_ns(MS / 4);
	CHECK_EQ(r, 1);
	t_sleep_ns(2 * period + 2 * MS); /* two more periods */
	CHECK_GE(t_now(CLOCK_MONOTONIC), at);
	CHECK_EQ(b->post(fd), 1);
	CHECK_EQ(b->post(fd), 0); /* posted: not twice */
	/* Posted (2); due again (1) only once a further period has passed
	 * since the post, as it may on a slow machine (valgrind). */
	r = b->ready(fd, &m, NULL);
	if (r == 1)
		CHECK_GE(t_now(CLOCK_MONOTONIC), at + 3 * period);
	else
		CHECK_EQ(r, 2);
	b->ready_end(k);
	CHECK(t_readable(fd, 0));
	CHECK_EQ(tfd_read(fd, &n, 8), 8);
	CHECKF(n >= 3, "count %llu, want 3 or more", (unsigned long long)n);
	CHECK_OK(tfd_close(fd));
	k = b->ready_begin();
	CHECK_EQ(b->post(fd), 0); /* no timer there */
	b->ready_end(k);
}

/* The engine's quiet (the preload's read(2) asks it first): 1, a read
 * would fail EAGAIN, only for a timer known non-blocking with nothing
 * due; it sees what a settime made before it (a timer armed in the past
 * counts), and the holds and slot table it looks at without the lock are
 * never freed under it: one thread makes and closes timers (chunks of
 * holds come and go, the table grows) while another asks of every number
 * they take.  Under AddressSanitizer a look at freed memory is a report. */
struct churn_ctx {
	int stop, lo, hi;
	unsigned long looks;
};

static void *churn_look(void *arg)
{
	struct churn_ctx *c = arg;
	int fd;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE))
		for (fd = c->lo; fd < c->hi; fd++)
			__atomic_add_fetch(&c->looks, 1UL + (unsigned long)
			                   tfd_engine_backend.quiet(fd),
			                   __ATOMIC_RELAXED);
	return NULL;
}

/* The look's pause (tfd_engine_quiet_pause): the looking thread stops
 * once, having found its hold, until the main thread says go (0 idle, 1
 * to stop, 2 stopped, 3 go). */
static int pause_state;

static void pause_once(void)
{
	int one = 1;

	if (!__atomic_compare_exchange_n(&pause_state, &one, 2, 0,
	                                 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return;
	while (__atomic_load_n(&pause_state, __ATOMIC_ACQUIRE) != 3)
		t_sleep_ns(MS / 10);
}

/* Asks until a look stopped in the pause (one that found the lock held
 * says 0 before it looks): what that look said. */
static void *look_once(void *arg)
{
	int r;

	do
		r = tfd_engine_backend.quiet(*(int *)arg);
	while (__atomic_load_n(&pause_state, __ATOMIC_ACQUIRE) == 1);
	return (void *)(intptr_t)r;
}

/* 1 from quiet, which may say 0 (cannot tell) while another thread holds
 * the lock a moment (the service thread): asked again for up to 2 s. */
static int quiet_soon(int fd)
{
	int tries;

	for (tries = 0; tries < 2000; tries++) {
		if (tfd_engine_backend.quiet(fd))
			return 1;
		t_sleep_ns(MS);
	}
	return 0;
}

TEST(quiet_tells_nothing_due_without_the_lock_and_misses_nothing)
{
	enum { N = 300 };
	static int fds[2 * N];
	const struct tfd_backend *b = &tfd_engine_backend;
	struct churn_ctx c = { 0, 0, 0, 0 };
	struct itimerspec past = { { 0, 0 }, { 0, 1 } };
	pthread_t th;
	uint64_t n;
	void *res;
	int fd, i, round, rounds;

	if (T_TSAN)
		t_skip("a ThreadSanitizer build always takes the lock");
	fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
	t_arm(fd, 0, 3600 * SEC, 0);
	CHECK_EQ(b->quiet(fd), 0); /* its O_NONBLOCK not told */
	b->mode(fd, 0);
	CHECK_EQ(b->quiet(fd), 0); /* blocking: a read waits */
	b->mode(fd, 1);
	CHECK(quiet_soon(fd));
	CHECK_EQ(b->quiet(-1), 0);
	CHECK_EQ(b->quiet(fd + 1000), 0);
	rounds = t_valgrind() ? 20 : 200;
	for (round = 0; round < rounds; round++) {
		t_arm(fd, 0, 3600 * SEC, 0);
		CHECK(quiet_soon(fd));
		CHECK_ERR(tfd_read(fd, &n, sizeof(n)), EAGAIN);
		CHECK_OK(tfd_settime(fd, TFD_TIMER_ABSTIME, &past, NULL));
		CHECK_EQ(b->quiet(fd), 0);
		CHECK_READ(fd, &n, 1);
	}
	t_arm(fd, 0, 0, 0);
	CHECK(quiet_soon(fd)); /* disarmed: nothing will come */
	b->mode(fd, -1);
	CHECK_EQ(b->quiet(fd), 0); /* a call we did not see set it */
	c.lo = fd + 1;
	c.hi = fd + 1 + N;
	CHECK_EQ(pthread_create(&th, NULL, churn_look, &c), 0);
	while (!__atomic_load_n(&c.looks, __ATOMIC_RELAXED))
		t_sleep_ns(MS / 10);
	for (round = 0; round < rounds / 8; round++) {
		for (i = 0; i < N; i++) {
			fds[i] = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
			b->mode(fds[i], 1);
			t_arm(fds[i], 0, 3600 * SEC, 0);
		}
		for (i = 0; i < N; i++)
			CHECK_OK(tfd_close(fds[i]));
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	CHECK_EQ(pthread_join(th, NULL), 0);
	/* A look stopped with a hold in hand while every timer is closed
	 * (chunks of holds emptied) and twice as many made (the table
	 * grows): it says 0, and reads no freed memory. */
	for (i = 0; i < N; i++) {
		fds[i] = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
		b->mode(fds[i], 1);
	}
	CHECK(quiet_soon(fds[N / 2]));
	__atomic_store_n(&pause_state, 1, __ATOMIC_SEQ_CST);
	tfd_engine_quiet_pause(pause_once);
	CHECK_EQ(pthread_create(&th, NULL, look_once, &fds[N / 2]), 0);
	while (__atomic_load_n(&pause_state, __ATOMIC_ACQUIRE) != 2)
		t_sleep_ns(MS / 10);
	for (i = 0; i < N; i++)
		CHECK_OK(tfd_close(fds[i]));
	for (i = 0; i < 2 * N; i++)
		fds[i] = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
	__atomic_store_n(&pause_state, 3, __ATOMIC_RELEASE);
	CHECK_EQ(pthread_join(th, &res), 0);
	tfd_engine_quiet_pause(NULL);
	CHECK_EQ((intptr_t)res, 0);
	for (i = 0; i < 2 * N; i++)
		CHECK_OK(tfd_close(fds[i]));
	CHECK_OK(tfd_close(fd));
}

struct rearm_ctx {
	int fd;
	int64_t armed_at;
};

static void *rearm_soon(void *arg)
{
	struct rearm_ctx *c = arg;

	t_sleep_ns(50 * MS);
	c->armed_at = t_now(CLOCK_MONOTONIC);
	t_arm(c->fd, 0, 10 * MS, 0);
	return NULL;
}

TEST(blocked_reader_wakes_for_a_rearm_from_another_thread)
{
	struct rearm_ctx c;
	pthread_t th;
	uint64_t n;
	int64_t now;
	int plain;

	for (plain = 0; plain < 2; plain++) {
		c.fd = t_timer(CLOCK_MONOTONIC, 0);
		t_arm(c.fd, 0, 3600 * SEC, 0);
		CHECK_EQ(pthread_create(&th, NULL, rearm_soon, &c), 0);
		if (plain)
			CHECK_EQ(read(c.fd, &n, 8), 8);
		else
			CHECK_EQ(tfd_read(c.fd, &n, 8), 8);
		CHECK_EQ(n, 1);
		now = t_now(CLOCK_MONOTONIC);
		pthread_join(th, NULL);
		CHECK_GE(now - c.armed_at, 10 * MS);
		CHECK_OK(tfd_close(c.fd));
	}
}

TEST(fcntl_flags_follow_create_flags_and_changes)
{
	int a = t_timer(CLOCK_MONOTONIC, 0);
	int b = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	int c = t_timer(CLOCK_MONOTONIC, TFD_CLOEXEC);
	uint64_t n;

	CHECK(!(fcntl(a, F_GETFL) & O_NONBLOCK));
	CHECK(!(fcntl(a, F_GETFD) & FD_CLOEXEC));
	CHECK(fcntl(b, F_GETFL) & O_NONBLOCK);
	CHECK(fcntl(b, F_GETFD) & FD_CLOEXEC);
	CHECK(!(fcntl(c, F_GETFL) & O_NONBLOCK));
	CHECK(fcntl(c, F_GETFD) & FD_CLOEXEC);
	CHECK_EQ((fcntl(a, F_GETFL) & O_ACCMODE), O_RDWR);
	/* tfd_read follows O_NONBLOCK as changed with fcntl. */
	CHECK_OK(fcntl(a, F_SETFL, O_NONBLOCK));
	CHECK_ERR(tfd_read(a, &n, 8), EAGAIN);
	CHECK_OK(fcntl(b, F_SETFL, 0));
	t_arm(b, 0, 10 * MS, 0);
	CHECK_READ(b, &n, 1);
	CHECK_OK(tfd_close(a));
	CHECK_OK(tfd_close(b));
	CHECK_OK(tfd_close(c));
}

/* A closed number's timer is kept by the engine's own files; its
 * fallback (tfd(7)) cannot keep it. */
static void need_private_files(void)
{
	if (!tfd_engine_private_files())
		t_skip("the engine runs its fallback here (tfd(7)), which "
		       "cannot keep this");
}

TEST(plain_close_never_writes_to_a_reused_number)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0), again;
	FILE *f;
	struct stat st;

	need_private_files();

	t_arm(fd, 0, MS, MS);
	CHECK_EQ(close(fd), 0);
	f = tmpfile();
	CHECK(f);
	CHECK_EQ(fileno(f), fd); /* the lowest free number comes back */
	t_sleep_ns(50 * MS);
	CHECK_EQ(fstat(fileno(f), &st), 0);
	CHECK_EQ(st.st_size, 0);
	fclose(f);
	/* The number comes back as a timer: the old one is forgotten. */
	again = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
	CHECK_EQ(again, fd);
	{
		struct itimerspec cur;
		uint64_t n;

		CHECK_EQ(tfd_gettime(again, &cur), 0);
		CHECK_EQ(t_ns(&cur.it_value), 0);
		CHECK_EQ(t_ns(&cur.it_interval), 0);
		t_sleep_ns(5 * MS);
		CHECK_ERR(tfd_read(again, &n, 8), EAGAIN);
	}
	CHECK_OK(tfd_close(again));
}

/* A timer and a thread that reads it. */
struct reader {
	int fd;
	pid_t tid;
};

/* Closes the timer once its reader sleeps. */
static void *close_soon(void *arg)
{
	struct reader *c = arg;

	CHECK(t_wait_asleep(c->tid));
	CHECK_OK(tfd_close(c->fd));
	return NULL;
}

/* SPEC 2, closing: the wait goes on and returns when the timer expires,
 * as Linux keeps the file of a descriptor being read (before: EBADF). */
TEST(close_while_another_thread_waits_in_tfd_read)
{
	struct reader c = { t_timer(CLOCK_MONOTONIC, 0), gettid() };
	int64_t t0 = t_now(CLOCK_MONOTONIC);
	pthread_t th;
	uint64_t n = 0;

	need_private_files();

	t_arm(c.fd, 0, 150 * MS, 0);
	CHECK_EQ(pthread_create(&th, NULL, close_soon, &c), 0);
	CHECK_READ(c.fd, &n, 1);
	CHECKF(t_now(CLOCK_MONOTONIC) - t0 >= 150 * MS, "woke early");
	pthread_join(th, NULL);
}

/* Reads the timer, after telling its thread id. */
static void *read_one(void *arg)
{
	struct reader *r = arg;
	uint64_t n = 0;

	__atomic_store_n(&r->tid, gettid(), __ATOMIC_RELEASE);
	CHECK_EQ(tfd_read(r->fd, &n, 8), 8);
	CHECK_GE(n, 1);
	return NULL;
}

/* Several readers of a closed periodic timer: each gets expirations, as
 * on Linux, and the last one out lets the timer go (the runner checks no
 * descriptor is left).  The close waits until all three wait. */
TEST(closed_timer_keeps_running_for_every_waiting_tfd_read)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0), i;
	struct reader r[3];
	pthread_t th[3];

	need_private_files();

	t_arm(fd, 0, 300 * MS, 20 * MS);
	for (i = 0; i < 3; i++) {
		r[i].fd = fd;
		r[i].tid = 0;
		CHECK_EQ(pthread_create(&th[i], NULL, read_one, &r[i]), 0);
	}
	for (i = 0; i < 3; i++) {
		while (!__atomic_load_n(&r[i].tid, __ATOMIC_ACQUIRE))
			t_sleep_ns(MS);
		CHECK(t_wait_asleep(r[i].tid));
	}
	CHECK_OK(tfd_close(fd));
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(tfd_engine_backend.count(), 0);
}

TEST(arming_a_plainly_closed_number_leaves_no_thread_behind)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0);
	struct itimerspec v = t_its(SEC, 0);

	CHECK_EQ(close(fd), 0);
	/* A misuse: the library still sees the old timer.  Nothing may stay
	 * behind (the runner checks descriptors), and the number, closed,
	 * says so. */
	CHECK_OK(tfd_settime(fd, 0, &v, NULL));
	CHECK_ERR(tfd_close(fd), EBADF);
	CHECK_EQ(tfd_engine_backend.count(), 0);
}

TEST(duplicated_descriptors_name_the_same_timer)
{
	int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK), d, d2;
	struct itimerspec cur;
	uint64_t n;

	d = (int)CHECK_OK(fcntl(fd, F_DUPFD_CLOEXEC, 0));
	CHECK_EQ(tfd_engine_backend.dup(fd, d), 0);
	t_arm(d, 0, 100 * MS, 0); /* still armed when queried, under valgrind too */
	CHECK_EQ(tfd_gettime(fd, &cur), 0);
	CHECK_GT(t_ns(&cur.it_value), 0);
	CHECK(t_readable(fd, 5000));
	CHECK_READ(fd, &n, 1);
	CHECK(!t_readable(d, 0));
	/* Closing one number keeps the timer for the other. */
	CHECK_OK(tfd_close(fd));
	t_arm(d, 0, 2 * MS, 0);
	CHECK(t_readable(d, 5000));
	CHECK_READ(d, &n, 1);
	/* dup2 onto another timer's number drops that timer there. */
	d2 = t_timer(CLOCK_REALTIME, 0);
	CHECK_EQ(dup2(d, d2), d2);
	CHECK_EQ(tfd_engine_backend.dup(d, d2), 0);
	CHECK_EQ(tfd_gettime(d2, &cur), 0);
	CHECK_EQ(tfd_engine_backend.dup(1000, 1001), EBADF);
	CHECK_OK(tfd_close(d));
	CHECK_OK(tfd_close(d2));
}

TEST(fast_unread_timer_is_coalesced_and_counted_exactly)
{
	int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
	int64_t e0 = t_now(CLOCK_MONOTONIC) + 10 * US, before, after;
	unsigned long w0, w1;
	uint64_t n;

	t_arm(fd, TFD_TIMER_ABSTIME, e0, 10 * US);
	t_sleep_ns(20 * MS);
	w0 = tfd_engine_wakeups();
	t_sleep_ns(200 * MS);
	w1 = tfd_engine_wakeups();
	/* 20,000 periods; the engine wakes about once per 4 ms. */
	CHECKF(w1 - w0 <= 100, "%lu wake-ups in 200 ms", w1 - w0);
	before = t_now(CLOCK_MONOTONIC);
	CHECK_EQ(tfd_read(fd, &n, 8), 8);
	after = t_now(CLOCK_MONOTONIC);
	CHECK_GE(n, t_due(e0, 10 * US, before));
	CHECK_LE(n, t_due(e0, 10 * US, after));
	CHECK_OK(tfd_close(fd));
}

TEST(plain_reads_of_a_fast_timer_lose_nothing)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0);
	int64_t e0 = t_now(CLOCK_MONOTONIC) + 50 * US, i = 50 * US;
	int64_t before, after;
	uint64_t n, total = 0;
	int k;

	t_arm(fd, TFD_TIMER_ABSTIME, e0, i);
	for (k = 0; k < 50; k++) {
		CHECK_EQ(read(fd, &n, 8), 8);
		CHECK_GE(n, 1);
		total += n;
		if (k % 10 == 0)
			t_sleep_ns(MS); /* let some posts go unread */
	}
	CHECK_OK(fcntl(fd, F_SETFL, O_NONBLOCK));
	before = t_now(CLOCK_MONOTONIC);
	if (tfd_read(fd, &n, 8) == 8)
		total += n;
	else
		CHECK_EQ(errno, EAGAIN);
	after = t_now(CLOCK_MONOTONIC);
	/* Plain reads may trail; with the final tfd_read, exact. */
	CHECKF(total >= t_due(e0, i, before) && total <= t_due(e0, i, after),
	       "total %lu, expected [%lu, %lu]", (unsigned long)total,
	       (unsigned long)t_due(e0, i, before),
	       (unsigned long)t_due(e0, i, after));
	CHECK_OK(tfd_close(fd));
}

/* ---- threads ---- */

enum { THREADS = 4, ROUNDS = 200 };
static int shared_fd;

static void *worker(void *arg)
{
	long id = (long)arg;
	int r;

	for (r = 0; r < ROUNDS; r++) {
		int own = t_timer(id % 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC,
		                   TFD_NONBLOCK);
		struct itimerspec cur, v = t_its((r % 3) * 100 * US + 1, 0);
		uint64_t n;

		CHECK_OK(tfd_settime(own, 0, &v, NULL));
		CHECK_OK(tfd_settime(shared_fd, 0, &v, &cur));
		CHECK_OK(tfd_gettime(shared_fd, &cur));
		if (tfd_read(shared_fd, &n, 8) < 0)
			CHECK_EQ(errno, EAGAIN);
		if (r % 4 == 0) {
			CHECK(t_readable(own, 5000));
			CHECK_READ(own, &n, 1);
		}
		CHECK_OK(tfd_close(own));
	}
	return NULL;
}

TEST(concurrent_use_from_several_threads)
{
	pthread_t th[THREADS];
	long i;

	shared_fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, worker, (void *)i), 0);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	CHECK_OK(tfd_close(shared_fd));
}

/* ---- fork and exec ---- */

TEST(fork_child_reads_inherited_timer_and_runs_its_own)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0), st, p[2];
	int64_t e0 = t_now(CLOCK_MONOTONIC) + 5 * MS, i = 5 * MS, end;
	uint64_t child_total = 0, parent_total = 0, n;
	pid_t pid;

	t_arm(fd, TFD_TIMER_ABSTIME, e0, i);
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	CHECK_GE(pid, 0);
	if (pid == 0) {
		struct itimerspec cur;
		int mine, k;

		close(p[0]);
		/* The inherited timer is the parent's too: a query sees it. */
		CHECK_EQ(tfd_gettime(fd, &cur), 0);
		CHECK_EQ(t_ns(&cur.it_interval), i);
		CHECK_LE(t_ns(&cur.it_value), i);
		CHECK_ERR(tfd_read(fd, NULL, 8), EFAULT);
		CHECK_ERR(tfd_read(fd, &n, 7), EINVAL);
		/* Its expirations arrive from the parent's engine. */
		for (k = 0; k < 3; k++) {
			CHECK_EQ(tfd_read(fd, &n, 8), 8);
			CHECK_GE(n, 1);
			child_total += n;
		}
		/* The engine works in the child for its own timers (it starts
		 * a thread: not under ThreadSanitizer, in a child of a threaded
		 * process). */
		if (!T_TSAN) {
			mine = t_timer(CLOCK_MONOTONIC, 0);
			t_arm(mine, 0, 5 * MS, 0);
			CHECK_READ(mine, &n, 1);
			CHECK_EQ(tfd_close(mine), 0);
		}
		CHECK_EQ(tfd_close(fd), 0);
		CHECK_EQ(write(p[1], &child_total, 8), 8);
		_exit(0);
	}
	close(p[1]);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EXIT(st, 0);
	CHECK_EQ(read(p[0], &child_total, 8), 8);
	close(p[0]);
	CHECK_EQ(tfd_read(fd, &n, 8), 8);
	parent_total = n;
	end = t_now(CLOCK_MONOTONIC);
	/* One count shared by both processes: nothing counted twice. */
	CHECKF(child_total + parent_total <= t_due(e0, i, end),
	       "child %lu + parent %lu > %lu", (unsigned long)child_total,
	       (unsigned long)parent_total, (unsigned long)t_due(e0, i, end));
	CHECK_GE(child_total, 3);
	CHECK_OK(tfd_close(fd));
}

/* The descriptors open in a program exec'd now, read from tfd-test --fds. */
static void fds_after_exec(unsigned char *open_map, size_t n)
{
	char self[256];
	int p[2], st;
	pid_t pid;
	FILE *f;
	long fd;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	CHECK_GT(len, 0);
	self[len] = 0;
	CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execl(self, self, "--fds", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	memset(open_map, 0, n);
	f = fdopen(p[0], "r");
	while (fscanf(f, "%ld", &fd) == 1)
		if (fd >= 0 && (size_t)fd < n)
			open_map[fd] = 1;
	fclose(f);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EXIT(st, 0);
}

TEST(exec_honours_close_on_exec_and_hides_private_descriptors)
{
	unsigned char base[1024], map[1024];
	int keep, gone, fd, extra = 0;

	fds_after_exec(base, sizeof(base)); /* what crosses exec anyway */
	keep = t_timer(CLOCK_MONOTONIC, 0);
	gone = t_timer(CLOCK_MONOTONIC, TFD_CLOEXEC);
	t_arm(keep, 0, 3600 * SEC, 0); /* the service thread's fds exist too */
	fds_after_exec(map, sizeof(map));
	CHECK(map[keep]);
	CHECK(!base[keep]);
	CHECK(!map[gone]);
	/* Only the user's descriptor without TFD_CLOEXEC crosses exec: the
	 * private duplicates and the thread's descriptors do not. */
	for (fd = 3; fd < (int)sizeof(map); fd++)
		if (map[fd] && !base[fd] && fd != keep)
			extra++;
	CHECKF(extra == 0, "%d more descriptors crossed exec", extra);
	CHECK_OK(tfd_close(keep));
	CHECK_OK(tfd_close(gone));
}

TEST(exec_leaves_a_descriptor_that_never_fires_again)
{
	char self[256], arg[16], out[32] = "";
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int p[2], st;
	pid_t pid;

	CHECK_GT(len, 0);
	self[len] = 0;
	CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		/* This process's engine ends with exec; no other has it. */
		int fd = t_timer(CLOCK_MONOTONIC, 0);

		t_arm(fd, 0, 20 * MS, 20 * MS);
		snprintf(arg, sizeof(arg), "%d", fd);
		dup2(p[1], 1);
		execl(self, self, "--poll", arg, "200", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	CHECK_GT(read(p[0], out, sizeof(out) - 1), 0);
	close(p[0]);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EXIT(st, 0);
	CHECKF(!strcmp(out, "idle\n"), "exec'd program saw: %s", out);
}

/* ---- idle cost and the service thread's lifetime ---- */

TEST_LIMIT(idle_thousand_timers_use_no_cpu, 30)
{
	enum { N = 1000 };
	static int fds[N];
	struct rusage r0, r1;
	int64_t cpu, t0, wall;
	unsigned long w0, w1;
	int i;

	for (i = 0; i < N; i++) {
		fds[i] = t_timer(i % 2 ? CLOCK_MONOTONIC : CLOCK_BOOTTIME, 0);
		t_arm(fds[i], 0, 3600 * SEC + i * MS, 0);
	}
	t_sleep_ns(10 * MS); /* let the thread settle into its sleep */
	w0 = tfd_engine_wakeups();
	CHECK_EQ(getrusage(RUSAGE_SELF, &r0), 0);
	t0 = t_now(CLOCK_MONOTONIC);
	t_sleep_ns(SEC);
	CHECK_EQ(getrusage(RUSAGE_SELF, &r1), 0);
	w1 = tfd_engine_wakeups();
	wall = t_now(CLOCK_MONOTONIC) - t0;
	cpu = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) * SEC +
	      (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) * US +
	      (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * SEC +
	      (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) * US;
	printf("idle: %ld ns CPU in %ld ns wall with %d timers armed, "
	       "%lu wake-ups\n", (long)cpu, (long)wall, N, w1 - w0);
	/* The thread sleeps until the first deadline, an hour away: it does
	 * not wake at all.  The CPU bound is loose on purpose (sanitizers
	 * run threads of their own); the wake-up count is the real check. */
	CHECK_EQ(w1, w0);
	CHECK_LE(cpu, 50 * MS);
	for (i = 0; i < N; i++)
		CHECK_OK(tfd_close(fds[i]));
}

TEST(no_descriptor_of_ours_survives_the_last_timer)
{
	unsigned char before[256], after[256];
	int round;

	(void)before;
	(void)after;
	for (round = 0; round < 3; round++) {
		int a = t_timer(CLOCK_MONOTONIC, 0);
		int b = t_timer(CLOCK_REALTIME, 0);

		t_arm(a, 0, MS, 0);
		t_arm(b, TFD_TIMER_ABSTIME, t_now(CLOCK_REALTIME) + MS, 0);
		CHECK(t_readable(a, 5000));
		CHECK(t_readable(b, 5000));
		CHECK_OK(tfd_close(a));
		CHECK_OK(tfd_close(b));
		/* The runner checks the descriptors after the test; here:
		 * the next timer gets the lowest numbers back. */
		a = t_timer(CLOCK_MONOTONIC, 0);
		CHECKF(a == 3 || fcntl(3, F_GETFD) >= 0,
		       "timer %d, while 3 is free", a);
		CHECK_OK(tfd_close(a));
	}
}

/* The service thread ends (its grace after the last timer made 1 ns) while
 * a create waits for it to take the new eventfd (no eventfd kept ready):
 * the create keeps its process record, and its timer is delivered.  The
 * thread used to free the record, which the create then gave its timer
 * as -1: no deliverer, and a shift by -1 (UBSan). */
TEST(create_while_the_service_thread_ends_delivers)
{
	struct itimerspec its = { { 0, 0 }, { 0, 1000000 } };
	uint64_t n;
	int i, fd;

	tfd_engine_pool_size(0);
	tfd_engine_grace(1);
	for (i = 0; i < 200; i++) {
		fd = tfd_create(CLOCK_MONOTONIC, 0);
		CHECK_GE(fd, 0);
		CHECK_EQ(tfd_settime(fd, 0, &its, NULL), 0);
		CHECK_EQ(tfd_read(fd, &n, sizeof(n)), (ssize_t)sizeof(n));
		CHECK_EQ(n, 1);
		CHECK_EQ(tfd_close(fd), 0);
		if (i % 4 == 0)
			usleep(200); /* the thread ends meanwhile */
	}
}

/* More timers than three chunks of holds (engine.h: 126 each), closed in
 * an order that empties some chunks and leaves others with room, made
 * again into the free holds, and inherited by a child: each timer is the
 * one its number names, and every hold goes with its last number. */
#define MANY 400

static void all_fire(const int *fd, const unsigned char *open_, int n)
{
	uint64_t v;
	int i;

	for (i = 0; i < n; i++)
		if (open_[i])
			t_arm(fd[i], 0, MS + i * 1000, 0);
	for (i = 0; i < n; i++)
		if (open_[i])
			CHECK_READ(fd[i], &v, 1);
}

TEST(holds_in_chunks_come_and_go)
{
	static int fd[MANY];
	static unsigned char open_[MANY];
	struct itimerspec cur;
	int i, st, left;
	pid_t pid;

	for (i = 0; i < MANY; i++) {
		fd[i] = t_timer(CLOCK_MONOTONIC, 0);
		open_[i] = 1;
	}
	CHECK_EQ(tfd_engine_holds(), MANY);
	/* The first chunk emptied, every third of the others (but
	 * MANY - 2). */
	for (i = 0; i < MANY; i++)
		if (i < 126 || i % 3 == 0) {
			CHECK_OK(tfd_close(fd[i]));
			open_[i] = 0;
		}
	for (i = left = 0; i < MANY; i++)
		left += open_[i];
	CHECK_EQ(tfd_engine_holds(), (size_t)left);
	all_fire(fd, open_, MANY);
	/* A child inherits them, and closes its numbers. */
	t_arm(fd[MANY - 2], 0, 10 * SEC, SEC);
	pid = fork();
	CHECK_GE(pid, 0);
	if (pid == 0) {
		CHECK_EQ(tfd_gettime(fd[MANY - 2], &cur), 0);
		CHECK_EQ(t_ns(&cur.it_interval), SEC);
		for (i = 0; i < MANY; i++)
			if (open_[i])
				CHECK_OK(tfd_close(fd[i]));
		CHECK_EQ(tfd_engine_holds(), 0);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EXIT(st, 0);
	/* Made again, into the free holds. */
	for (i = 0; i < MANY; i++)
		if (!open_[i]) {
			fd[i] = t_timer(CLOCK_MONOTONIC, 0);
			open_[i] = 1;
		}
	CHECK_EQ(tfd_engine_holds(), MANY);
	all_fire(fd, open_, MANY);
	for (i = MANY; i-- > 0;)
		CHECK_OK(tfd_close(fd[i]));
	CHECK_EQ(tfd_engine_holds(), 0);
}

/* The library's threads are what the timers need: the service thread for
 * any, the clock watcher only once a CLOCK_REALTIME timer exists, and
 * started before that create returns (a set after it is seen). */
TEST(clock_watcher_starts_with_the_first_realtime_timer)
{
	int n0 = t_threads(), n1, mono, real, again;

	mono = t_timer(CLOCK_MONOTONIC, 0);
	t_arm(mono, 0, 3600 * SEC, 0);
	n1 = t_threads();
	if (!T_TSAN) /* whose run-time starts a thread with the first */
		CHECK_EQ(n1, n0 + 1);
	real = t_timer(CLOCK_REALTIME, 0);
	CHECK_EQ(t_threads(), n1 + 1);
	again = t_timer(CLOCK_REALTIME, 0);
	CHECK_EQ(t_threads(), n1 + 1);
	CHECK_OK(tfd_close(again));
	CHECK_OK(tfd_close(real));
	CHECK_OK(tfd_close(mono));
}
