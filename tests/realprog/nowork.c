/* SPDX-License-Identifier: MIT */
/*
 * nowork - work a drop-in must not do on calls that need none, counted,
 * not timed (stress-ng's timerfd stressor makes these calls in a loop).
 * The program defines snprintf, vsnprintf (and their _FORTIFY_SOURCE
 * entry points) and pthread_mutex_lock itself (linked with
 * --export-dynamic, so that the preload's calls land here) and counts the
 * calls its main thread makes while:
 *
 *   format  settime, gettime and read of a timer, with no trace asked
 *           for: the text of a trace line is built only for the trace
 *   lock    poll, ppoll, select and pselect with a zero timeout on 64
 *           timers: a wait that cannot block holds none of them (each
 *           hold takes the backend's lock)
 *   quiet   read of a non-blocking timer with nothing due: no lock taken
 *           (pthread_mutex_lock or _trylock), the engine answers from
 *           its memory (tfd_engine_quiet)
 *
 * Natively every count is 0; through libtfd-preload.so it must be too
 * (tests/realprog/run.sh compares the output line by line).
 *
 *   nowork [format|lock|quiet]   all parts by default
 */
#undef _FORTIFY_SOURCE /* we define snprintf ourselves */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define NTIMERS 64
#define ROUNDS 100

static __thread int counting;
static __thread long formats, locks, trylocks;

/* The next definition (libc's, or a sanitizer's), found at the first
 * call (the preload's constructor may call before ours), by any thread. */
static void *next(void **p, const char *name)
{
	void *f = __atomic_load_n(p, __ATOMIC_RELAXED);

	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		if (!f)
			abort();
		__atomic_store_n(p, f, __ATOMIC_RELAXED);
	}
	return f;
}

int vsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
	static void *p;
	int (*f)(char *, size_t, const char *, va_list) =
		(__typeof__(f))next(&p, "vsnprintf");

	formats += counting;
	return f(buf, n, fmt, ap);
}

int snprintf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

/* The same calls as glibc's checked entry points, which a library built
 * with _FORTIFY_SOURCE (make's default, a distribution's) makes instead. */
int __vsnprintf_chk(char *buf, size_t n, int flag, size_t len,
                    const char *fmt, va_list ap);
int __snprintf_chk(char *buf, size_t n, int flag, size_t len,
                   const char *fmt, ...);

int __vsnprintf_chk(char *buf, size_t n, int flag, size_t len,
                    const char *fmt, va_list ap)
{
	static void *p;
	int (*f)(char *, size_t, int, size_t, const char *, va_list) =
		(__typeof__(f))next(&p, "__vsnprintf_chk");

	formats += counting;
	return f(buf, n, flag, len, fmt, ap);
}

int __snprintf_chk(char *buf, size_t n, int flag, size_t len,
                   const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = __vsnprintf_chk(buf, n, flag, len, fmt, ap);
	va_end(ap);
	return r;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	static void *p;
	int (*f)(pthread_mutex_t *) = (__typeof__(f))next(&p,
	                                                  "pthread_mutex_lock");

	locks += counting;
	return f(m);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	static void *p;
	int (*f)(pthread_mutex_t *) = (__typeof__(f))next(
		&p, "pthread_mutex_trylock");

	trylocks += counting;
	return f(m);
}

static int timer(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

	if (fd < 0) {
		perror("timerfd_create");
		exit(1);
	}
	return fd;
}

/* settime, gettime and read, ROUNDS times each, with no trace. */
static void format(void)
{
	struct itimerspec far = { .it_value = { 100, 0 } };
	struct itimerspec past = { .it_value = { 0, 1 } }; /* absolute */
	struct itimerspec cur;
	uint64_t n;
	long bad = 0;
	int fd = timer(), i;

	formats = 0;
	counting = 1;
	for (i = 0; i < ROUNDS; i++) {
		bad += timerfd_settime(fd, 0, &far, NULL) != 0;
		bad += timerfd_gettime(fd, &cur) != 0;
		bad += read(fd, &n, sizeof(n)) != -1 || errno != EAGAIN;
		bad += timerfd_settime(fd, TFD_TIMER_ABSTIME, &past, NULL) != 0;
		bad += read(fd, &n, sizeof(n)) != sizeof(n);
	}
	counting = 0;
	close(fd);
	printf("settime, gettime and read of a timer, untraced: %ld failed, "
	       "%ld formatted\n",
	       bad, formats);
}

/* read(2) of a non-blocking timer with nothing due, ROUNDS times. */
static void quiet(void)
{
	struct itimerspec far = { .it_value = { 3600, 0 } };
	uint64_t n;
	long bad = 0;
	int fd = timer(), i;

	if (timerfd_settime(fd, 0, &far, NULL) != 0) {
		perror("timerfd_settime");
		exit(1);
	}
	usleep(20000); /* the library's threads done with what it woke */
	locks = trylocks = 0;
	counting = 1;
	for (i = 0; i < ROUNDS; i++)
		bad += read(fd, &n, sizeof(n)) != -1 || errno != EAGAIN;
	counting = 0;
	close(fd);
	printf("read of a timer with nothing due: %ld not EAGAIN, %ld locks "
	       "taken\n",
	       bad, locks + trylocks);
}

/* The four waits with a zero timeout on NTIMERS timers, one readable. */
static void lock(void)
{
	struct itimerspec past = { .it_value = { 0, 1 } }; /* absolute */
	struct timespec zero = { 0, 0 };
	struct pollfd p[NTIMERS];
	struct timeval tv;
	fd_set rd;
	long got = 0;
	int i, max = 0;

	FD_ZERO(&rd);
	for (i = 0; i < NTIMERS; i++) {
		p[i].fd = timer();
		p[i].events = POLLIN;
		max = p[i].fd > max ? p[i].fd : max;
	}
	if (timerfd_settime(p[0].fd, TFD_TIMER_ABSTIME, &past, NULL) != 0 ||
	    poll(p, 1, 1000) != 1) {
		perror("a timer armed in the past");
		exit(1);
	}
	locks = 0;
	counting = 1;
	for (i = 0; i < ROUNDS; i++) {
		got += poll(p, NTIMERS, 0);
		got += ppoll(p, NTIMERS, &zero, NULL);
		FD_SET(p[0].fd, &rd);
		FD_SET(p[1].fd, &rd);
		tv.tv_sec = tv.tv_usec = 0;
		got += select(max + 1, &rd, NULL, NULL, &tv);
		FD_SET(p[0].fd, &rd);
		FD_SET(p[1].fd, &rd);
		got += pselect(max + 1, &rd, NULL, NULL, &zero, NULL);
	}
	counting = 0;
	for (i = 0; i < NTIMERS; i++)
		close(p[i].fd);
	printf("poll, ppoll, select, pselect with a zero timeout on %d timers: "
	       "%ld ready, %ld locks\n",
	       NTIMERS, got, locks);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (!*what || !strcmp(what, "format"))
		format();
	if (!*what || !strcmp(what, "lock"))
		lock();
	if (!*what || !strcmp(what, "quiet"))
		quiet();
	return 0;
}
