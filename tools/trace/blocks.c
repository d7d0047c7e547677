/* SPDX-License-Identifier: MIT */
/*
 * blocks.c - what tfd trace's picture (svg.c) draws together (trace.h):
 * the moves of virtual time, each process's timers up to MAXPROCS
 * processes (in the order of their first timer), and the timers of all
 * the others in one block; and the picture as one SVG (--svg), its
 * blocks one under the other.
 */
#include "trace.h"

#include <stdlib.h>

#define MAXPROCS 16 /* blocks of one process; beyond, one for the rest */

const char *trace_proc_name(const struct trace *tr, int pid, char *buf,
                             size_t n)
{
	const char *prog = trace_program_name(tr, pid);

	if (prog)
		snprintf(buf, n, "%.40s %d", prog, pid);
	else
		snprintf(buf, n, "pid %d", pid);
	return buf;
}

size_t trace_blocks(struct trace *tr, struct block **out)
{
	struct block *b;
	struct timer *tm;
	int *pids;
	size_t np = trace_procs(tr, &pids), nb = 0, i, cap;

	cap = (np < MAXPROCS ? np : MAXPROCS) + 2;
	b = calloc(cap, sizeof(*b));
	if (!b) {
		fprintf(stderr, "tfd: trace: out of memory\n");
		exit(1);
	}
	if (tr->nadv) {
		b[nb].vclock = 1;
		snprintf(b[nb++].name, sizeof(b->name), "virtual clock");
	}
	for (i = 0; i < np; i++) {
		struct block *k = &b[nb++];
		size_t c = 0;

		k->pid = i < MAXPROCS ? pids[i] : -1;
		if (i == MAXPROCS)
			snprintf(k->name, sizeof(k->name), "%zu other processes",
			         np - MAXPROCS);
		else
			trace_proc_name(tr, pids[i], k->name, sizeof(k->name));
		for (tm = tr->first; tm; tm = tm->next) {
			int in = k->pid >= 0 ? tm->pid == k->pid : 1;
			size_t j;

			for (j = 0; k->pid < 0 && j < MAXPROCS && in; j++)
				in = tm->pid != pids[j];
			if (!in)
				continue;
			k->tm = trace_grow(k->tm, &c, k->n, sizeof(*k->tm));
			k->tm[k->n++] = tm;
		}
		if (i == MAXPROCS) /* it holds all the others */
			break;
	}
	free(pids);
	*out = b;
	return nb;
}

void trace_blocks_free(struct block *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(b[i].tm);
	free(b);
}

const char trace_svg_css[] =
	".even{fill:#fafafa}.odd{fill:#f0f2f5}"
	".block{font-size:15px;font-weight:bold}"
	".name{font-size:13px;font-weight:bold}.what{font-size:11px;"
	"fill:#555}.tick{font-size:11px;fill:#444}.axis{stroke:#444}"
	".grid{stroke:#ddd}.life{stroke:#999;stroke-width:1}"
	".lifelbl{font-size:11px;fill:#777}.armed{fill:#bcd3f2}.arm{fill:#2b6cb0}"
	".armlbl{font-size:11px;fill:#2b6cb0}.due{stroke:#dd8a00;"
	"stroke-width:1.5}.duelbl{font-size:11px;fill:#b36b00}"
	".dueband{fill:#f6d7a7}.read{fill:#1a365d}.readlbl{font-size:11px;"
	"fill:#1a365d}.eagain{fill:#fff;stroke:#1a365d}"
	".eagainlbl{font-size:11px;fill:#555}.rfail{fill:#c53030}"
	".rfaillbl{font-size:11px;fill:#c53030}.late{stroke:#c53030;"
	"stroke-width:2}.disarm{stroke:#c05621;stroke-width:2;fill:none}"
	".disarmlbl{font-size:11px;fill:#c05621}.close{stroke:#222;"
	"stroke-width:2}.vadv{stroke:#6b46c1}.vband{fill:#b7a4e6}.vlbl{font-size:11px;"
	"fill:#6b46c1}.title{font-size:12px;fill:#444}";

void trace_svg(struct trace *tr, FILE *out)
{
	struct block *b;
	size_t n = trace_blocks(tr, &b), i;
	double h = 30, y;

	for (i = 0; i < n; i++)
		h += trace_block_height(&b[i]);
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100%%\" "
	        "style=\"height:auto\" "
	        "viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\">\n"
	        "<style>%s</style>\n", trace_svg_width, h, trace_svg_css);
	fprintf(out, "<text x=\"10\" y=\"20\" class=\"title\">time since the "
	        "first line of the trace (the program's %sCLOCK_MONOTONIC)"
	        "</text>\n", tr->nadv ? "virtual " : "");
	for (i = 0, y = 30; i < n; y += trace_block_height(&b[i]), i++) {
		fprintf(out, "<g transform=\"translate(0,%.0f)\">\n", y);
		trace_block_draw(tr, out, &b[i]);
		fprintf(out, "</g>\n");
	}
	fprintf(out, "</svg>\n");
	trace_blocks_free(b, n);
}
