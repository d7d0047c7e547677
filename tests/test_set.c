/* SPDX-License-Identifier: MIT */
/*
 * Timer sets (tfd_set(3)): keys armed, re-armed, cancelled and read as
 * timerfd_settime(2), timerfd_gettime(2) and read(2) would each of them,
 * behind one descriptor; every errno of the page; the arithmetic of
 * src/core/set.c against a plain reference.
 */
#include "t.h"

#include "tfd.h"
#include "core/set.h"
#include "engine/hooks.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define REC ((ssize_t)sizeof(struct tfd_expiry))

static void use_virtual(void)
{
	CHECK_OK(tfd_use_backend("virtual"));
}

static void advance(int64_t ns)
{
	struct timespec d = { ns / SEC, ns % SEC };

	CHECK_OK(tfd_virtual_advance(&d));
}

static void arm(int sfd, uint64_t key, int64_t value, int64_t interval)
{
	struct itimerspec v = t_its(value, interval);

	CHECK_OK(tfd_set_settime(sfd, key, 0, &v, NULL));
}

/* A read that must give exactly n records; they are in rec. */
static void read_n(int sfd, struct tfd_expiry *rec, size_t room, long n)
{
	ssize_t r = tfd_set_read(sfd, rec, room * sizeof(*rec));

	CHECKF(r == n * REC, "tfd_set_read: %zd (%s), want %ld records", r,
	       r < 0 ? strerrorname_np(errno) : "-", n);
}

static void check_rec(const struct tfd_expiry *r, uint64_t key,
                      uint64_t count)
{
	CHECK_EQ(r->key, key);
	CHECK_EQ(r->count, count);
}

TEST(set_keys_come_due_in_order_once_each_with_their_counts)
{
	struct tfd_expiry rec[8];
	struct itimerspec cur;
	int sfd;

	use_virtual();
	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	arm(sfd, 30, 30 * MS, 0);
	arm(sfd, 10, 10 * MS, 0);
	arm(sfd, 20, 20 * MS, 10 * MS); /* periodic */
	arm(sfd, UINT64_MAX, 55 * MS, 0);
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), EAGAIN);
	advance(10 * MS - 1); /* never early */
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), EAGAIN);
	advance(1);
	read_n(sfd, rec, 8, 1);
	check_rec(&rec[0], 10, 1);
	advance(30 * MS); /* at 40 ms: 20 three times, 30 once */
	read_n(sfd, rec, 8, 2);
	check_rec(&rec[0], 20, 3);
	check_rec(&rec[1], 30, 1);
	/* One-shot keys read are forgotten; the periodic one stays. */
	CHECK_ERR(tfd_set_gettime(sfd, 10, &cur), ENOENT);
	CHECK_ERR(tfd_set_gettime(sfd, 30, &cur), ENOENT);
	CHECK_OK(tfd_set_gettime(sfd, 20, &cur));
	CHECK_EQ(t_ns(&cur.it_value), 10 * MS);
	CHECK_EQ(t_ns(&cur.it_interval), 10 * MS);
	CHECK_OK(tfd_set_gettime(sfd, UINT64_MAX, &cur));
	CHECK_EQ(t_ns(&cur.it_value), 15 * MS);
	advance(15 * MS); /* 20 at 50 ms, the last key at 55 */
	read_n(sfd, rec, 8, 2);
	check_rec(&rec[0], 20, 1);
	check_rec(&rec[1], UINT64_MAX, 1);
	CHECK_OK(tfd_close(sfd));
}

TEST(set_readable_only_while_a_key_has_unread_expirations)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct tfd_expiry rec[4];
	int sfd, ep;

	use_virtual();
	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_BOOTTIME, TFD_NONBLOCK));
	ep = (int)CHECK_OK(epoll_create1(0));
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev));
	CHECK_EQ(t_readable(sfd, 0), 0);
	arm(sfd, 1, 5 * MS, 0);
	arm(sfd, 2, 7 * MS, 0);
	CHECK_EQ(t_readable(sfd, 0), 0);
	advance(5 * MS);
	CHECK_EQ(t_readable(sfd, 0), 1);
	CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 1);
	/* Cancelling the only key due leaves nothing to read. */
	arm(sfd, 1, 0, 0);
	CHECK_EQ(t_readable(sfd, 0), 0);
	CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 0);
	advance(2 * MS);
	CHECK_EQ(t_readable(sfd, 0), 1);
	read_n(sfd, rec, 4, 1);
	check_rec(&rec[0], 2, 1);
	CHECK_EQ(t_readable(sfd, 0), 0);
	close(ep);
	CHECK_OK(tfd_close(sfd));
}

TEST(set_rearm_discards_unread_expirations_and_gives_the_old_setting)
{
	struct itimerspec v = t_its(40 * MS, 0), old;
	struct tfd_expiry rec[2];
	int sfd;

	use_virtual();
	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	CHECK_OK(tfd_set_settime(sfd, 7, 0, &v, &old));
	CHECK_EQ(t_ns(&old.it_value), 0); /* not armed before: zeros */
	arm(sfd, 8, MS, MS);
	advance(5 * MS); /* 8 has 5 unread */
	v = t_its(10 * MS, 0);
	CHECK_OK(tfd_set_settime(sfd, 8, 0, &v, &old));
	CHECK_EQ(t_ns(&old.it_interval), MS);
	CHECK_LE(t_ns(&old.it_value), MS);
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), EAGAIN);
	advance(10 * MS);
	read_n(sfd, rec, 2, 1);
	check_rec(&rec[0], 8, 1);
	/* Absolute, in the past: due at once. */
	v = t_its(MS, 0);
	CHECK_OK(tfd_set_settime(sfd, 9, TFD_TIMER_ABSTIME, &v, NULL));
	read_n(sfd, rec, 2, 1);
	check_rec(&rec[0], 9, 1);
	CHECK_OK(tfd_close(sfd));
}

TEST(set_read_hands_out_whole_records_and_keeps_the_rest)
{
	struct tfd_expiry rec[3];
	int sfd, k;

	use_virtual();
	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_REALTIME, TFD_NONBLOCK));
	for (k = 0; k < 5; k++)
		arm(sfd, (uint64_t)k, (k + 1) * MS, 0);
	advance(10 * MS);
	CHECK_EQ(tfd_set_read(sfd, rec, 2 * REC + REC / 2), 2 * REC);
	check_rec(&rec[0], 0, 1);
	check_rec(&rec[1], 1, 1);
	read_n(sfd, rec, 3, 3);
	check_rec(&rec[2], 4, 1);
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), EAGAIN);
	CHECK_OK(tfd_close(sfd));
}

/* On real clocks, each backend: a key's record comes at its deadline or
 * later, never before, and every key comes once. */
static void never_early(const char *backend)
{
	struct tfd_expiry rec[16];
	int64_t start, due[40];
	int sfd, k, got = 0, seen[40] = { 0 };

	CHECK_OK(tfd_use_backend(backend));
	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, 0));
	start = t_now(CLOCK_MONOTONIC);
	for (k = 0; k < 40; k++) {
		struct itimerspec v = t_its(start + (k * 7 % 30 + 1) * MS, 0);

		due[k] = t_ns(&v.it_value);
		CHECK_OK(tfd_set_settime(sfd, (uint64_t)k, TFD_TIMER_ABSTIME,
		                         &v, NULL));
	}
	while (got < 40) {
		ssize_t r = CHECK_OK(tfd_set_read(sfd, rec, sizeof(rec)));
		int64_t now = t_now(CLOCK_MONOTONIC);
		int i;

		for (i = 0; i < r / REC; i++) {
			CHECK_LT(rec[i].key, 40u);
			CHECK_EQ(seen[rec[i].key]++, 0);
			CHECK_EQ(rec[i].count, 1u);
			CHECK_GE(now, due[rec[i].key]);
			got++;
		}
	}
	CHECK_OK(tfd_close(sfd));
}

TEST(set_never_early_on_the_engine)
{
	never_early("engine");
}

TEST(set_never_early_on_the_kernel_backend)
{
	never_early("kernel");
}

/* A dense set on real time: keys 10 us apart, read through epoll as
 * they come, none early, none lost, none twice. */
TEST(set_dense_keys_never_early)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct tfd_expiry rec[64];
	int64_t start, now;
	int sfd, ep, k, got = 0, seen[400] = { 0 };

	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	ep = (int)CHECK_OK(epoll_create1(0));
	CHECK_OK(epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev));
	start = t_now(CLOCK_MONOTONIC) + 20 * MS;
	for (k = 0; k < 400; k++) {
		struct itimerspec v = t_its(start + k * 10 * US, 0);

		CHECK_OK(tfd_set_settime(sfd, (uint64_t)k, TFD_TIMER_ABSTIME,
		                         &v, NULL));
	}
	while (got < 400) {
		ssize_t r;

		CHECK_EQ(epoll_wait(ep, &ev, 1, 5000), 1);
		while ((r = tfd_set_read(sfd, rec, sizeof(rec))) > 0) {
			now = t_now(CLOCK_MONOTONIC);
			for (k = 0; k < r / REC; k++) {
				CHECK_LT(rec[k].key, 400u);
				CHECK_EQ(seen[rec[k].key]++, 0);
				CHECK_GE(now, start + (int64_t)rec[k].key *
				                              10 * US);
			}
			got += (int)(r / REC);
		}
	}
	close(ep);
	CHECK_OK(tfd_close(sfd));
}

/* Polls sfd, not waiting, until the clock reaches until: readable only
 * once the clock, read after the poll, has reached earliest (a poll can
 * return well after the clock read before it, on a slow machine). */
static void quiet_until(int sfd, int64_t earliest, int64_t until)
{
	for (;;) {
		int readable = t_readable(sfd, 0);
		int64_t now = t_now(CLOCK_MONOTONIC);

		if (readable)
			CHECK_GE(now, earliest);
		if (readable || now >= until)
			return;
	}
}

/* Key 1 due in 2 ms and key 2 gap after it, read as key 1 comes due:
 * key 2 is not readable before slack has passed since that read (the
 * clock read after each poll, until quiet has), and then comes once.
 * Skipped when the machine never read key 1 alone. */
static void slack_case(int sfd, int64_t gap, int64_t slack, int64_t quiet)
{
	struct tfd_expiry rec[2];
	int tries;

	for (tries = 0; tries < 20; tries++) {
		int64_t start = t_now(CLOCK_MONOTONIC) + 2 * MS, before;
		struct itimerspec a = t_its(start, 0);
		struct itimerspec b = t_its(start + gap, 0);
		ssize_t r;

		CHECK_OK(tfd_set_settime(sfd, 1, TFD_TIMER_ABSTIME, &a, NULL));
		CHECK_OK(tfd_set_settime(sfd, 2, TFD_TIMER_ABSTIME, &b, NULL));
		while ((before = t_now(CLOCK_MONOTONIC)) < start)
			; /* read as soon as it is due, not when a wake comes */
		r = tfd_set_read(sfd, rec, sizeof(rec));
		if (r != REC) { /* both due already: too slow */
			CHECK_EQ(r, 2 * REC);
			continue;
		}
		check_rec(&rec[0], 1, 1);
		quiet_until(sfd, before + slack, before + quiet);
		CHECK_EQ(t_readable(sfd, 1000), 1);
		read_n(sfd, rec, 2, 1);
		check_rec(&rec[0], 2, 1);
		break;
	}
	CHECK_OK(tfd_close(sfd));
	if (tries == 20)
		t_skip("the first key was never read before the second was "
		       "due (a slow machine)");
}

/* Right after a read that took keys, the set's timer is not armed for
 * the next before the slack has passed (50 us: tfd_set(3), NOTES), so
 * that dense keys are read some at a time: a key due 30 us after the one
 * read is not readable until 50 us after that read began.  (Armed at its
 * deadline, as before, it was.)  Skipped if the machine is too slow to
 * read the first before the second is due. */
TEST(set_slack_after_a_read_on_real_time)
{
	slack_case((int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC,
	                                        TFD_NONBLOCK)),
	           30 * US, 50 * US, 45 * US);
}

/* The slack is the timer slack of the thread that made the set: with
 * 20 ms, a key due 2 ms after a read is not readable before 15 ms have
 * passed (the timer is armed 20 ms after the read, so it cannot be
 * sooner), and then comes once. */
TEST(set_slack_is_the_timer_slack_of_the_thread_that_made_it)
{
	int sfd;

	CHECK_OK(prctl(PR_SET_TIMERSLACK, 20 * MS, 0, 0, 0));
	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	CHECK_OK(prctl(PR_SET_TIMERSLACK, 0, 0, 0, 0)); /* (the default) */
	slack_case(sfd, 2 * MS, 20 * MS, 15 * MS);
}

/* On the virtual clock there is no slack: a key due 10 us after a read
 * is readable at its deadline. */
TEST(set_virtual_clock_has_no_slack)
{
	struct tfd_expiry rec[2];
	int sfd;

	use_virtual();
	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	arm(sfd, 1, MS, 0);
	arm(sfd, 2, MS + 10 * US, 0);
	advance(MS);
	read_n(sfd, rec, 2, 1);
	CHECK_EQ(t_readable(sfd, 0), 0);
	advance(10 * US);
	CHECK_EQ(t_readable(sfd, 0), 1);
	read_n(sfd, rec, 2, 1);
	check_rec(&rec[0], 2, 1);
	CHECK_OK(tfd_close(sfd));
}

struct arm_later {
	int sfd;
	uint64_t key;
};

static void *arm_later(void *p)
{
	struct arm_later *a = p;

	t_sleep_ns(20 * MS);
	arm(a->sfd, a->key, MS, 0);
	return NULL;
}

/* A blocking read with no key armed waits for one armed meanwhile by
 * another thread, as a read of a disarmed timerfd does. */
TEST(set_blocking_read_waits_for_a_key_armed_by_another_thread)
{
	struct arm_later a;
	struct tfd_expiry rec[2];
	pthread_t th;

	a.sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
	a.key = 42;
	CHECK_EQ(fcntl(a.sfd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CHECK_EQ(pthread_create(&th, NULL, arm_later, &a), 0);
	read_n(a.sfd, rec, 2, 1);
	check_rec(&rec[0], 42, 1);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_OK(tfd_close(a.sfd));
}

/* In a child of fork() a set's descriptor is no set (tfd_set(3), BUGS);
 * the child's timers work, and the parent's set goes on. */
TEST(set_in_a_child_of_fork_is_no_set)
{
	struct itimerspec v = t_its(10 * MS, 0);
	struct tfd_expiry rec;
	int sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, 0)), st;
	pid_t pid;

	CHECK_OK(tfd_set_settime(sfd, 5, 0, &v, NULL));
	pid = fork();
	CHECK_GE(pid, 0);
	if (pid == 0) {
		uint64_t n;
		int fd;

		if (tfd_set_settime(sfd, 6, 0, &v, NULL) != -1 ||
		    errno != EINVAL)
			_exit(1);
		fd = tfd_create(CLOCK_MONOTONIC, 0);
		if (fd < 0 || tfd_settime(fd, 0, &v, NULL) != 0 ||
		    tfd_read(fd, &n, sizeof(n)) != 8 || n != 1)
			_exit(2);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EQ(st, 0);
	CHECK_EQ(tfd_set_read(sfd, &rec, sizeof(rec)), REC);
	CHECK_EQ(rec.key, 5u);
	CHECK_OK(tfd_close(sfd));
}

static void on_alarm(int sig)
{
	(void)sig;
}

TEST(set_errors_create)
{
	CHECK_ERR(tfd_set_create(CLOCK_PROCESS_CPUTIME_ID, 0), EINVAL);
	CHECK_ERR(tfd_set_create(CLOCK_REALTIME_ALARM, 0), EINVAL);
	CHECK_ERR(tfd_set_create(CLOCK_MONOTONIC, TFD_TIMER_ABSTIME), EINVAL);
	CHECK_ERR(tfd_set_create(CLOCK_MONOTONIC, -1), EINVAL);
}

TEST(set_errors_settime)
{
	struct itimerspec v = t_its(SEC, 0), bad = t_its(SEC, 0);
	int sfd = (int)CHECK_OK(tfd_set_create(CLOCK_REALTIME, 0));
	int tfd = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0)), p[2];

	CHECK_OK(pipe(p));
	bad.it_value.tv_nsec = SEC;
	/* The value first, then the descriptor, as tfd_settime. */
	CHECK_ERR(tfd_set_settime(-1, 1, 0, NULL, NULL), EFAULT);
	CHECK_ERR(tfd_set_settime(-1, 1, 0, &bad, NULL), EINVAL);
	CHECK_ERR(tfd_set_settime(sfd, 1, 4, &v, NULL), EINVAL);
	CHECK_ERR(tfd_set_settime(sfd, 1, TFD_TIMER_CANCEL_ON_SET | 4, &v,
	                          NULL), EINVAL);
	/* CANCEL_ON_SET is a flag of a timer: accepted (and without
	 * TFD_TIMER_ABSTIME ignored), as by timerfd_settime(2). */
	CHECK_OK(tfd_set_settime(sfd, 1, TFD_TIMER_CANCEL_ON_SET, &v, NULL));
	bad = t_its(SEC, 0);
	bad.it_interval.tv_sec = -1;
	CHECK_ERR(tfd_set_settime(sfd, 1, 0, &bad, NULL), EINVAL);
	CHECK_ERR(tfd_set_settime(p[1] + 100, 1, 0, &v, NULL), EBADF);
	CHECK_ERR(tfd_set_settime(p[0], 1, 0, &v, NULL), EINVAL);
	CHECK_ERR(tfd_set_settime(tfd, 1, 0, &v, NULL), EINVAL);
	/* A set is no timer either. */
	CHECK_ERR(tfd_settime(sfd, 0, &v, NULL), EINVAL);
	CHECK_ERR(tfd_gettime(sfd, &v), EINVAL);
	CHECK_ERR(timerfd(sfd, -1, 0, NULL, &v), EINVAL);
	CHECK_OK(tfd_set_settime(sfd, 1, 0, &v, NULL));
	close(p[0]);
	close(p[1]);
	CHECK_OK(tfd_close(tfd));
	CHECK_OK(tfd_close(sfd));
}

TEST(set_errors_gettime)
{
	struct itimerspec v = t_its(SEC, 0), cur;
	int sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, 0)), p[2];

	CHECK_OK(pipe(p));
	CHECK_ERR(tfd_set_gettime(p[1] + 100, 1, &cur), EBADF);
	CHECK_ERR(tfd_set_gettime(p[0], 1, &cur), EINVAL);
	CHECK_ERR(tfd_set_gettime(sfd, 1, &cur), ENOENT);
	CHECK_ERR(tfd_set_gettime(sfd, 1, NULL), ENOENT);
	CHECK_OK(tfd_set_settime(sfd, 1, 0, &v, NULL));
	CHECK_ERR(tfd_set_gettime(sfd, 1, NULL), EFAULT);
	v = t_its(0, 0); /* a zero value forgets the key */
	CHECK_OK(tfd_set_settime(sfd, 1, 0, &v, NULL));
	CHECK_ERR(tfd_set_gettime(sfd, 1, &cur), ENOENT);
	close(p[0]);
	close(p[1]);
	CHECK_OK(tfd_close(sfd));
}

TEST(set_errors_read)
{
	struct sigaction sa;
	struct tfd_expiry rec[2];
	int sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, 0)), p[2];
	int nb = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	uint64_t n;

	CHECK_OK(pipe(p));
	CHECK_ERR(tfd_set_read(p[1] + 100, rec, sizeof(rec)), EBADF);
	CHECK_ERR(tfd_set_read(p[0], rec, sizeof(rec)), EINVAL);
	CHECK_ERR(tfd_set_read(sfd, rec, REC - 1), EINVAL);
	CHECK_ERR(tfd_set_read(sfd, rec, 0), EINVAL);
	CHECK_ERR(tfd_set_read(sfd, NULL, sizeof(rec)), EFAULT);
	CHECK_ERR(tfd_set_read(nb, rec, sizeof(rec)), EAGAIN);
	CHECK_ERR(tfd_read(sfd, &n, sizeof(n)), EINVAL);
	/* no timer before a bad buffer, as for a pipe */
	CHECK_ERR(tfd_read(sfd, NULL, sizeof(n)), EINVAL);
	/* A blocking read interrupted by a handler (no SA_RESTART). */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	CHECK_OK(sigaction(SIGALRM, &sa, NULL));
	alarm(1);
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), EINTR);
	signal(SIGALRM, SIG_DFL);
	close(p[0]);
	close(p[1]);
	CHECK_OK(tfd_close(nb));
	CHECK_OK(tfd_close(sfd));
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), EBADF);
}

/* ---- TFD_TIMER_CANCEL_ON_SET ---- */

#define CANCEL_FLAGS (TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET)

static void arm_at(int sfd, uint64_t key, int flags, int64_t at,
                   int64_t interval)
{
	struct itimerspec v = t_its(at, interval);

	CHECK_OK(tfd_set_settime(sfd, key, flags, &v, NULL));
}

static int64_t vnow(clockid_t c)
{
	struct timespec ts;

	CHECK_OK(tfd_virtual_now(c, &ts));
	return t_ns(&ts);
}

static void set_realtime(int64_t to)
{
	struct timespec ts = { to / SEC, to % SEC };

	CHECK_OK(tfd_virtual_set_realtime(&ts));
}

/* The next read of a non-blocking set reports the clock set, once: the
 * descriptor readable for it, and not after it. */
static void cancelled_once(int sfd)
{
	struct tfd_expiry rec[2];

	CHECK_EQ(t_readable(sfd, 0), 1);
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), ECANCELED);
	CHECK_EQ(t_readable(sfd, 0), 0);
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), EAGAIN);
}

/* A key armed with TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET on a
 * CLOCK_REALTIME set: a clock set makes the next read fail with
 * ECANCELED, once; keys stay armed and keep their expirations; time
 * passing is no clock set, and the flag is ignored where a timerfd
 * ignores it. */
TEST(set_cancel_on_set_on_the_virtual_clock)
{
	struct tfd_expiry rec[4];
	struct itimerspec cur;
	int64_t t0;
	int sfd, mono, rel;

	use_virtual();
	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_REALTIME, TFD_NONBLOCK));
	mono = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, TFD_NONBLOCK));
	rel = (int)CHECK_OK(tfd_set_create(CLOCK_REALTIME, TFD_NONBLOCK));
	t0 = vnow(CLOCK_REALTIME);
	arm_at(sfd, 1, CANCEL_FLAGS, t0 + 3600 * SEC, 0);
	arm_at(sfd, 2, TFD_TIMER_ABSTIME, t0 + 2 * SEC, SEC);
	arm_at(mono, 1, CANCEL_FLAGS, vnow(CLOCK_MONOTONIC) + 3600 * SEC, 0);
	arm_at(rel, 1, TFD_TIMER_CANCEL_ON_SET, 3600 * SEC, 0);
	advance(2 * SEC);
	read_n(sfd, rec, 4, 1);
	check_rec(&rec[0], 2, 1);
	set_realtime(vnow(CLOCK_REALTIME)); /* to the time it is: no set */
	CHECK_EQ(t_readable(sfd, 0), 0);
	set_realtime(vnow(CLOCK_REALTIME) - 5 * SEC);
	cancelled_once(sfd);
	CHECK_EQ(t_readable(mono, 0), 0);
	CHECK_EQ(t_readable(rel, 0), 0);
	/* Still armed, on the wall clock: key 2 next at t0 + 3 s. */
	advance(6 * SEC - 1);
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), EAGAIN);
	advance(1);
	read_n(sfd, rec, 4, 1);
	check_rec(&rec[0], 2, 1);
	/* Past key 1: the cancellation first, then every record due. */
	set_realtime(t0 + 3600 * SEC);
	CHECK_EQ(t_readable(sfd, 0), 1);
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), ECANCELED);
	CHECK_EQ(t_readable(sfd, 0), 1); /* for the keys due */
	CHECK_OK(tfd_set_gettime(sfd, 1, &cur));
	CHECK_EQ(t_ns(&cur.it_value), 0); /* due, its record unread */
	CHECK_EQ(tfd_set_read(sfd, rec, sizeof(rec)), 2 * REC);
	check_rec(&rec[0], 2, 3597);
	check_rec(&rec[1], 1, 1);
	CHECK_ERR(tfd_set_gettime(sfd, 1, &cur), ENOENT);
	/* A suspend moves CLOCK_REALTIME against CLOCK_MONOTONIC. */
	arm_at(sfd, 1, CANCEL_FLAGS, t0 + 7200 * SEC, 0);
	CHECK_OK(tfd_virtual_suspend(&(struct timespec){ 30, 0 }));
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), ECANCELED);
	read_n(sfd, rec, 4, 1);
	check_rec(&rec[0], 2, 30);
	arm_at(sfd, 1, 0, 0, 0);
	/* No key asks now: a clock set is not reported. */
	set_realtime(vnow(CLOCK_REALTIME) - 10 * SEC);
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), EAGAIN);
	CHECK_OK(tfd_close(rel));
	CHECK_OK(tfd_close(mono));
	CHECK_OK(tfd_close(sfd));
}

/* A cancellation waits for a read: a settime does not take it (nor
 * fail with it), two clock sets with no read between are one, two with
 * a read between are two; it is forgotten with the last key that asked,
 * and a key that asks later does not find it. */
TEST(set_cancel_on_set_waits_for_a_read)
{
	struct tfd_expiry rec[2];
	int64_t far;
	int sfd;

	use_virtual();
	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_REALTIME, TFD_NONBLOCK));
	far = vnow(CLOCK_REALTIME) + 3600 * SEC;
	arm_at(sfd, 1, CANCEL_FLAGS, far, 0);
	set_realtime(vnow(CLOCK_REALTIME) + SEC);
	arm_at(sfd, 2, CANCEL_FLAGS, far - SEC, 0); /* the earliest now */
	arm_at(sfd, 3, TFD_TIMER_ABSTIME, far - 2 * SEC, 0);
	cancelled_once(sfd);
	set_realtime(vnow(CLOCK_REALTIME) + SEC);
	set_realtime(vnow(CLOCK_REALTIME) + SEC);
	cancelled_once(sfd);
	set_realtime(vnow(CLOCK_REALTIME) - SEC);
	cancelled_once(sfd);
	/* Forgotten with the last key that asked. */
	set_realtime(vnow(CLOCK_REALTIME) + SEC);
	arm_at(sfd, 1, 0, 0, 0);
	CHECK_EQ(t_readable(sfd, 0), 1); /* key 2 still asks */
	arm_at(sfd, 2, TFD_TIMER_ABSTIME, far, 0); /* no longer */
	CHECK_EQ(t_readable(sfd, 0), 0);
	arm_at(sfd, 1, CANCEL_FLAGS, far, 0);
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), EAGAIN);
	CHECK_OK(tfd_close(sfd));
}

struct read_one {
	int sfd, e;
};

static void *read_one(void *p)
{
	struct read_one *r = p;
	struct tfd_expiry rec;

	r->e = tfd_set_read(r->sfd, &rec, sizeof(rec)) < 0 ? errno : 0;
	return NULL;
}

/* On the engine, its simulated clock set: the read that reports it comes
 * first, before the records of keys due, whether the reader waited in
 * poll(2) or in the read; and a blocked read wakes up for it. */
TEST(set_cancel_on_set_on_the_engine)
{
	struct tfd_expiry rec[2];
	struct read_one r;
	pthread_t th;
	int sfd;

	CHECK_OK(tfd_use_backend("engine"));
	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_REALTIME, TFD_NONBLOCK));
	arm_at(sfd, 1, CANCEL_FLAGS, t_now(CLOCK_REALTIME) - SEC, 0);
	CHECK_EQ(t_readable(sfd, 2000), 1); /* due */
	tfd_engine_clock_was_set();
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), ECANCELED);
	read_n(sfd, rec, 2, 1);
	check_rec(&rec[0], 1, 1);
	CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), EAGAIN);
	CHECK_OK(tfd_close(sfd));
	/* A blocked reader. */
	r.sfd = (int)CHECK_OK(tfd_set_create(CLOCK_REALTIME, 0));
	arm_at(r.sfd, 1, CANCEL_FLAGS, t_now(CLOCK_REALTIME) + 3600 * SEC, 0);
	CHECK_EQ(pthread_create(&th, NULL, read_one, &r), 0);
	t_sleep_ns(50 * MS);
	tfd_engine_clock_was_set();
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(r.e, ECANCELED);
	CHECK_OK(tfd_close(r.sfd));
}

/* The flags of a descriptor's timer, as /proc/self/fdinfo shows them on
 * the kernel backend (a timerfd's "settime flags"); -1 if not shown. */
static int settime_flags(int fd)
{
	char path[64], line[128];
	unsigned f;
	int flags = -1;
	FILE *in;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	in = fopen(path, "r");
	if (!in)
		return -1;
	while (fgets(line, sizeof(line), in))
		if (sscanf(line, "settime flags: %o", &f) == 1)
			flags = (int)f;
	fclose(in);
	return flags;
}

/* On the kernel backend the set's timerfd watches the clock only while a
 * key asks for it.  Setting the machine's clock cancels every watching
 * timer of the machine's: only with TFD_TEST_SET_CLOCK=1 (as root). */
TEST(set_cancel_on_set_on_the_kernel_backend)
{
	const int f = CANCEL_FLAGS;
	struct timespec ts;
	int sfd;

	CHECK_OK(tfd_use_backend("kernel"));
	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_REALTIME, TFD_NONBLOCK));
	arm_at(sfd, 1, TFD_TIMER_ABSTIME, t_now(CLOCK_REALTIME) + 60 * SEC, 0);
	if (settime_flags(sfd) < 0)
		t_skip("no settime flags in /proc/self/fdinfo");
	CHECK_EQ(settime_flags(sfd), TFD_TIMER_ABSTIME);
	arm_at(sfd, 2, f, t_now(CLOCK_REALTIME) + 3600 * SEC, 0);
	CHECK_EQ(settime_flags(sfd), f);
	if (getenv("TFD_TEST_SET_CLOCK") &&
	    !strcmp(getenv("TFD_TEST_SET_CLOCK"), "1")) {
		CHECK_OK(clock_gettime(CLOCK_REALTIME, &ts));
		CHECK_OK(clock_settime(CLOCK_REALTIME, &ts));
		cancelled_once(sfd);
	}
	arm_at(sfd, 2, 0, 0, 0);
	CHECK_EQ(settime_flags(sfd), TFD_TIMER_ABSTIME);
	CHECK_OK(tfd_close(sfd));
}

/* A read of a set with a key asking for cancel-on-set asks the backend
 * by re-arming its timer as it is: with the slack that the read before
 * put there.  Kernel backend (the timer's setting is the kernel's):
 * with a slack of 100 ms, the read that finds nothing leaves the timer
 * at least 60 ms ahead, not at the next key's deadline 30 ms ahead. */
TEST(set_cancel_on_set_keeps_the_slack)
{
	struct tfd_expiry rec[2];
	struct itimerspec cur;
	int sfd, tries;

	CHECK_OK(tfd_use_backend("kernel"));
	CHECK_OK(prctl(PR_SET_TIMERSLACK, 100 * MS, 0, 0, 0));
	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_REALTIME, TFD_NONBLOCK));
	CHECK_OK(prctl(PR_SET_TIMERSLACK, 0, 0, 0, 0));
	for (tries = 0; tries < 20; tries++) {
		int64_t start = t_now(CLOCK_REALTIME) + 2 * MS;

		arm_at(sfd, 1, CANCEL_FLAGS, start, 0);
		arm_at(sfd, 2, CANCEL_FLAGS, start + 30 * MS, 0);
		while (t_now(CLOCK_REALTIME) < start)
			;
		if (tfd_set_read(sfd, rec, sizeof(rec)) != REC)
			continue; /* (both read: a very slow machine) */
		check_rec(&rec[0], 1, 1);
		CHECK_ERR(tfd_set_read(sfd, rec, sizeof(rec)), EAGAIN);
		CHECK_OK(timerfd_gettime(sfd, &cur));
		CHECK_GE(t_ns(&cur.it_value), 60 * MS);
		break;
	}
	CHECK_OK(tfd_close(sfd));
	if (tries == 20)
		t_skip("the first key was never read alone (a slow machine)");
}

/* Periodic keys due every nanosecond: a read takes the keys that come
 * due while it takes the others, and not those it took already. */
TEST(set_read_gives_a_key_one_record_at_most)
{
	struct itimerspec v = t_its(1, 1);
	struct tfd_expiry rec[64];
	int sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, 0)), round;
	ssize_t r;

	CHECK_OK(tfd_set_settime(sfd, 1, TFD_TIMER_ABSTIME, &v, NULL));
	CHECK_OK(tfd_set_settime(sfd, 2, TFD_TIMER_ABSTIME, &v, NULL));
	for (round = 0; round < 100; round++) {
		r = tfd_set_read(sfd, rec, sizeof(rec));
		CHECK_EQ(r, 2 * REC);
		CHECK_NE(rec[0].key, rec[1].key);
	}
	CHECK_OK(tfd_close(sfd));
}

/* Many keys: armed, found, cancelled; the descriptor stays one. */
TEST(set_holds_many_keys_behind_one_descriptor)
{
	long n = t_valgrind() || T_ASAN || T_TSAN ? 20000 : 1000000, k;
	struct itimerspec v, cur;
	int sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, 0));
	int next = dup(0);

	for (k = 0; k < n; k++) {
		v = t_its(SEC + (k * 7919 % 10000) * MS, 0);
		CHECK_OK(tfd_set_settime(sfd, (uint64_t)k * 3, 0, &v, NULL));
	}
	CHECK_EQ(dup(0), next + 1); /* no descriptor per key */
	close(next);
	close(next + 1);
	for (k = 0; k < n; k += n / 100) {
		CHECK_OK(tfd_set_gettime(sfd, (uint64_t)k * 3, &cur));
		CHECK_ERR(tfd_set_gettime(sfd, (uint64_t)k * 3 + 1, &cur),
		          ENOENT);
	}
	v = t_its(0, 0);
	for (k = 0; k < n; k++)
		CHECK_OK(tfd_set_settime(sfd, (uint64_t)k * 3, 0, &v, NULL));
	CHECK_EQ(t_readable(sfd, 0), 0);
	CHECK_OK(tfd_close(sfd));
}

/* ---- src/core/set.c against a plain reference ---- */

struct ref_key {
	int armed, cancel;
	struct tfd_model m;
};

/* The earliest deadline of the reference's keys, -1 if none. */
static int64_t ref_next(const struct ref_key *ref, int n)
{
	int64_t next = -1;
	int j;

	for (j = 0; j < n; j++)
		if (ref[j].armed && (next < 0 || ref[j].m.next < next))
			next = ref[j].m.next;
	return next;
}

/* 1 if a key armed asks for cancel-on-set. */
static int ref_watch(const struct ref_key *ref, int n)
{
	int j;

	for (j = 0; j < n; j++)
		if (ref[j].armed && ref[j].cancel)
			return 1;
	return 0;
}

/* A read of the reference: exactly the keys due, earliest first. */
static void ref_take(struct ref_key *ref, struct tfd_set_core *s,
                     int64_t now)
{
	struct tfd_set_out out[8];
	size_t n = tfd_set_core_take(s, now, out, 8, NULL), i;
	int64_t last = 0;
	int j;

	for (i = 0; i < n; i++) {
		struct ref_key *k = &ref[out[i].key];

		CHECK(k->armed);
		CHECK_LE(k->m.next, now);
		CHECK_GE(k->m.next, last);
		last = k->m.next;
		tfd_model_advance(&k->m, now);
		CHECK_EQ(out[i].count, tfd_model_take(&k->m));
		k->armed = k->m.next != 0;
	}
	if (n < 8) /* none left due */
		for (j = 0; j < 64; j++)
			if (ref[j].armed)
				CHECK_GT(ref[j].m.next, now);
}

/* Random arms (with cancel-on-set or not), cancels, queries, clock sets
 * and reads on 64 keys, the core and the reference (one model a key,
 * looked at one by one; a cancellation pending from a clock set made
 * while a key asked, until a read or the last such key goes) agreeing
 * at each step, on the keys' settings, the records and the earliest
 * deadline. */
TEST(set_core_matches_a_reference)
{
	static struct ref_key ref[64];
	struct tfd_set_core s;
	unsigned seed = 12345;
	int64_t now = 1000;
	int step, pending = 0, sets = 0, forgot = 0;

	tfd_set_core_init(&s);
	for (step = 0; step < 200000; step++) {
		unsigned r = rand_r(&seed);
		uint64_t key = r % 64;
		struct itimerspec a, b;

		switch ((r >> 8) % 6) {
		case 0: { /* arm, relative or absolute, one-shot or not */
			int64_t v = (r >> 12) % 50, iv = (r >> 20) % 3 * 7;
			int abs = (r >> 24) & 1;
			/* (few keys ask: the last of them often goes) */
			int c = key < 4 && (r >> 25) & 1;

			if (abs)
				v += now - 20;
			if (v <= 0)
				v = 0;
			CHECK_EQ(tfd_set_core_arm(&s, key, now, v, iv, abs, c,
			                          &a), 0);
			if (ref[key].armed)
				tfd_model_query(&ref[key].m, now, &b);
			else
				memset(&b, 0, sizeof(b));
			CHECK(!memcmp(&a, &b, sizeof(a)));
			ref[key].armed = v != 0;
			ref[key].cancel = c;
			tfd_model_set(&ref[key].m, now, v, iv, abs);
			break;
		}
		case 1: /* query */
			CHECK_EQ(tfd_set_core_query(&s, key, now, &a),
			         ref[key].armed ? 0 : ENOENT);
			if (ref[key].armed) {
				tfd_model_query(&ref[key].m, now, &b);
				CHECK(!memcmp(&a, &b, sizeof(a)));
			}
			break;
		case 2: /* read: the cancellation first (it takes nothing) */
			CHECK_EQ(tfd_set_core_cancelled(&s, 1), pending);
			if (!pending)
				ref_take(ref, &s, now);
			pending = 0;
			break;
		case 3: /* the clock was set */
			if ((r >> 12) % 4)
				break;
			tfd_set_core_clock_set(&s);
			pending |= ref_watch(ref, 64);
			sets += pending;
			break;
		default:
			now += (r >> 12) % 9;
		}
		CHECK_EQ(tfd_set_core_next(&s), ref_next(ref, 64));
		if (pending && !ref_watch(ref, 64)) {
			pending = 0;
			forgot++;
		}
		CHECK_EQ(tfd_set_core_watch(&s), ref_watch(ref, 64));
		CHECK_EQ(tfd_set_core_cancelled(&s, 0), pending);
	}
	/* The cancellations were exercised, and forgotten. */
	CHECK_GT(sets, 1000); /* (6,713) */
	CHECK_GT(forgot, 10); /* (19 with this seed) */
	tfd_set_core_free(&s);
}
