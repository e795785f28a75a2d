// SPDX-License-Identifier: MIT
/*
 * test-tpcb-errors.c - "flushkit bench tpcb" exit statuses on failure,
 * called in-process so faults go through the syscall table:
 *   1. a commit's WAL fdatasync fails with EIO: the run exits 1 and
 *      names the commit failure; after the fault a reopen recovers and
 *      --check passes (nothing half-applied);
 *   2. a transaction that changes only an account balance breaks the
 *      TPC-B sums: --check reports FAILED and exits 1;
 *   3. -i refuses to remove a directory that is not a tpcb data
 *      directory, and leaves it alone.
 */
#include "cli.h"
#include "fktest.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

/* "flushkit bench tpcb --no-results ARGS..." in this process
 * (--no-results: nothing in the cwd); stderr left alone. */
#define run(...)                                                               \
	fkt_run_cmd_err(cmd_bench_tpcb, NULL, "tpcb", "--no-results",          \
			__VA_ARGS__)

int main(void)
{
	char dir[4096], other[4096], file[4200];
	snprintf(dir, sizeof(dir), "%s/data", fkt_tmpdir());
	snprintf(other, sizeof(other), "%s/other", fkt_tmpdir());

	CHECK_EQ(run("-i", "-s", "1", "--data-dir", dir, NULL), 0);
	CHECK_EQ(run("-c", "2", "-t", "20", "--check", "--data-dir", dir,
		     "--log-checkpoints=off", NULL),
		 0);

	/* 1: a WAL sync of a commit fails (the first fdatasync is the
	 * open's): exit 1, the error named; no partial damage. */
	snprintf(file, sizeof(file), "%s/stderr", fkt_tmpdir());
	int saved = dup(2);
	int efd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(saved >= 0 && efd >= 0);
	dup2(efd, 2);
	fkt_trace_start();
	fkt_fault_set("fdatasync", NULL, 2, -EIO);
	int ret =
	    run("-c", "2", "-t", "20", "--data-dir", dir,
		"--wal-sync-method=fdatasync", "--log-checkpoints=off", NULL);
	unsigned fired = fkt_fault_fired();
	fkt_fault_clear();
	fkt_trace_stop();
	dup2(saved, 2);
	close(saved);
	close(efd);
	CHECK_EQ(ret, 1);
	CHECK_EQ(fired, 1);
	char *err = fkt_read_file(file, NULL);
	CHECK(err && strstr(err, ": commit: "));
	if (err)
		fputs(err, stderr);
	free(err);
	CHECK_EQ(run("--check", "--data-dir", dir, NULL), 0);

	/* 2: an unbalanced transaction: the check must fail. */
	struct fk_store_opts o;
	struct fk_store *s;
	struct tpcb_tables t;
	struct fk_batch b;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	CHECK_EQ(tpcb_open(s, &t), 0);
	fk_batch_init(&b);
	CHECK_EQ(
	    fk_batch_add_i64(&b, t.accounts, 7, TPCB_OFF_BALANCE, 42, NULL), 0);
	CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
	fk_batch_release(&b);
	CHECK_EQ(fk_store_close(s), 0);
	CHECK_EQ(run("--check", "--data-dir", dir, NULL), 1);
	/* and a run with --check after it fails too */
	CHECK_EQ(run("-t", "5", "--check", "--data-dir", dir,
		     "--log-checkpoints=off", NULL),
		 1);

	/* 3: a foreign directory is never removed by -i. */
	CHECK_EQ(mkdir(other, 0700), 0);
	snprintf(file, sizeof(file), "%s/keep", other);
	CHECK_EQ(fkt_write_file(file, 100, 1), 0);
	CHECK_EQ(run("-i", "-s", "1", "--data-dir", other, NULL), 1);
	struct stat st;
	CHECK_EQ(stat(file, &st), 0);
	/* ... but -i over the tpcb directory replaces it: sums are 0 again */
	CHECK_EQ(run("-i", "-s", "1", "--data-dir", dir, NULL), 0);
	CHECK_EQ(run("--check", "--data-dir", dir, NULL), 0);

	/* usage errors come back as 2 in-process as well */
	CHECK_EQ(run("-c", "0", NULL), 2);
	CHECK_EQ(run("-T", "1", "-t", "1", NULL), 2);
	return fkt_done();
}
