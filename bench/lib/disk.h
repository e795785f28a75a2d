/* SPDX-License-Identifier: MIT */
/*
 * disk.h - the benchmarks' disks: file systems on lab disks (flushkit
 * disk: a modelled block device in RAM, disk/labdisk.h) or on a plain
 * loop device over a sparse image file (native), and their cleanup.
 *
 * Devices (--device= of reproduce, bench sync, bench neighbor; one
 * parser, disk_profile_parse):
 *   native             a loop device (LOOP_CTL_GET_FREE + LOOP_CONFIGURE,
 *                      autoclear) on a sparse image in the run directory:
 *                      this machine's own disk, nothing modelled;
 *   hdd, ssd, nvme,    a lab disk with that model (docs/disk.md): its
 *   ram                timing, its volatile write cache, its image in RAM;
 *   throttle:BPS:IOPS  the lab disk's throttle model: the former cgroup
 *                      v1 blkio profile (one FIFO of writes, each
 *                      max(len/BPS, 1/IOPS)) without the host disk below;
 *   BPS:IOPS           the same (the former spelling, kept as a synonym).
 * BPS and IOPS as disk_throttle_parse (disk/model.h) reads them.  A lab
 * device may end in ",slowdown=K" (every model time K times longer, see
 * docs/disk.md) and ",no-write-cache" (write-through): "nvme,slowdown=4".
 * A profile carries the model's nominal write rate and IOPS
 * (struct disk_model's nominal_write_*, throttle's arguments), divided
 * by the slowdown, for callers that size work by them and print them.
 *
 * The floor.  A device whose nominal rate is below DISK_MIN_WRITE_BPS
 * (1 MB/s) or DISK_MIN_WRITE_IOPS (10) on an axis it limits is refused
 * (-ERANGE): sync(2) waits for the dirty data of every file system on
 * the machine, so while a device limited to 1 kB/s had a few MB dirty,
 * every sync(2) on the machine (anyone's) waited minutes for it.
 *
 * A disk is a device (above), mkfs.TYPE (a child with a fixed argument
 * array, no shell) and a mount(2) on RUN/NAME.  Two file systems on one
 * modelled disk (seed 004's four file systems on two disks) share one
 * model instance: disk_create with no type makes the bare lab disk (the
 * host), disk_create_part puts file system k of n on its own loop device
 * over the k-th n-th of the host's image (labdisk_attach_part).
 *
 * Cleanup.  Every disk lives in a run directory DISK_ROOT/run-PID (its
 * mount points, native images) that holds a lock file flock()ed by the
 * process that made it (and the children it forks) for as long as it
 * runs.  disk_destroy (and disk_destroy_all, registered with atexit by
 * disk_run_dir_create) unmounts, then detaches the loop device and
 * removes the image (native) or labdisk_destroy's the lab disk.  A run
 * that was killed (SIGKILL, a crash) leaves its run directory unlocked:
 * disk_cleanup_stale, called at the start of every run, unmounts
 * whatever is mounted below such a directory, detaches every loop device
 * whose backing file is below it, removes the directory and resets the
 * blkio throttles that the former throttled profiles recorded there
 * (IMG.throttle, from a run of an older flushkit).  Lab disks are named
 * "fkrun-PID-NAME" after the process that made them; their daemons
 * (--orphan-cleanup) unmount their file systems when it dies, and
 * disk_cleanup_stale removes the lab disks whose maker is gone and the
 * stale ones (labdisk_cleanup_stale).  Callers
 * handle SIGINT/SIGTERM by stopping at the next step and calling
 * disk_destroy_all (the functions here are not async-signal-safe).
 *
 * Not thread-safe: setup and teardown from one thread.  Functions
 * return 0 or -errno and print what failed (cli_error) naming the path
 * and the operation.
 */
#ifndef FK_DISK_H
#define FK_DISK_H

#include <stddef.h>
#include <stdint.h>

#include "labdisk.h"

/* Where run directories go (flushkit-owned: nothing else lives there). */
#define DISK_ROOT "/var/tmp/flushkit-disks"

struct disk_profile {
	char name[64];	      /* the --device value, as given */
	char model[64];	      /* lab disk --model ("hdd", "throttle:1M:10");
			       * "" for native */
	const char *imitates; /* the model's real device; NULL for native */
	double slowdown;      /* 1: none */
	int no_write_cache;
	/* Nominal, after the slowdown; 0 = no limit (native, ram). */
	uint64_t write_bps;  /* sequential write bytes per second */
	uint64_t write_iops; /* 4 KiB random write IOPS past the cache */
};

/* The floor of a device (see the banner). */
#define DISK_MIN_WRITE_BPS 1000000ull
#define DISK_MIN_WRITE_IOPS 10ull

/* What --device takes, for usage texts. */
#define DISK_DEVICES                                                           \
	"native, hdd, ssd, nvme, ram, throttle:BPS:IOPS (or BPS:IOPS), "       \
	"optionally with ,slowdown=K and ,no-write-cache"

/* Parse a --device value.  0, -EINVAL (not a device) or -ERANGE (below
 * the floor).  Prints nothing. */
int disk_profile_parse(const char *s, struct disk_profile *p);
/* disk_profile_parse for option @opt ("--device") of command @cmd
 * ("reproduce", "bench sync"), printing the one error message of a bad
 * value as a usage error (cli_bad_value's two lines).  0, -EINVAL or
 * -ERANGE. */
int disk_profile_arg(const char *cmd, const char *opt, const char *s,
		     struct disk_profile *p);
/* A lab disk (not native)? */
static inline int disk_profile_is_lab(const struct disk_profile *p)
{
	return p && p->model[0];
}
/* One line describing @p for table headings: "hdd (modelled 7200 rpm
 * ..., write 210 MB/s, 150 write IOPS)" or "native (this machine's
 * disk, nothing modelled)". */
void disk_profile_describe(const struct disk_profile *p, char *buf, size_t len);

struct disk {
	char type[16];	/* "ext4", "ext3", "xfs", "btrfs"; "" for a host */
	char img[1024]; /* the image file (a lab disk's: its FUSE image) */
	char mnt[1024]; /* the mount point */
	char dev[64];	/* "/dev/loopN" */
	unsigned maj, min;
	int loop_fd; /* native: held open, autoclear detaches on close */
	int img_made, looped, mounted, mnt_made, registered;
	struct labdisk lab; /* lab_made: the lab disk (also a host's) */
	int lab_made;
	int part; /* a part of a host (disk_create_part) */
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
 * and the stale lab disks (see the banner).  Returns the number of
 * things removed (mounts, loop devices, throttles, directories, lab
 * disks), 0 if none, or -errno.
 */
int disk_cleanup_stale(void);

/*
 * Make disk @name in @dir of @bytes: native (@prof NULL or native):
 * DIR/NAME.img (sparse) and a loop device on it; else a lab disk of
 * @prof's model (labdisk_create).  Then mkfs.@type on its device,
 * mounted on DIR/NAME; with @type NULL neither: a bare lab disk, the
 * host of disk_create_part (lab profiles only).  On failure whatever
 * was made is undone.  The disk is registered for disk_destroy_all.
 */
int disk_create(struct disk *d, const char *dir, const char *name,
		const char *type, uint64_t bytes,
		const struct disk_profile *prof);
/*
 * File system @k of @n on the host @host (a lab disk made by disk_create
 * with no type): a loop device over bytes [k * S, (k + 1) * S) of its
 * image, S = its size / @n rounded down to 4 KiB, mkfs.@type, mounted on
 * DIR/NAME.  The parts share the host's one model.  Destroy the parts
 * before the host (disk_destroy_all does: the newest first).  With
 * @type NULL only the loop device: disk_parts_make_fs then.
 */
int disk_create_part(struct disk *d, struct disk *host, unsigned k, unsigned n,
		     const char *dir, const char *name, const char *type);
/*
 * mkfs.@type on each of the @n parts (disk_create_part with no type),
 * then mount each on its DIR/NAME: every mkfs before any mount, because
 * mkfs.btrfs refuses a loop device whose backing file is that of a
 * mounted one ("/dev/loopN is mounted"), and the parts of one host share
 * its image.  0 or -errno; the parts stay registered (disk_destroy).
 */
int disk_parts_make_fs(struct disk *const *parts, unsigned n, const char *type);
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
