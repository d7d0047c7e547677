/* SPDX-License-Identifier: MIT */
/*
 * elf.c - whether a program can take libtfd-preload.so (elf.h): LD_PRELOAD
 * is read by the dynamic linker, which runs only for a program whose ELF
 * program headers name it (PT_INTERP).  A program without one is
 * statically linked, with or without a PT_DYNAMIC of its own (static-pie
 * relocates itself): nothing is interposed, its timers stay the kernel's.
 * The dynamic linker run as a program (/lib64/ld-linux-x86-64.so.2 PROG)
 * has no PT_INTERP either but reads LD_PRELOAD: a shared object, with a
 * DT_SONAME, unlike an executable.  A script is judged by its interpreter
 * ("#!"), as the kernel runs it.  Built into `tfd exec` too, which
 * refuses such a program; the preload warns of one run on virtual time
 * (exports_exec.c).  Nothing here is the preload's state.
 */
#define _GNU_SOURCE
#include "preload/elf.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file execvp(3) would run for prog, into path: prog itself when it
 * has a '/', else the first executable regular file of that name in the
 * directories of PATH (as execvp, /bin:/usr/bin when PATH is unset; an
 * empty entry is the current directory).  0, or -1 when there is none. */
static int which(const char *prog, char *path, size_t n)
{
	const char *dirs = getenv("PATH"), *p, *end;
	struct stat st;

	if (strchr(prog, '/'))
		return (size_t)snprintf(path, n, "%s", prog) < n ? 0 : -1;
	if (!dirs)
		dirs = "/bin:/usr/bin";
	for (p = dirs;; p = end + 1) {
		size_t len;

		end = strchr(p, ':');
		len = end ? (size_t)(end - p) : strlen(p);
		if ((size_t)snprintf(path, n, "%.*s%s%s", (int)len, p,
		                     len ? "/" : "", prog) < n &&
		    access(path, X_OK) == 0 && stat(path, &st) == 0 &&
		    S_ISREG(st.st_mode))
			return 0;
		if (!end)
			return -1;
	}
}

/* The fields of the ELF header and of one program header or dynamic entry
 * that matter here, for either class. */
struct hdr {
	int is64;
	unsigned type, phnum, phentsize;
	uint64_t phoff;
};

static int ehdr(int fd, struct hdr *h)
{
	union {
		unsigned char ident[EI_NIDENT];
		Elf32_Ehdr e32;
		Elf64_Ehdr e64;
	} u;
	const unsigned short one = 1;
	int little = *(const unsigned char *)&one;

	if (pread(fd, &u, sizeof(u), 0) != (ssize_t)sizeof(u) ||
	    memcmp(u.ident, ELFMAG, SELFMAG) ||
	    u.ident[EI_DATA] != (little ? ELFDATA2LSB : ELFDATA2MSB))
		return -1; /* not ELF, or not this machine's byte order */
	h->is64 = u.ident[EI_CLASS] == ELFCLASS64;
	if (!h->is64 && u.ident[EI_CLASS] != ELFCLASS32)
		return -1;
	h->type = h->is64 ? u.e64.e_type : u.e32.e_type;
	h->phoff = h->is64 ? u.e64.e_phoff : u.e32.e_phoff;
	h->phnum = h->is64 ? u.e64.e_phnum : u.e32.e_phnum;
	h->phentsize = h->is64 ? u.e64.e_phentsize : u.e32.e_phentsize;
	if (h->phentsize != (h->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return -1;
	return 0;
}

/* Program header i of the file: its type, and where it lies in the file
 * and in memory.  -1 if it cannot be read. */
struct seg {
	unsigned type;
	uint64_t off, vaddr, filesz;
};

static int seg_at(int fd, const struct hdr *h, unsigned i, struct seg *s)
{
	union {
		Elf32_Phdr p32;
		Elf64_Phdr p64;
	} u;

	if (pread(fd, &u, h->phentsize,
	          (off_t)(h->phoff + (uint64_t)i * h->phentsize)) !=
	    (ssize_t)h->phentsize)
		return -1;
	s->type = h->is64 ? u.p64.p_type : u.p32.p_type;
	s->off = h->is64 ? u.p64.p_offset : u.p32.p_offset;
	s->vaddr = h->is64 ? u.p64.p_vaddr : u.p32.p_vaddr;
	s->filesz = h->is64 ? u.p64.p_filesz : u.p32.p_filesz;
	return 0;
}

/* Entry i of the dynamic section at off (size bytes): its tag and
 * value.  -1 past its end or if it cannot be read. */
static int dyn_at(int fd, const struct hdr *h, uint64_t off, uint64_t size,
                  uint64_t i, int64_t *tag, uint64_t *val)
{
	size_t each = h->is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
	union {
		Elf32_Dyn d32;
		Elf64_Dyn d64;
	} u;

	if ((i + 1) * each > size || i >= 65536 ||
	    pread(fd, &u, each, (off_t)(off + i * each)) != (ssize_t)each)
		return -1;
	*tag = h->is64 ? u.d64.d_tag : u.d32.d_tag;
	*val = h->is64 ? u.d64.d_un.d_val : u.d32.d_un.d_val;
	return *tag == DT_NULL ? -1 : 0;
}

/* 1 if the dynamic section at off (size bytes) has a DT_SONAME. */
static int has_soname(int fd, const struct hdr *h, uint64_t off,
                      uint64_t size)
{
	uint64_t i, val;
	int64_t tag;

	for (i = 0; dyn_at(fd, h, off, size, i, &tag, &val) == 0; i++)
		if (tag == DT_SONAME)
			return 1;
	return 0;
}

/* 1 static, 0 dynamic or not known, for the ELF file open as fd. */
static int elf_static(int fd)
{
	uint64_t dyn_off = 0, dyn_size = 0;
	int dynamic = 0;
	struct hdr h;
	unsigned i;

	if (ehdr(fd, &h) < 0 || (h.type != ET_EXEC && h.type != ET_DYN))
		return 0;
	for (i = 0; i < h.phnum; i++) {
		struct seg g;

		if (seg_at(fd, &h, i, &g) < 0 || g.type == PT_INTERP)
			return 0;
		if (g.type == PT_DYNAMIC) {
			dynamic = 1;
			dyn_off = g.off;
			dyn_size = g.filesz;
		}
	}
	/* no interpreter: static, unless it is a shared object (the
	 * dynamic linker itself) */
	return !(dynamic && h.type == ET_DYN &&
	         has_soname(fd, &h, dyn_off, dyn_size));
}

/* Where in the file the address vaddr is (a PT_LOAD's), or 0. */
static uint64_t file_off(int fd, const struct hdr *h, uint64_t vaddr)
{
	struct seg s;
	unsigned i;

	for (i = 0; i < h->phnum && seg_at(fd, h, i, &s) == 0; i++)
		if (s.type == PT_LOAD && vaddr >= s.vaddr &&
		    vaddr - s.vaddr < s.filesz)
			return s.off + (vaddr - s.vaddr);
	return 0;
}

/* The run-time of AddressSanitizer, which must be the first object the
 * dynamic linker loads: it checks so and stops the program otherwise.
 * (ThreadSanitizer's runs after ours as the program names it, as in the
 * tree's own build with it: put first, its interceptors came before
 * ours, and a program on virtual time died at start.) */
static const char *const first_runtimes[] = {
	"libasan.so", "libclang_rt.asan",
};

static int first_runtime(const char *soname)
{
	size_t i, len;

	for (i = 0; i < sizeof(first_runtimes) / sizeof(*first_runtimes); i++) {
		len = strlen(first_runtimes[i]);
		if (!strncmp(soname, first_runtimes[i], len))
			return 1;
	}
	return 0;
}

/* The DT_NEEDED of the ELF file fd that is such a run-time, into name. */
static int elf_runtime(int fd, char *name, size_t n)
{
	uint64_t needed[64], strtab = 0, dyn_off = 0, dyn_size = 0, i, val;
	size_t nneeded = 0, k;
	struct hdr h;
	struct seg s;
	int64_t tag;
	unsigned j;

	if (ehdr(fd, &h) < 0)
		return 0;
	for (j = 0; j < h.phnum && seg_at(fd, &h, j, &s) == 0; j++)
		if (s.type == PT_DYNAMIC) {
			dyn_off = s.off;
			dyn_size = s.filesz;
		}
	for (i = 0; dyn_at(fd, &h, dyn_off, dyn_size, i, &tag, &val) == 0;
	     i++) {
		if (tag == DT_STRTAB)
			strtab = val;
		else if (tag == DT_NEEDED && nneeded < 64)
			needed[nneeded++] = val;
	}
	if (!strtab || !(strtab = file_off(fd, &h, strtab)))
		return 0;
	for (k = 0; k < nneeded; k++) {
		char so[128];
		ssize_t got = pread(fd, so, sizeof(so) - 1,
		                    (off_t)(strtab + needed[k]));

		if (got <= 0)
			continue;
		so[got] = 0;
		if (first_runtime(so) && strlen(so) < n && !strchr(so, ':') &&
		    !strchr(so, ' ')) {
			snprintf(name, n, "%s", so);
			return 1;
		}
	}
	return 0;
}

int tfd_program_runtime(const char *prog, char *name, size_t n)
{
	char path[PATH_MAX];
	int fd, r;

	if (which(prog, path, sizeof(path)) < 0 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	r = elf_runtime(fd, name, n);
	close(fd);
	return r;
}

int tfd_program_static(const char *prog, int search, char *path, size_t n)
{
	char interp[PATH_MAX + 3];
	int depth, r = 0;

	if (search ? which(prog, path, n) < 0
	           : (size_t)snprintf(path, n, "%s", prog) >= n)
		return 0; /* execvp says what is wrong */
	snprintf(interp, sizeof(interp), "%s", path);
	for (depth = 0; depth < 5; depth++) {
		char line[PATH_MAX + 3], *p, *end;
		int fd = open(interp, O_RDONLY | O_CLOEXEC);
		ssize_t len;

		if (fd < 0)
			return 0; /* runnable but not readable: not known */
		len = pread(fd, line, sizeof(line) - 1, 0);
		if (len < 2 || line[0] != '#' || line[1] != '!') {
			r = len > 0 && elf_static(fd);
			close(fd);
			if (r && depth) { /* the interpreter is */
				snprintf(path, n, "%s", interp);
				r = 2;
			}
			return r;
		}
		close(fd);
		/* "#! /bin/sh -e": the interpreter is the first word */
		line[len] = 0;
		for (p = line + 2; *p == ' ' || *p == '\t'; p++)
			;
		end = p + strcspn(p, " \t\n");
		if (end == p)
			return 0;
		*end = 0;
		snprintf(interp, sizeof(interp), "%s", p);
	}
	return 0;
}
