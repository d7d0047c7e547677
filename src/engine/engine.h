/* SPDX-License-Identifier: MIT */
/*
 * engine.h - the engine's parts and the state they share.
 *
 * Files, one job each:
 *   family.c   the memory a process shares with the children it forks:
 *              the lock, a record per process, the timer records; a
 *              process that dies, and the timers it delivered
 *   table.c    numbers and lifetimes: which descriptor names which timer
 *              here, create, dup, release, close, holds (in chunks of
 *              their own, which are also their list); the backend tables
 *   ops.c      settime, gettime, read on a timer
 *   deadline.c where a timer's deadline waits: in the queues of the process
 *              that delivers it, or in its inbox when another changed it
 *   service.c  the service thread: sleeping, waking (futexes), requests,
 *              counting what expired and posting it in batches
 *   files.c    how the engine holds a timer's file without a number in the
 *              program's table (a private descriptor table), or the
 *              fallback that posts to the user's number
 *   clock.c    clock sources, and the watcher that learns from the kernel
 *              that CLOCK_REALTIME was set
 *   virtual.c  the virtual clocks and their delivery
 *   fork.c     what a child inherits: the same timers
 *   waits.c    what a thread leaves registered while it blocks on timers
 *              (a blocked tfd_read, the holds of a wait of the preload's),
 *              undone also when a signal handler jumps out of the wait
 *   notify.c   the eventfd a timer signals through
 *   lifetime.c the threads of ours: counted; the object that holds our code
 *              kept loaded; a process left with only ours ended as the C
 *              library ends one whose last thread ends
 *   host.c     the library that hosts the engine (host.h): libc by default
 *
 * Sharing.  A timer's state (its model, its flags) lives in memory that a
 * process shares with the children it forks (struct tfd_family), so that
 * parent and child act on one timer, as Linux's share one file.  Each
 * timer is delivered (counted and posted to its eventfd) by one process
 * that holds its file: the one that made it, until that one lets go of it
 * or dies; then another process that holds it takes over.  What concerns
 * one process only (which numbers name which timer, the service thread,
 * the deadline queues of the timers it delivers) is in its own memory,
 * struct tfd_engine tfd_eng.
 *
 * Locking.  One mutex, the family's lock (process-shared and robust: a
 * process that dies holding it does not hang the others), guards every
 * field marked [L], in the family's memory and in tfd_eng.  [S] fields
 * belong to this process's service thread alone; [D] fields of a timer to
 * the process that delivers it (under the lock); [I] are set once before
 * anything else reads them; [A] are read and written atomically.  Lock
 * order: src/lockorder.h, the library's and the preload's locks in one
 * list (api.c's select_lock and the preload's locks before the family's
 * lock, the kernel backend's after it).
 * Nothing is called with the lock held that takes another lock of ours,
 * and no cancellation point is reached with it held (tfd_engine_lock()
 * disables cancellation; tfd_read re-enables it only while it blocks,
 * unlocked).  The program's signals are not blocked (family.c): no
 * handler may call us or jump out while its thread holds the lock (the
 * library's rule, tfd(7); the preload defers its handlers), and a
 * blocked tfd_read keeps nothing on its stack (waits.c).  Builds with
 * TFD_DEBUG_LOCKS (the sanitizer builds) check the order and assert
 * ownership (TFD_ASSERT_LOCKED).
 */
#ifndef TFD_ENGINE_H
#define TFD_ENGINE_H

#include "backend.h"
#include "engine/hooks.h"
#include "host.h"
#include "lockorder.h"
#include "core/model.h"
#include "core/queue.h"
#include "futex.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The clock a deadline is kept on.  A relative CLOCK_REALTIME timer
 * measures elapsed time (as Linux's hrtimers do), so it lives on BASE_MONO;
 * only absolute CLOCK_REALTIME timers follow the wall clock. */
enum { BASE_MONO, BASE_REAL, BASE_BOOT, NBASE };

/* Flags of a timer, in the family's memory. */
enum {
	T_USED = 1 << 0,          /* the record is a timer */
	T_CANCEL_ON_SET = 1 << 1, /* absolute CLOCK_REALTIME, CANCEL_ON_SET */
	T_CANCELLED = 1 << 2,     /* clock set since: next read ECANCELED */
	T_SIGNALED = 1 << 3,      /* posted since the last drain */
	T_INBOX = 1 << 4,         /* in its deliverer's inbox */
	T_OUTSIDE = 1 << 5,       /* a forked child with no record of the
	                           * family's has its file: read where we do
	                           * not see it (fork.c) */
	T_DEFERRED = 1 << 6,      /* a wait that delivers sleeps until its
	                           * deadline: hold is its deadline plus
	                           * DELIVER_GRACE (ops.c, tfd_engine_defer) */
	T_COVER = 1 << 7,         /* every wait on it goes through waits that
	                           * deliver (backend.h, cover): while its
	                           * deliverer is its only holder, it is on no
	                           * queue, never posted (deadline.c) */
};

/* How long past a deadline the service thread leaves its post to a wait
 * that delivers it (tfd(7), Delivery). */
#define DELIVER_GRACE (100 * 1000) /* ns */

#define PROC_MAX 64 /* processes of a family that hold timers at once;
                     * one more starts a family of its own (family.c) */
#define NO_PROC (-1)

/* A timer, in the family's memory: 64 bytes (tfd bench, workload 8). */
struct tfd_timer {
	struct tfd_qnode q;     /* [D] place in its deliverer's queue */
	int32_t backoff;        /* [L] hold-back period, <= HOLD_MAX */
	struct tfd_model m;     /* [L] */
	int64_t hold;           /* [L] no post before this (coalescing) */
	uint64_t holders;       /* [L] bit per process record holding it */
	int32_t file;           /* [L] the deliverer's number for the file */
	uint32_t next;          /* [L] next in an inbox or the free list, +1 */
	uint16_t gen;           /* [L] changes when the record is freed */
	signed char deliverer;  /* [L] the record of the process that posts
	                         * to it, or NO_PROC: waiting to be adopted */
	unsigned char clockid;  /* [I] CLOCK_REALTIME, _MONOTONIC, _BOOTTIME */
	unsigned char base;     /* [L] the queue its deadline belongs on */
	unsigned char qbase;    /* [D] the queue it is on, if queued */
	unsigned char flags;    /* [L] T_* */
	unsigned char inflight; /* [S] a post is being written, unlocked:
	                         * set locked, cleared when written; read
	                         * atomically by the others */
};

enum pstate { P_FREE, P_PENDING, P_LIVE };

/* A process of the family, in the family's memory. */
struct tfd_proc {
	pthread_mutex_t alive;  /* held by its service thread while it runs:
	                         * the kernel marks it when the thread dies */
	unsigned wake;          /* futex: its service thread sleeps on it */
	int state;              /* [L] enum pstate */
	pid_t pid;              /* [L] */
	int parent;             /* [L] the record that forked it (pending) */
	int threaded;           /* [L] a service thread holds alive */
	int threadless;         /* [L] a child whose thread could not start
	                         * (fork.c): looked at by its pid */
	int sleeping;           /* [L] its service thread sleeps on wake */
	int adopt;              /* [L] timers it holds may wait for adoption */
	int resync;             /* [L] requeue everything it delivers */
	uint32_t inbox;         /* [L] timers another process changed, +1 */
	int64_t pending_since;  /* [L] mono ns a pending record was first
	                         * seen by a look for the dead, or 0 */
	int64_t sleep_until[NBASE]; /* [L] deadlines its thread sleeps for */
};

struct tfd_family {
	pthread_mutex_t lock;   /* robust, process-shared */
	unsigned sleepers;      /* futex: a thread sleeps waiting for the
	                         * lock (atomic; family.c) */
	unsigned changed;       /* futex: bumped when a wait may end */
	unsigned nwaiting;      /* [A] threads waiting on changed */
	uint64_t inuse;         /* [L] a bit per record not P_FREE: what
	                         * looks at the others looks at these only */
	struct tfd_proc proc[PROC_MAX];
	int64_t vnow[NBASE];    /* [L] the virtual clocks */
	uint64_t timens_ino;    /* [I] its maker's time namespace's inode, the
	                         * frame of every deadline (clock.c; 0: no
	                         * namespace shows) */
	uint32_t free;          /* [L] first free timer record, +1 */
	uint32_t used;          /* [L] records ever handed out */
	uint32_t max;           /* [I] records the mapping has room for */
	unsigned long reaped;   /* [L] processes found dead (tests) */
	unsigned seq;           /* [A] odd while a thread holds the lock, and
	                         * changed by each holder: what a look
	                         * without the lock saw was whole if it was
	                         * even and the same before and after
	                         * (ops.c, tfd_engine_quiet) */
	struct tfd_timer timer[];
};

/* Our family: NULL until the first timer; [A], and changed only by the
 * holder of the lock of the family it names (tfd_family_start_anew), so
 * that it stays as it is while the lock is held. */
extern struct tfd_family *tfd_fam;

/* One process's hold on a timer, in its own memory: the numbers naming
 * it here, the threads waiting on it here, and its copy of the file.
 * 32 bytes, in a chunk of its own (struct tfd_chunk): it never moves, as
 * the slot table, transit records, tfd_eng.freed and the preload's waits
 * point to it. */
struct tfd_hold {
	union {
		struct tfd_timer *t;   /* [L] while it is taken, but on
		                        * tfd_eng.freed */
		struct tfd_hold *next; /* [L] on tfd_eng.freed, or free in
		                        * its chunk */
	};
	int file;        /* [L] this process's number for the timer's file:
	                  * in the private table, or (direct) the user's;
	                  * -1 when there is none to post to */
	unsigned nfds;   /* [L] user descriptors naming it here */
	unsigned waiters; /* [L] tfd_read()s blocked, holds (preload) */
	uint32_t efd_id; /* [L] the eventfd's id (its fdinfo), 0 if unknown:
	                  * a forked child (a copy of this) checks that a
	                  * number it inherited is this file; read at the
	                  * first fork, by the service thread in its own
	                  * table (fork.c, ids_asked), not at create */
	uint16_t gen;    /* [L] t->gen when taken */
	unsigned char direct; /* [L] file is a user number (fallback): set
	                       * at create, or for good when the fallback
	                       * takes over (tfd_engine_holds_direct) */
	unsigned char closed; /* [L] no descriptor left; kept for waiters */
	unsigned char unchecked; /* [L] file is the copy a forked child's
	                          * thread took of its number at fork(),
	                          * its id not yet compared (fork.c) */
	unsigned char listed; /* [L] one of this process's holds (counted in
	                       * tfd_eng.nholds, seen by TFD_HOLDS_EACH); 0:
	                       * free, being made, or on tfd_eng.freed */
	unsigned char ix;     /* [I] its place in its chunk (set as the
	                       * chunk is made) */
	unsigned char mode;   /* [L] MODE_*: O_NONBLOCK of its file as the
	                       * host last set it (backend.h, mode) */
};

enum { MODE_UNKNOWN, MODE_BLOCKING, MODE_NONBLOCK };

/* Holds are kept in chunks of HOLD_CHUNK (4 KB each, from calloc, and
 * never moved), which are also their list: there is no list of pointers
 * to grow, and a hold has no allocator's header of its own.  A chunk is
 * on tfd_eng.room while it has a free hold, else on tfd_eng.full; one
 * left empty is freed unless it is the only one with room (table.c). */
#define HOLD_CHUNK 126
struct tfd_chunk {
	struct tfd_chunk *next, *prev; /* [L] on tfd_eng.room or .full */
	struct tfd_hold *free;  /* [L] its free holds, through next */
	unsigned used;          /* [L] holds taken from it: listed, being
	                         * made, or on tfd_eng.freed */
	struct tfd_hold h[HOLD_CHUNK];
};

/* A tfd_read() blocked in read(2) on number fd, in this process.  Another
 * thread may close fd and make a new timer there before that read(2)
 * starts: the read then waits on the new timer's file, which must keep
 * running for it as the first does (ops.c).  In the reading thread's own
 * memory, never on its stack (waits.c). */
struct tfd_transit {
	struct tfd_transit *next;    /* [L] */
	struct tfd_hold *also[4];    /* [L] timers named fd since; each
	                              * counts this read as a waiter */
	unsigned nalso;              /* [L] */
	int fd;                      /* [L] */
	int closed;                  /* [L] fd was let go of since */
	int busy;                    /* [L] the read is under way */
	uintptr_t sp;                /* [L] where it blocks (waits.c) */
};

enum state { STOPPED, STARTING, RUNNING, STOPPING };

/* A request to the service thread, on the creating thread's stack: take
 * fd's file from thread tid into the private table.  result is the number
 * there, or -errno; done says it is set. */
struct tfd_fetch {
	int fd, tid;
	int result, done;
	uint32_t id; /* the copy's eventfd id */
};

#define FETCH_MAX 64 /* requests queued before create waits */
#define POOL_MAX 32  /* fresh eventfds the service thread keeps ready,
                      * half of them non-blocking */
#define POOL_LOW 8   /* below this of a kind, create asks for more */
#define FREED_MAX 32 /* files of closed timers the thread closes at once
                      * (before, when it next wakes anyway) */

/* This process's part. */
struct tfd_engine {
	struct tfd_hold **slot;  /* [L] by user descriptor */
	size_t nslot;            /* [L] */
	struct tfd_chunk *room;  /* [L] chunks of holds with a free one */
	struct tfd_chunk *full;  /* [L] the others: every hold of this
	                          * process is in one of these (listed) */
	size_t nholds;           /* [L] holds listed */
	size_t ntimers;          /* [L] holds with a descriptor (open) */
	size_t nq[NBASE];        /* [L] holds that may sit on each queue */
	struct tfd_queue q[NBASE]; /* [L] deadlines of what we deliver */
	int self;                /* [L] our record in the family, or -1 */
	enum state state;        /* [L] */
	pthread_t thread;        /* [L] the service thread */
	int tid;                 /* [L] its thread id */
	int private_files;       /* [L] files.c's mechanism is in use (set
	                          * as the service thread starts) */
	int go_direct;           /* [L] it was refused: the service thread
	                          * is to leave for one on the fallback */
	int stop;                /* [L] */
	int clock_set;           /* [L] the watcher saw CLOCK_REALTIME set */
	int want_watch;          /* [L] we deliver a timer of CLOCK_REALTIME's
	                          * deadlines or sets: the watcher runs */
	int in_fork;             /* [L] a fork handler runs: no allocation */
	int start_pending;       /* [L] a forked child's thread to start */
	int64_t start_tried;     /* [L] it could not start (mono ns): a
	                          * child with no thread (fork.c) */
	unsigned keeping;        /* [A] a forked child's new thread copies the
	                          * inherited files; fork() waits (fork.c) */
	int64_t idle_since;      /* [L] no timer left since (mono ns) */
	int64_t grace;           /* [L] ns the thread outlives the last
	                          * timer; 0: GRACE (tests change it) */
	unsigned creating;       /* [L] tfd_create()s under way, which may
	                          * drop the lock: the thread does not end
	                          * for want of timers, and self stays */
	struct tfd_fetch *fetch[FETCH_MAX]; /* [L] */
	unsigned nfetch;         /* [L] */
	int pool[POOL_MAX];      /* [L] numbers in the private table */
	uint32_t pool_id[POOL_MAX]; /* [L] their eventfd ids */
	unsigned char pool_nb[POOL_MAX]; /* [L] that one is O_NONBLOCK */
	unsigned npool;          /* [L] */
	unsigned ids_asked;      /* [L] fork's prepare asks the service thread
	                          * for the ids of the files it holds that
	                          * have none yet (fork.c) */
	unsigned ids_done;       /* [L] the last ask it answered */
	unsigned pool_max;       /* [L] POOL_MAX but in tests */
	struct tfd_hold *freed;  /* [L] holds whose file the service closes */
	unsigned nfreed;         /* [L] on that list */
	int idle_sleep;          /* [L] the thread sleeps GRACE at most */
	struct tfd_transit *transit; /* [L] tfd_read()s blocked in read(2) */
	unsigned long wakeups;   /* [L] times the thread woke (tests) */
	unsigned asleep;         /* [L] waits that deliver sleeping in the
	                          * kernel: a settime of a covered timer
	                          * uncovers it (ops.c, tfd_engine_asleep) */
	int virtual;             /* [L] the clocks are vnow, moved by calls */
	int64_t *vnow;           /* [L] the virtual clocks (the family's) */
	int64_t timens[NBASE];   /* [A] our time namespace's offsets less the
	                          * family's frame's (clock.c): set before
	                          * any thread but the first runs our code */
	unsigned lookers;        /* [A] threads looking at slot and holds
	                          * without the lock (tfd_engine_quiet):
	                          * while there are any, no slot table or
	                          * chunk of holds is freed */
	struct tfd_hold **old_slot[48]; /* [L] slot tables replaced while
	                          * someone looked, freed at the next growth
	                          * nobody looks at */
	unsigned nold_slot;      /* [L] */
};

extern struct tfd_engine tfd_eng;
extern struct tfd_host tfd_host; /* host.c */

_Static_assert(sizeof(struct tfd_timer) <= 64, "a timer record is 64 bytes");
_Static_assert(sizeof(struct tfd_hold) <= 32, "a hold is 32 bytes");
_Static_assert(HOLD_CHUNK <= 256, "a hold's place in its chunk is a byte");
_Static_assert(sizeof(struct tfd_chunk) + 8 <= 4080,
               "a chunk of holds is 4 KB with malloc's header");

/* The chunk h is in. */
static inline struct tfd_chunk *tfd_chunk_of(struct tfd_hold *h)
{
	return (struct tfd_chunk *)(void *)((char *)(h - h->ix) -
	                                    offsetof(struct tfd_chunk, h));
}

/* The first hold listed from place i of chunk c on, then in the chunks
 * after c, and in the full ones after those with room (full: c is one of
 * those already); or NULL. */
static inline struct tfd_hold *tfd_holds_from(struct tfd_chunk *c,
                                              unsigned i, int full)
{
	for (;;) {
		for (; c; c = c->next, i = 0)
			for (; c->used && i < HOLD_CHUNK; i++)
				if (c->h[i].listed)
					return &c->h[i];
		if (full)
			return NULL;
		full = 1;
		c = tfd_eng.full;
		i = 0;
	}
}

static inline struct tfd_hold *tfd_holds_next(struct tfd_hold *h)
{
	struct tfd_chunk *c = tfd_chunk_of(h);

	return tfd_holds_from(c, h->ix + 1U, !c->free);
}

/* Every hold of this process, lock held.  The body may unlist h but not
 * free any hold (tfd_hold_free): chunks stay where they are. */
#define TFD_HOLDS_EACH(h)                                                   \
	for ((h) = tfd_holds_from(tfd_eng.room, 0, 0); (h);                 \
	     (h) = tfd_holds_next(h))

#ifdef TFD_DEBUG_LOCKS
void tfd_engine_assert_locked(void);
#define TFD_ASSERT_LOCKED() tfd_engine_assert_locked()
#else
#define TFD_ASSERT_LOCKED() ((void)0)
#endif

/* family.c */
int tfd_family_open(void);          /* 0, or ENOMEM */
void tfd_engine_lock(int *cancel_state);
void tfd_engine_relock(int *cancel_state); /* without tfd_waits_check:
                                     * a blocked read's, after read(2);
                                     * the family open already */
void tfd_engine_unlock(int cancel_state);
void tfd_family_lock(void);         /* the lock, recovering a dead owner's */
void tfd_family_unlock(void);
int tfd_family_start_anew(void);    /* no room: a family of our own */
int tfd_family_wanted(void);        /* a thread waits for the lock */
void tfd_family_yield(void);        /* let the threads waiting for it in */
void tfd_family_wait(void);         /* drop the lock until `changed` */
void tfd_family_changed(void);      /* end the waits of tfd_family_wait */
struct tfd_timer *tfd_family_new_timer(void); /* NULL: no room */
void tfd_family_free_timer(struct tfd_timer *t);
int tfd_family_new_proc(int parent, int state); /* record, or -1 */
void tfd_family_free_proc(int i);
int tfd_family_alive_dead(int i);   /* its service thread died */
unsigned *tfd_family_watch(int i, unsigned *val); /* a word to sleep on
                                     * until record i's thread dies */
void tfd_family_reap_dead(int thoroughly); /* forget the dead: those
                                     * whose thread died; thoroughly, by pid */
void tfd_family_orphan(struct tfd_timer *t); /* no deliverer: adopt it */
void tfd_family_poke(int i);        /* wake record i's service thread */
void tfd_family_repair(void);

static inline uint64_t tfd_proc_bit(int i)
{
	return (uint64_t)1 << i;
}

/* Each record i of mask (tfd_proc_bit's bits), lowest first. */
#define TFD_PROC_EACH(i, mask, m)                                          \
	for ((m) = (mask); (m) && ((i) = __builtin_ctzll(m), 1);           \
	     (m) &= (m) - 1)

/* table.c */
int tfd_engine_find(int fd, struct tfd_hold **h);
void tfd_engine_let_hold_go(struct tfd_hold *h); /* the last reference */
int tfd_engine_wait_inflight(struct tfd_hold *h); /* may drop the lock;
                                      * 1 if h was closed meanwhile */
struct tfd_hold *tfd_hold_new(void); /* zeroed, not listed; or NULL */
void tfd_hold_free(struct tfd_hold *h); /* not listed */
int tfd_engine_hold_file(struct tfd_hold *h, int service); /* its file
                                 * here, taken now if need be, or -1 */
void tfd_engine_hold_add(struct tfd_hold *h); /* listed */
void tfd_engine_holds_direct(int own); /* the fallback from now on;
                                      * own: the caller's table is its own */

/* ops.c */
void tfd_engine_number_gone(int fd);  /* fd no longer names a timer */
void tfd_engine_number_named(int fd, struct tfd_hold *h); /* now it does */
int tfd_engine_settime(int fd, int flags, const struct itimerspec *nv,
                       struct itimerspec *old);
int tfd_engine_gettime(int fd, struct itimerspec *cur);
int tfd_engine_read(int fd, uint64_t *count);
int tfd_engine_quiet(int fd);
uint64_t tfd_engine_drain(struct tfd_timer *t, int fd);
int tfd_engine_next_due(int64_t *in_ns);
int tfd_engine_ready_begin(void);
int tfd_engine_ready(int fd, int64_t *mono, int *drifts);
void tfd_engine_defer(int fd, int waits);
int tfd_engine_cover(int fd, int on);
void tfd_engine_mode(int fd, int nonblock);
void tfd_engine_asleep(int d);
int tfd_engine_post_due(int fd);

/* deadline.c */
void tfd_engine_requeue(struct tfd_timer *t); /* its deadline changed */
void tfd_engine_unqueue(struct tfd_timer *t); /* ours: off our queues */
void tfd_engine_kick(struct tfd_timer *t);    /* wake its deliverer if
                                               * it sleeps past it */
void tfd_engine_inbox_unlink(struct tfd_timer *t);
void tfd_engine_uncover(struct tfd_timer *t); /* T_COVER off: queued,
                                               * and its deliverer woken */
void tfd_engine_sync(int service); /* inbox, adoption, resync: lock
                                   * held; service: on its thread */
int tfd_engine_sync_pending(void);
int tfd_engine_reserve(unsigned mask); /* room on our queues, 0 or ENOMEM */
void tfd_engine_unreserve(unsigned mask);
void tfd_engine_queues_forget(void); /* in a child: empty, nodes untouched */

/* service.c */
unsigned tfd_engine_pool_count(int nonblock);
void tfd_engine_pool_drop(unsigned i); /* forget entry i, lock held */
int tfd_engine_start(void);       /* lock held; may drop it */
void tfd_engine_stop_if_idle(void); /* lock held */
void tfd_engine_free_later(struct tfd_hold *h); /* its file: the thread's */
void tfd_engine_stop_now(void);   /* lock held; may drop it */
int tfd_engine_go_direct(void);   /* lock held; may drop it */
void tfd_engine_poke(void);       /* wake our service thread */
void tfd_engine_after_fork(void);

/* files.c */
int tfd_files_private(void);          /* 1 if the mechanism works */
int tfd_files_refused(int e);         /* e says it no longer does */
int tfd_files_unshare(void);          /* in a new thread: empty table */
int tfd_files_close_range(unsigned lo, unsigned hi); /* unshares too */
int tfd_files_fetch(int tid, int fd); /* >= 0, or -errno */
void tfd_files_close(int fd);         /* a number of the thread's table */
int tfd_files_fresh(int nonblock);    /* a new eventfd there, or -1 */
int tfd_files_take(int tid, int k, int flags, int *fd);
int tfd_files_pin(void);              /* the service thread's pidfd, or -1 */
uint32_t tfd_files_id(int k);         /* eventfd k's id here, or 0 */
uint32_t tfd_files_id_program(int k); /* in the program's table */

/* clock.c */
int64_t tfd_clock_now(int base);  /* the system's or the virtual clock */
int64_t tfd_clock_real(int base); /* the system's, as we read it */
int64_t tfd_clock_to_shared(int base, int64_t at); /* an absolute time */
int64_t tfd_clock_to_local(int base, int64_t at);
void tfd_clock_frame_made(struct tfd_family *f); /* f: ours */
void tfd_clock_frame_forked(void);

/* The system's clock in the family's frame (inline: the quiet read's). */
static inline int64_t tfd_clock_shared(int base)
{
	return tfd_clock_real(base) - tfd_eng.timens[base];
}
int tfd_clock_base(int clockid, int absolute);
unsigned tfd_clock_queues(int clockid); /* bases a timer may sit on */
int tfd_clock_watch_ensure(void); /* lock held; may drop it */
void tfd_clock_watch_service(void); /* service thread, lock held */
void tfd_clock_watch_stop(void);  /* service thread, as it ends */
void tfd_clock_watch_forked(void);
void tfd_clock_was_set(void);     /* lock held; posts (service, virtual) */

/* Post t's counted ticks now, from a thread that can reach t->file (the
 * service thread, or any on the fallback); lock held. */
void tfd_engine_post_locked(struct tfd_timer *t);

/* virtual.c */
void tfd_engine_virtual_deliver(const int64_t *before);
int tfd_engine_virtual_foreign(struct tfd_hold *h); /* its file, or -1 */
int tfd_engine_virtual_shared(void); /* another process has a record */
int tfd_engine_virtual_use(int on);
int tfd_engine_virtual_move(int64_t d_mono, int64_t d_boot, int64_t d_real,
                     const int64_t *real_to, int was_set);
int tfd_engine_virtual_now(int clockid, int64_t *ns);

/* waits.c */
struct tfd_transit *tfd_waits_read_begin(int fd, struct tfd_hold *h,
                                         uintptr_t sp); /* NULL: none
                                     * left (h counted all the same) */
void tfd_waits_read_end(struct tfd_transit *r);
void tfd_waits_transit_end(struct tfd_transit *r);
int tfd_waits_hold(struct tfd_hold *h);   /* 0, or ENOMEM */
int tfd_waits_unhold(struct tfd_hold *h); /* 1 if it was held */
void tfd_waits_check(void);  /* lock held: undo what was abandoned,
                              * if tfd_waits_blocked */
extern __thread unsigned tfd_waits_blocked
	__attribute__((tls_model("initial-exec")));
void tfd_waits_forget(void); /* in a forked child */

/* fork.c */
void tfd_engine_fork_init(void);
void tfd_engine_start_pending(void); /* lock held: see tfd_eng.start_pending */
int tfd_engine_keep_inherited(void); /* the child's new service thread */

/* This process alone holds t: what it knows of t's file (who waits on
 * it, its flags) no other process changes. */
static inline int tfd_engine_alone(const struct tfd_timer *t)
{
	return tfd_eng.self >= 0 && t->holders == tfd_proc_bit(tfd_eng.self);
}

/* A thread may be looking at the slot table and holds without the lock
 * (tfd_engine_quiet): none of them may be freed now.  A full barrier
 * first, so that a look that began after it sees what the caller has
 * unlinked as unlinked. */
static inline int tfd_engine_looked_at(void)
{
#ifdef TFD_TSAN
	return 0; /* nothing looks without the lock there (ops.c) */
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&tfd_eng.lookers, __ATOMIC_SEQ_CST) != 0;
#endif
}

/* The timer whose queue node is n. */
static inline struct tfd_timer *tfd_timer_of(struct tfd_qnode *n)
{
	return (struct tfd_timer *)(void *)((char *)n -
	                                    offsetof(struct tfd_timer, q));
}

#endif
