// SPDX-License-Identifier: MIT
/*
 * test-store-enospc-log.c - a store left open on a file system that
 * stays full does not fill its log: the checkpointer retries a failed
 * checkpoint every second (C8) and its preallocation asks for a WAL
 * segment every second, but the log has the first failure of each in
 * full (with the path and the errno), the repeats only counted
 * (condensed lines, at most one a minute: none in these seconds), and,
 * once space is freed, one line saying the checkpoint (and the segment
 * creation) works again after N failures.
 *
 * A small loop-mounted ext4 (mkfs -m 0), a TPC-B store (bench/tpcb)
 * with dirty history pages in blocks not yet allocated; the file system
 * filled by a ballast file (fkt_fs_fill); commits until one fails with
 * -ENOSPC (it asks for a checkpoint at once, which fails: the pages
 * need blocks, C8); the store is kept open FAIL_SECONDS while the
 * checkpointer retries.  Then the ballast is deleted and the test waits
 * for the retry that succeeds.  Every acknowledged commit is checked
 * after a clean close and reopen.
 *
 * Needs root and loop devices (else skip).  FK_TEST_SEED fixes the
 * transactions drawn.
 */
#include "fkacks.h"
#include "fkloop.h"
#include "fktest.h"
#include "workload.h"

#include <errno.h>
#include <signal.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#define FAIL_SECONDS 5

static struct fkt_fs fs;
static char store_dir[700], ballast[700];
static unsigned seed;

/* Lines of the kept store log that contain @s (under its lock: the
 * checkpointer logs meanwhile). */
static int log_lines(const char *s)
{
	return fkt_store_log_count(s);
}

static void run(void)
{
	struct fk_store_opts o;
	struct fk_store *s = NULL;
	struct tpcb_tables t;
	struct tpcb_rng rng;
	struct fk_batch b;
	struct fk_store_stats st;
	struct fkt_acks acks;
	int r;

	fkt_full_store_opts(&o, 32u << 20, 1);
	tpcb_rng_seed(&rng, seed);
	fk_batch_init(&b);
	fkt_acks_init(&acks, 1);
	CHECK_EQ(fk_store_open(store_dir, &o, &s), 0);
	if (!s)
		return;
	CHECK_EQ(tpcb_create(s, 1, &t, NULL, NULL), 0);
	CHECK_EQ(fk_store_checkpoint(s), 0);

	fkt_store_log_clear();
	uint64_t bal = fkt_fs_fill(ballast);
	CHECK(bal > 0);
	r = fkt_acks_until_error(&acks, s, &t, &rng, &b, 20000);
	printf("ballast %llu KiB; commits until: %s\n",
	       (unsigned long long)bal >> 10, fk_strerror(r));
	CHECK_EQ(r, -ENOSPC);
	/* The checkpointer retries every second while the file system
	 * stays full. */
	sleep(FAIL_SECONDS);
	fk_store_get_stats(s, &st);
	CHECK_EQ(st.error, 0);
	int failed = log_lines("FAILED: No space left on device");
	int segfail = log_lines("cannot create WAL segment");
	int condensed = log_lines(" more time");
	printf("after %d s full: %d checkpoint failure lines, %d segment "
	       "failure lines, %d condensed lines\n",
	       FAIL_SECONDS, failed, segfail, condensed);
	/* The first failure in full, naming the path; then only counted. */
	CHECK_EQ(failed, 1);
	CHECK(log_lines("FAILED: No space left on device (writing block") +
		  log_lines("FAILED: No space left on device (creating wal/") +
		  log_lines("FAILED: No space left on device (replacing "
			    "control") ==
	      1);
	CHECK(segfail <= 1);
	CHECK_EQ(condensed, 0);

	/* Space freed: the next retry completes, and says so once. */
	CHECK_EQ(fkt_fs_unfill(&fs, ballast), 0);
	int again = 0;
	for (int i = 0; i < 1000 && !again; i++) {
		again = log_lines("checkpoint ok again after ");
		if (!again)
			usleep(10000);
	}
	printf("space freed: %d 'ok again' lines\n", again);
	CHECK_EQ(again, 1);
	/* Three or more failures (one a second): the count is given. */
	char *text = fkt_store_log_copy();
	const char *p =
	    text ? strstr(text, "checkpoint ok again after ") : NULL;
	unsigned long n =
	    p ? strtoul(p + strlen("checkpoint ok again after "), NULL, 10) : 0;
	free(text);
	printf("the checkpoint failed %lu times in a row\n", n);
	CHECK(n >= FAIL_SECONDS - 2);
	CHECK_EQ(log_lines("FAILED: No space left on device"), 1);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(fkt_acks_txn(&acks, s, &t, &rng, &b), 0);
	fk_store_get_stats(s, &st);
	CHECK_EQ(st.error, 0);
	fk_batch_release(&b);
	CHECK_EQ(fk_store_close(s), 0);
	o.create_mode = FK_STORE_OPEN_EXISTING;
	fkt_acks_reopen_check(&acks, store_dir, &o, "after a clean reopen");
	fkt_acks_release(&acks);
}

int main(void)
{
	seed = fkt_full_test_start(&fs);
	if (fkt_fs_create_or_skip(&fs, "ext4", "ext4", 48ull << 20))
		return fkt_done();
	snprintf(store_dir, sizeof(store_dir), "%s/store", fs.mnt);
	snprintf(ballast, sizeof(ballast), "%s/ballast", fs.mnt);
	run();
	fkt_fs_destroy(&fs);
	return fkt_done();
}
