/* SPDX-License-Identifier: MIT */
/*
 * exports_exec.c - the exec family on virtual time.  A statically linked
 * program (or a script whose interpreter is one) cannot take the preload:
 * started inside the tree, it runs on the system's clocks while the rest
 * of the tree is on virtual time.  `tfd exec` refuses such a program as
 * the first of a tree; one started inside it is said once on standard
 * error, its file and its pid, and runs as it would (tfd-preload(7),
 * VIRTUAL TIME).  Off virtual time, and for the library's own calls,
 * these are the C library's, untouched.
 */
#include "preload/preload.h"
#include "preload/elf.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

void tfd_exec_say_static(const char *prog, int search, pid_t pid)
{
	char path[PATH_MAX], line[PATH_MAX + 160];
	int e = errno, n, i, r;

	if (!tfd_dom || tfd_inside || !prog ||
	    !(r = tfd_program_static(prog, search, path, sizeof(path))))
		return;
	for (i = 0; path[i]; i++) /* one line, whatever the name */
		if ((unsigned char)path[i] < ' ' || path[i] == 0x7f)
			path[i] = '?';
	n = snprintf(line, sizeof(line),
	             "tfd: %s (pid %d)%s is statically linked: "
	             "libtfd-preload.so cannot be loaded into it, it runs on "
	             "the system's clocks, not on virtual time\n",
	             path, (int)pid, r == 2 ? ", an interpreter," : "");
	if (n > 0)
		(void)!R(write)(2, line,
		                (size_t)n < sizeof(line) ? (size_t)n
		                                         : sizeof(line) - 1);
	errno = e;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	tfd_exec_say_static(path, 0, getpid());
	return R(execve)(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	tfd_exec_say_static(path, 0, getpid());
	return R(execv)(path, argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	tfd_exec_say_static(file, 1, getpid());
	return R(execvp)(file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	tfd_exec_say_static(file, 1, getpid());
	return R(execvpe)(file, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char path[40];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	tfd_exec_say_static(path, 0, getpid());
	return R(fexecve)(fd, argv, envp);
}

/* execl(), execlp(), execle(): their arguments into argv, an array on
 * the stack (as the C library's own do), then the v forms above; with
 * with_env, envp is the pointer after the NULL (execle). */
#define EXEC_L(first, with_env)                                              \
	do {                                                                 \
		va_list ap;                                                  \
		size_t n = 1, i;                                             \
                                                                             \
		va_start(ap, first);                                         \
		while (va_arg(ap, const char *))                             \
			n++;                                                 \
		va_end(ap);                                                  \
		argv = __builtin_alloca((n + 1) * sizeof(*argv));            \
		argv[0] = (char *)(uintptr_t)(first);                        \
		va_start(ap, first);                                         \
		for (i = 1; i <= n; i++)                                     \
			argv[i] = va_arg(ap, char *);                        \
		if (with_env)                                                \
			envp = va_arg(ap, char *const *);                    \
		va_end(ap);                                                  \
	} while (0)

EXPORT int execl(const char *path, const char *arg, ...)
{
	char *const *envp = NULL;
	char **argv;

	EXEC_L(arg, 0);
	(void)envp;
	return execv(path, argv);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *const *envp = NULL;
	char **argv;

	EXEC_L(arg, 0);
	(void)envp;
	return execvp(file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	char *const *envp = NULL;
	char **argv;

	EXEC_L(arg, 1);
	return execve(path, argv, envp);
}
