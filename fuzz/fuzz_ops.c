/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ops.c - the libFuzzer target: each input is a sequence of
 * operations checked against the model (opcheck.h).  `make fuzz` builds it
 * with clang -fsanitize=fuzzer,address,undefined and runs it on
 * fuzz/corpus for FUZZ_SECONDS.
 */
#include "opcheck.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct opcheck_stats stats;

static void report(void)
{
	fprintf(stderr, "opcheck: %lu operations checked (%lu skipped) in %lu "
	        "sequences (%lu on the virtual clock, %lu on the kernel), %lu "
	        "clock moves; %lu reads with a count, %lu errors, %lu "
	        "ECANCELED; %lu on sets, %lu records, %lu ECANCELED\n",
	        stats.ops, stats.skipped, stats.runs, stats.virtual_runs,
	        stats.kernel_runs, stats.moves, stats.counts, stats.errors,
	        stats.cancels, stats.set_ops, stats.records,
	        stats.set_cancels);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	atexit(report);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	opcheck_run(data, size, &stats);
	return 0;
}
