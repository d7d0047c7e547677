/* SPDX-License-Identifier: MIT */
/*
 * The virtual backend (tfd_virtual(3)): time moves only when told, every
 * expiration inside a step is delivered before the call returns.
 */
#include "t.h"

#include "tfd.h"
#include "backend.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

static struct timespec ts_of(int64_t ns)
{
	struct timespec ts = { ns / SEC, ns % SEC };

	return ts;
}

static void use_virtual(void)
{
	CHECK_OK(tfd_use_backend("virtual"));
	CHECK(!strcmp(tfd_backend_name(), "virtual"));
}

static void advance(int64_t ns)
{
	struct timespec d = { ns / SEC, ns % SEC };

	CHECK_OK(tfd_virtual_advance(&d));
}

static int64_t vnow(clockid_t c)
{
	struct timespec ts;

	CHECK_OK(tfd_virtual_now(c, &ts));
	return t_ns(&ts);
}

static int64_t remaining(int fd)
{
	struct itimerspec cur;

	CHECK_OK(tfd_gettime(fd, &cur));
	return t_ns(&cur.it_value);
}

static uint64_t count(int fd)
{
	uint64_t n = 0;

	if (tfd_read(fd, &n, 8) < 0)
		CHECK_EQ(errno, EAGAIN);
	return n;
}

static int timer(clockid_t c)
{
	return (int)CHECK_OK(tfd_create(c, TFD_NONBLOCK));
}

static void arm(int fd, int flags, int64_t value, int64_t interval)
{
	struct itimerspec v = t_its(value, interval);

	CHECK_OK(tfd_settime(fd, flags, &v, NULL));
}

/* The seed program's timed scenarios, re-expressed in virtual time: the
 * same counts (1, 5, 3, 21), the queries' remaining times exact. */
TEST(virtual_seed_scenarios_exact_and_instant)
{
	struct itimerspec utmr, outmr;
	int64_t t0 = t_now(CLOCK_MONOTONIC), spent;
	uint64_t ticks;
	int ufd, j;

	use_virtual();
	/* One-shot 500 ms: one expiration, read with plain read(). */
	utmr = t_its(500 * MS, 0);
	ufd = (int)CHECK_OK(timerfd(-1, CLOCK_REALTIME, 0, &utmr, NULL));
	advance(499 * MS);
	CHECK(!t_readable(ufd, 0));
	advance(1 * MS);
	CHECK_READ_SYS(ufd, &ticks, 1);
	/* Value 1 s, interval 2 s, ten 1-second steps with queries: 5. */
	utmr = t_its(SEC, 2 * SEC);
	CHECK_EQ(timerfd(ufd, -1, 0, &utmr, NULL), ufd);
	for (j = 0; j < 10; j++) {
		advance(SEC);
		CHECK_EQ(timerfd(ufd, -1, 0, NULL, &outmr), ufd);
		/* At t = j+1: next expiry at the next odd second. */
		CHECK_EQ(t_ns(&outmr.it_value), (j % 2 ? SEC : 2 * SEC));
	}
	CHECK_READ_SYS(ufd, &ticks, 5);
	/* Changed to value 1 s, interval 4 s: 3. */
	utmr = t_its(SEC, 4 * SEC);
	CHECK_EQ(timerfd(ufd, -1, 0, &utmr, &outmr), ufd);
	CHECK_EQ(t_ns(&outmr.it_value), SEC);
	CHECK_EQ(t_ns(&outmr.it_interval), 2 * SEC);
	for (j = 0; j < 10; j++) {
		advance(SEC);
		CHECK_EQ(timerfd(ufd, -1, 0, NULL, &outmr), ufd);
		CHECK_EQ(t_ns(&outmr.it_value), (4 - (j + 4) % 4) * SEC);
	}
	CHECK_READ_SYS(ufd, &ticks, 3);
	CHECK_OK(tfd_close(ufd));
	/* Absolute, 20 s in the past, interval 1 s: 21 at once. */
	utmr = t_its(vnow(CLOCK_REALTIME) - 20 * SEC, SEC);
	ufd = (int)CHECK_OK(timerfd(-1, CLOCK_REALTIME, TFD_TIMER_ABSTIME,
	                            &utmr, NULL));
	CHECK_READ_SYS(ufd, &ticks, 21);
	CHECK_EQ(remaining(ufd), SEC);
	CHECK_OK(tfd_close(ufd));
	spent = t_now(CLOCK_MONOTONIC) - t0;
	printf("virtual seed scenarios: %.3f ms of real time\n",
	       (double)spent / MS);
	CHECK_LT(spent, SEC); /* 21 s of timer time; far less of ours */
}

TEST(virtual_gettime_is_exact_to_the_nanosecond)
{
	int fd;

	use_virtual();
	fd = timer(CLOCK_MONOTONIC);
	arm(fd, 0, 1500 * MS + 7, 333);
	CHECK_EQ(remaining(fd), 1500 * MS + 7);
	advance(1500 * MS);
	CHECK_EQ(remaining(fd), 7);
	CHECK_EQ(count(fd), 0);
	advance(7);
	CHECK_EQ(remaining(fd), 333);
	CHECK_EQ(count(fd), 1);
	advance(333 * 1000 - 1);
	CHECK_EQ(count(fd), 999);
	CHECK_EQ(remaining(fd), 1);
	CHECK_OK(tfd_close(fd));
}

TEST(virtual_counts_every_interval_of_a_long_step)
{
	int a, b, c;

	use_virtual();
	a = timer(CLOCK_MONOTONIC);
	b = timer(CLOCK_BOOTTIME);
	c = timer(CLOCK_REALTIME);
	arm(a, 0, 1, 1); /* 1 ns period */
	arm(b, 0, SEC, 3 * SEC);
	arm(c, TFD_TIMER_ABSTIME, vnow(CLOCK_REALTIME) + 3600 * SEC, 0);
	advance(3600 * SEC);
	CHECK_EQ(count(a), (uint64_t)3600 * SEC);
	CHECK_EQ(count(b), 1200);
	CHECK_EQ(count(c), 1);
	CHECK_EQ(remaining(b), SEC);
	CHECK_EQ(remaining(c), 0);
	CHECK_OK(tfd_close(a));
	CHECK_OK(tfd_close(b));
	CHECK_OK(tfd_close(c));
}

TEST(virtual_readiness_through_poll_epoll_and_plain_read)
{
	int fd, ep;
	struct epoll_event ev = { EPOLLIN, { 0 } }, out;
	uint64_t n;

	use_virtual();
	fd = timer(CLOCK_MONOTONIC);
	ep = (int)CHECK_OK(epoll_create1(EPOLL_CLOEXEC));
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	arm(fd, 0, 10 * MS, 10 * MS);
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
	CHECK(!t_readable(fd, 0));
	advance(25 * MS);
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 1);
	CHECK(t_readable(fd, 0));
	CHECK_READ_SYS(fd, &n, 2);
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
	CHECK_ERR(read(fd, &n, 8), EAGAIN);
	/* Re-arm clears readiness on the virtual clock too. */
	advance(5 * MS);
	CHECK(t_readable(fd, 0));
	arm(fd, 0, SEC, 0);
	CHECK(!t_readable(fd, 0));
	close(ep);
	CHECK_OK(tfd_close(fd));
}

struct mover {
	int64_t step;
};

static void *move_later(void *arg)
{
	struct mover *m = arg;

	t_sleep_ns(30 * MS); /* real time: let the reader block first */
	advance(m->step);
	return NULL;
}

TEST(virtual_blocking_read_waits_for_another_thread)
{
	struct mover m = { 2 * SEC };
	pthread_t th;
	uint64_t n;
	int fd, plain;

	use_virtual();
	for (plain = 0; plain < 2; plain++) {
		fd = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
		arm(fd, 0, SEC, 0);
		CHECK_EQ(pthread_create(&th, NULL, move_later, &m), 0);
		if (plain)
			CHECK_READ_SYS(fd, &n, 1);
		else
			CHECK_READ(fd, &n, 1);
		pthread_join(th, NULL);
		CHECK_OK(tfd_close(fd));
	}
}

TEST(virtual_no_thread_and_no_descriptor_of_its_own)
{
	int fd, top, n0 = t_threads();

	use_virtual();
	fd = timer(CLOCK_MONOTONIC);
	top = dup(0);
	close(top);
	arm(fd, 0, SEC, SEC);
	/* Arming opened nothing: no service thread, no descriptor. */
	CHECK_EQ(dup(0), top);
	close(top);
	CHECK_EQ(t_threads(), n0);
	advance(10 * SEC);
	CHECK_EQ(count(fd), 10);
	CHECK_OK(tfd_close(fd));
}

/* ---- clock steps ---- */

TEST(virtual_realtime_forward_step_fires_absolute_timers)
{
	int abs_t, rel_t;
	struct timespec to;

	use_virtual();
	abs_t = timer(CLOCK_REALTIME);
	rel_t = timer(CLOCK_REALTIME);
	arm(abs_t, TFD_TIMER_ABSTIME, vnow(CLOCK_REALTIME) + 3600 * SEC, 0);
	arm(rel_t, 0, 60 * SEC, 0);
	to = ts_of(vnow(CLOCK_REALTIME) + 7200 * SEC);
	CHECK_OK(tfd_virtual_set_realtime(&to));
	CHECK_EQ(count(abs_t), 1);
	/* The relative one measures elapsed time: not moved. */
	CHECK_EQ(count(rel_t), 0);
	CHECK_EQ(remaining(rel_t), 60 * SEC);
	advance(60 * SEC);
	CHECK_EQ(count(rel_t), 1);
	CHECK_OK(tfd_close(abs_t));
	CHECK_OK(tfd_close(rel_t));
}

TEST(virtual_realtime_backward_step_delays_absolute_timers)
{
	int fd;
	int64_t at;
	struct timespec to;

	use_virtual();
	fd = timer(CLOCK_REALTIME);
	at = vnow(CLOCK_REALTIME) + 10 * SEC;
	arm(fd, TFD_TIMER_ABSTIME, at, 0);
	to = ts_of(vnow(CLOCK_REALTIME) - 100 * SEC);
	CHECK_OK(tfd_virtual_set_realtime(&to));
	CHECK_EQ(count(fd), 0);
	CHECK_EQ(remaining(fd), 110 * SEC); /* gettime grows */
	advance(110 * SEC - 1);
	CHECK_EQ(count(fd), 0);
	advance(1);
	CHECK_EQ(count(fd), 1);
	CHECK_EQ(vnow(CLOCK_REALTIME), at);
	CHECK_OK(tfd_close(fd));
}

/* SPEC 2, clock set backwards (epoll-shim's zero_read_on_abs_realtime):
 * a periodic absolute timer expired and unread when the clock goes back
 * 1 s: the next read returns no bytes, and the timer fires again at the
 * same expiry.  Before the fix: a count of 1, the expiry 2 s away. */
TEST(virtual_clock_set_back_gives_a_zero_read_and_the_same_expiry)
{
	int fd;
	int64_t at;
	struct timespec to;
	uint64_t n = 99;

	use_virtual();
	fd = timer(CLOCK_REALTIME);
	at = vnow(CLOCK_REALTIME) + SEC;
	arm(fd, TFD_TIMER_ABSTIME, at, SEC);
	advance(SEC); /* expired once, unread */
	CHECK(t_readable(fd, 0));
	to = ts_of(vnow(CLOCK_REALTIME) - SEC);
	CHECK_OK(tfd_virtual_set_realtime(&to));
	CHECK_EQ(tfd_read(fd, &n, 8), 0);
	CHECK_EQ(n, 99);
	CHECK(!t_readable(fd, 0));
	CHECK_EQ(remaining(fd), SEC); /* at `at` again */
	advance(SEC - 1);
	CHECK_EQ(count(fd), 0);
	advance(1);
	CHECK_EQ(vnow(CLOCK_REALTIME), at);
	CHECK_EQ(count(fd), 1);
	CHECK_OK(tfd_close(fd));
}

/* Two clock sets, each read in between: two ECANCELED (issue 13). */
TEST(virtual_two_clock_sets_give_two_cancellations)
{
	int fd, i;
	struct timespec to;
	uint64_t n;

	use_virtual();
	fd = timer(CLOCK_REALTIME);
	arm(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
	    vnow(CLOCK_REALTIME) + 3600 * SEC, 0);
	for (i = 0; i < 2; i++) {
		to = ts_of(vnow(CLOCK_REALTIME) + 5 * SEC);
		CHECK_OK(tfd_virtual_set_realtime(&to));
		CHECK_ERR(tfd_read(fd, &n, 8), ECANCELED);
		CHECK_ERR(tfd_read(fd, &n, 8), EAGAIN);
		advance(2 * SEC);
	}
	CHECK_OK(tfd_close(fd));
}

TEST(virtual_cancel_on_set)
{
	const int f = TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET;
	int on, off, mono;
	uint64_t n;
	struct timespec to;

	use_virtual();
	on = timer(CLOCK_REALTIME);
	off = timer(CLOCK_REALTIME);
	mono = timer(CLOCK_MONOTONIC);
	arm(on, f, vnow(CLOCK_REALTIME) + 3600 * SEC, 0);
	arm(off, TFD_TIMER_ABSTIME, vnow(CLOCK_REALTIME) + 3600 * SEC, 0);
	arm(mono, f, vnow(CLOCK_MONOTONIC) + 3600 * SEC, 0);
	/* Time passing is not a clock set. */
	advance(10 * SEC);
	CHECK(!t_readable(on, 0));
	/* A set to the current time changes nothing. */
	to = ts_of(vnow(CLOCK_REALTIME));
	CHECK_OK(tfd_virtual_set_realtime(&to));
	CHECK(!t_readable(on, 0));
	to.tv_sec -= 5;
	CHECK_OK(tfd_virtual_set_realtime(&to));
	CHECK(t_readable(on, 0));
	CHECK_ERR(tfd_read(on, &n, 8), ECANCELED);
	CHECK_ERR(tfd_read(on, &n, 8), EAGAIN);
	CHECK(!t_readable(off, 0));
	CHECK(!t_readable(mono, 0));
	/* A settime keeping the flag while a cancel is pending: ECANCELED,
	 * armed anyway. */
	to.tv_sec += 1;
	CHECK_OK(tfd_virtual_set_realtime(&to));
	{
		struct itimerspec v = t_its(vnow(CLOCK_REALTIME) + SEC, 0);

		CHECK_ERR(tfd_settime(on, f, &v, NULL), ECANCELED);
		CHECK_EQ(remaining(on), SEC);
		advance(SEC);
		CHECK_EQ(count(on), 1);
	}
	/* A suspend moves REALTIME against MONOTONIC: a cancel too. */
	{
		struct timespec d = { 30, 0 };

		arm(on, f, vnow(CLOCK_REALTIME) + 3600 * SEC, 0);
		CHECK_OK(tfd_virtual_suspend(&d));
		CHECK_ERR(tfd_read(on, &n, 8), ECANCELED);
	}
	CHECK_OK(tfd_close(on));
	CHECK_OK(tfd_close(off));
	CHECK_OK(tfd_close(mono));
}

TEST(virtual_suspend_freezes_monotonic_and_moves_boottime)
{
	int m, b, r, rr;
	struct timespec d = { 100, 0 };
	int64_t m0, b0, r0;

	use_virtual();
	m0 = vnow(CLOCK_MONOTONIC);
	b0 = vnow(CLOCK_BOOTTIME);
	r0 = vnow(CLOCK_REALTIME);
	m = timer(CLOCK_MONOTONIC);
	b = timer(CLOCK_BOOTTIME);
	r = timer(CLOCK_REALTIME);
	rr = timer(CLOCK_REALTIME);
	arm(m, 0, 50 * SEC, 0);
	arm(b, 0, 50 * SEC, 10 * SEC);
	arm(r, TFD_TIMER_ABSTIME, r0 + 50 * SEC, 0);
	arm(rr, 0, 50 * SEC, 0); /* relative realtime: elapsed time */
	CHECK_OK(tfd_virtual_suspend(&d));
	CHECK_EQ(vnow(CLOCK_MONOTONIC), m0);
	CHECK_EQ(vnow(CLOCK_BOOTTIME), b0 + 100 * SEC);
	CHECK_EQ(vnow(CLOCK_REALTIME), r0 + 100 * SEC);
	CHECK_EQ(count(m), 0);
	CHECK_EQ(remaining(m), 50 * SEC);
	CHECK_EQ(count(b), 6); /* 50, 60, ..., 100 */
	CHECK_EQ(count(r), 1);
	CHECK_EQ(count(rr), 0);
	CHECK_EQ(remaining(rr), 50 * SEC);
	CHECK_OK(tfd_close(m));
	CHECK_OK(tfd_close(b));
	CHECK_OK(tfd_close(r));
	CHECK_OK(tfd_close(rr));
}

/* ---- errors ---- */

TEST(virtual_calls_fail_without_the_virtual_backend)
{
	struct timespec ts = { 1, 0 };

	CHECK_OK(tfd_use_backend("engine"));
	CHECK_ERR(tfd_virtual_now(CLOCK_MONOTONIC, &ts), ENOTSUP);
	CHECK_ERR(tfd_virtual_advance(&ts), ENOTSUP);
	CHECK_ERR(tfd_virtual_suspend(&ts), ENOTSUP);
	CHECK_ERR(tfd_virtual_set_realtime(&ts), ENOTSUP);
	/* Argument errors come first. */
	CHECK_ERR(tfd_virtual_now(CLOCK_MONOTONIC, NULL), EFAULT);
	CHECK_ERR(tfd_virtual_now(CLOCK_TAI, &ts), EINVAL);
	CHECK_ERR(tfd_virtual_advance(NULL), EFAULT);
	ts.tv_nsec = 1000000000;
	CHECK_ERR(tfd_virtual_advance(&ts), EINVAL);
	CHECK_ERR(tfd_virtual_suspend(&ts), EINVAL);
	ts.tv_nsec = 0;
	ts.tv_sec = -1;
	CHECK_ERR(tfd_virtual_set_realtime(&ts), EINVAL);
	CHECK_ERR(tfd_virtual_set_realtime(NULL), EFAULT);
}

TEST(virtual_backend_switch_needs_no_open_timer)
{
	int fd;

	use_virtual();
	fd = timer(CLOCK_MONOTONIC);
	CHECK_ERR(tfd_use_backend("engine"), EBUSY);
	CHECK_ERR(tfd_use_backend("kernel"), EBUSY);
	CHECK_ERR(tfd_use_backend("nonesuch"), EINVAL);
	CHECK_OK(tfd_use_backend("virtual")); /* already: no change */
	CHECK_OK(tfd_close(fd));
	CHECK_OK(tfd_use_backend("engine"));
	CHECK(!strcmp(tfd_backend_name(), "engine"));
}

/* ---- the example event loop over one virtual hour ---- */

#include "../examples/loop.h"

struct record {
	int64_t start;
	int n;
	struct {
		int64_t at;
		enum loop_event ev;
		uint64_t count;
	} e[1024];
};

static void record(void *ctx, enum loop_event ev, uint64_t count)
{
	struct record *r = ctx;

	CHECK_LT(r->n, 1024);
	r->e[r->n].at = vnow(CLOCK_MONOTONIC) - r->start;
	r->e[r->n].ev = ev;
	r->e[r->n].count = count;
	r->n++;
}

/* The next deadline among the loop's timers, from now. */
static int64_t next_deadline(const struct loop *l)
{
	int fds[3] = { l->heartbeat, l->idle, l->deadline }, i;
	int64_t next = INT64_MAX;

	for (i = 0; i < 3; i++) {
		int64_t r = remaining(fds[i]);

		if (r > 0 && r < next)
			next = r;
	}
	return next;
}

TEST(virtual_event_loop_one_hour_exact_order_and_counts)
{
	static const int64_t typed[] = { 5 * SEC, 100 * SEC, 101 * SEC,
		                         2000 * SEC };
	static struct record r;
	struct loop l = { .emit = record, .ctx = &r };
	struct timespec end;
	int p[2], k = 0, i, hb = 0;
	int64_t t0 = t_now(CLOCK_MONOTONIC), spent;

	use_virtual();
	CHECK_EQ(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	r.start = vnow(CLOCK_MONOTONIC);
	end = ts_of(vnow(CLOCK_REALTIME) + 3600 * SEC);
	CHECK_OK(loop_open(&l, p[0], 7 * SEC, 30 * SEC, &end));
	while (!l.done) {
		int64_t now = vnow(CLOCK_MONOTONIC) - r.start, step;

		if (k < 4 && typed[k] == now) {
			CHECK_EQ(write(p[1], "x\n", 2), 2);
			k++;
		}
		if (CHECK_OK(loop_run_once(&l, 0)) > 0)
			continue;
		/* Nothing ready: move time to the next thing that happens,
		 * as a real loop would sleep in epoll_wait. */
		step = next_deadline(&l);
		if (k < 4 && typed[k] - now < step)
			step = typed[k] - now;
		advance(step);
	}
	loop_close(&l);
	close(p[0]);
	close(p[1]);
	spent = t_now(CLOCK_MONOTONIC) - t0;
	printf("one virtual hour: %d events in %.3f ms of real time\n", r.n,
	       (double)spent / MS);
	/* Expected: a heartbeat every 7 s, activity at 5, 100, 101, 2000 s,
	 * idle 30 s after the last activity (35, 131, 2030 s), then the
	 * deadline at 3600 s; every count 1, in time order. */
	for (i = 0; i < r.n; i++) {
		int64_t at = r.e[i].at;

		CHECK_EQ(r.e[i].count, 1);
		if (i > 0)
			CHECK_GE(at, r.e[i - 1].at);
		switch (r.e[i].ev) {
		case LOOP_HEARTBEAT:
			CHECKF(at == (int64_t)(++hb) * 7 * SEC,
			       "heartbeat %d at %ld", hb, (long)at);
			break;
		case LOOP_IDLE:
			CHECKF(at == 35 * SEC || at == 131 * SEC ||
			               at == 2030 * SEC,
			       "idle at %lld ns", (long long)at);
			break;
		case LOOP_ACTIVITY:
			CHECKF(at == 5 * SEC || at == 100 * SEC ||
			               at == 101 * SEC || at == 2000 * SEC,
			       "activity at %lld ns", (long long)at);
			break;
		case LOOP_DEADLINE:
			CHECK_EQ(at, 3600 * SEC);
			CHECK_EQ(i, r.n - 1);
			break;
		}
	}
	CHECK_EQ(hb, 514);            /* 7, 14, ..., 3598 */
	CHECK_EQ(r.n, 514 + 3 + 4 + 1);
	CHECK_LT(spent, SEC);
}

/* The hook of a virtual-time domain (tfd-preload(7)): the virtual clocks
 * start where it says, only while no timer is open, and only on them. */
TEST(virtual_start_sets_the_clocks_with_no_timer_open)
{
	struct timespec ts;
	int fd;

	CHECK_EQ(tfd_use_backend("engine"), 0);
	CHECK_EQ(tfd_engine_virtual_start(1, 2, 3), ENOTSUP);
	CHECK_EQ(tfd_use_backend("virtual"), 0);
	CHECK_EQ(tfd_engine_virtual_start(5000000000LL, 7000000000LL, 9000000000LL), 0);
	CHECK_EQ(tfd_virtual_now(CLOCK_MONOTONIC, &ts), 0);
	CHECK_EQ(ts.tv_sec, 5);
	CHECK_EQ(ts.tv_nsec, 0);
	CHECK_EQ(tfd_virtual_now(CLOCK_REALTIME, &ts), 0);
	CHECK_EQ(ts.tv_sec, 7);
	CHECK_EQ(tfd_virtual_now(CLOCK_BOOTTIME, &ts), 0);
	CHECK_EQ(ts.tv_sec, 9);
	fd = CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
	CHECK_EQ(tfd_engine_virtual_start(1, 1, 1), EBUSY);
	CHECK_EQ(tfd_virtual_now(CLOCK_MONOTONIC, &ts), 0);
	CHECK_EQ(ts.tv_sec, 5);
	CHECK_EQ(tfd_close(fd), 0);
	CHECK_EQ(tfd_use_backend("engine"), 0);
}

/* What the mover is told of a process's timers (backend virtual_unread,
 * tfd-preload(7)): the earliest expiry, on the virtual CLOCK_MONOTONIC, of
 * a timer whose file shows no post.  A posted timer is passed over while
 * its file shows the post (asked of shown(), and only for posts earlier
 * than the answer), counted again once read; a CLOCK_REALTIME deadline is
 * told on CLOCK_MONOTONIC; among 500 timers, none posted, shown() is
 * never asked. */
struct shown_ctx {
	int calls, answer;
};

static int shown_cb(int fd, int elsewhere, void *arg)
{
	struct shown_ctx *c = arg;
	struct pollfd p = { fd, POLLIN, 0 };

	CHECK_EQ(elsewhere, 0);
	c->calls++;
	return c->answer < 0 ? poll(&p, 1, 0) == 1 : c->answer;
}

static int64_t unread_at(struct shown_ctx *c)
{
	const struct tfd_backend *b = tfd_current_backend();
	int64_t at = -2;

	c->calls = 0;
	CHECK_OK(b->virtual_unread(&at, shown_cb, c));
	return at;
}

TEST(virtual_unread_deadline_skips_posted_timers_and_asks_little)
{
	enum { N = 500 };
	static int fd[N];
	struct shown_ctx c = { 0, -1 };
	int64_t m0, r0;
	int i, a, b, r;

	use_virtual();
	CHECK_EQ(tfd_current_backend()->virtual_unread != NULL, 1);
	m0 = vnow(CLOCK_MONOTONIC);
	r0 = vnow(CLOCK_REALTIME);
	CHECK_EQ(unread_at(&c), -1); /* no timer */
	a = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
	b = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
	r = t_timer(CLOCK_REALTIME, TFD_NONBLOCK);
	t_arm(a, TFD_TIMER_ABSTIME, m0 + 10 * MS, 10 * MS);
	t_arm(b, TFD_TIMER_ABSTIME, m0 + 15 * MS, 0);
	t_arm(r, TFD_TIMER_ABSTIME, r0 + 12 * MS, 0);
	CHECK_EQ(unread_at(&c), m0 + 10 * MS);
	CHECK_EQ(c.calls, 0);
	advance(10 * MS); /* a posted, next at 20: r (12 ms) is the earliest */
	CHECK_EQ(unread_at(&c), m0 + 12 * MS);
	CHECK_EQ(c.calls, 0); /* a's next (20) is past the answer */
	advance(3 * MS); /* r posted at 12; b at 15 */
	CHECK_EQ(unread_at(&c), m0 + 15 * MS);
	advance(2 * MS); /* b posted at 15; a's 20 is next, posted: shown */
	CHECK_EQ(unread_at(&c), -1);
	CHECK_EQ(c.calls, 1);
	c.answer = 0; /* read where we do not see it: a's 20 counts */
	CHECK_EQ(unread_at(&c), m0 + 20 * MS);
	c.answer = -1;
	CHECK_EQ(count(a), 1u); /* read here: a is unposted again */
	CHECK_EQ(unread_at(&c), m0 + 20 * MS);
	CHECK_EQ(c.calls, 0);
	for (i = 0; i < 3; i++)
		(void)count(i == 0 ? b : r);
	for (i = 0; i < N; i++) {
		fd[i] = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
		t_arm(fd[i], TFD_TIMER_ABSTIME, m0 + (int64_t)(N - i) * SEC, 0);
	}
	CHECK_EQ(unread_at(&c), m0 + 20 * MS);
	CHECK_EQ(c.calls, 0);
	for (i = 0; i < N; i++)
		CHECK_OK(tfd_close(fd[i]));
	CHECK_OK(tfd_close(a));
	CHECK_OK(tfd_close(b));
	CHECK_OK(tfd_close(r));
}

/* The same in a family: a child's settime of a shared timer (which goes
 * to the parent's inbox) is what the parent tells at once, and a timer
 * the child holds and the parent delivers is the child's to tell too. */
TEST(virtual_unread_deadline_sees_the_family)
{
	struct shown_ctx c = { 0, -1 };
	int go[2], back[2], a, status;
	int64_t m0;
	char ch = 0;
	pid_t pid;

	use_virtual();
	m0 = vnow(CLOCK_MONOTONIC);
	a = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
	t_arm(a, TFD_TIMER_ABSTIME, m0 + 10 * MS, 0);
	CHECK_OK(pipe(go));
	CHECK_OK(pipe(back));
	pid = fork();
	CHECK_GE(pid, 0);
	if (pid == 0) {
		int ok = unread_at(&c) == m0 + 10 * MS; /* the parent's */

		t_arm(a, TFD_TIMER_ABSTIME, m0 + 5 * MS, 0);
		ok = ok && unread_at(&c) == m0 + 5 * MS;
		ch = ok ? 'y' : 'n';
		if (write(back[1], &ch, 1) != 1 || read(go[0], &ch, 1) != 1)
			_exit(2);
		_exit(0);
	}
	CHECK_EQ(read(back[0], &ch, 1), 1);
	CHECK_EQ(ch, 'y');
	CHECK_EQ(unread_at(&c), m0 + 5 * MS);
	CHECK_EQ(write(go[1], "x", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK_OK(tfd_close(a));
	close(go[0]);
	close(go[1]);
	close(back[0]);
	close(back[1]);
}
