// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-reflink.c - fk_tree_copy's reflink choice (struct
 * fk_tree_opts.reflink) on real file systems (root only; 77 otherwise):
 *
 *  xfs (reflink=1)  AUTO and ALWAYS clone every file with FICLONE
 *                   (st.reflinks, FIEMAP says the extents are shared),
 *                   and the durability phase still fsyncs each clone
 *                   twice (data, then times) and the directories; after
 *                   a power cut (FS_IOC_GOINGDOWN NOLOGFLUSH, remount)
 *                   the copy is there, exact: content, size, mtime.
 *                   NEVER shares nothing (no FICLONE, no
 *                   copy_file_range, which may share extents too).
 *  ext4             ALWAYS fails with -EOPNOTSUPP, reported as "clone
 *                   (FICLONE)" naming the file, and leaves no file
 *                   behind; AUTO copies (no clone).
 */
#include "fkloop.h"
#include "fktest.h"
#include "flushkit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

static struct fkt_fs fs;
static char last_op[64], last_path[1024];
static int nr_errors;

static void on_report(void *arg, int level, const char *op, const char *path,
		      int err)
{
	(void)arg;
	(void)err;
	if (level != FK_REPORT_ERROR)
		return;
	nr_errors++;
	snprintf(last_op, sizeof(last_op), "%s", op);
	snprintf(last_path, sizeof(last_path), "%s", path);
}

static const char *const names[] = {"f1", "f2", "sub/f3"};
static const uint64_t sizes[] = {1 << 20, 65536 + 17, 300000};

/* The source under @mnt/src, durable (fsync of each file, syncfs). */
static void make_src(const char *mnt)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s/src/sub", mnt);
	CHECK(fkt_sh("mkdir -p '%s'", p) == 0);
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/src/%s", mnt, names[i]);
		CHECK(fkt_write_file(p, sizes[i], 7u + (unsigned)i) == 0);
	}
	CHECK(fkt_sh("touch -d '2014-03-04 05:06:07.891' '%s'/src/f1 "
		     "'%s'/src/f2 '%s'/src/sub/f3 && sync -f '%s'",
		     mnt, mnt, mnt, mnt) == 0);
}

/* 1 if the first extent of @path is shared (FIEMAP_EXTENT_SHARED). */
static int first_extent_shared(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	/* A struct fiemap with room for one extent after its flexible
	 * array; a union, as a struct holding fiemap's flexible array
	 * before another member is a GNU extension clang warns about. */
	union {
		struct fiemap fm;
		char room[sizeof(struct fiemap) + sizeof(struct fiemap_extent)];
	} b;
	memset(&b, 0, sizeof(b));
	b.fm.fm_length = FIEMAP_MAX_OFFSET;
	b.fm.fm_flags = FIEMAP_FLAG_SYNC;
	b.fm.fm_extent_count = 1;
	int r = ioctl(fd, FS_IOC_FIEMAP, &b.fm);
	close(fd);
	if (r < 0 || b.fm.fm_mapped_extents < 1)
		return -1;
	return !!(b.fm.fm_extents[0].fe_flags & FIEMAP_EXTENT_SHARED);
}

/* The copy @mnt/@dst/<name> equals the source: content, size, mtime. */
static void check_copy(const char *mnt, const char *dst)
{
	for (int i = 0; i < 3; i++) {
		char a[1024], b[1024];
		snprintf(a, sizeof(a), "%s/src/%s", mnt, names[i]);
		snprintf(b, sizeof(b), "%s/%s/%s", mnt, dst, names[i]);
		size_t la = 0, lb = 0;
		char *ca = fkt_read_file(a, &la), *cb = fkt_read_file(b, &lb);
		CHECK(ca && cb);
		CHECK_EQ(la, lb);
		CHECK(ca && cb && la == lb && !memcmp(ca, cb, la));
		free(ca);
		free(cb);
		struct stat sa, sb;
		CHECK(stat(a, &sa) == 0 && stat(b, &sb) == 0);
		CHECK_EQ(sa.st_mtim.tv_sec, sb.st_mtim.tv_sec);
		CHECK_EQ(sa.st_mtim.tv_nsec, sb.st_mtim.tv_nsec);
	}
}

static int copy(const char *mnt, const char *dst, int reflink,
		struct fk_tree_stats *st)
{
	char s[1024], d[1024];
	snprintf(s, sizeof(s), "%s/src", mnt);
	snprintf(d, sizeof(d), "%s/%s", mnt, dst);
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.reflink = reflink;
	o.sync_io = FK_SYNC_IO_SEQUENTIAL; /* fsyncs through fk_sys: traced */
	o.report = on_report;
	nr_errors = 0;
	last_op[0] = 0;
	return fk_tree_copy(s, d, &o, st);
}

static void on_xfs(void)
{
	char img[512], mnt[512];
	snprintf(img, sizeof(img), "%s/xfs.img", fkt_tmpdir());
	snprintf(mnt, sizeof(mnt), "%s/xfs", fkt_tmpdir());
	int r = fkt_fs_create(&fs, "xfs", img, 320ull << 20, mnt);
	if (r == 77)
		SKIP("no loop-mounted xfs here");
	CHECK(r == 0);
	if (r)
		return;
	make_src(mnt);
	struct fk_tree_stats st;
	const int modes[] = {FK_COPY_REFLINK_AUTO, FK_COPY_REFLINK_ALWAYS};
	const char *dsts[] = {"auto", "always"};
	for (int m = 0; m < 2; m++) {
		fkt_trace_start();
		r = copy(mnt, dsts[m], modes[m], &st);
		CHECK_EQ(r, 0);
		CHECK_EQ(nr_errors, 0);
		CHECK_EQ(st.reflinks, 3);
		CHECK_EQ(st.files, 3);
		/* Each clone fsynced twice: its data, then its times. */
		for (int i = 0; i < 3; i++) {
			char suffix[64];
			snprintf(suffix, sizeof(suffix), "/%s/%s", dsts[m],
				 names[i]);
			CHECK_EQ(fkt_trace_nr("fsync", suffix), 2);
			char p[1024];
			snprintf(p, sizeof(p), "%s/%s/%s", mnt, dsts[m],
				 names[i]);
			CHECK_EQ(first_extent_shared(p), 1);
		}
		CHECK_EQ(fkt_trace_nr("copy_file_range", NULL), 0);
		fkt_trace_stop();
	}
	fkt_trace_start();
	r = copy(mnt, "never", FK_COPY_REFLINK_NEVER, &st);
	CHECK_EQ(r, 0);
	CHECK_EQ(st.reflinks, 0);
	CHECK_EQ(fkt_trace_nr("copy_file_range", NULL), 0);
	fkt_trace_stop();
	for (int i = 0; i < 3; i++) {
		char p[1024];
		snprintf(p, sizeof(p), "%s/never/%s", mnt, names[i]);
		CHECK_EQ(first_extent_shared(p), 0);
	}
	/* The clones survive a power cut right after the copy returned. */
	CHECK(fkt_fs_power_cut(&fs) == 0);
	check_copy(mnt, "auto");
	check_copy(mnt, "always");
	check_copy(mnt, "never");
	fkt_fs_destroy(&fs);
}

static void on_ext4(void)
{
	char img[512], mnt[512];
	snprintf(img, sizeof(img), "%s/ext4.img", fkt_tmpdir());
	snprintf(mnt, sizeof(mnt), "%s/ext4", fkt_tmpdir());
	int r = fkt_fs_create(&fs, "ext4", img, 64ull << 20, mnt);
	if (r == 77)
		SKIP("no loop-mounted ext4 here");
	CHECK(r == 0);
	if (r)
		return;
	make_src(mnt);
	struct fk_tree_stats st;
	r = copy(mnt, "always", FK_COPY_REFLINK_ALWAYS, &st);
	CHECK_EQ(r, -EOPNOTSUPP);
	CHECK_EQ(nr_errors, 3);
	CHECK(!strcmp(last_op, "clone (FICLONE)"));
	CHECK(strstr(last_path, "/always/") != NULL);
	CHECK_EQ(st.files, 0);
	char p[1024];
	snprintf(p, sizeof(p), "%s/always/f1", mnt);
	CHECK(access(p, F_OK) < 0 && errno == ENOENT);
	r = copy(mnt, "auto", FK_COPY_REFLINK_AUTO, &st);
	CHECK_EQ(r, 0);
	CHECK_EQ(st.reflinks, 0);
	CHECK_EQ(st.files, 3);
	check_copy(mnt, "auto");
	fkt_fs_destroy(&fs);
}

int main(void)
{
	if (!fkt_is_root())
		SKIP("needs root (loop devices)");
	on_ext4();
	on_xfs();
	return fkt_done();
}
