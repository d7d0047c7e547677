/* SPDX-License-Identifier: MIT */
/* queue.c - 4-ary min-heap of deadlines.  See queue.h. */
#include "core/queue.h"

#include <errno.h>
#include <stdlib.h>

#define ARITY 4

int tfd_queue_reserve(struct tfd_queue *q, size_t n)
{
	size_t cap;
	struct tfd_qent *a;

	if (n <= q->cap)
		return 0;
	if (n >= TFD_QUEUE_NONE)
		return ENOMEM;
	cap = q->cap ? q->cap : 16;
	while (cap < n)
		cap *= 2;
	a = realloc(q->a, cap * sizeof(*a));
	if (!a)
		return ENOMEM;
	q->a = a;
	q->cap = cap;
	return 0;
}

void tfd_queue_free(struct tfd_queue *q)
{
	free(q->a);
	q->a = NULL;
	q->len = q->cap = 0;
}

static void place(struct tfd_queue *q, size_t i, struct tfd_qent e)
{
	q->a[i] = e;
	e.node->pos = (uint32_t)i;
}

static void sift_up(struct tfd_queue *q, size_t i, struct tfd_qent e)
{
	while (i > 0) {
		size_t parent = (i - 1) / ARITY;

		if (q->a[parent].key <= e.key)
			break;
		place(q, i, q->a[parent]);
		i = parent;
	}
	place(q, i, e);
}

static void sift_down(struct tfd_queue *q, size_t i, struct tfd_qent e)
{
	for (;;) {
		size_t first = i * ARITY + 1, best = i, c, end;
		int64_t key = e.key;

		if (first >= q->len)
			break;
		end = first + ARITY < q->len ? first + ARITY : q->len;
		for (c = first; c < end; c++) {
			if (q->a[c].key < key) {
				best = c;
				key = q->a[c].key;
			}
		}
		if (best == i)
			break;
		place(q, i, q->a[best]);
		i = best;
	}
	place(q, i, e);
}

void tfd_queue_set(struct tfd_queue *q, struct tfd_qnode *n, int64_t key)
{
	struct tfd_qent e;
	size_t i;

	e.key = key;
	e.node = n;
	if (n->pos == TFD_QUEUE_NONE) {
		sift_up(q, q->len++, e);
		return;
	}
	i = n->pos;
	if (key < q->a[i].key)
		sift_up(q, i, e);
	else
		sift_down(q, i, e);
}

void tfd_queue_remove(struct tfd_queue *q, struct tfd_qnode *n)
{
	size_t i = n->pos;
	struct tfd_qent last;

	if (i == TFD_QUEUE_NONE)
		return;
	n->pos = TFD_QUEUE_NONE;
	last = q->a[--q->len];
	if (i == q->len)
		return;
	if (last.key < q->a[i].key)
		sift_up(q, i, last);
	else
		sift_down(q, i, last);
}

/* The subtree at i, below *best (children ARITY i + 1 to ARITY i + ARITY;
 * the depth is at most log4 of TFD_QUEUE_NONE, 16). */
static void least(const struct tfd_queue *q, size_t i, int64_t *best,
                  int (*accept)(const struct tfd_qent *e, void *arg),
                  void *arg)
{
	size_t c;

	if (i >= q->len || q->a[i].key >= *best)
		return;
	if (accept(&q->a[i], arg)) {
		*best = q->a[i].key; /* its subtree's keys are not below */
		return;
	}
	for (c = ARITY * i + 1; c <= ARITY * i + ARITY; c++)
		least(q, c, best, accept, arg);
}

int64_t tfd_queue_least(const struct tfd_queue *q, int64_t bound,
                        int (*accept)(const struct tfd_qent *e, void *arg),
                        void *arg)
{
	least(q, 0, &bound, accept, arg);
	return bound;
}
