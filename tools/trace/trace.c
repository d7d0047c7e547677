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

enum { O_HTML, O_SVG, O_CHROME };
static const struct tfd_opt opts[] = {
	[O_HTML] = { "html", "OUT",
	             "also write the timeline as an HTML page to OUT" },
	[O_SVG] = { "svg", "OUT", "also write the timeline as SVG to OUT" },
	[O_CHROME] = { "chrome-json", "OUT",
	               "also write the events as Chrome trace-event JSON\n"
	               "to OUT, for a trace viewer (Perfetto)" },
	{ NULL, NULL, NULL },
};

static int tfd_cmd_trace(int argc, char **argv);

const struct tfd_cmd tfd_trace_cmd = {
	.name = "trace",
	.operands = "FILE",
	.summary = "summarize and draw the trace of tfd exec --trace",
	.text = "Reads FILE, the lines of tfd exec --trace FILE (- reads\n"
	        "standard input), and prints what all the timers add up to, then\n"
	        "per timer: its clock and flags, how often it was armed and\n"
	        "disarmed, its expirations (read, and due by the model), its\n"
	        "reads and the counts they returned, and the lateness of each\n"
	        "read against the deadline armed (p50, p90, p99, max; early:\n"
	        "before the deadline, a bug).  --html and --svg draw a timeline\n"
	        "that fits the window: a block per process, a lane per timer\n"
	        "with its arms, deadlines, reads and lateness (a process's timers\n"
	        "beyond 16 folded into one lane); --chrome-json writes the\n"
	        "same for a trace viewer.  Exit status 1 when FILE cannot be\n"
	        "read or holds a line that is not a trace line (the message\n"
	        "gives its number), or OUT cannot be written.",
	.opts = opts,
	.fn = tfd_cmd_trace,
};

/* OUT written as option o says: 0, or 1 with the one-line error. */
static int write_out(struct trace *tr, const char *file, int o)
{
	char shown[128];
	FILE *f = fopen(file, "w");
	int bad;

	if (!f) {
		fprintf(stderr, "tfd: trace: %s: %s\n",
		        tfd_printable(file, shown, sizeof(shown)),
		        strerror(errno));
		return 1;
	}
	if (o == O_CHROME)
		trace_chrome(tr, f);
	else if (o == O_HTML)
		trace_page(tr, f);
	else
		trace_svg(tr, f);
	bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		fprintf(stderr, "tfd: trace: %s: %s\n",
		        tfd_printable(file, shown, sizeof(shown)),
		        strerror(bad ? EIO : errno));
		return 1;
	}
	return 0;
}

static int tfd_cmd_trace(int argc, char **argv)
{
	const char *out[3] = { NULL, NULL, NULL };
	struct tfd_args a;
	struct trace tr;
	int o, r, i;

	tfd_args_init(&a, &tfd_trace_cmd, argc, argv);
	while ((o = tfd_opt_next(&a)) >= 0) {
		if (!*a.val)
			return tfd_cmd_bad("--%s needs a file name",
			                   opts[o].name);
		out[o] = a.val;
	}
	if (o != TFD_OPT_END)
		return tfd_opt_status(o);
	if (a.argc == 0)
		return tfd_cmd_bad("%s", "missing FILE: the trace to read");
	if (a.argc > 1)
		return tfd_cmd_bad("unexpected argument '%s'", a.argv[1]);
	r = trace_read(&tr, a.argv[0]);
	if (r == 0)
		trace_summary(&tr, stdout);
	for (i = O_HTML; i <= O_CHROME && r == 0; i++)
		if (out[i])
			r = write_out(&tr, out[i], i);
	trace_free(&tr);
	return r;
}
