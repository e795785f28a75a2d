// SPDX-License-Identifier: MIT
/*
 * test-tree-removed.c - fk_tree_sync and fk_tree_copy when a file is
 * really removed (or renamed) between the walk that found it and its
 * fsync (a file removed before it was made durable, tree part).  The removal is
 * a real unlink/rename made from a hook in the syscall table at a chosen
 * moment; the kernel's own ENOENT follows.  Existing tests
 * (test-tree-sync-cmd, test-tree-copy-faults) inject ENOENT instead.
 *
 *  1. sync, fsync method: the file is unlinked just before its open:
 *     counted as vanished, warned, not an error (nothing left to make
 *     durable), the other files fsynced.
 *  2. sync, twopass: unlinked after pass 1 opened it (its descriptor
 *     kept), before pass 2: pass 2 does not find it; the run succeeds;
 *     renamed within the tree instead: fsynced once under its new name
 *     through the kept descriptor.
 * fk_tree_copy whose DESTINATION file is removed, renamed or replaced
 * by someone else before the copy made it durable: test-tree-copy-removed.
 */
#include "fktest.h"
#include "flushkit.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[4096];

/* ---- the hook ---- */

static const char *victim;     /* path to remove */
static const char *rename_to;  /* NULL: unlink */
static const char *trigger_op; /* "open NAME" or "fsync" */
static const char *trigger_name;
static int fired;

static void fire(void)
{
	if (fired || !victim)
		return;
	fired = 1;
	if (rename_to)
		CHECK_EQ(rename(victim, rename_to), 0);
	else
		CHECK_EQ(unlink(victim), 0);
}

static int hook_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	if (!strcmp(trigger_op, "open") && !strcmp(path, trigger_name))
		fire();
	return fk_sys_default.openat(dirfd, path, flags, mode);
}

static int hook_fsync(int fd)
{
	if (!strcmp(trigger_op, "fsync"))
		fire();
	return fk_sys_default.fsync(fd);
}

static void hook(const char *op, const char *name, const char *path,
		 const char *to)
{
	trigger_op = op;
	trigger_name = name;
	victim = path;
	rename_to = to;
	fired = 0;
	fk_sys.openat = hook_openat;
	fk_sys.fsync = hook_fsync;
}

static void unhook(void)
{
	fk_sys = fk_sys_default;
	victim = NULL;
}

/* ---- reports ---- */

static char reports[8192];

static void on_report(void *arg, int level, const char *op, const char *path,
		      int err)
{
	(void)arg;
	size_t n = strlen(reports);
	snprintf(reports + n, sizeof(reports) - n, "%s %s %s: %s\n",
		 level == FK_REPORT_ERROR ? "error" : "warning", op,
		 path ? path : "", fk_strerror(err));
}

static void make_tree(const char *top)
{
	char p[4300];
	CHECK_EQ(mkdir(top, 0700), 0);
	snprintf(p, sizeof(p), "%s/sub", top);
	CHECK_EQ(mkdir(p, 0700), 0);
	const char *files[] = {"a", "b", "sub/c", "sub/d"};
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", top, files[i]);
		CHECK_EQ(fkt_write_file(p, 100000, (unsigned)i), 0);
	}
}

static int run_sync(const char *top, int method, struct fk_tree_stats *st)
{
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.sync_method = method;
	o.report = on_report;
	o.sync_io = FK_SYNC_IO_SEQUENTIAL; /* fsyncs through fk_sys */
	reports[0] = 0;
	const char *paths[] = {top};
	memset(st, 0, sizeof(*st));
	return fk_tree_sync(paths, 1, &o, st);
}

static void test_sync_fsync(void)
{
	char top[4200], b[4300];
	struct fk_tree_stats st;
	snprintf(top, sizeof(top), "%s/s1", root);
	snprintf(b, sizeof(b), "%s/b", top);
	make_tree(top);
	hook("open", "b", b, NULL);
	int r = run_sync(top, FK_SYNC_FSYNC, &st);
	unhook();
	CHECK_EQ(fired, 1);
	CHECK_EQ(r, 0);
	CHECK_EQ(st.vanished, 1);
	CHECK_EQ(st.fsync_calls, 3);
	CHECK(strstr(reports, "warning") && strstr(reports, "/b:"));
	printf("sync fsync, unlinked before open: %d, vanished %llu\n%s", r,
	       (unsigned long long)st.vanished, reports);
}

static void test_sync_twopass(void)
{
	char top[4200], c[4300], c2[4300];
	struct fk_tree_stats st;
	snprintf(top, sizeof(top), "%s/s2", root);
	snprintf(c, sizeof(c), "%s/sub/c", top);
	make_tree(top);
	/* Pass 2's first fsync: c was opened (and kept) by pass 1. */
	hook("fsync", NULL, c, NULL);
	int r = run_sync(top, FK_SYNC_TWOPASS, &st);
	unhook();
	printf("sync twopass, unlinked between the passes: %d, vanished "
	       "%llu, fsyncs %llu\n%s",
	       r, (unsigned long long)st.vanished,
	       (unsigned long long)st.fsync_calls, reports);
	CHECK_EQ(fired, 1);
	CHECK_EQ(r, 0);
	CHECK(st.fsync_calls >= 3);

	/* Renamed within the tree: synced once, under its new name. */
	snprintf(top, sizeof(top), "%s/s3", root);
	snprintf(c, sizeof(c), "%s/sub/c", top);
	snprintf(c2, sizeof(c2), "%s/c-moved", top);
	make_tree(top);
	hook("fsync", NULL, c, c2);
	r = run_sync(top, FK_SYNC_TWOPASS, &st);
	unhook();
	CHECK_EQ(fired, 1);
	CHECK_EQ(r, 0);
	CHECK_EQ(st.errors, 0);
	CHECK(st.fsync_calls >= 3 && st.fsync_calls <= 4);
}

int main(void)
{
	snprintf(root, sizeof(root), "%s", fkt_tmpdir());
	test_sync_fsync();
	test_sync_twopass();
	return fkt_done();
}
