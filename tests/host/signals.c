/* SPDX-License-Identifier: MIT */
/*
 * signals.c - signal-heavy programs around their timers: the timeout
 * idiom (an alarm whose handler siglongjmps out of a blocking read, poll,
 * select, epoll_wait or sleep), handlers that read timers themselves,
 * SA_RESTART, threads cancelled in and around their timer calls,
 * signalfd beside a timer, threads that block every signal, and a
 * process stopped and continued while its timer runs.
 */
#include "host.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* ThreadSanitizer runs a handler at the end of the next call it
 * intercepts, not where the signal came: after a blocking call has
 * returned (EINTR), or inside our calls, right after the signal mask
 * that was to keep handlers out.  The cases wait for the jump after a
 * call returns, and under it the alarm that jumps out of every call does
 * not jump. */
#if defined(__SANITIZE_THREAD__)
#define TSAN_DEFERS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN_DEFERS 1
#endif
#endif

static sigjmp_buf jump_to;

static void jump_out(int sig)
{
	(void)sig;
	siglongjmp(jump_to, 1);
}

/* The signal may come after the call returned (EINTR): it jumps here. */
static void wait_for_the_jump(void)
{
	for (;;)
		pause();
}

/* sig runs fn with flags (SA_RESTART or 0). */
static void catch(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* SIGALRM in ms milliseconds, once (0: disarmed); every_us > 0: then
 * every every_us microseconds. */
static void alarm_in(long ms, long every_us)
{
	struct itimerval it = { { every_us / 1000000, every_us % 1000000 },
		                { ms / 1000, ms % 1000 * 1000 } };

	if (ms == 0 && every_us > 0)
		it.it_value = it.it_interval;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void block_sig(int sig, int how)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, sig);
	pthread_sigmask(how, &s, NULL);
}

/* Which blocking call the alarm interrupts. */
enum { W_READ, W_POLL, W_SELECT, W_EPOLL, W_SLEEP, W_NWAYS };
static const char *const way_name[W_NWAYS] = { "read", "poll", "select",
	                                       "epoll_wait", "nanosleep" };

static int wait_ep = -1; /* the epoll of W_EPOLL */

static void wait_on(int way, int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };
	struct epoll_event ev = { .events = EPOLLIN };
	struct timespec ts = { 60, 0 };
	fd_set rd;

	switch (way) {
	case W_READ:
		h_read(fd);
		break;
	case W_POLL:
		poll(&p, 1, -1);
		break;
	case W_SELECT:
		FD_ZERO(&rd);
		FD_SET(fd, &rd);
		select(fd + 1, &rd, NULL, NULL, NULL);
		break;
	case W_EPOLL:
		ev.data.fd = fd;
		epoll_ctl(wait_ep, EPOLL_CTL_ADD, fd, &ev);
		epoll_wait(wait_ep, &ev, 1, -1);
		break;
	case W_SLEEP:
		nanosleep(&ts, NULL);
		break;
	}
}

/* The timeout idiom: an alarm whose handler jumps out of a call blocked
 * on a timer that is not due for an hour.  After each jump the timer is
 * closed, and a new one takes its number (the lowest free) and works; a
 * timer made before the jumps is still armed and read as ever (a thread
 * left "inside" the drop-in by a jump sent its calls to the kernel, which
 * refused them: not a timerfd); a thread that did not jump sees the
 * closed number closed. */
static void *closed_from_afar(void *arg)
{
	struct itimerspec cur;
	int fd = *(int *)arg;

	say("another thread: gettime of the closed number: %s",
	    T_gettime(fd, &cur) < 0 ? h_err(errno) : "a timer");
	return NULL;
}

HOST_CASE(timeout_jumps_out_of_blocking_calls, 0)
{
	volatile int way;
	int fd = -1, again, kept = h_timer(T_NONBLOCK, 5, 5);
	struct itimerspec cur;
	pthread_t th;

	catch(SIGALRM, jump_out, 0);
	wait_ep = epoll_create1(EPOLL_CLOEXEC);
	for (way = 0; way < W_NWAYS; way++) {
		fd = h_timer(0, 3600 * 1000, 0);
		if (sigsetjmp(jump_to, 1) == 0) {
			alarm_in(30, 0);
			wait_on(way, fd);
			wait_for_the_jump();
		} else {
			say("%s: jumped out", way_name[way]);
		}
		say("%s: close: %d", way_name[way], T_close(fd));
		again = h_timer(0, 10, 0);
		say("%s: new timer at the same number: %s, its read: %lld",
		    way_name[way], again == fd ? "yes" : "no", h_read(again));
		say("%s: close it: %d", way_name[way], T_close(again));
	}
	close(wait_ep);
	pthread_create(&th, NULL, closed_from_afar, &fd);
	pthread_join(th, NULL);
	say("a timer made before: count %s",
	    h_count(kept) >= 1 ? ">= 1" : "none");
	say("a timer made before: settime %d, gettime %d", h_arm(kept, 5, 5),
	    T_gettime(kept, &cur));
	return T_close(kept) != 0;
}

/* A thread that jumped out of a blocked read ends with pthread_exit():
 * nothing of the abandoned call may be unwound then. */
static void *jump_then_exit(void *arg)
{
	int fd = h_timer(0, 3600 * 1000, 0);

	(void)arg;
	block_sig(SIGALRM, SIG_UNBLOCK);
	if (sigsetjmp(jump_to, 1) == 0) {
		alarm_in(20, 0);
		h_read(fd);
		wait_for_the_jump();
	}
	say("thread: jumped out, close: %d", T_close(fd));
	pthread_exit(NULL);
}

HOST_CASE(thread_exits_after_jumping_out_of_read, 0)
{
	pthread_t th;
	int fd;

	catch(SIGALRM, jump_out, 0);
	block_sig(SIGALRM, SIG_BLOCK); /* for the jumping thread only */
	pthread_create(&th, NULL, jump_then_exit, NULL);
	say("joined: %d", pthread_join(th, NULL));
	fd = h_timer(0, 10, 0);
	say("a new timer reads %lld", h_read(fd));
	return T_close(fd) != 0;
}

/* An alarm every 50 us jumps out of whatever timer call the thread is
 * in, 700 times round (a non-blocking read, a settime, a gettime, a
 * close and a create): no call may be left half done.  Not on libtfd
 * itself: a handler that jumps out of a call of the library that does
 * not block breaks its rule (tfd(7), Signals: the signal is to be
 * blocked around such calls, as around malloc's; blocking it inside each
 * call would cost two system calls a call); the preload defers it.  A jump out of a
 * create that made its descriptor loses it, as on Linux for a signal
 * that comes during timerfd_create(2) (the engine's create takes longer,
 * and loses more): fewer rounds than descriptors. */
static void *use_timer(void *arg)
{
	int fd = *(int *)arg, p = h_poll(fd, 1000);

	say("another thread: poll %d, reads %s", p,
	    h_count(fd) >= 1 ? ">= 1" : "nothing");
	return NULL;
}

HOST_CASE(alarm_jumps_out_of_every_call, H_NOLIB)
{
	int fd = h_timer(T_NONBLOCK, 1, 1);
	volatile int i = 0, made = -1, ok = 1;
	struct itimerspec cur;
	pthread_t th;

#ifdef TSAN_DEFERS
	catch(SIGALRM, SIG_IGN, 0);
#else
	catch(SIGALRM, jump_out, 0);
#endif
	h_sleep_ms(3);
	sigsetjmp(jump_to, 1);
	if (i == 0)
		alarm_in(0, 50);
	for (; i < 700; i++) {
		if (made >= 0)
			T_close(made);
		made = -1;
		if (T_gettime(fd, &cur) < 0 || h_arm(fd, 1, 1) < 0)
			ok = 0;
		made = T_create(CLOCK_MONOTONIC, T_NONBLOCK);
		h_count(fd);
	}
	block_sig(SIGALRM, SIG_BLOCK); /* one may be on its way */
	alarm_in(0, 0);
	if (made >= 0)
		T_close(made);
	say("calls on the timer failed: %s", ok ? "never" : "yes");
	say("its gettime afterwards: %d", T_gettime(fd, &cur));
	pthread_create(&th, NULL, use_timer, &fd);
	pthread_join(th, NULL);
	made = h_timer(0, 5, 0);
	say("a new timer reads %lld", h_read(made));
	T_close(made);
	return T_close(fd) != 0;
}

/* A handler that reads a timer itself (read(2) is async-signal-safe),
 * while the program is in the middle of its own timer calls, or blocked
 * reading another timer.  Not on libtfd itself: a handler that calls the
 * library while its thread is inside a call that does not block breaks
 * its rule (tfd(7), Signals; as alarm_jumps_out_of_every_call). */
static int handler_fd = -1;
static volatile long long handler_reads, handler_bad;
static volatile int handler_err; /* the first failure's -errno */

/* In a handler: handler_fd read, counted as read or failed. */
static void handler_counts(void)
{
	long long n = h_count(handler_fd);

	if (n >= 1)
		handler_reads++;
	else if (n < 0 && !handler_bad++)
		handler_err = (int)n;
}

/* "never", or "yes" and the first failure's error. */
static const char *handler_failures(void)
{
	static char buf[64];

	if (!handler_bad)
		return "never";
	snprintf(buf, sizeof(buf), "yes (first %s)", h_err(-handler_err));
	return buf;
}

static void read_in_handler(int sig)
{
	struct itimerspec cur;
	int e = errno;

	(void)sig;
	handler_counts();
	if (T_gettime(handler_fd, &cur) < 0 && !handler_bad++)
		handler_err = -errno;
	errno = e;
}

/* Not under ThreadSanitizer: there the preload holds a signal that comes
 * while the thread is inside and calls the handler as the thread leaves
 * (the release builds re-queue it), and on a loaded machine the handler's
 * poll found its timer readable and its read EAGAIN, 1 run in 4
 * (tfd-preload(7), BUGS). */
HOST_CASE(handler_reads_a_timer, H_NOLIB | H_NOTSAN)
{
	int own = h_timer(T_NONBLOCK, 1, 1), slow = h_timer(0, 150, 0), i;
	struct itimerspec cur;

	handler_fd = h_timer(T_NONBLOCK, 1, 1);
	catch(SIGALRM, read_in_handler, SA_RESTART);
	alarm_in(0, 200);
	for (i = 0; i < 20000; i++) {
		h_arm(own, 1, 1);
		T_gettime(own, &cur);
		h_count(own);
	}
	say("blocked read, the handler runs meanwhile: %lld", h_read(slow));
	alarm_in(0, 0);
	say("the handler found expirations: %s",
	    handler_reads > 0 ? "yes" : "no");
	say("handler's calls failed: %s", handler_failures());
	T_close(own);
	T_close(slow);
	return T_close(handler_fd) != 0;
}

/* A read blocked on a timer, interrupted by a handler: EINTR without
 * SA_RESTART, and with it the read goes on to the expiration. */
static void nothing(int sig)
{
	(void)sig;
}

HOST_CASE(read_interrupted_with_and_without_sa_restart, 0)
{
	int fd;

	catch(SIGALRM, nothing, 0);
	fd = h_timer(0, 100, 0);
	alarm_in(20, 0);
	say("without SA_RESTART: %s", h_err((int)-h_read(fd)));
	say("then the expiration: %lld", h_read(fd));
	catch(SIGALRM, nothing, SA_RESTART);
	h_arm(fd, 100, 0);
	alarm_in(20, 0);
	say("with SA_RESTART: %lld", h_read(fd));
	return T_close(fd) != 0;
}

/* Cancellation: a thread blocked in read on a shared timer is cancelled,
 * and the timer keeps working for the others; a thread that only
 * creates, arms and closes timers (close is its cancellation point) is
 * cancelled, and creates go on in the others.  What they pass by address
 * is static: AddressSanitizer takes the locals of frames a cancellation
 * unwinds for live ones at the thread's end. */
static void *blocked_reader(void *arg)
{
	static uint64_t n;

	return T_read(*(int *)arg, &n, sizeof(n)) == sizeof(n) ? (void *)1
	                                                       : NULL;
}

static void *blocked_poller(void *arg)
{
	static struct pollfd p;

	p.fd = *(int *)arg;
	p.events = POLLIN;
	poll(&p, 1, -1);
	return (void *)1;
}

static int churned;

static void *churn(void *arg)
{
	static const struct itimerspec its = { { 0, MS }, { 0, MS } };

	(void)arg;
	for (;;) {
		int fd = T_create(CLOCK_MONOTONIC, T_NONBLOCK);

		if (fd >= 0) {
			T_settime(fd, 0, &its, NULL);
			T_close(fd);
		}
		__atomic_add_fetch(&churned, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *make_one(void *arg)
{
	int fd = h_timer(0, 5, 0);

	(void)arg;
	say("another thread's new timer reads %lld", h_read(fd));
	T_close(fd);
	return NULL;
}

HOST_CASE(cancelled_threads_leave_timers_working, 0)
{
	int fd = h_timer(0, 3600 * 1000, 0), i;
	pthread_t th;
	void *res;

	pthread_create(&th, NULL, blocked_reader, &fd);
	h_sleep_ms(20);
	pthread_cancel(th);
	pthread_join(th, &res);
	say("reader: %s", res == PTHREAD_CANCELED ? "cancelled" : "returned");
	pthread_create(&th, NULL, blocked_poller, &fd);
	h_sleep_ms(20);
	pthread_cancel(th);
	pthread_join(th, &res);
	say("poller: %s", res == PTHREAD_CANCELED ? "cancelled" : "returned");
	h_arm(fd, 10, 0);
	pthread_create(&th, NULL, blocked_reader, &fd);
	pthread_join(th, &res);
	say("the shared timer, read by a new thread: %s",
	    res == (void *)1 ? "expired" : "?");
	for (i = 0; i < 3; i++) {
		/* Time does not move on virtual time while it churns: it is
		 * cancelled after as many rounds, not after a sleep. */
		__atomic_store_n(&churned, 0, __ATOMIC_RELAXED);
		pthread_create(&th, NULL, churn, NULL);
		while (__atomic_load_n(&churned, __ATOMIC_RELAXED) < 100 * (i + 1))
			sched_yield();
		pthread_cancel(th);
		pthread_join(th, &res);
		say("churning thread %d: %s", i,
		    res == PTHREAD_CANCELED ? "cancelled" : "returned");
		pthread_create(&th, NULL, make_one, NULL);
		pthread_join(th, NULL);
	}
	return T_close(fd) != 0;
}

/* A signalfd and a timer in one epoll: both are seen, each once. */
HOST_CASE(signalfd_and_timer_in_one_epoll, 0)
{
	int fd = h_timer(T_NONBLOCK, 20, 0), ep = epoll_create1(0), sfd;
	int seen_sig = 0, seen_timer = 0, rounds = 0;
	struct epoll_event ev = { .events = EPOLLIN };
	struct signalfd_siginfo si;
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	sfd = signalfd(-1, &s, SFD_NONBLOCK);
	ev.data.fd = sfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	ev.data.fd = fd;
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	kill(getpid(), SIGUSR1);
	while ((!seen_sig || !seen_timer) && rounds++ < 10) {
		int n = epoll_wait(ep, &ev, 1, 2000), r;

		if (n != 1)
			continue;
		if (ev.data.fd == sfd) {
			r = (int)read(sfd, &si, sizeof(si));
			seen_sig += r == (int)sizeof(si) && si.ssi_signo == SIGUSR1;
		} else {
			seen_timer += h_read(fd) == 1;
		}
	}
	say("signal seen %d, timer seen %d", seen_sig, seen_timer);
	say("after both, epoll_wait(0): %d", epoll_wait(ep, &ev, 1, 0));
	close(sfd);
	close(ep);
	return T_close(fd) != 0;
}

/* Every thread blocks every signal (signals are taken with sigwait): the
 * timers work all the same, and a pending signal is left for sigwait. */
static void *blocked_thread(void *arg)
{
	int fd = h_timer(0, 10, 10);

	(void)arg;
	say("thread: read %s", h_read(fd) >= 1 ? ">= 1" : "nothing");
	say("thread: poll %d", h_poll(fd, 1000));
	say("thread: close %d", T_close(fd));
	return NULL;
}

HOST_CASE(all_signals_blocked_in_all_threads, 0)
{
	int fd = h_timer(0, 10, 0), sig = 0;
	sigset_t all, pend;
	pthread_t th;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_create(&th, NULL, blocked_thread, NULL);
	pthread_join(th, NULL);
	raise(SIGUSR2);
	say("main: read %lld", h_read(fd));
	sigpending(&pend);
	say("SIGUSR2 pending: %s", sigismember(&pend, SIGUSR2) ? "yes" : "no");
	sigemptyset(&pend);
	sigaddset(&pend, SIGUSR2);
	sigwait(&pend, &sig);
	say("sigwait: %s", sig == SIGUSR2 ? "SIGUSR2" : "?");
	return T_close(fd) != 0;
}

/* The process is stopped for 150 ms while a 10 ms timer runs: after
 * SIGCONT, its count is what elapsed.  Not on virtual time, where a
 * stopped thread holds time (tfd-preload(7): it may be a debugger's), so
 * the child's sleep before its SIGCONT would never end. */
/* Until process pid is stopped (its state in /proc/PID/stat is T), or
 * 10 s have passed. */
static void until_stopped(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int i, fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (i = 0; i < 10000; i++, h_sleep_ms(1)) {
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		if ((p = strrchr(buf, ')')) && p[1] == ' ' && p[2] == 'T')
			return;
	}
}

HOST_CASE(stopped_and_continued, H_NOVIRTUAL)
{
	int fd = h_timer(T_NONBLOCK, 10, 10), st;
	long long n;
	pid_t pid;

	h_sleep_ms(15);
	h_count(fd);
	pid = fork();
	if (pid == 0) {
		/* (once the parent is stopped: on a loaded machine its fork
		 * can return after a fixed 150 ms, and a SIGCONT before its
		 * SIGSTOP leaves it stopped for ever) */
		until_stopped(getppid());
		h_sleep_ms(150);
		kill(getppid(), SIGCONT);
		_exit(0);
	}
	raise(SIGSTOP);
	n = h_read(fd);
	say("count after SIGCONT >= 14: %s", n >= 14 ? "yes" : "no");
	waitpid(pid, &st, 0);
	return T_close(fd) != 0;
}

/* A 1 ms alarm whose handler jumps out of whatever runs, while a loop
 * makes, arms, queries, reads (blocking, 1 ms) and closes a timer, 300
 * rounds: every call is left at any point of its own (under the preload
 * the handler waits until the thread is outside, as a system call of
 * Linux's is never left half done; the blocking read is left while it
 * waits).  After the jumps a timer made before still works, from this
 * thread and another, and new ones do.  A jump after a create made its
 * descriptor loses it, as on Linux: fewer rounds than descriptors.  Not
 * on libtfd itself (tfd(7), Signals: a handler may jump out of a
 * blocked tfd_read only); under ThreadSanitizer the handler does not
 * jump (it runs the handler at its own points, see TSAN_DEFERS). */
static volatile long jumps;

static void count_and_jump(int sig)
{
	(void)sig;
	jumps++;
#ifndef TSAN_DEFERS
	siglongjmp(jump_to, 1);
#endif
}

HOST_CASE(alarm_every_ms_jumps_out_of_a_timer_loop, H_NOLIB)
{
	int kept = h_timer(T_NONBLOCK, 1, 1);
	volatile int i = 0, made = -1, bad = 0;
	struct itimerspec cur;
	pthread_t th;

	catch(SIGALRM, count_and_jump, 0);
	h_sleep_ms(3);
	sigsetjmp(jump_to, 1);
	if (i == 0)
		alarm_in(1, 1000);
	while (i < 300) {
		int f = made;

		i++; /* a round the handler jumps out of counts too */
		made = -1;
		if (f >= 0)
			T_close(f);
		made = T_create(CLOCK_MONOTONIC, 0);
		if (made < 0 || h_arm(made, 1, 0) < 0 || T_gettime(made, &cur) < 0)
			bad++;
		if (h_read(made) < 1)
			bad++; /* EINTR: interrupted, not jumped */
		if (T_gettime(kept, &cur) < 0)
			bad++;
	}
	block_sig(SIGALRM, SIG_BLOCK); /* one may be on its way */
	alarm_in(0, 0);
	if (made >= 0)
		T_close(made);
	say("the handler ran: %s", jumps > 0 ? "yes" : "no");
	say("calls on the kept timer afterwards: settime %d, gettime %d",
	    h_arm(kept, 1, 1), T_gettime(kept, &cur));
	pthread_create(&th, NULL, use_timer, (void *)&kept);
	pthread_join(th, NULL);
	made = h_timer(0, 5, 0);
	say("a new timer reads %lld", h_read(made));
	T_close(made);
	(void)bad; /* EINTR under ThreadSanitizer; jumps elsewhere */
	return T_close(kept) != 0;
}

/* A 1 ms alarm whose handler reads one timer and arms another itself,
 * while the thread makes, arms, queries, reads and closes timers of its
 * own: none of the thread's calls fails, none of the handler's does, and
 * both see their expirations.  Not on libtfd itself (tfd(7), Signals: a
 * handler may call the library while its thread is blocked in tfd_read,
 * not inside another call). */
static int handler_armed = -1;

static void read_and_arm_in_handler(int sig)
{
	struct itimerspec cur;
	int e = errno;

	(void)sig;
	handler_counts();
	if (h_arm(handler_armed, 3600 * 1000, 0) < 0 ||
	    T_gettime(handler_armed, &cur) < 0 || cur.it_value.tv_sec < 3000)
		handler_bad++;
	errno = e;
}

HOST_CASE(handler_reads_and_arms_timers_in_a_timer_loop, H_NOLIB)
{
	int i, bad = 0, fd;
	struct itimerspec cur;

	handler_reads = handler_bad = 0;
	handler_fd = h_timer(T_NONBLOCK, 1, 1);
	handler_armed = h_timer(0, 3600 * 1000, 0);
	catch(SIGALRM, read_and_arm_in_handler, SA_RESTART);
	alarm_in(1, 1000);
	for (i = 0; i < 200; i++) {
		fd = T_create(CLOCK_MONOTONIC, 0);
		if (fd < 0 || h_arm(fd, 1, 0) < 0 || T_gettime(fd, &cur) < 0 ||
		    h_read(fd) != 1 || T_close(fd) != 0)
			bad++;
	}
	block_sig(SIGALRM, SIG_BLOCK);
	alarm_in(0, 0);
	say("the loop's calls failed: %s", bad ? "yes" : "never");
	say("the handler found expirations: %s",
	    handler_reads > 0 ? "yes" : "no");
	say("the handler's calls failed: %s", handler_failures());
	T_close(handler_armed);
	return T_close(handler_fd) != 0;
}

/* While the thread is blocked in a read, a 1 ms alarm's handler reads,
 * arms and queries other timers: allowed everywhere, libtfd included
 * (tfd(7), Signals: the read holds no lock of ours while it waits).  The
 * alarms start 20 ms after the read is called and the handler calls
 * nothing from 150 ms on, while the read's timer is due at 250: a
 * handler that ran as the wait ended, inside the read's own locked part,
 * would break that rule.  Not under ThreadSanitizer, whose run-time holds
 * a signal that comes in a read(2) until the read returns: natively there
 * the handler runs after 150 ms and calls nothing. */
static struct timespec handler_stop;

static void read_and_arm_while_waiting(int sig)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec < handler_stop.tv_sec ||
	    (now.tv_sec == handler_stop.tv_sec &&
	     now.tv_nsec < handler_stop.tv_nsec))
		read_and_arm_in_handler(sig);
}

HOST_CASE(handler_calls_timers_during_a_blocked_read, H_NOTSAN)
{
	int slow = h_timer(0, 250, 0);

	handler_reads = handler_bad = 0;
	handler_fd = h_timer(T_NONBLOCK, 1, 1);
	handler_armed = h_timer(0, 3600 * 1000, 0);
	clock_gettime(CLOCK_MONOTONIC, &handler_stop);
	handler_stop.tv_nsec += 150 * 1000000L;
	if (handler_stop.tv_nsec >= 1000000000L) {
		handler_stop.tv_sec++;
		handler_stop.tv_nsec -= 1000000000L;
	}
	catch(SIGALRM, read_and_arm_while_waiting, SA_RESTART);
	alarm_in(20, 1000);
	say("the blocked read: %lld", h_read(slow));
	block_sig(SIGALRM, SIG_BLOCK);
	alarm_in(0, 0);
	say("the handler found expirations: %s",
	    handler_reads > 0 ? "yes" : "no");
	say("the handler's calls failed: %s", handler_failures());
	T_close(handler_armed);
	T_close(slow);
	return T_close(handler_fd) != 0;
}

/* System V's signal(): the handler is reset on delivery and puts itself
 * back, SIGWINCH from a 1 ms POSIX timer, while a loop uses timers (under
 * the preload, a signal held while the thread is inside still finds the
 * handler, which the C library's own reset would have taken away); and
 * sigaction() answers with the program's own action. */
static volatile long winches;

static void winch(int sig)
{
	winches++;
	sysv_signal(sig, winch);
}

HOST_CASE(sysv_signal_handler_puts_itself_back, 0)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL,
		               .sigev_signo = SIGWINCH };
	struct itimerspec its = { { 0, MS }, { 0, MS } }, cur;
	struct sigaction sa;
	timer_t t;
	int i, fd;

	sysv_signal(SIGWINCH, winch);
	timer_create(CLOCK_MONOTONIC, &ev, &t);
	timer_settime(t, 0, &its, NULL);
	for (i = 0; i < 100 || (winches < 3 && i < 100000); i++) {
		fd = T_create(CLOCK_MONOTONIC, T_NONBLOCK);
		h_arm(fd, 1, 1);
		T_gettime(fd, &cur);
		h_count(fd);
		T_close(fd);
		if (i % 100 == 99)
			h_sleep_ms(1);
	}
	block_sig(SIGWINCH, SIG_BLOCK);
	timer_delete(t);
	say("the handler ran 3 times or more: %s", winches >= 3 ? "yes" : "no");
	sigaction(SIGWINCH, NULL, &sa);
	say("sigaction answers: the program's handler %s, SA_RESETHAND %s",
	    sa.sa_handler == winch ? "yes" : "no",
	    sa.sa_flags & SA_RESETHAND ? "yes" : "no");
	fd = h_timer(0, 5, 0);
	say("a new timer reads %lld", h_read(fd));
	return T_close(fd) != 0;
}

static volatile sig_atomic_t ticks;

static void count_tick(int sig)
{
	(void)sig;
	ticks++;
}

/* select() interrupted by a signal leaves the time not slept in its
 * timeout (Linux's select does): a loop that retries on EINTR with the
 * same timeval ends, here with a timer in the set and a SIGALRM every
 * 100 ms through a 1 s wait. */
HOST_CASE(select_eintr_retry_ends, 0)
{
	int fd = h_timer(T_NONBLOCK, 3600 * 1000, 0), r;
	struct timeval tv = { 1, 0 };
	fd_set rd;

	catch(SIGALRM, count_tick, 0);
	alarm_in(100, 100 * 1000);
	do {
		FD_ZERO(&rd);
		FD_SET(fd, &rd);
		r = select(fd + 1, &rd, NULL, NULL, &tv);
	} while (r < 0 && errno == EINTR);
	alarm_in(0, 0);
	catch(SIGALRM, SIG_DFL, 0);
	say("select: %d, interrupted: %s, time left: %s", r,
	    ticks > 0 ? "yes" : "no",
	    tv.tv_sec == 0 && tv.tv_usec == 0 ? "none" : "some");
	T_close(fd);
	return 0;
}
