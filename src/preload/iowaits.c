/* SPDX-License-Identifier: MIT */
/*
 * iowaits.c - waits on virtual time that the kernel ends: socket calls
 * on a blocking socket (recv, recvfrom, recvmsg, accept, accept4; send,
 * sendto, sendmsg with SO_SNDTIMEO), with SO_RCVTIMEO and SO_SNDTIMEO
 * counted on the virtual clock; POSIX message queues with a timeout
 * (mq_timedreceive, mq_timedsend); signal waits (sigtimedwait,
 * sigwaitinfo, sigwait, sigsuspend, pause).  Each tries without
 * blocking, then waits as a wait of the domain (vtime.h: tfd_dom_kwait,
 * ppoll on the descriptor, the signal let through), and tries again.
 */
#include "preload/preload.h"
#include "vtime/vtime.h"

#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>

struct fdw {
	int fd;
	short events;
};

static int fdw_look(void *ctx)
{
	struct fdw *w = ctx;
	struct pollfd p = { w->fd, w->events, 0 };

	return R(poll)(&p, 1, 0);
}

static int fdw_block(void *ctx, const sigset_t *mask, int64_t ns)
{
	struct fdw *w = ctx;
	struct pollfd p = { w->fd, w->events, 0 };
	struct timespec ts = tfd_ns_to_ts(ns);

	return R(ppoll)(&p, 1, ns < 0 ? NULL : &ts, mask);
}

/* Wait until fd has events or the deadline: 1, 0 at the deadline, -1
 * with errno (EINTR). */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct fdw w = { fd, events };
	int r;

	if ((events & POLLIN) && tfd_dom_fd_outside(fd))
		tfd_dom_wait_outside(); /* its writer may be outside the tree */
	r = tfd_dom_kwait(deadline, NULL, fdw_look, fdw_block, &w);

	return r > 0 ? 1 : r;
}

/* ---- sockets ---- */

/* The socket's SO_RCVTIMEO or SO_SNDTIMEO in ns (0: none), or -1 if fd
 * is not a blocking socket (the call goes straight through). */
static int64_t sock_timeout(int fd, int opt)
{
	struct timeval tv;
	socklen_t len = sizeof(tv);
	int fl = R(fcntl)(fd, F_GETFL);

	if (fl < 0 || (fl & O_NONBLOCK) ||
	    getsockopt(fd, SOL_SOCKET, opt, &tv, &len) < 0)
		return -1;
	return tfd_tv_to_ns(&tv);
}

/* A call on a socket that may block: call(ctx, MSG_DONTWAIT) until it
 * does not fail with EAGAIN, waiting on virtual time between tries. */
ssize_t tfd_sock_call(int fd, int flags, int out,
                      ssize_t (*call)(void *, int), void *ctx)
{
	int64_t t, deadline;
	ssize_t r;
	int w;

	if (!tfd_dom || (flags & MSG_DONTWAIT))
		return call(ctx, flags);
	t = sock_timeout(fd, out ? SO_SNDTIMEO : SO_RCVTIMEO);
	/* A send without a timeout, or MSG_WAITALL: a try without blocking
	 * would return part of what the blocking call returns. */
	if (t < 0 || (out && t == 0) || (!out && !t && (flags & MSG_WAITALL)))
		return call(ctx, flags);
	deadline = t ? tfd_dom_deadline(t) : DOM_NEVER;
	for (;;) {
		r = call(ctx, flags | MSG_DONTWAIT);
		if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			return r;
		w = wait_fd(fd, out ? POLLOUT : POLLIN, deadline);
		if (w == 0) {
			errno = EAGAIN; /* the timeout, as Linux says it */
			return -1;
		}
		if (w < 0)
			return -1;
	}
}

/* The kernel's receive time stamps (SO_TIMESTAMP, SO_TIMESTAMPNS) are on
 * the system's CLOCK_REALTIME: they become the virtual one's now, when
 * the program received the message (ping measures its round trips with
 * them). */
void tfd_sock_stamps(struct msghdr *msg)
{
	struct cmsghdr *c;
	int64_t now;

	if (!msg->msg_control)
		return;
	now = tfd_dom_clock_now(CLOCK_REALTIME);
	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_TIMESTAMP &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct timeval))) {
			struct timeval tv = tfd_ns_to_tv(now);

			memcpy(CMSG_DATA(c), &tv, sizeof(tv));
		} else if (c->cmsg_type == SCM_TIMESTAMPNS &&
		           c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
			struct timespec ts = tfd_ns_to_ts(now);

			memcpy(CMSG_DATA(c), &ts, sizeof(ts));
		}
	}
}

/* accept(2) and accept4(2): a connection waiting, then the call. */
int tfd_sock_accept(int fd, int (*call)(void *), void *ctx)
{
	int64_t t, deadline;
	int w;

	if (!tfd_dom || (t = sock_timeout(fd, SO_RCVTIMEO)) < 0)
		return call(ctx);
	deadline = t ? tfd_dom_deadline(t) : DOM_NEVER;
	w = wait_fd(fd, POLLIN, deadline);
	if (w == 0) {
		errno = EAGAIN;
		return -1;
	}
	return w < 0 ? -1 : call(ctx);
}

/* ---- message queues ---- */

/* mq_timedreceive (out 0) or mq_timedsend (out 1): try(ctx) makes the
 * call with a timeout already past. */
ssize_t tfd_mq_timed(mqd_t q, int out, const struct timespec *abs,
                     ssize_t (*try)(void *), void *ctx)
{
	struct mq_attr a;
	ssize_t r;
	int64_t deadline;
	int w;

	if (!tfd_dom || mq_getattr(q, &a) < 0 || (a.mq_flags & O_NONBLOCK))
		return TFD_PASS;
	if (abs->tv_nsec < 0 || abs->tv_nsec >= TFD_NSEC)
		return TFD_PASS; /* EINVAL, from libc */
	deadline = tfd_ts_to_ns(abs) - tfd_dom_clock_now(CLOCK_REALTIME);
	if (deadline <= TFD_HORIZON)
		deadline += tfd_dom_clock_now(CLOCK_MONOTONIC);
	else
		deadline = DOM_NEVER;
	for (;;) {
		r = try(ctx);
		if (r >= 0 || errno != ETIMEDOUT)
			return r;
		w = wait_fd((int)q, out ? POLLOUT : POLLIN, deadline);
		if (w == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (w < 0)
			return -1;
	}
}

/* ---- children ---- */

/* A wait for a child (waitpid, wait4, waitid): look(ctx) is the call
 * with WNOHANG, > 0 when it returned something; it is looked at again
 * when the mover pokes (a process of the tree ended, stopped or went on:
 * the mover found it so) and by itself, 1 ms after it began or was poked,
 * then twice as long each time up to 64 ms (a child outside the tree, a
 * child's stop when time has nowhere to move), so that a child that
 * never ends costs little. */
#define CHILD_NAP_MAX 64000000 /* ns */
static __thread long child_nap;

static int child_block(void *ctx, const sigset_t *mask, int64_t ns)
{
	struct timespec nap = { 0, child_nap };
	int r;

	(void)ctx;
	if (ns >= 0 && ns < nap.tv_nsec)
		nap.tv_nsec = (long)ns;
	r = R(ppoll)(NULL, 0, &nap, mask);
	if (r < 0 && errno == EINTR)
		child_nap = 1000000; /* poked: a look soon again */
	else if (child_nap < CHILD_NAP_MAX)
		child_nap *= 2;
	return r;
}

int tfd_child_wait(int (*look)(void *), void *ctx)
{
	int r;

	child_nap = 1000000;
	do
		r = tfd_dom_kwait(DOM_NEVER, NULL, look, child_block, ctx);
	while (r == 0);
	return r;
}

/* ---- signals ---- */

struct sw {
	sigset_t set;
	siginfo_t *info;
};

static int sw_look(void *ctx)
{
	struct sw *w = ctx;
	struct timespec zero = { 0, 0 };
	long r = syscall(SYS_rt_sigtimedwait, &w->set, w->info, &zero,
	                 _NSIG / 8);

	return r > 0 ? (int)r : (errno == EAGAIN ? 0 : -1);
}

static int sw_block(void *ctx, const sigset_t *mask, int64_t ns)
{
	struct sw *w = ctx;
	struct timespec ts = tfd_ns_to_ts(ns);
	sigset_t with_poke = w->set;
	long r;

	(void)mask;
	sigaddset(&with_poke, DOM_POKE_SIG);
	r = syscall(SYS_rt_sigtimedwait, &with_poke, w->info,
	            ns < 0 ? NULL : &ts, _NSIG / 8);
	if (r == DOM_POKE_SIG || (r < 0 && errno == EAGAIN)) {
		errno = EINTR; /* look again */
		return -1;
	}
	return (int)r;
}

/* sigtimedwait (timeout NULL: sigwaitinfo): the signal, or -1 with errno
 * (EAGAIN at the timeout). */
int tfd_sig_wait(const sigset_t *set, siginfo_t *info,
                 const struct timespec *timeout)
{
	struct sw w;
	int64_t ns;
	int r;

	if (timeout && !tfd_ts_valid(timeout)) {
		errno = EINVAL;
		return -1;
	}
	w.set = *set;
	sigdelset(&w.set, DOM_POKE_SIG);
	w.info = info;
	ns = timeout ? tfd_ts_to_ns(timeout) : -1;
	r = tfd_dom_kwait(tfd_dom_deadline(ns), NULL, sw_look, sw_block, &w);
	if (r == 0) {
		errno = EAGAIN;
		return -1;
	}
	return r;
}

static int never(void *ctx)
{
	(void)ctx;
	return 0;
}

static int suspend_block(void *ctx, const sigset_t *mask, int64_t ns)
{
	struct timespec ts = tfd_ns_to_ts(ns);

	(void)ctx;
	return R(ppoll)(NULL, 0, ns < 0 ? NULL : &ts, mask);
}

/* sigsuspend (mask) and pause (NULL): -1 EINTR once a handler ran. */
int tfd_sig_suspend(const sigset_t *mask)
{
	int r;

	do
		r = tfd_dom_kwait(DOM_NEVER, mask, never, suspend_block, NULL);
	while (r == 0);
	return r;
}
