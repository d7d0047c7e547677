/* SPDX-License-Identifier: MIT */
/*
 * dropin - what programs do with a timerfd that a drop-in must get right
 * (issue 12): a vfork child closing descriptors before exec (and a
 * child of clone(CLONE_VM)), close_range
 * with CLOSE_RANGE_UNSHARE and with bad flags, readv with no bytes or a
 * NULL buffer, select with nfds above FD_SETSIZE, EPOLLET on a periodic
 * timer nobody reads, a close in another thread during a poll.  One line per fact, no time and no number in it, so
 * that a run on Linux's timerfd and runs through libtfd-preload.so compare
 * line by line (tests/realprog/run.sh).
 *
 *   dropin          the facts above
 *   dropin efault   pointers the kernel cannot use (kernel backend only:
 *                   the engine keeps timers in user space, tfd(7))
 *   dropin select, dropin epollet, dropin clone   one part alone (clone:
 *                   before any vfork)
 *   dropin closewait  another thread closes a timer during a poll of it
 *                   (on real time: engine and kernel)
 *   dropin env      rewrites its environment block (setproctitle), then
 *                   makes a timer: the trace must still reach TFD_TRACE
 *   dropin kill     pthread_kill() of a thread that has ended, not yet
 *                   joined, through each of glibc's versions (x86-64):
 *                   0 for programs built with glibc 2.34 or later, ESRCH
 *                   for those built before
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "facts.h"

#define MS 1000000LL

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void arm(int fd, int64_t value, int64_t interval)
{
	struct itimerspec its = {
		{ (time_t)(interval / 1000000000), (long)(interval % 1000000000) },
		{ (time_t)(value / 1000000000), (long)(value % 1000000000) },
	};

	if (timerfd_settime(fd, 0, &its, NULL) < 0) {
		perror("timerfd_settime");
		exit(1);
	}
}

static void pause_ms(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * MS };

	nanosleep(&t, NULL);
}

static int timer(int flags)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, flags);

	if (fd < 0) {
		perror("timerfd_create");
		exit(1);
	}
	return fd;
}

/* A vfork child closes 3..63 (and close_range(3, ~0U)) before _exit: the
 * parent's timer keeps counting. */
static void vfork_close(int range)
{
	struct itimerspec cur;
	uint64_t n = 0;
	int fd = timer(TFD_NONBLOCK), st = 0, i;
	pid_t pid;

	arm(fd, 10 * MS, 10 * MS);
	pid = vfork();
	if (pid == 0) {
		if (range)
			close_range(3, ~0U, 0);
		else
			for (i = 3; i < 64; i++)
				close(i);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	printf("vfork%s: child exit %d\n", range ? " close_range" : "",
	       WEXITSTATUS(st));
	pause_ms(30);
	SHOW(range ? "vfork close_range: parent gettime"
	           : "vfork: parent gettime",
	     timerfd_gettime(fd, &cur));
	SHOW(range ? "vfork close_range: parent read"
	           : "vfork: parent read",
	     read(fd, &n, sizeof(n)));
	printf("vfork: counted on: %s\n", n >= 1 ? "yes" : "no");
	SHOW("vfork: parent close", close(fd));
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
/* A sanitizer's run-time takes the child's stack for a thread it does
 * not know (AddressSanitizer warns with its pid): not in those builds. */
static void clone_close(void)
{
	printf("clone(CLONE_VM): not in a sanitizer's build\n");
}
#else
/* The same with a child of clone(CLONE_VM | CLONE_VFORK) that closes
 * its numbers with close(2) and dup2(2) over one, on a stack of its own:
 * it runs on the parent's memory as a vfork child does. */
static int clone_child(void *arg)
{
	int i, fd = *(int *)arg;

	dup2(0, fd);
	for (i = 3; i < 64; i++)
		close(i);
	_exit(0);
}

static void clone_close(void)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	struct itimerspec cur;
	uint64_t n = 0;
	int fd = timer(TFD_NONBLOCK), st = 0;
	pid_t pid;

	arm(fd, 10 * MS, 10 * MS);
	pid = clone(clone_child, stack + sizeof(stack),
	            CLONE_VM | CLONE_VFORK | SIGCHLD, &fd);
	waitpid(pid, &st, 0);
	printf("clone(CLONE_VM): child exit %d\n", WEXITSTATUS(st));
	pause_ms(30);
	SHOW("clone(CLONE_VM): parent gettime", timerfd_gettime(fd, &cur));
	SHOW("clone(CLONE_VM): parent read", read(fd, &n, sizeof(n)));
	printf("clone(CLONE_VM): counted on: %s\n", n >= 1 ? "yes" : "no");
	SHOW("clone(CLONE_VM): parent close", close(fd));
}
#endif

static void close_range_cases(void)
{
	struct itimerspec cur;
	char buf[8];
	int fd = timer(TFD_NONBLOCK), p[2];

	arm(fd, 1000 * MS, 0);
	SHOW("close_range bad flags", close_range(3, ~0U, 0x80));
	SHOW("close_range bad flags: timer still there",
	     timerfd_gettime(fd, &cur));
	SHOW("close_range first > last", close_range(fd + 1, fd, 0));
	SHOW("close_range UNSHARE", close_range((unsigned)fd, (unsigned)fd,
	                                        CLOSE_RANGE_UNSHARE));
	if (pipe(p) < 0)
		exit(1);
	printf("pipe took the number: %s\n", p[0] == fd ? "yes" : "no");
	if (write(p[1], "x", 1) != 1)
		exit(1);
	SHOW("read of the pipe at that number", read(p[0], buf, sizeof(buf)));
	SHOW("gettime of the pipe", timerfd_gettime(p[0], &cur));
	close(p[0]);
	close(p[1]);
}

static void readv_cases(void)
{
	struct iovec none[2] = { { NULL, 0 }, { NULL, 0 } }, one;
	uint64_t n = 0;
	char four[4];
	volatile int minus_one = -1;
	int fd = timer(TFD_NONBLOCK);

	arm(fd, 1 * MS, 0);
	pause_ms(10);
	SHOW("readv of no iovec", readv(fd, none, 0));
	SHOW("readv of empty iovecs", readv(fd, none, 2));
	one.iov_base = four;
	one.iov_len = sizeof(four);
	SHOW("readv of 4 bytes", readv(fd, &one, 1));
	one.iov_base = NULL;
	one.iov_len = 8;
	SHOW("readv into NULL", readv(fd, &one, 1));
	SHOW("read after (the count went)", read(fd, &n, sizeof(n)));
	SHOW("readv of -1 iovecs", readv(fd, none, minus_one));
	close(fd);
}

/* An fd_set of 4096 bits, as glibc lets a program pass. */
struct bigset {
	unsigned long w[4096 / (8 * sizeof(unsigned long))];
};

static void big_set(struct bigset *s, int fd)
{
	s->w[fd / (8 * sizeof(long))] |= 1UL << (fd % (8 * sizeof(long)));
}

static int big_has(const struct bigset *s, int fd)
{
	return (s->w[fd / (8 * sizeof(long))] >> (fd % (8 * sizeof(long)))) & 1;
}

static void select_big(void)
{
	struct bigset r, w;
	struct timeval tv = { 0, 0 };
	uint64_t n;
	int fd = timer(TFD_NONBLOCK);

	memset(&r, 0, sizeof(r));
	memset(&w, 0, sizeof(w));
	big_set(&w, fd);
	SHOW("select nfds 4096, timer in the write set",
	     select(4096, NULL, (fd_set *)(void *)&w, NULL, &tv));
	printf("select nfds 4096: writable: %s\n", big_has(&w, fd) ? "yes"
	                                                          : "no");
	arm(fd, 1 * MS, 0);
	pause_ms(10);
	big_set(&r, fd);
	big_set(&w, fd);
	tv.tv_usec = 0;
	SHOW("select nfds 4096, expired timer in both sets",
	     select(4096, (fd_set *)(void *)&r, (fd_set *)(void *)&w, NULL,
	            &tv));
	printf("select nfds 4096: readable %s, writable %s\n",
	       big_has(&r, fd) ? "yes" : "no", big_has(&w, fd) ? "yes" : "no");
	SHOW("read", read(fd, &n, sizeof(n)));
	close(fd);
}

/* Edges seen in ms milliseconds of epoll_wait. */
static int edges(int ep, int ms)
{
	struct epoll_event ev;
	int64_t end = now_ns() + ms * MS, left;
	int k = 0;

	while ((left = end - now_ns()) > 0) {
		int r = epoll_wait(ep, &ev, 1, (int)(left / MS) + 1);

		if (r > 0)
			k++;
	}
	return k;
}

static void epollet(void)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	uint64_t n = 0;
	int fd = timer(TFD_NONBLOCK), ep = epoll_create1(EPOLL_CLOEXEC), k;

	ev.data.fd = fd;
	SHOW("epoll_ctl EPOLLET", epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	arm(fd, 10 * MS, 10 * MS);
	k = edges(ep, 105);
	printf("EPOLLET: edges in 105 ms unread: %d\n", k);
	SHOW("EPOLLET: read", read(fd, &n, sizeof(n)));
	printf("EPOLLET: count in range: %s\n", n >= 8 && n <= 12 ? "yes"
	                                                          : "no");
	k = edges(ep, 15);
	printf("EPOLLET: an edge after the read: %s\n", k == 1 ? "yes" : "no");
	arm(fd, 0, 0);
	SHOW("read after disarm", read(fd, &n, sizeof(n)));
	close(ep);
	close(fd);
}

/* Pointers the kernel cannot use: EFAULT, as the kernel says. */
static void efault(void)
{
	void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
	                  -1, 0);
	int fd = timer(TFD_NONBLOCK);

	SHOW("gettime into PROT_NONE", timerfd_gettime(fd, page));
	SHOW("settime from PROT_NONE", timerfd_settime(fd, 0, page, NULL));
	arm(fd, 1 * MS, 0);
	pause_ms(10);
	SHOW("read into PROT_NONE", read(fd, page, 8));
	close(fd);
}

static void *close_later(void *p)
{
	pause_ms(20);
	close(*(int *)p);
	return NULL;
}

/* Another thread closes the timer's only descriptor while this one polls
 * it: the poll holds the file, and returns when the timer expires. */
static void close_during_poll(void)
{
	struct pollfd p;
	pthread_t th;
	int fd = timer(TFD_NONBLOCK), r;

	arm(fd, 150 * MS, 0);
	p.fd = fd;
	p.events = POLLIN;
	p.revents = 0;
	int64_t t0 = now_ns(), took;

	pthread_create(&th, NULL, close_later, &fd);
	r = poll(&p, 1, 2000);
	took = now_ns() - t0;
	pthread_join(th, NULL);
	printf("close during poll: poll %d, revents %s%s%s\n", r,
	       p.revents & POLLIN ? "POLLIN " : "",
	       p.revents & POLLNVAL ? "POLLNVAL " : "",
	       p.revents & ~(POLLIN | POLLNVAL) ? "other" : "");
	printf("close during poll: ended by the expiry: %s\n",
	       took >= 140 * MS && took < 1000 * MS ? "yes" : "no");
}

extern char **environ;

/* As setproctitle does: the environment block is overwritten. */
static void env_clobber(void)
{
	char **e;
	int fd;

	for (e = environ; *e; e++)
		memset(*e, 'x', strlen(*e));
	fd = timer(0);
	arm(fd, 1000 * MS, 0);
	close(fd);
	printf("env: done\n");
}

#if defined(__x86_64__) && defined(__GLIBC__)
/* The version a program built before glibc 2.34 calls. */
int old_pthread_kill(pthread_t t, int sig);
__asm__(".symver old_pthread_kill, pthread_kill@GLIBC_2.2.5");

static void *note_tid(void *p)
{
	__atomic_store_n((pid_t *)p, gettid(), __ATOMIC_RELEASE);
	return NULL;
}

static void kill_ended(void)
{
	char path[64];
	pthread_t t;
	pid_t tid = 0;
	int i;

	if (pthread_create(&t, NULL, note_tid, &tid) != 0)
		return;
	for (i = 0; i < 5000 && !__atomic_load_n(&tid, __ATOMIC_ACQUIRE); i++)
		pause_ms(1);
	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	for (i = 0; i < 5000 && access(path, F_OK) == 0; i++)
		pause_ms(1); /* ended, for the kernel too */
	printf("pthread_kill of an ended thread, unjoined: %s; built "
	       "before glibc 2.34: %s\n",
	       strerror(pthread_kill(t, 0)),
	       strerror(old_pthread_kill(t, 0)));
	pthread_join(t, NULL);
}
#else
static void kill_ended(void)
{
	printf("pthread_kill of an ended thread: not looked at here\n");
}
#endif

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "kill")) {
		kill_ended();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "efault")) {
		efault();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "env")) {
		env_clobber();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "select")) {
		select_big();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "closewait")) {
		close_during_poll();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "clone")) {
		clone_close();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "epollet")) {
		epollet();
		return 0;
	}
	vfork_close(0);
	vfork_close(1);
	clone_close();
	close_range_cases();
	readv_cases();
	select_big();
	epollet();
	return 0;
}
