/* SPDX-License-Identifier: MIT */
/*
 * Every errno of SPEC section 2, per function, in the SPEC's check order:
 * where two checks fail at once, the earlier one decides.
 */
#include "t.h"

#include "backend.h"
#include "engine/hooks.h"
#include "tfd.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/timerfd.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

static const struct itimerspec zero;
static const int BADFD = 1000; /* never open in a test process */

static int timer(int flags)
{
	return (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, flags));
}

/* ---- tfd_create ---- */

TEST(create_einval_flags)
{
	CHECK_ERR(tfd_create(CLOCK_MONOTONIC, 1), EINVAL);
	CHECK_ERR(tfd_create(CLOCK_MONOTONIC, TFD_TIMER_ABSTIME), EINVAL);
	CHECK_ERR(tfd_create(CLOCK_MONOTONIC, ~0), EINVAL);
	CHECK_ERR(tfd_create(CLOCK_MONOTONIC, O_APPEND), EINVAL);
}

TEST(create_einval_clock)
{
	CHECK_ERR(tfd_create(-1, 0), EINVAL);
	CHECK_ERR(tfd_create(99, 0), EINVAL);
	CHECK_ERR(tfd_create(CLOCK_PROCESS_CPUTIME_ID, 0), EINVAL);
	CHECK_ERR(tfd_create(CLOCK_THREAD_CPUTIME_ID, 0), EINVAL);
	CHECK_ERR(tfd_create(CLOCK_MONOTONIC_RAW, 0), EINVAL);
	CHECK_ERR(tfd_create(CLOCK_REALTIME_COARSE, 0), EINVAL);
	CHECK_ERR(tfd_create(CLOCK_TAI, 0), EINVAL);
}

TEST(create_eperm_alarm_clocks_after_einval)
{
	CHECK_ERR(tfd_create(CLOCK_REALTIME_ALARM, 0), EPERM);
	CHECK_ERR(tfd_create(CLOCK_BOOTTIME_ALARM, TFD_CLOEXEC), EPERM);
	/* A bad flag is checked first. */
	CHECK_ERR(tfd_create(CLOCK_BOOTTIME_ALARM, 1), EINVAL);
}

TEST(create_emfile)
{
	struct rlimit old, low;
	int fd = timer(0), next, fd2;

	if (t_valgrind())
		t_skip("valgrind keeps descriptors of its own under the limit");
	next = dup(0); /* the lowest free number: the runner may hold some */
	CHECK_GE(next, 0);
	close(next);
	/* No descriptor left: EMFILE.  One left: a timer, as on Linux (it
	 * takes one descriptor, the user's). */
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)next;
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
	CHECK_ERR(tfd_create(CLOCK_MONOTONIC, 0), EMFILE);
	low.rlim_cur = (rlim_t)next + 1;
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
	fd2 = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
	CHECK_EQ(fd2, next);
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
	CHECK_OK(tfd_close(fd2));
	CHECK_OK(tfd_close(fd));
}

TEST(create_is_disarmed_and_keeps_errno)
{
	static const clockid_t clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC,
		                            CLOCK_BOOTTIME };
	struct itimerspec cur;
	size_t i;

	for (i = 0; i < 3; i++) {
		int fd;

		errno = 1234;
		fd = tfd_create(clocks[i], 0);
		CHECK_GE(fd, 0);
		CHECK_EQ(errno, 1234);
		memset(&cur, 0x55, sizeof(cur));
		CHECK_EQ(tfd_gettime(fd, &cur), 0);
		CHECK_EQ(errno, 1234);
		CHECK_EQ(memcmp(&cur, &zero, sizeof(cur)), 0);
		CHECK_EQ(tfd_settime(fd, 0, &zero, NULL), 0);
		CHECK_EQ(errno, 1234);
		CHECK_EQ(tfd_close(fd), 0);
		CHECK_EQ(errno, 1234);
	}
}

/* ---- tfd_settime ---- */

TEST(settime_efault_first)
{
	int fd = timer(0);

	CHECK_ERR(tfd_settime(fd, 0, NULL, NULL), EFAULT);
	CHECK_ERR(tfd_settime(BADFD, 0, NULL, NULL), EFAULT);
	CHECK_ERR(tfd_settime(-1, ~0, NULL, NULL), EFAULT);
	CHECK_OK(tfd_close(fd));
}

TEST(settime_einval_flags_before_ebadf)
{
	struct itimerspec v = t_its(SEC, 0);
	int fd = timer(0);

	CHECK_ERR(tfd_settime(fd, 4, &v, NULL), EINVAL);
	CHECK_ERR(tfd_settime(fd, TFD_NONBLOCK, &v, NULL), EINVAL);
	CHECK_ERR(tfd_settime(BADFD, 4, &v, NULL), EINVAL);
	CHECK_ERR(tfd_settime(-1, ~0, &v, NULL), EINVAL);
	CHECK_OK(tfd_close(fd));
}

TEST(settime_einval_timespec_before_ebadf)
{
	static const struct timespec bad[] = {
		{ -1, 0 }, { 0, -1 }, { 0, 1000000000 }, { 1, 2000000000 },
		{ -5, 999999999 },
	};
	int fd = timer(0);
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct itimerspec v = t_its(SEC, 0), w = t_its(SEC, 0),
		                  z = t_its(0, 0);

		v.it_value = bad[i];
		w.it_interval = bad[i];
		z.it_interval = bad[i]; /* interval checked with value 0 */
		CHECK_ERR(tfd_settime(fd, 0, &v, NULL), EINVAL);
		CHECK_ERR(tfd_settime(fd, 0, &w, NULL), EINVAL);
		CHECK_ERR(tfd_settime(fd, TFD_TIMER_ABSTIME, &z, NULL), EINVAL);
		CHECK_ERR(tfd_settime(BADFD, 0, &v, NULL), EINVAL);
		CHECK_ERR(tfd_settime(-1, 0, &z, NULL), EINVAL);
	}
	/* The extremes of the valid range are accepted. */
	{
		struct itimerspec ok = t_its(0, 0);

		ok.it_value.tv_nsec = 999999999;
		ok.it_interval.tv_sec = 0x7fffffffffffffffL;
		ok.it_interval.tv_nsec = 999999999;
		CHECK_EQ(tfd_settime(fd, 0, &ok, NULL), 0);
	}
	CHECK_OK(tfd_close(fd));
}

TEST(settime_ebadf_then_einval_not_a_timer)
{
	struct itimerspec v = t_its(SEC, 0);
	int p[2];

	CHECK_ERR(tfd_settime(BADFD, 0, &v, NULL), EBADF);
	CHECK_ERR(tfd_settime(-1, 0, &v, NULL), EBADF);
	CHECK_ERR(tfd_settime(-1000, TFD_TIMER_ABSTIME, &v, NULL), EBADF);
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(tfd_settime(p[0], 0, &v, NULL), EINVAL);
	CHECK_ERR(tfd_settime(p[1], 0, &v, NULL), EINVAL);
	close(p[0]);
	close(p[1]);
}

TEST(settime_einval_on_kernel_timerfd)
{
	struct itimerspec v = t_its(SEC, 0), cur;
	int k = timerfd_create(CLOCK_MONOTONIC, 0);

	CHECK_GE(k, 0);
	CHECK_ERR(tfd_settime(k, 0, &v, NULL), EINVAL);
	CHECK_ERR(tfd_gettime(k, &cur), EINVAL);
	close(k);
}

TEST(settime_old_value_is_the_previous_setting)
{
	struct itimerspec v = t_its(10 * SEC, 3 * SEC), old;
	int fd = timer(0);

	memset(&old, 0x55, sizeof(old));
	CHECK_EQ(tfd_settime(fd, 0, &v, &old), 0);
	CHECK_EQ(memcmp(&old, &zero, sizeof(old)), 0);
	v = t_its(0, 0);
	CHECK_EQ(tfd_settime(fd, 0, &v, &old), 0);
	CHECK_EQ(old.it_interval.tv_sec, 3);
	CHECK_EQ(old.it_interval.tv_nsec, 0);
	CHECKF(old.it_value.tv_sec == 9 || old.it_value.tv_sec == 10,
	       "%ld s left", (long)old.it_value.tv_sec);
	CHECK_GT(t_ns(&old.it_value), 9 * SEC);
	CHECK_LE(t_ns(&old.it_value), 10 * SEC);
	/* Disarmed, interval kept (0 here), and the old value says so. */
	CHECK_EQ(tfd_settime(fd, 0, &v, &old), 0);
	CHECK_EQ(memcmp(&old, &zero, sizeof(old)), 0);
	CHECK_OK(tfd_close(fd));
}

static int cancel_timer(void)
{
	struct itimerspec v = t_its(0, 0);
	int fd = (int)CHECK_OK(tfd_create(CLOCK_REALTIME, TFD_NONBLOCK));

	v.it_value.tv_sec = time(NULL) + 3600;
	CHECK_OK(tfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
	                     &v, NULL));
	return fd;
}

TEST(settime_ecanceled_arms_anyway)
{
	const int flags = TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET;
	struct itimerspec v = t_its(0, 0), old, cur;
	int fd = cancel_timer();
	uint64_t n;

	tfd_engine_clock_was_set();
	CHECK(t_readable(fd, 0));
	memset(&old, 0x55, sizeof(old));
	/* 0.5 s ahead: time(NULL) + 1 was as little as a few microseconds
	 * ahead near the end of a second, due before the query below */
	v = t_its(t_now(CLOCK_REALTIME) + 500 * MS, 0);
	CHECK_ERR(tfd_settime(fd, flags, &v, &old), ECANCELED);
	/* old_value is not written on failure, as on Linux. */
	CHECK_EQ(old.it_value.tv_sec, 0x5555555555555555L);
	/* The new value is armed, readiness cleared, ECANCELED once. */
	CHECK_EQ(tfd_gettime(fd, &cur), 0);
	CHECK_GT(t_ns(&cur.it_value), 0);
	CHECK(!t_readable(fd, 0));
	CHECK_EQ(tfd_settime(fd, flags, &v, NULL), 0);
	CHECK(t_readable(fd, 3000));
	CHECK_READ(fd, &n, 1);
	/* Disarming does not report (nor consume) a pending cancellation. */
	tfd_engine_clock_was_set();
	CHECK_EQ(tfd_settime(fd, flags, &zero, NULL), 0);
	CHECK(!t_readable(fd, 0));
	/* Settime without CANCEL_ON_SET forgets it, as Linux does. */
	tfd_engine_clock_was_set();
	v = t_its(3600 * SEC, 0);
	CHECK_EQ(tfd_settime(fd, 0, &v, NULL), 0);
	CHECK_ERR(tfd_read(fd, &n, 8), EAGAIN);
	CHECK_OK(tfd_close(fd));
}

TEST(settime_cancel_on_set_ignored_without_abstime_or_realtime)
{
	struct itimerspec v = t_its(3600 * SEC, 0);
	int r = (int)CHECK_OK(tfd_create(CLOCK_REALTIME, TFD_NONBLOCK));
	int m = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	uint64_t n;

	CHECK_EQ(tfd_settime(r, TFD_TIMER_CANCEL_ON_SET, &v, NULL), 0);
	v.it_value.tv_sec = 1 << 30;
	CHECK_EQ(tfd_settime(m, TFD_TIMER_CANCEL_ON_SET | TFD_TIMER_ABSTIME, &v, NULL), 0);
	tfd_engine_clock_was_set();
	CHECK(!t_readable(r, 10));
	CHECK(!t_readable(m, 0));
	CHECK_ERR(tfd_read(r, &n, 8), EAGAIN);
	CHECK_ERR(tfd_read(m, &n, 8), EAGAIN);
	CHECK_EQ(tfd_settime(r, 0, &v, NULL), 0);
	CHECK_OK(tfd_close(r));
	CHECK_OK(tfd_close(m));
}

/* ---- tfd_gettime ---- */

TEST(gettime_ebadf_einval_efault_in_order)
{
	struct itimerspec cur;
	int fd = timer(0), p[2];

	CHECK_ERR(tfd_gettime(BADFD, &cur), EBADF);
	CHECK_ERR(tfd_gettime(BADFD, NULL), EBADF);
	CHECK_ERR(tfd_gettime(-1, NULL), EBADF);
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(tfd_gettime(p[0], &cur), EINVAL);
	CHECK_ERR(tfd_gettime(p[0], NULL), EINVAL);
	CHECK_ERR(tfd_gettime(fd, NULL), EFAULT);
	close(p[0]);
	close(p[1]);
	CHECK_OK(tfd_close(fd));
}

/* ---- tfd_read ---- */

TEST(read_einval_short_buffer_after_ebadf)
{
	char buf[16];
	int fd = timer(TFD_NONBLOCK), p[2];
	struct itimerspec v = t_its(1, 0);

	CHECK_ERR(tfd_read(BADFD, buf, 7), EBADF);
	CHECK_ERR(tfd_read(BADFD, buf, 8), EBADF);
	CHECK_ERR(tfd_read(fd, buf, 7), EINVAL);
	CHECK_ERR(tfd_read(fd, buf, 0), EINVAL);
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(tfd_read(p[0], buf, 8), EINVAL);
	close(p[0]);
	close(p[1]);
	/* An expired timer: still EINVAL for 7 bytes, and the count stays. */
	CHECK_EQ(tfd_settime(fd, 0, &v, NULL), 0);
	CHECK(t_readable(fd, 2000));
	CHECK_ERR(tfd_read(fd, buf, 7), EINVAL);
	CHECK_EQ(tfd_read(fd, buf, 16), 8);
	CHECK_EQ(*(uint64_t *)(void *)buf, 1);
	CHECK_OK(tfd_close(fd));
}

TEST(read_efault_null_buffer)
{
	int fd = timer(0); /* blocking, disarmed: would wait forever */

	CHECK_ERR(tfd_read(fd, NULL, 8), EFAULT);
	CHECK_ERR(tfd_read(BADFD, NULL, 8), EBADF);
	CHECK_OK(tfd_close(fd));
}

TEST(read_eagain_nonblocking)
{
	uint64_t n;
	struct itimerspec v = t_its(3600 * SEC, 0);
	int fd = timer(TFD_NONBLOCK);

	CHECK_ERR(tfd_read(fd, &n, 8), EAGAIN);
	CHECK_EQ(tfd_settime(fd, 0, &v, NULL), 0);
	CHECK_ERR(tfd_read(fd, &n, 8), EAGAIN);
	CHECK_OK(tfd_close(fd));
}

static void on_signal(int sig)
{
	(void)sig;
}

struct kill_later {
	pthread_t target;
	pthread_t self;
};

static void *kill_thread(void *arg)
{
	struct kill_later *k = arg;

	t_sleep_ns(50 * MS);
	pthread_kill(k->target, SIGUSR1);
	return NULL;
}

/* SIGUSR1 to the calling thread in 50 ms. */
static void signal_soon(struct kill_later *k)
{
	k->target = pthread_self();
	CHECK_EQ(pthread_create(&k->self, NULL, kill_thread, k), 0);
}

TEST(read_eintr_without_sa_restart)
{
	struct sigaction sa;
	uint64_t n;
	int fd = timer(0);

	struct kill_later k;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	signal_soon(&k);
	CHECK_ERR(tfd_read(fd, &n, 8), EINTR);
	pthread_join(k.self, NULL);
	CHECK_OK(tfd_close(fd));
}

TEST(read_restarts_with_sa_restart)
{
	struct sigaction sa;
	struct itimerspec v = t_its(300 * MS, 0);
	uint64_t n = 0;
	int fd = timer(0);
	int64_t t0 = t_now(CLOCK_MONOTONIC);

	struct kill_later k;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	CHECK_EQ(tfd_settime(fd, 0, &v, NULL), 0);
	signal_soon(&k);
	CHECK_READ(fd, &n, 1);
	pthread_join(k.self, NULL);
	CHECK_GE(t_now(CLOCK_MONOTONIC) - t0, 300 * MS);
	CHECK_OK(tfd_close(fd));
}

TEST(read_ecanceled_once_and_discards)
{
	uint64_t n;
	int fd = cancel_timer();

	tfd_engine_clock_was_set();
	CHECK(t_readable(fd, 0));
	CHECK_ERR(tfd_read(fd, &n, 8), ECANCELED);
	CHECK(!t_readable(fd, 0));
	CHECK_ERR(tfd_read(fd, &n, 8), EAGAIN);
	/* The timer is still armed; the next clock set cancels again. */
	tfd_engine_clock_was_set();
	CHECK_ERR(tfd_read(fd, &n, 8), ECANCELED);
	CHECK_OK(tfd_close(fd));
}

/* ---- tfd_close ---- */

TEST(close_ebadf_and_plain_descriptors)
{
	int p[2];

	CHECK_ERR(tfd_close(BADFD), EBADF);
	CHECK_ERR(tfd_close(-1), EBADF);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(tfd_close(p[0]), 0); /* not a timer: closed as close(2) */
	CHECK_ERR(fcntl(p[0], F_GETFD), EBADF);
	close(p[1]);
	{
		int fd = timer(0);

		CHECK_EQ(tfd_close(fd), 0);
		CHECK_ERR(tfd_close(fd), EBADF);
		CHECK_ERR(tfd_gettime(fd, NULL), EBADF);
	}
}

TEST(read_ecanceled_keeps_a_periodic_timer_running)
{
	struct itimerspec v = t_its(0, 5 * MS);
	int fd = (int)CHECK_OK(tfd_create(CLOCK_REALTIME, 0));
	uint64_t n;

	v.it_value.tv_sec = time(NULL) - 1; /* pending at once */
	CHECK_OK(tfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
	                     &v, NULL));
	CHECK(t_readable(fd, 2000));
	tfd_engine_clock_was_set();
	CHECK_ERR(tfd_read(fd, &n, 8), ECANCELED);
	/* Unlike Linux (tfd(7), NOTES 14), the period goes on. */
	CHECK_EQ(tfd_read(fd, &n, 8), 8);
	CHECK_GE(n, 1);
	CHECK_OK(tfd_close(fd));
}
