// SPDX-License-Identifier: MIT
/*
 * test-torture-powercut.c - power cut during
 * TPC-B, on ext4 and on xfs.  The crash torture harness (tests/lib/
 * fktorture.c) puts the store on a loop-mounted file system (400 MiB
 * image; xfs needs >= 300 MiB), runs TPC-B in a child, and at a random
 * moment shuts the file system down with FS_IOC_GOINGDOWN(NOLOGFLUSH)
 * while the child still runs, kills it, unmounts and mounts again; the
 * reopen (recovery) must show every commit acknowledged before the cut,
 * none twice, and equal TPC-B sums.  4 trials per file system
 * (FK_TRIALS=200 for the full count).  Needs root (skip 77 otherwise).
 */
#include "fktest.h"
#include "fktorture.h"

int main(void)
{
	static const char *const types[] = {"ext4", "xfs"};
	int ran = 0;

	if (!fkt_is_root())
		SKIP("power cuts need root (loop devices, FS_IOC_GOINGDOWN)");
	for (int i = 0; i < 2; i++) {
		struct fkt_torture_opts o;
		struct fkt_torture_result res;
		fkt_torture_opts_init(&o);
		o.fault = FKT_FAULT_POWERCUT;
		o.fs_type = types[i];
		o.trials = fkt_torture_trials_env(4);
		const char *se = getenv("FK_TEST_SEED");
		if (se && *se)
			o.seed = strtoull(se, NULL, 10);
		int r = fkt_torture_run(&o, &res);
		if (r == 77) {
			printf("%s: not available, skipped\n", types[i]);
			continue;
		}
		ran++;
		CHECK_EQ(r, 0);
		CHECK_EQ(res.trials, o.trials);
		CHECK_EQ(res.failed, 0);
		CHECK(res.acks > 0);
	}
	if (!ran)
		SKIP("no loop devices or mkfs");
	return fkt_done();
}
