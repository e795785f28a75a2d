/* SPDX-License-Identifier: MIT */
/*
 * fktest.h - helpers shared by the test programs.
 *
 * Each test is its own program: exit 0 pass, 1 fail, 77 skip.  CHECK()
 * prints file:line and the failed expression and marks the test failed
 * (it goes on, so one run shows every failure); fkt_done() exits with the
 * right status.
 */
#ifndef FKTEST_H
#define FKTEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int fkt_failures;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			fkt_failures++;                                        \
		}                                                              \
	} while (0)

#define CHECK_EQ(a, b)                                                         \
	do {                                                                   \
		long long a_ = (long long)(a), b_ = (long long)(b);            \
		if (a_ != b_) {                                                \
			fprintf(                                               \
			    stderr,                                            \
			    "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n",  \
			    __FILE__, __LINE__, #a, #b, a_, b_);               \
			fkt_failures++;                                        \
		}                                                              \
	} while (0)

#define SKIP(...)                                                              \
	do {                                                                   \
		fprintf(stderr, "SKIP: " __VA_ARGS__);                         \
		fputc('\n', stderr);                                           \
		exit(77);                                                      \
	} while (0)

/* Exit 0 if no CHECK failed, else 1. */
int fkt_done(void);

/* Make a fresh temporary directory (under $TMPDIR or /var/tmp, which is
 * disk-backed, not tmpfs); removed at exit unless FKT_KEEP is set. */
const char *fkt_tmpdir(void);
/* Remove a tree (test use only). */
int fkt_rm_rf(const char *path);
/* Write a file with @len bytes of pattern @seed.  Returns 0 or -errno. */
int fkt_write_file(const char *path, uint64_t len, unsigned seed);
/* Read a whole small file; caller frees.  NULL on error. */
char *fkt_read_file(const char *path, size_t *len);
/* 1 if running as root. */
int fkt_is_root(void);
/* Run a shell command (test setup only, fixed strings); returns exit status. */
int fkt_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Run the command entry @fn (cmd_bench_tpcb, cmd_report, ...) in-process
 * with the NULL-terminated @argv, its stdout and stderr captured (in
 * files of fkt_tmpdir); *@out and *@err (caller frees; never NULL) get
 * what it printed.  Returns its exit status.  Not thread-safe.
 */
int fkt_run_cmd(int (*fn)(int, char **), char *const *argv, char **out,
		char **err);

/*
 * Run @fn in-process with the arguments @a0, ... (NULL-terminated; at
 * most 31), its stderr into @errfile (created 0600, truncated) unless
 * @errfile is NULL; stdout is left alone.  Returns its exit status.
 */
int fkt_run_cmd_err(int (*fn)(int, char **), const char *errfile,
		    const char *a0, ...);

/* The seed of the test's random draws: $FK_TEST_SEED, else time and
 * pid; printed as "seed N (FK_TEST_SEED)" so a failure can be replayed. */
unsigned fkt_test_seed(void);

/*
 * fkt_run_cmd with the arguments @a0, ... (NULL-terminated; at most 39)
 * in place of an argv; what *@out and *@err held before (NULL or an
 * earlier call's output) is freed first.  Returns its exit status.
 */
int fkt_run_cmdl(int (*fn)(int, char **), char **out, char **err,
		 const char *a0, ...);

/*
 * Run @fn in-process with @argc and @argv, its stdout and stderr into
 * @out and @err (each up to @len - 1 bytes, NUL-terminated; the rest is
 * cut) through unlinked temporary files of fkt_tmpdir.  Returns its
 * exit status.  Not thread-safe.
 */
int fkt_run_cmd_buf(int (*fn)(int, char **), int argc, const char **argv,
		    char *out, char *err, size_t len);

/* The string member @k of the JSON object @o (may be NULL), "" if it
 * has none.  Valid while @o is. */
struct json_object;
const char *fkt_json_str(struct json_object *o, const char *k);

/* Result files (cli/results.h): the last "summary" line of @path
 * (caller json_object_put), or NULL if it has none. */
struct json_object;
struct json_object *fkt_result_summary(const char *path);
/* The path of the one *.jsonl in @dir, into @out.  Returns how many
 * there are (1 when @out is set). */
int fkt_only_result(const char *dir, char *out, size_t len);

/*
 * Store log capture: fkt_store_log is an fk_store_opts.log callback that
 * keeps the store's lines, newline-separated (up to 64 KiB; a line that
 * does not fit is dropped), from any thread.  With a non-NULL log_arg it
 * also prints each line to stderr as "  store: LINE".
 */
void fkt_store_log(void *arg, const char *line);
/* 1 if a kept line contains @s. */
int fkt_store_log_has(const char *s);
/* The number of kept lines that contain @s. */
int fkt_store_log_count(const char *s);
/* A copy of the kept lines, taken under the lock (the store's threads
 * may log meanwhile); caller frees.  NULL without memory. */
char *fkt_store_log_copy(void);
/* Forget the kept lines. */
void fkt_store_log_clear(void);
/* The kept lines (valid until the next line or clear). */
const char *fkt_store_log_text(void);

/*
 * Call tracing through the syscall table.  fkt_trace_start() replaces the
 * durability-relevant entries (fsync, fdatasync, sync_file_range, fadvise,
 * syncfs, pwrite, write, copy_file_range, renameat, close, openat,
 * futimens) with recorders that log "op path" (path from /proc/self/fd)
 * and then call the real entry or an injected fault.  Thread-safe.
 */
struct fkt_call {
	char op[24];
	char path[512];
	int fd;
	uint64_t off, len;
	int ret;
};

void fkt_trace_start(void);
void fkt_trace_stop(void); /* restore the default table */
/* Forget the calls recorded so far, keep recording.  The table itself
 * is a plain global: swap it (start, stop) only while no thread of a
 * store or batch may call through it (before open, after close), and
 * clear in between. */
void fkt_trace_clear(void);
size_t fkt_trace_count(void);
const struct fkt_call *fkt_trace_get(size_t i);
/* Index of the first call with @op whose path ends with @suffix (NULL:
 * any path), starting at @from; -1 if none. */
long fkt_trace_find(const char *op, const char *suffix, size_t from);
/* Number of calls of @op whose path ends with @suffix (NULL: any). */
size_t fkt_trace_nr(const char *op, const char *suffix);
void fkt_trace_dump(FILE *f);

/*
 * Fault injection on top of tracing: the @nth (1-based; 0 = every) call
 * of @op whose path ends with @suffix (NULL: any) returns @err (negative
 * errno) without calling the real entry.  One fault at a time.
 */
void fkt_fault_set(const char *op, const char *suffix, unsigned nth, int err);
void fkt_fault_clear(void);
/* How many times the fault fired. */
unsigned fkt_fault_fired(void);

/*
 * A listing of everything under @dir, one line per entry in name order:
 * "RELPATH TYPE MODE SIZE MTIME_NS FNV64" (the checksum of a regular
 * file's bytes, 0 for others), to show a directory unchanged by
 * comparing two listings.  Caller frees; NULL if @dir cannot be read.
 * Test use only (no syscall table).
 */
char *fkt_dir_digest(const char *dir);
#endif
