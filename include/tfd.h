/* SPDX-License-Identifier: MIT */
/*
 * tfd.h - timer file descriptors in user space.
 *
 * Two interfaces over one timer model:
 *   - timerfd(): the single call of the revised interface proposed for
 *     Linux in 2007 (create, change and query in one call);
 *   - tfd_create() / tfd_settime() / tfd_gettime() / tfd_read() /
 *     tfd_close(): the shape Linux finally shipped as timerfd_create(2).
 *
 * The descriptor returned works with read(2), poll(2), select(2) and
 * epoll(7).  See tfd(7) for the model and the differences from a kernel
 * timerfd; every function has its own manual page.
 *
 * Thread safety: every function here may be called from any thread on any
 * timer.  None is async-signal-safe.
 */
#ifndef TFD_H
#define TFD_H

#include <stdint.h>    /* uint64_t */
#include <sys/types.h> /* ssize_t, clockid_t */
#include <time.h>      /* CLOCK_*, struct timespec */

#ifdef __linux__
/* The TFD_* constants and struct itimerspec come from the system header, so
 * that both headers can be included in either order. */
#include <sys/timerfd.h>
#else
#include <fcntl.h>
#ifndef TFD_CLOEXEC
#define TFD_CLOEXEC O_CLOEXEC
#endif
#ifndef TFD_NONBLOCK
#define TFD_NONBLOCK O_NONBLOCK
#endif
#ifndef TFD_TIMER_ABSTIME
#define TFD_TIMER_ABSTIME (1 << 0)
#endif
#ifndef TFD_TIMER_CANCEL_ON_SET
#define TFD_TIMER_CANCEL_ON_SET (1 << 1)
#endif
#endif

/*
 * The version of this header; tfd_version(3) gives the library's at run
 * time.  These three lines are the one place the version is written (the
 * Makefile reads them).  TFD_VERSION_HEX is one number for comparisons,
 * (major << 16) | (minor << 8) | patch, as libuv's UV_VERSION_HEX:
 *   #if TFD_VERSION_HEX >= 0x000200      (0.2.0 or later)
 */
#define TFD_VERSION_MAJOR 0
#define TFD_VERSION_MINOR 2
#define TFD_VERSION_PATCH 0
#define TFD_VERSION_HEX                                                    \
	((TFD_VERSION_MAJOR << 16) | (TFD_VERSION_MINOR << 8) |            \
	 TFD_VERSION_PATCH)
#define TFD_VERSION_STR_(x) #x
#define TFD_VERSION_STR(x) TFD_VERSION_STR_(x)
#define TFD_VERSION_STRING                                                 \
	TFD_VERSION_STR(TFD_VERSION_MAJOR) "." TFD_VERSION_STR(            \
		TFD_VERSION_MINOR) "." TFD_VERSION_STR(TFD_VERSION_PATCH)

#if defined(__GNUC__) && __GNUC__ >= 4
#define TFD_API __attribute__((visibility("default")))
#else
#define TFD_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The revised interface of the 2007 proposal.  timerfd(3).
 *
 *   timerfd(-1, clock, flags, &new, NULL)   create a timer armed with new
 *   timerfd(fd, -1, flags, &new, NULL)      change it
 *   timerfd(fd, -1, flags, &new, &old)      change it, return the previous
 *   timerfd(fd, -1, 0, NULL, &cur)          query it, changing nothing
 *
 * Returns the timer's descriptor, or -1 with errno set.
 */
TFD_API int timerfd(int ufd, int clockid, int flags,
                    const struct itimerspec *utmr, struct itimerspec *outmr);

/* The final Linux interface.  tfd_create(3), tfd_settime(3), tfd_read(3),
 * tfd_close(3).  Same arguments, results and errno rules as
 * timerfd_create(2), timerfd_settime(2), timerfd_gettime(2) and read(2) on a
 * timerfd. */
TFD_API int tfd_create(clockid_t clockid, int flags);
TFD_API int tfd_settime(int fd, int flags, const struct itimerspec *new_value,
                        struct itimerspec *old_value);
TFD_API int tfd_gettime(int fd, struct itimerspec *curr_value);
TFD_API ssize_t tfd_read(int fd, void *buf, size_t count);
TFD_API int tfd_close(int fd);

/*
 * Timer sets.  tfd_set(3).  Since 0.2.0.  One descriptor holds any
 * number of timers on one clock, each named by a 64-bit key the program
 * chooses; arming, re-arming and cancelling one is a memory operation.
 *
 *   tfd_set_create   a set on CLOCK_MONOTONIC, _REALTIME or _BOOTTIME;
 *                    flags TFD_NONBLOCK, TFD_CLOEXEC
 *   tfd_set_settime  key armed as timerfd_settime(2) arms a timer
 *                    (TFD_TIMER_ABSTIME, TFD_TIMER_CANCEL_ON_SET); a zero
 *                    it_value disarms it and forgets the key
 *   tfd_set_gettime  key's time left and interval (ENOENT: not armed)
 *   tfd_set_read     whole records of the keys that expired, each key
 *                    once, with its expirations since its last record; a
 *                    one-shot key is forgotten once read; ECANCELED
 *                    once after CLOCK_REALTIME was set, if a key asked
 *   tfd_close        ends the set
 *
 * The descriptor is readable (poll, select, epoll) while a key has
 * expirations not yet read.
 */
struct tfd_expiry {
	uint64_t key;
	uint64_t count;
};

TFD_API int tfd_set_create(clockid_t clockid, int flags);
TFD_API int tfd_set_settime(int sfd, uint64_t key, int flags,
                            const struct itimerspec *new_value,
                            struct itimerspec *old_value);
TFD_API int tfd_set_gettime(int sfd, uint64_t key,
                            struct itimerspec *curr_value);
TFD_API ssize_t tfd_set_read(int sfd, struct tfd_expiry *buf, size_t count);

/*
 * Backends.  tfd_use_backend(3).  "engine" (the default) keeps timers in
 * user space; "kernel" passes straight through to Linux's timerfd;
 * "virtual" is the engine on a clock that moves only when told (below).
 * The environment variable TFD_BACKEND chooses at the first call (a name
 * that is no backend's selects "none": tfd_create fails with EINVAL);
 * tfd_use_backend() changes it while no timer is open (else EBUSY).
 */
TFD_API int tfd_use_backend(const char *name);
TFD_API const char *tfd_backend_name(void);

/*
 * The virtual clock.  tfd_virtual(3).  Valid while the "virtual" backend
 * is selected (else ENOTSUP).  Each call delivers every expiration its step
 * crosses before it returns.
 *
 *   tfd_virtual_now       the virtual time of CLOCK_REALTIME, _MONOTONIC
 *                         or _BOOTTIME
 *   tfd_virtual_advance   all three clocks move by step: time passes
 *   tfd_virtual_suspend   CLOCK_BOOTTIME and CLOCK_REALTIME move by step,
 *                         CLOCK_MONOTONIC stays: a suspend
 *   tfd_virtual_set_realtime  CLOCK_REALTIME jumps to *t, forwards or
 *                         backwards: settimeofday()
 */
TFD_API int tfd_virtual_now(clockid_t clockid, struct timespec *now);
TFD_API int tfd_virtual_advance(const struct timespec *step);
TFD_API int tfd_virtual_suspend(const struct timespec *step);
TFD_API int tfd_virtual_set_realtime(const struct timespec *t);

/* The version of the library running, "MAJOR.MINOR.PATCH" (such as
 * "0.2.0"), which may differ from TFD_VERSION_STRING, the header's, with a
 * shared library.  tfd_version(3).  Since 0.2.0. */
TFD_API const char *tfd_version(void);

#ifdef __cplusplus
}
#endif

#endif /* TFD_H */
