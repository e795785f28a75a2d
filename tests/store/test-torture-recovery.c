// SPDX-License-Identifier: MIT
/*
 * test-torture-recovery.c - a crash during
 * recovery, including during the end-of-recovery checkpoint: recovery
 * is idempotent.  The crash torture harness (tests/lib/fktorture.c)
 * builds a long WAL (TPC-B without a checkpoint, then kill -9), then
 * interrupts 1..3 reopens in a row - at the N-th state-changing system
 * call of the recovery (counted through the syscall table, over the
 * whole recovery or from the WAL cut on, so the replay and every step
 * of the end-of-recovery checkpoint are hit), or at a random time - and
 * a last reopen must show every acknowledged commit, none twice, and
 * equal TPC-B sums.  6 trials with kill -9 and, as root, 3 with power
 * cuts on ext4 (FK_TRIALS for both).
 */
#include "fktest.h"
#include "fktorture.h"

static void run(int fault, const char *fs, unsigned dflt)
{
	struct fkt_torture_opts o;
	struct fkt_torture_result res;

	fkt_torture_opts_init(&o);
	o.fault = fault;
	o.fs_type = fs;
	o.trials = fkt_torture_trials_env(dflt);
	const char *se = getenv("FK_TEST_SEED");
	if (se && *se)
		o.seed = strtoull(se, NULL, 10);
	int r = fkt_torture_run(&o, &res);
	if (r == 77) {
		printf("%s: skipped (not root or no loop devices)\n",
		       fkt_torture_fault_name(fault));
		return;
	}
	CHECK_EQ(r, 0);
	CHECK_EQ(res.trials, o.trials);
	CHECK_EQ(res.failed, 0);
	CHECK(res.acks > 0);
	/* Every trial cut at least one reopen. */
	CHECK(res.interrupts >= res.trials);
}

int main(void)
{
	run(FKT_FAULT_RECOVERY_KILL, NULL, 6);
	if (fkt_is_root())
		run(FKT_FAULT_RECOVERY_POWERCUT, "ext4", 3);
	return fkt_done();
}
