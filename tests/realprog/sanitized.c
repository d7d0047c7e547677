/* SPDX-License-Identifier: MIT */
/*
 * sanitized - a program built with AddressSanitizer (its run-time must be
 * the first object loaded) that reads a timer 20 ms ahead: tfd exec puts
 * the run-time before libtfd-preload.so, and the timer is the preload's.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/timerfd.h>
#include <unistd.h>

int main(void)
{
	struct itimerspec its = { .it_value = { 0, 20 * 1000 * 1000 } };
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	uint64_t n;

	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) < 0 ||
	    read(fd, &n, sizeof(n)) != sizeof(n))
		return perror("timer"), 1;
	printf("read %llu\n", (unsigned long long)n);
	return close(fd);
}
