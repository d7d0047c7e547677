/* SPDX-License-Identifier: MIT */
/*
 * neighbours.c - what else an ordinary program does in the process its
 * timers live in: signal handlers on an alternate stack, threads with the
 * smallest stack, numbers at the top of select()'s range, standard output
 * replaced by a timer, a timer slack of its own set before the first
 * timer, a seccomp filter of a container runtime's kind, privileges
 * dropped, io_uring.  Each must give what Linux gives.
 */
#include "host.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* A sanitizer's instrumentation makes every frame larger (the program's
 * and the library's alike): the small stacks below are larger there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SMALL_STACK(n) ((n) + 64 * 1024)
#else
#define SMALL_STACK(n) (n)
#endif

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- a handler on an alternate stack ---- */

static int alt_fd;
static volatile long long alt_count = -1;

static void alt_handler(int sig)
{
	uint64_t n = 0;

	(void)sig;
	alt_count = read(alt_fd, &n, sizeof(n)) == sizeof(n) ? (long long)n
	                                                     : -errno;
}

/* SIGUSR1's handler runs on a sigaltstack of MINSIGSTKSZ + 4 kB and
 * reads a non-blocking timer that is due (read(2) is async-signal-safe):
 * the count, as on Linux. */
HOST_CASE(handler_on_a_small_alternate_stack_reads, 0)
{
	struct sigaction sa;
	stack_t ss;
	size_t size = SMALL_STACK(MINSIGSTKSZ + 4096);

	ss.ss_sp = mmap(NULL, size, PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ss.ss_size = size;
	ss.ss_flags = 0;
	if (ss.ss_sp == MAP_FAILED || sigaltstack(&ss, NULL) != 0)
		return say("sigaltstack: %s", h_err(errno)), 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = alt_handler;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	alt_fd = h_timer(T_NONBLOCK, 10, 0);
	say("poll: %d", h_poll(alt_fd, 2000));
	raise(SIGUSR1);
	say("the handler read: %lld", alt_count);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	return T_close(alt_fd) != 0;
}

/* ---- a thread with the smallest stack ---- */

static void *min_stack_thread(void *arg)
{
	struct pollfd p;
	int fd = h_timer(T_NONBLOCK, 10, 5);

	p.fd = fd;
	p.events = POLLIN;
	*(long long *)arg = fd < 0 ? -errno
	                  : poll(&p, 1, 2000) != 1 || h_count(fd) < 1 ? -1
	                  : poll(&p, 1, 2000) != 1 || h_count(fd) < 1 ? 0
	                  : 1;
	if (fd >= 0)
		T_close(fd);
	return NULL;
}

/* A thread made with PTHREAD_STACK_MIN of stack makes a periodic timer,
 * polls and reads it twice: the calls fit in what the program gave it. */
HOST_CASE(thread_with_the_smallest_stack_uses_timers, 0)
{
	pthread_attr_t a;
	pthread_t th;
	long long r = -2;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, SMALL_STACK(PTHREAD_STACK_MIN));
	if (pthread_create(&th, &a, min_stack_thread, &r) != 0)
		return say("pthread_create failed"), 1;
	pthread_join(th, NULL);
	pthread_attr_destroy(&a);
	say("made, polled and read twice: %s", r == 1 ? "yes" : "no");
	return 0;
}

/* ---- numbers ---- */

/* A timer at number 1023, the last select() can take (every number
 * below it in use, by empty pipes where free): select() over 1000..1023
 * reports it alone, as Linux. */
HOST_CASE(select_sees_a_timer_at_1023, 0)
{
	static unsigned char filled[1023];
	struct rlimit rl;
	struct timeval tv = { 2, 0 };
	fd_set rd;
	int fd, i, n, p[2];

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1024) {
		rl.rlim_cur = rl.rlim_max < 1024 ? rl.rlim_max : 1024;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (pipe(p) != 0)
		return say("pipe: %s", h_err(errno)), 1;
	for (i = 0; i < 1023; i++)
		if (fcntl(i, F_GETFD) < 0 && dup2(p[0], i) == i)
			filled[i] = 1;
	fd = h_timer(T_NONBLOCK, 10, 0);
	say("the timer's number: %d", fd);
	FD_ZERO(&rd);
	for (i = 1000; i <= 1023; i++)
		FD_SET(i, &rd);
	FD_CLR(1001, &rd);
	n = fd == 1023 ? select(1024, &rd, NULL, NULL, &tv) : -1;
	say("select: %d, the timer %s, read %lld", n,
	    n > 0 && FD_ISSET(1023, &rd) ? "ready" : "not ready",
	    fd >= 0 ? h_count(fd) : -1);
	for (i = 0; i < 1023; i++)
		if (filled[i])
			close(i);
	close(p[0]);
	close(p[1]);
	return fd >= 0 && T_close(fd) != 0;
}

/* Standard output replaced by a timer (dup2 onto 1): a read of 1 counts
 * it, poll of 1 tells it, and output put back works.  (libtfd alone knows
 * a timer by the numbers its calls gave: not in its column.) */
HOST_CASE(timer_dup2_over_standard_output, H_NOLIB)
{
	int fd = h_timer(T_NONBLOCK, 10, 0), saved = dup(1), r;
	long long n;

	r = dup2(fd, 1);
	n = h_poll(1, 2000) == 1 ? h_count(1) : -1;
	dup2(saved, 1);
	close(saved);
	say("dup2 onto 1: %d, read through 1: %lld, through the timer: %lld",
	    r, n, h_count(fd));
	return T_close(fd) != 0;
}

/* ---- many at once ---- */

/* 200 timers due at the same moment, one poll(2) of them all: every one
 * is reported, and each reads 1. */
HOST_CASE(two_hundred_due_together_in_one_poll, 0)
{
	enum { N = 200 };
	struct pollfd p[N];
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	struct timespec now;
	int i, ready = 0, ones = 0, n;

	clock_gettime(CLOCK_MONOTONIC, &now);
	now.tv_nsec += 20 * MS;
	its.it_value.tv_sec = now.tv_sec + now.tv_nsec / 1000000000L;
	its.it_value.tv_nsec = now.tv_nsec % 1000000000L;
	for (i = 0; i < N; i++) {
		p[i].fd = T_create(CLOCK_MONOTONIC, T_NONBLOCK);
		p[i].events = POLLIN;
		T_settime(p[i].fd, T_ABSTIME, &its, NULL);
	}
	h_sleep_ms(40);
	n = poll(p, N, 2000);
	for (i = 0; i < N; i++) {
		ready += !!(p[i].revents & POLLIN);
		ones += h_count(p[i].fd) == 1;
		T_close(p[i].fd);
	}
	say("poll: %d, reported %d, read 1: %d", n, ready, ones);
	return 0;
}

static void *own_timer_thread(void *arg)
{
	int fd = h_timer(0, 5 + *(long *)arg % 7, 0);

	return (void *)(long)(fd >= 0 && h_read(fd) == 1 && T_close(fd) == 0);
}

/* 64 threads at once, each makes a timer of 5 to 11 ms, blocks in its
 * read and closes it: each reads 1. */
HOST_CASE(sixty_four_threads_each_block_on_a_timer, 0)
{
	enum { N = 64 };
	static long arg[N];
	pthread_t th[N];
	int i, ok = 0, started = 0;
	void *r;

	for (i = 0; i < N; i++) {
		arg[i] = i;
		started += pthread_create(&th[i], NULL, own_timer_thread,
		                          &arg[i]) == 0;
	}
	for (i = 0; i < started; i++) {
		pthread_join(th[i], &r);
		ok += r != NULL;
	}
	say("threads: %d, each read 1: %d", started, ok);
	return 0;
}

/* ---- the program's own settings ---- */

/* The program sets a timer slack of 50 ms before its first timer (as a
 * power-saving daemon does): a blocking read of a 5 ms timer still
 * returns well before 50 ms, as Linux's timerfd has no slack. */
HOST_CASE(timer_slack_of_fifty_ms_before_the_first_timer, H_NOVIRTUAL)
{
	int64_t t0;
	long long n;
	int fd;

	if (prctl(PR_SET_TIMERSLACK, 50000000UL, 0UL, 0UL, 0UL) != 0)
		return say("PR_SET_TIMERSLACK: %s", h_err(errno)), 1;
	t0 = mono_ms();
	fd = h_timer(0, 5, 0);
	n = h_read(fd);
	say("read %lld within 40 ms: %s", n,
	    mono_ms() - t0 < 40 ? "yes" : "no");
	prctl(PR_SET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
	return T_close(fd) != 0;
}

/* A filter of the kind container runtimes install, set before the first
 * timer (the library already loaded): memfd_create, kcmp, userfaultfd,
 * io_uring_setup and perf_event_open fail with EPERM.  A timer is made,
 * shared with a forked child (which reads it) and read.  Where seccomp is
 * not allowed, nothing to compare. */
HOST_CASE(seccomp_filter_of_a_container_runtime, H_NOTSAN)
{
#define DENY(nr)                                                     \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),             \
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		         offsetof(struct seccomp_data, nr)),
		DENY(SYS_memfd_create),
		DENY(SYS_kcmp),
		DENY(SYS_userfaultfd),
		DENY(SYS_io_uring_setup),
		DENY(SYS_perf_event_open),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	int fd, st;
	pid_t pid;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		return say("no seccomp here: nothing to compare"), 0;
	fd = h_timer(0, 10, 10);
	say("made: %s", fd >= 0 ? "yes" : h_err(errno));
	pid = fork();
	if (pid == 0)
		_exit(h_read(fd) >= 1 ? 0 : 1);
	say("the child read it: %s",
	    pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	                    WEXITSTATUS(st) == 0
	            ? "yes"
	            : "no");
	say("the parent read it: %s", h_read(fd) >= 1 ? "yes" : "no");
	return T_close(fd) != 0;
#undef DENY
}

/* Root drops to nobody (65534) after its first timer, as a daemon does:
 * the timer goes on, and new ones are made and read.  As another user,
 * nothing to drop. */
HOST_CASE(privileges_dropped_after_the_first_timer, 0)
{
	int fd = h_timer(0, 10, 10), again;

	if (getuid() != 0)
		return say("not root: nothing to drop"), T_close(fd) != 0;
	if (setgid(65534) != 0 || setuid(65534) != 0)
		return say("setuid: %s", h_err(errno)), 1;
	say("after the drop, the first reads: %s",
	    h_read(fd) >= 1 ? "yes" : "no");
	{
		struct epoll_event ev = { .events = EPOLLIN }, out;
		int ep = epoll_create1(0);

		ev.data.fd = fd;
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
		say("and an epoll wait reports it: %d",
		    epoll_wait(ep, &out, 1, 2000));
		close(ep);
	}
	again = h_timer(0, 10, 0);
	say("a new one: %s, reads %lld", again >= 0 ? "made" : h_err(errno),
	    again >= 0 ? h_read(again) : 0);
	if (again >= 0)
		T_close(again);
	return T_close(fd) != 0;
}

/* ---- io_uring ---- */

struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int ring_setup(struct ring *r)
{
	struct io_uring_params p;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	r->fd = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -1;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned),
	          PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
	          IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes +
	                        p.cq_entries * sizeof(struct io_uring_cqe),
	          PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
	          IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
	               PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
	               r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return -1;
	r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p.sq_off.array);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* One IORING_OP_READ of 8 bytes from fd, waited for: its result. */
static long long ring_read(struct ring *r, int fd, uint64_t *n)
{
	unsigned tail = *r->sq_tail, i = tail & *r->sq_mask, head;
	struct io_uring_sqe *e = &r->sqes[i];
	long long res;

	memset(e, 0, sizeof(*e));
	e->opcode = IORING_OP_READ;
	e->fd = fd;
	e->addr = (uint64_t)(uintptr_t)n;
	e->len = sizeof(*n);
	r->sq_array[i] = i;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS,
	            NULL, 0) < 0)
		return -errno;
	head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

/* A periodic 100 ms timer read through io_uring (it waits for the first
 * expiry, at 100 ms), then by read(2) at 250 ms from the arming: 1, then
 * 1 (at 200 ms), as Linux counts.  Where io_uring is refused, nothing to
 * compare. */
HOST_CASE(io_uring_reads_a_timer, 0)
{
	struct ring r;
	uint64_t n = 0;
	long long got;
	int64_t t0;
	int fd;

	if (ring_setup(&r) != 0)
		return say("no io_uring here: nothing to compare"), 0;
	t0 = mono_ms();
	fd = h_timer(0, 100, 100);
	got = ring_read(&r, fd, &n);
	say("io_uring read: %lld, count %llu", got, (unsigned long long)n);
	h_sleep_ms(250 - (long)(mono_ms() - t0));
	say("then read(2): %lld", h_count(fd));
	close(r.fd);
	return T_close(fd) != 0;
}
