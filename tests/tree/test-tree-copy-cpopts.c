// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-cpopts.c - the durability of cp's other modes in
 * fk_tree_copy, from the syscall-table trace, with every method:
 *  - backup (struct fk_tree_opts.backup): the existing file is renamed
 *    to its backup name, the backup fsynced, then its directory, all
 *    before the new file is created at the name; a failed fsync of the
 *    directory leaves the name free (nothing copied there) and fails the
 *    copy, the backup in place with the old content;
 *  - a numbered backup never replaces an existing name (f.~1~ there:
 *    f.~2~);
 *  - FK_COPY_LINK: each file of a tree is a hard link of its source,
 *    and the directory holding it is fsynced after the link was made
 *    (with fsync-each the inode too, right after the link);
 *  - FK_COPY_SYMLINK: the symlink's directory fsynced after it;
 *  - FK_COPY_ATTR_ONLY onto an existing file: no byte written, its
 *    data kept, the mode the source's, the file fsynced.
 */
#include "fktest.h"
#include "flushkit.h"
#include "test-tree-copy-lib.h"

#include <sys/stat.h>

static char tmp_real[4096];
static long link_idx[16], symlink_idx[16];
static int nr_link, nr_symlink;
static int (*real_linkat)(int, const char *, int, const char *, int);
static int (*real_symlinkat)(const char *, int, const char *);

/* Record where in the trace each link and symlink was made: the index
 * the next traced call gets. */
static int rec_linkat(int od, const char *op, int nd, const char *np, int fl)
{
	if (nr_link < 16)
		link_idx[nr_link++] = (long)fkt_trace_count();
	return real_linkat(od, op, nd, np, fl);
}
static int rec_symlinkat(const char *t, int nd, const char *np)
{
	if (nr_symlink < 16)
		symlink_idx[nr_symlink++] = (long)fkt_trace_count();
	return real_symlinkat(t, nd, np);
}

static void trace_start(void)
{
	fkt_trace_start();
	real_linkat = fk_sys.linkat;
	real_symlinkat = fk_sys.symlinkat;
	fk_sys.linkat = rec_linkat;
	fk_sys.symlinkat = rec_symlinkat;
	nr_link = nr_symlink = 0;
}

static void opts(struct fk_tree_opts *o, int method)
{
	fk_tree_opts_init(o);
	o->sync_io = FK_SYNC_IO_THREADS; /* traced: not io_uring */
	o->copy_method = method;
}

static long find_open_creat(const char *suffix, size_t from)
{
	for (size_t i = from; i < fkt_trace_count(); i++) {
		const struct fkt_call *c = fkt_trace_get(i);
		size_t n = strlen(c->path), m = strlen(suffix);
		if (!strcmp(c->op, "open") && (c->off & O_CREAT) &&
		    c->ret >= 0 && n >= m && !strcmp(c->path + n - m, suffix))
			return (long)i;
	}
	return -1;
}

static void put(const char *dir, const char *name, const char *text)
{
	int d = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(d >= 0);
	int fd = openat(d, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	close(d);
}

static int has(const char *dir, const char *name, const char *text)
{
	char p[8300], buf[64] = {0};
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n == (ssize_t)strlen(text) && !memcmp(buf, text, (size_t)n);
}

static void test_backup(int method)
{
	char src[4200], dst[4200], sf[4300], suffix[4300];
	snprintf(src, sizeof(src), "%s/b%d-src", tmp_real, method);
	snprintf(dst, sizeof(dst), "%s/b%d-dst", tmp_real, method);
	CHECK(mkdir(src, 0755) == 0 && mkdir(dst, 0755) == 0);
	put(src, "f", "new");
	put(dst, "f", "old");
	snprintf(sf, sizeof(sf), "%s/f", src);
	struct fk_tree_opts o;
	opts(&o, method);
	o.backup = FK_COPY_BACKUP_SIMPLE;
	trace_start();
	int r = fk_tree_copy(sf, dst, &o, NULL);
	fkt_trace_stop();
	CHECK_EQ(r, 0);
	CHECK(has(dst, "f", "new"));
	CHECK(has(dst, "f~", "old"));
	snprintf(suffix, sizeof(suffix), "%s/f~", dst);
	long ren = fkt_trace_find("rename", suffix, 0);
	long bsync = fkt_trace_find("fsync", suffix, 0);
	long dsync = ren < 0 ? -1 : fkt_trace_find("fsync", dst, (size_t)ren);
	snprintf(suffix, sizeof(suffix), "%s/f", dst);
	long creat = find_open_creat(suffix, 0);
	CHECK(ren >= 0);
	CHECK(bsync > ren);
	CHECK(dsync > bsync);
	CHECK(creat > dsync);
	if (fkt_failures)
		fkt_trace_dump(stderr);

	/* A failed fsync of the directory: the name stays free. */
	put(dst, "f", "old2");
	opts(&o, method);
	o.backup = FK_COPY_BACKUP_SIMPLE;
	fkt_trace_start();
	fkt_fault_set("fsync", dst, 1, -EIO);
	r = fk_tree_copy(sf, dst, &o, NULL);
	CHECK(fkt_fault_fired() == 1);
	fkt_fault_clear();
	fkt_trace_stop();
	CHECK_EQ(r, -EIO);
	CHECK(has(dst, "f~", "old2"));
	struct stat st;
	CHECK(fstatat(AT_FDCWD, suffix, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	      errno == ENOENT);

	/* Numbered: f.~1~ is there, so f.~2~; existing: numbered then. */
	put(dst, "f", "old3");
	put(dst, "f.~1~", "one");
	opts(&o, method);
	o.backup = FK_COPY_BACKUP_EXISTING;
	CHECK_EQ(fk_tree_copy(sf, dst, &o, NULL), 0);
	CHECK(has(dst, "f.~1~", "one"));
	CHECK(has(dst, "f.~2~", "old3"));
	CHECK(has(dst, "f", "new"));
}

static void test_links(int method, unsigned flag)
{
	char src[4200], dst[4200], sub[4300];
	const char *kind = flag == FK_COPY_LINK ? "l" : "s";
	snprintf(src, sizeof(src), "%s/%s%d-src", tmp_real, kind, method);
	snprintf(dst, sizeof(dst), "%s/%s%d-dst", tmp_real, kind, method);
	snprintf(sub, sizeof(sub), "%s/d", src);
	CHECK(mkdir(src, 0755) == 0 && mkdir(sub, 0755) == 0);
	put(src, "a", "a");
	put(sub, "b", "b");
	struct fk_tree_opts o;
	opts(&o, method);
	o.copy_flags = flag;
	trace_start();
	int r = fk_tree_copy(src, dst, &o, NULL);
	fkt_trace_stop();
	CHECK_EQ(r, 0);
	int n = flag == FK_COPY_LINK ? nr_link : nr_symlink;
	long *idx = flag == FK_COPY_LINK ? link_idx : symlink_idx;
	CHECK_EQ(n, 2);
	/* Each directory with a new name is fsynced after it was made (in
	 * walk order: d/b's directory is dst/d, a's is dst; which comes
	 * first depends on the walk, so check both after the last one). */
	char dd[4300];
	snprintf(dd, sizeof(dd), "%s/d", dst);
	long last = idx[0] > idx[1] ? idx[0] : idx[1];
	long first = idx[0] < idx[1] ? idx[0] : idx[1];
	if (method == FK_COPY_SYNCFS) {
		CHECK(fkt_trace_find("syncfs", NULL, (size_t)last) >= last);
	} else {
		CHECK(fkt_trace_find("fsync", dd, (size_t)first) >= first);
		CHECK(fkt_trace_find("fsync", dst, (size_t)last) >= last);
	}
	/* No data written: links, not copies. */
	CHECK_EQ(fkt_trace_nr("pwrite", NULL) + fkt_trace_nr("write", NULL) +
		     fkt_trace_nr("copy_file_range", NULL),
		 0);
	struct stat s1, s2;
	char p1[4400], p2[4400];
	snprintf(p1, sizeof(p1), "%s/b", sub);
	snprintf(p2, sizeof(p2), "%s/b", dd);
	CHECK(lstat(p2, &s2) == 0 && stat(p1, &s1) == 0);
	if (flag == FK_COPY_LINK) {
		CHECK(s1.st_ino == s2.st_ino);
		/* fsync-each: the inode (its link count) right after. */
		if (method == FK_COPY_FSYNC_EACH)
			CHECK(fkt_trace_find("fsync", p2, 0) >= 0);
	} else {
		char t[4400] = {0};
		CHECK(S_ISLNK(s2.st_mode));
		CHECK(readlink(p2, t, sizeof(t) - 1) > 0 && !strcmp(t, p1));
	}
	if (fkt_failures)
		fkt_trace_dump(stderr);
}

static void test_attr_only(int method)
{
	char src[4200], dst[4200], sf[4300], df[4300];
	snprintf(src, sizeof(src), "%s/a%d-src", tmp_real, method);
	snprintf(dst, sizeof(dst), "%s/a%d-dst", tmp_real, method);
	CHECK(mkdir(src, 0755) == 0 && mkdir(dst, 0755) == 0);
	put(src, "f", "source data");
	put(dst, "f", "kept");
	snprintf(sf, sizeof(sf), "%s/f", src);
	snprintf(df, sizeof(df), "%s/f", dst);
	CHECK(chmod(sf, 0751) == 0);
	struct fk_tree_opts o;
	opts(&o, method);
	o.copy_flags = FK_COPY_ATTR_ONLY;
	fkt_trace_start();
	int r = fk_tree_copy(sf, dst, &o, NULL);
	fkt_trace_stop();
	CHECK_EQ(r, 0);
	CHECK(has(dst, "f", "kept"));
	struct stat st;
	CHECK(stat(df, &st) == 0 && (st.st_mode & 07777) == 0751);
	CHECK_EQ(fkt_trace_nr("pwrite", NULL) + fkt_trace_nr("write", NULL) +
		     fkt_trace_nr("copy_file_range", NULL),
		 0);
	if (method != FK_COPY_SYNCFS)
		CHECK(fkt_trace_nr("fsync", df) >= 1);
}

int main(void)
{
	const char *tmp = fkt_tmpdir();
	CHECK(realpath(tmp, tmp_real) != NULL);
	for (int m = FK_COPY_WRITEBACK; m <= FK_COPY_AUTO; m++) {
		fprintf(stderr, "== method %s\n", fk_copy_method_name(m));
		test_backup(m);
		test_links(m, FK_COPY_LINK);
		test_links(m, FK_COPY_SYMLINK);
		test_attr_only(m);
	}
	return fkt_done();
}
