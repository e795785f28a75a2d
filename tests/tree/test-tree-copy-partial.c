// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-partial.c - a copy that could not copy everything says
 * what it missed and leaves its incomplete directories looking
 * incomplete ("flushkit cp" in-process, with each method):
 *
 *  - the open of one source file (src/a/b/victim) fails with EACCES
 *    (injected through the syscall table): exit 1, no "ok";
 *  - the --json summary's "error_list" has one entry for it with its op
 *    ("open"), its path and its errno (13), and the "errors" count;
 *  - the directories that miss a name, a/b and every directory above it
 *    (a, the top), do not carry their source's mtime (docs/cp.md: a
 *    directory carries its source's mtime only once every name in it is
 *    there); a complete sibling (e) and the files copied do.
 */
#include "cli.h"
#include "fktest.h"
#include "flushkit.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char out_buf[65536], err_buf[65536];

/* Run cmd_cp with stdout and stderr captured into out_buf/err_buf. */
static int run_cp(int argc, const char **argv)
{
	return fkt_run_cmd_buf(cmd_cp, argc, argv, out_buf, err_buf,
			       sizeof(out_buf));
}

static int same_mtime(const char *a, const char *b)
{
	struct stat x, y;
	if (lstat(a, &x) != 0 || lstat(b, &y) != 0)
		return -1;
	return x.st_mtim.tv_sec == y.st_mtim.tv_sec &&
	       x.st_mtim.tv_nsec == y.st_mtim.tv_nsec;
}

static void make_source(const char *src)
{
	char p[PATH_MAX];
	static const char *const dirs[] = {"", "/a", "/a/b", "/e"};
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s%s", src, dirs[i]);
		CHECK(mkdir(p, 0755) == 0);
	}
	static const char *const files[] = {"/a/b/victim", "/a/b/ok", "/a/f",
					    "/e/g"};
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s%s", src, files[i]);
		CHECK(fkt_write_file(p, 3000, (unsigned)i) == 0);
	}
	/* Old times, directories last (deepest first). */
	static const char *const order[] = {
	    "/a/b/victim", "/a/b/ok", "/a/f", "/e/g", "/a/b", "/a", "/e", ""};
	for (size_t i = 0; i < 8; i++) {
		snprintf(p, sizeof(p), "%s%s", src, order[i]);
		struct timespec ts[2] = {{1000000000 + (time_t)i, 5},
					 {1100000000 + (time_t)i, 7}};
		CHECK(utimensat(AT_FDCWD, p, ts, 0) == 0);
	}
}

static void check_dir(const char *src, const char *dst, const char *rel,
		      int complete, const char *method)
{
	char s[PATH_MAX], d[PATH_MAX];
	snprintf(s, sizeof(s), "%s%s", src, rel);
	snprintf(d, sizeof(d), "%s%s", dst, rel);
	int same = same_mtime(s, d);
	if (same != complete) {
		fprintf(stderr, "%s: %s%s: %s\n", method, dst, rel,
			same < 0   ? "missing"
			: complete ? "complete, but not the source's mtime"
				   : "INCOMPLETE, but the source's mtime");
		fkt_failures++;
	}
}

static void test_method(const char *src, const char *method)
{
	char dst[PATH_MAX], m[64];
	snprintf(dst, sizeof(dst), "%s/dst-%s", fkt_tmpdir(), method);
	snprintf(m, sizeof(m), "--method=%s", method);
	/* Pinned: io_uring's fsyncs do not go through the traced table. */
	const char *argv[] = {"cp", m,	 "--sync-io=threads", "--json", src,
			      dst,  NULL};
	fkt_trace_start();
	fkt_fault_set("open", "/src/a/b/victim", 0, -EACCES);
	int rc = run_cp(6, argv);
	unsigned fired = fkt_fault_fired();
	fkt_fault_clear();
	fkt_trace_stop();
	printf("--- %s: exit %d\n%s%s", method, rc, out_buf, err_buf);
	CHECK_EQ(rc, FK_EXIT_FAILURE);
	CHECK(fired >= 1);

	struct json_object *j = json_tokener_parse(out_buf), *v, *e;
	CHECK(j != NULL);
	if (j) {
		CHECK(json_object_object_get_ex(j, "result", &v) &&
		      !strcmp(json_object_get_string(v), "failed"));
		CHECK(json_object_object_get_ex(j, "errors", &v) &&
		      json_object_get_int(v) == 1);
		int has = json_object_object_get_ex(j, "error_list", &v) &&
			  json_object_is_type(v, json_type_array);
		CHECK(has);
		if (has) {
			CHECK_EQ(json_object_array_length(v), 1);
			e = json_object_array_get_idx(v, 0);
			struct json_object *f;
			char want[PATH_MAX];
			snprintf(want, sizeof(want), "%s/a/b/victim", src);
			CHECK(e && json_object_object_get_ex(e, "path", &f) &&
			      !strcmp(json_object_get_string(f), want));
			CHECK(e && json_object_object_get_ex(e, "op", &f) &&
			      !strcmp(json_object_get_string(f), "open"));
			CHECK(e && json_object_object_get_ex(e, "errno", &f) &&
			      json_object_get_int(f) == EACCES);
			CHECK(e && json_object_object_get_ex(e, "error", &f) &&
			      strstr(json_object_get_string(f),
				     "Permission denied"));
		}
		json_object_put(j);
	}
	/* Nothing copied claims to be the victim. */
	char p[PATH_MAX + 16];
	snprintf(p, sizeof(p), "%s/a/b/victim", dst);
	CHECK(access(p, F_OK) != 0);
	check_dir(src, dst, "/a/b", 0, method);
	check_dir(src, dst, "/a", 0, method);
	check_dir(src, dst, "", 0, method);
	check_dir(src, dst, "/e", 1, method);
	check_dir(src, dst, "/a/b/ok", 1, method);
	check_dir(src, dst, "/e/g", 1, method);
}

int main(void)
{
	char src[PATH_MAX];
	snprintf(src, sizeof(src), "%s/src", fkt_tmpdir());
	make_source(src);
	test_method(src, "writeback");
	test_method(src, "delayed");
	test_method(src, "fsync-each");
	test_method(src, "syncfs");
	return fkt_done();
}
