/* SPDX-License-Identifier: MIT */
/*
 * stats.c - tfd bench's statistics (bench.h): a row's median, spread and
 * sum over the rounds, and its verdict against the target of the issue.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bench_cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int bench_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

struct stat3 bench_stats(const struct row *r, int side)
{
	struct stat3 s = { 0, 0, 0, 0, r->nv[side] };
	double v[MAXR];
	int i;

	if (!s.n)
		return s;
	memcpy(v, r->v[side], sizeof(double) * (size_t)s.n);
	qsort(v, (size_t)s.n, sizeof(double), bench_cmp_d);
	s.min = v[0];
	s.max = v[s.n - 1];
	s.med = s.n % 2 ? v[s.n / 2] : (v[s.n / 2 - 1] + v[s.n / 2]) / 2;
	for (i = 0; i < s.n; i++)
		s.sum += v[i];
	return s;
}

int bench_verdict(const struct row *r, double *ratio)
{
	struct stat3 k = bench_stats(r, K), e = bench_stats(r, E);

	*ratio = k.n && e.n && k.med > 0 ? e.med / k.med : -1;
	switch (r->goal) {
	case G_NONE:
		return -1;
	case G_ZERO:
		return e.n || k.n ? (e.sum == 0 && k.sum == 0) : -1;
	case G_ABS_LE:
		return e.n ? e.med <= r->target : -1;
	case G_PLUS_LE:
		return k.n && e.n ? e.med <= k.med + r->target : -1;
	case G_RATIO_LE:
		return *ratio >= 0 ? *ratio <= r->target : -1;
	case G_RATIO_GE:
		return *ratio >= 0 ? *ratio >= r->target : -1;
	}
	return -1;
}

void bench_target_text(const struct row *r, char *buf, size_t n)
{
	switch (r->goal) {
	case G_NONE:
		snprintf(buf, n, "%s", r->ref ? r->ref : "-");
		break;
	case G_ZERO:
		snprintf(buf, n, "= 0");
		break;
	case G_ABS_LE: /* "e <= 128 B": the engine's column itself */
		snprintf(buf, n, "%c <= %g %s", r->cols->ratio[0], r->target,
		         r->unit);
		break;
	case G_PLUS_LE: /* "e <= k+5us" */
		snprintf(buf, n, "%c <= %c+%g%s", r->cols->ratio[0],
		         r->cols->ratio[2], r->target, r->unit);
		break;
	case G_RATIO_LE:
		snprintf(buf, n, "<= %gx", r->target);
		break;
	case G_RATIO_GE:
		snprintf(buf, n, ">= %gx", r->target);
		break;
	}
}
