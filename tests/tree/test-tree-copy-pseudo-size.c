// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-pseudo-size.c - a file on a pseudo file system is
 * copied as its reads give it, whatever its small nonzero st_size says
 * (docs/cp.md: "files whose size lies are copied as their content, as
 * cat and cp -a see it"; coreutils reads such files to EOF).  sysfs
 * says 4096 for every attribute, procfs and FUSE may say less or more
 * than the content.
 *
 * Through the syscall table: two regular files, "more" (10000 bytes)
 * and "less" (10 bytes), are made to look like sysfs attributes: their
 * fstat says st_size 4096 and no blocks, fstatfs of them says
 * SYSFS_MAGIC, lseek SEEK_DATA/SEEK_HOLE answers as kernfs does for a
 * 4096-byte file.  With every method the copy must hold all 10000 bytes of
 * "more" (not cut at 4096) and the 10 of "less" (not padded); a
 * regular file of the same shape on a
 * real file system ("plain": fstatfs untouched, 4096 bytes with
 * blocks) is copied at its size as before.
 */
#include "fktest.h"
#include "flushkit.h"
#include "sys.h"
#include "test-tree-copy-lib.h"

#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

static ino_t fake_ino[2];
static unsigned nr_faked_stat, nr_faked_statfs;

static int faked(int fd)
{
	struct stat st;
	if (fk_sys_default.fstat(fd, &st))
		return 0;
	return st.st_ino == fake_ino[0] || st.st_ino == fake_ino[1];
}

static int sysfs_fstat(int fd, struct stat *st)
{
	int r = fk_sys_default.fstat(fd, st);
	if (!r && (st->st_ino == fake_ino[0] || st->st_ino == fake_ino[1])) {
		st->st_size = 4096;
		st->st_blocks = 0;
		nr_faked_stat++;
	}
	return r;
}

static int sysfs_fstatfs(int fd, struct statfs *sf)
{
	int r = fk_sys_default.fstatfs(fd, sf);
	if (!r && faked(fd)) {
		sf->f_type = SYSFS_MAGIC;
		nr_faked_statfs++;
	}
	return r;
}

/* kernfs's lseek (generic_file_llseek_size with i_size 4096): data up
 * to the size it says, a hole from there. */
static off_t sysfs_lseek(int fd, off_t off, int whence)
{
	if (faked(fd) && (whence == SEEK_DATA || whence == SEEK_HOLE)) {
		if (off < 0 || off >= 4096)
			return -ENXIO;
		return whence == SEEK_DATA ? off : 4096;
	}
	return fk_sys_default.lseek(fd, off, whence);
}

/* The sysfs look of "more" and "less". */
static void install_sysfs(void)
{
	nr_faked_stat = nr_faked_statfs = 0;
	fk_sys.fstat = sysfs_fstat;
	fk_sys.fstatfs = sysfs_fstatfs;
	fk_sys.lseek = sysfs_lseek;
}

/* The copy @b has all of its source @a (printed, for the log). */
static void check_same(const char *a, const char *b, const char *method)
{
	size_t la, lb;
	char *x = fkt_read_file(a, &la), *y = fkt_read_file(b, &lb);
	printf("%s: %s: %zu bytes, source %zu\n", method, b, y ? lb : 0,
	       x ? la : 0);
	free(x);
	free(y);
	tc_check_same(a, b, method);
}

int main(void)
{
	char src[PATH_MAX], p[PATH_MAX + 16];
	struct stat st;
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(src, sizeof(src), "%s/src", fkt_tmpdir());
	CHECK_EQ(mkdir(src, 0755), 0);
	static const char *const files[] = {"more", "less", "plain"};
	static const uint64_t sizes[] = {10000, 10, 4096};
	tc_write_files(src, files, sizes, 3);
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/%s", src, files[i]);
		CHECK_EQ(stat(p, &st), 0);
		fake_ino[i] = st.st_ino;
	}
	for (size_t m = 0; m < TC_NR_METHODS; m++) {
		const char *name = fk_copy_method_name(tc_methods[m]);
		char dst[PATH_MAX];
		struct fk_tree_stats ts;
		int r = tc_copy_method(src, tc_methods[m], install_sysfs, dst,
				       sizeof(dst), &ts);
		CHECK_EQ(r, 0);
		CHECK(nr_faked_stat > 0); /* the injected stat was seen */
		for (int i = 0; i < 3; i++) {
			char a[PATH_MAX + 16], b[PATH_MAX + 16];
			snprintf(a, sizeof(a), "%s/%s", src, files[i]);
			snprintf(b, sizeof(b), "%s/%s", dst, files[i]);
			check_same(a, b, name);
		}
	}
	return fkt_done();
}
