/* SPDX-License-Identifier: MIT */
/*
 * epoll.c - epoll registrations of timers, on a backend whose timers are
 * not kernel timerfds.
 *
 * Writability: a timer is never writable, so write events are taken out
 * of what is registered.
 *
 * EPOLLET: a Linux timerfd signals once and then not again until its count
 * is read (the kernel re-arms a periodic timer only in read), so an
 * edge-triggered registration sees one edge however many periods pass
 * unread.  Our timer's file is posted at each period, and each post would
 * be an edge.  So an EPOLLET registration of a timer is made EPOLLONESHOT
 * as well, and re-armed (EPOLL_CTL_MOD, which reports at once what is
 * ready) when the count is read or reset by a settime: one edge per read,
 * as on Linux.  A registration the program makes EPOLLONESHOT itself is
 * left alone, and so is an EPOLLEXCLUSIVE one, which the kernel lets
 * neither be one-shot nor be modified (tfd-preload(7)).
 *
 * Every registration of a timer made here is kept, (epoll, number), so
 * that a wait on the epoll knows the timers it may report
 * (tfd_epoll_timers: waits_epoll.c posts those a poll or select reported from
 * memory before the wait).  The kernel's list is the truth: one kept here
 * that the kernel no longer has (its number closed where we do not see
 * it, by a raw close or close_range) only makes a wait look at that
 * number, which the engine writes to only if the kernel says it names the
 * timer's file (ops.c, tfd_engine_post_due); one the kernel has and we do
 * not (registered through a number we were not told of) is posted by the
 * service thread.
 *
 * Cost: each registration is on two lists, its timer's number's and its
 * epoll's, whose heads are found by number; so a registration, a read
 * that re-arms an edge and a close touch only the registrations of that
 * number, whatever the number of others.
 *
 * Delivery (tfd(7), Delivery): a timer whose every registration is
 * level-triggered for input, in sets that no other wait holds (a set in a
 * set, a poll of the set's descriptor) and on which no wait of the
 * kernel's is under way, is reported by the epoll waits themselves, from
 * memory (waits.c): the backend is told it is covered (backend.h, cover),
 * and neither posts it nor wakes for it.
 *
 * A wait looks only at the timers of its set that are due or changed
 * since: epoll_due.c.
 */
#include "preload/preload.h"
#include "preload/epoll.h"
#include "lockorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define EPOLL_WRITE (EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND)

/* fork()s since the library loaded, counted by the fork handlers without
 * the lock (another thread may hold it, waiting for the engine's, which
 * the engine's fork handlers hold): a set born before the latest may be
 * shared with the other process, and a registration the other removes
 * would still be reported here from memory. */
static unsigned forks;
static struct set *sets;
static size_t nsets;

/* Heads of the lists, by number; grown as numbers come. */
struct heads {
	struct reg **a;
	size_t n;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(lock, LK_EPOLL);

TFD_LOCK_INSIDE(lock) /* lock_in(), lock_out() */
static struct heads by_fd, by_ep;
static size_t nregs;
static int nedge;  /* of them, edge-triggered [A] */
static int nwant;  /* of them, with want [A] */
int tfd_nreg;      /* nregs, read without the lock */

/* The numbers below EP_BITS of the epoll sets in regs, read without the
 * lock: close() of any other number need not look (tfd_epoll_set). */
#define EP_BITS 1024
#define WORD (8 * sizeof(unsigned long))
static unsigned long ep_bits[EP_BITS / WORD];

/* Waits of the kernel's on each epoll set below EP_BITS, and on the
 * others by their number modulo EP_BITS (a wait on one counts for every
 * set of the same remainder), under way (tfd_epoll_raw): a timer of such
 * a set is not covered, the waits would not see it. */
static unsigned raw_waits[EP_BITS], raw_high[EP_BITS];

int tfd_epoll_set(int fd)
{
	return fd >= EP_BITS ||
	       (fd >= 0 && (__atomic_load_n(&ep_bits[(unsigned)fd / WORD],
	                                    __ATOMIC_RELAXED) >>
	                    ((unsigned)fd % WORD) & 1));
}

static void ep_bit(int ep, int on)
{
	unsigned long b;

	if (ep < 0 || ep >= EP_BITS)
		return;
	b = 1UL << ((unsigned)ep % WORD);
	if (on)
		__atomic_fetch_or(&ep_bits[(unsigned)ep / WORD], b,
		                  __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&ep_bits[(unsigned)ep / WORD], ~b,
		                   __ATOMIC_RELAXED);
}

/* The head for number k, or NULL if it has none yet (grow: made, or
 * NULL without the memory). */
static struct reg **head(struct heads *h, int k, int grow)
{
	size_t n;
	struct reg **a;

	if (k < 0)
		return NULL;
	if ((size_t)k < h->n)
		return &h->a[k];
	if (!grow)
		return NULL;
	for (n = h->n ? h->n : 64; n <= (size_t)k; n *= 2)
		;
	if (!(a = realloc(h->a, n * sizeof(*a))))
		return NULL;
	memset(a + h->n, 0, (n - h->n) * sizeof(*a));
	h->a = a;
	h->n = n;
	return &h->a[k];
}

static void counted(void)
{
	__atomic_store_n(&tfd_nreg, (int)nregs, __ATOMIC_RELAXED);
}

static void edges(int d)
{
	__atomic_store_n(&nedge, nedge + d, __ATOMIC_RELAXED);
}

/* Set ep's record (made: NULL without the memory, or for no number). */
static struct set *set_of(int ep, int grow)
{
	size_t n;
	struct set *a;

	if (ep < 0)
		return NULL;
	if ((size_t)ep < nsets)
		return &sets[ep];
	if (!grow)
		return NULL;
	for (n = nsets ? nsets : 64; n <= (size_t)ep; n *= 2)
		;
	if (!(a = realloc(sets, n * sizeof(*a))))
		return NULL;
	memset(a + nsets, 0, (n - nsets) * sizeof(*a));
	sets = a;
	nsets = n;
	return &sets[ep];
}

static unsigned *raw_of(int ep)
{
	return ep < 0 ? &raw_high[0] : ep < EP_BITS ? &raw_waits[ep]
	                                            : &raw_high[ep % EP_BITS];
}

/* A wait of the kernel's on ep begins (d 1) or ends (d -1). */
void tfd_epoll_raw(int ep, int d)
{
	__atomic_add_fetch(raw_of(ep), (unsigned)d, __ATOMIC_SEQ_CST);
}

static int set_delivers(int ep)
{
	const struct set *s = set_of(ep, 0);

	return s && !s->held && !s->nomem &&
	       s->born == __atomic_load_n(&forks, __ATOMIC_ACQUIRE);
}

/* Whether fd's timer may be covered (all its registrations delivered by
 * the waits), kept in each of them; if not, the backend is told at once.
 * Lock held. */
static void cover_fd(int fd, int was)
{
	struct reg **h = head(&by_fd, fd, 0), *r;
	int want = tfd_waits_deliver && !tfd_virt && tfd_be->cover;

	if (!h || !*h)
		want = 0;
	for (r = h ? *h : NULL; r; r = r->fnext) {
		was |= r->want;
		if (!r->deliv || !set_delivers(r->ep))
			want = 0;
	}
	for (r = h ? *h : NULL; r; r = r->fnext) {
		if (r->want != want) {
			sets[r->ep].nwant += want ? 1U : -1U;
			__atomic_store_n(&nwant, nwant + (want ? 1 : -1),
			                 __ATOMIC_RELAXED);
		}
		r->want = (unsigned char)want;
		if (want)
			tfd_eset_look(&sets[r->ep], r);
		else
			tfd_eset_unplace(&sets[r->ep], r);
	}
	if (was && !want) {
		int c = tfd_be->ready_begin();

		tfd_be->cover(fd, 0);
		tfd_be->ready_end(c);
	}
}

/* The timers of set ep, after a change of the set's. */
static void cover_set(int ep)
{
	struct reg **h = head(&by_ep, ep, 0), *r;

	for (r = h ? *h : NULL; r; r = r->enext)
		cover_fd(r->fd, 0);
}

/* Set r->ep has one registration delivered more (d 1) or fewer (-1): its
 * heap has room for all.  A set whose heap cannot grow is delivered by
 * posts; one left with none has its heap freed. */
static void deliv_count(const struct reg *r, int d)
{
	struct set *s = set_of(r->ep, 0);

	if (!r->deliv || !s)
		return;
	s->ndeliv += (unsigned)d;
	if (!s->ndeliv)
		s->nomem = 0;
	if (!s->nomem && tfd_eset_room(s) < 0) {
		s->nomem = 1;
		cover_set(r->ep);
	}
}

static void drop(struct reg *r)
{
	int fd = r->fd, had = r->want;

	if (had) {
		sets[r->ep].nwant--;
		__atomic_store_n(&nwant, nwant - 1, __ATOMIC_RELAXED);
		tfd_eset_unplace(&sets[r->ep], r);
		r->want = 0;
	}

	*(r->fprev ? &r->fprev->fnext : &by_fd.a[r->fd]) = r->fnext;
	if (r->fnext)
		r->fnext->fprev = r->fprev;
	*(r->eprev ? &r->eprev->enext : &by_ep.a[r->ep]) = r->enext;
	if (r->enext)
		r->enext->eprev = r->eprev;
	edges(-r->edge);
	nregs--;
	counted();
	deliv_count(r, -1);
	free(r);
	cover_fd(fd, had);
}

static struct reg *find(int ep, int fd)
{
	struct reg **h = head(&by_fd, fd, 0), *r;

	for (r = h ? *h : NULL; r; r = r->fnext)
		if (r->ep == ep)
			return r;
	return NULL;
}

/* A registration (ep, fd) kept from now on, unset; or NULL without the
 * memory.  Lock held. */
static struct reg *add(int ep, int fd)
{
	struct reg *r;

	if (!head(&by_fd, fd, 1) || !head(&by_ep, ep, 1) || !set_of(ep, 1) ||
	    !(r = calloc(1, sizeof(*r))))
		return NULL;
	r->ep = ep;
	r->fd = fd;
	if (!by_ep.a[ep]) { /* (a fresh set, or one emptied since) */
		sets[ep].born = __atomic_load_n(&forks, __ATOMIC_ACQUIRE);
		sets[ep].held = 0;
	}
	if ((r->fnext = by_fd.a[fd]))
		r->fnext->fprev = r;
	by_fd.a[fd] = r;
	if ((r->enext = by_ep.a[ep]))
		r->enext->eprev = r;
	by_ep.a[ep] = r;
	nregs++;
	counted();
	ep_bit(ep, 1);
	return r;
}

static void set(struct reg *r, const struct epoll_event *ev, int edge)
{
	edges(edge - r->edge);
	r->edge = edge;
	r->ev = *ev;
	if (r->want) /* (placed again by cover_fd, if delivered still) */
		tfd_eset_unplace(&sets[r->ep], r);
	deliv_count(r, -1);
	r->deliv = !edge && (ev->events & EPOLLIN) &&
	           !(ev->events & (EPOLLET | EPOLLONESHOT));
	deliv_count(r, 1);
	cover_fd(r->fd, r->want);
}

/* The program's registration of a timer, as asked, but writes never asked
 * and an edge made one-shot (*edge then 1). */
static struct epoll_event asked(const struct epoll_event *ev, int *edge)
{
	struct epoll_event copy = *ev;

	copy.events &= ~(uint32_t)EPOLL_WRITE;
	*edge = (copy.events & EPOLLET) &&
	        !(copy.events & (EPOLLONESHOT | EPOLLEXCLUSIVE));
	if (*edge)
		copy.events |= EPOLLONESHOT;
	return copy;
}

int tfd_timer_epoll_ctl(int ep, int op, int fd, struct epoll_event *ev)
{
	struct epoll_event copy;
	struct reg *r = NULL;
	int e, edge, keep, made = 0;

	if (op == EPOLL_CTL_DEL) {
		if (R(epoll_ctl)(ep, op, fd, ev) < 0)
			return -1;
		lock_in();
		if ((r = find(ep, fd)))
			drop(r);
		lock_out();
		return 0;
	}
	if (!ev || (op != EPOLL_CTL_ADD && op != EPOLL_CTL_MOD) ||
	    !tfd_still_timer(fd))
		return R(epoll_ctl)(ep, op, fd, ev);
	copy = asked(ev, &edge);
	/* Kept for the waits that deliver, or to re-arm an edge: the record
	 * is had before the kernel's, so that one the program was told it
	 * has always works (or the call fails with ENOMEM, as Linux's may). */
	keep = edge || tfd_waits_deliver;
	lock_in();
	if (keep && !(r = find(ep, fd))) {
		if (!(r = add(ep, fd)) && edge) {
			lock_out();
			errno = ENOMEM;
			return -1;
		}
		made = 1; /* (none for a plain one: the service posts it) */
	}
	if (R(epoll_ctl)(ep, op, fd, &copy) < 0) {
		e = errno;
		if (made && r)
			drop(r);
		lock_out();
		errno = e;
		return -1;
	}
	if (edge) /* (added again with each re-arm) */
		copy.events &= ~(uint32_t)EPOLLONESHOT;
	if (keep && r)
		set(r, &copy, edge);
	else if ((r = find(ep, fd)))
		drop(r);
	lock_out();
	return 0;
}

/* A settime of fd begins: the waits that deliver its timer will look at
 * it again, and none looks until tfd_epoll_set_end(): a wait that
 * looked before is asleep when the settime comes (which then posts the
 * timer: backend.h, asleep) or looks again after it.  1 if the lock is
 * held (the settime is made inside it, as a wait's look is: this lock,
 * then the backend's).  A read needs none of this: it only makes a
 * deadline later, and a wait's look finds a key too early. */
int tfd_epoll_set_begin(int fd)
{
	struct reg **h, *r;

	if (!__atomic_load_n(&nwant, __ATOMIC_RELAXED))
		return 0;
	lock_in();
	for (r = (h = head(&by_fd, fd, 0)) ? *h : NULL; r; r = r->fnext)
		tfd_eset_look(&sets[r->ep], r);
	return 1;
}

void tfd_epoll_set_end(int held)
{
	int saved = errno;

	if (held)
		lock_out();
	errno = saved;
}

void tfd_epoll_consumed(int fd)
{
	struct reg **h, *r, *next;
	int saved;

	if (!__atomic_load_n(&nedge, __ATOMIC_RELAXED))
		return;
	saved = errno;
	lock_in();
	for (r = (h = head(&by_fd, fd, 0)) ? *h : NULL; r; r = next) {
		struct epoll_event ev = r->ev;

		next = r->fnext;
		if (!r->edge)
			continue;
		ev.events |= EPOLLONESHOT;
		if (R(epoll_ctl)(r->ep, EPOLL_CTL_MOD, fd, &ev) < 0)
			drop(r); /* the epoll or the registration is gone */
	}
	lock_out();
	errno = saved;
}

void tfd_epoll_closed(int fd)
{
	struct reg **h;

	if (!__atomic_load_n(&tfd_nreg, __ATOMIC_RELAXED))
		return;
	lock_in();
	if ((h = head(&by_fd, fd, 0)))
		while (*h)
			drop(*h);
	if ((h = head(&by_ep, fd, 0)))
		while (*h)
			drop(*h);
	if (set_of(fd, 0))
		sets[fd].held = 0;
	ep_bit(fd, 0);
	lock_out();
}

/* Number to is a copy of number ep (dup, fcntl): what is registered in
 * the epoll set ep names is kept for to as well, so that the program may
 * close ep and go on with to.  A registration to cannot be kept for
 * loses only its deliveries from a wait (the service thread posts it)
 * and, for an edge, its re-arm through to: as before the copy. */
void tfd_epoll_duped(int ep, int to)
{
	struct reg **h, *r, *c;

	if (ep == to)
		return;
	lock_in();
	if ((h = head(&by_ep, to, 0)))
		while (*h)
			drop(*h); /* dup2 over another set */
	for (r = (h = head(&by_ep, ep, 0)) ? *h : NULL; r; r = r->enext)
		if ((c = add(to, r->fd))) /* (may move the heads, not r) */
			set(c, &r->ev, r->edge);
	lock_out();
}

/* Set ep (a number that may be an epoll set with timers) is waited on by
 * another wait: in a set, or polled.  Its timers are delivered by posts
 * from now on, until it is closed. */
void tfd_epoll_held(int ep)
{
	struct set *s;

	lock_in();
	if ((s = set_of(ep, 0)) && !s->held && head(&by_ep, ep, 0) &&
	    by_ep.a[ep]) {
		s->held = 1;
		cover_set(ep);
	}
	lock_out();
}

/* A wait on ep that delivers: the covered timers of the set that a read
 * would count now, as the events their registrations ask, up to room of
 * them into ev, and how many; *next, the earliest deadline of the others
 * (CLOCK_MONOTONIC, -1 for none; 0 if more are due than room: those
 * reported go to the end of the due list, as the kernel puts what it
 * reported at the end of its ready list).  asleep: the backend is told,
 * in the same hold of its lock, that the wait goes to sleep
 * (tfd_epoll_awake() when it has woken), if it has any.  The timers that
 * may be covered and are not (since a settime while a wait slept, or
 * new) are covered first, if no wait of the kernel's is under way on the
 * set.  -1 if the set has none of them. */
int tfd_epoll_deliver(int ep, struct epoll_event *ev, int room,
                      int64_t *next, int asleep)
{
	struct set *s;
	int c, n, raw;

	*next = -1;
	lock_in();
	if ((s = set_of(ep, 0)) && !s->held &&
	    s->born != __atomic_load_n(&forks, __ATOMIC_ACQUIRE)) {
		s->held = 1; /* it existed at a fork */
		cover_set(ep);
	}
	if (!s || !s->nwant) {
		lock_out();
		return -1;
	}
	/* Reported from memory only while covered (place): never one that
	 * another process, which may change the set, holds; and none while
	 * a wait of the kernel's is under way on the set. */
	raw = __atomic_load_n(raw_of(ep), __ATOMIC_SEQ_CST) != 0;
	c = tfd_be->ready_begin();
	n = tfd_eset_due(s, ev, room, next, raw);
	if (asleep)
		tfd_be->asleep(1);
	tfd_be->ready_end(c);
	lock_out();
	return n;
}

/* The wait that tfd_epoll_deliver() told asleep has woken. */
void tfd_epoll_awake(void)
{
	int c = tfd_be->ready_begin();

	tfd_be->asleep(-1);
	tfd_be->ready_end(c);
}

/* The timers registered in ep for input, up to max of them into fds (the
 * others are posted by the service thread); how many. */
int tfd_epoll_timers(int ep, int *fds, int max)
{
	struct reg **h, *r;
	int n = 0;

	if (!__atomic_load_n(&tfd_nreg, __ATOMIC_RELAXED))
		return 0;
	lock_in();
	for (r = (h = head(&by_ep, ep, 0)) ? *h : NULL; r && n < max;
	     r = r->enext)
		if ((r->ev.events & EPOLLIN) && !r->want) /* (covered: the
		                                          * wait's own) */
			fds[n++] = r->fd;
	lock_out();
	return n;
}

/* After fork(), in the parent: the sets there are may be shared (forks).
 * Their timers are delivered by posts from the waits' next look on; the
 * engine has uncovered them already (fork.c). */
void tfd_epoll_fork_parent(void)
{
	__atomic_add_fetch(&forks, 1, __ATOMIC_RELEASE);
}

/* In a child of fork(): the lock, which another thread of the parent may
 * have held, made anew (tree.c); the sets, as in the parent. */
void tfd_epoll_forked(void)
{
	pthread_mutex_init(&lock, NULL);
	tfd_epoll_fork_parent();
}
