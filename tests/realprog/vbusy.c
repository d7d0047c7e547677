/* SPDX-License-Identifier: MIT */
/*
 * vbusy - a busy program (issue 13 item 4): it arms a timer of MS
 * milliseconds and polls it with a zero timeout until it is readable,
 * never blocking.  On pure virtual time it would spin for ever (time moves
 * only when every thread waits); with `tfd exec --virtual-rate F` time
 * also flows, F times the real rate, and the timer fires.  Prints what it
 * saw; exits 1 if the timer fired early on the program's clock.
 *
 *   vbusy MS
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static int64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 50;
	struct itimerspec its = { { 0, 0 }, { ms / 1000, ms % 1000 * 1000000 } };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	struct pollfd p = { fd, POLLIN, 0 };
	long polls = 0;
	int64_t t0 = now(), dt;

	timerfd_settime(fd, 0, &its, NULL);
	while (poll(&p, 1, 0) == 0)
		polls++;
	dt = now() - t0;
	printf("fired after %s polls, %s\n", polls > 0 ? "some" : "no",
	       dt >= ms * 1000000 ? "not early" : "EARLY");
	return dt >= ms * 1000000 ? 0 : 1;
}
