/* SPDX-License-Identifier: MIT */
/*
 * notify.h - the readiness descriptor of an engine timer.
 *
 * An eventfd: the engine adds expiration counts to it, and a plain read()
 * returns and resets their sum, so read(), poll(), select() and epoll work
 * on it as on a kernel timerfd.  Functions return 0 or an errno value.
 */
#ifndef TFD_NOTIFY_H
#define TFD_NOTIFY_H

#include <stdint.h>

/* A new descriptor; flags are TFD_NONBLOCK and TFD_CLOEXEC. */
int tfd_notify_open(int flags, int *fd);
/* Add n to the count (never blocks unless a user wrote near 2^64). */
int tfd_notify_post(int fd, uint64_t n);
/* Take the count without blocking, whatever the descriptor's O_NONBLOCK
 * says: *n is 0 when there was nothing. */
int tfd_notify_drain(int fd, uint64_t *n);

#endif
