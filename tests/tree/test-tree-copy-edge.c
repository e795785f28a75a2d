// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-edge.c - destinations fk_tree_copy must refuse or
 * handle with care (found by trying to break 'flushkit cp'):
 *  - SRC into itself (DST == SRC, DST inside SRC, given as SRC/sub or as
 *    the existing directory SRC itself): refused before anything is
 *    created, the source is left unchanged;
 *  - SRC/sub/.. into a directory copies SRC's contents (as cp -a); a
 *    file to "new/" (trailing slash, no such directory) is ENOTDIR;
 *  - the top of the copy cannot be created (EROFS injected on its
 *    mkdirat): one error, no fsync of anything, no second "stat" error;
 *  - a special file replaced by a symlink between its mknodat and its
 *    chmod (a race in a writable destination directory): the symlink's
 *    target keeps its mode;
 *  - a destination directory with a default ACL: files and directories
 *    copied from sources without ACLs get none (as with cp -a), not the
 *    inherited entries (which could grant access the source did not).
 */
#include "fktest.h"
#include "flushkit.h"
#include "sys.h"
#include "test-tree-copy-lib.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

struct msgs {
	int errors;
	char last_op[128];
};

static void on_report(void *arg, int level, const char *op, const char *path,
		      int err)
{
	struct msgs *m = arg;
	(void)path;
	(void)err;
	if (level == FK_REPORT_ERROR)
		m->errors++;
	snprintf(m->last_op, sizeof(m->last_op), "%s", op);
}

static int nr_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static int erofs_mkdirat(int dirfd, const char *name, mode_t mode)
{
	(void)dirfd;
	(void)name;
	(void)mode;
	return -EROFS;
}

static char victim[4200];

/* mknodat, then the "attacker" swaps the node for a symlink. */
static int racy_mknodat(int dirfd, const char *name, mode_t mode, dev_t dev)
{
	int r = fk_sys_default.mknodat(dirfd, name, mode, dev);
	if (r == 0) {
		CHECK(unlinkat(dirfd, name, 0) == 0);
		CHECK(symlinkat(victim, dirfd, name) == 0);
	}
	return r;
}

int main(void)
{
	const char *tmp = fkt_tmpdir();
	char src[4200], p[4300];
	struct fk_tree_opts o;
	struct fk_tree_stats st;
	struct msgs m;

	snprintf(src, sizeof(src), "%s/src", tmp);
	CHECK(mkdir(src, 0755) == 0);
	snprintf(p, sizeof(p), "%s/f", src);
	CHECK(fkt_write_file(p, 100, 1) == 0);
	snprintf(p, sizeof(p), "%s/sub", src);
	CHECK(mkdir(p, 0755) == 0);

	/* 1. Into itself: SRC SRC, SRC SRC/new, SRC SRC/sub (existing). */
	const char *dsts[] = {"", "/new", "/sub", "/sub/"};
	for (size_t i = 0; i < sizeof(dsts) / sizeof(dsts[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", src, dsts[i]);
		fk_tree_opts_init(&o);
		memset(&m, 0, sizeof(m));
		o.report = on_report;
		o.report_arg = &m;
		int r = fk_tree_copy(src, p, &o, &st);
		CHECK_EQ(r, -EINVAL);
		CHECK_EQ(m.errors, 1);
		CHECK(strstr(m.last_op, "into itself") != NULL);
		CHECK_EQ(nr_entries(src), 2); /* nothing created */
		snprintf(p, sizeof(p), "%s/sub", src);
		CHECK_EQ(nr_entries(p), 0);
		CHECK_EQ(st.fsync_calls + st.dir_fsync_calls, 0);
	}

	/* 1b. SRC/sub/.. into an existing directory: like cp -a, the
	 * contents of SRC go into it (as for SRC/.). */
	snprintf(p, sizeof(p), "%s/dotdot", tmp);
	CHECK(mkdir(p, 0755) == 0);
	{
		char s2[4300], f2[4400];
		snprintf(s2, sizeof(s2), "%s/sub/..", src);
		fk_tree_opts_init(&o);
		CHECK_EQ(fk_tree_copy(s2, p, &o, &st), 0);
		snprintf(f2, sizeof(f2), "%s/f", p);
		CHECK(access(f2, F_OK) == 0);
		CHECK_EQ(nr_entries(p), 2);
	}

	/* 1c. A file to "new/" (trailing slash, no such directory):
	 * ENOTDIR as with cp -a, no file "new" created. */
	{
		char f2[4300], d2[4300];
		snprintf(f2, sizeof(f2), "%s/f", src);
		snprintf(d2, sizeof(d2), "%s/newdir/", tmp);
		fk_tree_opts_init(&o);
		CHECK_EQ(fk_tree_copy(f2, d2, &o, &st), -ENOTDIR);
		snprintf(d2, sizeof(d2), "%s/newdir", tmp);
		CHECK(access(d2, F_OK) < 0);
	}

	/* 2. The top cannot be created: one error, nothing fsynced. */
	snprintf(p, sizeof(p), "%s/rofs-dst", tmp);
	fk_tree_opts_init(&o);
	memset(&m, 0, sizeof(m));
	o.report = on_report;
	o.report_arg = &m;
	fk_sys.mkdirat = erofs_mkdirat;
	int r = fk_tree_copy(src, p, &o, &st);
	fk_sys_reset();
	CHECK_EQ(r, -EROFS);
	CHECK_EQ(m.errors, 1);
	CHECK_EQ(st.errors, 1);
	CHECK(strcmp(m.last_op, "mkdir") == 0);
	CHECK_EQ(st.fsync_calls + st.dir_fsync_calls, 0);

	/* 3. A FIFO swapped for a symlink before its chmod. */
	snprintf(victim, sizeof(victim), "%s/victim", tmp);
	CHECK(fkt_write_file(victim, 10, 2) == 0);
	CHECK(chmod(victim, 0600) == 0);
	char fsrc[4300], fdst[4300];
	snprintf(fsrc, sizeof(fsrc), "%s/fifo", tmp);
	CHECK(mkfifo(fsrc, 0666) == 0);
	CHECK(chmod(fsrc, 0666) == 0);
	snprintf(fdst, sizeof(fdst), "%s/fifo-copy", tmp);
	fk_tree_opts_init(&o);
	memset(&m, 0, sizeof(m));
	o.report = on_report;
	o.report_arg = &m;
	fk_sys.mknodat = racy_mknodat;
	r = fk_tree_copy(fsrc, fdst, &o, &st);
	fk_sys_reset();
	struct stat vs;
	CHECK(stat(victim, &vs) == 0);
	CHECK_EQ(vs.st_mode & 07777, 0600);
	CHECK(r < 0); /* the chmod of the copy failed: reported */
	CHECK(m.errors >= 1);

	/* 4. Default ACL on the destination directory. */
	char dacl[4300], dd[4400], x[4500];
	snprintf(dacl, sizeof(dacl), "%s/dacl", tmp);
	CHECK(mkdir(dacl, 0755) == 0);
	/* user::rwx user:65534:rwx group::r-x mask::rwx other::r-x */
	static const unsigned char acl[] = {
	    2,	  0,	0,    0,    1,	  0,	7,    0,    0xff, 0xff, 0xff,
	    0xff, 2,	0,    7,    0,	  0xfe, 0xff, 0,    0,	  4,	0,
	    5,	  0,	0xff, 0xff, 0xff, 0xff, 0x10, 0,    7,	  0,	0xff,
	    0xff, 0xff, 0xff, 0x20, 0,	  5,	0,    0xff, 0xff, 0xff, 0xff,
	};
	if (setxattr(dacl, "system.posix_acl_default", acl, sizeof(acl), 0)) {
		fprintf(stderr, "no POSIX ACLs here (%s): part 4 skipped\n",
			strerror(errno));
		return fkt_done();
	}
	snprintf(p, sizeof(p), "%s/f", src);
	CHECK(chmod(p, 0640) == 0);
	snprintf(dd, sizeof(dd), "%s/copy", dacl);
	fk_tree_opts_init(&o);
	CHECK_EQ(fk_tree_copy(src, dd, &o, &st), 0);
	const char *names[] = {"", "/f", "/sub"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(x, sizeof(x), "%s%s", dd, names[i]);
		errno = 0;
		CHECK(getxattr(x, "system.posix_acl_access", NULL, 0) < 0 &&
		      errno == ENODATA);
		if (i != 1) {
			errno = 0;
			CHECK(getxattr(x, "system.posix_acl_default", NULL, 0) <
				  0 &&
			      errno == ENODATA);
		}
	}
	snprintf(x, sizeof(x), "%s/f", dd);
	struct stat fs;
	CHECK(stat(x, &fs) == 0 && (fs.st_mode & 07777) == 0640);
	/* A source with an ACL keeps it. */
	snprintf(p, sizeof(p), "%s/f", src);
	CHECK(setxattr(p, "system.posix_acl_access", acl, sizeof(acl), 0) == 0);
	snprintf(dd, sizeof(dd), "%s/copy2", dacl);
	CHECK_EQ(fk_tree_copy(src, dd, &o, &st), 0);
	snprintf(x, sizeof(x), "%s/f", dd);
	CHECK_EQ(getxattr(x, "system.posix_acl_access", NULL, 0),
		 (ssize_t)sizeof(acl));
	return fkt_done();
}
