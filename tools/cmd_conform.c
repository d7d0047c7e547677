/* SPDX-License-Identifier: MIT */
/*
 * cmd_conform.c - tfd conform: the conformance suite (conform/),
 * every case on every backend, side by side.  See tfd(1).
 *
 *   tfd conform [--backend NAME] [--filter SUBSTR] [--quiet]
 *   tfd conform --errnos | --departures
 *
 * Exit status: 0 when every row passes or is a documented departure, 1 on
 * an expectation failure or an unexplained difference, 2 on bad usage.
 * --errnos and --departures print what the traceability check
 * (tests/traceability.sh) compares with the manual pages.
 */
#include "cmd.h"
#include "conform.h"
#include "tfd.h"

#include <stdio.h>
#include <string.h>

static int known_backend(const char *name)
{
	size_t i;

	for (i = 0; i < conf_ncolumns; i++)
		if (!strcmp(name, conf_columns[i].backend))
			return 1;
	return 0;
}

/* The cases whose name contains filter. */
static size_t matching(const char *filter)
{
	size_t i, n = 0;

	for (i = 0; i < conf_ncases; i++)
		n += !filter || strstr(conf_cases[i].name, filter) != NULL;
	return n;
}

enum { O_BACKEND, O_FILTER, O_QUIET, O_ERRNOS, O_DEPARTURES };
static const struct tfd_opt opts[] = {
	[O_BACKEND] = { "backend", "NAME",
	                "run on one backend only: kernel, engine or virtual" },
	[O_FILTER] = { "filter", "SUBSTR",
	               "only the cases whose name contains SUBSTR\n"
	               "(names are GROUP.WHAT, e.g. settime.abstime_past)" },
	[O_QUIET] = { "quiet", NULL, "print only failing rows and the summary" },
	[O_ERRNOS] = { "errnos", NULL,
	               "list, without running anything, each error a case\n"
	               "expects: FUNCTION ERRNO CASE (alone)" },
	[O_DEPARTURES] = { "departures", NULL,
	                   "list the departure rows: CASE|PAGE SECTION (alone)" },
	{ NULL, NULL, NULL },
};

static int tfd_cmd_conform(int argc, char **argv);

const struct tfd_cmd tfd_conform_cmd = {
	.name = "conform",
	.operands = "",
	.summary = "run the conformance suite on every backend",
	.text = "Runs every case of the conformance suite on every backend\n"
	        "(kernel, engine, virtual) and prints a table with a verdict per\n"
	        "case: ok, departure (the manual section), DIFFERENT, FAIL.\n"
	        "Exit status 1 on any failure or unexplained difference.",
	.opts = opts,
	.fn = tfd_cmd_conform,
};

static int tfd_cmd_conform(int argc, char **argv)
{
	const char *backend = NULL, *filter = NULL;
	unsigned flags = 0;
	struct tfd_args a;
	int o, list = -1, others = 0;

	tfd_args_init(&a, &tfd_conform_cmd, argc, argv);
	while ((o = tfd_opt_next(&a)) >= 0) {
		switch (o) {
		case O_ERRNOS:
		case O_DEPARTURES:
			if (list >= 0 && list != o)
				return tfd_cmd_bad("%s", "--errnos and "
				                   "--departures go alone");
			list = o;
			break;
		case O_QUIET:
			flags |= CONF_QUIET;
			others = 1;
			break;
		case O_BACKEND:
			backend = a.val;
			if (!known_backend(backend))
				return tfd_cmd_bad("unknown backend '%s'",
				                   backend);
			others = 1;
			break;
		case O_FILTER:
			filter = a.val;
			others = 1;
			break;
		}
	}
	if (o != TFD_OPT_END)
		return tfd_opt_status(o);
	if (a.argc > 0)
		return tfd_cmd_bad("unexpected argument '%s'", a.argv[0]);
	if (list >= 0 && others)
		return tfd_cmd_bad("%s", "--errnos and --departures go alone");
	if (list == O_ERRNOS) {
		conf_list_errnos(stdout);
		return 0;
	}
	if (list == O_DEPARTURES) {
		conf_list_departures(stdout);
		return 0;
	}
	if (matching(filter) == 0)
		return tfd_cmd_bad("no case matches --filter '%s'", filter);
	return conf_run(stdout, backend, filter, flags) ? 1 : 0;
}
