/* SPDX-License-Identifier: MIT */
/*
 * Waits that do not come back through our code (issue 19): a signal
 * handler that jumps out of a blocked read or of a wait of the preload's
 * (siglongjmp: the timeout idiom), a thread cancelled in one.  What the
 * wait registered is undone (the closed timer it kept running goes), and
 * a handler that only interrupts a wait (and calls the library itself)
 * leaves the wait as it was.  tests/host/signals.c has the programs.
 */
#include "t.h"

#include "backend.h"
#include "engine/hooks.h"
#include "host.h"
#include "tfd.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static sigjmp_buf env;

static void jump(int sig)
{
	(void)sig;
	siglongjmp(env, 1);
}

static void on(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(sig, &sa, NULL), 0);
}

/* The signal that jumps (not SIGALRM: the runner's time limit). */
#define JUMP SIGUSR2

/*
 * JUMP to the calling thread once it is blocked in system call nr (or
 * nr2) with first argument a1, as its /proc/self/task/TID/syscall shows,
 * from a thread of its own (the watcher), joined by jumped().  Not at a
 * fixed time: a handler must not jump out of a call of the library before
 * its wait blocks (tfd(7), Signals), and a 10 ms timer fired there on a
 * loaded machine under valgrind (the lock was left owned: a hang).
 */
static struct {
	pthread_t watcher, target;
	pid_t tid;
	long nr, nr2;
	unsigned long a1;
} jumper;

static int in_the_call(void)
{
	char path[64], buf[256];
	unsigned long a1;
	long nr;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall",
	         (int)jumper.tid);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return sscanf(buf, "%ld %lx", &nr, &a1) == 2 &&
	       (nr == jumper.nr || nr == jumper.nr2) && a1 == jumper.a1;
}

static void *watch(void *arg)
{
	int i, in = 0;

	(void)arg;
	for (i = 0; i < 10000 && !(in = in_the_call()); i++)
		t_sleep_ns(MS);
	if (in < 0)
		t_sleep_ns(100 * MS); /* no such file here: time enough */
	pthread_kill(jumper.target, JUMP);
	return NULL;
}

static void jump_when_blocked(long nr, long nr2, const void *a1)
{
	jumper.target = pthread_self();
	jumper.tid = (pid_t)syscall(SYS_gettid);
	jumper.nr = nr;
	jumper.nr2 = nr2;
	jumper.a1 = (unsigned long)a1;
	CHECK_EQ(pthread_create(&jumper.watcher, NULL, watch, NULL), 0);
}

#ifdef SYS_poll
#define POLL_NR SYS_poll
#else
#define POLL_NR SYS_ppoll /* poll(3) makes ppoll(2) */
#endif

static void jump_when_reading(int fd)
{
	jump_when_blocked(SYS_read, SYS_read, (const void *)(uintptr_t)fd);
}

static void jumped(void)
{
	CHECK_EQ(pthread_join(jumper.watcher, NULL), 0);
}

static int far_timer(void)
{
	int fd = t_timer(CLOCK_MONOTONIC, 0);

	t_arm(fd, 0, 3600 * SEC, 0);
	return fd;
}

/* The timeout idiom, then a close: the timer goes with it. */
TEST(jump_out_of_a_blocked_read_then_close_lets_the_timer_go)
{
	int fd = far_timer(), i;
	uint64_t n;

	on(JUMP, jump, 0);
	for (i = 0; i < 3; i++) {
		if (!sigsetjmp(env, 1)) {
			jump_when_reading(fd);
			tfd_read(fd, &n, sizeof(n));
			CHECK(!"the read returned");
		}
		jumped();
		CHECK_EQ(tfd_engine_holds(), 1);
	}
	CHECK_OK(tfd_close(fd));
	CHECK_EQ(tfd_engine_holds(), 0);
	CHECK_EQ(tfd_engine_backend.count(), 0);
}

/* Another thread closes the timer that the jump left a wait on: it is
 * kept until the thread that jumped calls the library again (tfd(7),
 * BUGS), then it goes. */
static void *close_it(void *arg)
{
	CHECK_OK(tfd_close(*(int *)arg));
	return (void *)tfd_engine_holds();
}

TEST(jump_out_of_a_blocked_read_then_close_elsewhere)
{
	int fd = far_timer();
	pthread_t th;
	void *held;
	uint64_t n;

	on(JUMP, jump, 0);
	if (!sigsetjmp(env, 1)) {
		jump_when_reading(fd);
		tfd_read(fd, &n, sizeof(n));
		CHECK(!"the read returned");
	}
	jumped();
	CHECK_EQ(pthread_create(&th, NULL, close_it, &fd), 0);
	CHECK_EQ(pthread_join(th, &held), 0);
	CHECK_EQ(held, (void *)1);
	CHECK_EQ(tfd_engine_holds(), 0);
}

/* A reader cancelled in its read: the timer closed meanwhile, kept for
 * it, goes with the thread. */
static void *reader(void *arg)
{
	uint64_t n;

	tfd_read(*(int *)arg, &n, sizeof(n));
	return NULL;
}

TEST(jump_cancelled_reader_lets_a_closed_timer_go)
{
	int fd = far_timer();
	pthread_t th;
	void *res;

	CHECK_EQ(pthread_create(&th, NULL, reader, &fd), 0);
	t_sleep_ns(20 * MS);
	CHECK_OK(tfd_close(fd));
	CHECK_EQ(tfd_engine_holds(), 1); /* kept for the reader */
	CHECK_EQ(pthread_cancel(th), 0);
	CHECK_EQ(pthread_join(th, &res), 0);
	CHECK_EQ(res, PTHREAD_CANCELED);
	CHECK_EQ(tfd_engine_holds(), 0);
}

/* A handler that only interrupts a read (SA_RESTART) and calls the
 * library itself leaves the read's wait as it was: the timer, closed
 * while the read goes on, keeps running for it, and the read counts it.
 * On the thread's stack, and on an alternate signal stack that lies
 * above the read's frames. */
static int other = -1;
static volatile sig_atomic_t handled;

static void call_library(int sig)
{
	struct itimerspec cur;
	int e = errno;

	(void)sig;
	if (tfd_gettime(other, &cur) == 0)
		handled = 1;
	errno = e;
}

struct interrupted {
	int fd, alt;
	uint64_t n;
	ssize_t r;
	pid_t tid;
};

static void *interrupted_reader(void *arg)
{
	struct interrupted *w = arg;
	char above[64 * 1024]; /* on this thread's stack, above the read's
	                        * frames: the alternate stack */
	stack_t ss;

	memset(above, 0, sizeof(above));
	if (w->alt) {
		ss.ss_sp = above;
		ss.ss_size = sizeof(above);
		ss.ss_flags = 0;
		CHECK_EQ(sigaltstack(&ss, NULL), 0);
	}
	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid),
	                 __ATOMIC_RELEASE);
	w->r = tfd_read(w->fd, &w->n, sizeof(w->n));
	if (w->alt) {
		ss.ss_flags = SS_DISABLE;
		sigaltstack(&ss, NULL);
	}
	return NULL;
}

static void interrupt_then_close(int alt)
{
	struct interrupted w = { -1, alt, 0, 0, 0 };
	pthread_t th;

	if (!tfd_engine_private_files())
		t_skip("the fallback cannot post to a closed timer (tfd(7))");
	if (T_TSAN)
		t_skip("ThreadSanitizer runs the handler after the read(2)");
	other = t_timer(CLOCK_MONOTONIC, 0);
	w.fd = t_timer(CLOCK_MONOTONIC, 0);
	t_arm(w.fd, 0, 300 * MS, 0);
	on(SIGUSR1, call_library, SA_RESTART | (alt ? SA_ONSTACK : 0));
	handled = 0;
	CHECK_EQ(pthread_create(&th, NULL, interrupted_reader, &w), 0);
	while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
		t_sleep_ns(MS);
	CHECK(t_wait_asleep(w.tid));
	CHECK_EQ(pthread_kill(th, SIGUSR1), 0);
	while (!handled)
		t_sleep_ns(MS);
	CHECK(t_wait_asleep(w.tid));
	CHECK_OK(tfd_close(w.fd));
	CHECK_EQ(tfd_engine_holds(), 2); /* other, and the read's */
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(w.r, (ssize_t)sizeof(w.n));
	CHECK_EQ(w.n, 1);
	CHECK_EQ(tfd_engine_holds(), 1);
	CHECK_OK(tfd_close(other));
}

TEST(jump_a_handler_that_calls_the_library_keeps_the_read_it_interrupts)
{
	interrupt_then_close(0);
}

TEST(jump_a_handler_on_an_alternate_stack_keeps_the_read_it_interrupts)
{
	interrupt_then_close(1);
}

/* The preload's waits hold the timers they wait on and say where they
 * block (backend.h): a jump out of the poll(2) lets them go at the
 * thread's next call, a cancelled poller's at its end, and a poll that
 * returns gives them back as ever. */
TEST(jump_out_of_a_holding_wait_lets_the_timer_go)
{
	int fd = far_timer();
	struct pollfd p = { fd, POLLIN, 0 };
	void *h;

	on(JUMP, jump, 0);
	if (!sigsetjmp(env, 1)) {
		h = tfd_engine_backend.hold(fd);
		CHECK(h);
		tfd_engine_waits_block();
		jump_when_blocked(POLL_NR, SYS_ppoll, &p);
		poll(&p, 1, -1);
		CHECK(!"poll returned");
	}
	jumped();
	CHECK_OK(tfd_close(fd));
	CHECK_EQ(tfd_engine_holds(), 0);

	fd = t_timer(CLOCK_MONOTONIC, 0);
	t_arm(fd, 0, 5 * MS, 0);
	p.fd = fd;
	h = tfd_engine_backend.hold(fd);
	CHECK(h);
	{
		uintptr_t b = tfd_engine_waits_block();

		CHECK_EQ(poll(&p, 1, 2000), 1);
		tfd_engine_waits_unblock(b);
	}
	CHECK_OK(tfd_close(fd));
	CHECK_EQ(tfd_engine_holds(), 1); /* held still */
	tfd_engine_backend.unhold(h);
	CHECK_EQ(tfd_engine_holds(), 0);
}

/* It holds the timer, and blocks where a cancellation finds it: in a
 * read of an empty pipe (a poll(2) cancelled midway leaves
 * ThreadSanitizer ignoring the thread's locks from then on). */
static int pipe_fds[2];

static void *poller(void *arg)
{
	char c;

	CHECK(tfd_engine_backend.hold(*(int *)arg));
	tfd_engine_waits_block();
	if (read(pipe_fds[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

TEST(jump_cancelled_holding_wait_lets_a_closed_timer_go)
{
	int fd = far_timer();
	pthread_t th;
	void *res;

	CHECK_EQ(pipe(pipe_fds), 0);
	CHECK_EQ(pthread_create(&th, NULL, poller, &fd), 0);
	t_sleep_ns(20 * MS);
	CHECK_OK(tfd_close(fd));
	CHECK_EQ(tfd_engine_holds(), 1);
	CHECK_EQ(pthread_cancel(th), 0);
	CHECK_EQ(pthread_join(th, &res), 0);
	CHECK_EQ(res, PTHREAD_CANCELED);
	CHECK_EQ(tfd_engine_holds(), 0);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
}

/* A thread that jumped out of a read ends with pthread_exit(): nothing
 * of the abandoned call is unwound (a cleanup handler left registered by
 * it made this crash). */
static void *jump_then_exit(void *arg)
{
	uint64_t n;
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, JUMP);
	CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
	if (!sigsetjmp(env, 1)) {
		jump_when_reading(*(int *)arg);
		tfd_read(*(int *)arg, &n, sizeof(n));
	}
	jumped();
	pthread_exit((void *)2);
}

TEST(jump_out_of_a_read_then_pthread_exit)
{
	int fd = far_timer();
	sigset_t s;
	pthread_t th;
	void *res;

	on(JUMP, jump, 0);
	sigemptyset(&s);
	sigaddset(&s, JUMP);
	/* the thread's alone */
	CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
	CHECK_EQ(pthread_create(&th, NULL, jump_then_exit, &fd), 0);
	CHECK_EQ(pthread_join(th, &res), 0);
	CHECK_EQ(res, (void *)2);
	CHECK_OK(tfd_close(fd));
	CHECK_EQ(tfd_engine_holds(), 0);
}
