/* SPDX-License-Identifier: MIT */
/*
 * flushkit/fsync_batch.h - section 6b of <flushkit.h>, batched fsync:
 * fk_fsync_many: io_uring, thread pool, sequential.
 *
 * Part of <flushkit.h>, which includes every section in layer order
 * (its opening comment lists them, with the conventions they follow),
 * inside its extern "C" and after FK_API and the error codes: include
 * <flushkit.h>, not this file.
 */
#ifndef FLUSHKIT_FSYNC_BATCH_H
#define FLUSHKIT_FSYNC_BATCH_H

#ifndef FLUSHKIT_H
#error "include <flushkit.h>, not <flushkit/fsync_batch.h>"
#endif

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

#endif /* FLUSHKIT_FSYNC_BATCH_H */
