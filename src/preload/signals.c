/* SPDX-License-Identifier: MIT */
/*
 * signals.c - the program's signal handlers are called through ours.
 *
 * Deferred inside.  A handler of the program's never runs on a thread
 * while that thread is inside the library (tfd_inside: a call of ours
 * runs there, with a lock of ours or the engine's taken, or about to be):
 * it could call the library and wait for a lock its own thread holds, or
 * jump out (siglongjmp) and leave the lock held and the flag set.  Linux's
 * system calls are async-signal-safe and may be left by a jump; so are
 * ours, this way.  Blocking the program's signals around every call would
 * cost two system calls a call (tfd(7), Signals); deferring costs nothing
 * until a signal comes: our handler then adds the signal to the mask that
 * the interrupted code gets back (the context's uc_sigmask), queues it
 * again to the same thread with its own siginfo (rt_tgsigqueueinfo, which
 * one's own process may send with any si_code), and notes it; as the
 * thread leaves its outermost region (tfd_leave), one sigprocmask lets
 * the kernel deliver what came, with the program's own sa_mask, flags
 * and queueing.  Faults of the thread's own (SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE, SIGTRAP with a kernel si_code) are never deferred: the
 * instruction would only fault again.  Where a call of ours blocks (the
 * read(2) of a blocking read, poll and the like, the domain's waits) the
 * thread is outside: a handler runs there and may jump out, as out of a
 * system call of Linux's (src/engine/waits.c undoes what the wait left).
 *
 * Ours is installed without SA_NODEFER (a signal queued again while it
 * runs would come back at once: it is let through here when the
 * program's handler runs), and with the program's SA_RESETHAND: the
 * kernel resets it as it delivers, and a signal deferred puts ours back
 * before it is queued again (it must find the program's handler then).
 * A reset made here with sigaction() instead would go through the
 * kernel's discarding of an ignored signal, which may leave a periodic
 * POSIX timer of that signal never firing again (seen on Linux 6.18
 * with a handler that sets SIG_DFL and its handler back itself).
 * sigaction() and signal() answer with the program's own action.
 *
 * Counted.  On virtual time, a wait of the domain (vtime.h) is ended both
 * by the mover's DOM_POKE_SIG and by the program's signals, often at one
 * moment (a thread woken by time sends a signal to another that the mover
 * pokes), and only the count tells whether the program's handler ran,
 * which must end the wait with EINTR.
 */
#include "preload/preload.h"
#include "lockorder.h"
#include "vtime/vtime.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

int tfd_counting_signals;
__thread unsigned tfd_sig_handled __attribute__((tls_model("initial-exec")));
__thread unsigned tfd_sig_unrestarted
	__attribute__((tls_model("initial-exec")));
__thread int tfd_ndeferred __attribute__((tls_model("initial-exec")));
static __thread sigset_t deferred __attribute__((tls_model("initial-exec")));
static struct sigaction prog[_NSIG]; /* the program's, where wrapped */
static unsigned char wrapped[_NSIG];
/* Taken (gosys.c: SIGILL): ours is installed whatever the program's
 * action, and the signal is in no handler's mask nor the program's
 * masks. */
static unsigned char taken[_NSIG];
/* The program's action for DOM_POKE_SIG, kept while the mover's is in. */
static struct sigaction poke_prog;
static int (*next_action)(int, const struct sigaction *, struct sigaction *);
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(lock, LK_SIGNALS);

/* A fault of the thread's own, raised by the instruction it runs. */
static int fault(int sig, const siginfo_t *si)
{
	return (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
	        sig == SIGFPE || sig == SIGTRAP) &&
	       si && si->si_code > 0;
}

/*
 * ThreadSanitizer's runtime catches every signal itself and runs the
 * handlers (ours) later, at its own points, inside calls it intercepts
 * (ours among them), with a copy of the context: a signal sent again
 * would come back at once and be run again there, for ever (a poll of
 * ours spun).  With it in the process, a deferred signal is kept in the
 * thread's memory instead, and its handler called as the thread leaves.
 */
static int tsan;
#define HELD_MAX 8
static __thread struct {
	int sig;
	siginfo_t si;
} held[HELD_MAX] __attribute__((tls_model("initial-exec")));
static __thread int nheld __attribute__((tls_model("initial-exec")));

/* ThreadSanitizer's runtime defines it.  A weak reference, not dlsym():
 * a dlsym() that fails leaves the thread's error text allocated, which
 * LeakSanitizer reports in a program whose first thread ends in
 * pthread_exit(). */
extern void __tsan_init(void) __attribute__((weak));

__attribute__((constructor)) static void find_tsan(void)
{
	tsan = __tsan_init != NULL;
}

static void through(int sig, siginfo_t *si, void *uc);

static int catches(const struct sigaction *a)
{
	return (a->sa_flags & SA_SIGINFO) ||
	       (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN);
}

static void hold(int sig, const siginfo_t *si)
{
	int i;

	for (i = 0; i < nheld; i++)
		if (held[i].sig == sig && sig < SIGRTMIN)
			return; /* pending once, as the kernel keeps it */
	if (nheld == HELD_MAX)
		return; /* as a real-time signal beyond the queue's limit */
	held[nheld].sig = sig;
	held[nheld].si = *si;
	nheld++;
	tfd_ndeferred = 1;
}

static void run_held(void)
{
	ucontext_t uc;
	siginfo_t si;
	int sig;

	while (nheld) {
		sig = held[0].sig;
		si = held[0].si;
		nheld--;
		memmove(&held[0], &held[1], (size_t)nheld * sizeof(held[0]));
		tfd_ndeferred = nheld != 0;
		getcontext(&uc);
		through(sig, &si, &uc); /* it may jump: the rest stay held */
	}
}

/* sig came while the thread is inside: held until it leaves. */
static void defer(int sig, siginfo_t *si, ucontext_t *uc)
{
	if (tsan) {
		hold(sig, si);
		return;
	}
	sigaddset(&uc->uc_sigmask, sig);
	sigaddset(&deferred, sig);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	tfd_ndeferred = 1;
	if (syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), sig, si) != 0)
		syscall(SYS_tgkill, getpid(), gettid(), sig); /* no room for
		                                  * its siginfo: the signal */
}

/* The thread leaves the library: what came meanwhile is delivered now. */
void tfd_undefer(void)
{
	sigset_t s = deferred;
	int e = errno;

	if (tsan) {
		run_held();
		errno = e;
		return;
	}

	sigemptyset(&deferred);
	tfd_ndeferred = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	if (nheld) /* a taken signal, kept in memory */
		run_held();
	errno = e;
}

/* The thread runs the handler, also when it interrupts a wait of ours,
 * and may jump out of it: the wait counts as running until the handler
 * returns to it (vtime.h: tfd_dom_handler). */
static void through(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a;
	struct tfd_dom_paused p;
	int e = errno;

	if (sig == SIGILL && tfd_gosys_trap(si, uc))
		return; /* a system call of Go's runtime, made */
	a = prog[sig];
	if (tfd_inside && !fault(sig, si) && taken[sig]) {
		/* Sent while inside: kept in memory (its mask never holds
		 * it), its handler called as the thread leaves. */
		hold(sig, si);
		errno = e;
		return;
	}
	if (tfd_inside && !fault(sig, si)) {
		if ((a.sa_flags & SA_RESETHAND) && next_action) {
			struct sigaction mine = a;

			/* Not reset yet: the kernel's reset is undone. */
			mine.sa_flags |= SA_SIGINFO;
			mine.sa_flags &= ~SA_NODEFER;
			mine.sa_sigaction = through;
			next_action(sig, &mine, NULL);
		}
		defer(sig, si, uc);
		errno = e;
		return;
	}
	if (!catches(&a)) { /* taken, the program's action the default */
		struct sigaction dfl;

		if (a.sa_handler == SIG_IGN && !fault(sig, si))
			return;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		next_action(sig, &dfl, NULL);
		wrapped[sig] = 0;
		if (!fault(sig, si)) /* sent: comes again as we return */
			raise(sig);
		return; /* a fault: the instruction faults again, and kills */
	}
	if (a.sa_flags & SA_RESETHAND) {
		/* The kernel has reset it (ours has the flag), but for a
		 * taken signal, whose reset is only the program's. */
		memset(&prog[sig], 0, sizeof(prog[sig]));
		prog[sig].sa_handler = SIG_DFL;
		wrapped[sig] = taken[sig];
	}
	if (a.sa_flags & SA_NODEFER) {
		sigset_t one;

		sigemptyset(&one);
		sigaddset(&one, sig);
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	}
	tfd_sig_handled++;
	if (!(a.sa_flags & SA_RESTART))
		tfd_sig_unrestarted++;
	tfd_dom_handler(1, &p);
	errno = e;
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else if (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN)
		a.sa_handler(sig);
	e = errno;
	tfd_dom_handler(0, &p);
	errno = e;
}

/* An action kept, not installed: told as old, replaced by act, under
 * lk with the signals of block blocked (a handler that asks for it never
 * reads it half written, nor waits for lk on its own thread). */
void tfd_sig_kept(struct sigaction *kept, pthread_mutex_t *lk,
                  const sigset_t *block, const struct sigaction *act,
                  struct sigaction *old)
{
	sigset_t was;

	pthread_sigmask(SIG_BLOCK, block, &was);
	pthread_mutex_lock(lk);
	if (old)
		*old = *kept;
	if (act)
		*kept = *act;
	pthread_mutex_unlock(lk);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
}

/* sigaction() for sig; next is libc's. */
int tfd_sig_action(int sig, const struct sigaction *act, struct sigaction *old,
                   int (*next)(int, const struct sigaction *,
                               struct sigaction *))
{
	struct sigaction mine, was, prev;
	sigset_t all, saved;
	int r;

	if (sig <= 0 || sig >= _NSIG || sig == SIGSYS)
		return next(sig, act, old);
	if (sig == DOM_POKE_SIG) {
		/* The mover's, once the domain is joined: the program's
		 * action is kept here, never installed (Go's runtime sets a
		 * handler of its own on every signal). */
		if (!tfd_dom)
			return next(sig, act, old);
		sigfillset(&all);
		tfd_sig_kept(&poke_prog, &lock, &all, act, old);
		return 0;
	}
	next_action = next;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	pthread_mutex_lock(&lock);
	prev = prog[sig];
	if (act && (catches(act) || taken[sig])) {
		mine = *act;
		mine.sa_flags |= SA_SIGINFO;
		mine.sa_flags &= ~SA_NODEFER;
		mine.sa_sigaction = through;
		if (taken[sig]) {
			/* Never blocked, never reset by the kernel; on the
			 * alternate stack (Go's stacks are small). */
			mine.sa_flags |= SA_ONSTACK | SA_NODEFER;
			mine.sa_flags &= ~SA_RESETHAND;
		}
		if (taken[SIGILL])
			sigdelset(&mine.sa_mask, SIGILL);
		prog[sig] = *act;
		r = next(sig, &mine, &was);
		if (r == 0)
			wrapped[sig] = 1;
	} else {
		r = next(sig, act, &was);
		if (r == 0 && act)
			wrapped[sig] = 0;
	}
	if (r == 0 && old) {
		*old = was;
		if (was.sa_sigaction == through)
			*old = prev;
	}
	pthread_mutex_unlock(&lock);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	return r;
}

/* sig is taken from now on (gosys.c: SIGILL): ours is installed over
 * the program's action, whatever it is, and the handlers already
 * wrapped are installed again without sig in their masks.  A program's
 * SIG_DFL or SIG_IGN is its own again only when the signal comes (the
 * process ends). */
int tfd_sig_take_faults(int sig)
{
	struct sigaction cur;
	int i, was;

	pthread_mutex_lock(&lock);
	was = wrapped[sig];
	if (was)
		cur = prog[sig];
	pthread_mutex_unlock(&lock);
	if (!was && tfd_next_sigaction(sig, NULL, &cur) < 0)
		return -1;
	taken[sig] = 1;
	if (tfd_sig_action(sig, &cur, NULL, tfd_next_sigaction) < 0) {
		taken[sig] = 0;
		return -1;
	}
	for (i = 1; i < _NSIG; i++) {
		pthread_mutex_lock(&lock);
		was = wrapped[i] && i != sig;
		if (was)
			cur = prog[i];
		pthread_mutex_unlock(&lock);
		if (was)
			tfd_sig_action(i, &cur, NULL, tfd_next_sigaction);
	}
	return 0;
}

/* The mover's handler for DOM_POKE_SIG, installed as the domain is
 * joined: the action it replaces is the program's from now on. */
void tfd_sig_poke_install(const struct sigaction *sa)
{
	struct sigaction was;

	if (tfd_next_sigaction(DOM_POKE_SIG, sa, &was) == 0)
		poke_prog = was;
}

/* Taken no more (gosys.c gave up): the program's action, as it is. */
void tfd_sig_untake(int sig)
{
	struct sigaction cur;
	int was;

	pthread_mutex_lock(&lock);
	was = wrapped[sig];
	cur = prog[sig];
	pthread_mutex_unlock(&lock);
	taken[sig] = 0;
	if (!was) {
		memset(&cur, 0, sizeof(cur));
		cur.sa_handler = SIG_DFL;
	}
	tfd_sig_action(sig, &cur, NULL, tfd_next_sigaction);
}

/* sigprocmask() and pthread_sigmask() of the program's: a set to block
 * or set without the signals taken (exports_signals.c); set itself, or
 * copy. */
const sigset_t *tfd_sig_without_taken(int how, const sigset_t *set,
                                      sigset_t *copy)
{
	if (!set || how == SIG_UNBLOCK || !taken[SIGILL] ||
	    !sigismember(set, SIGILL))
		return set;
	*copy = *set;
	sigdelset(copy, SIGILL);
	return copy;
}

/* In a child of fork(): the lock, which another thread of the parent may
 * have held, made anew (tree.c); the child starts with nothing
 * deferred. */
void tfd_signals_forked(void)
{
	pthread_mutex_init(&lock, NULL);
	/* What the forking thread had deferred is pending in the parent:
	 * here only the mask that held it came along, given back now. */
	nheld = 0;
	if (tfd_ndeferred && !tfd_inside)
		tfd_undefer();
}
