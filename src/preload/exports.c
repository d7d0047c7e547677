/* SPDX-License-Identifier: MIT */
/*
 * exports.c - libtfd-preload.so's exported functions: glibc's names, with
 * glibc's prototypes.  Each decides, with one look at the table of
 * numbers, whether the call concerns a timer of ours (or virtual time),
 * and hands it on: to fdops.c, waits.c, virtual time (vtime.h), or
 * straight to the next definition.  See tfd-preload(7).
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
	pthread_once(&init, init_once); /* another constructor may come first */
	return tfd_timer_create(clockid, flags);
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
	if (!tfd_marked(fd) || tfd_inside || tfd_foreign()) {
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
	if (tfd_inside || !tfd_nmarked || tfd_foreign())
		return R(close_range)(first, last, flags);
	return tfd_range_close(first, last, flags);
}

EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	return tfd_vfds_changed_after(close_range_fd(first, last, flags));
}

EXPORT void closefrom(int lowfd)
{
	if (!tfd_inside && tfd_nmarked && !tfd_foreign())
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
	if ((!tfd_marked(oldfd) && !tfd_marked(newfd)) || tfd_inside ||
	    tfd_foreign())
		return plain_dup(oldfd, R(dup2)(oldfd, newfd));
	return tfd_timer_dup3(oldfd, newfd, 0, 0);
}

EXPORT int dup2(int oldfd, int newfd)
{
	return tfd_vfds_changed_after(dup2_fd(oldfd, newfd));
}

static int dup3_fd(int oldfd, int newfd, int flags)
{
	if ((!tfd_marked(oldfd) && !tfd_marked(newfd)) || tfd_inside ||
	    (flags & ~O_CLOEXEC) || oldfd == newfd || tfd_foreign())
		return plain_dup(oldfd, R(dup3)(oldfd, newfd, flags));
	return tfd_timer_dup3(oldfd, newfd, flags, 1);
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	return tfd_vfds_changed_after(dup3_fd(oldfd, newfd, flags));
}

/* fcntl's third argument is read as a pointer, as glibc itself does: it
 * carries an int as well. */
EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!tfd_marked(fd) || tfd_inside || tfd_foreign()) {
		int r = R(fcntl)(fd, cmd, arg);

		return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC ?
		       plain_dup(fd, r) : r;
	}
	return tfd_timer_fcntl(fd, cmd, arg, 0);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!tfd_marked(fd) || tfd_inside || tfd_foreign()) {
		int r = R(fcntl64)(fd, cmd, arg);

		return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC ?
		       plain_dup(fd, r) : r;
	}
	return tfd_timer_fcntl(fd, cmd, arg, 1);
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
 * waits.c); VWAIT_BLOCK back, it is the program's call as it made it. */
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

/* ---- sleeps and clocks (virtual time only) ---- */

EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	int64_t left = 0;
	int e;

	if (!tfd_virt || tfd_inside || !req || !tfd_ts_valid(req))
		return R(nanosleep)(req, rem);
	e = tfd_dom_sleep(tfd_ts_to_ns(req), &left);
	if (e == VWAIT_BLOCK)
		return R(nanosleep)(req, rem);
	if (e && rem)
		*rem = tfd_ns_to_ts(left);
	errno = e ? e : errno;
	return e ? -1 : 0;
}

EXPORT int clock_nanosleep(clockid_t c, int flags, const struct timespec *req,
                           struct timespec *rem)
{
	clockid_t base = tfd_dom_wait_base(c); /* (else the kernel's error) */
	int64_t left = 0, ns;
	int e;

	if (!tfd_virt || tfd_inside || base < 0 || !req || !tfd_ts_valid(req))
		return R(clock_nanosleep)(c, flags, req, rem);
	ns = tfd_ts_to_ns(req);
	e = (flags & TIMER_ABSTIME)
	            ? tfd_dom_sleep_until(tfd_dom_clock_now(CLOCK_MONOTONIC) +
	                                          ns - tfd_dom_clock_now(c),
	                                  NULL)
	            : tfd_dom_sleep(ns, &left);
	if (e == VWAIT_BLOCK)
		return R(clock_nanosleep)(c, flags & ~TIMER_ABSTIME, req, rem);
	if (e && rem && !(flags & TIMER_ABSTIME))
		*rem = tfd_ns_to_ts(left);
	return e;
}

EXPORT unsigned sleep(unsigned s)
{
	int64_t left = 0;
	int e;

	if (!tfd_virt || tfd_inside)
		return R(sleep)(s);
	e = tfd_dom_sleep((int64_t)s * TFD_NSEC, &left);
	if (e == VWAIT_BLOCK)
		return R(sleep)(s);
	return e ? (unsigned)((left + TFD_NSEC - 1) / TFD_NSEC) : 0;
}

EXPORT int usleep(useconds_t us)
{
	int64_t left;
	int e;

	if (!tfd_virt || tfd_inside)
		return R(usleep)(us);
	e = tfd_dom_sleep((int64_t)us * 1000, &left);
	if (e == VWAIT_BLOCK)
		return R(usleep)(us);
	if (e)
		errno = e;
	return e ? -1 : 0;
}

EXPORT int clock_gettime(clockid_t c, struct timespec *ts)
{
	clockid_t base;

	if (!tfd_virt || tfd_inside || (base = tfd_dom_clock_base(c)) < 0 ||
	    tfd_null(ts))
		return R(clock_gettime)(c, ts); /* NULL: as libc answers (a fault) */
	*ts = tfd_ns_to_ts(tfd_dom_read_clock(c));
	return 0;
}

/* glibc's prototype says tv is never NULL; its code allows it, and so
 * do we: the next definition is called through a pointer without that
 * attribute. */
static int next_gettimeofday(struct timeval *tv, void *tz)
{
	int (*next)(struct timeval *, void *) = &R(gettimeofday);

	return next(tv, tz);
}

EXPORT int gettimeofday(struct timeval *tv, void *tz)
{
	if (!tfd_virt || tfd_inside || tfd_null(tv)) /* NULL: only the zone */
		return next_gettimeofday(tv, tz);
	if (tz && next_gettimeofday(NULL, tz) < 0) /* the zone, as libc has
	                                             * it */
		return -1;
	*tv = tfd_ns_to_tv(tfd_dom_read_clock(CLOCK_REALTIME));
	return 0;
}

EXPORT time_t time(time_t *t)
{
	time_t now;

	if (!tfd_virt || tfd_inside)
		return R(time)(t);
	now = (time_t)(tfd_dom_read_clock(CLOCK_REALTIME) / TFD_NSEC);
	if (t)
		*t = now;
	return now;
}

/* ---- threads the library starts run inside it ---- */

/* What a thread of ours starts with, handed over in one of a few places
 * of our own: not from the program's malloc(), whose first call in a new
 * thread gives the thread an arena of its own (64 MiB of address space
 * each, in glibc), and which a single-threaded program may have made
 * unsafe for other threads.  The new thread takes its copy and lets the
 * place go; with every place taken (more of ours starting at once than
 * there are places), the creator waits for one. */
struct start {
	void *(*fn)(void *);
	void *arg;
	int taken; /* [A] */
};

#define NSTART 8
static struct start starts[NSTART];

static struct start *start_place(void)
{
	unsigned i;

	for (;;) {
		for (i = 0; i < NSTART; i++)
			if (!__atomic_exchange_n(&starts[i].taken, 1,
			                         __ATOMIC_ACQUIRE))
				return &starts[i];
		sched_yield();
	}
}

/* In a child of fork(): only the thread that forked is there, and no
 * thread of ours is about to start; a place taken for one that the
 * parent was starting would be lost for good. */
void tfd_start_places_forked(void)
{
	unsigned i;

	for (i = 0; i < NSTART; i++)
		__atomic_store_n(&starts[i].taken, 0, __ATOMIC_RELAXED);
}

static void *start_inside(void *p)
{
	struct start *place = p, s = *place;

	__atomic_store_n(&place->taken, 0, __ATOMIC_RELEASE);
	tfd_inside = 1;
	return s.fn(s.arg);
}

/* glibc answers timespec_get() inside itself, without clock_gettime()'s
 * symbol: on virtual time it reads the virtual CLOCK_REALTIME here. */
EXPORT int timespec_get(struct timespec *ts, int base)
{
	if (!tfd_virt || tfd_inside || base != TIME_UTC)
		return LOADED(timespec_get) ? R(timespec_get)(ts, base) : 0;
	*ts = tfd_ns_to_ts(tfd_dom_read_clock(CLOCK_REALTIME));
	return base;
}

EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg)
{
	struct start *s;
	sigset_t all, old;
	int e;

	if (!tfd_inside)
		return tfd_dom ? tfd_tree_thread(th, attr, fn, arg)
		               : TFD_PROGRAM_SLACK(R(pthread_create)(th, attr, fn,
		                                                      arg));
	s = start_place();
	s->fn = fn;
	s->arg = arg;
	/* Born with every signal blocked: the program's are for its own
	 * threads (one it blocked everywhere was delivered to a new thread
	 * of ours before that thread could block it, and killed it). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = R(pthread_create)(th, attr, start_inside, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e)
		__atomic_store_n(&s->taken, 0, __ATOMIC_RELEASE);
	return e;
}

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

/* ---- timers that signal (virtual time only) ---- */

EXPORT int timer_create(clockid_t c, struct sigevent *ev, timer_t *id)
{
	int r;

	if (!tfd_dom || tfd_inside ||
	    (r = tfd_sigtimer_create(c, ev, id)) == TFD_PASS)
		return R(timer_create)(c, ev, id);
	return r;
}

EXPORT int timer_settime(timer_t id, int flags, const struct itimerspec *nv,
                         struct itimerspec *old)
{
	if (tfd_inside || !tfd_sigtimer_ours(id))
		return R(timer_settime)(id, flags, nv, old);
	return tfd_sigtimer_settime(id, flags, nv, old);
}

EXPORT int timer_gettime(timer_t id, struct itimerspec *cur)
{
	if (tfd_inside || !tfd_sigtimer_ours(id))
		return R(timer_gettime)(id, cur);
	return tfd_sigtimer_gettime(id, cur);
}

EXPORT int timer_getoverrun(timer_t id)
{
	if (tfd_inside || !tfd_sigtimer_ours(id))
		return R(timer_getoverrun)(id);
	return tfd_sigtimer_getoverrun(id);
}

EXPORT int timer_delete(timer_t id)
{
	if (tfd_inside || !tfd_sigtimer_ours(id))
		return R(timer_delete)(id);
	return tfd_sigtimer_delete(id);
}

EXPORT unsigned alarm(unsigned s)
{
	if (!tfd_dom || tfd_inside)
		return R(alarm)(s);
	return tfd_sigtimer_alarm(s);
}

EXPORT int setitimer(__itimer_which_t which, const struct itimerval *nv,
                     struct itimerval *old)
{
	if (!tfd_dom || tfd_inside || which != ITIMER_REAL)
		return R(setitimer)(which, nv, old);
	return tfd_sigtimer_setitimer(nv, old);
}

EXPORT int getitimer(__itimer_which_t which, struct itimerval *cur)
{
	if (!tfd_dom || tfd_inside || which != ITIMER_REAL || !cur)
		return R(getitimer)(which, cur);
	return tfd_sigtimer_getitimer(cur);
}

/* ---- processes of a virtual-time domain ---- */

/* The first thread may end alone; its process goes on (tree.c). */
EXPORT void pthread_exit(void *ret)
{
	tfd_dom_first_ends();
	R(pthread_exit)(ret);
	abort(); /* not reached: the next definition does not return */
}

EXPORT pid_t fork(void)
{
	if (!tfd_dom || tfd_inside)
		return TFD_PROGRAM_SLACK(R(fork)());
	return tfd_tree_fork();
}

/*
 * vfork(): on virtual time, a fork() of ours, which takes the child's slot
 * before it exists; else the C library's.  A shell (dash) starts each
 * command with vfork(): the child ran without a slot from its exec until
 * its program loaded the library, and time moved meanwhile whenever every
 * other thread waited.  A child of vfork() may only exec or _exit, which
 * a forked one does too.  Either way it notes first that a child may run
 * on our memory (tfd_vm_children: numbers.c), and __vfork() is the same.
 * No C function can call the real vfork() and return to its caller (the
 * child would return through the frame the parent returns through later),
 * hence the jump, on x86-64; elsewhere vfork() is not caught.  Nor in a
 * build with ThreadSanitizer: there a fork's child in a program built
 * without it (a shell) starts the sanitizer's thread through our
 * pthread_create(), unseen by the sanitizer, and crashes (a shell's
 * subshell does so already); the C library's vfork() runs no fork
 * handler.
 */
#ifdef TFD_VFORK
pid_t tfd_vfork_fork(void) __attribute__((used));
pid_t tfd_vfork_early(void) __attribute__((used));
pid_t (*tfd_vfork_next)(void) __attribute__((used)) = tfd_vfork_early;

pid_t tfd_vfork_fork(void)
{
	if (tfd_inside)
		return R(fork)();
	return tfd_tree_fork();
}

/* Before our start: no C library's vfork() is known yet; a fork is one. */
pid_t tfd_vfork_early(void)
{
	return R(fork)();
}

__asm__(".text\n"
        ".globl vfork\n"
        ".type vfork, @function\n"
        ".globl __vfork\n"
        ".type __vfork, @function\n"
        "vfork:\n"
        "__vfork:\n"
#ifdef __CET__
        "	endbr64\n"
#endif
        "	movl $1, tfd_vm_children(%rip)\n"
        "	cmpq $0, tfd_dom(%rip)\n"
        "	jne tfd_vfork_fork\n"
        "	jmp *tfd_vfork_next(%rip)\n"
        ".size vfork, .-vfork\n"
        ".size __vfork, .-__vfork\n");
#endif

/* clone(): a child on our memory (CLONE_VM: a thread made by hand, or a
 * vfork done the long way) may close numbers in a table of its own; from
 * now on close and dup ask whose table it is (tfd_foreign).  Four
 * arguments and three more that the C library's reads whatever the
 * caller passed (past the caller's on its stack, which AddressSanitizer
 * would take for an error).  __clone() is its other name. */
static __attribute__((no_sanitize_address)) int
clone_v(int (*fn)(void *), void *stack, int flags, void *arg, va_list ap)
{
	void *ptid = va_arg(ap, void *), *tls = va_arg(ap, void *);
	void *ctid = va_arg(ap, void *);

	if (flags & CLONE_VM)
		tfd_vm_shared();
	return R(clone)(fn, stack, flags, arg, ptid, tls, ctid);
}

EXPORT __attribute__((no_sanitize_address)) int
clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = clone_v(fn, stack, flags, arg, ap);
	va_end(ap);
	return r;
}

int __clone(int (*fn)(void *), void *stack, int flags, void *arg, ...);
EXPORT __attribute__((no_sanitize_address)) int
__clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = clone_v(fn, stack, flags, arg, ap);
	va_end(ap);
	return r;
}

/* system() and popen() start their child where we cannot name it. */
EXPORT int system(const char *cmd)
{
	if (!tfd_dom || tfd_inside || !cmd)
		return TFD_PROGRAM_SLACK(R(system)(cmd));
	return tfd_tree_system(cmd);
}

EXPORT FILE *popen(const char *cmd, const char *mode)
{
	if (!tfd_dom || tfd_inside)
		return TFD_PROGRAM_SLACK(R(popen)(cmd, mode));
	return tfd_tree_popen(cmd, mode);
}

EXPORT int posix_spawn(pid_t *pid, const char *path,
                       const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *at, char *const argv[],
                       char *const envp[])
{
	int r;

	if (!tfd_dom || tfd_inside)
		return TFD_PROGRAM_SLACK(R(posix_spawn)(pid, path, fa, at,
		                                        argv, envp));
	r = tfd_tree_spawn(0, pid, path, fa, at, argv, envp);
	if (r == 0 && pid)
		tfd_exec_say_static(path, 0, *pid);
	return r;
}

EXPORT int posix_spawnp(pid_t *pid, const char *file,
                        const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *at, char *const argv[],
                        char *const envp[])
{
	int r;

	if (!tfd_dom || tfd_inside)
		return TFD_PROGRAM_SLACK(R(posix_spawnp)(pid, file, fa, at,
		                                         argv, envp));
	r = tfd_tree_spawn(1, pid, file, fa, at, argv, envp);
	if (r == 0 && pid)
		tfd_exec_say_static(file, 1, *pid);
	return r;
}

/* ---- start ---- */

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
#ifdef TFD_VFORK
	{
		void *v = dlsym(RTLD_NEXT, "vfork");

		if (v)
			tfd_vfork_next = (pid_t(*)(void))v;
	}
#endif
	if (tfd_virt)
		tfd_join_domain(secure_getenv("TFD_DOMAIN"));
	tfd_rawsys_init(); /* needs tfd_virt */
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
