/* SPDX-License-Identifier: MIT */
/*
 * fkloop.h - real file systems on loop devices for the durability tests:
 * make a small ext4, xfs or btrfs image, mount it through a loop device,
 * cut its power (FS_IOC_GOINGDOWN without a log flush, as
 * `xfs_io -x -c "shutdown"` does), unmount and mount it again.
 *
 * After fkt_fs_power_cut() the file system has dropped its in-memory
 * journal and dirty pages, so what survives the remount is exactly what
 * the real file system had made durable: un-fsynced data is lost by the
 * file system's own rules.  The loop device's backing file lives in the
 * host page cache; that is fine because the host never crashes here.
 *
 * A file system made by fkt_fs_create_cut (fkcut.h) sits on a lab disk
 * instead: the calls below then cut the disk's power and lose its
 * write cache (see fkcut.h).
 *
 * Needs root and loop devices; the create call returns 77 otherwise so a
 * test can exit with it (skip).  Not thread-safe (test setup only).
 */
#ifndef FKLOOP_H
#define FKLOOP_H

#include <stdint.h>

struct fkt_cut;

struct fkt_fs {
	char type[16];	/* "ext4", "xfs", "btrfs" */
	char img[512];	/* backing image file */
	char mnt[512];	/* mount point (created if missing) */
	char opts[128]; /* extra mount options, "" for none */
	int mounted;
	/* If set ("/dev/loopN"), fkt_fs_mount mounts this block device
	 * instead of `-o loop img` (fkfault's stack keeps its own loop
	 * device, e.g. in direct-I/O mode).  fkt_fs_create leaves it empty. */
	char blkdev[64];
	/* Set by fkt_fs_create_cut (fkcut.h): a file system on a lab
	 * disk, whose power cut is at the disk (its write cache lost). */
	struct fkt_cut *cut;
};

/*
 * Make a @size_bytes image at @img, mkfs it as @type (ext4 with -m 0, no
 * root reserve, so ENOSPC comes for real), mount it at @mnt.
 * Returns 0, 77 (not root, no loop devices or no mkfs: skip), or -1.
 * @img may live on another mounted file system (the lab disk's FUSE
 * mount, say).
 */
int fkt_fs_create(struct fkt_fs *fs, const char *type, const char *img,
		  uint64_t size_bytes, const char *mnt);
/* mkfs @type ("ext4" with -m 0, "xfs", "btrfs") on the image or device
 * @path.  Returns 0, 77 (no mkfs.@type here) or -1 (unknown type, mkfs
 * failed: printed). */
int fkt_mkfs(const char *type, const char *path);
/* Mount / unmount the image.  0 or -1 (the reason is printed). */
int fkt_fs_mount(struct fkt_fs *fs);
int fkt_fs_umount(struct fkt_fs *fs);
/*
 * Shut the file system down: FS_IOC_GOINGDOWN with @how
 * (FKT_GOINGDOWN_NOLOGFLUSH = a power cut, FKT_GOINGDOWN_LOGFLUSH = a
 * clean stop of the journal).  Every later call on it fails with EIO.
 * 0 or -errno.  Safe to call from another thread or a signal-free child.
 */
#define FKT_GOINGDOWN_DEFAULT 0	   /* flush the whole device first */
#define FKT_GOINGDOWN_LOGFLUSH 1   /* flush the log, not the data */
#define FKT_GOINGDOWN_NOLOGFLUSH 2 /* flush nothing: a power cut */
int fkt_fs_goingdown(struct fkt_fs *fs, uint32_t how);
/*
 * A power cut: goingdown(NOLOGFLUSH), unmount (processes holding files
 * open on it must have exited first, or the unmount is lazy and the
 * remount waits), mount again (journal replay).  0 or -1.
 */
int fkt_fs_power_cut(struct fkt_fs *fs);
/*
 * Fill the file system holding @path with the file @path (created 0600,
 * or grown) until the kernel says ENOSPC: fallocate in halving chunks,
 * then 512-byte writes, fsync and syncfs, again until nothing more fits
 * (delayed allocation gives back its reservations once written).
 * Returns the file's size in bytes, or 0 if it cannot be opened.
 */
uint64_t fkt_fs_fill(const char *path);
/*
 * Write @len bytes of the byte @c over the open file @fd from offset 0,
 * in 64 KiB pwrite(2)s; nothing is synced, so an allocated file's pages
 * are now dirty.  Returns 0 or -errno (a short write is -EIO).
 */
int fkt_fill_fd(int fd, uint64_t len, char c);
/*
 * Create (or truncate) @path, mode 0600, with @len bytes of @c,
 * allocated and on disk (fkt_fill_fd, then fsync): a later rewrite
 * dirties pages of blocks the file already has, which a fault can then
 * be aimed at.  Returns an O_RDWR descriptor (the caller closes it) or
 * -errno (nothing left open).
 */
int fkt_make_file(const char *path, uint64_t len, char c);
/* Unmount if mounted, remove the image.  Idempotent. */
void fkt_fs_destroy(struct fkt_fs *fs);
/*
 * fkt_fs_create with the image at fkt_tmpdir()/@name.img and the mount
 * point at fkt_tmpdir()/mnt-@name.  Same returns (0, 77 or -1).
 */
int fkt_fs_create_tmp(struct fkt_fs *fs, const char *type, const char *name,
		      uint64_t size_bytes);
/*
 * fkt_fs_create_tmp for a test that needs the file system: exits 77
 * (SKIP) when fkt_fs_create_tmp says 77; another failure is a CHECK
 * failure.  Returns 0 (created, mounted) or -1.
 */
int fkt_fs_create_or_skip(struct fkt_fs *fs, const char *type, const char *name,
			  uint64_t size_bytes);
/* The space @fs has free for an unprivileged writer (f_bavail), in MiB;
 * -1 if statfs fails. */
double fkt_fs_free_mib(const struct fkt_fs *fs);
/*
 * Guard @fs (one at a time, the last call wins) for the rest of the
 * program: at exit fkt_fs_destroy (before the temporary directory goes),
 * on SIGINT or SIGTERM a lazy unmount and _exit(1), so an interrupted
 * test leaves no mount behind.  @fs must outlive the program (static).
 */
void fkt_fs_guard(struct fkt_fs *fs);
/*
 * Give back what fkt_fs_fill took: unlink the ballast @path, then
 * syncfs @fs so the freed blocks count again.  0 or -errno (of the
 * unlink; the syncfs is best effort).
 */
int fkt_fs_unfill(struct fkt_fs *fs, const char *path);

#endif
