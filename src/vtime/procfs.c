/* SPDX-License-Identifier: MIT */
/*
 * procfs.c - what the mover reads of /proc: a thread's stat, its runs
 * count and its CPU time, each file opened, read and closed, or kept
 * open between looks (mover.h).  Nothing here calls the allocator: in
 * the preload the mover is a thread of the program's.
 */
#define _GNU_SOURCE
#include "vtime/mover.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

static const struct seen none;

/* /proc/PID/task/TID/NAME opened, -1 if not.  Raw calls here: no
 * cancellation point (a wait of the program's asks too: outside.c). */
static int open_task_file(int pid, int tid, const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", pid, tid, name);
	return (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
}

/* An open file read from its start into buf, NUL-terminated: 1, or 0. */
static int read_whole(int fd, char *buf, size_t len)
{
	ssize_t n = syscall(SYS_pread64, fd, buf, len - 1, (off_t)0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	return 1;
}

/* /proc/PID/task/TID/NAME into buf, NUL-terminated: 1, or 0 (gone). */
static int read_task_file(int pid, int tid, const char *name, char *buf,
                          size_t len)
{
	int fd = open_task_file(pid, tid, name), r;

	if (fd < 0)
		return 0;
	r = read_whole(fd, buf, len);
	syscall(SYS_close, fd);
	return r;
}

/* A stat line: state, threads, SIGKILL pending. */
static struct seen parse_stat(const char *buf)
{
	struct seen s = none;
	unsigned long long sig = 0;
	const char *p = strrchr(buf, ')'); /* the name may hold anything */
	int k;

	if (!p || p[1] != ' ')
		return s;
	p += 2;
	s.state = *p;
	/* After the state (field 3): num_threads is field 20, the thread's
	 * pending signals field 31. */
	for (k = 1; k <= 28 && p; k++) {
		p = strchr(p, ' ');
		if (p && *++p && k == 17)
			s.threads = atol(p);
		if (p && k == 28)
			sig = strtoull(p, NULL, 10);
	}
	s.killed = (sig >> (SIGKILL - 1)) & 1;
	return s;
}

/* A status file's context switches, voluntary ones into *vol. */
static long status_switches(const char *buf, long *vol)
{
	const char *p = strstr(buf, "\nvoluntary_ctxt_switches:");
	long n = 0;

	*vol = p ? atol(p + 25) : 0;
	p = strstr(buf, "\nnonvoluntary_ctxt_switches:");
	if (p)
		n = atol(p + 28);
	return n + *vol;
}

/* The voluntary context switches of a thread (it blocked): -1 if gone. */
long tfd_dom_thread_blocked_count(int pid, int tid)
{
	char buf[2048];
	long vol;

	if (!read_task_file(pid, tid, "status", buf, sizeof(buf)))
		return -1;
	status_switches(buf, &vol);
	return vol;
}

/* The CPU time a thread has used, in ns (schedstat), -1 if unknown. */
int64_t tfd_dom_thread_cpu(int pid, int tid)
{
	char buf[128];

	if (!read_task_file(pid, tid, "schedstat", buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

/* The runs count from a schedstat (or status) file read into buf into
 * t, and the CPU time from a schedstat. */
static void parse_runs(const struct mover *m, const char *buf,
                       struct seen *t)
{
	long vol;
	const char *p;

	t->cpu = -1;
	if (m->no_schedstat > 0) {
		t->runs = status_switches(buf, &vol);
		return;
	}
	p = strrchr(buf, ' '); /* "cpu_ns wait_ns runs" */
	t->cpu = strtoll(buf, NULL, 10);
	t->runs = t->cpu + (p ? strtoll(p + 1, NULL, 10) : 0);
}

/* The file that holds the runs count: schedstat where it counts (a kernel
 * without the statistics prints zeros: this thread has run). */
static const char *runs_file(struct mover *m)
{
	if (m->no_schedstat < 0)
		m->no_schedstat = tfd_dom_thread_cpu(getpid(), gettid()) <= 0;
	return m->no_schedstat ? "status" : "schedstat";
}

struct seen tfd_dom_look_stat(int pid, int tid)
{
	char buf[1024];

	if (!read_task_file(pid, tid, "stat", buf, sizeof(buf)))
		return none;
	return parse_stat(buf);
}

/* Whether process pid has ended: gone, or a zombie whose threads have
 * all ended (a first thread that ended before the others is a zombie
 * too, in a process that runs). */
int tfd_dom_proc_ended(int32_t pid)
{
	char buf[512]; /* a wait's stack (outside.c): up to the threads */
	struct seen s = none;

	if (read_task_file(pid, pid, "stat", buf, sizeof(buf)))
		s = parse_stat(buf);
	return !s.state ||
	       ((s.state == 'Z' || s.state == 'X') && s.threads <= 1);
}

/* stat, then the runs count: a thread seen blocked (S) at two looks with
 * the same count has not run since the first look read it. */
struct seen tfd_dom_look_thread(struct mover *m, int pid, int tid)
{
	char buf[2048];
	struct seen s = tfd_dom_look_stat(pid, tid);

	if (!s.state)
		return none;
	if (!read_task_file(pid, tid, runs_file(m), buf, sizeof(buf)))
		return none;
	parse_runs(m, buf, &s);
	return s;
}

/*
 * The threads blocked outside our waits are looked at twice a move (a
 * Java program has 16 of them, and its own 50 ms ticks); a look by open,
 * read and close costs three times one by pread of a file kept open.
 * Only a mover in a process of its own keeps them (`tfd exec`: its own
 * table); the preload's, in the program's process, keeps nothing in the
 * program's table.  By slot, with the thread they were opened for, and
 * each process's first thread's stat by record.  Out of descriptors,
 * none is kept.
 *
 * At most a quarter of the descriptors `tfd exec` may have, and 256: the
 * mover's other looks open files too (a failed open would take a thread
 * for gone).
 */
void tfd_dom_keep_files(struct mover *m)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	m->kept_max = rl.rlim_cur / 4 < 256 ? (int)(rl.rlim_cur / 4) : 256;
	m->keep_files = 1;
}

void tfd_dom_drop_kept(struct mover *m, size_t k)
{
	int i;

	for (i = 0; i < 3; i++)
		if (m->kept[k].fd1[i]) {
			close(m->kept[k].fd1[i] - 1);
			m->kept[k].fd1[i] = 0;
			m->nkept--;
		}
}

static void drop_kept_proc(struct mover *m, size_t i)
{
	if (m->kproc[i].fd1) {
		close(m->kproc[i].fd1 - 1);
		m->kproc[i].fd1 = 0;
		m->nkept--;
	}
}

void tfd_dom_drop_all_kept(struct mover *m)
{
	size_t k;

	for (k = 0; k < DOM_SLOTS; k++)
		tfd_dom_drop_kept(m, k);
	for (k = 0; k < DOM_PROCS; k++)
		drop_kept_proc(m, k);
}

/* Thread tid's file NAME kept open as *fd1 (fd + 1): 0, -1 (gone), or 1:
 * none kept (out of room or descriptors). */
static int keep(struct mover *m, int32_t pid, int32_t tid,
                const char *name, int *fd1)
{
	int fd;

	if (m->nkept >= m->kept_max)
		return 1;
	fd = open_task_file(pid, tid, name);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
		tfd_dom_drop_all_kept(m);
		m->keep_files = 0;
		return 1;
	}
	if (fd < 0)
		return -1;
	*fd1 = fd + 1;
	m->nkept++;
	return 0;
}

/* tfd_dom_look_stat() of the first thread of the process of record i
 * (before each move: procs.c), through a file kept open. */
struct seen tfd_dom_look_leader(struct mover *m, size_t i, int32_t pid)
{
	char buf[1024];
	int r;

	if (!m->keep_files)
		return tfd_dom_look_stat(pid, pid);
	if (m->kproc[i].pid != pid) {
		drop_kept_proc(m, i);
		m->kproc[i].pid = pid;
	}
	r = m->kproc[i].fd1 ? 0 : keep(m, pid, pid, "stat", &m->kproc[i].fd1);
	if (r == 0 && read_whole(m->kproc[i].fd1 - 1, buf, sizeof(buf)))
		return parse_stat(buf);
	/* Unreadable, or none kept: opened anew (its pid may be another
	 * process's now, which a file of the one gone does not show). */
	drop_kept_proc(m, i);
	return tfd_dom_look_stat(pid, pid);
}

/* Slot k's thread's file NAME, kept open as its file i, read into buf:
 * 1; 0 if unreadable (its thread is gone, its tid may be another
 * thread's now: its files are dropped); -1 if none can be kept (the
 * caller opens it anew). */
static int read_kept(struct mover *m, size_t k, int i, const char *name,
                     char *buf, size_t len)
{
	int *fd1 = &m->kept[k].fd1[i];
	int r = *fd1 ? 0 : keep(m, m->kept[k].pid, m->kept[k].tid, name, fd1);

	if (r > 0)
		return -1;
	if (r < 0 || !read_whole(*fd1 - 1, buf, len)) {
		tfd_dom_drop_kept(m, k);
		return 0;
	}
	return 1;
}

/* tfd_dom_look_thread() of slot s's thread, or (nfiles 1) its stat line
 * alone. */
static struct seen look_slot(struct mover *m, const struct dom_slot *s,
                             int nfiles)
{
	size_t k = (size_t)(s - m->d->slot);
	int32_t pid = s->pid, tid = s->tid;
	struct seen t = none;
	char buf[2048];
	int i, r = -1;

	if (m->keep_files &&
	    (m->kept[k].pid != pid || m->kept[k].tid != tid)) {
		tfd_dom_drop_kept(m, k);
		m->kept[k].pid = pid;
		m->kept[k].tid = tid;
	}
	for (i = 0; m->keep_files && i < nfiles; i++) {
		r = read_kept(m, k, i, i ? runs_file(m) : "stat", buf,
		              sizeof(buf));
		if (r <= 0)
			break;
		if (i == 0 && !(t = parse_stat(buf)).state)
			return none;
	}
	if (r < 0) /* none kept: opened anew */
		return nfiles == 1 ? tfd_dom_look_stat(pid, tid)
		                   : tfd_dom_look_thread(m, pid, tid);
	if (r == 0)
		return none;
	if (nfiles > 1)
		parse_runs(m, buf, &t);
	return t;
}

struct seen tfd_dom_look_slot(struct mover *m, const struct dom_slot *s)
{
	return look_slot(m, s, 2);
}

struct seen tfd_dom_look_slot_state(struct mover *m,
                                    const struct dom_slot *s)
{
	return look_slot(m, s, 1);
}

/* tfd_dom_thread_blocked_count() of slot s's thread, through a file
 * kept beside those tfd_dom_look_slot() keeps (a thread seen running is
 * asked at each look: busy.c). */
long tfd_dom_slot_blocked_count(struct mover *m, const struct dom_slot *s)
{
	size_t k = (size_t)(s - m->d->slot);
	int32_t pid = s->pid, tid = s->tid;
	char buf[2048];
	long vol;
	int r = -1;

	if (m->keep_files && m->kept[k].pid == pid && m->kept[k].tid == tid)
		r = read_kept(m, k, 2, "status", buf, sizeof(buf));
	if (r < 0)
		return tfd_dom_thread_blocked_count(pid, tid);
	if (r == 0)
		return -1;
	status_switches(buf, &vol);
	return vol;
}

/* fn(pid, tid, arg) for each thread of pid, until it returns nonzero:
 * that value, or 0.  The directory is read with getdents64: opendir()
 * would call the program's allocator. */
static int each_task(int32_t pid, int (*fn)(int32_t, int, void *),
                     void *arg)
{
	char path[64], buf[4096];
	int fd, r = 0;
	long n;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (!r && (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		long off = 0;

		while (!r && off < n) {
			/* struct linux_dirent64: ino, off, reclen, type,
			 * name */
			unsigned short reclen;
			int tid;

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			tid = atoi(buf + off + 19);
			off += reclen;
			if (tid > 0)
				r = fn(pid, tid, arg);
		}
	}
	close(fd);
	return r;
}

static int not_stopped(int32_t pid, int tid, void *arg)
{
	char st = tfd_dom_look_stat(pid, tid).state;

	(void)arg;
	return !(st == 'T' || st == 'Z' || st == 'X');
}

/* 1 if every thread of pid is stopped (SIGSTOP): a stop is complete,
 * and told to the parent, only once the last thread has stopped, which
 * may be a thread of the library's (an agent). */
int tfd_dom_all_stopped(int32_t pid)
{
	return each_task(pid, not_stopped, NULL) == 0;
}

/*
 * A thread of the kernel's io_uring, by its stat line: a worker
 * (iou-wrk-TID) or the submission poller (iou-sqp-PID).  Told by the
 * kernel's flag for them (PF_IO_WORKER, field 9), which the thread has
 * from its making: its name is its maker's until it first runs and names
 * itself, which a busy machine may put off for milliseconds while its
 * maker already waits for its work.  The flag is trusted from Linux 5.12
 * on, where the workers became threads of the process; before, its bit
 * was another flag's (a KVM thread's in the guest).  The name, besides.
 */
#define PF_IO_WORKER 0x10u

static int flag_told(void)
{
	static int told = -1; /* [A] */
	int t = __atomic_load_n(&told, __ATOMIC_RELAXED), major, minor;
	struct utsname u;

	if (t < 0) {
		t = uname(&u) == 0 &&
		    sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
		    (major > 5 || (major == 5 && minor >= 12));
		__atomic_store_n(&told, t, __ATOMIC_RELAXED);
	}
	return t;
}

static int uring_task(const char *buf)
{
	const char *name = strchr(buf, '('), *p = strrchr(buf, ')');
	unsigned flags = 0;

	if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) == 1 &&
	    (flags & PF_IO_WORKER) && flag_told())
		return 1;
	return name && (!strncmp(name + 1, "iou-wrk-", 8) ||
	                !strncmp(name + 1, "iou-sqp-", 8));
}

/* A thread of the kernel's io_uring that runs or waits in the kernel for
 * I/O (D): an operation is under way. */
static int uring_busy(int32_t pid, int tid, void *arg)
{
	char buf[1024];
	struct seen t;

	(void)arg;
	if (tid == pid || !read_task_file(pid, tid, "stat", buf, sizeof(buf)) ||
	    !uring_task(buf))
		return 0;
	t = parse_stat(buf);
	return t.state == 'R' || t.state == 'D';
}

int tfd_dom_uring_busy(int32_t pid)
{
	return each_task(pid, uring_busy, NULL) > 0;
}

static int uring_thread(int32_t pid, int tid, void *arg)
{
	char buf[1024];

	(void)arg;
	return tid != pid &&
	       read_task_file(pid, tid, "stat", buf, sizeof(buf)) &&
	       uring_task(buf);
}

int tfd_dom_uring_threads(int32_t pid)
{
	return each_task(pid, uring_thread, NULL) > 0;
}
