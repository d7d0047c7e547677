/* SPDX-License-Identifier: MIT */
/*
 * rows.c - tfd bench's results (bench.h): a row per measure with its
 * figures per side and round, the notes printed under the table, and the
 * message of a call that failed.
 */
#include "bench.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct bench bench;

const char *const bench_side_name[2] = { "kernel", "engine" };

static const struct cols kernel_engine = { { "kernel", "engine" }, "e/k" };

void bench_note(const char *fmt, ...)
{
	va_list ap;

	if (bench.nnotes == (int)(sizeof(bench.notes) / sizeof(*bench.notes)))
		return;
	va_start(ap, fmt);
	vsnprintf(bench.notes[bench.nnotes++], sizeof(*bench.notes), fmt, ap);
	va_end(ap);
}

void bench_fail(int side, const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	fprintf(stderr, "tfd bench: %s: ", bench_side_name[side]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(e));
	bench.failed = 1;
}

struct row *bench_row_in(const struct cols *cols, const char *what, long n,
                         const char *unit, enum goal goal, double target)
{
	struct row *r;
	int i;

	for (i = 0; i < bench.nrows; i++)
		if (bench.rows[i].n == n && !strcmp(bench.rows[i].what, what))
			return &bench.rows[i];
	if (bench.nrows == MAXROWS) {
		static struct row spare; /* never printed */

		return &spare;
	}
	r = &bench.rows[bench.nrows++];
	snprintf(r->what, sizeof(r->what), "%s", what);
	r->n = n;
	r->unit = unit;
	r->goal = goal;
	r->target = target;
	r->cols = cols;
	return r;
}

struct row *bench_row(const char *what, long n, const char *unit,
                      enum goal goal, double target)
{
	return bench_row_in(&kernel_engine, what, n, unit, goal, target);
}

void bench_add(struct row *r, int side, double v)
{
	if (r->nv[side] < MAXR)
		r->v[side][r->nv[side]++] = v;
}
