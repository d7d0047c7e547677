/* SPDX-License-Identifier: MIT */
/*
 * domain.h - internal to src/vtime/ (its interface is vtime.h): the
 * memory that every process of a `tfd exec --backend virtual` tree maps,
 * and what the files of this folder share of it.
 *
 * One clock.  The three virtual clocks are written by the mover alone,
 * under a sequence count; every process reads them from here.
 *
 * One table of threads.  Every thread of every process of the tree has a
 * slot from the moment it exists (its creator takes the slot for it, the
 * forking thread for its child) to the moment it ends.  A slot is RUN
 * (the thread runs, or is blocked somewhere we do not see: only /proc can
 * tell) or WAIT (the thread is in one of our waits, with what ends it:
 * a deadline on the virtual CLOCK_MONOTONIC, and its kind).  A thread in
 * a wait blocks in the kernel (ppoll, epoll_pwait, pselect...) with the
 * signal DOM_POKE_SIG let through: the mover sends it when time reaches
 * the deadline, or to ask for another look.
 *
 * Time moves only when every slot is WAIT, or RUN with its thread blocked
 * in the kernel and not running (/proc, or parked: in an untimed wait of
 * the C library's that only a wake the tree makes can end, none made
 * since), and every wait that something
 * else than time could end has looked, without blocking, after the last
 * thing that could have ended it: then nothing can end any wait but time,
 * and the mover moves the clocks to the earliest deadline of the tree
 * (or up to the timer slack past it: verdict.c).
 * But while a wait is on the outside (a descriptor whose other end may
 * be held outside the tree: waits.c), time flows there at the real rate
 * instead of jumping, and stops at that deadline (cap).
 *
 * Nothing of this is in a program's descriptor table: the memory is a
 * memfd of the mover's, which each process opens through
 * /proc/<mover>/fd/<n> (TFD_DOMAIN=<mover>:<n>), maps and closes at once.
 */
#ifndef TFD_DOMAIN_H
#define TFD_DOMAIN_H

#include "futex.h"
#include "vtime/vtime.h"

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#define DOM_MAGIC 0x74666431u /* "tfd1" */
#define DOM_SLOTS 2048
#define DOM_PROCS 512
#define DOM_INHERITED 64
#define DOM_PORTS 256 /* the last ports of the tree's sockets kept */
#define DOM_WOKEN 4096 /* buckets of the objects woken (dom_woke) */

enum dom_state { DS_FREE, DS_RUN, DS_WAIT };

enum dom_kind {
	DK_SLEEP = 1, /* only time (or a signal to the thread) ends it */
	DK_KERNEL,    /* blocked in the kernel on something else as well
	               * (descriptors, signals): poked with DOM_POKE_SIG */
	DK_SLICE,     /* a real wait in slices (a condition, a lock): poked
	               * at its deadline, which ends its slice; blocked there
	               * as /proc tells (waits.c) */
};

struct dom_slot {
	int32_t tid;       /* 0 free; -1 taken, thread not started yet;
	                    * -3 being named */
	int32_t pid;       /* its process (-1: a child not forked yet;
	                    * DOM_UNNAMED: a child the C library starts) */
	int32_t parent;    /* for a child's slot: the process forking it */
	uint32_t pad1;
	uint32_t state;    /* dom_state */
	uint32_t kind;     /* dom_kind, while WAIT */
	uint32_t looked;   /* its look since it registered found nothing */
	uint64_t look;     /* act when its last look began */
	uint64_t look_round; /* the mover's round when it began */
	uint64_t poked;    /* the mover's round when it was last poked */
	int64_t deadline;  /* virtual CLOCK_MONOTONIC ns, DOM_NEVER */
	uint32_t quiet;    /* its look began with no other thread running */
	uint32_t inlib;    /* inside the library's code, which may wait a
	                    * moment for a lock of ours: running, whatever
	                    * /proc shows; DOM_LEAVING: in exit(),
	                    * DOM_ALONE: in pthread_exit(), the first
	                    * thread of its process */
	uint32_t outside;  /* its wait is on a descriptor whose other end
	                    * may be held outside the tree (while WAIT) */
	uint32_t slice_ended; /* a poke ended its wait in slices' slice: it
	                       * is on its way out of the C library's wait,
	                       * or blocked there for the program's mutex */
	uint32_t park_gen; /* parked in a join of the slot's thread of
	                    * this generation */
	uint64_t park;     /* parked (waits.c: dom_park_word()), 0 not */
	uint64_t thread;   /* its pthread_t, once known */
	uint32_t gen;      /* taken this many times */
	uint32_t pad3;
	uint64_t signalled; /* the wakes count at the last signal sent to
	                     * it or its process by the tree */
};

struct dom_proc {
	int32_t pid;       /* 0 free */
	int32_t kwaiters;  /* threads of it in DK_KERNEL waits */
	uint32_t wake;     /* futex word of its agent (a thread of ours that
	                    * delivers its timers when time reaches them) */
	uint32_t agent;    /* it has one */
	int64_t next_due;  /* earliest expiry that makes one of its timers
	                    * readable or sends one of its signals */
	uint32_t skipped;  /* that look passed over a readable timer whose
	                    * file may be read where it does not see it */
	uint32_t relook;   /* the mover asks its agent to look again */
	uint32_t relooked; /* the last such request the agent answered */
	uint32_t alone;    /* its first thread ended alone (pthread_exit):
	                    * a zombie first thread is not its end */
	uint32_t uring;    /* it made an io_uring (or its parent did): the
	                    * kernel's workers may run for it (busy.c) */
	uint64_t relook_act; /* the mover's: act when it last asked */
};

struct tfd_dom {
	uint32_t magic;
	uint32_t size;
	uint32_t gen;        /* futex word: bumped at every change */
	uint32_t sleeping;   /* the mover sleeps on gen */
	/* act << ACT_SHIFT | slots in RUN: act is bumped whenever a thread
	 * starts running (or something else happens that may end a wait),
	 * and read with the count in one load. */
	uint64_t actrun;
	uint64_t round;      /* the mover's rounds of looks */
	int32_t mover;       /* its pid */
	uint32_t fdgen;      /* bumped after every epoll_ctl, close, dup2,
	                      * dup3, close_range, closefrom of the tree's
	                      * (outside.c) */
	uint32_t ended;      /* the mover is gone: time flows for real */
	uint32_t seq;        /* clocks: odd while the mover writes them */
	int64_t vbase[3];    /* CLOCK_MONOTONIC, _REALTIME, _BOOTTIME */
	int64_t rbase;       /* the system's CLOCK_MONOTONIC at vbase */
	uint32_t rate_milli; /* busy mode: time flows at rate/1000 of the
	                      * real rate between jumps; 0 pure */
	uint32_t hiwater;    /* no slot in use at or above */
	uint32_t phiwater;   /* no process in use at or above */
	uint32_t flowing;    /* time flows at the real rate between jumps:
	                      * a thread runs busy while something waits
	                      * on a deadline (busy.c); written with the
	                      * clocks, under seq */
	uint64_t jumps;      /* moves of the clocks (tests, figures) */
	int64_t cap;         /* while time flows for a wait on the outside:
	                      * the clocks stop at this CLOCK_MONOTONIC (the
	                      * tree's next deadline, reached exactly);
	                      * DOM_NEVER else; written under seq */
	uint32_t ninherited; /* descriptors the tree inherited from outside */
	uint32_t slack_ns;   /* waits due within this of the earliest end
	                      * at one move (verdict.c: timer slack) */
	struct {
		uint64_t dev, ino;
	} inherited[DOM_INHERITED]; /* their identities, written at start */
	uint32_t nports;     /* ports told (outside.c), the last DOM_PORTS
	                      * kept in port[], as a ring */
	uint32_t pad4;
	uint64_t wakes;      /* wakes the tree made (a condition signalled or
	                      * broadcast, a semaphore posted, the end of a
	                      * wait on one, a signal sent, a thread
	                      * cancelled, a process ended): their count */
	uint64_t signalled;  /* the last signal to any thread (killpg...) */
	uint64_t woken[DOM_WOKEN]; /* the last wake of each bucket of the
	                            * objects woken; [0]: of anything */
	uint64_t made[DOM_WOKEN];   /* of those, the last a thread made (a
	                             * signal, broadcast or post), not a
	                             * wait's end: dom_wait_ended() */
	uint64_t passed[DOM_WOKEN]; /* the last end of a wait that may have
	                             * passed on a wake made */
	uint64_t port[DOM_PORTS]; /* a TCP or UDP port a process of the tree
	                           * bound, listened or connected at: the
	                           * socket's type and port, and the pid */
	struct dom_slot slot[DOM_SLOTS];
	struct dom_proc proc[DOM_PROCS];
};

#define DOM_LEAVING 0x80000000u /* inlib: the process is exiting */
#define DOM_ALONE 0x40000000u   /* inlib: its first thread ends alone */
#define DOM_UNNAMED (-2)        /* pid of a slot its child claims */
#define ACT_SHIFT 24
#define ACT_ONE ((uint64_t)1 << ACT_SHIFT)
#define NRUN(ar) ((uint32_t)((ar) & (ACT_ONE - 1)))

/* ---- what the files of this folder share ---- */

/*
 * Parked (vtime.h: tfd_dom_park): a slot's park word is
 * (wakes count + 1) << 14 | what << 1 | verified, 0 when not parked: the
 * count when the thread parked or, verified, when the mover last knew it
 * blocked there; what it waits on, the bucket of its object (dom_bucket:
 * 1 and up; 0 is anything's, for the wakes of woken[]) or DOM_PARK_JOIN
 * and the slot of the thread it joins (of generation park_gen).
 */
#define DOM_PARK_JOIN 0x1000u
#define DOM_PARK_WHAT 0x1fffu
static inline uint32_t dom_bucket(const void *obj)
{
	uint64_t a = (uint64_t)(uintptr_t)obj >> 3;

	a ^= a >> 12 ^ a >> 24;
	return !obj ? 0 : 1 + (uint32_t)(a % (DOM_WOKEN - 1));
}

static inline uint64_t dom_park_word(uint64_t wakes, uint32_t what,
                                     int verified)
{
	return (wakes + 1) << 14 | (uint64_t)what << 1 |
	       (uint64_t)(verified != 0);
}

static inline void dom_raise(uint64_t *last, uint64_t e)
{
	uint64_t was = __atomic_load_n(last, __ATOMIC_SEQ_CST);

	while (was < e && !__atomic_compare_exchange_n(last, &was, e, 0,
	                                               __ATOMIC_SEQ_CST,
	                                               __ATOMIC_SEQ_CST))
		;
}

/* A wake of obj (NULL: of anything) made, told after the wake itself: a
 * thread it woke has run, or is runnable, when the mover next looks at it
 * in /proc, or when the wake is seen. */
static inline void dom_woke(struct tfd_dom *d, const void *obj)
{
	uint32_t b = dom_bucket(obj);
	uint64_t e;

	/* made first, past the count as it is: a waiter that parks before
	 * the count moves (and may take this wake) then has its count below
	 * it, whenever another's end looks (dom_wait_ended). */
	dom_raise(&d->made[b], __atomic_load_n(&d->wakes, __ATOMIC_SEQ_CST) + 1);
	e = __atomic_add_fetch(&d->wakes, 1, __ATOMIC_SEQ_CST);
	dom_raise(&d->woken[b], e);
}

/*
 * A wait of the C library's on obj, parked since the wakes count from,
 * has ended (timed_out: with ETIMEDOUT); told after it ends.  Its end
 * may pass on a wake to another waiter, unseen: glibc's condition wait
 * that times out (or is cancelled) after it took a signal sends another,
 * and one that took a signal perhaps meant for a later waiter adds one.
 * Either needs a signal made to reach the waiter, since it parked, or
 * passed on to it.  So its end is a wake of obj if it did not time out,
 * or if a wake of obj was made since it parked (or of anything), and
 * then one that may be passed on again; or, at one remove, if such an
 * end came since it parked.  Further removes are not told: two waits
 * that time out in turn on one condition would else leave each other to
 * /proc for ever (a JVM's compiler threads), where glibc passes nothing.
 * (glibc's timed-out wait also broadcasts, unseen, when the count of its
 * group's waiters would overflow: after 2^29 timeouts with no signal.)
 */
static inline void dom_wait_ended(struct tfd_dom *d, const void *obj,
                                  uint64_t from, int timed_out)
{
	uint32_t b = dom_bucket(obj);
	int first = !timed_out ||
	            __atomic_load_n(&d->made[b], __ATOMIC_SEQ_CST) > from ||
	            __atomic_load_n(&d->made[0], __ATOMIC_SEQ_CST) > from;
	uint64_t e;

	if (!first && __atomic_load_n(&d->passed[b], __ATOMIC_SEQ_CST) <= from)
		return;
	if (first) /* (before the count moves: as dom_woke() does made) */
		dom_raise(&d->passed[b],
		          __atomic_load_n(&d->wakes, __ATOMIC_SEQ_CST) + 1);
	e = __atomic_add_fetch(&d->wakes, 1, __ATOMIC_SEQ_CST);
	dom_raise(&d->woken[b], e);
}

/* A signal sent (after it is) to thread tid of process pid (tid 0: to
 * the process; pid 0: to any thread of the tree). */
static inline void dom_signalled(struct tfd_dom *d, int32_t pid,
                                 int32_t tid)
{
	uint64_t e = __atomic_add_fetch(&d->wakes, 1, __ATOMIC_SEQ_CST);
	uint32_t k, hi = __atomic_load_n(&d->hiwater, __ATOMIC_ACQUIRE);

	if (pid <= 0) {
		dom_raise(&d->signalled, e);
		return;
	}
	for (k = 0; k < hi; k++)
		if (__atomic_load_n(&d->slot[k].pid, __ATOMIC_RELAXED) == pid &&
		    (tid <= 0 ||
		     __atomic_load_n(&d->slot[k].tid, __ATOMIC_RELAXED) == tid))
			dom_raise(&d->slot[k].signalled, e);
}

/* shm.c */
struct tfd_dom *tfd_dom_map(const char *name); /* TFD_DOMAIN=<pid>:<fd> */
int64_t tfd_dom_real_mono(void);
/* Real ns until deadline in busy mode (time flows), -1 in pure mode. */
int64_t tfd_dom_real_left(const struct tfd_dom *d, int64_t deadline);

/* slots.c */
extern struct dom_proc *tfd_dom_me; /* this process's record, or NULL */
struct dom_slot *tfd_dom_self_slot(void);
struct dom_proc *tfd_dom_proc_take(int32_t pid);
void tfd_dom_procs_forget(int32_t pid);
int tfd_dom_slots_adopt(int32_t pid, int32_t tid);
void tfd_dom_slots_for_others(int32_t pid, int32_t self);
int32_t tfd_dom_slot_pid(const struct tfd_dom *d, uint32_t i);
int tfd_dom_pid_in_tree(int32_t pid);
/* Whether process pid has ended, as /proc tells (procfs.c): a slot may
 * name it until the mover reclaims it. */
int tfd_dom_proc_ended(int32_t pid);

/* step.c */
void tfd_dom_engine_start(void);

#endif
