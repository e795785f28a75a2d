// SPDX-License-Identifier: MIT
/*
 * test-store-fault.c - the page store under injected I/O errors:
 *  - fsync EIO on one of 4 table segments during a checkpoint's sync
 *    phase, with each backend (sequential and threads: injected through
 *    the syscall table; io_uring: through the CQE hook): the checkpoint
 *    fails with the error, the other segments' fsyncs still complete
 *    (each file fsynced once, the failed one never again), the control
 *    file is not replaced (the redo pointer does not advance), no page
 *    is written afterwards, later calls return -FK_ESTOPPED, close
 *    returns the error, and a reopen recovers every acknowledged commit;
 *  - fdatasync EIO on the WAL: that commit fails with the error, the
 *    store stops, the fsync is never retried, and a reopen recovers
 *    every acknowledged commit;
 *  - ENOSPC while creating a WAL segment, and no segment can be
 *    recycled (renames fail too): the commit fails cleanly (nothing
 *    applied), the store goes on, and the next commit works.
 */
#include "fktest.h"
#include "fsync_batch.h"
#include "store-int.h"
#include "sys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ROW 100
#define NACC 2000

static struct fk_store_opts opts(void)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 1 << 20;
	o.segment_bytes = 1 << 20;
	o.wal_segment_bytes = 128 << 10;
	o.checkpoint_timeout_ms = 3600 * 1000;
	o.max_wal_size_bytes = 1ull << 40;
	return o;
}

static void fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	(void)rowno;
	memset(row, 0, ROW);
}

static struct fk_store *setup_opts(const char *dir, uint32_t *acc,
				   struct fk_store_opts o)
{
	struct fk_store *s = NULL;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		exit(1);
	CHECK_EQ(fk_store_create_table(s, "accounts", ROW, acc), 0);
	CHECK_EQ(fk_store_bulk_load(s, *acc, NACC, fill, NULL), 0);
	return s;
}

static struct fk_store *setup(const char *dir, uint32_t *acc)
{
	return setup_opts(dir, acc, opts());
}

static int add(struct fk_store *s, uint32_t acc, uint64_t row, int64_t d)
{
	struct fk_batch b;
	fk_batch_init(&b);
	fk_batch_add_i64(&b, acc, row, 0, d, NULL);
	int r = fk_store_commit(s, &b, NULL);
	fk_batch_release(&b);
	return r;
}

static int64_t get(struct fk_store *s, uint32_t acc, uint64_t row)
{
	uint8_t buf[ROW];
	int64_t v = -1;
	if (fk_store_read(s, acc, row, buf) == 0)
		memcpy(&v, buf, 8);
	return v;
}

/* Reopen and check that rows [0, n) hold @v (and row n holds @vn). */
static void check_reopen(const char *dir, uint32_t acc, uint64_t n, int64_t v)
{
	struct fk_store_opts o = opts();
	struct fk_store *s = NULL;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return;
	for (uint64_t i = 0; i < n; i++)
		CHECK_EQ(get(s, acc, i * 37 % NACC), v);
	CHECK_EQ(fk_store_close(s), 0);
}

/* The io_uring backend's fault: -EIO for the fsync of base/1.1. */
static unsigned uring_eio_fired, uring_fsyncs[4];
static int uring_eio(const struct fk_fsync_req *req, size_t index, int res)
{
	char link[64], path[512];
	(void)index;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", req->fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	path[n < 0 ? 0 : n] = 0;
	const char *p = strstr(path, "/base/1.");
	unsigned seg = p ? (unsigned)atoi(p + 8) : 99;
	if (seg < 4)
		uring_fsyncs[seg]++;
	if (seg == 1) {
		uring_eio_fired++;
		return -EIO;
	}
	return res;
}

static void data_fsync_eio(const char *base, int sync_io)
{
	char dir[4200];
	uint32_t acc;
	snprintf(dir, sizeof(dir), "%s/data-eio-%s", base,
		 fk_sync_io_name(sync_io));
	struct fk_store_opts o = opts();
	o.segment_bytes = 64 << 10; /* 25 pages: 4 segments */
	o.sync_io = sync_io;
	o.sync_jobs = 4;
	if (sync_io == FK_SYNC_IO_URING) {
		struct fk_fsync_batch *b = NULL;
		struct fk_fsync_batch_opts bo;
		fk_fsync_batch_opts_init(&bo);
		bo.sync_io = FK_SYNC_IO_URING;
		int err = fk_fsync_batch_create(&bo, &b);
		fk_fsync_batch_destroy(b);
		if (err) {
			printf("io_uring refused (%s): not tested\n",
			       fk_strerror(err));
			return;
		}
	}
	struct fk_store *s = setup_opts(dir, &acc, o);
	for (uint64_t i = 0; i < 200; i++)
		CHECK_EQ(add(s, acc, i * 37 % NACC, 5), 0);

	fkt_trace_start();
	if (sync_io == FK_SYNC_IO_URING) {
		uring_eio_fired = 0;
		memset(uring_fsyncs, 0, sizeof(uring_fsyncs));
		fk_uring_cqe_hook = uring_eio;
	} else {
		fkt_fault_set("fsync", "/base/1.1", 1, -EIO);
	}
	CHECK_EQ(fk_store_checkpoint(s), -EIO);
	/* Every segment of the batch fsynced once, the failed one too. */
	if (sync_io == FK_SYNC_IO_URING) {
		CHECK_EQ(uring_eio_fired, 1);
		for (int seg = 0; seg < 4; seg++)
			CHECK_EQ(uring_fsyncs[seg], 1);
	} else {
		CHECK_EQ(fkt_fault_fired(), 1);
		for (int seg = 0; seg < 4; seg++) {
			char suf[16];
			snprintf(suf, sizeof(suf), "/base/1.%d", seg);
			CHECK_EQ(fkt_trace_nr("fsync", suf), 1);
		}
	}
	/* C4: no checkpoint record, no control file, no more page
	 * writes, no second fsync of the file. */
	long f = fkt_trace_count() ? (long)fkt_trace_count() - 1 : 0;
	CHECK_EQ(fkt_trace_find("rename", "/control", 0), -1);
	CHECK_EQ(fkt_trace_find("open", "/control.tmp", 0), -1);
	CHECK_EQ(fk_store_commit(s, NULL, NULL), -FK_ESTOPPED);
	CHECK_EQ(add(s, acc, 1, 1), -FK_ESTOPPED);
	CHECK_EQ(get(s, acc, 0), -1);
	CHECK_EQ(fk_store_checkpoint(s), -FK_ESTOPPED);
	struct fk_store_stats ss;
	fk_store_get_stats(s, &ss);
	CHECK_EQ(ss.error, -EIO);
	CHECK_EQ(fk_store_close(s), -EIO);
	for (int seg = 0; seg < 4; seg++) {
		char suf[16];
		snprintf(suf, sizeof(suf), "/base/1.%d", seg);
		CHECK_EQ(fkt_trace_find("pwrite", suf, (size_t)f), -1);
	}
	if (sync_io == FK_SYNC_IO_URING) {
		CHECK_EQ(uring_eio_fired, 1);
		CHECK_EQ(uring_fsyncs[1], 1);
	} else {
		CHECK_EQ(fkt_trace_nr("fsync", "/base/1.1"), 1);
	}
	fk_uring_hooks_reset();
	fkt_fault_clear();
	fkt_trace_stop();
	check_reopen(dir, acc, 200, 5);
}

static void wal_fsync_eio(const char *base)
{
	char dir[4200], seg[32];
	uint32_t acc;
	snprintf(dir, sizeof(dir), "%s/wal-eio", base);
	struct fk_store *s = setup(dir, &acc);
	for (uint64_t i = 0; i < 50; i++)
		CHECK_EQ(add(s, acc, i * 37 % NACC, 3), 0);
	struct fk_store_stats ss;
	fk_store_get_stats(s, &ss);
	snprintf(seg, sizeof(seg), "/wal/%016llX",
		 (unsigned long long)(ss.insert_lsn / (128 << 10)));
	fkt_trace_start();
	fkt_fault_set("fdatasync", seg, 1, -EIO);
	CHECK_EQ(add(s, acc, 50 * 37 % NACC, 3), -EIO);
	CHECK_EQ(add(s, acc, 51 * 37 % NACC, 3), -FK_ESTOPPED);
	CHECK_EQ(fk_store_checkpoint(s), -FK_ESTOPPED);
	CHECK_EQ(fk_store_close(s), -EIO);
	CHECK_EQ(fkt_trace_nr("fdatasync", seg), 1); /* never retried */
	CHECK_EQ(fkt_trace_nr("pwrite", "/base/1.0"), 0);
	fkt_fault_clear();
	fkt_trace_stop();
	check_reopen(dir, acc, 50, 3);
}

/* No WAL segment can be recycled either (a full directory block): a
 * rename of a segment (16 hex digits) fails with ENOSPC. */
static int (*next_renameat)(int, const char *, int, const char *);

static int norecycle_renameat(int olddirfd, const char *oldpath, int newdirfd,
			      const char *newpath)
{
	if (strlen(oldpath) == 16)
		return -ENOSPC;
	return next_renameat(olddirfd, oldpath, newdirfd, newpath);
}

static void wal_enospc(const char *base)
{
	char dir[4200];
	uint32_t acc;
	snprintf(dir, sizeof(dir), "%s/wal-enospc", base);
	struct fk_store *s = setup(dir, &acc);
	fkt_trace_start();
	fkt_fault_set("pwrite", "/wal/segtemp", 0, -ENOSPC);
	/* The first ENOSPC lowers the checkpoint trigger (W11): the
	 * checkpoints it brings would recycle the segments the WAL has,
	 * and the commits would never need a new one.  Recycling fails
	 * too, so one does. */
	next_renameat = fk_sys.renameat;
	fk_sys.renameat = norecycle_renameat;
	/* Fill the preallocated segments (full-page images are big). */
	static int64_t expect[NACC];
	int r = 0;
	uint64_t i, ok = 0, row = 0;
	for (i = 0; i < 20000 && !r; i++) {
		row = i * 37 % NACC;
		r = add(s, acc, row, 1);
		if (!r) {
			expect[row]++;
			ok++;
		}
	}
	CHECK_EQ(r, -ENOSPC);
	CHECK_EQ(get(s, acc, row), expect[row]); /* not applied */
	struct fk_store_stats ss;
	fk_store_get_stats(s, &ss);
	CHECK_EQ(ss.error, 0);
	/* The fault off, the tracing table kept until the close: the
	 * checkpointer (asked for a checkpoint by the ENOSPC commit) may be
	 * running, and the table is only swapped with no store open. */
	fkt_fault_clear();
	CHECK_EQ(add(s, acc, row, 1), 0);
	CHECK_EQ(get(s, acc, row), expect[row] + 1);
	CHECK_EQ(fk_store_close(s), 0);
	fk_sys.renameat = next_renameat;
	fkt_trace_stop();
	printf("ENOSPC after %llu commits\n", (unsigned long long)ok);
}

int main(void)
{
	const char *base = fkt_tmpdir();
	data_fsync_eio(base, FK_SYNC_IO_SEQUENTIAL);
	data_fsync_eio(base, FK_SYNC_IO_THREADS);
	data_fsync_eio(base, FK_SYNC_IO_URING);
	wal_fsync_eio(base);
	wal_enospc(base);
	return fkt_done();
}
