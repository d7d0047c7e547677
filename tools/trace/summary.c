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

void trace_summary(struct trace *tr, FILE *out)
{
	struct timer *tm;
	char a[64], b[32];
	int i;

	fprintf(out, "trace %s: %ld lines, %ld process%s, %d timer%s, "
	        "%.6f s from the first line to the last\n",
	        tr->file, tr->lines, tr->nprocs, tr->nprocs == 1 ? "" : "es",
	        tr->ntimers, tr->ntimers == 1 ? "" : "s",
	        (double)(tr->t1 - tr->t0) / TFD_NSEC);
	if (tr->nadv)
		fprintf(out, "virtual time: %zu moves\n", tr->nadv);
	if (!tr->ntimers)
		fprintf(out, "no timer in the trace\n");
	for (tm = tr->first; tm; tm = tm->next) {
		trace_sort_late(tm);
		fprintf(out, "\ntimer %d  pid %d  fd %d  %s  %s%s\n", tm->id,
		        tm->pid, tm->fd, tm->clock, tm->flags,
		        tm->inherited ? "  (not created in the trace: "
		                        "inherited, or the trace began later)"
		                      : "");
		fprintf(out, "  life          %.6f s to %.6f s%s\n",
		        (double)(tm->created - tr->t0) / TFD_NSEC,
		        (double)((tm->closed >= 0 ? tm->closed : tr->t1) - tr->t0) /
		                TFD_NSEC,
		        tm->closed >= 0 ? " (closed)" : " (still open)");
		fprintf(out, "  armed         %ld (relative %ld, absolute %ld), "
		        "disarmed %ld, failed %ld",
		        tm->arms, tm->arms - tm->arms_abs, tm->arms_abs,
		        tm->disarms, tm->sfail);
		if (tm->last_value < 0)
			snprintf(a, sizeof(a), "?");
		else if (tm->absolute && tm->last_value == INT64_MAX)
			snprintf(a, sizeof(a), "at 292 years or more (absolute)");
		else if (tm->absolute)
			snprintf(a, sizeof(a), "at %lld.%09lld s (absolute)",
			         tm->last_value / TFD_NSEC,
			         tm->last_value % TFD_NSEC);
		else
			trace_dur(a, sizeof(a), tm->last_value, "us");
		if (tm->arms)
			fprintf(out, "; last %s, interval %s", a,
			        tm->last_interval < 0 ? "?"
			        : tm->last_interval
			                ? trace_dur(b, sizeof(b), tm->last_interval,
			                            "us")
			                : "0 (one-shot)");
		fprintf(out, "\n  expirations   %" PRIu64 " read, ",
		        tm->expirations);
		if (tm->due_unknown) /* an absolute arming without [next] */
			fprintf(out, "? due by the end (a deadline is not in "
			        "the trace)\n");
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
		if (tm->nlate)
			fprintf(out, "  lateness      p50 %.1f us  p90 %.1f us  "
			        "p99 %.1f us  max %.1f us  early %ld  "
			        "(of %zu reads)\n",
			        (double)trace_pct(tm->late, tm->nlate, 50) /
			                1e3,
			        (double)trace_pct(tm->late, tm->nlate, 90) /
			                1e3,
			        (double)trace_pct(tm->late, tm->nlate, 99) /
			                1e3,
			        (double)tm->late[tm->nlate - 1] / 1e3, tm->early,
			        tm->nlate);
		else
			fprintf(out, "  lateness      no read with a count of "
			        "a known deadline\n");
		fprintf(out, "  other         %ld queries, %ld duplicates\n",
		        tm->queries, tm->dups);
	}
}
