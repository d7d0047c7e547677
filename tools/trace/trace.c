/* SPDX-License-Identifier: MIT */
/*
 * trace.c - tfd trace, the command (trace.h says what is where): its
 * options, the trace it reads, the text on standard output and the
 * pictures it writes.
 */
#include "cmd.h"
#include "trace.h"

#include <errno.h>
#include <string.h>

enum { O_HTML, O_SVG };
static const struct tfd_opt opts[] = {
	[O_HTML] = { "html", "OUT",
	             "also write the timeline as an HTML page to OUT" },
	[O_SVG] = { "svg", "OUT", "also write the timeline as SVG to OUT" },
	{ NULL, NULL, NULL },
};

static int tfd_cmd_trace(int argc, char **argv);

const struct tfd_cmd tfd_trace_cmd = {
	.name = "trace",
	.operands = "FILE",
	.summary = "summarize and draw the trace of tfd exec --trace",
	.text = "Reads FILE, the lines of tfd exec --trace FILE (- reads\n"
	        "standard input), and prints per timer: its clock and flags,\n"
	        "how often it was armed and disarmed, its expirations (read, and\n"
	        "due by the model), its reads and the counts they returned, and\n"
	        "the lateness of each read against the deadline armed (p50, p90,\n"
	        "p99, max; early: before the deadline, a bug).  --html and --svg\n"
	        "draw a timeline: one lane per timer with its arms, deadlines,\n"
	        "reads and lateness, on a time axis.  Exit status 1 when FILE\n"
	        "cannot be read or holds a line that is not a trace line (the\n"
	        "message gives its number), or OUT cannot be written.",
	.opts = opts,
	.fn = tfd_cmd_trace,
};

static int write_picture(struct trace *tr, const char *file, int html)
{
	FILE *f = fopen(file, "w");

	if (!f) {
		fprintf(stderr, "tfd: trace: %s: %s\n", file, strerror(errno));
		return 1;
	}
	trace_picture(tr, f, html);
	if (fclose(f) != 0) {
		fprintf(stderr, "tfd: trace: %s: %s\n", file, strerror(errno));
		return 1;
	}
	return 0;
}

static int tfd_cmd_trace(int argc, char **argv)
{
	const char *html = NULL, *svg = NULL;
	struct tfd_args a;
	struct trace tr;
	int o, r;

	tfd_args_init(&a, &tfd_trace_cmd, argc, argv);
	while ((o = tfd_opt_next(&a)) >= 0) {
		if (!*a.val)
			return tfd_cmd_bad("--%s needs a file name",
			                   opts[o].name);
		if (o == O_HTML)
			html = a.val;
		else
			svg = a.val;
	}
	if (o != TFD_OPT_END)
		return tfd_opt_status(o);
	if (a.argc == 0)
		return tfd_cmd_bad("%s", "missing FILE: the trace to read");
	if (a.argc > 1)
		return tfd_cmd_bad("unexpected argument '%s'", a.argv[1]);
	r = trace_read(&tr, a.argv[0]);
	if (r == 0) {
		trace_summary(&tr, stdout);
		if (html)
			r = write_picture(&tr, html, 1);
		if (svg && r == 0)
			r = write_picture(&tr, svg, 0);
	}
	trace_free(&tr);
	return r;
}
