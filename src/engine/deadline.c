/* SPDX-License-Identifier: MIT */
/*
 * deadline.c - where a timer's deadline waits.
 *
 * The process that delivers a timer keeps its deadline in its own queues
 * (one per clock base, in its own memory) and its service thread sleeps
 * until the earliest.  When another process of the family changes the
 * timer (a settime in a child, a read that forwards it), it cannot reach
 * those queues: it puts the timer in the deliverer's inbox, in the
 * family's memory, and wakes the deliverer if the new deadline is earlier
 * than the one it sleeps for, exactly as a settime of its own would.  The
 * deliverer requeues what its inbox holds before it sleeps again.  The
 * timer's model is the truth; a queue only says when to look at it.
 */
#define _GNU_SOURCE
#include "engine/engine.h"

#include <errno.h>

static int mine(const struct tfd_timer *t)
{
	return tfd_eng.self >= 0 && t->deliverer == tfd_eng.self;
}

static int64_t key_of(const struct tfd_timer *t)
{
	return t->m.next > t->hold ? t->m.next : t->hold;
}

/* Delivered by the waits of this process alone (T_COVER): nothing to
 * post, so no deadline to wake for.  A timer another process holds too,
 * or one waiting for a deliverer, is covered by nothing. */
static int covered(const struct tfd_timer *t)
{
	return (t->flags & T_COVER) && mine(t) && tfd_engine_alone(t);
}

void tfd_engine_unqueue(struct tfd_timer *t)
{
	if (t->q.pos != TFD_QUEUE_NONE)
		tfd_queue_remove(&tfd_eng.q[t->qbase], &t->q);
}

static void local_requeue(struct tfd_timer *t)
{
	if (t->base == BASE_REAL && (t->m.next || (t->flags & T_CANCEL_ON_SET)))
		tfd_eng.want_watch = 1; /* clock.c */
	if (!t->m.next || covered(t)) {
		tfd_engine_unqueue(t);
		return;
	}
	if (t->qbase != t->base)
		tfd_engine_unqueue(t);
	tfd_queue_set(&tfd_eng.q[t->base], &t->q, key_of(t));
	t->qbase = t->base;
}

/* t's model changed: put its deadline where its deliverer looks.  A timer
 * waiting for adoption is queued by whoever adopts it. */
void tfd_engine_requeue(struct tfd_timer *t)
{
	struct tfd_proc *p;

	TFD_ASSERT_LOCKED();
	if (mine(t)) {
		local_requeue(t);
		return;
	}
	if (t->deliverer == NO_PROC || (t->flags & T_INBOX))
		return;
	p = &tfd_fam->proc[t->deliverer];
	t->next = p->inbox;
	p->inbox = (uint32_t)(t - tfd_fam->timer) + 1;
	t->flags |= T_INBOX;
}

/* Wake t's deliverer if it sleeps past t's deadline: one wake-up is
 * enough, so the deadline it sleeps for is lowered at once. */
void tfd_engine_kick(struct tfd_timer *t)
{
	struct tfd_proc *p;
	int64_t key = key_of(t);

	if (t->deliverer == NO_PROC || !t->m.next || covered(t))
		return;
	p = &tfd_fam->proc[t->deliverer];
	if (key < p->sleep_until[t->base]) {
		p->sleep_until[t->base] = key;
		tfd_family_poke(t->deliverer);
	}
}

void tfd_engine_uncover(struct tfd_timer *t)
{
	if (!(t->flags & T_COVER))
		return;
	t->flags &= (unsigned char)~T_COVER;
	tfd_engine_requeue(t);
	tfd_engine_kick(t);
}

void tfd_engine_inbox_unlink(struct tfd_timer *t)
{
	uint32_t me = (uint32_t)(t - tfd_fam->timer) + 1;
	uint64_t m;
	int i;

	if (!(t->flags & T_INBOX))
		return;
	TFD_PROC_EACH(i, tfd_fam->inuse, m) {
		uint32_t *link = &tfd_fam->proc[i].inbox;

		while (*link && *link != me)
			link = &tfd_fam->timer[*link - 1].next;
		if (*link) {
			*link = t->next;
			break;
		}
	}
	t->next = 0;
	t->flags &= (unsigned char)~T_INBOX;
}

/* Empty our queues without touching the nodes: in a child, they are the
 * parent's timers, still queued in the parent. */
void tfd_engine_queues_forget(void)
{
	int b;

	for (b = 0; b < NBASE; b++)
		tfd_eng.q[b].len = 0;
}

/* Queue again, from their models, every timer we deliver. */
static void rebuild(void)
{
	struct tfd_hold *h;
	size_t i;
	int b;

	for (b = 0; b < NBASE; b++) {
		for (i = 0; i < tfd_eng.q[b].len; i++)
			tfd_eng.q[b].a[i].node->pos = TFD_QUEUE_NONE;
		tfd_eng.q[b].len = 0;
	}
	TFD_HOLDS_EACH(h)
		if (mine(h->t))
			local_requeue(h->t);
}

/* Take over every timer we hold whose deliverer let go of it or died,
 * if we can post to it (service: on the service thread, where a forked
 * child takes the files it needs).  1 if one is left for the service
 * thread. */
static int adopt(int service)
{
	struct tfd_hold *h;
	int left = 0;

	TFD_HOLDS_EACH(h) {
		struct tfd_timer *t = h->t;

		if (t->deliverer != NO_PROC)
			continue;
		if (tfd_engine_hold_file(h, service) < 0) {
			left |= !service && !h->direct;
			continue;
		}
		t->deliverer = (signed char)tfd_eng.self;
		t->file = h->file;
		t->q.pos = TFD_QUEUE_NONE;
		local_requeue(t);
	}
	return left;
}

int tfd_engine_sync_pending(void)
{
	const struct tfd_proc *p;

	if (tfd_eng.self < 0)
		return 0;
	p = &tfd_fam->proc[tfd_eng.self];
	return p->resync || p->adopt || p->inbox;
}

/* What other processes asked of us: lock held. */
void tfd_engine_sync(int service)
{
	struct tfd_proc *p;

	TFD_ASSERT_LOCKED();
	if (tfd_eng.self < 0)
		return;
	p = &tfd_fam->proc[tfd_eng.self];
	if (p->resync) {
		p->resync = 0;
		rebuild();
	}
	if (p->adopt) {
		p->adopt = adopt(service); /* left for our service thread? */
		if (p->adopt)
			tfd_family_poke(tfd_eng.self);
	}
	while (p->inbox) {
		struct tfd_timer *t = &tfd_fam->timer[p->inbox - 1];

		p->inbox = t->next;
		t->next = 0;
		t->flags &= (unsigned char)~T_INBOX;
		if (mine(t))
			local_requeue(t);
	}
}

/* Room on our queues for one more timer that may sit on the bases of
 * mask, taken now so that arming it (or adopting it) cannot fail. */
int tfd_engine_reserve(unsigned mask)
{
	int b;

	for (b = 0; b < NBASE; b++)
		if ((mask & 1u << b) &&
		    tfd_queue_reserve(&tfd_eng.q[b], tfd_eng.nq[b] + 1) != 0)
			return ENOMEM;
	for (b = 0; b < NBASE; b++)
		if (mask & 1u << b)
			tfd_eng.nq[b]++;
	return 0;
}

void tfd_engine_unreserve(unsigned mask)
{
	int b;

	for (b = 0; b < NBASE; b++)
		if (mask & 1u << b)
			tfd_eng.nq[b]--;
}
