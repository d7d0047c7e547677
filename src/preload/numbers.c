/* SPDX-License-Identifier: MIT */
/*
 * numbers.c - the table of numbers we own: 1 for a descriptor that names
 * a timer made here (or a duplicate of one).  And whose table it is: a
 * vfork() child runs on its parent's memory, so what it closes or
 * duplicates must not change the parent's table or timers.
 */
#include "preload/preload.h"

#include <errno.h>
#include <unistd.h>

unsigned char tfd_mark[MARK_MAX];
int tfd_nmarked;
int tfd_hiwater;

/* The process whose table this is.  fork() children set it (atfork); a
 * vfork() child, which runs no atfork handler, sees its parent's. */
static pid_t owner;

/* A child may run on our memory: a vfork() or clone(CLONE_VM) was made
 * through us.  Never cleared (a parent cannot tell when its last such
 * child has gone); from the start where vfork() is the C library's. */
#ifdef TFD_VFORK
int tfd_vm_children;
#else
int tfd_vm_children = 1;
#endif

static void owner_child(void)
{
	owner = getpid();
}

void tfd_numbers_init(void)
{
	owner = getpid();
	pthread_atfork(NULL, NULL, owner_child);
}

void tfd_vm_shared(void)
{
	__atomic_store_n(&tfd_vm_children, 1, __ATOMIC_SEQ_CST);
}

int tfd_foreign_child(void)
{
	return getpid() != owner;
}

void tfd_set_mark(int fd)
{
	int h = __atomic_load_n(&tfd_hiwater, __ATOMIC_RELAXED);

	if (__atomic_exchange_n(&tfd_mark[fd], 1, __ATOMIC_RELAXED))
		return;
	__atomic_add_fetch(&tfd_nmarked, 1, __ATOMIC_RELAXED);
	while (fd >= h && !__atomic_compare_exchange_n(
	                          &tfd_hiwater, &h, fd + 1, 0,
	                          __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void tfd_clear_mark(int fd)
{
	if (tfd_marked(fd) &&
	    __atomic_exchange_n(&tfd_mark[fd], 0, __ATOMIC_RELAXED))
		__atomic_sub_fetch(&tfd_nmarked, 1, __ATOMIC_RELAXED);
}

/* A number tfd_create() returned: mark it, or give up a number the table
 * cannot hold (EMFILE). */
int tfd_adopt(int fd)
{
	int was;

	if (fd < MARK_MAX) {
		tfd_set_mark(fd);
		return fd;
	}
	was = tfd_enter();
	tfd_api_close(fd);
	tfd_leave(was);
	errno = EMFILE;
	return -1;
}

/* A marked number that the backend does not know was closed by a call we
 * do not see (fclose() of fdopen(), a raw close system call): forget it.
 * Returns 1 if fd still names a timer. */
int tfd_still_timer(int fd)
{
	int was = tfd_enter(), e = tfd_be->check(fd);

	tfd_leave(was);
	if (e == 0)
		return 1;
	tfd_clear_mark(fd);
	return 0;
}

/* newfd was just made a duplicate of the timer oldfd: it names the same
 * timer.  0, or -1 with errno set and newfd closed. */
int tfd_share(int oldfd, int newfd)
{
	int was, e;

	if (newfd >= MARK_MAX) {
		R(close)(newfd);
		errno = EMFILE;
		return -1;
	}
	was = tfd_enter();
	e = tfd_be->dup(oldfd, newfd);
	tfd_leave(was);
	if (e == 0) {
		tfd_set_mark(newfd);
	} else if (e == EBADF || e == EINVAL) {
		tfd_clear_mark(oldfd); /* stale: newfd is a plain duplicate */
	} else {
		R(close)(newfd);
		errno = e;
		return -1;
	}
	return 0;
}

/* fd stops naming its timer or set without being closed here (dup2 over
 * it, or closed in a table of the caller's own): the backend lets go of
 * it. */
void tfd_release_number(int fd)
{
	int was = tfd_enter();

	tfd_sets_forget(fd);
	if (tfd_be->release)
		tfd_be->release(fd);
	tfd_leave(was);
	tfd_clear_mark(fd);
	tfd_epoll_closed(fd);
}
