/* SPDX-License-Identifier: MIT */
/*
 * fsync_batch.h - test hooks of the batched-fsync module (private).
 *
 * The thread-pool and sequential backends call fk_sys.fsync, .fdatasync
 * and .sync_file_range, so tests inject faults through the syscall table
 * as everywhere else.  io_uring requests never pass through fk_sys: the
 * kernel executes them.  For that backend faults are injected at the
 * ring level through these hooks:
 *
 *  - fk_uring_queue_init replaces io_uring_queue_init(3) (same
 *    signature), so a test can refuse setup with -EPERM, -ENOSYS or
 *    -ENOMEM and watch the fallback;
 *  - fk_uring_submit_hook is called as each request's first SQE is
 *    prepared (before io_uring_submit), for recording issue order;
 *  - fk_uring_cqe_hook sees each CQE's res for request @index and
 *    returns the res to use (e.g. -EIO for a chosen request);
 *    for fk_fsync_submit's requests @index is the request's slot
 *    (0..queue_depth-1, reused), not a place in an array, and the
 *    submit hook gets the same;
 *  - fk_uring_submit_fault, called before each submission of @queued
 *    SQEs, returns 0 or a -errno that is taken as io_uring_enter(2)'s
 *    failure (nothing submitted): the ring-level failure path, where
 *    the batch drains the ring and finishes with threads;
 *    for fk_fsync_submit, the submission is refused: its SQE becomes
 *    a no-op and fk_fsync_submit returns the error.
 *
 * Set them before creating/running a batch, from one thread; NULL hooks
 * (the default for the last two) are not called.
 */
#ifndef FK_FSYNC_BATCH_H
#define FK_FSYNC_BATCH_H

#include <stddef.h>

#include "flushkit.h"

struct io_uring;

extern int (*fk_uring_queue_init)(unsigned entries, struct io_uring *ring,
				  unsigned flags);
extern void (*fk_uring_submit_hook)(const struct fk_fsync_req *req,
				    size_t index);
extern int (*fk_uring_cqe_hook)(const struct fk_fsync_req *req, size_t index,
				int res);
extern int (*fk_uring_submit_fault)(unsigned queued);

/* Restore the default hooks. */
void fk_uring_hooks_reset(void);

/* 1 if the library was built with liburing. */
int fk_fsync_batch_have_uring(void);

/* Longest range of one IORING_OP_SYNC_FILE_RANGE SQE (its len is 32
 * bits): 4 GiB less one page, so pieces stay page-aligned. */
#define FK_URING_SFR_MAX_BYTES 0xFFFFF000ull

#endif
