/* SPDX-License-Identifier: MIT */
/*
 * eventloop - the example loop on real time: a heartbeat every 7 s, "idle"
 * 30 s after the last line typed on stdin, and the end after DURATION
 * seconds (default 3600).  The same loop runs on virtual time in
 * tests/test_virtual.c, where one hour takes milliseconds.
 *
 *   eventloop [DURATION]
 */
#define _GNU_SOURCE
#include "loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void print(void *ctx, enum loop_event ev, uint64_t n)
{
	struct timespec now;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &now);
	printf("%ld.%03ld %s %llu\n", (long)now.tv_sec, now.tv_nsec / 1000000,
	       loop_event_name(ev), (unsigned long long)n);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct loop l = { .emit = print };
	struct timespec end;
	long secs = argc > 1 ? atol(argv[1]) : 3600;

	if (secs <= 0) {
		fprintf(stderr, "usage: eventloop [SECONDS]\n");
		return 2;
	}
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += secs;
	if (loop_open(&l, STDIN_FILENO, 7000000000LL, 30000000000LL, &end) < 0) {
		perror("eventloop");
		return 1;
	}
	while (!l.done)
		if (loop_run_once(&l, -1) < 0) {
			perror("eventloop");
			return 1;
		}
	loop_close(&l);
	return 0;
}
