// SPDX-License-Identifier: MIT
/*
 * test-fsyncq-batch.c - a round of the fsync request queue in batches
 * (fk_fsyncq_begin / _take / _complete / _end):
 *  - each pending file is taken once, in increasing id order, over
 *    takes of any size; completed ones leave the pending set;
 *  - one round at a time (-EBUSY, also against fk_fsyncq_process);
 *    take outside a round and completing an id not in flight: -EINVAL;
 *  - arrivals during the round wait for the next; an in-flight id
 *    registered again stays pending after success; an in-flight id
 *    forgotten has its error ignored (-ENOENT counts as missing);
 *  - one failure among a batch: returned, sticky (take, begin and
 *    process return it, nothing more is handed out), the failed file
 *    stays pending, the others of the batch are done;
 *  - ids taken but not completed at end stay pending for the next round.
 */
#include "fktest.h"
#include "flushkit.h"

#include <errno.h>

static struct fk_fsyncq *mkq(uint64_t first, uint64_t n)
{
	struct fk_fsyncq *q = NULL;
	CHECK_EQ(fk_fsyncq_create(1024, 1, &q), 0);
	if (!q)
		exit(1);
	/* Registered in reverse, some twice. */
	for (uint64_t i = n; i-- > 0;) {
		CHECK_EQ(fk_fsyncq_register(q, first + i), 0);
		if (i % 3 == 0)
			CHECK_EQ(fk_fsyncq_register(q, first + i), 0);
	}
	return q;
}

static struct fk_fsyncq_stats stats(struct fk_fsyncq *q)
{
	struct fk_fsyncq_stats st;
	fk_fsyncq_get_stats(q, &st);
	return st;
}

static int nop_sync(void *arg, uint64_t id)
{
	(void)arg;
	(void)id;
	return 0;
}

static void test_once_in_order(void)
{
	struct fk_fsyncq *q = mkq(100, 50);
	uint64_t ids[64], seen[64];
	int res[64] = {0};
	size_t nseen = 0;
	CHECK_EQ(fk_fsyncq_take(q, ids, 4), -EINVAL); /* no round */
	CHECK_EQ(fk_fsyncq_begin(q), 50);
	CHECK_EQ(fk_fsyncq_begin(q), -EBUSY);
	CHECK_EQ(fk_fsyncq_process(q, nop_sync, NULL, NULL, NULL), -EBUSY);
	size_t sizes[] = {1, 7, 20, 64, 64};
	for (size_t k = 0; k < 5; k++) {
		long n = fk_fsyncq_take(q, ids, sizes[k]);
		CHECK(n >= 0 && (size_t)n <= sizes[k]);
		for (long i = 0; i < n && nseen < 64; i++)
			seen[nseen++] = ids[i];
		if (n > 0)
			CHECK_EQ(fk_fsyncq_complete(q, ids, res, (size_t)n), 0);
	}
	CHECK_EQ(nseen, 50);
	for (size_t i = 0; i < nseen; i++)
		CHECK_EQ(seen[i], 100 + i);
	/* Completing twice, or an id never taken: -EINVAL. */
	CHECK_EQ(fk_fsyncq_complete(q, seen, res, 1), -EINVAL);
	fk_fsyncq_end(q);
	CHECK_EQ(fk_fsyncq_pending(q), 0);
	CHECK_EQ(stats(q).synced, 50);
	/* A new round is possible, and empty. */
	CHECK_EQ(fk_fsyncq_begin(q), 0);
	CHECK_EQ(fk_fsyncq_take(q, ids, 64), 0);
	fk_fsyncq_end(q);
	fk_fsyncq_destroy(q);
}

static void test_arrivals(void)
{
	struct fk_fsyncq *q = mkq(1, 10);
	uint64_t ids[16];
	int res[16] = {0};
	CHECK_EQ(fk_fsyncq_begin(q), 10);
	CHECK_EQ(fk_fsyncq_take(q, ids, 4), 4); /* 1..4 */
	/* While 1..4 are in flight: 2 registered again, 3 forgotten (and
	 * fails), a new file 50 and the not-yet-taken 7 again. */
	CHECK_EQ(fk_fsyncq_register(q, 2), 0);
	CHECK_EQ(fk_fsyncq_register(q, 50), 0);
	CHECK_EQ(fk_fsyncq_register(q, 7), 0);
	CHECK(fk_fsyncq_absorb(q) >= 1);
	fk_fsyncq_forget(q, 3);
	fk_fsyncq_forget(q, 4); /* then unlinked */
	res[2] = -EIO;		/* id 3: ignored */
	res[3] = -ENOENT;	/* id 4: gone, forgotten: moot, "missing" */
	CHECK_EQ(fk_fsyncq_complete(q, ids, res, 4), 0);
	res[2] = res[3] = 0;
	long n = fk_fsyncq_take(q, ids, 16);
	CHECK_EQ(n, 6); /* 5..10, not 50 */
	for (long i = 0; i < n; i++)
		CHECK_EQ(ids[i], 5 + (uint64_t)i);
	CHECK_EQ(fk_fsyncq_complete(q, ids, res, (size_t)n), 0);
	CHECK_EQ(fk_fsyncq_take(q, ids, 16), 0);
	fk_fsyncq_end(q);
	struct fk_fsyncq_stats st = stats(q);
	CHECK_EQ(st.error, 0);
	CHECK_EQ(st.missing, 1);
	CHECK_EQ(st.synced, 8);		   /* 1, 2, 5..10 */
	CHECK_EQ(fk_fsyncq_pending(q), 2); /* 2 (redirtied), 50 */
	CHECK_EQ(fk_fsyncq_begin(q), 2);
	CHECK_EQ(fk_fsyncq_take(q, ids, 16), 2);
	CHECK_EQ(ids[0], 2);
	CHECK_EQ(ids[1], 50);
	fk_fsyncq_end(q);
	/* Taken, not completed: still pending. */
	CHECK_EQ(fk_fsyncq_pending(q), 2);
	fk_fsyncq_destroy(q);
}

static int count_sync(void *arg, uint64_t id)
{
	(void)id;
	(*(int *)arg)++;
	return 0;
}

static void test_sticky(void)
{
	struct fk_fsyncq *q = mkq(1, 20);
	uint64_t ids[32];
	int res[32] = {0};
	CHECK_EQ(fk_fsyncq_begin(q), 20);
	CHECK_EQ(fk_fsyncq_take(q, ids, 8), 8);
	res[3] = -EIO;	  /* id 4 */
	res[6] = -ENOSPC; /* id 7: a later failure in the same batch */
	CHECK_EQ(fk_fsyncq_complete(q, ids, res, 8), -EIO);
	CHECK_EQ(fk_fsyncq_take(q, ids, 8), -EIO);
	fk_fsyncq_end(q);
	struct fk_fsyncq_stats st = stats(q);
	CHECK_EQ(st.error, -EIO);
	CHECK_EQ(st.synced, 6);
	/* 4 and 7 failed, 9..20 never taken: all pending. */
	CHECK_EQ(fk_fsyncq_pending(q), 14);
	CHECK_EQ(fk_fsyncq_begin(q), -EIO);
	int calls = 0;
	CHECK_EQ(fk_fsyncq_process(q, count_sync, &calls, NULL, NULL), -EIO);
	CHECK_EQ(calls, 0);
	CHECK_EQ(stats(q).synced, 6);
	fk_fsyncq_destroy(q);
}

int main(void)
{
	test_once_in_order();
	test_arrivals();
	test_sticky();
	return fkt_done();
}
