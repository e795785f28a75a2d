// SPDX-License-Identifier: MIT
/*
 * ram.c - the "ram" model: no timing at all.  Every request completes
 * the moment it arrives.  It is the model of the fault tests
 * (tests/lib/fkfault.c, without the write cache): what they need is the
 * fault rules and the data, not a disk's speed.
 *
 * Write cache.  With the write cache off (--no-write-cache) a write is
 * durable when it completes: DONE and DURABLE together, a disk that
 * loses nothing.  With it on (the default of flushkit disk create) a
 * write is DONE at once and DURABLE only at the next FLUSH (all writes
 * DONE before the flush become DURABLE just before the flush's DONE:
 * M2), or when more than RAM_CACHE_LIMIT bytes wait, the oldest first:
 * "a disk that loses everything unflushed" at `disk cut`, what the cut
 * tests need to be meaningful.
 *
 * Invariants:
 * 1. A write is on exactly one of `due` (submitted, not DONE) and
 *    `dirty` (DONE, not DURABLE), or on neither (DURABLE and DONE).
 * 2. dirty_bytes is the sum of the lengths of the writes on `dirty`.
 */
#include "evlist.h"

#include <errno.h>
#include <stdlib.h>

/* The write cache's size: beyond it the oldest writes become durable. */
#define RAM_CACHE_LIMIT (256ull << 20)

struct ram {
	struct evlist due;
	struct evlist dirty; /* write cache: DONE, not yet DURABLE (FIFO) */
	uint64_t dirty_bytes;
	int write_cache;
	struct disk_model_stats st;
};

static void *ram_create(uint64_t bytes, const char *arg, int write_cache,
			int *err)
{
	(void)bytes;
	if (arg && *arg) {
		*err = EINVAL;
		return NULL;
	}
	struct ram *m = calloc(1, sizeof(*m));
	if (!m) {
		*err = ENOMEM;
		return NULL;
	}
	m->write_cache = write_cache;
	return m;
}

static void ram_destroy(void *m)
{
	free(m);
}

static void ram_submit(void *mp, struct dreq *r)
{
	struct ram *m = mp;
	r->m_start_ns = r->m_done_ns = r->arrive_ns;
	evlist_insert(&m->due, r);
}

/* The oldest cached write becomes DURABLE at @at. */
static void ram_destage(struct ram *m, uint64_t at, dreq_event_fn fn, void *ctx)
{
	struct dreq *w = evlist_pop(&m->dirty);
	m->dirty_bytes -= w->len;
	fn(ctx, w, DREQ_EV_DURABLE, at);
}

static uint64_t ram_advance(void *mp, uint64_t now, dreq_event_fn fn, void *ctx)
{
	struct ram *m = mp;
	if (!m->write_cache)
		return evlist_advance(&m->due, now, fn, ctx);
	while (m->due.head && m->due.head->m_done_ns <= now) {
		struct dreq *r = evlist_pop(&m->due);
		uint64_t at = r->m_done_ns;
		if (r->op == DREQ_FLUSH) {
			while (m->dirty.head)
				ram_destage(m, at, fn, ctx);
		}
		if (r->op != DREQ_WRITE) {
			fn(ctx, r, DREQ_EV_DONE, at); /* r is the caller's */
			continue;
		}
		/* Into the cache before its DONE (after it, r is the
		 * caller's until its DURABLE; the daemon keeps it).
		 * Appended: m_done_ns is nondecreasing. */
		evlist_insert(&m->dirty, r);
		m->dirty_bytes += r->len;
		fn(ctx, r, DREQ_EV_DONE, at);
		while (m->dirty_bytes > RAM_CACHE_LIMIT)
			ram_destage(m, at, fn, ctx);
	}
	return m->due.head ? m->due.head->m_done_ns : UINT64_MAX;
}

static void ram_stats(void *mp, struct disk_model_stats *out)
{
	struct ram *m = mp;
	*out = m->st;
	out->queued = m->due.n;
	out->cache_bytes = m->dirty_bytes;
	out->cache_limit = m->write_cache ? RAM_CACHE_LIMIT : 0;
}

const struct disk_model disk_model_ram = {
    .name = "ram",
    .imitates = "no device: every request completes at once (fault tests); "
		"with its write cache, writes are durable at the next flush",
    /* no timing: no limit */
    .nominal_write_bps = 0,
    .nominal_write_iops = 0,
    .create = ram_create,
    .destroy = ram_destroy,
    .submit = ram_submit,
    .advance = ram_advance,
    .stats = ram_stats,
};
