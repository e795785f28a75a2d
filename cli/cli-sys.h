/* SPDX-License-Identifier: MIT */
/*
 * cli-sys.h - the system calls the flushkit command makes itself.
 *
 * The library's calls go through its own replaceable table (src/sys.c),
 * which is private to it.  The few calls a subcommand times or must see
 * traced on its own (fs_mark's create, write, fsync, close, sync,
 * unlink and mkdir in "bench fsmark") go through this table instead,
 * so the tool stays a client of the public header and the shared library while
 * the in-process tests can still trace the order of those calls and inject
 * faults.  Each entry returns 0 (or a count) or -errno, never -1 with
 * errno set; EINTR is retried (never for close).  The signatures are
 * those of the library's table, so a test can point both at the same
 * wrappers.
 *
 * Process-global and not locked: replace entries before starting the
 * command, restore with cli_sys_reset().
 */
#ifndef FK_CLI_SYS_H
#define FK_CLI_SYS_H

#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>

struct cli_sys_ops {
	int (*openat)(int dirfd, const char *path, int flags, mode_t mode);
	int (*close)(int fd);
	ssize_t (*write)(int fd, const void *buf, size_t len);
	int (*fsync)(int fd);
	void (*sync)(void);
	int (*fstatat)(int dirfd, const char *path, struct stat *st, int flags);
	int (*fstatfs)(int fd, struct statfs *st);
	int (*unlinkat)(int dirfd, const char *path, int flags);
	int (*mkdirat)(int dirfd, const char *path, mode_t mode);
};

/* The live table; "bench fsmark" calls cli_sys.fsync(fd) and so on. */
extern struct cli_sys_ops cli_sys;
/* The real system calls (EINTR retried, -errno returned). */
extern const struct cli_sys_ops cli_sys_default;
/* Restore every entry of cli_sys to cli_sys_default. */
void cli_sys_reset(void);

#endif
