/* SPDX-License-Identifier: MIT */
/*
 * next.c - the next definitions (libc's) of every function we export,
 * resolved once with dlsym(RTLD_NEXT).
 */
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>

struct tfd_next tfd_next;

#define LOAD(f) tfd_next.f = (__typeof__(tfd_next.f))dlsym(RTLD_NEXT, #f);

static void load_all(void)
{
	TFD_NEXT(LOAD)
}

void tfd_next_load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, load_all);
}

/* ---- the read(2) a blocking tfd_read() waits in ----
 *
 * The library's code, linked into this one, calls read(2) by its name,
 * which is ours, and the thread is inside the library then (tfd_inside):
 * the call goes straight to libc's.  The one read(2) that may block is
 * made outside, as a system call of Linux's is made: the program's
 * handlers run there (none is deferred, and those deferred until now are
 * let through first), a handler may jump out of it (the engine undoes
 * the wait's record: src/engine/waits.c), and a cancellation ends the
 * thread there outside the library.  The thread is inside again after. */
static int go_out(void)
{
	int was = tfd_inside;

	if (was)
		tfd_leave(0);
	return was;
}

static void come_back(int was)
{
	int e = errno;

	if (was)
		(void)tfd_enter();
	errno = e;
}

ssize_t tfd_sys_read(int fd, void *buf, size_t n)
{
	int was = go_out();
	ssize_t r = R(read)(fd, buf, n);

	come_back(was);
	return r;
}

/* The poll(2) it waits in instead where nobody posts to the timer (a
 * forked child with no service thread: src/engine/fork.c), made outside
 * as that read(2) is. */
int tfd_sys_poll(struct pollfd *p, nfds_t n, int ms)
{
	int was = go_out(), r = R(poll)(p, n, ms);

	come_back(was);
	return r;
}
