/* SPDX-License-Identifier: MIT */
/*
 * units.h - facts about lengths of time, for vclock and vwaits.  A unit
 * is 1 s on virtual time (TFD_BACKEND=virtual), where a length must be
 * exact to the nanosecond; natively it is shorter, and a length must be
 * never early and only a little late.  One line a fact, "ok  " or "FAIL"
 * then what was checked; failed is 1 once one failed.
 */
#ifndef TFD_REALPROG_UNITS_H
#define TFD_REALPROG_UNITS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SEC 1000000000LL

static int virt, failed;
static int64_t unit; /* ns: 1 s virtual, the native unit natively */

/* virt and unit, for a native unit of native ns. */
static void units_start(int64_t native)
{
	const char *b = getenv("TFD_BACKEND");

	virt = b && !strcmp(b, "virtual");
	unit = virt ? SEC : native;
}

static int64_t now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

static void fact(const char *what, int ok)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	failed |= !ok;
}

/* A length that took got ns, asked want ns: exact on virtual time;
 * natively never early and less than late ns late. */
static void length_within(const char *what, int64_t got, int64_t want,
                          int64_t late)
{
	int ok = virt ? got == want : got >= want && got < want + late;

	printf("%s %s", ok ? "ok  " : "FAIL", what);
	if (!ok)
		printf(": %lld ns, want %lld", (long long)got, (long long)want);
	printf("\n");
	failed |= !ok;
}

#endif
