// SPDX-License-Identifier: MIT
/*
 * cli-sys.c - the default table of the command's own system calls:
 * thin wrappers that retry EINTR and return -errno (see cli-sys.h).
 *
 * Interface: cli_sys, cli_sys_default, cli_sys_reset().
 */
#include "cli-sys.h"

#include <errno.h>
#include <fcntl.h>
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
	/* Never retried: on Linux the descriptor is gone even on EINTR. */
	int r = close(fd);
	if (r == -1 && errno != EINTR)
		return -errno;
	return 0;
}

static ssize_t sys_write(int fd, const void *buf, size_t len)
{
	RETRY(ssize_t, write(fd, buf, len));
}

static int sys_fsync(int fd)
{
	RETRY(int, fsync(fd));
}

static void sys_sync(void)
{
	sync();
}

static int sys_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	RETRY(int, fstatat(dirfd, path, st, flags));
}

static int sys_fstatfs(int fd, struct statfs *st)
{
	RETRY(int, fstatfs(fd, st));
}

static int sys_unlinkat(int dirfd, const char *path, int flags)
{
	RETRY(int, unlinkat(dirfd, path, flags));
}

static int sys_mkdirat(int dirfd, const char *path, mode_t mode)
{
	RETRY(int, mkdirat(dirfd, path, mode));
}

const struct cli_sys_ops cli_sys_default = {
    .openat = sys_openat,
    .close = sys_close,
    .write = sys_write,
    .fsync = sys_fsync,
    .sync = sys_sync,
    .fstatat = sys_fstatat,
    .fstatfs = sys_fstatfs,
    .unlinkat = sys_unlinkat,
    .mkdirat = sys_mkdirat,
};

struct cli_sys_ops cli_sys = {
    .openat = sys_openat,
    .close = sys_close,
    .write = sys_write,
    .fsync = sys_fsync,
    .sync = sys_sync,
    .fstatat = sys_fstatat,
    .fstatfs = sys_fstatfs,
    .unlinkat = sys_unlinkat,
    .mkdirat = sys_mkdirat,
};

void cli_sys_reset(void)
{
	cli_sys = cli_sys_default;
}
