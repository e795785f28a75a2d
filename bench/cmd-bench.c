// SPDX-License-Identifier: MIT
/*
 * cmd-bench.c - "flushkit bench KIND": dispatch to one benchmark.
 */
#include "cli.h"

#include <string.h>

struct bench {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct bench benches[] = {
    {"tpcb", cmd_bench_tpcb, "pgbench TPC-B (sort of) on the page store"},
    {"fsmark", cmd_bench_fsmark,
     "fs_mark small-file create+fsync, batched fsync"},
    {"sync", cmd_bench_sync,
     "sync(2), syncfs, flushkit sync on loop file systems"},
    {"series", cmd_bench_series,
     "tpcb over scales x clients, two configurations"},
    {"neighbor", cmd_bench_neighbor,
     "tpcb next to a dd/cp -a neighbour, plain or tamed"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: flushkit bench KIND [OPTIONS]\n\nkinds:\n");
	for (size_t i = 0; benches[i].name; i++)
		fprintf(f, "  %-8s %s\n", benches[i].name, benches[i].help);
}

int cmd_bench(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("bench", "missing KIND operand");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return FK_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("flushkit bench %s\n", fk_version());
		return FK_EXIT_OK;
	}
	for (size_t i = 0; benches[i].name; i++) {
		if (strcmp(argv[1], benches[i].name))
			continue;
		/* GNU's --version, as the first option of every benchmark. */
		if (argc > 2 && !strcmp(argv[2], "--version")) {
			printf("flushkit bench %s %s\n", benches[i].name,
			       fk_version());
			return FK_EXIT_OK;
		}
		return benches[i].fn(argc - 1, argv + 1);
	}
	if (argv[1][0] == '-' && argv[1][1] == '-' && argv[1][2])
		return cli_usage_error("bench", "unrecognized option '%s'",
				       argv[1]);
	if (argv[1][0] == '-' && argv[1][1])
		return cli_usage_error("bench", "invalid option -- '%c'",
				       argv[1][1]);
	return cli_usage_error("bench", "'%s' is not a flushkit benchmark",
			       argv[1]);
}
