/* SPDX-License-Identifier: MIT */
/*
 * host.h - the engine and the library that hosts it.  A host interposes
 * the C library's calls around the engine (the preload library, which
 * serves the program's calls from the same code): it tells the engine
 * how to step outside it by registering one struct tfd_host, before the
 * first timer, and the engine reaches it there and nowhere else.  With
 * no host (libtfd), the engine runs as plain library code.
 *
 * Below it, what the engine offers a host and virtual time: the
 * library's own threads, and the record of a wait that holds timers.
 */
#ifndef TFD_HOST_H
#define TFD_HOST_H

#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct tfd_host {
	/* The engine runs code of its own on a thread of the program's
	 * outside any call of the API (fork()'s handlers, the start of a
	 * thread of ours, whoever calls it): enter() before, leave(what it
	 * returned) after; in between, the calls that code makes and the
	 * threads it starts are the library's, not the program's.  leave(0)
	 * on a thread of ours: its calls are the program's from then on (the
	 * reaper runs the program's exit()). */
	int (*enter)(void);
	void (*leave)(int was);
	/* The read(2) a blocking tfd_read waits in, with no lock held: the
	 * host's waits there outside itself, as a system call of Linux's. */
	ssize_t (*read)(int fd, void *buf, size_t n);
	/* The poll(2) it waits in instead, for a while at a time, where no
	 * thread of the family's posts to the timer (fork.c), as read. */
	int (*poll)(struct pollfd *p, nfds_t n, int ms);
	/* 1 if a read of a timer with nothing to count, on the calling
	 * thread now, fails EAGAIN whatever O_NONBLOCK says: the host waits
	 * elsewhere (the preload's reads on virtual time, in the domain). */
	int (*nowait)(void);
	/* The clocks the program's own calls read (libtfd's engine calls
	 * clock_gettime by name), not the host's wrapper of them. */
	int (*clock_gettime)(clockid_t c, struct timespec *ts);
};

/* Once, before the first timer; a NULL member keeps the C library's (or
 * doing nothing, or 0). */
void tfd_host_set(const struct tfd_host *h);

/* lifetime.c: the library's own threads.  tfd_own_thread() starts one
 * (detached unless joinable, every signal blocked, inside: its calls are
 * the library's), counted until it calls tfd_own_ended() as its last
 * act; program_table says the caller shares the program's descriptor
 * table (not one of ours).  0 or errno.  tfd_own_pin() keeps the object
 * that holds the library loaded: called before the first timer, outside
 * every lock (it takes the loader's). */
int tfd_own_thread(pthread_t *th, int joinable, void *(*fn)(void *),
                   void *arg, int program_table);
void tfd_own_ended(void);
void tfd_own_pin(void);

/* A wait of the host's that holds timers (backend.h, hold) blocks now in
 * a system call: called just before it, and the result passed to
 * tfd_engine_waits_unblock just after.  In between, a signal handler of
 * the program may jump out of the wait, or a cancellation end the
 * thread: the engine then undoes the holds itself (src/engine/waits.c). */
uintptr_t tfd_engine_waits_block(void);
void tfd_engine_waits_unblock(uintptr_t mark);
/* The wait ends: every timer the thread held since it began goes (hold,
 * above, without keeping what it returned). */
void tfd_engine_waits_end(void);

#endif
