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
 * BASE, sys_sync of Linux 3.1 (fs/sync.c):
 *   wakeup_flusher_threads(0)                 all bdis, WB_SYNC_NONE
 *   per super block, in turn: writeback_inodes_sb (WB_SYNC_NONE),
 *       ->sync_fs(sb, 0), __sync_blockdev(bdev, 0)
 *   per super block, in turn: sync_inodes_sb (WB_SYNC_ALL, waits),
 *       ->sync_fs(sb, 1), __sync_blockdev(bdev, 1)
 * PATCHED (patch 6/6): wakeup_flusher_threads(0); sync_inodes_sb of every
 * super block (one WB_SYNC_ALL pass, no second WB_SYNC_NONE one); then
 * ->sync_fs nowait on all, then wait on all; then the block devices
 * written, then waited for.  That is today's sync(2).
 *
 * Ours (on the hdd model by default): bench sync --fs=ext4,xfs,btrfs,ext3
 * --fs-count=1,2,4 --methods=base,patched (4: two disks, two file systems on
 * each, one model per disk), 5 runs (3 on hdd), --big-size=512M:
 *   BASE    -> A: "base" (bench sync's do_sync_base): per file system in
 *              order SYNC_FILE_RANGE_WRITE on every file (WB_SYNC_NONE,
 *              writeback_inodes_sb's pass), then per file system in
 *              order syncfs(2) (its wait pass); ->sync_fs(sb, 0) and the
 *              global wakeup of the flushers have no user-space call
 *   PATCHED -> B: "patched": per file system in order SYNC_FILE_RANGE_
 *              WAIT_BEFORE | WRITE | WAIT_AFTER on every file (WB_SYNC_ALL,
 *              waited for: sync_inodes_sb's pass, no WB_SYNC_NONE pass
 *              first), then per file system syncfs(2) (->sync_fs; its
 *              page passes find nothing).  Not sync(2) itself: on this
 *              shared machine it syncs every other engineer's file
 *              systems too (175 ms per sync with nothing of ours to
 *              write, on hdd, under load), which the seed's machine had
 *              not.
 *   test 1 (200 syncs, nothing to write) -> shown, not counted: what the
 *              seed measured there is the kernel's own per-super-block
 *              work (two ->sync_fs and __sync_blockdev calls against
 *              one), which user space cannot call apart from syncfs's
 *              page passes; both of ours are a walk and a syncfs.
 *   10 runs -> 5 (3 on hdd); the 20 GB file -> 512 MiB; 200 syncs kept.
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
	child_argv_add(&a, "--methods=base,patched");
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

	snprintf(ta, sizeof(ta),
		 "the BASE order emulated (bench sync --methods=base,patched "
		 "--fs=%s --fs-count=%s: per file system writeback started, "
		 "then per file system syncfs)",
		 types, counts);
	if (table_open(c, &t, "004: sync ordering (bench sync)", ta,
		       "the PATCHED order emulated: per file system written "
		       "and waited for, then per file system syncfs"))
		return -EIO;
	char test1[64];
	snprintf(test1, sizeof(test1), "test 1: %d syncs, nothing to write (s)",
		 empty_syncs);
	const char *const tests[] = {
	    test1, "test 2: sync while 40 KB files are written (s)",
	    "test 3: sync while a big file is written (s)"};
	static const char *const keys[] = {"empty_sync_total_s", "small_sync_s",
					   "big_sync_s"};
	{
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
			col.method = "base";
			col.out = &va;
			collect_dir(c->seed_dir, &col);
			col.method = "patched";
			col.out = &vb;
			collect_dir(c->seed_dir, &col);
			char label[160], sa[64], sb[64];
			snprintf(label, sizeof(label), "%s, %s, %d fs",
				 tests[s->test - 1], s->fs, s->count);
			snprintf(sa, sizeof(sa), "%.3f ± %.3f", s->base_avg,
				 s->base_sd);
			snprintf(sb, sizeof(sb), "%.3f ± %.3f", s->patched_avg,
				 s->patched_sd);
			/* Test 1 is not emulable (above): shown, its
			 * direction not counted. */
			if (s->test == 1)
				strncat(label, " (not emulable, not counted)",
					sizeof(label) - strlen(label) - 1);
			table_row(&t, label, sa, sb,
				  s->test == 1 ? '?' : s->marker, &va, &vb);
		}
		table_end(&t);
	}
	table_note(&t, "BASE/PATCHED are the seed's kernels without and with "
		       "the sync reordering.  Ours emulate both orders on our "
		       "file systems only: A a WB_SYNC_NONE pass per file "
		       "system (SYNC_FILE_RANGE_WRITE on every file), B a "
		       "WB_SYNC_ALL pass waited for per file system "
		       "(WAIT_BEFORE | WRITE | WAIT_AFTER), each then a "
		       "syncfs per file system in order.  Not sync(2): on "
		       "this shared machine it also syncs everyone else's "
		       "file systems.  Test 1 (nothing to write) measured the "
		       "kernel's own per-super-block calls, which user space "
		       "cannot make apart: its rows are shown, not counted.  "
		       "With 4 file systems two share a "
		       "disk: on a lab device, two loop devices on halves "
		       "of one lab disk, one model between them.");
	snprintf(ta, sizeof(ta), "%s/monitor", c->seed_dir);
	const char *dirs[] = {c->seed_dir, ta};
	rc = make_report(c, dirs, 2);
	table_close(&t);
	return rc;
}
