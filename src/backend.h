/* SPDX-License-Identifier: MIT */
/*
 * backend.h - what the API layer calls.  A backend keeps timers; the API
 * layer (api.c) has already checked every argument except the descriptor,
 * in the SPEC's order.  Every function returns 0 or a positive errno value
 * and never sets errno: api.c is the only place that does.
 *
 * Backends are defined with designated initializers.  The operations
 * marked optional may be NULL; callers test the pointer, never the name.
 */
#ifndef TFD_BACKEND_H
#define TFD_BACKEND_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct tfd_backend {
	const char *name;
	/* Its descriptors are the kernel's own timerfds: read, write, poll,
	 * epoll and close on them behave as Linux's already (the preload
	 * library passes them straight through). */
	int native;
	/* Optional: called before create, outside every lock of the
	 * library's, by a backend whose timers may start threads: it keeps
	 * their code loaded (host.h, tfd_own_pin). */
	void (*pin)(void);
	/* clockid is one Linux accepts; flags within TFD_NONBLOCK|CLOEXEC. */
	int (*create)(int clockid, int flags, int *fd);
	/* 0 if fd is a timer of this backend, else EBADF or EINVAL. */
	int (*check)(int fd);
	/* flags within ABSTIME|CANCEL_ON_SET, nv valid; old may be NULL and
	 * is written only when 0 is returned. */
	int (*settime)(int fd, int flags, const struct itimerspec *nv,
	               struct itimerspec *old);
	int (*gettime)(int fd, struct itimerspec *cur);
	/* read(2) semantics.  On success *count is the expirations, or 0 for
	 * a read that returns no bytes (a periodic absolute CLOCK_REALTIME
	 * timer whose clock was set back before it was read: SPEC 2). */
	int (*read)(int fd, uint64_t *count);
	/* Optional: 1 if a read of fd now would fail EAGAIN, told without
	 * the backend's lock or a system call and changing nothing; 0 if it
	 * cannot tell so cheaply (read() then tells).  The preload's read(2)
	 * asks first: it knows a timer's O_NONBLOCK (mode), libtfd does
	 * not. */
	int (*quiet)(int fd);
	/* Close fd, the timer with its last descriptor. */
	int (*close)(int fd);
	/* newfd was made a duplicate of oldfd (dup2(2) by the caller): make it
	 * name the same timer.  Used by the preload library. */
	int (*dup)(int oldfd, int newfd);
	/* Optional.  fd stops naming its timer but is not closed here: the
	 * caller replaced the number (dup2 over it) or closes it itself.  The
	 * timer goes with its last descriptor, as on close. */
	int (*release)(int fd);
	/* Optional.  A wait on fd outside the library (poll(2) by the preload
	 * library) begins: until the matching unhold, closing fd's last
	 * descriptor keeps the timer running, as Linux keeps the file of a
	 * descriptor being waited on.  NULL if fd is not a timer.  The
	 * calling thread's own, and undone if it abandons the wait (a
	 * handler jumps out of it, it is cancelled: see
	 * tfd_engine_waits_block below). */
	void *(*hold)(int fd);
	void (*unhold)(void *held);
	/* Timers created and not yet closed (selection needs none). */
	size_t (*count)(void);
	/* Called when the process selects this backend: 0 or EBUSY. */
	int (*activate)(void);

	/* Optional: the virtual clock (tfd_virtual_backend).  Moves MONOTONIC
	 * by d_mono, BOOTTIME by d_boot, REALTIME by d_real or to *real_to, and
	 * delivers what expired; was_set says REALTIME was set (not merely
	 * running), which cancels TFD_TIMER_CANCEL_ON_SET timers. */
	int (*virtual_move)(int64_t d_mono, int64_t d_boot, int64_t d_real,
	                    const int64_t *real_to, int was_set);
	/* The virtual time of clockid's base (CLOCK_REALTIME absolute). */
	int (*virtual_now)(int clockid, int64_t *ns);
	/* Time from now to the earliest deadline of any timer, 0 if one is
	 * due; ENOENT when no timer is armed.  Optional. */
	int (*next_due)(int64_t *in_ns);
	/* Optional: the waits of the preload library deliver (tfd(7),
	 * Delivery).  ready_begin() takes the backend's lock, ready_end()
	 * gives it back; in between, ready() tells of fd: 1 if a read of it
	 * now would count an expiration that its file does not show (not
	 * posted yet), 2 if the file shows one (posted: a poll(2) of the
	 * file tells whether it still does), 0 if neither; with 0 and 2,
	 * *mono is its next deadline on CLOCK_MONOTONIC (-1 if none), and
	 * *drifts (if not NULL) 1 if that deadline is on another clock
	 * (CLOCK_REALTIME, CLOCK_BOOTTIME), converted as the clocks stand
	 * now; -1 if fd is no timer a wait may deliver. */
	int (*ready_begin)(void);
	int (*ready)(int fd, int64_t *mono, int *drifts);
	void (*ready_end)(int begun);
	/* With that lock too: waits 1, the caller's wait will be awake at
	 * fd's deadline (ready() said 0) and deliver it: the backend may
	 * hold back what it does for waits it does not see, for a while;
	 * waits 0, that wait has ended. */
	void (*defer)(int fd, int waits);
	/* With that lock too: if fd is due and its file does not show it
	 * (ready() would say 1, and no post is being made), post it now,
	 * from the caller's thread (a wait on a set whose readiness only
	 * the kernel tells: an epoll).  1 if it did. */
	int (*post)(int fd);
	/* Optional, with that lock too: on 1, every wait on fd's timer in
	 * this process goes through the caller's waits, which deliver it
	 * (ready()): while fd is its only number, this process its only
	 * holder and no read(2) blocks on it, the backend need neither post
	 * it nor wake for its deadlines; on 0, no longer. */
	int (*cover)(int fd, int on); /* 1 if covered now */
	/* With cover, with that lock too: a wait of the caller's that
	 * delivers goes to sleep (d 1) or has woken (d -1).  A timer armed
	 * anew while one sleeps is no longer covered (the wait may sleep
	 * past its new deadline): the caller covers it again. */
	void (*asleep)(int d);
	/* Optional: fd's file was made or set O_NONBLOCK (nonblock 1) or
	 * not (0), or set by a call the caller did not see (-1), through a
	 * number the caller saw: a read with nothing to count may say
	 * EAGAIN from the mode told, with no system call, while this
	 * process alone holds the timer. */
	void (*mode)(int fd, int nonblock);
	/* Optional, with virtual_move: what virtual time (src/vtime) asks
	 * of the timers, as tfd_engine_virtual_start(),
	 * tfd_engine_virtual_move_to() and tfd_engine_virtual_unread()
	 * below say. */
	int (*virtual_start)(int64_t mono, int64_t real, int64_t boot);
	int (*virtual_move_to)(int64_t mono);
	int (*virtual_unread)(int64_t *at,
	                      int (*shown)(int fd, int elsewhere, void *arg),
	                      void *arg);
};

extern const struct tfd_backend tfd_engine_backend;
extern const struct tfd_backend tfd_kernel_backend;
extern const struct tfd_backend tfd_virtual_backend;

/* The kernel backend's fork handlers, registered once (lockorder.h). */
void tfd_kernel_fork_init(void);

/* The backend selected now (api.c); the preload library uses its ops. */
const struct tfd_backend *tfd_current_backend(void);

/* The virtual clocks of the engine start at these values (a virtual-time
 * domain's, tfd-preload(7)) instead of the system's: only with no timer
 * open; 0, EBUSY, or ENOTSUP when the backend is not virtual. */
int tfd_engine_virtual_start(int64_t mono, int64_t real, int64_t boot);
/* The engine's virtual clocks moved forward until CLOCK_MONOTONIC reads
 * mono (the others by as much; none if it reads as much already), in one
 * hold of the family's lock, and what is due delivered: 0, or ENOTSUP. */
int tfd_engine_virtual_move_to(int64_t mono);
/* The earliest expiry of a timer this process holds whose file shows no
 * post, on the virtual CLOCK_MONOTONIC (*at, -1 if none): from the
 * deadline queues of those it delivers, in O(log n) of them, and a look
 * at each it holds that another process of its family delivers.
 * shown(fd, elsewhere, arg) is asked, with the backend's lock held, of
 * each timer posted earlier than the answer: 1 if its file still shows
 * the post (elsewhere: a process outside the family, or a program this
 * one starts, may read it).  0, or ENOTSUP off the virtual clocks. */
int tfd_engine_virtual_unread(int64_t *at,
                              int (*shown)(int fd, int elsewhere, void *arg),
                              void *arg);

#include "sanitizer.h" /* tfd_may_not_return() */

#endif
