/* SPDX-License-Identifier: MIT */
/*
 * results.h - benchmark result files: one JSON object per line.
 *
 * Every "flushkit bench ..." run writes DIR/BENCH-YYYYMMDD-HHMMSS-PID.jsonl
 * (DIR default "results"), which "flushkit report" turns into plots.
 * Each line is {"type": T, ...} with T one of:
 *   flushkit    the version and the command line (once, first)
 *   clock       the wall-clock time of t_s = 0
 *   settings    the benchmark's options (once)
 *   env         kernel, dirty-writeback sysctls, file system, disks (once)
 *   progress    one per progress interval: t_s, tps, lat_avg_ms, ...
 *   monitor     one per monitor interval: dirty_kb, writeback_kb, and the
 *               first disk's write_ios, write_kb, ... in that interval
 *   checkpoint  one per checkpoint: start_s, end_s, buffers, write_s, ...
 *   window      bench neighbor: the neighbour's start_s, end_s (once)
 *   summary     the run's totals (once, last)
 * The fields and units are in docs/report.md.  Times "t_s", "start_s",
 * "end_s" are seconds since the result's clock started (results_open, or
 * results_reset_clock when the measured run begins).
 *
 * Usage in a benchmark:
 *	struct result_file *rf;
 *	results_open(dir, "tpcb", &rf);
 *	results_write(rf, "settings", settings_obj);
 *	results_env(rf, paths, nr_paths);
 *	results_reset_clock(rf);		(the measured run starts)
 *	results_monitor_start(rf, paths, nr_paths, 1000);
 *	... results_progress(), results_checkpoint() as the run goes ...
 *	results_summary(rf, summary_obj, error);	(NULL: the run is good)
 *	results_close(rf);
 *
 * A run that failed (an I/O error, a store that stopped, clients that
 * died) is marked so in its summary ("status": "failed", "error": why);
 * a good one has "status": "ok".  Readers (results_read, then
 * results_failed on the summary) keep failed runs out of comparisons.
 *
 * Every function may be called from any thread (a mutex orders lines).
 * Lines are flushed as written, so a crashed run leaves its lines up to
 * the crash (and at most a torn last line), but no summary.
 */
#ifndef FK_RESULTS_H
#define FK_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "flushkit.h"

struct result_file;

/*
 * Create DIR (@dir, NULL for "results"; mode 0755, with its missing
 * parents: cli_mkdir_parents) if missing, and in it a new file
 * BENCH-YYYYMMDD-HHMMSS-PID.jsonl (local time; mode 0644; never overwrites:
 * O_EXCL).  Returns 0 or -errno (the caller prints "flushkit: open 'DIR':
 * ...").
 */
int results_open(const char *dir, const char *bench, struct result_file **out);
/*
 * The default output directory of a command that writes several files
 * (bench series, bench neighbor, reproduce): "results/BENCH-YYYYMMDD-
 * HHMMSS" (local time, the stamp of results_open's file names) into
 * @buf, @len bytes; "results" is made (0755) if missing, the directory
 * itself is left to the caller (its own rules: new, empty, reused).
 * Returns 0, or -ENAMETOOLONG (@buf holds a cut name).
 */
int results_default_dir(const char *bench, char *buf, size_t len);
/* The file's path ("results/tpcb-20261129-185000-4242.jsonl"). */
const char *results_path(const struct result_file *rf);

/* Make "now" t_s = 0 (call when the measured run starts). */
void results_reset_clock(struct result_file *rf);
/* Seconds since the clock started. */
double results_elapsed_s(struct result_file *rf);
/* A CLOCK_MONOTONIC time in ns (fk_now_ns, fk_checkpoint_info) as t_s. */
double results_mono_s(struct result_file *rf, uint64_t mono_ns);

/*
 * Write one line {"type": @type, ...the members of @obj...}.  Takes
 * ownership of @obj (a json object; NULL writes just the type).
 * Returns 0 or -errno of the write (also remembered for results_close).
 */
int results_write(struct result_file *rf, const char *type,
		  struct json_object *obj);

/*
 * The "summary" line (the run's totals, once, last): @obj (ownership
 * taken) plus "status": "ok" when @error is NULL, else "status":
 * "failed" and "error": @error (what stopped the run, as printed:
 * "client 0: commit: Input/output error").  Returns as results_write.
 */
int results_summary(struct result_file *rf, struct json_object *obj,
		    const char *error);

/* A "progress" line.  Pass a negative @lat_max_ms if not measured. */
int results_progress(struct result_file *rf, double t_s, double tps,
		     double lat_avg_ms, double lat_stddev_ms,
		     double lat_max_ms);
/* The same with the members of @extra (consumed; NULL: none) added:
 * bench tpcb's fsync request queue fill ("fsyncq_queued",
 * "fsyncq_capacity", "backend_fsyncs": cumulative since the run began). */
int results_progress_ex(struct result_file *rf, double t_s, double tps,
			double lat_avg_ms, double lat_stddev_ms,
			double lat_max_ms, struct json_object *extra);
/* A "checkpoint" line from the store's on_checkpoint callback. */
int results_checkpoint(struct result_file *rf,
		       const struct fk_checkpoint_info *ci);

/* An "env" line for the file systems and disks under @paths. */
int results_env(struct result_file *rf, const char *const *paths,
		size_t nr_paths);

/*
 * Start a thread that samples the disks under @paths (fk_monitor) every
 * @interval_ms (>= 100) and writes a "monitor" line per sample, from
 * now until results_monitor_stop or results_close.  Returns 0 or -errno
 * (-EINVAL bad interval, -EBUSY already running, errors of
 * fk_monitor_add_path or pthread_create).
 */
int results_monitor_start(struct result_file *rf, const char *const *paths,
			  size_t nr_paths, uint64_t interval_ms);
/* Stop the sampler thread (takes a last sample first).  Idempotent. */
void results_monitor_stop(struct result_file *rf);

/*
 * Stop the sampler, fsync and close the file, free @rf.  Returns 0 or
 * the first -errno of any write, the fsync or the close.
 */
int results_close(struct result_file *rf);

/* ---- reading ----------------------------------------------------------- */

/* What results_read found besides the lines. */
struct results_read_info {
	size_t lines;	  /* result lines passed to the callback */
	size_t torn_line; /* number of a last line that was skipped (not a
			   * result line: a run cut off while writing it),
			   * or 0 */
	char why[512];	  /* on -EINVAL: "PATH:LINE: what is wrong" */
};

/*
 * Read the result file @path (the one reader of the format): call
 * @fn(@arg, type, line) for each result line, in order.  A result line
 * is one JSON object with a string member "type" on one line; blank
 * lines are skipped, and so is a last line that is not one (a torn
 * write of a crashed run: reported in @info->torn_line).  Anything else
 * is not a result file: an empty file, a first line that is not a
 * result line (/etc/passwd, a truncated JSON line), a bad line before
 * the last.  Returns 0; -EINVAL for a file that is not a result file
 * (@info->why names the path and line); -errno of open or read
 * (@info->why: "read 'PATH': ..."); -ENOMEM; or the first negative
 * return of @fn, which stops the reading.  @info is always filled.
 */
int results_read(const char *path,
		 int (*fn)(void *arg, const char *type,
			   struct json_object *line),
		 void *arg, struct results_read_info *info);

/*
 * Whether the "summary" line @summary is that of a failed run: "status"
 * "failed" (the writer's mark), or in a file from before that mark a
 * non-zero "exit_status" (bench tpcb) or "errors" (bench fsmark).
 * Returns 1 and the reason in @why ("failed: client 0: commit:
 * Input/output error"), or 0 for a good run.
 */
int results_failed(struct json_object *summary, char *why, size_t len);

/* ---- the one JSON style ------------------------------------------------- */

/*
 * The style of every --json output and every result file line: one
 * object per line, no escaped slashes ("/var/tmp", not "\/var\/tmp"),
 * numbers through results_json_double.
 */
#define RESULTS_JSON_FLAGS                                                     \
	(JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
/* Print @o in that style and a newline on stdout (ownership kept). */
void results_json_print(struct json_object *o);

/*
 * Remember the command line (@argc, @argv of main) for the "flushkit"
 * line results_open writes first into every result file: {"type":
 * "flushkit", "version": fk_version(), "command": "flushkit bench tpcb
 * -c 8 ...", "argv": [...]}.  Not thread-safe; call once from main.
 */
void results_set_command(int argc, char **argv);

/*
 * Whether a settings key may tell runs apart in labels ("flush",
 * "clients"), unlike those naming files, seeds or times ("data_dir",
 * "latency_log", "seed").  Shared by report and compare.
 */
int results_label_key(const char *key);

/* ---- shared with "flushkit monitor" ------------------------------------ */

/* A JSON number printed with at most @decimals decimals ("1.5", not
 * "1.5000000000000002"); NaN and infinities become null. */
struct json_object *results_json_double(double v, int decimals);

/* The "env" object (without "type") for @paths. */
struct json_object *results_env_json(const char *const *paths, size_t nr_paths);
/*
 * The "monitor" object (without "type") of sample @cur, with the device
 * counters as differences from @prev (NULL: the first sample, interval
 * 0, differences 0) and @t_s as its time.
 */
struct json_object *results_sample_json(const struct fk_monitor *m,
					const struct fk_monitor_sample *prev,
					const struct fk_monitor_sample *cur,
					double t_s);

#endif
