/* SPDX-License-Identifier: MIT */
/*
 * next.c - the next definitions (libc's) of every function we export,
 * resolved once with dlsym(RTLD_NEXT).
 */
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>

struct tfd_next tfd_next;

#define LOAD(f) (tfd_next.f = (__typeof__(tfd_next.f))dlsym(RTLD_NEXT, #f))

static void load_io(void)
{
	LOAD(timerfd_create);
	LOAD(timerfd_settime);
	LOAD(timerfd_gettime);
	LOAD(read);
	LOAD(readv);
	LOAD(write);
	LOAD(writev);
	LOAD(close);
	LOAD(close_range);
	LOAD(closefrom);
	LOAD(dup);
	LOAD(dup2);
	LOAD(dup3);
	LOAD(fcntl);
	LOAD(fcntl64);
	LOAD(ioctl);
	LOAD(epoll_ctl);
}

static void load_waits(void)
{
	LOAD(poll);
	LOAD(ppoll);
	LOAD(select);
	LOAD(pselect);
	LOAD(epoll_wait);
	LOAD(epoll_pwait);
	LOAD(epoll_pwait2);
	LOAD(nanosleep);
	LOAD(clock_nanosleep);
	LOAD(sleep);
	LOAD(usleep);
	LOAD(clock_gettime);
	LOAD(gettimeofday);
	LOAD(time);
	LOAD(pthread_create);
	LOAD(fork);
	LOAD(system);
	LOAD(popen);
	LOAD(pthread_exit);
	LOAD(pthread_cond_timedwait);
	LOAD(pthread_cond_clockwait);
	LOAD(sem_timedwait);
	LOAD(sem_clockwait);
	LOAD(pthread_mutex_timedlock);
	LOAD(pthread_mutex_clocklock);
	LOAD(pthread_rwlock_timedrdlock);
	LOAD(pthread_rwlock_timedwrlock);
	LOAD(pthread_rwlock_clockrdlock);
	LOAD(pthread_rwlock_clockwrlock);
	LOAD(pthread_timedjoin_np);
	LOAD(pthread_clockjoin_np);
	LOAD(recvfrom);
	LOAD(recvmsg);
	LOAD(sendto);
	LOAD(sendmsg);
	LOAD(accept4);
	LOAD(mq_timedreceive);
	LOAD(mq_timedsend);
	LOAD(sigtimedwait);
	LOAD(sigwaitinfo);
	LOAD(sigwait);
	LOAD(timespec_get);
	LOAD(sigsuspend);
	LOAD(pause);
	LOAD(timer_create);
	LOAD(timer_settime);
	LOAD(timer_gettime);
	LOAD(timer_getoverrun);
	LOAD(timer_delete);
	LOAD(alarm);
	LOAD(setitimer);
	LOAD(getitimer);
	LOAD(posix_spawn);
	LOAD(posix_spawnp);
}

static void load_all(void)
{
	load_io();
	load_waits();
}

void tfd_next_load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, load_all);
}

/* ---- the read(2) a blocking tfd_read() waits in ----
 *
 * The library's code, linked into this one, calls read(2) by its name,
 * which is ours, and the thread is inside the library then (tfd_inside):
 * the call goes straight to libc's.  The one read(2) that may block is
 * made outside, as a system call of Linux's is made: the program's
 * handlers run there (none is deferred, and those deferred until now are
 * let through first), a handler may jump out of it (the engine undoes
 * the wait's record: src/engine/waits.c), and a cancellation ends the
 * thread there outside the library.  The thread is inside again after. */
ssize_t tfd_engine_sys_read(int fd, void *buf, size_t n)
{
	int was = tfd_inside, e;
	ssize_t r;

	if (!was)
		return R(read)(fd, buf, n);
	tfd_leave(0);
	r = R(read)(fd, buf, n);
	e = errno;
	(void)tfd_enter();
	errno = e;
	return r;
}
