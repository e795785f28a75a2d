// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-order.c - the order of calls of fk_tree_copy per method,
 * from the syscall-table trace:
 *  - every method: each file inode fsynced twice (hard links too: once
 *    for its data, once more for its times, set only after the data is
 *    durable, tree_copy.c invariant 7), each directory twice (its
 *    entries, then its times: set only after its entries are durable,
 *    invariant 2: its futimens between its two fsyncs, or with syncfs
 *    between the two syncfs calls), the first fsync of everything
 *    before its parent directory's, the destination's parent directory
 *    last; FIFOs never opened;
 *  - fsync-each: a file's fsync after its last write and before the next
 *    file is opened;
 *  - delayed and writeback: every copy write before the first fsync;
 *  - writeback: sync_file_range hints issued while copying (before the
 *    last write), none for delayed;
 *  - syncfs: one syncfs after the last write, then one for the times,
 *    no file fsync.
 */
#include "fktest.h"
#include "flushkit.h"
#include "test-tree-copy-lib.h"

#include <libgen.h>
#include <sys/stat.h>

static char src[4200], dst[4200], tmp_real[4096];

static int under(const char *path, const char *root)
{
	size_t n = strlen(root);
	return strncmp(path, root, n) == 0 && (path[n] == 0 || path[n] == '/');
}

static int is_write(const struct fkt_call *c)
{
	return !strcmp(c->op, "copy_file_range") || !strcmp(c->op, "pwrite") ||
	       !strcmp(c->op, "write");
}

static void make_tree(void)
{
	CHECK(mkdir(src, 0755) == 0);
	int top = open(src, O_RDONLY | O_DIRECTORY);
	CHECK(mkdirat(top, "d1", 0755) == 0);
	int d1 = openat(top, "d1", O_RDONLY | O_DIRECTORY);
	CHECK(mkdirat(d1, "d2", 0755) == 0);
	int d2 = openat(d1, "d2", O_RDONLY | O_DIRECTORY);
	CHECK(tc_write_at(top, "f0", 0, 1000, 1, 0644) == 0);
	CHECK(tc_write_at(d1, "f1", 0, 300 * 1024, 2, 0644) == 0);
	CHECK(tc_write_at(d1, "f2", 0, 10, 3, 0644) == 0);
	CHECK(tc_write_at(d2, "f3", 0, 1200 * 1024, 4, 0644) == 0);
	CHECK(tc_write_at(top, "h1", 0, 4000, 5, 0644) == 0);
	CHECK(linkat(top, "h1", d1, "h2", 0) == 0);
	CHECK(symlinkat("f0", top, "link") == 0);
	CHECK(mkfifoat(d2, "fifo", 0644) == 0);
	close(d2);
	close(d1);
	close(top);
}

/* Index of the call @op of @path at or after @from; -1 if none. */
static long call_of(const char *op, const char *path, size_t from)
{
	for (size_t i = from; i < fkt_trace_count(); i++) {
		const struct fkt_call *c = fkt_trace_get(i);
		if (!strcmp(c->op, op) && (!path || !strcmp(c->path, path)))
			return (long)i;
	}
	return -1;
}

/* Index of the fsync of @path at or after @from; -1 if none. */
static long fsync_of(const char *path, size_t from)
{
	return call_of("fsync", path, from);
}

/*
 * Invariant 2: the directory @path gets its times (its one futimens)
 * only after its entries are durable (after its first fsync, or the
 * first syncfs), and they are made durable after (its second fsync, or
 * the second syncfs).
 */
static void check_dir_times(const char *path, int method)
{
	const char *op = method == FK_COPY_SYNCFS ? "syncfs" : "fsync";
	const char *of = method == FK_COPY_SYNCFS ? NULL : path;
	long t = call_of("futimens", path, 0);
	long first = call_of(op, of, 0);
	long second = first < 0 ? -1 : call_of(op, of, (size_t)first + 1);
	if (t < 0 || first < 0 || second < 0 || t < first || t > second) {
		fprintf(stderr,
			"'%s': times at %ld, %s at %ld and %ld: not "
			"between the two\n",
			path, t, op, first, second);
		CHECK(0);
	}
	CHECK_EQ(call_of("futimens", path, (size_t)t + 1), -1);
}

static size_t nr_fsync_of(const char *path)
{
	size_t n = 0;
	for (size_t i = 0; i < fkt_trace_count(); i++) {
		const struct fkt_call *c = fkt_trace_get(i);
		if (!strcmp(c->op, "fsync") && !strcmp(c->path, path))
			n++;
	}
	return n;
}

static void check_common(int method)
{
	size_t n = fkt_trace_count();
	long last_write = -1, first_fsync = -1, last_fsync = -1;
	long first_sfr = -1;
	size_t nr_sfr = 0, nr_syncfs = 0, nr_fsync = 0;
	for (size_t i = 0; i < n; i++) {
		const struct fkt_call *c = fkt_trace_get(i);
		if (is_write(c)) {
			CHECK(under(c->path, dst));
			last_write = (long)i;
		}
		if (!strcmp(c->op, "fsync")) {
			nr_fsync++;
			if (first_fsync < 0)
				first_fsync = (long)i;
			last_fsync = (long)i;
			/* Before its parent directory's fsync (the first
			 * one: the second fsync of a file makes its times
			 * durable, the directory is not involved). */
			if (strcmp(c->path, tmp_real) &&
			    fsync_of(c->path, 0) == (long)i) {
				char *p = strdup(c->path);
				long parent = fsync_of(dirname(p), i + 1);
				if (parent < 0)
					fprintf(stderr,
						"no later parent fsync "
						"for '%s'\n",
						c->path);
				CHECK(parent > (long)i);
				free(p);
			}
		}
		if (!strcmp(c->op, "sync_file_range")) {
			CHECK(under(c->path, dst));
			nr_sfr++;
			if (first_sfr < 0)
				first_sfr = (long)i;
		}
		if (!strcmp(c->op, "syncfs"))
			nr_syncfs++;
		/* FIFOs are never opened. */
		if (!strcmp(c->op, "open"))
			CHECK(strstr(c->path, "/fifo") == NULL);
	}
	CHECK(last_write > 0);

	static const char *files[] = {"f0", "d1/f1", "d1/f2", "d1/d2/f3"};
	static const char *dirs[] = {"", "/d1", "/d1/d2"};
	char p[4300];
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", dst, dirs[i]);
		check_dir_times(p, method);
	}
	if (method == FK_COPY_SYNCFS) {
		CHECK_EQ(nr_syncfs, 2); /* data, then times */
		CHECK(fkt_trace_find("syncfs", NULL, 0) > last_write);
		CHECK_EQ(nr_fsync, 0); /* parent on the same fs */
		CHECK_EQ(nr_sfr, 0);
		return;
	}
	CHECK_EQ(nr_syncfs, 0);
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", dst, files[i]);
		CHECK_EQ(nr_fsync_of(p), 2); /* data, then times */
	}
	/* The hard-linked inode twice, under whichever name came first. */
	snprintf(p, sizeof(p), "%s/h1", dst);
	size_t h = nr_fsync_of(p);
	snprintf(p, sizeof(p), "%s/d1/h2", dst);
	CHECK_EQ(h + nr_fsync_of(p), 2);
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", dst, dirs[i]);
		CHECK_EQ(nr_fsync_of(p), 2); /* entries, then times */
	}
	CHECK_EQ(nr_fsync, 2 * 5 + 2 * 3 + 1);
	/* The destination's parent last. */
	CHECK(last_fsync >= 0 &&
	      !strcmp(fkt_trace_get((size_t)last_fsync)->path, tmp_real));

	if (method == FK_COPY_DELAYED || method == FK_COPY_WRITEBACK)
		CHECK(last_write < first_fsync);
	if (method == FK_COPY_WRITEBACK) {
		/* Hints while copying, not only at the end. */
		CHECK(nr_sfr >= 3);
		CHECK(first_sfr >= 0 && first_sfr < last_write);
	} else {
		CHECK_EQ(nr_sfr, 0);
	}
	if (method == FK_COPY_FSYNC_EACH) {
		/* For each created file: its writes, its fsync, then the
		 * next file's open. */
		for (size_t i = 0; i < n; i++) {
			const struct fkt_call *c = fkt_trace_get(i);
			if (strcmp(c->op, "open") || !(c->off & O_CREAT))
				continue;
			long f = fsync_of(c->path, i);
			CHECK(f > (long)i);
			for (size_t j = i + 1; f > 0 && j < n; j++) {
				const struct fkt_call *w = fkt_trace_get(j);
				if (is_write(w) && !strcmp(w->path, c->path))
					CHECK((long)j < f);
				/* The next regular file opened (source or
				 * destination) comes after the fsync. */
				if (!strcmp(w->op, "open") &&
				    !(w->off & O_DIRECTORY) &&
				    !(w->off & O_PATH) && (long)j < f) {
					fprintf(stderr,
						"open '%s' before "
						"fsync of '%s'\n",
						w->path, c->path);
					CHECK(0);
				}
			}
		}
	}
}

int main(void)
{
	const char *tmp = fkt_tmpdir();
	CHECK(realpath(tmp, tmp_real) != NULL);
	snprintf(src, sizeof(src), "%s/src", tmp_real);
	make_tree();
	static const char *names[] = {"writeback", "delayed", "fsync-each",
				      "syncfs"};
	for (int m = FK_COPY_WRITEBACK; m <= FK_COPY_SYNCFS; m++) {
		fprintf(stderr, "== method %s\n", names[m]);
		snprintf(dst, sizeof(dst), "%s/dst-%s", tmp_real, names[m]);
		struct fk_tree_opts o;
		struct fk_tree_stats st;
		fk_tree_opts_init(&o);
		o.sync_io = FK_SYNC_IO_THREADS; /* traced: not io_uring */
		o.copy_method = m;
		o.flush_after_bytes = 256 * 1024;
		fkt_trace_start();
		int r = fk_tree_copy(src, dst, &o, &st);
		fkt_trace_stop();
		CHECK_EQ(r, 0);
		int before = fkt_failures;
		check_common(m);
		if (fkt_failures != before)
			fkt_trace_dump(stderr);
		CHECK_EQ(tc_compare_trees(src, dst, NULL), 0);
	}
	return fkt_done();
}
