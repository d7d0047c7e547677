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
 *     with the page made writable for the moment).  Its SIGILL is taken
 *     by signals.c's handler, which asks tfd_gosys_trap() first: the call
 *     is made as the preload's syscall() makes it on virtual time
 *     (tfd_vsyscall, exports_syscall.c), with the mask the interrupted
 *     code had (so that signals and the mover's pokes come as they would
 *     to the system call), and the result goes in rax as the kernel's;
 *     the thread goes on after the instruction.
 *   - the vDSO is hidden from the runtime: AT_SYSINFO_EHDR in the
 *     process's auxiliary vector, on the first thread's stack, where
 *     Go's runtime reads it as it starts, becomes AT_IGNORE.  Its clock
 *     reads then take the runtime's own fallback, a system call, trapped
 *     as above.  The C library has found the vDSO already.
 *
 * The code is patched in this process only: a program it executes starts
 * with its own (and the preload, if its environment keeps it, patches
 * that one).  A SIGILL must never come blocked (the kernel would kill):
 * signals.c takes SIGILL out of the mask of every handler it installs,
 * and Go's runtime never blocks SIGILL itself (it must not be blocked:
 * _SigUnblock).  A Go runtime that lacks one of the functions (another
 * version), or a stripped binary, is told on standard error and runs in
 * real time (tfd-preload(7), Go).  x86_64 only.
 */
#include "preload/preload.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define SITES_MAX 16

/* The patched instructions' addresses, sorted as found; fixed once the
 * trap is on. */
static uintptr_t sites[SITES_MAX];
static int nsites;
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
 * Go 1.17, plain before), and whether one of each group is needed. */
static const struct {
	const char *name;
	int group; /* 0: futex, 1: clock, 2: poller, 3: sleep, 4: optional */
} funcs[] = {
	{ "runtime.futex.abi0", 0 },     { "runtime.futex", 0 },
	{ "runtime.nanotime1.abi0", 1 }, { "runtime.nanotime1", 1 },
	{ "time.now.abi0", 4 },          { "time.now", 4 },
	{ "runtime.walltime.abi0", 4 },  { "runtime.walltime", 4 },
	{ "runtime.walltime1.abi0", 4 }, { "runtime.walltime1", 4 },
	{ "runtime.epollwait.abi0", 2 }, { "runtime.epollwait", 2 },
	{ "runtime.usleep.abi0", 3 },    { "runtime.usleep", 3 },
};
#define NFUNCS (sizeof(funcs) / sizeof(funcs[0]))
#define NGROUPS 4

/* The calls whose instructions are patched. */
static int wanted(uint32_t nr)
{
	return nr == SYS_futex || nr == SYS_nanosleep ||
	       nr == SYS_clock_gettime || nr == SYS_epoll_pwait ||
	       nr == SYS_epoll_wait || nr == SYS_clock_nanosleep ||
	       nr == SYS_gettimeofday;
}

struct image {
	const unsigned char *p; /* the file, mapped */
	size_t n;
};

/* Section i's header, or NULL where the file is too short. */
static const Elf64_Shdr *section(const struct image *im, unsigned i)
{
	const Elf64_Ehdr *eh = (const void *)im->p;
	size_t at = eh->e_shoff + (size_t)i * sizeof(Elf64_Shdr);

	if (i >= eh->e_shnum || at + sizeof(Elf64_Shdr) > im->n)
		return NULL;
	return (const void *)(im->p + at);
}

/* The file's symbol table, and whether it is a Go program (a section
 * Go's linker writes: .go.buildinfo, or .gopclntab before Go 1.18; they
 * stay in a stripped binary).  0 with the table, -1 Go without one (st
 * empty), 1 not Go. */
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
	if (!names || names->sh_offset + names->sh_size > im->n)
		return 1;
	memset(st, 0, sizeof(*st));
	for (i = 0; (s = section(im, i)); i++) {
		const char *n = (const char *)im->p + names->sh_offset +
		                s->sh_name;

		if (s->sh_name + 14 <= names->sh_size &&
		    (!memcmp(n, ".go.buildinfo", 14) ||
		     !memcmp(n, ".gopclntab", 11)))
			go = 1;
		if (s->sh_type != SHT_SYMTAB)
			continue;
		l = section(im, s->sh_link);
		if (!l || s->sh_offset + s->sh_size > im->n ||
		    l->sh_offset + l->sh_size > im->n)
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
		if (!wanted(nr))
			continue;
		if (nsites == SITES_MAX)
			return -1;
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
			       "nanotime1, epollwait or usleep of its own)";
			goto out;
		}
	r = 0;
out:
	munmap(m, im.n);
	return r;
}

/* Two bytes at a, written over code: through /proc/self/mem, which
 * writes to a page the process may not (as a debugger does), or with the
 * page made writable for the moment. */
static int poke(uintptr_t a, const unsigned char b[2])
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
	return mprotect((void *)page, (size_t)(a + 2 - page),
	                PROT_READ | PROT_EXEC);
}

/* AT_SYSINFO_EHDR in the vector after envp (the first thread's stack, as
 * the kernel laid it out): AT_IGNORE. */
static void hide_vdso(char **envp)
{
	Elf64_auxv_t *av;

	while (*envp)
		envp++;
	for (av = (Elf64_auxv_t *)(envp + 1); av->a_type != AT_NULL; av++)
		if (av->a_type == AT_SYSINFO_EHDR)
			av->a_type = AT_IGNORE;
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
		if (poke(sites[i], ud2) < 0) {
			/* The ones made stay ours; the rest run in real time. */
			say("its code could not be changed");
			nsites = i;
			break;
		}
	}
	hide_vdso(envp);
}

/* A SIGILL: one of ours is made here and 1 returned, anything else 0. */
int tfd_gosys_trap(siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g;
	uintptr_t ip;
	long a[6];
	sigset_t was;
	int i;

	if (!__atomic_load_n(&tfd_gosys_on, __ATOMIC_ACQUIRE) || !uc ||
	    si->si_code != ILL_ILLOPN)
		return 0;
	g = uc->uc_mcontext.gregs;
	ip = (uintptr_t)g[REG_RIP];
	for (i = 0; i < nsites && sites[i] != ip; i++)
		;
	if (i == nsites)
		return 0;
	a[0] = g[REG_RDI];
	a[1] = g[REG_RSI];
	a[2] = g[REG_RDX];
	a[3] = g[REG_R10];
	a[4] = g[REG_R8];
	a[5] = g[REG_R9];
	/* As the system call would run: with the interrupted code's mask. */
	pthread_sigmask(SIG_SETMASK, &uc->uc_sigmask, &was);
	g[REG_RAX] = tfd_vsyscall(g[REG_RAX], a);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	g[REG_RIP] = (greg_t)(ip + 2);
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
