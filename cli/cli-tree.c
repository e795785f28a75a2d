// SPDX-License-Identifier: MIT
/*
 * cli-tree.c - what "flushkit sync" and "flushkit cp" share: the
 * descriptor limit, exit statuses, the report callback that also keeps
 * each error for --json, and the JSON forms of their summaries.
 */
#include "cli.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <sys/resource.h>

void cli_tree_report(void *arg, int level, const char *op, const char *path,
		     int err)
{
	cli_report_path(NULL, level, op, path, err);
	cli_tree_keep_error(arg, level, op, path, err);
}

void cli_tree_keep_error(struct cli_tree_errors *e, int level, const char *op,
			 const char *path, int err)
{
	if (!e || level != FK_REPORT_ERROR)
		return;
	if (e->nr++ >= CLI_TREE_MAX_ERRORS)
		return; /* counted in "errors"; the list says truncated */
	if (!e->list)
		e->list = json_object_new_array();
	struct json_object *o = json_object_new_object();
	char *u = path ? cli_path_utf8(path) : NULL;
	json_object_object_add(o, "op", json_object_new_string(op));
	json_object_object_add(
	    o, "path", json_object_new_string(u ? u : (path ? "?" : "")));
	json_object_object_add(o, "errno",
			       json_object_new_int(err < 0 ? -err : err));
	json_object_object_add(o, "error",
			       json_object_new_string(fk_strerror(err)));
	free(u);
	json_object_array_add(e->list, o);
}

void cli_tree_json_errors(struct json_object *o, struct cli_tree_errors *e)
{
	json_object_object_add(o, "error_list",
			       e->list ? e->list : json_object_new_array());
	json_object_object_add(
	    o, "error_list_truncated",
	    json_object_new_boolean(e->nr > CLI_TREE_MAX_ERRORS));
	e->list = NULL; /* owned by @o now */
}

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
