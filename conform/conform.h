/* SPDX-License-Identifier: MIT */
/*
 * conform.h - the conformance suite: a table of cases (cases.c), each a
 * short sequence of operations with expected results, and a runner
 * (runner.c) that plays every case on every backend and compares.
 *
 * The expectations of a case are Linux's (timerfd_create(2) and SPEC.md):
 * the "kernel" column is checked against them as the oracle.  The engine
 * family (the "engine" and "virtual" columns) is checked against the same
 * expectations, except where an operation gives an engine override; only a
 * row marked as a documented departure may have one, and it names the
 * manual page section that documents the difference.  Used by `tfd
 * conform` (tools/cmd_conform.c) and by `make check` (tests/test_conform.c).
 */
#ifndef TFD_CONFORM_H
#define TFD_CONFORM_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* The descriptors an operation names. */
enum conf_fd {
	T0, T1, T2, /* timers the case opened (slots) */
	PIPE_R,     /* a pipe the case opened: not a timer */
	PIPE_W,
	FD_BAD,     /* a number never open (1000) */
	FD_M1,      /* -1 */
	FD_M5,      /* -5 */
};
#define CONF_SLOTS 3

enum conf_opcode {
	OP_END,
	/* the library: results are checked against want, errno kept on
	 * success */
	OP_CREATE,   /* tfd_create(arg, arg2) into slot fd */
	OP_SETTIME,  /* tfd_settime(fd, arg2, spec, out ? &old : NULL) */
	OP_GETTIME,  /* tfd_gettime(fd, out ? &cur : NULL) */
	OP_READ,     /* tfd_read(fd, out ? buf : NULL, arg) */
	OP_TIMERFD,  /* timerfd(fd, arg, arg2, spec, out ? &o : NULL) */
	OP_CLOSE,    /* tfd_close(fd) */
	OP_USE,      /* tfd_use_backend(USE_*) */
	OP_NAME,     /* strcmp(tfd_backend_name(), column) == 0 */
	OP_VNOW,     /* tfd_virtual_now(arg, out ? &ts : NULL) */
	OP_VMOVE,    /* tfd_virtual_advance, _suspend, _set_realtime (arg 0, 1,
	              * 2) of the spec value, or NULL */
	/* the descriptor, as a program sees it */
	OP_READ_RAW, /* read(2)(fd, out ? buf : NULL, arg) */
	OP_WRITE,    /* write(2) of a uint64_t 1 */
	OP_CLOSE_RAW, /* close(2) */
	OP_POLL,     /* poll(2) for POLLIN with timeout arg ms: revents */
	OP_POLLOUT,  /* poll(2) for POLLOUT, timeout 0: revents */
	OP_EPOLL,    /* epoll_wait(2) for EPOLLIN, timeout arg ms: events */
	OP_SELECT,   /* select(2) readfds, timeout arg ms: 1 if set */
	OP_GETFL,    /* fcntl F_GETFL & (O_ACCMODE | O_NONBLOCK) */
	OP_GETFD,    /* fcntl F_GETFD & FD_CLOEXEC */
	OP_SETFL,    /* fcntl F_SETFL arg */
	OP_FDINFO,   /* 1 if /proc/self/fdinfo/fd has a "clockid:" line */
	OP_SETTICKS, /* ioctl TFD_IOC_SET_TICKS to arg */
	OP_CHILD_GETTIME, /* tfd_gettime in a fork(2)ed child */
	OP_CHILD_READ,    /* tfd_read in a child, after a poll of 2 s */
	OP_CHILD_SETTIME, /* tfd_settime in a child: relative arg ms */
	/* the test's own world */
	OP_SLEEP,    /* time passes: arg ms (the virtual clock: advance) */
	OP_LATER,    /* arg ms pass while the next operation blocks */
	OP_SIGNAL,   /* SIGUSR1 (no SA_RESTART) to this thread in arg ms */
	OP_PIPE,     /* open PIPE_R/PIPE_W; arg 1: with one byte in it */
	OP_LIMIT,    /* RLIMIT_NOFILE: room for arg more descriptors */
	OP_UNLIMIT,  /* RLIMIT_NOFILE as it was */
	OP_SET_REALTIME, /* virtual CLOCK_REALTIME jumps by arg s */
	OP_SUSPEND,  /* virtual suspend of arg s */
	/* timer sets (tfd_set(3)), in the timer slots */
	OP_SET_CREATE,  /* tfd_set_create(arg, arg2) into slot fd */
	OP_SET_SETTIME, /* tfd_set_settime(fd, key, arg2, spec, out ? &old
	                 * : NULL) */
	OP_SET_GETTIME, /* tfd_set_gettime(fd, key, out ? &cur : NULL) */
	OP_SET_READ,    /* tfd_set_read(fd, out ? buf : NULL, arg): the
	                 * records are recs */
	OP_REFERENCE,   /* from here on, every set call is made on a
	                 * reference set too, one kernel timerfd a key
	                 * (setref.h), and the results are compared */
};

/* OP_USE arguments. */
enum { USE_SELF, USE_OTHER, USE_UNKNOWN, USE_NULL };

/* A struct itimerspec argument.  'R': it_value {vs, vn} as given (may be
 * invalid); 'A': it_value = now on the timer's clock + vs s + vn ns
 * (TFD_TIMER_ABSTIME arguments; vs may be negative); 'B': the same from
 * the time the case began instead of now, so that the deadlines of a
 * case are exactly where it says, however late each call; 'N': NULL.
 * The interval is {is, in} as given. */
struct conf_spec {
	char kind;
	long vs, vn, is, in;
};

/* An expected result.  kind 0 in an engine override: same as want. */
struct conf_want {
	char kind; /* 'R' returns ret; 'F' a new descriptor; 'S' returns
	            * the descriptor passed (timerfd); 'E' -1 with errno err;
	            * 'W' alarm clock: EPERM unless CAP_WAKE_ALARM, then 'F' */
	int err;
	long ret;
};

/* What else is checked. */
enum {
	C_VALUE = 1 << 0,   /* out: it_value in [lo, hi], it_interval == iv */
	C_COUNT = 1 << 1,   /* read count in [lo, hi] */
	C_MODEL = 1 << 2,   /* read count as the timer model says */
	C_QUICK = 1 << 3,   /* returns within 100 ms of the column's clock */
};

struct conf_op {
	unsigned char code;
	unsigned char fd;  /* enum conf_fd: operand, or slot to create */
	unsigned char out; /* result pointer given (1) or NULL (0) */
	unsigned char into; /* slot for a descriptor timerfd() creates */
	unsigned char check;
	int arg, arg2;
	struct conf_spec spec;
	int64_t lo, hi, iv;
	struct conf_want want; /* Linux, checked on the kernel column */
	struct conf_want eng;  /* engine override (departures only) */
	uint64_t key;          /* a set's key */
	/* OP_SET_READ: the records, in order: "KEY:COUNT ...", and
	 * "KEY:COUNT+" for at least COUNT on the system's clocks (late),
	 * exactly COUNT on the virtual clock */
	const char *recs;
};

/* Columns a case runs on (0: all). */
enum {
	ON_KERNEL = 1 << 0,
	ON_ENGINE = 1 << 1,
	ON_VIRTUAL = 1 << 2,
	ON_REAL = ON_KERNEL | ON_ENGINE, /* system clocks */
	ON_ENGINES = ON_ENGINE | ON_VIRTUAL,
};

#define CONF_MAXOPS 12

struct conf_case {
	const char *name;      /* group.what */
	const char *source;    /* the rule: SPEC section, man page */
	const char *departure; /* NULL, or the page and section documenting
	                        * how we differ: "tfd.7 NOTES 2" */
	unsigned only;         /* ON_* mask, 0 for every column */
	struct conf_op ops[CONF_MAXOPS];
};

extern const struct conf_case conf_cases[];
extern const size_t conf_ncases;

/* ---- the table's vocabulary ---- */

#define SEC_ 1000000000L
#define MS_ 1000000L

#define OK { 'R', 0, 0 }
#define RET(n) { 'R', 0, (n) }
#define NEWFD { 'F', 0, 0 }
#define SAMEFD { 'S', 0, 0 }
#define ERR(e) { 'E', (e), 0 }
#define ALARM { 'W', 0, 0 }

#define REL(ns, ins) { 'R', (ns) / SEC_, (ns) % SEC_, (ins) / SEC_, (ins) % SEC_ }
#define ABS(ns, ins) { 'A', (ns) / SEC_, (ns) % SEC_, (ins) / SEC_, (ins) % SEC_ }
#define RAW(vs, vn, is, in) { 'R', (vs), (vn), (is), (in) }
#define NUL { 'N', 0, 0, 0, 0 }

/* Each takes its expected result and optional designators after it, for
 * example .eng = ERR(EPERM). */
#define CREATE(slot, clk, fl, w, ...)                                       \
	{ .code = OP_CREATE, .fd = (slot), .arg = (clk), .arg2 = (fl),      \
	  .want = w, __VA_ARGS__ }
#define SETTIME(f, fl, sp, w, ...)                                          \
	{ .code = OP_SETTIME, .fd = (f), .arg2 = (fl), .spec = sp,          \
	  .want = w, __VA_ARGS__ }
/* tfd_settime with old_value: it_value in [lo, hi] ns, it_interval iv. */
#define SETTIME_OLD(f, fl, sp, l, h, i, ...)                                \
	{ .code = OP_SETTIME, .fd = (f), .arg2 = (fl), .spec = sp,          \
	  .out = 1, .check = C_VALUE, .lo = (l), .hi = (h), .iv = (i),      \
	  .want = OK, __VA_ARGS__ }
#define GETTIME(f, l, h, i, ...)                                            \
	{ .code = OP_GETTIME, .fd = (f), .out = 1, .check = C_VALUE,        \
	  .lo = (l), .hi = (h), .iv = (i), .want = OK, __VA_ARGS__ }
#define GETTIME_E(f, o, w, ...)                                             \
	{ .code = OP_GETTIME, .fd = (f), .out = (o), .want = w, __VA_ARGS__ }
/* tfd_read of len bytes: count exactly n, as the model says. */
#define READ_N(f, len, n, ...)                                              \
	{ .code = OP_READ, .fd = (f), .arg = (len), .out = 1,               \
	  .check = C_COUNT | C_MODEL, .lo = (n), .hi = (n), .want = RET(8), \
	  __VA_ARGS__ }
/* tfd_read: the count the timer model gives for the time of the read. */
#define READ_M(f, ...)                                                      \
	{ .code = OP_READ, .fd = (f), .arg = 8, .out = 1,                   \
	  .check = C_MODEL, .want = RET(8), __VA_ARGS__ }
#define READ_E(f, len, o, w, ...)                                           \
	{ .code = OP_READ, .fd = (f), .arg = (len), .out = (o), .want = w,  \
	  __VA_ARGS__ }
#define READ_RAW(f, len, o, w, ...)                                         \
	{ .code = OP_READ_RAW, .fd = (f), .arg = (len), .out = (o),         \
	  .want = w, __VA_ARGS__ }
/* read(2): the count the model gives (late by at most 50 ms). */
#define READ_RAW_M(f)                                                       \
	{ .code = OP_READ_RAW, .fd = (f), .arg = 8, .out = 1,               \
	  .check = C_MODEL, .want = RET(8) }
#define TIMERFD(u, clk, fl, sp, o, w, ...)                                  \
	{ .code = OP_TIMERFD, .fd = (u), .arg = (clk), .arg2 = (fl),        \
	  .spec = sp, .out = (o), .want = w, __VA_ARGS__ }
/* timerfd() creating into slot s (the descriptor is -1). */
#define TIMERFD_NEW(s, clk, fl, sp, w, ...)                                 \
	{ .code = OP_TIMERFD, .fd = FD_M1, .into = (s), .arg = (clk),     \
	  .arg2 = (fl), .spec = sp, .want = w, __VA_ARGS__ }
#define CLOSE(f, w, ...) { .code = OP_CLOSE, .fd = (f), .want = w, __VA_ARGS__ }
#define POLL(f, ms, rev, ...)                                               \
	{ .code = OP_POLL, .fd = (f), .arg = (ms), .want = RET(rev),        \
	  __VA_ARGS__ }
#define POLLOUT_(f, rev, ...)                                               \
	{ .code = OP_POLLOUT, .fd = (f), .want = RET(rev), __VA_ARGS__ }
#define EPOLL(f, ms, ev, ...)                                               \
	{ .code = OP_EPOLL, .fd = (f), .arg = (ms), .want = RET(ev),        \
	  __VA_ARGS__ }
#define SELECT(f, ms, set, ...)                                             \
	{ .code = OP_SELECT, .fd = (f), .arg = (ms), .want = RET(set),      \
	  __VA_ARGS__ }
#define GETFL(f, v) { .code = OP_GETFL, .fd = (f), .want = RET(v) }
#define GETFD(f, v) { .code = OP_GETFD, .fd = (f), .want = RET(v) }
#define SETFL(f, v) { .code = OP_SETFL, .fd = (f), .arg = (v), .want = OK }
#define SLEEP(ms) { .code = OP_SLEEP, .arg = (ms), .want = OK }
#define LATER(ms) { .code = OP_LATER, .arg = (ms), .want = OK }
#define SIGNAL(ms) { .code = OP_SIGNAL, .arg = (ms), .want = OK }
#define PIPE(data) { .code = OP_PIPE, .arg = (data), .want = OK }
#define LIMIT(n) { .code = OP_LIMIT, .arg = (n), .want = OK }
#define UNLIMIT { .code = OP_UNLIMIT, .want = OK }
#define USE(which, w) { .code = OP_USE, .arg = (which), .want = w }
#define NAME { .code = OP_NAME, .want = RET(1) }
#define VNOW(clk, o, w) { .code = OP_VNOW, .arg = (clk), .out = (o), .want = w }
#define VMOVE(which, sp, w) { .code = OP_VMOVE, .arg = (which), .spec = sp, .want = w }
#define WRITE(f, w, ...) { .code = OP_WRITE, .fd = (f), .want = w, __VA_ARGS__ }
#define CLOSE_RAW(f) { .code = OP_CLOSE_RAW, .fd = (f), .want = OK }
#define FDINFO(f, w, ...) { .code = OP_FDINFO, .fd = (f), .want = w, __VA_ARGS__ }
#define SETTICKS(f, n, w, ...)                                              \
	{ .code = OP_SETTICKS, .fd = (f), .arg = (n), .want = w, __VA_ARGS__ }
#define CHILD_GETTIME(f, w, ...)                                            \
	{ .code = OP_CHILD_GETTIME, .fd = (f), .want = w, __VA_ARGS__ }
#define CHILD_READ(f, w, ...)                                               \
	{ .code = OP_CHILD_READ, .fd = (f), .want = w, __VA_ARGS__ }
#define CHILD_SETTIME(f, ms, w, ...)                                        \
	{ .code = OP_CHILD_SETTIME, .fd = (f), .arg = (ms), .want = w,      \
	  __VA_ARGS__ }
#define BASE(ns, ins)                                                       \
	{ 'B', (ns) / SEC_, (ns) % SEC_, (ins) / SEC_, (ins) % SEC_ }

/* Timer sets. */
#define SET_CREATE(slot, clk, fl, w)                                        \
	{ .code = OP_SET_CREATE, .fd = (slot), .arg = (clk), .arg2 = (fl),  \
	  .want = w }
#define SET_ARM(f, k, fl, sp, w)                                            \
	{ .code = OP_SET_SETTIME, .fd = (f), .key = (k), .arg2 = (fl),      \
	  .spec = sp, .want = w }
/* tfd_set_settime with old_value: it_value in [lo, hi], it_interval i. */
#define SET_ARM_OLD(f, k, fl, sp, l, h, i)                                  \
	{ .code = OP_SET_SETTIME, .fd = (f), .key = (k), .arg2 = (fl),      \
	  .spec = sp, .out = 1, .check = C_VALUE, .lo = (l), .hi = (h),     \
	  .iv = (i), .want = OK }
#define SET_GET(f, k, l, h, i)                                              \
	{ .code = OP_SET_GETTIME, .fd = (f), .key = (k), .out = 1,          \
	  .check = C_VALUE, .lo = (l), .hi = (h), .iv = (i), .want = OK }
#define SET_GET_E(f, k, o, w)                                               \
	{ .code = OP_SET_GETTIME, .fd = (f), .key = (k), .out = (o),        \
	  .want = w }
/* tfd_set_read with room for room records: n records, rs. */
#define SET_READ(f, room, n, rs)                                            \
	{ .code = OP_SET_READ, .fd = (f), .arg = (room) * 16, .out = 1,     \
	  .want = RET((n) * 16), .recs = (rs) }
#define SET_READ_E(f, len, o, w)                                            \
	{ .code = OP_SET_READ, .fd = (f), .arg = (len), .out = (o),         \
	  .want = w }
#define REFERENCE { .code = OP_REFERENCE, .want = OK }
#define SET_REALTIME(s) { .code = OP_SET_REALTIME, .arg = (s), .want = OK }
#define SUSPEND(s) { .code = OP_SUSPEND, .arg = (s), .want = OK }

/* ---- the runner ---- */

/* The columns: one per backend.  engine_family: checked against the
 * engine overrides; virtual_clock: time passes by tfd_virtual_advance. */
struct conf_column {
	const char *backend;
	unsigned on; /* ON_* bit */
	int engine_family;
	int virtual_clock;
};

extern const struct conf_column conf_columns[];
extern const size_t conf_ncolumns;

enum {
	CONF_QUIET = 1 << 0, /* print only failures and the summary */
};

/*
 * Run the cases whose name contains filter (NULL: all) on the columns
 * whose backend is named backend (NULL: all); print the table to out.
 * Returns the number of rows that failed (an expectation failure on some
 * column, or an unexplained difference).
 */
int conf_run(FILE *out, const char *backend, const char *filter,
             unsigned flags);

/* Print "FUNCTION ERRNO CASE" for every errno a case expects of a library
 * function on a column it runs on (the traceability check reads this). */
void conf_list_errnos(FILE *out);
/* The library function an operation calls, or NULL. */
const char *conf_function(const struct conf_op *op);
/* Print "CASE|DEPARTURE" for every departure row. */
void conf_list_departures(FILE *out);
/* Check the table itself: unique names, overrides only in departure rows.
 * Prints problems to out; returns their number. */
int conf_check_table(FILE *out);

#endif
