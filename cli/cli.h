/* SPDX-License-Identifier: MIT */
/*
 * cli.h - shared declarations of the flushkit command.
 *
 * Each subcommand is one cmd-*.c exposing cmd_NAME(argc, argv); the
 * table in flushkit.c dispatches to it.  Subcommands print results on
 * stdout, diagnostics on stderr ("flushkit: OP 'PATH': ERROR"), and
 * return an exit status.
 */
#ifndef FK_CLI_H
#define FK_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "flushkit.h"

/* Exit statuses, shared by every subcommand. */
enum {
	FK_EXIT_OK = 0,
	FK_EXIT_FAILURE = 1,
	FK_EXIT_USAGE = 2, /* cp and sync: 1, as GNU's (cli_usage_status) */
	/* Completed, but some directory fsync was not supported by the
	 * file system (CIFS, some FUSE): durability degraded. */
	FK_EXIT_DEGRADED = 3,
};

int cmd_sync(int argc, char **argv);
int cmd_cp(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_reproduce(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_bench_fsmark(int argc, char **argv);
int cmd_bench_tpcb(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_bench_sync(int argc, char **argv);
int cmd_bench_series(int argc, char **argv);
int cmd_bench_neighbor(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_disk(int argc, char **argv); /* disk/cmd-disk.c */

/*
 * Usage errors: one voice for every command (as GNU's tools).  A usage
 * error is two lines on stderr, nothing on stdout, and exit 2:
 *
 *   flushkit CMD: MESSAGE
 *   Try 'flushkit CMD --help' for more information.
 *
 * @cmd is the command's words ("sync", "bench tpcb"), NULL for the
 * top-level command ("flushkit: MESSAGE", "Try 'flushkit --help' ...").
 * One wording per kind of mistake:
 *   unrecognized option '--foo'          invalid option -- 'x'
 *   option '--foo' requires an argument  option requires an argument -- 'x'
 *   option '--foo' doesn't allow an argument
 *   option '--fo' is ambiguous
 *   invalid value 'X' for --opt (WHAT IS ALLOWED)
 *   missing PATH operand                 extra operand 'X'
 * Each returns the command's usage-error status (cli_usage_status), so
 * a parser says "return cli_...(...)".
 */
/* The exit status of a usage error of command @cmd: FK_EXIT_USAGE (2),
 * except for "cp" and "sync", drop-ins for GNU cp and sync, which exit
 * 1 as GNU's do (coreutils' usage(EXIT_FAILURE)). */
int cli_usage_status(const char *cmd);
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The second line alone, after a first line the caller printed (and
 * what else it must show, as bench tpcb's list of builtin scripts). */
int cli_usage_try(const char *cmd);
/*
 * getopt_long's mistakes, worded as above: @c is what getopt_long
 * returned ('?' or ':'; the option string must start with ':', after a
 * '+' if any, so that a missing argument is ':' and getopt itself
 * prints nothing), @longopts the table it was given.  Reads optind and
 * optopt.
 */
struct option;
int cli_option_error(const char *cmd, int c, char *const *argv,
		     const struct option *longopts);
/* "invalid value 'VAL' for OPT" and, when @hint_fmt is not NULL,
 * " (HINT)": what is allowed ("auto, twopass, fsync or syncfs"). */
int cli_bad_value(const char *cmd, const char *opt, const char *val,
		  const char *hint_fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Print "flushkit: MESSAGE\n" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "flushkit: warning: MESSAGE\n" on stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * An fk_report_fn that prints "flushkit: OP 'PATH': strerror" (warnings
 * prefixed "warning: ") on stderr.  @arg is unused.
 */
void cli_report(void *arg, int level, const char *op, const char *path,
		int err);

/* File names for people and for JSON (cli-path.c).  cli_path_quote: a
 * malloc'ed copy with control characters, backslash and bytes that are
 * not UTF-8 as C escapes ("\n", "\\", "\xff"), so a message stays one
 * line.  cli_path_utf8: a malloc'ed copy that is valid UTF-8 (bad bytes
 * become U+FFFD), as JSON strings must be.  NULL on ENOMEM.
 * cli_report_path: cli_report with the path quoted. */
char *cli_path_quote(const char *path);
char *cli_path_utf8(const char *path);
void cli_report_path(void *arg, int level, const char *op, const char *path,
		     int err);

/*
 * Parse a size with an optional binary suffix: 512, 4k, 256KiB, 16M,
 * 1G, 2T (case-insensitive; "kB" also means 1024 as in PostgreSQL).
 * Returns 0 or -EINVAL.
 */
int cli_parse_size(const char *s, uint64_t *out);
/* Parse a non-negative integer. Returns 0 or -EINVAL. */
int cli_parse_u64(const char *s, uint64_t *out);
/*
 * The one parser of a comma-separated list of positive integers
 * (bench series --scales and --clients, bench sync --fs-count): "1,4,8"
 * into @out[0..*@nr).  An empty element ("1,,2", ",1", "1,", "") or a
 * word that is no positive integer is -EINVAL; a value given twice
 * ("1,1") is -EEXIST with *@dup set to it; more than @max values is
 * -E2BIG.  *@nr is set only when it returns 0.
 */
int cli_parse_u64_list(const char *s, uint64_t *out, int max, int *nr,
		       uint64_t *dup);
/*
 * The one parser of a non-negative decimal number for every option that
 * takes one (a fraction, a rate, a latency, a duration's number): digits
 * with an optional fraction and exponent ("0.9", ".5", "1e-3", "2.");
 * nothing before or after it.  No sign, no hex float ("0x1p-1"), no
 * "inf" or "nan", no white space, none out of a double's range (strtod
 * takes them all).  Returns 0 (*@out set) or -EINVAL.
 */
int cli_parse_decimal(const char *s, double *out);
/* Parse a duration: "30", "30s", "500ms", "2min", "1.5s" (the number as
 * cli_parse_decimal).  Returns 0 or -EINVAL. */
int cli_parse_duration_ms(const char *s, uint64_t *out_ms);

/* Parse on|off|true|false|yes|no|1|0 into *@out (1 or 0).  Returns 0 or
 * -EINVAL. */
int cli_parse_bool(const char *s, int *out);

/*
 * The one parser of --sync-io=IO (how a batch of fsyncs is issued:
 * "auto", "uring", "threads" or "sequential"), for every command that
 * takes it.  Returns the enum fk_sync_io (>= 0) or -EINVAL.
 */
int cli_parse_sync_io(const char *s);
/*
 * The one parser of --jobs=N (fsyncs in flight at most: 1 ..
 * FK_FSYNC_BATCH_MAX_QUEUE_DEPTH; bench fsmark's --queue-depth is an
 * alias).  Returns 0 (*@out set) or -EINVAL.
 */
int cli_parse_jobs(const char *s, uint32_t *out);
/* The one message for a bad --sync-io or --jobs value of command @cmd
 * ("cp", "bench tpcb"), a usage error as cli_bad_value: "invalid value
 * 'X' for --sync-io (auto, uring, threads or sequential)", "invalid
 * value 'X' for --jobs (1..4096)".  Both return cli_usage_status(cmd). */
int cli_bad_sync_io(const char *cmd, const char *val);
int cli_bad_jobs(const char *cmd, const char *val);

/*
 * mkdir -p: create @path and each missing parent with @mode (through
 * cli_sys.mkdirat, so tests can fail it).  A component that exists must
 * be a directory (or a symlink to one, as mkdir -p follows).  Returns 0
 * or -errno; on failure *@failed (if not NULL) points into a static
 * copy of the prefix that failed, for the message.
 */
int cli_mkdir_parents(const char *path, mode_t mode, const char **failed);

/* Format bytes as "1.5 GiB" into buf. Returns buf. */
const char *cli_human_bytes(uint64_t bytes, char *buf, size_t len);

/* 1 if progress should be shown: stderr is a terminal or forced. */
int cli_progress_wanted(int forced);

/*
 * Shared by "flushkit sync" and "flushkit cp" (cli-tree.c).
 */
/* Raise the soft RLIMIT_NOFILE to the hard limit, so that more written
 * files can keep their descriptor open until their fsync. */
void cli_raise_nofile(void);
/* Nanoseconds as seconds. */
double cli_secs(uint64_t ns);
/* Seconds as a JSON number with microsecond precision (a json-c object). */
struct json_object *cli_json_secs(uint64_t ns);
/* The backend of a tree operation's batched fsync phase, or "none". */
const char *cli_tree_sync_io(const struct fk_tree_stats *st);
/* Exit status for the result of fk_tree_sync/fk_tree_copy. */
int cli_tree_exit(int r);
/* "ok", "degraded" or "failed" for an exit status. */
const char *cli_tree_result(int exit_code);

/* Errors kept for the --json summary ("error_list"), the first
 * CLI_TREE_MAX_ERRORS of them. */
#define CLI_TREE_MAX_ERRORS 1000
struct cli_tree_errors {
	struct json_object *list; /* NULL until the first error */
	size_t nr;		  /* errors reported */
};
/* An fk_report_fn: prints as cli_report_path, and with @arg (a struct
 * cli_tree_errors, may be NULL) keeps each error as {"op", "path",
 * "errno", "error"}. */
void cli_tree_report(void *arg, int level, const char *op, const char *path,
		     int err);
/* Keep an error for the list as cli_tree_report does, without printing
 * it (for a caller with its own wording). */
void cli_tree_keep_error(struct cli_tree_errors *e, int level, const char *op,
			 const char *path, int err);
/* Add "error_list" (the errors kept, in order) and
 * "error_list_truncated" to the JSON object @o; @e's list goes to @o. */
void cli_tree_json_errors(struct json_object *o, struct cli_tree_errors *e);

#endif
