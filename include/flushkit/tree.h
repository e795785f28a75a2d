/* SPDX-License-Identifier: MIT */
/*
 * flushkit/tree.h - section 7 of <flushkit.h>, tree sync and copy:
 * fk_tree_sync and fk_tree_copy.
 *
 * Part of <flushkit.h>, which includes every section in layer order
 * (its opening comment lists them, with the conventions they follow),
 * inside its extern "C" and after FK_API and the error codes: include
 * <flushkit.h>, not this file.
 */
#ifndef FLUSHKIT_TREE_H
#define FLUSHKIT_TREE_H

#ifndef FLUSHKIT_H
#error "include <flushkit.h>, not <flushkit/tree.h>"
#endif

/* ===================================================================
 * 7. Tree sync and copy
 * =================================================================== */

/* SECTION tree */
/* How fk_tree_sync makes a tree durable. */
enum fk_sync_method {
	FK_SYNC_TWOPASS = 0, /* writeback hints for all, then fsync all
			      * (PostgreSQL's SyncDataDirectory) */
	FK_SYNC_FSYNC = 1,   /* one pass: fsync each file (rsync --fsync) */
	FK_SYNC_SYNCFS = 2,  /* one syncfs(2) per file system */
	FK_SYNC_AUTO = 3,    /* measure: twopass, or a syncfs sweep and
			      * a per-file error check */
};

/*
 * fk_sync_method_name - the name of an enum fk_sync_method value: "twopass",
 * "fsync", "syncfs" or "auto" (flushkit sync --method).
 * @method: an enum fk_sync_method value.
 * Return: a static string (never freed); "unknown" for any other
 * value.  Never NULL.
 *
 * fk_sync_method_parse - the inverse: the value a name stands for.
 * @name: a NUL-terminated name as above, matched exactly (case and
 *      all); may be NULL.  Borrowed for the call.
 * Return: the enum fk_sync_method value (>= 0), or
 *   -EINVAL  @name is NULL or is not one of the names.
 *
 * No I/O, no allocation; thread-safe (constant tables only).
 */
FK_API const char *fk_sync_method_name(int method);
FK_API int fk_sync_method_parse(const char *name);

/* How fk_tree_copy makes the copy durable. */
enum fk_copy_method {
	FK_COPY_WRITEBACK = 0,	/* hints while copying, fsync at the end */
	FK_COPY_DELAYED = 1,	/* fsync everything at the end */
	FK_COPY_FSYNC_EACH = 2, /* fsync each file right after writing it */
	FK_COPY_SYNCFS = 3,	/* syncfs(2) of the destination at the end */
	FK_COPY_AUTO = 4,	/* measure: syncfs sweep + per-file error
				 * check, or delayed's fsyncs */
};

/*
 * fk_copy_method_name - the name of an enum fk_copy_method value: "writeback",
 * "delayed", "fsync-each", "syncfs" or "auto" (flushkit cp --method).
 * @method: an enum fk_copy_method value.
 * Return: a static string (never freed); "unknown" for any other
 * value.  Never NULL.
 *
 * fk_copy_method_parse - the inverse: the value a name stands for.
 * @name: a NUL-terminated name as above, matched exactly (case and
 *      all); may be NULL.  Borrowed for the call.
 * Return: the enum fk_copy_method value (>= 0), or
 *   -EINVAL  @name is NULL or is not one of the names.
 *
 * No I/O, no allocation; thread-safe (constant tables only).
 */
FK_API const char *fk_copy_method_name(int method);
FK_API int fk_copy_method_parse(const char *name);

/*
 * What fk_tree_copy does with an existing destination non-directory in
 * the way of a source file, symlink or special file (directories are
 * always merged into).  A file left as it is still belongs to the copy:
 * it is made durable with the rest.
 */
enum fk_copy_update {
	FK_COPY_UPDATE_ALL = 0,	      /* replace it (cp -a; cp --update=all) */
	FK_COPY_UPDATE_NONE = 1,      /* leave it (cp -n, --update=none) */
	FK_COPY_UPDATE_OLDER = 2,     /* replace it only if its mtime is older
				       * than the source's (cp -u,
				       * --update=older) */
	FK_COPY_UPDATE_DIFFERENT = 3, /* resume: leave a regular file whose
				       * size and mtime (to the ns) equal the
				       * source's (rsync's quick check; with
				       * FK_COPY_CHECKSUM, whose content
				       * equals the source's) */
};

/*
 * fk_copy_update_name - the name of an enum fk_copy_update value: "all",
 * "none", "older" (flushkit cp --update) or "resume" (FK_COPY_UPDATE_DIFFERENT:
 * flushkit cp --resume).
 * @update: an enum fk_copy_update value.
 * Return: a static string (never freed); "unknown" for any other
 * value.  Never NULL.
 *
 * fk_copy_update_parse - the inverse: the value a name stands for.
 * @name: a NUL-terminated name as above, matched exactly (case and
 *      all); may be NULL.  Borrowed for the call.
 * Return: the enum fk_copy_update value (>= 0), or
 *   -EINVAL  @name is NULL or is not one of the names.
 *
 * No I/O, no allocation; thread-safe (constant tables only).
 */
FK_API const char *fk_copy_update_name(int update);
FK_API int fk_copy_update_parse(const char *name);

/* Flags of struct fk_tree_opts.copy_flags. */
enum fk_copy_flags {
	FK_COPY_NO_TARGET_DIR = 1 << 0, /* @dst is the copy even if it is
					 * an existing directory (cp -T) */
	FK_COPY_ONE_FS = 1 << 1,	/* do not descend into directories
					 * on another file system than
					 * @src (cp -x); the mount point
					 * itself is copied, empty */
	FK_COPY_CHECKSUM = 1 << 2,	/* FK_COPY_UPDATE_DIFFERENT
					 * compares content, not mtime */
	FK_COPY_REMOVE_DEST = 1 << 3,	/* cp --remove-destination: an
					 * existing symlink or other hard
					 * link of the source in the way is
					 * replaced, never refused as the
					 * same file or written through */
	FK_COPY_FORCE = 1 << 4,		/* cp -f: a destination symlink
					 * that cannot be resolved (a loop,
					 * ELOOP) is replaced */
	FK_COPY_LINK = 1 << 5,		/* cp -l: each non-directory is a
					 * hard link of its source, not a
					 * copy (directories are created) */
	FK_COPY_SYMLINK = 1 << 6,	/* cp -s: each non-directory is a
					 * symlink to its source's path as
					 * given (absolute, or @dst's parent
					 * is the working directory) */
	FK_COPY_DEREF = 1 << 7,		/* cp -L: every source symlink is
					 * followed (its target copied) */
	FK_COPY_DEREF_ARGS = 1 << 8,	/* cp -H: @src itself is followed
					 * if it is a symlink, nothing below */
	FK_COPY_ATTR_ONLY = 1 << 9,	/* cp --attributes-only: files get
					 * the source's attributes, no data;
					 * an existing file keeps its data */
	FK_COPY_NO_MODE = 1 << 10,	/* cp --no-preserve=mode: new
					 * entries get 0666 (directories and
					 * sockets 0777) less the umask */
	FK_COPY_NO_OWNER = 1 << 11,	/* --no-preserve=ownership */
	FK_COPY_NO_TIMES = 1 << 12,	/* --no-preserve=timestamps: the
					 * copy keeps its own times (so a
					 * later resume cannot tell finished
					 * files by their mtime) */
	FK_COPY_NO_LINKS = 1 << 13,	/* --no-preserve=links: each name of
					 * a source inode copied on its own */
	FK_COPY_NO_XATTR = 1 << 14,	/* --no-preserve=xattr */
	FK_COPY_CONTENTS = 1 << 15,	/* cp --copy-contents: a FIFO or
					 * character device source is read
					 * to EOF into a regular file, not
					 * recreated */
};

/* What an existing destination non-directory becomes before it is
 * replaced (cp --backup=CONTROL, struct fk_tree_opts.backup). */
enum fk_copy_backup {
	FK_COPY_BACKUP_NONE = 0,     /* removed (no backup) */
	FK_COPY_BACKUP_SIMPLE = 1,   /* renamed NAME + suffix */
	FK_COPY_BACKUP_NUMBERED = 2, /* renamed NAME.~N~, N one more than
				      * the highest there */
	FK_COPY_BACKUP_EXISTING = 3, /* numbered if NAME has numbered
				      * backups, else simple */
};

/*
 * fk_copy_backup_name - the name cp --backup gives the backup of @name
 * (GNU's backupfile.c rules; what fk_tree_copy renames an existing
 * destination to with struct fk_tree_opts' @backup set).
 * @dirfd: the directory holding @name (a descriptor, or AT_FDCWD); read
 *      (readdir) for NUMBERED and EXISTING.  Borrowed.
 * @name: one path component (no '/'), borrowed.
 * @backup: FK_COPY_BACKUP_SIMPLE (@name + @suffix), _NUMBERED
 *      (@name.~N~, N one more than the highest N of the names @name.~N~
 *      there, N written without a leading zero and of any length: kept
 *      as decimal digits, as GNU's; 1 if none) or _EXISTING
 *      (NUMBERED if @name has a numbered backup, else SIMPLE).
 * @suffix: SIMPLE's suffix; NULL, "" or one containing '/' means "~"
 *      (as GNU's).  Borrowed.
 * @out: set to the name, malloc'ed (the caller frees it), NULL on error.
 * @numbered: set to 1 if *@out is a numbered name (which must not
 *      replace an existing file: fk_tree_copy refuses one that exists),
 *      else 0.
 * Return: 0, or -EINVAL (a NULL or empty @name, one with '/', NULL
 *   @out or @numbered, @backup NONE or unknown), -ENOMEM, or the -errno
 *   of opening or reading @dirfd.
 * Blocking: reads the directory for NUMBERED and EXISTING; thread-safe.
 */
FK_API int fk_copy_backup_name(int dirfd, const char *name, int backup,
			       const char *suffix, char **out, int *numbered);

/*
 * fk_overwrite_fn - with struct fk_tree_opts' @overwrite set (cp -i),
 * fk_tree_copy asks it before it replaces (or backs up) an existing
 * destination non-directory: @src_path and @dst_path are display
 * paths as fk_copied_fn's.  Return nonzero to replace it, 0 to leave
 * it as it is (counted in st->skipped, as FK_COPY_UPDATE_NONE).
 * Called from the calling thread; may block (it asks a person).
 */
typedef int (*fk_overwrite_fn)(void *arg, const char *src_path,
			       const char *dst_path);

/* How fk_tree_copy copies a regular file's data. */
enum fk_copy_reflink {
	FK_COPY_REFLINK_AUTO = 0,   /* FICLONE where the file systems share
				     * extents, else copy_file_range */
	FK_COPY_REFLINK_ALWAYS = 1, /* FICLONE or fail (-EOPNOTSUPP,
				     * -EXDEV, ...: that file is an error) */
	FK_COPY_REFLINK_NEVER = 2,  /* read/write: no extent shared with
				     * the source (no copy_file_range) */
};

/*
 * fk_copy_reflink_name - the name of an enum fk_copy_reflink value: "auto",
 * "always" or "never" (flushkit cp --reflink).
 * @reflink: an enum fk_copy_reflink value.
 * Return: a static string (never freed); "unknown" for any other
 * value.  Never NULL.
 *
 * fk_copy_reflink_parse - the inverse: the value a name stands for.
 * @name: a NUL-terminated name as above, matched exactly (case and
 *      all); may be NULL.  Borrowed for the call.
 * Return: the enum fk_copy_reflink value (>= 0), or
 *   -EINVAL  @name is NULL or is not one of the names.
 *
 * No I/O, no allocation; thread-safe (constant tables only).
 */
FK_API const char *fk_copy_reflink_name(int reflink);
FK_API int fk_copy_reflink_parse(const char *name);

/* How fk_tree_copy treats holes and zeros of a regular file. */
enum fk_copy_sparse {
	FK_COPY_SPARSE_AUTO = 0,   /* the source's holes stay holes
				    * (SEEK_DATA/SEEK_HOLE), data stays data */
	FK_COPY_SPARSE_ALWAYS = 1, /* also every all-zero block of 4 KiB
				    * of the data becomes a hole (read and
				    * write, no clone) */
	FK_COPY_SPARSE_NEVER = 2,  /* holes are written as zeros: the copy
				    * is fully allocated (no clone) */
};

/*
 * fk_copy_sparse_name - the name of an enum fk_copy_sparse value: "auto",
 * "always" or "never" (flushkit cp --sparse).
 * @sparse: an enum fk_copy_sparse value.
 * Return: a static string (never freed); "unknown" for any other
 * value.  Never NULL.
 *
 * fk_copy_sparse_parse - the inverse: the value a name stands for.
 * @name: a NUL-terminated name as above, matched exactly (case and
 *      all); may be NULL.  Borrowed for the call.
 * Return: the enum fk_copy_sparse value (>= 0), or
 *   -EINVAL  @name is NULL or is not one of the names.
 *
 * No I/O, no allocation; thread-safe (constant tables only).
 */
FK_API const char *fk_copy_sparse_name(int sparse);
FK_API int fk_copy_sparse_parse(const char *name);

/*
 * fk_copied_fn - called by fk_tree_copy once for each entry it created
 * at the destination (directory, file, hard link, symlink, special),
 * in walk order: @src_path and @dst_path are display paths (the source
 * as given, the destination as resolved), valid for the call only.
 * Not called for entries left as they were (enum fk_copy_update).
 */
typedef void (*fk_copied_fn)(void *arg, const char *src_path,
			     const char *dst_path);

/*
 * fk_backed_up_fn - with struct fk_tree_opts' @backup and @backed_up
 * set, called by fk_tree_copy once for each existing destination it
 * renamed to its backup name, after the backup and its directory are
 * durable and before the entry's copy is made (cp -v's "(backup: ...)"):
 * @dst_path is the display path of the destination (as fk_copied_fn's),
 * @backup_path that of its backup, valid for the call only.  Called
 * from the calling thread.
 */
typedef void (*fk_backed_up_fn)(void *arg, const char *dst_path,
				const char *backup_path);

/*
 * cp's refusals, each an error of fk_tree_copy that names a source and
 * a destination (coreutils' wording in brackets, for a caller that
 * speaks as cp):
 */
enum fk_copy_refusal {
	/* -EEXIST ['SRC' and 'DST' are the same file] */
	FK_COPY_REFUSED_SAME_FILE = 1,
	/* -ENOENT [not writing through dangling symlink 'DST'] */
	FK_COPY_REFUSED_DANGLING,
	/* -EEXIST [will not copy 'SRC' through just-created symlink
	 * 'DST']: two sources of one call with one basename */
	FK_COPY_REFUSED_JUST_CREATED_SYMLINK,
	/* -EEXIST [will not overwrite just-created 'DST' with 'SRC'] */
	FK_COPY_REFUSED_JUST_CREATED,
	/* -EINVAL [cannot copy a directory, 'SRC', into itself, 'DST'] */
	FK_COPY_REFUSED_INTO_SELF,
	/* -EEXIST [backing up 'DST' might destroy source;  'SRC' not
	 * copied]: the backup name of DST is the source */
	FK_COPY_REFUSED_BACKUP_IS_SOURCE,
	/* the -errno of linkat [cannot create hard link 'DST' to 'SRC']
	 * (FK_COPY_LINK; -EEXIST: a name in the way, not replaced) */
	FK_COPY_REFUSED_LINK,
	/* the -errno of symlinkat [cannot create symbolic link 'DST' to
	 * 'SRC'] (FK_COPY_SYMLINK) */
	FK_COPY_REFUSED_SYMLINK,
};

/*
 * fk_refused_fn - with struct fk_tree_opts' @refused set, fk_tree_copy
 * reports each of cp's refusals (enum fk_copy_refusal @refusal) through
 * it instead of @report: @op the words @report would have had ("same
 * file as the source", ...), @src_path and @dst_path display paths as
 * fk_copied_fn's, @err the negative errno.  Counted as an error.
 */
typedef void (*fk_refused_fn)(void *arg, int refusal, const char *op,
			      const char *src_path, const char *dst_path,
			      int err);

enum fk_report_level {
	FK_REPORT_WARNING = 0, /* operation goes on (vanished file, ...) */
	FK_REPORT_ERROR = 1,   /* operation will fail */
};

/*
 * fk_report_level_name - the name of an enum fk_report_level value: "warning"
 * or "error".
 * @level: an enum fk_report_level value.
 * Return: a static string (never freed); "unknown" for any other
 * value.  Never NULL.
 *
 * fk_report_level_parse - the inverse: the value a name stands for.
 * @name: a NUL-terminated name as above, matched exactly (case and
 *      all); may be NULL.  Borrowed for the call.
 * Return: the enum fk_report_level value (>= 0), or
 *   -EINVAL  @name is NULL or is not one of the names.
 *
 * No I/O, no allocation; thread-safe (constant tables only).
 */
FK_API const char *fk_report_level_name(int level);
FK_API int fk_report_level_parse(const char *name);

/*
 * Diagnostic callback: @op is the failed operation ("fsync", "open",
 * ...), @path the path as given by the user joined with the names below
 * it (may exceed PATH_MAX; for messages only), @err a negative errno or
 * -FK_E* code.  Called from the calling thread.
 */
typedef void (*fk_report_fn)(void *arg, int level, const char *op,
			     const char *path, int err);

struct fk_tree_stats {
	uint64_t files; /* regular files (inodes, not links) */
	uint64_t dirs;
	uint64_t symlinks;
	uint64_t specials;  /* FIFOs, sockets, devices */
	uint64_t hardlinks; /* extra names of an inode already seen */
	uint64_t bytes;	    /* regular-file bytes synced or copied */
	uint64_t vanished;  /* entries gone between readdir and use */
	uint64_t errors;
	uint64_t warnings;
	uint64_t fsync_calls; /* fsync/fdatasync of files */
	uint64_t dir_fsync_calls;
	uint64_t syncfs_calls;
	uint64_t writeback_ranges;
	uint64_t writeback_bytes;
	uint64_t walk_ns;      /* walking (and copying, for fk_tree_copy) */
	uint64_t writeback_ns; /* pass 1 of twopass */
	uint64_t fsync_ns;     /* the fsync/syncfs phase */
	uint64_t total_ns;
	int degraded;		/* a directory fsync was not supported */
	int sync_io;		/* backend of the batched fsync phase: enum
				 * fk_sync_io (URING, THREADS or SEQUENTIAL);
				 * FK_SYNC_IO_AUTO (0) when the method does
				 * not batch (sync fsync/syncfs, cp
				 * fsync-each/syncfs) */
	uint32_t sync_jobs;	/* fsyncs in flight at most in that phase
				 * (1 for SEQUENTIAL); 0 when not batched */
	uint64_t skipped;	/* copy: existing destination files left
				 * as they were (enum fk_copy_update) */
	uint64_t skipped_bytes; /* their size, bytes (not copied) */
	uint64_t reflinks;	/* copy: files cloned with FICLONE */
};

/*
 * fk_tree_stats_add - add the counts and times of one call's statistics
 * @st to @sum: every counter and every time is summed, @degraded is
 * or-ed, and @sync_io/@sync_jobs are taken from @st when @st batched
 * (sync_io nonzero), so the sum says the backend of the last batched
 * call.  For a caller that copies or syncs several trees one by one
 * (cp --parents, the per-source loop of fk_tree_copy_sources) and
 * reports one total.
 * @sum: the running total; caller-owned, modified.
 * @st: one call's statistics; caller-owned, read only.
 *
 * No I/O, no allocation, cannot fail; not thread-safe on the same @sum
 * (the caller serialises).  tests/tree/test-tree-stats-add.c fails when
 * a field is added to struct fk_tree_stats and not summed here.
 */
FK_API void fk_tree_stats_add(struct fk_tree_stats *sum,
			      const struct fk_tree_stats *st);

typedef void (*fk_progress_fn)(void *arg, const struct fk_tree_stats *st);

struct fk_tree_opts {
	enum fk_sync_method sync_method; /* fk_tree_sync only */
	enum fk_copy_method copy_method; /* fk_tree_copy only */
	uint64_t flush_after_bytes;	 /* writeback hints are started once
					  * this many bytes are pending,
					  * bytes; 0 = no writeback hints
					  * (sync twopass, copy writeback) */
	int drop_cache; /* copy: POSIX_FADV_DONTNEED once written */
	fk_report_fn report;
	void *report_arg;
	fk_progress_fn progress; /* called at most every 100 ms */
	void *progress_arg;
	int sync_io;	    /* enum fk_sync_io: how the final fsync
			     * phase (sync twopass pass 2, copy
			     * writeback/delayed) issues its fsyncs,
			     * through struct fk_fsync_batch;
			     * FK_SYNC_IO_AUTO (default) */
	uint32_t sync_jobs; /* fsyncs in flight at most in that phase,
			     * 1..FK_FSYNC_BATCH_MAX_QUEUE_DEPTH; 0 =
			     * FK_FSYNC_BATCH_DEFAULT_QUEUE_DEPTH */
	/* fk_tree_copy only (0 = cp -a's behaviour): */
	int update;		 /* enum fk_copy_update */
	int reflink;		 /* enum fk_copy_reflink */
	int sparse;		 /* enum fk_copy_sparse */
	unsigned int copy_flags; /* enum fk_copy_flags */
	fk_copied_fn copied;	 /* each entry created (cp -v), or NULL */
	void *copied_arg;
	fk_refused_fn refused; /* cp's refusals, or NULL (@report) */
	void *refused_arg;
	int backup;		   /* enum fk_copy_backup */
	const char *backup_suffix; /* SIMPLE's suffix; NULL or one with a
				    * '/': "~".  Borrowed for the call */
	fk_overwrite_fn overwrite; /* cp -i, or NULL: replace */
	void *overwrite_arg;
	fk_backed_up_fn backed_up; /* each backup made (cp -v -b), or NULL */
	void *backed_up_arg;
};

/*
 * fk_tree_opts_init - defaults: sync_method FK_SYNC_AUTO, copy_method
 * FK_COPY_AUTO (as flushkit sync and cp; a zeroed struct means
 * FK_SYNC_TWOPASS and FK_COPY_WRITEBACK), flush_after_bytes 256 KiB
 * (used by twopass, writeback and auto's twopass), no drop_cache,
 * no callbacks, sync_io FK_SYNC_IO_AUTO, sync_jobs 0 (32); for copy, update
 * FK_COPY_UPDATE_ALL, reflink and sparse AUTO, no copy_flags.  No I/O;
 * thread-safe.
 */
FK_API void fk_tree_opts_init(struct fk_tree_opts *o);

/*
 * fk_tree_sync - make every file and directory under @paths durable.
 * @paths: @nr_paths (>= 1) paths, each a directory (walked) or any
 *      other file; a path that is a symlink to a directory is followed,
 *      nothing below it is.  Borrowed for the call.
 * @o: options (NULL: defaults).  @o->sync_method (enum fk_sync_method;
 *      @o->copy_method is ignored):
 *      FK_SYNC_TWOPASS - pass 1 starts writeback of every regular file
 *        (whole-file sync_file_range(SYNC_FILE_RANGE_WRITE) through
 *        struct fk_writeback, issued once @o->flush_after_bytes are
 *        pending; posix_fadvise(DONTNEED) where unsupported; with
 *        flush_after_bytes 0 no hint is made: pass 1 only opens the
 *        files, as fk_tree_copy's FK_COPY_DELAYED is WRITEBACK without
 *        hints),
 *        pass 2 fsyncs every file, then every directory after its
 *        contents; every hint precedes the first fsync.  Pass 2 is
 *        batched (struct fk_fsync_batch, @o->sync_io, up to
 *        @o->sync_jobs in flight): the files collected while walking
 *        are fsynced as one batch, then the collected directories one
 *        batch per depth, deepest first; a batch is flushed when the
 *        descriptor window below is reached and at the end, so every
 *        directory is still fsynced after everything under it.
 *        Descriptors of pass 1 stay open until their fsync, within the
 *        window.  PostgreSQL's SyncDataDirectory /
 *        pre_sync_fname (src/backend/storage/file/fd.c, 9.5+).
 *      FK_SYNC_AUTO - pass 1 as twopass, also summing each file's
 *        dirty + writeback pages (cachestat(2), syscall 451); when they
 *        are at least half of /proc/meminfo's Dirty + Writeback (and
 *        not 0), one syncfs(2) of each file system under the paths (a
 *        sweep), then each file's own writeback error through its kept
 *        descriptor (sync_file_range(SYNC_FILE_RANGE_WAIT_AFTER):
 *        errseq since the descriptor was opened; reported as op
 *        "writeback", the file failed, never retried); directories are
 *        not fsynced (the syncfs committed them).  Otherwise, without
 *        cachestat, or when a syncfs fails (reported by the fsyncs that
 *        follow, not as such), pass 2 of twopass.  st->syncfs_calls > 0
 *        says it swept.
 *      FK_SYNC_FSYNC - one pass of fsync, directories after contents,
 *        one fsync at a time (the unbatched baseline; sync_io ignored).
 *      FK_SYNC_SYNCFS - one syncfs(2) per distinct st_dev found under
 *        the paths (no file is opened except a regular file that is the
 *        only one of its file system; one descriptor is held per file
 *        system); on kernels before 5.8, which do not report syncfs
 *        errors, one warning is reported.
 *      Descriptor window: every pass opens at most RLIMIT_NOFILE soft
 *      limit, minus the descriptors open when it starts, minus a reserve
 *      of 26 (the walk holds at most 8 directories open at any depth;
 *      at most 65536); directories are opened O_NOATIME where allowed.
 *      Diagnostics go to @o->report (op "open", "stat", "getdents",
 *      "reopen", "fsync", "syncfs", "sync_file_range", "file descriptor
 *      limit too low (...)"), progress to @o->progress.
 * @st: filled (zeroed first); may be NULL.
 * Each inode (st_dev, st_ino) is synced at most once per call; FIFOs,
 * sockets and devices are never opened; symlinks are never followed.
 * Returns 0; -FK_EDEGRADED when everything was synced but some directory
 * fsync failed with EINVAL/ENOTSUP/EOPNOTSUPP, or some regular file's
 * with EINVAL (procfs files: nothing on storage to make durable)
 * (st->degraded set, one warning per file system); -EMFILE, before
 * anything is done, when RLIMIT_NOFILE leaves no descriptor beyond those
 * open and the reserve (reported); -ESTALE when a directory above the
 * walk's window was moved away during the walk (reported as "reopen",
 * the walk of that path stops); or the first -errno after doing the rest:
 * a failed fsync/syncfs (sticky: never retried, never reopened), -EACCES
 * or another open/getdents error, -ENOENT for a path that does not
 * exist.  Entries vanishing during the walk are warnings, counted in
 * st->vanished, not errors.  -EINVAL: no paths, an empty path or an
 * unknown sync_method, a bad sync_io or sync_jobs > 4096.  -ENOMEM.  With
 * twopass and sync_io FK_SYNC_IO_URING, the error of io_uring's setup
 * (-EPERM, -ENOSYS, -ENOMEM, -EOPNOTSUPP: see fk_fsync_batch_create)
 * before anything is done; AUTO falls back to threads.
 * Blocks; does I/O.  Thread-safe if each call has its own @o and @st
 * (and the callbacks are).
 */
FK_API int fk_tree_sync(const char *const *paths, size_t nr_paths,
			const struct fk_tree_opts *o, struct fk_tree_stats *st);

/*
 * fk_tree_copy - copy @src to @dst with cp -a semantics and make the
 * copy durable.
 * @src: the file or directory to copy (a symlink is copied as a
 *      symlink).  Borrowed for the call.
 * @dst: where the copy goes: if it is an existing directory (or a
 *      symlink to one), the copy is @dst/basename(@src); otherwise @dst
 *      itself.  An existing non-directory in the way of a file is
 *      replaced; an existing directory in the way of a directory is
 *      merged into.  Borrowed for the call.
 * @o: options (NULL: defaults).  @o->copy_method (enum fk_copy_method;
 *      @o->sync_method is ignored):
 *      FK_COPY_WRITEBACK - while copying, writeback of the written data
 *        is started every @o->flush_after_bytes bytes (0: never, which
 *        is FK_COPY_DELAYED) through
 *        struct fk_writeback (sync_file_range(SYNC_FILE_RANGE_WRITE));
 *        then every file is fsynced, then every directory after its
 *        contents (PostgreSQL's checkpoint_flush_after, 9.6), batched
 *        as fk_tree_sync's pass 2 (@o->sync_io, @o->sync_jobs);
 *      FK_COPY_DELAYED - the same without the hints;
 *      FK_COPY_FSYNC_EACH - each file fsynced right after it is written,
 *        each directory after its contents (rsync --fsync), one fsync at
 *        a time (the unbatched baseline; sync_io ignored);
 *      FK_COPY_AUTO - as FK_COPY_DELAYED (no hints, descriptors kept,
 *        batched fsyncs) unless the dirty + writeback pages it left
 *        (cachestat(2) of each file once written; its size without
 *        cachestat) are at least half of /proc/meminfo's Dirty +
 *        Writeback: then one syncfs(2) of each file system written to,
 *        each file's own writeback error through its kept descriptor
 *        (op "writeback" on failure: the file keeps its creation time,
 *        the copy fails), the times, one more syncfs, and the parent's
 *        fsync.  A failed syncfs falls back to delayed's fsyncs.
 *      FK_COPY_SYNCFS - one syncfs(2) at the end of each file system
 *        the copy wrote to: the destination's and every one mounted on
 *        a directory inside it (one descriptor held per file system).
 *      In every method the destination's parent directory is fsynced
 *      last.  With WRITEBACK and DELAYED the writing descriptor stays
 *      open until its fsync, within the descriptor window of
 *      fk_tree_sync (every pass, the times pass included, opens at most
 *      that many; the source walk and the destination directories hold
 *      at most 8 open each, at any depth).
 *      @o->drop_cache: POSIX_FADV_DONTNEED on each source file once
 *      copied and each destination file once fsynced.
 *      @o->copy_flags (enum fk_copy_flags): FK_COPY_NO_TARGET_DIR, @dst
 *      is the copy even if it is an existing directory (a directory
 *      @src is merged into it; a non-directory @src fails with
 *      -EISDIR); FK_COPY_ONE_FS, directories on another file system
 *      than @src are created (mode, times) but not descended into;
 *      FK_COPY_CHECKSUM, see below; FK_COPY_REMOVE_DEST and
 *      FK_COPY_FORCE, see the next paragraph.
 *      An existing destination non-directory that stands for the source
 *      (the same entry; another hard link of it; a symlink to it; the
 *      file a source symlink points to) is never replaced: "same file
 *      as the source", -EEXIST for that entry (with FK_COPY_REMOVE_DEST
 *      a destination symlink or another hard link is replaced).  Two
 *      hard links of one symlink are left as they are.  A regular file
 *      is never written through a dangling symlink (-ENOENT) and not
 *      onto a symlink loop without FK_COPY_FORCE (-ELOOP); onto an
 *      existing FIFO or device (without FK_COPY_REMOVE_DEST) it is
 *      written into, a block device then fsynced.  A later source of
 *      fk_tree_copy_sources never replaces a non-directory an earlier
 *      one created at the top (-EEXIST), unless FK_COPY_UPDATE_NONE.
 *      @o->update (enum fk_copy_update): what happens to an existing
 *      destination non-directory in the way of a source entry: replaced
 *      (ALL), left (NONE), replaced only if its mtime is older than the
 *      source's (OLDER), or, for regular files, left if its size and
 *      mtime (FK_COPY_CHECKSUM: its content, read in full) equal the
 *      source's (DIFFERENT: resuming an interrupted copy).  An entry
 *      left is counted in st->skipped (regular files' sizes in
 *      st->skipped_bytes); a regular file left is fsynced with the copy,
 *      and with DIFFERENT gets the source's times (set after its fsync,
 *      then fsynced again, as a copied file).  Another name of a source
 *      inode copied in this run is linked, never left.
 *      @o->reflink (enum fk_copy_reflink): AUTO tries FICLONE for each
 *      regular file (st_size > 0) and falls back to copy_file_range;
 *      ALWAYS makes a failed FICLONE an error for that file ("clone
 *      (FICLONE)", its -errno; the empty file is removed); NEVER uses
 *      read/write only.  A clone is counted in st->reflinks and
 *      st->bytes and made durable like a copy.
 *      @o->sparse (enum fk_copy_sparse): AUTO keeps the source's holes;
 *      ALWAYS also makes all-zero 4 KiB blocks holes; NEVER writes
 *      holes as zeros; ALWAYS and NEVER read and write (no clone).
 *      @o->copied: called for each entry created (cp -v), in walk
 *      order; not for directories merged into nor entries left.
 *      cp's other modes (enum fk_copy_flags, each as GNU cp's option):
 *      FK_COPY_LINK / FK_COPY_SYMLINK make each non-directory a hard
 *      link of / symlink to its source (a relative one only into the
 *      working directory, else an error), the new name durable by its
 *      directory's fsync, a hard link's inode fsynced too; a name in
 *      the way is replaced only with FK_COPY_FORCE, FK_COPY_REMOVE_DEST,
 *      a backup or @o->overwrite (else FK_COPY_REFUSED_LINK or
 *      FK_COPY_REFUSED_SYMLINK, -EEXIST).  FK_COPY_DEREF follows every
 *      source symlink (a dangling one an error "cannot stat", a cycle
 *      "cyclic directory", -ELOOP), FK_COPY_DEREF_ARGS @src only.
 *      FK_COPY_ATTR_ONLY, FK_COPY_CONTENTS and FK_COPY_NO_* as above.
 *      @o->backup (enum fk_copy_backup, @o->backup_suffix): an existing
 *      non-directory is renamed to fk_copy_backup_name's name, the
 *      backup fsynced, then its directory, before the name is reused
 *      (a failed fsync: the name left free, the error the copy's);
 *      FK_COPY_REFUSED_BACKUP_IS_SOURCE when that name is the source.
 *      @o->overwrite (cp -i) is asked before an existing destination is
 *      replaced or backed up.
 *      With FK_COPY_FSYNC_EACH a file's times are set right after its
 *      data fsync (and set and fsynced again at the end), so a copy
 *      interrupted later leaves its finished files with their source's
 *      times.
 *      Diagnostics go to @o->report (ops "open", "read", "create",
 *      "mkdir", "symlink", "mknod", "link", "chown", "chmod", "utimens",
 *      "fsync", "syncfs", "copy stopped, incomplete file", "reopen",
 *      "clone (FICLONE)", "cannot overwrite directory with
 *      non-directory",
 *      "file descriptor limit too low (...)"; warnings "hard link across
 *      file systems, copied as a separate file", "hard link target gone
 *      from the destination, copied as a separate file" (-ENOENT) and
 *      "hard link target replaced in the destination, copied as a
 *      separate file" (-ESTALE): the first copy of the inode was removed
 *      or replaced by someone else, so the name is copied, never linked
 *      to what stands there now), progress to @o->progress.
 * @st: filled (zeroed first); may be NULL.  st->bytes counts file data
 *      copied (not holes); st->walk_ns the copy phase, st->fsync_ns the
 *      durability phase (for FSYNC_EACH, the fsyncs made while copying).
 * Regular files are copied with copy_file_range(2), falling back to
 * pread/pwrite on EXDEV, ENOSYS, EINVAL, EOPNOTSUPP, and when it returns
 * 0 (only a read says EOF); sparse files keep their holes
 * (SEEK_DATA/SEEK_HOLE).  What is copied is what reads return: a source
 * with st_size 0 (procfs), or without blocks on a pseudo file system
 * (fstatfs: procfs, sysfs, debugfs, tracefs, configfs, securityfs,
 * cgroup, bpf, FUSE), is read to EOF whatever its st_size says; one
 * whose reads end before st_size (sysfs) is copied to there, never
 * padded.  The source is read ahead of the copy: the next regular files
 * of the directory being copied (up to its next subdirectory) are
 * opened and their reads started (POSIX_FADV_WILLNEED), at most 32 MiB
 * and an eighth of the descriptor window (at most 256 descriptors)
 * ahead; each file is still opened once (an open that fails ahead is
 * reported as the file's own "open" error), FIFOs, devices and symlinks
 * are never opened.  Hard links stay hard links (by source (st_dev,
 * st_ino), and where statx has one the birth time, so that a freed
 * inode number given to a new file is not taken for the old one; across
 * several sources, fk_tree_copy_sources) except across
 * mounts inside the destination, other file
 * systems or bind mounts (EXDEV: the first name on each destination
 * mount is copied as a separate file, a warning; statx STATX_MNT_ID
 * tells the mounts apart); symlinks are copied, never followed; FIFOs,
 * sockets and devices are recreated with mknodat(2), never opened.
 * Files are created 0600, directories 0700; mode, owner (when euid is
 * 0), xattrs (best effort) and times (atime and mtime, to the ns) are
 * applied after the content; a directory's mode after its entries, its
 * times only once its entries are durable (after its fsync, or the
 * first syncfs), then it is fsynced again (or a second syncfs), so a
 * directory carrying its source's mtime has all of its names even after
 * a power cut during the copy; a
 * directory one of whose entries could not be copied (an error reported
 * for it or below it) keeps its creation time, as do the directories
 * above it, so it never looks complete.  No PATH_MAX limit below @src.
 * Returns 0; -FK_EDEGRADED when the copy is complete and synced but some
 * directory fsync failed with EINVAL/ENOTSUP/EOPNOTSUPP (or a file's with
 * EINVAL); -EMFILE as fk_tree_sync, before anything is created;
 * -ESTALE when a destination directory above the window was moved away
 * during the copy (reported, the copy stops); or the first
 * -errno: a failed fsync/syncfs (sticky: reported, never retried), an
 * entry that could not be read or created (-EACCES, -EIO, ...; the rest
 * is still copied and synced).  -ENOSPC/-EDQUOT stop the copy at once:
 * the file being written is left incomplete and reported, and nothing is
 * fsynced.  -EEXIST: @dst is @src itself; -ENOTDIR: @src is a directory
 * and @dst an existing non-directory; -EINVAL: bad copy_method or NULL
 * argument, a bad sync_io or sync_jobs > 4096, an unknown update,
 * reflink, sparse or copy_flags bit, reflink ALWAYS with sparse other
 * than AUTO, or a directory copied into itself (that subtree is
 * skipped); -EISDIR: FK_COPY_NO_TARGET_DIR with @dst a directory and
 * @src not; -ENOENT: @src does not exist;
 * -ENOMEM; with writeback/delayed and sync_io FK_SYNC_IO_URING, the
 * error of io_uring's setup, before anything is copied.  Source entries
 * vanishing during the copy are warnings counted in st->vanished; a
 * copied file that someone else removes or renames from the destination
 * before the copy made it durable is an error (reported as "copied file
 * vanished from the destination", -ENOENT), as is one replaced there by
 * another file (-ESTALE).
 * Blocks; does I/O.  Thread-safe if each call has its own @o and @st
 * (and the callbacks are).
 */
FK_API int fk_tree_copy(const char *src, const char *dst,
			const struct fk_tree_opts *o, struct fk_tree_stats *st);

/*
 * fk_tree_copy_sources - copy several sources into one directory, as
 * "cp -a SRC... DIR", and make each copy durable.
 * @srcs: @nr_srcs (>= 1) sources, each as @src of fk_tree_copy.
 *      Borrowed for the call.  A source given twice is copied twice (the
 *      second copy replaces the first); flushkit cp leaves such
 *      duplicates out, with cp's warning, before calling.
 * @nr_srcs: how many.
 * @dst: with one source, as fk_tree_copy's @dst; with more, an existing
 *      directory (or a symlink to one): each source is copied to
 *      @dst/basename(source).  Borrowed for the call.
 * @o: options as for fk_tree_copy (NULL: defaults).
 * @st: the sum over the sources of what fk_tree_copy fills (zeroed
 *      first); may be NULL.
 *
 * Each source is copied and made durable in turn exactly as by
 * fk_tree_copy (its durability phase ends with the fsync of @dst),
 * except that one hard-link map serves them all: a source inode (st_dev,
 * st_ino) copied under one source is linkat(2) to that first copy from
 * each later name of it, under any later source, as cp -a does within
 * one invocation (a source that is itself a non-directory with
 * st_nlink > 1 takes part too).  The map holds one path per inode with
 * more than one link and destination mount (malloc'd; freed before the
 * return).  A name whose other links are outside every source is copied
 * once, link count 1.  An error in one source does not stop the next,
 * except one that every source would meet before anything is done (the
 * -EMFILE of the descriptor limit, io_uring's setup with
 * FK_SYNC_IO_URING, -ENOMEM there): reported once, and no later source
 * is tried; and a copy stopped by -ENOSPC, -EDQUOT or -ENOMEM: as with
 * one source, nothing more is created, written or fsynced, so no later
 * source is tried either.
 * Returns 0; the first -errno (or -FK_EDEGRADED, when nothing worse
 * happened) of the sources' copies, each as fk_tree_copy returns it;
 * -ENOTDIR (reported as op "target") when @nr_srcs > 1 and @dst is not
 * a directory, or its stat error (-ENOENT, ...), before anything is
 * copied; -EINVAL: @srcs, a source or @dst NULL, @nr_srcs 0, an option
 * fk_tree_copy refuses, or FK_COPY_NO_TARGET_DIR with @nr_srcs > 1.
 * Blocks; does I/O.  Thread-safe if each call has its own @o and @st
 * (and the callbacks are).
 */
FK_API int fk_tree_copy_sources(const char *const *srcs, size_t nr_srcs,
				const char *dst, const struct fk_tree_opts *o,
				struct fk_tree_stats *st);

#endif /* FLUSHKIT_TREE_H */
