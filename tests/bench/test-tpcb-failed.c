// SPDX-License-Identifier: MIT
/*
 * test-tpcb-failed.c - a "flushkit bench tpcb" run whose clients die is
 * not a result.  In-process, so the fault goes through the syscall
 * table: a -T 5 -R 100 run whose 40th WAL fdatasync fails with EIO
 * (about 0.4 s in):
 *   1. exits 1; its "duration:" line is the time it ran, with the
 *      requested -T and what stopped it, and pgbench's "Run was
 *      aborted; the above results are incomplete." is on stderr;
 *   2. its result file's summary says "status": "failed" with the error
 *      and the real duration_s;
 *   3. flushkit report refuses it (exit 1, one message naming the file,
 *      no page written); flushkit compare refuses it named, and leaves
 *      it out of a directory (saying so in the side's header);
 * the same with -t 1000: "duration: X s (stopped by ...)" after the
 * transactions line; and a good run's summary says "status": "ok"
 * (report and compare take it).
 */
#include "cli.h"
#include "fktest.h"
#include "sys.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

static char *so, *se; /* what the last run() printed */

/* Run @fn with the NULL-terminated arguments, output into so and se. */
#define run(fn, ...) fkt_run_cmdl(fn, &so, &se, __VA_ARGS__)

static double jnum(struct json_object *o, const char *k)
{
	struct json_object *v;
	return o && json_object_object_get_ex(o, k, &v) && v
		   ? json_object_get_double(v)
		   : -1;
}

int main(void)
{
	const char *t = fkt_tmpdir();
	char data[4096], bad[4096], good[4096], mixed[4096], rep[4096];
	char badf[8192], goodf[8192], path[8192];
	snprintf(data, sizeof(data), "%s/data", t);
	snprintf(bad, sizeof(bad), "%s/bad", t);
	snprintf(good, sizeof(good), "%s/good", t);
	snprintf(mixed, sizeof(mixed), "%s/mixed", t);
	snprintf(rep, sizeof(rep), "%s/report", t);

	CHECK_EQ(run(cmd_bench_tpcb, "tpcb", "-i", "-s", "1", "--data-dir",
		     data, NULL),
		 0);
	/* a good run: status ok */
	CHECK_EQ(run(cmd_bench_tpcb, "tpcb", "-c", "1", "-t", "50",
		     "--data-dir", data, "--results", good,
		     "--log-checkpoints=off", NULL),
		 0);
	CHECK_EQ(fkt_only_result(good, goodf, sizeof(goodf)), 1);
	struct json_object *sum = fkt_result_summary(goodf);
	CHECK(sum && !strcmp(fkt_json_str(sum, "status"), "ok"));
	json_object_put(sum);

	/* 1: the clients die about 0.4 s into a 5 s run */
	fkt_trace_start();
	fkt_fault_set("fdatasync", NULL, 40, -EIO);
	uint64_t t0 = fk_now_ns();
	int ret =
	    run(cmd_bench_tpcb, "tpcb", "-c", "1", "-T", "5", "-R", "100",
		"--data-dir", data, "--results", bad,
		"--wal-sync-method=fdatasync", "--log-checkpoints=off", NULL);
	double ran_s = (double)(fk_now_ns() - t0) / 1e9;
	unsigned fired = fkt_fault_fired();
	fkt_fault_clear();
	fkt_trace_stop();
	fprintf(stderr, "--- the failed run (%.1f s):\n%s%s---\n", ran_s, so,
		se);
	CHECK_EQ(ret, 1);
	CHECK_EQ(fired, 1);
	CHECK(ran_s < 4.5);
	char *d = strstr(so, "duration: ");
	double dur = -1;
	CHECK(d && sscanf(d, "duration: %lf s", &dur) == 1);
	CHECK(dur > 0 && dur < 4.5);
	CHECK(strstr(so, " s (of 5 s requested: stopped by client 0: commit: "
			 "Input/output error)\n"));
	CHECK(!strstr(so, "duration: 5 s\n"));
	CHECK(strstr(se, "Run was aborted; the above results are "
			 "incomplete.\n"));

	/* ... and with -t: the duration line comes after the count */
	fkt_trace_start();
	fkt_fault_set("fdatasync", NULL, 40, -EIO);
	ret = run(cmd_bench_tpcb, "tpcb", "-c", "1", "-t", "1000", "-R", "100",
		  "-r", "--data-dir", data, "--no-results",
		  "--wal-sync-method=fdatasync", "--log-checkpoints=off", NULL);
	fired = fkt_fault_fired();
	fkt_fault_clear();
	fkt_trace_stop();
	CHECK_EQ(ret, 1);
	CHECK_EQ(fired, 1);
	d = strstr(so, "/1000\nduration: ");
	dur = -1;
	CHECK(d && sscanf(d, "/1000\nduration: %lf s", &dur) == 1);
	CHECK(dur > 0 && dur < 4.5);
	CHECK(strstr(so, " s (stopped by client 0: commit: Input/output "
			 "error)\n"));
	CHECK(strstr(se, "Run was aborted; the above results are "
			 "incomplete.\n"));
	/* -r: the failed transaction is counted at the statement it failed
	 * in (END: the commit), pgbench's "failures" column */
	CHECK(strstr(so, "           1  END;\n"));
	CHECK(strstr(so, "           0  BEGIN;\n"));

	/* 2: the result file says it failed, and how long it ran */
	CHECK_EQ(fkt_only_result(bad, badf, sizeof(badf)), 1);
	sum = fkt_result_summary(badf);
	CHECK(sum != NULL);
	CHECK(!strcmp(fkt_json_str(sum, "status"), "failed"));
	CHECK(strstr(fkt_json_str(sum, "error"),
		     "client 0: commit: Input/output "
		     "error"));
	CHECK(jnum(sum, "duration_s") > 0 && jnum(sum, "duration_s") < 4.5);
	CHECK_EQ(jnum(sum, "exit_status"), 1);
	json_object_put(sum);

	/* 3: report refuses it, and writes no page */
	CHECK_EQ(run(cmd_report, "report", badf, "-o", rep, NULL), 1);
	CHECK(strstr(se, badf) && strstr(se, "a failed run"));
	CHECK(strchr(se, '\n') == strrchr(se, '\n')); /* one line */
	struct stat st;
	CHECK(stat(rep, &st) != 0);
	/* ... also next to a good run */
	CHECK_EQ(run(cmd_report, "report", goodf, badf, "-o", rep, NULL), 1);
	CHECK(stat(rep, &st) != 0);
	/* the good run alone makes a page (gnuplot or not) */
	CHECK_EQ(run(cmd_report, "report", goodf, "-o", rep, NULL), 0);
	snprintf(path, sizeof(path), "%s/index.html", rep);
	CHECK_EQ(stat(path, &st), 0);

	/* compare: a failed run named is refused ... */
	CHECK_EQ(run(cmd_compare, "compare", goodf, badf, NULL), 1);
	CHECK(strstr(se, "a failed run"));
	/* ... and left out of a directory, which says so */
	CHECK_EQ(mkdir(mixed, 0755), 0);
	CHECK_EQ(fkt_sh("cp '%s' '%s/good.jsonl' && cp '%s' '%s/bad.jsonl'",
			goodf, mixed, badf, mixed),
		 0);
	CHECK_EQ(run(cmd_compare, "compare", mixed, good, NULL), 0);
	CHECK(strstr(so, "(1 run; 1 failed run left out)\n"));
	CHECK(strstr(se, "a failed run") && strstr(se, "left out"));
	/* a directory of failed runs only has no runs */
	CHECK_EQ(run(cmd_compare, "compare", bad, good, NULL), 1);
	CHECK(strstr(se, "failed runs") || strstr(se, "failed run"));
	free(so);
	free(se);
	return fkt_done();
}
