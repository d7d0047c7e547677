/* SPDX-License-Identifier: MIT */
/*
 * workloads_memory.c - tfd bench's workload 8 (bench.h): the memory,
 * descriptors and kernel slab a timer costs, measured in a fresh process
 * (the engine's tables keep their high-water mark, so a second
 * measurement in one process would miss them).
 */
#define _GNU_SOURCE
#include "bench.h"

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

static long long rss_bytes(void)
{
	long long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%lld %lld", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * sysconf(_SC_PAGESIZE);
}

static long long slab_bytes(void)
{
	char line[128];
	long long kb = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/* What the process has in use: malloc's, and the shared memory it has
 * touched (the engine keeps its timers in memory a fork shares). */
static long long heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();
	long long shmem = 0;
	char line[128];
	FILE *f = fopen("/proc/self/status", "re");

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "RssShmem: %lld kB", &shmem) == 1)
				break;
		fclose(f);
	}
	return (long long)(mi.uordblks + mi.hblkhd) + shmem * 1024;
}

/* In the child: print "malloc rss fds slab" per timer for n timers. */
int bench_memory_child(int side, long n)
{
	long long h0, r0, s0;
	long f0, f1;
	int *fds = malloc(sizeof(*fds) * (size_t)n), *one;

	if (!fds)
		return 1;
	memset(fds, 0, sizeof(*fds) * (size_t)n);
	one = bench_open_set(side, 1, 1); /* start the engine's thread first */
	if (!one)
		return 1;
	h0 = heap_bytes();
	r0 = rss_bytes();
	f0 = count_fds();
	s0 = slab_bytes();
	free(fds);
	n--; /* with the first one, n timers: tables sized for n */
	fds = bench_open_set(side, n, 1);
	if (!fds || n < 1)
		return 1;
	f1 = count_fds();
	printf("%.2f %.2f %.3f %.2f\n", (double)(heap_bytes() - h0) / n,
	       (double)(rss_bytes() - r0) / n, (double)(f1 - f0) / n,
	       (double)(slab_bytes() - s0) / n);
	/* measured: leave nothing (LeakSanitizer) */
	bench_close_set(side, fds, n);
	bench_close_set(side, one, 1);
	return 0;
}

/* This program run again with argv and the environment env (NULL: ours),
 * what it prints on standard output in out: 0 if it exited 0, else -1
 * (errno EIO when it ran and failed). */
static int rerun(char **argv, char **env, char *out, size_t n)
{
	ssize_t r, len = 0;
	int p[2], st;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execve("/proc/self/exe", argv, env ? env : environ);
		_exit(127);
	}
	close(p[1]);
	while (pid > 0 && (r = read(p[0], out + len,
	                            n - 1 - (size_t)len)) > 0)
		len += r;
	out[len] = 0;
	close(p[0]);
	if (pid < 0)
		return -1;
	if (waitpid(pid, &st, 0) < 0 || st != 0) {
		errno = EIO;
		return -1;
	}
	return 0;
}

void workload_memory(int side, long n)
{
	char arg[2][32], out[256] = "";
	char *argv[] = { (char *)"tfd", (char *)"bench", arg[0], arg[1], NULL };
	double v[4];
	int r;

	snprintf(arg[0], sizeof(arg[0]), "--memory-child=%s",
	         bench_side_name[side]);
	snprintf(arg[1], sizeof(arg[1]), "%ld", n);
	r = rerun(argv, NULL, out, sizeof(out));
	if (r == 0 &&
	    sscanf(out, "%lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3]) != 4) {
		errno = EIO;
		r = -1;
	}
	if (r < 0) {
		bench_fail(side, "memory measurement in a child process");
		return;
	}
	bench_add(bench_row("8 user memory per timer (malloc+shared)", n, "B",
	                    G_ABS_LE, 128),
	          side, v[0]);
	bench_add(bench_row("8 RSS per timer", n, "B", G_NONE, 0), side, v[1]);
	bench_add(bench_row("8 descriptors per timer", n, "fds", G_NONE, 0),
	          side, v[2]);
	bench_add(bench_row("8 kernel slab per timer (noisy)", n, "B", G_NONE,
	                    0),
	          side, v[3]);
}
