// SPDX-License-Identifier: MIT
/*
 * cmd-sync.c - "flushkit sync [--method=M] [--sync-io=IO] [--jobs=N]
 * [--json] [--progress] PATH...": make every file and directory under the
 * PATHs durable with fk_tree_sync, then print a summary (text or one
 * JSON object; the fields shared with "flushkit cp --json" have the same
 * names and units).
 *
 * Exit status: 0 ok, 1 some failure (the messages on stderr name the
 * operation and the path), 2 usage, 3 completed with durability degraded
 * (a directory fsync was not supported by the file system).
 */
#include "cli.h"
#include "results.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: flushkit sync [--method=auto|twopass|fsync|syncfs] "
	    "[--sync-io=IO] [--jobs=N]\n"
	    "                     [--json] [--progress] PATH...\n"
	    "\n"
	    "Make every file and directory under each PATH durable.\n"
	    "\n"
	    "  --method=auto     measure (default): when the tree holds most "
	    "dirty data,\n"
	    "                    syncfs, then each file's own writeback "
	    "error; else twopass\n"
	    "  --method=twopass  start writeback of every file, then fsync "
	    "each file\n"
	    "                    and each directory after its contents\n"
	    "  --method=fsync    fsync each file, then each directory, in "
	    "one pass\n"
	    "  --method=syncfs   one syncfs(2) per file system under the "
	    "PATHs\n"
	    "  --sync-io=IO      how twopass issues its fsyncs: auto "
	    "(default), uring,\n"
	    "                    threads or sequential (one at a time)\n"
	    "  --jobs=N          fsyncs in flight at most (default 32, "
	    "1..4096)\n"
	    "  --json            print the summary as one JSON object\n"
	    "  --progress        show progress on stderr even when it is "
	    "not a terminal\n"
	    "  -h, --help        show this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure, 2 usage, 3 completed with "
	    "durability\n"
	    "degraded (a directory fsync was not supported).\n");
}

struct progress {
	uint64_t start_ns;
	int shown;
};

/* Called by the library at most every 100 ms. */
static void show_progress(void *arg, const struct fk_tree_stats *st)
{
	struct progress *p = arg;
	double secs = (double)(fk_now_ns() - p->start_ns) / 1e9;
	char bytes[32], rate[32];
	cli_human_bytes(st->bytes, bytes, sizeof(bytes));
	cli_human_bytes(secs > 0 ? (uint64_t)((double)st->bytes / secs) : 0,
			rate, sizeof(rate));
	uint64_t fsyncs = st->fsync_calls + st->dir_fsync_calls;
	fprintf(stderr, "\r%llu file%s, %s, %llu fsync%s, %s/s, %.1f s\033[K",
		(unsigned long long)st->files, st->files == 1 ? "" : "s", bytes,
		(unsigned long long)fsyncs, fsyncs == 1 ? "" : "s", rate, secs);
	fflush(stderr);
	p->shown = 1;
}

static void print_json(int method, int r, const struct fk_tree_stats *st,
		       char **paths, int nr_paths, struct cli_tree_errors *errs)
{
	struct json_object *o = json_object_new_object();
#define U64(name, v)                                                           \
	json_object_object_add(o, name, json_object_new_int64((int64_t)(v)))
	json_object_object_add(o, "command", json_object_new_string("sync"));
	struct json_object *a = json_object_new_array();
	for (int i = 0; i < nr_paths; i++) {
		/* JSON strings are UTF-8; file names need not be. */
		char *u = cli_path_utf8(paths[i]);
		json_object_array_add(a, json_object_new_string(u ? u : "?"));
		free(u);
	}
	json_object_object_add(o, "paths", a);
	json_object_object_add(
	    o, "method", json_object_new_string(fk_sync_method_name(method)));
	if (method == FK_SYNC_AUTO)
		json_object_object_add(o, "method_chosen",
				       json_object_new_string(st->syncfs_calls
								  ? "syncfs"
								  : "twopass"));
	json_object_object_add(o, "sync_io",
			       json_object_new_string(cli_tree_sync_io(st)));
	U64("sync_jobs", st->sync_jobs);
	U64("files", st->files);
	U64("dirs", st->dirs);
	U64("symlinks", st->symlinks);
	U64("specials", st->specials);
	U64("hardlinks", st->hardlinks);
	U64("bytes", st->bytes);
	U64("fsync_calls", st->fsync_calls);
	U64("dir_fsync_calls", st->dir_fsync_calls);
	U64("syncfs_calls", st->syncfs_calls);
	U64("writeback_ranges", st->writeback_ranges);
	U64("writeback_bytes", st->writeback_bytes);
	U64("vanished", st->vanished);
	U64("errors", st->errors);
	U64("warnings", st->warnings);
#undef U64
	json_object_object_add(o, "walk_s", cli_json_secs(st->walk_ns));
	json_object_object_add(o, "writeback_s",
			       cli_json_secs(st->writeback_ns));
	json_object_object_add(o, "fsync_s", cli_json_secs(st->fsync_ns));
	json_object_object_add(o, "total_s", cli_json_secs(st->total_ns));
	json_object_object_add(o, "degraded",
			       json_object_new_boolean(st->degraded));
	json_object_object_add(
	    o, "result",
	    json_object_new_string(cli_tree_result(cli_tree_exit(r))));
	json_object_object_add(o, "error",
			       r < 0 && r != -FK_EDEGRADED
				   ? json_object_new_string(fk_strerror(r))
				   : NULL);
	cli_tree_json_errors(o, errs);
	json_object_object_add(o, "exit",
			       json_object_new_int(cli_tree_exit(r)));
	results_json_print(o);
	json_object_put(o);
}

static void print_text(int method, int r, const struct fk_tree_stats *st)
{
	char b1[32], b2[32];
	/* auto: what it chose (st->syncfs_calls > 0: it swept). */
	if (method == FK_SYNC_AUTO)
		printf("method:            auto: %s\n",
		       st->syncfs_calls ? "syncfs (the tree held most of the "
					  "dirty data)"
					: "twopass");
	else
		printf("method:            %s\n", fk_sync_method_name(method));
	printf("files:             %llu (%llu more hard links)\n",
	       (unsigned long long)st->files,
	       (unsigned long long)st->hardlinks);
	printf("directories:       %llu\n", (unsigned long long)st->dirs);
	printf("symlinks, special: %llu, %llu (not opened)\n",
	       (unsigned long long)st->symlinks,
	       (unsigned long long)st->specials);
	printf("bytes:             %s (%llu)\n",
	       cli_human_bytes(st->bytes, b1, sizeof(b1)),
	       (unsigned long long)st->bytes);
	printf("fsync calls:       %llu file%s, %llu director%s\n",
	       (unsigned long long)st->fsync_calls,
	       st->fsync_calls == 1 ? "" : "s",
	       (unsigned long long)st->dir_fsync_calls,
	       st->dir_fsync_calls == 1 ? "y" : "ies");
	if (st->sync_io)
		printf("sync io:           %s, %u in flight at most\n",
		       cli_tree_sync_io(st), st->sync_jobs);
	if (method == FK_SYNC_SYNCFS ||
	    (method == FK_SYNC_AUTO && st->syncfs_calls))
		printf("syncfs calls:      %llu\n",
		       (unsigned long long)st->syncfs_calls);
	if (method == FK_SYNC_TWOPASS || method == FK_SYNC_AUTO)
		printf("writeback ranges:  %llu (%s)\n",
		       (unsigned long long)st->writeback_ranges,
		       cli_human_bytes(st->writeback_bytes, b2, sizeof(b2)));
	printf("vanished:          %llu\n", (unsigned long long)st->vanished);
	printf("errors, warnings:  %llu, %llu\n",
	       (unsigned long long)st->errors,
	       (unsigned long long)st->warnings);
	printf("time (s):          walk %.3f, writeback %.3f, fsync %.3f, "
	       "total %.3f\n",
	       cli_secs(st->walk_ns), cli_secs(st->writeback_ns),
	       cli_secs(st->fsync_ns), cli_secs(st->total_ns));
	if (r == 0)
		printf("result:            ok: durable\n");
	else if (r == -FK_EDEGRADED)
		printf("result:            degraded: directory sync not "
		       "supported\n");
	else
		printf("result:            FAILED: %s\n", fk_strerror(r));
}

int cmd_sync(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"method", required_argument, NULL, 'm'},
	    {"json", no_argument, NULL, 'j'},
	    {"progress", no_argument, NULL, 'p'},
	    {"sync-io", required_argument, NULL, 'I'},
	    {"jobs", required_argument, NULL, 'J'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int method = FK_SYNC_AUTO, json = 0, force_progress = 0, c;
	int sync_io = FK_SYNC_IO_AUTO;
	uint32_t jobs = 0;

	/* Callable more than once in a process (tests): reset getopt. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			method = fk_sync_method_parse(optarg);
			if (method < 0)
				return cli_bad_value(
				    "sync", "--method", optarg,
				    "auto, twopass, fsync or syncfs");
			break;
		case 'j':
			json = 1;
			break;
		case 'p':
			force_progress = 1;
			break;
		case 'I':
			sync_io = cli_parse_sync_io(optarg);
			if (sync_io < 0)
				return cli_bad_sync_io("sync", optarg);
			break;
		case 'J':
			if (cli_parse_jobs(optarg, &jobs))
				return cli_bad_jobs("sync", optarg);
			break;
		case 'h':
			usage(stdout);
			return FK_EXIT_OK;
		default:
			return cli_option_error("sync", c, argv, longopts);
		}
	}
	if (optind >= argc)
		return cli_usage_error("sync", "missing PATH operand");

	cli_raise_nofile();
	struct progress prog = {.start_ns = fk_now_ns()};
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.sync_method = method;
	o.sync_io = sync_io;
	o.sync_jobs = jobs;
	struct cli_tree_errors errs = {0};
	o.report = cli_tree_report; /* names quoted: one line each */
	o.report_arg = &errs;
	if (cli_progress_wanted(force_progress)) {
		o.progress = show_progress;
		o.progress_arg = &prog;
	}

	struct fk_tree_stats st;
	int r = fk_tree_sync((const char *const *)(argv + optind),
			     (size_t)(argc - optind), &o, &st);
	if (prog.shown)
		fputc('\n', stderr);
	/* Belt and braces: an error reported is a failure, whatever r. */
	if (r >= 0 && st.errors)
		r = -EIO;
	if (r == -FK_EDEGRADED)
		cli_warn("durability degraded: fsync not supported by the "
			 "file system of some directory or file");
	else if (r < 0 && !st.errors)
		cli_error("sync: %s", fk_strerror(r));

	if (json)
		print_json(method, r, &st, argv + optind, argc - optind, &errs);
	else
		print_text(method, r, &st);
	fflush(stdout);
	json_object_put(errs.list);
	return cli_tree_exit(r);
}
