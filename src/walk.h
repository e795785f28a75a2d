/* SPDX-License-Identifier: MIT */
/*
 * walk.h - walk a directory tree relative to directory descriptors.
 *
 * fk_walk() visits a tree with openat/fstatat/getdents64 through the
 * syscall table: no path is ever longer than one name, so trees deeper
 * than PATH_MAX work.  Symlinks are never followed; FIFOs, sockets and
 * devices are reported but never opened.  The type of an entry comes
 * from d_type, or from fstatat(AT_SYMLINK_NOFOLLOW) when d_type is
 * DT_UNKNOWN; every entry passed to a callback has been lstat'ed.
 *
 * At most FK_WALK_MAX_DIR_FDS directory descriptors are open at a time:
 * an entry's dirfd and a directory's fd are valid during its callback
 * only.  Directories are opened O_NOATIME where allowed.
 *
 * Order: for a directory, dir_pre, then every entry below it (depth
 * first), then dir_post (so a caller can fsync a directory after its
 * contents).  Within a directory, entries are visited in inode-number
 * order (cheaper seeks on ext4/xfs than getdents order).
 *
 * Private to the library.
 */
#ifndef FK_WALK_H
#define FK_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/*
 * Directory descriptors a walk holds open at most, whatever the depth
 * (the root's parent aside): deeper, ancestors are closed and opened
 * again through "..".  Callers size their descriptor windows with it
 * (tree.h, FK_FD_RESERVE).
 */
#define FK_WALK_MAX_DIR_FDS 8

struct fk_walk_entry {
	int dirfd;	  /* directory holding the entry (the parent
			   * directory, for the root) */
	const char *name; /* name within dirfd */
	const char *path; /* display path: root as given, then "/name"
			   * for each level (messages only) */
	struct stat st;	  /* fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW) */
	int depth;	  /* 0 for the root */
	int fd;		  /* dir_pre/dir_post: O_RDONLY|O_DIRECTORY
			   * descriptor of the directory itself, owned
			   * by the walker (its number may differ
			   * between dir_pre and dir_post); entry, a
			   * regular file read ahead (readahead_bytes):
			   * its descriptor, O_RDONLY|O_NOFOLLOW|
			   * O_NOCTTY|O_NONBLOCK, checked to be @st's
			   * inode, owned by the walker (closed after
			   * the callback); -1 otherwise */
	int open_err;	  /* entry: that read-ahead open failed with
			   * this -errno (-ENOENT for ELOOP), to be
			   * taken as the callback's own open's result
			   * (so each file is opened once); else 0 */
};

struct fk_walk_ops {
	/* A directory, before its entries.  Return 0 to descend, 1 to
	 * skip its contents (dir_post is still called), <0 to abort. */
	int (*dir_pre)(void *arg, const struct fk_walk_entry *e);
	/* A directory, after its entries; e->fd is still open. */
	int (*dir_post)(void *arg, const struct fk_walk_entry *e);
	/* Every other entry: regular file, symlink, FIFO, socket, device. */
	int (*entry)(void *arg, const struct fk_walk_entry *e);
	/*
	 * The walker could not examine something: @op ("open", "stat",
	 * "getdents"), @path, @err (-errno).  An entry that vanished between
	 * getdents and fstatat/openat comes here with -ENOENT.  Return 0 to
	 * go on with the rest of the tree, <0 to abort the walk.
	 */
	int (*error)(void *arg, const char *op, const char *path, int err);
	/*
	 * Read-ahead (0: none), for a caller that reads every regular file
	 * (a copy): before each entry of a directory, the regular files
	 * after it in the same directory, up to the next directory, are
	 * opened and read ahead (POSIX_FADV_WILLNEED), at most
	 * @readahead_fds descriptors held and @readahead_bytes bytes ahead
	 * of the entry being visited; each is handed to its entry callback
	 * in e->fd (or its open's error in e->open_err).
	 */
	uint64_t readahead_bytes;
	size_t readahead_fds;
	/*
	 * Symlinks followed (0: never): FK_WALK_FOLLOW_ROOT, the root
	 * itself if it is one (cp -H); FK_WALK_FOLLOW_ALL, every one (cp
	 * -L): an entry is then what its symlink names (stat, not lstat;
	 * its dirfd and name are the symlink's), a dangling one an "stat"
	 * error, and a directory that is one of its own ancestors (a cycle)
	 * a "cyclic directory" error (-ELOOP), not descended into.
	 */
	int follow;
};

enum { FK_WALK_FOLLOW_ROOT = 1, FK_WALK_FOLLOW_ALL = 2 };

/* Descriptors a read-ahead holds at most, whatever readahead_fds says. */
#define FK_WALK_READAHEAD_FDS 256

/*
 * fk_walk - walk the tree at @root (a directory, or any other file,
 * which is then the only entry), relative to @at_fd (AT_FDCWD or a
 * directory descriptor).  Returns 0, or the negative value a callback
 * returned to abort, or -errno if @root itself cannot be examined.
 */
int fk_walk(int at_fd, const char *root, const struct fk_walk_ops *ops,
	    void *arg);

#endif
