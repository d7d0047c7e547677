/* SPDX-License-Identifier: MIT */
/*
 * page.c - tfd trace's HTML page (trace.h): what the trace adds up to
 * first (the same numbers as the text's "all" lines), then each block of
 * the picture (svg.c) in an SVG that fits the window, the first few open
 * and the others folded (<details>), then a table of the timers (the
 * first MAXROWS) and, for a small trace, the whole text.  The page's size
 * follows the number of blocks and timers, not of events.
 */
#define _GNU_SOURCE
#include "trace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define OPEN 4        /* blocks shown open */
#define MAXROWS 4096  /* timers in the table */
#define TEXT 64       /* timers, at most, for the whole text */

static void row(FILE *out, const char *key, const char *what, const char *val)
{
	fprintf(out, "<tr><th>%s</th><td data-k=\"%s\">", what, key);
	trace_esc(out, val);
	fprintf(out, "</td></tr>\n");
}

static void row_n(FILE *out, const char *key, const char *what, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	row(out, key, what, buf);
}

static void row_us(FILE *out, const char *key, const char *what, int64_t ns)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.1f us", (double)ns / 1e3);
	row(out, key, what, buf);
}

/* The totals, in the words of the text's "all" lines. */
static void totals(struct trace *tr, FILE *out)
{
	struct trace_totals s;
	char buf[64];

	trace_totals(tr, -1, &s);
	fprintf(out, "<table class=\"sum\">\n");
	row_n(out, "lines", "lines", tr->lines);
	row_n(out, "processes", "processes", tr->nprocs);
	row_n(out, "timers", "timers", s.timers);
	snprintf(buf, sizeof(buf), "%.6f s",
	         (double)(tr->t1 - tr->t0) / TFD_NSEC);
	row(out, "span", "from the first line to the last", buf);
	if (tr->nadv)
		row_n(out, "moves", "moves of virtual time", (long long)tr->nadv);
	row_n(out, "arms", "arms", s.arms);
	row_n(out, "reads", "reads with a count", s.reads);
	row_n(out, "eagain", "reads: EAGAIN", s.eagain);
	row_n(out, "failed", "reads failed", s.rfail);
	row_n(out, "expirations", "expirations read", (long long)s.expirations);
	if (s.due_unknown)
		row(out, "due", "due by the end", "?");
	else
		row_n(out, "due", "due by the end", (long long)s.due);
	if (s.nlate) {
		row_us(out, "p50", "lateness p50", trace_pct(s.late, s.nlate, 50));
		row_us(out, "p90", "lateness p90", trace_pct(s.late, s.nlate, 90));
		row_us(out, "p99", "lateness p99", trace_pct(s.late, s.nlate, 99));
		row_us(out, "max", "lateness max", s.late[s.nlate - 1]);
		row_n(out, "early", "early (before the deadline)", s.early);
		row_n(out, "of", "reads of a known deadline", (long long)s.nlate);
	}
	fprintf(out, "</table>\n");
	free(s.late);
}

/* A block's heading: its name and what its timers add up to. */
static void heading(struct trace *tr, FILE *out, const struct block *b)
{
	struct trace_totals s;
	char l[160];

	trace_esc(out, b->name);
	if (b->vclock) {
		fprintf(out, ": %zu moves", tr->nadv);
		return;
	}
	if (b->pid < 0) { /* the others: add the timers up here */
		size_t i;

		memset(&s, 0, sizeof(s));
		for (i = 0; i < b->n; i++) {
			s.reads += b->tm[i]->reads;
			s.early += b->tm[i]->early;
		}
		fprintf(out, ": %zu timers, %ld reads, %ld early", b->n, s.reads,
		        s.early);
		return;
	}
	trace_totals(tr, b->pid, &s);
	fprintf(out, ": %ld timer%s, %ld reads", s.timers,
	        s.timers == 1 ? "" : "s", s.reads);
	if (s.nlate)
		fprintf(out, ", lateness %s", trace_late_text(l, sizeof(l),
		        s.late, s.nlate, s.early));
	free(s.late);
}

static void timers_table(struct trace *tr, FILE *out)
{
	struct timer *tm;
	int n = 0;
	char a[32], b[32], c[32], prog[48];

	fprintf(out, "<details%s><summary>every timer (%d)</summary>\n"
	        "<table class=\"timers\">\n<tr><th>timer</th><th>process</th>"
	        "<th>fd</th><th>clock</th><th>arms</th><th>reads</th>"
	        "<th>expirations</th><th>late p50</th><th>p99</th>"
	        "<th>max</th><th>early</th></tr>\n",
	        tr->ntimers <= TEXT ? " open" : "", tr->ntimers);
	for (tm = tr->first; tm && n < MAXROWS; tm = tm->next, n++) {
		const char *p = trace_program_name(tr, tm->pid);

		trace_sort_late(tm);
		snprintf(prog, sizeof(prog), "%.30s%s%d", p ? p : "",
		         p ? " " : "pid ", tm->pid);
		fprintf(out, "<tr><td>%d</td><td>", tm->id);
		trace_esc(out, prog);
		fprintf(out, "</td><td>%d</td><td>", tm->fd);
		trace_esc(out, tm->clock);
		fprintf(out, "</td><td>%ld</td><td>%ld</td><td>%" PRIu64
		        "</td>", tm->arms, tm->reads, tm->expirations);
		if (tm->nlate)
			fprintf(out, "<td>%s</td><td>%s</td><td>%s</td>",
			        trace_dur(a, sizeof(a),
			                  trace_pct(tm->late, tm->nlate, 50),
			                  "\xc2\xb5s"),
			        trace_dur(b, sizeof(b),
			                  trace_pct(tm->late, tm->nlate, 99),
			                  "\xc2\xb5s"),
			        trace_dur(c, sizeof(c), tm->late[tm->nlate - 1],
			                  "\xc2\xb5s"));
		else
			fprintf(out, "<td></td><td></td><td></td>");
		fprintf(out, "<td>%ld</td></tr>\n", tm->early);
	}
	fprintf(out, "</table>\n");
	if (tm)
		fprintf(out, "<p>%d more: tfd trace's text has them all.</p>\n",
		        tr->ntimers - n);
	fprintf(out, "</details>\n");
}

void trace_page(struct trace *tr, FILE *out)
{
	struct block *b;
	size_t n = trace_blocks(tr, &b), i;

	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	        "<meta charset=\"utf-8\">"
	        "<meta name=\"viewport\" content=\"width=device-width\">"
	        "<title>tfd trace: ");
	trace_esc(out, tr->file);
	fprintf(out, "</title>\n<style>body{font-family:sans-serif;"
	        "margin:16px;color:#222}h1{font-size:18px;margin:0 0 8px}"
	        "p{margin:2px 0 10px;font-size:13px;color:#555}"
	        "pre{font-size:12px;background:#f6f6f6;padding:8px}"
	        "table{border-collapse:collapse;font-size:13px;margin:0 0 10px}"
	        "th,td{padding:1px 8px;text-align:left}"
	        ".sum th{font-weight:normal;color:#555}"
	        ".timers td{text-align:right}.timers tr:nth-child(odd){"
	        "background:#f6f6f6}summary{font-size:14px;font-weight:bold;"
	        "margin:6px 0;cursor:pointer}"
	        "svg{display:block;width:100%%;height:auto}%s</style>"
	        "</head><body>\n<h1>tfd trace: ", trace_svg_css);
	trace_esc(out, tr->file);
	fprintf(out, "</h1>\n");
	totals(tr, out);
	fprintf(out, "<p>Time since the first line of the trace (the "
	        "program's %sCLOCK_MONOTONIC). A block per process, a lane "
	        "per timer; a process's timers beyond the first %d are "
	        "folded into one lane. \xe2\x96\xbc arm (blue bar: armed), "
	        "| due: an expiration's deadline, \xe2\x97\x8f read with its "
	        "count, \xe2\x97\x8b read that found nothing, red line: "
	        "lateness of a read, \xc3\x97 disarm. Hover a mark for its "
	        "exact values.</p>\n", tr->nadv ? "virtual " : "", TRACE_MAXLANES);
	for (i = 0; i < n; i++) {
		fprintf(out, "<details%s><summary>", i < OPEN ? " open" : "");
		heading(tr, out, &b[i]);
		fprintf(out, "</summary>\n<svg xmlns=\"http://www.w3.org/2000/svg\""
		        " viewBox=\"0 0 %d %.0f\" width=\"100%%\" "
		        "font-family=\"sans-serif\">\n", trace_svg_width,
		        trace_block_height(&b[i]));
		trace_block_draw(tr, out, &b[i]);
		fprintf(out, "</svg>\n</details>\n");
	}
	trace_blocks_free(b, n);
	if (!tr->ntimers)
		fprintf(out, "<p>No timer in the trace.</p>\n");
	else
		timers_table(tr, out);
	if (tr->ntimers <= TEXT) {
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);

		if (m) {
			trace_summary(tr, m);
			fclose(m);
			fprintf(out, "<details><summary>the text of tfd trace"
			        "</summary>\n<pre>");
			trace_esc(out, text);
			fprintf(out, "</pre>\n</details>\n");
			free(text);
		}
	}
	fprintf(out, "</body></html>\n");
}
