/* SPDX-License-Identifier: MIT */
/*
 * exports_waits.c - the exported wrappers of the waits that only virtual
 * time changes: timed waits on conditions, semaphores, locks and joins
 * (timedwaits.c), socket calls, message queues, waits for children and
 * signal waits (iowaits.c); the untimed waits on conditions and
 * semaphores and the joins, which it parks, and the wakes that end them;
 * and the socket calls that give a socket its port, which is then the
 * tree's (vtime/outside.c).  Off virtual time, and for the library's own
 * calls, each goes straight to libc.  See tfd-preload(7), VIRTUAL TIME.
 */
#include "preload/preload.h"

#include <errno.h>
#include <mqueue.h>
#include <semaphore.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define OFF (!tfd_dom || tfd_inside)

/* ---- conditions, semaphores, locks, joins ---- */

/* Untimed waits on a condition or a semaphore are parked (vtime.h:
 * tfd_dom_park): the mover looks at their threads in /proc once, and not
 * again while no thread of the tree signals, broadcasts or posts what
 * they wait on (each tells, after its wake).  The end of a condition's
 * wait is a wake too: the C library's may pass on a signal it took to
 * another waiter (tfd_dom_unpark_ended). */
EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	const void *obj;
	void *parked;
	int r;

	if (OFF)
		return R(pthread_cond_wait)(c, m);
	obj = tfd_cond_obj(c);
	parked = tfd_dom_park(obj);
	r = R(pthread_cond_wait)(c, m);
	tfd_dom_unpark_ended(parked, obj, 0);
	return r;
}

EXPORT int sem_wait(sem_t *s)
{
	void *parked;
	int r;

	if (OFF)
		return R(sem_wait)(s);
	parked = tfd_dom_park(tfd_sem_obj(s));
	r = R(sem_wait)(s);
	tfd_dom_unpark(parked); /* (errno kept) */
	return r;
}

/* A join is parked too: the end of the thread it waits for is the
 * mover's to see. */
EXPORT int pthread_join(pthread_t t, void **ret)
{
	void *parked;
	int r;

	if (OFF)
		return R(pthread_join)(t, ret);
	parked = tfd_dom_park_join((uint64_t)t);
	r = R(pthread_join)(t, ret);
	tfd_dom_unpark(parked);
	return r;
}

/* Each wake reads what it wakes before it makes it: the thread woken may
 * free it at once.  One shared between processes has no waiter parked. */
EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	const void *obj = tfd_dom ? tfd_cond_obj(c) : NULL;
	int r = R(pthread_cond_signal)(c);

	if (obj)
		tfd_dom_woke(obj);
	return r;
}

EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	const void *obj = tfd_dom ? tfd_cond_obj(c) : NULL;
	int r = R(pthread_cond_broadcast)(c);

	if (obj)
		tfd_dom_woke(obj);
	return r;
}

EXPORT int sem_post(sem_t *s)
{
	const void *obj = tfd_dom ? tfd_sem_obj(s) : NULL;
	int r = R(sem_post)(s);

	if (obj)
		tfd_dom_woke(obj); /* (errno kept) */
	return r;
}

/* A thread cancelled in a parked wait runs its cleanup handlers, and may
 * block in them where nothing tells of its wake: every thread parked
 * before is looked at in /proc until it parks anew. */
EXPORT int pthread_cancel(pthread_t t)
{
	int r = R(pthread_cancel)(t);

	if (unlikely(tfd_dom != NULL))
		tfd_dom_woke(NULL);
	return r;
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                  const struct timespec *abs)
{
	if (OFF)
		return R(pthread_cond_timedwait)(c, m, abs);
	return tfd_timed_cond(c, m, (clockid_t)-1, abs);
}

EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
                                  clockid_t clk, const struct timespec *abs)
{
	if (OFF || (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME))
		return R(pthread_cond_clockwait)(c, m, clk, abs);
	return tfd_timed_cond(c, m, clk, abs);
}

EXPORT int sem_timedwait(sem_t *s, const struct timespec *abs)
{
	if (OFF)
		return R(sem_timedwait)(s, abs);
	return tfd_timed_sem(s, CLOCK_REALTIME, abs);
}

EXPORT int sem_clockwait(sem_t *s, clockid_t clk, const struct timespec *abs)
{
	if (OFF || (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME))
		return R(sem_clockwait)(s, clk, abs);
	return tfd_timed_sem(s, clk, abs);
}

EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m,
                                   const struct timespec *abs)
{
	if (OFF)
		return R(pthread_mutex_timedlock)(m, abs);
	return tfd_timed_lock(m, TL_MUTEX, CLOCK_REALTIME, abs);
}

EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clk,
                                   const struct timespec *abs)
{
	if (OFF || (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME))
		return R(pthread_mutex_clocklock)(m, clk, abs);
	return tfd_timed_lock(m, TL_MUTEX, clk, abs);
}

EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l,
                                      const struct timespec *abs)
{
	if (OFF)
		return R(pthread_rwlock_timedrdlock)(l, abs);
	return tfd_timed_lock(l, TL_READ, CLOCK_REALTIME, abs);
}

EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l,
                                      const struct timespec *abs)
{
	if (OFF)
		return R(pthread_rwlock_timedwrlock)(l, abs);
	return tfd_timed_lock(l, TL_WRITE, CLOCK_REALTIME, abs);
}

EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clk,
                                      const struct timespec *abs)
{
	if (OFF || (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME))
		return R(pthread_rwlock_clockrdlock)(l, clk, abs);
	return tfd_timed_lock(l, TL_READ, clk, abs);
}

EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clk,
                                      const struct timespec *abs)
{
	if (OFF || (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME))
		return R(pthread_rwlock_clockwrlock)(l, clk, abs);
	return tfd_timed_lock(l, TL_WRITE, clk, abs);
}

EXPORT int pthread_timedjoin_np(pthread_t th, void **ret,
                                const struct timespec *abs)
{
	if (OFF)
		return R(pthread_timedjoin_np)(th, ret, abs);
	return tfd_timed_join(th, ret, CLOCK_REALTIME, abs);
}

EXPORT int pthread_clockjoin_np(pthread_t th, void **ret, clockid_t clk,
                                const struct timespec *abs)
{
	if (OFF || (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME))
		return R(pthread_clockjoin_np)(th, ret, clk, abs);
	return tfd_timed_join(th, ret, clk, abs);
}

/* ---- sockets ---- */

struct io {
	int fd;
	void *buf;
	const void *cbuf;
	size_t n;
	struct sockaddr *addr;
	const struct sockaddr *caddr;
	socklen_t *alen;
	socklen_t clen;
	struct msghdr *msg;
	const struct msghdr *cmsg;
	int flags;
};

static ssize_t do_recvfrom(void *p, int flags)
{
	struct io *o = p;

	return R(recvfrom)(o->fd, o->buf, o->n, flags, o->addr, o->alen);
}

static ssize_t do_recvmsg(void *p, int flags)
{
	struct io *o = p;

	return R(recvmsg)(o->fd, o->msg, flags);
}

static ssize_t do_sendto(void *p, int flags)
{
	struct io *o = p;

	return R(sendto)(o->fd, o->cbuf, o->n, flags, o->caddr, o->clen);
}

static ssize_t do_sendmsg(void *p, int flags)
{
	struct io *o = p;

	return R(sendmsg)(o->fd, o->cmsg, flags);
}

static int do_accept4(void *p)
{
	struct io *o = p;

	return R(accept4)(o->fd, o->addr, o->alen, o->flags);
}

EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	struct io o = { .fd = fd, .buf = buf, .n = n };

	if (OFF)
		return R(recvfrom)(fd, buf, n, flags, NULL, NULL);
	return tfd_sock_call(fd, flags, 0, do_recvfrom, &o);
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags,
                        struct sockaddr *addr, socklen_t *alen)
{
	struct io o = { .fd = fd, .buf = buf, .n = n, .addr = addr,
		        .alen = alen };

	if (OFF)
		return R(recvfrom)(fd, buf, n, flags, addr, alen);
	return tfd_sock_call(fd, flags, 0, do_recvfrom, &o);
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct io o = { .fd = fd, .msg = msg };
	ssize_t r;

	if (OFF) {
		r = R(recvmsg)(fd, msg, flags);
	} else {
		r = tfd_sock_call(fd, flags, 0, do_recvmsg, &o);
		if (r >= 0)
			tfd_sock_stamps(msg);
	}
	if (r >= 0)
		tfd_timers_received(msg); /* a timer's number among them? */
	return r;
}

EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	struct io o = { .fd = fd, .cbuf = buf, .n = n };

	if (OFF)
		return R(sendto)(fd, buf, n, flags, NULL, 0);
	return tfd_sock_call(fd, flags, 1, do_sendto, &o);
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
                      const struct sockaddr *addr, socklen_t alen)
{
	struct io o = { .fd = fd, .cbuf = buf, .n = n, .caddr = addr,
		        .clen = alen };

	if (OFF)
		return R(sendto)(fd, buf, n, flags, addr, alen);
	return tfd_sock_call(fd, flags, 1, do_sendto, &o);
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct io o = { .fd = fd, .cmsg = msg };

	if (OFF)
		return R(sendmsg)(fd, msg, flags);
	return tfd_sock_call(fd, flags, 1, do_sendmsg, &o);
}

EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *alen, int flags)
{
	struct io o = { .fd = fd, .addr = addr, .alen = alen, .flags = flags };

	if (OFF)
		return R(accept4)(fd, addr, alen, flags);
	return tfd_sock_accept(fd, do_accept4, &o);
}

EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *alen)
{
	return accept4(fd, addr, alen, 0);
}

/* A port the tree's socket takes is the tree's: a wait on a connection
 * to it from another process of the tree is not a wait on the outside
 * (outside.c).  A connect(2) in progress has its port already. */
EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t alen)
{
	int r = R(bind)(fd, addr, alen);

	if (r == 0 && !OFF)
		tfd_dom_sock_bound(fd, NULL, 0);
	return r;
}

EXPORT int listen(int fd, int backlog)
{
	int r = R(listen)(fd, backlog);

	if (r == 0 && !OFF)
		tfd_dom_sock_bound(fd, NULL, 0);
	return r;
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t alen)
{
	int r = R(connect)(fd, addr, alen);

	if ((r == 0 || errno == EINPROGRESS) && !OFF)
		tfd_dom_sock_bound(fd, addr, alen); /* (errno kept) */
	return r;
}

/* ---- message queues ---- */

struct mq {
	mqd_t q;
	char *buf;
	const char *cbuf;
	size_t n;
	unsigned *prio;
	unsigned cprio;
};

static ssize_t try_receive(void *p)
{
	static const struct timespec past = { 0, 0 };
	struct mq *m = p;

	return R(mq_timedreceive)(m->q, m->buf, m->n, m->prio, &past);
}

static ssize_t try_send(void *p)
{
	static const struct timespec past = { 0, 0 };
	struct mq *m = p;

	return R(mq_timedsend)(m->q, m->cbuf, m->n, m->cprio, &past);
}

EXPORT ssize_t mq_timedreceive(mqd_t q, char *buf, size_t n, unsigned *prio,
                               const struct timespec *abs)
{
	struct mq m = { .q = q, .buf = buf, .n = n, .prio = prio };
	ssize_t r;

	if (OFF || tfd_null(abs) ||
	    (r = tfd_mq_timed(q, 0, abs, try_receive, &m)) == TFD_PASS)
		return R(mq_timedreceive)(q, buf, n, prio, abs);
	return r;
}

EXPORT int mq_timedsend(mqd_t q, const char *buf, size_t n, unsigned prio,
                        const struct timespec *abs)
{
	struct mq m = { .q = q, .cbuf = buf, .n = n, .cprio = prio };
	ssize_t r;

	if (OFF || tfd_null(abs) ||
	    (r = tfd_mq_timed(q, 1, abs, try_send, &m)) == TFD_PASS)
		return R(mq_timedsend)(q, buf, n, prio, abs);
	return (int)r;
}

/* ---- children ---- */

struct cw4 {
	pid_t pid;
	int *st;
	int opts;
	struct rusage *ru;
	pid_t got;
	idtype_t idt;
	id_t id;
	siginfo_t *info;
};

static int look_wait4(void *p)
{
	struct cw4 *c = p;

	c->got = (pid_t)syscall(SYS_wait4, c->pid, c->st, c->opts | WNOHANG,
	                        c->ru);
	return c->got != 0 ? 1 : 0; /* a child, or -1 (ECHILD...) */
}

static pid_t child_wait4(pid_t pid, int *st, int opts, struct rusage *ru)
{
	struct cw4 c = { .pid = pid, .st = st, .opts = opts, .ru = ru };
	int r = tfd_child_wait(look_wait4, &c);

	return r < 0 ? -1 : c.got;
}

EXPORT pid_t wait4(pid_t pid, int *st, int opts, struct rusage *ru)
{
	if (OFF || (opts & WNOHANG))
		return (pid_t)syscall(SYS_wait4, pid, st, opts, ru);
	return child_wait4(pid, st, opts, ru);
}

EXPORT pid_t waitpid(pid_t pid, int *st, int opts)
{
	return wait4(pid, st, opts, NULL);
}

EXPORT pid_t wait(int *st)
{
	return wait4(-1, st, 0, NULL);
}

EXPORT pid_t wait3(int *st, int opts, struct rusage *ru)
{
	return wait4(-1, st, opts, ru);
}

static int look_waitid(void *p)
{
	struct cw4 *c = p;
	int r;

	c->info->si_pid = 0;
	r = (int)syscall(SYS_waitid, c->idt, c->id, c->info, c->opts | WNOHANG,
	                 NULL);
	return r < 0 ? -1 : c->info->si_pid != 0;
}

EXPORT int waitid(idtype_t idt, id_t id, siginfo_t *info, int opts)
{
	struct cw4 c = { .idt = idt, .id = id, .info = info, .opts = opts };

	if (OFF || (opts & WNOHANG) || !info)
		return (int)syscall(SYS_waitid, idt, id, info, opts, NULL);
	return tfd_child_wait(look_waitid, &c) < 0 ? -1 : 0;
}

/* ---- signal waits ---- */

EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info,
                        const struct timespec *timeout)
{
	if (OFF || tfd_null(set))
		return R(sigtimedwait)(set, info, timeout);
	return tfd_sig_wait(set, info, timeout);
}

EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	if (OFF || tfd_null(set))
		return R(sigwaitinfo)(set, info);
	return tfd_sig_wait(set, info, NULL);
}

EXPORT int sigwait(const sigset_t *set, int *sig)
{
	int r;

	if (OFF || tfd_null(set))
		return R(sigwait)(set, sig);
	do
		r = tfd_sig_wait(set, NULL, NULL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno;
	*sig = r;
	return 0;
}

EXPORT int sigsuspend(const sigset_t *mask)
{
	sigset_t copy;

	if (tfd_null(mask))
		return R(sigsuspend)(mask); /* EFAULT */
	mask = tfd_sig_never_blocked(SIG_SETMASK, mask, &copy);
	if (OFF)
		return R(sigsuspend)(mask);
	return tfd_sig_suspend(mask);
}

EXPORT int pause(void)
{
	if (OFF)
		return R(pause)();
	return tfd_sig_suspend(NULL);
}
