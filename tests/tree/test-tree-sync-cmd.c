// SPDX-License-Identifier: MIT
/*
 * test-tree-sync-cmd.c - "flushkit sync" in-process (cmd_sync) with
 * faults injected through the syscall table:
 *
 *  - fsync EIO on one file: exit 1, the message names the path and the
 *    error, the file is not retried, the rest is still synced, and the
 *    summary does not report success; likewise for each method that
 *    fsyncs;
 *  - directory fsync EINVAL: exit 3 (durability degraded), warning;
 *  - a file vanishing (ENOENT on open): counted, warned, exit 0;
 *  - an unreadable file (EACCES on open): exit 1, the rest synced;
 *  - syncfs EIO: exit 1;
 *  - --json parses with json-c and has every field, and a failure's
 *    error_list entry names the op, path and errno; --progress writes
 *    progress to stderr; usage errors exit 2.
 */
#include "cli.h"
#include "fktest.h"
#include "sys.h"
#include "test-tree-sync-fixture.h"

#include <json-c/json.h>
#include <limits.h>

static char out_buf[65536], err_buf[65536];

/* Run cmd_sync with stdout and stderr captured into out_buf/err_buf. */
static int run_sync(int argc, const char **argv)
{
	int rc = fkt_run_cmd_buf(cmd_sync, argc, argv, out_buf, err_buf,
				 sizeof(out_buf));
	fprintf(stderr, "--- sync exit %d\n[stdout]\n%s[stderr]\n%s", rc,
		out_buf, err_buf);
	return rc;
}

static char *make_tree(const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", fkt_tmpdir(), name);
	fix_build(p);
	char *real = realpath(p, NULL);
	CHECK(real != NULL);
	return real;
}

static int sync_tree(const char *method, const char *root)
{
	char m[64];
	snprintf(m, sizeof(m), "--method=%s", method);
	/* Pinned: io_uring's fsyncs do not go through the traced table. */
	const char *argv[] = {"sync", "--summary", m, "--sync-io=threads",
			      root,   NULL};
	fkt_trace_start();
	int rc = run_sync(5, argv);
	fkt_fault_clear();
	fkt_trace_stop();
	return rc;
}

/* Injected fsync EIO on a: failure, named, not retried, rest synced. */
static void test_fsync_eio(const char *method)
{
	char name[64];
	snprintf(name, sizeof(name), "eio-%s", method);
	char *root = make_tree(name);
	fkt_trace_start();
	fkt_fault_set("fsync", "/a", 0, -EIO);
	int rc = sync_tree(method, root);
	CHECK_EQ(rc, FK_EXIT_FAILURE);
	char want[PATH_MAX + 64];
	snprintf(want, sizeof(want),
		 "flushkit: fsync '%s/a': Input/output "
		 "error\n",
		 root);
	CHECK(strstr(err_buf, want) != NULL);
	/* Never retried, never reopened-and-retried. */
	CHECK_EQ(fkt_trace_nr("fsync", "/a"), 1);
	/* Everything else was still synced. */
	CHECK_EQ(fkt_trace_nr("fsync", "/sub/c"), 1);
	CHECK_EQ(fkt_trace_nr("fsync", "/b"), 1);
	CHECK_EQ(fkt_trace_nr("fsync", "/sub/deep"), 1);
	CHECK_EQ(fkt_trace_nr("fsync", root), 1);
	/* Nothing claims success. */
	CHECK(strstr(out_buf, "ok: durable") == NULL);
	CHECK(strstr(out_buf, "FAILED") != NULL);
	CHECK(strstr(out_buf, "errors, warnings:  1, 0") != NULL);
	free(root);
}

static void test_dir_einval(void)
{
	char *root = make_tree("einval");
	fkt_trace_start();
	fkt_fault_set("fsync", "/sub", 0, -EINVAL);
	int rc = sync_tree("twopass", root);
	CHECK_EQ(rc, FK_EXIT_DEGRADED);
	CHECK(strstr(err_buf, "flushkit: warning: fsync '") != NULL);
	CHECK(
	    strstr(
		err_buf,
		"durability degraded (a directory or file cannot be fsynced") !=
	    NULL);
	CHECK(strstr(out_buf, "degraded") != NULL);
	/* Still everything else synced, the parent after the child. */
	CHECK_EQ(fkt_trace_nr("fsync", "/sub/c"), 1);
	CHECK_EQ(fkt_trace_nr("fsync", root), 1);
	free(root);
}

static void test_vanished(void)
{
	char *root = make_tree("vanish");
	/* fsync: the open of b fails with ENOENT, as if it was unlinked
	 * between getdents and open. */
	fkt_trace_start();
	fkt_fault_set("open", "/b", 0, -ENOENT);
	int rc = sync_tree("fsync", root);
	CHECK_EQ(rc, FK_EXIT_OK);
	CHECK(strstr(err_buf, "warning: open '") != NULL);
	CHECK(strstr(err_buf, "/b': No such file or directory") != NULL);
	CHECK(strstr(out_buf, "vanished:          1\n") != NULL);
	CHECK(strstr(out_buf, "ok: durable") != NULL);
	CHECK_EQ(fkt_trace_nr("fsync", "/b"), 0);
	CHECK_EQ(fkt_trace_nr("fsync", "/a"), 1);

	/* twopass: vanished in pass 1 and in pass 2: counted once. */
	fkt_trace_start();
	fkt_fault_set("open", "/b", 0, -ENOENT);
	rc = sync_tree("twopass", root);
	CHECK_EQ(rc, FK_EXIT_OK);
	CHECK(strstr(out_buf, "vanished:          1\n") != NULL);

	/* A whole directory vanishing (ENOENT opening it). */
	fkt_trace_start();
	fkt_fault_set("open", "/sub/deep", 0, -ENOENT);
	rc = sync_tree("twopass", root);
	CHECK_EQ(rc, FK_EXIT_OK);
	CHECK(strstr(out_buf, "vanished:          1\n") != NULL);
	free(root);
}

static void test_eacces(void)
{
	char *root = make_tree("eacces");
	static const char *methods[] = {"fsync", "twopass"};
	for (int i = 0; i < 2; i++) {
		fkt_trace_start();
		fkt_fault_set("open", "/sub/c", 0, -EACCES);
		int rc = sync_tree(methods[i], root);
		CHECK_EQ(rc, FK_EXIT_FAILURE);
		char want[PATH_MAX + 64];
		snprintf(want, sizeof(want),
			 "flushkit: open '%s/sub/c': Permission denied\n",
			 root);
		CHECK(strstr(err_buf, want) != NULL);
		/* Reported once, even with two passes. */
		CHECK(strstr(strstr(err_buf, want) + 1, want) == NULL);
		CHECK_EQ(fkt_trace_nr("fsync", "/a"), 1);
		CHECK_EQ(fkt_trace_nr("fsync", "/sub"), 1);
		CHECK_EQ(fkt_trace_nr("fsync", "/sub/c"), 0);
		CHECK(strstr(out_buf, "FAILED") != NULL);
	}

	/* An unreadable directory: reported, the rest synced, exit 1. */
	fkt_trace_start();
	fkt_fault_set("open", "/sub/deep", 0, -EACCES);
	int rc = sync_tree("twopass", root);
	CHECK_EQ(rc, FK_EXIT_FAILURE);
	CHECK(strstr(err_buf, "/sub/deep': Permission denied") != NULL);
	CHECK_EQ(fkt_trace_nr("fsync", "/sub/c"), 1);
	free(root);
}

static void test_syncfs_eio(void)
{
	char *root = make_tree("syncfs-eio");
	fkt_trace_start();
	fkt_fault_set("syncfs", NULL, 0, -EIO);
	int rc = sync_tree("syncfs", root);
	CHECK_EQ(rc, FK_EXIT_FAILURE);
	CHECK(strstr(err_buf, "flushkit: syncfs '") != NULL);
	CHECK(strstr(err_buf, "Input/output error") != NULL);
	CHECK_EQ(fkt_trace_nr("syncfs", NULL), 1);
	free(root);
}

static void test_json(void)
{
	char *root = make_tree("json");
	const char *argv[] = {"sync", "--json", root, NULL};
	CHECK_EQ(run_sync(3, argv), FK_EXIT_OK);
	struct json_object *o = json_tokener_parse(out_buf);
	CHECK(o != NULL);
	if (!o)
		return;
	static const char *fields[] = {"method",
				       "result",
				       "files",
				       "dirs",
				       "symlinks",
				       "specials",
				       "hardlinks",
				       "bytes",
				       "fsync_calls",
				       "dir_fsync_calls",
				       "syncfs_calls",
				       "writeback_ranges",
				       "writeback_bytes",
				       "vanished",
				       "errors",
				       "warnings",
				       "walk_s",
				       "writeback_s",
				       "fsync_s",
				       "total_s",
				       "degraded",
				       "command",
				       "paths",
				       "sync_io",
				       "sync_jobs",
				       "error",
				       "exit"};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		struct json_object *v;
		if (!json_object_object_get_ex(o, fields[i], &v)) {
			fprintf(stderr, "missing JSON field %s\n", fields[i]);
			fkt_failures++;
		}
	}
	struct json_object *v;
	if (json_object_object_get_ex(o, "files", &v))
		CHECK_EQ(json_object_get_int64(v), FIX_FILES);
	if (json_object_object_get_ex(o, "dirs", &v))
		CHECK_EQ(json_object_get_int64(v), FIX_DIRS);
	/* The default, auto: each file fsynced (twopass), or one syncfs
	 * sweep of the file system and no fsync. */
	struct json_object *sv;
	if (json_object_object_get_ex(o, "fsync_calls", &v) &&
	    json_object_object_get_ex(o, "syncfs_calls", &sv))
		CHECK(json_object_get_int64(sv) == 0
			  ? json_object_get_int64(v) == FIX_FILES
			  : json_object_get_int64(v) == 0);
	if (json_object_object_get_ex(o, "method", &v))
		CHECK(!strcmp(json_object_get_string(v), "auto"));
	if (json_object_object_get_ex(o, "result", &v))
		CHECK(!strcmp(json_object_get_string(v), "ok"));
	if (json_object_object_get_ex(o, "exit", &v))
		CHECK_EQ(json_object_get_int(v), FK_EXIT_OK);
	if (json_object_object_get_ex(o, "total_s", &v))
		CHECK(json_object_is_type(v, json_type_double));
	/* auto: io_uring where the kernel allows it, else threads. */
	if (json_object_object_get_ex(o, "sync_io", &v))
		CHECK(!strcmp(json_object_get_string(v), "uring") ||
		      !strcmp(json_object_get_string(v), "threads"));
	if (json_object_object_get_ex(o, "sync_jobs", &v))
		CHECK_EQ(json_object_get_int(v), 32);
	json_object_put(o);

	/* A failure in JSON mode: result "failed", exit 1. */
	fkt_trace_start();
	fkt_fault_set("fsync", "/a", 0, -EIO);
	const char *argv2[] = {"sync", "--json", "--method=fsync", root, NULL};
	CHECK_EQ(run_sync(4, argv2), FK_EXIT_FAILURE);
	fkt_fault_clear();
	fkt_trace_stop();
	o = json_tokener_parse(out_buf);
	CHECK(o != NULL);
	if (o && json_object_object_get_ex(o, "result", &v))
		CHECK(!strcmp(json_object_get_string(v), "failed"));
	if (o && json_object_object_get_ex(o, "errors", &v))
		CHECK_EQ(json_object_get_int64(v), 1);
	/* The error itself: op, path, errno. */
	int has = o && json_object_object_get_ex(o, "error_list", &v) &&
		  json_object_is_type(v, json_type_array) &&
		  json_object_array_length(v) == 1;
	CHECK(has);
	if (has) {
		struct json_object *e = json_object_array_get_idx(v, 0), *f;
		char want[PATH_MAX + 8];
		snprintf(want, sizeof(want), "%s/a", root);
		CHECK(json_object_object_get_ex(e, "op", &f) &&
		      !strcmp(json_object_get_string(f), "fsync"));
		CHECK(json_object_object_get_ex(e, "path", &f) &&
		      !strcmp(json_object_get_string(f), want));
		CHECK(json_object_object_get_ex(e, "errno", &f) &&
		      json_object_get_int(f) == EIO);
	}
	json_object_put(o);

	/* --progress: shown on stderr even though it is not a tty. */
	const char *argv3[] = {"sync", "--progress", root, NULL};
	CHECK_EQ(run_sync(3, argv3), FK_EXIT_OK);
	CHECK(strstr(err_buf, "4 files") != NULL);
	/* As GNU sync: nothing on stdout or stderr. */
	const char *argv4[] = {"sync", root, NULL};
	CHECK_EQ(run_sync(2, argv4), FK_EXIT_OK);
	CHECK_EQ(strlen(err_buf), 0);
	CHECK_EQ(strlen(out_buf), 0);
	free(root);
}

static void test_usage(void)
{
	/* Usage errors exit 1, as GNU sync's (cli_usage_status).  No
	 * PATH is sync(2), as GNU sync; with a summary asked for, a usage
	 * error. */
	const char *a1[] = {"sync", "--summary", NULL};
	CHECK_EQ(run_sync(2, a1), FK_EXIT_FAILURE);
	CHECK(!strcmp(err_buf, "flushkit sync: missing PATH operand\n"
			       "Try 'flushkit sync --help' for more "
			       "information.\n"));
	CHECK(!*out_buf);
	const char *a2[] = {"sync", "--method=bogus", ".", NULL};
	CHECK_EQ(run_sync(3, a2), FK_EXIT_FAILURE);
	CHECK(strstr(err_buf,
		     "flushkit sync: invalid value 'bogus' for "
		     "--method (auto, twopass, fsync or syncfs)\n") == err_buf);
	const char *a3[] = {"sync", "--bogus", ".", NULL};
	CHECK_EQ(run_sync(3, a3), FK_EXIT_FAILURE);
	CHECK(
	    strstr(err_buf, "flushkit sync: unrecognized option '--bogus'\n") ==
	    err_buf);
	const char *a4[] = {"sync", "--method", NULL};
	CHECK_EQ(run_sync(2, a4), FK_EXIT_FAILURE);
	CHECK(strstr(err_buf, "flushkit sync: option '--method' requires an "
			      "argument\n") == err_buf);
	const char *a5[] = {"sync", "-x", ".", NULL};
	CHECK_EQ(run_sync(3, a5), FK_EXIT_FAILURE);
	CHECK(strstr(err_buf, "flushkit sync: invalid option -- 'x'\n") ==
	      err_buf);
	const char *a6[] = {"sync", "--help", NULL};
	CHECK_EQ(run_sync(2, a6), FK_EXIT_OK);
	CHECK(strstr(out_buf, "usage: flushkit sync") != NULL);
	/* A PATH that does not exist: a failure, not a usage error. */
	char missing[PATH_MAX];
	snprintf(missing, sizeof(missing), "%s/missing", fkt_tmpdir());
	const char *a7[] = {"sync", missing, NULL};
	CHECK_EQ(run_sync(2, a7), FK_EXIT_FAILURE);
	CHECK(strstr(err_buf, "/missing': No such file or directory") != NULL);
}

int main(void)
{
	test_fsync_eio("fsync");
	test_fsync_eio("twopass");
	test_dir_einval();
	test_vanished();
	test_eacces();
	test_syncfs_eio();
	test_json();
	test_usage();
	return fkt_done();
}
