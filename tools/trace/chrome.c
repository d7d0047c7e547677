/* SPDX-License-Identifier: MIT */
/*
 * chrome.c - the trace as Chrome's trace-event JSON (trace.h), for a trace
 * viewer (chrome://tracing, ui.perfetto.dev): a process per process of the
 * trace, named by its program (the exec line of tfd exec; else "pid N"),
 * and in it a track per timer with
 *
 *   "armed"      a span from each arming to the next, a disarm or close
 *                (args: value, interval, absolute, expirations due);
 *   "due"        an instant at each deadline of the arming, the first
 *                MAXDUE of each, and the whole file at most DUEBUDGET:
 *                when the armings' deadlines are more, each arming draws
 *                its first CAP, the largest CAP that keeps within the
 *                budget (the span's "due" says how many there were,
 *                "due_drawn" how many are drawn);
 *   "read"       an instant per read with its count and lateness;
 *                "read: EAGAIN", "read failed", "created", "disarmed",
 *                "closed" likewise;
 *   "lateness"   a counter per timer, in us, at each read of a known
 *                deadline.
 *
 * The moves of virtual time are instants of a process of their own, pid
 * 0, "virtual clock".  Times are microseconds since the first line of the
 * trace, to the nanosecond ("ts": 1.234).  Events are written as they are
 * met, nothing is held: a trace of a million reads is a file of a few
 * hundred bytes per read, and the deadlines add at most DUEBUDGET
 * instants (stress-ng's timers, re-armed 100,000 times at intervals of
 * nanoseconds, would otherwise make billions).
 */
#include "trace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAXDUE 10000
#define DUEBUDGET 200000

/* The deadlines of the arming e, in force until until. */
static long due_total(const struct ev *e, int64_t until)
{
	int64_t iv = e->b > 0 ? e->b : 0;

	if (e->c < 0 || e->c > until)
		return 0;
	return iv ? (long)((until - e->c) / iv) + 1 : 1;
}

struct out {
	FILE *f;
	const struct trace *tr;
	long n;   /* events written */
	long cap; /* deadlines drawn of each arming, at most */
};

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c > 0x7e)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* ns as decimal microseconds, exact: "-1.000", "12.345". */
static void us(FILE *f, int64_t ns)
{
	uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	fprintf(f, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", a / 1000,
	        a % 1000);
}

/* The start of an event: {"ph": PH, "pid": P, "tid": T, "ts": ...; the
 * caller adds the rest and the closing brace. */
static void ev(struct out *o, const char *ph, const char *name, int pid,
               int tid, int64_t t)
{
	fprintf(o->f, "%s\n{\"ph\":\"%s\",\"name\":", o->n++ ? "," : "", ph);
	jstr(o->f, name);
	fprintf(o->f, ",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
	us(o->f, t - o->tr->t0);
}

static void meta(struct out *o, const char *what, int pid, int tid,
                 const char *name)
{
	fprintf(o->f, "%s\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,"
	        "\"tid\":%d,\"args\":{\"name\":", o->n++ ? "," : "", what, pid,
	        tid);
	jstr(o->f, name);
	fprintf(o->f, "}}");
}

static void instant(struct out *o, const char *name, const struct timer *tm,
                    int64_t t)
{
	ev(o, "i", name, tm->pid, tm->id, t);
	fprintf(o->f, ",\"s\":\"t\"}");
}

/* A process named once: by its program, else by its number. */
static void process(struct out *o, int pid, int **named, size_t *n,
                    size_t *cap)
{
	const char *prog = trace_program_name(o->tr, pid);
	char buf[32];
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*named)[i] == pid)
			return;
	*named = trace_grow(*named, cap, *n, sizeof(**named));
	(*named)[(*n)++] = pid;
	snprintf(buf, sizeof(buf), "pid %d", pid);
	meta(o, "process_name", pid, 0, prog ? prog : buf);
}

/* The arming that event i of tm starts, until the next arming, disarm or
 * close (else end): its span and its deadlines. */
static void arming(struct out *o, const struct timer *tm, size_t i,
                   int64_t end)
{
	const struct ev *e = &tm->ev[i];
	int64_t until = trace_arming_until(tm, i, end), d = e->c;
	int64_t iv = e->b > 0 ? e->b : 0;
	long total = due_total(e, until), k;
	long drawn = total < o->cap ? total : o->cap;

	ev(o, "X", "armed", tm->pid, tm->id, e->t);
	fprintf(o->f, ",\"dur\":");
	us(o->f, until - e->t);
	fprintf(o->f, ",\"args\":{\"value_ns\":%" PRId64 ",\"interval_ns\":%"
	        PRId64 ",\"absolute\":%s,\"due\":%ld,\"due_drawn\":%ld}}",
	        e->a, e->b, e->flag == 1 ? "true" : "false", total, drawn);
	for (k = 0; k < drawn; k++) {
		instant(o, "due", tm, d);
		if (k + 1 < total) /* never past until: no overflow */
			d += iv;
	}
}

static void timer(struct out *o, const struct timer *tm)
{
	int64_t end = tm->closed >= 0 ? tm->closed : o->tr->t1;
	char name[160];
	size_t i;

	snprintf(name, sizeof(name), "timer %d (fd %d, %s)", tm->id, tm->fd,
	         tm->clock);
	meta(o, "thread_name", tm->pid, tm->id, name);
	if (!tm->inherited)
		instant(o, "created", tm, tm->created);
	snprintf(name, sizeof(name), "lateness timer %d (us)", tm->id);
	for (i = 0; i < tm->nev; i++) {
		const struct ev *e = &tm->ev[i];

		switch (e->kind) {
		case EV_ARM:
			arming(o, tm, i, end);
			break;
		case EV_DISARM:
			instant(o, "disarmed", tm, e->t);
			break;
		case EV_READ:
			ev(o, "i", "read", tm->pid, tm->id, e->t);
			fprintf(o->f, ",\"s\":\"t\",\"args\":{\"count\":"
			        "%" PRId64, e->a);
			if (e->c != NO_DEADLINE) {
				fprintf(o->f, ",\"late_us\":");
				us(o->f, e->t - e->c);
			}
			fprintf(o->f, "}}");
			if (e->c == NO_DEADLINE)
				break;
			ev(o, "C", name, tm->pid, tm->id, e->t);
			fprintf(o->f, ",\"args\":{\"us\":");
			us(o->f, e->t - e->c);
			fprintf(o->f, "}}");
			break;
		case EV_EAGAIN:
			instant(o, "read: EAGAIN", tm, e->t);
			break;
		case EV_RFAIL:
			instant(o, e->a ? "read: ECANCELED" : "read failed", tm,
			        e->t);
			break;
		case EV_CLOSE:
			instant(o, "closed", tm, e->t);
			break;
		}
	}
}

/* The deadlines drawn of all armings if each draws at most cap. */
static long dues_drawn(const struct trace *tr, long cap)
{
	const struct timer *tm;
	long sum = 0, n;
	size_t i;

	for (tm = tr->first; tm; tm = tm->next)
		for (i = 0; i < tm->nev; i++) {
			int64_t end = tm->closed >= 0 ? tm->closed : tr->t1;

			if (tm->ev[i].kind != EV_ARM)
				continue;
			n = due_total(&tm->ev[i],
			              trace_arming_until(tm, i, end));
			sum += n < cap ? n : cap;
			if (sum > DUEBUDGET)
				return sum;
		}
	return sum;
}

/* The largest cap, up to MAXDUE, that keeps the deadlines drawn within
 * DUEBUDGET (0 when the armings alone are more). */
static long due_cap(const struct trace *tr)
{
	long lo = 0, hi = MAXDUE, mid;

	if (dues_drawn(tr, MAXDUE) <= DUEBUDGET)
		return MAXDUE;
	while (lo < hi) { /* dues_drawn(lo) <= budget < dues_drawn(hi + 1) */
		mid = (lo + hi + 1) / 2;
		if (dues_drawn(tr, mid) <= DUEBUDGET)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

void trace_chrome(struct trace *tr, FILE *out)
{
	struct out o = { out, tr, 0, due_cap(tr) };
	const struct timer *tm;
	int *named = NULL;
	size_t nnamed = 0, cap = 0, i;
	char buf[64], d[32];

	fprintf(out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":"
	        "\"tfd trace\",\"file\":");
	jstr(out, tr->file);
	fprintf(out, "},\"traceEvents\":[");
	for (tm = tr->first; tm; tm = tm->next) {
		process(&o, tm->pid, &named, &nnamed, &cap);
		timer(&o, tm);
	}
	if (tr->nadv) {
		meta(&o, "process_name", 0, 0, "virtual clock");
		for (i = 0; i < tr->nadv; i++) {
			snprintf(buf, sizeof(buf), "moved +%s",
			         trace_dur(d, sizeof(d), tr->adv[i].d, "us"));
			ev(&o, "i", buf, 0, 0, tr->adv[i].t);
			fprintf(out, ",\"s\":\"p\"}");
		}
	}
	fprintf(out, "\n]}\n");
	free(named);
}
