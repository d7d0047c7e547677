/* SPDX-License-Identifier: MIT */
/*
 * plugin.c - a plugin that a host dlopen()s and dlclose()s
 * (tests/host/lifetime.c): it makes, reads and closes a timer (also in its
 * constructor, inside dlopen()), and leaves one open.  Built three ways (tests/host/host.mk): on glibc's timerfd_*
 * (plugin-timerfd.so: Linux, or the preload under tfd exec), linked with
 * libtfd.so (plugin-lib.so), and with the library's objects linked into
 * itself (plugin-static.so).  Kept out of the .c files of tests/host, the
 * host programs.
 */
#include "../host.h"

/* A timer made, armed for ms, read (blocking) and closed: 0 and the count
 * in *count, or an errno. */
int plugin_run(long ms, long long *count)
{
	struct itimerspec its = { { 0, 0 }, { ms / 1000, ms % 1000 * MS } };
	uint64_t n = 0;
	int fd = T_create(CLOCK_MONOTONIC, T_CLOEXEC), e = 0;

	if (fd < 0)
		return errno;
	if (T_settime(fd, 0, &its, NULL) < 0 ||
	    T_read(fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		e = errno;
	*count = (long long)n;
	if (T_close(fd) < 0 && !e)
		e = errno;
	return e;
}

/* A timer armed for ms and left open: its number, or -errno. */
int plugin_open(long ms)
{
	struct itimerspec its = { { 0, 0 }, { ms / 1000, ms % 1000 * MS } };
	int fd = T_create(CLOCK_MONOTONIC, T_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (T_settime(fd, 0, &its, NULL) < 0) {
		int e = errno;

		T_close(fd);
		return -e;
	}
	return fd;
}

static long long at_load = -1;

/* Its first timer is made inside dlopen(), by its constructor. */
__attribute__((constructor)) static void plugin_init(void)
{
	long long n = 0;

	at_load = plugin_run(1, &n) ? -1 : n;
}

/* What the constructor's timer read, or -1. */
long long plugin_loaded(void)
{
	return at_load;
}
