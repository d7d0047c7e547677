/* SPDX-License-Identifier: MIT */
/*
 * exports_procs.c - the exported calls that start threads and processes:
 * pthread_create (a thread of the library's runs inside it), fork, vfork,
 * clone, pthread_exit; on virtual time the tree's (tree.c).
 */
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- threads the library starts run inside it ---- */

/* What a thread of ours starts with, handed over in one of a few places
 * of our own: not from the program's malloc(), whose first call in a new
 * thread gives the thread an arena of its own (64 MiB of address space
 * each, in glibc), and which a single-threaded program may have made
 * unsafe for other threads.  The new thread takes its copy and lets the
 * place go; with every place taken (more of ours starting at once than
 * there are places), the creator waits for one. */
struct start {
	void *(*fn)(void *);
	void *arg;
	int taken; /* [A] */
};

#define NSTART 8
static struct start starts[NSTART];

static struct start *start_place(void)
{
	unsigned i;

	for (;;) {
		for (i = 0; i < NSTART; i++)
			if (!__atomic_exchange_n(&starts[i].taken, 1,
			                         __ATOMIC_ACQUIRE))
				return &starts[i];
		sched_yield();
	}
}

/* In a child of fork(): only the thread that forked is there, and no
 * thread of ours is about to start; a place taken for one that the
 * parent was starting would be lost for good. */
void tfd_start_places_forked(void)
{
	unsigned i;

	for (i = 0; i < NSTART; i++)
		__atomic_store_n(&starts[i].taken, 0, __ATOMIC_RELAXED);
}

static void *start_inside(void *p)
{
	struct start *place = p, s = *place;

	__atomic_store_n(&place->taken, 0, __ATOMIC_RELEASE);
	tfd_inside = 1;
	return s.fn(s.arg);
}

/* glibc answers timespec_get() inside itself, without clock_gettime()'s
 * symbol: on virtual time it reads the virtual CLOCK_REALTIME here. */
EXPORT int timespec_get(struct timespec *ts, int base)
{
	tfd_started();
	if (!tfd_virt || tfd_inside || base != TIME_UTC)
		return LOADED(timespec_get) ? R(timespec_get)(ts, base) : 0;
	*ts = tfd_ns_to_ts(tfd_dom_read_clock(CLOCK_REALTIME));
	return base;
}

EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg)
{
	struct start *s;
	sigset_t all, old;
	int e;

	if (!tfd_inside) {
		tfd_started(); /* (a library's constructor's thread) */
		return tfd_dom ? tfd_tree_thread(th, attr, fn, arg)
		               : TFD_PROGRAM_SLACK(
		                         R(pthread_create)(th, attr, fn, arg));
	}
	s = start_place();
	s->fn = fn;
	s->arg = arg;
	/* Born with every signal blocked: the program's are for its own
	 * threads (one it blocked everywhere was delivered to a new thread
	 * of ours before that thread could block it, and killed it). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = R(pthread_create)(th, attr, start_inside, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e)
		__atomic_store_n(&s->taken, 0, __ATOMIC_RELEASE);
	return e;
}

/* ---- processes of a virtual-time domain ---- */

/* The first thread may end alone; its process goes on (tree.c). */
EXPORT void pthread_exit(void *ret)
{
	tfd_dom_first_ends();
	R(pthread_exit)(ret);
	abort(); /* not reached: the next definition does not return */
}

EXPORT pid_t fork(void)
{
	if (!tfd_dom || tfd_inside)
		return TFD_PROGRAM_SLACK(R(fork)());
	return tfd_tree_fork();
}

/*
 * vfork(): on virtual time, a fork() of ours, which takes the child's slot
 * before it exists; else the C library's.  A shell (dash) starts each
 * command with vfork(): the child ran without a slot from its exec until
 * its program loaded the library, and time moved meanwhile whenever every
 * other thread waited.  A child of vfork() may only exec or _exit, which
 * a forked one does too.  Either way it notes first that a child may run
 * on our memory (tfd_vm_children: numbers.c), and __vfork() is the same.
 * No C function can call the real vfork() and return to its caller (the
 * child would return through the frame the parent returns through later),
 * hence the jump, on x86-64; elsewhere vfork() is not caught.  Nor in a
 * build with ThreadSanitizer: there a fork's child in a program built
 * without it (a shell) starts the sanitizer's thread through our
 * pthread_create(), unseen by the sanitizer, and crashes (a shell's
 * subshell does so already); the C library's vfork() runs no fork
 * handler.
 */
#ifdef TFD_VFORK
pid_t tfd_vfork_fork(void) __attribute__((used));
pid_t tfd_vfork_early(void) __attribute__((used));
pid_t (*tfd_vfork_next)(void) __attribute__((used)) = tfd_vfork_early;

pid_t tfd_vfork_fork(void)
{
	if (tfd_inside)
		return R(fork)();
	return tfd_tree_fork();
}

/* Before our start: no C library's vfork() is known yet; a fork is one. */
pid_t tfd_vfork_early(void)
{
	return R(fork)();
}

__asm__(".text\n"
        ".globl vfork\n"
        ".type vfork, @function\n"
        ".globl __vfork\n"
        ".type __vfork, @function\n"
        "vfork:\n"
        "__vfork:\n"
#ifdef __CET__
        "	endbr64\n"
#endif
        "	movl $1, tfd_vm_children(%rip)\n"
        "	cmpq $0, tfd_dom(%rip)\n"
        "	jne tfd_vfork_fork\n"
        "	jmp *tfd_vfork_next(%rip)\n"
        ".size vfork, .-vfork\n"
        ".size __vfork, .-__vfork\n");
#endif

/* At start: the C library's vfork() for a vfork() off virtual time. */
void tfd_vfork_init(void)
{
#ifdef TFD_VFORK
	void *v = dlsym(RTLD_NEXT, "vfork");

	if (v)
		tfd_vfork_next = (pid_t(*)(void))v;
#endif
}

/* clone(): a child on our memory (CLONE_VM: a thread made by hand, or a
 * vfork done the long way) may close numbers in a table of its own; from
 * now on close and dup ask whose table it is (tfd_foreign).  Four
 * arguments and three more that the C library's reads whatever the
 * caller passed (past the caller's on its stack, which AddressSanitizer
 * would take for an error).  __clone() is its other name. */
static __attribute__((no_sanitize_address)) int
clone_v(int (*fn)(void *), void *stack, int flags, void *arg, va_list ap)
{
	void *ptid = va_arg(ap, void *), *tls = va_arg(ap, void *);
	void *ctid = va_arg(ap, void *);

	if (flags & CLONE_VM)
		tfd_vm_shared();
	return R(clone)(fn, stack, flags, arg, ptid, tls, ctid);
}

EXPORT __attribute__((no_sanitize_address)) int
clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = clone_v(fn, stack, flags, arg, ap);
	va_end(ap);
	return r;
}

int __clone(int (*fn)(void *), void *stack, int flags, void *arg, ...);
EXPORT __attribute__((no_sanitize_address)) int
__clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = clone_v(fn, stack, flags, arg, ap);
	va_end(ap);
	return r;
}

/* system() and popen() start their child where we cannot name it. */
EXPORT int system(const char *cmd)
{
	if (!tfd_dom || tfd_inside || !cmd)
		return TFD_PROGRAM_SLACK(R(system)(cmd));
	return tfd_tree_system(cmd);
}

EXPORT FILE *popen(const char *cmd, const char *mode)
{
	if (!tfd_dom || tfd_inside)
		return TFD_PROGRAM_SLACK(R(popen)(cmd, mode));
	return tfd_tree_popen(cmd, mode);
}

/* posix_spawn (p 0) or posix_spawnp (p 1). */
static int spawn(int p, pid_t *pid, const char *path,
                 const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *at, char *const argv[],
                 char *const envp[])
{
	int r;

	if (!tfd_dom || tfd_inside)
		return TFD_PROGRAM_SLACK(
		        p ? R(posix_spawnp)(pid, path, fa, at, argv, envp)
		          : R(posix_spawn)(pid, path, fa, at, argv, envp));
	r = tfd_tree_spawn(p, pid, path, fa, at, argv, envp);
	if (r == 0 && pid)
		tfd_exec_say_static(path, p, *pid);
	return r;
}

EXPORT int posix_spawn(pid_t *pid, const char *path,
                       const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *at, char *const argv[],
                       char *const envp[])
{
	return spawn(0, pid, path, fa, at, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file,
                        const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *at, char *const argv[],
                        char *const envp[])
{
	return spawn(1, pid, file, fa, at, argv, envp);
}
