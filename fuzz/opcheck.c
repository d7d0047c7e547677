/* SPDX-License-Identifier: MIT */
/*
 * opcheck.c - see opcheck.h.
 *
 * The reference model is written from SPEC.md and Linux's fs/timerfd.c, not
 * from src/: times are exact 128-bit integers, a value's nanoseconds
 * saturate as Linux's timespec64_to_ktime() does, and the count of a timer
 * is the number of its expiries E0 + k*I at or before the time of the call.
 *
 * Two flavours of the same model:
 *   - system clocks: E0 of a relative arm is known to lie between clock
 *     readings taken before and after the call, and so is the clock a read
 *     or query looks at; counts consumed since the set are an interval too.
 *     A result must fall inside the bounds: never early, nothing lost.
 *   - virtual clock: every time is exact and every result is compared
 *     exactly; the clocks are moved (advance, suspend, set) by operations.
 *
 * The same model is also checked against the kernel backend, Linux's own
 * timerfd (as the system clocks flavour, without the alarm clocks, which
 * root may use there, and without the engine's simulated clock sets).
 *
 * Operations, a byte each (in one of four, any argument may be invalid):
 * tfd_create, tfd_settime, tfd_gettime, tfd_read (lengths 0 to 64, NULL),
 * read(2), poll(2), tfd_close, timerfd() in every shape, fcntl(O_NONBLOCK),
 * on NSLOT timers and on closed, negative, huge and non-timer descriptors;
 * on the virtual clock tfd_virtual_advance/suspend/set_realtime/now, else
 * sleeps, "the clock was set" (tfd_engine_clock_was_set()) and the virtual
 * calls that must fail with ENOTSUP.  A call that may block is made only
 * when the model says it returns within WAIT_MAX.  One operation in five
 * is on timer sets, against a model of its own (opcheck_set.c).
 */
#define _GNU_SOURCE
#include "opcheck_int.h"

#include "engine/hooks.h" /* tfd_engine_clock_was_set() */
#include "tfd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static const clockid_t base_clock[NB] = { CLOCK_MONOTONIC, CLOCK_REALTIME,
	                                  CLOCK_BOOTTIME };

struct opcheck_state S;

static opcheck_fail_fn fail_fn;

void opcheck_on_fail(opcheck_fail_fn fn)
{
	fail_fn = fn;
}


/* ---- reporting ---- */

const char *ename(int e)
{
	const char *s = e == SENTINEL ? "unchanged" : strerrorname_np(e);

	return s ? s : "?";
}

static void default_fail(const char *report)
{
	fputs(report, stderr);
	abort();
}

static char report[4096];

/* The last operations into report; its length. */
static size_t trace(void)
{
	unsigned long i = S.opno >= TRACE ? S.opno - TRACE + 1 : 1;
	size_t n;

	n = (size_t)snprintf(report, sizeof(report),
	                     "opcheck: %s, last operations:\n",
	                     S.virt ? "virtual clock" : S.kern ? "kernel backend"
	                                                 : "system clocks");
	for (; i <= S.opno && n < sizeof(report); i++)
		n += (size_t)snprintf(report + n, sizeof(report) - n,
		                      "  #%lu %s\n", i, S.trace[i % TRACE]);
	return n < sizeof(report) ? n : sizeof(report) - 1;
}

const char *opcheck_trace(void)
{
	trace();
	return report;
}

void fail(const char *fmt, ...)
{
	char *buf = report;
	size_t n = trace();
	va_list ap;

	if (n < sizeof(report) - 1) {
		va_start(ap, fmt);
		n += (size_t)vsnprintf(buf + n, sizeof(report) - n, fmt, ap);
		va_end(ap);
	}
	if (n < sizeof(report) - 1)
		strcat(buf, "\n");
	(fail_fn ? fail_fn : default_fail)(buf);
	abort();
}

void note(const char *fmt, ...)
{
	va_list ap;

	S.opno++;
	va_start(ap, fmt);
	vsnprintf(S.trace[S.opno % TRACE], sizeof(S.trace[0]), fmt, ap);
	va_end(ap);
	S.st->ops++;
}

void skip(void)
{
	S.st->ops--;
	S.st->skipped++;
}

/* A call returned r with errno e; want_e 0 means success with want_r. */
void expect_result(const char *what, long r, int e, long want_r,
                          int want_e)
{
	if (want_e) {
		EXPECT(r == -1 && e == want_e,
		       "%s: got %ld (%s), want -1 (%s)", what, r, ename(e),
		       ename(want_e));
		S.st->errors++;
		S.st->cancels += want_e == ECANCELED;
	} else
		EXPECT(r == want_r && e == SENTINEL,
		       "%s: got %ld (errno %s), want %ld with errno unchanged",
		       what, r, ename(e), want_r);
}

/* ---- the model's arithmetic ---- */

int ts_ok(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < NS;
}

/* Nanoseconds of a valid timespec; Linux's rule: KTIME_MAX from
 * KTIME_SEC_MAX seconds on. */
int64_t ts_ns(const struct timespec *ts)
{
	if (ts->tv_sec >= INT64_MAX / NS)
		return INT64_MAX;
	return (int64_t)ts->tv_sec * NS + ts->tv_nsec;
}

int64_t add_sat(int64_t a, int64_t b)
{
	i128 s = (i128)a + b;

	return s > INT64_MAX ? INT64_MAX : s < 0 ? 0 : (int64_t)s;
}

uint64_t u_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Expiries e0 + k*iv (k >= 0; only k = 0 when iv is 0) at or before t. */
uint64_t due(int64_t e0, int64_t iv, int64_t t)
{
	if (t < e0)
		return 0;
	if (!iv)
		return 1;
	return (uint64_t)(((i128)t - e0) / iv) + 1;
}

int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)((i128)ts->tv_sec * NS + ts->tv_nsec);
}

int base_of(int clock, int absolute)
{
	if (clock == CLOCK_REALTIME)
		return absolute ? B_REAL : B_MONO;
	return clock == CLOCK_BOOTTIME ? B_BOOT : B_MONO;
}

int64_t clk(int b)
{
	struct timespec ts;

	if (S.virt)
		return S.vnow[b];
	clock_gettime(base_clock[b], &ts);
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

void span_lo(struct span *sp)
{
	int b;

	for (b = 0; b < NB; b++)
		sp->lo[b] = clk(b);
}

void span_hi(struct span *sp)
{
	int b;

	for (b = 0; b < NB; b++)
		sp->hi[b] = clk(b);
}

/* ---- the model's timers ---- */

struct mt *by_fd(int fd)
{
	int i;

	for (i = 0; i < NSLOT; i++)
		if (S.t[i].open && S.t[i].fd == fd)
			return &S.t[i];
	return NULL;
}

/* 0 for a timer of the model, else the errno the library must give: the
 * system says whether the number is open (the library's own descriptors
 * are not in the model). */
static int fd_expect(int fd)
{
	if (by_fd(fd))
		return 0;
	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return EBADF;
	return EINVAL;
}

/* Virtual clock: count what is due at the timer's clock now. */
static void v_eval(struct mt *t)
{
	int64_t now = S.vnow[t->base];
	i128 k;

	if (!t->next || t->next > now)
		return;
	if (!t->iv) {
		t->pend = u_add(t->pend, 1);
		t->next = 0;
		return;
	}
	k = ((i128)now - t->next) / t->iv + 1;
	t->pend = u_add(t->pend, (uint64_t)k);
	t->next += k * t->iv; /* past INT64_MAX: never again */
}

static void v_eval_all(void)
{
	int i;

	for (i = 0; i < NSLOT; i++)
		if (S.t[i].open)
			v_eval(&S.t[i]);
}

/* System clocks: expirations due by the call, at least and at most. */
static uint64_t x_min(const struct mt *t, const struct span *sp)
{
	return t->armed ? due(t->e_hi, t->iv, sp->lo[t->base]) : 0;
}

static uint64_t x_max(const struct mt *t, const struct span *sp)
{
	return t->armed ? due(t->e_lo, t->iv, sp->hi[t->base]) : 0;
}

/* The count a read during sp may find, at least and at most. */
static uint64_t pend_min(const struct mt *t, const struct span *sp)
{
	uint64_t x;

	if (S.virt)
		return u_add(t->pend, t->extra);
	x = x_min(t, sp);
	return u_add(x > t->c_hi ? x - t->c_hi : 0, t->extra);
}

static uint64_t pend_max(const struct mt *t, const struct span *sp)
{
	uint64_t x;

	if (S.virt)
		return u_add(t->pend, t->extra);
	x = x_max(t, sp);
	EXPECT(x >= t->c_lo, "model: consumed %llu > due %llu",
	       (unsigned long long)t->c_lo, (unsigned long long)x);
	return u_add(x - t->c_lo, t->extra);
}

/* it_value a query during sp may report, at least and at most. */
static void rem_bounds(const struct mt *t, const struct span *sp,
                       int64_t *lo, int64_t *hi)
{
	int64_t t0 = sp->lo[t->base], t1 = sp->hi[t->base];

	if (S.virt) {
		i128 next = t->next > INT64_MAX ? INT64_MAX : t->next;

		*lo = *hi = t->next ? (int64_t)(next - t0) : 0;
	} else if (!t->armed) {
		*lo = *hi = 0;
	} else if (t1 < t->e_lo) {
		*lo = t->e_lo - t1;
		*hi = t->e_hi - t0;
	} else if (!t->iv) {
		*lo = 0;
		*hi = t0 < t->e_hi ? t->e_hi - t0 : 0;
	} else {
		/* Linux forwards a periodic timer at one clock reading and
		 * takes the remaining time at another: 0 may come out. */
		*lo = S.kern ? 0 : 1;
		*hi = t0 >= t->e_hi || t->e_hi - t0 < t->iv ? t->iv
		                                            : t->e_hi - t0;
	}
}

static void check_query(const char *what, const struct mt *t,
                        const struct span *sp, const struct itimerspec *got)
{
	int64_t lo, hi, v;

	EXPECT(ts_ok(&got->it_value) && ts_ok(&got->it_interval),
	       "%s: not normalized: {%ld, %ld} {%ld, %ld}", what,
	       (long)got->it_value.tv_sec, got->it_value.tv_nsec,
	       (long)got->it_interval.tv_sec, got->it_interval.tv_nsec);
	EXPECT(ns_of(&got->it_interval) == t->iv,
	       "%s: interval %lld, want %lld", what,
	       (long long)ns_of(&got->it_interval), (long long)t->iv);
	rem_bounds(t, sp, &lo, &hi);
	v = ns_of(&got->it_value);
	EXPECT(v >= lo && v <= hi, "%s: it_value %lld ns, want [%lld, %lld]",
	       what, (long long)v, (long long)lo, (long long)hi);
}

/* Every timer and set asking for it is cancelled: the clock was set. */
static void cancel_all(void)
{
	int i;

	for (i = 0; i < NSLOT; i++) {
		if (S.t[i].open && S.t[i].cos) {
			S.t[i].cancelled = 1;
			S.t[i].extra = u_add(S.t[i].extra, 1);
		}
	}
	opcheck_set_clock_set();
}

/* The timer is set (SPEC 1, 2): flags and nv were accepted.  Returns the
 * errno the call must give: ECANCELED or 0. */
static int model_set(struct mt *t, int flags, const struct itimerspec *nv,
                     const struct span *sp)
{
	int absolute = !!(flags & TFD_TIMER_ABSTIME);
	int64_t v = ts_ns(&nv->it_value);

	t->cos = t->clock == CLOCK_REALTIME && absolute &&
	         (flags & TFD_TIMER_CANCEL_ON_SET);
	if (!t->cos)
		t->cancelled = 0;
	t->extra = 0;
	t->iv = ts_ns(&nv->it_interval);
	t->base = base_of(t->clock, absolute);
	t->armed = v != 0;
	t->e_lo = !v ? 0 : absolute ? v : add_sat(sp->lo[t->base], v);
	t->e_hi = !v ? 0 : absolute ? v : add_sat(sp->hi[t->base], v);
	t->c_lo = t->c_hi = 0;
	t->next = t->e_lo;
	t->pend = 0;
	if (S.virt)
		v_eval(t);
	if (v && t->cancelled) {
		t->cancelled = 0;
		return ECANCELED;
	}
	return 0;
}

/* A tfd_read during sp took n: every expiration due by its clock. */
static void took_all(struct mt *t, const struct span *sp, uint64_t n)
{
	uint64_t lo = u_add(t->c_lo, n), hi = u_add(t->c_hi, n);
	uint64_t xl = x_min(t, sp), xh = x_max(t, sp);

	if (S.virt) {
		EXPECT(n == t->pend, "read %llu, want %llu",
		       (unsigned long long)n, (unsigned long long)t->pend);
		t->pend = 0;
		return;
	}
	EXPECT(lo <= xh, "read %llu: %llu since the set, the clock allows at "
	       "most %llu (early)", (unsigned long long)n,
	       (unsigned long long)lo, (unsigned long long)xh);
	EXPECT(hi >= xl, "read %llu: %llu since the set, %llu were due "
	       "(lost)", (unsigned long long)n, (unsigned long long)hi,
	       (unsigned long long)xl);
	t->c_lo = lo > xl ? lo : xl;
	t->c_hi = hi < xh ? hi : xh;
}

/* A read(2) during sp took n: what the engine had posted. */
static void took_posted(struct mt *t, const struct span *sp, uint64_t n)
{
	uint64_t xh = x_max(t, sp), e;

	EXPECT(n >= t->extra, "read(2) %llu, the clock was set %llu times",
	       (unsigned long long)n, (unsigned long long)t->extra);
	e = n - t->extra;
	t->extra = 0;
	if (S.virt) {
		EXPECT(e == t->pend, "read(2) %llu, want %llu",
		       (unsigned long long)n, (unsigned long long)t->pend);
		t->pend = 0;
		return;
	}
	EXPECT(u_add(t->c_lo, e) <= xh, "read(2) %llu: %llu since the set, "
	       "the clock allows at most %llu (early)", (unsigned long long)n,
	       (unsigned long long)u_add(t->c_lo, e), (unsigned long long)xh);
	t->c_lo = u_add(t->c_lo, e);
	t->c_hi = u_add(t->c_hi, e) < xh ? u_add(t->c_hi, e) : xh;
}

/* ECANCELED: everything due by the read's clock is discarded. */
static void discard_all(struct mt *t, const struct span *sp)
{
	uint64_t xl = x_min(t, sp), xh = x_max(t, sp);

	if (!S.virt) {
		EXPECT(xh >= t->c_lo, "model: consumed %llu > due %llu",
		       (unsigned long long)t->c_lo, (unsigned long long)xh);
		t->c_lo = xl > t->c_lo ? xl : t->c_lo;
		t->c_hi = xh;
	}
	t->pend = 0;
	t->extra = 0;
	t->cancelled = 0;
}

/* On the system's clocks, the next expiration not yet consumed comes
 * within WAIT_MAX of now for sure (a blocking call may wait for it). */
static int soon(const struct mt *t, int64_t now)
{
	if (S.virt || !t->armed || (!t->iv && t->c_hi > 0))
		return 0;
	return (i128)t->e_hi + (i128)t->c_hi * t->iv <= (i128)now + WAIT_MAX;
}

/* A blocking read of t may be made now: it will not wait long. */
static int may_block(const struct mt *t)
{
	struct span now;

	span_lo(&now);
	span_hi(&now);
	return pend_min(t, &now) > 0 || soon(t, now.lo[t->base]);
}

/* ---- decoding ---- */

unsigned in_u8(struct in *s)
{
	if (!s->n)
		return 0;
	s->n--;
	return *s->p++;
}

uint32_t in_u32(struct in *s)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++)
		v = v << 8 | in_u8(s);
	return v;
}

uint64_t in_u64(struct in *s)
{
	return (uint64_t)in_u32(s) << 32 | in_u32(s);
}

/* 1 in n in a wild operation; 0 otherwise (a byte is used either way). */
int odd(struct in *s, unsigned n)
{
	unsigned c = in_u8(s);

	return S.wild && c % n == 0;
}

static struct timespec ts_from(int64_t ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ns / NS);
	ts.tv_nsec = (long)(ns % NS);
	return ts;
}

/* Clock b's now plus d, which may be negative (then invalid as a time). */
static int64_t near_now(int b, int64_t d)
{
	i128 v = (i128)clk(b) + d;

	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* Any timespec: zero, small, far, huge, invalid, near a clock's now. */
struct timespec dec_ts(struct in *s, int b)
{
	static const struct timespec huge[] = {
		{ 9223372035, 999999999 }, { 9223372036, 0 },
		{ 9223372036, 854775807 }, { 9223372037, 0 },
		{ LONG_MAX, 999999999 },   { (time_t)1 << 40, 0 },
		{ (time_t)1 << 62, 5 },
	};
	static const struct timespec bad[] = {
		{ -1, 0 },       { 0, -1 },       { 0, 1000000000 },
		{ LONG_MIN, 0 }, { 0, LONG_MAX }, { 5, LONG_MIN },
		{ -5, 999999999 },
	};
	static const int64_t near[] = { -20 * NS, -NS, -1, 0, 1, MS, 3600 * NS };
	struct timespec ts = { 0, 0 };
	unsigned c = in_u8(s) % 16;

	if (!S.wild && (c == 8 || c == 11))
		c = 13; /* the invalid ones */
	switch (c) {
	case 2: case 3: ts.tv_nsec = 1 + (long)in_u8(s); break;
	case 4: case 5: ts.tv_nsec = (long)(in_u32(s) % (2 * MS)); break;
	case 6: ts.tv_sec = 3600 + in_u32(s) % (365 * 86400);
		ts.tv_nsec = (long)(in_u32(s) % NS); break;
	case 7: ts = PICK(s, huge); break;
	case 8: ts = PICK(s, bad); break;
	case 9: case 10: ts = ts_from(near_now(b, PICK(s, near))); break;
	case 11: ts.tv_sec = (time_t)in_u64(s);
		ts.tv_nsec = (long)in_u64(s); break;
	case 12: ts.tv_sec = in_u8(s) % 3;
		ts.tv_nsec = (long)(in_u32(s) % NS); break;
	case 13: case 14: case 15: ts.tv_nsec = (long)in_u8(s) * 10000; break;
	default: break;
	}
	return ts;
}

/* A step of the virtual clock: mostly small, sometimes anything. */
static struct timespec dec_step(struct in *s, int b)
{
	struct timespec ts = { 0, 0 };
	unsigned c = in_u8(s) % 16;

	if (c < 4)
		ts.tv_nsec = (long)(in_u8(s) * 1000 + in_u8(s));
	else if (c < 8)
		ts.tv_nsec = (long)(in_u32(s) % (10 * MS));
	else if (c < 11)
		ts = (struct timespec){ in_u8(s) % 4, (long)(in_u32(s) % NS) };
	else
		ts = dec_ts(s, b);
	return ts;
}

const char *ts_str(const struct timespec *ts, char *buf, size_t n)
{
	snprintf(buf, n, "{%lld,%ld}", (long long)ts->tv_sec, ts->tv_nsec);
	return buf;
}

/* A timer's descriptor mostly (an open one, mostly), else a number that
 * is closed, not a timer, negative or huge. */
static int dec_fd(struct in *s)
{
	static const int special[] = { -1, -2, INT_MIN, 1 << 20 };
	unsigned c = in_u8(s) % 16, i;

	if (!S.wild)
		c %= 8;
	if (c < 8) {
		for (i = 0; i < NSLOT; i++)
			if (S.t[(c + i) % NSLOT].open)
				return S.t[(c + i) % NSLOT].fd;
	}
	if (c < 12)
		return S.last_fd[c % NSLOT];
	if (c < 14)
		return special[in_u8(s) % 4];
	/* A kernel timerfd is not a timer of the engine; of the kernel
	 * backend it is, but not the model's. */
	return c == 14 || S.kern ? S.pipe_r : S.ktfd;
}

int dec_clock(struct in *s)
{
	static const int valid[] = { CLOCK_REALTIME, CLOCK_MONOTONIC,
		                     CLOCK_BOOTTIME };
	static const int other[] = { CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM,
		                     -1, 99, CLOCK_PROCESS_CPUTIME_ID,
		                     CLOCK_MONOTONIC_RAW, CLOCK_TAI, INT_MIN };
	unsigned c = in_u8(s);

	return c < 224 || !S.wild ? valid[c % 3] : other[c % 8];
}

/* A flag word from a table whose first nvalid entries are valid; in a
 * wild operation any entry, or now and then any bits at all. */
int dec_flags(struct in *s, const int *table, size_t nvalid,
                     size_t n)
{
	unsigned c = in_u8(s) % 32;

	if (!S.wild)
		return table[c % nvalid];
	return c ? table[c % n] : (int)in_u32(s);
}

int dec_create_flags(struct in *s)
{
	static const int f[] = { 0, TFD_NONBLOCK, TFD_CLOEXEC,
		                 TFD_NONBLOCK | TFD_CLOEXEC, TFD_NONBLOCK, 1, 4,
		                 ~0 };

	return dec_flags(s, f, 5, NELEM(f));
}

static int dec_settime_flags(struct in *s)
{
	static const int f[] = { 0, 0, TFD_TIMER_ABSTIME, TFD_TIMER_ABSTIME,
		                 TFD_TIMER_CANCEL_ON_SET,
		                 TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
		                 TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
		                 4, TFD_NONBLOCK };

	return dec_flags(s, f, 7, NELEM(f));
}

/* The base a "near now" value refers to, for a timer or none. */
static int abs_base(int fd)
{
	struct mt *t = by_fd(fd);

	return t ? base_of(t->clock, 1) : B_MONO;
}

static struct itimerspec dec_spec(struct in *s, int b)
{
	struct itimerspec its;

	its.it_value = dec_ts(s, b);
	its.it_interval = dec_ts(s, b);
	return its;
}

/* ---- operations ---- */

static int clock_known(int c)
{
	return c == CLOCK_REALTIME || c == CLOCK_MONOTONIC ||
	       c == CLOCK_BOOTTIME || c == CLOCK_REALTIME_ALARM ||
	       c == CLOCK_BOOTTIME_ALARM;
}

static int is_alarm(int c)
{
	return c == CLOCK_REALTIME_ALARM || c == CLOCK_BOOTTIME_ALARM;
}

int spec_ok(const struct itimerspec *its)
{
	return ts_ok(&its->it_value) && ts_ok(&its->it_interval);
}

static void check_new_fd(int fd, int flags)
{
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);

	EXPECT(fd >= 0 && !by_fd(fd), "new descriptor %d is in use", fd);
	EXPECT(!!(fl & O_NONBLOCK) == !!(flags & TFD_NONBLOCK) &&
	               !!(fdfl & FD_CLOEXEC) == !!(flags & TFD_CLOEXEC),
	       "descriptor %d: F_GETFL %#x F_GETFD %#x for flags %#x", fd, fl,
	       fdfl, flags);
}

static struct mt *new_timer(int slot, int fd, int clock, int flags)
{
	struct mt *t = &S.t[slot];

	check_new_fd(fd, flags);
	memset(t, 0, sizeof(*t));
	t->open = 1;
	t->fd = fd;
	t->clock = clock;
	t->nonblock = !!(flags & TFD_NONBLOCK);
	t->base = base_of(clock, 0);
	S.last_fd[slot] = fd;
	return t;
}

void close_checked(int fd)
{
	long r;
	int e;

	errno = SENTINEL;
	r = tfd_close(fd);
	e = errno;
	expect_result("tfd_close", r, e, 0, 0);
}

static void close_slot(int slot)
{
	struct mt *t = &S.t[slot];

	if (!t->open)
		return;
	close_checked(t->fd);
	t->open = 0;
}

static int free_slot(struct in *s)
{
	int i, slot = (int)(in_u8(s) % NSLOT);

	for (i = 0; i < NSLOT; i++)
		if (!S.t[(slot + i) % NSLOT].open)
			return (slot + i) % NSLOT;
	close_slot(slot);
	return slot;
}

static void op_create(struct in *s)
{
	int slot = free_slot(s), clock = dec_clock(s);
	int flags = dec_create_flags(s), want = 0, e;
	long r;

	note("tfd_create(%d, %#x)", clock, flags);
	if (S.kern && is_alarm(clock)) {
		skip(); /* Linux: EPERM, or a timer given CAP_WAKE_ALARM */
		return;
	}
	if ((flags & ~(TFD_NONBLOCK | TFD_CLOEXEC)) || !clock_known(clock))
		want = EINVAL;
	else if (is_alarm(clock))
		want = EPERM;
	errno = SENTINEL;
	r = tfd_create(clock, flags);
	e = errno;
	if (want || r < 0) {
		expect_result("tfd_create", r, e, 0, want);
		return;
	}
	EXPECT(e == SENTINEL, "tfd_create: errno %s on success", ename(e));
	new_timer(slot, (int)r, clock, flags);
}

int arm_checks(int flags, const struct itimerspec *nv)
{
	if (!nv)
		return EFAULT;
	if (flags & ~(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET))
		return EINVAL;
	return spec_ok(nv) ? 0 : EINVAL;
}

/* The errno of tfd_settime's checks (SPEC 2), 0 if they pass. */
static int settime_checks(int fd, int flags, const struct itimerspec *nv)
{
	int e = arm_checks(flags, nv);

	return e ? e : fd_expect(fd);
}

/* A change accepted by the checks returned r, e and wrote *old (if not
 * NULL; *canary is what it held before): compare, then update. */
static void settled(const char *what, struct mt *t, int flags,
                    const struct itimerspec *nv, const struct span *sp,
                    const struct itimerspec *old,
                    const struct itimerspec *canary, long r, long want_r,
                    int e)
{
	struct mt before = *t;
	int want = model_set(t, flags, nv, sp);

	expect_result(what, r, e, want_r, want);
	if (old && !want)
		check_query(what, &before, sp, old);
	else if (old)
		EXPECT(!memcmp(old, canary, sizeof(*old)),
		       "%s: old value written on failure", what);
}

static void op_settime(struct in *s)
{
	int fd = dec_fd(s), flags = dec_settime_flags(s), e, want;
	int use_new = !odd(s, 8), use_old = in_u8(s) & 1;
	struct itimerspec nv = dec_spec(s, abs_base(fd)), old, canary;
	struct span sp;
	char a[48], b[48];
	long r;

	note("tfd_settime(%d, %#x, %s, %s, %s)", fd, flags,
	     use_new ? ts_str(&nv.it_value, a, sizeof(a)) : "NULL",
	     use_new ? ts_str(&nv.it_interval, b, sizeof(b)) : "",
	     use_old ? "&old" : "NULL");
	memset(&old, 0x5a, sizeof(old));
	canary = old;
	want = settime_checks(fd, flags, use_new ? &nv : NULL);
	span_lo(&sp);
	errno = SENTINEL;
	r = tfd_settime(fd, flags, use_new ? &nv : NULL, use_old ? &old : NULL);
	e = errno;
	span_hi(&sp);
	if (want) {
		expect_result("tfd_settime", r, e, 0, want);
		EXPECT(!memcmp(&old, &canary, sizeof(old)),
		       "tfd_settime: old value written on failure");
		return;
	}
	settled("tfd_settime", by_fd(fd), flags, &nv, &sp,
	        use_old ? &old : NULL, &canary, r, 0, e);
}

static void op_gettime(struct in *s)
{
	int fd = dec_fd(s), use = !odd(s, 8), want, e;
	struct itimerspec cur;
	struct span sp;
	long r;

	note("tfd_gettime(%d, %s)", fd, use ? "&cur" : "NULL");
	want = fd_expect(fd);
	if (!want && !use)
		want = EFAULT;
	span_lo(&sp);
	errno = SENTINEL;
	r = tfd_gettime(fd, use ? &cur : NULL);
	e = errno;
	span_hi(&sp);
	expect_result("tfd_gettime", r, e, 0, want);
	if (!want)
		check_query("tfd_gettime", by_fd(fd), &sp, &cur);
}

/* Bytes past the first 8 of a read buffer are never written. */
void check_tail(const unsigned char *buf, size_t from, size_t len)
{
	for (; from < len; from++)
		EXPECT(buf[from] == 0xa5, "byte %zu of the buffer written",
		       from);
}

static void plain_read_result(struct mt *t, const struct span *sp, long r,
                              int e, const unsigned char *buf, size_t len);

/* The result of a tfd_read on timer t accepted by the checks. */
static void read_result(struct mt *t, const struct span *sp, long r, int e,
                        const unsigned char *buf, size_t len)
{
	uint64_t n;

	if (S.kern) {
		/* Linux counts when its hrtimer fires: a read may trail the
		 * clock by the interrupt's latency, as read(2) does here. */
		plain_read_result(t, sp, r, e, buf, len);
		return;
	}
	if (t->cancelled) {
		expect_result("tfd_read", r, e, 0, ECANCELED);
		discard_all(t, sp);
		check_tail(buf, 0, len);
		return;
	}
	if (S.virt && t->base == B_REAL && t->iv && t->pend && t->next &&
	    t->next < INT64_MAX && (i128)t->pend * t->iv < t->next &&
	    (i128)S.vnow[B_REAL] < t->next - (i128)t->pend * t->iv) {
		/* SPEC 2, clock set backwards: Linux's read forwards the
		 * timer from its first unread expiry, finds none, returns no
		 * bytes; the timer fires again at that expiry. */
		expect_result("tfd_read", r, e, 0, 0);
		t->next -= (i128)t->pend * t->iv;
		t->pend = 0;
		check_tail(buf, 0, len);
		return;
	}
	if (r == -1 && e == EAGAIN && t->nonblock) {
		EXPECT(pend_min(t, sp) == 0, "tfd_read: EAGAIN, %llu due",
		       (unsigned long long)pend_min(t, sp));
		took_all(t, sp, 0);
		check_tail(buf, 0, len);
		return;
	}
	expect_result("tfd_read", r, e, 8, 0);
	memcpy(&n, buf, 8);
	EXPECT(n > 0, "tfd_read: count 0");
	took_all(t, sp, n);
	S.st->counts++;
	check_tail(buf, 8, len);
}

static void op_read(struct in *s)
{
	static const size_t lens[] = { 8, 8, 8, 8, 8, 9, 16, 64, 0, 7 };
	unsigned char buf[64];
	int fd = dec_fd(s), null = odd(s, 8), want, e;
	size_t len = lens[in_u8(s) % (S.wild ? NELEM(lens) : 8)];
	struct mt *t = by_fd(fd);
	struct span sp;
	long r;

	note("tfd_read(%d, %s, %zu)", fd, null ? "NULL" : "buf", len);
	want = fd_expect(fd);
	if (!want && len < 8)
		want = EINVAL;
	else if (!want && null)
		want = EFAULT;
	if (!want && !t->nonblock && !may_block(t)) {
		skip();
		return;
	}
	memset(buf, 0xa5, sizeof(buf));
	span_lo(&sp);
	do { /* EINTR: a signal (libFuzzer's timer), documented */
		errno = SENTINEL;
		r = tfd_read(fd, null ? NULL : buf, len);
		e = errno;
	} while (r == -1 && e == EINTR);
	span_hi(&sp);
	if (want) {
		expect_result("tfd_read", r, e, 0, want);
		check_tail(buf, 0, sizeof(buf));
		return;
	}
	read_result(t, &sp, r, e, buf, len);
}

/* The result of a read(2) of timer t with len >= 8. */
static void plain_read_result(struct mt *t, const struct span *sp, long r,
                              int e, const unsigned char *buf, size_t len)
{
	uint64_t n;

	if (r == -1 && e == EAGAIN) {
		/* The engine posts late on the system's clocks; a clock set
		 * is posted at once. */
		EXPECT(t->nonblock && t->extra == 0 &&
		               (!S.virt || t->pend == 0),
		       "read: EAGAIN with %llu + %llu pending",
		       (unsigned long long)t->pend,
		       (unsigned long long)t->extra);
		return;
	}
	EXPECT(r == 8, "read: got %ld (%s)", r, ename(e));
	memcpy(&n, buf, 8);
	EXPECT(n > 0, "read: count 0");
	took_posted(t, sp, n);
	S.st->counts++;
	check_tail(buf, 8, len);
}

static void op_plain_read(struct in *s)
{
	static const size_t lens[] = { 8, 8, 8, 16, 7 };
	int fd = dec_fd(s), e;
	size_t len = lens[in_u8(s) % (S.wild ? NELEM(lens) : 4)];
	struct mt *t = by_fd(fd);
	unsigned char buf[16];
	struct span sp;
	long r;

	note("read(%d, buf, %zu)", fd, len);
	if (!t || (len >= 8 && !t->nonblock && !may_block(t))) {
		skip();
		return;
	}
	memset(buf, 0xa5, sizeof(buf));
	span_lo(&sp);
	do {
		errno = SENTINEL;
		r = read(fd, buf, len);
		e = errno;
	} while (r == -1 && e == EINTR);
	span_hi(&sp);
	if (len < 8)
		expect_result("read", r, e, 0, EINVAL);
	else
		plain_read_result(t, &sp, r, e, buf, len);
}

static void op_poll(struct in *s)
{
	int fd = dec_fd(s), ready;
	struct mt *t = by_fd(fd);
	struct pollfd p = { fd, POLLIN, 0 };
	struct span sp;

	note("poll(%d)", fd);
	if (!t) {
		skip();
		return;
	}
	span_lo(&sp);
	EXPECT(poll(&p, 1, 0) >= 0, "poll: %s", ename(errno));
	span_hi(&sp);
	ready = !!(p.revents & POLLIN);
	if (ready)
		EXPECT(pend_max(t, &sp) > 0, "poll: readable with nothing due");
	if (!ready)
		EXPECT(t->extra == 0 && (!S.virt || t->pend == 0),
		       "poll: not readable with %llu + %llu pending",
		       (unsigned long long)t->pend,
		       (unsigned long long)t->extra);
}

static void op_close(struct in *s)
{
	int fd = dec_fd(s), e;
	struct mt *t = by_fd(fd);
	long r;

	note("tfd_close(%d)", fd);
	if (t) {
		close_slot((int)(t - S.t));
		return;
	}
	if (fd_expect(fd) != EBADF) {
		skip(); /* open, not ours: not to be closed */
		return;
	}
	errno = SENTINEL;
	r = tfd_close(fd);
	e = errno;
	expect_result("tfd_close", r, e, 0, EBADF);
}

static void op_nonblock(struct in *s)
{
	int fd = dec_fd(s), fl;
	struct mt *t = by_fd(fd);

	note("fcntl(%d, F_SETFL, ^O_NONBLOCK)", fd);
	if (!t) {
		skip();
		return;
	}
	fl = fcntl(fd, F_GETFL);
	EXPECT(fl >= 0 && !!(fl & O_NONBLOCK) == t->nonblock,
	       "F_GETFL %#x, nonblocking %d", fl, t->nonblock);
	EXPECT(fcntl(fd, F_SETFL, fl ^ O_NONBLOCK) == 0, "F_SETFL: %s",
	       ename(errno));
	t->nonblock = !t->nonblock;
}

/* ---- the revised interface (SPEC 3) ---- */

struct revised {
	int ufd, clock, flags, slot;
	const struct itimerspec *utmr;
	struct itimerspec *outmr;
};

/* Checks 1 to 7 of the proposal, in order: 0 if all pass. */
static int revised_checks(const struct revised *c)
{
	int allowed = TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET;

	if (c->ufd == -1)
		allowed |= TFD_NONBLOCK | TFD_CLOEXEC;
	if (c->ufd >= 0 ? c->clock != -1 : !clock_known(c->clock))
		return EINVAL;
	if (c->flags & ~allowed)
		return EINVAL;
	if (!c->utmr && c->flags)
		return EINVAL;
	if (c->ufd == -1 && (!c->utmr || c->outmr))
		return EINVAL;
	if (!c->utmr && !c->outmr)
		return EINVAL;
	if (c->utmr && !spec_ok(c->utmr))
		return EINVAL;
	if (c->ufd == -1)
		return is_alarm(c->clock) ? EPERM : 0;
	return fd_expect(c->ufd);
}

static void revised_created(const struct revised *c, const struct span *sp,
                            long r, int e)
{
	struct mt *t;

	EXPECT(r >= 0 && e == SENTINEL, "timerfd: got %ld (%s), want a "
	       "descriptor", r, ename(e));
	t = new_timer(c->slot, (int)r, c->clock, c->flags);
	EXPECT(model_set(t, c->flags & ~(TFD_NONBLOCK | TFD_CLOEXEC), c->utmr,
	                 sp) == 0, "model: new timer cancelled");
}

static void revised_call(const struct revised *c, const struct itimerspec *canary)
{
	struct span sp;
	int want = revised_checks(c), e;
	long r;

	span_lo(&sp);
	errno = SENTINEL;
	r = timerfd(c->ufd, c->clock, c->flags, c->utmr, c->outmr);
	e = errno;
	span_hi(&sp);
	if (want) {
		expect_result("timerfd", r, e, 0, want);
		if (c->outmr)
			EXPECT(!memcmp(c->outmr, canary, sizeof(*canary)),
			       "timerfd: outmr written on failure");
	} else if (c->ufd == -1) {
		revised_created(c, &sp, r, e);
	} else if (c->utmr) {
		settled("timerfd", by_fd(c->ufd), c->flags, c->utmr, &sp,
		        c->outmr, canary, r, c->ufd, e);
	} else {
		expect_result("timerfd", r, e, c->ufd, 0);
		check_query("timerfd", by_fd(c->ufd), &sp, c->outmr);
	}
}

/* 0: query; 1-4: change; 5, 6: change and get the old value; 7: nothing.
 * A creation mostly gets its one valid shape, a query mostly no flag. */
static void revised_shape(struct in *s, struct revised *c,
                          const struct itimerspec *utmr,
                          struct itimerspec *out)
{
	static const int fl[] = { 0, 0, TFD_TIMER_ABSTIME,
		                  TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
		                  TFD_TIMER_CANCEL_ON_SET, TFD_NONBLOCK,
		                  TFD_CLOEXEC | TFD_TIMER_ABSTIME, 0xff };
	unsigned shape = in_u8(s) % 8;

	if (!S.wild && shape == 7)
		shape = 0;
	if ((c->ufd == -1 && shape < 5) || (c->ufd == -1 && !S.wild))
		shape = 1;
	c->utmr = shape == 0 || shape == 7 ? NULL : utmr;
	c->outmr = shape == 0 || shape == 5 || shape == 6 ? out : NULL;
	c->flags = dec_flags(s, fl, c->ufd == -1 ? 7 : 5, NELEM(fl));
	if (!c->utmr && !odd(s, 4))
		c->flags = 0;
}

static void op_revised(struct in *s)
{
	struct itimerspec utmr, out, canary;
	struct revised c;
	char a[48], b[48];

	c.ufd = in_u8(s) % 3 == 0 ? -1 : dec_fd(s);
	c.slot = c.ufd == -1 ? free_slot(s) : -1;
	c.clock = c.ufd == -1 || odd(s, 4) ? dec_clock(s) : -1;
	utmr = dec_spec(s, c.ufd == -1 ? base_of(c.clock, 1) : abs_base(c.ufd));
	revised_shape(s, &c, &utmr, &out);
	memset(&out, 0x5a, sizeof(out));
	canary = out;
	note("timerfd(%d, %d, %#x, %s %s, %s)", c.ufd, c.clock, c.flags,
	     c.utmr ? ts_str(&utmr.it_value, a, sizeof(a)) : "NULL",
	     c.utmr ? ts_str(&utmr.it_interval, b, sizeof(b)) : "",
	     c.outmr ? "&out" : "NULL");
	if (S.kern && is_alarm(c.clock) && c.ufd == -1) {
		skip(); /* as in op_create */
		return;
	}
	revised_call(&c, &canary);
}

/* ---- the clocks ---- */

/* The virtual clocks moved from before[]: count, then cancel if the
 * wall clock was set (its offset from CLOCK_MONOTONIC changed). */
static void moved(const int64_t *before, int was_set)
{
	v_eval_all();
	if (S.vnow[B_REAL] < before[B_REAL])
		opcheck_set_clock_back();
	if (was_set && S.vnow[B_REAL] - before[B_REAL] !=
	                       S.vnow[B_MONO] - before[B_MONO])
		cancel_all();
	S.st->moves++;
}

/* The virtual clocks stop 1 ns short of INT64_MAX, where saturated
 * deadlines lie: such a timer never fires (SPEC 1). */
static int64_t v_add(int64_t a, int64_t d)
{
	int64_t s = add_sat(a, d);

	return s == INT64_MAX ? INT64_MAX - 1 : s;
}

static void model_move(int kind, int64_t d)
{
	int64_t before[NB];

	memcpy(before, S.vnow, sizeof(before));
	if (kind == 0)
		S.vnow[B_MONO] = v_add(S.vnow[B_MONO], d);
	if (kind <= 1) {
		S.vnow[B_BOOT] = v_add(S.vnow[B_BOOT], d);
		S.vnow[B_REAL] = v_add(S.vnow[B_REAL], d);
	} else {
		S.vnow[B_REAL] = v_add(d, 0);
	}
	moved(before, kind != 0);
}

static const char *const move_name[] = { "tfd_virtual_advance",
	                                 "tfd_virtual_suspend",
	                                 "tfd_virtual_set_realtime" };

/* kind 0: advance, 1: suspend, 2: set the wall clock. */
static void op_move(struct in *s, int kind)
{
	int use = !odd(s, 8), want, e;
	struct timespec ts = kind == 2 ? dec_ts(s, B_REAL) : dec_step(s, B_MONO);
	char a[48];
	long r;

	note("%s(%s)", move_name[kind], use ? ts_str(&ts, a, sizeof(a)) : "NULL");
	want = !use ? EFAULT : !ts_ok(&ts) ? EINVAL : S.virt ? 0 : ENOTSUP;
	if (!S.virt && want != ENOTSUP) {
		skip(); /* only ENOTSUP is documented off the clock */
		return;
	}
	errno = SENTINEL;
	r = kind == 0 ? tfd_virtual_advance(use ? &ts : NULL)
	    : kind == 1 ? tfd_virtual_suspend(use ? &ts : NULL)
	                : tfd_virtual_set_realtime(use ? &ts : NULL);
	e = errno;
	expect_result(move_name[kind], r, e, 0, want);
	if (!want)
		model_move(kind, ts_ns(&ts));
}

static void op_now(struct in *s)
{
	static const int clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC,
		                      CLOCK_BOOTTIME, CLOCK_REALTIME,
		                      CLOCK_MONOTONIC, CLOCK_BOOTTIME, -1,
		                      CLOCK_TAI, CLOCK_REALTIME_ALARM };
	int c = clocks[in_u8(s) % (S.wild ? NELEM(clocks) : 6)];
	int use = !odd(s, 8), want, e;
	struct timespec ts;
	long r;

	note("tfd_virtual_now(%d, %s)", c, use ? "&ts" : "NULL");
	want = !use ? EFAULT
	       : c != CLOCK_REALTIME && c != CLOCK_MONOTONIC &&
	                       c != CLOCK_BOOTTIME ? EINVAL
	       : S.virt ? 0 : ENOTSUP;
	if (!S.virt && want != ENOTSUP) {
		skip();
		return;
	}
	errno = SENTINEL;
	r = tfd_virtual_now(c, use ? &ts : NULL);
	e = errno;
	expect_result("tfd_virtual_now", r, e, 0, want);
	if (!want)
		EXPECT(ts_ok(&ts) && ns_of(&ts) == S.vnow[base_of(c, 1)],
		       "tfd_virtual_now: {%lld, %ld}, want %lld",
		       (long long)ts.tv_sec, ts.tv_nsec,
		       (long long)S.vnow[base_of(c, 1)]);
}

/* System clocks: time passes by itself, a little. */
static void op_sleep(struct in *s)
{
	struct timespec ts = { 0, (long)(in_u8(s) % 8) * 50000 };

	note("sleep %ld ns", ts.tv_nsec);
	nanosleep(&ts, NULL);
}

/* System clocks: what the engine does when Linux says the clock was set
 * (not for the kernel's timers: only setting the clock cancels those). */
static void op_clock_was_set(void)
{
	note("clock was set");
	if (S.kern) {
		skip();
		return;
	}
	tfd_engine_clock_was_set();
	cancel_all();
}

/* Virtual clock: advance (mostly), suspend, set, read.  System clocks:
 * sleep, the clock was set, and the virtual calls that must fail. */
static void op_clock(struct in *s)
{
	unsigned c = in_u8(s) % 6;

	if (S.virt && c < 3)
		op_move(s, c == 2 ? 1 : 0);
	else if (S.virt && c < 5)
		op_move(s, c == 3 ? 2 : 0);
	else if (c == 5)
		op_now(s);
	else if (c < 2)
		op_sleep(s);
	else if (c < 4)
		op_clock_was_set();
	else
		op_move(s, (int)(in_u8(s) % 3));
}

/* ---- a sequence ---- */

static int open_fds(void)
{
	int fd, n = 0;

	for (fd = 0; fd < 256; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* The first byte: bit 0 the virtual clock (when the library has it), else
 * bit 1 the kernel backend; else the engine on the system's clocks. */
static void setup(unsigned mode)
{
	int i, p[2];

	memset(S.t, 0, sizeof(S.t));
	for (i = 0; i < NSLOT; i++)
		S.last_fd[i] = -1;
	S.virt = S.kern = 0;
	EXPECT(tfd_use_backend("engine") == 0, "select engine: %s",
	       ename(errno));
	EXPECT(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0, "pipe");
	S.pipe_r = p[0];
	S.pipe_w = p[1];
	S.ktfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	EXPECT(S.ktfd >= 0, "timerfd_create: %s", ename(errno));
	if ((mode & 1) == 0 && (mode & 2) && tfd_use_backend("kernel") == 0) {
		S.kern = 1;
		S.st->kernel_runs++;
	}
	if ((mode & 1) && tfd_use_backend("virtual") == 0) {
		struct timespec ts;
		int b;

		for (b = 0; b < NB; b++) {
			EXPECT(tfd_virtual_now(base_clock[b], &ts) == 0,
			       "tfd_virtual_now: %s", ename(errno));
			S.vnow[b] = ns_of(&ts);
		}
		S.virt = 1;
		S.st->virtual_runs++;
	}
}

/* Query every timer left once more, and close it. */
static void sweep(void)
{
	struct itimerspec cur;
	struct span sp;
	long r;
	int i, e;

	for (i = 0; i < NSLOT; i++) {
		if (!S.t[i].open)
			continue;
		note("tfd_gettime(%d, &cur), tfd_close(%d)", S.t[i].fd,
		     S.t[i].fd);
		span_lo(&sp);
		errno = SENTINEL;
		r = tfd_gettime(S.t[i].fd, &cur);
		e = errno;
		span_hi(&sp);
		expect_result("tfd_gettime", r, e, 0, 0);
		check_query("tfd_gettime", &S.t[i], &sp, &cur);
		close_slot(i);
	}
}

static void (*const ops[])(struct in *) = {
	op_settime, op_settime,    op_settime, op_gettime,
	op_read,    op_read,       op_plain_read, op_poll,
	op_create,  op_create,     op_close,   op_revised,
	op_revised, op_nonblock,   op_clock,   op_clock,
	opcheck_set_op, opcheck_set_op, opcheck_set_op, opcheck_set_op,
};

void opcheck_run(const uint8_t *data, size_t size, struct opcheck_stats *st)
{
	struct opcheck_stats local;
	struct in s = { data, size };
	int fds;

	memset(&local, 0, sizeof(local));
	S.st = st ? st : &local;
	S.opno = 0;
	fds = open_fds();
	setup(in_u8(&s));
	opcheck_set_reset();
	while (s.n > 0) {
		unsigned op = in_u8(&s);

		S.wild = op >= 192; /* 1 in 4 */
		ops[op % NELEM(ops)](&s);
	}
	sweep();
	opcheck_set_sweep();
	close(S.pipe_r);
	close(S.pipe_w);
	close(S.ktfd);
	S.virt = S.kern = 0;
	EXPECT(tfd_use_backend("engine") == 0, "select engine: %s",
	       ename(errno));
	EXPECT(open_fds() == fds, "%d descriptors open after the sequence, "
	       "%d before", open_fds(), fds);
	S.st->runs++;
}
