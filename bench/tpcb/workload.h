/* SPDX-License-Identifier: MIT */
/*
 * workload.h - the TPC-B (sort of) workload on the page store, shared by
 * "flushkit bench tpcb" (cmd-bench-tpcb.c) and the crash test
 * (tests/bench/test-tpcb-crash.c).
 *
 * The schema is pgbench's: branches (1 x scale), tellers (10 x scale),
 * accounts (100,000 x scale), each a table of 100-byte rows, and history,
 * append-only.  Row N (0-based) of branches/tellers/accounts holds the
 * entity with id N + 1.  Integers are little-endian int64.
 *
 *   branches/tellers/accounts: id @0, balance @8, bid @16, filler to 100
 *   history: tid @0, bid @8, aid @16, delta @24, mtime_us @32, txid @40,
 *            filler to 64
 *
 * One transaction (pgbench's builtin "TPC-B (sort of)") is one write
 * batch: add delta to the account balance (the new balance is the
 * "read"), to the teller and to the branch, append a history row; commit.
 *
 * Interface routines:
 *   tpcb_create()      create the four tables and load them (pgbench -i)
 *   tpcb_open()        look the tables up and derive the scale
 *   tpcb_rng_*()       a per-client random number generator
 *   tpcb_txn_draw()    draw aid, tid, bid, delta
 *   tpcb_txn_commit()  run one transaction
 *   tpcb_script_*()    pgbench's builtin scripts, step by step
 *   tpcb_sums()        the consistency sums (pgbench's TPC-B conditions)
 *   tpcb_datadir_*()   mark a tpcb data directory, safely reset one
 */
#ifndef FK_CLI_TPCB_H
#define FK_CLI_TPCB_H

#include <stdint.h>

#include "flushkit.h"

#define TPCB_ROW_BYTES 100u
#define TPCB_HISTORY_ROW_BYTES 64u
#define TPCB_NBRANCHES 1u
#define TPCB_NTELLERS 10u
#define TPCB_NACCOUNTS 100000u
#define TPCB_MAX_DELTA 5000

/* Offsets in branch/teller/account rows. */
enum {
	TPCB_OFF_ID = 0,
	TPCB_OFF_BALANCE = 8,
	TPCB_OFF_BID = 16,
};

/* Offsets in history rows. */
enum {
	TPCB_H_TID = 0,
	TPCB_H_BID = 8,
	TPCB_H_AID = 16,
	TPCB_H_DELTA = 24,
	TPCB_H_MTIME = 32,
	TPCB_H_TXID = 40,
};

/* The marker file that makes a directory a tpcb data directory. */
#define TPCB_MARKER "FLUSHKIT_TPCB"

struct tpcb_tables {
	uint32_t branches, tellers, accounts, history;
	uint64_t scale;
};

/*
 * Progress of the account load: @done of @total rows.  Called from the
 * loading thread every 100,000 rows and at the end.
 */
typedef void (*tpcb_load_progress_fn)(void *arg, uint64_t done, uint64_t total);

/*
 * Create branches, tellers, accounts and history in the (new, empty)
 * store @s and bulk-load the first three for @scale.  Returns 0 or the
 * store's -errno (-EEXIST if a table exists).
 */
int tpcb_create(struct fk_store *s, uint64_t scale, struct tpcb_tables *t,
		tpcb_load_progress_fn progress, void *progress_arg);

/* Look the tables up, check their row counts agree, set t->scale.
 * Returns 0, -ENOENT (not initialized) or -FK_ECORRUPT (sizes disagree). */
int tpcb_open(struct fk_store *s, struct tpcb_tables *t);

/* xoshiro256** seeded with splitmix64. */
struct tpcb_rng {
	uint64_t s[4];
};

void tpcb_rng_seed(struct tpcb_rng *r, uint64_t seed);
uint64_t tpcb_rng_next(struct tpcb_rng *r);
/* Uniform in [lo, hi]. */
int64_t tpcb_rng_range(struct tpcb_rng *r, int64_t lo, int64_t hi);
/* Uniform in (0, 1]. */
double tpcb_rng_double(struct tpcb_rng *r);

struct tpcb_txn {
	int64_t aid, tid, bid, delta; /* drawn */
	uint64_t txid;		      /* caller's unique id, in history */
	int64_t abalance;	      /* after commit: the account balance */
	uint64_t hrow;		      /* after commit: the history row */
	uint64_t lsn;		      /* after commit: the commit's end LSN */
	int step; /* tpcb_script_run: the step it failed in (or the last) */
};

void tpcb_txn_draw(const struct tpcb_tables *t, struct tpcb_rng *r,
		   struct tpcb_txn *x);
/* Run @x as one batch (@b is the caller's, reset here) and commit.
 * Returns 0 or the store's error. */
int tpcb_txn_commit(struct fk_store *s, const struct tpcb_tables *t,
		    struct fk_batch *b, struct tpcb_txn *x);

struct tpcb_sums {
	int64_t accounts, tellers, branches, history;
	uint64_t history_rows;
};

/* Read every row and sum the balances and history deltas.  Returns 0 or
 * the store's error. */
int tpcb_sums(struct fk_store *s, const struct tpcb_tables *t,
	      struct tpcb_sums *sums);
/* 1 if the four sums are equal. */
int tpcb_sums_ok(const struct tpcb_sums *sums);

/* Read and decode history row @row.  Returns 0 or the store's error. */
int tpcb_history_read(struct fk_store *s, const struct tpcb_tables *t,
		      uint64_t row, struct tpcb_txn *x);

/* Write the marker file into @dir (created if missing, mode 0700).
 * Returns 0 or -errno. */
int tpcb_datadir_mark(const char *dir, uint64_t scale);
/*
 * Make @dir ready for a new store: remove the store in it
 * (fk_store_destroy: under the store's lock, so -EBUSY while a run has
 * it open, nothing removed) if @dir has the marker file; refuse
 * (-EEXIST) a non-empty directory without it.  The directory, its
 * marker and lock file stay.  Returns 0 (also when @dir does not exist)
 * or -errno.
 */
int tpcb_datadir_reset(const char *dir);

/*
 * pgbench's builtin scripts on the store.  Each SQL statement of the
 * script is one step, timed on its own for -r:
 *   \set x random(...)  a draw from the client's generator
 *   BEGIN;              fk_batch_reset
 *   UPDATE t SET ...    fk_batch_add_i64 on the row (queued: its page
 *                       work happens at END)
 *   SELECT abalance     fk_store_read of the account row (the balance
 *                       committed before this transaction's batch)
 *   INSERT history      fk_batch_append
 *   END;                fk_store_commit (the WAL write, the commit's
 *                       flush, the buffer updates)
 * select-only has no BEGIN/END (pgbench's one statement in autocommit):
 * its read is the whole transaction.
 */
enum tpcb_script_id {
	TPCB_SCRIPT_TPCB_LIKE,
	TPCB_SCRIPT_SIMPLE_UPDATE,
	TPCB_SCRIPT_SELECT_ONLY,
	TPCB_NR_SCRIPTS,
};

#define TPCB_MAX_STEPS 11

struct tpcb_script {
	const char *name; /* "tpcb-like", as -b takes it */
	const char *desc; /* "<builtin: TPC-B (sort of)>" */
	int nr_steps;
	const char *const *steps; /* the SQL text of each step */
};

extern const struct tpcb_script tpcb_scripts[TPCB_NR_SCRIPTS];

/* The builtin script @name names (a unique prefix, as pgbench's
 * findBuiltin).  Returns its id, -ENOENT (none) or -EEXIST (ambiguous). */
int tpcb_script_find(const char *name);

/*
 * Run one transaction of script @id: draw with @r (in the script's
 * order), fill @x, and if @step_ns is not NULL add each step's time
 * (CLOCK_MONOTONIC ns) to step_ns[step].  @b is the caller's batch.
 * Returns 0 or the store's error (x->step: the step that failed).
 */
int tpcb_script_run(struct fk_store *s, const struct tpcb_tables *t,
		    struct fk_batch *b, int id, struct tpcb_rng *r,
		    struct tpcb_txn *x, uint64_t *step_ns);

/* Little-endian int64 helpers. */
void tpcb_put_i64(void *p, int64_t v);
int64_t tpcb_get_i64(const void *p);

#endif
