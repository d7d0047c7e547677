/* SPDX-License-Identifier: MIT */
/*
 * epoll.c - what programs do with the epoll sets their timers are in:
 * the registrations Linux takes (EPOLLEXCLUSIVE), sets that change
 * number, many timers in one set.
 */
#include "host.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/epoll.h>

/* epoll_wait(ep) for up to ms: the timer fd's edge came, and was read. */
static int edge(int ep, int fd, int ms)
{
	struct epoll_event ev;
	int n = epoll_wait(ep, &ev, 1, ms);

	return n == 1 && ev.data.fd == fd && h_count(fd) > 0;
}

static int add(int ep, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

/* EPOLLIN | EPOLLET | EPOLLEXCLUSIVE: Linux takes it on a timer (and
 * refuses EPOLLONESHOT beside EPOLLEXCLUSIVE). */
HOST_CASE(epoll_edge_exclusive, 0)
{
	int fd = h_timer(T_NONBLOCK, 20, 20), ep = epoll_create1(0), i, r;

	r = add(ep, fd, EPOLLIN | EPOLLET | EPOLLEXCLUSIVE);
	say("epoll_ctl(ADD, EPOLLIN|EPOLLET|EPOLLEXCLUSIVE): %s",
	    r ? h_err(-r) : "ok");
	for (i = 0; i < 3; i++)
		say("edge %d: %s", i, edge(ep, fd, 2000) ? "yes" : "no");
	say("EPOLLONESHOT beside it: %s",
	    h_err(-add(ep, fd, EPOLLIN | EPOLLONESHOT | EPOLLEXCLUSIVE)));
	close(ep);
	T_close(fd);
	return 0;
}

/* An epoll set moved to another number (F_DUPFD, dup, dup3, dup2), the
 * first closed: its edge-triggered timer goes on giving an edge a read. */
HOST_CASE(epoll_set_moved_keeps_its_edges, 0)
{
	static const char *const how[] = { "fcntl(F_DUPFD)", "dup", "dup3",
	                                   "dup2" };
	unsigned k;

	for (k = 0; k < sizeof(how) / sizeof(*how); k++) {
		int fd = h_timer(T_NONBLOCK, 20, 20), ep = epoll_create1(0);
		int to = -1, i;

		add(ep, fd, EPOLLIN | EPOLLET);
		switch (k) {
		case 0: to = fcntl(ep, F_DUPFD, 200); break;
		case 1: to = dup(ep); break;
		case 2: to = dup3(ep, 201, O_CLOEXEC); break;
		case 3: to = dup2(ep, 202); break;
		}
		close(ep);
		for (i = 0; i < 3; i++)
			say("%s, edge %d: %s", how[k], i,
			    edge(to, fd, 2000) ? "yes" : "no");
		close(to);
		T_close(fd);
	}
	return 0;
}

/* Many timers in one set, edge-triggered: each read re-arms its own
 * edge, and the one due is reported (each once), whatever the others. */
HOST_CASE(epoll_edges_among_many, 0)
{
	enum { N = 900 }; /* below the 1,024 descriptors of a default limit */
	static int fds[N];
	int ep = epoll_create1(0), i, ok = 0, once = 1;

	for (i = 0; i < N; i++) {
		fds[i] = h_timer(T_NONBLOCK, i == N / 2 ? 20 : 3600 * 1000, 0);
		if (fds[i] < 0 || add(ep, fds[i], EPOLLIN | EPOLLET) < 0)
			return say("timer %d: %s", i, h_err(errno)), 1;
	}
	for (i = 0; i < 3; i++) {
		ok += edge(ep, fds[N / 2], 2000);
		h_arm(fds[N / 2], 20, 0);
	}
	h_arm(fds[N / 2], 0, 0);
	say("3 edges of the one due among %d: %d", N, ok);
	for (i = 0; i < N; i++)
		once &= h_count(fds[i]) == 0;
	say("then each counts what it should: %s", once ? "yes" : "no");
	for (i = 0; i < N; i++)
		T_close(fds[i]);
	close(ep);
	return 0;
}
