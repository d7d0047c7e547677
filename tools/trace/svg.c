/* SPDX-License-Identifier: MIT */
/*
 * svg.c - tfd trace's picture (trace.h): blocks of lanes on one time
 * axis, drawn alone (--svg) or each in the HTML page (page.c).  A block
 * for the moves of virtual time; a block per process, its heading its
 * program and pid; in it a lane per timer, named by the program, with
 * its life, arms (a bar while armed), deadlines, reads with their counts,
 * disarms and close, and the lateness of each read as a line from its
 * deadline.  What would not stay small is folded:
 *
 *   - marks closer than a few pixels: a band that says how many (reads,
 *     deadlines), or one mark for several (arms, bars while armed);
 *   - a process's timers beyond MAXLANES: one lane that adds them up per
 *     column of BIN px (reads, arms, early reads);
 *   - processes beyond MAXPROCS: one block for all the others.
 *
 * So the picture of 1,024 timers is a few lanes per process, not 1,024:
 * its size follows the width of the picture, not the trace.  Each SVG
 * fits the window (width 100%, a viewBox).
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
#define HEAD 28.0  /* a block's heading, then its axis */
#define TOP 60.0   /* the first lane of a block */
#define LANE 76.0
#define FOOT 40.0  /* the axis under the lanes */
#define MAXMARKS 4000 /* per lane and kind; beyond, a band */
#define MAXLANES TRACE_MAXLANES
#define BIN 4.0       /* px: a column of the folded lane */
#define NBIN ((int)((X1 - X0) / BIN) + 1)

struct pic {
	FILE *out;
	const struct trace *tr;
	int64_t t0, span;
	double y0; /* the top of the lane drawn */
	double arm_x, due_x; /* the last arm mark, the end of the deadlines
	                        drawn in the lane */
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

void trace_esc(FILE *out, const char *s)
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
	trace_esc(p->out, text);
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
	trace_esc(out, buf);
	fputs("</title>", out);
}

/* A read's circle at (x, y), of radius r and class cls, titled by the
 * message fmt makes. */
static void read_mark(struct pic *p, double x, double y, const char *r,
                      const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
static void read_mark(struct pic *p, double x, double y, const char *r,
                      const char *cls, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(p->out,
	        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" class=\"%s\">", x,
	        y, r, cls);
	mark_title(p->out, "%s", buf);
	fprintf(p->out, "</circle>\n");
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
	if (X(p, end) < p->due_x + 1) /* drawn already: a band covers it */
		return;
	if (too_dense(p, d, d + (total - 1) * iv, (size_t)total)) {
		double x = X(p, d), x2 = X(p, end);

		if (x < p->due_x)
			x = p->due_x;
		p->due_x = x2 + 1;

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

		if (x < p->due_x) { /* one line a pixel */
			if (!iv)
				break;
			continue;
		}
		p->due_x = x + 1;
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

/* The lane's name, to the left: the program and the timer's number, its
 * clock and kind, what it did. */
static void lane_name(struct pic *p, const struct timer *tm, double y0)
{
	char buf[128], v[64], iv[32];

	fprintf(p->out, "<text x=\"10\" y=\"%.1f\" class=\"name\">", y0 + 22);
	trace_esc(p->out, trace_proc_name(p->tr, tm->pid, buf, sizeof(buf)));
	fprintf(p->out, " \xc2\xb7 fd %d</text>\n", tm->fd);
	fprintf(p->out, "<text x=\"10\" y=\"%.1f\" class=\"what\">timer %d, ",
	        y0 + 40, tm->id);
	if (tm->inherited)
		fprintf(p->out, "created before the trace (inherited)");
	else
		trace_esc(p->out, tm->clock);
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
}

/* What a lane's marks have drawn so far: the first of a kind is labelled,
 * and marks closer than a few pixels are left out. */
struct marks {
	const struct timer *tm;
	double y;
	int first_due, first_read, first_eagain, first_arm, dense;
	double armed_x, eagain_x, fail_x;
};

/* The arming e at x, in force until until: its bar, its deadlines, its
 * mark and label. */
static void arm_mark(struct pic *p, struct marks *m, const struct ev *e,
                     double x, int64_t until)
{
	char buf[128], v[64], iv[32];
	double y = m->y;

	/* the bar drawn already (armed_x) reaches on; one mark in 3 px */
	if (X(p, until) > m->armed_x + 1) {
		double from = x > m->armed_x ? x : m->armed_x;

		fprintf(p->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		        "height=\"6\" class=\"armed\"/>\n", from, y - 3,
		        X(p, until) - from > 1 ? X(p, until) - from : 1);
		m->armed_x = X(p, until);
	}
	deadlines(p, m->tm, e, until, y, &m->first_due);
	if (x < p->arm_x + 3)
		return;
	p->arm_x = x;
	fprintf(p->out, "<path d=\"M%.1f %.1f l5 -9 h-10 z\" class=\"arm\">",
	        x, y - 4);
	trace_dur(v, sizeof(v), e->a, "\xc2\xb5s");
	trace_dur(iv, sizeof(iv), e->b, "\xc2\xb5s");
	mark_title(p->out, "timer %d armed at %.6f s: value %s%s, "
	           "interval %s", m->tm->id, (double)(e->t - p->t0) / 1e9,
	           e->a < 0 ? "?" : v, e->flag == 1 ? " (absolute)" : "",
	           e->b < 0 ? "?" : e->b ? iv : "0");
	fprintf(p->out, "</path>\n");
	/* an absolute value says when it is due, from now */
	if (e->flag == 1 && e->c >= 0)
		snprintf(v, sizeof(v), "(absolute) due in %s",
		         trace_dur(buf, sizeof(buf), e->c - e->t,
		                   "\xc2\xb5s"));
	else if (e->a < 0 || e->b < 0)
		snprintf(v, sizeof(v), "?");
	if (e->b > 0)
		snprintf(buf, sizeof(buf), "%s %s, every %s",
		         m->first_arm ? "armed" : "re-armed", v, iv);
	else
		snprintf(buf, sizeof(buf), "%s %s, once",
		         m->first_arm ? "armed" : "re-armed", v);
	label(p, x - 4, 0, "armlbl", buf);
	m->first_arm = 0;
}

/* A read of e at x: with a count, EAGAIN, or failed. */
static void read_event(struct pic *p, struct marks *m, const struct ev *e,
                       double x)
{
	double at = (double)(e->t - p->t0) / 1e9;
	int id = m->tm->id;
	char buf[64];

	switch (e->kind) {
	case EV_READ:
		if (m->dense) /* drawn as a band: read_band */
			break;
		read_mark(p, x, m->y, "4", "read",
		          "timer %d read at %.6f s: count %" PRId64, id, at,
		          e->a);
		snprintf(buf, sizeof(buf), m->first_read ? "read %" PRId64 :
		         "%" PRId64, e->a);
		if (m->first_read || e->a != 1)
			label(p, x - 3, 2, "readlbl", buf);
		m->first_read = 0;
		break;
	case EV_EAGAIN:
		if (x < m->eagain_x + 3)
			break;
		m->eagain_x = x;
		read_mark(p, x, m->y, "3.5", "eagain",
		          "timer %d read at %.6f s: EAGAIN (nothing to read)",
		          id, at);
		if (m->first_eagain)
			label(p, x - 3, 2, "eagainlbl", "read: EAGAIN");
		m->first_eagain = 0;
		break;
	default: /* EV_RFAIL */
		if (x < m->fail_x + 3)
			break;
		m->fail_x = x;
		read_mark(p, x, m->y, "4", "rfail",
		          "timer %d read at %.6f s failed%s", id, at,
		          e->a ? ": ECANCELED" : "");
		label(p, x - 3, 2, "rfaillbl",
		      e->a ? "ECANCELED" : "read failed");
	}
}

/* A disarm (a cross) or the close (a bar across the lane) of e at x. */
static void end_mark(struct pic *p, const struct marks *m,
                     const struct ev *e, double x)
{
	double y = m->y, at = (double)(e->t - p->t0) / 1e9;

	if (e->kind == EV_DISARM) {
		fprintf(p->out, "<path d=\"M%.1f %.1f l8 8 m0 -8 l-8 8\" "
		        "class=\"disarm\">", x - 4, y - 4);
		mark_title(p->out, "timer %d disarmed at %.6f s", m->tm->id,
		           at);
		fprintf(p->out, "</path>\n");
		label(p, x + 6, 0, "disarmlbl", "disarmed");
		return;
	}
	fprintf(p->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
	        "y2=\"%.1f\" class=\"close\">", x, y - 10, x, y + 10);
	mark_title(p->out, "timer %d closed at %.6f s", m->tm->id, at);
	fprintf(p->out, "</line>\n");
	label(p, x + 4, 2, "lifelbl", "closed");
}

/* The nreads reads from r0 to r1, too close to draw apart: one band. */
static void read_band(struct pic *p, double y, size_t nreads, int64_t r0,
                      int64_t r1)
{
	char buf[64];

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

static void lane(struct pic *p, const struct timer *tm, int idx, int64_t t1)
{
	double y0 = TOP + LANE * idx;
	int64_t end = tm->closed >= 0 ? tm->closed : t1;
	int64_t r0 = 0, r1 = 0;
	size_t i, nreads = read_span(tm, &r0, &r1);
	struct marks m = { tm, y0 + MID, 1, 1, 1, 1, 0, -1e9, -1e9, -1e9 };

	m.dense = too_dense(p, r0, r1, nreads);
	memset(p->nused, 0, sizeof(p->nused));
	p->y0 = y0;
	p->arm_x = p->due_x = -1e9;
	fprintf(p->out, "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" "
	        "height=\"%.0f\" class=\"%s\"/>\n", y0, W, LANE,
	        idx % 2 ? "odd" : "even");
	lane_name(p, tm, y0);
	/* its life: a thin line from creation to close */
	fprintf(p->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
	        "class=\"life\"/>\n", X(p, tm->created), m.y, X(p, end), m.y);
	for (i = 0; i < tm->nev; i++) {
		const struct ev *e = &tm->ev[i];
		double x = X(p, e->t);

		if (e->kind == EV_ARM)
			arm_mark(p, &m, e, x, trace_arming_until(tm, i, end));
		else if (e->kind == EV_DISARM || e->kind == EV_CLOSE)
			end_mark(p, &m, e, x);
		else
			read_event(p, &m, e, x);
	}
	if (m.dense)
		read_band(p, m.y, nreads, r0, r1);
	/* last: where the marks leave room for it */
	if (!tm->inherited)
		label(p, X(p, tm->created) + 2, 2, "lifelbl", "created");
}

/* The moves of virtual time: a lane of their own. */
static void vclock_lane(struct pic *p, double y0)
{
	const struct trace *tr = p->tr;
	double y = y0 + MID;
	size_t i;
	int dense;

	memset(p->nused, 0, sizeof(p->nused));
	p->y0 = y0;
	fprintf(p->out, "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\""
	        " class=\"odd\"/>\n", y0, W, LANE);
	fprintf(p->out, "<text x=\"10\" y=\"%.1f\" class=\"name\">virtual "
	        "clock</text>\n<text x=\"10\" y=\"%.1f\" class=\"what\">"
	        "%zu moves to the next deadline</text>\n", y0 + 22, y0 + 40,
	        tr->nadv);
	dense = too_dense(p, tr->adv[0].t, tr->adv[tr->nadv - 1].t, tr->nadv);
	if (dense) {
		double x = X(p, tr->adv[0].t);
		char l[64];

		fprintf(p->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		        "height=\"8\" class=\"vband\">", x, y - 4,
		        X(p, tr->adv[tr->nadv - 1].t) - x + 1);
		mark_title(p->out, "%zu moves of virtual time", tr->nadv);
		fprintf(p->out, "</rect>\n");
		snprintf(l, sizeof(l), "%zu moves, too close to draw apart",
		         tr->nadv);
		label(p, x, 2, "vlbl", l);
	}
	for (i = 0; i < tr->nadv && !dense; i++) {
		char d[32], l[48];
		double x = X(p, tr->adv[i].t);

		fprintf(p->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		        "y2=\"%.1f\" class=\"vadv\">", x, y - 12, x, y + 12);
		mark_title(p->out, "virtual time moved by %s to %.6f s",
		           trace_dur(d, sizeof(d), tr->adv[i].d, "\xc2\xb5s"),
		           (double)(tr->adv[i].t - p->t0) / 1e9);
		fprintf(p->out, "</line>\n");
		snprintf(l, sizeof(l), "%s+%s", i ? "" : "moved ", d);
		label(p, x - 10, 2, "vlbl", l);
	}
}

/* Lateness: from the deadline of what each read counted to the read, in
 * the lane at y (not when the reads are a band). */
static void late_lines(struct pic *p, const struct timer *tm, double y)
{
	int64_t r0 = 0, r1 = 0;
	size_t nr = read_span(tm, &r0, &r1), j;
	double last = -1e9;

	if (too_dense(p, r0, r1, nr))
		return;
	for (j = 0; j < tm->nev; j++) {
		const struct ev *e = &tm->ev[j];
		char l[32];
		double xd, xr;

		if (e->kind != EV_READ || e->c == NO_DEADLINE)
			continue;
		xd = X(p, e->c);
		xr = X(p, e->t);
		if ((xr - xd < 1.5 && xd - xr < 1.5) || xr < last + 1)
			continue;
		last = xr;
		fprintf(p->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		        "y2=\"%.1f\" class=\"late\">", xd, y, xr, y);
		mark_title(p->out, "read %s %s its deadline",
		           trace_dur(l, sizeof(l), e->t - e->c, "\xc2\xb5s"),
		           e->t >= e->c ? "after" : "BEFORE");
		fprintf(p->out, "</line>\n");
	}
}

/* The bits of n > 0: a logarithm for the heights of bars. */
static int bits(long n)
{
	int b = 0;

	for (; n; n >>= 1)
		b++;
	return b;
}

/* The timers tm[n] that have no lane of their own, in one: per column of
 * BIN px, how many reads (a bar, its height the log of the count), arms
 * (above) and early reads (red, below). */
static void folded_lane(struct pic *p, struct timer *const *tm, size_t n,
                        int idx)
{
	double y0 = TOP + LANE * idx, y = y0 + MID, h;
	long reads = 0, arms = 0, early = 0, most = 1;
	long (*bin)[3] = calloc(NBIN, sizeof(*bin));
	size_t i, j;
	int b, k;

	if (!bin) {
		fprintf(stderr, "tfd: trace: out of memory\n");
		exit(1);
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < tm[i]->nev; j++) {
			const struct ev *e = &tm[i]->ev[j];

			if (e->kind != EV_READ && e->kind != EV_ARM)
				continue;
			b = (int)((X(p, e->t) - X0) / BIN);
			b = b < 0 ? 0 : b >= NBIN ? NBIN - 1 : b;
			k = e->kind == EV_ARM ? 1 : 0;
			bin[b][k]++;
			*(k ? &arms : &reads) += 1;
			if (!k && e->c != NO_DEADLINE && e->t < e->c) {
				bin[b][2]++;
				early++;
			}
		}
	for (b = 0; b < NBIN; b++)
		for (k = 0; k < 2; k++)
			most = bin[b][k] > most ? bin[b][k] : most;
	fprintf(p->out, "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" "
	        "height=\"%.0f\" class=\"%s\"/>\n", y0, W, LANE,
	        idx % 2 ? "odd" : "even");
	fprintf(p->out, "<text x=\"10\" y=\"%.1f\" class=\"name\">%zu more "
	        "timers, folded</text>\n<text x=\"10\" y=\"%.1f\" class=\"what\">"
	        "per %.0f px: arms above, reads below, early red"
	        "</text>\n<text x=\"10\" y=\"%.1f\" class=\"what\">%ld arms, "
	        "%ld reads, %ld early</text>\n", y0 + 22, n, y0 + 40, BIN,
	        y0 + 56, arms, reads, early);
	for (b = 0; b < NBIN; b++) {
		double x = X0 + BIN * b;

		for (k = 0; k < 3; k++) {
			static const char *const cls[3] = { "read", "arm",
			                                    "rfail" };
			static const char *const what[3] = { "reads", "arms",
			                                     "early reads" };

			if (!bin[b][k])
				continue;
			h = 3 + 15.0 * bits(bin[b][k]) / bits(most);
			if (k == 2)
				h = 6;
			fprintf(p->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			        "height=\"%.1f\" class=\"%s\"><title>%ld %s"
			        "</title></rect>\n", x, k == 1 ? y - 2 - h :
			        k == 2 ? y + 20 : y, BIN - 0.5, h, cls[k],
			        bin[b][k], what[k]);
		}
	}
	free(bin);
}

/* Lanes: one per timer up to MAXLANES, the rest folded into one. */
static int lanes(const struct block *b)
{
	if (b->vclock)
		return 1;
	return b->n <= MAXLANES ? (int)b->n : MAXLANES + 1;
}

double trace_block_height(const struct block *b)
{
	return TOP + LANE * lanes(b) + FOOT;
}

void trace_block_draw(struct trace *tr, FILE *out, const struct block *b)
{
	struct pic p = { .out = out, .tr = tr, .t0 = tr->t0,
	                 .span = tr->t1 - tr->t0 };
	double h = trace_block_height(b);
	int n = lanes(b), i;

	if (p.span <= 0)
		p.span = 1000000; /* 1 ms, for a trace of one instant */
	fprintf(out, "<text x=\"10\" y=\"18\" class=\"block\">");
	trace_esc(out, b->name);
	if (!b->vclock)
		fprintf(out, "</text>\n<text x=\"%.0f\" y=\"18\" class=\"title\">"
		        "%zu timer%s%s", X0, b->n, b->n == 1 ? "" : "s",
		        b->n > MAXLANES ? ", the first with a lane each" : "");
	fprintf(out, "</text>\n");
	axis(&p, TOP - 4, h - FOOT, 0);
	if (b->vclock)
		vclock_lane(&p, TOP);
	for (i = 0; !b->vclock && i < n; i++) {
		if (i == MAXLANES) {
			folded_lane(&p, b->tm + i, b->n - (size_t)i, i);
			break;
		}
		trace_sort_late(b->tm[i]);
		lane(&p, b->tm[i], i, tr->t1);
	}
	for (i = 0; !b->vclock && i < n && i < MAXLANES; i++)
		late_lines(&p, b->tm[i], TOP + LANE * i + MID);
	axis(&p, h - FOOT, h - FOOT, 1);
}
