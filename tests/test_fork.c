/* SPDX-License-Identifier: MIT */
/*
 * fork and exec, as tfd(7) FORK AND EXEC documents them (the first cases
 * are in test_engine.c): an inherited timer stays the parent's, the child
 * reads and polls it and every expiration is counted once across both,
 * the child cannot change or query it but may close it, the library's
 * private descriptors do not reach the child, the child's own timers run
 * on its own thread, a pending count crosses execve() and nothing more
 * is added to it.
 */
#include "t.h"

#include "tfd.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>


/* Wait for the child; it must have exited with 0. */
static void reap(pid_t pid)
{
	int st;

	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
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
	int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
	pid_t pid;

	t_arm(fd, 0, 3600 * SEC, 0);
	pid = fork();
	if (pid == 0) {
		struct epoll_event ev = { EPOLLIN, { 0 } }, out;
		int ep = epoll_create1(EPOLL_CLOEXEC);
		uint64_t n;

		CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
		CHECK(!t_readable(fd, 0) && epoll_wait(ep, &out, 1, 0) == 0);
		/* The parent re-arms it: the parent's engine posts here. */
		CHECK(epoll_wait(ep, &out, 1, 5000) == 1);
		CHECK(t_readable(fd, 0));
		CHECK(tfd_read(fd, &n, 8) == 8 && n == 1);
		CHECK(!t_readable(fd, 0) && epoll_wait(ep, &out, 1, 0) == 0);
		close(ep);
		_exit(0);
	}
	t_sleep_ns(30 * MS);
	t_arm(fd, 0, 5 * MS, 0);
	reap(pid);
	CHECK_OK(tfd_close(fd));
}

TEST(fork_child_cannot_change_or_query_the_inherited_timer)
{
	int fd = t_timer(CLOCK_REALTIME, 0);
	pid_t pid;

	t_arm(fd, 0, 3600 * SEC, SEC);
	pid = fork();
	if (pid == 0) {
		struct itimerspec v = t_its(SEC, 0), out;

		CHECK_ERR(tfd_settime(fd, 0, &v, NULL), EINVAL);
		CHECK_ERR(tfd_settime(fd, TFD_TIMER_ABSTIME, &v, &out), EINVAL);
		CHECK_ERR(tfd_gettime(fd, &out), EINVAL);
		CHECK_ERR(timerfd(fd, -1, 0, &v, NULL), EINVAL);
		CHECK_ERR(timerfd(fd, -1, 0, &v, &out), EINVAL);
		CHECK_ERR(timerfd(fd, -1, 0, NULL, &out), EINVAL);
		/* Disarming would change it too. */
		v = t_its(0, 0);
		CHECK_ERR(tfd_settime(fd, 0, &v, NULL), EINVAL);
		CHECK(tfd_close(fd) == 0);
		CHECK_ERR(tfd_close(fd), EBADF);
		_exit(0);
	}
	reap(pid);
	/* The parent's timer is untouched by all that. */
	{
		struct itimerspec cur;

		CHECK_OK(tfd_gettime(fd, &cur));
		CHECK(t_ns(&cur.it_value) > 3000 * SEC &&
		      t_ns(&cur.it_interval) == SEC);
	}
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
		CHECK(map[a] && map[b]);
		CHECK(tfd_close(a) == 0 && tfd_close(b) == 0);
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
	CHECK(pipe(p) == 0);
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
		CHECK(write(p[1], &theirs, 8) == 8);
		_exit(0);
	}
	close(p[1]);
	while (waitpid(pid, NULL, WNOHANG) == 0) {
		if (tfd_read(fd, &n, 8) == 8)
			mine += n;
		t_sleep_ns(2 * MS);
	}
	CHECK(read(p[0], &theirs, 8) == 8);
	close(p[0]);
	before = t_now(CLOCK_MONOTONIC);
	n = 0;
	if (tfd_read(fd, &n, 8) < 0)
		CHECK(errno == EAGAIN);
	after = t_now(CLOCK_MONOTONIC);
	total = mine + theirs + n;
	printf("parent %llu, child %llu, left %llu\n", (unsigned long long)mine,
	       (unsigned long long)theirs, (unsigned long long)n);
	CHECKF(total >= t_due(e0, i, before) && total <= t_due(e0, i, after),
	       "%llu read in all, %llu to %llu elapsed",
	       (unsigned long long)total,
	       (unsigned long long)t_due(e0, i, before),
	       (unsigned long long)t_due(e0, i, after));
	CHECK(theirs > 0 && mine > 0);
	CHECK_OK(tfd_close(fd));
}

/* Closed in the parent, the timer no longer counts in the child. */
TEST(fork_parent_close_ends_the_childs_expirations)
{
	int fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK), go[2];
	pid_t pid;
	char c = 0;

	t_arm(fd, 0, MS, MS);
	CHECK(pipe(go) == 0);
	pid = fork();
	if (pid == 0) {
		uint64_t n;

		close(go[1]);
		CHECK(read(go[0], &c, 1) == 1); /* the parent closed it */
		while (read(fd, &n, 8) == 8)
			; /* what was posted before */
		t_sleep_ns(30 * MS);
		CHECK(!t_readable(fd, 0));
		CHECK_ERR(read(fd, &n, 8), EAGAIN);
		CHECK(tfd_close(fd) == 0);
		_exit(0);
	}
	close(go[0]);
	t_sleep_ns(10 * MS);
	CHECK_OK(tfd_close(fd));
	CHECK(write(go[1], &c, 1) == 1);
	close(go[1]);
	reap(pid);
}

static void *read_one(void *arg)
{
	uint64_t n;

	CHECK(tfd_read(*(int *)arg, &n, 8) == 8 && n == 1);
	return NULL;
}

/* fork() while another thread waits in tfd_read(): the child closes its
 * copy; the parent's reader still gets its expiration. */
TEST(fork_while_a_thread_waits_in_tfd_read)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0);
	pthread_t th;
	pid_t pid;

	CHECK(pthread_create(&th, NULL, read_one, &fd) == 0);
	t_sleep_ns(20 * MS);
	pid = fork();
	if (pid == 0) {
		struct itimerspec cur;

		CHECK_ERR(tfd_gettime(fd, &cur), EINVAL);
		CHECK(tfd_close(fd) == 0);
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

		CHECK(tfd_close(fd) == 0);
		mine = t_timer(CLOCK_REALTIME, 0);
		CHECK(mine == fd); /* the number comes back, as a new timer */
		if (T_TSAN) /* no thread in a child of a threaded process */
			_exit(tfd_close(mine));
		t_arm(mine, TFD_TIMER_ABSTIME, t_now(CLOCK_REALTIME) + 5 * MS, 0);
		CHECK(tfd_read(mine, &n, 8) == 8 && n == 1);
		t_arm(mine, 0, 3600 * SEC, 0);
		gc = fork();
		if (gc == 0) {
			again = t_timer(CLOCK_BOOTTIME, 0);
			t_arm(again, 0, 2 * MS, 0);
			CHECK(tfd_read(again, &n, 8) == 8 && n == 1);
			CHECK(tfd_close(again) == 0 && tfd_close(mine) == 0);
			_exit(0);
		}
		reap(gc);
		CHECK(tfd_close(mine) == 0);
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

	CHECK(len > 0);
	self[len] = 0;
	snprintf(num, sizeof(num), "%d", fd);
	CHECK(pipe2(p, O_CLOEXEC) == 0);
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
	CHECK(t_readable(keep, 5000) && t_readable(gone, 5000));
	exec_self("--read", gone, out, sizeof(out));
	CHECKF(!strcmp(out, "EBADF\n"), "close-on-exec timer: %s", out);
	exec_self("--read", keep, out, sizeof(out));
	CHECKF(!strcmp(out, "3\n"), "inherited count: %s", out);
	/* The exec'd program's read took it from the shared descriptor. */
	CHECK(!t_readable(keep, 0));
	CHECK_OK(tfd_close(keep));
	CHECK_OK(tfd_close(gone));
}
