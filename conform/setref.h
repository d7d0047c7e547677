/* SPDX-License-Identifier: MIT */
/*
 * setref.h - the reference a timer set is compared with in the
 * conformance suite: a set made of one kernel timerfd per key
 * (timerfd_create(2), timerfd_settime(2), timerfd_gettime(2), read(2)),
 * written apart from src/sets.c and src/core/set.c.  It keeps no time of
 * its own: every deadline, count and remaining time is the kernel's.
 */
#ifndef TFD_CONFORM_SETREF_H
#define TFD_CONFORM_SETREF_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define SETREF_KEYS 16

struct setref_key {
	int used;
	uint64_t key;
	int fd;          /* its timerfd */
	int oneshot;     /* forgotten once its record is handed out */
	uint64_t unread; /* expirations read from the timerfd, not handed out */
};

struct setref {
	int open;
	int clock;
	struct setref_key k[SETREF_KEYS];
};

/* A record: a key and its count, as struct tfd_expiry. */
struct setref_rec {
	uint64_t key;
	uint64_t count;
};

/* An empty set on clock: 0. */
int setref_create(struct setref *s, int clock);
/* Arm (a value not zero) or disarm and forget key, as timerfd_settime(2)
 * arms a timer; *old (not NULL) its setting before, zeros if it had
 * none.  0 or an errno. */
int setref_settime(struct setref *s, uint64_t key, int flags,
                   const struct itimerspec *nv, struct itimerspec *old);
/* Key's setting: 0, or ENOENT for a key not armed. */
int setref_gettime(const struct setref *s, uint64_t key,
                   struct itimerspec *cur);
/* Every key due, in no order, with its expirations not handed out (each
 * timerfd read without blocking): how many, at most max. */
size_t setref_due(struct setref *s, struct setref_rec *out, size_t max);
/* Key's record was handed out: its count starts again from 0, and a
 * one-shot key is forgotten. */
void setref_took(struct setref *s, uint64_t key);
void setref_close(struct setref *s);

#endif
