/* SPDX-License-Identifier: MIT */
/*
 * ticker - a small program that uses a timerfd through glibc, to watch with
 * `tfd exec --trace /dev/stderr -- ticker`: a periodic timer of 20 ms,
 * waited for with poll() and read COUNT times (default 3), queried, copied
 * with dup(), disarmed and closed.  Its first line, "deadline S.N", is no
 * earlier than the first expiry: the time left is asked first, the clock
 * read after (run.sh holds the trace's "[next]" to it).
 *
 *   ticker [COUNT]
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct itimerspec its = { { 0, 20000000 }, { 0, 20000000 } }, cur;
	struct timespec now;
	long long at;
	int count = argc > 1 ? atoi(argv[1]) : 3, fd, copy, i;
	struct pollfd p;
	uint64_t n, total = 0;

	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) < 0) {
		perror("timerfd");
		return 1;
	}
	timerfd_gettime(fd, &cur);
	clock_gettime(CLOCK_MONOTONIC, &now);
	at = (now.tv_sec + cur.it_value.tv_sec) * 1000000000LL + now.tv_nsec +
	     cur.it_value.tv_nsec;
	printf("deadline %lld.%09lld\n", at / 1000000000, at % 1000000000);
	p.fd = fd;
	p.events = POLLIN;
	for (i = 0; i < count; i++) {
		if (poll(&p, 1, -1) != 1 || read(fd, &n, sizeof(n)) != 8) {
			perror("poll/read");
			return 1;
		}
		total += n;
	}
	printf("%d reads, %llu expirations\n", count,
	       (unsigned long long)total);
	timerfd_gettime(fd, &cur);
	copy = dup(fd);
	its.it_value.tv_nsec = 0;
	timerfd_settime(copy, 0, &its, NULL);
	close(fd);
	close(copy);
	return 0;
}
