// SPDX-License-Identifier: MIT
/*
 * test-torn-page.c - torn and corrupt data pages (docs/durability.md,
 * "How the tests check it", 9).
 *
 * Torn, with a full-page image to restore it: a store changes rows all
 * over a page (both 4 KiB halves) after a checkpoint, so the commit logs
 * the page's full image; the page is then written out by eviction and
 * the process dies.  The page on disk is replaced by what a 4K-sector
 * torn write leaves: the new first 4 KiB and the old last 4 KiB, the old
 * first and the new last, or (a page that was new, past the end of the
 * file) the first 4 KiB and nothing after.  Recovery must restore it
 * from the image: every committed row is there, twice (a second open
 * after a clean close), and the page on disk verifies again.
 *
 * Corrupt, without an image: a page whose check fails is never used
 * silently:
 *  - a page not touched since the last checkpoint (torn from two other
 *    versions, or a valid page of another block written in its place):
 *    the store opens, reads of its rows and commits touching it fail
 *    with -FK_ECORRUPT (every time, nothing of the commit applied), the
 *    rest of the store works, checkpoints and close succeed, and the bad
 *    bytes on disk are never overwritten by a "repaired" page;
 *  - a page that recovery needs without an image (full_page_writes
 *    off): fk_store_open fails with -FK_ECORRUPT;
 *  - a page zeroed on disk (a lost or zeroed block) that holds rows the
 *    table counts: an all-zero page reads as a new, empty page, which is
 *    right only for a block past the table's rows; inside them it is
 *    -FK_ECORRUPT (regression: it used to read as empty rows, and the
 *    next commit would have written zeros back with a valid CRC).
 *
 * The crash is a child process that exits without closing the store.
 */
#include "fktest.h"
#include "store-int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROW 64
#define RPP ((FK_PAGE_SIZE - FK_PAGE_HDR) / ROW) /* 127 rows per page */
#define NACC (6 * RPP)
#define NFILL (600 * RPP) /* ~10 sweeps of the 64 buffers: evicts */
#define BLK 2		  /* the account page torn */
#define HALF 4096

#define WIDE_ROW (FK_PAGE_SIZE - FK_PAGE_HDR) /* one row fills a page */

enum { ACC = 1, HIST = 2, FILL = 3, WIDE = 4 };

static void wide_row(uint8_t *row)
{
	for (size_t i = 0; i < WIDE_ROW; i++)
		row[i] = (uint8_t)(i * 31 + 7);
}

static struct fk_store_opts opts(int fpw)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 64 * FK_PAGE_SIZE; /* 64 buffers */
	o.segment_bytes = 1 << 20;
	o.wal_segment_bytes = 1 << 20;
	o.checkpoint_timeout_ms = 3600000;
	o.full_page_writes = fpw;
	return o;
}

static void fill(void *arg, uint64_t rowno, void *row)
{
	memset(row, 0, ROW);
	memcpy((uint8_t *)row + 8, &rowno, 8);
	memcpy((uint8_t *)row + 16, arg, 4);
}

static void setup(const char *dir, int fpw)
{
	struct fk_store_opts o = opts(fpw);
	struct fk_store *s = NULL;
	uint32_t id;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		exit(1);
	CHECK_EQ(fk_store_create_table(s, "accounts", ROW, &id), 0);
	CHECK_EQ(id, ACC);
	CHECK_EQ(fk_store_create_table(s, "history", ROW, &id), 0);
	CHECK_EQ(id, HIST);
	CHECK_EQ(fk_store_create_table(s, "filler", ROW, &id), 0);
	CHECK_EQ(id, FILL);
	CHECK_EQ(fk_store_create_table(s, "wide", WIDE_ROW, &id), 0);
	CHECK_EQ(id, WIDE);
	CHECK_EQ(fk_store_bulk_load(s, ACC, NACC, fill, "acc"), 0);
	CHECK_EQ(fk_store_bulk_load(s, FILL, NFILL, fill, "fil"), 0);
	CHECK_EQ(fk_store_close(s), 0);
}

static void page_path(char *out, size_t len, const char *dir, uint32_t table)
{
	snprintf(out, len, "%s/base/%u.0", dir, table);
}

/* Read block @blk of @table from disk (zeros past the end). */
static void read_page(const char *dir, uint32_t table, uint32_t blk,
		      uint8_t *page)
{
	char p[4300];
	page_path(p, sizeof(p), dir, table);
	memset(page, 0, FK_PAGE_SIZE);
	int fd = open(p, O_RDONLY);
	CHECK(fd >= 0 || errno == ENOENT); /* never written: zeros */
	if (fd >= 0) {
		CHECK(pread(fd, page, FK_PAGE_SIZE,
			    (off_t)blk * FK_PAGE_SIZE) >= 0);
		close(fd);
	}
}

static void write_page(const char *dir, uint32_t table, uint32_t blk,
		       const uint8_t *page, size_t len)
{
	char p[4300];
	page_path(p, sizeof(p), dir, table);
	int fd = open(p, O_WRONLY);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK_EQ(pwrite(fd, page, len, (off_t)blk * FK_PAGE_SIZE), len);
		close(fd);
	}
}

/* The rows of page BLK that commit @k changes: slot 0, 63 and 126 (both
 * halves of the page), and one row on block 0. */
static uint64_t row_of(int k, int j)
{
	static const uint64_t slots[] = {0, 63, RPP - 1};
	return j < 3 ? BLK * RPP + slots[(k + j) % 3] : (uint64_t)k;
}

#define NCOMMIT 6

/* In a child: open, commit NCOMMIT batches (adds on BLK's rows and on
 * block 0, a history append each; the first also appends a page-sized
 * row to "wide"), then read a row of every filler page so every dirty
 * page is evicted (written), and die. */
static void crash_run(const char *dir, int fpw)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct fk_store_opts o = opts(fpw);
		struct fk_store *s;
		struct fk_batch b;
		uint8_t row[ROW];
		if (fk_store_open(dir, &o, &s))
			_exit(2);
		static uint8_t wide[WIDE_ROW];
		wide_row(wide);
		fk_batch_init(&b);
		for (int k = 0; k < NCOMMIT; k++) {
			uint8_t h[ROW] = {0};
			int64_t kk = k;
			memcpy(h, &kk, 8);
			fk_batch_reset(&b);
			for (int j = 0; j < 4; j++)
				fk_batch_add_i64(&b, ACC, row_of(k, j), 0,
						 100 + k, NULL);
			fk_batch_set(&b, ACC, row_of(k, 0), 32, &kk, 8);
			fk_batch_append_copy(&b, HIST, h, ROW, NULL);
			if (k == 0)
				fk_batch_append_copy(&b, WIDE, wide, WIDE_ROW,
						     NULL);
			if (fk_store_commit(s, &b, NULL))
				_exit(3);
		}
		for (uint64_t p = 0; p < NFILL / RPP; p++)
			if (fk_store_read(s, FILL, p * RPP, row))
				_exit(4);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Expected balance of account row @r after the NCOMMIT commits. */
static int64_t balance(uint64_t r)
{
	int64_t v = 0;
	for (int k = 0; k < NCOMMIT; k++)
		for (int j = 0; j < 4; j++)
			if (row_of(k, j) == r)
				v += 100 + k;
	return v;
}

static void verify(const char *dir, const char *what)
{
	struct fk_store_opts o = opts(1);
	struct fk_store *s = NULL;
	uint8_t row[ROW];
	uint64_t rows = 0;
	int r = fk_store_open(dir, &o, &s);
	if (r)
		fprintf(stderr, "%s: open: %s\n", what, fk_strerror(r));
	CHECK_EQ(r, 0);
	if (!s)
		return;
	int bad = 0;
	for (uint64_t a = 0; a < NACC && !bad; a++) {
		int64_t v, last = -1;
		uint64_t id;
		r = fk_store_read(s, ACC, a, row);
		memcpy(&v, row, 8);
		memcpy(&id, row + 8, 8);
		for (int k = 0; k < NCOMMIT; k++)
			if (row_of(k, 0) == a)
				last = k;
		int64_t lw = 0;
		memcpy(&lw, row + 32, 8);
		if (r || v != balance(a) || id != a ||
		    memcmp(row + 16, "acc", 4) || (last >= 0 && lw != last)) {
			fprintf(stderr,
				"%s: account %llu: %d, %lld (expected "
				"%lld), id %llu\n",
				what, (unsigned long long)a, r, (long long)v,
				(long long)balance(a), (unsigned long long)id);
			bad = 1;
		}
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(fk_store_table_rows(s, HIST, &rows), 0);
	CHECK_EQ(rows, NCOMMIT);
	for (uint64_t i = 0; i < rows; i++) {
		int64_t v = -1;
		CHECK_EQ(fk_store_read(s, HIST, i, row), 0);
		memcpy(&v, row, 8);
		CHECK_EQ(v, (int64_t)i);
	}
	static uint8_t w[WIDE_ROW], want[WIDE_ROW];
	wide_row(want);
	CHECK_EQ(fk_store_table_rows(s, WIDE, &rows), 0);
	CHECK_EQ(rows, 1);
	CHECK_EQ(fk_store_read(s, WIDE, 0, w), 0);
	CHECK(memcmp(w, want, WIDE_ROW) == 0);
	CHECK_EQ(fk_store_close(s), 0);
}

/* ---- torn, restored from the full-page image ---- */

enum tear { NEW_FIRST, OLD_FIRST, NEW_PAGE };

static void torn_restored(const char *base, const char *name, enum tear how)
{
	char dir[4200];
	static uint8_t v0[FK_PAGE_SIZE], v1[FK_PAGE_SIZE], torn[FK_PAGE_SIZE];
	uint32_t table = how == NEW_PAGE ? WIDE : ACC;
	uint32_t blk = how == NEW_PAGE ? 0 : BLK;

	snprintf(dir, sizeof(dir), "%s/%s", base, name);
	setup(dir, 1);
	read_page(dir, table, blk, v0);
	crash_run(dir, 1);
	read_page(dir, table, blk, v1);
	/* The new version reached the disk, and it differs from the old
	 * one in both halves: a torn mix of them is detectable. */
	CHECK_EQ(fk_page_verify(v1, table, blk), 0);
	CHECK(memcmp(v0, v1, HALF) != 0);
	CHECK(how == NEW_PAGE || memcmp(v0 + HALF, v1 + HALF, HALF) != 0);
	switch (how) {
	case NEW_FIRST:
		memcpy(torn, v1, HALF);
		memcpy(torn + HALF, v0 + HALF, HALF);
		break;
	case OLD_FIRST:
		memcpy(torn, v0, HALF);
		memcpy(torn + HALF, v1 + HALF, HALF);
		break;
	case NEW_PAGE:
		/* The file ends 4 KiB into the new page. */
		memcpy(torn, v1, HALF);
		memset(torn + HALF, 0, HALF);
		break;
	}
	uint8_t chk[FK_PAGE_SIZE];
	memcpy(chk, torn, FK_PAGE_SIZE);
	CHECK_EQ(fk_page_verify(chk, table, blk), -FK_ECORRUPT);
	if (how == NEW_PAGE) {
		char p[4300];
		page_path(p, sizeof(p), dir, table);
		CHECK_EQ(truncate(p, (off_t)blk * FK_PAGE_SIZE + HALF), 0);
	} else {
		write_page(dir, table, blk, torn, FK_PAGE_SIZE);
	}
	verify(dir, name);
	/* Restored on disk as well, and a second open agrees. */
	read_page(dir, table, blk, chk);
	CHECK_EQ(fk_page_verify(chk, table, blk), 0);
	verify(dir, name);
}

/* ---- corrupt, no image ---- */

static void corrupt_not_used(const char *base, const char *name, int how)
{
	char dir[4200];
	static uint8_t bad[FK_PAGE_SIZE], other[FK_PAGE_SIZE],
	    after[FK_PAGE_SIZE];
	uint8_t row[ROW];
	const uint32_t blk = 3;
	snprintf(dir, sizeof(dir), "%s/%s", base, name);
	setup(dir, 1);
	/* Changes after the checkpoint, then a crash: recovery replays
	 * them, but none touches block 3. */
	crash_run(dir, 1);
	read_page(dir, ACC, blk, bad);
	read_page(dir, ACC, blk + 1, other);
	switch (how) {
	case 0: /* torn: its first half, another page's second */
		memcpy(bad + HALF, other + HALF, HALF);
		break;
	case 1: /* misdirected: block 4's valid image at block 3 */
		memcpy(bad, other, FK_PAGE_SIZE);
		break;
	case 2: /* zeroed */
		memset(bad, 0, FK_PAGE_SIZE);
		break;
	}
	write_page(dir, ACC, blk, bad, FK_PAGE_SIZE);

	struct fk_store_opts o = opts(1);
	struct fk_store *s = NULL;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return;
	uint64_t in = blk * RPP + 5, out = (blk + 1) * RPP + 5;
	for (int i = 0; i < 2; i++)
		CHECK_EQ(fk_store_read(s, ACC, in, row), -FK_ECORRUPT);
	CHECK_EQ(fk_store_read(s, ACC, out, row), 0);
	int64_t before, now;
	memcpy(&before, row, 8);
	/* A commit that needs the page fails whole. */
	struct fk_batch b;
	fk_batch_init(&b);
	fk_batch_add_i64(&b, ACC, out, 0, 7, NULL);
	fk_batch_add_i64(&b, ACC, in, 0, 7, NULL);
	CHECK_EQ(fk_store_commit(s, &b, NULL), -FK_ECORRUPT);
	CHECK_EQ(fk_store_read(s, ACC, out, row), 0);
	memcpy(&now, row, 8);
	CHECK_EQ(now, before);
	/* The rest of the store works: not stopped. */
	fk_batch_reset(&b);
	fk_batch_add_i64(&b, ACC, out, 0, 7, NULL);
	CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
	fk_batch_release(&b);
	CHECK_EQ(fk_store_checkpoint(s), 0);
	CHECK_EQ(fk_store_read(s, ACC, in, row), -FK_ECORRUPT);
	CHECK_EQ(fk_store_close(s), 0);
	/* Never "repaired" on disk behind the caller's back. */
	read_page(dir, ACC, blk, after);
	CHECK(memcmp(after, bad, FK_PAGE_SIZE) == 0);
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (s) {
		CHECK_EQ(fk_store_read(s, ACC, in, row), -FK_ECORRUPT);
		CHECK_EQ(fk_store_read(s, ACC, out, row), 0);
		memcpy(&now, row, 8);
		CHECK_EQ(now, before + 7);
		CHECK_EQ(fk_store_close(s), 0);
	}
}

/* Recovery needs the torn page and has no image for it. */
static void torn_no_fpi(const char *base)
{
	char dir[4200];
	static uint8_t v0[FK_PAGE_SIZE], v1[FK_PAGE_SIZE], after[FK_PAGE_SIZE];
	snprintf(dir, sizeof(dir), "%s/nofpi", base);
	setup(dir, 0);
	read_page(dir, ACC, BLK, v0);
	crash_run(dir, 0);
	read_page(dir, ACC, BLK, v1);
	CHECK(memcmp(v0, v1, HALF) != 0);
	memcpy(v1 + HALF, v0 + HALF, HALF); /* new first half, old rest */
	write_page(dir, ACC, BLK, v1, FK_PAGE_SIZE);
	struct fk_store_opts o = opts(0);
	struct fk_store *s = NULL;
	CHECK_EQ(fk_store_open(dir, &o, &s), -FK_ECORRUPT);
	CHECK(s == NULL);
	CHECK_EQ(fk_store_open(dir, &o, &s), -FK_ECORRUPT);
	read_page(dir, ACC, BLK, after);
	CHECK(memcmp(after, v1, FK_PAGE_SIZE) == 0);
}

/* A block past the rows is new: all zero is fine there. */
static void zero_page_past_rows(const char *base)
{
	char dir[4200];
	uint8_t row[ROW];
	snprintf(dir, sizeof(dir), "%s/newpage", base);
	setup(dir, 1);
	struct fk_store_opts o = opts(1);
	struct fk_store *s = NULL;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return;
	struct fk_batch b;
	uint64_t rowno = 0;
	memset(row, 0x11, sizeof(row));
	fk_batch_init(&b);
	for (int i = 0; i < (int)RPP + 3; i++) {
		fk_batch_reset(&b);
		fk_batch_append_copy(&b, HIST, row, ROW, &rowno);
		CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
	}
	fk_batch_release(&b);
	CHECK_EQ(rowno, RPP + 2);
	CHECK_EQ(fk_store_read(s, HIST, RPP + 1, row), 0);
	CHECK_EQ(fk_store_close(s), 0);
}

/* ThreadSanitizer sleeps a second in every exiting process (its
 * atexit_sleep_ms): a second per crashed child here.  Read by TSan
 * builds only; TSAN_OPTIONS still wins. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "atexit_sleep_ms=0";
}

int main(void)
{
	const char *base = fkt_tmpdir();
	torn_restored(base, "new-first", NEW_FIRST);
	torn_restored(base, "old-first", OLD_FIRST);
	torn_restored(base, "new-page", NEW_PAGE);
	corrupt_not_used(base, "torn-old", 0);
	corrupt_not_used(base, "misdirected", 1);
	corrupt_not_used(base, "zeroed", 2);
	torn_no_fpi(base);
	zero_page_past_rows(base);
	return fkt_done();
}
