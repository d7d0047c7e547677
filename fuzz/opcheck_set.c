/* SPDX-License-Identifier: MIT */
/*
 * opcheck_set.c - timer sets (tfd_set(3)) in the operation checker.
 *
 * The model of a set is written from tfd_set(3), not from src/ (it shares
 * nothing with src/core/set.c): a set is NKEY keys, each armed or not.  An
 * armed key is its setting, the first expiry e in [e_lo, e_hi] and the
 * interval iv, and the expirations its records took, c in [c_lo, c_hi].
 * Its deadline, the first expiration not yet read, is e + c*iv; a read
 * during a span of clock readings may give it a count between what was due
 * for sure at the span's start and what may have been due at its end,
 * less what was taken.  On the virtual clock a span is one instant, and
 * every bound is exact: the same code checks both.
 *
 * A read is checked as a whole: whole records, each key at most once and
 * armed, every count within its bounds, earliest deadline first (no key
 * returned after one whose deadline is surely later, none left out whose
 * deadline is surely earlier), nothing surely due left out when the buffer
 * had room; then a one-shot key is forgotten and a periodic key counts
 * again from its next deadline.  EAGAIN only when nothing is surely due;
 * readable (poll) only when something may be due, and on the virtual clock
 * exactly when something is.
 *
 * Operations: tfd_set_create (every flag and clock, the invalid ones in a
 * wild operation), tfd_set_settime (relative, absolute, a zero value that
 * disarms, intervals, the old value, cancel-on-set, whose cancellation a
 * clock set gives the next read; NULL, bad flags and values), tfd_set_
 * gettime (ENOENT for a key not armed, NULL), tfd_set_read (buffers of 16
 * to 128 bytes, some not a multiple of 16; wild: too small, NULL), poll,
 * fcntl(O_NONBLOCK), tfd_close, and the timer calls on a set (EINVAL), on
 * NSET sets of NKEY keys (few, so that they collide) and, in a wild
 * operation, on descriptors that are no set and on keys outside the table.
 */
#define _GNU_SOURCE
#include "opcheck_int.h"

#include "tfd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NSET 2
#define NKEY 8
#define REC sizeof(struct tfd_expiry)
#define MAXREC 8 /* records the largest buffer holds */
#define END_NS (INT64_MAX / NS * NS) /* a time a timespec cannot arm */

static const uint64_t keys[NKEY] = {
	0, 1, 2, 7, (uint64_t)1 << 32, (uint64_t)1 << 63, UINT64_MAX,
	0x9e3779b97f4a7c15ull,
};

/* A key of the model. */
struct mkey {
	int armed;
	int64_t e_lo, e_hi;  /* the first expiry lies in [e_lo, e_hi] */
	int64_t iv;          /* interval, 0: one-shot */
	uint64_t c_lo, c_hi; /* expirations its records took */
	int cos;             /* armed with ABSTIME | CANCEL_ON_SET, realtime */
};

/* A set of the model. */
struct mset {
	int open, fd, clock, nonblock;
	int base; /* the clock every key's expiries are on (B_*) */
	int stale; /* its clock was set back since its last read */
	int cancel; /* the clock was set while a key asked: ECANCELED */
	struct mkey k[NKEY];
};

static struct {
	struct mset s[NSET];
	int last_fd[NSET]; /* the number each slot had: used after close */
} Z;

void opcheck_set_reset(void)
{
	int i;

	memset(&Z, 0, sizeof(Z));
	for (i = 0; i < NSET; i++)
		Z.last_fd[i] = -1;
}

/* The virtual wall clock was set back: a key of a CLOCK_REALTIME set that
 * was due may be due no more, and its set may stay readable until its
 * next read, which then finds nothing (tfd_set(3), NOTES). */
void opcheck_set_clock_back(void)
{
	int i;

	for (i = 0; i < NSET; i++)
		if (Z.s[i].open && Z.s[i].base == B_REAL)
			Z.s[i].stale = 1;
}

/* Whether a key of m asks to learn of clock sets. */
static int m_watch(const struct mset *m)
{
	int i;

	for (i = 0; i < NKEY; i++)
		if (m->k[i].armed && m->k[i].cos)
			return 1;
	return 0;
}

/* The wall clock was set (virtual, or the engine told so): the next read
 * of a set with a key asking fails with ECANCELED, once (tfd_set(3),
 * Cancel on set); a set with none forgets it. */
void opcheck_set_clock_set(void)
{
	int i;

	for (i = 0; i < NSET; i++)
		if (Z.s[i].open && m_watch(&Z.s[i]))
			Z.s[i].cancel = 1;
}

/* ---- the model's arithmetic ---- */

/* Expirations of k due by the span, at least and at most. */
static uint64_t k_xmin(const struct mkey *k, const struct span *sp, int b)
{
	return k->armed ? due(k->e_hi, k->iv, sp->lo[b]) : 0;
}

static uint64_t k_xmax(const struct mkey *k, const struct span *sp, int b)
{
	return k->armed ? due(k->e_lo, k->iv, sp->hi[b]) : 0;
}

/* The count a read during the span may give k, at least and at most (a
 * clock set back leaves fewer due than taken: none pending). */
static uint64_t k_pmin(const struct mkey *k, const struct span *sp, int b)
{
	uint64_t x = k_xmin(k, sp, b);

	return x > k->c_hi ? x - k->c_hi : 0;
}

static uint64_t k_pmax(const struct mkey *k, const struct span *sp, int b)
{
	uint64_t x = k_xmax(k, sp, b);

	return x > k->c_lo ? x - k->c_lo : 0;
}

/* Its deadline, the first expiration not yet read: at least, at most. */
static i128 k_dlo(const struct mkey *k)
{
	return (i128)k->e_lo + (i128)k->c_lo * k->iv;
}

static i128 k_dhi(const struct mkey *k)
{
	return (i128)k->e_hi + (i128)k->c_hi * k->iv;
}

static int64_t clamp(i128 t)
{
	return t > INT64_MAX ? INT64_MAX : (int64_t)t;
}

/* Virtual clock: the time left to k's next expiry at now, exactly. */
static int64_t k_left(const struct mkey *k, int64_t now)
{
	i128 d = k_dlo(k);

	if (now < d)
		return clamp(d) - now;
	if (!k->iv)
		return 0; /* due, its record not read */
	d = (i128)k->e_lo + (i128)due(k->e_lo, k->iv, now) * k->iv;
	return clamp(d) - now;
}

/* it_value a query of k during the span may give, at least and at most. */
static void k_rem(const struct mkey *k, const struct span *sp, int b,
                  int64_t *lo, int64_t *hi)
{
	int64_t t0 = sp->lo[b], t1 = sp->hi[b];

	if (S.virt) {
		*lo = *hi = k_left(k, t0);
	} else if (!k->iv) {
		*lo = k->e_lo > t1 ? k->e_lo - t1 : 0;
		*hi = k->e_hi > t0 ? k->e_hi - t0 : 0;
	} else if (t1 < k->e_lo) {
		*lo = k->e_lo - t1;
		*hi = k->e_hi - t0;
	} else {
		*lo = 1; /* the expiry after now, ever after the first */
		*hi = t0 >= k->e_hi || k->e_hi - t0 < k->iv ? k->iv
		                                            : k->e_hi - t0;
	}
}

/* A setting tfd_set_gettime() gave for k (NULL: not armed, zeros). */
static void check_setting(const char *what, const struct mkey *k,
                          const struct span *sp, int b,
                          const struct itimerspec *got)
{
	int64_t lo = 0, hi = 0, iv = 0, v;

	EXPECT(ts_ok(&got->it_value) && ts_ok(&got->it_interval),
	       "%s: not normalized: {%ld, %ld} {%ld, %ld}", what,
	       (long)got->it_value.tv_sec, got->it_value.tv_nsec,
	       (long)got->it_interval.tv_sec, got->it_interval.tv_nsec);
	if (k) {
		k_rem(k, sp, b, &lo, &hi);
		iv = k->iv;
	}
	v = ns_of(&got->it_value);
	EXPECT(ns_of(&got->it_interval) == iv, "%s: interval %lld, want %lld",
	       what, (long long)ns_of(&got->it_interval), (long long)iv);
	EXPECT(v >= lo && v <= hi, "%s: it_value %lld ns, want [%lld, %lld]",
	       what, (long long)v, (long long)lo, (long long)hi);
}

/* The key was armed during the span (nv valid, its value not zero). */
static void k_arm(struct mkey *k, int abs, const struct itimerspec *nv,
                  const struct span *sp, int b)
{
	int64_t v = ts_ns(&nv->it_value);

	k->armed = 1;
	k->iv = ts_ns(&nv->it_interval);
	k->e_lo = abs ? v : add_sat(sp->lo[b], v);
	k->e_hi = abs ? v : add_sat(sp->hi[b], v);
	k->c_lo = k->c_hi = 0;
}

/* A record of k with count n, read during the span. */
static void k_took(struct mkey *k, const struct span *sp, int b, uint64_t n)
{
	uint64_t lo = u_add(k->c_lo, n), hi = u_add(k->c_hi, n);
	uint64_t xl = k_xmin(k, sp, b), xh = k_xmax(k, sp, b);

	if (!k->iv) {
		k->armed = 0; /* a one-shot key is forgotten */
		return;
	}
	/* every expiration due by the clock the read looked at */
	k->c_lo = lo > xl ? lo : xl;
	k->c_hi = hi < xh ? hi : xh;
}

/* ---- descriptors and keys ---- */

static struct mset *set_by_fd(int fd)
{
	int i;

	for (i = 0; i < NSET; i++)
		if (Z.s[i].open && Z.s[i].fd == fd)
			return &Z.s[i];
	return NULL;
}

/* 0 for a set of the model, else the errno the set calls must give. */
static int set_expect(int fd)
{
	if (set_by_fd(fd))
		return 0;
	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return EBADF;
	return EINVAL;
}

static int any_open(void)
{
	return Z.s[0].open || Z.s[1].open;
}

/* A set's descriptor mostly; in a wild operation also a closed set's
 * number, a timer's, a pipe, a kernel timerfd, negative or huge. */
static int dec_sfd(struct in *s)
{
	static const int special[] = { -1, -2, INT_MIN, 1 << 20 };
	unsigned c = in_u8(s) % 16, i;

	if (!S.wild)
		c %= 8;
	if (c < 8) {
		for (i = 0; i < NSET; i++)
			if (Z.s[(c + i) % NSET].open)
				return Z.s[(c + i) % NSET].fd;
		c = 8;
	}
	if (c < 10)
		return Z.last_fd[c % NSET];
	if (c == 10)
		for (i = 0; i < NSLOT; i++)
			if (S.t[i].open)
				return S.t[i].fd;
	if (c <= 11)
		return S.pipe_r;
	if (c == 12)
		return S.ktfd;
	return special[c % 4];
}

/* A key of the table (its index); in a wild operation now and then any
 * key, -1 when it is not in the table. */
static int dec_key(struct in *s, uint64_t *key)
{
	unsigned c = in_u8(s) % 16;
	int i;

	if (!S.wild || c < 12) {
		*key = keys[c % NKEY];
		return (int)(c % NKEY);
	}
	*key = in_u64(s);
	for (i = 0; i < NKEY; i++)
		if (keys[i] == *key)
			return i;
	return -1;
}

static int key_index(uint64_t key)
{
	int i;

	for (i = 0; i < NKEY; i++)
		if (keys[i] == key)
			return i;
	return -1;
}

/* ---- operations ---- */

static void close_set(int slot)
{
	struct mset *m = &Z.s[slot];

	if (!m->open)
		return;
	close_checked(m->fd);
	m->open = 0;
}

static int free_set(struct in *s)
{
	int i, slot = (int)(in_u8(s) % NSET);

	for (i = 0; i < NSET; i++)
		if (!Z.s[(slot + i) % NSET].open)
			return (slot + i) % NSET;
	close_set(slot);
	return slot;
}

static void new_set(int slot, int fd, int clock, int flags)
{
	struct mset *m = &Z.s[slot];
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);

	EXPECT(!set_by_fd(fd) && !by_fd(fd), "new set %d: number in use", fd);
	EXPECT(fl >= 0 && !!(fl & O_NONBLOCK) == !!(flags & TFD_NONBLOCK) &&
	               !!(fdfl & FD_CLOEXEC) == !!(flags & TFD_CLOEXEC),
	       "set %d: F_GETFL %#x F_GETFD %#x for flags %#x", fd, fl, fdfl,
	       flags);
	memset(m, 0, sizeof(*m));
	m->open = 1;
	m->fd = fd;
	m->clock = clock;
	m->nonblock = !!(flags & TFD_NONBLOCK);
	/* every key on the set's clock, also a relative one (tfd_set(3)) */
	m->base = base_of(clock, 1);
	Z.last_fd[slot] = fd;
}

static void op_set_create(struct in *s)
{
	int slot = free_set(s), clock = dec_clock(s);
	int flags = dec_create_flags(s), want = 0, e;
	long r;

	note("tfd_set_create(%d, %#x)", clock, flags);
	if ((flags & ~(TFD_NONBLOCK | TFD_CLOEXEC)) ||
	    (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME &&
	     clock != CLOCK_BOOTTIME))
		want = EINVAL; /* the alarm clocks too, on every backend */
	errno = SENTINEL;
	r = tfd_set_create(clock, flags);
	e = errno;
	if (want || r < 0) {
		expect_result("tfd_set_create", r, e, 0, want);
		return;
	}
	EXPECT(e == SENTINEL, "tfd_set_create: errno %s on success", ename(e));
	new_set(slot, (int)r, clock, flags);
}

/* tfd_set_settime's checks in the page's order (a timer's, then the
 * set): 0 if they pass. */
static int set_settime_checks(int fd, int flags, const struct itimerspec *nv)
{
	int e = arm_checks(flags, nv);

	return e ? e : set_expect(fd);
}

/* The call passed the checks: compare, then arm or forget the key. */
static void set_settled(struct mset *m, int ki, int flags,
                        const struct itimerspec *nv, const struct span *sp,
                        const struct itimerspec *old, long r, int e)
{
	struct mkey *k = ki >= 0 && m->k[ki].armed ? &m->k[ki] : NULL;

	expect_result("tfd_set_settime", r, e, 0, 0);
	if (old)
		check_setting("tfd_set_settime old", k, sp, m->base, old);
	if (ki < 0)
		return; /* a key outside the table is only ever disarmed */
	if (ts_ns(&nv->it_value) == 0)
		m->k[ki].armed = 0;
	else
		k_arm(&m->k[ki], !!(flags & TFD_TIMER_ABSTIME), nv, sp,
		      m->base);
	/* CANCEL_ON_SET counts where a timerfd's does (with ABSTIME, on
	 * CLOCK_REALTIME); a cancellation no key asks for is forgotten. */
	m->k[ki].cos = m->clock == CLOCK_REALTIME &&
	               (flags & TFD_TIMER_ABSTIME) &&
	               (flags & TFD_TIMER_CANCEL_ON_SET);
	if (!m_watch(m))
		m->cancel = 0;
}

static void op_set_settime(struct in *s)
{
	static const int fl[] = { 0, 0, TFD_TIMER_ABSTIME, TFD_TIMER_ABSTIME,
		                  TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
		                  TFD_TIMER_CANCEL_ON_SET, 4, TFD_NONBLOCK };
	int fd = dec_sfd(s), flags = dec_flags(s, fl, 6, NELEM(fl)), e, want;
	int use_new = !odd(s, 8), use_old = in_u8(s) & 1, off = in_u8(s) % 4;
	struct mset *m = set_by_fd(fd);
	struct itimerspec nv, old, canary;
	struct span sp;
	char a[48], b[48];
	uint64_t key;
	int ki = dec_key(s, &key);
	long r;

	nv.it_value = dec_ts(s, m ? m->base : B_MONO);
	nv.it_interval = dec_ts(s, m ? m->base : B_MONO);
	if (off == 0 || ki < 0) /* disarm: one in four */
		nv.it_value.tv_sec = nv.it_value.tv_nsec = 0;
	note("tfd_set_settime(%d, %#llx, %#x, %s %s, %s)", fd,
	     (unsigned long long)key, flags,
	     use_new ? ts_str(&nv.it_value, a, sizeof(a)) : "NULL",
	     use_new ? ts_str(&nv.it_interval, b, sizeof(b)) : "",
	     use_old ? "&old" : "NULL");
	memset(&old, 0x5a, sizeof(old));
	canary = old;
	want = set_settime_checks(fd, flags, use_new ? &nv : NULL);
	span_lo(&sp);
	errno = SENTINEL;
	r = tfd_set_settime(fd, key, flags, use_new ? &nv : NULL,
	                    use_old ? &old : NULL);
	e = errno;
	span_hi(&sp);
	if (want) {
		expect_result("tfd_set_settime", r, e, 0, want);
		EXPECT(!memcmp(&old, &canary, sizeof(old)),
		       "tfd_set_settime: old value written on failure");
		return;
	}
	set_settled(m, ki, flags, &nv, &sp, use_old ? &old : NULL, r, e);
}

static void op_set_gettime(struct in *s)
{
	int fd = dec_sfd(s), use = !odd(s, 8), want, e;
	struct mset *m = set_by_fd(fd);
	struct itimerspec cur;
	struct span sp;
	uint64_t key;
	int ki = dec_key(s, &key);
	long r;

	note("tfd_set_gettime(%d, %#llx, %s)", fd, (unsigned long long)key,
	     use ? "&cur" : "NULL");
	want = set_expect(fd);
	if (!want && (ki < 0 || !m->k[ki].armed))
		want = ENOENT; /* before EFAULT */
	else if (!want && !use)
		want = EFAULT;
	memset(&cur, 0x5a, sizeof(cur));
	span_lo(&sp);
	errno = SENTINEL;
	r = tfd_set_gettime(fd, key, use ? &cur : NULL);
	e = errno;
	span_hi(&sp);
	expect_result("tfd_set_gettime", r, e, 0, want);
	if (!want)
		check_setting("tfd_set_gettime", &m->k[ki], &sp, m->base, &cur);
}

/* Some key is surely due (a read returns at once), or on the system's
 * clocks will be within WAIT_MAX (a blocking read may wait for it). */
static int set_may_block(const struct mset *m)
{
	struct span now;
	int i;

	if (m->cancel)
		return 1;
	span_lo(&now);
	span_hi(&now);
	for (i = 0; i < NKEY; i++) {
		const struct mkey *k = &m->k[i];

		if (!k->armed)
			continue;
		if (k_pmin(k, &now, m->base) > 0)
			return 1;
		if (!S.virt && k_dhi(k) <= (i128)now.lo[m->base] + WAIT_MAX)
			return 1;
	}
	return 0;
}

/* Records rec[0..n) are of distinct armed keys (their indexes into ix),
 * each with a count the clock allows. */
static void check_counts(const struct mset *m, const struct span *sp,
                         const struct tfd_expiry *rec, size_t n, int *ix)
{
	int seen[NKEY] = { 0 };
	size_t i;

	for (i = 0; i < n; i++) {
		const struct mkey *k;
		uint64_t c = rec[i].count, lo, hi;
		int ki = key_index(rec[i].key);

		EXPECT(ki >= 0 && m->k[ki].armed, "tfd_set_read: record %zu "
		       "of key %#llx, not armed", i,
		       (unsigned long long)rec[i].key);
		EXPECT(!seen[ki], "tfd_set_read: key %#llx twice in one read",
		       (unsigned long long)rec[i].key);
		seen[ki] = 1;
		ix[i] = ki;
		k = &m->k[ki];
		lo = k_pmin(k, sp, m->base);
		hi = k_pmax(k, sp, m->base);
		EXPECT(c >= 1 && c >= lo && c <= hi, "tfd_set_read: key %#llx "
		       "count %llu, want [%llu, %llu] (and not 0)",
		       (unsigned long long)rec[i].key, (unsigned long long)c,
		       (unsigned long long)(lo ? lo : 1),
		       (unsigned long long)hi);
	}
}

/* Earliest deadline first: no record after one whose deadline is surely
 * later, and no key left out whose deadline is surely earlier than a
 * record's; with room to spare, none left out that was surely due. */
static void check_order(const struct mset *m, const struct span *sp,
                        const int *ix, size_t n, size_t room)
{
	int pos[NKEY], i, j;
	size_t r;

	for (i = 0; i < NKEY; i++)
		pos[i] = -1;
	for (r = 0; r < n; r++)
		pos[ix[r]] = (int)r;
	for (i = 0; i < NKEY; i++) {
		if (pos[i] >= 0 || !m->k[i].armed)
			continue;
		EXPECT(n == room || k_pmin(&m->k[i], sp, m->base) == 0,
		       "tfd_set_read: key %#llx surely due, not read with "
		       "room for %zu more (lost)", (unsigned long long)keys[i],
		       room - n);
	}
	for (i = 0; i < NKEY; i++) {
		if (pos[i] < 0)
			continue;
		for (j = 0; j < NKEY; j++)
			if (j != i && m->k[j].armed && (pos[j] < 0 ||
			                                pos[j] > pos[i]))
				EXPECT(k_dlo(&m->k[i]) <= k_dhi(&m->k[j]),
				       "tfd_set_read: key %#llx (record %d) "
				       "before key %#llx, whose deadline is "
				       "earlier", (unsigned long long)keys[i],
				       pos[i], (unsigned long long)keys[j]);
	}
}

/* A read of set m gave n records in rec, with room for room. */
static void set_records(struct mset *m, const struct span *sp,
                        const struct tfd_expiry *rec, size_t n, size_t room)
{
	int ix[MAXREC];
	size_t i;

	check_counts(m, sp, rec, n, ix);
	check_order(m, sp, ix, n, room);
	for (i = 0; i < n; i++)
		k_took(&m->k[ix[i]], sp, m->base, rec[i].count);
	S.st->records += n;
	S.st->counts++;
}

/* The result of a read of set m that passed the checks. */
static void set_read_result(struct mset *m, const struct span *sp, long r,
                            int e, const struct tfd_expiry *buf, size_t len)
{
	int i;

	m->stale = 0; /* the read re-armed its timer */
	if (m->cancel) { /* reported once, taking nothing */
		expect_result("tfd_set_read", r, e, 0, ECANCELED);
		check_tail((const unsigned char *)buf, 0, len);
		m->cancel = 0;
		S.st->set_cancels++;
		return;
	}
	if (r == -1 && e == EAGAIN && m->nonblock) {
		for (i = 0; i < NKEY; i++)
			EXPECT(k_pmin(&m->k[i], sp, m->base) == 0,
			       "tfd_set_read: EAGAIN, key %#llx surely due",
			       (unsigned long long)keys[i]);
		check_tail((const unsigned char *)buf, 0, len);
		return;
	}
	EXPECT(r > 0 && (size_t)r <= len && r % (long)REC == 0 &&
	               e == SENTINEL,
	       "tfd_set_read: got %ld (errno %s), want whole records of %zu "
	       "bytes at most, errno unchanged", r, ename(e), len);
	check_tail((const unsigned char *)buf, (size_t)r, len);
	set_records(m, sp, buf, (size_t)r / REC, len / REC);
}

static void op_set_read(struct in *s)
{
	static const size_t lens[] = { 16, 16, 32, 48, 128, 24, 40, 127,
		                       0, 15, 8, 1 };
	struct tfd_expiry buf[MAXREC];
	int fd = dec_sfd(s), null = odd(s, 8), want, e;
	size_t len = lens[in_u8(s) % (S.wild ? NELEM(lens) : 8)];
	struct mset *m = set_by_fd(fd);
	struct span sp;
	long r;

	note("tfd_set_read(%d, %s, %zu)", fd, null ? "NULL" : "buf", len);
	want = set_expect(fd);
	if (!want && len < REC)
		want = EINVAL;
	else if (!want && null)
		want = EFAULT;
	if (!want && !m->nonblock && !set_may_block(m)) {
		skip();
		return;
	}
	memset(buf, 0xa5, sizeof(buf));
	span_lo(&sp);
	do { /* EINTR: a signal (libFuzzer's timer), documented */
		errno = SENTINEL;
		r = tfd_set_read(fd, null ? NULL : buf, len);
		e = errno;
	} while (r == -1 && e == EINTR);
	span_hi(&sp);
	if (want) {
		expect_result("tfd_set_read", r, e, 0, want);
		check_tail((unsigned char *)buf, 0, sizeof(buf));
		return;
	}
	set_read_result(m, &sp, r, e, buf, len);
}

/* The keys of m armed, for a report. */
static const char *set_dump(const struct mset *m)
{
	static char buf[1024];
	size_t n = 0;
	int i;

	n += (size_t)snprintf(buf, sizeof(buf), "set %d clock %d now %lld:",
	                      m->fd, m->clock, (long long)clk(m->base));
	for (i = 0; i < NKEY && n < sizeof(buf); i++) {
		const struct mkey *k = &m->k[i];

		if (k->armed)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,
			                      " key %#llx e [%lld, %lld] iv %lld"
			                      " taken [%llu, %llu];",
			                      (unsigned long long)keys[i],
			                      (long long)k->e_lo,
			                      (long long)k->e_hi,
			                      (long long)k->iv,
			                      (unsigned long long)k->c_lo,
			                      (unsigned long long)k->c_hi);
	}
	return buf;
}

/* Readable only if some key may be due; on the virtual clock, exactly
 * when one is. */
static void op_set_poll(struct in *s)
{
	int fd = dec_sfd(s), i, may = 0, sure = 0, ready;
	struct mset *m = set_by_fd(fd);
	struct pollfd p = { fd, POLLIN, 0 };
	struct span sp;

	note("poll(set %d)", fd);
	if (!m) {
		skip();
		return;
	}
	span_lo(&sp);
	EXPECT(poll(&p, 1, 0) >= 0, "poll: %s", ename(errno));
	span_hi(&sp);
	ready = !!(p.revents & POLLIN);
	for (i = 0; i < NKEY; i++) {
		may |= k_pmax(&m->k[i], &sp, m->base) > 0;
		/* The set's timer is armed by a timespec, and from
		 * 9223372036 s on that is "never" (SPEC 1): a key due in
		 * the clock's last 0.85 s makes no set readable. */
		sure |= k_pmin(&m->k[i], &sp, m->base) > 0 &&
		        k_dhi(&m->k[i]) < END_NS;
	}
	/* A cancellation waiting for its read makes the set readable, but
	 * on a wall clock at 0 (virtual) no timer can be armed for a time
	 * not after now (tfd_set(3), BUGS). */
	may |= m->cancel;
	sure |= m->cancel && (!S.virt || S.vnow[B_REAL] > 0);
	EXPECT(!ready || may || m->stale, "poll: set readable with no key "
	       "due (%s)", set_dump(m));
	EXPECT(ready || !S.virt || !sure,
	       "poll: set not readable with a key due (%s)", set_dump(m));
}

static void op_set_nonblock(struct in *s)
{
	int fd = dec_sfd(s), fl;
	struct mset *m = set_by_fd(fd);

	note("fcntl(set %d, F_SETFL, ^O_NONBLOCK)", fd);
	if (!m) {
		skip();
		return;
	}
	fl = fcntl(fd, F_GETFL);
	EXPECT(fl >= 0 && !!(fl & O_NONBLOCK) == m->nonblock,
	       "F_GETFL %#x, nonblocking %d", fl, m->nonblock);
	EXPECT(fcntl(fd, F_SETFL, fl ^ O_NONBLOCK) == 0, "F_SETFL: %s",
	       ename(errno));
	m->nonblock = !m->nonblock;
}

static void op_set_close(struct in *s)
{
	int fd = dec_sfd(s), e;
	struct mset *m = set_by_fd(fd);
	long r;

	note("tfd_close(set %d)", fd);
	if (m) {
		close_set((int)(m - Z.s));
		return;
	}
	if (set_expect(fd) != EBADF) {
		skip(); /* open, not a set: not ours to close here */
		return;
	}
	errno = SENTINEL;
	r = tfd_close(fd);
	e = errno;
	expect_result("tfd_close", r, e, 0, EBADF);
}

/* A set is no timer: the timer calls fail with EINVAL and change it not
 * (tfd_set(3), BUGS). */
static void op_set_as_timer(struct in *s)
{
	static const struct itimerspec one = { { 0, 0 }, { 1, 0 } };
	int fd = dec_sfd(s), which = (int)(in_u8(s) % 3), e;
	struct itimerspec cur;
	uint64_t n;
	long r;

	note("%s(set %d)", which == 0 ? "tfd_settime" :
	                   which == 1 ? "tfd_gettime" : "tfd_read", fd);
	if (!set_by_fd(fd)) {
		skip();
		return;
	}
	errno = SENTINEL;
	r = which == 0 ? tfd_settime(fd, 0, &one, NULL)
	    : which == 1 ? tfd_gettime(fd, odd(s, 2) ? NULL : &cur)
	                 : tfd_read(fd, odd(s, 2) ? NULL : &n, sizeof(n));
	e = errno;
	expect_result(which == 0 ? "tfd_settime" : which == 1 ? "tfd_gettime"
	                                                      : "tfd_read",
	              r, e, 0, EINVAL);
}

void opcheck_set_op(struct in *s)
{
	static void (*const set_ops[])(struct in *) = {
		op_set_create, op_set_settime, op_set_settime,
		op_set_settime, op_set_gettime, op_set_read, op_set_read,
		op_set_read, op_set_poll, op_set_nonblock, op_set_close,
		op_set_as_timer,
	};
	unsigned long before = S.st->ops;
	unsigned c = in_u8(s) % NELEM(set_ops);

	if (!any_open() && !S.wild)
		c = 0; /* a set first */
	set_ops[c](s);
	S.st->set_ops += S.st->ops - before;
}

/* Query every key of every set left once more, and close it. */
void opcheck_set_sweep(void)
{
	struct itimerspec cur;
	struct span sp;
	int i, j, e;
	long r;

	for (i = 0; i < NSET; i++) {
		struct mset *m = &Z.s[i];

		if (!m->open)
			continue;
		note("tfd_set_gettime(%d, every key), tfd_close(%d)", m->fd,
		     m->fd);
		for (j = 0; j < NKEY; j++) {
			span_lo(&sp);
			errno = SENTINEL;
			r = tfd_set_gettime(m->fd, keys[j], &cur);
			e = errno;
			span_hi(&sp);
			expect_result("tfd_set_gettime", r, e, 0,
			              m->k[j].armed ? 0 : ENOENT);
			if (m->k[j].armed)
				check_setting("tfd_set_gettime", &m->k[j], &sp,
				              m->base, &cur);
		}
		close_set(i);
	}
}
