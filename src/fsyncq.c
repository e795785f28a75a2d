// SPDX-License-Identifier: MIT
/*
 * fsyncq.c - the fsync request queue: "this file must be fsynced before
 * the next checkpoint completes".
 *
 * Writers (a store's backends evicting dirty pages) register requests
 * by file id into a bounded queue; the checkpointer absorbs them into a
 * pending set of distinct files and, in its sync phase, makes each one
 * durable once.  A full queue is first compacted (duplicates dropped);
 * if nothing could be dropped the writer must fsync the file itself, a
 * "backend fsync", which is counted because it stalls a writer on I/O.
 * This is PostgreSQL's design: ForwardSyncRequest and
 * CompactCheckpointerRequestQueue (src/backend/postmaster/checkpointer.c,
 * compaction from 9.1, 2010), RememberSyncRequest and
 * ProcessSyncRequests (src/backend/storage/sync/sync.c, with
 * FORGET_RELATION_FSYNC for unlinked files and cycle_ctr for requests
 * that arrive during a sync phase).
 *
 * Interface routines: fk_fsyncq_create(), _destroy(), _register(),
 * _forget(), _absorb(), _pending(), _process(), _get_stats(); and the
 * batched form of a round, for callers that keep many fsyncs in flight
 * (struct fk_fsync_batch): _begin(), _take(), _complete(), _end().
 * fk_fsyncq_process is a round of one-id takes.
 *
 * Invariants (all under q->lock):
 *   1. queue[0..nr_queue) holds registered, not yet absorbed ids, in
 *      any order, possibly repeated; nr_queue <= capacity.
 *   2. pend[0..nr_pend) is sorted by id, ids distinct.
 *   3. Compaction and absorption never lose an id: each distinct id of
 *      the queue is in the queue or the pending set afterwards.
 *   4. A pending entry leaves the set only when its sync succeeded or
 *      the id was forgotten.  A failed sync leaves
 *      it pending and sets q->error, which is never cleared: process
 *      then returns it without calling sync again, so nothing is ever
 *      retried into success.
 *   5. During a round (begin .. end; process is one) q->processing is
 *      set and q->cycle is the round's number; entries whose cycle
 *      equals it arrived during the round and wait for the next one.
 *   6. fl[0..nr_fl) holds the ids taken and not yet completed ("in
 *      flight": their syncs run without the lock), sorted, distinct;
 *      every one was taken after round_last's predecessors, so take
 *      appends in order.  An in-flight id absorbed again is
 *      "redirtied" and stays pending after success; one forgotten
 *      while in flight has its result ignored.  An id still in flight
 *      at end stays pending (it was not synced as far as we know).
 *
 *   7. A file may only be gone if its id was forgotten: fk_fsyncq_forget
 *      is synchronous (queued, pending and in-flight requests are
 *      cancelled before it returns), so an owner that forgets BEFORE
 *      it unlinks (PostgreSQL's register_forget_request in
 *      mdunlinkfork) never has a sync meet the missing file.  A sync
 *      that still says -ENOENT met an outside deletion (or an owner
 *      that unlinked first): the data it was to make durable is gone,
 *      so it is a failure (sticky), never counted as synced.
 *      PostgreSQL's ProcessSyncRequests tolerates ENOENT only after
 *      absorbing shows a cancel for the file; here every cancel is
 *      already in place.
 *
 * States of an id: queued -> (absorb) pending -> (process) in flight ->
 * gone (success, forgotten) or pending + sticky error (failure,
 * -ENOENT included).
 */
#include "flushkit.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct pending {
	uint64_t id;
	uint32_t cycle; /* q->cycle when absorbed */
};

struct inflight {
	uint64_t id;
	int redirtied; /* absorbed again while in flight */
	int forgotten; /* forgotten while in flight: result moot */
	int done;      /* completed (during a complete call) */
};

struct fk_fsyncq {
	pthread_mutex_t lock;
	uint32_t capacity;
	int compact;
	uint64_t *queue;
	uint32_t nr_queue;
	struct pending *pend;
	size_t nr_pend, alloc_pend;
	uint32_t cycle;
	int processing;
	int have_last; /* round_last is set: ids <= it taken */
	uint64_t round_last;
	struct inflight *fl; /* invariant 6 */
	size_t nr_fl, alloc_fl;
	int error; /* sticky, invariant 4 */
	struct fk_fsyncq_stats st;
};

int fk_fsyncq_create(uint32_t capacity, int compact, struct fk_fsyncq **out)
{
	if (!out || capacity == 0)
		return -EINVAL;
	struct fk_fsyncq *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->queue = malloc((size_t)capacity * sizeof(q->queue[0]));
	/* Room for process's one id: it never fails for memory mid-round. */
	q->fl = malloc(8 * sizeof(q->fl[0]));
	if (!q->queue || !q->fl) {
		free(q->queue);
		free(q->fl);
		free(q);
		return -ENOMEM;
	}
	q->alloc_fl = 8;
	int r = pthread_mutex_init(&q->lock, NULL);
	if (r) {
		free(q->queue);
		free(q->fl);
		free(q);
		return -r;
	}
	q->capacity = capacity;
	q->compact = compact;
	*out = q;
	return 0;
}

void fk_fsyncq_destroy(struct fk_fsyncq *q)
{
	if (!q)
		return;
	pthread_mutex_destroy(&q->lock);
	free(q->queue);
	free(q->pend);
	free(q->fl);
	free(q);
}

static int id_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sort the queue and drop duplicates; returns how many were dropped. */
static uint32_t dedupe_queue(struct fk_fsyncq *q)
{
	uint32_t n = q->nr_queue, out = 0;
	if (n < 2)
		return 0;
	qsort(q->queue, n, sizeof(q->queue[0]), id_cmp);
	for (uint32_t i = 1; i < n; i++)
		if (q->queue[i] != q->queue[out])
			q->queue[++out] = q->queue[i];
	q->nr_queue = out + 1;
	return n - q->nr_queue;
}

/* Index of the first pending entry with id >= @id. */
static size_t lower_bound(const struct fk_fsyncq *q, uint64_t id)
{
	size_t lo = 0, hi = q->nr_pend;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (q->pend[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index of @id in the pending set, or (size_t)-1. */
static size_t find_pending(const struct fk_fsyncq *q, uint64_t id)
{
	size_t i = lower_bound(q, id);
	return i < q->nr_pend && q->pend[i].id == id ? i : (size_t)-1;
}

/* The in-flight entry for @id, or NULL (invariant 6: fl is sorted). */
static struct inflight *find_inflight(struct fk_fsyncq *q, uint64_t id)
{
	size_t lo = 0, hi = q->nr_fl;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (q->fl[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < q->nr_fl && q->fl[lo].id == id ? &q->fl[lo] : NULL;
}

static void remove_pending(struct fk_fsyncq *q, size_t i)
{
	memmove(&q->pend[i], &q->pend[i + 1],
		(q->nr_pend - i - 1) * sizeof(q->pend[0]));
	q->nr_pend--;
}

/* Caller holds the lock.  Returns the number of pending files or
 * -ENOMEM (then the queue keeps its ids, deduplicated). */
static int absorb_locked(struct fk_fsyncq *q)
{
	uint32_t requests = q->nr_queue;
	if (requests == 0)
		goto out;
	dedupe_queue(q);

	/* Count ids not pending yet, then merge from the back. */
	size_t fresh = 0;
	for (uint32_t j = 0; j < q->nr_queue; j++)
		if (find_pending(q, q->queue[j]) == (size_t)-1)
			fresh++;
	if (q->nr_pend + fresh > q->alloc_pend) {
		size_t n = q->alloc_pend ? q->alloc_pend : 64;
		while (n < q->nr_pend + fresh)
			n *= 2;
		struct pending *p = realloc(q->pend, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		q->pend = p;
		q->alloc_pend = n;
	}
	size_t i = q->nr_pend, k = q->nr_pend + fresh;
	uint32_t j = q->nr_queue;
	while (j > 0) {
		uint64_t id = q->queue[j - 1];
		if (i > 0 && q->pend[i - 1].id > id) {
			q->pend[--k] = q->pend[--i];
		} else if (i > 0 && q->pend[i - 1].id == id) {
			/* Already pending.  If its sync is running now, the
			 * new write may have missed it: keep it pending. */
			struct inflight *f = find_inflight(q, id);
			if (f)
				f->redirtied = 1;
			q->pend[--k] = q->pend[--i];
			j--;
		} else {
			k--;
			q->pend[k].id = id;
			q->pend[k].cycle = q->cycle;
			j--;
		}
	}
	q->nr_pend += fresh;
	q->nr_queue = 0;
	q->st.absorbed += requests;
out:
	return q->nr_pend > INT_MAX ? INT_MAX : (int)q->nr_pend;
}

int fk_fsyncq_register(struct fk_fsyncq *q, uint64_t file_id)
{
	pthread_mutex_lock(&q->lock);
	if (q->nr_queue == q->capacity) {
		q->st.full++;
		if (q->compact) {
			q->st.compactions++;
			q->st.compacted += dedupe_queue(q);
		}
		if (q->nr_queue == q->capacity) {
			q->st.backend_fsyncs++;
			pthread_mutex_unlock(&q->lock);
			return -EAGAIN;
		}
	}
	q->queue[q->nr_queue++] = file_id;
	q->st.registered++;
	pthread_mutex_unlock(&q->lock);
	return 0;
}

void fk_fsyncq_forget(struct fk_fsyncq *q, uint64_t file_id)
{
	pthread_mutex_lock(&q->lock);
	uint32_t out = 0;
	for (uint32_t i = 0; i < q->nr_queue; i++) {
		if (q->queue[i] == file_id)
			q->st.forgotten++;
		else
			q->queue[out++] = q->queue[i];
	}
	q->nr_queue = out;
	size_t i = find_pending(q, file_id);
	if (i != (size_t)-1) {
		remove_pending(q, i);
		q->st.forgotten++;
	}
	struct inflight *f = find_inflight(q, file_id);
	if (f)
		f->forgotten = 1;
	pthread_mutex_unlock(&q->lock);
}

int fk_fsyncq_absorb(struct fk_fsyncq *q)
{
	pthread_mutex_lock(&q->lock);
	int r = absorb_locked(q);
	pthread_mutex_unlock(&q->lock);
	return r;
}

size_t fk_fsyncq_pending(struct fk_fsyncq *q)
{
	pthread_mutex_lock(&q->lock);
	size_t n = q->nr_pend;
	pthread_mutex_unlock(&q->lock);
	return n;
}

/* Index of the first entry after @last (all if !@have_last) that
 * belongs to this round, or (size_t)-1.  Caller holds the lock. */
static size_t next_in_round(const struct fk_fsyncq *q, int have_last,
			    uint64_t last)
{
	if (have_last && last == UINT64_MAX)
		return (size_t)-1;
	size_t i = have_last ? lower_bound(q, last + 1) : 0;
	while (i < q->nr_pend && q->pend[i].cycle == q->cycle)
		i++;
	return i < q->nr_pend ? i : (size_t)-1;
}

/* Start a round.  Returns the number of pending files or -errno. */
static int begin_locked(struct fk_fsyncq *q)
{
	if (q->processing)
		return -EBUSY;
	if (q->error)
		return q->error;
	int r = absorb_locked(q);
	if (r < 0)
		return r;
	/* Entries absorbed from now on carry the new cycle: next round. */
	q->cycle++;
	q->processing = 1;
	q->have_last = 0;
	q->nr_fl = 0;
	return r;
}

/* Take up to @max ids of the round into @ids (invariant 6).  Returns
 * how many (0: the round has none left) or -errno. */
static long take_locked(struct fk_fsyncq *q, uint64_t *ids, size_t max)
{
	if (!q->processing)
		return -EINVAL;
	if (q->error)
		return q->error;
	if (max > LONG_MAX)
		max = LONG_MAX;
	size_t n = 0;
	size_t i = next_in_round(q, q->have_last, q->round_last);
	while (i != (size_t)-1 && n < max) {
		ids[n++] = q->pend[i].id;
		i = next_in_round(q, 1, ids[n - 1]);
	}
	if (n == 0)
		return 0;
	if (q->nr_fl + n > q->alloc_fl) {
		size_t a = q->alloc_fl * 2;
		while (a < q->nr_fl + n)
			a *= 2;
		struct inflight *p = realloc(q->fl, a * sizeof(*p));
		if (!p)
			return -ENOMEM;
		q->fl = p;
		q->alloc_fl = a;
	}
	for (size_t k = 0; k < n; k++)
		q->fl[q->nr_fl++] = (struct inflight){.id = ids[k]};
	q->have_last = 1;
	q->round_last = ids[n - 1];
	return (long)n;
}

/* Record the results of in-flight ids.  Returns the first failure of
 * @results, else -EINVAL if an id was not in flight, else 0. */
static int complete_locked(struct fk_fsyncq *q, const uint64_t *ids,
			   const int *results, size_t n)
{
	int ret = 0, inval = 0;
	for (size_t k = 0; k < n; k++) {
		struct inflight *f = find_inflight(q, ids[k]);
		if (!f || f->done) {
			inval = -EINVAL;
			continue;
		}
		f->done = 1;
		int e = results[k];
		if (f->forgotten) {
			/* Unlinked meanwhile: its durability is moot. */
			if (e == -ENOENT)
				q->st.missing++;
			continue;
		}
		/* Invariant 7: -ENOENT of an id nobody forgot is a failure
		 * like any other. */
		if (e == 0) {
			q->st.synced++;
			size_t i = find_pending(q, ids[k]);
			if (i != (size_t)-1) {
				if (f->redirtied)
					q->pend[i].cycle = q->cycle;
				else
					remove_pending(q, i);
			}
		} else {
			/* Sticky; the file stays pending (invariant 4). */
			if (!q->error)
				q->error = e;
			if (!ret)
				ret = e;
		}
	}
	size_t out = 0;
	for (size_t i = 0; i < q->nr_fl; i++)
		if (!q->fl[i].done)
			q->fl[out++] = q->fl[i];
	q->nr_fl = out;
	return ret ? ret : inval;
}

static void end_locked(struct fk_fsyncq *q)
{
	q->nr_fl = 0;
	q->have_last = 0;
	q->processing = 0;
}

int fk_fsyncq_begin(struct fk_fsyncq *q)
{
	pthread_mutex_lock(&q->lock);
	int r = begin_locked(q);
	pthread_mutex_unlock(&q->lock);
	return r;
}

long fk_fsyncq_take(struct fk_fsyncq *q, uint64_t *file_ids, size_t max)
{
	if (!file_ids && max)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	long n = take_locked(q, file_ids, max);
	pthread_mutex_unlock(&q->lock);
	return n;
}

int fk_fsyncq_complete(struct fk_fsyncq *q, const uint64_t *file_ids,
		       const int *results, size_t n)
{
	if ((!file_ids || !results) && n)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	int r = complete_locked(q, file_ids, results, n);
	pthread_mutex_unlock(&q->lock);
	return r;
}

void fk_fsyncq_end(struct fk_fsyncq *q)
{
	pthread_mutex_lock(&q->lock);
	end_locked(q);
	pthread_mutex_unlock(&q->lock);
}

int fk_fsyncq_process(struct fk_fsyncq *q, fk_fsyncq_sync_fn sync, void *arg,
		      int (*between)(void *arg, double done), void *between_arg)
{
	int ret = 0;

	if (!sync)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	int r = begin_locked(q);
	if (r < 0) {
		pthread_mutex_unlock(&q->lock);
		return r;
	}
	size_t total = (size_t)r, done = 0;
	for (;;) {
		uint64_t id;
		long n = take_locked(q, &id, 1); /* fl has room */
		if (n <= 0) {
			ret = (int)n;
			break;
		}
		pthread_mutex_unlock(&q->lock);

		int e = sync(arg, id);

		pthread_mutex_lock(&q->lock);
		done++;
		ret = complete_locked(q, &id, &e, 1);
		if (ret)
			break;
		if (!between || next_in_round(q, 1, id) == (size_t)-1)
			continue;
		pthread_mutex_unlock(&q->lock);
		double frac = total ? (double)done / (double)total : 1.0;
		int stop = between(between_arg, frac > 1.0 ? 1.0 : frac);
		pthread_mutex_lock(&q->lock);
		if (stop)
			break;
	}
	end_locked(q);
	pthread_mutex_unlock(&q->lock);
	return ret;
}

void fk_fsyncq_get_stats(struct fk_fsyncq *q, struct fk_fsyncq_stats *st)
{
	pthread_mutex_lock(&q->lock);
	*st = q->st;
	st->queued = q->nr_queue;
	st->pending = q->nr_pend;
	st->error = q->error;
	pthread_mutex_unlock(&q->lock);
}
