/* SPDX-License-Identifier: MIT */
/*
 * vscale - on virtual time, the cost of an expiration does not grow with
 * the number of timers: N timers (periods 1 to 500 ms, first expiries 100
 * to 590 ms, half on CLOCK_REALTIME armed absolute, on its own queue) in
 * one epoll set, read as they come for a virtual second.  Every read
 * counts 1 (time never moves past a timer that is readable and not read
 * yet), and the process's read system calls (/proc/self/io, syscr: read,
 * pread, readv, including the library's own) are at most 2 an expiration
 * plus a few: a wait that looked through the whole set (the kernel's list
 * of its descriptors) read about N/16 times.  Prints what it found; on
 * virtual time only (tests/realprog/run.sh): natively a loaded machine
 * may count 2.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "syscr.h"

static long syscr(void)
{
	return syscr_of("/proc/self/io");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 512, ep = epoll_create1(0), i, k;
	long reads = 0, more = 0, before, after;
	struct timespec t0, t, real;

	clock_gettime(CLOCK_REALTIME, &real);
	for (i = 0; i < n; i++) {
		struct itimerspec its = {
			{ 0, (i % 500 + 1) * 1000000L },
			{ 0, (100 + i % 50 * 10) * 1000000L },
		};
		struct epoll_event ev = { .events = EPOLLIN };
		int c = i % 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME, abs = 0;
		int fd = timerfd_create(c, TFD_NONBLOCK | TFD_CLOEXEC);

		if (i % 2 == 0) { /* at real + its first expiry */
			its.it_value.tv_sec = real.tv_sec;
			its.it_value.tv_nsec += real.tv_nsec;
			if (its.it_value.tv_nsec >= 1000000000L) {
				its.it_value.tv_sec++;
				its.it_value.tv_nsec -= 1000000000L;
			}
			abs = TFD_TIMER_ABSTIME;
		}
		ev.data.fd = fd;
		if (fd < 0 || timerfd_settime(fd, abs, &its, NULL) != 0 ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
			return 1;
	}
	before = syscr();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct epoll_event evs[64];
		uint64_t c;

		k = epoll_wait(ep, evs, 64, -1);
		for (i = 0; i < k; i++) {
			if (read(evs[i].data.fd, &c, sizeof(c)) != sizeof(c))
				return 1;
			reads++;
			more += c != 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec <
	         1000000000L);
	after = syscr();
	printf("%d timers: %s expirations read, each read counts 1: %s\n", n,
	       reads > n ? "many" : "few", more ? "no" : "yes");
	printf("read system calls at most 2 an expiration: %s\n",
	       before >= 0 && after - before <= 2 * reads + 64 ? "yes" : "no");
	if (getenv("VSCALE_SAY"))
		fprintf(stderr, "%ld reads, %ld read calls\n", reads,
		        after - before);
	return 0;
}
