/* The tfd program: arguments, output, exit status (tfd(1)). */
#include "t.h"

#include <sys/wait.h>
#include <unistd.h>

/* Run "tfd ARGS"; stdout and stderr into out/err; the exit status. */
static int tool(const char *args, char *out, size_t outn, char *err,
                size_t errn)
{
	const char *bin = getenv("TFD_TOOL");
	char cmd[1024];
	char ef[] = "/tmp/tfd-test-err.XXXXXX";
	int efd, st;
	FILE *p, *e;
	size_t n;

	CHECK(bin != NULL);
	efd = mkstemp(ef);
	CHECK(efd >= 0);
	snprintf(cmd, sizeof(cmd), "%s %s 2>%s", bin, args, ef);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	n = fread(out, 1, outn - 1, p);
	out[n] = 0;
	st = pclose(p);
	e = fdopen(efd, "r");
	n = fread(err, 1, errn - 1, e);
	err[n] = 0;
	fclose(e);
	unlink(ef);
	CHECK(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

TEST(tool_bad_arguments_exit_2_with_one_line)
{
	static const char *bad[] = {
		"",
		"run",
		"run abc",
		"run -1",
		"run 0",
		"run 1e3",
		"run 0x10",
		"run ' 1'",
		"run .",
		"run 1.0000000001",
		"run 99999999999999999999",
		"run 9223372037",
		"run 1 -2",
		"run 1 x",
		"run 1 1 0",
		"run 1 1 -3",
		"run 1 1 99999999999999999999999",
		"run 1 0 2",
		"run 1 1 2 3",
		"run --clock",
		"run --clock bogus 1",
		"run --api",
		"run --api posix 1",
		"run --bogus 1",
		"bogus",
		"-x",
	};
	char out[4096], err[4096];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		int st = tool(bad[i], out, sizeof(out), err, sizeof(err));

		CHECKF(st == 2, "'tfd %s' exited %d", bad[i], st);
		CHECKF(out[0] == 0, "'tfd %s' printed '%s'", bad[i], out);
		CHECKF(lines(err) == 1 && !strncmp(err, "tfd: ", 5),
		       "'tfd %s' said '%s'", bad[i], err);
	}
}

TEST(tool_help_and_version)
{
	char out[4096], err[4096];

	CHECK(tool("--help", out, sizeof(out), err, sizeof(err)) == 0);
	CHECK(strstr(out, "usage: tfd run") && err[0] == 0);
	CHECK(tool("--version", out, sizeof(out), err, sizeof(err)) == 0);
	CHECK(!strcmp(out, "tfd 0.1.0\n"));
}

TEST(tool_run_prints_one_line_per_read)
{
	char out[4096], err[4096], *line;
	unsigned long total = 0, n, t, i = 0;
	double el, rem, last = 0;

	CHECK(tool("run 0.05 0.02 5", out, sizeof(out), err, sizeof(err)) == 0);
	CHECK(err[0] == 0);
	line = strtok(out, "\n");
	CHECK(line && strstr(line, "elapsed") && strstr(line, "remaining"));
	while ((line = strtok(NULL, "\n"))) {
		CHECK(sscanf(line, "%lf %lu %lu %lf", &el, &n, &t, &rem) == 4);
		total += n;
		CHECK(t == total && n >= 1);
		/* Expiry k is at 0.05 + 0.02 (k - 1): never before it. */
		CHECK(el >= 0.05 + 0.02 * (double)(t - 1) - 1e-6);
		CHECK(el >= last && rem > 0 && rem <= 0.02);
		last = el;
		i++;
	}
	CHECK(total >= 5 && i >= 1 && i <= 5);
}

TEST(tool_run_other_clocks_and_revised_api)
{
	char out[4096], err[4096];

	CHECK(tool("run --clock realtime --abs --api revised 0.01 0.01 2", out,
	           sizeof(out), err, sizeof(err)) == 0);
	CHECK(lines(out) >= 2 && err[0] == 0);
	CHECK(tool("run --clock boottime 0.01", out, sizeof(out), err,
	           sizeof(err)) == 0);
	CHECK(lines(out) == 2);
	/* A library error: one line, exit 1. */
	CHECK(tool("run --clock realtime-alarm 1", out, sizeof(out), err,
	           sizeof(err)) == 1);
	CHECK(lines(err) == 1 && strstr(err, "tfd_create"));
}

TEST(tool_absolute_value_near_the_end_of_time_saturates)
{
	char out[4096], err[4096];

	/* now + VALUE is past 292 years: armed (saturated), never fires;
	 * timeout(1) ends it. */
	CHECK(tool("run --clock realtime --abs 9000000000 & p=$!; sleep 0.3; "
	           "kill $p; wait $p", out, sizeof(out), err, sizeof(err)) ==
	      128 + 15);
	CHECKF(!strstr(err, "tfd:") && lines(out) == 1, "out '%s' err '%s'", out, err);
}
