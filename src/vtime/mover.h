/* SPDX-License-Identifier: MIT */
/*
 * mover.h - the mover's parts, inside src/vtime/ (vtime.h is the
 * interface).  Everything the mover keeps between two steps is in one
 * struct mover, made by tfd_dom_move() and given to each part:
 *
 *   mover.c    the loop and its step: look, then move time or sleep
 *   clocks.c   the clocks set, time let flow or stand; the end, the watch
 *   verdict.c  what the slots and the processes' deadlines say
 *   procs.c    processes on their way out, ended, stopped, continued
 *   busy.c     the threads outside our waits: blocked, running, busy
 *   procfs.c   /proc's task files, read each time or kept open
 */
#ifndef TFD_VTIME_MOVER_H
#define TFD_VTIME_MOVER_H

#include "vtime/domain.h"

/*
 * What /proc says of a thread: its state and its process's threads (from
 * stat, the cheapest of its files with them), whether it has SIGKILL
 * pending, and a count that grows whenever it runs: schedstat's CPU time
 * and times run (stat and schedstat together cost half what status does,
 * which a kernel without schedstat gives instead: its context switches).
 * The CPU time, not the times run alone: a thread seen S before its
 * switch away (it sets its state, then schedules) may be woken before
 * that switch and block again without being switched in anew; the CPU
 * time it used meanwhile is counted at the latest as it blocks.
 */
struct seen {
	char state;   /* R S D T t Z X..., 0 gone or unreadable */
	int killed;   /* SIGKILL pending: a fatal signal, or exit_group() in
	               * another thread (the kernel sends it to the others) */
	long threads; /* of its process */
	int64_t runs; /* grows whenever it runs */
	int64_t cpu;  /* its CPU time in ns (schedstat), 0 or less unknown */
};

enum verdict {
	V_BUSY,    /* something runs: wait for a change */
	V_SOON,    /* waiting for looks, or for what is due: a change, or a
	            * moment */
	V_IDLE,    /* all blocked, no deadline */
	V_MOVE,    /* all blocked: move to to */
};

/* One look at the domain (verdict.c), and what busy.c adds to it. */
struct eval {
	enum verdict v;
	int64_t now;   /* the virtual CLOCK_MONOTONIC when it began */
	uint64_t act;  /* the domain's act then */
	int64_t to;    /* where time jumps (slack_to()) */
	int64_t first; /* the earliest deadline */
	int64_t best;  /* the earliest deadline of a wait */
	int64_t timer; /* the earliest of a process's timers */
	int invalid;   /* a wait's look is stale */
	int ndl;
	int64_t dl[DOM_SLOTS]; /* the waits' deadlines ahead (slack_to()) */
	int exiting; /* a thread is on its way out: nothing tells its end */
	int timed;   /* a wait or a timer of the tree has a deadline */
	int busy;    /* a thread outside our waits runs busy (busy_thread) */
	int outside; /* a wait is on the outside (waits.c) */
	int nout;
	int out[DOM_SLOTS]; /* slots in RUN, blocked outside our waits, and
	                     * in waits in slices that have looked */
	int64_t sw[DOM_SLOTS]; /* their runs counts (seen), -1: gone,
	                        * RUNS_PARKED: parked (busy.c) */
};

/* A thread parked (vtime.h: tfd_dom_park) and not woken since: blocked,
 * and not run since, as two looks in /proc would say. */
#define RUNS_PARKED INT64_MAX

/* What the next step does first if the sleep before it ended with
 * nothing told. */
enum after { AFTER_NOTHING, AFTER_SWEEP, AFTER_REPOKE };

struct mover {
	struct tfd_dom *d;
	void (*moved)(void *, int64_t, int64_t);
	void *ctx;

	/* mover.c: the step's */
	struct eval e, snap;  /* this look; the one that began the round */
	int64_t backoff;      /* looking at threads outside our waits or on
	                       * their way out: 20 us .. 5 ms */
	int64_t hold;         /* at a process on its way out, the same */
	int verified, repoke;
	enum after after;
	uint64_t round_act;   /* act when the current round of looks began:
	                       * the threads then running were all blocked
	                       * outside our waits, and none has run since */

	/* procs.c */
	int64_t grace_until;  /* /proc is not believed until then */
	int32_t stopped[DOM_PROCS]; /* by record: its pid, if stopped */
	int nstopped;
	struct {
		int32_t pid;
		long threads; /* its threads when last looked at */
	} nthreads[DOM_PROCS];

	/* busy.c: the count of signals each parked thread was last seen
	 * blocked after (parked()), by slot */
	uint64_t sig_seen[DOM_SLOTS];
	/* busy.c: a thread seen running, when first seen so */
	struct {
		int32_t tid;
		long vol;    /* its voluntary switches when noted */
		int64_t cpu; /* its CPU time then */
	} mark[DOM_SLOTS];

	/* procfs.c */
	int no_schedstat;     /* -1: not known yet */
	int keep_files, nkept, kept_max;
	struct {
		int32_t pid, tid;
		int fd1[3]; /* stat's, the runs count's and status (busy.c),
		             * fd + 1, 0: none */
	} kept[DOM_SLOTS];
	struct {
		int32_t pid;
		int fd1; /* its first thread's stat, fd + 1, 0: none */
	} kproc[DOM_PROCS];
};

/* procfs.c */
struct seen tfd_dom_look_stat(int pid, int tid);
struct seen tfd_dom_look_thread(struct mover *m, int pid, int tid);
struct seen tfd_dom_look_slot(struct mover *m, const struct dom_slot *s);
/* Its state alone (no runs count): one read. */
struct seen tfd_dom_look_slot_state(struct mover *m,
                                    const struct dom_slot *s);
void tfd_dom_drop_kept(struct mover *m, size_t k);
void tfd_dom_drop_all_kept(struct mover *m);
struct seen tfd_dom_look_leader(struct mover *m, size_t i, int32_t pid);
long tfd_dom_thread_blocked_count(int pid, int tid);
long tfd_dom_slot_blocked_count(struct mover *m, const struct dom_slot *s);
int64_t tfd_dom_thread_cpu(int pid, int tid);
void tfd_dom_keep_files(struct mover *m);
int tfd_dom_all_stopped(int32_t pid);
/* 1 if a thread of the kernel's io_uring runs for pid (procfs.c). */
int tfd_dom_uring_busy(int32_t pid);
/* 1 if pid has a thread of the kernel's io_uring at all. */
int tfd_dom_uring_threads(int32_t pid);

/* procs.c */
int tfd_dom_proc_dead(int pid);
int tfd_dom_rec_dead(struct mover *m, size_t i, int32_t pid);
int tfd_dom_slot_dead(struct dom_slot *s, int known[2]);
void tfd_dom_reclaim(struct mover *m, struct dom_slot *s);
void tfd_dom_grace(struct mover *m);
void tfd_dom_starting_gone(struct mover *m, struct dom_slot *s);
int tfd_dom_is_stopped(const struct mover *m, int32_t pid);
int tfd_dom_continued(struct mover *m);
enum sweep { SW_SETTLED, SW_CHANGED, SW_HOLD };
enum sweep tfd_dom_procs_sweep(struct mover *m);
int tfd_dom_deadline_alive(struct mover *m, int64_t to);
int tfd_dom_relooks_pending(struct mover *m);
void tfd_dom_proc_forget(struct dom_proc *p, int32_t pid);

/* verdict.c */
void tfd_dom_evaluate(struct mover *m);

/* busy.c */
int tfd_dom_outside_blocked(struct mover *m);
int tfd_dom_outside_still(struct mover *m);
int tfd_dom_uring_hold(struct mover *m);

/* clocks.c */
void tfd_dom_set_clocks(struct tfd_dom *d, int64_t mono);
void tfd_dom_flow_to(struct tfd_dom *d, int on, int64_t cap);

#endif
