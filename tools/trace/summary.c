/* SPDX-License-Identifier: MIT */
/*
 * summary.c - tfd trace's text (trace.h): per timer its clock and flags,
 * its life, how often it was armed and disarmed, its expirations (read,
 * and due by the model), its reads and the counts they returned, and the
 * lateness of its reads (p50, p90, p99, max; early: before the deadline).
 */
#include "trace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int64_t trace_pct(const int64_t *v, size_t n, int p)
{
	size_t k = (n * (size_t)p + 99) / 100;

	return v[k ? k - 1 : 0];
}

const char *trace_dur(char *buf, size_t n, int64_t ns, const char *us)
{
	const char *sign = ns < 0 ? "-" : "";
	double a = ns < 0 ? -(double)ns : (double)ns;

	if (ns == INT64_MAX) /* a time the trace showed that ns cannot hold */
		snprintf(buf, n, "292 years or more");
	else if (a >= 1e9)
		snprintf(buf, n, "%s%.9g s", sign, a / 1e9);
	else if (a >= 1e6)
		snprintf(buf, n, "%s%.6g ms", sign, a / 1e6);
	else if (a >= 1e3)
		snprintf(buf, n, "%s%.4g %s", sign, a / 1e3, us);
	else
		snprintf(buf, n, "%s%.0f ns", sign, a);
	return buf;
}

void trace_sort_late(struct timer *tm)
{
	if (tm->nlate) /* else late is NULL, which qsort may not take */
		qsort(tm->late, tm->nlate, sizeof(*tm->late), cmp_i64);
}

const char *trace_late_text(char *buf, size_t n, const int64_t *late,
                            size_t nlate, long early)
{
	snprintf(buf, n, "p50 %.1f us  p90 %.1f us  p99 %.1f us  max %.1f us  "
	         "early %ld  (of %zu reads)",
	         (double)trace_pct(late, nlate, 50) / 1e3,
	         (double)trace_pct(late, nlate, 90) / 1e3,
	         (double)trace_pct(late, nlate, 99) / 1e3,
	         (double)late[nlate - 1] / 1e3, early, nlate);
	return buf;
}

size_t trace_procs(const struct trace *tr, int **pids)
{
	const struct timer *tm;
	size_t n = 0, cap = 0, i;

	*pids = NULL;
	for (tm = tr->first; tm; tm = tm->next) {
		for (i = 0; i < n && (*pids)[i] != tm->pid; i++)
			;
		if (i < n)
			continue;
		*pids = trace_grow(*pids, &cap, n, sizeof(**pids));
		(*pids)[n++] = tm->pid;
	}
	return n;
}

void trace_totals(struct trace *tr, int pid, struct trace_totals *s)
{
	struct timer *tm;

	memset(s, 0, sizeof(*s));
	for (tm = tr->first; tm; tm = tm->next) {
		if (pid >= 0 && tm->pid != pid)
			continue;
		s->timers++;
		s->arms += tm->arms;
		s->reads += tm->reads;
		s->eagain += tm->eagain;
		s->rfail += tm->rfail;
		s->early += tm->early;
		s->expirations += tm->expirations;
		s->due += tm->due;
		s->due_unknown |= tm->due_unknown;
		if (!tm->nlate)
			continue;
		while (s->caplate < s->nlate + tm->nlate)
			s->late = trace_grow(s->late, &s->caplate, s->caplate,
			                     sizeof(*s->late));
		memcpy(s->late + s->nlate, tm->late,
		       tm->nlate * sizeof(*tm->late));
		s->nlate += tm->nlate;
	}
	if (s->nlate)
		qsort(s->late, s->nlate, sizeof(*s->late), cmp_i64);
}

/* "  lateness      p50 ...", or that there is none to tell. */
static void lateness_line(FILE *out, const int64_t *late, size_t nlate,
                          long early)
{
	char l[160];

	if (nlate)
		fprintf(out, "  lateness      %s\n",
		        trace_late_text(l, sizeof(l), late, nlate, early));
	else
		fprintf(out, "  lateness      no read with a count of a known "
		        "deadline\n");
}

/* The totals' lines: "WHO: N timers, ..." and their lateness. */
static void totals_text(FILE *out, const char *who, struct trace_totals *s)
{
	fprintf(out, "%s: %ld timer%s, %ld arm%s, %ld read%s with a count "
	        "(%ld EAGAIN, %ld failed), %" PRIu64 " expiration%s read, ",
	        who, s->timers, s->timers == 1 ? "" : "s", s->arms,
	        s->arms == 1 ? "" : "s", s->reads, s->reads == 1 ? "" : "s",
	        s->eagain, s->rfail, s->expirations,
	        s->expirations == 1 ? "" : "s");
	if (s->due_unknown)
		fprintf(out, "? due by the end\n");
	else
		fprintf(out, "%" PRIu64 " due by the end\n", s->due);
	lateness_line(out, s->late, s->nlate, s->early);
}

/* The arming a timer has in force, for its "armed" line: "?", "at ...
 * (absolute)", or the value as a duration; buf. */
static const char *last_value(const struct timer *tm, char *buf, size_t n)
{
	if (tm->last_value < 0)
		snprintf(buf, n, "?");
	else if (tm->absolute && tm->last_value == INT64_MAX)
		snprintf(buf, n, "at 292 years or more (absolute)");
	else if (tm->absolute)
		snprintf(buf, n, "at %lld.%09lld s (absolute)",
		         tm->last_value / TFD_NSEC, tm->last_value % TFD_NSEC);
	else
		trace_dur(buf, n, tm->last_value, "us");
	return buf;
}

/* A timer's lines: "timer N  pid P  fd F ...", then its life, arms,
 * expirations, reads, lateness and the rest. */
static void timer_text(const struct trace *tr, struct timer *tm, FILE *out)
{
	char a[64], b[32];
	int i;

	trace_sort_late(tm);
	fprintf(out, "\ntimer %d  pid %d  fd %d  %s  %s%s\n", tm->id, tm->pid,
	        tm->fd, tm->clock, tm->flags,
	        tm->inherited ? "  (not created in the trace: inherited, or "
	                        "the trace began later)"
	                      : "");
	fprintf(out, "  life          %.6f s to %.6f s%s\n",
	        (double)(tm->created - tr->t0) / TFD_NSEC,
	        (double)((tm->closed >= 0 ? tm->closed : tr->t1) - tr->t0) /
	                TFD_NSEC,
	        tm->closed >= 0 ? " (closed)" : " (still open)");
	fprintf(out, "  armed         %ld (relative %ld, absolute %ld), "
	        "disarmed %ld, failed %ld", tm->arms, tm->arms - tm->arms_abs,
	        tm->arms_abs, tm->disarms, tm->sfail);
	if (tm->arms)
		fprintf(out, "; last %s, interval %s",
		        last_value(tm, a, sizeof(a)),
		        tm->last_interval < 0 ? "?"
		        : tm->last_interval
		                ? trace_dur(b, sizeof(b), tm->last_interval,
		                            "us")
		                : "0 (one-shot)");
	fprintf(out, "\n  expirations   %" PRIu64 " read, ", tm->expirations);
	if (tm->due_unknown) /* an absolute arming without [next] */
		fprintf(out, "? due by the end (a deadline is not in the "
		        "trace)\n");
	else
		fprintf(out, "%" PRIu64 " due by the end\n", tm->due);
	fprintf(out, "  reads         %ld with a count, %ld EAGAIN, "
	        "%ld failed (%ld ECANCELED)", tm->reads, tm->eagain,
	        tm->rfail, tm->cancels);
	for (i = 0; i < tm->nhist; i++)
		fprintf(out, "%s%" PRIu64 " x%ld", i ? ", " : "; counts ",
		        tm->hist[i].v, tm->hist[i].n);
	if (tm->hist_other)
		fprintf(out, ", other x%ld", tm->hist_other);
	fprintf(out, "\n");
	lateness_line(out, tm->late, tm->nlate, tm->early);
	fprintf(out, "  other         %ld queries, %ld duplicates\n",
	        tm->queries, tm->dups);
}

void trace_summary(struct trace *tr, FILE *out)
{
	struct trace_totals s;
	int *pids;
	size_t np, j;
	char who[160];
	struct timer *tm;

	fprintf(out, "trace %s: %ld lines, %ld process%s, %d timer%s, "
	        "%.6f s from the first line to the last\n",
	        tr->file, tr->lines, tr->nprocs, tr->nprocs == 1 ? "" : "es",
	        tr->ntimers, tr->ntimers == 1 ? "" : "s",
	        (double)(tr->t1 - tr->t0) / TFD_NSEC);
	if (tr->nadv)
		fprintf(out, "virtual time: %zu moves\n", tr->nadv);
	if (!tr->ntimers)
		fprintf(out, "no timer in the trace\n");
	/* the whole first, then each process when there are several */
	np = trace_procs(tr, &pids);
	if (tr->ntimers) {
		trace_totals(tr, -1, &s);
		totals_text(out, "all", &s);
		free(s.late);
	}
	for (j = 0; np > 1 && j < np; j++) {
		const char *prog = trace_program_name(tr, pids[j]);

		snprintf(who, sizeof(who), "process %d%s%s", pids[j],
		         prog ? " " : "", prog ? prog : "");
		trace_totals(tr, pids[j], &s);
		totals_text(out, who, &s);
		free(s.late);
	}
	free(pids);
	for (tm = tr->first; tm; tm = tm->next)
		timer_text(tr, tm, out);
}
