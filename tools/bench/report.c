/* SPDX-License-Identifier: MIT */
/*
 * report.c - tfd bench's one printer (bench.h): a walk over the rows with
 * figures, each worked out once (ratio, verdict, target) and printed as a
 * line of the table or, with --json, as an object of "results".  The
 * format of both is what bench/README.md shows; tools that read the JSON
 * depend on its keys.
 */
#include "bench.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* What a row shows, in either format. */
struct shown {
	double ratio; /* engine/kernel, -1: none shown */
	int verdict;  /* 1 met, 0 missed, -1 none */
	char target[32];
};

/* What the table's footnotes need, gathered on the way. */
struct table {
	const struct cols *cols; /* of the last header printed */
	int any_na, early;
	int width; /* of the first column: the longest name shown */
};

static void num(char *buf, size_t n, double v)
{
	double a = v < 0 ? -v : v;

	if (a >= 100 || a == 0)
		snprintf(buf, n, "%.0f", v);
	else if (a >= 10)
		snprintf(buf, n, "%.1f", v);
	else if (a >= 0.1)
		snprintf(buf, n, "%.2f", v);
	else
		snprintf(buf, n, "%.3f", v);
}

/* ---- the table ---- */

static void table_head(void)
{
	printf("tfd bench%s: %d rounds, kernel and engine interleaved; "
	       "median [min-max] of the rounds\n",
	       bench.quick ? " --quick" : "", bench.rounds);
}

/* "median [min-max]", the sum for counts, or why the column is empty. */
static void cell(const struct row *r, int side, char *buf, size_t n)
{
	struct stat3 s = bench_stats(r, side);
	char a[24], b[24], c[24];

	if (!s.n) {
		snprintf(buf, n, "%s", side == E && r->n > bench.emax
		                               ? "n/a (fds)*" : "-");
		return;
	}
	if (r->goal == G_ZERO) {
		num(a, sizeof(a), s.sum);
		snprintf(buf, n, "%s%s", a, s.sum ? " !!" : "");
		return;
	}
	num(a, sizeof(a), s.med);
	num(b, sizeof(b), s.min);
	num(c, sizeof(c), s.max);
	snprintf(buf, n, "%s [%s-%s]", a, b, c);
}

static void table_row(const struct row *r, const struct shown *s,
                      struct table *t)
{
	char nb[24], kc[80], ec[80], rt[24];

	if (r->cols != t->cols) /* a header for each kind of columns */
		printf("%s%-*s %6s %-5s %-24s %-24s %6s  %-12s\n",
		       t->cols ? "\n" : "", t->width,
		       t->cols ? "" : "workload", "N",
		       "unit", r->cols->name[K], r->cols->name[E],
		       r->cols->ratio, "target");
	t->cols = r->cols;
	if (!r->nv[E] && r->n > bench.emax)
		t->any_na = 1;
	if (r->goal == G_ZERO && s->verdict == 0)
		t->early = 1;
	snprintf(nb, sizeof(nb), "%ld", r->n);
	cell(r, K, kc, sizeof(kc));
	cell(r, E, ec, sizeof(ec));
	if (s->ratio >= 0)
		num(rt, sizeof(rt), s->ratio);
	else
		snprintf(rt, sizeof(rt), "-");
	printf("%-*s %6s %-5s %-24s %-24s %6s  %-12s %s\n", t->width, r->what,
	       r->n ? nb : "-", r->unit, kc, ec, rt, s->target,
	       s->verdict < 0 ? "" : s->verdict ? "met" : "MISSED");
}

static void table_foot(const struct table *t)
{
	int i;

	if (t->any_na)
		printf("* the engine column stops at N = %ld: RLIMIT_NOFILE "
		       "allows %ld descriptors.\n", bench.emax, bench.nofile);
	if (t->early)
		printf("!! EARLY WAKE-UPS: an expiration was reported before "
		       "its deadline. That is a bug, not a slow machine.\n");
	for (i = 0; i < bench.nnotes; i++)
		printf("note: %s\n", bench.notes[i]);
}

/* ---- JSON ---- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void json_head(void)
{
	struct utsname u;
	char date[32];
	time_t t = time(NULL);

	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	uname(&u);
	printf("{\n  \"tool\": \"tfd bench\",\n  \"version\": ");
	json_str(TFD_VERSION_STRING);
	printf(",\n  \"date\": \"%s\",\n  \"quick\": %s,\n  \"rounds\": %d,\n",
	       date, bench.quick ? "true" : "false", bench.rounds);
	printf("  \"machine\": {\"cpus\": %ld, \"kernel\": ",
	       sysconf(_SC_NPROCESSORS_ONLN));
	json_str(u.release);
	printf(", \"nofile\": %ld, \"engine_max_n\": %ld, "
	       "\"kernel_max_n\": %ld},\n",
	       bench.nofile, bench.emax, bench.kmax);
	printf("  \"seconds\": %.1f,\n  \"results\": [",
	       (double)(now_ns() - bench.started) / TFD_NSEC);
}

static void json_side(const struct row *r, int side)
{
	struct stat3 s = bench_stats(r, side);
	int i;

	if (!s.n) {
		printf("null");
		return;
	}
	printf("{\"median\": %.6g, \"min\": %.6g, \"max\": %.6g, "
	       "\"sum\": %.6g, \"rounds\": [",
	       s.med, s.min, s.max, s.sum);
	for (i = 0; i < s.n; i++)
		printf("%s%.6g", i ? ", " : "", r->v[side][i]);
	printf("]}");
}

static void json_row(const struct row *r, const struct shown *s, int first)
{
	printf("%s\n    {\"what\": ", first ? "" : ",");
	json_str(r->what);
	printf(", \"n\": %ld, \"unit\": ", r->n);
	json_str(r->unit);
	printf(",\n     \"%s\": ", r->cols->name[K]);
	json_side(r, K);
	printf(",\n     \"%s\": ", r->cols->name[E]);
	json_side(r, E);
	if (s->ratio >= 0)
		printf(",\n     \"ratio\": %.4g", s->ratio);
	else
		printf(",\n     \"ratio\": null");
	printf(", \"target\": ");
	json_str(s->target);
	printf(", \"met\": %s}",
	       s->verdict < 0 ? "null" : s->verdict ? "true" : "false");
}

static void json_foot(void)
{
	int i;

	printf("\n  ],\n  \"notes\": [");
	for (i = 0; i < bench.nnotes; i++) {
		printf("%s\n    ", i ? "," : "");
		json_str(bench.notes[i]);
	}
	printf("\n  ]\n}\n");
}

/* ---- the walk ---- */

void bench_report(int json)
{
	struct table t = { NULL, 0, 0, 34 };
	int i, printed = 0;

	for (i = 0; i < bench.nrows; i++)
		if ((bench.rows[i].nv[K] || bench.rows[i].nv[E]) &&
		    (int)strlen(bench.rows[i].what) > t.width)
			t.width = (int)strlen(bench.rows[i].what);

	if (json)
		json_head();
	else
		table_head();
	for (i = 0; i < bench.nrows; i++) {
		const struct row *r = &bench.rows[i];
		struct shown s;

		if (!r->nv[K] && !r->nv[E])
			continue;
		s.verdict = bench_verdict(r, &s.ratio);
		if (r->goal == G_ZERO) /* a count: no ratio is shown */
			s.ratio = -1;
		bench_target_text(r, s.target, sizeof(s.target));
		if (json)
			json_row(r, &s, !printed++);
		else
			table_row(r, &s, &t);
	}
	if (json)
		json_foot();
	else
		table_foot(&t);
}
