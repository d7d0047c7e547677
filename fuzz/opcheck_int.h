/* SPDX-License-Identifier: MIT */
/*
 * opcheck_int.h - what the parts of the operation checker share: the
 * state of a sequence, reporting, clock spans, decoding and the model's
 * arithmetic (opcheck.c), used by the sets' part (opcheck_set.c).
 *
 * The shared functions keep their short names in the source; the macros
 * below give them an opcheck_ prefix as symbols, so that nothing else
 * linked with the checker (the test binary) can clash with them.
 */
#ifndef TFD_OPCHECK_INT_H
#define TFD_OPCHECK_INT_H

#include "opcheck.h"

#include <stdint.h>
#include <time.h>

#define NS 1000000000LL
#define MS 1000000LL
#define NSLOT 4           /* timers alive at once */
#define WAIT_MAX (3 * MS) /* a blocking call may wait this long */
#define SENTINEL 4242     /* errno before each call: kept on success */
#define TRACE 16

#define NELEM(a) (sizeof(a) / sizeof(*(a)))
#define PICK(s, table) ((table)[in_u8(s) % NELEM(table)])

typedef __int128 i128;

enum { B_MONO, B_REAL, B_BOOT, NB };

/* A timer of the model. */
struct mt {
	int open, fd, clock, nonblock;
	int base;            /* the clock its expiries are on (B_*) */
	int64_t iv;          /* interval */
	int cos, cancelled;  /* CANCEL_ON_SET in force; cancellation pending */
	uint64_t extra;      /* cancellation ticks in the count */
	/* system clocks: bounds */
	int armed;
	int64_t e_lo, e_hi;  /* the first expiry lies in [e_lo, e_hi] */
	uint64_t c_lo, c_hi; /* expirations consumed since the set */
	/* virtual clock: exact */
	i128 next;           /* the next expiry, 0 for none */
	uint64_t pend;       /* expirations counted and not consumed */
};

/* Clock readings before (lo) and after (hi) a call, per base. */
struct span {
	int64_t lo[NB], hi[NB];
};

struct in {
	const uint8_t *p;
	size_t n;
};

#define S opcheck_state
extern struct opcheck_state {
	struct mt t[NSLOT];
	int last_fd[NSLOT]; /* the number each slot had: used after close */
	int virt;
	int kern;           /* the kernel backend: Linux's own timerfd */
	int wild;           /* this operation may take invalid arguments */
	int64_t vnow[NB];
	int pipe_r, pipe_w, ktfd;
	unsigned long opno;
	char trace[TRACE][240];
	struct opcheck_stats *st;
} S;

/* ---- reporting (opcheck.c) ---- */

#define ename opcheck_ename
#define fail opcheck_fail
#define note opcheck_note
#define skip opcheck_skip
#define expect_result opcheck_expect_result
#define check_tail opcheck_check_tail
#define close_checked opcheck_close_checked
#define arm_checks opcheck_arm_checks

const char *ename(int e);
/* The report: the last operations, then the message; does not return. */
void fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
#define EXPECT(cond, ...)                                                   \
	do {                                                                \
		if (!(cond))                                                \
			fail(__VA_ARGS__);                                  \
	} while (0)
/* An operation begins: its description, for the report. */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The operation noted is not run. */
void skip(void);
/* A call returned r with errno e; want_e 0 means success with want_r. */
void expect_result(const char *what, long r, int e, long want_r, int want_e);
/* tfd_close(fd), which must succeed. */
void close_checked(int fd);
/* The errno of the checks of an arm's flags and value, tfd_settime's and
 * tfd_set_settime's (SPEC 2): EFAULT, EINVAL, or 0 if they pass. */
int arm_checks(int flags, const struct itimerspec *nv);
/* Bytes from..len of a read buffer (filled with 0xa5) were not written. */
void check_tail(const unsigned char *buf, size_t from, size_t len);

/* ---- arithmetic and clocks ---- */

#define ts_ok opcheck_ts_ok
#define ts_ns opcheck_ts_ns
#define add_sat opcheck_add_sat
#define u_add opcheck_u_add
#define due opcheck_due
#define ns_of opcheck_ns_of
#define base_of opcheck_base_of
#define clk opcheck_clk
#define span_lo opcheck_span_lo
#define span_hi opcheck_span_hi
#define spec_ok opcheck_spec_ok

int ts_ok(const struct timespec *ts);
/* Nanoseconds of a valid timespec, saturated as Linux does. */
int64_t ts_ns(const struct timespec *ts);
int64_t add_sat(int64_t a, int64_t b);
uint64_t u_add(uint64_t a, uint64_t b);
/* Expiries e0 + k*iv (k >= 0; only k = 0 when iv is 0) at or before t. */
uint64_t due(int64_t e0, int64_t iv, int64_t t);
int64_t ns_of(const struct timespec *ts);
/* The base (B_*) a timer of clock keeps its expiries on. */
int base_of(int clock, int absolute);
/* Now on base b: the system's clock, or the model's virtual one. */
int64_t clk(int b);
void span_lo(struct span *sp);
void span_hi(struct span *sp);
int spec_ok(const struct itimerspec *its);

/* ---- decoding ---- */

#define by_fd opcheck_by_fd
#define in_u8 opcheck_in_u8
#define in_u32 opcheck_in_u32
#define in_u64 opcheck_in_u64
#define odd opcheck_odd
#define dec_ts opcheck_dec_ts
#define ts_str opcheck_ts_str
#define dec_clock opcheck_dec_clock
#define dec_flags opcheck_dec_flags
#define dec_create_flags opcheck_dec_create_flags

/* The model's timer open on fd, or NULL. */
struct mt *by_fd(int fd);
unsigned in_u8(struct in *s);
uint32_t in_u32(struct in *s);
uint64_t in_u64(struct in *s);
/* 1 in n in a wild operation; 0 otherwise (a byte is used either way). */
int odd(struct in *s, unsigned n);
/* Any timespec: zero, small, far, huge, invalid, near base b's now. */
struct timespec dec_ts(struct in *s, int b);
const char *ts_str(const struct timespec *ts, char *buf, size_t n);
/* A valid clock mostly; in a wild operation sometimes any. */
int dec_clock(struct in *s);
int dec_flags(struct in *s, const int *table, size_t nvalid, size_t n);
int dec_create_flags(struct in *s);

/* ---- the sets (opcheck_set.c) ---- */

/* A sequence begins: no set. */
void opcheck_set_reset(void);
/* One operation on sets, decoded from s. */
void opcheck_set_op(struct in *s);
/* Close every set left, checking its keys once more. */
void opcheck_set_sweep(void);
/* The virtual CLOCK_REALTIME went back. */
void opcheck_set_clock_back(void);
/* The wall clock was set: sets with a key asking report it. */
void opcheck_set_clock_set(void);

#endif
