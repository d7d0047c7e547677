/* SPDX-License-Identifier: MIT */
/*
 * deliver - what the waits that deliver their own timers (tfd(7),
 * Delivery: the preload's poll, ppoll, select and pselect on real time)
 * must keep of Linux, where the service thread leaves a timer to them:
 * another thread that waits on the same timer where the preload does not
 * see it (epoll), a wait that ends for another descriptor before its
 * timer's deadline, a timer re-armed earlier by another thread while a
 * wait sleeps for it, two waits on one timer, a periodic timer, a ppoll
 * with a bad timeout, a blocking read after such a wait and two readers
 * blocked on one timer, a forked child's poll on the parent's timer; and
 * epoll beside them: a look right after a poll that delivered the timer,
 * level, edge and one-shot registrations, a set nested in another, a
 * wait in a forked child on the parent's timer.
 * One line per fact, no time and no number that depends on one, so that
 * a run on Linux and runs through libtfd-preload.so compare line by line
 * (tests/realprog/run.sh: with TFD_DELIVERY=post too).
 *
 *   deliver        the facts above
 *   deliver raw    a read(2) made with syscall(2), which the preload does
 *                  not see, empties a posted timer: poll then waits for
 *                  the next expiration; a timer's number in an epoll set
 *                  closed with syscall(2) and given to a socket is never
 *                  written to (engine and kernel: on virtual time a raw
 *                  call is not ordered with the clock)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000LL

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void arm(int fd, int64_t value, int64_t interval)
{
	struct itimerspec v = { { interval / 1000000000, interval % 1000000000 },
		                { value / 1000000000, value % 1000000000 } };

	if (timerfd_settime(fd, 0, &v, NULL) < 0)
		perror("timerfd_settime");
}

static int timer(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

	if (fd < 0)
		perror("timerfd_create");
	return fd;
}

static void pause_ms(int ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * MS };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static const char *revents(short r)
{
	return r == POLLIN ? "POLLIN" : r == 0 ? "none" : "other";
}

static void say_read(const char *what, int fd)
{
	uint64_t n = 0;
	ssize_t r = read(fd, &n, sizeof(n));

	if (r == (ssize_t)sizeof(n))
		printf("%s: read %s\n", what, n == 1 ? "1" : "more than 1");
	else
		printf("%s: read %s\n", what, r < 0 ? strerror(errno) : "short");
}

/* poll(2) or select(2) for fd to be readable, for ms at most: what it
 * returned; *how what it said of fd. */
static int wait_one(int fd, int use_select, int ms, const char **how)
{
	int r;

	if (use_select) {
		fd_set rd;
		struct timeval tv = { ms / 1000, ms % 1000 * 1000 };

		FD_ZERO(&rd);
		FD_SET(fd, &rd);
		r = select(fd + 1, &rd, NULL, NULL, &tv);
		*how = FD_ISSET(fd, &rd) ? "readable" : "not readable";
	} else {
		struct pollfd p = { fd, POLLIN, 0 };

		r = poll(&p, 1, ms);
		*how = revents(p.revents);
	}
	return r;
}

/* ---- a wait the preload does not see, on the same timer ---- */

struct other {
	int fd, ep, how; /* how: 0 epoll_wait, 1 poll */
	int ready;
};

static void *wait_other(void *arg)
{
	struct other *o = arg;
	struct epoll_event ev;
	struct pollfd p = { o->fd, POLLIN, 0 };

	if (o->how == 0)
		o->ready = epoll_wait(o->ep, &ev, 1, 3000) == 1 &&
		           ev.events == EPOLLIN;
	else
		o->ready = poll(&p, 1, 3000) == 1 && p.revents == POLLIN;
	return NULL;
}

/* Two threads wait for one timer: one in poll or select, one elsewhere
 * (epoll, or a second poll).  Both see it; it is read once both did. */
static void two_waits(const char *name, int first_select, int how)
{
	int fd = timer();
	struct epoll_event ev = { EPOLLIN, { 0 } };
	struct other o = { fd, epoll_create1(EPOLL_CLOEXEC), how, 0 };
	const char *say;
	pthread_t th;
	int r;

	epoll_ctl(o.ep, EPOLL_CTL_ADD, fd, &ev);
	arm(fd, 40 * MS, 0);
	pthread_create(&th, NULL, wait_other, &o);
	r = wait_one(fd, first_select, 3000, &say);
	printf("%s: %s %d, %s\n", name, first_select ? "select" : "poll", r,
	       say);
	pthread_join(th, NULL);
	printf("%s: the other wait saw it: %s\n", name, o.ready ? "yes" : "no");
	say_read(name, fd);
	close(o.ep);
	close(fd);
}

/* ---- a wait that ends before its timer's deadline ---- */

static void *write_later(void *arg)
{
	pause_ms(10);
	if (write(*(int *)arg, "x", 1) != 1)
		perror("write");
	return NULL;
}

/* poll on a pipe and a timer 150 ms ahead ends for the pipe at 10 ms;
 * then an epoll_wait (which the preload does not see) on the timer sees
 * it expire. */
static void ends_early(void)
{
	int fd = timer(), pfd[2], ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { EPOLLIN, { 0 } };
	struct pollfd p[2];
	pthread_t th;
	char c;
	int r;

	if (pipe(pfd) < 0)
		return;
	p[0].fd = pfd[0];
	p[1].fd = fd;
	p[0].events = p[1].events = POLLIN;
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	arm(fd, 150 * MS, 0);
	pthread_create(&th, NULL, write_later, &pfd[1]);
	r = poll(p, 2, 3000);
	printf("early: poll %d, pipe %s, timer %s\n", r, revents(p[0].revents),
	       revents(p[1].revents));
	pthread_join(th, NULL);
	if (read(pfd[0], &c, 1) != 1)
		perror("read");
	r = epoll_wait(ep, &ev, 1, 3000);
	printf("early: then epoll_wait %d %s\n", r,
	       r == 1 && ev.events == EPOLLIN ? "EPOLLIN" : "none");
	say_read("early", fd);
	close(pfd[0]);
	close(pfd[1]);
	close(ep);
	close(fd);
}

/* ---- a timer re-armed earlier while a wait sleeps for it ---- */

static void *rearm_earlier(void *arg)
{
	pause_ms(20);
	arm(*(int *)arg, 30 * MS, 0);
	return NULL;
}

static void rearmed(int use_select)
{
	int fd = timer(), r;
	pthread_t th;
	int64_t t0 = now_ns();
	const char *name = use_select ? "rearmed, select" : "rearmed, poll";
	const char *say;

	arm(fd, 5000 * MS, 0);
	pthread_create(&th, NULL, rearm_earlier, &fd);
	r = wait_one(fd, use_select, 10000, &say);
	printf("%s: %d %s, before the first deadline: %s\n", name, r, say,
	       now_ns() - t0 < 4000 * MS ? "yes" : "no");
	pthread_join(th, NULL);
	say_read(name, fd);
	close(fd);
}

/* ---- a periodic timer, read after each poll; one that times out ---- */

static void periodic(void)
{
	int fd = timer(), i, ok = 1;
	struct pollfd p = { fd, POLLIN, 0 };
	uint64_t n;

	arm(fd, 3 * MS, 3 * MS);
	for (i = 0; i < 20; i++)
		ok &= poll(&p, 1, 3000) == 1 && p.revents == POLLIN &&
		      read(fd, &n, sizeof(n)) == sizeof(n) && n >= 1;
	printf("periodic: 20 polls, each readable, each read counted: %s\n",
	       ok ? "yes" : "no");
	arm(fd, 0, 0);
	arm(fd, 500 * MS, 0);
	printf("periodic: a poll of 20 ms for a timer 500 ms ahead: %d\n",
	       poll(&p, 1, 20));
	close(fd);
}

/* ---- a bad timeout; a read the preload does not see ---- */

static void bad_timeout(void)
{
	int fd = timer();
	struct pollfd p = { fd, POLLIN, 0 };
	struct timespec neg = { 0, -1 }, big = { 0, 1000000000 };
	int r;

	arm(fd, 5000 * MS, 0);
	r = ppoll(&p, 1, &neg, NULL);
	printf("ppoll, tv_nsec -1: %d %s\n", r, r < 0 ? strerror(errno) : "");
	r = ppoll(&p, 1, &big, NULL);
	printf("ppoll, tv_nsec 1e9: %d %s\n", r, r < 0 ? strerror(errno) : "");
	close(fd);
}

static void raw_read(void)
{
	int fd = timer();
	struct pollfd p = { fd, POLLIN, 0 };
	uint64_t n = 0;
	long r;

	arm(fd, 20 * MS, 20 * MS);
	printf("raw: poll %d\n", poll(&p, 1, 3000));
	pause_ms(2); /* what the engine posts, it posts by now */
	r = syscall(SYS_read, fd, &n, sizeof(n));
	printf("raw: read(2) through syscall(2): %s\n",
	       r == (long)sizeof(n) ? "a count" : strerror(errno));
	printf("raw: then a look: %d\n", poll(&p, 1, 0));
	r = poll(&p, 1, 3000);
	printf("raw: then a wait: %ld %s\n", r, revents(p.revents));
	close(fd);
}

/* ---- reads beside a wait that delivered ---- */

static void *read_blocking(void *arg)
{
	uint64_t n = 0;

	*(int *)arg = read(*(int *)arg, &n, sizeof(n)) == (ssize_t)sizeof(n)
	                      && n >= 1;
	return NULL;
}

/* A blocking read after a poll that reported the timer returns at once
 * with the count; two threads blocked in read on a periodic timer each
 * get a count (one per expiration, as Linux wakes one reader with it). */
static void reads(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC), a, b;
	struct pollfd p = { fd, POLLIN, 0 };
	pthread_t ta, tb;
	int64_t t0;

	arm(fd, 20 * MS, 0);
	printf("reads: poll %d\n", poll(&p, 1, 3000));
	t0 = now_ns();
	say_read("reads: a blocking read", fd);
	printf("reads: it did not wait: %s\n",
	       now_ns() - t0 < 15 * MS ? "yes" : "no");
	a = b = fd;
	arm(fd, 20 * MS, 40 * MS);
	pthread_create(&ta, NULL, read_blocking, &a);
	pthread_create(&tb, NULL, read_blocking, &b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	printf("reads: two blocked readers each got a count: %s\n",
	       a == 1 && b == 1 ? "yes" : "no");
	close(fd);
}

/* ---- epoll ---- */

static int epoll_of(int fd, uint32_t events)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { events, { .fd = fd } };

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		perror("epoll");
	return ep;
}

/* epoll_wait for ms at most: what it returned, and of what. */
static const char *ewait(int ep, int ms, int fd)
{
	static char buf[64];
	struct epoll_event ev[2];
	int r = epoll_wait(ep, ev, 2, ms);

	snprintf(buf, sizeof(buf), "%d%s", r,
	         r < 0 ? " error" : r == 0 ? "" :
	         r == 1 && ev[0].data.fd == fd && ev[0].events == EPOLLIN
	                 ? " EPOLLIN" : " other");
	return buf;
}

/* Level-triggered: readable to a look right after a poll said so (which
 * delivered it), reported until read, never before the deadline; the
 * epoll_pwait of a mask and a wait that times out. */
static void epoll_level(void)
{
	int fd = timer(), ep = epoll_of(fd, EPOLLIN), r;
	struct pollfd p = { fd, POLLIN, 0 };
	struct epoll_event ev;
	int64_t t0 = now_ns();
	sigset_t none;

	arm(fd, 20 * MS, 0);
	r = poll(&p, 1, 3000);
	printf("epoll level: after a poll %d, a look %s\n", r, ewait(ep, 0, fd));
	say_read("epoll level", fd);
	arm(fd, 30 * MS, 0);
	printf("epoll level: wait %s", ewait(ep, 3000, fd));
	printf(", not early: %s\n", now_ns() - t0 >= 30 * MS ? "yes" : "no");
	printf("epoll level: again, unread %s\n", ewait(ep, 0, fd));
	say_read("epoll level", fd);
	printf("epoll level: after the read %s\n", ewait(ep, 0, fd));
	arm(fd, 500 * MS, 0);
	printf("epoll level: 20 ms for a timer 500 ms ahead %s\n",
	       ewait(ep, 20, fd));
	arm(fd, 20 * MS, 0);
	sigemptyset(&none);
	r = epoll_pwait(ep, &ev, 1, 3000, &none);
	printf("epoll level: epoll_pwait %d\n", r);
	say_read("epoll level", fd);
	close(ep);
	close(fd);
}

/* Edge-triggered: one edge until the count is read, however many periods
 * pass; the program's own EPOLLONESHOT: nothing until it re-arms. */
static void epoll_edge(void)
{
	int fd = timer(), ep = epoll_of(fd, EPOLLIN | EPOLLET);
	struct epoll_event ev = { EPOLLIN | EPOLLONESHOT, { .fd = fd } };

	arm(fd, 10 * MS, 10 * MS);
	printf("epoll edge: wait %s\n", ewait(ep, 3000, fd));
	pause_ms(35);
	printf("epoll edge: periods later, unread %s\n", ewait(ep, 0, fd));
	say_read("epoll edge", fd);
	printf("epoll edge: the next period %s\n", ewait(ep, 3000, fd));
	close(ep);
	arm(fd, 0, 0);
	say_read("epoll edge", fd);
	ep = epoll_of(fd, EPOLLIN | EPOLLONESHOT);
	arm(fd, 10 * MS, 10 * MS);
	printf("epoll one-shot: wait %s\n", ewait(ep, 3000, fd));
	say_read("epoll one-shot", fd);
	printf("epoll one-shot: the next period, not re-armed %s\n",
	       ewait(ep, 40, fd));
	epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
	printf("epoll one-shot: re-armed %s\n", ewait(ep, 3000, fd));
	close(ep);
	close(fd);
}

/* A set in a set; a pipe that ends the wait before the timer; another
 * thread re-arms the timer earlier while the wait sleeps for it. */
static void epoll_sets(void)
{
	int fd = timer(), inner = epoll_of(fd, EPOLLIN), outer, pfd[2], ep;
	struct epoll_event ev[2], pev;
	pthread_t th;
	int64_t t0;
	char c;
	int r;

	outer = epoll_of(inner, EPOLLIN);
	arm(fd, 30 * MS, 0);
	r = epoll_wait(outer, ev, 2, 3000);
	printf("epoll nested: outer %d %s\n", r,
	       r == 1 && ev[0].data.fd == inner ? "inner" : "other");
	printf("epoll nested: inner %s\n", ewait(inner, 0, fd));
	say_read("epoll nested", fd);
	close(outer);
	close(inner);

	if (pipe(pfd) < 0)
		return;
	ep = epoll_of(fd, EPOLLIN);
	pev.events = EPOLLIN;
	pev.data.fd = pfd[0];
	epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &pev);
	arm(fd, 150 * MS, 0);
	pthread_create(&th, NULL, write_later, &pfd[1]);
	r = epoll_wait(ep, ev, 2, 3000);
	printf("epoll early: %d %s\n", r,
	       r == 1 && ev[0].data.fd == pfd[0] ? "pipe" : "other");
	pthread_join(th, NULL);
	if (read(pfd[0], &c, 1) != 1)
		perror("read");
	printf("epoll early: then %s\n", ewait(ep, 3000, fd));
	say_read("epoll early", fd);
	close(pfd[0]);
	close(pfd[1]);

	t0 = now_ns();
	arm(fd, 5000 * MS, 0);
	pthread_create(&th, NULL, rearm_earlier, &fd);
	printf("epoll rearmed: %s", ewait(ep, 10000, fd));
	printf(", before the first deadline: %s\n",
	       now_ns() - t0 < 4000 * MS ? "yes" : "no");
	pthread_join(th, NULL);
	say_read("epoll rearmed", fd);
	close(ep);
	close(fd);
}

/* A forked child waits for the parent's timer (a fork shares it), in
 * poll (which delivers it) or in its own epoll set; the parent's read
 * then counts that expiration once. */
static void wait_in_child(const char *name, int use_epoll)
{
	int fd = timer(), st = -1;
	pid_t pid;

	arm(fd, 30 * MS, 0);
	pid = fork();
	if (pid == 0) {
		struct pollfd p = { fd, POLLIN, 0 };
		int r;

		if (use_epoll) {
			printf("%s: the child's wait %s\n", name,
			       ewait(epoll_of(fd, EPOLLIN), 3000, fd));
		} else {
			r = poll(&p, 1, 3000);
			printf("%s: the child's poll %d %s\n", name, r,
			       revents(p.revents));
		}
		_exit(0);
	}
	waitpid(pid, &st, 0);
	printf("%s: the child exited %d\n", name,
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	say_read(name, fd);
	say_read(name, fd);
	close(fd);
}

/* ---- a number closed where the preload does not see it ---- */

/* A timer registered in an epoll set under one number, kept open under
 * another (a dup), its first number closed with a raw system call and
 * given to a socket: a poll on the dup delivers the timer, an epoll
 * look follows, and nothing may be written to the socket.  1 if
 * something was; -1 if the socket did not get the number. */
static int stale_once(void)
{
	int fd = timer(), sv[2], ep, dupfd, other, wrote = -1;
	struct pollfd p;
	char buf[16];

	ep = epoll_of(fd, EPOLLIN);
	dupfd = dup(fd);
	syscall(SYS_close, fd);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	               sv) < 0)
		return -1;
	if (sv[0] == fd || sv[1] == fd) {
		other = sv[0] == fd ? sv[1] : sv[0];
		p.fd = dupfd;
		p.events = POLLIN;
		arm(dupfd, 20 * MS, 0);
		if (poll(&p, 1, 3000) != 1)
			printf("stale: poll on the dup did not see the timer\n");
		ewait(ep, 0, fd);
		pause_ms(5);
		wrote = recv(other, buf, sizeof(buf), 0) >= 0 ||
		        errno != EAGAIN;
	}
	close(sv[0]);
	close(sv[1]);
	close(ep);
	close(dupfd);
	return wrote;
}

static void stale_number(void)
{
	int i, r, wrote = 0, took = 1;

	for (i = 0; i < 10; i++) {
		r = stale_once();
		took &= r >= 0;
		wrote |= r == 1;
	}
	printf("stale: the socket took the closed number: %s\n",
	       took ? "yes" : "no");
	printf("stale: anything written to the socket: %s\n",
	       wrote ? "yes" : "no");
}

/* Three timers due in one set, epoll_wait with room for two, three times
 * without a read: level-triggered, each is reported again while it is
 * readable, and all three are reported in the three waits, as the kernel
 * rotates its ready list (a wait that delivers, from its own list). */
static void epoll_room(void)
{
	int fd[3], ep = epoll_create1(EPOLL_CLOEXEC), i, j, seen[3] = { 0 };
	struct epoll_event ev[2];

	for (i = 0; i < 3; i++) {
		struct epoll_event e = { EPOLLIN, { .u32 = (uint32_t)i } };

		fd[i] = timer();
		epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &e);
	}
	epoll_wait(ep, ev, 2, 0); /* (a look first: then armed) */
	for (i = 0; i < 3; i++)
		arm(fd[i], 10 * MS, 0);
	pause_ms(30);
	for (i = 0; i < 3; i++) {
		int r = epoll_wait(ep, ev, 2, 1000);

		printf("epoll room: wait %d returned %d\n", i, r);
		for (j = 0; j < r && j < 2; j++)
			seen[ev[j].data.u32 % 3] = 1;
	}
	printf("epoll room: every timer reported: %s\n",
	       seen[0] && seen[1] && seen[2] ? "yes" : "no");
	for (i = 0; i < 3; i++) {
		say_read("epoll room", fd[i]);
		close(fd[i]);
	}
	close(ep);
}

/* Many timers in one set (more than a wait looks at one by one): 300,
 * on CLOCK_MONOTONIC, CLOCK_REALTIME and CLOCK_BOOTTIME in turn, due 20 ms
 * ahead and 0.1 ms apart (absolute, each on its clock), read as a loop
 * reads them, 16 at a time; each is reported once it is due and not
 * before, and read once.
 * Then the same set re-armed: all 2 s ahead, and every other one again
 * 20 ms ahead; those are reported first, long before the others (a
 * re-arm earlier reaches a wait); then the others re-armed 30 ms ahead
 * and, before that, 90 ms ahead (a re-arm later makes no read early). */
#define MANY 300
static int many_read(int ep, const int *fd, int want, int64_t *due,
                     int *early)
{
	struct epoll_event ev[16];
	int n = 0, i, r;

	while (n < want && (r = epoll_wait(ep, ev, 16, 3000)) > 0)
		for (i = 0; i < r; i++) {
			uint64_t c;
			int k = (int)ev[i].data.u32;

			if (read(fd[k], &c, sizeof(c)) != sizeof(c))
				continue;
			*early += now_ns() < due[k];
			due[k] = -1; /* read: not reported again */
			n += c == 1;
		}
	return n;
}

static void epoll_many(void)
{
	int fd[MANY], ep = epoll_create1(EPOLL_CLOEXEC), i, n, early = 0;
	int64_t due[MANY], t0;
	struct epoll_event one;
	static const clockid_t clocks[3] = { CLOCK_MONOTONIC, CLOCK_REALTIME,
		                             CLOCK_BOOTTIME };

	for (i = 0; i < MANY; i++) {
		struct epoll_event e = { EPOLLIN, { .u32 = (uint32_t)i } };

		fd[i] = timerfd_create(clocks[i % 3], TFD_NONBLOCK | TFD_CLOEXEC);
		epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &e);
	}
	epoll_wait(ep, &one, 1, 0); /* (a look first: then armed) */
	t0 = now_ns();
	for (i = 0; i < MANY; i++) {
		struct itimerspec at = { { 0, 0 }, { 0, 0 } };
		struct timespec ts;
		int64_t on;

		/* (on its own clock: the same time from now, or later) */
		due[i] = t0 + 20 * MS + i * MS / 10;
		on = due[i] - now_ns(); /* (read first: never earlier) */
		clock_gettime(clocks[i % 3], &ts);
		on += ts.tv_sec * 1000000000LL + ts.tv_nsec;
		at.it_value.tv_sec = on / 1000000000;
		at.it_value.tv_nsec = on % 1000000000;
		timerfd_settime(fd[i], TFD_TIMER_ABSTIME, &at, NULL);
	}
	n = many_read(ep, fd, MANY, due, &early);
	printf("epoll many: %d of %d read once, counted 1; early: %d\n", n,
	       MANY, early);
	for (i = 0; i < MANY; i++) {
		arm(fd[i], 2000 * MS, 0);
		due[i] = now_ns() + 2000 * MS;
	}
	for (i = 0; i < MANY; i += 2) {
		due[i] = now_ns() + 20 * MS;
		arm(fd[i], 20 * MS, 0);
	}
	t0 = now_ns();
	n = many_read(ep, fd, MANY / 2, due, &early);
	printf("epoll many re-armed earlier: %d read, within 1 s: %s; "
	       "early: %d\n", n, now_ns() - t0 < 1000 * MS ? "yes" : "no",
	       early);
	for (i = 1; i < MANY; i += 2) {
		arm(fd[i], 30 * MS, 0);
		due[i] = now_ns() + 90 * MS;
		arm(fd[i], 90 * MS, 0);
	}
	n = many_read(ep, fd, MANY / 2, due, &early);
	printf("epoll many re-armed later: %d read; early: %d\n", n, early);
	for (i = 0; i < MANY; i++)
		close(fd[i]);
	close(ep);
}

/* Two epoll sets numbered above 1,024, 1,024 apart (the preload counts
 * the kernel's waits on such sets by their number modulo 1,024): another
 * thread blocks in a wait on the one without timers while this one waits
 * for a timer of the other, due 20 ms ahead: reported at its deadline. */
struct blocked {
	int ep;
};

static void *block_on(void *arg)
{
	struct blocked *b = arg;
	struct epoll_event ev;

	epoll_wait(b->ep, &ev, 1, 600);
	return NULL;
}

/* An epoll set at number at, or -1. */
static int epoll_at(int at)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), r;

	if (ep < 0)
		return -1;
	r = dup2(ep, at);
	close(ep);
	return r;
}

static void epoll_high_sets(void)
{
	struct rlimit rl;
	struct blocked b;
	struct epoll_event ev = { EPOLLIN, { .u32 = 5 } };
	int fd = timer(), ep, n;
	pthread_t t;
	int64_t t0;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2200 &&
	    rl.rlim_max >= 2200) {
		rl.rlim_cur = 2200;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	ep = epoll_at(1100);
	b.ep = epoll_at(1100 + 1024);
	if (ep < 0 || b.ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		printf("epoll high sets: no set above 1,024 (%s)\n",
		       strerror(errno));
		return;
	}
	epoll_wait(ep, &ev, 1, 0); /* (a look first: then armed) */
	pthread_create(&t, NULL, block_on, &b);
	pause_ms(50); /* (it blocks meanwhile) */
	arm(fd, 20 * MS, 0);
	t0 = now_ns();
	n = epoll_wait(ep, &ev, 1, 400);
	printf("epoll high sets: reported %d, within 200 ms: %s\n", n,
	       now_ns() - t0 < 200 * MS ? "yes" : "no");
	say_read("epoll high sets", fd);
	pthread_join(t, NULL);
	close(fd);
	close(ep);
	close(b.ep);
}

/* A set made before fork(): the child removes the timer from it (the set
 * is one file for both); the parent's wait then does not report it. */
static void epoll_forked_set(void)
{
	int fd = timer(), ep = epoll_of(fd, EPOLLIN), st;
	pid_t pid;

	arm(fd, 50 * MS, 0);
	pid = fork();
	if (pid == 0) {
		epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	printf("epoll forked set: after the child's DEL: %s\n",
	       ewait(ep, 300, fd));
	say_read("epoll forked set", fd);
	close(ep);
	close(fd);
}

/* A set whose timer its waits delivered, then selected as a descriptor:
 * readable when the timer expires, as on Linux. */
static void epoll_selected(void)
{
	int fd = timer(), ep = epoll_of(fd, EPOLLIN), r;
	struct epoll_event ev;
	const char *how;

	epoll_wait(ep, &ev, 1, 0); /* (a look first: then armed) */
	arm(fd, 30 * MS, 0);
	r = wait_one(ep, 1, 3000, &how);
	printf("epoll selected: select %d, the set %s\n", r, how);
	say_read("epoll selected", fd);
	close(ep);
	close(fd);
}

static void epoll_facts(void)
{
	epoll_level();
	epoll_edge();
	epoll_sets();
	epoll_room();
	epoll_many();
	epoll_high_sets();
	epoll_selected();
	epoll_forked_set();
	wait_in_child("epoll fork", 1);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "raw")) {
		raw_read();
		stale_number();
		return 0;
	}
	bad_timeout();
	two_waits("poll and epoll", 0, 0);
	two_waits("select and epoll", 1, 0);
	two_waits("two polls", 0, 1);
	ends_early();
	rearmed(0);
	rearmed(1);
	periodic();
	reads();
	wait_in_child("poll fork", 0);
	epoll_facts();
	return 0;
}
