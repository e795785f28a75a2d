// SPDX-License-Identifier: MIT
/*
 * cmd-cp.c - "flushkit cp": copy a tree with cp -a semantics and make the
 * copy durable (fk_tree_copy), then print a summary.
 *
 *   flushkit cp [--method=writeback|delayed|fsync-each|syncfs]
 *               [--flush-after=SIZE] [--drop-cache] [--sync-io=IO]
 *               [--jobs=N] [--json] [--progress] SRC DST
 *
 * Results go to stdout (a text summary, or one JSON object with
 * --json, whose fields shared with "flushkit sync --json" have the same
 * names and units); diagnostics ("flushkit: OP 'PATH': ERROR") and progress go to
 * stderr.  Exit status: 0 ok, 1 failure, 2 usage, 3 copied but a
 * directory fsync was not supported (durability degraded).
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const struct {
	const char *name;
	int method;
} methods[] = {
	{"writeback", FK_COPY_WRITEBACK},
	{"delayed", FK_COPY_DELAYED},
	{"fsync-each", FK_COPY_FSYNC_EACH},
	{"syncfs", FK_COPY_SYNCFS},
};

static const char *method_name(int method)
{
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (methods[i].method == method)
			return methods[i].name;
	return "?";
}

/* enum fk_copy_method for @name, or -1. */
static int parse_method(const char *name)
{
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(name, methods[i].name))
			return methods[i].method;
	return -1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: flushkit cp [OPTIONS] SRC DST\n"
		"\n"
		"Copy SRC to DST like 'cp -a' (DST/basename(SRC) if DST is an\n"
		"existing directory) and make the copy durable: every file and\n"
		"directory fsynced, files before their directory, the parent of\n"
		"the copy last.\n"
		"\n"
		"options:\n"
		"  --method=METHOD    how the copy is made durable:\n"
		"                     writeback   start writeback while copying,\n"
		"                                 fsync everything at the end (default)\n"
		"                     delayed     fsync everything at the end\n"
		"                     fsync-each  fsync each file right after writing it\n"
		"                     syncfs      syncfs(2) of each file system written\n"
		"  --flush-after=SIZE writeback hint threshold (default 256KiB)\n"
		"  --drop-cache       drop copied pages from the page cache\n"
		"                     (POSIX_FADV_DONTNEED) once they are clean\n"
		"  --sync-io=IO       how writeback/delayed issue the final fsyncs:\n"
		"                     auto (default), uring, threads, sequential\n"
		"  --jobs=N           fsyncs in flight at most (default 32, 1..4096)\n"
		"  --json             print the summary as JSON\n"
		"  --progress         show progress on stderr even if not a terminal\n"
		"  --help             show this help\n"
		"\n"
		"exit status: 0 ok, 1 failure, 2 usage, 3 durability degraded\n"
		"(a directory fsync was not supported by the file system)\n");
}

struct progress_state {
	int tty;
	int shown;
};

static void show_progress(void *arg, const struct fk_tree_stats *st)
{
	struct progress_state *p = arg;
	char b[32];
	double elapsed_s = (double)st->walk_ns / 1e9;
	double rate = elapsed_s > 0 ?
			      (double)st->bytes / elapsed_s / (1 << 20) : 0;
	fprintf(stderr, "%scopied %llu files, %llu dirs, %s, %.1f MiB/s%s",
		p->tty ? "\r" : "", (unsigned long long)st->files,
		(unsigned long long)st->dirs,
		cli_human_bytes(st->bytes, b, sizeof(b)), rate,
		p->tty ? "\033[K" : "\n");
	p->shown = 1;
}

static void print_json(const char *src, const char *dst, int method,
		       int drop_cache, const struct fk_tree_stats *st, int r,
		       int exit_code, struct cli_tree_errors *errs)
{
	struct json_object *o = json_object_new_object();
#define ADD_U64(name, v) \
	json_object_object_add(o, name, json_object_new_uint64(v))
	json_object_object_add(o, "command", json_object_new_string("cp"));
	/* JSON strings are UTF-8; file names need not be. */
	char *u_src = cli_path_utf8(src), *u_dst = cli_path_utf8(dst);
	json_object_object_add(o, "src",
			       json_object_new_string(u_src ? u_src : "?"));
	json_object_object_add(o, "dst",
			       json_object_new_string(u_dst ? u_dst : "?"));
	free(u_src);
	free(u_dst);
	json_object_object_add(o, "method",
			       json_object_new_string(method_name(method)));
	json_object_object_add(o, "drop_cache",
			       json_object_new_boolean(drop_cache));
	json_object_object_add(o, "sync_io",
			       json_object_new_string(cli_tree_sync_io(st)));
	ADD_U64("sync_jobs", st->sync_jobs);
	ADD_U64("files", st->files);
	ADD_U64("dirs", st->dirs);
	ADD_U64("symlinks", st->symlinks);
	ADD_U64("specials", st->specials);
	ADD_U64("hardlinks", st->hardlinks);
	ADD_U64("bytes", st->bytes);
	ADD_U64("vanished", st->vanished);
	ADD_U64("errors", st->errors);
	ADD_U64("warnings", st->warnings);
	ADD_U64("fsync_calls", st->fsync_calls);
	ADD_U64("dir_fsync_calls", st->dir_fsync_calls);
	ADD_U64("syncfs_calls", st->syncfs_calls);
	ADD_U64("writeback_ranges", st->writeback_ranges);
	ADD_U64("writeback_bytes", st->writeback_bytes);
	json_object_object_add(o, "copy_s", cli_json_secs(st->walk_ns));
	json_object_object_add(o, "fsync_s", cli_json_secs(st->fsync_ns));
	json_object_object_add(o, "total_s", cli_json_secs(st->total_ns));
	json_object_object_add(o, "degraded",
			       json_object_new_boolean(st->degraded));
	json_object_object_add(o, "result",
			       json_object_new_string(
				       cli_tree_result(exit_code)));
	json_object_object_add(o, "error",
			       r < 0 && r != -FK_EDEGRADED ?
				       json_object_new_string(fk_strerror(r)) :
				       NULL);
	cli_tree_json_errors(o, errs);
	json_object_object_add(o, "exit", json_object_new_int(exit_code));
#undef ADD_U64
	printf("%s\n", json_object_to_json_string_ext(
			       o, JSON_C_TO_STRING_PRETTY |
					  JSON_C_TO_STRING_SPACED |
					  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void print_text(const char *src, const char *dst, int method,
		       int drop_cache, const struct fk_tree_stats *st,
		       int exit_code)
{
	char b1[32], b2[32];
	char *q_src = cli_path_quote(src), *q_dst = cli_path_quote(dst);
	printf("flushkit cp '%s' -> '%s': %s (method %s%s)\n",
	       q_src ? q_src : "?", q_dst ? q_dst : "?",
	       cli_tree_result(exit_code), method_name(method),
	       drop_cache ? ", drop-cache" : "");
	free(q_src);
	free(q_dst);
	printf("  files         %llu\n", (unsigned long long)st->files);
	printf("  directories   %llu\n", (unsigned long long)st->dirs);
	printf("  symlinks      %llu\n", (unsigned long long)st->symlinks);
	printf("  specials      %llu\n", (unsigned long long)st->specials);
	printf("  hard links    %llu\n", (unsigned long long)st->hardlinks);
	printf("  bytes         %llu (%s)\n", (unsigned long long)st->bytes,
	       cli_human_bytes(st->bytes, b1, sizeof(b1)));
	if (st->vanished)
		printf("  vanished      %llu\n",
		       (unsigned long long)st->vanished);
	printf("  errors        %llu\n", (unsigned long long)st->errors);
	printf("  fsync calls   %llu files, %llu directories, %llu syncfs\n",
	       (unsigned long long)st->fsync_calls,
	       (unsigned long long)st->dir_fsync_calls,
	       (unsigned long long)st->syncfs_calls);
	if (st->sync_io)
		printf("  sync io       %s, %u in flight at most\n",
		       cli_tree_sync_io(st), st->sync_jobs);
	printf("  writeback     %llu ranges, %s\n",
	       (unsigned long long)st->writeback_ranges,
	       cli_human_bytes(st->writeback_bytes, b2, sizeof(b2)));
	printf("  time          copy %.3f s, fsync %.3f s, total %.3f s\n",
	       cli_secs(st->walk_ns), cli_secs(st->fsync_ns),
	       cli_secs(st->total_ns));
	if (st->degraded)
		printf("  durability    DEGRADED: a directory fsync was not "
		       "supported\n");
}

int cmd_cp(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"method", required_argument, NULL, 'm'},
		{"flush-after", required_argument, NULL, 'f'},
		{"drop-cache", no_argument, NULL, 'd'},
		{"json", no_argument, NULL, 'j'},
		{"progress", no_argument, NULL, 'p'},
		{"sync-io", required_argument, NULL, 'I'},
		{"jobs", required_argument, NULL, 'J'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct fk_tree_opts o;
	int json = 0, force_progress = 0, c;
	fk_tree_opts_init(&o);
	o.method = FK_COPY_WRITEBACK;
	struct cli_tree_errors errs = {0};
	o.report = cli_tree_report; /* names quoted: one line each */
	o.report_arg = &errs;

	optind = 0;	/* callable more than once (tests run it in-process) */
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			o.method = parse_method(optarg);
			if (o.method < 0) {
				cli_error("cp: unknown method '%s' (writeback, "
					  "delayed, fsync-each, syncfs)",
					  optarg);
				return FK_EXIT_USAGE;
			}
			break;
		case 'f':
			if (cli_parse_size(optarg, &o.flush_after_bytes)) {
				cli_error("cp: bad size '%s'", optarg);
				return FK_EXIT_USAGE;
			}
			break;
		case 'd':
			o.drop_cache = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'p':
			force_progress = 1;
			break;
		case 'I':
			o.sync_io = fk_sync_io_parse(optarg);
			if (o.sync_io < 0) {
				cli_error("cp: unknown --sync-io '%s' (auto, "
					  "uring, threads or sequential)",
					  optarg);
				return FK_EXIT_USAGE;
			}
			break;
		case 'J': {
			char *end;
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 ||
			    v > FK_FSYNC_BATCH_MAX_QUEUE_DEPTH ||
			    optarg[0] == '-') {
				cli_error("cp: bad --jobs '%s' (1..%u)", optarg,
					  FK_FSYNC_BATCH_MAX_QUEUE_DEPTH);
				return FK_EXIT_USAGE;
			}
			o.sync_jobs = (uint32_t)v;
			break;
		}
		case 'h':
			usage(stdout);
			return FK_EXIT_OK;
		default:
			usage(stderr);
			return FK_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		cli_error("cp: expected SRC and DST");
		usage(stderr);
		return FK_EXIT_USAGE;
	}
	const char *src = argv[optind], *dst = argv[optind + 1];

	struct progress_state ps = {.tty = isatty(STDERR_FILENO)};
	if (cli_progress_wanted(force_progress)) {
		o.progress = show_progress;
		o.progress_arg = &ps;
	}

	cli_raise_nofile();
	struct fk_tree_stats st;
	int r = fk_tree_copy(src, dst, &o, &st);
	if (ps.shown && ps.tty)
		fputc('\n', stderr);

	int exit_code = cli_tree_exit(r);

	if (json)
		print_json(src, dst, o.method, o.drop_cache, &st, r, exit_code,
			   &errs);
	else
		print_text(src, dst, o.method, o.drop_cache, &st, exit_code);
	fflush(stdout);

	char *q_src = cli_path_quote(src), *q_dst = cli_path_quote(dst);
	if (exit_code == FK_EXIT_FAILURE)
		cli_error("cp '%s' to '%s' failed (%llu errors): %s",
			  q_src ? q_src : "?", q_dst ? q_dst : "?",
			  (unsigned long long)st.errors, fk_strerror(r));
	else if (exit_code == FK_EXIT_DEGRADED)
		cli_warn("cp '%s' to '%s': durability degraded (directory "
			 "sync not supported)", q_src ? q_src : "?",
			 q_dst ? q_dst : "?");
	free(q_src);
	free(q_dst);
	json_object_put(errs.list);
	return exit_code;
}
