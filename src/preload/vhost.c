/* SPDX-License-Identifier: MIT */
/*
 * vhost.c - what virtual time asks of the preload (vtime.h, struct
 * tfd_dom_host), given once as the process joins its domain: the inside
 * flag, the C library's calls past our wrappers, the program's handlers
 * counted, the timers that signal, the trace.
 */
#include "preload/preload.h"

static int enter(void)
{
	return tfd_enter();
}

static void leave(int was)
{
	tfd_leave(was);
}

static int inside(void)
{
	return tfd_inside;
}

static unsigned handled(void)
{
	return tfd_sig_handled;
}

static unsigned unrestarted(void)
{
	return tfd_sig_unrestarted;
}

/* The poke's handler, and the program's handlers counted from now. */
static void poke_install(const struct sigaction *sa)
{
	tfd_sig_poke_install(sa);
	tfd_counting_signals = 1;
}

static int has_timers(void)
{
	return __atomic_load_n(&tfd_nmarked, __ATOMIC_RELAXED) != 0 ||
	       tfd_sets_any();
}

static void moved(int64_t ns)
{
	struct timespec ts = tfd_ns_to_ts(ns);

	tfd_trace(-1, 0, 0, "virtual-advance(+%lld.%09ld)",
	          (long long)ts.tv_sec, ts.tv_nsec);
}

int tfd_join_domain(const char *name)
{
	struct tfd_dom_host h = {
		.be = tfd_be,
		.enter = enter,
		.leave = leave,
		.inside = inside,
		.clock_gettime = &R(clock_gettime),
		.fcntl = &R(fcntl),
		.poll = &R(poll),
		.ppoll = &R(ppoll),
		.nanosleep = &R(nanosleep),
		.handled = handled,
		.unrestarted = unrestarted,
		.sigtimers_fire = tfd_sigtimers_fire,
		.sigtimers_next = tfd_sigtimers_next,
		.sigtimers_forked = tfd_sigtimers_forked,
		.poke_install = poke_install,
		.has_timers = has_timers,
		.moved = moved,
	};

	return tfd_dom_join(name, &h);
}
