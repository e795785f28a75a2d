/* SPDX-License-Identifier: MIT */
/*
 * flushkit/fsyncq.h - section 4 of <flushkit.h>, fsync request queue:
 * struct fk_fsyncq: fsync requests with compaction.
 *
 * Part of <flushkit.h>, which includes every section in layer order
 * (its opening comment lists them, with the conventions they follow),
 * inside its extern "C" and after FK_API and the error codes: include
 * <flushkit.h>, not this file.
 */
#ifndef FLUSHKIT_FSYNCQ_H
#define FLUSHKIT_FSYNCQ_H

#ifndef FLUSHKIT_H
#error "include <flushkit.h>, not <flushkit/fsyncq.h>"
#endif

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

#endif /* FLUSHKIT_FSYNCQ_H */
