// SPDX-License-Identifier: MIT
/*
 * test-bench-stall.c - the one stall ratio (bench/lib/reader.h,
 * results_stall_ratio), as bench tpcb's summary, report and compare
 * get it: worst one-second tps / the conventional median (the middle
 * value of an odd count, the mean of the two middle ones of an even
 * count, not truncated to an integer and not the upper middle) over
 * the window after the warm-up, 0 for a zero median, NAN for an empty
 * window; the pair during / outside checkpoints over the same median;
 * the checkpoint marks of results_stall_mark; the input left unsorted.
 */
#include "fktest.h"
#include "reader.h"

#include <math.h>

static void test_odd(void)
{
	/* no warm-up: 3 seconds, median 20 */
	double v[] = {30, 10, 20};
	struct results_stall st;
	CHECK_EQ(results_stall_ratio(v, NULL, 3, 0, &st), 0);
	CHECK(fabs(st.ratio - 0.5) < 1e-12);
	CHECK_EQ(st.worst, 10);
	CHECK_EQ(st.median, 20);
	CHECK_EQ(st.seconds, 3);
	CHECK_EQ(v[0], 30); /* not sorted in place */
	CHECK(isnan(st.ratio_ckpt) && isnan(st.ratio_outside));
	CHECK(!st.ckpt_known);
}

static void test_even(void)
{
	double v[] = {40, 10, 30, 20};
	struct results_stall st;
	CHECK_EQ(results_stall_ratio(v, NULL, 4, 0, &st), 0);
	CHECK(fabs(st.ratio - 0.4) < 1e-12); /* 10 / 25 */
	CHECK_EQ(st.median, 25);
	double u[] = {10, 25, 26, 100};
	CHECK_EQ(results_stall_ratio(u, NULL, 4, 0, &st), 0);
	CHECK(fabs(st.ratio - 10 / 25.5) < 1e-12);
}

static void test_edges(void)
{
	struct results_stall st;
	double one[] = {7};
	CHECK_EQ(results_stall_ratio(one, NULL, 1, 0, &st), 0);
	CHECK_EQ(st.ratio, 1);
	double zero[] = {0, 0, 5};
	CHECK_EQ(results_stall_ratio(zero, NULL, 3, 0, &st), 0);
	CHECK_EQ(st.ratio, 0);
	CHECK_EQ(results_stall_ratio(one, NULL, 0, 0, &st), 0);
	CHECK(isnan(st.ratio) && isnan(st.worst) && isnan(st.median));
	/* a run of one second: all warm-up, no window */
	CHECK_EQ(
	    results_stall_ratio(one, NULL, 1, RESULTS_STALL_WARMUP_RUN, &st),
	    0);
	CHECK_EQ(st.warmup_s, 1);
	CHECK(isnan(st.ratio));
}

static void test_warmup(void)
{
	CHECK_EQ(results_stall_warmup(0), 1);
	CHECK_EQ(results_stall_warmup(3), 1);
	CHECK_EQ(results_stall_warmup(10), 1);
	CHECK_EQ(results_stall_warmup(11), 2);
	CHECK_EQ(results_stall_warmup(60), 6);
	CHECK_EQ(results_stall_warmup(600), 10);
	/* 20 s: the first 2 left out, the dip in second 1 does not count */
	double v[20];
	for (int i = 0; i < 20; i++)
		v[i] = 100;
	v[1] = 5;
	v[9] = 50;
	struct results_stall st;
	CHECK_EQ(
	    results_stall_ratio(v, NULL, 20, RESULTS_STALL_WARMUP_RUN, &st), 0);
	CHECK_EQ(st.warmup_s, 2);
	CHECK_EQ(st.seconds, 18);
	CHECK(fabs(st.ratio - 0.5) < 1e-12);
}

static void test_checkpoints(void)
{
	/* 10 s, a checkpoint from 3.5 to 6.2 s: seconds 3..6 */
	double v[] = {1, 100, 100, 90, 80, 95, 99, 60, 100, 100};
	unsigned char ck[10] = {0};
	results_stall_mark(ck, 10, 3.5, 6.2);
	for (int i = 0; i < 10; i++)
		CHECK_EQ(ck[i], i >= 3 && i <= 6);
	results_stall_mark(ck, 10, 9.0, 9.0); /* empty: nothing */
	CHECK_EQ(ck[9], 0);
	results_stall_mark(ck, 10, NAN, 4);
	CHECK_EQ(ck[0], 0);
	struct results_stall st;
	CHECK_EQ(results_stall_ratio(v, ck, 10, RESULTS_STALL_WARMUP_RUN, &st),
		 0);
	/* window: seconds 1..9, median of {100,100,90,80,95,99,60,100,100}
	 * = 99 */
	CHECK_EQ(st.warmup_s, 1);
	CHECK_EQ(st.median, 99);
	CHECK_EQ(st.ckpt_seconds, 4);
	CHECK_EQ(st.worst, 60);
	CHECK_EQ(st.worst_ckpt, 80);
	CHECK(fabs(st.ratio_ckpt - 80.0 / 99) < 1e-12);
	CHECK_EQ(st.worst_outside, 60); /* second 7: the worst is outside */
	CHECK(fabs(st.ratio_outside - 60.0 / 99) < 1e-12);
	/* no checkpoint in the window */
	unsigned char none[10] = {1, 0};
	CHECK_EQ(results_stall_ratio(v, none, 10, 1, &st), 0);
	CHECK(st.ckpt_known);
	CHECK_EQ(st.ckpt_seconds, 0);
	CHECK(isnan(st.ratio_ckpt));
	CHECK_EQ(st.worst_outside, 60);
	/* a checkpoint in every second */
	unsigned char all[10];
	for (int i = 0; i < 10; i++)
		all[i] = 1;
	CHECK_EQ(results_stall_ratio(v, all, 10, 1, &st), 0);
	CHECK(isnan(st.ratio_outside));
	CHECK_EQ(st.ckpt_seconds, 9);
}

int main(void)
{
	test_odd();
	test_even();
	test_edges();
	test_warmup();
	test_checkpoints();
	return fkt_done();
}
