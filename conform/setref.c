/* SPDX-License-Identifier: MIT */
/*
 * setref.c - a set made of one kernel timerfd per key (setref.h).
 */
#define _GNU_SOURCE
#include "setref.h"

#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

int setref_create(struct setref *s, int clock)
{
	memset(s, 0, sizeof(*s));
	s->open = 1;
	s->clock = clock;
	return 0;
}

/* Key's index, or -1. */
static int find(const struct setref *s, uint64_t key)
{
	int i;

	for (i = 0; i < SETREF_KEYS; i++)
		if (s->k[i].used && s->k[i].key == key)
			return i;
	return -1;
}

static void forget(struct setref_key *k)
{
	close(k->fd);
	memset(k, 0, sizeof(*k));
}

/* A new key with its timerfd, or NULL. */
static struct setref_key *add(struct setref *s, uint64_t key)
{
	size_t i;

	for (i = 0; i < SETREF_KEYS; i++)
		if (!s->k[i].used)
			break;
	if (i == SETREF_KEYS)
		return NULL;
	s->k[i].fd = timerfd_create(s->clock, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->k[i].fd < 0)
		return NULL;
	s->k[i].used = 1;
	s->k[i].key = key;
	return &s->k[i];
}

int setref_settime(struct setref *s, uint64_t key, int flags,
                   const struct itimerspec *nv, struct itimerspec *old)
{
	int i = find(s, key);
	struct setref_key *k = i < 0 ? NULL : &s->k[i];
	struct itimerspec was;

	memset(&was, 0, sizeof(was));
	if (k && timerfd_gettime(k->fd, &was) < 0)
		return errno;
	if (!nv->it_value.tv_sec && !nv->it_value.tv_nsec) {
		if (k)
			forget(k);
	} else {
		if (!k && !(k = add(s, key)))
			return ENOMEM;
		/* re-armed: what was not handed out is discarded, as the
		 * timerfd discards what was not read */
		k->unread = 0;
		k->oneshot = !nv->it_interval.tv_sec &&
		             !nv->it_interval.tv_nsec;
		if (timerfd_settime(k->fd, flags, nv, NULL) < 0)
			return errno;
	}
	if (old)
		*old = was;
	return 0;
}

int setref_gettime(const struct setref *s, uint64_t key,
                   struct itimerspec *cur)
{
	int i = find(s, key);

	if (i < 0)
		return ENOENT;
	return timerfd_gettime(s->k[i].fd, cur) < 0 ? errno : 0;
}

size_t setref_due(struct setref *s, struct setref_rec *out, size_t max)
{
	size_t i, n = 0;
	uint64_t c;

	for (i = 0; i < SETREF_KEYS; i++) {
		struct setref_key *k = &s->k[i];

		if (!k->used)
			continue;
		if (read(k->fd, &c, sizeof(c)) == (ssize_t)sizeof(c))
			k->unread += c;
		if (k->unread && n < max) {
			out[n].key = k->key;
			out[n++].count = k->unread;
		}
	}
	return n;
}

void setref_took(struct setref *s, uint64_t key)
{
	int i = find(s, key);

	if (i < 0)
		return;
	s->k[i].unread = 0;
	if (s->k[i].oneshot)
		forget(&s->k[i]);
}

void setref_close(struct setref *s)
{
	size_t i;

	for (i = 0; i < SETREF_KEYS; i++)
		if (s->k[i].used)
			forget(&s->k[i]);
	s->open = 0;
}
