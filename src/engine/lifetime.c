/* SPDX-License-Identifier: MIT */
/*
 * lifetime.c - the library's own threads, and what they must not do to the
 * program's life: keep its code mapped past a dlclose(), or keep alive a
 * process that Linux would end.
 *
 * The threads: the engine's service thread and clock watcher, and in the
 * preload library a process's agent and mover.  Each is started by
 * tfd_own_thread() and counted: `started` when pthread_create() has
 * returned, `ended` by the thread itself as its last act, so that the
 * count of ours never exceeds the threads of ours the kernel counts.
 *
 * Loaded.  A shared object that holds the library (libtfd.so, or a plugin
 * that links libtfd.a into itself) may be dlclose()d while those threads
 * run.  The first timer made through the API pins the object instead
 * (dlopen() with RTLD_NOLOAD | RTLD_NODELETE, what -z nodelete does at
 * link time), before any thread of ours can start: it stays mapped until
 * the process ends.  An object that never made a timer unloads as before.
 *
 * Alive.  The C library ends a process when its last thread ends (exit(0):
 * atexit handlers, streams flushed), and counts ours among its threads: a
 * program whose first thread ends with pthread_exit() and whose others then
 * all end would stay, with only ours.  The first thread holds a
 * thread-specific value of ours from the start, whose destructor runs when
 * it ends that way (never when the process exits).  If a thread of ours
 * runs then, or starts later, one more starts, the reaper, sharing the
 * program's descriptor table (the service thread's is its own, and the
 * program's table goes with the program's last thread: the atexit handlers
 * must find it).  The reaper waits until the first thread is gone for the
 * kernel (it holds a robust mutex as it ends, which the kernel lets go of
 * when it is gone: its last destructors have run), then counts the
 * process's threads (the link count of /proc/self/task, 2 + the threads:
 * no descriptor, one system call) every 1 ms doubling to 50 ms, and when
 * only ours are left, it calls exit(0) as the last thread would have.
 * When it is the last of ours it ends instead, and the program's last
 * thread ends the process itself, as on Linux.  While the first thread
 * lives, as in nearly every program, nothing of this runs.
 *
 * It never ends a process that has a thread of the program's: the counts
 * of ours are read before and after /proc's, and used only if neither
 * changed; with `started` bumped after the thread exists and `ended` before
 * it is gone, ours then number at least started - ended, so /proc's count
 * equals 1 (the first thread, a zombie until the process ends) + ours only
 * when no thread of the program's is left.
 */
#define _GNU_SOURCE
#include "engine/engine.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REAP_MIN (1000 * 1000L)      /* ns: first look after the first thread */
#define REAP_MAX (50 * 1000 * 1000L) /* ns: looks at most this far apart */

static unsigned long started, ended; /* [A] threads of ours */
static pid_t counted_pid;            /* [A] the process they count for */
static pthread_mutex_t reap_lock = PTHREAD_MUTEX_INITIALIZER;
static int main_ended;               /* [reap_lock] */
static int reaping;                  /* [reap_lock] the reaper runs */
static int blind;                    /* [reap_lock] /proc cannot be read */
static pthread_mutex_t main_alive;   /* robust: the first thread holds it
                                      * from its end until it is gone */
static pthread_key_t main_key;
static int have_key;                 /* [A] main_key was made, not deleted */
static int main_marked;              /* [A] the first thread holds it */
static unsigned nap;                 /* the reaper sleeps on it */

static void robust_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

/* In a child of fork(): none of the parent's threads is here, and its
 * first thread is the one that forked.  Done once per process, by the
 * fork handler or by the first thread of ours the child starts, whichever
 * comes first (the engine's handler may start one before ours runs). */
static void count_here(void)
{
	pid_t pid = getpid();

	if (__atomic_load_n(&counted_pid, __ATOMIC_ACQUIRE) == pid)
		return;
	__atomic_store_n(&started, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ended, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_init(&reap_lock, NULL);
	robust_init(&main_alive);
	main_ended = reaping = 0;
	__atomic_store_n(&counted_pid, pid, __ATOMIC_RELEASE);
}

static void first_thread_ends(void *v);

/* The first thread holds our value: its end runs first_thread_ends(). */
static void mark_main(void)
{
	if (__atomic_load_n(&have_key, __ATOMIC_ACQUIRE) &&
	    gettid() == getpid() &&
	    pthread_setspecific(main_key, (void *)1) == 0)
		__atomic_store_n(&main_marked, 1, __ATOMIC_RELEASE);
}

static void forked(void)
{
	count_here();
	mark_main();
}

__attribute__((constructor)) static void lifetime_init(void)
{
	count_here();
	if (pthread_key_create(&main_key, first_thread_ends) == 0) {
		__atomic_store_n(&have_key, 1, __ATOMIC_RELEASE);
		mark_main(); /* not if a thread other than the first loads us */
	}
	pthread_atfork(NULL, NULL, forked);
}

/* Unloaded (never pinned: no timer was made), or the process exits. */
__attribute__((destructor)) static void lifetime_fini(void)
{
	if (__atomic_exchange_n(&have_key, 0, __ATOMIC_ACQ_REL))
		pthread_key_delete(main_key);
}

void tfd_own_pin(void)
{
	static int pinned; /* [A] */
	struct link_map *lm = NULL;
	Dl_info info;

	if (!__atomic_load_n(&main_marked, __ATOMIC_ACQUIRE))
		mark_main(); /* loaded by another thread: the first may call */
	if (__atomic_load_n(&pinned, __ATOMIC_ACQUIRE))
		return;
	/* The object this function is in; the program itself has no name
	 * and is never unloaded.  The handle is kept: never closed. */
	if (dladdr1((void *)tfd_own_pin, &info, (void **)&lm,
	            RTLD_DL_LINKMAP) && lm && lm->l_name && lm->l_name[0])
		dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
	__atomic_store_n(&pinned, 1, __ATOMIC_RELEASE);
}

void tfd_own_ended(void)
{
	__atomic_add_fetch(&ended, 1, __ATOMIC_SEQ_CST);
}

static unsigned long ours(void)
{
	return __atomic_load_n(&started, __ATOMIC_SEQ_CST) -
	       __atomic_load_n(&ended, __ATOMIC_SEQ_CST);
}

/* The process's threads, the first one included even as a zombie, or -1
 * without /proc. */
static long threads(void)
{
	struct stat st;

	if (stat("/proc/self/task", &st) != 0)
		return -1;
	return (long)st.st_nlink - 2;
}

/*
 * What a thread of ours takes from the program: a stack of OWN_STACK (not
 * the size RLIMIT_STACK makes the default: 8 MiB of address space, or a
 * few KiB where the program set the limit low), except in a sanitizer's
 * build, whose run-time needs more.  Not the program's real-time policy or
 * its CPU: a thread of the program's that spins under SCHED_FIFO on the
 * CPU it is pinned to would never let ours run there, and its timers
 * would never fire; ours is SCHED_OTHER on any CPU the process may use.
 * Where the system refuses either, the thread is made as the C library
 * makes it by default.
 */
#define OWN_STACK (256 * 1024)

static void own_attr(pthread_attr_t *attr)
{
	struct sched_param sp;
	cpu_set_t any;
	int policy;

	if (pthread_getschedparam(pthread_self(), &policy, &sp) != 0 ||
	    (policy != SCHED_FIFO && policy != SCHED_RR))
		return;
	sp.sched_priority = 0;
	pthread_attr_setinheritsched(attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(attr, SCHED_OTHER);
	pthread_attr_setschedparam(attr, &sp);
	memset(&any, 0xff, sizeof(any));
	pthread_attr_setaffinity_np(attr, sizeof(any), &any);
}

static int create(pthread_t *th, int joinable, void *(*fn)(void *), void *arg,
                  int small, int own)
{
	pthread_attr_t attr;
	int e;

	pthread_attr_init(&attr);
	if (!joinable)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
#ifndef TFD_SANITIZED
	if (small)
		pthread_attr_setstacksize(&attr, OWN_STACK);
#else
	(void)small;
#endif
	if (own)
		own_attr(&attr);
	e = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return e;
}

/* small: OWN_STACK (not the reaper, which runs the program's atexit
 * handlers as its last thread would). */
static int start(pthread_t *th, int joinable, void *(*fn)(void *), void *arg,
                 int small)
{
	sigset_t all, old;
	int e, was;

	/* No signal of the program's is ever handled on our threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* A thread of ours, whoever starts it (the preload's fork handler
	 * runs outside it): its calls go straight through. */
	was = tfd_host.enter();
	e = create(th, joinable, fn, arg, small, 1);
	if (e == EPERM || e == EINVAL) /* (refused: as by default) */
		e = create(th, joinable, fn, arg, 0, 0);
	tfd_host.leave(was);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e == 0)
		__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	return e;
}

static void *reaper(void *arg)
{
	long wait = REAP_MIN, n;
	unsigned long s, e;

	(void)arg;
	/* The first thread is gone: past its last destructor. */
	if (pthread_mutex_lock(&main_alive) == EOWNERDEAD)
		pthread_mutex_consistent(&main_alive);
	pthread_mutex_unlock(&main_alive);
	for (;;) {
		s = __atomic_load_n(&started, __ATOMIC_SEQ_CST);
		e = __atomic_load_n(&ended, __ATOMIC_SEQ_CST);
		n = threads();
		if (n >= 0 && n == 1 + (long)(s - e) &&
		    s == __atomic_load_n(&started, __ATOMIC_SEQ_CST) &&
		    e == __atomic_load_n(&ended, __ATOMIC_SEQ_CST)) {
			tfd_host.leave(0); /* the program's exit, as its own */
			exit(0);
		}
		pthread_mutex_lock(&reap_lock);
		if (n < 0)
			blind = 1; /* no /proc: we cannot tell */
		if (blind || ours() <= 1)
			break; /* only us: the program's last thread ends it */
		pthread_mutex_unlock(&reap_lock);
		tfd_futex_nap(&nap, 0, wait);
		wait = wait * 2 < REAP_MAX ? wait * 2 : REAP_MAX;
	}
	reaping = 0;
	tfd_own_ended();
	pthread_mutex_unlock(&reap_lock);
	tfd_host.leave(0);
	return NULL;
}

/* The reaper, from a thread in the program's descriptor table (it shares
 * the creator's).  reap_lock held. */
static void reap(void)
{
	pthread_t th;

	if (reaping || blind || !main_ended || ours() == 0)
		return;
	reaping = start(&th, 0, reaper, NULL, 0) == 0;
}

/* The destructor of main_key's value: pthread_exit() in the first thread
 * (in a child of fork(), the thread that forked). */
static void first_thread_ends(void *v)
{
	(void)v;
	if (gettid() != getpid())
		return;
	pthread_mutex_lock(&main_alive); /* until the kernel lets go */
	pthread_mutex_lock(&reap_lock);
	main_ended = 1;
	reap();
	pthread_mutex_unlock(&reap_lock);
}

int tfd_own_thread(pthread_t *th, int joinable, void *(*fn)(void *), void *arg,
                   int program_table)
{
	int e;

	count_here();
	e = start(th, joinable, fn, arg, 1);
	if (e == 0 && program_table) {
		pthread_mutex_lock(&reap_lock);
		reap();
		pthread_mutex_unlock(&reap_lock);
	}
	return e;
}
