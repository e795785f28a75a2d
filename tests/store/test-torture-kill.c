// SPDX-License-Identifier: MIT
/*
 * test-torture-kill.c - kill -9 during TPC-B at
 * random moments.  Runs the crash torture harness (tests/lib/
 * fktorture.c) for 10 trials (FK_TRIALS=1000 for the full count): a
 * child runs TPC-B on the page store from 4 threads, is killed with
 * SIGKILL at a random moment, and a reopen (recovery) must show every
 * acknowledged commit at its history row, none twice, and equal TPC-B
 * sums.  Both flush presets alternate.  FK_TEST_SEED replays a run.
 */
#include "fktest.h"
#include "fktorture.h"

int main(void)
{
	struct fkt_torture_opts o;
	struct fkt_torture_result res;

	fkt_torture_opts_init(&o);
	o.fault = FKT_FAULT_KILL;
	o.trials = fkt_torture_trials_env(10);
	const char *se = getenv("FK_TEST_SEED");
	if (se && *se)
		o.seed = strtoull(se, NULL, 10);
	int r = fkt_torture_run(&o, &res);
	CHECK_EQ(r, 0);
	CHECK_EQ(res.trials, o.trials);
	CHECK_EQ(res.failed, 0);
	/* The harness must have seen commits to check. */
	CHECK(res.acks > 0);
	return fkt_done();
}
