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

/* What the table's footnotes and verdict need, gathered on the way. */
struct table {
	const struct cols *cols; /* of the last header printed */
	int any_na, early;
	int met, targets; /* rows that met their target; rows with one */
};

/* The table fits WIDTH columns: a row is "WHAT N UNIT KERNEL ENGINE RANGE
 * RATIO  TARGET VERDICT" in these widths; a longer name would push the
 * columns (tests/test_tool.c checks that none does). */
#define WIDTH 100
#define ROW_FMT "%-40.40s %5s %-5s %7s %7s %5s %5s  %-11s %s"

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

/* text after prefix, its words wrapped at WIDTH columns, the lines after
 * the first indented as wide as prefix. */
static void wrapped(const char *prefix, const char *text)
{
	int indent = (int)strlen(prefix), col = indent;
	const char *p = text;

	fputs(prefix, stdout);
	while (*p) {
		int len = (int)strcspn(p, " ");

		if (col > indent && col + 1 + len > WIDTH) {
			printf("\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			putchar(' ');
			col++;
		}
		printf("%.*s", len, p);
		col += len;
		p += len;
		while (*p == ' ')
			p++;
	}
	putchar('\n');
}

/* ---- the table ---- */

/* A line of the table, ROW_FMT's columns, without the spaces that pad
 * its last. */
static void table_line(const char *what, const char *n, const char *unit,
                       const char *k, const char *e, const char *rg,
                       const char *rt, const char *target,
                       const char *verdict)
{
	char line[2 * WIDTH];
	size_t len;

	snprintf(line, sizeof(line), ROW_FMT, what, n, unit, k, e, rg, rt,
	         target, verdict);
	len = strlen(line);
	while (len && line[len - 1] == ' ')
		line[--len] = 0;
	puts(line);
}

static void table_head(void)
{
	char line[160];

	snprintf(line, sizeof(line), "%d round%s, kernel and engine "
	         "interleaved: the median of the rounds; range: the widest "
	         "(max - min) / median of the two columns; e/k: engine / "
	         "kernel.", bench.rounds, bench.rounds == 1 ? "" : "s");
	wrapped(bench.quick ? "tfd bench --quick: " : "tfd bench: ", line);
}

/* The median, the sum for counts, or why the column is empty. */
static void cell(const struct row *r, int side, char *buf, size_t n)
{
	struct stat3 s = bench_stats(r, side);
	char a[24];

	if (!s.n) {
		snprintf(buf, n, "%s", side == E && r->n > bench.emax
		                               ? "n/a*" : "-");
		return;
	}
	num(a, sizeof(a), r->goal == G_ZERO ? s.sum : s.med);
	snprintf(buf, n, "%s%s", a, r->goal == G_ZERO && s.sum ? " !!" : "");
}

/* The widest spread of the two columns, (max - min) / median, in %
 * (999 at most); "-" for counts, a single round or a median of 0. */
static void range(const struct row *r, char *buf, size_t n)
{
	double worst = -1;
	int side;

	for (side = K; side <= E && r->goal != G_ZERO; side++) {
		struct stat3 s = bench_stats(r, side);
		double d;

		if (s.n < 2 || s.med <= 0)
			continue;
		d = (s.max - s.min) / s.med * 100;
		if (d > worst)
			worst = d;
	}
	if (worst < 0)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.0f%%", worst < 999 ? worst : 999);
}

static void table_row(const struct row *r, const struct shown *s,
                      struct table *t)
{
	char nb[24], kc[32], ec[32], rg[16], rt[24];

	if (r->cols != t->cols) { /* a header for each kind of columns */
		if (t->cols)
			putchar('\n');
		table_line(t->cols ? "" : "workload", "N", "unit",
		           r->cols->name[K], r->cols->name[E], "range",
		           r->cols->ratio, "target", "");
	}
	t->cols = r->cols;
	if (!r->nv[E] && r->n > bench.emax)
		t->any_na = 1;
	if (r->goal == G_ZERO && s->verdict == 0)
		t->early = 1;
	if (s->verdict >= 0) {
		t->targets++;
		t->met += s->verdict;
	}
	if (r->n >= 1000000 && r->n % 1000000 == 0) /* (fits 5 columns) */
		snprintf(nb, sizeof(nb), "%ldM", r->n / 1000000);
	else
		snprintf(nb, sizeof(nb), "%ld", r->n);
	cell(r, K, kc, sizeof(kc));
	cell(r, E, ec, sizeof(ec));
	range(r, rg, sizeof(rg));
	/* a ratio beside a target of a ratio only */
	if (s->ratio >= 0 && (r->goal == G_RATIO_LE || r->goal == G_RATIO_GE ||
	                      r->goal == G_NONE))
		num(rt, sizeof(rt), s->ratio);
	else
		snprintf(rt, sizeof(rt), "-");
	table_line(r->what, nb, r->unit, kc, ec, rg, rt,
	           s->target,
	           s->verdict < 0 ? "" : s->verdict ? "met" : "MISSED");
}

static void table_foot(const struct table *t)
{
	char line[160];
	int i;

	if (t->any_na) {
		snprintf(line, sizeof(line), "the engine column stops at N = "
		         "%ld: RLIMIT_NOFILE allows %ld descriptors.",
		         bench.emax, bench.nofile);
		wrapped("* ", line);
	}
	if (t->early)
		wrapped("!! ", "EARLY WAKE-UPS: an expiration was reported "
		        "before its deadline. That is a bug, not a slow "
		        "machine.");
	for (i = 0; i < bench.nnotes; i++)
		wrapped("note: ", bench.notes[i]);
	printf("tfd bench: %d of %d targets met\n", t->met, t->targets);
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

static void json_foot(const struct table *t)
{
	int i;

	printf("\n  ],\n  \"targets\": %d,\n  \"targets_met\": %d,\n"
	       "  \"notes\": [", t->targets, t->met);
	for (i = 0; i < bench.nnotes; i++) {
		printf("%s\n    ", i ? "," : "");
		json_str(bench.notes[i]);
	}
	printf("\n  ]\n}\n");
}

/* ---- the walk ---- */

void bench_report(int json)
{
	struct table t = { NULL, 0, 0, 0, 0 };
	int i, printed = 0;

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
		if (json) {
			json_row(r, &s, !printed++);
			t.targets += s.verdict >= 0;
			t.met += s.verdict > 0;
		} else {
			table_row(r, &s, &t);
		}
	}
	if (json)
		json_foot(&t);
	else
		table_foot(&t);
}
