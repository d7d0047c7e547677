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
 *   blocks.c   what the picture draws together: a block per process
 *   svg.c      the picture: a block's lanes on the time axis, SVG
 *   page.c     the HTML page: the totals first, the blocks, the timers
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
/* The end of the arming that event i of tm starts: the next arming,
 * disarm or close, else end. */
int64_t trace_arming_until(const struct timer *tm, size_t i, int64_t end);
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
/* "p50 X us  p90 X us  p99 X us  max X us  early N  (of N reads)" of the
 * sorted late[nlate] (nlate > 0); buf. */
const char *trace_late_text(char *buf, size_t n, const int64_t *late,
                            size_t nlate, long early);
/* The processes that have timers, in the order of their first: *pids
 * (free it), how many. */
size_t trace_procs(const struct trace *tr, int **pids);
/* What pid's timers add up to (pid -1: all the trace's); late sorted
 * (free it). */
struct trace_totals {
	long timers, arms, reads, eagain, rfail, early;
	uint64_t expirations, due;
	int due_unknown;
	int64_t *late;
	size_t nlate, caplate;
};
void trace_totals(struct trace *tr, int pid, struct trace_totals *s);

/* ---- the picture (svg.c) ---- */

/* What the picture draws together on the time axis: the moves of virtual
 * time, or a process's timers (pid), or the timers of the processes
 * beyond the first few (pid -1). */
struct block {
	char name[128]; /* its heading: "stress-ng 9441", "pid 9441" */
	int pid, vclock;
	struct timer **tm;
	size_t n;
};
#define TRACE_MAXLANES 16 /* a lane each; beyond, one lane folds the rest */
/* "stress-ng 9441" or "pid 9441": pid named by its program; buf. */
const char *trace_proc_name(const struct trace *tr, int pid, char *buf,
                            size_t n);
/* The trace's blocks into *b (trace_blocks_free), how many (blocks.c). */
size_t trace_blocks(struct trace *tr, struct block **b);
void trace_blocks_free(struct block *b, size_t n);
double trace_block_height(const struct block *b);
/* A block's drawing, y from 0 to its height, in an <svg> of width
 * trace_svg_width whose style is trace_svg_css. */
void trace_block_draw(struct trace *tr, FILE *out, const struct block *b);
#define trace_svg_width 1360
extern const char trace_svg_css[];
/* s with & < > " as entities. */
void trace_esc(FILE *out, const char *s);
/* The blocks as one SVG (blocks.c). */
void trace_svg(struct trace *tr, FILE *out);

/* ---- the page (page.c) ---- */

/* The HTML page: what the trace adds up to, then each block in an SVG
 * that fits the window, folded (<details>) beyond the first few; a table
 * of the timers. */
void trace_page(struct trace *tr, FILE *out);

/* ---- the events for a trace viewer (chrome.c) ---- */

/* The trace as Chrome's trace-event JSON (chrome://tracing, Perfetto). */
void trace_chrome(struct trace *tr, FILE *out);

#endif
