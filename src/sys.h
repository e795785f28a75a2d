/* SPDX-License-Identifier: MIT */
/*
 * sys.h - the syscall table.
 *
 * Every system call libflushkit makes goes through fk_sys, a table of
 * function pointers.  Each entry returns 0 (or a count) on success and
 * -errno on failure, never -1 with errno set; EINTR is retried inside
 * the default entries.  Tests replace entries to inject faults (EIO,
 * ENOSPC, ENOSYS, ...) and to record the order of calls, the way
 * SQLite's os_unix.c aSyscall[] table is used by its test harness.
 *
 * The table is process-global and not locked: replace entries before
 * starting threads that use the library, and restore with
 * fk_sys_reset().
 *
 * This header is private to the library and its tests.
 */
#ifndef FK_SYS_H
#define FK_SYS_H

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <time.h>

#include "flushkit.h"

/* What cachestat(2) reports of a file's page cache, in pages. */
struct fk_cachestat {
	uint64_t nr_cache;
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_evicted;
	uint64_t nr_recently_evicted;
};

struct fk_sys_ops {
	int (*openat)(int dirfd, const char *path, int flags, mode_t mode);
	int (*close)(int fd);
	ssize_t (*read)(int fd, void *buf, size_t len);
	ssize_t (*write)(int fd, const void *buf, size_t len);
	ssize_t (*pread)(int fd, void *buf, size_t len, off_t off);
	ssize_t (*pwrite)(int fd, const void *buf, size_t len, off_t off);
	int (*fsync)(int fd);
	int (*fdatasync)(int fd);
	int (*sync_file_range)(int fd, off_t off, off_t len,
			       unsigned int flags);
	int (*fadvise)(int fd, off_t off, off_t len, int advice);
	int (*syncfs)(int fd);
	void (*sync)(void);
	int (*fstat)(int fd, struct stat *st);
	int (*fstatat)(int dirfd, const char *path, struct stat *st, int flags);
	int (*fstatfs)(int fd, struct statfs *st);
	/* statx(@fd, "", AT_EMPTY_PATH, @mask): the file @fd is open on */
	int (*fstatx)(int fd, unsigned int mask, struct statx *stx);
	ssize_t (*getdents64)(int fd, void *buf, size_t len);
	off_t (*lseek)(int fd, off_t off, int whence);
	/* fcntl(fd, cmd, fl) for the record-lock commands (F_OFD_SETLK,
	 * F_OFD_GETLK, F_SETLK, ...) */
	int (*fcntl_lock)(int fd, int cmd, struct flock *fl);
	/* flock(fd, op): LOCK_EX | LOCK_NB on a data directory */
	int (*flock)(int fd, int op);
	ssize_t (*copy_file_range)(int fd_in, off_t *off_in, int fd_out,
				   off_t *off_out, size_t len,
				   unsigned int flags);
	int (*ftruncate)(int fd, off_t len);
	int (*fallocate)(int fd, int mode, off_t off, off_t len);
	int (*mkdirat)(int dirfd, const char *path, mode_t mode);
	int (*mknodat)(int dirfd, const char *path, mode_t mode, dev_t dev);
	int (*symlinkat)(const char *target, int dirfd, const char *path);
	ssize_t (*readlinkat)(int dirfd, const char *path, char *buf,
			      size_t len);
	int (*linkat)(int olddirfd, const char *oldpath, int newdirfd,
		      const char *newpath, int flags);
	int (*unlinkat)(int dirfd, const char *path, int flags);
	int (*renameat)(int olddirfd, const char *oldpath, int newdirfd,
			const char *newpath);
	int (*fchmod)(int fd, mode_t mode);
	int (*fchmodat)(int dirfd, const char *path, mode_t mode, int flags);
	int (*fchown)(int fd, uid_t uid, gid_t gid);
	int (*fchownat)(int dirfd, const char *path, uid_t uid, gid_t gid,
			int flags);
	int (*futimens)(int fd, const struct timespec ts[2]);
	int (*utimensat)(int dirfd, const char *path,
			 const struct timespec ts[2], int flags);
	ssize_t (*flistxattr)(int fd, char *list, size_t len);
	ssize_t (*fgetxattr)(int fd, const char *name, void *val, size_t len);
	int (*fsetxattr)(int fd, const char *name, const void *val, size_t len,
			 int flags);
	int (*ioctl)(int fd, unsigned long req, void *arg);
	/* cachestat(2) (Linux 6.5, syscall 451) over the whole file: the
	 * page cache state of @fd without reading it; -ENOSYS where the
	 * kernel lacks it. */
	int (*cachestat)(int fd, struct fk_cachestat *cs);
	/* cachestat(2) of the bytes [off, off + len) of @fd (len 0: to the
	 * end of the file); -ENOSYS where the kernel lacks it. */
	int (*cachestat_range)(int fd, uint64_t off, uint64_t len,
			       struct fk_cachestat *cs);
};

/* The live table.  Library code calls fk_sys.fsync(fd) and so on. */
extern struct fk_sys_ops fk_sys;
/* The real system calls (EINTR retried, -errno returned). */
extern const struct fk_sys_ops fk_sys_default;

/* Restore every entry of fk_sys to fk_sys_default. */
void fk_sys_reset(void);

/* fk_now_ns (the monotonic clock) is public: flushkit.h, SECTION clock. */

/*
 * Write all of buf at off, retrying short writes.  Returns 0 or -errno
 * (a write that makes no progress returns -ENOSPC).
 */
int fk_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);
/* Read all of len bytes at off.  Returns bytes read (short at EOF) or -errno.
 */
ssize_t fk_pread_all(int fd, void *buf, size_t len, uint64_t off);

/*
 * Call @fn(@arg, name, d_type) for each entry of the directory open at
 * @fd but "." and "..", read through fk_sys.getdents64 from the current
 * offset to the end.  A non-zero return of @fn stops the loop and is
 * returned.  Returns 0, @fn's value, or -errno of getdents64.
 */
int fk_dirents(int fd,
	       int (*fn)(void *arg, const char *name, unsigned char type),
	       void *arg);

#endif
