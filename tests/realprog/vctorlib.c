/* SPDX-License-Identifier: MIT */
/*
 * vctorlib - a library of vctor's (vctor.c) whose constructor reads the
 * clock and starts a thread that sleeps a second at a time, and whose
 * destructor stops that thread and joins it.  The C library calls its
 * constructor before the preload's.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

long long vctor_clock; /* CLOCK_MONOTONIC in the constructor, ns */
int vctor_sleeps;      /* the thread's sleeps of a second so far */

static pthread_t thread;
static int stop, started;

static long long mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *sleeper(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct timespec second = { 1, 0 };

		nanosleep(&second, NULL);
		__atomic_add_fetch(&vctor_sleeps, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

__attribute__((constructor)) static void vctor_init(void)
{
	vctor_clock = mono();
	started = pthread_create(&thread, NULL, sleeper, NULL) == 0;
}

__attribute__((destructor)) static void vctor_fini(void)
{
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	printf("a library's destructor joins that thread: %s\n",
	       started && pthread_join(thread, NULL) == 0 ? "yes" : "no");
	fflush(stdout);
}
