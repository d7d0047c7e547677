/* SPDX-License-Identifier: MIT */
/*
 * tfd - the command-line program.  See tfd(1).
 *
 *   tfd run [--clock C] [--abs] [--api revised|linux] [--backend NAME]
 *           VALUE [INTERVAL [COUNT]]
 *   tfd exec [--backend engine|virtual|kernel] [--trace FILE]
 *            [--allow-static] -- PROG [ARG]...
 *   tfd trace [--html OUT] [--svg OUT] FILE
 *   tfd conform [--backend NAME] [--filter SUBSTR] [--quiet]
 *   tfd bench [--quick] [--json] [--filter NAME]... [--rounds R] ...
 *   tfd help [COMMAND] | --help | --version
 *
 * Each command is a struct tfd_cmd (cmd.h) in its own file (cmd_*.c) or,
 * when it has several parts, its own folder (bench/, trace/), whose
 * header says what is where; opt.c parses their options and prints their
 * help.  Exit status: 0 success, 1 a call failed, 2 bad usage (tfd exec:
 * PROG's, or 125 to 127 as env(1)).
 */
#include "cmd.h"
#include "tfd.h"

#include <stdio.h>
#include <string.h>

static int version(void)
{
#ifdef TFD_GIT
	printf("tfd %s (git %s)\n", TFD_VERSION_STRING, TFD_GIT);
#else
	printf("tfd %s\n", TFD_VERSION_STRING);
#endif
	return 0;
}

int main(int argc, char **argv)
{
	const struct tfd_cmd *c = NULL;
	const char *a = argc > 1 ? argv[1] : NULL;

	if (!a)
		return tfd_cmd_bad("%s", "missing command");
	if (!strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "--version")) {
		if (argc > 2)
			return tfd_cmd_bad("unexpected argument '%s'", argv[2]);
		if (a[2] == 'v')
			return version();
		tfd_help(NULL);
		return 0;
	}
	if (!strcmp(a, "help")) {
		if (argc > 3)
			return tfd_cmd_bad("unexpected argument '%s'", argv[3]);
		if (argc == 3 && !(c = tfd_find_cmd(argv[2])))
			return tfd_cmd_bad("unknown command '%s'", argv[2]);
		tfd_help(argc == 3 ? c : NULL);
		return 0;
	}
	c = tfd_find_cmd(a);
	if (!c)
		return tfd_cmd_bad(a[0] == '-' ? "unknown option '%s'"
		                               : "unknown command '%s'", a);
	return c->fn(argc - 1, argv + 1);
}
