/* SPDX-License-Identifier: MIT */
/*
 * fktorture.h - the crash torture harness (kill -9, power cut, crash
 * during recovery), shared by tests/tools/fk-torture.c (the full trial
 * counts, run by scripts/torture.sh) and the CI tests
 * test-torture-{kill,powercut,recovery}.c and test-tpcb-crash.c (a few
 * trials each).
 *
 * One run: a TPC-B store (scale 1, small shared buffers, 1 MiB table
 * and WAL segments) in a work directory, or on a loop-mounted ext4/xfs
 * made once per run.  Each trial injects one fault, recovers, verifies;
 * the database is kept from trial to trial (every reopen is a recovery,
 * later trials replay WAL in recycled segments) and made afresh when a
 * trial failed or the history table has grown past max_history_rows.
 *
 * Faults:
 *   kill      a child runs TPC-B from 4 threads and writes each
 *             acknowledged commit to a pipe; SIGKILL at a random moment
 *             (one trial in five within 30 ms of the start: during open).
 *   powercut  the same, then FS_IOC_GOINGDOWN(NOLOGFLUSH) while the
 *             child still runs, SIGKILL, unmount, mount (journal replay).
 *             With cut_disk the file system is on a lab disk and the
 *             cut is the disk's (fkcut.h: its unflushed write cache
 *             dropped, or kept in part or reordered), ext4, xfs or
 *             btrfs; three cuts in four are then at a chosen point:
 *             as the disk's N-th FLUSH arrives, or (made by the
 *             workload child itself) after a WAL fsync returned,
 *             mid-checkpoint, after a rename.
 *             One trial in three kills a first child with SIGKILL, so
 *             the child that gets the power cut began by recovering
 *             from pages written but never fsynced.
 *   recovery-kill, recovery-powercut
 *             a child builds up a long WAL (no checkpoint for the whole
 *             run) and is killed (power cut; with power cuts, one trial
 *             in three kill -9 only); then 1..max_interrupts
 *             reopens in a row are each interrupted: at the N-th
 *             state-changing call of the reopen (pwrite, write, fsync,
 *             fdatasync, renameat, unlinkat, ftruncate, fallocate,
 *             openat with O_CREAT, mkdirat), counted through the
 *             syscall table, so every step of the replay and of the
 *             end-of-recovery checkpoint is a possible crash point; or,
 *             one in four, at a random time.  A power cut does the
 *             goingdown before the call and then the kill.
 *
 * Verification, after every fault, in a forked child that reopens the
 * store (crash recovery) and reads every row: each commit acknowledged
 * since the database was made (not only in this trial) is at its
 * history row with its txid, aid and delta; no history row was
 * acknowledged twice and no txid is in history twice; accounts =
 * tellers = branches = history deltas.  Half the time the verifier
 * closes the store (always with always_close), else it exits without
 * closing (the next open is again a recovery); a close that fails fails
 * the trial.
 *
 * Output: a line per failure (seed, trial, what), a line per trial with
 * verbose, and at the end "trials: N, failed: F (S s)".
 *
 * Not thread-safe (one run per process); forks; needs root for the
 * power-cut faults.
 */
#ifndef FKTORTURE_H
#define FKTORTURE_H

#include <stdint.h>

enum fkt_fault {
	FKT_FAULT_KILL = 0,
	FKT_FAULT_POWERCUT = 1,
	FKT_FAULT_RECOVERY_KILL = 2,
	FKT_FAULT_RECOVERY_POWERCUT = 3,
};

enum fkt_preset {
	FKT_PRESET_BOTH = 0, /* alternate naive / smooth per trial */
	FKT_PRESET_NAIVE = 1,
	FKT_PRESET_SMOOTH = 2,
};

struct fkt_torture_opts {
	int fault;	     /* enum fkt_fault */
	const char *fs_type; /* "ext4", "xfs" or NULL (plain
			      * directory; power cuts need one) */
	const char *dir;     /* work directory; NULL: fkt_tmpdir() */
	unsigned trials;
	uint64_t seed;
	int preset; /* enum fkt_preset */
	int verbose;
	unsigned max_interrupts;   /* recovery faults: 1..N in a row */
	uint64_t max_history_rows; /* make the database afresh beyond */
	uint64_t fs_bytes;	   /* loop image size */
	int always_close;	   /* 1: the verifier closes the store
				    * after every recovery (0: half
				    * the time) */
	int wal_compression;	   /* fk_store_opts.wal_compression of
				    * every store (enum
				    * fk_wal_compression); OFF */
	/* Power cuts at the disk (fkcut.h): the file system on a lab
	 * disk (ram, write cache), its unflushed cache lost at the cut;
	 * ext4, xfs and btrfs.  Three workload cuts in four are then at
	 * a chosen point (FKT_POINT_*), the others at a random moment. */
	int cut_disk;
	const char *cut_mode; /* drop|subset|reorder; NULL: mixed */
	int flush_ignore;     /* negative control: the disk ignores
			       * FLUSH during each workload */
};

struct fkt_torture_result {
	unsigned trials, failed;
	double elapsed_s;
	uint64_t acks;		    /* commits acknowledged, all trials */
	unsigned interrupts;	    /* recovery faults: reopens cut */
	unsigned in_replay, in_end; /* ... at a call in the replay /
				     * the cut and end-of-recovery
				     * checkpoint */
	unsigned after_open, timed; /* ... after the open returned /
				     * at a random time */
	/* cut_disk: workload cuts at a chosen point, asked / made there
	 * (the others fell back to the parent's timer), by point. */
	unsigned point_asked[5], point_hit[5];
	/* Trials whose power-cut workload acknowledged a commit, and how
	 * many of those failed (the negative control's loss rate). */
	unsigned acked_trials, acked_failed;
};

/* The chosen cut points of cut_disk (index of point_asked/point_hit):
 * a random moment; right after a WAL fsync/fdatasync returned (the
 * commit it covers may be acknowledged); right after an fsync of a
 * table segment or directory returned (mid-checkpoint); right after a
 * rename returned, before its directory's fsync; as the disk's N-th
 * FLUSH arrives (fkt_cut_arm_flush: the cache full). */
enum {
	FKT_POINT_TIMED = 0,
	FKT_POINT_FSYNC = 1,
	FKT_POINT_CHECKPOINT = 2,
	FKT_POINT_RENAME = 3,
	FKT_POINT_FLUSH = 4
};
const char *fkt_torture_point_name(int point);

/* Defaults: kill, 10 trials, seed from the clock, both presets,
 * 3 interrupts, 150,000 history rows, a 400 MiB image. */
void fkt_torture_opts_init(struct fkt_torture_opts *o);
/* "kill", "powercut", "recovery-kill", "recovery-powercut" -> enum,
 * or -1. */
int fkt_torture_fault_parse(const char *name);
const char *fkt_torture_fault_name(int fault);

/*
 * Run @o->trials trials; fill @res and print the summary line.
 * Returns 0 (ran: res->failed says how it went), 77 (power cut asked
 * and not root / no loop devices / no mkfs) or -1 (setup failed: the
 * work directory, the file system or the first database).
 */
int fkt_torture_run(const struct fkt_torture_opts *o,
		    struct fkt_torture_result *res);

/* FK_TRIALS from the environment if set (> 0), else @dflt. */
unsigned fkt_torture_trials_env(unsigned dflt);

#endif
