/* SPDX-License-Identifier: MIT */
/*
 * opcheck.h - operations decoded from bytes, run on the library and checked
 * against a reference model of SPEC.md written apart from the library.
 *
 * The same checker runs under libFuzzer (fuzz/fuzz_ops.c, `make fuzz`) and
 * on pseudo-random bytes from fixed seeds in `make check`
 * (tests/test_opcheck.c).  Every call's return value, errno, count and
 * remaining time is compared with the model.  On the system's clocks the
 * model bounds what depends on time from clock readings taken just before
 * and after each call (never early, nothing lost); on the virtual clock
 * (tfd_use_backend("virtual"), when the library has it) it is exact, and
 * the clocks are moved too.
 */
#ifndef TFD_OPCHECK_H
#define TFD_OPCHECK_H

#include <stddef.h>
#include <stdint.h>

struct opcheck_stats {
	unsigned long ops;       /* operations run and checked */
	unsigned long skipped;   /* decoded, not run (would block, no clock) */
	unsigned long runs;      /* sequences */
	unsigned long virtual_runs; /* sequences on the virtual clock */
	unsigned long kernel_runs;  /* sequences on the kernel backend */
	unsigned long moves;     /* clock moves made on the virtual clock */
	unsigned long counts;    /* reads that returned expirations */
	unsigned long errors;    /* calls that failed as the model said */
	unsigned long cancels;   /* ECANCELED results */
	unsigned long set_ops;   /* of ops: operations on timer sets */
	unsigned long records;   /* records that set reads returned */
	unsigned long set_cancels; /* set reads that gave ECANCELED */
};

/* Called with a report when a result differs from the model; must not
 * return (the default prints the report and aborts). */
typedef void (*opcheck_fail_fn)(const char *report);
void opcheck_on_fail(opcheck_fail_fn fn);

/* Run one sequence: the first byte picks the backend (bit 0: the virtual
 * clock, when the library has it; else bit 1: the kernel backend; else the
 * engine), the rest is operations until the bytes run out.  Every timer is
 * closed at the end; st (may be NULL) accumulates. */
void opcheck_run(const uint8_t *data, size_t size, struct opcheck_stats *st);

/* The last operations run, one a line, for a watchdog's message. */
const char *opcheck_trace(void);

#endif
