/* SPDX-License-Identifier: MIT */
/*
 * rawsys - a program that mixes glibc's timerfd calls with raw system
 * calls, as LTP's timerfd tests do: timers made by timerfd_create() and
 * set and read with syscall(SYS_timerfd_settime / SYS_timerfd_gettime),
 * timers made by syscall(SYS_timerfd_create), bad pointers (a PROT_NONE
 * page, NULL, a read-only page), bad flags, clocks, times and numbers.
 * One line per fact, no time in it, so that a run on Linux's timerfd and a
 * run under `tfd exec --raw-syscalls` compare line by line
 * (tests/realprog/run.sh).
 *
 *   rawsys          the facts above
 *   rawsys other    an unrelated system call is unaffected, and the
 *                   program's own SIGSYS handler gets the traps of its own
 *                   seccomp filter and a SIGSYS from kill().  The filter
 *                   traps afs_syscall, which nothing makes (a sanitizer's
 *                   runtime makes getppid in its own threads)
 *   rawsys sandbox  the program's own filter refuses process_vm_readv and
 *                   process_vm_writev (ENOSYS, EPERM, EACCES, EINVAL in
 *                   turn): raw timer calls still work
 *   rawsys libc     the facts, through the C library's own syscall()
 *                   (found with dlsym(), no preload's between)
 *   rawsys blocked  the same calls from a thread that blocks every
 *                   signal
 *   rawsys bench [N]  the median over 21 rounds of N (200000) raw
 *                   getppid() calls, in ns per call: the cost of a filter
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "facts.h"

#define MS 1000000L

/* The C library's syscall(), reached as a program reaches it (rawsys), or
 * looked up in the C library itself (rawsys libc): a preload's syscall()
 * does not come between, and the call traps. */
static long (*sys)(long, ...) = syscall;

static long raw_settime(int fd, int flags, const void *nv, void *old)
{
	return sys(SYS_timerfd_settime, fd, flags, nv, old);
}

static long raw_gettime(int fd, void *cur)
{
	return sys(SYS_timerfd_gettime, fd, cur);
}

static struct itimerspec its(long value_ns, long interval_ns)
{
	struct itimerspec t = {
		{ interval_ns / 1000000000L, interval_ns % 1000000000L },
		{ value_ns / 1000000000L, value_ns % 1000000000L },
	};
	return t;
}

/* What gettime says, without times: armed or not, the interval exact. */
static void show_its(const char *what, const struct itimerspec *t)
{
	printf("%s: %s, interval %lld.%09ld\n", what,
	       t->it_value.tv_sec || t->it_value.tv_nsec ? "armed" : "disarmed",
	       (long long)t->it_interval.tv_sec, t->it_interval.tv_nsec);
	fflush(stdout);
}

static void read_count(const char *what, int fd)
{
	uint64_t n = 0;
	ssize_t r = read(fd, &n, sizeof(n));

	if (r < 0)
		show(what, -1, errno);
	else
		printf("%s: %zd bytes, %s\n", what, r,
		       n >= 1 ? "expired" : "none");
	fflush(stdout);
}

static int facts(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *none = mmap(NULL, (size_t)page, PROT_NONE,
	                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *ro = mmap(NULL, (size_t)page, PROT_READ,
	                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct itimerspec nv, old, cur;
	int fd, fd2, p[2];

	/* a page of ours, then a PROT_NONE one: a value across the line */
	char *two = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *across = two + page - sizeof(struct timespec);

	if (none == MAP_FAILED || ro == MAP_FAILED || two == MAP_FAILED ||
	    mprotect(two + page, (size_t)page, PROT_NONE) < 0 || pipe(p) < 0) {
		perror("rawsys: setup");
		return 1;
	}

	/* glibc's create, raw settime, gettime, plain read */
	fd = timerfd_create(CLOCK_MONOTONIC, 0);
	SHOW("glibc create", fd >= 0 ? 0 : -1);
	nv = its(20 * MS, 0);
	SHOW("raw settime one-shot", raw_settime(fd, 0, &nv, NULL));
	memset(&cur, 0x55, sizeof(cur));
	SHOW("raw gettime", raw_gettime(fd, &cur));
	show_its("raw gettime says", &cur);
	read_count("read", fd);
	SHOW("raw gettime after", raw_gettime(fd, &cur));
	show_its("raw gettime after says", &cur);

	/* periodic, old value back through the raw call */
	nv = its(10 * MS, 30 * MS);
	SHOW("raw settime periodic", raw_settime(fd, 0, &nv, NULL));
	nv = its(40 * MS, 0);
	memset(&old, 0x55, sizeof(old));
	SHOW("raw settime with old", raw_settime(fd, 0, &nv, &old));
	show_its("old value", &old);
	SHOW("glibc gettime", timerfd_gettime(fd, &cur));
	show_its("glibc gettime says", &cur);
	nv = its(0, 0);
	SHOW("raw settime disarm", raw_settime(fd, 0, &nv, &old));
	show_its("old value of the one-shot", &old);

	/* errno of the caller is untouched by a call that succeeds */
	errno = 0;
	errno = ERANGE;
	raw_gettime(fd, &cur);
	printf("errno after a good raw call: %s\n", strerrorname_np(errno));

	/* EINVAL */
	nv = its(10 * MS, 0);
	SHOW("raw settime bad flags", raw_settime(fd, 0x100, &nv, NULL));
	nv.it_value.tv_nsec = 1000000000L;
	SHOW("raw settime tv_nsec 1e9", raw_settime(fd, 0, &nv, NULL));
	nv = its(10 * MS, 0);
	nv.it_interval.tv_sec = -1;
	SHOW("raw settime negative interval", raw_settime(fd, 0, &nv, NULL));
	nv = its(10 * MS, 0);
	SHOW("raw settime on a pipe", raw_settime(p[0], 0, &nv, NULL));
	SHOW("raw gettime on a pipe", raw_gettime(p[0], &cur));
	SHOW("raw settime CANCEL_ON_SET on MONOTONIC",
	     raw_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &nv,
	                 NULL));

	/* EBADF */
	SHOW("raw settime on -1", raw_settime(-1, 0, &nv, NULL));
	SHOW("raw gettime on -1", raw_gettime(-1, &cur));

	/* EFAULT */
	SHOW("raw settime new PROT_NONE", raw_settime(fd, 0, none, NULL));
	SHOW("raw settime new NULL", raw_settime(fd, 0, NULL, NULL));
	SHOW("raw gettime cur PROT_NONE", raw_gettime(fd, none));
	SHOW("raw gettime cur read-only", raw_gettime(fd, ro));
	SHOW("raw gettime cur NULL", raw_gettime(fd, NULL));
	memset(two, 0, (size_t)page);
	SHOW("raw settime new across into PROT_NONE",
	     raw_settime(fd, 0, across, NULL));
	SHOW("raw gettime cur across into PROT_NONE", raw_gettime(fd, across));
	nv = its(5 * MS, 0);
	SHOW("raw settime old PROT_NONE", raw_settime(fd, 0, &nv, none));
	SHOW("raw gettime after it", raw_gettime(fd, &cur));
	show_its("the timer was set all the same", &cur);
	read_count("read of it", fd);
	SHOW("raw settime new PROT_NONE on -1", raw_settime(-1, 0, none, NULL));
	SHOW("raw gettime cur PROT_NONE on -1", raw_gettime(-1, none));
	SHOW("raw gettime cur PROT_NONE on a pipe", raw_gettime(p[0], none));

	/* raw create */
	fd2 = (int)sys(SYS_timerfd_create, CLOCK_MONOTONIC, TFD_NONBLOCK);
	SHOW("raw create", fd2 >= 0 ? 0 : -1);
	read_count("read of a new one (nonblocking)", fd2);
	nv = its(10 * MS, 0);
	SHOW("glibc settime of a raw one", timerfd_settime(fd2, 0, &nv, NULL));
	SHOW("raw gettime of a raw one", raw_gettime(fd2, &cur));
	show_its("it says", &cur);
	usleep(30000);
	read_count("read of a raw one", fd2);
	SHOW("raw create bad clock", sys(SYS_timerfd_create, 12345, 0));
	SHOW("raw create bad flags", sys(SYS_timerfd_create,
	                                     CLOCK_MONOTONIC, 0x10));
	SHOW("raw create CLOCK_PROCESS_CPUTIME_ID",
	     sys(SYS_timerfd_create, CLOCK_PROCESS_CPUTIME_ID, 0));
	SHOW("close", close(fd2));
	SHOW("raw gettime after close", raw_gettime(fd2, &cur));
	SHOW("close", close(fd));

	/* raw clock_gettime is glibc's clock (on virtual: virtual time) */
	usleep(300000);
	for (int i = 0; i < 2; i++) {
		clockid_t c = i ? CLOCK_REALTIME : CLOCK_MONOTONIC;
		struct timespec a, b;
		long long d;

		clock_gettime(c, &a);
		sys(SYS_clock_gettime, c, &b);
		d = (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec;
		printf("raw clock_gettime(%s) within 50 ms of glibc's: %s\n",
		       i ? "REALTIME" : "MONOTONIC",
		       d >= 0 && d < 50 * MS ? "yes" : "no");
	}
	SHOW("raw clock_gettime PROT_NONE",
	     sys(SYS_clock_gettime, CLOCK_MONOTONIC, none));
	SHOW("raw clock_gettime NULL",
	     sys(SYS_clock_gettime, CLOCK_MONOTONIC, NULL));
	SHOW("raw clock_gettime bad clock",
	     sys(SYS_clock_gettime, 12345, &cur.it_value));
	return 0;
}

/* ---- other: an unrelated call, the program's own SIGSYS handler ---- */

static volatile sig_atomic_t got_trap, got_kill;
static volatile long trapped_nr;

static void on_sys(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	(void)sig;
	if (si->si_code == SI_USER || si->si_code == SI_TKILL) {
		got_kill = 1;
		return;
	}
	got_trap = 1;
	trapped_nr = si->si_syscall;
	uc->uc_mcontext.gregs[REG_RAX] = 4242;
}

static void on_sys_plain(int sig)
{
	(void)sig;
}

static int other(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		         offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_afs_syscall, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	struct sigaction sa, old;
	struct itimerspec nv = its(10 * MS, 0), cur;
	int fd;

	printf("getppid unchanged: %s\n",
	       syscall(SYS_getppid) == getppid() ? "yes" : "no");
	printf("getpid unchanged: %s\n",
	       syscall(SYS_getpid) == getpid() ? "yes" : "no");

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	SHOW("sigaction SIGSYS", sigaction(SIGSYS, &sa, &old));
	printf("previous action default: %s\n",
	       !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL
	               ? "yes" : "no");
	SHOW("sigaction SIGSYS query", sigaction(SIGSYS, NULL, &old));
	printf("query gives our handler: %s\n",
	       (old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_sys
	               ? "yes" : "no");

	SHOW("no_new_privs", prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
	SHOW("our own filter", prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
	                             &prog));
	SHOW("trapped afs_syscall", syscall(SYS_afs_syscall));
	printf("handler got the trap: %s, of afs_syscall: %s\n",
	       got_trap ? "yes" : "no",
	       trapped_nr == SYS_afs_syscall ? "yes" : "no");
	printf("getppid still unchanged: %s\n",
	       syscall(SYS_getppid) == getppid() ? "yes" : "no");
	SHOW("kill SIGSYS", kill(getpid(), SIGSYS));
	printf("handler got the kill: %s\n", got_kill ? "yes" : "no");

	/* timers still work under both filters */
	got_trap = 0;
	fd = timerfd_create(CLOCK_MONOTONIC, 0);
	SHOW("raw settime", raw_settime(fd, 0, &nv, NULL));
	SHOW("raw gettime", raw_gettime(fd, &cur));
	show_its("it says", &cur);
	read_count("read", fd);
	printf("handler saw no timer call: %s\n", got_trap ? "no" : "yes");

	/* signal(): the previous action back, then the new one in place */
	printf("signal gives the previous handler: %s\n",
	       (uintptr_t)signal(SIGSYS, on_sys_plain) == (uintptr_t)on_sys ? "yes"
	                                                             : "no");
	SHOW("sigaction SIGSYS query", sigaction(SIGSYS, NULL, &old));
	printf("query gives the plain handler: %s\n",
	       !(old.sa_flags & SA_SIGINFO) && old.sa_handler == on_sys_plain
	               ? "yes" : "no");
	/* a handler that sets no result: what the kernel left (the number) */
	SHOW("trapped afs_syscall, plain handler", syscall(SYS_afs_syscall));
	SHOW("raw gettime", raw_gettime(fd, &cur));
	SHOW("close", close(fd));
	return 0;
}

/* A timer made, armed 10 ms ahead, asked about and read (what_read) with
 * raw calls; its number. */
static int raw_round(const char *what_read)
{
	struct itimerspec nv = its(10 * MS, 0), old, cur;
	int fd = (int)syscall(SYS_timerfd_create, CLOCK_MONOTONIC, 0);

	printf("raw create: %s\n", fd >= 0 ? "a timer" : "failed");
	SHOW("raw settime", raw_settime(fd, 0, &nv, &old));
	show_its("old", &old);
	SHOW("raw gettime", raw_gettime(fd, &cur));
	show_its("it says", &cur);
	read_count(what_read, fd);
	return fd;
}

/* A sandbox of the program's own that refuses the calls the preload's
 * handler copies with (process_vm_readv/writev), as a container's profile
 * may, with each errno in turn (the filter installed last answers):
 * timers made, set, read and asked about with raw calls work as on
 * Linux, whose timerfd needs neither. */
static int sandbox(void)
{
	static const int errs[] = { ENOSYS, EPERM, EACCES, EINVAL };
	unsigned i;
	int fd;

	SHOW("no_new_privs", prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			         offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			         SYS_process_vm_readv, 1, 0),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			         SYS_process_vm_writev, 0, 1),
			BPF_STMT(BPF_RET | BPF_K,
			         SECCOMP_RET_ERRNO | (unsigned)errs[i]),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

		printf("-- process_vm_* refused with %s\n",
		       strerrorname_np(errs[i]));
		SHOW("filter", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		                       SECCOMP_FILTER_FLAG_TSYNC, &prog));
		fd = raw_round("read");
		SHOW("close", close(fd));
	}
	return 0;
}

/* A thread that blocks every signal makes raw timer calls: they work as
 * on Linux (a trap's SIGSYS, forced on a thread that blocks it, would
 * kill the process). */
static int blocked(void)
{
	struct itimerspec cur;
	sigset_t all;
	int fd;

	sigfillset(&all);
	SHOW("block every signal", pthread_sigmask(SIG_SETMASK, &all, NULL));
	fd = raw_round("blocking read");
	SHOW("raw settime, a bad pointer", raw_settime(fd, 0, NULL, NULL));
	SHOW("raw gettime, a bad number", raw_gettime(-1, &cur));
	SHOW("close", close(fd));
	return 0;
}

/* ---- bench ---- */

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void bench_one(const char *what, long n, int fd)
{
	struct itimerspec cur;
	long long r[21];
	int i;
	long j;

	for (i = 0; i < 21; i++) {
		long long t0 = now_ns();

		for (j = 0; j < n; j++) {
			if (fd < 0)
				syscall(SYS_getppid);
			else
				syscall(SYS_timerfd_gettime, fd, &cur);
		}
		r[i] = now_ns() - t0;
	}
	qsort(r, 21, sizeof(r[0]), cmp_ll);
	printf("%s: %.1f ns per call (median of 21 rounds of %ld; "
	       "quartiles %.1f-%.1f; least %.1f)\n",
	       what, (double)r[10] / (double)n, n, (double)r[5] / (double)n,
	       (double)r[15] / (double)n, (double)r[0] / (double)n);
}

/* getppid: what the filter costs a call that is not a timer's; a raw
 * timerfd_gettime on a timer of glibc's: what a trapped call costs. */
static int bench(long n)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);

	bench_one("getppid", n, -1);
	bench_one("raw timerfd_gettime", n / 10, fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "other"))
		return other();
	if (argc > 1 && !strcmp(argv[1], "sandbox"))
		return sandbox();
	if (argc > 1 && !strcmp(argv[1], "libc")) {
		void *c = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

		sys = c ? (long (*)(long, ...))dlsym(c, "syscall") : NULL;
		if (!sys) {
			fprintf(stderr, "rawsys: the C library's syscall()\n");
			return 1;
		}
		return facts();
	}
	if (argc > 1 && !strcmp(argv[1], "blocked"))
		return blocked();
	if (argc > 1 && !strcmp(argv[1], "bench"))
		return bench(argc > 2 ? atol(argv[2]) : 200000);
	if (argc > 1) {
		fprintf(stderr, "usage: rawsys [libc | other | sandbox | blocked "
		                "| bench [N]]\n");
		return 2;
	}
	return facts();
}
