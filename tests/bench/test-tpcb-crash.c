// SPDX-License-Identifier: MIT
/*
 * test-tpcb-crash.c - recovery after kill -9 under the TPC-B workload,
 * with the store's default options: a configuration of the crash
 * torture harness (tests/lib/fktorture.c), fault "kill", preset
 * "smooth" (fk_store_opts_init's), and the verifier closing the store
 * after every recovery.
 *
 * Each trial: a child opens the small store (scale 1, 1 MiB of shared
 * buffers so backends evict and write pages, a 200 ms checkpoint
 * timeout so checkpoints run all the time) and runs the TPC-B
 * transaction from four threads, writing each acknowledged transaction
 * (txid, aid, delta, history row) to a pipe; it is killed with SIGKILL
 * at a random moment (one trial in five within 30 ms of the start, that
 * is during open or recovery); a child that exits before the kill fails
 * the trial.  Then a reopen (crash recovery) must show:
 *   1. every acknowledged transaction in history at the row its commit
 *      returned, with its txid, aid and delta (so history has at least
 *      as many rows as acknowledgements);
 *   2. no history row acknowledged twice (and no txid twice);
 *   3. equal TPC-B sums (accounts = tellers = branches = history
 *      deltas): no partial transaction survived;
 * the tables at scale 1, and a clean close (fk_store_close returns 0).
 * 20 trials, 5 with FK_TEST_QUICK=1, FK_TRIALS=N for N;
 * FK_TEST_SEED replays a run.  test-torture-kill is the same fault with
 * both flush presets alternating and the close left out half the time.
 */
#include "fktest.h"
#include "fktorture.h"

int main(void)
{
	struct fkt_torture_opts o;
	struct fkt_torture_result res;

	fkt_torture_opts_init(&o);
	o.fault = FKT_FAULT_KILL;
	o.preset = FKT_PRESET_SMOOTH;
	o.always_close = 1;
	o.verbose = 1; /* a line per trial: acks, recovery time, sums */
	const char *q = getenv("FK_TEST_QUICK");
	o.trials = fkt_torture_trials_env(q && *q && strcmp(q, "0") ? 5 : 20);
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
