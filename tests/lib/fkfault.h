/* SPDX-License-Identifier: MIT */
/*
 * fkfault.h - real kernel I/O errors for the durability tests: start
 * the lab disk daemon (flushkit-diskd, disk/diskd.c: a FUSE file system
 * with one image file whose reads, writes and fsyncs fail on demand,
 * disk/fault.h's rules) with the model ram and no write cache, put a
 * loop device and a real ext4 or xfs on its image, and fail exactly the
 * blocks of chosen files (found with FIEMAP).
 *
 * The stack:  M (ext4/xfs) -> /dev/loopN -> F/image (FUSE,
 *             flushkit-diskd --model=ram --no-write-cache)
 *             -> --backing file in the test's temp dir.
 * Model ram answers every request at once; without its write cache a
 * completed write is durable, so nothing but a rule fails or loses a
 * request.
 * A failed write of the image fails the loop device's bio, so the inner
 * file system handles a real block-layer write error: ext4 and xfs mark
 * the page clean, record the error in the mapping (errseq), and fsync()
 * reports it ONCE per open file description.
 *
 * What the kernel does with it (Linux 6.18, ext4 and xfs;
 * test-disk-faults and test-eio-* check it on every run):
 * - A failed image write fails the loop device's bio, with and without
 *   direct I/O on the loop device (FUSE files accept O_DIRECT: sysfs
 *   loop/dio reads 1).  -EIO becomes BLK_STS_IOERR, -ENOSPC becomes
 *   BLK_STS_NOSPC and the inner fsync returns ENOSPC, not EIO.
 * - The failed pages are marked clean and keep the NEW data (read back
 *   from the page cache); after POSIX_FADV_DONTNEED the OLD data comes
 *   back from the disk.  fsync returns the error once per open file
 *   description: each descriptor open before the error gets it once, a
 *   second fsync on it (or one on a descriptor opened after the error
 *   was seen) returns 0.  Two fsyncs of one descriptor in flight at
 *   once: one gets EIO, the other 0.
 * - sync_file_range(SYNC_FILE_RANGE_WRITE) only starts the (failing)
 *   writeback; with SYNC_FILE_RANGE_WAIT_AFTER it returns EIO and the
 *   next fsync on that descriptor returns 0.
 * - A failed read fails the bio (pread EIO) once the inner page cache no
 *   longer has the page; readahead reads around it separately.  The
 *   daemon opens the image with FOPEN_DIRECT_IO, so FUSE's own cache
 *   never hides a read fault or keeps a write.
 * - REQ_OP_FLUSH / FUA from the inner file system becomes an fsync of
 *   the image, i.e. a FUSE FSYNC: "f" rules fail the inner journal's
 *   cache flushes and the journal aborts (ext4 goes read-only; tried by
 *   hand with `flushkit disk fault DEV "all f EIO"`, no test).
 *
 * Usage (a test; every call returns 0 or -errno unless said otherwise):
 *
 *	struct fkt_stack st;
 *	int r = fkt_stack_create(&st, "ext4", 64 << 20, 0);
 *	if (r == 77) SKIP("needs root, /dev/fuse, loop devices");
 *	CHECK(r == 0);
 *	// st.fs.mnt is the inner mount point (a struct fkt_fs, fkloop.h:
 *	// fkt_fs_goingdown / fkt_fs_power_cut work on it).
 *	... create and fsync (or fallocate) a file P under st.fs.mnt ...
 *	fkt_dev_fail_file(&st.dev, P, FKT_OP_WRITE, EIO);  // its blocks
 *	... overwrite P, fsync() -> -1/EIO; fsync() again -> 0 ...
 *	struct fkt_dev_counters c;
 *	fkt_dev_counters(&st.dev, &c);  // c.write_faults > 0
 *	fkt_dev_clear(&st.dev);
 *	fkt_stack_destroy(&st);  // also done at exit, even after a failure
 *
 * Block addresses: FIEMAP's fe_physical is a byte offset on the inner
 * file system's device, which is the image byte offset (loop offset 0).
 * A file must have ALLOCATED blocks before its blocks can be targeted:
 * fsync it once, or fallocate() it (unwritten extents have their
 * physical address at once).  Delayed-allocation extents (written, not
 * yet flushed) have no address: fkt_fiemap() returns -ENODATA for them
 * unless FKT_FIEMAP_SYNC (which WRITES the file back first) is given.
 *
 * Reads: the inner file system's page cache serves reads of cached
 * pages without I/O; drop them (fkt_drop_file_cache) to see read faults.
 *
 * Everything started here is torn down at exit (inner unmount, loop
 * detach, FUSE unmount, the daemon exits), also when a test fails, is
 * killed by SIGTERM/SIGINT or crashes (SIGSEGV/SIGABRT/SIGBUS handlers
 * installed where none was).  If the test dies by SIGKILL, the daemon
 * gets its parent-death signal and unmounts every file system mounted
 * from a loop device on its image, then itself (--orphan-cleanup); only
 * the temp dir stays.  The parent-death signal follows the THREAD that
 * started the daemon: call the start functions from the main thread
 * (or one that outlives the stack).  The temp dirs live under
 * fkt_tmpdir().  Needs root, /dev/fuse, fusermount3
 * and the built flushkit-diskd (found as labdisk_daemon_path does:
 * $FLUSHKIT_DISKD, or BUILD/flushkit-diskd one directory above the test;
 * $FK_FAULTDEV, the old name, still wins when set); the start calls
 * return 77 otherwise (skip).
 * Not thread-safe (test setup); the rule calls may be used while other
 * threads do I/O on the stack.
 */
#ifndef FKFAULT_H
#define FKFAULT_H

#include "fkloop.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Operations a fault rule applies to (bit mask). */
#define FKT_OP_READ 1u
#define FKT_OP_WRITE 2u
#define FKT_OP_FSYNC 4u /* fsync, fdatasync and flush (close) of the image */
#define FKT_OP_RW (FKT_OP_READ | FKT_OP_WRITE)
#define FKT_OP_ALL (FKT_OP_READ | FKT_OP_WRITE | FKT_OP_FSYNC)

struct fkt_dev {
	char dir[256];	   /* private temp dir */
	char backing[300]; /* real image file (dir/backing.img) */
	char mnt[300];	   /* FUSE mount point (dir/fuse) */
	char image[320];   /* mnt/image: the file for the loop device */
	char ctl[320];	   /* mnt/ctl: the control file */
	pid_t pid;	   /* flushkit-diskd, 0 when stopped */
	int mounted;
};

/*
 * Start the daemon on a backing file of @size_bytes (created sparse in a new
 * private dir under fkt_tmpdir()).  If @mkfs_type is not NULL ("ext4",
 * "xfs", "btrfs") the backing file is formatted first (directly, not
 * through FUSE; ext4 with -m 0).  Returns once the FUSE mount answers.
 * 0, 77 (skip: not root, no /dev/fuse, no fusermount3, no
 * flushkit-diskd binary, no mkfs) or -1 (printed).
 */
int fkt_dev_start(struct fkt_dev *d, uint64_t size_bytes,
		  const char *mkfs_type);
/* Unmount FUSE (retrying while busy, lazily at last), reap the daemon,
 * remove the dir.  Idempotent.  Unmount the inner fs first. */
void fkt_dev_stop(struct fkt_dev *d);

/*
 * Fault rules (disk/fault.h has the control protocol).  @err is a
 * positive errno: EIO or ENOSPC (any errno the daemon accepts).
 *
 * fail_range: every @ops request that overlaps image bytes
 *   [@off, @off + @len) fails as a whole (@len 0: to the end; fsync
 *   rules ignore the range).  Rules add up; each stays until cleared.
 * fail_after: the first @n @ops requests from now succeed, every later
 *   one fails (all ranges).  n = 0: fail everything from now on.
 * fail_file: fail_range for each extent of @path (a file on the inner
 *   file system), via fkt_fiemap without SYNC: -ENODATA when it has
 *   unallocated (delalloc) data.  Returns the number of ranges added.
 * clear: remove every rule (counters stay).
 */
int fkt_dev_fail_range(struct fkt_dev *d, unsigned ops, int err, uint64_t off,
		       uint64_t len);
int fkt_dev_fail_after(struct fkt_dev *d, unsigned ops, int err, uint64_t n);
int fkt_dev_fail_file(struct fkt_dev *d, const char *path, unsigned ops,
		      int err);
int fkt_dev_clear(struct fkt_dev *d);

/* Counters since start (or the last reset): requests the daemon got for
 * the image, and how many of them it failed. */
struct fkt_dev_counters {
	uint64_t reads, writes, fsyncs, flushes;
	uint64_t read_bytes, write_bytes;
	uint64_t faults; /* all failed requests */
	uint64_t read_faults, write_faults, fsync_faults;
	uint64_t rules; /* rules in force */
};
int fkt_dev_counters(struct fkt_dev *d, struct fkt_dev_counters *c);
int fkt_dev_reset_counters(struct fkt_dev *d);
/* Wait (polling every 5 ms, up to @timeout_ms) until at least @min faults
 * of @ops fired in total (e.g. asynchronous writeback reached the
 * device).  0, -ETIMEDOUT or -errno. */
int fkt_dev_wait_faults(struct fkt_dev *d, unsigned ops, uint64_t min,
			int timeout_ms);

/*
 * The whole stack: the daemon with a backing file of @size_bytes formatted
 * as @type, a loop device on its image, the inner file system mounted at
 * st->fs.mnt (dir/mnt).  xfs needs >= 300 MiB.
 * @flags: FKT_STACK_DIO: the loop device in direct-I/O mode
 * (losetup --direct-io=on).  0, 77 (skip) or -1.
 */
#define FKT_STACK_DIO 1u
struct fkt_stack {
	struct fkt_dev dev;
	struct fkt_fs fs; /* fs.img = dev.image, fs.mnt = inner mount */
	char loopdev[64]; /* "/dev/loopN" while set up (= fs.blkdev) */
	int loop_fd;	  /* held open so the device stays while the
			   * inner fs is unmounted; autoclear does the
			   * rest if the test dies */
	unsigned flags;
};
int fkt_stack_create(struct fkt_stack *st, const char *type,
		     uint64_t size_bytes, unsigned flags);
/* Unmount and mount the inner fs again (after fkt_dev_clear, say).
 * 0 or -1. */
int fkt_stack_umount(struct fkt_stack *st);
int fkt_stack_mount(struct fkt_stack *st);
/* Unmount the inner fs, detach the loop device, stop the daemon.  Also run
 * at exit for every stack not yet destroyed.  Idempotent. */
void fkt_stack_destroy(struct fkt_stack *st);

/*
 * Image byte ranges of a file's blocks: up to @max extents in file order,
 * adjacent ones merged.  Returns the count, -ENODATA if some data has no
 * block yet (delalloc; or inline/encoded data), -E2BIG if more than @max,
 * or -errno.  @flags FKT_FIEMAP_SYNC: write the file back first
 * (FIEMAP_FLAG_SYNC) so delalloc data gets its blocks.
 */
#define FKT_FIEMAP_SYNC 1u
struct fkt_extent {
	uint64_t file_off;  /* byte offset in the file */
	uint64_t dev_off;   /* byte offset in the image */
	uint64_t len;	    /* bytes */
	unsigned unwritten; /* 1: preallocated, reads as zeros */
};
int fkt_fiemap(const char *path, unsigned flags, struct fkt_extent *ext,
	       size_t max);

/* Drop a file's clean pages from the page cache (POSIX_FADV_DONTNEED), so
 * the next read goes to the device. */
int fkt_drop_file_cache(const char *path);

#endif
