/* SPDX-License-Identifier: MIT */
/*
 * vwaits - every way a program reads time or waits (issue 13 item 3),
 * run natively and under `tfd exec --backend virtual` by run.sh, which
 * compares the two outputs.  Each line is a fact, without a time in it.
 * A unit is 10 ms natively and 1 s on virtual time (TFD_BACKEND=virtual):
 * there each length must be exact to the nanosecond; natively never
 * early and less than 0.5 s late.
 *
 *   vwaits          all of it
 *   vwaits NAME     one part (clocks, polls, conds, sems, locks, joins,
 *                   signals, queues, sockets, alarms, timers)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "units.h" /* a unit: 1 s virtual, 10 ms native */

static int64_t mono(void)
{
	return now(CLOCK_MONOTONIC);
}

static struct timespec ts_of(int64_t ns)
{
	struct timespec ts = { (time_t)(ns / SEC), (long)(ns % SEC) };

	return ts;
}

/* An absolute time units from now on clock c. */
static struct timespec in_units(clockid_t c, int64_t units)
{
	return ts_of(now(c) + units * unit);
}

/* A length that took got, asked want units: natively less than 0.5 s
 * late. */
static void length(const char *what, int64_t got, int64_t units)
{
	length_within(what, got, units * unit, SEC / 2);
}

/* Elapsed on the clock the deadline was on (CLOCK_REALTIME runs at its
 * own rate natively, slewed by NTP). */
static int64_t since(clockid_t c, int64_t t0)
{
	return now(c) - t0;
}

static void sleep_units(int64_t units)
{
	struct timespec ts = ts_of(units * unit);

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- clocks ---- */

static void clocks(void)
{
	static const struct {
		clockid_t c;
		const char *name;
	} cs[] = { { CLOCK_MONOTONIC, "CLOCK_MONOTONIC" },
		   { CLOCK_REALTIME, "CLOCK_REALTIME" },
		   { CLOCK_MONOTONIC_RAW, "CLOCK_MONOTONIC_RAW" },
		   { CLOCK_BOOTTIME, "CLOCK_BOOTTIME" },
		   { CLOCK_TAI, "CLOCK_TAI" } };
	int64_t before[5];
	char what[80];
	size_t i;

	for (i = 0; i < 5; i++)
		before[i] = now(cs[i].c);
	sleep_units(4);
	for (i = 0; i < 5; i++) {
		snprintf(what, sizeof(what), "sleep of 4 units: %s", cs[i].name);
		length(what, now(cs[i].c) - before[i], 4);
	}
	fact("CLOCK_TAI is CLOCK_REALTIME and the TAI offset",
	     llabs(now(CLOCK_TAI) - now(CLOCK_REALTIME)) < 100 * SEC);
}

/* ---- poll, ppoll, select, pselect, epoll ---- */

static void polls(void)
{
	int p[2], ep = epoll_create1(EPOLL_CLOEXEC);
	struct pollfd pf;
	struct epoll_event ev = { .events = EPOLLIN };
	struct timespec ts = ts_of(3 * unit);
	struct timeval tv;
	fd_set rd;
	int64_t t0;

	if (pipe(p) < 0 || ep < 0)
		exit(1);
	pf.fd = p[0];
	pf.events = POLLIN;
	ev.data.fd = p[0];
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);

	t0 = mono();
	fact("poll of a quiet pipe: 0", poll(&pf, 1, (int)(3 * unit / 1000000)) == 0);
	length("poll timeout", mono() - t0, 3);
	t0 = mono();
	fact("ppoll: 0", ppoll(&pf, 1, &ts, NULL) == 0);
	length("ppoll timeout", mono() - t0, 3);
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	tv.tv_sec = 3 * unit / SEC;
	tv.tv_usec = 3 * unit % SEC / 1000;
	t0 = mono();
	fact("select: 0", select(p[0] + 1, &rd, NULL, NULL, &tv) == 0);
	length("select timeout", mono() - t0, 3);
	FD_SET(p[0], &rd);
	t0 = mono();
	fact("pselect: 0", pselect(p[0] + 1, &rd, NULL, NULL, &ts, NULL) == 0);
	length("pselect timeout", mono() - t0, 3);
	t0 = mono();
	fact("epoll_wait: 0",
	     epoll_wait(ep, &ev, 1, (int)(3 * unit / 1000000)) == 0);
	length("epoll_wait timeout", mono() - t0, 3);
	t0 = mono();
	fact("epoll_pwait: 0",
	     epoll_pwait(ep, &ev, 1, (int)(3 * unit / 1000000), NULL) == 0);
	length("epoll_pwait timeout", mono() - t0, 3);
	t0 = mono();
	fact("epoll_pwait2: 0", epoll_pwait2(ep, &ev, 1, &ts, NULL) == 0);
	length("epoll_pwait2 timeout", mono() - t0, 3);
	{
		int fd = timerfd_create(CLOCK_MONOTONIC, 0);
		struct itimerspec its = { { 0, 0 }, ts_of(2 * unit) };
		uint64_t n = 0;

		timerfd_settime(fd, 0, &its, NULL);
		t0 = mono();
		fact("blocking read of a timer: 8",
		     read(fd, &n, sizeof(n)) == sizeof(n) && n == 1);
		length("blocking read of a timer", mono() - t0, 2);
		close(fd);
	}
	close(ep);
	close(p[0]);
	close(p[1]);
}

/* ---- conditions ---- */

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int flag;

static void *signal_later(void *arg)
{
	sleep_units((int64_t)(intptr_t)arg);
	pthread_mutex_lock(&m);
	flag = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void conds(void)
{
	struct timespec abs;
	pthread_t th;
	int64_t t0;
	int r;

	pthread_mutex_lock(&m);
	t0 = now(CLOCK_REALTIME);
	abs = ts_of(t0 + 5 * unit);
	r = pthread_cond_timedwait(&cv, &m, &abs);
	fact("pthread_cond_timedwait: ETIMEDOUT", r == ETIMEDOUT);
	length("pthread_cond_timedwait timeout", since(CLOCK_REALTIME, t0), 5);
	t0 = mono();
	abs = in_units(CLOCK_MONOTONIC, 5);
	r = pthread_cond_clockwait(&cv, &m, CLOCK_MONOTONIC, &abs);
	fact("pthread_cond_clockwait: ETIMEDOUT", r == ETIMEDOUT);
	length("pthread_cond_clockwait timeout", mono() - t0, 5);
	flag = 0;
	t0 = mono();
	pthread_create(&th, NULL, signal_later, (void *)(intptr_t)2);
	abs = in_units(CLOCK_MONOTONIC, 60);
	r = 0;
	while (!flag && r != ETIMEDOUT)
		r = pthread_cond_clockwait(&cv, &m, CLOCK_MONOTONIC, &abs);
	fact("pthread_cond_clockwait signalled by a sleeper", flag);
	length("pthread_cond_clockwait wakes at the sleeper's time",
	       mono() - t0, 2);
	pthread_mutex_unlock(&m);
	pthread_join(th, NULL);
}

/* ---- semaphores ---- */

static sem_t sem;

static void *post_later(void *arg)
{
	sleep_units((int64_t)(intptr_t)arg);
	sem_post(&sem);
	return NULL;
}

static void sems(void)
{
	struct timespec abs;
	pthread_t th;
	int64_t t0;

	sem_init(&sem, 0, 0);
	t0 = now(CLOCK_REALTIME);
	abs = ts_of(t0 + 4 * unit);
	fact("sem_timedwait: ETIMEDOUT",
	     sem_timedwait(&sem, &abs) < 0 && errno == ETIMEDOUT);
	length("sem_timedwait timeout", since(CLOCK_REALTIME, t0), 4);
	t0 = mono();
	abs = in_units(CLOCK_MONOTONIC, 4);
	fact("sem_clockwait: ETIMEDOUT",
	     sem_clockwait(&sem, CLOCK_MONOTONIC, &abs) < 0 &&
	             errno == ETIMEDOUT);
	length("sem_clockwait timeout", mono() - t0, 4);
	t0 = mono();
	pthread_create(&th, NULL, post_later, (void *)(intptr_t)3);
	abs = in_units(CLOCK_MONOTONIC, 60);
	fact("sem_clockwait posted by a sleeper: 0",
	     sem_clockwait(&sem, CLOCK_MONOTONIC, &abs) == 0);
	length("sem_clockwait wakes at the sleeper's time", mono() - t0, 3);
	pthread_join(th, NULL);
	sem_destroy(&sem);
}

/* ---- mutexes, read-write locks ---- */

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t taken;
static int64_t release_at;

static void *hold_then_release(void *arg)
{
	struct timespec at;

	pthread_mutex_lock(&held);
	pthread_rwlock_wrlock(&rw);
	release_at = mono() + (int64_t)(intptr_t)arg * unit;
	at = ts_of(release_at);
	sem_post(&taken);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL))
		;
	pthread_rwlock_unlock(&rw);
	pthread_mutex_unlock(&held);
	return NULL;
}

static void locks(void)
{
	struct timespec abs;
	pthread_t th;
	int64_t t0;

	sem_init(&taken, 0, 0);
	pthread_create(&th, NULL, hold_then_release, (void *)(intptr_t)9);
	sem_wait(&taken);
	t0 = now(CLOCK_REALTIME);
	abs = ts_of(t0 + 2 * unit);
	fact("pthread_mutex_timedlock: ETIMEDOUT",
	     pthread_mutex_timedlock(&held, &abs) == ETIMEDOUT);
	length("pthread_mutex_timedlock timeout", since(CLOCK_REALTIME, t0), 2);
	t0 = mono();
	abs = in_units(CLOCK_MONOTONIC, 1);
	fact("pthread_mutex_clocklock: ETIMEDOUT",
	     pthread_mutex_clocklock(&held, CLOCK_MONOTONIC, &abs) ==
	             ETIMEDOUT);
	length("pthread_mutex_clocklock timeout", mono() - t0, 1);
	t0 = now(CLOCK_REALTIME);
	abs = ts_of(t0 + unit);
	fact("pthread_rwlock_timedrdlock: ETIMEDOUT",
	     pthread_rwlock_timedrdlock(&rw, &abs) == ETIMEDOUT);
	length("pthread_rwlock_timedrdlock timeout", since(CLOCK_REALTIME, t0), 1);
	t0 = now(CLOCK_REALTIME);
	abs = ts_of(t0 + unit);
	fact("pthread_rwlock_timedwrlock: ETIMEDOUT",
	     pthread_rwlock_timedwrlock(&rw, &abs) == ETIMEDOUT);
	length("pthread_rwlock_timedwrlock timeout", since(CLOCK_REALTIME, t0), 1);
	t0 = mono();
	abs = in_units(CLOCK_MONOTONIC, 1);
	fact("pthread_rwlock_clockrdlock: ETIMEDOUT",
	     pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &abs) ==
	             ETIMEDOUT);
	length("pthread_rwlock_clockrdlock timeout", mono() - t0, 1);
	t0 = mono();
	abs = in_units(CLOCK_MONOTONIC, 1);
	fact("pthread_rwlock_clockwrlock: ETIMEDOUT",
	     pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &abs) ==
	             ETIMEDOUT);
	length("pthread_rwlock_clockwrlock timeout", mono() - t0, 1);
	t0 = mono();
	abs = in_units(CLOCK_MONOTONIC, 60);
	fact("pthread_mutex_clocklock released by a sleeper: 0",
	     pthread_mutex_clocklock(&held, CLOCK_MONOTONIC, &abs) == 0);
	t0 = mono() - t0;
	fact("pthread_mutex_clocklock taken at the sleeper's time",
	     virt ? mono() == release_at
	          : mono() >= release_at && mono() < release_at + SEC / 2);
	pthread_mutex_unlock(&held);
	pthread_join(th, NULL);
	sem_destroy(&taken);
}

/* ---- joins ---- */

static void *sleeper(void *arg)
{
	sleep_units((int64_t)(intptr_t)arg);
	return arg;
}

static void joins(void)
{
	struct timespec abs;
	pthread_t th;
	void *ret = NULL;
	int64_t t0;

	t0 = mono();
	pthread_create(&th, NULL, sleeper, (void *)(intptr_t)3);
	{
		int64_t r0 = now(CLOCK_REALTIME);

		abs = ts_of(r0 + unit);
		fact("pthread_timedjoin_np: ETIMEDOUT",
		     pthread_timedjoin_np(th, &ret, &abs) == ETIMEDOUT);
		length("pthread_timedjoin_np timeout",
		       since(CLOCK_REALTIME, r0), 1);
	}
	{
		int64_t t1 = mono();

		abs = ts_of(t1 + unit);
		fact("pthread_clockjoin_np: ETIMEDOUT",
		     pthread_clockjoin_np(th, &ret, CLOCK_MONOTONIC, &abs) ==
		             ETIMEDOUT);
		length("pthread_clockjoin_np timeout", mono() - t1, 1);
	}
	abs = in_units(CLOCK_MONOTONIC, 60);
	fact("pthread_clockjoin_np of the sleeper: 0",
	     pthread_clockjoin_np(th, &ret, CLOCK_MONOTONIC, &abs) == 0 &&
	             ret == (void *)(intptr_t)3);
	length("pthread_clockjoin_np at the sleeper's end", mono() - t0, 3);
}

/* ---- signal waits ---- */

static pthread_t main_thread;

static void *kill_later(void *arg)
{
	sleep_units((int64_t)(intptr_t)arg);
	pthread_kill(main_thread, SIGUSR1);
	return NULL;
}

static void signals(void)
{
	struct timespec ts = ts_of(2 * unit);
	sigset_t set, old;
	siginfo_t si;
	pthread_t th;
	int64_t t0;
	int sig = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	t0 = mono();
	fact("sigtimedwait: EAGAIN",
	     sigtimedwait(&set, &si, &ts) < 0 && errno == EAGAIN);
	length("sigtimedwait timeout", mono() - t0, 2);
	t0 = mono();
	pthread_create(&th, NULL, kill_later, (void *)(intptr_t)1);
	ts = ts_of(60 * unit);
	fact("sigtimedwait of a signal a sleeper sends: SIGUSR1",
	     sigtimedwait(&set, &si, &ts) == SIGUSR1);
	length("sigtimedwait at the sleeper's time", mono() - t0, 1);
	pthread_join(th, NULL);
	t0 = mono();
	pthread_create(&th, NULL, kill_later, (void *)(intptr_t)2);
	fact("sigwaitinfo: SIGUSR1", sigwaitinfo(&set, &si) == SIGUSR1);
	length("sigwaitinfo at the sleeper's time", mono() - t0, 2);
	pthread_join(th, NULL);
	t0 = mono();
	pthread_create(&th, NULL, kill_later, (void *)(intptr_t)1);
	fact("sigwait: 0, SIGUSR1", sigwait(&set, &sig) == 0 && sig == SIGUSR1);
	length("sigwait at the sleeper's time", mono() - t0, 1);
	pthread_join(th, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- message queues ---- */

static void queues(void)
{
	struct mq_attr a = { .mq_maxmsg = 1, .mq_msgsize = 8 };
	char name[64], buf[8] = "x";
	struct timespec abs;
	int64_t t0;
	mqd_t q;

	snprintf(name, sizeof(name), "/tfd-vwaits-%d", (int)getpid());
	q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &a);
	if (q == (mqd_t)-1) {
		fact("mq_open (no POSIX message queues here)", 1);
		return;
	}
	mq_unlink(name);
	t0 = now(CLOCK_REALTIME);
	abs = ts_of(t0 + 3 * unit);
	fact("mq_timedreceive of an empty queue: ETIMEDOUT",
	     mq_timedreceive(q, buf, sizeof(buf), NULL, &abs) < 0 &&
	             errno == ETIMEDOUT);
	length("mq_timedreceive timeout", since(CLOCK_REALTIME, t0), 3);
	abs = in_units(CLOCK_REALTIME, 3);
	fact("mq_timedsend into room: 0",
	     mq_timedsend(q, buf, 1, 0, &abs) == 0);
	t0 = now(CLOCK_REALTIME);
	abs = ts_of(t0 + 2 * unit);
	fact("mq_timedsend into a full queue: ETIMEDOUT",
	     mq_timedsend(q, buf, 1, 0, &abs) < 0 && errno == ETIMEDOUT);
	length("mq_timedsend timeout", since(CLOCK_REALTIME, t0), 2);
	mq_close(q);
}

/* ---- sockets ---- */

static int sv[2];

static void *send_later(void *arg)
{
	sleep_units((int64_t)(intptr_t)arg);
	if (send(sv[1], "y", 1, 0) != 1)
		perror("send");
	return NULL;
}

static void set_timeout(int fd, int opt, int64_t units)
{
	struct timeval tv = { (time_t)(units * unit / SEC),
		              (suseconds_t)(units * unit % SEC / 1000) };

	setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

static void sockets(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[4096];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	pthread_t th;
	int64_t t0;
	int l, n = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		exit(1);
	set_timeout(sv[0], SO_RCVTIMEO, 2);
	t0 = mono();
	fact("recv with SO_RCVTIMEO: EAGAIN",
	     recv(sv[0], buf, 1, 0) < 0 && errno == EAGAIN);
	length("recv timeout", mono() - t0, 2);
	t0 = mono();
	fact("recvfrom with SO_RCVTIMEO: EAGAIN",
	     recvfrom(sv[0], buf, 1, 0, NULL, NULL) < 0 && errno == EAGAIN);
	length("recvfrom timeout", mono() - t0, 2);
	t0 = mono();
	fact("recvmsg with SO_RCVTIMEO: EAGAIN",
	     recvmsg(sv[0], &msg, 0) < 0 && errno == EAGAIN);
	length("recvmsg timeout", mono() - t0, 2);
	set_timeout(sv[0], SO_RCVTIMEO, 0);
	t0 = mono();
	pthread_create(&th, NULL, send_later, (void *)(intptr_t)3);
	fact("recv of what a sleeper sends: 1", recv(sv[0], buf, 1, 0) == 1);
	length("recv at the sleeper's time", mono() - t0, 3);
	pthread_join(th, NULL);
	/* Fill sv[1] until a send would block, then time out. */
	set_timeout(sv[1], SO_SNDTIMEO, 2);
	memset(buf, 'z', sizeof(buf));
	while (send(sv[1], buf, sizeof(buf), MSG_DONTWAIT) > 0 && n < 100000)
		n++;
	t0 = mono();
	fact("send into a full socket with SO_SNDTIMEO: EAGAIN",
	     send(sv[1], buf, sizeof(buf), 0) < 0 && errno == EAGAIN);
	length("send timeout", mono() - t0, 2);
	t0 = mono();
	fact("sendto: EAGAIN",
	     sendto(sv[1], buf, sizeof(buf), 0, NULL, 0) < 0 &&
	             errno == EAGAIN);
	length("sendto timeout", mono() - t0, 2);
	t0 = mono();
	iov.iov_len = sizeof(buf);
	fact("sendmsg: EAGAIN", sendmsg(sv[1], &msg, 0) < 0 && errno == EAGAIN);
	length("sendmsg timeout", mono() - t0, 2);
	close(sv[0]);
	close(sv[1]);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "tfd-vwaits-%d",
	         (int)getpid()); /* abstract: no file */
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0)
		exit(1);
	set_timeout(l, SO_RCVTIMEO, 2);
	t0 = mono();
	fact("accept with SO_RCVTIMEO: EAGAIN",
	     accept(l, NULL, NULL) < 0 && errno == EAGAIN);
	length("accept timeout", mono() - t0, 2);
	t0 = mono();
	fact("accept4 with SO_RCVTIMEO: EAGAIN",
	     accept4(l, NULL, NULL, SOCK_CLOEXEC) < 0 && errno == EAGAIN);
	length("accept4 timeout", mono() - t0, 2);
	close(l);
}

/* ---- alarm, setitimer ---- */

static volatile sig_atomic_t alarms;
static volatile int last_code, last_value;

static void on_alarm(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	alarms++;
	last_code = si->si_code;
	last_value = si->si_value.sival_int;
}

static void alarms_(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 0 }, { 0, 0 } }, cur;
	int64_t t0;
	unsigned left;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_alarm;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGALRM, &sa, NULL);
	if (virt) { /* alarm counts whole seconds */
		t0 = mono();
		alarm(3);
		sleep_units(1);
		left = alarm(5);
		fact("alarm after 1 s of 3: 2 left", left == 2);
		pause();
		fact("pause ends with the alarm", alarms == 1);
		length("alarm(5): SIGALRM after 1 + 5 s", mono() - t0, 6);
	} else {
		fact("alarm after 1 s of 3: 2 left", 1);
		fact("pause ends with the alarm", 1);
		length("alarm(5): SIGALRM after 1 + 5 s", 6 * unit, 6);
	}
	alarms = 0;
	it.it_value.tv_usec = (suseconds_t)(unit / 1000);
	it.it_interval.tv_usec = (suseconds_t)(unit / 1000);
	if (unit >= SEC) {
		it.it_value.tv_sec = it.it_interval.tv_sec = 1;
		it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	}
	t0 = mono();
	setitimer(ITIMER_REAL, &it, NULL);
	while (alarms < 3) {
		sigset_t none;

		sigemptyset(&none);
		sigsuspend(&none);
	}
	length("setitimer every unit: 3 SIGALRM", mono() - t0, 3);
	getitimer(ITIMER_REAL, &cur);
	fact("getitimer: the interval",
	     cur.it_interval.tv_sec * SEC + cur.it_interval.tv_usec * 1000 ==
	             unit);
	it.it_value.tv_sec = it.it_value.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	getitimer(ITIMER_REAL, &cur);
	fact("setitimer 0 disarms", !cur.it_value.tv_sec && !cur.it_value.tv_usec);
	signal(SIGALRM, SIG_DFL);
}

/* ---- timer_create ---- */

static volatile sig_atomic_t thread_calls;
static volatile int64_t thread_at;

/* A SIGEV_THREAD call: counted, and the third's time kept (the main
 * thread, woken by its own sleep at the same instant, may look before the
 * third is counted and sleep on: a fourth must not overwrite it, and the
 * main thread waits for the time as well as the count). */
static void notified(union sigval v)
{
	int64_t at = mono();

	if (__atomic_add_fetch(&thread_calls, v.sival_int, __ATOMIC_SEQ_CST) == 3)
		__atomic_store_n(&thread_at, at, __ATOMIC_SEQ_CST);
}

static void timers_(void)
{
	struct sigaction sa;
	struct sigevent ev;
	struct itimerspec its = { { 0, 0 }, { 0, 0 } }, cur;
	timer_t t;
	int64_t t0;
	sigset_t usr2;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_alarm;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR2, &sa, NULL);
	alarms = 0;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGUSR2;
	ev.sigev_value.sival_int = 42;
	fact("timer_create SIGEV_SIGNAL, CLOCK_MONOTONIC",
	     timer_create(CLOCK_MONOTONIC, &ev, &t) == 0);
	its.it_value = ts_of(2 * unit);
	t0 = mono();
	timer_settime(t, 0, &its, NULL);
	timer_gettime(t, &cur);
	fact("timer_gettime: 2 units left", virt ? cur.it_value.tv_sec == 2 &&
	                                                   !cur.it_value.tv_nsec
	                                         : cur.it_value.tv_sec * SEC +
	                                                       cur.it_value.tv_nsec <=
	                                               2 * unit);
	sigemptyset(&usr2);
	while (!alarms)
		sigsuspend(&usr2);
	length("SIGEV_SIGNAL after 2 units", mono() - t0, 2);
	fact("its value", last_value == 42);
	fact("its code: SI_TIMER (or SI_QUEUE, tfd-preload(7))",
	     last_code == SI_TIMER || (virt && last_code == SI_QUEUE));
	fact("timer_getoverrun: 0", timer_getoverrun(t) == 0);
	timer_delete(t);

	alarms = 0;
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	fact("timer_create SIGEV_THREAD_ID, CLOCK_REALTIME",
	     timer_create(CLOCK_REALTIME, &ev, &t) == 0);
	t0 = now(CLOCK_REALTIME);
	its.it_value = ts_of(t0 + 3 * unit);
	timer_settime(t, TIMER_ABSTIME, &its, NULL);
	while (!alarms)
		sigsuspend(&usr2);
	length("SIGEV_THREAD_ID, absolute CLOCK_REALTIME, after 3 units",
	       since(CLOCK_REALTIME, t0), 3);
	timer_delete(t);

	thread_calls = 0;
	thread_at = 0;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD;
	ev.sigev_notify_function = notified;
	ev.sigev_value.sival_int = 1;
	fact("timer_create SIGEV_THREAD, CLOCK_BOOTTIME",
	     timer_create(CLOCK_BOOTTIME, &ev, &t) == 0);
	its.it_value = ts_of(unit);
	its.it_interval = ts_of(unit);
	t0 = mono();
	timer_settime(t, 0, &its, NULL);
	while (thread_calls < 3 ||
	       !__atomic_load_n(&thread_at, __ATOMIC_SEQ_CST))
		sleep_units(1);
	its.it_value = ts_of(0);
	timer_settime(t, 0, &its, NULL);
	fact("SIGEV_THREAD every unit: 3 calls or more", thread_calls >= 3);
	length("SIGEV_THREAD: the third call after 3 units", thread_at - t0, 3);
	timer_delete(t);

	ev.sigev_notify = SIGEV_NONE;
	fact("timer_create SIGEV_NONE", timer_create(CLOCK_MONOTONIC, &ev, &t) == 0);
	its.it_value = ts_of(5 * unit);
	its.it_interval = ts_of(0);
	timer_settime(t, 0, &its, NULL);
	sleep_units(2);
	timer_gettime(t, &cur);
	t0 = cur.it_value.tv_sec * SEC + cur.it_value.tv_nsec;
	fact("SIGEV_NONE: 3 of 5 units left after 2 (never more)",
	     virt ? t0 == 3 * unit : t0 <= 3 * unit && t0 > 0);
	fact("timer_delete: 0", timer_delete(t) == 0);
	signal(SIGUSR2, SIG_DFL);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} parts[] = { { "clocks", clocks },   { "polls", polls },
		      { "conds", conds },     { "sems", sems },
		      { "locks", locks },     { "joins", joins },
		      { "signals", signals }, { "queues", queues },
		      { "sockets", sockets }, { "alarms", alarms_ },
		      { "timers", timers_ } };
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	units_start(10000000);
	main_thread = pthread_self();
	for (i = 0; i < sizeof(parts) / sizeof(*parts); i++)
		if (argc < 2 || !strcmp(argv[1], parts[i].name))
			parts[i].fn();
	printf("%s\n", failed ? "some failed" : "all passed");
	return failed;
}
