// SPDX-License-Identifier: MIT
/*
 * test-fsyncq.c - struct fk_fsyncq: compaction keeps one request per
 * file; -EAGAIN (a backend fsync) only when compaction frees nothing or
 * is disabled; forget on unlink; process syncs each file once in id
 * order; errors are sticky and never retried, -ENOENT (a file deleted
 * from outside) included;
 * requests arriving during a round wait for the next; concurrent
 * registering from several threads loses nothing.
 */
#include "fktest.h"
#include "flushkit.h"

#include <errno.h>
#include <pthread.h>

/* A sync callback that records the ids it was called with. */
struct rec {
	uint64_t ids[4096];
	size_t n;
	uint64_t fail_id; /* return fail_err for this id */
	int fail_err;
	struct fk_fsyncq *q;
	uint64_t register_during; /* while syncing ids[0]: register this */
	int forget_during;	  /* while syncing ids[0]: forget it */
	int rereg_during;	  /* while syncing ids[0]: register it again */
};

static int rec_sync(void *arg, uint64_t id)
{
	struct rec *r = arg;
	if (r->n < 4096)
		r->ids[r->n] = id;
	r->n++;
	if (r->n == 1 && r->register_during) {
		CHECK_EQ(fk_fsyncq_register(r->q, r->register_during), 0);
		CHECK(fk_fsyncq_absorb(r->q) >= 1);
	}
	if (r->n == 1 && r->rereg_during) {
		CHECK_EQ(fk_fsyncq_register(r->q, id), 0);
		CHECK(fk_fsyncq_absorb(r->q) >= 1);
	}
	if (r->n == 1 && r->forget_during) {
		fk_fsyncq_forget(r->q, id);
		return -EIO; /* ignored: the file is gone */
	}
	if (r->q && fk_fsyncq_process(r->q, rec_sync, r, NULL, NULL) != -EBUSY)
		fkt_failures++; /* a nested round must be refused */
	return id == r->fail_id ? r->fail_err : 0;
}

static struct fk_fsyncq_stats stats(struct fk_fsyncq *q)
{
	struct fk_fsyncq_stats st;
	fk_fsyncq_get_stats(q, &st);
	return st;
}

static void test_create(void)
{
	struct fk_fsyncq *q = NULL;
	CHECK_EQ(fk_fsyncq_create(0, 1, &q), -EINVAL);
	CHECK_EQ(fk_fsyncq_create(4, 1, NULL), -EINVAL);
	CHECK_EQ(fk_fsyncq_create(4, 1, &q), 0);
	CHECK_EQ(fk_fsyncq_process(q, NULL, NULL, NULL, NULL), -EINVAL);
	CHECK_EQ(fk_fsyncq_pending(q), 0);
	CHECK_EQ(fk_fsyncq_absorb(q), 0);
	fk_fsyncq_destroy(q);
	fk_fsyncq_destroy(NULL);
}

static void test_compaction(void)
{
	struct fk_fsyncq *q;
	CHECK_EQ(fk_fsyncq_create(4, 1, &q), 0);
	CHECK_EQ(fk_fsyncq_register(q, 1), 0);
	CHECK_EQ(fk_fsyncq_register(q, 2), 0);
	CHECK_EQ(fk_fsyncq_register(q, 1), 0);
	CHECK_EQ(fk_fsyncq_register(q, 2), 0);
	CHECK_EQ(stats(q).compactions, 0);
	/* Full: compaction keeps one request per file and makes room. */
	CHECK_EQ(fk_fsyncq_register(q, 3), 0);
	struct fk_fsyncq_stats st = stats(q);
	CHECK_EQ(st.full, 1);
	CHECK_EQ(st.compactions, 1);
	CHECK_EQ(st.compacted, 2);
	CHECK_EQ(st.queued, 3);
	CHECK_EQ(st.backend_fsyncs, 0);
	CHECK_EQ(fk_fsyncq_register(q, 4), 0);
	/* Full of distinct files: compaction frees nothing -> the writer
	 * must fsync itself. */
	CHECK_EQ(fk_fsyncq_register(q, 5), -EAGAIN);
	CHECK_EQ(fk_fsyncq_register(q, 1), -EAGAIN);
	st = stats(q);
	CHECK_EQ(st.backend_fsyncs, 2);
	CHECK_EQ(st.compactions, 3);
	CHECK_EQ(st.compacted, 2);
	CHECK_EQ(st.full, 3);
	CHECK_EQ(st.registered, 6);
	/* Absorb empties the queue: registering works again. */
	CHECK_EQ(fk_fsyncq_absorb(q), 4);
	CHECK_EQ(fk_fsyncq_register(q, 5), 0);
	CHECK_EQ(stats(q).absorbed, 4);
	/* Every file registered through the queue is synced exactly once. */
	struct rec r = {0};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r, NULL, NULL), 0);
	CHECK_EQ(r.n, 5);
	for (size_t i = 0; i < 5 && i < r.n; i++)
		CHECK_EQ(r.ids[i], i + 1);
	fk_fsyncq_destroy(q);

	/* Compaction disabled (naive): full means a backend fsync even
	 * when the queue is all duplicates. */
	CHECK_EQ(fk_fsyncq_create(3, 0, &q), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(fk_fsyncq_register(q, 7), 0);
	CHECK_EQ(fk_fsyncq_register(q, 7), -EAGAIN);
	st = stats(q);
	CHECK_EQ(st.backend_fsyncs, 1);
	CHECK_EQ(st.compactions, 0);
	CHECK_EQ(st.full, 1);
	/* Absorbing still keeps one per file. */
	CHECK_EQ(fk_fsyncq_absorb(q), 1);
	fk_fsyncq_destroy(q);
}

static void test_order_once(void)
{
	struct fk_fsyncq *q;
	CHECK_EQ(fk_fsyncq_create(100, 1, &q), 0);
	uint64_t ids[] = {5, 3, UINT64_MAX, 9, 3, 1, 5, 0};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		CHECK_EQ(fk_fsyncq_register(q, ids[i]), 0);
	CHECK_EQ(fk_fsyncq_absorb(q), 6);
	/* Absorbing again merges with the pending set, still distinct. */
	CHECK_EQ(fk_fsyncq_register(q, 4), 0);
	CHECK_EQ(fk_fsyncq_register(q, 9), 0);
	CHECK_EQ(fk_fsyncq_absorb(q), 7);
	CHECK_EQ(fk_fsyncq_register(q, 2), 0); /* process absorbs too */
	CHECK_EQ(fk_fsyncq_pending(q), 7);
	struct rec r = {.q = q};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r, NULL, NULL), 0);
	uint64_t want[] = {0, 1, 2, 3, 4, 5, 9, UINT64_MAX};
	CHECK_EQ(r.n, 8);
	for (size_t i = 0; i < 8 && i < r.n; i++)
		CHECK(r.ids[i] == want[i]);
	CHECK_EQ(fk_fsyncq_pending(q), 0);
	CHECK_EQ(stats(q).synced, 8);
	/* Nothing pending: nothing called. */
	r.n = 0;
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r, NULL, NULL), 0);
	CHECK_EQ(r.n, 0);
	fk_fsyncq_destroy(q);
}

static void test_forget(void)
{
	struct fk_fsyncq *q;
	CHECK_EQ(fk_fsyncq_create(100, 1, &q), 0);
	CHECK_EQ(fk_fsyncq_register(q, 7), 0);
	CHECK_EQ(fk_fsyncq_register(q, 8), 0);
	CHECK_EQ(fk_fsyncq_register(q, 7), 0);
	CHECK_EQ(fk_fsyncq_absorb(q), 2);
	CHECK_EQ(fk_fsyncq_register(q, 7), 0);
	CHECK_EQ(fk_fsyncq_register(q, 6), 0);
	/* File 7 unlinked: its queued and pending requests go. */
	fk_fsyncq_forget(q, 7);
	CHECK_EQ(stats(q).forgotten, 2);
	CHECK_EQ(fk_fsyncq_pending(q), 1);
	CHECK_EQ(stats(q).queued, 1);
	fk_fsyncq_forget(q, 12345); /* unknown: nothing */
	CHECK_EQ(stats(q).forgotten, 2);
	struct rec r = {0};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r, NULL, NULL), 0);
	CHECK_EQ(r.n, 2);
	CHECK_EQ(r.ids[0], 6);
	CHECK_EQ(r.ids[1], 8);

	/* Forgotten while its sync runs: the (failed) result is ignored. */
	CHECK_EQ(fk_fsyncq_register(q, 1), 0);
	CHECK_EQ(fk_fsyncq_register(q, 2), 0);
	struct rec r2 = {.q = q, .forget_during = 1};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r2, NULL, NULL), 0);
	CHECK_EQ(r2.n, 2);
	CHECK_EQ(stats(q).error, 0);
	CHECK_EQ(fk_fsyncq_pending(q), 0);
	fk_fsyncq_destroy(q);
}

static void test_sticky_error(void)
{
	struct fk_fsyncq *q;
	CHECK_EQ(fk_fsyncq_create(100, 1, &q), 0);
	for (uint64_t id = 1; id <= 10; id++)
		CHECK_EQ(fk_fsyncq_register(q, id), 0);
	/* -ENOENT for an id nobody forgot: the file was deleted from
	 * outside, its data is gone; a failure like EIO (sticky, stays
	 * pending), not a success. */
	struct rec r = {.fail_id = 3, .fail_err = -ENOENT};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r, NULL, NULL), -ENOENT);
	CHECK_EQ(r.n, 3);
	CHECK_EQ(stats(q).missing, 0);
	CHECK_EQ(stats(q).synced, 2);
	CHECK_EQ(stats(q).error, -ENOENT);
	CHECK_EQ(fk_fsyncq_pending(q), 8);
	fk_fsyncq_destroy(q);
	CHECK_EQ(fk_fsyncq_create(100, 1, &q), 0);

	for (uint64_t id = 1; id <= 10; id++)
		CHECK_EQ(fk_fsyncq_register(q, id), 0);
	struct rec r2 = {.fail_id = 5, .fail_err = -EIO};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r2, NULL, NULL), -EIO);
	/* Stopped at the failure; it and the rest stay pending. */
	CHECK_EQ(r2.n, 5);
	CHECK_EQ(fk_fsyncq_pending(q), 6);
	CHECK_EQ(stats(q).error, -EIO);
	/* Sticky: never retried into success, the callback is not called. */
	struct rec r3 = {0};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r3, NULL, NULL), -EIO);
	CHECK_EQ(r3.n, 0);
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r3, NULL, NULL), -EIO);
	CHECK_EQ(r3.n, 0);
	CHECK_EQ(fk_fsyncq_pending(q), 6);
	/* Writers can still register (their requests are kept). */
	CHECK_EQ(fk_fsyncq_register(q, 11), 0);
	fk_fsyncq_destroy(q);
}

struct between_rec {
	double fr[16];
	int n;
	int stop_at;
};

static int between_cb(void *arg, double done)
{
	struct between_rec *b = arg;
	if (b->n < 16)
		b->fr[b->n] = done;
	b->n++;
	return b->n == b->stop_at;
}

static void test_between_and_arrivals(void)
{
	struct fk_fsyncq *q;
	CHECK_EQ(fk_fsyncq_create(100, 1, &q), 0);
	for (uint64_t id = 10; id < 14; id++)
		CHECK_EQ(fk_fsyncq_register(q, id), 0);
	/* Called between files, not after the last, with the fraction. */
	struct rec r = {0};
	struct between_rec b = {.stop_at = 0};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r, between_cb, &b), 0);
	CHECK_EQ(r.n, 4);
	CHECK_EQ(b.n, 3);
	CHECK(b.fr[0] == 0.25 && b.fr[1] == 0.5 && b.fr[2] == 0.75);

	/* A nonzero return stops the round; the rest stays pending. */
	for (uint64_t id = 10; id < 14; id++)
		CHECK_EQ(fk_fsyncq_register(q, id), 0);
	struct rec r2 = {0};
	struct between_rec b2 = {.stop_at = 2};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r2, between_cb, &b2), 0);
	CHECK_EQ(r2.n, 2);
	CHECK_EQ(fk_fsyncq_pending(q), 2);
	struct rec r3 = {0};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r3, NULL, NULL), 0);
	CHECK_EQ(r3.n, 2);
	CHECK_EQ(r3.ids[0], 12);

	/* A request that arrives during the round (for a file later in id
	 * order) waits for the next round. */
	for (uint64_t id = 10; id < 14; id++)
		CHECK_EQ(fk_fsyncq_register(q, id), 0);
	struct rec r4 = {.q = q, .register_during = 99};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r4, NULL, NULL), 0);
	CHECK_EQ(r4.n, 4);
	CHECK_EQ(fk_fsyncq_pending(q), 1);
	struct rec r5 = {0};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r5, NULL, NULL), 0);
	CHECK_EQ(r5.n, 1);
	CHECK_EQ(r5.ids[0], 99);

	/* The file being synced is registered again meanwhile: its sync may
	 * have missed the new write, so it stays pending. */
	CHECK_EQ(fk_fsyncq_register(q, 10), 0);
	CHECK_EQ(fk_fsyncq_register(q, 11), 0);
	struct rec r6 = {.q = q, .rereg_during = 1};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r6, NULL, NULL), 0);
	CHECK_EQ(r6.n, 2);
	CHECK_EQ(fk_fsyncq_pending(q), 1);
	struct rec r7 = {0};
	CHECK_EQ(fk_fsyncq_process(q, rec_sync, &r7, NULL, NULL), 0);
	CHECK_EQ(r7.n, 1);
	CHECK_EQ(r7.ids[0], 10);
	fk_fsyncq_destroy(q);
}

/* Several writers register while a checkpointer absorbs and processes. */
#define THREADS 4
#define PER_THREAD 20000
#define NR_FILES 200

static struct fk_fsyncq *cq;
static unsigned backend[THREADS];
static unsigned char registered_id[THREADS][NR_FILES];
static unsigned synced_round[NR_FILES];
static int round_dup;

static void *writer(void *arg)
{
	int t = (int)(intptr_t)arg;
	uint32_t x = 12345u + (uint32_t)t * 777u;
	for (int i = 0; i < PER_THREAD; i++) {
		x = x * 1103515245u + 12345u;
		uint64_t id = (x >> 8) % NR_FILES;
		int r = fk_fsyncq_register(cq, id);
		if (r == -EAGAIN)
			backend[t]++;
		else if (r == 0)
			registered_id[t][id] = 1;
		else
			__atomic_add_fetch(&fkt_failures, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static unsigned round_nr;
static int count_sync(void *arg, uint64_t id)
{
	(void)arg;
	if (id >= NR_FILES || synced_round[id] == round_nr)
		round_dup = 1;
	else
		synced_round[id] = round_nr;
	return 0;
}

static void test_threads(void)
{
	CHECK_EQ(fk_fsyncq_create(64, 1, &cq), 0);
	pthread_t th[THREADS];
	for (int t = 0; t < THREADS; t++)
		CHECK_EQ(
		    pthread_create(&th[t], NULL, writer, (void *)(intptr_t)t),
		    0);
	for (round_nr = 1; round_nr <= 50; round_nr++) {
		CHECK_EQ(fk_fsyncq_process(cq, count_sync, NULL, NULL, NULL),
			 0);
		fk_fsyncq_absorb(cq);
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	CHECK_EQ(fk_fsyncq_process(cq, count_sync, NULL, NULL, NULL), 0);
	CHECK_EQ(round_dup, 0);
	CHECK_EQ(fk_fsyncq_pending(cq), 0);

	struct fk_fsyncq_stats st = stats(cq);
	unsigned total_backend = 0;
	for (int t = 0; t < THREADS; t++)
		total_backend += backend[t];
	CHECK_EQ(st.backend_fsyncs, total_backend);
	CHECK_EQ(st.registered + st.backend_fsyncs, THREADS * PER_THREAD);
	/* Every request is accounted for. */
	CHECK_EQ(st.absorbed + st.compacted, st.registered);
	CHECK_EQ(st.queued, 0);
	/* Every file a writer registered was synced at some point. */
	for (int id = 0; id < NR_FILES; id++) {
		int reg = 0;
		for (int t = 0; t < THREADS; t++)
			reg |= registered_id[t][id];
		if (reg)
			CHECK(synced_round[id] != 0);
	}
	fk_fsyncq_destroy(cq);
}

int main(void)
{
	test_create();
	test_compaction();
	test_order_once();
	test_forget();
	test_sticky_error();
	test_between_and_arrivals();
	test_threads();
	return fkt_done();
}
