/* SPDX-License-Identifier: MIT */
/*
 * api.c - the public functions.  Arguments are checked here, in the order
 * of SPEC sections 2 and 3; this is the only file that sets errno, and it
 * leaves errno as it found it on success.  Those that make, arm, read and
 * close timers and sets are named tfd_api_* here (api.h): their public
 * names are doors, libtfd's (doors.c) or the preload's.
 */
#define _GNU_SOURCE
#include "tfd.h"
#include "lockorder.h"

#include "api.h"
#include "backend.h"
#include "core/time.h"
#include "sets.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CREATE_FLAGS (TFD_NONBLOCK | TFD_CLOEXEC)
#define SETTIME_FLAGS (TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET)

/* Return r with errno untouched, or -1 with errno = e. */
static int result(int e, int r, int saved)
{
	errno = e ? e : saved;
	return e ? -1 : r;
}

static const struct tfd_backend *const backends[] = {
	&tfd_engine_backend,
	&tfd_kernel_backend,
	&tfd_virtual_backend,
};

static const struct tfd_backend *current;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
/* Creating takes it shared, switching backends exclusive: no timer can be
 * created on the old backend while the switch checks there is none. */
static pthread_rwlock_t select_lock = PTHREAD_RWLOCK_INITIALIZER;
TFD_LOCK_RANK(select_lock, LK_SELECT);

static const struct tfd_backend *find_backend(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(backends) / sizeof(*backends); i++)
		if (!strcmp(name, backends[i]->name))
			return backends[i];
	return NULL;
}

/* ---- "none": what TFD_BACKEND=virtaul selects (tfd_use_backend(3)).
 * It has no timer: creating one fails with EINVAL, a descriptor is never
 * one of its timers, and closing one is close(2), as on every backend for
 * a descriptor that is not a timer.  tfd_use_backend() leaves it. ---- */

static int none_create(int clockid, int flags, int *fd)
{
	(void)clockid;
	(void)flags;
	(void)fd;
	return EINVAL;
}

/* EBADF for a number that is not open, EINVAL for one that is. */
static int none_check(int fd)
{
	return fcntl(fd, F_GETFD) < 0 ? EBADF : EINVAL;
}

static int none_settime(int fd, int flags, const struct itimerspec *nv,
                        struct itimerspec *old)
{
	(void)flags;
	(void)nv;
	(void)old;
	return none_check(fd);
}

static int none_gettime(int fd, struct itimerspec *cur)
{
	(void)cur;
	return none_check(fd);
}

static int none_read(int fd, uint64_t *count)
{
	(void)count;
	return none_check(fd);
}

static int none_close(int fd)
{
	return close(fd) < 0 ? errno : 0;
}

static int none_dup(int oldfd, int newfd)
{
	(void)newfd;
	return none_check(oldfd);
}

static size_t none_count(void)
{
	return 0;
}

static int none_activate(void)
{
	return 0;
}

static const struct tfd_backend none_backend = {
	.name = "none",
	.create = none_create,
	.check = none_check,
	.settime = none_settime,
	.gettime = none_gettime,
	.read = none_read,
	.close = none_close,
	.dup = none_dup,
	.count = none_count,
	.activate = none_activate,
};

/* TFD_BACKEND names the backend; unset or empty means the engine.  A name
 * that is not a backend's selects none: no timer can be created until
 * tfd_use_backend() selects one.  A library cannot print (the program's
 * descriptor 2 is the program's), and running on another backend than
 * the one asked for would be wrong without a word (a test meant for
 * virtual time would take hours): the first tfd_create fails instead.  A
 * secure-execution process (set-user-ID...) ignores the variable: a user
 * must not freeze a privileged program's timers (TFD_BACKEND=virtual). */
static void from_env(void)
{
	const char *name = secure_getenv("TFD_BACKEND");
	const struct tfd_backend *b = &tfd_engine_backend;

	if (name && *name && !(b = find_backend(name)))
		b = &none_backend;
	else if (b->activate())
		b = &tfd_engine_backend;
	__atomic_store_n(&current, b, __ATOMIC_RELEASE);
}

static const struct tfd_backend *backend(void)
{
	pthread_once(&env_once, from_env);
	return __atomic_load_n(&current, __ATOMIC_ACQUIRE);
}

#define be backend()

int tfd_use_backend(const char *name)
{
	const struct tfd_backend *b, *cur;
	int saved = errno, e = 0;

	b = find_backend(name);
	if (!b)
		return result(EINVAL, -1, saved);
	pthread_rwlock_wrlock(&select_lock);
	cur = backend();
	if (b != cur) {
		if (cur->count() > 0)
			e = EBUSY;
		else
			e = b->activate();
		if (!e)
			__atomic_store_n(&current, b, __ATOMIC_RELEASE);
	}
	pthread_rwlock_unlock(&select_lock);
	return result(e, 0, saved);
}

const char *tfd_backend_name(void)
{
	return backend()->name;
}

/* The backend in use: for the preload library (src/preload/), which calls its
 * dup and check operations. */
const struct tfd_backend *tfd_current_backend(void)
{
	return backend();
}

/* Before a timer that may start threads of ours: their code stays loaded
 * (lifetime.c); outside our locks, as it takes the dynamic loader's. */
static void pin(void)
{
	if (be->pin)
		be->pin();
}

/* Clocks timerfd_create(2) accepts. */
static int clock_known(int c)
{
	return c == CLOCK_REALTIME || c == CLOCK_MONOTONIC ||
	       c == CLOCK_BOOTTIME || c == CLOCK_REALTIME_ALARM ||
	       c == CLOCK_BOOTTIME_ALARM;
}

static int spec_valid(const struct itimerspec *s)
{
	return tfd_ts_valid(&s->it_value) && tfd_ts_valid(&s->it_interval);
}

int tfd_api_create(clockid_t clockid, int flags)
{
	int saved = errno, fd = -1, e = EINVAL;

	if (!(flags & ~CREATE_FLAGS) && clock_known(clockid)) {
		pin();
		pthread_rwlock_rdlock(&select_lock);
		e = be->create(clockid, flags, &fd);
		pthread_rwlock_unlock(&select_lock);
	}
	if (!e)
		tfd_sets_forget(fd);
	return result(e, fd, saved);
}

int tfd_api_settime(int fd, int flags, const struct itimerspec *new_value,
                    struct itimerspec *old_value)
{
	struct itimerspec old;
	int saved = errno, e;

	if (!new_value)
		e = EFAULT;
	else if ((flags & ~SETTIME_FLAGS) || !spec_valid(new_value) ||
	         tfd_sets_has(fd))
		e = EINVAL;
	else
		e = be->settime(fd, flags, new_value,
		                old_value ? &old : NULL);
	if (!e && old_value)
		*old_value = old;
	return result(e, 0, saved);
}

int tfd_api_gettime(int fd, struct itimerspec *curr_value)
{
	struct itimerspec cur;
	int saved = errno, e;

	e = tfd_sets_has(fd) ? EINVAL : be->gettime(fd, &cur);
	if (!e && !curr_value)
		e = EFAULT;
	if (!e)
		*curr_value = cur;
	return result(e, 0, saved);
}

ssize_t tfd_api_read(int fd, void *buf, size_t count)
{
	uint64_t n;
	int saved = errno, e;

	/* A cancellation point, as read(2) is: at entry, and while it
	 * blocks (the backend's). */
	tfd_may_not_return();
	pthread_testcancel();
	if (count < sizeof(n) || !buf) {
		/* The descriptor is judged first, as read(2) does: a set's
		 * is a timer of the backend, and no timer (tfd_set(3)). */
		e = tfd_sets_has(fd) ? EINVAL : be->check(fd);
		if (!e)
			e = count < sizeof(n) ? EINVAL : EFAULT;
		return result(e, -1, saved);
	}
	e = tfd_sets_has(fd) ? EINVAL : be->read(fd, &n);
	if (!e && n == 0)
		return result(0, 0, saved); /* SPEC 2: the clock went back */
	if (!e)
		memcpy(buf, &n, sizeof(n));
	return result(e, (int)sizeof(n), saved);
}

int tfd_api_close(int fd)
{
	int saved = errno, e;

	/* A cancellation point, as glibc's close(2) is: before anything is
	 * closed. */
	tfd_may_not_return();
	pthread_testcancel();
	if (!tfd_sets_close(be, fd, &e))
		e = be->close(fd);
	return result(e, 0, saved);
}

/* SPEC section 3: the seven checks of the 2007 proposal, in its order. */
int tfd_api_timerfd(int ufd, int clockid, int flags,
                    const struct itimerspec *utmr, struct itimerspec *outmr)
{
	struct itimerspec out;
	int allowed = SETTIME_FLAGS | (ufd == -1 ? CREATE_FLAGS : 0);
	int saved = errno, e, fd = ufd;

	if (ufd >= 0 ? clockid != -1 : !clock_known(clockid))
		e = EINVAL; /* 1: an existing timer keeps its clock */
	else if (flags & ~allowed)
		e = EINVAL; /* 2 */
	else if (!utmr && flags)
		e = EINVAL; /* 3: a query takes no flags */
	else if (ufd == -1 && (!utmr || outmr))
		e = EINVAL; /* 4: creation needs a value, has no old one */
	else if (!utmr && !outmr)
		e = EINVAL; /* 5: nothing asked */
	else if (utmr && !spec_valid(utmr))
		e = EINVAL; /* 6 */
	else if (ufd >= 0 && tfd_sets_has(ufd))
		e = EINVAL; /* a set is no timer */
	else if (ufd == -1) {
		const struct tfd_backend *b;

		pin();
		pthread_rwlock_rdlock(&select_lock);
		b = be;
		e = b->create(clockid, flags & CREATE_FLAGS, &fd);
		if (!e) {
			e = b->settime(fd, flags & SETTIME_FLAGS, utmr, NULL);
			if (e)
				b->close(fd);
		}
		pthread_rwlock_unlock(&select_lock);
		if (!e)
			tfd_sets_forget(fd);
	} else if (utmr) {
		e = be->settime(ufd, flags, utmr, outmr ? &out : NULL);
	} else {
		e = be->gettime(ufd, &out);
	}
	if (!e && outmr)
		*outmr = out;
	return result(e, fd, saved);
}

/* ---- timer sets: tfd_set(3) ---- */

/* The clocks a set may be on. */
static int set_clock(clockid_t c)
{
	return c == CLOCK_MONOTONIC || c == CLOCK_REALTIME ||
	       c == CLOCK_BOOTTIME;
}

int tfd_api_set_create(clockid_t clockid, int flags)
{
	int saved = errno, fd = -1, e = EINVAL;

	if (!(flags & ~CREATE_FLAGS) && set_clock(clockid)) {
		pin();
		pthread_rwlock_rdlock(&select_lock);
		e = tfd_sets_create(be, clockid, flags, &fd);
		pthread_rwlock_unlock(&select_lock);
	}
	return result(e, fd, saved);
}

/* As tfd_settime: the value first, then the descriptor; the flags of a
 * timer (CANCEL_ON_SET counts on an absolute CLOCK_REALTIME key only:
 * sets.c).  Never ECANCELED: a read of the set reports a clock set. */
int tfd_api_set_settime(int sfd, uint64_t key, int flags,
                        const struct itimerspec *new_value,
                        struct itimerspec *old_value)
{
	struct itimerspec old;
	int saved = errno, e;

	if (!new_value)
		e = EFAULT;
	else if ((flags & ~SETTIME_FLAGS) || !spec_valid(new_value))
		e = EINVAL;
	else
		e = tfd_sets_settime(be, sfd, key, flags, new_value,
		                     old_value ? &old : NULL);
	if (!e && old_value)
		*old_value = old;
	return result(e, 0, saved);
}

int tfd_api_set_gettime(int sfd, uint64_t key,
                        struct itimerspec *curr_value)
{
	struct itimerspec cur;
	int saved = errno, e;

	e = tfd_sets_gettime(be, sfd, key, &cur);
	if (!e && !curr_value)
		e = EFAULT;
	if (!e)
		*curr_value = cur;
	return result(e, 0, saved);
}

/* As tfd_read: the descriptor, then the size, then the buffer. */
ssize_t tfd_api_set_read(int sfd, struct tfd_expiry *buf, size_t count)
{
	size_t n = 0, max = count / sizeof(*buf);
	int saved = errno, e;

	if (max > INT_MAX / sizeof(*buf)) /* (the bytes fit the result) */
		max = INT_MAX / sizeof(*buf);
	tfd_may_not_return();
	pthread_testcancel();
	if (count < sizeof(*buf) || !buf) {
		/* The descriptor is judged first, as tfd_read does. */
		e = tfd_sets_check(sfd);
		if (!e)
			e = count < sizeof(*buf) ? EINVAL : EFAULT;
	} else {
		e = tfd_sets_read(be, sfd, buf, max, &n);
	}
	return result(e, (int)(n * sizeof(*buf)), saved);
}

/* ---- the virtual clock: tfd_virtual(3) ---- */

static int virtual_clock(clockid_t c)
{
	return c == CLOCK_REALTIME || c == CLOCK_MONOTONIC ||
	       c == CLOCK_BOOTTIME;
}

int tfd_virtual_now(clockid_t clockid, struct timespec *now)
{
	int64_t ns = 0;
	int saved = errno, e;

	if (!now)
		e = EFAULT;
	else if (!virtual_clock(clockid))
		e = EINVAL;
	else if (!be->virtual_now)
		e = ENOTSUP;
	else
		e = be->virtual_now(clockid, &ns);
	if (!e)
		*now = tfd_ns_to_ts(ns);
	return result(e, 0, saved);
}

/* Check a step or a time, then the backend: 0, EFAULT, EINVAL, ENOTSUP. */
static int step_ok(const struct timespec *t)
{
	if (!t)
		return EFAULT;
	if (!tfd_ts_valid(t))
		return EINVAL;
	return be->virtual_move ? 0 : ENOTSUP;
}

int tfd_virtual_advance(const struct timespec *step)
{
	int saved = errno, e = step_ok(step);
	int64_t d;

	if (!e) {
		d = tfd_ts_to_ns(step);
		e = be->virtual_move(d, d, d, NULL, 0);
	}
	return result(e, 0, saved);
}

int tfd_virtual_suspend(const struct timespec *step)
{
	int saved = errno, e = step_ok(step);
	int64_t d;

	if (!e) {
		d = tfd_ts_to_ns(step);
		e = be->virtual_move(0, d, d, NULL, 1);
	}
	return result(e, 0, saved);
}

int tfd_virtual_set_realtime(const struct timespec *t)
{
	int saved = errno, e = step_ok(t);
	int64_t to;

	if (!e) {
		to = tfd_ts_to_ns(t);
		e = be->virtual_move(0, 0, 0, &to, 1);
	}
	return result(e, 0, saved);
}
