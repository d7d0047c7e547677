/* SPDX-License-Identifier: MIT */
/* The examples (make examples): the README's program and the event loop
 * run, and the README shows the program as it is in examples/readme.c. */
#include "t.h"

#include <sys/wait.h>

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	CHECKF(f != NULL, "%s: %s", path, strerror(errno));
	CHECK_EQ(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	CHECK_GE(n, 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	CHECK(buf);
	CHECK_EQ(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* The README's ```c block under "## Use" is examples/readme.c without its
 * first line (the SPDX comment), byte for byte. */
TEST(examples_readme_shows_examples_readme_c)
{
	size_t rn, fn;
	char *readme = slurp("README.md", &rn), *file = slurp("examples/readme.c",
	                                                        &fn);
	char *use = strstr(readme, "\n## Use\n"), *code, *end, *body;

	CHECK_NE(use, NULL);
	code = strstr(use, "\n```c\n");
	CHECK_NE(code, NULL);
	code += 6;
	end = strstr(code, "\n```\n");
	CHECK_NE(end, NULL);
	end[1] = 0;
	CHECK(!strncmp(file, "/* SPDX-License-Identifier: MIT */\n", 35));
	body = file + 35;
	CHECKF(!strcmp(code, body),
	       "README.md's example and examples/readme.c differ:\n%s\n---\n%s",
	       code, body);
	free(readme);
	free(file);
}

/* It prints the running total after each read, up to 5 (a read may
 * return more than one when the machine is slow). */
TEST(examples_readme_runs)
{
	const char *ex = t_examples();
	char cmd[512], out[4096], err[4096], *line;
	unsigned long total, last = 0;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "%s/readme", ex);
	CHECK_EQ(t_sh(cmd, out, sizeof(out), err, sizeof(err)), 0);
	CHECKF(err[0] == 0, "stderr: %s", err);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char word[32];

		CHECKF(sscanf(line, "%lu %31s", &total, word) == 2 &&
		               !strcmp(word, "expirations"),
		       "line '%s'", line);
		CHECK_GT(total, last);
		last = total;
		n++;
	}
	CHECK_GE(n, 1);
	CHECK_LE(n, 5);
	CHECK_GE(last, 5);
}

/* epoll cannot watch /dev/null or a regular file (EPERM): the loop takes
 * such an input as one that has ended, and runs to its deadline. */
TEST(examples_eventloop_with_an_input_epoll_cannot_watch)
{
	static const char *const inputs[] = { "/dev/null", "README.md" };
	const char *ex = t_examples();
	char cmd[512], out[4096], err[4096];
	size_t i;

	for (i = 0; i < sizeof(inputs) / sizeof(*inputs); i++) {
		snprintf(cmd, sizeof(cmd), "%s/eventloop 1 < %s", ex, inputs[i]);
		CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0,
		       "%s: '%s'", cmd, err);
		CHECKF(strstr(out, " deadline 1\n") && !strchr(strstr(out,
		               " deadline 1\n") + 1, '\n')[1],
		       "%s printed '%s'", cmd, out);
	}
}

/* The server of tfd_set(3): every connection's idle timeout in one
 * set.  What it prints does not depend on how late timers fire. */
TEST(examples_set_server_runs)
{
	static const char want[] =
		"connection 0: 0 lines echoed, closed idle\n"
		"connection 1: 1 line echoed, closed idle\n"
		"connection 2: 2 lines echoed, closed idle\n"
		"connection 3: 3 lines echoed, hung up\n"
		"4 connections, 6 lines, one timer set\n";
	const char *ex = t_examples();
	char cmd[512], out[4096], err[4096];

	snprintf(cmd, sizeof(cmd), "%s/set_server", ex);
	CHECK_EQ(t_sh(cmd, out, sizeof(out), err, sizeof(err)), 0);
	CHECKF(err[0] == 0, "stderr: %s", err);
	CHECKF(!strcmp(out, want), "printed '%s'", out);
	snprintf(cmd, sizeof(cmd), "TFD_BACKEND=kernel %s/set_server 200 | "
	         "tail -n 1", ex);
	CHECK_EQ(t_sh(cmd, out, sizeof(out), err, sizeof(err)), 0);
	CHECKF(!strcmp(out, "200 connections, 300 lines, one timer set\n"),
	       "printed '%s'", out);
}
