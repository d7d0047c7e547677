/* SPDX-License-Identifier: MIT */
/*
 * exports_signals.c - the exported ways to set a signal's action:
 * sigaction(), signal() and the C library's others (bsd_signal,
 * sysv_signal, sigset, siginterrupt), which reach its sigaction() inside
 * it, past ours.  The program's handlers are installed through ours
 * (signals.c: deferred while the thread is inside the library, counted on
 * virtual time); SIGSYS's action is kept by rawsys.c while its filter is
 * in.
 *
 * The next sigaction() and signal() are looked up here on their own, not
 * with the table of next.c: a sanitizer's runtime installs its handlers
 * through them while it starts, before the table's dlsym() of every
 * other function could run.  This file is built without sanitizers
 * (Makefile) for the same reason.
 */
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

int tfd_next_sigaction(int sig, const struct sigaction *act,
                       struct sigaction *old)
{
	static int (*next)(int, const struct sigaction *, struct sigaction *);

	if (unlikely(!next)) {
		next = (__typeof__(next))dlsym(RTLD_NEXT, "sigaction");
		if (!next) {
			errno = ENOSYS;
			return -1;
		}
	}
	return next(sig, act, old);
}

/* The program's handlers go through ours once the preload has begun to
 * initialize; before, the handlers set are a sanitizer runtime's own, set
 * while it starts, when none of our other code may run yet. */
static int handlers_ours(void)
{
	return __atomic_load_n(&tfd_loaded, __ATOMIC_ACQUIRE);
}

EXPORT int sigaction(int sig, const struct sigaction *act,
                     struct sigaction *old)
{
	if (!tfd_inside && sig != SIGSYS && handlers_ours())
		return tfd_sig_action(sig, act, old, tfd_next_sigaction);
	if (sig != SIGSYS || !tfd_rawsys_catching())
		return tfd_next_sigaction(sig, act, old);
	return tfd_rawsys_action(act, old);
}

/* The signals siginterrupt() made interrupt system calls: signal()
 * installs them without SA_RESTART, as glibc's does. */
static sigset_t interrupting;

/* glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its
 * handler). */
EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	static sighandler_t (*real_signal)(int, sighandler_t);
	struct sigaction a, old;

	if (!tfd_inside && sig != SIGSYS && handlers_ours()) {
		if (h == SIG_ERR || sig <= 0 || sig >= _NSIG) {
			errno = EINVAL;
			return SIG_ERR;
		}
		memset(&a, 0, sizeof(a));
		a.sa_handler = h;
		a.sa_flags = sigismember(&interrupting, sig) ? 0 : SA_RESTART;
		sigemptyset(&a.sa_mask);
		sigaddset(&a.sa_mask, sig);
		if (tfd_sig_action(sig, &a, &old, tfd_next_sigaction) < 0)
			return SIG_ERR;
		return old.sa_handler;
	}
	if (sig != SIGSYS || !tfd_rawsys_catching()) {
		if (unlikely(!real_signal))
			real_signal = (__typeof__(real_signal))dlsym(RTLD_NEXT,
			                                             "signal");
		return real_signal(sig, h);
	}
	memset(&a, 0, sizeof(a));
	a.sa_handler = h;
	a.sa_flags = SA_RESTART;
	sigemptyset(&a.sa_mask);
	sigaddset(&a.sa_mask, SIGSYS);
	tfd_rawsys_action(&a, &old);
	return old.sa_handler;
}

/*
 * The C library's other ways to set a handler reach its sigaction()
 * inside it, past ours: each is done here through ours (the program's
 * handler must run through ours, signals.c).
 */
sighandler_t bsd_signal(int sig, sighandler_t h); /* not in glibc's
                                                    * header any more */
EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return signal(sig, h);
}

/* System V's: the handler once (SA_RESETHAND), not blocked in itself. */
EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	struct sigaction a, old;

	if (h == SIG_ERR || sig <= 0 || sig >= _NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&a, 0, sizeof(a));
	a.sa_handler = h;
	a.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&a.sa_mask);
	if (sigaction(sig, &a, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h)
{
	return sysv_signal(sig, h);
}

/* sigset(): SIG_HOLD blocks sig; another disposition is set and sig let
 * through.  The answer: SIG_HOLD if sig was blocked, else the handler. */
EXPORT sighandler_t sigset(int sig, sighandler_t h)
{
	struct sigaction a, old;
	sigset_t one, prev;

	if (h == SIG_ERR || sig <= 0 || sig >= _NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&one);
	sigaddset(&one, sig);
	if (h == SIG_HOLD) {
		if (sigaction(sig, NULL, &old) < 0 ||
		    pthread_sigmask(SIG_BLOCK, &one, &prev) != 0)
			return SIG_ERR;
	} else {
		memset(&a, 0, sizeof(a));
		a.sa_handler = h;
		sigemptyset(&a.sa_mask);
		if (sigaction(sig, &a, &old) < 0 ||
		    pthread_sigmask(SIG_UNBLOCK, &one, &prev) != 0)
			return SIG_ERR;
	}
	return sigismember(&prev, sig) ? SIG_HOLD : old.sa_handler;
}

/* The signal masks: a signal taken (SIGILL, in a Go program on virtual
 * time: gosys.c) is never blocked by the program's threads.  The
 * library's own threads, which run no code of the program's, block
 * what they block. */
EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	return R(sigprocmask)(how, tfd_sig_never_blocked(how, set, &copy), old);
}

EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	return R(pthread_sigmask)(how, tfd_sig_never_blocked(how, set, &copy),
	                          old);
}

/* siginterrupt(): SA_RESTART off (flag) or on, through ours. */
EXPORT int siginterrupt(int sig, int flag)
{
	struct sigaction a;

	if (sig <= 0 || sig >= _NSIG) {
		errno = EINVAL;
		return -1;
	}
	if (sigaction(sig, NULL, &a) < 0)
		return -1;
	if (flag) {
		sigaddset(&interrupting, sig);
		a.sa_flags &= ~SA_RESTART;
	} else {
		sigdelset(&interrupting, sig);
		a.sa_flags |= SA_RESTART;
	}
	return sigaction(sig, &a, NULL);
}
