/* SPDX-License-Identifier: MIT */
/*
 * exports_sends.c - the exported ways to send a signal: kill(), killpg(),
 * tgkill(), sigqueue(), pthread_kill(), pthread_sigqueue().  On virtual
 * time a signal may wake a thread parked in a wait of the C library's
 * (vtime.h: tfd_dom_park), whose handler, run through ours, unparks it;
 * until the handler begins, the sender, still running, has told of the
 * wake, after sending.  Off virtual time, and for a signal 0 (a look),
 * each is the C library's.
 */
#include "preload/preload.h"

static int sent(int r, int sig)
{
	if (unlikely(tfd_dom != NULL) && sig != 0)
		tfd_dom_woke(NULL); /* (errno as the call left it) */
	return r;
}

EXPORT int kill(pid_t pid, int sig)
{
	return sent(R(kill)(pid, sig), sig);
}

EXPORT int killpg(pid_t pgrp, int sig)
{
	return sent(R(killpg)(pgrp, sig), sig);
}

EXPORT int tgkill(pid_t tgid, pid_t tid, int sig)
{
	return sent(R(tgkill)(tgid, tid, sig), sig);
}

EXPORT int sigqueue(pid_t pid, int sig, const union sigval value)
{
	return sent(R(sigqueue)(pid, sig, value), sig);
}

/* glibc 2.34 made pthread_kill() of a thread that has ended, not yet
 * joined, succeed; a program built before keeps the old ESRCH through a
 * symbol version of its own, which this one, unversioned, takes the place
 * of (tfd-preload(7), BUGS). */
EXPORT int pthread_kill(pthread_t t, int sig)
{
	return sent(R(pthread_kill)(t, sig), sig);
}

EXPORT int pthread_sigqueue(pthread_t t, int sig, const union sigval value)
{
	return sent(R(pthread_sigqueue)(t, sig, value), sig);
}
