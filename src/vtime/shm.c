/* SPDX-License-Identifier: MIT */
/*
 * shm.c - the shared memory of a virtual-time domain (domain.h): made by
 * `tfd exec` (or by a process of its own), mapped by each process of the
 * tree, its clocks read, a change told to the mover.  Built into `tfd
 * exec` too: nothing here is the preload's.
 */
#define _GNU_SOURCE
#include "core/time.h"
#include "vtime/domain.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int64_t tfd_dom_real_mono(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * TFD_NSEC + ts.tv_nsec;
}

static int64_t real_clock(clockid_t c)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, c, &ts);
	return (int64_t)ts.tv_sec * TFD_NSEC + ts.tv_nsec;
}

void tfd_dom_changed(struct tfd_dom *d)
{
	__atomic_add_fetch(&d->gen, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&d->sleeping, __ATOMIC_SEQ_CST))
		tfd_futex_wake(&d->gen, INT_MAX);
}

/* A file of no name to share the domain through, opened by the programs
 * as /proc/<pid>/fd/<fd>: a memfd, or where memfd_create(2) is refused
 * (a sandbox's filter, whatever it answers) an unnamed file in /dev/shm
 * or /tmp (O_TMPFILE), which opens the same way. */
static int shared_file(void)
{
	static const char *const dirs[] = { "/dev/shm", "/tmp" };
	int fd = (int)syscall(SYS_memfd_create, "tfd-domain", MFD_CLOEXEC);
	unsigned i;

	for (i = 0; fd < 0 && i < sizeof(dirs) / sizeof(*dirs); i++)
		fd = open(dirs[i], O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	return fd;
}

static int64_t whole_second(int64_t ns)
{
	return (ns + TFD_NSEC - 1) / TFD_NSEC * TFD_NSEC;
}

struct tfd_dom *tfd_dom_create(int *memfd, uint32_t rate_milli)
{
	size_t len = sizeof(struct tfd_dom);
	struct tfd_dom *d;
	int fd = -1;

	if (memfd) {
		fd = shared_file();
		if (fd < 0 || ftruncate(fd, (off_t)len) < 0) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		d = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	} else {
		d = mmap(NULL, len, PROT_READ | PROT_WRITE,
		         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	}
	if (d == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	memset(d, 0, len);
	d->size = (uint32_t)len;
	d->mover = getpid();
	d->rate_milli = rate_milli;
	d->slack_ns = TFD_DEFAULT_SLACK_NS;
	d->rbase = real_clock(CLOCK_MONOTONIC);
	/* Each clock at the next whole second after the system's: the same
	 * fractions on every run. */
	d->vbase[DC_MONO] = whole_second(d->rbase);
	d->vbase[DC_REAL] = whole_second(real_clock(CLOCK_REALTIME));
	d->vbase[DC_BOOT] = whole_second(real_clock(CLOCK_BOOTTIME));
	d->actrun = ACT_ONE;
	d->cap = DOM_NEVER;
	__atomic_store_n(&d->magic, DOM_MAGIC, __ATOMIC_RELEASE);
	if (memfd)
		*memfd = fd;
	return d;
}

/* Before any process joins: waits due within slack_ns of the earliest
 * end together (verdict.c). */
void tfd_dom_set_slack(struct tfd_dom *d, uint32_t slack_ns)
{
	__atomic_store_n(&d->slack_ns, slack_ns, __ATOMIC_RELEASE);
}

/* Before any process joins: CLOCK_REALTIME starts at real_ns. */
void tfd_dom_start_at(struct tfd_dom *d, int64_t real_ns)
{
	__atomic_store_n(&d->vbase[DC_REAL], real_ns, __ATOMIC_RELEASE);
}

/* The clock now: its value at the last jump, plus, in busy mode (or
 * while time flows for a busy thread, or once the mover is gone), the
 * real time since at the rate. */
int64_t tfd_dom_now(const struct tfd_dom *d, int clock)
{
	uint32_t s, rate, flowing;
	int64_t v, r, cap, mono, delta;

	for (;;) {
		s = __atomic_load_n(&d->seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue;
		/* Acquire loads: the second look at seq stays after them. */
		v = __atomic_load_n(&d->vbase[clock], __ATOMIC_ACQUIRE);
		mono = __atomic_load_n(&d->vbase[DC_MONO], __ATOMIC_ACQUIRE);
		r = __atomic_load_n(&d->rbase, __ATOMIC_ACQUIRE);
		rate = __atomic_load_n(&d->rate_milli, __ATOMIC_ACQUIRE);
		flowing = __atomic_load_n(&d->flowing, __ATOMIC_ACQUIRE);
		cap = __atomic_load_n(&d->cap, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&d->seq, __ATOMIC_RELAXED) == s)
			break;
	}
	if (__atomic_load_n(&d->ended, __ATOMIC_RELAXED)) {
		cap = DOM_NEVER; /* the mover is gone: real time */
		flowing = 1;
	}
	if (flowing)
		rate = rate ? rate : 1000;
	if (!rate)
		return v;
	delta = (tfd_dom_real_mono() - r) * (int64_t)rate / 1000;
	/* Flowing for a wait on the outside, the clocks stop at the tree's
	 * next deadline (mover.c): it is reached exactly. */
	if (flowing && cap != DOM_NEVER && delta > cap - mono)
		delta = cap - mono > 0 ? cap - mono : 0;
	return v + delta;
}

/* The domain named by TFD_DOMAIN=<pid>:<fd> (a memfd of `tfd exec`'s),
 * mapped; the descriptor opened to map it is closed at once. */
struct tfd_dom *tfd_dom_map(const char *name)
{
	char path[64];
	struct tfd_dom *d;
	int pid, fd, n;

	if (sscanf(name, "%d:%d%n", &pid, &fd, &n) != 2 || name[n])
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	d = mmap(NULL, sizeof(*d), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	syscall(SYS_close, fd); /* not the program's close(): ours */
	if (d == MAP_FAILED)
		return NULL;
	if (__atomic_load_n(&d->magic, __ATOMIC_ACQUIRE) != DOM_MAGIC ||
	    d->size != sizeof(*d)) {
		munmap(d, sizeof(*d));
		return NULL;
	}
	return d;
}

/* Real nanoseconds until deadline while time flows (busy mode, a busy
 * thread, the mover gone), -1 while it stands: only the mover ends the
 * wait. */
int64_t tfd_dom_real_left(const struct tfd_dom *d, int64_t deadline)
{
	uint32_t rate = __atomic_load_n(&d->rate_milli, __ATOMIC_RELAXED);
	int64_t left;

	/* After the wait's state (seq_cst): the mover's end sees the wait
	 * and pokes it, or the wait sees the end. */
	if (__atomic_load_n(&d->ended, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&d->flowing, __ATOMIC_SEQ_CST))
		rate = rate ? rate : 1000;
	if (!rate || deadline == DOM_NEVER)
		return -1;
	left = deadline - tfd_dom_now(d, DC_MONO);
	if (left <= 0)
		return 0;
	return left > INT64_MAX / 1000 ? INT64_MAX / rate : left * 1000 / rate;
}

/* The descriptors this process passes on to the programs it runs (those
 * open without FD_CLOEXEC) that are a pipe, FIFO or socket:
 * their other end may be held outside the tree (a terminal is, found
 * anywhere: waits.c).  Their identities go
 * into the domain, before any process joins it. */
void tfd_dom_inherit(struct tfd_dom *d)
{
	struct stat st;
	int fd, fl;
	uint32_t n = d->ninherited;

	for (fd = 0; fd < 1024 && n < DOM_INHERITED; fd++) {
		fl = (int)syscall(SYS_fcntl, fd, F_GETFD);
		if (fl < 0 || (fl & FD_CLOEXEC) || fstat(fd, &st) < 0)
			continue;
		if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
			continue; /* (terminals are outside wherever found) */
		d->inherited[n].dev = (uint64_t)st.st_dev;
		d->inherited[n].ino = (uint64_t)st.st_ino;
		n++;
	}
	__atomic_store_n(&d->ninherited, n, __ATOMIC_RELEASE);
}
