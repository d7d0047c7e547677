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
 *
 * With the argument "late", six requests written whole, the last of
 * which the server answers after sleep(20): nothing is held in the
 * kernel then (the request was sent; past the connection's first
 * segments, its ACK waits to ride on the answer), and time jumps.
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

static void serve(int ls, int rounds, unsigned late)
{
	char buf[SIZE];
	int c = accept(ls, NULL, NULL), r, got, n;

	for (r = 0; r < rounds; r++) {
		for (got = 0; got < SIZE; got += n)
			if ((n = (int)read(c, buf, sizeof(buf) - got)) <= 0)
				_exit(1);
		if (r == rounds - 1)
			sleep(late);
		if (write(c, "ok", 2) != 2)
			_exit(1);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	char buf[SIZE], ok[2];
	int ls = socket(AF_INET, SOCK_STREAM, 0), s, r, put, answered = 0;
	int status;
	int late = argc > 1 && !strcmp(argv[1], "late");
	int rounds = late ? 6 : ROUNDS, piece = late ? SIZE : PIECE;
	double t0;
	pid_t pid;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(ls, 1) != 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &len) != 0)
		return 1;
	pid = fork();
	if (pid == 0)
		serve(ls, rounds, late ? 20 : 0);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (pid < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) != 0)
		return 1;
	memset(buf, 'x', sizeof(buf));
	t0 = now();
	for (r = 0; r < rounds; r++) {
		struct pollfd p = { s, POLLIN, 0 };

		for (put = 0; put < SIZE; put += piece)
			if (write(s, buf + put, (size_t)piece) != piece)
				return 1;
		answered += poll(&p, 1, 60000) == 1 && read(s, ok, 2) == 2;
	}
	if (late)
		printf("answered: %d of 6, after 20 s: %s\n", answered,
		       now() - t0 >= 20 ? "yes" : "no");
	else
		printf("answers before the 60 s timeout: %d of %d, within "
		       "10 s: %s\n", answered, ROUNDS,
		       now() - t0 < 10 ? "yes" : "no");
	close(s);
	return waitpid(pid, &status, 0) == pid && status == 0 ? 0 : 1;
}
