// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-faults.c - errors during fk_tree_copy and 'flushkit cp',
 * injected through the syscall table:
 *  - fsync EIO on a file (each fsync method): exit 1, the message names
 *    the path, that fsync is never retried, the summary says failed;
 *  - directory fsync EINVAL: completed, degraded, exit 3;
 *  - EACCES opening a source file or directory: reported, the rest
 *    copied, exit 1;
 *  - a source file vanishing: counted and warned, exit 0;
 *  - copy_file_range EXDEV/ENOSYS/EINVAL/EOPNOTSUPP: read/write fallback,
 *    identical copy;
 *  - ENOSPC while copying: stops at once, names the incomplete file,
 *    nothing fsynced afterwards;
 *  - usage errors: exit 2.
 */
#include "cli.h"
#include "fktest.h"
#include "flushkit.h"
#include "test-tree-copy-lib.h"

#include <sys/stat.h>

static char tmp_real[4096], src[4200];

static void make_tree(void)
{
	CHECK(mkdir(src, 0755) == 0);
	int top = open(src, O_RDONLY | O_DIRECTORY);
	CHECK(mkdirat(top, "d1", 0755) == 0);
	int d1 = openat(top, "d1", O_RDONLY | O_DIRECTORY);
	CHECK(mkdirat(d1, "d2", 0755) == 0);
	int d2 = openat(d1, "d2", O_RDONLY | O_DIRECTORY);
	CHECK(tc_write_at(top, "f0", 0, 1000, 1, 0644) == 0);
	CHECK(tc_write_at(d1, "f1", 0, 100 * 1024, 2, 0644) == 0);
	CHECK(tc_write_at(d1, "f2", 0, 10, 3, 0644) == 0);
	CHECK(tc_write_at(d2, "f3", 0, 3 * 1024 * 1024, 4, 0644) == 0);
	close(d2);
	close(d1);
	close(top);
}

/* Run 'flushkit cp ARGS... SRC DST' in-process; capture stdout, stderr. */
static int run_cp(const char *method, const char *dst, char **out, char **err)
{
	char m[64];
	snprintf(m, sizeof(m), "--method=%s", method);
	/* Pinned: io_uring's fsyncs do not go through the traced table. */
	char *argv[] = {"cp",	     m,	  "--sync-io=threads", "--json", src,
			(char *)dst, NULL};
	int rc = fkt_run_cmd(cmd_cp, argv, out, err);
	fprintf(stderr, "cp --method=%s -> %d\n--- stderr:\n%s--- stdout:\n%s",
		method, rc, *err, *out);
	return rc;
}

static void next_dst(char *dst, size_t len)
{
	static int n;
	snprintf(dst, len, "%s/dst%d", tmp_real, n++);
}

static int exists(const char *dst, const char *rel)
{
	char p[4400];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dst, rel);
	return lstat(p, &st) == 0;
}

static void test_fsync_eio(void)
{
	static const char *methods[] = {"writeback", "delayed", "fsync-each"};
	char sp[4400];
	snprintf(sp, sizeof(sp), "%s/d1/f2", src);
	struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
	CHECK(utimensat(AT_FDCWD, sp, old, 0) == 0);
	for (int i = 0; i < 3; i++) {
		char dst[4300], want[4400];
		next_dst(dst, sizeof(dst));
		fkt_trace_start();
		fkt_fault_set("fsync", "/d1/f2", 0, -EIO);
		char *out, *err;
		int rc = run_cp(methods[i], dst, &out, &err);
		CHECK_EQ(fkt_fault_fired(), 1); /* never retried */
		fkt_fault_clear();
		char p[4400];
		snprintf(p, sizeof(p), "%s/d1/f2", dst);
		/* Never retried, and its times never set (tree_copy.c
		 * invariant 7: it must not look complete). */
		struct stat ds;
		CHECK(stat(p, &ds) == 0 && ds.st_mtim.tv_sec != 1000000000);
		CHECK_EQ(fkt_trace_nr("fsync", "/d1/f2"), 1);
		/* The other files were still fsynced: data, then times. */
		CHECK_EQ(fkt_trace_nr("fsync", "/d1/d2/f3"), 2);
		fkt_trace_stop();
		CHECK_EQ(rc, FK_EXIT_FAILURE);
		snprintf(want, sizeof(want), "fsync '%s/d1/f2': %s", dst,
			 strerror(EIO));
		CHECK(strstr(err, want) != NULL);
		CHECK(strstr(out, "\"result\":\"failed\"") != NULL);
		CHECK(strstr(out, "\"result\":\"ok\"") == NULL);
		free(out);
		free(err);
	}
}

/*
 * cp's auto method when it sweeps (a syncfs of the destination, then each
 * file's own writeback error through the descriptor that wrote it): a
 * file whose check fails is named, never retried, keeps its creation
 * time, and the copy fails; the others get their times.  When other
 * programs' dirty data makes auto fsync instead, the sweep is skipped.
 */
static void test_sweep_eio(void)
{
	char dst[4300], want[4400], p[4400];
	next_dst(dst, sizeof(dst));
	/* Enough data that the copy outweighs a busy machine's other dirty
	 * data (auto sweeps only then); on disk before the copy starts. */
	int top = open(src, O_RDONLY | O_DIRECTORY);
	CHECK(tc_write_at(top, "big", 0, 48u << 20, 5, 0644) == 0);
	int bfd = openat(top, "big", O_RDONLY);
	CHECK(bfd >= 0 && fsync(bfd) == 0);
	close(bfd);
	fkt_trace_start();
	fkt_fault_set("sync_file_range", "/d1/f2", 0, -EIO);
	char *out, *err;
	int rc = run_cp("auto", dst, &out, &err);
	unsigned fired = fkt_fault_fired();
	fkt_fault_clear();
	size_t nr_syncfs = fkt_trace_nr("syncfs", NULL);
	if (!nr_syncfs) {
		fprintf(stderr, "SKIP: auto did not sweep (other programs' "
				"dirty data outweighs the copy's)\n");
		CHECK_EQ(fired, 0);
		CHECK_EQ(rc, 0);
	} else {
		CHECK_EQ(fired, 1); /* checked once, never retried */
		CHECK_EQ(fkt_trace_nr("fsync", "/d1/f2"), 0);
		/* data, then the times */
		CHECK_EQ(nr_syncfs, 2);
		CHECK_EQ(rc, FK_EXIT_FAILURE);
		snprintf(want, sizeof(want), "writeback '%s/d1/f2': %s", dst,
			 strerror(EIO));
		CHECK(strstr(err, want) != NULL);
		CHECK(strstr(out, "\"result\":\"failed\"") != NULL);
		struct stat ds, ss;
		snprintf(p, sizeof(p), "%s/d1/f2", dst);
		CHECK(stat(p, &ds) == 0 && ds.st_mtim.tv_sec != 1000000000);
		snprintf(p, sizeof(p), "%s/d1/d2/f3", dst);
		CHECK(stat(p, &ds) == 0);
		snprintf(p, sizeof(p), "%s/d1/d2/f3", src);
		CHECK(stat(p, &ss) == 0);
		CHECK_EQ(ds.st_mtim.tv_nsec, ss.st_mtim.tv_nsec);
		CHECK_EQ(ds.st_mtim.tv_sec, ss.st_mtim.tv_sec);
	}
	fkt_trace_stop();
	free(out);
	free(err);
	CHECK(unlinkat(top, "big", 0) == 0);
	close(top);
}

static void test_dir_einval(void)
{
	char dst[4300];
	next_dst(dst, sizeof(dst));
	fkt_trace_start();
	fkt_fault_set("fsync", "/d1/d2", 0, -EINVAL);
	char *out, *err;
	int rc = run_cp("delayed", dst, &out, &err);
	CHECK(fkt_fault_fired() >= 1);
	fkt_fault_clear();
	fkt_trace_stop();
	CHECK_EQ(rc, FK_EXIT_DEGRADED);
	CHECK(strstr(out, "\"degraded\":true") != NULL);
	CHECK(strstr(out, "\"result\":\"degraded\"") != NULL);
	CHECK(strstr(err, "degraded") != NULL);
	CHECK_EQ(tc_compare_trees(src, dst, NULL), 0);
	free(out);
	free(err);

	/* The same through the library, fsync-each. */
	next_dst(dst, sizeof(dst));
	struct fk_tree_opts o;
	struct fk_tree_stats st;
	fk_tree_opts_init(&o);
	o.copy_method = FK_COPY_FSYNC_EACH;
	fkt_trace_start();
	fkt_fault_set("fsync", "/d1/d2", 0, -EINVAL);
	CHECK_EQ(fk_tree_copy(src, dst, &o, &st), -FK_EDEGRADED);
	fkt_fault_clear();
	fkt_trace_stop();
	CHECK_EQ(st.degraded, 1);
	CHECK_EQ(st.errors, 0);
}

static void test_eacces(void)
{
	char dst[4300], want[4400];
	next_dst(dst, sizeof(dst));
	fkt_trace_start();
	fkt_fault_set("open", "/src/d1/f1", 0, -EACCES);
	char *out, *err;
	int rc = run_cp("writeback", dst, &out, &err);
	CHECK_EQ(fkt_fault_fired(), 1);
	fkt_fault_clear();
	fkt_trace_stop();
	CHECK_EQ(rc, FK_EXIT_FAILURE);
	snprintf(want, sizeof(want), "open '%s/d1/f1': %s", src,
		 strerror(EACCES));
	CHECK(strstr(err, want) != NULL);
	CHECK(!exists(dst, "d1/f1"));
	CHECK(exists(dst, "d1/f2") && exists(dst, "f0") &&
	      exists(dst, "d1/d2/f3"));
	CHECK(strstr(out, "\"errors\":1,") != NULL);
	free(out);
	free(err);

	/* An unreadable source directory: skipped, the rest copied. */
	next_dst(dst, sizeof(dst));
	fkt_trace_start();
	fkt_fault_set("open", "/src/d1/d2", 0, -EACCES);
	rc = run_cp("delayed", dst, &out, &err);
	CHECK_EQ(fkt_fault_fired(), 1);
	fkt_fault_clear();
	fkt_trace_stop();
	CHECK_EQ(rc, FK_EXIT_FAILURE);
	snprintf(want, sizeof(want), "open '%s/d1/d2': %s", src,
		 strerror(EACCES));
	CHECK(strstr(err, want) != NULL);
	CHECK(!exists(dst, "d1/d2"));
	CHECK(exists(dst, "d1/f1") && exists(dst, "d1/f2"));
	free(out);
	free(err);
}

static void test_vanished(void)
{
	char dst[4300];
	next_dst(dst, sizeof(dst));
	struct fk_tree_opts o;
	struct fk_tree_stats st;
	fk_tree_opts_init(&o);
	fkt_trace_start();
	fkt_fault_set("open", "/src/d1/f2", 0, -ENOENT);
	int r = fk_tree_copy(src, dst, &o, &st);
	CHECK_EQ(fkt_fault_fired(), 1);
	fkt_fault_clear();
	fkt_trace_stop();
	CHECK_EQ(r, 0);
	CHECK_EQ(st.vanished, 1);
	CHECK_EQ(st.warnings, 1);
	CHECK_EQ(st.errors, 0);
	CHECK_EQ(st.files, 3);
	CHECK(!exists(dst, "d1/f2"));
}

static void test_cfr_fallback(void)
{
	static const int errs[] = {EXDEV, ENOSYS, EINVAL, EOPNOTSUPP};
	for (int i = 0; i < 4; i++) {
		char dst[4300];
		next_dst(dst, sizeof(dst));
		struct fk_tree_opts o;
		struct fk_tree_stats st;
		fk_tree_opts_init(&o);
		fkt_trace_start();
		fkt_fault_set("copy_file_range", NULL, 0, -errs[i]);
		int r = fk_tree_copy(src, dst, &o, &st);
		CHECK(fkt_fault_fired() >= 1);
		fkt_fault_clear();
		CHECK(fkt_trace_nr("pwrite", "/d1/d2/f3") >= 3);
		fkt_trace_stop();
		CHECK_EQ(r, 0);
		CHECK_EQ(st.errors, 0);
		CHECK_EQ(tc_compare_trees(src, dst, NULL), 0);
	}
}

static void test_enospc(void)
{
	char dst[4300], want[4400];
	/* The library: stops, names the incomplete file, fsyncs nothing. */
	next_dst(dst, sizeof(dst));
	struct fk_tree_opts o;
	struct fk_tree_stats st;
	fk_tree_opts_init(&o);
	fkt_trace_start();
	fkt_fault_set("copy_file_range", "/d1/d2/f3", 2, -ENOSPC);
	int r = fk_tree_copy(src, dst, &o, &st);
	CHECK_EQ(fkt_fault_fired(), 1);
	fkt_fault_clear();
	CHECK_EQ(fkt_trace_nr("fsync", NULL), 0);
	/* Nothing written after the failure. */
	long fail = fkt_trace_find("copy_file_range", "/d1/d2/f3", 0);
	fail = fkt_trace_find("copy_file_range", "/d1/d2/f3", (size_t)fail + 1);
	CHECK(fail > 0);
	CHECK(fkt_trace_find("copy_file_range", NULL, (size_t)fail + 1) < 0);
	CHECK(fkt_trace_find("pwrite", NULL, (size_t)fail + 1) < 0);
	fkt_trace_stop();
	CHECK_EQ(r, -ENOSPC);
	char p[4400];
	struct stat s;
	snprintf(p, sizeof(p), "%s/d1/d2/f3", dst);
	CHECK(lstat(p, &s) == 0 && s.st_size < 3 * 1024 * 1024);

	/* The command: exit 1 and the message. */
	next_dst(dst, sizeof(dst));
	fkt_trace_start();
	fkt_fault_set("copy_file_range", "/d1/d2/f3", 2, -ENOSPC);
	char *out, *err;
	int rc = run_cp("writeback", dst, &out, &err);
	fkt_fault_clear();
	fkt_trace_stop();
	CHECK_EQ(rc, FK_EXIT_FAILURE);
	snprintf(want, sizeof(want), "incomplete file '%s/d1/d2/f3': %s", dst,
		 strerror(ENOSPC));
	CHECK(strstr(err, want) != NULL);
	free(out);
	free(err);
}

static void test_usage(void)
{
	char *argv1[] = {"cp", "--method=bogus", "a", "b", NULL};
	char *argv2[] = {"cp", "onlyone", NULL};
	char *argv3[] = {"cp", "--help", NULL};
	fflush(stdout);
	int so = dup(1), se = dup(2);
	int nul = open("/dev/null", O_WRONLY);
	dup2(nul, 1);
	dup2(nul, 2);
	int r1 = cmd_cp(4, argv1), r2 = cmd_cp(2, argv2), r3 = cmd_cp(2, argv3);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(nul);
	CHECK_EQ(r1, FK_EXIT_FAILURE); /* usage errors: 1, as GNU cp */
	CHECK_EQ(r2, FK_EXIT_FAILURE);
	CHECK_EQ(r3, FK_EXIT_OK);
}

int main(void)
{
	const char *tmp = fkt_tmpdir();
	CHECK(realpath(tmp, tmp_real) != NULL);
	snprintf(src, sizeof(src), "%s/src", tmp_real);
	make_tree();
	test_fsync_eio();
	test_sweep_eio();
	test_dir_einval();
	test_eacces();
	test_vanished();
	test_cfr_fallback();
	test_enospc();
	test_usage();
	return fkt_done();
}
