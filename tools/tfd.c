/*
 * tfd - the command-line program.  See tfd(1).
 *
 *   tfd run [--clock C] [--abs] [--api revised|linux] VALUE [INTERVAL [COUNT]]
 *
 * Exit status: 0 success, 1 a call failed, 2 bad usage.
 */
#include "cmd.h"
#include "tfd.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
	"usage: tfd run [--clock CLOCK] [--abs] [--api revised|linux]\n"
	"               VALUE [INTERVAL [COUNT]]\n"
	"       tfd --help | --version\n"
	"\n"
	"Arms a timer file descriptor for VALUE seconds, repeating every\n"
	"INTERVAL seconds (0: one-shot), and reads it until COUNT expirations\n"
	"(default 1) have been counted, printing one line per read.\n"
	"\n"
	"  --clock CLOCK  monotonic (default), realtime, boottime,\n"
	"                 realtime-alarm or boottime-alarm\n"
	"  --abs          arm with TFD_TIMER_ABSTIME at now + VALUE\n"
	"  --api API      linux: tfd_create/tfd_settime/tfd_gettime/tfd_read\n"
	"                 (default); revised: the 2007 timerfd() call and\n"
	"                 plain read()\n"
	"Times are decimal seconds with up to 9 decimals, e.g. 0.5 or 2.25.\n";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "run", tfd_cmd_run },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2)
		return tfd_cmd_bad("%s", "missing command");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("tfd %s\n", TFD_VERSION_STRING);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	return tfd_cmd_bad("unknown command '%s'", argv[1]);
}
