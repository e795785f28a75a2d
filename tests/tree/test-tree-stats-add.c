// SPDX-License-Identifier: MIT
/*
 * test-tree-stats-add.c - fk_tree_stats_add sums every field of struct
 * fk_tree_stats.  The field table below lists them all; the static
 * assertion on the struct's size fails the build when a field is added
 * to the struct and not to the table (and so, by the table's checks,
 * not to fk_tree_stats_add: the cmd-cp copy of this sum once lost
 * writeback_ns).
 *
 *  - every counter and time: zero plus a distinct value is that value,
 *    twice is double;
 *  - degraded is or-ed (a clean call after a degraded one stays
 *    degraded);
 *  - sync_io/sync_jobs: taken from a batched call, kept over a call that
 *    did not batch (sync_io 0).
 */
#include "fktest.h"
#include "flushkit.h"

#include <stddef.h>
#include <stdint.h>

#define U64(f)                                                                 \
	{                                                                      \
		offsetof(struct fk_tree_stats, f), #f                          \
	}
static const struct {
	size_t off;
	const char *name;
} sums[] = {
    U64(files),
    U64(dirs),
    U64(symlinks),
    U64(specials),
    U64(hardlinks),
    U64(bytes),
    U64(vanished),
    U64(errors),
    U64(warnings),
    U64(fsync_calls),
    U64(dir_fsync_calls),
    U64(syncfs_calls),
    U64(writeback_ranges),
    U64(writeback_bytes),
    U64(walk_ns),
    U64(writeback_ns),
    U64(fsync_ns),
    U64(total_ns),
    U64(skipped),
    U64(skipped_bytes),
    U64(reflinks),
};
#define NSUMS (sizeof(sums) / sizeof(sums[0]))

/* The summed uint64_t fields, degraded and sync_io (int), sync_jobs
 * (uint32_t) and the padding that aligns the next uint64_t: a field
 * added to struct fk_tree_stats changes the size and fails here. */
_Static_assert(sizeof(struct fk_tree_stats) == 21 * sizeof(uint64_t) +
						   2 * sizeof(int) +
						   sizeof(uint32_t) + 4,
	       "struct fk_tree_stats has a field this test (and "
	       "fk_tree_stats_add?) does not know: add it to both");

static uint64_t *field(struct fk_tree_stats *s, size_t i)
{
	return (uint64_t *)((char *)s + sums[i].off);
}

int main(void)
{
	struct fk_tree_stats sum, st, plain;
	memset(&sum, 0, sizeof(sum));
	memset(&st, 0, sizeof(st));
	memset(&plain, 0, sizeof(plain));
	for (size_t i = 0; i < NSUMS; i++)
		*field(&st, i) = 1000003ull * (i + 1);
	st.degraded = 1;
	st.sync_io = FK_SYNC_IO_THREADS;
	st.sync_jobs = 16;

	fk_tree_stats_add(&sum, &st);
	for (size_t i = 0; i < NSUMS; i++)
		if (*field(&sum, i) != 1000003ull * (i + 1)) {
			fprintf(stderr, "%s not summed: %llu\n", sums[i].name,
				(unsigned long long)*field(&sum, i));
			fkt_failures++;
		}
	fk_tree_stats_add(&sum, &st);
	for (size_t i = 0; i < NSUMS; i++)
		if (*field(&sum, i) != 2 * 1000003ull * (i + 1)) {
			fprintf(stderr, "%s not summed twice: %llu\n",
				sums[i].name,
				(unsigned long long)*field(&sum, i));
			fkt_failures++;
		}
	CHECK_EQ(sum.degraded, 1);
	CHECK_EQ(sum.sync_io, FK_SYNC_IO_THREADS);
	CHECK_EQ(sum.sync_jobs, 16);

	/* A call that did not batch and was not degraded changes neither. */
	plain.files = 1;
	fk_tree_stats_add(&sum, &plain);
	CHECK_EQ(sum.files, 2 * 1000003ull + 1);
	CHECK_EQ(sum.degraded, 1);
	CHECK_EQ(sum.sync_io, FK_SYNC_IO_THREADS);
	CHECK_EQ(sum.sync_jobs, 16);

	/* A later batched call's backend wins. */
	plain.sync_io = FK_SYNC_IO_SEQUENTIAL;
	plain.sync_jobs = 1;
	fk_tree_stats_add(&sum, &plain);
	CHECK_EQ(sum.sync_io, FK_SYNC_IO_SEQUENTIAL);
	CHECK_EQ(sum.sync_jobs, 1);
	return fkt_done();
}
