/* SPDX-License-Identifier: MIT */
/*
 * fkacks.h - acknowledged TPC-B commits for the page store's full-disk
 * tests (test-store-enospc, test-store-wal-full, test-store-enospc-*):
 * draw a transaction, commit it, remember it once the store
 * acknowledged it (in memory and, for a child that may crash, as it is
 * acknowledged in a file outside the file system under test), and
 * check after a recovery or a reopen that every acknowledged commit is
 * at its history row with its txid, aid and delta, that history has at
 * least as many rows, and that the TPC-B sums hold.
 *
 * The crash torture harness (fktorture.c) keeps its own list: it also
 * checks that no row and no txid is acknowledged twice, across trials.
 *
 * Not thread-safe: one committer per struct fkt_acks.
 */
#ifndef FKACKS_H
#define FKACKS_H

#include "workload.h"

struct fkt_fs;

#include <stdio.h>

#include <stddef.h>
#include <stdint.h>

/* One acknowledged commit, as written to the ack file. */
struct fkt_ack {
	uint64_t txid, hrow;
	int64_t aid, delta;
};

struct fkt_acks {
	struct fkt_ack *v;
	size_t n, cap;
	uint64_t next_txid; /* the txid of the next transaction */
	int fd;		    /* the ack file, or -1 */
};

/* Start an empty list; txids from @first_txid; no ack file. */
void fkt_acks_init(struct fkt_acks *a, uint64_t first_txid);
void fkt_acks_release(struct fkt_acks *a);
/* Write every acknowledged commit from now on to @path too (created
 * 0600, truncated), each as it is acknowledged.  0 or -errno. */
int fkt_acks_record(struct fkt_acks *a, const char *path);
/* Replace the list with the acks in @path (an ack file a child wrote).
 * 0 or -errno. */
int fkt_acks_load(struct fkt_acks *a, const char *path);

/* Draw one transaction from @rng, commit it; an acknowledged one is
 * remembered.  Returns tpcb_txn_commit's result. */
int fkt_acks_txn(struct fkt_acks *a, struct fk_store *s,
		 const struct tpcb_tables *t, struct tpcb_rng *rng,
		 struct fk_batch *b);

/* CHECK that every acknowledged commit is at its history row, that
 * history has at least as many rows, and that the sums hold; prints a
 * line starting with @when (and the first five missing commits). */
void fkt_acks_verify(const struct fkt_acks *a, struct fk_store *s,
		     const char *when);

/*
 * The full-disk tests' store: created if missing, @shared_buffers_bytes
 * of buffers, 1 MiB segments, FKT_FULL_WAL_SEG WAL segments, a
 * max_wal_size (1 GiB) far above the small file systems and a one-hour
 * checkpoint timeout (no checkpoint comes by volume or time), its log
 * kept by fkt_store_log (and printed when @print).
 */
#define FKT_FULL_WAL_SEG (256u << 10)
void fkt_full_store_opts(struct fk_store_opts *o, uint64_t shared_buffers_bytes,
			 int print);

/*
 * The start of a full-disk test's main: stdout line-buffered, the seed
 * of its draws (fkt_test_seed: printed), SKIP (exit 77) if not root,
 * @fs guarded (fkt_fs_guard).  Returns the seed.
 */
unsigned fkt_full_test_start(struct fkt_fs *fs);

/* Commit (fkt_acks_txn) until one fails, at most @max tries.  Returns
 * the failed commit's result, 0 if all @max were acknowledged. */
int fkt_acks_until_error(struct fkt_acks *a, struct fk_store *s,
			 const struct tpcb_tables *t, struct tpcb_rng *rng,
			 struct fk_batch *b, int max);

/* Commit until @want are acknowledged, a commit that fails with -ENOSPC
 * retried after 10 ms, at most @max_waits times (*@waits, if not NULL,
 * gets how many); any other error is a CHECK failure and ends it.
 * Returns how many were acknowledged. */
int fkt_acks_through_enospc(struct fkt_acks *a, struct fk_store *s,
			    const struct tpcb_tables *t, struct tpcb_rng *rng,
			    struct fk_batch *b, int want, int max_waits,
			    int *waits);

/*
 * A power cut under the store *@s (NULL: none open) on @fs: CHECK that
 * FS_IOC_GOINGDOWN (no log flush) works, that the store's close then
 * fails (its shutdown checkpoint meets the down file system), that @fs
 * unmounts and mounts again (journal replay).  *@s is NULL after.
 */
void fkt_acks_power_cut(struct fkt_fs *fs, struct fk_store **s);

/* CHECK that the store at @dir opens with @o, then fkt_acks_verify it
 * (@when).  Returns the open store (the caller closes it) or NULL. */
struct fk_store *fkt_acks_open_verify(const struct fkt_acks *a, const char *dir,
				      const struct fk_store_opts *o,
				      const char *when);
/* fkt_acks_open_verify, then CHECK that the store closes cleanly. */
void fkt_acks_reopen_check(const struct fkt_acks *a, const char *dir,
			   const struct fk_store_opts *o, const char *when);

#endif
