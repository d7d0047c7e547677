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
 * left alone.
 *
 * Every registration of a timer made here is kept, (epoll, number), so
 * that a wait on the epoll knows the timers it may report
 * (tfd_epoll_timers: waits.c posts those a poll or select reported from
 * memory before the wait).  The kernel's list is the truth: one kept here
 * that the kernel no longer has (its number closed where we do not see
 * it, by a raw close or close_range) only makes a wait look at that
 * number, which the engine writes to only if the kernel says it names the
 * timer's file (ops.c, tfd_engine_post_due); one the kernel has and we do
 * not (registered through a number we were not told of) is posted by the
 * service thread.
 */
#include "preload/preload.h"
#include "lockorder.h"

#include <errno.h>
#include <stdlib.h>

#define EPOLL_WRITE (EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND)

struct reg {
	int ep, fd;
	int edge; /* EPOLLET, made EPOLLONESHOT here */
	struct epoll_event ev; /* as the program asked it (less writes) */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(lock, LK_EPOLL);

TFD_LOCK_INSIDE(lock) /* lock_in(), lock_out() */
static struct reg *regs;
static size_t nregs, cap;
static int nedge;  /* of them, edge-triggered */
int tfd_nreg;      /* nregs, read without the lock */

/* The numbers below EP_BITS of the epoll sets in regs, read without the
 * lock: close() of any other number need not look (tfd_epoll_set). */
#define EP_BITS 1024
#define WORD (8 * sizeof(unsigned long))
static unsigned long ep_bits[EP_BITS / WORD];

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

static void counted(void)
{
	__atomic_store_n(&tfd_nreg, (int)nregs, __ATOMIC_RELAXED);
}

static void drop(size_t i)
{
	nedge -= regs[i].edge;
	regs[i] = regs[--nregs];
	counted();
}

static struct reg *find(int ep, int fd)
{
	size_t i;

	for (i = 0; i < nregs; i++)
		if (regs[i].ep == ep && regs[i].fd == fd)
			return &regs[i];
	return NULL;
}

/* Remember (ep, fd) as registered with ev (edge: made EPOLLONESHOT
 * here), or forget it (ev NULL). */
static void remember(int ep, int fd, const struct epoll_event *ev, int edge)
{
	struct reg *e;

	lock_in();
	e = find(ep, fd);
	if (!ev) {
		if (e)
			drop((size_t)(e - regs));
	} else if (e) {
		nedge += edge - e->edge;
		e->edge = edge;
		e->ev = *ev;
	} else {
		if (nregs == cap) {
			size_t n = cap ? 2 * cap : 16;
			struct reg *p = realloc(regs, n * sizeof(*p));

			if (p) {
				regs = p;
				cap = n;
			}
		}
		if (nregs < cap) { /* (out of memory: not delivered, and an
		                    * edge not re-armed: as an unknown one) */
			regs[nregs].ep = ep;
			regs[nregs].fd = fd;
			regs[nregs].edge = edge;
			regs[nregs].ev = *ev;
			nregs++;
			nedge += edge;
			counted();
			ep_bit(ep, 1);
		}
	}
	lock_out();
}

int tfd_timer_epoll_ctl(int ep, int op, int fd, struct epoll_event *ev)
{
	struct epoll_event copy;
	int r, edge;

	if (op == EPOLL_CTL_DEL) {
		r = R(epoll_ctl)(ep, op, fd, ev);
		if (r == 0)
			remember(ep, fd, NULL, 0);
		return r;
	}
	if (!ev || (op != EPOLL_CTL_ADD && op != EPOLL_CTL_MOD) ||
	    !tfd_still_timer(fd))
		return R(epoll_ctl)(ep, op, fd, ev);
	copy = *ev;
	copy.events &= ~(uint32_t)EPOLL_WRITE;
	edge = (copy.events & EPOLLET) && !(copy.events & EPOLLONESHOT);
	if (edge)
		copy.events |= EPOLLONESHOT;
	r = R(epoll_ctl)(ep, op, fd, &copy);
	if (r == 0) {
		if (edge) /* (added again with each re-arm) */
			copy.events &= ~(uint32_t)EPOLLONESHOT;
		/* Kept for the waits that deliver, or to re-arm an edge. */
		remember(ep, fd, edge || tfd_waits_deliver ? &copy : NULL,
		         edge);
	}
	return r;
}

void tfd_epoll_consumed(int fd)
{
	size_t i;
	int saved = errno;

	if (!__atomic_load_n(&tfd_nreg, __ATOMIC_RELAXED))
		return;
	lock_in();
	for (i = 0; nedge && i < nregs;) {
		struct epoll_event ev = regs[i].ev;

		if (regs[i].fd != fd || !regs[i].edge) {
			i++;
			continue;
		}
		ev.events |= EPOLLONESHOT;
		if (R(epoll_ctl)(regs[i].ep, EPOLL_CTL_MOD, fd, &ev) < 0)
			drop(i); /* the epoll or the registration is gone */
		else
			i++;
	}
	lock_out();
	errno = saved;
}

void tfd_epoll_closed(int fd)
{
	size_t i;

	if (!__atomic_load_n(&tfd_nreg, __ATOMIC_RELAXED))
		return;
	lock_in();
	for (i = 0; i < nregs;) {
		if (regs[i].fd == fd || regs[i].ep == fd)
			drop(i);
		else
			i++;
	}
	ep_bit(fd, 0);
	lock_out();
}

/* The timers registered in ep for input, up to max of them into fds (the
 * others are posted by the service thread); how many. */
int tfd_epoll_timers(int ep, int *fds, int max)
{
	size_t i;
	int n = 0;

	if (!__atomic_load_n(&tfd_nreg, __ATOMIC_RELAXED))
		return 0;
	lock_in();
	for (i = 0; i < nregs && n < max; i++)
		if (regs[i].ep == ep && (regs[i].ev.events & EPOLLIN))
			fds[n++] = regs[i].fd;
	lock_out();
	return n;
}

/* In a child of fork(): the lock, which another thread of the parent may
 * have held, made anew (tree.c). */
void tfd_epoll_forked(void)
{
	pthread_mutex_init(&lock, NULL);
}
