/* SPDX-License-Identifier: MIT */
/*
 * counts.c - what a workload costs in counts, which a busy machine does
 * not move as it moves times (issue 30): the context switches and the
 * system calls of every thread of the process, per operation.
 *
 * The counters are perf events of this process (the software event
 * context-switches and the raw_syscalls:sys_enter tracepoint), opened
 * before the engine's first timer so that the library's threads, made
 * later, inherit them.  Where the kernel refuses one (perf_event_paranoid,
 * a sandbox), switches come from getrusage() (the voluntary ones of
 * every thread) and the system-call rows are left out.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static int counters[2] = { -1, -1 }; /* switches, system calls */

static int counter(uint32_t type, uint64_t config, pid_t pid, int inherit)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.size = sizeof(a);
	a.config = config;
	a.inherit = (unsigned)inherit;
	return (int)syscall(SYS_perf_event_open, &a, pid, -1, -1,
	                    PERF_FLAG_FD_CLOEXEC);
}

int bench_syscall_counter(pid_t pid, int inherit)
{
	FILE *f = fopen("/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
	                "r");
	unsigned long long id;
	int fd = -1;

	if (f && fscanf(f, "%llu", &id) == 1)
		fd = counter(PERF_TYPE_TRACEPOINT, id, pid, inherit);
	if (f)
		fclose(f);
	return fd;
}

void bench_counts_open(void)
{
	if (counters[0] < 0)
		counters[0] = counter(PERF_TYPE_SOFTWARE,
		                      PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 1);
	if (counters[1] < 0)
		counters[1] = bench_syscall_counter(0, 1);
}

static double counted(int k)
{
	uint64_t n;

	if (counters[k] < 0 || read(counters[k], &n, sizeof(n)) != sizeof(n))
		return -1;
	return (double)n;
}

static double switched(void)
{
	struct rusage ru;
	double n = counted(0);

	if (n < 0 && getrusage(RUSAGE_SELF, &ru) == 0)
		n = (double)ru.ru_nvcsw;
	return n;
}

/* The system calls read last here and first in bench_counts_since: the
 * read(2) of the counter is counted by the counter (its entry comes
 * first), so the difference is the work's alone once the second read is
 * taken off. */
struct counts bench_counts(void)
{
	struct counts c;

	c.switches = switched();
	c.syscalls = counted(1);
	return c;
}

struct counts bench_counts_since(struct counts c0, double ops)
{
	struct counts c1, d = { -1, -1 };

	c1.syscalls = counted(1) - 1;
	c1.switches = switched();

	if (c0.switches >= 0 && c1.switches >= 0)
		d.switches = (c1.switches - c0.switches) / ops;
	if (c0.syscalls >= 0 && c1.syscalls >= 0)
		d.syscalls = (c1.syscalls - c0.syscalls) / ops;
	return d;
}

void bench_count_rows(const char *what, long n, int side, struct counts c0,
                      double ops, double syscalls_target)
{
	struct counts d = bench_counts_since(c0, ops);
	char name[64];

	snprintf(name, sizeof(name), "%s syscalls", what);
	if (d.syscalls >= 0)
		bench_add(bench_row(name, n, "",
		                    syscalls_target > 0 ? G_RATIO_LE : G_NONE,
		                    syscalls_target),
		          side, d.syscalls);
	snprintf(name, sizeof(name), "%s switches", what);
	if (d.switches >= 0)
		bench_add(bench_row(name, n, "", G_NONE, 0), side, d.switches);
}
