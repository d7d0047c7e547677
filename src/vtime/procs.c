/* SPDX-License-Identifier: MIT */
/*
 * procs.c - the processes of the tree as the mover sees them (mover.h):
 * on their way out (time holds), ended (their slots freed: nothing else
 * frees them), stopped by SIGSTOP (their waits hold no time) and
 * continued.
 */
#define _GNU_SOURCE
#include "vtime/mover.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

/* 1 if the process is gone, or a zombie its parent may reap: its first
 * thread a zombie and no other left.  A first thread that has ended
 * shows Z while the others are still on their way out (exit_group), and
 * until the last is gone its parent's waitpid finds nothing: the process
 * is not dead yet, its slots hold time, so that the parent's look for it
 * comes after its end and time does not move past it. */
int tfd_dom_proc_dead(int pid)
{
	struct seen t;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	t = tfd_dom_look_stat(pid, pid);
	return !t.state ||
	       ((t.state == 'Z' || t.state == 'X') && t.threads <= 1);
}

/* The same of record i's process pid, by its first thread's stat line
 * kept open: one read, where the above makes four system calls (a look
 * at a process whose timer came due while no thread of it waited in
 * ours: once an expiration, in an event loop that reads as they come). */
int tfd_dom_rec_dead(struct mover *m, size_t i, int32_t pid)
{
	struct seen t = tfd_dom_look_leader(m, i, pid);

	if (!t.state) /* unreadable */
		return tfd_dom_proc_dead(pid);
	return (t.state == 'Z' || t.state == 'X') && t.threads <= 1;
}

/* known caches tfd_dom_proc_dead() of one process for a pass over many
 * threads of it (50 blocked threads read their process's file 50 times
 * a look): {pid, dead}, pid 0 for none. */
int tfd_dom_slot_dead(struct dom_slot *s, int known[2])
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
	known[1] = tfd_dom_proc_dead(pid);
	return known[1];
}

/* A thread that reaps a child shows S, in wait4, while it frees it (the
 * kernel sets the state before it looks at the children): after a thread
 * or a process is found gone, /proc is not believed for a moment. */
#define GRACE_NS 2000000 /* 2 ms */

void tfd_dom_grace(struct mover *m)
{
	m->grace_until = tfd_dom_real_mono() + GRACE_NS;
}

/* A slot whose thread is gone: free it (the thread cannot). */
void tfd_dom_reclaim(struct mover *m, struct dom_slot *s)
{
	struct tfd_dom *d = m->d;
	int32_t tid = __atomic_load_n(&s->tid, __ATOMIC_RELAXED);

	tfd_dom_drop_kept(m, (size_t)(s - d->slot));
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
void tfd_dom_starting_gone(struct mover *m, struct dom_slot *s)
{
	int32_t pid = __atomic_load_n(&s->pid, __ATOMIC_ACQUIRE);
	int32_t claim = -1;

	if (pid <= 0 || pid != __atomic_load_n(&s->parent, __ATOMIC_RELAXED) ||
	    kill(pid, 0) == 0 || errno != ESRCH ||
	    !__atomic_compare_exchange_n(&s->tid, &claim, -3, 0,
	                                 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	tfd_dom_reclaim(m, s);
	tfd_dom_changed(m->d);
	tfd_dom_grace(m);
}

/* The processes found stopped (SIGSTOP), by the index of their record
 * (m->stopped): their threads hold no time until they are continued
 * (time flows for the others, as it does on Linux); the sweep below
 * notes and unnotes them. */
int tfd_dom_is_stopped(const struct mover *m, int32_t pid)
{
	uint32_t i, hi;

	if (!m->nstopped || pid <= 0)
		return 0;
	hi = __atomic_load_n(&m->d->phiwater, __ATOMIC_ACQUIRE);
	for (i = 0; i < hi; i++)
		if (m->stopped[i] == pid)
			return 1;
	return 0;
}

/* Record i's process is stopped (pid) or not (0): its waits hold no time
 * or do again, and waits for it (its parent's waitpid with WUNTRACED or
 * WCONTINUED) may end: looks made before are stale.  1 if it changed. */
static int note_stopped(struct mover *m, uint32_t i, int32_t pid)
{
	if (m->stopped[i] == pid)
		return 0;
	m->nstopped += !m->stopped[i] ? 1 : !pid ? -1 : 0;
	m->stopped[i] = pid;
	__atomic_add_fetch(&m->d->actrun, ACT_ONE, __ATOMIC_SEQ_CST);
	dom_signalled(m->d, 0, 0); /* its parent's SIGCHLD (a stop) */
	tfd_dom_changed(m->d);
	return 1;
}

/* The stopped processes that are no longer: their waits count again
 * (nothing else tells: a thread continued goes on blocking where it was,
 * and the SIGCONT may come from outside the tree).  1 if one was. */
int tfd_dom_continued(struct mover *m)
{
	struct tfd_dom *d = m->d;
	uint32_t i, hi = __atomic_load_n(&d->phiwater, __ATOMIC_ACQUIRE);
	int any = 0;

	for (i = 0; i < hi && m->nstopped; i++) {
		int32_t pid = m->stopped[i];
		char st;

		if (!pid)
			continue;
		st = __atomic_load_n(&d->proc[i].pid, __ATOMIC_ACQUIRE) == pid
		             ? tfd_dom_look_stat(pid, pid).state
		             : 0;
		/* (a first thread ended alone: the others tell) */
		if (st != 'T' &&
		    !((st == 'Z' || st == 'X') && tfd_dom_all_stopped(pid)))
			any |= note_stopped(m, i, 0);
	}
	return any;
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
		t = tfd_dom_look_stat(pid, tid);
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
static void proc_gone(struct mover *m, struct dom_proc *p, int32_t pid)
{
	struct tfd_dom *d = m->d;
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
			tfd_dom_reclaim(m, s);
	}
	__atomic_compare_exchange_n(&p->pid, &pid, 0, 0, __ATOMIC_RELEASE,
	                            __ATOMIC_RELAXED);
	/* The kernel tells of the end with a signal (SIGCHLD, a child's
	 * death signal), whose handler may run in a thread parked: each
	 * is asked of /proc once more (busy.c). */
	dom_signalled(d, 0, 0);
	tfd_dom_changed(d);
}

enum proc_is { P_WAITS, P_HOLD, P_DEAD, P_STOPPED };

/*
 * A ring the preload did not see made (liburing makes its system calls
 * itself): the kernel's io_uring threads are threads of the process, and
 * its threads are looked at for them whenever their number has changed
 * since the last look, from the stat line read before each move.  Found,
 * the process is marked as one the preload saw make a ring
 * (tfd_dom_uring_hold).  1 if marked now.
 */
static int uring_found(struct mover *m, size_t i, int32_t pid,
                       long threads)
{
	struct dom_proc *p = &m->d->proc[i];
	long was = m->nthreads[i].pid == pid ? m->nthreads[i].threads : 1;

	m->nthreads[i].pid = pid;
	m->nthreads[i].threads = threads;
	if (threads == was || threads <= 1 ||
	    __atomic_load_n(&p->uring, __ATOMIC_ACQUIRE) ||
	    !tfd_dom_uring_threads(pid))
		return 0;
	__atomic_store_n(&p->uring, 1, __ATOMIC_RELEASE);
	return 1;
}

/* What record i's process pid is, by /proc. */
static enum proc_is proc_look(struct mover *m, size_t i, int32_t pid)
{
	struct tfd_dom *d = m->d;
	struct dom_proc *p = &d->proc[i];
	struct seen t = tfd_dom_look_leader(m, i, pid);
	int all_t = 0;

	if (!t.state) /* unreadable: gone, or on its way */
		return kill(pid, 0) < 0 && errno == ESRCH ? P_DEAD : P_HOLD;
	if (t.state == 'Z' || t.state == 'X') {
		/* Its first thread has ended: the process too once it is
		 * alone; else the others are being killed, unless it ended
		 * alone (pthread_exit). */
		if (t.threads <= 1)
			return P_DEAD;
		if (!__atomic_load_n(&p->alone, __ATOMIC_ACQUIRE) ||
		    others_ending(d, pid, &all_t))
			return P_HOLD;
		return all_t && tfd_dom_all_stopped(pid) ? P_STOPPED : P_WAITS;
	}
	if (t.killed)
		return P_HOLD;
	if (uring_found(m, i, pid, t.threads))
		return P_HOLD; /* its workers are looked at first */
	if (t.state == 'T') /* stopped once all its threads are: its parent
	                     * is told only then */
		return tfd_dom_all_stopped(pid) ? P_STOPPED : P_HOLD;
	/* Running (its end, a look), or held by a debugger (t). */
	return t.state == 'S' ? P_WAITS : P_HOLD;
}

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
 * was stopped or continued. */
enum sweep tfd_dom_procs_sweep(struct mover *m)
{
	struct tfd_dom *d = m->d;
	uint32_t i, hi = __atomic_load_n(&d->phiwater, __ATOMIC_ACQUIRE);
	enum sweep r = SW_SETTLED;

	for (i = 0; i < hi; i++) {
		struct dom_proc *p = &d->proc[i];
		int32_t pid = __atomic_load_n(&p->pid, __ATOMIC_ACQUIRE);
		enum proc_is is = pid > 0 ? proc_look(m, i, pid) : P_WAITS;

		if (is == P_DEAD) {
			proc_gone(m, p, pid);
			tfd_dom_grace(m);
			if (r == SW_SETTLED)
				r = SW_CHANGED;
		}
		if (is == P_HOLD)
			r = SW_HOLD;
		if (note_stopped(m, i, is == P_STOPPED ? pid : 0) &&
		    r == SW_SETTLED)
			r = SW_CHANGED;
	}
	return r;
}

/* The deadline chosen belongs to a live thread (a thread cancelled in a
 * sleep leaves its slot behind; the processes are the sweep's): 0 if
 * not, after freeing it. */
int tfd_dom_deadline_alive(struct mover *m, int64_t to)
{
	struct tfd_dom *d = m->d;
	uint32_t i, hi = __atomic_load_n(&d->hiwater, __ATOMIC_ACQUIRE);
	int alive = 1;

	for (i = 0; i < hi; i++) {
		struct dom_slot *s = &d->slot[i];

		if (s->tid > 0 && s->state == DS_WAIT && s->deadline <= to &&
		    syscall(SYS_tgkill, s->pid, s->tid, 0) < 0 &&
		    errno == ESRCH) {
			tfd_dom_reclaim(m, s);
			alive = 0;
		}
	}
	return alive;
}

/* Record p's process ended with it (a deadline published by _exit(), a
 * kill: no destructor of ours ran; its agent gone with it). */
void tfd_dom_proc_forget(struct dom_proc *p, int32_t pid)
{
	__atomic_compare_exchange_n(&p->pid, &pid, 0, 0, __ATOMIC_RELEASE,
	                            __ATOMIC_RELAXED);
}

/* A process whose last look passed over a readable timer that may be
 * read where it does not see it (a program it started, a child outside
 * its family: step.c) looks again, through its agent, before time moves
 * or the mover sits idle: that reader may have emptied the file and wait
 * for the next expiry, which is then a deadline.  Asked once for each
 * act (after anything ran).  1 while one has not answered. */
int tfd_dom_relooks_pending(struct mover *m)
{
	struct tfd_dom *d = m->d;
	uint64_t act = __atomic_load_n(&d->actrun, __ATOMIC_SEQ_CST) >>
	               ACT_SHIFT;
	uint32_t i, hi = __atomic_load_n(&d->phiwater, __ATOMIC_ACQUIRE);
	int pending = 0;

	for (i = 0; i < hi; i++) {
		struct dom_proc *p = &d->proc[i];
		int32_t pid = __atomic_load_n(&p->pid, __ATOMIC_ACQUIRE);

		if (pid <= 0 ||
		    !__atomic_load_n(&p->skipped, __ATOMIC_SEQ_CST) ||
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
		if (tfd_dom_rec_dead(m, i, pid))
			tfd_dom_proc_forget(p, pid);
		else
			pending = 1;
	}
	return pending;
}
