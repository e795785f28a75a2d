// SPDX-License-Identifier: MIT
/*
 * test-store-enospc-wal-room.c - after the WAL filled its file system,
 * space the user frees is not taken by the WAL again: the store goes on
 * in the WAL it has (checkpoints recycle its segments), so the next
 * ENOSPC does not come as soon as the WAL has eaten the freed space
 * (and then for good: the checkpoint that could recycle the WAL finds
 * no block for the pages it must write).
 *
 * A small loop-mounted ext4 (mkfs -m 0) holds a TPC-B store whose
 * max_wal_size is far above the file system (no checkpoint by WAL
 * volume), checkpoint timeout an hour, and a 4 MiB file of the user's.
 * Commits go on until the WAL fills the file system (-ENOSPC: the
 * first, expected).  The user deletes the file.  Then ROUNDS x the
 * WAL's size at that ENOSPC more WAL is written by commits (each
 * commit that fails with -ENOSPC is retried after 10 ms, at most
 * MAX_WAIT_S seconds in all): none may fail, and the WAL directory
 * never takes more than it did at the ENOSPC (plus one segment; two in
 * the sanitizer builds, whose checkpoints lag).
 * Every acknowledged commit is checked after a power cut (fkloop,
 * FS_IOC_GOINGDOWN) and recovery, and after a clean reopen.
 *
 * Needs root and loop devices (else skip).  FK_TEST_SEED fixes the
 * transactions drawn.
 */
#include "fkacks.h"
#include "fkloop.h"
#include "fktest.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#define WAL_SEG FKT_FULL_WAL_SEG
#define ROUNDS 2
#define MAX_WAIT_S 20

static struct fkt_fs fs;
static char store_dir[700], other[700];
static unsigned seed;

/* max_wal_size far above the fs; the log kept, not printed. */
static void store_opts(struct fk_store_opts *o)
{
	fkt_full_store_opts(o, 8u << 20, 0);
}

/* The WAL directory's size in segments. */
static unsigned wal_segments(void)
{
	char path[800];
	snprintf(path, sizeof(path), "%s/wal", store_dir);
	DIR *d = opendir(path);
	unsigned n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)))
		n += strlen(de->d_name) == 16;
	if (d)
		closedir(d);
	return n;
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

	store_opts(&o);
	tpcb_rng_seed(&rng, seed);
	fk_batch_init(&b);
	fkt_acks_init(&acks, 1);
	CHECK_EQ(fkt_write_file(other, 4u << 20, seed), 0);
	CHECK_EQ(fk_store_open(store_dir, &o, &s), 0);
	if (!s)
		return;
	CHECK_EQ(tpcb_create(s, 1, &t, NULL, NULL), 0);
	CHECK_EQ(fk_store_checkpoint(s), 0);

	/* The WAL fills the file system. */
	r = fkt_acks_until_error(&acks, s, &t, &rng, &b, 200000);
	CHECK_EQ(r, -ENOSPC);
	fk_store_get_stats(s, &st);
	unsigned full_segs = wal_segments();
	uint64_t full_wal = st.wal_bytes;
	printf("WAL filled the fs after %zu commits: %u segments (%.1f MiB), "
	       "%.2f MiB free\n",
	       acks.n, full_segs, full_segs * (WAL_SEG / 1048576.0),
	       fkt_fs_free_mib(&fs));
	CHECK(acks.n > 1000);

	/* The user frees 4 MiB; commits go on. */
	CHECK_EQ(fkt_fs_unfill(&fs, other), 0);
	printf("freed 4 MiB: %.2f MiB free\n", fkt_fs_free_mib(&fs));
	uint64_t target = full_wal + ROUNDS * (uint64_t)full_segs * WAL_SEG;
	uint64_t t0 = fk_now_ns(), waited_ns = 0;
	unsigned nospc = 0, first_nospc_at = 0, max_segs = 0;
	size_t n0 = acks.n;
	for (;;) {
		fk_store_get_stats(s, &st);
		if (st.wal_bytes >= target || st.error)
			break;
		r = fkt_acks_txn(&acks, s, &t, &rng, &b);
		unsigned segs = (acks.n & 255) ? 0 : wal_segments();
		if (segs > max_segs)
			max_segs = segs;
		if (r == -ENOSPC) {
			if (!nospc++)
				first_nospc_at = (unsigned)(acks.n - n0);
			usleep(10000);
			waited_ns += 10000000ull;
			if (waited_ns >= MAX_WAIT_S * 1000000000ull)
				break;
			continue;
		}
		CHECK_EQ(r, 0);
		if (r)
			break;
	}
	fk_store_get_stats(s, &st);
	unsigned segs = wal_segments();
	if (segs > max_segs)
		max_segs = segs;
	printf("after the space was freed: %zu commits ok, %u failed with "
	       "ENOSPC (the first after %u ok), %.1f of %.1f MiB of WAL "
	       "written in %.1f s; the WAL took at most %u segments "
	       "(%u at the first ENOSPC); %.2f MiB free; %llu checkpoints\n",
	       acks.n - n0, nospc, first_nospc_at,
	       (double)(st.wal_bytes - full_wal) / 1048576.0,
	       (double)(target - full_wal) / 1048576.0,
	       (double)(fk_now_ns() - t0) / 1e9, max_segs, full_segs,
	       fkt_fs_free_mib(&fs), (unsigned long long)st.checkpoints);
	CHECK_EQ(nospc, 0);
	char *text = fkt_store_log_copy();
	const char *room = text ? strstr(text, "the WAL stays within") : NULL;
	printf("store: %.*s\n", room ? (int)strcspn(room, "\n") : 4,
	       room ? room : "none");
	CHECK(room != NULL);
	free(text);
	CHECK(st.wal_bytes >= target);
	/* The WAL did not take the freed space (about 15 segments).  One
	 * segment more than at the ENOSPC is the preallocated next one; in
	 * the sanitizer builds, where a checkpoint runs several times
	 * slower than the commits that fill the WAL meanwhile, one more
	 * (ASan run of CI, 2026-12-03: 25 against 23). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	CHECK(max_segs <= full_segs + 2);
#else
	CHECK(max_segs <= full_segs + 1);
#endif
	CHECK_EQ(st.error, 0);

	/* Every acknowledged commit survives a power cut. */
	fkt_acks_power_cut(&fs, &s);
	o.create_mode = FK_STORE_OPEN_EXISTING;
	fkt_acks_reopen_check(&acks, store_dir, &o, "after a power cut");
	fkt_acks_reopen_check(&acks, store_dir, &o, "after a clean reopen");
	fk_batch_release(&b);
	fkt_acks_release(&acks);
}

int main(void)
{
	seed = fkt_full_test_start(&fs);
	if (fkt_fs_create_or_skip(&fs, "ext4", "ext4", 24ull << 20))
		return fkt_done();
	snprintf(store_dir, sizeof(store_dir), "%s/store", fs.mnt);
	snprintf(other, sizeof(other), "%s/other", fs.mnt);
	run();
	if (fkt_failures)
		fprintf(stderr, "store log:\n%s", fkt_store_log_text());
	fkt_fs_destroy(&fs);
	return fkt_done();
}
