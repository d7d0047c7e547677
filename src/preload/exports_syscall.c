/* SPDX-License-Identifier: MIT */
/*
 * exports_syscall.c - syscall(), the C library's door to raw system
 * calls.  On virtual time the calls that read a clock, sleep, or wait on
 * a futex with a timeout are the same waits and readings as the C
 * library's wrappers of them: GLib waits on its conditions with
 * syscall(SYS_futex, ...) and a timeout in real time, which never moved
 * the clock (its g_cond_wait_until() returned a second early in virtual
 * time).  Everything else, off virtual time, inside the library, and the
 * library's own raw calls (its futexes, tgkill: they come from its own
 * code, or carry TFD_FUTEX_OURS from a copy of it in the program) go
 * straight to the C library's.  64-bit only (a long holds each argument
 * and the kernel's timespec is the C library's).  A program that makes
 * the system call itself, with no C library between (Go), comes here
 * through gosys.c's trap: tfd_vsyscall().
 */
#include "preload/preload.h"

#include "futex.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/epoll.h>
#include <sys/time.h>

/* The library's own code: from its ELF header to the end of its text. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
extern const char etext[] __attribute__((visibility("hidden")));

static int from_us(const void *caller)
{
	return (const char *)caller >= __ehdr_start &&
	       (const char *)caller < etext;
}

/* A clock read: the kernel's first, for its errors (EFAULT for a pointer
 * it cannot write, EINVAL), then the virtual clock over what it wrote. */
static long clock_read(long n, const long *a)
{
	long r = R(syscall)(n, a[0], a[1], a[2], a[3], a[4], a[5]);

	if (r < 0)
		return r;
	if (n == SYS_clock_gettime)
		return clock_gettime((clockid_t)a[0], (struct timespec *)a[1]);
	if (n == SYS_gettimeofday)
		return gettimeofday((struct timeval *)a[0], (void *)a[1]);
	return (long)time((time_t *)a[0]);
}

/* A sleep: as the C library's, but no cancellation point (syscall() is
 * none). */
static long sleep_call(long n, const long *a)
{
	int cs;
	long r;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	if (n == SYS_nanosleep) {
		r = nanosleep((const struct timespec *)a[0],
		              (struct timespec *)a[1]);
	} else {
		r = clock_nanosleep((clockid_t)a[0], (int)a[1],
		                    (const struct timespec *)a[2],
		                    (struct timespec *)a[3]);
		if (r) {
			errno = (int)r;
			r = -1;
		}
	}
	pthread_setcancelstate(cs, NULL);
	return r;
}

/* A signal sent (exports_sends.c): a wake to tell, to the process or
 * thread it names (kill, tgkill, their queued forms), or to any. */
static long signal_call(long n, const long *a)
{
	int thread = n == SYS_tgkill || n == SYS_rt_tgsigqueueinfo;
	int sig = (int)(thread ? a[2] : a[1]);
	pid_t pid = n == SYS_kill || n == SYS_rt_sigqueueinfo || thread
	                    ? (pid_t)a[0]
	                    : 0;
	long r = R(syscall)(n, a[0], a[1], a[2], a[3], a[4], a[5]);

	if (tfd_dom && sig != 0)
		tfd_dom_signalled(pid > 0 ? pid : 0,
		                  thread ? (pid_t)a[1] : 0);
	return r;
}

/* The call on virtual time, in syscall()'s convention, or TFD_PASS. */
static long virtual_call(long n, const long *a)
{
	switch (n) {
	case SYS_futex:
		/* Slices need the domain; a copy of the library's own passes. */
		if (!tfd_dom ||
		    (((int)a[1] & FUTEX_CMD_MASK) == FUTEX_WAIT &&
		     (uint32_t)a[5] == TFD_FUTEX_OURS))
			return TFD_PASS;
		return tfd_timed_futex((uint32_t *)a[0], (int)a[1],
		                       (uint32_t)a[2],
		                       (const struct timespec *)a[3],
		                       (uint32_t)a[5]);
	case SYS_kill:
	case SYS_tkill:
	case SYS_tgkill:
	case SYS_rt_sigqueueinfo:
	case SYS_rt_tgsigqueueinfo:
#ifdef SYS_pidfd_send_signal
	case SYS_pidfd_send_signal:
#endif
		return signal_call(n, a);
	case SYS_clock_gettime:
	case SYS_gettimeofday:
#ifdef SYS_time
	case SYS_time:
#endif
		return clock_read(n, a);
	case SYS_nanosleep:
	case SYS_clock_nanosleep:
		return sleep_call(n, a);
	case SYS_rt_sigprocmask: { /* never blocking a signal taken */
		sigset_t copy;

		if (a[3] != 8)
			return TFD_PASS;
		return R(syscall)(n, a[0],
		                  (long)tfd_sig_never_blocked(
		                          (int)a[0], (const sigset_t *)a[1],
		                          &copy),
		                  a[2], a[3], a[4], a[5]);
	}
	case SYS_epoll_pwait:
		if (a[4] && a[5] != _NSIG / 8)
			return TFD_PASS; /* the kernel's EINVAL */
		return epoll_pwait((int)a[0], (struct epoll_event *)a[1],
		                   (int)a[2], (int)a[3], (const sigset_t *)a[4]);
#ifdef SYS_epoll_wait
	case SYS_epoll_wait:
		return epoll_wait((int)a[0], (struct epoll_event *)a[1],
		                  (int)a[2], (int)a[3]);
#endif
	default:
		return TFD_PASS;
	}
}

/* Six arguments are read whatever the caller passed, as the C library's
 * own syscall() does (the kernel takes what it needs): past the caller's
 * arguments on its stack, which AddressSanitizer would take for an
 * error. */
EXPORT __attribute__((no_sanitize_address)) long syscall(long n, ...)
{
	long a[6], r;
	va_list ap;
	int i;

	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (sizeof(long) == 8 && tfd_virt && !tfd_inside &&
	    !from_us(__builtin_return_address(0)) &&
	    (r = virtual_call(n, a)) != TFD_PASS)
		return r;
	if (!tfd_inside && !from_us(__builtin_return_address(0)) &&
	    tfd_rawsys_direct(n, a, &r)) {
		if (r < 0 && r > -4096) {
			errno = (int)-r;
			return -1;
		}
		return r;
	}
	if (n == SYS_clone3 ||
#ifdef SYS_vfork
	    n == SYS_vfork ||
#endif
	    (n == SYS_clone && ((unsigned long)a[0] & CLONE_VM)))
		tfd_vm_shared(); /* a child on our memory (tfd_foreign) */
	if ((n == SYS_fcntl || n == SYS_ioctl) && !tfd_inside &&
	    a[0] >= 0 && a[0] <= INT_MAX && tfd_marked((int)a[0]))
		tfd_timer_mode((int)a[0], -1); /* its flags, unseen */
	r = R(syscall)(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	if ((n == SYS_close || n == SYS_epoll_ctl || n == SYS_dup3 ||
#ifdef SYS_dup2
	    n == SYS_dup2 ||
#endif
#ifdef SYS_close_range
	    n == SYS_close_range ||
#endif
	     n == SYS_dup) && !from_us(__builtin_return_address(0)))
		tfd_vfds_changed(); /* the program's: not our own calls */
#ifdef SYS_io_uring_setup
	if (n == SYS_io_uring_setup && r >= 0 && tfd_dom)
		tfd_dom_uses_uring(); /* its workers run unseen (vtime.h) */
#endif
	return r;
}

/* System call n made by the program with no C library between (gosys.c),
 * on virtual time: its result as the kernel gives it, -errno on failure.
 * errno is left as it was. */
long tfd_vsyscall(long n, const long *a)
{
	int e = errno;
	long r = sizeof(long) == 8 && tfd_virt ? virtual_call(n, a) : TFD_PASS;

	if (r == TFD_PASS)
		r = R(syscall)(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (r == -1)
		r = -errno;
	errno = e;
	return r;
}
