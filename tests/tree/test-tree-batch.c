// SPDX-License-Identifier: MIT
/*
 * test-tree-batch.c - the batched final fsync pass of fk_tree_sync
 * (twopass) and fk_tree_copy (writeback, delayed), through the traced
 * syscall table with the threads and sequential backends (io_uring's
 * fsyncs do not go through the table):
 *
 *  - order: every file and directory under a directory fsynced before
 *    it (so directories bottom-up), each inode exactly once, every
 *    inode fsynced; also with a descriptor budget of 10 (RLIMIT_NOFILE
 *    soft limit 138), which flushes many times during the walk; for cp,
 *    the destination's parent last;
 *  - one injected EIO among the files of a batch: the run fails with
 *    -EIO, the report names that file's path and EIO, that fsync is not
 *    retried, every other file and every directory is still fsynced;
 *  - the backend is reported in st->sync_io / sync_jobs; io_uring (when
 *    the kernel allows it) syncs the same tree without the table;
 *  - bad sync_io / sync_jobs are -EINVAL; fsync and fsync-each are not
 *    batched (st->sync_io 0).
 */
#include "fktest.h"
#include "flushkit.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define NR_TOP 4  /* d0..d3 */
#define NR_SUB 3  /* e0..e2 in each */
#define NR_LEAF 5 /* f0..f4 in each e */
/* Regular-file inodes: the leaves, plus root/r0 and root/r1; root/hl is
 * a hard link to d1/e1/f1. */
#define NR_FILES (NR_TOP * NR_SUB * NR_LEAF + 2)
#define NR_DIRS (1 + NR_TOP + NR_TOP * NR_SUB)

static char tmp[PATH_MAX]; /* realpath's buffer */
static char base[1024];	   /* its copy, short enough */

struct reports {
	int errors;
	char path[PATH_MAX];
	char op[32];
	int err;
};

static void on_report(void *arg, int level, const char *op, const char *path,
		      int err)
{
	struct reports *r = arg;
	fprintf(stderr, "report: %s %s '%s': %s\n",
		level == FK_REPORT_ERROR ? "error" : "warning", op, path,
		fk_strerror(err));
	if (level != FK_REPORT_ERROR)
		return;
	r->errors++;
	snprintf(r->path, sizeof(r->path), "%s", path);
	snprintf(r->op, sizeof(r->op), "%s", op);
	r->err = err;
}

static void build(const char *root)
{
	char p[PATH_MAX], q[PATH_MAX];
	CHECK_EQ(mkdir(root, 0755), 0);
	for (int i = 0; i < NR_TOP; i++) {
		snprintf(p, sizeof(p), "%s/d%d", root, i);
		CHECK_EQ(mkdir(p, 0755), 0);
		for (int j = 0; j < NR_SUB; j++) {
			snprintf(p, sizeof(p), "%s/d%d/e%d", root, i, j);
			CHECK_EQ(mkdir(p, 0755), 0);
			for (int k = 0; k < NR_LEAF; k++) {
				snprintf(p, sizeof(p), "%s/d%d/e%d/f%d", root,
					 i, j, k);
				CHECK_EQ(fkt_write_file(p, 4096 * (k + 1),
							(unsigned)(i + j + k)),
					 0);
			}
		}
	}
	snprintf(p, sizeof(p), "%s/r0", root);
	CHECK_EQ(fkt_write_file(p, 10000, 7), 0);
	snprintf(p, sizeof(p), "%s/r1", root);
	CHECK_EQ(fkt_write_file(p, 0, 8), 0);
	snprintf(p, sizeof(p), "%s/d1/e1/f1", root);
	snprintf(q, sizeof(q), "%s/hl", root);
	CHECK_EQ(link(p, q), 0);
}

/* 1 if @path is @dir or below it. */
static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/*
 * fk_tree_copy fsyncs each file and directory a second time once its
 * times are set (tree_copy.c invariants 7 and 2), after the whole fsync
 * pass: 1 if trace entry @i is such an fsync, given @top_at, the index of
 * the fsync of the copy's top (the pass's last).  By position, not by
 * path: a hard-linked file may show under either name.
 */
static int is_times_fsync(size_t i, long top_at)
{
	return top_at >= 0 && (long)i > top_at;
}

/*
 * Check the trace's fsyncs under @root: each path once, @nr_expected of
 * them, and each directory after everything fsynced below it.  @parent
 * (may be NULL): fsynced once, after everything.  @nr_times: the second
 * fsyncs expected (a copy's times, of files and directories), not
 * counted in @nr_expected and all after the first ones.
 */
static void check_order(const char *root, size_t nr_expected,
			const char *parent, size_t nr_times)
{
	size_t n = fkt_trace_count(), nr = 0, nr_second = 0;
	long parent_at = -1, top_at = -1;
	for (size_t i = 0; nr_times && top_at < 0 && i < n; i++)
		if (!strcmp(fkt_trace_get(i)->op, "fsync") &&
		    !strcmp(fkt_trace_get(i)->path, root))
			top_at = (long)i;
	for (size_t i = 0; i < n; i++) {
		const struct fkt_call *c = fkt_trace_get(i);
		if (strcmp(c->op, "fsync"))
			continue;
		if (nr_times && is_times_fsync(i, top_at) &&
		    !(parent && !strcmp(c->path, parent))) {
			nr_second++;
			continue;
		}
		if (parent && !strcmp(c->path, parent)) {
			CHECK_EQ(parent_at, -1);
			parent_at = (long)i;
			continue;
		}
		if (!under(c->path, root)) {
			fprintf(stderr, "fsync outside the tree: %s\n",
				c->path);
			fkt_failures++;
			continue;
		}
		nr++;
		/* Once, and nothing below it comes later. */
		for (size_t j = i + 1; j < n; j++) {
			const struct fkt_call *d = fkt_trace_get(j);
			if (strcmp(d->op, "fsync"))
				continue;
			if (nr_times && (parent && !strcmp(d->path, parent)))
				continue;
			if (nr_times && is_times_fsync(j, top_at))
				continue; /* a file's times */
			if (!strcmp(d->path, c->path) ||
			    (strcmp(d->path, c->path) &&
			     under(d->path, c->path))) {
				fprintf(stderr,
					"fsync %s at %zu, then %s at "
					"%zu\n",
					c->path, i, d->path, j);
				fkt_failures++;
			}
		}
	}
	CHECK_EQ(nr, nr_expected);
	CHECK_EQ(nr_second, nr_times);
	if (parent) {
		CHECK(parent_at >= 0);
		for (size_t j = (size_t)(parent_at + 1); j < n; j++)
			CHECK(strcmp(fkt_trace_get(j)->op, "fsync") != 0);
	}
}

static void set_nofile(rlim_t soft)
{
	struct rlimit rl;
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = soft;
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

static int sync_tree(const char *root, int sync_io, struct fk_tree_stats *st,
		     struct reports *rep)
{
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	/* Per-file fsyncs, the batching under test: the default (auto)
	 * would sweep with syncfs when the tree holds most of the
	 * machine's dirty data, as on an idle machine. */
	o.sync_method = FK_SYNC_TWOPASS;
	o.sync_io = sync_io;
	o.sync_jobs = 8;
	o.report = on_report;
	o.report_arg = rep;
	const char *paths[] = {root};
	return fk_tree_sync(paths, 1, &o, st);
}

static void test_sync_order(int sync_io, rlim_t nofile, const char *tag)
{
	char root[2048];
	snprintf(root, sizeof(root), "%s/sync-%s", base, tag);
	build(root);
	struct rlimit saved;
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
	if (nofile)
		set_nofile(nofile);
	struct fk_tree_stats st;
	struct reports rep = {0};
	fkt_trace_start();
	int r = sync_tree(root, sync_io, &st, &rep);
	fkt_trace_stop();
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
	fprintf(stderr, "== sync %s: %d, %llu+%llu fsyncs\n", tag, r,
		(unsigned long long)st.fsync_calls,
		(unsigned long long)st.dir_fsync_calls);
	CHECK_EQ(r, 0);
	CHECK_EQ(rep.errors, 0);
	CHECK_EQ(st.sync_io, sync_io);
	CHECK_EQ(st.sync_jobs, sync_io == FK_SYNC_IO_SEQUENTIAL ? 1 : 8);
	CHECK_EQ(st.files, NR_FILES);
	CHECK_EQ(st.dirs, NR_DIRS);
	CHECK_EQ(st.fsync_calls, NR_FILES);
	CHECK_EQ(st.dir_fsync_calls, NR_DIRS);
	check_order(root, NR_FILES + NR_DIRS, NULL, 0);
}

static void test_copy_order(int method, int sync_io, rlim_t nofile,
			    const char *tag)
{
	char src[2048], dst[2048];
	snprintf(src, sizeof(src), "%s/csrc-%s", base, tag);
	snprintf(dst, sizeof(dst), "%s/cdst-%s", base, tag);
	build(src);
	struct rlimit saved;
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
	if (nofile)
		set_nofile(nofile);
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.copy_method = method;
	o.sync_io = sync_io;
	struct reports rep = {0};
	o.report = on_report;
	o.report_arg = &rep;
	struct fk_tree_stats st;
	fkt_trace_start();
	int r = fk_tree_copy(src, dst, &o, &st);
	fkt_trace_stop();
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
	fprintf(stderr, "== cp %s: %d, %llu+%llu fsyncs\n", tag, r,
		(unsigned long long)st.fsync_calls,
		(unsigned long long)st.dir_fsync_calls);
	CHECK_EQ(r, 0);
	CHECK_EQ(rep.errors, 0);
	CHECK_EQ(st.sync_io, sync_io);
	CHECK_EQ(st.sync_jobs, sync_io == FK_SYNC_IO_SEQUENTIAL
				   ? 1
				   : FK_FSYNC_BATCH_DEFAULT_QUEUE_DEPTH);
	/* Each file and directory twice: its data (entries), then its
	 * times. */
	CHECK_EQ(st.fsync_calls, 2 * NR_FILES);
	CHECK_EQ(st.dir_fsync_calls, 2 * NR_DIRS + 1); /* + the parent */
	check_order(dst, NR_FILES + NR_DIRS, base, NR_FILES + NR_DIRS);
}

/* EIO on one file of a batch: named, not retried, the rest complete. */
static void test_eio(int sync_io, const char *tag)
{
	char root[2048];
	snprintf(root, sizeof(root), "%s/eio-%s", base, tag);
	build(root);
	struct fk_tree_stats st;
	struct reports rep = {0};
	fkt_trace_start();
	fkt_fault_set("fsync", "/d2/e1/f3", 0, -EIO);
	int r = sync_tree(root, sync_io, &st, &rep);
	unsigned fired = fkt_fault_fired();
	fkt_fault_clear();
	fkt_trace_stop();
	fprintf(stderr, "== eio %s: %d\n", tag, r);
	CHECK_EQ(r, -EIO);
	CHECK_EQ(fired, 1); /* never retried */
	CHECK_EQ(rep.errors, 1);
	CHECK_EQ(st.errors, 1);
	CHECK(!strcmp(rep.op, "fsync"));
	CHECK_EQ(rep.err, -EIO);
	char want[PATH_MAX];
	snprintf(want, sizeof(want), "%s/d2/e1/f3", root);
	CHECK(!strcmp(rep.path, want));
	/* Everything, the failed file included (once), was fsynced, in
	 * order. */
	CHECK_EQ(st.fsync_calls, NR_FILES);
	CHECK_EQ(st.dir_fsync_calls, NR_DIRS);
	check_order(root, NR_FILES + NR_DIRS, NULL, 0);
}

static void test_uring(void)
{
	char root[2048];
	snprintf(root, sizeof(root), "%s/uring", base);
	build(root);
	struct fk_tree_stats st;
	struct reports rep = {0};
	fkt_trace_start();
	int r = sync_tree(root, FK_SYNC_IO_URING, &st, &rep);
	fkt_trace_stop();
	if (r == -EPERM || r == -ENOSYS || r == -ENOMEM || r == -EOPNOTSUPP) {
		fprintf(stderr, "io_uring refused (%s): not tested\n",
			fk_strerror(r));
		return;
	}
	CHECK_EQ(r, 0);
	CHECK_EQ(st.sync_io, FK_SYNC_IO_URING);
	CHECK_EQ(st.fsync_calls, NR_FILES);
	CHECK_EQ(st.dir_fsync_calls, NR_DIRS);
	/* io_uring's fsyncs bypass the table: why the tests pin threads. */
	CHECK_EQ(fkt_trace_nr("fsync", NULL), 0);
}

static void test_options(void)
{
	char root[2048];
	snprintf(root, sizeof(root), "%s/opts", base);
	build(root);
	const char *paths[] = {root};
	struct fk_tree_opts o;
	struct fk_tree_stats st;
	fk_tree_opts_init(&o);
	CHECK_EQ(o.sync_io, FK_SYNC_IO_AUTO);
	CHECK_EQ(o.sync_jobs, 0);
	o.sync_jobs = FK_FSYNC_BATCH_MAX_QUEUE_DEPTH + 1;
	CHECK_EQ(fk_tree_sync(paths, 1, &o, &st), -EINVAL);
	o.sync_jobs = 0;
	o.sync_io = 99;
	CHECK_EQ(fk_tree_sync(paths, 1, &o, &st), -EINVAL);
	char dst[2048];
	snprintf(dst, sizeof(dst), "%s/opts-copy", base);
	CHECK_EQ(fk_tree_copy(root, dst, &o, &st), -EINVAL);
	/* The unbatched baselines ignore sync_io. */
	o.sync_method = FK_SYNC_FSYNC;
	CHECK_EQ(fk_tree_sync(paths, 1, &o, &st), 0);
	CHECK_EQ(st.sync_io, 0);
	CHECK_EQ(st.sync_jobs, 0);
	o.copy_method = FK_COPY_FSYNC_EACH;
	CHECK_EQ(fk_tree_copy(root, dst, &o, &st), 0);
	CHECK_EQ(st.sync_io, 0);
	CHECK_EQ(st.fsync_calls, 2 * NR_FILES); /* data, then times */
}

int main(void)
{
	const char *t = fkt_tmpdir();
	CHECK(realpath(t, tmp) != NULL);
	if (strlen(tmp) >= sizeof(base))
		SKIP("temporary directory path too long");
	memcpy(base, tmp, strlen(tmp) + 1);

	test_sync_order(FK_SYNC_IO_THREADS, 0, "threads");
	test_sync_order(FK_SYNC_IO_THREADS, 138, "threads-budget10");
	test_sync_order(FK_SYNC_IO_SEQUENTIAL, 138, "seq-budget10");
	test_copy_order(FK_COPY_DELAYED, FK_SYNC_IO_THREADS, 0,
			"delayed-threads");
	test_copy_order(FK_COPY_WRITEBACK, FK_SYNC_IO_THREADS, 138,
			"writeback-threads-budget10");
	test_copy_order(FK_COPY_WRITEBACK, FK_SYNC_IO_SEQUENTIAL, 0,
			"writeback-seq");
	test_eio(FK_SYNC_IO_THREADS, "threads");
	test_eio(FK_SYNC_IO_SEQUENTIAL, "seq");
	test_uring();
	test_options();
	return fkt_done();
}
