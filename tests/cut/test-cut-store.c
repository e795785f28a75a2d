// SPDX-License-Identifier: MIT
/*
 * test-cut-store.c - the page store under power cuts that lose the
 * disk's write cache, on ext4, xfs and btrfs (btrfs's first power-cut
 * test: it refuses FS_IOC_GOINGDOWN).  The crash torture harness
 * (tests/lib/fktorture.c, cut_disk) puts the store on a lab disk (model
 * ram, write cache on: a write is durable only once a FLUSH covered it;
 * tests/lib/fkcut.h), runs TPC-B in a child and cuts the disk's power:
 * at a random moment, as the disk's N-th FLUSH arrives, right after a
 * WAL fsync returned, mid-checkpoint, or right after a rename; the cut
 * drops the unflushed cache, keeps a random subset of it, or a random
 * prefix of a random order of its writes (drawn per cut).  Then the
 * dead file system is unmounted, the disk powered on and mounted again;
 * the reopen (recovery) must show every commit acknowledged before the
 * cut, none twice, and equal TPC-B sums.  One power cut during recovery
 * run per file system cuts reopens again (recovery idempotent).
 *
 * The negative control: the same trials on ext4 with the disk ignoring
 * every FLUSH during the workloads (ctl "flush ignore", drop cuts) must
 * lose an acknowledged commit in most trials that acknowledged one (at
 * least 3 in 4 here; scripts/torture.sh reports the full rate).
 *
 * FK_TRIALS: trials per file system (default 6); FK_TEST_SEED fixes the
 * seed.  Needs root, /dev/fuse, loop devices, flushkit-diskd (77
 * otherwise).
 */
#include "fkcut.h"
#include "fktest.h"
#include "fktorture.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int run(const char *type, int fault, unsigned trials, int control,
	       uint64_t seed, struct fkt_torture_result *res)
{
	struct fkt_torture_opts o;
	fkt_torture_opts_init(&o);
	o.fault = fault;
	o.fs_type = type;
	o.cut_disk = 1;
	o.trials = trials;
	o.seed = seed;
	if (control) {
		o.flush_ignore = 1;
		o.cut_mode = "drop";
	}
	return fkt_torture_run(&o, res);
}

int main(void)
{
	static const char *const types[] = {"ext4", "xfs", "btrfs"};
	int ran = 0;

	if (!fkt_is_root())
		SKIP("power cuts need root (lab disk, loop devices)");
	setvbuf(stdout, NULL, _IOLBF, 0);
	unsigned trials = fkt_torture_trials_env(6);
	uint64_t seed = fkt_cut_seed_env();
	printf("seed %llu (FK_TEST_SEED)\n", (unsigned long long)seed);
	for (int i = 0; i < 3; i++) {
		struct fkt_torture_result res;
		int r =
		    run(types[i], FKT_FAULT_POWERCUT, trials, 0, seed, &res);
		if (r == 77) {
			printf("%s: not available, skipped\n", types[i]);
			continue;
		}
		ran++;
		CHECK_EQ(r, 0);
		CHECK_EQ(res.trials, trials);
		CHECK_EQ(res.failed, 0);
		CHECK(res.acks > 0);
		r = run(types[i], FKT_FAULT_RECOVERY_POWERCUT, 2, 0, seed + 1,
			&res);
		CHECK_EQ(r, 0);
		CHECK_EQ(res.failed, 0);
	}
	if (!ran)
		SKIP("no lab disk, loop devices or mkfs");

	struct fkt_torture_result res;
	int r = run("ext4", FKT_FAULT_POWERCUT, trials, 1, seed, &res);
	if (r != 77) {
		CHECK_EQ(r, 0);
		printf("negative control (FLUSH ignored): %u of %u trials that "
		       "acknowledged a commit lost one\n",
		       res.acked_failed, res.acked_trials);
		CHECK(res.acked_trials >= 2);
		CHECK(4 * res.acked_failed >= 3 * res.acked_trials);
	}
	return fkt_done();
}
