// SPDX-License-Identifier: MIT
/*
 * cli-tree.c - what "flushkit sync" and "flushkit cp" share: the
 * descriptor limit, exit statuses and the JSON forms of their summaries.
 */
#include "cli.h"

#include <json-c/json.h>
#include <sys/resource.h>

void cli_raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

double cli_secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

struct json_object *cli_json_secs(uint64_t ns)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%.6f", cli_secs(ns));
	return json_object_new_double_s(cli_secs(ns), buf);
}

const char *cli_tree_sync_io(const struct fk_tree_stats *st)
{
	return st->sync_io ? fk_sync_io_name(st->sync_io) : "none";
}

int cli_tree_exit(int r)
{
	if (r == 0)
		return FK_EXIT_OK;
	if (r == -FK_EDEGRADED)
		return FK_EXIT_DEGRADED;
	return FK_EXIT_FAILURE;
}

const char *cli_tree_result(int exit_code)
{
	switch (exit_code) {
	case FK_EXIT_OK:
		return "ok";
	case FK_EXIT_DEGRADED:
		return "degraded";
	default:
		return "failed";
	}
}
