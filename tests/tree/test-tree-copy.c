// SPDX-License-Identifier: MIT
/*
 * test-tree-copy.c - fk_tree_copy copies faithfully with every method:
 * nested directories, empty and sparse files (allocated blocks
 * compared), valid and dangling symlinks, three hard links to one inode,
 * a FIFO and a UNIX socket, a path longer than PATH_MAX, names with
 * spaces, newlines and non-UTF-8 bytes, modes 0000/0444/4755, owners,
 * timestamps (directories' after their contents), an xattr; and the
 * cp -a rules for the destination (into an existing directory, a single
 * file, never onto itself or into itself).
 */
#include "fktest.h"
#include "flushkit.h"
#include "test-tree-copy-lib.h"

#include <limits.h>
#include <sys/stat.h>

static void reporter(void *arg, int level, const char *op, const char *path,
		     int err)
{
	int *n = arg;
	(*n)++;
	fprintf(stderr, "report: %s %s '%.200s': %s\n",
		level ? "error" : "warning", op, path, fk_strerror(err));
}

static const char *method_names[] = {"writeback", "delayed", "fsync-each",
				     "syncfs", "auto"};

static void check_stats(const struct fk_tree_stats *st, int method)
{
	uint64_t files = fkt_is_root() ? 15 : 14;
	CHECK_EQ(st->files, files);
	CHECK_EQ(st->dirs, 6 + TC_DEEP_LEVELS + 1);
	CHECK_EQ(st->symlinks, 3);
	CHECK_EQ(st->specials, 2);
	CHECK_EQ(st->hardlinks, 3);
	CHECK_EQ(st->errors, 0);
	CHECK_EQ(st->vanished, 0);
	CHECK(st->bytes >= 3 * 1024 * 1024 + 17);
	/* Data copied, not holes: the sparse file adds at most its two
	 * data segments. */
	CHECK(st->bytes < 4 * 1024 * 1024);
	if (method == FK_COPY_SYNCFS ||
	    (method == FK_COPY_AUTO && st->syncfs_calls)) {
		CHECK_EQ(st->syncfs_calls, 2); /* data, then times */
		CHECK_EQ(st->fsync_calls, 0);
		/* auto's sweep: only the parent is fsynced (the top-level
		 * name); the syncfs committed the directories. */
		if (method == FK_COPY_AUTO)
			CHECK_EQ(st->dir_fsync_calls, 1);
	} else {
		/* Every file inode twice (its data, then its times: tree_copy.c
		 * invariant 7); every directory twice (its entries, then its
		 * times: invariant 2), plus the parent. */
		CHECK_EQ(st->fsync_calls, 2 * files);
		CHECK_EQ(st->dir_fsync_calls, 2 * st->dirs + 1);
		CHECK_EQ(st->syncfs_calls, 0);
	}
	if (method == FK_COPY_WRITEBACK)
		CHECK(st->writeback_ranges > 0);
	else
		CHECK_EQ(st->writeback_ranges, 0);
	CHECK(st->total_ns >= st->walk_ns);
}

static void check_links(const char *dst)
{
	char p[4400];
	struct stat s1, s2, s3;
	snprintf(p, sizeof(p), "%s/hl1", dst);
	CHECK(lstat(p, &s1) == 0);
	snprintf(p, sizeof(p), "%s/a/hl2", dst);
	CHECK(lstat(p, &s2) == 0);
	snprintf(p, sizeof(p), "%s/a/b/c/hl3", dst);
	CHECK(lstat(p, &s3) == 0);
	CHECK(s1.st_ino == s2.st_ino && s2.st_ino == s3.st_ino);
	CHECK_EQ(s1.st_nlink, 3);

	snprintf(p, sizeof(p), "%s/sparse", dst);
	CHECK(lstat(p, &s1) == 0);
	CHECK_EQ(s1.st_size, 8 << 20);
	CHECK((uint64_t)s1.st_blocks * 512 < (1u << 20));
	snprintf(p, sizeof(p), "%s/a/allhole", dst);
	CHECK(lstat(p, &s1) == 0);
	CHECK_EQ(s1.st_size, 1 << 20);
	CHECK(s1.st_blocks <= 8);
	snprintf(p, sizeof(p), "%s/mode4755", dst);
	CHECK(lstat(p, &s1) == 0);
	CHECK_EQ(s1.st_mode & 07777, 04755);
}

int main(void)
{
	const char *tmp = fkt_tmpdir();
	char src[4200], dst[4200];
	snprintf(src, sizeof(src), "%s/src", tmp);
	CHECK(tc_make_fidelity_tree(src) == 0);
	umask(022);

	for (int m = FK_COPY_WRITEBACK; m <= FK_COPY_AUTO; m++) {
		fprintf(stderr, "== method %s\n", method_names[m]);
		snprintf(dst, sizeof(dst), "%s/dst-%s", tmp, method_names[m]);
		struct fk_tree_opts o;
		struct fk_tree_stats st;
		int reports = 0;
		fk_tree_opts_init(&o);
		o.copy_method = m;
		o.report = reporter;
		o.report_arg = &reports;
		if (m == FK_COPY_WRITEBACK)
			o.drop_cache = 1;
		int r = fk_tree_copy(src, dst, &o, &st);
		CHECK_EQ(r, 0);
		CHECK_EQ(reports, 0);
		check_stats(&st, m);
		int entries = 0;
		CHECK_EQ(tc_compare_trees(src, dst, &entries), 0);
		fprintf(stderr, "compared %d entries\n", entries);
		CHECK(entries >= 50);
		check_links(dst);
	}

	/* An existing directory receives DST/basename(SRC), as cp does. */
	{
		snprintf(dst, sizeof(dst), "%s/into", tmp);
		CHECK(mkdir(dst, 0755) == 0);
		struct fk_tree_stats st;
		CHECK_EQ(fk_tree_copy(src, dst, NULL, &st), 0);
		char inner[4300];
		snprintf(inner, sizeof(inner), "%s/src", dst);
		CHECK_EQ(tc_compare_trees(src, inner, NULL), 0);
		/* A single file, to a new name and into a directory. */
		char f[4300], g[4300];
		snprintf(f, sizeof(f), "%s/big", src);
		snprintf(f, sizeof(f), "%s/a/b/big", src);
		snprintf(g, sizeof(g), "%s/single", tmp);
		CHECK_EQ(fk_tree_copy(f, g, NULL, &st), 0);
		CHECK_EQ(st.files, 1);
		CHECK_EQ(st.dirs, 0);
		CHECK_EQ(st.fsync_calls, 2);	 /* data, then times */
		CHECK_EQ(st.dir_fsync_calls, 1); /* the parent */
		size_t n1, n2;
		char *c1 = fkt_read_file(f, &n1), *c2 = fkt_read_file(g, &n2);
		CHECK(c1 && c2 && n1 == n2 && memcmp(c1, c2, n1) == 0);
		free(c2);
		CHECK_EQ(fk_tree_copy(f, dst, NULL, &st), 0);
		snprintf(g, sizeof(g), "%s/big", dst);
		c2 = fkt_read_file(g, &n2);
		CHECK(c1 && c2 && n1 == n2 && memcmp(c1, c2, n1) == 0);
		free(c2);
		/* Copying over an existing file replaces it. */
		snprintf(g, sizeof(g), "%s/single", tmp);
		CHECK(fkt_write_file(g, 10, 99) == 0);
		CHECK_EQ(fk_tree_copy(f, g, NULL, &st), 0);
		c2 = fkt_read_file(g, &n2);
		CHECK(c1 && c2 && n1 == n2 && memcmp(c1, c2, n1) == 0);
		free(c2);

		/* Onto itself: refused, the source untouched. */
		CHECK_EQ(fk_tree_copy(f, f, NULL, &st), -EEXIST);
		c2 = fkt_read_file(f, &n2);
		CHECK(c1 && c2 && n1 == n2 && memcmp(c1, c2, n1) == 0);
		free(c2);
		free(c1);
	}

	/* Into itself: refused before anything is created (no endless
	 * recursion, the source is not modified). */
	{
		char s2[4300], d2[4300];
		snprintf(s2, sizeof(s2), "%s/self", tmp);
		CHECK(mkdir(s2, 0755) == 0);
		snprintf(d2, sizeof(d2), "%s/self/x", tmp);
		CHECK(fkt_write_file(d2, 10, 1) == 0);
		snprintf(d2, sizeof(d2), "%s/self/sub", tmp);
		CHECK(mkdir(d2, 0755) == 0);
		struct fk_tree_stats st;
		int reports = 0;
		struct fk_tree_opts o;
		fk_tree_opts_init(&o);
		o.report = reporter;
		o.report_arg = &reports;
		int r = fk_tree_copy(s2, d2, &o, &st);
		CHECK_EQ(r, -EINVAL);
		CHECK_EQ(reports, 1);
		snprintf(d2, sizeof(d2), "%s/self/sub/self", tmp);
		struct stat sb;
		CHECK(lstat(d2, &sb) < 0 && errno == ENOENT);
	}
	return fkt_done();
}
