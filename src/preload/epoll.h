/* SPDX-License-Identifier: MIT */
/*
 * epoll.h - what the preload's epoll registrations (epoll.c) and the
 * places of a set's delivered timers (epoll_due.c) share.  Private to
 * those two files; everything here is under epoll.c's lock.
 */
#ifndef TFD_PRELOAD_EPOLL_H
#define TFD_PRELOAD_EPOLL_H

#include <stdint.h>
#include <sys/epoll.h>

struct reg {
	struct reg *fnext, *fprev; /* on by_fd[fd] */
	struct reg *enext, *eprev; /* on by_ep[ep] */
	struct reg *lnext[2], *lprev[2]; /* [0] on one of its set's lists
	                                  * (where); [1] on its drift list */
	int64_t key;  /* in the heap: the deadline, CLOCK_MONOTONIC */
	unsigned hix; /* in the heap: its place there */
	int ep, fd;
	int edge; /* EPOLLET, made EPOLLONESHOT here */
	unsigned char deliv; /* level-triggered, for input */
	unsigned char want;  /* fd may be covered (cover_fd) */
	unsigned char where; /* W_*: in which of its set's places */
	unsigned char drifts; /* its key was told on another clock */
	struct epoll_event ev; /* as the program asked it (less writes) */
};

/* Where a registration with want is in its set: nowhere (not armed, or
 * posted and not armed again), in the heap, or on a list. */
enum { W_NONE, W_HEAP, W_DUE, W_LOOK, W_LOOSE, W_LISTS };

struct rlist {
	struct reg *first, *last;
	unsigned n;
};

/* What an epoll set's waits may deliver, by its number. */
struct set {
	unsigned ndeliv;     /* its registrations with deliv */
	unsigned nwant;      /* its registrations with want */
	unsigned born;       /* forks when it got its first registration */
	unsigned char held;  /* in another set, or polled, or it existed at
	                      * a fork: not delivered */
	unsigned char nomem; /* its heap could not grow: not delivered */
	struct reg **heap;   /* min-heap by key, room for ndeliv */
	unsigned nheap, cap;
	struct rlist list[W_LISTS]; /* [W_DUE], [W_LOOK], [W_LOOSE] */
	struct rlist drift;  /* in the heap with keys on another clock */
	int64_t off_real, off_boot; /* from CLOCK_MONOTONIC when keyed */
};

/* r is nowhere in its set s from now on (its want going, or moved). */
void tfd_eset_unplace(struct set *s, struct reg *r);
/* r's timer (want) is to be looked at again by s's next wait. */
void tfd_eset_look(struct set *s, struct reg *r);
/* Room in s's heap for its ndeliv registrations: 0, or -1 without the
 * memory; with none left (ndeliv 0), the heap is freed. */
int tfd_eset_room(struct set *s);
/* A wait that delivers on s (the backend's lock held too): its places
 * brought up to date (unless raw: a wait of the kernel's is under way),
 * the due ones reported into ev, up to room of them, and how many; *next
 * as tfd_epoll_deliver() tells it. */
int tfd_eset_due(struct set *s, struct epoll_event *ev, int room,
                 int64_t *next, int raw);

#endif
