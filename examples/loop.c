/* SPDX-License-Identifier: MIT */
/* loop.c - the example event loop.  See loop.h. */
#define _GNU_SOURCE
#include "loop.h"

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#ifdef LOOP_TIMERFD
/* Built with -DLOOP_TIMERFD (eventloop-timerfd), the same loop calls
 * glibc's timerfd_create(2) family instead of the library: a program that
 * tfd exec can run on tfd timers and trace (tfd(1)). */
#include <sys/timerfd.h>
#define tfd_create timerfd_create
#define tfd_settime timerfd_settime
#define tfd_read read
#define tfd_close close
#else
#include <tfd.h>
#endif

const char *loop_event_name(enum loop_event ev)
{
	static const char *const names[] = { "heartbeat", "idle", "deadline",
		                             "activity" };

	return names[ev];
}

static struct itimerspec its(int64_t value, int64_t interval)
{
	struct itimerspec v;

	v.it_value.tv_sec = value / 1000000000;
	v.it_value.tv_nsec = value % 1000000000;
	v.it_interval.tv_sec = interval / 1000000000;
	v.it_interval.tv_nsec = interval % 1000000000;
	return v;
}

static int watch(int ep, int fd)
{
	struct epoll_event ev;

	ev.events = EPOLLIN;
	ev.data.fd = fd;
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

int loop_open(struct loop *l, int input, int64_t heartbeat_ns,
              int64_t idle_ns, const struct timespec *deadline)
{
	struct itimerspec hb = its(heartbeat_ns, heartbeat_ns);
	struct itimerspec idle = its(idle_ns, 0);
	struct itimerspec end = { { 0, 0 }, *deadline };
	int e;

	l->input = input;
	l->idle_ns = idle_ns;
	l->done = 0;
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->heartbeat = tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	l->idle = tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	l->deadline = tfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (l->ep < 0 || l->heartbeat < 0 || l->idle < 0 || l->deadline < 0 ||
	    tfd_settime(l->heartbeat, 0, &hb, NULL) < 0 ||
	    tfd_settime(l->idle, 0, &idle, NULL) < 0 ||
	    tfd_settime(l->deadline, TFD_TIMER_ABSTIME, &end, NULL) < 0 ||
	    watch(l->ep, l->heartbeat) < 0 || watch(l->ep, l->idle) < 0 ||
	    watch(l->ep, l->deadline) < 0 ||
	    (input >= 0 && watch(l->ep, input) < 0 && errno != EPERM)) {
		e = errno;
		loop_close(l);
		errno = e;
		return -1;
	}
	/* EPERM: epoll cannot watch the input (a regular file, /dev/null):
	 * the loop runs as if it had ended at once. */
	return 0;
}

/* Read a timer; emit its event if it expired. */
static int expired(struct loop *l, int fd, enum loop_event ev)
{
	uint64_t n;

	if (tfd_read(fd, &n, sizeof(n)) < 0)
		return errno == EAGAIN ? 0 : -1;
	l->emit(l->ctx, ev, n);
	return 1;
}

/* Activity: drain the input and push the idle timeout back. */
static int activity(struct loop *l)
{
	struct itimerspec idle = its(l->idle_ns, 0);
	char buf[256];
	ssize_t r = read(l->input, buf, sizeof(buf));

	if (r == 0) /* end of input: stop watching it */
		return epoll_ctl(l->ep, EPOLL_CTL_DEL, l->input, NULL);
	if (r < 0)
		return errno == EAGAIN ? 0 : -1;
	l->emit(l->ctx, LOOP_ACTIVITY, 1);
	return tfd_settime(l->idle, 0, &idle, NULL) < 0 ? -1 : 1;
}

int loop_run_once(struct loop *l, int timeout_ms)
{
	struct epoll_event ev[4];
	int n, i, handled = 0, r = 0;

	n = epoll_wait(l->ep, ev, 4, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	for (i = 0; i < n && r >= 0; i++) {
		int fd = ev[i].data.fd;

		if (fd == l->input)
			r = activity(l);
		else if (fd == l->heartbeat)
			r = expired(l, fd, LOOP_HEARTBEAT);
		else if (fd == l->idle)
			r = expired(l, fd, LOOP_IDLE);
		else if ((r = expired(l, fd, LOOP_DEADLINE)) > 0)
			l->done = 1;
		handled += r > 0;
	}
	return r < 0 ? -1 : handled;
}

void loop_close(struct loop *l)
{
	if (l->heartbeat >= 0)
		tfd_close(l->heartbeat);
	if (l->idle >= 0)
		tfd_close(l->idle);
	if (l->deadline >= 0)
		tfd_close(l->deadline);
	if (l->ep >= 0)
		close(l->ep);
	l->ep = l->heartbeat = l->idle = l->deadline = -1;
}
