// SPDX-License-Identifier: MIT
/*
 * cmd-sync.c - "flushkit sync [-d] [-f] [--method=M] [--sync-io=IO]
 * [--jobs=N] [--summary|--json] [-q] [--progress] [PATH...]": GNU sync's
 * command line, and more.  Each PATH is opened as GNU sync opens it; a
 * directory is made durable with everything under it (fk_tree_sync),
 * any other file through that descriptor as GNU sync does (fsync,
 * fdatasync with -d, syncfs with -f).  No PATH: sync(2), as GNU sync.
 * As GNU sync, nothing on stdout unless asked: a summary with
 * --summary, one JSON object with --json (the fields shared with
 * "flushkit cp --json" have the same names and units); on a terminal
 * one result line on stderr unless -q.
 *
 * Exit status: 0 ok, 1 some failure (the messages on stderr name the
 * operation and the path) or a usage error (as GNU sync), 3 completed
 * with durability degraded (a directory fsync was not supported by the
 * file system).
 */
#include "cli.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: flushkit sync [-d|--data] [-f|--file-system] "
	    "[--method=M] [--sync-io=IO]\n"
	    "                     [--jobs=N] [--summary|--json] [-q] "
	    "[--progress] [PATH...]\n"
	    "\n"
	    "Make each PATH durable: a directory with everything under it, "
	    "any other\n"
	    "file itself (fsync of the file GNU sync opens).  No PATH: "
	    "sync(2), as\n"
	    "GNU sync (which reports no error).  Nothing on stdout unless "
	    "asked.\n"
	    "\n"
	    "GNU sync's options:\n"
	    "  -d, --data        fdatasync files given as PATH (a "
	    "directory's tree is\n"
	    "                    still fsynced); needs a PATH\n"
	    "  -f, --file-system syncfs(2) of the file system of each PATH "
	    "(of a\n"
	    "                    directory: and those mounted under it); "
	    "--method=syncfs\n"
	    "\n"
	    "flushkit's:\n"
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
	    "  --summary         print a summary on stdout\n"
	    "  --json            print the summary as one JSON object\n"
	    "  -q, --quiet       no result line on a terminal's stderr\n"
	    "  --progress        show progress on stderr even when it is "
	    "not a terminal\n"
	    "  -h, --help        show this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure or usage error (as GNU sync), 3 "
	    "completed\n"
	    "with durability degraded (a directory fsync was not "
	    "supported).\n");
}

/* sync's own messages, GNU sync's words after the prefix: "flushkit
 * sync: MESSAGE" (a peer harness reads "flushkit sync: " as "sync: "). */
static void sync_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void sync_error(const char *fmt, ...)
{
	va_list ap;
	fputs("flushkit sync: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The same, with a quoted path and an errno: "MSG 'PATH': ERROR". */
static void sync_path_error(const char *msg, const char *path, int err)
{
	char *q = cli_path_quote(path);
	sync_error("%s '%s': %s", msg, q ? q : "?", strerror(err));
	free(q);
}

enum { SYNC_FILE, SYNC_DATA, SYNC_FS };

/*
 * A PATH operand as GNU sync opens it (sync_arg of its src/sync.c):
 * O_RDONLY | O_NONBLOCK (a FIFO does not block), else O_WRONLY |
 * O_NONBLOCK (a write-only file), O_NONBLOCK then cleared.  The
 * descriptor, or -1 with the message said ("error opening 'X': ERROR",
 * the O_RDONLY errno, as GNU).
 */
static int open_operand(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int rd_errno = errno;
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			sync_path_error("error opening", path, rd_errno);
			return -1;
		}
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl == -1 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		sync_path_error("couldn't reset non-blocking mode", path,
				errno);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A PATH that is no directory (a file, FIFO, device, /proc file),
 * synced as GNU sync does, through @fd: fsync, fdatasync (-d) or syncfs
 * (-f, --method=syncfs); a failure named ("error syncing 'X': ERROR",
 * exit 1: a FIFO or /proc file is EINVAL, as with GNU sync).  Counted
 * into @st.  Returns 0 or -errno.  Closes @fd.
 */
static int sync_operand(int fd, const char *path, const struct stat *sb,
			int mode, struct fk_tree_stats *st)
{
	uint64_t t0 = fk_now_ns();
	int r = mode == SYNC_FS	    ? syncfs(fd)
		: mode == SYNC_DATA ? fdatasync(fd)
				    : fsync(fd);
	int err = r < 0 ? errno : 0;
	st->fsync_ns += fk_now_ns() - t0;
	st->total_ns += fk_now_ns() - t0;
	if (S_ISREG(sb->st_mode)) {
		st->files++;
		st->bytes += (uint64_t)sb->st_size;
	} else
		st->specials++;
	if (mode == SYNC_FS)
		st->syncfs_calls++;
	else
		st->fsync_calls++;
	if (err) {
		sync_path_error("error syncing", path, err);
		st->errors++;
	}
	if (close(fd) < 0 && !err) {
		err = errno;
		sync_path_error("failed to close", path, err);
		st->errors++;
	}
	return -err;
}

/* Add the counts and times of the operands synced one by one, @own
 * (sync_operand's), to the tree sync's @st. */
static void add_stats(struct fk_tree_stats *st, const struct fk_tree_stats *own)
{
	st->files += own->files;
	st->specials += own->specials;
	st->bytes += own->bytes;
	st->fsync_calls += own->fsync_calls;
	st->syncfs_calls += own->syncfs_calls;
	st->errors += own->errors;
	st->fsync_ns += own->fsync_ns;
	st->total_ns += own->total_ns;
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

enum {
	OPT_METHOD = 256,
	OPT_JSON,
	OPT_SUMMARY,
	OPT_PROGRESS,
	OPT_SYNC_IO,
	OPT_JOBS,
};

int cmd_sync(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"data", no_argument, NULL, 'd'},
	    {"file-system", no_argument, NULL, 'f'},
	    {"method", required_argument, NULL, OPT_METHOD},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"summary", no_argument, NULL, OPT_SUMMARY},
	    {"quiet", no_argument, NULL, 'q'},
	    {"progress", no_argument, NULL, OPT_PROGRESS},
	    {"sync-io", required_argument, NULL, OPT_SYNC_IO},
	    {"jobs", required_argument, NULL, OPT_JOBS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int method = FK_SYNC_AUTO, method_given = 0, json = 0, summary = 0;
	int quiet = 0, force_progress = 0, data = 0, file_system = 0, c;
	int sync_io = FK_SYNC_IO_AUTO, tree_opts = 0;
	uint32_t jobs = 0;

	/* Callable more than once in a process (tests): reset getopt.
	 * Options anywhere, as GNU sync ("sync FILE -d"). */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hdfq", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			data = 1;
			break;
		case 'f':
			file_system = 1;
			break;
		case OPT_METHOD:
			method = fk_sync_method_parse(optarg);
			if (method < 0)
				return cli_bad_value(
				    "sync", "--method", optarg,
				    "auto, twopass, fsync or syncfs");
			method_given = 1;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_SUMMARY:
			summary = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case OPT_PROGRESS:
			force_progress = 1;
			break;
		case OPT_SYNC_IO:
			sync_io = cli_parse_sync_io(optarg);
			if (sync_io < 0)
				return cli_bad_sync_io("sync", optarg);
			tree_opts = 1;
			break;
		case OPT_JOBS:
			if (cli_parse_jobs(optarg, &jobs))
				return cli_bad_jobs("sync", optarg);
			tree_opts = 1;
			break;
		case 'h':
			usage(stdout);
			return FK_EXIT_OK;
		default:
			return cli_option_error("sync", c, argv, longopts);
		}
	}
	/* GNU sync's refusals, in its words: one line, exit 1. */
	if (data && file_system) {
		sync_error("cannot specify both --data and --file-system");
		return FK_EXIT_FAILURE;
	}
	if (data && optind >= argc) {
		sync_error("--data needs at least one argument");
		return FK_EXIT_FAILURE;
	}
	if (file_system) {
		if (method_given && method != FK_SYNC_SYNCFS)
			return cli_usage_error("sync",
					       "--file-system is "
					       "--method=syncfs, not "
					       "--method=%s",
					       fk_sync_method_name(method));
		method = FK_SYNC_SYNCFS;
	}
	if (optind >= argc) {
		/* GNU sync without a FILE: sync(2) of every file system.
		 * It returns no error, so there is nothing to summarize:
		 * flushkit's options want a PATH. */
		if (method_given || tree_opts || json || summary ||
		    force_progress)
			return cli_usage_error("sync", "missing PATH operand");
		sync();
		return FK_EXIT_OK;
	}

	cli_raise_nofile();
	int mode = method == FK_SYNC_SYNCFS ? SYNC_FS
		   : data		    ? SYNC_DATA
					    : SYNC_FILE;
	struct fk_tree_stats own = {0};
	int own_r = 0;
	/* Each operand opened as GNU sync opens it: one that cannot be is
	 * named and left out, the others still synced; a directory's
	 * tree goes to fk_tree_sync, any other file is synced through the
	 * descriptor, as GNU. */
	char **dirs = calloc((size_t)(argc - optind), sizeof(*dirs));
	size_t nr_dirs = 0;
	if (!dirs) {
		sync_error("%s", strerror(ENOMEM));
		return FK_EXIT_FAILURE;
	}
	for (int i = optind; i < argc; i++) {
		struct stat sb;
		int fd = open_operand(argv[i]);
		if (fd < 0) {
			own.errors++;
			own_r = own_r ? own_r : -ENOENT;
			continue;
		}
		if (fstat(fd, &sb) < 0) {
			int err = errno;
			sync_path_error("cannot stat", argv[i], err);
			close(fd);
			own.errors++;
			own_r = own_r ? own_r : -err;
			continue;
		}
		if (S_ISDIR(sb.st_mode)) {
			close(fd);
			dirs[nr_dirs++] = argv[i];
			continue;
		}
		int r = sync_operand(fd, argv[i], &sb, mode, &own);
		if (r < 0 && !own_r)
			own_r = r;
	}

	struct fk_tree_stats st = {0};
	struct cli_tree_errors errs = {0};
	struct progress prog = {.start_ns = fk_now_ns()};
	int r = 0;
	if (nr_dirs) {
		struct fk_tree_opts o;
		fk_tree_opts_init(&o);
		o.sync_method = method;
		o.sync_io = sync_io;
		o.sync_jobs = jobs;
		o.report = cli_tree_report; /* names quoted: one line each */
		o.report_arg = &errs;
		if (force_progress || (!quiet && cli_progress_wanted(0))) {
			o.progress = show_progress;
			o.progress_arg = &prog;
		}
		r = fk_tree_sync((const char *const *)dirs, nr_dirs, &o, &st);
		if (prog.shown)
			fputc('\n', stderr);
		/* Belt and braces: an error reported is a failure,
		 * whatever r. */
		if (r >= 0 && st.errors)
			r = -EIO;
		if (r == -FK_EDEGRADED)
			cli_warn("durability degraded: fsync not supported by "
				 "the file system of some directory or file");
		else if (r < 0 && !st.errors)
			cli_error("sync: %s", fk_strerror(r));
	}
	free(dirs);
	add_stats(&st, &own);
	/* The operands' own failures count as the tree's do. */
	if (own_r && (r == 0 || r == -FK_EDEGRADED))
		r = own_r;

	if (json)
		print_json(method, r, &st, argv + optind, argc - optind, &errs);
	else if (summary)
		print_text(method, r, &st);
	fflush(stdout);
	int exit_code = cli_tree_exit(r);
	if (!json && !summary && !quiet && isatty(STDERR_FILENO)) {
		/* As cp: on a terminal, one result line on stderr. */
		char b[32];
		fprintf(stderr,
			"flushkit sync: %s (method %s): %llu %s, %s, %.3f s\n",
			cli_tree_result(exit_code), fk_sync_method_name(method),
			(unsigned long long)st.files,
			st.files == 1 ? "file" : "files",
			cli_human_bytes(st.bytes, b, sizeof(b)),
			cli_secs(st.total_ns));
	}
	json_object_put(errs.list);
	return exit_code;
}
