/* SPDX-License-Identifier: MIT */
/*
 * fuzz-store.h - the small prepared store that fuzz-recovery.c writes
 * its inputs into, and that tests/tools/fk-fuzz-seeds.c takes its seed
 * records from: the same recipe, so seeds name tables and rows that
 * exist.
 *
 * Recipe: 64 KiB WAL segments, 1 MiB of buffers; table 1 "acc" (64-byte
 * rows, 300 rows bulk-loaded), table 2 "hist" (48-byte rows, appended);
 * FUZZ_STORE_COMMITS commits of the TPC-B-like shape (add to an account,
 * set bytes in it, append a history row); a clean close.
 */
#ifndef FUZZ_STORE_H
#define FUZZ_STORE_H

#include "store-int.h"

#include <string.h>

#define FUZZ_WALSEG 65536u
#define FUZZ_ACC_ROWS 300u
#define FUZZ_STORE_COMMITS 12

static inline struct fk_store_opts fuzz_store_opts(void)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 1 << 20;
	o.wal_segment_bytes = FUZZ_WALSEG;
	o.checkpoint_timeout_ms = 3600000;
	o.sync_io = FK_SYNC_IO_SEQUENTIAL;
	return o;
}

static inline void fuzz_store_fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	memset(row, 0, 64);
	memcpy((uint8_t *)row + 8, &rowno, 8);
}

/* Commits @i .. @i + @n - 1 of the workload.  0 or the first error. */
static inline int fuzz_store_work(struct fk_store *s, uint64_t i, int n)
{
	struct fk_batch b;
	int r = 0;
	fk_batch_init(&b);
	for (uint64_t k = i; k < i + (uint64_t)n && !r; k++) {
		uint8_t h[48] = {0};
		memcpy(h, &k, 8);
		fk_batch_reset(&b);
		fk_batch_add_i64(&b, 1, k * 37 % FUZZ_ACC_ROWS, 0, 5, NULL);
		fk_batch_set(&b, 1, k * 37 % FUZZ_ACC_ROWS, 16, "fuzz", 4);
		fk_batch_append_copy(&b, 2, h, sizeof(h), NULL);
		r = fk_store_commit(s, &b, NULL);
	}
	fk_batch_release(&b);
	return r;
}

/* Create the prepared store in @dir (which must not hold one).  0 or
 * the first error. */
static inline int fuzz_store_build(const char *dir)
{
	struct fk_store_opts o = fuzz_store_opts();
	struct fk_store *s;
	uint32_t acc, hist;
	int r = fk_store_open(dir, &o, &s);
	if (r)
		return r;
	if (!(r = fk_store_create_table(s, "acc", 64, &acc)) &&
	    !(r = fk_store_create_table(s, "hist", 48, &hist)) &&
	    !(r = fk_store_bulk_load(s, acc, FUZZ_ACC_ROWS, fuzz_store_fill,
				     NULL)))
		r = fuzz_store_work(s, 0, FUZZ_STORE_COMMITS);
	int rc = fk_store_close(s);
	return r ? r : rc;
}

#endif
