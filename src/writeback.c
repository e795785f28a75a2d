// SPDX-License-Identifier: MIT
/*
 * writeback.c - early writeback hints for written ranges.
 *
 * Linux lets dirty pages pile up in the page cache until the flusher
 * threads or an fsync write them all at once; an fsync after gigabytes
 * of writes then stalls every other writer of the device.  Starting
 * writeback early, in (file, offset) order and in bounded chunks, keeps
 * the amount of dirty data small and the device streaming.  This is
 * PostgreSQL's WritebackContext (ScheduleBufferTagForWriteback and
 * IssuePendingWritebacks in src/backend/storage/buffer/bufmgr.c, 9.6,
 * and pg_flush_data in src/backend/storage/file/fd.c).
 *
 * A hint, never a durability promise: only SYNC_FILE_RANGE_WRITE is
 * used, unless the caller asks for waiting hints (wb->wait).  The WAIT
 * flags consume a pending writeback error (the errseq_t of the
 * mapping), so a later fsync on the descriptor returns 0 for data that
 * never reached the disk: with wb->wait an error of the call is the
 * file's fsync error, kept in first_error like any other, and the
 * caller must treat it so (flushkit.h).  Durability comes only from
 * fsync/fdatasync.
 *
 * Interface routines:
 *   fk_writeback_init(), fk_writeback_release()
 *   fk_writeback_note()      add a range; issue once the threshold is met
 *   fk_writeback_issue()     sort, merge and issue every pending range
 *   fk_writeback_issue_fd()  the same for one descriptor (before close)
 *   fk_writeback_forget()    drop one descriptor's pending ranges
 *
 * Invariants:
 *   1. Every pending range has length > 0 and offset + length <=
 *      INT64_MAX, so it fits off_t and never means "to end of file".
 *   2. pending_bytes is the sum of the pending ranges' lengths (after a
 *      merge, overlapping bytes count once).
 *   3. With flush_after_bytes == 0 nothing is ever pending.
 *   4. nr_ranges <= MAX_RANGES: when the array fills, the ranges are
 *      merged in place, and issued early only if merging freed less
 *      than half of it.
 *   5. A range is issued at most once: the pending set is emptied by
 *      every issue, whatever the calls returned (hints are not retried).
 *
 * Per descriptor, the file system's sync_file_range support comes from
 * the probe cache (probe.c); an unknown file system is tried with the
 * first real range and the outcome is cached.
 */
#include "probe.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

/* At most this many ranges are kept (invariant 4). */
#define MAX_RANGES 4096

void fk_writeback_init(struct fk_writeback *wb, uint64_t flush_after_bytes)
{
	memset(wb, 0, sizeof(*wb));
	wb->flush_after_bytes = flush_after_bytes;
}

void fk_writeback_release(struct fk_writeback *wb)
{
	free(wb->ranges);
	wb->ranges = NULL;
	wb->nr_ranges = wb->alloc_ranges = 0;
	wb->pending_bytes = 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct fk_writeback_range *x = a, *y = b;
	if (x->fd != y->fd)
		return x->fd < y->fd ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return 0;
}

/* Sort by (fd, offset) and merge adjacent or overlapping ranges of the
 * same descriptor, in place.  Recomputes pending_bytes (invariant 2). */
static void sort_merge(struct fk_writeback *wb)
{
	struct fk_writeback_range *r = wb->ranges;
	size_t n = wb->nr_ranges, out = 0;
	uint64_t bytes = 0;

	if (n == 0)
		return;
	qsort(r, n, sizeof(*r), range_cmp);
	for (size_t i = 1; i < n; i++) {
		struct fk_writeback_range *last = &r[out];
		uint64_t end = last->offset + last->length;
		if (r[i].fd == last->fd && r[i].offset <= end) {
			uint64_t e = r[i].offset + r[i].length;
			if (e > end)
				last->length = e - last->offset;
		} else {
			bytes += last->length;
			r[++out] = r[i];
		}
	}
	bytes += r[out].length;
	wb->nr_ranges = out + 1;
	wb->pending_bytes = bytes;
}

static void record_error(struct fk_writeback *wb, int err, int *ret)
{
	if (!wb->first_error)
		wb->first_error = err;
	if (!*ret)
		*ret = err;
}

/* posix_fadvise(DONTNEED) fallback for one range; -errno or 0. */
static int fadvise_range(struct fk_writeback *wb,
			 const struct fk_writeback_range *r)
{
	int e = fk_sys.fadvise(r->fd, (off_t)r->offset, (off_t)r->length,
			       POSIX_FADV_DONTNEED);
	wb->calls_fadvise++;
	if (e == 0) {
		wb->ranges_issued++;
		wb->bytes_issued += r->length;
		return 0;
	}
	wb->ranges_skipped++;
	/* Neither call applies to this descriptor: nothing to do. */
	if (e == -EINVAL || e == -ESPIPE || e == -ENOSYS)
		return 0;
	return e;
}

/*
 * Issue @n sorted, merged ranges that all belong to one descriptor.
 * Returns 0 or the first unexpected -errno (also kept in first_error).
 */
/* The sync_file_range flags of a hint that waits as @wait says
 * (enum fk_writeback_wait; flushkit.h). */
static unsigned sfr_flags(int wait)
{
	switch (wait) {
	case FK_WRITEBACK_WAIT_ALL:
		return SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
		       SYNC_FILE_RANGE_WAIT_AFTER;
	case FK_WRITEBACK_WAIT_BEFORE:
		return SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE;
	default:
		return SYNC_FILE_RANGE_WRITE;
	}
}

static int issue_fd_ranges(struct fk_writeback *wb,
			   const struct fk_writeback_range *r, size_t n)
{
	dev_t dev = 0;
	int ret = 0;
	int support = fk_probe_sfr_lookup(r[0].fd, &dev);
	int have_dev = support >= 0;

	/* fstat failed (e.g. EBADF): let the real call report it. */
	if (support < 0)
		support = FK_SFR_UNKNOWN;

	for (size_t i = 0; i < n; i++) {
		if (support == FK_SFR_NOOP) {
			/* ZFS: a hint would do nothing, and DONTNEED would
			 * only cost a system call.  Nothing is issued. */
			wb->ranges_skipped++;
			continue;
		}
		if (support == FK_SFR_WORKS || support == FK_SFR_UNKNOWN) {
			int e = fk_sys.sync_file_range(
			    r[i].fd, (off_t)r[i].offset, (off_t)r[i].length,
			    sfr_flags(wb->wait));
			wb->calls_sfr++;
			int s = fk_probe_sfr_classify(e);
			if (s == FK_SFR_WORKS) {
				if (support == FK_SFR_UNKNOWN && have_dev)
					fk_probe_sfr_learn(dev, s);
				support = s;
				wb->ranges_issued++;
				wb->bytes_issued += r[i].length;
				continue;
			}
			if (s < 0) {
				/* EIO, EBADF...: an error of this file, a
				 * hint of what its fsync will say. */
				wb->ranges_skipped++;
				record_error(wb, e, &ret);
				continue;
			}
			if (have_dev)
				fk_probe_sfr_learn(dev, s);
			support = s;
		}
		/* FK_SFR_UNSUPPORTED: fall back to POSIX_FADV_DONTNEED. */
		int e = fadvise_range(wb, &r[i]);
		if (e)
			record_error(wb, e, &ret);
	}
	return ret;
}

/* Issue the sorted, merged ranges [from, to) grouped by descriptor. */
static int issue_span(struct fk_writeback *wb, size_t from, size_t to)
{
	int ret = 0;
	size_t i = from;
	while (i < to) {
		size_t j = i + 1;
		while (j < to && wb->ranges[j].fd == wb->ranges[i].fd)
			j++;
		int e = issue_fd_ranges(wb, &wb->ranges[i], j - i);
		if (e && !ret)
			ret = e;
		i = j;
	}
	return ret;
}

int fk_writeback_issue(struct fk_writeback *wb)
{
	if (wb->nr_ranges == 0) {
		wb->pending_bytes = 0;
		return 0;
	}
	sort_merge(wb);
	int ret = issue_span(wb, 0, wb->nr_ranges);
	wb->nr_ranges = 0;
	wb->pending_bytes = 0;
	return ret;
}

int fk_writeback_issue_fd(struct fk_writeback *wb, int fd)
{
	size_t from, to;

	sort_merge(wb);
	for (from = 0; from < wb->nr_ranges && wb->ranges[from].fd < fd; from++)
		;
	for (to = from; to < wb->nr_ranges && wb->ranges[to].fd == fd; to++)
		;
	if (from == to)
		return 0;
	int ret = issue_span(wb, from, to);
	for (size_t i = from; i < to; i++)
		wb->pending_bytes -= wb->ranges[i].length;
	memmove(&wb->ranges[from], &wb->ranges[to],
		(wb->nr_ranges - to) * sizeof(wb->ranges[0]));
	wb->nr_ranges -= to - from;
	return ret;
}

int fk_writeback_note(struct fk_writeback *wb, int fd, uint64_t offset,
		      uint64_t length)
{
	if (fd < 0)
		return -EBADF;
	if (offset > (uint64_t)INT64_MAX ||
	    length > (uint64_t)INT64_MAX - offset)
		return -EINVAL;
	if (wb->flush_after_bytes == 0 || length == 0)
		return 0;

	int ret = 0;
	if (wb->nr_ranges == wb->alloc_ranges) {
		if (wb->nr_ranges >= MAX_RANGES) {
			sort_merge(wb);
			/* An error here is reported, but the new range is
			 * still noted. */
			if (wb->nr_ranges > MAX_RANGES / 2)
				ret = fk_writeback_issue(wb);
		}
		if (wb->nr_ranges == wb->alloc_ranges) {
			size_t n = wb->alloc_ranges ? wb->alloc_ranges * 2 : 64;
			if (n > MAX_RANGES)
				n = MAX_RANGES;
			struct fk_writeback_range *r =
			    realloc(wb->ranges, n * sizeof(*r));
			if (!r)
				return -ENOMEM;
			wb->ranges = r;
			wb->alloc_ranges = n;
		}
	}
	wb->ranges[wb->nr_ranges].fd = fd;
	wb->ranges[wb->nr_ranges].offset = offset;
	wb->ranges[wb->nr_ranges].length = length;
	wb->nr_ranges++;
	wb->pending_bytes += length;
	wb->ranges_noted++;
	wb->bytes_noted += length;

	if (wb->pending_bytes >= wb->flush_after_bytes) {
		int e = fk_writeback_issue(wb);
		if (!ret)
			ret = e;
	}
	return ret;
}

void fk_writeback_forget(struct fk_writeback *wb, int fd)
{
	size_t out = 0;
	for (size_t i = 0; i < wb->nr_ranges; i++) {
		if (wb->ranges[i].fd == fd) {
			wb->pending_bytes -= wb->ranges[i].length;
			continue;
		}
		wb->ranges[out++] = wb->ranges[i];
	}
	wb->nr_ranges = out;
}
