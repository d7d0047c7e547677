/* SPDX-License-Identifier: MIT */
/* cmd.h - the subcommands of the tfd program. */
#ifndef TFD_CMD_H
#define TFD_CMD_H

/* A usage error: "tfd: " fmt, one line on stderr; returns 2. */
int tfd_cmd_bad(const char *fmt, const char *arg);

/* Each takes its own argv (argv[0] is the command name) and returns the
 * exit status. */
int tfd_cmd_run(int argc, char **argv);
int tfd_cmd_bench(int argc, char **argv);
int tfd_cmd_conform(int argc, char **argv);
int tfd_cmd_exec(int argc, char **argv);

#endif
