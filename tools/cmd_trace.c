/* SPDX-License-Identifier: MIT */
/*
 * cmd_trace.c - tfd trace: read the lines that `tfd exec --trace FILE`
 * (libtfd-preload.so, TFD_TRACE) wrote, and say per timer what it was, how
 * it was armed, what it delivered and how late; with --html or --svg, draw
 * it as a timeline, one lane per timer.  See tfd(1) and tfd-preload(7),
 * TRACE, for the lines:
 *
 *   TIME PID FD CALL(ARGS) [EXTRA] = RESULT
 *
 * Lateness is that of each read that returned a count: the read's time
 * minus the deadline of the last expiration it counted, from the deadline
 * armed (the "[next R]" of timerfd_settime: the first expiry is at TIME +
 * R) and the interval.  A negative lateness is an early expiration: a
 * count reported before its time.
 */
#define _GNU_SOURCE
#include "cmd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS ((int64_t)1000000000)

/* ---- what the trace holds ---- */

enum ev_kind {
	EV_ARM,    /* a = value (ns on its clock), b = interval, c = first
	              expiry on the trace's clock (-1: unknown), flag =
	              absolute (-1 for a value or interval not valid) */
	EV_DISARM,
	EV_READ,   /* a = count, c = the deadline of the last expiration it
	              counted (NO_DEADLINE: not known) */
	EV_EAGAIN, /* a read with nothing to read */
	EV_RFAIL,  /* a read that failed otherwise: a = 1 for ECANCELED */
	EV_CLOSE,  /* the last number of the timer was closed */
};

struct ev {
	int64_t t;
	enum ev_kind kind;
	int flag;
	int64_t a, b, c;
};
#define NO_DEADLINE INT64_MIN

struct hist { /* counts returned by reads: value, reads */
	uint64_t v;
	long n;
};

struct timer {
	int id, pid, fd, inherited;
	char clock[32], flags[64];
	int64_t created, closed; /* closed: -1 while open */
	int numbers;             /* descriptors naming it now */
	struct ev *ev;
	size_t nev, cap;
	/* the arming in force, for the lateness of reads */
	int armed, absolute;
	int64_t first, interval, armed_at;
	uint64_t seen;  /* expirations read since it was armed */
	int64_t past;   /* expirations already due when armed (absolute):
	                   -1 until the first read tells */
	/* totals */
	long arms, arms_abs, disarms, reads, eagain, rfail, cancels, queries,
	     dups, sfail;
	uint64_t expirations, due;
	int due_unknown; /* armed once with no known deadline */
	int64_t *late;
	size_t nlate, caplate;
	long early;
	struct hist hist[8];
	int nhist;
	long hist_other;
	int64_t last_value, last_interval;
	struct timer *next;
};

/* (pid, fd) -> timer, for the numbers open now. */
struct name {
	int pid, fd;
	struct timer *t;
	struct name *next;
};
#define NBUCKETS 4096

struct trace {
	const char *file;
	struct timer *first, **tail;
	int ntimers;
	struct name *names[NBUCKETS];
	int64_t t0, t1; /* first and last time */
	long lines, other, nprocs;
	int pids[64];
	int npids;
	struct adv {    /* virtual-advance: when, and by how much */
		int64_t t, d;
	} *adv;
	size_t nadv, capadv;
};

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 16;
	p = realloc(p, *cap * size);
	if (!p) {
		fprintf(stderr, "tfd: trace: out of memory\n");
		exit(1);
	}
	return p;
}

static struct name **slot(struct trace *tr, int pid, int fd)
{
	unsigned h = ((unsigned)pid * 2654435761u) ^ (unsigned)fd;

	return &tr->names[h % NBUCKETS];
}

static struct timer *lookup(struct trace *tr, int pid, int fd)
{
	struct name *n;

	for (n = *slot(tr, pid, fd); n; n = n->next)
		if (n->pid == pid && n->fd == fd)
			return n->t;
	return NULL;
}

/* The number stops naming its timer; the timer is closed with its last. */
static void unname(struct trace *tr, int pid, int fd, int64_t t)
{
	struct name **p, *n;

	for (p = slot(tr, pid, fd); (n = *p); p = &n->next) {
		if (n->pid == pid && n->fd == fd) {
			*p = n->next;
			if (--n->t->numbers == 0 && n->t->closed < 0) {
				struct ev e = { t, EV_CLOSE, 0, 0, 0, 0 };

				n->t->closed = t;
				n->t->ev = grow(n->t->ev, &n->t->cap, n->t->nev,
				                sizeof(e));
				n->t->ev[n->t->nev++] = e;
			}
			free(n);
			return;
		}
	}
}

static void name(struct trace *tr, int pid, int fd, struct timer *t, int64_t now)
{
	struct name *n;

	unname(tr, pid, fd, now);
	n = calloc(1, sizeof(*n));
	if (!n) {
		fprintf(stderr, "tfd: trace: out of memory\n");
		exit(1);
	}
	n->pid = pid;
	n->fd = fd;
	n->t = t;
	n->next = *slot(tr, pid, fd);
	*slot(tr, pid, fd) = n;
	t->numbers++;
}

static struct timer *new_timer(struct trace *tr, int pid, int fd, int64_t t)
{
	struct timer *tm = calloc(1, sizeof(*tm));

	if (!tm) {
		fprintf(stderr, "tfd: trace: out of memory\n");
		exit(1);
	}
	tm->id = ++tr->ntimers;
	tm->pid = pid;
	tm->fd = fd;
	tm->created = t;
	tm->closed = -1;
	tm->past = -1;
	strcpy(tm->clock, "?");
	strcpy(tm->flags, "?");
	*tr->tail = tm;
	tr->tail = &tm->next;
	name(tr, pid, fd, tm, t);
	return tm;
}

/* The timer fd names in pid; one not created in the trace (inherited
 * across fork, or the trace began later) is made up. */
static struct timer *timer_of(struct trace *tr, int pid, int fd, int64_t t)
{
	struct timer *tm = lookup(tr, pid, fd);

	if (!tm) {
		tm = new_timer(tr, pid, fd, t);
		tm->inherited = 1;
	}
	return tm;
}

static void add_ev(struct timer *tm, int64_t t, enum ev_kind k, int64_t a,
                   int64_t b, int64_t c, int flag)
{
	struct ev e = { t, k, flag, a, b, c };

	tm->ev = grow(tm->ev, &tm->cap, tm->nev, sizeof(e));
	tm->ev[tm->nev++] = e;
}

/* ---- parsing ---- */

/* Digits into *v (at most 18); the end, or NULL. */
static const char *num(const char *p, int64_t *v)
{
	int64_t n = 0;
	int k = 0;

	for (; *p >= '0' && *p <= '9' && k < 18; p++, k++)
		n = n * 10 + (*p - '0');
	if (k == 0 || (*p >= '0' && *p <= '9'))
		return NULL;
	*v = n;
	return p;
}

/* "S.NNNNNNNNN" into ns; the end, or NULL. */
static const char *secs(const char *p, int64_t *ns)
{
	int64_t s, f;
	const char *q;

	if (!(p = num(p, &s)) || *p++ != '.' || !(q = num(p, &f)) || q - p != 9 ||
	    s > INT64_MAX / NS - 1)
		return NULL;
	*ns = s * NS + f;
	return q;
}

/* A time of the arguments: "S.NNNNNNNNN", or "{SEC, NSEC}" for one that
 * is not valid (then *ns = -1). */
static const char *arg_time(const char *p, int64_t *ns)
{
	if (*p == '{') {
		p = strchr(p, '}');
		*ns = -1;
		return p ? p + 1 : NULL;
	}
	return secs(p, ns);
}

/* Skips "s" at p; the end, or NULL. */
static const char *lit(const char *p, const char *s)
{
	size_t n = strlen(s);

	return p && !strncmp(p, s, n) ? p + n : NULL;
}

static void add_late(struct timer *tm, int64_t late)
{
	tm->late = grow(tm->late, &tm->caplate, tm->nlate, sizeof(*tm->late));
	tm->late[tm->nlate++] = late;
	if (late < 0)
		tm->early++;
}

static void add_count(struct timer *tm, uint64_t v)
{
	int i;

	for (i = 0; i < tm->nhist; i++)
		if (tm->hist[i].v == v) {
			tm->hist[i].n++;
			return;
		}
	if (tm->nhist < 8) {
		tm->hist[tm->nhist].v = v;
		tm->hist[tm->nhist++].n = 1;
	} else {
		tm->hist_other++;
	}
}

/* Expirations of the arming in force due by time t (the model). */
static uint64_t due_by(const struct timer *tm, int64_t t)
{
	uint64_t n = tm->past > 0 ? (uint64_t)tm->past : 0;

	if (!tm->armed || tm->first < 0 || t < tm->first)
		return n;
	if (tm->interval == 0)
		return n + 1;
	return n + 1 + (uint64_t)((t - tm->first) / tm->interval);
}

/* The arming in force ends at t (re-armed, disarmed, closed, the end). */
static void end_arming(struct timer *tm, int64_t t)
{
	if (tm->armed)
		tm->due += due_by(tm, t);
	tm->armed = 0;
}

/* A read returned count at t: the deadline of the last expiration it
 * counted, or NO_DEADLINE. */
static int64_t on_read(struct timer *tm, int64_t t, uint64_t count)
{
	uint64_t k;
	int64_t deadline;

	tm->reads++;
	tm->expirations += count;
	add_count(tm, count);
	if (!tm->armed || tm->first < 0)
		return NO_DEADLINE;
	/* An absolute arming may have been due already, several times:
	 * what the first read counts beyond the model's series. */
	if (tm->past < 0) {
		uint64_t m = due_by(tm, t);

		tm->past = count > m ? (int64_t)(count - m) : 0;
	}
	tm->seen += count;
	k = tm->seen - (uint64_t)tm->past; /* of the series first + i * I */
	if (k == 0)
		deadline = tm->armed_at;
	else if (tm->interval == 0)
		deadline = tm->first;
	else if (k - 1 > (uint64_t)((INT64_MAX - tm->first) / tm->interval))
		deadline = INT64_MAX;
	else
		deadline = tm->first + (int64_t)(k - 1) * tm->interval;
	add_late(tm, t - deadline);
	return deadline;
}

/* "timerfd_settime(FD, FLAGS, {V, I}, OLD) [next R] = 0" */
static int on_settime(struct timer *tm, int64_t t, const char *args, int ok)
{
	const char *p = strchr(args, ','), *q;
	int64_t v, iv, r = -1;
	int absolute;

	if (!ok) {
		tm->sfail++;
		return 0;
	}
	if (!p || !(p = lit(p, ", ")))
		return -1;
	q = strchr(p, ',');
	if (!q)
		return -1;
	absolute = memmem(p, (size_t)(q - p), "TFD_TIMER_ABSTIME", 17) != NULL;
	if (!(p = lit(q, ", {")) || !(p = arg_time(p, &v)) ||
	    !(p = lit(p, ", ")) || !(p = arg_time(p, &iv)) || *p != '}')
		return -1;
	if ((q = strstr(p, ") [next ")))
		arg_time(q + 8, &r);
	end_arming(tm, t);
	if (v == 0) {
		tm->disarms++;
		add_ev(tm, t, EV_DISARM, 0, iv, 0, 0);
		return 0;
	}
	tm->arms++;
	tm->arms_abs += absolute;
	tm->armed = 1;
	tm->absolute = absolute;
	tm->armed_at = t;
	tm->interval = iv > 0 ? iv : 0;
	tm->seen = 0;
	tm->past = absolute ? -1 : 0;
	tm->last_value = v;
	tm->last_interval = iv;
	/* The first expiry: from the query made at once (any clock); a
	 * relative one without it, from the value. */
	if (r > 0)
		tm->first = t + r;
	else if (r == 0)
		tm->first = t; /* due already */
	else
		tm->first = absolute ? -1 : t + v;
	tm->due_unknown |= tm->first < 0;
	add_ev(tm, t, EV_ARM, v, iv, tm->first,
	       v < 0 || iv < 0 ? -1 : absolute);
	return 0;
}

static int parse_line(struct trace *tr, char *line)
{
	int64_t t, pid, fd = -1, res = 0, v;
	char *p = line, *call, *args, *eq, *paren;
	const char *q, *err = NULL;
	struct timer *tm;
	size_t len = strlen(line);
	int i, ok;

	if (len && line[len - 1] == '\n')
		line[--len] = 0;
	if (!(q = secs(p, &t)) || *q != ' ' || !(q = num(q + 1, &pid)) ||
	    *q != ' ')
		return -1;
	q++;
	if (*q == '-')
		q++;
	else if (!(q = num(q, &fd)))
		return -1;
	if (*q++ != ' ')
		return -1;
	call = line + (q - line);
	paren = strchr(call, '(');
	eq = strstr(call, " = ");
	if (!paren || !eq || paren > eq)
		return -1;
	while (strstr(eq + 3, " = "))
		eq = strstr(eq + 3, " = ");
	q = eq + 3;
	if (!strncmp(q, "-1 ", 3) && q[3]) {
		err = q + 3;
		ok = 0;
	} else if ((q = num(q, &res)) && *q == 0) {
		ok = 1;
	} else {
		return -1;
	}
	*paren = 0;
	args = paren + 1;
	*eq = 0;

	tr->lines++;
	if (tr->lines == 1 || t < tr->t0)
		tr->t0 = t;
	if (t > tr->t1)
		tr->t1 = t;
	for (i = 0; i < tr->npids && tr->pids[i] != (int)pid; i++)
		;
	if (i == tr->npids) {
		tr->nprocs++;
		if (tr->npids < 64)
			tr->pids[tr->npids++] = (int)pid;
	}

	if (!strcmp(call, "virtual-advance")) {
		if (*args == '+' && arg_time(args + 1, &v)) {
			tr->adv = grow(tr->adv, &tr->capadv, tr->nadv,
			               sizeof(*tr->adv));
			tr->adv[tr->nadv].t = t;
			tr->adv[tr->nadv++].d = v;
		}
		return 0;
	}
	if (!strcmp(call, "timerfd_create")) {
		char *c = strchr(args, ','), *f = c ? c + 2 : NULL, *e;

		if (!ok || fd < 0)
			return 0; /* failed: no timer */
		if (!c || c[1] != ' ' || !(e = strrchr(f, ')')))
			return -1;
		tm = new_timer(tr, (int)pid, (int)res, t);
		snprintf(tm->clock, sizeof(tm->clock), "%.*s", (int)(c - args),
		         args);
		snprintf(tm->flags, sizeof(tm->flags), "%.*s", (int)(e - f), f);
		return 0;
	}
	if (fd < 0) {
		tr->other++;
		return 0;
	}
	if (!strcmp(call, "close")) {
		if (ok)
			unname(tr, (int)pid, (int)fd, t);
		return 0;
	}
	if (!strcmp(call, "dup") || !strcmp(call, "dup2") ||
	    !strcmp(call, "dup3") || !strcmp(call, "fcntl")) {
		/* the new number names the timer; dup2 of another
		 * descriptor over a timer's number takes it away */
		tm = lookup(tr, (int)pid, (int)fd);
		if (ok && tm && res != fd) {
			tm->dups++;
			name(tr, (int)pid, (int)res, tm, t);
		} else if (ok && !tm && res != fd) {
			unname(tr, (int)pid, (int)res, t);
		}
		return 0;
	}
	tm = timer_of(tr, (int)pid, (int)fd, t);
	if (!strcmp(call, "timerfd_settime"))
		return on_settime(tm, t, args, ok);
	if (!strcmp(call, "timerfd_gettime")) {
		tm->queries++;
	} else if (!strcmp(call, "read")) {
		char *c = strstr(args, ") [count ");

		if (ok && res == 8 && c && num(c + 9, &v)) {
			add_ev(tm, t, EV_READ, v, 0, on_read(tm, t, (uint64_t)v),
			       0);
		} else if (ok) {
			return -1;
		} else if (!strcmp(err, "EAGAIN")) {
			tm->eagain++;
			add_ev(tm, t, EV_EAGAIN, 0, 0, 0, 0);
		} else {
			tm->rfail++;
			tm->cancels += !strcmp(err, "ECANCELED");
			add_ev(tm, t, EV_RFAIL, !strcmp(err, "ECANCELED"), 0, 0,
			       0);
		}
	} else {
		tr->other++; /* write, ioctl, and what a later version adds */
	}
	return 0;
}

static void trace_end(struct trace *tr)
{
	struct timer *tm;

	for (tm = tr->first; tm; tm = tm->next)
		end_arming(tm, tm->closed >= 0 ? tm->closed : tr->t1);
}

static void trace_free(struct trace *tr)
{
	struct timer *tm, *next;
	struct name *n, *nn;
	int i;

	for (tm = tr->first; tm; tm = next) {
		next = tm->next;
		free(tm->ev);
		free(tm->late);
		free(tm);
	}
	for (i = 0; i < NBUCKETS; i++)
		for (n = tr->names[i]; n; n = nn) {
			nn = n->next;
			free(n);
		}
	free(tr->adv);
}

/* The whole file: 0, or 2 with the one-line error printed. */
static int trace_read(struct trace *tr, const char *file)
{
	FILE *f = !strcmp(file, "-") ? stdin : fopen(file, "r");
	char *line = NULL;
	size_t cap = 0;
	long lineno = 0;
	ssize_t n;
	int r = 0;

	memset(tr, 0, sizeof(*tr));
	tr->file = file;
	tr->tail = &tr->first;
	if (!f) {
		fprintf(stderr, "tfd: trace: %s: %s\n", file, strerror(errno));
		return 2;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if ((size_t)n != strlen(line) || parse_line(tr, line)) {
			char shown[64];
			size_t k;

			for (k = 0; k < sizeof(shown) - 1 && line[k] &&
			            line[k] != '\n'; k++)
				shown[k] = (line[k] < 0x20 || line[k] == 0x7f)
				                   ? '?' : line[k];
			shown[k] = 0;
			fprintf(stderr, "tfd: trace: %s:%ld: not a trace line "
			        "(TIME PID FD CALL(ARGS) = RESULT): '%s%s'\n",
			        file, lineno, shown,
			        k == sizeof(shown) - 1 ? "..." : "");
			r = 2;
			break;
		}
	}
	if (r == 0 && ferror(f)) {
		fprintf(stderr, "tfd: trace: %s: %s\n", file, strerror(errno));
		r = 2;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	if (r == 0)
		trace_end(tr);
	return r;
}

/* ---- the summary ---- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The p-th percentile (nearest rank) of the sorted v[n]. */
static int64_t pct(const int64_t *v, size_t n, int p)
{
	size_t k = (n * (size_t)p + 99) / 100;

	return v[k ? k - 1 : 0];
}

/* A duration for people: "7 s", "0.5 s", "20 ms", "68.2 us", "150 ns". */
static const char *dur(char *buf, size_t n, int64_t ns, const char *us)
{
	const char *sign = ns < 0 ? "-" : "";
	double a = ns < 0 ? -(double)ns : (double)ns;

	if (a >= 1e9)
		snprintf(buf, n, "%s%.9g s", sign, a / 1e9);
	else if (a >= 1e6)
		snprintf(buf, n, "%s%.6g ms", sign, a / 1e6);
	else if (a >= 1e3)
		snprintf(buf, n, "%s%.4g %s", sign, a / 1e3, us);
	else
		snprintf(buf, n, "%s%.0f ns", sign, a);
	return buf;
}

static void sorted_late(struct timer *tm)
{
	if (tm->nlate) /* else late is NULL, which qsort may not take */
		qsort(tm->late, tm->nlate, sizeof(*tm->late), cmp_i64);
}

static void summary(struct trace *tr, FILE *out)
{
	struct timer *tm;
	char a[64], b[32];
	int i;

	fprintf(out, "trace %s: %ld lines, %ld process%s, %d timer%s, "
	        "%.6f s from the first line to the last\n",
	        tr->file, tr->lines, tr->nprocs, tr->nprocs == 1 ? "" : "es",
	        tr->ntimers, tr->ntimers == 1 ? "" : "s",
	        (double)(tr->t1 - tr->t0) / NS);
	if (tr->nadv)
		fprintf(out, "virtual time: %zu moves\n", tr->nadv);
	if (!tr->ntimers)
		fprintf(out, "no timer in the trace\n");
	for (tm = tr->first; tm; tm = tm->next) {
		sorted_late(tm);
		fprintf(out, "\ntimer %d  pid %d  fd %d  %s  %s%s\n", tm->id,
		        tm->pid, tm->fd, tm->clock, tm->flags,
		        tm->inherited ? "  (not created in the trace: "
		                        "inherited, or the trace began later)"
		                      : "");
		fprintf(out, "  life          %.6f s to %.6f s%s\n",
		        (double)(tm->created - tr->t0) / NS,
		        (double)((tm->closed >= 0 ? tm->closed : tr->t1) - tr->t0) /
		                NS,
		        tm->closed >= 0 ? " (closed)" : " (still open)");
		fprintf(out, "  armed         %ld (relative %ld, absolute %ld), "
		        "disarmed %ld, failed %ld",
		        tm->arms, tm->arms - tm->arms_abs, tm->arms_abs,
		        tm->disarms, tm->sfail);
		if (tm->last_value < 0)
			snprintf(a, sizeof(a), "?");
		else if (tm->absolute)
			snprintf(a, sizeof(a), "at %" PRId64 ".%09" PRId64
			         " s (absolute)", tm->last_value / NS,
			         tm->last_value % NS);
		else
			dur(a, sizeof(a), tm->last_value, "us");
		if (tm->arms)
			fprintf(out, "; last %s, interval %s", a,
			        tm->last_interval < 0 ? "?"
			        : tm->last_interval ? dur(b, sizeof(b),
			                                  tm->last_interval, "us")
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
			        (double)pct(tm->late, tm->nlate, 50) / 1e3,
			        (double)pct(tm->late, tm->nlate, 90) / 1e3,
			        (double)pct(tm->late, tm->nlate, 99) / 1e3,
			        (double)tm->late[tm->nlate - 1] / 1e3, tm->early,
			        tm->nlate);
		else
			fprintf(out, "  lateness      no read with a count of "
			        "a known deadline\n");
		fprintf(out, "  other         %ld queries, %ld duplicates\n",
		        tm->queries, tm->dups);
	}
}

/* ---- the picture: SVG, alone or in an HTML page ---- */

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
	if (step >= NS)
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
		           dur(w, sizeof(w), iv, "\xc2\xb5s"));
		fprintf(p->out, "</rect>\n");
		snprintf(buf, sizeof(buf), "due every %s (%ld)",
		         dur(w, sizeof(w), iv, "\xc2\xb5s"), total);
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
		fprintf(p->out, " %s", dur(iv, sizeof(iv), tm->last_interval,
		                           "\xc2\xb5s"));
	fprintf(p->out, "</text>\n<text x=\"10\" y=\"%.1f\" class=\"what\">",
	        y0 + 56);
	fprintf(p->out, "%ld arm%s, %ld read%s, %" PRIu64 " expiration%s",
	        tm->arms, tm->arms == 1 ? "" : "s", tm->reads,
	        tm->reads == 1 ? "" : "s", tm->expirations,
	        tm->expirations == 1 ? "" : "s");
	if (tm->nlate)
		fprintf(p->out, ", late p50 %s",
		        dur(v, sizeof(v), pct(tm->late, tm->nlate, 50),
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
			dur(v, sizeof(v), e->a, "\xc2\xb5s");
			dur(iv, sizeof(iv), e->b, "\xc2\xb5s");
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
				         dur(buf, sizeof(buf), e->c - e->t,
				             "\xc2\xb5s"));
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

static void picture(struct trace *tr, FILE *out, int html)
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
			           dur(d, sizeof(d), tr->adv[i].d, "\xc2\xb5s"),
			           (double)(tr->adv[i].t - p.t0) / 1e9);
			fprintf(out, "</line>\n");
			snprintf(l, sizeof(l), "%s+%s", i ? "" : "moved ", d);
			label(&p, x - 10, 2, "vlbl", l);
		}
	}
	for (tm = tr->first, i = 0; tm; tm = tm->next, i++) {
		sorted_late(tm);
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
			           dur(l, sizeof(l), e->t - e->c, "\xc2\xb5s"),
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
				summary(tr, m);
				fclose(m);
				esc(out, text);
				free(text);
			}
		}
		fprintf(out, "</pre>\n</body></html>\n");
	}
}

/* ---- the command ---- */

enum { O_HTML, O_SVG };
static const struct tfd_opt opts[] = {
	[O_HTML] = { "html", "OUT",
	             "also write the timeline as an HTML page to OUT" },
	[O_SVG] = { "svg", "OUT", "also write the timeline as SVG to OUT" },
	{ NULL, NULL, NULL },
};

static int tfd_cmd_trace(int argc, char **argv);

const struct tfd_cmd tfd_trace_cmd = {
	.name = "trace",
	.operands = "FILE",
	.summary = "summarize and draw the trace of tfd exec --trace",
	.text = "Reads FILE, the lines of tfd exec --trace FILE (- reads\n"
	        "standard input), and prints per timer: its clock and flags,\n"
	        "how often it was armed and disarmed, its expirations (read, and\n"
	        "due by the model), its reads and the counts they returned, and\n"
	        "the lateness of each read against the deadline armed (p50, p90,\n"
	        "p99, max; early: before the deadline, a bug).  --html and --svg\n"
	        "draw a timeline: one lane per timer with its arms, deadlines,\n"
	        "reads and lateness, on a time axis.",
	.opts = opts,
	.fn = tfd_cmd_trace,
};

static int write_picture(struct trace *tr, const char *file, int html)
{
	FILE *f = fopen(file, "w");

	if (!f) {
		fprintf(stderr, "tfd: trace: %s: %s\n", file, strerror(errno));
		return 1;
	}
	picture(tr, f, html);
	if (fclose(f) != 0) {
		fprintf(stderr, "tfd: trace: %s: %s\n", file, strerror(errno));
		return 1;
	}
	return 0;
}

static int tfd_cmd_trace(int argc, char **argv)
{
	const char *html = NULL, *svg = NULL;
	struct tfd_args a;
	struct trace tr;
	int o, r;

	tfd_args_init(&a, &tfd_trace_cmd, argc, argv);
	while ((o = tfd_opt_next(&a)) >= 0) {
		if (!*a.val)
			return tfd_cmd_bad("--%s needs a file name",
			                   opts[o].name);
		if (o == O_HTML)
			html = a.val;
		else
			svg = a.val;
	}
	if (o != TFD_OPT_END)
		return tfd_opt_status(o);
	if (a.argc == 0)
		return tfd_cmd_bad("%s", "missing FILE: the trace to read");
	if (a.argc > 1)
		return tfd_cmd_bad("unexpected argument '%s'", a.argv[1]);
	r = trace_read(&tr, a.argv[0]);
	if (r == 0) {
		summary(&tr, stdout);
		if (html)
			r = write_picture(&tr, html, 1);
		if (svg && r == 0)
			r = write_picture(&tr, svg, 0);
	}
	trace_free(&tr);
	return r;
}
