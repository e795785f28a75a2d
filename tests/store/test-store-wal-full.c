// SPDX-License-Identifier: MIT
/*
 * test-store-wal-full.c - a WAL that fills its file system must leave a
 * store that opens again with every acknowledged commit.
 *
 * A small loop-mounted ext4 (mkfs -m 0: no root reserve) holds the
 * store and one 4 MiB file of the user's; the WAL takes the rest (no
 * ballast filled it), then a ballast file the last blocks the WAL
 * left.  max_wal_size is far above the file system's size and the
 * checkpoint timeout an hour, so no checkpoint recycles the WAL: TPC-B
 * commits go on until a new WAL segment cannot be created (-ENOSPC).
 * Then the store handle is dropped without a shutdown checkpoint (a
 * child process that exits: a crash), or closed (its shutdown
 * checkpoint meets the full file system); in both cases fk_store_open
 * of the same directory, on the same full file system, must succeed
 * (recovery needs no space it cannot get: the end-of-recovery
 * checkpoint is deferred, C8), every acknowledged commit at its
 * history row, the TPC-B sums holding, the store not stopped; commits
 * fail with -ENOSPC while the file system is full; once the user
 * deletes another file of theirs, commits succeed again (the deferred
 * checkpoint completes and the WAL is recycled).  The store is closed
 * and opened once more and checked again.
 *
 * FK_TEST_SEED fixes the transactions drawn.  Needs root and loop
 * devices (else skip).
 */
#include "fkacks.h"
#include "fkloop.h"
#include "fktest.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ACKS 200000

static struct fkt_fs fs;
static char store_dir[700], ackfile[700], other[700], ballast[700];
static unsigned seed;

static struct fkt_acks acks;

/* max_wal_size far above the fs; the log printed. */
static void store_opts(struct fk_store_opts *o)
{
	fkt_full_store_opts(o, 8u << 20, 1);
}

/*
 * Create the store and commit until the WAL fills the file system.
 * Every acknowledged commit goes to @ackfile (outside the small file
 * system) as it is acknowledged.  @crash: _exit without closing (the
 * child of a fork); else close the store and report its result.
 * Returns the last commit's error (expected -ENOSPC).
 */
static int fill_with_wal(int crash)
{
	struct fk_store_opts o;
	struct fk_store *s;
	struct tpcb_tables t;
	struct tpcb_rng rng;
	struct fk_batch b;
	int r;

	store_opts(&o);
	tpcb_rng_seed(&rng, seed);
	fk_batch_init(&b);
	fkt_acks_init(&acks, 1);
	CHECK_EQ(fkt_acks_record(&acks, ackfile), 0);
	/* Another file on the file system, which the user deletes later
	 * to free space. */
	CHECK_EQ(fkt_write_file(other, 4u << 20, seed), 0);
	sync();
	CHECK_EQ(fk_store_open(store_dir, &o, &s), 0);
	if (fkt_failures)
		return -EIO;
	CHECK_EQ(tpcb_create(s, 1, &t, NULL, NULL), 0);
	CHECK_EQ(fk_store_checkpoint(s), 0);
	r = fkt_acks_until_error(&acks, s, &t, &rng, &b, MAX_ACKS);
	printf("%s: %llu commits tried, the last: %s; %.2f MiB free\n",
	       crash ? "crash" : "close",
	       (unsigned long long)acks.next_txid - 1, fk_strerror(r),
	       fkt_fs_free_mib(&fs));
	fkt_acks_release(&acks);
	fk_batch_release(&b);
	/* Another writer takes the last blocks the WAL left: recovery
	 * cannot get even the control file's temporary copy. */
	uint64_t bal = fkt_fs_fill(ballast);
	printf("ballast: %llu KiB; %.2f MiB free\n",
	       (unsigned long long)bal >> 10, fkt_fs_free_mib(&fs));
	if (crash) {
		fflush(NULL);
		_exit(r == -ENOSPC && !fkt_failures ? 0 : 1);
	}
	int rc = fk_store_close(s);
	printf("close: its shutdown checkpoint: %s\n",
	       rc ? fk_strerror(rc) : "ok");
	return r;
}

/* Reopen on the still-full file system, check, commit, close, reopen,
 * check. */
static void reopen_full(const char *how)
{
	struct fk_store_opts o;
	struct fk_store *s = NULL;
	struct tpcb_tables t;
	struct tpcb_rng rng;
	struct fk_batch b;
	char when[64];

	store_opts(&o);
	o.create_mode = FK_STORE_OPEN_EXISTING;
	fkt_acks_init(&acks, 1000000);
	CHECK_EQ(fkt_acks_load(&acks, ackfile), 0);
	CHECK(acks.n > 1000); /* the WAL really filled the fs */
	printf("%s: %zu acknowledged; reopening with %.2f MiB free\n", how,
	       acks.n, fkt_fs_free_mib(&fs));
	fkt_store_log_clear();
	int r = fk_store_open(store_dir, &o, &s);
	printf("%s: fk_store_open on the full fs: %s\n", how,
	       r ? fk_strerror(r) : "ok");
	CHECK_EQ(r, 0);
	if (r)
		return;
	snprintf(when, sizeof(when), "%s: after recovery", how);
	fkt_acks_verify(&acks, s, when);
	/* While the file system stays full a commit either fits the WAL
	 * left or fails with -ENOSPC; the store is not stopped. */
	fk_batch_init(&b);
	tpcb_rng_seed(&rng, seed + 1);
	CHECK_EQ(tpcb_open(s, &t), 0);
	r = fkt_acks_until_error(&acks, s, &t, &rng, &b, 2000);
	printf("%s: commits on the full fs, the last: %s\n", how,
	       fk_strerror(r));
	CHECK_EQ(r, -ENOSPC);
	struct fk_store_stats st;
	fk_store_get_stats(s, &st);
	CHECK_EQ(st.error, 0);
	/* The user frees space: the checkpointer's retry completes the
	 * checkpoint, the WAL is recycled, commits go on (tried for up
	 * to 20 s: the retry comes every second). */
	CHECK_EQ(unlink(other), 0);
	CHECK_EQ(unlink(ballast), 0);
	sync();
	int ok =
	    fkt_acks_through_enospc(&acks, s, &t, &rng, &b, 200, 2000, NULL);
	/* The deferred checkpoint completes on its own (retried every
	 * second; 10 s at most here). */
	for (int i = 0; i < 1000; i++) {
		fk_store_get_stats(s, &st);
		if (st.checkpoints)
			break;
		usleep(10000);
	}
	printf("%s: space freed: %d commits ok, %llu checkpoints\n", how, ok,
	       (unsigned long long)st.checkpoints);
	CHECK_EQ(ok, 200);
	CHECK(st.checkpoints > 0);
	CHECK_EQ(st.error, 0);
	fk_batch_release(&b);
	CHECK_EQ(fk_store_close(s), 0);
	snprintf(when, sizeof(when), "%s: after a clean reopen", how);
	fkt_acks_reopen_check(&acks, store_dir, &o, when);
	fkt_acks_release(&acks);
}

static void run(int crash)
{
	if (fkt_fs_create_or_skip(&fs, "ext4", "ext4", 24ull << 20))
		return;
	snprintf(store_dir, sizeof(store_dir), "%s/store", fs.mnt);
	snprintf(ackfile, sizeof(ackfile), "%s/acks", fkt_tmpdir());
	snprintf(other, sizeof(other), "%s/other", fs.mnt);
	snprintf(ballast, sizeof(ballast), "%s/ballast", fs.mnt);
	if (crash) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0)
			fill_with_wal(1);
		int st = 0;
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	} else {
		CHECK_EQ(fill_with_wal(0), -ENOSPC);
	}
	if (!fkt_failures)
		reopen_full(crash ? "crash" : "close");
	fkt_fs_destroy(&fs);
}

int main(void)
{
	seed = fkt_full_test_start(&fs);
	run(1);
	if (!fkt_failures)
		run(0);
	return fkt_done();
}
