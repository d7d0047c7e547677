/* SPDX-License-Identifier: MIT */
/*
 * set.h - a timer set's arithmetic (tfd_set(3)): keys, each a timer of
 * the model (model.h), a hash from key to record and a deadline heap
 * (queue.h).  Pure: no clock, no lock, no system call; the caller passes
 * "now" in.
 *
 * Records live in blocks that never move (the heap holds pointers into
 * them), reused through a free list: about 60 bytes a key (a record of
 * 40, its heap entry of 16, its hash bucket of 4, and a bit: whether it
 * asked to learn that the clock was set).
 *
 * TFD_TIMER_CANCEL_ON_SET carried to a set: while a key armed with it is
 * in the set, a set of the clock (told by the caller) leaves a
 * cancellation for the next read to report; it takes no expiration.  It
 * is forgotten when no such key is left, as a timerfd re-armed without
 * the flag forgets it.
 */
#ifndef TFD_CORE_SET_H
#define TFD_CORE_SET_H

#include "core/model.h"
#include "core/queue.h"

#include <stddef.h>
#include <stdint.h>

struct tfd_set_rec {
	uint64_t key;
	struct tfd_model m;
	struct tfd_qnode q;
	uint32_t next; /* in its hash chain or the free list: index + 1 */
};

struct tfd_set_core {
	struct tfd_set_rec **block; /* TFD_SET_BLOCK records each */
	size_t nblock;
	uint32_t nrec;       /* records ever used (the free list's too) */
	uint32_t free;       /* the free list: index + 1, 0 if empty */
	uint32_t *bucket;    /* index + 1 of a chain's first, 0 if none */
	uint32_t nbucket;    /* a power of two, or 0 */
	uint32_t nkey;       /* keys armed */
	uint32_t ncancel;    /* keys armed that asked for cancel-on-set */
	int cancelled;       /* the clock was set since: a read reports it */
	struct tfd_queue q;  /* the armed keys by deadline */
};

/* One key of the set as a read hands it out. */
struct tfd_set_out {
	uint64_t key;
	uint64_t count;
};

void tfd_set_core_init(struct tfd_set_core *s);
void tfd_set_core_free(struct tfd_set_core *s);

/* Arm key (value > 0: relative to now, or a time on the clock with
 * absolute) or disarm and forget it (value 0), as tfd_model_set() arms a
 * timer; cancel: the key asks to learn that the clock was set (the
 * caller decides when the flag counts: an absolute CLOCK_REALTIME key).
 * *old (if not NULL) gets its setting before, zeros if it was not
 * armed.  0, or ENOMEM (a new key, no room). */
int tfd_set_core_arm(struct tfd_set_core *s, uint64_t key, int64_t now,
                     int64_t value, int64_t interval, int absolute,
                     int cancel, struct itimerspec *old);
/* Key's setting at now: 0, or ENOENT if it is not armed. */
int tfd_set_core_query(const struct tfd_set_core *s, uint64_t key,
                       int64_t now, struct itimerspec *cur);
/* Up to max keys due at now, earliest first, each with its expirations
 * since its last record; a one-shot key handed out is forgotten.  *again
 * (if not NULL) is lowered to the next deadline of each periodic key
 * handed out: a take at that time or later would hand it out again.  How
 * many. */
size_t tfd_set_core_take(struct tfd_set_core *s, int64_t now,
                         struct tfd_set_out *out, size_t max,
                         int64_t *again);
/* The earliest deadline of the set, -1 if no key is armed. */
int64_t tfd_set_core_next(struct tfd_set_core *s);

/* The clock was set: a cancellation for the next read, if a key armed
 * asked for one (else nothing). */
void tfd_set_core_clock_set(struct tfd_set_core *s);
/* 1 if a key armed asks to learn that the clock was set. */
static inline int tfd_set_core_watch(const struct tfd_set_core *s)
{
	return s->ncancel != 0;
}
/* 1 if a cancellation waits for a read; with take, it is then taken. */
int tfd_set_core_cancelled(struct tfd_set_core *s, int take);

#endif
