/* SPDX-License-Identifier: MIT */
/*
 * fkcut.h - power cuts that lose the disk's write cache: a real file
 * system (ext4, xfs, btrfs) on a lab disk (flushkit disk, disk/labdisk.h:
 * model ram, write cache on: a write is durable only once a FLUSH
 * covered it), cut at the disk.
 *
 * A cut file system is a struct fkt_fs (fkloop.h) whose `cut` is set:
 * fkloop's calls then act at the disk, so every test written against
 * fkloop's power cut runs unchanged on it:
 *   fkt_fs_goingdown(fs, NOLOGFLUSH)  = fkt_cut_power: the disk's power
 *       goes (ctl "cut MODE SEED"): the unflushed cache is dropped, or a
 *       random subset of it kept (subset), or a random prefix of a
 *       random order of its writes (reorder); every later request fails
 *       with EIO, so the mounted file system is dead (expect errors and
 *       a shut-down file system);
 *   fkt_fs_umount                     unmounts the dead file system (its
 *       users must have exited: a lazy unmount would keep its superblock,
 *       and the next mount of the device would get it back);
 *   fkt_fs_mount                      on a cut disk: BLKFLSBUF on the
 *       loop device while still cut (dirty buffer-cache pages fail and
 *       are dropped, none reaches the disk after the power is back),
 *       ctl "poweron" (the durable image is served), FLUSH honoured
 *       again, then the mount: the file system's own recovery;
 *   fkt_fs_destroy                    unmounts, destroys the disk.
 * fkt_fs_power_cut is all of it.  btrfs, which refuses FS_IOC_GOINGDOWN,
 * gets power cuts this way.
 *
 * Every cut prints one line, "cut N: mode M seed S" (the daemon's
 * cut_seed), to stdout.  The seed of every cut is drawn from the seed
 * given at creation, so a run replays its choices from its seed; the
 * cache contents at a random moment depend on timing and do not replay.
 *
 * The negative control (flush_ignore): from fkt_cut_window() to the next
 * cut the disk acknowledges every FLUSH without making anything durable
 * (ctl "flush ignore"), so an fsync promises nothing: trials that must
 * keep data then lose it, which shows the checks can fail.
 *
 * Environment (fkt_cut_opts_env): FK_CUT=disk chooses the lab disk in
 * the tests that also run FS_IOC_GOINGDOWN (test-tree-powercut);
 * FK_CUT_MODE drop|subset|reorder|mixed (mixed: drawn per cut, the
 * default); FK_CUT_FLUSH=ignore the negative control (mode drop unless
 * FK_CUT_MODE says otherwise: a disk that ignores FLUSH and keeps part
 * of its cache may leave a file system that does not mount).
 *
 * Needs root, /dev/fuse, loop devices, the built flushkit-diskd (77
 * otherwise).  Not thread-safe; a forked child may cut (its line and
 * count are its own).
 */
#ifndef FKCUT_H
#define FKCUT_H

#include "labdisk.h"

#include <stdint.h>
#include <sys/types.h>

struct fkt_fs;

struct fkt_cut_opts {
	const char *mode; /* "drop", "subset", "reorder"; NULL or "mixed":
			   * drawn per cut */
	int flush_ignore; /* the negative control (above) */
	uint64_t seed;	  /* of the cut seeds and modes */
};

struct fkt_cut {
	struct labdisk disk;
	char mode[16]; /* "" : mixed */
	int flush_ignore;
	uint64_t rng;
	unsigned cuts;	/* cuts so far (in this process) */
	int is_cut;	/* between fkt_cut_power and the next mount */
	uint64_t armed; /* fkt_cut_arm_flush's N, until the cut */
	char last_mode[16];
	uint64_t last_seed;
};

/* FK_CUT_MODE, FK_CUT_FLUSH into @o (seed: @seed).  Returns 1 if FK_CUT
 * is "disk", else 0.  -1: a bad value (printed). */
int fkt_cut_opts_env(struct fkt_cut_opts *o, uint64_t seed);
/* "drop", "subset", "reorder", "mixed" (NULL too): 0; else -1. */
int fkt_cut_mode_ok(const char *mode);

/*
 * Make a lab disk of @size_bytes (model ram, write cache on), mkfs it as
 * @type, FLUSH it, mount it at @mnt (created if missing).  Returns 0, 77
 * (not root, no FUSE, no loop devices, no daemon, no mkfs.@type) or -1.
 */
int fkt_fs_create_cut(struct fkt_fs *fs, const char *type, uint64_t size_bytes,
		      const char *mnt, const struct fkt_cut_opts *o);
/* The power goes now (see the banner).  Idempotent until the next mount.
 * 0, 1 (another process had cut it already: nothing done) or -errno. */
int fkt_cut_power(struct fkt_fs *fs);
/* Arm the cut at the disk's @n-th FLUSH from now (ctl "cut MODE SEED
 * flush N"): the power goes as that FLUSH arrives, the cache holding
 * everything written before it, the moment a cache loss costs most.
 * fkt_cut_power then finds it cut (returns 1) and prints its line; it
 * cuts at once if the FLUSH never came.  0 or -errno. */
int fkt_cut_arm_flush(struct fkt_fs *fs, uint64_t n);
/* Open the negative control's window (no-op without flush_ignore).
 * 0 or -errno. */
int fkt_cut_window(struct fkt_fs *fs);
/* After the dead file system is unmounted: BLKFLSBUF, poweron, FLUSH
 * honoured.  0 or -errno.  fkt_fs_mount calls it. */
int fkt_cut_restore(struct fkt_fs *fs);
/* Destroy the disk (fkt_fs_destroy calls it). */
void fkt_cut_destroy(struct fkt_fs *fs);

/*
 * The cut tests' shared helpers.
 *
 * fkt_rnd: xorshift64* (Vigna, "An experimental exploration of
 * Marsaglia's xorshift generators, scrambled", 2016) on *@state; seed
 * it with fkt_rnd_seed (a zero seed becomes 1: xorshift's state must
 * not be 0).  The trials' choices are drawn from it, so a run replays
 * from its printed seed.
 */
void fkt_rnd_seed(uint64_t *state, uint64_t seed);
uint64_t fkt_rnd(uint64_t *state);
/* 0 .. @n-1 (0 if @n is 0). */
uint64_t fkt_rnd_below(uint64_t *state, uint64_t n);
/* The cut tests' seed: $FK_TEST_SEED (strtoull base 0: decimal, or 0x
 * hex), else time and pid.  The caller prints it with its trials. */
uint64_t fkt_cut_seed_env(void);
/* (FK_TRIALS has one parser for every test: fktorture.h's
 * fkt_torture_trials_env.) */

/*
 * Cleanup at exit and on SIGTERM/SIGINT: kill and reap *@child if it is
 * > 0 (@child may be NULL), then fkt_fs_destroy each of the @n file
 * systems of @fss in their order (an inner, nested one first), so no
 * lab disk, mount or loop device outlives the test.  On a signal the
 * cleanup runs and the signal is raised again with its default action.
 * Call once; the pointers must stay valid for the process's life.
 */
void fkt_cleanup_at_exit(struct fkt_fs *const *fss, unsigned n, pid_t *child);

#endif
