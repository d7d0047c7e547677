/* SPDX-License-Identifier: MIT */
/*
 * mover.c - the one mover of a virtual-time domain (domain.h).  It runs
 * in `tfd exec`, which stays as the tree's parent, or in a thread of the
 * preload's when a program runs on virtual time without `tfd exec`.
 *
 * The mover sleeps on the domain's futex word while anything runs.  When
 * every thread of the tree is in a wait of ours (or blocked outside them,
 * which /proc tells), it makes sure that each wait which something else
 * than time could end has looked since the last thing that could have
 * ended it (else it pokes it and waits for its look; a wait in slices is
 * asked of /proc instead), then moves the clocks to the earliest
 * deadline of the tree, and wakes what is due.
 */
#define _GNU_SOURCE
#include "core/time.h"
#include "sanitizer.h"
#include "vtime/domain.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>


/* Set the clocks to mono (forward only), the others by as much, and
 * whether time flows from there, and up to where (cap). */
static void set_clocks_flowing(struct tfd_dom *d, int64_t mono,
                               uint32_t flowing, int64_t cap)
{
	int64_t now = tfd_dom_now(d, DC_MONO), delta = mono - now;
	int64_t real = tfd_dom_now(d, DC_REAL), boot = tfd_dom_now(d, DC_BOOT);

	if (delta < 0)
		delta = 0;
	__atomic_add_fetch(&d->seq, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&d->vbase[DC_MONO], now + delta, __ATOMIC_RELAXED);
	__atomic_store_n(&d->vbase[DC_REAL], real + delta, __ATOMIC_RELAXED);
	__atomic_store_n(&d->vbase[DC_BOOT], boot + delta, __ATOMIC_RELAXED);
	__atomic_store_n(&d->rbase, tfd_dom_real_mono(), __ATOMIC_RELAXED);
	__atomic_store_n(&d->cap, cap, __ATOMIC_RELAXED);
	__atomic_store_n(&d->flowing, flowing, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&d->seq, 1, __ATOMIC_ACQ_REL);
}

static void set_clocks(struct tfd_dom *d, int64_t mono)
{
	set_clocks_flowing(d, mono, __atomic_load_n(&d->flowing,
	                                            __ATOMIC_RELAXED),
	                   __atomic_load_n(&d->cap, __ATOMIC_RELAXED));
}

/* Every wait of the tree that blocks without a limit while time stands
 * (a sleep, a wait in the kernel) is poked, and every agent woken, to
 * wait again with a limit of real time: time flows. */
static void wake_all(struct tfd_dom *d)
{
	uint32_t i, hi = __atomic_load_n(&d->hiwater, __ATOMIC_ACQUIRE);

	for (i = 0; i < hi; i++) {
		struct dom_slot *s = &d->slot[i];

		if (s->tid > 0 &&
		    __atomic_load_n(&s->state, __ATOMIC_SEQ_CST) == DS_WAIT)
			syscall(SYS_tgkill, s->pid, s->tid, DOM_POKE_SIG);
	}
	hi = __atomic_load_n(&d->phiwater, __ATOMIC_ACQUIRE);
	for (i = 0; i < hi; i++) {
		struct dom_proc *p = &d->proc[i];

		if (__atomic_load_n(&p->pid, __ATOMIC_ACQUIRE) > 0 &&
		    __atomic_load_n(&p->agent, __ATOMIC_ACQUIRE)) {
			__atomic_add_fetch(&p->wake, 1, __ATOMIC_SEQ_CST);
			tfd_futex_wake(&p->wake, INT_MAX);
		}
	}
}

/* Time flows at the real rate up to cap (on), or stands where it has
 * come (off): see busy_thread() and waits on the outside below. */
static void flow_to(struct tfd_dom *d, int on, int64_t cap)
{
	uint32_t was = __atomic_load_n(&d->flowing, __ATOMIC_RELAXED);

	if (!was == !on &&
	    (!on || __atomic_load_n(&d->cap, __ATOMIC_RELAXED) == cap))
		return;
	set_clocks_flowing(d, tfd_dom_now(d, DC_MONO), on ? 1 : 0,
	                   on ? cap : DOM_NEVER);
	if (on)
		wake_all(d);
}

static void flow(struct tfd_dom *d, int on)
{
	flow_to(d, on, DOM_NEVER);
}

/*
 * What /proc says of a thread: its state and its process's threads (from
 * stat, the cheapest of its files with them), whether it has SIGKILL
 * pending, and a count that grows whenever it runs: schedstat's CPU time
 * and times run (stat and schedstat together cost half what status does,
 * which a kernel without schedstat gives instead: its context switches).
 * The CPU time, not the times run alone: a thread seen S before its
 * switch away (it sets its state, then schedules) may be woken before
 * that switch and block again without being switched in anew; the CPU
 * time it used meanwhile is counted at the latest as it blocks.
 */
struct seen {
	char state;   /* R S D T t Z X..., 0 gone or unreadable */
	int killed;   /* SIGKILL pending: a fatal signal, or exit_group() in
	               * another thread (the kernel sends it to the others) */
	long threads; /* of its process */
	int64_t runs; /* grows whenever it runs */
};

static int no_schedstat = -1; /* not known yet */

/* /proc/PID/task/TID/NAME into buf, NUL-terminated: 1, or 0 (gone). */
static int read_task_file(int pid, int tid, const char *name, char *buf,
                          size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", pid, tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return 1;
}

/* A stat line: state, threads, SIGKILL pending. */
static struct seen parse_stat(const char *buf)
{
	struct seen s = { 0, 0, 0, 0 };
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
static long thread_blocked_count(int pid, int tid)
{
	char buf[2048];
	long vol;

	if (!read_task_file(pid, tid, "status", buf, sizeof(buf)))
		return -1;
	status_switches(buf, &vol);
	return vol;
}

/* The runs count from a schedstat (or status) file read into buf. */
static int64_t parse_runs(const char *buf)
{
	long vol;
	const char *p;

	if (no_schedstat > 0)
		return status_switches(buf, &vol);
	p = strrchr(buf, ' '); /* "cpu_ns wait_ns runs" */
	return strtoll(buf, NULL, 10) + (p ? strtoll(p + 1, NULL, 10) : 0);
}

/* The file that holds the runs count: schedstat where it counts (a kernel
 * without the statistics prints zeros: this thread has run). */
static const char *runs_file(void)
{
	if (no_schedstat < 0) {
		char buf[128];

		no_schedstat = !read_task_file(getpid(), gettid(), "schedstat",
		                               buf, sizeof(buf)) ||
		               strtoll(buf, NULL, 10) <= 0;
	}
	return no_schedstat ? "status" : "schedstat";
}

static struct seen look_stat(int pid, int tid)
{
	char buf[1024];
	struct seen none = { 0, 0, 0, 0 };

	if (!read_task_file(pid, tid, "stat", buf, sizeof(buf)))
		return none;
	return parse_stat(buf);
}

/* stat, then the runs count: a thread seen blocked (S) at two looks with
 * the same count has not run since the first look read it. */
static struct seen look_thread(int pid, int tid)
{
	char buf[2048];
	struct seen s = look_stat(pid, tid), none = { 0, 0, 0, 0 };

	if (!s.state)
		return none;
	if (!read_task_file(pid, tid, runs_file(), buf, sizeof(buf)))
		return none;
	s.runs = parse_runs(buf);
	return s;
}

/*
 * The threads blocked outside our waits are looked at twice a move (a
 * Java program has 16 of them, and its own 50 ms ticks); a look by open,
 * read and close costs three times one by pread of a file kept open.
 * Only a mover in a process of its own keeps them (`tfd exec`: its own
 * table); the preload's, in the program's process, keeps nothing in the
 * program's table.  By slot, with the thread they were opened for: stat's
 * and the runs count's, fd + 1, 0 for none.  Out of descriptors, none is
 * kept.
 */
static int keep_files, nkept, kept_max;
static struct {
	int32_t pid, tid;
	int fd1[2];
} kept[DOM_SLOTS];

/* At most a quarter of the descriptors `tfd exec` may have, and 256: the
 * mover's other looks open files too (a failed open would take a thread
 * for gone). */
void tfd_dom_mover_keeps_files(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	kept_max = rl.rlim_cur / 4 < 256 ? (int)(rl.rlim_cur / 4) : 256;
	keep_files = 1;
}

static void drop_kept(size_t k)
{
	int i;

	for (i = 0; i < 2; i++)
		if (kept[k].fd1[i]) {
			close(kept[k].fd1[i] - 1);
			kept[k].fd1[i] = 0;
			nkept--;
		}
}

/* Slot k's thread's file NAME kept open as kept[k].fd1[i]: 0, -1 (gone),
 * or 1: none kept (out of room or descriptors). */
static int keep(size_t k, int i, const char *name)
{
	char path[64];
	int fd;

	if (nkept >= kept_max)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", kept[k].pid,
	         kept[k].tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
		for (k = 0; k < DOM_SLOTS; k++)
			drop_kept(k);
		keep_files = 0;
		return 1;
	}
	if (fd < 0)
		return -1;
	kept[k].fd1[i] = fd + 1;
	nkept++;
	return 0;
}

/* A kept file read into buf: 1, or 0 (its thread gone: its tid may be
 * another thread's now). */
static int read_kept(size_t k, int i, char *buf, size_t len)
{
	ssize_t n = pread(kept[k].fd1[i] - 1, buf, len - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	return 1;
}

/* look_thread() of slot s's thread. */
static struct seen look_slot(const struct tfd_dom *d,
                             const struct dom_slot *s)
{
	size_t k = (size_t)(s - d->slot);
	int32_t pid = s->pid, tid = s->tid;
	struct seen t, none = { 0, 0, 0, 0 };
	char buf[2048];
	int i;

	if (!keep_files)
		return look_thread(pid, tid);
	if (kept[k].pid != pid || kept[k].tid != tid) {
		drop_kept(k);
		kept[k].pid = pid;
		kept[k].tid = tid;
	}
	for (i = 0; i < 2; i++) {
		int r = kept[k].fd1[i] ? 0 : keep(k, i, i ? runs_file() : "stat");

		if (r > 0)
			return look_thread(pid, tid);
		if (r < 0 || !read_kept(k, i, buf, sizeof(buf))) {
			drop_kept(k);
			return none;
		}
		if (i == 0 && !(t = parse_stat(buf)).state)
			return none;
	}
	t.runs = parse_runs(buf);
	return t;
}

/* 1 if the process is gone, or a zombie its parent may reap: its first
 * thread a zombie and no other left.  A first thread that has ended
 * shows Z while the others are still on their way out (exit_group), and
 * until the last is gone its parent's waitpid finds nothing: the process
 * is not dead yet, its slots hold time, so that the parent's look for it
 * comes after its end and time does not move past it. */
static int proc_dead(int pid)
{
	struct seen t;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	t = look_thread(pid, pid);
	return !t.state ||
	       ((t.state == 'Z' || t.state == 'X') && t.threads <= 1);
}

/* *known caches proc_dead() of one process for a pass over many threads
 * of it (50 blocked threads read their process's file 50 times a look):
 * {pid, dead}, pid 0 for none. */
static int slot_dead(struct dom_slot *s, int known[2])
{
	int pid = __atomic_load_n(&s->pid, __ATOMIC_RELAXED);
	int tid = __atomic_load_n(&s->tid, __ATOMIC_RELAXED);

	if (pid <= 0 || tid <= 0)
		return 0;
	if (syscall(SYS_tgkill, pid, tid, 0) < 0 && errno == ESRCH)
		return 1;
	if (known[0] == pid)
		return known[1];
	known[0] = pid;
	known[1] = proc_dead(pid);
	return known[1];
}

/* A thread that reaps a child shows S, in wait4, while it frees it (the
 * kernel sets the state before it looks at the children): after a thread
 * or a process is found gone, /proc is not believed for a moment. */
#define GRACE_NS 2000000 /* 2 ms */
static int64_t grace_until;

/* A slot whose thread is gone: free it (the thread cannot). */
static void reclaim(struct tfd_dom *d, struct dom_slot *s)
{
	int32_t tid = __atomic_load_n(&s->tid, __ATOMIC_RELAXED);

	drop_kept((size_t)(s - d->slot));
	/* An end may end waits (a parent's wait for it): looks made
	 * before it are stale. */
	if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == DS_RUN)
		__atomic_add_fetch(&d->actrun, ACT_ONE - 1, __ATOMIC_SEQ_CST);
	else
		__atomic_add_fetch(&d->actrun, ACT_ONE, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->state, DS_FREE, __ATOMIC_RELAXED);
	/* No pid of a process that has ended is left for the next taker's
	 * slot to be read with (slot_take names it after taking it). */
	__atomic_store_n(&s->pid, 0, __ATOMIC_RELAXED);
	__atomic_compare_exchange_n(&s->tid, &tid, 0, 0, __ATOMIC_RELEASE,
	                            __ATOMIC_RELAXED);
}

/* A thread whose process ended (exit_group) while it was being started
 * (its slot's tid -1) never starts: nothing else frees its slot.  A
 * thread's slot only (its pid is its maker's; a child's slot being named
 * has the child's), once the process is reaped (/proc unreadable is not
 * enough: the table may be full), claimed first as a thread starting
 * would (-3). */
static void starting_gone(struct tfd_dom *d, struct dom_slot *s)
{
	int32_t pid = __atomic_load_n(&s->pid, __ATOMIC_ACQUIRE);
	int32_t claim = -1;

	if (pid <= 0 || pid != __atomic_load_n(&s->parent, __ATOMIC_RELAXED) ||
	    kill(pid, 0) == 0 || errno != ESRCH ||
	    !__atomic_compare_exchange_n(&s->tid, &claim, -3, 0,
	                                 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	reclaim(d, s);
	tfd_dom_changed(d);
	grace_until = tfd_dom_real_mono() + GRACE_NS;
}

/* The processes found stopped (SIGSTOP), by the index of their record:
 * their threads hold no time until they are continued (time flows for
 * the others, as it does on Linux); the sweep below notes and unnotes
 * them. */
static int32_t stopped[DOM_PROCS];
static int nstopped;

static int is_stopped(const struct tfd_dom *d, int32_t pid)
{
	uint32_t i, hi;

	if (!nstopped || pid <= 0)
		return 0;
	hi = __atomic_load_n(&d->phiwater, __ATOMIC_ACQUIRE);
	for (i = 0; i < hi; i++)
		if (stopped[i] == pid)
			return 1;
	return 0;
}

/* 1 if every thread of pid is stopped (SIGSTOP): a stop is complete,
 * and told to the parent, only once the last thread has stopped, which
 * may be a thread of the library's (an agent). */
static int all_stopped(int32_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *dir;
	int all = 1;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (all && (de = readdir(dir))) {
		int tid = atoi(de->d_name);
		char st;

		if (tid <= 0)
			continue;
		st = look_stat(pid, tid).state;
		all = st == 'T' || st == 'Z' || st == 'X';
	}
	closedir(dir);
	return all;
}

/* A process stopped or continued: looks made before are stale. */
static void stop_changed(struct tfd_dom *d)
{
	__atomic_add_fetch(&d->actrun, ACT_ONE, __ATOMIC_SEQ_CST);
	tfd_dom_changed(d);
}

/* The stopped processes that are no longer: their waits count again
 * (nothing else tells: a thread continued goes on blocking where it was,
 * and the SIGCONT may come from outside the tree).  1 if one was. */
static int continued(struct tfd_dom *d)
{
	uint32_t i, hi = __atomic_load_n(&d->phiwater, __ATOMIC_ACQUIRE);
	int any = 0;

	for (i = 0; i < hi && nstopped; i++) {
		char st;

		if (!stopped[i])
			continue;
		st = __atomic_load_n(&d->proc[i].pid, __ATOMIC_ACQUIRE) ==
		             stopped[i]
		             ? look_stat(stopped[i], stopped[i]).state
		             : 0;
		/* (a first thread ended alone: the others tell) */
		if (st != 'T' &&
		    !((st == 'Z' || st == 'X') && all_stopped(stopped[i]))) {
			stopped[i] = 0;
			nstopped--;
			stop_changed(d);
			any = 1;
		}
	}
	return any;
}

/* The slot's process, or for a child not forked yet its parent's. */
static int32_t slot_proc(const struct dom_slot *s)
{
	int32_t pid = __atomic_load_n(&s->pid, __ATOMIC_RELAXED);

	return pid > 0 ? pid : __atomic_load_n(&s->parent, __ATOMIC_RELAXED);
}

/* The threads of pid other than its first (whose first thread has
 * ended): 1 if one is on its way out (killed, or running: it cannot run
 * in a wait of ours but to leave it), else 0, with *stopped set if all
 * are stopped. */
static int others_ending(struct tfd_dom *d, int32_t pid, int *stopped_all)
{
	uint32_t i, hi = __atomic_load_n(&d->hiwater, __ATOMIC_ACQUIRE);
	int seen = 0, stop = 0;

	for (i = 0; i < hi; i++) {
		struct dom_slot *s = &d->slot[i];
		int32_t tid = __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE);
		struct seen t;

		if (tid <= 0 || tid == pid || s->pid != pid)
			continue;
		t = look_stat(pid, tid);
		if (t.killed || (t.state && t.state != 'S' && t.state != 'T'))
			return 1;
		seen++;
		stop += t.state == 'T';
	}
	*stopped_all = seen && stop == seen;
	return 0;
}

/* A process that has ended (gone, or a zombie its parent may reap): its
 * slots are freed, those of its threads in our waits too, which nothing
 * else would free (a wait that never looks again held time for good), and
 * its record. */
static void proc_gone(struct tfd_dom *d, struct dom_proc *p, int32_t pid)
{
	uint32_t i, hi = __atomic_load_n(&d->hiwater, __ATOMIC_ACQUIRE);

	for (i = 0; i < hi; i++) {
		struct dom_slot *s = &d->slot[i];
		int32_t tid = __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE);

		/* A thread it was starting (tid -1) never starts; a child
		 * it was forking names its slot itself; one that the C
		 * library was starting for it (system, popen) is claimed by
		 * the child only while its parent lives. */
		if ((tid != 0 && s->pid == pid) ||
		    (tid == -1 && s->pid == DOM_UNNAMED && s->parent == pid))
			reclaim(d, s);
	}
	__atomic_compare_exchange_n(&p->pid, &pid, 0, 0, __ATOMIC_RELEASE,
	                            __ATOMIC_RELAXED);
	tfd_dom_changed(d);
}

enum sweep { SW_SETTLED, SW_CHANGED, SW_HOLD };

/* Every process of the tree, looked at before time moves (and when waits
 * do not answer or something stays busy): time holds while one is on its
 * way out (a thread of it called exit() or _exit(), or a fatal signal
 * came: its threads in our waits are being killed, and its parent's wait
 * for it ends only when the last is gone), and one that has ended has its
 * slots freed, those of its threads in our waits too (nothing else frees
 * them).  A process killed, or ended from a thread other than its first,
 * shows its first thread with SIGKILL pending, then running out, then a
 * zombie until the last thread is gone: all of that is "on its way
 * out".  SW_HOLD: look again in a moment; SW_CHANGED: a process ended or
 * was continued. */
static enum sweep procs_sweep(struct tfd_dom *d)
{
	uint32_t i, hi = __atomic_load_n(&d->phiwater, __ATOMIC_ACQUIRE);
	enum sweep r = SW_SETTLED;

	for (i = 0; i < hi; i++) {
		struct dom_proc *p = &d->proc[i];
		int32_t pid = __atomic_load_n(&p->pid, __ATOMIC_ACQUIRE);
		int stop = 0, hold = 0, dead = 0;
		struct seen t;

		if (pid > 0) {
			t = look_stat(pid, pid);
			if (!t.state) { /* unreadable: gone, or on its way */
				if (kill(pid, 0) < 0 && errno == ESRCH)
					dead = 1;
				else
					hold = 1;
			} else if (t.state == 'Z' || t.state == 'X') {
				/* Its first thread has ended: the process too
				 * once it is alone; else the others are being
				 * killed, unless it ended alone (pthread_exit). */
				int all_t = 0;

				if (t.threads <= 1)
					dead = 1;
				else if (!__atomic_load_n(&p->alone,
				                          __ATOMIC_ACQUIRE) ||
				         others_ending(d, pid, &all_t))
					hold = 1;
				else if (all_t && all_stopped(pid))
					stop = 1;
			} else if (t.killed) {
				hold = 1;
			} else if (t.state == 'T') {
				/* stopped, once all its threads are: its
				 * parent is told only then */
				if (all_stopped(pid))
					stop = 1;
				else
					hold = 1;
			} else if (t.state != 'S') {
				hold = 1; /* running (its end, a look), or held
				           * by a debugger (t) */
			}
		}
		if (dead) {
			proc_gone(d, p, pid);
			grace_until = tfd_dom_real_mono() + GRACE_NS;
			if (r == SW_SETTLED)
				r = SW_CHANGED;
		}
		if (hold)
			r = SW_HOLD;
		/* Stopped or continued: its waits hold no time or do again,
		 * and waits for it (its parent's waitpid with WUNTRACED or
		 * WCONTINUED) may end. */
		if (stop ? stopped[i] != pid : stopped[i] != 0) {
			nstopped += stop ? !stopped[i] : -1;
			stopped[i] = stop ? pid : 0;
			stop_changed(d);
			if (r == SW_SETTLED)
				r = SW_CHANGED;
		}
	}
	return r;
}

/* A poke is sent once per round of looks and per jump. */
static uint64_t poke_key(const struct tfd_dom *d)
{
	return __atomic_load_n(&d->round, __ATOMIC_RELAXED) +
	       (__atomic_load_n(&d->jumps, __ATOMIC_RELAXED) << 32);
}

static void wake_slot(struct tfd_dom *d, struct dom_slot *s)
{
	uint64_t round = poke_key(d);

	if (__atomic_load_n(&s->poked, __ATOMIC_RELAXED) != round) {
		__atomic_store_n(&s->poked, round, __ATOMIC_RELAXED);
		syscall(SYS_tgkill, s->pid, s->tid, DOM_POKE_SIG);
	}
}

/* Poke again a slot poked in an earlier round (its signal may have come
 * while it was not waiting for it). */
static void poke_slot(struct tfd_dom *d, struct dom_slot *s)
{
	__atomic_store_n(&s->poked, 0, __ATOMIC_RELAXED);
	wake_slot(d, s);
}

enum verdict {
	V_BUSY,    /* something runs: wait for a change */
	V_SOON,    /* waiting for looks, or for what is due: a change, or a
	            * moment */
	V_OUTSIDE, /* a thread outside our waits runs: look again soon */
	V_IDLE,    /* all blocked, no deadline */
	V_MOVE,    /* all blocked: move to *to */
};

struct eval {
	int64_t to;    /* where time jumps (slack_to()) */
	int64_t first; /* the earliest deadline */
	int ndl;
	int64_t dl[DOM_SLOTS]; /* the waits' deadlines ahead (slack_to()) */
	int exiting; /* a thread is on its way out: nothing tells its end */
	int timed;   /* a wait or a timer of the tree has a deadline */
	int busy;    /* a thread outside our waits runs busy (busy_thread) */
	int outside; /* a wait is on the outside (waits.c) */
	int nout;
	int out[DOM_SLOTS]; /* slots in RUN, blocked outside our waits, and
	                     * in waits in slices that have looked */
	int64_t sw[DOM_SLOTS]; /* their runs counts (seen), -1: gone */
};

/* act when the current round of looks began: the threads then running
 * were all blocked outside our waits, and none has run since. */
static uint64_t round_act;

/* A look is valid if nothing ran since it began (act): with no other
 * thread running then (quiet), or in a round of looks begun when the only
 * threads running were blocked outside our waits, none of which has run
 * since (the round's act, and outside_still() before a move). */
static int look_valid(const struct tfd_dom *d, const struct dom_slot *s,
                      uint64_t act)
{
	uint64_t look;

	if (s->kind == DK_SLEEP)
		return 1;
	if (!__atomic_load_n(&s->looked, __ATOMIC_ACQUIRE))
		return 0;
	look = __atomic_load_n(&s->look, __ATOMIC_RELAXED);
	if (look != act)
		return 0;
	return __atomic_load_n(&s->quiet, __ATOMIC_RELAXED) ||
	       (__atomic_load_n(&s->look_round, __ATOMIC_RELAXED) ==
	                __atomic_load_n(&d->round, __ATOMIC_RELAXED) &&
	        look == round_act);
}

/*
 * Timer slack.  Linux lets a sleep, a poll's or a futex's timeout end up
 * to the thread's timer slack (50 us by default) after its deadline, so
 * that timers close together fire at one wake-up; a timer's expiry
 * (timerfd, POSIX timers, itimers) has none.  A jump does the same: it
 * goes to the latest deadline of a wait that is no later than the
 * earliest one plus the domain's slack, and never past a timer's
 * expiry; the waits due by then are woken together (each at most the
 * slack late, never early), and run in the order the scheduler gives
 * them, as on Linux.  A wait alone, or the latest of those woken
 * together, ends at its deadline exactly, and which waits go together
 * depends only on their deadlines: the same on every run.  A slack of 0
 * (tfd exec --virtual-slack 0) moves to each deadline in turn.  (Fifty
 * threads of Python's test_queue in waits of 10 us took a move each.)
 * While time flows for a wait on the outside it stops at the earliest
 * deadline (e->first), as there is nothing to gain.
 */
static int64_t slack_to(const struct tfd_dom *d, const struct eval *e,
                        int64_t wait, int64_t timer)
{
	int64_t slack = __atomic_load_n(&d->slack_ns, __ATOMIC_RELAXED);
	int64_t limit = wait == DOM_NEVER ? DOM_NEVER : wait + slack, to;
	int i;

	if (timer < limit)
		limit = timer;
	to = wait < timer ? wait : timer;
	for (i = 0; i < e->ndl; i++)
		if (e->dl[i] <= limit && e->dl[i] > to)
			to = e->dl[i];
	return to;
}

static enum verdict evaluate(struct tfd_dom *d, struct eval *e, int verified,
                             int repoke)
{
	int64_t timer = DOM_NEVER;
	uint64_t ar = __atomic_load_n(&d->actrun, __ATOMIC_SEQ_CST);
	uint64_t act = ar >> ACT_SHIFT;
	int64_t now = tfd_dom_now(d, DC_MONO), best = DOM_NEVER;
	uint32_t i, hi = __atomic_load_n(&d->hiwater, __ATOMIC_ACQUIRE);
	enum verdict v = V_MOVE;
	int invalid = 0;

	e->nout = 0;
	e->ndl = 0;
	e->exiting = 0;
	e->timed = 0;
	e->outside = 0;
	for (i = 0; i < hi; i++) {
		struct dom_slot *s = &d->slot[i];
		int32_t tid = __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE);
		uint32_t in;
		int64_t dl;

		if (tid == 0 || is_stopped(d, slot_proc(s)))
			continue; /* free, or stopped: it holds no time */
		if (tid < 0) { /* a thread or child on its way */
			if (tid == -1)
				starting_gone(d, s);
			v = V_BUSY;
			continue;
		}
		in = __atomic_load_n(&s->inlib, __ATOMIC_ACQUIRE);
		if (in & (DOM_LEAVING | DOM_ALONE)) {
			/* Exiting: it runs until it is gone, or a zombie its
			 * parent may reap (the process's end), or a zombie
			 * at all (a first thread ending alone). */
			struct seen t = look_thread(s->pid, s->tid);

			if ((!t.state &&
			     syscall(SYS_tgkill, s->pid, s->tid, 0) < 0 &&
			     errno == ESRCH) ||
			    ((t.state == 'Z' || t.state == 'X') &&
			     (t.threads <= 1 || !(in & DOM_LEAVING)))) {
				reclaim(d, s);
				tfd_dom_changed(d);
				grace_until = tfd_dom_real_mono() + GRACE_NS;
			} else {
				e->exiting = 1;
			}
			v = V_BUSY;
			continue;
		}
		if (in) {
			/* In the library, maybe waiting for a lock of ours: it
			 * runs (and a wait in there is about to block again). */
			v = V_BUSY;
			continue;
		}
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != DS_WAIT) {
			e->out[e->nout++] = (int)i;
			continue;
		}
		dl = __atomic_load_n(&s->deadline, __ATOMIC_RELAXED);
		e->timed |= dl != DOM_NEVER;
		e->outside |= __atomic_load_n(&s->outside, __ATOMIC_RELAXED) != 0;
		if (repoke && (dl <= now || !look_valid(d, s, act)) &&
		    syscall(SYS_tgkill, s->pid, tid, 0) < 0 && errno == ESRCH) {
			/* It does not answer: it ended in its wait (a thread
			 * cancelled there; a process's end is the sweep's). */
			reclaim(d, s);
			tfd_dom_changed(d);
			continue;
		}
		if (dl <= now && s->kind == DK_SLICE &&
		    __atomic_load_n(&s->slice_ended, __ATOMIC_ACQUIRE)) {
			/* Poked at its deadline, its slice ended: it is on its
			 * way out of the C library's wait (running: it tells
			 * us as it leaves), or blocked there for the program's
			 * mutex, which a thread that waits holds: time goes on
			 * without it, as on Linux. */
			if (look_slot(d, s).state != 'R') {
				e->out[e->nout++] = (int)i;
				continue;
			}
			if (v == V_MOVE)
				v = V_SOON;
			continue;
		}
		if (dl <= now) { /* due: it is about to run */
			if (repoke) /* the last poke may have come too early */
				poke_slot(d, s);
			else
				wake_slot(d, s);
			if (v == V_MOVE)
				v = V_SOON;
			continue;
		}
		if (s->kind == DK_SLICE &&
		    __atomic_load_n(&s->looked, __ATOMIC_ACQUIRE)) {
			/* In the C library's wait, which only a thread that
			 * ran could end (its deadline is fixed), or that
			 * another's release of the program's mutex made
			 * runnable without anything of ours running: /proc
			 * tells whether it still blocks, as for the threads
			 * blocked outside our waits (waits.c). */
			e->out[e->nout++] = (int)i;
		} else if (!look_valid(d, s, act)) {
			invalid = 1;
			if (verified && s->kind == DK_KERNEL &&
			    __atomic_load_n(&s->looked, __ATOMIC_ACQUIRE)) {
				if (repoke)
					poke_slot(d, s);
				else
					wake_slot(d, s);
			}
		}
		if (dl < best)
			best = dl;
		if (dl != DOM_NEVER)
			e->dl[e->ndl++] = dl;
	}
	hi = __atomic_load_n(&d->phiwater, __ATOMIC_ACQUIRE);
	for (i = 0; i < hi; i++) {
		struct dom_proc *p = &d->proc[i];
		int32_t pid = __atomic_load_n(&p->pid, __ATOMIC_ACQUIRE);
		int64_t due = __atomic_load_n(&p->next_due, __ATOMIC_RELAXED);
		uint32_t k;
		int found;

		if (pid <= 0 || is_stopped(d, pid))
			continue;
		e->timed |= due != DOM_NEVER;
		if (due > now) {
			if (due < timer)
				timer = due;
			continue;
		}
		/* Its timers are due: a thread of it in one of our waits
		 * delivers them (in its own descriptor table), else its
		 * agent; with neither, they are delivered when looked at. */
		found = 0;
		for (k = 0; k < d->hiwater; k++) {
			struct dom_slot *s = &d->slot[k];

			if (s->pid == pid && s->tid > 0 &&
			    __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) ==
			            DS_WAIT && s->kind != DK_SLICE) {
				wake_slot(d, s);
				found = 1;
			}
		}
		if (!found && proc_dead(pid)) {
			/* It ended with a deadline published (_exit(), a
			 * kill: no destructor of ours ran): its agent, gone
			 * with it, would be woken for ever. */
			__atomic_compare_exchange_n(&p->pid, &pid, 0, 0,
			                            __ATOMIC_RELEASE,
			                            __ATOMIC_RELAXED);
			continue;
		}
		if (!found && __atomic_load_n(&p->agent, __ATOMIC_RELAXED)) {
			__atomic_add_fetch(&p->wake, 1, __ATOMIC_SEQ_CST);
			tfd_futex_wake(&p->wake, INT_MAX);
			found = 1;
		}
		if (found && v == V_MOVE)
			v = V_SOON;
	}
	e->first = best < timer ? best : timer;
	e->to = slack_to(d, e, best, timer);
	if (v != V_MOVE)
		return v;
	if (invalid)
		return V_SOON;
	return e->to == DOM_NEVER ? V_IDLE : V_MOVE;
}


/*
 * Busy threads.  Time stands while a thread runs, which is what makes
 * virtual time exact; but an interpreter that preempts its running thread
 * from another one with a timed wait (CPython's GIL: a 5 ms
 * pthread_cond_timedwait, then a request to drop it), or a test that
 * interrupts a busy loop with alarm(), waits for time that never comes
 * while the busy thread runs: the busy thread is never preempted.  The
 * rule: a thread outside our waits that has used more than a quantum of
 * CPU time without blocking (no voluntary context switch) while something
 * in the tree waits on a deadline, lets time flow at the real rate, until
 * it blocks or waits (then time stands again where it has come, and jumps
 * as before).  CPU time, not the time it was seen runnable: on a loaded
 * machine a thread waiting for a CPU has not run.
 */
#ifdef TFD_SANITIZED
/* Built with a sanitizer, the preload brings its run-time into every
 * program of the tree, whose start-up alone then takes 15-30 ms of CPU
 * with no wait: a quantum shorter than that lets time flow while a child
 * starts and its parent waits on a deadline. */
#define QUANTUM_NS 100000000 /* 100 ms */
#else
#define QUANTUM_NS 20000000 /* 20 ms */
#endif
static struct {
	int32_t tid;
	long vol;    /* its voluntary switches when noted */
	int64_t cpu; /* its CPU time then */
} mark[DOM_SLOTS];

/* The CPU time a thread has used, in ns (schedstat), -1 if unknown. */
static int64_t thread_cpu(int pid, int tid)
{
	char buf[128];

	if (!read_task_file(pid, tid, "schedstat", buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

/* Thread k (of slot k), seen running: 1 if it has used more than a
 * quantum of CPU since it last blocked. */
static int busy_thread(int k, const struct dom_slot *s)
{
	int64_t cpu = thread_cpu(s->pid, s->tid);
	long vol = thread_blocked_count(s->pid, s->tid);

	if (cpu < 0 || vol < 0)
		return 0;
	if (mark[k].tid != s->tid || mark[k].vol != vol) {
		mark[k].tid = s->tid;
		mark[k].vol = vol;
		mark[k].cpu = cpu;
		return 0;
	}
	return cpu - mark[k].cpu > QUANTUM_NS;
}

/* The threads outside our waits: 1 if all are blocked (their runs counts
 * noted in e->sw), 0 if one runs (e->busy: one runs busy); gone
 * ones are freed. */
static int outside_blocked(struct tfd_dom *d, struct eval *e)
{
	int i, all = tfd_dom_real_mono() >= grace_until, known[2] = { 0, 0 };

	e->busy = 0;
	for (i = 0; i < e->nout; i++) {
		struct dom_slot *s = &d->slot[e->out[i]];
		struct seen t = look_slot(d, s);

		if (t.state == 'Z' && t.threads > 1) {
			/* A process's first thread has ended, others are on
			 * their way: its parent is told when the last goes. */
			all = 0;
			continue;
		}
		if (!t.state &&
		    !(syscall(SYS_tgkill, s->pid, s->tid, 0) < 0 &&
		      errno == ESRCH)) {
			/* Unreadable, not gone: on its way out (a thread
			 * that the scheduler has not let finish yet). */
			all = 0;
			continue;
		}
		if (!t.state || t.state == 'Z' || t.state == 'X' ||
		    (t.state != 'R' && slot_dead(s, known))) {
			/* Its end wakes its parent (waitpid), which reaps it
			 * showing S: look again in a moment. */
			reclaim(d, s);
			tfd_dom_changed(d);
			e->sw[i] = -1;
			all = 0;
			grace_until = tfd_dom_real_mono() + GRACE_NS;
			continue;
		}
		e->sw[i] = t.runs;
		/* Running, in a short wait of the kernel's (D), or stopped by
		 * a debugger or a sanitizer's leak check at exit (t): time
		 * holds for it.  Stopped by SIGSTOP (T), it waits for another
		 * process's SIGCONT: time flows for that one, as on Linux. */
		if (t.state != 'S' && t.state != 'T')
			all = 0;
		if (t.state == 'R' && e->timed &&
		    busy_thread(e->out[i], s))
			e->busy = 1;
	}
	return all;
}

/* 1 if none of them ran since outside_blocked(). */
static int outside_still(struct tfd_dom *d, struct eval *e)
{
	int i;

	for (i = 0; i < e->nout; i++) {
		struct dom_slot *s = &d->slot[e->out[i]];
		struct seen t;

		if (e->sw[i] < 0)
			continue;
		t = look_slot(d, s);
		if ((t.state != 'S' && t.state != 'T') ||
		    t.runs != e->sw[i])
			return 0;
	}
	return 1;
}

/* The deadline chosen belongs to a live thread (a thread cancelled in a
 * sleep leaves its slot behind; the processes are the sweep's): 0 if
 * not, after freeing it. */
static int deadline_alive(struct tfd_dom *d, int64_t to)
{
	uint32_t i, hi = __atomic_load_n(&d->hiwater, __ATOMIC_ACQUIRE);
	int alive = 1;

	for (i = 0; i < hi; i++) {
		struct dom_slot *s = &d->slot[i];

		if (s->tid > 0 && s->state == DS_WAIT && s->deadline <= to &&
		    syscall(SYS_tgkill, s->pid, s->tid, 0) < 0 &&
		    errno == ESRCH) {
			reclaim(d, s);
			alive = 0;
		}
	}
	return alive;
}

/* A process whose last look passed over a readable timer that may be
 * read where it does not see it (a program it started, a child outside
 * its family: step.c) looks again, through its agent, before time moves
 * or the mover sits idle: that reader may have emptied the file and wait
 * for the next expiry, which is then a deadline.  Asked once for each
 * act (after anything ran).  1 while one has not answered. */
static int relooks_pending(struct tfd_dom *d)
{
	uint64_t act = __atomic_load_n(&d->actrun, __ATOMIC_SEQ_CST) >> ACT_SHIFT;
	uint32_t i, hi = __atomic_load_n(&d->phiwater, __ATOMIC_ACQUIRE);
	int pending = 0;

	for (i = 0; i < hi; i++) {
		struct dom_proc *p = &d->proc[i];
		int32_t pid = __atomic_load_n(&p->pid, __ATOMIC_ACQUIRE);

		if (pid <= 0 || !__atomic_load_n(&p->skipped, __ATOMIC_SEQ_CST) ||
		    !__atomic_load_n(&p->agent, __ATOMIC_ACQUIRE))
			continue;
		if (p->relook_act != act) {
			p->relook_act = act;
			__atomic_add_fetch(&p->relook, 1, __ATOMIC_SEQ_CST);
			__atomic_add_fetch(&p->wake, 1, __ATOMIC_SEQ_CST);
			tfd_futex_wake(&p->wake, INT_MAX);
		}
		if (__atomic_load_n(&p->relooked, __ATOMIC_SEQ_CST) ==
		    __atomic_load_n(&p->relook, __ATOMIC_SEQ_CST))
			continue;
		if (proc_dead(pid)) /* its agent with it */
			__atomic_compare_exchange_n(&p->pid, &pid, 0, 0,
			                            __ATOMIC_RELEASE,
			                            __ATOMIC_RELAXED);
		else
			pending = 1;
	}
	return pending;
}

/* Something runs in our code: it tells us when it is done, but for a
 * process stopped or killed there; looked at after this long. */
#define BUSY_LOOK_NS 100000000 /* 100 ms */

static void mover_sleep(struct tfd_dom *d, uint32_t gen, int64_t ns)
{
	__atomic_store_n(&d->sleeping, 1, __ATOMIC_SEQ_CST);
	tfd_futex_nap(&d->gen, gen, ns);
	__atomic_store_n(&d->sleeping, 0, __ATOMIC_SEQ_CST);
}

/* Looks, or what is due, to come: their change, or a moment.  1 if
 * nothing came: a poke may have come before its wait began (poke again),
 * or the wait does not answer (the processes looked at: is it alive?). */
static int wait_soon(struct tfd_dom *d, uint32_t gen)
{
	mover_sleep(d, gen, 2000000);
	if (__atomic_load_n(&d->gen, __ATOMIC_SEQ_CST) != gen)
		return 0;
	procs_sweep(d);
	return 1;
}

/* The threads outside our waits are the ones seen at the verification. */
static int same_set(const struct eval *e, const struct eval *snap)
{
	return e->nout == snap->nout &&
	       !memcmp(e->out, snap->out, sizeof(e->out[0]) * (size_t)e->nout);
}

/* The same, and they have not run since. */
static int same_outside(const struct eval *e, const struct eval *snap)
{
	return same_set(e, snap) &&
	       !memcmp(e->sw, snap->sw, sizeof(e->sw[0]) * (size_t)e->nout);
}

int tfd_dom_move(struct tfd_dom *d, int (*stop)(void *),
                 void (*moved)(void *, int64_t, int64_t), void *ctx)
{
	struct eval *e = malloc(2 * sizeof(*e)), *snap = e + 1;
	int64_t backoff = 20000; /* looking at threads outside our waits or on
	                          * their way out: 20 us .. 5 ms */
	int64_t hold = 20000;    /* at a process on its way out, the same */
	int verified = 0, repoke = 0, r;

	if (!e)
		return -1;
	for (;;) {
		/* gen before stop(): a change after either wakes the wait. */
		uint32_t gen = __atomic_load_n(&d->gen, __ATOMIC_SEQ_CST);
		uint64_t act;
		enum verdict v;

		if ((r = stop(ctx)))
			break;
		if (nstopped && continued(d))
			verified = 0;
		v = evaluate(d, e, verified, repoke);

		repoke = 0;
		if (v == V_BUSY) {
			/* What runs tells us when it stops, but for a thread
			 * on its way out: /proc is looked at again (a child
			 * that exit()s while its parent sleeps on virtual
			 * time: nothing else would ever change). */
			verified = 0;
			mover_sleep(d, gen,
			            e->exiting ? backoff : BUSY_LOOK_NS);
			if (e->exiting && backoff < 5000000)
				backoff *= 2;
			if (__atomic_load_n(&d->gen, __ATOMIC_SEQ_CST) == gen)
				/* Nothing told us anything: a process may have
				 * died, or stopped, in our code. */
				procs_sweep(d);
			continue;
		}
		/* A round begun, nothing run since, the same threads outside
		 * our waits: they were blocked at its beginning, and are
		 * looked at once more just before time moves. */
		if (verified && v != V_IDLE && same_set(e, snap) &&
		    __atomic_load_n(&d->actrun, __ATOMIC_SEQ_CST) >> ACT_SHIFT ==
		            round_act)
			memcpy(e->sw, snap->sw, sizeof(e->sw[0]) * (size_t)e->nout);
		else if (e->nout && !outside_blocked(d, e)) {
			/* Time flows while one runs busy (busy_thread). */
			flow(d, e->busy);
			verified = 0;
			mover_sleep(d, gen, backoff);
			if (backoff < 5000000)
				backoff *= 2;
			continue;
		}
		/* Every thread blocks or waits: time stands, but for a wait on
		 * the outside (below). */
		if (!e->outside)
			flow(d, 0);
		backoff = 20000;
		if (verified &&
		    (!same_outside(e, snap) ||
		     __atomic_load_n(&d->actrun, __ATOMIC_SEQ_CST) >> ACT_SHIFT !=
		             round_act))
			verified = 0;
		if (!verified) {
			/* The threads outside our waits are blocked: looks
			 * made from now on see all they did. */
			memcpy(snap, e, sizeof(*e));
			round_act = __atomic_load_n(&d->actrun, __ATOMIC_SEQ_CST) >>
			            ACT_SHIFT;
			__atomic_add_fetch(&d->round, 1, __ATOMIC_SEQ_CST);
			verified = 1;
			continue;
		}
		if (v == V_SOON) {
			repoke = wait_soon(d, gen);
			continue;
		}
		if (relooks_pending(d)) {
			mover_sleep(d, gen, 2000000);
			continue;
		}
		if (v == V_IDLE) {
			/* A wait on the outside: time flows meanwhile. */
			if (e->outside)
				flow_to(d, 1, DOM_NEVER);
			/* Nothing to move to until something changes; a thread
			 * outside our waits may end, a stopped process be
			 * continued: look now and then. */
			mover_sleep(d, gen,
			            e->nout || nstopped ? 100000000 : -1);
			continue;
		}
		act = __atomic_load_n(&d->actrun, __ATOMIC_SEQ_CST) >> ACT_SHIFT;
		if (e->nout && !outside_still(d, snap)) {
			verified = 0;
			continue;
		}
		if ((__atomic_load_n(&d->actrun, __ATOMIC_SEQ_CST) >> ACT_SHIFT) !=
		            act ||
		    __atomic_load_n(&d->gen, __ATOMIC_SEQ_CST) != gen)
			continue; /* something happened meanwhile */
		switch (procs_sweep(d)) {
		case SW_HOLD: /* a process on its way out: its end first */
			mover_sleep(d, gen, hold);
			if (hold < 5000000)
				hold *= 2;
			continue;
		case SW_CHANGED:
			continue;
		case SW_SETTLED:
			break;
		}
		hold = 20000;
		if (!deadline_alive(d, e->outside ? e->first : e->to))
			continue;
		if (e->outside) {
			/* A wait on the outside: time flows at the real rate up
			 * to the earliest deadline instead of jumping (the
			 * waits poked to wait for real), and stops there
			 * exactly; what is due then is woken as after a
			 * jump. */
			int64_t left;

			flow_to(d, 1, e->first);
			left = tfd_dom_real_left(d, e->first);
			mover_sleep(d, gen, left < 0 ? 1000000 : left);
			continue;
		}
		{
			int64_t from = tfd_dom_now(d, DC_MONO);

			set_clocks(d, e->to);
			__atomic_add_fetch(&d->jumps, 1, __ATOMIC_RELAXED);
			if (moved)
				moved(ctx, from, e->to);
		}
		/* The next evaluation wakes what is due. */
	}
	free(e);
	return r;
}

/* The mover is gone: programs the tree left behind go on with time
 * flowing for real from where it is.  Their waits blocked without a
 * limit (pure virtual time: only the mover ended them) are poked, and
 * the agents woken, to wait again for real.  Once: a second call (the
 * watch below, after `tfd exec` ended it) only pokes. */
void tfd_dom_end(struct tfd_dom *d)
{
	uint32_t s = __atomic_load_n(&d->seq, __ATOMIC_ACQUIRE);

	/* A mover killed in the middle of writing the clocks left seq odd:
	 * the readers would wait for it for ever (the watcher ends the
	 * domain then, and nothing writes the clocks but the one ending). */
	if (s & 1)
		__atomic_store_n(&d->seq, s + 1, __ATOMIC_RELEASE);
	if (!__atomic_load_n(&d->ended, __ATOMIC_SEQ_CST)) {
		set_clocks(d, tfd_dom_now(d, DC_MONO)); /* busy mode's flow */
		__atomic_store_n(&d->ended, 1, __ATOMIC_SEQ_CST);
	}
	tfd_dom_changed(d);
	wake_all(d);
}

/* A process of its own (a fork of the mover's, outside the tree, with
 * no descriptor but a pipe's read end) that ends the domain when the
 * mover is gone, however it went: a mover killed (SIGKILL, by timeout(1)
 * or a test harness) left the tree's waits blocked for ever.  It ignores
 * the signals a terminal or timeout(1) sends to the group: it ends with
 * the mover, at the pipe's end.  0, or -1 with errno. */
int tfd_dom_watch(struct tfd_dom *d)
{
	static const int ign[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
		                   SIGUSR2, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU };
	int p[2];
	pid_t w;
	char c;
	size_t i;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	w = fork();
	if (w < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (w > 0) {
		close(p[0]);
		return 0; /* p[1]: the mover's until it is gone */
	}
	for (i = 0; i < sizeof(ign) / sizeof(*ign); i++)
		signal(ign[i], SIG_IGN);
	if (dup2(p[0], 0) < 0)
		_exit(1);
	syscall(SYS_close_range, 1, ~0u, 0); /* a failure leaves them open */
	while (read(0, &c, 1) < 0 && errno == EINTR)
		;
	tfd_dom_end(d);
	_exit(0);
}
