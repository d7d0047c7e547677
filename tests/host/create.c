/* SPDX-License-Identifier: MIT */
/*
 * create.c - making and closing timers as programs do, around the
 * engine's way of making one (tfd(7), THE TIMER'S FILE): a fresh eventfd
 * of the service thread's taken into the program's table with
 * pidfd_getfd(2) at the pidfd's number, its id read only at a fork, its
 * copy closed later in batches.  Each case prints what Linux gives: the
 * number a timer gets (the lowest free), its flags, how many fit under a
 * descriptor limit, what a forked child or a sandbox that refuses the
 * pidfd calls gets.
 */
#include "host.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* The number the next descriptor gets. */
static int lowest(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

static int wait_child(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Descriptors open in the program's table. */
static int nfds(void)
{
	int n = 0, fd;

	for (fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* Numbers, close-on-exec and O_NONBLOCK of timers made with holes below
 * them and without, with each flag and without: as timerfd_create(2)
 * gives them. */
HOST_CASE(create_numbers_and_flags_as_linux, 0)
{
	static const int fl[4] = { 0, T_NONBLOCK, T_CLOEXEC,
		                   T_NONBLOCK | T_CLOEXEC };
	int fd[64], i, low, right = 0, flags = 0;

	for (i = 0; i < 64; i++) {
		low = lowest();
		fd[i] = T_create(CLOCK_MONOTONIC, fl[i % 4]);
		if (fd[i] < 0) {
			say("create %d: %s", i, h_err(errno));
			return 1;
		}
		right += fd[i] == low;
		flags += !!(fcntl(fd[i], F_GETFD) & FD_CLOEXEC) ==
		                 !!(fl[i % 4] & T_CLOEXEC) &&
		         !!(fcntl(fd[i], F_GETFL) & O_NONBLOCK) ==
		                 !!(fl[i % 4] & T_NONBLOCK);
		/* holes: every third one closed again at once */
		if (i % 3 == 2 && T_close(fd[i - 1]) == 0)
			fd[i - 1] = -1;
	}
	say("64 made, at the lowest free number: %d, flags right: %d", right,
	    flags);
	for (i = 0, right = 0; i < 8; i++) {
		low = lowest();
		fd[i * 3 + 1] = T_create(CLOCK_MONOTONIC, fl[i % 4]);
		right += fd[i * 3 + 1] == low;
	}
	say("8 made in the holes, at the lowest free number: %d", right);
	for (i = 0, right = 0; i < 64; i++)
		if (fd[i] >= 0)
			right += T_close(fd[i]) == 0;
	say("closed: %d", right);
	return 0;
}

/* Thousands of timers made, armed, read and closed one after the other:
 * each works, and the program's table is as it was (the engine's copies
 * are closed in batches, in a table of its own). */
HOST_CASE(create_and_close_thousands, 0)
{
	int before = nfds(), low = lowest(), i, same = 0, fired = 0;

	for (i = 0; i < 3000; i++) {
		int fd = T_create(CLOCK_MONOTONIC, T_NONBLOCK | T_CLOEXEC);

		if (fd < 0) {
			say("create %d: %s", i, h_err(errno));
			return 1;
		}
		same += fd == low;
		if (i % 100 == 0) {
			struct itimerspec v = { { 0, 0 }, { 0, 1 } };

			T_settime(fd, 0, &v, NULL);
			fired += h_poll(fd, 5000) == 1 && h_count(fd) == 1;
		}
		if (T_close(fd) < 0) {
			say("close %d: %s", i, h_err(errno));
			return 1;
		}
	}
	say("at the same number: %d of 3000; 30 armed fired: %d", same, fired);
	say("descriptors as before: %s", nfds() == before ? "yes" : "no");
	return 0;
}

/* Under a low RLIMIT_NOFILE, as many timers as Linux gives, the last at
 * the last free number (where the engine's pidfd has no room and create
 * takes its other way), then EMFILE; one closed, one made again there. */
HOST_CASE(create_as_many_as_linux_under_a_low_limit, 0)
{
	struct rlimit rl = { 48, 48 };
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fd[64], n = 0, e, low, again, armed = 0, fired = 0, i;

		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(1);
		while (n < 64 && (fd[n] = T_create(CLOCK_MONOTONIC,
		                                   T_NONBLOCK)) >= 0)
			n++;
		e = errno;
		say("made %d, open %d of 48, then %s", n, nfds(), h_err(e));
		for (i = 0; i < n; i++)
			armed += h_arm(fd[i], 2, 0) == 0;
		h_sleep_ms(10);
		for (i = 0; i < n; i++)
			fired += h_count(fd[i]) == 1;
		say("armed %d, fired %d", armed, fired);
		low = fd[n / 2];
		T_close(low);
		again = T_create(CLOCK_MONOTONIC, T_NONBLOCK);
		say("one closed, made again at its number: %s, fires: %s",
		    again == low ? "yes" : "no",
		    h_arm(again, 1, 0) == 0 && h_poll(again, 5000) == 1 ?
		            "yes" : "no");
		while (n-- > 0)
			T_close(fd[n]);
		_exit(0);
	}
	say("child: %d", wait_child(pid));
	return 0;
}

/* A forked child, of a parent whose timers were just made (their ids not
 * read yet): it reads the inherited periodic timer, makes its own at the
 * lowest number, and keeps the inherited one firing once the parent has
 * exited.  A timer closed before the fork, its number reused by a pipe,
 * gets nothing of the child's. */
HOST_CASE(create_then_fork_and_the_parent_exits, 0)
{
	int p[2], tick, gone, gate[2];
	pid_t pid;
	char c;

	tick = h_timer(T_NONBLOCK, 5, 5);
	gone = T_create(CLOCK_MONOTONIC, T_NONBLOCK);
	if (tick < 0 || gone < 0 || h_arm(gone, 5, 5) < 0)
		return 1;
	T_close(gone);
	if (pipe(p) < 0 || pipe(gate) < 0)
		return 1;
	say("pipe at the closed timer's number: %s", p[0] == gone ? "yes" :
	    "no");
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		pid_t self = getpid(), mid;

		/* The middle process exits at once; its child keeps on,
		 * holding gate[1] until it is done. */
		mid = fork();
		if (mid != 0)
			_exit(mid < 0);
		while (kill(self, 0) == 0)
			h_sleep_ms(1);
		h_sleep_ms(20);
		{
			int low = lowest(), mine = T_create(CLOCK_MONOTONIC,
			                                    T_NONBLOCK);

			say("grandchild: own timer at the lowest number: %s",
			    mine == low ? "yes" : "no");
			T_close(mine);
		}
		say("grandchild: inherited timer fires: %s",
		    h_poll(tick, 5000) == 1 && h_count(tick) >= 1 ? "yes" :
		                                                    "no");
		h_sleep_ms(30);
		say("grandchild: and again: %s",
		    h_poll(tick, 5000) == 1 && h_count(tick) >= 1 ? "yes" :
		                                                    "no");
		say("grandchild: the pipe has nothing: %s",
		    h_poll(p[0], 50) == 0 ? "yes" : "no");
		_exit(0);
	}
	close(gate[1]);
	say("middle: %d", wait_child(pid));
	/* The parent lets go of its timer: the grandchild delivers it. */
	T_close(tick);
	/* EOF once the grandchild has exited */
	while (read(gate[0], &c, 1) > 0)
		;
	close(gate[0]);
	close(p[0]);
	close(p[1]);
	return 0;
}

/* Refuse call nr with err on every thread (TSYNC).  0, or -1. */
static int refuse(int nr, int err)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		         offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K,
		         SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	                    SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

/* In a child: a timer made (the engine's thread runs, its ready
 * eventfds made), then nr refused with EPERM: the next creates take
 * the fallback, at the lowest numbers, and every timer fires as on
 * Linux, the first one included. */
static int refused_then_create(const char *name, int nr)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int first = h_timer(T_NONBLOCK, 5, 5), fd[8], i, low;
		int right = 0, fired = 0;

		if (first < 0 || h_poll(first, 5000) != 1 || h_count(first) < 1)
			_exit(1);
		if (refuse(nr, EPERM) < 0) {
			say("%s: filter: %s", name, h_err(errno));
			_exit(1);
		}
		for (i = 0; i < 8; i++) {
			low = lowest();
			fd[i] = T_create(CLOCK_MONOTONIC,
			                 i % 2 ? T_NONBLOCK : T_NONBLOCK | T_CLOEXEC);
			right += fd[i] == low;
			h_arm(fd[i], 3, 0);
		}
		for (i = 0; i < 8; i++)
			fired += h_poll(fd[i], 5000) == 1 && h_count(fd[i]) == 1;
		say("%s: 8 made at the lowest number: %d, fired: %d", name,
		    right, fired);
		h_sleep_ms(10);
		say("%s: the first still fires: %s", name,
		    h_poll(first, 5000) == 1 && h_count(first) >= 1 ? "yes"
		                                                    : "no");
		for (i = 0; i < 8; i++)
			T_close(fd[i]);
		T_close(first);
		_exit(0);
	}
	return wait_child(pid);
}

HOST_CASE(create_after_pidfd_getfd_refused, 0)
{
	say("child: %d", refused_then_create("getfd", SYS_pidfd_getfd));
	return 0;
}

HOST_CASE(create_after_pidfd_open_refused, 0)
{
	say("child: %d", refused_then_create("open", SYS_pidfd_open));
	return 0;
}

/* Mappings of the process: shared anonymous ones of 1 MiB or more, and
 * reservations (no access) of 32 MiB or more (a glibc malloc arena of a
 * thread takes 64 MiB). */
static void mappings(int *shared, int *reserved)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	*shared = *reserved = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
			continue;
		if (perms[3] == 's' && strstr(line, "/dev/zero") &&
		    hi - lo >= 1UL << 20)
			(*shared)++;
		if (!strncmp(perms, "---p", 4) && hi - lo >= 32UL << 20)
			(*reserved)++;
	}
	if (f)
		fclose(f);
}

/* What the library takes from a process (tfd(7), RESOURCES): nothing
 * mapped before the first timer; with a timer, its threads take no
 * malloc arena each (64 MiB of address space apiece in glibc; the
 * service thread still takes one). */
HOST_CASE(address_space_before_and_with_a_timer, H_NOVIRTUAL)
{
	int shared, reserved, fd;

	mappings(&shared, &reserved);
	say("no timer yet: shared mappings of 1 MiB or more: %d", shared);
	fd = h_timer(0, 3600 * 1000, 0);
	h_sleep_ms(50); /* its threads started */
	mappings(&shared, &reserved);
	say("with a timer: malloc arenas of threads at most one: %s",
	    reserved <= 1 ? "yes" : "no");
	T_close(fd);
	return 0;
}
