/* SPDX-License-Identifier: MIT */
/*
 * rawsys.c - raw timerfd system calls (TFD_RAW_SYSCALLS=1, set by
 * `tfd exec --raw-syscalls`): syscall(__NR_timerfd_create / _settime /
 * _gettime, ...) made by the program act on tfd timers as glibc's
 * timerfd_create(), timerfd_settime(), timerfd_gettime() do; on the
 * virtual backend syscall(__NR_clock_gettime, ...) reads virtual time as
 * glibc's clock_gettime() does there.
 *
 * A seccomp filter makes those three system calls trap (SIGSYS) when they
 * are made from the text of the C library (its syscall() and its own
 * wrappers); every other call, and those three from anywhere else, go to
 * the kernel.  The handler takes the numbers and arguments from the
 * interrupted registers, runs the preload's own timerfd_create(),
 * timerfd_settime() or timerfd_gettime() (the exported functions, which
 * decide whether the number is a timer of ours), and puts the result or
 * -errno in the result register.  The pointers are copied in and out
 * through process_vm_readv/writev on ourselves, so that a pointer the
 * kernel could not use gives EFAULT, as the system call would, instead of
 * a crash.  errno of the interrupted code is left as it was.
 *
 * A call through syscall() by its name reaches the preload's syscall()
 * first (exports_syscall.c), which answers it here with no trap
 * (tfd_rawsys_direct): cheaper, and a thread that blocks SIGSYS lives
 * (the kernel forces a trap's signal; forced and blocked, it kills).
 *
 * The library's own calls of these three (the kernel backend, the
 * passthrough of numbers that are not ours, the engine's clock watch) go
 * through tfd_rawsys(), a system-call stub of ours outside the C library's
 * text: the next definitions of timerfd_* are replaced by it.
 *
 * The trap is limited to the C library's text, not "everything but our
 * stub", because a filter cannot be removed and is inherited across
 * execve(): a program run from this one, with the preload or without it
 * (a static binary, LD_PRELOAD cleared), has its C library elsewhere, and
 * its timerfd calls reach the kernel instead of trapping with no handler
 * to take the signal (which kills the process).
 *
 * The program's SIGSYS handler is remembered, not installed: sigaction()
 * and signal() for SIGSYS (exports_signals.c) are answered from here, and
 * the handler gets every SIGSYS that is not one of ours (another filter's
 * traps, kill()).
 *
 * Installing a filter needs no_new_privs unless the process has
 * CAP_SYS_ADMIN: tried first without it.  See tfd-preload(7) RAW SYSTEM
 * CALLS.  x86_64 only (elsewhere the variable is ignored with a message).
 */
#include "preload/preload.h"
#include "lockorder.h"

#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__linux__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#define RAWSYS_ARCH 1
#endif

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

/* 1 once the filter is in and the handler with it. */
static int raw_on;
/* The program's SIGSYS action (what sigaction() for SIGSYS answers). */
static struct sigaction prog_act;
static pthread_mutex_t prog_lock = PTHREAD_MUTEX_INITIALIZER;
TFD_LOCK_RANK(prog_lock, LK_RAWSYS);

/* In a child of fork(): the lock, which another thread of the parent may
 * have held, made anew (tree.c). */
void tfd_rawsys_forked(void)
{
	pthread_mutex_init(&prog_lock, NULL);
}

#ifdef RAWSYS_ARCH

/* long tfd_rawsys(long nr, long a, long b, long c, long d): the system
 * call, its result as the kernel gives it (-errno on failure).  In its own
 * section, outside the C library's text: the filter lets it through. */
long tfd_rawsys(long nr, long a, long b, long c, long d)
	__attribute__((visibility("hidden")));
__asm__(".pushsection .text.tfd_rawsys,\"ax\",@progbits\n"
        ".globl tfd_rawsys\n"
        ".hidden tfd_rawsys\n"
        ".type tfd_rawsys,@function\n"
        "tfd_rawsys:\n"
        "\tmovq %rdi, %rax\n"
        "\tmovq %rsi, %rdi\n"
        "\tmovq %rdx, %rsi\n"
        "\tmovq %rcx, %rdx\n"
        "\tmovq %r8, %r10\n"
        "\tsyscall\n"
        "\tret\n"
        ".size tfd_rawsys, .-tfd_rawsys\n"
        ".popsection\n");

static long set_errno(long r)
{
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

static int stub_create(int clockid, int flags)
{
	return (int)set_errno(tfd_rawsys(SYS_timerfd_create, clockid, flags,
	                                 0, 0));
}

static int stub_settime(int fd, int flags, const struct itimerspec *nv,
                        struct itimerspec *old)
{
	return (int)set_errno(tfd_rawsys(SYS_timerfd_settime, fd, flags,
	                                 (long)nv, (long)old));
}

static int stub_gettime(int fd, struct itimerspec *cur)
{
	return (int)set_errno(tfd_rawsys(SYS_timerfd_gettime, fd, (long)cur,
	                                 0, 0));
}

/* ---- pointers the kernel could not use: EFAULT ---- */

/* Copy between the program's pointer and ours as the kernel would: 0, or
 * -1 where it would fail EFAULT (also when only part of it can be copied:
 * the end of a mapping).  Where process_vm_* itself is refused (a
 * container's own filter, whatever it answers: ENOSYS, EPERM, EACCES,
 * EINVAL; all but EFAULT), a plain copy: a bad pointer then faults. */
static int copy_in(void *to, const void *from, size_t n)
{
	struct iovec l = { to, n }, r = { (void *)(uintptr_t)from, n };
	long k = syscall(SYS_process_vm_readv, getpid(), &l, 1UL, &r, 1UL,
	                 0UL);

	if (k == (long)n)
		return 0;
	if (k < 0 && errno != EFAULT) { /* refused: ENOSYS, EPERM, EACCES.. */
		if (!from)
			return -1;
		memcpy(to, from, n);
		return 0;
	}
	return -1;
}

static int copy_out(void *to, const void *from, size_t n)
{
	struct iovec l = { (void *)(uintptr_t)from, n }, r = { to, n };
	long k = syscall(SYS_process_vm_writev, getpid(), &l, 1UL, &r, 1UL,
	                 0UL);

	if (k == (long)n)
		return 0;
	if (k < 0 && errno != EFAULT) {
		if (!to)
			return -1;
		memcpy(to, from, n);
		return 0;
	}
	return -1;
}

/* ---- the emulation ---- */

/* What the system call nr would return, through the exported functions;
 * the arguments are the kernel's (int where it takes an int). */
static long emulate(long nr, unsigned long a, unsigned long b,
                    unsigned long c, unsigned long d)
{
	struct itimerspec nv, old, cur;
	struct timespec ts;
	int r;

	switch (nr) {
	case SYS_timerfd_create:
		r = timerfd_create((int)a, (int)b);
		return r < 0 ? -errno : r;
	case SYS_timerfd_settime:
		if (copy_in(&nv, (const void *)c, sizeof(nv)) < 0)
			return -EFAULT;
		r = timerfd_settime((int)a, (int)b, &nv, d ? &old : NULL);
		if (r < 0)
			return -errno;
		/* As Linux: the timer is set, then the old value copied. */
		if (d && copy_out((void *)d, &old, sizeof(old)) < 0)
			return -EFAULT;
		return 0;
	case SYS_timerfd_gettime:
		r = timerfd_gettime((int)a, &cur);
		if (r < 0)
			return -errno;
		if (copy_out((void *)b, &cur, sizeof(cur)) < 0)
			return -EFAULT;
		return 0;
	case SYS_clock_gettime: /* on virtual only: its clocks */
		r = clock_gettime((clockid_t)a, &ts);
		if (r < 0)
			return -errno;
		if (copy_out((void *)b, &ts, sizeof(ts)) < 0)
			return -EFAULT;
		return 0;
	}
	return -ENOSYS;
}

/* syscall(nr, ...) of the program, for one of the calls the filter traps:
 * answered here as the trap would answer it, without the trap (faster,
 * and a thread that blocks SIGSYS is not killed: the kernel forces a
 * trap's signal, and a forced signal that is blocked ends the process).
 * 1 and the result as the kernel gives it in *r (errno as it was), or 0:
 * not one of them. */
int tfd_rawsys_direct(long nr, const long *a, long *r)
{
	int e = errno;

	if (!__atomic_load_n(&raw_on, __ATOMIC_ACQUIRE) ||
	    !(nr == SYS_timerfd_create || nr == SYS_timerfd_settime ||
	      nr == SYS_timerfd_gettime))
		return 0;
	*r = emulate(nr, (unsigned long)a[0], (unsigned long)a[1],
	             (unsigned long)a[2], (unsigned long)a[3]);
	errno = e;
	return 1;
}

static int ours(const siginfo_t *si)
{
	return si->si_code == SYS_SECCOMP &&
	       si->si_arch == AUDIT_ARCH_X86_64 &&
	       (si->si_syscall == SYS_timerfd_create ||
	        si->si_syscall == SYS_timerfd_settime ||
	        si->si_syscall == SYS_timerfd_gettime ||
	        (si->si_syscall == SYS_clock_gettime && tfd_virt));
}

/* A SIGSYS that is not ours, as the program asked: its handler, its mask;
 * default or ignored, the kernel's action (a trap ignored still kills, as
 * the kernel does for a signal it forces). */
static void chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction p = prog_act;
	sigset_t was, sys;

	if (p.sa_flags & SA_RESETHAND) {
		prog_act.sa_handler = SIG_DFL;
		prog_act.sa_flags &= ~SA_SIGINFO;
	}
	if (!(p.sa_flags & SA_SIGINFO) &&
	    (p.sa_handler == SIG_DFL || p.sa_handler == SIG_IGN)) {
		struct sigaction dfl;

		if (p.sa_handler == SIG_IGN && si->si_code != SYS_SECCOMP)
			return;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		tfd_next_sigaction(SIGSYS, &dfl, NULL);
		sigemptyset(&sys);
		sigaddset(&sys, SIGSYS);
		raise(SIGSYS);
		pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
		return;
	}
	pthread_sigmask(SIG_BLOCK, &p.sa_mask, &was);
	if (p.sa_flags & SA_SIGINFO)
		p.sa_sigaction(sig, si, uc);
	else
		p.sa_handler(sig);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
}

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	int e = errno;

	if (!ours(si)) {
		chain(sig, si, ucv);
		return;
	}
	g[REG_RAX] = emulate(si->si_syscall, (unsigned long)g[REG_RDI],
	                     (unsigned long)g[REG_RSI],
	                     (unsigned long)g[REG_RDX],
	                     (unsigned long)g[REG_R10]);
	errno = e;
}

/* ---- the filter ---- */

struct range {
	uintptr_t lo, hi; /* [lo, hi) */
	uintptr_t in;     /* an address that must lie in it */
};

static int find_text(struct dl_phdr_info *info, size_t size, void *p)
{
	struct range *t = p;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    t->in >= lo && t->in < lo + ph->p_memsz) {
			t->lo = lo;
			t->hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

#define STMT(c, k) ((struct sock_filter)BPF_STMT(c, k))
#define JUMP(c, k, t, f) ((struct sock_filter)BPF_JUMP(c, k, t, f))
#define DATA(f) ((uint32_t)offsetof(struct seccomp_data, f))
#define IP_LO (DATA(instruction_pointer))
#define IP_HI (DATA(instruction_pointer) + 4)

/* Trap if the instruction pointer is in [lo, last], both with the same
 * upper 32 bits: six instructions at f, falling through when it is not. */
static int trap_if_in(struct sock_filter *f, uint64_t lo, uint64_t last)
{
	f[0] = STMT(BPF_LD | BPF_W | BPF_ABS, IP_HI);
	f[1] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(lo >> 32), 0, 4);
	f[2] = STMT(BPF_LD | BPF_W | BPF_ABS, IP_LO);
	f[3] = JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)lo, 0, 2);
	f[4] = JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)last, 1, 0);
	f[5] = STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
	return 6;
}

#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif

/* The filter, on every thread.  SPEC_ALLOW: a filter is taken for a
 * sandbox, and where the kernel mitigates speculative store bypass for
 * sandboxes (spec_store_bypass_disable=seccomp, the default on affected
 * processors) every instruction of the program would pay for it; this
 * filter confines nothing.  A kernel before 4.17 lacks the flag. */
static int seccomp_filter(struct sock_fprog *prog)
{
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	            SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_SPEC_ALLOW,
	            prog) == 0)
		return 0;
	if (errno != EINVAL)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	                    SECCOMP_FILTER_FLAG_TSYNC, prog);
}

static int install_filter(struct range *t)
{
	struct sock_filter f[24];
	struct sock_fprog prog;
	uint64_t last = t->hi - 1, split;
	int n = 0, k;

	f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, DATA(arch));
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, DATA(nr));
	/* The numbers that trap; on virtual also clock_gettime (a raw one:
	 * the vDSO's own fallback is not in the C library's text). */
	k = tfd_virt ? 4 : 3;
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_timerfd_create, k--, 0);
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_timerfd_settime, k--, 0);
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_timerfd_gettime, k--, 0);
	if (tfd_virt)
		f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime,
		              k--, 0);
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	if ((t->lo >> 32) == (last >> 32)) {
		n += trap_if_in(f + n, t->lo, last);
	} else { /* across a 4 GiB line: two pieces */
		split = (last >> 32) << 32;
		n += trap_if_in(f + n, t->lo, split - 1);
		n += trap_if_in(f + n, split, last);
	}
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)n;
	prog.filter = f;
	/* With CAP_SYS_ADMIN no no_new_privs is needed: tried first. */
	if (seccomp_filter(&prog) == 0)
		return 0;
	if (errno != EACCES)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return seccomp_filter(&prog);
}

static void say(const char *what)
{
	char line[256];
	int n = snprintf(line, sizeof(line),
	                 "libtfd-preload: raw system calls not taken over: "
	                 "%s%s%s\n",
	                 what, errno ? ": " : "", errno ? strerror(errno) : "");

	if (n > 0)
		(void)!write(2, line, (size_t)n < sizeof(line) ? (size_t)n
		                                               : sizeof(line) - 1);
}

void tfd_rawsys_init(void)
{
	const char *v = secure_getenv("TFD_RAW_SYSCALLS");
	struct range t = { 0, 0, 0 };
	struct sigaction act, old;

	if (!v || strcmp(v, "1"))
		return;
	errno = 0;
	t.in = (uintptr_t)tfd_next.syscall; /* (next.c) */
	if (!t.in || !dl_iterate_phdr(find_text, &t)) {
		say("the C library's text not found");
		return;
	}
	/* Our own calls of the three go through the stub from now on. */
	tfd_next.timerfd_create = stub_create;
	tfd_next.timerfd_settime = stub_settime;
	tfd_next.timerfd_gettime = stub_gettime;
	memset(&act, 0, sizeof(act));
	act.sa_sigaction = on_sigsys;
	act.sa_flags = SA_SIGINFO;
	sigemptyset(&act.sa_mask);
	if (tfd_next_sigaction(SIGSYS, &act, &old) < 0) {
		say("sigaction");
		return;
	}
	prog_act = old; /* inherited across exec: SIG_DFL or SIG_IGN */
	if (install_filter(&t) < 0) {
		say("seccomp");
		tfd_next_sigaction(SIGSYS, &old, NULL);
		return;
	}
	__atomic_store_n(&raw_on, 1, __ATOMIC_RELEASE);
}

#else /* not x86_64 */

int tfd_rawsys_direct(long nr, const long *a, long *r)
{
	(void)nr;
	(void)a;
	(void)r;
	return 0;
}

void tfd_rawsys_init(void)
{
	const char *v = secure_getenv("TFD_RAW_SYSCALLS");
	static const char m[] = "libtfd-preload: raw system calls are taken "
	                        "over on x86_64 only\n";

	if (v && !strcmp(v, "1"))
		(void)!write(2, m, sizeof(m) - 1);
}

#endif

/* ---- sigaction() and signal() for SIGSYS: the program's, remembered ---- */

/* The program's SIGSYS action, asked or set while the filter is in
 * (exports_signals.c).  Blocks SIGSYS on this thread while it changes, so
 * that the handler never reads it half written. */
int tfd_rawsys_action(const struct sigaction *act, struct sigaction *old)
{
	sigset_t sys;

	sigemptyset(&sys);
	sigaddset(&sys, SIGSYS);
	tfd_sig_kept(&prog_act, &prog_lock, &sys, act, old);
	return 0;
}

/* 1 once the filter is in: SIGSYS's action is the program's, kept here. */
int tfd_rawsys_catching(void)
{
	return __atomic_load_n(&raw_on, __ATOMIC_ACQUIRE);
}
