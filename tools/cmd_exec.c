/* SPDX-License-Identifier: MIT */
/*
 * cmd_exec.c - tfd exec: run a program with libtfd-preload.so preloaded, so
 * that its timerfd_create(2) timers are tfd timers.  See tfd(1) and
 * tfd-preload(7).
 *
 *   tfd exec [--backend engine|virtual|kernel] [--trace FILE] [--raw-syscalls]
 *            [--] PROG [ARG]...
 *
 * Options end at PROG (PROG's own options follow it).
 *
 * The library is $TFD_PRELOAD if set, else libtfd-preload.so next to this
 * program (the build tree), else the one in the library directory this
 * program was built for (TFD_LIBDIR).  Exit status: PROG's; 126 or 127 when
 * it cannot be run (as env(1)); 1 when the library is not found; 2 on bad
 * usage.
 */
#define _GNU_SOURCE
#include "cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TFD_LIBDIR
#define TFD_LIBDIR "/usr/local/lib"
#endif

#define PRELOAD_NAME "libtfd-preload.so"

static int readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The directory of this program, with a '/' at the end, into dir. */
static int self_dir(char *dir, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", dir, n - 1);
	char *slash;

	if (len <= 0)
		return -1;
	dir[len] = 0;
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	slash[1] = 0;
	return 0;
}

int tfd_find_preload(char *path, size_t n, char *why, size_t whyn)
{
	const char *env = getenv("TFD_PRELOAD");
	char dir[PATH_MAX];

	if (env && *env) {
		/* Absolute: PROG, or a program it runs, may change directory. */
		if (realpath(env, dir) && (size_t)snprintf(path, n, "%s", dir) < n)
			return 0;
		snprintf(path, n, "%s", env);
		if (readable(path))
			return 0;
		snprintf(why, whyn, "TFD_PRELOAD=%s: %s", env, strerror(errno));
		return -1;
	}
	if (self_dir(dir, sizeof(dir)) == 0 &&
	    (size_t)snprintf(path, n, "%s%s", dir, PRELOAD_NAME) < n &&
	    readable(path))
		return 0;
	snprintf(path, n, "%s/%s", TFD_LIBDIR, PRELOAD_NAME);
	if (readable(path))
		return 0;
	snprintf(why, whyn, "%s not found next to tfd nor in %s (set "
	                    "TFD_PRELOAD)", PRELOAD_NAME, TFD_LIBDIR);
	return -1;
}

/* LD_PRELOAD with the library added last: a sanitizer's runtime, which
 * must come first, may already be there. */
static int set_preload(const char *path)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;
	int r;

	if (strpbrk(path, " :")) {
		fprintf(stderr, "tfd: exec: cannot preload %s: the dynamic "
		                "linker splits LD_PRELOAD at spaces and colons\n",
		        path);
		errno = 0;
		return -1;
	}
	if (!old || !*old)
		return setenv("LD_PRELOAD", path, 1);
	if (asprintf(&v, "%s:%s", old, path) < 0)
		return -1;
	r = setenv("LD_PRELOAD", v, 1);
	free(v);
	return r;
}

/* TFD_TRACE as an absolute name (PROG may change directory), after
 * checking that lines can be appended to it. */
static int set_trace(const char *file)
{
	char cwd[PATH_MAX], *abs = NULL;
	int fd, r;

	fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "tfd: exec: --trace %s: %s\n", file,
		        strerror(errno));
		errno = 0;
		return -1;
	}
	close(fd);
	if (file[0] != '/' && getcwd(cwd, sizeof(cwd)) &&
	    asprintf(&abs, "%s/%s", cwd, file) < 0)
		return -1;
	r = setenv("TFD_TRACE", abs ? abs : file, 1);
	free(abs);
	return r;
}

static int known_backend(const char *b)
{
	return !strcmp(b, "engine") || !strcmp(b, "virtual") ||
	       !strcmp(b, "kernel");
}

enum { O_BACKEND, O_TRACE, O_RAW };
static const struct tfd_opt opts[] = {
	[O_BACKEND] = { "backend", "NAME",
	                "engine, virtual or kernel (default: $TFD_BACKEND,\n"
	                "else engine)" },
	[O_TRACE] = { "trace", "FILE",
	              "append one line per timer operation to FILE\n"
	              "(read it with tfd trace FILE)" },
	[O_RAW] = { "raw-syscalls", NULL,
	            "take over raw timerfd system calls too (a seccomp\n"
	            "filter; sets no_new_privs: tfd-preload(7))" },
	{ NULL, NULL, NULL },
};

static int tfd_cmd_exec(int argc, char **argv);

const struct tfd_cmd tfd_exec_cmd = {
	.name = "exec",
	.operands = "[--] PROG [ARG]...",
	.summary = "run a program with its timerfd(2) timers on tfd",
	.text = "Runs PROG with libtfd-preload.so preloaded: its\n"
	        "timerfd_create(2) timers are tfd timers of the backend chosen.\n"
	        "On virtual, time moves when PROG waits (tfd-preload(7)).\n"
	        "Options end at PROG.  Exit status: PROG's; 126 or 127 when it\n"
	        "cannot be run; 1 when the library is not found; 2 bad usage.",
	.opts = opts,
	.fn = tfd_cmd_exec,
	.options_first = 1,
};

static int tfd_cmd_exec(int argc, char **argv)
{
	const char *backend = NULL, *trace = NULL;
	int raw = 0;
	char path[PATH_MAX], why[PATH_MAX + 64];
	struct tfd_args a;
	int o;

	tfd_args_init(&a, &tfd_exec_cmd, argc, argv);
	while ((o = tfd_opt_next(&a)) >= 0) {
		if (o == O_BACKEND) {
			backend = a.val;
			if (!known_backend(backend))
				return tfd_cmd_bad("unknown backend '%s'",
				                   backend);
		} else if (o == O_TRACE) {
			trace = a.val;
			if (!*trace)
				return tfd_cmd_bad("%s", "--trace needs a file");
		} else if (o == O_RAW) {
			raw = 1;
		}
	}
	if (o != TFD_OPT_END)
		return tfd_opt_status(o);
	if (a.argc == 0)
		return tfd_cmd_bad("%s", "missing PROG: nothing to run");
	if (tfd_find_preload(path, sizeof(path), why, sizeof(why)) < 0) {
		fprintf(stderr, "tfd: exec: %s\n", why);
		return 1;
	}
	errno = 0;
	if (set_preload(path) < 0 || (trace && set_trace(trace) < 0) ||
	    (backend && setenv("TFD_BACKEND", backend, 1) < 0) ||
	    (raw && setenv("TFD_RAW_SYSCALLS", "1", 1) < 0)) {
		if (errno) /* else the message is out already */
			fprintf(stderr, "tfd: exec: %s\n", strerror(errno));
		return 1;
	}
	fflush(NULL);
	execvp(a.argv[0], a.argv);
	fprintf(stderr, "tfd: exec: %s: %s\n", a.argv[0], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
