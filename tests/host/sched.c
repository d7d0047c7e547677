/* SPDX-License-Identifier: MIT */
/*
 * sched.c - programs that set their threads' scheduling: real-time
 * policies, CPUs pinned, small stacks, timer slack, memory locked.
 */
#include "host.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A SCHED_FIFO thread pinned to one CPU spins on epoll_wait(0) for its
 * 20 ms timer: Linux's timer fires, however busy the CPU is. */
HOST_CASE(sched_fifo_spinner_sees_its_timer, H_NOVIRTUAL)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct epoll_event ev = { .events = EPOLLIN };
	cpu_set_t one;
	int64_t t0;
	int fd, ep, n = 0;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0 ||
	    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0) {
		say("no real-time policy here: nothing to compare");
		return 0;
	}
	fd = h_timer(T_NONBLOCK, 20, 0);
	ep = epoll_create1(0);
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	t0 = mono_ms();
	while (n == 0 && mono_ms() - t0 < 3000)
		n = epoll_wait(ep, &ev, 1, 0);
	sp.sched_priority = 0;
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	say("the spinner saw its timer: %s, count %lld", n == 1 ? "yes" : "no",
	    h_count(fd));
	close(ep);
	T_close(fd);
	return 0;
}

/* A program that made its stack limit small (ulimit -s 64) still has
 * timers that fire, and threads of its own with that default. */
HOST_CASE(small_stack_limit_keeps_timers, 0)
{
	struct rlimit rl = { 64 * 1024, 64 * 1024 };
	int fd;

	if (setrlimit(RLIMIT_STACK, &rl) != 0)
		return say("setrlimit: %s", h_err(errno)), 1;
	fd = h_timer(0, 20, 0);
	say("created: %s", fd >= 0 ? "yes" : h_err(errno));
	say("read: %lld", h_read(fd));
	T_close(fd);
	return 0;
}

static void *slack_of_thread(void *arg)
{
	*(long *)arg = (long)prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
	return NULL;
}

/* The program sets its timer slack, then waits on a timer with epoll and
 * poll: prctl() still tells its own value, and a thread it starts then
 * inherits that value, as on Linux. */
HOST_CASE(timer_slack_stays_the_programs, 0)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct pollfd p;
	pthread_t th;
	long child = -1;
	int fd = h_timer(T_NONBLOCK, 20, 0), ep = epoll_create1(0);

	prctl(PR_SET_TIMERSLACK, 123456UL, 0UL, 0UL, 0UL);
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	say("epoll_wait: %d", epoll_wait(ep, &ev, 1, 2000));
	say("read: %lld", h_read(fd));
	h_arm(fd, 20, 0);
	p.fd = fd;
	p.events = POLLIN;
	say("poll: %d", poll(&p, 1, 2000));
	say("slack after the waits: %d",
	    prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL));
	pthread_create(&th, NULL, slack_of_thread, &child);
	pthread_join(th, NULL);
	say("a new thread's slack: %ld", child);
	prctl(PR_SET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
	close(ep);
	T_close(fd);
	return 0;
}

/* A real-time program locks its memory, present and future
 * (mlockall(MCL_CURRENT | MCL_FUTURE)), then makes a timer: its timer
 * works, and what the timer locks is small (a kernel timerfd locks
 * nothing; the engine, a thread's stack, not the 72 MiB it reserves for
 * timers to come).  Not in a sanitizer's build, whose shadow memory
 * would be locked; only where locking is not limited (root, or an
 * unlimited RLIMIT_MEMLOCK): else what the preload maps may pass the
 * limit where the program alone does not. */
HOST_CASE(mlockall_future_then_a_timer, 0)
{
	struct rlimit r;
	long before, after;
	int fd;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	say("(not in a sanitizer's build)");
	return 0;
#endif
	if (geteuid() != 0 && (getrlimit(RLIMIT_MEMLOCK, &r) != 0 ||
	                       r.rlim_cur != RLIM_INFINITY)) {
		say("(locked memory is limited here)");
		return 0;
	}
	if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
		say("mlockall: %s", h_err(errno));
		return 0;
	}
	before = h_status_kb("VmLck");
	fd = h_timer(0, 5, 0);
	say("the timer's read: %lld", h_read(fd));
	after = h_status_kb("VmLck");
	say("memory it locked: under 4 MiB: %s",
	    before >= 0 && after - before < 4096 ? "yes" : "no");
	munlockall();
	return T_close(fd) != 0;
}
