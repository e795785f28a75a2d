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

#endif
