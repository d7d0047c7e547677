/* SPDX-License-Identifier: MIT */
/*
 * cmd.h - the subcommands of the tfd program and the option parser they
 * share (opt.c).  Each subcommand is a struct tfd_cmd: its name, its
 * operands, its help text and its options.  The help (`tfd SUB --help`,
 * `tfd --help`) is printed from these tables, so it lists exactly the
 * options that the parser accepts; tests/help.sh checks that tfd(1)
 * documents the same set.
 */
#ifndef TFD_CMD_H
#define TFD_CMD_H

#include <stddef.h>

/* One option: "--NAME" (a flag) or "--NAME VALUE" / "--NAME=VALUE". */
struct tfd_opt {
	const char *name; /* without the dashes */
	const char *arg;  /* the value's name in the help; NULL: a flag */
	const char *help; /* lines for --help; NULL: internal, not shown */
};

struct tfd_cmd {
	const char *name;
	const char *operands; /* "VALUE [INTERVAL [COUNT]]" */
	const char *summary;  /* one line for `tfd --help` */
	const char *text;     /* the paragraph of `tfd NAME --help` */
	const struct tfd_opt *opts; /* ends with { NULL } */
	int (*fn)(int argc, char **argv);
	/* Options end at the first operand (exec: the rest is PROG's);
	 * else they may come before and after operands. */
	int options_first;
};

extern const struct tfd_cmd tfd_run_cmd, tfd_bench_cmd, tfd_conform_cmd,
	tfd_exec_cmd, tfd_trace_cmd;

/* The parser.  tfd_opt_next() returns the index in cmd->opts of the next
 * option, its value (or NULL for a flag) in a->val; then TFD_OPT_END when
 * none is left: the operands are a->argv[0 .. a->argc - 1], in order.
 * TFD_OPT_HELP: --help (or -h) was given and the help printed, exit 0.
 * TFD_OPT_BAD: a one-line error was printed, exit 2.  "--" ends the
 * options; a value given apart may not begin with "--" ("--trace --" is a
 * missing value): give such a value as --NAME=VALUE. */
enum { TFD_OPT_END = -1, TFD_OPT_HELP = -2, TFD_OPT_BAD = -3 };
struct tfd_args {
	const struct tfd_cmd *cmd;
	int argc;        /* after TFD_OPT_END: the operands ... */
	char **argv;     /* ... NULL-terminated (argv reordered in place) */
	const char *val; /* the value of the option returned */
	char **all;      /* private: the command's argv, */
	int nall, i;     /* its length, the next to look at, */
	int nops, done;  /* operands so far, "--" or an operand seen */
};
void tfd_args_init(struct tfd_args *a, const struct tfd_cmd *cmd, int argc,
                   char **argv);
int tfd_opt_next(struct tfd_args *a);
/* The status for a result of tfd_opt_next other than an option: 0 or 2. */
int tfd_opt_status(int r);

/* A number in [min, max], decimal digits only (no sign, no space):
 * 0, or -1 when s is anything else. */
int tfd_parse_long(const char *s, long min, long max, long *v);

/* The help of --backend NAME, which tfd run and tfd exec take. */
extern const char tfd_backend_help[];

/* The library tfd exec preloads, into path: $TFD_PRELOAD (made
 * absolute), else libtfd-preload.so next to this program, else in the
 * directory tfd/ of the library directory it was built for (LIBDIR/tfd).
 * 0, or -1 with the reason in why. */
int tfd_find_preload(char *path, size_t n, char *why, size_t whyn);

/* tfd_program_static(), tfd_program_runtime(): src/preload/elf.c. */
#include "preload/elf.h"

/* arg with control characters escaped (\xNN), so that a message stays on
 * one line, cut with "..." to fit size; buf. */
const char *tfd_printable(const char *arg, char *buf, size_t size);

/* The help of one command, or of the program (cmd NULL), on stdout. */
void tfd_help(const struct tfd_cmd *cmd);
/* The command called name, or NULL. */
const struct tfd_cmd *tfd_find_cmd(const char *name);

/* The command running, for messages ("tfd: run: ..."); NULL in main. */
extern const struct tfd_cmd *tfd_cmd_current;
/* A usage error: "tfd: [CMD: ]" fmt " (try 'tfd [CMD ]--help')", one line
 * on stderr, arg with control characters escaped; returns 2. */
int tfd_cmd_bad(const char *fmt, const char *arg);

#endif
