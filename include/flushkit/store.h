/* SPDX-License-Identifier: MIT */
/*
 * flushkit/store.h - section 8 of <flushkit.h>, page store:
 * struct fk_store, the crash-safe page store.
 *
 * Part of <flushkit.h>, which includes every section in layer order
 * (its opening comment lists them, with the conventions they follow),
 * inside its extern "C" and after FK_API and the error codes: include
 * <flushkit.h>, not this file.
 */
#ifndef FLUSHKIT_STORE_H
#define FLUSHKIT_STORE_H

#ifndef FLUSHKIT_H
#error "include <flushkit.h>, not <flushkit/store.h>"
#endif

/* ===================================================================
 * 8. Page store
 * =================================================================== */

/* SECTION store */
/*
 * The page store: an embeddable, crash-safe storage engine of tables of
 * fixed-size rows in 8 KiB pages, with a write-ahead log and group
 * commit, a buffer pool with clock-sweep replacement, a checkpointer
 * thread (sorted, paced writes with writeback hints, an fsync request
 * queue, a spread sync phase) and redo recovery; the design of
 * PostgreSQL (xlog.c, bufmgr.c, checkpointer.c, sync.c) scaled down.
 * File formats and invariants: docs/design.md, "The page store".
 *
 * Thread-safety: every fk_store_* function may be called from any
 * thread at once on the same store, except fk_store_open (once) and
 * fk_store_close (after every other call returned).  A struct fk_batch
 * belongs to one thread at a time.
 *
 * Errors: besides -errno values, -FK_ECORRUPT (a page or the control
 * file or catalog failed its CRC-32C or identity check, or a page that
 * holds rows reads as all zero) and
 * -FK_ESTOPPED.  A failed fsync of the WAL or of a data file, or a
 * failed WAL write, STOPS the store: the commits waiting for that
 * flush return the error itself (e.g. -EIO), every call started later
 * returns -FK_ESTOPPED, nothing is retried, no page is written any
 * more, and fk_store_close returns the original error.  The next
 * fk_store_open recovers from the WAL: every commit that returned 0 is
 * there.  Running out of space does NOT stop the store where nothing
 * depends on the failed write (creating a WAL segment, evicting a page
 * to a new block, a checkpoint's page writes or control file): the call
 * returns -ENOSPC with nothing applied, and the same handle works again
 * once space is freed.  A failed fsync stays sticky, and so does an
 * ENOSPC from a write into an existing WAL segment (copy-on-write file
 * systems; WAL segments are zero-filled, so ext4 and xfs never need a
 * block there).  A table segment removed or renamed behind the store's
 * back fails the checkpoint's sync (-ENOENT, -ESTALE) and stops it.
 */
struct fk_store;

#define FK_PAGE_SIZE 8192u

enum fk_wal_sync_method {
	FK_WAL_FDATASYNC = 0,	  /* write(), then fdatasync() */
	FK_WAL_FSYNC = 1,	  /* write(), then fsync() */
	FK_WAL_OPEN_DATASYNC = 2, /* O_DSYNC writes */
};

/*
 * fk_wal_sync_method_name - the name of an enum fk_wal_sync_method value:
 * "fdatasync", "fsync" or "open_datasync" (PostgreSQL's wal_sync_method names).
 * @method: an enum fk_wal_sync_method value.
 * Return: a static string (never freed); "unknown" for any other
 * value.  Never NULL.
 *
 * fk_wal_sync_method_parse - the inverse: the value a name stands for.
 * @name: a NUL-terminated name as above, matched exactly (case and
 *      all); may be NULL.  Borrowed for the call.
 * Return: the enum fk_wal_sync_method value (>= 0), or
 *   -EINVAL  @name is NULL or is not one of the names.
 *
 * No I/O, no allocation; thread-safe (constant tables only).
 */
FK_API const char *fk_wal_sync_method_name(int method);
FK_API int fk_wal_sync_method_parse(const char *name);

/*
 * Compression of the full-page images a commit logs (fk_store_opts.
 * wal_compression), as PostgreSQL's wal_compression=lz4|zstd: each 8 KiB
 * image is compressed on its own (LZ4 default acceleration; zstd level
 * 1) and logged as it is where that would not make it smaller; replay
 * decompresses it (the record's CRC-32C covers the stored bytes; an
 * image that does not decompress to exactly one page naming its table
 * and block fails the open with -FK_ECORRUPT).  Fewer WAL bytes per
 * image, for the CPU of compressing under the page locks (not under
 * the WAL insert lock).  A method is available only where the library
 * was built with liblz4 or libzstd: fk_store_open refuses one that is
 * not with -ENOTSUP (logged), and a store whose WAL holds an image
 * compressed by a method this build lacks fails its recovery with
 * -ENOTSUP.  The setting is per open, not stored: a WAL may mix
 * compressed and uncompressed images, and replay reads either.
 */
enum fk_wal_compression {
	FK_WAL_COMPRESSION_OFF = 0,  /* images as they are (naive) */
	FK_WAL_COMPRESSION_LZ4 = 1,  /* liblz4 */
	FK_WAL_COMPRESSION_ZSTD = 2, /* libzstd, level 1 */
};

/*
 * fk_wal_compression_name - "off", "lz4" or "zstd" for an enum
 * fk_wal_compression value; "unknown" otherwise.  Static string.  No I/O.
 * fk_wal_compression_parse - the inverse: the enum value, or -EINVAL.
 * Whether this build has the method: fk_store_open says (-ENOTSUP).
 */
FK_API const char *fk_wal_compression_name(int method);
FK_API int fk_wal_compression_parse(const char *name);

/*
 * One finished (or failed) checkpoint, with what PostgreSQL's
 * log_checkpoints prints.  Passed to fk_store_opts.on_checkpoint; valid
 * during the call only.
 */
struct fk_checkpoint_info {
	const char *reason;	   /* "time", "wal", "requested",
				    * "shutdown", "end-of-recovery",
				    * "init" (static string) */
	uint64_t start_ns, end_ns; /* fk monotonic clock (CLOCK_MONOTONIC) */
	uint64_t redo_lsn;	   /* WAL byte position replay starts at */
	uint64_t buffers_written;  /* 8 KiB pages written by it */
	uint64_t write_ms, sync_ms, total_ms; /* phases, milliseconds */
	uint64_t files_synced;		/* segment files fsynced (issued) */
	uint64_t longest_sync_ms;	/* slowest single fsync, issue to
					 * completion (with several in
					 * flight they overlap: sync_ms is
					 * the phase's wall time) */
	uint64_t average_sync_ms;	/* mean of the same */
	const char *sync_io;		/* backend of the sync phase:
					 * "uring", "threads" or
					 * "sequential" (static string) */
	uint64_t wal_segments_recycled; /* renamed for reuse */
	uint64_t wal_segments_removed;	/* unlinked */
	uint64_t writeback_bytes;	/* hinted with sync_file_range */
	int error;			/* 0 or -errno if it failed */
};

/*
 * checkpoint_sync_spread_ms value meaning "10% of checkpoint_timeout_ms"
 * (resolved at fk_store_open, so it follows a later timeout change).
 */
#define FK_SYNC_SPREAD_AUTO UINT64_MAX

/*
 * What fk_store_open does when @dir holds no store (fk_store_opts.
 * create_mode), as LevelDB's create_if_missing / error_if_exists.  "No
 * store" is: the directory does not exist, or it has no control file,
 * no catalog and no entries in base/ or wal/ (a creation interrupted
 * before its first file); a directory with a catalog, table segments or
 * WAL segments but no control file is a damaged store (-FK_ECORRUPT in
 * every mode), never a new one.  A creation that fails removes what it
 * made (the lock file stays), so it can simply be tried again; one cut
 * short by a crash after its first file leaves such a damaged store,
 * with nothing acknowledged in it, to be removed (fk_store_destroy).
 *
 * The default is FK_STORE_OPEN_EXISTING, the safe one: an open never
 * creates a store the caller did not ask for, so a mistyped path is an
 * error (-ENOENT) that names it instead of an empty store into which a
 * program then loads, commits and reads as if it were the real one (a
 * benchmark or a check would report on nothing).  Programs that create
 * stores say so, once, where they create them.
 */
enum fk_store_create_mode {
	/* No store: -ENOENT, nothing created (not even the directory). */
	FK_STORE_OPEN_EXISTING = 0,
	/* No store: create it (and the directory, mode 0700). */
	FK_STORE_CREATE_IF_MISSING = 1,
	/* Create it; a store there: -EEXIST, nothing changed. */
	FK_STORE_CREATE_NEW = 2,
};

/*
 * fk_store_create_mode_name - the name of an enum fk_store_create_mode value:
 * "open-existing", "create-if-missing" or "create-new".
 * @mode: an enum fk_store_create_mode value.
 * Return: a static string (never freed); "unknown" for any other
 * value.  Never NULL.
 *
 * fk_store_create_mode_parse - the inverse: the value a name stands for.
 * @name: a NUL-terminated name as above, matched exactly (case and
 *      all); may be NULL.  Borrowed for the call.
 * Return: the enum fk_store_create_mode value (>= 0), or
 *   -EINVAL  @name is NULL or is not one of the names.
 *
 * No I/O, no allocation; thread-safe (constant tables only).
 */
FK_API const char *fk_store_create_mode_name(int mode);
FK_API int fk_store_create_mode_parse(const char *name);

/*
 * The WAL's footprint: the segment being written and
 * FK_STORE_WAL_MIN_SEGMENTS - 1 more kept preallocated (created ahead by
 * the checkpointer, so commits never create one), so a store needs at
 * least FK_STORE_WAL_MIN_SEGMENTS * wal_segment_bytes of disk space for
 * its WAL (48 MiB with the default 16 MiB segments), besides its
 * tables; checkpoints keep it under about max_wal_size_bytes, or, once
 * creating a segment met ENOSPC or EDQUOT, under what it took then (the
 * checkpoint trigger is lowered for the rest of the handle's life, so
 * space freed later is not taken by the WAL again).  A new
 * store creates all of them before its control file: where they do not
 * fit, its creation fails with -ENOSPC (logged with the free space) and
 * leaves no store.
 */
#define FK_STORE_WAL_MIN_SEGMENTS 3u

/*
 * Options: fill with fk_store_opts_init (then a preset), change fields,
 * pass to fk_store_open, which copies them.  Sizes in bytes, times in
 * milliseconds.  segment_bytes and wal_segment_bytes are fixed when the
 * store is created; later opens use the stored values.
 */
struct fk_store_opts {
	int create_mode;		       /* enum fk_store_create_mode;
						* FK_STORE_OPEN_EXISTING */
	uint64_t shared_buffers_bytes;	       /* default 128 MiB; min 64
						* buffers */
	uint64_t segment_bytes;		       /* table segment file, 64 MiB;
						* multiple of 8 KiB */
	uint64_t wal_segment_bytes;	       /* 16 MiB; multiple of 8 KiB,
						* 64 KiB .. 1 GiB */
	uint64_t max_wal_size_bytes;	       /* 1 GiB: checkpoint when WAL
						* since the redo point passes
						* max_wal/(1+target) */
	uint64_t checkpoint_timeout_ms;	       /* 300000 */
	double checkpoint_completion_target;   /* 0.9, in (0, 1] */
	uint64_t checkpoint_flush_after_bytes; /* 256 KiB; 0 = no hints */
	int checkpoint_flush_wait;	       /* enum fk_writeback_wait,
						* 0 = none: how the
						* checkpoint's hints wait
						* (struct fk_writeback's
						* wait; an error fails the
						* checkpoint as a failed
						* fsync) */
	int checkpoint_sorted;		       /* sort writes by file/block */
	uint64_t checkpoint_sync_spread_ms;    /* 0 = back-to-back fsyncs;
						* FK_SYNC_SPREAD_AUTO */
	int fsyncq_compaction;		       /* compact when full */
	uint32_t fsyncq_capacity;	       /* 0 = number of buffers */
	int full_page_writes;		       /* 1 (torn-page protection) */
	int wal_sync_method;		       /* enum fk_wal_sync_method */
	int wal_compression;		       /* enum fk_wal_compression of
						* full-page images; preset
						* smooth: lz4 (else zstd,
						* else off), naive: off */
	int sync_io;			       /* enum fk_sync_io: how the
						* sync phase issues fsyncs;
						* FK_SYNC_IO_AUTO */
	uint32_t sync_jobs;		       /* fsyncs in flight at most
						* in the sync phase, 0 =
						* FK_FSYNC_BATCH_DEFAULT_
						* QUEUE_DEPTH; <= 4096 */
	/* Called from the checkpointer thread (or from fk_store_open /
	 * fk_store_close / fk_store_bulk_load's thread for their
	 * checkpoints) after each checkpoint, failed ones included.  Must
	 * not call fk_store_* functions. */
	void (*on_checkpoint)(void *arg, const struct fk_checkpoint_info *ci);
	void *on_checkpoint_arg;
	/* Log lines (recovery, checkpoints as log_checkpoints, errors with
	 * the failed operation), from any store thread.  May be NULL. */
	void (*log)(void *arg, const char *line);
	void *log_arg;
};

/* fk_store_opts_init - the defaults above, preset "smooth".  No I/O. */
FK_API void fk_store_opts_init(struct fk_store_opts *o);

/*
 * fk_store_opts_preset - set the flushing knobs.
 * @flush: "smooth" (also NULL): checkpoint_sorted 1,
 *      checkpoint_flush_after 256 KiB, checkpoint_sync_spread_ms
 *      FK_SYNC_SPREAD_AUTO, fsyncq_compaction 1 - how PostgreSQL 9.6+
 *      flushes - sync_io FK_SYNC_IO_AUTO (batched fsyncs) and
 *      wal_compression lz4 where this build has liblz4 (else zstd,
 *      else off: the full-page images after a redo point are the
 *      WAL's largest burst); or
 *      "naive": unsorted writes, no writeback hints, back-to-back
 *      fsyncs one at a time (FK_SYNC_IO_SEQUENTIAL), no queue
 *      compaction, uncompressed images - how servers flushed before
 *      those fixes.  Other
 *      fields (sync_jobs included) are untouched.
 * Returns 0 or -EINVAL (unknown name).  No I/O.
 */
FK_API int fk_store_opts_preset(struct fk_store_opts *o, const char *flush);

/*
 * fk_store_open - open the store in directory @dir, creating it as
 * @o->create_mode says (see enum fk_store_create_mode; by default
 * never), and running crash recovery if it was not shut down cleanly:
 * replay the WAL from the control file's redo LSN (full-page images,
 * then changes newer than each page), cut the WAL at the first invalid
 * record, and take an end-of-recovery checkpoint.  Starts the
 * checkpointer thread.
 * @dir: the data directory.
 * @o: options (copied; NULL = defaults).
 * @out: receives the store; NULL on error.
 *
 * One opener at a time: before it reads anything for recovery or
 * writes anything (creation included), the open takes an exclusive
 * flock(2) of @dir itself and an exclusive open-file-description lock
 * (fcntl F_OFD_SETLK) on the file "lock" in @dir (created 0600 if
 * missing, never removed); the directory's lock keeps others out even
 * when the lock file is removed or replaced.  The locks belong to
 * this store handle: a second fk_store_open of @dir - from another
 * process, or from this one (another thread, or the same) - fails with
 * -EBUSY and changes nothing on disk, until fk_store_close.  The kernel
 * drops the lock when its holder dies (kill -9 included), so it is
 * never stale; a child forked (without exec) while the store is open
 * shares the lock until it exits or closes its descriptors.  There is no
 * read-only open: a reader of a live store is refused with -EBUSY too.
 *
 * The checkpoints' sync phase fsyncs the pending segment files with up
 * to sync_jobs in flight through a struct fk_fsync_batch set up here
 * (sync_io): back-to-back as one batch, or, spread, in paced steps of
 * sync_jobs files (one file with FK_SYNC_IO_SEQUENTIAL).
 *
 * Return: 0, or
 *  -EINVAL      bad options (create_mode included);
 *  -ENOENT      no store in @dir and create_mode FK_STORE_OPEN_EXISTING
 *               (nothing created, not even @dir);
 *  -EEXIST      a store in @dir and create_mode FK_STORE_CREATE_NEW
 *               (nothing changed);
 *  -EBUSY       another open store holds @dir's lock (nothing changed;
 *               logged);
 *  -ENOTSUP     wal_compression names a method this build of the
 *               library lacks (no liblz4 / libzstd; logged, nothing
 *               opened), or the WAL to replay holds an image compressed
 *               by one;
 *  -FK_ECORRUPT the control file is missing from a directory that holds
 *               a store (a catalog, table or WAL segments: logged naming
 *               it, nothing changed); or the control file, catalog,
 *               checkpoint record or a page without a full-page image is
 *               corrupt; or a table segment file base/T.S holding rows
 *               the control file counts is missing, or shorter than the
 *               rows the last checkpoint made durable in it (logged with
 *               its name, never recreated empty); or base/ or wal/ is
 *               missing from a store that has a control file;
 *  -ENOSPC      creating a WAL segment (the log line gives the file
 *               system's free space and the WAL's size);
 *  -ENOLCK      (or another -errno of fcntl) the file system of @dir
 *               cannot lock: the store is not opened unlocked;
 *  -ENOMEM;
 *  the error of io_uring's setup when sync_io is FK_SYNC_IO_URING
 *  (-EPERM, -ENOSYS, -ENOMEM, -EOPNOTSUPP: see fk_fsync_batch_create);
 *  or the -errno of a failed file operation.
 * Blocks; does I/O (much of it, for a recovery: see stats.recovery_ms).
 * Thread-safety: may be called from several threads at once (on one
 * directory, at most one succeeds).
 */
FK_API int fk_store_open(const char *dir, const struct fk_store_opts *o,
			 struct fk_store **out);

/*
 * fk_store_destroy - remove the store in @dir: under its lock (as
 * fk_store_open takes it), the control file first (so an interrupted
 * destroy leaves a damaged store that fk_store_open refuses, never one
 * that opens as new), then the catalog, every file in wal/ and base/,
 * and those two directories, each step made durable (fsync of the
 * directory).  @dir itself, its lock file and any other file in it stay.
 * @dir: the data directory.
 * Return: 0 (also when @dir holds no store); -ENOENT (@dir does not
 * exist); -EBUSY (an open store holds it: nothing removed);
 * -ENOTEMPTY (base/ or wal/ holds a directory: left there, the files
 * removed); or the -errno of a failed file operation (a failed fsync of
 * a directory: the removal may not be durable).
 * Blocks; does I/O.  Thread-safe (fails with -EBUSY against an open or
 * destroy of the same directory).
 */
FK_API int fk_store_destroy(const char *dir);

/*
 * fk_store_close - stop the checkpointer, take a shutdown checkpoint
 * (every dirty page written and fsynced), mark the control file clean,
 * and free @s (in every case, also on error).
 * Returns 0, or the sticky error (then no checkpoint is attempted: the
 * next open recovers), or the error of the shutdown checkpoint.  Blocks;
 * does I/O.  No other call on @s may run or follow.
 */
FK_API int fk_store_close(struct fk_store *s);

/*
 * fk_store_create_table - create table @name (1..63 bytes) of rows of
 * @row_bytes (1 .. FK_PAGE_SIZE - 24) bytes; durable on return (the
 * catalog file is replaced atomically).  @id (may be NULL) receives its
 * id (1..64).  Returns 0, -EEXIST, -EINVAL, -ENOSPC (64 tables),
 * -FK_ESTOPPED or -errno.  Blocks; does I/O.
 */
FK_API int fk_store_create_table(struct fk_store *s, const char *name,
				 uint32_t row_bytes, uint32_t *id);

/* fk_store_table - look table @name up: its @id and @row_bytes (either
 * may be NULL).  Returns 0, -ENOENT or -EINVAL.  No I/O. */
FK_API int fk_store_table(struct fk_store *s, const char *name, uint32_t *id,
			  uint32_t *row_bytes);

/* fk_store_table_rows - number of rows of table @id (rows 0..rows-1
 * exist; the next append gets number rows).  Returns 0 or -ENOENT.
 * No I/O. */
FK_API int fk_store_table_rows(struct fk_store *s, uint32_t id, uint64_t *rows);

/*
 * fk_store_bulk_load - fill an EMPTY table with @nrows rows produced by
 * @fill (called in row order from this thread: it fills @row, row_bytes
 * long, for row number @rowno), writing pages directly to the segment
 * files (no WAL, no buffer pool) with writeback hints every
 * checkpoint_flush_after bytes, then fsyncing them and taking a
 * checkpoint that records the row count (like pgbench -i / COPY into a
 * new table).  Durable on return.  Commits touching the table must not
 * run meanwhile.
 * Returns 0, -ENOENT, -ENOTEMPTY (the table has rows), -FK_ESTOPPED,
 * -ENOSPC (nothing counted, the store goes on; logged with the space
 * the load needs, the file system's free space and the WAL's size), or
 * -errno (a failed fsync also stops the store).  Blocks; does I/O.
 */
FK_API int
fk_store_bulk_load(struct fk_store *s, uint32_t table, uint64_t nrows,
		   void (*fill)(void *arg, uint64_t rowno, void *row),
		   void *arg);

/*
 * fk_store_read - copy row @row of @table into @buf (row_bytes long),
 * as of the last commit applied (committed but maybe not yet durable
 * changes included, as in PostgreSQL).  Returns 0, -ENOENT (no such
 * table), -ERANGE (row >= rows), -FK_ECORRUPT (the page failed its
 * CRC-32C or identity check when read in, or read as all zero though
 * it holds rows), -ENOBUFS (every buffer pinned),
 * -FK_ESTOPPED or -errno.  May block on I/O (a read, or writing out a
 * dirty page to free a buffer).
 */
FK_API int fk_store_read(struct fk_store *s, uint32_t table, uint64_t row,
			 void *buf);

/*
 * A write batch: the row changes of one transaction, applied atomically
 * by fk_store_commit.  Caller-allocated; fk_batch_init, then add ops,
 * commit, fk_batch_reset to reuse, fk_batch_release to free.  The add
 * functions copy their data (except fk_batch_append, see there) and
 * return 0, -EINVAL (NULL data, zero length) or -ENOMEM; tables, rows
 * and ranges are checked at commit.  Not thread-safe.
 */
struct fk_batch {
	void *ops; /* private */
	size_t nr_ops, alloc_ops;
	void *data; /* private */
	size_t data_len, data_alloc;
};

FK_API void fk_batch_init(struct fk_batch *b);
FK_API void fk_batch_release(struct fk_batch *b);
FK_API void fk_batch_reset(struct fk_batch *b);
/* Overwrite @len bytes at byte @offset of row @row (row < rows). */
FK_API int fk_batch_set(struct fk_batch *b, uint32_t table, uint64_t row,
			uint32_t offset, const void *data, uint32_t len);
/* Add @delta to the little-endian int64 at byte @offset of row @row
 * (wrapping); after a successful commit *@result (if non-NULL) holds the
 * new value.  Redo replays the delta. */
FK_API int fk_batch_add_i64(struct fk_batch *b, uint32_t table, uint64_t row,
			    uint32_t offset, int64_t delta, int64_t *result);
/*
 * Append a row (row_bytes long) at the end of @table; after a
 * successful commit *@rowno (if non-NULL) holds its row number.  Row
 * numbers are assigned at commit, in WAL order, so a table only
 * appended to has no holes after a crash.  The batch does not know
 * row_bytes, so @row is NOT copied: it must stay valid and unchanged
 * until fk_store_commit returns (fk_batch_append_copy copies).
 */
FK_API int fk_batch_append(struct fk_batch *b, uint32_t table, const void *row,
			   uint64_t *rowno);
/* As fk_batch_append, but copies @row_bytes bytes now; the commit fails
 * with -EINVAL if @row_bytes is not the table's row size. */
FK_API int fk_batch_append_copy(struct fk_batch *b, uint32_t table,
				const void *row, uint32_t row_bytes,
				uint64_t *rowno);

/*
 * fk_store_commit - commit batch @b atomically: pin and lock its pages
 * in (table, block) order, insert ONE WAL record holding every change
 * (plus full-page images of pages changed for the first time since the
 * last checkpoint's redo point), apply the changes to the buffered
 * pages, and wait until the record is durable.  Group commit: one
 * fdatasync (wal_sync_method) makes every record inserted before it
 * durable, so concurrent committers share syncs (PostgreSQL's
 * XLogFlush).  An empty batch returns 0 at once.
 * @lsn (may be NULL) receives the WAL position just past the record.
 * Returns 0 once durable, or, with nothing applied: -ENOENT (no such
 * table), -ERANGE (set/add row >= rows), -EINVAL (offset/length outside
 * the row, append of the wrong size), -E2BIG (record larger than half
 * the WAL buffer or a WAL segment), -ENOMEM, -ENOBUFS, -FK_ECORRUPT (a
 * page failed its check when read in), -ENOSPC or another -errno from
 * creating a WAL segment, -FK_ESTOPPED; or, applied in memory but NOT
 * durable and never acknowledged: the WAL write/sync error that stopped
 * the store (e.g. -EIO; recovery decides whether it survived).  Blocks
 * (page reads, lock waits, the WAL sync).  The batch is not changed
 * except for append row numbers; reuse it after fk_batch_reset.
 */
FK_API int fk_store_commit(struct fk_store *s, struct fk_batch *b,
			   uint64_t *lsn);

/*
 * fk_store_checkpoint - request an immediate (unpaced) checkpoint and
 * wait for one that started after the request to finish.  Returns 0,
 * -FK_ESTOPPED, or the checkpoint's error (a data-file fsync failure
 * stops the store; -ENOSPC does not: the redo pointer stays and the
 * next checkpoint tries again; -ENOENT/-ESTALE: a segment was removed
 * or renamed from outside, the store stops).  Blocks; does I/O (in the
 * checkpointer thread).
 */
FK_API int fk_store_checkpoint(struct fk_store *s);

/* Counters since fk_store_open (cumulative) and positions now. */
struct fk_store_stats {
	uint64_t commits;
	uint64_t wal_bytes;	     /* inserted, bytes */
	uint64_t wal_flushes;	     /* fdatasync/fsync of WAL */
	uint64_t wal_fpi;	     /* full-page images logged */
	uint64_t wal_fpi_bytes;	     /* WAL bytes those images take,
				      * their headers included: 8200
				      * each with wal_compression off;
				      * 16 + the stored bytes (padded
				      * to 8) each with lz4 or zstd */
	uint64_t checkpoints;	     /* completed */
	uint64_t buffers_checkpoint; /* written by the checkpointer */
	uint64_t buffers_backend;    /* written on eviction by backends */
	uint64_t backend_fsyncs;     /* queue full, compaction freed nothing */
	uint64_t fsyncq_compactions;
	uint64_t recovery_ms;	   /* last open's recovery time */
	uint64_t recovery_records; /* COMMIT records replayed */
	uint64_t insert_lsn, flush_lsn, redo_lsn; /* WAL bytes */
	int error;				  /* sticky error, 0 if none */
	uint64_t wal_write_ns; /* time in WAL write() calls */
	uint64_t wal_sync_ns;  /* time in WAL fdatasync/fsync */
	/* How the checkpoints' sync phase issues its fsyncs, fixed at
	 * fk_store_open (fk_store_opts.sync_io and sync_jobs resolved on
	 * this machine): */
	int sync_io;	    /* enum fk_sync_io: FK_SYNC_IO_URING,
			     * _THREADS or _SEQUENTIAL (never
			     * AUTO); fk_sync_io_name names it */
	uint32_t sync_jobs; /* fsyncs in flight at most: 1 for
			     * SEQUENTIAL, else the queue depth */
};

/* fk_store_get_stats - fill @st.  Thread-safe; no I/O; never fails. */
FK_API void fk_store_get_stats(struct fk_store *s, struct fk_store_stats *st);

/*
 * fk_store_get_fsyncq_stats - the store's fsync request queue (the
 * queue the backends' page writes register their fsync requests in, and
 * the checkpointer absorbs): its counters and its fill now (@st->queued
 * of fk_store_opts.fsyncq_capacity, which defaults to the number of
 * buffers).  For watching the queue fill over a run, as the seed of
 * flushkit reproduce 002 (Greg Smith's spread-sync runs) did with
 * backend fsync counts.
 * @s:  an open store.
 * @st: filled (caller-owned).
 * Thread-safe; no I/O; never fails.  Since FLUSHKIT_0.2.
 */
FK_API void fk_store_get_fsyncq_stats(struct fk_store *s,
				      struct fk_fsyncq_stats *st);

/*
 * fk_store_checkpoint_started_ns - whether a checkpoint is running, and
 * since when: for a benchmark that marks the seconds its checkpoints
 * covered (bench tpcb's progress lines and its stall ratio during and
 * outside checkpoints) while one is still in progress (a finished one
 * is reported to fk_store_opts.on_checkpoint with its start_ns and
 * end_ns).
 * @s: an open store.
 * Returns the start (fk_now_ns clock, nanoseconds) of the checkpoint
 * running now - the checkpointer's, a requested one, the shutdown
 * checkpoint of fk_store_close - or 0 if none runs.  A checkpoint is
 * "running" from the redo point through its on_checkpoint callback, so
 * a caller that records finished ones there never sees a gap.  Never
 * fails; no I/O; does not block.  Thread-safe (an atomic load).
 * Since FLUSHKIT_0.2.
 */
FK_API uint64_t fk_store_checkpoint_started_ns(struct fk_store *s);

#endif /* FLUSHKIT_STORE_H */
