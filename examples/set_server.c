/* SPDX-License-Identifier: MIT */
/*
 * set_server - an idle timeout for every connection, all in one timer set
 * (tfd_set(3)).  An echo server: each connection's timeout is a key
 * of the set (the address of the connection's record), pushed back by
 * every line the server receives; a connection idle for IDLE_MS is closed.
 * The set is read when epoll says it is readable, as a timer is.
 *
 * The connections are socketpair(2)s, whose clients this program plays
 * too, driven by one more key of the same set (TICK): every TICK_MS,
 * client i sends a line, up to i % 4 lines; the clients with 3 lines then
 * hang up.  So connection 0 is closed IDLE_MS after the start,
 * connection 2 about 2 * TICK_MS + IDLE_MS after it, and the program
 * ends in about half a second.  It runs on real time: on the virtual
 * backend (tfd_virtual(3)) nothing would move the set's clock.
 *
 *   set_server [CONNECTIONS]     (default 4, at most 500)
 *
 * It prints a line per connection and a total, the same on every run
 * however late the timers fire: a set never fires early, and gives its
 * records earliest first, so the tick that sends a line always comes
 * before the timeout that the line would have pushed back; a timeout
 * whose connection has input waiting is taken as activity, not idleness.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <tfd.h>
#include <unistd.h>

#define IDLE_MS 250
#define TICK_MS 100
#define MAX_LINES 3
#define TICK 0 /* the clients' key: no connection's address */
#define MS 1000000LL

struct conn {
	int server, client; /* the two ends; server -1 once closed */
	int lines, sent;    /* lines the client sends, has sent */
	int64_t armed;      /* when its timeout was last armed (ns) */
	const char *end;    /* how the server closed it */
};

static struct conn *conns;
static int nconn, open_conns, set, ep;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 * MS + t.tv_nsec;
}

static struct itimerspec its(int64_t value, int64_t interval) /* in ms */
{
	struct itimerspec v = {
		.it_value = { value / 1000, value % 1000 * MS },
		.it_interval = { interval / 1000, interval % 1000 * MS },
	};

	return v;
}

static uint64_t key_of(struct conn *c)
{
	return (uintptr_t)c;
}

/* Push c's timeout back to IDLE_MS from now.  The time is taken before
 * the call: the timeout cannot expire less than IDLE_MS after it. */
static int arm(struct conn *c)
{
	struct itimerspec idle = its(IDLE_MS, 0);

	c->armed = now_ns();
	return tfd_set_settime(set, key_of(c), 0, &idle, NULL);
}

/* The server closes c; its timeout, if still armed, goes with it. */
static int finish(struct conn *c, const char *end)
{
	struct itimerspec off = its(0, 0);

	c->end = end;
	close(c->server); /* which takes it out of the epoll set */
	c->server = -1;
	open_conns--;
	return tfd_set_settime(set, key_of(c), 0, &off, NULL);
}

/* Input on c: echo every byte, and push the timeout back. */
static int serve(struct conn *c)
{
	char buf[256];
	ssize_t n;

	while ((n = read(c->server, buf, sizeof(buf))) > 0)
		if (write(c->server, buf, (size_t)n) != n || arm(c) < 0)
			return -1;
	if (n == 0) /* the client hung up */
		return finish(c, "hung up");
	return errno == EAGAIN ? 0 : -1;
}

/* c's timeout expired.  Input that came meanwhile is activity. */
static int timeout(struct conn *c)
{
	char b;

	if (recv(c->server, &b, 1, MSG_PEEK | MSG_DONTWAIT) >= 0)
		return serve(c);
	if (errno != EAGAIN)
		return -1;
	if (now_ns() - c->armed < IDLE_MS * MS)
		return finish(c, "closed EARLY"); /* never, says tfd_set(3) */
	return finish(c, "closed idle");
}

/* The clients: after ticks ticks, client i has sent min(ticks, i % 4)
 * lines, and hangs up after its third. */
static int play_clients(uint64_t ticks)
{
	struct itimerspec off = its(0, 0);
	int i;

	for (i = 0; i < nconn; i++) {
		struct conn *c = &conns[i];

		while (c->sent < c->lines && (uint64_t)c->sent < ticks) {
			if (send(c->client, "hello\n", 6, MSG_NOSIGNAL) != 6)
				return -1;
			if (++c->sent == MAX_LINES &&
			    shutdown(c->client, SHUT_WR) < 0)
				return -1;
		}
	}
	if (ticks >= MAX_LINES) /* every line is sent: no more ticks */
		return tfd_set_settime(set, TICK, 0, &off, NULL);
	return 0;
}

/* The set is readable: handle every record, earliest first. */
static int expired(void)
{
	static uint64_t ticks;
	struct tfd_expiry rec[16];
	ssize_t n, i;

	while ((n = tfd_set_read(set, rec, sizeof(rec))) > 0)
		for (i = 0; i < n / (ssize_t)sizeof(rec[0]); i++) {
			uint64_t key = rec[i].key;
			int r;

			if (key == TICK)
				r = play_clients(ticks += rec[i].count);
			else
				r = timeout((struct conn *)(uintptr_t)key);
			if (r < 0)
				return -1;
		}
	return errno == EAGAIN ? 0 : -1;
}

static int start(int n)
{
	struct itimerspec tick = its(TICK_MS, TICK_MS);
	struct epoll_event ev = { .events = EPOLLIN };
	int sv[2];

	conns = calloc((size_t)n, sizeof(*conns));
	set = tfd_set_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!conns || set < 0 || ep < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, set, &ev) < 0 || /* data.ptr NULL */
	    tfd_set_settime(set, TICK, 0, &tick, NULL) < 0)
		return -1;
	for (nconn = 0; nconn < n; nconn++) {
		struct conn *c = &conns[nconn];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
		                                SOCK_CLOEXEC, 0, sv) < 0)
			return -1;
		c->server = sv[0];
		c->client = sv[1];
		c->lines = nconn % (MAX_LINES + 1);
		open_conns++;
		ev.data.ptr = c;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, c->server, &ev) < 0 ||
		    arm(c) < 0)
			return -1;
	}
	return 0;
}

/* The lines the client got back, read once the server has closed. */
static int echoed(struct conn *c)
{
	char buf[256];
	ssize_t n, k;
	int lines = 0;

	while ((n = read(c->client, buf, sizeof(buf))) > 0)
		for (k = 0; k < n; k++)
			lines += buf[k] == '\n';
	close(c->client);
	return lines;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4, i, total = 0, early = 0;
	struct epoll_event ev[16];

	if (n < 1 || n > 500) {
		fprintf(stderr, "usage: set_server [CONNECTIONS] (1-500)\n");
		return 2;
	}
	if (start(n) < 0) {
		perror("set_server");
		return 1;
	}
	while (open_conns > 0) {
		int k = epoll_wait(ep, ev, 16, -1);

		if (k < 0 && errno != EINTR) {
			perror("set_server: epoll_wait");
			return 1;
		}
		for (i = 0; i < k; i++) {
			struct conn *c = ev[i].data.ptr;
			int r = 0;

			if (!c)
				r = expired();
			else if (c->server >= 0) /* not closed by a record */
				r = serve(c);
			if (r < 0) {
				perror("set_server");
				return 1;
			}
		}
	}
	for (i = 0; i < nconn; i++) {
		int lines = echoed(&conns[i]);

		printf("connection %d: %d line%s echoed, %s\n", i, lines,
		       lines == 1 ? "" : "s", conns[i].end);
		total += lines;
		early += !strcmp(conns[i].end, "closed EARLY");
	}
	printf("%d connections, %d lines, one timer set\n", nconn, total);
	tfd_close(set);
	close(ep);
	free(conns);
	return early ? 1 : 0;
}
