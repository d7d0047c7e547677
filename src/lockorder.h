/* SPDX-License-Identifier: MIT */
/*
 * lockorder.h - every lock of the library and of the preload, in the one
 * order a thread may take them: a thread that holds a lock takes only
 * locks below it in this list (outermost first).
 *
 *   LK_SELECT     api.c's select_lock (the backend in use; rwlock)
 *   LK_SETS       sets.c: the timer sets (tfd_set(3)) and their keys
 *   LK_AGENT      vtime/step.c: starting the process's agent thread
 *   LK_PUBLISH    vtime/step.c: publishing the next deadline
 *   LK_SYNC       vtime/step.c: moving the engine's clocks in step
 *   LK_SIGTIMERS  preload/sigtimers.c: alarm() and timer_create() timers
 *   LK_EPOLL      preload/epoll.c: the registrations of timers in epoll sets
 *   LK_SIGNALS    preload/signals.c: the program's signal handlers
 *   LK_RAWSYS     preload/rawsys.c: the program's SIGSYS action
 *   LK_FAMILY     engine/family.c: the family's lock (engine.h)
 *   LK_KERNEL     backend_kernel.c: the kernel backend's table, innermost
 *                 (fork's prepare handlers take the family's lock, then
 *                 this one: tfd_kernel_fork_init)
 *
 * Builds with TFD_DEBUG_LOCKS (the sanitizer builds: make SAN=...) check
 * the order at run time: each named lock is declared with TFD_LOCK_RANK
 * beside its definition, and a thread that takes a lock at or above one
 * it holds is stopped with a message that names both (abort()).  Other
 * builds compile all of this to nothing.
 */
#ifndef TFD_LOCKORDER_H
#define TFD_LOCKORDER_H

#include <pthread.h>

enum tfd_lock_rank {
	LK_SELECT,
	LK_SETS,
	LK_AGENT,
	LK_PUBLISH,
	LK_SYNC,
	LK_SIGTIMERS,
	LK_EPOLL,
	LK_SIGNALS,
	LK_RAWSYS,
	LK_FAMILY,
	LK_KERNEL,
};

#ifdef TFD_DEBUG_LOCKS
void tfd_lock_name(const void *lock, enum tfd_lock_rank rank);
void tfd_lock_taken(enum tfd_lock_rank rank);
void tfd_lock_released(enum tfd_lock_rank rank);
void tfd_lock_assert_held(enum tfd_lock_rank rank);
int tfd_lock_mutex(pthread_mutex_t *m);
int tfd_trylock_mutex(pthread_mutex_t *m);
int tfd_unlock_mutex(pthread_mutex_t *m);
int tfd_lock_rd(pthread_rwlock_t *l);
int tfd_lock_wr(pthread_rwlock_t *l);
int tfd_unlock_rw(pthread_rwlock_t *l);
/* The named locks are taken with the usual calls: these see them. */
#define pthread_mutex_lock(m) tfd_lock_mutex(m)
#define pthread_mutex_trylock(m) tfd_trylock_mutex(m)
#define pthread_mutex_unlock(m) tfd_unlock_mutex(m)
#define pthread_rwlock_rdlock(l) tfd_lock_rd(l)
#define pthread_rwlock_wrlock(l) tfd_lock_wr(l)
#define pthread_rwlock_unlock(l) tfd_unlock_rw(l)
#define TFD_LOCK_RANK(lock, rank)                                        \
	__attribute__((constructor)) static void tfd_lock_rank_##lock(void) \
	{                                                                 \
		tfd_lock_name(&lock, rank);                               \
	}                                                                 \
	struct tfd_lock_rank_##lock##_semicolon
#else
#define tfd_lock_taken(rank) ((void)0)
#define tfd_lock_released(rank) ((void)0)
#define tfd_lock_assert_held(rank) ((void)0)
#define TFD_LOCK_RANK(lock, rank) struct tfd_lock_rank_##lock##_semicolon
#endif

#endif
