// SPDX-License-Identifier: MIT
/*
 * test-hist.c - struct fk_hist on known data: exact count, min, max,
 * mean and population stddev; percentiles within +1/64 of the exact
 * ones (never below) across the whole range; exact values below 128;
 * merge equals feeding one histogram; reset; the empty histogram.
 */
#include "fktest.h"
#include "flushkit.h"

#include <math.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Exact percentile as fk_hist defines it: the rank-th smallest sample
 * with rank = ceil(pct/100 * n). */
static uint64_t exact_pct(const uint64_t *sorted, size_t n, double pct)
{
	size_t rank = (size_t)ceil(pct / 100.0 * (double)n);
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static void check_close(double got, double want, double rel, int line)
{
	if (fabs(got - want) > rel * fabs(want) + 1e-9) {
		fprintf(stderr, "line %d: %.9g is not within %g of %.9g\n",
			line, got, rel, want);
		fkt_failures++;
	}
}
#define CHECK_CLOSE(got, want, rel) check_close(got, want, rel, __LINE__)

static void test_empty(void)
{
	struct fk_hist h;
	CHECK_EQ(fk_hist_init(&h), 0);
	CHECK_EQ(h.count, 0);
	CHECK_EQ(fk_hist_percentile(&h, 50), 0);
	CHECK_EQ(fk_hist_percentile(&h, 100), 0);
	CHECK(fk_hist_mean(&h) == 0.0);
	CHECK(fk_hist_stddev(&h) == 0.0);
	fk_hist_release(&h);
	CHECK(h.buckets == NULL);
}

static void test_one_to_thousand(void)
{
	struct fk_hist h;
	CHECK_EQ(fk_hist_init(&h), 0);
	for (uint64_t v = 1000; v >= 1; v--)
		fk_hist_add(&h, v);
	CHECK_EQ(h.count, 1000);
	CHECK_EQ(h.min_us, 1);
	CHECK_EQ(h.max_us, 1000);
	CHECK_CLOSE(fk_hist_mean(&h), 500.5, 1e-12);
	/* Population stddev of 1..n is sqrt((n^2 - 1) / 12). */
	CHECK_CLOSE(fk_hist_stddev(&h), sqrt((1000.0 * 1000.0 - 1) / 12.0),
		    1e-9);
	/* Below 128 every value has its own bucket: exact. */
	CHECK_EQ(fk_hist_percentile(&h, 10), 100);
	CHECK_EQ(fk_hist_percentile(&h, 12.7), 127);
	CHECK_EQ(fk_hist_percentile(&h, 0.1), 1);
	/* 500 lies in [500, 503] (width 4 in [256, 512)). */
	CHECK_EQ(fk_hist_percentile(&h, 50), 503);
	CHECK_EQ(fk_hist_percentile(&h, 0), 1);
	CHECK_EQ(fk_hist_percentile(&h, 100), 1000);
	CHECK_EQ(fk_hist_percentile(&h, 250), 1000);
	CHECK_EQ(fk_hist_percentile(&h, NAN), 1);
	/* 99.95% of 1000 -> rank 1000: the max, exact. */
	CHECK_EQ(fk_hist_percentile(&h, 99.95), 1000);

	fk_hist_reset(&h);
	CHECK_EQ(h.count, 0);
	CHECK_EQ(fk_hist_percentile(&h, 50), 0);
	fk_hist_add(&h, 42);
	CHECK_EQ(fk_hist_percentile(&h, 50), 42);
	CHECK_EQ(h.min_us, 42);
	CHECK(fk_hist_stddev(&h) == 0.0);
	fk_hist_release(&h);
}

/* Random latencies over 1 us .. 1e9 us: every percentile within
 * [exact, exact * (1 + 1/64)]; mean and stddev exact. */
static void test_random_accuracy(void)
{
	enum { N = 200000 };
	uint64_t *v = malloc(N * sizeof(*v));
	struct fk_hist h;
	CHECK_EQ(fk_hist_init(&h), 0);
	uint64_t x = 88172645463325252ull;
	double sum = 0;
	for (size_t i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* log-uniform over 1 .. 1e9 */
		double e = (double)(x % 1000000) / 1000000.0 * 9.0;
		v[i] = (uint64_t)pow(10.0, e);
		fk_hist_add(&h, v[i]);
		sum += (double)v[i];
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	double mean = sum / N, ss = 0;
	for (size_t i = 0; i < N; i++)
		ss += ((double)v[i] - mean) * ((double)v[i] - mean);
	CHECK_CLOSE(fk_hist_mean(&h), mean, 1e-9);
	CHECK_CLOSE(fk_hist_stddev(&h), sqrt(ss / N), 1e-6);
	CHECK_EQ(h.min_us, v[0]);
	CHECK_EQ(h.max_us, v[N - 1]);
	double pcts[] = {0.001, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99};
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		uint64_t want = exact_pct(v, N, pcts[i]);
		uint64_t got = fk_hist_percentile(&h, pcts[i]);
		if (got < want ||
		    (double)got > (double)want * (1.0 + 1.0 / 64)) {
			fprintf(stderr, "p%g: got %llu, exact %llu\n", pcts[i],
				(unsigned long long)got,
				(unsigned long long)want);
			fkt_failures++;
		}
	}
	free(v);
	fk_hist_release(&h);
}

/* One value at a time across every bucket boundary up to 2^36 and
 * beyond: the reported value is within [v, v * (1 + 1/64)] (and exact
 * for the max). */
static void test_bucket_bounds(void)
{
	struct fk_hist h, two;
	CHECK_EQ(fk_hist_init(&h), 0);
	CHECK_EQ(fk_hist_init(&two), 0);
	int bad = 0;
	for (int k = 0; k < 40; k++) {
		for (uint64_t d = 0; d < 3; d++) {
			uint64_t base = (UINT64_C(1) << k);
			uint64_t vals[] = {base - 1 + d, base + base / 3 + d};
			for (int j = 0; j < 2; j++) {
				uint64_t val = vals[j];
				fk_hist_reset(&two);
				fk_hist_add(&two, 0);
				fk_hist_add(&two, val);
				fk_hist_add(&two, UINT64_C(1) << 50);
				/* The middle sample (rank 2 of 3). */
				uint64_t got = fk_hist_percentile(&two, 50);
				if (got < val ||
				    (double)got >
					(double)val * (1.0 + 1.0 / 64)) {
					if (val < (UINT64_C(1) << 36) &&
					    bad++ < 5)
						fprintf(
						    stderr,
						    "value %llu -> %llu\n",
						    (unsigned long long)val,
						    (unsigned long long)got);
				}
				fk_hist_add(&h, val);
			}
		}
	}
	CHECK_EQ(bad, 0);
	/* Beyond 2^36 us the bucket is shared, but max stays exact. */
	fk_hist_reset(&two);
	fk_hist_add(&two, UINT64_C(1) << 40);
	fk_hist_add(&two, (UINT64_C(1) << 40) + 12345);
	CHECK_EQ(fk_hist_percentile(&two, 100), (UINT64_C(1) << 40) + 12345);
	CHECK_EQ(fk_hist_percentile(&two, 50), (UINT64_C(1) << 40) + 12345);
	CHECK_EQ(two.min_us, UINT64_C(1) << 40);
	fk_hist_add(&two, UINT64_MAX);
	CHECK(two.max_us == UINT64_MAX);
	fk_hist_release(&h);
	fk_hist_release(&two);
}

/* Two per-thread histograms merged = one fed with everything. */
static void test_merge(void)
{
	struct fk_hist a, b, all;
	CHECK_EQ(fk_hist_init(&a), 0);
	CHECK_EQ(fk_hist_init(&b), 0);
	CHECK_EQ(fk_hist_init(&all), 0);
	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t v = (i * 7919) % 100003 + 50;
		fk_hist_add(i % 3 ? &a : &b, v);
		fk_hist_add(&all, v);
	}
	fk_hist_add(&b, 3); /* b holds the minimum */
	fk_hist_add(&all, 3);
	struct fk_hist empty;
	CHECK_EQ(fk_hist_init(&empty), 0);
	fk_hist_merge(&a, &empty); /* no-op */
	fk_hist_merge(&a, &b);
	CHECK_EQ(a.count, all.count);
	CHECK_EQ(a.min_us, all.min_us);
	CHECK_EQ(a.max_us, all.max_us);
	CHECK_CLOSE(a.sum, all.sum, 1e-12);
	CHECK_CLOSE(fk_hist_stddev(&a), fk_hist_stddev(&all), 1e-9);
	CHECK(memcmp(a.buckets, all.buckets,
		     all.nr_buckets * sizeof(all.buckets[0])) == 0);
	for (double p = 0; p <= 100; p += 0.5)
		CHECK_EQ(fk_hist_percentile(&a, p),
			 fk_hist_percentile(&all, p));
	/* Into an empty histogram: a copy. */
	fk_hist_merge(&empty, &b);
	CHECK_EQ(empty.count, b.count);
	CHECK_EQ(empty.min_us, 3);
	CHECK_EQ(empty.max_us, b.max_us);
	fk_hist_release(&a);
	fk_hist_release(&b);
	fk_hist_release(&all);
	fk_hist_release(&empty);
}

int main(void)
{
	test_empty();
	test_one_to_thousand();
	test_random_accuracy();
	test_bucket_bounds();
	test_merge();
	return fkt_done();
}
