/* SPDX-License-Identifier: MIT */
/*
 * loop.h - a small epoll event loop with three timers, the example of
 * tfd_virtual(3):
 *   heartbeat  periodic, every heartbeat_ns;
 *   idle       fires idle_ns after the last activity (a line read from the
 *              input descriptor), re-armed on every activity;
 *   deadline   an absolute CLOCK_REALTIME time at which the loop ends.
 * It uses only the Linux-shaped calls and epoll: it runs the same on the
 * engine, the kernel and the virtual backend.
 */
#ifndef TFD_EXAMPLE_LOOP_H
#define TFD_EXAMPLE_LOOP_H

#include <stdint.h>
#include <time.h>

enum loop_event { LOOP_HEARTBEAT, LOOP_IDLE, LOOP_DEADLINE, LOOP_ACTIVITY };

struct loop {
	int ep, input, heartbeat, idle, deadline;
	int64_t idle_ns;
	int done;
	/* Called for each event with the count of expirations read. */
	void (*emit)(void *ctx, enum loop_event ev, uint64_t count);
	void *ctx;
};

const char *loop_event_name(enum loop_event ev);
/* 0, or -1 with errno set (everything opened is closed again).  An input
 * that epoll cannot watch (a regular file, /dev/null) or -1 is no input:
 * as one that ended at once. */
int loop_open(struct loop *l, int input, int64_t heartbeat_ns,
              int64_t idle_ns, const struct timespec *deadline);
/* Wait up to timeout_ms (-1: forever) and handle what is ready: the
 * number of events handled, or -1 with errno set. */
int loop_run_once(struct loop *l, int timeout_ms);
void loop_close(struct loop *l);

#endif
