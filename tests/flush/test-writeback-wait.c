// SPDX-License-Identifier: MIT
/*
 * test-writeback-wait.c - waiting writeback hints (struct fk_writeback's
 * wait, the store's checkpoint_flush_wait): the hint is issued as
 * sync_file_range(WAIT_BEFORE | WRITE | WAIT_AFTER) for
 * FK_WRITEBACK_WAIT_ALL, as WAIT_BEFORE | WRITE for
 * FK_WRITEBACK_WAIT_BEFORE (the pre-4.4 kernel's hint, seed 000), and
 * WRITE alone otherwise; because either wait consumes the file's
 * pending writeback error - the fsync after it returns 0, as
 * test-eio-writeback checks on a real device - an error of a waiting
 * hint fails the checkpoint and stops the store like a failed fsync,
 * with the control file unchanged.  Without the wait, a hint's error
 * stays a hint (the fsync decides), as before.
 *
 * The syscall table's sync_file_range is replaced by a recorder that
 * keeps the flags and can fail the waiting calls with EIO while every
 * fsync succeeds: exactly the kernel's behaviour after a waiting call
 * consumed the error.  Data directories on /dev/shm unless TMPDIR is
 * set.
 */
#include "fktest.h"
#include "store-int.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WAITING                                                                \
	(SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |                 \
	 SYNC_FILE_RANGE_WAIT_AFTER)

#define WAIT_BEFORE (SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE)

static unsigned nr_plain, nr_waiting, nr_before, nr_other;
static int fail_with; /* -errno for every call, 0: the real call */

static int rec_sfr(int fd, off_t off, off_t len, unsigned int flags)
{
	if (flags == WAITING)
		__atomic_add_fetch(&nr_waiting, 1, __ATOMIC_RELAXED);
	else if (flags == WAIT_BEFORE)
		__atomic_add_fetch(&nr_before, 1, __ATOMIC_RELAXED);
	else if (flags == SYNC_FILE_RANGE_WRITE)
		__atomic_add_fetch(&nr_plain, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&nr_other, 1, __ATOMIC_RELAXED);
	int e = __atomic_load_n(&fail_with, __ATOMIC_RELAXED);
	if (e)
		return e;
	return fk_sys_default.sync_file_range(fd, off, len, flags);
}

static void counts_reset(void)
{
	nr_plain = nr_waiting = nr_before = nr_other = 0;
}

/* The module: which flags each mode passes, and the error kept. */
static void test_module(void)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/wb-file", fkt_tmpdir());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	static char buf[65536];
	memset(buf, 'w', sizeof(buf));
	CHECK_EQ(pwrite(fd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));

	struct fk_writeback wb;
	fk_writeback_init(&wb, 4096);
	CHECK_EQ(wb.wait, 0);
	counts_reset();
	CHECK_EQ(fk_writeback_note(&wb, fd, 0, 8192), 0);
	CHECK_EQ(nr_plain, 1);
	CHECK_EQ(nr_waiting, 0);

	wb.wait = FK_WRITEBACK_WAIT_ALL;
	counts_reset();
	CHECK_EQ(fk_writeback_note(&wb, fd, 8192, 8192), 0);
	CHECK_EQ(nr_waiting, 1);
	CHECK_EQ(nr_plain, 0);
	CHECK_EQ(nr_before, 0);
	CHECK_EQ(nr_other, 0);

	wb.wait = FK_WRITEBACK_WAIT_BEFORE;
	counts_reset();
	CHECK_EQ(fk_writeback_note(&wb, fd, 32768, 8192), 0);
	CHECK_EQ(nr_before, 1);
	CHECK_EQ(nr_waiting, 0);
	CHECK_EQ(nr_plain, 0);
	CHECK_EQ(nr_other, 0);
	wb.wait = FK_WRITEBACK_WAIT_ALL;

	fail_with = -EIO;
	CHECK_EQ(fk_writeback_note(&wb, fd, 16384, 8192), -EIO);
	CHECK_EQ(wb.first_error, -EIO);
	fail_with = 0;
	fk_writeback_release(&wb);
	close(fd);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	static char data[1 << 16];
	*len = fread(data, 1, sizeof(data), f);
	fclose(f);
	char *c = malloc(*len + 1);
	if (c)
		memcpy(c, data, *len);
	return c;
}

static int commit_rows(struct fk_store *s, uint32_t t, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct fk_batch b;
		uint8_t row[512] = {0};
		memcpy(row, &i, sizeof(i));
		fk_batch_init(&b);
		fk_batch_append_copy(&b, t, row, sizeof(row), NULL);
		int r = fk_store_commit(s, &b, NULL);
		fk_batch_release(&b);
		if (r)
			return r;
	}
	return 0;
}

/*
 * The store with checkpoint_flush_wait @wait: a good checkpoint issues
 * the hints the way asked; then with every hint failing with EIO (the
 * fsyncs succeed), the checkpoint fails and the store stops when the
 * hints wait, and succeeds when they do not.
 */
static void test_store(int wait)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 4 << 20;
	o.checkpoint_timeout_ms = 3600 * 1000;
	o.max_wal_size_bytes = 1ull << 40; /* checkpoints: ours only */
	o.checkpoint_flush_after_bytes = 16384;
	o.checkpoint_flush_wait = wait;
	char dir[4200], ctl[4300];
	snprintf(dir, sizeof(dir), "%s/store-wait-%d", fkt_tmpdir(), wait);
	snprintf(ctl, sizeof(ctl), "%s/control", dir);
	fkt_rm_rf(dir);
	struct fk_store *s = NULL;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		exit(1);
	uint32_t t = 0;
	CHECK_EQ(fk_store_create_table(s, "rows", 512, &t), 0);

	counts_reset();
	CHECK_EQ(commit_rows(s, t, 200), 0);
	CHECK_EQ(fk_store_checkpoint(s), 0);
	if (wait == FK_WRITEBACK_WAIT_ALL) {
		CHECK(nr_waiting > 0);
		CHECK_EQ(nr_plain + nr_before, 0);
	} else if (wait == FK_WRITEBACK_WAIT_BEFORE) {
		CHECK(nr_before > 0);
		CHECK_EQ(nr_plain + nr_waiting, 0);
	} else {
		CHECK(nr_plain > 0);
		CHECK_EQ(nr_waiting + nr_before, 0);
	}
	CHECK_EQ(nr_other, 0);

	size_t l0 = 0, l1 = 0;
	char *c0 = read_file(ctl, &l0);
	CHECK(c0 != NULL);
	CHECK_EQ(commit_rows(s, t, 200), 0);
	__atomic_store_n(&fail_with, -EIO, __ATOMIC_RELAXED);
	int r = fk_store_checkpoint(s);
	__atomic_store_n(&fail_with, 0, __ATOMIC_RELAXED);
	struct fk_store_stats st;
	fk_store_get_stats(s, &st);
	char *c1 = read_file(ctl, &l1);
	if (wait) {
		/* The waits consumed the error the fsyncs would have
		 * reported: the hint's error is the checkpoint's. */
		CHECK_EQ(r, -EIO);
		CHECK_EQ(st.error, -EIO);
		CHECK(c0 && c1 && l0 == l1 && !memcmp(c0, c1, l0));
		CHECK(commit_rows(s, t, 1) != 0);
		CHECK(fk_store_close(s) != 0);
	} else {
		CHECK_EQ(r, 0);
		CHECK_EQ(st.error, 0);
		CHECK_EQ(fk_store_close(s), 0);
	}
	free(c0);
	free(c1);
}

int main(void)
{
	if (!getenv("TMPDIR") && access("/dev/shm", W_OK) == 0)
		setenv("TMPDIR", "/dev/shm", 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	fk_sys.sync_file_range = rec_sfr;
	test_module();
	test_store(FK_WRITEBACK_WAIT_NONE);
	test_store(FK_WRITEBACK_WAIT_ALL);
	test_store(FK_WRITEBACK_WAIT_BEFORE);
	/* Not a mode: the open refuses it. */
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.checkpoint_flush_wait = 3;
	char dir[4200];
	snprintf(dir, sizeof(dir), "%s/store-wait-bad", fkt_tmpdir());
	struct fk_store *s = NULL;
	CHECK_EQ(fk_store_open(dir, &o, &s), -EINVAL);
	fk_sys = fk_sys_default;
	return fkt_done();
}
