/* SPDX-License-Identifier: MIT */
/*
 * preload.h - the parts of libtfd-preload.so (the drop-in) and what they
 * share.  The drop-in intercepts the C library's calls, decides whether a
 * call is ours (a timer's number, a wait on one, a clock or a wait on
 * virtual time) and hands it on: to the library, or to virtual time
 * (src/vtime/vtime.h, its only interface), or to the next definition.
 *
 *   exports.c  the exported wrappers: a few lines each, deciding whether a
 *              call concerns a timer and handing it on
 *   exports_waits.c  the exported wrappers of the waits on virtual time
 *   exports_api.c  the library's own calls (src/api.h) of a program linked
 *              with libtfd.so, taken in as the system calls are
 *   exports_signals.c  sigaction(), signal() and the C library's other
 *              ways to set a handler
 *   exports_syscall.c  syscall(): the raw calls of virtual time's (a
 *              clock read, a sleep, a futex wait with a timeout)
 *   exports_time.c  sleeps, clock reads and timers that signal
 *              (timer_create, alarm, setitimer) on virtual time
 *   exports_procs.c  pthread_create, fork, vfork, clone, pthread_exit,
 *              system, popen: threads and processes the library sees
 *   exports_exec.c  the exec family: on virtual time, a statically linked
 *              program started in the tree is said (elf.c: what a
 *              program's ELF file says, shared with tfd exec)
 *   next.c     the table of next definitions (dlsym RTLD_NEXT)
 *   numbers.c  the table of numbers that name our timers; which process
 *              owns it (a vfork child does not)
 *   fdops.c    read, write, close, dup, fcntl, ioctl on a timer
 *   epoll.c    epoll registrations of timers (writability, EPOLLET)
 *   waits.c    poll, select, epoll waits on timers: what they share
 *              (waits.h); waits_poll.c, waits_select.c, waits_epoll.c
 *   signals.c  the program's signal handlers, run through ours:
 *              deferred while the thread is inside, counted (virtual time)
 *   sigtimers.c  timer_create & co, alarm, setitimer on virtual time
 *   timedwaits.c  timed waits on conditions, semaphores, locks, joins,
 *              as waits of virtual time in slices
 *   iowaits.c  sockets, message queues, signal waits on virtual time
 *   tree.c     threads and processes created on virtual time: their
 *              slots taken before they start (vtime.h)
 *   trace.c    TFD_TRACE
 *   vhost.c    what virtual time asks of the preload (vtime.h,
 *              struct tfd_dom_host), given as the process joins
 *   rawsys.c   raw timerfd system calls (TFD_RAW_SYSCALLS): a seccomp
 *              filter, a SIGSYS handler, the program's SIGSYS action
 *   gosys.c    a Go program on virtual time: the runtime's own clock
 *              reads and waits trap (ud2, SIGILL) to syscall()'s
 *
 * The library is reached through the public API, the operations of the
 * backend in use (backend.h) and the hooks backend.h gives a host (fork's
 * handlers, reads that do not block).  Its own calls land in these
 * wrappers too: a thread-local flag, set while a call of the library runs
 * and for good in the threads it starts, sends them straight through.
 * No handler of the program's runs on a thread while the flag is set: one
 * that comes then is deferred until the thread leaves (signals.c), so
 * none sees the flag set or a lock of ours held, and none can jump out
 * and leave them so.  Where a call of ours blocks (the read(2) a blocking
 * read waits in, poll and the like, the domain's waits), the thread is
 * outside, as in a system call of Linux's: a handler runs there and may
 * jump out.
 *
 * Returns, one convention per layer:
 *   - an exported wrapper returns what the C library's call returns, as
 *     it does: -1 with errno for most, an errno value for pthread_*() and
 *     posix_spawn*(), with errno untouched then;
 *   - a function here that carries out a call (fdops.c's tfd_timer_*,
 *     waits.c, sigtimers.c, timedwaits.c, iowaits.c, tree.c) returns in
 *     that call's convention, so that its wrapper hands the result on
 *     unchanged, or TFD_PASS: not ours after all, the wrapper calls the
 *     next definition;
 *   - rawsys.c answers a trapped system call as the kernel does: the
 *     result, or -errno in the return register;
 *   - virtual time says what it returns in vtime.h (VWAIT_BLOCK: wait
 *     for real).
 *
 * Locks: four of the drop-in's own (sigtimers.c's, epoll.c's,
 * signals.c's, rawsys.c's prog_lock) and virtual time's three (vtime.h),
 * each taken in the one order of src/lockorder.h, where the library's are
 * too; each is declared beside its definition with TFD_LOCK_RANK, and the
 * sanitizer builds check the order.
 */
#ifndef TFD_PRELOAD_H
#define TFD_PRELOAD_H

#undef _FORTIFY_SOURCE /* we define read() and poll() ourselves */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tfd.h"
#include "api.h"

#include "backend.h"
#include "sets.h"
#include "host.h"
#include "core/time.h"
#include "vtime/vtime.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <mqueue.h>
#include <semaphore.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
/* Not ours after all: the wrapper calls the next definition. */
#define TFD_PASS (-2)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* ---- next.c ---- */

/* Every function the preload exports, by name: its next definition (the
 * C library's) is a field of struct tfd_next, typed from the C library's
 * own prototype, and next.c looks each up once.  A new wrapper adds its
 * name here and its definition in an exports file. */
#define TFD_NEXT(X) \
	X(timerfd_create) X(timerfd_settime) X(timerfd_gettime) X(read) X(readv) \
	X(write) X(writev) X(close) X(close_range) X(closefrom) X(dup) X(dup2) \
	X(dup3) X(fcntl) X(fcntl64) X(ioctl) X(epoll_ctl) X(poll) X(ppoll) \
	X(select) X(pselect) X(epoll_wait) X(epoll_pwait) X(epoll_pwait2) \
	X(nanosleep) X(clock_nanosleep) X(sleep) X(usleep) X(clock_gettime) \
	X(gettimeofday) X(time) X(pthread_create) X(fork) X(system) X(popen) \
	X(prctl) \
	X(pthread_exit) X(pthread_cond_timedwait) X(pthread_cond_clockwait) \
	X(pthread_cond_wait) X(sem_wait) X(pthread_join) \
	X(pthread_cond_signal) X(pthread_cond_broadcast) X(sem_post) \
	X(pthread_cancel) X(kill) \
	X(killpg) X(tgkill) X(sigqueue) X(pthread_sigqueue) \
	X(sem_timedwait) X(sem_clockwait) X(pthread_mutex_timedlock) \
	X(pthread_mutex_clocklock) X(pthread_rwlock_timedrdlock) \
	X(pthread_rwlock_timedwrlock) X(pthread_rwlock_clockrdlock) \
	X(pthread_rwlock_clockwrlock) X(pthread_timedjoin_np) \
	X(pthread_clockjoin_np) X(recvfrom) X(recvmsg) X(sendto) X(sendmsg) \
	X(accept4) X(bind) X(listen) X(connect) X(mq_timedreceive) \
	X(mq_timedsend) X(sigtimedwait) \
	X(sigwaitinfo) X(sigwait) X(timespec_get) X(sigsuspend) X(pause) \
	X(timer_create) X(timer_settime) X(timer_gettime) X(timer_getoverrun) \
	X(timer_delete) X(alarm) X(setitimer) X(getitimer) X(posix_spawn) \
	X(posix_spawnp) X(syscall) X(sigprocmask) X(pthread_sigmask) X(clone) \
	X(execve) X(execv) X(execvp) X(execvpe) X(fexecve)

#define TFD_NEXT_FIELD(f) __typeof__(&f) f;
struct tfd_next {
	TFD_NEXT(TFD_NEXT_FIELD)
};

extern struct tfd_next tfd_next;
void tfd_next_load(void);
/* The read(2) a blocking tfd_read waits in (host.h, read). */
ssize_t tfd_sys_read(int fd, void *buf, size_t n);
int tfd_sys_poll(struct pollfd *p, nfds_t n, int ms);

/* Every wrapper names its next definition through R(): resolved by the
 * constructor, or here if another library's constructor calls first. */
#define R(f) (*(unlikely(!tfd_next.f) ? (tfd_next_load(), tfd_next.f) \
                                     : tfd_next.f))
/* A function libc may lack (closefrom, close_range, epoll_pwait2). */
#define LOADED(f) (tfd_next_load(), tfd_next.f != NULL)

/* ---- the state every part reads ---- */

/* Set while the library runs on this thread (and for good in its own
 * threads): its calls go straight through, and the program's handlers
 * wait (signals.c). */
extern __thread int tfd_inside __attribute__((tls_model("initial-exec")));

/* On a virtual-time domain, this thread is counted as running while it
 * is inside the library (vtime.h: tfd_dom_inlib), and is not cancelled
 * there (a cancellation point of libc's that the domain's code reaches,
 * a poll(2) with timeout 0, would end it counted as running for good). */

/* Signals that came while the thread was inside, to be let through as it
 * leaves (signals.c): nonzero if any. */
extern __thread int tfd_ndeferred __attribute__((tls_model("initial-exec")));
void tfd_undefer(void);

/* p == NULL, for a pointer that the C library's prototype declares never
 * NULL where the call allows it (the kernel answers EFAULT): the test is
 * made on a copy the compiler knows nothing of, so that it neither takes
 * the test out nor warns that it is always false. */
static inline int tfd_null(const void *p)
{
	__asm__("" : "+r"(p));
	return p == NULL;
}

/* Inside and back: one thread-local store each way on the engine; the
 * outermost leave lets deferred signals through, a system call made only
 * when a signal came meanwhile. */
static inline int tfd_enter(void)
{
	int was = tfd_inside;

	tfd_inside = 1;
	if (!was && unlikely(tfd_dom != NULL))
		tfd_dom_inlib(1);
	return was;
}

static inline void tfd_leave(int was)
{
	if (!was && unlikely(tfd_dom != NULL))
		tfd_dom_inlib(-1);
	tfd_inside = was;
	if (!was && unlikely(tfd_ndeferred))
		tfd_undefer();
}

/* A lock of the drop-in's own, held only inside (tfd_enter): no handler of
 * the program's runs on a thread that holds it (none calls us and waits
 * for it, none jumps out and leaves it held).  Not recursive, so the
 * state to give back is the thread's alone.  TFD_LOCK_INSIDE(m) defines
 * lock_in() and lock_out() for mutex m in the file that has it. */
#define TFD_LOCK_INSIDE(m)                                                   \
	static __thread int m##_was __attribute__((tls_model("initial-exec"))); \
	static void lock_in(void)                                            \
	{                                                                    \
		int was = tfd_enter();                                       \
		pthread_mutex_lock(&m);                                      \
		m##_was = was;                                               \
	}                                                                    \
	static void lock_out(void)                                           \
	{                                                                    \
		int was = m##_was;                                           \
		pthread_mutex_unlock(&m);                                    \
		tfd_leave(was);                                              \
	}

/* What the backend chosen at load is, from its operations: */
extern const struct tfd_backend *tfd_be; /* the backend */
extern int tfd_emulated; /* its timers are not kernel timerfds (.native 0):
                          * write, writability, EPOLLET, waits to hold */
/* The preload's own initialization has begun: until then (a sanitizer's
 * runtime starting, a library's constructor before ours) sigaction() and
 * signal() go straight to the C library's (exports_signals.c). */
extern int tfd_loaded;
/* The preload's initialization, once (exports.c): before any call of the
 * program's that needs it, whichever constructor runs first. */
void tfd_preload_start(void);
/* The same where the preload has not begun yet: the C library calls the
 * constructors of the program's libraries before the preload's, and one
 * may read the clock, sleep or start a thread (on virtual time, they
 * must be the domain's). */
static inline void tfd_started(void)
{
	if (__builtin_expect(!__atomic_load_n(&tfd_loaded, __ATOMIC_RELAXED),
	                     0))
		tfd_preload_start();
}
extern int tfd_virt;     /* it has virtual clocks (virtual_move) */
/* Waits on real time deliver their timers themselves (waits.c; not with
 * TFD_DELIVERY=post). */
extern int tfd_waits_deliver;

/* ---- numbers.c ---- */

#define MARK_MAX (1 << 20) /* numbers from here up are never timers */
extern unsigned char tfd_mark[MARK_MAX];
extern int tfd_nmarked;  /* marked numbers (the waits' fast path) */
extern int tfd_hiwater;  /* no mark at or above */

static inline int tfd_marked(int fd)
{
	return (unsigned)fd < MARK_MAX &&
	       __atomic_load_n(&tfd_mark[fd], __ATOMIC_RELAXED);
}

/* The program's numbers closed or replaced, or a set's registrations
 * changed: on virtual time, what the waits found of an epoll set is
 * looked at again (waits_epoll.c, epoll_outside).  Told after the call (a wait
 * that looks meanwhile keeps nothing of what it saw).  The library's own
 * calls (inside) touch no set of the program's. */
static inline void tfd_vfds_changed(void)
{
	if (unlikely(tfd_virt) && !tfd_inside)
		tfd_dom_fds_changed();
}

static inline int tfd_vfds_changed_after(int r)
{
	tfd_vfds_changed();
	return r;
}

void tfd_set_mark(int fd);
void tfd_clear_mark(int fd);
int tfd_adopt(int fd);          /* a number tfd_create() returned */
int tfd_still_timer(int fd);    /* forget a number closed behind our back */
int tfd_share(int oldfd, int newfd);
void tfd_release_number(int fd);
/* vfork() is ours (exports_procs.c), on x86-64 and not under ThreadSanitizer:
 * there the C library's runs unseen. */
#if defined(__x86_64__) && !defined(TFD_TSAN)
#define TFD_VFORK 1
#endif
/* 1 in a vfork() child: the table is the parent's memory, not ours.
 * Such a child exists only after a vfork() or a clone(CLONE_VM) made
 * through us (tfd_vm_shared; without our vfork(), from the start): until
 * then no system call (getpid) is made to tell. */
extern int tfd_vm_children;
int tfd_foreign_child(void);
static inline int tfd_foreign(void)
{
	return __builtin_expect(
		       __atomic_load_n(&tfd_vm_children, __ATOMIC_RELAXED), 0) &&
	       tfd_foreign_child();
}
void tfd_vm_shared(void);
void tfd_numbers_init(void);

/* Waits must look at the descriptors (virtual time, or readiness to
 * correct); else they go straight through. */
static inline int tfd_hook_waits(void)
{
	return tfd_virt ||
	       (tfd_emulated && __atomic_load_n(&tfd_nmarked, __ATOMIC_RELAXED));
}

/* ---- vhost.c ---- */

/* Join the virtual-time domain named (TFD_DOMAIN), or make our own
 * (vtime.h, tfd_dom_join).  0, or -1: none. */
int tfd_join_domain(const char *name);

/* ---- fdops.c ---- */

ssize_t tfd_timer_read(int fd, void *buf, size_t n);
ssize_t tfd_timer_read_as(int fd, void *buf, size_t n, int door);
/* Around a read of the engine's on virtual time: one with nothing to
 * count fails EAGAIN (host.h, nowait), the caller waits in the domain. */
int tfd_read_nowait_begin(void);
void tfd_read_nowait_end(int was);
ssize_t tfd_timer_readv(int fd, const struct iovec *iov, int cnt);
int tfd_read_nowait(void); /* host.h, nowait */
ssize_t tfd_timer_write(int fd, size_t n);
int tfd_timer_close(int fd);
int tfd_inside_close(int fd);
int tfd_range_close(unsigned first, unsigned last, int flags);
void tfd_from_close(int lowfd);
int tfd_dup_result(int oldfd, int newfd, const char *call, int arg);
int tfd_timer_dup3(int oldfd, int newfd, int flags, int three);
struct msghdr;
void tfd_timers_received(struct msghdr *msg); /* SCM_RIGHTS */
void tfd_timer_mode(int fd, int nonblock); /* its O_NONBLOCK: 1, 0, -1 */
int tfd_timer_fcntl(int fd, int cmd, void *arg, int is64);
int tfd_timer_ioctl(int fd, unsigned long req, void *arg);
int tfd_timer_settime(int fd, int flags, const struct itimerspec *nv,
                      struct itimerspec *old);
int tfd_timer_gettime(int fd, struct itimerspec *cur);
int tfd_timer_create(int clockid, int flags, int kernel);

/* ---- epoll.c ---- */

int tfd_timer_epoll_ctl(int ep, int op, int fd, struct epoll_event *ev);
void tfd_epoll_consumed(int fd); /* fd's count was read or reset */
int tfd_epoll_set_begin(int fd); /* around a settime of fd: */
void tfd_epoll_set_end(int held); /* ... what set_begin returned */
void tfd_epoll_closed(int fd);   /* fd (a timer or an epoll) was closed */
void tfd_epoll_duped(int ep, int to); /* to names ep's epoll set too */
void tfd_epoll_raw(int ep, int d); /* a wait of the kernel's on ep: d 1 as
                                    * it begins, -1 as it ends */
void tfd_epoll_held(int ep);       /* ep is in a set, or polled */
int tfd_epoll_deliver(int ep, struct epoll_event *ev, int room,
                      int64_t *next, int asleep); /* waits_epoll.c */
void tfd_epoll_awake(void);

/* ---- slack.c ---- */
void tfd_slack_fine(void);   /* this thread's timer slack 1 ns, for good */
int tfd_slack_program(void); /* the program's back in effect: 1 if it was
                              * not (tfd_slack_fine() after, to take it) */
/* call, with the program's slack in effect in this thread. */
#define TFD_PROGRAM_SLACK(call)                                         \
	({                                                              \
		int ours_ = tfd_slack_program();                        \
		__typeof__(call) r_ = (call);                           \
		int e_ = errno;                                         \
		if (ours_)                                              \
			tfd_slack_fine();                               \
		errno = e_;                                             \
		r_;                                                     \
	})
void tfd_epoll_forked(void);     /* in a child of fork(): the lock anew */
void tfd_epoll_fork_parent(void); /* in the parent, after fork() */
int tfd_epoll_timers(int ep, int *fds, int max); /* registered in ep */
int tfd_epoll_set(int fd);       /* fd may be an epoll set in the table */
extern int tfd_nreg;             /* registrations of timers kept */

/* ---- waits.c, waits_poll.c, waits_select.c, waits_epoll.c ---- */

int tfd_wait_poll(struct pollfd *fds, nfds_t n, int timeout);
int tfd_wait_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                   const sigset_t *mask);
int tfd_wait_select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
                    struct timeval *tv);
int tfd_wait_pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
                     const struct timespec *ts, const sigset_t *mask);
int tfd_wait_epoll(int ep, struct epoll_event *ev, int max, int64_t ns,
                   const sigset_t *mask);
int64_t tfd_ms_ns(int ms);
int64_t tfd_tsp_ns(const struct timespec *ts);
/* The system's CLOCK_MONOTONIC (the C library's, not the program's:
 * virtual on virtual time), in ns. */
int64_t tfd_real_mono(void);

/* ---- signals.c ---- */

/* The program's handlers run through ours, which count them (on a
 * virtual-time domain: tfd_counting_signals). */
extern int tfd_counting_signals;
extern __thread unsigned tfd_sig_handled
	__attribute__((tls_model("initial-exec")));
/* Of those, the handlers installed without SA_RESTART: a read(2) that
 * such a handler interrupts fails EINTR, the others go on waiting. */
extern __thread unsigned tfd_sig_unrestarted
	__attribute__((tls_model("initial-exec")));
int tfd_sig_action(int sig, const struct sigaction *act, struct sigaction *old,
                   int (*next)(int, const struct sigaction *,
                               struct sigaction *));
void tfd_signals_forked(void); /* in a child of fork(): the lock anew */

/* ---- sigtimers.c ---- */

int tfd_sigtimer_ours(timer_t id);
/* TFD_PASS: not a clock of virtual time (the caller passes it on). */
int tfd_sigtimer_create(clockid_t c, struct sigevent *ev, timer_t *id);
int tfd_sigtimer_settime(timer_t id, int flags, const struct itimerspec *nv,
                         struct itimerspec *old);
int tfd_sigtimer_gettime(timer_t id, struct itimerspec *cur);
int tfd_sigtimer_getoverrun(timer_t id);
int tfd_sigtimer_delete(timer_t id);
int tfd_sigtimer_setitimer(const struct itimerval *nv, struct itimerval *old);
int tfd_sigtimer_getitimer(struct itimerval *cur);
unsigned tfd_sigtimer_alarm(unsigned s);
int64_t tfd_sigtimers_fire(int64_t now);
int64_t tfd_sigtimers_next(void);
void tfd_sigtimers_forked(void);

/* ---- timedwaits.c ---- */

int tfd_timed_cond(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                   const struct timespec *abs);
int tfd_timed_sem(sem_t *s, clockid_t clk, const struct timespec *abs);
/* What a wait on a condition or a semaphore is parked on (vtime.h:
 * tfd_dom_park). */
const void *tfd_cond_obj(const pthread_cond_t *c);
const void *tfd_sem_obj(const sem_t *s);
enum tfd_lock_kind { TL_MUTEX, TL_READ, TL_WRITE }; /* tfd_timed_lock */
int tfd_timed_lock(void *lock, enum tfd_lock_kind kind, clockid_t clk,
                   const struct timespec *abs);
int tfd_timed_join(pthread_t th, void **ret, clockid_t clk,
                   const struct timespec *abs);
/* syscall(SYS_futex, ...): a wait with a timeout, or TFD_PASS. */
long tfd_timed_futex(uint32_t *word, int op, uint32_t val,
                     const struct timespec *ts, uint32_t bitset);

/* ---- iowaits.c ---- */

ssize_t tfd_sock_call(int fd, int flags, int out,
                      ssize_t (*call)(void *, int), void *ctx);
int tfd_sock_accept(int fd, int (*call)(void *), void *ctx);
void tfd_sock_stamps(struct msghdr *msg);
/* TFD_PASS: not ours to wait on (the caller passes it on). */
ssize_t tfd_mq_timed(mqd_t q, int out, const struct timespec *abs,
                     ssize_t (*try)(void *), void *ctx);
int tfd_sig_wait(const sigset_t *set, siginfo_t *info,
                 const struct timespec *timeout);
int tfd_sig_suspend(const sigset_t *mask);
int tfd_child_wait(int (*look)(void *), void *ctx);

/* ---- tree.c ---- */

int tfd_tree_thread(pthread_t *th, const pthread_attr_t *attr,
                    void *(*fn)(void *), void *arg);
pid_t tfd_tree_fork(void);
int tfd_tree_system(const char *cmd);
FILE *tfd_tree_popen(const char *cmd, const char *mode);
void tfd_tree_init(void); /* the child's locks anew after every fork() */
int tfd_tree_spawn(int path, pid_t *pid, const char *file,
                   const posix_spawn_file_actions_t *fa,
                   const posix_spawnattr_t *at, char *const argv[],
                   char *const envp[]);

/* ---- trace.c ---- */

extern const char *tfd_trace_path; /* NULL: no trace */
/* TFD_TRACE, copied at load; ignored in a secure-execution process. */
void tfd_trace_init(void);
void tfd_trace(int fd, long ret, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
const char *tfd_clock_name(int c);
const char *tfd_flag_names(char *buf, size_t n, int flags, int settime);
const char *tfd_its_text(char *buf, size_t n, const struct itimerspec *s);
/* " [next S.N]": fd's time left; also stamps the line tfd_trace() is
 * about to write (call it among that call's arguments). */
const char *tfd_next_text(char *buf, size_t n, int fd);

/* ---- rawsys.c ---- */

/* TFD_RAW_SYSCALLS=1: raw timerfd_* system calls trap to the exported
 * functions; our own calls of them go through a stub of ours. */
void tfd_rawsys_init(void);
void tfd_rawsys_forked(void); /* in a child of fork(): the lock anew */
int tfd_rawsys_catching(void); /* 1: the filter is in, SIGSYS kept here */
/* syscall(nr, a...) of the program for a call the filter traps: 1 and
 * the kernel's result (-errno) in *r, answered without the trap; 0 if
 * it is not one of them. */
int tfd_rawsys_direct(long nr, const long *a, long *r);
/* The program's SIGSYS action while the filter is in: asked, set. */
int tfd_rawsys_action(const struct sigaction *act, struct sigaction *old);

/* ---- gosys.c, and its doors ---- */

/* On virtual time, in a Go program: the runtime's clock reads and waits
 * trap (SIGILL) and are made as syscall() makes them (envp: the first
 * thread's, as the program got it). */
void tfd_gosys_init(char **envp);
extern int tfd_gosys_on;
/* A SIGILL (signals.c): 1 if it was one of ours, made. */
int tfd_gosys_trap(siginfo_t *si, void *uc);
/* System call n of the program's own, on virtual time where it is one of
 * syscall()'s: the kernel's convention (exports_syscall.c). */
long tfd_vsyscall(long n, const long *a);
/* signals.c: sig's handler is ours, whatever the program sets, and sig
 * is never blocked (its handler's mask, the C library's masks). */
int tfd_sig_take_faults(int sig);
void tfd_sig_untake(int sig);
/* An action kept here, not installed: old told, act kept, under lk with
 * block blocked (signals.c; rawsys.c's SIGSYS, the mover's signal). */
void tfd_sig_kept(struct sigaction *kept, pthread_mutex_t *lk,
                  const sigset_t *block, const struct sigaction *act,
                  struct sigaction *old);
/* The mover's DOM_POKE_SIG handler in (vtime/join.c); the program's
 * action is kept, never installed. */
void tfd_sig_poke_install(const struct sigaction *sa);
const sigset_t *tfd_sig_without_taken(int how, const sigset_t *set,
                                      sigset_t *copy);
/* A mask the program gives (sigprocmask(), a wait's): without the signals
 * taken, in a copy if need be; as it is off Go's virtual time and for the
 * library's own calls (inside), which block what they block. */
static inline const sigset_t *tfd_sig_never_blocked(int how,
                                                    const sigset_t *set,
                                                    sigset_t *copy)
{
	if (!unlikely(tfd_gosys_on) || tfd_inside)
		return set;
	return tfd_sig_without_taken(how, set, copy);
}

/* ---- exports_procs.c ---- */

/* The places the library's threads start from, all free in a child of
 * fork(). */
void tfd_start_places_forked(void);
/* At start: the C library's vfork() found. */
void tfd_vfork_init(void);

/* ---- exports_exec.c ---- */

/* On virtual time, the program execvp(3) (search 1) or execve(2) (0)
 * would run for prog, in process pid, is said on standard error if it is
 * statically linked (it runs on the system's clocks). */
void tfd_exec_say_static(const char *prog, int search, pid_t pid);

/* ---- exports_signals.c ---- */

/* The C library's sigaction(), found on its own (see the file). */
int tfd_next_sigaction(int sig, const struct sigaction *act,
                       struct sigaction *old);

#endif
