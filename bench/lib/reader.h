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
	int checkpoint; /* "checkpoint": 1 one ran in the interval, 0 none,
			 * -1 the line does not say */
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
 * line types are skipped: newer writers may add some).  A summary
 * without "stall_ratio" (a peer's result file) gets the stall figures
 * computed from the progress lines (results_stall_ratio over the full
 * one-second lines, a line's checkpoint mark its "checkpoint" member,
 * else the checkpoint lines' start_s..end_s), and "stall_computed":
 * true.  Returns 0 or
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
 * stalls; checkpoint stalls pull it down), over the measurement window:
 * the run's full seconds after a warm-up (results_stall_warmup: the
 * first tenth of them rounded up, at least 1 s and at most 10 s: the
 * clients' start and the first touches of the buffer pool, not the
 * flushing under test).  The median is the conventional one: the middle
 * value of the sorted window, the mean of the two middle ones for an
 * even count.  Beside it the pair that says whether the worst seconds
 * are the checkpoints': the worst second among those a checkpoint ran
 * in (any part of the second) and the worst among the others, each
 * over the same median.
 */
struct results_stall {
	size_t warmup_s;     /* seconds left out at the start */
	size_t seconds;	     /* in the window */
	int ckpt_known;	     /* the checkpoint marks were given */
	size_t ckpt_seconds; /* of the window's, with a checkpoint running */
	/* over the window; NAN when it is empty; ratio 0 for a zero median */
	double ratio, worst, median;
	/* the window's seconds with a checkpoint running: NAN without one
	 * (or without marks) */
	double ratio_ckpt, worst_ckpt;
	/* the others: NAN when a checkpoint ran in every second */
	double ratio_outside, worst_outside;
};

/* The warm-up of a run of @n full seconds (see above). */
size_t results_stall_warmup(size_t n);

/* results_stall_ratio's @warmup_s for a run: results_stall_warmup(n) */
#define RESULTS_STALL_WARMUP_RUN ((size_t)-1)

/*
 * Fill @st from the one-second tps values @tps[0..@n) of a run (second
 * i covers [i, i + 1) s from its start) and @ckpt[0..@n) (nonzero: a
 * checkpoint ran during second i; NULL: not known, the pair is NAN),
 * leaving out the first @warmup_s seconds: RESULTS_STALL_WARMUP_RUN
 * for a run's (bench tpcb, a peer's result), 0 for a window that is
 * already the measurement (bench neighbor's).  @tps is not changed.
 * Returns 0, or -ENOMEM (@st then all NAN).
 */
int results_stall_ratio(const double *tps, const unsigned char *ckpt, size_t n,
			size_t warmup_s, struct results_stall *st);

/*
 * Mark in @ckpt[0..@n) the seconds [i, i + 1) that overlap a
 * checkpoint running from @start_s to @end_s (seconds from the run's
 * start; a checkpoint still running: @end_s the run's end).
 */
void results_stall_mark(unsigned char *ckpt, size_t n, double start_s,
			double end_s);

/*
 * Add the stall figures of @st to the summary object @o, as bench tpcb
 * writes them: stall_ratio, worst_second_tps, median_second_tps,
 * stall_warmup_s, stall_seconds, checkpoint_seconds,
 * stall_ratio_checkpoint, worst_second_tps_checkpoint,
 * stall_ratio_outside, worst_second_tps_outside (null where NAN; the
 * two checkpoint_seconds-based ones left out without marks).  0 or
 * -ENOMEM.
 */
int results_stall_json(struct json_object *o, const struct results_stall *st);

#endif
