/* SPDX-License-Identifier: MIT */
/*
 * hooks.h - the engine's test hooks (tests/, fuzz/): what a test sets or
 * reads of the engine that no program has a use for.  Not the backend
 * table (backend.h), not the host's (host.h).
 */
#ifndef TFD_ENGINE_HOOKS_H
#define TFD_ENGINE_HOOKS_H

#include <stddef.h>

/* What the engine does when the kernel says CLOCK_REALTIME was set, to
 * exercise TFD_TIMER_CANCEL_ON_SET without setting the clock; and how
 * many times the service thread has woken up (tests of idleness). */
void tfd_engine_clock_was_set(void);
unsigned long tfd_engine_wakeups(void);
/* How many fresh eventfds the engine keeps ready for tfd_create (0: none,
 * so that each create makes its own, where fault injection reaches), and
 * how many of a kind (O_NONBLOCK or not) are ready now. */
void tfd_engine_pool_size(unsigned n);
unsigned tfd_engine_pool_ready(int nonblock);
/* How long the service thread outlives the last timer, in ns (0: the
 * default, 200 ms): tests of a thread that ends while a create waits. */
void tfd_engine_grace(long long ns);
/* Timers this process holds: open, or closed and kept running for a
 * thread still waiting on them (tests of abandoned waits). */
size_t tfd_engine_holds(void);
/* 1 if the engine holds its files in a table of its own, 0 on the
 * fallback (tfd(7)): tests of what only the first keeps skip on it. */
int tfd_engine_private_files(void);
/* fn (NULL: none) runs in the backend's quiet between finding a number's
 * hold and looking at it: tests of what the lock's holders may free
 * meanwhile. */
void tfd_engine_quiet_pause(void (*fn)(void));

#endif
