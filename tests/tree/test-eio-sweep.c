// SPDX-License-Identifier: MIT
/*
 * test-eio-sweep - the auto method of fk_tree_sync with real EIO: when
 * it sweeps (one syncfs of the file system instead of an fsync per
 * file), a file whose writeback failed is still named, and another
 * program's failed file on the same file system does not fail the sync.
 *
 * Stack: ext4 (and xfs) over the lab disk daemon (flushkit-diskd, model
 * ram; fkfault.h).  A tree of three files of FILE_BYTES, allocated and on
 * disk, is rewritten (dirty) and some file's blocks made to fail; then
 * fk_tree_sync with FK_SYNC_AUTO.
 *  - the failing file is in the tree: -EIO, exactly one error, naming
 *    that file (the sweep's syncfs fails, the fsyncs after it name it);
 *  - the failing file is outside the tree: 0, no error (the syncfs
 *    failed for someone else's file; each file of the tree, fsynced,
 *    is durable).
 * Both check that the sweep was tried (st.syncfs_calls >= 1): the tree
 * is most of the system's dirty data.  If other programs' dirty data
 * outweighs it, auto does not sweep and the case is skipped.
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

#define FILE_BYTES (16 * 1024 * 1024)
#define CHUNK (64 * 1024)

struct report {
	int errors;
	char op[32], path[700];
	int err;
};

static void on_report(void *arg, int level, const char *op, const char *path,
		      int err)
{
	struct report *rep = arg;
	fprintf(stderr, "report: %s %s '%s': %s\n", level ? "error" : "warning",
		op, path, fk_strerror(err));
	if (level != FK_REPORT_ERROR)
		return;
	if (!rep->errors++) {
		snprintf(rep->op, sizeof(rep->op), "%s", op);
		snprintf(rep->path, sizeof(rep->path), "%s", path);
		rep->err = err;
	}
}

/* @fail_in_tree: the failing file is tree/f1, else ../other. */
static void test_sweep(struct fkt_stack *st, const char *name, int fail_in_tree)
{
	char dir[700], path[3][720], other[720];
	snprintf(dir, sizeof(dir), "%s/%s", st->fs.mnt, name);
	snprintf(other, sizeof(other), "%s/%s-other", st->fs.mnt, name);
	CHECK_EQ(mkdir(dir, 0755), 0);
	/*
	 * The daemon fails a whole request that overlaps a failing range,
	 * and the block layer merges the writeback of adjacent files into
	 * one request: a spacer, never rewritten, after each file keeps
	 * the failure to that file.
	 */
	char spacer[740];
	int fds[3];
	for (int i = 0; i < 3; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/f%d", dir, i);
		fds[i] = fkt_make_file(path[i], FILE_BYTES, 'a');
		CHECK(fds[i] >= 0);
		snprintf(spacer, sizeof(spacer), "%s-spacer%d", dir, i);
		int sfd = fkt_make_file(spacer, FILE_BYTES, 's');
		CHECK(sfd >= 0);
		close(sfd);
	}
	int ofd = fkt_make_file(other, FILE_BYTES, 'o');
	CHECK(ofd >= 0);
	CHECK(fkt_dev_fail_file(&st->dev, fail_in_tree ? path[1] : other,
				FKT_OP_WRITE, EIO) >= 1);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(fkt_fill_fd(fds[i], FILE_BYTES, 'd'), 0);
		close(fds[i]); /* the sync opens its own */
	}
	/* The other program's dirty data: a small part of it. */
	CHECK_EQ(fkt_fill_fd(ofd, CHUNK, 'd'), 0);

	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.sync_method = FK_SYNC_AUTO;
	struct report rep = {0};
	o.report = on_report;
	o.report_arg = &rep;
	struct fk_tree_stats ts;
	const char *paths[] = {dir};
	int r = fk_tree_sync(paths, 1, &o, &ts);
	fprintf(stderr, "%s: fk_tree_sync auto: %d, syncfs %llu, fsync %llu\n",
		name, r, (unsigned long long)ts.syncfs_calls,
		(unsigned long long)ts.fsync_calls);
	if (!ts.syncfs_calls) {
		fprintf(stderr,
			"SKIP: %s: auto did not sweep (other programs' "
			"dirty data outweighs the tree's)\n",
			name);
	} else if (fail_in_tree) {
		CHECK_EQ(r, -EIO);
		CHECK_EQ(rep.errors, 1);
		CHECK(strstr(rep.path, "/f1") != NULL);
		CHECK_EQ(rep.err, -EIO);
		CHECK_EQ(ts.errors, 1);
	} else {
		CHECK_EQ(r, 0);
		CHECK_EQ(rep.errors, 0);
		CHECK_EQ(ts.errors, 0);
		/* The syncfs failed: every file was fsynced after it. */
		CHECK_EQ(ts.fsync_calls, 3);
	}
	struct fkt_dev_counters c;
	CHECK_EQ(fkt_dev_counters(&st->dev, &c), 0);
	CHECK(c.write_faults >= 1);
	CHECK_EQ(fkt_dev_clear(&st->dev), 0);
	close(ofd);
}

static void run(const char *type, uint64_t bytes, unsigned flags)
{
	fprintf(stderr, "-- %s\n", type);
	struct fkt_stack st;
	int r = fkt_stack_create(&st, type, bytes, flags);
	if (r == 77)
		SKIP("needs root, /dev/fuse, loop devices, mkfs.%s", type);
	CHECK_EQ(r, 0);
	if (r)
		return;
	test_sweep(&st, "in", 1);
	test_sweep(&st, "out", 0);
	fkt_stack_destroy(&st);
}

int main(void)
{
	run("ext4", 512 << 20, 0);
	if (system("command -v mkfs.xfs >/dev/null 2>&1") == 0)
		run("xfs", 512 << 20, FKT_STACK_DIO);
	return fkt_done();
}
