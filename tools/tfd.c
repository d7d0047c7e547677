/* SPDX-License-Identifier: MIT */
/*
 * tfd - the command-line program.  See tfd(1).
 *
 *   tfd run [--clock C] [--abs] [--api revised|linux] VALUE [INTERVAL [COUNT]]
 *   tfd bench [--quick] [--json] [--filter NAME]
 *   tfd conform [--backend NAME] [--filter SUBSTR] [--quiet]
 *   tfd exec [--backend engine|virtual|kernel] [--trace FILE] -- PROG [ARG]...
 *
 * Exit status: 0 success, 1 a call failed, 2 bad usage.
 */
#include "cmd.h"
#include "tfd.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
	"usage: tfd run [--clock CLOCK] [--abs] [--api revised|linux]\n"
	"               VALUE [INTERVAL [COUNT]]\n"
	"       tfd bench [--quick] [--json] [--filter NAME]...\n"
	"       tfd conform [--backend NAME] [--filter SUBSTR] [--quiet]\n"
	"       tfd exec [--backend engine|virtual|kernel] [--trace FILE]\n"
	"                -- PROG [ARG]...\n"
	"       tfd --help | --version\n"
	"\n"
	"Arms a timer file descriptor for VALUE seconds, repeating every\n"
	"INTERVAL seconds (0: one-shot), and reads it until COUNT expirations\n"
	"(default 1) have been counted, printing one line per read.\n"
	"\n"
	"  --clock CLOCK  monotonic (default), realtime, boottime,\n"
	"                 realtime-alarm or boottime-alarm\n"
	"  --abs          arm with TFD_TIMER_ABSTIME at now + VALUE\n"
	"  --api API      linux: tfd_create/tfd_settime/tfd_gettime/tfd_read\n"
	"                 (default); revised: the 2007 timerfd() call and\n"
	"                 plain read()\n"
	"Times are decimal seconds with up to 9 decimals, e.g. 0.5 or 2.25.\n"
	"\n"
	"bench runs every workload on the kernel's timerfd and on the engine,\n"
	"interleaved, and prints medians and the ratio engine/kernel next to\n"
	"each target (--quick: under 20 s; --json: the same figures as JSON;\n"
	"--filter: only the workloads whose number or name contains NAME).\n"
	"\n"
	"conform runs the conformance suite: every case on every backend\n"
	"(kernel, engine, virtual), a table with a verdict per case (ok,\n"
	"departure (the manual section), DIFFERENT, FAIL); exit status 1\n"
	"on any failure or unexplained difference.\n"
	"\n"
	"exec runs PROG with libtfd-preload.so preloaded: its timerfd_create(2)\n"
	"timers are tfd timers of the backend chosen (default: $TFD_BACKEND,\n"
	"else engine); --trace appends one line per timer operation to FILE.\n"
	"With virtual, time moves when PROG waits (tfd-preload(7)).\n";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "run", tfd_cmd_run },
	{ "bench", tfd_cmd_bench },
	{ "conform", tfd_cmd_conform },
	{ "exec", tfd_cmd_exec },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2)
		return tfd_cmd_bad("%s", "missing command");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
#ifdef TFD_GIT /* git describe of the tree built (the Makefile) */
		printf("tfd %s (git %s)\n", TFD_VERSION_STRING, TFD_GIT);
#else
		printf("tfd %s\n", TFD_VERSION_STRING);
#endif
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	return tfd_cmd_bad("unknown command '%s'", argv[1]);
}
