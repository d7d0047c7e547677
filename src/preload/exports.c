/* SPDX-License-Identifier: MIT */
/*
 * exports.c - libtfd-preload.so's exported functions: glibc's names, with
 * glibc's prototypes.  Each decides, with one look at the table of
 * numbers, whether the call concerns a timer of ours (or virtual time),
 * and hands it on: to fdops.c, the waits (waits.h), virtual time
 * (vtime.h), or straight to the next definition.  See tfd-preload(7).
 */
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* glibc's fortified entry points (declared only under _FORTIFY_SOURCE). */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                const sigset_t *mask, size_t fdslen);

__thread int tfd_inside __attribute__((tls_model("initial-exec")));
const struct tfd_backend *tfd_be = &tfd_engine_backend;
int tfd_emulated = 1;
int tfd_virt;
int tfd_loaded;

static pthread_once_t init = PTHREAD_ONCE_INIT;
static void init_once(void);

/* ---- timerfd_create, timerfd_settime, timerfd_gettime ---- */

EXPORT int timerfd_create(int clockid, int flags)
{
	if (tfd_inside)
		return R(timerfd_create)(clockid, flags);
	tfd_preload_start(); /* another constructor may come first */
	return tfd_timer_create(clockid, flags, 1);
}

EXPORT int timerfd_settime(int fd, int flags, const struct itimerspec *nv,
                           struct itimerspec *old)
{
	if (tfd_inside || !tfd_marked(fd))
		return R(timerfd_settime)(fd, flags, nv, old);
	return tfd_timer_settime(fd, flags, nv, old);
}

EXPORT int timerfd_gettime(int fd, struct itimerspec *cur)
{
	if (tfd_inside || !tfd_marked(fd))
		return R(timerfd_gettime)(fd, cur);
	return tfd_timer_gettime(fd, cur);
}

/* ---- read, readv, write, writev ---- */

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	if (!tfd_marked(fd) || tfd_inside)
		return R(read)(fd, buf, n);
	return tfd_timer_read(fd, buf, n);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		abort(); /* glibc's __chk_fail: a buffer overflow */
	return read(fd, buf, n);
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	if (!tfd_marked(fd) || tfd_inside)
		return R(readv)(fd, iov, cnt);
	return tfd_timer_readv(fd, iov, cnt);
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	if (!tfd_marked(fd) || tfd_inside || !tfd_emulated ||
	    !tfd_still_timer(fd))
		return R(write)(fd, buf, n);
	return tfd_timer_write(fd, n);
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	if (!tfd_marked(fd) || tfd_inside || !tfd_emulated ||
	    !tfd_still_timer(fd))
		return R(writev)(fd, iov, cnt);
	return tfd_timer_write(fd, 0);
}

/* ---- close, close_range, closefrom: a vfork child closes its own ---- */

static int close_fd(int fd)
{
	if ((!tfd_marked(fd) && !tfd_sets_has(fd)) || tfd_inside ||
	    tfd_foreign()) {
		if (unlikely(__atomic_load_n(&tfd_nreg, __ATOMIC_RELAXED)) &&
		    tfd_epoll_set(fd) && !tfd_inside && !tfd_foreign())
			tfd_epoll_closed(fd); /* an epoll of timers */
		return R(close)(fd);
	}
	return tfd_timer_close(fd);
}

EXPORT int close(int fd)
{
	return tfd_vfds_changed_after(close_fd(fd));
}

static int close_range_fd(unsigned first, unsigned last, int flags)
{
	if (!LOADED(close_range)) {
		errno = ENOSYS;
		return -1;
	}
	if (tfd_inside || (!tfd_nmarked && !tfd_sets_any()) || tfd_foreign())
		return R(close_range)(first, last, flags);
	return tfd_range_close(first, last, flags);
}

EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	return tfd_vfds_changed_after(close_range_fd(first, last, flags));
}

EXPORT void closefrom(int lowfd)
{
	if (!tfd_inside && (tfd_nmarked || tfd_sets_any()) && !tfd_foreign())
		tfd_from_close(lowfd);
	if (LOADED(closefrom))
		tfd_next.closefrom(lowfd);
	tfd_vfds_changed();
}

/* ---- dup, dup2, dup3, fcntl, ioctl ---- */

/* r is a new number for the same file as fd, not a timer: if fd is an
 * epoll set with timers in it, r is one too (epoll.c). */
static int plain_dup(int fd, int r)
{
	if (r >= 0 && unlikely(__atomic_load_n(&tfd_nreg, __ATOMIC_RELAXED)) &&
	    tfd_epoll_set(fd) && !tfd_inside && !tfd_foreign())
		tfd_epoll_duped(fd, r);
	return r;
}

EXPORT int dup(int fd)
{
	if (!tfd_marked(fd) || tfd_inside || tfd_foreign())
		return plain_dup(fd, R(dup)(fd));
	return tfd_dup_result(fd, R(dup)(fd), "dup(%d)", 0);
}

static int dup2_fd(int oldfd, int newfd)
{
	if ((!tfd_marked(oldfd) && !tfd_marked(newfd) && !tfd_sets_has(newfd)) ||
	    tfd_inside || tfd_foreign())
		return plain_dup(oldfd, R(dup2)(oldfd, newfd));
	return tfd_timer_dup3(oldfd, newfd, 0, 0);
}

EXPORT int dup2(int oldfd, int newfd)
{
	return tfd_vfds_changed_after(dup2_fd(oldfd, newfd));
}

static int dup3_fd(int oldfd, int newfd, int flags)
{
	if ((!tfd_marked(oldfd) && !tfd_marked(newfd) && !tfd_sets_has(newfd)) ||
	    tfd_inside || (flags & ~O_CLOEXEC) || oldfd == newfd ||
	    tfd_foreign())
		return plain_dup(oldfd, R(dup3)(oldfd, newfd, flags));
	return tfd_timer_dup3(oldfd, newfd, flags, 1);
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	return tfd_vfds_changed_after(dup3_fd(oldfd, newfd, flags));
}

/* fcntl's third argument is read as a pointer, as glibc itself does: it
 * carries an int as well. */
static int fcntl_fd(int fd, int cmd, void *arg, int is64)
{
	int r;

	if (tfd_marked(fd) && !tfd_inside && !tfd_foreign())
		return tfd_timer_fcntl(fd, cmd, arg, is64);
	r = is64 ? R(fcntl64)(fd, cmd, arg) : R(fcntl)(fd, cmd, arg);
	return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC ? plain_dup(fd, r)
	                                                : r;
}

#define FCNTL_ARG(cmd, arg)                                                  \
	do {                                                                 \
		va_list ap;                                                  \
		va_start(ap, cmd);                                           \
		arg = va_arg(ap, void *);                                    \
		va_end(ap);                                                  \
	} while (0)

EXPORT int fcntl(int fd, int cmd, ...)
{
	void *arg;

	FCNTL_ARG(cmd, arg);
	return fcntl_fd(fd, cmd, arg, 0);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	void *arg;

	FCNTL_ARG(cmd, arg);
	return fcntl_fd(fd, cmd, arg, 1);
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!tfd_marked(fd) || tfd_inside)
		return R(ioctl)(fd, req, arg);
	return tfd_timer_ioctl(fd, req, arg);
}

/* ---- readiness and waits ---- */

static int epoll_ctl_fd(int ep, int op, int fd, struct epoll_event *ev)
{
	if (!tfd_marked(fd) || tfd_inside || !tfd_emulated) {
		if (op != EPOLL_CTL_DEL && !tfd_inside &&
		    unlikely(__atomic_load_n(&tfd_nreg, __ATOMIC_RELAXED)) &&
		    tfd_epoll_set(fd))
			tfd_epoll_held(fd); /* a set of timers in a set */
		return R(epoll_ctl)(ep, op, fd, ev);
	}
	return tfd_timer_epoll_ctl(ep, op, fd, ev);
}

EXPORT int epoll_ctl(int ep, int op, int fd, struct epoll_event *ev)
{
	return tfd_vfds_changed_after(epoll_ctl_fd(ep, op, fd, ev));
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	if (tfd_inside || !tfd_hook_waits())
		return R(poll)(fds, n, timeout);
	return tfd_wait_poll(fds, n, timeout);
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                 const sigset_t *mask)
{
	sigset_t copy;

	mask = tfd_sig_never_blocked(SIG_SETMASK, mask, &copy);
	if (tfd_inside || !tfd_hook_waits())
		return R(ppoll)(fds, n, ts, mask);
	return tfd_wait_ppoll(fds, n, ts, mask);
}

EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout,
                      size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();
	return poll(fds, n, timeout);
}

EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n,
                       const struct timespec *ts, const sigset_t *mask,
                       size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();
	return ppoll(fds, n, ts, mask);
}

EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
                  struct timeval *tv)
{
	if (tfd_inside || !tfd_hook_waits() || nfds < 0)
		return R(select)(nfds, rd, wr, ex, tv);
	return tfd_wait_select(nfds, rd, wr, ex, tv);
}

EXPORT int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
                   const struct timespec *ts, const sigset_t *mask)
{
	sigset_t copy;

	mask = tfd_sig_never_blocked(SIG_SETMASK, mask, &copy);
	if (tfd_inside || !tfd_hook_waits() || nfds < 0)
		return R(pselect)(nfds, rd, wr, ex, ts, mask);
	return tfd_wait_pselect(nfds, rd, wr, ex, ts, mask);
}

/* An epoll wait goes through the library on virtual time, and on real
 * time once a timer of ours is registered in an epoll (it may deliver:
 * waits_epoll.c); VWAIT_BLOCK back, it is the program's call as it made it. */
static int hook_epoll(void)
{
	return !tfd_inside &&
	       (tfd_virt || (tfd_waits_deliver &&
	                     unlikely(__atomic_load_n(&tfd_nreg,
	                                              __ATOMIC_RELAXED))));
}

/* The kernel's own wait on ep, told to epoll.c where waits may deliver
 * (a timer of that set is not covered meanwhile: tfd_epoll_raw). */
#define KERNEL_EPOLL(ep, call)                                          \
	({                                                              \
		int r_, e_, told_ = tfd_waits_deliver && tfd_emulated;  \
		if (told_)                                              \
			tfd_epoll_raw(ep, 1);                           \
		r_ = (call);                                            \
		e_ = errno;                                             \
		if (told_)                                              \
			tfd_epoll_raw(ep, -1);                          \
		errno = e_;                                             \
		r_;                                                     \
	})

EXPORT int epoll_wait(int ep, struct epoll_event *ev, int max, int timeout)
{
	int r = hook_epoll() ? tfd_wait_epoll(ep, ev, max, tfd_ms_ns(timeout),
	                                      NULL)
	                     : VWAIT_BLOCK;

	return r == VWAIT_BLOCK
	               ? KERNEL_EPOLL(ep, R(epoll_wait)(ep, ev, max, timeout))
	               : r;
}

EXPORT int epoll_pwait(int ep, struct epoll_event *ev, int max, int timeout,
                       const sigset_t *mask)
{
	sigset_t copy;
	int r;

	mask = tfd_sig_never_blocked(SIG_SETMASK, mask, &copy);
	r = hook_epoll() ? tfd_wait_epoll(ep, ev, max, tfd_ms_ns(timeout), mask)
	                 : VWAIT_BLOCK;
	return r == VWAIT_BLOCK ? KERNEL_EPOLL(ep, R(epoll_pwait)(ep, ev, max,
	                                                          timeout, mask))
	                        : r;
}

EXPORT int epoll_pwait2(int ep, struct epoll_event *ev, int max,
                        const struct timespec *ts, const sigset_t *mask)
{
	sigset_t copy;
	int r = VWAIT_BLOCK;

	mask = tfd_sig_never_blocked(SIG_SETMASK, mask, &copy);
	if (!LOADED(epoll_pwait2)) {
		errno = ENOSYS;
		return -1;
	}
	if (hook_epoll() && (!ts || tfd_ts_valid(ts))) /* (EINVAL: Linux's) */
		r = tfd_wait_epoll(ep, ev, max, tfd_tsp_ns(ts), mask);
	return r == VWAIT_BLOCK ? KERNEL_EPOLL(ep, R(epoll_pwait2)(ep, ev, max,
	                                                           ts, mask))
	                        : r;
}

/* ---- start ---- */

/* The engine's code on a thread of the program's (fork()'s handlers, the
 * start of a thread of ours) runs inside (host.h, enter), and the service
 * thread the handlers start in a child is the library's; the reaper's
 * leave(0) runs the program's exit() as the program's.  The flag alone:
 * a child's thread has no slot of its own on virtual time until fork() returns
 * (tree.c), and the handlers there start nothing. */
static int host_enter(void)
{
	int was = tfd_inside;

	tfd_inside = 1;
	return was;
}

static void host_leave(int was)
{
	tfd_inside = was;
	if (!was && unlikely(tfd_ndeferred))
		tfd_undefer(); /* what came meanwhile (in a child: none is
		                * pending, and the mask is given back) */
}


/* The clock the engine reads: the one the program's calls reach, as for
 * libtfd's engine (a definition of the program's own comes first), past
 * this library's wrapper. */
static int (*engine_clock(void))(clockid_t, struct timespec *)
{
	void *p = dlsym(RTLD_DEFAULT, "clock_gettime");
	Dl_info in, ours;

	if (p && dladdr(p, &in) && dladdr((void *)engine_clock, &ours) &&
	    in.dli_fbase != ours.dli_fbase)
		return (int (*)(clockid_t, struct timespec *))p;
	return tfd_next.clock_gettime;
}

/* The backend is chosen now (TFD_BACKEND), so that the virtual clocks
 * start with the program.  What the preload does on it follows from its
 * operations: a native backend's timers are kernel timerfds already. */
static void init_once(void)
{
	int was;

	__atomic_store_n(&tfd_loaded, 1, __ATOMIC_RELEASE);
	tfd_next_load();
	tfd_host_set(&(struct tfd_host){
		.enter = host_enter,
		.leave = host_leave,
		.read = tfd_sys_read,
		.poll = tfd_sys_poll,
		.nowait = tfd_read_nowait,
		.clock_gettime = engine_clock(),
	});
	tfd_numbers_init();
	tfd_tree_init();
	tfd_trace_init();
	was = tfd_enter();
	tfd_be = tfd_current_backend();
	tfd_leave(was);
	tfd_emulated = !tfd_be->native;
	tfd_virt = tfd_be->virtual_move != NULL;
	{
		const char *d = secure_getenv("TFD_DELIVERY");

		tfd_waits_deliver = tfd_be->ready && !tfd_virt &&
		                    !(d && !strcmp(d, "post"));
	}
	tfd_vfork_init();
	if (tfd_virt)
		tfd_join_domain(secure_getenv("TFD_DOMAIN"));
	tfd_rawsys_init(); /* needs tfd_virt */
}

/* (errno kept: it may be the first call of a clock_gettime() that
 * succeeds.) */
void tfd_preload_start(void)
{
	int e = errno;

	pthread_once(&init, init_once);
	errno = e;
}

/* The C library calls constructors with main()'s arguments and the
 * environment as the kernel gave it. */
__attribute__((constructor)) static void preload_init(int argc, char **argv,
                                                      char **envp)
{
	(void)argc;
	(void)argv;
	pthread_once(&init, init_once);
	tfd_gosys_init(envp);
}
