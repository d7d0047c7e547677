/* SPDX-License-Identifier: MIT */
/*
 * futex.c - the futex calls (futex.h).
 */
#define _GNU_SOURCE
#include "futex.h"

#include "core/time.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void tfd_futex_wait(unsigned *word, unsigned val)
{
	syscall(SYS_futex, word, FUTEX_WAIT, val, NULL, NULL, TFD_FUTEX_OURS);
}

void tfd_futex_nap(unsigned *word, unsigned val, int64_t ns)
{
	struct timespec ts;

	if (ns < 0) {
		tfd_futex_wait(word, val);
		return;
	}
	ts.tv_sec = (time_t)(ns / TFD_NSEC);
	ts.tv_nsec = (long)(ns % TFD_NSEC);
	syscall(SYS_futex, word, FUTEX_WAIT, val, &ts, NULL, TFD_FUTEX_OURS);
}

void tfd_futex_wake(unsigned *word, int n)
{
	syscall(SYS_futex, word, FUTEX_WAKE, n, NULL, NULL, 0);
}
