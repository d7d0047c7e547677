/* SPDX-License-Identifier: MIT */
/*
 * sigtimers.c - timers that signal, on virtual time: timer_create(2) and
 * its family on the clocks that move (SIGEV_SIGNAL, SIGEV_THREAD,
 * SIGEV_THREAD_ID, SIGEV_NONE), alarm(2), setitimer(2) and getitimer(2)
 * with ITIMER_REAL.  Each process keeps its own (they are not inherited
 * by fork, as on Linux); their deadlines are part of what the process
 * tells the mover (vtime.h), and they fire, when time reaches them, in
 * the thread of the process that delivers its timers.
 */
#include "preload/preload.h"
#include "lockorder.h"
#include "vtime/vtime.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NTIMERS 256
#define ALARM 0 /* the slot of ITIMER_REAL */
/* Our timer ids: far from glibc's (kernel ids, small; or its own
 * pointers for SIGEV_THREAD). */
#define ID_BASE ((uintptr_t)0x7f1d00000000ULL)

struct vtimer {
	int used;
	clockid_t clock;
	struct sigevent ev;
	pthread_attr_t attr; /* SIGEV_THREAD: a copy, if given */
	int has_attr;
	int64_t next;     /* virtual CLOCK_MONOTONIC ns, 0 disarmed */
	int64_t interval; /* ns */
	int overrun;      /* of the last expiration signalled */
};

static struct vtimer timers[NTIMERS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(lock, LK_SIGTIMERS);

TFD_LOCK_INSIDE(lock) /* lock_in(), lock_out() */
int tfd_nsigtimers; /* armed ones: the fast path of firing */

static timer_t id_of(int i)
{
	return (timer_t)(ID_BASE + (uintptr_t)i);
}

#define ID_LIBC (-1)    /* not one of our ids: a timer of libc's */
#define ID_DELETED (-2) /* one of ours, deleted (EINVAL) */

/* The index of one of our ids, or ID_LIBC, or ID_DELETED. */
static int index_of(timer_t id)
{
	uintptr_t u = (uintptr_t)id;

	if (u < ID_BASE + 1 || u >= ID_BASE + NTIMERS)
		return ID_LIBC;
	return timers[u - ID_BASE].used ? (int)(u - ID_BASE) : ID_DELETED;
}

int tfd_sigtimer_ours(timer_t id)
{
	return tfd_dom && index_of(id) != ID_LIBC;
}

static void count_armed(void)
{
	int i, n = 0;

	for (i = 0; i < NTIMERS; i++)
		n += timers[i].used && timers[i].next;
	__atomic_store_n(&tfd_nsigtimers, n, __ATOMIC_RELEASE);
}

int tfd_sigtimer_create(clockid_t c, struct sigevent *ev, timer_t *id)
{
	int i;

	if (tfd_dom_wait_base(c) < 0) /* CPU-time clocks: the system's;
	                                   * raw, coarse: Linux's error */
		return TFD_PASS;
	if (ev && ev->sigev_notify != SIGEV_NONE &&
	    ev->sigev_notify != SIGEV_SIGNAL && ev->sigev_notify != SIGEV_THREAD &&
	    ev->sigev_notify != SIGEV_THREAD_ID) {
		errno = EINVAL;
		return -1;
	}
	if (ev && ev->sigev_notify != SIGEV_NONE &&
	    ev->sigev_notify != SIGEV_THREAD &&
	    (ev->sigev_signo <= 0 || ev->sigev_signo >= _NSIG)) {
		errno = EINVAL;
		return -1;
	}
	lock_in();
	for (i = 1; i < NTIMERS && timers[i].used; i++)
		;
	if (i == NTIMERS) {
		lock_out();
		errno = EAGAIN;
		return -1;
	}
	memset(&timers[i], 0, sizeof(timers[i]));
	timers[i].used = 1;
	timers[i].clock = c;
	if (ev) {
		timers[i].ev = *ev;
	} else {
		timers[i].ev.sigev_notify = SIGEV_SIGNAL;
		timers[i].ev.sigev_signo = SIGALRM;
		timers[i].ev.sigev_value.sival_ptr = id_of(i);
	}
	if (ev && ev->sigev_notify == SIGEV_THREAD &&
	    ev->sigev_notify_attributes) {
		timers[i].attr = *ev->sigev_notify_attributes;
		timers[i].has_attr = 1;
	}
	lock_out();
	*id = id_of(i);
	return 0;
}

/* ns to the next expiry and the interval, as a query returns them. */
static void query(const struct vtimer *t, int64_t now, struct itimerspec *v)
{
	int64_t left = t->next ? t->next - now : 0;

	v->it_value = tfd_ns_to_ts(t->next && left <= 0 ? 1 : left);
	if (!t->next)
		v->it_value.tv_sec = v->it_value.tv_nsec = 0;
	v->it_interval = tfd_ns_to_ts(t->interval);
}

static int set(int i, int flags, const struct itimerspec *nv,
               struct itimerspec *old)
{
	struct vtimer *t = &timers[i];
	int64_t now = tfd_dom_clock_now(CLOCK_MONOTONIC), v;

	if (!nv || !tfd_ts_valid(&nv->it_value) ||
	    !tfd_ts_valid(&nv->it_interval)) {
		errno = nv ? EINVAL : EFAULT;
		return -1;
	}
	lock_in();
	if (old)
		query(t, now, old);
	v = tfd_ts_to_ns(&nv->it_value);
	t->interval = tfd_ts_to_ns(&nv->it_interval);
	t->overrun = 0;
	if (v == 0) {
		t->next = 0;
	} else {
		if (flags & TIMER_ABSTIME) /* on the timer's clock */
			v -= tfd_dom_clock_now(t->clock) - now;
		else
			v += now;
		t->next = v <= now ? now : v;
		if (t->next - now > TFD_HORIZON)
			t->next = INT64_MAX; /* no end of time: never */
	}
	count_armed();
	lock_out();
	tfd_dom_publish(); /* fires it if due, tells the mover */
	return 0;
}

int tfd_sigtimer_settime(timer_t id, int flags, const struct itimerspec *nv,
                         struct itimerspec *old)
{
	int i = index_of(id);

	if (i < 0) {
		errno = EINVAL;
		return -1;
	}
	return set(i, flags, nv, old);
}

int tfd_sigtimer_gettime(timer_t id, struct itimerspec *cur)
{
	int i = index_of(id);

	if (i < 0) {
		errno = EINVAL;
		return -1;
	}
	lock_in();
	query(&timers[i], tfd_dom_clock_now(CLOCK_MONOTONIC), cur);
	lock_out();
	return 0;
}

int tfd_sigtimer_getoverrun(timer_t id)
{
	int i = index_of(id), n;

	if (i < 0) {
		errno = EINVAL;
		return -1;
	}
	lock_in();
	n = timers[i].overrun;
	lock_out();
	return n;
}

int tfd_sigtimer_delete(timer_t id)
{
	int i = index_of(id);

	if (i < 0) {
		errno = EINVAL;
		return -1;
	}
	lock_in();
	if (timers[i].has_attr)
		timers[i].has_attr = 0;
	timers[i].used = 0;
	timers[i].next = 0;
	count_armed();
	lock_out();
	return 0;
}

/* ---- alarm, setitimer, getitimer (ITIMER_REAL) ---- */

static void alarm_slot(void)
{
	if (!timers[ALARM].used) {
		timers[ALARM].used = 1;
		timers[ALARM].clock = CLOCK_MONOTONIC;
		timers[ALARM].ev.sigev_notify = SIGEV_SIGNAL;
		timers[ALARM].ev.sigev_signo = SIGALRM;
	}
}

/* An itimerspec as setitimer and getitimer give it: microseconds, the
 * value rounded up (never 0 for a timer still armed). */
static void to_itimerval(const struct itimerspec *v, struct itimerval *tv)
{
	tv->it_value.tv_sec = v->it_value.tv_sec;
	tv->it_value.tv_usec = (v->it_value.tv_nsec + 999) / 1000;
	tv->it_interval.tv_sec = v->it_interval.tv_sec;
	tv->it_interval.tv_usec = v->it_interval.tv_nsec / 1000;
	if (tv->it_value.tv_usec == 1000000) {
		tv->it_value.tv_sec++;
		tv->it_value.tv_usec = 0;
	}
}

int tfd_sigtimer_setitimer(const struct itimerval *nv, struct itimerval *old)
{
	struct itimerspec n, o;
	int r;

	if (!nv || nv->it_value.tv_usec < 0 || nv->it_value.tv_usec >= 1000000 ||
	    nv->it_interval.tv_usec < 0 || nv->it_interval.tv_usec >= 1000000 ||
	    nv->it_value.tv_sec < 0 || nv->it_interval.tv_sec < 0) {
		errno = nv ? EINVAL : EFAULT;
		return -1;
	}
	n.it_value.tv_sec = nv->it_value.tv_sec;
	n.it_value.tv_nsec = nv->it_value.tv_usec * 1000;
	n.it_interval.tv_sec = nv->it_interval.tv_sec;
	n.it_interval.tv_nsec = nv->it_interval.tv_usec * 1000;
	lock_in();
	alarm_slot();
	lock_out();
	r = set(ALARM, 0, &n, &o);
	if (r == 0 && old)
		to_itimerval(&o, old);
	return r;
}

int tfd_sigtimer_getitimer(struct itimerval *cur)
{
	struct itimerspec c;

	lock_in();
	alarm_slot();
	query(&timers[ALARM], tfd_dom_clock_now(CLOCK_MONOTONIC), &c);
	lock_out();
	to_itimerval(&c, cur);
	return 0;
}

unsigned tfd_sigtimer_alarm(unsigned s)
{
	struct itimerval n = { { 0, 0 }, { (time_t)s, 0 } }, o;

	tfd_sigtimer_setitimer(&n, &o);
	/* Linux: rounded to the nearest second, never 0 while one was
	 * pending. */
	if (o.it_value.tv_usec >= 500000 ||
	    (!o.it_value.tv_sec && o.it_value.tv_usec))
		o.it_value.tv_sec++;
	return (unsigned)o.it_value.tv_sec;
}

/* ---- firing ---- */

struct thread_call {
	void (*fn)(union sigval);
	union sigval v;
};

static void *notify_thread(void *p)
{
	struct thread_call c = *(struct thread_call *)p;

	free(p);
	c.fn(c.v);
	return NULL;
}

/* Send the signal of t: as Linux's timers do (si_code SI_TIMER, the
 * timer's value); where the kernel lets only a process's own main thread
 * send that code, as a queued signal (SI_QUEUE) with the same value. */
static void send_one(int i, const struct vtimer *t)
{
	siginfo_t si;
	pid_t pid = getpid();
	long r;

	memset(&si, 0, sizeof(si));
	si.si_signo = t->ev.sigev_signo;
	si.si_code = i == ALARM ? SI_KERNEL : SI_TIMER;
	si.si_value = t->ev.sigev_value;
	if (i != ALARM) {
		si.si_timerid = i;
		si.si_overrun = t->overrun;
	}
	if (t->ev.sigev_notify == SIGEV_THREAD_ID) {
		pid_t tid = t->ev._sigev_un._tid;

		r = syscall(SYS_rt_tgsigqueueinfo, pid, tid, si.si_signo, &si);
		if (r < 0 && errno == EPERM) {
			si.si_code = SI_QUEUE;
			si.si_pid = pid;
			si.si_uid = getuid();
			syscall(SYS_rt_tgsigqueueinfo, pid, tid, si.si_signo, &si);
		}
		return;
	}
	r = syscall(SYS_rt_sigqueueinfo, pid, si.si_signo, &si);
	if (r < 0 && errno == EPERM) {
		if (i == ALARM) {
			kill(pid, SIGALRM);
			return;
		}
		si.si_code = SI_QUEUE;
		si.si_pid = pid;
		si.si_uid = getuid();
		syscall(SYS_rt_sigqueueinfo, pid, si.si_signo, &si);
	}
}

/* Send it, and tell virtual time of the wake (vtime.h: tfd_dom_park). */
static void signal_one(int i, const struct vtimer *t)
{
	send_one(i, t);
	if (tfd_dom)
		tfd_dom_signalled(getpid(),
		                  t->ev.sigev_notify == SIGEV_THREAD_ID
		                          ? t->ev._sigev_un._tid
		                          : 0);
}

static void fire(int i, struct vtimer *t)
{
	if (t->ev.sigev_notify == SIGEV_NONE)
		return;
	if (t->ev.sigev_notify == SIGEV_THREAD) {
		struct thread_call *c = malloc(sizeof(*c));
		pthread_attr_t a;
		pthread_t th;
		int was;

		if (!c)
			return;
		c->fn = t->ev.sigev_notify_function;
		c->v = t->ev.sigev_value;
		if (t->has_attr)
			a = t->attr;
		else
			pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		/* A thread of the program's, in the domain, even when the
		 * agent (a thread of ours) fires the timer. */
		was = tfd_inside;
		tfd_inside = 0;
		if (pthread_create(&th, &a, notify_thread, c) != 0)
			free(c);
		tfd_inside = was;
		return;
	}
	signal_one(i, t);
}

/* Fire every timer due at now (virtual CLOCK_MONOTONIC); the next expiry
 * of any, or DOM_NEVER. */
int64_t tfd_sigtimers_fire(int64_t now)
{
	int64_t next = DOM_NEVER;
	struct vtimer due[8];
	int idx[8], n = 0, i, again;

	if (!__atomic_load_n(&tfd_nsigtimers, __ATOMIC_ACQUIRE))
		return next;
	do {
		again = 0;
		n = 0;
		lock_in();
		for (i = 0; i < NTIMERS; i++) {
			struct vtimer *t = &timers[i];

			if (!t->used || !t->next)
				continue;
			if (t->next <= now) {
				if (n == 8) {
					again = 1;
					continue;
				}
				t->overrun = 0;
				if (t->interval) {
					int64_t k = (now - t->next) / t->interval;

					t->overrun = k > INT32_MAX ? INT32_MAX
					                           : (int)k;
					t->next += (k + 1) * t->interval;
				} else {
					t->next = 0;
				}
				idx[n] = i;
				due[n++] = *t;
			}
			if (t->next && t->next != INT64_MAX && t->next < next)
				next = t->next;
		}
		count_armed();
		lock_out();
		for (i = 0; i < n; i++) /* unlocked: a handler may set one */
			fire(idx[i], &due[i]);
	} while (again);
	return next;
}

/* The next expiry of any, or DOM_NEVER. */
int64_t tfd_sigtimers_next(void)
{
	int64_t next = DOM_NEVER;
	int i;

	if (!__atomic_load_n(&tfd_nsigtimers, __ATOMIC_ACQUIRE))
		return next;
	lock_in();
	for (i = 0; i < NTIMERS; i++)
		if (timers[i].used && timers[i].next &&
		    timers[i].next != INT64_MAX && timers[i].next < next)
			next = timers[i].next;
	lock_out();
	return next;
}

/* A child has none of its parent's (fork(2)). */
void tfd_sigtimers_forked(void)
{
	memset(timers, 0, sizeof(timers));
	__atomic_store_n(&tfd_nsigtimers, 0, __ATOMIC_RELEASE);
	pthread_mutex_init(&lock, NULL);
}
