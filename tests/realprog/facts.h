/* SPDX-License-Identifier: MIT */
/*
 * facts.h - the lines of timerfd_glibc, dropin and rawsys: one a fact,
 * "what: result" where result is the value or "-1 ENAME", written out at
 * once, so that runs on Linux's timerfd and through libtfd-preload.so
 * compare line by line (run.sh).
 */
#ifndef TFD_REALPROG_FACTS_H
#define TFD_REALPROG_FACTS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void show(const char *what, long r, int e)
{
	if (r == -1)
		printf("%s: -1 %s\n", what, strerrorname_np(e));
	else
		printf("%s: %ld\n", what, r);
	fflush(stdout);
}

/* show(what, the value of expr, the errno it left). */
#define SHOW(what, expr)                                                    \
	do {                                                                \
		long r_;                                                    \
		errno = 0;                                                  \
		r_ = (long)(expr);                                          \
		show(what, r_, errno);                                      \
	} while (0)

#endif
