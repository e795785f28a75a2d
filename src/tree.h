/* SPDX-License-Identifier: MIT */
/*
 * tree.h - the durability layer shared by fk_tree_sync and fk_tree_copy.
 *
 * What both need to make a tree durable:
 *
 *  - struct fk_fdmap, the run's inode table, keyed by (st_dev, st_ino):
 *    which inodes were seen, hinted, fsynced or failed in this run (so an
 *    inode with several hard links is fsynced once, and a failed one is
 *    never retried), and the descriptor that wrote or hinted a file, kept
 *    open until its fsync.  Keeping it open matters: if the inode is
 *    evicted between close and reopen, a writeback error recorded on it
 *    can be lost and the fsync of a fresh descriptor returns 0.  The
 *    number of kept descriptors is bounded (fk_fd_window(), from
 *    RLIMIT_NOFILE); past it the caller closes and the fsync reopens.
 *
 *  - fk_fd_window(), the one rule for how many descriptors a pass may
 *    open (kept, pending, batched): every pass of sync and copy sizes
 *    its window with it.
 *
 *  - struct fk_fsset, the file systems a run wrote to or must sync, each
 *    with a descriptor for syncfs(2) (sync --method=syncfs and cp
 *    --method=syncfs: a destination with another file system mounted
 *    inside it is synced on both).
 *
 *  - fk_tree_fsync_pass(), the final phase: walk one root and fsync each
 *    regular file (kept descriptor first, else open O_RDONLY|O_NOFOLLOW
 *    after lstat said S_ISREG), each directory after its contents, each
 *    inode once; special files are never opened.  One fsync at a time,
 *    or, given a struct fk_fsync_batch, batched: files and directories
 *    are collected during the walk and flushed (files as one batch,
 *    then directories one batch per depth, deepest first) when the
 *    descriptor budget is reached and at the end.
 *
 *  - fk_tree_fsync_fd(), the error policy for one fsync: a failure is
 *    reported with the path, counted, marks the inode failed (never
 *    retried, never reopened) and is returned so the caller makes it
 *    sticky; a directory fsync refused with EINVAL/ENOTSUP/EOPNOTSUPP is
 *    a warning and -FK_EDEGRADED.
 *
 *  - fk_tree_report(), fk_tree_result(), fk_tree_progress(): reporting,
 *    combining results (first real error wins over -FK_EDEGRADED), and
 *    the rate-limited progress callback.
 *
 * Implemented in tree_common.c, which also holds the public
 * fk_tree_opts_init (so tree_copy.c must not define it).
 *
 * Private to the library.  Not thread-safe: one fdmap per run.
 */
#ifndef FK_TREE_H
#define FK_TREE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "flushkit.h"
#include "walk.h"

/* Flags of fk_tree_fsync_pass (struct fk_tree_fsync_opts.flags). */
enum fk_pass_flags {
	/* Count entries in @st: files (inodes), dirs, symlinks, specials,
	 * hardlinks, bytes (once per inode, via FK_INODE_SEEN). */
	FK_PASS_COUNT = 1u << 0,
	/* The data is durable already (a syncfs of each file system
	 * returned 0): instead of fsyncing, collect each regular file's own
	 * writeback error through its descriptor (sync_file_range with only
	 * SYNC_FILE_RANGE_WAIT_AFTER: waits for nothing left, reports the
	 * errseq error recorded since the descriptor was opened; reported
	 * as "writeback" @path, the inode marked FAILED); directories are
	 * not fsynced (the syncfs committed them); not batched. */
	FK_PASS_CHECK = 1u << 1,
};

/* Per-inode flags in the fdmap. */
enum fk_inode_flags {
	FK_INODE_SEEN = 1u << 0,     /* counted once in stats (files, dirs) */
	FK_INODE_HINTED = 1u << 1,   /* writeback started (twopass pass 1) */
	FK_INODE_SYNCED = 1u << 2,   /* fsync returned 0 in this run */
	FK_INODE_FAILED = 1u << 3,   /* an error was reported: never retry */
	FK_INODE_VANISHED = 1u << 4, /* counted as vanished once */
	FK_INODE_DEGRADED = 1u << 5, /* directory fsync not supported */
	FK_INODE_QUEUED = 1u << 6,   /* waiting in a batched pass (then
				      * SYNCED, FAILED or DEGRADED) */
};

/*
 * How the helpers below report and what a pass does.  fk_tree_sync
 * fills it from its struct fk_tree_opts; fk_tree_copy from its own.
 */
struct fk_tree_fsync_opts {
	fk_report_fn report; /* may be NULL */
	void *report_arg;
	int drop_cache; /* POSIX_FADV_DONTNEED each file once fsynced */
	unsigned flags; /* enum fk_pass_flags */
	fk_progress_fn progress; /* may be NULL; every >= 100 ms */
	void *progress_arg;
	/* NULL: fk_tree_fsync_pass fsyncs one at a time; else it batches
	 * through this (owned by the caller). */
	struct fk_fsync_batch *batch;
};

/*
 * fk_tree_batch_create - the batch for a run's fsync pass from @to's
 * sync_io and sync_jobs; sets st->sync_io (the backend) and
 * st->sync_jobs (the queue depth; 1 for sequential).  Returns 0, -EINVAL (bad
 * sync_io, sync_jobs > 4096), -ENOMEM, or io_uring's setup error when URING is
 * forced.
 */
int fk_tree_batch_create(const struct fk_tree_opts *to,
			 struct fk_tree_stats *st, struct fk_fsync_batch **out);

struct fk_fdmap;

/*
 * Descriptors every pass may hold besides its window: the walker's
 * directory window (FK_WALK_MAX_DIR_FDS, plus the root's parent), the
 * copy's destination directory window (as many, plus the destination's
 * parent), a source and a destination file, a directory opened to
 * resolve a long path, io_uring's ring and the caller's own.
 */
#define FK_FD_RESERVE (2 * FK_WALK_MAX_DIR_FDS + 10)

/*
 * fk_fd_window - how many more descriptors a pass may open now: the
 * RLIMIT_NOFILE soft limit minus the descriptors open in this process
 * (counted in /proc/self/fd; 16 assumed without /proc) minus
 * FK_FD_RESERVE, at most 65536; 0 if the limit leaves none.  Each pass
 * (the copy's kept descriptors, the fsync pass's batches, the times
 * pass, twopass's hints) calls it when it starts.  Reads /proc; no other
 * I/O.
 */
size_t fk_fd_window(void);

/*
 * fk_tree_fd_check - refuse a run that fk_fd_window() leaves no
 * descriptor: reports an error naming the limit, what is open and what
 * is needed, for @path, and returns -EMFILE; else 0.
 */
int fk_tree_fd_check(const struct fk_tree_fsync_opts *o,
		     struct fk_tree_stats *st, const char *path);

/* @max_fds: descriptors kept at most (0: none kept, the table still
 * records inode flags).  Returns 0 or -ENOMEM. */
int fk_fdmap_create(size_t max_fds, struct fk_fdmap **out);
/* Close every kept descriptor (errors ignored: they are read-only or
 * already fsynced ones) and free.  NULL is a no-op. */
void fk_fdmap_destroy(struct fk_fdmap *m);

/*
 * fk_fdmap_put - keep @fd for inode (@dev, @ino) until fk_fdmap_take.
 * @is_dir: @fd is a directory (kept the same way; fk_tree_fsync_pass
 * fsyncs a directory through its kept descriptor when there is one).
 * Returns 0 when kept (the map owns @fd now), 1 when the budget is full
 * or the inode already has a kept descriptor (the caller still owns @fd
 * and closes it), -ENOMEM.
 */
int fk_fdmap_put(struct fk_fdmap *m, dev_t dev, ino_t ino, int fd, int is_dir);
/* Take back the kept descriptor of an inode: the fd (caller owns it
 * now) or -1 if none is kept. */
int fk_fdmap_take(struct fk_fdmap *m, dev_t dev, ino_t ino);
/* Number of descriptors currently kept. */
size_t fk_fdmap_nr_fds(const struct fk_fdmap *m);

/* Flags of an inode (0 if never recorded). */
unsigned fk_fdmap_flags(const struct fk_fdmap *m, dev_t dev, ino_t ino);
/* OR @flags into an inode's flags.  Returns 0 or -ENOMEM. */
int fk_fdmap_set_flags(struct fk_fdmap *m, dev_t dev, ino_t ino,
		       unsigned flags);

/*
 * fk_fdmap_note_path - remember that (@op, @path) was reported in this
 * run (for errors about things that have no inode yet, such as a
 * directory that cannot be opened, so a second pass does not report them
 * again).  Returns 1 if it was already noted, 0 if noted now, -ENOMEM.
 */
int fk_fdmap_note_path(struct fk_fdmap *m, const char *op, const char *path);

/*
 * fk_tree_count - count the lstat'ed entry @est in @st once per inode:
 * files and bytes, or dirs, and flag it FK_INODE_SEEN.  Returns 1 (and
 * counts a hard link for a regular file) if it was seen before, else 0.
 */
int fk_tree_count(struct fk_fdmap *m, struct fk_tree_stats *st,
		  const struct stat *est);

/*
 * fk_tree_walk_error - the policy for a walker error callback: -ENOENT
 * is a vanished entry (warning, st->vanished, returns 0); anything else
 * is reported as an error once per (@op, @path) per run and returned.
 */
int fk_tree_walk_error(struct fk_fdmap *m, const struct fk_tree_fsync_opts *o,
		       struct fk_tree_stats *st, const char *op,
		       const char *path, int err);

/*
 * fk_tree_open_counted - fk_tree_open_file for a walker entry, with the
 * policy applied: -ENOENT is a vanished entry (warning, counted once per
 * inode); another error is reported as "open" @path, counted, and
 * the inode flagged FAILED.  Returns the fd or that -errno.
 */
int fk_tree_open_counted(struct fk_fdmap *m, const struct fk_walk_entry *e,
			 const char *path, const struct fk_tree_fsync_opts *o,
			 struct fk_tree_stats *st);

/*
 * fk_tree_report - count a diagnostic in @st (errors or warnings) and
 * pass it to @o->report if set.  @level: enum fk_report_level.
 */
void fk_tree_report(const struct fk_tree_fsync_opts *o,
		    struct fk_tree_stats *st, int level, const char *op,
		    const char *path, int err);

/*
 * fk_tree_result - combine the result so far @cur with a new one @r:
 * the first real error (-errno) is kept; -FK_EDEGRADED only replaces 0.
 */
int fk_tree_result(int cur, int r);

/*
 * fk_tree_progress - call @o->progress with @st if at least 100 ms
 * passed since *@last_ns (or @force); updates *@last_ns.  Cheap when
 * @o->progress is NULL.
 */
void fk_tree_progress(const struct fk_tree_fsync_opts *o,
		      const struct fk_tree_stats *st, uint64_t *last_ns,
		      int force);

/*
 * fk_tree_fsync_fd - fsync one open file or directory and apply the
 * error policy.  @fd is not closed.  @dev/@ino identify the inode in @m
 * (may be NULL: no flags recorded).  @is_dir: directory rules (counted
 * in dir_fsync_calls; EINVAL/ENOTSUP/EOPNOTSUPP is a warning, reported
 * once per file system, sets st->degraded and returns -FK_EDEGRADED).
 * Returns 0, -FK_EDEGRADED or the -errno of fsync (already reported as
 * "fsync" @path, counted in st->errors, inode marked FAILED).
 */
int fk_tree_fsync_fd(struct fk_fdmap *m, int fd, dev_t dev, ino_t ino,
		     int is_dir, const char *path,
		     const struct fk_tree_fsync_opts *o,
		     struct fk_tree_stats *st);

/*
 * fk_tree_fsync_done - the error policy of fk_tree_fsync_fd for an fsync
 * already made (by a batch) that returned @r (0 or -errno); counts no
 * call.  Returns as fk_tree_fsync_fd.
 */
int fk_tree_fsync_done(struct fk_fdmap *m, int r, dev_t dev, ino_t ino,
		       int is_dir, const char *path,
		       const struct fk_tree_fsync_opts *o,
		       struct fk_tree_stats *st);

/*
 * fk_tree_open_file - open the regular file @name in @dirfd for reading
 * (O_RDONLY|O_NOFOLLOW|O_NOCTTY|O_NONBLOCK, so a file replaced by a FIFO
 * after the lstat does not block) and check by fstat that it is still
 * the regular file @want (st_dev, st_ino).  Returns the fd, -ENOENT if it
 * vanished or was replaced (including ELOOP: now a symlink), or -errno.
 * Reports nothing.
 */
int fk_tree_open_file(int dirfd, const char *name, const struct stat *want);

/*
 * fk_tree_fsync_pass - make everything under @root durable: each regular
 * file fsynced (through its kept descriptor in @m if there is one, else
 * opened O_RDONLY|O_NOFOLLOW after lstat said S_ISREG), each directory
 * fsynced after its contents, so directories bottom-up; each inode once
 * per run (inodes flagged SYNCED or FAILED in @m are skipped, so a
 * caller that fsynced a file itself marks it SYNCED first).  Symlinks
 * and special files are never opened.  @root is resolved relative to
 * @at_fd (AT_FDCWD or a directory descriptor); @display (NULL: @root)
 * replaces @root at the start of the paths given to @o->report.
 *
 * Entries that vanish (ENOENT) are warnings counted in st->vanished;
 * other failures (EACCES opening a file, getdents errors) are reported
 * as errors and the walk goes on.  Adds to st->fsync_calls,
 * dir_fsync_calls and, with FK_PASS_COUNT in @o->flags, the entry
 * counts; does not touch the *_ns fields.  With @o->drop_cache, each
 * regular file gets POSIX_FADV_DONTNEED after a successful fsync.
 *
 * With @o->batch, the fsyncs go through it: regular files (their
 * descriptors) and directories (the kept descriptor or one opened on
 * ".", with their depth) are collected; when the collected plus the
 * kept descriptors reach the pass's budget (fk_fd_window() when it
 * starts, plus the descriptors kept then), and at the end, the
 * collected files are fsynced as one batch, then the directories one
 * batch per depth, deepest first.  Post-order makes every descendant of
 * a collected directory collected or done already, so each directory
 * is still fsynced after its contents, directories bottom-up.  Results
 * are applied per request as fk_tree_fsync_done (same reports, same
 * sticky errors; the others complete).
 *
 * Returns 0, -FK_EDEGRADED (some directory fsync not supported), or the
 * first -errno after doing the rest; -ENOMEM stops at once.  Blocks;
 * does I/O.
 */
int fk_tree_fsync_pass(int at_fd, const char *root, const char *display,
		       struct fk_fdmap *m, const struct fk_tree_fsync_opts *o,
		       struct fk_tree_stats *st);

struct fk_fsset;

/* An empty set.  0 or -ENOMEM. */
int fk_fsset_create(struct fk_fsset **out);
/* Close every descriptor and free.  NULL is a no-op. */
void fk_fsset_destroy(struct fk_fsset *s);
/* 1 if file system @dev is in @s. */
int fk_fsset_has(const struct fk_fsset *s, dev_t dev);
/* Number of file systems in @s. */
size_t fk_fsset_nr(const struct fk_fsset *s);
/*
 * fk_fsset_add - remember file system @dev with @fd, a descriptor of a
 * directory or regular file on it (the set owns @fd now, in every case),
 * and @path for messages.  Returns 0 when added, 1 when @dev was there
 * already (@fd closed), -ENOMEM (@fd closed).  One descriptor is held per
 * file system until fk_fsset_destroy.
 */
int fk_fsset_add(struct fk_fsset *s, dev_t dev, int fd, const char *path);
/*
 * fk_fsset_syncfs - syncfs(2) each file system of @s, in the order added;
 * each call counted in st->syncfs_calls, each failure reported as
 * "syncfs" with the path it was added with.  Returns 0 or the first
 * -errno (after syncing the others).  Blocks; may be called again.
 */
int fk_fsset_syncfs(struct fk_fsset *s, const struct fk_tree_fsync_opts *o,
		    struct fk_tree_stats *st);

/*
 * fk_fsset_sweep - syncfs(2) each file system of @s, counted in
 * st->syncfs_calls, reporting nothing: the caller of a sweep falls back
 * to per-file fsyncs on failure, which name the files.  Returns 0 or
 * the first -errno (after syncing the others).  Blocks.
 */
int fk_fsset_sweep(struct fk_fsset *s, struct fk_tree_stats *st);

/*
 * fk_dirty_pages_fd - the dirty plus writeback pages of @fd's page cache
 * (cachestat(2) over the whole file), or -ENOSYS where the kernel has no
 * cachestat (before 6.5), or its -errno.  Reads no data.
 */
int64_t fk_dirty_pages_fd(int fd);

/*
 * fk_sweep_wins - the choice of the auto methods: 1 when a syncfs of
 * the destination file systems would write mostly the tree's own data,
 * i.e. the tree's @tree_pages (dirty + writeback, measured) are at
 * least half of the system's dirty + writeback pages (/proc/meminfo
 * Dirty + Writeback, read now; other file systems count as others', so
 * the choice errs towards per-file fsyncs).  0 otherwise, or when
 * /proc/meminfo cannot be read.
 */
int fk_sweep_wins(uint64_t tree_pages);

/*
 * fk_kernel_before - 1 if the kernel release string @release ("5.4.0-
 * 150-generic") is older than @major.@minor, 0 if not, -EINVAL if it
 * cannot be parsed.  Pure.
 */
int fk_kernel_before(const char *release, int major, int minor);

/*
 * The copy's read-ahead across directories (tree_copy_prefetch.c): a
 * thread that walks the source root @root (relative to @at_fd) in the
 * copy's order and starts the reads (POSIX_FADV_WILLNEED) of regular
 * files while they start at or after the copy's position and end at
 * most @budget bytes past it.  Positions are bytes of regular files
 * (lstat st_size) before a file, in walk order (entries by inode number,
 * as fk_walk).  @one_fs: directories on another file system than the
 * root's are not entered.  The thread is a hint: it reports nothing,
 * calls the kernel directly (not fk_sys), holds at most three
 * descriptors.
 *
 * fk_prefetch_start - start it; *@out is NULL (and 0 returned) when
 * @budget is 0 or @root is not a directory that can be opened.  0 or
 * -errno (ENOMEM, or pthread_create's).
 * fk_prefetch_reached - the copy is at the regular file at position
 * @pos (bytes; non-decreasing); @p may be NULL.  Thread-safe with the
 * prefetcher, for one copier.
 * fk_prefetch_stop - stop the thread, wait for it, free @p (may be
 * NULL).  Returns the bytes it read ahead.
 */
struct fk_prefetch;
int fk_prefetch_start(int at_fd, const char *root, uint64_t budget, int one_fs,
		      struct fk_prefetch **out);
void fk_prefetch_reached(struct fk_prefetch *p, uint64_t pos);
uint64_t fk_prefetch_stop(struct fk_prefetch *p);

#endif
