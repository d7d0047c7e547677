/* SPDX-License-Identifier: MIT */
/*
 * fork.c - what a child inherits.  The child has no service thread.  Its
 * inherited timers stay with the parent, whose engine keeps posting to the
 * files both now share: the child may read and poll them and close them,
 * not change them (tfd(7), FORK).  Its own new timers start its own thread.
 */
#define _GNU_SOURCE
#include "engine/engine.h"

#include <pthread.h>
#include <stdlib.h>

static void prepare(void)
{
	pthread_mutex_lock(&g.lock);
}

static void parent(void)
{
	pthread_mutex_unlock(&g.lock);
}

static void child(void)
{
	pthread_mutexattr_t a;
	size_t i;
	int b;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&g.lock, &a);
	pthread_mutexattr_destroy(&a);
	pthread_cond_init(&g.changed, NULL);
	tfd_engine_after_fork();
	for (b = 0; b < NBASE; b++)
		g.q[b].len = 0;
	/* The parent's private files and its list of files to close mean
	 * nothing here; timers kept only for a parent's waiter are lost. */
	g.freed = NULL;
	g.nlive = g.ntimers;
	for (i = 0; i < g.nslot; i++) {
		struct tfd_timer *t = g.slot[i];

		if (!t)
			continue;
		t->file = (int)i;
		t->u.q.pos = TFD_QUEUE_NONE;
		t->waiters = 0;
		t->flags = T_INHERITED | T_DIRECT;
	}
}

static void init_once(void)
{
	pthread_atfork(prepare, parent, child);
}

void tfd_engine_fork_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, init_once);
}
