// SPDX-License-Identifier: MIT
/*
 * test-bench-stall.c - the one stall ratio (bench/lib/reader.h,
 * results_stall_ratio), as bench tpcb's summary and report compute it:
 * worst one-second tps / the conventional median (the middle value of
 * an odd count, the mean of the two middle ones of an even count, not
 * truncated to an integer and not the upper middle), 0 for a zero
 * median, NAN for no second at all; the input is left unsorted.
 */
#include "fktest.h"
#include "reader.h"

#include <math.h>

static void test_odd(void)
{
	double v[] = {30, 10, 20};
	double w, m;
	CHECK(fabs(results_stall_ratio(v, 3, &w, &m) - 0.5) < 1e-12);
	CHECK_EQ(w, 10);
	CHECK_EQ(m, 20);
	/* not sorted in place */
	CHECK(v[0] == 30 && v[1] == 10 && v[2] == 20);
}

static void test_even(void)
{
	/* the mean of the middle two: 25 (upper middle 30: 0.333) */
	double v[] = {40, 10, 30, 20};
	double w, m;
	CHECK(fabs(results_stall_ratio(v, 4, &w, &m) - 0.4) < 1e-12);
	CHECK_EQ(m, 25);
	/* a half is kept (integer counts 21 and 30: 25.5, not 25) */
	double u[] = {10, 21, 30, 40};
	CHECK(fabs(results_stall_ratio(u, 4, &w, &m) - 10 / 25.5) < 1e-12);
	CHECK(m == 25.5);
}

static void test_edges(void)
{
	double one[] = {7};
	double w, m;
	CHECK_EQ(results_stall_ratio(one, 1, &w, &m), 1);
	double zero[] = {0, 0, 5};
	CHECK_EQ(results_stall_ratio(zero, 3, &w, &m), 0);
	CHECK_EQ(m, 0);
	CHECK(isnan(results_stall_ratio(one, 0, &w, &m)));
	CHECK(isnan(w) && isnan(m));
	CHECK_EQ(results_stall_ratio(one, 1, NULL, NULL), 1);
}

int main(void)
{
	test_odd();
	test_even();
	test_edges();
	return fkt_done();
}
