/* SPDX-License-Identifier: MIT */
/*
 * svg.c - tfd trace's picture (trace.h): SVG, alone or in an HTML page
 * with the text under it.  A time axis; a lane per timer with its life,
 * arms (a bar while armed), deadlines, reads with their counts, disarms
 * and close; a lane for the moves of virtual time; the lateness of each
 * read as a line from its deadline.  Marks too close to draw apart are a
 * band that says how many.
 */
#define _GNU_SOURCE
#include "trace.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define W 1360.0   /* width */
#define X0 330.0   /* the plot starts; labels to the left */
#define X1 1330.0
#define TOP 64.0   /* the first lane */
#define LANE 76.0
#define MAXMARKS 4000 /* per lane and kind; beyond, a band */

struct pic {
	FILE *out;
	int64_t t0, span;
	double y0; /* the top of the lane drawn */
	/* per text row of the lane, the labels placed: [from, to) in x,
	 * to skip one that would overlap (a row holds few: W / 20) */
	double used[3][2 * 128];
	int nused[3];
};

/* The lane's text rows: above the marks (arms; deadlines), below (reads,
 * close); the marks are on the line at MID. */
static const double row_y[3] = { 14, 27, 64 };
#define MID 44.0

static double X(const struct pic *p, int64_t t)
{
	return X0 + (X1 - X0) * (double)(t - p->t0) / (double)p->span;
}

/* n marks from t0 to t1 cannot be drawn apart: too many, or closer than
 * 3 px on average; they are drawn as a band. */
static int too_dense(const struct pic *p, int64_t t0, int64_t t1, size_t n)
{
	return n > MAXMARKS ||
	       (n > 1 && (X(p, t1) - X(p, t0)) / (double)(n - 1) < 3.0);
}

/* The reads of tm with a count: how many, the first and last times. */
static size_t read_span(const struct timer *tm, int64_t *r0, int64_t *r1)
{
	size_t i, n = 0;

	for (i = 0; i < tm->nev; i++)
		if (tm->ev[i].kind == EV_READ) {
			if (n++ == 0)
				*r0 = tm->ev[i].t;
			*r1 = tm->ev[i].t;
		}
	return n;
}

static void esc(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if (*s == '&')
			fputs("&amp;", out);
		else if (*s == '"')
			fputs("&quot;", out);
		else
			fputc(*s, out);
	}
}

/* A label at x on text row r of the lane, if it does not run into the
 * one before it; roughly 6.2 px a character at 11 px. */
static void label(struct pic *p, double x, int r, const char *cls,
                  const char *text)
{
	double w = 6.2 * (double)strlen(text);

	int i;

	if (x + w > W - 4) /* at the right end: to the left of the mark */
		x = x - w - 8;
	if (p->nused[r] == 128)
		return;
	for (i = 0; i < p->nused[r]; i++)
		if (x < p->used[r][2 * i + 1] + 4 && x + w + 4 > p->used[r][2 * i])
			return;
	p->used[r][2 * i] = x;
	p->used[r][2 * i + 1] = x + w;
	p->nused[r]++;
	fprintf(p->out, "<text x=\"%.1f\" y=\"%.1f\" class=\"%s\">", x,
	        p->y0 + row_y[r], cls);
	esc(p->out, text);
	fprintf(p->out, "</text>\n");
}

/* Tick spacing: 1, 2 or 5 times a power of ten ns, for about 10 ticks. */
static int64_t tick_step(int64_t span)
{
	int64_t s = 1;

	for (;;) {
		if (span / s <= 12)
			return s;
		if (span / (2 * s) <= 12)
			return 2 * s;
		if (span / (5 * s) <= 12)
			return 5 * s;
		s *= 10;
	}
}

static void tick_text(char *buf, size_t n, int64_t v, int64_t step)
{
	if (step >= TFD_NSEC)
		snprintf(buf, n, "%g s", (double)v / 1e9);
	else if (step >= 1000000)
		snprintf(buf, n, "%g ms", (double)v / 1e6);
	else if (step >= 1000)
		snprintf(buf, n, "%g \xc2\xb5s", (double)v / 1e3);
	else
		snprintf(buf, n, "%" PRId64 " ns", v);
}

static void axis(struct pic *p, double y, double y2, int below)
{
	int64_t step = tick_step(p->span), v;
	char buf[32];

	fprintf(p->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
	        "class=\"axis\"/>\n", X0, y, X1, y);
	for (v = 0; v <= p->span; v += step) {
		double x = X(p, p->t0 + v);

		fprintf(p->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		        "y2=\"%.1f\" class=\"grid\"/>\n", x, y, x, y2);
		tick_text(buf, sizeof(buf), v, step);
		fprintf(p->out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" "
		        "text-anchor=\"middle\">%s</text>\n", x,
		        below ? y + 16 : y - 8, buf);
	}
}

static void mark_title(FILE *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void mark_title(FILE *out, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fputs("<title>", out);
	esc(out, buf);
	fputs("</title>", out);
}

/* The deadlines of the arming that starts at event i, up to end. */
static void deadlines(struct pic *p, const struct timer *tm, const struct ev *e,
                      int64_t end, double y, int *first)
{
	int64_t d = e->c, iv = e->b > 0 ? e->b : 0;
	long n = 0, total;
	char buf[64], w[32];

	if (d < 0 || d > end)
		return;
	total = iv ? (long)((end - d) / iv) + 1 : 1;
	if (too_dense(p, d, d + (total - 1) * iv, (size_t)total)) {
		double x = X(p, d), x2 = X(p, end);

		fprintf(p->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		        "height=\"12\" class=\"dueband\">", x, y - 20, x2 - x);
		mark_title(p->out, "%ld expirations due, every %s", total,
		           trace_dur(w, sizeof(w), iv, "\xc2\xb5s"));
		fprintf(p->out, "</rect>\n");
		snprintf(buf, sizeof(buf), "due every %s (%ld)",
		         trace_dur(w, sizeof(w), iv, "\xc2\xb5s"), total);
		label(p, x + 2, 1, "duelbl", buf);
		return;
	}
	for (; d <= end && n < total; n++, d += iv) {
		double x = X(p, d);

		fprintf(p->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		        "y2=\"%.1f\" class=\"due\">", x, y - 20, x, y + 8);
		mark_title(p->out, "timer %d: expiration due at %.6f s", tm->id,
		           (double)(d - p->t0) / 1e9);
		fprintf(p->out, "</line>\n");
		if (*first) {
			label(p, x + 3, 1, "duelbl", "due");
			*first = 0;
		}
		if (!iv)
			break;
	}
}

static void lane(struct pic *p, const struct timer *tm, int idx, int64_t t1)
{
	double y0 = TOP + LANE * idx, y = y0 + MID;
	int64_t end = tm->closed >= 0 ? tm->closed : t1;
	int first_due = 1, first_read = 1, first_eagain = 1, first_arm = 1;
	int64_t r0 = 0, r1 = 0;
	size_t i, nreads = read_span(tm, &r0, &r1);
	char buf[128], v[64], iv[32];
	int dense = too_dense(p, r0, r1, nreads);

	memset(p->nused, 0, sizeof(p->nused));
	p->y0 = y0;
	fprintf(p->out, "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" "
	        "class=\"%s\"/>\n", y0, W, LANE, idx % 2 ? "odd" : "even");
	/* the lane's name, to the left */
	fprintf(p->out, "<text x=\"10\" y=\"%.1f\" class=\"name\">timer %d "
	        "\xc2\xb7 fd %d \xc2\xb7 pid %d</text>\n", y0 + 22, tm->id,
	        tm->fd, tm->pid);
	fprintf(p->out, "<text x=\"10\" y=\"%.1f\" class=\"what\">", y0 + 40);
	if (tm->inherited)
		fprintf(p->out, "created before the trace (inherited)");
	else
		esc(p->out, tm->clock);
	if (tm->arms)
		fprintf(p->out, ", %s", tm->last_interval > 0 ? "periodic" :
		        "one-shot");
	if (tm->last_interval > 0)
		fprintf(p->out, " %s", trace_dur(iv, sizeof(iv),
		                                 tm->last_interval,
		                                 "\xc2\xb5s"));
	fprintf(p->out, "</text>\n<text x=\"10\" y=\"%.1f\" class=\"what\">",
	        y0 + 56);
	fprintf(p->out, "%ld arm%s, %ld read%s, %" PRIu64 " expiration%s",
	        tm->arms, tm->arms == 1 ? "" : "s", tm->reads,
	        tm->reads == 1 ? "" : "s", tm->expirations,
	        tm->expirations == 1 ? "" : "s");
	if (tm->nlate)
		fprintf(p->out, ", late p50 %s",
		        trace_dur(v, sizeof(v),
		                  trace_pct(tm->late, tm->nlate, 50),
		                  "\xc2\xb5s"));
	fprintf(p->out, "</text>\n");

	/* its life: a thin line from creation to close */
	fprintf(p->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
	        "class=\"life\"/>\n", X(p, tm->created), y, X(p, end), y);

	for (i = 0; i < tm->nev; i++) {
		const struct ev *e = &tm->ev[i];
		double x = X(p, e->t);
		int64_t until = end;
		size_t k;

		for (k = i + 1; e->kind == EV_ARM && k < tm->nev; k++)
			if (tm->ev[k].kind == EV_ARM ||
			    tm->ev[k].kind == EV_DISARM ||
			    tm->ev[k].kind == EV_CLOSE) {
				until = tm->ev[k].t;
				break;
			}
		switch (e->kind) {
		case EV_ARM:
			fprintf(p->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			        "height=\"6\" class=\"armed\"/>\n", x, y - 3,
			        X(p, until) - x > 1 ? X(p, until) - x : 1);
			fprintf(p->out, "<path d=\"M%.1f %.1f l5 -9 h-10 z\" "
			        "class=\"arm\">", x, y - 4);
			trace_dur(v, sizeof(v), e->a, "\xc2\xb5s");
			trace_dur(iv, sizeof(iv), e->b, "\xc2\xb5s");
			mark_title(p->out, "timer %d armed at %.6f s: value %s%s, "
			           "interval %s", tm->id,
			           (double)(e->t - p->t0) / 1e9,
			           e->a < 0 ? "?" : v,
			           e->flag == 1 ? " (absolute)" : "",
			           e->b < 0 ? "?" : e->b ? iv : "0");
			fprintf(p->out, "</path>\n");
			/* an absolute value says when it is due, from now */
			if (e->flag == 1 && e->c >= 0)
				snprintf(v, sizeof(v), "(absolute) due in %s",
				         trace_dur(buf, sizeof(buf),
				                   e->c - e->t, "\xc2\xb5s"));
			else if (e->a < 0 || e->b < 0)
				snprintf(v, sizeof(v), "?");
			if (e->b > 0)
				snprintf(buf, sizeof(buf), "%s %s, every %s",
				         first_arm ? "armed" : "re-armed", v, iv);
			else
				snprintf(buf, sizeof(buf), "%s %s, once",
				         first_arm ? "armed" : "re-armed", v);
			label(p, x - 4, 0, "armlbl", buf);
			first_arm = 0;
			deadlines(p, tm, e, until, y, &first_due);
			break;
		case EV_DISARM:
			fprintf(p->out, "<path d=\"M%.1f %.1f l8 8 m0 -8 l-8 8\" "
			        "class=\"disarm\">", x - 4, y - 4);
			mark_title(p->out, "timer %d disarmed at %.6f s", tm->id,
			           (double)(e->t - p->t0) / 1e9);
			fprintf(p->out, "</path>\n");
			label(p, x + 6, 0, "disarmlbl", "disarmed");
			break;
		case EV_READ:
			if (dense) /* drawn as a band, below */
				break;
			fprintf(p->out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
			        "class=\"read\">", x, y);
			mark_title(p->out, "timer %d read at %.6f s: count %" PRId64,
			           tm->id, (double)(e->t - p->t0) / 1e9, e->a);
			fprintf(p->out, "</circle>\n");
			snprintf(buf, sizeof(buf), first_read ? "read %" PRId64 :
			         "%" PRId64, e->a);
			if (first_read || e->a != 1)
				label(p, x - 3, 2, "readlbl", buf);
			first_read = 0;
			break;
		case EV_EAGAIN:
			fprintf(p->out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
			        "class=\"eagain\">", x, y);
			mark_title(p->out, "timer %d read at %.6f s: EAGAIN "
			           "(nothing to read)", tm->id,
			           (double)(e->t - p->t0) / 1e9);
			fprintf(p->out, "</circle>\n");
			if (first_eagain)
				label(p, x - 3, 2, "eagainlbl", "read: EAGAIN");
			first_eagain = 0;
			break;
		case EV_RFAIL:
			fprintf(p->out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
			        "class=\"rfail\">", x, y);
			mark_title(p->out, "timer %d read at %.6f s failed%s",
			           tm->id, (double)(e->t - p->t0) / 1e9,
			           e->a ? ": ECANCELED" : "");
			fprintf(p->out, "</circle>\n");
			label(p, x - 3, 2, "rfaillbl",
			      e->a ? "ECANCELED" : "read failed");
			break;
		case EV_CLOSE:
			fprintf(p->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			        "y2=\"%.1f\" class=\"close\">", x, y - 10, x,
			        y + 10);
			mark_title(p->out, "timer %d closed at %.6f s", tm->id,
			           (double)(e->t - p->t0) / 1e9);
			fprintf(p->out, "</line>\n");
			label(p, x + 4, 2, "lifelbl", "closed");
			break;
		}
	}
	if (dense) {
		fprintf(p->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		        "height=\"8\" class=\"read\">", X(p, r0), y - 4,
		        X(p, r1) - X(p, r0) + 1);
		mark_title(p->out, "%zu reads from %.6f s to %.6f s", nreads,
		           (double)(r0 - p->t0) / 1e9, (double)(r1 - p->t0) / 1e9);
		fprintf(p->out, "</rect>\n");
		snprintf(buf, sizeof(buf), "%zu reads, too close to draw apart",
		         nreads);
		label(p, X(p, r0), 2, "readlbl", buf);
	}
	/* last: where the marks leave room for it */
	if (!tm->inherited)
		label(p, X(p, tm->created) + 2, 2, "lifelbl", "created");
}

void trace_picture(struct trace *tr, FILE *out, int html)
{
	struct pic p = { .out = out, .t0 = tr->t0, .span = tr->t1 - tr->t0 };
	struct timer *tm;
	double h, y;
	size_t i;
	int n = 0, k;
	char buf[64];

	if (p.span <= 0)
		p.span = 1000000; /* 1 ms, for a trace of one instant */
	for (tm = tr->first; tm; tm = tm->next)
		n++;
	k = tr->nadv ? 1 : 0;
	h = TOP + LANE * (n + k) + 56;
	if (html) {
		fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
		        "<meta charset=\"utf-8\"><title>tfd trace: ");
		esc(out, tr->file);
		fprintf(out, "</title>\n<style>body{font-family:sans-serif;"
		        "margin:16px;color:#222}h1{font-size:18px;margin:0 0 4px}"
		        "p{margin:2px 0 10px;font-size:13px;color:#555}"
		        "pre{font-size:12px;background:#f6f6f6;padding:8px}"
		        "</style></head><body>\n<h1>tfd trace: ");
		esc(out, tr->file);
		fprintf(out, "</h1>\n<p>One lane per timer. \xe2\x96\xbc arm "
		        "(blue bar: armed), | due: an expiration's deadline, "
		        "\xe2\x97\x8f read with its count, \xe2\x97\x8b read that "
		        "found nothing, red line: lateness of a read, \xc3\x97 "
		        "disarm. Hover a mark for its exact values.</p>\n");
	}
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
	        "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	        "font-family=\"sans-serif\">\n", W, h, W, h);
	fprintf(out, "<style>.even{fill:#fafafa}.odd{fill:#f0f2f5}"
	        ".name{font-size:13px;font-weight:bold}.what{font-size:11px;"
	        "fill:#555}.tick{font-size:11px;fill:#444}.axis{stroke:#444}"
	        ".grid{stroke:#ddd}.life{stroke:#999;stroke-width:1}"
	        ".lifelbl{font-size:11px;fill:#777}.armed{fill:#bcd3f2}.arm{fill:#2b6cb0}"
	        ".armlbl{font-size:11px;fill:#2b6cb0}.due{stroke:#dd8a00;"
	        "stroke-width:1.5}.duelbl{font-size:11px;fill:#b36b00}"
	        ".dueband{fill:#f6d7a7}.read{fill:#1a365d}.readlbl{font-size:11px;"
	        "fill:#1a365d}.eagain{fill:#fff;stroke:#1a365d}"
	        ".eagainlbl{font-size:11px;fill:#555}.rfail{fill:#c53030}"
	        ".rfaillbl{font-size:11px;fill:#c53030}.late{stroke:#c53030;"
	        "stroke-width:2}.disarm{stroke:#c05621;stroke-width:2;fill:none}"
	        ".disarmlbl{font-size:11px;fill:#c05621}.close{stroke:#222;"
	        "stroke-width:2}.vadv{stroke:#6b46c1}.vband{fill:#b7a4e6}.vlbl{font-size:11px;"
	        "fill:#6b46c1}.title{font-size:12px;fill:#444}</style>\n");
	snprintf(buf, sizeof(buf), "%s", tr->nadv ? "virtual " : "");
	fprintf(out, "<text x=\"10\" y=\"20\" class=\"title\">time since the "
	        "first line of the trace (the program's %sCLOCK_MONOTONIC)"
	        "</text>\n", buf);
	axis(&p, TOP - 20, h - 40, 0);
	if (tr->nadv) {
		y = TOP + MID;
		memset(p.nused, 0, sizeof(p.nused));
		p.y0 = TOP;
		fprintf(out, "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\""
		        " class=\"odd\"/>\n", TOP, W, LANE);
		fprintf(out, "<text x=\"10\" y=\"%.1f\" class=\"name\">virtual "
		        "clock</text>\n<text x=\"10\" y=\"%.1f\" class=\"what\">"
		        "%zu moves to the next deadline</text>\n", TOP + 22,
		        TOP + 40, tr->nadv);
		int dense = too_dense(&p, tr->adv[0].t,
		                      tr->adv[tr->nadv - 1].t, tr->nadv);

		if (dense) {
			double x = X(&p, tr->adv[0].t);
			char l[64];

			fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			        "height=\"8\" class=\"vband\">", x, y - 4,
			        X(&p, tr->adv[tr->nadv - 1].t) - x + 1);
			mark_title(out, "%zu moves of virtual time", tr->nadv);
			fprintf(out, "</rect>\n");
			snprintf(l, sizeof(l), "%zu moves, too close to draw apart",
			         tr->nadv);
			label(&p, x, 2, "vlbl", l);
		}
		for (i = 0; i < tr->nadv && !dense; i++) {
			char d[32], l[48];
			double x = X(&p, tr->adv[i].t);

			fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			        "y2=\"%.1f\" class=\"vadv\">", x, y - 12, x, y + 12);
			mark_title(out, "virtual time moved by %s to %.6f s",
			           trace_dur(d, sizeof(d), tr->adv[i].d,
			                     "\xc2\xb5s"),
			           (double)(tr->adv[i].t - p.t0) / 1e9);
			fprintf(out, "</line>\n");
			snprintf(l, sizeof(l), "%s+%s", i ? "" : "moved ", d);
			label(&p, x - 10, 2, "vlbl", l);
		}
	}
	for (tm = tr->first, i = 0; tm; tm = tm->next, i++) {
		trace_sort_late(tm);
		lane(&p, tm, (int)i + k, tr->t1);
	}
	/* lateness: from the deadline of what each read counted to the read,
	 * over the lanes */
	for (tm = tr->first, i = 0; tm; tm = tm->next, i++) {
		double yl = TOP + LANE * ((double)i + k) + MID;
		size_t j;

		int64_t r0 = 0, r1 = 0;
		size_t nr = read_span(tm, &r0, &r1);

		if (too_dense(&p, r0, r1, nr)) /* a band: no read drawn apart */
			continue;
		for (j = 0; j < tm->nev; j++) {
			const struct ev *e = &tm->ev[j];
			char l[32];
			double xd, xr;

			if (e->kind != EV_READ || e->c == NO_DEADLINE)
				continue;
			xd = X(&p, e->c);
			xr = X(&p, e->t);
			if (xr - xd < 1.5 && xd - xr < 1.5)
				continue;
			fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			        "y2=\"%.1f\" class=\"late\">", xd, yl, xr, yl);
			mark_title(out, "read %s %s its deadline",
			           trace_dur(l, sizeof(l), e->t - e->c,
			                     "\xc2\xb5s"),
			           e->t >= e->c ? "after" : "BEFORE");
			fprintf(out, "</line>\n");
		}
	}
	axis(&p, h - 40, h - 40, 1);
	fprintf(out, "</svg>\n");
	if (html) {
		fprintf(out, "<pre>");
		{
			char *text = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&text, &len);

			if (m) {
				trace_summary(tr, m);
				fclose(m);
				esc(out, text);
				free(text);
			}
		}
		fprintf(out, "</pre>\n</body></html>\n");
	}
}
