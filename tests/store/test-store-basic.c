// SPDX-License-Identifier: MIT
/*
 * test-store-basic.c - the page store's main paths: create tables, bulk
 * load, commit SET / ADD_I64 / APPEND batches (with results), read
 * back, concurrent committers (group commit), checkpoints, a clean
 * close and reopen that keeps everything, the presets, argument errors.
 */
#include "fktest.h"
#include "store-int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#define ROW 100
#define NACC 20000
#define NTHREADS 8
#define PER_THREAD 300

/* The store of the main tests: made by test_create_and_load, closed by
 * test_concurrent_commits, reopened by test_reopen. */
static char db_dir[4200];
static struct fk_store *st;
static uint32_t acc, hist;

static void fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	memset(row, 0, ROW);
	memcpy(row, &rowno, 8);
}

static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	struct fk_batch b;
	fk_batch_init(&b);
	for (int i = 0; i < PER_THREAD; i++) {
		uint8_t h[ROW] = {0};
		uint64_t a = (id * 7919 + (uint64_t)i * 104729) % NACC;
		int64_t res;
		uint64_t hrow;
		memcpy(h, &a, 8);
		fk_batch_reset(&b);
		if (fk_batch_add_i64(&b, acc, a, 8, 1, &res) ||
		    fk_batch_append(&b, hist, h, &hrow) ||
		    fk_store_commit(st, &b, NULL)) {
			fprintf(stderr, "commit failed\n");
			fkt_failures++;
			break;
		}
	}
	fk_batch_release(&b);
	return NULL;
}

static struct fk_store_opts small_opts(void)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 1 << 20; /* 128 buffers: evictions */
	o.segment_bytes = 256 * 1024;
	o.wal_segment_bytes = 1 << 20;
	o.max_wal_size_bytes = 8 << 20;
	return o;
}

/* Every wal_sync_method commits and recovers. */
static void test_sync_methods(void)
{
	static const int methods[] = {FK_WAL_FDATASYNC, FK_WAL_FSYNC,
				      FK_WAL_OPEN_DATASYNC};
	for (int m = 0; m < 3; m++) {
		char dir[4200];
		struct fk_store_opts o = small_opts();
		struct fk_store *s = NULL;
		struct fk_store_stats ss;
		struct fk_batch b;
		uint32_t t;
		uint8_t row[ROW] = {0};
		snprintf(dir, sizeof(dir), "%s/m%d", fkt_tmpdir(), m);
		o.wal_sync_method = methods[m];
		CHECK_EQ(fk_store_open(dir, &o, &s), 0);
		if (!s)
			continue;
		CHECK_EQ(fk_store_create_table(s, "h", ROW, &t), 0);
		fk_batch_init(&b);
		for (int i = 0; i < 10; i++) {
			fk_batch_reset(&b);
			CHECK_EQ(fk_batch_append(&b, t, row, NULL), 0);
			CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
		}
		fk_batch_release(&b);
		fk_store_get_stats(s, &ss);
		CHECK_EQ(ss.flush_lsn, ss.insert_lsn);
		CHECK_EQ(fk_store_close(s), 0);
		s = NULL;
		CHECK_EQ(fk_store_open(dir, &o, &s), 0);
		uint64_t rows = 0;
		if (s) {
			CHECK_EQ(fk_store_table_rows(s, t, &rows), 0);
			CHECK_EQ(fk_store_close(s), 0);
		}
		CHECK_EQ(rows, 10);
	}
}

/* Presets set the four flushing knobs. */
static void test_presets(void)
{
	struct fk_store_opts p;
	fk_store_opts_init(&p);
	CHECK(p.checkpoint_sorted == 1 && p.fsyncq_compaction == 1 &&
	      p.checkpoint_flush_after_bytes == 256 * 1024 &&
	      p.checkpoint_sync_spread_ms == FK_SYNC_SPREAD_AUTO);
	CHECK_EQ(fk_store_opts_preset(&p, "naive"), 0);
	CHECK(p.checkpoint_sorted == 0 && p.fsyncq_compaction == 0 &&
	      p.checkpoint_flush_after_bytes == 0 &&
	      p.checkpoint_sync_spread_ms == 0);
	CHECK_EQ(p.checkpoint_completion_target * 10, 9);
	CHECK_EQ(fk_store_opts_preset(&p, "bogus"), -EINVAL);
	/* The default never creates a store (fk_store_create_mode). */
	CHECK_EQ(p.create_mode, FK_STORE_OPEN_EXISTING);
}

/* Create the store and its tables, bulk load, read back, and the
 * argument errors of those calls.  -1 if the store could not be made
 * (nothing else can run). */
static int test_create_and_load(void)
{
	struct fk_store_opts o = small_opts();
	uint8_t row[ROW];

	snprintf(db_dir, sizeof(db_dir), "%s/db", fkt_tmpdir());
	CHECK_EQ(fk_store_open(db_dir, &o, &st), 0);
	if (!st)
		return -1;
	CHECK_EQ(fk_store_create_table(st, "accounts", ROW, &acc), 0);
	CHECK_EQ(fk_store_create_table(st, "history", ROW, &hist), 0);
	CHECK_EQ(fk_store_create_table(st, "accounts", ROW, NULL), -EEXIST);
	CHECK_EQ(fk_store_create_table(st, "big", 9000, NULL), -EINVAL);
	CHECK_EQ(fk_store_bulk_load(st, acc, NACC, fill, NULL), 0);
	CHECK_EQ(fk_store_bulk_load(st, acc, 1, fill, NULL), -ENOTEMPTY);
	uint64_t rows;
	CHECK_EQ(fk_store_table_rows(st, acc, &rows), 0);
	CHECK_EQ(rows, NACC);
	CHECK_EQ(fk_store_read(st, acc, 12345, row), 0);
	uint64_t v;
	memcpy(&v, row, 8);
	CHECK_EQ(v, 12345);
	CHECK_EQ(fk_store_read(st, acc, NACC, row), -ERANGE);
	CHECK_EQ(fk_store_read(st, 99, 0, row), -ENOENT);
	return 0;
}

/* One batch with every op kind, and its results. */
static void test_batch_ops(void)
{
	struct fk_store_stats ss;
	uint8_t row[ROW];
	struct fk_batch b;
	fk_batch_init(&b);
	int64_t res = 0;
	uint64_t hr1 = 99, hr2 = 99;
	CHECK_EQ(fk_batch_set(&b, acc, 5, 50, "hello", 5), 0);
	CHECK_EQ(fk_batch_add_i64(&b, acc, 5, 8, 40, &res), 0);
	CHECK_EQ(fk_batch_add_i64(&b, acc, 5, 8, 2, &res), 0);
	memset(row, 'h', ROW);
	CHECK_EQ(fk_batch_append(&b, hist, row, &hr1), 0);
	CHECK_EQ(fk_batch_append_copy(&b, hist, row, ROW, &hr2), 0);
	uint64_t lsn = 0;
	CHECK_EQ(fk_store_commit(st, &b, &lsn), 0);
	CHECK_EQ(res, 42);
	CHECK_EQ(hr1, 0);
	CHECK_EQ(hr2, 1);
	CHECK(lsn > 0);
	fk_store_get_stats(st, &ss);
	CHECK(ss.flush_lsn >= lsn);
	CHECK(ss.wal_fpi >= 2); /* first touch since the redo point */
	CHECK_EQ(fk_store_read(st, acc, 5, row), 0);
	CHECK(!memcmp(row + 50, "hello", 5));
	int64_t bal;
	memcpy(&bal, row + 8, 8);
	CHECK_EQ(bal, 42);
	fk_batch_release(&b);
}

/* Errors leave nothing applied. */
static void test_errors_apply_nothing(void)
{
	uint8_t row[ROW];
	int64_t bal;
	struct fk_batch b;
	fk_batch_init(&b);
	memset(row, 'h', ROW);
	CHECK_EQ(fk_batch_add_i64(&b, acc, 6, 8, 1, NULL), 0);
	CHECK_EQ(fk_batch_set(&b, acc, NACC + 5, 0, "x", 1), 0);
	CHECK_EQ(fk_store_commit(st, &b, NULL), -ERANGE);
	fk_batch_reset(&b);
	CHECK_EQ(fk_batch_set(&b, acc, 6, ROW - 2, "xyz", 3), 0);
	CHECK_EQ(fk_store_commit(st, &b, NULL), -EINVAL);
	fk_batch_reset(&b);
	CHECK_EQ(fk_batch_append_copy(&b, hist, row, ROW - 1, NULL), 0);
	CHECK_EQ(fk_store_commit(st, &b, NULL), -EINVAL);
	CHECK_EQ(fk_store_read(st, acc, 6, row), 0);
	memcpy(&bal, row + 8, 8);
	CHECK_EQ(bal, 0);
	fk_batch_release(&b);
}

/* Concurrent committers (group commit); a checkpoint in the middle;
 * then a clean close. */
static void test_concurrent_commits(void)
{
	struct fk_store_stats ss;
	uint64_t rows;
	pthread_t th[NTHREADS];
	for (uintptr_t i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	CHECK_EQ(fk_store_checkpoint(st), 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	fk_store_get_stats(st, &ss);
	CHECK_EQ(ss.commits, 1 + NTHREADS * PER_THREAD);
	CHECK(ss.wal_flushes <= ss.commits);
	/* Every WAL flush wrote and synced: both clocks ran. */
	CHECK(ss.wal_flushes > 0);
	CHECK(ss.wal_sync_ns > 0);
	CHECK(ss.wal_write_ns > 0);
	CHECK(ss.checkpoints >= 2);
	printf("commits %llu, WAL flushes %llu, backend writes %llu\n",
	       (unsigned long long)ss.commits,
	       (unsigned long long)ss.wal_flushes,
	       (unsigned long long)ss.buffers_backend);
	CHECK_EQ(fk_store_table_rows(st, hist, &rows), 0);
	CHECK_EQ(rows, 2 + NTHREADS * PER_THREAD);
	CHECK_EQ(fk_store_close(st), 0);
	st = NULL;
}

/* Reopen: everything there, by the clean path (no WAL replayed).  -1
 * if the store could not be reopened. */
static int test_reopen(void)
{
	struct fk_store_opts o = small_opts();
	struct fk_store_stats ss;
	uint8_t row[ROW];
	uint64_t rows, v;
	int64_t bal;

	CHECK_EQ(fk_store_open(db_dir, &o, &st), 0);
	if (!st)
		return -1;
	fk_store_get_stats(st, &ss);
	CHECK_EQ(ss.recovery_records, 0);
	uint32_t id, rb;
	CHECK_EQ(fk_store_table(st, "history", &id, &rb), 0);
	CHECK(id == hist && rb == ROW);
	CHECK_EQ(fk_store_table_rows(st, hist, &rows), 0);
	CHECK_EQ(rows, 2 + NTHREADS * PER_THREAD);
	int64_t sum = 0;
	for (uint64_t a = 0; a < NACC; a++) {
		CHECK_EQ(fk_store_read(st, acc, a, row), 0);
		memcpy(&bal, row + 8, 8);
		sum += bal;
	}
	CHECK_EQ(sum, 42 + NTHREADS * PER_THREAD);
	uint64_t hsum = 0;
	for (uint64_t r = 2; r < rows; r++) {
		CHECK_EQ(fk_store_read(st, hist, r, row), 0);
		memcpy(&v, row, 8);
		CHECK(v < NACC);
		hsum++;
	}
	CHECK_EQ(hsum, NTHREADS * PER_THREAD);
	CHECK_EQ(fk_store_close(st), 0);
	st = NULL;
	return 0;
}

int main(void)
{
	test_presets();
	if (test_create_and_load())
		return fkt_done();
	test_batch_ops();
	test_errors_apply_nothing();
	test_concurrent_commits();
	if (test_reopen())
		return fkt_done();
	test_sync_methods();
	return fkt_done();
}
