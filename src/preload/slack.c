/* SPDX-License-Identifier: MIT */
/*
 * slack.c - the timer slack of a thread whose waits deliver.
 *
 * Linux ends a wait for a timerfd at its deadline, and a timed wait later
 * than asked by the thread's timer slack (50 us unless the program set
 * it).  A thread whose wait ends at a deadline of ours sets its slack to
 * 1 ns at its first such wait and keeps it so (two system calls a wait
 * less than setting it and giving it back each time); what the program
 * asks of prctl(2) about the slack is answered from the value it had or
 * set, as if it were in effect, and the program's own value is given
 * back while it starts a thread or a process, which would inherit ours.
 * /proc/self/task/TID/timerslack_ns shows 1 (tfd-preload(7)).
 */
#include "preload/preload.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The program's slack, while ours (1 ns) is in effect; -1 when the
 * program's own is. */
static __thread long program __attribute__((tls_model("initial-exec"))) = -1;

static long slack_get(void)
{
	return syscall(SYS_prctl, PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
}

static int slack_set(unsigned long v)
{
	return (int)syscall(SYS_prctl, PR_SET_TIMERSLACK, v, 0UL, 0UL, 0UL);
}

void tfd_slack_fine(void)
{
	long v;

	if (program >= 0)
		return;
	v = slack_get();
	if (v > 1 && slack_set(1) != 0)
		return; /* (refused: waits end by the slack later) */
	if (v >= 0)
		program = v;
}

int tfd_slack_program(void)
{
	int e = errno;

	if (program < 0)
		return 0;
	if (program > 1)
		slack_set((unsigned long)program);
	program = -1;
	errno = e;
	return 1;
}

EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	int i;

	va_start(ap, option);
	for (i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (program >= 0 && option == PR_GET_TIMERSLACK)
		return (int)program;
	if (program >= 0 && option == PR_SET_TIMERSLACK)
		program = -1; /* the program's from now, as it sets it */
	return R(prctl)(option, a[0], a[1], a[2], a[3]);
}
