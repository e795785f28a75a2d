/* SPDX-License-Identifier: MIT */
/*
 * reader.h - the one reader of benchmark result files (the schema of
 * docs/report.md, written by results.h): a file's lines into one struct
 * result_run, what a result directory holds, and the one definition of
 * the stall ratio.  "flushkit report", "flushkit compare" and "bench
 * series" read result files only through this; "bench tpcb" computes
 * its summary's stall ratio with results_stall_ratio.
 *
 *	struct result_run r;
 *	if (result_run_load(path, &r))		(r.info.why says why)
 *		...;
 *	if (result_run_refused(&r, why, sizeof(why)))	(no summary, failed)
 *		...;
 *	... r.summary, r.prog[0..nr_prog), r.ck, r.mon, r.settings ...
 *	result_run_release(&r);
 */
#ifndef FK_BENCH_READER_H
#define FK_BENCH_READER_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "flushkit.h"
#include "results.h"

/* A "progress" line; NAN for a member the line does not have. */
struct result_progress {
	double t_s, tps, lat_avg_ms, lat_stddev_ms, lat_max_ms;
};

/* A "monitor" line (memory in KiB; the disk's counts in the interval,
 * NAN without a disk; @interval_s 0 if absent). */
struct result_monitor {
	double t_s, interval_s;
	double dirty_kb, writeback_kb;
	double dirty_threshold_kb, dirty_background_threshold_kb;
	double write_ios, write_kb;
};

/* A "checkpoint" line (seconds; counts -1 if absent). */
struct result_checkpoint {
	double start_s, end_s, write_s, sync_s, total_s, longest_s;
	int64_t buffers, files;
};

/* One result file, read. */
struct result_run {
	/* the first "settings" line, the last "env" and "summary" lines
	 * (NULL if none; references owned by the struct) */
	struct json_object *settings, *env, *summary;
	/* the "run" lines (bench sync: one per run), an array, maybe empty */
	struct json_object *runs;
	double epoch_s; /* the "clock" line's wall clock of t_s = 0, or 0 */
	struct result_progress *prog;
	size_t nr_prog;
	struct result_monitor *mon;
	size_t nr_mon;
	struct result_checkpoint *ck;
	size_t nr_ck;
	char dev[FK_DEVNAME_MAX]; /* the first monitor line's "dev", as
				   * written (not sanitized), or "" */
	int has_lat_max;	  /* a progress line has lat_max_ms */
	/* the last "window" line (bench neighbor: start_s and end_s of
	 * the window its summary is measured over, and what ran):
	 * has_window 0 if none */
	int has_window;
	double window_start_s, window_end_s;
	char window_what[64];
	struct results_read_info info; /* of results_read */
	/* private */
	size_t alloc_prog, alloc_mon, alloc_ck;
};

/*
 * Read the result file @path into @r (all of it zeroed first; unknown
 * line types are skipped: newer writers may add some).  Returns 0 or
 * the -errno of results_read (@r->info.why says what and where);
 * either way release @r with result_run_release.
 */
int result_run_load(const char *path, struct result_run *r);

/*
 * Whether @r is not a result to draw or compare: it has no summary
 * line (the run was killed, crashed or is still running) or the summary
 * is a failed run's (results_failed).  Returns 0, or 1 with @why: "no
 * summary line" or "a failed run (REASON)".
 */
int result_run_refused(const struct result_run *r, char *why, size_t len);

/* Free what @r holds (it may be zeroed or half-loaded); idempotent. */
void result_run_release(struct result_run *r);

/* Member @key of object @o as a number (int or double), else @def. */
double result_num(struct json_object *o, const char *key, double def);
/* Member @key of @o as a string, else NULL (@o may be NULL). */
const char *result_str(struct json_object *o, const char *key);

/*
 * The result files in directory @dir: the names (not paths) of its
 * entries "*.jsonl" not starting with '.', sorted (alphasort: the
 * time in their names sorts them by start), not recursively.  On
 * success *@names (free with results_list_free) and *@nr.  Returns 0
 * or -errno of opening the directory, -ENOMEM.
 */
int results_list(const char *dir, char ***names, size_t *nr);
void results_list_free(char **names, size_t nr);

/*
 * The stall ratio, bench tpcb's headline metric of smoothness: the
 * worst one-second tps divided by the median one-second tps (1 = no
 * stalls; checkpoint stalls pull it down).  The median is the
 * conventional one: the middle value of the sorted @n values, the mean
 * of the two middle ones for an even @n.  @tps is not changed.  Returns
 * the ratio (0 when the median is 0), or NAN for @n == 0 (no full
 * second) or on -ENOMEM; *@worst and *@median (either may be NULL) get
 * the two figures, NAN with the ratio's NAN.
 */
double results_stall_ratio(const double *tps, size_t n, double *worst,
			   double *median);

#endif
