// SPDX-License-Identifier: MIT
/*
 * hist.c - latency histograms with bounded relative error.
 *
 * A benchmark records millions of latencies; storing them all to sort
 * for percentiles costs memory and time in the measured threads.  A
 * log-linear histogram (as HdrHistogram, Gil Tene, 2012) keeps a fixed
 * array of counters instead: values below 128 us each have their own
 * bucket; above, every power-of-two range [2^k, 2^(k+1)) is split into
 * 64 equal sub-buckets, so a bucket is never wider than 1/64 of its
 * lower bound and a percentile is reported within +1.6% (never below
 * the true value).  Count, sum, sum of squares, min and max are kept
 * exactly, so the mean, standard deviation, min and max are exact.
 *
 * Interface routines: fk_hist_init(), _release(), _reset(), _add(),
 * _merge(), _percentile(), _mean(), _stddev().
 *
 * Invariants:
 *   1. count == sum of buckets[] (when buckets is allocated).
 *   2. count == 0 implies min_us == max_us == 0, sum == sumsq == 0.
 *   3. Bucket i covers [lo(i), hi(i)] with hi(i) - lo(i) + 1 <=
 *      max(1, lo(i) / 64); values >= 2^MAX_BITS share the last,
 *      overflow bucket, whose upper bound is max_us (exact).
 */
#include "flushkit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUB_BITS 6 /* 64 sub-buckets per power of two */
#define SUB (1u << SUB_BITS)
#define MAX_BITS 36 /* 2^36 us: 19 hours */
/* Buckets for values below 2^MAX_BITS (the last one has shift
 * MAX_BITS-1-SUB_BITS, sub 2*SUB-1), plus one overflow bucket. */
#define NR_BUCKETS ((MAX_BITS - 1 - SUB_BITS) * SUB + 2 * SUB + 1)

static uint32_t bucket_of(uint64_t v)
{
	if (v >= (UINT64_C(1) << MAX_BITS))
		return NR_BUCKETS - 1;
	if (v < 2 * SUB)
		return (uint32_t)v;
	unsigned k = 63u - (unsigned)__builtin_clzll(v); /* >= SUB_BITS+1 */
	unsigned shift = k - SUB_BITS;
	return shift * SUB + (uint32_t)(v >> shift);
}

/* Highest value that falls in bucket @i. */
static uint64_t bucket_high(uint32_t i)
{
	if (i < 2 * SUB)
		return i;
	unsigned shift = i / SUB - 1;
	uint64_t sub = i - shift * SUB; /* SUB .. 2*SUB-1 */
	return ((sub + 1) << shift) - 1;
}

int fk_hist_init(struct fk_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->buckets = calloc(NR_BUCKETS, sizeof(h->buckets[0]));
	if (!h->buckets)
		return -ENOMEM;
	h->nr_buckets = NR_BUCKETS;
	return 0;
}

void fk_hist_release(struct fk_hist *h)
{
	free(h->buckets);
	h->buckets = NULL;
	h->nr_buckets = 0;
}

void fk_hist_reset(struct fk_hist *h)
{
	if (h->buckets)
		memset(h->buckets, 0, h->nr_buckets * sizeof(h->buckets[0]));
	h->count = 0;
	h->min_us = h->max_us = 0;
	h->sum = h->sumsq = 0.0;
}

void fk_hist_add(struct fk_hist *h, uint64_t value_us)
{
	if (h->buckets)
		h->buckets[bucket_of(value_us)]++;
	if (h->count == 0 || value_us < h->min_us)
		h->min_us = value_us;
	if (h->count == 0 || value_us > h->max_us)
		h->max_us = value_us;
	h->count++;
	double v = (double)value_us;
	h->sum += v;
	h->sumsq += v * v;
}

void fk_hist_merge(struct fk_hist *dst, const struct fk_hist *src)
{
	if (src->count == 0)
		return;
	if (dst->buckets && src->buckets) {
		uint32_t n = dst->nr_buckets < src->nr_buckets
				 ? dst->nr_buckets
				 : src->nr_buckets;
		for (uint32_t i = 0; i < n; i++)
			dst->buckets[i] += src->buckets[i];
	}
	if (dst->count == 0 || src->min_us < dst->min_us)
		dst->min_us = src->min_us;
	if (dst->count == 0 || src->max_us > dst->max_us)
		dst->max_us = src->max_us;
	dst->count += src->count;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
}

uint64_t fk_hist_percentile(const struct fk_hist *h, double pct)
{
	if (h->count == 0)
		return 0;
	if (!(pct > 0.0))
		return h->min_us;
	if (pct >= 100.0 || !h->buckets)
		return h->max_us;
	/* The smallest value with at least pct% of the samples <= it. */
	uint64_t rank = (uint64_t)ceil(pct / 100.0 * (double)h->count);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	uint64_t seen = 0;
	for (uint32_t i = 0; i < h->nr_buckets; i++) {
		seen += h->buckets[i];
		if (seen >= rank) {
			/* The overflow bucket is bounded by max_us only. */
			uint64_t v =
			    i == h->nr_buckets - 1 ? h->max_us : bucket_high(i);
			if (v > h->max_us)
				v = h->max_us;
			if (v < h->min_us)
				v = h->min_us;
			return v;
		}
	}
	return h->max_us;
}

double fk_hist_mean(const struct fk_hist *h)
{
	return h->count ? h->sum / (double)h->count : 0.0;
}

double fk_hist_stddev(const struct fk_hist *h)
{
	if (h->count == 0)
		return 0.0;
	double mean = h->sum / (double)h->count;
	double var = h->sumsq / (double)h->count - mean * mean;
	return var > 0.0 ? sqrt(var) : 0.0;
}
