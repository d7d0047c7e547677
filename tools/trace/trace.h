/* SPDX-License-Identifier: MIT */
/*
 * trace.h - tfd trace: read the lines that `tfd exec --trace FILE`
 * (libtfd-preload.so, TFD_TRACE) wrote, and say per timer what it was, how
 * it was armed, what it delivered and how late; with --html or --svg, draw
 * it as a timeline, one lane per timer.  See tfd(1) and tfd-preload(7),
 * TRACE, for the lines:
 *
 *   TIME PID FD CALL(ARGS) [EXTRA] = RESULT
 *
 * Lateness is that of each read that returned a count: the read's time
 * minus the deadline of the last expiration it counted, from the deadline
 * armed (the "[next R]" of timerfd_settime: the first expiry is at TIME +
 * R) and the interval.  A negative lateness is an early expiration: a
 * count reported before its time.
 *
 * What is where:
 *   trace.c    the command: its options, the files it writes
 *   parse.c    the lines of the file, one by one, into the model
 *   model.c    the model: the timers, which numbers name them in which
 *              process, their events; the arming in force and what it
 *              makes due; the lateness of each read
 *   summary.c  the text: per timer, its life, arms, expirations, reads,
 *              lateness
 *   svg.c      the picture: SVG, alone or in an HTML page with the text
 *   chrome.c   the events for a trace viewer: Chrome's trace-event JSON
 */
#ifndef TFD_TRACE_H
#define TFD_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "core/time.h" /* TFD_NSEC */


/* ---- what the trace holds (model.c) ---- */

enum ev_kind {
	EV_ARM,    /* a = value (ns on its clock), b = interval, c = first
	              expiry on the trace's clock (-1: unknown), flag =
	              absolute (-1 for a value or interval not valid) */
	EV_DISARM,
	EV_READ,   /* a = count, c = the deadline of the last expiration it
	              counted (NO_DEADLINE: not known) */
	EV_EAGAIN, /* a read with nothing to read */
	EV_RFAIL,  /* a read that failed otherwise: a = 1 for ECANCELED */
	EV_CLOSE,  /* the last number of the timer was closed */
};

struct ev {
	int64_t t;
	enum ev_kind kind;
	int flag;
	int64_t a, b, c;
};
#define NO_DEADLINE INT64_MIN

struct hist { /* counts returned by reads: value, reads */
	uint64_t v;
	long n;
};

struct timer {
	int id, pid, fd, inherited;
	char clock[32], flags[64];
	int64_t created, closed; /* closed: -1 while open */
	int numbers;             /* descriptors naming it now */
	struct ev *ev;
	size_t nev, cap;
	/* the arming in force, for the lateness of reads */
	int armed, absolute;
	int64_t first, interval, armed_at;
	uint64_t seen;  /* expirations read since it was armed */
	int64_t past;   /* expirations already due when armed (absolute):
	                   -1 until the first read tells */
	/* totals */
	long arms, arms_abs, disarms, reads, eagain, rfail, cancels, queries,
	     dups, sfail;
	uint64_t expirations, due;
	int due_unknown; /* armed once with no known deadline */
	int64_t *late;
	size_t nlate, caplate;
	long early;
	struct hist hist[8];
	int nhist;
	long hist_other;
	int64_t last_value, last_interval;
	struct timer *next;
};

/* (pid, fd) -> timer, for the numbers open now. */
struct name {
	int pid, fd;
	struct timer *t;
	struct name *next;
};
#define NBUCKETS 4096

struct trace {
	const char *file;
	struct timer *first, **tail;
	int ntimers;
	struct name *names[NBUCKETS];
	int64_t t0, t1; /* first and last time */
	long lines, other, nprocs;
	int pids[64];
	int npids;
	struct adv {    /* virtual-advance: when, and by how much */
		int64_t t, d;
	} *adv;
	size_t nadv, capadv;
	struct prog {   /* exec(PROG), written by tfd exec: pid's program */
		int pid;
		char name[64];
	} *progs;
	size_t nprogs, capprogs;
};

/* ---- the model (model.c) ---- */

/* p grown to hold more than n elements of size (double the capacity);
 * out of memory ends the program (exit 1). */
void *trace_grow(void *p, size_t *cap, size_t n, size_t size);
void trace_init(struct trace *tr, const char *file);
/* A line at t of process pid: the span of the trace, its processes. */
void trace_seen(struct trace *tr, int64_t t, int pid);
/* The timer fd names in pid, or NULL. */
struct timer *trace_lookup(struct trace *tr, int pid, int fd);
/* fd names t in pid from now (what it named before is let go). */
void trace_name(struct trace *tr, int pid, int fd, struct timer *t,
                int64_t now);
/* The number stops naming its timer; the timer is closed with its last. */
void trace_unname(struct trace *tr, int pid, int fd, int64_t t);
struct timer *trace_new_timer(struct trace *tr, int pid, int fd, int64_t t);
/* The timer fd names in pid; one not created in the trace (inherited
 * across fork, or the trace began later) is made up. */
struct timer *trace_timer_of(struct trace *tr, int pid, int fd, int64_t t);
void trace_add_ev(struct timer *tm, int64_t t, enum ev_kind k, int64_t a,
                  int64_t b, int64_t c, int flag);
/* A timerfd_settime at t that succeeded: value v and interval iv (-1: not
 * valid), absolute or not; r the time to the first expiry the call's
 * query gave ("[next R]"), or -1.  v == 0 disarms. */
void trace_arm(struct timer *tm, int64_t t, int64_t v, int64_t iv, int64_t r,
               int absolute);
/* A read at t that returned count. */
void trace_read_count(struct timer *tm, int64_t t, uint64_t count);
/* A read at t that failed with the error named err ("EAGAIN"...). */
void trace_read_failed(struct timer *tm, int64_t t, const char *err);
/* A move of virtual time at t by d. */
void trace_advance(struct trace *tr, int64_t t, int64_t d);
/* pid is the program path (len bytes of text; its last part is kept). */
void trace_program(struct trace *tr, int pid, const char *path, size_t len);
/* The name of pid's program, or NULL when the trace does not say. */
const char *trace_program_name(const struct trace *tr, int pid);
/* The end of the file: every arming in force ends. */
void trace_end(struct trace *tr);
void trace_free(struct trace *tr);

/* ---- the file (parse.c) ---- */

/* The whole file (- : standard input) into tr: 0, or 1 with the one-line
 * error printed (a file that cannot be read, a line that is not a trace
 * line: its number, and its start unless it holds binary data). */
int trace_read(struct trace *tr, const char *file);

/* ---- the text (summary.c) ---- */

/* The p-th percentile (nearest rank) of the sorted v[n]. */
int64_t trace_pct(const int64_t *v, size_t n, int p);
/* A duration for people: "7 s", "0.5 s", "20 ms", "68.2 us", "150 ns"
 * (us: the name of microseconds); buf. */
const char *trace_dur(char *buf, size_t n, int64_t ns, const char *us);
/* tm->late in order (the percentiles need it). */
void trace_sort_late(struct timer *tm);
void trace_summary(struct trace *tr, FILE *out);

/* ---- the picture (svg.c) ---- */

/* The timeline as SVG; html: in a page, with the text under it. */
void trace_picture(struct trace *tr, FILE *out, int html);

/* ---- the events for a trace viewer (chrome.c) ---- */

/* The trace as Chrome's trace-event JSON (chrome://tracing, Perfetto). */
void trace_chrome(struct trace *tr, FILE *out);

#endif
