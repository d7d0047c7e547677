/* SPDX-License-Identifier: MIT */
/*
 * waits.h - what the preload's waits on timers share (waits.c): the
 * timers of a wait held while it may block, and on real time the look
 * at them with which the thread that waits delivers them itself
 * (tfd(7), Delivery).  Used by waits_poll.c, waits_select.c and
 * waits_epoll.c; the rest of the preload sees only preload.h.
 */
#ifndef TFD_PRELOAD_WAITS_H
#define TFD_PRELOAD_WAITS_H

#include "preload/preload.h"

/* Input, as a wait asks for it. */
#define POLL_READ (POLLIN | POLLPRI | POLLRDNORM | POLLRDBAND)

/* On virtual time, whether a wait for input on fd is one on the outside
 * (vtime.h).  A timer of ours is not looked into as an epoll set (its
 * file, an anonymous inode as a set's is, would cost a look to tell
 * apart), but asked still: a mark the preload did not see go (fclose()
 * of an fdopen() stream, a raw close) may name a socket now. */
static inline int tfd_wait_outside(int fd)
{
	return tfd_marked(fd) ? tfd_dom_fd_outside_flat(fd)
	                      : tfd_dom_fd_outside(fd);
}

/* The engine keeps the holds, in the thread's own memory, and lets them
 * all go at the end (nothing of them is on this stack, nor allocated
 * here: a handler that jumps out of the wait leaves nothing to free). */
struct holds {
	size_t n;
	int on; /* the wait may block */
};

void tfd_holds_init(struct holds *s, int64_t ns);
void tfd_hold_one(struct holds *s, int fd);
void tfd_holds_end(struct holds *s);

/* A look at the timers of a wait's set, with the backend's lock (ready,
 * defer): which a read would count now, and the earliest deadline of the
 * others.  Before the wait blocks, the timers due at that deadline are
 * left to it (defer 1); when it returns, those not due are given back
 * (defer 0).  A wait that woke a little before the deadline (aim) only
 * looks, and sleeps again. */
enum { SCAN_LOOK, SCAN_BLOCK, SCAN_END };

struct scan {
	int phase, begun, was;
	int mark; /* the ready ones are marked (not after an error) */
	int64_t next; /* CLOCK_MONOTONIC, -1 for none */
	int64_t end;  /* the wait's own end, -1 for none */
};

void tfd_scan_begin(struct scan *c, int phase, int64_t end);
int tfd_scan_one(struct scan *c, int fd, int seen);
void tfd_scan_defer(const struct scan *c, int fd);
void tfd_scan_end(struct scan *c);

/* Until when (CLOCK_MONOTONIC) a timer a poll or select reported from
 * memory may be unposted (waits.c); -1 if none ever was. */
int64_t tfd_held_until(void);
/* When to wake for a deadline at; a wait's timeout until at (-1: none)
 * from now, NULL for none. */
int64_t tfd_wake_aim(int64_t at);
struct timespec *tfd_timeout_to(int64_t at, struct timespec *ts);

/* A wait that delivers, on poll's array or select's sets: empty its
 * results, look at its timers (pwait_ours, swait_ours), wait in the
 * kernel (told to the engine when it may block). */
struct dwait {
	void (*clear)(void *w);
	int (*ours)(void *w, struct scan *c);
	int (*call)(void *w, const struct timespec *tp, const sigset_t *mask);
	const sigset_t *mask;
};

int tfd_waiter_delivers(void *w, const struct dwait *d, int64_t ns);

#endif
