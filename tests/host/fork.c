/* SPDX-License-Identifier: MIT */
/*
 * fork.c - processes that fork around their timers: a child that makes a
 * timer, a daemon whose parent exits, a double fork, a prefork server.
 */
#include "host.h"

#include <stdlib.h>
#include <sys/wait.h>

/* The exit status of a child, or -1. */
static int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A child makes a timer, reads it, closes it, and so does its parent. */
HOST_CASE(fork_then_create, 0)
{
	int fd = h_timer(0, 10, 10);
	pid_t pid = fork();

	if (pid == 0) {
		int mine = h_timer(0, 5, 0);

		say("child: made a timer: %s", mine >= 0 ? "yes" : "no");
		say("child: its read: %lld", h_read(mine));
		say("child: inherited one read: %s",
		    h_read(fd) >= 1 ? ">= 1" : "none");
		_exit(T_close(mine) == 0 ? 0 : 1);
	}
	say("child exit %d", reap(pid));
	say("parent read: %s", h_read(fd) >= 1 ? ">= 1" : "none");
	return T_close(fd) != 0;
}

/* daemon-style start: the parent exits, the child polls the inherited
 * timer and counts at least 5 expirations in 5 polls. */
HOST_CASE(daemon_child_polls_inherited_timer, 0)
{
	int fd = h_timer(T_NONBLOCK, 20, 20), i, ok = 0;
	int pfd[2];
	char c;
	pid_t pid;

	if (pipe(pfd) < 0)
		return 1;
	pid = fork();
	if (pid != 0) {
		close(pfd[1]);
		/* "the parent exits": it only waits for the daemon's word */
		say("parent exits");
		reap(pid);
		while (read(pfd[0], &c, 1) == 1)
			putchar(c);
		fflush(stdout);
		return 0;
	}
	if (fork() != 0)
		_exit(0); /* the first child exits at once: a double fork */
	setsid();
	close(pfd[0]);
	for (i = 0; i < 5; i++)
		if (h_poll(fd, 2000) == 1 && h_count(fd) >= 1)
			ok++;
	dprintf(pfd[1], "daemon: %d of 5 polls found expirations\n", ok);
	dprintf(pfd[1], "daemon: a new timer: %lld\n",
		h_read(h_timer(0, 10, 0)));
	_exit(0);
}

/* A master holding a timer forks 100 workers; each makes a timer of its
 * own and reads it. */
HOST_CASE(prefork_hundred_workers, 0)
{
	int fd = h_timer(0, 1000, 1000), i, good = 0, bad = 0, st;
	pid_t pids[100];

	for (i = 0; i < 100; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			int mine = h_timer(0, 20, 0);

			if (mine < 0)
				_exit(10 + errno % 100);
			_exit(h_read(mine) == 1 && T_close(mine) == 0 ? 0 : 3);
		}
	}
	for (i = 0; i < 100; i++) {
		st = reap(pids[i]);
		if (st == 0)
			good++;
		else if (bad++ == 0)
			say("worker %d: status %d (the first to fail)", i, st);
	}
	say("%d of 100 workers made and read a timer", good);
	say("master reads: %lld", h_read(fd));
	return T_close(fd) != 0;
}
