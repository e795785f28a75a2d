/* SPDX-License-Identifier: MIT */
/*
 * flushkit.h - the public interface of libflushkit.
 *
 * libflushkit packages the writeback and fsync techniques that made
 * PostgreSQL's checkpoints smooth (sorted checkpoint writes, early
 * writeback with sync_file_range(2), fsync request queue compaction,
 * spread checkpoints) for any program, plus durable tree sync and copy
 * and an embeddable crash-safe page store that uses all of them.
 *
 * Conventions (as in liburing):
 *  - every function returns 0 (or a count) on success and a negative
 *    errno value on failure; errno itself is never the channel;
 *  - offsets and lengths are uint64_t bytes, times are integers whose
 *    name carries the unit (_ns, _us, _ms);
 *  - structs are caller-allocated with _init/_release, or opaque with
 *    _create/_destroy (or _open/_close);
 *  - the library never prints; diagnostics go to caller callbacks;
 *  - every enum of values has fk_X_name (value -> static string,
 *    "unknown" for others) and fk_X_parse (exact name -> value, or
 *    -EINVAL), declared beside it: the one spelling the command, its
 *    JSON and the result files use;
 *  - fsync errors are sticky: once a flush of a file failed, every later
 *    report for it fails too, and nothing is retried into success.
 *
 * Sections, in layer order:
 *   1. errors and versions
 *   2. probe            (what a file system supports)
 *   3. writeback        (struct fk_writeback: early writeback hints)
 *   4. fsync queue      (struct fk_fsyncq: fsync requests with compaction)
 *   5. pacer            (struct fk_pacer: spreading work over time)
 *   6. stats            (struct fk_hist: latency histograms; mean, stddev
 *                        and the two-standard-error comparison)
 *      monitor          (Dirty/Writeback and block-layer counters)
 *   6b. batched fsync   (fk_fsync_many: io_uring, thread pool, sequential)
 *   7. tree sync and copy
 *   8. page store       (struct fk_store)
 *   9. clock            (fk_now_ns)
 *
 * Building against it: pkg-config --cflags --libs flushkit (add
 * --static for libflushkit.a), or CMake find_package(flushkit) and the
 * target flushkit::flushkit.  The exported symbol set is the linker
 * version script src/libflushkit.map; the SONAME policy is in
 * libflushkit(3) (docs/libflushkit.md).
 */
#ifndef FLUSHKIT_H
#define FLUSHKIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(FK_BUILDING_LIBRARY)
#define FK_API __attribute__((visibility("default")))
#else
#define FK_API
#endif

/* ===================================================================
 * 1. Errors and versions
 * =================================================================== */

/* SECTION errors */

/*
 * flushkit's own error codes, returned negated like errno values.  They
 * start well above any errno value.
 */
enum fk_error {
	/* The operation completed but durability is degraded: a directory
	 * could not be fsynced (EINVAL/ENOTSUP from CIFS, some FUSE), or a
	 * file could not (EINVAL: procfs, sysfs "do not support
	 * synchronization"). */
	FK_EDEGRADED = 10001,
	/* A page or WAL record failed its CRC-32C check, or a file the
	 * store needs (control file, table segment) is missing. */
	FK_ECORRUPT = 10002,
	/* The store was stopped by an earlier, sticky error. */
	FK_ESTOPPED = 10003,
};

/*
 * fk_strerror - describe an error code.
 * @err: a negative errno value or -FK_E* code (the sign is ignored).
 * Returns a static string; never NULL.  Thread-safe.  No I/O.
 */
FK_API const char *fk_strerror(int err);

/*
 * Compile-time version of this header.  fk_version() returns the same
 * numbers for the library actually loaded, so a program can compare the
 * two (the library may be newer than the header it was built with, never
 * older within one SONAME).  The build (CMakeLists.txt) reads the
 * version from these three lines: they are its one source.
 */
#define FK_VERSION_MAJOR 0
#define FK_VERSION_MINOR 1
#define FK_VERSION_PATCH 0
#define FK_VERSION_STR_(x) #x
#define FK_VERSION_STR(x) FK_VERSION_STR_(x)
#define FK_VERSION_STRING                                                      \
	FK_VERSION_STR(FK_VERSION_MAJOR)                                       \
	"." FK_VERSION_STR(FK_VERSION_MINOR) "." FK_VERSION_STR(               \
	    FK_VERSION_PATCH)
/* FK_VERSION_NUMBER, e.g. 0x000100 for 0.1.0: for #if comparisons. */
#define FK_VERSION_NUMBER                                                      \
	((FK_VERSION_MAJOR << 16) | (FK_VERSION_MINOR << 8) | FK_VERSION_PATCH)

/*
 * fk_version - the version of the library loaded at run time, as
 * "MAJOR.MINOR.PATCH" (FK_VERSION_STRING of the header it was built
 * from).  Returns a static string; never NULL.  No I/O.  Thread-safe.
 */
FK_API const char *fk_version(void);

/* ===================================================================
 * 2. Probe
 * =================================================================== */

/* SECTION probe */
/* What sync_file_range(2) does on a file system. */
enum fk_sfr_support {
	FK_SFR_WORKS = 0,	/* starts writeback as documented */
	FK_SFR_NOOP = 1,	/* accepted but known to do nothing (ZFS) */
	FK_SFR_UNSUPPORTED = 2, /* ENOSYS, EINVAL or ESPIPE */
};

/*
 * fk_sfr_support_name - the name of an enum fk_sfr_support value: "works",
 * "noop" or "unsupported".
 * @support: an enum fk_sfr_support value.
 * Return: a static string (never freed); "unknown" for any other
 * value.  Never NULL.
 *
 * fk_sfr_support_parse - the inverse: the value a name stands for.
 * @name: a NUL-terminated name as above, matched exactly (case and
 *      all); may be NULL.  Borrowed for the call.
 * Return: the enum fk_sfr_support value (>= 0), or
 *   -EINVAL  @name is NULL or is not one of the names.
 *
 * No I/O, no allocation; thread-safe (constant tables only).
 */
FK_API const char *fk_sfr_support_name(int support);
FK_API int fk_sfr_support_parse(const char *name);

/*
 * fk_probe_sync_file_range - does sync_file_range(2) work for this file?
 * @fd: an open descriptor of a regular file on the file system to probe
 *      (any descriptor type is accepted: a pipe or socket answers
 *      FK_SFR_UNSUPPORTED).  Not closed; the caller keeps ownership.
 *
 * Returns an enum fk_sfr_support value (>= 0):
 *   FK_SFR_WORKS        the call is accepted; hints start writeback;
 *   FK_SFR_NOOP         fstatfs(2) names a file system where the call is
 *                       accepted but does nothing: ZFS (f_type
 *                       0x2fc12fc2), whose writes go through the ARC;
 *   FK_SFR_UNSUPPORTED  the call failed with ENOSYS (kernel without it;
 *                       then every file system is unsupported), EINVAL
 *                       or ESPIPE (file system or descriptor type).
 * or a negative errno value:
 *   -EBADF etc.         fstat(2) or fstatfs(2) of @fd failed;
 *   -EIO etc.           the probing call itself failed for another
 *                       reason; nothing is cached, a later call probes
 *                       again.
 *
 * The answer is cached per file system (st_dev) for the life of the
 * process; struct fk_writeback feeds the same cache from its real
 * calls.  Blocking and I/O: fstat, and on the first call for a file
 * system fstatfs and one sync_file_range(fd, st_size, 1,
 * SYNC_FILE_RANGE_WRITE): one byte at end of file, where no page is
 * dirty, so it starts no writeback (a length of 0 would mean "to end of
 * file").  Thread-safe (the cache has a mutex, never held across a
 * system call).  The same distinctions as PostgreSQL's pg_flush_data()
 * (src/backend/storage/file/fd.c); Linux sync_file_range(2).
 */
FK_API int fk_probe_sync_file_range(int fd);

/* ===================================================================
 * 3. Writeback
 * =================================================================== */

/* SECTION writeback */
/* One range of a file that was written and may be pending writeback. */
struct fk_writeback_range {
	int fd;
	uint64_t offset; /* bytes */
	uint64_t length; /* bytes */
};

/*
 * struct fk_writeback - early writeback of written ranges.
 *
 * Collects (fd, offset, length) ranges as a program writes them; once
 * flush_after_bytes are pending it sorts them by (fd, offset), merges
 * adjacent or overlapping ranges and asks the kernel to start writing
 * them back with sync_file_range(SYNC_FILE_RANGE_WRITE), falling back
 * to posix_fadvise(POSIX_FADV_DONTNEED) where that is unsupported.
 * From PostgreSQL's WritebackContext / IssuePendingWritebacks
 * (src/backend/storage/buffer/bufmgr.c, 9.6) and pg_flush_data
 * (src/backend/storage/file/fd.c).
 *
 * Per file system (from the fk_probe_sync_file_range cache; an unknown
 * file system is tried with its first real range and the outcome
 * cached):
 *   FK_SFR_WORKS        sync_file_range(fd, off, len, SYNC_FILE_RANGE_WRITE)
 *                       per merged range;
 *   FK_SFR_UNSUPPORTED  posix_fadvise(fd, off, len, POSIX_FADV_DONTNEED)
 *                       per merged range: Linux starts writeback of the
 *                       range and then drops its clean pages from the
 *                       page cache (so a program that rereads the data
 *                       pays for it; use it where data is written once);
 *   FK_SFR_NOOP         nothing at all (ZFS: neither call helps there);
 *                       the ranges are counted in ranges_skipped.
 *
 * A hint, never a durability promise: by default the WAIT flags of
 * sync_file_range are never used, because they consume a pending
 * writeback error and a later fsync on the descriptor would return 0.
 * Durability is only ever established by fsync/fdatasync.  An error
 * other than "unsupported" (EIO, EBADF, ...) is kept in first_error
 * (sticky, the first one) and returned by the call that issued the
 * range; treat it as a warning of what the file's fsync will report,
 * never as a replacement for that fsync.
 *
 * Waiting hints (@wait set after fk_writeback_init, which sets
 * FK_WRITEBACK_WAIT_NONE), for reproducing the old kernels' behaviour
 * (flushkit reproduce 000); not for use:
 *   FK_WRITEBACK_WAIT_BEFORE  sync_file_range(SYNC_FILE_RANGE_WAIT_BEFORE
 *        | SYNC_FILE_RANGE_WRITE): first wait for the range's pages
 *        already under writeback, then start writeback of the rest and
 *        return without waiting for it.  This is what the call did
 *        before Linux 4.4 (commit "fs: Make sync_file_range(2) use
 *        WB_SYNC_NONE writeback", seed 000): its writeback was
 *        WB_SYNC_ALL, whose pass waits on every page it meets under
 *        writeback (and on page locks) before submitting, and the call
 *        did not wait for its own writes.
 *   FK_WRITEBACK_WAIT_ALL  WAIT_BEFORE | WRITE | WAIT_AFTER: also wait
 *        until the range's own writeback has completed, so every hint
 *        is a synchronous write of its range (a different experiment
 *        from the seed's: no kernel made the plain call do that).
 * Both block for the device's time, and both waits CONSUME the
 * descriptor's pending writeback error: the fsync after them may return
 * 0 for data that never reached the disk.  So with @wait, first_error
 * (or a call's error return) IS that file's fsync error, and the caller
 * must fail as if its fsync had failed (the store's checkpointer does).
 * The DONTNEED fallback and the no-op file systems are as without @wait
 * (the fallback does not wait).
 *
 * Memory: at most 4096 ranges are held; when the array fills they are
 * merged, and issued early if merging did not free half of it.
 *
 * Not thread-safe: one struct per thread, or lock around it.  The
 * struct is caller-allocated; fk_writeback_init/_release own @ranges.
 * The descriptors stay the caller's: call fk_writeback_issue_fd or
 * fk_writeback_forget before closing one.
 */
/* How a writeback hint waits (struct fk_writeback's @wait, the store's
 * checkpoint_flush_wait); see above. */
enum fk_writeback_wait {
	FK_WRITEBACK_WAIT_NONE = 0,   /* SYNC_FILE_RANGE_WRITE only */
	FK_WRITEBACK_WAIT_ALL = 1,    /* WAIT_BEFORE | WRITE | WAIT_AFTER */
	FK_WRITEBACK_WAIT_BEFORE = 2, /* WAIT_BEFORE | WRITE (pre-4.4) */
};

struct fk_writeback {
	uint64_t flush_after_bytes;	   /* 0 disables hints */
	struct fk_writeback_range *ranges; /* private */
	size_t nr_ranges, alloc_ranges;
	uint64_t pending_bytes; /* sum of pending range lengths */
	/* counters, cumulative */
	uint64_t ranges_issued;	 /* merged ranges the kernel accepted */
	uint64_t bytes_issued;	 /* bytes in those ranges */
	uint64_t calls_sfr;	 /* sync_file_range calls */
	uint64_t calls_fadvise;	 /* posix_fadvise fallback calls */
	int first_error;	 /* first unexpected -errno, sticky */
	uint64_t ranges_noted;	 /* fk_writeback_note calls kept */
	uint64_t bytes_noted;	 /* bytes in those */
	uint64_t ranges_skipped; /* merged ranges not issued: no-op
				  * file system, or the call failed */
	int wait; /* enum fk_writeback_wait (see above); set after init */
};

/* Default threshold: 256 KiB, as PostgreSQL's checkpoint_flush_after. */
#define FK_WRITEBACK_DEFAULT_FLUSH_AFTER (256u * 1024u)

/*
 * fk_writeback_init - set up @wb with no pending ranges and zero
 * counters.
 * @flush_after_bytes: issue once this many bytes are pending; 0
 *      disables hints (fk_writeback_note then keeps nothing);
 *      FK_WRITEBACK_DEFAULT_FLUSH_AFTER is PostgreSQL's default.
 * Cannot fail; allocates nothing until the first note.  No I/O.
 */
FK_API void fk_writeback_init(struct fk_writeback *wb,
			      uint64_t flush_after_bytes);

/*
 * fk_writeback_release - free the range array.  Pending ranges are
 * dropped, not issued (call fk_writeback_issue first to issue them).
 * Counters stay readable.  No I/O.
 */
FK_API void fk_writeback_release(struct fk_writeback *wb);

/*
 * fk_writeback_note - note that @length bytes at @offset of @fd were
 * written; once pending_bytes >= flush_after_bytes, issue every pending
 * range (as fk_writeback_issue).
 * @fd: descriptor the caller keeps open until the range is issued or
 *      forgotten.  @offset, @length: bytes; length 0 is ignored.
 * Returns 0, or:
 *   -EBADF   @fd < 0;
 *   -EINVAL  offset + length beyond INT64_MAX (does not fit off_t);
 *   -ENOMEM  the range array could not grow (the range is not noted);
 *   -errno   an unexpected error of a call this note issued (see
 *            first_error; the ranges were issued and are gone, and the
 *            new range was noted all the same).
 * Does I/O (non-blocking hints) only when it issues.  Not thread-safe.
 */
FK_API int fk_writeback_note(struct fk_writeback *wb, int fd, uint64_t offset,
			     uint64_t length);

/*
 * fk_writeback_issue - sort pending ranges by (fd, offset), merge
 * adjacent and overlapping ones of the same descriptor, and issue each
 * merged range once (see struct fk_writeback for which call).  The
 * pending set is empty afterwards whatever the calls returned: hints
 * are never retried.
 * Returns 0 or the first unexpected -errno of this issue (also kept in
 * first_error); "unsupported" answers are not errors.  Does I/O:
 * sync_file_range with SYNC_FILE_RANGE_WRITE queues writeback and
 * normally returns at once, but may block briefly when the device's
 * request queue is full.  Not thread-safe.
 */
FK_API int fk_writeback_issue(struct fk_writeback *wb);

/*
 * fk_writeback_issue_fd - issue the pending ranges of @fd only (sorted
 * and merged) and drop them; other descriptors' ranges stay pending.
 * Use before closing @fd.  Returns as fk_writeback_issue (0 if @fd has
 * nothing pending).  Not thread-safe.
 */
FK_API int fk_writeback_issue_fd(struct fk_writeback *wb, int fd);

/*
 * fk_writeback_forget - drop the pending ranges of @fd without issuing
 * them (call before closing @fd when the hint no longer matters, e.g.
 * the file was fsynced or unlinked).  No I/O.  Not thread-safe.
 */
FK_API void fk_writeback_forget(struct fk_writeback *wb, int fd);

/* ===================================================================
 * 4. Fsync request queue
 * =================================================================== */

/* SECTION fsyncq */
/*
 * struct fk_fsyncq - the fsync request queue (opaque).
 *
 * "This file must be fsynced before the next checkpoint completes."
 * Writers (backends) register requests by a caller-chosen 64-bit file
 * id; the checkpointer absorbs them into its pending set, and at its
 * sync phase fsyncs each distinct file once.  When the queue is full, a
 * writer first compacts it (drops duplicate requests, PostgreSQL's
 * CompactCheckpointerRequestQueue, 2010); if that frees nothing the
 * writer is told to fsync the file itself (a "backend fsync").
 * From PostgreSQL's checkpointer.c (ForwardSyncRequest) and sync.c
 * (RememberSyncRequest, ProcessSyncRequests, FORGET_RELATION_FSYNC).
 *
 * Life of an id: registered (queued) -> absorbed (pending, distinct) ->
 * synced by fk_fsyncq_process (gone), or failed (stays pending, and the
 * queue's error becomes sticky: see fk_fsyncq_process).
 *
 * Files that go away: the owner that unlinks (or truncates away, or
 * renames out of use) a file calls fk_fsyncq_forget for its id BEFORE
 * doing so (PostgreSQL's register_forget_request in mdunlinkfork).
 * Forget is synchronous, so no sync of that id can then meet the
 * missing file.  A sync that says -ENOENT for an id nobody forgot met a
 * deletion from outside: the data it was to make durable is gone, and
 * it is reported as a failure (sticky), never counted as synced.  The
 * queue keeps no descriptors: whether a renamed file is still synced
 * (a descriptor kept open follows the inode; a reopen by path does
 * not) is the sync callback's choice.
 *
 * Thread-safety: every function may be called from any thread; one
 * mutex protects the queue and is never held while a callback runs.
 * Memory: the queue array (capacity ids) is allocated at create; the
 * pending set grows with the number of distinct files.
 */
struct fk_fsyncq;

struct fk_fsyncq_stats {
	uint64_t registered;	 /* requests accepted */
	uint64_t compactions;	 /* compaction passes */
	uint64_t compacted;	 /* duplicate requests dropped */
	uint64_t full;		 /* register calls that found it full */
	uint64_t backend_fsyncs; /* -EAGAIN returned to writers */
	uint64_t forgotten;	 /* requests cancelled by forget */
	uint64_t absorbed;	 /* requests moved to the pending set */
	uint64_t synced;	 /* files fsynced by process */
	uint64_t missing;	 /* forgotten in flight, sync said
				  * -ENOENT (moot, not an error) */
	uint64_t queued;	 /* now: requests in the queue */
	uint64_t pending;	 /* now: distinct pending files */
	int error;		 /* the sticky error, 0 if none */
};

/*
 * Callback that makes one file durable (typically open + fsync, or an
 * fsync of a descriptor the caller kept open).  @arg is the @arg given
 * to fk_fsyncq_process; @file_id the id given to register.  Returns 0
 * when the file is durable, else the failure as -errno: recorded as the
 * queue's sticky error and never retried.  -ENOENT (the file no longer
 * exists) is a failure like any other unless the id was forgotten
 * while its sync ran (then every result is ignored; -ENOENT counts in
 * stats.missing).  Called without the queue's lock held, so it may
 * call fk_fsyncq_register/_forget/_absorb (not _process).
 */
typedef int (*fk_fsyncq_sync_fn)(void *arg, uint64_t file_id);

/*
 * fk_fsyncq_create - make an empty queue.
 * @capacity: requests the queue holds before a writer must compact it
 *      (>= 1; PostgreSQL uses NBuffers).
 * @compact: nonzero to compact a full queue (PostgreSQL since 9.1); 0
 *      makes every register on a full queue a backend fsync (the
 *      behaviour before 2010, the "naive" preset).
 * @out: receives the queue, owned by the caller (fk_fsyncq_destroy).
 * Returns 0, -EINVAL (capacity 0 or @out NULL) or -ENOMEM.  No I/O.
 */
FK_API int fk_fsyncq_create(uint32_t capacity, int compact,
			    struct fk_fsyncq **out);

/* fk_fsyncq_destroy - free @q (NULL is ignored) and forget every
 * request.  No other thread may be using @q.  No I/O. */
FK_API void fk_fsyncq_destroy(struct fk_fsyncq *q);

/*
 * fk_fsyncq_register - ask for @file_id to be fsynced by the next
 * fk_fsyncq_process.  Call after the write it must cover has returned.
 * Returns 0 (queued), or -EAGAIN when the queue was full and compaction
 * freed nothing (or is disabled): the caller must then fsync the file
 * itself before relying on it, and stats.backend_fsyncs counts it.
 * Compaction sorts the queue and drops duplicate ids, O(capacity log
 * capacity) under the mutex.  Non-blocking apart from the mutex; no
 * I/O.  Thread-safe.
 */
FK_API int fk_fsyncq_register(struct fk_fsyncq *q, uint64_t file_id);

/*
 * fk_fsyncq_forget - cancel every queued and pending request for
 * @file_id (the file was unlinked or truncated away, so its fsync no
 * longer matters and may even fail); PostgreSQL's
 * FORGET_RELATION_FSYNC.  If the id's sync is running in
 * fk_fsyncq_process right now, its result is ignored.  Requests
 * registered after forget returns count again.  Each cancelled request
 * counts in stats.forgotten.  No I/O.  Thread-safe.
 */
FK_API void fk_fsyncq_forget(struct fk_fsyncq *q, uint64_t file_id);

/*
 * fk_fsyncq_absorb - move the queued requests into the pending set
 * (checkpointer side; PostgreSQL's AbsorbSyncRequests), which keeps
 * each id once.  Call it now and then during long work so writers do
 * not find the queue full.  Returns the number of distinct pending
 * files (capped at INT_MAX), or -ENOMEM (the requests stay queued).
 * No I/O.  Thread-safe.
 */
FK_API int fk_fsyncq_absorb(struct fk_fsyncq *q);

/* fk_fsyncq_pending - number of distinct files in the pending set
 * (queued requests are not counted until absorbed).  Thread-safe. */
FK_API size_t fk_fsyncq_pending(struct fk_fsyncq *q);

/*
 * fk_fsyncq_process - the sync phase: absorb, then call @sync(@arg, id)
 * once for every pending file, in increasing file-id order, removing
 * each from the pending set as it succeeds.
 * @between: if non-NULL, called between two files (not after the last)
 *      with the fraction of this round done (0..1), e.g. to sleep as
 *      fk_pacer_delay_ns says (a spread sync phase); a nonzero return
 *      stops the round, leaving the rest pending.  @between_arg is
 *      passed to it.
 * Requests absorbed while the round runs (by @sync, @between or another
 * thread) wait for the next round; one for the file being synced at
 * that moment keeps that file pending after its sync succeeds.
 *
 * Returns 0, or:
 *   -errno    the first failure of @sync.  The round stops there; that
 *             file and the rest stay pending.  The error is STICKY:
 *             every later call returns it at once without calling @sync
 *             (stats.error shows it).  The caller must treat it as fatal
 *             for the data behind the queue: after a failed fsync Linux
 *             may have dropped the dirty pages and marked them clean, so
 *             a retried fsync can succeed without the data being on disk
 *             (PostgreSQL's "fsyncgate", 2018, and data_sync_retry=off:
 *             PANIC and recover from the WAL instead).
 *   -EBUSY    another fk_fsyncq_process is running on @q.
 *   -ENOMEM   absorbing failed; nothing was synced.
 *   -EINVAL   @sync is NULL.
 * Blocks for as long as the callbacks do; does no I/O itself.
 * Thread-safe, but one process call at a time (-EBUSY otherwise).
 */
FK_API int fk_fsyncq_process(struct fk_fsyncq *q, fk_fsyncq_sync_fn sync,
			     void *arg, int (*between)(void *arg, double done),
			     void *between_arg);

/*
 * A round in batches, for a caller that keeps many fsyncs in flight
 * (e.g. through fk_fsync_batch_run): fk_fsyncq_begin, then repeatedly
 * fk_fsyncq_take some pending ids, sync them (concurrently, as the
 * caller likes), fk_fsyncq_complete them with their results; then
 * fk_fsyncq_end.  fk_fsyncq_process is such a round, one id at a time,
 * and the semantics are the same: each pending file is taken once per
 * round, in increasing id order; requests absorbed during the round
 * wait for the next one, also for a file in flight (it stays pending
 * after its sync succeeds); a file forgotten while in flight has its
 * result ignored; the first failure is sticky and never retried.
 *
 * fk_fsyncq_begin - absorb and start a round.  Returns the number of
 *      files in the round (capped at INT_MAX), or the sticky error,
 *      -EBUSY (a round, or fk_fsyncq_process, is running on @q) or
 *      -ENOMEM (absorbing failed; no round started).
 * fk_fsyncq_take - copy up to @max of the round's ids not taken yet
 *      into @file_ids (caller-owned, @max long), in increasing order,
 *      and mark them in flight.  Returns how many (0: none left), or
 *      the sticky error (once any file failed, nothing more is
 *      handed out), -EINVAL (no round started, or @file_ids NULL with
 *      @max > 0) or -ENOMEM (nothing taken).
 * fk_fsyncq_complete - the results of @n in-flight ids: @results[i]
 *      (0, or the sync's -errno) for @file_ids[i].  Success removes
 *      the file from the pending set (stats.synced); any error,
 *      -ENOENT included, leaves it pending and becomes the queue's
 *      sticky error if it has none.  The result of an id forgotten
 *      while in flight is ignored.  Returns the first failure in @results
 *      (in array order), else -EINVAL if an id was not in flight (it
 *      is skipped), else 0.
 * fk_fsyncq_end - end the round; ids taken but not completed stay
 *      pending (as if never synced).  Call it also after a failure.
 * None does I/O; each takes the queue's mutex briefly.  Thread-safe,
 * but a round belongs to one caller: one round at a time per queue.
 */
FK_API int fk_fsyncq_begin(struct fk_fsyncq *q);
FK_API long fk_fsyncq_take(struct fk_fsyncq *q, uint64_t *file_ids, size_t max);
FK_API int fk_fsyncq_complete(struct fk_fsyncq *q, const uint64_t *file_ids,
			      const int *results, size_t n);
FK_API void fk_fsyncq_end(struct fk_fsyncq *q);

/* fk_fsyncq_get_stats - copy the counters (cumulative) and current sizes
 * into @st.  Thread-safe; no I/O. */
FK_API void fk_fsyncq_get_stats(struct fk_fsyncq *q,
				struct fk_fsyncq_stats *st);

/* ===================================================================
 * 5. Pacer
 * =================================================================== */

/* SECTION pacer */
/*
 * struct fk_pacer - is a job with a deadline ahead of schedule?
 *
 * A job (a checkpoint's write phase, a spread sync phase, a rate-limited
 * copy) must finish a unit of work within @budget_ns and, optionally,
 * before @wal_budget more bytes of WAL are written.  After each step the
 * caller reports its progress fraction; the pacer says how long to sleep
 * so that progress tracks elapsed time and WAL.  From PostgreSQL's
 * IsCheckpointOnSchedule and CheckpointWriteDelay (checkpointer.c, the
 * spread checkpoints of 8.3).  To pace as PostgreSQL does, pass
 * budget_ns = checkpoint_completion_target x checkpoint interval and
 * wal_budget = checkpoint_completion_target x the WAL volume that
 * triggers the next checkpoint.
 *
 * Caller-allocated; no resources, so no _release.  The functions only
 * read CLOCK_MONOTONIC (fk_pacer_sleep also sleeps); no I/O.  Not
 * thread-safe: one pacer per job (the const functions may be called
 * from several threads at once).
 */
struct fk_pacer {
	uint64_t start_ns, budget_ns;	/* CLOCK_MONOTONIC ns, ns */
	uint64_t wal_start, wal_budget; /* bytes; wal_budget 0 = ignore */
	uint64_t slept_ns;		/* total slept in fk_pacer_sleep */
};

/*
 * fk_pacer_start - start a job now.
 * @budget_ns: time the whole job should take, ns; 0 means "no time":
 *      never ahead of schedule until progress reaches 1.
 * @wal_now: the WAL position now, bytes (any monotonic byte counter).
 * @wal_budget: WAL bytes the job may span; 0 ignores WAL.
 * Resets slept_ns.  Cannot fail.
 */
FK_API void fk_pacer_start(struct fk_pacer *p, uint64_t budget_ns,
			   uint64_t wal_now, uint64_t wal_budget);

/*
 * fk_pacer_on_schedule - is the job ahead of schedule?
 * @progress: fraction of the work done, 0..1 (clamped; NaN counts as 0).
 * @wal_now: the WAL position now, bytes (ignored if wal_budget is 0).
 * Returns 1 if @progress >= the fraction of budget_ns elapsed AND
 * >= the fraction of wal_budget written since start, else 0.
 */
FK_API int fk_pacer_on_schedule(const struct fk_pacer *p, double progress,
				uint64_t wal_now);

/*
 * fk_pacer_delay_ns - how long to sleep now so that progress does not
 * run ahead of time.
 * @progress, @wal_now: as for fk_pacer_on_schedule.
 * @max_sleep_ns: cap on the result, ns (e.g. 100 ms, so the caller can
 *      absorb fsync requests or notice shutdown between naps).
 * Returns, in ns, the time until the elapsed fraction of budget_ns
 * equals @progress, at most @max_sleep_ns; 0 when behind schedule by
 * time or by WAL (if WAL is ahead of progress, sleeping would only make
 * the job later).  Does not sleep.
 */
FK_API uint64_t fk_pacer_delay_ns(const struct fk_pacer *p, double progress,
				  uint64_t wal_now, uint64_t max_sleep_ns);

/*
 * fk_pacer_sleep - sleep for fk_pacer_delay_ns(...) (resumed after
 * signals) and add it to slept_ns.  Returns the ns slept (0 if behind).
 * Blocks.  Callers that must wake early (shutdown, a checkpoint
 * request) should wait on their own condition variable for
 * fk_pacer_delay_ns instead.
 */
FK_API uint64_t fk_pacer_sleep(struct fk_pacer *p, double progress,
			       uint64_t wal_now, uint64_t max_sleep_ns);

/* ===================================================================
 * 6. Stats
 * =================================================================== */

/* SECTION stats */
/*
 * struct fk_hist - latency histogram with bounded relative error
 * (log-linear buckets, as HdrHistogram): percentiles without storing
 * every sample.  Values are microseconds.  Values below 128 us are
 * exact; above, each power-of-two range is split into 64 buckets, so a
 * percentile is at most 1/64 (1.6%) above the true value and never
 * below it.  Values up to 2^36 us (19 hours) are resolved; larger ones
 * share the last bucket.  count, min_us, max_us, sum and sumsq are
 * exact (sum and sumsq as doubles), so mean, stddev, min and max are
 * exact.  About 16 KiB of buckets per histogram.
 *
 * Caller-allocated; fk_hist_init allocates the buckets, which
 * fk_hist_release frees.  Not thread-safe: one per thread, then
 * fk_hist_merge.  No I/O anywhere.
 */
struct fk_hist {
	uint64_t *buckets; /* private */
	uint32_t nr_buckets;
	uint64_t count;		 /* samples */
	uint64_t min_us, max_us; /* exact; 0 when empty */
	double sum, sumsq;	 /* of the values, us and us^2 */
};

/* fk_hist_init - an empty histogram.  Returns 0 or -ENOMEM. */
FK_API int fk_hist_init(struct fk_hist *h);
/* fk_hist_release - free the buckets (counters stay readable). */
FK_API void fk_hist_release(struct fk_hist *h);
/* fk_hist_reset - empty the histogram, keeping its buckets. */
FK_API void fk_hist_reset(struct fk_hist *h);
/* fk_hist_add - record one sample of @value_us microseconds.  O(1). */
FK_API void fk_hist_add(struct fk_hist *h, uint64_t value_us);
/* fk_hist_merge - add every sample of @src to @dst (@src unchanged):
 * the result is what one histogram fed with both would hold. */
FK_API void fk_hist_merge(struct fk_hist *dst, const struct fk_hist *src);
/*
 * fk_hist_percentile - the value at percentile @pct.
 * @pct: 0..100; 0 (or less, or NaN) gives min_us, 100 gives max_us.
 * Returns the smallest bucket bound with at least @pct% of the samples
 * at or below it (clamped to [min_us, max_us]): within +1.6% of the
 * exact percentile, never below it.  0 if the histogram is empty.
 * O(number of buckets).
 */
FK_API uint64_t fk_hist_percentile(const struct fk_hist *h, double pct);
/* fk_hist_mean - exact arithmetic mean, us; 0 if empty. */
FK_API double fk_hist_mean(const struct fk_hist *h);
/* fk_hist_stddev - exact population standard deviation, us (as
 * pgbench reports "latency stddev"); 0 if empty. */
FK_API double fk_hist_stddev(const struct fk_hist *h);

/* SECTION stats2 */
/*
 * Repeated runs and whether two sets of them differ by more than their
 * noise.  The rule of the sync(2) timing study (Linux, 2011) and of
 * pgbench-tools: a difference of the means counts only when it exceeds
 * two standard errors of the difference, 2*sqrt(sA^2/nA + sB^2/nB)
 * (Welch's standard error; about a 95% interval for normal data).
 * No I/O, no allocation; thread-safe (no shared state).
 */

/* The mean and spread of one side's runs. */
struct fk_stats_summary {
	uint64_t n;    /* values counted (finite ones only) */
	double mean;   /* arithmetic mean; 0 when n == 0 */
	double stddev; /* sample standard deviation (divides by
			* n - 1); 0 when n < 2 */
};

/* The verdict of fk_stats_compare (printable characters). */
enum fk_stats_marker {
	FK_STATS_HIGHER = '+',	/* B above A by more than the threshold */
	FK_STATS_LOWER = '-',	/* B below A by more than the threshold */
	FK_STATS_SAME = '0',	/* within the threshold: noise */
	FK_STATS_UNKNOWN = '?', /* a side has fewer than 2 runs: no
				 * standard deviation, no verdict */
};

/*
 * fk_stats_summarize - mean and sample standard deviation of @values.
 * @values: @nr values in any unit (borrowed); NaN and infinities are
 *      skipped (not counted in @out->n).  May be NULL when @nr is 0.
 * @out: filled.  Computed in one pass with Welford's update (Knuth,
 *      TAOCP vol. 2, 4.2.2), so values with a large common offset keep
 *      their precision.
 */
FK_API void fk_stats_summarize(const double *values, size_t nr,
			       struct fk_stats_summary *out);

/*
 * fk_stats_compare - does B differ from A by more than the noise?
 * @a, @b: the two sides (from fk_stats_summarize).
 * @threshold: if not NULL, set to 2*sqrt(sA^2/nA + sB^2/nB) (the
 *      units of the values), or NaN when the verdict is
 *      FK_STATS_UNKNOWN.
 * Returns FK_STATS_HIGHER if b->mean - a->mean > threshold,
 * FK_STATS_LOWER if a->mean - b->mean > threshold, FK_STATS_SAME
 * otherwise, and FK_STATS_UNKNOWN when a->n < 2 or b->n < 2 (one run
 * has no standard deviation).  Two sides without any spread and
 * different means compare as HIGHER/LOWER (threshold 0).
 */
FK_API int fk_stats_compare(const struct fk_stats_summary *a,
			    const struct fk_stats_summary *b,
			    double *threshold);

/* ===================================================================
 * Monitor
 * =================================================================== */

/* SECTION monitor */
/*
 * What the kernel is doing with dirty data, sampled from /proc and /sys:
 * the Dirty and Writeback lines of /proc/meminfo, the dirty thresholds of
 * /proc/vmstat, and /sys/block/DEV/stat of the disks under given paths
 * (the counts blktrace-era investigations of checkpoint stalls used).
 * The parsers take a buffer, the readers a file path (NULL for the live
 * file), so fixed sample files can be parsed in tests.  Every file is
 * read with openat/read/close through the syscall table.  No printing.
 * Field meanings: Documentation/filesystems/proc.rst and
 * Documentation/block/stat.rst of the Linux sources.
 */

/* From /proc/meminfo.  Values in KiB (the file's "kB" is KiB). */
struct fk_meminfo {
	uint64_t mem_total_kb;
	uint64_t mem_available_kb;
	uint64_t cached_kb;
	uint64_t dirty_kb;     /* dirty page cache, not yet written */
	uint64_t writeback_kb; /* being written back right now */
};

/* From /proc/vmstat.  Values in pages (sysconf(_SC_PAGESIZE) bytes). */
struct fk_vmstat {
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_dirty_threshold;		/* dirty pages that throttle
						 * writers (dirty_ratio) */
	uint64_t nr_dirty_background_threshold; /* where flusher threads
						 * start writeback */
};

/*
 * /sys/block/DEV/stat.  Kernels before 4.18 have 11 fields, 4.18 to 5.4
 * add 4 discard fields (15), 5.5 and later 2 flush fields (17); fields a
 * kernel does not have are 0 and @nr_fields says how many were read.
 * Sectors are 512 bytes whatever the device's sector size.
 */
struct fk_blkstat {
	uint64_t read_ios, read_merges, read_sectors, read_ticks_ms;
	uint64_t write_ios, write_merges, write_sectors, write_ticks_ms;
	uint64_t in_flight, io_ticks_ms, time_in_queue_ms;
	uint64_t discard_ios, discard_merges, discard_sectors;
	uint64_t discard_ticks_ms;
	uint64_t flush_ios, flush_ticks_ms;
	int nr_fields; /* 11, 15 or 17 (more are ignored) */
};

/*
 * fk_meminfo_parse - parse the text of /proc/meminfo in @buf
 * (NUL-terminated).  Lines missing from @buf leave their field 0.
 * Returns 0, or -EINVAL if neither Dirty nor Writeback is present.
 * No I/O.  Thread-safe.
 */
FK_API int fk_meminfo_parse(const char *buf, struct fk_meminfo *out);
/*
 * fk_meminfo_read - read and parse @path (NULL: /proc/meminfo).
 * Returns 0, -errno from openat/read (-ENOENT without /proc), -EFBIG
 * if the file exceeds 64 KiB, or -EINVAL as fk_meminfo_parse.  Does
 * blocking I/O (a procfs read does not touch the disk).  Thread-safe.
 */
FK_API int fk_meminfo_read(const char *path, struct fk_meminfo *out);

/* As fk_meminfo_parse/_read, for /proc/vmstat.  -EINVAL if nr_dirty
 * is missing. */
FK_API int fk_vmstat_parse(const char *buf, struct fk_vmstat *out);
FK_API int fk_vmstat_read(const char *path, struct fk_vmstat *out);

/* As fk_meminfo_parse/_read, for one line of /sys/block/DEV/stat
 * (@path required).  -EINVAL if fewer than 11 numbers. */
FK_API int fk_blkstat_parse(const char *buf, struct fk_blkstat *out);
FK_API int fk_blkstat_read(const char *path, struct fk_blkstat *out);

#define FK_DEVNAME_MAX 32 /* bytes, with the NUL */
#define FK_MONITOR_MAX_DEVICES 8

/* A whole disk found under a path, as named in /sys/block. */
struct fk_blockdev {
	char name[FK_DEVNAME_MAX];	 /* "vda", "nvme0n1", "loop3" */
	char part[FK_DEVNAME_MAX];	 /* partition the path is on ("vda2"),
					  * "" if on the whole disk */
	char backing_of[FK_DEVNAME_MAX]; /* set when this disk holds the
					  * backing file of loop device
					  * "loopN"; "" otherwise */
	uint32_t major, minor;		 /* of the whole disk */
};

/*
 * fk_blockdev_resolve - the disks a path's data goes to.
 * @path: any existing file or directory (followed if a symlink).
 * @devs: receives up to @max disks: first the disk of the path's file
 *        system (stat -> st_dev -> /sys/dev/block/MAJ:MIN, going up to
 *        the whole disk for a partition, whose directory has a
 *        "partition" file); if that is a loop device, then the disk
 *        holding its backing file (/sys/block/loopN/loop/backing_file),
 *        and so on for stacked loops.  File systems with an anonymous
 *        st_dev (btrfs, major 0) are looked up by their mount source in
 *        /proc/self/mountinfo.
 * Returns the number of disks filled (0 for tmpfs, NFS, ...), or -errno
 * from stat (-ENOENT: no such path).  Does I/O (/sys, /proc reads).
 * Thread-safe.
 */
FK_API int fk_blockdev_resolve(const char *path, struct fk_blockdev *devs,
			       size_t max);

/*
 * struct fk_monitor - a sampler (opaque).  Add the paths whose disks to
 * watch, then call fk_monitor_sample at whatever interval the caller
 * chooses (flushkit uses 1 s, down to 100 ms).  Not thread-safe: one
 * thread samples (others may sample their own fk_monitor).
 */
struct fk_monitor;

/* One sample.  Counters are cumulative, as the kernel keeps them. */
struct fk_monitor_sample {
	uint64_t time_ns;     /* CLOCK_MONOTONIC */
	uint64_t realtime_ns; /* CLOCK_REALTIME (for logs) */
	struct fk_meminfo mem;
	struct fk_vmstat vm;
	size_t nr_devices; /* as fk_monitor_nr_devices */
	struct fk_blkstat dev[FK_MONITOR_MAX_DEVICES];
};

/* Returns 0 or -ENOMEM. */
FK_API int fk_monitor_create(struct fk_monitor **out);
FK_API void fk_monitor_destroy(struct fk_monitor *m);
/*
 * fk_monitor_add_path - watch the disks under @path (fk_blockdev_resolve).
 * A disk already watched is not added twice.  Returns the number of
 * disks watched now, -errno from fk_blockdev_resolve, or -E2BIG past
 * FK_MONITOR_MAX_DEVICES disks.  Does I/O.
 */
FK_API int fk_monitor_add_path(struct fk_monitor *m, const char *path);
FK_API size_t fk_monitor_nr_devices(const struct fk_monitor *m);
/* The i-th watched disk (i < nr_devices); owned by @m. */
FK_API const struct fk_blockdev *fk_monitor_device(const struct fk_monitor *m,
						   size_t i);
/*
 * fk_monitor_sample - read /proc/meminfo, /proc/vmstat and the stat file
 * of every watched disk into @s.  Returns 0, or the first -errno (the
 * other fields are still filled where they could be read; a disk that
 * went away leaves its entry zeroed with nr_fields 0).  Does I/O
 * (procfs/sysfs only; never waits for the disk).
 */
FK_API int fk_monitor_sample(struct fk_monitor *m, struct fk_monitor_sample *s);

/* The queue settings of one disk. */
struct fk_blockdev_env {
	char name[FK_DEVNAME_MAX];
	char scheduler[32];   /* the selected one: "mq-deadline", "none" */
	char write_cache[16]; /* "write back", "write through", "" */
	int rotational;	      /* 1, 0, or -1 if unknown */
};

/*
 * The environment a result depends on: dirty-writeback sysctls, kernel,
 * and the file system and disks under a path.  Integers are -1 where a
 * file could not be read; strings are "" then.
 */
struct fk_monitor_env {
	int64_t dirty_ratio;		/* percent */
	int64_t dirty_background_ratio; /* percent */
	int64_t dirty_bytes;		/* 0 = ratio used */
	int64_t dirty_background_bytes;
	int64_t dirty_expire_centisecs;
	int64_t dirty_writeback_centisecs;
	char kernel_release[128]; /* uname -r */
	char kernel_version[256]; /* uname -v */
	char fs_type[32];	  /* "ext4", "xfs", "tmpfs" */
	char mount_point[256];
	char mount_source[256];	 /* "/dev/vda1" */
	char mount_options[256]; /* per mount: "rw,relatime" */
	char super_options[256]; /* file system: "rw,discard" */
	size_t nr_devices;
	struct fk_blockdev devs[FK_MONITOR_MAX_DEVICES];
	struct fk_blockdev_env dev_env[FK_MONITOR_MAX_DEVICES];
};

/*
 * fk_monitor_env - fill @env for @path (NULL: only the sysctls and the
 * kernel).  The mount is the /proc/self/mountinfo entry with the path's
 * st_dev whose mount point is the longest prefix of the path's absolute
 * name.  Returns 0, or -errno if @path cannot be examined (what could
 * be read is still filled).  Does I/O (/proc, /sys).  Thread-safe.
 */
FK_API int fk_monitor_env(const char *path, struct fk_monitor_env *env);

/* ===================================================================
 * 6b. Batched fsync
 * =================================================================== */

/* SECTION fsync_batch */
/*
 * struct fk_fsync_batch - many fsync requests in flight at once (opaque).
 *
 * On a fast device one fsync at a time leaves it idle between flushes;
 * a batch keeps up to queue_depth fsync / fdatasync / writeback-hint
 * requests in flight and reports each request's result.  Backends:
 *
 *  - "uring": io_uring through liburing: IORING_OP_FSYNC (with
 *    IORING_FSYNC_DATASYNC for fdatasync) and IORING_OP_SYNC_FILE_RANGE
 *    (ranges longer than an SQE's 32-bit length are split);
 *  - "threads": a pthread pool of queue_depth workers calling fsync(2),
 *    fdatasync(2), sync_file_range(2), for kernels or sandboxes that
 *    refuse io_uring (EPERM under seccomp or io_uring_disabled, ENOSYS,
 *    ENOMEM for locked memory);
 *  - "sequential": one call after the other, the baseline.
 *
 * FK_SYNC_IO_AUTO picks "uring" when io_uring can be set up and supports
 * both opcodes, else "threads" ("sequential" when queue_depth is 1).
 * From the asynchronous-fsync work of 2014 (IORING_OP_FSYNC's ancestor,
 * aio fsync) and PostgreSQL's ProcessSyncRequests, done concurrently.
 *
 * Ordering: the batch takes files whose writes have COMPLETED (write(2)
 * or pwrite(2) returned).  Do not rely on IOSQE_IO_LINK to order a
 * write before its fsync: links only chain SQEs of one submission, a
 * write and an fsync submitted separately may run in any order, and
 * io_uring's fsync does not wait for writes still in flight on the same
 * file.  So write, wait for the writes, then fsync.
 *
 * Errors: the first error of a file (same (st_dev, st_ino), whatever the
 * descriptor) is sticky: every request of that file in the run reports
 * it, requests of it not yet issued are not issued, and later runs of
 * the same batch report it without issuing anything for that file.  A
 * failed fsync is never retried into success.  Other files' requests
 * still complete and are reported.  The batch's first error is sticky
 * too (fk_fsync_batch_error).
 *
 * Thread-safety: one thread at a time per batch; separate batches are
 * independent.
 */
struct fk_fsync_batch;

/* What one request asks the kernel to do. */
enum fk_fsync_op {
	FK_FSYNC_OP_FSYNC = 0,	   /* fsync(2): data and metadata */
	FK_FSYNC_OP_FDATASYNC = 1, /* fdatasync(2) */
	FK_FSYNC_OP_WRITEBACK = 2, /* sync_file_range(2) with only
				    * SYNC_FILE_RANGE_WRITE: starts
				    * writeback, a hint, NOT durability */
};

/*
 * fk_fsync_op_name - the name of an enum fk_fsync_op value: "fsync",
 * "fdatasync" or "writeback".
 * @op: an enum fk_fsync_op value.
 * Return: a static string (never freed); "unknown" for any other
 * value.  Never NULL.
 *
 * fk_fsync_op_parse - the inverse: the value a name stands for.
 * @name: a NUL-terminated name as above, matched exactly (case and
 *      all); may be NULL.  Borrowed for the call.
 * Return: the enum fk_fsync_op value (>= 0), or
 *   -EINVAL  @name is NULL or is not one of the names.
 *
 * No I/O, no allocation; thread-safe (constant tables only).
 */
FK_API const char *fk_fsync_op_name(int op);
FK_API int fk_fsync_op_parse(const char *name);

/* How requests are issued (the --sync-io option). */
enum fk_sync_io {
	FK_SYNC_IO_AUTO = 0,
	FK_SYNC_IO_URING = 1,
	FK_SYNC_IO_THREADS = 2,
	FK_SYNC_IO_SEQUENTIAL = 3,
};

/* One request: the caller fills the inputs, the run fills the outputs. */
struct fk_fsync_req {
	/* in */
	int fd;		 /* open descriptor (any access mode) */
	int op;		 /* enum fk_fsync_op */
	uint64_t offset; /* bytes; FK_FSYNC_OP_WRITEBACK only */
	uint64_t length; /* bytes, 0 = to end of file; WRITEBACK only */
	uint64_t cookie; /* the caller's, never touched */
	/* out */
	int result;	     /* 0 or -errno (see fk_fsync_batch_run) */
	int issued;	     /* 1 if it reached the kernel, 0 if not */
	uint64_t latency_ns; /* issue to completion; 0 if not issued */
};

struct fk_fsync_batch_opts {
	int sync_io;	      /* enum fk_sync_io; default FK_SYNC_IO_AUTO */
	uint32_t queue_depth; /* requests in flight at most, 1..4096;
			       * default 32 */
};

#define FK_FSYNC_BATCH_DEFAULT_QUEUE_DEPTH 32u
#define FK_FSYNC_BATCH_MAX_QUEUE_DEPTH 4096u

/* Cumulative over the runs of a batch. */
struct fk_fsync_batch_stats {
	uint64_t requests;	/* given to fk_fsync_batch_run */
	uint64_t issued;	/* reached the kernel */
	uint64_t calls;		/* system calls or io_uring SQEs issued */
	uint64_t errors;	/* requests whose result is an error */
	uint64_t skipped;	/* not issued: their file already failed */
	uint32_t max_in_flight; /* most requests seen in flight at once */
	int uring_error;	/* why io_uring is not used: the -errno of
				 * its setup (AUTO fell back), else 0 */
};

/* Defaults: FK_SYNC_IO_AUTO, queue depth 32.  No I/O. */
FK_API void fk_fsync_batch_opts_init(struct fk_fsync_batch_opts *o);

/*
 * fk_sync_io_name - the name of an enum fk_sync_io value: "auto", "uring",
 * "threads" or "sequential" (the --sync-io option).
 * @sync_io: an enum fk_sync_io value.
 * Return: a static string (never freed); "unknown" for any other
 * value.  Never NULL.
 *
 * fk_sync_io_parse - the inverse: the value a name stands for.
 * @name: a NUL-terminated name as above, matched exactly (case and
 *      all), or "io_uring" for FK_SYNC_IO_URING; may be NULL.  Borrowed
 *      for the call.
 * Return: the enum fk_sync_io value (>= 0), or
 *   -EINVAL  @name is NULL or is not one of the names.
 *
 * No I/O, no allocation; thread-safe (constant tables only).
 */
FK_API const char *fk_sync_io_name(int sync_io);
FK_API int fk_sync_io_parse(const char *name);

/*
 * fk_fsync_batch_create - choose and set up a backend.
 * @o: options (NULL: defaults).  @out receives the batch; the caller
 * frees it with fk_fsync_batch_destroy.
 * Returns 0; -EINVAL for a bad sync_io or queue_depth; -ENOMEM; or,
 * when FK_SYNC_IO_URING is forced, the error io_uring setup gave
 * (-EPERM, -ENOSYS, -ENOMEM, or -EOPNOTSUPP when the kernel lacks
 * IORING_OP_FSYNC / IORING_OP_SYNC_FILE_RANGE); AUTO never fails for
 * those, it falls back to threads.  With io_uring, sets up a ring of
 * queue_depth entries (locked memory).  Thread-safe.
 */
FK_API int fk_fsync_batch_create(const struct fk_fsync_batch_opts *o,
				 struct fk_fsync_batch **out);
/* Free the batch and its ring.  NULL is a no-op.  No I/O. */
FK_API void fk_fsync_batch_destroy(struct fk_fsync_batch *b);

/* The backend in use: FK_SYNC_IO_URING, _THREADS or _SEQUENTIAL (pass
 * it to fk_sync_io_name for the name to report).  No I/O. */
FK_API int fk_fsync_batch_backend(const struct fk_fsync_batch *b);

/*
 * fk_fsync_batch_run - issue @nr requests with at most queue_depth in
 * flight and wait for all of them.  @reqs (caller-owned) holds the
 * inputs; on return each request's result, issued and latency_ns are
 * set.  A request's result is 0 or:
 *  -EBADF (or what fstat(2) returned) when @fd cannot be examined;
 *  -EINVAL for an unknown op or an offset/length past INT64_MAX;
 *  -EIO, -ENOSPC, -EDQUOT, -EROFS, -EINVAL (special file), ... as the
 *  kernel returned it for this request or, sticky, for an earlier or
 *  concurrent request of the same file (issued then tells which).
 * Requests are issued roughly in array order; files are not reordered,
 * and nothing is retried.
 * Returns 0 when every request of this and earlier runs succeeded, else
 * the batch's first error (in completion order); -EINVAL if @reqs is
 * NULL and @nr > 0; -ENOMEM (no request issued).  Blocks until every
 * issued request completed; does I/O.  Not thread-safe per batch.
 */
FK_API int fk_fsync_batch_run(struct fk_fsync_batch *b,
			      struct fk_fsync_req *reqs, size_t nr);

/* The batch's first error (0 if none).  No I/O. */
FK_API int fk_fsync_batch_error(const struct fk_fsync_batch *b);
FK_API void fk_fsync_batch_get_stats(const struct fk_fsync_batch *b,
				     struct fk_fsync_batch_stats *st);

/*
 * Submit and reap: fsync requests in flight while the caller goes on
 * working (creating and writing the next files), instead of
 * fk_fsync_batch_run's "all of these, then wait".  The asynchronous
 * fsync of the 2014 work (aio fsync), as io_uring's IORING_OP_FSYNC is
 * used: submit each file's fsync as soon as its writes have returned,
 * reap the completions later.  Backends as for fk_fsync_batch_run:
 * "uring" issues one SQE per request and submits it at once; "threads"
 * hands it to a pool of up to queue_depth workers (started on demand,
 * joined by fk_fsync_batch_destroy); "sequential" makes the call inside
 * fk_fsync_submit (no overlap: the baseline).
 *
 * Durability: a request's file is durable (for FSYNC/FDATASYNC) only
 * once fk_fsync_reap has returned the request with result 0.  Keep its
 * descriptor open until then.  Ordering as for the batch: submit only
 * after the writes the fsync must cover have returned.
 *
 * Errors are sticky per file (st_dev, st_ino) across submit and run
 * alike: a request of a file whose earlier request failed is not issued
 * and is reaped with that error (issued = 0); a request reaped in the
 * same fk_fsync_reap call as, or a later one than, a failed request of
 * its file reports that error; nothing is retried.  The batch's first
 * error is kept (fk_fsync_batch_error).
 *
 * A batch with requests outstanding (submitted, not yet reaped) refuses
 * fk_fsync_batch_run (-EBUSY).  fk_fsync_batch_destroy with requests
 * outstanding waits for them to complete and drops their results.
 * Thread-safety: one thread at a time per batch, as for the run.
 */

/*
 * fk_fsync_submit - issue one request without waiting for it.
 * @b: the batch.  @req: the request, filled as for fk_fsync_batch_run
 *      (fd, op; offset and length in bytes for FK_FSYNC_OP_WRITEBACK);
 *      caller-owned, and it must stay valid and its fd open until
 *      fk_fsync_reap returns it (the batch keeps the pointer).
 * Return: 0 when the request is outstanding (it will be reaped, issued
 * or not); else it is not taken, nothing was issued, and:
 *   -EAGAIN  queue_depth requests are outstanding: reap some first;
 *   -EINVAL  @b or @req NULL, an unknown op, offset/length past
 *            INT64_MAX;
 *   -EBADF   (or fstat(2)'s error) @req->fd cannot be examined;
 *   -ENOMEM  the submit state (queue_depth slots) could not be allocated;
 *   -EBUSY, or io_uring_enter(2)'s error: the ring refused the
 *            submission.
 * Blocking: "uring" makes one io_uring_enter(2) (the fsync itself runs
 * in the kernel's io-wq workers); "threads" may start a worker thread;
 * "sequential" blocks for the whole call.  A writeback hint longer than
 * one SQE (4 GiB - 4 KiB) is made on the calling thread.
 */
FK_API int fk_fsync_submit(struct fk_fsync_batch *b, struct fk_fsync_req *req);

/*
 * fk_fsync_reap - collect completed requests.
 * @b: the batch.  @done: receives up to @max pointers to completed
 *      requests (the ones given to fk_fsync_submit), oldest completion
 *      first, their result, issued and latency_ns set as by
 *      fk_fsync_batch_run (latency: issue to completion, ns); may be
 *      NULL when @max is 0.
 * @wait_nr: block until at least min(@wait_nr, @max, outstanding)
 *      requests have completed; 0 only collects what already has.
 * Return: the number of requests stored in @done (0..@max); each is no
 * longer outstanding and belongs to the caller again.  -EINVAL for a
 * NULL @b, or NULL @done with @max > 0; or io_uring_wait_cqe(3)'s error
 * (nothing reaped).  Requests with errors are returned like the others:
 * look at each result.  Blocks as @wait_nr says; no I/O of its own.
 */
FK_API long fk_fsync_reap(struct fk_fsync_batch *b, struct fk_fsync_req **done,
			  size_t max, size_t wait_nr);

/* fk_fsync_outstanding - requests submitted and not yet reaped (0 for a
 * NULL @b).  No I/O. */
FK_API size_t fk_fsync_outstanding(const struct fk_fsync_batch *b);

/*
 * fk_fsync_many - create a batch from @o, run @reqs through it, destroy
 * it: the one-call form.  @backend (may be NULL) receives the backend
 * used (enum fk_sync_io).  Returns as fk_fsync_batch_create, then as
 * fk_fsync_batch_run.  Blocks; does I/O.  Thread-safe.
 */
FK_API int fk_fsync_many(const struct fk_fsync_batch_opts *o,
			 struct fk_fsync_req *reqs, size_t nr, int *backend);

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
 *      there, N written without a leading zero; 1 if none) or _EXISTING
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

/* ===================================================================
 * 9. Clock
 * =================================================================== */

/* SECTION clock */
/*
 * fk_now_ns - the library's clock: CLOCK_MONOTONIC, in nanoseconds.
 *
 * The time base of every *_ns time point the library reports
 * (fk_checkpoint_info.start_ns and end_ns, fk_monitor_sample.time_ns,
 * fk_pacer.start_ns), so a caller can put its own events (transaction
 * latencies, progress lines) on the same axis and subtract.
 * Returns nanoseconds since an unspecified starting point (on Linux,
 * boot, not counting suspend); never fails (clock_gettime(2) of
 * CLOCK_MONOTONIC cannot fail with a valid clock and buffer).  Reads
 * the clock through the vDSO: no system call, no I/O, never blocks.
 * Thread-safe.
 */
FK_API uint64_t fk_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif /* FLUSHKIT_H */
