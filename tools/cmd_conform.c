/* SPDX-License-Identifier: MIT */
/*
 * cmd_conform.c - tfd conform: the conformance suite (tests/conformance/),
 * every case on every backend, side by side.  See tfd(1).
 *
 *   tfd conform [--backend NAME] [--filter SUBSTR] [--quiet]
 *   tfd conform --errnos | --departures
 *
 * Exit status: 0 when every row passes or is a documented departure, 1 on
 * an expectation failure or an unexplained difference, 2 on bad usage.
 * --errnos and --departures print what the traceability check
 * (tests/conformance/trace.sh) compares with the manual pages.
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

int tfd_cmd_conform(int argc, char **argv)
{
	const char *backend = NULL, *filter = NULL;
	unsigned flags = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--errnos") && argc == 2) {
			conf_list_errnos(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--departures") && argc == 2) {
			conf_list_departures(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--quiet")) {
			flags |= CONF_QUIET;
		} else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
			backend = argv[++i];
			if (!known_backend(backend))
				return tfd_cmd_bad("unknown backend '%s'",
				                   backend);
		} else if (!strcmp(argv[i], "--filter") && i + 1 < argc) {
			filter = argv[++i];
		} else {
			return tfd_cmd_bad("conform: bad argument '%s'",
			                   argv[i]);
		}
	}
	return conf_run(stdout, backend, filter, flags) ? 1 : 0;
}
