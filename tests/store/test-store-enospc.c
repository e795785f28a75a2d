// SPDX-License-Identifier: MIT
/*
 * test-store-enospc.c - the page store on a real file system that fills
 * up (ENOSPC on WAL append and mid-checkpoint): a small loop-mounted ext4 (mkfs
 * -m 0: no root reserve) and a 300 MiB xfs, filled with a ballast file
 * (fallocate, then small writes, until the kernel says ENOSPC).  No mock: every
 * ENOSPC comes from the kernel.
 *
 * Under the TPC-B workload of bench/tpcb/workload.c, one store handle:
 *  A. WAL append: the fs is filled; commits go on into the WAL segments
 *     the checkpointer preallocated (zero-filled: every WAL segment file
 *     has all its blocks), then one needs a new segment and fails with
 *     -ENOSPC, nothing applied, the store NOT stopped (stats.error 0);
 *     reads still work; the ballast is deleted and commits succeed again
 *     in the same handle.
 *  B. mid-checkpoint: with dirty pages (history appends: blocks not yet
 *     allocated) the fs is filled; a checkpoint fails with -ENOSPC in its
 *     write phase, the store not stopped; commits either succeed or fail
 *     with -ENOSPC; ballast deleted: the checkpoint and commits succeed.
 *  C. control file: right after a checkpoint (nothing dirty) the fs is
 *     filled; the next checkpoint's control.tmp (or its record's WAL
 *     segment) meets ENOSPC: the checkpoint fails, the store is NOT
 *     stopped (it used to be: regression), no control.tmp is left.
 *  D. power cut while full: commits until ENOSPC, FS_IOC_GOINGDOWN
 *     without log flush, remount, ballast deleted, reopen (recovery).
 * After each of A-D every acknowledged commit is in history at its row
 * and the TPC-B sums hold (checked after D's recovery and after a clean
 * close and reopen).
 *
 * Then "flushkit bench tpcb" (in-process) on a full fs: exit 1 and
 * "client N: commit: No space left on device" on stderr; after the
 * ballast is deleted, --check passes and a run succeeds.
 *
 * FK_ENOSPC_FS=ext4|xfs runs one file system only.  FK_TEST_SEED fixes
 * the transactions drawn.  Needs root and loop devices (else skip).
 */
#include "cli.h"
#include "fkacks.h"
#include "fkloop.h"
#include "fktest.h"
#include "workload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WAL_SEG FKT_FULL_WAL_SEG

static struct fkt_fs fs;
static char store_dir[700], ballast[700];
static unsigned seed;

/* ---- ballast ---- */

/* Fill the file system until the kernel refuses (fkt_fs_fill: fallocate
 * in halving chunks, then small writes, until nothing more fits).
 * Returns the ballast size in bytes. */
static uint64_t fill(void)
{
	uint64_t off = fkt_fs_fill(ballast);
	CHECK(access(ballast, F_OK) == 0); /* the ballast could be created */
	return off;
}

static void unfill(void)
{
	CHECK_EQ(fkt_fs_unfill(&fs, ballast), 0);
}

/* ---- acknowledged transactions (fkacks.h) ---- */

static struct fkt_acks acks;

static int txn(struct fk_store *s, const struct tpcb_tables *t,
	       struct tpcb_rng *rng, struct fk_batch *b)
{
	return fkt_acks_txn(&acks, s, t, rng, b);
}

static int store_error(struct fk_store *s)
{
	struct fk_store_stats st;
	fk_store_get_stats(s, &st);
	return st.error;
}

/* W8: every WAL segment file has all its blocks (zero-filled, not
 * sparse, not fallocated-unwritten is not checkable here: blocks). */
static void check_wal_allocated(void)
{
	char path[800];
	snprintf(path, sizeof(path), "%s/wal", store_dir);
	DIR *d = opendir(path);
	CHECK(d != NULL);
	if (!d)
		return;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strlen(de->d_name) != 16)
			continue;
		struct stat sb;
		CHECK_EQ(fstatat(dirfd(d), de->d_name, &sb, 0), 0);
		CHECK_EQ(sb.st_size, WAL_SEG);
		if ((uint64_t)sb.st_blocks * 512 < WAL_SEG)
			fprintf(stderr, "wal/%s: %llu of %u bytes allocated\n",
				de->d_name,
				(unsigned long long)sb.st_blocks * 512,
				WAL_SEG);
		CHECK((uint64_t)sb.st_blocks * 512 >= WAL_SEG);
		n++;
	}
	closedir(d);
	CHECK(n >= 2);
}

/* Wait (up to 5 s) until the checkpointer has WAL segments ready two
 * past the insert position: a commit meets no segment creation. */
static void wait_prealloc(struct fk_store *s)
{
	for (int i = 0; i < 500; i++) {
		struct fk_store_stats st;
		fk_store_get_stats(s, &st);
		char path[800];
		snprintf(path, sizeof(path), "%s/wal/%016llX", store_dir,
			 (unsigned long long)(st.insert_lsn / WAL_SEG + 2));
		if (access(path, F_OK) == 0)
			return;
		usleep(10000);
	}
	CHECK(!"WAL segments preallocated ahead");
}

/* 32 MiB of buffers: no evictions, A is the WAL; the log printed. */
static void store_opts(struct fk_store_opts *o)
{
	fkt_full_store_opts(o, 32u << 20, 1);
}

static void run_store(void)
{
	struct fk_store_opts o;
	struct fk_store *s;
	struct tpcb_tables t;
	struct tpcb_rng rng;
	struct fk_batch b;
	int r;

	store_opts(&o);
	fkt_acks_init(&acks, 1);
	tpcb_rng_seed(&rng, seed);
	fk_batch_init(&b);
	CHECK_EQ(fk_store_open(store_dir, &o, &s), 0);
	if (fkt_failures)
		return;
	CHECK_EQ(tpcb_create(s, 1, &t, NULL, NULL), 0);
	for (int i = 0; i < 50; i++)
		CHECK_EQ(txn(s, &t, &rng, &b), 0);
	CHECK_EQ(fk_store_checkpoint(s), 0);
	wait_prealloc(s);

	/* A: WAL append. */
	fkt_store_log_clear();
	uint64_t bal = fill();
	size_t before = acks.n;
	r = fkt_acks_until_error(&acks, s, &t, &rng, &b, 20000);
	printf("%s A: ballast %llu KiB; %zu commits into preallocated WAL, "
	       "then: %s\n",
	       fs.type, (unsigned long long)bal >> 10, acks.n - before,
	       fk_strerror(r));
	CHECK_EQ(r, -ENOSPC);
	CHECK(acks.n - before > 0); /* the preallocated segments */
	CHECK_EQ(store_error(s), 0);
	CHECK(fkt_store_log_has(
	    "cannot create WAL segment: No space left on device"));
	CHECK(!fkt_store_log_has("store stopped"));
	/* Not sticky, and nothing half-applied: again the same answer
	 * (a smaller record, without a full-page image, may still fit into
	 * the rest of the current segment: commits until one needs a new
	 * segment); reads work. */
	r = fkt_acks_until_error(&acks, s, &t, &rng, &b, 20000);
	CHECK_EQ(r, -ENOSPC);
	CHECK_EQ(store_error(s), 0);
	uint8_t row[TPCB_ROW_BYTES];
	CHECK_EQ(fk_store_read(s, t.branches, 0, row), 0);
	check_wal_allocated();
	unfill();
	for (int i = 0; i < 200; i++)
		CHECK_EQ(txn(s, &t, &rng, &b), 0);
	CHECK_EQ(store_error(s), 0);

	/* B: mid-checkpoint, with history pages in unallocated blocks. */
	wait_prealloc(s);
	fkt_store_log_clear();
	fill();
	r = fk_store_checkpoint(s);
	printf("%s B: checkpoint on a full fs: %s\n", fs.type, fk_strerror(r));
	CHECK_EQ(r, -ENOSPC);
	CHECK_EQ(store_error(s), 0);
	CHECK(fkt_store_log_has("FAILED: No space left on device"));
	int ok = 0, nospc = 0;
	for (int i = 0; i < 50; i++) {
		r = txn(s, &t, &rng, &b);
		CHECK(r == 0 || r == -ENOSPC);
		ok += r == 0;
		nospc += r == -ENOSPC;
	}
	printf("%s B: 50 commits while full: %d ok, %d ENOSPC\n", fs.type, ok,
	       nospc);
	CHECK_EQ(store_error(s), 0);
	unfill();
	CHECK_EQ(fk_store_checkpoint(s), 0);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(txn(s, &t, &rng, &b), 0);

	/* C: nothing dirty; the control file (or the record's segment). */
	CHECK_EQ(fk_store_checkpoint(s), 0);
	wait_prealloc(s);
	fkt_store_log_clear();
	fill();
	r = fk_store_checkpoint(s);
	printf("%s C: checkpoint with nothing dirty on a full fs: %s\n",
	       fs.type, fk_strerror(r));
	CHECK_EQ(r, -ENOSPC);
	CHECK_EQ(store_error(s), 0);
	CHECK(!fkt_store_log_has("store stopped"));
	char tmp[800];
	snprintf(tmp, sizeof(tmp), "%s/control.tmp", store_dir);
	CHECK(access(tmp, F_OK) != 0);
	unfill();
	CHECK_EQ(fk_store_checkpoint(s), 0);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(txn(s, &t, &rng, &b), 0);
	CHECK_EQ(store_error(s), 0);

	/* D: a power cut while full, dirty pages and unfinished WAL. */
	wait_prealloc(s);
	fill();
	r = fkt_acks_until_error(&acks, s, &t, &rng, &b, 20000);
	CHECK_EQ(r, -ENOSPC);
	/* Its close fails: the shutdown checkpoint meets EIO. */
	fkt_acks_power_cut(&fs, &s);
	unlink(ballast);
	s = fkt_acks_open_verify(&acks, store_dir, &o, "after the power cut");
	if (!s || fkt_failures)
		goto out;
	for (int i = 0; i < 100; i++)
		CHECK_EQ(txn(s, &t, &rng, &b), 0);
	CHECK_EQ(fk_store_close(s), 0);
	fkt_acks_reopen_check(&acks, store_dir, &o, "after a clean reopen");
out:
	fk_batch_release(&b);
	fkt_acks_release(&acks);
}

/* ---- the command ---- */

/* "flushkit bench tpcb --no-results ARGS..." in this process, its
 * stderr into @errfile (NULL: left alone). */
#define bench(errfile, ...)                                                    \
	fkt_run_cmd_err(cmd_bench_tpcb, errfile, "tpcb", "--no-results",       \
			__VA_ARGS__)

static void run_cli(void)
{
	char dir[700], errfile[700];
	snprintf(dir, sizeof(dir), "%s/tpcb", fs.mnt);
	snprintf(errfile, sizeof(errfile), "%s/stderr", fkt_tmpdir());
	CHECK_EQ(bench(NULL, "-i", "-s", "1", "--data-dir", dir,
		       "--wal-segment-size=256k", NULL),
		 0);
	/* Completely full: the open cannot write the control file. */
	fill();
	int ret = bench(errfile, "-c", "2", "-T", "20", "--data-dir", dir,
			"--log-checkpoints=off", NULL);
	char *err = fkt_read_file(errfile, NULL);
	printf("%s: bench tpcb on a full fs: exit %d, stderr:\n%s", fs.type,
	       ret, err ? err : "(none)\n");
	CHECK_EQ(ret, 1);
	CHECK(err && strstr(err, "open store '") &&
	      strstr(err, "': No space left on device"));
	free(err);
	unfill();

	/* 512 KiB free: the open works, the run meets ENOSPC in a commit
	 * once the preallocated WAL segments are used up. */
	char reserve[800];
	snprintf(reserve, sizeof(reserve), "%s/reserve", fs.mnt);
	int fd = open(reserve, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0 && fallocate(fd, 0, 0, 512 << 10) == 0);
	close(fd);
	fill();
	CHECK_EQ(unlink(reserve), 0);
	sync();
	ret = bench(errfile, "-c", "2", "-T", "20", "--data-dir", dir,
		    "--log-checkpoints=off", NULL);
	err = fkt_read_file(errfile, NULL);
	printf("%s: bench tpcb on a nearly full fs: exit %d, stderr:\n%s",
	       fs.type, ret, err ? err : "(none)\n");
	CHECK_EQ(ret, 1);
	CHECK(err && strstr(err, ": commit: No space left on device"));
	free(err);
	unfill();
	CHECK_EQ(bench(NULL, "--check", "--data-dir", dir, NULL), 0);
	CHECK_EQ(bench(NULL, "-c", "2", "-t", "100", "--check", "--data-dir",
		       dir, "--log-checkpoints=off", NULL),
		 0);
}

static void run_fs(const char *type, uint64_t bytes)
{
	if (fkt_fs_create_or_skip(&fs, type, type, bytes))
		return;
	snprintf(store_dir, sizeof(store_dir), "%s/store", fs.mnt);
	snprintf(ballast, sizeof(ballast), "%s/ballast", fs.mnt);
	run_store();
	fkt_rm_rf(store_dir);
	unlink(ballast);
	if (!fkt_failures)
		run_cli();
	fkt_fs_destroy(&fs);
}

int main(void)
{
	seed = fkt_full_test_start(&fs);
	const char *only = getenv("FK_ENOSPC_FS");
	if (!only || !strcmp(only, "ext4"))
		run_fs("ext4", 48ull << 20);
	if (!fkt_failures && (!only || !strcmp(only, "xfs")))
		run_fs("xfs", 300ull << 20);
	return fkt_done();
}
