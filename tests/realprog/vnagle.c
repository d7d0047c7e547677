/* SPDX-License-Identifier: MIT */
/*
 * vnagle - bytes held in the kernel's TCP stack are work in progress: a
 * client writes its request to a server of the tree (a forked child) in
 * small pieces, then polls for the answer with a 60 s timeout, five
 * times.  Nagle's algorithm holds the last piece until the server's
 * delayed ACK, about 40 ms of real time, while every thread of the tree
 * waits; time must not jump to the client's timeout meanwhile.  Prints
 * what it found, natively and on virtual time the same
 * (tests/realprog/run.sh).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SIZE 1000
#define PIECE 100
#define ROUNDS 5

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void serve(int ls)
{
	char buf[SIZE];
	int c = accept(ls, NULL, NULL), r, got, n;

	for (r = 0; r < ROUNDS; r++) {
		for (got = 0; got < SIZE; got += n)
			if ((n = (int)read(c, buf, sizeof(buf) - got)) <= 0)
				_exit(1);
		if (write(c, "ok", 2) != 2)
			_exit(1);
	}
	_exit(0);
}

int main(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	char buf[SIZE], ok[2];
	int ls = socket(AF_INET, SOCK_STREAM, 0), s, r, put, answered = 0;
	int status;
	double t0;
	pid_t pid;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(ls, 1) != 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &len) != 0)
		return 1;
	pid = fork();
	if (pid == 0)
		serve(ls);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (pid < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) != 0)
		return 1;
	memset(buf, 'x', sizeof(buf));
	t0 = now();
	for (r = 0; r < ROUNDS; r++) {
		struct pollfd p = { s, POLLIN, 0 };

		for (put = 0; put < SIZE; put += PIECE)
			if (write(s, buf + put, PIECE) != PIECE)
				return 1;
		answered += poll(&p, 1, 60000) == 1 && read(s, ok, 2) == 2;
	}
	printf("answers before the 60 s timeout: %d of %d, within 10 s: %s\n",
	       answered, ROUNDS, now() - t0 < 10 ? "yes" : "no");
	close(s);
	return waitpid(pid, &status, 0) == pid && status == 0 ? 0 : 1;
}
