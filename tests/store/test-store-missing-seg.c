// SPDX-License-Identifier: MIT
/*
 * test-store-missing-seg.c - a table segment file lost or truncated from
 * outside is corruption, never a new empty file (store invariant S7).
 *
 * Regression: fk_store_seg_fd created a missing base/T.S on first use,
 * so a deleted segment came back empty and its pages read as all-zero
 * "never written" pages (recovery replayed changes onto them).
 *
 * A store with 64 KiB segments (8 blocks each) and a bulk-loaded table
 * of 20 full pages: base/1.0, 1.1 (8 blocks each) and 1.2 (4 blocks).
 *  1. closed cleanly, then base/1.1 deleted: fk_store_open fails with
 *     -FK_ECORRUPT, a log line names base/1.1, and no base/1.1 is made;
 *  2. base/1.0 truncated to 0 bytes, or base/1.2 one page short: the
 *     same, naming the file, which is left as it was;
 *  3. after a kill -9 (recovery needed), base/1.1 deleted or truncated:
 *     the same;
 *  4. legitimate new segments must still recover after a kill -9:
 *     a. rows appended after the last checkpoint into a new base/1.3:
 *        reopen recovers every acknowledged row;
 *     b. the same with base/1.3 deleted (only the WAL after the redo
 *        point knows its blocks): recovery creates it again;
 *     c. rows appended during a checkpoint (after its redo point,
 *        before its record, which counts them) into a new base/1.3
 *        whose pages were never written: the control file counts rows
 *        in a segment that is still empty, which is right; reopen
 *        recovers every row.  The moment is chosen through the syscall
 *        table: the checkpointer's first fsync waits while the appends
 *        commit.
 */
#include "fktest.h"
#include "store-int.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROW 64
#define RPP ((FK_PAGE_SIZE - FK_PAGE_HDR) / ROW) /* 127 */
#define SEG_BYTES (8 * FK_PAGE_SIZE)
#define NPAGES 20
#define NLOAD (NPAGES * RPP) /* blocks 0..19: segments 0, 1, 2 */
#define NAPPEND (6 * 100)    /* blocks 20..24: into segment 3 */
#define ACC 1

static struct fk_store_opts opts(void)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 256 * FK_PAGE_SIZE; /* no eviction */
	o.segment_bytes = SEG_BYTES;
	o.wal_segment_bytes = 1 << 20;
	o.checkpoint_timeout_ms = 3600000;
	o.sync_io = FK_SYNC_IO_SEQUENTIAL; /* fsyncs through fk_sys */
	o.log = fkt_store_log;
	return o;
}

static void fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	memset(row, 0, ROW);
	memcpy(row, &rowno, 8);
	memset((uint8_t *)row + 8, 0x5a, 8);
}

static void setup(const char *dir)
{
	struct fk_store_opts o = opts();
	struct fk_store *s = NULL;
	uint32_t id;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		exit(1);
	CHECK_EQ(fk_store_create_table(s, "accounts", ROW, &id), 0);
	CHECK_EQ(id, ACC);
	CHECK_EQ(fk_store_bulk_load(s, ACC, NLOAD, fill, NULL), 0);
	CHECK_EQ(fk_store_close(s), 0);
}

static void seg_path(char *out, size_t len, const char *dir, int seg)
{
	snprintf(out, len, "%s/base/%u.%d", dir, ACC, seg);
}

static long long seg_size(const char *dir, int seg)
{
	char p[4300];
	struct stat st;
	seg_path(p, sizeof(p), dir, seg);
	return stat(p, &st) == 0 ? (long long)st.st_size : -1;
}

/* Open must fail with -FK_ECORRUPT and a log line naming base/1.@seg
 * and @what; the file must be as it was (@size, -1: absent). */
static void expect_corrupt(const char *dir, int seg, const char *what,
			   const char *label)
{
	struct fk_store_opts o = opts();
	struct fk_store *s = NULL;
	char name[32];
	long long before = seg_size(dir, seg);
	fkt_store_log_clear();
	int r = fk_store_open(dir, &o, &s);
	printf("%s: open: %s\n%s", label, fk_strerror(r), fkt_store_log_text());
	CHECK_EQ(r, -FK_ECORRUPT);
	CHECK(s == NULL);
	if (s)
		fk_store_close(s);
	snprintf(name, sizeof(name), "base/%u.%d ", ACC, seg);
	CHECK(fkt_store_log_has(name));
	CHECK(fkt_store_log_has(what));
	CHECK_EQ(seg_size(dir, seg), before);
	/* Twice: the failed open changed nothing. */
	fkt_store_log_clear();
	CHECK_EQ(fk_store_open(dir, &o, &s), -FK_ECORRUPT);
	CHECK(fkt_store_log_has(name));
}

/* Every row 0..@rows-1 of ACC as fill() or the appends made it. */
static void verify(const char *dir, uint64_t rows, const char *label)
{
	struct fk_store_opts o = opts();
	struct fk_store *s = NULL;
	fkt_store_log_clear();
	int r = fk_store_open(dir, &o, &s);
	printf("%s: open: %s\n%s", label, fk_strerror(r), fkt_store_log_text());
	CHECK_EQ(r, 0);
	if (!s)
		return;
	uint64_t n = 0;
	CHECK_EQ(fk_store_table_rows(s, ACC, &n), 0);
	CHECK_EQ(n, rows);
	int bad = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint8_t row[ROW], want[ROW];
		fill(NULL, i, want);
		r = fk_store_read(s, ACC, i, row);
		if (r || memcmp(row, want, ROW))
			bad++;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(fk_store_close(s), 0);
}

static void fresh(char *dir, size_t len, const char *root, const char *name)
{
	snprintf(dir, len, "%s/%s", root, name);
	setup(dir);
	CHECK_EQ(seg_size(dir, 0), SEG_BYTES);
	CHECK_EQ(seg_size(dir, 1), SEG_BYTES);
	CHECK_EQ(seg_size(dir, 2), (NPAGES - 16) * FK_PAGE_SIZE);
	CHECK_EQ(seg_size(dir, 3), -1);
}

static void test_clean(const char *root)
{
	char dir[4200], p[4300];
	fresh(dir, sizeof(dir), root, "deleted");
	seg_path(p, sizeof(p), dir, 1);
	CHECK_EQ(unlink(p), 0);
	expect_corrupt(dir, 1, "missing", "clean, base/1.1 deleted");
	CHECK_EQ(seg_size(dir, 1), -1);

	fresh(dir, sizeof(dir), root, "truncated");
	seg_path(p, sizeof(p), dir, 0);
	CHECK_EQ(truncate(p, 0), 0);
	expect_corrupt(dir, 0, "shorter", "clean, base/1.0 truncated to 0");

	fresh(dir, sizeof(dir), root, "short");
	seg_path(p, sizeof(p), dir, 2);
	CHECK_EQ(truncate(p, 3 * FK_PAGE_SIZE), 0);
	expect_corrupt(dir, 2, "shorter", "clean, base/1.2 a page short");
}

/* ---- crashes ---- */

/* In a child: open, commit @nappend appends (100 per commit) and a few
 * changes of loaded rows that leave them as they were, die by SIGKILL. */
static void crash_child(const char *dir, int nappend)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct fk_store_opts o = opts();
		struct fk_store *s;
		struct fk_batch b;
		if (fk_store_open(dir, &o, &s))
			_exit(2);
		fk_batch_init(&b);
		uint64_t rows = NLOAD;
		for (int k = 0; k < 3; k++) {
			uint8_t same[8];
			memset(same, 0x5a, 8);
			fk_batch_reset(&b);
			fk_batch_set(&b, ACC, (uint64_t)k * 9 * RPP, 8, same,
				     8);
			if (fk_store_commit(s, &b, NULL))
				_exit(3);
		}
		while (rows < (uint64_t)NLOAD + nappend) {
			fk_batch_reset(&b);
			for (int i = 0; i < 100; i++, rows++) {
				uint8_t row[ROW];
				fill(NULL, rows, row);
				fk_batch_append_copy(&b, ACC, row, ROW, NULL);
			}
			if (fk_store_commit(s, &b, NULL))
				_exit(4);
		}
		kill(getpid(), SIGKILL);
		_exit(5);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

static void test_crashed(const char *root)
{
	char dir[4200], p[4300];
	fresh(dir, sizeof(dir), root, "crash-deleted");
	crash_child(dir, 0);
	seg_path(p, sizeof(p), dir, 1);
	CHECK_EQ(unlink(p), 0);
	expect_corrupt(dir, 1, "missing", "kill -9, base/1.1 deleted");
	CHECK_EQ(seg_size(dir, 1), -1);

	fresh(dir, sizeof(dir), root, "crash-truncated");
	crash_child(dir, 0);
	seg_path(p, sizeof(p), dir, 1);
	CHECK_EQ(truncate(p, 0), 0);
	expect_corrupt(dir, 1, "shorter", "kill -9, base/1.1 truncated");
}

static void test_new_segment(const char *root)
{
	char dir[4200], p[4300];
	fresh(dir, sizeof(dir), root, "new-seg");
	crash_child(dir, NAPPEND);
	CHECK(seg_size(dir, 3) >= 0); /* created after the checkpoint */
	verify(dir, NLOAD + NAPPEND, "kill -9, new base/1.3");

	fresh(dir, sizeof(dir), root, "new-seg-lost");
	crash_child(dir, NAPPEND);
	seg_path(p, sizeof(p), dir, 3);
	CHECK_EQ(unlink(p), 0);
	verify(dir, NLOAD + NAPPEND, "kill -9, new base/1.3 deleted");
	CHECK(seg_size(dir, 3) > 0);
}

/* ---- appends between a checkpoint's redo point and its record ---- */

static pthread_t main_tid;
static pthread_mutex_t hook_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hook_cv = PTHREAD_COND_INITIALIZER;
static int in_sync, go;

/* The checkpointer's first fsync (its sync phase) waits for "go". */
static int hook_fsync(int fd)
{
	if (!pthread_equal(pthread_self(), main_tid)) {
		pthread_mutex_lock(&hook_mu);
		if (!in_sync) {
			in_sync = 1;
			pthread_cond_broadcast(&hook_cv);
			while (!go)
				pthread_cond_wait(&hook_cv, &hook_mu);
		}
		pthread_mutex_unlock(&hook_mu);
	}
	return fk_sys_default.fsync(fd);
}

static void *checkpoint_thread(void *arg)
{
	return (void *)(intptr_t)fk_store_checkpoint(arg);
}

static void test_during_checkpoint(const char *root)
{
	char dir[4200];
	fresh(dir, sizeof(dir), root, "during-ckpt");
	pid_t pid = fork();
	if (pid == 0) {
		struct fk_store_opts o = opts();
		struct fk_store *s;
		struct fk_batch b;
		uint8_t same[8];
		if (fk_store_open(dir, &o, &s))
			_exit(2);
		/* Something for the checkpoint's sync phase to fsync. */
		fk_batch_init(&b);
		memset(same, 0x5a, 8);
		fk_batch_set(&b, ACC, 0, 8, same, 8);
		if (fk_store_commit(s, &b, NULL))
			_exit(3);
		main_tid = pthread_self();
		fk_sys.fsync = hook_fsync;
		pthread_t t;
		if (pthread_create(&t, NULL, checkpoint_thread, s))
			_exit(4);
		pthread_mutex_lock(&hook_mu);
		while (!in_sync)
			pthread_cond_wait(&hook_cv, &hook_mu);
		pthread_mutex_unlock(&hook_mu);
		/* After the redo point, before the record. */
		uint64_t rows = NLOAD;
		while (rows < NLOAD + NAPPEND) {
			fk_batch_reset(&b);
			for (int i = 0; i < 100; i++, rows++) {
				uint8_t row[ROW];
				fill(NULL, rows, row);
				fk_batch_append_copy(&b, ACC, row, ROW, NULL);
			}
			if (fk_store_commit(s, &b, NULL))
				_exit(5);
		}
		pthread_mutex_lock(&hook_mu);
		go = 1;
		pthread_cond_broadcast(&hook_cv);
		pthread_mutex_unlock(&hook_mu);
		void *res;
		pthread_join(t, &res);
		if (res)
			_exit(6);
		kill(getpid(), SIGKILL);
		_exit(7);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* The case itself: the control file counts rows in base/1.3 (and
	 * in all of base/1.2), whose new pages were never written. */
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	if (fd >= 0) {
		char ctl[4300];
		snprintf(ctl, sizeof(ctl), "%s/control", dir);
		size_t len = 0;
		char *c = fkt_read_file(ctl, &len);
		CHECK(c && len >= sizeof(struct fk_control));
		if (c && len >= sizeof(struct fk_control)) {
			struct fk_control cc;
			memcpy(&cc, c, sizeof(cc));
			CHECK_EQ(cc.rows[ACC], NLOAD + NAPPEND);
		}
		free(c);
		close(fd);
	}
	CHECK_EQ(seg_size(dir, 3), 0);
	CHECK_EQ(seg_size(dir, 2), (NPAGES - 16) * FK_PAGE_SIZE);
	verify(dir, NLOAD + NAPPEND,
	       "kill -9, rows appended during the "
	       "checkpoint into a new, empty base/1.3");
}

int main(void)
{
	const char *root = fkt_tmpdir();
	test_clean(root);
	test_crashed(root);
	test_new_segment(root);
	test_during_checkpoint(root);
	return fkt_done();
}
