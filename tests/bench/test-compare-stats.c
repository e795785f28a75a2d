// SPDX-License-Identifier: MIT
/*
 * test-compare-stats.c - fk_stats_summarize and fk_stats_compare on
 * known data: the mean and the sample (n-1) standard deviation, NaN and
 * infinities skipped, precision with a large common offset, and the
 * marker rule: "+" / "-" only beyond 2*sqrt(sA^2/nA + sB^2/nB), "0"
 * within it (also exactly at it), "?" with one run on either side.
 */
#include "fktest.h"
#include "flushkit.h"

#include <math.h>

static void check_close(double got, double want, int line)
{
	if (!(fabs(got - want) <= 1e-9 * fabs(want) + 1e-12)) {
		fprintf(stderr, "line %d: %.12g != %.12g\n", line, got, want);
		fkt_failures++;
	}
}
#define CHECK_CLOSE(got, want) check_close(got, want, __LINE__)

static void test_summarize(void)
{
	struct fk_stats_summary s;
	/* 2 4 4 4 5 5 7 9: mean 5, sum of squares 32, sample var 32/7. */
	const double v[] = {2, 4, 4, 4, 5, 5, 7, 9};

	fk_stats_summarize(v, 8, &s);
	CHECK_EQ(s.n, 8);
	CHECK_CLOSE(s.mean, 5);
	CHECK_CLOSE(s.stddev, sqrt(32.0 / 7));

	fk_stats_summarize(NULL, 0, &s);
	CHECK_EQ(s.n, 0);
	CHECK_CLOSE(s.mean, 0);
	CHECK_CLOSE(s.stddev, 0);

	const double one[] = {42.5};
	fk_stats_summarize(one, 1, &s);
	CHECK_EQ(s.n, 1);
	CHECK_CLOSE(s.mean, 42.5);
	CHECK_CLOSE(s.stddev, 0);

	const double holes[] = {NAN, 1, INFINITY, 3, -INFINITY};
	fk_stats_summarize(holes, 5, &s);
	CHECK_EQ(s.n, 2);
	CHECK_CLOSE(s.mean, 2);
	CHECK_CLOSE(s.stddev, sqrt(2.0));

	/* A large offset: the naive sum-of-squares formula loses it. */
	const double big[] = {1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16};
	fk_stats_summarize(big, 4, &s);
	CHECK_CLOSE(s.mean, 1e9 + 10);
	CHECK_CLOSE(s.stddev, sqrt(90.0 / 3));
}

static void test_compare(void)
{
	struct fk_stats_summary a, b;
	double t;
	/* A: 10 12 14 (mean 12, s 2); B varies. */
	const double va[] = {10, 12, 14};

	fk_stats_summarize(va, 3, &a);
	/* B: 15 17 19: mean 17, s 2; threshold 2*sqrt(4/3+4/3) = 3.266. */
	const double vb[] = {15, 17, 19};
	fk_stats_summarize(vb, 3, &b);
	CHECK_EQ(fk_stats_compare(&a, &b, &t), FK_STATS_HIGHER);
	CHECK_CLOSE(t, 2 * sqrt(8.0 / 3));
	CHECK_EQ(fk_stats_compare(&b, &a, &t), FK_STATS_LOWER);

	/* B: 13 15 17: mean 15, difference 3 < 3.266: noise. */
	const double vc[] = {13, 15, 17};
	fk_stats_summarize(vc, 3, &b);
	CHECK_EQ(fk_stats_compare(&a, &b, &t), FK_STATS_SAME);
	CHECK_EQ(fk_stats_compare(&b, &a, NULL), FK_STATS_SAME);

	/* Exactly at the threshold is still noise: A 0 2 (s sqrt2), B 4 4
	 * (s 0): threshold 2*sqrt(2/2) = 2; difference 3 > 2, "+";
	 * B 3 3: difference 2 == 2, "0". */
	const double vd[] = {0, 2}, ve[] = {4, 4}, vf[] = {3, 3};
	fk_stats_summarize(vd, 2, &a);
	fk_stats_summarize(ve, 2, &b);
	CHECK_EQ(fk_stats_compare(&a, &b, &t), FK_STATS_HIGHER);
	CHECK_CLOSE(t, 2);
	fk_stats_summarize(vf, 2, &b);
	CHECK_EQ(fk_stats_compare(&a, &b, &t), FK_STATS_SAME);

	/* No spread on either side: any difference counts. */
	fk_stats_summarize(ve, 2, &a);
	fk_stats_summarize(vf, 2, &b);
	CHECK_EQ(fk_stats_compare(&a, &b, &t), FK_STATS_LOWER);
	CHECK_CLOSE(t, 0);
	CHECK_EQ(fk_stats_compare(&a, &a, NULL), FK_STATS_SAME);

	/* One run on a side: no standard deviation, no verdict. */
	const double one[] = {100};
	fk_stats_summarize(one, 1, &b);
	fk_stats_summarize(va, 3, &a);
	CHECK_EQ(fk_stats_compare(&a, &b, &t), FK_STATS_UNKNOWN);
	CHECK(isnan(t));
	CHECK_EQ(fk_stats_compare(&b, &a, NULL), FK_STATS_UNKNOWN);
	CHECK_EQ(fk_stats_compare(&b, &b, NULL), FK_STATS_UNKNOWN);
	fk_stats_summarize(NULL, 0, &b);
	CHECK_EQ(fk_stats_compare(&a, &b, NULL), FK_STATS_UNKNOWN);
}

int main(void)
{
	test_summarize();
	test_compare();
	return fkt_done();
}
