/* SPDX-License-Identifier: MIT */
/*
 * wl_timers - timers of libwayland-server's event loop, which arms one
 * timerfd for all of them (absolute CLOCK_MONOTONIC deadlines) and only
 * re-arms it, never reads it.  Prints the events, not their times, so that
 * runs with and without libtfd-preload.so can be compared line by line
 * (tests/realprog/run.sh).
 *
 * Phase 1: two timers fall due while the loop is not running; one is
 * disarmed and the other re-armed before anything reads them.  An idle
 * window of 100 ms must then pass in one wake-up: a kernel timerfd's
 * pending expiration is discarded by the re-arm, and nothing fires.
 * Phase 2: timers at distinct times (50 ms apart at least), one re-armed
 * from its own handler, one disarmed before its time, until "stop".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "helper.h"
#include <wayland-server-core.h>

struct timer {
	const char *name;
	struct wl_event_source *src;
	int again;  /* re-arms left */
	int period; /* ms */
};

static int done, events;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0)
		;
}

static int fired(void *data)
{
	struct timer *t = data;

	printf("fired %s\n", t->name);
	events++;
	if (t->again > 0) {
		t->again--;
		wl_event_source_timer_update(t->src, t->period);
	}
	if (t->name[0] == 'S')
		done = 1;
	return 0;
}

static void add(struct wl_event_loop *loop, struct timer *t)
{
	t->src = wl_event_loop_add_timer(loop, fired, t);
	if (!t->src) {
		perror("wl_event_loop_add_timer");
		exit(1);
	}
}

/* Run the loop for ms: the wake-ups and events seen. */
static void idle_window(struct wl_event_loop *loop, int ms)
{
	long long end = now_ms() + ms;
	int wakes = 0, before = events;

	for (long long left = ms; left > 0; left = end - now_ms()) {
		if (wl_event_loop_dispatch(loop, (int)left) < 0) {
			perror("wl_event_loop_dispatch");
			exit(1);
		}
		wakes++;
	}
	printf("idle %d ms: %d wake-up(s), %d event(s)\n", ms, wakes,
	       events - before);
}

int main(int argc, char **argv)
{
	struct wl_event_loop *loop = wl_event_loop_create();
	struct timer P = { "P (re-armed while pending)", NULL, 0, 0 };
	struct timer Q = { "Q (disarmed while pending)", NULL, 0, 0 };
	struct timer A = { "A (re-arms itself twice)", NULL, 2, 60 };
	struct timer B = { "B", NULL, 0, 0 };
	struct timer C = { "C", NULL, 0, 0 };
	struct timer D = { "D (disarmed before its time)", NULL, 0, 0 };
	struct timer S = { "S (stop)", NULL, 0, 0 };
	int spurious = 0, rounds = 0;

	helper_start(argc, argv);

	if (!loop) {
		perror("wl_event_loop_create");
		return 1;
	}
	add(loop, &P);
	add(loop, &Q);
	add(loop, &A);
	add(loop, &B);
	add(loop, &C);
	add(loop, &D);
	add(loop, &S);

	/* Phase 1: due while nobody runs the loop, then changed. */
	wl_event_source_timer_update(P.src, 5);
	wl_event_source_timer_update(Q.src, 5);
	sleep_ms(40);
	wl_event_source_timer_update(Q.src, 0);
	wl_event_source_timer_update(P.src, 400);
	idle_window(loop, 100);

	/* Phase 2, from about 140 ms: C 190, A 240 300 360, P 440, B 490,
	 * S 590; D disarmed. */
	wl_event_source_timer_update(C.src, 50);
	wl_event_source_timer_update(A.src, 100);
	wl_event_source_timer_update(D.src, 130);
	wl_event_source_timer_update(B.src, 350);
	wl_event_source_timer_update(S.src, 450);
	wl_event_source_timer_update(D.src, 0);
	while (!done && rounds++ < 100) {
		int before = events;

		if (wl_event_loop_dispatch(loop, -1) < 0) {
			perror("wl_event_loop_dispatch");
			return 1;
		}
		spurious += events == before;
	}
	printf("%d event(s), %d wake-up(s) without one\n", events, spurious);

	wl_event_source_remove(P.src);
	wl_event_source_remove(Q.src);
	wl_event_source_remove(A.src);
	wl_event_source_remove(B.src);
	wl_event_source_remove(C.src);
	wl_event_source_remove(D.src);
	wl_event_source_remove(S.src);
	wl_event_loop_destroy(loop);
	return 0;
}
