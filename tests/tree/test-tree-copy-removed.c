// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-removed.c - fk_tree_copy when someone else removes,
 * renames or replaces a DESTINATION file after the copy wrote it and
 * before the copy made it durable ("an outside
 * deletion is reported, not mistaken for success").  Regression: with
 * the delayed and writeback methods the final fsync pass walks the
 * destination by name, never met the missing file, and the copy
 * returned 0.
 *
 * The change is a real unlink/rename made from a hook in the syscall
 * table; the hook only picks the moment, the kernel does the rest:
 *  - "pass": when the durability phase starts (its fstatat of the top),
 *    once the whole tree is written, so the final fsync pass walks a
 *    destination without the file;
 *  - "synced": right after the data fsync of that file itself (the
 *    fsync of a descriptor of its inode; once, from whichever thread),
 *    or with syncfs after the first syncfs once the whole tree is
 *    written: its data is durable, then it goes.
 * The walk visits a directory's entries in source inode-number order,
 * which the file system picks (ext4 reuses the lowest free inode, so
 * files removed meanwhile by anyone can put sub/d before sub/c): the
 * hook never relies on that order, and the sources are made in
 * alternating order (sub/c first, then sub/d first) to meet both.
 * For each method (writeback, delayed, fsync-each, syncfs):
 *  1. unlinked, renamed out of the tree, renamed within it: the copy
 *     fails with -ENOENT, one error "copied file vanished from the
 *     destination" naming the file's path, the other files complete
 *     (their source's mtime);
 *  2. replaced by another file (rename over it): -ESTALE, "copied file
 *     replaced in the destination";
 *  3. moved away when the pass starts and back at its first fsync
 *     (delayed, writeback): at its name, so the copy succeeds, and the
 *     file is fsynced for its data anyway (twice in all: data, times).
 */
#include "fktest.h"
#include "flushkit.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[4096];

/* ---- the hook ---- */

enum when { AT_PASS, AT_SYNCED };

/*
 * Written by the main thread before fk_tree_copy() (so before any
 * thread of a times batch starts), read by every caller of the hooks:
 * fsync-each sends the fsyncs of the times through a thread batch, so
 * hook_fsync runs in several threads at once.  Each change is claimed
 * with an atomic exchange: it happens once, whichever thread wins.
 */
static struct {
	enum when when;
	const char *victim; /* path to remove */
	const char *to;	    /* NULL: unlink; else rename to */
	const char *target; /* the copied file (dst/sub/c) whose data
			     * fsync triggers AT_SYNCED */
	const char *back;   /* rename @to back to @victim at the first
			     * fsync (the "moved away and back" case) */
	const char *dst;    /* the destination top */
	const char *top;    /* its name */
	atomic_int fired, back_fired;
} h;

static int exists(const char *path)
{
	struct stat s;
	return lstat(path, &s) == 0;
}

static const char *const files[] = {"a", "b", "sub/c", "sub/d"};
#define NR_FILES 4

/* Every file of the tree is in the destination: it is all written. */
static int tree_written(void)
{
	char p[4300];
	for (int i = 0; i < NR_FILES; i++) {
		snprintf(p, sizeof(p), "%s/%s", h.dst, files[i]);
		if (!exists(p))
			return 0;
	}
	return 1;
}

static void fire(void)
{
	if (atomic_exchange(&h.fired, 1))
		return;
	if (h.to)
		CHECK_EQ(rename(h.victim, h.to), 0);
	else
		CHECK_EQ(unlink(h.victim), 0);
}

static void fire_back(void)
{
	if (!h.back || !atomic_load(&h.fired) ||
	    atomic_exchange(&h.back_fired, 1))
		return;
	CHECK_EQ(rename(h.to, h.back), 0);
}

/* @fd is the copied file h.target (same inode as at that name). */
static int is_target(int fd)
{
	struct stat f, t;
	return fstat(fd, &f) == 0 && lstat(h.target, &t) == 0 &&
	       S_ISREG(f.st_mode) && f.st_dev == t.st_dev &&
	       f.st_ino == t.st_ino;
}

/* AT_PASS: the durability phase's fstatat of the top, once the whole
 * tree is written (the fstatat before the copy finds no top). */
static int hook_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	if (h.victim && h.when == AT_PASS && !strcmp(path, h.top) &&
	    !atomic_load(&h.fired) && tree_written())
		fire();
	return fk_sys_default.fstatat(dirfd, path, st, flags);
}

/*
 * AT_SYNCED: right after the data fsync of the copied file itself,
 * recognized by its inode, not by the order of calls: fsync-each fsyncs
 * each file as the walk (in source inode-number order, which the file
 * system picks) meets it, so "the first fsync once sub/d exists" could
 * come before sub/c was even created.
 */
static int hook_fsync(int fd)
{
	fire_back();
	int r = fk_sys_default.fsync(fd);
	if (h.victim && h.when == AT_SYNCED && r == 0 &&
	    !atomic_load(&h.fired) && is_target(fd))
		fire();
	return r;
}

/* AT_SYNCED with syncfs: after the first syncfs (the copy's data). */
static int hook_syncfs(int fd)
{
	int r = fk_sys_default.syncfs(fd);
	if (h.victim && h.when == AT_SYNCED && !atomic_load(&h.fired) &&
	    tree_written())
		fire();
	return r;
}

/* ---- reports ---- */

static char reports[8192];

static void on_report(void *arg, int level, const char *op, const char *path,
		      int err)
{
	(void)arg;
	size_t n = strlen(reports);
	snprintf(reports + n, sizeof(reports) - n, "%s %s '%s': %s\n",
		 level == FK_REPORT_ERROR ? "error" : "warning", op,
		 path ? path : "", fk_strerror(err));
}

/* ---- the trees ---- */

#define SRC_MTIME 1500000000

/* The source tree at @top, its files made last first if @reverse. */
static void make_src(const char *top, int reverse)
{
	char p[4300];
	CHECK_EQ(mkdir(top, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub", top);
	CHECK_EQ(mkdir(p, 0755), 0);
	for (int k = 0; k < NR_FILES; k++) {
		int i = reverse ? NR_FILES - 1 - k : k;
		snprintf(p, sizeof(p), "%s/%s", top, files[i]);
		CHECK_EQ(fkt_write_file(p, 300000, (unsigned)i), 0);
		struct timespec ts[2] = {{SRC_MTIME, 0}, {SRC_MTIME + i, 0}};
		CHECK_EQ(utimensat(AT_FDCWD, p, ts, 0), 0);
	}
}

static const char *method_name(int m)
{
	static const char *const n[] = {"writeback", "delayed", "fsync-each",
					"syncfs"};
	return n[m - FK_COPY_WRITEBACK];
}

static int nr_case;

/* @rel under the destination @dst, or under the test root if it starts
 * with '/'. */
static void place(char *out, size_t len, const char *dst, const char *rel)
{
	if (rel[0] == '/')
		snprintf(out, len, "%s%s", root, rel);
	else
		snprintf(out, len, "%s/%s", dst, rel);
}

/*
 * Copy a fresh source to a fresh destination (its path in @dst) with the
 * hook armed at h.when: unlink @from_rel (@to_rel NULL) or rename it to
 * @to_rel; with @back, rename it back at the first fsync.
 */
static int run(int method, const char *from_rel, const char *to_rel, int back,
	       struct fk_tree_stats *st, char *dst, size_t dst_len)
{
	static char src[4200], from[4300], to[4300], target[4300];
	int n = nr_case++;
	snprintf(src, sizeof(src), "%s/src%d", root, n);
	snprintf(dst, dst_len, "%s/dst%d", root, n);
	make_src(src, n & 1);
	place(from, sizeof(from), dst, from_rel);
	if (to_rel)
		place(to, sizeof(to), dst, to_rel);
	snprintf(target, sizeof(target), "%s/sub/c", dst);
	h.victim = from;
	h.to = to_rel ? to : NULL;
	h.target = target;
	h.back = back ? from : NULL;
	h.dst = dst;
	h.top = strrchr(dst, '/') + 1;
	atomic_store(&h.fired, 0);
	atomic_store(&h.back_fired, 0);

	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.copy_method = method;
	o.report = on_report;
	o.sync_io = FK_SYNC_IO_SEQUENTIAL; /* fsyncs through fk_sys */
	reports[0] = 0;
	fk_sys.fstatat = hook_fstatat;
	fk_sys.fsync = hook_fsync;
	fk_sys.syncfs = hook_syncfs;
	memset(st, 0, sizeof(*st));
	int r = fk_tree_copy(src, dst, &o, st);
	fk_sys = fk_sys_default;
	h.victim = NULL;
	CHECK_EQ(atomic_load(&h.fired), 1);
	return r;
}

/* The files other than @skip have their source's mtime (complete). */
static void check_others(const char *dst, const char *skip)
{
	char p[4300];
	for (int i = 0; i < NR_FILES; i++) {
		if (!strcmp(files[i], skip))
			continue;
		struct stat s;
		snprintf(p, sizeof(p), "%s/%s", dst, files[i]);
		CHECK_EQ(lstat(p, &s), 0);
		CHECK_EQ(s.st_mtim.tv_sec, SRC_MTIME + i);
		CHECK_EQ(s.st_size, 300000);
	}
}

/* Exactly one error, @op on the destination path of @rel. */
static void check_report(const char *dst, const char *op, const char *rel,
			 const struct fk_tree_stats *st)
{
	char want[4500];
	snprintf(want, sizeof(want), "error %s '%s/%s'", op, dst, rel);
	CHECK(strstr(reports, want) != NULL);
	CHECK_EQ(st->errors, 1);
}

static void test_vanished(int method, enum when when)
{
	static const struct {
		const char *what, *to;
	} cases[] = {
	    {"unlinked", NULL},
	    {"renamed out of the tree", "/elsewhere"},
	    {"renamed within the tree", "c-moved"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char dst[4200], out[4300];
		struct fk_tree_stats st;
		h.when = when;
		const char *to = cases[i].to;
		if (to && to[0] == '/') {
			snprintf(out, sizeof(out), "/elsewhere%d", nr_case);
			to = out;
		}
		int r = run(method, "sub/c", to, 0, &st, dst, sizeof(dst));
		printf("%s, %s %s: %d (%s)\n%s", method_name(method),
		       when == AT_PASS ? "before the fsync pass"
				       : "after its data fsync",
		       cases[i].what, r, fk_strerror(r), reports);
		CHECK_EQ(r, -ENOENT);
		check_report(dst, "copied file vanished from the destination",
			     "sub/c", &st);
		check_others(dst, "sub/c");
	}
}

static void test_replaced(int method, enum when when)
{
	char dst[4200], repl_rel[64], repl[4300], c[4300];
	struct fk_tree_stats st;
	/* Another file, made ahead outside the tree, renamed over it. */
	snprintf(repl_rel, sizeof(repl_rel), "/replacement%d", nr_case);
	place(repl, sizeof(repl), "", repl_rel);
	CHECK_EQ(fkt_write_file(repl, 1000, 99), 0);
	h.when = when;
	int r = run(method, repl_rel, "sub/c", 0, &st, dst, sizeof(dst));
	printf("%s, replaced %s: %d (%s)\n%s", method_name(method),
	       when == AT_PASS ? "before the fsync pass"
			       : "after its data fsync",
	       r, fk_strerror(r), reports);
	CHECK_EQ(r, -ESTALE);
	check_report(dst, "copied file replaced in the destination", "sub/c",
		     &st);
	check_others(dst, "sub/c");
	/* The replacement is left alone: not the copy's file. */
	struct stat s;
	snprintf(c, sizeof(c), "%s/sub/c", dst);
	CHECK_EQ(lstat(c, &s), 0);
	CHECK_EQ(s.st_size, 1000);
}

static void test_back(int method)
{
	char dst[4200], out[64];
	struct fk_tree_stats st;
	h.when = AT_PASS;
	snprintf(out, sizeof(out), "/away%d", nr_case);
	int r = run(method, "sub/c", out, 1, &st, dst, sizeof(dst));
	printf("%s, away during the pass, back at its first fsync: %d, "
	       "fsyncs %llu\n%s",
	       method_name(method), r, (unsigned long long)st.fsync_calls,
	       reports);
	CHECK_EQ(atomic_load(&h.back_fired), 1);
	CHECK_EQ(r, 0);
	CHECK_EQ(st.errors, 0);
	/* Each of the 4 files twice (data, times), sub/c's data fsync
	 * made by times_pass since the pass never met it. */
	CHECK_EQ(st.fsync_calls, 2 * NR_FILES);
	check_others(dst, "");
}

int main(void)
{
	snprintf(root, sizeof(root), "%s", fkt_tmpdir());
	for (int m = FK_COPY_WRITEBACK; m <= FK_COPY_SYNCFS; m++) {
		test_vanished(m, AT_PASS);
		test_vanished(m, AT_SYNCED);
		test_replaced(m, AT_PASS);
		test_replaced(m, AT_SYNCED);
		if (m == FK_COPY_WRITEBACK || m == FK_COPY_DELAYED)
			test_back(m);
	}
	return fkt_done();
}
