/* SPDX-License-Identifier: MIT */
/*
 * gosys.c - a Go program on virtual time.  Go's runtime reads its clocks
 * through the vDSO and sleeps and waits with system calls of its own (its
 * futexes, usleep, the network poller's epoll_pwait), never through the
 * C library, so none of the preload's wrappers sees them: a Go program
 * (with cgo, so that the preload is loaded at all) ran in real time.
 *
 * At load, on virtual time only, in a program that Go's linker made (its
 * section .go.buildinfo, or .gopclntab), through its symbol table:
 *
 *   - each system call instruction (syscall, 0f 05) inside the runtime's
 *     functions that read a clock or wait (runtime.futex, runtime.usleep,
 *     runtime.nanotime1, runtime.walltime, runtime.epollwait, time.now),
 *     right after a "mov $NR, %eax" of one of those calls, becomes ud2
 *     (0f 0b), written through /proc/self/mem (or, where that is refused,
 *     with the page made writable for the moment).  From Go 1.21 the
 *     poller's wait is a call of the runtime's general Syscall6 in
 *     EpollWait: the first two bytes of that call instruction become
 *     ud2, and the trap makes the call and returns as Syscall6 would.
 *     Its SIGILL is taken by signals.c's handler, which asks
 *     tfd_gosys_trap() first: the call is made as the preload's
 *     syscall() makes it on virtual time (tfd_vsyscall,
 *     exports_syscall.c), with the mask the interrupted code had (so
 *     that signals and the mover's pokes come as they would to the
 *     system call), and the result goes in rax as the kernel's; the
 *     thread goes on after the instruction.
 *   - the vDSO is hidden from the runtime: AT_SYSINFO_EHDR in the
 *     process's auxiliary vector, on the first thread's stack, where
 *     Go's runtime reads it as it starts, becomes AT_IGNORE.  Its clock
 *     reads then take the runtime's own fallback, a system call, trapped
 *     as above.  The C library has found the vDSO already.
 *
 * The code is patched in this process only: a program it executes starts
 * with its own (and the preload, if its environment keeps it, patches
 * that one).  A SIGILL must never come blocked (the kernel would kill):
 * the runtime's own changes of its signal mask are taken too and never
 * block it; signals.c installs SIGILL's handler with SA_NODEFER and takes
 * SIGILL out of the mask of every handler it installs, the C library's
 * sigprocmask() and pthread_sigmask() leave it out (exports_signals.c),
 * and each thread of the program starts with it unblocked (tree.c).  A
 * Go runtime that lacks one of the functions (another version), or a
 * stripped binary, is told on standard error and runs in real time
 * (tfd-preload(7), Go).  x86_64 only.
 */
#include "preload/preload.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define SITES_MAX 16

/* The patched instructions' addresses, sorted as found; fixed once the
 * trap is on.  A site is a system call instruction (2 bytes), or a call
 * of Syscall6 (5 bytes: e8 rel32; CALL6). */
static uintptr_t sites[SITES_MAX];
static unsigned char site_call6[SITES_MAX];
static unsigned char site_was[SITES_MAX][2]; /* the bytes patched */
static int nsites;
/* Go 1.21 on: the runtime's Syscall6(nr, a1..a6) in its register ABI
 * (rax = nr; rbx, rcx, rdi, rsi, r8, r9), which returns r1 in rax, r2 in
 * rbx and the error number in rcx. */
static uintptr_t syscall6;
static const char *const syscall6_names[] = {
	"runtime/internal/syscall.Syscall6", /* 1.21, 1.22 */
	"internal/runtime/syscall.Syscall6", /* 1.23 on */
};
int tfd_gosys_on;

#if defined(__x86_64__) && defined(__linux__)

static void say(const char *what)
{
	char line[256];
	int n = snprintf(line, sizeof(line),
	                 "libtfd-preload: a Go program: %s; its clocks and "
	                 "waits stay in real time\n",
	                 what);

	if (n > 0)
		(void)!write(2, line, (size_t)n < sizeof(line) ? (size_t)n
		                                               : sizeof(line) - 1);
}


/* The runtime's functions whose system calls are taken (ABI0 names from
 * Go 1.17, plain before), and whether one of each group is needed.  Its
 * signal mask and actions too: SIGILL must never be blocked where a
 * taken call may come (the runtime blocks every signal as a thread ends,
 * as a thread of C's enters Go, and around fork), and keeps its handler
 * in a child that the runtime forks with CLONE_VM, where it sets every
 * action to the default with rt_sigaction itself (with cgo, its other
 * calls go through the C library's sigaction()). */
static const struct {
	const char *name;
	int group; /* 0: futex, 1: clock, 2: poller, 3: sleep, 4: mask,
	            * 5: actions, 6: optional */
} funcs[] = {
	{ "runtime.rtsigprocmask.abi0", 4 }, { "runtime.rtsigprocmask", 4 },
	{ "runtime.rt_sigaction.abi0", 5 },  { "runtime.rt_sigaction", 5 },
	{ "runtime.futex.abi0", 0 },     { "runtime.futex", 0 },
	{ "runtime.nanotime1.abi0", 1 }, { "runtime.nanotime1", 1 },
	{ "time.now.abi0", 6 },          { "time.now", 6 },
	{ "runtime.walltime.abi0", 6 },  { "runtime.walltime", 6 },
	{ "runtime.walltime1.abi0", 6 }, { "runtime.walltime1", 6 },
	{ "runtime.epollwait.abi0", 2 }, { "runtime.epollwait", 2 },
	{ "runtime.usleep.abi0", 3 },    { "runtime.usleep", 3 },
	/* Go 1.21 on: the poller's wait is a call of the runtime's generic
	 * Syscall6 (below), the package renamed in 1.23. */
	{ "runtime/internal/syscall.EpollWait", 2 },
	{ "internal/runtime/syscall.EpollWait", 2 },
};
#define NFUNCS (sizeof(funcs) / sizeof(funcs[0]))
#define NGROUPS 6

/* The calls whose instructions are patched. */
static int wanted(uint32_t nr)
{
	return nr == SYS_futex || nr == SYS_nanosleep ||
	       nr == SYS_rt_sigprocmask || nr == SYS_rt_sigaction ||
	       nr == SYS_clock_gettime || nr == SYS_epoll_pwait ||
	       nr == SYS_epoll_wait || nr == SYS_clock_nanosleep ||
	       nr == SYS_gettimeofday;
}

struct image {
	const unsigned char *p; /* the file, mapped */
	size_t n;
};

/* [off, off + size) lies in the file (no sum that can wrap). */
static int inside(const struct image *im, uint64_t off, uint64_t size)
{
	return off <= im->n && size <= im->n - off;
}

/* Section i's header, or NULL where the file does not hold it. */
static const Elf64_Shdr *section(const struct image *im, unsigned i)
{
	const Elf64_Ehdr *eh = (const void *)im->p;
	uint64_t at = (uint64_t)i * sizeof(Elf64_Shdr);

	if (i >= eh->e_shnum || eh->e_shoff % 8 ||
	    !inside(im, eh->e_shoff, at + sizeof(Elf64_Shdr)))
		return NULL;
	return (const void *)(im->p + eh->e_shoff + at);
}

/* Section s's name is name (n bytes with its NUL). */
static int named(const struct image *im, const Elf64_Shdr *names,
                 const Elf64_Shdr *s, const char *name, size_t n)
{
	return s->sh_name <= names->sh_size &&
	       n <= names->sh_size - s->sh_name &&
	       !memcmp(im->p + names->sh_offset + s->sh_name, name, n);
}

/* The file's symbol table, and whether it is a Go program (a section
 * Go's linker writes: .go.buildinfo since Go 1.13, .gopclntab always;
 * both stay in a stripped binary).  0 with the table, -1 Go without one
 * (st empty), 1 not Go. */
struct symtab {
	const Elf64_Sym *sym;
	size_t nsym;
	const char *str;
	size_t nstr;
};

static int find_symtab(const struct image *im, struct symtab *st)
{
	const Elf64_Ehdr *eh = (const void *)im->p;
	const Elf64_Shdr *s, *l, *names;
	unsigned i;
	int go = 0;

	if (im->n < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr))
		return 1;
	names = section(im, eh->e_shstrndx);
	if (!names || !inside(im, names->sh_offset, names->sh_size))
		return 1;
	memset(st, 0, sizeof(*st));
	for (i = 0; (s = section(im, i)); i++) {
		if (named(im, names, s, ".go.buildinfo", 14) ||
		    named(im, names, s, ".gopclntab", 11))
			go = 1;
		if (s->sh_type != SHT_SYMTAB)
			continue;
		l = section(im, s->sh_link);
		if (!l || s->sh_offset % 8 ||
		    !inside(im, s->sh_offset, s->sh_size) ||
		    !inside(im, l->sh_offset, l->sh_size))
			continue;
		st->sym = (const void *)(im->p + s->sh_offset);
		st->nsym = s->sh_size / sizeof(Elf64_Sym);
		st->str = (const char *)im->p + l->sh_offset;
		st->nstr = l->sh_size;
	}
	if (!go)
		return 1;
	return st->sym ? 0 : -1;
}

static const char *sym_name(const struct symtab *st, const Elf64_Sym *y)
{
	if (y->st_name >= st->nstr ||
	    !memchr(st->str + y->st_name, 0, st->nstr - y->st_name))
		return "";
	return st->str + y->st_name;
}

/* The main program's load bias (0 for a fixed-address executable). */
static int first_object(struct dl_phdr_info *info, size_t size, void *p)
{
	(void)size;
	*(uintptr_t *)p = info->dlpi_addr;
	return 1;
}

static int have_site(uintptr_t a)
{
	int i;

	for (i = 0; i < nsites; i++)
		if (sites[i] == a)
			return 1;
	return 0;
}

/* The system call instructions of wanted calls in [lo, hi), each after
 * "mov $imm32, %eax" (b8 imm32) or "mov $imm32, %rax" (48 c7 c0 imm32):
 * how many, or -1 when there is no room for them. */
static int scan(uintptr_t lo, uintptr_t hi)
{
	const unsigned char *c = (const unsigned char *)lo;
	size_t i, n = hi - lo;
	uint32_t nr;
	int was = nsites;

	for (i = 5; i + 2 <= n; i++) {
		if (c[i] != 0x0f || c[i + 1] != 0x05)
			continue;
		if (c[i - 5] == 0xb8)
			memcpy(&nr, c + i - 4, 4);
		else if (i >= 7 && c[i - 7] == 0x48 && c[i - 6] == 0xc7 &&
		         c[i - 5] == 0xc0)
			memcpy(&nr, c + i - 4, 4);
		else
			continue;
		if (!wanted(nr) || have_site(lo + i))
			continue;
		if (nsites == SITES_MAX)
			return -1;
		memcpy(site_was[nsites], c + i, 2);
		sites[nsites++] = lo + i;
	}
	/* The calls of Syscall6 (the call number is in rax, set before:
	 * the trap looks at it). */
	for (i = 0; syscall6 && i + 5 <= n; i++) {
		int32_t rel;

		if (c[i] != 0xe8)
			continue;
		memcpy(&rel, c + i + 1, 4);
		if (lo + i + 5 + (intptr_t)rel != syscall6 ||
		    have_site(lo + i))
			continue;
		if (nsites == SITES_MAX)
			return -1;
		site_call6[nsites] = 1;
		memcpy(site_was[nsites], c + i, 2);
		sites[nsites++] = lo + i;
	}
	return nsites - was;
}

/* Find the sites; -1 with a reason where the runtime is not one we know,
 * 1 where the program is not Go. */
static int find_sites(const char **why)
{
	struct image im;
	struct symtab st;
	struct stat sb;
	uintptr_t bias = 0;
	int fd, found[NGROUPS] = { 0 }, r, n;
	size_t i, k;
	void *m;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1; /* nothing to read: taken as not Go */
	if (fstat(fd, &sb) < 0 || sb.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return 1;
	}
	m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 1;
	im.p = m;
	im.n = (size_t)sb.st_size;
	r = find_symtab(&im, &st);
	if (r) {
		if (r < 0)
			*why = "its symbol table is stripped";
		goto out;
	}
	r = -1;
	dl_iterate_phdr(first_object, &bias);
	for (i = 1; i < st.nsym; i++)
		for (k = 0; k < 2; k++)
			if (ELF64_ST_TYPE(st.sym[i].st_info) == STT_FUNC &&
			    !strcmp(sym_name(&st, &st.sym[i]), syscall6_names[k]))
				syscall6 = bias + st.sym[i].st_value;
	for (i = 1; i < st.nsym; i++) {
		const Elf64_Sym *y = &st.sym[i];
		const char *name = sym_name(&st, y);

		if (ELF64_ST_TYPE(y->st_info) != STT_FUNC || !y->st_size)
			continue;
		for (k = 0; k < NFUNCS; k++) {
			if (strcmp(name, funcs[k].name))
				continue;
			n = scan(bias + y->st_value,
			         bias + y->st_value + y->st_size);
			if (n < 0) {
				*why = "too many system calls to take";
				goto out;
			}
			if (n && funcs[k].group < NGROUPS)
				found[funcs[k].group] = 1;
		}
	}
	for (k = 0; k < NGROUPS; k++)
		if (!found[k]) {
			*why = "its runtime is not one tfd knows (no futex, "
			       "nanotime1, epollwait, usleep, rtsigprocmask or "
			       "rt_sigaction of its own)";
			goto out;
		}
	r = 0;
out:
	munmap(m, im.n);
	return r;
}

/* Two bytes at a, written over code: through /proc/self/mem, which
 * writes to a page the process may not (as a debugger does), or with the
 * page made writable for the moment.  0 once they are written. */
static int patch_site(uintptr_t a, const unsigned char b[2])
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t page = a & ~(uintptr_t)(pg - 1);
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t w = pwrite(fd, b, 2, (off_t)a);

		close(fd);
		if (w == 2)
			return 0;
	}
	if (mprotect((void *)page, (size_t)(a + 2 - page), /* may span two */
	             PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
		return -1;
	memcpy((void *)a, b, 2);
	__builtin___clear_cache((char *)a, (char *)a + 2);
	(void)mprotect((void *)page, (size_t)(a + 2 - page),
	               PROT_READ | PROT_EXEC); /* else it stays writable */
	return 0;
}

/* AT_SYSINFO_EHDR in the vector after envp (the first thread's stack, as
 * the kernel laid it out): AT_IGNORE.  Only if what follows envp is that
 * vector (its page size and vDSO are the process's): envp may be another
 * array where the library was loaded late.  getauxval(AT_SYSINFO_EHDR)
 * then finds none either. */
static void hide_vdso(char **envp)
{
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);
	unsigned long pagesz = getauxval(AT_PAGESZ);
	Elf64_auxv_t *av, *at = NULL;
	int n, page = 0;

	if (!vdso)
		return;
	while (*envp)
		envp++;
	av = (Elf64_auxv_t *)(envp + 1);
	for (n = 0; n < 64 && av[n].a_type != AT_NULL; n++) {
		if (av[n].a_type == AT_SYSINFO_EHDR && av[n].a_un.a_val == vdso)
			at = &av[n];
		if (av[n].a_type == AT_PAGESZ && av[n].a_un.a_val == pagesz)
			page = 1;
	}
	if (n < 64 && page && at)
		at->a_type = AT_IGNORE;
}

void tfd_gosys_init(char **envp)
{
	static const unsigned char ud2[2] = { 0x0f, 0x0b };
	const char *why = NULL;
	int i, r;

	if (!tfd_virt || !envp)
		return;
	r = find_sites(&why);
	if (r > 0)
		return;
	if (r < 0) {
		say(why);
		return;
	}
	/* The handler first (the next SIGILL may be ours), then the code. */
	if (tfd_sig_take_faults(SIGILL) < 0) {
		say("SIGILL could not be taken");
		return;
	}
	__atomic_store_n(&tfd_gosys_on, 1, __ATOMIC_RELEASE);
	for (i = 0; i < nsites; i++) {
		if (patch_site(sites[i], ud2) < 0) {
			/* All or none: the ones made are undone. */
			while (i-- > 0)
				(void)patch_site(sites[i], site_was[i]);
			__atomic_store_n(&tfd_gosys_on, 0, __ATOMIC_RELEASE);
			tfd_sig_untake(SIGILL);
			say("its code could not be changed");
			return;
		}
	}
	hide_vdso(envp);
}

/* rt_sigprocmask(how, set, old, size) of the runtime's: the mask the
 * thread gets back as the handler returns is the context's, changed
 * there, never with SIGILL (nor SIGKILL, SIGSTOP) in it. */
static long mask_call(ucontext_t *uc, const long *a)
{
	const uint64_t never = 1ULL << (SIGILL - 1) | 1ULL << (SIGKILL - 1) |
	                       1ULL << (SIGSTOP - 1);
	uint64_t cur, set = 0;

	if (a[3] != 8)
		return -EINVAL;
	memcpy(&cur, &uc->uc_sigmask, 8);
	if (a[1]) {
		memcpy(&set, (const void *)a[1], 8);
		if (a[0] == SIG_BLOCK)
			set |= cur;
		else if (a[0] == SIG_UNBLOCK)
			set = cur & ~set;
		else if (a[0] != SIG_SETMASK)
			return -EINVAL;
	}
	if (a[2])
		memcpy((void *)a[2], &cur, 8);
	if (a[1]) {
		set &= ~never;
		memcpy(&uc->uc_sigmask, &set, 8);
	}
	return 0;
}

/* The call of Syscall6 at ip (the poller's epoll_pwait): made as the
 * system call would be, with the interrupted code's mask, and answered
 * as Syscall6 answers; the thread goes on after the call. */
static int call6(const ucontext_t *uc, greg_t *g, uintptr_t ip)
{
	long a[6] = { g[REG_RBX], g[REG_RCX], g[REG_RDI],
		      g[REG_RSI], g[REG_R8],  g[REG_R9] };
	sigset_t was;
	long r;
	int e = errno;

	pthread_sigmask(SIG_SETMASK, &uc->uc_sigmask, &was);
	r = tfd_vsyscall(g[REG_RAX], a);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	if (r < 0 && r > -4096) {
		g[REG_RAX] = -1;
		g[REG_RBX] = 0;
		g[REG_RCX] = -r;
	} else {
		g[REG_RAX] = r;
		g[REG_RBX] = a[2]; /* rdx, which the kernel keeps */
		g[REG_RCX] = 0;
	}
	g[REG_RIP] = (greg_t)(ip + 5);
	errno = e;
	return 1;
}

/* A SIGILL: one of ours is made here and 1 returned, anything else 0. */
int tfd_gosys_trap(siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g;
	uintptr_t ip;
	long a[6];
	sigset_t was;
	int i, e;

	if (!__atomic_load_n(&tfd_gosys_on, __ATOMIC_ACQUIRE) || !uc ||
	    si->si_code != ILL_ILLOPN)
		return 0;
	g = uc->uc_mcontext.gregs;
	ip = (uintptr_t)g[REG_RIP];
	for (i = 0; i < nsites && sites[i] != ip; i++)
		;
	if (i == nsites)
		return 0;
	if (site_call6[i])
		return call6(uc, g, ip);
	a[0] = g[REG_RDI];
	a[1] = g[REG_RSI];
	a[2] = g[REG_RDX];
	a[3] = g[REG_R10];
	a[4] = g[REG_R8];
	a[5] = g[REG_R9];
	e = errno;
	if (g[REG_RAX] == SYS_rt_sigprocmask) {
		g[REG_RAX] = mask_call(uc, a);
	} else if (g[REG_RAX] == SYS_rt_sigaction && a[0] == SIGILL) {
		/* SIGILL keeps ours: only the old action is told. */
		a[1] = 0;
		g[REG_RAX] = tfd_vsyscall(SYS_rt_sigaction, a);
	} else if (g[REG_RAX] == SYS_clock_gettime ||
	           (g[REG_RAX] == SYS_futex &&
	            ((int)a[1] & FUTEX_CMD_MASK) != FUTEX_WAIT &&
	            ((int)a[1] & FUTEX_CMD_MASK) != FUTEX_WAIT_BITSET)) {
		/* No wait: no signal to let in.  The runtime's pointers are
		 * its own, valid (syscall()'s read of the kernel's clock
		 * first, for its EFAULT, is not needed). */
		if (g[REG_RAX] == SYS_clock_gettime)
			g[REG_RAX] = clock_gettime((clockid_t)a[0],
			                           (struct timespec *)a[1])
			                     ? -errno
			                     : 0;
		else
			g[REG_RAX] = tfd_vsyscall(SYS_futex, a);
	} else {
		/* As the system call would run: with the interrupted code's
		 * mask. */
		pthread_sigmask(SIG_SETMASK, &uc->uc_sigmask, &was);
		g[REG_RAX] = tfd_vsyscall(g[REG_RAX], a);
		pthread_sigmask(SIG_SETMASK, &was, NULL);
	}
	g[REG_RIP] = (greg_t)(ip + 2);
	errno = e;
	/* The kernel's syscall clobbers rcx and r11 (the return address and
	 * flags): Go's code expects nothing else. */
	return 1;
}

#else

void tfd_gosys_init(char **envp)
{
	(void)envp;
}

int tfd_gosys_trap(siginfo_t *si, void *ucv)
{
	(void)si;
	(void)ucv;
	return 0;
}

#endif
