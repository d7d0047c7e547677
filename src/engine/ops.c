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
#include <linux/kcmp.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

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
	t->flags &= (unsigned char)~T_DEFERRED;
	return n;
}

/* Everything that expired up to now, as a read returns it (SPEC 2): from
 * the model, from the file, and `already` taken by the caller's read(2).
 * *zero says a count was pending and the clock's going back made the read
 * empty.  The deadline is queued again, and its deliverer woken if it is
 * earlier than the one it sleeps for (a hold-back just ended).  A closed
 * hold's number may be reused: its file is not drained through it.
 * With h found by its number (not waiting: the caller holds no waiter
 * count on it), EBADF if another thread closed it while the lock was
 * dropped; a waiting caller reads on, as Linux's file lives until its
 * read returns. */
static int collect(struct tfd_hold *h, int fd, uint64_t already,
                   int waiting, uint64_t *count, int *zero)
{
	struct tfd_timer *t = h->t;
	int64_t now, next, hold;
	uint64_t pending;

	if (tfd_engine_wait_inflight(h) && !waiting) {
		if (!h->waiters)
			tfd_engine_let_hold_go(h);
		return EBADF;
	}
	now = tfd_clock_now(t->base); /* after any wait */
	next = t->m.next;
	hold = t->hold;
	tfd_model_advance(&t->m, now);
	pending = h->closed ? 0 : tfd_engine_drain(t, fd);
	pending = tfd_count_add(pending, already);
	/* Linux forwards the timer on a read that counts, not on one that
	 * reports a cancellation. */
	*count = tfd_model_read(&t->m, now, pending, t->base == BASE_REAL &&
	                        !(t->flags & T_CANCELLED));
	*zero = *count == 0 && pending;
	if (t->m.next != next || t->hold != hold) { /* else queued as it is */
		tfd_engine_requeue(t);
		tfd_engine_kick(t);
	}
	return 0;
}

/* The result of a read: 0 with *n (maybe 0: no bytes), ECANCELED, EAGAIN
 * for nothing yet, or EBADF (closed meanwhile). */
static int take_count(struct tfd_hold *h, int fd, uint64_t already, int waiting,
                uint64_t *n)
{
	int zero, e = collect(h, fd, already, waiting, n, &zero);

	if (e)
		return e;
	if (h->t->flags & T_CANCELLED) {
		h->t->flags &= (unsigned char)~T_CANCELLED;
		return ECANCELED;
	}
	return *n || zero ? 0 : EAGAIN;
}

int tfd_engine_settime(int fd, int flags, const struct itimerspec *nv,
                       struct itimerspec *old)
{
	struct tfd_hold *h;
	struct tfd_timer *t;
	int64_t value = tfd_ts_to_ns(&nv->it_value);
	int absolute = flags & TFD_TIMER_ABSTIME;
	int e, base, cs;

	tfd_engine_lock(&cs);
	e = tfd_engine_find(fd, &h);
	if (e)
		goto out;
	t = h->t;
	if (old)
		tfd_model_query(&t->m, tfd_clock_now(t->base), old);
	if (t->clockid == CLOCK_REALTIME && absolute &&
	    (flags & TFD_TIMER_CANCEL_ON_SET))
		t->flags |= T_CANCEL_ON_SET;
	else
		t->flags &= (unsigned char)~(T_CANCEL_ON_SET | T_CANCELLED);
	if (tfd_engine_wait_inflight(h)) {
		if (!h->waiters)
			tfd_engine_let_hold_go(h);
		e = EBADF; /* closed by another thread meanwhile */
		goto out;
	}
	tfd_engine_drain(t, fd);
	base = tfd_clock_base(t->clockid, absolute);
	t->base = (unsigned char)base;
	if (absolute && value)
		value = tfd_clock_to_shared(base, value);
	tfd_model_set(&t->m, tfd_clock_now(base), value,
	              tfd_ts_to_ns(&nv->it_interval), absolute);
	if (tfd_eng.asleep) /* a wait asleep may be past the new deadline:
	                     * a post wakes it (queued and kicked below) */
		t->flags &= (unsigned char)~T_COVER;
	t->hold = t->backoff = 0;
	t->flags &= (unsigned char)~T_DEFERRED;
	tfd_engine_requeue(t);
	if (tfd_eng.virtual)
		tfd_engine_virtual_deliver(tfd_eng.vnow); /* due now: posted before return */
	else
		tfd_engine_kick(t);
	if (value && (t->flags & T_CANCELLED)) {
		t->flags &= (unsigned char)~T_CANCELLED;
		e = ECANCELED;
	}
out:
	tfd_engine_unlock(cs);
	return e;
}

int tfd_engine_gettime(int fd, struct itimerspec *cur)
{
	struct tfd_hold *h;
	int e;

	if (!__atomic_load_n(&tfd_fam, __ATOMIC_ACQUIRE))
		return tfd_engine_find(fd, &h); /* no timer was ever made */
	/* No cancellation point is reached here: the plain lock (the one
	 * hot call that can do without tfd_engine_lock's two changes of the
	 * cancellation state). */
	tfd_family_lock();
	if (tfd_eng.start_pending)
		tfd_engine_start_pending(); /* in a forked child */
	e = tfd_engine_find(fd, &h);
	if (!e)
		tfd_model_query(&h->t->m, tfd_clock_now(h->t->base), cur);
	tfd_family_unlock();
	return e;
}

/* ---- readiness, for the waits that deliver (backend.h, ready) ---- */

int tfd_engine_ready_begin(void)
{
	int cs;

	tfd_engine_lock(&cs);
	return cs;
}

/* The timer at fd, if a wait may deliver it: not one whose file a
 * process outside the family may read (T_OUTSIDE: the count there is
 * not ours to tell). */
static struct tfd_timer *deliverable(int fd)
{
	struct tfd_hold *h;

	TFD_ASSERT_LOCKED();
	if (fd < 0 || (size_t)fd >= tfd_eng.nslot || !(h = tfd_eng.slot[fd]) ||
	    (h->t->flags & T_OUTSIDE))
		return NULL;
	return h->t;
}

/* Whether a read would count what its file does not show: what the
 * service thread has counted (m.ticks, to post) or is posting (inflight:
 * the file shows it in a moment), or a deadline that has passed and that
 * no one has counted yet: 1.  2 for a timer whose post has landed
 * (T_SIGNALED): the file shows it, unless a read the library does not
 * see (a raw read(2)) emptied it, which only a look at the file tells.
 * Never early: the deadline is compared with the timer's own clock. */
int tfd_engine_ready(int fd, int64_t *mono, int *drifts)
{
	struct tfd_timer *t = deliverable(fd);
	int64_t now, next;

	if (!t)
		return -1;
	if (t->m.ticks || __atomic_load_n(&t->inflight, __ATOMIC_ACQUIRE))
		return 1;
	*mono = -1;
	if (drifts)
		*drifts = t->base != BASE_MONO;
	if (t->m.next) {
		now = tfd_clock_now(t->base);
		if (t->m.next <= now)
			return 1;
		next = t->base == BASE_MONO
		               ? t->m.next
		               : tfd_ns_add(tfd_clock_now(BASE_MONO),
		                            t->m.next - now);
		*mono = tfd_clock_to_local(BASE_MONO, next); /* as we read it */
	}
	return t->flags & T_SIGNALED ? 2 : 0;
}

/* waits 1: the caller will be awake at fd's deadline, which has not
 * passed, to deliver it: the service thread holds its post back until
 * DELIVER_GRACE after it (for waits it cannot see: Linux's epoll, another
 * process), and need not wake before.  waits 0: a wait has ended; if
 * it ends before the deadline, the post is due at the deadline again
 * (also where another wait still sleeps for it: that one is woken by the
 * post then). */
void tfd_engine_defer(int fd, int waits)
{
	struct tfd_timer *t = deliverable(fd);
	int64_t mono;

	if (!t)
		return;
	if (waits) {
		int64_t until = tfd_ns_add(t->m.next, DELIVER_GRACE);

		if (!t->m.next || t->hold >= until)
			return;
		t->hold = until;
		t->flags |= T_DEFERRED;
		tfd_engine_requeue(t);
		return;
	}
	if ((t->flags & T_DEFERRED) && tfd_engine_ready(fd, &mono, NULL) != 1) {
		t->flags &= (unsigned char)~T_DEFERRED;
		t->hold = 0;
		tfd_engine_requeue(t);
		tfd_engine_kick(t);
	}
}

int tfd_engine_cover(int fd, int on)
{
	struct tfd_hold *h;
	struct tfd_timer *t = deliverable(fd);

	if (!t)
		return 0;
	h = tfd_eng.slot[fd];
	if (!on || h->nfds != 1 || t->deliverer != tfd_eng.self ||
	    !tfd_engine_alone(t)) {
		tfd_engine_uncover(t);
		return 0;
	}
	if (!(t->flags & T_COVER)) {
		t->flags |= T_COVER;
		tfd_engine_requeue(t); /* off the queue */
	}
	return 1;
}

void tfd_engine_mode(int fd, int nonblock)
{
	struct tfd_hold *h;
	int cs;

	tfd_engine_lock(&cs);
	if (tfd_engine_find(fd, &h) == 0)
		h->mode = nonblock < 0 ? MODE_UNKNOWN
		          : nonblock ? MODE_NONBLOCK : MODE_BLOCKING;
	tfd_engine_unlock(cs);
}

/* A read with nothing to count would fail with EAGAIN in read(2): the
 * mode the host told, while no other process holds the file (whose
 * changes to its flags this one does not see). */
static int nonblocking(const struct tfd_hold *h)
{
	return h->mode == MODE_NONBLOCK && tfd_engine_alone(h->t);
}

/* A wait that delivers goes to sleep in the kernel (d 1) or has woken
 * (d -1), the lock held: while one sleeps, a timer armed anew is posted
 * as one nobody covers. */
void tfd_engine_asleep(int d)
{
	tfd_eng.asleep += (unsigned)d;
}

/* Whether the caller's number fd names h's file.  The slot says so, but
 * a close the library did not see (a raw close system call) may have
 * given the number to a socket of the program's since: a write there
 * would be read by the program, or block.  On the fallback, fd is the
 * number the service thread itself posts to; else the kernel compares
 * it with the service thread's copy (kcmp(2); refused or missing: no). */
static int names_file(const struct tfd_hold *h, int fd)
{
	if (h->file < 0 || h->unchecked)
		return 0;
	if (h->direct)
		return h->file == fd;
	return tfd_eng.tid > 0 &&
	       syscall(SYS_kcmp, (pid_t)gettid(), (pid_t)tfd_eng.tid, KCMP_FILE,
	               (unsigned long)fd, (unsigned long)h->file) == 0;
}

/* A wait whose readiness only the kernel tells (an epoll set) posts a
 * timer of its set that is due and whose file does not show it (a poll
 * reported it from memory, and the service thread holds the post back):
 * what the service thread would post, written through the caller's own
 * number for the timer once the kernel says it names the timer's file,
 * with the lock; the hold ended either way (not posted: the service
 * thread posts at once).  1 if it posted.  Not a timer posted already
 * and unread (T_SIGNALED), nor one being posted: those are the service
 * thread's, as before. */
int tfd_engine_post_due(int fd)
{
	struct tfd_timer *t = deliverable(fd);
	int posted = 0;

	if (!t || (t->flags & T_SIGNALED) ||
	    __atomic_load_n(&t->inflight, __ATOMIC_ACQUIRE))
		return 0;
	if (!t->m.ticks && t->m.next)
		tfd_model_advance(&t->m, tfd_clock_now(t->base));
	if (!t->m.ticks)
		return 0;
	if (names_file(tfd_eng.slot[fd], fd) &&
	    tfd_notify_post(fd, t->m.ticks) == 0) {
		t->m.ticks = 0;
		t->flags |= T_SIGNALED;
		posted = 1;
	}
	t->hold = t->backoff = 0; /* (not posted: the service thread will) */
	t->flags &= (unsigned char)~T_DEFERRED;
	tfd_engine_requeue(t);
	tfd_engine_kick(t);
	return posted;
}

/* ---- blocking reads ---- */

void tfd_engine_number_gone(int fd)
{
	struct tfd_transit *r;

	for (r = tfd_eng.transit; r; r = r->next)
		if (r->fd == fd)
			r->closed = 1;
}

/* A timer got number fd: a read(2) on fd that has not started yet when
 * fd was let go of may be reading this one's file. */
void tfd_engine_number_named(int fd, struct tfd_hold *h)
{
	struct tfd_transit *r;

	for (r = tfd_eng.transit; r; r = r->next) {
		if (r->fd != fd || !r->closed || r->nalso == 4)
			continue;
		r->closed = 0;
		r->also[r->nalso++] = h;
		h->waiters++;
	}
}

/* read(2) on fd: 0 or errno.  A cancellation point, as read(2) is:
 * called unlocked, with cancellation enabled. */
static int read_fd(int fd, uint64_t *n)
{
	ssize_t r = tfd_host.read(fd, n, sizeof(*n));

	if (r == (ssize_t)sizeof(*n))
		return 0;
	return r < 0 ? errno : EIO;
}

/*
 * How a blocking read of h waits, one round at a time: in read(2) for a
 * post (WAIT_READ), where a service thread posts to its file (ours, or
 * the deliverer's in another process).  In a forked child with no
 * service thread (fork.c), in poll(2) for the ms left until h's deadline,
 * WAIT_MS at most, to see a change made elsewhere (a deadline made
 * earlier, a deliverer gone) and to try the thread again; after each such
 * round the read looks at the model again.
 */
#define WAIT_MS 50
#define WAIT_READ (-1)

static int wait_ms(const struct tfd_hold *h)
{
	const struct tfd_timer *t = h->t;
	int64_t left;

	if (!tfd_eng.start_pending || tfd_eng.virtual || tfd_eng.self < 0)
		return WAIT_READ;
	if (!t->m.next)
		return WAIT_MS;
	left = t->m.next - tfd_clock_now(t->base);
	if (left <= 0)
		return 0;
	return left >= WAIT_MS * 1000000LL ? WAIT_MS :
	       (int)((left + 999999) / 1000000);
}

/* fd still names h: a round of a wait may look at it again. */
static int names(const struct tfd_hold *h, int fd)
{
	return (size_t)fd < tfd_eng.nslot && tfd_eng.slot[fd] == h &&
	       !h->closed;
}

/* poll(2) on fd for ms: 0 (readable, timed out or interrupted: the caller
 * looks again, as a read(2) restarts), or errno. */
static int poll_fd(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (tfd_host.poll(&p, 1, ms) < 0)
		return errno == EINTR ? 0 : errno;
	return p.revents & POLLNVAL ? EBADF : 0;
}

/* The number to drain h's file through: fd while it names h, else another
 * that does (fd was closed, and perhaps reused, meanwhile). */
static int number_of(const struct tfd_hold *h, int fd)
{
	size_t i;

	if ((size_t)fd < tfd_eng.nslot && tfd_eng.slot[fd] == h)
		return fd;
	for (i = 0; i < tfd_eng.nslot; i++)
		if (tfd_eng.slot[i] == h)
			return (int)i;
	return fd; /* none: h is closed, and is not drained */
}

/*
 * Would a read of fd now fail EAGAIN?  Told without the lock and without
 * a system call, for the poll by read(2) of a non-blocking timer (tfd(7),
 * The engine): 1 only for a timer this process alone holds, known non-blocking,
 * with nothing counted, posted, cancelled or being posted, and a deadline
 * still ahead or none; 0 whenever it cannot tell, and the read takes the
 * lock.  A seqlock: the family's count was even and the same before and
 * after the look, so no holder of the lock changed anything meanwhile;
 * while the look lasts, lookers keeps the slot table and the chunks of
 * holds from being freed (a timer record is never unmapped).  Not in a
 * ThreadSanitizer build, for which reads that race with writes are
 * reports, whatever the count says after.  The look runs with the
 * program's signals as they are: a handler that jumps out of it leaves
 * lookers counted, and what they keep is kept (bounded: empty chunks,
 * old tables), never freed under a look.
 */
#define LOOK(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static void (*quiet_pause)(void); /* [A] tests */

void tfd_engine_quiet_pause(void (*fn)(void))
{
	__atomic_store_n(&quiet_pause, fn, __ATOMIC_RELEASE);
}

#ifdef TFD_TSAN
int tfd_engine_quiet(int fd)
{
	(void)fd;
	return 0;
}
#else
static int quiet_timer(const struct tfd_family *f, const struct tfd_hold *h)
{
	const struct tfd_timer *t = LOOK(h->t);
	uintptr_t off = (uintptr_t)t - (uintptr_t)f->timer;
	int64_t next;
	int base;

	/* h may be free (t is then a hold's link, or NULL): a timer of
	 * this family's, or no look at it. */
	if (off >= (uintptr_t)f->max * sizeof(*t) || off % sizeof(*t))
		return 0;
	if (LOOK(h->closed) || LOOK(h->mode) != MODE_NONBLOCK ||
	    LOOK(h->gen) != LOOK(t->gen) ||
	    LOOK(t->holders) != tfd_proc_bit(LOOK(tfd_eng.self)) ||
	    LOOK(t->flags) & (T_SIGNALED | T_CANCELLED | T_OUTSIDE) ||
	    LOOK(t->inflight) || LOOK(t->m.ticks))
		return 0;
	next = LOOK(t->m.next);
	base = LOOK(t->base);
	return !next || (base < NBASE && next > tfd_clock_shared(base));
}

int tfd_engine_quiet(int fd)
{
	struct tfd_family *f = __atomic_load_n(&tfd_fam, __ATOMIC_ACQUIRE);
	struct tfd_hold **slot, *h;
	unsigned seq;
	int quiet = 0;

	if (!f || fd < 0 || LOOK(tfd_eng.virtual) || LOOK(tfd_eng.self) < 0)
		return 0;
	seq = __atomic_load_n(&f->seq, __ATOMIC_ACQUIRE);
	if (seq & 1)
		return 0;
	__atomic_add_fetch(&tfd_eng.lookers, 1, __ATOMIC_SEQ_CST);
	if ((size_t)fd < __atomic_load_n(&tfd_eng.nslot, __ATOMIC_ACQUIRE)) {
		slot = __atomic_load_n(&tfd_eng.slot, __ATOMIC_SEQ_CST);
		h = LOOK(slot[fd]);
		if (h && __builtin_expect(LOOK(quiet_pause) != NULL, 0))
			quiet_pause();
		quiet = h && quiet_timer(f, h);
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	quiet = quiet && LOOK(f->seq) == seq;
	__atomic_sub_fetch(&tfd_eng.lookers, 1, __ATOMIC_RELEASE);
	return quiet;
}
#endif

int tfd_engine_read(int fd, uint64_t *count)
{
	struct tfd_transit *r;
	struct tfd_hold *h;
	uint64_t n = 0, d;
	int e, rd, cs, ms;

	tfd_engine_lock(&cs);
	e = tfd_engine_find(fd, &h);
	if (!e)
		e = take_count(h, fd, 0, 0, &n);
	if (e == EAGAIN && !tfd_host.nowait() && !nonblocking(h)) {
		/* Nothing counted: wait in read(2) (or EAGAIN) as the
		 * descriptor says, a cancellation point as read(2) is, where
		 * the program's handlers run.  If another thread closes the
		 * timer meanwhile, it keeps running for this wait, as Linux
		 * keeps the file; so does a timer made at fd before the
		 * read(2) starts.  A handler may jump out
		 * of the wait, and a cancellation end it: nothing of it is
		 * on this stack, and what it registered is undone then too
		 * (waits.c). */
		tfd_engine_uncover(h->t); /* read(2) waits for a post */
		r = tfd_waits_read_begin(fd, h,
		                         (uintptr_t)__builtin_frame_address(0));
		for (;;) {
			ms = wait_ms(h);
			tfd_engine_unlock(cs);
			tfd_may_not_return();
			d = 0;
			rd = ms == WAIT_READ ? read_fd(fd, &d) : poll_fd(fd, ms);
			tfd_engine_relock(&cs);
			if (r && !r->busy)
				break;
			e = rd ? rd : take_count(h, number_of(h, fd), d, 1, &n);
			if (e != EAGAIN || ms == WAIT_READ)
				break;
			if (!names(h, fd)) {
				e = EBADF; /* closed meanwhile (tfd(7), BUGS) */
				break;
			}
		}
		if (r && !r->busy) {
			/* Undone meanwhile (this thread forked in a handler):
			 * h is not ours to look at any more. */
			n = d;
			e = rd ? rd : d ? 0 : EAGAIN;
		} else if (r) {
			tfd_waits_read_end(r);
		} else if (--h->waiters == 0 && h->closed) {
			tfd_engine_let_hold_go(h);
		}
	}
	tfd_engine_unlock(cs);
	*count = n;
	return e;
}

int tfd_engine_next_due(int64_t *in_ns)
{
	struct tfd_hold *h;
	int64_t best = -1;
	int b, cs, shared;

	tfd_engine_lock(&cs);
	tfd_engine_sync(0);
	for (b = 0; b < NBASE; b++) {
		const struct tfd_qent *top = tfd_queue_top(&tfd_eng.q[b]);
		int64_t d;

		if (!top)
			continue;
		d = top->key - tfd_clock_now(b);
		if (d < 0)
			d = 0;
		if (best < 0 || d < best)
			best = d;
	}
	shared = tfd_eng.virtual && tfd_engine_virtual_shared();
	for (h = shared ? tfd_holds_from(tfd_eng.room, 0, 0) : NULL; h;
	     h = tfd_holds_next(h)) {
		/* What we hold and may post for another (virtual.c). */
		struct tfd_timer *t = h->t;
		int64_t d;

		if (!t->m.next || tfd_engine_virtual_foreign(h) < 0)
			continue;
		d = t->m.next - tfd_clock_now(t->base);
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
