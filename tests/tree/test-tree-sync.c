// SPDX-License-Identifier: MIT
/*
 * test-tree-sync.c - fk_tree_sync, call by call: for each method, which
 * calls reach the syscall table and in what order.
 *
 *  - fsync: every regular-file inode fsynced once (3 hard links: once),
 *    every directory after its contents, specials and symlinks never
 *    opened;
 *  - twopass: the same, plus every writeback hint before the first
 *    fsync, one hint per non-empty inode, and each file opened once
 *    (the pass-1 descriptor is kept for pass 2); with a descriptor
 *    budget of 1, files are reopened but still fsynced once; with
 *    flush_after_bytes 0, no hint at all;
 *  - syncfs: one syncfs per file system (a tmpfs mounted inside, when
 *    root), no fsync, no file opened;
 *  - overlapping PATHs: each inode still once;
 *  - the fdmap and the kernel-version parser.
 */
#include "fktest.h"
#include "sys.h"
#include "test-tree-sync-fixture.h"
#include "tree.h"

#include <limits.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/utsname.h>

static char *make_tree(const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", fkt_tmpdir(), name);
	fix_build(p);
	char *real = realpath(p, NULL);
	CHECK(real != NULL);
	return real;
}

struct reports {
	int errors, warnings;
	char last_op[64];
	char last_path[PATH_MAX];
	int last_err;
};

static void on_report(void *arg, int level, const char *op, const char *path,
		      int err)
{
	struct reports *r = arg;
	if (level == FK_REPORT_ERROR)
		r->errors++;
	else
		r->warnings++;
	snprintf(r->last_op, sizeof(r->last_op), "%s", op);
	snprintf(r->last_path, sizeof(r->last_path), "%s", path);
	r->last_err = err;
	fprintf(stderr, "report: %s %s '%s': %s\n",
		level == FK_REPORT_ERROR ? "error" : "warning", op, path,
		fk_strerror(err));
}

static int run(const char *root, int method, struct fk_tree_stats *st,
	       struct reports *rep)
{
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.sync_io = FK_SYNC_IO_THREADS; /* traced: not io_uring */
	o.sync_method = method;
	o.report = on_report;
	o.report_arg = rep;
	const char *paths[] = {root};
	fkt_trace_start();
	int r = fk_tree_sync(paths, 1, &o, st);
	fkt_trace_stop();
	return r;
}

static void check_counts(const struct fk_tree_stats *st)
{
	CHECK_EQ(st->files, FIX_FILES);
	CHECK_EQ(st->dirs, FIX_DIRS);
	CHECK_EQ(st->hardlinks, 2);
	CHECK_EQ(st->symlinks, 2);
	CHECK_EQ(st->specials, 2);
	CHECK_EQ(st->bytes, 100000 + 65536 + 5000);
	CHECK_EQ(st->errors, 0);
	CHECK_EQ(st->vanished, 0);
}

static void test_fsync(void)
{
	char *root = make_tree("fsync");
	struct fk_tree_stats st;
	struct reports rep = {0};
	CHECK_EQ(run(root, FK_SYNC_FSYNC, &st, &rep), 0);
	fix_check_fsyncs(root);
	check_counts(&st);
	CHECK_EQ(st.fsync_calls, FIX_FILES);
	CHECK_EQ(st.dir_fsync_calls, FIX_DIRS);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 0);
	CHECK_EQ(fkt_trace_nr("syncfs", NULL), 0);
	CHECK_EQ(rep.errors + rep.warnings, 0);
	free(root);
}

/* Every pass-1 hint comes before the first fsync. */
static void check_hints_first(void)
{
	long first_fsync = fkt_trace_find("fsync", NULL, 0);
	CHECK(first_fsync >= 0);
	size_t n = fkt_trace_count();
	for (size_t i = 0; i < n; i++) {
		const struct fkt_call *c = fkt_trace_get(i);
		if (!strcmp(c->op, "sync_file_range") ||
		    !strcmp(c->op, "fadvise"))
			CHECK((long)i < first_fsync);
	}
}

static void test_twopass(void)
{
	char *root = make_tree("twopass");
	struct fk_tree_stats st;
	struct reports rep = {0};
	CHECK_EQ(run(root, FK_SYNC_TWOPASS, &st, &rep), 0);
	fix_check_fsyncs(root);
	check_counts(&st);
	check_hints_first();
	/* One whole-file hint per non-empty inode, none for the empty one. */
	CHECK_EQ(fkt_trace_nr("sync_file_range", "/a"), 1);
	CHECK_EQ(fkt_trace_nr("sync_file_range", "/sub/c"), 1);
	CHECK_EQ(fkt_trace_nr("sync_file_range", "/b"), 0);
	CHECK_EQ(fkt_trace_nr("sync_file_range", "/sub/deep/h1") +
		     fkt_trace_nr("sync_file_range", "/h2") +
		     fkt_trace_nr("sync_file_range", "/sub/h3"),
		 1);
	long i = fkt_trace_find("sync_file_range", "/a", 0);
	if (i >= 0) {
		CHECK_EQ(fkt_trace_get(i)->off, 0);
		CHECK_EQ(fkt_trace_get(i)->len, 100000);
	}
	CHECK_EQ(st.writeback_ranges, 3);
	CHECK_EQ(st.writeback_bytes, 100000 + 65536 + 5000);
	/* The descriptor of pass 1 was kept for pass 2. */
	CHECK_EQ(fkt_trace_nr("open", "/a"), 1);
	CHECK_EQ(fkt_trace_nr("open", "/b"), 1);
	CHECK_EQ(fkt_trace_nr("open", "/sub/c"), 1);
	CHECK_EQ(rep.errors + rep.warnings, 0);
	free(root);
}

/* flush_after_bytes 0 means "no writeback hints" for fk_tree_sync as for
 * fk_tree_copy (and fk_writeback, and the store's
 * checkpoint_flush_after_bytes): pass 1 makes no hint, pass 2 still
 * fsyncs every inode once, and each file is still opened once. */
static void test_twopass_no_hints(void)
{
	char *root = make_tree("twopass-nohints");
	struct fk_tree_stats st;
	struct reports rep = {0};
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.sync_io = FK_SYNC_IO_THREADS; /* traced: not io_uring */
	o.sync_method = FK_SYNC_TWOPASS;
	o.flush_after_bytes = 0;
	o.report = on_report;
	o.report_arg = &rep;
	const char *paths[] = {root};
	fkt_trace_start();
	CHECK_EQ(fk_tree_sync(paths, 1, &o, &st), 0);
	fkt_trace_stop();
	fix_check_fsyncs(root);
	check_counts(&st);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 0);
	CHECK_EQ(fkt_trace_nr("fadvise", NULL), 0);
	CHECK_EQ(st.writeback_ranges, 0);
	CHECK_EQ(st.writeback_bytes, 0);
	CHECK_EQ(st.fsync_calls, FIX_FILES);
	CHECK_EQ(st.dir_fsync_calls, FIX_DIRS);
	CHECK_EQ(fkt_trace_nr("open", "/a"), 1);
	CHECK_EQ(fkt_trace_nr("open", "/sub/c"), 1);
	CHECK_EQ(rep.errors + rep.warnings, 0);
	free(root);
}

/* A budget of one kept descriptor: the others are closed after their
 * hint and reopened for the fsync; still once per inode, hints first. */
static void test_twopass_budget(void)
{
	char *root = make_tree("budget");
	struct rlimit old, low;
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	/* The lowest limit that leaves a window of one descriptor (the
	 * reserve plus those open now). */
	for (low.rlim_cur = 8; low.rlim_cur < 1024; low.rlim_cur++) {
		CHECK_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
		if (fk_fd_window() > 0)
			break;
	}
	CHECK_EQ(fk_fd_window(), 1);
	struct fk_tree_stats st;
	struct reports rep = {0};
	int r = run(root, FK_SYNC_TWOPASS, &st, &rep);
	setrlimit(RLIMIT_NOFILE, &old);
	CHECK_EQ(r, 0);
	fix_check_fsyncs(root);
	check_hints_first();
	size_t opens = fkt_trace_nr("open", "/a") + fkt_trace_nr("open", "/b") +
		       fkt_trace_nr("open", "/sub/c") +
		       fkt_trace_nr("open", "/sub/deep/h1") +
		       fkt_trace_nr("open", "/h2") +
		       fkt_trace_nr("open", "/sub/h3");
	CHECK_EQ(opens, 2 * FIX_FILES - 1);
	free(root);
}

static void test_syncfs(void)
{
	char *root = make_tree("syncfs");
	struct fk_tree_stats st;
	struct reports rep = {0};
	CHECK_EQ(run(root, FK_SYNC_SYNCFS, &st, &rep), 0);
	CHECK_EQ(fkt_trace_nr("syncfs", NULL), 1);
	CHECK_EQ(st.syncfs_calls, 1);
	CHECK_EQ(fkt_trace_nr("fsync", NULL), 0);
	CHECK_EQ(fkt_trace_nr("fdatasync", NULL), 0);
	CHECK_EQ(fkt_trace_nr("open", "/a"), 0);
	CHECK_EQ(fkt_trace_nr("open", "/fifo"), 0);
	CHECK_EQ(fkt_trace_nr("open", "/sock"), 0);
	check_counts(&st);
	/* This kernel is >= 5.8 on the test machines: no warning then. */
	struct utsname u;
	if (uname(&u) == 0 && fk_kernel_before(u.release, 5, 8) == 0)
		CHECK_EQ(rep.warnings, 0);

	/* A second file system inside the tree: two syncfs calls. */
	if (fkt_is_root()) {
		char mnt[PATH_MAX];
		snprintf(mnt, sizeof(mnt), "%s/sub/mnt", root);
		CHECK_EQ(mkdir(mnt, 0755), 0);
		if (mount("fktest", mnt, "tmpfs", 0, "size=1m") == 0) {
			char f[PATH_MAX + 8];
			snprintf(f, sizeof(f), "%s/f", mnt);
			CHECK_EQ(fkt_write_file(f, 1000, 5), 0);
			CHECK_EQ(run(root, FK_SYNC_SYNCFS, &st, &rep), 0);
			CHECK_EQ(fkt_trace_nr("syncfs", NULL), 2);
			CHECK_EQ(fkt_trace_nr("syncfs", "/sub/mnt"), 1);
			CHECK_EQ(st.syncfs_calls, 2);
			CHECK_EQ(fkt_trace_nr("fsync", NULL), 0);
			CHECK_EQ(umount(mnt), 0);
		} else {
			fprintf(stderr, "note: tmpfs mount failed, one file "
					"system only\n");
		}
	}
	free(root);
}

/* The same tree named twice, and a subtree of it: each inode once. */
static void test_overlap(void)
{
	char *root = make_tree("overlap");
	char sub[PATH_MAX];
	snprintf(sub, sizeof(sub), "%s/sub", root);
	for (int method = FK_SYNC_TWOPASS; method <= FK_SYNC_FSYNC; method++) {
		struct fk_tree_opts o;
		fk_tree_opts_init(&o);
		o.sync_io = FK_SYNC_IO_THREADS; /* traced: not io_uring */
		o.sync_method = method;
		const char *paths[] = {sub, root, root};
		struct fk_tree_stats st;
		fkt_trace_start();
		CHECK_EQ(fk_tree_sync(paths, 3, &o, &st), 0);
		fkt_trace_stop();
		fix_check_fsyncs(root);
		check_counts(&st);
	}
	free(root);
}

/* A symlink given as PATH is followed (as sync -f does). */
static void test_symlink_root(void)
{
	char *root = make_tree("linkroot");
	char link[PATH_MAX];
	snprintf(link, sizeof(link), "%s.link", root);
	CHECK_EQ(symlink(root, link), 0);
	struct fk_tree_stats st;
	struct reports rep = {0};
	CHECK_EQ(run(link, FK_SYNC_FSYNC, &st, &rep), 0);
	fix_check_fsyncs(root);
	check_counts(&st);
	free(root);
}

static void test_fdmap(void)
{
	struct fk_fdmap *m;
	CHECK_EQ(fk_fdmap_create(2, &m), 0);
	int fds[3];
	for (int i = 0; i < 3; i++)
		fds[i] = open("/dev/null", O_RDONLY);
	CHECK_EQ(fk_fdmap_put(m, 1, 10, fds[0], 0), 0);
	CHECK_EQ(fk_fdmap_put(m, 1, 10, fds[1], 0), 1); /* already kept */
	CHECK_EQ(fk_fdmap_put(m, 2, 10, fds[1], 1), 0);
	CHECK_EQ(fk_fdmap_put(m, 1, 11, fds[2], 0), 1); /* budget full */
	CHECK_EQ(fk_fdmap_nr_fds(m), 2);
	CHECK_EQ(fk_fdmap_take(m, 1, 10), fds[0]);
	CHECK_EQ(fk_fdmap_take(m, 1, 10), -1);
	CHECK_EQ(fk_fdmap_take(m, 9, 9), -1);
	CHECK_EQ(fk_fdmap_put(m, 1, 11, fds[2], 0), 0);
	close(fds[0]);

	/* Flags: many inodes (forces the table to grow), kept apart. */
	for (unsigned i = 0; i < 5000; i++)
		CHECK_EQ(fk_fdmap_set_flags(
			     m, 3, i, i & 1 ? FK_INODE_SEEN : FK_INODE_SYNCED),
			 0);
	unsigned bad = 0;
	for (unsigned i = 0; i < 5000; i++)
		if (fk_fdmap_flags(m, 3, i) !=
		    (i & 1 ? FK_INODE_SEEN : FK_INODE_SYNCED))
			bad++;
	CHECK_EQ(bad, 0);
	CHECK_EQ(fk_fdmap_flags(m, 4, 1), 0);
	CHECK_EQ(fk_fdmap_take(m, 2, 10), fds[1]);
	CHECK_EQ(fk_fdmap_put(m, 2, 10, fds[1], 1), 0);
	CHECK_EQ(fk_fdmap_note_path(m, "open", "x"), 0);
	CHECK_EQ(fk_fdmap_note_path(m, "open", "x"), 1);
	CHECK_EQ(fk_fdmap_note_path(m, "stat", "x"), 0);

	/* Destroy closes what is still kept. */
	fk_fdmap_destroy(m);
	CHECK_EQ(fcntl(fds[1], F_GETFD), -1);
	CHECK_EQ(fcntl(fds[2], F_GETFD), -1);
}

static void test_kernel_version(void)
{
	CHECK_EQ(fk_kernel_before("5.7.19", 5, 8), 1);
	CHECK_EQ(fk_kernel_before("4.19.0-25-amd64", 5, 8), 1);
	CHECK_EQ(fk_kernel_before("5.8.0", 5, 8), 0);
	CHECK_EQ(fk_kernel_before("5.10.0-28-amd64", 5, 8), 0);
	CHECK_EQ(fk_kernel_before("6.1.0-13-amd64", 5, 8), 0);
	CHECK_EQ(fk_kernel_before("junk", 5, 8), -EINVAL);
	CHECK_EQ(fk_kernel_before("5", 5, 8), -EINVAL);
}

static void test_bad_args(void)
{
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.sync_io = FK_SYNC_IO_THREADS; /* traced: not io_uring */
	struct fk_tree_stats st;
	const char *paths[] = {fkt_tmpdir()};
	CHECK_EQ(fk_tree_sync(paths, 0, &o, &st), -EINVAL);
	CHECK_EQ(fk_tree_sync(NULL, 1, &o, &st), -EINVAL);
	o.sync_method = 7;
	CHECK_EQ(fk_tree_sync(paths, 1, &o, &st), -EINVAL);
	/* A PATH that does not exist is an error, not a vanished entry. */
	o.sync_method = FK_SYNC_TWOPASS;
	struct reports rep = {0};
	o.report = on_report;
	o.report_arg = &rep;
	char missing[PATH_MAX];
	snprintf(missing, sizeof(missing), "%s/missing", fkt_tmpdir());
	const char *mp[] = {missing};
	CHECK_EQ(fk_tree_sync(mp, 1, &o, &st), -ENOENT);
	CHECK_EQ(rep.errors, 1);
	CHECK_EQ(st.errors, 1);
	CHECK(strstr(rep.last_path, "/missing") != NULL);
}

int main(void)
{
	test_fdmap();
	test_kernel_version();
	test_fsync();
	test_twopass();
	test_twopass_no_hints();
	test_twopass_budget();
	test_syncfs();
	test_overlap();
	test_symlink_root();
	test_bad_args();
	return fkt_done();
}
