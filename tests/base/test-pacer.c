// SPDX-License-Identifier: MIT
/*
 * test-pacer.c - struct fk_pacer on known instants (the clock is passed
 * in, so nothing here depends on timing): on/behind schedule by time
 * and by WAL, the delay until time catches up with progress and its
 * cap, a zero budget, clamping, and a simulated paced job that spreads
 * its steps evenly over the budget.
 */
#include "fktest.h"
#include "pacer.h"
#include "sys.h"

#include <math.h>

#define S 1000000000ull /* one second in ns */
#define MS 1000000ull

static void test_time(void)
{
	struct fk_pacer p;
	const uint64_t t0 = 5000 * S;
	fk_pacer_start_at(&p, t0, 100 * S, 0, 0);
	CHECK_EQ(p.slept_ns, 0);

	/* Half the budget elapsed. */
	uint64_t now = t0 + 50 * S;
	CHECK_EQ(fk_pacer_on_schedule_at(&p, 0.6, 0, now), 1);
	CHECK_EQ(fk_pacer_on_schedule_at(&p, 0.5, 0, now), 1);
	CHECK_EQ(fk_pacer_on_schedule_at(&p, 0.4, 0, now), 0);
	/* 60% done at 50%: ahead by 10 s. */
	CHECK_EQ(fk_pacer_delay_ns_at(&p, 0.6, 0, 60 * S, now), 10 * S);
	/* ... capped. */
	CHECK_EQ(fk_pacer_delay_ns_at(&p, 0.6, 0, 100 * MS, now), 100 * MS);
	CHECK_EQ(fk_pacer_delay_ns_at(&p, 0.6, 0, 0, now), 0);
	/* Exactly on time, or behind: no sleep. */
	CHECK_EQ(fk_pacer_delay_ns_at(&p, 0.5, 0, 60 * S, now), 0);
	CHECK_EQ(fk_pacer_delay_ns_at(&p, 0.1, 0, 60 * S, now), 0);
	/* Progress beyond 1 counts as 1; NaN or negative as 0. */
	CHECK_EQ(fk_pacer_delay_ns_at(&p, 7.0, 0, 600 * S, now), 50 * S);
	CHECK_EQ(fk_pacer_on_schedule_at(&p, NAN, 0, now), 0);
	CHECK_EQ(fk_pacer_on_schedule_at(&p, -1.0, 0, now), 0);
	/* Before the start (clock read earlier by another thread). */
	CHECK_EQ(fk_pacer_on_schedule_at(&p, 0.0, 0, t0 - S), 1);
	CHECK_EQ(fk_pacer_delay_ns_at(&p, 0.25, 0, 600 * S, t0 - S), 26 * S);
	/* Past the deadline: never ahead until done, never a sleep. */
	CHECK_EQ(fk_pacer_on_schedule_at(&p, 0.99, 0, t0 + 120 * S), 0);
	CHECK_EQ(fk_pacer_on_schedule_at(&p, 1.0, 0, t0 + 120 * S), 0);
	CHECK_EQ(fk_pacer_delay_ns_at(&p, 1.0, 0, 600 * S, t0 + 120 * S), 0);
}

static void test_wal(void)
{
	struct fk_pacer p;
	const uint64_t t0 = 77 * S;
	/* WAL from 500 with a budget of 1000 bytes. */
	fk_pacer_start_at(&p, t0, 100 * S, 500, 1000);
	uint64_t now = t0 + 50 * S;
	/* 70% of the WAL budget written, 60% of the work done: behind by
	 * WAL, so no sleep even though time says ahead. */
	CHECK_EQ(fk_pacer_on_schedule_at(&p, 0.6, 1200, now), 0);
	CHECK_EQ(fk_pacer_delay_ns_at(&p, 0.6, 1200, 60 * S, now), 0);
	/* 50% of WAL: the time rule decides. */
	CHECK_EQ(fk_pacer_on_schedule_at(&p, 0.6, 1000, now), 1);
	CHECK_EQ(fk_pacer_delay_ns_at(&p, 0.6, 1000, 60 * S, now), 10 * S);
	/* WAL position before the start counts as nothing written. */
	CHECK_EQ(fk_pacer_on_schedule_at(&p, 0.6, 100, now), 1);
	/* Early in time but WAL nearly used up. */
	CHECK_EQ(fk_pacer_on_schedule_at(&p, 0.5, 1499, t0 + S), 0);
	/* wal_budget 0 ignores WAL entirely. */
	fk_pacer_start_at(&p, t0, 100 * S, 500, 0);
	CHECK_EQ(fk_pacer_on_schedule_at(&p, 0.6, UINT64_MAX, now), 1);
}

static void test_zero_budget(void)
{
	struct fk_pacer p;
	fk_pacer_start_at(&p, 10 * S, 0, 0, 0);
	CHECK_EQ(fk_pacer_on_schedule_at(&p, 0.5, 0, 10 * S), 0);
	CHECK_EQ(fk_pacer_on_schedule_at(&p, 1.0, 0, 10 * S), 1);
	CHECK_EQ(fk_pacer_delay_ns_at(&p, 1.0, 0, S, 10 * S), 0);
	CHECK_EQ(fk_pacer_delay_ns_at(&p, 0.5, 0, S, 10 * S), 0);
}

/*
 * A job of 100 equal steps that take no time, paced over 10 s with
 * naps of at most 300 ms: after each step it sleeps until the schedule
 * catches up, so step i completes at i/100 of the budget and the job
 * ends exactly at the deadline, never early.
 */
static void test_simulated_job(void)
{
	struct fk_pacer p;
	uint64_t now = 123 * S;
	const uint64_t t0 = now, budget = 10 * S;
	fk_pacer_start_at(&p, now, budget, 0, 0);
	int naps = 0;
	for (int i = 1; i <= 100; i++) {
		double progress = i / 100.0;
		uint64_t d;
		while ((d = fk_pacer_delay_ns_at(&p, progress, 0, 300 * MS,
						 now)) > 0) {
			CHECK(d <= 300 * MS);
			now += d;
			naps++;
		}
		/* Never more than one step's worth ahead of the clock. */
		CHECK(now - t0 >= (uint64_t)(progress * budget) - 1);
		CHECK(now - t0 <= (uint64_t)(progress * budget) + 1);
	}
	CHECK(now - t0 >= budget - 1 && now - t0 <= budget);
	/* 100 ms per step, capped at 300 ms: one nap per step. */
	CHECK_EQ(naps, 100);

	/* A job that is slow on its own is never delayed. */
	fk_pacer_start_at(&p, t0, budget, 0, 0);
	now = t0;
	for (int i = 1; i <= 10; i++) {
		now += 2 * S; /* each tenth takes 2 s */
		CHECK_EQ(fk_pacer_delay_ns_at(&p, i / 10.0, 0, S, now), 0);
	}
}

static void test_real_clock(void)
{
	struct fk_pacer p;
	uint64_t before = fk_now_ns();
	fk_pacer_start(&p, 1000 * S, 0, 0);
	uint64_t after = fk_now_ns();
	CHECK(p.start_ns >= before && p.start_ns <= after);
	/* 50% done at the very start: far ahead; the cap decides. */
	CHECK_EQ(fk_pacer_delay_ns(&p, 0.5, 0, 2 * MS), 2 * MS);
	CHECK_EQ(fk_pacer_on_schedule(&p, 0.5, 0), 1);
	/* fk_pacer_sleep sleeps at least what it reports, and adds it up. */
	uint64_t t = fk_now_ns();
	CHECK_EQ(fk_pacer_sleep(&p, 0.5, 0, 2 * MS), 2 * MS);
	CHECK(fk_now_ns() - t >= 2 * MS);
	CHECK_EQ(fk_pacer_sleep(&p, 0.5, 0, 1 * MS), 1 * MS);
	CHECK_EQ(p.slept_ns, 3 * MS);
	/* Behind: returns at once, adds nothing. */
	fk_pacer_start(&p, 0, 0, 0);
	CHECK_EQ(fk_pacer_sleep(&p, 0.5, 0, S), 0);
	CHECK_EQ(p.slept_ns, 0);
}

int main(void)
{
	test_time();
	test_wal();
	test_zero_budget();
	test_simulated_job();
	test_real_clock();
	return fkt_done();
}
