// SPDX-License-Identifier: MIT
/*
 * ram.c - the "ram" model: no timing at all.  Every request completes
 * the moment it arrives, and a write is durable when it completes (no
 * volatile cache).  It is the model of the fault tests (the former
 * tests/faultdev): what they need is the fault rules and the data, not
 * a disk's speed.
 */
#include "evlist.h"

#include <errno.h>
#include <stdlib.h>

struct ram {
	struct evlist due;
	struct disk_model_stats st;
};

static void *ram_create(uint64_t bytes, const char *arg, int write_cache,
			int *err)
{
	(void)bytes;
	(void)write_cache;
	if (arg && *arg) {
		*err = EINVAL;
		return NULL;
	}
	struct ram *m = calloc(1, sizeof(*m));
	if (!m)
		*err = ENOMEM;
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

static uint64_t ram_advance(void *mp, uint64_t now, dreq_event_fn fn, void *ctx)
{
	struct ram *m = mp;
	return evlist_advance(&m->due, now, fn, ctx);
}

static void ram_stats(void *mp, struct disk_model_stats *out)
{
	struct ram *m = mp;
	*out = m->st;
	out->queued = m->due.n;
}

const struct disk_model disk_model_ram = {
    .name = "ram",
    .imitates = "no device: every request completes at once (fault tests)",
    .create = ram_create,
    .destroy = ram_destroy,
    .submit = ram_submit,
    .advance = ram_advance,
    .stats = ram_stats,
};
