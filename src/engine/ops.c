/* SPDX-License-Identifier: MIT */
/*
 * ops.c - settime, gettime and read on an engine timer.  They run on the
 * caller's thread and reach the timer's file only through the caller's
 * descriptor; posting is the service thread's (service.c).
 */
#define _GNU_SOURCE
#include "engine/engine.h"
#include "engine/notify.h"

#include <errno.h>
#include <pthread.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* Put the timer's deadline on its queue, or take it off if disarmed.  A
 * timer held back (see service.c) is not looked at before t->hold. */
void tfd_engine_requeue(struct tfd_timer *t)
{
	if (t->m.next)
		tfd_queue_set(&g.q[t->base], &t->u.q,
		              t->m.next > t->hold ? t->m.next : t->hold);
	else
		tfd_queue_remove(&g.q[t->base], &t->u.q);
}

/* Empty the file of what was posted, through the caller's descriptor fd;
 * the count taken.  Ends any hold-back. */
uint64_t tfd_engine_drain(struct tfd_timer *t, int fd)
{
	uint64_t n = 0;

	if (t->flags & T_SIGNALED) {
		tfd_notify_drain(fd, &n);
		t->flags &= ~T_SIGNALED;
	}
	t->hold = t->backoff = 0;
	return n;
}

/* Everything that expired up to now, as a read returns it (SPEC 2): from
 * the model, from the file, and `already` taken by the caller's read(2).
 * *zero says a count was pending and the clock's going back made the read
 * empty.  The deadline is queued again, and the thread woken if it is
 * earlier than the one it sleeps for (a hold-back just ended).  A closed
 * timer's number may be reused: its file is not drained through it. */
static uint64_t collect(struct tfd_timer *t, int fd, uint64_t already,
                        int *zero)
{
	int64_t now, next, hold;
	uint64_t n, pending;

	tfd_engine_wait_inflight(t); /* may drop the lock: now is after */
	now = tfd_clock_now(t->base);
	next = t->m.next;
	hold = t->hold;
	tfd_model_advance(&t->m, now);
	pending = t->flags & T_CLOSED ? 0 : tfd_engine_drain(t, fd);
	pending = tfd_count_add(pending, already);
	/* Linux forwards the timer on a read that counts, not on one that
	 * reports a cancellation. */
	n = tfd_model_read(&t->m, now, pending, t->base == BASE_REAL &&
	                   !(t->flags & T_CANCELLED));
	*zero = n == 0 && pending;
	if (t->m.next != next || t->hold != hold) { /* else queued as it is */
		tfd_engine_requeue(t);
		if (t->m.next)
			tfd_engine_kick(t->base, t->m.next);
	}
	return n;
}

/* The result of a read: 0 with *n (maybe 0: no bytes), ECANCELED, or
 * EAGAIN for nothing yet. */
static int take(struct tfd_timer *t, int fd, uint64_t already, uint64_t *n)
{
	int zero;

	*n = collect(t, fd, already, &zero);
	if (t->flags & T_CANCELLED) {
		t->flags &= ~T_CANCELLED;
		return ECANCELED;
	}
	return *n || zero ? 0 : EAGAIN;
}

int tfd_engine_settime(int fd, int flags, const struct itimerspec *nv,
                       struct itimerspec *old)
{
	struct tfd_timer *t;
	int64_t value = tfd_ts_to_ns(&nv->it_value);
	int absolute = flags & TFD_TIMER_ABSTIME;
	int e, base, cs;

	tfd_engine_lock(&cs);
	e = tfd_engine_find(fd, &t);
	if (!e && (t->flags & T_INHERITED))
		e = EINVAL;
	if (e)
		goto out;
	if (old)
		tfd_model_query(&t->m, tfd_clock_now(t->base), old);
	if (t->clockid == CLOCK_REALTIME && absolute &&
	    (flags & TFD_TIMER_CANCEL_ON_SET))
		t->flags |= T_CANCEL_ON_SET;
	else
		t->flags &= ~(T_CANCEL_ON_SET | T_CANCELLED);
	tfd_engine_wait_inflight(t);
	if (tfd_engine_let_go(t)) {
		e = EBADF; /* closed by another thread meanwhile */
		goto out;
	}
	tfd_engine_drain(t, fd);
	base = tfd_clock_base(t->clockid, absolute);
	if (base != t->base) {
		tfd_queue_remove(&g.q[t->base], &t->u.q);
		t->base = (unsigned char)base;
	}
	tfd_model_set(&t->m, tfd_clock_now(base), value,
	              tfd_ts_to_ns(&nv->it_interval), absolute);
	tfd_engine_requeue(t);
	if (g.virtual)
		tfd_engine_virtual_deliver(g.vnow); /* due now: posted before return */
	else if (t->m.next)
		tfd_engine_kick(base, t->m.next);
	if (value && (t->flags & T_CANCELLED)) {
		t->flags &= ~T_CANCELLED;
		e = ECANCELED;
	}
out:
	tfd_engine_unlock(cs);
	return e;
}

int tfd_engine_gettime(int fd, struct itimerspec *cur)
{
	struct tfd_timer *t;
	int e;

	/* No cancellation point is reached here: the plain lock (the one
	 * hot call that can do without tfd_engine_lock's two changes of the
	 * cancellation state). */
	pthread_mutex_lock(&g.lock);
	e = tfd_engine_find(fd, &t);
	if (!e && (t->flags & T_INHERITED))
		e = EINVAL;
	if (!e)
		tfd_model_query(&t->m, tfd_clock_now(t->base), cur);
	pthread_mutex_unlock(&g.lock);
	return e;
}

/* read(2) on fd with its own O_NONBLOCK: 0 or errno.  A cancellation
 * point, as read(2) is: called unlocked, with cancellation enabled. */
static int read_fd(int fd, uint64_t *n)
{
	ssize_t r = read(fd, n, sizeof(*n));

	if (r == (ssize_t)sizeof(*n))
		return 0;
	return r < 0 ? errno : EIO;
}

/* A blocked tfd_read() that is cancelled stops waiting on the timer. */
static void unwait(void *arg)
{
	struct tfd_timer *t = arg;

	pthread_mutex_lock(&g.lock);
	if (--t->waiters == 0 && (t->flags & T_CLOSED))
		tfd_engine_forget(t);
	pthread_mutex_unlock(&g.lock);
}

int tfd_engine_read(int fd, uint64_t *count)
{
	struct tfd_timer *t;
	uint64_t n = 0, d = 0;
	int e, r, cs;

	tfd_engine_lock(&cs);
	e = tfd_engine_find(fd, &t);
	if (!e && (t->flags & T_INHERITED)) {
		tfd_engine_unlock(cs);
		return read_fd(fd, count);
	}
	if (!e) {
		e = take(t, fd, 0, &n);
		if (tfd_engine_let_go(t)) /* closed while take() waited */
			e = e == EAGAIN ? EBADF : e;
	}
	if (e == EAGAIN) {
		/* Nothing counted: wait in read(2) (or EAGAIN) as the
		 * descriptor says, a cancellation point as read(2) is.  If
		 * another thread closes the timer meanwhile, it keeps running
		 * for this wait, as Linux keeps the file. */
		t->waiters++;
		pthread_mutex_unlock(&g.lock);
		pthread_setcancelstate(cs, NULL);
		pthread_cleanup_push(unwait, t);
		r = read_fd(fd, &d);
		pthread_cleanup_pop(0);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		pthread_mutex_lock(&g.lock);
		t->waiters--;
		e = r ? r : take(t, fd, d, &n);
		if (t->waiters == 0 && (t->flags & T_CLOSED)) {
			tfd_engine_forget(t);
			tfd_engine_stop_if_idle();
		}
	}
	tfd_engine_unlock(cs);
	*count = n;
	return e;
}

int tfd_engine_next_due(int64_t *in_ns)
{
	int64_t best = -1;
	int b, cs;

	tfd_engine_lock(&cs);
	for (b = 0; b < NBASE; b++) {
		const struct tfd_qent *top = tfd_queue_top(&g.q[b]);
		int64_t d;

		if (!top)
			continue;
		d = top->key - tfd_clock_now(b);
		if (d < 0)
			d = 0;
		if (best < 0 || d < best)
			best = d;
	}
	tfd_engine_unlock(cs);
	if (best < 0)
		return ENOENT;
	*in_ns = best;
	return 0;
}
