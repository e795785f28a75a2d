// SPDX-License-Identifier: MIT
/*
 * stats.c - mean, standard deviation and the two-standard-error
 * comparison of repeated benchmark runs.
 *
 * A benchmark run is one sample of a noisy process; a difference
 * between two configurations means something only when it stands out
 * of that noise.  The sync(2) timing study of 2011 marked each
 * difference "+", "-" or "0" by whether it exceeded two standard
 * deviations; we use the standard error of the difference of two means
 * with unequal variances (Welch): 2*sqrt(sA^2/nA + sB^2/nB).
 *
 * Interface routines: fk_stats_summarize(), fk_stats_compare().
 */
#include "flushkit.h"

#include <math.h>

void fk_stats_summarize(const double *values, size_t nr,
			struct fk_stats_summary *out)
{
	uint64_t n = 0;
	double mean = 0, m2 = 0;

	for (size_t i = 0; i < nr; i++) {
		double v = values[i];

		if (!isfinite(v))
			continue;
		n++;
		double d = v - mean;
		mean += d / (double)n;
		m2 += d * (v - mean);
	}
	out->n = n;
	out->mean = mean;
	out->stddev = n >= 2 ? sqrt(m2 / (double)(n - 1)) : 0;
}

int fk_stats_compare(const struct fk_stats_summary *a,
		     const struct fk_stats_summary *b, double *threshold)
{
	if (a->n < 2 || b->n < 2) {
		if (threshold)
			*threshold = NAN;
		return FK_STATS_UNKNOWN;
	}
	double t = 2 * sqrt(a->stddev * a->stddev / (double)a->n +
			    b->stddev * b->stddev / (double)b->n);
	double d = b->mean - a->mean;

	if (threshold)
		*threshold = t;
	if (d > t)
		return FK_STATS_HIGHER;
	if (-d > t)
		return FK_STATS_LOWER;
	return FK_STATS_SAME;
}
