// SPDX-License-Identifier: MIT
/*
 * test-store-recovery.c - recovery from WAL in the cases a crash leaves:
 *  - a torn WAL tail (the last record garbled, or zeroed from its middle
 *    as if its write never reached the disk) recovers to the previous
 *    record, and the WAL is cut there: later commits and another
 *    recovery never see the old garbage;
 *  - a torn data page (half garbage) is restored from its full-page
 *    image; without full_page_writes the same damage is detected
 *    (-FK_ECORRUPT), never used silently;
 *  - a corrupt page read in normal operation fails with -FK_ECORRUPT.
 * The "crash" is a child process that commits and exits without
 * closing the store.
 */
#include "fktest.h"
#include "store-int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROW 64
#define NACC 1000
#define K 20
#define WALSEG (1u << 20)

static struct fk_store_opts opts(int fpw)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 1 << 20;
	o.segment_bytes = 1 << 20;
	o.wal_segment_bytes = WALSEG;
	o.full_page_writes = fpw;
	return o;
}

static void fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	memset(row, 0, ROW);
	memcpy(row + 8, &rowno, 8);
}

static void setup(const char *dir)
{
	struct fk_store_opts o = opts(1);
	struct fk_store *s = NULL;
	uint32_t acc, hist;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		exit(1);
	CHECK_EQ(fk_store_create_table(s, "accounts", ROW, &acc), 0);
	CHECK_EQ(fk_store_create_table(s, "history", ROW, &hist), 0);
	CHECK_EQ(fk_store_bulk_load(s, acc, NACC, fill, NULL), 0);
	CHECK_EQ(fk_store_close(s), 0);
}

/* In a child: open, run @n commits (add 1 to account i, append i),
 * store each commit's end LSN in @ends, exit without closing. */
static void crash_run(const char *dir, int first, int n, int fpw,
		      uint64_t *ends)
{
	int pfd[2];
	CHECK_EQ(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct fk_store_opts o = opts(fpw);
		struct fk_store *s;
		struct fk_batch b;
		uint32_t acc, hist;
		if (fk_store_open(dir, &o, &s))
			_exit(2);
		fk_store_table(s, "accounts", &acc, NULL);
		fk_store_table(s, "history", &hist, NULL);
		fk_batch_init(&b);
		for (uint64_t i = (uint64_t)first; i < (uint64_t)(first + n);
		     i++) {
			uint8_t h[ROW] = {0};
			uint64_t end;
			memcpy(h, &i, 8);
			fk_batch_reset(&b);
			fk_batch_add_i64(&b, acc, i * 53 % NACC, 0, 1, NULL);
			fk_batch_set(&b, acc, i * 53 % NACC, 16, "torn-test",
				     9);
			fk_batch_append(&b, hist, h, NULL);
			if (fk_store_commit(s, &b, &end))
				_exit(3);
			if (write(pfd[1], &end, 8) != 8)
				_exit(4);
		}
		_exit(0); /* no close: the store is "crashed" */
	}
	close(pfd[1]);
	for (int i = 0; i < n; i++)
		CHECK_EQ(read(pfd[0], &ends[i], 8), 8);
	close(pfd[0]);
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Reopen; expect @n commits applied. */
static void verify(const char *dir, int n)
{
	struct fk_store_opts o = opts(1);
	struct fk_store *s = NULL;
	uint32_t acc, hist;
	uint64_t rows;
	uint8_t row[ROW];
	int64_t sum = 0;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return;
	fk_store_table(s, "accounts", &acc, NULL);
	fk_store_table(s, "history", &hist, NULL);
	CHECK_EQ(fk_store_table_rows(s, hist, &rows), 0);
	CHECK_EQ(rows, n);
	for (uint64_t i = 0; i < rows; i++) {
		uint64_t v;
		CHECK_EQ(fk_store_read(s, hist, i, row), 0);
		memcpy(&v, row, 8);
		CHECK_EQ(v, i);
	}
	for (uint64_t i = 0; i < NACC; i++) {
		int64_t v;
		uint64_t id;
		CHECK_EQ(fk_store_read(s, acc, i, row), 0);
		memcpy(&v, row, 8);
		memcpy(&id, row + 8, 8);
		CHECK_EQ(id, i);
		sum += v;
	}
	CHECK_EQ(sum, n);
	CHECK_EQ(fk_store_close(s), 0);
}

static void wal_damage(const char *dir, uint64_t from, uint64_t to, int zero)
{
	char path[4300];
	snprintf(path, sizeof(path), "%s/wal/%016llX", dir,
		 (unsigned long long)(from / WALSEG));
	int fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	uint8_t buf[4096];
	uint64_t mid = (from + to) / 2;
	if (zero) {
		memset(buf, 0, sizeof(buf));
		for (uint64_t o = mid % WALSEG; o < WALSEG; o += sizeof(buf))
			CHECK_EQ(pwrite(fd, buf, sizeof(buf), (off_t)o),
				 sizeof(buf));
	} else {
		CHECK_EQ(pread(fd, buf, 1, (off_t)(mid % WALSEG)), 1);
		buf[0] ^= 0x5a;
		CHECK_EQ(pwrite(fd, buf, 1, (off_t)(mid % WALSEG)), 1);
	}
	close(fd);
}

static void torn_tail(const char *base, const char *name, int zero)
{
	char dir[4200];
	uint64_t ends[K];
	snprintf(dir, sizeof(dir), "%s/%s", base, name);
	setup(dir);
	crash_run(dir, 0, K, 1, ends);
	uint64_t start = ends[K - 2], end = ends[K - 1];
	if (start % WALSEG == 0)
		start += FK_WAL_SEG_HDR;
	CHECK(start / WALSEG == (end - 1) / WALSEG);
	wal_damage(dir, start, end, zero);
	verify(dir, K - 1);
	/* The cut holds: more commits, another crash, another recovery. */
	uint64_t more[3];
	crash_run(dir, K - 1, 3, 1, more);
	CHECK(more[0] > start);
	verify(dir, K - 1 + 3);
}

static void tear_page(const char *dir, uint32_t table, uint32_t block)
{
	char path[4300];
	uint8_t junk[4096];
	snprintf(path, sizeof(path), "%s/base/%u.0", dir, table);
	int fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	memset(junk, 0xA5, sizeof(junk));
	CHECK_EQ(
	    pwrite(fd, junk, sizeof(junk), (off_t)block * FK_PAGE_SIZE + 4096),
	    sizeof(junk));
	close(fd);
}

int main(void)
{
	const char *base = fkt_tmpdir();
	char dir[4200];
	uint64_t ends[K];

	torn_tail(base, "garbled", 0);
	torn_tail(base, "zeroed", 1);

	/* Torn data page restored from the full-page image. */
	snprintf(dir, sizeof(dir), "%s/fpi", base);
	setup(dir);
	crash_run(dir, 0, 1, 1, ends); /* changes account 0: block 0 */
	tear_page(dir, 1, 0);
	verify(dir, 1);

	/* Without full-page writes the torn page is detected. */
	snprintf(dir, sizeof(dir), "%s/nofpi", base);
	setup(dir);
	crash_run(dir, 0, 1, 0, ends);
	tear_page(dir, 1, 0);
	struct fk_store_opts o = opts(0);
	struct fk_store *s = NULL;
	CHECK_EQ(fk_store_open(dir, &o, &s), -FK_ECORRUPT);
	CHECK(s == NULL);

	/* A corrupt page is never used silently. */
	snprintf(dir, sizeof(dir), "%s/read", base);
	setup(dir);
	tear_page(dir, 1, 2);
	o = opts(1);
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (s) {
		uint8_t row[ROW];
		uint32_t rpp = (FK_PAGE_SIZE - FK_PAGE_HDR) / ROW;
		CHECK_EQ(fk_store_read(s, 1, 2 * rpp + 3, row), -FK_ECORRUPT);
		CHECK_EQ(fk_store_read(s, 1, rpp + 3, row), 0);
		CHECK_EQ(fk_store_close(s), 0);
	}
	return fkt_done();
}
