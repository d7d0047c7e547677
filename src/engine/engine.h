/* SPDX-License-Identifier: MIT */
/*
 * engine.h - the engine's parts and the state they share.
 *
 * Files, one job each:
 *   table.c    numbers and lifetimes: which descriptor names which timer,
 *              create, dup, release, close, zombies; the backend tables
 *   ops.c      settime, gettime, read on a timer
 *   service.c  the service thread: sleeping, waking (a futex), requests,
 *              counting what expired and posting it in batches
 *   files.c    how the engine holds a timer's file without a number in the
 *              program's table (a private descriptor table), or the
 *              fallback that posts to the user's number
 *   clock.c    clock sources, and the watcher that learns from the kernel
 *              that CLOCK_REALTIME was set
 *   virtual.c  the virtual clocks and their delivery
 *   fork.c     what a child inherits
 *   notify.c   the eventfd a timer signals through
 *
 * Locking.  One mutex, g.lock, guards every field marked [L].  Fields
 * marked [S] belong to the service thread alone; [W] to the watcher; [I]
 * are set once before the threads that read them start.  Lock order:
 * api.c's select_lock -> g.lock; the preload library's locks -> g.lock.
 * Nothing is called with g.lock held that takes another lock of ours, and
 * no cancellation point is reached with it held (lock() disables
 * cancellation; tfd_read re-enables it only while it blocks, unlocked).
 */
#ifndef TFD_ENGINE_H
#define TFD_ENGINE_H

#include "backend.h"
#include "core/model.h"
#include "core/queue.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The clock a deadline is kept on.  A relative CLOCK_REALTIME timer
 * measures elapsed time (as Linux's hrtimers do), so it lives on BASE_MONO;
 * only absolute CLOCK_REALTIME timers follow the wall clock. */
enum { BASE_MONO, BASE_REAL, BASE_BOOT, NBASE };

enum {
	T_CANCEL_ON_SET = 1 << 0, /* absolute CLOCK_REALTIME, CANCEL_ON_SET */
	T_CANCELLED = 1 << 1,     /* clock set since: next read ECANCELED */
	T_SIGNALED = 1 << 2,      /* posted since the last drain */
	T_INHERITED = 1 << 3,     /* came through fork(); the parent runs it */
	T_CLOSED = 1 << 4,        /* no descriptor left; kept for waiters */
	T_INFLIGHT = 1 << 5,      /* a post is being written, unlocked */
	T_DIRECT = 1 << 6,        /* posted to the user's number (fallback) */
};

/* 64 bytes: memory per timer is measured (tfd bench, workload 8). */
struct tfd_timer {
	union {
		struct tfd_qnode q;           /* [L] while queued or open */
		struct tfd_timer *next_freed; /* [S] on the service's list */
	} u;
	struct tfd_model m;    /* [L] */
	int64_t hold;          /* [L] no post before this (coalescing) */
	int32_t backoff;       /* [L] hold-back period, <= HOLD_MAX */
	int file;              /* [L] what posts go to: a number in the
	                        * private table, or (T_DIRECT) the user's */
	unsigned nfds;         /* [L] user descriptors naming it (dup) */
	unsigned waiters;      /* [L] tfd_read()s blocked, holds */
	unsigned mark;         /* [L] visited by a walk of the table */
	unsigned char clockid; /* [I] CLOCK_REALTIME, _MONOTONIC, _BOOTTIME */
	unsigned char base;    /* [L] queue holding the deadline */
	unsigned char flags;   /* [L] T_* */
};

enum state { STOPPED, STARTING, RUNNING, STOPPING };

/* A request to the service thread, on the creating thread's stack: take
 * fd's file from thread tid into the private table.  result is the number
 * there, or -errno; done says it is set. */
struct tfd_fetch {
	int fd, tid;
	int result, done;
};

#define FETCH_MAX 64 /* requests queued before create waits */
#define POOL_MAX 32  /* fresh eventfds the service thread keeps ready,
                      * half of them non-blocking */
#define POOL_LOW 8   /* below this of a kind, create asks for more */

struct tfd_engine {
	pthread_mutex_t lock;
	pthread_cond_t changed;  /* [L] broadcast: state, fetch, inflight */
	struct tfd_timer **slot; /* [L] by user descriptor */
	size_t nslot;            /* [L] */
	size_t ntimers;          /* [L] open timers (not zombies) */
	size_t nlive;            /* [L] timers not yet freed */
	size_t nq[NBASE];        /* [L] timers that may sit on each queue */
	struct tfd_queue q[NBASE]; /* [L] */
	enum state state;          /* [L] */
	pthread_t thread;          /* [L] the service thread */
	int tid;                   /* [L] its thread id */
	int private_files;         /* [I] files.c's mechanism is in use */
	/* Wake-ups: the service thread sleeps on the futex word wake while
	 * it equals what it read under the lock; a change wakes it. */
	unsigned wake;             /* [L] written, [S] read as a futex */
	int sleeping;              /* [L] */
	int64_t sleep_until[NBASE]; /* [L] deadline it sleeps for */
	int stop;                  /* [L] */
	int start_error;           /* [L] why the thread could not start */
	int clock_set;             /* [L] the watcher saw CLOCK_REALTIME set */
	int64_t idle_since;        /* [L] no timer left since (mono ns) */
	struct tfd_fetch *fetch[FETCH_MAX]; /* [L] */
	int pool[POOL_MAX];        /* [L] numbers in the private table */
	unsigned char pool_nb[POOL_MAX]; /* [L] that one is O_NONBLOCK */
	unsigned npool;            /* [L] */
	unsigned pool_max;         /* [L] POOL_MAX but in tests */
	unsigned nfetch;           /* [L] */
	struct tfd_timer *freed;   /* [L] files for the service to close */
	unsigned long wakeups;     /* [L] times the thread woke (tests) */
	int inflight_wait;         /* [L] someone waits for T_INFLIGHT */
	int virtual;               /* [L] the clocks are vnow, moved by calls */
	int64_t vnow[NBASE];       /* [L] */
};

extern struct tfd_engine g;

/* table.c */
void tfd_engine_lock(int *cancel_state);
void tfd_engine_unlock(int cancel_state);
int tfd_engine_find(int fd, struct tfd_timer **t);
void tfd_engine_forget(struct tfd_timer *t); /* free, or hand to service */
void tfd_engine_wait_inflight(struct tfd_timer *t); /* may drop the lock */
int tfd_engine_let_go(struct tfd_timer *t);

/* ops.c */
int tfd_engine_settime(int fd, int flags, const struct itimerspec *nv,
                       struct itimerspec *old);
int tfd_engine_gettime(int fd, struct itimerspec *cur);
int tfd_engine_read(int fd, uint64_t *count);
void tfd_engine_requeue(struct tfd_timer *t);
uint64_t tfd_engine_drain(struct tfd_timer *t, int fd);
int tfd_engine_next_due(int64_t *in_ns);

/* service.c */
unsigned tfd_engine_pool_count(int nonblock);
void tfd_engine_pool_drop(unsigned i); /* forget entry i, lock held */
int tfd_engine_start(void);       /* lock held; may drop it */
void tfd_engine_stop_if_idle(void); /* lock held */
void tfd_engine_stop_now(void);   /* lock held; may drop it */
void tfd_engine_kick(int base, int64_t key);
void tfd_engine_poke(void);       /* wake the service thread */
void tfd_engine_after_fork(void);

/* files.c */
int tfd_files_private(void);          /* 1 if the mechanism works */
int tfd_files_unshare(void);          /* in a new thread: empty table */
int tfd_files_fetch(int tid, int fd); /* >= 0, or -errno */
void tfd_files_close(int fd);         /* a number of the thread's table */
int tfd_files_fresh(int nonblock);    /* a new eventfd there, or -1 */
int tfd_files_take(int tid, int k, int flags, int *fd);

/* clock.c */
int64_t tfd_clock_now(int base);  /* the system's or the virtual clock */
int64_t tfd_clock_real(int base); /* the system's */
int tfd_clock_base(int clockid, int absolute);
unsigned tfd_clock_queues(int clockid); /* bases a timer may sit on */
int tfd_clock_watch_start(void);  /* service thread; 0 or errno */
void tfd_clock_watch_stop(void);
void tfd_clock_was_set(void);     /* lock held; posts (service, virtual) */

/* Post t's counted ticks now, from a thread that can reach t->file (the
 * service thread, or any with T_DIRECT); lock held. */
void tfd_engine_post_locked(struct tfd_timer *t);

/* virtual.c */
void tfd_engine_virtual_deliver(const int64_t *before);
int tfd_engine_virtual_use(int on);
int tfd_engine_virtual_move(int64_t d_mono, int64_t d_boot, int64_t d_real,
                     const int64_t *real_to, int was_set);
int tfd_engine_virtual_now(int clockid, int64_t *ns);

/* fork.c */
void tfd_engine_fork_init(void);

#endif
