// SPDX-License-Identifier: MIT
/*
 * test-store-wal-compression.c - fk_store_opts.wal_compression end to
 * end: a store whose full-page images are compressed recovers from a
 * crash that left every page of its table torn.
 *
 * For each method (off, lz4, zstd): a child creates a store, bulk loads
 * a table (TPC-B-like rows: a number and spaces), then changes one row
 * of every page after the load's checkpoint, so each page's first change
 * logs its full image, and exits without closing (a crash: no shutdown
 * checkpoint).  It reports its statistics: every image was logged, and
 * compressed (fk_store_stats.wal_fpi_bytes well under 8200 per image;
 * exactly 8200 with off).  The parent then overwrites the whole table
 * segment with garbage (every page torn) and reopens: recovery must
 * restore every page from its (decompressed) image and replay the
 * changes on it, so every row reads back with its value.  A control run
 * with full_page_writes off fails that reopen (-FK_ECORRUPT): without
 * the images the torn pages cannot be restored, so the check depends on
 * them.  Also: an out-of-range wal_compression is -EINVAL.
 */
#include "fktest.h"
#include "store-int.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROW 100
#define RPP ((FK_PAGE_SIZE - FK_PAGE_HDR) / ROW)
#define NPAGES 40u
#define NROWS (NPAGES * RPP)

static void fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	memset(row, ' ', ROW);
	int64_t v = (int64_t)rowno * 10;
	memcpy(row, &v, 8);
}

static struct fk_store_opts opts(int method, int fpw)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 2u << 20; /* no evictions */
	o.wal_segment_bytes = 4u << 20;
	o.checkpoint_timeout_ms = 3600 * 1000;
	o.max_wal_size_bytes = 1ull << 30;
	o.wal_compression = method;
	o.full_page_writes = fpw;
	return o;
}

/* The child: load, change a row per page, report, crash. */
static void child(const char *dir, int method, int fpw, int wfd)
{
	struct fk_store_opts o = opts(method, fpw);
	struct fk_store *s = NULL;
	struct fk_store_stats st[2];
	struct fk_batch b;
	uint32_t t;
	if (fk_store_open(dir, &o, &s) ||
	    fk_store_create_table(s, "t", ROW, &t) ||
	    fk_store_bulk_load(s, t, NROWS, fill, NULL))
		_exit(3);
	fk_store_get_stats(s, &st[0]);
	fk_batch_init(&b);
	for (uint64_t pg = 0; pg < NPAGES; pg++) {
		fk_batch_reset(&b);
		/* Row 3 of each page gets +7. */
		fk_batch_add_i64(&b, t, pg * RPP + 3, 0, 7, NULL);
		if (fk_store_commit(s, &b, NULL))
			_exit(4);
	}
	fk_store_get_stats(s, &st[1]);
	if (write(wfd, st, sizeof(st)) != (ssize_t)sizeof(st))
		_exit(5);
	_exit(0); /* no fk_store_close: a crash */
}

/* Overwrite the table's segment base/1.0 with garbage: every page torn. */
static void tear_all(const char *dir)
{
	char path[4300];
	static uint8_t junk[FK_PAGE_SIZE];
	memset(junk, 0xa5, sizeof(junk));
	snprintf(path, sizeof(path), "%s/base/1.0", dir);
	int fd = open(path, O_WRONLY);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	for (uint32_t pg = 0; pg < NPAGES; pg++)
		CHECK_EQ(
		    pwrite(fd, junk, sizeof(junk), (off_t)pg * FK_PAGE_SIZE),
		    (ssize_t)sizeof(junk));
	CHECK_EQ(fsync(fd), 0);
	close(fd);
}

/* Returns the reopen's result. */
static int crash_tear_recover(int method, int fpw)
{
	char dir[4200];
	int pfd[2];
	struct fk_store_stats st[2];
	snprintf(dir, sizeof(dir), "%s/%s-%d", fkt_tmpdir(),
		 fk_wal_compression_name(method), fpw);
	CHECK_EQ(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		child(dir, method, fpw, pfd[1]);
	}
	close(pfd[1]);
	ssize_t n = read(pfd[0], st, sizeof(st));
	close(pfd[0]);
	int status = 0;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(n, (ssize_t)sizeof(st));
	if (n != (ssize_t)sizeof(st))
		return -1;
	uint64_t fpi = st[1].wal_fpi - st[0].wal_fpi;
	uint64_t bytes = st[1].wal_fpi_bytes - st[0].wal_fpi_bytes;
	if (fpw) {
		CHECK_EQ(fpi, NPAGES);
		if (method == FK_WAL_COMPRESSION_OFF)
			CHECK_EQ(bytes, fpi * FK_WAL_FPI_BYTES);
		else
			CHECK(bytes < fpi * FK_WAL_FPI_BYTES / 4);
	} else {
		CHECK_EQ(fpi, 0);
	}
	printf("%s, full_page_writes %d: %llu images in %llu WAL bytes\n",
	       fk_wal_compression_name(method), fpw, (unsigned long long)fpi,
	       (unsigned long long)bytes);

	tear_all(dir);

	struct fk_store_opts o = opts(method, fpw);
	struct fk_store *s = NULL;
	uint32_t t;
	int r = fk_store_open(dir, &o, &s);
	if (r)
		return r;
	struct fk_store_stats rs;
	fk_store_get_stats(s, &rs);
	CHECK(rs.recovery_records >= NPAGES);
	CHECK_EQ(fk_store_table(s, "t", &t, NULL), 0);
	int bad = 0;
	for (uint64_t row = 0; row < NROWS; row++) {
		uint8_t buf[ROW], want[ROW];
		fill(NULL, row, want);
		if (row % RPP == 3) {
			int64_t v = (int64_t)row * 10 + 7;
			memcpy(want, &v, 8);
		}
		if (fk_store_read(s, t, row, buf) || memcmp(buf, want, ROW))
			bad++;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(fk_store_close(s), 0);
	return 0;
}

static void test_bad_value(void)
{
	char dir[4200];
	struct fk_store_opts o = opts(3, 1);
	struct fk_store *s = NULL;
	snprintf(dir, sizeof(dir), "%s/bad", fkt_tmpdir());
	CHECK_EQ(fk_store_open(dir, &o, &s), -EINVAL);
	o.wal_compression = -1;
	CHECK_EQ(fk_store_open(dir, &o, &s), -EINVAL);
}

int main(void)
{
	test_bad_value();
	for (int m = FK_WAL_COMPRESSION_OFF; m <= FK_WAL_COMPRESSION_ZSTD;
	     m++) {
		if (!fk_fpi_method_available(m)) {
			printf("%s: not in this build, not checked\n",
			       fk_wal_compression_name(m));
			continue;
		}
		CHECK_EQ(crash_tear_recover(m, 1), 0);
	}
	/* The control: no images, the torn pages cannot be restored. */
	CHECK_EQ(crash_tear_recover(FK_WAL_COMPRESSION_OFF, 0), -FK_ECORRUPT);
	return fkt_done();
}
