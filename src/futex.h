/* SPDX-License-Identifier: MIT */
/*
 * futex.h - the futex calls of the engine and of virtual time, on words
 * in memory that processes share (a family's, a domain's): never
 * FUTEX_PRIVATE.  Each may return early (a signal, a wake-up of another
 * waiter): callers look at the word again.
 */
#ifndef TFD_FUTEX_H
#define TFD_FUTEX_H

#include <stdint.h>

/* The last argument of the library's own FUTEX_WAITs, which the kernel
 * ignores: the drop-in's syscall() passes them on untouched, also from a
 * copy of the library linked into the program (on virtual time it takes
 * the program's timed futex waits as waits of virtual time). */
#define TFD_FUTEX_OURS 0x74666421u /* "tfd!" */

/* Sleeps while *word == val. */
void tfd_futex_wait(unsigned *word, unsigned val);
/* The same, for ns nanoseconds at most (ns < 0: no limit). */
void tfd_futex_nap(unsigned *word, unsigned val, int64_t ns);
/* Wakes n of the threads sleeping on word (INT_MAX: all). */
void tfd_futex_wake(unsigned *word, int n);

#endif
