/* SPDX-License-Identifier: MIT */
/*
 * queue.h - the deadline queue: a 4-ary min-heap keyed by time.
 *
 * Nodes are embedded in the caller's objects and remember their position,
 * so update and removal are O(log n).  The heap never allocates on insert:
 * the caller reserves room first (tfd_queue_reserve), so arming a timer
 * cannot fail for lack of memory.
 */
#ifndef TFD_QUEUE_H
#define TFD_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#define TFD_QUEUE_NONE UINT32_MAX

struct tfd_qnode {
	uint32_t pos; /* index in the heap, TFD_QUEUE_NONE when not queued */
};

struct tfd_qent {
	int64_t key;
	struct tfd_qnode *node;
};

struct tfd_queue {
	struct tfd_qent *a;
	size_t len, cap;
};

/* Make room for at least n entries (fewer than TFD_QUEUE_NONE).  0, or
 * ENOMEM. */
int tfd_queue_reserve(struct tfd_queue *q, size_t n);
void tfd_queue_free(struct tfd_queue *q);

/* Insert n with key, or move it to key if queued.  Room must be reserved. */
void tfd_queue_set(struct tfd_queue *q, struct tfd_qnode *n, int64_t key);
/* Remove n if it is queued. */
void tfd_queue_remove(struct tfd_queue *q, struct tfd_qnode *n);

/* The smallest key below bound of an entry that accept() takes (bound
 * if none).  accept is asked only of entries whose key is below the best
 * found so far, the root first: with the top taken, once; each entry
 * refused on the way adds at most its 4 children. */
int64_t tfd_queue_least(const struct tfd_queue *q, int64_t bound,
                        int (*accept)(const struct tfd_qent *e, void *arg),
                        void *arg);

/* The entry with the smallest key, or NULL when empty. */
static inline const struct tfd_qent *tfd_queue_top(const struct tfd_queue *q)
{
	return q->len ? &q->a[0] : NULL;
}

#endif
