/* SPDX-License-Identifier: MIT */
/*
 * flushkit/stats.h - section 6 of <flushkit.h>, stats:
 * struct fk_hist and the two-standard-error comparison.
 *
 * Part of <flushkit.h>, which includes every section in layer order
 * (its opening comment lists them, with the conventions they follow),
 * inside its extern "C" and after FK_API and the error codes: include
 * <flushkit.h>, not this file.
 */
#ifndef FLUSHKIT_STATS_H
#define FLUSHKIT_STATS_H

#ifndef FLUSHKIT_H
#error "include <flushkit.h>, not <flushkit/stats.h>"
#endif

/* ===================================================================
 * 6. Stats
 * =================================================================== */

/* SECTION stats */
/*
 * struct fk_hist - latency histogram with bounded relative error
 * (log-linear buckets, as HdrHistogram): percentiles without storing
 * every sample.  Values are microseconds.  Values below 128 us are
 * exact; above, each power-of-two range is split into 64 buckets, so a
 * percentile is at most 1/64 (1.6%) above the true value and never
 * below it.  Values up to 2^36 us (19 hours) are resolved; larger ones
 * share the last bucket.  count, min_us, max_us, sum and sumsq are
 * exact (sum and sumsq as doubles), so mean, stddev, min and max are
 * exact.  About 16 KiB of buckets per histogram.
 *
 * Caller-allocated; fk_hist_init allocates the buckets, which
 * fk_hist_release frees.  Not thread-safe: one per thread, then
 * fk_hist_merge.  No I/O anywhere.
 */
struct fk_hist {
	uint64_t *buckets; /* private */
	uint32_t nr_buckets;
	uint64_t count;		 /* samples */
	uint64_t min_us, max_us; /* exact; 0 when empty */
	double sum, sumsq;	 /* of the values, us and us^2 */
};

/* fk_hist_init - an empty histogram.  Returns 0 or -ENOMEM. */
FK_API int fk_hist_init(struct fk_hist *h);
/* fk_hist_release - free the buckets (counters stay readable). */
FK_API void fk_hist_release(struct fk_hist *h);
/* fk_hist_reset - empty the histogram, keeping its buckets. */
FK_API void fk_hist_reset(struct fk_hist *h);
/* fk_hist_add - record one sample of @value_us microseconds.  O(1). */
FK_API void fk_hist_add(struct fk_hist *h, uint64_t value_us);
/* fk_hist_merge - add every sample of @src to @dst (@src unchanged):
 * the result is what one histogram fed with both would hold. */
FK_API void fk_hist_merge(struct fk_hist *dst, const struct fk_hist *src);
/*
 * fk_hist_percentile - the value at percentile @pct.
 * @pct: 0..100; 0 (or less, or NaN) gives min_us, 100 gives max_us.
 * Returns the smallest bucket bound with at least @pct% of the samples
 * at or below it (clamped to [min_us, max_us]): within +1.6% of the
 * exact percentile, never below it.  0 if the histogram is empty.
 * O(number of buckets).
 */
FK_API uint64_t fk_hist_percentile(const struct fk_hist *h, double pct);
/* fk_hist_mean - exact arithmetic mean, us; 0 if empty. */
FK_API double fk_hist_mean(const struct fk_hist *h);
/* fk_hist_stddev - exact population standard deviation, us (as
 * pgbench reports "latency stddev"); 0 if empty. */
FK_API double fk_hist_stddev(const struct fk_hist *h);

/* SECTION stats2 */
/*
 * Repeated runs and whether two sets of them differ by more than their
 * noise.  The rule of the sync(2) timing study (Linux, 2011) and of
 * pgbench-tools: a difference of the means counts only when it exceeds
 * two standard errors of the difference, 2*sqrt(sA^2/nA + sB^2/nB)
 * (Welch's standard error; about a 95% interval for normal data).
 * No I/O, no allocation; thread-safe (no shared state).
 */

/* The mean and spread of one side's runs. */
struct fk_stats_summary {
	uint64_t n;    /* values counted (finite ones only) */
	double mean;   /* arithmetic mean; 0 when n == 0 */
	double stddev; /* sample standard deviation (divides by
			* n - 1); 0 when n < 2 */
};

/* The verdict of fk_stats_compare (printable characters). */
enum fk_stats_marker {
	FK_STATS_HIGHER = '+',	/* B above A by more than the threshold */
	FK_STATS_LOWER = '-',	/* B below A by more than the threshold */
	FK_STATS_SAME = '0',	/* within the threshold: noise */
	FK_STATS_UNKNOWN = '?', /* a side has fewer than 2 runs: no
				 * standard deviation, no verdict */
};

/*
 * fk_stats_summarize - mean and sample standard deviation of @values.
 * @values: @nr values in any unit (borrowed); NaN and infinities are
 *      skipped (not counted in @out->n).  May be NULL when @nr is 0.
 * @out: filled.  Computed in one pass with Welford's update (Knuth,
 *      TAOCP vol. 2, 4.2.2), so values with a large common offset keep
 *      their precision.
 */
FK_API void fk_stats_summarize(const double *values, size_t nr,
			       struct fk_stats_summary *out);

/*
 * fk_stats_compare - does B differ from A by more than the noise?
 * @a, @b: the two sides (from fk_stats_summarize).
 * @threshold: if not NULL, set to 2*sqrt(sA^2/nA + sB^2/nB) (the
 *      units of the values), or NaN when the verdict is
 *      FK_STATS_UNKNOWN.
 * Returns FK_STATS_HIGHER if b->mean - a->mean > threshold,
 * FK_STATS_LOWER if a->mean - b->mean > threshold, FK_STATS_SAME
 * otherwise, and FK_STATS_UNKNOWN when a->n < 2 or b->n < 2 (one run
 * has no standard deviation).  Two sides without any spread and
 * different means compare as HIGHER/LOWER (threshold 0).
 */
FK_API int fk_stats_compare(const struct fk_stats_summary *a,
			    const struct fk_stats_summary *b,
			    double *threshold);

#endif /* FLUSHKIT_STATS_H */
