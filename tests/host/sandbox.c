/* SPDX-License-Identifier: MIT */
/*
 * sandbox.c - programs under a seccomp filter that refuses a system call
 * the engine may use (futex_waitv, pidfd_open, pidfd_getfd, close_range,
 * preadv2, process_vm_readv), as Docker's and systemd's profiles do, with
 * ENOSYS, EPERM, EACCES or EINVAL: before the first timer, or only once
 * timers exist and are shared with a child (a daemon that sandboxes all
 * its threads after start-up, SECCOMP_FILTER_FLAG_TSYNC).  Linux's
 * timerfd needs none of them, so the native run is the reference: every
 * timer created, armed, polled, read, inherited and closed as there, at
 * the lowest free number, and no process busy while its timers are idle
 * ("idle: quiet": under IDLE_CPU_MS of CPU time in 200 ms).
 *
 * Each errno runs in a process of its own (a filter cannot be removed),
 * all four at once; their lines are printed in order, each prefixed by
 * its errno.
 */
#include "host.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

/* A sanitizer's runtime traces its own threads (LeakSanitizer at exit):
 * ptrace is refused only without one. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PTRACE_TOO 0
#else
#define PTRACE_TOO 1
#endif

#define IDLE_CPU_MS 20 /* a process that spins takes a core's share */

struct plan {
	int nr[6];  /* the calls refused, 0-terminated */
	int after;  /* once timers exist and a child shares one */
};

/* Refuse p's calls with err, on every thread of the process (TSYNC) or
 * the calling one.  0, or -1 with errno. */
static int refuse(const struct plan *p, int err, int tsync)
{
	struct sock_filter f[16];
	struct sock_fprog prog;
	unsigned n = 0, k, i;

	for (k = 0; k < 6 && p->nr[k]; k++)
		;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                                      offsetof(struct seccomp_data, nr));
	for (i = 0; i < k; i++)
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		                                      (unsigned)p->nr[i],
		                                      k - i, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
	                                      SECCOMP_RET_ERRNO |
	                                      ((unsigned)err & SECCOMP_RET_DATA));
	prog.len = (unsigned short)n;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	                    tsync ? SECCOMP_FILTER_FLAG_TSYNC : 0, &prog);
}

static long cpu_ms(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1000L +
	       (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1000L;
}

/* 200 ms with timers idle: "quiet" or "busy". */
static const char *idle(void)
{
	long c = cpu_ms();

	h_sleep_ms(200);
	return cpu_ms() - c < IDLE_CPU_MS ? "quiet" : "busy";
}

/* The number the next descriptor gets. */
static int lowest_free(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

static int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A timer made now, at the lowest free number, NONBLOCK and idle. */
static int fresh(const char *name)
{
	int low = lowest_free(), fd = T_create(CLOCK_MONOTONIC, T_NONBLOCK);

	if (fd < 0) {
		say("%s: create: %s", name, h_err(errno));
		return -1;
	}
	say("%s: at the lowest free number: %s", name,
	    fd == low ? "yes" : "no");
	return fd;
}

static void wait_byte(int fd)
{
	char c;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
}

/* What the program does, in a process of its own, its filter refusing
 * p's calls with err.  Lines on stdout. */
static int program(const struct plan *p, int err)
{
	int a, b, c, go[2], tell[2], st;
	long long r1;
	char line[256];
	ssize_t n;
	pid_t kid;
	struct itimerspec cur;

	if (!p->after && refuse(p, err, 0) < 0) {
		say("filter: %s", h_err(errno));
		return 1;
	}
	if ((a = fresh("a")) < 0 || h_arm(a, 10000, 0) < 0)
		return 1;
	if (pipe(go) < 0 || pipe(tell) < 0)
		return 1;
	/* A child shares a: it idles too, then reads a once armed. */
	kid = fork();
	if (kid == 0) {
		close(tell[0]);
		close(go[1]);
		if (p->after && refuse(p, err, 1) < 0)
			_exit(9);
		dprintf(tell[1], "child: idle: %s\n", idle());
		wait_byte(go[0]);
		st = h_poll(a, 5000);
		dprintf(tell[1], "child: inherited a: poll %d, read %lld\n",
		        st, h_count(a));
		_exit(T_close(a) != 0);
	}
	close(tell[1]);
	if (p->after && refuse(p, err, 1) < 0) {
		say("filter: %s", h_err(errno));
		return 1;
	}
	say("parent: idle: %s", idle());
	/* A timer made under the filter: made, armed, polled, read. */
	if ((b = fresh("b")) < 0)
		return 1;
	h_arm(b, 20, 0);
	st = h_poll(b, 5000);
	r1 = h_count(b);
	say("b: poll %d, read %lld, then %lld", st, r1, h_count(b));
	/* Expired, not read, then set again: settime empties it. */
	h_arm(b, 10, 0);
	h_sleep_ms(60);
	h_arm(b, 10000, 0);
	say("b: readable after settime: %d", h_poll(b, 0));
	/* The child reads the timer it shares. */
	h_arm(a, 20, 0);
	(void)!write(go[1], "g", 1);
	say("child exit %d", reap(kid));
	while ((n = read(tell[0], line, sizeof(line))) > 0)
		printf("%.*s", (int)n, line);
	fflush(stdout);
	T_gettime(a, &cur);
	say("a: armed %d, readable %d", cur.it_value.tv_sec ||
	    cur.it_value.tv_nsec, h_poll(a, 0));
	/* A child forked under the filter delivers a timer its parent let
	 * go of at once. */
	if ((c = fresh("c")) < 0)
		return 1;
	kid = fork();
	if (kid == 0) {
		int low;

		close(go[1]);
		wait_byte(go[0]);
		low = lowest_free();
		h_arm(c, 20, 0);
		st = h_poll(c, 5000);
		if (st != 1 || h_count(c) != 1)
			_exit(10 + st);
		/* Nothing of the library's took a number of the child's. */
		_exit(lowest_free() == low ? 0 : 20);
	}
	say("parent: close c: %d", T_close(c));
	(void)!write(go[1], "g", 1);
	say("child 2 (c alone): exit %d", reap(kid));
	say("close a %d, b %d", T_close(a), T_close(b));
	return 0;
}

/* Run program(p) under each errno, at once; print each one's lines in
 * turn. */
static int each_errno(const struct plan *p)
{
	static const int errs[] = { ENOSYS, EPERM, EACCES, EINVAL };
	int out[4], i, fds[2], bad = 0;
	pid_t pid[4];
	char buf[4096];
	ssize_t n;

	for (i = 0; i < 4; i++) {
		if (pipe(fds) < 0)
			return 1;
		pid[i] = fork();
		if (pid[i] == 0) {
			close(fds[0]);
			dup2(fds[1], 1);
			close(fds[1]);
			_exit(program(p, errs[i]));
		}
		close(fds[1]);
		out[i] = fds[0];
	}
	for (i = 0; i < 4; i++) {
		FILE *f;
		int st = reap(pid[i]);

		f = fdopen(out[i], "r");
		while (f && fgets(buf, sizeof(buf), f))
			printf("%s: %s", h_err(errs[i]), buf);
		if (f)
			fclose(f);
		n = printf("%s: exit %d\n", h_err(errs[i]), st);
		bad |= st != 0 || n < 0;
	}
	fflush(stdout);
	return bad;
}

/* Docker's and systemd's answer to a call they do not know. */
HOST_CASE(sandbox_waitv_after_fork, 0)
{
	static const struct plan p = { { SYS_futex_waitv }, 1 };

	return each_errno(&p);
}

HOST_CASE(sandbox_waitv_before, 0)
{
	static const struct plan p = { { SYS_futex_waitv }, 0 };

	return each_errno(&p);
}

/* The daemon of issue 19: all its threads sandboxed after start-up. */
HOST_CASE(sandbox_daemon_after_fork, 0)
{
	static const struct plan p = {
		{ SYS_pidfd_open, SYS_pidfd_getfd, SYS_process_vm_readv,
		  PTRACE_TOO ? SYS_ptrace : SYS_process_vm_writev },
		1
	};

	return each_errno(&p);
}

HOST_CASE(sandbox_pidfd_open_before, 0)
{
	static const struct plan p = { { SYS_pidfd_open }, 0 };

	return each_errno(&p);
}

HOST_CASE(sandbox_pidfd_getfd_after_fork, 0)
{
	static const struct plan p = { { SYS_pidfd_getfd }, 1 };

	return each_errno(&p);
}

HOST_CASE(sandbox_close_range_before, 0)
{
	static const struct plan p = { { SYS_close_range }, 0 };

	return each_errno(&p);
}

HOST_CASE(sandbox_close_range_after_fork, 0)
{
	static const struct plan p = { { SYS_close_range }, 1 };

	return each_errno(&p);
}

HOST_CASE(sandbox_preadv2_after_fork, 0)
{
	static const struct plan p = { { SYS_preadv2 }, 1 };

	return each_errno(&p);
}

/* Everything the engine may do without, refused at once. */
HOST_CASE(sandbox_all_after_fork, 0)
{
	static const struct plan p = {
		{ SYS_futex_waitv, SYS_pidfd_open, SYS_pidfd_getfd,
		  SYS_close_range, SYS_preadv2, SYS_process_vm_readv },
		1
	};

	return each_errno(&p);
}

struct reader {
	int fd;
	long long got; /* the count, or -errno */
};

static void *blocked_read(void *arg)
{
	struct reader *r = arg;
	uint64_t n = 0;

	r->got = T_read(r->fd, &n, sizeof(n)) == sizeof(n) ? (long long)n
	                                                   : -errno;
	return NULL;
}

/* Twenty periodic timers run and a thread is blocked in a read when a
 * filter refuses pidfd_getfd on every thread: the next create switches
 * the engine to its fallback, and every timer goes on as before, the
 * blocked read included. */
HOST_CASE(sandbox_refused_while_timers_run, 0)
{
	static const struct plan p = { { SYS_pidfd_getfd, SYS_pidfd_open }, 1 };
	int fd[20], i, ok = 0, late, armed, st;
	struct reader r;
	pthread_t th;

	for (i = 0; i < 20; i++)
		if ((fd[i] = h_timer(T_NONBLOCK, 5, 5)) < 0)
			return 1;
	late = T_create(CLOCK_MONOTONIC, 0);
	h_arm(late, 150, 0);
	r.fd = late;
	if (pthread_create(&th, NULL, blocked_read, &r) != 0)
		return 1;
	h_sleep_ms(20);
	if (refuse(&p, EPERM, 1) < 0) {
		say("filter: %s", h_err(errno));
		return 1;
	}
	if ((i = fresh("new")) < 0)
		return 1;
	armed = h_arm(i, 10, 0);
	st = h_poll(i, 5000);
	say("new: armed %d, poll %d, read %lld", armed, st, h_count(i));
	h_sleep_ms(30);
	for (ok = 0, i = 0; i < 20; i++)
		ok += h_poll(fd[i], 5000) == 1 && h_count(fd[i]) >= 1;
	say("%d of 20 periodic timers readable with a count", ok);
	pthread_join(th, NULL);
	say("blocked read: %lld", r.got);
	for (ok = 0, i = 0; i < 20; i++)
		ok += T_close(fd[i]) == 0;
	say("closed %d, and the late one: %d", ok, T_close(late));
	say("idle: %s", idle());
	return 0;
}
