// SPDX-License-Identifier: MIT
/*
 * test-tpcb-wal-fit.c - "flushkit bench tpcb -i" on a file system too
 * small for its WAL says so: on a real 64 MiB ext4 (loop device, mkfs -m
 * 0) the default 16 MiB WAL segments take 48 MiB (the segment being
 * written and two preallocated, FK_STORE_WAL_MIN_SEGMENTS), and scale 1's
 * tables (about 13 MiB) no longer fit.
 *
 * Regression: the load failed with a bare "load 'DIR': No space left on
 * device".  Now stderr must give the file system's free space, what the
 * load needs and what the WAL takes, and the option that fixes it; the
 * option is read from that message and a second -i with it succeeds, as
 * does a run with --check on the result.
 *
 * On a 40 MiB ext4 not even the WAL's three segments fit: the store's
 * creation fails (it used to succeed with one segment, the checkpointer's
 * preallocation failing in the background, and leave a store whose first
 * commit past 16 MiB of WAL failed), saying so the same way, leaving no
 * store behind; the suggested option works there too.
 *
 * Needs root and loop devices (else skip).
 */
#include "cli.h"
#include "fkloop.h"
#include "fktest.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <unistd.h>

static struct fkt_fs fs;

/* Run "flushkit bench tpcb --no-results ARGS..." in this process, its
 * stderr into @errfile. */
#define bench(errfile, ...)                                                    \
	fkt_run_cmd_err(cmd_bench_tpcb, errfile, "tpcb", "--no-results",       \
			__VA_ARGS__)

/* The 40 MiB case: the creation itself fails. */
static void wal_does_not_fit(void)
{
	char dir[800], errfile[700], p[900];
	snprintf(errfile, sizeof(errfile), "%s/stderr40", fkt_tmpdir());
	if (fkt_fs_create_tmp(&fs, "ext4", "fs40", 40ull << 20)) {
		CHECK(0);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/tpcb", fs.mnt);
	int r = bench(errfile, "-i", "-s", "1", "--data-dir", dir, NULL);
	char *err = fkt_read_file(errfile, NULL);
	printf("bench tpcb -i -s 1 on a 40 MiB ext4: exit %d, stderr:\n%s", r,
	       err ? err : "(none)\n");
	CHECK_EQ(r, 1);
	CHECK(err && strstr(err, "cannot create WAL segment: No space left on "
				 "device (it needs 16777216 bytes)"));
	CHECK(err && strstr(err, "MiB free of "));
	CHECK(err &&
	      strstr(err, "the WAL takes at least 3 of them (48.0 MiB)"));
	CHECK(err && strstr(err, "--wal-segment-size=1MB"));
	free(err);
	/* No store left: no catalog, no wal/. */
	snprintf(p, sizeof(p), "%s/catalog", dir);
	CHECK(access(p, F_OK) != 0);
	snprintf(p, sizeof(p), "%s/wal", dir);
	CHECK(access(p, F_OK) != 0);
	r = bench(errfile, "-i", "-s", "1", "--data-dir", dir,
		  "--wal-segment-size=1MB", NULL);
	printf("bench tpcb -i -s 1 --wal-segment-size=1MB: exit %d\n", r);
	CHECK_EQ(r, 0);
	fkt_fs_destroy(&fs);
}

int main(void)
{
	char dir[800], errfile[700], opt[64] = "";
	snprintf(errfile, sizeof(errfile), "%s/stderr", fkt_tmpdir());
	int r = fkt_fs_create_tmp(&fs, "ext4", "fs", 64ull << 20);
	if (r == 77)
		SKIP("needs root, loop devices and mkfs.ext4");
	if (r)
		return 1;
	fkt_fs_guard(&fs);
	snprintf(dir, sizeof(dir), "%s/tpcb", fs.mnt);

	/* The default 16 MiB WAL segments. */
	r = bench(errfile, "-i", "-s", "1", "--data-dir", dir, NULL);
	char *err = fkt_read_file(errfile, NULL);
	printf("bench tpcb -i -s 1 on a 64 MiB ext4: exit %d, stderr:\n%s", r,
	       err ? err : "(none)\n");
	CHECK_EQ(r, 1);
	CHECK(err != NULL);
	if (!err)
		return fkt_done();
	/* Free space, what is needed, what the WAL takes, the option. */
	CHECK(strstr(err, "MiB free of "));
	CHECK(strstr(err, "bulk load of 100000 rows into 'accounts' "
			  "needs "));
	CHECK(strstr(err, "the WAL takes 48.0 MiB (3 segments of 16.0 MiB"));
	CHECK(strstr(err, "the WAL takes at least 3 of them (48.0 MiB)"));
	const char *o = strstr(err, "--wal-segment-size=");
	CHECK(o != NULL);
	if (o) {
		size_t n = strcspn(o, " ()\n");
		if (n < sizeof(opt))
			memcpy(opt, o, n), opt[n] = 0;
	}
	free(err);
	printf("suggested option: '%s'\n", opt);
	CHECK(opt[0] != 0);
	if (!opt[0])
		return fkt_done();

	/* With it, -i fits, and a run with --check passes. */
	r = bench(errfile, "-i", "-s", "1", "--data-dir", dir, opt, NULL);
	err = fkt_read_file(errfile, NULL);
	printf("bench tpcb -i -s 1 %s: exit %d\n", opt, r);
	if (r)
		printf("stderr:\n%s", err ? err : "(none)\n");
	CHECK_EQ(r, 0);
	free(err);
	r = bench(errfile, "-c", "2", "-t", "100", "--check", "--data-dir", dir,
		  NULL);
	err = fkt_read_file(errfile, NULL);
	printf("bench tpcb -c 2 -t 100 --check: exit %d\n", r);
	if (r)
		printf("stderr:\n%s", err ? err : "(none)\n");
	CHECK_EQ(r, 0);
	free(err);
	fkt_fs_destroy(&fs);
	wal_does_not_fit();
	return fkt_done();
}
