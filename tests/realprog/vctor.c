/* SPDX-License-Identifier: MIT */
/*
 * vctor - on virtual time, a library's constructor, which the C library
 * calls before the preload's, reads the domain's clock and starts a
 * thread of the domain's (tfd-preload(7), BUGS): the clock it read is
 * the one main() reads (no time passes in between: nothing waits on a
 * deadline but that thread), and its thread's sleeps of a second go on
 * the domain's clock while main() sleeps 10 s (9 or 10 of them; on real
 * time, none in the few milliseconds the 10 s take).  Then the
 * library's destructor, which runs after the preload's, joins the
 * thread, asleep (it hung in 2 runs of 12 when the thread that exits
 * counted as running there).  Prints what it found; on virtual time only
 * (tests/realprog/run.sh).
 */
#include <stdio.h>
#include <time.h>

extern long long vctor_clock;
extern int vctor_sleeps;

int main(void)
{
	struct timespec ts, ten = { 10, 0 };
	long long now;

	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000LL + ts.tv_nsec;
	printf("a library's constructor read the clock main() reads: %s\n",
	       vctor_clock == now ? "yes" : "no");
	nanosleep(&ten, NULL);
	printf("its thread slept on that clock: %s\n",
	       __atomic_load_n(&vctor_sleeps, __ATOMIC_RELAXED) >= 9 ? "yes"
	                                                          : "no");
	return 0;
}
