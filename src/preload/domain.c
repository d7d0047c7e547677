/* SPDX-License-Identifier: MIT */
/*
 * domain.c - this process's part in a virtual-time domain (domain.h):
 * joining it at load, a slot for each of its threads, the waits' three
 * ways of blocking, and keeping this process's timers (the engine's
 * virtual clocks) in step with the domain's clock.
 *
 * A wait registers its thread (WAIT, with its deadline and kind) before
 * it looks at what it waits for, and blocks only if the look found
 * nothing.  Whatever the mover sees, then, is true of the thread: WAIT
 * and looked means "nothing it waits for was ready at a moment the mover
 * can place".  The thread is RUN again as soon as it leaves the wait.
 */
#include "preload/preload.h"
#include "lockorder.h"
#include "preload/domain.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct tfd_dom *tfd_dom;
static struct dom_proc *me;        /* this process's record */
static __thread int my = -1;       /* this thread's slot */
static __thread volatile sig_atomic_t pokes; /* DOM_POKE_SIG received */
static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(sync_lock, LK_SYNC);

/* ---- slots ---- */

static struct dom_slot *slot_of(int i)
{
	return i >= 0 ? &tfd_dom->slot[i] : NULL;
}

/* This thread's slot; a thread that existed before the library loaded
 * was given one by its tid (slots_for_others()): found once. */
static struct dom_slot *self_slot(void)
{
	int32_t tid, pid;
	uint32_t i;

	if (my >= 0 || !tfd_dom)
		return slot_of(my);
	tid = gettid();
	pid = getpid();
	for (i = 0; i < tfd_dom->hiwater; i++)
		if (__atomic_load_n(&tfd_dom->slot[i].tid, __ATOMIC_ACQUIRE) ==
		            tid &&
		    tfd_dom->slot[i].pid == pid) {
			my = (int)i;
			break;
		}
	return slot_of(my);
}

static void raise_hiwater(uint32_t *hw, uint32_t i)
{
	uint32_t h = __atomic_load_n(hw, __ATOMIC_RELAXED);

	while (h <= i && !__atomic_compare_exchange_n(hw, &h, i + 1, 1,
	                                              __ATOMIC_RELEASE,
	                                              __ATOMIC_RELAXED))
		;
}

/* A free slot, taken for a thread that runs (tid -1 until it is known):
 * the mover holds time while it is on its way. */
static int slot_take_again(int32_t pid);

int tfd_dom_slot_take(int32_t pid)
{
	struct tfd_dom *d = tfd_dom;
	static __thread int again;
	int i;

	for (i = 0; i < DOM_SLOTS; i++) {
		int32_t free_tid = 0;
		struct dom_slot *s = &d->slot[i];

		if (__atomic_load_n(&s->tid, __ATOMIC_RELAXED) != 0 ||
		    !__atomic_compare_exchange_n(&s->tid, &free_tid, -1, 0,
		                                 __ATOMIC_ACQ_REL,
		                                 __ATOMIC_RELAXED))
			continue;
		s->pid = pid;
		s->parent = getpid();
		s->kind = 0;
		s->deadline = DOM_NEVER;
		s->looked = 0;
		s->poked = 0;
		s->inlib = 0;
		__atomic_store_n(&s->state, DS_RUN, __ATOMIC_RELEASE);
		__atomic_add_fetch(&d->actrun, ACT_ONE + 1, __ATOMIC_SEQ_CST);
		raise_hiwater(&d->hiwater, (uint32_t)i);
		return i;
	}
	if (!again) {
		again = 1;
		i = slot_take_again(pid);
		again = 0;
		return i;
	}
	return -1; /* full: the thread runs unseen (tfd-preload(7)) */
}

/* Full: free the slots of threads that are gone, then take one. */
static int slot_take_again(int32_t pid)
{
	uint32_t i;

	for (i = 0; i < tfd_dom->hiwater; i++) {
		struct dom_slot *s = &tfd_dom->slot[i];

		if (s->tid > 0 && s->pid > 0 &&
		    syscall(SYS_tgkill, s->pid, s->tid, 0) < 0 && errno == ESRCH)
			tfd_dom_slot_free((int)i);
	}
	return tfd_dom_slot_take(pid);
}

/* The slot names its thread from now on. */
void tfd_dom_slot_name(int i, int32_t pid, int32_t tid)
{
	struct dom_slot *s = slot_of(i);

	if (!s)
		return;
	__atomic_store_n(&s->pid, pid, __ATOMIC_RELAXED);
	__atomic_store_n(&s->tid, tid, __ATOMIC_RELEASE);
	tfd_dom_changed(tfd_dom);
}

void tfd_dom_slot_free(int i)
{
	struct dom_slot *s = slot_of(i);

	if (!s)
		return;
	if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == DS_RUN)
		__atomic_sub_fetch(&tfd_dom->actrun, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->state, DS_FREE, __ATOMIC_RELAXED);
	__atomic_store_n(&s->tid, 0, __ATOMIC_RELEASE);
	tfd_dom_changed(tfd_dom);
}

/* The slot counted at the outermost entry, uncounted at its leave (the
 * thread's slot may change meanwhile: a fork, the join at load). */
static __thread struct dom_slot *counted;

void tfd_dom_inlib(int d)
{
	static __thread int cs, off;
	struct dom_slot *s = d > 0 ? slot_of(my) : counted;

	/* Not cancelled while counted (preload.h). */
	if (d > 0 && !off) {
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
		off = 1;
	} else if (d < 0 && off) {
		off = 0;
		pthread_setcancelstate(cs, NULL);
	}

	if (d > 0)
		counted = s;
	else
		counted = NULL;
	if (s && !__atomic_add_fetch(&s->inlib, (uint32_t)d, __ATOMIC_SEQ_CST))
		tfd_dom_changed(tfd_dom); /* the mover may wait for this */
}

int tfd_dom_self(void)
{
	return my;
}

void tfd_dom_set_self(int i)
{
	my = i;
}

/* ---- this process ---- */

static struct dom_proc *proc_take(int32_t pid)
{
	struct tfd_dom *d = tfd_dom;
	int i;

	for (i = 0; i < DOM_PROCS; i++) {
		int32_t zero = 0;
		struct dom_proc *p = &d->proc[i];

		if (__atomic_load_n(&p->pid, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&p->pid, &zero, -1, 0,
		                                __ATOMIC_ACQ_REL,
		                                __ATOMIC_RELAXED)) {
			p->kwaiters = 0;
			p->agent = 0;
			p->alone = 0;
			p->next_due = DOM_NEVER;
			p->skipped = 0;
			p->relook = p->relooked = 0;
			p->relook_act = 0;
			__atomic_store_n(&p->pid, pid, __ATOMIC_RELEASE);
			raise_hiwater(&d->phiwater, (uint32_t)i);
			return p;
		}
	}
	return NULL;
}

/* A process record left by this pid's earlier image, or a dead process
 * whose pid came back. */
static void procs_forget(int32_t pid)
{
	uint32_t i;

	for (i = 0; i < tfd_dom->phiwater; i++) {
		int32_t p = pid;

		__atomic_compare_exchange_n(&tfd_dom->proc[i].pid, &p, 0, 0,
		                            __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	}
}

/* A slot that this process's parent took for it and names once its
 * fork or spawn has returned there: 1 while one may be on its way. */
static int slot_on_its_way(void)
{
	int32_t parent = getppid();
	uint32_t i;

	for (i = 0; i < tfd_dom->hiwater; i++)
		if (__atomic_load_n(&tfd_dom->slot[i].tid, __ATOMIC_ACQUIRE) <
		            0 &&
		    tfd_dom->slot[i].pid != DOM_UNNAMED &&
		    tfd_dom->slot[i].parent == parent)
			return 1;
	return 0;
}

/* The slot names its thread from now on, if nobody named it first:
 * taken (tid -1) -> being named (-3) -> named, so that of two namers
 * (a child and its starter) one does it, and the mover holds time
 * meanwhile. */
static int slot_claim(struct dom_slot *s, int32_t pid, int32_t tid)
{
	int32_t taken = -1;

	if (!__atomic_compare_exchange_n(&s->tid, &taken, -3, 0,
	                                 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return 0;
	__atomic_store_n(&s->pid, pid, __ATOMIC_RELAXED);
	__atomic_store_n(&s->tid, tid, __ATOMIC_RELEASE);
	tfd_dom_changed(tfd_dom);
	return 1;
}

/* A slot taken for a child of this process's parent that the C library
 * started (system, popen: tfd_dom_child_slot), claimed. */
static int slot_unnamed(int32_t pid, int32_t tid)
{
	int32_t parent = getppid();
	uint32_t i;

	for (i = 0; i < tfd_dom->hiwater; i++) {
		struct dom_slot *s = &tfd_dom->slot[i];

		if (__atomic_load_n(&s->tid, __ATOMIC_ACQUIRE) == -1 &&
		    s->pid == DOM_UNNAMED && s->parent == parent &&
		    slot_claim(s, pid, tid))
			return (int)i;
	}
	return -1;
}

/* The slots of this pid, but the caller's (its earlier image's threads,
 * gone with the execve). */
static int slots_adopt(int32_t pid, int32_t tid)
{
	uint32_t i;
	int mine = -1, tries;

	for (tries = 0; tries < 100000; tries++) {
		for (i = 0; i < tfd_dom->hiwater && mine < 0; i++)
			if (__atomic_load_n(&tfd_dom->slot[i].tid,
			                    __ATOMIC_ACQUIRE) == tid &&
			    tfd_dom->slot[i].pid == pid)
				mine = (int)i;
		if (mine < 0)
			mine = slot_unnamed(pid, tid);
		if (mine >= 0 || !slot_on_its_way())
			break;
		sched_yield(); /* the parent is about to name it */
	}
	for (i = 0; i < tfd_dom->hiwater; i++) {
		struct dom_slot *s = &tfd_dom->slot[i];

		if (s->pid != pid || s->tid == 0 || (int)i == mine)
			continue;
		if (s->tid > 0)
			tfd_dom_slot_free((int)i);
	}
	if (mine >= 0 &&
	    __atomic_load_n(&tfd_dom->slot[mine].state, __ATOMIC_ACQUIRE) !=
	            DS_RUN) {
		tfd_dom->slot[mine].state = DS_RUN;
		__atomic_add_fetch(&tfd_dom->actrun, ACT_ONE + 1,
		                   __ATOMIC_SEQ_CST);
	}
	return mine;
}

/* Threads that exist already (started before the library, by another
 * library's constructor): a slot each. */
static void slots_for_others(int32_t pid, int32_t self)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		int32_t tid = (int32_t)atoi(e->d_name);
		int i;

		if (tid <= 0 || tid == self)
			continue;
		i = tfd_dom_slot_take(pid);
		tfd_dom_slot_name(i, pid, tid);
	}
	closedir(dir);
}

static void on_poke(int sig)
{
	(void)sig;
	pokes++;
}

/* The domain named by TFD_DOMAIN=<pid>:<fd> (a memfd of `tfd exec`'s),
 * mapped; the descriptor opened to map it is closed at once. */
static struct tfd_dom *map_named(const char *name)
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
	R(close)(fd);
	if (d == MAP_FAILED)
		return NULL;
	if (__atomic_load_n(&d->magic, __ATOMIC_ACQUIRE) != DOM_MAGIC ||
	    d->size != sizeof(*d)) {
		munmap(d, sizeof(*d));
		return NULL;
	}
	return d;
}

static int never_stop(void *ctx)
{
	(void)ctx;
	return 0;
}

static void traced(void *ctx, int64_t from, int64_t to)
{
	struct timespec ts = tfd_ns_to_ts(to - from);

	(void)ctx;
	tfd_trace(-1, 0, 0, "virtual-advance(+%lld.%09ld)", (long long)ts.tv_sec,
	          ts.tv_nsec);
}

static void *mover_thread(void *arg)
{
	sigset_t all;

	sigfillset(&all); /* the program's signals are for its threads */
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	tfd_dom_move(arg, never_stop, traced, NULL);
	return NULL;
}

/* The engine's virtual clocks start at the domain's. */
static void engine_start(void)
{
	int64_t now[3];
	int was;

	now[0] = tfd_dom_now(tfd_dom, DC_MONO);
	now[1] = tfd_dom_now(tfd_dom, DC_REAL);
	now[2] = tfd_dom_now(tfd_dom, DC_BOOT);
	was = tfd_enter();
	tfd_engine_virtual_start(now[0], now[1], now[2]);
	tfd_leave(was);
}

/* At load, on the virtual backend: join the domain of TFD_DOMAIN, or
 * make one of our own with a mover thread (a program run on virtual time
 * without `tfd exec`: its forked children share it, programs it runs get
 * their own).  0, or -1: no domain (each wait then moves time by itself
 * as far as the mover would have). */
int tfd_dom_join(const char *name)
{
	struct sigaction sa;
	int32_t pid = getpid(), tid = gettid();
	pthread_t th;

	struct tfd_dom *own = NULL;

	tfd_dom = name && *name ? map_named(name) : NULL;
	if (!tfd_dom) {
		tfd_dom = own = tfd_dom_create(NULL, 0);
		if (!tfd_dom)
			return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_poke;
	sa.sa_flags = SA_RESTART;
	sigaction(DOM_POKE_SIG, &sa, NULL);
	tfd_counting_signals = 1;
	procs_forget(pid);
	me = proc_take(pid);
	my = slots_adopt(pid, tid);
	if (my < 0) {
		my = tfd_dom_slot_take(pid);
		tfd_dom_slot_name(my, pid, tid);
	}
	slots_for_others(pid, tid);
	engine_start();
	if (own) { /* its mover, started last: not a thread of the program's */
		int was = tfd_enter();

		tfd_own_thread(&th, 0, mover_thread, own, 1);
		tfd_leave(was);
	}
	tfd_dom_changed(tfd_dom);
	return 0;
}

/* exit(): the process is on its way out (a sanitizer's report, the
 * runtime's threads): its timers are no deadline any more, and the
 * exiting thread counts as running until /proc shows it gone, so that
 * time does not move between the program's end and its parent seeing
 * it. */
__attribute__((destructor)) static void leaving(void)
{
	struct dom_slot *s;

	if (!tfd_dom || tfd_inside)
		return;
	if (me)
		__atomic_store_n(&me->next_due, DOM_NEVER, __ATOMIC_SEQ_CST);
	s = self_slot();
	if (s)
		__atomic_or_fetch(&s->inlib, DOM_LEAVING, __ATOMIC_SEQ_CST);
	tfd_dom_changed(tfd_dom);
}

/* pthread_exit() in the process's first thread, which ends while the
 * others go on.  /proc shows it a zombie until the last one ends, as it
 * shows the first thread of a process on its way out (exit_group): the
 * mover, told which, frees its slot once it is a zombie instead of
 * holding time until the process ends (which, the others waiting for
 * time, it never did). */
void tfd_dom_first_ends(void)
{
	struct dom_slot *s;

	if (!tfd_dom || tfd_inside || gettid() != getpid())
		return;
	if (me)
		__atomic_store_n(&me->alone, 1, __ATOMIC_SEQ_CST);
	s = self_slot();
	if (s) {
		__atomic_or_fetch(&s->inlib, DOM_ALONE, __ATOMIC_SEQ_CST);
		tfd_dom_changed(tfd_dom);
	}
}

/* system() and popen() start their child inside the C library (its own
 * posix_spawn, which we do not see): a slot is taken for it before, a
 * child on its way for the mover (time holds), which the child claims
 * when its program loads the library (slots_adopt()), or its starter
 * names once it knows the child's pid (popen), or frees when done (a
 * child that did not load the library: system). */
int tfd_dom_child_slot(void)
{
	return tfd_dom_slot_take(DOM_UNNAMED);
}

void tfd_dom_child_name(int i, int32_t pid)
{
	struct dom_slot *s = slot_of(i);

	if (s)
		slot_claim(s, pid, pid);
}

void tfd_dom_child_done(int i)
{
	struct dom_slot *s = slot_of(i);
	int32_t taken = -1;

	/* Unclaimed, it is free from the exchange on: RUN is uncounted. */
	if (s && __atomic_compare_exchange_n(&s->tid, &taken, 0, 0,
	                                     __ATOMIC_ACQ_REL,
	                                     __ATOMIC_RELAXED)) {
		__atomic_sub_fetch(&tfd_dom->actrun, 1, __ATOMIC_SEQ_CST);
		tfd_dom_changed(tfd_dom);
	}
}

/* After fork(), in the child, with the slot the parent took for it. */
void tfd_dom_forked(int slot)
{
	int32_t pid = getpid();

	my = slot;
	tfd_sigtimers_forked();
	procs_forget(pid);
	me = proc_take(pid);
	tfd_dom_slot_name(slot, pid, pid);
	/* The timers it inherited it shares with its parent (tfd(7), FORK
	 * AND EXEC): the process that made each delivers it, this one once
	 * it takes one over.  Its own get an agent of their own. */
}

static int64_t real_left(int64_t deadline);

/* ---- the process's timers ---- */

/* Move this process's engine to the domain's clock: every expiration up
 * to now is delivered (its eventfd written).  The engine's clocks are
 * its family's (the processes forked from one another without exec): one
 * of them may have moved them already, and then what this one delivers
 * is delivered now, with a move of nothing.  Two may sync at once (each
 * under its own sync_lock): the move is to the domain's time, not by a
 * difference read before, which would count the move twice. */
void tfd_dom_sync(void)
{
	int64_t now = tfd_dom_now(tfd_dom, DC_MONO), at = 0, d, in = 0;
	int was, due;

	was = tfd_enter();
	if (tfd_be->virtual_now(CLOCK_MONOTONIC, &at) != 0 ||
	    (at >= now && (tfd_be->next_due(&in) != 0 || in > 0))) {
		tfd_leave(was);
		return;
	}
	pthread_mutex_lock(&sync_lock);
	if (tfd_be->virtual_now(CLOCK_MONOTONIC, &at) == 0) {
		d = at < now ? now - at : 0;
		due = d > 0 || (tfd_be->next_due(&in) == 0 && in == 0);
		if (due)
			tfd_engine_virtual_move_to(now);
		if (due && me &&
		    __atomic_load_n(&me->next_due, __ATOMIC_RELAXED) <= now)
			/* Timers were delivered: waits on them may end. */
			__atomic_add_fetch(&tfd_dom->actrun, ACT_ONE,
			                   __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&sync_lock);
	tfd_leave(was);
}

static int fd_readable(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return R(poll)(&p, 1, 0) == 1;
}

/* A readable timer stays readable until a thread of this process reads
 * it (and then publishes again), unless its file is read elsewhere: by a
 * program started with it (not close-on-exec), or by a forked child that
 * does not share the family's timers (tfd(7), NOTES 6).  Of the family's
 * processes, each publishes its own look at a timer it holds, and posts
 * it when due (the engine's virtual.c). */
static int read_only_here(int fd)
{
	int f = R(fcntl)(fd, F_GETFD);

	return f >= 0 && (f & FD_CLOEXEC) && !tfd_engine_read_elsewhere(fd);
}

/* The earliest expiry that would make one of this process's timers
 * readable (one readable already only adds to its count), absolute on
 * the virtual CLOCK_MONOTONIC, or DOM_NEVER.  *skipped: a readable one
 * passed over may be read elsewhere (above): the mover has this process
 * look again before it moves time (mover.c, relooks), which a timer that
 * stopped time at each expiry would cost at every one (1 ns apart).
 *
 * A timer's time left is counted from the engine's clock, not from the
 * domain's: the mover may have moved the domain's clock since the engine
 * was synced to it (a thread woken by a late poke looks again just as the
 * mover, which found its last look valid, moves), and an expiry counted
 * from the domain's clock is then late by as much as that move.  Such an
 * expiry was published as the process's next deadline, and the mover
 * moved past the timer's own (vtree: the engine at 3.450 s, the domain
 * moved to 3.500 s, a ping timer due at 3.500 s published as due at
 * 3.550 s and read there).  Counted from the engine's clock, the expiry
 * is the timer's own, due on the domain's clock: the mover wakes the
 * process to deliver it.  The engine's clock is never ahead of the
 * domain's and moves only forward: another process of the family that
 * moves it meanwhile makes an expiry early (looked at again), not late. */
static int64_t unread_deadline(int64_t dom_now, uint32_t *skipped)
{
	int64_t best = DOM_NEVER, now = dom_now;
	int fd, h = __atomic_load_n(&tfd_hiwater, __ATOMIC_RELAXED), was;

	*skipped = 0;
	if (!__atomic_load_n(&tfd_nmarked, __ATOMIC_RELAXED))
		return best;
	was = tfd_enter();
	if (tfd_be->virtual_now(CLOCK_MONOTONIC, &now) != 0 || now > dom_now)
		now = dom_now;
	for (fd = 0; fd < h; fd++) {
		struct itimerspec cur;
		int64_t ns;

		if (!tfd_marked(fd) || tfd_gettime(fd, &cur) < 0)
			continue;
		if (fd_readable(fd)) {
			if (!*skipped && !read_only_here(fd))
				*skipped = 1;
			continue;
		}
		ns = tfd_ts_to_ns(&cur.it_value);
		if (ns > 0 && ns <= TFD_HORIZON && now + ns < best)
			best = now + ns;
	}
	tfd_leave(was);
	return best;
}

/* Threads of the process publish one at a time: what each computes is
 * stored before another computes (a stale answer never lands last). */
static pthread_mutex_t publish_lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(publish_lock, LK_PUBLISH);

static void publish(void)
{
	int64_t now, next, sig;
	uint32_t skipped;
	int was;

	/* Signals first, unlocked: a handler may run here and set a timer. */
	tfd_sigtimers_fire(tfd_dom_now(tfd_dom, DC_MONO));
	was = tfd_enter(); /* running, also while it waits for the lock */
	pthread_mutex_lock(&publish_lock);
	tfd_dom_sync();
	now = tfd_dom_now(tfd_dom, DC_MONO);
	next = unread_deadline(now, &skipped);
	sig = tfd_sigtimers_next();
	if (sig < next)
		next = sig;
	__atomic_store_n(&me->skipped, skipped, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&me->next_due, next, __ATOMIC_SEQ_CST) != next)
		tfd_dom_changed(tfd_dom);
	pthread_mutex_unlock(&publish_lock);
	tfd_leave(was);
}

/* The agent: a thread of ours, started with the process's first armed
 * timer, that delivers its timers when time reaches them, whatever its
 * threads are doing (blocked in waitpid, say, while another process
 * waits on a timer they share).  Not a thread of the program's: it has
 * no slot, and the mover waits for it as for a due deadline. */
static uint32_t agent_running; /* futex word: its start is over */

static void *agent(void *arg)
{
	struct dom_proc *p = arg;
	sigset_t all;

	sigfillset(&all); /* the program's signals are for its threads */
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	__atomic_store_n(&agent_running, 1, __ATOMIC_RELEASE);
	tfd_dom_futex_wake(&agent_running);
	for (;;) {
		uint32_t w = __atomic_load_n(&p->wake, __ATOMIC_SEQ_CST);
		uint32_t ask = __atomic_load_n(&p->relook, __ATOMIC_SEQ_CST);
		int64_t due = __atomic_load_n(&p->next_due, __ATOMIC_SEQ_CST);

		if (due <= tfd_dom_now(tfd_dom, DC_MONO)) {
			publish();
			continue;
		}
		if (ask != __atomic_load_n(&p->relooked, __ATOMIC_SEQ_CST)) {
			publish(); /* the mover asks (mover.c, relooks) */
			__atomic_store_n(&p->relooked, ask, __ATOMIC_SEQ_CST);
			tfd_dom_changed(tfd_dom);
			continue;
		}
		tfd_dom_futex_wait(&p->wake, w, real_left(due));
	}
	return NULL;
}

static pthread_mutex_t agent_lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(agent_lock, LK_AGENT);

static void agent_start(void)
{
	pthread_t th;
	int was = tfd_enter(); /* a thread of the library's; the lock held
	                        * inside (no handler runs, none jumps out) */

	pthread_mutex_lock(&agent_lock);
	if (!__atomic_load_n(&me->agent, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&agent_running, 0, __ATOMIC_RELAXED);
		if (tfd_own_thread(&th, 0, agent, me, 1) == 0) {
			__atomic_store_n(&me->agent, 1, __ATOMIC_RELEASE);
			/* Its start over before the program goes on: a fork
			 * meanwhile gave the child the locks the start held
			 * (a sanitizer's allocator's: the child hung in its
			 * first malloc). */
			while (!__atomic_load_n(&agent_running, __ATOMIC_ACQUIRE))
				tfd_dom_futex_wait(&agent_running, 0, -1);
		}
	}
	pthread_mutex_unlock(&agent_lock);
	tfd_leave(was);
}

/* Tell the mover when this process's timers next need time to stop. */
void tfd_dom_publish(void)
{
	if (!me)
		return;
	publish();
	if ((__atomic_load_n(&me->next_due, __ATOMIC_RELAXED) != DOM_NEVER ||
	     __atomic_load_n(&me->skipped, __ATOMIC_RELAXED)) &&
	    !__atomic_load_n(&me->agent, __ATOMIC_ACQUIRE))
		agent_start();
}

/* Real nanoseconds until deadline in busy mode (time flows), -1 in pure
 * mode: only the mover ends the wait. */
static int64_t real_left(int64_t deadline)
{
	uint32_t rate = __atomic_load_n(&tfd_dom->rate_milli, __ATOMIC_RELAXED);
	int64_t left;

	if (__atomic_load_n(&tfd_dom->ended, __ATOMIC_RELAXED))
		rate = rate ? rate : 1000;
	if (!rate || deadline == DOM_NEVER)
		return -1;
	left = deadline - tfd_dom_now(tfd_dom, DC_MONO);
	return left <= 0 ? 0 : left * 1000 / rate;
}

static void begin_look(struct dom_slot *s)
{
	uint64_t round = __atomic_load_n(&tfd_dom->round, __ATOMIC_SEQ_CST);
	uint64_t ar = __atomic_load_n(&tfd_dom->actrun, __ATOMIC_SEQ_CST);

	__atomic_store_n(&s->looked, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->look_round, round, __ATOMIC_RELAXED);
	__atomic_store_n(&s->look, ar >> ACT_SHIFT, __ATOMIC_RELAXED);
	__atomic_store_n(&s->quiet, NRUN(ar) == 0, __ATOMIC_RELEASE);
}

static void end_look(struct dom_slot *s)
{
	__atomic_store_n(&s->looked, 1, __ATOMIC_RELEASE);
	tfd_dom_changed(tfd_dom);
}

/* A look found nothing: 1 if the deadline has come (the wait ends), else
 * the mover is told, with this process's next deadline. */
static int looked_nothing(struct dom_slot *s, int64_t deadline)
{
	if (tfd_dom_now(tfd_dom, DC_MONO) >= deadline)
		return 1;
	if (s) {
		tfd_dom_publish();
		end_look(s);
	}
	return 0;
}

/* RUN -> WAIT: the thread leaves the count of running ones. */
static void to_wait(struct dom_slot *s, int kind, int64_t deadline)
{
	s->kind = (uint32_t)kind;
	__atomic_store_n(&s->deadline, deadline, __ATOMIC_RELAXED);
	__atomic_store_n(&s->looked, kind == DK_SLEEP, __ATOMIC_RELAXED);
	__atomic_store_n(&s->state, DS_WAIT, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&tfd_dom->actrun, 1, __ATOMIC_SEQ_CST);
}

/* WAIT -> RUN: it runs, which may end others' waits. */
static void to_run(struct dom_slot *s)
{
	__atomic_store_n(&s->state, DS_RUN, __ATOMIC_RELEASE);
	__atomic_add_fetch(&tfd_dom->actrun, ACT_ONE + 1, __ATOMIC_SEQ_CST);
	tfd_dom_changed(tfd_dom);
}

/*
 * A wait ends without coming back through its own code when a handler of
 * the program's jumps out of it (siglongjmp: the timeout idiom) or the
 * thread is cancelled in it.  The slot must not stay WAIT then: the mover
 * would take a thread that runs (or a dead one) for one that waits.  A
 * handler runs through ours (signals.c), which counts the thread as
 * running for as long as the handler runs, and puts the wait back only
 * when the handler returns to it; a thread that ends in a wait (a
 * cancellation) is put back to running by a key's destructor (no cleanup
 * handler: a jump would leave glibc pointing at it).
 */
void tfd_dom_handler(int begin, struct tfd_dom_paused *p)
{
	struct dom_slot *s = tfd_dom ? slot_of(my) : NULL;

	if (begin) {
		p->kind = 0;
		if (!s || __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != DS_WAIT)
			return;
		p->kind = (int)s->kind;
		p->deadline = __atomic_load_n(&s->deadline, __ATOMIC_RELAXED);
		if (p->kind == DK_KERNEL && me)
			__atomic_sub_fetch(&me->kwaiters, 1, __ATOMIC_SEQ_CST);
		to_run(s);
	} else if (s && p->kind) {
		to_wait(s, p->kind, p->deadline);
		if (p->kind == DK_KERNEL && me)
			__atomic_add_fetch(&me->kwaiters, 1, __ATOMIC_SEQ_CST);
		tfd_dom_changed(tfd_dom);
	}
}

static pthread_key_t wait_key;
static pthread_once_t wait_key_once = PTHREAD_ONCE_INIT;
static int have_wait_key;
static __thread int wait_keyed;

static void ends_in_wait(void *arg)
{
	struct tfd_dom_paused p;

	(void)arg;
	wait_keyed = 0;
	tfd_dom_handler(1, &p); /* running, until /proc shows it gone */
}

static void make_wait_key(void)
{
	have_wait_key = pthread_key_create(&wait_key, ends_in_wait) == 0;
}

/* Before this thread's first wait: its end undoes a wait it ends in. */
static void wait_key_set(void)
{
	if (wait_keyed)
		return;
	pthread_once(&wait_key_once, make_wait_key);
	if (have_wait_key && pthread_setspecific(wait_key, &wait_key) == 0)
		wait_keyed = 1;
}

/* Every signal is held from the moment a wait registers until the kernel
 * blocks, which lets them through atomically (ppoll's mask): a signal
 * that comes meanwhile interrupts the wait, as it would have on Linux
 * where the wait began before time could move.  Faults stay deliverable. */
static void hold_signals(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGTRAP);
	sigdelset(&all, SIGSYS);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

/* A poke that came after the last look is dropped; the mask restored. */
static void release_signals(const sigset_t *old)
{
	struct timespec zero = { 0, 0 };
	sigset_t poke;

	sigemptyset(&poke);
	sigaddset(&poke, DOM_POKE_SIG);
	while (syscall(SYS_rt_sigtimedwait, &poke, NULL, &zero, _NSIG / 8) ==
	       DOM_POKE_SIG)
		;
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static int block_sleep(void *ctx, const sigset_t *mask, int64_t ns)
{
	struct timespec ts = tfd_ns_to_ts(ns);

	(void)ctx;
	return R(ppoll)(NULL, 0, ns < 0 ? NULL : &ts, mask);
}

/* A sleep until deadline (virtual CLOCK_MONOTONIC): 0 when it comes,
 * EINTR if a signal handler ran first.  The mover pokes it when time
 * gets there. */
int tfd_dom_sleep(int64_t deadline)
{
	struct dom_slot *s = self_slot();
	sigset_t old, during;
	int e = 0;

	if (!s) { /* no slot (the domain is full): a deadline of nobody's */
		while (tfd_dom_now(tfd_dom, DC_MONO) < deadline) {
			struct timespec ms = { 0, 1000000 };

			R(nanosleep)(&ms, NULL);
		}
		return 0;
	}
	wait_key_set();
	hold_signals(&old);
	during = old;
	sigdelset(&during, DOM_POKE_SIG);
	to_wait(s, DK_SLEEP, deadline);
	tfd_dom_publish();
	tfd_dom_changed(tfd_dom);
	while (tfd_dom_now(tfd_dom, DC_MONO) < deadline) {
		unsigned h0 = tfd_sig_handled;

		if (block_sleep(NULL, &during, real_left(deadline)) < 0 &&
		    errno == EINTR && tfd_sig_handled != h0) {
			e = EINTR; /* a signal of the program's */
			break;
		}
		tfd_dom_publish(); /* poked: this process's timers may be due */
	}
	to_run(s);
	release_signals(&old);
	return e;
}

/* A wait on something the kernel tells (descriptors, signals): look
 * registered, then block in the kernel with DOM_POKE_SIG let through,
 * which the mover sends to ask for another look (something may have
 * changed) or when time reaches the deadline.  Returns look()'s result
 * (> 0, or < 0 with errno), 0 at the deadline, or -1 with errno from
 * block() (EINTR: a signal of the program's). */
int tfd_dom_kwait(int64_t deadline, const sigset_t *mask,
                  int (*look)(void *), int (*block)(void *, const sigset_t *,
                                                    int64_t),
                  void *ctx)
{
	struct dom_slot *s = self_slot();
	sigset_t old, during;
	int r = 0, e = 0;

	if (s)
		wait_key_set();
	hold_signals(&old);
	during = mask ? *mask : old;
	sigdelset(&during, DOM_POKE_SIG);
	if (s) {
		to_wait(s, DK_KERNEL, deadline);
		if (me)
			__atomic_add_fetch(&me->kwaiters, 1, __ATOMIC_SEQ_CST);
	}
	for (;;) {
		unsigned h0 = tfd_sig_handled;

		if (s)
			begin_look(s);
		tfd_dom_sync();
		r = look(ctx);
		if (r != 0) {
			e = errno;
			break;
		}
		if (looked_nothing(s, deadline))
			break;
		r = block(ctx, &during, real_left(deadline));
		e = errno;
		if (r > 0 || (r < 0 && !(e == EINTR && tfd_sig_handled == h0)))
			break; /* ready, failed, or the program's signal */
		/* poked, or the real time of busy mode ran out: look again */
	}
	if (s) {
		if (me)
			__atomic_sub_fetch(&me->kwaiters, 1, __ATOMIC_SEQ_CST);
		to_run(s);
	}
	release_signals(&old);
	errno = e;
	return r;
}

/* A wait that can only block in real time, in slices (a condition
 * variable, a lock, a join): try(ctx, slice) waits at most slice real
 * nanoseconds (-1: no limit) and returns 0 (done), ETIMEDOUT (the slice
 * ran out) or another error.  Registered as looking again at each
 * slice's end.  Returns 0, the error, or ETIMEDOUT at the virtual
 * deadline.  With no deadline (beyond the horizon), one wait without a
 * limit, the thread running for us (blocked outside our waits, which
 * /proc tells): slices would wake it every millisecond for ever. */
#define SLICE_NS 1000000 /* 1 ms */
int tfd_dom_slice_wait(int64_t deadline, int (*try)(void *, int64_t),
                       void *ctx)
{
	struct dom_slot *s = self_slot();
	int r;

	if (deadline == DOM_NEVER)
		return try(ctx, -1);

	if (s) {
		wait_key_set();
		to_wait(s, DK_SLICE, deadline);
	}
	for (;;) {
		int64_t left = real_left(deadline), slice = SLICE_NS;

		if (s)
			begin_look(s);
		r = try(ctx, 0);
		if (r != ETIMEDOUT || looked_nothing(s, deadline))
			break;
		if (left >= 0 && left < slice)
			slice = left;
		r = try(ctx, slice);
		if (r != ETIMEDOUT)
			break;
	}
	if (s)
		to_run(s);
	return r;
}

/* In a child of fork(): this part's locks, which another thread of the
 * parent may have held, are made anew (tree.c). */
void tfd_dom_locks_forked(void)
{
	pthread_mutex_init(&sync_lock, NULL);
	pthread_mutex_init(&publish_lock, NULL);
	pthread_mutex_init(&agent_lock, NULL);
}
