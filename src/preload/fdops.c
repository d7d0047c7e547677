/* SPDX-License-Identifier: MIT */
/*
 * fdops.c - what a call on a number that names a timer does: create,
 * settime, gettime, read, readv, write, close, close_range, closefrom,
 * dup, dup2, dup3, fcntl(F_DUPFD*), ioctl; and numbers received over a
 * UNIX socket (SCM_RIGHTS).
 *
 * On a backend whose timers are the kernel's own timerfds (.native), the
 * calls go straight to libc: a passthrough at native cost.  Its numbers are
 * marked only for the trace.
 */
#include "preload/preload.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef TFD_IOC_SET_TICKS
#define TFD_IOC_SET_TICKS _IOW('T', 0, uint64_t)
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* ---- timerfd_create, timerfd_settime, timerfd_gettime ---- */

/* A timer of the engine's, or with kernel set (timerfd_create(2)) where
 * the engine cannot make one, the kernel's own, unmarked (below). */
int tfd_timer_create(int clockid, int flags, int kernel)
{
	char f[96];
	int was, fd, e, e0 = errno;

	if (!tfd_emulated) {
		fd = R(timerfd_create)(clockid, flags);
		if (fd >= 0 && fd < MARK_MAX && tfd_trace_path)
			tfd_set_mark(fd); /* for the trace of its calls */
	} else {
		was = tfd_enter();
		fd = tfd_api_create(clockid, flags);
		tfd_leave(was);
		if (fd >= 0)
			fd = tfd_adopt(fd);
		if (fd >= 0)
			tfd_timer_mode(fd, !!(flags & TFD_NONBLOCK));
		/* EAGAIN: a thread of ours could not start (RLIMIT_NPROC,
		 * no memory for its stack), which Linux never says.  The
		 * kernel's timer needs none: every call on it is the
		 * kernel's, as for any number not ours (a mark left on the
		 * number by a timer closed behind our back goes).  Not on
		 * virtual time, whose clocks the kernel's would not
		 * follow. */
		if (fd < 0 && errno == EAGAIN && kernel && !tfd_virt) {
			fd = R(timerfd_create)(clockid, flags);
			if (fd >= 0 && tfd_marked(fd))
				tfd_release_number(fd);
			if (fd >= 0)
				errno = e0; /* the EAGAIN was ours */
		}
	}
	e = errno;
	if (tfd_trace_path) /* the text costs more than the call */
		tfd_trace(fd, fd, e, "timerfd_create(%s, %s)",
		          tfd_clock_name(clockid),
		          tfd_flag_names(f, sizeof(f), flags, 0));
	errno = e;
	return fd;
}

int tfd_timer_settime(int fd, int flags, const struct itimerspec *nv,
                      struct itimerspec *old)
{
	char f[96], v[96], o[96], x[64];
	int was, r, e, held;

	if (!tfd_emulated) {
		r = R(timerfd_settime)(fd, flags, nv, old);
	} else {
		if (tfd_virt)
			tfd_dom_sync();
		held = tfd_epoll_set_begin(fd);
		was = tfd_enter();
		r = tfd_api_settime(fd, flags, nv, old);
		tfd_leave(was);
		tfd_epoll_set_end(held);
		if (r == 0 || errno == ECANCELED)
			tfd_epoll_consumed(fd); /* the count is 0 again */
		if (r == 0 && tfd_virt)
			tfd_dom_publish();
	}
	e = errno;
	if (tfd_trace_path)
		tfd_trace(fd, r, e, "timerfd_settime(%d, %s, %s, %s)%s", fd,
		          tfd_flag_names(f, sizeof(f), flags, 1),
		          tfd_its_text(v, sizeof(v), nv),
		          r == 0 ? tfd_its_text(o, sizeof(o), old)
		                 : old ? "old" : "NULL",
		          r == 0 ? tfd_next_text(x, sizeof(x), fd) : "");
	errno = e;
	return r;
}

int tfd_timer_gettime(int fd, struct itimerspec *cur)
{
	char v[96];
	int was, r, e;

	if (!tfd_emulated) {
		r = R(timerfd_gettime)(fd, cur);
	} else {
		if (tfd_virt)
			tfd_dom_sync();
		was = tfd_enter();
		r = tfd_api_gettime(fd, cur);
		tfd_leave(was);
	}
	e = errno;
	if (tfd_trace_path)
		tfd_trace(fd, r, e, "timerfd_gettime(%d, %s)", fd,
		          r == 0 ? tfd_its_text(v, sizeof(v), cur)
		                 : cur ? "cur" : "NULL");
	errno = e;
	return r;
}

/* ---- read, readv, write ---- */

static ssize_t read_counted(int fd, void *buf, size_t n, int door)
	__attribute__((noinline));

/* Set on virtual time around the engine's read: one with nothing to count
 * fails EAGAIN instead of waiting in read(2) for a post, a wait the
 * domain cannot see (another reader, in this process or another, took
 * the count that made the timer readable); it waits in the domain. */
static __thread int virtual_read __attribute__((tls_model("initial-exec")));

int tfd_read_nowait(void)
{
	return virtual_read;
}

int tfd_read_nowait_begin(void)
{
	int was = virtual_read;

	virtual_read = tfd_virt;
	return was;
}

void tfd_read_nowait_end(int was)
{
	virtual_read = was;
}

/* read(2) of a timer: tfd_read's exact count.  A cancellation point, as
 * read(2) is: at entry, and where it blocks (the engine's read(2), or a
 * wait on virtual time), both outside the library
 * (tfd_sys_read).  Nothing to count on a non-blocking timer is
 * told first, with no lock and no system call (the backend's quiet), and
 * nothing to trace. */
ssize_t tfd_timer_read(int fd, void *buf, size_t n)
{
	return tfd_timer_read_as(fd, buf, n, 0);
}

/* door: tfd_read(3)'s (exports_api.c): a number that names no timer now
 * gets its error, where read(2) reads it. */
ssize_t tfd_timer_read_as(int fd, void *buf, size_t n, int door)
{
	if (tfd_emulated) {
		tfd_may_not_return();
		pthread_testcancel();
		if (!tfd_virt && buf && n >= sizeof(uint64_t) &&
		    !tfd_trace_path && tfd_be->quiet && tfd_be->quiet(fd)) {
			errno = EAGAIN;
			return -1;
		}
	}
	return read_counted(fd, buf, n, door);
}

static ssize_t read_counted(int fd, void *buf, size_t n, int door)
{
	uint64_t count = 0;
	ssize_t r;
	int was, nw, e;

	if (!tfd_emulated) {
		r = R(read)(fd, buf, n);
		e = errno;
		if (r == (ssize_t)sizeof(count))
			memcpy(&count, buf, sizeof(count));
		goto out;
	}
again:
	if (tfd_virt)
		tfd_dom_sync();
	was = tfd_enter();
	/* On virtual time the read takes what is there; a blocking one that
	 * finds nothing waits on the domain, below, and reads again (so
	 * does one that another reader, a thread or a process sharing the
	 * timer, took it from first).  The flags are asked only then: a read
	 * that finds a count makes no system call for them. */
	nw = tfd_read_nowait_begin();
	/* A NULL buffer: Linux waits (or fails EAGAIN) first, then takes the
	 * count and fails EFAULT copying it out. */
	r = tfd_api_read(fd, buf || n < sizeof(count) ? buf : &count, n);
	e = errno;
	tfd_read_nowait_end(nw);
	tfd_leave(was);
	if (tfd_virt && r < 0 && e == EAGAIN && n >= sizeof(count) &&
	    !(R(fcntl)(fd, F_GETFL) & O_NONBLOCK)) {
		if (tfd_dom_read_wait(fd) < 0) {
			r = -1;
			e = errno;
			goto out;
		}
		goto again;
	}
	if (!buf && r >= 0) {
		r = -1;
		e = EFAULT;
	}
	if (r < 0 && e == EINVAL && !tfd_still_timer(fd) && !door)
		return R(read)(fd, buf, n);
	if (r >= 0 || e == EFAULT || e == ECANCELED)
		tfd_epoll_consumed(fd);
	if (r == (ssize_t)sizeof(count) && buf)
		memcpy(&count, buf, sizeof(count));
out:
	tfd_trace(fd, (long)r, e, "read(%d, %zu) [count %llu]", fd, n,
	          (unsigned long long)count);
	errno = e;
	return r;
}

/* readv(2) of a timer, as Linux: no bytes asked for is 0; fewer than 8
 * EINVAL; the count spread over the buffers, EFAULT (the count taken) if
 * one of them is NULL. */
ssize_t tfd_timer_readv(int fd, const struct iovec *iov, int cnt)
{
	uint64_t count;
	size_t total = 0, done = 0;
	ssize_t r;
	int i;

	if (!tfd_emulated)
		return R(readv)(fd, iov, cnt);
	if (cnt < 0 || cnt > IOV_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (cnt > 0 && !iov) {
		errno = EFAULT;
		return -1;
	}
	for (i = 0; i < cnt; i++) {
		if (iov[i].iov_len > (size_t)SSIZE_MAX - total) {
			errno = EINVAL;
			return -1;
		}
		total += iov[i].iov_len;
	}
	if (total == 0)
		return 0;
	r = tfd_timer_read(fd, &count,
	                   total < sizeof(count) ? total : sizeof(count));
	for (i = 0; r > 0 && i < cnt && done < sizeof(count); i++) {
		size_t k = iov[i].iov_len < sizeof(count) - done
		                   ? iov[i].iov_len
		                   : sizeof(count) - done;

		if (k && !iov[i].iov_base) {
			errno = EFAULT;
			return -1;
		}
		memcpy(iov[i].iov_base, (char *)&count + done, k);
		done += k;
	}
	return r;
}

/* write(2) and writev(2) of a timer fail with EINVAL, as on Linux. */
ssize_t tfd_timer_write(int fd, size_t n)
{
	tfd_trace(fd, -1, EINVAL, "write(%d, %zu)", fd, n);
	errno = EINVAL;
	return -1;
}

/* ---- close, close_range, closefrom ---- */

int tfd_timer_close(int fd)
{
	int was, r, e;

	/* A cancellation point, as glibc's close(2) is: before anything is
	 * done (a thread cancelled here leaves the timer open, as there).
	 * Then inside: a handler that would jump out between the mark and
	 * the close is deferred (signals.c). */
	tfd_may_not_return();
	pthread_testcancel();
	was = tfd_enter();
	tfd_clear_mark(fd);
	tfd_epoll_closed(fd);
	if (!tfd_emulated && !tfd_sets_has(fd))
		r = R(close)(fd);
	else
		r = tfd_api_close(fd); /* a set's too (tfd_set(3)) */
	tfd_leave(was);
	e = errno;
	tfd_trace(fd, r, e, "close(%d)", fd);
	errno = e;
	return r;
}

/* The timers and sets numbered from lo to hi: closed (before a range is
 * closed), or released (after the caller closed them in a table of its
 * own). */
static void each_marked(unsigned lo, unsigned hi, int close_them)
{
	unsigned fd, h = (unsigned)__atomic_load_n(&tfd_hiwater, __ATOMIC_RELAXED);
	int s;

	for (fd = lo; fd < h && fd <= hi; fd++) {
		if (!tfd_marked((int)fd))
			continue;
		if (close_them)
			tfd_timer_close((int)fd);
		else
			tfd_release_number((int)fd);
	}
	for (s = tfd_sets_next(lo > INT_MAX ? -1 : (int)lo);
	     s >= 0 && (unsigned)s <= hi; s = tfd_sets_next(s + 1)) {
		if (close_them)
			tfd_timer_close(s);
		else
			tfd_release_number(s);
	}
}

#define RANGE_FLAGS (CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)

/* close_range(2) by the program itself (not in a vfork child). */
int tfd_range_close(unsigned first, unsigned last, int flags)
{
	int r;

	/* What fails closes nothing; CLOEXEC closes nothing now. */
	if (((unsigned)flags & ~RANGE_FLAGS) || first > last ||
	    (flags & (int)CLOSE_RANGE_CLOEXEC))
		return R(close_range)(first, last, flags);
	if (!(flags & (int)CLOSE_RANGE_UNSHARE)) {
		each_marked(first, last, 1);
		return R(close_range)(first, last, flags);
	}
	/* UNSHARE: the caller's table becomes a copy of its own, and the
	 * range is closed there; its numbers no longer name our timers. */
	r = R(close_range)(first, last, flags);
	if (r == 0)
		each_marked(first, last, 0);
	return r;
}

void tfd_from_close(int lowfd)
{
	if (lowfd >= 0)
		each_marked((unsigned)lowfd, UINT_MAX, 1);
}

/* ---- dup, dup2, dup3, fcntl(F_DUPFD*), ioctl ---- */

/* A dup of a marked oldfd returned newfd (or failed); call is the text
 * of the call, "%d" for oldfd, for the trace. */
int tfd_dup_result(int oldfd, int newfd, const char *call, int arg)
{
	int e;

	if (!tfd_emulated) {
		if (newfd >= 0 && newfd < MARK_MAX && tfd_trace_path)
			tfd_set_mark(newfd);
	} else if (newfd >= 0 && tfd_share(oldfd, newfd) < 0) {
		newfd = -1;
	}
	e = errno;
	tfd_trace(oldfd, newfd, e, call, oldfd, arg);
	errno = e;
	return newfd;
}

/* dup2/dup3 where a timer is involved: the number newfd stops naming its
 * timer, if it did, and names oldfd's, if that is one. */
int tfd_timer_dup3(int oldfd, int newfd, int flags, int three)
{
	int r, e;

	/* Only once dup2 is sure to replace newfd (oldfd is open). */
	if (oldfd != newfd && (tfd_marked(newfd) || tfd_sets_has(newfd)) &&
	    R(fcntl)(oldfd, F_GETFD) >= 0)
		tfd_release_number(newfd);
	r = three ? R(dup3)(oldfd, newfd, flags) : R(dup2)(oldfd, newfd);
	if (r >= 0 && oldfd != newfd && tfd_marked(oldfd)) {
		if (!tfd_emulated)
			tfd_set_mark(r);
		else if (tfd_share(oldfd, r) < 0)
			r = -1;
	}
	e = errno;
	tfd_trace(oldfd, r, e, "%s(%d, %d)", three ? "dup3" : "dup2", oldfd,
	          newfd);
	errno = e;
	return r;
}

/* fcntl's third argument is read as a pointer, as glibc itself does: it
 * carries an int as well. */
/* The O_NONBLOCK of timer fd's file, as a call of the program's made or
 * set it (-1: a call we did not see set it): the engine tells a read
 * with nothing to count from it. */
void tfd_timer_mode(int fd, int nonblock)
{
	int was, e = errno;

	if (!tfd_emulated || !tfd_be->mode)
		return;
	was = tfd_enter();
	tfd_be->mode(fd, nonblock);
	tfd_leave(was);
	errno = e;
}

int tfd_timer_fcntl(int fd, int cmd, void *arg, int is64)
{
	int r = is64 ? R(fcntl64)(fd, cmd, arg) : R(fcntl)(fd, cmd, arg);

	if (cmd == F_SETFL)
		tfd_timer_mode(fd, r < 0 ? -1 : !!((intptr_t)arg & O_NONBLOCK));
	if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC)
		return r;
	return tfd_dup_result(fd, r,
	                      cmd == F_DUPFD ? "fcntl(%d, F_DUPFD, %d)"
	                                     : "fcntl(%d, F_DUPFD_CLOEXEC, %d)",
	                      (int)(intptr_t)arg);
}

/* fd arrived over a UNIX socket: if it names the file of a timer this
 * process holds under another number, it is one more number of that
 * timer, as a dup() of it would be.  Only a file of the kernel's anonymous
 * inode, as a timer's is, is compared (fstat(2): not a socket, pipe or
 * memfd, what programs pass most), with each marked number in turn by
 * kcmp(2); where kcmp is refused, never again.  A timer this process does
 * not hold stays a plain eventfd here (tfd-preload(7), BUGS). */
static int kcmp_refused;

static int same_file(pid_t me, int a, int b)
{
	long r = syscall(SYS_kcmp, me, me, KCMP_FILE, (unsigned long)a,
	                 (unsigned long)b);

	if (r < 0 && (errno == ENOSYS || errno == EPERM))
		__atomic_store_n(&kcmp_refused, 1, __ATOMIC_RELAXED);
	return r == 0;
}

static void received(int fd, const struct stat *anon)
{
	struct stat st;
	int m, hi, was, e;
	pid_t me = getpid();

	if (fd < 0 || fd >= MARK_MAX)
		return;
	if (tfd_marked(fd))
		tfd_release_number(fd); /* closed behind our back, and reused */
	if (fstat(fd, &st) != 0 || st.st_ino != anon->st_ino ||
	    st.st_dev != anon->st_dev)
		return;
	hi = __atomic_load_n(&tfd_hiwater, __ATOMIC_RELAXED);
	for (m = 0; m < hi && !kcmp_refused; m++) {
		if (m == fd || !tfd_marked(m) || !same_file(me, fd, m))
			continue;
		was = tfd_enter();
		e = tfd_be->dup(m, fd);
		tfd_leave(was);
		if (e == 0) {
			tfd_set_mark(fd);
			return;
		}
		if (e == EBADF || e == EINVAL)
			tfd_clear_mark(m); /* stale: look on */
		else
			return;
	}
}

/* The anonymous inode's identity, from a marked number (0: none). */
static int anon_inode(struct stat *st)
{
	int m, hi = __atomic_load_n(&tfd_hiwater, __ATOMIC_RELAXED);

	for (m = 0; m < hi; m++)
		if (tfd_marked(m) && fstat(m, st) == 0)
			return 1;
	return 0;
}

void tfd_timers_received(struct msghdr *msg)
{
	struct cmsghdr *c;
	struct stat anon;
	int e = errno, looked = 0;

	if (!tfd_emulated || tfd_inside || !msg->msg_controllen ||
	    !__atomic_load_n(&tfd_nmarked, __ATOMIC_RELAXED) || tfd_foreign())
		return;
	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		size_t i, n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		if (!looked++ && !anon_inode(&anon))
			break;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			received(fd, &anon);
		}
	}
	errno = e;
}

/* TFD_IOC_SET_TICKS reaches the engine's eventfd, which fails ENOTTY, as
 * Linux does without CONFIG_CHECKPOINT_RESTORE; the kernel backend's
 * timerfd does what Linux does.  Traced, otherwise untouched. */
int tfd_timer_ioctl(int fd, unsigned long req, void *arg)
{
	int r = R(ioctl)(fd, req, arg), e = errno;

	if (req == FIONBIO)
		tfd_timer_mode(fd, r < 0 || !arg ? -1 : *(int *)arg != 0);

	tfd_trace(fd, r, e, "ioctl(%d, %s)", fd,
	          req == TFD_IOC_SET_TICKS ? "TFD_IOC_SET_TICKS" : "other");
	errno = e;
	return r;
}
