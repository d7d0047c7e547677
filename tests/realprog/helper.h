/* SPDX-License-Identifier: MIT */
/*
 * helper.h - `PROG helper` runs a watchdog thread beside the program's
 * event loop, as real programs do: it sleeps in nanosleep(2) every 7 ms
 * until the program exits, and changes none of its events.  On virtual
 * time its sleeps are deadlines of their own that the loop's timers must
 * not be confused with (tfd-preload(7), VIRTUAL TIME; issue 13).
 */
#ifndef TFD_REALPROG_HELPER_H
#define TFD_REALPROG_HELPER_H

#include <pthread.h>
#include <string.h>
#include <time.h>

static void *helper_loop(void *arg)
{
	struct timespec ts = { 0, 7000000 };

	(void)arg;
	for (;;)
		nanosleep(&ts, NULL);
	return NULL;
}

static void helper_start(int argc, char **argv)
{
	pthread_t th;

	if (argc > 1 && !strcmp(argv[1], "helper") &&
	    pthread_create(&th, NULL, helper_loop, NULL) == 0)
		pthread_detach(th);
}

#endif
