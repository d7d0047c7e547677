/* SPDX-License-Identifier: MIT */
/*
 * The revised interface of the 2007 proposal (SPEC section 3): its seven
 * checks in order, its four call shapes, our departures, and the
 * proposal's own test program run unmodified.
 */
#include "t.h"

#include "backend.h"
#include "engine/hooks.h"
#include "tfd.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

static const int BADFD = 1000;

static int made(struct itimerspec v, int flags)
{
	return (int)CHECK_OK(timerfd(-1, CLOCK_MONOTONIC, flags, &v, NULL));
}

TEST(revised_check1_clock)
{
	struct itimerspec v = t_its(SEC, 0), out;
	int fd = made(v, 0);

	/* An existing timer keeps its clock: clockid must be -1. */
	CHECK_ERR(timerfd(fd, CLOCK_REALTIME, 0, &v, NULL), EINVAL);
	CHECK_ERR(timerfd(fd, CLOCK_MONOTONIC, 0, NULL, &out), EINVAL);
	/* Before EBADF (check 7) for a closed descriptor. */
	CHECK_ERR(timerfd(BADFD, CLOCK_MONOTONIC, 0, &v, NULL), EINVAL);
	/* New timers need a supported clock; ufd < 0 checks it too. */
	CHECK_ERR(timerfd(-1, -1, 0, &v, NULL), EINVAL);
	CHECK_ERR(timerfd(-1, 99, 0, &v, NULL), EINVAL);
	CHECK_ERR(timerfd(-1, CLOCK_PROCESS_CPUTIME_ID, 0, &v, NULL), EINVAL);
	CHECK_ERR(timerfd(-5, -1, 0, &v, NULL), EINVAL);
	/* ...before flags (check 2). */
	CHECK_ERR(timerfd(-1, 99, 0xff, &v, NULL), EINVAL);
	CHECK_OK(tfd_close(fd));
}

TEST(revised_check2_flags)
{
	struct itimerspec v = t_its(SEC, 0), out;
	int fd = made(v, 0);

	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0xff, &v, NULL), EINVAL);
	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 4, &v, NULL), EINVAL);
	/* Creation flags only when creating. */
	CHECK_ERR(timerfd(fd, -1, TFD_NONBLOCK, &v, NULL), EINVAL);
	CHECK_ERR(timerfd(fd, -1, TFD_CLOEXEC, &v, &out), EINVAL);
	/* Before check 3 (flags with a query) and check 7 (EBADF). */
	CHECK_ERR(timerfd(fd, -1, 0x10, NULL, &out), EINVAL);
	CHECK_ERR(timerfd(BADFD, -1, 0xff, &v, NULL), EINVAL);
	CHECK_OK(tfd_close(fd));
}

TEST(revised_check3_query_takes_no_flags)
{
	struct itimerspec v = t_its(SEC, 0), out;
	int fd = made(v, 0);

	CHECK_ERR(timerfd(fd, -1, TFD_TIMER_ABSTIME, NULL, &out), EINVAL);
	CHECK_ERR(timerfd(fd, -1, TFD_TIMER_CANCEL_ON_SET, NULL, &out), EINVAL);
	CHECK_ERR(timerfd(BADFD, -1, TFD_TIMER_ABSTIME, NULL, &out), EINVAL);
	CHECK_OK(tfd_close(fd));
}

TEST(revised_check4_creation_needs_value_and_no_old)
{
	struct itimerspec v = t_its(SEC, 0), out;

	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, &v, &out), EINVAL);
	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, NULL, &out), EINVAL);
	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, NULL, NULL), EINVAL);
	/* Before the timespec check (6). */
	v.it_value.tv_nsec = -1;
	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, &v, &out), EINVAL);
}

TEST(revised_check5_something_to_do)
{
	struct itimerspec v = t_its(SEC, 0);
	int fd = made(v, 0);

	CHECK_ERR(timerfd(fd, -1, 0, NULL, NULL), EINVAL);
	CHECK_ERR(timerfd(BADFD, -1, 0, NULL, NULL), EINVAL);
	CHECK_OK(tfd_close(fd));
}

TEST(revised_check6_timespec)
{
	static const struct timespec bad[] = {
		{ -1, 0 }, { 0, -1 }, { 0, 1000000000 }, { 1, 2000000000 }
	};
	struct itimerspec v = t_its(SEC, 0), out;
	int fd = made(v, 0);
	size_t i;

	for (i = 0; i < 4; i++) {
		struct itimerspec a = t_its(SEC, 0), b = t_its(0, 0);

		a.it_value = bad[i];
		b.it_interval = bad[i];
		CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, &a, NULL), EINVAL);
		CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, &b, NULL), EINVAL);
		CHECK_ERR(timerfd(fd, -1, 0, &a, &out), EINVAL);
		CHECK_ERR(timerfd(fd, -1, 0, &b, NULL), EINVAL);
		/* Before EBADF. */
		CHECK_ERR(timerfd(BADFD, -1, 0, &a, NULL), EINVAL);
		CHECK_ERR(timerfd(-2, CLOCK_MONOTONIC, 0, &b, NULL), EINVAL);
	}
	CHECK_OK(tfd_close(fd));
}

TEST(revised_check7_descriptor)
{
	struct itimerspec v = t_its(SEC, 0), out;
	int p[2];

	CHECK_ERR(timerfd(BADFD, -1, 0, &v, NULL), EBADF);
	CHECK_ERR(timerfd(BADFD, -1, 0, NULL, &out), EBADF);
	/* ufd < -1 is a bad descriptor, not a creation. */
	CHECK_ERR(timerfd(-2, CLOCK_MONOTONIC, 0, &v, NULL), EBADF);
	CHECK_ERR(timerfd(-100, CLOCK_REALTIME, 0, &v, NULL), EBADF);
	CHECK_EQ(pipe(p), 0);
	CHECK_ERR(timerfd(p[0], -1, 0, &v, NULL), EINVAL);
	CHECK_ERR(timerfd(p[1], -1, 0, NULL, &out), EINVAL);
	close(p[0]);
	close(p[1]);
}

TEST(revised_eperm_alarm_clock)
{
	struct itimerspec v = t_its(SEC, 0);

	CHECK_ERR(timerfd(-1, CLOCK_REALTIME_ALARM, 0, &v, NULL), EPERM);
	CHECK_ERR(timerfd(-1, CLOCK_BOOTTIME_ALARM, 0, &v, NULL), EPERM);
}

TEST(revised_ecanceled_on_change)
{
	struct itimerspec v = t_its(0, 0), out;
	const int f = TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET;
	int fd;

	v.it_value.tv_sec = time(NULL) + 3600;
	fd = (int)CHECK_OK(timerfd(-1, CLOCK_REALTIME, f, &v, NULL));
	tfd_engine_clock_was_set();
	CHECK_ERR(timerfd(fd, -1, f, &v, &out), ECANCELED);
	CHECK_EQ(timerfd(fd, -1, f, &v, &out), fd);
	CHECK_OK(tfd_close(fd));
}

TEST(revised_calls_return_the_descriptor_and_keep_errno)
{
	struct itimerspec v = t_its(10 * SEC, 2 * SEC), out;
	int fd;

	errno = 77;
	fd = timerfd(-1, CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC, &v, NULL);
	CHECK_GE(fd, 0);
	CHECK_EQ(errno, 77);
	CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	/* Query. */
	CHECK_EQ(timerfd(fd, -1, 0, NULL, &out), fd);
	CHECK_EQ(errno, 77);
	CHECK_GT(t_ns(&out.it_value), 9 * SEC);
	CHECK_LE(t_ns(&out.it_value), 10 * SEC);
	CHECK_EQ(out.it_interval.tv_sec, 2);
	CHECK_EQ(out.it_interval.tv_nsec, 0);
	/* Change, getting the old setting. */
	v = t_its(5 * SEC, 0);
	CHECK_EQ(timerfd(fd, -1, 0, &v, &out), fd);
	CHECK_GT(t_ns(&out.it_value), 9 * SEC);
	CHECK_EQ(out.it_interval.tv_sec, 2);
	/* Change without old. */
	v = t_its(0, 0);
	CHECK_EQ(timerfd(fd, -1, TFD_TIMER_ABSTIME, &v, NULL), fd);
	CHECK_EQ(timerfd(fd, -1, 0, NULL, &out), fd);
	CHECK_EQ(t_ns(&out.it_value), 0);
	CHECK_EQ(t_ns(&out.it_interval), 0);
	CHECK_OK(tfd_close(fd));
	/* Created disarmed ({0,0}) is allowed, as in the seed program. */
	fd = made(t_its(0, 0), 0);
	CHECK_EQ(timerfd(fd, -1, 0, NULL, &out), fd);
	CHECK_EQ(t_ns(&out.it_value), 0);
	CHECK_OK(tfd_close(fd));
}

TEST(revised_departure_query_reports_zero_not_one_ns)
{
	struct itimerspec out;
	int fd = made(t_its(MS, 0), 0);
	uint64_t n;

	t_sleep_ns(20 * MS);
	/* The proposal said {0, 1 ns} here; a fired one-shot is {0,0}. */
	CHECK_EQ(timerfd(fd, -1, 0, NULL, &out), fd);
	CHECK_EQ(out.it_value.tv_sec, 0);
	CHECK_EQ(out.it_value.tv_nsec, 0);
	/* And the query did not forward it: exactly one expiration. */
	t_sleep_ns(20 * MS);
	CHECK_READ_SYS(fd, &n, 1);
	CHECK_EQ(timerfd(fd, -1, 0, NULL, &out), fd);
	CHECK_EQ(out.it_value.tv_sec, 0);
	CHECK_EQ(out.it_value.tv_nsec, 0);
	CHECK_OK(tfd_close(fd));
}

TEST(revised_queries_lose_no_expiration)
{
	struct itimerspec out;
	int64_t e0 = t_now(CLOCK_MONOTONIC) + 5 * MS, end; /* at the most */
	int fd = made(t_its(5 * MS, 5 * MS), 0), i;
	uint64_t n, total = 0;

	for (i = 0; i < 20; i++) {
		t_sleep_ns(2 * MS);
		CHECK_EQ(timerfd(fd, -1, 0, NULL, &out), fd);
	}
	CHECK_EQ(tfd_read(fd, &n, 8), 8);
	total = n;
	end = t_now(CLOCK_MONOTONIC);
	CHECK_GE(total, 1);
	CHECK_LE(total, 1 + (uint64_t)((end - e0 + MS) / (5 * MS)));
	CHECK_OK(tfd_close(fd));
}

/* Run the proposal's program (built unmodified, see the Makefile) on the
 * given backend: it must say "All tests passed successfully".  Without
 * it (a clone with no $(SEEDS) beside it) the test is skipped: the make
 * file says why in TFD_SEED_SKIP. */
static void run_seed(const char *backend)
{
	const char *bin = getenv("TFD_SEED"), *why = getenv("TFD_SEED_SKIP");
	char cmd[512], line[256];
	int ok = 0, st;
	FILE *p;

	if (!bin || !*bin)
		t_skip("the 2007 proposal's test program was not built: %s",
		       why && *why ? why : "TFD_SEED is not set");
	snprintf(cmd, sizeof(cmd), "TFD_BACKEND=%s %s 2>&1", backend, bin);
	p = popen(cmd, "r");
	CHECK_NE(p, NULL);
	while (fgets(line, sizeof(line), p)) {
		fputs(line, stdout);
		if (!strcmp(line, "All tests passed successfully\n"))
			ok = 1;
	}
	st = pclose(p);
	CHECK(ok);
	CHECK_EXIT(st, 0);
}

TEST_LIMIT(seed_program_passes_unmodified, 60)
{
	run_seed("engine");
}

TEST_LIMIT(seed_program_passes_on_the_kernel_backend, 60)
{
	run_seed("kernel");
}
