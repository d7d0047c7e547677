/* SPDX-License-Identifier: MIT */
/*
 * The operation checker of fuzz/opcheck.c on pseudo-random bytes from
 * fixed seeds: the deterministic version of `make fuzz`.  Each sequence
 * decodes into operations on several timers, every result compared with
 * the reference model.  On a mismatch the bytes are saved so that the
 * fuzz target replays them (build-fuzz/fuzz-ops FILE).
 */
#include "t.h"

#include "../fuzz/opcheck.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

static uint64_t rng;
static uint8_t input[2048];
static size_t input_len;

static uint64_t next_random(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

/* Keep the failing input, then fail the test with the model's report. */
static void on_mismatch(const char *report)
{
	char path[] = "/tmp/opcheck-fail.XXXXXX";
	int fd = mkstemp(path);

	fputs(report, stderr);
	if (fd >= 0) {
		if (write(fd, input, input_len) == (ssize_t)input_len)
			fprintf(stderr, "input saved: %s (replay: "
			        "build-fuzz/fuzz-ops %s)\n", path, path);
		close(fd);
	}
	t_fail(__FILE__, __LINE__, "result differs from the model");
}

/* The runner's time limit: say which operation hung (the last one). */
static void on_alarm(int sig)
{
	const char *ops = opcheck_trace();

	(void)!write(2, ops, strlen(ops));
	signal(sig, SIG_DFL);
	raise(sig);
}

/* mode: the first byte's low bits (1: virtual clock, 2: kernel backend). */
static void run(uint64_t seed, unsigned mode, unsigned long min_ops)
{
	struct opcheck_stats st;
	int64_t t0 = t_now(CLOCK_MONOTONIC);
	size_t i;

	memset(&st, 0, sizeof(st));
	signal(SIGALRM, on_alarm);
	opcheck_on_fail(on_mismatch);
	rng = seed;
	while (st.ops < min_ops) {
		input_len = 64 + next_random() % (sizeof(input) - 64);
		for (i = 0; i < input_len; i++)
			input[i] = (uint8_t)(next_random() >> 56);
		input[0] = (uint8_t)((input[0] & ~3u) | mode);
		opcheck_run(input, input_len, &st);
	}
	printf("seed %llu: %lu operations checked (%lu skipped) in %lu "
	       "sequences (%lu on the virtual clock, %lu on the kernel), %lu "
	       "clock moves; %lu reads with a count, %lu errors, %lu "
	       "ECANCELED; %lu on sets, %lu records, %lu ECANCELED; %.2f s\n",
	       (unsigned long long)seed, st.ops, st.skipped, st.runs,
	       st.virtual_runs, st.kernel_runs, st.moves, st.counts, st.errors,
	       st.cancels, st.set_ops, st.records, st.set_cancels,
	       (double)(t_now(CLOCK_MONOTONIC) - t0) / SEC);
	CHECK_GE(st.ops, min_ops);
	/* sets are driven too, and their reads return records */
	CHECK_GE(st.set_ops, min_ops / 8);
	CHECK_GE(st.records, min_ops / 200);
	if (mode != 2) /* (only the engine and the virtual clock are set) */
		CHECK_GE(st.set_cancels, 1);
	if (mode == 1)
		CHECK_EQ(st.virtual_runs, st.runs);
	if (mode == 2)
		CHECK_EQ(st.kernel_runs, st.runs);
}

TEST(opcheck_random_sequences_on_the_system_clocks)
{
	run(20070923, 0, 60000);
}

TEST(opcheck_random_sequences_on_the_virtual_clock)
{
	run(20070924, 1, 100000);
}

/* The model against Linux's timerfd itself. */
TEST(opcheck_random_sequences_on_the_kernel_backend)
{
	run(20070925, 2, 30000);
}
