/* SPDX-License-Identifier: MIT */
/*
 * vtime.h - virtual time: the only interface of src/vtime/.
 *
 * Virtual time is a domain: every process of a `tfd exec --backend
 * virtual` tree maps one shared memory, with one set of clocks and a slot
 * for each of its threads, and one mover moves the clocks to the earliest
 * deadline of the tree when every thread of it waits (tfd-preload(7),
 * VIRTUAL TIME).  The drop-in (src/preload/) intercepts the program's
 * calls and asks this part; `tfd exec` (tools/cmd_exec.c) makes a domain
 * and runs its mover.  Neither includes another header of this folder.
 *
 * What goes here: when time moves and what holds it (the mover), what a
 * thread's slot says and when it says it, how a wait of the domain blocks
 * and ends, how a process's timers are kept in step with the domain's
 * clock.  What does not: which libc call is a wait or a clock read, and
 * what it returns (the preload's wrappers, waits and timers); the timers
 * themselves (the engine, reached through the backend's operations).
 *
 *   shm.c    the shared memory (domain.h's layout): made, mapped, the
 *            clocks read, a change told; also in `tfd exec`
 *   slots.c  a slot per thread and a record per process: taken, named,
 *            claimed, freed; also in `tfd exec` (its child's slot)
 *   mover.c  the mover: when every thread waits, time moves; also in
 *            `tfd exec`, or a thread of the preload's; its parts
 *            (mover.h): clocks.c, verdict.c, procs.c, busy.c, procfs.c
 *   join.c   a process's life in the domain: joining it at load (its own
 *            mover when there is no `tfd exec`), fork, exit
 *   step.c   the process's timers kept in step with the domain's clock,
 *            its next deadline told to the mover, its agent thread
 *   waits.c  the three ways a wait blocks (a sleep, a wait in the kernel,
 *            a wait in slices), and the program's sleeps and reads
 *   outside.c which descriptors the world outside the tree can make
 *            ready (a wait on one lets time flow)
 *   clock.c  the clocks as the program reads them
 *
 * The files that run in the preload (join, step, waits, outside, clock)
 * reach it through the one struct tfd_dom_host it gives as it joins (the
 * C library's calls past its wrappers, its timers, its signals) and the
 * engine through the backend's operations; shm, slots and the mover's
 * files use nothing but the shared memory, and `tfd exec` builds them in
 * from the same sources (Makefile: TOOL_SHARED_SRC).
 *
 * Locks, in the one order of src/lockorder.h (checked in the sanitizer
 * builds): agent_lock (LK_AGENT, step.c: starting the agent), then
 * publish_lock (LK_PUBLISH, step.c: one publisher at a time), then
 * sync_lock (LK_SYNC, step.c: the engine moved to the domain's clock),
 * then the engine's.  Nothing else here takes a lock: the shared memory
 * is read and written with atomics, and the mover sleeps on a futex word.
 *
 * Returns: 0 or a positive errno where a function says "errno", -1 with
 * errno where it says so (the waits, as the calls they serve), and
 * VWAIT_BLOCK for "not a wait of virtual time: wait for real".
 */
#ifndef TFD_VTIME_H
#define TFD_VTIME_H

#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

struct tfd_dom; /* the shared memory (domain.h, internal) */

/* This process's domain: NULL until it joins one (not on virtual time). */
extern struct tfd_dom *tfd_dom;

#define DOM_NEVER INT64_MAX /* no deadline */
/* The signal that tells a thread in a wait of the kernel's (ppoll,
 * epoll_pwait, pselect, sigtimedwait) to look again: never the
 * program's. */
#define DOM_POKE_SIG (__SIGRTMAX - 1)
/* Deadlines further than this (100 years) are no deadline: a wait that
 * has only such deadlines waits for real, time does not jump to the end
 * of time. */
#define TFD_HORIZON ((int64_t)100 * 36525 * 864 * 1000000000)
/* A wait that virtual time does not serve: the caller waits for real. */
#define VWAIT_BLOCK INT32_MIN

/* ---- for `tfd exec`: a domain and its mover ---- */

enum { DC_MONO, DC_REAL, DC_BOOT }; /* the domain's clocks */

/* A domain: in a file of no name (*memfd, which the programs open as
 * /proc/<pid>/fd/<memfd>: TFD_DOMAIN=<pid>:<memfd>), or anonymous
 * (memfd NULL: this process and its forked children).  rate_milli: 0
 * pure virtual time, else time also flows at rate/1000 between jumps.
 * NULL with errno. */
struct tfd_dom *tfd_dom_create(int *memfd, uint32_t rate_milli);
/* Timer slack (verdict.c): waits due within slack_ns of the earliest one
 * end at one move (TFD_DEFAULT_SLACK_NS, Linux's default; 0: each at its
 * own, in the order of their deadlines; tfd exec --virtual-slack), set
 * before any process joins. */
#define TFD_DEFAULT_SLACK_NS 50000
#define TFD_MAX_SLACK_NS 1000000
void tfd_dom_set_slack(struct tfd_dom *d, uint32_t slack_ns);
/* The clocks start at the next whole second of the system's;
 * CLOCK_REALTIME at real_ns instead (tfd exec --virtual-start), set
 * before any process joins. */
void tfd_dom_start_at(struct tfd_dom *d, int64_t real_ns);
/* The descriptors the caller passes on to the program it runs (open
 * without FD_CLOEXEC: its stdin, stdout, stderr...) that are pipes,
 * FIFOs, sockets or terminals are the tree's inputs from outside: a wait
 * on one flows in real time (tfd_dom_fd_outside()).  Before the program
 * starts. */
void tfd_dom_inherit(struct tfd_dom *d);
/* A clock of the domain now (DC_*), in ns. */
int64_t tfd_dom_now(const struct tfd_dom *d, int clock);
/* Something changed that the mover may wait for (a child's end...). */
void tfd_dom_changed(struct tfd_dom *d);
/* A signal sent to process pid of the tree from outside it (tfd exec's
 * forwarding), after it is: its parked threads are looked at again.
 * Safe in a signal handler. */
void tfd_dom_told_signal(struct tfd_dom *d, int32_t pid);
/* A slot for a child the caller is about to start: time holds until the
 * child's library names it (it finds the slot by its pid), or the caller
 * does with tfd_dom_reserved().  The slot's index, -1 if full. */
int tfd_dom_reserve(struct tfd_dom *d);
void tfd_dom_reserved(struct tfd_dom *d, int slot, pid_t pid);
/* Moves time for the tree until stop() says to stop (called whenever the
 * mover wakes); moved() (if not NULL) is told of each move, from and to
 * on the virtual CLOCK_MONOTONIC.  keep_files: a mover in a process of
 * its own (`tfd exec`) may keep the /proc files it looks at open between
 * looks.  Returns what stop() returned, -1 if out of memory. */
int tfd_dom_move(struct tfd_dom *d, int keep_files, int (*stop)(void *),
                 void (*moved)(void *, int64_t, int64_t), void *ctx);
/* The mover is gone: programs left behind go on with time flowing for
 * real from where it is (their waits poked to wait for real). */
void tfd_dom_end(struct tfd_dom *d);
/* A process that calls tfd_dom_end() once the caller is gone, even
 * killed.  0, or -1 with errno. */
int tfd_dom_watch(struct tfd_dom *d);

/* ---- for the preload: joining, and a process's life ---- */

struct tfd_backend;

/* What virtual time asks of the library that hosts it in a process. */
struct tfd_dom_host {
	const struct tfd_backend *be; /* the timers */
	/* The calling thread's calls are the library's from enter() until
	 * leave(what it returned); inside(): they are now. */
	int (*enter)(void);
	void (*leave)(int was);
	int (*inside)(void);
	/* The C library's calls, not the host's wrappers of them. */
	int (*clock_gettime)(clockid_t c, struct timespec *ts);
	int (*fcntl)(int fd, int cmd, ...);
	int (*poll)(struct pollfd *p, nfds_t n, int ms);
	int (*ppoll)(struct pollfd *p, nfds_t n, const struct timespec *ts,
	             const sigset_t *mask);
	int (*nanosleep)(const struct timespec *ts, struct timespec *left);
	/* The program's handlers the calling thread has run, and those of
	 * them that do not restart a call (a wait ended EINTR by one ends
	 * for the program; by the mover's poke alone, it looks again). */
	unsigned (*handled)(void);
	unsigned (*unrestarted)(void);
	/* The process's timers that signal: those due at now (virtual
	 * CLOCK_MONOTONIC) sent, the earliest next (INT64_MAX: none); the
	 * parent's forgotten in a child. */
	int64_t (*sigtimers_fire)(int64_t now);
	int64_t (*sigtimers_next)(void);
	void (*sigtimers_forked)(void);
	/* The mover's poke (DOM_POKE_SIG) taken with sa, the program's own
	 * action for it kept. */
	void (*poke_install)(const struct sigaction *sa);
	/* 1 if the process has a timer. */
	int (*has_timers)(void);
	/* The clocks jumped by ns (the trace). */
	void (*moved)(int64_t ns);
};

extern struct tfd_dom_host tfd_dom_host; /* [I] from tfd_dom_join */

/* At load, on the virtual backend: join the domain named (TFD_DOMAIN), or
 * make one of this process's own with a mover thread; host is kept.  0,
 * or -1: none. */
int tfd_dom_join(const char *name, const struct tfd_dom_host *host);
/* A thread of this process enters (+1) or leaves (-1) the library's code:
 * it counts as running meanwhile (preload.h: tfd_enter). */
void tfd_dom_inlib(int d);
/* pthread_exit() in the first thread: the process goes on. */
void tfd_dom_first_ends(void);
/* The process made an io_uring (io_uring_setup(2) succeeded). */
void tfd_dom_uses_uring(void);
/* In a child of fork(), with the slot its parent took (tfd_dom_slot_take
 * (-1)), before the program runs on. */
void tfd_dom_forked(int slot);
/* In a child of fork(): this part's locks anew. */
void tfd_dom_locks_forked(void);

/* ---- slots: a thread's from before it starts to its end ---- */

/* A slot for a thread of pid that is on its way (-1: a child not forked
 * yet): time holds until it is named.  Its index, -1 if full (the thread
 * runs unseen: tfd-preload(7)). */
int tfd_dom_slot_take(int32_t pid);
void tfd_dom_slot_name(int i, int32_t pid, int32_t tid);
void tfd_dom_slot_free(int i);
/* The calling thread's slot (-1: none), and set (a new thread's). */
int tfd_dom_self(void);
void tfd_dom_set_self(int i);
/* The slot of this process's thread whose pthread_t is thread, its
 * generation in *gen: -1 if none. */
int tfd_dom_slot_of(uint64_t thread, uint32_t *gen);
/* Slot i's thread is thread (its maker's call). */
void tfd_dom_slot_thread(int i, uint64_t thread);
/* system() and popen(): a slot for a child the C library starts, which
 * the child claims when its program loads the library, or its starter
 * names (popen, once it knows the pid), or frees when done. */
int tfd_dom_child_slot(void);
void tfd_dom_child_name(int i, int32_t pid);
void tfd_dom_child_done(int i);

/* ---- the process's timers, in step ---- */

/* Before a timer operation: the engine's clocks moved to the domain's
 * (what expired delivered).  After one: the mover told of this process's
 * next deadline.  Nothing without a domain. */
void tfd_dom_sync(void);
void tfd_dom_publish(void);

/* ---- clocks ---- */

/* A clock now: the domain's, or without one the engine's virtual clock. */
int64_t tfd_dom_clock_now(clockid_t c);
/* A clock now, read by the program (clock_gettime(), gettimeofday(),
 * time()...): tfd_dom_clock_now(), but a thread that spins reading it at the
 * instant its last wait timed out waits for time to pass it (waits.c). */
int64_t tfd_dom_read_clock(clockid_t c);
/* The base of a clock virtual time keeps (CLOCK_REALTIME, _MONOTONIC or
 * _BOOTTIME), or -1 (a clock of the system's: CPU time...). */
clockid_t tfd_dom_clock_base(clockid_t c);
clockid_t tfd_dom_wait_base(clockid_t c); /* -1 also for the raw
                                               * and coarse clocks */
/* The deadline on the virtual CLOCK_MONOTONIC of a wait of ns (-1: none;
 * beyond the horizon: DOM_NEVER). */
int64_t tfd_dom_deadline(int64_t ns);

/* ---- waits ----
 *
 * look(ctx) tries without blocking: > 0 ready, < 0 failed (errno), 0
 * nothing.  block(ctx, mask, real_ns) blocks in the kernel with that
 * signal mask for at most real_ns (-1: no limit): > 0 ready, else -1 with
 * errno (EINTR: poked, or a signal).  try(ctx, slice) waits at most slice
 * real ns (0: only tries, -1: no limit) and returns 0 (done), ETIMEDOUT
 * (the slice ran out) or another errno value.
 */

/* 1 if fd's other end may be held outside the tree: a descriptor the
 * tree inherited from outside (tfd_dom_inherit()), a terminal, a FIFO
 * opened by its name, a connected socket whose peer is not a process of
 * the tree, an epoll set that holds one (outside.c).  A wait on such a
 * descriptor (reading) is a wait on the outside: while one is the tree's
 * only way on, time flows at the real rate instead of jumping (mover.c).
 * 0 without a domain. */
int tfd_dom_fd_outside(int fd);
/* The same, without looking into fd if it is an epoll set (one look
 * less for a descriptor that should be a timer). */
int tfd_dom_fd_outside_flat(int fd);
/* fn(fd, arg) for each descriptor epoll set ep holds for input (its
 * list in /proc/self/fdinfo, read with raw calls), until fn returns
 * nonzero: that value; else 0, or -1 if the list could not be read
 * whole.  An epoll set is outside if one of those is. */
int tfd_dom_epoll_each(int ep, int (*fn)(int, void *), void *arg);
/* The socket fd was bound, listens, or connects to `to` (NULL for the
 * first two): its TCP or UDP port (if it has one; with the port it
 * connects to) is the tree's, for tfd_dom_fd_outside().  errno is
 * kept. */
void tfd_dom_sock_bound(int fd, const struct sockaddr *to, socklen_t tolen);
/* The calling thread's next wait (tfd_dom_wait(), tfd_dom_kwait()) is on
 * the outside. */
void tfd_dom_wait_outside(void);
/* A descriptor of the tree's was closed or replaced, or an epoll set's
 * registrations changed (epoll_ctl): what a wait found of a set (which of
 * its descriptors are not timers) holds until the count moves.  Counted
 * in the domain: a set may be shared with another process of the tree.
 * 0 without a domain. */
void tfd_dom_fds_changed(void);
uint32_t tfd_dom_fds_gen(void);

/* A wait of at most timeout_ns (-1: no limit) on the virtual clock: look
 * registered, then blocked in the kernel, poked when something may have
 * changed or time reached the deadline.  look()'s result, block()'s (> 0,
 * or -1 with errno), 0 when the time is up; VWAIT_BLOCK without a
 * domain. */
int tfd_dom_wait(int64_t timeout_ns, const sigset_t *mask, int (*look)(void *),
              int (*block)(void *, const sigset_t *, int64_t), void *ctx);
/* The same until an absolute deadline (DOM_NEVER: none); needs a
 * domain. */
int tfd_dom_kwait(int64_t deadline, const sigset_t *mask,
                  int (*look)(void *),
                  int (*block)(void *, const sigset_t *, int64_t),
                  void *ctx);
/* A wait that can only block in real time, in slices (a condition, a
 * lock, a join), until deadline: 0, try()'s error, or ETIMEDOUT at the
 * deadline.  Needs a domain.  try(ctx, until) waits at most until the
 * real CLOCK_MONOTONIC time *until (NULL: no limit; {0, 0}: tries without
 * waiting), and reads *until again when the kernel's wait is interrupted
 * (glibc's waits do): the mover's poke sets it to {0, 0}, which ends the
 * slice (waits.c). */
int tfd_dom_slice_wait(int64_t deadline,
                       int (*try)(void *, const struct timespec *),
                       void *ctx, const void *park);
/*
 * Parked: the calling thread is about to block, outside our waits, in a
 * wait of the C library's on obj (a condition, a semaphore, private to
 * its process) that only a wake made by a thread of the tree can end,
 * each told after it is made: a condition signalled or broadcast, a
 * semaphore posted, the end of another wait on it that may pass one on
 * (tfd_dom_woke(obj), tfd_dom_unpark_ended()), a
 * thread cancelled (tfd_dom_woke(NULL): anything), a signal sent
 * (tfd_dom_signalled()).  A signal's handler runs through ours, which
 * unparks the thread while it runs.  The mover asks /proc whether it
 * blocks once, and again after a signal to it; a wake of obj leaves it to
 * /proc until it parks anew: a thread parked for good costs a move
 * nothing.  tfd_dom_park() returns what tfd_dom_unpark() needs (NULL: no
 * slot, or obj NULL, nothing done); a cancellation already pending acts
 * in it.  A lock's wait is not one (the C library's unlock wakes it
 * unseen), nor one on an object shared between processes (at another
 * address in each).
 */
void *tfd_dom_park(const void *obj);
/* Parked in a join of thread (a pthread_t of this process): its end is
 * told by the mover, which frees its slot once /proc shows it gone. */
void *tfd_dom_park_join(uint64_t thread);
void tfd_dom_unpark(void *parked);
/* The same for a wait on a condition or semaphore obj that has ended
 * (timed_out: with ETIMEDOUT): a wake of obj if the C library may have
 * passed one on in it (domain.h: dom_wait_ended). */
void tfd_dom_unpark_ended(void *parked, const void *obj, int timed_out);
void tfd_dom_woke(const void *obj); /* needs a domain */
/* A signal sent to thread tid of process pid (tid 0: any of pid's; pid
 * 0: any thread), after it is. */
void tfd_dom_signalled(int32_t pid, int32_t tid); /* needs a domain */
/* The mover's poke came (its handler): the slice this thread waits in
 * ends. */
void tfd_dom_slice_poked(void);
/* 1 if a try() is to try without waiting. */
static inline int tfd_dom_no_wait(const struct timespec *until)
{
	return until && until->tv_sec == 0 && until->tv_nsec == 0;
}
/* A handler of the program's begins (1) or returns (0) on this thread:
 * a wait it interrupts counts as running meanwhile (waits.c). */
struct tfd_dom_paused {
	int kind;
	int outside;
	int64_t deadline;
	uint64_t park;         /* the thread was parked (tfd_dom_park) */
	const void *slot;      /* in this slot */
	struct timespec until; /* a slice's real end */
};
void tfd_dom_handler(int begin, struct tfd_dom_paused *p);
/* A read of timer fd that found nothing, blocking (the caller asked its
 * flags), waits until it has something: 0, or -1 with errno (EINTR). */
int tfd_dom_read_wait(int fd);
/* A sleep of ns, or until deadline on the virtual CLOCK_MONOTONIC: 0,
 * EINTR (a handler ran; *left, if not NULL, is the time not slept), or
 * VWAIT_BLOCK (beyond the horizon, or no domain: sleep for real). */
int tfd_dom_sleep(int64_t ns, int64_t *left);
int tfd_dom_sleep_until(int64_t deadline, int64_t *left);

#endif
