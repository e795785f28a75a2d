// SPDX-License-Identifier: MIT
/*
 * test-eio-writeback - a real EIO during EARLY
 * writeback (the writeback hints of struct fk_writeback, of batched
 * FK_FSYNC_OP_WRITEBACK requests and of fk_tree_sync's first pass) still
 * reaches the final fsync and is reported; the hint never consumes it.
 *
 * Stack: ext4 (and xfs) over the lab disk daemon (flushkit-diskd, model
 * ram; fkfault.h).  A file's blocks are made to fail, the file is
 * rewritten and the hint issued; the test waits until the daemon has
 * failed the write (so the error happened during the writeback the HINT
 * started, before any fsync), then runs the final fsync through the
 * library.
 *
 * Kernel behaviour this relies on, checked here as well: sync_file_range
 * with SYNC_FILE_RANGE_WRITE alone starts writeback and does not look at
 * the mapping's error (errseq) at all; with SYNC_FILE_RANGE_WAIT_AFTER it
 * reports the error AND advances the descriptor's errseq cursor, so the
 * fsync after it returns 0 (why flushkit never uses the WAIT flags).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fkfault.h"
#include "fkloop.h"
#include "fktest.h"
#include "flushkit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_BYTES (1024 * 1024)
#define CHUNK (64 * 1024)

static char buf[CHUNK];

static int fsync_err(int fd)
{
	return fsync(fd) == 0 ? 0 : -errno;
}

/* struct fk_writeback: hints while rewriting, then the final fsync. */
static void test_writeback_module(struct fkt_stack *st)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/seg1", st->fs.mnt);
	int fd = fkt_make_file(path, FILE_BYTES, 'a');
	CHECK(fd >= 0);
	CHECK_EQ(fkt_dev_reset_counters(&st->dev), 0);
	CHECK(fkt_dev_fail_file(&st->dev, path, FKT_OP_WRITE, EIO) >= 1);

	struct fk_writeback wb;
	fk_writeback_init(&wb, FK_WRITEBACK_DEFAULT_FLUSH_AFTER);
	memset(buf, 'b', sizeof(buf));
	int hint_err = 0;
	for (int off = 0; off < FILE_BYTES; off += CHUNK) {
		CHECK_EQ(pwrite(fd, buf, CHUNK, off), CHUNK);
		int r = fk_writeback_note(&wb, fd, (uint64_t)off, CHUNK);
		if (r && !hint_err)
			hint_err = r;
	}
	int r = fk_writeback_issue(&wb);
	if (r && !hint_err)
		hint_err = r;
	CHECK(wb.calls_sfr >= 1);
	/* The hint's writeback fails on the device before any fsync. */
	CHECK_EQ(fkt_dev_wait_faults(&st->dev, FKT_OP_WRITE, 1, 5000), 0);
	/* A hint may see an error (then it is EIO), or not; either way... */
	CHECK(hint_err == 0 || hint_err == -EIO);
	CHECK(wb.first_error == hint_err);
	fk_writeback_release(&wb);

	/* ...the final fsync, through the library, reports it. */
	struct fk_fsync_req req = {.fd = fd, .op = FK_FSYNC_OP_FSYNC};
	CHECK_EQ(fk_fsync_many(NULL, &req, 1, NULL), -EIO);
	CHECK_EQ(req.result, -EIO);
	CHECK_EQ(req.issued, 1);
	/* The kernel has now reported it to this descriptor: a retried
	 * fsync says 0, which is why the error must be kept (sticky). */
	CHECK_EQ(fsync_err(fd), 0);
	CHECK_EQ(fkt_dev_clear(&st->dev), 0);
	close(fd);
}

/* FK_FSYNC_OP_WRITEBACK through a batch, then FSYNC in a later run and
 * in the same run. */
static void test_batch_hint(struct fkt_stack *st, int sync_io)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/seg2-%d", st->fs.mnt, sync_io);
	int fd = fkt_make_file(path, FILE_BYTES, 'a');
	CHECK(fd >= 0);
	CHECK_EQ(fkt_dev_reset_counters(&st->dev), 0);
	CHECK(fkt_dev_fail_file(&st->dev, path, FKT_OP_WRITE, EIO) >= 1);
	CHECK_EQ(fkt_fill_fd(fd, FILE_BYTES, 'c'), 0);

	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = sync_io;
	struct fk_fsync_batch *b;
	int r = fk_fsync_batch_create(&o, &b);
	if (r && sync_io == FK_SYNC_IO_URING) {
		fprintf(stderr, "no io_uring here (%s): uring case skipped\n",
			strerror(-r));
		close(fd);
		fkt_dev_clear(&st->dev);
		return;
	}
	CHECK_EQ(r, 0);
	CHECK_EQ(fk_fsync_batch_backend(b), sync_io);
	struct fk_fsync_req hint = {.fd = fd, .op = FK_FSYNC_OP_WRITEBACK};
	r = fk_fsync_batch_run(b, &hint, 1);
	CHECK(r == 0 || r == -EIO);
	CHECK_EQ(fkt_dev_wait_faults(&st->dev, FKT_OP_WRITE, 1, 5000), 0);
	struct fk_fsync_req fs = {.fd = fd, .op = FK_FSYNC_OP_FDATASYNC};
	CHECK_EQ(fk_fsync_batch_run(b, &fs, 1), -EIO);
	CHECK_EQ(fs.result, -EIO);
	fk_fsync_batch_destroy(b);

	/* Hint and fsync of one file in one run, a fresh batch: the error
	 * the hint's writeback hit is reported to both requests. */
	CHECK_EQ(fkt_fill_fd(fd, FILE_BYTES, 'c'), 0);
	struct fk_fsync_req two[2] = {
	    {.fd = fd, .op = FK_FSYNC_OP_WRITEBACK},
	    {.fd = fd, .op = FK_FSYNC_OP_FSYNC},
	};
	CHECK_EQ(fk_fsync_many(&o, two, 2, NULL), -EIO);
	CHECK_EQ(two[0].result, -EIO);
	CHECK_EQ(two[1].result, -EIO);
	CHECK_EQ(fkt_dev_clear(&st->dev), 0);
	close(fd);
}

struct report {
	int calls, err;
	char op[32], path[700];
};

static void on_report(void *arg, int level, const char *op, const char *path,
		      int err)
{
	struct report *rep = arg;
	if (level != FK_REPORT_ERROR)
		return;
	if (!rep->calls++) {
		snprintf(rep->op, sizeof(rep->op), "%s", op);
		snprintf(rep->path, sizeof(rep->path), "%s", path);
		rep->err = err;
	}
}

/* fk_tree_sync twopass: pass 1 hints every file, pass 2 fsyncs. */
static void test_tree_sync(struct fkt_stack *st)
{
	char dir[700], path[3][720];
	snprintf(dir, sizeof(dir), "%s/tree", st->fs.mnt);
	CHECK_EQ(mkdir(dir, 0755), 0);
	int fds[3];
	for (int i = 0; i < 3; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/f%d", dir, i);
		fds[i] = fkt_make_file(path[i], FILE_BYTES, 'a');
		CHECK(fds[i] >= 0);
	}
	CHECK_EQ(fkt_dev_reset_counters(&st->dev), 0);
	CHECK(fkt_dev_fail_file(&st->dev, path[1], FKT_OP_WRITE, EIO) >= 1);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(fkt_fill_fd(fds[i], FILE_BYTES, 'd'), 0);
		close(fds[i]); /* the tree sync opens its own */
	}
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.sync_method = FK_SYNC_TWOPASS;
	struct report rep = {0};
	o.report = on_report;
	o.report_arg = &rep;
	struct fk_tree_stats ts;
	const char *paths[] = {dir};
	CHECK_EQ(fk_tree_sync(paths, 1, &o, &ts), -EIO);
	CHECK(ts.writeback_ranges >= 3);
	CHECK(rep.calls >= 1);
	CHECK(!strcmp(rep.op, "fsync"));
	CHECK(strstr(rep.path, "/f1") != NULL);
	CHECK_EQ(rep.err, -EIO);
	struct fkt_dev_counters c;
	CHECK_EQ(fkt_dev_counters(&st->dev, &c), 0);
	CHECK(c.write_faults >= 1);
	CHECK_EQ(fkt_dev_clear(&st->dev), 0);
}

/* The kernel rule behind "only SYNC_FILE_RANGE_WRITE": WAIT_AFTER
 * consumes the error, and the fsync after it says 0. */
static void test_wait_flag_consumes(struct fkt_stack *st)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/waitflag", st->fs.mnt);
	int fd = fkt_make_file(path, FILE_BYTES, 'a');
	CHECK(fd >= 0);
	CHECK(fkt_dev_fail_file(&st->dev, path, FKT_OP_WRITE, EIO) >= 1);
	CHECK_EQ(fkt_fill_fd(fd, CHUNK, 'e'), 0);
	errno = 0;
	CHECK_EQ(sync_file_range(fd, 0, CHUNK,
				 SYNC_FILE_RANGE_WAIT_BEFORE |
				     SYNC_FILE_RANGE_WRITE |
				     SYNC_FILE_RANGE_WAIT_AFTER),
		 -1);
	CHECK_EQ(errno, EIO);
	CHECK_EQ(fsync_err(fd), 0); /* the data is NOT on disk */
	CHECK_EQ(fkt_dev_clear(&st->dev), 0);
	close(fd);
}

static void run(const char *type, uint64_t bytes, unsigned flags)
{
	fprintf(stderr, "-- %s%s\n", type,
		flags & FKT_STACK_DIO ? " (loop direct I/O)" : "");
	struct fkt_stack st;
	int r = fkt_stack_create(&st, type, bytes, flags);
	if (r == 77)
		SKIP("needs root, /dev/fuse, loop devices, mkfs.%s", type);
	CHECK_EQ(r, 0);
	if (r)
		return;
	test_writeback_module(&st);
	test_batch_hint(&st, FK_SYNC_IO_URING);
	test_batch_hint(&st, FK_SYNC_IO_THREADS);
	test_tree_sync(&st);
	test_wait_flag_consumes(&st);
	fkt_stack_destroy(&st);
}

int main(void)
{
	run("ext4", 64 << 20, 0);
	if (system("command -v mkfs.xfs >/dev/null 2>&1") == 0)
		run("xfs", 300 << 20, FKT_STACK_DIO);
	return fkt_done();
}
