/* SPDX-License-Identifier: MIT */
/*
 * model.c - what tfd trace knows of a trace (trace.h): its timers, the
 * numbers that name them in each process, their events; the arming in
 * force of each and the expirations it makes due; the lateness of each
 * read against the deadline of the last expiration it counted.
 */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

void *trace_grow(void *p, size_t *cap, size_t n, size_t size)
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

struct timer *trace_lookup(struct trace *tr, int pid, int fd)
{
	struct name *n;

	for (n = *slot(tr, pid, fd); n; n = n->next)
		if (n->pid == pid && n->fd == fd)
			return n->t;
	return NULL;
}

void trace_unname(struct trace *tr, int pid, int fd, int64_t t)
{
	struct name **p, *n;

	for (p = slot(tr, pid, fd); (n = *p); p = &n->next) {
		if (n->pid == pid && n->fd == fd) {
			*p = n->next;
			if (--n->t->numbers == 0 && n->t->closed < 0) {
				struct ev e = { t, EV_CLOSE, 0, 0, 0, 0 };

				n->t->closed = t;
				n->t->ev = trace_grow(n->t->ev, &n->t->cap,
				                      n->t->nev, sizeof(e));
				n->t->ev[n->t->nev++] = e;
			}
			free(n);
			return;
		}
	}
}

void trace_name(struct trace *tr, int pid, int fd, struct timer *t,
                int64_t now)
{
	struct name *n;

	trace_unname(tr, pid, fd, now);
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

struct timer *trace_new_timer(struct trace *tr, int pid, int fd, int64_t t)
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
	trace_name(tr, pid, fd, tm, t);
	return tm;
}

struct timer *trace_timer_of(struct trace *tr, int pid, int fd, int64_t t)
{
	struct timer *tm = trace_lookup(tr, pid, fd);

	if (!tm) {
		tm = trace_new_timer(tr, pid, fd, t);
		tm->inherited = 1;
	}
	return tm;
}

void trace_add_ev(struct timer *tm, int64_t t, enum ev_kind k, int64_t a,
                  int64_t b, int64_t c, int flag)
{
	struct ev e = { t, k, flag, a, b, c };

	tm->ev = trace_grow(tm->ev, &tm->cap, tm->nev, sizeof(e));
	tm->ev[tm->nev++] = e;
}

static void add_late(struct timer *tm, int64_t late)
{
	tm->late = trace_grow(tm->late, &tm->caplate, tm->nlate,
	                      sizeof(*tm->late));
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

/* a + b, b >= 0, at most INT64_MAX: a time 292 years or more away is
 * never reached. */
static int64_t later(int64_t a, int64_t b)
{
	return b > INT64_MAX - a ? INT64_MAX : a + b;
}

void trace_arm(struct timer *tm, int64_t t, int64_t v, int64_t iv, int64_t r,
               int absolute)
{
	end_arming(tm, t);
	if (v == 0) {
		tm->disarms++;
		trace_add_ev(tm, t, EV_DISARM, 0, iv, 0, 0);
		return;
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
		tm->first = later(t, r);
	else if (r == 0)
		tm->first = t; /* due already */
	else
		tm->first = absolute ? -1 : later(t, v);
	tm->due_unknown |= tm->first < 0;
	trace_add_ev(tm, t, EV_ARM, v, iv, tm->first,
	             v < 0 || iv < 0 ? -1 : absolute);
}

void trace_read_count(struct timer *tm, int64_t t, uint64_t count)
{
	trace_add_ev(tm, t, EV_READ, (int64_t)count, 0, on_read(tm, t, count),
	             0);
}

void trace_read_failed(struct timer *tm, int64_t t, const char *err)
{
	int canceled = !strcmp(err, "ECANCELED");

	if (!strcmp(err, "EAGAIN")) {
		tm->eagain++;
		trace_add_ev(tm, t, EV_EAGAIN, 0, 0, 0, 0);
		return;
	}
	tm->rfail++;
	tm->cancels += canceled;
	trace_add_ev(tm, t, EV_RFAIL, canceled, 0, 0, 0);
}

void trace_init(struct trace *tr, const char *file)
{
	memset(tr, 0, sizeof(*tr));
	tr->file = file;
	tr->tail = &tr->first;
}

void trace_seen(struct trace *tr, int64_t t, int pid)
{
	int i;

	tr->lines++;
	if (tr->lines == 1 || t < tr->t0)
		tr->t0 = t;
	if (t > tr->t1)
		tr->t1 = t;
	for (i = 0; i < tr->npids && tr->pids[i] != pid; i++)
		;
	if (i == tr->npids) {
		tr->nprocs++;
		if (tr->npids < 64)
			tr->pids[tr->npids++] = pid;
	}
}

void trace_advance(struct trace *tr, int64_t t, int64_t d)
{
	tr->adv = trace_grow(tr->adv, &tr->capadv, tr->nadv, sizeof(*tr->adv));
	tr->adv[tr->nadv].t = t;
	tr->adv[tr->nadv++].d = d;
}

void trace_program(struct trace *tr, int pid, const char *path, size_t len)
{
	struct prog *p = NULL;
	size_t i, from = 0;

	for (i = 0; i < len; i++)
		if (path[i] == '/' && i + 1 < len)
			from = i + 1;
	for (i = 0; i < tr->nprogs && !p; i++)
		if (tr->progs[i].pid == pid)
			p = &tr->progs[i]; /* it ran another program */
	if (!p) {
		tr->progs = trace_grow(tr->progs, &tr->capprogs, tr->nprogs,
		                       sizeof(*tr->progs));
		p = &tr->progs[tr->nprogs++];
		p->pid = pid;
	}
	snprintf(p->name, sizeof(p->name), "%.*s", (int)(len - from),
	         path + from);
}

const char *trace_program_name(const struct trace *tr, int pid)
{
	size_t i;

	for (i = 0; i < tr->nprogs; i++)
		if (tr->progs[i].pid == pid)
			return tr->progs[i].name;
	return NULL;
}

void trace_end(struct trace *tr)
{
	struct timer *tm;

	for (tm = tr->first; tm; tm = tm->next)
		end_arming(tm, tm->closed >= 0 ? tm->closed : tr->t1);
}

void trace_free(struct trace *tr)
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
	free(tr->progs);
}

int64_t trace_arming_until(const struct timer *tm, size_t i, int64_t end)
{
	size_t j;

	for (j = i + 1; j < tm->nev; j++)
		if (tm->ev[j].kind == EV_ARM || tm->ev[j].kind == EV_DISARM ||
		    tm->ev[j].kind == EV_CLOSE)
			return tm->ev[j].t;
	return end;
}
