/* SPDX-License-Identifier: MIT */
/*
 * Concurrency stress: threads making every call on shared timers for a
 * bounded time.  In make check, and so in CI under ThreadSanitizer,
 * AddressSanitizer and valgrind: no crash, no deadlock (the runner's time
 * limit), no data race, no early expiration; for the timers nobody re-arms,
 * the counts read by all threads add up to what the clock says elapsed.
 * Includes settime racing close on one descriptor (the kind of race that
 * was CVE-2017-10661 in the kernel's timerfd).
 */
#include "t.h"

#include "backend.h"
#include "engine/hooks.h"
#include "tfd.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#define NSTABLE 2  /* armed once, never changed: their counts are checked */
#define NCHURN 4   /* set, closed and created again all the time */
#define NTHREAD 4
#define RUN_NS (1200 * MS)

struct stable {
	int fd;
	clockid_t clock;
	int64_t e0, iv;
	uint64_t total; /* read by every thread, __atomic */
};

static struct stable stable[NSTABLE];
static int churn[NCHURN]; /* descriptors, -1 while replaced; __atomic */
static int stop;          /* __atomic */


static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* errno e is one the call may give when another thread changes, closes
 * or replaces the descriptor under it. */
static void allowed(const char *what, int e, int ok1, int ok2, int ok3)
{
	CHECKF(e == EBADF || e == EINVAL || e == ok1 || e == ok2 || e == ok3,
	       "%s: %s", what, strerrorname_np(e));
}

/* ---- the stable timers ---- */

static void stable_arm(struct stable *s, clockid_t c, int64_t iv)
{
	struct itimerspec v;

	s->fd = (int)CHECK_OK(tfd_create(c, TFD_NONBLOCK));
	s->clock = c;
	s->iv = iv;
	s->e0 = t_now(c) - MS; /* running already: it_value is in (0, iv] */
	v = t_its(s->e0, iv);
	CHECK_OK(tfd_settime(s->fd, TFD_TIMER_ABSTIME, &v, NULL));
}

/* n more were read: the total so far may not run ahead of the clock. */
static void stable_took(struct stable *s, uint64_t n)
{
	uint64_t total = __atomic_add_fetch(&s->total, n, __ATOMIC_SEQ_CST);
	int64_t now = t_now(s->clock);

	CHECKF(total <= t_due(s->e0, s->iv, now),
	       "early: %llu read, %llu due", (unsigned long long)total,
	       (unsigned long long)t_due(s->e0, s->iv, now));
}

static void stable_op(struct stable *s, unsigned what)
{
	struct itimerspec cur;
	struct pollfd p = { s->fd, POLLIN, 0 };
	uint64_t n;

	if (what == 0 && tfd_read(s->fd, &n, 8) == 8)
		stable_took(s, n);
	else if (what == 0)
		CHECKF(errno == EAGAIN, "tfd_read: %s", strerrorname_np(errno));
	if (what == 1 && read(s->fd, &n, 8) == 8)
		stable_took(s, n);
	else if (what == 1)
		CHECKF(errno == EAGAIN, "read: %s", strerrorname_np(errno));
	if (what == 2)
		CHECK_GE(poll(&p, 1, 0), 0);
	if (what == 3) {
		CHECK_OK(tfd_gettime(s->fd, &cur));
		CHECK_GE(t_ns(&cur.it_value), 1);
		CHECK_LE(t_ns(&cur.it_value), s->iv);
		CHECK_EQ(t_ns(&cur.it_interval), s->iv);
	}
}

/* ---- the churning timers ---- */

static void churn_settime(int fd, uint64_t r)
{
	struct itimerspec v = t_its((int64_t)(r % (3 * MS)), (r >> 8) % 2 ?
	                                                      (int64_t)(r % MS) + 1 : 0);
	int flags = 0;

	if ((r >> 9) % 4 == 0) {
		v.it_value.tv_sec = time(NULL) + 3600;
		flags = TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET;
	}
	if (tfd_settime(fd, flags, &v, NULL) < 0)
		allowed("tfd_settime", errno, ECANCELED, ECANCELED, ECANCELED);
}

/* A reader blocked on a timer that is closed waits on, as on Linux, until
 * the timer expires: make it expire before closing it. */
static void release_waiters(int fd)
{
	struct itimerspec v = t_its(MS, MS);

	if (tfd_settime(fd, 0, &v, NULL) < 0)
		allowed("tfd_settime", errno, ECANCELED, 0, 0);
}

/* Take a slot's timer away, close it, put a new one there. */
static void churn_replace(int slot, uint64_t r)
{
	int fd = __atomic_exchange_n(&churn[slot], -1, __ATOMIC_SEQ_CST);

	if (fd < 0)
		return; /* another thread is at it */
	release_waiters(fd);
	CHECK_OK(tfd_close(fd));
	fd = (int)CHECK_OK(tfd_create(r % 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC,
	                              slot == 0 ? 0 : TFD_NONBLOCK));
	__atomic_store_n(&churn[slot], fd, __ATOMIC_SEQ_CST);
}

/* A worker's read of a non-blocking slot can find its number closed and
 * made again for slot 0's blocking timer, and block there; if another
 * worker, holding the number from before, then re-arms that timer an hour
 * ahead (or disarms it) and a third closes it, the read waits for good, as
 * a read(2) would on Linux.  Only here may a worker be cancelled
 * (tfd_read is a cancellation point): nowhere else, so that no slot is
 * left empty by a cancelled replace. */
static ssize_t churn_read(int fd, uint64_t *n)
{
	ssize_t r;
	int e;

	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	r = tfd_read(fd, n, 8);
	e = errno;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	errno = e;
	return r;
}

static void churn_op(int slot, unsigned what, uint64_t r)
{
	int fd = __atomic_load_n(&churn[slot], __ATOMIC_SEQ_CST);
	struct itimerspec cur, v = t_its((int64_t)(r % MS) + 1, 0);
	struct pollfd p = { fd, POLLIN, 0 };
	uint64_t n;

	if (what == 0 || what == 1)
		churn_settime(fd, r);
	else if (what == 2 && tfd_gettime(fd, &cur) < 0)
		allowed("tfd_gettime", errno, 0, 0, 0);
	else if (what == 3 && slot > 0 && churn_read(fd, &n) < 0)
		allowed("tfd_read", errno, EAGAIN, ECANCELED, 0);
	else if (what == 4)
		CHECK_GE(poll(&p, 1, 0), 0);
	else if (what == 5 && timerfd(fd, -1, 0, NULL, &cur) < 0)
		allowed("timerfd query", errno, 0, 0, 0);
	else if (what == 6 && timerfd(fd, -1, 0, &v, &cur) < 0)
		allowed("timerfd change", errno, ECANCELED, 0, 0);
	else if (what == 7)
		churn_replace(slot, r);
}

struct worker {
	pthread_t th;
	uint64_t seed;
	unsigned long ops;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t r;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	while (!__atomic_load_n(&stop, __ATOMIC_SEQ_CST)) {
		r = rnd(&w->seed);
		if (r % 3 == 0)
			stable_op(&stable[(r >> 4) % NSTABLE], (unsigned)(r >> 8) % 4);
		else
			churn_op((int)((r >> 4) % NCHURN), (unsigned)(r >> 8) % 8,
			         r >> 16);
		if ((r >> 12) % 64 == 0)
			tfd_engine_clock_was_set();
		w->ops++;
	}
	return NULL;
}

/* Blocking tfd_read and read() on slot 0: they return on an expiration,
 * also of a timer another thread closes meanwhile (as on Linux), or with
 * EBADF when it was closed before they began. */
static void *waiter(void *arg)
{
	struct worker *w = arg;
	uint64_t n;

	while (!__atomic_load_n(&stop, __ATOMIC_SEQ_CST)) {
		int fd = __atomic_load_n(&churn[0], __ATOMIC_SEQ_CST);

		if (fd < 0) {
			sched_yield(); /* being replaced */
			continue;
		}
		if (tfd_read(fd, &n, 8) < 0)
			allowed("tfd_read", errno, EAGAIN, ECANCELED, 0);
		w->ops++;
	}
	return NULL;
}

/* The counts of all threads plus a last tfd_read: what elapsed, exactly. */
static void stable_final(struct stable *s)
{
	int64_t before = t_now(s->clock), after;
	uint64_t n = 0, total;

	if (tfd_read(s->fd, &n, 8) < 0)
		CHECK_EQ(errno, EAGAIN);
	after = t_now(s->clock);
	total = __atomic_load_n(&s->total, __ATOMIC_SEQ_CST) + n;
	CHECKF(total >= t_due(s->e0, s->iv, before) &&
	               total <= t_due(s->e0, s->iv, after),
	       "read %llu in all, %llu to %llu elapsed",
	       (unsigned long long)total,
	       (unsigned long long)t_due(s->e0, s->iv, before),
	       (unsigned long long)t_due(s->e0, s->iv, after));
	printf("stable timer %d: %llu expirations read, as elapsed\n", s->fd,
	       (unsigned long long)total);
	CHECK_OK(tfd_close(s->fd));
}

TEST_LIMIT(stress_threads_on_shared_timers, 30)
{
	struct worker w[NTHREAD + 1];
	unsigned long all = 0;
	int64_t t0;
	int i;

	stable_arm(&stable[0], CLOCK_MONOTONIC, 500 * US);
	stable_arm(&stable[1], CLOCK_REALTIME, 700 * US);
	for (i = 0; i < NCHURN; i++)
		churn[i] = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC,
		                                    i == 0 ? 0 : TFD_NONBLOCK));
	t0 = t_now(CLOCK_MONOTONIC);
	for (i = 0; i < NTHREAD; i++) {
		w[i].seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
		w[i].ops = 0;
		CHECK_EQ(pthread_create(&w[i].th, NULL, work, &w[i]), 0);
	}
	w[NTHREAD].ops = 0;
	CHECK_EQ(pthread_create(&w[NTHREAD].th, NULL, waiter, &w[NTHREAD]), 0);
	t_sleep_ns(RUN_NS);
	__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
	/* A worker blocked in churn_read() on slot 0's timer wakes when the
	 * slots are armed again; one blocked on a timer that was re-armed far
	 * ahead and closed waits for good (as on Linux) and is cancelled after 200 tries,
	 * as a program would end it. */
	for (i = 0; i < NTHREAD; i++)
		for (int tries = 0; pthread_tryjoin_np(w[i].th, NULL) == EBUSY;
		     tries++) {
			int k;

			if (tries == 200) {
				printf("thread %d: blocked on a closed timer, "
				       "cancelled\n", i);
				pthread_cancel(w[i].th);
				CHECK_EQ(pthread_join(w[i].th, NULL), 0);
				break;
			}

			for (k = 0; k < NCHURN; k++) {
				int fd = __atomic_load_n(&churn[k],
				                         __ATOMIC_SEQ_CST);

				if (fd >= 0)
					release_waiters(fd);
			}
			t_sleep_ns(MS);
		}
	/* None changes a timer now. */
	/* A reader blocked on slot 0 wakes when it expires. */
	for (i = 0; i < NCHURN; i++) {
		int fd;

		while ((fd = __atomic_exchange_n(&churn[i], -1,
		                                 __ATOMIC_SEQ_CST)) < 0)
			t_sleep_ns(MS); /* a replace in progress */
		release_waiters(fd);
		CHECK_OK(tfd_close(fd));
	}
	/* A reader may wait on for good, as on Linux, if a worker re-armed
	 * a timer as a one-shot just before another closed it: end it as a
	 * program would, with pthread_cancel (tfd_read is a cancellation
	 * point, and cleans up). */
	pthread_cancel(w[NTHREAD].th);
	pthread_join(w[NTHREAD].th, NULL);
	for (i = 0; i <= NTHREAD; i++) {
		printf("%s %d: %lu operations\n",
		       i < NTHREAD ? "thread" : "blocking reader", i, w[i].ops);
		all += w[i].ops;
	}
	printf("%lu operations by %d threads in %.2f s\n", all, NTHREAD + 1,
	       (double)(t_now(CLOCK_MONOTONIC) - t0) / SEC);
	for (i = 0; i < NSTABLE; i++)
		stable_final(&stable[i]);
	for (i = 0; i < NTHREAD; i++)
		CHECK_GE(w[i].ops, 100);
}

/* ---- settime against close on one descriptor ---- */

static int victim = -1; /* __atomic */
static unsigned long set_ok, set_badf, closes;

static void *setter(void *arg)
{
	struct itimerspec v = t_its(0, MS), off = t_its(0, 0);
	const int flags = TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET;
	unsigned long k;

	(void)arg;
	v.it_value.tv_sec = time(NULL) + 3600;
	for (k = 0; !__atomic_load_n(&stop, __ATOMIC_SEQ_CST); k++) {
		int fd = __atomic_load_n(&victim, __ATOMIC_SEQ_CST);

		if (tfd_settime(fd, k % 2 ? flags : 0, k % 3 ? &v : &off,
		                NULL) == 0)
			__atomic_add_fetch(&set_ok, 1, __ATOMIC_RELAXED);
		else if (errno == EBADF)
			__atomic_add_fetch(&set_badf, 1, __ATOMIC_RELAXED);
		else
			allowed("tfd_settime", errno, ECANCELED, 0, 0);
	}
	return NULL;
}

/* The setters mostly find a live timer; now and then one closed under
 * them, or its number already given to the next timer. */
static void *closer(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_SEQ_CST)) {
		int old = __atomic_load_n(&victim, __ATOMIC_SEQ_CST);
		int fd = (int)CHECK_OK(tfd_create(CLOCK_REALTIME, TFD_NONBLOCK));

		__atomic_store_n(&victim, fd, __ATOMIC_SEQ_CST);
		CHECK_OK(tfd_close(old));
		closes++;
	}
	return NULL;
}

/* Clock sets walk the cancel-on-set timers while they come and go. */
static void *canceller(void *arg)
{
	struct itimerspec cur;
	uint64_t n;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_SEQ_CST)) {
		int fd = __atomic_load_n(&victim, __ATOMIC_SEQ_CST);

		tfd_engine_clock_was_set();
		if (tfd_read(fd, &n, 8) < 0)
			allowed("tfd_read", errno, EAGAIN, ECANCELED, 0);
		if (tfd_gettime(fd, &cur) < 0)
			allowed("tfd_gettime", errno, 0, 0, 0);
	}
	return NULL;
}

TEST_LIMIT(stress_settime_races_close_on_one_descriptor, 30)
{
	pthread_t th[4];
	int i;

	victim = (int)CHECK_OK(tfd_create(CLOCK_REALTIME, TFD_NONBLOCK));
	__atomic_store_n(&stop, 0, __ATOMIC_SEQ_CST);
	CHECK_EQ(pthread_create(&th[0], NULL, setter, NULL), 0);
	CHECK_EQ(pthread_create(&th[1], NULL, setter, NULL), 0);
	CHECK_EQ(pthread_create(&th[2], NULL, closer, NULL), 0);
	CHECK_EQ(pthread_create(&th[3], NULL, canceller, NULL), 0);
	t_sleep_ns(600 * MS);
	__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK_OK(tfd_close(victim));
	printf("%lu settime succeeded, %lu found the descriptor closed, %lu "
	       "close and create\n", set_ok, set_badf, closes);
	CHECK_GE(closes, 10);
	CHECK_GE(set_ok, 10);
}
