/* SPDX-License-Identifier: MIT */
/*
 * signals.c - on virtual time, the program's signal handlers are called
 * through ours, which counts them: a wait of the domain (vtime.h) is
 * ended both by the mover's DOM_POKE_SIG and by the program's signals,
 * often at one moment (a thread woken by time sends a signal to another
 * that the mover pokes), and only the count tells whether the program's
 * handler ran, which must end the wait with EINTR.  sigaction() and
 * signal() answer with the program's own action.
 */
#include "preload/preload.h"
#include "lockorder.h"
#include "vtime/vtime.h"

#include <string.h>

int tfd_counting_signals;
__thread unsigned tfd_sig_handled __attribute__((tls_model("initial-exec")));
static struct sigaction prog[_NSIG]; /* the program's, where wrapped */
static unsigned char wrapped[_NSIG];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(lock, LK_SIGNALS);

static void through(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a = prog[sig];

	tfd_sig_handled++;
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else if (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN)
		a.sa_handler(sig);
}

static int catches(const struct sigaction *a)
{
	return (a->sa_flags & SA_SIGINFO) ||
	       (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN);
}

/* sigaction() for sig on a virtual-time domain; next is libc's. */
int tfd_sig_action(int sig, const struct sigaction *act, struct sigaction *old,
                   int (*next)(int, const struct sigaction *,
                               struct sigaction *))
{
	struct sigaction mine, was;
	sigset_t all, saved;
	int r;

	if (sig <= 0 || sig >= _NSIG || sig == DOM_POKE_SIG || sig == SIGSYS)
		return next(sig, act, old);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	pthread_mutex_lock(&lock);
	if (act && catches(act)) {
		mine = *act;
		mine.sa_flags |= SA_SIGINFO;
		mine.sa_sigaction = through;
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
			*old = prog[sig];
	}
	pthread_mutex_unlock(&lock);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	return r;
}

/* In a child of fork(): the lock, which another thread of the parent may
 * have held, made anew (tree.c). */
void tfd_signals_forked(void)
{
	pthread_mutex_init(&lock, NULL);
}
