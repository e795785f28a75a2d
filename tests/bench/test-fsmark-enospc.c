// SPDX-License-Identifier: MIT
/*
 * test-fsmark-enospc.c - a "flushkit bench fsmark" run that fills its
 * file system is not a result.  On a real 16 MiB ext4 (fkloop), 2
 * threads x 40 files of 1 MiB, fsync each (-S 1), hit ENOSPC:
 *   1. the run exits 1, names the file and the error, stops at the
 *      first ENOSPC as fs_mark does (one error line per thread at most,
 *      no further loop with -L, also with a post-fsync method) and says
 *      that the figures above are incomplete (also in --json: "status");
 *   2. its result file (written outside the full file system) ends in a
 *      summary with "status": "failed" and the error;
 *   3. flushkit report refuses it (exit 1, no page), flushkit compare
 *      refuses it;
 * and the same run with files that fit (the control) is "status": "ok".
 * Needs root and loop devices (77 otherwise).
 */
#include "cli.h"
#include "fkloop.h"
#include "fktest.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

static char *so, *se; /* what the last run() printed */

/* Run @fn with the NULL-terminated arguments, output into so and se. */
#define run(fn, ...) fkt_run_cmdl(fn, &so, &se, __VA_ARGS__)

int main(void)
{
	const char *t = fkt_tmpdir();
	char img[4096], mnt[4096], good[4096], bad[4096], rep[4096];
	char goodf[8192], badf[8192];
	struct fkt_fs fs;
	snprintf(img, sizeof(img), "%s/fs.img", t);
	snprintf(mnt, sizeof(mnt), "%s/mnt", t);
	snprintf(good, sizeof(good), "%s/good", t);
	snprintf(bad, sizeof(bad), "%s/bad", t);
	snprintf(rep, sizeof(rep), "%s/report", t);
	int r = fkt_fs_create(&fs, "ext4", img, 16 << 20, mnt);
	if (r == 77)
		SKIP("needs root and loop devices");
	CHECK_EQ(r, 0);
	if (r)
		return fkt_done();

	/* the control: 2 x 4 files of 1 MiB fit */
	CHECK_EQ(run(cmd_bench_fsmark, "fsmark", "-d", mnt, "-t", "2", "-n",
		     "4", "-s", "1048576", "-S", "1", "--results", good, NULL),
		 0);
	CHECK_EQ(fkt_only_result(good, goodf, sizeof(goodf)), 1);
	struct json_object *sum = fkt_result_summary(goodf);
	CHECK(sum && !strcmp(fkt_json_str(sum, "status"), "ok"));
	json_object_put(sum);

	/* 1: 80 MiB on 16 MiB */
	int ret = run(cmd_bench_fsmark, "fsmark", "-d", mnt, "-t", "2", "-n",
		      "40", "-s", "1048576", "-S", "1", "--results", bad, NULL);
	fprintf(stderr, "--- the full run:\n%s%s---\n", so, se);
	CHECK_EQ(ret, 1);
	CHECK(strstr(se, mnt) && strstr(se, "No space left on device"));
	CHECK(strstr(se, "Run was aborted after ") &&
	      strstr(se, "the above results are incomplete."));
	/* It stops at the first ENOSPC, as fs_mark exits there: one error
	 * per thread at most (each may be in a write when the other meets
	 * it), not one per file left; and it says why it stopped. */
	int nospc = 0;
	for (const char *p = se; (p = strstr(p, "No space left on device"));
	     p++)
		nospc++;
	fprintf(stderr, "ENOSPC lines: %d\n", nospc);
	/* the error lines (a write, and maybe the fsync or unlink of a
	 * file another thread was in), "the first:" of the summary line */
	CHECK(nospc >= 2 && nospc <= 5);
	CHECK(strstr(se, "stopped at the first ENOSPC") != NULL);

	/* 2: the result file says so */
	CHECK_EQ(fkt_only_result(bad, badf, sizeof(badf)), 1);
	sum = fkt_result_summary(badf);
	CHECK(sum != NULL);
	CHECK(!strcmp(fkt_json_str(sum, "status"), "failed"));
	CHECK(strstr(fkt_json_str(sum, "error"), "No space left on device"));
	json_object_put(sum);

	/* 3: report and compare refuse it */
	CHECK_EQ(run(cmd_report, "report", badf, "-o", rep, NULL), 1);
	CHECK(strstr(se, badf) && strstr(se, "a failed run"));
	struct stat st;
	CHECK(stat(rep, &st) != 0);
	CHECK_EQ(run(cmd_compare, "compare", goodf, badf, NULL), 1);
	CHECK(strstr(se, "a failed run"));

	/* --json says it too */
	ret = run(cmd_bench_fsmark, "fsmark", "-d", mnt, "-t", "2", "-n", "40",
		  "-s", "1048576", "-S", "1", "--no-results", "--json", NULL);
	CHECK_EQ(ret, 1);
	struct json_object *j = json_tokener_parse(so);
	CHECK(j && !strcmp(fkt_json_str(j, "status"), "failed"));
	json_object_put(j);

	/* -L 3: no loop after the one that met it; a post-fsync method
	 * (-S 5) stops too */
	ret = run(cmd_bench_fsmark, "fsmark", "-d", mnt, "-t", "2", "-n", "40",
		  "-s", "1048576", "-S", "5", "-L", "3", "--no-results", NULL);
	fprintf(stderr, "--- -S 5 -L 3:\n%s%s---\n", so, se);
	CHECK_EQ(ret, 1);
	nospc = 0;
	for (const char *p = se; (p = strstr(p, "No space left on device"));
	     p++)
		nospc++;
	CHECK(nospc >= 2 && nospc <= 5);
	CHECK(strstr(se, "stopped at the first ENOSPC") != NULL);
	free(so);
	free(se);
	fkt_fs_destroy(&fs);
	return fkt_done();
}
