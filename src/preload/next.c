/* SPDX-License-Identifier: MIT */
/*
 * next.c - the next definitions (libc's) of every function we export,
 * resolved once with dlsym(RTLD_NEXT).
 */
#include "preload/preload.h"

#include <dlfcn.h>

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

/* ---- the library's own calls ----
 *
 * The library's code, linked into this one, calls read(2), close(2) and
 * the rest by their names, which are ours: a call of the library's must go
 * past our definitions.  It does so while the library holds its lock,
 * where the program's signals are blocked (src/engine/family.c): the
 * engine tells us on both sides (tfd_engine_lock_hook), and the calls go
 * straight through while tfd_inside is set (on virtual time the thread
 * counts as running meanwhile, even while it waits for the lock).  No
 * handler of the program's runs then, so none sees the flag set, and none
 * can jump out and leave it set.  The one call the library makes unlocked,
 * with the program's signals let through, is the read(2) a blocking
 * tfd_read() waits in: that one goes to libc's read(2) directly
 * (tfd_engine_sys_read), and a handler that runs meanwhile finds the
 * thread outside the library, as it is. */
static __thread int hook_was __attribute__((tls_model("initial-exec")));
__thread sigset_t tfd_entry_mask __attribute__((tls_model("initial-exec")));

void tfd_engine_lock_hook(int held)
{
	if (held) {
		hook_was = tfd_inside;
		tfd_inside = 1;
		if (!hook_was && unlikely(tfd_dom != NULL))
			tfd_dom_inlib(1);
	} else {
		if (!hook_was && unlikely(tfd_dom != NULL))
			tfd_dom_inlib(-1);
		tfd_inside = hook_was;
	}
}


ssize_t tfd_engine_sys_read(int fd, void *buf, size_t n)
{
	return R(read)(fd, buf, n);
}
