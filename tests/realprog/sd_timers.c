/* SPDX-License-Identifier: MIT */
/*
 * sd_timers - timers of systemd's sd-event (libsystemd), which keeps one
 * timerfd per clock, armed with absolute times chosen inside each
 * source's accuracy window.  Prints the events, not their times, so that
 * runs with and without libtfd-preload.so can be compared line by line
 * (tests/realprog/run.sh).
 *
 * Sources on CLOCK_MONOTONIC, CLOCK_REALTIME and CLOCK_BOOTTIME, relative
 * and absolute, with accuracies from 1 us to 20 ms, 50 ms apart at least
 * (more than any accuracy window), so that the order is the same on every
 * backend: a periodic "tick" re-armed from its handler, one source moved
 * before its time, one disabled before its time, and "stop", which ends
 * the loop.  The loop runs for a bounded number of iterations.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "helper.h"

#define MS 1000ULL /* sd-event counts microseconds */

struct src {
	const char *name;
	clockid_t clock;
	int absolute;
	uint64_t at;       /* ms from the start */
	uint64_t accuracy; /* us */
	sd_event_source *s;
};

static int events, ticks;

static int fired(sd_event_source *s, uint64_t usec, void *data)
{
	struct src *x = data;

	(void)usec;
	printf("fired %s\n", x->name);
	events++;
	if (!strcmp(x->name, "stop"))
		return sd_event_exit(sd_event_source_get_event(s), 0);
	if (!strcmp(x->name, "tick") && ++ticks < 5) {
		uint64_t t;

		/* Absolute re-arm 100 ms after the previous time: no drift. */
		if (sd_event_source_get_time(s, &t) < 0 ||
		    sd_event_source_set_time(s, t + 100 * MS) < 0 ||
		    sd_event_source_set_enabled(s, SD_EVENT_ONESHOT) < 0)
			return -1;
	}
	return 0;
}

static void check(int r, const char *what)
{
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", what, strerror(-r));
		exit(1);
	}
}

static void add(sd_event *e, struct src *x)
{
	uint64_t now;

	if (x->absolute) {
		check(sd_event_now(e, x->clock, &now), "sd_event_now");
		check(sd_event_add_time(e, &x->s, x->clock, now + x->at * MS,
		                        x->accuracy, fired, x),
		      "sd_event_add_time");
	} else {
		check(sd_event_add_time_relative(e, &x->s, x->clock,
		                                 x->at * MS, x->accuracy,
		                                 fired, x),
		      "sd_event_add_time_relative");
	}
}

int main(int argc, char **argv)
{
	struct src srcs[] = {
		{ "tick", CLOCK_MONOTONIC, 0, 30, 1, NULL },
		{ "boottime relative", CLOCK_BOOTTIME, 0, 80, 1000, NULL },
		{ "monotonic relative", CLOCK_MONOTONIC, 0, 180, 1, NULL },
		{ "realtime relative", CLOCK_REALTIME, 0, 280, 5000, NULL },
		{ "monotonic absolute", CLOCK_MONOTONIC, 1, 380, 1000, NULL },
		{ "realtime absolute", CLOCK_REALTIME, 1, 480, 20000, NULL },
		{ "boottime absolute", CLOCK_BOOTTIME, 1, 560, 1000, NULL },
		{ "moved (from 100 to 610 ms)", CLOCK_MONOTONIC, 0, 100, 1,
		  NULL },
		{ "disabled (never)", CLOCK_BOOTTIME, 0, 150, 1, NULL },
		{ "stop", CLOCK_MONOTONIC, 1, 660, 1, NULL },
	};
	size_t n = sizeof(srcs) / sizeof(*srcs), i;
	sd_event *e;
	int r = 0, rounds;

	helper_start(argc, argv);

	check(sd_event_new(&e), "sd_event_new");
	for (i = 0; i < n; i++)
		add(e, &srcs[i]);
	check(sd_event_source_set_time_relative(srcs[7].s, 610 * MS),
	      "sd_event_source_set_time_relative");
	check(sd_event_source_set_enabled(srcs[8].s, SD_EVENT_OFF),
	      "sd_event_source_set_enabled");
	for (rounds = 0; rounds < 100; rounds++) {
		r = sd_event_run(e, UINT64_MAX);
		check(r, "sd_event_run");
		if (sd_event_get_state(e) == SD_EVENT_FINISHED)
			break;
	}
	printf("%d event(s), loop %s\n", events,
	       sd_event_get_state(e) == SD_EVENT_FINISHED ? "finished"
	                                                  : "still running");
	for (i = 0; i < n; i++)
		sd_event_source_unref(srcs[i].s);
	sd_event_unref(e);
	return 0;
}
