/* SPDX-License-Identifier: MIT */
/*
 * flushkit/writeback.h - section 3 of <flushkit.h>, writeback:
 * struct fk_writeback: early writeback hints.
 *
 * Part of <flushkit.h>, which includes every section in layer order
 * (its opening comment lists them, with the conventions they follow),
 * inside its extern "C" and after FK_API and the error codes: include
 * <flushkit.h>, not this file.
 */
#ifndef FLUSHKIT_WRITEBACK_H
#define FLUSHKIT_WRITEBACK_H

#ifndef FLUSHKIT_H
#error "include <flushkit.h>, not <flushkit/writeback.h>"
#endif

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

#endif /* FLUSHKIT_WRITEBACK_H */
