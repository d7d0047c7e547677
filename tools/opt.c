/* SPDX-License-Identifier: MIT */
/*
 * opt.c - the option parser and the help of the tfd program (cmd.h).
 * Every subcommand parses with tfd_opt_next() and is described by its
 * struct tfd_cmd, from which --help is printed.
 */
#include "cmd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct tfd_cmd *tfd_cmd_current;

static const struct tfd_cmd *const commands[] = {
	&tfd_run_cmd, &tfd_exec_cmd, &tfd_trace_cmd, &tfd_conform_cmd,
	&tfd_bench_cmd,
};
#define NCOMMANDS (sizeof(commands) / sizeof(*commands))

const struct tfd_cmd *tfd_find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i]->name))
			return commands[i];
	return NULL;
}

const char *tfd_printable(const char *arg, char *buf, size_t size)
{
	size_t n = 0;

	for (; *arg && n + 5 < size; arg++) {
		unsigned char c = (unsigned char)*arg;

		if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
		else
			buf[n++] = (char)c;
	}
	buf[n] = 0;
	if (*arg)
		snprintf(buf + n, size - n, "...");
	return buf;
}

int tfd_cmd_bad(const char *fmt, const char *arg)
{
	const struct tfd_cmd *c = tfd_cmd_current;
	char buf[128];

	fprintf(stderr, "tfd: ");
	if (c)
		fprintf(stderr, "%s: ", c->name);
	fprintf(stderr, fmt, tfd_printable(arg, buf, sizeof(buf)));
	fprintf(stderr, " (try 'tfd %s%s--help')\n", c ? c->name : "",
	        c ? " " : "");
	return 2;
}

void tfd_args_init(struct tfd_args *a, const struct tfd_cmd *cmd, int argc,
                   char **argv)
{
	memset(a, 0, sizeof(*a));
	a->cmd = cmd;
	a->all = argv;
	a->nall = argc;
	a->i = 1;
	a->argv = argv + 1;
	tfd_cmd_current = cmd;
}

/* Operands are moved down to all[1 ...], in order: the slot written was
 * looked at already (nops < i). */
static void operand(struct tfd_args *a, char *s)
{
	a->all[1 + a->nops++] = s;
	if (a->cmd->options_first)
		a->done = 1;
}

int tfd_opt_next(struct tfd_args *a)
{
	const struct tfd_opt *o = a->cmd->opts;
	const char *name, *eq;
	size_t len;
	char *s;

	a->val = NULL;
	while (a->i < a->nall) {
		s = a->all[a->i++];
		if (a->done || s[0] != '-' || s[1] == 0) { /* "-" is one */
			operand(a, s);
			continue;
		}
		if (!strcmp(s, "--")) {
			a->done = 1;
			continue;
		}
		if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
			tfd_help(a->cmd);
			return TFD_OPT_HELP;
		}
		if (s[1] != '-') {
			tfd_cmd_bad("unknown option '%s'", s);
			return TFD_OPT_BAD;
		}
		name = s + 2;
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		for (; o->name; o++)
			if (strlen(o->name) == len && !strncmp(o->name, name, len))
				break;
		if (!o->name) {
			tfd_cmd_bad("unknown option '%s'", s);
			return TFD_OPT_BAD;
		}
		if (!o->arg) {
			if (eq) {
				tfd_cmd_bad("--%s takes no value", o->name);
				return TFD_OPT_BAD;
			}
		} else if (eq) {
			a->val = eq + 1;
		} else if (a->i < a->nall && strncmp(a->all[a->i], "--", 2)) {
			a->val = a->all[a->i++];
		} else {
			tfd_cmd_bad("--%s needs a value", o->name);
			return TFD_OPT_BAD;
		}
		return (int)(o - a->cmd->opts);
	}
	a->all[1 + a->nops] = NULL;
	a->argc = a->nops;
	a->argv = a->all + 1;
	return TFD_OPT_END;
}

int tfd_opt_status(int r)
{
	return r == TFD_OPT_HELP ? 0 : 2;
}

const char tfd_backend_help[] =
	"engine, virtual or kernel (default: $TFD_BACKEND,\nelse engine)";

int tfd_parse_long(const char *s, long min, long max, long *v)
{
	char *end;
	long n;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtol(s, &end, 10);
	if (*end || errno || n < min || n > max)
		return -1;
	*v = n;
	return 0;
}

/* ---- help ---- */

#define COL 22 /* where an option's help starts */

/* text with each line after the first indented by indent columns. */
static void indented(const char *text, int indent)
{
	for (; *text; text++) {
		putchar(*text);
		if (*text == '\n' && text[1])
			printf("%*s", indent, "");
	}
	putchar('\n');
}

static void print_opts(const struct tfd_opt *o, int indent)
{
	char left[64];

	for (; o->name; o++) {
		if (!o->help)
			continue;
		snprintf(left, sizeof(left), "--%s%s%s", o->name,
		         o->arg ? " " : "", o->arg ? o->arg : "");
		printf("%*s%-*s", indent, "", COL - indent - 1, left);
		if ((int)strlen(left) >= COL - indent - 1)
			printf("\n%*s", COL - 1, "");
		putchar(' ');
		indented(o->help, COL);
	}
}

static void synopsis(const struct tfd_cmd *c)
{
	printf("tfd %s [OPTION]...%s%s", c->name, *c->operands ? " " : "",
	       c->operands);
}

void tfd_help(const struct tfd_cmd *c)
{
	size_t i;

	if (c) {
		printf("usage: ");
		synopsis(c);
		printf("\n\n");
		indented(c->text, 0);
		printf("\noptions:\n");
		print_opts(c->opts, 2);
		printf("  %-*s print this help and exit\n", COL - 3, "--help");
		return;
	}
	printf("usage: tfd COMMAND [OPTION]... [ARG]...\n"
	       "       tfd help [COMMAND]\n"
	       "       tfd --help | --version\n"
	       "\n"
	       "tfd: timer file descriptors in user space.  The commands:\n"
	       "\n");
	for (i = 0; i < NCOMMANDS; i++)
		printf("  %-9s %s\n", commands[i]->name, commands[i]->summary);
	printf("\nEvery command takes --help; an option's value may be given "
	       "as --NAME VALUE\nor --NAME=VALUE.  Exit status: 0 success, "
	       "1 a call failed, 2 bad usage\n(exec: PROG's, or 125 to 127 "
	       "as env(1)).  More: tfd help COMMAND, man tfd.\n");
	for (i = 0; i < NCOMMANDS; i++) {
		printf("\n");
		synopsis(commands[i]);
		printf("\n");
		print_opts(commands[i]->opts, 4);
	}
	printf("\ntfd\n");
	printf("    %-*s print this help and exit\n", COL - 5, "--help");
	printf("    %-*s print the version and exit\n", COL - 5, "--version");
}
