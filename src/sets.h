/* SPDX-License-Identifier: MIT */
/*
 * sets.h - timer sets (tfd_set(3)) over any backend: the set's
 * descriptor is a timer of the backend, armed at the set's earliest
 * deadline; its keys are core/set.c's, in this process's memory.  Called
 * by api.c only, with arguments checked; each returns 0 or an errno.
 */
#ifndef TFD_SETS_H
#define TFD_SETS_H

#include "backend.h"
#include "tfd.h"

#include <stddef.h>
#include <stdint.h>

/* A set on be: its timer made with clockid and flags. */
int tfd_sets_create(const struct tfd_backend *be, int clockid, int flags,
                    int *sfd);
int tfd_sets_settime(const struct tfd_backend *be, int sfd, uint64_t key,
                     int flags, const struct itimerspec *nv,
                     struct itimerspec *old);
int tfd_sets_gettime(const struct tfd_backend *be, int sfd, uint64_t key,
                     struct itimerspec *cur);
/* Up to max records into buf, *n of them (at least one on 0). */
int tfd_sets_read(const struct tfd_backend *be, int sfd,
                  struct tfd_expiry *buf, size_t max, size_t *n);
/* 0 if sfd is a set, else EBADF or EINVAL. */
int tfd_sets_check(int sfd);
/* 1 if fd is a set: none of the timer calls is for it.  With no set in
 * the process (the timer calls' common case), one load. */
extern int tfd_nsets; /* sets open (sets.c) */
int tfd_sets_is(int fd);
static inline int tfd_sets_any(void)
{
	return __atomic_load_n(&tfd_nsets, __ATOMIC_RELAXED) != 0;
}
static inline int tfd_sets_has(int fd)
{
	return __atomic_load_n(&tfd_nsets, __ATOMIC_RELAXED) &&
	       tfd_sets_is(fd);
}
/* The lowest set's number from `from` on, or -1.  Neither this nor
 * tfd_sets_is takes a lock. */
int tfd_sets_next(int from);
/* fd ends a set if it is one (closed with its timer on be: *e close's
 * error, and 1), else 0. */
int tfd_sets_close(const struct tfd_backend *be, int fd, int *e);
/* fd was just made a timer, or no longer names the set (the preload saw
 * the program put another file there): a set under that number is gone,
 * its timer let go of by the caller. */
void tfd_sets_forget(int fd);

#endif
