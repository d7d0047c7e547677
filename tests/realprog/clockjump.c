/* SPDX-License-Identifier: MIT */
/*
 * clockjump - a wait that delivers sees CLOCK_REALTIME set (tfd(7),
 * Delivery): an epoll set of 100 timers on CLOCK_MONOTONIC an hour ahead
 * and one absolute CLOCK_REALTIME timer 30 s ahead, whose waits keep
 * their deadlines by CLOCK_MONOTONIC; then CLOCK_REALTIME moves 30 s
 * forward, as a set of the clock or an NTP step moves it, and the next
 * wait must report the realtime timer at once, not 30 s later.
 *
 * Setting the machine's clock would disturb everything else it runs, so
 * the program moves the clock only as it is read in this process: it
 * defines clock_gettime(3), which the library's engine calls too.  The
 * kernel's timers do not see that clock: the program runs under the
 * preload only (tests/realprog/run.sh).
 *
 * The same hook then opens a window in a settime: a thread arms a timer
 * of a set (disarmed, its wait's last look found nothing), and as the
 * engine reads the clock for that settime, a signal is sent to the
 * thread, whose handler (run once the library lets it, at the end of the
 * settime's work) lets the main thread enter epoll_wait and sleeps
 * 100 ms.  The wait must report the timer at its deadline (5 ms), not
 * sleep for its whole second: a wait that looks while a settime is half
 * done must not miss it.  Each line is "ok" or "FAIL"; the exit status
 * is the count of FAILs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define NMONO 100
#define SEC 1000000000LL

static int64_t jump; /* added to CLOCK_REALTIME as read here */
static pid_t poke;   /* a thread to signal as it reads the clock */
static sem_t poked;  /* posted by its handler */

int clock_gettime(clockid_t c, struct timespec *ts)
{
	static int (*next)(clockid_t, struct timespec *);
	int r;

	if (!next)
		next = (int (*)(clockid_t, struct timespec *))dlsym(
			RTLD_NEXT, "clock_gettime");
	r = next(c, ts);
	if (poke && poke == gettid()) {
		poke = 0;
		kill(getpid(), SIGUSR1); /* (the only thread not blocking it) */
	}
	if (r == 0 && c == CLOCK_REALTIME && jump) {
		int64_t ns = ts->tv_sec * SEC + ts->tv_nsec + jump;

		ts->tv_sec = ns / SEC;
		ts->tv_nsec = ns % SEC;
	}
	return r;
}

static int fails;

static void judge(int good, const char *what)
{
	printf("%s %s\n", good ? "ok  " : "FAIL", what);
	fails += !good;
}

static int64_t now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

static void on_usr1(int sig)
{
	struct timespec t = { 0, 100000000 };

	(void)sig;
	sem_post(&poked);
	nanosleep(&t, NULL); /* the main thread's wait looks meanwhile */
}

static int window_fd;

static void *arm_in_window(void *arg)
{
	struct itimerspec v = { { 0, 0 }, { 0, 5000000 } };
	sigset_t usr1;

	(void)arg;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	poke = gettid();
	timerfd_settime(window_fd, 0, &v, NULL);
	return NULL;
}

/* A settime in one thread, half done as the main thread's wait looks. */
static void settime_window(void)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), n;
	struct epoll_event ev = { EPOLLIN, { .u32 = 7 } };
	struct sigaction sa;
	sigset_t usr1;
	pthread_t t;
	int64_t t0;
	uint64_t c;

	window_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	sem_init(&poked, 0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL); /* (the thread's alone) */
	if (window_fd < 0 || ep < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, window_fd, &ev) < 0) {
		judge(0, "settime window: a timer in a set");
		return;
	}
	n = epoll_wait(ep, &ev, 1, 20); /* a look: nothing armed */
	if (pthread_create(&t, NULL, arm_in_window, NULL) != 0) {
		judge(0, "settime window: a thread");
		return;
	}
	while (sem_wait(&poked) < 0)
		;
	t0 = now(CLOCK_MONOTONIC);
	n = epoll_wait(ep, &ev, 1, 1000);
	judge(n == 1, "settime window: the wait reports the timer");
	judge(now(CLOCK_MONOTONIC) - t0 < 500000000,
	      "settime window: within 0.5 s, not at the wait's timeout");
	pthread_join(t, NULL);
	judge(read(window_fd, &c, sizeof(c)) == sizeof(c) && c == 1,
	      "settime window: its read counts 1");
	close(window_fd);
	close(ep);
}

static int arm(int fd, int flags, int64_t at)
{
	struct itimerspec v = { { 0, 0 }, { at / SEC, at % SEC } };

	return timerfd_settime(fd, flags, &v, NULL);
}

int main(void)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), rt, i, n;
	struct epoll_event ev[8];
	int64_t t0;
	uint64_t c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < NMONO; i++) {
		struct epoll_event e = { EPOLLIN, { .u32 = (uint32_t)i } };
		int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);

		if (fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) < 0 ||
		    arm(fd, 0, 3600 * SEC) < 0)
			return perror("timer"), 99;
	}
	rt = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
	ev[0].events = EPOLLIN;
	ev[0].data.u32 = 1000;
	if (rt < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, rt, &ev[0]) < 0 ||
	    arm(rt, TFD_TIMER_ABSTIME, now(CLOCK_REALTIME) + 30 * SEC) < 0)
		return perror("realtime timer"), 99;
	n = epoll_wait(ep, ev, 8, 50);
	judge(n == 0, "before the clock moves: nothing due");
	jump = 30 * SEC;
	t0 = now(CLOCK_MONOTONIC);
	n = epoll_wait(ep, ev, 8, 5000);
	printf("%s the realtime timer reported once the clock moved: %s "
	       "(%d event%s)\n", n == 1 && ev[0].data.u32 == 1000 ? "ok  "
	                                                          : "FAIL",
	       n == 1 && ev[0].data.u32 == 1000 ? "yes" : "no", n,
	       n == 1 ? "" : "s");
	fails += !(n == 1 && ev[0].data.u32 == 1000);
	judge(now(CLOCK_MONOTONIC) - t0 < 2 * SEC,
	      "reported within 2 s, not at the old deadline");
	judge(read(rt, &c, sizeof(c)) == sizeof(c) && c == 1,
	      "its read counts 1");
	jump = 0;
	settime_window();
	return fails;
}
