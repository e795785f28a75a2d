// SPDX-License-Identifier: MIT
/*
 * flushkit.c - the flushkit command: one table of subcommands (as git.c
 * does), each in its own cmd-*.c.
 */
#include "cli.h"
#include "results.h"

#include <string.h>

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct subcommand commands[] = {

    {"sync", cmd_sync, "make files and directories durable"},
    {"cp", cmd_cp, "copy a tree like cp -a and make the copy durable"},
    {"bench", cmd_bench, "benchmarks: tpcb, fsmark, sync, series, neighbor"},
    {"monitor", cmd_monitor, "watch Dirty, Writeback and disk writes"},
    {"report", cmd_report, "HTML page with plots from result files"},
    {"compare", cmd_compare, "two sets of runs: AVG, STDDEV, +/-/0 marker"},
    {"exec", cmd_exec, "run a program with early writeback of what it writes"},
    {"disk", cmd_disk,
     "lab disks: modelled block devices (hdd, ssd, nvme, ram), power cuts"},
    {"reproduce", cmd_reproduce,
     "run the seed experiments on emulated disks, seed figures beside ours"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: flushkit [--version] [--help] COMMAND [ARGS]\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f,
		"\nRun 'flushkit COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error(NULL, "missing COMMAND operand");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return FK_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("flushkit %s\n", fk_version());
		return FK_EXIT_OK;
	}
	results_set_command(argc, argv);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		/* GNU's --version for every command, as its first option
		 * (only there: "flushkit exec tar --version" runs tar's). */
		if (argc > 2 && !strcmp(argv[2], "--version") &&
		    strcmp(commands[i].name, "bench")) {
			printf("flushkit %s %s\n", commands[i].name,
			       fk_version());
			return FK_EXIT_OK;
		}
		return commands[i].fn(argc - 1, argv + 1);
	}
	if (argv[1][0] == '-' && argv[1][1] == '-' && argv[1][2])
		return cli_usage_error(NULL, "unrecognized option '%s'",
				       argv[1]);
	if (argv[1][0] == '-' && argv[1][1])
		return cli_usage_error(NULL, "invalid option -- '%c'",
				       argv[1][1]);
	return cli_usage_error(NULL, "'%s' is not a flushkit command", argv[1]);
}
