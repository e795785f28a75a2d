// SPDX-License-Identifier: MIT
/*
 * test-store-create-mode.c - fk_store_open creates a store only when
 * asked (enum fk_store_create_mode), and a refused open creates or
 * changes nothing.
 *
 * Regression: every open created a store where there was none, so a
 * mistyped path gave an empty 49 MB store instead of an error.
 *
 *  1. The default (fk_store_opts_init, and NULL options) is
 *     FK_STORE_OPEN_EXISTING: on a missing directory -ENOENT and no
 *     directory made; on an empty directory, and on one holding only a
 *     lock file, -ENOENT and the directory as it was.
 *  2. FK_STORE_CREATE_NEW creates a missing store; on an existing one it
 *     fails with -EEXIST and changes nothing.
 *  3. FK_STORE_CREATE_IF_MISSING creates, then opens the same store
 *     again with its rows; FK_STORE_OPEN_EXISTING opens it too.
 *  4. A create_mode out of range is -EINVAL.
 *  5. fk_store_destroy removes the store (an open then finds none), is
 *     refused with -EBUSY while it is open (nothing removed), and leaves
 *     the directory's other files.
 *  6. A creation that fails (ENOSPC writing the first WAL segment,
 *     injected through the syscall table) leaves no store behind, only
 *     the lock file: the next create-if-missing open succeeds instead of
 *     finding a catalog without a control file (-FK_ECORRUPT).
 */
#include "fktest.h"
#include "store-int.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROW 16

static struct fk_store_opts opts(int mode)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = mode;
	o.shared_buffers_bytes = 256 * FK_PAGE_SIZE;
	o.segment_bytes = 16 * FK_PAGE_SIZE;
	o.wal_segment_bytes = 256 << 10;
	o.log = fkt_store_log;
	return o;
}

static int exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

static void expect_unchanged(const char *dir, int mode, int want,
			     const char *label)
{
	struct fk_store_opts o = opts(mode);
	struct fk_store *s = NULL;
	char *before = fkt_dir_digest(dir);
	fkt_store_log_clear();
	int r = fk_store_open(dir, &o, &s);
	char *after = fkt_dir_digest(dir);
	printf("%s: open: %s; log: %s", label, fk_strerror(r),
	       fkt_store_log_text());
	CHECK_EQ(r, want);
	CHECK(s == NULL);
	if (s)
		fk_store_close(s);
	CHECK(before && after && !strcmp(before, after));
	if (before && after && strcmp(before, after))
		printf("changed:\nbefore:\n%safter:\n%s", before, after);
	free(before);
	free(after);
}

static void make_store(const char *dir, uint64_t nrows)
{
	struct fk_store_opts o = opts(FK_STORE_CREATE_NEW);
	struct fk_store *s = NULL;
	struct fk_batch b;
	uint32_t id;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		exit(1);
	CHECK_EQ(fk_store_create_table(s, "t", ROW, &id), 0);
	fk_batch_init(&b);
	for (uint64_t i = 0; i < nrows; i++) {
		uint8_t row[ROW] = {0};
		memcpy(row, &i, 8);
		fk_batch_reset(&b);
		CHECK_EQ(fk_batch_append(&b, id, row, NULL), 0);
		CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
	}
	fk_batch_release(&b);
	CHECK_EQ(fk_store_close(s), 0);
}

static uint64_t rows_of(const char *dir, int mode)
{
	struct fk_store_opts o = opts(mode);
	struct fk_store *s = NULL;
	uint32_t id;
	uint64_t rows = UINT64_MAX;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return rows;
	CHECK_EQ(fk_store_table(s, "t", &id, NULL), 0);
	CHECK_EQ(fk_store_table_rows(s, id, &rows), 0);
	CHECK_EQ(fk_store_close(s), 0);
	return rows;
}

int main(void)
{
	char dir[4200], p[4300];
	struct fk_store_opts o;
	struct fk_store *s = NULL;
	const char *tmp = fkt_tmpdir();

	/* 1. The default opens only an existing store. */
	fk_store_opts_init(&o);
	CHECK_EQ(o.create_mode, FK_STORE_OPEN_EXISTING);
	snprintf(dir, sizeof(dir), "%s/typo", tmp);
	CHECK_EQ(fk_store_open(dir, NULL, &s), -ENOENT);
	CHECK(s == NULL);
	o = opts(FK_STORE_OPEN_EXISTING);
	fkt_store_log_clear();
	CHECK_EQ(fk_store_open(dir, &o, &s), -ENOENT);
	printf("missing directory: log: %s", fkt_store_log_text());
	CHECK(fkt_store_log_has("does not exist"));
	CHECK(!exists(dir));
	snprintf(dir, sizeof(dir), "%s/empty", tmp);
	CHECK_EQ(mkdir(dir, 0700), 0);
	expect_unchanged(dir, FK_STORE_OPEN_EXISTING, -ENOENT,
			 "empty directory, open-existing");
	snprintf(p, sizeof(p), "%s/lock", dir);
	CHECK_EQ(fkt_write_file(p, 0, 0), 0);
	expect_unchanged(dir, FK_STORE_OPEN_EXISTING, -ENOENT,
			 "only a lock file, open-existing");

	/* 2. Create new, and not over an existing store. */
	snprintf(dir, sizeof(dir), "%s/new", tmp);
	make_store(dir, 10);
	snprintf(p, sizeof(p), "%s/lock", dir);
	CHECK(exists(p));
	expect_unchanged(dir, FK_STORE_CREATE_NEW, -EEXIST,
			 "existing store, create-new");

	/* 3. Create if missing: creates, then opens what is there. */
	snprintf(dir, sizeof(dir), "%s/cim/sub", tmp);
	o = opts(FK_STORE_CREATE_IF_MISSING);
	CHECK_EQ(fk_store_open(dir, &o, &s), -ENOENT); /* no parent made */
	snprintf(dir, sizeof(dir), "%s/cim", tmp);
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (s) {
		CHECK_EQ(fk_store_create_table(s, "t", ROW, NULL), 0);
		CHECK_EQ(fk_store_close(s), 0);
		s = NULL;
	}
	CHECK_EQ(rows_of(dir, FK_STORE_CREATE_IF_MISSING), 0);
	snprintf(dir, sizeof(dir), "%s/new", tmp);
	CHECK_EQ(rows_of(dir, FK_STORE_CREATE_IF_MISSING), 10);
	CHECK_EQ(rows_of(dir, FK_STORE_OPEN_EXISTING), 10);

	/* 4. Out of range. */
	o = opts(3);
	CHECK_EQ(fk_store_open(dir, &o, &s), -EINVAL);
	o = opts(-1);
	CHECK_EQ(fk_store_open(dir, &o, &s), -EINVAL);

	/* 5. Destroy: refused while open, then the store is gone, other
	 * files stay. */
	snprintf(p, sizeof(p), "%s/notes.txt", dir);
	CHECK_EQ(fkt_write_file(p, 100, 1), 0);
	o = opts(FK_STORE_OPEN_EXISTING);
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	char *before = fkt_dir_digest(dir);
	CHECK_EQ(fk_store_destroy(dir), -EBUSY);
	char *after = fkt_dir_digest(dir);
	CHECK(before && after && !strcmp(before, after));
	free(before);
	free(after);
	if (s)
		CHECK_EQ(fk_store_close(s), 0);
	CHECK_EQ(fk_store_destroy(dir), 0);
	char *left = fkt_dir_digest(dir);
	printf("after destroy:\n%s", left ? left : "(none)\n");
	free(left);
	CHECK(exists(p));
	snprintf(p, sizeof(p), "%s/control", dir);
	CHECK(!exists(p));
	snprintf(p, sizeof(p), "%s/base", dir);
	CHECK(!exists(p));
	snprintf(p, sizeof(p), "%s/wal", dir);
	CHECK(!exists(p));
	expect_unchanged(dir, FK_STORE_OPEN_EXISTING, -ENOENT,
			 "destroyed store, open-existing");
	make_store(dir, 3);
	CHECK_EQ(rows_of(dir, FK_STORE_OPEN_EXISTING), 3);
	snprintf(dir, sizeof(dir), "%s/nothing", tmp);
	CHECK_EQ(fk_store_destroy(dir), -ENOENT);

	/* 6. A failed creation leaves nothing but the lock file. */
	snprintf(dir, sizeof(dir), "%s/failed", tmp);
	o = opts(FK_STORE_CREATE_IF_MISSING);
	fkt_trace_start();
	fkt_fault_set("pwrite", "/wal/segtemp", 0, -ENOSPC);
	int r = fk_store_open(dir, &o, &s);
	unsigned fired = fkt_fault_fired();
	fkt_fault_clear();
	fkt_trace_stop();
	printf("creation with ENOSPC on the first WAL segment: %s (fault "
	       "fired %u times)\n",
	       fk_strerror(r), fired);
	CHECK_EQ(r, -ENOSPC);
	CHECK(fired > 0);
	left = fkt_dir_digest(dir);
	printf("left:\n%s", left ? left : "(none)\n");
	free(left);
	snprintf(p, sizeof(p), "%s/catalog", dir);
	CHECK(!exists(p));
	snprintf(p, sizeof(p), "%s/wal", dir);
	CHECK(!exists(p));
	snprintf(p, sizeof(p), "%s/base", dir);
	CHECK(!exists(p));
	fkt_store_log_clear();
	r = fk_store_open(dir, &o, &s);
	printf("open again: %s\n%s", fk_strerror(r), fkt_store_log_text());
	CHECK_EQ(r, 0);
	if (s)
		CHECK_EQ(fk_store_close(s), 0);
	return fkt_done();
}
