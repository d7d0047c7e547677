/* SPDX-License-Identifier: MIT */
/*
 * timerfd_glibc - a timerfd through glibc's own names: timerfd_create,
 * timerfd_settime, timerfd_gettime, read, readv, write, close, dup, dup2,
 * dup3, fcntl, poll, select, epoll, fork.  Prints one line per fact, with
 * no time and no descriptor number in it, so that a run on Linux's timerfd
 * and runs through libtfd-preload.so (engine, kernel, virtual) can be
 * compared line by line (tests/realprog/run.sh).  Times that vary are
 * printed as ranges ("in range"), with wide margins.
 *
 * Not here, because the preload differs from Linux on purpose and says so
 * in tfd-preload(7): TFD_IOC_SET_TICKS, /proc/self/fdinfo.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "facts.h"

#define MS 1000000LL
#define SEC 1000000000LL

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

static struct itimerspec its(int64_t value, int64_t interval)
{
	struct itimerspec s = { { interval / SEC, interval % SEC },
		                { value / SEC, value % SEC } };

	return s;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { ns / SEC, ns % SEC };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * SEC + ts->tv_nsec;
}

static void arm(int fd, int64_t value, int64_t interval)
{
	struct itimerspec s = its(value, interval);

	if (timerfd_settime(fd, 0, &s, NULL) < 0) {
		perror("timerfd_settime");
		exit(1);
	}
}

static uint64_t read_count(int fd)
{
	uint64_t n = 0;

	if (read(fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		return 0;
	return n;
}

static void in_range(const char *what, int64_t v, int64_t lo, int64_t hi)
{
	if (v >= lo && v <= hi)
		printf("%s: in range\n", what);
	else
		printf("%s: %lld, not in [%lld, %lld]\n", what, (long long)v,
		       (long long)lo, (long long)hi);
}

static void create_errors(void)
{
	struct itimerspec cur;
	int fd;

	SHOW("create CLOCK_PROCESS_CPUTIME_ID",
	     timerfd_create(CLOCK_PROCESS_CPUTIME_ID, 0));
	SHOW("create flags 0x10", timerfd_create(CLOCK_MONOTONIC, 0x10));
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	printf("create: %s\n", fd >= 0 ? "a descriptor" : "failed");
	SHOW("F_GETFL & (O_ACCMODE|O_NONBLOCK)",
	     fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK));
	SHOW("F_GETFD", fcntl(fd, F_GETFD));
	SHOW("gettime new", timerfd_gettime(fd, &cur));
	printf("new timer: %lld %lld\n", (long long)ns_of(&cur.it_value),
	       (long long)ns_of(&cur.it_interval));
	close(fd);
}

static void settime_errors(void)
{
	struct itimerspec bad = its(0, 0), cur;
	int fd = timerfd_create(CLOCK_MONOTONIC, 0), p[2];

	if (pipe(p) < 0)
		exit(1);
	SHOW("settime NULL", timerfd_settime(fd, 0, NULL, NULL));
	SHOW("settime NULL, fd -1", timerfd_settime(-1, 0, NULL, NULL));
	SHOW("settime flags 0x10", timerfd_settime(fd, 0x10, &bad, NULL));
	bad.it_value.tv_nsec = 1000000000;
	SHOW("settime tv_nsec 1e9", timerfd_settime(fd, 0, &bad, NULL));
	bad = its(0, 0);
	bad.it_interval.tv_sec = -1;
	SHOW("settime interval -1 s, value 0",
	     timerfd_settime(fd, 0, &bad, NULL));
	bad = its(0, 0); /* value {-1, 100000000}, interval {0, -1} */
	bad.it_value.tv_sec = -1;
	bad.it_value.tv_nsec = 100000000;
	bad.it_interval.tv_nsec = -1;
	SHOW("settime value -1 s + 0.1 s, interval -1 ns",
	     timerfd_settime(fd, 0, &bad, NULL));
	bad = its(SEC, 0);
	SHOW("settime fd -1", timerfd_settime(-1, 0, &bad, NULL));
	SHOW("settime fd not open", timerfd_settime(900, 0, &bad, NULL));
	SHOW("settime on a pipe", timerfd_settime(p[0], 0, &bad, NULL));
	SHOW("gettime fd -1", timerfd_gettime(-1, &cur));
	SHOW("gettime on a pipe", timerfd_gettime(p[0], &cur));
	SHOW("gettime NULL", timerfd_gettime(fd, NULL));
	close(p[0]);
	close(p[1]);
	close(fd);
}

static void io_errors(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	uint64_t n = 1;
	char b[16];
	struct iovec iov = { &n, sizeof(n) };

	SHOW("read disarmed, non-blocking", read(fd, &n, sizeof(n)));
	SHOW("read 4 bytes", read(fd, b, 4));
	SHOW("read 0 bytes", read(fd, b, 0));
	SHOW("write", write(fd, &n, sizeof(n)));
	SHOW("writev", writev(fd, &iov, 1));
	SHOW("pread", pread(fd, &n, sizeof(n), 0));
	SHOW("pwrite", pwrite(fd, &n, sizeof(n), 0));
	close(fd);
}

static void counts(void)
{
	struct itimerspec s, cur;
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	int64_t t0;
	uint64_t n;

	s = its(now_ns(CLOCK_MONOTONIC) - 20 * SEC, SEC);
	timerfd_settime(fd, TFD_TIMER_ABSTIME, &s, NULL);
	printf("absolute 20 s ago, every 1 s: %llu\n",
	       (unsigned long long)read_count(fd));

	arm(fd, 50 * MS, 0);
	t0 = now_ns(CLOCK_MONOTONIC);
	n = read_count(fd);
	printf("one-shot 50 ms, blocking read: %llu\n", (unsigned long long)n);
	in_range("blocking read waited (ms)",
	         (now_ns(CLOCK_MONOTONIC) - t0) / MS, 49, 2000);
	timerfd_gettime(fd, &cur);
	printf("fired one-shot: %lld %lld\n", (long long)ns_of(&cur.it_value),
	       (long long)ns_of(&cur.it_interval));

	arm(fd, 10 * MS, 10 * MS);
	sleep_ns(105 * MS);
	in_range("periodic 10 ms after 105 ms", (int64_t)read_count(fd), 10,
	         60);
	arm(fd, 0, SEC);
	timerfd_gettime(fd, &cur);
	printf("disarmed with interval 1 s: %lld %lld\n",
	       (long long)ns_of(&cur.it_value),
	       (long long)ns_of(&cur.it_interval));
	close(fd);
}

static void clocks(void)
{
	struct itimerspec s;
	int fd = timerfd_create(CLOCK_REALTIME, 0);

	arm(fd, 30 * MS, 0);
	printf("CLOCK_REALTIME relative 30 ms: %llu\n",
	       (unsigned long long)read_count(fd));
	s = its(now_ns(CLOCK_REALTIME) + 30 * MS, 0);
	timerfd_settime(fd, TFD_TIMER_ABSTIME, &s, NULL);
	printf("CLOCK_REALTIME absolute +30 ms: %llu\n",
	       (unsigned long long)read_count(fd));
	s = its(now_ns(CLOCK_REALTIME) + 3600 * SEC, 0);
	SHOW("CLOCK_REALTIME ABSTIME|CANCEL_ON_SET",
	     timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
	                     &s, NULL));
	close(fd);
	fd = timerfd_create(CLOCK_BOOTTIME, 0);
	s = its(now_ns(CLOCK_BOOTTIME) + 30 * MS, 0);
	timerfd_settime(fd, TFD_TIMER_ABSTIME, &s, NULL);
	printf("CLOCK_BOOTTIME absolute +30 ms: %llu\n",
	       (unsigned long long)read_count(fd));
	close(fd);
}

/* Setting discards what was pending; the old value is reported. */
static void rearm(void)
{
	struct itimerspec s = its(10 * SEC, 0), old, cur;
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	struct pollfd p = { fd, POLLIN, 0 };
	uint64_t n;

	arm(fd, 10 * MS, 0);
	sleep_ns(60 * MS);
	SHOW("expired: poll", poll(&p, 1, 0));
	timerfd_settime(fd, 0, &s, &old);
	printf("old value after expiry: %lld %lld\n",
	       (long long)ns_of(&old.it_value),
	       (long long)ns_of(&old.it_interval));
	SHOW("re-armed: poll", poll(&p, 1, 0));
	SHOW("re-armed: read", read(fd, &n, sizeof(n)));
	timerfd_gettime(fd, &cur);
	in_range("re-armed: remaining (ms)", ns_of(&cur.it_value) / MS, 9000,
	         10000);
	close(fd);
}

/* Readiness: readable when expired, never writable. */
static void readiness(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	struct pollfd p = { fd, POLLIN | POLLOUT, 0 };
	struct epoll_event ev = { EPOLLIN | EPOLLOUT, { .u32 = 7 } }, got;
	struct timeval tv = { 0, 0 };
	fd_set rd, wr;
	int ep = epoll_create1(EPOLL_CLOEXEC), r;

	SHOW("armed, not due: poll IN|OUT", poll(&p, 1, 0));
	printf("revents: %#x\n", p.revents);
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	SHOW("not due: epoll_wait", epoll_wait(ep, &got, 1, 0));
	arm(fd, 20 * MS, 0);
	SHOW("due in 20 ms: poll IN|OUT, 2 s", poll(&p, 1, 2000));
	printf("revents: %#x\n", p.revents);
	SHOW("expired: epoll_wait", epoll_wait(ep, &got, 1, 0));
	printf("epoll events: %#x data %u\n", got.events, got.data.u32);
	FD_ZERO(&rd);
	FD_ZERO(&wr);
	FD_SET(fd, &rd);
	FD_SET(fd, &wr);
	r = select(fd + 1, &rd, &wr, NULL, &tv);
	printf("select: %d, readable %d, writable %d\n", r, FD_ISSET(fd, &rd),
	       FD_ISSET(fd, &wr));
	close(ep);
	close(fd);
}

/* readv spreads the 8 bytes; fewer than 8 fail. */
static void vectors(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	unsigned char b[8] = { 0 };
	uint64_t n;
	struct iovec two[2] = { { b, 3 }, { b + 3, 5 } };
	struct iovec small[2] = { { b, 3 }, { b + 3, 4 } };

	arm(fd, 1 * MS, 0);
	sleep_ns(20 * MS);
	SHOW("readv 3 + 4 bytes", readv(fd, small, 2));
	SHOW("readv 3 + 5 bytes", readv(fd, two, 2));
	memcpy(&n, b, sizeof(n));
	printf("readv count: %llu\n", (unsigned long long)n);
	close(fd);
}

/* Duplicates name the same timer, whatever made them. */
static void duplicates(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, 0), d, e, p[2];
	struct itimerspec cur;
	char c[8] = { 0 };

	if (pipe(p) < 0)
		exit(1);
	d = dup(fd);
	arm(d, 20 * MS, 0);
	printf("armed through dup, read through original: %llu\n",
	       (unsigned long long)read_count(fd));
	e = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	printf("F_DUPFD_CLOEXEC from 100: %s\n", e >= 100 ? "ok" : "failed");
	SHOW("F_GETFD of it", fcntl(e, F_GETFD));
	close(fd);
	arm(e, 20 * MS, 0);
	printf("after closing the original: armed through F_DUPFD, read "
	       "through dup: %llu\n",
	       (unsigned long long)read_count(d));
	SHOW("dup2 to 60", dup2(d, 60));
	SHOW("gettime through 60", timerfd_gettime(60, &cur));
	SHOW("dup3 of a pipe over 60", dup3(p[0], 60, O_CLOEXEC));
	SHOW("gettime through 60 now", timerfd_gettime(60, &cur));
	SHOW("write to the pipe", write(p[1], "x", 1));
	SHOW("read of 60", read(60, c, sizeof(c)));
	printf("read of 60 got: %c\n", c[0]);
	SHOW("gettime through the dup", timerfd_gettime(d, &cur));
	close(60);
	close(p[0]);
	close(p[1]);
	close(d);
	close(e);
}

/* A number a timer had, reused by something else, is that thing. */
static void reuse(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, 0), p[2];
	char c = 0;

	close(fd);
	if (pipe(p) < 0)
		exit(1);
	printf("pipe reuses the number: %s\n", p[0] == fd ? "yes" : "no");
	SHOW("write to the pipe", write(p[1], "y", 1));
	SHOW("read", read(p[0], &c, 1));
	printf("got: %c\n", c);
	close(p[0]);
	close(p[1]);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A blocking read that nothing will end but a signal. */
static void interrupted(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 0 }, { 0, 50000 } };
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	uint64_t n;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	SHOW("blocking read of a disarmed timer, SIGALRM",
	     read(fd, &n, sizeof(n)));
	signal(SIGALRM, SIG_DFL);
	close(fd);
}

/* The child reads what the shared timer counted. */
static void forked(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, 0), st;
	pid_t pid;

	arm(fd, 10 * MS, 10 * MS);
	sleep_ns(35 * MS);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(read_count(fd) >= 1 ? 0 : 1);
	waitpid(pid, &st, 0);
	printf("child read the inherited timer: %s\n",
	       WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "yes" : "no");
	close(fd);
}

/* One timer for both: what the child sets, the parent sees. */
static void forked_settime(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, 0), st;
	struct itimerspec cur;
	pid_t pid;

	arm(fd, 3600 * SEC, SEC);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int ok = timerfd_gettime(fd, &cur) == 0 &&
		         cur.it_interval.tv_sec == 1 && cur.it_value.tv_sec > 3000;
		struct itimerspec s = its(1800 * SEC, 2 * SEC);

		ok = ok && timerfd_settime(fd, 0, &s, NULL) == 0;
		_exit(ok ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	printf("child queried and set the inherited timer: %s\n",
	       WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "yes" : "no");
	timerfd_gettime(fd, &cur);
	printf("parent sees the child's setting: %s\n",
	       cur.it_interval.tv_sec == 2 && cur.it_value.tv_sec <= 1800 &&
	       cur.it_value.tv_sec > 1700 ? "yes" : "no");
	close(fd);
}

/* errno is left alone by calls that succeed. */
static void errno_kept(void)
{
	struct itimerspec s = its(SEC, 0), cur;
	int fd;

	errno = 4242;
	fd = timerfd_create(CLOCK_MONOTONIC, 0);
	timerfd_settime(fd, 0, &s, NULL);
	timerfd_gettime(fd, &cur);
	close(fd);
	printf("errno after four calls that succeed: %d\n", errno);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	create_errors();
	settime_errors();
	io_errors();
	counts();
	clocks();
	rearm();
	readiness();
	vectors();
	duplicates();
	reuse();
	interrupted();
	forked();
	forked_settime();
	errno_kept();
	return 0;
}
