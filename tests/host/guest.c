/* SPDX-License-Identifier: MIT */
/*
 * guest.c - what an ordinary program does with what is its own, beside
 * its timers: limits on its address space, its descriptors closed or
 * marked wholesale, its standard input closed, thousands of numbers in
 * use.  Nothing of it may cost the program a timer that Linux gives.
 */
#include "host.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* RLIMIT_AS 12 MB above what the process has mapped: a timer is made,
 * armed and read, as Linux's needs a few hundred bytes.  Not in a
 * sanitizer's build, whose run-time reserves and maps as it goes. */
HOST_CASE(address_space_limit_twelve_mb_spare, 0)
{
	struct rlimit r;
	int fd;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	say("(not in a sanitizer's build)");
	return 0;
#endif
	r.rlim_cur = (rlim_t)(h_status_kb("VmSize") + 12 * 1024) * 1024;
	r.rlim_max = r.rlim_cur;
	say("limit set: %s", setrlimit(RLIMIT_AS, &r) == 0 ? "yes" : "no");
	fd = h_timer(0, 5, 0);
	say("a timer: %s, read %lld", fd >= 0 ? "made" : h_err(errno),
	    fd >= 0 ? h_read(fd) : 0);
	return fd >= 0 && T_close(fd) != 0;
}

/* close_range(CLOSE_RANGE_CLOEXEC) over every number: the timer is kept,
 * marked close-on-exec, and reads; a timer made after is not marked. */
HOST_CASE(close_range_cloexec_keeps_timers, H_NOLIB)
{
	int fd = h_timer(0, 5, 0), again;

	say("close_range: %s",
	    close_range(0, ~0U, CLOSE_RANGE_CLOEXEC) == 0 ? "done"
	                                                  : h_err(errno));
	say("the timer: close-on-exec %d, read %lld", fcntl(fd, F_GETFD),
	    h_read(fd));
	again = h_timer(0, 5, 0);
	say("a new one: close-on-exec %d, read %lld", fcntl(again, F_GETFD),
	    h_read(again));
	T_close(again);
	return T_close(fd) != 0;
}

/* A program started with its standard input closed: its first timer is
 * number 0, as Linux gives the lowest free number. */
HOST_CASE(stdin_closed_first_timer_takes_zero, 0)
{
	int fd;

	close(0);
	fd = h_timer(0, 5, 0);
	say("the first timer's number: %d, read %lld", fd, h_read(fd));
	return T_close(fd) != 0;
}

/* A daemon's child closes every number from 3 to 1023 by hand, its
 * inherited timer among them, then makes timers of its own (a periodic
 * one's period far longer than a busy machine's delays, so that it reads
 * one count as on Linux); the parent's timer, closed only in the child,
 * goes on for the parent. */
HOST_CASE(daemon_child_closes_every_descriptor, H_NOLIB)
{
	int fd = h_timer(0, 5, 0), st;
	pid_t pid;

	say("parent read: %lld", h_read(fd));
	pid = fork();
	if (pid == 0) {
		int i, a, b;

		for (i = 3; i < 1024; i++)
			close(i);
		a = h_timer(0, 5, 0);
		b = h_timer(0, 5, 2000); /* periodic; one count by far */
		say("child: timers at %d and %d, read %lld and %lld", a, b,
		    h_read(a), h_read(b));
		_exit(T_close(a) || T_close(b));
	}
	waitpid(pid, &st, 0);
	say("child exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	h_arm(fd, 5, 0);
	say("parent re-armed, read: %lld", h_read(fd));
	return T_close(fd) != 0;
}

/* closefrom(3) ends the program's timers as close(2) each would; a timer
 * made after works, at the lowest number. */
HOST_CASE(closefrom_then_new_timers, H_NOLIB)
{
	struct itimerspec cur;
	int fd = h_timer(0, 5, 0), again;

	h_read(fd);
	closefrom(3);
	say("the closed timer's gettime: %s",
	    T_gettime(fd, &cur) == 0 ? "0" : h_err(errno));
	again = h_timer(0, 5, 0);
	say("a new timer at %d, read %lld", again, h_read(again));
	return T_close(again) != 0;
}

/* 3,000 numbers in use below a timer (a server's connections, with its
 * soft RLIMIT_NOFILE raised as servers do): the timer above them works,
 * and so does the one below. */
HOST_CASE(three_thousand_descriptors_below_a_timer, 0)
{
	int low = h_timer(0, 5, 0), high, i, n = 0;
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < 4096 &&
	    r.rlim_max >= 4096) {
		r.rlim_cur = 4096;
		setrlimit(RLIMIT_NOFILE, &r);
	}
	for (i = 0; i < 3000; i++)
		n += dup(1) >= 0;
	high = h_timer(0, 5, 0);
	say("3000 numbers taken: %s, the timer above them: %s",
	    n == 3000 ? "yes" : "no", high > 3000 ? "above" : "below");
	say("reads: above %lld, below %lld", h_read(high), h_read(low));
	T_close(high);
	return T_close(low) != 0;
}

/* fd sent over s (SCM_RIGHTS); 0 or -1. */
static int send_fd(int s, int fd)
{
	char c = 'x', buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
		            .msg_control = buf, .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	memset(buf, 0, sizeof(buf));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	return sendmsg(s, &m, 0) == 1 ? 0 : -1;
}

/* The number received over s, or -1. */
static int recv_fd(int s)
{
	char c, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
		            .msg_control = buf, .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm;
	int fd = -1;

	if (recvmsg(s, &m, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	return fd;
}

/* What a received number does: the time left, a re-arming, a read. */
static void use_received(const char *who, int fd)
{
	struct itimerspec cur;
	const char *armed;

	say("%s: gettime: %s", who,
	    T_gettime(fd, &cur) == 0
	            ? (cur.it_value.tv_sec >= 1 ? "time left" : "none left")
	            : h_err(errno));
	armed = h_arm(fd, 5, 0) == 0 ? "yes" : h_err(errno);
	say("%s: re-armed for 5 ms: %s, read %lld", who, armed, h_read(fd));
}

/* A timer sent over a UNIX socket (SCM_RIGHTS) to the process itself,
 * its first number then closed; and to a child that holds it from
 * fork(), which closes its inherited number: each received number is
 * the timer, as a dup() of it would be. */
HOST_CASE(timer_received_over_a_unix_socket, H_NOLIB)
{
	int sv[2], fd = h_timer(0, 10 * 1000, 0), got, st;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	send_fd(sv[0], fd);
	got = recv_fd(sv[1]);
	say("received: %s", got >= 0 && got != fd ? "a new number" : "no");
	T_close(fd);
	use_received("itself", got);
	fd = got;
	h_arm(fd, 10 * 1000, 0);
	pid = fork();
	if (pid == 0) {
		int mine = recv_fd(sv[1]);

		T_close(fd); /* the inherited number */
		use_received("child", mine);
		_exit(T_close(mine) != 0);
	}
	send_fd(sv[0], fd);
	waitpid(pid, &st, 0);
	say("child exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	close(sv[0]);
	close(sv[1]);
	return T_close(fd) != 0;
}
