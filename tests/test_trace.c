/* SPDX-License-Identifier: MIT */
/*
 * tfd trace (tfd(1)): the summary of a trace of the examples' event loop,
 * whose counts follow from its logic, its picture, and bad input.
 */
#include "t.h"

#include <unistd.h>

static const char *tool(void)
{
	const char *t = t_tool();

	return t;
}

/* The lines of out from the one that starts with "timer N " to the next
 * blank line, into buf. */
static const char *timer_block(const char *out, int n, char *buf, size_t size)
{
	char head[32];
	const char *p, *end;

	snprintf(head, sizeof(head), "\ntimer %d ", n);
	p = strstr(out, head);
	CHECKF(p != NULL, "no timer %d in:\n%s", n, out);
	p++;
	end = strstr(p, "\n\n");
	end = end ? end + 1 : p + strlen(p); /* with its last newline */
	CHECK_LT((size_t)(end - p), size);
	memcpy(buf, p, (size_t)(end - p));
	buf[end - p] = 0;
	return buf;
}

#define HAS(block, text) CHECKF(strstr(block, text), "no '%s' in:\n%s", text, block)

/*
 * The example loop (examples/loop.c, built on glibc's timerfd calls as
 * eventloop-timerfd) on virtual time for SECS seconds, stdin /dev/null:
 * the heartbeat (every 7 s) fires floor(SECS / 7) times, the idle timeout
 * (30 s after the last input, and there is none) once, the deadline (at
 * SECS, CLOCK_REALTIME, absolute) once; each is read as it fires, so each
 * read counts 1, on time to the nanosecond.
 */
static void example_loop(int secs)
{
	const char *ex = t_examples();
	static char out[1 << 16], err[4096], b[4096];
	char dir[] = "/tmp/tfd-trace.XXXXXX", cmd[1024], want[256];
	int beats = secs / 7;

	CHECK(ex);
	CHECK(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
	         "ASAN_OPTIONS=verify_asan_link_order=0 %s exec --backend virtual "
	         "--trace %s/t -- %s/eventloop-timerfd %d </dev/null", tool(), dir,
	         ex, secs);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0, "%s: %s", cmd,
	       err);
	snprintf(want, sizeof(want), " deadline 1\n");
	CHECKF(strstr(out, want), "the loop printed '%s'", out);
	snprintf(cmd, sizeof(cmd), "%s trace %s/t --html %s/t.html --svg %s/t.svg "
	         "--chrome-json %s/t.json", tool(), dir, dir, dir, dir);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0, "%s: %s", cmd,
	       err);
	CHECKF(err[0] == 0, "stderr: %s", err);
	/* the exec lines of tfd exec and of the library, 3 creates and
	 * settimes, a read and a move per expiration, 3 closes */
	snprintf(want, sizeof(want), ": %d lines, 1 process, 3 timers, %d.000000 s "
	         "from the first line to the last\n", 2 + 6 + 2 * (beats + 2) + 3,
	         secs);
	HAS(out, want);
	snprintf(want, sizeof(want), "virtual time: %d moves\n", beats + 2);
	HAS(out, want);

	timer_block(out, 1, b, sizeof(b)); /* the heartbeat */
	HAS(b, "  CLOCK_MONOTONIC  TFD_NONBLOCK|TFD_CLOEXEC\n");
	HAS(b, "armed         1 (relative 1, absolute 0), disarmed 0, failed 0; "
	       "last 7 s, interval 7 s\n");
	snprintf(want, sizeof(want), "expirations   %d read, %d due by the end\n",
	         beats, beats);
	HAS(b, want);
	snprintf(want, sizeof(want), "reads         %d with a count, 0 EAGAIN, 0 "
	         "failed (0 ECANCELED); counts 1 x%d\n", beats, beats);
	HAS(b, want);
	snprintf(want, sizeof(want), "lateness      p50 0.0 us  p90 0.0 us  p99 "
	         "0.0 us  max 0.0 us  early 0  (of %d reads)\n", beats);
	HAS(b, want);
	snprintf(want, sizeof(want), "life          0.000000 s to %d.000000 s "
	         "(closed)\n", secs);
	HAS(b, want);

	timer_block(out, 2, b, sizeof(b)); /* idle: no input, once at 30 s */
	HAS(b, "  CLOCK_MONOTONIC  TFD_NONBLOCK|TFD_CLOEXEC\n");
	HAS(b, "last 30 s, interval 0 (one-shot)\n");
	HAS(b, "expirations   1 read, 1 due by the end\n");
	HAS(b, "counts 1 x1\n");
	HAS(b, "early 0  (of 1 reads)\n");

	timer_block(out, 3, b, sizeof(b)); /* the deadline */
	HAS(b, "  CLOCK_REALTIME  TFD_NONBLOCK|TFD_CLOEXEC\n");
	HAS(b, "armed         1 (relative 0, absolute 1), disarmed 0, failed 0; "
	       "last at ");
	HAS(b, "expirations   1 read, 1 due by the end\n");
	HAS(b, "lateness      p50 0.0 us  p90 0.0 us  p99 0.0 us  max 0.0 us  "
	       "early 0  (of 1 reads)\n");
	CHECK(!strstr(out, "\ntimer 4 "));

	/* the picture: a lane per timer, named by its program, and one for
	 * the virtual clock, with a time axis in seconds */
	snprintf(cmd, sizeof(cmd), "grep -c 'class=\"name\">eventloop-timerfd "
	         "[0-9]* \xc2\xb7 fd [0-9]*<' %s/t.html"
	         " && grep -c 'class=\"name\">virtual clock<' %s/t.html && "
	         "grep -c '>[0-9]* s</text>' %s/t.html && "
	         "head -c 40 %s/t.svg && grep -c '</svg>' %s/t.svg",
	         dir, dir, dir, dir, dir);
	CHECK_EQ(t_sh(cmd, out, sizeof(out), err, sizeof(err)), 0);
	CHECKF(!strncmp(out, "3\n1\n", 4) &&
	               strstr(out, "\n<svg xmlns=\"http://www.w3.org/2000/svg\"") &&
	               !strcmp(out + strlen(out) - 2, "1\n"),
	       "the pictures: '%s'", out);
	/* the events: the process named by its program, a read per beat */
	snprintf(cmd, sizeof(cmd), "grep -c '\"process_name\",.*\"name\":"
	         "\"eventloop-timerfd\"}' %s/t.json && grep -c "
	         "'\"name\":\"read\",\"pid\":[0-9]*,\"tid\":1,' %s/t.json",
	         dir, dir);
	CHECK_EQ(t_sh(cmd, out, sizeof(out), err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "1\n%d\n", beats);
	CHECKF(!strcmp(out, want), "the events: '%s', not '%s'", out, want);
	/* a mark per read and per deadline while they are 3 px apart or
	 * more; an hour of heartbeats is a band that says how many */
	if (beats < 300) {
		snprintf(cmd, sizeof(cmd), "grep -c '<circle[^>]*class=\"read\"' "
		         "%s/t.html && grep -c '<line[^>]*class=\"due\"' %s/t.html",
		         dir, dir);
		snprintf(want, sizeof(want), "%d\n%d\n", beats + 2, beats + 2);
	} else {
		snprintf(cmd, sizeof(cmd), "grep -o '>[0-9]* reads, too close to "
		         "draw apart<' %s/t.html && grep -c '<circle[^>]*class="
		         "\"read\"' %s/t.html", dir, dir);
		snprintf(want, sizeof(want), ">%d reads, too close to draw apart<\n"
		         "2\n", beats);
	}
	t_sh(cmd, out, sizeof(out), err, sizeof(err));
	CHECKF(!strcmp(out, want), "%s: '%s', not '%s'", cmd, out, want);
	snprintf(cmd, sizeof(cmd), "rm -r %s", dir);
	CHECK_EQ(t_sh(cmd, out, sizeof(out), err, sizeof(err)), 0);
}

TEST(trace_of_the_example_loop_for_a_minute)
{
	example_loop(60);
}

TEST(trace_of_the_example_loop_for_an_hour)
{
	example_loop(3600);
}

/* The count of n in s. */
static int count(const char *s, const char *n)
{
	int k = 0;

	for (; (s = strstr(s, n)); s += strlen(n))
		k++;
	return k;
}

/*
 * Programs that a shell under tfd exec starts are named by their program,
 * not "pid N": the library writes "exec(PROG)" before a process's first
 * line.  Two example loops of a second, side by side.
 */
TEST(trace_names_the_programs_a_shell_starts)
{
	const char *ex = t_examples();
	static char out[1 << 16], err[4096];
	char dir[] = "/tmp/tfd-trace.XXXXXX", cmd[1024];

	CHECK(ex != NULL && mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
	         "ASAN_OPTIONS=verify_asan_link_order=0 %s exec --trace %s/t -- "
	         "sh -c '%s/eventloop-timerfd 1 & %s/eventloop-timerfd 1; wait' "
	         "</dev/null", tool(), dir, ex, ex);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0, "%s: %s", cmd,
	       err);
	snprintf(cmd, sizeof(cmd), "grep -c ' - exec(sh) = 0$' %s/t && "
	         "grep -c ' - exec(%s/eventloop-timerfd) = 0$' %s/t", dir, ex,
	         dir);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0 &&
	               !strcmp(out, "1\n2\n"),
	       "exec lines: '%s'", out);
	snprintf(cmd, sizeof(cmd), "%s trace %s/t --svg %s/t.svg --chrome-json "
	         "%s/t.json && cat %s/t.svg %s/t.json", tool(), dir, dir, dir, dir,
	         dir);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0, "%s: %s", cmd,
	       err);
	/* the summary's totals of each process, the picture's two blocks and
	 * each lane, the viewer's two processes */
	CHECKF(count(out, " eventloop-timerfd: 3 timers") == 2, "%s", out);
	CHECKF(count(out, ">eventloop-timerfd ") == 2 + 6, "%s", out);
	CHECKF(count(out, "\"name\":\"eventloop-timerfd\"}") == 2, "%s", out);
	CHECKF(!strstr(out, ">pid ") && !strstr(out, "\"name\":\"pid "), "%s",
	       out);
	snprintf(cmd, sizeof(cmd), "rm -r %s", dir);
	CHECK_EQ(t_sh(cmd, out, sizeof(out), err, sizeof(err)), 0);
}

/* A new file from the template file (mkstemp), holding content. */
static void write_trace(char *file, const char *content, size_t len)
{
	int fd = mkstemp(file);

	CHECK_GE(fd, 0);
	CHECK_EQ(write(fd, content, len), (ssize_t)len);
	close(fd);
}

/* A trace that cannot be read is one line on stderr, exit 1 (2 is for
 * usage); what the line holds is shown only when it is text. */
static void bad_trace(const char *content, size_t len, const char *what,
                      const char *expect)
{
	char file[] = "/tmp/tfd-trace-bad.XXXXXX", cmd[512];
	static char out[1 << 16], err[4096];
	int st;

	write_trace(file, content, len);
	snprintf(cmd, sizeof(cmd), "%s trace %s", tool(), file);
	st = t_sh(cmd, out, sizeof(out), err, sizeof(err));
	unlink(file);
	CHECKF(st == 1, "%s: exit %d", what, st);
	CHECKF(out[0] == 0, "%s: printed '%.100s'", what, out);
	CHECKF(!strncmp(err, "tfd: trace: ", 12) && strchr(err, '\n') &&
	               strchr(err, '\n')[1] == 0 && strstr(err, expect),
	       "%s: said '%s'", what, err);
}

TEST(trace_bad_input_is_one_line_exit_1)
{
	static const char good[] =
		"1.000000000 7 3 timerfd_create(CLOCK_MONOTONIC, 0) = 3\n";
	static char huge[200000];
	static const struct {
		const char *what, *text, *expect;
	} bad[] = {
		{ "garbage", "hello world\n", ":1: not a trace line" },
		{ "garbage after a good line", NULL, ":2: not a trace line" },
		{ "no result", "1.000000000 7 3 close(3)\n", ":1:" },
		{ "no call", "1.000000000 7 3 = 0\n", ":1:" },
		{ "bad time", "1.0 7 3 close(3) = 0\n", ":1:" },
		{ "negative time", "-1.000000000 7 3 close(3) = 0\n", ":1:" },
		{ "bad pid", "1.000000000 x 3 close(3) = 0\n", ":1:" },
		{ "bad fd", "1.000000000 7 x close(3) = 0\n", ":1:" },
		{ "bad result", "1.000000000 7 3 close(3) = zero\n", ":1:" },
		{ "huge number", "99999999999999999999.000000000 7 3 close(3) = 0\n",
		  ":1:" },
		{ "blank line", "\n", ":1:" },
		{ "read without a count",
		  "1.000000000 7 3 timerfd_create(CLOCK_MONOTONIC, 0) = 3\n"
		  "1.000000000 7 3 read(3, 8) = 8\n", ":2:" },
		{ "settime cut short",
		  "1.000000000 7 3 timerfd_create(CLOCK_MONOTONIC, 0) = 3\n"
		  "1.000000000 7 3 timerfd_settime(3, 0, {1.0 = 0\n", ":2:" },
	};
	char buf[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		const char *t = bad[i].text;

		if (!t) {
			snprintf(buf, sizeof(buf), "%s%s", good, "zzz\n");
			t = buf;
		}
		bad_trace(t, strlen(t), bad[i].what, bad[i].expect);
	}
	bad_trace("1.000000000 7 3 cl\0se(3) = 0\n", 29, "a NUL byte",
	          ":1: not a trace line (TIME PID FD CALL(ARGS) = RESULT): "
	          "binary data\n");
	bad_trace("\xff\xfe\x01\x02\n", 5, "binary",
	          ":1: not a trace line (TIME PID FD CALL(ARGS) = RESULT): "
	          "binary data\n");
	/* a terminal's escape, in a line or in the names it would show */
	bad_trace("1.000000000 7 3 timerfd_create(\x1b[2J, 0) = 3\n", 44,
	          "an escape in a clock's name", ":1: not a trace line "
	          "(TIME PID FD CALL(ARGS) = RESULT): binary data\n");
	bad_trace("hello\x1b]0;title\x07\n", 16, "an escape", ":1: not a "
	          "trace line (TIME PID FD CALL(ARGS) = RESULT): binary data\n");
	/* a line cut up by the parser is shown whole */
	bad_trace("1.000000000 7 3 close(3) = zero\n", 32, "cut up",
	          ": '1.000000000 7 3 close(3) = zero'\n");
	memset(huge, 'x', sizeof(huge) - 2);
	huge[sizeof(huge) - 2] = '\n';
	bad_trace(huge, sizeof(huge) - 1, "a huge line", ":1:");
	{
		char out[256], err[256], cmd[256];

		snprintf(cmd, sizeof(cmd), "%s trace /nonexistent/trace", tool());
		CHECK_EQ(t_sh(cmd, out, sizeof(out), err, sizeof(err)), 1);
		CHECKF(!strcmp(err, "tfd: trace: /nonexistent/trace: No such "
		                    "file or directory\n"),
		       "stderr: %s", err);
		CHECK_EQ(out[0], 0);
		snprintf(cmd, sizeof(cmd), "%s trace - </dev/null", tool());
		CHECK_EQ(t_sh(cmd, out, sizeof(out), err, sizeof(err)), 0);
		CHECKF(strstr(out, "no timer in the trace\n") && err[0] == 0,
		       "'%s' '%s'", out, err);
	}
}

/* A trace's arithmetic on lines written by hand: an absolute periodic
 * timer armed 20 s in the past (the seed's case: 21 at once), reads late
 * and early, EAGAIN, a dup that outlives the close of the first number,
 * a number reused by another timer, times shown as they were given. */
TEST(trace_summary_of_lines_written_by_hand)
{
	static const char lines[] =
		"10.000000000 7 3 timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK) = 3\n"
		"10.000000000 7 3 timerfd_settime(3, TFD_TIMER_ABSTIME, "
		"{-10.000000000, 1.000000000}, NULL) = -1 EINVAL\n"
		"10.000000000 7 3 timerfd_settime(3, 0, {{-1, 100000000}, {0, -1}}, "
		"NULL) = -1 EINVAL\n"
		"10.000000000 7 3 timerfd_settime(3, TFD_TIMER_ABSTIME, "
		"{-10.000000000, 1.000000000}, NULL) = -1 EINVAL\n"
		/* absolute, 20 s ago, every 1 s: next in 1 s, 21 due now */
		"10.000000000 7 3 timerfd_settime(3, TFD_TIMER_ABSTIME, "
		"{0.500000000, 1.000000000}, NULL) [next 1.000000000] = 0\n"
		"10.000100000 7 3 read(3, 8) [count 21] = 8\n"     /* 100 us */
		"10.500000000 7 3 read(3, 8) [count 0] = -1 EAGAIN\n"
		"11.000300000 7 3 read(3, 8) [count 1] = 8\n"      /* 300 us */
		"11.500000000 7 3 dup(3) = 9\n"
		"11.600000000 7 3 close(3) = 0\n"
		"12.000000000 7 9 read(3, 8) [count 2] = 8\n"      /* early */
		"12.100000000 7 9 timerfd_gettime(9, {0.900000000, 1.000000000}) = 0\n"
		"12.200000000 7 9 timerfd_settime(9, 0, {0.000000000, 0.000000000}, "
		"NULL) [next 0.000000000] = 0\n"
		"12.300000000 7 3 timerfd_create(CLOCK_BOOTTIME, 0) = 3\n"
		"12.400000000 7 9 close(9) = 0\n"
		"12.500000000 7 - virtual-advance(+1.000000000) = 0\n";
	char file[] = "/tmp/tfd-trace-hand.XXXXXX", cmd[512];
	static char out[1 << 16], err[4096], b[4096];

	write_trace(file, lines, sizeof(lines) - 1);
	snprintf(cmd, sizeof(cmd), "%s trace %s", tool(), file);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0, "%s", err);
	unlink(file);
	HAS(out, ": 16 lines, 1 process, 2 timers, 2.500000 s from");
	HAS(out, "virtual time: 1 moves\n");
	timer_block(out, 1, b, sizeof(b));
	HAS(b, "timer 1  pid 7  fd 3  CLOCK_MONOTONIC  TFD_NONBLOCK\n");
	HAS(b, "life          0.000000 s to 2.400000 s (closed)\n");
	HAS(b, "armed         1 (relative 0, absolute 1), disarmed 1, failed 3;"
	       " last at 0.500000000 s (absolute), interval 1 s\n");
	/* 21 at once, then 11.0, 12.0 by the disarm at 12.2 */
	HAS(b, "expirations   24 read, 23 due by the end\n");
	HAS(b, "reads         3 with a count, 1 EAGAIN, 0 failed (0 ECANCELED);"
	       " counts 21 x1, 1 x1, 2 x1\n");
	/* 100 us, 300 us, and the count of 2 at 12.0 includes the expiry
	 * due at 13.0: 1 s early */
	HAS(b, "lateness      p50 100.0 us  p90 300.0 us  p99 300.0 us  max "
	       "300.0 us  early 1  (of 3 reads)\n");
	HAS(b, "other         1 queries, 1 duplicates\n");
	timer_block(out, 2, b, sizeof(b));
	HAS(b, "timer 2  pid 7  fd 3  CLOCK_BOOTTIME  0\n");
	HAS(b, "(still open)\n");
}

/*
 * Found while splitting tools/cmd_trace.c: a time in the arguments is a
 * timespec as the preload wrote it, whose seconds may be anything up to
 * INT64_MAX; tfd trace read at most about 292 years of them (what fits in
 * int64_t nanoseconds) and called any line with more "not a trace line".
 * The engine's own clock-set detector arms such a timer (absolute, at
 * 2^40 s) in every program that links libtfd, so `tfd exec --trace F --
 * tfd run 1` gave a trace that tfd trace refused.  Such times are now
 * read as "292 years or more" (INT64_MAX ns): a deadline never reached.
 */
TEST(found_trace_with_a_time_beyond_292_years)
{
	static const char lines[] =
		"10.000000000 7 3 timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC) = 3\n"
		"10.000000000 7 3 timerfd_settime(3, TFD_TIMER_ABSTIME|"
		"TFD_TIMER_CANCEL_ON_SET, {1099511627776.000000000, 0.000000000}, "
		"NULL) [next 1097000000000.500000000] = 0\n"
		"10.000000000 7 4 timerfd_create(CLOCK_MONOTONIC, 0) = 4\n"
		"10.000000000 7 4 timerfd_settime(4, 0, {9223372036854775807."
		"999999999, 9223372036854775807.999999999}, NULL) [next "
		"9223372036854775807.999999999] = 0\n"
		"11.000000000 7 4 read(4, 8) [count 0] = -1 EAGAIN\n"
		"12.000000000 7 - virtual-advance(+9223372036854775807.999999999)"
		" = 0\n";
	char file[] = "/tmp/tfd-trace-far.XXXXXX", cmd[512];
	static char out[1 << 16], err[4096], b[4096];

	write_trace(file, lines, sizeof(lines) - 1);
	snprintf(cmd, sizeof(cmd), "%s trace %s --svg %s.svg", tool(), file,
	         file);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0, "%s", err);
	unlink(file);
	snprintf(cmd, sizeof(cmd), "%s.svg", file);
	CHECK_EQ(unlink(cmd), 0);
	HAS(out, ": 6 lines, 1 process, 2 timers, 2.000000 s from");
	timer_block(out, 1, b, sizeof(b));
	HAS(b, "armed         1 (relative 0, absolute 1), disarmed 0, failed 0;"
	       " last at 292 years or more (absolute), interval 0 (one-shot)\n");
	HAS(b, "expirations   0 read, 0 due by the end\n");
	timer_block(out, 2, b, sizeof(b));
	HAS(b, "armed         1 (relative 1, absolute 0), disarmed 0, failed 0;"
	       " last 292 years or more, interval 292 years or more\n");
	HAS(b, "expirations   0 read, 0 due by the end\n");
	HAS(b, "reads         0 with a count, 1 EAGAIN");
}
