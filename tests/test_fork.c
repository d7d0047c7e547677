/* SPDX-License-Identifier: MIT */
/*
 * fork and exec, as tfd(7) FORK AND EXEC documents them (the first cases
 * are in test_engine.c): parent and child share one timer, as on Linux:
 * either may read, poll, change, query or close it, every expiration is
 * counted once across both, and it keeps running while either still
 * holds it, whichever exits first (daemon()); a process killed in the
 * middle of a call leaves the others working; the library's private
 * descriptors do not reach the child; the child's own timers run on its
 * own thread; a pending count crosses execve() and nothing more is added
 * to it.
 */
#include "t.h"

#include "backend.h"
#include "engine/hooks.h"
#include "tfd.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>


/* Wait for the child; it must have exited with 0. */
static void reap(pid_t pid)
{
	int st;

	CHECK_GT(pid, 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: status %#x", st);
}

static void open_map(unsigned char *map, int n)
{
	int fd;

	for (fd = 0; fd < n; fd++)
		map[fd] = fcntl(fd, F_GETFD) >= 0;
}

TEST(fork_child_polls_and_epolls_the_inherited_timer)
{
	int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK), go[2];
	pid_t pid;
	char c = 0;

	t_arm(fd, 0, 3600 * SEC, 0);
	CHECK_EQ(pipe(go), 0);
	pid = fork();
	if (pid == 0) {
		struct epoll_event ev = { EPOLLIN, { 0 } }, out;
		int ep = epoll_create1(EPOLL_CLOEXEC);
		uint64_t n;

		close(go[0]);
		CHECK_GE(ep, 0);
		CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
		CHECK(!t_readable(fd, 0));
		CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
		CHECK_EQ(write(go[1], &c, 1), 1);
		/* The parent re-arms it: the parent's engine posts here. */
		CHECK_EQ(epoll_wait(ep, &out, 1, 5000), 1);
		CHECK(t_readable(fd, 0));
		CHECK_READ(fd, &n, 1);
		CHECK(!t_readable(fd, 0));
		CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
		close(ep);
		_exit(0);
	}
	close(go[1]);
	CHECK_EQ(read(go[0], &c, 1), 1);
	close(go[0]);
	t_arm(fd, 0, 5 * MS, 0);
	reap(pid);
	CHECK_OK(tfd_close(fd));
}

/* What one process sets, the other sees: one timer. */
TEST(fork_child_changes_and_queries_the_inherited_timer)
{
	int fd = t_timer(CLOCK_REALTIME, 0), go[2];
	struct itimerspec cur;
	pid_t pid;
	char c = 0;

	t_arm(fd, 0, 3600 * SEC, SEC);
	CHECK_EQ(pipe(go), 0);
	pid = fork();
	if (pid == 0) {
		struct itimerspec v = t_its(1800 * SEC, 2 * SEC), out;

		close(go[0]);
		CHECK_EQ(tfd_gettime(fd, &out), 0);
		CHECK_GT(t_ns(&out.it_value), 3000 * SEC);
		CHECK_EQ(t_ns(&out.it_interval), SEC);
		CHECK_EQ(tfd_settime(fd, 0, &v, &out), 0);
		CHECK_GT(t_ns(&out.it_value), 3000 * SEC); /* the old one */
		CHECK_EQ(timerfd(fd, -1, 0, NULL, &out), fd);
		CHECK_LE(t_ns(&out.it_value), 1800 * SEC);
		CHECK_EQ(t_ns(&out.it_interval), 2 * SEC);
		CHECK_EQ(write(go[1], &c, 1), 1);
		CHECK_EQ(tfd_close(fd), 0);
		CHECK_ERR(tfd_close(fd), EBADF);
		_exit(0);
	}
	close(go[1]);
	CHECK_EQ(read(go[0], &c, 1), 1);
	close(go[0]);
	/* The child's setting, in the parent. */
	CHECK_OK(tfd_gettime(fd, &cur));
	CHECK_LE(t_ns(&cur.it_value), 1800 * SEC);
	CHECK_GT(t_ns(&cur.it_value), 1700 * SEC);
	CHECK_EQ(t_ns(&cur.it_interval), 2 * SEC);
	reap(pid);
	/* And the child's disarm, once it is gone, is still the timer's. */
	CHECK_OK(tfd_gettime(fd, &cur));
	CHECK_EQ(t_ns(&cur.it_interval), 2 * SEC);
	CHECK_OK(tfd_close(fd));
}

/* The child arms the inherited timer; the parent reads the expirations:
 * the parent's engine delivers it, woken by the child's settime. */
TEST(fork_child_arms_the_parent_reads)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0);
	int64_t t0 = t_now(CLOCK_MONOTONIC), t1;
	uint64_t n;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		struct itimerspec v = t_its(20 * MS, 0);

		t_sleep_ns(10 * MS); /* the parent is blocked in tfd_read */
		CHECK_EQ(tfd_settime(fd, 0, &v, NULL), 0);
		CHECK_EQ(tfd_close(fd), 0);
		_exit(0);
	}
	CHECK_READ(fd, &n, 1);
	t1 = t_now(CLOCK_MONOTONIC);
	CHECKF(t1 - t0 >= 30 * MS, "woke after %lld ns", (long long)(t1 - t0));
	reap(pid);
	CHECK_OK(tfd_close(fd));
}

TEST(fork_child_holds_only_the_users_descriptors)
{
	unsigned char base[256], map[256];
	int a, b, fd, extra = 0;
	pid_t pid;

	open_map(base, 256);
	a = t_timer(CLOCK_MONOTONIC, 0);
	b = t_timer(CLOCK_BOOTTIME, TFD_CLOEXEC);
	t_arm(a, 0, 3600 * SEC, 0); /* the thread's two descriptors too */
	pid = fork();
	if (pid == 0) {
		open_map(map, 256);
		for (fd = 0; fd < 256; fd++)
			if (map[fd] && !base[fd] && fd != a && fd != b)
				extra++;
		CHECKF(extra == 0, "%d more descriptors in the child", extra);
		CHECK(map[a]);
		CHECK(map[b]);
		CHECK_EQ(tfd_close(a), 0);
		CHECK_EQ(tfd_close(b), 0);
		open_map(map, 256);
		CHECK(!memcmp(map, base, sizeof(map)));
		_exit(0);
	}
	reap(pid);
	CHECK_OK(tfd_close(a));
	CHECK_OK(tfd_close(b));
}

/* Parent and child read one periodic timer at once: all they read, plus
 * what is left, is exactly what elapsed (nothing lost, nothing twice). */
TEST(fork_both_read_one_timer_each_expiration_counted_once)
{
	int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK), p[2];
	int64_t e0 = t_now(CLOCK_MONOTONIC) + MS, i = MS, before, after;
	uint64_t mine = 0, theirs = 0, n, total;
	pid_t pid;

	t_arm(fd, TFD_TIMER_ABSTIME, e0, i);
	CHECK_EQ(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		int64_t end = t_now(CLOCK_MONOTONIC) + 150 * MS;

		close(p[0]);
		/* Both read at about the same pace, so both get some (a
		 * child that polls takes every post before the parent). */
		while (t_now(CLOCK_MONOTONIC) < end) {
			t_sleep_ns(3 * MS);
			if (tfd_read(fd, &n, 8) == 8)
				theirs += n;
			t_sleep_ns(3 * MS);
			if (read(fd, &n, 8) == 8)
				theirs += n;
		}
		CHECK_EQ(write(p[1], &theirs, 8), 8);
		_exit(0);
	}
	close(p[1]);
	while (waitpid(pid, NULL, WNOHANG) == 0) {
		if (tfd_read(fd, &n, 8) == 8)
			mine += n;
		t_sleep_ns(2 * MS);
	}
	CHECK_EQ(read(p[0], &theirs, 8), 8);
	close(p[0]);
	before = t_now(CLOCK_MONOTONIC);
	n = 0;
	if (tfd_read(fd, &n, 8) < 0)
		CHECK_EQ(errno, EAGAIN);
	after = t_now(CLOCK_MONOTONIC);
	total = mine + theirs + n;
	printf("parent %llu, child %llu, left %llu\n", (unsigned long long)mine,
	       (unsigned long long)theirs, (unsigned long long)n);
	CHECKF(total >= t_due(e0, i, before) && total <= t_due(e0, i, after),
	       "%llu read in all, %llu to %llu elapsed",
	       (unsigned long long)total,
	       (unsigned long long)t_due(e0, i, before),
	       (unsigned long long)t_due(e0, i, after));
	CHECK_GT(theirs, 0);
	CHECK_GT(mine, 0);
	CHECK_OK(tfd_close(fd));
}

/* Closed in the parent, the timer goes on counting for the child, which
 * holds it too (its engine takes over the delivery). */
TEST(fork_parent_close_leaves_the_timer_running_in_the_child)
{
	int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK), go[2], done[2];
	int64_t e0 = t_now(CLOCK_MONOTONIC) + MS, i = MS;
	pid_t pid;
	char c = 0;

	t_arm(fd, TFD_TIMER_ABSTIME, e0, i);
	CHECK_OK(pipe(go));
	CHECK_OK(pipe(done));
	pid = fork();
	if (pid == 0) {
		struct itimerspec cur;
		uint64_t n, total = 0;
		int64_t before, after;
		int k;

		close(go[1]);
		close(done[0]);
		if (T_ASAN) /* our thread starts at the first call */
			CHECK_EQ(tfd_gettime(fd, &cur), 0);
		CHECK_EQ(read(go[0], &c, 1), 1); /* the parent closed it */
		for (k = 0; k < 20; k++) {
			CHECK(t_readable(fd, 5000)); /* posted by our engine */
			if (read(fd, &n, 8) == 8)
				total += n;
		}
		before = t_now(CLOCK_MONOTONIC);
		n = 0; /* tfd_read counts from the clock: exact */
		if (tfd_read(fd, &n, 8) < 0)
			CHECK_EQ(errno, EAGAIN);
		after = t_now(CLOCK_MONOTONIC);
		total += n;
		CHECKF(total >= t_due(e0, i, before) &&
		       total <= t_due(e0, i, after),
		       "%llu read, %llu to %llu elapsed",
		       (unsigned long long)total,
		       (unsigned long long)t_due(e0, i, before),
		       (unsigned long long)t_due(e0, i, after));
		CHECK_EQ(tfd_close(fd), 0);
		CHECK_EQ(write(done[1], &c, 1), 1);
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	t_sleep_ns(10 * MS);
	CHECK_OK(tfd_close(fd));
	CHECK_EQ(write(go[1], &c, 1), 1);
	close(go[1]);
	CHECK_EQ(read(done[0], &c, 1), 1);
	close(done[0]);
	reap(pid);
}

/* daemon(): a process makes a timer, forks and exits at once; its child
 * keeps the timer, counting every expiration (exactly, from the clock),
 * and its readiness keeps coming.  The exit may cut off the post the
 * parent's thread was writing (tfd(7), NOTES 6): the daemon may read
 * short by what that post carried, never more than was due when the
 * parent was reaped, and never more than is due. */
TEST(fork_daemon_keeps_the_timers)
{
	int p[2];
	pid_t mid;
	char line[512] = "";
	size_t len = 0;
	ssize_t r;
	unsigned long long first = 0, gone = 0;
	int64_t t_gone;

	CHECK_EQ(pipe(p), 0);
	mid = fork();
	if (mid == 0) {
		int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
		int64_t e0 = t_now(CLOCK_MONOTONIC) + MS, i = 2 * MS;

		close(p[0]);
		t_arm(fd, TFD_TIMER_ABSTIME, e0, i);
		dprintf(p[1], "%lld\n", (long long)e0);
		if (fork() == 0) { /* the daemon */
			struct itimerspec cur;
			uint64_t n, total = 0;
			int64_t before, after;
			int k, ok = 1;

			if (T_ASAN) /* our thread starts at the first call */
				tfd_gettime(fd, &cur);
			t_sleep_ns(20 * MS); /* its parent is gone by now */
			for (k = 0; k < 30 && ok; k++) {
				ok = t_readable(fd, 5000);
				if (read(fd, &n, 8) == 8)
					total += n;
			}
			before = t_now(CLOCK_MONOTONIC);
			if (tfd_read(fd, &n, 8) == 8) /* exact: from the clock */
				total += n;
			after = t_now(CLOCK_MONOTONIC);
			dprintf(p[1], "%d %llu %llu %llu\n", ok,
			        (unsigned long long)total,
			        (unsigned long long)t_due(e0, i, before),
			        (unsigned long long)t_due(e0, i, after));
			tfd_close(fd);
			_exit(0);
		}
		_exit(0); /* as daemon() does: no exit handlers */
	}
	close(p[1]);
	reap(mid);
	t_gone = t_now(CLOCK_MONOTONIC);
	/* Both lines, then end of file: the daemon has exited. */
	while (len < sizeof(line) - 1 &&
	       (r = read(p[0], line + len, sizeof(line) - 1 - len)) > 0)
		len += (size_t)r;
	close(p[0]);
	line[len] = 0;
	CHECK_EQ(sscanf(line, "%llu", &first), 1);
	{
		int ok = 0;
		unsigned long long total = 0, lo = 0, hi = 0;
		const char *report = strchr(line, '\n');

		/* due when mid was certainly gone: what its cut-off post
		 * could have carried at most */
		gone = t_due((int64_t)first, 2 * MS, t_gone);
		CHECKF(report &&
		       sscanf(report + 1, "%d %llu %llu %llu", &ok, &total, &lo,
		              &hi) == 4 && ok && total + gone >= lo && total <= hi,
		       "daemon: readable %d, read %llu, due %llu to %llu, due "
		       "when its parent was gone %llu", ok, total, lo, hi, gone);
	}
}

/* A child killed while it calls the library over and over (perhaps
 * holding the family's lock, perhaps in the middle of a settime) leaves
 * the parent's timers working, and its own hold on them goes. */
TEST(fork_child_killed_in_a_call_leaves_the_parent_working)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0), round;

	t_arm(fd, 0, 3600 * SEC, 0);
	for (round = 0; round < 10; round++) {
		struct itimerspec cur;
		uint64_t n;
		pid_t pid = fork();

		if (pid == 0) {
			struct itimerspec v = t_its(3600 * SEC, 0);

			for (;;) {
				tfd_settime(fd, 0, &v, NULL);
				tfd_gettime(fd, &cur);
			}
		}
		t_sleep_ns((round % 5 + 1) * 2 * MS);
		CHECK_EQ(kill(pid, SIGKILL), 0);
		CHECK_EQ(waitpid(pid, NULL, 0), pid);
		CHECK_OK(tfd_gettime(fd, &cur));
		CHECK_GT(t_ns(&cur.it_value), 3000 * SEC);
		t_arm(fd, 0, 2 * MS, 0);
		CHECK_READ(fd, &n, 1);
		t_arm(fd, 0, 3600 * SEC, 0);
	}
	CHECK_OK(tfd_close(fd));
}

/* A child that dies holding the only copy: the timer goes with it (no
 * record is left behind: the family can make as many children as it
 * likes, one after another). */
TEST(fork_children_come_and_go_without_end)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0), k;
	int rounds = t_valgrind() ? 20 : 200; /* each fork is slow there */

	t_arm(fd, 0, 3600 * SEC, 0);
	for (k = 0; k < rounds; k++) {
		pid_t pid = fork();

		if (pid == 0) {
			int mine = tfd_create(CLOCK_MONOTONIC, 0);

			_exit(mine < 0);
		}
		reap(pid);
	}
	CHECK_OK(tfd_close(fd));
}

static void *read_one(void *arg)
{
	uint64_t n;

	CHECK_READ(*(int *)arg, &n, 1);
	return NULL;
}

/* fork() while another thread waits in tfd_read(): the child queries
 * the timer and closes its copy; the parent's reader still gets its
 * expiration. */
TEST(fork_while_a_thread_waits_in_tfd_read)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0);
	pthread_t th;
	pid_t pid;

	CHECK_EQ(pthread_create(&th, NULL, read_one, &fd), 0);
	t_sleep_ns(20 * MS);
	pid = fork();
	if (pid == 0) {
		struct itimerspec cur;

		CHECK_EQ(tfd_gettime(fd, &cur), 0);
		CHECK_EQ(t_ns(&cur.it_value), 0);
		CHECK_EQ(tfd_close(fd), 0);
		_exit(0);
	}
	reap(pid);
	t_arm(fd, 0, 5 * MS, 0);
	pthread_join(th, NULL);
	CHECK_OK(tfd_close(fd));
}

/* The child's own timers: armed, read, closed, on numbers the inherited
 * ones free; and its child in turn. */
TEST(fork_child_and_grandchild_run_their_own_timers)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0);
	pid_t pid;

	t_arm(fd, 0, 3600 * SEC, 0);
	pid = fork();
	if (pid == 0) {
		uint64_t n;
		int mine, again;
		pid_t gc;

		CHECK_EQ(tfd_close(fd), 0);
		mine = t_timer(CLOCK_REALTIME, 0);
		CHECK_EQ(mine, fd); /* the number comes back, as a new timer */
		if (T_TSAN) /* no thread in a child of a threaded process */
			_exit(tfd_close(mine));
		t_arm(mine, TFD_TIMER_ABSTIME, t_now(CLOCK_REALTIME) + 5 * MS, 0);
		CHECK_READ(mine, &n, 1);
		t_arm(mine, 0, 3600 * SEC, 0);
		gc = fork();
		if (gc == 0) {
			again = t_timer(CLOCK_BOOTTIME, 0);
			t_arm(again, 0, 2 * MS, 0);
			CHECK_READ(again, &n, 1);
			CHECK_EQ(tfd_close(again), 0);
			CHECK_EQ(tfd_close(mine), 0);
			_exit(0);
		}
		reap(gc);
		CHECK_EQ(tfd_close(mine), 0);
		_exit(0);
	}
	reap(pid);
	CHECK_OK(tfd_close(fd));
}

/* The output of "tfd-test ARG FD" exec'd in a child that inherits fd. */
static void exec_self(const char *arg, int fd, char *out, size_t n)
{
	char self[256], num[16];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int p[2];
	pid_t pid;

	CHECK_GT(len, 0);
	self[len] = 0;
	snprintf(num, sizeof(num), "%d", fd);
	CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execl(self, self, arg, num, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	len = read(p[0], out, n - 1);
	out[len > 0 ? len : 0] = 0;
	close(p[0]);
	reap(pid);
}

/* What was pending crosses exec, exactly; a TFD_CLOEXEC timer does not. */
TEST(exec_keeps_the_pending_count_and_honours_cloexec)
{
	int keep = t_timer(CLOCK_REALTIME, 0);
	int gone = t_timer(CLOCK_MONOTONIC, TFD_CLOEXEC);
	char out[64];

	/* Three expirations at once (2 h ago, 1 h ago, now), the next in an
	 * hour: posted, none read. */
	t_arm(keep, TFD_TIMER_ABSTIME, t_now(CLOCK_REALTIME) - 7200 * SEC - MS,
	    3600 * SEC);
	t_arm(gone, 0, 1, 0);
	CHECK(t_readable(keep, 5000));
	CHECK(t_readable(gone, 5000));
	exec_self("--read", gone, out, sizeof(out));
	CHECKF(!strcmp(out, "EBADF\n"), "close-on-exec timer: %s", out);
	exec_self("--read", keep, out, sizeof(out));
	CHECKF(!strcmp(out, "3\n"), "inherited count: %s", out);
	/* The exec'd program's read took it from the shared descriptor. */
	CHECK(!t_readable(keep, 0));
	CHECK_OK(tfd_close(keep));
	CHECK_OK(tfd_close(gone));
}

/* At most 64 processes of a family hold timers at once (tfd(7), NOTES 6):
 * with the parent and 63 children holding a timer, the next child shares
 * none: its number is a plain eventfd to it, and the others' timer is
 * untouched.  Its own timers work as anyone's (a family of its own, which
 * its children share): they failed with ENOMEM. */
TEST_LIMIT(fork_the_65th_process_shares_nothing, 60)
{
	int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK), hold[2], k;
	pid_t kids[63], last;
	struct itimerspec cur;
	char c = 0;

	t_arm(fd, 0, 3600 * SEC, 0);
	CHECK_EQ(pipe(hold), 0);
	for (k = 0; k < 63; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			close(hold[1]);
			if (read(hold[0], &c, 1) < 0) /* until the end */
				_exit(1);
			_exit(tfd_gettime(fd, &cur) != 0);
		}
		CHECK_GT(kids[k], 0);
	}
	last = fork();
	if (last == 0) {
		uint64_t n;

		close(hold[1]);
		CHECK_ERR(tfd_gettime(fd, &cur), EINVAL);
		CHECK_ERR(tfd_read(fd, &n, 8), EINVAL);
		CHECK_ERR(read(fd, &n, 8), EAGAIN); /* a plain eventfd */
		CHECK_EQ(close(fd), 0);
		fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
		t_arm(fd, 0, 2 * MS, 0);
		last = fork();
		if (last == 0) { /* shares it */
			CHECK(t_readable(fd, 5000));
			CHECK_READ(fd, &n, 1);
			_exit(0);
		}
		reap(last);
		CHECK_ERR(tfd_read(fd, &n, 8), EAGAIN); /* the child took it */
		CHECK_OK(tfd_close(fd));
		_exit(0);
	}
	reap(last);
	close(hold[0]);
	close(hold[1]); /* the 63 go on, and query the timer on their way */
	for (k = 0; k < 63; k++)
		reap(kids[k]);
	CHECK_OK(tfd_gettime(fd, &cur));
	CHECK_GT(t_ns(&cur.it_value), 3000 * SEC);
	CHECK_OK(tfd_close(fd));
}

/* Two children hold a timer the parent closed (one of them delivers it);
 * either may be killed: the other keeps it, readiness and exact count
 * (each is killed in turn, so that once it is the one delivering).  The
 * kill may cut off the post the victim's thread was writing (tfd(7),
 * NOTES 6): the survivor may read short by what that post carried, never
 * more than was due when the victim was reaped, and never more than is
 * due.  (Under valgrind a post cut off so carried 36.) */
static void survivor(int fd, int64_t e0, int64_t i, int report)
{
	struct itimerspec cur;
	uint64_t n, total = 0;
	int64_t before, after, end;
	int ok = 1;

	if (T_ASAN) /* our thread starts at the first call */
		tfd_gettime(fd, &cur);
	end = t_now(CLOCK_MONOTONIC) + 300 * MS;
	while (ok && t_now(CLOCK_MONOTONIC) < end) {
		ok = t_readable(fd, 5000);
		if (read(fd, &n, 8) == 8)
			total += n;
	}
	before = t_now(CLOCK_MONOTONIC);
	if (tfd_read(fd, &n, 8) == 8)
		total += n;
	after = t_now(CLOCK_MONOTONIC);
	dprintf(report, "%d %llu %llu %llu\n", ok, (unsigned long long)total,
	        (unsigned long long)t_due(e0, i, before),
	        (unsigned long long)t_due(e0, i, after));
	_exit(0);
}

TEST(fork_the_delivering_child_killed_the_other_takes_over)
{
	int victim;

	for (victim = 0; victim < 2; victim++) {
		int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK), p[2];
		int64_t e0 = t_now(CLOCK_MONOTONIC) + MS, i = 2 * MS;
		pid_t kid[2];
		char line[128] = "";
		ssize_t len;
		int ok = 0, k;
		unsigned long long total = 0, lo = 0, hi = 0, gone;

		t_arm(fd, TFD_TIMER_ABSTIME, e0, i);
		CHECK_EQ(pipe(p), 0);
		for (k = 0; k < 2; k++) {
			kid[k] = fork();
			if (kid[k] == 0) {
				close(p[0]);
				if (k == victim)
					for (;;)
						pause();
				survivor(fd, e0, i, p[1]);
			}
		}
		close(p[1]);
		CHECK_OK(tfd_close(fd)); /* a child takes over */
		t_sleep_ns(50 * MS);
		CHECK_EQ(kill(kid[victim], SIGKILL), 0);
		CHECK_EQ(waitpid(kid[victim], NULL, 0), kid[victim]);
		gone = t_due(e0, i, t_now(CLOCK_MONOTONIC));
		reap(kid[1 - victim]);
		len = read(p[0], line, sizeof(line) - 1);
		close(p[0]);
		line[len > 0 ? len : 0] = 0;
		CHECKF(sscanf(line, "%d %llu %llu %llu", &ok, &total, &lo, &hi) ==
		               4 && ok && total + gone >= lo && total <= hi,
		       "survivor (victim %d): readable, read, due from, due to: "
		       "%s (due when the victim was gone %llu)",
		       victim, line, gone);
	}
}

/* Wait until process pid (not ours to reap) is gone: reaped, so that a
 * process looking by its pid finds none. */
static void wait_gone(pid_t pid)
{
	while (kill(pid, 0) == 0)
		t_sleep_ns(MS);
}

/* On the virtual clocks (no service thread watches the family there): a
 * process makes a periodic timer, forks and exits at once; once the
 * exited parent is reaped, the child's next move of the clocks takes the
 * timer over and posts it.  (A sleep of 20 ms did not wait long enough
 * under valgrind.) */
TEST(fork_daemon_on_the_virtual_clocks)
{
	int p[2];
	pid_t mid;
	char c = 'n';

	CHECK_EQ(pipe(p), 0);
	mid = fork();
	if (mid == 0) {
		int fd;
		struct itimerspec v = t_its(10 * MS, 10 * MS);
		pid_t me = getpid();

		close(p[0]);
		if (tfd_use_backend("virtual") < 0)
			_exit(1);
		fd = tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
		if (fd < 0 || tfd_settime(fd, 0, &v, NULL) < 0)
			_exit(1);
		if (fork() == 0) { /* the daemon */
			struct timespec step = { 0, 25 * MS };
			uint64_t n = 0;

			wait_gone(me);
			if (tfd_virtual_advance(&step) == 0 && t_readable(fd, 0) &&
			    read(fd, &n, 8) == 8 && n == 2)
				c = 'y';
			CHECK_EQ(write(p[1], &c, 1), 1);
			_exit(0);
		}
		_exit(0);
	}
	close(p[1]);
	reap(mid);
	CHECK_EQ(read(p[0], &c, 1), 1);
	close(p[0]);
	CHECK_EQ(c, 'y');
}

/* The id the kernel gave eventfd fd (fdinfo, Linux 6.1), or 0. */
static unsigned long eventfd_id(int fd)
{
	char path[64], buf[512], *at;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return 0;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	buf[n > 0 ? n : 0] = 0;
	at = strstr(buf, "eventfd-id:");
	return at ? strtoul(at + 11, NULL, 10) : 0;
}

/* A daemon that closed an inherited timer with a plain close(2) once its
 * parent was gone, and made an eventfd of its own at that number, with
 * the id the timer's had if the kernel gives it (it reuses the ids of
 * freed eventfds, lowest first: the child takes eventfds until one has
 * it): the timer is not taken over into that eventfd.  The child's thread
 * holds a copy of the timer's file from fork() on, so no new eventfd gets
 * its id.  The eventfd holds only what the program wrote.  (Failed before
 * the copy was taken at fork().) */
TEST(fork_daemon_reusing_an_inherited_number_gets_no_counts)
{
	int p[2];
	pid_t mid;
	char line[64] = "";
	ssize_t len;

	if (!tfd_engine_private_files())
		t_skip("the fallback posts to the user's numbers (tfd(7))");
	CHECK_EQ(pipe(p), 0);
	mid = fork();
	if (mid == 0) {
		int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
		pid_t me = getpid();

		close(p[0]);
		t_arm(fd, 0, 2 * MS, 2 * MS);
		if (fork() == 0) {
			struct itimerspec cur;
			unsigned long id;
			uint64_t n = 0;
			int i, mine = -1;

			if (T_ASAN) /* our thread starts at the first call */
				tfd_gettime(fd, &cur);
			/* Once every thread of the parent has exited, nothing
			 * but this process holds the timer's file. */
			wait_gone(me);
			id = eventfd_id(fd);
			close(fd); /* plainly: the library does not know */
			for (i = 0; i < 200; i++) {
				mine = eventfd(5, EFD_NONBLOCK);
				if (mine < 0 || eventfd_id(mine) == id)
					break;
			}
			if (mine < 0)
				mine = eventfd(5, EFD_NONBLOCK);
			if (mine != fd) { /* the same number */
				CHECK_EQ(dup2(mine, fd), fd);
				close(mine);
				mine = fd;
			}
			t_sleep_ns(60 * MS);
			if (read(mine, &n, 8) != 8)
				n = 0;
			dprintf(p[1], "%d %llu\n", mine == fd,
			        (unsigned long long)n);
			_exit(0);
		}
		_exit(0);
	}
	close(p[1]);
	reap(mid);
	len = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	line[len > 0 ? len : 0] = 0;
	CHECKF(!strcmp(line, "1 5\n"), "same number, eventfd count: %s", line);
}

/* A virtual-time domain (tfd-preload(7)) has each process of a family
 * bring the family's virtual clocks to the domain's: two that do so at
 * once, each having read the clocks before the other moved them, must
 * move them once.  A move by the difference each read moved them twice
 * (vtree: the clocks 400 ms ahead of the domain's, a tick and a ping
 * early); a move to the domain's time does not, and never moves back. */
TEST(fork_virtual_move_to_moves_the_family_once)
{
	struct timespec ts;
	uint64_t n = 0;
	pid_t pid;
	int fd;

	CHECK_EQ(tfd_use_backend("engine"), 0);
	CHECK_EQ(tfd_engine_virtual_move_to(SEC), ENOTSUP);
	CHECK_EQ(tfd_use_backend("virtual"), 0);
	CHECK_EQ(tfd_engine_virtual_start(5 * SEC, 7 * SEC, 9 * SEC), 0);
	fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
	t_arm(fd, 0, SEC, SEC); /* due at 6 s, 7 s... */
	pid = fork();
	if (pid == 0) {
		CHECK_EQ(tfd_engine_virtual_move_to(6 * SEC), 0);
		_exit(0);
	}
	reap(pid);
	CHECK_EQ(tfd_engine_virtual_move_to(6 * SEC), 0);
	CHECK_EQ(tfd_engine_virtual_move_to(5 * SEC), 0);
	CHECK_EQ(tfd_virtual_now(CLOCK_MONOTONIC, &ts), 0);
	CHECKF(t_ns(&ts) == 6 * SEC, "monotonic at %lld ns",
	       (long long)t_ns(&ts));
	CHECK_EQ(tfd_virtual_now(CLOCK_REALTIME, &ts), 0);
	CHECK_EQ(t_ns(&ts), 8 * SEC);
	CHECK_EQ(tfd_virtual_now(CLOCK_BOOTTIME, &ts), 0);
	CHECK_EQ(t_ns(&ts), 10 * SEC);
	CHECK_EQ(tfd_read(fd, &n, 8), 8);
	CHECKF(n == 1, "count %llu", (unsigned long long)n);
	CHECK_OK(tfd_close(fd));
	CHECK_EQ(tfd_use_backend("engine"), 0);
}
