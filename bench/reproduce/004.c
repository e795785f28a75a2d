// SPDX-License-Identifier: MIT
/*
 * 004.c - seed 004, sync ordering (Jan Kara, linux-fsdevel 2011:
 * "Cleanup and improve sync (v3)").
 *
 * The seed: three tests on xfs, ext3, ext4 and btrfs with 1, 2 and 4 file
 * systems (2: one per disk; 4: two on each of two disks), 10 runs, BASE
 * kernel against PATCHED:
 *   test 1: 200 syncs with nothing to write, total time;
 *   test 2: per file system a process creating 40 KB files, sleep 3 s,
 *           time one sync;
 *   test 3: per file system a process writing a 20 GB file, sleep 5 s,
 *           time one sync.
 *
 * Ours (on the hdd model by default): bench sync --fs=ext4,xfs,btrfs,ext3
 * --fs-count=1,2,4 (4: two disks, two file systems on each, one model per
 * disk), 5 runs (3 on hdd), --big-size=512M.
 *   BASE    -> A: sync(2)
 *   PATCHED -> B: syncfs per file system (first table), flushkit sync
 *              (second table)
 */
#include "reproduce.h"
#include "seed-sync.h"

/* ---- 004: sync ordering; syncfs per file system ---------------------- */

int seed_004(struct ctx *c)
{
	unsigned runs = c->runs ? c->runs : c->quick ? 2 : 5;
	/*
	 * Test 2's writers run until the sync.  On a slow device (nominal
	 * write IOPS below 1000: hdd, a slow throttle) they are
	 * bounded, and the runs cut to 3, so that the 12 (type, count)
	 * cells fit the 2-hour budget of "all": the small-file writers stop
	 * after what the disk takes in about 5 s (IOPS x 5 s x 40 KB),
	 * where a quarter of the image (384 MiB) took 77 s to sync at 150
	 * IOPS (the blkio IOPS throttle counts each 40 KB write before it
	 * could merge).
	 */
	int slow = c->prof.write_iops && c->prof.write_iops < 1000;
	int empty_syncs = c->quick ? 4 : 200; /* test 1 (the seed's 200) */
	uint64_t small_limit = slow ? c->prof.write_iops * 5 * 40960 : 0;
	if (slow && !c->runs)
		runs = 3;
	char types[64] = "";
	const char *want[] = {"ext4", "xfs", "btrfs", "ext3"};
	for (int i = 0; i < (c->quick ? 1 : 4); i++) {
		char mk[32];
		snprintf(mk, sizeof(mk), "mkfs.%s", want[i]);
		if (!disk_in_path(mk)) {
			printf("  %s: no %s here, left out\n", want[i], mk);
			continue;
		}
		if (types[0])
			strcat(types, ",");
		strcat(types, want[i]);
	}
	const char *counts = c->quick ? "1,2" : "1,2,4";
	char ta[2300];
	struct child_argv a = CHILD_ARGV_INIT;
	/* Under "flushkit monitor": Dirty and Writeback over the run. */
	monitor_argv(&a, 500, c->run_dir);
	child_argv_add(&a, "bench");
	child_argv_add(&a, "sync");
	child_argv_add(&a, "--fs=%s", types);
	child_argv_add(&a, "--fs-count=%s", counts);
	child_argv_add(&a, "--runs=%u", runs);
	child_argv_add(&a, "--empty-syncs=%d", empty_syncs);
	if (small_limit)
		child_argv_add(&a, "--small-limit=%llu",
			       (unsigned long long)small_limit);
	child_argv_add(&a, "--big-size=%s", c->quick ? "16M" : "512M");
	child_argv_add(&a, "--image-size=%s", c->quick ? "320M" : "1536M");
	child_argv_add(&a, "--sleep-scale=%s", c->quick ? "0.05" : "1");
	child_argv_add(&a, "--device=%s", c->prof.name);
	child_argv_add(&a, "--dir=%s", c->run_dir);
	child_argv_add(&a, "--results=%s", c->seed_dir);
	char mon[2300], log[2300];
	snprintf(mon, sizeof(mon), "%s/monitor/monitor.jsonl", c->seed_dir);
	snprintf(log, sizeof(log), "%s/sync.log", c->seed_dir);
	snprintf(ta, sizeof(ta), "%s/monitor", c->seed_dir);
	if (mkdir_p1(ta)) {
		child_argv_release(&a);
		return -EIO;
	}
	int rc = run_flushkit(mon, &a);
	child_argv_release(&a);
	split_jsonl(mon, log);
	if (rc)
		return rc;
	struct table t;

	snprintf(ta, sizeof(ta), "sync(2), in bench sync --fs=%s --fs-count=%s",
		 types, counts);
	if (table_open(c, &t,
		       "004: sync ordering; syncfs per file system (bench "
		       "sync)",
		       ta,
		       "one syncfs per file system (first table), "
		       "flushkit sync (second)"))
		return -EIO;
	char test1[64];
	snprintf(test1, sizeof(test1), "test 1: %d syncs, nothing to write (s)",
		 empty_syncs);
	const char *const tests[] = {
	    test1, "test 2: sync while 40 KB files are written (s)",
	    "test 3: sync while a big file is written (s)"};
	static const char *const keys[] = {"empty_sync_total_s", "small_sync_s",
					   "big_sync_s"};
	for (int m = 1; m <= 2; m++) {
		table_note(&t, "\nB = %s:", m == 1 ? "syncfs" : "flushkit");
		table_head(&t, "BASE", "PATCHED");
		for (size_t i = 0; i < sizeof(seed_sync) / sizeof(seed_sync[0]);
		     i++) {
			const struct seed_sync_row *s = &seed_sync[i];
			if (!strstr(types, s->fs) ||
			    (s->count == 4 && c->quick))
				continue;
			struct vals va, vb;
			struct collect col;
			memset(&col, 0, sizeof(col));
			memset(&va, 0, sizeof(va));
			memset(&vb, 0, sizeof(vb));
			col.type = "run";
			col.key = keys[s->test - 1];
			col.fs = s->fs;
			col.count = s->count;
			col.method = "sync";
			col.out = &va;
			collect_dir(c->seed_dir, &col);
			col.method = m == 1 ? "syncfs" : "flushkit";
			col.out = &vb;
			collect_dir(c->seed_dir, &col);
			char label[160], sa[64], sb[64];
			snprintf(label, sizeof(label), "%s, %s, %d fs",
				 tests[s->test - 1], s->fs, s->count);
			snprintf(sa, sizeof(sa), "%.3f ± %.3f", s->base_avg,
				 s->base_sd);
			snprintf(sb, sizeof(sb), "%.3f ± %.3f", s->patched_avg,
				 s->patched_sd);
			table_row(&t, label, sa, sb, s->marker, &va, &vb);
		}
		table_end(&t);
	}
	table_note(&t, "BASE/PATCHED are the seed's kernels without and with "
		       "the sync reordering; ours are sync(2) against the "
		       "two ways to make each file system durable without "
		       "a global sync.  With 4 file systems two share a "
		       "disk: on a lab device, two loop devices on halves "
		       "of one lab disk, one model between them.");
	snprintf(ta, sizeof(ta), "%s/monitor", c->seed_dir);
	const char *dirs[] = {c->seed_dir, ta};
	rc = make_report(c, dirs, 2);
	table_close(&t);
	return rc;
}
