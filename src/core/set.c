/* SPDX-License-Identifier: MIT */
/*
 * set.c - a timer set's arithmetic (set.h).
 */
#include "core/set.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TFD_SET_BLOCK 4096u /* records a block */
/* A block: its records, then a bit each, set for a key armed with
 * cancel-on-set (a field of the record would cost it 8 bytes). */
#define BLOCK_BYTES (TFD_SET_BLOCK * sizeof(struct tfd_set_rec) + \
                     TFD_SET_BLOCK / 8)
#define SET_MAX_KEYS (1u << 31) /* (index + 1 fits; buckets double) */

void tfd_set_core_init(struct tfd_set_core *s)
{
	memset(s, 0, sizeof(*s));
}

void tfd_set_core_free(struct tfd_set_core *s)
{
	size_t i;

	for (i = 0; i < s->nblock; i++)
		free(s->block[i]);
	free(s->block);
	free(s->bucket);
	tfd_queue_free(&s->q);
	tfd_set_core_init(s);
}

static struct tfd_set_rec *rec(const struct tfd_set_core *s, uint32_t i)
{
	return &s->block[i / TFD_SET_BLOCK][i % TFD_SET_BLOCK];
}

/* Record i's cancel-on-set bit: its byte, and in *bit its mask. */
static unsigned char *cbit(const struct tfd_set_core *s, uint32_t i,
                           unsigned char *bit)
{
	unsigned char *bits = (unsigned char *)(s->block[i / TFD_SET_BLOCK] +
	                                        TFD_SET_BLOCK);

	*bit = (unsigned char)(1u << (i % 8));
	return &bits[i % TFD_SET_BLOCK / 8];
}

/* Record i (+ 1) asks (cancel 1) or not to learn of clock sets: the
 * count of those kept, and a cancellation forgotten with the last. */
static void set_cancel(struct tfd_set_core *s, uint32_t i, int cancel)
{
	unsigned char bit, *w;

	if (!cancel && !s->ncancel) /* (no key asks: no bit is set) */
		return;
	w = cbit(s, i - 1, &bit);
	if (!(*w & bit) == !cancel)
		return;
	*w ^= bit;
	if (cancel)
		s->ncancel++;
	else if (!--s->ncancel)
		s->cancelled = 0;
}

/* The record a heap entry is of. */
static struct tfd_set_rec *rec_of(const struct tfd_qent *e)
{
	char *q = (char *)e->node;

	return (struct tfd_set_rec *)(void *)(q -
	                                      offsetof(struct tfd_set_rec, q));
}

/* Fibonacci hashing: the key's bits spread over the bucket's. */
static uint32_t bucket_of(const struct tfd_set_core *s, uint64_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) &
	       (s->nbucket - 1);
}

/* Key's record index + 1, 0 if it has none; *link (if not NULL) the
 * place that names it. */
static uint32_t find(const struct tfd_set_core *s, uint64_t key,
                     uint32_t **link)
{
	uint32_t *l, i;

	if (link)
		*link = NULL;
	if (!s->nbucket)
		return 0;
	l = &s->bucket[bucket_of(s, key)];
	for (; (i = *l) && rec(s, i - 1)->key != key; l = &rec(s, i - 1)->next)
		;
	if (link)
		*link = l;
	return i;
}

/* Buckets for as many as keys, if there are fewer: 0 or ENOMEM. */
static int grow_buckets(struct tfd_set_core *s, uint32_t keys)
{
	uint32_t n = s->nbucket ? s->nbucket : 16, *old = s->bucket, on, i;

	if (keys <= s->nbucket)
		return 0;
	while (n < keys)
		n *= 2;
	s->bucket = calloc(n, sizeof(*s->bucket));
	if (!s->bucket) {
		s->bucket = old;
		return ENOMEM;
	}
	on = s->nbucket;
	s->nbucket = n;
	for (i = 0; i < on; i++) {
		uint32_t k = old[i];

		while (k) {
			struct tfd_set_rec *r = rec(s, k - 1);
			uint32_t next = r->next;
			uint32_t *b = &s->bucket[bucket_of(s, r->key)];

			r->next = *b;
			*b = k;
			k = next;
		}
	}
	free(old);
	return 0;
}

/* A record for a new key, in the hash: its index + 1, or 0 (ENOMEM). */
static uint32_t take_rec(struct tfd_set_core *s, uint64_t key)
{
	struct tfd_set_rec **blocks, *r;
	uint32_t i, *b;

	if (s->nkey >= SET_MAX_KEYS || grow_buckets(s, s->nkey + 1) ||
	    tfd_queue_reserve(&s->q, (size_t)s->nkey + 1))
		return 0;
	if (s->free) {
		i = s->free;
		s->free = rec(s, i - 1)->next;
	} else {
		if (s->nrec == s->nblock * TFD_SET_BLOCK) {
			blocks = realloc(s->block,
			                 (s->nblock + 1) * sizeof(*blocks));
			if (!blocks)
				return 0;
			s->block = blocks;
			s->block[s->nblock] = calloc(1, BLOCK_BYTES);
			if (!s->block[s->nblock])
				return 0;
			s->nblock++;
		}
		i = ++s->nrec;
	}
	r = rec(s, i - 1);
	memset(r, 0, sizeof(*r));
	r->key = key;
	r->q.pos = TFD_QUEUE_NONE;
	b = &s->bucket[bucket_of(s, key)];
	r->next = *b;
	*b = i;
	s->nkey++;
	return i;
}

/* Record i (+ 1), named by *link, out of the hash and the heap, onto the
 * free list. */
static void forget(struct tfd_set_core *s, uint32_t i, uint32_t *link)
{
	struct tfd_set_rec *r = rec(s, i - 1);

	set_cancel(s, i, 0);
	*link = r->next;
	tfd_queue_remove(&s->q, &r->q);
	r->next = s->free;
	s->free = i;
	s->nkey--;
}

static void query(const struct tfd_set_rec *r, int64_t now,
                  struct itimerspec *cur)
{
	if (r)
		tfd_model_query(&r->m, now, cur);
	else
		memset(cur, 0, sizeof(*cur));
}

int tfd_set_core_arm(struct tfd_set_core *s, uint64_t key, int64_t now,
                     int64_t value, int64_t interval, int absolute,
                     int cancel, struct itimerspec *old)
{
	uint32_t *link, i = find(s, key, &link);
	struct tfd_set_rec *r;
	int64_t before;

	if (old)
		query(i ? rec(s, i - 1) : NULL, now, old);
	if (!value) {
		if (i)
			forget(s, i, link);
		return 0;
	}
	if (!i && !(i = take_rec(s, key)))
		return ENOMEM;
	set_cancel(s, i, cancel);
	r = rec(s, i - 1);
	before = r->m.next;
	tfd_model_set(&r->m, now, value, interval, absolute);
	/* A key pushed later keeps its place in the heap, which is then
	 * early (never later than the key's deadline): the heap is touched
	 * when that place comes to the top (fresh()). */
	if (r->q.pos == TFD_QUEUE_NONE || r->m.next < before)
		tfd_queue_set(&s->q, &r->q, r->m.next);
	return 0;
}

int tfd_set_core_query(const struct tfd_set_core *s, uint64_t key,
                       int64_t now, struct itimerspec *cur)
{
	uint32_t i = find(s, key, NULL);

	if (!i)
		return ENOENT;
	query(rec(s, i - 1), now, cur);
	return 0;
}

/*
 * The heap's top, its key the deadline of its record.  A key re-armed
 * later than its place in the heap (a connection's activity pushing its
 * timeout) kept that place: each such place that comes to the top moves
 * down to the key's deadline, once however often the key was pushed.
 * A place is never later than its key's deadline.
 */
static const struct tfd_qent *fresh(struct tfd_set_core *s)
{
	const struct tfd_qent *top;

	while ((top = tfd_queue_top(&s->q)) &&
	       top->key != rec_of(top)->m.next)
		tfd_queue_set(&s->q, top->node, rec_of(top)->m.next);
	return top;
}

size_t tfd_set_core_take(struct tfd_set_core *s, int64_t now,
                         struct tfd_set_out *out, size_t max,
                         int64_t *again)
{
	const struct tfd_qent *top;
	size_t n = 0;

	while (n < max && (top = fresh(s)) && top->key <= now) {
		struct tfd_set_rec *r = rec_of(top);
		uint32_t *link = NULL;

		tfd_model_advance(&r->m, now);
		out[n].key = r->key;
		out[n++].count = tfd_model_take(&r->m);
		if (r->m.next) {
			tfd_queue_set(&s->q, &r->q, r->m.next);
			if (again && r->m.next < *again)
				*again = r->m.next;
		} else {
			uint32_t i = find(s, r->key, &link);

			forget(s, i, link);
		}
	}
	return n;
}

int64_t tfd_set_core_next(struct tfd_set_core *s)
{
	const struct tfd_qent *top = fresh(s);

	return top ? top->key : -1;
}

void tfd_set_core_clock_set(struct tfd_set_core *s)
{
	if (s->ncancel)
		s->cancelled = 1;
}

int tfd_set_core_cancelled(struct tfd_set_core *s, int take)
{
	int c = s->cancelled;

	if (take)
		s->cancelled = 0;
	return c;
}
