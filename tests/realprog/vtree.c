/* SPDX-License-Identifier: MIT */
/*
 * vtree - a server and its client in two processes over a socketpair,
 * each with timers and a helper thread (issue 13 items 1, 2, 6): one
 * `tfd exec --backend virtual` runs both on one clock.  Each line of the
 * log is "TIME who: event", TIME in ms since the start on the shared
 * CLOCK_MONOTONIC; the events fall at distinct times (below), so that
 * their order is the same on Linux, where run.sh compares them without
 * the times, and on virtual time, where 20 runs must give the same log,
 * times included.
 *
 *   client: epoll loop; "ping N" every 700 ms (a periodic timerfd);
 *           a watchdog thread in nanosleep sends "wd N" every 1100 ms;
 *           prints each "pong N"; after pong 10, "bye".
 *   server: epoll loop; answers ping N with pong N 30 ms later (a
 *           one-shot timerfd); a "tick" every 1150 ms (a periodic
 *           timerfd); a stats thread in clock_nanosleep prints at
 *           2500 and 5000 ms.
 *
 *   vtree [SCALE]   SCALE divides every length (natively, to go faster)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000LL

static int64_t start, scale = 1;
static int sock;
static volatile int done;

static int64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void say(const char *who, const char *fmt, int n)
{
	char ev[64];

	snprintf(ev, sizeof(ev), fmt, n);
	printf("%lld %s: %s\n", (long long)((now() - start) * scale / MS), who,
	       ev);
	fflush(stdout);
}

static struct itimerspec its(int64_t ms, int64_t every)
{
	struct itimerspec v = { { (time_t)(every * MS / scale / 1000000000),
		                  (long)(every * MS / scale % 1000000000) },
		                { (time_t)(ms * MS / scale / 1000000000),
		                  (long)(ms * MS / scale % 1000000000) } };

	return v;
}

static int timer(int64_t ms, int64_t every)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	struct itimerspec v = its(ms, every);

	if (fd < 0 || timerfd_settime(fd, 0, &v, NULL) < 0)
		exit(1);
	return fd;
}

static void watch(int ep, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static void send_msg(const char *fmt, int n)
{
	char m[32];
	int len = snprintf(m, sizeof(m), fmt, n);

	send(sock, m, (size_t)len + 1, MSG_NOSIGNAL);
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms * MS / scale / 1000000000),
		               (long)(ms * MS / scale % 1000000000) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A timer's expirations, read: 1 if there were some. */
static int expired(int fd)
{
	uint64_t k;

	return read(fd, &k, sizeof(k)) == sizeof(k);
}

/* One wait of an event loop on ep: on(ctx, fd) for each descriptor
 * ready. */
static void wait_once(int ep, void (*on)(void *, int), void *ctx)
{
	struct epoll_event ev[3];
	int n = epoll_wait(ep, ev, 3, -1), i;

	for (i = 0; i < n; i++)
		on(ctx, ev[i].data.fd);
}

/* The messages one recv() on the socket brings, each "WORD N" and its
 * NUL: on(ctx, message, N) for each. */
static void received(void (*on)(void *, const char *, int), void *ctx)
{
	char buf[256], *p;
	ssize_t r = recv(sock, buf, sizeof(buf), 0);

	for (p = buf; r > 0 && p < buf + r; p += strlen(p) + 1)
		on(ctx, p, atoi(strchr(p, ' ') + 1));
}

/* ---- client ---- */

static void *watchdog(void *arg)
{
	int n = 0;

	(void)arg;
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		sleep_ms(1100);
		send_msg("wd %d", ++n);
	}
	return NULL;
}

struct client {
	int hb, pings;
};

static void client_msg(void *ctx, const char *msg, int num)
{
	(void)ctx;
	(void)msg;
	say("client", "pong %d", num);
	if (num == 10) {
		send_msg("bye %d", 0);
		__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	}
}

static void client_ready(void *ctx, int fd)
{
	struct client *c = ctx;

	if (fd != c->hb)
		received(client_msg, c);
	else if (expired(fd) && c->pings < 10)
		send_msg("ping %d", ++c->pings);
}

static int client(void)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct client c = { timer(700, 700), 0 };
	pthread_t th;

	watch(ep, c.hb);
	watch(ep, sock);
	pthread_create(&th, NULL, watchdog, NULL);
	while (!done)
		wait_once(ep, client_ready, &c);
	pthread_join(th, NULL);
	return 0;
}

/* ---- server ---- */

static void *stats(void *arg)
{
	struct timespec at;
	int i;

	(void)arg;
	for (i = 1; i <= 2; i++) {
		int64_t t = start + i * 2500 * MS / scale;

		at.tv_sec = (time_t)(t / 1000000000);
		at.tv_nsec = (long)(t % 1000000000);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL))
			;
		say("server", "stats %d", i);
	}
	return NULL;
}

struct server {
	int tick, reply, ticks, pending, bye;
};

static void server_msg(void *ctx, const char *msg, int num)
{
	struct server *s = ctx;

	if (!strncmp(msg, "bye", 3)) {
		say("server", "bye %d", num);
		s->bye = 1;
		return;
	}
	say("server", !strncmp(msg, "wd", 2) ? "wd %d" : "ping %d", num);
	if (msg[0] == 'p') {
		struct itimerspec v = its(30, 0);

		s->pending = num;
		timerfd_settime(s->reply, 0, &v, NULL);
	}
}

static void server_ready(void *ctx, int fd)
{
	struct server *s = ctx;

	if (fd == s->tick) {
		if (expired(fd))
			say("server", "tick %d", ++s->ticks);
	} else if (fd == s->reply) {
		if (expired(fd))
			send_msg("pong %d", s->pending);
	} else {
		received(server_msg, s);
	}
}

static int server(pid_t child)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), st = 0;
	struct server s = { 0 };
	pthread_t th;

	s.tick = timer(1150, 1150);
	s.reply = timer(0, 0);
	watch(ep, s.tick);
	watch(ep, s.reply);
	watch(ep, sock);
	pthread_create(&th, NULL, stats, NULL);
	while (!s.bye)
		wait_once(ep, server_ready, &s);
	pthread_join(th, NULL);
	waitpid(child, &st, 0);
	say("server", "client exited %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

int main(int argc, char **argv)
{
	int sv[2];
	pid_t pid;

	if (argc > 1)
		scale = atoi(argv[1]) > 0 ? atoi(argv[1]) : 1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return 1;
	start = now();
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(sv[0]);
		sock = sv[1];
		return client();
	}
	close(sv[1]);
	sock = sv[0];
	return server(pid);
}
