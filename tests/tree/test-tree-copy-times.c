// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-times.c - fk_tree_copy keeps the access and modification
 * times of every copied entry exact to the nanosecond, with every method.
 *
 * The source tree (directories three deep, files, an empty file, a
 * symlink) gets distinct old times with utimensat, bottom-up, each
 * atime older than its mtime so that a relatime mount updates it on
 * the next read (strictatime always does; noatime would hide the bug:
 * skipped).  Each method copies it; then statx of every entry of the
 * copy must give the source's atime and mtime, seconds and nanoseconds.
 * A pass that reads a copied directory after its times were set (the
 * final fsync pass of writeback and delayed walks the destination)
 * would leave the copy's time as the directory's atime.
 */
#include "fktest.h"
#include "flushkit.h"
#include "test-tree-copy-lib.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static unsigned nr_checked;

/* The source's times as they were before the copy (the copy reads the
 * source, which changes its atimes, as cp -a does). */
struct snap {
	char rel[256];
	struct statx_timestamp atime, mtime;
};
static struct snap snaps[64];
static unsigned nr_snaps;

static void set_times(const char *path, time_t base, long nsec)
{
	/* atime well before mtime: relatime updates it on a read. */
	struct timespec ts[2] = {{base - 86400 * 400, nsec + 11}, {base, nsec}};
	CHECK(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) == 0);
}

static int get_times(const char *path, struct statx_timestamp *a,
		     struct statx_timestamp *m)
{
	struct statx sx;
	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW,
		  STATX_ATIME | STATX_MTIME, &sx) != 0)
		return -1;
	*a = sx.stx_atime;
	*m = sx.stx_mtime;
	return 0;
}

/* Every entry of the source (statx reads no directory: recording the
 * times changes none). */
static const char *const entries[] = {
    "",	     "/a",	"/a/b",	     "/a/b/c",	 "/e",	    "/f0",
    "/a/f1", "/a/b/f2", "/a/b/c/f3", "/e/empty", "/a/link",
};

/* Record the times of every entry under @src. */
static void snapshot(const char *src)
{
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		char p[PATH_MAX];
		struct snap *s = &snaps[nr_snaps];
		snprintf(p, sizeof(p), "%s%s", src, entries[i]);
		if (get_times(p, &s->atime, &s->mtime) != 0) {
			fprintf(stderr, "cannot statx %s\n", p);
			fkt_failures++;
			continue;
		}
		snprintf(s->rel, sizeof(s->rel), "%s", entries[i]);
		nr_snaps++;
	}
}

static void compare_copy(const char *method, const char *dst)
{
	for (unsigned i = 0; i < nr_snaps; i++) {
		const struct snap *s = &snaps[i];
		char p[PATH_MAX];
		struct statx_timestamp a, m;
		if (snprintf(p, sizeof(p), "%s%s", dst, s->rel) >=
			(int)sizeof(p) ||
		    get_times(p, &a, &m) != 0) {
			fprintf(stderr, "%s: cannot statx %s\n", method, p);
			fkt_failures++;
			continue;
		}
		nr_checked++;
		if (a.tv_sec != s->atime.tv_sec ||
		    a.tv_nsec != s->atime.tv_nsec) {
			fprintf(
			    stderr,
			    "%s: atime of %s is %lld.%09u, source %lld.%09u\n",
			    method, p, (long long)a.tv_sec, a.tv_nsec,
			    (long long)s->atime.tv_sec, s->atime.tv_nsec);
			fkt_failures++;
		}
		if (m.tv_sec != s->mtime.tv_sec ||
		    m.tv_nsec != s->mtime.tv_nsec) {
			fprintf(
			    stderr,
			    "%s: mtime of %s is %lld.%09u, source %lld.%09u\n",
			    method, p, (long long)m.tv_sec, m.tv_nsec,
			    (long long)s->mtime.tv_sec, s->mtime.tv_nsec);
			fkt_failures++;
		}
	}
}

/* The source: its times set bottom-up, directories after contents. */
static void make_source(const char *src)
{
	char p[PATH_MAX + 16];
	static const char *const dirs[] = {"", "/a", "/a/b", "/a/b/c", "/e"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", src, dirs[i]);
		CHECK(mkdir(p, 0755) == 0);
	}
	static const char *const files[] = {"/f0", "/a/f1", "/a/b/f2",
					    "/a/b/c/f3", "/e/empty"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", src, files[i]);
		CHECK(fkt_write_file(p, i == 4 ? 0 : 5000 * (i + 1),
				     (unsigned)i) == 0);
		set_times(p, 1100000000 + (time_t)i * 1000,
			  123456789 + (long)i);
	}
	snprintf(p, sizeof(p), "%s/a/link", src);
	CHECK(symlink("f1", p) == 0);
	set_times(p, 1200000000, 987654321);
	/* Directories, deepest first. */
	for (size_t i = sizeof(dirs) / sizeof(dirs[0]); i-- > 0;) {
		snprintf(p, sizeof(p), "%s%s", src, dirs[i]);
		set_times(p, 1300000000 + (time_t)i * 1000,
			  111111111 * (long)(i + 1) % 1000000000);
	}
}

int main(void)
{
	const char *top = fkt_tmpdir();
	struct statvfs sv;
	if (statvfs(top, &sv) == 0 && (sv.f_flag & ST_NOATIME))
		SKIP("%s is mounted noatime: atimes never change", top);
	char src[PATH_MAX];
	snprintf(src, sizeof(src), "%s/src", top);

	for (size_t i = 0; i < TC_NR_METHODS; i++) {
		const char *name = fk_copy_method_name(tc_methods[i]);
		/* The copy reads the source: its atimes change (as with
		 * cp -a).  Set them again before each copy. */
		fkt_sh("rm -rf '%s'", src);
		make_source(src);
		nr_snaps = 0;
		snapshot(src);
		CHECK_EQ(nr_snaps, 11u);
		char dst[PATH_MAX];
		struct fk_tree_stats st;
		int r = tc_copy_method(src, tc_methods[i], NULL, dst,
				       sizeof(dst), &st);
		CHECK_EQ(r, 0);
		unsigned before = nr_checked;
		int failures = fkt_failures;
		compare_copy(name, dst);
		printf("%-10s %u entries compared: %s\n", name,
		       nr_checked - before,
		       fkt_failures == failures ? "atime and mtime exact"
						: "DIFFER");
	}
	CHECK_EQ(nr_checked, TC_NR_METHODS * 11u);
	return fkt_done();
}
