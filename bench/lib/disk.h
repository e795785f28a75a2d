/* SPDX-License-Identifier: MIT */
/*
 * disk.h - emulated disks for the benchmarks: file systems on loop
 * devices backed by sparse image files, their writes throttled with the
 * root cgroup v1 blkio throttles, and their cleanup.
 *
 * A disk is an image file, a loop device on it (LOOP_CTL_GET_FREE +
 * LOOP_CONFIGURE, autoclear), mkfs.TYPE (a child with a fixed argument
 * array, no shell), a mount(2), and optionally the lines "MAJ:MIN BPS"
 * and "MAJ:MIN IOPS" in /sys/fs/cgroup/blkio/blkio.throttle.write_bps_device
 * and write_iops_device.  The throttle does reach page-cache writeback
 * (the flusher threads run in the root cgroup), so a loop device limited
 * to 150 MB/s and 150 write IOPS behaves, for writeback and fsync, like a
 * spinning disk of that speed whatever the disk below is.
 *
 * Profiles (--device=): "native" (no throttle), "ssd" (500 MB/s, 50000
 * write IOPS: a SATA SSD of the 840 EVO's class), "hdd" (150 MB/s, 150
 * write IOPS: a 7200 rpm disk), or "BPS:IOPS".  BPS is bytes per
 * second with an optional decimal suffix k, M or G (10^3, 10^6, 10^9:
 * the unit of the profiles, so "150M:150" is exactly "hdd"), optionally
 * followed by "B" or "B/s"; IOPS a plain count; 0 for no limit on that
 * axis.  Reads are not throttled: the seeds' experiments are about
 * writeback.
 *
 * The floor.  A profile below DISK_MIN_WRITE_BPS (1 MB/s) or
 * DISK_MIN_WRITE_IOPS (10) on an axis it limits is refused (-ERANGE):
 * sync(2) waits for the dirty data of every file system on the machine,
 * the throttled loop device's included, so while a device limited to
 * 1 kB/s had a few MB dirty, every sync(2) on the machine (anyone's)
 * waited minutes for it.  (Seed 004's four file systems on two disks
 * get half a profile each: hdd's halves are 75 MB/s, 75 IOPS.)
 *
 * Cleanup.  Every disk lives in a run directory DISK_ROOT/run-PID that
 * holds a lock file flock()ed by the process that made it (and the
 * children it forks) for as long as it runs.  disk_destroy (and
 * disk_destroy_all, registered with atexit by disk_run_dir_create)
 * resets the throttles, unmounts, detaches the loop device and removes
 * the image.  A run that was killed (SIGKILL, a crash) leaves its run
 * directory unlocked: disk_cleanup_stale, called at the start of every
 * run, unmounts whatever is mounted below such a directory, resets the
 * throttles of and detaches every loop device whose backing file is
 * below it, resets the throttles of loop devices that are no longer
 * attached, and removes the directory.  Callers handle SIGINT/SIGTERM by
 * stopping at the next step and calling disk_destroy_all (the functions
 * here are not async-signal-safe).
 *
 * Not thread-safe: setup and teardown from one thread.  Functions
 * return 0 or -errno and print what failed (cli_error) naming the path
 * and the operation.
 */
#ifndef FK_DISK_H
#define FK_DISK_H

#include <stddef.h>
#include <stdint.h>

/* Where run directories go (flushkit-owned: nothing else lives there). */
#define DISK_ROOT "/var/tmp/flushkit-disks"

struct disk_profile {
	char name[64];	     /* "native", "ssd", "hdd", "BPS:IOPS" */
	uint64_t write_bps;  /* bytes per second, 0 = no limit */
	uint64_t write_iops; /* write requests per second, 0 = no limit */
};

/* The floor of a throttled profile (see the banner). */
#define DISK_MIN_WRITE_BPS 1000000ull
#define DISK_MIN_WRITE_IOPS 10ull

/* Parse a --device value.  0, -EINVAL (not a profile, or BPS:IOPS
 * both 0: no emulated disk) or -ERANGE (a limit below the floor). */
int disk_profile_parse(const char *s, struct disk_profile *p);
/* Divide a profile's limits by @n (file systems sharing one disk). */
void disk_profile_share(struct disk_profile *p, unsigned n);

/* Whether the root cgroup v1 blkio write throttles exist here. */
int disk_throttle_supported(void);
/* Write "MAJ:MIN @bps" and "MAJ:MIN @iops" (0: remove the limit). */
int disk_throttle_set(unsigned maj, unsigned min, uint64_t bps, uint64_t iops);

struct disk {
	char type[16];	/* "ext4", "ext3", "xfs", "btrfs" */
	char img[1024]; /* the image file */
	char mnt[1024]; /* the mount point */
	char dev[64];	/* "/dev/loopN" */
	unsigned maj, min;
	int loop_fd; /* held open: autoclear detaches on close */
	int img_made, looped, mounted, throttled, registered;
};

/*
 * Create the run directory DISK_ROOT/run-PID (mode 0700, DISK_ROOT too)
 * with its lock, first removing what killed runs left (disk_cleanup_stale).
 * Writes its path to @dir.  Registers disk_destroy_all with atexit.
 */
int disk_run_dir_create(char *dir, size_t len);
/* Remove the run directory (after every disk in it is destroyed). */
void disk_run_dir_remove(const char *dir);

/*
 * Remove what runs that are no longer alive left behind under DISK_ROOT
 * (see the banner).  Returns the number of things removed (mounts, loop
 * devices, throttles, directories), 0 if none, or -errno.
 */
int disk_cleanup_stale(void);

/*
 * Make disk @name in @dir: DIR/NAME.img of @bytes (sparse), a loop
 * device on it, mkfs.@type, mounted on DIR/NAME, throttled by @prof
 * (NULL or native: not throttled).  On failure whatever was made is
 * undone.  The disk is registered for disk_destroy_all.
 */
int disk_create(struct disk *d, const char *dir, const char *name,
		const char *type, uint64_t bytes,
		const struct disk_profile *prof);
/* Undo disk_create (idempotent).  0 or -EIO if something stays. */
int disk_destroy(struct disk *d);
/* Unmount and mount again: the file system's pages leave the page
 * cache (its dirty ones written first), and only this file system's:
 * "from empty memory" without dropping the whole machine's cache. */
int disk_remount(struct disk *d);
/* disk_destroy every registered disk. */
void disk_destroy_all(void);

/* Pieces, also for tests/lib/fkloop.c. */
int disk_loop_attach(const char *img, struct disk *d);
int disk_loop_detach(struct disk *d);
/* Detach every loop device whose backing file is @img.  Count or -errno. */
int disk_loop_detach_file(const char *img);
/* mkfs.@type on @dev; -ENOENT if there is no mkfs.@type in PATH. */
int disk_mkfs(const char *type, const char *dev);
/* Is @prog an executable in PATH? */
int disk_in_path(const char *prog);

#endif
