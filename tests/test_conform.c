/* SPDX-License-Identifier: MIT */
/*
 * The conformance suite (conform/) on every backend, one test
 * per group of cases; the traceability of the manual's ERRORS sections;
 * the backend chosen by TFD_BACKEND; the seed program on the kernel
 * backend.
 */
#include "t.h"

#include "conform.h"
#include "tfd.h"

#include <sys/wait.h>
#include <unistd.h>

static const char *const groups[] = {
	"create.", "settime.", "gettime.", "read.",    "poll.",  "fd.",
	"close.",  "timerfd.", "backend.", "vclock.", "clockset.", "sets.",
};

static void group(const char *prefix)
{
	CHECKF(conf_run(stdout, NULL, prefix, CONF_QUIET) == 0,
	       "conformance cases %s* failed (table above)", prefix);
}

TEST_LIMIT(conformance_create, 60) { group("create."); }
TEST_LIMIT(conformance_settime, 60) { group("settime."); }
TEST_LIMIT(conformance_gettime, 60) { group("gettime."); }
TEST_LIMIT(conformance_read, 60) { group("read."); }
TEST_LIMIT(conformance_poll, 60) { group("poll."); }
TEST_LIMIT(conformance_fd, 60) { group("fd."); }
TEST_LIMIT(conformance_close, 60) { group("close."); }
TEST_LIMIT(conformance_timerfd, 60) { group("timerfd."); }
TEST_LIMIT(conformance_backend, 60) { group("backend."); }
TEST_LIMIT(conformance_vclock, 60) { group("vclock."); }
TEST_LIMIT(conformance_clockset, 60) { group("clockset."); }
TEST_LIMIT(conformance_sets, 60) { group("sets."); }

/* Every case is in one of the groups above, so every case runs; and the
 * table is well formed. */
TEST(conformance_every_case_in_a_group)
{
	size_t i, k, n = 0;

	CHECK_EQ(conf_check_table(stdout), 0);
	for (i = 0; i < conf_ncases; i++) {
		for (k = 0; k < sizeof(groups) / sizeof(*groups); k++)
			if (!strncmp(conf_cases[i].name, groups[k],
			             strlen(groups[k])))
				break;
		CHECKF(k < sizeof(groups) / sizeof(*groups),
		       "case %s is in no group", conf_cases[i].name);
		n++;
	}
	CHECK_GE(n, 80);
}

/* Run a shell command; its output on our stdout; the exit status. */
static int shell(const char *cmd)
{
	char line[512];
	FILE *p = popen(cmd, "r");
	int st;

	CHECK_NE(p, NULL);
	while (fgets(line, sizeof(line), p))
		fputs(line, stdout);
	st = pclose(p);
	CHECK(WIFEXITED(st));
	return WEXITSTATUS(st);
}

TEST(conformance_manual_errors_are_traceable)
{
	const char *tool = t_tool();
	char cmd[1024];

	CHECKF(access("tests/traceability.sh", R_OK) == 0,
	       "run from the top of the source tree");
	snprintf(cmd, sizeof(cmd),
	         "sh tests/traceability.sh %s man tests 2>&1", tool);
	CHECK_EQ(shell(cmd), 0);
}

TEST(conformance_tool_prints_the_table)
{
	const char *tool = t_tool();
	char cmd[1024], out[8192];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s conform --filter backend.", tool);
	p = popen(cmd, "r");
	CHECK_NE(p, NULL);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	CHECK_EQ(pclose(p), 0);
	fputs(out, stdout);
	CHECK(!strncmp(out, "case ", 5));
	CHECK(strstr(out, " kernel "));
	CHECK(strstr(out, " engine "));
	CHECK(strstr(out, " virtual "));
	CHECK(strstr(out, "\nbackend.name "));
	CHECK(strstr(out, "3 cases: 3 ok, 0 departures, 0 different, "
	                  "0 failed, 0 skipped\n"));
	snprintf(cmd, sizeof(cmd),
	         "%s conform --backend nosuch 2>/dev/null", tool);
	CHECK_EQ(shell(cmd), 2);
	snprintf(cmd, sizeof(cmd),
	         "%s conform --backend kernel --filter poll.never_writable",
	         tool);
	CHECK_EQ(shell(cmd), 0);
}

/* fn(arg) in a child process: its exit status (-1: it did not exit).
 * TFD_BACKEND is read at the first call of the library: each choice in a
 * process of its own. */
static int in_child(int (*fn)(const void *), const void *arg)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	CHECK_GE(pid, 0);
	if (pid == 0)
		_exit(fn(arg));
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

struct env_choice {
	const char *value, *want;
};

/* TFD_BACKEND set to value (unset if NULL) selects the backend want: 0. */
static int backend_chosen(const void *arg)
{
	const struct env_choice *c = arg;

	if (c->value)
		setenv("TFD_BACKEND", c->value, 1);
	else
		unsetenv("TFD_BACKEND");
	return strcmp(tfd_backend_name(), c->want) ? 1 : 0;
}

static void backend_from_env(const char *value, const char *want)
{
	struct env_choice c = { value, want };

	CHECKF(in_child(backend_chosen, &c) == 0, "TFD_BACKEND=%s: not %s",
	       value ? value : "(unset)", want);
}

TEST(backend_chosen_by_environment)
{
	backend_from_env(NULL, "engine");
	backend_from_env("", "engine");
	backend_from_env("nosuch", "none");
	backend_from_env("virtaul", "none");
	backend_from_env("engine", "engine");
	backend_from_env("kernel", "kernel");
	backend_from_env("virtual", "virtual");
}

/*
 * TFD_BACKEND=virtaul (a name that is no backend's) is an error, as
 * tfd_use_backend("virtaul") is: it selected the engine without a word,
 * so a program meant to run on virtual time ran for real.  It selects
 * "none" (tfd_use_backend(3)): no timer can be created, EINVAL, until
 * tfd_use_backend() selects a backend; nothing is printed.
 */
static int unknown_backend_steps(const void *arg)
{
	struct itimerspec its = { { 0, 0 }, { 1, 0 } };
	int p[2], fd;

	(void)arg;
	setenv("TFD_BACKEND", "virtaul", 1);
	if (tfd_create(CLOCK_MONOTONIC, 0) != -1 || errno != EINVAL)
		return 1;
	if (timerfd(-1, CLOCK_MONOTONIC, 0, &its, NULL) != -1 ||
	    errno != EINVAL)
		return 2;
	if (strcmp(tfd_backend_name(), "none"))
		return 3;
	/* a descriptor is no timer of it; closing one is close(2) */
	if (pipe(p) < 0 || tfd_settime(p[0], 0, &its, NULL) != -1 ||
	    errno != EINVAL || tfd_gettime(99999, &its) != -1 ||
	    errno != EBADF || tfd_close(p[0]) != 0 || tfd_close(p[1]) != 0 ||
	    tfd_close(p[1]) != -1 || errno != EBADF)
		return 4;
	/* "none" is not a name tfd_use_backend() takes */
	if (tfd_use_backend("none") != -1 || errno != EINVAL)
		return 5;
	if (tfd_use_backend("engine") != 0 ||
	    strcmp(tfd_backend_name(), "engine"))
		return 6;
	fd = tfd_create(CLOCK_MONOTONIC, 0);
	return fd >= 0 && tfd_close(fd) == 0 ? 0 : 7;
}

TEST(backend_unknown_in_environment_creates_nothing)
{
	int st = in_child(unknown_backend_steps, NULL);

	CHECKF(st == 0, "step %d failed", st);
}
