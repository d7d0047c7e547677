/* SPDX-License-Identifier: MIT */
/*
 * exports_sends.c - the exported ways to send a signal: kill(), killpg(),
 * tgkill(), sigqueue(), pthread_kill() (on x86-64), pthread_sigqueue().
 * On virtual time a signal may wake a thread parked in a wait of the C
 * library's (vtime.h: tfd_dom_park), whose handler, run through ours,
 * unparks it; until the handler begins, the sender, still running, has
 * told of the wake, after sending.  Off virtual time, and for a signal 0
 * (a look), each is the C library's.
 */
#define _GNU_SOURCE
#include "preload/preload.h"

#include <dlfcn.h>

/* A signal sent to process pid (0: to a group, or every process), thread
 * tid of it (0: any). */
static int sent(int r, int sig, pid_t pid, pid_t tid)
{
	if (unlikely(tfd_dom != NULL) && sig != 0)
		tfd_dom_signalled(pid > 0 ? pid : 0, tid); /* (errno kept) */
	return r;
}

EXPORT int kill(pid_t pid, int sig)
{
	return sent(R(kill)(pid, sig), sig, pid, 0);
}

EXPORT int killpg(pid_t pgrp, int sig)
{
	return sent(R(killpg)(pgrp, sig), sig, 0, 0);
}

EXPORT int tgkill(pid_t tgid, pid_t tid, int sig)
{
	return sent(R(tgkill)(tgid, tid, sig), sig, tgid, tid);
}

EXPORT int sigqueue(pid_t pid, int sig, const union sigval value)
{
	return sent(R(sigqueue)(pid, sig, value), sig, pid, 0);
}

/* (A thread of this process: which one, its pthread_t does not say.) */
EXPORT int pthread_sigqueue(pthread_t t, int sig, const union sigval value)
{
	return sent(R(pthread_sigqueue)(t, sig, value), sig, getpid(), 0);
}

#ifdef TFD_KILL_VERSIONS
/* glibc 2.34 made pthread_kill() of a thread that has ended, not yet
 * joined, succeed, and kept the old ESRCH for programs built before
 * under the old version: each version here calls its own
 * (versions.map). */
typedef int kill_fn(pthread_t, int);

static kill_fn *next_kill(kill_fn **next, const char *version)
{
	kill_fn *f = *next;

	if (unlikely(!f)) {
		f = (kill_fn *)dlvsym(RTLD_NEXT, "pthread_kill", version);
		if (!f)
			f = (kill_fn *)dlsym(RTLD_NEXT, "pthread_kill");
		__atomic_store_n(next, f, __ATOMIC_RELEASE);
	}
	return f;
}

int tfd_pthread_kill_2_34(pthread_t t, int sig);
int tfd_pthread_kill_2_2_5(pthread_t t, int sig);

EXPORT int tfd_pthread_kill_2_34(pthread_t t, int sig)
{
	static kill_fn *next;

	return sent(next_kill(&next, "GLIBC_2.34")(t, sig), sig, getpid(), 0);
}

EXPORT int tfd_pthread_kill_2_2_5(pthread_t t, int sig)
{
	static kill_fn *next;

	return sent(next_kill(&next, "GLIBC_2.2.5")(t, sig), sig, getpid(),
	            0);
}

__asm__(".symver tfd_pthread_kill_2_34, pthread_kill@@GLIBC_2.34");
__asm__(".symver tfd_pthread_kill_2_2_5, pthread_kill@GLIBC_2.2.5");
#endif
