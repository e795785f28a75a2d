// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-links.c - hard links under attack: a later name of a
 * source inode is linked to its first copy only if that copy is still
 * the inode the copy made, and only if the later name is still the
 * same source inode (found by trying to break 'flushkit cp'):
 *  - the first copy replaced in the destination (by someone else,
 *    after its source was done) before a later source links to it: the
 *    later name gets the source's content, never the intruder's
 *    (a warning; the copy succeeds: each source's copy is complete);
 *  - the first copy removed: the later name is copied as a file of its
 *    own (a warning), not an error with the name missing;
 *  - the same within one source: the second name has the source's
 *    content; the replaced first copy is the copy's error (invariant
 *    8 of tree_copy.c);
 *  - a source inode number reused (its names removed and a new file
 *    created between two sources, which ext4 gives the freed number):
 *    the new file is not linked to the old one's copy (statx birth
 *    time tells them apart);
 *  - a link count that grows during the copy (a name added, under a
 *    later source, to a file copied while it had one link): the new
 *    name is copied as a file of its own with the right content, no
 *    error (as cp -a, which remembers only inodes with more than one
 *    link when it meets them; this one was not);
 *  - a later source's link to a first copy an earlier source made
 *    durable costs no second fsync of that inode (the new name is
 *    durable with its directory's fsync);
 *  - fk_tree_copy_sources' argument errors.
 */
#include "fktest.h"
#include "flushkit.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[1024];

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", top, rel);
	FILE *f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void link_rel(const char *from, const char *to)
{
	char a[PATH_MAX + 64], b[PATH_MAX + 64];
	snprintf(a, sizeof(a), "%s/%s", top, from);
	snprintf(b, sizeof(b), "%s/%s", top, to);
	CHECK_EQ(link(a, b), 0);
}

static void mkdir_rel(const char *rel)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", top, rel);
	CHECK_EQ(mkdir(p, 0755), 0);
}

/* The content of @rel is @want; prints what it is. */
static void check_content(const char *what, const char *rel, const char *want)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", top, rel);
	char *got = fkt_read_file(p, NULL);
	printf("%s: %s holds '%s'\n", what, rel, got ? got : "(missing)");
	if (!got || strcmp(got, want)) {
		fprintf(stderr, "%s: %s: want '%s'\n", what, rel, want);
		fkt_failures++;
	}
	free(got);
}

static struct stat st_rel(const char *rel)
{
	char p[PATH_MAX + 64];
	struct stat s;
	snprintf(p, sizeof(p), "%s/%s", top, rel);
	if (lstat(p, &s) < 0)
		memset(&s, 0, sizeof(s));
	return s;
}

struct msgs {
	int errors, warnings;
	char last[512];
};

static void on_report(void *arg, int level, const char *op, const char *path,
		      int err)
{
	struct msgs *m = arg;
	if (level == FK_REPORT_ERROR)
		m->errors++;
	else
		m->warnings++;
	snprintf(m->last, sizeof(m->last), "%s '%s': %s", op, path,
		 fk_strerror(err));
	printf("  %s: %s\n", level == FK_REPORT_ERROR ? "error" : "warning",
	       m->last);
}

/* What the copied callback does to the destination, and when. */
enum attack { REPLACE, REMOVE, LINK_SOURCE };
struct hook {
	char when[PATH_MAX + 64]; /* a destination path: act once it exists */
	char victim[PATH_MAX + 64];
	enum attack attack;
	int done;
};

static void on_copied(void *arg, const char *src, const char *dst)
{
	struct hook *h = arg;
	(void)src;
	if (h->done || strcmp(dst, h->when))
		return;
	h->done = 1;
	char tmp[PATH_MAX + 80];
	snprintf(tmp, sizeof(tmp), "%s.intruder", h->victim);
	if (h->attack == LINK_SOURCE) {
		/* victim: the source file; tmp: its new name */
		snprintf(tmp, sizeof(tmp), "%s", h->victim);
		char *slash = strrchr(tmp, '/');
		CHECK(slash != NULL);
		if (slash)
			*slash = 0;
		snprintf(tmp + strlen(tmp), sizeof(tmp) - strlen(tmp),
			 "/../b/late");
		CHECK_EQ(link(h->victim, tmp), 0);
	} else if (h->attack == REPLACE) {
		FILE *f = fopen(tmp, "w");
		CHECK(f != NULL);
		if (f) {
			fputs("intruder", f);
			fclose(f);
		}
		CHECK_EQ(rename(tmp, h->victim), 0);
	} else {
		CHECK_EQ(unlink(h->victim), 0);
	}
}

static int copy_two(const char *s1, const char *s2, const char *dst, int method,
		    struct hook *h, struct msgs *m, struct fk_tree_stats *st)
{
	char a[1200], b[1200], d[1200];
	snprintf(a, sizeof(a), "%s/%s", top, s1);
	snprintf(b, sizeof(b), "%s/%s", top, s2);
	snprintf(d, sizeof(d), "%s/%s", top, dst);
	const char *srcs[] = {a, b};
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.copy_method = method;
	o.report = on_report;
	o.report_arg = m;
	if (h) {
		o.copied = on_copied;
		o.copied_arg = h;
	}
	return fk_tree_copy_sources(srcs, s2 ? 2 : 1, d, &o, st);
}

/* The first copy replaced or removed between two sources. */
static void test_target_attacked(enum attack attack, int method)
{
	const char *name = attack == REPLACE ? "replaced" : "removed";
	char dir[64];
	snprintf(dir, sizeof(dir), "att-%s-%d", name, method);
	char a[128], b[128], dst[128];
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	snprintf(dst, sizeof(dst), "%s/DST", dir);
	mkdir_rel(dir);
	mkdir_rel(a);
	mkdir_rel(b);
	mkdir_rel(dst);
	char f[160], g[160];
	snprintf(f, sizeof(f), "%s/f", a);
	snprintf(g, sizeof(g), "%s/g", b);
	put(f, "shared");
	link_rel(f, g);

	struct hook h = {.attack = attack};
	snprintf(h.when, sizeof(h.when), "%s/%s/b", top, dst);
	snprintf(h.victim, sizeof(h.victim), "%s/%s/a/f", top, dst);
	struct msgs m = {0};
	struct fk_tree_stats st;
	printf("%s, method %s:\n", name, fk_copy_method_name(method));
	int r = copy_two(a, b, dst, method, &h, &m, &st);
	CHECK(h.done); /* the attack happened */
	char dg[160];
	snprintf(dg, sizeof(dg), "%s/b/g", dst);
	check_content(name, dg, "shared");
	CHECK_EQ(r, 0);
	CHECK_EQ(m.errors, 0);
	CHECK(m.warnings >= 1);
	CHECK_EQ(st_rel(dg).st_nlink, 1);
}

/* Within one source: the first copy replaced right after it was made. */
static void test_target_replaced_same_source(void)
{
	mkdir_rel("one");
	mkdir_rel("one/s");
	mkdir_rel("one/DST");
	put("one/s/f", "shared");
	link_rel("one/s/f", "one/s/g");
	/* Whichever of f and g is copied first is the victim: the walk's
	 * order is the directory's. */
	struct hook hf = {.attack = REPLACE}, hg = {.attack = REPLACE};
	snprintf(hf.when, sizeof(hf.when), "%s/one/DST/s/f", top);
	snprintf(hf.victim, sizeof(hf.victim), "%s", hf.when);
	snprintf(hg.when, sizeof(hg.when), "%s/one/DST/s/g", top);
	snprintf(hg.victim, sizeof(hg.victim), "%s", hg.when);
	struct hook *first = &hf;
	/* readdir order of the source: the first regular file seen. */
	char sp[PATH_MAX + 64];
	snprintf(sp, sizeof(sp), "%s/one/s", top);
	DIR *d = opendir(sp);
	CHECK(d != NULL);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (!strcmp(de->d_name, "g")) {
			first = &hg;
			break;
		} else if (!strcmp(de->d_name, "f")) {
			break;
		}
	if (d)
		closedir(d);
	struct msgs m = {0};
	struct fk_tree_stats st;
	printf("replaced within one source (victim %s):\n",
	       first == &hf ? "f" : "g");
	int r =
	    copy_two("one/s", NULL, "one/DST", FK_COPY_DELAYED, first, &m, &st);
	CHECK(first->done);
	check_content("same source",
		      first == &hf ? "one/DST/s/g" : "one/DST/s/f", "shared");
	/* The replaced first copy: invariant 8, an error naming it. */
	CHECK_EQ(r, -ESTALE);
	CHECK_EQ(m.errors, 1);
}

/*
 * The hook of the inode reuse case: when the copy looks at the second
 * source (resolve_dst's stat), the first source's inode loses its last
 * names and new files are made in the second source until one gets the
 * freed inode number; it and a second name of it hold "new".
 */
static char reuse_src2[1200];
static ino_t reuse_ino;
static int reuse_done, reuse_hit;

static int reuse_fstatat(int dirfd, const char *path, struct stat *st,
			 int flags)
{
	if (!reuse_done && dirfd == AT_FDCWD && !strcmp(path, reuse_src2)) {
		reuse_done = 1;
		char p[PATH_MAX + 64], q[PATH_MAX + 64];
		snprintf(p, sizeof(p), "%s/reuse/s1/f", top);
		CHECK_EQ(unlink(p), 0);
		snprintf(p, sizeof(p), "%s/reuse/outside/o", top);
		CHECK_EQ(unlink(p), 0);
		for (int i = 0; i < 1000 && !reuse_hit; i++) {
			snprintf(p, sizeof(p), "%s/n%03d", reuse_src2, i);
			int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
			CHECK(fd >= 0);
			struct stat s;
			CHECK_EQ(fstat(fd, &s), 0);
			if (s.st_ino == reuse_ino) {
				reuse_hit = 1;
				CHECK_EQ(write(fd, "new", 3), 3);
				snprintf(q, sizeof(q), "%s/same", reuse_src2);
				CHECK_EQ(link(p, q), 0);
			}
			close(fd);
		}
	}
	return fk_sys_default.fstatat(dirfd, path, st, flags);
}

static void test_inode_reused(void)
{
	mkdir_rel("reuse");
	mkdir_rel("reuse/s1");
	mkdir_rel("reuse/s2");
	mkdir_rel("reuse/outside");
	mkdir_rel("reuse/DST");
	put("reuse/s1/f", "old");
	link_rel("reuse/s1/f", "reuse/outside/o");
	reuse_ino = st_rel("reuse/s1/f").st_ino;
	snprintf(reuse_src2, sizeof(reuse_src2), "%s/reuse/s2", top);
	fk_sys.fstatat = reuse_fstatat;
	struct msgs m = {0};
	struct fk_tree_stats st;
	printf("inode number reused between sources:\n");
	int r = copy_two("reuse/s1", "reuse/s2", "reuse/DST", FK_COPY_DELAYED,
			 NULL, &m, &st);
	fk_sys_reset();
	CHECK(reuse_done);
	if (!reuse_hit) {
		printf("not checked: the file system did not reuse the inode "
		       "number\n");
		return;
	}
	CHECK_EQ(r, 0);
	check_content("reused", "reuse/DST/s1/f", "old");
	check_content("reused", "reuse/DST/s2/same", "new");
	struct stat a = st_rel("reuse/DST/s1/f"),
		    b = st_rel("reuse/DST/s2/same");
	CHECK(a.st_ino != b.st_ino);
	CHECK_EQ(a.st_nlink, 1);
	CHECK_EQ(b.st_nlink, 2); /* linked to its own other name, nNNN */
}

/* A second name made, under the later source, for a file copied with
 * one link. */
static void test_link_count_grows(void)
{
	mkdir_rel("grow");
	mkdir_rel("grow/a");
	mkdir_rel("grow/b");
	mkdir_rel("grow/DST");
	put("grow/a/f", "alone");
	struct hook h = {.attack = LINK_SOURCE};
	snprintf(h.when, sizeof(h.when), "%s/grow/DST/a/f", top);
	snprintf(h.victim, sizeof(h.victim), "%s/grow/a/f", top);
	struct msgs m = {0};
	struct fk_tree_stats st;
	printf("link count grows during the copy:\n");
	int r = copy_two("grow/a", "grow/b", "grow/DST", FK_COPY_DELAYED, &h,
			 &m, &st);
	CHECK(h.done);
	CHECK_EQ(st_rel("grow/b/late").st_nlink, 2); /* the link was made */
	CHECK_EQ(r, 0);
	CHECK_EQ(m.errors, 0);
	check_content("grown", "grow/DST/b/late", "alone");
	CHECK_EQ(st_rel("grow/DST/b/late").st_nlink, 1);
	CHECK_EQ(st_rel("grow/DST/a/f").st_nlink, 1);
}

/* A link to an earlier source's durable copy: no second fsync of it. */
static void test_no_second_fsync(void)
{
	mkdir_rel("fs");
	mkdir_rel("fs/a");
	mkdir_rel("fs/b");
	mkdir_rel("fs/DST");
	static const char *const n[] = {"1", "2", "3"};
	for (int i = 0; i < 3; i++) {
		char f[64], g[64];
		snprintf(f, sizeof(f), "fs/a/f%s", n[i]);
		snprintf(g, sizeof(g), "fs/b/g%s", n[i]);
		put(f, n[i]);
		link_rel(f, g);
	}
	struct msgs m = {0};
	struct fk_tree_stats st;
	int r =
	    copy_two("fs/a", "fs/b", "fs/DST", FK_COPY_DELAYED, NULL, &m, &st);
	CHECK_EQ(r, 0);
	printf("a (3 files) then b (3 links to them): %llu file fsyncs, %llu "
	       "hard links\n",
	       (unsigned long long)st.fsync_calls,
	       (unsigned long long)st.hardlinks);
	CHECK_EQ(st.hardlinks, 3);
	/* Source a: each file's data, then its times; source b: none. */
	CHECK_EQ(st.fsync_calls, 6);
	CHECK_EQ(st_rel("fs/DST/b/g2").st_ino, st_rel("fs/DST/a/f2").st_ino);
}

static void test_args(void)
{
	mkdir_rel("args");
	put("args/file", "x");
	char f[PATH_MAX + 64], d[PATH_MAX + 64];
	snprintf(f, sizeof(f), "%s/args/file", top);
	snprintf(d, sizeof(d), "%s/args", top);
	const char *two[] = {f, f};
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	struct fk_tree_stats st;
	struct msgs m = {0};
	o.report = on_report;
	o.report_arg = &m;
	/* Several sources: the target must be a directory. */
	CHECK_EQ(fk_tree_copy_sources(two, 2, f, &o, &st), -ENOTDIR);
	CHECK_EQ(m.errors, 1);
	CHECK_EQ(st.errors, 1);
	CHECK_EQ(fk_tree_copy_sources(two, 0, d, &o, &st), -EINVAL);
	CHECK_EQ(fk_tree_copy_sources(NULL, 1, d, &o, &st), -EINVAL);
	o.copy_flags = FK_COPY_NO_TARGET_DIR;
	CHECK_EQ(fk_tree_copy_sources(two, 2, d, &o, &st), -EINVAL);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(top, sizeof(top), "%s", fkt_tmpdir());
	test_target_attacked(REPLACE, FK_COPY_DELAYED);
	test_target_attacked(REPLACE, FK_COPY_FSYNC_EACH);
	test_target_attacked(REMOVE, FK_COPY_DELAYED);
	test_target_attacked(REMOVE, FK_COPY_SYNCFS);
	test_target_replaced_same_source();
	test_inode_reused();
	test_link_count_grows();
	test_no_second_fsync();
	test_args();
	return fkt_done();
}
