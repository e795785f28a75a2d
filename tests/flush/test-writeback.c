// SPDX-License-Identifier: MIT
/*
 * test-writeback.c - struct fk_writeback: ranges come out sorted per
 * descriptor and merged, nothing is issued below the threshold, 0
 * disables, ENOSYS/EINVAL fall back to posix_fadvise(DONTNEED), other
 * errors are sticky in first_error, forget and issue_fd work on one
 * descriptor, and the counters add up.  Checked through the traced
 * syscall table, not by timing.
 */
#include "fktest.h"
#include "probe.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

static int fa, fb; /* two files in the temporary directory */

static const struct fkt_call *nth_call(const char *op, size_t n)
{
	size_t seen = 0;
	for (size_t i = 0; i < fkt_trace_count(); i++) {
		const struct fkt_call *c = fkt_trace_get(i);
		if (strcmp(c->op, op) == 0 && seen++ == n)
			return c;
	}
	return NULL;
}

/* Check the @n-th call of @op was (fd, off, len). */
static void check_call(const char *op, size_t n, int fd, uint64_t off,
		       uint64_t len, int line)
{
	const struct fkt_call *c = nth_call(op, n);
	if (!c) {
		fprintf(stderr, "line %d: no %s call #%zu\n", line, op, n);
		fkt_failures++;
		return;
	}
	if (c->fd != fd || c->off != off || c->len != len) {
		fprintf(stderr,
			"line %d: %s #%zu is (fd %d, %llu, %llu), want (fd %d, "
			"%llu, %llu)\n",
			line, op, n, c->fd, (unsigned long long)c->off,
			(unsigned long long)c->len, fd, (unsigned long long)off,
			(unsigned long long)len);
		fkt_failures++;
	}
}
#define CHECK_CALL(op, n, fd, off, len)                                        \
	check_call(op, n, fd, off, len, __LINE__)

static void start(void)
{
	fk_probe_reset();
	fkt_trace_start();
}

static void stop(void)
{
	fkt_fault_clear();
	fkt_trace_stop();
}

static void test_sorted(void)
{
	struct fk_writeback wb;
	fk_writeback_init(&wb, 1u << 20);
	start();
	/* Out of order, interleaved between two files, with gaps. */
	CHECK_EQ(fk_writeback_note(&wb, fb, 65536, 4096), 0);
	CHECK_EQ(fk_writeback_note(&wb, fa, 32768, 4096), 0);
	CHECK_EQ(fk_writeback_note(&wb, fb, 0, 4096), 0);
	CHECK_EQ(fk_writeback_note(&wb, fa, 0, 4096), 0);
	CHECK_EQ(fk_writeback_note(&wb, fb, 16384, 4096), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 0);
	CHECK_EQ(wb.pending_bytes, 5 * 4096);
	CHECK_EQ(fk_writeback_issue(&wb), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 5);
	CHECK_CALL("sync_file_range", 0, fa, 0, 4096);
	CHECK_CALL("sync_file_range", 1, fa, 32768, 4096);
	CHECK_CALL("sync_file_range", 2, fb, 0, 4096);
	CHECK_CALL("sync_file_range", 3, fb, 16384, 4096);
	CHECK_CALL("sync_file_range", 4, fb, 65536, 4096);
	CHECK_EQ(fkt_trace_nr("fadvise", NULL), 0);
	CHECK_EQ(wb.ranges_issued, 5);
	CHECK_EQ(wb.bytes_issued, 5 * 4096);
	CHECK_EQ(wb.calls_sfr, 5);
	CHECK_EQ(wb.ranges_noted, 5);
	CHECK_EQ(wb.pending_bytes, 0);
	CHECK_EQ(wb.nr_ranges, 0);
	/* Nothing pending: nothing to do. */
	CHECK_EQ(fk_writeback_issue(&wb), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 5);
	stop();
	fk_writeback_release(&wb);
}

static void test_merge(void)
{
	struct fk_writeback wb;
	fk_writeback_init(&wb, 1u << 20);
	start();
	CHECK_EQ(fk_writeback_note(&wb, fa, 4096, 4096), 0); /* adjacent */
	CHECK_EQ(fk_writeback_note(&wb, fa, 0, 4096), 0);
	CHECK_EQ(fk_writeback_note(&wb, fa, 6000, 4000), 0); /* overlaps */
	CHECK_EQ(fk_writeback_note(&wb, fa, 1000, 100), 0);  /* inside */
	CHECK_EQ(fk_writeback_note(&wb, fa, 20000, 100), 0); /* apart */
	CHECK_EQ(fk_writeback_note(&wb, fb, 10000, 100), 0); /* other fd */
	CHECK_EQ(fk_writeback_issue(&wb), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 3);
	CHECK_CALL("sync_file_range", 0, fa, 0, 10000);
	CHECK_CALL("sync_file_range", 1, fa, 20000, 100);
	CHECK_CALL("sync_file_range", 2, fb, 10000, 100);
	CHECK_EQ(wb.ranges_issued, 3);
	CHECK_EQ(wb.bytes_issued, 10200);
	CHECK_EQ(wb.ranges_noted, 6);
	CHECK_EQ(wb.bytes_noted, 4096 * 2 + 4000 + 300);
	stop();
	fk_writeback_release(&wb);
}

static void test_threshold(void)
{
	struct fk_writeback wb;
	fk_writeback_init(&wb, 16384);
	start();
	for (int i = 3; i >= 1; i--)
		CHECK_EQ(fk_writeback_note(&wb, fa, (uint64_t)i * 4096, 4096),
			 0);
	/* 12 KiB pending, threshold 16 KiB: no call yet. */
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 0);
	CHECK_EQ(wb.pending_bytes, 12288);
	/* The note that reaches the threshold issues, merged. */
	CHECK_EQ(fk_writeback_note(&wb, fa, 0, 4096), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 1);
	CHECK_CALL("sync_file_range", 0, fa, 0, 16384);
	CHECK_EQ(wb.pending_bytes, 0);
	/* And again from zero. */
	CHECK_EQ(fk_writeback_note(&wb, fa, 65536, 16383), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 1);
	CHECK_EQ(fk_writeback_note(&wb, fb, 0, 1), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 3);
	CHECK_EQ(wb.calls_sfr, 3);
	CHECK_EQ(wb.bytes_issued, 32768);
	stop();
	fk_writeback_release(&wb);
}

static void test_disabled(void)
{
	struct fk_writeback wb;
	fk_writeback_init(&wb, 0);
	start();
	for (int i = 0; i < 100; i++)
		CHECK_EQ(fk_writeback_note(&wb, fa, (uint64_t)i * 8192, 8192),
			 0);
	CHECK_EQ(wb.nr_ranges, 0);
	CHECK_EQ(wb.pending_bytes, 0);
	CHECK_EQ(fk_writeback_issue(&wb), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 0);
	CHECK_EQ(fkt_trace_nr("fadvise", NULL), 0);
	CHECK_EQ(wb.ranges_issued + wb.calls_sfr + wb.calls_fadvise, 0);
	stop();
	fk_writeback_release(&wb);
}

/* sync_file_range fails with @err on every call: fall back to fadvise. */
static void test_fallback(int err)
{
	struct fk_writeback wb;
	fk_writeback_init(&wb, 1u << 20);
	start();
	fkt_fault_set("sync_file_range", NULL, 0, err);
	CHECK_EQ(fk_writeback_note(&wb, fb, 0, 4096), 0);
	CHECK_EQ(fk_writeback_note(&wb, fa, 8192, 4096), 0);
	CHECK_EQ(fk_writeback_note(&wb, fa, 0, 4096), 0);
	CHECK_EQ(fk_writeback_issue(&wb), 0);
	/* The first call told us; the file system is not asked again. */
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 1);
	CHECK_EQ(fkt_fault_fired(), 1);
	CHECK_CALL("sync_file_range", 0, fa, 0, 4096);
	CHECK_EQ(fkt_trace_nr("fadvise", NULL), 3);
	CHECK_CALL("fadvise", 0, fa, 0, 4096);
	CHECK_CALL("fadvise", 1, fa, 8192, 4096);
	CHECK_CALL("fadvise", 2, fb, 0, 4096);
	/* The fadvise comes right after the refused call, for that range. */
	CHECK(fkt_trace_find("fadvise", NULL, 0) >
	      fkt_trace_find("sync_file_range", NULL, 0));
	CHECK_EQ(wb.calls_sfr, 1);
	CHECK_EQ(wb.calls_fadvise, 3);
	CHECK_EQ(wb.ranges_issued, 3);
	CHECK_EQ(wb.bytes_issued, 3 * 4096);
	CHECK_EQ(wb.first_error, 0);
	/* Cached for the file system: straight to fadvise next time. */
	CHECK_EQ(fk_writeback_note(&wb, fa, 0, 4096), 0);
	CHECK_EQ(fk_writeback_issue(&wb), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 1);
	CHECK_EQ(fkt_trace_nr("fadvise", NULL), 4);
	CHECK_EQ(fk_probe_sync_file_range(fa), FK_SFR_UNSUPPORTED);
	stop();
	fk_writeback_release(&wb);
}

static void test_errors(void)
{
	struct fk_writeback wb;
	fk_writeback_init(&wb, 1u << 20);
	CHECK_EQ(fk_writeback_note(&wb, -1, 0, 1), -EBADF);
	CHECK_EQ(fk_writeback_note(&wb, fa, (uint64_t)INT64_MAX, 1), -EINVAL);
	CHECK_EQ(fk_writeback_note(&wb, fa, 1, (uint64_t)INT64_MAX), -EINVAL);
	CHECK_EQ(fk_writeback_note(&wb, fa, 0, 0), 0); /* ignored */
	CHECK_EQ(wb.nr_ranges, 0);

	/* EIO on the second call: returned, sticky, the rest still go. */
	start();
	fkt_fault_set("sync_file_range", NULL, 2, -EIO);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(fk_writeback_note(&wb, fa, (uint64_t)i * 8192, 4096),
			 0);
	CHECK_EQ(fk_writeback_issue(&wb), -EIO);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 3);
	CHECK_EQ(fkt_trace_nr("fadvise", NULL), 0);
	CHECK_EQ(wb.first_error, -EIO);
	CHECK_EQ(wb.ranges_issued, 2);
	CHECK_EQ(wb.ranges_skipped, 1);
	CHECK_EQ(wb.nr_ranges, 0); /* not retried */
	/* A later, different error is returned; first_error stays. */
	fkt_fault_set("sync_file_range", NULL, 0, -ENOSPC);
	CHECK_EQ(fk_writeback_note(&wb, fa, 0, 4096), 0);
	CHECK_EQ(fk_writeback_issue(&wb), -ENOSPC);
	CHECK_EQ(wb.first_error, -EIO);
	/* Through note, when the threshold triggers the issue. */
	wb.flush_after_bytes = 4096;
	CHECK_EQ(fk_writeback_note(&wb, fa, 0, 4096), -ENOSPC);
	fkt_fault_clear();
	CHECK_EQ(fk_writeback_note(&wb, fa, 0, 4096), 0);
	CHECK_EQ(wb.first_error, -EIO);
	stop();

	/* A closed descriptor that was not forgotten: EBADF, recorded. */
	int fd = open("/dev/null", O_RDONLY);
	close(fd);
	fk_writeback_release(&wb);
	fk_writeback_init(&wb, 1u << 20);
	CHECK_EQ(fk_writeback_note(&wb, fd, 0, 4096), 0);
	CHECK_EQ(fk_writeback_issue(&wb), -EBADF);
	CHECK_EQ(wb.first_error, -EBADF);
	fk_writeback_release(&wb);
}

static void test_forget_and_issue_fd(void)
{
	struct fk_writeback wb;
	fk_writeback_init(&wb, 1u << 20);
	start();
	CHECK_EQ(fk_writeback_note(&wb, fa, 0, 4096), 0);
	CHECK_EQ(fk_writeback_note(&wb, fb, 0, 4096), 0);
	CHECK_EQ(fk_writeback_note(&wb, fa, 8192, 100), 0);
	fk_writeback_forget(&wb, fa);
	CHECK_EQ(wb.nr_ranges, 1);
	CHECK_EQ(wb.pending_bytes, 4096);
	CHECK_EQ(fk_writeback_issue(&wb), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 1);
	CHECK_CALL("sync_file_range", 0, fb, 0, 4096);

	CHECK_EQ(fk_writeback_note(&wb, fb, 100, 100), 0);
	CHECK_EQ(fk_writeback_note(&wb, fa, 0, 4096), 0);
	CHECK_EQ(fk_writeback_note(&wb, fb, 0, 100), 0);
	CHECK_EQ(fk_writeback_issue_fd(&wb, fb), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 2);
	CHECK_CALL("sync_file_range", 1, fb, 0, 200);
	CHECK_EQ(wb.nr_ranges, 1);
	CHECK_EQ(wb.pending_bytes, 4096);
	CHECK_EQ(fk_writeback_issue_fd(&wb, fb), 0); /* nothing left */
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 2);
	CHECK_EQ(fk_writeback_issue(&wb), 0);
	CHECK_CALL("sync_file_range", 2, fa, 0, 4096);
	stop();
	fk_writeback_release(&wb);
}

static int fake_zfs(int fd, struct statfs *st)
{
	int r = fk_sys_default.fstatfs(fd, st);
	st->f_type = 0x2fc12fc2;
	return r;
}

static void test_noop_fs(void)
{
	struct fk_writeback wb;
	fk_writeback_init(&wb, 8192);
	start();
	fk_sys.fstatfs = fake_zfs;
	CHECK_EQ(fk_writeback_note(&wb, fa, 0, 4096), 0);
	CHECK_EQ(fk_writeback_note(&wb, fa, 8192, 4096), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 0);
	CHECK_EQ(fkt_trace_nr("fadvise", NULL), 0);
	CHECK_EQ(wb.ranges_skipped, 2);
	CHECK_EQ(wb.ranges_issued, 0);
	CHECK_EQ(wb.pending_bytes, 0);
	stop();
	fk_writeback_release(&wb);
}

/* Bounded memory: 4096 ranges at most, merged or issued early. */
static void test_many_ranges(void)
{
	struct fk_writeback wb;
	fk_writeback_init(&wb, UINT64_C(1) << 40);
	start();
	/* Mergeable: 5000 adjacent ranges, noted backwards, stay pending. */
	for (int i = 4999; i >= 0; i--)
		CHECK_EQ(fk_writeback_note(&wb, fa, (uint64_t)i * 512, 512), 0);
	CHECK(wb.nr_ranges <= 4096);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 0);
	CHECK_EQ(wb.pending_bytes, 5000 * 512);
	CHECK_EQ(fk_writeback_issue(&wb), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 1);
	CHECK_CALL("sync_file_range", 0, fa, 0, 5000 * 512);
	/* Not mergeable: issued early once the array is full. */
	for (int i = 0; i < 5000; i++)
		CHECK_EQ(fk_writeback_note(&wb, fb, (uint64_t)i * 8192, 512),
			 0);
	CHECK(wb.nr_ranges <= 4096);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 1 + 4096);
	CHECK_EQ(fk_writeback_issue(&wb), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 1 + 5000);
	CHECK_EQ(wb.bytes_issued, 5000 * 512 * 2);
	/* An error of the early issue is returned, and the range that
	 * triggered it is still noted. */
	for (int i = 0; i < 4096; i++)
		CHECK_EQ(fk_writeback_note(&wb, fb, (uint64_t)i * 8192, 512),
			 0);
	fkt_fault_set("sync_file_range", NULL, 1, -EIO);
	CHECK_EQ(fk_writeback_note(&wb, fa, 0, 512), -EIO);
	CHECK_EQ(wb.nr_ranges, 1);
	CHECK_EQ(wb.pending_bytes, 512);
	CHECK_EQ(fk_writeback_issue(&wb), 0);
	CHECK_CALL("sync_file_range", 1 + 5000 + 4096, fa, 0, 512);
	stop();
	fk_writeback_release(&wb);
}

static unsigned flags_seen, sfr_seen;
static int flags_sfr(int fd, off_t off, off_t len, unsigned int flags)
{
	flags_seen |= flags;
	sfr_seen++;
	return fk_sys_default.sync_file_range(fd, off, len, flags);
}

/* Only SYNC_FILE_RANGE_WRITE, never the WAIT flags (they would consume
 * a pending writeback error that the file's fsync must report). */
static void test_flags(void)
{
	struct fk_writeback wb;
	fk_writeback_init(&wb, 8192);
	fk_probe_reset();
	fk_sys.sync_file_range = flags_sfr;
	for (int i = 0; i < 8; i++)
		CHECK_EQ(fk_writeback_note(&wb, i % 2 ? fa : fb,
					   (uint64_t)i * 65536, 4096),
			 0);
	CHECK_EQ(fk_writeback_issue(&wb), 0);
	CHECK_EQ(fk_probe_sync_file_range(fa), FK_SFR_WORKS);
	fk_probe_reset();
	CHECK_EQ(fk_probe_sync_file_range(fa), FK_SFR_WORKS);
	CHECK_EQ(sfr_seen, 8 + 1); /* 4 issues of 2 files, 1 probe */
	CHECK_EQ(flags_seen, SYNC_FILE_RANGE_WRITE);
	fk_sys_reset();
	fk_writeback_release(&wb);
}

int main(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/a", fkt_tmpdir());
	CHECK_EQ(fkt_write_file(path, 1 << 20, 1), 0);
	fa = open(path, O_RDWR);
	snprintf(path, sizeof(path), "%s/b", fkt_tmpdir());
	CHECK_EQ(fkt_write_file(path, 1 << 20, 2), 0);
	fb = open(path, O_RDWR);
	CHECK(fa >= 0 && fb > fa);

	int support = fk_probe_sync_file_range(fa);
	if (support != FK_SFR_WORKS)
		SKIP("sync_file_range does not work in %s (%d)", fkt_tmpdir(),
		     support);

	test_sorted();
	test_merge();
	test_threshold();
	test_disabled();
	test_fallback(-ENOSYS);
	test_fallback(-EINVAL);
	test_errors();
	test_forget_and_issue_fd();
	test_noop_fs();
	test_many_ranges();
	test_flags();

	close(fa);
	close(fb);
	fk_probe_reset();
	return fkt_done();
}
