/* SPDX-License-Identifier: MIT */
/*
 * parse.c - the lines of a trace (trace.h), one by one, into the model:
 *
 *   TIME PID FD CALL(ARGS) [EXTRA] = RESULT
 *
 * tfd-preload(7), TRACE, says what each call's line holds.  A line that is
 * not one ends the reading with a message that names it.
 */
#define _GNU_SOURCE
#include "cmd.h"
#include "trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* "S.NNNNNNNNN" into ns; the end, or NULL.  Seconds beyond what int64_t
 * ns hold (about 292 years) are NULL, or with far INT64_MAX ns: a
 * timespec's seconds, which the arguments show, go up to INT64_MAX. */
static const char *secs(const char *p, int64_t *ns, int far)
{
	uint64_t s = 0;
	int64_t f;
	const char *q;
	int k;

	for (k = 0; *p >= '0' && *p <= '9' && k < 19; p++, k++)
		s = s * 10 + (uint64_t)(*p - '0');
	if (k == 0 || *p++ != '.' || !(q = num(p, &f)) || q - p != 9)
		return NULL;
	if (s <= (uint64_t)(INT64_MAX / TFD_NSEC - 1))
		*ns = (int64_t)s * TFD_NSEC + f;
	else if (far && s <= INT64_MAX)
		*ns = INT64_MAX; /* "292 years or more" */
	else
		return NULL;
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
	return secs(p, ns, 1);
}

/* Skips "s" at p; the end, or NULL. */
static const char *lit(const char *p, const char *s)
{
	size_t n = strlen(s);

	return p && !strncmp(p, s, n) ? p + n : NULL;
}

/* Bytes of a trace line: printable ASCII and tab. */
static int text(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((p[i] < 0x20 && p[i] != '\t') || p[i] > 0x7e)
			return 0;
	return 1;
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
	trace_arm(tm, t, v, iv, r, absolute);
	return 0;
}

/* A trace line cut into its parts (split_line). */
struct line {
	int64_t t, pid, fd, res; /* fd -1: "-" */
	char *call, *args;       /* "CALL", "ARGS) [EXTRA]" */
	const char *err;         /* the error's name when not ok */
	int ok;
};

/* "TIME PID FD CALL(ARGS) [EXTRA] = RESULT" into l, the line cut up
 * (NULs after CALL and before " = "): 0, or -1 if it is not one. */
static int split_line(char *line, struct line *l)
{
	char *p = line, *eq, *paren;
	const char *q;
	size_t len = strlen(line);

	l->fd = -1;
	l->res = 0;
	l->err = NULL;
	if (len && line[len - 1] == '\n')
		line[--len] = 0;
	if (!(q = secs(p, &l->t, 0)) || *q != ' ' ||
	    !(q = num(q + 1, &l->pid)) || *q != ' ')
		return -1;
	q++;
	if (*q == '-')
		q++;
	else if (!(q = num(q, &l->fd)))
		return -1;
	if (*q++ != ' ')
		return -1;
	l->call = line + (q - line);
	paren = strchr(l->call, '(');
	eq = strstr(l->call, " = ");
	if (!paren || !eq || paren > eq)
		return -1;
	while (strstr(eq + 3, " = "))
		eq = strstr(eq + 3, " = ");
	q = eq + 3;
	if (!strncmp(q, "-1 ", 3) && q[3]) {
		l->err = q + 3;
		l->ok = 0;
	} else if ((q = num(q, &l->res)) && *q == 0) {
		l->ok = 1;
	} else {
		return -1;
	}
	*paren = 0;
	l->args = paren + 1;
	*eq = 0;
	return 0;
}

/* "timerfd_create(CLOCK, FLAGS) = FD": a new timer. */
static int on_create(struct trace *tr, const struct line *l)
{
	char *c = strchr(l->args, ','), *f = c ? c + 2 : NULL, *e;
	struct timer *tm;

	if (!l->ok || l->fd < 0)
		return 0; /* failed: no timer */
	if (!c || c[1] != ' ' || !(e = strrchr(f, ')')))
		return -1;
	if (!text(l->args, (size_t)(e - l->args)))
		return -1; /* the names are shown: text only */
	tm = trace_new_timer(tr, (int)l->pid, (int)l->res, l->t);
	snprintf(tm->clock, sizeof(tm->clock), "%.*s", (int)(c - l->args),
	         l->args);
	snprintf(tm->flags, sizeof(tm->flags), "%.*s", (int)(e - f), f);
	return 0;
}

/* "exec(PROG) = 0": the program of the pid. */
static int on_exec(struct trace *tr, const struct line *l)
{
	char *e = strrchr(l->args, ')');

	if (!e || !text(l->args, (size_t)(e - l->args)))
		return -1;
	if (l->ok)
		trace_program(tr, (int)l->pid, l->args,
		              (size_t)(e - l->args));
	return 0;
}

/* dup, dup2, dup3, fcntl: the new number names the timer; dup2 of
 * another descriptor over a timer's number takes it away. */
static void on_dup(struct trace *tr, const struct line *l)
{
	int pid = (int)l->pid, fd = (int)l->fd, res = (int)l->res;
	struct timer *tm = trace_lookup(tr, pid, fd);

	if (l->ok && tm && res != fd) {
		tm->dups++;
		trace_name(tr, pid, res, tm, l->t);
	} else if (l->ok && !tm && res != fd) {
		trace_unname(tr, pid, res, l->t);
	}
}

/* "read(FD, 8) [count N] = 8", or a read that failed. */
static int on_read(struct timer *tm, const struct line *l)
{
	char *c = strstr(l->args, ") [count ");
	int64_t v;

	if (l->ok && l->res == 8 && c && num(c + 9, &v))
		trace_read_count(tm, l->t, (uint64_t)v);
	else if (l->ok)
		return -1;
	else
		trace_read_failed(tm, l->t, l->err);
	return 0;
}

static int is_dup(const char *call)
{
	return !strcmp(call, "dup") || !strcmp(call, "dup2") ||
	       !strcmp(call, "dup3") || !strcmp(call, "fcntl");
}

static int parse_line(struct trace *tr, char *line)
{
	struct line l;
	struct timer *tm;
	int64_t v;

	if (split_line(line, &l) < 0)
		return -1;
	trace_seen(tr, l.t, (int)l.pid);
	if (!strcmp(l.call, "virtual-advance")) {
		if (*l.args == '+' && arg_time(l.args + 1, &v))
			trace_advance(tr, l.t, v);
		return 0;
	}
	if (!strcmp(l.call, "timerfd_create"))
		return on_create(tr, &l);
	if (!strcmp(l.call, "exec")) /* "exec(PROG)" */
		return on_exec(tr, &l);
	if (l.fd < 0) {
		tr->other++;
		return 0;
	}
	if (!strcmp(l.call, "close")) {
		if (l.ok)
			trace_unname(tr, (int)l.pid, (int)l.fd, l.t);
		return 0;
	}
	if (is_dup(l.call)) {
		on_dup(tr, &l);
		return 0;
	}
	tm = trace_timer_of(tr, (int)l.pid, (int)l.fd, l.t);
	if (!strcmp(l.call, "timerfd_settime"))
		return on_settime(tm, l.t, l.args, l.ok);
	if (!strcmp(l.call, "timerfd_gettime"))
		tm->queries++;
	else if (!strcmp(l.call, "read"))
		return on_read(tm, &l);
	else
		tr->other++; /* write, ioctl, and what a later version adds */
	return 0;
}

/* The line that is not a trace line, as the message shows it: its start,
 * or "binary data" when it holds other bytes than text (which could be a
 * terminal's escapes): never echoed. */
static void not_a_line(const char *file, long lineno, const char *line,
                       size_t len)
{
	char shown[128], excerpt[64] = "binary data";
	size_t k = len, m, i;

	while (k && (line[k - 1] == '\n' || line[k - 1] == '\r'))
		k--; /* the end of the line is not shown */
	if (text(line, k)) {
		m = k < 56 ? k : 56;
		snprintf(excerpt, sizeof(excerpt), "'%.*s%s'", (int)m, line,
		         k > m ? "..." : "");
		for (i = 0; excerpt[i]; i++)
			if (excerpt[i] == '\t')
				excerpt[i] = ' ';
	}
	fprintf(stderr, "tfd: trace: %s:%ld: not a trace line (TIME PID FD "
	        "CALL(ARGS) = RESULT): %s\n",
	        tfd_printable(file, shown, sizeof(shown)), lineno, excerpt);
}

int trace_read(struct trace *tr, const char *file)
{
	FILE *f = !strcmp(file, "-") ? stdin : fopen(file, "r");
	char *line = NULL, *copy = NULL, shown[128];
	size_t cap = 0;
	long lineno = 0;
	ssize_t n;
	int r = 0;

	trace_init(tr, file);
	if (!f) {
		fprintf(stderr, "tfd: trace: %s: %s\n",
		        tfd_printable(file, shown, sizeof(shown)),
		        strerror(errno));
		return 1;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		/* parse_line cuts the line up: the message shows a copy */
		free(copy);
		copy = malloc((size_t)n + 1);
		if (!copy) {
			fprintf(stderr, "tfd: trace: out of memory\n");
			r = 1;
			break;
		}
		memcpy(copy, line, (size_t)n + 1);
		if ((size_t)n != strlen(line) || parse_line(tr, line)) {
			not_a_line(file, lineno, copy, (size_t)n);
			r = 1;
			break;
		}
	}
	if (r == 0 && ferror(f)) {
		fprintf(stderr, "tfd: trace: %s: %s\n",
		        tfd_printable(file, shown, sizeof(shown)),
		        strerror(errno));
		r = 1;
	}
	free(line);
	free(copy);
	if (f != stdin)
		fclose(f);
	if (r == 0)
		trace_end(tr);
	return r;
}
