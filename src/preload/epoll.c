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
 */
#include "preload/preload.h"
#include "lockorder.h"

#include <errno.h>
#include <stdlib.h>

#define EPOLL_WRITE (EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND)

struct edge {
	int ep, fd;
	struct epoll_event ev; /* as the program asked it */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(lock, LK_EPOLL);

TFD_LOCK_INSIDE(lock) /* lock_in(), lock_out() */
static struct edge *edges;
static size_t nedges, cap;
int tfd_nedge;

static void drop(size_t i)
{
	edges[i] = edges[--nedges];
	__atomic_store_n(&tfd_nedge, (int)nedges, __ATOMIC_RELAXED);
}

static struct edge *find(int ep, int fd)
{
	size_t i;

	for (i = 0; i < nedges; i++)
		if (edges[i].ep == ep && edges[i].fd == fd)
			return &edges[i];
	return NULL;
}

/* Remember (ep, fd) as edge-triggered, or forget it (ev NULL). */
static void remember(int ep, int fd, const struct epoll_event *ev)
{
	struct edge *e;

	lock_in();
	e = find(ep, fd);
	if (!ev) {
		if (e)
			drop((size_t)(e - edges));
	} else if (e) {
		e->ev = *ev;
	} else {
		if (nedges == cap) {
			size_t n = cap ? 2 * cap : 16;
			struct edge *p = realloc(edges, n * sizeof(*p));

			if (p) {
				edges = p;
				cap = n;
			}
		}
		if (nedges < cap) {
			edges[nedges].ep = ep;
			edges[nedges].fd = fd;
			edges[nedges].ev = *ev;
			nedges++;
			__atomic_store_n(&tfd_nedge, (int)nedges,
			                 __ATOMIC_RELAXED);
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
			remember(ep, fd, NULL);
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
		copy.events &= ~(uint32_t)EPOLLONESHOT;
		remember(ep, fd, edge ? &copy : NULL);
	}
	return r;
}

void tfd_epoll_consumed(int fd)
{
	size_t i;
	int saved = errno;

	if (!__atomic_load_n(&tfd_nedge, __ATOMIC_RELAXED))
		return;
	lock_in();
	for (i = 0; i < nedges;) {
		struct epoll_event ev = edges[i].ev;

		if (edges[i].fd != fd) {
			i++;
			continue;
		}
		ev.events |= EPOLLONESHOT;
		if (R(epoll_ctl)(edges[i].ep, EPOLL_CTL_MOD, fd, &ev) < 0)
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

	if (!__atomic_load_n(&tfd_nedge, __ATOMIC_RELAXED))
		return;
	lock_in();
	for (i = 0; i < nedges;) {
		if (edges[i].fd == fd || edges[i].ep == fd)
			drop(i);
		else
			i++;
	}
	lock_out();
}

/* In a child of fork(): the lock, which another thread of the parent may
 * have held, made anew (tree.c). */
void tfd_epoll_forked(void)
{
	pthread_mutex_init(&lock, NULL);
}
