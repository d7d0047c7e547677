/* SPDX-License-Identifier: MIT */
/*
 * modes.c - the O_NONBLOCK of a timer's file, changed every way a program
 * changes it: fcntl(F_SETFL), ioctl(FIONBIO), a duplicate's, a system
 * call made with syscall(2), a forked child's.  A read with nothing to
 * count says EAGAIN exactly when the file is non-blocking, and blocks
 * until the expiration otherwise.
 */
#include "host.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* A read of fd, armed 30 ms ahead first: "EAGAIN", or what it counted
 * once it blocked. */
static const char *read_now(int fd)
{
	static char buf[48];
	long long n;

	h_arm(fd, 30, 0);
	n = h_read(fd);
	if (n < 0)
		return h_err(-n);
	snprintf(buf, sizeof(buf), "blocked, then %lld", n);
	return buf;
}

HOST_CASE(nonblock_mode_follows_every_change, H_NOLIB)
{
	int fd = T_create(CLOCK_MONOTONIC, T_NONBLOCK), dup_fd, on = 1, st;
	pid_t pid;

	say("made non-blocking: %s", read_now(fd));
	fcntl(fd, F_SETFL, 0);
	say("fcntl(F_SETFL, 0): %s", read_now(fd));
	ioctl(fd, FIONBIO, &on);
	say("ioctl(FIONBIO, 1): %s", read_now(fd));
	syscall(SYS_fcntl, fd, F_SETFL, 0);
	say("syscall(SYS_fcntl, F_SETFL, 0): %s", read_now(fd));
	dup_fd = dup(fd);
	fcntl(dup_fd, F_SETFL, O_NONBLOCK);
	say("F_SETFL O_NONBLOCK on a duplicate: %s", read_now(fd));
	close(dup_fd);
	pid = fork();
	if (pid == 0) {
		fcntl(fd, F_SETFL, 0);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	say("a child's F_SETFL 0: %s", read_now(fd));
	T_close(fd);
	return 0;
}
