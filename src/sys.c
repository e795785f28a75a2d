// SPDX-License-Identifier: MIT
/*
 * sys.c - the default syscall table: thin wrappers that retry EINTR and
 * return -errno.  See sys.h for why the table exists.
 */
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

/* Evaluate expr until it does not fail with EINTR; map -1 to -errno. */
#define RETRY(type, expr)                                                      \
	do {                                                                   \
		type r_;                                                       \
		do {                                                           \
			r_ = (expr);                                           \
		} while (r_ == -1 && errno == EINTR);                          \
		return r_ == -1 ? -errno : r_;                                 \
	} while (0)

static int sys_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	RETRY(int, openat(dirfd, path, flags | O_CLOEXEC, mode));
}

static int sys_close(int fd)
{
	/*
	 * Never retry close(): on Linux the descriptor is gone even when
	 * EINTR is returned.  An error from close (NFS, some FUSE) is
	 * reported to the caller.
	 */
	int r = close(fd);
	if (r == -1 && errno != EINTR)
		return -errno;
	return 0;
}

static ssize_t sys_read(int fd, void *buf, size_t len)
{
	RETRY(ssize_t, read(fd, buf, len));
}

static ssize_t sys_write(int fd, const void *buf, size_t len)
{
	RETRY(ssize_t, write(fd, buf, len));
}

static ssize_t sys_pread(int fd, void *buf, size_t len, off_t off)
{
	RETRY(ssize_t, pread(fd, buf, len, off));
}

static ssize_t sys_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	RETRY(ssize_t, pwrite(fd, buf, len, off));
}

/* fsync is not retried on EINTR by the kernel's semantics either: it
 * cannot return EINTR on Linux file systems, but be safe. */
static int sys_fsync(int fd)
{
	RETRY(int, fsync(fd));
}

static int sys_fdatasync(int fd)
{
	RETRY(int, fdatasync(fd));
}

static int sys_sync_file_range(int fd, off_t off, off_t len, unsigned int flags)
{
	RETRY(int, sync_file_range(fd, off, len, flags));
}

static int sys_fadvise(int fd, off_t off, off_t len, int advice)
{
	/* posix_fadvise returns the error number instead of setting errno. */
	int r = posix_fadvise(fd, off, len, advice);
	return r ? -r : 0;
}

static int sys_syncfs(int fd)
{
	RETRY(int, syncfs(fd));
}

static void sys_sync(void)
{
	sync();
}

static int sys_fstat(int fd, struct stat *st)
{
	RETRY(int, fstat(fd, st));
}

static int sys_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	RETRY(int, fstatat(dirfd, path, st, flags));
}

static int sys_fstatfs(int fd, struct statfs *st)
{
	RETRY(int, fstatfs(fd, st));
}

static int sys_fstatx(int fd, unsigned int mask, struct statx *stx)
{
	RETRY(int, statx(fd, "", AT_EMPTY_PATH, mask, stx));
}

static ssize_t sys_getdents64(int fd, void *buf, size_t len)
{
	RETRY(ssize_t, syscall(SYS_getdents64, fd, buf, len));
}

static off_t sys_lseek(int fd, off_t off, int whence)
{
	off_t r = lseek(fd, off, whence);
	return r == -1 ? -errno : r;
}

static ssize_t sys_copy_file_range(int fd_in, off_t *off_in, int fd_out,
				   off_t *off_out, size_t len,
				   unsigned int flags)
{
	RETRY(ssize_t,
	      copy_file_range(fd_in, off_in, fd_out, off_out, len, flags));
}

static int sys_ftruncate(int fd, off_t len)
{
	RETRY(int, ftruncate(fd, len));
}

static int sys_fallocate(int fd, int mode, off_t off, off_t len)
{
	RETRY(int, fallocate(fd, mode, off, len));
}

static int sys_mkdirat(int dirfd, const char *path, mode_t mode)
{
	RETRY(int, mkdirat(dirfd, path, mode));
}

static int sys_mknodat(int dirfd, const char *path, mode_t mode, dev_t dev)
{
	RETRY(int, mknodat(dirfd, path, mode, dev));
}

static int sys_symlinkat(const char *target, int dirfd, const char *path)
{
	RETRY(int, symlinkat(target, dirfd, path));
}

static ssize_t sys_readlinkat(int dirfd, const char *path, char *buf,
			      size_t len)
{
	RETRY(ssize_t, readlinkat(dirfd, path, buf, len));
}

static int sys_linkat(int olddirfd, const char *oldpath, int newdirfd,
		      const char *newpath, int flags)
{
	RETRY(int, linkat(olddirfd, oldpath, newdirfd, newpath, flags));
}

static int sys_unlinkat(int dirfd, const char *path, int flags)
{
	RETRY(int, unlinkat(dirfd, path, flags));
}

static int sys_renameat(int olddirfd, const char *oldpath, int newdirfd,
			const char *newpath)
{
	RETRY(int, renameat(olddirfd, oldpath, newdirfd, newpath));
}

static int sys_fchmod(int fd, mode_t mode)
{
	RETRY(int, fchmod(fd, mode));
}

static int sys_fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
	RETRY(int, fchmodat(dirfd, path, mode, flags));
}

static int sys_fchown(int fd, uid_t uid, gid_t gid)
{
	RETRY(int, fchown(fd, uid, gid));
}

static int sys_fchownat(int dirfd, const char *path, uid_t uid, gid_t gid,
			int flags)
{
	RETRY(int, fchownat(dirfd, path, uid, gid, flags));
}

static int sys_futimens(int fd, const struct timespec ts[2])
{
	RETRY(int, futimens(fd, ts));
}

static int sys_utimensat(int dirfd, const char *path,
			 const struct timespec ts[2], int flags)
{
	RETRY(int, utimensat(dirfd, path, ts, flags));
}

static ssize_t sys_flistxattr(int fd, char *list, size_t len)
{
	RETRY(ssize_t, flistxattr(fd, list, len));
}

static ssize_t sys_fgetxattr(int fd, const char *name, void *val, size_t len)
{
	RETRY(ssize_t, fgetxattr(fd, name, val, len));
}

static int sys_fsetxattr(int fd, const char *name, const void *val, size_t len,
			 int flags)
{
	RETRY(int, fsetxattr(fd, name, val, len, flags));
}

static int sys_fcntl_lock(int fd, int cmd, struct flock *fl)
{
	RETRY(int, fcntl(fd, cmd, fl));
}

static int sys_flock(int fd, int op)
{
	RETRY(int, flock(fd, op));
}

static int sys_ioctl(int fd, unsigned long req, void *arg)
{
	RETRY(int, ioctl(fd, req, arg));
}

#ifndef __NR_cachestat
#define __NR_cachestat 451 /* the same number on every architecture */
#endif

static int sys_cachestat(int fd, struct fk_cachestat *cs)
{
	struct {
		uint64_t off, len; /* len 0: to the end of the file */
	} range = {0, 0};
	RETRY(int, (int)syscall(__NR_cachestat, fd, &range, cs, 0));
}

static int sys_cachestat_range(int fd, uint64_t off, uint64_t len,
			       struct fk_cachestat *cs)
{
	struct {
		uint64_t off, len;
	} range = {off, len};
	RETRY(int, (int)syscall(__NR_cachestat, fd, &range, cs, 0));
}

#define FK_SYS_DEFAULT_OPS                                                     \
	{                                                                      \
		.openat = sys_openat, .close = sys_close, .read = sys_read,    \
		.write = sys_write, .pread = sys_pread, .pwrite = sys_pwrite,  \
		.fsync = sys_fsync, .fdatasync = sys_fdatasync,                \
		.sync_file_range = sys_sync_file_range,                        \
		.fadvise = sys_fadvise, .syncfs = sys_syncfs,                  \
		.sync = sys_sync, .fstat = sys_fstat, .fstatat = sys_fstatat,  \
		.fstatfs = sys_fstatfs, .fstatx = sys_fstatx,                  \
		.getdents64 = sys_getdents64, .lseek = sys_lseek,              \
		.fcntl_lock = sys_fcntl_lock, .flock = sys_flock,              \
		.copy_file_range = sys_copy_file_range,                        \
		.ftruncate = sys_ftruncate, .fallocate = sys_fallocate,        \
		.mkdirat = sys_mkdirat, .mknodat = sys_mknodat,                \
		.symlinkat = sys_symlinkat, .readlinkat = sys_readlinkat,      \
		.linkat = sys_linkat, .unlinkat = sys_unlinkat,                \
		.renameat = sys_renameat, .fchmod = sys_fchmod,                \
		.fchmodat = sys_fchmodat, .fchown = sys_fchown,                \
		.fchownat = sys_fchownat, .futimens = sys_futimens,            \
		.utimensat = sys_utimensat, .flistxattr = sys_flistxattr,      \
		.fgetxattr = sys_fgetxattr, .fsetxattr = sys_fsetxattr,        \
		.ioctl = sys_ioctl, .cachestat = sys_cachestat,                \
		.cachestat_range = sys_cachestat_range,                        \
	}

const struct fk_sys_ops fk_sys_default = FK_SYS_DEFAULT_OPS;
struct fk_sys_ops fk_sys = FK_SYS_DEFAULT_OPS;

void fk_sys_reset(void)
{
	fk_sys = fk_sys_default;
}

uint64_t fk_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int fk_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = fk_sys.pwrite(fd, p, len, (off_t)off);
		if (n < 0)
			return (int)n;
		if (n == 0)
			return -ENOSPC;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

ssize_t fk_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;
	size_t done = 0;
	while (done < len) {
		ssize_t n =
		    fk_sys.pread(fd, p + done, len - done, (off_t)(off + done));
		if (n < 0)
			return n;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int fk_dirents(int fd,
	       int (*fn)(void *arg, const char *name, unsigned char type),
	       void *arg)
{
	char buf[4096] __attribute__((aligned(8)));
	for (;;) {
		ssize_t n = fk_sys.getdents64(fd, buf, sizeof(buf));
		if (n <= 0)
			return (int)n;
		for (ssize_t off = 0; off < n;) {
			/* struct linux_dirent64: d_reclen at 16, d_type at
			 * 18, d_name at 19 */
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			unsigned char type = (unsigned char)buf[off + 18];
			const char *nm = buf + off + 19;
			off += reclen;
			if (!strcmp(nm, ".") || !strcmp(nm, ".."))
				continue;
			int r = fn(arg, nm, type);
			if (r)
				return r;
		}
	}
}
