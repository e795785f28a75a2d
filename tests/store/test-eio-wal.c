// SPDX-License-Identifier: MIT
/*
 * test-eio-wal.c - the WAL's fdatasync fails with a REAL EIO.  The store
 * runs TPC-B from 4 threads on ext4 and on xfs whose device is the lab
 * disk daemon's image (flushkit-diskd, model ram: a loop device on a FUSE
 * file, tests/lib/fkfault.h); at a random moment the blocks of the
 * current and the next WAL segment files (found with FIEMAP) start
 * failing every write, so the kernel's write-back of the WAL fails, it
 * marks the pages clean with the new bytes still in the page cache, and
 * the fdatasync of the flusher returns EIO - once: the next fdatasync on
 * that descriptor would return 0.
 *
 * Each trial checks, on the running store: the commits waiting on that
 * sync return EIO; no commit returns 0 afterwards in the thread that saw
 * an error, every later commit fails with -FK_ESTOPPED or the error; no
 * acknowledged commit lies beyond the flush position the store stopped
 * at; no WAL sync, flush or checkpoint happens afterwards; close returns
 * EIO.  Then the fault is cleared and the store reopened (recovery):
 * every acknowledged commit is at its history row, every history row is
 * a commit that was acknowledged or returned an error, the TPC-B sums
 * agree.  Odd trials reopen in the same mount (the page cache still has
 * the WAL bytes that never reached the disk), then close, unmount and
 * mount the file system and check again; even trials unmount and mount
 * first.  wal_sync_method alternates fdatasync / fsync; every third
 * trial runs with full_page_writes off.
 *
 * Then the regression case of a bug this test found (fixed in wal.c,
 * load_seg): right after a checkpoint one commit's WAL sync fails; the
 * store is reopened in the same mount and its end-of-recovery
 * checkpoint is cut by a power cut (FS_IOC_GOINGDOWN without log flush)
 * just after its first table segment fsync; the file system is mounted
 * again and the store reopened.  Recovery used to read the WAL through
 * the page cache, replay the commit whose WAL never reached the disk
 * (the fdatasync it does before replaying returns 0: the error had been
 * reported already) and write its pages: after the power cut one table
 * had the commit and the others did not, and the TPC-B sums differed.
 *
 * Trials: 3 per file system (FK_TRIALS for more); FK_EIO_FS=ext4|xfs
 * runs one; FK_TEST_SEED fixes the random moments.  Skips (77) without
 * root, /dev/fuse or loop devices.
 */
#include "sys.h"
#include "test-eio-lib.h"

#include <stdio.h>

static struct eio_ctx ctx;

/* Fail every write to the blocks of the WAL segment the store inserts
 * into now and of the ones after it (preallocated already). */
static uint64_t fail_seg;
static int fail_wal(struct eio_ctx *c)
{
	struct fk_store_stats ss;
	int ranges = 0;
	fk_store_get_stats(c->s, &ss);
	uint64_t seg = ss.insert_lsn / c->opts.wal_segment_bytes;
	fail_seg = seg;
	for (uint64_t n = seg; n <= seg + 2; n++) {
		char path[800];
		snprintf(path, sizeof(path), "%s/wal/%016llX", c->dir,
			 (unsigned long long)n);
		if (access(path, F_OK))
			continue;
		int r = fkt_dev_fail_file(&c->st.dev, path, FKT_OP_WRITE, EIO);
		CHECK(r > 0);
		if (r > 0)
			ranges += r;
	}
	return ranges;
}

static int trial(struct eio_ctx *c, unsigned n)
{
	struct eio_run run;
	struct fkt_dev_counters k0, k1;
	int same_mount = n % 2 == 1;
	int failures = fkt_failures;

	eio_fill_opts(c, "smooth");
	c->opts.wal_sync_method = n % 2 ? FK_WAL_FSYNC : FK_WAL_FDATASYNC;
	c->opts.full_page_writes = n % 3 != 0;
	if (eio_open(c))
		return 1;
	printf("trial %u (%s, wal_sync_method %s, full_page_writes %d, "
	       "reopen %s):\n",
	       n, c->fstype, n % 2 ? "fsync" : "fdatasync",
	       c->opts.full_page_writes,
	       same_mount ? "in the same mount, then after a remount"
			  : "after a remount");
	size_t first_ack = c->nr_acks;
	eio_run_start(&run, c, n);
	unsigned want = 50 + (unsigned)(rand() % 250);
	CHECK(eio_run_wait_acks(&run, want, 30000));
	CHECK_EQ(fkt_dev_counters(&c->st.dev, &k0), 0);
	int ranges = fail_wal(c);
	CHECK(eio_run_join(&run, 30000));
	CHECK_EQ(fkt_dev_counters(&c->st.dev, &k1), 0);
	printf("  fault: %d extents of the WAL segments fail writes; the "
	       "device failed %llu writes\n",
	       ranges, (unsigned long long)(k1.write_faults - k0.write_faults));
	CHECK(k1.write_faults > k0.write_faults);
	eio_check_run(&run, first_ack, -EIO, 1);
	CHECK_EQ(fk_store_close(c->s), -EIO);
	c->s = NULL;
	CHECK_EQ(fkt_dev_clear(&c->st.dev), 0);

	if (same_mount) {
		size_t u1 = 0, u2 = 0;
		/* The premise: cached WAL bytes that the device lacks. */
		long d = 0;
		for (uint64_t seg = fail_seg; seg <= fail_seg + 2; seg++) {
			char path[800];
			snprintf(path, sizeof(path), "%s/wal/%016llX", c->dir,
				 (unsigned long long)seg);
			long k =
			    access(path, F_OK) ? 0 : eio_cache_vs_disk(path);
			CHECK(k >= 0);
			d += k;
		}
		printf("  page cache: %ld blocks of the WAL differ from the "
		       "device (written, failed, kept clean)\n",
		       d);
		CHECK(d > 0);
		eio_verify(c, "reopen, same mount", &u1);
		eio_remount(c);
		eio_verify(c, "after clean close + remount", &u2);
		/* What the store showed after a clean close is durable. */
		CHECK_EQ(u1, u2);
	} else {
		eio_remount(c);
		eio_verify(c, "reopen after remount", NULL);
	}
	return fkt_failures != failures;
}

/* ---- the regression case: a power cut during same-mount recovery ---- */

static int (*real_fsync)(int fd);
static atomic_int cut_armed, cut_done;

/* After the first successful fsync of a branches/tellers/accounts
 * segment: cut the power of the inner file system. */
static int fsync_then_cut(int fd)
{
	int r = real_fsync(fd);
	char link[64], path[1024];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	path[n < 0 ? 0 : n] = 0;
	const char *b = strstr(path, "/store/base/");
	if (!r && b && atoi(b + 12) != (int)ctx.t.history &&
	    atomic_exchange(&cut_armed, 0)) {
		CHECK_EQ(fkt_fs_goingdown(&ctx.st.fs, FKT_GOINGDOWN_NOLOGFLUSH),
			 0);
		atomic_store(&cut_done, 1);
	}
	return r;
}

static int cut_during_recovery(struct eio_ctx *c)
{
	int failures = fkt_failures;
	struct fk_batch b;
	struct tpcb_txn x;
	struct tpcb_rng rng;

	printf("power cut in the end-of-recovery checkpoint of a same-mount "
	       "reopen after a WAL EIO (%s):\n",
	       c->fstype);
	eio_fill_opts(c, "smooth");
	if (eio_open(c))
		return 1;
	/* A fresh redo point: the next commit logs full-page images of
	 * all its pages, so only its own record could restore them. */
	CHECK_EQ(fk_store_checkpoint(c->s), 0);
	fail_wal(c);
	tpcb_rng_seed(&rng, c->seed);
	fk_batch_init(&b);
	tpcb_txn_draw(&c->t, &rng, &x);
	x.txid = 0xEE00000000000000ull;
	CHECK_EQ(tpcb_txn_commit(c->s, &c->t, &b, &x), -EIO);
	eio_push_failed(c, x.txid);
	fk_batch_release(&b);
	CHECK_EQ(fk_store_close(c->s), -EIO);
	c->s = NULL;
	CHECK_EQ(fkt_dev_clear(&c->st.dev), 0);

	/* Reopen in the same mount; sequential fsyncs go through fk_sys. */
	c->opts.sync_io = FK_SYNC_IO_SEQUENTIAL;
	real_fsync = fk_sys.fsync;
	atomic_store(&cut_done, 0);
	atomic_store(&cut_armed, 1);
	fk_sys.fsync = fsync_then_cut;
	struct fk_store *s = NULL;
	int r = fk_store_open(c->dir, &c->opts, &s);
	fk_sys.fsync = real_fsync;
	atomic_store(&cut_armed, 0);
	if (atomic_load(&cut_done)) {
		printf("  the power was cut after a table fsync of the "
		       "end-of-recovery checkpoint (open: %s)\n",
		       r ? fk_strerror(r) : "0");
		if (s)
			fk_store_close(s); /* fails: the fs is down */
	} else {
		printf("  recovery wrote no table page (the failed commit "
		       "was not replayed): no power cut (open: %s)\n",
		       r ? fk_strerror(r) : "0");
		CHECK_EQ(r, 0);
		if (s)
			CHECK_EQ(fk_store_close(s), 0);
	}
	eio_remount(c);
	eio_verify(c,
		   atomic_load(&cut_done) ? "after the power cut and a remount"
					  : "after a remount",
		   NULL);
	return fkt_failures != failures;
}

int main(void)
{
	return eio_main(&ctx, trial, cut_during_recovery);
}
